"""SparseCov.dense on canonical CSR data forms X^T X's upper block triangle only, by column chunks, and mirrors it
(issue 39, corpus18: ~25% fewer products on a topic corpus).  The held covariance must be the very floats of the whole
product centered as before (``centered_gram``), and of the expression ``0.5 (A + A^T)`` it replaced; the chunked
route is taken exactly on canonical CSR data with at least two blocks of columns."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nspca_core.operators import sparse as SP
from nspca_core.operators.sparse import as_sparse_cov


def _counts(seed: int, m: int, n: int, dtype) -> sp.csr_matrix:
    rng = np.random.default_rng(seed)
    D = rng.poisson(2.0, (m, n)) * (rng.random((m, n)) < rng.choice([0.05, 0.3, 0.9])) \
        * rng.choice([1.0, 0.37, 13.0, 1e-3], n)
    return sp.csr_matrix(D.astype(dtype))


def _whole(cov) -> np.ndarray:
    """The covariance as dense() formed it before: the whole sparse product, centered_gram."""
    G = cov.X_sparse.T @ cov.X_sparse
    G = G.toarray() if sp.issparse(G) else np.asarray(G)
    return SP.centered_gram(G, cov.m, cov.mean)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**31 - 1), m=st.integers(1, 60), n=st.integers(1, 90), center=st.booleans(),
       dtype=st.sampled_from([np.float64, np.float32]), block=st.sampled_from([1, 3, 7, 128]),
       chunks=st.sampled_from([2, 3, 4, 9]), csc_first=st.booleans())
def test_upper_triangle_is_the_whole_products_floats(monkeypatch, seed, m, n, center, dtype, block, chunks,
                                                     csc_first):
    monkeypatch.setattr(SP, "_GRAM_BLOCK", block)
    monkeypatch.setattr(SP, "_GRAM_CHUNKS", chunks)
    X = _counts(seed, m, n, dtype)
    cov, ref = as_sparse_cov(X, center), as_sparse_cov(X, center)
    if csc_first:
        cov.csc()
    got = cov.dense()
    assert np.array_equal(got, _whole(ref))
    A = (X.T @ X).toarray().astype(np.float64) / ref.m - np.outer(ref.mean, ref.mean)
    assert np.array_equal(got, 0.5 * (A + A.T))  # (the expression centered_gram replaced)
    assert cov._A_rows
    idx = np.sort(np.random.default_rng(seed).permutation(n)[: max(1, n // 2)])
    assert np.array_equal(cov.submatrix(idx), ref.submatrix(idx))  # (the held rows: the product's floats)


@pytest.mark.parametrize("b", [1, 5, 128])
def test_chunk_edges_cover_whole_blocks(b):
    for n in range(1, 4 * b + 3):
        e = SP._chunk_edges(n, b, 4)
        if n <= b:
            assert e is None
            continue
        assert e[0] == 0 and e[-1] == n and all(x < y for x, y in zip(e, e[1:]))
        assert 2 <= len(e) - 1 <= 4 and all(x % b == 0 for x in e[:-1])


def _spied(monkeypatch):
    calls = []
    real = SP._upper_gram

    def spy(Xc, edges, X=None):
        calls.append(list(edges))
        return real(Xc, edges, X)

    monkeypatch.setattr(SP, "_upper_gram", spy)
    return calls


def test_upper_route_on_both_sides_of_its_size(monkeypatch):
    """Exactly from one column past a block: n = _GRAM_BLOCK whole product, n = _GRAM_BLOCK + 1 two chunks."""
    calls = _spied(monkeypatch)
    b = 16
    monkeypatch.setattr(SP, "_GRAM_BLOCK", b)
    for n, taken in ((b, 0), (b + 1, 1)):
        calls.clear()
        cov = as_sparse_cov(_counts(n, 40, n, np.float64))
        assert np.array_equal(cov.dense(), _whole(as_sparse_cov(cov.X_sparse)))
        assert len(calls) == taken
    assert calls[0] == [0, b, b + 1]


def test_upper_route_only_on_canonical_csr(monkeypatch):
    """CSC data and CSR data with unsorted indices or duplicates: the whole product, as before."""
    calls = _spied(monkeypatch)
    monkeypatch.setattr(SP, "_GRAM_BLOCK", 4)
    X = _counts(3, 30, 20, np.float64)
    as_sparse_cov(X).dense()
    assert len(calls) == 1
    calls.clear()
    as_sparse_cov(X.tocsc()).dense()
    U = X.copy()
    U.indices = U.indices.copy()
    for r in range(U.shape[0]):  # (each row's entries reversed: unsorted indices)
        a, z = U.indptr[r], U.indptr[r + 1]
        U.indices[a:z], U.data[a:z] = U.indices[a:z][::-1].copy(), U.data[a:z][::-1].copy()
    U.has_sorted_indices = False
    cov = as_sparse_cov(U)
    if cov.X_sparse.format == "csr" and not cov.X_sparse.has_canonical_format:
        cov.dense()
    assert calls == []


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**31 - 1), m=st.integers(1, 40), n=st.integers(2, 70), block=st.sampled_from([1, 4, 16]),
       empty_rows=st.integers(0, 3), empty_cols=st.booleans())
def test_direct_kernels_and_the_public_product_agree(monkeypatch, seed, m, n, block, empty_rows, empty_cols):
    """float64 data: _upper_gram by scipy's kernels with the dense-block output (corpus18) == by the public product
    (the kernels made unavailable) == the whole product, bit for bit; documents with no words (leading, inside,
    trailing) and chunks with no word at all included."""
    monkeypatch.setattr(SP, "_GRAM_BLOCK", block)
    D = _counts(seed, m, n, np.float64).toarray()
    if empty_cols:
        D[:, : n // 2] = 0.0
    D = np.vstack([np.zeros((empty_rows, n)), D, np.zeros((empty_rows, n))])
    X = sp.csr_matrix(D)
    direct = as_sparse_cov(X).dense()
    assert np.array_equal(direct, _whole(as_sparse_cov(X)))

    def gone(*a):
        raise AttributeError("no such kernel")

    monkeypatch.setattr(SP, "_upper_gram_direct", gone)
    assert np.array_equal(as_sparse_cov(X).dense(), direct)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**31 - 1), m=st.integers(1, 40), n=st.integers(2, 70), block=st.sampled_from([1, 4, 16]),
       out=st.sampled_from([1, 2, 7, 40, 333, 200_000]), empty_rows=st.integers(0, 2))
def test_direct_kernels_by_row_blocks_are_the_whole_products_floats(monkeypatch, seed, m, n, block, out, empty_rows):
    """corpus30: the kernels called on row blocks of at most _GRAM_OUT output entries (at least one row), one buffer
    reused by every call: the whole product's floats, bit for bit, whatever the block."""
    monkeypatch.setattr(SP, "_GRAM_BLOCK", block)
    monkeypatch.setattr(SP, "_GRAM_OUT", out)
    D = _counts(seed, m, n, np.float64).toarray()
    D = np.vstack([np.zeros((empty_rows, n)), D, np.zeros((empty_rows, n))])
    X = sp.csr_matrix(D)
    got = as_sparse_cov(X).dense()
    assert got.tobytes() == _whole(as_sparse_cov(X)).tobytes()


