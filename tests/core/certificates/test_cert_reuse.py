"""Issue 39 (one-k certificate within 3x the answer): what the certificate now reuses or computes
more cheaply, each against what it replaces or against brute force.

- the covariance ``fit`` formed of the same data (``operators.cov.gram``): reused only for data equal
  entry for entry, and then the same floats; any other data get their own;
- sparse data's centered covariance formed in place by blocks (``operators.sparse.centered_gram``):
  the same floats as ``0.5 (A + A^T)``, ``A = G / m - mean mean^T``;
- ``lambda1_proved`` with its Lanczos run through another operator (sparse data's) and its ``need``:
  every bound it returns is above the top eigenvalue (brute force), whatever the operator says;
- the one-k certificate of sparse data by lambda_1 alone against brute force.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nspca_core as nc
from nspca_core import certify
from nspca_core.certificates import cheap
from nspca_core.certificates import single as single_mod
from nspca_core.operators import cov as cov_mod
from nspca_core.operators import sparse as sparse_mod
from nspca_core.operators.covariance import as_cov
from tests.bruteforce import brute_opt

REL = 1e-9
SLOW = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _data(seed: int, m: int, n: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.abs(rng.standard_normal((m, 2))) @ np.abs(rng.standard_normal((2, n))) \
        + 0.3 * rng.standard_normal((m, n))


@pytest.fixture(autouse=True)
def _no_kept_gram():
    cov_mod._gram_kept.clear()
    yield
    cov_mod._gram_kept.clear()


def _same_certificate(a, b):
    assert a.bounds == b.bounds and a.upper_bound == b.upper_bound and a.lower == b.lower


@settings(max_examples=25, **SLOW)
@given(seed=st.integers(0, 10_000), m=st.integers(12, 40), n=st.integers(3, 9), k=st.integers(1, 4),
       change=st.sampled_from([None, "entry", "row"]))
def test_certificate_after_fit_is_the_one_without_it(seed, m, n, k, change):
    """certify(X) after fit(X') is, float for float, certify(X) with nothing kept — for X' = X (the
    kept covariance is reused) and for X' differing in one entry or one row (it must not be)."""
    X = _data(seed, m, n)
    k = min(k, n)
    Xfit = X.copy()
    if change == "entry":
        Xfit[seed % m, seed % n] += 1e-12 * (1.0 + abs(Xfit[seed % m, seed % n]))
    elif change == "row":
        Xfit[-1] = Xfit[0]
    r = nc.fit(Xfit, k=k, certify=False)
    assert cov_mod._gram_kept, "fit kept no covariance"
    after_fit = certify(X, k=k, x=r.x)
    cov_mod._gram_kept.clear()
    alone = certify(X, k=k, x=r.x)
    _same_certificate(after_fit, alone)
    opt, _ = brute_opt(as_cov(X).dense(), k)
    assert after_fit.upper_bound >= opt - REL * max(1.0, opt)


def test_kept_covariance_is_taken_only_for_equal_data(monkeypatch):
    """The reuse is real (a poisoned kept covariance shows up) and guarded: equal data take it,
    data differing in the last entry do not, nor does an operator that did not ask (a second fit)."""
    X = _data(1, 30, 6)
    cov = as_cov(X)
    A = cov.dense()
    K, _ = cov_mod._gram_kept[0]
    assert K is cov.X
    poison = A + 1.0
    cov_mod._gram_kept[:] = [(K, poison)]
    asking = as_cov(X)
    asking.reuse_gram = True
    assert np.array_equal(asking.dense(), poison)  # taken (a fresh centered copy, equal entries)
    other = X.copy()
    other[-1, -1] += 1e-9
    asking = as_cov(other)
    asking.reuse_gram = True
    assert not np.array_equal(asking.dense(), poison)
    assert np.array_equal(as_cov(X).dense(), A)  # not asking: computed


def test_caller_arrays_are_never_kept():
    """Data the caller holds (already centered, or center=False) are not kept: the caller may change
    them in place between calls."""
    X = _data(2, 25, 5)
    Xc = X - X.mean(axis=0)
    as_cov(Xc).dense()
    as_cov(X, center=False).dense()
    assert not cov_mod._gram_kept
    as_cov(X).dense()
    assert len(cov_mod._gram_kept) == 1 and cov_mod._gram_kept[0][0] is not X


def _sparse_counts(seed: int, m: int, n: int, density: float):
    rng = np.random.default_rng(seed)
    M = sp.random(m, n, density=density, random_state=rng, format="csr",
                  data_rvs=lambda s: rng.integers(1, 6, s).astype(float))
    return M


@settings(max_examples=40, **SLOW)
@given(seed=st.integers(0, 10_000), m=st.integers(2, 60), n=st.integers(1, 40),
       density=st.sampled_from([0.05, 0.3, 0.9]), block=st.sampled_from([1, 3, 7, 128]))
def test_centered_gram_is_the_expression_it_replaces(monkeypatch, seed, m, n, density, block):
    monkeypatch.setattr(sparse_mod, "_GRAM_BLOCK", block)
    X = _sparse_counts(seed, m, n, density)
    cov = as_cov(X)
    G = (X.T @ X).toarray()
    A = G / m - np.outer(cov.mean, cov.mean)
    expected = 0.5 * (A + A.T)
    got = cov.dense()
    assert np.array_equal(got, expected)
    assert np.array_equal(got, got.T)


@settings(max_examples=40, **SLOW)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 30), block=st.sampled_from([1, 3, 7, 128]),
       bumps=st.integers(0, 3), big=st.booleans())
