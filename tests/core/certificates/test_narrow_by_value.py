"""Issue 39, the twenty-fourth round (helper thin33): the row sums' narrowed lists (:class:`nspca_core.certificates.
anchor_sums._Narrowed`) selected by the values' partition (:func:`~nspca_core.certificates.anchor_sums._largest_flat`)
instead of np.argpartition: the same ``drop`` and the same multiset of kept values per row (ties and -0.0 included),
so the row sums are the same floats as with np.argpartition's lists and as the whole rows'."""

from __future__ import annotations

from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core.certificates import anchor_sums
from nspca_core.certificates.anchor import AnchorRows
from nspca_core.certificates.anchor_sums import _largest_flat, _plain_sums, float32_products

from tests.core.certificates.test_bisection_hints import _thin
from tests.core.certificates.test_thin_narrow import narrow


def _argpartition_lists(p32: np.ndarray, w: int):
    """The former selection (np.argpartition), as _Narrowed made it."""
    n, L = p32.shape
    pos = np.argpartition(p32, L - w - 1, axis=1)
    at = np.arange(n)
    return pos[:, L - w:] + (at * L)[:, None], p32[at, pos[:, L - w - 1]]


def _tied(rng, n: int, L: int, levels: int) -> np.ndarray:
    """float32 products >= 0 with many ties (``levels`` distinct values), zeros of both signs."""
    p = (rng.integers(0, levels, size=(n, L)) / levels).astype(np.float32)
    p[p == 0] = np.where(rng.random(int(np.count_nonzero(p == 0))) < 0.5, np.float32(-0.0), np.float32(0.0))
    return p


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 30), L=st.integers(2, 60), seed=st.integers(0, 2**31 - 1),
       levels=st.sampled_from([1, 2, 3, 7, 1000]), wf=st.floats(0.0, 0.99))
def test_largest_flat_keeps_the_same_values_as_argpartition(n, L, seed, levels, wf):
    """Per row: ``drop`` equal to np.argpartition's (the (w + 1)-th largest), the kept values the same multiset,
    w distinct columns of the row's own, every one at least ``drop``."""
    rng = np.random.default_rng(seed)
    w = min(int(wf * L), L - 1)
    p = _tied(rng, n, L, levels)
    keep, drop = _largest_flat(p, w)
    ref_keep, ref_drop = _argpartition_lists(p, w)
    assert keep.shape == (n, w) and np.array_equal(drop, ref_drop)  # (== : -0.0 and 0.0 compare equal)
    flat = p.reshape(-1)
    assert np.array_equal(np.sort(flat[keep], axis=1), np.sort(flat[ref_keep], axis=1))
    assert (keep // L == np.arange(n)[:, None]).all()
    assert all(np.unique(row).size == w for row in keep)
    assert (flat[keep] >= drop[:, None]).all()


def test_largest_flat_ties_at_drop_both_sides():
    """The tie branch: a row with no tie at drop keeps exactly the entries above it; a row whose w-th and (w+1)-th
    largest tie keeps the first tied ones in column order (the count made up to w)."""
    p = np.array([[5, 1, 4, 2, 3], [2, 2, 9, 2, 1]], dtype=np.float32)
    keep, drop = _largest_flat(p, 2)
    assert drop.tolist() == [3.0, 2.0]
    assert (keep[0] % 5).tolist() == [0, 2]  # (5 and 4)
    assert (keep[1] % 5).tolist() == [0, 2]  # (9 and the first 2)


def by_value(on: bool):
    """The row sums' narrowed lists by the values' partition (True) or by np.argpartition (False)."""
    return mock.patch.object(anchor_sums, "_BY_VALUE", on)


@settings(max_examples=40, deadline=None)
@given(m=st.integers(3, 12), n=st.integers(10, 60), k=st.integers(2, 12), seed=st.integers(0, 2**31 - 1),
       extra=st.sampled_from([1, 2, 5]), tie=st.sampled_from([0, 4, 16]),
       steps=st.lists(st.sampled_from([0.0, 0.001, 0.01, 0.3, -1.0]), min_size=4, max_size=14))
def test_row_sums_are_the_same_floats_by_value_and_by_argpartition(m, n, k, seed, extra, tie, steps):
    """Along a sequence of ratios, on matrices with tied entries (``tie``: A rounded to that many levels of its
    largest entry, -0.0 among them), the row sums with the lists by value equal those by np.argpartition and the
    whole rows' float for float (every bound of the thin route is then the former one)."""
    A = _thin(m, n, seed)
    k = min(k, n)
    if tie:
        s = float(np.abs(A).max()) / tie
        A = np.round(A / s) * s
        A[A == 0.0] = -0.0
    with float32_products():
        rows_a, rows_b = AnchorRows(A, k), AnchorRows(A, k)
    rng = np.random.default_rng(seed)
    r = np.ones(n)
    with narrow(extra):
        for move in steps:
            if move < 0:
                r = np.minimum(1.0, r + rng.uniform(0.0, 0.2, n))
            else:
                r = r * (1.0 - move * rng.random(n))
                r[rng.random(n) < move] = 0.0
            with by_value(True):
                got = _plain_sums(rows_a, r)
            with by_value(False):
                ref = _plain_sums(rows_b, r)
            assert np.array_equal(got.view(np.int64), ref.view(np.int64))
            assert np.array_equal(got.view(np.int64), _plain_sums(rows_a, r, whole=True).view(np.int64))
