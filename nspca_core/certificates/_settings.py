"""Settings of the certificates (tolerances, effort tables); their arguments are checked by the
declared rules of :mod:`nspca_core._common.params` (``effort``, ``ks``, ``x``, ``time_limit``, ``callback``)."""

from __future__ import annotations

import numpy as np

from .._common.params import EFFORTS as EFFORTS, EXACT_EFFORT as EXACT_EFFORT, check  # declared with the rules
from .._common.validation import InputError

# every certificate takes one of EFFORTS; one k also takes EXACT_EFFORT (branch and bound)


# effort "exact": the branch and bound's time limit when none is given (seconds)
_EXACT_TIME = 60.0


# relative gap (upper - lower) <= OPTIMAL_TOLERANCE * upper under which `optimal` is declared
OPTIMAL_TOLERANCE = 1e-5


# above this many features the DNN runs on a screened subset (split bound)
_DENSE_MAX_N = 2500


# the screened subset of the split bound: max(_SPLIT_MIN, _SPLIT_PER_K k) features, at most the
# effort's split_size: enough for the DNN's mu to stay above every variance left outside (all the
# coupled bound needs), and no more, since a DNN iteration costs |S|^2 (benchmarks/bench_certify.py).
# Issue 39: 6 k, not 12 k: on MLL one-k certified k = 50 / 100 / 200 0.9324 / 0.9502 / 0.9491 with
# 12 k, 0.9338 / 0.9505 / 0.9482 with 6 k at 1/1.35 / 1/3.2 / 1/2.4 of the CPU (k = 30: 0.9577 -> 0.9550).
# "full" keeps 12 k (its split_per_k below: the tighter bound, its cost not this rule's)
_SPLIT_MIN = 300
_SPLIT_PER_K = 6
# the eager split route's screen (data route.split_cheaper sends from the dense route, S's bound the anchored
# search on A_SS, no DNN): this many k features (the answer's support and the largest variances), no minimum;
# grown 3x while the rest T holds the ratio below S's own and the dense route would cost more (route.eager_grown).
# The anchored tests cost |S|^2: issue 39, 60 x 2,500 genes k = 80: S = 480 (6 k) certified 0.9957 in 63-91 ms,
# 2 k = 160 0.9975 (the dense route's own) in 27 ms; 72 x 1,000 k = 50: 3 k 0.9952, 2 k 0.9937 (dense 0.9952) at
# 2/3 of the CPU
_EAGER_PER_K = 2
# whether a one-k "auto" split certificate tries the smaller screen first (coupled.small_screen; a path's
# run with ``both`` takes it regardless).  On: MLL k = 80 / 100 certify at 2.25 / 2.8x the answer instead of
# 2.4 / 3.7x (benchmarks/results/issue39_mllk7.txt), and certify_path follows it (its runs take both screens,
# the larger one skipped where the smaller stands, and carry both screens' bounds: never looser than
# certify(k) on a 60 x 5,000 stand-in, golub- / dlbcl-shaped and MLL; issue39_path7.txt).  Off, because the
# path is then up to 0.8% looser than with it off at MLL k = 76..182 (a run where the smaller screen stands
# has no larger screened set to polish and carry): the band the user sees matters more than 1.3x at k = 100.
# On again (issue 39, mll11), tried only where certify(k)'s own screen's light route falls short, i.e. where
# the DNN would run on it (single._certify_large's small_try; the DNN's cost is |S|^2): MLL k = 65..150 (the
# DNN's route at every k) 0.9470 / 0.9519 / 0.9538 / 0.9535 / 0.9576 -> 0.9495 / 0.9542 / 0.9598 / 0.9560 /
# 0.9589 at 0.64-0.88x the CPU; golub- / dlbcl-shaped k <= 120 (the light route stands) take no smaller screen:
# the same floats (benchmarks/results/issue39_mll11.txt, with the paths)
_SMALL_FIRST = True
# whether a one-k "auto" split certificate's light route proves S's bound at kS lazily (coupled.light_S: one
# anchored test at the aim's value, the bisection below it only where that term binds, coupled.light_refined).
# On: golub-shaped k = 80 / 120 / 150 / 200 6.8 / 13.4 / 19.4 / 32.3 -> 3.3 / 5.7 / 8.4 / 22.3x the answer,
# dlbcl-shaped k = 65 / 80 / 100 4.5 / 8.2 / 8.8 -> 3.6 / 3.8 / 6.5x, ratios -0.0009..+0.0011 (one run, base
# d70328c: benchmarks/results/issue39_lazy9.txt; issue39_split8.txt).  It was off because where the rest T binds
# the joint tests then search from another cap on S's terms and land elsewhere in their bracket, certify(k)
# sometimes tighter than certify_path (an 8 x 200 case at k = 20: 268.0007 against 267.9878).  Now a path's run
# first runs certify(k)'s lazy route float for float (single._certify_split's ``follow``), and the carry tests
# once more below a forecast proved at once (path_carry._CARRY_DEEP): 0 k looser on golub- / dlbcl-shaped data
# (every 5th k), 1,250 / 769 SVD units
_LAZY_S = True


