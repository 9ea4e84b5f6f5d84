"""The app's long computations as background jobs (:mod:`ui.jobs`), one unit at a time.

Each function submits (or finds) the job for its key and returns the
:class:`ui.jobs.Job`; pages read ``job.view().results`` as the units finish.
Keys start with the task and the dataset key of :func:`ui.live.data_key`, so
any page of any session showing the same data reuses the same work.

What a unit stores is small on purpose (vectors of length n and scalars, never
an n × n matrix): the registry keeps results for the life of the server.

One answer per (data, method, k, d, ε, seed) for every page: a finished fit is
kept in a process-wide store (:func:`stored_fit`), which the curves of
"Variance vs k" (:func:`path_job`) and the algorithms of "Compare"
(:func:`fit_jobs`) both read before computing, so a page never recomputes what
another page (or session) already has.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

from nspca_core import methods as registry
from nspca_core.certificates.schedule import (  # the band's schedule and cost model live in the core
    FLAT_TOL,
    LONG,
    TIGHTEN_FIRST_S,
    TIGHTEN_FULL_S,
    exact_cheap,
    flat_bounds,
    full_cost,
    tighten_plan,
)
from ui import bounds_store, jobs, live, uploads
from ui.compute import Unavailable, available_methods
from ui.fair_slots import FIRST
from ui.keys import digest

__all__ = ["SLOW_METHODS", "FITS_KEPT", "path_job", "certify_job", "fit_jobs", "components_jobs", "joint_bound_job",
           "best_x",
           "stored_fit", "best_stored_x", "certificate", "certified", "QUICK", "tighten_job", "best_certificate",
           "exact_cheap", "certify_one_job", "tighten_plan", "full_cost", "flat_bounds",
           "TIGHTEN_FIRST_S", "TIGHTEN_FULL_S", "FLAT_TOL", "LONG"]

# Methods of cost "slow" in the registry (they search a penalty for k nonzeros: tens of seconds
# on CBCL/MLL): heavy jobs.
SLOW_METHODS = registry.with_cost("slow")


def _check_method(method: str) -> None:
    if method not in available_methods():
        raise Unavailable(f"method {method!r} is not in nspca_core.api.METHODS={available_methods()}")


FITS_KEPT = 512  # finished fits kept for every page (each a vector of length n and scalars)
_FITS: OrderedDict = OrderedDict()
_FITS_LOCK = threading.Lock()


def _fit_key(dkey: str, method: str, k: int, d: int, eps: float, seed: int) -> tuple:
    return ("fit", dkey, method, int(k), int(d), float(eps), int(seed))


def stored_fit(dkey: str, method: str, k: int, *, d: int, eps: float, seed: int) -> dict | None:
    """The finished answer of ``method`` at ``k`` on the data ``dkey``, if any page computed it."""
    key = _fit_key(dkey, method, k, d, eps, seed)
    with _FITS_LOCK:
        out = _FITS.get(key)
        if out is not None:
            _FITS.move_to_end(key)
        return out


def _store_fit(key: tuple, value: dict) -> None:
    with _FITS_LOCK:
        _FITS[key] = value
        _FITS.move_to_end(key)
        while len(_FITS) > FITS_KEPT:
            _FITS.popitem(last=False)


def forget_data(dkey: str) -> int:
    """Drop the stored fits of the data ``dkey`` (its sessions ended); how many were dropped."""
    with _FITS_LOCK:
        gone = [key for key in _FITS if key[1] == dkey]
        for key in gone:
            del _FITS[key]
    return len(gone)


uploads.ON_FORGET.append(forget_data)  # an upload whose sessions all ended takes its fits along


def best_stored_x(dkey: str, k: int) -> np.ndarray | None:
    """The answer of largest variance at ``k`` on the data ``dkey`` among all stored fits
    (any method, d, ε, seed): the best known start of a certificate."""
    with _FITS_LOCK:
        found = [v for key, v in _FITS.items() if key[1] == dkey and key[3] == int(k)]
    return max(found, key=lambda v: v["variance"])["x"] if found else None


_IN_FLIGHT: dict = {}  # fit key -> _Flight, set when the one computation of it under way ends


class _Flight(threading.Event):
    """The one computation of a fit under way: set when it ends; ``waiters``: the jobs waiting for it."""

    def __init__(self):
        super().__init__()
        self.waiters: set = set()

    def wanted_first(self) -> bool:
        """Whether a page's first figure waits for this fit (then its unit does not pause, ui.pause)."""
        return any(job.rank() == FIRST for job in list(self.waiters))


