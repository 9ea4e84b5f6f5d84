"""auto's exploration in float32 (issue 39 item 4): the single-precision products against float64 ones,
the screen on them keeping every row of a top k, the polish from each support's limit, and auto with
the float32 exploration switched on at every size still never below the shipped methods it includes."""

from unittest import mock

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

from nspca_core import solve
from nspca_core._common.ascent import Screen, ascent, cov_key, reweight
from nspca_core._common.polish import polish_many
from nspca_core._common.screen import SingleProducts
from nspca_core._common.steps import _to_compact, project
from nspca_core.operators.cov import Cov
from tests.bruteforce import brute_opt

# float32 products: each entry within this much of the float64 one, relative to (|X|^T |X| |x|)_i / m (thin)
# or |A_i| |x| (dense), the scale of its rounding (c u, u = 2^-24, c the length of the sums)
_REL = 1e-4


def _data(seed, m, n, low_rank=False):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n)) * rng.uniform(0.2, 3.0, n)
    if low_rank:
        X = 0.05 * X + rng.standard_normal((m, 3)) @ (rng.standard_normal((3, n)) * rng.uniform(0.1, 3.0, n))
    return X - X.mean(axis=0)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 60), st.integers(5, 400), st.integers(1, 8), st.booleans(),
       st.booleans())
@example(seed=1185, m=2, n=150, q=6, thin=True, sparse=True)  # X W cancels: two centered samples
def test_single_products_are_the_float64_products_to_float32_rounding(seed, m, n, q, thin, sparse):
    """Every entry of ``SingleProducts(cov)(W)``, of one column alone and of the products restricted to rows,
    is the float64 product's up to the rounding of float32 sums."""
    rng = np.random.default_rng(seed)
    X = _data(seed, m, n)
    cov = Cov(X, None) if thin else Cov(None, X.T @ X / m)
    W = rng.standard_normal((n, q))
    if sparse:
        W[rng.random((n, q)) < 0.8] = 0.0
    sp = SingleProducts(cov)
    Y, ref = sp(W), cov.matvec(W)
    assert Y.dtype == np.float64 and Y.shape == (n, q)
    A = X.T @ X / m
    # the scale of float32 rounding: thin, |X|^T (|X| |W|) / m elementwise (X W's sums may cancel: m = 2,
    # n = 150, seed 1185 left an entry 1.3e-4 of |X_i| |X w| / m off); dense, |A_i| |w|
    scale = np.abs(X).T @ (np.abs(X) @ np.abs(W)) / m if thin \
        else np.linalg.norm(A, axis=1)[:, None] * np.linalg.norm(W, axis=0)[None, :]
    assert np.all(np.abs(Y - ref) <= _REL * scale + 1e-300)
    rows = np.flatnonzero(np.abs(W).sum(axis=1))
    U = np.sort(rng.choice(n, max(1, n // 3), replace=False))
    YU = sp.rows_of(U, rows, W[rows])  # the rows U only (other shapes of sums: other float32 rounding)
    assert YU.shape == (U.size, q) and np.all(np.abs(YU - ref[U]) <= _REL * scale[U] + 1e-300)
    y0 = sp(W[:, 0])  # one column alone (a matrix-vector product: other rounding than in the batch)
    assert y0.shape == (n,) and np.all(np.abs(y0 - ref[:, 0]) <= _REL * scale[:, 0] + 1e-300)


def test_single_products_only_for_plain_operators_of_enough_features():
    from nspca_core.operators.cov import ProjectedCov

    X = _data(0, 10, 40)
    cov = Cov(X, None)
    assert SingleProducts.applies(cov, 40) and not SingleProducts.applies(cov, 41)
    assert not SingleProducts.applies(ProjectedCov(cov, np.eye(40)[0]), 1)


_restricted: list = []  # columns the screen restricted to rows, per example


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([5, 20, 60]), st.booleans())
def test_screen_on_single_products_keeps_every_row_of_the_top_k(seed, k, thin):
    """With float32 products the screen still restricts a column only to rows U holding its k largest
    entries of the exact product (beyond the float32 rounding of a tie), and its entries on U are the
    float32 products of those rows."""
    n = 1200
    X = _data(seed, 25 if thin else 1500, n, low_rank=True)
    cov = Cov(X, None) if thin else Cov(None, X.T @ X / X.shape[0])
    V, eig = cov.factor(3)
    key = cov_key(cov)
    X0 = solve._auto_starts(cov, V, k, key, seed)[1][:, :8]
    Xk = ascent(cov.matvec, X0, k, key=key, max_iter=2).X
    ia, va = _to_compact(Xk, k)
    sp = SingleProducts(cov)
    screen = Screen(cov, V, eig[0], sp)
    screen.min_work, screen.single_share = 0, 0.0  # the bound on every column it can take
    v, parts = screen.products(ia, va, np.full(ia.shape[1], k), n)
    Y = cov.matvec(Xk)
    Y32 = sp(Xk)
    assert np.allclose(v, np.einsum("ij,ij->j", Xk, Y), rtol=1e-5)
    assert np.array_equal(np.sort(np.concatenate([g for g, _, _ in parts])), np.arange(Xk.shape[1]))
    restricted = 0
    for g, U, Yg in parts:
        rows = np.arange(n) if U is None else U
        assert np.allclose(Yg, Y32[rows][:, g], rtol=1e-5, atol=1e-6 * np.abs(Y).max())
        if U is None:
            continue
        restricted += g.size
        kth = -np.sort(-Y[:, g], axis=0)[k - 1]
        outside = np.setdiff1d(np.arange(n), U)
        assert np.all(Y[outside][:, g] < kth * (1 + 1e-6) + 1e-12 * np.abs(Y).max())
    _restricted.append(restricted)


def test_screen_on_single_products_restricted_some_columns():
    """The property above saw restricted columns (it cannot pass vacuously)."""
    if not _restricted:
        test_screen_on_single_products_keeps_every_row_of_the_top_k()
    assert sum(_restricted) > 0


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(5, 40), st.integers(3, 30), st.data())
def test_polish_from_the_support_limit(seed, n, m, data):
    """``reweight_first``: each column feasible, its value that of its point, never below its start nor
    below the start reweighted (the best point on the start's support, when one-signed)."""
    rng = np.random.default_rng(seed)
    X = _data(seed, m, n)
    cov = Cov(X, None)
    k = data.draw(st.integers(1, n))
    X0 = project(np.abs(rng.standard_normal((n, 3))), k)
    P, f, _ = polish_many(cov, X0, k, reweight_first=True)
    for j in range(3):
        x = P[:, j]
        assert np.all(x >= 0) and np.count_nonzero(x) <= k and np.isclose(np.linalg.norm(x), 1.0)
        assert f[j] == pytest.approx(cov.quad(x), rel=1e-12)
        f0 = cov.quad(X0[:, j])
        assert f[j] >= f0 * (1 - 1e-12)
        assert f[j] >= reweight(cov, X0[:, j], f0)[1] * (1 - 1e-12)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(4, 30), st.integers(3, 40), st.data())
