"""Page 1 — the spannogram for d = 2 (Asteris et al. 2014, §4.1, Fig. 1)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from nspca_core import topk_nonneg
from ui import compute_teach as ct
from ui import state
from ui.sidebar import link_page, page_intro, small_factor_input

page_intro(
    "Spannogram, d = 2",
    "Each row of a small rank-2 factor V becomes a curve vᵢ(φ) = Vᵢ₁ sin φ + Vᵢ₂ cos φ; the "
    "k largest curves at an angle φ form a candidate support, and only the few supports met "
    "while φ sweeps (−π/2, π/2] need to be checked.",
    "Asteris, Papailiopoulos & Dimakis, *Nonnegative Sparse PCA with Provable Guarantees* "
    "(ICML 2014), §4.1 and Fig. 1.",
)

PHI_KEY = "span2_phi"


def step_phi(changes: np.ndarray, direction: int) -> None:
    """Move the φ slider just past the next (or previous) support change (lecture mode)."""
    phi = float(st.session_state.get(PHI_KEY, 0.30))
    at = np.sort(np.unique(np.round(np.asarray(changes, float), 6)))
    if direction > 0:
        nxt = at[at > phi - 0.005 + 0.01]
        target = nxt[0] if nxt.size else None
    else:
        prev = at[at < phi - 0.01]
        target = prev[-1] if prev.size else None
    if target is not None:  # the slider's grid is 0.01: land just after the crossing
        st.session_state[PHI_KEY] = float(min(1.57, np.floor(target * 100 + 1) / 100))


lecture = st.toggle("Lecture mode", key="span2_lecture",
                    help="Step from one support change to the next, with why the support changed, "
                         "and a bigger figure.")
left, right = st.columns([1, 2.2] if not lecture else [1, 3], gap="large")
with left:
    V, labels, where = small_factor_input(2, "span2", n_default=8, n_max=30)
    n = V.shape[0]
    k = st.slider("k — curves kept", 1, n, min(3, n), key="span2_k",
                  help="The sparsity of this small example (independent of the sidebar k, "
                       "which is for the full dataset).")

with st.spinner("Computing the spannogram…"):
    cur = ct.curves_d2(V, k)
    table = ct.support_table(V, k)

change_phis = np.asarray(cur["changes"], float).reshape(-1, 2)[:, 0]
if lecture:  # the step buttons above the figure, where the room looks (wide enough for their words)
    with right:
        b1, b2, _ = st.columns([1, 1, 1.2])
        b1.button("◀ previous change", key="span2_prev", on_click=step_phi, args=(change_phis, -1),
                  width="stretch")
        b2.button("next change ▶", key="span2_next", on_click=step_phi, args=(change_phis, +1),
                  width="stretch")
PHI0 = 0.30  # where the figure starts (its own slider and ▶ play move φ in the browser)
if lecture:  # the lecture's steps move φ on the server: one slider, the page's, with the text
    with left:
        phi = st.slider("φ — angle of c = (sin φ, cos φ)", -1.57, 1.57, PHI0, 0.01,
                        key=PHI_KEY, help="The step buttons move it from one support change to the next.")
else:
    # one φ control, the figure's own slider (issue 41: the page's φ slider and the figure's
    # disagreed after ▶ play); the figure is then the same for every student and is sent as built
    phi = PHI0

values_at = V @ np.array([np.sin(phi), np.cos(phi)])
plus, minus = topk_nonneg(values_at, k), topk_nonneg(-values_at, k)
with left:
    st.markdown(f"**V:** {where}.")
    if lecture:
        st.markdown(f"At the slider's φ = {phi:+.2f} the candidate supports are  \n"
                    f"$I_k^+(v(\\varphi))$ = `{[int(i) for i in plus]}` and "
                    f"$I_k^+(-v(\\varphi))$ = `{[int(i) for i in minus]}`.")
    else:
        # ▶ play and the figure's φ slider run in the browser; the figure's title gives the
        # candidate supports of the φ on screen (issue 21, item 3)
        st.markdown("**Move φ with the slider under the figure** (or press ▶ play to sweep it): "
                    "the figure's title gives, for the φ on screen, the two candidate supports "
                    "$I_k^+(v(\\varphi))$ and $I_k^+(-v(\\varphi))$, and the curves of each are "
                    f"coloured. At the start, φ = {phi:+.2f}: `{[int(i) for i in plus]}` and "
                    f"`{[int(i) for i in minus]}`.")

with right:
    with st.spinner("Drawing the spannogram and its animation…"):
        # lecture mode: a bigger figure with bigger text for the room
        figure = ct.spannogram_d2_figure(V, k, float(phi), tuple(labels), 60, lecture)
    st.plotly_chart(figure, theme=None, key="span2_fig")
    if lecture:
        st.markdown(ct.why_support(V, k, phi, change_phis, labels))
    st.caption("Thick vermillion: the curves in Iₖ⁺(v(φ)); thick blue dash-dot: those in Iₖ⁺(−v(φ)); "
               "thin grey: the other rows (each frame of ▶ play restyles them for its φ). Black dashed: "
               "the zero curve (the appended zero row). Shaded bands: the k-th order envelopes, "
               "their values at φ ringed. Grey dots: every pairwise intersection; "
               "black diamonds: the intersections where the candidate support actually changes "
               f"({cur['n_changes']} of {cur['n_intersections']}).")

st.subheader(f"S₂: the {len(table['supports'])} candidate supports and their values")
vals = table["values"]
df = pd.DataFrame({
    "support": [str([int(i) for i in s]) for s in table["supports"]],
    "features": [", ".join(labels[int(i)] for i in s) for s in table["supports"]],
    "size": [len(s) for s in table["supports"]],
    "value ‖Vᵀx‖²": vals,
    "optimal": ["★" if np.isclose(v, table["opt"], rtol=1e-9, atol=1e-12) else ""
                for v in vals],
}).sort_values("value ‖Vᵀx‖²", ascending=False, kind="stable")
c1, c2 = st.columns([2, 1], gap="large")
with c1:
    st.dataframe(df, hide_index=True, height=320)
with c2:
    st.metric("OPT₂ from S₂ (lowrank_nspca)", f"{table['opt']:.6g}")
    st.markdown(f"Optimal support: `{[int(i) for i in table['opt_support']]}`")
    bf = ct.brute_force(V, k)
    if bf is None:
        st.info(f"Brute-force check skipped: n = {n} > 14 would enumerate too many supports.")
    else:
        ok = np.isclose(bf["opt"], table["opt"], rtol=1e-8, atol=1e-12)
        st.metric(f"Brute force over all {bf['total']} supports", f"{bf['opt']:.6g}",
                  delta="matches" if ok else "MISMATCH", delta_color="normal" if ok else "inverse")
        st.caption(f"Supports checked: {bf['checked']} (every |J| ≤ {k}); S₂ needed only "
                   f"{len(table['supports'])}.")

# hand the chosen support over to the feasible-arc page
opts = [tuple(int(i) for i in s) for s in table["supports"]]
best = tuple(int(i) for i in table["opt_support"])
if best not in opts:
    opts.insert(0, best)
pick = st.selectbox("Support to study on the feasible-arc page", opts, index=opts.index(best),
                    format_func=lambda s: f"{list(s)}" + ("  (optimal)" if s == best else ""),
                    key="span2_pick")
st.session_state[state.TEACH_V] = np.asarray(V, dtype=float)
st.session_state[state.TEACH_SUPPORT] = tuple(pick)
link_page("pages/feasible_arc.py", "Solve (P₂) for this support on the feasible-arc page",
          icon=":material/donut_large:")
