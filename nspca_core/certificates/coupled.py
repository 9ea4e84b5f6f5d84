"""The sparsity-coupled split bound (:func:`.single._certify_split`): ``max_j B_S(k - j) + B_T(j)``
over the screened set S and the rest T, its terms sharpened where they bind (anchored row sums at a
sparsity of S, the cross term of S and T: :mod:`.cross`)."""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from .._common.rank1 import rank1_point
from ..operators.cov import Cov
from .dnn import dnn_tangent
from ..result import Certificate
from . import _settings as _S
from . import thin_anchor
from ._settings import _EFFORT, _EPS, _DNN_PASSES, anchor_affordable, anchor_cost, anchor_ok
from .budget import fits, step
from .anchor import AnchorRows, anchored_bisection, anchored_joint_test, anchored_rowsum_test, joint_blockers
from .cross import cols_first, coupled_terms, cross_table
from .bounds import _rest_curve, _rest_spectrum
from .cheap import _finish, _variances_bound
from .dual import _ANCHOR_REL, _DNN_SKIP_AT, _NARROW_REL, _anchored, _forecast_fails, top_test
from .lower import _ascent_many
from .split_point import _lambda_S, _screened, _split_lower  # noqa: F401  (re-exported: single.py)
from .aim_terms import _meets, _terms, _terms_at, _truncated_all  # noqa: F401  (re-exported)

# (the cross term at every k: until the fourteenth round only up to k = 256, a limit from when its table kept k values
# for each feature of the rest T; it keeps |S| x k running tops now, :func:`.cross.cross_table`.  At k = 257 the
# golub-shaped one-k certificate fell 0.9655 -> 0.8598 and the dlbcl-shaped 0.9693 -> 0.8789 as the limit was crossed:
# the cliff issue 39's target 2 forbids.  Its counted cost, |S| |T| max(k, 16), stays charged to an exact-mode budget)


# the coupled bound's binding sparsities of S refined by the anchored row sums while their counted
# cost (_settings.anchor_cost) stays within this many "auto" DNN runs on S (was: at most 64
# refinements, each at i <= 64; 64 refinements near i = k = 50 count as about 30 runs on S's 600)
_COUPLED_REFINE_RUNS = 30
_COUPLED_REL = 1e-3  # their resolution (one term of a sum; 5e-5 costs twice the tests)

# "auto" / "fast" (``aim`` of :func:`_coupled_refined`): the refinements aim the coupled bound at the
# value that certifies this ratio (or at the largest term no refinement can lower, when that is higher),
# every binding term tested at once (:func:`_aimed`), not a bisection to _COUPLED_REL per sparsity
# (issue 39: dlbcl-shaped k = 100 walked 41 sparsities at ~7 tests each, 3.1 CPU s).  0.975
# (dual._DNN_SKIP_AT): the "auto" walk stopped at the first ratio >= 0.97, anywhere in 0.970..0.975
_COUPLED_AIM = 0.975
# S's ratio counts as below the aim (:func:`split_cross`'s column part first) only this far below it
_AIM_MARGIN = 1e-9
# no term asked below this above a feasible value at its sparsity (S's answer cut to its i largest
# entries): the anchored bound proves ~0.2% above the optimum at best; terms within it of the goal stand
_AIM_SLACK = 2e-3
# the joint tests' patience (:func:`.anchor.row_fixpoint`): a cold test near the optimum gives up at the
# default 10 where warm ones go on (dlbcl-shaped k = 100, i = 71..92: every test held at 30)
_AIM_PATIENCE = 30
# a term whose hypothesis blocked a failed joint test asked this far above a feasible value stands (no
# more tests for it: the anchored bound is weak there)
_AIM_WEAK = 0.05
# where the joint test at the goal fails, the coupled bound's value the tests aim at is searched to this
# (relative: a certified ratio ~0.001 lower at most), in at most _AIM_JOINT joint tests
_AIM_REL = 1e-3
_AIM_JOINT = 8
# a one-k certificate's resolution there (``rel`` of :func:`_aimed`; a path's runs keep _AIM_REL, their bounds
# carried): the test bisecting a bracket of 0.2% is not run, at most 0.1% of the ratio (issue 39: golub-shaped
# k = 200, 0.43 of 1.9 CPU s, the third of three joint tests)
_AIM_REL_ONE = 2e-3
# at most this many failed joint tests before one holds (the gallop's steps 0.1% .. 0.4%): further up the
# anchored bound is weak (dlbcl-shaped k = 200: a 4th failure 0.5 CPU s, then 3 tests for +0.0035)
_AIM_GALLOP = 3
# a one-k certificate's (``gallop`` of :func:`_aimed`; a path's runs keep _AIM_GALLOP, whose bounds are
# carried to other k): at most 3 failed tests (the goal, +0.1%, +0.3%).  dlbcl-shaped k = 200: those cost
# 0.27 CPU s, a 4th (+1.1%) alone 0.52 s and proved nothing; the proofs seen held by the 3rd test
# (dlbcl-shaped k = 150 there, golub-shaped k = 200 at the 2nd)
_AIM_GALLOP_ONE = 2
# "deep" (S's anchored bounds alone, :func:`light_S`): below a proved goal, the search's resolution
_DEEP_REL = 4e-3
# where the aim's goal is proved, the aimed terms climb a ladder of aims (:func:`_ladder`): each rung halves the
# ratio's gap to 1 (0.975 -> 0.9875 -> 0.99375 ...), a failed rung bisected toward the last proved value; a test
# runs only while its counted cost (_settings.anchor_cost) keeps the ladder within _LADDER_RUNS "auto" DNN runs
# on S and its value promises at least _LADDER_GAIN more certified ratio.  Issue 39 (the ratio rule): a 100 x
# 5,000 gene matrix at k = 10 stopped at the aim, 0.9750, where the filing tree certified 0.9829.  Only on the
# route whose S bound is not the light one (:func:`light_refined`, not ``deep``): the DNN's route after a light one
# runs in every path's run (its dual point carried) but in certify(k) only where the light route falls short;
# climbing there too took a golub-shaped path from 854 to 1,494 SVD units (55 -> 109 runs), its minimum unchanged
_LADDER_RUNS = 1.0
_LADDER_GAIN = 2e-3