# certify_path on large n: at most this many screened features per k (the DNN's cost is |S|^2)
_PATH_SPLIT_CAP = 600


# certify_path on large n (certificates/path_large.py): one-k split certificates on a geometric grid of
# this ratio, then where the carried bound's gap per counted cost is largest (_settings.path_budget)
_PATH_LARGE_GRID = 1.5


_EPS = np.finfo(float).eps


# "auto" adds the cut phase of the DNN (doubling its cost) only below this certified ratio
_CUT_BELOW = 0.97

# a path polishes (more cutting-plane rounds at) its worst-certified k while below this ratio
_POLISH_BELOW = 0.98


# the DNN optimizer (projected Adam, see nspca_core.certificates.dnn.dnn_optimize), relative to max|A_ij|:
# learning rate from a fresh start, from a neighbour's (or a previous round's) dual point, its
# decay per iteration, and the smoothing t (start, end)
_LR = 3e-3


_LR_WARM = 1e-3


_DECAY = 0.99
_T0, _T1 = 1e-3, 1e-4


# at most this many cut vectors carried along a path
_MAX_CUTS = 30


# the anchored row-sum bound (nspca_core.certificates.anchor) is tried for k >= 3 where it is cheap beside the
# DNN, by its counted cost (not timed: the same choice on every machine): one bisection is about
# _ANCHOR_PASSES passes over the n x w(k) candidate entries (w(k) = min(max(_ANCHOR_WIDTH_PER_K (k - 1), 48), n - 1):
# nspca_core.certificates.anchor.AnchorRows), one DNN iteration about _DNN_PASSES passes over n^2 entries (a
# rank-10 Ritz step and the Adam updates); calibrated on CBCL (n = 361): a failed bisection at
# k = 100 cost 0.7 of the "auto" DNN run.  It is tried (one certificate, a path's per-k runs, the
# coupled bound's refinements) while it costs at most one DNN run: since w(k) < n, at every k of
# "auto" (the rule that held at k <= 64 now holds above).  There was a fixed k <= 64 here, and the
# certified ratio fell 5 points at k = 65 on a 77 x 7,070 gene matrix (issue 39).
_ANCHOR_PASSES = 2700

# the anchored bound's candidates per row (nspca_core.certificates.anchor.AnchorRows' default width):
# _ANCHOR_WIDTH_PER_K (k - 1), at least 48; the rest of a row is padded with its cap (every sum an
# upper bound).  4, not 8 (issue 39): the same certified ratio at every k tried (CBCL k = 3..150, LRS
# 5..50, MLL 10..50) and CBCL k = 40 / 50's certificate 105 / 128 -> 53 / 56 ms (partitions of n x w)
_ANCHOR_WIDTH_PER_K = 4

_DNN_PASSES = 24

