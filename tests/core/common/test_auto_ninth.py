"""auto at tpower's price (issue 39 item 4, ninth round): the bookkeeping of the batched ascent made
cheaper without changing a float.  Each helper is checked against the expression it replaces, on
random and tied inputs."""

import numpy as np
from hypothesis import given, settings, strategies as st

from nspca_core._common.screen import _used_rows


def _compact(seed, n, q, width, zeros):
    """Compact columns as the ascent holds them: increasing indices, then padding (index n, value 0);
    ``zeros``: some kept entries with value 0 (left out of the rows used)."""
    rng = np.random.default_rng(seed)
    ia = np.full((width, q), n, dtype=np.intp)
    va = np.zeros((width, q))
    for j in range(q):
        c = int(rng.integers(0, width + 1))
        idx = np.sort(rng.choice(n, size=min(c, n), replace=False))
        ia[:idx.size, j] = idx
        va[:idx.size, j] = rng.uniform(0.1, 1.0, idx.size)
        if zeros and idx.size:
            va[:idx.size, j][rng.random(idx.size) < 0.3] = 0.0
    return ia, va


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 300), st.integers(0, 12), st.integers(1, 20), st.booleans())
def test_used_rows_is_the_unique_of_the_nonzero_indices(seed, n, q, width, zeros):
    ia, va = _compact(seed, n, q, width, zeros)
    got = _used_rows(ia, va, n)
    expect = np.unique(ia[(ia < n) & (va != 0)])
    assert got.dtype == expect.dtype and np.array_equal(got, expect)
