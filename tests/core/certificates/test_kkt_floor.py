"""The KKT point's proved floor (dual_start.kkt_floor: lambda_max(A + N) >= u^T A u / u^T u for u >= 0, its
rounding added) and the rule it serves (dual_start._kkt_held_out, issue 39, corpus17): where the caller's anchored
top test held at tau (the anchored bound at most tau) and the floor is above tau, the KKT point cannot bind and
is not estimated (_kkt_beaten) nor evaluated.  The floor against the exact top eigenvalue of A + N and the KKT
point's rigorous value; the rule counted on both sides of the floor."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core.certificates import dual, dual_start as D
from nspca_core.certificates.dual import top_test
from nspca_core.certificates.single import _certify_dense
from nspca_core.operators.cov import Cov


@st.composite
def problems(draw):
    n = draw(st.integers(3, 9))
    m = draw(st.integers(2, 12))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    Y = rng.standard_normal((m, n)) * draw(st.sampled_from([1e-3, 1.0, 1e3]))
    if draw(st.booleans()):
        Y = np.abs(Y)
    A = Y.T @ Y / m
    x = np.maximum(rng.standard_normal(n), 0.0) * (rng.random(n) < 0.7)
    if not x.any():
        x[0] = 1.0
    return A, x / np.linalg.norm(x)


def _exact_rayleigh_top(M: np.ndarray) -> float:
    """lambda_max of the float matrix M (symmetric), LAPACK's, widened by its own backward error."""
    w = np.linalg.eigvalsh(M)
    return float(w[-1]) + 64 * M.shape[0] * np.finfo(float).eps * float(np.abs(M).sum())


def _exact_quotient(u: np.ndarray, Q) -> Fraction:
    """u^T Q u / u^T u in exact rationals (the floats of u and of Q's entries)."""
    U = [Fraction(float(t)) for t in u]
    R = [[Fraction(float(a)) for a in row] for row in Q]
    return sum(U[i] * R[i][j] * U[j] for i in range(len(U)) for j in range(len(U))) / sum(t * t for t in U)


@settings(max_examples=80, deadline=None)
@given(P=problems())
def test_floor_below_the_kkt_points_top_eigenvalue(P):
    """kkt_floor <= lambda_max(A + N) (eigvalsh, widened) and <= the KKT point's rigorous value; also the
    floor's quotient recomputed in exact rationals from the same u is >= the floor."""
    A, x = P
    N = D.kkt_init(A, x)
    f = D.kkt_floor(A, x)
    assert f <= _exact_rayleigh_top(A + N)
    v, _, _ = D._kkt_point(A, 2, x)
    assert f <= v
    u = np.maximum(A @ np.maximum(A @ x, 0.0), 0.0)
    if u.any():
        assert Fraction(f) <= _exact_quotient(u, A)


def _topic(seed: int, m: int = 60, n: int = 12) -> np.ndarray:
    rng = np.random.default_rng(seed)
    Y = rng.poisson(2.0, (m, n)) * (rng.random((m, n)) < 0.5)
    Y = Y - Y.mean(axis=0)
    return Y.T @ Y / m


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_held_out_on_both_sides_of_the_floor(monkeypatch, seed):
    """dense_dual with the caller's record of a held top test at tau: _kkt_beaten not asked (and no KKT point
    evaluated) exactly where kkt_floor > tau -- tau just below the floor: skipped; at the floor: asked; no record, a
    failed test, another k or need_dual: asked."""
    A = _topic(seed)
    n = A.shape[0]
    k = 3
    x = np.zeros(n)
    x[np.argsort(np.diag(A))[-k:]] = 1.0
    x /= np.linalg.norm(x)
    lower = Cov(A=A).quad(x)  # (the certificate's own value of x)
    f = D.kkt_floor(A, x)
    assert f > lower
    asked = []
    real = dual._kkt_beaten
    monkeypatch.setattr(dual, "_kkt_beaten", lambda *a, **kw: asked.append(1) or real(*a, **kw))
    monkeypatch.setattr(D, "_KKT_EST_MIN_N", n)  # (the rule's size threshold, at this n: see the last test)
    monkeypatch.setattr(dual, "_kkt_floored", lambda *a: False)  # (_kkt_beaten's own floor: test_lambda1_late)

    def run(tau_level, held=True, kk=k, need_dual=False):
        monkeypatch.setattr(dual, "_DNN_SKIP_AT", lower / tau_level)
        tau = lower / dual._DNN_SKIP_AT
        cov = Cov(A=A)
        AA = cov.dense()  # (the object dense_dual is given)
        seen = {"top": (AA, (int(kk), float(tau)), None, held, None)}
        asked.clear()
        got = D._kkt_held_out(AA, k, x, tau, seen)
        c, _ = _certify_dense(cov, k, x, "auto", None, seen=seen, need_dual=need_dual)
        return got, len(asked), c, tau

    below = np.nextafter(f, 0.0)
    got, n_asked, c1, tau = run(below)
    assert tau < f and got and n_asked == 0
    for kw in ({"tau_level": f * (1 + 1e-12)}, {"tau_level": below, "held": False}, {"tau_level": below, "kk": k + 1},
               {"tau_level": below, "need_dual": True}):
        got, n_asked, c2, _ = run(**kw)
        assert (not got or kw.get("need_dual")) and n_asked == 1  # (need_dual: the DNN's start, asked all the same)
    assert "dnn" not in c1.bounds  # (no KKT point evaluated where skipped; the record here is made up, so its
    # bound is not compared with brute force: test_sparse_route's light-spectrum test runs the real held test)


