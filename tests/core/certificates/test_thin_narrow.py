"""Issue 39 (helper thin16): two changes to the thin route's anchored search (:func:`nspca_core.certificates.route.
certify_thin`), each inside a block only that route enters.

- Narrowed candidate lists (:func:`nspca_core.certificates.anchor_sums._narrowed_sums`): the row sums from each row's
  1.25 q largest products at settled ratios, the rows that fall short of them summed from the whole list; the row
  sums float for float the whole rows' (so every bound of the route is the former one), and the rule that makes and
  drops the lists counted on both sides of its thresholds.
- S's eager bound with the top test moved (:func:`nspca_core.certificates.thin_anchor.anchored`): every bound at least
  OPT (brute force), ``dual._anchored``'s bound float for float but where the moved (warm) top test fails, the top
  tested only where the test at ``1.001 lower`` fails.
"""

from __future__ import annotations

import contextlib

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from nspca_core.certificates import anchor_sums, thin_anchor
from nspca_core.certificates.anchor import AnchorRows, anchored_bisection, anchored_rowsum_test
from nspca_core.certificates.anchor_sums import _plain_sums, float32_products
from nspca_core.certificates.dual import _anchored

from tests.bruteforce import brute_opt
from tests.core.certificates.test_bisection_hints import _thin


def _rows(A: np.ndarray, k: int, width=None) -> AnchorRows:
    with float32_products():
        return AnchorRows(A, k, width=width)


@contextlib.contextmanager
def narrow(extra: int):
    """Narrowed lists of q + ``extra`` candidates (small inputs: the default keeps 16 more than q)."""
    real = anchor_sums._narrow_width
    anchor_sums._narrow_width = lambda q: q + extra
    try:
        yield
    finally:
        anchor_sums._narrow_width = real


@settings(max_examples=40, deadline=None)
@given(m=st.integers(3, 12), n=st.integers(10, 60), k=st.integers(2, 12), seed=st.integers(0, 2**31 - 1),
       extra=st.sampled_from([1, 2, 5]), steps=st.lists(st.sampled_from([0.0, 0.001, 0.01, 0.3, -1.0]),
                                                         min_size=4, max_size=14),
       width=st.sampled_from([None, 12]))
def test_narrowed_sums_are_the_whole_rows_sums(m, n, k, seed, extra, steps, width):
    """Along a sequence of ratios (settled moves, large moves, zeroed entries, a new start above the last: -1), the
    row sums from narrowed lists equal the whole rows' float for float (``whole=True``: the former path)."""
    A = _thin(m, n, seed)
    k = min(k, n)
    rows = _rows(A, k, width)
    rng = np.random.default_rng(seed)
    r = np.ones(n)
    with narrow(extra):
        for move in steps:
            if move < 0:  # (a new test's start: some ratios above the last ones)
                r = np.minimum(1.0, r + rng.uniform(0.0, 0.2, n))
            else:
                r = r * (1.0 - move * rng.random(n))
                r[rng.random(n) < move] = 0.0
            got = _plain_sums(rows, r)
            assert np.array_equal(got, _plain_sums(rows, r, whole=True))


@settings(max_examples=25, deadline=None)
@given(m=st.integers(3, 7), n=st.integers(7, 10), k=st.integers(2, 4), seed=st.integers(0, 2**31 - 1),
       extra=st.sampled_from([1, 2]))
def test_narrowed_tests_prove_only_above_opt(m, n, k, seed, extra):
    """The anchored bisection on narrowed lists: its bound at least OPT (brute force) and the whole rows' bound,
    last failure and its ratios float for float."""
    A = _thin(m, n, seed)
    k = min(k, n)
    opt, _ = brute_opt(A, k)
    hi = float(np.linalg.eigvalsh(A)[-1]) * 1.01
    lower = float(np.diag(A).max())
    with narrow(extra):
        got = anchored_bisection(_rows(A, k), lower, hi, 1e-3)
    with narrow(10**9):
        want = anchored_bisection(_rows(A, k), lower, hi, 1e-3)
    assert got[0] >= opt * (1 - 1e-12)
    assert got[0] == want[0] and got[1] == want[1]
    assert (got[2] is None and want[2] is None) or np.array_equal(got[2], want[2])


def test_narrowed_lists_made_where_ratios_settle_and_dropped_where_rows_fall_short(monkeypatch):
    """The rule's thresholds, both sides: lists made at a call whose ratios moved at most ``_SETTLED`` from the last
    call's (none after a larger move, none at a cold start); used while the ratios stay below the ones they were
    made at; dropped where more than ``_NARROW_REDO`` of the rows fell short of them (the sums the whole rows')."""
    monkeypatch.setattr(anchor_sums, "_narrow_width", lambda q: q + 3)
    A = _thin(8, 60, 3)
    rows = _rows(A, 6)
    r = np.ones(60)
    _plain_sums(rows, r)
    assert getattr(rows, "narrowed", None) is None  # (cold start)
    big = r * (1 - 2 * anchor_sums._SETTLED)
    _plain_sums(rows, big)
    assert getattr(rows, "narrowed", None) is None  # (moved more than _SETTLED)
    settled = big * (1 - 0.5 * anchor_sums._SETTLED)
    _plain_sums(rows, settled)
    made = rows.narrowed
    assert made is not None and np.array_equal(made.r0, settled)
    below = settled * 0.999
    _plain_sums(rows, below)
    assert rows.narrowed is made  # (used, not made again)
    # every row's kept candidates zeroed: all rows short of the dropped products' bound, the lists dropped
    cut = below.copy()
    cut[np.unique(made.idx)] = 0.0
    assert np.array_equal(_plain_sums(rows, cut), _plain_sums(rows, cut, whole=True))
    assert rows.narrowed is None
    # a few rows short (at most _NARROW_REDO of them): kept
    rows.narrowed = made
    few = below.copy()
    few[made.idx[0]] = 0.0  # (row 0's kept columns: row 0 short, the others' sums lose a few of theirs)
    short = int(np.count_nonzero(np.sort(np.take(anchor_sums.up32(few), made.idx) * made.vals32, axis=1)
                                 [:, made.idx.shape[1] - rows.m] < made.drop))
    assert np.array_equal(_plain_sums(rows, few), _plain_sums(rows, few, whole=True))
    assert (rows.narrowed is made) == (short <= anchor_sums._NARROW_REDO * rows.n)
    assert short >= 1


