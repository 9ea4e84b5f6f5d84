"""The top eigenpairs past LAPACK's subset solver (issue 40, item 5)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core._common import eig
from nspca_core._common.eig import top_eigh, top_eigvalsh_upper


def _failing(fail_full: bool):
    """scipy.linalg.eigh that raises LAPACK's 'Internal Error' on a subset (and on the full
    problem too when ``fail_full``)."""
    real = scipy.linalg.eigh

    def fake(M, *args, **kw):
        if kw.get("subset_by_index") is not None or fail_full:
            raise np.linalg.LinAlgError("Internal Error.")
        return real(M, *args, **kw)

    return fake


def _sym(seed, n):
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n, n))
    return (B + B.T) / 2


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 9), data=st.data())
def test_same_as_the_subset_solver_and_its_fallback(seed, n, data):
    count = data.draw(st.integers(1, n))
    M = _sym(seed, n)
    w_ref, U_ref = scipy.linalg.eigh(M, subset_by_index=[n - count, n - 1])
    w, U = top_eigh(M, count)
    assert np.array_equal(w, w_ref) and np.array_equal(U, U_ref)  # unchanged when it works
    exact = np.linalg.eigvalsh(M)[n - count:]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(eig.scipy.linalg, "eigh", _failing(False))
        w2, U2 = top_eigh(M, count)
        w3 = top_eigh(M, count, eigvals_only=True)
    tol = 64 * n * np.finfo(float).eps * max(1.0, np.abs(M).max())
    assert np.allclose(w2, exact, atol=tol) and np.allclose(w3, exact, atol=tol)
    assert np.allclose(M @ U2, U2 * w2, atol=1e3 * tol)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 9), data=st.data())
def test_upper_values_bound_the_top_eigenvalues_even_when_every_solver_fails(seed, n, data):
    count = data.draw(st.integers(1, n))
    M = _sym(seed, n) * data.draw(st.sampled_from([1e-3, 1.0, 1e3]))
    exact = np.sort(np.linalg.eigvalsh(M))[::-1][:count]
    tol = 64 * n * np.finfo(float).eps * max(1e-300, np.abs(M).max())
    assert np.allclose(top_eigvalsh_upper(M, count), exact, atol=tol)  # descending
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(eig.scipy.linalg, "eigh", _failing(True))
        loose = top_eigvalsh_upper(M, count)
    assert loose.shape == (count,) and np.all(loose >= exact)


def test_leading_eigvec_survives_a_failing_subset_solver(monkeypatch):
    """The peers' start (tpower, em) on an equicorrelated covariance, the subset solver failing."""
    from nspca_core._common.points import leading_eigvec
    from nspca_core.operators.covariance import as_cov

    A = np.full((8, 8), 0.3) + 0.7 * np.eye(8)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((5, 12))
    X -= X.mean(axis=0)  # thin data: the m x m Gram side
    monkeypatch.setattr(eig.scipy.linalg, "eigh", _failing(False))
    for cov, M in ((as_cov(cov=A), A), (as_cov(X), X.T @ X / X.shape[0])):
        u = leading_eigvec(cov)
        lam = np.linalg.eigvalsh(M)[-1]
        assert np.isclose(np.linalg.norm(u), 1.0) and np.isclose(u @ M @ u, lam, rtol=1e-12)