def _coupled_refined(covS: Cov, certS: Certificate, stS, kS: int, BT: np.ndarray, k: int,
                     pair: float | None, make_cross=None, lower: float = -np.inf,
                     stop: float = 1.0, budget=None, aim: float | None = None,
                     notes: dict | None = None, deep: bool = False,
                     gallop: int = _AIM_GALLOP, make_rows=None,
                     rel: float = _AIM_REL, ladder: bool = False,
                     rows=None, give_up=None, step0: float = _AIM_REL) -> tuple[float, dict, np.ndarray | None]:
    """:func:`_coupled`, sharpened until ``lower >= stop x bound`` (or nothing more to sharpen).

    First the plain coupling; then, at every k, the cross term of S and T
    (``make_cross()``: :func:`.cross.cross_table`, see :func:`_coupled`; with ``make_rows``, ``make_cross``
    gives the column part only and ``make_rows()`` the row part, computed and merged, their elementwise
    minimum being the whole table, only where the rest T still binds with the columns': see
    :func:`_cross_cols_first`); then ``B_S(i)`` where it
    binds: while the maximum over j of the terms sits at an ``i = k - j`` in ``3..kS - 1`` whose
    ``B_S(i)`` is only the DNN's tangent (weak at small sparsity, where the anchored row sums are
    strong), the anchored row-sum bound at sparsity i on ``A_SS`` (:func:`.dual._anchored`, a proof
    at i: :func:`nspca_core.certificates.anchor.anchored_rowsum_test`) replaces it, while the refinements'
    counted cost stays within :data:`_COUPLED_REFINE_RUNS` DNN runs on S (no sparsity limit).
    ``aim`` (a ratio, "auto"): :func:`_aimed` instead of the walk (all binding sparsities in one
    joint test; ``notes``, a dict: gets its tests' counted cost and the least coupled value any
    bounds could give, ``deep``: the search goes below the aim, ``gallop``: its failures' limit, ``ladder``: on up
    the ladder of aims where the goal is proved and not ``deep``, :func:`_ladder`, ``rows``: candidate lists on
    ``A_SS`` for its joint tests; see there).
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
    if lower >= stop * val or certS.x is None or BT.size <= 1 or i >= k:
        return val, sharper, None  # (i = k: S's own bound binds, nothing of T to sharpen)
    nS, nT = dS.size, BT.size
    cross = None
    if make_cross is not None and fits(budget, "rest", float(nS) * nT * max(k, 16)):
        with step(budget, "rest", float(nS) * nT * max(k, 16)):
            cross = make_cross()
            if make_rows is not None:
                cross = _cross_cols_first(certS, stS, dS, kS, BT, k, pair, cross, make_rows)
    if aim is not None and budget is None:
        val = _aimed(covS, certS, stS, kS, BT, k, pair, cross, lower, aim, sharper, notes, deep, gallop, rel,
                     ladder=ladder, rows=rows, give_up=give_up, step0=step0)
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


def _cross_cols_first(certS: Certificate, stS, dS: np.ndarray, kS: int, BT: np.ndarray, k: int, pair,
                      cols: np.ndarray | None, make_rows) -> np.ndarray | None:
    """The cross table for :func:`_coupled_refined` from its column part (``cols``: :func:`.cross.cross_table`
    with ``part="cols"``), the row part (``make_rows()``) merged in only where the coupled bound with the
    columns' table still has its maximum at a sparsity of T (``j >= 1``).  Where it sits at ``j = 0`` the
    row part could not lower it (that term has no cross part; the others only fall), so the coupled bound is
    the whole table's.  Each part bounds every ``C[i, j]`` (proof in :func:`.cross.cross_table`), hence so
    does their minimum."""
    if cols is None:
        return None
    if _coupled(certS, stS, dS, kS, BT, k, pair, argmax=True, cross=cols)[1] >= k:
        return cols
    rows = make_rows()
    return cols if rows is None else np.minimum(cols, rows)


def _bisected(covS: Cov, certS: Certificate, stS, dS: np.ndarray, kS: int, pair, sharper: dict, i: int) -> float:
    """The anchored bound at sparsity i on ``A_SS`` by bisection to :data:`_COUPLED_REL` (``inf``
    when nothing below the current ``B_S(i)`` is proved).  A feasible value at i opens its bracket:
    S's answer cut to its i largest entries, then the ascent at sparsity i."""
    _, lower_i = _ascent_many(covS, i, rank1_point(np.asarray(certS.x, dtype=float), i)[:, None])
    current = _coupled_bs(certS, stS, dS, kS, pair, sharper)[i]
    tb = _anchored(covS.dense(), i, float(lower_i), current, rel_tol=_COUPLED_REL) if lower_i > 0 else None
    # (inf: tried, nothing proved; a path charges the test's counted cost: path_large.run_charge)
    return tb if tb is not None else np.inf