def test_no_narrowed_lists_outside_the_float32_block(monkeypatch):
    """Rows made outside :func:`float32_products` (every other route) on fewer than ``_SORT_ROWS_FROM`` rows never take
    the narrowed path (from that many rows on they do: tests/core/certificates/test_anchor_narrow_dense.py)."""
    monkeypatch.setattr(anchor_sums, "_narrow_width", lambda q: q + 3)
    A = _thin(8, 60, 4)
    rows = AnchorRows(A, 6)
    r = np.ones(60) * 0.9
    for _ in range(3):
        r = r * 0.999
        _plain_sums(rows, r)
    assert getattr(rows, "narrowed", None) is None


# --------------------------------------------------------------------------------------------- the top test moved
@settings(max_examples=30, deadline=None)
@given(m=st.integers(3, 7), n=st.integers(6, 10), k=st.integers(2, 4), seed=st.integers(0, 2**31 - 1),
       frac=st.sampled_from([1.0, 0.999, 0.99, 0.9]))
@example(m=4, n=8, k=3, seed=5, frac=1.0)
@example(m=5, n=8, k=3, seed=168, frac=0.99)  # (the warm top test holds where the cold one fails: found by thin17)
def test_top_moved_is_a_bound_and_the_former_one(m, n, k, seed, frac):
    """:func:`thin_anchor.top_moved` (the search where collatz does not settle) from a feasible value ``frac`` x OPT:
    every bound at least OPT (brute force), and
    ``dual._anchored``'s (top test first, cold) float for float, but where its own top test (warm, after the failure
    at ``1.001 lower``) fails: then None; or where the cold top test fails and the warm one holds (its start is the
    failure's ratios, at most the all-ones): then ``dual._anchored`` None and this a proved bound; no top test where
    the test at ``1.001 lower`` holds."""
    A = _thin(m, n, seed)
    k = min(k, n)
    opt, _ = brute_opt(A, k)
    lower = opt * frac
    counts: dict = {}
    with float32_products():
        got = thin_anchor.top_moved(A, k, lower, np.inf, 1e-3, 0.975, counts)
        want = _anchored(A, k, lower, np.inf, rel_tol=1e-3, top_ratio=0.975, top_first=True)
        first, _ = anchored_rowsum_test(AnchorRows(A, k), lower * 1.001)
    if got is not None:
        assert got >= opt * (1 - 1e-12)
    cold_top = anchored_rowsum_test(_rows(A, k), lower / 0.975)[0]
    assert got == want or (got is None and counts["top_tests"] == 1) or (want is None and not cold_top
                                                                         and counts["top_tests"] == 1)
    assert counts.get("top_tests", 0) == (0 if first else 1)


def test_top_tested_only_where_the_first_test_fails():
    """Both sides: from the optimum's value the test at ``1.001 lower`` holds (no top test; the former bound); from a
    value 0.975 x OPT (1 + 1e-4) it cannot (``1.001 lower`` is below OPT), and the top (OPT (1 + 1e-4)) is tested
    once, warm; every bound at least OPT."""
    A = _thin(5, 9, 11)
    k = 3
    opt, _ = brute_opt(A, k)
    counts: dict = {}
    with float32_products():
        got = thin_anchor.top_moved(A, k, opt, np.inf, 1e-3, 0.975, counts)
        want = _anchored(A, k, opt, np.inf, rel_tol=1e-3, top_ratio=0.975, top_first=True)
    assert got is not None and got == want and got >= opt and counts.get("top_tests", 0) == 0
    lower = opt * 0.975 * (1 + 1e-4)
    counts = {}
    with float32_products():
        got = thin_anchor.top_moved(A, k, lower, np.inf, 1e-3, 0.975, counts)
    assert counts["top_tests"] == 1
    assert got is None or got >= opt


def test_top_last_only_inside_its_block(monkeypatch):
    """``thin_anchor.on()`` only inside :func:`thin_anchor.top_last`, which :func:`route.certify_thin` enters: a thin
    certificate's light S bound takes it, every other route ``dual._anchored``."""
    from nspca_core.certificates import coupled, route

    assert not thin_anchor.on()
    with thin_anchor.top_last():
        assert thin_anchor.on()
    assert not thin_anchor.on()
    seen = []
    real = thin_anchor.anchored

    def spy(*a, **kw):
        seen.append(thin_anchor.on())
        return real(*a, **kw)

    monkeypatch.setattr(thin_anchor, "anchored", spy)
    monkeypatch.setattr(coupled, "_anchored", lambda *a, **kw: seen.append("dual") or None)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 400)) + rng.standard_normal((20, 1)) * np.r_[np.ones(60), np.zeros(340)]
    from nspca_core.operators.covariance import as_cov

    cov = as_cov(X, None, center=True)
    assert route.split_cheaper(cov, 10, "auto")
    route.certify_thin(cov, 10, None, "auto", None)
    assert seen and all(s is True for s in seen)
