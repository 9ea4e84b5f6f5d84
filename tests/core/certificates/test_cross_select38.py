"""Issue 39, twenty-seventh round (helper cross38): the cross table's selections -- each row's largest entries of a
block (:func:`nspca_core.certificates.cross._largest_in_place`, a partition at two neighbouring indices) and each
kept column's largest squares in descending order (:func:`nspca_core.certificates.cross._largest_descending`, a
full sort where they are a quarter of the column or more) -- instead of NumPy's partition at one index, slow on the
many equal zeros of clipped squares (half a block on gene data).  The same multisets (hence the same table, float
for float, as the former selections give), and the table still bounds brute force."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nspca_core.certificates import cross
from nspca_core.certificates.cross import _largest_descending, _largest_in_place, cross_table
from nspca_core.operators.cov import Cov
from tests.bruteforce import assert_cross_table_bounds


def _former_in_place(a: np.ndarray, n: int) -> np.ndarray:
    c = a.shape[1]
    a.partition(c - n, axis=1)
    return a[:, c - n:]


def _former_descending(a: np.ndarray, n: int) -> np.ndarray:
    c = a.shape[1]
    a.partition(c - n, axis=1)
    return -np.sort(-a[:, c - n:], axis=1)


def _block(rng, r: int, c: int, ties: bool) -> np.ndarray:
    a = np.maximum(rng.standard_normal((r, c)), 0.0) ** 2  # (about half zeros, as clipped squares)
    return np.round(a * 2) / 2 if ties else a


@settings(max_examples=80, deadline=None)
@given(r=st.integers(1, 9), c=st.integers(1, 40), frac=st.floats(0.0, 1.0), seed=st.integers(0, 2**31 - 1),
       ties=st.booleans())
def test_selections_keep_the_former_multisets_and_order(r, c, frac, seed, ties):
    """Per row the same multiset of the ``n`` largest as ``np.partition`` at one index (any ``1 <= n <= c``, zeros
    and ties), and the descending sequence of ``-np.sort(-top)`` exactly (the column sums are summed in it)."""
    rng = np.random.default_rng(seed)
    a = _block(rng, r, c, ties)
    n = max(1, min(c, int(round(frac * c))))
    got = _largest_in_place(a.copy(), n)
    want = _former_in_place(a.copy(), n)
    assert got.shape == (r, n) and np.array_equal(np.sort(got, axis=1), np.sort(want, axis=1))
    got_d, want_d = _largest_descending(a.copy(), n), _former_descending(a.copy(), n)
    assert got_d.shape == (r, n) and np.array_equal(got_d, want_d)
    assert np.array_equal(np.cumsum(got_d, axis=1), np.cumsum(want_d, axis=1))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(s=st.integers(2, 5), t=st.integers(3, 9), m=st.integers(3, 9), seed=st.integers(0, 2**31 - 1),
       part=st.sampled_from(["both", "rows", "cols"]), block=st.sampled_from([2, 3, 2048]))
def test_table_through_x_is_the_former_selections_and_bounds_brute_force(monkeypatch, s, t, m, seed, part, block):
    """Through X (float32 products, the screen, the staged column part, the scan): the table float for float as
    with the former one-index partitions, and every ``C[i, j]`` at least ``||(A_IJ)_+||_2`` over the supports."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, s + t)) * rng.random(s + t) * 3
    X -= X.mean(axis=0)
    S, T = np.arange(s), np.arange(s, s + t)
    cov = Cov(X)
    monkeypatch.setattr(cross, "_BLOCK", block)
    C = cross_table(cov, S, T, s, t, part=part)
    monkeypatch.setattr(cross, "_largest_in_place", _former_in_place)
    monkeypatch.setattr(cross, "_largest_descending", _former_descending)
    assert np.array_equal(C, cross_table(cov, S, T, s, t, part=part))
    assert_cross_table_bounds(C, X.T @ X / m, S, T)
