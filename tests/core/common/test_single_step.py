"""auto's batched step on float32 products (:class:`SingleTopK`, issue 39 item 4, eighteenth round): its
selection partitions a float32 copy of products whose entries are float32 numbers.  The same iterates as
:class:`TopK` everywhere (ties, entries not positive, every layout), the float32 route taken exactly where
``_select`` would partition all n entries (:func:`one_index`), and auto's answers unchanged."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import nspca_core._common.single_step as single_step
import nspca_core.solve as solve
from nspca_core._common.kth import _KTH_SAMPLE_MIN_N
from nspca_core._common.single_step import SingleTopK, select_single
from nspca_core._common.steps import TopK
from nspca_core.operators.cov import Cov
from nspca_core.solve import fit_cov


def _products(seed, n, q, k, ties=0, negative=0.0, order="F"):
    """Float32 numbers held in float64 (as SingleProducts hands them over), Fortran-ordered by default;
    ``ties`` entries of each column copied onto its k-th largest, ``negative`` of the entries below 0."""
    rng = np.random.default_rng(seed)
    Y = rng.standard_normal((n, q)).astype(np.float32)
    Y = np.abs(Y) * np.where(rng.random((n, q)) < negative, -1.0, 1.0).astype(np.float32)
    if ties:
        for j in range(q):
            order_j = np.argsort(-Y[:, j])
            Y[order_j[k:k + ties], j] = Y[order_j[k - 1], j]
    return np.array(Y.astype(np.float64), order=order)


def _iterates(seed, n, q, k):
    """Compact iterates (idx, vals) of k rows: k distinct rows per column, increasing."""
    rng = np.random.default_rng(seed)
    idx = np.sort(np.stack([rng.choice(n, k, replace=False) for _ in range(q)], axis=1), axis=0)
    vals = rng.random((k, q))
    return idx, vals / np.linalg.norm(vals, axis=0)


def _same_step(Y, k, seed):
    n, q = Y.shape
    ia, va = _iterates(seed, n, q, k)
    key = np.random.default_rng(seed + 1).permutation(n)
    a = TopK(compact_start=True)(Y, ia, va, k, key, 1e-8)
    b = SingleTopK(compact_start=True)(Y, ia, va, k, key, 1e-8)
    for x, y in zip(a, b):
        assert np.array_equal(x, y)
        assert x.dtype == y.dtype


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(12, 300), q=st.integers(1, 12), k=st.integers(1, 40),
       ties=st.sampled_from([0, 0, 1, 3]), negative=st.sampled_from([0.0, 0.3, 0.9, 1.0]),
       order=st.sampled_from(["F", "F", "C"]))
def test_single_step_is_the_step(seed, n, q, k, ties, negative, order):
    """The same (idx, vals, done, settled) as TopK on float32-valued products of any shape and layout,
    with ties at the k-th largest and entries not positive (the fallbacks)."""
    k = min(k, n - 1)
    ties = min(ties, n - k)
    _same_step(_products(seed, n, q, k, ties, negative, order), k, seed)


def test_select_single_declines_ties_and_nonpositive():
    """select_single answers only in _select's common case: a tie at the k-th largest or a kept entry
    not positive returns None (the caller's selection then runs); otherwise the k largest, rows
    increasing, with their float64 values."""
    Y = _products(1, 50, 4, 5)
    idx, vals = select_single(Y, 5)
    for j in range(4):
        top = np.sort(np.argsort(-Y[:, j], kind="stable")[:5])
        assert np.array_equal(idx[:, j], top)
        assert np.array_equal(vals[:, j], Y[top, j])
    assert select_single(_products(1, 50, 4, 5, ties=2), 5) is None
    assert select_single(_products(1, 50, 4, 5, negative=1.0), 5) is None


def test_when_the_float32_route_is_taken(monkeypatch):
    """Counted on both sides of each condition: Fortran-ordered float64 products of several columns
    below _KTH_SAMPLE_MIN_N features (one_index), one k equal to the iterates' width and below n."""
    calls = []
    real = single_step.select_single
    monkeypatch.setattr(single_step, "select_single", lambda Y, k: calls.append(Y.shape) or real(Y, k))
    step = SingleTopK(compact_start=True)

    def run(n, q, k, order="F", width=None):
        Y = _products(3, n, q, k, order=order)
        ia, va = _iterates(3, n, q, width or k)
        calls.clear()
        step(Y, ia, va, k, np.arange(n), 1e-8)
        return len(calls)

    n = _KTH_SAMPLE_MIN_N - 24
    assert run(n, 8, 10) == 1
    assert run(n, 8, 10, order="C") == 0  # C-ordered products (float64 ones): the near selection
    assert run(n, 1, 10) == 0  # one column: one_index says no
    assert run(_KTH_SAMPLE_MIN_N, 8, 10) == 0  # from _KTH_SAMPLE_MIN_N on: kth_largest's sample
    assert run(n, 8, 10, width=12) == 0  # k below the width (mixed k): the general route


def _thin_cov(seed, m=30, n=1000):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n)) * rng.uniform(0.2, 3.0, n)
    X += rng.standard_normal((m, 3)) @ (rng.standard_normal((3, n)) * rng.uniform(0.1, 2.0, n))
    return Cov(X - X.mean(axis=0), None)