def _aimed(covS: Cov, certS: Certificate, stS, kS: int, BT: np.ndarray, k: int, pair, cross, lower: float,
           aim: float, sharper: dict, notes: dict | None = None, deep: bool = False,
           gallop: int = _AIM_GALLOP, rel: float = _AIM_REL, ladder: bool = False, rows=None,
           give_up=None, step0: float = _AIM_REL) -> float:
    """The refinements of :func:`_coupled_refined` aimed at one value V of the coupled bound: every
    refinable term above V is brought to V by ``B_S(i) <= a_V(i)`` (:func:`_meets`), proved for all
    those i at once by ONE joint anchored test (:func:`.anchor.anchored_joint_test`).  V starts at
    the goal, ``max(lower / aim, the terms no refinement can lower)`` raised to where no term is
    asked below :data:`_AIM_SLACK` above a feasible value at its sparsity (the anchored bound proves
    ~0.2% above the optimum at best; S's answer cut to i entries, :func:`_truncated_all`); where the
    test there fails, V gallops up (``lo (1 + step0 2^t)`` until ``step0 2^t`` reaches ``_AIM_REL 2^gallop``) to
    the first proved, then bisects to ``rel`` (a one-k certificate: :data:`_AIM_REL_ONE`), at most
    :data:`_AIM_JOINT` tests, each started
    from the last failure's ratios (valid: a larger V asks larger values at fewer sparsities); the terms
    that blocked a failed test (:func:`.anchor.joint_blockers`) asked :data:`_AIM_WEAK` above a feasible
    value stand, V rising to them.  The proved ``a_V(i)`` fill
    ``sharper``.  ``notes`` (a dict) gets the tests' counted cost (``"cost"``) and ``"least"``: the
    coupled value with every refinable ``B_S(i)`` at that feasible value (the others as they are),
    below which no bounds of S can bring it.  ``deep``: where the goal is proved, the search goes on
    down to ``least`` (resolution :data:`_DEEP_REL`): S's bounds are the anchored ones alone there
    (:func:`light_S`), where a DNN's tangents may have certified more than the goal.  ``ladder`` (not
    ``deep``): where the goal is proved, every refinable term on up :func:`_ladder`'s rungs.  ``rows``:
    :class:`.anchor.AnchorRows` on ``A_SS`` kept for a sparsity at least the largest any test asks (the lazy
    light route's, at kS: :func:`light_refined`), else they are built at that sparsity (lists kept for a larger
    k bound every smaller one's row sums: more candidates, a cap no larger; :func:`.anchor.anchored_joint_test`
    asks only ``ks <= rows.k``).  ``give_up(lo)`` (:mod:`.thin_defer`): before the first test (lo its value, or
    ``bottom`` where ``deep`` may go there) and after a failed one, the search stops where it returns a value
    (``notes["gave_up"] = lo``): every value tested later is above lo, and each proof brings the largest term to its
    value, so the bound returned is at least lo.  Returns the coupled bound.

    Replaces one test per binding sparsity, the largest term first, with a bisection per term where
    none met the goal: on a 77 x 7,070 gene matrix at k = 100, 45 tests and a bisection (1.0 CPU s),
    at k = 150 8 failed tests and 8 bisections walking the goal up (3.1 s)."""
    dS = covS.diag()
    nS = dS.size
    cfg = _EFFORT["auto"]
    runs = cfg["iters"] + cfg["cut_rounds"] * cfg["cut_iters"]
    allowance = _COUPLED_REFINE_RUNS * runs * _DNN_PASSES * float(nS) ** 2
    BS = _coupled_bs(certS, stS, dS, kS, pair, sharper)
    vals, iis = _terms(BS, BT, k, kS, cross)
    ref = np.array([3 <= int(i) < kS and anchor_affordable(nS, int(i), runs) for i in iis], dtype=bool)
    goal0 = max([lower / aim] + [float(v) for v in vals[~ref]])
    cand = ref & (vals > goal0 * (1 + _AIM_SLACK))
    AS, xS = covS.dense(), np.asarray(certS.x, dtype=float)
    iref = iis[ref].astype(int)
    cref = None if cross is None else cross[np.minimum(iref, cross.shape[0] - 1),
                                            np.minimum(k - iref, cross.shape[1] - 1)]
    lowr = _truncated_all(AS, xS, iref)
    least = max([lower] + [float(v) for v in vals[~ref]] + [float(v) for v in _terms_at(lowr, BT[k - iref], cref)])
    if notes is not None:
        notes.update(cost=0.0, least=least)
    if not cand.any():
        return _coupled(certS, stS, dS, kS, BT, k, pair, sharper, cross=cross)
    # (terms within the slack of the goal: the goal rises to them)
    lo = max([goal0] + [float(v) for v in vals[ref & ~cand]])
    ii, tv = iis[cand].astype(int), vals[cand]
    bt = BT[k - ii]
    cc = None if cross is None else cross[np.minimum(ii, cross.shape[0] - 1), np.minimum(k - ii, cross.shape[1] - 1)]
    low = _truncated_all(AS, xS, ii)
    floor = _terms_at((1 + _AIM_SLACK) * low, bt, cc)
    lo = max(lo, float(np.max(np.minimum(tv, floor))))
    hi = float(tv.max())  # (nothing to test there)
    rows = rows if rows is not None and rows.k >= int(ii.max()) else None  # (S's first test's, at kS: reused)
    r_lo, proved, spent = None, {}, 0.0
    V, step_up, res = lo, step0, rel
    stood, failed = -np.inf, -np.inf  # (for the ladder: the terms that stand, the last failed value)
    bottom = max(float(np.max(np.minimum(tv, floor))), least)  # (deep: where the search may go down to)
    start = lo if not deep or lo <= bottom * (1 + _DEEP_REL) else bottom  # (no value returned below it)
    if give_up is not None and notes is not None and give_up(start) is not None:
        notes["gave_up"] = start
        return _coupled(certS, stS, dS, kS, BT, k, pair, sharper, cross=cross)
    for _ in range(_AIM_JOINT):
        if not lo <= V < hi:
            break
        over = tv > V
        a = _meets(V, bt[over], None if cc is None else cc[over])
        if not (a > 0).all():
            ok, r = False, r_lo
        else:
            if rows is None:  # (one candidate list, at the largest sparsity any test asks)
                rows = AnchorRows(AS, int(ii[over].max()))
            cost = anchor_cost(nS, int(ii[over].max()))
            if spent + cost > allowance:
                break
            spent += cost
            ok, r = anchored_joint_test(rows, ii[over], a, r_lo, patience=_AIM_PATIENCE)
        if ok:
            hi = V
            for i, v in zip(ii[over], a):
                proved[int(i)] = min(proved.get(int(i), np.inf), float(v))
            if deep and V == lo and lo > bottom * (1 + _DEEP_REL):
                lo, r_lo, res = bottom, None, _DEEP_REL  # (the goal proved: below it, coarser)
        else:
            lo, r_lo, failed = V, r, V
            if r is not None and a.size:
                # the terms whose hypotheses kept the test from proving, asked far above a feasible
                # value: the anchored bound is weak there (MLL k = 50, i = 47..49: 7% above one;
                # dlbcl-shaped k = 200, i ~ 114, below the DNN's tangent), so they stand and the value
                # aimed at rises to them (the tests after it ask nothing of them)
                blk = joint_blockers(rows, ii[over], a, r)
                weak = blk[a[blk] >= (1 + _AIM_WEAK) * low[over][blk]]
                if weak.size:
                    stand = np.flatnonzero(over)[weak]
                    lo = max(lo, float(tv[stand].max()))
                    stood = max(stood, float(tv[stand].max()))
                    tv = tv.copy()
                    tv[stand] = -np.inf
                    hi = hi if proved else max(float(tv.max()), lo)
        if not ok and give_up is not None and give_up(lo) is not None and notes is not None:
            notes["gave_up"] = lo
            break
        if hi <= lo * (1 + res) or (not proved and step_up >= _AIM_REL * 2 ** gallop):
            break
        step_up *= 2  # (gallop up from the goal until a test holds, then bisect)
        V = lo * (1 + step_up) if not proved and lo * (1 + step_up) < hi else float(np.sqrt(lo * hi))
    if proved and ladder and not deep and _LADDER_RUNS > 0:  # (every refinable term, within the goal's slack too)
        tr = vals[ref].copy()
        tr[np.flatnonzero(cand[ref])[np.isneginf(tv)]] = -np.inf  # (those that stand)
        fl = _terms_at((1 + _AIM_SLACK) * lowr, BT[k - iref], cref)
        base = max([stood, float(np.max(np.minimum(tr, fl)))] + [float(v) for v in vals[~ref]])
        spent += _ladder(AS, rows, iref, tr, BT[k - iref], cref, lower, aim, base, hi, failed, nS, runs, proved)
    for i, v in proved.items():
        sharper[i] = min(sharper.get(i, np.inf), v)
    if notes is not None:
        notes["cost"] = spent
    return _coupled(certS, stS, dS, kS, BT, k, pair, sharper, cross=cross)


