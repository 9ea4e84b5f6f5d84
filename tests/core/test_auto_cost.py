"""The cheaper "auto" (issue 39, item 4): the screened products, the top-k selection from the previous
support, the support's limit, and auto never below the shipped methods it includes.

Everything runs below the front (``solve.fit_cov`` on a covariance operator of centered data), so the
tests hold whatever the front does with uncentered input.
"""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from nspca_core._common.ascent import Screen, SupportJump, ascent, cov_key
from nspca_core._common.steps import _select
from nspca_core.operators.cov import Cov
from nspca_core.solve import _auto_starts, fit_cov
from tests.bruteforce import brute_opt


def _centered(seed, m, n, correlated=True):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n)) * rng.uniform(0.2, 3.0, n)
    if correlated:
        X += rng.standard_normal((m, 2)) @ rng.uniform(-1.0, 2.0, (2, n))
    return X - X.mean(axis=0)


def _feasible(x, k):
    assert np.all(x >= 0) and np.count_nonzero(x) <= k and np.linalg.norm(x) == pytest.approx(1.0)


# ----------------------------------------------------------------------------- auto >= the methods it includes
@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(4, 24), st.integers(3, 40), st.data())
def test_auto_never_below_tpower_em_spannogram(seed, n, m, data):
    """Same d, eps, seed: auto's variance is at least tpower's, em's and the spannogram's (and enet's),
    on thin and on tall data; and never above the brute-force optimum on the smallest."""
    k = data.draw(st.integers(1, n))
    X = _centered(seed, m, n, correlated=seed % 2 == 0)
    cov = Cov(X, None)
    d = min(3, n)
    auto = fit_cov(cov, k, "auto", d, 0.1, seed, None, {})
    _feasible(auto.x, k)
    for method in ("tpower", "em", "spannogram", "enet"):
        other = fit_cov(cov, k, method, d, 0.1, seed, None, {})
        assert auto.variance >= other.variance * (1 - 1e-12), (method, auto.variance, other.variance)
    if n <= 12:
        opt, _ = brute_opt(X.T @ X / m, k)
        assert auto.variance <= opt * (1 + 1e-9)


def test_auto_reaches_em_where_no_hard_start_does():
    """54 x 39 random data, k = 5: em's soft steps reach a better optimum (the brute-force one,
    11.36424 against 11.35823) than any start of the truncated power ascent; auto polishes em's
    answer on data this small."""
    rng = np.random.default_rng(12345)
    for t in range(89):  # the 89th of a stream of random inputs
        n, m = int(rng.integers(4, 40)), int(rng.integers(3, 60))
        X = rng.standard_normal((m, n)) * rng.uniform(0.2, 3, n)
        if t % 3 == 0:
            X = X + rng.standard_normal((m, 1)) * rng.uniform(0, 2, n)
        X -= X.mean(axis=0)
    cov = Cov(X, None)
    auto = fit_cov(cov, 5, "auto", 3, 0.1, 0, None, {})
    em = fit_cov(cov, 5, "em", 3, 0.1, 0, None, {})
    tpower = fit_cov(cov, 5, "tpower", 3, 0.1, 0, None, {})
    assert em.variance > tpower.variance * (1 + 1e-4)  # the case is still the one described
    assert auto.variance >= em.variance * (1 - 1e-12)


def test_auto_same_answer_twice():
    X = _centered(3, 30, 1500)
    a = fit_cov(Cov(X, None), 12, "auto", 3, 0.1, 0, None, {})
    b = fit_cov(Cov(X, None), 12, "auto", 3, 0.1, 0, None, {})
    assert np.array_equal(a.x, b.x) and a.variance == b.variance


