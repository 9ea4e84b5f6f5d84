"""auto at tpower's price (issue 39 item 4, second pass) against plain references written here: the k-th
largest from a higher sample threshold (and its fallback), the proof that T_k(-y) is the shorter
truncation on the screen's bounds, the polish on the screen's rows, the support limits computed once,
and the random directions left unnormalized."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import nspca_core._common.steps as steps
from nspca_core._common.ascent import Screen, cov_key, project, random_starts
from nspca_core._common.polish import polish_many
from nspca_core._common.steps import _step, _to_compact, kth_largest
from nspca_core.operators.cov import Cov


def _thin(rng, m, n, rank=3):
    """Centered thin data with a few strong directions (a screen then has rows to leave out)."""
    X = rng.standard_normal((m, rank)) @ (rng.standard_normal((rank, n)) * rng.uniform(0.1, 3.0, n))
    X += 0.2 * rng.standard_normal((m, n))
    return X - X.mean(axis=0)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(1024, 5000), st.integers(1, 5), st.booleans(), st.data())
def test_kth_largest_from_the_higher_threshold_and_its_fallback(seed, n, p, planted, data):
    """Random columns take the higher sample threshold; columns whose large entries sit exactly on the
    sample's rows (every 8th) have fewer than j candidates above it and fall back to the sample's j-th
    largest: both give the sorted column's entry."""
    rng = np.random.default_rng(seed)
    j = data.draw(st.integers(1, n // (4 * steps._KTH_STRIDE)))
    Y = rng.standard_normal((n, p))
    if planted:  # the sample's rows hold the large values: the higher threshold leaves too few
        Y[::steps._KTH_STRIDE] += 100.0
        Y[1::steps._KTH_STRIDE, 0] += 99.0
    expect = -np.sort(-Y, axis=0)[j - 1]
    assert np.array_equal(kth_largest(Y, j), expect)


def test_kth_largest_fallback_is_reached():
    """The planted input above does leave fewer than j candidates over the higher threshold."""
    n, j = 4000, 100
    Y = np.zeros((n, 1))
    Y[::steps._KTH_STRIDE, 0] = 1000.0 + np.arange(Y[::steps._KTH_STRIDE].shape[0])
    s = Y[::steps._KTH_STRIDE, 0]
    r = min(j, j // steps._KTH_STRIDE + 3 * int(np.sqrt(j // steps._KTH_STRIDE + 1)) + 3)
    assert np.count_nonzero(Y[:, 0] >= np.sort(s)[::-1][r - 1]) < j  # the fallback's condition
    assert kth_largest(Y, j)[0] == -np.sort(-Y[:, 0])[j - 1]


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(5, 40), st.integers(1000, 2500), st.data())
def test_flip_ruled_out_only_where_the_negative_truncation_is_shorter(seed, m, n, data):
    """Where the screen says T_k(-y) cannot be the longer, the brute-force truncations agree: the
    k largest squares of (-y)_+ sum below ||y_J||^2, itself at most ||T_k(y_+)||^2."""
    rng = np.random.default_rng(seed)
    cov = Cov(_thin(rng, m, n), None)
    V, eig = cov.factor(3)
    sc = Screen(cov, V, eig[0])
    sc._prepare()
    k = data.draw(st.integers(1, 60))
    q = 6
    Xs = project(np.abs(cov.matvec(rng.standard_normal((n, q)))) + 1e-3 * rng.random((n, q)), k)
    ia, va = _to_compact(Xs, k)
    rows = np.unique(ia[ia < n])
    lut = np.full(n + 1, rows.size)
    lut[rows] = np.arange(rows.size)
    Wr = np.zeros((rows.size + 1, q))
    Wr[lut[ia], np.arange(q)] = va
    Wr = Wr[:rows.size]
    Y = cov.matvec(Xs)
    v = np.einsum("ij,ij->j", Xs, Y)
    yy = np.array([np.sum(Y[ia[:, j][ia[:, j] < n], j] ** 2) for j in range(q)])
    kc = np.full(q, k)
    # the columns the screen asks about: k entries, y positive on all of them
    g = np.array([j for j in range(q) if np.all(ia[:, j] < n) and Y[ia[:, j], j].min() > 0], dtype=np.intp)
    passed = sc._flip_ruled_out(g, rows, Wr, v, yy, kc)
    for j in passed:
        neg = _step(-Y[:, [j]], k, None, False, False)[:, 0]
        pos = _step(Y[:, [j]], k, None, False, False)[:, 0]
        assert neg @ neg < yy[j] <= pos @ pos * (1 + 1e-12)


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 10_000), st.integers(10, 40), st.integers(1000, 2000), st.data())
def test_polish_on_the_screen_rows_is_the_polish(seed, m, n, data):
    """The polish with a float64 screen (the both-signs step on the rows that can enter a top k) ends
    at the points of the polish without it: the same supports, values equal to rounding."""
    rng = np.random.default_rng(seed)
    cov = Cov(_thin(rng, m, n), None)
    V, eig = cov.factor(3)
    k = data.draw(st.integers(2, 40))
    X0 = project(np.abs(cov.matvec(rng.standard_normal((n, 3)))), k)
    key = cov_key(cov)
    sc = Screen(cov, V, eig[0])
    sc.min_work = 0  # screen even these small products
    P1, f1, _ = polish_many(cov, X0, k, key=key, reweight_first=True)
    P2, f2, _ = polish_many(cov, X0, k, key=key, reweight_first=True, screen=sc)
    assert np.array_equal(P1 != 0, P2 != 0)
    assert np.allclose(f1, f2, rtol=1e-12, atol=0)
    assert np.allclose(cov.quads(P2), f2, rtol=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(5, 80), st.integers(3, 40), st.booleans(), st.data())
