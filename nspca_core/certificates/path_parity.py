"""The dense path's last runs of certify(k)'s own computation (:func:`far_runs`): at the k whose DNN bound
is carried from farthest away.

Why: certify(k)'s DNN is a short run (from the KKT point or the screening start, 14-24 iterations and one cut
round on a 400 x 180 factor-plus-noise matrix) whose value is noisy in k (certify(79) = 83.46 below
certify(76) = 83.81); a tangent carried 10-20 k from the path's nearest DNN run was up to 0.6% above it
(k = 71..99 on both seeds of that matrix), while on CBCL, where the path's runs lie a few k apart in that band,
the path is below certify(k) at every k.  Rigour: nothing new; each run is certify(k)'s, its bound and its dual
point's tangent (:func:`.dnn.dnn_tangent`) carried as in :func:`one_k_runs`.

Also which of the path's own ``mu = 0`` dual points get more DNN iterations at their own k (:func:`flat_points`,
:func:`deepen_flat`): where one bounds a flat band of smaller k below the accepted ratio (CBCL k = 85..361, from
k0 = 361), certify(k)'s own ``mu = 0`` runs in the band came up to 3.5e-5 below it (issue 39, helper parity12).
"""

from __future__ import annotations

from functools import partial

import numpy as np

from . import _settings as S
from .anchor import AnchorRows, anchored_bisection
from .bounds import _Spectral, cheap_bounds_at
from .dual import _DNN_SKIP_AT, _NARROW_REL, _SETTLE_GAIN, _anchored_above, _dnn, _forecast_fails
from .path_large import gap_runs
from .single import _certify_dense

# a k is run only when the nearest k with a DNN run of its own is at least this far (CBCL: none is, in the band
# below; at 2 the runs at k = 50 gained 1 bound; the factor-plus-noise matrices: 79, 84, 97, 105 / 78, 84, 96, 103)
MIN_DIST = 6


def far_runs(uniq, pos, lows, upper, binds, ran, run_one, cost, budget: float, *, lo_ratio: float,
             hi_ratio: float, min_dist: int = MIN_DIST, tol: float = 1e-9) -> list:
    """``run_one(k)`` at the k whose certified ratio ``lows / upper()`` lies in ``[lo_ratio, hi_ratio)``, whose
    bound is a DNN tangent (``binds()``), not flat to the next k (the bound of a ``mu = 0`` point there: certify(k)
    stands on its KKT point, :mod:`.path_kkt`) and whose nearest k in ``ran`` (the k with a DNN run of their own;
    each k run is added) is at least ``min_dist`` away, the farthest first, while the counted costs
    (``cost(k)``) add up to at most ``budget``.  Then, next to each run that helped -- it lowered the path's bound by
    more than ``tol`` (relative) at its own k or at the next k of ``uniq`` below or above it -- at those next k not in
    ``ran`` whose bound is still open, first and outside the budget, so the band of k where
    certify(k)'s own runs win is followed to its ends (:func:`parity_runs`' rule).  Returns the k run.

    Why the following (issue 39, helper path15): on the 400 x 180 factor-plus-noise matrix (seed 1) certify(97)'s run
    lowered k = 97..99 to its tangent, but certify(98) / certify(99)'s own short DNN runs from their own KKT points came
    1.6e-4 / 8.7e-4 lower still (a strict xfail since session 10); the run at 97 helped, so 96 and 98 are run, 98
    helped, so 99 is run, and so on while runs help."""
    done: list = []
    ran = {int(k) for k in ran}
    kk = np.asarray(uniq, dtype=int)
    spent = 0.0
    follow: list = []

    def one(k: int, counted: bool = True) -> None:
        nonlocal spent
        j = pos[k]
        near = [jj for jj in (j - 1, j, j + 1) if 0 <= jj < kk.size]
        before = upper()[near].copy()
        spent += cost(k) if counted else 0.0
        run_one(k)
        ran.add(k)
        done.append(k)
        if np.any(upper()[near] < before * (1 - tol)):
            follow.extend(int(kk[jj]) for jj in (j - 1, j + 1) if 0 <= jj < kk.size)

    while ran:
        if follow:
            k = follow.pop(0)
            i = pos[k]
            if k not in ran and upper()[i] > lows[i]:
                one(k, counted=False)
            continue
        ub = upper()
        dist = np.min(np.abs(kk[:, None] - np.array(sorted(ran))[None, :]), axis=1)
        flat = np.append(ub[:-1] >= ub[1:], True)
        ok = (lows >= lo_ratio * ub) & (lows < hi_ratio * ub) & binds() & (dist >= min_dist) & ~flat
        if not ok.any():
            break
        k = int(kk[int(np.argmax(np.where(ok, dist, -1)))])
        if spent + cost(k) > budget:
            break
        one(k)
    return done


