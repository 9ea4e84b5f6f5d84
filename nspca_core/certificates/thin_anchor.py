"""S's eager anchored bound in the thin route (:func:`.route.certify_thin`) with its top test moved.

:func:`.dual._anchored` (``top_first``) first tests ``top = lower / _DNN_SKIP_AT`` from the all-ones start, only to
learn whether anything is proved, then the test at ``1.001 lower`` (from the all-ones start too) and the bisection in
``[1.001 lower, top]`` (warm-started by the failures below each test).  None of those reads the top test's ratios.
Here the test at ``1.001 lower`` comes first; where it holds (a near-optimal point) the top test is not run at all,
and where it fails the top test starts from its ratios (valid at ``top``, above it): a few row-sum iterations instead
of ~11.  The bisection then as there, the same call.  Issue 39: on 60 x 2,500 genes the cold top test was 13% of
``certify_path``'s CPU (271 tests of ~11 row-sum iterations each, one per screen and k).

Before that search, a Collatz–Wielandt vector (:func:`collatz`): the plain test's threshold is the growth rate of the
row-sum map ``y -> A_ll y_l + s_l(y)``, and a few power steps on it find a vector proving a tau within ``rel_tol / 4``
of it (the search above runs only where that does not settle, where the point is near-optimal, or above the top: see
:func:`anchored`).  Issue 39 (helper t1g37): on 72 x 1,000 genes at k = 50..80 the search's tests near the threshold
gave up and its bound stood 0.8-1.5e-3 above it (6-11 ms, ~60 row-sum passes over S's 100-162 rows); collatz settles
in 9 passes (0.7-1.5 ms) within 2.5e-4.  Its bound is the split's aim there, the aimed refinements' first steps finer
(:data:`.single._AIM_STEP_CW`, where ``light_S``'s certificate says ``info["collatz"]``).

Entered by :func:`top_last` (a block: one thin certificate), read by :func:`.coupled.light_S` (:func:`on`); nothing
is kept after the block, and outside it every route runs :func:`.dual._anchored` as before."""

from __future__ import annotations

import contextlib
import contextvars

import numpy as np

from .anchor import AnchorRows, _gaps, anchored_bisection, anchored_rowsum_test
from .anchor_sums import _plain_sums
from .dual import _NARROW_REL, _anchored, _anchored_at

_ON: contextvars.ContextVar = contextvars.ContextVar("thin_anchor_top_last", default=False)


@contextlib.contextmanager
def top_last():
    """A block (:func:`.route.certify_thin`) whose eager light S bounds (:func:`.coupled.light_S`) search with the
    top test moved (:func:`anchored`)."""
    token = _ON.set(True)
    try:
        yield
    finally:
        _ON.reset(token)


def on() -> bool:
    """Whether a :func:`top_last` block is open."""
    return _ON.get()


_EPS = np.finfo(float).eps
# collatz: at most this many row-sum evaluations (g72x1000 / g48x1800 / g60x2500 k = 50..200: 6-12 settle it)
_CW_ITERS = 24


