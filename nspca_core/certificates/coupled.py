"""The sparsity-coupled split bound (:func:`.single._certify_split`): ``max_j B_S(k - j) + B_T(j)``
over the screened set S and the rest T, its terms sharpened where they bind (anchored row sums at a
sparsity of S, the cross term of S and T: :mod:`.cross`)."""

from __future__ import annotations

import copy

import numpy as np

from .._common.rank1 import rank1_point
from ..operators.cov import Cov
from .dnn import dnn_tangent
from ..result import Certificate
from ._settings import _EFFORT, _EPS, _DNN_PASSES, anchor_affordable, anchor_cost, anchor_width
from .budget import fits, step
from .anchor import AnchorRows, anchored_rowsum_test
from .cross import coupled_terms
from .dual import _anchored
from .lower import _ascent_many

# the cross term only up to this k: it keeps k values for each feature of the rest T
_CROSS_MAX_K = 256


# the coupled bound's binding sparsities of S refined by the anchored row sums while their counted
# cost (_settings.anchor_cost) stays within this many "auto" DNN runs on S (was: at most 64
# refinements, each at i <= 64; 64 refinements near i = k = 50 count as about 30 runs on S's 600)
_COUPLED_REFINE_RUNS = 30
_COUPLED_REL = 1e-3  # their resolution (one term of a sum; 5e-5 costs twice the tests)

# "auto" / "fast" (``aim`` of :func:`_coupled_refined`): the refinements aim every binding term at the
# bound that certifies this ratio (or at the largest term no refinement can lower, when that is higher)
# with ONE anchored test each at the value that meets the aim, not a bisection to _COUPLED_REL per
# sparsity (issue 39: dlbcl-shaped k = 100 walked 41 sparsities at ~7 tests each, 3.1 CPU s); where a
# test fails, that term stands and the goal rises to it.  0.975 (dual._DNN_SKIP_AT): the "auto" walk
# stopped at the first ratio >= 0.97, anywhere in 0.970..0.975 on gene data
_COUPLED_AIM = 0.975
# no test where the value that meets the goal is within this of a feasible value at that sparsity
# (S's answer cut to its i largest entries): the anchored bound proves ~0.2% above the optimum at best
_AIM_SLACK = 2e-3
# (nor where the term is within _AIM_SLACK of the first goal: a ratio 0.002 at most; and none after a
# test that failed _AIM_WEAK above a feasible value: MLL k = 50's terms 0.05% above the goal at
# i = 47..49 failed 7% above one, 12 tests, a fifth of the certificate)
_AIM_WEAK = 0.05
_AIM_TESTS = 2
_AIM_PATIENCE = 30
# one test covers the sparsities below i whose goal values stay this far above i's feasible value (the
# anchored bound proves ~0.4% above the optimum on gene data: dlbcl-shaped k = 100, i = 85..92)
_AIM_STRIDE = 1e-2


