"""Certificates for many k at once (:func:`certify_path`), warm-started along k."""

from __future__ import annotations

import time
from functools import partial

import numpy as np

from .anchor import anchored_bisection, anchored_branch_bound, anchored_rowsum_bound
from .._common.pairs import opt_pairs
from .._common.params import check
from .._common.scale import normalized, rescale
from ..operators.cov import Cov
from ..operators.covariance import as_cov
from .dnn import DnnState, dnn_optimize, dnn_tangent, dnn_value_lam
from .dnn import lmax_state as _dnn_lmax
from .._common.validation import InputError
from ..result import Certificate
from . import _settings as S
from ._settings import (
    _DECAY,
    _EPS,
    _LR,
    _LR_WARM,
    _PATH,
    _PATH_SPLIT_CAP,
    _T0,
    _T1,
    anchor_ok,
)
from .bounds import _Spectral, cheap_bounds
from .dual import _ANCHOR_REL, _DNN_SKIP_AT, _anchored, _cut_rounds, _forecast_fails, _screen_init
from .lower import _ascent_batch, _path_lower, _rank1_cols
from .monotone import carry_envelope
from .cheap import _certify_lowrank
from .path_grid import _grid_and_refine
from .path_kkt import kkt_carry
from .path_large import gap_runs, path_large, refine_midpoints
from . import path_dense_polish as _PP
from .path_dense_polish import GOAL, GOAL2, polish_to_goal, weak_branch
from .path_finish import path_certificates
from .path_large_points import _large_lower, _large_monotone
from .path_parity import (after_dnn_anchored, anchored_floor, deepen_flat, dnn_runs, far_runs, one_k_runs,
                          parity_runs, top_runs)
from .route import _certify_large, certify_thin, path_grown, split_cheaper
from .sparse_route import sparse_route, split_pays

# the dense path's polish to its goal (path_dense_polish.py): DNN iterations per k of the path
_POLISH_ITERS_PER_K = 15.0
# its second tier (GOAL2, only the dual points where the DNN gives the path's bound).  10, was 3 (issue 39, helper dense):
# on a 400 x 180 factor-plus-noise matrix (seed 1) the tier ran out at k = 90 and k = 71..91 stayed up to 0.4% above
# certify(k)'s fresh DNN (22 -> 6 k looser; seed 2 33 -> 26); CBCL's tier stops at its goal after 300 iterations, its
# 361 bounds bit for bit
_POLISH2_ITERS_PER_K = 10.0
# certify(k)'s runs after the polish (path_parity.far_runs), counted, as a share of the one-k runs' budget (issue 39,
# helper dense: the 400 x 180 factor-plus-noise matrices 6 / 26 -> 2 / 8 k looser; CBCL: none runs)
_FAR_SHARE = 0.5
# the path's branchings (anchor.anchored_branch_bound): row-sum iterations per node before it is split (default 40;
# CBCL k = 10..12 at the path's goal: 0.26 / 0.41 / 0.57 -> 0.08 / 0.13 / 0.21 CPU s, 42 / 62 / 81 -> 44 / 64 / 85
# nodes of 100; 5: 95 nodes at k = 12; 3: k = 12 not proved within 100)
_BRANCH_NODE_ITERS = 8
# the DNN's refinement skips a midpoint already certified to this ratio (path_dense_polish.GOAL + 5e-4)
_REFINE_SKIP = 0.981
# the anchored bisection's resolution after certify(k)'s own (relative; _ANCHOR_REL is 1e-3), and (_ANCHOR_FINE_TOP) at
# the k whose ratio is at or above the polish's goal, where nothing lowers the bound after it (issue 39, helper
# imgpath14): certify(k) bisects from its own feasible value (fit(auto)), the path from its own, so their 1e-3 steps
# land differently (24 x 24 images k = 17: the path 3.0e-4 above certify(17); at 1e-4 still 1.5e-5 above).  Not 1e-5
# everywhere: CBCL's 40 finer calls then moved 29 bounds and the polish after them, +8% CPU in three runs
_ANCHOR_FINE, _ANCHOR_FINE_TOP = 1e-4, 1e-5
# the share of the path's counted budget (S.path_budget) the anchored tries may spend before the DNN's refinement,
# largest gap per counted cost first (path_large.gap_runs; counted passes, not seconds: the same k on every machine).
# Not less: on CBCL 1/4 would leave out only the failing tries at k = 77..110 (the same 361 bounds, -0.25 CPU s), but on
# a dense 400 x 180 factor-plus-noise matrix it left the DNN alone where the anchored sums bound (up to 1.7% looser at
# 85 of 180 k, the minimum 0.9717 -> 0.9688); 1/5 already changes CBCL's polish (5 k looser)
_ANCHOR_SHARE = 0.5
# ... and they stop after this many tries in a row (in that order) whose test ran and proved nothing: the rest have a
# smaller gap per cost.  CBCL: k = 99..110, which would have failed too, are not made (12 tests, ~0.15 CPU s; the same
# 361 bounds bit for bit, and on the 400 x 180 matrix above, where no 8 failed in a row).  Nor is a try made (it counts
# as made and failed, in ``done``) where the _ANCHOR_FAILED_BELOW nearest k below it whose test ran all
# proved nothing (CBCL: 91..98 after 57..59, 0.14 CPU s; the bounds bit for bit on CBCL, LRS and both 400 x 180 matrices)
_ANCHOR_STOP_FAILS, _ANCHOR_FAILED_BELOW = 8, 3
# the late runs' grid (path_parity.parity_runs): every 8th k (img19: 0 of 361 k looser, 69 runs; a band narrower than
# the grid step is found only where another run's bound reaches it)
_PARITY_STRIDE = 8
# certify(k)'s anchored bisection after its DNN (path_parity.after_dnn_anchored) at every tried k whose test did not
# prove, below this ratio (the polish's goal: CBCL none, 0.7 CPU s of failing tests above it; img24 k = 40..70 8 tests)
_AFTER_DNN_BELOW = GOAL