def _ladder(AS: np.ndarray, rows, ii: np.ndarray, tv: np.ndarray, bt: np.ndarray, cc, lower: float, aim: float,
            base: float, cur: float, failed: float, nS: int, runs: int, proved: dict) -> float:
    """:func:`_aimed`'s terms ``tv`` (at sparsities ``ii`` of S, with ``bt``, ``cc``), proved to ``cur`` (the
    aim's goal or above), taken on up a ladder of aims: the rung ``a' = 1 - (1 - a) / 2`` asks every term above
    ``V = max(lower / a', base)`` (``base``: the terms no test lowers, the floors above feasible values) to meet
    V by ONE joint anchored test (:func:`.anchor.anchored_joint_test`; after a failed one of the ladder, started
    from its ratios: valid as in :func:`_aimed`, a larger V asks larger values at fewer sparsities); a proved
    rung leads to the next, a failed one (or a rung at or below ``failed``, a value :func:`_aimed` failed at)
    to the bisection between it and ``cur``.  A test runs only while the ladder's counted cost stays within
    :data:`_LADDER_RUNS` DNN runs on S and its value promises at least :data:`_LADDER_GAIN` more certified ratio
    (``lower / V - lower / cur``).  Proved values go into ``proved``; returns the tests' counted cost.  Valid:
    each value is a joint test's proof; the ladder only decides which tests run."""
    allowance = _LADDER_RUNS * runs * _DNN_PASSES * float(nS) ** 2
    spent, a, V, r = 0.0, aim, None, None
    while True:
        if V is None:  # (the next rung)
            a = 1 - (1 - a) / 2
            V = max(lower / a, base)
        if V <= failed:  # (a test above it failed: the bisection between that and the proved value instead)
            V = float(np.sqrt(failed * cur))
        over = tv > V
        if not (lower / V - lower / cur >= _LADDER_GAIN and over.any()):
            return spent
        want = _meets(V, bt[over], None if cc is None else cc[over])
        top = int(ii[over].max())
        if not (want > 0).all() or spent + anchor_cost(nS, top) > allowance:
            return spent
        spent += anchor_cost(nS, top)
        if rows is None or top > rows.k:
            rows = AnchorRows(AS, top)
        ok, r2 = anchored_joint_test(rows, ii[over], want, r, patience=_AIM_PATIENCE)
        if ok:
            for i, v in zip(ii[over], want):
                proved[int(i)] = min(proved.get(int(i), np.inf), float(v))
            cur, V = V, None
        else:
            failed, r = V, r2
            V = float(np.sqrt(failed * cur))


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


