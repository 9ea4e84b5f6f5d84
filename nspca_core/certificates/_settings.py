"""Settings of the certificates (tolerances, effort tables) and argument checks."""

from __future__ import annotations

import numbers

import numpy as np

from .._validation import InputError, check_vector

EFFORTS = ("auto", "fast", "full")  # of every certificate; one k also takes "exact" (EXACT_EFFORT)

EXACT_EFFORT = "exact"


# effort "exact": the branch and bound's time limit when none is given (seconds)
_EXACT_TIME = 60.0


# relative gap (upper - lower) <= OPTIMAL_TOLERANCE * upper under which `optimal` is declared
OPTIMAL_TOLERANCE = 1e-5


# above this many features the DNN runs on a screened subset (split bound)
_DENSE_MAX_N = 2500


# the screened subset of the split bound: max(_SPLIT_MIN, _SPLIT_PER_K k) features, at most the
# effort's split_size (on MLL, 72 x 12,582, 12 k keeps the DNN's mu above every variance left
# outside at k = 5..50; 300 features cost a fifth of 1500 per DNN iteration)
_SPLIT_MIN = 300
_SPLIT_PER_K = 12


# certify_path on large n: at most this many screened features per k (the DNN's cost is |S|^2)
_PATH_SPLIT_CAP = 600


_EPS = np.finfo(float).eps


# "auto" adds the cut phase of the DNN (doubling its cost) only below this certified ratio
_CUT_BELOW = 0.97


# the DNN optimizer (projected Adam, see nspca_core._dnn.dnn_optimize), relative to max|A_ij|:
# learning rate from a fresh start, from a neighbour's (or a previous round's) dual point, its
# decay per iteration, and the smoothing t (start, end)
_LR = 3e-3


_LR_WARM = 1e-3


_DECAY = 0.99
_T0, _T1 = 1e-3, 1e-4


# at most this many cut vectors carried along a path
_MAX_CUTS = 30


# the anchored row-sum bound (nspca_core._anchor) is tried for 3 <= k <= this, where the DNN
# certifies less than _CUT_BELOW
_ANCHOR_MAX_K = 64


# "auto" adds the rank-2 paper/residual bounds (exact rank-2 spannogram, O(n^3)) only up to this n
_D2_MAX_N = 120


# thin data of numerical rank up to this is certified by the exact spannogram alone
_LOWRANK_MAX_RANK = 3


# effort -> DNN settings.  "fast": a short run from the screening initialization (interactive);
# "auto": up to 120 iterations (+ 3 cutting-plane rounds of 40 while the ratio is below 0.97),
# stopping when the gap is below 1e-3 or progress stalls; "full": up to 2000 (+ 20 rounds of
# 2000) iterations aiming at OPTIMAL_TOLERANCE, plus more lower-bound starts and the expensive
# residual bounds.
_EFFORT = {
    "fast": dict(iters=40, cut_iters=0, cut_rounds=0, check_every=20, stall=1e-4, target_gap=1e-2,
                 split_size=600, ascent_starts=8, branch_nodes=0),
    "auto": dict(iters=80, cut_iters=40, cut_rounds=2, check_every=20, stall=3e-4, target_gap=1e-3,
                 split_size=1500, ascent_starts=24, branch_nodes=0, split_branch=0.5),
    "full": dict(iters=2000, cut_iters=2000, cut_rounds=20, check_every=100, stall=1e-5,
                 target_gap=OPTIMAL_TOLERANCE, split_size=2500, ascent_starts=64, decay=0.998,
                 branch_nodes=3000, split_branch=10.0),
}


def _check_effort(effort) -> str:
    if not isinstance(effort, str) or effort not in EFFORTS + (EXACT_EFFORT,):
        raise InputError(f"`effort` must be one of {EFFORTS}; got {effort!r} (or 'exact' for one k: "
                         "branch and bound)")
    return effort


def _check_time_limit(time_limit, effort: str):
    if time_limit is None:
        return _EXACT_TIME if effort == "exact" else None
    if effort != "exact":
        raise InputError(f"`time_limit` applies to effort='exact' only; got effort={effort!r}")
    if isinstance(time_limit, bool) or not isinstance(time_limit, numbers.Real) \
            or not (np.isfinite(time_limit) and time_limit > 0):
        raise InputError(f"`time_limit` must be a positive number of seconds; got {time_limit!r}")
    return float(time_limit)


def _check_callback(callback):
    if callback is not None and not callable(callback):
        raise InputError(f"`callback` must be callable(done, total) or None; got {type(callback).__name__}")
    return callback


def _check_x(x, n: int, k: int, name: str = "x") -> np.ndarray:
    """A feasible point: length n, nonnegative, at most k nonzeros, nonzero; returned unit-norm."""
    x = check_vector(x, name)
    if x.size != n:
        raise InputError(f"`{name}` must have length n_features={n}; got length {x.size}")
    if x.min() < 0:
        raise InputError(f"`{name}` must be nonnegative; got min({name}) = {x.min():.3g}")
    nnz = int(np.count_nonzero(x))
    if nnz == 0:
        raise InputError(f"`{name}` must have at least one nonzero entry; got the zero vector")
    if nnz > k:
        raise InputError(f"`{name}` must have at most k={k} nonzeros; got {nnz}")
    return x / np.linalg.norm(x)


def _check_ks(ks, n: int) -> list[int]:
    try:
        items = list(ks)
    except TypeError:
        raise InputError(f"`ks` must be a sequence of ints in [1, n_features={n}]; got {ks!r}") from None
    if not items:
        raise InputError("`ks` must be a non-empty sequence of ints; got an empty one")
    out = []
    for v in items:
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or not 1 <= int(v) <= n:
            raise InputError(f"`ks` must hold ints in [1, n_features={n}]; got {v!r}")
        out.append(int(v))
    return out


# path settings per effort: DNN iterations per k, stall threshold, refinement threshold delta.
# "auto" measured on CBCL (all 361 k): grid 2 (was sqrt 2), delta 3e-3 (was 1e-3), 60 + 40
# iterations (was 100 + 60), checks every 20, 4 polish runs (was 14), 100 branch nodes (was 300):
# 651 -> 402 units in one run, min ratio 0.9735 -> 0.9713, mean 0.9949 -> 0.9948
_PATH = {
    "fast": dict(iters=30, cut_iters=0, cut_rounds=0, check_every=10, stall=1e-3, min_iters=20,
                 delta=1e-2, grid=2.0, polish_runs=0, polish_iters=0, polish_rounds=0,
                 target_gap=1e-2, branch_nodes=0),
    "auto": dict(iters=60, cut_iters=40, cut_rounds=2, check_every=20, stall=3e-4, min_iters=20,
                 delta=3e-3, grid=2.0, polish_runs=4, polish_iters=200, polish_rounds=3,
                 target_gap=OPTIMAL_TOLERANCE, branch_nodes=100),
    "full": dict(iters=600, cut_iters=300, cut_rounds=10, check_every=50, stall=1e-5, min_iters=200,
                 delta=2e-4, grid=2 ** 0.25, polish_runs=40, polish_iters=300, polish_rounds=10,
                 decay=0.998, target_gap=OPTIMAL_TOLERANCE, branch_nodes=3000),
}