def _claim(key: tuple, ctx) -> bool:
    """Single flight: True when this unit is to compute the fit ``key`` (nobody else is); else wait for
    the unit computing it to end (``ctx.check()`` between waits: Stop still stops) and return False."""
    with _FITS_LOCK:
        flight = _IN_FLIGHT.get(key)
        if flight is None:
            _IN_FLIGHT[key] = _Flight()
            return True
    job = getattr(ctx, "job", None)
    flight.waiters.add(job)
    try:
        while not flight.wait(0.05):
            ctx.check()
    finally:
        flight.waiters.discard(job)
    return False


def _fit(X, dkey, method, d, eps, seed, raw, k, ctx) -> dict:
    """One fit as a unit: from the store when a page already has it; when another page's job is computing
    it right now, its answer once done (single flight: two sessions or pages asking for the same fit at
    once compute it once); else computed and stored.  While a page's first figure waits for the fit, its
    unit does not pause for first figures (:mod:`ui.pause`): it is one."""
    key = _fit_key(dkey, method, k, d, eps, seed)
    while (hit := stored_fit(dkey, method, k, d=d, eps=eps, seed=seed)) is None:
        if _claim(key, ctx):
            break
    else:
        return hit
    job = getattr(ctx, "job", None)
    if job is not None:
        job.serves_first = _IN_FLIGHT[key].wanted_first
    try:
        out = ctx.run("ui.units.fit_unit", X, dkey, k=int(k), method=method, d=int(d), eps=float(eps),
                      seed=int(seed), raw=raw if method == "nmf" else None)
        _store_fit(key, out)
    finally:  # stored, failed or stopped: whoever waits goes on (and computes it, when it is not stored)
        if job is not None:
            job.serves_first = None
        with _FITS_LOCK:
            _IN_FLIGHT.pop(key).set()
    return out


def path_job(X: np.ndarray, dkey: str, method: str, ks: Sequence[int], *, d: int, eps: float,
             seed: int, raw: np.ndarray | None = None, title: str = ""):
    """``fit(X, k, method, certify=False)`` for every k in ``ks`` (units: k).

    Each unit is a dict ``x, support, variance (xᵀAx), lowrank (‖Vᵀx‖²),
    seconds, converged``.
    """
    _check_method(method)
    key = ("path", dkey, method, int(d), float(eps), int(seed))

    def work(k, ctx):
        return _fit(X, dkey, method, d, eps, seed, raw, k, ctx)

    return live.submit(key, title or f"{method} path", [int(k) for k in ks], work,
                       heavy=method in SLOW_METHODS)


def fit_jobs(X: np.ndarray, dkey: str, k: int, methods: Sequence[str], *, d: int, eps: float,
             seed: int, raw: np.ndarray | None = None, title: str = "") -> dict:
    """Every method at one k, each its own job (in parallel, one unit: k); ``{method: Job}``.

    Each unit is as in :func:`path_job` (and shared with it through the store).
    A method the core does not have fails its job with a clear message; the
    page asks for the available ones only.
    """
    out = {}
    for method in methods:
        key = ("fit", dkey, method, int(k), int(d), float(eps), int(seed))

        def work(kk, ctx, method=method):
            _check_method(method)
            return _fit(X, dkey, method, d, eps, seed, raw, kk, ctx)

        out[method] = live.submit(key, f"{method} {title}".strip(), [int(k)], work,
                                  heavy=method in SLOW_METHODS)
    return out


QUICK = "fast"  # the first pass of certificates: the core's cheap bounds (under a second per k on MLL)
QUICK_S = 3.0   # a quick certificate computing longer (CPU s) is abandoned, and so are those of larger k