# one-k "auto" split certificates above the tree's sparsities first try S's bound from the anchored row
# sums alone (:func:`light_S`: no DNN on S, no eigenpairs of A_SS); the DNN's route follows only where
# that leaves the certified ratio more than this below the aim or what any bounds of S could give
# (``least`` of :func:`_aimed`; issue 39: on a 77 x 7,070 gene matrix at k = 50..100 the DNN on S was
# 40-60% of the certificate and every binding term was the anchored bounds' after the refinements)
_LIGHT_LOSS = 4e-3


def light_S(covS: Cov, kS: int, xS: np.ndarray, lam: float | None = None,
            lazy: dict | None = None, seen: dict | None = None) -> Certificate | None:
    """S's certificate for the split bound from the anchored row sums at kS alone (the test and
    bisection the dense certificate runs first, :func:`.dual._anchored` with its forecast), or None
    where they prove nothing below the variance sum.  ``lam``: an upper bound on ``lambda_max(A_SS)``
    (a bound at every sparsity, also the cross table's screen).  No DNN state: ``B_S(i)`` at ``i <
    kS`` is then the refinements' (:func:`_aimed`), the variance sums and monotonicity.
    ``lazy`` (a dict: a one-k certificate, or a path's run following it, where ``_settings._LAZY_S``): only the first
    test (at ``lower /`` :data:`_DNN_SKIP_AT`), its bound that value; the bisection below it follows only
    where that term binds the coupled bound (:func:`light_refined`, from what ``lazy`` gets).  ``seen``: the
    first test's and the forecast's records (:func:`.dual.top_test`), handed on to :func:`.dual.dense_dual`."""
    AS, dS = covS.dense(), covS.diag()
    n = dS.size
    lower = covS.quad(xS)
    bounds = {"variances": _variances_bound(dS, kS)}
    if lam is not None:
        bounds["lambda1"] = float(lam)
    top, ask, how = lower / _DNN_SKIP_AT, not (thin_anchor.on() and lazy is None), {}  # (ask: no forecast, thin route)
    if not (lower > 0 and anchor_ok(n, kS)) or (ask and _forecast_fails(AS, kS, xS, top, _EFFORT["auto"], seen)):
        return None
    if lazy is not None and _S._LAZY_S and top < min(bounds.values()):  # (else the eager search, as before)
        rows, ok, _ = top_test(AS, kS, top, seen)  # (where it fails, the DNN's route asks it again: reused)
        tb = top if ok else None
        lazy.update(rows=rows, lower=lower, top=top, bounds=dict(bounds), xS=xS, kS=kS, n=n, A=AS)
    elif thin_anchor.on():  # (the thin route's eager search: its top test last, thin_anchor.anchored)
        tb = thin_anchor.anchored(AS, kS, lower, min(bounds.values()), _ANCHOR_REL, _DNN_SKIP_AT, how)
    else:
        tb = _anchored(AS, kS, lower, min(bounds.values()), rel_tol=_ANCHOR_REL, top_ratio=_DNN_SKIP_AT,
                       top_first=True, seen=seen)
    if tb is None:
        return None
    bounds["anchored"] = tb
    cert = _finish(bounds, lower, xS, kS, time.perf_counter(), {"n": n, "light": True})
    if how.get("collatz"):  # (the eager refinements' goal, the search's resolution above it, .single._AIM_STEP_CW)
        cert.info.update(collatz=True, aim_at=min([tb * (1 + how["collatz"])] + [b for b in bounds.values() if b > tb]))
    if lazy:
        lazy["cert"] = cert
    return cert