def _coupled_refined(covS: Cov, certS: Certificate, stS, kS: int, BT: np.ndarray, k: int,
                     pair: float | None, make_cross=None, lower: float = -np.inf,
                     stop: float = 1.0, budget=None, aim: float | None = None) -> tuple[float, dict, np.ndarray | None]:
    """:func:`_coupled`, sharpened until ``lower >= stop x bound`` (or nothing more to sharpen).

    First the plain coupling; then, for ``k <= _CROSS_MAX_K``, the cross term of S and T
    (``make_cross()``: :func:`.cross.cross_table`, see :func:`_coupled`); then ``B_S(i)`` where it
    binds: while the maximum over j of the terms sits at an ``i = k - j`` in ``3..kS - 1`` whose
    ``B_S(i)`` is only the DNN's tangent (weak at small sparsity, where the anchored row sums are
    strong), the anchored row-sum bound at sparsity i on ``A_SS`` (:func:`.dual._anchored`, a proof
    at i: :func:`nspca_core.certificates.anchor.anchored_rowsum_test`) replaces it, while the refinements'
    counted cost stays within :data:`_COUPLED_REFINE_RUNS` DNN runs on S (no sparsity limit).
    ``aim`` (a ratio, "auto"): :func:`_aimed` instead of the walk (one test per sparsity).
    Valid as :func:`_coupled` is: each ``B_S(i)``
    stays an upper bound on S's optimum at sparsity i.  On a 78 x 7,600 gene matrix at k = 10..50
    the rest T added 3.5-19% to a screened bound within 1.5% of the answer: the tangent at ``k - 1``
    was the loose term.  Returns ``(bound, {i: B_S(i)}, C)``: the sharpened values and the cross
    table (None when not computed), for the path's bounds at other k (``inf`` at a sparsity tried
    where nothing was proved).  ``budget``
    (:class:`.budget.Budget`): the cross table and each refinement only when it fits."""
    sharper: dict[int, float] = {}
    dS = covS.diag()
    val, i = _coupled(certS, stS, dS, kS, BT, k, pair, argmax=True)
    if lower >= stop * val or certS.x is None or BT.size <= 1 or k > _CROSS_MAX_K or i >= k:
        return val, sharper, None  # (i = k: S's own bound binds, nothing of T to sharpen)
    nS, nT = dS.size, BT.size
    cross = None
    if make_cross is not None and fits(budget, "rest", float(nS) * nT * max(k, 16)):
        with step(budget, "rest", float(nS) * nT * max(k, 16)):
            cross = make_cross()
    if aim is not None and budget is None:
        val = _aimed(covS, certS, stS, kS, BT, k, pair, cross, lower, aim, sharper)
        return val, sharper, cross
    tried: set[int] = set()
    cfg = _EFFORT["auto"]
    runs = cfg["iters"] + cfg["cut_rounds"] * cfg["cut_iters"]
    allowance = _COUPLED_REFINE_RUNS * runs * _DNN_PASSES * float(nS) ** 2
    spent = 0.0
    while True:
        val, i = _coupled(certS, stS, dS, kS, BT, k, pair, sharper, argmax=True, cross=cross)
        if (lower >= stop * val or i in tried or not 3 <= i < kS or spent + anchor_cost(nS, i) > allowance
                or not anchor_affordable(nS, i, runs)
                or not fits(budget, "anchored", float(nS) ** 2 * max(i, 8))):
            return val, sharper, cross
        tried.add(i)
        spent += anchor_cost(nS, i)
        with step(budget, "anchored", float(nS) ** 2 * max(i, 8)):
            sharper[i] = _bisected(covS, certS, stS, dS, kS, pair, sharper, i)


def _bisected(covS: Cov, certS: Certificate, stS, dS: np.ndarray, kS: int, pair, sharper: dict, i: int) -> float:
    """The anchored bound at sparsity i on ``A_SS`` by bisection to :data:`_COUPLED_REL` (``inf``
    when nothing below the current ``B_S(i)`` is proved).  A feasible value at i opens its bracket:
    S's answer cut to its i largest entries, then the ascent at sparsity i."""
    _, lower_i = _ascent_many(covS, i, rank1_point(np.asarray(certS.x, dtype=float), i)[:, None])
    current = _coupled_bs(certS, stS, dS, kS, pair, sharper)[i]
    tb = _anchored(covS.dense(), i, float(lower_i), current, rel_tol=_COUPLED_REL) if lower_i > 0 else None
    # (inf: tried, nothing proved; a path charges the test's counted cost: path_large.run_charge)
    return tb if tb is not None else np.inf


def _bisect_term(covS: Cov, certS: Certificate, stS, dS, kS: int, pair, sharper: dict, i: int, BT, k: int,
                 cross) -> float:
    """``sharper[i]`` by the walk's bisection (:func:`_bisected`); returns the coupled term at i after it."""
    sharper[i] = _bisected(covS, certS, stS, dS, kS, pair, sharper, i)
    vals, iis = _terms(_coupled_bs(certS, stS, dS, kS, pair, sharper), BT, k, kS, cross)
    return float(vals[iis == i].max())


