"""The row-sum bound of sparse data computed row by row (nspca_core.certificates.sparse_rows):
an upper bound on brute force whatever stops it, the dense row-sum bound when it runs to its end,
and what certify gives sparse data above the dense size."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core import certify
from nspca_core.certificates.sparse_rows import sparse_rowsum_bound
from nspca_core.operators.sparse import as_sparse_cov
from nspca_core.operators.weighted import weighted_sparse_cov
from tests.bruteforce import brute_opt


def exact_cov(D: np.ndarray, center: bool) -> np.ndarray:
    """The covariance ``X^T X / m - mu mu^T`` of integer counts in exact rational arithmetic, then
    rounded once (the reference the bound must not fall below)."""
    m, n = D.shape
    cols = [[Fraction(int(v)) for v in D[:, j]] for j in range(n)]
    mu = [sum(c) / m if center else Fraction(0) for c in cols]
    return np.array([[float(sum(a * b for a, b in zip(cols[i], cols[j])) / m - mu[i] * mu[j])
                      for j in range(n)] for i in range(n)])


def rowsum_reference(A: np.ndarray, k: int) -> float:
    P = np.sort(np.maximum(A, 0.0), axis=1)[:, ::-1]
    return float(P[:, :k].sum(axis=1).max())


@st.composite
def counts(draw):
    m = draw(st.integers(2, 10))
    n = draw(st.integers(2, 7))
    density = draw(st.floats(0.1, 0.9))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    D = rng.poisson(draw(st.floats(0.5, 20.0)), (m, n)) * (rng.random((m, n)) < density)
    D[:, rng.integers(n)] *= draw(st.sampled_from([1, 1000, 10**6]))  # a word far more frequent
    return D.astype(np.int64)


@settings(max_examples=80, deadline=None)
@given(D=counts(), center=st.booleans(), fmt=st.sampled_from(["csr", "csc"]),
       dtype=st.sampled_from([np.float64, np.float32]), k=st.integers(1, 7), cap=st.sampled_from([None, 0.0, 50.0]))
def test_bound_at_least_brute_force(D, center, fmt, dtype, k, cap):
    """Above the exact optimum however the rows stop (all rows, the screen, or the work cap at once)."""
    k = min(k, D.shape[1])
    X = sp.csr_matrix(D.astype(dtype)).asformat(fmt)
    bound, did = sparse_rowsum_bound(as_sparse_cov(X, center=center), k, work_cap=cap)
    A = exact_cov(D, center)
    opt, _ = brute_opt(A, k)
    assert bound >= opt * (1 - 1e-12) - 1e-300
    assert bound >= rowsum_reference(A, k) * (1 - 1e-12), did  # no row that can bind was skipped
    if did["stopped"] != "cap":  # every row that can bind was computed: the dense row-sum bound
        # (the rounding allowances scale with the second moments: a constant column has A = 0 and a bound of ~1e-13)
        second = float((D.astype(np.float64) ** 2).mean(axis=0).max())
        scale = max(float(np.max(np.abs(A))), second, 1e-300) * k
        assert bound <= rowsum_reference(A, k) + 1e-9 * scale


def test_screen_skips_rows_that_cannot_bind():
    """A Zipf vocabulary: the screen stops before the last row, with the dense bound's value."""
    rng = np.random.default_rng(0)
    m, n = 400, 1200
    p = 1.0 / np.arange(1, n + 1) ** 1.2
    D = rng.poisson(60 * p / p.sum(), (m, n))
    cov = as_sparse_cov(sp.csr_matrix(D.astype(float)))
    bound, did = sparse_rowsum_bound(cov, 5, work_cap=np.inf)
    assert did["stopped"] == "screen" and did["rows"] < n
    A = cov.dense()
    assert bound == pytest.approx(rowsum_reference(A, 5), rel=1e-10)


def test_only_plain_sparse_covariances():
    X = sp.random(20, 10, density=0.3, random_state=0, format="csr")
    assert sparse_rowsum_bound(weighted_sparse_cov(X, np.linspace(1, 2, 20)), 3) is None


def test_certify_sparse_above_the_dense_size():
    """Sparse counts with more features than the dense certificate takes: the row-sum bound decides,
    proved (not probabilistic), tighter than lambda_1 at small k and above the answer."""
    rng = np.random.default_rng(1)
    m, n = 300, 2600
    p = 1.0 / np.arange(1, n + 1) ** 1.1
    T = rng.dirichlet(np.full(n, 0.05), 4) * 0.5 + p / p.sum() * 0.5
    D = np.stack([rng.multinomial(60, T[rng.integers(4)]) for _ in range(m)])
    X = sp.csr_matrix(D.astype(float))
    c = certify(X, k=3)
    assert c.kind == "rowsum" and not c.probabilistic
    assert c.bounds["rowsum"] < c.bounds["lambda1"]
    assert c.lower <= c.upper_bound and 0 < c.ratio <= 1


@settings(max_examples=60, deadline=None)
@given(D=counts(), center=st.booleans(), k=st.integers(1, 7), share=st.sampled_from([0.0, 0.3, 0.9, 1.0, 2.0]))
def test_enough_stops_above_brute_force(D, center, k, share):
    """A caller's ``enough`` (a share of the optimum, or of the full bound): above the exact optimum however early it
    stops, above ``enough`` when it stopped there, and the full bound itself when it did not stop."""
    k = min(k, D.shape[1])
    cov = as_sparse_cov(sp.csr_matrix(D.astype(np.float64)), center=center)
    full, _ = sparse_rowsum_bound(cov, k)
    A = exact_cov(D, center)
    opt, _ = brute_opt(A, k)
    enough = share * full
    bound, did = sparse_rowsum_bound(cov, k, enough=enough)
    assert bound >= opt * (1 - 1e-12) - 1e-300
    if did["stopped"] == "enough":
        assert bound >= enough
    else:
        assert bound == full, did


def test_enough_spares_the_rows_of_a_zipf_vocabulary():
    """A bound far above what the caller holds stops after the first small batch (8 rows), above the caller's
    (a flatter vocabulary than the screen's test: there the screen alone stops after 256 rows)."""
    rng = np.random.default_rng(0)
    m, n = 400, 1200
    p = 1.0 / np.arange(1, n + 1) ** 0.8
    D = rng.poisson(60 * p / p.sum(), (m, n))
    cov = as_sparse_cov(sp.csr_matrix(D.astype(float)))
    full, every = sparse_rowsum_bound(cov, 5, work_cap=np.inf)
    bound, did = sparse_rowsum_bound(cov, 5, work_cap=np.inf, enough=0.5 * full)
    assert did["stopped"] == "enough" and did["rows"] == 8 < every["rows"]
    assert bound >= 0.5 * full