# a proved bound of S at kS is at least (1 - this) x the feasible value (its rounding: ~1e-13 relative)
_FLOOR_REL = 1e-9


# the bisection below a lazy light_S's first test (:func:`light_finish`), where S's bound at kS binds: to this
# (relative; the eager one's _ANCHOR_REL, 1e-3).  Spends part of the 0.005 the ratios may move, deliberately
# and only there (one or two tests fewer of about five)
_LAZY_REL = 4e-3


def light_finish(lazy: dict, rel: float | None = None) -> Certificate:
    """The lazy :func:`light_S`'s certificate with the bisection below its proved first test: the test at
    ``1.001 lower`` (bisected below it to :data:`.dual._NARROW_REL` where it holds), else the bisection
    between it and the first test's value to ``rel`` (default :data:`_LAZY_REL`), each started from the last
    failure's ratios (:func:`.anchor.anchored_bisection`), as :func:`.dual._anchored` searches that bracket."""
    rows, lower, top = lazy["rows"], lazy["lower"], lazy["top"]
    rel = _LAZY_REL if rel is None else rel
    hi = lower * 1.001
    ok, r = anchored_rowsum_test(rows, hi) if hi < top else (False, None)
    if ok:
        tb = anchored_bisection(rows, lower, hi, rel, narrow=min(rel, _NARROW_REL))[0]
    else:
        tb = anchored_bisection(rows, lower, top, rel, tau_lo=hi if r is not None else -np.inf, r_lo=r,
                                narrow=min(rel, _NARROW_REL))[0]
    bounds = {**lazy["bounds"], "anchored": min(tb, top)}
    return _finish(bounds, lower, lazy["xS"], lazy["kS"], time.perf_counter(), {"n": lazy["n"], "light": True})


