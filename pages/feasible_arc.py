"""Page 3 — the feasible arc of (P₂) (Asteris et al. 2014, Fig. 2, App. C)."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import streamlit as st

from ui import compute_teach as ct
from ui import state
from ui.figures import teach as fig
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
DELAYS = {"slow": 1.5, "normal": 0.8, "fast": 0.35}  # seconds per animation step
LAST = "arc_last_step"  # (mode, θ, constraints shown) of the frame on screen while playing


def pause() -> None:
    """Stop the animation where it is: move the sliders to the step on screen.

    (Any click reruns the page, which ends the playing loop; this callback runs
    first and keeps the step instead of jumping back.)"""
    last = st.session_state.get(LAST)
    if last is None:
        return
    mode_, t, j = last
    if mode_ == "add" and "arc_shown" in st.session_state:
        st.session_state["arc_shown"] = int(j)
    elif mode_ == "rotate":
        st.session_state["arc_theta"] = int(t)


FINISH = "arc_play_finished"  # set by the last step of ▶ play: the next run keeps that step

if st.session_state.pop(FINISH, False):  # before the sliders exist: they move to the last step
    pause()
    st.session_state.pop(LAST, None)

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
                    key="arc_mode", horizontal=True)
    adding = mode.startswith("add")
    kk = R.shape[0]
    # the slider sits in a slot: while ▶ play runs, the slot shows the step on screen
    step_slot = st.empty()
    if adding:
        shown = step_slot.slider("constraints shown", 0, kk, kk, key="arc_shown") if kk > 1 else kk
        theta = 0.0
    else:
        shown = kk
        theta = step_slot.slider("rotate Q by (degrees)", -180, 180, 0, 5, key="arc_theta",
                                 help="Q_θ = G(θ) Q G(θ)ᵀ with G a rotation: u₁ turns, the "
                                      "constraints stay.")
    # the pace first, then the two buttons side by side at full width (a third column cut
    # "❚❚ pause" down to "❚❚ …")
    speed = st.select_slider("pace", list(DELAYS), value="slow", key="arc_speed",
                             help="Seconds per step: " + ", ".join(f"{k} {v} s" for k, v in DELAYS.items()))
    p1, p2 = st.columns(2)
    play = p1.button("▶ play", key="arc_play", help="Step through the animation.", width="stretch")
    p2.button("❚❚ pause", key="arc_pause", on_click=pause, width="stretch",
              help="Stop at the step on screen (the sliders above move there).")
    st.subheader("Answer of solve_pd")
    answer_slot = st.empty()


def rotated(Q: np.ndarray, degrees: float) -> np.ndarray:
    t = np.deg2rad(degrees)
    G = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
    return G @ Q @ G.T


def step_title(j: int, t: float, step: tuple[int, int] | None = None) -> str:
    """The figure's title for the step on screen (each frame of ▶ play says its step)."""
    head = f"Step {step[0]} of {step[1]}: " if step else ""
    if adding:
        what = (f"{j} of {kk} constraints" if j else f"no constraint yet (0 of {kk})")
        return f"(P₂) with {what}: max cᵀQc on the feasible arc" if not head else \
            f"{head}{what} — max cᵀQc on the feasible arc"
    return f"{head}(P₂) with Q turned by {t:+.0f}°: max cᵀQc on the feasible arc"


def draw(Q: np.ndarray, Rs: np.ndarray, tag: str, title: str) -> dict:
    """Solve (P₂) for (Q, Rs) and draw both figures into their slot."""
    if Rs.shape[0]:
        out = ct.pd2(Q, Rs)
    else:  # no constraint yet: the whole circle, the answer is ±u₁
        u1 = np.linalg.eigh(Q)[1][:, -1]
        out = dict(c=u1, arcs=[(-np.pi, np.pi)], u1=u1, active=[], u1_feasible=True,
                   value=float(u1 @ Q @ u1), feasible=True)
    with plot_slot.container():
        st.plotly_chart(fig.feasible_arc(Q, Rs, arcs=out["arcs"], u1=out["u1"], c_star=out["c"],
                                         active=out["active"], title=title),
                        theme=None, key=f"arc_circle_{tag}")
        st.plotly_chart(fig.objective_on_circle(Q, Rs, c_star=out["c"]), theme=None,
                        key=f"arc_objective_{tag}")
    return out


