"""Page 6 — every algorithm at one k: variance, certified ratio, time, support overlaps."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import streamlit as st

from nspca_core import methods as registry
from ui import bounds_store, compute, cost, downloads, jobs, layout, live, state, work
from ui.figures import analysis as figs
from ui.figures.teach import below_toolbar  # titles start under the figure's toolbar
from ui.sidebar import page_intro

page_intro(
    "Compare algorithms",
    "Every algorithm at the sidebar's k on the same data: variance, the fraction of the optimum it "
    "provably reaches, seconds, how much the supports overlap, the loadings side by side, and for "
    "labelled data whether the selected features separate the classes.",
    "Methods of Asteris et al. (ICML 2014), Sigg & Buhmann (ICML 2008, EM; Fig. 4: k-means Jaccard "
    "scores on the selected MLL genes), Yuan & Zhang (TPower), Zass & Shashua (NIPS 2006).",
)


SLOW = registry.with_cost("slow")  # offered, not selected by default


def main() -> None:
    s = state.settings()
    ds = compute.current_dataset()
    X = ds.X
    m, n = X.shape
    k = min(s.k, n)
    offered = compute.available_methods()
    if not offered:
        raise compute.Unavailable("`nspca_core.api.METHODS` (the solver entry point `fit`)")
    methods = st.multiselect("Algorithms", offered, default=[mth for mth in offered if mth not in SLOW],
                             format_func=figs.method_label, key="cmp_methods",
                             help=f"{', '.join(figs.method_short(mth) for mth in SLOW)} search a penalty "
                                  "for k nonzeros and take much longer; add them when you can wait.")
    methods = cost.screen_methods(methods, n, s.d, key="cmp", eps=s.eps)
    if not methods:
        st.info("Choose at least one algorithm.")
        return
    st.caption(f"{ds.info.title}: {m} samples × {n} features; k = {k}, d = {s.d}, ε = {s.eps}, "
               f"seed {s.seed}; preprocessing {' → '.join(ds.preprocessing) or 'none'}.")

    jobs.REGISTRY.warm()
    dkey = live.data_key(ds)
    fits = work.fit_jobs(X, dkey, k, methods, d=s.d, eps=s.eps, seed=s.seed,
                         raw=ds.X_raw if "nmf" in methods else None,
                         title=f"at k = {k} on {ds.info.title}")
    cert = None
    try:
        cert = work.certify_job(X, dkey, [k], start=lambda kk: work.best_x(list(fits.values()), kk),
                                title=f"Certificates on {ds.info.title}", store=bounds_store.shared())
    except compute.Unavailable as exc:
        st.info(f"Certified ratios need the certificates module: {exc}")
    views = [f.view() for f in fits.values()] + ([cert.view()] if cert is not None else [])
    live.live(lambda: draw(ds, X, k, methods, fits, cert, s, dkey), active=live.any_active(views),
              first=not any(v.results for v in views[:len(fits)]))  # no answer yet: no figure


def draw(ds, X, k, methods, fits, cert_job, s, dkey: str = "") -> bool:
    """Everything below the controls, from the finished methods; True while work is under way."""
    fviews = {mth: fits[mth].view() for mth in methods}
    fview = live.merge(list(fviews.values()), title="Algorithms")
    cview = cert_job.view() if cert_job is not None else None
    live.status_line(fview, what="Algorithms", unit_name="algorithms", key="cmp_fit")
    if cview is not None:
        live.status_line(cview, what="Certificate", unit_name="values of k", key="cmp_cert", units=[k])
    active = fview.active or (cview is not None and cview.active)
    for mth, v in fviews.items():
        if v.status == "failed":
            st.info(f"**{figs.method_label(mth)}** could not run: {v.message}")
    results = {mth: SimpleNamespace(**fviews[mth].results[k]) for mth in methods if k in fviews[mth].results}
    if not results:
        st.info("The first answers are on their way…")
        return active
    names = list(results)
    variances = np.array([results[mth].variance for mth in names], float)
    best = names[int(np.nanargmax(variances))]
    # the job's full or quick bound, or a tighter one proved on this data by any page (the store)
    c = work.best_certificate(dkey, k, cview.results if cview is not None else None, store=bounds_store.shared())
    cert = None if c is None else SimpleNamespace(upper_bound=c["upper"], kind=c["kind"],
                                                  probabilistic=c["probabilistic"], optimal=c["optimal"])
    if cert is not None and cert.upper_bound < variances.max() * (1 - 1e-9):
        st.warning("The certificate returned a bound below a feasible answer; it is not shown "
                   "(please report this).")
        cert = None
    upper = float(cert.upper_bound) if cert is not None else np.nan
    lam1 = float(compute.eigenvalues(X, 1)[0]) or 1.0

    table = pd.DataFrame(dict(
        method=names,
        variance=variances,
        variance_over_lambda1=variances / lam1,
        certified_ratio=variances / upper,
        seconds=[float(results[mth].seconds) for mth in names],
        nonzeros=[int(np.asarray(results[mth].support).size) for mth in names],
        converged=[bool(results[mth].converged) for mth in names],
        provably_optimal=[cert is not None and bounds_store.closed(v, upper) for v in variances],
    ))
    cols = st.columns(3)
    cols[0].metric("best variance", f"{variances.max():.4g}", help=f"by {figs.method_label(best)}")
    if cert is not None:
        cols[1].metric("certified upper bound on the optimum", f"{upper:.4g}", help=f"bound: {cert.kind}"
                       + (" (probabilistic)" if cert.probabilistic else ""))
        cols[2].metric("certified fraction of the optimum", f"≥ {variances.max() / upper:.2%}",
                       help="provably optimal" if cert.optimal else None)
        if bounds_store.closed(variances.max(), upper):
            st.success(f"✓ Provably optimal at k = {k}: {figs.method_label(best)}'s answer meets the upper bound "
                       f"(relative gap ≤ {bounds_store.OPTIMAL_TOLERANCE:.0e}).")
        if not active:  # a low fraction explained, once the certificate has settled (issue 27 item 8)
            # explained from this page's own certificate (the store's tighter bound is in the metrics)
            own = work.certificate(cview.results, k) if cview is not None else None
            active |= layout.refine_certificate(X, dkey, k, getattr(results[best], "x", None),
                                                variances.max() / (own["upper"] if own else upper),
                                                variance=variances.max(), key="cmp")
    st.dataframe(table, hide_index=True, column_config={
        "method": st.column_config.TextColumn("method"),
        "variance": st.column_config.NumberColumn("variance xᵀAx", format="%.5g"),
        "variance_over_lambda1": st.column_config.NumberColumn("÷ λ₁", format="%.4f"),
        "certified_ratio": st.column_config.ProgressColumn("certified ratio", format="%.4f",
                                                           min_value=0.0, max_value=1.0),
        "seconds": st.column_config.NumberColumn("seconds", format="%.3f"),
        "provably_optimal": st.column_config.CheckboxColumn("provably optimal"),
    })

    # every figure built once per server for what it shows (live.figure): the redraws while the
    # certificate runs, and the other sessions on the same data, send the one made
    c1, c2 = st.columns(2)
    if cert is not None:
        c1.plotly_chart(live.figure("cmp_ratio", (table, k), lambda: below_toolbar(figs.metric_bars(
            table, "certified_ratio", percent=True, title=f"Certified fraction of the optimum, k = {k}",
            ylabel="variance / upper bound"))), key="cmp_ratio")
    else:
        c1.plotly_chart(live.figure("cmp_var", (table, k), lambda: below_toolbar(figs.metric_bars(
            table, "variance_over_lambda1", title=f"Variance / λ₁, k = {k}", ylabel="variance / λ₁"))),
            key="cmp_var")
    c2.plotly_chart(live.figure("cmp_seconds", (table,), lambda: below_toolbar(figs.metric_bars(
        table, "seconds", title="Seconds per solve", ylabel="seconds"))), key="cmp_seconds")

    supports = {mth: np.asarray(results[mth].support) for mth in names}
    jaccard = compute.jaccard_matrix(supports)
    st.plotly_chart(live.figure("cmp_jaccard", (jaccard, k), lambda: figs.jaccard_heatmap(
        jaccard, title=f"Support overlap at k = {k} (Jaccard |S∩T| / |S∪T|)")), key="cmp_jaccard")

    st.subheader("Loadings side by side")
    if ds.image_shape is not None:
        # one image per method, in a single row, titled by method and variance
        flat = {"": [np.asarray(results[mth].x) for mth in names]}
        flat_titles = {"": [f"{figs.method_short(mth)}<br>var {results[mth].variance:.4g}" for mth in names]}
        st.plotly_chart(live.figure("cmp_images", (flat, flat_titles, ds.image_shape, k), lambda: figs.image_grid(
            flat, image_shape=ds.image_shape, titles=flat_titles, title=f"Loadings as images, k = {k}",
            cell_px=150)), key="cmp_images")
    union = np.unique(np.concatenate([supports[mth] for mth in names])).astype(int)
    shown = union[:80]
    L = pd.DataFrame({mth: np.asarray(results[mth].x)[shown] for mth in names},
                     index=[str(ds.feature_names[j]) for j in shown])
    loadings_title = (f"Loadings on the union of the supports ({union.size} features"
                      + (", first 80 shown)" if union.size > 80 else ")"))
    st.plotly_chart(live.figure("cmp_loadings", (L, loadings_title),
                                lambda: figs.loadings_heatmap(L, title=loadings_title)), key="cmp_loadings")

    if ds.labels is not None:
        st.subheader("Do the selected features separate the classes?")
        classes = np.unique(np.asarray(ds.labels))
        st.markdown(
            f"Sigg & Buhmann's check (ICML 2008, §5, Fig. 4): k-means with {classes.size} clusters on "
            f"the {k} features each method selected; the pair-counting Jaccard score of the clusters "
            f"against the known labels ({', '.join(map(str, classes[:6]))}"
            f"{', …' if classes.size > 6 else ''}); 1 = the clusters are the classes.")
        with compute.progress("k-means on each method's features") as cb:
            scores = []
            for i, mth in enumerate(names):
                sel = np.asarray(supports[mth], int)
                scores.append(compute.kmeans_jaccard(X[:, sel], np.asarray(ds.labels),
                                                     int(classes.size), s.seed))
                cb(i + 1, len(names))
        jt = pd.DataFrame(dict(method=names, jaccard=scores))
        st.plotly_chart(live.figure("cmp_kmeans", (jt, classes.size), lambda: figs.metric_bars(
            jt, "jaccard", title=f"k-means ({classes.size} clusters) on the selected features vs labels",
            ylabel="pair-counting Jaccard")), key="cmp_kmeans")

    L_all = np.column_stack([np.asarray(results[mth].x) for mth in names])
    c1, c2 = st.columns(2)
    c1.download_button("Download loadings (CSV)", downloads.components_csv(L_all, ds.feature_names, names),
                       file_name=f"compare_{ds.name}_k{k}.csv", mime="text/csv", key="cmp_csv",
                       on_click="ignore")
    c2.download_button("Download table (CSV)", table.to_csv(index=False).encode(),
                       file_name=f"compare_table_{ds.name}_k{k}.csv", mime="text/csv",
                       key="cmp_table_csv", on_click="ignore")
    return active


compute.guard(main)