# a flat point's further iterations (:func:`flat_points`) stop at the first check (every check_every iterations) gaining
# less than this share of the gap at the point's own k when they start, or at the path's target there (CBCL k0 = 361:
# a gap of 3.98, 20 iterations gain 2.18, 20 more 1.50 and reach the target 1 - 1e-5: 70372.187 -> 70368.51, the bound
# at k = 85..361, where certify(k) is at least 70369.7; 20 more would gain 0.22, less than a third of the gap)
FLAT_STALL = 1.0 / 3.0


def flat_points(uniq, pos, lows, upper, states, tangent, accept: float) -> list:
    """The k0 of the path's DNN dual points (``states``: ``{k0: (state, lam)}``, ``tangent(state, lam)`` their bound
    at every k of ``uniq``) worth more iterations at k0: ``mu = 0``, the path's bound (``upper()``) at some k whose
    certified ratio ``lows / upper()`` is below ``accept`` (where certify(k) itself works on), all those k at most k0
    and the bound there the one at k0 (flat: no mu term, the cut terms saturated), and the gap at k0 still open.
    Returns ``[(k0, gap)]``, ``gap = 1 - lows[k0] / bound at k0``.

    Why: such a point is run at a large k0 (CBCL: k0 = 361, warm from k = 180, 20 iterations), where its own gap is
    tiny (5.6e-5) and the run stops by its stall rule (relative progress below 3e-4 per check: more than the gap),
    while at the smaller k it bounds the ratio is below certify(k)'s accept ratio: certify(k)'s own DNN there (a mu = 0
    point as well, from its own start) went on and came 3.5e-5 below it (CBCL k = 87, 94..98).  Iterations at k0
    lower that bound at every k of the band by what they gain at k0: with ``w, mu >= 0`` and the cut right-hand
    sides nondecreasing in k, any dual point's bound at ``k <= k0`` is at most its bound at k0.  Only picks points."""
    ub = upper()
    out = []
    for k0, (st, lam) in sorted(states.items()):
        i0 = pos[int(k0)]
        if st.nu != 0 or not lows[i0] > 0:
            continue
        tg = tangent(st, lam)
        band = (tg <= ub) & (lows < accept * ub)
        if band.any() and int(np.max(np.asarray(uniq)[band])) <= k0 and np.all(tg[band] == tg[i0]) \
                and lows[i0] < tg[i0]:
            out.append((int(k0), 1.0 - float(lows[i0]) / float(tg[i0])))
    return out


def deepen_flat(uniq, pos, lows, upper, states, tangent, accept: float, deepen) -> list:
    """``deepen(k0, FLAT_STALL * gap)`` at each point :func:`flat_points` picks, once each, the points picked again
    after each (one deepened may leave another's band, or bring one in).  Returns the k0 deepened."""
    done: list = []
    while todo := [kg for kg in flat_points(uniq, pos, lows, upper, states, tangent, accept) if kg[0] not in done]:
        k0, gap = todo[0]
        done.append(k0)
        deepen(k0, FLAT_STALL * gap)
    return done



def parity_runs(ks, pos, lows, upper, ran, run_one, stride: int, below: float = np.inf, tol: float = 1e-9) -> list:
    """``run_one(k)`` (certify(k)'s own computation, or its anchored call) at every ``stride``-th k of ``ks`` (from
    the smallest) whose bound is open and whose certified ratio ``lows / upper()`` is below ``below``; then, next to
    each run that helped, at the next k of ``ks`` below and above it first, so a band of k where the path is above
    what ``run_one`` proves is followed to its ends.  A run helped when it lowered the path's bound by more than
    ``tol`` (relative) at its own k or at the next k below or above it (the k it would follow to: a run's DNN point
    may be above the path at its own k and below it at a neighbour, where certify(k)'s own run then wins too: 24 x 24
    images, certify(397)'s point lowered k = 401..445 and not 397, and k = 401..409 stayed 7-8e-4 above
    certify(k) unrun), or, where ``run_one`` returns a verdict, when that is True (the anchored call proved
    a bound: a larger k's bound carried down may have been below it at k, not at the next k).  ``ran``: k not run
    again.  Returns the k run.

    Why (issue 39, helper imgpath13): on 19 x 19 parts-based images (2,000 x 361) the path was above certify(k) at
    109 of 361 k, in bands: where certify(k)'s anchored call proves a bound the path's budgeted tries skipped
    (k = 44..76, 308..355), and where certify(k)'s own DNN run beats the tangents carried (k = 148..233).  Whether
    certify(k) wins at k is known only by running it; its wins come in runs of neighbouring k, so a coarse grid finds
    each band and the following runs cover it.  Picks k only: every bound is certify(k)'s own."""
    kk = sorted({int(k) for k in ks})
    ran = {int(k) for k in ran}
    r = lows / upper()
    todo = [j for j in range(0, len(kk), stride) if r[pos[kk[j]]] < below]
    done: list = []
    while todo:
        j = todo.pop(0)
        k = kk[j]
        i = pos[k]
        if k in ran or not upper()[i] > lows[i]:
            continue
        near = [pos[kk[jj]] for jj in (j - 1, j, j + 1) if 0 <= jj < len(kk)]
        before = upper()[near].copy()
        hit = run_one(k)
        ran.add(k)
        done.append(k)
        if np.any(upper()[near] < before * (1 - tol)) if hit is None else hit:
            todo[:0] = [jj for jj in (j - 1, j + 1) if 0 <= jj < len(kk)]
    return done