def answer(result: dict, Q: np.ndarray, Rs: np.ndarray, full: bool) -> None:
    """The answer of solve_pd for the step on screen (written into its slot: while ▶ play runs
    it follows the frames instead of waiting, greyed out, for the end of the animation)."""
    c = result["c"]
    with answer_slot.container():
        if c is None:
            st.error("Only c = 0 satisfies R c ≥ 0: the constraints leave no arc, so this support "
                     "cannot carry a nonnegative x.")
            return
        st.markdown(f"$c^*$ = ({c[0]:+.4f}, {c[1]:+.4f}), $c^{{*\\top}} Q c^*$ = "
                    f"**{float(c @ Q @ c):.5g}** "
                    f"($\\lambda_1(Q)$ = {np.linalg.eigvalsh(Q)[-1]:.5g}).")
        if result["u1_feasible"]:
            st.success("±u₁ lies on the feasible arc: the unconstrained maximum is feasible.")
        else:
            st.info("±u₁ is cut away: the maximum sits at an arc endpoint, where constraint "
                    f"{', '.join(str(i) for i in result['active']) or '—'} is active (Alg. 4).")
        if full and Rs.shape[0]:
            y = Rs @ c
            if np.linalg.norm(y) > 0:
                x = y / np.linalg.norm(y)
                st.markdown("$x_I = V_I c^*/\\|V_I c^*\\|$ = `" +
                            np.array2string(np.round(x, 4), separator=", ") + "`")


with right:
    plot_slot = st.empty()
    st.caption("Each coloured line is Rᵢ·c = 0; its shaded side is cut away (the arrow points into "
               "the kept half-plane). The thick arc is what remains of the unit circle.")

Q = rotated(Q0, theta)
result = draw(Q, R[:shown], "final", step_title(shown, theta))
answer(result, Q, R[:shown], shown == kk and theta == 0)

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
u3 = np.linalg.eigh(Q3)[1][:, -1]
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
    st.plotly_chart(fig.sphere_pd3(Q3, R3, c_star=c3, u1=u3), theme=None, key="arc_sphere")
    st.caption("Drag to rotate. Coloured lines: the planes Rᵢ·c = 0; the coloured patch is "
               "the feasible region, shaded by cᵀQc.")

link_page("pages/spannogram_d2.py", "Back to the spannogram (choose another support)",
          icon=":material/show_chart:")


# ▶ play last: everything above is drawn before the steps start, so nothing on the page waits,
# greyed out, for the animation to end (issue 27, item 2); each step redraws the figure (its
# title says the step), the answer and the slider's slot (it shows the step on screen)
if play:
    steps = [(0.0, j) for j in range(0, kk + 1)] if adding else \
        [(float(t), kk) for t in range(-180, 181, 15)]
    for step_no, (t, j) in enumerate(steps):
        st.session_state[LAST] = ("add" if adding else "rotate", t, j)
        Qt = rotated(Q0, t)
        out = draw(Qt, R[:j], f"play{step_no}", step_title(j, t, (step_no + 1, len(steps))))
        answer(out, Qt, R[:j], j == kk and t == 0)
        if adding:  # after the figure: the slider moves when the new frame shows
            step_slot.slider("constraints shown", 0, kk, j, key=f"arc_shown_playing_{step_no}",
                             disabled=True, help="Following ▶ play; ❚❚ pause stops here.")
        else:
            step_slot.slider("rotate Q by (degrees)", -180, 180, int(t), 5,
                             key=f"arc_theta_playing_{step_no}", disabled=True,
                             help="Following ▶ play; ❚❚ pause stops here.")
        time.sleep(DELAYS[speed])
    st.session_state[FINISH] = True  # the next run keeps the last step, with the sliders there
    st.rerun()
