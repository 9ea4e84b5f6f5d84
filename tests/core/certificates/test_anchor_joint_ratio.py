"""Issue 39, tenth round: the joint anchored test's ratio per row (:func:`nspca_core.certificates.anchor._joint_ratio`:
rows sorted, prefix sums one column of rows at a time, hypothesis-major), the plain test's row sums (rows sorted,
the former partition's sum where a sum could round: :func:`nspca_core.certificates.anchor._plain_sums`) and a
branch node's row sums (float32 products written by the multiply, :func:`nspca_core.certificates.anchor.node_sums`)
are the former floats bit for bit, and bound brute force (every row sorted in float64)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from nspca_core.certificates import anchor as an
from nspca_core.certificates import anchor_sums as sums
from nspca_core.certificates.anchor import (_EPS, _SEL32_ABS, _SEL32_REL, AnchorRows, _gaps, _joint_ratio,
                                            _plain_sums, _sum_up, anchored_joint_test, node_sums)
from tests.core.certificates.test_anchor import node_case


def _former_top(prod: np.ndarray, q: int, cap: np.ndarray) -> np.ndarray:
    L = prod.shape[1]
    p32 = prod.astype(np.float32)
    top = np.partition(p32, L - q, axis=1)[:, L - q:] if q < L else p32
    return np.maximum(top, cap.astype(np.float32)[:, None])


def _former_joint_ratio(rows: AnchorRows, r: np.ndarray, qs: np.ndarray, gap: np.ndarray, inflate: float):
    """dac4a9e's row_fixpoint on a joint test: ``(_joint_sums(rows, r, qs) * inflate / gap).max(axis=1)``."""
    qmax = int(qs.max())
    top = _former_top(rows.vals * np.take(r, rows.idx), qmax, rows.cap)
    top = -np.sort(-top, axis=1)[:, :qmax]
    csum = np.cumsum(top, axis=1, dtype=np.float64)
    q = np.minimum(qs, top.shape[1])
    return ((csum[:, q - 1] * _SEL32_REL + q * _SEL32_ABS) * inflate / gap).max(axis=1)


def _former_node_sums(rows, r, inc, blocked, q):
    """dac4a9e's node_sums (float64 products, then cast for the selection)."""
    prod = rows.vals * np.take(r, rows.idx)
    prod[blocked] = 0.0
    qmax = int(q.max(initial=0))
    free = np.zeros(rows.n)
    if qmax > 0:
        top = _former_top(prod, qmax, rows.cap)
        free = np.where(q >= qmax, an._sum_up(top), 0.0)
        fewer = (q == qmax - 1) & (q > 0)
        if fewer.any():
            t = top[fewer]
            t[np.arange(t.shape[0]), np.argmin(t, axis=1)] = 0.0
            free[fewer] = an._sum_up(t)
    incl = np.flatnonzero(inc)
    return rows.P[:, incl] @ r[incl] + free


def _psd(n: int, seed: int, ties: bool, spread: bool) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n + 3, n)) * rng.uniform(0.2, 3.0, n)
    if spread:  # entries over many binades: float64 sums of their float32 products are inexact
        X *= np.exp2(rng.uniform(-30, 10, n))
    A = X.T @ X / X.shape[0]
    top = np.abs(A).max()
    return np.round(A / top, 1) * top if ties else A  # (rounded: equal products, ties a selection treats apart)


# both of _joint_ratio's ways to the prefix sums, whatever n: the column loop (from 0 rows on), np.cumsum along rows
COLUMNWISE = pytest.mark.parametrize("columnwise", [0, 10**9], ids=["columns", "rows"])


@COLUMNWISE
@settings(max_examples=50, deadline=None)
@given(n=st.integers(3, 40), k=st.integers(2, 14), seed=st.integers(0, 2**31 - 1), ties=st.booleans(),
       spread=st.booleans(), width=st.sampled_from([None, 2, 5]), nq=st.integers(1, 6), tiny=st.booleans())