def test_auto_exploring_in_float32_never_below_the_methods_it_includes(seed, n, m, data):
    """The float32 exploration switched on at every size (it runs from 256 features): auto's variance is
    still at least tpower's, em's, the spannogram's and enet's (same d, eps, seed), its point feasible and
    its variance that point's, never above the brute-force optimum."""
    k = data.draw(st.integers(1, n))
    X = _data(seed, m, n, low_rank=seed % 2 == 0)
    cov = Cov(X, None) if seed % 3 else Cov(None, X.T @ X / m)
    d = min(3, n)
    with mock.patch.object(solve, "_AUTO_SINGLE_MIN_N", 1):
        auto = solve.fit_cov(cov, k, "auto", d, 0.1, seed, None, {})
    assert np.all(auto.x >= 0) and np.count_nonzero(auto.x) <= k
    assert auto.variance == pytest.approx(cov.quad(auto.x), rel=1e-12)
    for method in ("tpower", "em", "spannogram", "enet"):
        other = solve.fit_cov(cov, k, method, d, 0.1, seed, None, {})
        assert auto.variance >= other.variance * (1 - 1e-12), (method, auto.variance, other.variance)
    if n <= 12:
        assert auto.variance <= brute_opt(X.T @ X / m, k)[0] * (1 + 1e-9)