# ----------------------------------------------------------------------------- the screened products
def _low_rank_plus_noise(seed, m, n, noise=0.05):
    """Data whose top 3 components hold most of the variance (where the screen has most to cut)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, 3)) @ (rng.standard_normal((3, n)) * rng.uniform(0.1, 3.0, n))
    X += noise * rng.standard_normal((m, n)) * rng.uniform(0.2, 2.0, n)
    return X - X.mean(axis=0)


def _screen_case(seed, m, n, thin=True):
    X = _low_rank_plus_noise(seed, m, n)
    cov = Cov(X, None) if thin else Cov(None, X.T @ X / m)
    V, eig = cov.factor(3)
    return cov, V, eig


screened: list = []  # columns restricted to rows by the screen, per example (at least some must be)


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([5, 20, 60]), st.booleans())
def test_screen_keeps_every_row_of_the_top_k(seed, k, thin):
    """Every column the screen restricts to rows U: its k largest entries (and the (k+1)-th when it ties)
    lie in U, the other rows are below the k-th largest, and the entries on U are those of A x."""
    n = 1200
    cov, V, eig = _screen_case(seed, 25 if thin else 1500, n, thin)
    rng = np.random.default_rng(seed)
    key = cov_key(cov)
    # iterates a few steps into an ascent, held compact as the ascent holds them
    X0 = _auto_starts(cov, V, k, key, seed)[1][:, :8]
    r = ascent(cov.matvec, X0, k, key=key, max_iter=int(rng.integers(1, 4)))
    Xk = r.X
    ia = np.sort(np.argsort(-Xk, axis=0)[:k], axis=0)
    va = Xk[ia, np.arange(Xk.shape[1])]
    ia = np.where(va > 0, ia, n)
    order = np.argsort(np.where(ia < n, ia, n + 1), axis=0)
    ia, va = np.take_along_axis(ia, order, 0), np.take_along_axis(va, order, 0)
    screen = Screen(cov, V, eig[0])
    screen.min_work = 0
    v, parts = screen.products(ia, va, np.full(ia.shape[1], k), n)
    Y = cov.matvec(Xk)
    screened.append(sum(g.size for g, U, _ in parts if U is not None))
    assert np.allclose(v, np.einsum("ij,ij->j", Xk, Y), rtol=1e-10)
    covered = np.concatenate([g for g, _, _ in parts])
    assert np.array_equal(np.sort(covered), np.arange(Xk.shape[1]))
    for g, U, Yg in parts:
        if U is None:
            assert np.allclose(Yg, Y[:, g], rtol=1e-10, atol=1e-12 * np.abs(Y).max())
            continue
        assert np.all(np.diff(U) > 0)
        assert np.allclose(Yg, Y[U][:, g], rtol=1e-10, atol=1e-12 * np.abs(Y).max())
        outside = np.setdiff1d(np.arange(n), U)
        kth = -np.sort(-Y[:, g], axis=0)[k - 1]
        assert np.all(Y[outside][:, g] < kth)


def test_screen_restricted_some_columns():
    """The property above saw restricted columns (it cannot pass vacuously)."""
    if not screened:
        test_screen_keeps_every_row_of_the_top_k()
    assert sum(screened) > 0


def _compact(Xk, k):
    """The columns of Xk (n, q), at most k nonzeros each, as the ascent's compact iterates."""
    n = Xk.shape[0]
    ia = np.sort(np.argsort(-Xk, axis=0)[:k], axis=0)
    va = Xk[ia, np.arange(Xk.shape[1])]
    ia = np.where(va > 0, ia, n)
    order = np.argsort(np.where(ia < n, ia, n + 1), axis=0)
    return np.take_along_axis(ia, order, 0), np.take_along_axis(va, order, 0)


def test_screen_one_loose_column_leaves_the_others_screened():
    """A column whose bound is loose (its support on independent noise features: a small t, every
    feature in its Cauchy–Schwarz prefix) gets the whole product; the columns beside it, converged
    on a strong block of features, keep their screen, and every part stays exact."""
    rng = np.random.default_rng(3)
    m, n, k = 25, 2000, 10
    X = rng.standard_normal((m, n))
    X[:, :100] += 4.0 * rng.standard_normal((m, 1)) * rng.uniform(0.5, 1.5, 100)  # the block
    X -= X.mean(axis=0)
    cov = Cov(X, None)
    V, eig = cov.factor(3)
    key = cov_key(cov)
    r = ascent(cov.matvec, _auto_starts(cov, V, k, key, 0)[1][:, :6], k, key=key)
    loose = np.zeros((n, 1))
    loose[1000:1000 + k, 0] = 1.0 / np.sqrt(k)
    Xk = np.hstack([r.X, loose])
    Y = cov.matvec(Xk)
    assert Y[1000:1000 + k, -1].min() > 0  # the loose column is one the screen would prune
    ia, va = _compact(Xk, k)
    screen = Screen(cov, V, eig[0])
    screen.min_work = 0
    _, parts = screen.products(ia, va, np.full(ia.shape[1], k), n)
    whole = np.concatenate([g for g, U, _ in parts if U is None])
    assert Xk.shape[1] - 1 in whole
    assert sum(g.size for g, U, _ in parts if U is not None) >= 1
    for g, U, Yg in parts:
        rows = np.arange(n) if U is None else U
        assert np.allclose(Yg, Y[rows][:, g], rtol=1e-10, atol=1e-12 * np.abs(Y).max())