def test_polish_of_copies_is_the_polish_of_one(seed, n, m, thin, data):
    """Columns on the same support share one limit (computed once): copies of a column end where the
    column alone ends, never below its start, feasible.  With another column in the batch the copies
    still end together, but may take that column's result (``merge="support"``, a heuristic: a moving
    column reaching the support on which another stopped takes its result; seed 1960, n = 17, m = 36,
    dense, k = 9 ends 3.6% below the column alone), so there they are held to the ascent's own
    guarantee: never below their start."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n)) * rng.uniform(0.2, 3.0, n)
    cov = Cov(X - X.mean(axis=0), None) if thin else Cov(None, np.cov(X, rowvar=False, bias=True))
    k = data.draw(st.integers(1, n))
    x0 = project(np.abs(rng.standard_normal((n, 1))), k)
    alone, fa, _ = polish_many(cov, x0, k, reweight_first=True)
    P, f, _ = polish_many(cov, np.column_stack([x0[:, 0], x0[:, 0]]), k, reweight_first=True)
    for j in (0, 1):  # a batch's products round differently from one column's: values to rounding
        assert np.array_equal(P[:, j] != 0, alone[:, 0] != 0) and f[j] == pytest.approx(fa[0], rel=1e-12)
    X0 = np.column_stack([x0[:, 0], project(np.abs(rng.standard_normal((n, 1))), k)[:, 0], x0[:, 0]])
    P, f, _ = polish_many(cov, X0, k, reweight_first=True)
    assert np.array_equal(P[:, 0], P[:, 2]) and f[0] == f[2]
    for j in range(3):
        assert np.all(P[:, j] >= 0) and np.count_nonzero(P[:, j]) <= k
        assert f[j] >= cov.quad(X0[:, j]) * (1 - 1e-12)


def test_random_directions_left_unnormalized_are_the_unit_ones_scaled():
    """``unit=False`` draws the same directions (same stream, same gather per rank of the key), only
    not divided by their norms."""
    key = np.random.default_rng(0).permutation(500)
    a = random_starts(key, np.random.default_rng(3), 7, nonneg=False)
    b = random_starts(key, np.random.default_rng(3), 7, nonneg=False, unit=False)
    assert np.allclose(b / np.linalg.norm(b, axis=0), a, rtol=1e-14, atol=1e-16)
    assert not np.allclose(np.linalg.norm(b, axis=0), 1.0)


def test_screen_exact_twin_shares_the_bounds():
    """The float64 twin of a float32 screen has no float32 products and, once prepared, the same bounds."""
    from nspca_core._common.screen import SingleProducts

    rng = np.random.default_rng(1)
    cov = Cov(_thin(rng, 20, 1200), None)
    V, eig = cov.factor(3)
    sc = Screen(cov, V, eig[0], SingleProducts(cov))
    twin = sc.exact()
    assert twin.single is None and sc.single is not None
    twin._prepare()  # made when first needed (auto18), then the screen's own arrays
    assert twin.order is sc.order and twin.s is sc.s
    assert Screen(cov, V, eig[0]).exact().single is None
    with pytest.raises(AttributeError):
        _ = Screen(cov, V, eig[0]).order  # prepared only when first needed