def anchored(A: np.ndarray, k: int, lower: float, best: float, rel_tol: float, top_ratio: float,
             counts: dict | None = None) -> float | None:
    """S's eager anchored bound in the thin route: :func:`collatz`'s where it settles below ``top = lower /
    top_ratio`` (its bound within ``rel_tol / 4`` of the plain test's threshold, or of the feasible value ``lower``;
    where it is at most ``1.001 lower``, within ``min(rel_tol, _NARROW_REL)`` of one of them where the steps get
    there: the former search's resolutions there), else :func:`top_moved` (the search as before; ``counts`` its, and
    ``collatz`` where collatz's bound is returned: the search's resolution there).  Returns the bound, or None where
    nothing below ``best`` is proved.

    Never more than ``rel_tol / 4`` above the search's bound: every tau that search proves is a test's, at least
    ``lower`` (OPT is) and at least the threshold (no test proves below it: where some ``w > 0`` has ``G(w) >= w``,
    the iterates from ratios at least w stay at least w, and w's largest entry 1 leaves an anchor), which is at least
    collatz's lower end.  Often below it: the search's tests near the threshold give up (48 x 1,800 genes k =
    50..150: its test at ``1.001 lower`` gave up above a threshold ~1e-5 above ``lower``, its bound 1.0018 lower).
    Where the search would stop at a failed top test (None), the threshold is above ``top``: here collatz's bound is
    above ``top`` too, and the search runs (the same None)."""
    top, rows = lower / top_ratio, None
    if np.isfinite(top) and top > 0 and lower > 0 and lower * 1.001 < top:
        rows = AnchorRows(A, k)
        cw = collatz(rows, rel_tol / 4, fine=(lower * 1.001, min(rel_tol, _NARROW_REL)), floor=lower)
        if cw is not None and cw[0] < top:
            if counts is not None:  # (the former search's resolution there: .coupled.light_S's aim)
                counts["collatz"] = rel_tol if cw[0] > lower * 1.001 else min(rel_tol, _NARROW_REL)
            return cw[0] if cw[0] < best else None
    return top_moved(A, k, lower, best, rel_tol, top_ratio, counts, rows=rows)


def collatz(rows: AnchorRows, rel: float, iters: int | None = None, fine: tuple[float, float] | None = None,
            floor: float = -np.inf) -> tuple[float, float] | None:
    """A proved bound on OPT at ``rows.k`` by one Collatz–Wielandt vector of the plain anchored test's row sums, and
    the threshold's lower end: ``(tau, low)``, or None where ``iters`` (default :data:`_CW_ITERS`) power steps do
    not bring the two within ``rel`` (relative), or the vector found proves nothing.  ``fine = (below, rel')``:
    once the upper end is at most ``below``, the steps go on to ``rel'``, or until the upper end moves less than
    ``rel'`` in a step (within ``rel`` of the lower end).  ``floor``: a value known to be at most OPT (a feasible
    point's), a lower end too (no proved bound is below it): near-optimal points' smallest ratio, on rows of tiny
    entries, rose over ~20-40 steps while the largest settled in 3 (60 x 2,500 genes k = 100 / 150).

    The power steps: ``u <- (d u + s(u)) / max``, from the all-ones (``d = A_ll``, ``s``: the test's row sums,
    :func:`.anchor_sums._plain_sums`, inflated as the test inflates them; the largest entry of u is 1 at every
    step); at each u the ratios ``d_l + s_l(u) / u_l``, whose largest is an upper end and whose smallest a lower end
    of the map's growth rate (Collatz–Wielandt: for a monotone, positively homogeneous map, ``min_l F(u)_l / u_l <=
    r(F) <= max_l F(u)_l / u_l`` at every ``u > 0``).  ``tau``: the smallest upper end, rounded up, proved by its
    own u (below); ``low``: the largest lower end (or ``floor``).

    Proof of tau.  With ``gap = tau - A_ll`` rounded down (:func:`.anchor._gaps`) positive and ``G(u) = s(u) (1 +
    (k + 4) eps) / gap < u`` at a u with ``0 < u <= 1`` (checked in floats, the test's own G: an upper bound of the
    exact ``T_l(y) = t_l(y) / (tau - A_ll)``, t_l the exact sum of the k - 1 largest ``(A_lm)_+ y_m``, m != l, for
    every ``0 <= y <= 1``, :func:`.anchor.anchored_rowsum_test`): suppose ``OPT > tau``, x optimal, j its largest
    entry, ``rho = x / x_j``.  Stationarity gives ``rho <= T(rho)`` (:func:`.anchor.anchored_rowsum_test`), and
    ``rho <= 1 <= c u`` with ``c = 1 / min u``.  T is monotone and homogeneous and ``T(u) <= G(u) <= lam u`` for some
    ``lam < 1``, so ``rho <= T(c lam^s u) <= c lam^(s+1) u`` for every s (induction): ``rho = 0``, against ``rho_j =
    1``.  So ``OPT <= tau`` (:mod:`.thin_contract`'s argument with the all-ones start's ratios, ``r = 1 >= rho``)."""
    n, d = rows.n, rows.diag
    inflate = 1.0 + (rows.k + 4) * _EPS
    if rows.m == 0 or n == 0:
        return None
    u = np.ones(n)
    best, low, held = np.inf, floor, None
    for _ in range(_CW_ITERS if iters is None else iters):
        s = _plain_sums(rows, u, whole=True)  # (whole rows: u is not monotone; the narrowed lists left as they are)
        s *= inflate
        ratio = d + s / u
        hi, lo = float(ratio.max()), float(ratio.min())
        settled = fine is not None and hi >= best * (1.0 - fine[1])  # (the upper end moved less than rel')
        if hi < best:
            best, held = hi, (u, s)
        low = max(low, lo)
        near = fine is not None and best <= fine[0]
        if not np.isfinite(best) or best <= low * (1.0 + (fine[1] if near else rel)) or (
                near and settled and best <= low * (1.0 + rel)):
            break
        v = d * u + s
        top = float(v.max())
        if not (np.isfinite(top) and top > 0):
            return None
        u = v / top  # (its largest entry exactly 1)
        if not (u > 0).all():
            return None
    if held is None or not (np.isfinite(best) and best <= low * (1.0 + rel)):
        return None
    u, s = held
    tau = best * (1.0 + 16 * _EPS) + 16 * _EPS * float(np.abs(d).max())  # (the ratios' own rounding, above)
    gap = _gaps(rows, tau)
    if not ((gap > 0).all() and (u > 0).all() and float(u.max()) <= 1.0 and (s / gap < u).all()):
        return None
    return tau, low


