"""Settings of the certificates (tolerances, effort tables); their arguments are checked by the
declared rules of :mod:`nspca_core._common.params` (``effort``, ``ks``, ``x``, ``time_limit``, ``callback``)."""

from __future__ import annotations

import numpy as np

from .._common.params import EFFORTS as EFFORTS, check  # EFFORTS: declared with the rules
from .._common.validation import InputError

# every certificate takes one of EFFORTS; one k also takes "exact" (branch and bound)
EXACT_EFFORT = "exact"


# effort "exact": the branch and bound's time limit when none is given (seconds)
_EXACT_TIME = 60.0


# relative gap (upper - lower) <= OPTIMAL_TOLERANCE * upper under which `optimal` is declared
OPTIMAL_TOLERANCE = 1e-5


# above this many features the DNN runs on a screened subset (split bound)
_DENSE_MAX_N = 2500


# the screened subset of the split bound: max(_SPLIT_MIN, _SPLIT_PER_K k) features, at most the
# effort's split_size: enough for the DNN's mu to stay above every variance left outside (all the
# coupled bound needs), and no more, since a DNN iteration costs |S|^2 (benchmarks/bench_certify.py)
_SPLIT_MIN = 300
_SPLIT_PER_K = 12


# certify_path on large n: at most this many screened features per k (the DNN's cost is |S|^2)
_PATH_SPLIT_CAP = 600


# certify_path on large n (certificates/path_large.py): one-k split certificates at every k up to
# _PATH_LARGE_EVERY_K, on a geometric grid of this ratio above, then at midpoints where the bound
# carried from the runs is above its chord; at most _PATH_LARGE_MAX_RUNS runs above
# _PATH_LARGE_EVERY_K (a run at k = 100-200 costs 50-90 MLL SVD units, 150 on a 72 x 5,147 matrix)
_PATH_LARGE_GRID = 1.5
_PATH_LARGE_MAX_RUNS = 10
_PATH_LARGE_EVERY_K = 64  # every k up to here is run (MLL: <= 20 SVD units each)


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
# _ANCHOR_PASSES passes over the n x w(k) candidate entries (w(k) = min(max(8 (k - 1), 48), n - 1):
# nspca_core.certificates.anchor.AnchorRows), one DNN iteration about _DNN_PASSES passes over n^2 entries (a
# rank-10 Ritz step and the Adam updates); calibrated on CBCL (n = 361): a failed bisection at
# k = 100 cost 0.7 of the "auto" DNN run.  It is tried (one certificate, a path's per-k runs, the
# coupled bound's refinements) while it costs at most one DNN run: since w(k) < n, at every k of
# "auto" (the rule that held at k <= 64 now holds above).  There was a fixed k <= 64 here, and the
# certified ratio fell 5 points at k = 65 on a 77 x 7,070 gene matrix (issue 39).
_ANCHOR_PASSES = 2700

# a dense certify_path tries the anchored bound at k up to this (not yet chosen by cost, issue 39
# item 2: at every k, failed bisections above it raised the CBCL path from 1,276 to 1,866 eigh units
# for the same ratios; one certificate has no such limit)
_PATH_ANCHOR_MAX_K = 64

# certify_path on large n: the lower bound of fit(auto) at every k up to this (a lower bound only:
# the upper bound is chosen by cost)
_PATH_FIT_MAX_K = 64

_DNN_PASSES = 24


def anchor_width(n: int, k: int) -> int:
    """The anchored bound's candidates per row (``AnchorRows``' default width)."""
    return int(min(max(8 * (k - 1), 48), max(n - 1, 1)))


def anchor_cost(n: int, k: int) -> float:
    """One anchored bisection at sparsity k on n features, in entry passes."""
    return float(_ANCHOR_PASSES) * n * anchor_width(n, k)


def anchor_ok(n: int, k: int) -> bool:
    """:func:`anchor_affordable` against the reference, one "auto" DNN run (every effort: "fast"
    runs fewer DNN iterations, and the anchored bound is its strength at small k)."""
    cfg = _EFFORT["auto"]
    return anchor_affordable(n, k, cfg["iters"] + cfg["cut_rounds"] * cfg["cut_iters"])


def anchor_affordable(n: int, k: int, iters: int, share: float = 1.0) -> bool:
    """Whether the anchored bound at k costs at most ``share`` x a DNN run of ``iters`` iterations
    on the same n features (counted: :data:`_ANCHOR_PASSES`, :data:`_DNN_PASSES`)."""
    return k >= 3 and anchor_cost(n, k) <= share * iters * _DNN_PASSES * float(n) * n


# "auto" adds the rank-2 paper/residual bounds (exact rank-2 spannogram, O(n^3)) only up to this n
_D2_MAX_N = 120


# thin data of numerical rank up to this is certified by the exact spannogram alone
_LOWRANK_MAX_RANK = 3


# effort -> DNN settings.  "fast": a short run from the screening initialization (interactive);
# "auto": no DNN at all when the cheap bounds certify 1 - accept_gap, else up to 120 iterations
# (+ 3 cutting-plane rounds of 40 while the ratio is below 0.97),
# stopping when the gap is below 1e-3 or progress stalls; "full": up to 2000 (+ 20 rounds of
# 2000) iterations aiming at OPTIMAL_TOLERANCE, plus more lower-bound starts and the expensive
# residual bounds.
_EFFORT = {
    "fast": dict(iters=40, cut_iters=0, cut_rounds=0, check_every=20, stall=1e-4, target_gap=1e-2,
                 split_size=600, ascent_starts=8, branch_nodes=0),
    "auto": dict(iters=80, cut_iters=40, cut_rounds=2, check_every=20, stall=3e-4, target_gap=1e-3,
                 split_size=1500, ascent_starts=24, branch_nodes=0, split_branch=0.5, accept_gap=4e-3),
    "full": dict(iters=2000, cut_iters=2000, cut_rounds=20, check_every=100, stall=1e-5,
                 target_gap=OPTIMAL_TOLERANCE, split_size=2500, ascent_starts=64, decay=0.998,
                 branch_nodes=3000, split_branch=10.0),
}


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
                 delta=3e-3, grid=2.0, polish_runs=8, polish_iters=200, polish_rounds=3,
                 target_gap=OPTIMAL_TOLERANCE, branch_nodes=100),
    "full": dict(iters=600, cut_iters=300, cut_rounds=10, check_every=50, stall=1e-5, min_iters=200,
                 delta=2e-4, grid=2 ** 0.25, polish_runs=40, polish_iters=300, polish_rounds=10,
                 decay=0.998, target_gap=OPTIMAL_TOLERANCE, branch_nodes=3000),
}