@pytest.mark.parametrize("k", [3, 10, 50])
def test_auto_answers_unchanged(monkeypatch, k):
    """auto with the float32 selection and start against auto with TopK's on thin float32-product data:
    the same x, variance and candidates, float for float."""
    class Plain(TopK):  # TopK's selection and start, with SingleTopK's signature
        def __init__(self, compact_start=True, own_starts=False, single_from=None):
            super().__init__(compact_start=compact_start, own_starts=own_starts)

    outs = []
    for cls in (Plain, SingleTopK):
        monkeypatch.setattr(solve, "SingleTopK", cls)
        r = fit_cov(_thin_cov(k), k, "auto", 3, 0.1, 0, None, {})
        outs.append(r)
    a, b = outs
    assert np.array_equal(a.x, b.x)
    assert a.variance == b.variance
    assert a.info["polished"] == b.info["polished"]
    assert a.info["starts"] == b.info["starts"]


def _starts(seed, n, p, j0):
    """Start columns as auto's batch gets them with float32 products: float64 columns (tpower's, rank-1
    ones) before ``j0``, random starts holding float32 numbers (signed, dense) from it, Fortran-ordered."""
    rng = np.random.default_rng(seed)
    X0 = np.empty((n, p), order="F")
    X0[:, :j0] = np.abs(rng.standard_normal((n, j0)))
    X0[:, j0:] = rng.standard_normal((n, p - j0)).astype(np.float32)
    return X0


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(12, 300), p=st.integers(2, 14), k=st.integers(1, 30),
       split=st.floats(0.0, 1.0), ties=st.booleans())
def test_single_start_is_the_start(seed, n, p, k, split, ties):
    """SingleTopK's start (the random starts projected by project_single) equals TopK's, float for
    float: any split point, k, ties in the float32 columns (copied entries), columns too sparse."""
    k = min(k, n - 1)
    j0 = int(split * (p - 1))
    X0 = _starts(seed, n, p, j0)
    if ties:  # a tie at the k-th largest of the last column, and a column with few positive entries
        col = np.sort(X0[:, -1])[::-1]
        X0[np.argsort(-X0[:, -1])[k:k + 2], -1] = col[k - 1]
        X0[:, j0] = -np.abs(X0[:, j0])
        X0[:k // 2, j0] = 1.0
    key = np.random.default_rng(seed + 2).permutation(n)
    kc = np.full(p, k)
    a = TopK(compact_start=True).start_compact(X0, kc, key, k)
    b = SingleTopK(compact_start=True, single_from=j0).start_compact(X0, kc, key, k)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def test_when_the_float32_start_is_taken(monkeypatch):
    """project_single runs only with trailing float32 columns of a Fortran-ordered start matrix below
    _KTH_SAMPLE_MIN_N features, at one k in (0, n) (counted on both sides); where it runs, TopK's start."""
    calls = []
    real = single_step.project_single
    monkeypatch.setattr(single_step, "project_single",
                        lambda X0, k, key, w, j0: calls.append(j0) or real(X0, k, key, w, j0))

    def run(n=500, p=10, j0=4, k=5, order="F", single_from=4, kc=None, X0=None):
        X0 = np.array(_starts(1, n, p, j0) if X0 is None else X0, order=order)
        kc = np.full(p, k) if kc is None else kc
        calls.clear()
        out = SingleTopK(compact_start=True, single_from=single_from).start_compact(X0, kc, np.arange(n), k)
        ref = TopK(compact_start=True).start_compact(X0, kc, np.arange(n), k)
        assert np.array_equal(out[0], ref[0]) and np.array_equal(out[1], ref[1])
        return len(calls)

    assert run() == 1
    assert run(single_from=None) == 0
    assert run(order="C") == 0
    assert run(n=_KTH_SAMPLE_MIN_N) == 0
    assert run(kc=np.array([5] * 9 + [4])) == 0  # two k
    assert run(single_from=9) == 0  # one trailing column: one_index says no
    assert run(j0=1, single_from=1) == 1  # one leading column (its norm: the whole matrix's reduction)
    feasible = np.abs(_starts(1, 50, 3, 0)) * (np.arange(50) < 4)[:, None]  # 4 positive entries each
    feasible[:, 0] = -np.abs(_starts(2, 50, 1, 0)[:, 0])  # dense, none positive: the basis vector
    assert run(n=50, p=3, j0=0, single_from=0, X0=feasible) == 1  # every column feasible or empty
