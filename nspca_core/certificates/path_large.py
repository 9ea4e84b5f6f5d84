""":func:`~nspca_core.certificates.certify_path` on large n (``n > _DENSE_MAX_N``): the one-k split
certificates at a few k, and the bound each of them proves at every other k.

Why this is as tight as one k and cheaper than k by k
-----------------------------------------------------
At a *run* k the path calls exactly what ``certify(k)`` calls (:func:`.single._certify_large`, the
same screened set S, effort and, when the caller gave no point, the same search for one), so there
its upper bound is at most ``certify(k)``'s and its feasible value at least ``certify(k)``'s (the
path then also takes the better of its own point and the run's, and the smaller of the bounds).

Every run also proves a bound at *every other* k (:func:`coupled_curve`): the split bound's proof
(:func:`.single._certify_split`) holds for any sparsity k once ``B_S(i)`` bounds the S part at each sparsity i and
``B_T(j)`` the rest T at each j.  The S part's DNN dual point gives ``B_S(i)`` at every i
(:func:`nspca_core.certificates.dnn.dnn_tangent`: its dual matrix does not depend on the sparsity), and ``B_T(j)``
costs one thin SVD of ``X_T``.  Runs are made on a geometric grid of k (their bounds carried to every k), then
(:func:`gap_runs`) at the k where the bound carried so far leaves the largest gap to the feasible value per counted
cost of a run there (``_settings.split_run_cost``: the screened set grows with k), while the costs fit in the path's
budget (``_settings.path_budget``).  No sparsity limit decides where: a k whose carried bound is looser than
certify(k)'s shows a larger gap than its neighbours and is run when its cost allows; first where the carried bound is
above the chord of the runs' own bounds at the nearest run k on either side (the relaxation's value is concave in k:
below the chord a run rarely gains).  The feasible points of the k not run are then raised by one batched ascent from
the runs' answers (:func:`lower_from_runs`).  Then the runs' aimed refinements are carried to the k between them
(:func:`.path_carry.carry_runs`: joint anchored tests on a run's S at the sparsities k's binding terms need, as
certify(k) runs on its own S), and last certify(k)'s own run where the bound is still above its forecast
(:func:`match_runs`) and at every k above the runs' range (never looser than certify(k) there).
:func:`~nspca_core.certificates.monotone.monotone_envelope` then carries every bound to smaller k.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from ..operators.cov import Cov
from ..result import Certificate
from . import _settings as S
from .bounds import _rest_curve, _thin_spectrum, cheap_bounds
from .coupled import small_screen
from .cross import cross_table
from .deep_s import DEEP_EFFORTS, _DEEP_SHARE, deepen_runs
from .dnn import dnn_tangent
from .dual import _cut_rounds
from .lower import _ascent_batch, _rank1_cols
from .path_carry import carry_runs, coupled_curve
from .path_large_points import one_k_too
from .route import _certify_large
from .single import _finish

# the polish of the runs' S duals (:func:`polish_runs`): its budget beside the runs' (a share of theirs), the DNN
# iterations of one cutting-plane round, and the relative gain below which a run is polished no more.
# MLL (72 x 12,582), "auto": four more rounds of 40 lowered certify(k)'s own S bound by 0.4% at k = 62
# (5 SVD units against the run's 12) and 0.9% at k = 200 (49 against 83), more than certify(k) differs
# from one k to the next (+-0.3%: the carried tangents were looser than certify(k) at 13 of 50 k)
_POLISH_SHARE = 0.45
_POLISH_ITERS = {"fast": 0, "auto": 40, "full": 0}
_POLISH_STOP = 3e-4
# a run set aside after two small rounds is taken up again once no other run is left (False: dropped, the
# former rule, whose rounds hinged on when the two small ones came; issue39_wide21.txt)
_TAKE_UP = True
# the share of the path's budget left to the polish however much the grid's runs did beyond their counted
# cost (golub-shaped at load ~8: 0.4 -> 0.2, 1,967 -> 1,902 SVD units, min 0.9701 -> 0.9662; dlbcl-shaped
# 1,110 -> 1,066, min 0.9595 -> 0.9580; MLL untouched: its grid does what it is counted), and the share of
# the polish's budget spent first on the worst-certified k (raise_worst)
_AFTER_GRID = 0.2
_RAISE_SHARE = 0.5
# the last runs (match_runs): where the path's bound is above certify(k)'s forecast bound (the own runs'
# certified ratios interpolated in k, less the margin), on top of the path's budget, at most this share of it.
# golub-shaped (load ~12): 2.5 -> 5 runs, 1,607 SVD units, looser than certify(k) at 5 of 158 k; 3.5 -> 7
# runs, 1,945 units, 3 of 182 (was 1,209 units, 15 of 182): certify(k) at k ~ 140 costs ~105 units there
# (72% its aimed refinements, 59 anchored tests) and a run closes little more than its own k.  MLL: none
_MATCH_SHARE = 3.0
# the carried refinements (path_carry.carry_runs) before the last runs: at most this share of the path's budget
# (counted: each joint test as one anchored bisection, path_carry.carry_runs).  golub-shaped (every k between
# runs, 144): 2.4 budgets counted, ~18 CPU s (~700 SVD units) at load 7, looser than certify(k) 10 -> 1 of 199 k
# and no last run left to make; dlbcl-shaped 3.1 budgets counted, ~15 CPU s (~400 units), 0 of 199.  Gated by the
# forecast (path_carry._CARRY_GATE), 1 budget: golub-shaped spends 0.75 (40 k better), dlbcl-shaped 1 for no k
# (at 3: 2.4, 1 k better by little; 1,217 -> 1,097 SVD units)
_CARRY_SHARE = 1.0
# match_runs decides on the bound before the carry at the k where the carry gained less than this (relative)
_CARRY_TRUST = 1e-3
# match_runs' forecast: the runs' interpolated certified ratios plus this (a negative margin): certify(k) between
# runs can prove more than the interpolation (a 60 x 5,000 gene-shaped stand-in: 0.2% at k = 20).  In one run:
# 2e-4: stand-in 1,479 SVD units, looser than certify(k) at 11 of 199 k; golub-shaped 1,171 units, 1 of 199.
# -1e-3: stand-in 1,648 units, 4 (<= 0.07%); golub 1,751 units, 0.  -2e-3: stand-in 1,865, 0; golub 2,373 (over
# the 2,000 target), 0; dlbcl-shaped 1,070 and MLL 1,225 units, 0 at both (benchmarks/results/issue39_lead6.txt)
_MATCH_MARGIN = -1e-3


def path_large(cov: Cov, uniq: np.ndarray, given: dict, found: dict, effort: str, callback,
               saturated: int | None = None, monotone=None, capped: int | None = None) -> dict:
    """``{k: Certificate}`` for every k in ``uniq`` (sorted, unique) on large n.

    ``found``: ``{k: (x, source)}``, the path's points (a caller's x: source None); ``given``: the caller's by k.
    ``capped``: above run_max (twice the k where one-k's screen stops growing) the first runs screen at most this many
    features at the path's point; last, every k above run_max gets certify(k)'s own run (the smaller bound stands).
    ``saturated``, ``monotone``: from this k a k not run gets ``monotone(cov, k, x, ub)`` (:func:`assemble`).
    """
    t_all = time.perf_counter()
    n = cov.n
    uniq = np.asarray(uniq, dtype=int)
    pos = {int(k): i for i, k in enumerate(uniq)}
    p = uniq.size
    kmax = int(uniq[-1])
    lows = np.array([cov.quad(found[int(k)][0]) if found[int(k)][0] is not None else -np.inf for k in uniq])
    xs = [found[int(k)][0] for k in uniq]
    src = [found[int(k)][1] or "given" for k in uniq]
    cheap = {}
    if cov.X is not None and cov.thin:
        cheap = cheap_bounds(_thin_spectrum(cov.X, cov.X.shape[0], diag=cov.diag(), many_k=True), uniq)
    runs: dict[int, Certificate] = {}  # the run's certificate
    kept: dict[int, dict] = {}  # the run's S part (its dual point: polish_runs continues it)
    keeps: dict[tuple, dict] = {}  # (k, screen) -> a run's keep (carry_runs: its refinements carried to other k)
    curve = np.full(p, np.inf)     # the smallest run bound carried to each k
    BT_cache: dict[bytes, np.ndarray] = {}
    sat = np.inf if saturated is None or monotone is None else saturated
    # no runs past twice the k at which one-k's S stops growing (a run there costs a DNN on the
    # whole saturated S at a large sparsity): the runs' bounds carried there serve instead
    cfg = S._EFFORT[effort]
    run_max = 2 * cfg["split_size"] // cfg.get("split_per_k", S._SPLIT_PER_K)
    open_ks = uniq[((uniq < sat) | (uniq == kmax)) & (uniq <= run_max)]
    open_ks = open_ks if open_ks.size else uniq[:1]
    m = cov.X.shape[0] if cov.X is not None else n
    cost = {int(k): run_cost(m, n, int(k), effort) for k in open_ks}
    budget = S.path_budget(list(cost.values()), S._PATH_SPLIT_RUNS_PER_K)
    total = [len(open_ks)]
    charges: dict[int, tuple[float, float]] = {}  # run k -> (split_run_cost, run_charge)

    def run(k: int, cap: int | None = None, carry: bool = False) -> float:
        """certify(k)'s run at k (``cap``: a capped one; both screens where _SMALL_FIRST); its counted cost."""
        i = pos[k]
        keep: dict = {}
        extended = False
        small = {} if S._SMALL_FIRST and cap is None else None  # (certify(k) may take either; both carried)
        if cap is None:  # the caller's point, else one-k's own search (x=None), as certify(k) does
            c = _certify_large(cov, k, given.get(k), effort, None, keep=keep, both=small is not None,
                               small_keep=small)
        else:
            c = _certify_large(cov, k, xs[i], effort, None, cap, branch_seconds=0.0, keep=keep)
        runs[k] = c = one_k_too(cov, k, given.get(k), effort, c, keep, small) if cap is None else c
        if c.x is not None and c.lower > lows[i]:
            lows[i], xs[i], src[i] = c.lower, c.x, c.info.get("lower_source", "split")
        for tag, kp in ((0, keep), (1, small or {})):  # (the smaller screen's carried as the larger one's)
            if not kp:
                continue
            C = kp.get("cross")
            if (tag == 0 and carry and C is not None and (C.shape[0] <= min(kp["S"].size, kmax) or C.shape[1] <= kmax)
                    and S.refine_pays(m, n, kp["S"].size, kp["T"].size, kmax, effort)):
                # a grid run's table extended to every sparsity the carried curve uses, where it pays at kmax
                kp["cross"] = cross_table(cov, kp["S"], kp["T"], min(kp["S"].size, kmax), kmax)
                extended = True
            np.minimum(curve, coupled_curve(kp, rest_of(cov, kp, kmax, BT_cache), uniq), out=curve)
            keeps[(k, tag)] = kp
            if kp.get("stS") is not None and (tag == 0 or not keep):  # (the smaller S polished where it stood)
                kept[k] = kp
        if callback is not None:
            callback(len(runs), max(total[0], len(runs) + 1))
        base = cost[k] if k in cost else S.split_run_cost(m, n, min(_screened(n, k, effort), cap or n), effort)
        if small is not None and not keep:  # (the larger screen not run: the smaller one's cost)
            base = S.split_run_cost(m, n, small_screen(n, k, _screened(n, k, effort)) or 0, effort)
        charges[k] = (base, run_charge(keep, m, extended) + (run_charge(small, m, False) if small else 0.0))
        # (a path within the floor runs certify(k) wherever its gap is open: the floor's promise)
        return base + (charges[k][1] if budget > S._PATH_FLOOR else 0.0)

    def predict(k: int) -> float:
        """certify(k)'s counted cost, its run_charge as the nearest run's in proportion (the
        anchored refinements: none on MLL at k = 52, 49 at golub-shaped k = 200)."""
        near = min(charges, key=lambda kk: (abs(kk - k), kk))
        return cost[k] * (1.0 + charges[near][1] / charges[near][0])

    def upper() -> np.ndarray:
        u = curve.copy()
        for vals in cheap.values():
            np.minimum(u, vals, out=u)
        for k, c in runs.items():
            u[pos[k]] = min(u[pos[k]], c.upper_bound)
        return np.minimum.accumulate(u[::-1])[::-1]  # a bound at k' >= k holds at k

    extra = 0.0  # what the capped and grid runs did beyond their split_run_cost (run_charge)
    if capped is not None:
        for k in uniq[(uniq > run_max) & ((uniq < sat) | (uniq == kmax))]:
            if xs[pos[int(k)]] is not None:
                extra += run(int(k), capped) - S.split_run_cost(m, n, min(_screened(n, int(k), effort), capped),
                                                                  effort)
    # a geometric grid of k (each run's bound is carried to every k), then certify(k)'s own run where
    # the carried bound leaves the largest gap per counted cost (gap_runs)
    grid = geometric_grid(open_ks, S._PATH_LARGE_GRID)
    for k in sorted(grid, reverse=True):
        extra += run(k, carry=True) - cost[k]
    # the gap runs charged what they did (run_charge), within the budget less the grid's counted cost and
    # the polish's share (none within the floor: there every open k is run); the polish has the rest
    # (MLL: with its share on top of the runs' whole budget, the runs at k >= 166 were left unpolished and
    # the path 0.2-0.3% looser than certify(k) at 178..198), its share less what the grid's runs did beyond
    # their counted cost, down to _AFTER_GRID of it (golub-shaped: certify(200)'s and certify(133)'s
    # anchored refinements counted 1.5 x the budget, 1,200 of the path's 2,000 SVD units; the polish
    # then spent its whole share, 320 units, on runs whose binding terms are those refinements)
    share = _POLISH_SHARE if _POLISH_ITERS.get(effort) and budget > S._PATH_FLOOR else 0.0
    spent = sum(cost[k] for k in grid)
    spent += gap_runs(open_ks, pos, lows, upper, run, cost.__getitem__, (1 - share) * budget - spent, done=grid,
                      expect=lambda: chord_expect(uniq, runs, lows))
    polished: dict = {}
    left = max(budget - spent - extra, share * max(budget - extra, _AFTER_GRID * budget))

    def polish(sub: dict, allowed: float, take_up: bool = True) -> float:
        return polish_runs(cov, uniq, pos, lows, upper, sub, curve, lambda keep: BT_cache[keep["T"].tobytes()],
                           _POLISH_ITERS.get(effort, 0), allowed, polished, take_up)

    if share:  # first the worst-certified k (run there, then polished), then every run by gap and span;
        # on top of the polish's budget as far as the grid's runs did no more than counted (MLL: taken
        # from it, the runs at k >= 166 were left unpolished again), else out of it (golub-shaped: on
        # top, 150-200 SVD units more for a minimum already above 0.96)
        # (no run taken up again there: the worst k's runs share one budget in turn, and golub-shaped k = 54 taken
        # up left k = 93 a round short, the path -1.2e-4 at k = 97 / 98)
        raised = raise_worst(open_ks, pos, lows, upper, runs, kept, run,
                             lambda sub, allowed: polish(sub, allowed, False), _RAISE_SHARE * left, predict)
        left -= raised * min(1.0, extra / budget)
    polish(kept, left)
    deepened: dict = {}  # issue 39 (deep_s): long DNN runs on S where S binds, worst-certified k first
    if effort in DEEP_EFFORTS:
        deepen_runs(cov, uniq, lows, upper, kept, curve,
                    lambda keep, at: coupled_curve(keep, BT_cache[keep["T"].tobytes()], at), _DEEP_SHARE * budget,
                    deepened)
    lower_from_runs(cov, uniq, xs, lows, src, sorted(runs))
    # the runs' aimed refinements carried to the k between them (joint anchored tests on a run's S at
    # the sparsities k's terms need), then certify(k)'s own run where the bound is still above its forecast
    before = upper()
    carried = carry_runs(cov, uniq, pos, lows, upper, keeps, lambda keep: BT_cache[keep["T"].tobytes()], curve,
                         [k for k in open_ks if int(k) not in runs], _CARRY_SHARE * budget
                         if budget > S._PATH_FLOOR else 0.0, own=runs)
    # last, certify(k)'s own run wherever the path's bound may still be above what certify(k) proves (the
    # runs' own certified ratios interpolated: a forecast that only decides where, never proves)
    back = carry_back(before, upper())
    match_runs(open_ks, pos, lows, lambda: upper() * back, runs, run, predict,
               _MATCH_SHARE * budget if budget > S._PATH_FLOOR else 0.0)
    # last, certify(k)'s own run above run_max, but where open_ks' uncapped runs made it: never looser than it by
    # construction (MLL 689: 0.9255, certify's 0.9444); a capped run's bound stands where smaller
    own = {int(k) for k in open_ks} & set(runs)
    for k in (int(k) for k in uniq[uniq > run_max] if int(k) not in own):
        prior = runs.get(k)
        run(k)
        if prior is not None and prior.upper_bound < runs[k].upper_bound:
            runs[k] = prior
    return assemble(cov, uniq, runs, curve, cheap, upper(), lows, xs, src, sat, monotone,
                    {"path_runs": sorted(runs), "path_polished": polished, "path_deepened": deepened,
                     "path_carried": carried}, t_all)


def carry_back(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """The factor (>= 1) by which :func:`match_runs` reads the path's bounds: ``before / after`` where the
    carry (:func:`.path_carry.carry_runs`) gained less than :data:`_CARRY_TRUST` (relative), else 1.  A
    carried test may take a k below the forecast without reaching certify(k); there the last runs decide
    on the bound from before the carry.  Only where to run is decided by it, never a bound."""
    back = np.ones(after.size)
    little = np.isfinite(before) & (after > 0) & (after >= before * (1 - _CARRY_TRUST))
    back[little] = before[little] / after[little]
    return back


def assemble(cov: Cov, uniq, runs: dict, curve, cheap: dict, ub, lows, xs, src, sat, monotone, extra: dict,
             t_all: float) -> dict:
    """``{k: Certificate}`` from the path's bounds (:func:`path_large`): a run k's own bounds, the
    cheap ones, the carried curve (``split(tangent)``) and ``ub`` (the smallest at any k' >= k,
    ``monotone``); from ``sat`` on (not run) ``monotone(cov, k, x, ub)``.  ``extra``: added to each info."""
    p = uniq.size
    share = (time.perf_counter() - t_all) / p
    out = {}
    ub = np.array(ub, dtype=float)
    for i in range(p - 1, -1, -1):
        k = int(uniq[i])
        if k >= sat and k not in runs and xs[i] is not None and np.isfinite(ub[i]):
            out[k] = monotone(cov, k, xs[i], float(np.min(ub[i + 1:], initial=np.inf)) if i + 1 < p else ub[i])
            out[k].info["lower_source"] = src[i]
            ub[i] = min(ub[i], out[k].upper_bound)
            continue
        bounds = {name: float(v[i]) for name, v in cheap.items()}
        info: dict = {"n": cov.n, "lower_source": src[i]}
        if k in runs:
            c = runs[k]
            bounds.update(c.bounds)
            info = {**c.info, "lower_source": src[i]}
        if np.isfinite(curve[i]) and curve[i] < min(bounds.values(), default=np.inf):
            bounds["split(tangent)"] = float(curve[i])
        if ub[i] < min(bounds.values(), default=np.inf):
            bounds["monotone"] = float(ub[i])
        info.update(extra)
        out[k] = _finish(bounds, float(lows[i]), xs[i], k, time.perf_counter() - share, info)
    return out


def match_runs(ks, pos, lows, upper, own: dict, run, predict, budget: float) -> float:
    """certify(k)'s own run (``run(k)``, its counted cost returned) at the k of ``ks`` not run yet
    whose bound (``upper()[pos[k]]``) is above what certify(k) is forecast to prove, the largest excess
    per predicted counted cost (``predict(k)``) first, while the counted costs fit in ``budget``;
    returns what was spent.  ``own``: ``{k: Certificate}`` of the runs so far (filled by ``run``; those
    at a k of ``ks`` are certify(k)'s own computation).

    The forecast: certify(k)'s certified ratio interpolated linearly in k between the own runs'
    (``lows[pos[k]] / own[k].upper_bound``) on either side, less :data:`_MATCH_MARGIN`: the bound
    ``lows[pos[k]] / (ratio - margin)``.  It only decides where to run; what the path proves there is
    certify(k)'s computation.  Why: between two runs far apart the carried curves use the runs' own
    anchored refinements at their sparsities, and certify(k) refines at its own (golub-shaped:
    the path's runs at 133 and 200 left k = 134..147 0.03-0.2% looser than certify(k)).  Every run
    also sharpens the forecast near it, so the excesses are read again after each."""
    spent, tried = 0.0, set()
    ks = [int(k) for k in ks]
    inside = set(ks)
    while True:
        rk = sorted(k for k in own if k in inside and own[k].upper_bound > 0 and lows[pos[k]] > 0)
        if not rk:
            return spent
        ratio = np.interp([float(k) for k in ks], rk, [lows[pos[k]] / own[k].upper_bound for k in rk])
        ub = upper()
        best, key = None, 0.0
        for k, r in zip(ks, ratio):
            i = pos[k]
            if k in own or k in tried or not lows[i] > 0 or not np.isfinite(ub[i]):
                continue
            excess = ub[i] * (r - _MATCH_MARGIN) / lows[i] - 1.0  # above the forecast bound, relative
            c = predict(k)
            if excess > 0 and spent + c <= budget and excess / c > key:
                best, key = k, excess / c
        if best is None:
            return spent
        tried.add(best)
        charged = run(best)
        spent += predict(best) if charged is None else float(charged)


def chord_expect(uniq: np.ndarray, runs: dict, lows: np.ndarray) -> np.ndarray:
    """The most certify(k) is expected to certify at each k of ``uniq``: the path's feasible value
    over the chord of the runs' own bounds at the nearest run k on either side.  The DNN relaxation's
    value is concave in k, so a run between two others proves about the chord or more, not less: where
    the carried bound is already at the chord a run rarely gains (MLL k = 51..60, 2 x 7 runs that gained
    nothing when the runs' certified ratios were interpolated instead: the ratio dips there)."""
    rk = np.array(sorted(k for k in runs if runs[k].upper_bound > 0), dtype=float)
    if not rk.size:
        return np.zeros(uniq.size)
    chord = np.interp(uniq.astype(float), rk, [runs[int(k)].upper_bound for k in rk])
    return np.maximum(lows, 0.0) / chord


def run_charge(keep: dict, m: int, extended: bool) -> float:
    """The counted cost of a run's work beyond ``_settings.split_run_cost``: the coupled bound's
    anchored refinements (:func:`.coupled._coupled_refined`: ``keep["BS_cost"]``, the aimed ones'
    joint tests, else ``keep["BS_at"]`` names every sparsity tried) and its cross table of S and T
    (``|S| |T| m`` products; twice when the path extended it).
    On a 77 x 7,070 gene matrix at k = 120 the refinements were 91% of certify(k)'s CPU (49 anchored
    bisections) and the path ran 17 such runs at 112..128 (6,800 SVD units) counted as the DNN's."""
    if not keep:
        return 0.0
    nS = int(keep["S"].size)
    out = keep.get("BS_cost", sum(S.anchor_cost(nS, int(i)) for i in (keep.get("BS_at") or {})))
    if keep.get("cross") is not None:
        out += (2.0 if extended else 1.0) * nS * float(keep["T"].size) * m
    return float(out)


def polish_runs(cov: Cov, uniq: np.ndarray, pos: dict, lows: np.ndarray, upper, kept: dict, curve: np.ndarray,
                rest, iters: int, budget: float, done: dict | None = None, take_up: bool = True) -> float:
    """More cutting-plane rounds (:func:`.dual._cut_rounds`, ``iters`` DNN iterations each) on the
    screened sets' dual points of the runs (``kept``: k -> the run's ``keep``, :func:`coupled_curve`),
    each run's curve carried again into ``curve`` (in place) after each round; returns what was spent.

    Why: certify(k)'s own DNN on its S stops after a fixed count of iterations, so its bound differs
    from one k to the next by more than a tangent carried from a neighbouring run is above the DNN's
    value (MLL: certify(k) lower than the carried curve by up to 0.3% at 13 of 50 k, higher at the
    others).  A run polished below that noise carries a curve at most certify(k)'s at its neighbours.
    Valid as :func:`coupled_curve` is: the polished point is another dual point on the same ``A_SS``
    (the cuts' right-hand sides at every sparsity), its ``lambda_max`` rigorous, and S's bound at
    ``kS`` the smaller of the two.  Order: the largest gap per counted cost (``iters`` x
    ``_DNN_PASSES`` x ``|S|^2``) times the k the run's curve serves (half the span to the runs on
    either side: a run amid others serves itself), one round at a time, while the costs fit in
    ``budget``; a run whose rounds gained less than :data:`_POLISH_STOP` (relative) twice in a row is
    set aside (MLL k = 59: 3e-4, then the next k's second round 2.4e-3) and, once no other run is left
    or fits, taken up again if a round of it gained since it was last taken up, else dropped.  So a run
    is not dropped because its small rounds came early: cut rounds gain in lumps (dlbcl-shaped k = 24, a
    start moved by 3e-6 relative: two small rounds after the third and the run dropped, the path 0.9893
    -> 0.9817 there, where the same run polished 8 rounds; issue39_wide19.txt).  A round that left the
    run's point as it was drops the run: the next would repeat it float for float (the same point, the
    same fresh cuts).  Until the first run is taken up again the rounds are those of a polish that drops
    at two small rounds, less those repeats.
    ``done`` (a dict, optional): filled with ``{k: [rounds, relative gain of S's bound]}``; ``take_up=False``:
    no run is taken up again (a run set aside is dropped)."""
    if iters <= 0 or not kept or budget <= 0:
        return 0.0
    rk = np.array(sorted(kept), dtype=int)
    edges = np.concatenate(([uniq[0]], rk, [uniq[-1]])).astype(float)
    served = {int(k): max(1.0, (edges[j + 2] - edges[j]) / 2) for j, k in enumerate(rk)}
    cost = {int(k): float(iters) * S._DNN_PASSES * float(kept[int(k)]["S"].size) ** 2 for k in rk}
    todo, spent, held, small = set(int(k) for k in rk), 0.0, {}, set()
    aside, gained = set(), set()  # set aside after two small rounds; gained since last taken up
    while True:
        ub = upper()
        key = {k: (1.0 - lows[pos[k]] / ub[pos[k]] if lows[pos[k]] > 0 and np.isfinite(ub[pos[k]]) else 1.0)
               * served[k] / cost[k] for k in todo if spent + cost[k] <= budget}
        if not key:  # the runs set aside that gained since they were last taken up, again (with two fresh rounds)
            back = {k for k in aside & gained if spent + cost[k] <= budget} if _TAKE_UP and take_up else set()
            if not back:
                return spent
            todo |= back
            aside -= back
            gained -= back
            small -= back
            continue
        k = max(key, key=key.__getitem__)
        spent += cost[k]
        keep = kept[k]
        certS, st, kS = keep["certS"], keep["stS"], keep["kS"]
        dnn = dict(certS.info.get("dnn") or {})
        lam = dnn.get("lam")
        if lam is None or st.U is None:
            todo.discard(k)
            continue
        if held.get("k") != k:
            held = {"k": k, "A": cov.submatrix(keep["S"])}
        nS = keep["S"].size
        val = float(dnn_tangent(float(lam), st, nS, np.array([kS]))[0])
        st2, val2, info = _cut_rounds(held["A"], kS, st, val, float(certS.lower), 1.0 - S.OPTIMAL_TOLERANCE, 1,
                                      iters=iters, check_every=iters // 2, stall=S._EFFORT["auto"]["stall"],
                                      lam=float(lam), ritz32=True)
        if done is not None:
            r, g = done.get(k, (0, 0.0))
            done[k] = [r + 1, g + max(val - val2, 0.0) / val]
        if val2 < val:
            dnn["lam"] = info["lam"]
            keep["certS"] = replace(certS, upper_bound=min(float(certS.upper_bound), val2),
                                    info={**certS.info, "dnn": dnn})
            keep["stS"] = st2
            np.minimum(curve, coupled_curve(keep, rest(keep), uniq), out=curve)
        # the round's worth: how much it lowered the path's bound at any k (not S's own bound: where the
        # run's coupled terms are the anchored row sums, 2-4% below the DNN's tangents on golub-shaped
        # data at k = 133 and 200, S's bound fell 1.4% / 0.7% in 11 / 8 rounds and the path's not at all)
        with np.errstate(divide="ignore", invalid="ignore"):
            fell = np.where(np.isfinite(ub) & (ub > 0), (ub - upper()) / ub, 0.0)
        if not val2 < val:  # the point is the same, so another round would repeat this one float for float
            todo.discard(k)
        elif not float(fell.max(initial=0.0)) > _POLISH_STOP:
            if k in small:  # a round's fresh cuts may gain little and the next one more: two in a row
                todo.discard(k)
                aside.add(k)
            small.add(k)
        else:
            small.discard(k)
            gained.add(k)


def raise_worst(ks, pos, lows, upper, runs: dict, kept: dict, run, polish, budget: float, predict) -> float:
    """The path's worst-certified k of ``ks`` first: certify(k)'s run there when there is none and
    its predicted counted cost (``predict(k)``) fits (``run(k)``, its counted cost returned), then that
    run polished (``polish({k: keep}, allowed)``, :func:`polish_runs`: until its rounds no longer lower
    the path's bound); then the next worst k not tried, while the counted costs fit in ``budget`` and
    the worst k is certified below ``_settings._CUT_BELOW`` (certify(k)'s cut rounds aim no higher);
    returns what was spent.

    Why: a polished run lowers the bound most at its own k (its dual point is optimized there) and
    :func:`polish_runs` orders runs by gap times the k they serve, so the worst k between two runs
    stayed where the runs' tangents cross (MLL: k = 52, 0.9356, between the runs at 49 and 59; the
    DNN on certify(52)'s screened set goes from 0.9347 to 0.944 in 10 rounds of 40 iterations, ~10
    SVD units).  Valid as its parts are (certify(k)'s run, :func:`polish_runs`)."""
    spent, tried = 0.0, set()
    while spent < budget:
        ub = upper()
        cand = [int(k) for k in ks if int(k) not in tried and lows[pos[int(k)]] > 0 and np.isfinite(ub[pos[int(k)]])]
        if not cand:
            break
        k = min(cand, key=lambda kk: lows[pos[kk]] / ub[pos[kk]])
        if lows[pos[k]] >= S._CUT_BELOW * ub[pos[k]]:  # (certify(k)'s cut rounds aim no higher)
            break
        tried.add(k)
        if k not in runs:
            if spent + predict(k) > budget:
                continue
            charged = run(k)
            spent += float(charged) if charged is not None else 0.0
        if k in kept and spent < budget:
            spent += polish({k: kept[k]}, budget - spent)
    return spent


def lower_from_runs(cov: Cov, uniq: np.ndarray, xs: list, lows: np.ndarray, src: list, run_ks) -> None:
    """The feasible points of the k not run, raised by one batched ascent (a column per start, its
    own k) from the answers of the nearest run k on either side: ``fit(auto)``'s where certify(k)
    found its point there, cut to the k largest entries when the run's k is larger (a point of
    sparsity k' <= k is feasible at k).  In place (``xs``, ``lows``, ``src``); a caller's point stays.
    (MLL k = 52: the path's own ascent certified 0.9300 where the runs at 47 and 53 found 0.9323.)"""
    rk = np.array([int(k) for k in run_ks], dtype=int)
    if not rk.size:
        return
    cols, kc, at = [], [], []
    ran = set(rk.tolist())
    for i, k in enumerate(uniq):
        k = int(k)
        if k in ran or src[i] == "given":
            continue
        j = int(np.searchsorted(rk, k))
        for kk in {int(rk[j - 1]) if j > 0 else None, int(rk[j]) if j < rk.size else None} - {None}:
            x = xs[int(np.searchsorted(uniq, kk))]
            if x is not None and np.count_nonzero(np.clip(x, 0, None)):
                cols.append(_rank1_cols(np.clip(np.asarray(x, dtype=float), 0, None), np.array([k]))[:, 0])
                kc.append(k)
                at.append(i)
    if not cols:
        return
    X, v = _ascent_batch(cov, np.array(kc), np.column_stack(cols))
    for c, i in enumerate(at):
        if v[c] > lows[i]:
            xs[i], lows[i], src[i] = X[:, c].copy(), float(v[c]), "ascent(runs)"


def rest_of(cov: Cov, keep: dict, kmax: int, cache: dict) -> np.ndarray:
    """``B_T(j)``, j = 0..kmax, of a run's rest T (:func:`.bounds._rest_curve`), kept in ``cache`` by T."""
    key = keep["T"].tobytes()
    if key not in cache:
        cache[key] = _rest_curve(cov, keep["T"], kmax)
    return cache[key]


def run_cost(m: int, n: int, k: int, effort: str) -> float:
    """A run's counted cost at k (``_settings.split_run_cost``): certify(k)'s screen, and the smaller one
    too where ``_settings._SMALL_FIRST`` (:func:`.coupled.small_screen`; the path's runs take both)."""
    size = _screened(n, k, effort)
    small = small_screen(n, k, size) if S._SMALL_FIRST and effort == "auto" else None
    return S.split_run_cost(m, n, size, effort) + (S.split_run_cost(m, n, small, effort) if small else 0.0)


def _screened(n: int, k: int, effort: str) -> int:
    """The size of certify(k)'s screened set S (:func:`.single._certify_split`, no caller's point)."""
    return S.screened_size(n, k, S._EFFORT[effort])


def geometric_grid(ks: np.ndarray, ratio: float) -> list[int]:
    """The smallest and largest of the sorted ``ks`` and, between, the k of ``ks`` at or above each
    ``ks[-1] / ratio^j``."""
    if ks.size == 0:
        return []
    grid = {int(ks[-1]), int(ks[0])}
    g = float(ks[-1])
    while g > ks[0]:
        g /= ratio
        j = int(np.searchsorted(ks, round(g)))
        grid.add(int(ks[min(j, ks.size - 1)]))
    return sorted(grid)


def gap_runs(ks, pos, lows, upper, run, cost, budget: float, done=(), expect=None) -> float:
    """Runs certify(k)'s own computation (``run(k)``) at the k of ``ks`` not in ``done`` whose bound
    (``upper()[pos[k]]``) is still open (above ``lows[pos[k]] (1 + _PATH_CLOSED)``: there certify(k)
    could be tighter), the largest relative gap per counted cost (``cost(k)``) first, while the costs
    add up to at most ``budget``; returns what was spent.  Every run can lower the bound at other k,
    so the gaps are read again after each.  ``expect`` (optional): ``expect()[pos[k]]`` the ratio
    certify(k) is expected to certify at most (:func:`path_large`: over the chord of the runs' own
    bounds at the neighbouring run k, the relaxation's value being concave in k); where some
    open k's ratio falls short of it, the largest shortfall per cost is run first (a gap that
    certify(k) shares is not worth a run), else the largest gap per cost.  A ``run`` that returns a
    number is charged that (its counted cost as run) instead of ``cost(k)``."""
    ks = np.asarray(ks, dtype=int)
    idx = np.array([pos[int(k)] for k in ks], dtype=int)
    costs = np.array([cost(int(k)) for k in ks], dtype=float)
    todo = ~np.isin(ks, np.array(sorted({int(k) for k in done}), dtype=int))
    spent = 0.0
    while True:
        ub, lo = upper()[idx], lows[idx]
        with np.errstate(divide="ignore", invalid="ignore"):
            gap = np.where((lo > 0) & np.isfinite(ub), 1.0 - lo / ub, 1.0)
        ok = todo & (ub > lo * (1 + S._PATH_CLOSED)) & (spent + costs <= budget)
        if not ok.any():
            return spent
        key = gap
        if expect is not None:
            short = np.asarray(expect(), dtype=float)[idx] - (1.0 - gap)
            if (ok & (short > 0)).any():
                key = np.where(short > 0, short, -np.inf)
        j = int(np.argmax(np.where(ok, key / costs, -np.inf)))
        todo[j] = False
        charged = run(int(ks[j]))
        spent += costs[j] if charged is None else float(charged)


def refine_midpoints(uniq, pos, done, lows, run, upper, delta: float, target: float, more=None) -> None:
    """Runs at the midpoints of the intervals between the run k's ``done`` (sorted) where the bound
    carried from the runs (``upper()``) exceeds the chord of its end values by more than ``delta``
    (relative) at a k not yet certified to ``target`` (lower < target x upper), splitting again
    around each new run; while ``more()`` (default: always) allows another run."""
    stack = list(zip(done[:-1], done[1:]))
    while stack and (more is None or more()):
        a, b = stack.pop()
        ia, ib = pos[a], pos[b]
        if ib - ia < 2:
            continue
        ub = upper()
        seg = np.arange(ia + 1, ib)
        chord = ub[ia] + (ub[ib] - ub[ia]) * (uniq[seg] - float(a)) / (float(b) - float(a))
        excess = (ub[seg] - chord) / ub[seg]
        if not ((excess > delta) & (lows[seg] < target * ub[seg])).any():
            continue
        m = int(uniq[(ia + ib) // 2])
        run(m)
        stack.append((a, m))
        stack.append((m, b))
