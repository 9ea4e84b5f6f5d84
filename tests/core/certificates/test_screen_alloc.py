"""Issue 39 (certify alone within 3x the answer, with margin): the DNN's screening start
(``dual._screen_init``) works in one fresh n x n array (its result's memory holds A's off-diagonal part,
then the search's float32 scratch) instead of five: each fresh array cost its page faults (~1,200 of
them, ~3.5 ms at CBCL k = 65).  The start must be the same, float for float, as the former code's
(kept below as the reference), and stay a valid dual point (its bound above brute force)."""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core.certificates.dnn import DnnState, _ritz, dnn_value_lam
from nspca_core.certificates.dual import _SCREEN_R, _SCREEN_STEPS, _screen_init

from tests.bruteforce import brute_opt


def _reference(A: np.ndarray, k: int, lam1: float | None = None):
    """The screening start as written before this change (cca8477..87d44a9), five n x n arrays."""
    n = A.shape[0]
    dg = np.diag(A)
    off = A - np.diag(dg)
    hi = float(off.max()) if n > 1 else 0.0
    if lam1 is None:
        lam1 = float(scipy.linalg.eigh(A, subset_by_index=[n - 1, n - 1], eigvals_only=True)[0]) \
            if n > 1 else float(dg[0])
    if k > 1:
        hi = min(hi, (lam1 - float(dg.max())) / (k - 1))
    if hi <= 0 or n < 3:
        return np.zeros((n, n)), 0.0
    block = [None]
    off32 = off.astype(np.float32) if n > 150 else off
    buf, zero = np.empty_like(off32), np.zeros_like(off32)

    def h(mu):
        M = np.subtract(off32, off32.dtype.type(mu), out=buf)
        np.maximum(M, zero, out=M)
        M[np.diag_indices(n)] = dg - mu
        if n <= 150:
            return float(scipy.linalg.eigh(M, subset_by_index=[n - 1, n - 1], eigvals_only=True,
                                           check_finite=False)[0]) + mu * k
        steps = _SCREEN_STEPS
        if block[0] is None:
            block[0] = np.column_stack([np.ones(n), np.random.default_rng(0).standard_normal((n, _SCREEN_R - 1))])
            steps *= 2
        for _ in range(steps):
            w, block[0] = _ritz(M, block[0], _SCREEN_R)
        return float(w[0]) + mu * k

    grid = np.linspace(0.0, hi, 5)
    vals = [h(m) for m in grid]
    j = int(np.argmin(vals))
    a, b = grid[max(j - 1, 0)], grid[min(j + 1, grid.size - 1)]
    g = (math.sqrt(5) - 1) / 2
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = h(c), h(d)
    for _ in range(4):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = h(c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = h(d)
    cands = [(vals[j], grid[j]), (fc, c), (fd, d)]
    mu = min(cands)[1]
    N = np.maximum(mu - off, 0.0)
    N[np.diag_indices(n)] = 0.0
    return N, mu * n


def _cov(seed: int, n: int, m: int, shift: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n)) + shift * rng.uniform(0.0, 1.0, size=(m, 1))  # shift: a common factor
    return X.T @ X / m


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.one_of(st.integers(1, 40), st.integers(151, 170)),
       kfrac=st.floats(0.0, 1.0), shift=st.floats(0.0, 4.0), give_lam1=st.booleans(),
       order=st.sampled_from("CF"))
def test_screening_start_is_the_former_one_float_for_float(seed, n, kfrac, shift, give_lam1, order):
    """LAPACK's path (n <= 150) and the Ritz path (n > 150), with and without the caller's
    lambda_1, C- or Fortran-ordered A: the same N (bit for bit) and the same nu."""
    A = np.asarray(_cov(seed, n, max(n // 2, 3), shift), order=order)
    k = max(1, min(n, int(round(kfrac * n))))
    lam1 = float(np.linalg.eigvalsh(A)[-1]) if give_lam1 else None
    N0, nu0 = _reference(A, k, lam1)
    st_ = _screen_init(A, k, lam1)
    assert st_.nu == nu0
    assert st_.N.dtype == np.float64 and st_.N.shape == (n, n)
    np.testing.assert_array_equal(st_.N, N0)
    assert np.array_equal(np.signbit(st_.N), np.signbit(N0))  # (zeros of the same sign too)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(3, 9), k=st.integers(1, 9), shift=st.floats(0.0, 4.0))
def test_screening_start_bounds_the_brute_force_optimum(seed, n, k, shift):
    """The start is a dual point (N >= 0, symmetric, zero diagonal): its rigorous value is never
    below the k-sparse nonnegative optimum found by enumeration."""
    k = min(k, n)
    A = _cov(seed, n, n + 2, shift)
    st_ = _screen_init(A, k)
    assert np.all(st_.N >= 0) and np.array_equal(st_.N, st_.N.T) and not np.diag(st_.N).any()
    v, _ = dnn_value_lam(A, k, DnnState(st_.N.copy(), st_.nu))
    assert v >= brute_opt(A, k)[0] * (1 - 1e-12)


def test_screening_start_allocates_one_fresh_n_by_n_array():
    """At n = 200 the start's peak fresh memory is its result plus the float32 copy of A's
    off-diagonal part (~1.5 n^2 doubles); the former code's peak was ~3.5 n^2 (this fails on it)."""
    n = 200
    A = _cov(3, n, 150, 2.0)
    lam1 = float(np.linalg.eigvalsh(A)[-1])
    peaks = []
    for f in (_screen_init, _reference):
        tracemalloc.start()
        f(A, 20, lam1)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert _reference(A, 20, lam1)[1] > 0  # (the search ran: hi > 0)
    assert peaks[0] <= 1.7 * n * n * 8 < peaks[1]