# certify_path runs certify(k)'s own computation (so its bound at k is at most certify(k)'s) at the k
# whose bound carried from the other k leaves the largest gap to the feasible value per counted cost,
# while the counted costs add up to at most (runs per k) x (number of k) x the cost of the cheapest such
# run, or _PATH_FLOOR entry passes (a path that cheap runs it wherever the gap is open: ~1 s).  A dense
# path's own DNN tangents are within ~0.1% of certify(k)'s DNN at most k (CBCL): few runs are worth
# their cost there (half its budget goes first to the anchored sums, where one k wins most); the split
# path's carried curves are looser (another k's screened set).  Split: 1.0 (was 0.6; issue 39, this
# stop's cheaper DNN schedule and aimed refinements made certify(k) at k = 16..44 of a 72 x 7,129 gene
# matrix up to 3% tighter than the path's carried bound where 0.6's budget left them unrun: at 1.0 no k
# below 114 is looser (170 k compared), 1,302 SVD units, min 0.9555 -> 0.9704; MLL 907 -> 1,261 units,
# 0 of 50 looser either way)
_PATH_DENSE_RUNS_PER_K = 0.2
_PATH_SPLIT_RUNS_PER_K = 1.0
_PATH_FLOOR = 2e9
# the bound is taken as closed at k when upper <= lower (1 + _PATH_CLOSED): certify(k) cannot be tighter
_PATH_CLOSED = 1e-10


def anchor_width(n: int, k: int) -> int:
    """The anchored bound's candidates per row (``AnchorRows``' default width)."""
    return int(min(max(_ANCHOR_WIDTH_PER_K * (k - 1), 48), max(n - 1, 1)))


def anchor_cost(n: int, k: int) -> float:
    """One anchored bisection at sparsity k on n features, in entry passes."""
    return float(_ANCHOR_PASSES) * n * anchor_width(n, k)


def anchor_ok(n: int, k: int) -> bool:
    """:func:`anchor_affordable` against the reference, one "auto" DNN run (every effort: "fast"
    runs fewer DNN iterations, and the anchored bound is its strength at small k)."""
    cfg = _EFFORT["auto"]
    return anchor_affordable(n, k, cfg["iters"] + cfg["cut_rounds"] * cfg["cut_iters"])


def dnn_run_cost(n: int, effort: str = "auto") -> float:
    """One DNN run of ``effort`` (iterations and cutting-plane rounds) on n features, in entry passes."""
    cfg = _EFFORT[effort]
    return float(cfg["iters"] + cfg["cut_rounds"] * cfg["cut_iters"]) * _DNN_PASSES * float(n) * n


def dense_run_cost(n: int, k: int, effort: str) -> float:
    """certify(k)'s computation on a dense n x n covariance, counted in entry passes: its eigenpairs,
    fit(auto) and the ascent (~ n^3 each), one DNN run and, where it is tried, the anchored bound."""
    return 3.0 * float(n) ** 3 + dnn_run_cost(n, effort) + (anchor_cost(n, k) if anchor_ok(n, k) else 0.0)


def split_run_cost(m: int, n: int, s: int, effort: str) -> float:
    """certify(k)'s split computation on m x n data with a screened set of s features, counted in
    entry passes: a few passes through X (fit, ascent, the Gram, the rest; m n min(m, n) each), the
    products of S with the rest (s n m) and the dense certificate on S (its eigenpairs, one DNN run
    without cutting planes: on gene data the S part rarely needs them)."""
    cfg = _EFFORT[effort]
    return (4.0 * m * n * min(m, n) + float(s) * n * m + float(s) ** 3
            + float(cfg["iters"]) * _DNN_PASSES * float(s) * s)


def split_held_cost(n: int, s: int, effort: str) -> float:
    """certify(k)'s split computation with the n x n covariance held (sparse data formed below the dense
    limit: :mod:`.sparse_route`), counted in entry passes: the top eigenpairs of A and of the rest A_TT
    (``n^3 + (n - s)^3``) and the dense certificate on S (its eigenpairs, one DNN run without cutting planes)."""
    cfg = _EFFORT[effort]
    return float(n) ** 3 + float(n - s) ** 3 + float(s) ** 3 + float(cfg["iters"]) * _DNN_PASSES * float(s) * s


def path_budget(costs, runs_per_k: float) -> float:
    """The counted budget of certify_path's one-k runs over k's whose single runs cost ``costs``:
    ``runs_per_k`` of the cheapest run per k, at least :data:`_PATH_FLOOR`."""
    costs = np.asarray(costs, dtype=float)
    return max(_PATH_FLOOR, runs_per_k * costs.size * float(costs.min(initial=np.inf)))


def anchor_affordable(n: int, k: int, iters: int, share: float = 1.0) -> bool:
    """Whether the anchored bound at k costs at most ``share`` x a DNN run of ``iters`` iterations
    on the same n features (counted: :data:`_ANCHOR_PASSES`, :data:`_DNN_PASSES`)."""
    return k >= 3 and anchor_cost(n, k) <= share * iters * _DNN_PASSES * float(n) * n


