"""The residual bound at d = 2 and 3 for sparse data (nspca_core.certificates.sparse_residual): above the brute-force
optimum of exact rational covariances whatever V was made from and however the rows stop, OPT_d(V) plus the
dense residual row sums when every row that can bind was computed, and what certify gives a topic corpus."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core import certify
from nspca_core.certificates import cheap
from nspca_core.certificates.arcs import opt2_upper
from nspca_core.certificates.caps import opt3_upper
from nspca_core.certificates.sparse_residual import residual_factor, sparse_residual2
from nspca_core.operators.sparse import as_sparse_cov
from nspca_core.operators.weighted import weighted_sparse_cov
from tests.bruteforce import brute_opt
from tests.core.certificates.test_sparse_rows import counts, exact_cov


def _vectors(A: np.ndarray, how: str, seed: int, dim: int):
    """``dim`` vectors and values for V: the float covariance's top eigenpairs, or random ones (any V is valid)."""
    n = A.shape[0]
    if how == "eigen" and n >= dim:
        w, U = np.linalg.eigh(A)
        if w[-dim] > 0:
            return U[:, ::-1][:, :dim], w[::-1][:dim]
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, dim)), rng.uniform(0.1, 10.0, dim)


@settings(max_examples=80, deadline=None)
@given(D=counts(), center=st.booleans(), k=st.integers(1, 7), how=st.sampled_from(["eigen", "random"]),
       seed=st.integers(0, 2**31 - 1), cap=st.sampled_from([None, 0.0, 30.0]), enough=st.sampled_from([None, 0.5]),
       dim=st.sampled_from([2, 3]))
def test_bound_at_least_brute_force(D, center, k, how, seed, cap, enough, dim):
    """Above the exact optimum for any V, however the rows stop (all of them, the screen, the work cap, enough)."""
    k = min(k, D.shape[1])
    A = exact_cov(D, center)
    opt, _ = brute_opt(A, k)
    U, w = _vectors(A, how, seed, dim)
    cov = as_sparse_cov(sp.csr_matrix(D.astype(np.float64)), center=center)
    got = sparse_residual2(cov, k, U, w, work_cap=cap, enough=None if enough is None else enough * opt)
    assert got is not None
    bound, did = got
    assert bound >= opt * (1 - 1e-12) - 1e-300, did


@settings(max_examples=60, deadline=None)
@given(D=counts(), center=st.booleans(), k=st.integers(1, 7), how=st.sampled_from(["eigen", "random"]),
       seed=st.integers(0, 2**31 - 1), dim=st.sampled_from([2, 3]))
def test_every_row_that_can_bind_is_computed(D, center, k, how, seed, dim):
    """Run to its end (no cap): OPT_2(V) plus the largest k-sum of a row of (A - V V^T)_+ formed densely, to
    rounding (the screen skipped no row that binds)."""
    k = min(k, D.shape[1])
    A = exact_cov(D, center)
    U, w = _vectors(A, how, seed, dim)
    X = sp.csr_matrix(D.astype(np.float64))
    cov = as_sparse_cov(X, center=center)
    bound, did = sparse_residual2(cov, k, U, w, work_cap=np.inf)
    mu = np.asarray(X.sum(axis=0)).ravel() / X.shape[0] if center else np.zeros(X.shape[1])
    V = residual_factor(X, X.T.tocsr(), mu, U, w)
    R = np.maximum(A - V @ V.T, 0.0)
    rows = np.sort(R, axis=1)[:, ::-1][:, :k].sum(axis=1).max()
    reference = (opt2_upper if dim == 2 else opt3_upper)(V, k)[0] + rows
    second = float((D.astype(np.float64) ** 2).mean(axis=0).max())  # (the allowances scale with the second moments)
    scale = (float(np.abs(A).max()) + float((V * V).sum()) + second) * k
    assert bound >= reference - 1e-9 * scale, did
    assert bound <= reference + 1e-9 * scale, did


def test_only_plain_sparse_covariances_with_two_or_three_values():
    X = sp.random(20, 10, density=0.3, random_state=0, format="csr")
    U = np.ones((10, 2))
    assert sparse_residual2(weighted_sparse_cov(X, np.linspace(1, 2, 20)), 3, U, np.ones(2)) is None
    assert sparse_residual2(as_sparse_cov(X), 3, U, np.array([1.0, 0.0])) is None
    assert sparse_residual2(as_sparse_cov(X), 3, np.ones((10, 4)), np.ones(4)) is None
    assert sparse_residual2(as_sparse_cov(X), 3, np.ones((10, 3)), np.ones(3)) is not None


@pytest.fixture(scope="module")
def topic_corpus():
    """1,500 documents over 2,600 words (above the dense size): each a mix of two of 12 Dirichlet topics, half of
    every topic a Zipf vocabulary, log-normal lengths."""
    rng = np.random.default_rng(0)
    m, n, topics = 1500, 2600, 12
    p = 1.0 / np.arange(1, n + 1) ** 1.07
    T = rng.dirichlet(np.full(n, 0.05), topics) * 0.5 + p / p.sum() * 0.5
    D = np.zeros((m, n), dtype=np.int64)
    for i in range(m):
        L = int(rng.lognormal(np.log(90), 0.6)) + 5
        a, b = rng.choice(topics, 2, replace=False)
        f = rng.binomial(L, rng.uniform(0.5, 1.0))
        D[i] = rng.multinomial(f, T[a]) + rng.multinomial(L - f, T[b])
    return sp.csr_matrix(D)


@pytest.mark.parametrize("dim", [2, 3])
@pytest.mark.parametrize("k", [3, 5, 10])
def test_certify_topic_corpus_residual_binds(topic_corpus, k, dim, monkeypatch):
    """A topic corpus above the dense size whose top eigenvalue is loose: the residual bound (d = 2, and the shipped
    d = 3, cheap._RESIDUAL_D; its work cap lifted) is below lambda_1 and paper(d=2), proved (the certificate it decides
    is not probabilistic), above the answer."""
    monkeypatch.setattr(cheap, "_RESIDUAL_D", dim)
    monkeypatch.setattr(cheap, "_RESIDUAL_WORK", np.inf)
    c = certify(topic_corpus, k=k)
    name = f"residual(d={dim})"
    assert c.lower <= c.upper_bound
    assert c.bounds[name] < min(c.bounds["paper(d=2)"], c.bounds["lambda1"])
    assert c.kind == name and not c.probabilistic


@pytest.mark.parametrize("work", [0.0, 5.0])
def test_certify_with_the_residual_capped(topic_corpus, work, monkeypatch):
    """The residual's rows stopped by their work cap at once or early: its bound is then a screen value, valid (above
    the answer), and the certificate is the smallest bound as ever."""
    monkeypatch.setattr(cheap, "_RESIDUAL_WORK", work)
    c = certify(topic_corpus, k=5)
    if work == 0.0:
        assert c.info["residual_rows"]["stopped"] == "cap" and c.info["residual_rows"]["rows"] == 0
    assert c.bounds["residual(d=3)"] >= c.lower
    assert c.upper_bound == min(c.bounds.values())