def test_held_out_reads_only_a_held_test_on_this_A(monkeypatch):
    A = _topic(4)
    x = np.ones(A.shape[0]) / np.sqrt(A.shape[0])
    monkeypatch.setattr(D, "_KKT_EST_MIN_N", 0)
    rows, ok, r = top_test(A, 3, 1e9, seen := {})
    assert ok and D._kkt_held_out(A, 3, x, 1e9, seen) == (D.kkt_floor(A, x) > 1e9)
    assert not D._kkt_held_out(A.copy(), 3, x, 1e9, seen)  # (another A object)
    assert not D._kkt_held_out(A, 3, x, 1e9, None)


def test_held_out_from_the_estimates_size(monkeypatch):
    """The rule applies from _KKT_EST_MIN_N features (at n: read; at n + 1: not, the point evaluated as before)."""
    A = _topic(5)
    n = A.shape[0]
    x = np.ones(n) / np.sqrt(n)
    tau = 0.5 * D.kkt_floor(A, x)
    seen = {"top": (A, (3, float(tau)), None, True, None)}
    monkeypatch.setattr(D, "_KKT_EST_MIN_N", n)
    assert D._kkt_held_out(A, 3, x, tau, seen)
    monkeypatch.setattr(D, "_KKT_EST_MIN_N", n + 1)
    assert not D._kkt_held_out(A, 3, x, tau, seen)


# corpus19: the power steps through the sparse data's operator (kkt_floor's ``matvec``), the quotient A's


@st.composite
def sparse_problems(draw):
    import scipy.sparse as sp

    m = draw(st.integers(2, 14))
    n = draw(st.integers(2, 9))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    Y = rng.poisson(draw(st.sampled_from([0.5, 2.0, 9.0])), (m, n)) * (rng.random((m, n)) < draw(
        st.sampled_from([0.2, 0.5, 0.9])))
    Y = Y * draw(st.sampled_from([1e-3, 1.0, 1e3]))
    x = np.maximum(rng.standard_normal(n), 0.0) * (rng.random(n) < 0.7)
    if not x.any():
        x[int(rng.integers(n))] = 1.0
    return sp.csr_matrix(Y.astype(np.float64)), x / np.linalg.norm(x)


def _exact_cov(X) -> list:
    """The covariance of the rows of X (their own mean, divided by m) in exact rationals."""
    Y = [[Fraction(float(t)) for t in row] for row in X.toarray()]
    m, n = len(Y), len(Y[0])
    mu = [sum(Y[i][j] for i in range(m)) / m for j in range(n)]
    return [[sum((Y[i][a] - mu[a]) * (Y[i][b] - mu[b]) for i in range(m)) / m for b in range(n)] for a in range(n)]


