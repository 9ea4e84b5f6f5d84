"""The split route's rest A_TT on sparse data with the covariance held (nspca_core.certificates.rest_top): its
lambda_max bound and its paper(d=1) bound with lambda_max(M - v v^T) hold against eigvalsh and brute force on
small word-count covariances; the rule that takes it is exactly its size threshold."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core.certificates import bounds as B
from nspca_core.certificates import rest_top as RT
from nspca_core.certificates.bounds import _opt1, _rest_curve, _rest_spectrum
from nspca_core.operators.sparse import as_sparse_cov
from tests.bruteforce import brute_opt
from tests.core.certificates.test_sparse_route import _counts
from tests.core.certificates.test_sparse_rows import exact_cov


@st.composite
def corpora(draw):
    m = draw(st.integers(4, 16))
    n = draw(st.integers(2, 9))
    D = _counts(draw(st.integers(0, 2**31 - 1)), m, n, draw(st.floats(0.3, 12.0)), draw(st.floats(0.2, 1.0)))
    D[:, draw(st.integers(0, n - 1))] *= draw(st.sampled_from([1, 40]))  # a word far more frequent
    return D


@settings(max_examples=60, deadline=None)
@given(D=corpora(), center=st.booleans())
def test_bounds_hold_against_brute_force(D, center):
    """``w[0] + tol`` at least lambda_max of the float M (eigvalsh, its own error allowed) and of the exact
    covariance; ``w[1] + tol`` at least lambda_max(M - v v^T); ``OPT_1(v, k) + w[1] + 2 tol`` (paper(d=1) as the
    bounds compute it) at least the exact k-sparse nonnegative optimum at every k."""
    M = as_sparse_cov(sp.csr_matrix(D.astype(float)), center).dense()
    out = RT.rest_top(M)
    if out is None:
        return
    w, tol, v = out
    n = M.shape[0]
    slack = 4 * n * np.finfo(float).eps * max(float(np.linalg.norm(M)), 1e-300)  # (eigvalsh's own rounding)
    E = exact_cov(D, center)
    assert w[0] + tol >= float(np.linalg.eigvalsh(M)[-1]) - slack
    assert w[0] + tol >= float(np.linalg.eigvalsh(E)[-1]) - slack
    assert w[1] + tol >= float(np.linalg.eigvalsh(M - np.outer(v, v))[-1]) - slack
    assert w[1] <= w[0]
    for k in range(1, n + 1):
        opt, _ = brute_opt(E, k)
        assert _opt1(v, k) + w[1] + 2 * tol >= opt * (1 - 1e-12) - 1e-300


@settings(max_examples=30, deadline=None)
@given(D=corpora(), center=st.booleans(), cut=st.integers(1, 4))
def test_rest_curve_through_the_route(D, center, cut):
    """The rest's curve B_T(j) the split route reads (:func:`.bounds._rest_curve` on :func:`_rest_spectrum`, the
    partial spectrum taken at any size here) at least the exact optimum of A_TT at every j."""
    n = D.shape[1]
    if n - cut < 2:
        return
    cov = as_sparse_cov(sp.csr_matrix(D.astype(float)), center)
    cov.dense()
    T = np.arange(cut, n)
    old = RT._PARTIAL_MIN_N
    RT._PARTIAL_MIN_N = 1
    try:
        spec = _rest_spectrum(cov, T)
        curve = _rest_curve(cov, T, T.size, spec=spec)
    finally:
        RT._PARTIAL_MIN_N = old
    E = exact_cov(D, center)[np.ix_(T, T)]
    for j in range(1, T.size + 1):
        opt, _ = brute_opt(E, j)
        assert curve[j] >= opt * (1 - 1e-12) - 1e-300


def test_taken_exactly_from_its_size(monkeypatch):
    """rest_top is asked exactly where T has at least _PARTIAL_MIN_N features (sparse data, A held); not for a
    dense covariance nor before A is formed; its Spectrum is what the bounds read (lambda1 = w[0] + tol)."""
    X = sp.csr_matrix(_counts(3, 60, 14, 3.0, 0.6).astype(float))
    calls = []
    real = RT.rest_top
    monkeypatch.setattr(RT, "rest_top", lambda M, products=None: calls.append(M.shape[0]) or real(M, products))
    T = np.arange(4, 14)
    cov = as_sparse_cov(X)
    monkeypatch.setattr(RT, "_PARTIAL_MIN_N", T.size)
    assert not RT.partial_rest(cov, T)  # (A not formed: the operator's own route)
    cov.dense()
    spec = _rest_spectrum(cov, T)
    assert calls == [T.size]
    w, tol, _ = real(cov.submatrix(T), RT.rest_products(cov, T))  # (the guesses through X_T, as handed)
    assert B.cheap_bounds_at(spec, 3)["lambda1"] == float(w[0]) + tol
    monkeypatch.setattr(RT, "_PARTIAL_MIN_N", T.size + 1)
    _rest_spectrum(cov, T)
    assert calls == [T.size]
    from nspca_core.operators.cov import Cov
    monkeypatch.setattr(RT, "_PARTIAL_MIN_N", 1)
    assert not RT.partial_rest(Cov(None, cov.dense()), T)


def test_none_where_a_proof_fails(monkeypatch):
    """A guess the factorization refutes twice (the bottom eigenpair, residual ~0, taken for the top): None,
    LAPACK's route then; the true top pair proves lambda_max."""
    M = as_sparse_cov(sp.csr_matrix(_counts(5, 40, 12, 3.0, 0.6).astype(float))).dense()
    w, U = np.linalg.eigh(M)
    assert w[0] < 0.5 * w[-1]
    monkeypatch.setattr(RT, "_guesses", lambda M, products=None: (np.array([w[0] + 1e-9, w[0]]), U[:, :2]))
    assert RT.rest_top(M) is None
    monkeypatch.setattr(RT, "_guesses", lambda M, products=None: (w[::-1][:2], U[:, ::-1][:, :2]))
    out = RT.rest_top(M)
    assert out is not None and w[-1] <= out[0][0] + out[1] <= w[-1] * (1 + 1e-8)