def _terms(BS: np.ndarray, BT: np.ndarray, k: int, kS: int, cross) -> tuple[np.ndarray, np.ndarray]:
    """The coupled bound's terms (unrounded) and their sparsities ``i = k - j`` of S, as :func:`_coupled`."""
    j = np.arange(BT.size)
    ok = (k - j >= 0) & (k - j <= kS)
    i = k - j[ok]
    a, b = BS[i], BT[j[ok]]
    if cross is None:
        return a + b, i
    return coupled_terms(a, b, cross[np.minimum(i, cross.shape[0] - 1), np.minimum(j[ok], cross.shape[1] - 1)]), i


def _meets(goal: float, b: float, c: float | None) -> float:
    """The largest ``a`` whose coupled term with ``b`` (and cross bound c) is at most ``goal``
    (before rounding): ``a + b <= goal`` always suffices, and ``lambda_max([[a, c], [c, b]]) <= goal``
    when ``(goal - a)(goal - b) >= c^2``.  Only chooses where to test: the bound is what is proved."""
    if b >= goal:
        return -np.inf
    a = goal - b
    if c is not None:
        a = max(a, goal - c * c / (goal - b))
    return a * (1 - 64 * _EPS)


def _aimed(covS: Cov, certS: Certificate, stS, kS: int, BT: np.ndarray, k: int, pair, cross, lower: float,
           aim: float, sharper: dict) -> float:
    """The refinements of :func:`_coupled_refined` aimed at one goal (``aim``: a ratio): ``goal =
    max(lower / aim, the largest term no refinement can lower)``; from the largest sparsity down,
    each i whose term is above the goal gets ONE anchored test at the ``B_S(i)`` that brings its term
    to the goal (:func:`_meets`): proved, that value is ``B_S(i)``; failed (or hopeless: the value is
    within :data:`_AIM_SLACK` of a feasible one at i, or the term within it of the first goal), i's
    term stands and the goal rises to it; no more tests after one that failed far above a feasible
    value (:data:`_AIM_WEAK`).  The same counted cost allowance as the walk.  Fills ``sharper``;
    returns the coupled bound."""
    dS = covS.diag()
    nS = dS.size
    cfg = _EFFORT["auto"]
    runs = cfg["iters"] + cfg["cut_rounds"] * cfg["cut_iters"]
    allowance = _COUPLED_REFINE_RUNS * runs * _DNN_PASSES * float(nS) ** 2
    spent = 0.0

    def refinable(i):
        return 3 <= i < kS and anchor_affordable(nS, i, runs)

    BS = _coupled_bs(certS, stS, dS, kS, pair, sharper)
    vals, iis = _terms(BS, BT, k, kS, cross)
    fixed = [v for v, i in zip(vals, iis) if not refinable(int(i))]
    goal = goal0 = max([lower / aim] + fixed)
    wide = None
    AS, xS = covS.dense(), np.asarray(certS.x, dtype=float)
    tried: set[int] = set()
    while True:
        BS = _coupled_bs(certS, stS, dS, kS, pair, sharper)
        vals, iis = _terms(BS, BT, k, kS, cross)
        over = [int(i) for v, i in zip(vals, iis) if v > goal and int(i) not in tried and refinable(int(i))]
        if not over:
            break
        # the largest term first: where its test fails, that term is the bound and no other test can
        # lower it (dlbcl-shaped k = 200: by sparsity, 79 sparsities and 292 tests, 36 CPU s, for the
        # bound the walk proves in one; by term the first failure ends the refinements, as the walk's)
        term_at = {int(ii): float(v) for v, ii in zip(vals, iis)}
        i = max(over, key=lambda ii: (term_at[ii], ii))
        if spent + anchor_cost(nS, i) > allowance:
            break
        tried.add(i)
        spent += anchor_cost(nS, i)
        j = k - i
        c = None if cross is None else float(cross[min(i, cross.shape[0] - 1), min(j, cross.shape[1] - 1)])
        a = _meets(goal, float(BT[j]), c)
        term = float(vals[iis == i].max())
        low = _truncated(AS, xS, i)
        if term <= goal0 * (1 + _AIM_SLACK):
            goal = max(goal, term)  # (within the slack of the first goal: this term is the goal now)
            continue
        if not 0 < a < BS[i] or a <= (1 + _AIM_SLACK) * low:
            # (no test can meet the goal at the largest term: the walk's bisection proves what it
            # can there, and that term is the goal)
            goal = max(goal, _bisect_term(covS, certS, stS, dS, kS, pair, sharper, i, BT, k, cross))
            continue
        if wide is None:  # one candidate list for every i (the widest: at the largest i that can be over)
            wide = AnchorRows(AS, max(over))
        rows = _rows_at(wide, i)  # (narrowed to i)
        # far above a feasible value at i, one test at i can meet the goal at the sparsities below
        # too (B_S(i') <= B_S(i) for i' <= i): at the smallest of their goal values, while that stays
        # _AIM_STRIDE above the feasible value
        reach = a
        for i2 in sorted((i2 for i2 in over if i2 < i), reverse=True):
            c2 = None if cross is None else float(cross[min(i2, cross.shape[0] - 1), min(k - i2, cross.shape[1] - 1)])
            a2 = min(reach, _meets(goal, float(BT[k - i2]), c2))
            if a2 < (1 + _AIM_STRIDE) * low:
                break
            reach = a2
        if reach < a and _proved(rows, reach):
            sharper[i] = reach
        elif _proved(rows, a):
            sharper[i] = a
        elif a >= (1 + _AIM_WEAK) * low:
            sharper[i] = np.inf  # (tried: a path charges the test's counted cost, path_large.run_charge)
            goal = max(goal, term)
            break  # (the anchored bound is weak at these sparsities: MLL k = 50, i = 47..49)
        else:  # the largest term cannot meet the goal: the walk's bisection proves what it can there,
            # and that term is the goal (dlbcl-shaped k = 150: 0.9502 without, 0.9531 by the walk)
            goal = max(goal, _bisect_term(covS, certS, stS, dS, kS, pair, sharper, i, BT, k, cross))
    return _coupled(certS, stS, dS, kS, BT, k, pair, sharper, cross=cross)