def certify_path(X=None, *, cov=None, ks, xs=None, effort="auto", callback=None, center=True) -> list[Certificate]:
    """One certificate per k in ``ks``, warm-started along k.

    Parameters
    ----------
    X, cov, center : as in :func:`certify`
    ks : sequence of int in [1, n]
    xs : sequence of array_like or None, optional
        Feasible points, one per k (entries may be None).
    effort : {"auto", "fast", "full"}
    callback : callable(done, total), optional
        Called after each DNN run (``total`` is an estimate) and at the end.

    Returns
    -------
    list of Certificate, in the order of ``ks``.

    Notes
    -----
    Facts that make the path far cheaper than one certificate per k:

    * ``S_k^n`` grows with k: a point feasible for ``k' <= k`` is feasible for k
      (lower bounds carry upward) and a bound for ``k' >= k`` is a bound for k
      (``monotone``).
    * One DNN dual point certifies every k (``dnn(tangent)``,
      :func:`nspca_core.certificates.dnn.dnn_tangent`): ``M = A + N - mu J - sum w c c^T``
      does not depend on k, so its one rigorous ``lambda_max`` gives the bound
      ``lambda_max(M) + mu k + sum_l w_l beta_k(c_l)`` at every k.
    * The DNN value is concave in k, so the lower envelope of the tangents of
      a few k's is close to it everywhere.  The DNN therefore runs on a
      coarse geometric grid of k, then only on midpoints of intervals where
      the envelope is more than a small relative amount above the chord of
      the bounds at the interval's ends (where a DNN run could still gain),
      each run warm-started from the dual point of the nearest k already done.
    * The feasible points of all k come from one batched truncated-power
      ascent (a different k per column), restarted from the neighbours'
      answers.  The eigenpairs and the row sums of ``A - A_1`` are computed
      once for all k.

    Never looser than one k where it can afford it: at the k where the bound carried from the other
    k leaves the largest gap to the feasible value per counted cost, the path runs certify(k)'s own
    computation and keeps the smaller bound (:func:`.path_large.gap_runs`; on dense data within
    ``_settings._PATH_FLOOR``), so there its bound is at most ``certify(k)``'s, and that run's DNN
    dual point bounds every other k too.  Small problems afford it at every k whose bound is not
    closed; no sparsity limit decides where it runs.  On dense data the anchored row sums are tried
    by certify(k)'s own call (the same bound from the same feasible value), then finer; last, where
    the certified ratio is still below 0.98, the DNN dual points the path holds are polished, worst
    k first, and where the DNN stalls the anchored row sums with branching prove the goal
    (:func:`.path_dense_polish.polish_to_goal`).
    Data of numerical rank <= 3 get the exact spannogram's certificate at every k, as from
    :func:`certify`.
    """
    cov_, factors = normalized(as_cov(X, cov, center=check("center", center)))  # entries far from 1: a power-of-2 copy
    n = cov_.n
    ks = list(check("ks", ks, n_features=n))
    effort = check("effort", effort)
    if effort == "exact":
        raise InputError("`effort` 'exact' is for one k (certify(..., k=k, effort='exact')); certify_path takes "
                         "'auto', 'fast' or 'full'")
    check("callback", callback)
    if xs is not None:
        xs = list(xs)
        if len(xs) != len(ks):
            raise InputError(f"`xs` must have one entry per k (len(ks)={len(ks)}); got {len(xs)}")
        xs = [None if v is None else check("x", v, name=f"xs[{i}]", n_features=n, k=k)
              for i, (v, k) in enumerate(zip(xs, ks))]
    else:
        xs = [None] * len(ks)
    uniq = sorted(set(ks))
    given = {}
    for k, v in zip(ks, xs):
        if v is not None and (k not in given or cov_.quad(v) > cov_.quad(given[k])):
            given[k] = v
    certs: dict[int, Certificate] = {}
    total = len(uniq)
    gram: dict = {}  # (X's Gram and its eigenpairs, as certify(k)'s low-rank test leaves them: the split route's)
    if cov_.thin and (low := _certify_lowrank(cov_, uniq[0], given.get(uniq[0]), None, gram=gram)) is not None:
        # numerical rank <= 3: the exact spannogram at every k, as certify(k) gives it
        certs = {uniq[0]: low, **{k: _certify_lowrank(cov_, k, given.get(k), None) for k in uniq[1:]}}
        return [rescale(c, factors) for c in carry_envelope(ks, certs, given)]
    if n > S._DENSE_MAX_N:
        held = cov_.X is not None or cov_._A is not None
        # data held: path_large runs one-k's certificate (fit(auto) included) where it runs
        found = _large_lower(cov_, np.array(uniq), given)
        if held:  # the split runs (path_large.py)
            certs = path_large(cov_, np.array(uniq), given, found, effort, callback,
                               2 * _PATH_SPLIT_CAP, _large_monotone, _PATH_SPLIT_CAP)
            return [rescale(c, factors) for c in carry_envelope(ks, certs, given)]
        ub = np.inf
        for i, k in enumerate(reversed(uniq)):  # descending: a bound at k' >= k holds at k
            x, src = found[k]
            if k >= 2 * _PATH_SPLIT_CAP and np.isfinite(ub) and x is not None:
                # S is saturated (k_S = |S|) at every such k: its split bound is that of the
                # largest k again, up to the T part; the monotone bound serves instead
                c = _large_monotone(cov_, k, x, ub)
            else:
                # the branch and bound on S only at small k (where it closes in a few dozen nodes)
                c = _certify_large(cov_, k, x, effort, None, _PATH_SPLIT_CAP,
                                   branch_seconds=None if k <= 10 else 0.0)
            if src is not None:
                c.info["lower_source"] = src
            certs[k] = c
            ub = min(ub, c.upper_bound)
            if callback is not None:
                callback(i + 1, total)
        return [rescale(c, factors) for c in carry_envelope(ks, certs, given)]
    # certify(k)'s route at each k (route.split_cheaper, by cost): where it is the eager split route (thin data), its
    # own computation at every k, X's Gram and eigenpairs shared (the same floats): never looser than certify(k),
    # and cheaper than runs carried to other k there (72 x 1,000 genes: path_large 4,886 SVD units and 5 of 25 k
    # looser; certify(k) at every k ~3,700); the dense path at the other k
    for i, k in enumerate([k for k in uniq if split_cheaper(cov_, k, effort)]):
        certs[k] = certify_thin(cov_, k, given.get(k), effort, None, gram or None)
        if callback is not None:
            callback(i + 1, total)
    path_grown(cov_, certs, effort, gram or None)  # (a grown screen where the carried bound leaves a gap: route.py)
    for k in [k for k in uniq if k in given and k not in certs and split_pays(cov_, k, effort)]:
        certs[k] = sparse_route(cov_, k, given[k], effort, None, _certify_large)  # (certify(k, x)'s own)
    if rest := [k for k in uniq if k not in certs]:
        certs.update(_path_dense(cov_, np.array(rest), given, effort, callback))
    return [rescale(c, factors) for c in carry_envelope(ks, certs, given)]