@pytest.mark.parametrize("k", [3, 10, 40])
def test_auto_on_wide_data_explores_in_float32_and_reaches_tpower_and_em(k):
    """On 1,500 features (compact iterates, the screen on float32 products, the jumps, the polish from the
    support's limit) auto is at least tpower and em, and its answer is a float64 point."""
    X = _data(5, 20, 1500, low_rank=True)
    cov = Cov(X, None)
    assert SingleProducts.applies(cov, solve._AUTO_SINGLE_MIN_N)
    auto = solve.fit_cov(cov, k, "auto", 3, 0.1, 0, None, {})
    assert auto.x.dtype == np.float64 and np.count_nonzero(auto.x) <= k
    assert auto.variance == pytest.approx(cov.quad(auto.x), rel=1e-12)
    for method in ("tpower", "em"):
        assert auto.variance >= solve.fit_cov(cov, k, method, 3, 0.1, 0, None, {}).variance * (1 - 1e-12)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 12), st.booleans())
def test_support_jump_from_the_top_eigenpair_alone(seed, size, thin):
    """``SupportJump(top_only=True)`` (auto with float32 products): where it moves a column, the point is
    feasible on the same support with value lambda_max(A_JJ) (brute force: all eigenvalues of A_JJ)."""
    from nspca_core._common.screen import SupportJump

    rng = np.random.default_rng(seed)
    n, m = 30, (5 if thin else 60)
    X = np.abs(rng.standard_normal((m, n))) + 0.1 * rng.standard_normal((m, n))
    X -= X.mean(axis=0)
    X += 0.8 * np.outer(rng.standard_normal(m), np.ones(n))
    cov = Cov(X, None)
    A = X.T @ X / m
    J = np.sort(rng.choice(n, size, replace=False))
    x = np.zeros((n, 1))
    x[J, 0] = rng.uniform(0.1, 1.0, size)
    x /= np.linalg.norm(x)
    y = SupportJump(cov, top_only=True)(np.zeros((0, 1), dtype=np.intp), x.copy(), np.array([0]), n)[:, 0]
    assert np.all(y >= 0) and set(np.flatnonzero(y)) <= set(J) and np.isclose(np.linalg.norm(y), 1.0)
    f0, fy = float(x[:, 0] @ A @ x[:, 0]), float(y @ A @ y)
    assert fy >= f0 * (1 - 1e-12)
    if not np.array_equal(y, x[:, 0]):
        assert fy == pytest.approx(np.linalg.eigvalsh(A[np.ix_(J, J)])[-1], rel=1e-10)


def test_screen_on_single_products_only_when_most_columns_can_be_screened():
    """``Screen.single_share``: with float32 products the screen restricts columns only when at least that
    share of them pass Cauchy–Schwarz's prefix; otherwise every column gets the whole float32 product (the
    products the screen's own whole-product path gives), with the same values ``x^T A x``."""
    n, k = 1200, 20
    X = _data(3, 25, n, low_rank=True)
    cov = Cov(X, None)
    V, eig = cov.factor(3)
    key = cov_key(cov)
    X0 = solve._auto_starts(cov, V, k, key, 3)[1][:, :4]
    good = ascent(cov.matvec, X0, k, key=key, max_iter=3).X  # k nonzeros each: screenable
    lone = np.zeros((n, 4))
    lone[np.arange(4), np.arange(4)] = 1.0  # one nonzero each (fewer than k): never screened
    ia, va = _to_compact(np.column_stack([good, lone]), k)
    kc = np.full(8, k)
    sp = SingleProducts(cov)

    def products(share):
        screen = Screen(cov, V, eig[0], sp)
        screen.min_work, screen.single_share = 0, share
        return screen.products(ia, va, kc, n)

    v0, parts0 = products(0.0)
    assert sum(g.size for g, U, _ in parts0 if U is not None) > 0  # without the rule some are screened
    for share in (0.75, 1.0):  # 4 of 8 columns can be: below the share, none is
        v, parts = products(share)
        assert np.array_equal(v, v0)
        assert len(parts) == 1 and parts[0][1] is None and np.array_equal(parts[0][0], np.arange(8))
        whole = Screen(cov, V, eig[0], sp)._whole(ia, va, n)
        assert np.array_equal(parts[0][2], whole)
    v, parts = products(0.5)  # at the share: screened as without the rule
    assert np.array_equal(v, v0) and [g.tolist() for g, _, _ in parts] == [g.tolist() for g, _, _ in parts0]