def top_moved(A: np.ndarray, k: int, lower: float, best: float, rel_tol: float, top_ratio: float,
              counts: dict | None = None, rows: AnchorRows | None = None) -> float | None:
    """:func:`.dual._anchored` with ``top_first`` (``top = lower / top_ratio``), its top test moved: the test at
    ``1.001 lower`` from the all-ones start first; where it holds, the bisection below it (:func:`.dual._anchored_at`,
    the same call) and no top test; where it fails, ``top`` tested from its ratios, None where that fails, else the
    bisection in ``[1.001 lower, top]`` from the same ratios (:func:`.anchor.anchored_bisection`, the same call as
    there).  Returns the bound, or None where nothing below ``best`` is proved.  ``counts`` (a dict, optional): gets
    ``top_tests``, the top tests run (0 or 1).  ``rows``: A's :class:`.anchor.AnchorRows` at k made already
    (:func:`anchored`'s: :func:`collatz` reads their whole rows, no narrowed lists nor first sums kept: the same
    floats as fresh ones).

    Valid: every value returned is a tau some test proved (:func:`.anchor.anchored_rowsum_test`), each test started
    from the all-ones ratios or a failure's below it.  Every test but the top one is ``dual._anchored``'s own call
    with its own start, and none of them reads the top test's ratios, so where both top tests hold (and where the
    test at ``1.001 lower`` holds) both return the same bound.  Where the top test fails, two tests ran where
    ``dual._anchored`` ran one (the top test alone decides that nothing is proved)."""
    top = lower / top_ratio
    if not (np.isfinite(top) and top > 0 and lower > 0 and lower * 1.001 < top):
        return _anchored(A, k, lower, best, rel_tol=rel_tol, top_ratio=top_ratio, top_first=True)
    state = {"rows": AnchorRows(A, k) if rows is None else rows, "tau": -np.inf, "r": None}
    tb = _anchored_at(state, lower, lower * 1.001, rel_tol)
    if tb is None:
        if counts is not None:
            counts["top_tests"] = counts.get("top_tests", 0) + 1
        if not anchored_rowsum_test(state["rows"], top, state["r"])[0]:
            return None
        tb = anchored_bisection(state["rows"], lower, top, rel_tol, steps=12, tau_lo=state["tau"], r_lo=state["r"],
                                narrow=min(rel_tol, _NARROW_REL))[0]
    return tb if tb < best else None