# the split certificate's refinements (:func:`.coupled._coupled_refined`: the cross table of S and T and the
# anchored row-sum tests on S that follow it) run where the table's counted cost, |S| |T| max(k, 16), is at most this
# many thin passes over the data (m n min(m, n), the answer's own unit); else the plain coupled bound stands (issue
# 39, the twenty-fourth round: by cost, where the filing tree had the cross table at k <= 256 only).  One-k
# certificates measured (passes -> ratio before and after the refinements, CPU s they took): MLL (72 x 12,582)
# k = 220: 50 -> 0.736 / 0.948, 0.64 s; golub-shaped k = 256: ~58 (the filing tree's 0.9655 there); dlbcl- /
# golub-shaped k = 562 / 565: 117 / 143 -> 0.870 / 0.930, 0.866 / 0.932 for 1.6 / 2.3 s (the filing tree: 0.8696 /
# 0.8662); MLL k = 848: 235 -> 0.794 / 0.887 for 2.8 s (filing 0.7954); k = 12,582: ~3,500, nothing gained for 67 s
# under the profiler.  Chooses effort only: every bound stays proved
_REFINE_PASSES = 80.0
# ... and up to this many passes the cross table alone (no anchored test on S: the light route, dense_dual's, the aimed
# joint tests), the tier that gains most per CPU s: MLL k = 333 / 848 / 1,798 certified 0.9304 / 0.8792 / 0.9153 by
# it in 2.2 / 1.5 / 5.6 CPU s (every refinement: 0.9309 / 0.8873 / 0.9153 in 4.9 / 5.9 / 19.9 s), golub-shaped 565 /
# 1,019 0.9252 / 0.9083 (0.9318 / 0.9117), dlbcl-shaped 562 / 1,011 0.9298 / 0.9263 (the same as every refinement)
_CROSS_PASSES = 320.0


def refine_pays(m: int, n: int, nS: int, nT: int, k: int, effort: str, exact: bool = False) -> str:
    """Which of a split certificate's refinements are worth their counted cost: ``"all"`` (its cross table, then the
    anchored tests on S; always for "full", the exact mode ``exact`` or an empty T) within :data:`_REFINE_PASSES`
    thin passes, ``"cross"`` (the table alone) within :data:`_CROSS_PASSES`, else ``""`` (the plain coupled bound)."""
    if effort == "full" or exact or nT <= 0:
        return "all"
    passes = float(nS) * nT * max(k, 16) / (float(m) * n * max(min(m, n), 16))
    return "all" if passes <= _REFINE_PASSES else "cross" if passes <= _CROSS_PASSES else ""


# "auto" adds the rank-2 paper/residual bounds (exact rank-2 spannogram, O(n^3)) only up to this n
_D2_MAX_N = 120


# thin data of numerical rank up to this is certified by the exact spannogram alone
_LOWRANK_MAX_RANK = 3


