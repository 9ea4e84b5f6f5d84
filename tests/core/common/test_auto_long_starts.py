"""Auto's starts on long columns (n >= 1,024, issue 39 target 4, the twenty-seventh round): the projection
of the starts from one mask of the whole matrix (``project_compact``'s one-k path) against the path it
replaced (the columns to select copied out, the feasible ones masked by ``Yp != 0``), float for float, and
the column counts of a Fortran-ordered mask summed as bytes against ``np.count_nonzero``."""

import numpy as np
from hypothesis import given, settings, strategies as st

import nspca_core._common.steps as steps
from nspca_core._common.kth import column_counts
from nspca_core._common.steps import project, project_compact


def _starts(rng, n, q, k, feasible, kind):
    """Starts as auto makes them: signed columns (``A r``), nonnegative ones (tpower's random starts),
    feasible ones (k or fewer positive entries: rank-1 points, a zero or all-negative column)."""
    X0 = rng.standard_normal((n, q))
    if kind == 1:
        X0 = np.round(X0 * 2) / 2  # coarse: ties at the k-th value
    elif kind == 2:
        X0 = np.abs(X0)
    for j in range(min(feasible, q)):
        col = np.zeros(n)
        c = int(rng.integers(0, k + 1)) if j % 3 else k
        col[rng.choice(n, size=c, replace=False)] = rng.random(c) + (0.0 if j % 4 == 3 else 0.1)
        X0[:, j] = col if j % 5 != 4 else -np.abs(X0[:, j])
    return X0


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(1024, 4000), st.integers(2, 40), st.integers(0, 6),
       st.integers(0, 2), st.booleans(), st.data())
def test_long_starts_projected_from_one_mask_are_the_former_points(seed, n, q, feasible, kind, fortran, data):
    rng = np.random.default_rng(seed)
    k = data.draw(st.sampled_from([1, 2, 5, 10, 50, 200, n // 3, n - 1]))
    X0 = _starts(rng, n, q, k, feasible, kind)
    X0 = np.asfortranarray(X0) if fortran else np.ascontiguousarray(X0)
    key = rng.permutation(n)
    kc = k if data.draw(st.booleans()) else np.full(q, k)
    idx, vals = project_compact(X0, kc, key, k)
    try:  # the former path: the selection on copies of the columns with more than k positive entries
        steps._KTH_SAMPLE_MIN_N, kept = 10 ** 9, steps._KTH_SAMPLE_MIN_N
        f_idx, f_vals = project_compact(X0, kc, key, k)
    finally:
        steps._KTH_SAMPLE_MIN_N = kept
    assert np.array_equal(idx, f_idx) and np.array_equal(vals, f_vals)
    D = np.zeros((n + 1, q))
    D[idx, np.arange(q)] = vals
    P = project(np.ascontiguousarray(X0), k, key)
    assert np.array_equal(D[:n] != 0, P != 0)  # the dense projection's supports
    np.testing.assert_allclose(D[:n], P, rtol=1e-14, atol=0)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 3000), st.integers(1, 40), st.floats(0.0, 1.0), st.booleans())
def test_column_counts_of_a_fortran_mask(seed, n, q, density, fortran):
    rng = np.random.default_rng(seed)
    M = rng.random((n, q)) < density
    M = np.asfortranarray(M) if fortran else np.ascontiguousarray(M)
    got = column_counts(M)
    assert got.dtype == np.intp and np.array_equal(got, np.count_nonzero(M, axis=0))
    assert np.array_equal(column_counts(M[:, ::2]), np.count_nonzero(M[:, ::2], axis=0))  # neither layout
