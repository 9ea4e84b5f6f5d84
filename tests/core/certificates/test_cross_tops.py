"""Issue 39, ninth round: the cross table's row part keeps each row's largest squares by cutting a block's
new columns to their own largest first, in place (:func:`nspca_core.certificates.cross._row_tops`), instead
of partitioning the block stacked beside the kept ones; the column part selects in place in its own copies.
The same multiset per row (hence the same table, float for float), and the table still bounds every block
against brute force."""

from __future__ import annotations


import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nspca_core.certificates import cross
from nspca_core.certificates.cross import _row_tops, cross_table
from nspca_core.operators.cov import Cov
from tests.bruteforce import assert_cross_table_bounds


def _former_tops(rows: np.ndarray, new: np.ndarray, jm: int) -> np.ndarray:
    both = np.hstack([rows, new])
    return np.partition(both, both.shape[1] - jm, axis=1)[:, -jm:]


@settings(max_examples=60, deadline=None)
@given(s=st.integers(1, 12), jm=st.integers(1, 9), c=st.integers(1, 30), seed=st.integers(0, 2**31 - 1),
       fresh=st.booleans(), ties=st.booleans())
def test_row_tops_keep_the_former_multisets(s, jm, c, seed, fresh, ties):
    """Per row the same multiset of ``jm`` values as the former ``np.partition(np.hstack(...))``, with
    zeros and ties among the squares, from kept rows of zeros (``fresh``) or of earlier squares."""
    rng = np.random.default_rng(seed)
    new = rng.random((s, c)) ** 2
    if ties:  # (equal squares and zeros: the cases where which entry is kept could differ)
        new = np.round(new * 3) / 3
    rows = np.zeros((s, jm)) if fresh else np.round(rng.random((s, jm)) ** 2 * (3 if ties else 1e6)) / 3
    want = np.sort(_former_tops(rows, new.copy(), jm), axis=1)
    got = np.sort(_row_tops(rows, new.copy(), jm, fresh), axis=1)
    assert got.shape == want.shape and np.array_equal(got, want)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(s=st.integers(2, 5), t=st.integers(3, 12), m=st.integers(3, 8), seed=st.integers(0, 2**31 - 1),
       block=st.sampled_from([1, 2, 3, 5]), part=st.sampled_from(["both", "rows", "cols"]))
def test_parts_over_many_blocks_are_the_one_block_table_and_bound_brute_force(monkeypatch, s, t, m, seed,
                                                                              block, part):
    """Blocks of 1..5 columns of T (new columns cut to their largest before the merge at every block; the column
    part's selections in place in the block's own copies) give the table of one block holding all of T
    (float64 products held as A: the same squares in any blocking), and every ``C[i, j]`` is at least
    ``||(A_IJ)_+||_2`` over the supports, enumerated."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, s + t)) * rng.random(s + t) * 3
    A = X.T @ X / m
    S, T = np.arange(s), np.arange(s, s + t)
    cov = Cov(None, A)
    whole = cross_table(cov, S, T, s, t, part=part)
    monkeypatch.setattr(cross, "_BLOCK", block)
    C = cross_table(cov, S, T, s, t, part=part)
    assert np.array_equal(C, whole)
    assert_cross_table_bounds(C, A, S, T)


@settings(max_examples=80, deadline=None)
@given(s=st.integers(1, 12), jm=st.integers(1, 12), wide=st.integers(4, 30), seed=st.integers(0, 2**31 - 1),
       zeros=st.sampled_from([0.0, 0.4, 0.9, 1.0]), ties=st.booleans())
def test_first_block_sampled_keeps_each_rows_largest(s, jm, wide, seed, zeros, ties):
    """Issue 39, twenty-fifth round: the first block's rows (fresh, at least ``_SAMPLED_FROM`` x jm columns) through a
    sampled threshold (:func:`nspca_core.certificates.cross._largest_sampled`): per row the same multiset as the whole
    row's partition, with zeros (clipped entries: a threshold of 0, rows partitioned whole), ties at the threshold,
    rows with too few survivors, and rows of one repeated value."""
    rng = np.random.default_rng(seed)
    c = max(wide, cross._SAMPLED_FROM) * jm
    new = rng.random((s, c)) ** 2
    if ties:
        new = np.round(new * 4) / 4
    new[rng.random((s, c)) < zeros] = 0.0
    new[0] = new[0, 0]  # (a row of one value: every entry a tie)
    want = np.sort(np.partition(new.copy(), c - jm, axis=1)[:, c - jm:], axis=1)
    got = np.sort(cross._largest_sampled(new.copy(), jm), axis=1)
    assert got.shape == want.shape and np.array_equal(got, want)
    assert np.array_equal(np.sort(_row_tops(np.zeros((s, jm)), new.copy(), jm, True), axis=1), want)


def test_first_block_sampled_only_from_its_width(monkeypatch):
    """The sampled selection runs for a fresh block of at least ``_SAMPLED_FROM`` x jm columns, not below it nor on
    kept rows (their merge as before)."""
    calls = []
    real = cross._largest_sampled
    monkeypatch.setattr(cross, "_largest_sampled", lambda new, jm: calls.append(new.shape) or real(new, jm))
    rng = np.random.default_rng(1)
    jm = 5
    for c, fresh in ((cross._SAMPLED_FROM * jm, True), (cross._SAMPLED_FROM * jm - 1, True),
                     (cross._SAMPLED_FROM * jm, False)):
        _row_tops(np.zeros((3, jm)), rng.random((3, c)), jm, fresh)
    assert calls == [(3, cross._SAMPLED_FROM * jm)]


def test_first_block_sampled_rows_just_short_of_survivors_go_whole():
    """A row with one survivor fewer than jm (its sample's threshold leaves jm - 1 entries at or above it) is
    partitioned whole: its jm largest include an entry below the threshold."""
    jm, c = 20, 80  # (every 8th column sampled: 10 values, the 9th largest the threshold)
    row = np.full(c, 0.5)
    row[::8] = np.arange(1.0, 11.0)  # (threshold 2: 9 sampled survivors)
    row[[1, 2, 3, 4, 5, 9, 10, 11, 12, 13]] = 3.0  # (10 more: 19 survivors)
    row[6] = 1.5  # (the 20th largest, below the threshold)
    new = np.vstack([row, row[::-1]])
    want = np.sort(np.partition(new.copy(), c - jm, axis=1)[:, c - jm:], axis=1)
    assert np.array_equal(np.sort(cross._largest_sampled(new.copy(), jm), axis=1), want)