@example(n=3, k=3, seed=0, ties=True, spread=False, width=2, nq=1, tiny=False)
def test_joint_ratio_is_the_former_and_bounds_brute_force(columnwise, n, k, seed, ties, spread, width, nq, tiny):
    """The ratio per row, the former float bit for bit (ties, entries over many binades, ratios down to float32's
    subnormals, sum sizes above the candidates kept), and at least every hypothesis' exact ratio: the exact sum
    of the q largest ``(A_lm)_+ r_m`` over ``m != l`` divided by ``tau - A_ll``."""
    A = _psd(n, seed, ties, spread)
    k = min(k, n)
    rows = AnchorRows(A, k, width=width)
    rng = np.random.default_rng(seed + 3)
    r = rng.uniform(0.0, 1.0, n) * (1e-42 if tiny else 1.0)
    qs = np.unique(rng.integers(1, k, size=nq)) if k > 1 else np.array([1])
    taus = np.max(np.diag(A)) * rng.uniform(1.01, 3.0, qs.size)
    gap = np.stack([_gaps(rows, float(t)) for t in taus], axis=1)
    inflate = 1.0 + (rows.k + 4) * _EPS
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sums, "_COLUMNWISE_FROM", columnwise)
        got = _joint_ratio(rows, r, qs, np.ascontiguousarray(gap.T), inflate)
    want = _former_joint_ratio(rows, r, qs, gap, inflate)
    assert np.array_equal(got, want)
    P = np.maximum(A, 0.0) * r[None, :]
    np.fill_diagonal(P, 0.0)
    exact = np.cumsum(-np.sort(-P, axis=1), axis=1)
    brute = np.max([exact[:, min(q, n - 1) - 1] / (taus[t] - np.diag(A)) for t, q in enumerate(qs)], axis=0)
    assert np.all(got >= brute * (1 - 1e-12))


@COLUMNWISE
@settings(max_examples=30, deadline=None)
@given(n=st.integers(4, 30), k=st.integers(3, 10), seed=st.integers(0, 2**31 - 1), ties=st.booleans(),
       spread=st.booleans(), scale=st.floats(0.9, 1.5))
def test_joint_test_runs_the_former_iterates(columnwise, n, k, seed, ties, spread, scale):
    """A whole joint test (every iterate, the answer and the ratios it returns) with _joint_ratio is the one with
    the former row sums, bit for bit."""
    A = _psd(n, seed, ties, spread)
    k = min(k, n)
    rows = AnchorRows(A, k)
    lam = float(np.linalg.eigvalsh(A)[-1])
    ks = np.arange(2, k + 1)
    taus = lam * scale * np.linspace(0.6, 1.0, ks.size)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sums, "_COLUMNWISE_FROM", columnwise)
        got = anchored_joint_test(rows, ks, taus)
        mp.setattr(an, "_joint_ratio", lambda rows, r, qs, gapT, inflate:
                   _former_joint_ratio(rows, r, qs, np.ascontiguousarray(gapT.T), inflate))
        want = anchored_joint_test(rows, ks, taus)
    assert got[0] == want[0] and np.array_equal(got[1], want[1])


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(3, 16), k=st.integers(2, 8), ninc=st.integers(1, 4),
       narrow=st.booleans(), spread=st.booleans())
def test_node_sums_are_the_former_floats(seed, n, k, ninc, narrow, spread):
    """A branch node's row sums from the float32 products the multiply writes: the former float64 products' cast,
    the same sums bit for bit (brute force: test_anchor.test_node_sums_are_the_capped_top_q_sums)."""
    k = min(k, n - 1)
    rng = np.random.default_rng(seed)
    A = _psd(n, seed, False, spread)
    rows, r, inc, blocked, q = node_case(A, k, rng, narrow, ninc)
    assert np.array_equal(node_sums(rows, r, inc, blocked, q), _former_node_sums(rows, r, inc, blocked, q))


# both selections of the row sums, whatever the width: rows sorted (up to 10**9 candidates), np.partition (from 1 on)
SORT_UPTO = pytest.mark.parametrize("sort_upto", [10**9, 0], ids=["sorted", "partitioned"])


