"""The shared kernel's top-k mask (nspca_core._common.ascent.topk_mask) against a plain sort:
the k largest entries of each column, ties at the k-th value taken by increasing key."""

import numpy as np
from hypothesis import given, settings, strategies as st

from nspca_core._common.ascent import topk_mask, truncate


def brute_mask(Y, kc, key):
    n, p = Y.shape
    kc = np.broadcast_to(np.asarray(kc), (p,))
    out = np.zeros((n, p), dtype=bool)
    for j in range(p):
        order = sorted(range(n), key=lambda i: (-Y[i, j], key[i]))
        out[order[:min(int(kc[j]), n)], j] = True
    return out


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 9), st.integers(1, 5), st.booleans(), st.booleans())
def test_topk_mask_is_the_sorted_top_k(seed, n, p, per_column, coarse):
    rng = np.random.default_rng(seed)
    Y = rng.integers(-2, 3, (n, p)).astype(float) if coarse else rng.standard_normal((n, p))
    key = rng.permutation(n).astype(float)
    kc = rng.integers(1, n + 2, p) if per_column else int(rng.integers(1, n + 2))
    assert np.array_equal(topk_mask(Y, kc, key), brute_mask(Y, kc, key))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 8), st.integers(1, 4))
def test_truncate_keeps_the_k_largest_positive_entries(seed, n, p):
    rng = np.random.default_rng(seed)
    Y = rng.integers(-2, 3, (n, p)).astype(float)
    key = np.arange(n, dtype=float)
    k = int(rng.integers(1, n + 1))
    Z = truncate(Y, k, key)
    for j in range(p):
        pos = np.sort(Y[:, j][Y[:, j] > 0])[::-1][:k]
        assert np.array_equal(np.sort(Z[:, j][Z[:, j] > 0])[::-1], pos)
        assert np.count_nonzero(Z[:, j]) <= k and (Z[:, j] >= 0).all()


def brute_step(Y, kc, key, signed):
    """``T_k`` by a plain sort: the k largest entries of ``Y_+`` (``signed``: of ``|Y|``, with
    their signs), ties taken by increasing key; zeros elsewhere."""
    n, p = Y.shape
    S = np.abs(Y) if signed else np.maximum(Y, 0.0)
    M = brute_mask(S, kc, key)
    return np.where(M, Y if signed else S, 0.0)


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 12), st.integers(1, 6), st.sampled_from([1, 2, 7]),
       st.booleans(), st.booleans())
def test_compact_step_is_the_sorted_top_k(seed, n, p, distinct_k, signed, coarse):
    """The ascent's compact selection (indices and values of the k kept entries per column)
    is the dense top-k, ties at a positive k-th value broken by key — whichever of its paths
    (one k, a few k, many k; ties or not) it takes."""
    from nspca_core._common.steps import _select, _to_dense

    rng = np.random.default_rng(seed)
    Y = rng.integers(-2, 3, (n, p)).astype(float) if coarse else rng.standard_normal((n, p))
    key = rng.permutation(n)
    kc = rng.choice(rng.integers(1, n + 1, distinct_k), p)
    idx, vals = _select(Y, kc, key, signed, int(kc.max()))
    assert np.array_equal(_to_dense(idx, vals, n), brute_step(Y, kc, key, signed))
    # canonical: the kept indices increase down each column, padding (index n, value 0) last
    assert (np.diff(idx, axis=0) > 0).all() or np.all((np.diff(idx, axis=0) > 0) | (idx[1:] == n))
    assert np.array_equal(idx == n, vals == 0)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 12), st.integers(1, 5), st.booleans(), st.booleans())
