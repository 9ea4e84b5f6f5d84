"""SparseCov.submatrix read from the held covariance (issue 39, corpus16): where dense() formed A with every block
pair of X^T X exactly symmetric, A's rows and columns are the very floats the sparse product of the selected
columns gives (so the split route on the held A is unchanged, float for float); elsewhere the product as before."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core.operators import sparse as SP
from nspca_core.operators.sparse import as_sparse_cov


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), m=st.integers(2, 60), n=st.integers(2, 300), center=st.booleans(),
       fmt=st.sampled_from(["csr", "csc"]), dtype=st.sampled_from([np.float64, np.float32]),
       csc_first=st.booleans())
def test_held_rows_are_the_products_floats(seed, m, n, center, fmt, dtype, csc_first):
    rng = np.random.default_rng(seed)
    D = rng.poisson(2.0, (m, n)) * (rng.random((m, n)) < 0.3) * rng.choice([1.0, 0.37, 13.0], n)
    X = sp.csr_matrix(D.astype(dtype)).asformat(fmt)
    ref, held = as_sparse_cov(X, center), as_sparse_cov(X, center)
    if csc_first:
        ref.csc()
    held.dense()
    assert held._A_rows  # (a sparse X^T X sums each pair in the same document order)
    for idx in (np.arange(n), np.sort(rng.choice(n, max(1, n // 3), replace=False)),
                rng.permutation(n)[: max(1, n // 2)]):
        a, b = ref.submatrix(idx), held.submatrix(idx)
        assert a.dtype == b.dtype and np.array_equal(a, b)


def test_symmetrized_a_not_read(monkeypatch):
    """Where a block pair was averaged (not exactly symmetric), submatrix computes its product as before."""
    X = sp.csr_matrix(np.random.default_rng(0).poisson(2.0, (30, 12)).astype(float))
    cov = as_sparse_cov(X)
    seen = {}
    SP.centered_gram(np.array([[1.0, 2.0], [2.0 + 1e-9, 1.0]]), 3, np.zeros(2), seen)
    assert seen["symmetric"] is False
    real = SP.centered_gram

    def averaged(G, m, mean, seen=None):
        out = real(G, m, mean, seen)
        if seen is not None:
            seen["symmetric"] = False
        return out

    monkeypatch.setattr(SP, "centered_gram", averaged)
    A = cov.dense()
    A[0, 1] = A[1, 0] = 1e9  # (a held A that is not read: the product's floats come back)
    assert not cov._A_rows
    assert cov.submatrix(np.array([0, 1]))[0, 1] != 1e9