def top_runs(tops: dict, pos, upper, ran, run_one) -> list:
    """``run_one(k)`` (certify(k)'s own computation) at each k of ``tops`` (k -> the top ``lows / _DNN_SKIP_AT`` the
    path's anchored call at k proved, and nothing below it), ascending, not in ``ran``, where the path's bound
    (``upper()``) is still at or above that top.  Returns the k run.

    Why (issue 39, helper path18): such a bound is a function of the path's own feasible value, certify(k)'s of its
    own (fit(auto)'s): on 24 x 24 images (1,500 x 576) k = 477 the path's point was 3.9e-7 better, so its top, the
    bound, 3.9e-7 above certify(477)'s -- below every finer bisection's resolution, and the tests between the two
    tops are not known to hold.  Run there, certify(k)'s own bound is kept (the smaller): never looser at such a k, by
    construction.  No new bound: certify(k)'s, and its dual point's tangent, as :func:`one_k_runs` carries them."""
    done: list = []
    for k in sorted(tops):
        if k not in ran and upper()[pos[k]] >= tops[k]:
            run_one(k)
            done.append(k)
    return done


def dnn_runs(A, uniq, pos, lows, upper, binds, ran, ub_cheap, carry, effort: str, below: float) -> list:
    """certify(k)'s own DNN (:func:`.dual._dnn` with the arguments :func:`.dual.dense_dual` gives it on a dense one-k
    certificate without a point: no warm start, the screening start, its give-up rule and its cut run, the ``lambda1``
    bound of certify(k)'s eigenpairs as the screening start's bracket) from the path's feasible value, at each k of
    ``uniq`` not in ``ran`` whose bound is a DNN tangent carried from another k (``binds()``) and whose certified
    ratio ``lows / upper()`` is below ``below``, ascending (a run's tangent may close a later k).  Lowers ``ub_cheap``
    to each run's value and carries its dual point (``carry(state, lam)``).  Returns the k run.

    Why (issue 39, helper imgpath21): on 24 x 24 images (1,500 x 576) certify(k)'s bound at k = 404 / 415 is its own
    DNN (the screening start, 14 iterations, one cut run of 40), 7.2e-5 / 2.8e-4 below the path's line there (one
    tangent, certify(409)'s point), while at 402 / 416 it is 3.6e-3 above it: noisy in k, and no quantity the path
    holds predicts the dips.  This call gives certify(k)'s DNN bound float for float wherever certify(k)'s DNN starts
    from the screening start and its feasible value takes the same turns (every k of 398..419 there), at ~0.4 of
    certify(k)'s cost (no fit(auto), no ascent, no anchored tests).  Rigour: nothing new; the run's rigorous value
    (:func:`.dnn.dnn_value_lam`) and its dual point's tangent (:func:`.dnn.dnn_tangent`), as :func:`one_k_runs`."""
    cfg = S._EFFORT[effort]
    enough = 1.0 - cfg.get("accept_gap", cfg["target_gap"])
    spec: list = []
    done: list = []
    ran = {int(k) for k in ran}
    for k in (int(k) for k in uniq):
        i = pos[k]
        if k in ran or not (lows[i] < below * upper()[i] and binds()[i]):
            continue
        if not spec:  # (certify(k)'s eigenpairs: its lambda_1 bound brackets the screening start)
            spec.append(_Spectral(A, 3 if effort == "full" else 2).spectrum())
        val, st, info = _dnn(A, k, float(lows[i]), effort, None, before_cuts=lambda v: np.inf, skip_at=_DNN_SKIP_AT,
                             settle=S._CUT_BELOW if effort == "auto" else None, beyond=(enough, _SETTLE_GAIN),
                             top_eig=cheap_bounds_at(spec[0], k)["lambda1"])
        done.append(k)
        if st is not None and np.isfinite(val):
            ub_cheap[i] = min(ub_cheap[i], val)
            carry(st, info.get("lam"))
    return done


