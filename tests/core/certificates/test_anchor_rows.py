"""AnchorRows' candidate lists (nspca_core.certificates.anchor) against their definition, written out: the kept
columns are the former route's (np.argpartition's first ``width``), held contiguously, and their values are the
entries of ``P = (A)_+`` with a zero diagonal bit for bit (issue 39, the tenth round: the lists are laid out
and gathered differently, the certificate's floats must not move)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core.certificates.anchor import AnchorRows, anchored_rowsum_test


def _matrix(seed, n, ties):
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n, max(n // 2, 1)))
    A = B @ B.T + rng.standard_normal((n, n)) * 0.3
    A = (A + A.T) / 2
    if ties:  # (repeated values and many zeros: the selection's ties)
        A = np.round(A, 0)
    return A


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 60), st.integers(1, 60), st.booleans(),
       st.one_of(st.none(), st.integers(1, 70)))
def test_candidate_lists_are_the_definitions(seed, n, k, ties, width):
    A = _matrix(seed, n, ties)
    k = min(k, n)
    rows = AnchorRows(A, k, width=width)
    P = np.maximum(A, 0.0)
    np.fill_diagonal(P, 0.0)
    L = rows.idx.shape[1]
    assert rows.idx.flags["C_CONTIGUOUS"] and rows.vals.flags["C_CONTIGUOUS"]
    assert rows.vals.shape == rows.idx.shape
    for lrow in range(n):  # written out: each kept value is its entry, bit for bit
        for j in range(L):
            assert rows.vals[lrow, j] == P[lrow, rows.idx[lrow, j]]
    if L < n - 1:
        # the former route's columns, in its order (the row sums' partitions read them in this order)
        assert np.array_equal(rows.idx, np.argpartition(-P, L, axis=1)[:, :L])
        for lrow in range(n):  # the cap bounds every entry not kept, and no kept one is below it
            kept = np.zeros(n, dtype=bool)
            kept[rows.idx[lrow]] = True
            assert len(set(rows.idx[lrow].tolist())) == L
            assert (P[lrow, ~kept] <= rows.cap[lrow]).all()
            assert (rows.vals[lrow] >= rows.cap[lrow]).all()
            assert rows.cap[lrow] in P[lrow, ~kept]


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(3, 40), st.integers(2, 12))
def test_the_test_decides_as_on_the_former_strided_lists(seed, n, k):
    """The row sums read the lists; the same lists held as strided views (the former layout) give the same
    answer and ratios bit for bit."""
    A = _matrix(seed, n, False)
    k = min(k, n)
    rows = AnchorRows(A, k)
    former = AnchorRows(A, k)
    L = rows.idx.shape[1]
    wide_i = np.zeros((n, L + 3), dtype=rows.idx.dtype)
    wide_i[:, :L] = rows.idx
    wide_v = np.zeros((n, L + 3))
    wide_v[:, :L] = rows.vals
    former.idx, former.vals = wide_i[:, :L], wide_v[:, :L]
    tau = float(np.linalg.eigvalsh(A)[-1]) * 0.9
    for t in (tau, tau * 1.2, tau * 2):
        ok1, r1 = anchored_rowsum_test(rows, t)
        ok2, r2 = anchored_rowsum_test(former, t)
        assert ok1 == ok2 and np.array_equal(r1, r2)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(3, 40), st.integers(1, 12), st.booleans())
def test_partition_in_place_keeps_p_and_the_columns_to_the_bit(seed, n, k, zeros):
    """corpus19: -P is partitioned in P's own memory and negated back.  P (kept as ``rows.P``) is the former
    ``np.maximum(A, 0)`` with a zero diagonal to the BIT (signed zeros included: A holding -0.0 and 0.0 entries), and
    the columns are np.argpartition(-P)'s, in its order."""
    A = _matrix(seed, n, True)
    if zeros:
        rng = np.random.default_rng(seed + 1)
        Z = rng.random((n, n)) < 0.3
        A[Z | Z.T] = -0.0
        A[rng.random((n, n)) < 0.1] = 0.0
        A = np.where(A == A.T, A, np.minimum(A, A.T))  # (symmetric values; the zeros' signs may differ)
    k = min(k, n)
    before = A.tobytes()
    rows = AnchorRows(A, k, width=max(1, n // 4))
    P = np.maximum(A, 0.0)
    np.fill_diagonal(P, 0.0)
    assert rows.P.tobytes() == P.tobytes()
    L = rows.idx.shape[1]
    if L < n - 1:
        assert np.array_equal(rows.idx, np.argpartition(-P, L, axis=1)[:, :L])
        assert rows.cap.tobytes() == P[np.arange(n), np.argpartition(-P, L, axis=1)[:, L]].tobytes()
    assert A.tobytes() == before  # (A itself untouched: P is a new array)
