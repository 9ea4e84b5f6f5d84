"""lambda_1's proof through a thin split's X_S (dnn_thin.chol_slack_thin, issue 39, 25th round): lambda1_only's
Cholesky slack at its guess, the same float, proved by LAPACK's top eigenvalue of the m x m Gram instead of an n x n
factorization.  The bound against an exact Rayleigh quotient of the float matrix A (a proved floor of its top
eigenvalue, in rationals) on both sides of lambda_1; the slack against chol_lmax's float; the rule that uses it
(lambda1_only's ``thin``, _certify_dense's ``seen["gram"]``) counted on both sides."""

from __future__ import annotations

from fractions import Fraction
from functools import partial
from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core.certificates import cheap, dnn_lmax
from nspca_core.certificates.dnn_thin import chol_slack_thin
from tests.core.certificates.test_dnn_thin import exact_floor, thin_data


@st.composite
def thin_at(draw):
    X, _ = thin_data(draw, 1)
    m = X.shape[0]
    A = (X.T @ X) / m
    lam = float(np.linalg.eigvalsh(A)[-1])
    rel = draw(st.sampled_from([-1e-3, -1e-9, -1e-13, -1e-15, 0.0, 1e-15, 1e-13, 1e-11, 1e-9, 1e-3]))
    return X, A, lam * (1.0 + rel)


@settings(max_examples=120, deadline=None)
@given(thin_at())
def test_thin_slack_proves_c_and_is_chol_lmax_float(prob):
    X, A, c = prob
    slack = chol_slack_thin(A, X, X.shape[0], c)
    if slack is None:
        return
    assert exact_floor(A) <= Fraction(c)  # (the proof's claim: lambda_max(A) <= c, not only c + slack)
    ref = dnn_lmax.chol_lmax(A.copy(), c)
    assert ref is not None and slack == ref  # (the same float: lambda1_only's value does not move)


def test_thin_slack_on_both_sides_of_lambda1():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((8, 300))
    X -= X.mean(axis=0)
    A = (X.T @ X) / 8
    lam = float(np.linalg.eigvalsh(A)[-1])
    assert chol_slack_thin(A, X, 8, lam * (1 + 1e-9)) == dnn_lmax.chol_lmax(A.copy(), lam * (1 + 1e-9))
    assert chol_slack_thin(A, X, 8, lam * (1 - 1e-12)) is None
    for rel in (1e-15, 1e-13, 4e-13):  # (inside the allowances, 6e-13..1e-12 of lambda_1 here: nothing proved)
        assert chol_slack_thin(A, X, 8, lam * (1 + rel)) is None
    assert chol_slack_thin(A, X[:, :299], 8, lam * 2) is None  # (not A's factor shape)


def _lambda1(A, X, thin: bool):
    calls = []
    real = dnn_lmax.chol_lmax

    def counted(*a, **kw):
        calls.append(1)
        return real(*a, **kw)

    with mock.patch.object(cheap, "chol_lmax", counted):
        spec = cheap.lambda1_only(A, 200, lower=None,
                                  thin=partial(chol_slack_thin, A, X, X.shape[0]) if thin else None)
    return spec, len(calls)


def test_lambda1_only_thin_counted_same_float():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((12, 400))
    X -= X.mean(axis=0)
    A = (X.T @ X) / 12
    base, n0 = _lambda1(A, X, False)
    spec, n1 = _lambda1(A, X, True)
    assert base is not None and spec is not None and n0 == 1
    assert float(spec.w[0]) == float(base.w[0]) and spec.tol == base.tol  # (bit for bit)
    assert n1 == 0  # (the guess's margin is enough: no n x n factorization)
    # the other side: a thin proof that fails falls back to the factorization (the same float)
    with mock.patch("nspca_core.certificates.dnn_thin.np.linalg.eigvalsh", lambda K: np.full(K.shape[0], np.inf)):
        spec2, n2 = _lambda1(A, X, True)
    assert n2 == 1 and float(spec2.w[0]) == float(base.w[0])


def test_certify_dense_reads_the_split_record_only_for_its_A():
    from nspca_core.certificates import single
    from nspca_core.operators.cov import Cov

    rng = np.random.default_rng(7)
    X = rng.standard_normal((10, 400))
    X -= X.mean(axis=0)
    cov = Cov(X)
    S = np.arange(400)
    A = cov.submatrix(S)
    x = np.zeros(400)
    x[np.argsort(-np.diag(A))[:20]] = 1.0
    x /= np.linalg.norm(x)
    got = []

    def spy(A_, k, **kw):
        got.append(kw.get("thin"))
        return cheap.lambda1_only(A_, k, **kw)

    with mock.patch.object(single, "lambda1_only", spy):
        single._certify_dense(Cov(A=A), 20, x, "auto", None, seen={"gram": (A, X, S)}, need_dual=True)
        single._certify_dense(Cov(A=A), 20, x, "auto", None, seen={"gram": (A.copy(), X, S)}, need_dual=True)
        single._certify_dense(Cov(A=A), 20, x, "auto", None, seen={}, need_dual=True)
    assert len(got) == 3 and got[0] is not None and got[1] is None and got[2] is None
