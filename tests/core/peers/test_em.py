"""EM's renormalization on a support wider than the data is thin works on the Gram side (m × m)
and gives the answer of the dense |I| × |I| eigendecomposition."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import nspca_core as nc
from nspca_core.operators.cov import Cov
from nspca_core.peers.em import _GramSide, renormalize_on_support


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 9), st.integers(14, 60), st.booleans())
def test_gram_side_equals_the_dense_support_matrix(seed, m, n, nonneg):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n)) * rng.uniform(0.1, 3, n)
    X -= X.mean(axis=0)
    x = np.zeros(n)
    support = rng.choice(n, size=int(rng.integers(13, n + 1)), replace=False)
    x[support] = rng.random(support.size) + 0.01
    x /= np.linalg.norm(x)
    thin = Cov(X=X)
    dense = Cov(A=X.T @ X / m)
    a, _ = renormalize_on_support(thin, x, nonneg)
    b, _ = renormalize_on_support(dense, x, nonneg)
    A = X.T @ X / m
    assert a @ A @ a == pytest.approx(b @ A @ b, rel=1e-9, abs=1e-12)
    assert a @ A @ a >= x @ A @ x * (1 - 1e-12)  # never worse than the start
    assert np.isclose(np.linalg.norm(a), 1.0) and set(np.flatnonzero(a)) <= set(support)
    if nonneg:
        assert (a >= 0).all()


def test_gram_side_operator_products():
    rng = np.random.default_rng(0)
    XI = rng.standard_normal((4, 20))
    B, v = _GramSide(XI), rng.standard_normal(20)
    dense = XI.T @ XI / 4
    assert np.allclose(B @ v, dense @ v) and np.allclose(v @ B, v @ dense)
    assert np.isclose(v @ B @ v, v @ dense @ v)


def test_em_without_sparsity_on_thin_data_equals_the_dense_covariance():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((6, 300)) + 2 * np.abs(rng.standard_normal(300))  # fit takes X as given
    res = nc.fit(X, k=300, method="em", certify=False, center=False)
    dense = nc.fit(cov=X.T @ X / 6, k=300, method="em", certify=False)
    lam = np.linalg.eigvalsh(X.T @ X / 6)[-1]
    assert res.variance == pytest.approx(dense.variance, rel=1e-9)
    assert 0.9 * lam <= res.variance <= lam * (1 + 1e-12)


def _projected_reference(B, x, tol=1e-10, max_iter=2000):
    """x <- P_+(Bx) / ||P_+(Bx)|| written out, stopping when |<y, x>| > 1 - tol (or Bx has no
    positive entry)."""
    for _ in range(max_iter):
        y = np.maximum(B @ x, 0.0)
        if not y.any():
            return x
        y = y / np.linalg.norm(y)
        if abs(y @ x) > 1 - tol:
            return y
        x = y
    return x


@pytest.mark.parametrize("seed", range(8))
def test_projected_ascent_is_the_projected_power_iteration(seed):
    from nspca_core.peers.em import _projected_ascent

    rng = np.random.default_rng(seed)
    G = rng.standard_normal((20, 15)) @ (np.eye(15) + 0.4 * rng.standard_normal((15, 15)))
    B = G.T @ G / 20
    x = np.abs(rng.standard_normal(15))
    x /= np.linalg.norm(x)
    for max_iter in (1, 3, 2000):
        np.testing.assert_allclose(_projected_ascent(B, x, max_iter=max_iter),
                                   _projected_reference(B, x, max_iter=max_iter), atol=1e-12)


def test_renormalization_by_projected_ascent_never_lowers_the_value():
    seen = 0
    for seed in range(12):
        rng = np.random.default_rng(seed)
        X = rng.standard_normal((25, 30)) @ (np.eye(30) + 0.3 * rng.standard_normal((30, 30)))
        cov = Cov(X - X.mean(0))
        x = np.zeros(30)
        x[rng.choice(30, 16, replace=False)] = np.abs(rng.standard_normal(16))
        x /= np.linalg.norm(x)
        y, how = renormalize_on_support(cov, x, True)
        seen += how == "projected-ascent"
        assert cov.quad(y) >= cov.quad(x) * (1 - 1e-12)
        assert (y >= 0).all() and set(np.flatnonzero(y)) <= set(np.flatnonzero(x))
        np.testing.assert_allclose(np.linalg.norm(y), 1.0)
    assert seen >= 6  # the case is exercised
