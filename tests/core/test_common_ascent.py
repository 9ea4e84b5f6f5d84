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
