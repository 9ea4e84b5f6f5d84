"""auto's exact k = 2 on sparse data (issue 39 item 4, session 5): only the pairs whose variances can
reach the feasible value are formed, against every pair enumerated here (the same floats, the same
pair) and against brute force on the dense covariance."""

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

from nspca_core.operators.covariance import as_cov
from nspca_core._common.pairs import opt_pairs


def _every_pair(cov):
    """Every pair's closed form from the columns ``A e_i`` (what opt_pairs computed for an operator
    before): the largest value above the largest variance, the first such pair in row-major order."""
    n = cov.n
    dg = cov.diag()
    A = cov.matvec(np.eye(n)).T  # row i: A e_i
    best, arg = float(dg.max()), None
    for i in range(n):
        for j in range(n):
            c = A[i, j]
            if i == j or not c > 0:
                continue
            a, b = dg[i], dg[j]
            h = 0.5 * (a - b)
            v = 0.5 * (a + b) + np.sqrt(h * h + c * c)
            if v > best:
                best, arg = float(v), (i, j)
    return best, arg


def _data(rng, m, n, dominant, density):
    X = sp.random(m, n, density=density, format="csr", random_state=rng,
                  data_rvs=lambda s: rng.integers(1, 4, s).astype(float))
    if dominant:  # one word in most documents with large counts: its pairs alone can win
        X = X.tolil()
        X[:, 0] = rng.integers(0, 12, (m, 1)).astype(float)
        X = X.tocsr()
    return X


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(5, 60), st.integers(2, 25), st.booleans(),
       st.sampled_from([0.05, 0.2, 0.5]), st.floats(0.0, 1.0))
def test_sparse_pairs_are_every_pairs_answer(seed, m, n, dominant, density, frac):
    rng = np.random.default_rng(seed)
    X = _data(rng, m, n, dominant, density)
    cov = as_cov(X)
    assert type(cov).__name__ == "SparseCov"
    ref_best, ref_arg = _every_pair(cov)
    # a feasible value as auto has one: anywhere between the largest variance and the optimum
    amax = float(cov.diag().max())
    lower = amax + frac * max(ref_best - amax, 0.0)
    best, x = opt_pairs(cov, 2, lower=lower)
    assert best == ref_best
    if ref_arg is None:
        assert np.count_nonzero(x) == 1 and x[int(np.argmax(cov.diag()))] == 1.0
    else:
        assert set(np.flatnonzero(x)) <= set(ref_arg)
        same, _ = opt_pairs(as_cov(X), 2)  # lower = 0: every pair, the unpruned loop
        assert same == best
    # brute force on the dense covariance: max x^T A x over nonnegative unit x on singles and pairs
    # (a grid of angles on each pair, refined around its best)
    Xc = X.toarray() - X.toarray().mean(axis=0)
    A = Xc.T @ Xc / m
    th = np.linspace(0.0, np.pi / 2, 2001)
    brute = max(A[i, i] for i in range(n))
    for i in range(n):
        for j in range(i + 1, n):
            f = A[i, i] * np.cos(th) ** 2 + A[j, j] * np.sin(th) ** 2 + 2 * A[i, j] * np.cos(th) * np.sin(th)
            t0 = th[int(np.argmax(f))]
            fine = np.clip(np.linspace(t0 - 1e-3, t0 + 1e-3, 2001), 0.0, np.pi / 2)
            g = A[i, i] * np.cos(fine) ** 2 + A[j, j] * np.sin(fine) ** 2 + 2 * A[i, j] * np.cos(fine) * np.sin(fine)
            brute = max(brute, float(g.max()))
    assert brute <= best * (1 + 1e-9) + 1e-12 and best - brute <= 1e-6 * max(1.0, abs(brute))
    assert np.isclose(float(x @ A @ x), best, rtol=1e-9, atol=1e-12)


def test_sparse_pairs_form_one_row_when_one_variance_dominates():
    """With one dominant feature only its row of A is formed (fails when every row is)."""
    rng = np.random.default_rng(1)
    X = _data(rng, 200, 40, True, 0.05)
    cov = as_cov(X)
    calls = []
    orig = cov.matvec

    def counted(v):
        calls.append(v.shape[1] if v.ndim == 2 else 1)
        return orig(v)

    cov.matvec = counted
    amax = float(cov.diag().max())
    best, _ = opt_pairs(cov, 2, lower=amax * (1 + 1e-6))
    assert sum(calls) == 1
    assert best == _every_pair(as_cov(X))[0]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(3, 80), st.integers(4, 120), st.integers(1, 8), st.integers(1, 6),
       st.booleans())
def test_sparse_rows_product_is_the_operators(seed, m, n, q, k, signed):
    """auto's ascent product through the columns on the iterates' rows: the floats of cov.matvec (CSR
    data with negative entries too), a float64 (n, q) argument with at most k nonzeros per column."""
    from nspca_core.solve import _SparseRows

    rng = np.random.default_rng(seed)
    X = _data(rng, m, n, bool(seed % 2), 0.2)
    if signed:
        X.data = X.data * rng.choice([-1.0, 1.0], X.data.size)
    cov = as_cov(X)
    assert (_SparseRows.of(cov, k) is None) == (16 * k > n)  # used where the supports are few of n
    R = _SparseRows(cov)
    W = np.zeros((n, q))
    for j in range(q):
        W[rng.choice(n, min(k, n), replace=False), j] = rng.standard_normal(min(k, n))
    np.testing.assert_array_equal(R(W), cov.matvec(W))
    np.testing.assert_array_equal(R(W[:, :1]), cov.matvec(W[:, :1]))
    if min(k, n) <= n // 4:  # one column's rows within n / 4: the product went through the columns
        assert R.Xc is not None
    assert _SparseRows.of(as_cov(X.tocsc()), 1) is None  # other layouts keep the operator's own product
