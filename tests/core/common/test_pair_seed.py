"""``pairs.pair_seed`` (issue 39, helper mll10): the split bound's exact pairs on S screened below a feasible
pair's value return the same float as the enumeration of every pair, at least the brute-force optimum."""

from __future__ import annotations

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from nspca_core._common.pairs import opt_pairs, pair_seed
from nspca_core.operators.cov import Cov

from tests.bruteforce import brute_opt


def _matrix(seed: int, n: int, kind: str, e: float) -> np.ndarray:
    """Covariances (psd: opt_pairs' screening rests on Cauchy-Schwarz) at scale 2^e: plain, anticorrelated
    columns (negative entries), pairs that gain almost nothing over the largest variance (tiny positive
    couplings on a dominant diagonal), and tied variances."""
    rng = np.random.default_rng(seed)
    if kind == "covariance":
        X = rng.standard_normal((max(2, n // 2), n)) * rng.uniform(0.1, 3.0, n)
        A = X.T @ X / X.shape[0]
    elif kind == "anticorrelated":
        X = rng.standard_normal((4, n))
        X[:, 1::2] = -X[:, 0:n - 1:2] + 0.1 * rng.standard_normal((4, n // 2))
        A = X.T @ X / 4
    elif kind == "tiny gains":
        A = np.diag(rng.uniform(0.5, 1.0, n))
        C = np.triu(rng.uniform(0.0, 1e-9, (n, n)), 1)
        A = A + C + C.T
    else:  # tied variances
        X = rng.integers(-2, 3, (3, n)).astype(float)
        A = X.T @ X
        A[np.diag_indices(n)] = A.diagonal().max()
    return A * 2.0 ** e


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(2, 9),
       st.sampled_from(["covariance", "anticorrelated", "tiny gains", "tied"]),
       st.floats(-40, 40))
@example(seed=0, n=2, kind="tiny gains", e=0.0)
def test_seeded_pairs_are_the_same_float_and_above_bruteforce(seed, n, kind, e):
    A = _matrix(seed, n, kind, e)
    s = pair_seed(A)
    full = opt_pairs(Cov(None, A), 2)[0]
    seeded = opt_pairs(Cov(None, A), 2, lower=s)[0]
    assert seeded == full
    assert s <= full
    opt = brute_opt(A, 2)[0]
    assert full >= opt - 1e-12 * float(np.abs(A).max())


def test_the_seed_screens_features_out():
    """On variances spread over decades most features cannot pair above the seed: fewer rows enumerated."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((20, 300)) * np.logspace(0, -3, 300)
    A = X.T @ X / 20
    s = pair_seed(A)
    amax = float(A.diagonal().max())
    assert s > amax
    kept = int(np.sum(A.diagonal() >= (1 - 1e-9) * (s - amax) ** 2 / amax))
    assert kept < 300 // 2
    assert opt_pairs(Cov(None, A), 2, lower=s)[0] == opt_pairs(Cov(None, A), 2)[0]