def test_screen_ascent_same_supports_as_the_whole_product():
    """The ascent with the screen takes the same steps (supports, iterations) as without."""
    X = _low_rank_plus_noise(11, 30, 2000)
    cov = Cov(X, None)
    V, eig = cov.factor(3)
    key = cov_key(cov)
    for k in (4, 30):
        X0 = _auto_starts(cov, V, k, key, 0)[1]
        screen = Screen(cov, V, eig[0])
        screen.min_work = 0
        a = ascent(cov.matvec, X0, k, key=key)
        b = ascent(cov.matvec, X0, k, key=key, screen=screen)
        assert a.iterations == b.iterations
        assert np.array_equal(a.X != 0, b.X != 0)
        assert np.allclose(a.values, b.values, rtol=1e-12)


def test_screen_only_for_plain_operators():
    from nspca_core.operators.cov import ProjectedCov

    X = _centered(0, 10, 40)
    cov = Cov(X, None)
    x = np.zeros(40)
    x[0] = 1.0
    assert Screen.applies(cov) and not Screen.applies(ProjectedCov(cov, x))


# ----------------------------------------------------------------------------- the selection from the previous support
@settings(max_examples=150, deadline=None)
@given(st.integers(0, 10_000), st.integers(8, 200), st.integers(1, 8), st.booleans(), st.booleans())
def test_select_from_previous_support_is_the_partition(seed, n, q, signed, ties):
    """The candidates at or above the previous support's smallest entry give the same compact T_k as the
    partition of all n entries, bit for bit, ties (broken by the key) included."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, max(2, n // 4)))
    Y = rng.standard_normal((n, q))
    if ties:
        Y = np.round(Y, 1)
    S = np.abs(Y) if signed else Y
    prev = np.empty((k, q), dtype=np.intp)
    for j in range(q):
        noisy = S[:, j] + rng.uniform(0, 0.5) * rng.standard_normal(n)
        prev[:, j] = np.sort(np.argsort(-noisy)[:k])
    if rng.random() < 0.3 and k > 1:
        prev[-1, 0] = n  # a previous iterate with fewer than k entries
    key = rng.permutation(n)
    a = _select(Y, np.full(q, k), key, signed, k)
    b = _select(Y, np.full(q, k), key, signed, k, prev)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


# ----------------------------------------------------------------------------- the support's limit
@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 12), st.booleans())
def test_support_jump_is_the_best_point_on_the_support(seed, size, thin):
    """Where it moves a column, the new point is feasible on the same support and its value is
    lambda_max(A_JJ) (brute force: eigh of the submatrix), never below the old one."""
    rng = np.random.default_rng(seed)
    n, m = 30, (5 if thin else 60)
    X = np.abs(rng.standard_normal((m, n))) + 0.1 * rng.standard_normal((m, n))
    X -= X.mean(axis=0)
    X += 0.8 * np.outer(rng.standard_normal(m), np.ones(n))  # a common factor: positive eigenvectors
    cov = Cov(X, None)
    A = X.T @ X / m
    J = np.sort(rng.choice(n, size, replace=False))
    x = np.zeros((n, 1))
    x[J, 0] = rng.uniform(0.1, 1.0, size)
    x /= np.linalg.norm(x)
    f0 = float(x[:, 0] @ A @ x[:, 0])
    zv = SupportJump(cov)(np.zeros((0, 1), dtype=np.intp), x.copy(), np.array([0]), n)
    y = zv[:, 0]
    _feasible(y, size)
    assert set(np.flatnonzero(y)) <= set(J)
    fy = float(y @ A @ y)
    assert fy >= f0 * (1 - 1e-12)
    if not np.array_equal(y, x[:, 0]):
        assert fy == pytest.approx(np.linalg.eigvalsh(A[np.ix_(J, J)])[-1], rel=1e-10)


def test_support_jump_leaves_a_mixed_sign_eigenvector():
    A = np.array([[1.0, -0.9], [-0.9, 1.0]])
    cov = Cov(None, A)
    x = np.array([[0.6], [0.8]])
    zv = SupportJump(cov)(np.zeros((0, 1), dtype=np.intp), x.copy(), np.array([0]), 2)
    assert np.array_equal(zv, x)


@pytest.mark.parametrize("k", [3, 8])
def test_auto_on_wide_data_at_least_tpower_and_em(k):
    """On 1,200 features (compact iterates, the screen and the jumps on), auto is at least the best of
    tpower and em, and feasible."""
    X = _centered(5, 20, 1200)
    cov = Cov(X, None)
    auto = fit_cov(cov, k, "auto", 3, 0.1, 0, None, {})
    _feasible(auto.x, k)
    for method in ("tpower", "em"):
        assert auto.variance >= fit_cov(cov, k, method, 3, 0.1, 0, None, {}).variance * (1 - 1e-12)
