"""Pure figure functions: data in, plotly Figure out (no st.* calls)."""
# The Okabe–Ito colour-blind-safe palette, shared by every figure module.
OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky": "#56B4E9",
    "green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "purple": "#CC79A7",
}
