"""Issue 39, eighteenth round (helper cbcl23): the anchored row sums from narrowed candidate lists on dense rows.

- The plain test's sums (:func:`nspca_core.certificates.anchor_sums._plain_sums`) take the thin route's narrowed
  lists on dense rows too (from ``_SORT_ROWS_FROM`` rows on), and a sum exact in any order is taken by one BLAS
  product (:func:`nspca_core.certificates.anchor_sums._sum_exact`).
- A branch's nodes (:func:`nspca_core.certificates.anchor._branch_all`) take lists made at the plain test's end
  ratios (:func:`nspca_core.certificates.anchor_sums.node_lists`, :func:`~.anchor_sums.node_free`).

Every sum is the former one bit for bit (dac4a9e's formulas, written out below: float64 products cast to float32,
np.partition, a casting sum), on random inputs with ties, zeros, entries over many binades (sums that round) and
lists only a few candidates wider than the sums (rows falling short of them); so every test's decisions and ratios
are the former ones, and the anchored bounds stay above brute force.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from nspca_core.certificates import anchor as an
from nspca_core.certificates import anchor_sums as sums
from nspca_core.certificates.anchor import (AnchorRows, anchored_branch_bound, anchored_rowsum_test, node_sums,
                                            row_fixpoint)
from tests.bruteforce import brute_opt


def _former_top(prod: np.ndarray, q: int, cap: np.ndarray) -> np.ndarray:
    L = prod.shape[1]
    p32 = prod.astype(np.float32)
    top = np.partition(p32, L - q, axis=1)[:, L - q:] if q < L else p32
    return np.maximum(top, cap.astype(np.float32)[:, None])


def _former_sum_up(top: np.ndarray) -> np.ndarray:
    return top.sum(axis=1, dtype=np.float64) * sums._SEL32_REL + top.shape[1] * sums._SEL32_ABS


def _former_plain_sums(rows: AnchorRows, r: np.ndarray) -> np.ndarray:
    """dac4a9e's plain row sums: the k - 1 largest float32 products (partitioned), summed in float64."""
    return _former_sum_up(_former_top(rows.vals * np.take(r, rows.idx), rows.m, rows.cap))


def _former_node_sums(rows, r, inc, blocked, q):
    """dac4a9e's node_sums."""
    prod = rows.vals * np.take(r, rows.idx)
    prod[blocked] = 0.0
    qmax = int(q.max(initial=0))
    free = np.zeros(rows.n)
    if qmax > 0:
        top = _former_top(prod, qmax, rows.cap)
        free = np.where(q >= qmax, _former_sum_up(top), 0.0)
        fewer = (q == qmax - 1) & (q > 0)
        if fewer.any():
            t = top[fewer]
            t[np.arange(t.shape[0]), np.argmin(t, axis=1)] = 0.0
            free[fewer] = _former_sum_up(t)
    incl = np.flatnonzero(inc)
    return rows.P[:, incl] @ r[incl] + free


def _psd(n: int, seed: int, ties: bool, spread: bool) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n + 3, n)) * rng.uniform(0.2, 3.0, n) + rng.standard_normal((n + 3, 1))
    if spread:  # entries over many binades: float64 sums of their float32 products are inexact
        X *= np.exp2(rng.uniform(-30, 10, n))
    A = X.T @ X
    if ties:  # repeated entries (ties in every selection)
        A = np.round(A * 4) / 4
        A = (A + A.T) / 2
    return A


