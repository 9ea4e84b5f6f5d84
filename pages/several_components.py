"""Page 8 — several components: greedy deflation vs the joint bipartite-matching method (Asteris et al. 2015)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from nspca_core import methods as registry
from ui import compute, cost, downloads, jobs, live, messages, state, work
from ui.figures import analysis as figs
from ui.figures.teach import below_toolbar, legend_below  # titles under the toolbar, legends under the axis
from ui.sidebar import page_intro

page_intro(
    "Several components",
    "Several (r) nonnegative k-sparse components, found one at a time (deflation: remove the used features, or "
    "project them out) or jointly (bipartite matchings, disjoint supports): cumulative variance per "
    "component, the supports as a feature × component map, and a tiny example where joint beats greedy.",
    "Asteris, Kyrillidis, Papailiopoulos & Dimakis, *Sparse PCA via Bipartite Matchings* (2015): "
    "Fig. 2 (cumulative variance) and the §7 counterexample; deflation as in Mackey (NIPS 2008).",
)

STRATEGY_LABELS = {name: spec.label for name, spec in registry.STRATEGIES.items()}
DEMO = "sc_demo"  # session key: the counterexample demo was asked for


def demo() -> None:
    st.subheader("§7: where greedy deflation loses")
    st.markdown(
        "Four features; A has a strong pair {x1, x4} (coupled by ε) and two weak ones (δ). Two "
        "2-sparse components with disjoint supports: deflation first takes the best pair {x1, x4} "
        "(variance 1 + ε) and is left with δ; the joint method puts x1 and x4 in *different* "
        "components and gets 1 + 1 = 2.")
    c1, c2, c3 = st.columns([1, 1, 1])
    eps = c1.slider("ε (coupling of x1 and x4)", 0.0, 0.9, 0.1, 0.05, key="sc_eps")
    delta = c2.slider("δ (weak features)", 0.0, 0.5, 0.05, 0.05, key="sc_delta")
    c3.button("Run the counterexample", type="primary", key="sc_run",
              on_click=lambda: st.session_state.__setitem__(DEMO, True))
    if not st.session_state.get(DEMO):
        return
    A, known = compute.counterexample(eps, delta)  # the core's §7 example and its proved optimum
    rows = []
    loadings = {}
    for strategy in (registry.REMOVE, registry.BIPARTITE):
        try:
            res = compute.components_cov(A, 2, 2, "auto", strategy, 2, 0.1, 0)
            loadings[STRATEGY_LABELS[strategy]] = np.asarray(res.loadings)
            rows.append(dict(method=STRATEGY_LABELS[strategy], total_variance=float(np.sum(res.variance)),
                             supports=" | ".join("{" + ", ".join(f"x{i + 1}" for i in sp) + "}"
                                                 for sp in res.supports)))
        except compute.Unavailable as exc:
            st.info(f"**{STRATEGY_LABELS[strategy]}** is not available: {exc}")
    rows.append(dict(method="optimum over all disjoint pairs", total_variance=known["optimum"],
                     supports=" | ".join("{" + ", ".join(f"x{i + 1}" for i in c) + "}"
                                         for c in known["optimum_supports"])))
    c1, c2 = st.columns([1, 1.3])
    c1.plotly_chart(figs.matrix_heatmap(A, title=f"A (ε = {eps}, δ = {delta})"), key="sc_A")
    table = pd.DataFrame(rows)
    c2.plotly_chart(figs.metric_bars(table.assign(method=table["method"]), "total_variance",
                                     title="Σ variance of the two components", ylabel="x₁ᵀAx₁ + x₂ᵀAx₂"),
                    key="sc_demo_bars")
    c2.dataframe(table, hide_index=True)
    st.caption(f"Expected: deflation 1 + ε + δ = {1 + eps + delta:.3f}; joint optimum "
               f"max(2, 1 + ε + δ) = {max(2.0, 1 + eps + delta):.3f}.")
    if loadings:
        st.plotly_chart(figs.supports_heatmap(loadings, ["x1", "x2", "x3", "x4"],
                                              title="Supports of the counterexample"), key="sc_demo_supports")


def main() -> None:
    s = state.settings()
    ds = compute.current_dataset()
    X = ds.X
    m, n = X.shape
    k = min(s.k, n)
    r_max = max(1, min(10, n // max(k, 1)))
    c1, c2, c3 = st.columns([1, 2, 1])
    r = c1.slider("Components r", 1, max(2, r_max), min(3, r_max) if r_max >= 2 else 1, key="sc_r",
                  disabled=r_max < 2, help=f"Disjoint supports need r·k ≤ n = {n}.")
    r = min(r, r_max)
    strategies = c2.multiselect("Strategies", list(STRATEGY_LABELS),
                                default=[registry.REMOVE, registry.PROJECT, registry.BIPARTITE],
                                format_func=STRATEGY_LABELS.get, key="sc_strategies")
    # the registry's preselected methods first (the paper's ε-net is the default: ~0.2 s per
    # strategy on MLL where "auto" takes seconds; "auto" is offered for the best deflation)
    methods = sorted([mth for mth in compute.available_methods() if mth != "nmf"] or ["auto"],
                     key=lambda mth: not registry.spec(mth).default)
    method = c3.selectbox("Single-component solver (deflation)", methods, format_func=figs.method_label,
                          key="sc_method")
    if not cost.screen_methods([method], n, s.d, key="sc", eps=s.eps, runs=r):
        method = "auto"  # the exact method was left out (the message says why)
    st.caption(f"{ds.info.title}: {m} samples × {n} features; k = {k} per component, d = {s.d}, "
               f"ε = {s.eps}, seed {s.seed}; preprocessing {' → '.join(ds.preprocessing) or 'none'}.")
    if not strategies:
        st.info("Choose at least one strategy.")
        return
    jobs.REGISTRY.warm()
    dkey = live.data_key(ds)
    todo = work.components_jobs(X, dkey, strategies, r=r, k=k, method=method, d=s.d,
                                eps=s.eps, seed=s.seed, title=f"({r} components) on {ds.info.title}")
    # the joint bound (a branch and bound: half a CPU second on MLL) beside the page, not in its run
    joint = None
    if any(registry.STRATEGIES[sg].disjoint for sg in strategies):
        joint = work.joint_bound_job(X, dkey, k, [r], title=f"bound on {r} components on {ds.info.title}")
    # the first paint says "on their way"; the fragment redraws as each strategy finishes
    views = [j.view() for j in todo.values()]
    live.live(lambda: draw(ds, X, strategies, todo, dkey=dkey),
              active=live.any_active(views + ([joint.view()] if joint is not None else [])),
              first=not any(v.results for v in views))


def show_joint_ratio(X: np.ndarray, results: dict, dkey: str) -> bool:
    """For the strategies with disjoint supports: the total variance as a certified fraction of
    the best possible total (the joint ratio), in place of per-component ratios, from the joint
    bound's job (:func:`ui.work.joint_bound_job`; it does not depend on the strategy, so one per
    data, k and c).  True while that bound is being computed."""
    disjoint = {sg: res for sg, res in results.items()
                if registry.STRATEGIES[sg].disjoint and res.n_components > 0
                and isinstance(res.params.get("k"), (int, np.integer))}
    if not disjoint:
        return False
    computing = False
    cols = st.columns(len(disjoint))
    for col, (sg, res) in zip(cols, disjoint.items()):
        k, c = int(res.params["k"]), int(res.n_components)
        view = work.joint_bound_job(X, dkey, k, [c]).view()  # this job (a c not asked for yet is added)
        label = f"{STRATEGY_LABELS[sg]}: certified fraction of the best total"
        if c not in view.results:
            computing |= view.active
            col.metric(label, "computing…" if view.active else "not available",
                       help=view.message or "The bound on the best total is computed after the components.")
            continue
        ub, kind = view.results[c]["upper"], view.results[c]["kind"]
        col.metric(label, f"≥ {res.total_variance / ub:.2%}" if ub > 0 else "100%",
                   help=f"Σ variance {res.total_variance:.6g} of at most {ub:.6g} for any "
                        f"{c} nonnegative components with disjoint supports of at most "
                        f"{k} nonzeros each (bound: {kind})")
    return computing


def draw(ds, X, strategies, todo, *, dkey: str = "") -> bool:
    """The figures from the strategies done so far; True while work is under way."""
    m = X.shape[0]
    views = {sg: todo[sg].view() for sg in strategies}
    view = live.merge(list(views.values()), title="Strategies")
    live.status_line(view, what="Strategies", unit_name="strategies", key="sc_job")
    for sg, v in views.items():
        if v.status == "failed":
            st.info(f"**{STRATEGY_LABELS[sg]}** could not run: {v.message}")
    results = {STRATEGY_LABELS[sg]: views[sg].results[sg] for sg in strategies if sg in views[sg].results}
    if not results:
        st.info("The first components are on their way…")
        return view.active
    active = view.active
    if results:
        total = float(np.einsum("ij,ij->", X, X) / m) or 1.0  # trace(A), A = XᵀX/m
        cumulative = {lab: res.cumulative_variance for lab, res in results.items()}
        summed = {lab: np.cumsum(res.variance) for lab, res in results.items()}
        # built once per server for what they show (live.figure): redraws and other sessions send them as made
        c1, c2 = st.columns(2)
        c1.plotly_chart(live.figure("sc_cumulative", (cumulative, total), lambda: below_toolbar(legend_below(
            figs.cumulative_variance(cumulative, normalizer=total,
                                     title="Variance explained by the span of the first components",
                                     ylabel="cumulative variance / trace(A)")))), key="sc_cumulative")
        c2.plotly_chart(live.figure("sc_sum", (summed, total), lambda: below_toolbar(legend_below(
            figs.cumulative_variance(
                summed, normalizer=total,
                title="Σ of per-component variances<br><sup>the objective of Asteris et al. (2015)</sup>",
                ylabel="Σ xⱼᵀAxⱼ / trace(A)")))), key="sc_sum")
        note = messages.bipartite_note({lab: float(np.sum(res.variance)) for lab, res in results.items()},
                                       STRATEGY_LABELS[registry.BIPARTITE])
        if note:
            st.info(note)
        active |= show_joint_ratio(X, {sg: views[sg].results[sg] for sg in strategies if sg in views[sg].results},
                                   dkey)
        rows = []
        for lab, res in results.items():
            for j in range(res.n_components):
                rows.append(dict(strategy=lab, component=j + 1, variance=float(res.variance[j]),
                                 additional=float(res.additional_variance[j]),
                                 cumulative=float(res.cumulative_variance[j]),
                                 nonzeros=int(len(res.supports[j]))))
        table = pd.DataFrame(rows)
        loadings = {lab: res.loadings for lab, res in results.items()}
        names = np.asarray([str(f) for f in ds.feature_names])
        st.plotly_chart(live.figure("sc_supports", (loadings, names), lambda: figs.supports_heatmap(
            loadings, list(names), title="Supports: loadings per feature and component")),
            key="sc_supports")
        with st.expander("Per-component table (additional = after projecting out the earlier ones)"):
            st.dataframe(table, hide_index=True)
        st.download_button("Download table (CSV)", table.to_csv(index=False).encode(),
                           file_name=f"several_components_{ds.name}.csv", mime="text/csv",
                           key="sc_csv", on_click="ignore")
        first = next(iter(results.values()))
        st.download_button(f"Download loadings of '{next(iter(results))}' (CSV)",
                           downloads.components_csv(first.loadings, ds.feature_names),
                           file_name=f"components_{ds.name}.csv", mime="text/csv", key="sc_loadings",
                           on_click="ignore")
    return active


compute.guard(main)
compute.guard(demo)  # runs even when the selected dataset cannot be loaded
