"""Issue 39, twenty-second round (helper wide30): the cross table's column part merges a block of at least
``cross._STAGE_FROM x jm`` columns in two stages (``cross._col_tops_staged``: its ``_STAGE_COLS x jm`` columns of
largest total first, then the others held to the tops they raised): the same column tops as one merge, so the same
table float for float, which still bounds every block against brute force; staged only from that many columns."""

from __future__ import annotations

from itertools import combinations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nspca_core.certificates import cross
from nspca_core.certificates.cross import _col_tops, _col_tops_staged, cross_table
from nspca_core.operators.cov import Cov

from tests.bruteforce import assert_cross_table_bounds
from tests.core.certificates.test_cross_cut import random_case

SLOW = settings(max_examples=25, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _block(rng, s, c, ties, zeros):
    """A block of squares (``s x c``) with its column maxima and sums, as :func:`cross.cross_table` gives
    them to the column part, and ``block(keep)``: the kept columns' squares, one column per row."""
    P2 = rng.random((s, c)) ** 2 * rng.random(c) * 4
    if ties:
        P2 = np.round(P2 * 3) / 3
    if zeros:
        P2[:, rng.random(c) < 0.3] = 0.0
    return P2, P2.max(axis=0), P2.sum(axis=0), (lambda keep: P2.T[keep])


@settings(max_examples=60, deadline=None)
@given(s=st.integers(1, 14), jm=st.integers(1, 8), c=st.integers(1, 60), im=st.integers(1, 14),
       seed=st.integers(0, 2**31 - 1), ties=st.booleans(), zeros=st.booleans(), prior=st.booleans(),
       stage=st.sampled_from([1.0, 2.0, 3.0]))
def test_the_staged_column_tops_are_one_merges_float_for_float(s, jm, c, im, seed, ties, zeros, prior, stage):
    """Per i the same multiset of jm column sums as one :func:`_col_tops` merge of the whole block (ties, zeros,
    tops from an earlier block or empty ones), hence the same sorted prefix sums, the table's floats."""
    import pytest
    mp = pytest.MonkeyPatch()
    try:
        mp.setattr(cross, "_STAGE_COLS", stage)
        rng = np.random.default_rng(seed)
        im = min(im, s)
        cols = np.zeros((im, jm))
        if prior:  # (an earlier block's tops: its jm largest i-sums per i)
            P0, mx0, tot0, blk0 = _block(rng, s, max(jm, 3), ties, zeros)
            cols = _col_tops(cols, mx0, tot0, blk0, s, im, jm)
        P2, mx, tot, blk = _block(rng, s, c, ties, zeros)
        want = _col_tops(cols.copy(), mx, tot, blk, s, im, jm)
        got = _col_tops_staged(cols.copy(), mx, tot, blk, s, im, jm)
        assert np.array_equal(np.sort(got, axis=1), np.sort(want, axis=1))
        # and per i the largest of them is the brute force's largest i-sum over the columns seen
        isum = np.cumsum(-np.sort(-P2, axis=0), axis=0)[:im]  # im x c: per column, the sum of its i largest
        assert np.allclose(got.max(axis=1), np.maximum(isum.max(axis=1), cols.max(axis=1)), rtol=1e-12, atol=0)
    finally:
        mp.undo()


@SLOW
@given(s=st.integers(2, 6), t=st.integers(4, 14), m=st.integers(3, 8), seed=st.integers(0, 2**31 - 1),
       part=st.sampled_from(["both", "cols"]), through_X=st.booleans(), block=st.sampled_from([2, 5, 2048]),
       k=st.integers(1, 4))
def test_the_table_with_staged_columns_is_the_former_and_bounds_brute_force(monkeypatch, s, t, m, seed, part,
                                                                            through_X, block, k):
    """In blocks of 2, 5 or all columns, held as A or through X, the table with the staged merge is the one
    without it (``_STAGE_COLS = 0``: one merge a block), float for float, and every ``C[i, j]`` is at least
    ``||(A_IJ)_+||_2`` over the supports, enumerated."""
    cov, A, S, T = random_case(m, s, t, seed, through_X)
    monkeypatch.setattr(cross, "_BLOCK", block)
    monkeypatch.setattr(cross, "_FIRST", 1)
    monkeypatch.setattr(cross, "_STAGE_FROM", 1)  # (staged wherever two parts can be made)
    C = cross_table(cov, S, T, k, k, part=part)
    with monkeypatch.context() as mp:
        mp.setattr(cross, "_STAGE_COLS", 0.0)
        former = cross_table(cov, S, T, k, k, part=part)
    assert np.array_equal(C, former)
    if part == "both":
        C = cross_table(cov, S, T, s + 1, t + 1, part=part)
        assert_cross_table_bounds(C, A, S, T)


def _count_merges(monkeypatch):
    calls = []
    orig = cross._col_tops

    def counted(cols, mx, *a):
        calls.append(mx.size)
        return orig(cols, mx, *a)

    monkeypatch.setattr(cross, "_col_tops", counted)
    return calls


def test_staged_from_stage_from_times_jm_columns_on(monkeypatch):
    """Counting, both sides of the threshold: a block of ``_STAGE_FROM jm - 1`` columns is merged once, one of
    ``_STAGE_FROM jm`` in two parts (``_STAGE_COLS jm`` columns of largest total first), the same tops either way."""
    rng = np.random.default_rng(3)
    s, im, jm = 9, 4, 3
    f = int(cross._STAGE_COLS * jm)
    for c, parts in ((cross._STAGE_FROM * jm - 1, [cross._STAGE_FROM * jm - 1]),
                     (cross._STAGE_FROM * jm, [f, cross._STAGE_FROM * jm - f])):
        P2, mx, tot, blk = _block(rng, s, c, False, False)
        calls = _count_merges(monkeypatch)
        got = _col_tops_staged(np.zeros((im, jm)), mx, tot, blk, s, im, jm)
        monkeypatch.undo()
        assert calls == parts
        want = _col_tops(np.zeros((im, jm)), mx, tot, blk, s, im, jm)
        assert np.array_equal(np.sort(got, axis=1), np.sort(want, axis=1))


def test_the_first_part_is_the_columns_of_largest_total(monkeypatch):
    """The first stage reads the ``_STAGE_COLS jm`` columns of largest total (the ones that raise the tops)."""
    rng = np.random.default_rng(5)
    s, im, jm, c = 7, 3, 2, 20
    P2, mx, tot, blk = _block(rng, s, c, False, False)
    seen = []
    orig = cross._col_tops

    def spy(cols, mx_, tot_, *a):
        seen.append(np.sort(tot_))
        return orig(cols, mx_, tot_, *a)

    monkeypatch.setattr(cross, "_col_tops", spy)
    _col_tops_staged(np.zeros((im, jm)), mx, tot, blk, s, im, jm)
    f = int(cross._STAGE_COLS * jm)
    assert np.array_equal(seen[0], np.sort(tot)[-f:])


@settings(max_examples=60, deadline=None)
@given(s=st.integers(1, 3), dup=st.integers(2, 4), other=st.integers(0, 3), m=st.integers(3, 7),
       seed=st.integers(0, 2**31 - 1), through_X=st.booleans(), jm=st.integers(1, 3))
def test_tied_columns_at_theta_stay_in_the_column_part(s, dup, other, m, seed, through_X, jm):
    """Duplicate columns of T (a gene measured twice) whose squares over S tie: the column part keeps those at
    theta (the former ``tot > theta`` dropped every one of them where they had one nonzero square each, and the
    table fell below the brute force's ``||(A_IJ)_+||_2``: with one row in S and two copies, C[1, 1] was 0)."""
    rng = np.random.default_rng(seed)
    XS = rng.standard_normal((m, s))
    b = XS[:, :1] + 0.5 * rng.standard_normal((m, 1))
    X = np.hstack([XS, np.repeat(b, dup, axis=1), rng.standard_normal((m, other)) * 0.1])
    X -= X.mean(axis=0)
    A = X.T @ X / m
    S, T = np.arange(s), np.arange(s, X.shape[1])
    cov = Cov(X, None) if through_X else Cov(None, A)
    P = np.maximum(A[np.ix_(S, T)], 0.0)
    jm = min(jm, T.size)
    for part in ("cols", "both"):
        C = cross_table(cov, S, T, s, jm, part=part)
        for i in range(1, s + 1):
            for j in range(1, jm + 1):
                best = max(np.linalg.norm(P[np.ix_(I, J)], 2)
                           for I in combinations(range(s), i) for J in combinations(range(T.size), j))
                assert C[i, j] >= best * (1 - 1e-12), (part, i, j, C[i, j], best)


def test_the_one_row_duplicate_case_is_no_longer_zero():
    """The case found: S one feature, T two copies of a column covariant with it; C[1, 1] is their covariance."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal(6)
    b = a + 0.5 * rng.standard_normal(6)
    X = np.column_stack([a, b, b])
    X -= X.mean(axis=0)
    A = X.T @ X / 6
    for cov in (Cov(None, A), Cov(X, None)):
        C = cross_table(cov, np.array([0]), np.array([1, 2]), 1, 1)
        assert C[1, 1] >= A[0, 1] > 0


@settings(max_examples=80, deadline=None)
@given(s=st.integers(1, 30), jm=st.integers(1, 12), im=st.integers(1, 30), seed=st.integers(0, 2**31 - 1),
       ties=st.booleans(), zeros=st.booleans())
def test_the_row_sums_are_the_former_sorts_float_for_float(s, jm, im, seed, ties, zeros):
    """:func:`cross._row_sums` (the row part's final sums: a partition of R's transpose) is the former
    ``cumsum(-sort(-R, axis=0), axis=0)[:im]`` of ``R = cumsum(-sort(-rows, axis=1), axis=1)``, bit for bit
    (ties, zeros, im up to s)."""
    rng = np.random.default_rng(seed)
    rows = (rng.random((s, jm)) * rng.random(s)[:, None] * 5) ** 2
    if ties:
        rows = np.round(rows * 2) / 2
    if zeros:
        rows[rng.random((s, jm)) < 0.3] = 0.0
    im = min(im, s)
    R = np.cumsum(-np.sort(-rows, axis=1), axis=1)
    former = np.cumsum(-np.sort(-R, axis=0), axis=0)[:im]
    got = cross._row_sums(rows.copy(), im)
    assert got.shape == former.shape and np.array_equal(got, former)
    assert np.array_equal(np.signbit(got), np.signbit(former))
