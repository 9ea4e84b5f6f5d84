"""Page 4 — explained variance vs k, inside a certified band (Asteris et al. 2014, Figs. 4–6).

Results first, proofs after: each algorithm's curve is a background job (one
fit per k, fast), the certified band another (one certificate per k, heavy,
the sidebar's k first); the figure shows what is done and fills in k by k.
The work lives in :mod:`ui.jobs`, so it survives page switches, Stop keeps
what is done, and a second visit reuses it.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import streamlit as st

from nspca_core import methods as registry
from ui import bounds_store, compute, cost, jobs, layout, live, state, work
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


def k_grid(n: int, points: int, current: int | None = None) -> tuple[int, ...]:
    """Exactly ``min(points, n)`` values of k in 1..n, denser at small k, with ``current``.

    Half are spread linearly, half geometrically (small k, where curves bend,
    gets its share); rounding collisions are topped up by the integers
    farthest from those already chosen.  ``current`` (the sidebar's k)
    replaces the nearest interior value, so the count stays ``points``.
    """
    points = max(1, min(int(points), n))
    if points >= n:
        return tuple(range(1, n + 1))
    lin = np.linspace(1, n, points // 2 + 1)
    geo = np.geomspace(1, n, points - points // 2)
    ks = np.unique(np.clip(np.round(np.concatenate([lin, geo])), 1, n).astype(int))[:points]
    if ks.size > points:
        ks = ks[np.unique(np.round(np.linspace(0, ks.size - 1, points)).astype(int))]
    rest = np.arange(1, n + 1)
    while ks.size < points:
        free = np.setdiff1d(rest, ks)
        gap = np.min(np.abs(free[:, None] - ks[None, :]), axis=1)
        ks = np.sort(np.append(ks, free[int(np.argmax(gap))]))
    if current is not None and 1 <= current <= n and current not in ks:
        interior = np.flatnonzero((ks != ks.min()) & (ks != ks.max())) if points > 2 else np.arange(ks.size)
        j = interior[int(np.argmin(np.abs(ks[interior] - current)))]
        ks[j] = current
        ks = np.sort(ks)
    return tuple(int(k) for k in ks)


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


def main() -> None:
    s = state.settings()
    ds = compute.current_dataset()
    X = ds.X
    m, n = X.shape
    methods, points, show_band, show_paper, log_k = controls(n)
    k_now = min(s.k, n)
    ks = k_grid(n, points, k_now)
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
    paths, notes = {}, []
    wanted = list(dict.fromkeys([*methods, *(["enet"] if show_paper else [])]))
    for method in wanted:
        try:
            paths[method] = work.path_job(X, dkey, method, order, d=s.d, eps=s.eps, seed=s.seed,
                                          raw=ds.X_raw if method == "nmf" else None,
                                          title=f"{figs.method_label(method)} on {ds.info.title}")
        except compute.Unavailable as exc:
            notes.append(f"**{figs.method_label(method)}** is not available: {exc}")
    for note in notes:
        st.info(note)
    if not paths:
        return
    # a first visit: give the curves up to 1 s, so that the first paint may already have some
    # (the figure then redraws every second as they come); a revisit draws at once
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline and not any(j.view().results for j in paths.values()) \
            and live.any_active([j.view() for j in paths.values()]):
        time.sleep(0.05)
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
    fore = [j.view() for j in paths.values()] + ([cert.view()] if cert is not None else []) \
        + ([proof.view()] if proof is not None else [])
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
        return restart_if_resumed(now, active)

    live.live(redraw, active=active, period=period)


def restart_if_resumed(now: bool, page_active: bool) -> bool:
    """``now`` (whether work is under way after a redraw); when work is under way that was not when the
    page ran — a Continue pressed inside the redrawn part resumed a job — the whole page runs again, so
    that it redraws itself while the work goes on: the redrawn part of a page with no work under way
    has no timer, and it showed the resumed work with a Stop that was never redrawn (a Stop then
    seemed to need a second click: the first stopped the work, and nothing showed it)."""
    if now and not page_active:
        st.rerun()
    return now


PROOF_SECONDS = 60  # the branch and bound's default time limit (nspca_core.certify's default for "exact")
TIGHTEN_REDRAW_S = 2.0  # redraw period while only the band's tightening runs


def proof_time_limit() -> float:
    """The time limit of a proof of optimality (seconds): the "Prove optimality" action and the
    exact proofs of the band's tightening."""
    return float(st.number_input(
        "Time limit of a proof of optimality (s)", min_value=1, max_value=3600, value=PROOF_SECONDS, step=10,
        key="vk_time_limit",
        help="Branch and bound over supports stops when the gap closes to the tolerance (provably optimal) or "
             "after this many seconds with its best bound. Used by **Prove optimality** and by the band's "
             "background tightening at small k."))


def prove_optimality(X: np.ndarray, dkey: str, k: int, paths: dict, store=None, limit: float = PROOF_SECONDS):
    """The "Prove optimality" action at the sidebar's k: ``certify(X, k, x, effort="exact",
    time_limit=limit)`` (branch and bound over supports) on the best answer known at k, as a
    background job; None until asked (or while no answer exists at k).  A k the store already
    knows to be optimal needs no proof: the page says so (:func:`draw_proof`)."""
    data = bounds_store.data_key(dkey)
    known = store.at(data, k) if store is not None and data is not None else None
    x0 = work.best_x(list(paths.values()), k)
    if known is not None and known["x"] is not None and (x0 is None or known["lower"] > _variance(X, x0)):
        x0 = known["x"]
    proved = known is not None and bool(known["optimal"])
    asked = f"vk_prove_{dkey}_{k}_{limit:g}"
    if st.button(f"Prove optimality at k = {k}", key="vk_prove", disabled=x0 is None or proved,
                 help="Already proved optimal." if proved else
                 f"Branch and bound over supports, warm-started by the best answer at k; stops when the gap "
                 f"closes to the tolerance (provably optimal) or after {limit:g} s with its best bound."):
        st.session_state[asked] = True
    if not st.session_state.get(asked) or x0 is None:
        return None
    return work.certify_one_job(X, dkey, k, x0, effort="exact", time_limit=limit, store=store,
                                title=f"proof of optimality at k = {k}")


def _variance(X: np.ndarray, x: np.ndarray) -> float:
    y = X @ x
    return float(y @ y) / X.shape[0]


def draw_proof(proof, k: int, limit: float = PROOF_SECONDS, store=None, dkey: str = "") -> bool:
    """The proof's progress (with Stop) and its answer — or the proof the store already holds at
    k (from the band's tightening, an earlier visit or another session); True while it runs."""
    data = bounds_store.data_key(dkey)
    known = store.at(data, k) if store is not None and data is not None else None
    view = proof.view() if proof is not None else None
    if view is not None:
        live.status_line(view, what=f"Proof of optimality at k = {k}", unit_name="values of k", key="vk_proof")
    c = view.results.get(int(k)) if view is not None else None
    if c is None and known is not None and known["optimal"]:
        c = dict(upper=known["upper"], lower=known["lower"], optimal=True, kind=known["kind"])
    if c is not None:
        gap = (c["upper"] - c["lower"]) / c["upper"] if c["upper"] > 0 else 0.0
        # how long this proof took, as it happened (it said "within 60 s" of a proof that ended after
        # 3-7 s, issue 41); a proof held by the store from earlier says so instead
        ran = view is not None and view.results.get(int(k)) is not None
        took = (f" after {view.seconds:.1f} s" if ran and view.seconds else "") if ran else " (proved earlier)"
        if c["optimal"]:
            st.success(f"✓ Provably optimal at k = {k}{took}: variance {c['lower']:.6g}, upper bound "
                       f"{c['upper']:.6g} (relative gap {gap:.1e}, {c['kind']}).")
        else:
            why = (f"the time limit of {limit:g} s was reached" if ran and view.seconds >= 0.95 * limit else
                   "the branch and bound ended with its best bound") if ran else "an earlier proof"
            st.info(f"Not proved optimal at k = {k}{took} ({why}): the answer is at least "
                    f"{c['lower'] / c['upper']:.3%} of the optimum (gap {gap:.2e}, bound {c['kind']}).")
    return view is not None and live.any_active([view])


def tighten_status(view, start: dict, ks, ratio_now: np.ndarray) -> str:
    """The tightening's status line: "Tightening the band: 37 of 199 k improved, worst ratio
    0.930 → 0.960" (improved: the certified ratio at k rose above the one when it started)."""
    before = np.array([start.get(int(k), np.nan) for k in ks], float)
    now = np.asarray(ratio_now, float)
    better = int(np.sum(np.isfinite(now) & (~np.isfinite(before) | (now > before * (1 + 1e-9)))))
    worst0 = np.nanmin(before) if np.isfinite(before).any() else np.nan
    worst1 = np.nanmin(now) if np.isfinite(now).any() else np.nan
    proved = sum(1 for r in view.results.values() if r is not None and r.get("effort") == "exact"
                 and not r.get("skipped"))
    return (f"{better} of {len(ks)} k improved, worst ratio {worst0:.3f} → {worst1:.3f}"
            + (f"; {proved} exact proofs tried" if proved else ""))


def draw_tighten(tighten, ks, ratio_now: np.ndarray) -> bool:
    """Status of the band's background tightening, with Stop (Continue once stopped); True while active."""
    if tighten is None:
        return False
    view = tighten.view()
    text = tighten_status(view, getattr(tighten, "start_ratio", {}), ks, ratio_now)
    steps = f"{len(view.results)} of {len(view.units)} steps"
    if view.active:
        c1, c2 = st.columns([5, 1], vertical_alignment="center")
        wait = " — waiting while another certificate computes" if view.status == "queued" else ""
        c1.progress(view.fraction, text=f"Tightening the band in the background: {text} ({steps}, "
                                        f"{view.seconds:.0f} s{wait}). Effort \"full\" at every k, the cheapest "
                                        "first, proofs of optimality where cheap, then longer steps where "
                                        "the first were cut short.")
        c2.button("Stop", key="vk_tighten_stop", on_click=live.stop_job, args=(view.key,),
                  help="Stop tightening; the bounds proved so far are kept (for every page and visit).")
    elif view.status in ("stopped", "cancelled", "failed"):
        c1, c2 = st.columns([5, 1], vertical_alignment="center")
        why = {"stopped": "stopped", "cancelled": "cancelled", "failed": f"failed ({view.message})"}[view.status]
        c1.info(f"Tightening the band {why}: {text} ({steps}). The bounds proved so far are kept.")
        c2.button("Continue", key="vk_tighten_resume", on_click=live.resume_job, args=(view.key,),
                  help="Go on tightening from where it stopped.")
    else:
        st.caption(f"Band tightened in the background: {text} ({steps}).")
    return view.active


def monotone_band(ks, upper: np.ndarray, best: np.ndarray):
    """OPT is nondecreasing in k: at each k the smallest bound proved at any k' >= k and the best
    answer found at any k' <= k (a point with fewer nonzeros is feasible at k)
    (:func:`nspca_core.certificates.monotone.monotone_envelope`).  Returns ``(upper, best,
    (upper_from_k, best_from_k))``; nan where there is none."""
    from nspca_core.certificates.monotone import monotone_envelope

    env = monotone_envelope(ks, upper, best)
    up = np.where(np.isfinite(env["upper"]), env["upper"], np.nan)
    lo = np.where(np.isfinite(env["lower"]), env["lower"], np.nan)
    return up, lo, (env["upper_from"], env["lower_from"])


def _curve_values(view, ks) -> np.ndarray:
    return np.array([view.results[k]["variance"] if k in view.results else np.nan for k in ks])


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
    stored = store.band(data, ks) if data is not None else None

    K = len(ks)
    Vals = np.column_stack([_curve_values(pviews[mth], ks) for mth in methods])  # (K, methods)
    have = np.isfinite(Vals).any(axis=1)
    best = np.where(have, np.nanmax(np.where(np.isfinite(Vals), Vals, -np.inf), axis=1), np.nan)
    best_idx = np.where(have, np.argmax(np.where(np.isfinite(Vals), Vals, -np.inf), axis=1), -1)
    upper = np.full(K, np.nan)
    optimal = np.zeros(K, bool)
    kinds = [""] * K
    probabilistic = False
    full = 0
    if cview is not None:
        full = sum(int(k) in cview.results for k in ks)
        for j, k in enumerate(ks):
            c = work.certificate(cview.results, k)  # the full one, or the quick first bound
            if c is None:
                continue
            upper[j], optimal[j], kinds[j] = c["upper"], c["optimal"], c["kind"]
            probabilistic |= c["probabilistic"]
            if np.isfinite(c["lower"]):  # the certificate may have found a better x
                best[j] = np.fmax(best[j], c["lower"])
        if stored is not None:  # everything proved on this data, at any k, by any page or effort
            has = np.isfinite(stored["upper"])
            tighter = has & ~(upper <= stored["upper"])
            upper = np.where(tighter, stored["upper"], upper)
            kinds = [kd if t else kinds[j] for j, (t, kd) in enumerate(zip(tighter, stored["kind"]))]  # the
            # k that proved each bound is the table's upper_from_k
            probabilistic |= bool(np.any(stored["probabilistic"] & tighter))
            best = np.where(np.isfinite(stored["lower"]), np.fmax(best, stored["lower"]), best)
            optimal |= stored["optimal"]
        upper, best, from_k = monotone_band(ks, upper, best)
        if stored is not None:  # the store's envelope reaches k outside the axis: its own k proved them
            from_k = (np.where(np.isfinite(stored["upper"]) & (stored["upper"] <= upper), stored["upper_from"],
                               from_k[0]), from_k[1])
        optimal |= np.array([bounds_store.closed(b, u) for b, u in zip(best, upper)], bool)
        bad = upper < best * (1 - 1e-9)  # a bound below a feasible value cannot hold
        if bad.any():
            st.warning(f"The certificate returned a bound below a feasible answer at k = "
                       f"{', '.join(str(ks[i]) for i in np.flatnonzero(bad)[:5])}; those bounds "
                       "are not shown (please report this).")
            upper = np.where(bad, np.nan, upper)
            optimal &= ~bad
    if failed := [v for v in pviews.values() if v.status == "failed"]:
        for v in failed:
            st.info(f"**{v.title}** could not run: {v.message}")
    if not have.any():
        st.info("The first curve is on its way…")
        return active
    if cview is not None and tighten is not None:
        with np.errstate(invalid="ignore", divide="ignore"):
            active |= draw_tighten(tighten, ks, np.where(np.isfinite(upper), best / upper, np.nan))

    proved = np.isfinite(upper) & np.isfinite(best)
    band = None
    if cview is not None and proved.any():
        band = pd.DataFrame(dict(k=np.asarray(ks)[proved], lower=best[proved] / lam1,
                                 upper=upper[proved] / lam1, ratio=best[proved] / upper[proved],
                                 optimal=optimal[proved]))
    paper = None
    paper_vals = np.full(K, np.nan)
    if show_paper and "enet" in pviews:
        low = np.array([pviews["enet"].results[k]["lowrank"] if k in pviews["enet"].results else np.nan
                        for k in ks])
        ok = np.isfinite(low)
        if ok.any():
            try:
                paper_vals[ok] = compute.paper_bounds(X, tuple(np.asarray(ks)[ok]), low[ok], s.d, s.eps)
                paper = pd.DataFrame(dict(k=np.asarray(ks)[ok], upper=paper_vals[ok] / lam1))
            except compute.Unavailable as exc:
                st.info(f"The paper's bound needs `paper_bound`: {exc}")

    frames = []
    for i, mth in enumerate(methods):
        ok = np.isfinite(Vals[:, i])
        frame = pd.DataFrame(dict(method=mth, k=np.asarray(ks)[ok], value=Vals[ok, i] / lam1))
        if cview is not None:
            frame["ratio"] = Vals[ok, i] / upper[ok]
        frames.append(frame)
    curves = pd.concat(frames, ignore_index=True)
    fig = figs.variance_vs_k(curves, band=band, paper=paper, current_k=k_now,
                             title=f"{ds.info.title}: variance / λ₁ vs k", ylabel="variance / λ₁",
                             log_k=log_k)
    st.plotly_chart(fig, key="vk_chart")

    j = ks.index(k_now)
    cols = st.columns(4)
    if np.isfinite(best[j]):
        by = figs.method_label(methods[best_idx[j]]) if best_idx[j] >= 0 else "the certificate"
        cols[0].metric(f"best variance at k = {k_now}", f"{best[j]:.4g}", help=f"by {by}; λ₁ = {lam1:.4g}")
        cols[1].metric("÷ λ₁", f"{best[j] / lam1:.1%}")
    if np.isfinite(upper[j]):
        cols[2].metric("certified fraction of the optimum", f"≥ {best[j] / upper[j]:.2%}",
                       help=f"upper bound {upper[j]:.6g} ({kinds[j]})")
        cols[3].metric("provably optimal?", "yes" if optimal[j] else "not proven")
        if (why := layout.low_certificate_text(best[j] / upper[j], k=k_now)) is not None and not active:
            st.info(why + f" Press **Prove optimality at k = {k_now}** above to run the branch and bound "
                          "on this answer.")
    elif cview is not None:
        cols[2].metric("certified fraction of the optimum", "computing…")
    if np.isfinite(paper_vals[j]):
        st.caption(f"The paper's bound at k = {k_now} certifies {best[j] / paper_vals[j]:.1%} "
                   f"(upper bound {paper_vals[j]:.4g}).")
    if band is not None:
        st.caption(f"Band: best answer of any selected algorithm (lower edge) to the certified upper "
                   f"bound on the optimum (upper edge), at the {int(proved.sum())} of {K} values of k "
                   f"certified so far; bounds used: {', '.join(sorted(set(kinds) - {''}))}. "
                   + ("Some bounds are probabilistic (ε-net: hold with probability ≥ 1 − 1/n). "
                      if probabilistic else "All bounds are deterministic. ")
                   + f"Provably optimal at {int(optimal.sum())} of {K} values of k. "
                   + (f"The full certificate is done at {full} of them; the others show the quick "
                      "first bound, tightened as each full one completes." if full < proved.sum() else ""))

    table = pd.DataFrame({"k": ks})
    for i, mth in enumerate(methods):
        table[f"variance_{mth}"] = Vals[:, i]
        table[f"seconds_{mth}"] = [pviews[mth].results[k]["seconds"] if k in pviews[mth].results
                                   else np.nan for k in ks]
    table["best_variance"] = best
    table["lambda1"] = lam1
    if cview is not None:
        table["upper_bound"] = upper
        table["bound_kind"] = kinds
        table["upper_from_k"], table["best_from_k"] = from_k
        table["certified_ratio"] = best / upper
        table["provably_optimal"] = optimal
    if show_paper:
        table["paper_bound"] = paper_vals
    with st.expander("Table"):
        st.dataframe(table, hide_index=True)
    st.download_button("Download CSV", table.to_csv(index=False).encode(),
                       file_name=f"variance_vs_k_{ds.name}.csv", mime="text/csv", key="vk_csv",
                       on_click="ignore")
    return active


compute.guard(main)
