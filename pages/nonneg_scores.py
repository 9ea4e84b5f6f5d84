"""Page 9 — nonnegative-score PCA: rotate the whitened cloud into the positive orthant (Bajorski, Hall & Rubinstein)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from ui import compute, downloads, state
from ui.figures import analysis as figs
from ui.figures.teach import below_toolbar  # titles start under the figure's toolbar
from ui.sidebar import page_intro

page_intro(
    "Nonnegative-score PCA",
    "Data Y = A·X with nonnegative, uncorrelated sources X: after whitening, A is an unknown rotation; "
    "the estimator turns the cloud until every score is nonnegative. Negativity over the iterations, "
    "the cloud rotating into the positive orthant, recovered vs true profiles, errors vs other methods.",
    "Bajorski, Hall & Rubinstein, *Methodology and theory for nonnegative-score principal component "
    "analysis* (Statistica Sinica 2013): the algorithm of §3 and the simulation of §5 (Tables 1–2).",
)

SOURCES = ("simulated (Beta(2,4) sources)", "the sidebar's dataset")
CASE_LABELS = {1: "Case 1 — first NSPC carries 96%", 2: "Case 2 — 77%", 3: "Case 3 — 57%"}
COMPARE = ("nspca", "nica", "em", "zass", "pca")
COMPARE_LABELS = {"nspca": "NSPCA (this page)", "nica": "nonnegative ICA (Plumbley)",
                  "em": "EM, quasi-orthogonal", "zass": "Zass–Shashua (k = p)", "pca": "PCA"}
MAX_POINTS = 600  # points drawn in the animation (a random subset: the browser stays fluid)
MAX_FRAMES = 40


def data_source(s) -> tuple[np.ndarray, dict | None, str, list[str]]:
    """Y (n × p), the truth (D, W) when known, a description and the variables' names.

    The sidebar's dataset is the default source once the user has chosen one
    (anything but the app's default dataset); the simulation otherwise.
    """
    default = 0 if s.dataset == state.DEFAULTS[state.DATASET] else 1
    source = st.radio("Data", SOURCES, index=default, horizontal=True, key="ns_source")
    if source == SOURCES[0]:
        c1, c2, c3 = st.columns(3)
        p = c1.slider("p — variables = sources", 2, 10, 3, key="ns_p",
                      help="p = 2 or 3 draws the cloud itself; the paper used p = 10.")
        n = c2.select_slider("n — samples", [100, 200, 500, 1000, 2000, 5000], 1000, key="ns_n")
        case = c3.selectbox("Mixing matrix", list(CASE_LABELS), format_func=CASE_LABELS.get, key="ns_case")
        sim = compute.simulate_case(case, p, n, s.seed)
        truth = dict(D=np.asarray(sim.D), W=np.asarray(sim.W), A=np.asarray(sim.A))
        return (np.asarray(sim.Y), truth, f"simulated {CASE_LABELS[case]}, p = {p}, n = {n}, seed {s.seed}",
                [f"variable {i + 1}" for i in range(p)])
    ds = compute.current_dataset()
    Y = np.asarray(ds.X_raw, float)
    m, n_feat = Y.shape
    order = np.argsort(-Y.var(axis=0), kind="stable")
    default = sorted(order[: min(3, n_feat)].tolist())
    chosen = st.multiselect(f"Variables of {ds.info.title} (2–10; highest variance first)",
                            order[:200].tolist(), default=default, max_selections=10,
                            format_func=lambda j: f"{j}: {ds.feature_names[j]}", key="ns_features")
    if len(chosen) < 2:
        st.info("Choose at least two variables.")
        st.stop()
    cols = sorted(int(j) for j in chosen)
    truth = None
    if ds.ground_truth and "D" in ds.ground_truth and len(cols) == n_feat:
        truth = dict(D=np.asarray(ds.ground_truth["D"]), W=np.asarray(ds.ground_truth["W"]))
    st.caption("The raw (uncentered) values are used: where the cloud sits relative to the origin is "
               "the information this method uses.")
    return Y[:, cols], truth, f"{ds.info.title}, {len(cols)} variables", [str(ds.feature_names[j]) for j in cols]


def cloud_frames(res, axes: list[int], rng: np.random.Generator):
    """Frames U·B_tᵀ of the rotation path in the final component order, subsampled."""
    U = np.asarray(res.whitened)
    order = np.asarray(res.order) if res.order is not None else np.arange(U.shape[1])
    Bs = list(res.history_B) or [np.asarray(res.B)[np.argsort(order)]]
    iters = list(np.asarray(res.history_iter)) or list(range(len(Bs)))
    pick = np.unique(np.round(np.linspace(0, len(Bs) - 1, min(MAX_FRAMES, len(Bs)))).astype(int))
    rows = np.sort(rng.choice(U.shape[0], size=min(MAX_POINTS, U.shape[0]), replace=False))
    frames = [(U[rows] @ np.asarray(Bs[t]).T)[:, order] for t in pick]
    labels = [f"iteration {int(iters[t])}" if t < len(iters) else f"step {t}" for t in pick]
    return [F[:, axes] if len(axes) < F.shape[1] else F for F in frames], labels


def main() -> None:
    s = state.settings()
    Y, truth, what, var_names = data_source(s)
    n, p = Y.shape
    st.caption(f"{what}: {n} samples × {p} variables.")
    with compute.progress("Rotating into the positive orthant") as cb:
        res = compute.nonneg_scores(Y, None, s.seed, _callback=cb)
    cols = st.columns(4)
    cols[0].metric("final negativity S(B̂)", f"{res.negativity:.3g}",
                   help="max(0, −smallest whitened score); 0 = every score nonnegative")
    cols[1].metric("iterations", int(res.iterations))
    status = {"zero-negativity": "S = 0 reached", "local-minimum": "local minimum",
              "max-iter": "iteration cap"}.get(str(res.status), str(res.status))
    cols[2].metric("stopped at", status, help=f"status {res.status!r} of nonneg_scores")
    cols[3].metric("seconds", f"{res.seconds:.2f}")

    c1, c2 = st.columns([1, 1.2])
    c1.plotly_chart(below_toolbar(figs.negativity_history(res.history)), key="ns_history")
    with c2:
        r = int(np.asarray(res.W).shape[1])
        if r <= 3:
            axes = list(range(r))
        else:
            axes = sorted(st.multiselect("Scores to draw (2 or 3)", list(range(r)), [0, 1, 2],
                                         format_func=lambda j: f"score {j + 1}", max_selections=3,
                                         key="ns_axes"))
            if len(axes) < 2:
                axes = [0, 1]
        frames, labels = cloud_frames(res, axes, np.random.default_rng(s.seed))
        st.plotly_chart(figs.whitened_cloud(frames, frame_labels=labels, axes=axes,
                                            title="Whitened scores Z(B_t), rotating (▶ play)"),
                        key="ns_cloud")

    if truth is not None:
        st.subheader("Recovered vs true")
        methods = st.multiselect("Compare with", COMPARE, default=[m for m in COMPARE if m != "em"],
                                 format_func=COMPARE_LABELS.get, key="ns_methods",
                                 help="EM with quasi-orthogonality is the slowest (it searches many "
                                      "restarts); add it when you can wait.")
        if "nspca" not in methods:
            methods = ["nspca", *methods]
        with compute.progress("Running the methods of the paper's comparison") as cb:
            cmp = compute.compare_methods(Y, truth["D"], truth["W"], tuple(methods), s.seed, _callback=cb)
        for note in cmp.notes:
            st.caption(f"• {note}")
        if "nspca" in cmp.D:
            st.plotly_chart(figs.profiles(truth["D"], cmp.D["nspca"], variable_names=var_names,
                                          title="Columns of D: true (grey bars) vs NSPCA estimate"),
                            key="ns_profiles")
        table = cmp.table.copy()
        table["method"] = [COMPARE_LABELS.get(m, m) for m in table["method"]]
        st.plotly_chart(figs.diff_bars(table, title="D_diff and W_diff after the best permutation "
                                                    "(lower is better)"), key="ns_diffs")
        st.dataframe(table.drop(columns=["label"], errors="ignore"), hide_index=True)
        st.caption("The paper's Table 1 (p = 10, n = 1000) reports D_diff 0.236 / 0.055 / 0.086 for NSPCA "
                   "and 0.771 / 0.672 / 0.663 for PCA in Cases 1 / 2 / 3.")
    else:
        st.plotly_chart(figs.profiles(None, np.asarray(res.D), variable_names=var_names,
                                      title="Estimated profiles (columns of D̂)"),
                        key="ns_profiles_est")
    names = [f"nspc_{j + 1}" for j in range(np.asarray(res.W).shape[1])]
    c1, c2 = st.columns(2)
    c1.download_button("Scores Ŵ (CSV)", pd.DataFrame(np.asarray(res.W), columns=names).to_csv(index=False)
                       .encode(), file_name="nonneg_scores.csv", mime="text/csv", key="ns_dl_scores",
                       on_click="ignore")
    c2.download_button("Profiles D̂ (CSV)", downloads.components_csv(np.asarray(res.D),
                                                                     var_names,
                                                                     names),
                       file_name="nonneg_profiles.csv", mime="text/csv", key="ns_dl_profiles",
                       on_click="ignore")


compute.guard(main)
