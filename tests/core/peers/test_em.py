"""EM's renormalization on a support wider than the data is thin works on the Gram side (m × m)
and gives the answer of the dense |I| × |I| eigendecomposition."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import nspca_core as nc
from nspca_core._cov import Cov
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
    res = nc.fit(X, k=300, method="em", certify=False)
    dense = nc.fit(cov=X.T @ X / 6, k=300, method="em", certify=False)
    lam = np.linalg.eigvalsh(X.T @ X / 6)[-1]
    assert res.variance == pytest.approx(dense.variance, rel=1e-9)
    assert 0.9 * lam <= res.variance <= lam * (1 + 1e-12)