def anchored_floor(lower: float, rel_tol: float) -> float:
    """The least value :func:`.dual._anchored` (``rel_tol``, from the feasible value ``lower``) can return:
    its first bracket is narrow (``lower * 1.001``), so anchor.anchored_bisection probes
    ``lower (1 + narrow / 2)`` first and every later test lies above it; a wider bracket's bisection
    stops ``sqrt(1 + rel_tol) > 1 + narrow / 2`` above its floor.  A bound at or below this is never
    undercut by the call (certify_path's late tries are not made there: CBCL k = 136..361, 4e-6 from
    optimal, 28 tests that proved nothing, ~0.35 CPU s)."""
    return lower * (1.0 + min(rel_tol, _NARROW_REL) / 2)


def after_dnn_anchored(A, k: int, lower: float, level: float, rel_tol: float, fine: float, x=None,
                       cfg=None) -> float | None:
    """certify(k)'s anchored bisection after its DNN (:func:`.dual.dense_dual`'s ``anchored_above(val)``: where its
    forecast ruled the test out before the DNN, the test at the DNN's value ``val``, then the bisection below it to
    ``rel_tol``), made at the path's bound ``level`` instead of certify(k)'s DNN value; then finer (to ``fine``) from
    its last failed test, as the path's other anchored calls (path.rest()).  None when the test at ``level`` fails,
    or (``x``, the path's point at k, and ``cfg``, the effort's settings, given) where dual._forecast_fails says it
    does (img19 every k: without it the failing tests cost +13% of the path's CPU).

    Why (issue 39, helper path15): on 24 x 24 images (1,500 x 576) certify(k) at k = 58, 61, 62, 74 certifies by this
    bisection (its forecast at ``lower / 0.975`` says "fails", its DNN ends below 0.97, the test at the DNN's value
    holds), while the path, whose try at k was forecast to fail too, never ran the test: up to 4.3e-4 looser.
    Rigour: the same anchored row-sum test and bisection (a bound wherever a test holds), nothing new."""
    if x is not None and _forecast_fails(A, k, x, level, cfg):
        return None  # (the effort's forecast from the path's point ``x`` says the test at ``level`` fails)
    carry = {"rows": AnchorRows(A, k), "tau": -np.inf, "r": None}
    tb = _anchored_above(carry, lower, level, rel_tol)
    if tb is not None and fine < rel_tol and lower < (1 - fine) * tb:
        tb = min(tb, anchored_bisection(carry["rows"], lower, tb, fine, tau_lo=carry["tau"], r_lo=carry["r"])[0])
    return tb


def one_k_runs(cov, uniq, pos, lows, LX, src, ub_cheap, given, upper, effort, budget, carry=None,
                order=None) -> dict:
    """certify(k)'s own computation (:func:`.single._certify_dense` with its eigenpairs, no point
    unless the caller gave one) where the path's bound is still open, largest gap per counted cost
    first (:func:`.path_large.gap_runs`, ``dense_run_cost``), within ``budget``: there the path's
    bound is at most certify(k)'s.  Lowers ``ub_cheap`` and raises ``lows`` in place; returns
    ``{k: Certificate}``.  ``carry(state, lam)``: called with each run's DNN dual point and its
    rigorous ``lambda_max`` bound (None: not known), whose tangent bounds every k (LRS: certify(24)'s
    dual point proves the optimum at every k >= 24, where the path's own tangents were 2.7e-6 above).
    ``order(one, cost, budget)`` (optional): chooses the k instead (:func:`.path_parity.far_runs`)."""
    A = cov.dense()
    n = A.shape[0]
    out: dict = {}
    spec: list = []

    def one(k: int) -> None:
        if not spec:  # the eigenpairs certify(k) computes (the same call)
            spec.append(_Spectral(A, 3 if effort == "full" else 2))
        c, st = _certify_dense(cov, k, given.get(k), effort, None, spec=spec[0])
        out[k] = c
        if carry is not None and st is not None:
            carry(st, (c.info.get("dnn") or {}).get("lam"))
        i = pos[k]
        ub_cheap[i] = min(ub_cheap[i], c.upper_bound)
        if src[i] != "given" and c.x is not None and c.lower > lows[i]:
            LX[:, i], lows[i], src[i] = c.x, c.lower, c.info.get("lower_source", "one-k")

    (order or partial(gap_runs, uniq, pos, lows, upper))(one, lambda k: S.dense_run_cost(n, k, effort), budget)
    return out