@SORT_UPTO
@COLUMNWISE
@settings(max_examples=40, deadline=None)
@given(n=st.integers(3, 40), k=st.integers(2, 14), seed=st.integers(0, 2**31 - 1), ties=st.booleans(),
       spread=st.booleans(), width=st.sampled_from([None, 2, 5]), tiny=st.booleans())
def test_sorted_rows_give_the_former_sums(sort_upto, columnwise, n, k, seed, ties, spread, width, tiny):
    """The plain sums and the joint ratio with rows sorted or partitioned: the former floats bit for bit (ties,
    entries over many binades where a float64 sum of float32 values rounds, subnormal products), and at least the
    exact sums of the ``k - 1`` largest products."""
    A = _psd(n, seed, ties, spread)
    k = min(k, n)
    rows = AnchorRows(A, k, width=width)
    rng = np.random.default_rng(seed + 4)
    r = rng.uniform(0.0, 1.0, n) * (1e-42 if tiny else 1.0)
    if spread:
        r *= np.exp2(rng.uniform(-40, 0, n))
    qs = np.arange(1, k)
    taus = np.max(np.diag(A)) * rng.uniform(1.01, 3.0, qs.size)
    gap = np.stack([_gaps(rows, float(t)) for t in taus], axis=1)
    inflate = 1.0 + (rows.k + 4) * _EPS
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sums, "_SORT_UPTO", sort_upto)
        mp.setattr(sums, "_JOINT_SORT_UPTO", sort_upto)
        mp.setattr(sums, "_SORT_ROWS_FROM", 0)
        mp.setattr(sums, "_COLUMNWISE_FROM", columnwise)
        got = _plain_sums(rows, r)
        ratio = _joint_ratio(rows, r, qs, np.ascontiguousarray(gap.T), inflate) if k > 1 else None
    assert np.array_equal(got, _sum_up(_former_top(rows.vals * np.take(r, rows.idx), rows.m, rows.cap)))
    if ratio is not None:
        assert np.array_equal(ratio, _former_joint_ratio(rows, r, qs, gap, inflate))
    P = np.maximum(A, 0.0) * r[None, :]
    np.fill_diagonal(P, 0.0)
    assert np.all(got >= np.sort(P, axis=1)[:, ::-1][:, : rows.m].sum(axis=1) * (1 - 1e-12))


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), q=st.integers(1, 300), spread=st.floats(0.0, 40.0), sub=st.booleans(),
       zeros=st.sampled_from([0.0, 0.3, 1.0]))
def test_sums_called_exact_are_exact_in_any_order(seed, q, spread, sub, zeros):
    """:func:`anchor_sums._exact_in_any_order` against brute force: every row it calls exact sums in float64 to
    math.fsum's exact value in the sorted order, reversed, and random orders (sequential and NumPy's pairwise);
    rows over many binades (``spread``), subnormal float32 values (``sub``) and zeros included."""
    import math

    rng = np.random.default_rng(seed)
    low = rng.random((8, q)) < 0.5  # (two clusters, spread binades apart: many small values whose order matters)
    v = rng.uniform(1.0, 2.0, (8, q)) * np.exp2(np.where(low, -spread, 0.0)) * (2.0 ** -140 if sub else 1.0)
    v[rng.random((8, q)) < zeros] = 0.0  # (zeros: blocked products, clipped negative entries; all-zero rows too)
    top = np.sort(v.astype(np.float32), axis=1)
    ok = sums._exact_in_any_order(top)
    for row in top[ok]:
        exact = math.fsum(row.astype(np.float64))
        for order in (row, row[::-1], rng.permutation(row), rng.permutation(row)):
            assert order.sum(dtype=np.float64) == exact
            assert np.cumsum(order, dtype=np.float64)[-1] == exact
    if spread == 0.0 and not sub and q < 2**20:
        assert ok.all()  # (within one binade, zeros or not: every row is called exact)
