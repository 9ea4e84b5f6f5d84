"""Sparse data end to end (issue 17): the public API on scipy.sparse input gives the answers
of the same data densified and centered, and never needs the dense matrix."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import nspca_core as nc
from nspca_core import NonnegativeSparsePCA
from nspca_core.operators.sparse import as_sparse_cov

from tests.bruteforce import brute_opt

S = pytest.importorskip("nspca_core.certificates._settings")


def _sparse(seed, m=60, n=25, density=0.2, fmt="csr"):
    X = sp.random(m, n, density=density, random_state=seed, format=fmt) * 10
    return X, X.toarray() - X.toarray().mean(axis=0)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("method", ["auto", "tpower", "em", "spannogram", "enet"])
def test_fit_on_sparse_equals_fit_on_centered_dense(fmt, method):
    for seed in range(3):
        X, Xc = _sparse(seed, fmt=fmt)
        for k in (1, 2, 4, 9):
            a = nc.fit(X, k=k, method=method, certify=False)
            b = nc.fit(Xc, k=k, method=method, certify=False)
            assert a.variance == pytest.approx(b.variance, rel=1e-9)
            assert np.allclose(a.x, b.x, atol=1e-7)


def test_sparse_array_type_is_accepted():
    X, Xc = _sparse(4)
    a = nc.fit(sp.csr_array(X), k=3, certify=False)
    assert a.variance == pytest.approx(nc.fit(Xc, k=3, certify=False).variance, rel=1e-9)


@pytest.mark.parametrize("strategy", ["deflation-remove", "deflation-project", "bipartite"])
def test_components_on_sparse_equal_dense(strategy):
    X, Xc = _sparse(5, n=30)
    a = nc.components(X, n_components=3, k=4, strategy=strategy)
    b = nc.components(Xc, n_components=3, k=4, strategy=strategy)
    assert np.allclose(a.variance, b.variance, rtol=1e-8)
    assert np.allclose(a.loadings, b.loadings, atol=1e-7)


def test_certificates_on_sparse_are_valid_small_and_as_operator(monkeypatch):
    rng = np.random.default_rng(6)
    for trial in range(12):
        m, n = int(rng.integers(6, 30)), int(rng.integers(4, 9))
        X = sp.random(m, n, density=0.5, random_state=trial, format="csr") * 3
        Xc = X.toarray() - X.toarray().mean(axis=0)
        A = Xc.T @ Xc / m
        k = int(rng.integers(1, n + 1))
        opt, _ = brute_opt(A, k)
        small = nc.certify(X, k=k)  # small n: the dense machinery on the (formed) covariance
        assert small.upper_bound >= opt * (1 - 1e-9) - 1e-12
        with monkeypatch.context() as mp:
            mp.setattr(S, "_DENSE_MAX_N", 2)  # force the operator path (what large sparse data takes)
            big = nc.certify(X, k=k)
            assert big.upper_bound >= opt * (1 - 1e-9) - 1e-12
            assert big.probabilistic == (big.kind != "rowsum")  # Lanczos's bounds only are probabilistic
            assert big.lower <= opt * (1 + 1e-9) + 1e-12
            path = nc.certify_path(X, ks=[1, k])
            assert path[-1].upper_bound >= opt * (1 - 1e-9) - 1e-12


def test_large_sparse_never_forms_the_dense_covariance():
    X = sp.random(400, 20_000, density=0.002, random_state=7, format="csr")
    cov = as_sparse_cov(X, dense_budget=0)  # any attempt to form 20,000 x 20,000 raises
    r = nc.fit(cov, k=5)
    assert np.count_nonzero(r.x) <= 5 and r.upper_bound >= r.variance
    c = nc.components(cov, n_components=3, k=5, strategy="deflation-project")
    assert c.loadings.shape == (20_000, 3)


def test_estimator_on_sparse_matches_dense():
    X = sp.random(80, 30, density=0.25, random_state=8, format="csr") * 4
    for pre in ("center", "standardize", "none"):
        a = NonnegativeSparsePCA(3, k=5, preprocessing=pre, certify=False, random_state=0).fit(X)
        b = NonnegativeSparsePCA(3, k=5, preprocessing=pre, certify=False, random_state=0).fit(X.toarray())
        assert np.allclose(a.components_, b.components_, atol=1e-7)
        assert np.allclose(a.transform(X), b.transform(X.toarray()), atol=1e-7)