@contextlib.contextmanager
def narrowed(extra: int, node_extra: int):
    """Narrowed lists on small dense inputs: rows of every count take them (``_SORT_ROWS_FROM``), ``extra`` /
    ``node_extra`` candidates wider than the sums (few: rows fall short of them)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sums, "_SORT_ROWS_FROM", 0)
        mp.setattr(sums, "_narrow_width", lambda q: q + extra)
        mp.setattr(sums, "_NODE_EXTRA", node_extra)
        yield


def _ratios(rng, n: int, steps) -> list:
    """A sequence of ratios as tests make them: settled moves, large moves, zeros, a new start above the last (-1)."""
    r, out = np.ones(n), []
    for move in steps:
        if move < 0:
            r = np.minimum(1.0, r + rng.uniform(0.0, 0.2, n))
        else:
            r = r * (1.0 - move * rng.random(n))
            r[rng.random(n) < move / 4] = 0.0
        out.append(r.copy())
    return out


STEPS = st.lists(st.sampled_from([0.0, 0.001, 0.01, 0.3, -1.0]), min_size=4, max_size=14)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(6, 40), k=st.integers(2, 12), seed=st.integers(0, 2**31 - 1), ties=st.booleans(),
       spread=st.booleans(), extra=st.sampled_from([1, 2, 5]), width=st.sampled_from([None, 14]), steps=STEPS)
@example(n=30, k=10, seed=38, ties=False, spread=True, extra=2, width=None, steps=[0.0, 0.001, 0.001, 0.01, 0.001])
def test_dense_narrowed_sums_are_the_former_floats(n, k, seed, ties, spread, extra, width, steps):
    """Along a sequence of ratios, the plain row sums of dense rows (narrowed lists made, used, dropped) are the
    former partitioned sums bit for bit."""
    A = _psd(n, seed, ties, spread)
    k = min(k, n - 1)
    rng = np.random.default_rng(seed)
    with narrowed(extra, 1):
        rows = AnchorRows(A, k, width=width)
        for r in _ratios(rng, n, steps):
            assert np.array_equal(sums._plain_sums(rows, r), _former_plain_sums(rows, r))


@settings(max_examples=60, deadline=None)
@given(n=st.integers(6, 30), k=st.integers(3, 9), seed=st.integers(0, 2**31 - 1), ties=st.booleans(),
       spread=st.booleans(), node_extra=st.sampled_from([1, 2, 4]), ninc=st.integers(1, 4),
       shrink=st.sampled_from([1.0, 0.999, 0.9, 0.3]), zeros=st.booleans())
def test_node_sums_from_lists_are_the_former_floats(n, k, seed, ties, spread, node_extra, ninc, shrink, zeros):
    """A node's row sums from lists made at ratios ``r0`` (at every ``r <= r0``: rows falling short of the lists,
    blocked candidates inside them, the rows taking one fewer) are the former sums bit for bit."""
    A = _psd(n, seed, ties, spread)
    k = min(k, n - 1)
    rng = np.random.default_rng(seed)
    with narrowed(1, node_extra):
        rows = AnchorRows(A, k, width=max(3 * k, 8))
        r0 = rng.uniform(0.2, 1.0, n)
        lists = sums.node_lists(rows, r0)
        if lists is None:
            return
        r = r0 * (1.0 - (1.0 - shrink) * rng.random(n))
        if zeros:
            r[rng.random(n) < 0.2] = 0.0
        inc = np.zeros(n, dtype=bool)
        inc[rng.choice(n, min(ninc, k - 1), replace=False)] = True
        exc = ~inc & (rng.random(n) < 0.3)
        fixed = inc | exc
        blocked = fixed[rows.idx]
        q = np.where(inc, k - inc.sum(), k - 1 - inc.sum())
        got = node_sums(rows, r, inc, blocked, q, lists, fixed)
        assert np.array_equal(got, _former_node_sums(rows, r, inc, blocked, q))
        # above the lists' ratios somewhere: the whole lists (the same floats)
        up = r.copy()
        up[0] = r0[0] * 1.5 + 0.1
        assert np.array_equal(node_sums(rows, up, inc, blocked, q, lists, fixed),
                              _former_node_sums(rows, up, inc, blocked, q))


@settings(max_examples=40, deadline=None)
@given(n=st.integers(7, 11), k=st.integers(3, 5), seed=st.integers(0, 2**31 - 1), ties=st.booleans(),
       spread=st.booleans(), extra=st.sampled_from([1, 3]), node_extra=st.sampled_from([1, 3]),
       frac=st.sampled_from([0.97, 0.99, 1.0, 1.01]))
def test_tests_and_branches_run_the_former_iterates(n, k, seed, ties, spread, extra, node_extra, frac):
    """Whole tests (a plain test, then its branching): the answer and the ratios it returns are those with the
    former row sums bit for bit, and what is proved is at least OPT (brute force)."""
    A = _psd(n, seed, ties, spread)
    k = min(k, n - 1)
    opt, _ = brute_opt(A, k)
    tau = opt * frac
    with narrowed(extra, node_extra):
        got_plain = anchored_rowsum_test(AnchorRows(A, k), tau)
        got_branch = anchored_branch_bound(A, k, [tau], budget=60, node_iters=8)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(an, "_plain_sums", lambda rows, r, whole=False: _former_plain_sums(rows, r))
        mp.setattr(an, "_first_sums", lambda rows, r: _former_plain_sums(rows, r))
        mp.setattr(an, "node_sums", lambda rows, r, inc, blocked, q, lists=None, fixed=None:
                   _former_node_sums(rows, r, inc, blocked, q))
        want_plain = anchored_rowsum_test(AnchorRows(A, k), tau)
        want_branch = anchored_branch_bound(A, k, [tau], budget=60, node_iters=8)
    assert got_plain[0] == want_plain[0] and np.array_equal(got_plain[1], want_plain[1])
    assert got_branch == want_branch
    if got_plain[0] or got_branch is not None:
        assert tau >= opt * (1 - 1e-12)


def test_node_lists_only_where_narrower_and_on_many_rows():
    """The lists' rule, both sides: none below ``_SORT_ROWS_FROM`` rows or where they would not be narrower than
    the rows' own; made otherwise, at the given ratios, ``_NODE_EXTRA`` candidates wider than the largest sum."""
    rng = np.random.default_rng(0)
    n = sums._SORT_ROWS_FROM
    Y = rng.standard_normal((n + 5, n))
    A = Y.T @ Y
    rows = AnchorRows(A, 6, width=96)
    r0 = rng.uniform(0.5, 1.0, n)
    lists = sums.node_lists(rows, r0)
    assert lists is not None and lists.idx.shape == (n, 5 + sums._NODE_EXTRA) and np.array_equal(lists.r0, r0)
    small = AnchorRows(A[:n - 1, :n - 1], 6, width=96)
    assert sums.node_lists(small, r0[:n - 1]) is None
    wide = AnchorRows(A, 6, width=5 + sums._NODE_EXTRA)
    assert sums.node_lists(wide, r0) is None


