"""The KKT point's thin bound (dnn_thin.kkt_lmax_thin, issue 39, 25th round): lambda_max(A + N) through the data's
m x n factor and an inertia count on an (m + 2) x (m + 2) matrix, instead of LAPACK's n x n eigenvalue.  The bound
against an exact Rayleigh quotient of the float matrix A + N (a proved floor of its top eigenvalue, in rationals) and
LAPACK's value; the rule that uses it (dual_start._kkt_point with a thin record) counted on both sides."""

from __future__ import annotations

from fractions import Fraction
from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core.certificates import dnn_lmax, dnn_thin as thin, dual_start as D
from nspca_core.certificates.dnn_thin import kkt_lmax_thin


def thin_data(draw, extra: int):
    """``(X, rng)``: m x n data (m = 2..6, n = m + extra..14) at a drawn scale, sometimes centered (rank m - 1),
    sometimes nonnegative (A >= 0), and the generator that made it (the caller draws the rest from it)."""
    m = draw(st.integers(2, 6))
    n = draw(st.integers(m + extra, 14))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    X = rng.standard_normal((m, n)) * draw(st.sampled_from([1e-4, 1.0, 1e4]))
    if draw(st.booleans()):
        X = X - X.mean(axis=0)  # (centered: rank m - 1)
    if draw(st.booleans()):
        X = np.abs(X)  # (A >= 0: N often zero)
    return X, rng


@st.composite
def thin_problems(draw):
    X, rng = thin_data(draw, 3)
    n = X.shape[1]
    x = np.maximum(rng.standard_normal(n), 0.0) * (rng.random(n) < 0.6)
    if not x.any():
        x[0] = 1.0
    return X, x / np.linalg.norm(x)


def exact_floor(A: np.ndarray, N: np.ndarray | None = None) -> Fraction:
    """A proved floor of lambda_max of the exact sum of the float matrices A and N (symmetric; N zero when None):
    the Rayleigh quotient of LAPACK's top eigenvector of fl(A + N), in exact rational arithmetic."""
    N = np.zeros_like(A) if N is None else N
    v = np.linalg.eigh(A + N)[1][:, -1]
    F = [[Fraction(float(a)) + Fraction(float(b)) for a, b in zip(ra, rb)] for ra, rb in zip(A, N)]
    u = [Fraction(float(a)) for a in v]
    num = sum(u[i] * F[i][j] * u[j] for i in range(len(u)) for j in range(len(u)))
    return num / sum(a * a for a in u)


def _parts(X: np.ndarray, x: np.ndarray):
    A = (X.T @ X) / X.shape[0]
    parts: dict = {}
    N = D.kkt_init(A, x, parts)
    return A, N, parts.get("w")


@settings(max_examples=60, deadline=None)
@given(thin_problems())
def test_thin_bound_is_above_the_exact_top_eigenvalue(prob):
    X, x = prob
    A, N, w = _parts(X, x)
    if w is None:  # (x of full support: N = 0, the KKT point needs no bound here)
        return
    M = A + N
    bound = kkt_lmax_thin(X, X.shape[0], x, w)
    assert bound is not None
    assert Fraction(bound) >= exact_floor(A, N)
    top = float(np.linalg.eigvalsh(M)[-1])
    assert bound <= top + 1e-6 * abs(top) + 1e-300  # (tight: within 1e-6 of LAPACK's)


def test_inertia_test_holds_above_the_top_eigenvalue_only():
    # the test itself on both sides of lambda_max (G + N): below it T has two negative eigenvalues, above it one
    rng = np.random.default_rng(11)
    X = rng.standard_normal((4, 10))
    x = np.zeros(10)
    x[:3] = [0.6, 0.64, 0.48]
    A, N, w = _parts(X, x)
    assert np.any(w > 0)
    B = np.column_stack([X.T, w, x])
    Dinv = np.diag([4.0] * 4 + [0.0, 0.0])
    Dinv[4, 5] = Dinv[5, 4] = 1.0
    top = float(np.linalg.eigvalsh(A + N)[-1])
    for rel, held in [(-1e-9, False), (-1e-12, False), (1e-9, True)]:
        assert bool(thin._inertia_test(B.T @ B, Dinv, top * (1 + rel), 1, 0.0)[0] > 0) is held
    assert thin._inertia_test(B.T @ B, Dinv, top * (1 + 1e-9), 1, 1e3)[0] < 0  # (an allowance it cannot cover)


