"""The thin factor without the scaled copy of X (issue 39, target 4, the twelfth round): the same floats as
the route it replaces, written here as it was; and ``flip_signs`` (which that route shares) against a
column-by-column loop."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core._common.scale import normalized
from nspca_core._common.validation import pow2_scale
from nspca_core.lowrank import _top_eigh, flip_signs, lowrank_factor_clean
from nspca_core.operators.covariance import as_cov


def _same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes(order="A") == b.tobytes(order="A")


def _flip_by_loop(U):
    """The sign rule one column at a time: the first entry of largest magnitude (a NaN counts as largest, as
    in numpy's argmax) made nonnegative; a column whose deciding entry is 0 is left as it is."""
    out = np.array(U, dtype=float, copy=True)
    for j in range(out.shape[1]):
        col = out[:, j]
        mags = [abs(v) for v in col]
        i = next((t for t, v in enumerate(mags) if v != v), None)  # (the first NaN)
        if i is None:
            i = max(range(len(mags)), key=lambda t: (mags[t], -t))
        v = col[i]
        out[:, j] = col * (v if v != v else (-1.0 if v < 0 else 1.0))
    return out


def _thin_by_copy(X, d):
    """The thin factor through ``X / s`` (the route before the twelfth round)."""
    n = X.shape[1]
    s = pow2_scale(X)
    Xs = X / s
    m = Xs.shape[0]
    G = (Xs @ Xs.T) / m
    w, P = _top_eigh(G, d + 1)
    w = np.clip(w, 0.0, None)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(w > 0, 1.0 / np.sqrt(w * m), 0.0)
    U = flip_signs(((Xs.T @ P) * scale)[:, :d])
    if U.shape[1] < d:
        U = np.hstack([U, np.zeros((n, d - U.shape[1]))])
    eig = np.zeros(d + 1)
    eig[: w.size] = w[: d + 1]
    V = U * (np.sqrt(eig[:d]) * s)
    return V, eig * s * s


@settings(max_examples=60, deadline=None)
@given(m=st.integers(2, 12), n=st.integers(13, 60), d=st.integers(1, 5), seed=st.integers(0, 10_000),
       e=st.integers(-50, 50), centered=st.booleans())
def test_thin_factor_equals_the_scaled_copy_route(m, n, d, seed, e, centered):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n)) * rng.uniform(0.1, 3.0, n) * 2.0 ** e * rng.uniform(0.5, 1.5)
    if centered:
        X = X - X.mean(axis=0)
    d = min(d, n)
    V, eig = lowrank_factor_clean(X, None, d)
    V0, eig0 = _thin_by_copy(X, d)
    assert _same(V, V0) and _same(eig, eig0)
    # the top handed in (as normalized records it) gives the same floats
    V1, eig1 = lowrank_factor_clean(X, None, d, top=float(np.abs(X).max()))
    assert _same(V1, V0) and _same(eig1, eig0)


@pytest.mark.parametrize("e", [-300, -70, 70, 300])
def test_thin_factor_far_from_one_keeps_the_copy_route(e):
    """Data whose power of two is outside [2^-60, 2^60] (lowrank_factor's own callers: no normalized
    before): the scaled copy, as before, and no overflow or underflow."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((6, 40)) * 2.0 ** e
    V, eig = lowrank_factor_clean(X, None, 3)
    V0, eig0 = _thin_by_copy(X, 3)
    assert _same(V, V0) and _same(eig, eig0)
    assert np.all(np.isfinite(V)) and np.all(eig[:3] > 0)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 12), extra=st.integers(0, 10), d=st.integers(1, 4), seed=st.integers(0, 10_000),
       e=st.integers(-80, 80))
def test_factor_of_tall_data_and_of_a_covariance_as_before(n, extra, d, seed, e):
    """m >= n data and a covariance keep the scaled copy and the n x n eigh (the code moved around them)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n + extra, n)) * 2.0 ** e
    d = min(d, n)
    for data, A in ((X, None), (None, X.T @ X)):
        V, eig = lowrank_factor_clean(data, A, d)
        a = data if data is not None else A
        s = pow2_scale(a)
        if data is not None:
            Xs = data / s
            M, unit = (Xs.T @ Xs) / Xs.shape[0], s
        else:
            M, unit = A / s, np.sqrt(s)
        w, U = _top_eigh(M, d + 1)
        w = np.clip(w, 0.0, None)
        eig0 = np.zeros(d + 1)
        eig0[: w.size] = w[: d + 1]
        V0 = flip_signs(U[:, :d]) * (np.sqrt(eig0[:d]) * unit)
        with np.errstate(over="ignore", under="ignore"):
            eig0 = eig0 * unit * unit
        assert _same(V, V0) and _same(eig, eig0)


@settings(max_examples=200, deadline=None)
@given(rows=st.integers(1, 9), cols=st.integers(1, 4), seed=st.integers(0, 10_000),
       pool=st.sampled_from(["normal", "ties", "zeros", "special"]))
def test_flip_signs_equals_the_abs_argmax_rule(rows, cols, seed, pool):
    rng = np.random.default_rng(seed)
    if pool == "normal":
        U = rng.standard_normal((rows, cols))
    elif pool == "ties":  # equal magnitudes of both signs: the first one decides
        U = rng.choice([-2.0, -1.0, 0.0, 1.0, 2.0], size=(rows, cols))
    elif pool == "zeros":
        U = rng.choice([0.0, -0.0, 1e-310, -1e-310], size=(rows, cols))
    else:
        U = rng.choice([np.inf, -np.inf, np.nan, 1.0, -1.0, 0.0], size=(rows, cols))
    with np.errstate(invalid="ignore"):
        got, want = flip_signs(U), _flip_by_loop(U)
    assert got.shape == want.shape
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got), np.signbit(want))


def test_normalized_records_the_top_of_the_data_it_returns():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((8, 50))
    for scale in (1.0, 2.0 ** 80, 2.0 ** -90):
        C, _ = normalized(as_cov(X * scale))
        assert C._x_top() == float(np.abs(C.X).max())
        V, eig = C.factor(3)
        V0, eig0 = _thin_by_copy(C.X, 3)
        assert _same(V, V0) and _same(eig, eig0)
    C, _ = normalized(as_cov(X))
    C.X = C.X * 3.0  # other data than recorded: the top is not used
    assert C._x_top() is None


@pytest.mark.parametrize("layout", ["F", "strided", "view"])
def test_thin_factor_of_other_layouts_equals_the_scaled_copy_route(layout):
    """Data handed in as a Fortran-ordered array, a strided view or a column slice: the same floats as the
    scaled copy of that array (which keeps its layout where numpy does)."""
    rng = np.random.default_rng(11)
    base = rng.standard_normal((14, 90)) * rng.uniform(0.1, 9.0, 90)
    X = {"F": np.asfortranarray(base), "strided": base[::2], "view": base[:, 5:80]}[layout]
    V, eig = lowrank_factor_clean(X, None, 3)
    V0, eig0 = _thin_by_copy(X, 3)
    assert _same(V, V0) and _same(eig, eig0)
