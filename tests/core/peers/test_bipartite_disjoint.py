"""Bipartite components keep disjoint supports when the features run short (issue 40, item 1):
``n_components * k >= n``, duplicated and constant features; checked against brute force over
disjoint supports, with the joint certificate above it."""

from __future__ import annotations

from functools import lru_cache
from itertools import product

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nspca_core as nc
from nspca_core.operators.covariance import as_cov
from nspca_core.peers.bipartite import _split_gain, bipartite_components
from tests.bruteforce import brute_opt


def brute_joint(A, r, k):
    """max sum_t x_t^T A x_t over r unit x_t >= 0 with pairwise disjoint, nonempty supports of at
    most k features: every assignment of the features to {none, 1..r}."""
    n = A.shape[0]

    @lru_cache(maxsize=None)
    def best_on(J):
        return brute_opt(A[np.ix_(J, J)], len(J))[0]

    best = -np.inf
    for assign in product(range(r + 1), repeat=n):
        Js = [tuple(i for i in range(n) if assign[i] == t + 1) for t in range(r)]
        if all(0 < len(J) <= k for J in Js):
            best = max(best, sum(best_on(J) for J in Js))
    return best


def _data(seed: int, n: int, pattern: str) -> np.ndarray:
    """Centered 6 x n data: independent columns, duplicated ones (X = [z, z, ...]), or some
    constant (zero after centering)."""
    rng = np.random.default_rng(seed)
    if pattern == "independent":
        X = rng.standard_normal((6, n))
    elif pattern == "duplicated":
        base = rng.standard_normal((6, 2))
        X = base[:, rng.integers(0, 2, n)] * rng.choice([1.0, 2.0], n)
    else:  # some constant columns
        X = rng.standard_normal((6, n))
        X[:, rng.random(n) < 0.5] = 1.0
    return X - X.mean(axis=0)


def _check_disjoint(res, r, k, n):
    L = res.loadings
    assert L.shape == (n, r) and len(res.supports) == r
    assert np.all(L >= 0)
    assert np.allclose(np.linalg.norm(L, axis=0), 1.0)
    counts = np.count_nonzero(L, axis=0)
    assert np.all(counts >= 1) and np.all(counts <= k), counts
    assert np.all(np.count_nonzero(L, axis=1) <= 1), "overlapping supports"
    for j in range(r):
        assert np.array_equal(res.supports[j], np.flatnonzero(L[:, j]))


def test_two_copies_of_one_feature_give_two_disjoint_components():
    """The issue's case: X = [z, z], 2 components of k = 2 (the matching leaves one empty)."""
    z = np.array([0.3, -1.2, 0.5, 2.0, -0.7, -0.9])
    X = np.column_stack([z, z])
    X -= X.mean(axis=0)
    res = nc.components(X, n_components=2, k=2, strategy="bipartite", certify=True)
    _check_disjoint(res, 2, 2, 2)
    A = X.T @ X / X.shape[0]
    opt = brute_joint(A, 2, 2)
    assert res.total_variance == pytest.approx(opt, rel=1e-9)
    assert np.isfinite(res.upper_bound) and res.upper_bound >= opt * (1 - 1e-12)
    assert any("moved to it" in note for note in res.info["notes"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 5), r=st.integers(1, 3), k=st.integers(1, 3),
       pattern=st.sampled_from(["independent", "duplicated", "constant"]))
def test_disjoint_and_never_above_the_joint_optimum(seed, n, r, k, pattern):
    r, k = min(r, n), min(k, n)
    X = _data(seed, n, pattern)
    A = X.T @ X / X.shape[0]
    res = nc.components(X, n_components=r, k=k, strategy="bipartite", certify=True, samples=200, seed=seed)
    _check_disjoint(res, r, k, n)
    opt = brute_joint(A, r, k)
    scale = max(1.0, float(np.abs(A).max()))
    assert res.total_variance <= opt + 1e-9 * scale
    assert np.isfinite(res.upper_bound), res.bound_kind
    assert res.upper_bound >= opt - 1e-9 * scale


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 6))
def test_split_gain_is_exact_and_never_negative(seed, n):
    """The gain of moving feature i out of x into its own component, against recomputing it."""
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n, n))
    A = B @ B.T * rng.choice([1e-3, 1.0, 1e3])
    x = np.abs(rng.standard_normal(n)) * (rng.random(n) < 0.7)
    if np.count_nonzero(x) < 2:
        x[:2] = 1.0
    x /= np.linalg.norm(x)
    cov = as_cov(cov=A)
    gain = _split_gain(cov, x, np.diag(A))
    for i in range(n):
        if x[i] == 0:
            assert gain[i] == -np.inf
            continue
        rest = x.copy()
        rest[i] = 0.0
        rest /= np.linalg.norm(rest)
        direct = A[i, i] + rest @ A @ rest - x @ A @ x
        assert gain[i] == pytest.approx(direct, rel=1e-9, abs=1e-9 * np.abs(A).max())
        assert gain[i] >= -1e-9 * np.abs(A).max()


def test_peer_direct_call_fills_every_component_signed_too():
    """bipartite_components itself (both signs): n_components * k > n leaves no feature unused."""
    rng = np.random.default_rng(5)
    z = rng.standard_normal(8)
    X = np.column_stack([z, z, -z])
    X -= X.mean(axis=0)
    for nonneg in (True, False):
        res = bipartite_components(as_cov(X), 3, 2, nonneg=nonneg, samples=50)
        L = res.loadings
        assert np.all(np.count_nonzero(L, axis=0) >= 1)
        assert np.all(np.count_nonzero(L, axis=1) <= 1)
        assert np.allclose(np.linalg.norm(L, axis=0), 1.0)
