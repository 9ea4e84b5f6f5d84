"""Issue 39, the twenty-second round: :class:`~nspca_core.certificates.anchor.AnchorRows` partitions the rows of
``P = (A)_+`` (zero diagonal) by blocks of :data:`~nspca_core.certificates.anchor._ROWS_BLOCK` rows and makes P
only where it is read.  The candidate lists must be the former ones (the whole array partitioned at once) bit for
bit, across block edges and with ties, and still describe P: every entry not kept is at most the row's cap.  (The
twenty-third round's preselection, :func:`~nspca_core.certificates.anchor_sums.select_block`, is turned off here: the
rows it does not take are the former construction's; its own lists are tested in test_anchor_presel.py.)"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core.certificates import anchor, anchor_sums
from nspca_core.certificates.anchor import AnchorRows


def _former(A: np.ndarray, L: int):
    """The former construction written out: P whole, -P partitioned in one call."""
    n = A.shape[0]
    P = np.maximum(A, 0.0)
    np.fill_diagonal(P, 0.0)
    part = np.argpartition(-P, L, axis=1)
    idx = part[:, :L]
    return P, idx, P[np.arange(n), part[:, L]], np.take_along_axis(P, idx, axis=1)


def _cov(n: int, seed: int, ties: bool) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n // 2 + 3, n)) * rng.uniform(0.2, 3.0, n)
    A = X.T @ X / X.shape[0]
    return np.round(A, 1) if ties else A  # (rounded: equal entries and zeros, the ties a selection may split)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(3, 70), k=st.integers(2, 12), block=st.sampled_from([1, 3, 7, 128]),
       seed=st.integers(0, 2**31 - 1), ties=st.booleans())
def test_blocks_give_the_former_lists_bit_for_bit(n, k, block, seed, ties):
    A = _cov(n, seed, ties)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(anchor, "_ROWS_BLOCK", block)
        mp.setattr(anchor_sums, "_PRESEL_FROM", 10**9)  # (every row partitioned whole)
        rows = AnchorRows(A, k, width=max(k - 1, 1))
    L = rows.idx.shape[1]
    P, idx, cap, vals = _former(A, L) if L < n - 1 else (None, None, None, None)
    if L < n - 1:
        assert np.array_equal(rows.idx, idx) and np.array_equal(rows.cap, cap) and np.array_equal(rows.vals, vals)
        assert rows.idx.flags.c_contiguous
    # P, made at its first read, is (A)_+ with a zero diagonal; no entry left out exceeds the row's cap
    want = np.maximum(A, 0.0)
    np.fill_diagonal(want, 0.0)
    assert np.array_equal(rows.P, want)
    for l in range(n):
        out = np.setdiff1d(np.arange(n), rows.idx[l])
        assert np.all(want[l, out] <= rows.cap[l])
        assert np.array_equal(rows.vals[l], want[l, rows.idx[l]])


def test_P_is_made_only_where_read():
    A = _cov(300, 1, False)
    rows = AnchorRows(A, 5)
    assert "_P" not in rows.__dict__  # the lists made without P
    P = rows.P
    assert rows.P is P  # made once, kept
    assert rows.idx.shape[0] == 300 and 300 > anchor._ROWS_BLOCK  # (several blocks)