def light_refined(lazy: dict | None, covS: Cov, certS: Certificate, stS, kS: int, BT: np.ndarray, k: int,
                  pair, make_cross, lower: float, stop: float, **kw) -> tuple[Certificate, tuple]:
    """:func:`_coupled_refined` on a lazy :func:`light_S`'s certificate (``lazy`` None: on ``certS`` as it is).
    Where its bound at kS (the first test's value) is where the coupled maximum sits, :func:`light_finish`
    lowers it: with the refinements run, the coupled bound with their proofs; where none ran (the plain
    coupling sat at kS or was enough), all of it again on the finished certificate.  The aimed search climbs
    :func:`_ladder` here (``ladder``, unless given) where not ``deep``, its joint tests on the candidate lists
    the lazy first test built on the same ``A_SS`` at kS (``lazy["rows"]``; golub-shaped k = 200: one 1,229 x 784
    build fewer).  Valid: every
    ``B_S(i)`` is proved either way.  Returns ``(certS, (bound, sharper, cross))``."""
    kw = {"ladder": True, **kw}  # (the ladder of aims where S's bound is not the light route's: not deep)
    if lazy and lazy.get("A") is covS.dense():  # (the first test's candidate rows on A_SS at kS: the joint tests')
        kw.setdefault("rows", lazy["rows"])
    out = _coupled_refined(covS, certS, stS, kS, BT, k, pair, make_cross, lower, stop, **kw)
    if not lazy or certS is not lazy.get("cert"):  # (not lazy, or S's certificate the DNN's)
        return certS, out
    val, sharper, cross = out
    dS = covS.diag()
    if _coupled(certS, stS, dS, kS, BT, k, pair, sharper, argmax=True, cross=cross)[1] < kS:
        return certS, out
    if cross is not None and getattr(make_cross, "one_k", False) and _coupled(
            replace(certS, upper_bound=lower * (1 - _FLOOR_REL)), stS, dS, kS, BT, k, pair, sharper,
            cross=cross) >= val * (1 - _FLOOR_REL):
        # no finish can lower the coupled bound by more than _FLOOR_REL (relative): its maximum sits at kS only as
        # a tie with terms at j >= 1 proved to the aimed value (golub-shaped k = 100, dlbcl-shaped k = 65: the
        # joint test at the goal held, every term there; the finish then gained 1e-15 relative, their
        # roundings, for 0.04-0.06 CPU s), and even S's bound at its floor leaves it there (the coupled bound
        # is nondecreasing in S's bound; any proved bound of S is at least the feasible value ``lower`` up to
        # its rounding, far less than _FLOOR_REL).  A documented trade of at most 1e-9 of the bound; a path's
        # run (no flag) still finishes, so it stays at most certify(k)
        return certS, out
    fin = light_finish(lazy)
    if cross is None:
        return fin, _coupled_refined(covS, fin, stS, kS, BT, k, pair, make_cross, lower, stop, **kw)
    return fin, (min(val, _coupled(fin, stS, dS, kS, BT, k, pair, sharper, cross=cross)), sharper, cross)


def split_cross(cov: Cov, S: np.ndarray, T: np.ndarray, kS: int, k: int, certS: Certificate, lower: float,
                trial: dict | None, one: bool):
    """The split certificate's cross table for :func:`_coupled_refined`: ``(make_cross, make_rows)``.  A one-k
    certificate (``one``) whose S bound leaves its ratio below :data:`_COUPLED_AIM` (S may bind alone: MLL at
    k = 65..200) takes the column part first, the row part only where T still binds (:func:`_cross_cols_first`,
    the same coupled bound); elsewhere the whole table at once (``trial``: the one a smaller screen's try
    computed, :func:`small_hopeless`)."""
    lam = certS.bounds.get("lambda1")
    # (by a margin: a lazy light_S's bound is lower / _COUPLED_AIM itself, S's ratio at the aim, not below it;
    # by rounding alone the product fell on either side: dlbcl-shaped k = 80 took the table in two calls, the
    # rest T binding there as on golub- and dlbcl-shaped data at k = 65..200 generally.  Issue 39, ninth round)
    below = lower < _COUPLED_AIM * certS.upper_bound * (1 - _AIM_MARGIN)
    rows = cols_first(cov, S, T, kS, k, lam) if one and below else None
    if trial is not None:
        return (lambda: trial["cross"]), rows

    def make():
        return cross_table(cov, S, T, kS, k, lam, part="cols" if rows else "both")

    # a one-k certificate's own table (not a path's run: it wraps ``make``, hiding the flag, and carries S's
    # finished bound to other k; not a smaller screen's try): S's bound finished only where that can lower the
    # coupled one (:func:`light_refined`)
    make.one_k = one
    return make, rows