def _proved(rows: AnchorRows, tau: float) -> bool:
    """The anchored row-sum test at ``tau``, continued from its own ratios when it gives up (they
    bound an optimal x's under the same hypothesis ``OPT > tau``: :func:`.anchor.anchored_rowsum_test`),
    at most :data:`_AIM_TESTS` times, with a patience of :data:`_AIM_PATIENCE`: a cold test near the
    optimum gives up at the default 10 where the bisection's warm tests go on (dlbcl-shaped k = 100,
    i = 71..92, 1.003..1.01 x a feasible value: every test gave up at 10 in ~20 ms, every one held at
    30 in 18..48 ms)."""
    r = None
    for _ in range(_AIM_TESTS):
        ok, r = anchored_rowsum_test(rows, tau, r, patience=_AIM_PATIENCE)
        if ok:
            return True
    return False


def _truncated(AS: np.ndarray, x: np.ndarray, i: int) -> float:
    """A feasible value at sparsity i on S: ``x`` cut to its i largest entries (normalized)."""
    y = rank1_point(x, i)
    idx = np.flatnonzero(y)
    return float(y[idx] @ AS[np.ix_(idx, idx)] @ y[idx])


def _rows_at(rows: AnchorRows, i: int) -> AnchorRows:
    """``rows`` (built at a sparsity ``>= i``) as candidate lists of sparsity i, the ``i - 1``
    largest summed: the same kept entries and caps (every entry not kept is at most its row's cap,
    whatever the sparsity), or, when they are wider than 5/4 of sparsity i's own width
    (``_settings.anchor_width``; the tests' cost), each row's widest part: its entries dropped are
    at most the new cap, the largest of them and the old cap (the entries never kept are at most
    the old cap).  Valid candidate lists either way (:class:`.anchor.AnchorRows`)."""
    out = copy.copy(rows)
    out.k, out.m = int(i), max(int(i) - 1, 0)
    w = max(anchor_width(rows.n, i), out.m)
    L = rows.idx.shape[1]
    if 4 * L > 5 * w and w < L:
        part = np.argpartition(-rows.vals, w - 1, axis=1)
        keep, drop = part[:, :w], part[:, w:]
        at = np.arange(rows.n)[:, None]
        out.idx, out.vals = rows.idx[at, keep], rows.vals[at, keep]
        out.cap = np.maximum(rows.cap, rows.vals[at, drop].max(axis=1))
    return out