def test_ascent_compact_and_dense_iterates_agree(seed, n, p, signed, both_signs):
    """The two ways the kernel holds its iterates (compact (indices, values) when k is small
    next to n, dense otherwise) are one algorithm: same points, values, iterations.  Both are
    monotone from the projected start and feasible: unit columns, at most k nonzeros
    (nonnegative unless ``signed``), their values ``x^T A x`` as returned."""
    from nspca_core._common import ascent as asc

    rng = np.random.default_rng(seed)
    B = rng.integers(-2, 3, (n + 2, n)).astype(float)
    A = B.T @ B
    X0 = rng.standard_normal((n, p))
    k = int(rng.integers(1, max(2, n // 4) + 1))
    key = rng.permutation(n)
    runs = []
    saved = asc._COMPACT_MIN_N
    try:
        for threshold in (0, 10**9):  # compact, then dense
            asc._COMPACT_MIN_N = threshold
            runs.append(asc.ascent(lambda W: A @ W, X0, k, key=key, signed=signed,
                                   both_signs=both_signs and not signed))
    finally:
        asc._COMPACT_MIN_N = saved
    c, d = runs
    assert np.allclose(c.X, d.X, atol=1e-12) and np.allclose(c.values, d.values, rtol=1e-12)
    assert c.iterations == d.iterations and np.array_equal(c.converged, d.converged)
    P = asc.project(X0, k, key, signed=signed)
    start = np.einsum("ij,ij->j", P, A @ P)
    assert (c.values >= start - 1e-9 * np.abs(start)).all()
    assert np.allclose(np.einsum("ij,ij->j", c.X, A @ c.X), c.values, rtol=1e-12, atol=1e-12)
    assert ((c.X != 0).sum(axis=0) <= k).all() and np.allclose(np.linalg.norm(c.X, axis=0), 1)
    if not signed:
        assert (c.X >= 0).all()


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 12), st.integers(1, 5), st.sampled_from([1.0, 1e-310, 1e300]))
def test_used_rows_are_the_rows_holding_a_nonzero(seed, n, p, scale):
    """Cov.matvec multiplies only the rows of v that hold a nonzero (any sign, any magnitude,
    subnormal included) when fewer than half of them do."""
    from nspca_core.operators.cov import _used_rows

    rng = np.random.default_rng(seed)
    v = rng.integers(-1, 2, (n, p)) * rng.random((n, p)) * scale
    v[rng.random(n) < 0.6] = 0.0
    rows = np.flatnonzero(v.any(axis=1))
    got = _used_rows(v)
    if rows.size < 0.5 * n:
        assert np.array_equal(got, rows)
    else:
        assert got is None


def test_settled_columns_on_one_support_merge_into_the_best():
    """Columns whose support did not change in the last step and equals another's (same k)
    are dropped in favour of the one of larger value; moving columns and other k stay."""
    from nspca_core._common.ascent import _merge_settled, _merge_weights

    n = 6
    vals = np.zeros((n, 5))
    vals[[0, 2], 0] = [0.6, 0.8]  # support {0, 2}, settled, value 1
    vals[[0, 2], 1] = [0.8, 0.6]  # support {0, 2}, settled, value 3: the one kept
    vals[[0, 2], 2] = [0.7, 0.714]  # support {0, 2} but it moved
    vals[[0, 2], 3] = [0.5, 0.866]  # support {0, 2}, settled, another k
    vals[[1, 2], 4] = [0.6, 0.8]  # another support
    kc = np.full(15, 2)  # k per column id; the active ones are 10..14
    kc[13] = 3
    for compact in (False, True):
        idx = np.zeros((0, 5), dtype=np.intp)
        if compact:
            idx = np.array([[0, 0, 0, 0, 1], [2, 2, 2, 2, 2]])
            vals_c = np.array([vals[idx[:, j], j] for j in range(5)]).T
        alias: list = []
        keep = _merge_settled(idx, vals_c if compact else vals, np.array([True, True, False, True, True]),
                              np.array([1.0, 3.0, 5.0, 2.0, 4.0]), kc,
                              np.arange(10, 15), alias, n, _merge_weights(n), np.ones(5, dtype=bool))
        assert keep.tolist() == [False, True, True, True, True]
        assert alias == [(10, 11)]


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(3, 10))
def test_polish_is_never_below_its_parts(seed, n):
    """polish (ascent, then reweight and ascent while either gains: its docstring) ends at least as high
    as x and as one ascent (both signs) from x, and at least as high as reweighting where that ascent
    ended; feasible.  Not at least as high as reweighting x itself: the ascent leaves x's support first
    (seed 4000, n = 6, k = 2: reweighting x gives 14.06, the polish ends at the ascent's 9.47)."""
    from nspca_core._common.ascent import ascent, project, reweight
    from nspca_core._common.polish import polish
    from nspca_core.operators.cov import Cov

    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n + 3, n))
    cov = Cov(None, B.T @ B)
    k = int(rng.integers(1, n + 1))
    x = project(rng.standard_normal((n, 1)), k)[:, 0]
    xp, fp, _ = polish(cov, x, k)
    r = ascent(cov.matvec, x[:, None], k, both_signs=True, merge=False)
    fa = r.values[0]
    fr = reweight(cov, r.X[:, 0], fa)[1]
    assert fp >= max(fa, fr, cov.quad(x)) * (1 - 1e-12)
    assert np.count_nonzero(xp) <= k and (xp >= 0).all() and np.isclose(np.linalg.norm(xp), 1)
    assert np.isclose(cov.quad(xp), fp, rtol=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 14), st.integers(1, 6), st.booleans())
def test_cov_matvec_through_used_rows_is_the_product(seed, n, p, symmetric):
    """Cov.matvec multiplies only the used rows of v, through the rows of A (A exactly
    symmetric) or of a copy of A^T (a user's covariance, symmetric to 1e-8 only): the
    product is A @ v either way."""
    from nspca_core.operators.cov import Cov

    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n + 2, n))
    A = B.T @ B
    if not symmetric:
        A[0, -1] += 1e-9 * np.abs(A).max()
    v = rng.standard_normal((n, p))
    v[rng.random(n) < 0.8] = 0.0
    cov = Cov(None, A)
    assert np.allclose(cov.matvec(v), A @ v, rtol=1e-12, atol=1e-12 * np.abs(A).max())
    assert np.allclose(cov.matvec(v[:, 0]), A @ v[:, 0], rtol=1e-12, atol=1e-12 * np.abs(A).max())