# a one-k "auto" split certificate on thin data first tries a smaller screen, _SMALL_PER_K k features
# (S's cost is |S|^2 per DNN iteration, |S| x width per row-sum pass), where certify(k)'s own screen is at
# least _SMALL_GAIN times larger; the larger screen follows only where the smaller one falls short
# (:func:`small_verdict`).  Issue 39: on MLL k = 80 / 100 / 120 the screen of 4 k certified 0.954 / 0.960 /
# 0.956 (6 k: 0.952 / 0.954 / 0.953: its DNN on a larger S is looser) at 0.7 / 0.5 / 0.7 of the CPU; on
# golub-shaped data k = 65..100 the same ratios at 0.55-0.65
_SMALL_PER_K = 4
_SMALL_GAIN = 1.25
# the smaller screen stands when its certified ratio is at least the aim less this, or when its coupled
# bound is within _SMALL_T_SHARE of S's own bound at k (the rest T no longer binds: a larger screen adds
# features to the DNN, whose bound on a larger S is no smaller)
_SMALL_SHORT = 1e-3
_SMALL_T_SHARE = 1.5e-2
# tried only up to this many features (a failed try then costs at most (600 / 900)^2 of the larger screen's
# DNN, plus its cross table; at k = 200 on MLL the screen of 800 failed, and 1.0 CPU s was lost)
_SMALL_MAX = 600


# ... and before the cross table (its cost, ~0.1 CPU s at k = 100..150 on gene data, was half the try's where it
# failed) where the ceiling with plain sums (``B_S(i) + B_T(j)``, no cross term) leaves less than this: the cross
# term brought that ceiling's ratio up by at most 0.10 in the cases measured (MLL k = 150: 0.895 -> 0.993), and
# the screens that stood had at least 0.895 there, those that failed at most 0.885 (golub- and dlbcl-shaped,
# k = 100..150).  Only a choice of screen: a wrong one costs time, never the bound's validity
_SMALL_PLAIN = 0.89


def small_screen(n: int, k: int, size: int) -> int | None:
    """The smaller screen's size for a one-k split certificate whose own screen has ``size`` features
    (:data:`_SMALL_PER_K` k, at least ``_settings._SPLIT_MIN``), or None where it would not be
    :data:`_SMALL_GAIN` times smaller."""
    small = max(_SMALL_PER_K * int(k), _S._SPLIT_MIN)
    return small if _SMALL_GAIN * small <= size and small < n and small <= _SMALL_MAX else None


def t_ceiling(AS: np.ndarray, xS: np.ndarray, BT: np.ndarray, k: int, kS: int, cross) -> float:
    """The largest coupled term with part of the support in T (``j >= 1``) when every ``B_S(i)`` is only
    the feasible value of x's i largest entries on S (:func:`_truncated_all`): no bound of S brings the
    coupled bound of this split below it (each term is nondecreasing in ``B_S(i) >= OPT_S(i)``, which
    is at least that value).  -inf when T takes no feasible share.  Decides which screen; proves nothing."""
    j = np.arange(1, BT.size)
    i = k - j
    ok = (i >= 0) & (i <= kS)
    j, i = j[ok], i[ok]
    if j.size == 0:
        return -np.inf
    a = np.where(i > 0, _truncated_all(AS, xS, np.maximum(i, 1)), 0.0)
    c = None if cross is None else cross[np.minimum(i, cross.shape[0] - 1), np.minimum(j, cross.shape[1] - 1)]
    return float(np.max(_terms_at(a, BT[j], c)))


def small_verdict(lower: float, coupled: float, B_S: float) -> bool:
    """Whether a smaller screen's split certificate stands (:data:`_SMALL_SHORT`, :data:`_SMALL_T_SHARE`);
    it is a valid bound either way, this only chooses whether the larger screen runs too."""
    return lower >= (_COUPLED_AIM - _SMALL_SHORT) * coupled or coupled <= (1 + _SMALL_T_SHARE) * B_S


def small_hopeless(trial: dict, cov: Cov, S, T, covS: Cov, xS, k: int, kS: int, x, lower: float, info: dict,
                   G=None) -> bool:
    """Whether the rest T alone (:func:`t_ceiling`) keeps a smaller screen's certified ratio below the
    aim less :data:`_SMALL_SHORT`, before S's bound is computed (then only S alone could let it stand,
    :func:`small_verdict`: on golub- and dlbcl-shaped data at k = 100..200 it never did).  Proves nothing.
    ``trial`` gets the point (``x``, its ``src``), T's spectrum (``specT``) and the cross table (``cross``)
    for the certificate that follows (:func:`.single._certify_split`; ``G``: X's Gram when computed)."""
    trial.update(x=x, src=info["lower_source"], specT=_rest_spectrum(cov, T, G, S))
    BT, AS = _rest_curve(cov, T, k, spec=trial["specT"]), covS.dense()
    if lower < _SMALL_PLAIN * t_ceiling(AS, xS, BT, k, kS, None):
        return True  # (the plain sums' ceiling: ruled out before the cross table's cost)
    trial["cross"] = cross_table(cov, S, T, kS, k, _lambda_S(cov, S))
    return lower < (_COUPLED_AIM - _SMALL_SHORT) * t_ceiling(AS, xS, BT, k, kS, trial["cross"])