def _coupled_bs(certS: Certificate, stS, dS: np.ndarray, kS: int, pair: float | None = None,
                sharper: dict | None = None) -> np.ndarray:
    """``B_S(i)`` for ``i = 0..kS`` as :func:`_coupled` uses them (then made nonincreasing toward
    smaller i: a bound at a larger sparsity holds at a smaller one)."""
    nS = dS.size
    BS = np.full(kS + 1, float(certS.upper_bound))
    BS[0] = 0.0
    if pair is not None and kS >= 2:
        BS[2] = min(BS[2], pair)
    # lambda_max(A_JJ) <= tr(A_JJ) <= the sum of the i largest variances in S (exact at i = 1)
    BS[1:] = np.minimum(BS[1:], np.cumsum(-np.sort(-dS)[:kS]) * (1 + 4 * dS.size * _EPS))
    lam = (certS.info.get("dnn") or {}).get("lam")
    if stS is not None and lam is not None and kS >= 1:
        BS[1:] = np.minimum(BS[1:], dnn_tangent(float(lam), stS, nS, np.arange(1, kS + 1)))
    for i, v in (sharper or {}).items():
        if 1 <= i <= kS:
            BS[i] = min(BS[i], v)
    return np.minimum.accumulate(BS[::-1])[::-1]


def _coupled(certS: Certificate, stS, dS: np.ndarray, kS: int, BT: np.ndarray, k: int,
             pair: float | None = None, sharper: dict | None = None, argmax: bool = False,
             cross: np.ndarray | None = None):
    """``max_{j} B_S(k - j) + B_T(j)`` of :func:`_certify_split` (rounded up), ``B_S(i) =
    min(B_S(kS), DNN tangent at i, sum of the i largest variances dS, sharper[i])`` for
    ``1 <= i <= kS`` (:func:`_coupled_bs`), ``B_S(0) = 0``, and ``B_S(2) <= pair`` (the exact
    k = 2 optimum on S, rounded up, when given); ``BT[j]`` for ``j = 0..min(k, |T|)``.
    ``argmax``: also return the sparsity ``i = k - j`` of S where the maximum sits.  ``cross``
    (``C[i, j]``, :func:`.cross.cross_table`): each term is ``lambda_max([[B_S(i), c], [c, B_T(j)]])``
    with ``c = min(C[i, j], sqrt(B_S(i) B_T(j)))`` instead of the sum (proof in :mod:`.cross`; the
    term is nondecreasing in i and j as the sum is, so ``i = k - j`` still dominates)."""
    BS = _coupled_bs(certS, stS, dS, kS, pair, sharper)
    j = np.arange(BT.size)
    ok = (k - j >= 0) & (k - j <= kS)
    if not ok.any():
        return (np.inf, -1) if argmax else np.inf
    i = np.clip(k - j[ok], 0, kS)
    a, b = BS[i], BT[j[ok]]
    if cross is None:
        vals = a + b
    else:
        vals = coupled_terms(a, b, cross[np.minimum(i, cross.shape[0] - 1), np.minimum(j[ok], cross.shape[1] - 1)])
    val = float(vals.max()) * (1 + 4 * _EPS)
    return (val, int(k - j[ok][int(np.argmax(vals))])) if argmax else val