# effort -> DNN settings.  "fast": a short run from the screening initialization (interactive);
# "auto": no DNN at all when the cheap bounds certify 1 - accept_gap, else up to 80 iterations
# (+ one cutting-plane run while the ratio is below 0.97: see cut_refresh below),
# stopping when the gap is below 1e-3 or progress stalls; "full": up to 2000 (+ 20 rounds of
# 2000) iterations aiming at OPTIMAL_TOLERANCE, plus more lower-bound starts and the expensive
# residual bounds.
_EFFORT = {
    "fast": dict(iters=40, cut_iters=0, cut_rounds=0, check_every=20, stall=1e-4, target_gap=1e-2,
                 split_size=600, ascent_starts=8, branch_nodes=0),
    "auto": dict(iters=80, cut_iters=40, cut_rounds=2, check_every=20, stall=3e-4, target_gap=1e-3,
                 split_size=1500, ascent_starts=24, branch_nodes=0, split_branch_nodes=150, accept_gap=4e-3,
                 split_iters=40, lr=6e-3, ritz_r=6, give_up=True, cut_refresh=8, refresh_iters=40,
                 split_refresh_iters=44,
                 cut_lr=3e-3, schedule_min_n=64, lazy_start=True,
                 anchor_forecast=True),
    "full": dict(iters=2000, cut_iters=2000, cut_rounds=20, check_every=100, stall=1e-5,
                 target_gap=OPTIMAL_TOLERANCE, split_size=2500, ascent_starts=64, decay=0.998,
                 branch_nodes=3000, split_branch_nodes=3000, split_per_k=12),
}
# lr, ritz_r, give_up, cut_refresh, refresh_iters, cut_lr ("auto", issue 39): the one-k DNN from its
# start at twice the learning rate (CBCL k = 80 at 0.970 after 20 iterations instead of 32), with 6
# Ritz vectors (the same iterates as 10 to 4 digits, ~15% less per iteration); it gives up once its
# estimates head below the cuts' ratio (dnn_optimize's give_up) and the cutting planes come as one
# run of refresh_iters renewing its cuts every cut_refresh iterations at cut_lr (dnn_optimize's
# refresh): CBCL k = 65 0.9828 after 80 + 2 x 40 iterations -> ~0.98 after ~30 + 50.
# (cut_iters / cut_rounds stay the cost model's: _settings.anchor_ok, dnn_run_cost).  Below
# Second round (issue 39): cuts renewed every 8 iterations, 44 in all (were 10 and 60): CBCL k = 60 / 65 /
# 70 / 75 0.9769 / 0.9795 / 0.9841 / 0.9843 -> 0.9792 / 0.9794 / 0.9840 / 0.9846 in 16 iterations fewer;
# MLL's screened set k = 20 / 30 / 50 / 100 -0.0012 / -0.0025 / -0.0008 / +0.0008 (every 5 and 40 in all:
# k = 65 0.9810 but 60 / 70 0.9736 / 0.9820, no gain on a forced 40-feature case; 5 / 6 / 7 were
# each worse at some k: the trajectories are chaotic, 8 / 44 matched 10 / 60 at every k tried).
# Seventh round: 40 iterations, not 44 (the last renewal, at 41, came 4 iterations before the end; the
# check at 40 was the better point at most k): CBCL k = 60..75 one evaluation, one renewal and 4 iterations
# fewer (~6 ms of ~65); ratios the same at 60 / 70 / 75, -0.0018 at 65, -0.0001..-0.0016 at 57..74 (of 24 k
# from 56 to 99, 11 moved), MLL k = 30 / 100 -0.0003 / -0.0019 (benchmarks/results/issue39_c656.txt).
# split_refresh_iters: the cut run on a split bound's screened set S keeps 44: with 40 the MLL path came out
# looser at 134 of 199 k (up to 0.9% at k = 173; its runs carry S's DNN tangents to other k), with 44
# the same as before at every k (benchmarks/results/issue39_lead6.txt).
# lazy_start: the screening start is not evaluated before the run (dual._dnn; one evaluation, ~3 ms at n = 361);
# anchor_forecast: the anchored test only where the same test on at most 2k rows does not fail
# (dual._forecast_fails; CBCL k = 60..100: ~9 ms for a failed test -> ~2 ms).  Below
# schedule_min_n features the plain schedule (an iteration is cheap there; on a 10-feature covariance
# the new one's bound was 1.1% looser in one components certificate)
# split_iters ("auto"): the DNN on the split bound's screened set S runs 40 iterations, not 80, before
# its cut rounds (issue 39: MLL k = 50's certificate 0.23 -> 0.20 CPU s; certified MLL k = 20 / 30 / 50 /
# 100 0.9647 / 0.9550 / 0.9338 / 0.9505 -> 0.9658 / 0.9528 / 0.9322 / 0.9526; golub- and dlbcl-shaped
# k = 10 / 30 / 50 / 80 the same to 4 digits: the cut rounds carry the S part's bound there).
# split_branch_nodes: the split certificate's branch and bound on its screened set S (k <= 16) stops
# after this many nodes (a count, not a clock: the same input gives the same certificate on any
# machine and load; issue 39).  It was 0.5 ("auto") / 10 ("full") CPU seconds: "auto"'s 150 nodes
# are ~0.5 s at |S| = 300 (MLL's trees close in 29 nodes at k = 5 and 10)