def test_dense_rows_narrowed_only_from_many_rows():
    """Dense rows (outside the float32 block) take narrowed lists from ``_SORT_ROWS_FROM`` rows on, not below."""
    rng = np.random.default_rng(1)
    for n, made in ((sums._SORT_ROWS_FROM - 1, False), (sums._SORT_ROWS_FROM, True)):
        Y = rng.standard_normal((n + 5, n)) + rng.standard_normal((n + 5, 1))
        rows = AnchorRows(Y.T @ Y, 8)
        r = np.full(n, 0.9)
        for _ in range(3):
            r = r * 0.999
            assert np.array_equal(sums._plain_sums(rows, r), _former_plain_sums(rows, r))
        assert (getattr(rows, "narrowed", None) is not None) == made


def test_branch_passes_its_lists_to_every_node(monkeypatch):
    """_branch_all makes one set of lists at the plain test's ratios and every node's row sums receive it."""
    seen = []
    real = an.node_sums

    def spy(rows, r, inc, blocked, q, lists=None, fixed=None):
        seen.append(lists)
        return real(rows, r, inc, blocked, q, lists, fixed)

    monkeypatch.setattr(an, "node_sums", spy)
    monkeypatch.setattr(sums, "_SORT_ROWS_FROM", 0)
    monkeypatch.setattr(sums, "_NODE_EXTRA", 2)
    A = _psd(12, 5, False, False)
    rows = AnchorRows(A, 4, width=11)
    opt, _ = brute_opt(A, 4)
    ok, r = anchored_rowsum_test(rows, opt * 1.0001)
    if ok:
        pytest.skip("the plain test proved: no branch")
    an._branch_all(rows, opt * 1.0001, r, 30, 8)
    assert seen and all(s is not None and s is seen[0] for s in seen)
    assert np.array_equal(seen[0].r0, r)


def test_row_fixpoint_takes_lists_only_for_nodes():
    """A plain test never reads ``lists`` (the plain sums keep their own on the rows)."""
    A = _psd(10, 2, False, False)
    rows = AnchorRows(A, 3)
    gap = an._gaps(rows, float(np.linalg.eigvalsh(A)[-1]))
    a = row_fixpoint(rows, gap, np.ones(10), lists=object())
    b = row_fixpoint(AnchorRows(A, 3), gap, np.ones(10))
    assert a[0] == b[0] and np.array_equal(a[1], b[1])
