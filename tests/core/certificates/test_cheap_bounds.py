"""The faster certificate paths keep their proofs: the Cholesky-verified lambda_max, the KKT
probe and the anchored bound tried before the DNN (brute force on small inputs)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core import certify
from nspca_core.certificates.dnn import DnnState, _lmax_state, _ritz, chol_lmax, lmax_upper, ritz_guess

from tests.bruteforce import brute_opt


def _sym(seed: int, n: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n, n))
    return (B + B.T) / 2 * rng.uniform(0.1, 10.0)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 90), off=st.floats(-1e-3, 1e-3))
def test_chol_lmax_never_below_lambda_max(seed, n, off):
    M = _sym(seed, n)
    lam = float(np.linalg.eigvalsh(M)[-1])
    c = lam + off * max(abs(lam), 1.0)
    slack = chol_lmax(M, c)
    if slack is not None:
        assert slack >= 0 and c + slack >= lam
    if off < -1e-9:  # below lambda_max: nothing can be proved
        assert slack is None


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(64, 120), guess_off=st.floats(-0.5, 0.5))
def test_lmax_upper_with_any_guess_is_an_upper_bound(seed, n, guess_off):
    M = _sym(seed, n)
    lam = float(np.linalg.eigvalsh(M)[-1])
    v, tol = lmax_upper(M, 0.0, lam + guess_off * abs(lam))
    assert v >= lam and tol >= 0
    # a wrong (low) guess falls back to LAPACK: tight
    if guess_off < 0:
        assert v == pytest.approx(lam, rel=1e-9)


def test_ritz_guess_state_bound_matches_lapack():
    rng = np.random.default_rng(3)
    n = 150
    Y = rng.standard_normal((40, n))
    A = Y.T @ Y / 40
    N = np.abs(rng.standard_normal((n, n))) * 0.01
    N = (N + N.T) / 2
    np.fill_diagonal(N, 0.0)
    U = np.linalg.qr(rng.standard_normal((n, 10)))[0]
    for _ in range(30):  # a warm subspace, as the optimizer keeps one
        _, U = _ritz(A + N - 0.3, U, 10)
    st_ = DnnState(N, 0.3 * n, U)
    lam_true = float(np.linalg.eigvalsh(A + N - 0.3)[-1])
    g = ritz_guess(A + N - 0.3, U)
    assert g is not None
    val, _ = _lmax_state(A, st_)
    assert val >= lam_true
    assert val <= lam_true * (1 + 1e-3)
    assert _lmax_state(A, st_, fast=False)[0] <= lam_true * (1 + 1e-9)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k", [3, 4, 5])
def test_certify_with_x_anchored_first_is_a_bound(seed, k):
    rng = np.random.default_rng(seed)
    Y = rng.standard_normal((12, 11)) * rng.uniform(0.2, 2.0, 11)
    A = Y.T @ Y / 12 + 0.05 * np.abs(rng.standard_normal((11, 11)))
    A = (A + A.T) / 2
    A += np.eye(11) * max(0.0, -np.linalg.eigvalsh(A)[0])
    opt, xo = brute_opt(A, k)
    x = np.zeros(11)
    x[np.argsort(-np.diag(A))[:k]] = 1.0
    c = certify(cov=A, k=k, x=x)
    assert c.upper_bound >= opt * (1 - 1e-12)
    c2 = certify(cov=A, k=k, x=xo)
    assert c2.upper_bound >= opt * (1 - 1e-12)


def test_coupled_split_bound_and_rest_curve_against_bruteforce(monkeypatch):
    """The sparsity-coupled split bound max_j B_S(k - j) + B_T(j) and every B_T(j) of the
    rest curve are upper bounds (forced split on tiny instances, effort "auto")."""
    from nspca_core.operators.cov import Cov
    from nspca_core.certificates import _settings as S
    from nspca_core.certificates.bounds import _rest_curve

    monkeypatch.setattr(S, "_DENSE_MAX_N", 2)
    monkeypatch.setattr(S, "_LOWRANK_MAX_RANK", 0)
    monkeypatch.setattr(S, "_SPLIT_MIN", 2)
    monkeypatch.setattr(S, "_SPLIT_PER_K", 1)
    monkeypatch.setitem(S._EFFORT["auto"], "split_size", 4)
    rng = np.random.default_rng(11)
    for i in range(40):
        n = int(rng.integers(5, 10))
        m = int(rng.integers(2, n + 2))
        X = rng.standard_normal((m, n)) * rng.random(n) * 3
        if i % 3 == 0:
            X = np.abs(X)
        A = X.T @ X / m
        k = int(rng.integers(1, n + 1))
        opt, xo = brute_opt(A, k)
        x = xo if i % 2 else None
        c = certify(X, k=k, x=x, center=False)
        assert "split" in c.bounds
        assert c.upper_bound >= opt * (1 - 1e-12)
        assert c.info["coupled"] >= opt * (1 - 1e-12)
        T = np.setdiff1d(np.arange(n), c.info["S"])
        curve = _rest_curve(Cov(X, None), T, k)
        for j in range(1, curve.size):
            optT, _ = brute_opt(A[np.ix_(T, T)], j)
            assert curve[j] >= optT * (1 - 1e-12)


def test_large_path_bounds_against_bruteforce(monkeypatch):
    """certify_path on large n (forced on tiny data): shared lower bounds, the capped split and
    the monotone shortcut for large k all stay upper bounds, lower bounds stay feasible values."""
    from nspca_core import certify_path
    from nspca_core.certificates import _settings as S
    from nspca_core.certificates import path

    monkeypatch.setattr(S, "_DENSE_MAX_N", 2)
    monkeypatch.setattr(S, "_LOWRANK_MAX_RANK", 0)
    monkeypatch.setattr(S, "_SPLIT_MIN", 2)
    monkeypatch.setattr(S, "_SPLIT_PER_K", 1)
    monkeypatch.setattr(path, "_PATH_SPLIT_CAP", 2)
    rng = np.random.default_rng(5)
    for i in range(12):
        n = int(rng.integers(6, 10))
        m = int(rng.integers(2, n))
        X = rng.standard_normal((m, n)) * rng.random(n) * 3
        X -= X.mean(axis=0)
        A = X.T @ X / m
        ks = list(range(1, n + 1))
        P = certify_path(X, ks=ks)
        kinds = set()
        for c in P:
            opt, _ = brute_opt(A, c.k)
            assert c.upper_bound >= opt * (1 - 1e-12)
            assert c.lower <= opt * (1 + 1e-9)
            assert np.count_nonzero(c.x) <= c.k
            kinds.add(c.kind)
    assert "monotone" in kinds


@pytest.mark.parametrize("seed", range(4))
def test_branch_bound_with_capped_rows_never_below_opt(seed):
    """anchored_branch_bound keeps max(16 (k-1), 96) candidates per row (padded with the row's
    cap): nothing below OPT is ever proved (n = 100 > 97, so the rows are capped)."""
    from nspca_core.certificates.anchor import anchored_branch_bound

    rng = np.random.default_rng(seed)
    n, k = 100, 2
    Y = np.abs(rng.standard_normal((6, n))) * rng.uniform(0.1, 2.0, n)
    A = Y.T @ Y / 6 - 0.3 * (seed % 2) * np.abs(rng.standard_normal((n, n)))
    A = (A + A.T) / 2
    opt, _ = brute_opt(A, k)
    taus = [opt * (1 - 1e-3), opt * (1 - 1e-9), opt * (1 + 1e-6), opt * 1.01, opt * 1.2]
    tau = anchored_branch_bound(A, k, taus, budget=200)
    assert tau is None or tau >= opt


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(31, 60), st.integers(0, 3), st.booleans())
def test_ritz_step_on_the_low_rank_operator(seed, n, cuts, orthonormal_start):
    """The DNN's block Ritz step (basis [U, the part of M U orthogonal to U]) on
    ``M - L diag(lw) L^T`` applied as an operator: orthonormal vectors, Ritz values inside the
    spectrum of the explicit matrix (Cauchy interlacing), and after a few warm steps the top
    one is lambda_max."""
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n, n))
    M = B + B.T
    L = np.column_stack([np.ones(n), rng.standard_normal((n, cuts))])
    lw = rng.random(cuts + 1)
    full = M - (L * lw) @ L.T
    lam = np.linalg.eigvalsh(full)
    r = 10
    U = rng.standard_normal((n, r))
    if orthonormal_start:
        U = np.linalg.qr(U)[0]
    for _ in range(60):
        w, U = _ritz(M, U, r, L, lw)
        assert np.allclose(U.T @ U, np.eye(r), atol=1e-10)
        assert w[0] <= lam[-1] + 1e-9 * np.abs(lam).max() and w[-1] >= lam[0] - 1e-9 * np.abs(lam).max()
    assert w[0] == pytest.approx(lam[-1], rel=1e-6, abs=1e-9 * np.abs(lam).max())