def certify_job(X: np.ndarray, dkey: str, ks: Sequence[int], *,
                start: Callable[[int], np.ndarray | None] | None = None, title: str = "",
                store: bounds_store.BoundsStore | None = None):
    """Certificates for every k in ``ks``, in that order: a quick pass, then the full one.

    Units: first ``("fast", k)`` for every k — ``certify(X, k, x, effort="fast")``,
    the core's cheap bounds, so that the band is there within seconds — then
    ``k`` for every k — ``certify(X, k, x)`` at the default effort, which
    tightens it k by k.  A quick unit that computes more than :data:`QUICK_S`
    CPU seconds is abandoned (its value is None), and so are the quick units
    of larger k after it (the cost of the bounds grows with k: on MLL, 0.3 s at
    k = 220, over 4 minutes at k = 3,266); the full pass covers them.  Read a k's best
    certificate with :func:`certificate`.

    The start x of each certificate is the best answer at k any page has found
    when the unit starts (:func:`best_stored_x`), else ``start(k)`` (it only
    raises the certificate's lower bound; the upper bound does not depend on
    it, so the job is keyed by the data alone).  Each unit is a dict
    ``upper, lower, kind, optimal, probabilistic, x``.

    With a ``store`` (:mod:`ui.bounds_store`) every certificate is offered to it,
    and a unit whose effort (or a more thorough one) already ran at k — on any
    page, in any session, on an earlier visit — is not computed again: its value
    is what the store knows at k (``stored=True``).
    """
    key = ("certify", dkey)
    too_slow = [np.inf]  # quick units from this k up are skipped
    data = bounds_store.data_key(dkey)

    def work(unit, ctx):
        quick = isinstance(unit, tuple)
        k = int(unit[1] if quick else unit)
        effort = QUICK if quick else "auto"
        if store is not None and data is not None and store.ran(data, k, effort):
            return _stored(store, data, k)
        if quick and k >= too_slow[0]:
            return None
        x0 = _best_start(X, store, dkey, k)  # what any page found at k so far
        if x0 is None and start is not None:
            x0 = start(k)
        if not quick:
            return _offered(store, dkey, k, ctx.run("ui.units.certify_unit", X, dkey, k=k, x=x0), "auto")
        try:
            out = ctx.run("ui.units.certify_unit", X, dkey, k=k, x=x0, effort=QUICK, timeout=QUICK_S)
        except jobs.TimedOut:
            too_slow[0] = min(too_slow[0], k)
            return None
        return _offered(store, dkey, k, out, QUICK)

    ks = [int(k) for k in ks]
    # beside the curves, not what the page's first figure waits for: further work from its first unit
    return live.submit(key, title or "certificates", [(QUICK, k) for k in ks] + ks, work, heavy=True,
                       first_figure=False)


def certificate(results: dict, k: int) -> dict | None:
    """The best certificate at ``k`` among a certify job's results (see :func:`certify_job`).

    Both passes give valid upper bounds on the same optimum, so the smaller
    bound and the larger feasible value are kept (the full pass is usually
    tighter; the quick one is there first).  None when neither is done.
    """
    found = [c for c in (results.get(int(k)), results.get((QUICK, int(k)))) if c is not None]  # None: skipped
    if not found:
        return None
    best = min(found, key=lambda c: c["upper"])
    top = max(found, key=lambda c: c["lower"])
    return {**best, "lower": top["lower"], "x": top["x"], "optimal": any(c["optimal"] for c in found)}


def certified(results: dict, ks: Sequence[int]) -> tuple[int, int]:
    """How many of ``ks`` have a certificate (either pass), and how many the full one."""
    return (sum(certificate(results, k) is not None for k in ks), sum(int(k) in results for k in ks))


def certify_one_job(X: np.ndarray, dkey: str, k: int, x: np.ndarray, *, effort: str = "fast",
                    title: str = "", time_limit: float | None = None,
                    store: bounds_store.BoundsStore | None = None):
    """One certificate of a given answer ``x`` (the tour's button, the "full" refinement, a proof
    of optimality with ``effort="exact"`` and ``time_limit`` seconds): one unit, heavy.

    With a ``store``, the result is offered to it, and a k the store already knows to be
    optimal is not computed again (the value is the store's)."""
    key = ("certify-one", dkey, int(k), effort, digest(np.asarray(x)),
           None if time_limit is None else float(time_limit))
    data = bounds_store.data_key(dkey)

    def work(kk, ctx):
        if store is not None and data is not None and store.at(data, int(kk))["optimal"]:
            return _stored(store, data, int(kk))
        extra = {} if time_limit is None else {"time_limit": float(time_limit)}
        out = ctx.run("ui.units.certify_unit", X, dkey, k=int(kk), x=x, effort=effort, **extra)
        return _offered(store, dkey, int(kk), out, effort, time_limit=time_limit or 0.0)

    return live.submit(key, title or f"certificate at k = {k}", [int(k)], work, heavy=True)


