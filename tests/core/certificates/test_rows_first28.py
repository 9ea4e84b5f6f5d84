"""Issue 39 (helper wide28): ``screens.own_hopeless`` asks its questions (the cross table's ceiling) first with tables
on T's ``_ROWS_FIRST`` columns of largest variance (``screens._First``): both parts there first where ``lower`` is
below ``_FIRST_PLAIN`` of the plain sums' threshold, and the row part there with the column part on all of T before the
row part on all of T.  Each part there is at most the one on all of T (checked entrywise, and the ceiling with it, on
random thin data), so a True there is the whole table's True; the rules are counted on both sides of their thresholds
and of the margin, and the verdicts are those of the questions asked as before (the rule off) over a sweep of
``lower``."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from _pytest.monkeypatch import MonkeyPatch

from nspca_core.certificates import coupled, screens
from nspca_core.certificates.bounds import _rest_curve, _rest_spectrum
from nspca_core.certificates.cross import cross_table
from nspca_core.certificates.split_point import _lambda_S
from nspca_core.operators.cov import Cov

from tests.core.certificates.test_small_screen import TINY, modules_case


def _split(seed: int, n: int, k: int, s: int):
    """A thin case split into S (the s largest variances and x's support) and T, with what own_hopeless reads."""
    X, A, x = modules_case(seed, n, k, True)
    cov = Cov(X, None)
    mask = np.zeros(n, dtype=bool)
    mask[np.argsort(-np.diag(A), kind="stable")[:s]] = True
    mask[np.flatnonzero(x)] = True
    S, T = np.flatnonzero(mask), np.flatnonzero(~mask)
    kS = min(k, S.size)
    BT = _rest_curve(cov, T, k, spec=_rest_spectrum(cov, T, None, S))
    return cov, A, x, S, T, kS, BT, _lambda_S(cov, S)


@TINY
@given(st.integers(10, 18), st.integers(2, 5), st.integers(3, 6), st.integers(1, 12), st.integers(0, 2**31 - 1))
def test_the_parts_on_the_first_columns_are_at_most_the_whole(n, k, s, t, seed):
    """Each part on T's t columns of largest variance is at most the one on all of T entrywise (the margin
    ``_FIRST_MARGIN`` allows for float32 products rounding apart), and the ceiling with the row part there and the
    column part on T, or both parts there, at most the whole table's: a True with either is a True with the whole
    table."""
    cov, A, x, S, T, kS, BT, lam = _split(seed, n, k, s)
    t = min(t, T.size)
    first = np.sort(T[np.argsort(-cov.diag()[T], kind="stable")[:t]])
    rows = cross_table(cov, S, T, kS, k, lam, part="rows")
    part = cross_table(cov, S, first, kS, k, lam, part="rows")
    cols = cross_table(cov, S, T, kS, k, lam, part="cols")
    cpart = cross_table(cov, S, first, kS, k, lam, part="cols")
    assert part.shape == rows.shape == cpart.shape == cols.shape
    assert np.all(part <= rows * (1 + screens._FIRST_MARGIN) + 1e-300)
    assert np.all(cpart <= cols * (1 + screens._FIRST_MARGIN) + 1e-300)
    AS, xS = A[np.ix_(S, S)], x[S]
    whole = coupled.t_ceiling(AS, xS, BT, k, kS, np.minimum(cols, rows))
    for low_table in (np.minimum(cols, part), np.minimum(cpart, part)):
        low = coupled.t_ceiling(AS, xS, BT, k, kS, low_table)
        assert low <= whole * (1 + screens._FIRST_MARGIN) or not np.isfinite(whole)


def _asked(monkeypatch, case, lower: float, first: int, reach: float = 0.0, plain: float = 0.0):
    """own_hopeless's verdict at ``lower`` with ``_ROWS_FIRST = first`` (``_ROWS_PER_K`` 0), ``_FIRST_PLAIN = plain``
    (0 by default: both parts on the first columns never asked first) and the sizes of T it built tables on."""
    cov, A, x, S, T, kS, BT, lam = case
    monkeypatch.setattr(screens, "_ROWS_FIRST", first)
    monkeypatch.setattr(screens, "_ROWS_PER_K", 0)
    monkeypatch.setattr(screens, "_FIRST_PLAIN", plain)
    monkeypatch.setattr(screens, "_FLOOR_REACH", reach)
    sizes, real = [], screens.cross_table
    monkeypatch.setattr(screens, "cross_table", lambda c, S_, T_, *a, **kw: (sizes.append((len(T_), kw.get("part"))),
                                                                             real(c, S_, T_, *a, **kw))[1])
    covS = Cov(A=cov.submatrix(S))
    verdict = screens.own_hopeless({}, cov, S, T, covS, x[S], int(np.count_nonzero(x)), kS, lower, None, lam)
    return verdict, sizes


def _ceilings(case, first: int):
    cov, A, x, S, T, kS, BT, lam = case
    k = int(np.count_nonzero(x))
    AS, xS = A[np.ix_(S, S)], x[S]
    cols = cross_table(cov, S, T, kS, k, lam, part="cols")
    fT = np.sort(T[np.argsort(-cov.diag()[T], kind="stable")[:first]])
    low = coupled.t_ceiling(AS, xS, BT, k, kS, np.minimum(cols, cross_table(cov, S, fT, kS, k, lam, part="rows")))
    whole = coupled.t_ceiling(AS, xS, BT, k, kS, np.minimum(cols, cross_table(cov, S, T, kS, k, lam, part="rows")))
    return low, whole


def _case_with_a_gap():
    """A case where the first columns' ceiling is clearly below the whole table's (the two sides apart)."""
    for seed in range(40):
        case = _split(seed, 16, 3, 5)
        low, whole = _ceilings(case, 2)
        if np.isfinite(low) and whole > low * (1 + 1e-3):
            return case, low, whole
    raise AssertionError("no case with a gap")  # pragma: no cover


def test_the_first_rows_answer_on_both_sides_of_its_threshold_and_margin():
    """Counting on both sides: ``lower`` below the goal times the first columns' ceiling (by more than the margin)
    -> True with no row part on all of T; within the margin below it, or above it (yet below the whole table's) ->
    the row part on all of T is built and the answer is the whole table's (True); above the whole table's -> False.
    The rule off (``_ROWS_FIRST`` >= |T|): the row part on all of T, as before."""
    case, low, whole = _case_with_a_gap()
    T = case[4]
    goal = screens._COUPLED_AIM - screens._SMALL_SHORT
    for lower, verdict, full_rows in ((goal * low * (1 - 1e-5), True, False),
                                      (goal * low * (1 - 1e-7), True, True),   # (within _FIRST_MARGIN)
                                      (goal * low * (1 + 1e-5), True, True),
                                      (goal * whole * (1 + 1e-5), False, None)):
        with MonkeyPatch.context() as mp:
            got, sizes = _asked(mp, case, lower, 2)
        with MonkeyPatch.context() as mp:
            off, sizes_off = _asked(mp, case, lower, T.size)
        assert got is verdict and off is verdict
        assert (2, "rows") not in sizes_off
        if full_rows is not None:  # (above the whole table's threshold the column part may answer first)
            assert (2, "rows") in sizes and ((T.size, "rows") in sizes) is full_rows
            assert (T.size, "rows") in sizes_off


@TINY
@given(st.integers(0, 2**31 - 1), st.floats(0.97, 1.03), st.integers(1, 6), st.sampled_from([0.0, 0.01, 0.05]))
def test_the_verdicts_are_those_of_the_question_asked_as_before(seed, at, first, reach):
    """Over a sweep of ``lower`` around the whole table's threshold, with and without S's raised floors: the same
    verdict with the rule on (the first ``first`` columns) as with it off (the whole table only)."""
    case = _split(seed, 14, 3, 5)
    _, whole = _ceilings(case, first)
    if not np.isfinite(whole):
        return
    lower = (screens._COUPLED_AIM - screens._SMALL_SHORT) * whole * at
    for plain in (0.0, 2.0):  # (both parts on the first columns first: never, always)
        with MonkeyPatch.context() as mp:
            on, _ = _asked(mp, case, lower, first, reach, plain)
        with MonkeyPatch.context() as mp:
            off, _ = _asked(mp, case, lower, case[4].size, reach, plain)
        assert on is off


@TINY
@given(st.integers(0, 2**31 - 1), st.floats(0.9, 1.1), st.integers(1, 8), st.sampled_from([0.0, 0.5, 1.0]))
def test_a_first_rows_true_is_the_whole_tables_true(seed, at, first, scale):
    """The contract of ``screens._First.hopeless`` for any column part handed in (the real one, or one scaled
    down so that the row part would bind): True only where ``lower`` is below the goal times the ceiling with the
    minimum of that column part and the row part on ALL of T (no raised floors asked); with none handed in (both
    parts on the first columns), only where it is below the whole table's."""
    cov, A, x, S, T, kS, BT, lam = case = _split(seed, 14, 3, 5)
    k = int(np.count_nonzero(x))
    AS, xS = A[np.ix_(S, S)], x[S]
    cols = cross_table(cov, S, T, kS, k, lam, part="cols") * scale
    whole = coupled.t_ceiling(AS, xS, BT, k, kS, np.minimum(cols, cross_table(cov, S, T, kS, k, lam, part="rows")))
    if not np.isfinite(whole):
        return
    goal = screens._COUPLED_AIM - screens._SMALL_SHORT
    lower = goal * whole * at
    real = coupled.t_ceiling(AS, xS, BT, k, kS, np.minimum(cols / scale if scale else cols,
                                                          cross_table(cov, S, T, kS, k, lam, part="rows")))
    with MonkeyPatch.context() as mp:
        mp.setattr(screens, "_ROWS_FIRST", first)
        mp.setattr(screens, "_ROWS_PER_K", 0)
        mp.setattr(screens, "_FLOOR_REACH", 0.0)
        floors = screens._Floors(AS, xS, BT, k, kS)
        asked = screens._First(cov, S, T, k, kS, lam, (AS, xS, BT), lower, goal, floors)
        got = asked.hopeless(cols)
        got_both = asked.hopeless(None) if scale == 1.0 else False
    if got:
        assert lower < goal * whole
    if got_both:
        assert lower < goal * real
    assert case[4].size > first or not (got or got_both)


@TINY
@given(st.integers(0, 2**31 - 1), st.floats(0.95, 1.05), st.integers(1, 6))
def test_a_first_rows_no_leaves_the_floors_as_they_stood(seed, at, first):
    """Where the first columns' question answers no, S's floors are as before it (its raised floors, asked within
    reach, are dropped): the whole table's question is then asked as without the rule."""
    cov, A, x, S, T, kS, BT, lam = _split(seed, 14, 3, 5)
    k = int(np.count_nonzero(x))
    AS, xS = A[np.ix_(S, S)], x[S]
    cols = cross_table(cov, S, T, kS, k, lam, part="cols")
    low, _ = _ceilings((cov, A, x, S, T, kS, BT, lam), first)
    if not np.isfinite(low):
        return
    goal = screens._COUPLED_AIM - screens._SMALL_SHORT
    with MonkeyPatch.context() as mp:
        mp.setattr(screens, "_ROWS_FIRST", first)
        mp.setattr(screens, "_FLOOR_REACH", 0.2)  # (the floors raised wherever the question is near)
        mp.setattr(screens, "_ROWS_PER_K", 0)
        floors = screens._Floors(AS, xS, BT, k, kS)
        before = floors.raised_at.copy()
        asked = screens._First(cov, S, T, k, kS, lam, (AS, xS, BT), goal * low * at, goal, floors)
        for table in (cols, None):
            if not asked.hopeless(table):
                assert np.array_equal(floors.raised_at, before)


def test_both_parts_on_the_first_columns_first_on_both_sides_of_the_plain_share():
    """Counting on both sides of ``lower < _FIRST_PLAIN x goal x plain ceiling``: just below it both parts on the first
    columns are built first (True there: no table on all of T); just above it the column part on all of T comes
    first, as before.  The verdict is the same either way."""
    case, low, whole = _case_with_a_gap()
    cov, A, x, S, T, kS, BT, lam = case
    k = int(np.count_nonzero(x))
    goal = screens._COUPLED_AIM - screens._SMALL_SHORT
    plain = coupled.t_ceiling(A[np.ix_(S, S)], x[S], BT, k, kS, None)
    first = np.sort(T[np.argsort(-cov.diag()[T], kind="stable")[:2]])
    both_low = coupled.t_ceiling(A[np.ix_(S, S)], x[S], BT, k, kS, cross_table(cov, S, first, kS, k, lam))
    lower = goal * min(low, both_low) * (1 - 1e-5)  # (True with the first columns' tables either way)
    share = lower / (goal * plain)
    for eps, first_both in ((1e-6, True), (-1e-6, False)):
        with MonkeyPatch.context() as mp:
            got, sizes = _asked(mp, case, lower, 2, 0.0, share * (1 + eps))
        assert got is True
        assert ((2, "cols") in sizes) is first_both
        assert ((T.size, "cols") in sizes) is not first_both
        assert (T.size, "rows") not in sizes


def test_the_first_columns_are_max_rows_first_and_per_k_times_k():
    """T's first columns: the ``max(_ROWS_FIRST, _ROWS_PER_K k)`` of largest variance (sorted), none where T has no
    more (the rule off); counted on both sides of each term."""
    cov, A, x, S, T, kS, BT, lam = _split(3, 16, 3, 5)
    var = cov.diag()[T]
    for first, per_k, k, size in ((4, 1, 3, 4), (2, 2, 3, 6), (2, 2, 6, None), (T.size, 0, 3, None),
                                  (T.size - 1, 0, 3, T.size - 1)):
        with MonkeyPatch.context() as mp:
            mp.setattr(screens, "_ROWS_FIRST", first)
            mp.setattr(screens, "_ROWS_PER_K", per_k)
            got = screens._First(cov, S, T, k, kS, lam, (None, None, None), 0.0, 1.0, None).T
        if size is None:
            assert got is None
        else:
            assert got.size == size and np.array_equal(got, np.sort(T[np.argsort(-var, kind="stable")[:size]]))
