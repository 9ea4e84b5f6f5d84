"""The dense factor's eigensolver on a matrix made for it (issue 39, the eleventh round): ``top_eigh_owned``
hands LAPACK ``A / s`` written once in Fortran order, to work on in place.  It must give what the subset
solver gives on ``A / s`` as a caller's array (copied, checked), bit for bit and in memory layout, fall back
to the full solver when the subset solver fails (the overwritten matrix made again), and leave the
factor of non-finite input to the route that raises."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core._common import eig
from nspca_core._common.eig import top_eigh, top_eigh_owned
from nspca_core._common.validation import abs_top, pow2_of, pow2_scale
from nspca_core.lowrank import _top_eigh, flip_signs, lowrank_factor_clean


def _same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes(order="A") == b.tobytes(order="A") \
        and a.flags.f_contiguous == b.flags.f_contiguous and a.flags.c_contiguous == b.flags.c_contiguous


def _matrix(seed, n, exact_sym: bool, scale_exp: int, rank: int | None):
    """A covariance-like matrix: PSD of the given rank (None: full), scaled by 2**scale_exp times a
    non-power of two; not exactly symmetric unless ``exact_sym`` (as X^T X / m can come out)."""
    rng = np.random.default_rng(seed)
    r = n if rank is None else max(1, min(rank, n))
    B = rng.standard_normal((r + 2, n)) if rank is None else rng.standard_normal((r, n))
    A = (B.T @ B) / B.shape[0] * (1.37 * 2.0 ** scale_exp)
    if exact_sym:
        A = (A + A.T) / 2
    else:
        A = A + np.triu(rng.standard_normal((n, n)) * 1e-14 * np.abs(A).max(), 1)
    return A


def _reference_factor(A, d):
    """The factor of a covariance as written before the change: ``A / s``, the subset solver on that
    array, clipped, sign-fixed, scaled back."""
    n = A.shape[0]
    s = pow2_scale(A)
    w, U = _top_eigh(A / s, d + 1)
    w = np.clip(w, 0.0, None)
    U = flip_signs(U[:, :d])
    e = np.zeros(d + 1)
    e[: w.size] = w[: d + 1]
    unit = np.sqrt(s)
    V = U * (np.sqrt(e[:d]) * unit)
    with np.errstate(over="ignore", under="ignore"):
        e = e * unit * unit
    assert V.shape == (n, d)
    return V, e


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 40), exact_sym=st.booleans(),
       scale_exp=st.integers(-60, 60), rank=st.one_of(st.none(), st.integers(1, 5)), data=st.data())
def test_owned_solver_is_the_subset_solver_on_a_callers_array(seed, n, exact_sym, scale_exp, rank, data):
    A = _matrix(seed, n, exact_sym, scale_exp, rank)
    count = data.draw(st.integers(1, n))
    s = pow2_scale(A)
    made = []

    def make():
        made.append(1)
        return np.divide(A, s, out=np.empty(A.shape, order="F"))

    w, U = top_eigh_owned(make, count)
    w0, U0 = top_eigh(A / s, count)
    assert _same(w, w0) and _same(U, U0)
    assert len(made) == 1


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 40), exact_sym=st.booleans(),
       scale_exp=st.integers(-60, 60), rank=st.one_of(st.none(), st.integers(1, 5)), data=st.data())
def test_dense_factor_as_before(seed, n, exact_sym, scale_exp, rank, data):
    """lowrank_factor_clean(None, A, d) equals the factor written out as before, bit for bit and in layout."""
    A = _matrix(seed, n, exact_sym, scale_exp, rank)
    d = data.draw(st.integers(1, n))
    V, e = lowrank_factor_clean(None, A, d)
    V0, e0 = _reference_factor(A, d)
    assert _same(V, V0) and _same(e, e0)


@pytest.mark.parametrize("n,count", [(1, 1), (6, 2), (12, 4), (30, 1)])
def test_owned_solver_falls_back_on_a_matrix_made_again(monkeypatch, n, count):
    """When the subset solver fails, the full solver runs on a newly made matrix (the first one may be
    overwritten) and gives top_eigh's fallback answer."""
    A = _matrix(n, n, True, 0, None)
    real = scipy.linalg.eigh
    wf, Uf = real(A, driver="evd")  # the full solver's answer, top_eigh's fallback
    w0, U0 = wf[n - count:], Uf[:, n - count:]

    def fake(M, *args, **kw):
        if kw.get("subset_by_index") is not None:
            if kw.get("overwrite_a"):
                M[...] = np.nan  # what a solver working in place may leave behind
            raise np.linalg.LinAlgError("Internal Error.")
        return real(M, *args, **kw)

    monkeypatch.setattr(eig.scipy.linalg, "eigh", fake)
    made = []

    def make():
        made.append(1)
        return np.asfortranarray(A.copy())

    w, U = top_eigh_owned(make, count)
    assert len(made) == 2
    w1, U1 = top_eigh(A.copy(), count)  # the caller's-array route, failing the same way
    assert _same(w1, w0) and _same(U1, U0)
    assert _same(w, w0) and _same(U, U0)
    assert np.all(np.isfinite(w)) and np.allclose(np.sort(w), np.linalg.eigvalsh(A)[n - count:])


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_covariance_still_refused(bad):
    A = _matrix(3, 6, True, 0, None)
    A[2, 4] = A[4, 2] = bad
    assert not np.isfinite(abs_top(A)) and pow2_of(abs_top(A)) == 1.0
    with pytest.raises(ValueError):
        lowrank_factor_clean(None, A, 2)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=0, max_size=12))
def test_pow2_scale_is_pow2_of_abs_top(values):
    a = np.array(values, dtype=float)
    top = abs_top(a)
    if a.size and np.isnan(a).any():
        assert np.isnan(top)
    else:
        assert top == (float(np.abs(a).max()) if a.size else 0.0)
    assert pow2_scale(a) == pow2_of(top)
