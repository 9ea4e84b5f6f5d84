"""The sparse operator's kept CSC copy (issue 39 item 4, session 10): auto's ascent products and the
polish's support Gram matrices read it, and must give the floats of the CSR paths they replace."""

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

from nspca_core.operators.covariance import as_cov
from nspca_core.operators.sparse import SparseCov


def _data(rng, m, n, density, signed):
    X = sp.random(m, n, density=density, format="csr", random_state=rng,
                  data_rvs=lambda s: rng.integers(1, 6, s).astype(float) * rng.random(s))
    if signed:
        X.data = X.data * rng.choice([-1.0, 1.0], X.data.size)
    return X


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 60), st.integers(2, 90), st.floats(0.02, 0.6), st.booleans())
def test_csc_copy_is_the_data_in_column_order(seed, m, n, density, signed):
    """csc(): the same matrix, sorted within columns, made once (the same object after)."""
    rng = np.random.default_rng(seed)
    X = _data(rng, m, n, density, signed)
    cov = as_cov(X)
    assert type(cov) is SparseCov
    Xc = cov.csc()
    assert Xc.format == "csc" and Xc.has_sorted_indices
    assert cov.csc() is Xc
    np.testing.assert_array_equal(Xc.toarray(), X.toarray())
    assert cov.X_sparse is X and X.format == "csr"  # the data as given is not converted


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 60), st.integers(2, 90), st.floats(0.02, 0.6), st.booleans(),
       st.integers(1, 30), st.booleans())
def test_submatrix_from_the_csc_copy_is_the_same_floats(seed, m, n, density, signed, size, shuffled):
    """submatrix(J) with the CSC copy made equals, float for float, submatrix(J) from the CSR column
    slice (a fresh operator that never made the copy), and the dense covariance's block to rounding;
    an index that does not increase keeps the CSR slice."""
    rng = np.random.default_rng(seed)
    X = _data(rng, m, n, density, signed)
    J = np.sort(rng.choice(n, min(size, n), replace=False))
    if shuffled:
        J = rng.permutation(J)
    plain = as_cov(X).submatrix(J)
    cov = as_cov(X)
    cov.csc()
    got = cov.submatrix(J)
    np.testing.assert_array_equal(got, plain)
    D = X.toarray()
    Dc = D - D.mean(axis=0)
    ref = Dc[:, J].T @ Dc[:, J] / m  # the obviously correct covariance block
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-9 * max(1.0, float(np.abs(ref).max())))
