"""Page 4 — explained variance vs k, inside a certified band (Asteris et al. 2014, Figs. 4–6).

Results first, proofs after: each algorithm's curve is a background job (one
fit per k, fast), the certified band another (one certificate per k, heavy,
the sidebar's k first); the figure shows what is done and fills in k by k.
The work lives in :mod:`ui.jobs`, so it survives page switches, Stop keeps
what is done, and a second visit reuses it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from nspca_core import methods as registry
from ui import bounds_store, compute, cost, jobs, layout, live, state, work
from ui import variance_k as vk
from ui.proofs import (PROOF_SECONDS, TIGHTEN_REDRAW_S, draw_proof, draw_tighten, proof_time_limit,
                       prove_optimality)
from ui.figures import analysis as figs
from ui.sidebar import page_intro

page_intro(
    "Variance vs k, certified",
    "The variance (÷ λ₁) of the nonnegative k-sparse component each algorithm finds, for every k, "
    "inside a shaded band that provably contains the unknown optimum; a star where the answer is "
    "provably optimal.",
    "Asteris, Papailiopoulos & Dimakis, *Nonnegative Sparse PCA with Provable Guarantees* "
    "(ICML 2014), Figs. 4–6 (CBCL, MLL, LRS), with our certificate in place of the paper's bound.",
)


DEFAULT_METHODS = registry.defaults()  # the registry's preselected single-component methods
# from this many features on, the k axis is log-scaled by default (MLL: 12,582 features; on a
# linear axis every interesting k sat in the first pixels, issue 27 item 4)
LOG_K_FROM = 1000


def controls(n: int) -> tuple[list[str], int, bool, bool, bool]:
    offered = compute.available_methods()
    default = [mth for mth in DEFAULT_METHODS if mth in offered]
    c1, c2, c3 = st.columns([3, 2, 2])
    methods = c1.multiselect("Algorithms", offered, default=default, format_func=figs.method_label,
                             key="vk_methods",
                             help="Each runs once per k, in the background; curves appear within "
                                  "seconds and the certified band fills in k by k.")
    if n > 3:
        points = c2.slider("Values of k on the axis", 3, n, min(n, 15), key="vk_points",
                           help=f"The sidebar's k is always one of them; {n} = every k.")
    else:
        points = n
    with c3:
        show_band = st.toggle("Certified band", value=True, key="vk_band",
                              help="Our upper bound on the optimum (nspca_core.certify), one k at a time.")
        show_paper = st.toggle("Paper's bound for comparison", value=False, key="vk_paper",
                               help="OPT_d/(1−ε) + λ_{d+1} from the ε-net, as in the paper's figures.")
        log_k = st.toggle("Log-scaled k axis", value=n >= LOG_K_FROM, key=f"vk_logk_{n >= LOG_K_FROM}",
                          help=f"On by default from {LOG_K_FROM} features: on a linear axis every "
                               "small k would be squeezed against the left edge.")
    return methods, points, show_band, show_paper, log_k



@st.cache_data(show_spinner=False, max_entries=64)
def k_axis(n: int, points: int, k_now: int) -> tuple[int, ...]:
    """:func:`ui.variance_k.k_grid`, once per server for its arguments (on MLL's 12,582 features its
    top-up loop took 15 ms of every run and redraw)."""
    return vk.k_grid(n, points, k_now)


def main() -> None:
    s = state.settings()
    ds = compute.current_dataset()
    X = ds.X
    m, n = X.shape
    methods, points, show_band, show_paper, log_k = controls(n)
    k_now = min(s.k, n)
    ks = k_axis(n, points, k_now)
    methods = cost.screen_methods(methods, n, s.d, key="vk", eps=s.eps, runs=len(ks))
    if not methods:
        st.info("Choose at least one algorithm.")
        return
    st.caption(f"{ds.info.title}: {m} samples × {n} features, preprocessing "
               f"{' → '.join(ds.preprocessing) or 'none'}; d = {s.d}, ε = {s.eps}, seed {s.seed}; "
               f"{len(ks)} values of k.")
    lam1 = float(compute.eigenvalues(X, 1)[0])
    if lam1 <= 0:
        st.error("The covariance is zero (every feature constant after preprocessing): nothing to show.")
        return

    jobs.REGISTRY.warm()
    dkey = live.data_key(ds)
    # the sidebar's k first: its numbers are the first to be complete
    order = [k_now, *[k for k in ks if k != k_now]]
    paths = {}
    for method in dict.fromkeys([*methods, *(["enet"] if show_paper else [])]):
        try:
            paths[method] = work.path_job(X, dkey, method, order, d=s.d, eps=s.eps, seed=s.seed,
                                          raw=ds.X_raw if method == "nmf" else None,
                                          title=f"{figs.method_label(method)} on {ds.info.title}")
        except compute.Unavailable as exc:
            st.info(f"**{figs.method_label(method)}** is not available: {exc}")
    if not paths:
        return
    store = bounds_store.shared()  # what any page, session or visit proved on this data
    cert = None
    if show_band:
        try:
            path_jobs = list(paths.values())
            cert = work.certify_job(X, dkey, order, start=lambda k: work.best_x(path_jobs, k),
                                    title=f"Certificates on {ds.info.title}", store=store)
        except compute.Unavailable as exc:
            st.info(f"The certified band needs the certificates module: {exc}")
    shown = [mth for mth in methods if mth in paths]
    limit, proof = PROOF_SECONDS, None
    if show_band:
        c1, c2 = st.columns([1, 2], vertical_alignment="bottom")
        with c1:
            limit = proof_time_limit()
        with c2:
            proof = prove_optimality(X, dkey, k_now, paths, store, limit)
    # once the band is drawn (its first pass done at every k), its bounds keep tightening
    tighten = None
    if cert is not None and cert.view(touch=False).status == "done":
        tighten = work.tighten_job(X, dkey, ks, store=store, time_limit=limit,
                                   title=f"Tightening the band on {ds.info.title}")
    fore = [j.view() for j in paths.values()] + [j.view() for j in (cert, proof) if j is not None]
    views = fore + ([tighten.view()] if tighten is not None else [])
    # only the slow tightening left: redraw less often (each redraw rebuilds the figure)
    period = None if live.any_active(fore) else TIGHTEN_REDRAW_S
    active = live.any_active(views)

    def redraw() -> bool:
        # the proof's progress and outcome first: right under the button that asked for it, not below the
        # figure and its downloads, out of view (issue 41)
        proving = draw_proof(proof, k_now, limit, store, dkey)
        now = draw(ds, X, ks, k_now, lam1, shown, paths, cert, show_paper, s, log_k, store=store, dkey=dkey,
                   tighten=tighten) | proving
        return live.restart_if_resumed(now, active)

    # a first visit draws at once ("on its way") and the fragment redraws as the curves come
    first = not any(j.view(touch=False).results for j in paths.values())  # no curve yet: no figure
    live.live(redraw, active=active, period=period, first=first)


def draw(ds, X, ks, k_now, lam1, methods, paths, cert, show_paper, s, log_k=False, *, store=None,
         dkey: str = "", tighten=None) -> bool:
    """The figure, numbers and table from what the jobs have done so far and what the store
    holds (:mod:`ui.bounds_store`, every bound proved on this data); True while active."""
    pviews = {mth: job.view() for mth, job in paths.items()}
    cview = cert.view() if cert is not None else None
    for mth in methods:
        live.status_line(pviews[mth], what=figs.method_label(mth), unit_name="values of k",
                         key=f"vk_{mth}", units=ks)
    if cview is not None:
        quick, _ = work.certified(cview.results, ks)
        live.status_line(cview, what=f"Certified band (first bounds at {quick} of {len(ks)} k, now "
                                     "tightening them)", unit_name="values of k", key="vk_cert", units=ks)
    active = live.any_active(list(pviews.values()) + ([cview] if cview else []))
    data = bounds_store.data_key(dkey) if store is not None else None
    values = np.column_stack([vk.curve_values(pviews[mth].results, ks) for mth in methods])  # (K, methods)
    b = vk.band(ks, values, cview.results if cview is not None else None,
                store.band(data, ks) if data is not None and cview is not None else None)
    if b.refused:
        st.warning(f"The certificate returned a bound below a feasible answer at k = "
                   f"{', '.join(str(k) for k in b.refused[:5])}; those bounds are not shown (please report this).")
    for v in pviews.values():
        if v.status == "failed":
            st.info(f"**{v.title}** could not run: {v.message}")
    if not np.isfinite(values).any():
        st.info("The first curve is on its way…")
        return active
    if cview is not None and tighten is not None:
        with np.errstate(invalid="ignore", divide="ignore"):
            active |= draw_tighten(tighten, ks, np.where(np.isfinite(b.upper), b.best / b.upper, np.nan))
    band = vk.band_frame(ks, b, lam1) if cview is not None else None
    paper, paper_vals = None, np.full(len(ks), np.nan)
    if show_paper and "enet" in pviews:
        low = vk.curve_values(pviews["enet"].results, ks, "lowrank")
        if (ok := np.isfinite(low)).any():
            try:
                paper_vals[ok] = compute.paper_bounds(X, tuple(np.asarray(ks)[ok]), low[ok], s.d, s.eps)
                paper = pd.DataFrame(dict(k=np.asarray(ks)[ok], upper=paper_vals[ok] / lam1))
            except compute.Unavailable as exc:
                st.info(f"The paper's bound needs `paper_bound`: {exc}")
    curves = vk.curves_frame(methods, ks, values, lam1, b.upper if cview is not None else None)
    title = f"{ds.info.title}: variance / λ₁ vs k"
    # built once per server for what it shows: the redraws while the work goes on, and every session on
    # the same data, send the figure made once (live.figure)
    fig = live.figure("vk", (curves, band, paper, k_now, title, log_k),
                      lambda: figs.variance_vs_k(curves, band=band, paper=paper, current_k=k_now, title=title,
                                                 ylabel="variance / λ₁", log_k=log_k))
    st.plotly_chart(fig, key="vk_chart")
    j = ks.index(k_now)
    numbers(j, k_now, b, lam1, methods, certifying=cview is not None, active=active)
    if np.isfinite(paper_vals[j]):
        st.caption(f"The paper's bound at k = {k_now} certifies {b.best[j] / paper_vals[j]:.1%} "
                   f"(upper bound {paper_vals[j]:.4g}).")
    if band is not None:
        K, proved = len(ks), int(b.proved.sum())
        st.caption(f"Band: best answer of any selected algorithm (lower edge) to the certified upper "
                   f"bound on the optimum (upper edge), at the {proved} of {K} values of k "
                   f"certified so far; bounds used: {', '.join(sorted(set(b.kinds) - {''}))}. "
                   + ("Some bounds are probabilistic (ε-net: hold with probability ≥ 1 − 1/n). "
                      if b.probabilistic else "All bounds are deterministic. ")
                   + f"Provably optimal at {int(b.optimal.sum())} of {K} values of k. "
                   + (f"The full certificate is done at {b.full} of them; the others show the quick "
                      "first bound, tightened as each full one completes." if b.full < proved else ""))
    seconds = np.column_stack([vk.curve_values(pviews[mth].results, ks, "seconds") for mth in methods])
    table = vk.table(ks, methods, values, seconds, b, lam1, certified=cview is not None,
                     paper=paper_vals if show_paper else None)
    with st.expander("Table"):
        st.dataframe(table, hide_index=True)
    st.download_button("Download CSV", table.to_csv(index=False).encode(),
                       file_name=f"variance_vs_k_{ds.name}.csv", mime="text/csv", key="vk_csv",
                       on_click="ignore")
    return active


def numbers(j: int, k_now: int, b: vk.Band, lam1: float, methods, *, certifying: bool, active: bool) -> None:
    """The sidebar's k in numbers: best variance, ÷ λ₁, certified fraction, optimality."""
    cols = st.columns(4)
    if np.isfinite(b.best[j]):
        by = figs.method_label(methods[b.best_idx[j]]) if b.best_idx[j] >= 0 else "the certificate"
        cols[0].metric(f"best variance at k = {k_now}", f"{b.best[j]:.4g}", help=f"by {by}; λ₁ = {lam1:.4g}")
        cols[1].metric("÷ λ₁", f"{b.best[j] / lam1:.1%}")
    if np.isfinite(b.upper[j]):
        cols[2].metric("certified fraction of the optimum", f"≥ {b.best[j] / b.upper[j]:.2%}",
                       help=f"upper bound {b.upper[j]:.6g} ({b.kinds[j]})")
        cols[3].metric("provably optimal?", "yes" if b.optimal[j] else "not proven")
        if (why := layout.low_certificate_text(b.best[j] / b.upper[j], k=k_now)) is not None and not active:
            st.info(why + f" Press **Prove optimality at k = {k_now}** above to run the branch and bound "
                          "on this answer.")
    elif certifying:
        cols[2].metric("certified fraction of the optimum", "computing…")


compute.guard(main)
