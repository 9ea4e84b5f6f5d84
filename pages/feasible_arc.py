"""Page 3 — the feasible arc of (P₂) (Asteris et al. 2014, Fig. 2, App. C)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from ui import compute_teach as ct
from ui import state
from ui.sidebar import link_page, page_intro

page_intro(
    "Feasible arc of (P₂)",
    "For one candidate support I the best x on I is x_I ∝ V_I c, with c the solution of "
    "(P₂): maximise cᵀQc (Q = V_IᵀV_I) over unit c with V_I c ≥ 0. Each row of V_I keeps a "
    "half-plane; what the half-planes leave of the unit circle is the feasible arc.",
    "Asteris, Papailiopoulos & Dimakis (ICML 2014), Alg. 4, Fig. 2 and App. C.",
)

s = state.settings()
have_span = state.TEACH_V in st.session_state and state.TEACH_SUPPORT in st.session_state
sources = (["support chosen on the spannogram page"] if have_span else []) + [
    "type the constraint rows"]
left, right = st.columns([1, 2.2], gap="large")
with left:
    source = st.radio("Where (Q, R) come from", sources, key="arc_source")
    if source.startswith("support"):
        V = np.asarray(st.session_state[state.TEACH_V], dtype=float)
        I = [int(i) for i in st.session_state[state.TEACH_SUPPORT]]
        R = V[I]
        st.markdown(f"Support $I$ = `{I}` of the d = 2 spannogram page; "
                    "$R = V_I$ (rows below), $Q = V_I^\\top V_I$.")
        st.dataframe(pd.DataFrame(R, columns=["V_i1", "V_i2"], index=I), height=180)
    else:
        if not have_span:
            st.caption("Tip: choose a support on the spannogram page and it appears here.")
        # rows at 20°, 60° and 100° from the c₁ axis: a 100° feasible arc containing u₁;
        # rotate Q or add rows to see the maximum move to an arc endpoint
        ang = np.deg2rad([20.0, 60.0, 100.0])
        base = pd.DataFrame(np.round(np.column_stack([np.cos(ang), np.sin(ang)])
                                     * [[1.0], [0.8], [0.6]], 3), columns=["R_i1", "R_i2"])
        df = st.data_editor(base, num_rows="dynamic", key="arc_rows", width="content")
        R = df.apply(pd.to_numeric, errors="coerce").dropna().to_numpy(dtype=float)
        if R.shape[0] < 1:
            st.warning("Type at least one complete row; using the example rows.")
            R = base.to_numpy(dtype=float)
    Q0 = R.T @ R
    mode = st.radio("Animation", ("add constraints one by one", "rotate u₁ (turn Q)"),
                    key="arc_mode", horizontal=True,
                    help="▶ play under the figure plays it in your browser; its slider scrubs the steps.")
    adding = mode.startswith("add")
    kk = R.shape[0]

# built once per (Q, R, animation) and sent as built to every student; ▶ play runs in the browser
# (issue 41: it was a loop on the server, one per viewer, whose text lagged behind the figure)
view = ct.arc_figures(Q0, R, adding)
with right:
    st.plotly_chart(view["circle"], theme=None, key="arc_circle")
    st.caption("▶ play (under the figure) "
               + ("adds the constraint rows one by one" if adding else "turns Q in steps of 15° (u₁ turns, "
                  "the constraints stay)")
               + "; the slider under it scrubs the steps, and each step's title gives the answer of solve_pd "
                 "at that step. Each coloured line is Rᵢ·c = 0; its shaded side is cut away (the arrow "
                 "points into the kept half-plane). The thick arc is what remains of the unit circle.")
    st.plotly_chart(view["objective"], theme=None, key="arc_objective")
    st.caption("The objective cᵀQc along the circle for the problem as given (every row, Q not turned).")

with left:
    st.subheader("Answer of solve_pd")
    st.caption("For the problem as given: every row of R, Q not turned (the figure's steps say theirs).")
    result = view["answer"]
    c = result["c"]
    if c is None:
        st.error("Only c = 0 satisfies R c ≥ 0: the constraints leave no arc, so this support "
                 "cannot carry a nonnegative x.")
    else:
        st.markdown(f"$c^*$ = ({c[0]:+.4f}, {c[1]:+.4f}), $c^{{*\\top}} Q c^*$ = "
                    f"**{float(c @ Q0 @ c):.5g}** "
                    f"($\\lambda_1(Q)$ = {np.linalg.eigvalsh(Q0)[-1]:.5g}).")
        if result["u1_feasible"]:
            st.success("±u₁ lies on the feasible arc: the unconstrained maximum is feasible.")
        else:
            st.info("±u₁ is cut away: the maximum sits at an arc endpoint, where constraint "
                    f"{', '.join(str(i) for i in result['active']) or '—'} is active (Alg. 4).")
        y = R @ c
        if np.linalg.norm(y) > 0:
            x = y / np.linalg.norm(y)
            st.markdown("$x_I = V_I c^*/\\|V_I c^*\\|$ = `" +
                        np.array2string(np.round(x, 4), separator=", ") + "`")

st.divider()
st.subheader("d = 3: the sphere cut by planes (paper Fig. 8)")
if state.TEACH_V3 in st.session_state and state.TEACH_SUPPORT3 in st.session_state:
    V3 = np.asarray(st.session_state[state.TEACH_V3], dtype=float)
    I3 = [int(i) for i in st.session_state[state.TEACH_SUPPORT3]]
    where3 = "the optimal support of the d = 3 spannogram page"
else:
    V3 = ct.small_V(8, 3, s.seed)
    I3 = [int(i) for i in ct.support_table(V3, 3)["opt_support"]]
    where3 = f"the optimal support of a random 8×3 example (seed {s.seed}, k = 3)"
R3 = V3[I3]
Q3 = R3.T @ R3
c3 = ct.solve_p3(Q3, R3)
s1, s2 = st.columns([1, 2.2], gap="large")
with s1:
    st.markdown(f"Support $I$ = `{I3}`, {where3}. Each row of $V_I$ keeps a half-space; "
                "their planes are great circles, and the feasible region is the spherical "
                "polygon they leave. Alg. 5: if $\\pm u_1$ is cut away, the maximum lies on "
                "a face (a great circle), where the problem drops to d = 2.")
    if c3 is not None:
        st.markdown(f"$c^*$ = ({c3[0]:+.3f}, {c3[1]:+.3f}, {c3[2]:+.3f}), "
                    f"value **{float(c3 @ Q3 @ c3):.5g}** "
                    f"($\\lambda_1(Q)$ = {np.linalg.eigvalsh(Q3)[-1]:.5g}).")
with s2:
    st.plotly_chart(ct.sphere_figure(Q3, R3), theme=None, key="arc_sphere")
    st.caption("Drag to rotate. Coloured lines: the planes Rᵢ·c = 0; the coloured patch is "
               "the feasible region, shaded by cᵀQc.")

link_page("pages/spannogram_d2.py", "Back to the spannogram (choose another support)",
          icon=":material/show_chart:")