@st.composite
def wider_corpora(draw):
    """Corpora with 8..12 words: ARPACK's route in _guesses (dense eigh below 8 rows)."""
    m = draw(st.integers(6, 30))
    n = draw(st.integers(8, 12))
    D = _counts(draw(st.integers(0, 2**31 - 1)), m, n, draw(st.floats(0.3, 12.0)), draw(st.floats(0.2, 1.0)))
    D[:, draw(st.integers(0, n - 1))] *= draw(st.sampled_from([1, 40]))
    return D


@settings(max_examples=25, deadline=None)
@given(D=wider_corpora(), center=st.booleans(), cut=st.integers(0, 3))
def test_guesses_through_the_data_hold_against_brute_force(D, center, cut):
    """ARPACK's guesses through X_T (:func:`.rest_top.rest_products`, corpus18): the products are A_TT's (to
    rounding), and the bounds proved from those guesses hold as the formed M's guesses' do: ``w[0] + tol`` at least
    lambda_max of M and of the exact covariance, ``w[1] + tol`` at least lambda_max(M - v v^T), paper(d=1) at least
    the brute-force optimum at every k."""
    n = D.shape[1]
    cov = as_sparse_cov(sp.csr_matrix(D.astype(float)), center)
    cov.dense()
    T = np.arange(cut, n)
    M = cov.submatrix(T)
    prod = RT.rest_products(cov, T)
    V = np.random.default_rng(n).standard_normal((T.size, 3))
    scale = float(np.abs(M).max()) * np.abs(V).sum(axis=0).max() + 1e-300
    assert np.abs(prod(V) - M @ V).max() <= 1e-12 * scale
    out = RT.rest_top(M, prod)
    if out is None:
        return
    w, tol, v = out
    slack = 4 * T.size * np.finfo(float).eps * max(float(np.linalg.norm(M)), 1e-300)
    E = exact_cov(D, center)[np.ix_(T, T)]
    assert w[0] + tol >= float(np.linalg.eigvalsh(M)[-1]) - slack
    assert w[0] + tol >= float(np.linalg.eigvalsh(E)[-1]) - slack
    assert w[1] + tol >= float(np.linalg.eigvalsh(M - np.outer(v, v))[-1]) - slack
    for k in (1, 2, 3, T.size):
        opt, _ = brute_opt(E, k)
        assert _opt1(v, k) + w[1] + 2 * tol >= opt * (1 - 1e-12) - 1e-300