def test_centered_gram_on_a_gram_not_exactly_symmetric(monkeypatch, seed, n, block, bumps, big):
    """A G whose mirrored entries differ in a few places (the blocks formed twice there) or nowhere (once):
    the same floats as ``0.5 (A + A^T)`` either way."""
    monkeypatch.setattr(sparse_mod, "_GRAM_BLOCK", block)
    rng = np.random.default_rng(seed)
    Y = rng.standard_normal((n + 2, n)) * (1e8 if big else 1.0)
    G = Y.T @ Y
    G = np.triu(G) + np.triu(G, 1).T  # exactly symmetric
    for _ in range(bumps if n > 1 else 0):
        i, j = rng.integers(0, n, 2)
        G[i, j] = np.nextafter(G[i, j], np.inf) * (1.0 + rng.random() * 1e-3)
    m, mean = int(rng.integers(1, 50)), rng.standard_normal(n)
    A = G / m - np.outer(mean, mean)
    expected = 0.5 * (A + A.T)
    got = sparse_mod.centered_gram(G.copy(), m, mean)
    assert np.array_equal(got, expected)


def _psd(seed: int, n: int, rank: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    Y = rng.standard_normal((rank, n))
    if seed % 2:
        Y = np.abs(Y)
    return Y.T @ Y


@settings(max_examples=60, **SLOW)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 9), rank=st.integers(1, 9),
       op=st.sampled_from(["same", "rounded", "other"]), need=st.sampled_from([None, 0.5, 1.0, 2.0]))
def test_lambda1_proved_through_another_operator_is_above_the_top(seed, n, rank, op, need):
    """Whatever the Lanczos run's operator (A, A up to rounding, another matrix altogether), a bound
    returned is >= lambda_max(A) (brute force) and >= the value it reports; ``need`` only declines."""
    A = _psd(seed, n, rank)
    lam = float(np.linalg.eigvalsh(A)[-1])
    B = {"same": A, "rounded": A * (1 + 1e-15), "other": _psd(seed + 1, n, rank) * 0.5}[op]
    out = cheap.lambda1_proved(A, matvec=lambda v: B @ v, need=None if need is None else need * lam)
    if out is None:
        return
    bound, estimate = out
    assert bound >= lam - REL * max(1.0, lam)
    assert bound >= estimate
    if need is not None:  # returned only where the Lanczos value was within what the caller needs
        assert estimate <= need * lam * (1 + 1e-12) or estimate <= 0


def test_lambda1_proved_declines_above_need():
    A = _psd(5, 6, 6)
    lam = float(np.linalg.eigvalsh(A)[-1])
    assert cheap.lambda1_proved(A, need=0.9 * lam) is None
    out = cheap.lambda1_proved(A, need=1.1 * lam)
    assert out is not None and out[0] >= lam


@settings(max_examples=30, **SLOW)
@given(seed=st.integers(0, 10_000), m=st.integers(8, 40), n=st.integers(2, 8), k=st.integers(1, 5),
       density=st.sampled_from([0.3, 0.7]))
def test_sparse_certificate_by_lambda1_is_above_bruteforce(monkeypatch, seed, m, n, k, density):
    """Sparse data through the shortcut (forced at tiny n: Lanczos through the sparse operator, the
    proof on the dense covariance) against brute force on that covariance."""
    monkeypatch.setattr(single_mod, "_LANCZOS_MIN_N", 1)
    monkeypatch.setattr(single_mod, "_sparse_products", lambda cov: True)  # (at any size here)
    X = _sparse_counts(seed, m, n, density)
    A = as_cov(X).dense()
    if not np.any(A):
        return
    k = min(k, n)
    opt, xo = brute_opt(A, k)
    c = certify(X, k=k, x=xo)
    scale = max(1.0, float(np.abs(A).max()))
    assert c.upper_bound >= opt - REL * scale
    for val in c.bounds.values():
        assert val >= opt - REL * scale


def test_sparse_products_rule():
    """Products through sparse data only where two passes over its nonzeros cost less than A's n^2."""
    thin = _sparse_counts(0, 50, 40, 0.05)
    full = _sparse_counts(0, 50, 40, 0.9)
    assert single_mod._sparse_products(as_cov(thin))
    assert not single_mod._sparse_products(as_cov(full))
    assert not single_mod._sparse_products(as_cov(_data(0, 50, 40)))


def _rowsum_unpruned(B: np.ndarray, k: int) -> float:
    """_rowsum_topk as it was: every row's k largest positive entries selected and summed."""
    P = np.maximum(B, 0.0)
    n = P.shape[1]
    if k < n:
        P = np.partition(P, n - k, axis=1)[:, n - k:]
    return float(P.sum(axis=1).max())


@settings(max_examples=80, **SLOW)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 60), k=st.integers(1, 60), first=st.sampled_from([1, 4, 16]),
       kind=st.sampled_from(["normal", "ties", "spiky", "psd"]))
def test_rowsum_topk_pruned_is_the_unpruned_float(monkeypatch, seed, n, k, first, kind):
    """The pruned row sums (rows whose whole positive sum cannot reach the best k-sum skipped) give
    the float of selecting and summing every row, and are >= the brute-force k-sum of each row."""
    from nspca_core.certificates import bounds

    monkeypatch.setattr(bounds, "_ROWSUM_FIRST", first)
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n, n))
    if kind == "ties":
        B = np.round(B * 2) / 2
    elif kind == "spiky":
        B = B * (rng.random((n, n)) < 0.1) * 1e6
    elif kind == "psd":
        B = B @ B.T - np.outer(B[0], B[0])
    k = min(k, n)
    got = bounds._rowsum_topk(B, k)
    assert got == _rowsum_unpruned(B, k)
    brute = max(sum(sorted(np.maximum(row, 0.0), reverse=True)[:k]) for row in B)
    assert got >= brute * (1 - 1e-12) - 1e-300
