"""Issue 39 target 1 (helper mll10): the split bound's screened set S takes its top eigenpairs through X_S's
m x m Gram where X_S is thin (``bounds._ThinSpectral``) instead of LAPACK on the |S| x |S| A_SS.  Each value a
proof rests on is checked against a brute force (eigenvalues of A and of ``A - v_1 v_1^T`` by eigvalsh, the
optimum by enumeration) on tiny inputs at any scale; the route is checked to be taken where it should, and
only there."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from nspca_core import certify
from nspca_core.certificates import _settings, bounds, single
from nspca_core.certificates.bounds import _eig_tol, _Spectral, _ThinSpectral, cheap_bounds

from tests.bruteforce import brute_opt
from tests.core.certificates.test_split_cheaper import _force_split

TINY = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _thin(seed: int, m: int, n: int, e: float, kind: str) -> np.ndarray:
    """m x n data (m < n) at scale 2^e: centered (rank m - 1), with repeated rows (lower rank), with a zero
    column, or with a second block of columns the first's rows and columns reversed (the same Gram up to a
    permutation: near-equal eigenvalues)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n)) * rng.uniform(0.05, 3.0, n)
    if kind == "centered":
        X = X - X.mean(0)
    elif kind == "repeated":
        X[m // 2:] = X[: m - m // 2]
    elif kind == "zero column":
        X[:, n // 2] = 0.0
    elif kind == "permuted copy":
        h = n // 2
        X[:, h: 2 * h] = X[:, :h][::-1][:, ::-1] if m > 1 else X[:, :h]
    return X * 2.0 ** e


def _eigs_above(M: list, v: float) -> int:
    """The number of eigenvalues of the symmetric ``M`` (a list of rows of Fractions) above ``v``, exactly:
    the negative pivots of ``v I - M``'s LDL^T in rational arithmetic (Sylvester's law of inertia); a zero
    pivot (v an eigenvalue of a leading block, measure zero) counts as negative (the count can only rise)."""
    n = len(M)
    B = [[(Fraction(v) if i == j else Fraction(0)) - M[i][j] for j in range(n)] for i in range(n)]
    neg = 0
    for p in range(n):
        d = B[p][p]
        if d <= 0:
            neg += 1
            if d == 0:
                d = Fraction(1, 2**2000)  # (a tiny positive pivot: the rest's inertia as for v slightly lower)
        for i in range(p + 1, n):
            f = B[i][p] / d
            for j in range(p + 1, n):
                B[i][j] -= f * B[p][j]
    return neg


@TINY
@given(st.integers(0, 2**31 - 1), st.integers(2, 5), st.integers(1, 3), st.floats(-30, 30),
       st.sampled_from(["plain", "centered", "repeated", "zero column", "permuted copy"]))
@example(seed=0, m=2, extra=1, e=0.0, kind="permuted copy")
def test_thin_values_bound_the_spectrum_and_the_optimum(seed, m, extra, e, kind):
    """``w[j] + tol`` is at least the (j+1)-th eigenvalue of the float ``A = fl(X^T X) / m`` and of the exact
    ``X^T X / m`` (rational arithmetic: no eigensolver's rounding in the reference), ``lam(1) + tol`` at least
    the top eigenvalue of ``A - v_1 v_1^T`` (what ``paper(d=1)`` adds to OPT_1), and every cheap bound at
    every k at least the brute-force optimum."""
    n = m + extra
    X = _thin(seed, m, n, e, kind)
    A = X.T @ X / m
    spec = _ThinSpectral(A, X, m, 2)
    Xf = [[Fraction(float(v)) for v in row] for row in X]
    exact = [[sum(Xf[a][i] * Xf[a][j] for a in range(m)) / m for j in range(n)] for i in range(n)]
    held = [[Fraction(float(A[i, j])) for j in range(n)] for i in range(n)]
    for j in range(min(3, n)):
        for M in (exact, held):
            assert _eigs_above(M, spec.lam(j)) <= j, (j, spec.lam(j))
    V1 = spec.V(1).ravel()
    R = [[held[i][j] - Fraction(float(V1[i])) * Fraction(float(V1[j])) for j in range(n)] for i in range(n)]
    assert _eigs_above(R, spec.lam(1) + spec.tol) == 0
    ks = np.arange(1, n + 1)
    opts = np.array([brute_opt(A, int(k))[0] for k in ks])
    got = cheap_bounds(spec.spectrum(), ks)
    assert list(got) == ["lambda1", "paper(d=1)", "residual(d=1)"]
    for name, values in got.items():
        assert np.all(values >= opts * (1 - 1e-12)), (name, values, opts)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(3, 8), st.integers(2, 30))
def test_thin_and_lapack_agree(seed, m, extra):
    """The same eigenvalues and top eigenvector as LAPACK's route to rounding; ``bracket`` is LAPACK's lambda_1
    value (its eigenvalue plus :func:`bounds._eig_tol`) to rounding."""
    n = m + extra
    X = _thin(seed, m, n, 0.0, "plain")
    A = X.T @ X / m
    thin, lap = _ThinSpectral(A, X, m, 2), _Spectral(A, 2)
    np.testing.assert_allclose(thin.w[:3], lap.w, rtol=1e-9, atol=1e-12 * lap.w[0])
    assert abs(abs(float(thin.U[:, 0] @ lap.U[:, 0])) - 1.0) < 1e-8
    assert thin.bracket == pytest.approx(lap.w[0] + _eig_tol(A), rel=1e-12)
    assert thin.spectrum().complete and not lap.spectrum().complete


def _spy(monkeypatch):
    """Counts of the S part's spectra by route: ``_ThinSpectral`` built, LAPACK's ``_Spectral`` built."""
    seen = {"thin": 0, "lapack": 0}
    real_thin, real_lap = bounds._ThinSpectral.__init__, bounds._Spectral.__init__

    def thin_init(self, *a, **kw):
        seen["thin"] += 1
        real_thin(self, *a, **kw)

    def lap_init(self, *a, **kw):
        seen["lapack"] += 1
        real_lap(self, *a, **kw)

    monkeypatch.setattr(bounds._ThinSpectral, "__init__", thin_init)
    monkeypatch.setattr(bounds._Spectral, "__init__", lap_init)
    monkeypatch.setattr(single, "lambda1_only", lambda A, k, **kw: None)  # (LAPACK's route otherwise)
    monkeypatch.setattr(single, "light_S", lambda *a, **kw: None)  # (S by _certify_dense: its spectrum)
    monkeypatch.setattr(_settings, "_THIN_S_EFFORTS", ("auto", "fast"))  # (the switch, off by default: _settings)
    return seen


@TINY
@given(st.integers(0, 2**31 - 1), st.integers(3, 5), st.integers(1, 3), st.floats(-20, 20),
       st.sampled_from(["auto", "fast"]))
def test_split_certificate_with_thin_S_is_above_bruteforce(monkeypatch, seed, m, k, e, effort):
    """A split certificate on thin data (m < |S|) whose S part took the Gram's route: its bound and S's bound
    are at least the brute-force optima of A and of A_SS."""
    size = m + 2
    _force_split(monkeypatch, size)
    seen = _spy(monkeypatch)
    X = _thin(seed, m, size + 3, e, "centered")
    A = X.T @ X / m
    c = certify(X, k=k, effort=effort, center=False)
    assert c.kind == "split" and seen["thin"] >= 1
    assert c.upper_bound >= brute_opt(A, k)[0] * (1 - 1e-12)
    S = c.info["S"]
    assert c.info["B_S"] >= brute_opt(A[np.ix_(S, S)], min(k, S.size))[0] * (1 - 1e-12)
    # S's lambda1 bound is the Gram's (w[0] + its tol), not LAPACK's
    lam = _ThinSpectral(A[np.ix_(S, S)], X[:, S], m, 2)
    assert c.info["B_S_bounds"]["lambda1"] == pytest.approx(lam.w[0] + lam.tol, rel=1e-12)


@pytest.mark.parametrize("effort,m,thin", [("auto", 4, True), ("fast", 4, True), ("full", 4, False),
                                           ("auto", 9, False)])
def test_the_route_is_taken_where_X_S_is_thin_in_auto_and_fast_only(monkeypatch, effort, m, thin):
    """Gram's route for "auto" and "fast" where X_S has fewer rows than |S|; LAPACK's for "full", and where
    m >= |S| (the Gram would be the larger matrix)."""
    size = 6
    _force_split(monkeypatch, size)
    monkeypatch.setitem(single._EFFORT["full"], "split_size", size)
    seen = _spy(monkeypatch)
    X = _thin(1, m, 12, 0.0, "centered")
    c = certify(X, k=3, effort=effort, center=False)
    assert "B_S" in c.info
    assert (seen["thin"] > 0) == thin and (seen["lapack"] > 0) != thin


def _eager(spec) -> "bounds.Spectrum":
    """The spectrum with the row sums of ``A - v_1 v_1^T`` formed whole at every k (the former code)."""
    A, n = spec.A, spec.A.shape[0]
    R = A - spec.V(1) @ spec.V(1).T
    slack = 8 * n * bounds._EPS * float(np.abs(A).max())
    return replace(spec.spectrum(rows=False), rowsum=lambda ks: np.array([bounds._rowsum_topk(R, int(k)) for k in ks])
                   + slack)


@TINY
@given(st.integers(0, 2**31 - 1), st.integers(2, 6), st.integers(-4, 40), st.floats(-20, 20), st.data())
def test_lazy_row_sums_give_the_same_floats(seed, m, extra, e, data):
    """``_Spectral.spectrum`` at one k (the row sums of ``A - v_1 v_1^T`` formed only where the rows of largest
    variance do not already reach ``lambda_2``'s bound) gives every cheap bound the float of the eager row sums,
    at every k: both where those rows decide (large k) and where the whole matrix is needed; LAPACK's route
    (any shape) and the Gram's (m < n)."""
    n = max(2, m + extra)
    X = _thin(seed, m, n, e, data.draw(st.sampled_from(["plain", "centered", "repeated"])))
    A = X.T @ X / m
    specs = [_Spectral(A, 2)] + ([_ThinSpectral(A, X, m, 2)] if m < n else [])
    ks = np.arange(1, n + 1)
    for spec in specs:
        lazy, eager = cheap_bounds(spec.spectrum(), ks), cheap_bounds(_eager(spec), ks)
        assert list(lazy) == list(eager)
        for name in lazy:
            np.testing.assert_array_equal(lazy[name], eager[name])


def test_lazy_row_sums_take_both_branches():
    """On one matrix: small k needs the whole matrix's row sums (below lambda_2's bound), large k not."""
    X = _thin(5, 4, 30, 0.0, "centered")
    A = X.T @ X / 4
    for spec in (_Spectral(A, 2), _ThinSpectral(A, X, 4, 2)):
        got = spec.spectrum().rowsum(np.array([1, 30]))
        assert np.isfinite(got[0]) and got[0] < spec.lam(1) and got[1] == np.inf


def test_the_switch_is_off_by_default(monkeypatch):
    """``_settings._THIN_S_EFFORTS`` empty (see there why): LAPACK's route at every effort, as before."""
    assert _settings._THIN_S_EFFORTS == ()
    _force_split(monkeypatch, 6)
    seen = _spy(monkeypatch)
    monkeypatch.setattr(_settings, "_THIN_S_EFFORTS", ())
    certify(_thin(1, 4, 12, 0.0, "centered"), k=3, center=False)
    assert seen["thin"] == 0 and seen["lapack"] > 0