# ------------------------------------------------------------------ proved bounds, kept and tightened
def _offered(store, dkey: str, k: int, out: dict | None, effort: str, time_limit: float = 0.0) -> dict | None:
    """Offer a certificate unit's result to the store (when there is one); the result, unchanged."""
    if store is not None and out is not None:
        bounds_store.offer_certificate(store, dkey, k, out, effort=effort, time_limit=time_limit)
    return out


def _stored(store: bounds_store.BoundsStore, data: bounds_store.DataKey, k: int) -> dict:
    """What the store knows at k (monotone envelope), as a certificate unit's dict."""
    at = store.at(data, k)
    fr = int(at["upper_from"])
    return dict(upper=float(at["upper"]), lower=float(at["lower"]),
                kind=(at["kind"] + ("" if fr in (-1, k) else f", from k = {fr}")) or "stored",
                optimal=bool(at["optimal"]), probabilistic=bool(at["probabilistic"]), x=at["x"], stored=True)


def _best_start(X: np.ndarray, store, dkey: str, k: int) -> np.ndarray | None:
    """The best known feasible point at k (largest variance): the store's (any k' <= k) or the
    stored fits' at k."""
    data = bounds_store.data_key(dkey)
    cands = [x for x in ((store.best_x(data, k) if store is not None and data is not None else None),
                         best_stored_x(dkey, k)) if x is not None]
    if len(cands) < 2:
        return cands[0] if cands else None
    return max(cands, key=lambda x: float(np.sum((X @ x) ** 2)))


def best_certificate(dkey: str, k: int, results: dict | None = None,
                     store: bounds_store.BoundsStore | None = None) -> dict | None:
    """The best certificate known at ``k``: a certify job's ``results`` (:func:`certificate`) and
    everything the store holds for the data (its monotone envelope over every stored k), the
    smaller bound and the larger feasible value; None when neither has one."""
    found = []
    if results is not None and (c := certificate(results, k)) is not None:
        found.append(c)
    data = bounds_store.data_key(dkey)
    if store is not None and data is not None:
        c = _stored(store, data, int(k))
        if np.isfinite(c["upper"]):
            found.append(c)
    if not found:
        return None
    best = min(found, key=lambda c: c["upper"])
    top = max(found, key=lambda c: c["lower"])
    opt = any(c["optimal"] for c in found) or bounds_store.closed(top["lower"], best["upper"])
    return {**best, "lower": top["lower"], "x": top["x"], "optimal": opt}


_TIGHTEN_LIMIT: dict = {}  # job key -> the time limit of its exact units (the page's widget, latest)