def test_thin_bound_at_gene_scale_is_tight_and_proved():
    # gene-data magnitudes (variances ~1e9), n = 400 columns, m = 20 samples, a KKT point with N of rank two
    rng = np.random.default_rng(3)
    X = rng.standard_normal((20, 400)) * 3e4
    X -= X.mean(axis=0)
    A = X.T @ X / 20
    x = np.zeros(400)
    top = np.argsort(-np.diag(A))[:40]
    x[top] = np.abs(np.linalg.eigh(A[np.ix_(top, top)])[1][:, -1]) + 1e-3
    x /= np.linalg.norm(x)
    parts: dict = {}
    N = D.kkt_init(A, x, parts)
    assert np.any(parts["w"] > 0)
    bound = kkt_lmax_thin(X, 20, x, parts["w"])
    lapack = float(np.linalg.eigvalsh(A + N)[-1])
    assert lapack <= bound <= lapack * (1 + 1e-8)


def test_thin_bound_declines_what_it_cannot_prove():
    X = np.random.default_rng(0).standard_normal((5, 6))  # (n <= m + 2: no thin factor)
    x = np.full(6, 1 / np.sqrt(6))
    assert kkt_lmax_thin(X, 5, x, np.zeros(6)) is None
    X = np.random.default_rng(0).standard_normal((3, 12))
    x = np.zeros(12)
    x[:4] = 0.5
    w = np.ones(12)  # (w must vanish on x's support)
    assert kkt_lmax_thin(X, 3, x, w) is None


def _kkt_case():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((12, 300)) * 10.0
    X -= X.mean(axis=0)
    A = (X.T @ X) / 12
    x = np.zeros(300)
    x[:30] = np.abs(rng.standard_normal(30))
    return X, A, x / np.linalg.norm(x)


def test_kkt_point_uses_the_thin_bound_instead_of_lapack():
    # counted on both sides: with the thin record (its A this A) LAPACK's eigenvalue is not called, without it once
    X, A, x = _kkt_case()
    calls = []
    real = dnn_lmax.top_eigvalsh_upper

    def counting(M, c):
        calls.append(M.shape[0])
        return real(M, c)
    with mock.patch.object(dnn_lmax, "top_eigvalsh_upper", counting):
        v0, st0, lam0 = D._kkt_point(A, 30, x)
        assert calls == [300]
        v1, st1, lam1 = D._kkt_point(A, 30, x, thin=(A, X, np.arange(300)))
        assert calls == [300]
        D._kkt_point(A, 30, x, thin=(A.copy(), X, np.arange(300)))  # (another A: the record is not read)
        assert calls == [300, 300]
    assert np.array_equal(st0.N, st1.N)
    top = float(np.linalg.eigvalsh(A + st0.N)[-1])
    assert top <= lam1 <= top * (1 + 1e-8) and top <= lam0
    assert v1 >= top  # (mu = 0: the value is lambda_max + 0 k)


def test_a_first_margin_below_the_top_is_never_accepted():
    # the search started below lambda_max (a first margin of -1e-6): the inertia test must refuse it and raise c
    X, A, x = _kkt_case()
    parts: dict = {}
    N = D.kkt_init(A, x, parts)
    with mock.patch.object(thin, "_MARGIN_FIRST", -1e-6):
        bound = kkt_lmax_thin(X, 12, x, parts["w"])
    top = float(np.linalg.eigvalsh(A + N)[-1])
    assert bound is not None and top <= bound <= top * (1 + 1e-5)


def test_kkt_point_with_the_thin_record_makes_no_cholesky_at_a_guess():
    # counted on both sides: the Ritz block U given (as dense_dual gives _kkt_beaten's), with the thin record no
    # Cholesky proof and no LAPACK eigenvalue is made; without it the Cholesky at the guess is
    X, A, x = _kkt_case()
    U = np.column_stack([x, np.random.default_rng(0).standard_normal((300, 3))])
    for _ in range(3):
        U = dnn_lmax._ritz(A + D.kkt_init(A, x), U, 4)[1]
    chol, top = [], []
    real_chol, real_top = dnn_lmax.chol_lmax, dnn_lmax.top_eigvalsh_upper
    with mock.patch.object(dnn_lmax, "chol_lmax", lambda *a: chol.append(1) or real_chol(*a)), \
            mock.patch.object(dnn_lmax, "top_eigvalsh_upper", lambda *a: top.append(1) or real_top(*a)):
        D._kkt_point(A, 30, x, U, 0.5 * float(x @ A @ x), thin=(A, X, np.arange(300)))
        assert chol == [] and top == []
        D._kkt_point(A, 30, x, U, 0.5 * float(x @ A @ x))
        assert len(chol) >= 1
