"""SparseCov: the implicitly centered covariance of sparse data equals Cov on the
densified centered matrix; validation messages; the dense() budget."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core.operators.cov import Cov
from nspca_core.operators.covariance import as_cov
from nspca_core.operators.sparse import SparseCov, as_sparse_cov
from nspca_core._common.validation import InputError


def random_sparse(m, n, density, seed, fmt="csr", array=False, integer=False):
    rng = np.random.default_rng(seed)
    X = sp.random(m, n, density=density, format=fmt, random_state=rng,
                  data_rvs=(lambda k: rng.integers(1, 6, k)) if integer else None)
    if array:
        X = sp.csr_array(X) if fmt == "csr" else sp.csc_array(X)
    return X


def dense_reference(X, center=True):
    """Cov on the densified matrix, centered explicitly (the obviously-correct path)."""
    D = X.toarray().astype(np.float64)
    if center:
        D = D - D.mean(axis=0)
    return as_cov(X=D, center=False), D  # D is centered above when asked: used as given


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("array", [False, True])
@pytest.mark.parametrize("center", [True, False])
@pytest.mark.parametrize("shape", [(40, 25), (15, 30)])
def test_operations_equal_dense_centered(fmt, array, center, shape):
    X = random_sparse(*shape, 0.2, seed=1, fmt=fmt, array=array)
    S = as_sparse_cov(X, center=center)
    ref, D = dense_reference(X, center)
    A = D.T @ D / D.shape[0]
    rng = np.random.default_rng(0)
    v = rng.standard_normal(shape[1])
    Vm = rng.standard_normal((shape[1], 3))
    np.testing.assert_allclose(S.matvec(v), A @ v, atol=1e-12)
    np.testing.assert_allclose(S.matvec(Vm), A @ Vm, atol=1e-12)
    np.testing.assert_allclose(S.quads(Vm), ref.quads(Vm), atol=1e-12)
    assert S.quad(v) == pytest.approx(float(v @ A @ v), abs=1e-12)
    J = [3, 0, 7, 11]
    np.testing.assert_allclose(S.submatrix(J), A[np.ix_(J, J)], atol=1e-12)
    np.testing.assert_allclose(S.diag(), np.diag(A), atol=1e-12)
    assert S.trace() == pytest.approx(np.trace(A), abs=1e-12)
    np.testing.assert_allclose(S.dense(), A, atol=1e-12)
    if center:
        np.testing.assert_allclose(S.mean, X.toarray().mean(axis=0), atol=1e-14)


def _same_up_to_sign(V, W, atol):
    for j in range(V.shape[1]):
        s = 1.0 if np.abs(V[:, j] - W[:, j]).max() <= np.abs(V[:, j] + W[:, j]).max() else -1.0
        np.testing.assert_allclose(V[:, j], s * W[:, j], atol=atol)


@pytest.mark.parametrize("method", ["eigsh", "svds"])
@pytest.mark.parametrize("shape", [(80, 40), (30, 60)])
@pytest.mark.parametrize("d", [1, 3])
def test_factor_equals_dense(method, shape, d):
    X = random_sparse(*shape, 0.3, seed=2)
    S = as_sparse_cov(X)
    ref, _ = dense_reference(X)
    V, w = S.factor(d, method=method)
    Vr, wr = ref.factor(d)
    assert V.shape == (shape[1], d) and w.shape == (d + 1,)
    np.testing.assert_allclose(w, wr, atol=1e-8)
    _same_up_to_sign(V, Vr, 1e-8)


def test_factor_randomized_close_with_power_iterations():
    rng = np.random.default_rng(3)
    # a clear gap after d + 1 so the range finder converges fast
    U = sp.random(200, 4, density=1.0, random_state=rng) @ sp.diags([30.0, 20.0, 10.0, 5.0])
    X = sp.csr_matrix(U @ sp.random(4, 50, density=0.5, random_state=rng)
                      + sp.random(200, 50, density=0.05, random_state=rng) * 0.01)
    S = as_sparse_cov(X)
    ref, _ = dense_reference(X)
    V, w = S.factor(2, method="randomized", n_iter=8)
    Vr, wr = ref.factor(2)
    np.testing.assert_allclose(w[:2], wr[:2], rtol=1e-8)
    _same_up_to_sign(V, Vr, 1e-6)


def test_factor_tiny_falls_back_to_dense():
    X = random_sparse(4, 6, 0.6, seed=4)
    V, w = as_sparse_cov(X).factor(4)
    Vr, wr = dense_reference(X)[0].factor(4)
    np.testing.assert_allclose(w, wr, atol=1e-10)


@settings(max_examples=30, deadline=None)
@given(m=st.integers(2, 25), n=st.integers(2, 25), density=st.floats(0.05, 1.0),
       seed=st.integers(0, 10_000), center=st.booleans())
def test_property_matvec_quads_diag(m, n, density, seed, center):
    X = random_sparse(m, n, density, seed, integer=True)
    S = as_sparse_cov(X, center=center)
    _, D = dense_reference(X, center)
    A = D.T @ D / m
    v = np.random.default_rng(seed).standard_normal((n, 2))
    scale = max(1.0, np.abs(A).max())
    np.testing.assert_allclose(S.matvec(v), A @ v, atol=1e-10 * scale * np.abs(v).sum())
    np.testing.assert_allclose(S.quads(v), np.einsum("ij,ij->j", v, A @ v),
                               atol=1e-10 * scale * (np.abs(v) ** 2).sum())
    np.testing.assert_allclose(S.diag(), np.diag(A), atol=1e-10 * scale)
    assert (S.diag() >= 0).all()


def test_is_a_cov_and_has_no_dense_X():
    S = as_sparse_cov(random_sparse(10, 5, 0.5, seed=0))
    assert isinstance(S, Cov) and S.sparse and S.X is None and not S.thin


def test_integer_counts_become_float64_and_float32_kept():
    X = random_sparse(10, 5, 0.5, seed=0, integer=True).astype(np.int64)
    assert as_sparse_cov(X).X_sparse.dtype == np.float64
    assert as_sparse_cov(X.astype(np.float32)).X_sparse.dtype == np.float32
    coo = X.tocoo()
    assert as_sparse_cov(coo).X_sparse.format == "csr"


def test_dense_refuses_over_budget_with_estimate():
    S = as_sparse_cov(random_sparse(10, 2000, 0.01, seed=0), dense_budget=1e6)
    with pytest.raises(InputError, match=r"2000 x 2000 covariance \(32 MB"):
        S.dense()
    # operator methods still work
    assert S.matvec(np.ones(2000)).shape == (2000,)


@pytest.mark.parametrize("bad, match", [
    (np.ones((3, 3)), "must be a scipy.sparse matrix"),
    (sp.csr_matrix((0, 3)), "at least 1 row and 1 column"),
    (sp.csr_matrix((3, 0)), "at least 1 row and 1 column"),
    (sp.csr_matrix(np.array([[1.0, np.nan], [0, 1]])), "must be finite; got 1 NaN/inf"),
    (sp.csr_matrix(np.array([[1.0, np.inf], [0, 1]])), "must be finite"),
    (sp.csr_matrix(np.array([[1 + 1j, 0], [0, 1]])), "must hold real numbers"),
])
def test_validation_messages(bad, match):
    with pytest.raises(InputError, match=match):
        as_sparse_cov(bad)


def test_option_messages():
    X = random_sparse(10, 5, 0.5, seed=0)
    with pytest.raises(InputError, match="`center` must be True or False"):
        as_sparse_cov(X, center="yes")
    with pytest.raises(InputError, match="`dense_budget` must be"):
        as_sparse_cov(X, dense_budget=-1)
    S = as_sparse_cov(X)
    with pytest.raises(InputError, match="`method` must be one of"):
        S.factor(1, method="lanczos")
    with pytest.raises(InputError, match=r"`d` must be an int in \[1, n_features=5\]"):
        S.factor(0)


def test_data_products_are_the_centered_matrix():
    X = random_sparse(12, 7, 0.4, seed=5)
    S = as_sparse_cov(X)
    Xc = X.toarray() - X.toarray().mean(axis=0)
    v, u = np.arange(7.0), np.arange(12.0)
    np.testing.assert_allclose(S.data_matvec(v), Xc @ v, atol=1e-12)
    np.testing.assert_allclose(S.data_rmatvec(u), Xc.T @ u, atol=1e-12)


# ----------------------------------------------------------------------------- solvers on SparseCov

from nspca_core.peers.bipartite import deflation_components  # noqa: E402
from nspca_core.peers.bipartite import bipartite_components  # noqa: E402


def _no_dense(S):
    """A SparseCov that refuses the n x n matrix (proves the solver never forms it)."""
    S.dense_budget = 0.0
    return S


@pytest.mark.parametrize("nonneg", [True, False])
def test_bipartite_sparse_equals_dense_centered(nonneg):
    X = random_sparse(60, 30, 0.25, seed=11, integer=True)
    S = _no_dense(as_sparse_cov(X))
    ref, _ = dense_reference(X)
    a = bipartite_components(S, 3, 4, d=3, seed=0, samples=200, nonneg=nonneg)
    b = bipartite_components(ref, 3, 4, d=3, seed=0, samples=200, nonneg=nonneg)
    np.testing.assert_allclose(a.loadings, b.loadings, atol=1e-8)
    np.testing.assert_allclose(a.variance, b.variance, atol=1e-8)
    assert [s.tolist() for s in a.supports] == [s.tolist() for s in b.supports]


@pytest.mark.parametrize("method", ["tpower", "em", "spannogram"])
@pytest.mark.parametrize("nonneg", [True, False])
def test_deflation_sparse_equals_dense_and_is_feasible(method, nonneg):
    X = random_sparse(50, 24, 0.3, seed=12, integer=True)
    S = _no_dense(as_sparse_cov(X))
    ref, D = dense_reference(X)
    a = deflation_components(S, 3, 4, method=method, nonneg=nonneg, samples=100)
    b = deflation_components(ref, 3, 4, method=method, nonneg=nonneg, samples=100)
    np.testing.assert_allclose(a.loadings, b.loadings, atol=1e-8)
    L = a.loadings
    np.testing.assert_allclose(np.linalg.norm(L, axis=0), 1.0)
    assert ((L != 0).sum(axis=0) <= 4).all()
    assert ((L != 0).sum(axis=1) <= 1).all()  # disjoint supports
    if nonneg:
        assert (L >= 0).all()
    A = D.T @ D / D.shape[0]
    np.testing.assert_allclose(a.variance, np.einsum("ij,ij->j", L, A @ L), atol=1e-10)


def _brute_best(A, k, nonneg):
    """max x^T A x over unit x with |supp| <= k (nonneg: x >= 0 via the exact small solver)."""
    from itertools import combinations

    from tests.bruteforce import brute_opt
    n = A.shape[0]
    if nonneg:
        return brute_opt(A, k)[0]
    return max(float(np.linalg.eigvalsh(A[np.ix_(I, I)])[-1])
               for size in range(1, k + 1) for I in combinations(range(n), size))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), nonneg=st.booleans(),
       method=st.sampled_from(["tpower", "em", "spannogram"]))
def test_property_deflation_first_component_below_brute_force(seed, nonneg, method):
    X = random_sparse(30, 8, 0.5, seed, integer=True)
    S = as_sparse_cov(X)
    _, D = dense_reference(X)
    A = D.T @ D / D.shape[0]
    res = deflation_components(S, 2, 2, method=method, nonneg=nonneg, samples=50)
    assert res.variance[0] <= _brute_best(A, 2, nonneg) + 1e-9
    assert ((res.loadings != 0).sum(axis=1) <= 1).all()


def test_deflation_messages():
    S = as_sparse_cov(random_sparse(20, 10, 0.5, seed=0))
    with pytest.raises(InputError, match="`method` must be one of"):
        deflation_components(S, 2, 2, method="greedy")
    with pytest.raises(InputError, match=r"at most n_features=10 for disjoint supports; got 3 \* 4"):
        deflation_components(S, 3, 4)
    with pytest.raises(InputError, match="`cov` must be a validated"):
        deflation_components(np.eye(3), 1, 1)


def test_columns_is_the_restricted_covariance():
    X = random_sparse(25, 12, 0.4, seed=3)
    S = as_sparse_cov(X)
    keep = np.array([0, 3, 4, 9, 11])
    _, D = dense_reference(X)
    A = D.T @ D / D.shape[0]
    np.testing.assert_allclose(S.columns(keep).dense(), A[np.ix_(keep, keep)], atol=1e-12)


def test_swap_recovers_a_topic_the_matching_misses():
    """Seed 4: the sampled net plus refinement leave one component on the frequent words;
    the swap moves it to the missing planted topic."""
    from nspca_core.corpus import synthetic_corpus
    c = synthetic_corpus(2000, 1500, nnz=90000, n_topics=6, topic_size=6, seed=4)
    S = as_sparse_cov(c.X)

    def worst(res):
        return min(max(len(set(a) & set(T)) / len(set(a) | set(T)) for a in res.supports)
                   for T in c.topics)
    plain = bipartite_components(S, 6, 6, d=6, seed=0, samples=300)
    swapped = bipartite_components(S, 6, 6, d=6, seed=0, samples=300, swap=True)
    assert worst(plain) < 0.8 and worst(swapped) == 1.0
    assert swapped.info["swaps"] >= 1
    assert swapped.variance.sum() > plain.variance.sum()


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), nonneg=st.booleans())
def test_property_swap_never_lowers_the_objective(seed, nonneg):
    X = random_sparse(40, 16, 0.3, seed, integer=True)
    S = as_sparse_cov(X)
    a = bipartite_components(S, 3, 3, d=3, seed=seed, samples=40, nonneg=nonneg, polish=False)
    b = bipartite_components(S, 3, 3, d=3, seed=seed, samples=40, nonneg=nonneg, polish=False,
                             swap=True)
    assert b.info["objective_before_polish"] >= a.info["objective_before_polish"] - 1e-10
    L = b.loadings
    assert ((L != 0).sum(axis=1) <= 1).all() and ((L != 0).sum(axis=0) <= 3).all()
    if nonneg:
        assert (L >= 0).all()