def test_guesses_take_the_data_products_exactly_where_handed(monkeypatch):
    """_rest_spectrum hands rest_top the products through X_T exactly where it takes rest_top (sparse data, A held,
    T from _PARTIAL_MIN_N features); _guesses uses them (counted) only where handed, from 8 rows."""
    X = sp.csr_matrix(_counts(7, 60, 16, 3.0, 0.6).astype(float))
    cov = as_sparse_cov(X)
    cov.dense()
    T = np.arange(3, 16)
    handed = []
    real = RT.rest_top
    monkeypatch.setattr(RT, "rest_top", lambda M, products=None: handed.append(products) or real(M, products))
    monkeypatch.setattr(RT, "_PARTIAL_MIN_N", T.size)
    _rest_spectrum(cov, T)
    assert len(handed) == 1 and callable(handed[0])
    monkeypatch.setattr(RT, "_PARTIAL_MIN_N", T.size + 1)
    _rest_spectrum(cov, T)
    assert len(handed) == 1
    count = []
    prod = RT.rest_products(cov, T)

    def counted(V):
        count.append(1)
        return prod(V)

    M = cov.submatrix(T)
    RT._guesses(M, counted)
    assert count
    count.clear()
    RT._guesses(M)
    RT._guesses(M[:7, :7], counted)  # (below 8 rows: dense eigh)
    assert not count
    assert RT.rest_products(type("Dense", (), {"X_sparse": None})(), T) is None


@settings(max_examples=120, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 24), scale=st.sampled_from([1e-8, 1.0, 1e8]),
       psd=st.booleans(), near=st.floats(0.0, 1.0), over=st.sampled_from([0.0, 1e-9, 1e-3, 0.5]))
def test_top_by_deflation_holds_against_eigvalsh(seed, n, scale, psd, near, over):
    """The bound on lambda_max(M) from any v and any s >= lambda_max(M - v v^T) (corpus18, _top_by_deflation): at
    least eigvalsh's lambda_max (its own rounding allowed) for v anywhere between M's top eigenvector (``near`` 0) and
    a random direction, s at or above its floor, symmetric M psd or not, at three scales."""
    rng = np.random.default_rng(seed)
    Y = rng.standard_normal((n + 2, n))
    M = Y.T @ Y if psd else (Y[:n] + Y[:n].T)
    M = np.triu(M) + np.triu(M, 1).T
    M *= scale
    w, U = np.linalg.eigh(M)
    d = U[:, -1] + near * rng.standard_normal(n)
    if not np.linalg.norm(d) > 0:
        return
    v = d / np.linalg.norm(d) * np.sqrt(abs(w[-1]) * (1.0 + near))
    fro = float(np.linalg.norm(M))
    eps = np.finfo(float).eps
    R = M - np.outer(v, v)
    allow = 8 * (n + 2) * eps * (fro + float(v @ v))
    s = float(np.linalg.eigvalsh(R)[-1]) + allow + over * (abs(w[-1]) + 1e-300)
    got = RT._top_by_deflation(M, v, s, fro)
    assert got >= w[-1] - 4 * n * eps * fro
    assert got <= max(abs(w[-1]), abs(s)) * 10 + 2 * np.linalg.norm(M @ v) / np.linalg.norm(v) + 1e-300  # finite


def test_first_factorization_on_both_sides_of_its_least(monkeypatch):
    """rest_top factors c_1 I - M (a second chol_lmax call) exactly where the deflation's bound is above the least
    value that proof can return (_least); at that value or below, one factorization (R's) only, and w[0] the
    deflation's bound."""
    M = as_sparse_cov(sp.csr_matrix(_counts(11, 80, 30, 3.0, 0.6).astype(float))).dense()
    calls = []
    real = RT.chol_lmax
    monkeypatch.setattr(RT, "chol_lmax", lambda A, c, out=None: calls.append(c) or real(A, c, out))
    out = RT.rest_top(M)
    assert out is not None and len(calls) == 1  # (a gap and a converged guess: the deflation's bound wins)
    theta, U = RT._guesses(M)
    least = RT._least(M, float(theta[0]), U[:, 0], 1e-12 * abs(float(theta[0])))
    assert out[0][0] <= least
    # (_least is the very value the first proof returns where its first factorization completes)
    assert RT._proved(M, float(theta[0]), U[:, 0], 1e-12 * abs(float(theta[0]))) == least
    for value, factored in ((least, 1), (least * (1 + 1e-9), 2), (np.nextafter(least, np.inf), 2)):
        calls.clear()
        monkeypatch.setattr(RT, "_top_by_deflation", lambda *a, value=value: value)
        out = RT.rest_top(M)
        assert len(calls) == factored
        assert out[0][0] <= value and (factored == 2 or out[0][0] == value)