def test_direct_kernel_calls_counted_on_both_sides_of_the_output_size(monkeypatch):
    """corpus30: a chunk of r rows and w = n - lo columns out takes ceil(r / max(1, _GRAM_OUT // w)) kernel calls:
    one where _GRAM_OUT = r w, two where it is one less (and at _GRAM_OUT < w one row a call); every output buffer
    is made once (the same two arrays at every call)."""
    from scipy.sparse import _sparsetools as kern

    calls, bufs = [], set()
    real = kern.csr_matmat

    def spy(n_row, n_col, *a):
        calls.append(n_row)
        bufs.add((id(a[-2]), id(a[-1])))
        return real(n_row, n_col, *a)

    monkeypatch.setattr(kern, "csr_matmat", spy)
    monkeypatch.setattr(SP, "_GRAM_BLOCK", 8)
    n = 16  # (edges 0, 8, 16: chunk rows 8 and 8, widths 16 and 8)
    X = _counts(7, 30, n, np.float64)
    ref = _whole(as_sparse_cov(X))
    for out, want in ((8 * 16, [8, 8]), (8 * 16 - 1, [7, 1, 8]), (15, [1] * 8 + [1] * 8), (8, [1] * 8 + [1] * 8)):
        monkeypatch.setattr(SP, "_GRAM_OUT", out)
        calls.clear()
        bufs.clear()
        assert as_sparse_cov(X).dense().tobytes() == ref.tobytes()
        assert calls == want, (out, calls)
        assert len(bufs) == 1


def test_direct_kernels_taken_exactly_for_float64(monkeypatch):
    calls = []
    real = SP._upper_gram_direct
    monkeypatch.setattr(SP, "_upper_gram_direct", lambda *a: calls.append(1) or real(*a))
    monkeypatch.setattr(SP, "_GRAM_BLOCK", 4)
    for dtype, taken in ((np.float64, 1), (np.float32, 0)):
        calls.clear()
        cov = as_sparse_cov(_counts(5, 30, 20, dtype))
        assert np.array_equal(cov.dense(), _whole(as_sparse_cov(cov.X_sparse)))
        assert len(calls) == taken


class _TakeSpy(np.ndarray):
    """An ndarray counting its take calls (the principal submatrix's two-take route)."""

    takes: list = []

    def take(self, *a, **kw):
        _TakeSpy.takes.append(1)
        return np.ndarray.take(self, *a, **kw)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 40), seed=st.integers(0, 2**31 - 1), share=st.floats(0.0, 1.0), order=st.booleans())
def test_principal_submatrix_is_the_fancy_index_on_both_sides(n, seed, share, order):
    """corpus19: _principal(A, idx) == A[np.ix_(idx, idx)] bit for bit (increasing or shuffled idx, any share of
    the rows); the two takes exactly where idx holds more than half of the rows (counted: n // 2 none, +1 two)."""
    from nspca_core.operators.sparse import _principal

    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n)) * 10.0 ** rng.integers(-8, 8, (n, n))
    A[rng.random((n, n)) < 0.2] = -0.0
    idx = rng.choice(n, int(round(share * n)), replace=False)
    if order:
        idx = np.sort(idx)
    got = _principal(A, idx)
    want = A[np.ix_(idx, idx)]
    assert got.shape == want.shape and got.tobytes() == want.tobytes() and got.flags["C_CONTIGUOUS"]
    for size, takes in ((n // 2, 0), (n // 2 + 1, 2)):
        if size > n:
            continue
        _TakeSpy.takes = []
        J = np.sort(rng.choice(n, size, replace=False))
        out = _principal(A.view(_TakeSpy), J)
        assert len(_TakeSpy.takes) == takes
        assert np.asarray(out).tobytes() == A[np.ix_(J, J)].tobytes()