def _path_dense(cov: Cov, uniq: np.ndarray, given: dict, effort: str, callback) -> dict:
    """:func:`certify_path` on a dense covariance; returns ``{k: Certificate}``."""
    t_all = time.perf_counter()
    pcfg = _PATH[effort]
    A = cov.dense()
    n = A.shape[0]
    p = uniq.size
    pos = {int(k): i for i, k in enumerate(uniq)}
    spec = _Spectral(A, 1)
    # ---- lower bounds for all k, then carried upward (feasible for k' <= k is feasible for k)
    LX, lows = _path_lower(cov, uniq, spec.U, given, saturate=True)
    src = ["ascent"] * p
    for i, k in enumerate(uniq):
        if int(k) in given:
            src[i] = "given"
    cheap = cheap_bounds(spec.spectrum(many_k=True), uniq)  # BOUNDS for every k at once
    exact = {}
    for k in uniq[uniq <= 2]:
        opt, xo = opt_pairs(Cov(None, A), int(k))
        exact[int(k)] = opt * (1 + 8 * _EPS) + 8 * _EPS * float(np.abs(A).max())
        i = pos[int(k)]
        if src[i] != "given" and opt > lows[i]:
            LX[:, i], lows[i] = xo, cov.quad(xo)
            src[i] = "exact(k<=2)"
    ub_cheap = np.minimum.reduce(list(cheap.values()))
    for k, v in exact.items():
        ub_cheap[pos[k]] = min(ub_cheap[pos[k]], v)
    ub_cheap_dnn = ub_cheap.copy()  # (without the anchored bounds: the DNN's ratio is read against these)
    env = np.full(p, np.inf)        # lower envelope of the DNN tangents
    own = {}                        # k -> (value, dnn info) of the DNN run at k
    states: dict[int, DnnState] = {}
    target = 1.0 - pcfg["target_gap"]
    scale = max(float(np.abs(A).max()), 1e-300)
    # the optimizer's Ritz steps as one certificate at k takes them (dual._dnn: the effort's ritz_r vectors, float32
    # below "full"; only the direction, never a bound): CBCL, one run, 7.3 -> 6.7 CPU s, the same minimum
    ritz = {"r": S._EFFORT[effort].get("ritz_r", 10), "ritz32": effort != "full"}

    def upper():
        u = np.minimum(ub_cheap, env)
        return np.minimum.accumulate(u[::-1])[::-1]  # monotone: a bound for k' >= k holds at k

    def run(k: int, polish: bool = False, goal: float | None = None, rounds: int | None = None,
            iters: int | None = None, refresh: int = 0, lr: float | None = None):
        """A DNN run at k (warm from the nearest k run), or (``polish``) more cutting-plane rounds on
        k's dual point: ``rounds`` of ``iters`` (default the effort's), stopping once the DNN at k
        certifies ``goal`` (default the target)."""
        i = pos[k]
        if lows[i] >= min(target, goal or target) * upper()[i]:
            return
        t0 = time.perf_counter()
        if polish:
            st0, lam0 = states[k]
            its = iters or pcfg["polish_iters"]
            st, val, dinfo = _cut_rounds(A, k, st0, own[k][0], float(lows[i]), goal or target,
                                         rounds or pcfg["polish_rounds"], iters=its,
                                         check_every=min(pcfg["check_every"], its // 2),
                                         stall=pcfg["stall"] / 3, min_iters=its // 2,
                                         decay=pcfg.get("decay", _DECAY), lam=lam0, refresh=refresh, lr=lr,
                                         **ritz)
            lam = dinfo.pop("lam")
            dinfo["init"] = "polish"
            prev = own[k]
            dinfo = {**prev[1], "polish": dinfo}
            finish_run(k, st, lam, dinfo, t0, prev[2])
            return
        # start from the nearest done k's dual point (its value at this k is its tangent,
        # already certified); the screening family at this k (15 eigenvalues) is tried too only
        # when that tangent is far from the lower bound, or when there is none yet
        st, init, lam = None, "screen", None
        if states:
            near = min(states, key=lambda kk: (abs(kk - k), kk))
            st0, lam0 = states[near]
            v_warm = float(dnn_tangent(lam0, st0, n, np.array([k]))[0])
            st = DnnState(st0.N.copy(), st0.nu, st0.U, st0.C, None if st0.w is None else st0.w.copy())
            init, lam = f"warm(k={near})", lam0  # the same dual matrix as st0
        if st is None or lows[i] < S._CUT_BELOW * v_warm:
            st_s = _screen_init(A, k, float(spec.w[0]))
            v_screen, lam_s = dnn_value_lam(A, k, st_s)
            if st is None or v_screen < v_warm:
                st, init, lam = st_s, "screen", lam_s
        lr = (_LR if init == "screen" else _LR_WARM) * scale
        st, val, dinfo = dnn_optimize(A, k, st, iters=pcfg["iters"], t_start=_T0 * scale,
                                      lr=lr, decay=pcfg.get("decay", _DECAY),
                                      t_end=_T1 * scale, check_every=pcfg["check_every"],
                                      target=target, lower=float(lows[i]), stall=pcfg["stall"],
                                      min_iters=pcfg["min_iters"], push=S._CUT_BELOW,
                                      push_stall=pcfg["stall"] / 3, t_iters=pcfg["min_iters"],
                                      start_lam=lam, **ritz)
        lam = dinfo.pop("lam")
        if pcfg["cut_iters"] and st.U is not None and lows[i] < min(target, S._CUT_BELOW) * val:
            # cutting-plane rounds along the k-support directions of this k's top Ritz vectors,
            # keeping the inherited cuts still in use (see _cut_rounds)
            st, val, cinfo = _cut_rounds(A, k, st, val, float(lows[i]), target, pcfg["cut_rounds"],
                                         iters=pcfg["cut_iters"], check_every=pcfg["check_every"],
                                         stall=pcfg["stall"], min_iters=pcfg["cut_iters"] * 2 // 3,
                                         decay=pcfg.get("decay", _DECAY), lam=lam, **ritz)
            cinfo.pop("exact_evaluations")
            lam = cinfo.pop("lam")
            dinfo["cuts"] = cinfo
        dinfo["init"] = init
        finish_run(k, st, lam, dinfo, t0, 0.0)

    def finish_run(k, st, lam, dinfo, t0, spent):
        """Record a DNN run's dual point at k (``lam``: its rigorous lambda_max bound, or None)."""
        i = pos[k]
        if lam is None:
            lam, _ = _dnn_lmax(A, st)
        tang = dnn_tangent(lam, st, n, uniq)
        np.minimum(env, tang, out=env)
        if k in own and own[k][0] <= tang[i]:  # a polish that did not help: keep the old point
            own[k] = (own[k][0], dinfo, spent + time.perf_counter() - t0)
            return
        states[k] = (st, lam)
        own[k] = (float(tang[i]), dinfo, spent + time.perf_counter() - t0)
        # the dual's Ritz vectors are good ascent starts at this k (not after a polish round: its point moved little
        # from the one whose vectors were tried; CBCL: no polish round's ascent raised a feasible value by > 1e-12)
        if src[i] != "given" and st.U is not None and "polish" not in dinfo:
            X0 = np.column_stack([LX[:, i]] + [_rank1_cols(sg * st.U[:, j], np.array([k]))[:, 0]
                                               for j in range(min(4, st.U.shape[1])) for sg in (1., -1.)])
            Xb, vb = _ascent_batch(cov, np.full(X0.shape[1], k), X0)
            jb = int(np.argmax(vb))
            if vb[jb] > lows[i]:
                LX[:, i], lows[i], src[i] = Xb[:, jb], vb[jb], "ascent(dnn)"
        if callback is not None:
            callback(len(own), max(len(own) + 1, p))

    grid = _grid_and_refine(uniq, pos, lows, target, pcfg, run, upper, refine=False)
    budget = S.path_budget([S.dense_run_cost(n, int(k), effort) for k in uniq], S._PATH_DENSE_RUNS_PER_K)
    tops: dict = {}  # (k -> the anchored call's top where that is what it proved: top_runs below)
    anchored, rest, spent, late = _anchored_and_branched(A, uniq, pos, lows, LX, ub_cheap, pcfg, upper, effort,
                                                   _ANCHOR_SHARE * budget, tops)
    # the refinement's runs, not where another bound (the anchored sums) already certifies the polish's goal at the
    # midpoint with a margin (CBCL k = 28, 34 at 0.982-0.983: the runs gained nothing there, 0.28 CPU s)
    refine_midpoints(uniq, pos, grid, lows,
                     lambda k: None if lows[pos[k]] >= _REFINE_SKIP * upper()[pos[k]] else run(k),
                     upper, pcfg["delta"], target)
    branched = rest(lambda i: min(ub_cheap_dnn[i], env[i]))
    def deepen(k0: int, stall: float) -> None:
        """certify(k)'s DNN iterations (the effort's) more on the path's dual point at k0, warm, stopping at the first
        check gaining less than ``stall`` (relative) or at the target (path_parity.flat_points picks k0)."""
        st0, lam0 = states[k0]
        t0 = time.perf_counter()
        st = DnnState(st0.N.copy(), st0.nu, st0.U, st0.C, None if st0.w is None else st0.w.copy())
        st, _, dinfo = dnn_optimize(A, k0, st, iters=S._EFFORT[effort]["iters"], t_start=_T0 * scale,
                                    t_end=_T1 * scale, lr=_LR_WARM * scale, decay=pcfg.get("decay", _DECAY),
                                    check_every=pcfg["check_every"], target=target, lower=float(lows[pos[k0]]),
                                    stall=stall, min_iters=pcfg["check_every"], t_iters=pcfg["min_iters"],
                                    start_lam=lam0, **ritz)
        lam = dinfo.pop("lam")
        dinfo["init"] = "flat"
        finish_run(k0, st, lam, {**own[k0][1], "polish": dinfo}, t0, own[k0][2])

    def carry(st, lam):  # a one-k run's dual point: its bound at every k (dnn_tangent)
        if lam is None:
            lam, _ = _dnn_lmax(A, st)
        np.minimum(env, dnn_tangent(float(lam), st, n, uniq), out=env)

    # certify(k)'s own runs within the floor (_settings._PATH_FLOOR: a small problem runs it wherever its
    # gap is open); on larger ones the polish below closes the gaps for less (CBCL: 30 runs, 2 CPU s,
    # with the path's whole budget; 16 with a quarter, 1 s: the same certified ratios and bounds)
    onek = one_k_runs(cov, uniq, pos, lows, LX, src, ub_cheap, given, upper, effort,
                       min(budget - spent, S._PATH_FLOOR), carry)
    accept = 1.0 - S._EFFORT[effort].get("accept_gap", pcfg["target_gap"])
    if pcfg["polish_runs"]:
        _polish(A, uniq, pos, lows, upper, states, own, run, env, ub_cheap, branched, pcfg, effort)
        # the mu = 0 points bounding a band of k below the accepted ratio from a larger k: more iterations there
        # (path_parity.flat_points; CBCL k0 = 361 bounds k = 85..361, where certify(k)'s own went 3.5e-5 below)
        deepen_flat(uniq, pos, lows, upper, states, lambda st, lam: dnn_tangent(lam, st, n, uniq), accept, deepen)
    # certify(k)'s own runs again where the DNN bound is carried from far (path_parity.py), then certify(k)'s first DNN
    # start, the KKT point of the feasible point, where it can lower the bound (path_kkt.py)
    far = partial(far_runs, uniq, pos, lows, upper, lambda: env <= ub_cheap, set(states) | set(onek), lo_ratio=GOAL,
                  hi_ratio=accept)
    onek.update(one_k_runs(cov, uniq, pos, lows, LX, src, ub_cheap, given, upper, effort,
                            _FAR_SHARE * min(budget - spent, S._PATH_FLOOR), carry, order=far))
    kkt_carry(A, uniq, pos, lows, LX, upper, carry)
    # last, certify(k)'s anchored call at the k its tries skipped, then certify(k)'s own computation at every 8th k the
    # path left below the polish's goal, each followed along the k where it helps (path_parity.parity_runs; "auto" only)
    if effort == "auto":
        late()
        onek.update(one_k_runs(cov, uniq, pos, lows, LX, src, ub_cheap, given, upper, effort, np.inf, carry,
                                order=lambda one, cost, budget: parity_runs(uniq, pos, lows, upper, onek, one,
                                                                            _PARITY_STRIDE, GOAL)))
        late(after=True)  # (last: the bounds before it are as they were, float for float; it only lowers them)
        # then certify(k)'s own run where the path's bound is still its anchored call's top, lows / 0.975 from the path's
        # own feasible value (path_parity.top_runs)
        onek.update(one_k_runs(cov, uniq, pos, lows, LX, src, ub_cheap, given, upper, effort, np.inf, carry,
                                order=lambda one, cost, budget: top_runs(tops, pos, upper, onek, one)))
        # last, certify(k)'s own DNN where the bound is still a tangent carried from another k below the polish's goal
        # (path_parity.dnn_runs: certify(k)'s short run is noisy in k and dips below such a line at lone k)
        dnn_runs(A, uniq, pos, lows, upper, lambda: env <= ub_cheap, set(onek) | set(states), ub_cheap, carry, effort,
                 GOAL)
    return path_certificates(uniq, lows, LX, src, upper(), env, cheap, exact, own, anchored, branched,
                             onek, spec, n, t_all, callback)

def _polish(A, uniq, pos, lows, upper, states, own, run, env, ub_cheap, branched, pcfg, effort) -> None:
    """The path's last step (:func:`.path_dense_polish.polish_to_goal`): the DNN dual points it holds,
    polished where the certified ratio is below 0.98 (with the anchored branching where the DNN stalls),
    then where the DNN gives the bound, to GOAL2; "full" polishes the k below 0.98 to its target instead
    (at most ``polish_runs`` x ``polish_rounds`` rounds of ``polish_iters``, as before).  Lowers ``ub_cheap`` and fills
    ``branched`` in place."""
    n, p = A.shape[0], uniq.size

    def branch(k: int, tau: float) -> float:
        """The anchored row sums with branching at ``tau`` (:func:`.anchor.anchored_branch_bound`,
        at most ``branch_nodes`` nodes); returns its cost counted in DNN iterations."""
        tb = anchored_branch_bound(A, k, [tau], budget=pcfg["branch_nodes"], node_iters=_BRANCH_NODE_ITERS)
        if tb is not None:
            branched[k] = min(branched.get(k, np.inf), tb)
            ub_cheap[pos[k]] = min(ub_cheap[pos[k]], tb)
        return float(pcfg["branch_nodes"]) * S.anchor_cost(n, k) / (S._DNN_PASSES * float(n) * n) / 10

    first = pcfg["iters"] + pcfg["cut_rounds"] * pcfg["cut_iters"]
    # the first tier's rounds as one run renewing its cuts (path_dense_polish.REFRESH): fewer iterations for the
    # same bound
    worked: set = set()
    sched = ({"refresh": _PP.REFRESH, "lr": _PP.REFRESH_LR, "round_iters": _PP.REFRESH_ITERS} if _PP.REFRESH
             else {})
    if effort == "full":
        target = 1.0 - pcfg["target_gap"]
        polish_to_goal(uniq, pos, lows, upper, states, own, run, below=S._POLISH_BELOW + 1e-4, goal=target,
                       budget=float(pcfg["polish_runs"] * pcfg["polish_rounds"] * pcfg["polish_iters"]),
                       first_run=first, round_iters=pcfg["polish_iters"])
        return
    polish_to_goal(uniq, pos, lows, upper, states, own, run, below=S._POLISH_BELOW + 1e-4,
                   budget=_POLISH_ITERS_PER_K * p, first_run=first,
                   branch=branch if pcfg["branch_nodes"] else None, worked=worked, near=_PP.NEAR, **sched)
    # then, with a smaller budget, the dual points the path holds where the DNN gives its bound,
    # to GOAL2: certify(k)'s fresh DNN at k (80 iterations, two cut rounds) certified CBCL k = 65..71
    # 0.982-0.983 where the tangents carried from k = 64 / 67 gave 0.981 (5 k looser, up to 1.6e-3); with restarting
    # rounds (with the first tier's renewing ones CBCL k = 68..71 stayed up to 1.35e-3 above certify(k)); not where
    # the first tier worked: there the path's dual point, from a run like certify(k)'s, needed a polish to reach 0.98
    # (CBCL k = 8..21, 53..56: certify(k) 0.970-0.978), and the second tier spent half its budget at k = 13..21
    # ... nor next to one (k +- 1): the first tier's weak spot spans neighbouring k (CBCL k = 17 next to a polished 16:
    # two rounds, 0.18 CPU s, 0.98024 -> 0.98163 where certify(17) certifies 0.972; the tier's parity with
    # certify(k)'s fresh DNN matters where that DNN is tight, k = 65..78 here, which it still polishes)
    polish_to_goal(uniq, pos, lows, upper, states, own, run, below=GOAL2, goal=GOAL2 + 5e-4,
                   budget=_POLISH2_ITERS_PER_K * p, first_run=first,
                   where=lambda k: (k in states and not worked.intersection((k - 1, k, k + 1))
                                    and env[pos[k]] <= ub_cheap[pos[k]]))


def _anchored_and_branched(A, uniq, pos, lows, LX, ub_cheap, pcfg, upper, effort, budget,
                           tops: dict | None = None) -> tuple[dict, object, float]:
    """Anchored row sums at k >= 3 where they cost at most a DNN run (``anchor_ok``), tried where the
    path's bound leaves the largest gap per counted cost (``anchor_cost``) first, within ``budget``
    (:func:`.path_large.gap_runs`; no sparsity limit): the bisection one certificate at k would make
    (below its target, effort not "full": :func:`.dual._anchored`, the same call, so the path is as
    tight as one k there; where certify(k)'s forecast says it fails, not), then finer.  Lowers
    ``ub_cheap`` in place; returns ``(anchored, rest, spent, late)``.

    ``rest(dnn_ub) -> branched``, called after the DNN's refinement (which then sees these bounds:
    CBCL's refinement runs at k = 28..39 and 4, where the anchored sums give the bound, are not made;
    before, they cost ~0.4 CPU s): at the k tried, a bisection below the path's bound wherever it
    certifies less than ``_CUT_BELOW``, and where the DNN's own ratio (``dnn_ub(i)``) is below
    ``_CUT_BELOW``, branch and bound on the support (a few dozen nodes at CBCL's k = 5..7) to prove the
    polish's goal (``lows / GOAL``); ``branched`` as :func:`.path_dense_polish.weak_branch`.  ``late()``, the path's
    last step: the same call, unbudgeted, where no test ran (:func:`.path_parity.parity_runs`).  ``tops`` (optional, filled
    in place): the k whose call proved its top (``lows / _DNN_SKIP_AT``) and nothing below, with that top
    (:func:`.path_parity.top_runs`)."""
    n = A.shape[0]
    one_k = 1.0 - S._EFFORT[effort]["target_gap"] if effort != "full" else -np.inf
    anchored, weak = {}, set()

    def try_at(k: int, rules: bool = True) -> None:
        if rules and fails[0] >= _ANCHOR_STOP_FAILS:  # (not in ``done``: as if the budget had ended here)
            return
        below = sorted(j for j in ran if j < k)[-_ANCHOR_FAILED_BELOW:]
        if rules and len(below) == _ANCHOR_FAILED_BELOW and not proved.intersection(below):
            return done.append(k)  # (a decision only: a try proves a bound or nothing)
        i = pos[k]
        lo, ub_i = float(lows[i]), float(upper()[i])
        # certify(k)'s own call (the same bracket and resolution: from the same feasible value, the same
        # bound; a wider, finer bisection proved less at CBCL k = 38..41, its tests warm-started otherwise)
        # certify(k)'s forecast first (dual._forecast_fails on the path's point: ~1/5 of a failing test; CBCL
        # k = 57..110: 54 tests failed after 8-14 ms each, certify(k) skips them by the same forecast)
        # ... but not next to a k whose test proved something: there the test is run at once (a forecast only spares
        # a failing test: the same bound or a tighter one; CBCL k = 22..56: ~40 forecasts that passed, ~0.1 CPU s)
        carry: dict = {}
        # (``rules`` off, the late tries: wherever the bound is above the least the call can prove, anchored_floor)
        run_it = (lo < one_k * ub_i if rules else ub_i > anchored_floor(lo, _ANCHOR_REL)) and (
            bool(proved.intersection((k - 1, k + 1)))
            or not (_forecast_fails(A, k, LX[:, i], lo / _DNN_SKIP_AT, S._EFFORT[effort]) and not dropped.add(k)
                    and not failed.__setitem__(k, lo / _DNN_SKIP_AT)))
        found = [_anchored(A, k, lo, np.inf, rel_tol=_ANCHOR_REL, top_ratio=_DNN_SKIP_AT, top_first=True,
                           carry=carry) if run_it else None]  # (ub_cheap keeps the smaller)
        if found[0] is not None and lo < (1 - _ANCHOR_FINE) * found[0]:
            finer[k] = (found[0], carry)  # (after the refinement: rest())
        if run_it:
            ran.add(k)
            fails[0] = 0 if found[0] is not None else fails[0] + 1
            failed[k] = max(failed.get(k, -np.inf), carry.get("tau", -np.inf))  # (its last failed test)
        if found[0] is not None:
            proved.add(k)
        found = [v for v in found if v is not None]
        done.append(k)
        if found:
            anchored[k] = min(found)
            ub_cheap[i] = min(ub_cheap[i], anchored[k])
            if tops is not None and found[0] == lo / _DNN_SKIP_AT:  # (its top held, nothing below: top_runs)
                tops[k] = found[0]
        return None if rules else bool(found)  # (gap_runs would charge a number returned)

    done: list = []
    proved, ran, dropped = set(), set(), set()  # the k whose try proved a bound / whose test ran / forecast to fail
    fails = [0]  # the tries in a row whose test ran and proved nothing
    failed: dict = {}  # k -> the largest tau whose test failed (or was forecast to fail) there
    finer: dict = {}  # k -> (certify(k)'s anchored bound, its call's last failed test)
    tried = np.array([int(k) for k in uniq if anchor_ok(n, int(k))], dtype=int)
    spent = gap_runs(tried, pos, lows, upper, try_at, lambda k: S.anchor_cost(n, k), budget)

    def rest(dnn_ub):
        # after the DNN's refinement: the wider bisection below the path's bound and the branching where the DNN
        # certifies less than _CUT_BELOW
        for k in done:
            i = pos[k]
            lo, ub_i = float(lows[i]), float(upper()[i])
            if k in finer and ub_i > finer[k][1]["tau"]:
                # finer, from certify(k)'s call's last failed test (valid above it): its 1e-3 steps left LRS
                # k = 3..9 at 0.9990 where a finer bisection proves 0.9999 (anchor.anchored_bisection: ``hi``
                # proved); only where it can lower the path's bound (what it proves lies above that failed
                # test: CBCL, where the DNN's refinement went below it, 0.25 -> ~0.1 CPU s).  At every such k (was: below
                # the polish's goal or within two steps of optimal): the test does not depend on the feasible value, so
                # the finer steps bring the path near what the test proves, below certify(k)'s coarse steps from
                # another feasible value (24 x 24 images k = 17; CBCL: the same 40 calls, 26 bounds lower, k = 5, 23..47)
                top, c = finer[k]
                old = lo < GOAL * ub_i or ub_i <= lo * (1 + 2 * _ANCHOR_REL)  # (the k finer before, as before)
                tb = anchored_bisection(c["rows"], lo, top, _ANCHOR_FINE if old else _ANCHOR_FINE_TOP, tau_lo=c["tau"],
                                        r_lo=c["r"])[0]
                anchored[k] = min(anchored.get(k, np.inf), tb)
                ub_cheap[i] = min(ub_cheap[i], tb)
                ub_i = float(upper()[i])
            if lo < S._CUT_BELOW * dnn_ub(i):
                weak.add(k)
            if lo < S._CUT_BELOW * ub_i:
                tb = anchored_rowsum_bound(A, k, lo, ub_i)
                if tb is not None:
                    anchored[k] = min(anchored.get(k, np.inf), tb)
                    ub_cheap[i] = min(ub_cheap[i], tb)
        return weak_branch(A, uniq, pos, lows, ub_cheap, pcfg, upper, weak, anchored, _BRANCH_NODE_ITERS)

    def after_dnn(k: int) -> bool:
        # certify(k)'s bisection after its DNN, at the path's bound, where no test failed at or above it
        i = pos[k]
        lo, ub_i = float(lows[i]), float(upper()[i])
        ok = ub_i > max(anchored_floor(lo, _ANCHOR_REL), failed.get(k, -np.inf))
        tb = after_dnn_anchored(A, k, lo, ub_i, _ANCHOR_REL, _ANCHOR_FINE_TOP, LX[:, i], S._EFFORT[effort]) if ok else None
        if tb is not None:
            anchored[k] = min(anchored.get(k, np.inf), tb)
            ub_cheap[i] = min(ub_cheap[i], tb)
        return tb is not None

    # the late tries: certify(k)'s call wherever its test never ran (budget, stop rules) nor was forecast to fail;
    # late(after=True), the path's very last step: certify(k)'s bisection after its DNN (path_parity.after_dnn_anchored)
    return anchored, rest, spent, lambda after=False: (
        parity_runs([k for k in tried if k not in proved], pos, lows, upper, (), after_dnn, 1, _AFTER_DNN_BELOW) if after
        else parity_runs([k for k in tried if k not in ran | dropped], pos, lows, upper, (),
                         partial(try_at, rules=False), _PARITY_STRIDE))

