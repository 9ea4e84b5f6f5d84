"""Page 2 — the spannogram for d = 3 (Asteris et al. 2014, App. B, Fig. 7)."""

from __future__ import annotations

from math import comb

import numpy as np
import pandas as pd
import streamlit as st

from ui import compute_teach as ct
from ui import state
from ui.figures import teach as fig
from ui.sidebar import page_intro, small_factor_input

page_intro(
    "Spannogram, d = 3",
    "With a rank-3 factor each row is a surface over (φ₁, φ₂); the plane splits into cells on "
    "which the k largest surfaces — the candidate support — stay the same. Cells meet at "
    "points where three surfaces intersect, so there are at most 2³·C(n+1, 3) supports.",
    "Asteris, Papailiopoulos & Dimakis (ICML 2014), Alg. 2 and App. B, Fig. 7.",
)

ROW_KEY = "span3_line_row"  # lecture mode: the row of the map (φ₂ grid) the line is on


def step_line(changes: np.ndarray, direction: int) -> None:
    """Move the line φ₂ = const to the next (or previous) row where the supports it meets change."""
    row = int(st.session_state.get(ROW_KEY, 0))
    st.session_state[ROW_KEY] = ct.step_row(changes, row, direction)


lecture = st.toggle("Lecture mode", key="span3_lecture",
                    help="Step a line φ₂ = const up the map from one change of the supports it "
                         "meets to the next, with why they changed, and a bigger figure.")
left, right = st.columns([1, 2.2] if not lecture else [1, 3], gap="large")
with left:
    V, labels, where = small_factor_input(3, "span3", n_default=8, n_max=12)
    n = V.shape[0]
    k = st.slider("k — surfaces kept", 1, n, min(3, n), key="span3_k")
    grid = st.select_slider("map resolution", (61, 121, 181, 241), 121, key="span3_grid",
                            help="Grid points per axis of the cell map (finer: slower).")
    sign = st.radio("Map of", ("Iₖ⁺(Vc)", "Iₖ⁺(−Vc)"), horizontal=True, key="span3_sign",
                    help="c and −c give the two candidates of the rank-1 problem; the "
                         "half-sphere of angles covers every direction once.")
    st.markdown(f"**V:** {where}.")

with st.spinner("Computing the intersection cells…"):
    cells = ct.cells_d3(V, k, grid=grid)
    table = ct.support_table(V, k)

cell_sups = [tuple(int(i) for i in s) for s in cells["supports"]]
cell_vals = cells["values"]  # Alg. 1's value of each cell's support
labels_map = cells["cells_pos"] if sign == "Iₖ⁺(Vc)" else cells["cells_neg"]
best_sup = tuple(int(i) for i in table["opt_support"])
best_id = cell_sups.index(best_sup) if best_sup in cell_sups else None
# the feasible-arc page draws (P₃) on the sphere for this support (paper Fig. 8)
st.session_state[state.TEACH_V3] = np.asarray(V, dtype=float)
st.session_state[state.TEACH_SUPPORT3] = best_sup

DARK = {fig.OKABE_ITO["blue"], fig.OKABE_ITO["vermillion"]}  # white letters on these


def name_support(sup) -> str:
    """A support with the rows' names (∅ where no entry of Vc is positive)."""
    return "{" + ", ".join(str(labels[int(i)]) for i in sup) + "}" if len(sup) else "∅"


with right:
    tab_cells, tab_surf = st.tabs(["Intersection cells (main view)", "Surfaces in 3D"])
    with tab_cells:
        row = None
        if lecture:  # step buttons above the map; the line and its supports are drawn in place
            line_changes = ct.d3_line_changes(labels_map)
            row = min(int(st.session_state.get(ROW_KEY, 0)), len(cells["phi2"]) - 1)
            b1, b2, _ = st.columns([1, 1, 1.2])
            b1.button("◀ previous change", key="span3_prev", on_click=step_line,
                      args=(line_changes, -1), width="stretch")
            b2.button("next change ▶", key="span3_next", on_click=step_line,
                      args=(line_changes, +1), width="stretch")
        # built once per (V, k, map, line) and sent as built to every student (issue 41)
        f = ct.d3_cells_figure(V, k, grid, sign != "Iₖ⁺(Vc)", lecture, row)
        st.plotly_chart(f, theme=None, key="span3_cells")
        key_rows = fig.cell_key(labels_map, cell_sups, cell_vals, best=best_id)
        key_df = pd.DataFrame({
            "cell": [r["cell"] + (" ★" if r["optimal"] else "") for r in key_rows],
            "support": [name_support(r["support"]) for r in key_rows],
            "value ‖Vᵀx‖²": [r["value"] for r in key_rows],
        })
        colours = [r["colour"] for r in key_rows]

        def _swatch(col):  # the cell's letter on its colour, as in the map
            return [f"background-color: {c}; color: {'white' if c in DARK else 'black'}; font-weight: 700"
                    for c in colours]

        st.markdown("**Key of the map** — each cell shows its letter; ★ the optimal support "
                    "(its cells outlined in black).")
        st.dataframe(key_df.style.apply(_swatch, subset=["cell"]).format({"value ‖Vᵀx‖²": "{:.5g}"}),
                     hide_index=True, height=min(400, 38 + 35 * len(key_df)), key="span3_key")
        if lecture:
            st.markdown(ct.why_line(labels_map, cell_sups, cells["phi2"], row, name_support))
            st.caption(f"Step {int(np.searchsorted(line_changes, row, side='right'))} of "
                       f"{len(line_changes)} changes of the supports met, bottom to top.")
        st.caption("▶ sweep φ₂ moves a line up the map: each line φ₂ = const is a circle of "
                   "directions, so the supports it meets are those of a d = 2 spannogram. "
                   "Letter and colour: which support is Iₖ⁺(V c(φ₁, φ₂)) there (A has the largest "
                   "value, then B, …; neighbouring cells get different colours). Dots: "
                   "triple-intersection vertices (black where the support changes). Black "
                   "outline: the cells of the optimal support.")
        if not cells["vertices_complete"]:
            st.caption("Only the vertices among rows of the listed supports are drawn "
                       "(too many triples to enumerate all).")
    with tab_surf:
        rows = st.multiselect("Rows to draw (a few at a time)", list(range(n)),
                              default=list(range(min(3, n))), max_selections=6,
                              format_func=lambda i: labels[i], key="span3_rows")
        st.plotly_chart(ct.d3_surfaces_figure(V, k, grid, tuple(int(i) for i in rows), tuple(labels)),
                        theme=None, key="span3_surf")
        st.caption("Drag to rotate. Where the k highest surfaces change, the support changes.")

st.subheader("How many candidate supports?")
bound = 2 ** 3 * comb(n + 1, 3)
c1, c2, c3 = st.columns(3)
c1.metric("|S₃| (candidate_supports)", len(table["supports"]))
c2.metric("supports seen in the cell map", len(set(cell_sups)))
c3.metric("bound 2³·C(n+1, 3)", bound)
with st.spinner("Counting |S₃| for growing n…"):
    count_fig = ct.d3_count_figure(V, k)
st.plotly_chart(count_fig, theme=None, key="span3_count")
st.caption(f"Versus all C(n, ≤k) = {sum(comb(n, j) for j in range(1, k + 1))} supports a brute "
           f"force would try. Optimal support: {list(best_sup)}, value {table['opt']:.5g}.")