def screened_size(n: int, k: int, cfg: dict, cap: int | None = None, per_k: float | None = None) -> int:
    """The size of the split bound's screened set S at sparsity k on n features under an effort's
    settings ``cfg`` (one of :data:`_EFFORT`): ``max(_SPLIT_MIN, split_per_k k)`` features (the
    effort's ``split_per_k``, else :data:`_SPLIT_PER_K`), at most its ``split_size``, ``cap``, n and, where
    ``per_k`` is given, ``max(_SPLIT_MIN, per_k k)``."""
    size = max(_SPLIT_MIN, cfg.get("split_per_k", _SPLIT_PER_K) * int(k))
    if per_k is not None:
        size = min(size, max(_SPLIT_MIN, int(per_k * int(k))))
    return int(min(int(n), cfg["split_size"], cap or int(n), size))


def eager_size(n: int, k: int, cap: int | None = None) -> int:
    """The eager split route's screened set size at sparsity k on n features (:data:`_EAGER_PER_K` k, more than
    k, at most ``cap`` and n)."""
    return int(min(int(n), cap or int(n), max(_EAGER_PER_K * int(k), int(k) + 1)))


def exact_time_limit(time_limit, effort: str):
    """The branch and bound's seconds: ``time_limit`` (the declared rule) with effort "exact",
    ``_EXACT_TIME`` when None; None for the other efforts, which take no time limit."""
    if time_limit is None:
        return _EXACT_TIME if effort == EXACT_EFFORT else None
    if effort != EXACT_EFFORT:
        raise InputError(f"`time_limit` applies to effort='exact' only; got effort={effort!r}")
    return check("time_limit", time_limit)


# path settings per effort: DNN iterations per k, stall threshold, refinement threshold delta.
# "auto" takes a coarse grid, few iterations and polish runs: on a whole path they cost far more
# time than the worst certified ratio they gain (benchmarks/bench_certify.py)
_PATH = {
    "fast": dict(iters=30, cut_iters=0, cut_rounds=0, check_every=10, stall=1e-3, min_iters=20,
                 delta=1e-2, grid=2.0, polish_runs=0, polish_iters=0, polish_rounds=0,
                 target_gap=1e-2, branch_nodes=0),
    "auto": dict(iters=60, cut_iters=40, cut_rounds=2, check_every=20, stall=3e-4, min_iters=20,
                 delta=9e-3, grid=2.0, polish_runs=8, polish_iters=200, polish_rounds=3,
                 target_gap=OPTIMAL_TOLERANCE, branch_nodes=100),
    "full": dict(iters=600, cut_iters=300, cut_rounds=10, check_every=50, stall=1e-5, min_iters=200,
                 delta=2e-4, grid=2 ** 0.25, polish_runs=40, polish_iters=300, polish_rounds=10,
                 decay=0.998, target_gap=OPTIMAL_TOLERANCE, branch_nodes=3000),
}


# (the split bound, single.py)
# "auto"'s branch and bound on the split bound's S: only up to this k (it closes in a few dozen
# nodes at small k; at larger k it spends its time without closing)
_SPLIT_BRANCH_MAX_K = 16

# that tree ("auto", by nodes) computes a node's DNN bound only while its nearest ancestor's is within this of
# the value to refute (exact.branch_and_bound's dnn_hope): on MLL k = 5 / 10 and golub-shaped k = 10 the
# 40-iteration dual point's node bounds sat 4..7% above it and refuted no node (the row sums did)
_SPLIT_DNN_HOPE = 0.02

# the efforts whose split bound takes S's top eigenpairs through X_S's Gram where X_S is thin (bounds._ThinSpectral;
# "full" and the exact mode never).  Issue 39, mll10, with ("auto", "fast"): MLL k = 200 0.14 CPU s of LAPACK on the
# 1,200 x 1,200 A_SS -> ~2 ms, one-k certified ratios at MLL / golub- / dlbcl-shaped k = 60..200 (every 5th) within
# 1.2e-7 of LAPACK's, the path never looser than certify(k).  Off (empty): the DNN's screening start moves by a few
# ulps (lambda_1's float), and the MLL path's adaptive schedule amplified that: its runs at 39 / 62 swapped, the
# polish rounds at k = 89 / 105 / 133 fell 11 / 17 / 9 -> 9 / 9 / 8, and the path was looser at k = 78..142 (65 k
# by more than 1e-4, at most 0.0052 at k = 106; none tighter; benchmarks/results/issue39_mll10.txt)
_THIN_S_EFFORTS: tuple = ()
