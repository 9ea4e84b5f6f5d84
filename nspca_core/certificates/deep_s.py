"""Deeper DNN runs on the screened sets of a large-n path where S's relaxation binds (issue 39, MLL).

A run of :func:`.path_large.path_large` bounds the S part by certify(k)'s short DNN run on ``A_SS``
(40 iterations, then one cutting-plane run of 44).  On MLL (72 x 12,582) at k = 45..60 the path's bound
is that DNN's tangent: the coupled bound is within 0.1% of ``B_S`` alone (helper mll95's
``--s-terms``), and S's short run stops 1.4% above what the same relaxation gives after a longer one.

:func:`deep_dual` runs the DNN afresh on ``A_SS`` for :data:`_DEEP_ITERS` iterations with its
k-support cuts renewed every :data:`_DEEP_REFRESH` (dnn_optimize's ``refresh``), the smoothing and the
learning rate decaying over the whole run.  MLL k = 51, |S| = 308 (CPU, one BLAS thread): S alone
0.9342 -> 0.9485 of the best known value in 11 SVD units; the run's coupled bound at k = 45..53 then
0.946-0.950 (was 0.933-0.939).  300 iterations gave 0.940, 3,000 gave 0.948: the relaxation stalls
there (mll95's converged 0.943-0.948).  A perspective (Boolean) dual on top of the cuts gained nothing
measurable on the same S (``benchmarks/results/issue39_mll6.txt``).

Validity: any ``N >= 0`` (zero diagonal), ``mu >= 0`` and cut weights ``w >= 0`` give a bound at every
sparsity (:mod:`.dnn`, :func:`.dnn.dnn_tangent`); the optimizer only decides how good.  The point is
found on ``A_SS / a`` and scaled back by ``a > 0`` (still ``>= 0`` entrywise: a positive factor keeps
the signs), then evaluated rigorously on ``A_SS`` itself (:func:`.dnn.dnn_value_lam` with LAPACK, its
stated tolerance): nothing of the scaling's rounding enters the proof.  The deepened run's curve is
:func:`.path_large.coupled_curve` with ``B_S`` the smaller of the two points' bounds, and the path
takes the smaller of the curves at every k.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from . import _settings as S
from .dnn import DnnState, dnn_optimize, dnn_value_lam
from .face import face_bounds

# the deep run: iterations, cut renewal period and count, smoothing and learning rate (in units of A_SS's
# largest entry).  MLL k = 51, |S| = 308: 300 / 1,000 / 3,000 iterations 0.9402 / 0.9478 / 0.9479 of the
# best known value on S alone (lr 6e-3, renewal 8: 0.9411 / 0.9479 / 0.9473; smoothing 3e-3 -> 3e-5:
# 0.9360 / 0.9478 / 0.9474); |S| = 204: 0.9535 / 0.9566 / 0.9578
_DEEP_ITERS = 1000
_DEEP_REFRESH = 10
_DEEP_CUTS = 30
_DEEP_T = (1e-2, 1e-4)
_DEEP_LR = 1e-2
# warm restarts (issue 39, mll7): the run again from its own point, the smoothing re-heated to _DEEP_T[0] and the
# learning rate reset; kept where the rigorous value falls.  A cold run stalls where the smoothing has cooled
# (MLL k = 51, |S| = 308: 3,000 cold iterations 0.9479), a re-heated one goes on: 1,000 cold + 1 / 2 / 3 / 5
# restarts of 1,000 give S alone 0.9485 -> 0.9502 / 0.9509 / 0.9511 / 0.9513 (re-heating to 3e-2 or 3e-3: the
# same within 1e-4).  At most this many, stopping after one that lowers the value by less than _DEEP_RESTART_GAIN
# (relative)
_DEEP_RESTARTS = 3
_DEEP_RESTART_GAIN = 3e-4
# a deep run that lowers the path's bound nowhere by this (relative) is a miss (_DEEP_MISSES), as the polish's
# _POLISH_STOP (at 2e-3 MLL's deepening stopped after 4 runs, k = 50 and 52 each lowering the path by ~0.1%: min
# 0.9452, where 7 runs gave 0.9460).  Not tried first as a gate: a 300-iteration trial (MLL k = 51 0.9402; the
# polished run's S was at about that, so no run followed, where 1,000 iterations give 0.9485), nor dnn_optimize's
# give_up (its extrapolation stopped MLL k = 51's run after a few iterations, at 0.858)
_DEEP_MIN_GAIN = 3e-4
# the share of the path's counted budget the deep runs may take (path_large hands over _DEEP_SHARE x its budget):
# _DEEP_COLD_SHARE for the runs from zero (the former share: the same runs as before the restarts), then
# _DEEP_RESTART_SHARE for warm restarts of those runs (:func:`_restart_deepened`), and a run is deepened only
# where its own coupled bound at its k is within _DEEP_BINDS of S's bound alone (S binds there: elsewhere the rest
# or the cross term does and a tighter S moves little; golub-shaped runs bind on the anchored sums).  Restarts
# on top of the cold runs, not in their place: counted inside the cold share they left fewer runs deepened
# (MLL k = 42..45 up to 0.04% looser than with no restarts)
# (issue 39, mll8) 0.12 -> 0.18 with the pick by each k's own nearest run (_deepen_cold): MLL's 7 cold runs at
# 48..55 became 11, reaching k = 59 / 60 (0.9493 / 0.9497 -> 0.9566 / 0.9571; k below 0.95 7 -> 5, +2 CPU s of 77)
_DEEP_COLD_SHARE = 0.18
# 0.12 -> 0.15 with the cold 0.18 (mll8): at 0.12 the restarts ended before k = 49's run, and k = 46 was 1e-4 looser
_DEEP_RESTART_SHARE = 0.15
_DEEP_SHARE = _DEEP_COLD_SHARE + _DEEP_RESTART_SHARE
_DEEP_BINDS = 5e-3
# a run is deepened only where S's own certified ratio (lower / B_S) is below 1 - this: the deep run gains
# a fraction of S's gap (MLL k = 51: 1.4% of 6.6%); golub-shaped k = 200's S is at 0.9967, a trial there gained
# nothing, and with no such rule the path spent 1,902 -> 2,109 SVD units for the same bounds to 4 digits
_DEEP_GAP = 0.03
# deepening stops after this many runs in a row whose trial did not lower the path's bound anywhere by
# _DEEP_MIN_GAIN (relative)
_DEEP_MISSES = 2
# a deep run serves the k within this many of its own (its tangents; MLL: k = 51's run lifted 43..53)
_DEEP_REACH = 6
# (issue 39, mll9) a kept deep point's face bounds (:mod:`.face`) join its run's BS_at, at every sparsity up to
# kS + _DEEP_REACH (the k its curve serves), the joint form from kS - _FACE_BELOW (the coupled bound's binding
# terms sit at i = k - 1..k - 10 on MLL): MLL k = 51, |S| = 308, 2 restarts: S alone 0.9509 -> 0.9519 (the
# projection alone) / 0.9577 (with the joint form), the coupled bound 0.9465 -> 0.9484 / 0.9530 (~1 CPU s)
_FACE = True
_FACE_BELOW = 40
# the efforts whose paths deepen ("fast" stays short; "full" runs its own long DNN at every run)
DEEP_EFFORTS = ("auto",)


def deep_dual(A: np.ndarray, k: int, iters: int = _DEEP_ITERS, restarts: int = 0,
              runs: list | None = None, start: DnnState | None = None) -> tuple[DnnState, float, float]:
    """A DNN dual point of ``A`` found by a long run with renewed cuts: ``(state, value, lam)``, the
    value the rigorous bound at k and ``lam`` its rigorous ``lambda_max`` (the bound at any other
    sparsity: :func:`.dnn.dnn_tangent`).  The first run starts from zero, or warm from ``start`` (a dual
    point of ``A``, e.g. an earlier deep run's).  ``restarts``: at most that many more runs of ``iters``,
    each from the kept point (scaled to ``A / a`` again) with the smoothing re-heated; a run's point is
    kept where its rigorous value is lower, and the restarts stop after one that lowers it by less than
    :data:`_DEEP_RESTART_GAIN`.  ``runs`` (a list): gets the value of every run, in order.  See the
    module docstring for why any point is valid: each one is evaluated on ``A`` itself."""
    n = A.shape[0]
    a = float(np.abs(A).max())
    if not a > 0 or not np.isfinite(a):
        a = 1.0
    st, val, lam = _deep_run(A, a, int(k), DnnState(np.zeros((n, n)), 0.0) if start is None else _scaled(start, a),
                             int(iters))
    runs = runs if runs is not None else []
    runs.append(val)
    for _ in range(int(restarts)):
        st2, val2, lam2 = _deep_run(A, a, int(k), _scaled(st, a), int(iters))
        runs.append(val2)
        gain = (val - val2) / val if val > 0 else 0.0
        if val2 < val:
            st, val, lam = st2, val2, lam2
        if not gain >= _DEEP_RESTART_GAIN:
            break
    return st, val, lam


def _scaled(st: DnnState, a: float) -> DnnState:
    """A dual point of ``A`` as a warm start on ``A / a`` (its subspace and cut directions as they are)."""
    return DnnState(np.asarray(st.N, dtype=float) / a, float(st.nu) / a, st.U, st.C,
                    None if st.w is None else np.asarray(st.w, dtype=float) / a)


def _deep_run(A: np.ndarray, a: float, k: int, start: DnnState, iters: int) -> tuple[DnnState, float, float]:
    """One run of :func:`deep_dual` from ``start`` (a point of ``A / a``): the point scaled back by ``a``
    (clipped to ``N >= 0`` with a zero diagonal, ``mu >= 0``, ``w >= 0``) and its rigorous value on ``A``."""
    n = A.shape[0]
    st, _, _ = dnn_optimize(A / a, k, start, iters=iters, t_start=_DEEP_T[0], t_end=_DEEP_T[1], lr=_DEEP_LR,
                            r=min(10, n), refresh=_DEEP_REFRESH, max_cuts=_DEEP_CUTS)
    N = np.maximum(np.asarray(st.N, dtype=float) * a, 0.0)
    np.fill_diagonal(N, 0.0)
    w = None if st.w is None else np.maximum(np.asarray(st.w, dtype=float) * a, 0.0)
    st = DnnState(N, max(float(st.nu) * a, 0.0), st.U, st.C, w)
    val, lam = dnn_value_lam(A, k, st, fast=False)
    return st, float(val), float(lam)


def deep_cost(keep: dict, iters: int = _DEEP_ITERS) -> float:
    """A deep run's counted cost on a run's S (the polish's count: iterations x passes x |S|^2)."""
    return float(iters) * S._DNN_PASSES * float(keep["S"].size) ** 2


def deepen_runs(cov, uniq: np.ndarray, lows: np.ndarray, upper, kept: dict, curve: np.ndarray, carry,
                budget: float, done: dict | None = None, iters: int = _DEEP_ITERS) -> float:
    """Deep runs (:func:`deep_dual`) on the runs' screened sets, worst-certified k first, then warm
    restarts of them (:func:`_restart_deepened`); returns the counted cost spent.

    First, within ``budget x _DEEP_COLD_SHARE / _DEEP_SHARE``, repeatedly: the k of the lowest certified ratio
    ``lows / upper()`` whose nearest run (within :data:`_DEEP_REACH`) is not yet deepened and where S binds
    (that run's coupled bound at its k within :data:`_DEEP_BINDS` of its ``B_S``) and S's own ratio is below
    ``1 - _DEEP_GAP``: that run's S gets a deep dual point from zero, kept when it is lower at the run's
    sparsity, and the run's curve (``carry(keep, ks)``: :func:`.path_large.coupled_curve` at ``ks`` with the
    run's rest curve) is carried into ``curve`` (in place).  That stops when no such k is left, the next run's
    cost would pass the share (counted: :func:`deep_cost`), or after :data:`_DEEP_MISSES` deepened runs in a
    row that lowered the path's bound nowhere by :data:`_DEEP_MIN_GAIN`.  Then the rest of ``budget`` goes to
    the restarts.  ``done`` (optional): filled ``{run k: relative gain of B_S}``."""
    if budget <= 0 or not kept:
        return 0.0
    order: list = []
    spent = _deepen_cold(cov, uniq, lows, upper, kept, curve, carry, budget * (_DEEP_COLD_SHARE / _DEEP_SHARE),
                         order, iters)
    ub, at = upper(), {int(k): i for i, k in enumerate(uniq)}
    with np.errstate(divide="ignore", invalid="ignore"):
        worst = sorted(order, key=lambda po: lows[at[po[0]]] / ub[at[po[0]]] if po[0] in at else np.inf)
    spent += _restart_deepened(cov, uniq, upper, kept, curve, carry, budget - spent, worst, iters)
    if done is not None:
        for pick, old in order:
            done[pick] = max(old - float(kept[pick]["certS"].upper_bound), 0.0) / old
    return spent


def _deepen_cold(cov, uniq: np.ndarray, lows: np.ndarray, upper, kept: dict, curve: np.ndarray, carry,
                 budget: float, order: list, iters: int) -> float:
    """The first part of :func:`deepen_runs` (runs from zero); ``order`` gets ``(run k, S's bound before)``
    of each deepened run, in order."""
    rk = np.array(sorted(kept), dtype=int)
    tried: set[int] = set()
    spent, misses = 0.0, 0
    while True:
        ub = upper()
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(np.isfinite(ub) & (ub > 0) & (lows > 0), lows / ub, np.inf)
        pick = None
        for i in np.argsort(ratio, kind="stable"):
            if not np.isfinite(ratio[i]) or ratio[i] >= 1.0 - S.OPTIMAL_TOLERANCE:
                break
            near = rk[np.argsort(np.abs(rk - uniq[i]), kind="stable")]
            near = [int(r) for r in near if abs(int(r) - int(uniq[i])) <= _DEEP_REACH]
            # each k's own nearest run (within _DEEP_REACH), once.  Was: the worst k's nearest run not yet
            # deepened, so a k the relaxation holds below its neighbours (MLL k = 51) drew run after run around it
            # (51, 55, 50, 52, 49, 53, 48) and the share ended before k = 59 / 60, whose own runs were never tried
            if near and near[0] not in tried:
                pick = near[0]
                break
        if pick is None:
            return spent
        tried.add(pick)
        keep = kept[pick]
        certS = keep["certS"]
        own = float(carry(keep, np.array([pick]))[0])
        if own > float(certS.upper_bound) * (1.0 + _DEEP_BINDS) or keep.get("stS") is None:
            continue  # the rest or the cross term binds at this run: a tighter S moves little
        if not float(certS.lower) < (1.0 - _DEEP_GAP) * float(certS.upper_bound):
            continue  # S's own gap is small: a deep run gains a fraction of it
        c = deep_cost(keep, iters)
        if spent + c > budget:
            return spent
        spent += c
        order.append((pick, float(certS.upper_bound)))
        AS = cov.submatrix(keep["S"])
        _keep_lower(keep, deep_dual(AS, keep["kS"], iters), curve, carry, uniq, AS)
        misses = 0 if _fell(ub, upper()) > _DEEP_MIN_GAIN else misses + 1
        if misses >= _DEEP_MISSES:
            return spent


def _restart_deepened(cov, uniq: np.ndarray, upper, kept: dict, curve: np.ndarray, carry, budget: float,
                      order: list, iters: int) -> float:
    """The second part of :func:`deepen_runs`: the deepened runs in ``order`` (:func:`deepen_runs`: by the
    certified ratio at their own k after the cold runs, worst first), each restarted warm from its kept
    point (:func:`deep_dual` with ``start``: the first restart, then at most :data:`_DEEP_RESTARTS` - 1
    more while each gains :data:`_DEEP_RESTART_GAIN`) as far as ``budget`` allows (each restart counted as
    one run, :func:`deep_cost`), kept where lower and carried into ``curve``; stops after
    :data:`_DEEP_MISSES` runs in a row that lowered the path's bound nowhere by :data:`_DEEP_MIN_GAIN`.
    Any point is valid (:func:`deep_dual`); a kept one only lowers."""
    spent, misses = 0.0, 0
    if _DEEP_RESTARTS < 1:
        return spent
    for pick, _ in order:
        keep = kept[pick]
        c = deep_cost(keep, iters)
        runs_left = (budget - spent) / c  # (inf with no budget)
        if not runs_left >= 1.0 or keep.get("stS") is None:
            return spent
        more = _DEEP_RESTARTS - 1 if runs_left >= _DEEP_RESTARTS else int(np.floor(runs_left)) - 1
        ub, vals = upper(), []
        AS = cov.submatrix(keep["S"])
        _keep_lower(keep, deep_dual(AS, keep["kS"], iters, more, vals, start=keep["stS"]), curve, carry, uniq, AS)
        spent += c * len(vals)
        misses = 0 if _fell(ub, upper()) > _DEEP_MIN_GAIN else misses + 1
        if misses >= _DEEP_MISSES:
            return spent
    return spent


def _keep_lower(keep: dict, point: tuple, curve: np.ndarray, carry, uniq: np.ndarray,
                AS: np.ndarray | None = None) -> None:
    """A deep point ``(state, value, lam)`` of a run's S kept where its value is below S's bound, and the
    run's curve then carried into ``curve`` (the smaller at every k).  With ``AS`` (``A_SS``) and
    :data:`_FACE` on, the kept point's bounds below its tangents (:func:`.face.face_bounds`: the slack
    ``y^T P y`` off the DNN's optimal face) join the run's ``BS_at`` (``{i: B_S(i)}``, the smaller where
    one is there) before the curve is carried."""
    st, val, lam = point
    certS = keep["certS"]
    if val < float(certS.upper_bound):
        dnn = {**(certS.info.get("dnn") or {}), "lam": lam}
        keep["certS"] = replace(certS, upper_bound=val, info={**certS.info, "dnn": dnn})
        keep["stS"] = st
        if _FACE and AS is not None and isinstance(st, DnnState):
            at = dict(keep.get("BS_at") or {})
            kS = int(keep["kS"])
            bounds = face_bounds(AS, st, lam, min(kS + _DEEP_REACH, AS.shape[0]), max(1, kS - _FACE_BELOW))
            for i, b in enumerate(bounds, start=1):
                if b < at.get(i, np.inf):
                    at[i] = float(b)
            keep["BS_at"] = at
        np.minimum(curve, carry(keep, uniq), out=curve)


def _fell(before: np.ndarray, after: np.ndarray) -> float:
    """The largest relative fall of the path's bound from ``before`` to ``after``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        fell = np.where(np.isfinite(before) & (before > 0), (before - after) / before, 0.0)
    return float(fell.max(initial=0.0))