def tighten_job(X: np.ndarray, dkey: str, ks: Sequence[int], *, store: bounds_store.BoundsStore,
                time_limit: float, title: str = ""):
    """The band's bounds, tightened in the background (issue 28, item 4): a *background* job
    (:class:`ui.jobs.Job`: it gives the heavy slot to any other certificate that waits).

    Units (in the order of :func:`nspca_core.certificates.schedule.tighten_plan`): ``("full", k)`` — ``certify(X, k, x,
    effort="full")`` from the best known point, abandoned after :data:`TIGHTEN_FIRST_S` CPU seconds
    — at the largest k and every k whose bound is not flat, the cheapest first; ``("exact", k)`` —
    ``certify(..., effort="exact", time_limit=time_limit)`` — where :func:`exact_cheap`, loosest first; then
    ``("full", k, LONG)``, the same certificate abandoned after :data:`TIGHTEN_FULL_S` CPU seconds,
    where the first pass timed out and at the flat k.  Every result is offered to ``store``, which
    the page draws the band from (monotone envelope: a bound proved at one k also tightens the smaller
    ones).  A unit is skipped where the store knows k to be optimal or the same effort already ran
    there (at least as long, for "exact"; a first-pass "full" that finished, for a second-pass one);
    the exact proof stops itself at its time limit.  Each unit is a dict ``k, effort, improved``
    (the store's bound or point at k improved), ``before``, ``after`` (certified ratio at k),
    ``skipped`` (why nothing ran: "optimal", "ran", "timed out").

    Submitting again reorders the units still to run (by the band then); a changed ``time_limit``
    applies to the exact units not yet run.  The job remembers the band's ratios when it was first
    submitted (``job.start_ratio``, k -> ratio) for the page's "worst ratio a → b".  Returns None
    when ``dkey`` names no dataset.
    """
    data = bounds_store.data_key(dkey)
    if data is None:
        return None
    n = X.shape[1]
    ks = sorted({int(k) for k in ks})
    key = ("tighten", dkey)
    _TIGHTEN_LIMIT[key] = float(time_limit)
    band = store.band(data, ks)
    ratios = np.asarray(band["ratio"], float)
    units = tighten_plan(ks, band["upper"], ratios, n)

    def work(unit, ctx):
        effort, k = unit[0], int(unit[1])
        limit = _TIGHTEN_LIMIT.get(key, float(time_limit))
        at = store.at(data, k)
        out = dict(k=k, effort=effort, improved=False, before=float(at["ratio"]), after=float(at["ratio"]),
                   skipped="")
        if at["optimal"]:
            return {**out, "skipped": "optimal"}
        if store.ran(data, k, effort, limit if effort == "exact" else 0.0):
            return {**out, "skipped": "ran"}
        cap = TIGHTEN_FULL_S if unit[2:] == (LONG,) else TIGHTEN_FIRST_S
        extra = {"time_limit": limit} if effort == "exact" else {"timeout": cap}
        try:
            c = ctx.run("ui.units.certify_unit", X, dkey, k=k, x=_best_start(X, store, dkey, k), effort=effort,
                        **extra)
        except jobs.TimedOut:
            return {**out, "skipped": "timed out"}
        improved = bounds_store.offer_certificate(store, data, k, c, effort=effort,
                                                  time_limit=limit if effort == "exact" else 0.0)
        return {**out, "improved": bool(improved), "after": float(store.at(data, k)["ratio"])}

    job = live.submit(key, title or "tightening the band", units, work, background=True)
    start = getattr(job, "start_ratio", None)
    if start is None:
        job.start_ratio = dict(zip(ks, ratios.tolist()))
    else:
        for k, r in zip(ks, ratios.tolist()):
            start.setdefault(k, r)
    return job


def best_x(jobs_: Sequence, k) -> np.ndarray | None:
    """The answer of largest variance at unit ``k`` among the finished units of ``jobs_``."""
    best, arg = -np.inf, None
    for job in jobs_:
        r = job.view(touch=False).results.get(k)
        if r is not None and r["variance"] > best:
            best, arg = r["variance"], r["x"]
    return arg


def components_jobs(X: np.ndarray, dkey: str, strategies: Sequence[str], *, r: int, k: int, method: str,
                    d: int, eps: float, seed: int, title: str = "") -> dict:
    """``components(X, n_components=r, k=k, strategy=...)``, each strategy its own job (in
    parallel; one unit: the strategy); ``{strategy: Job}``.

    "quasi-orthogonal" uses EM (Sigg & Buhmann's deflation); the others ``method``.
    """
    out = {}
    for strategy in strategies:
        fixed = registry.STRATEGIES[strategy].method  # the strategy's own single-component method ("em"), if any
        base = fixed if fixed in registry.SINGLE else method
        key = ("components", dkey, strategy, int(r), int(k), base, int(d), float(eps), int(seed))

        def work(sg, ctx, base=base):
            return ctx.run("ui.units.components_unit", X, dkey, n_components=int(r), k=int(k), method=base,
                           strategy=sg, d=int(d), eps=float(eps), seed=int(seed))

        out[strategy] = live.submit(key, f"{strategy} {title}".strip(), [strategy], work)
    return out


def joint_bound_job(X: np.ndarray, dkey: str, k: int, counts: Sequence[int], *, title: str = ""):
    """The certified bound on the best total variance of c components with disjoint supports of at most
    ``k`` nonzeros, for each c in ``counts`` (units: c; heavy, one job per data and k for every session):
    ``{"upper", "kind"}`` (:func:`ui.units.joint_bound_unit`).  It does not depend on the strategy, and it
    is a branch and bound on large data (half a CPU second on MLL), so it runs beside the page, not in it."""
    key = ("joint-bound", dkey, int(k))

    def work(c, ctx):
        return ctx.run("ui.units.joint_bound_unit", X, dkey, k=int(k), n_components=int(c))

    return live.submit(key, title or f"bound on {', '.join(map(str, counts))} components",
                       [int(c) for c in counts], work, heavy=True, first_figure=False)
