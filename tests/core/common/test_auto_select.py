"""The top-k selections of auto's ascent (issue 39 item 4, session 5) against brute force written here:
the selection among the candidates reaching the previous support's smallest entry (partitioned, not
sorted), on columns with ties, zeros and both signs."""

import numpy as np
from hypothesis import given, settings, strategies as st

from nspca_core._common.steps import _select, _select_near, order_statistic


def _brute_topk(s: np.ndarray, k: int) -> np.ndarray | None:
    """The rows of the k largest entries of s, increasing; None when the k-th ties the (k+1)-th."""
    order = np.argsort(-s, kind="stable")
    if s.size > k and s[order[k - 1]] <= s[order[k]]:
        return None
    return np.sort(order[:k])


def _case(rng, n, q, k, coarse):
    Y = rng.standard_normal((n, q)) + rng.uniform(-0.5, 2.0, q)
    if coarse:  # ties at the k-th value
        Y = np.round(Y * 2) / 2
    prev = np.empty((k, q), dtype=np.intp)
    for j in range(q):
        # the previous support: the true top k of a perturbed column (near convergence) or random
        src = Y[:, j] + (0.3 * rng.standard_normal(n) if j % 2 else 5.0 * rng.standard_normal(n))
        prev[:, j] = np.sort(np.argsort(-src, kind="stable")[:k])
    return Y, prev


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10_000), st.integers(8, 3000), st.integers(1, 7), st.booleans(), st.booleans(), st.data())
def test_select_near_is_the_brute_force_top_k(seed, n, q, coarse, signed, data):
    """Every column the candidate selection reports found holds the k largest entries of Y (|Y| when
    signed) in increasing rows, their values Y's, and has no tie at the k-th value."""
    rng = np.random.default_rng(seed)
    k = data.draw(st.integers(1, max(1, n // 3)))
    Y, prev = _case(rng, n, q, k, coarse)
    S = np.abs(Y) if signed else Y
    done, idx, vals = _select_near(Y, S, prev, k, signed)
    for j in np.flatnonzero(done):
        expect = _brute_topk(S[:, j], k)
        assert expect is not None
        assert np.array_equal(idx[:, j], expect)
        assert np.array_equal(vals[:, j], Y[expect, j])


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(8, 600), st.integers(1, 7), st.booleans(), st.data())
def test_select_with_previous_supports_is_the_one_without(seed, n, q, coarse, data):
    """The compact step with the previous supports (the candidates first) equals the one without
    (a partition of every column), ties and non-positive entries included."""
    rng = np.random.default_rng(seed)
    k = data.draw(st.integers(1, max(1, n // 3)))
    Y, prev = _case(rng, n, q, k, coarse)
    kc = np.full(q, k)
    one = np.broadcast_to(np.intp(k), (q,))  # one k as the step hands it (stride 0: no np.unique)
    for signed in (False, True):
        a = _select(Y, kc, None, signed, k, prev)
        b = _select(Y, kc, None, signed, k, None)
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
        for c in (_select(Y, one, None, signed, k, prev), _select(Y, one, None, signed, k, None)):
            assert np.array_equal(a[0], c[0]) and np.array_equal(a[1], c[1])


def test_select_near_ranks_candidates_beyond_the_previous_support():
    """The inputs above reach the partition of more than k candidates (not only unchanged supports)."""
    rng = np.random.default_rng(3)
    n, q, k = 3000, 6, 20
    Y, prev = _case(rng, n, q, k, False)
    t = Y[prev, np.arange(q)].min(axis=0)
    count = np.count_nonzero(Y >= t, axis=0)
    done, idx, _ = _select_near(Y, Y, prev, k, False)
    ranked = done & (count > k)
    assert ranked.any()
    for j in np.flatnonzero(ranked):
        assert np.array_equal(idx[:, j], _brute_topk(Y[:, j], k))


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 500), st.integers(0, 5), st.integers(0, 3), st.booleans(), st.data())
def test_order_statistic_is_the_one_index_partition(seed, n, p, kind, fortran, data):
    """The two-index partition's entry at i is the one-index partition's (the sorted column's), on
    columns with many equal entries, infinities and NaN (ordered last), in either memory layout; 1-D too."""
    rng = np.random.default_rng(seed)
    Y = rng.standard_normal((n, max(p, 1)))
    if kind == 1:
        Y = np.maximum(Y, 0.0)  # half zeros
    elif kind == 2:
        Y = np.round(Y)
    elif kind == 3:
        Y[rng.random(Y.shape) < 0.3] = -np.inf
        Y[rng.random(Y.shape) < 0.1] = np.nan
    if fortran:
        Y = np.asfortranarray(Y)
    i = data.draw(st.integers(0, n - 1))
    A = Y[:, 0] if p == 0 else Y
    expect = np.sort(A, axis=0)[i]
    np.testing.assert_array_equal(order_statistic(A, i), expect)
    np.testing.assert_array_equal(order_statistic(A, i), np.partition(A, i, axis=0)[i])


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 1500), st.integers(0, 9), st.floats(0.0, 1.0),
       st.sampled_from(["C", "F", "strided"]))
def test_column_counts_are_count_nonzero(seed, n, q, density, layout):
    """column_counts (a product with ones) gives np.count_nonzero's integers, dtype included, on C- and
    Fortran-ordered masks (float64 and float32 products' layouts) and on column selections of them."""
    from nspca_core._common.kth import column_counts

    rng = np.random.default_rng(seed)
    M = rng.random((n, 2 * q if layout == "strided" else q)) < density
    if layout == "strided":
        M = M[:, ::2]
    elif layout == "F":
        M = np.asfortranarray(M)
    got, want = column_counts(M), np.count_nonzero(M, axis=0)
    assert got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)


@settings(max_examples=120, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 60), st.integers(1, 6), st.sampled_from(["normal", "coarse", "zeros"]),
       st.data())
def test_first_k_rows_is_the_stable_sort(seed, n, q, kind, data):
    """rank1_points' partition gives the rows of the stable sort of -U (first k, increasing), ties at the
    k-th value (many, with signed zeros) to the lower index."""
    from nspca_core._common.rank1 import _first_k_rows

    rng = np.random.default_rng(seed)
    k = data.draw(st.integers(1, n))
    U = rng.standard_normal((n, q))
    if kind == "coarse":
        U = np.round(U)
    elif kind == "zeros":
        U[rng.random((n, q)) < 0.5] = 0.0
        U[rng.random((n, q)) < 0.3] = -0.0
    want = np.sort(np.argsort(-U, axis=0, kind="stable")[:k], axis=0)
    assert np.array_equal(_first_k_rows(U, k), want)