@settings(max_examples=80, deadline=None)
@given(P=sparse_problems())
def test_floor_through_the_data_below_brute_force(P):
    """kkt_floor with the operator's products (the power steps through X) <= lambda_max(A + N) of the FORMED A
    (eigvalsh widened), <= the KKT point's rigorous value, and <= the exact rational quotient of the same u with A's
    floats; and the quotient with the exact covariance agrees (A is the covariance to rounding)."""
    from nspca_core.operators.covariance import as_cov

    X, x = P
    cov = as_cov(X)
    A = cov.dense()
    f = D.kkt_floor(A, x, cov.matvec)
    assert np.isfinite(f)
    assert f <= _exact_rayleigh_top(A + D.kkt_init(A, x))
    v, _, _ = D._kkt_point(A, 2, x)
    assert f <= v
    u = np.maximum(cov.matvec(np.maximum(cov.matvec(x), 0.0)), 0.0)
    if u.any():
        assert Fraction(f) <= _exact_quotient(u, A)
        U, den = [Fraction(float(t)) for t in u], sum(Fraction(float(t)) ** 2 for t in u)
        E = _exact_cov(X)  # (and against the exact covariance, to A's own rounding)
        exact = sum(U[i] * E[i][j] * U[j] for i in range(len(U)) for j in range(len(U))) / den
        slack = 64 * len(U) * np.finfo(float).eps * float(np.abs(A).max() + 1e-300) * (1 + X.shape[0])
        assert f <= float(exact) + slack
    else:
        assert f == 0.0


@settings(max_examples=40, deadline=None)
@given(P=problems())
def test_floor_without_products_is_the_former_expression(P):
    """No ``matvec`` (the dense route): the same float as the former expression (three products with A, max|A| by
    np.abs) -- dense18's _kkt_floored decides as before."""
    A, x = P
    n = A.shape[0]
    u = np.maximum(A @ np.maximum(A @ x, 0.0), 0.0)
    den = float(u @ u)
    eps = np.finfo(float).eps
    g = (n + 2) * eps / (1 - (n + 2) * eps)
    num = float(u @ (A @ u)) - g * float(np.abs(A).max()) * float(u.sum()) ** 2
    want = 0.0 if not den > 0 else (num / (den * (1 + g)) * (1 - 2 * eps) if num > 0
                                    else num / (den * (1 - g)) * (1 + 2 * eps))
    assert D.kkt_floor(A, x) == want
    assert D.kkt_floor(A, x, A.__matmul__) == want


def test_held_out_takes_the_products_exactly_where_handed_for_this_A(monkeypatch):
    """_kkt_held_out's floor takes seen["products"]'s matvec where it was handed for THIS A object (two calls: the
    power steps), never for another A or without the entry; and the sparse route hands its operator's."""
    import scipy.sparse as sp

    from nspca_core.certificates import sparse_route as SR
    from nspca_core.operators.covariance import as_cov

    rng = np.random.default_rng(7)
    X = sp.csr_matrix((rng.poisson(2.0, (40, 10)) * (rng.random((40, 10)) < 0.5)).astype(float))
    cov = as_cov(X)
    A = cov.dense()
    n = A.shape[0]
    x = np.ones(n) / np.sqrt(n)
    calls = []

    def mv(v):
        calls.append(1)
        return cov.matvec(v)

    monkeypatch.setattr(D, "_KKT_EST_MIN_N", 0)
    tau = 0.5 * D.kkt_floor(A, x)
    top = {"top": (A, (3, float(tau)), None, True, None)}
    assert D._kkt_held_out(A, 3, x, tau, {**top, "products": (A, mv)}) and len(calls) == 2
    calls.clear()
    assert D._kkt_held_out(A, 3, x, tau, {**top, "products": (A.copy(), mv)}) and not calls  # (another A)
    assert D._kkt_held_out(A, 3, x, tau, top) and not calls
    # the sparse route's record (handed on to the dense route's dense_dual): its operator's products, for the A formed
    rec = []

    class _D:
        info: dict = {}

    monkeypatch.setattr(SR, "split_pays", lambda *a: True)
    monkeypatch.setattr(SR, "_LANCZOS_MIN_N", 10**9)
    monkeypatch.setattr(SR.dual, "_forecast_fails", lambda A_, k_, x_, t_, c_, seen: rec.append(seen) or True)
    monkeypatch.setattr(SR, "_stands", lambda d: True)
    monkeypatch.setattr(SR, "top_test_fails", lambda *a: False)  # (the forecast asked: a test proved to fail is not)
    SR.sparse_route(cov, 3, x, "auto", None, lambda *a, **kw: _D())
    assert len(rec) == 1 and rec[0]["products"][0] is cov.dense() and rec[0]["products"][1] == cov.matvec
