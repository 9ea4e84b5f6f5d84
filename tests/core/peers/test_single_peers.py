"""Single-component peers: EM, TPower, Zass–Shashua, scikit-learn SparsePCA and NMF."""

from __future__ import annotations

import numpy as np
import pytest

from nspca_core.operators.covariance import as_cov
from nspca_core._common.validation import InputError
from nspca_core.peers import PEER_METHODS
from nspca_core.peers.zass import _best_u, _best_u_scalar


def planted(seed=0, m=200, n=14, support=(2, 5, 6, 11), strength=3.0):
    """Centered data whose covariance has a strong nonnegative direction on ``support``.

    Returns (raw nonnegative data, centered data, planted unit u).
    """
    rng = np.random.default_rng(seed)
    u = np.zeros(n)
    u[list(support)] = rng.uniform(0.6, 1.0, len(support))
    u /= np.linalg.norm(u)
    z = rng.uniform(0.0, strength, m)
    raw = 0.3 * rng.random((m, n)) + np.outer(z, u)
    return raw, raw - raw.mean(axis=0), u


def options(name, raw):
    return {"data": raw} if name == "nmf" else {}


# every covariance form a peer must accept: dense A, data with m > n, thin data (m < n)
def covs(seed=1):
    raw, Xc, _ = planted(seed, m=60, n=12)
    thin = planted(seed, m=8, n=12)
    return [("A", as_cov(cov=Xc.T @ Xc / 60), raw), ("X", as_cov(Xc), raw),
            ("thin", as_cov(thin[1]), thin[0])]


@pytest.mark.parametrize("name", sorted(PEER_METHODS))
@pytest.mark.parametrize("k", [1, 3, 12])
def test_feasible_and_consistent(name, k):
    for form, cov, raw in covs():
        res = PEER_METHODS[name](cov, k, seed=0, **options(name, raw))
        x = res.x
        A = cov.dense()
        assert x.shape == (12,), form
        assert np.all(x >= 0), (name, form)
        assert np.isclose(np.linalg.norm(x), 1.0), (name, form)
        assert np.count_nonzero(x) <= k, (name, form)
        assert np.array_equal(res.support, np.flatnonzero(x))
        assert np.isclose(res.variance, x @ A @ x, rtol=1e-10, atol=1e-14)
        assert res.variance_lowrank == res.variance
        assert res.method == name
        assert isinstance(res.params, dict) and res.params["k"] == k


@pytest.mark.parametrize("name", sorted(PEER_METHODS))
def test_deterministic_under_seed(name):
    _, cov, raw = covs()[1]
    a = PEER_METHODS[name](cov, 4, seed=7, **options(name, raw))
    b = PEER_METHODS[name](cov, 4, seed=7, **options(name, raw))
    assert np.array_equal(a.x, b.x)


@pytest.mark.parametrize("name", sorted(PEER_METHODS))
def test_recovers_planted_support(name):
    support = (2, 5, 6, 11)
    raw, Xc, _ = planted(3, support=support)
    res = PEER_METHODS[name](as_cov(Xc), len(support), seed=0, **options(name, raw))
    assert set(res.support.tolist()) == set(support), (name, res.support, res.info)


def test_em_signed_k_equal_n_is_leading_eigenvector():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((40, 9)) @ rng.standard_normal((9, 9))
    X -= X.mean(axis=0)
    cov = as_cov(X)
    w, U = np.linalg.eigh(cov.dense())
    res = PEER_METHODS["em"](cov, 9, nonneg=False, init="random", restarts=1, tol=1e-14,
                             max_iter=100000, renormalize=False, seed=3)
    assert abs(abs(res.x @ U[:, -1]) - 1.0) < 1e-8
    assert np.isclose(res.variance, w[-1], rtol=1e-10)


def test_em_renormalization_never_hurts():
    _, Xc, _ = planted(4)
    cov = as_cov(Xc)
    for k in (2, 5, 9):
        a = PEER_METHODS["em"](cov, k, renormalize=False, seed=1)
        b = PEER_METHODS["em"](cov, k, renormalize=True, seed=1)
        assert b.variance >= a.variance - 1e-12
        assert b.variance >= b.info["variance_before_renormalization"] - 1e-12


def test_em_renormalization_exact_on_small_support():
    """On its support the renormalized EM point is the brute-force nonnegative optimum."""
    from tests.bruteforce import brute_opt

    rng = np.random.default_rng(8)
    for _ in range(5):
        B = rng.standard_normal((7, 7))
        A = B @ B.T
        cov = as_cov(cov=A)
        res = PEER_METHODS["em"](cov, 4, seed=0)
        idx = res.support
        opt, _ = brute_opt(A[np.ix_(idx, idx)], idx.size)
        assert res.variance >= opt * (1 - 1e-9)


def test_tpower_monotone_never_below_truncated_eigenvector():
    from nspca_core._common.rank1 import rank1_point

    _, Xc, _ = planted(6)
    cov = as_cov(Xc)
    w, U = np.linalg.eigh(cov.dense())
    for k in (1, 3, 7):
        x0 = rank1_point(U[:, -1], k)
        assert PEER_METHODS["tpower"](cov, k).variance >= cov.quad(x0) - 1e-12


def test_tpower_non_convergence_warning_points_at_the_caller():
    """The warning is raised in peers.tpower.tpower_from, two calls down; it names this line."""
    from nspca_core.peers.tpower import tpower_pca

    cov = as_cov(X=np.random.default_rng(0).standard_normal((30, 12)))
    with pytest.warns(RuntimeWarning, match="did not converge in max_iter=1") as rec:
        tpower_pca(cov, 3, max_iter=1)
    assert [w.filename for w in rec] == [__file__]


def test_zass_cubic_maximizer_against_grid():
    rng = np.random.default_rng(0)
    u = np.linspace(0.0, 8.0, 80001)
    for _ in range(300):
        C2, C1 = rng.standard_normal(2) * 3
        a = abs(rng.standard_normal()) + 0.1
        f = -a / 4 * u ** 4 + C2 * u ** 2 + C1 * u
        us = _best_u_scalar(C2, C1, a)
        uv = _best_u(np.array([C2]), np.array([C1]), a)[0]
        fs = -a / 4 * us ** 4 + C2 * us ** 2 + C1 * us
        assert fs >= f.max() - 1e-6
        assert abs(us - uv) <= 1e-6 * (1 + us)


def test_zass_reports_support_and_message():
    _, Xc, _ = planted(2)
    cov = as_cov(Xc)
    for k in (1, 3, 8):
        res = PEER_METHODS["zass"](cov, k)
        info = res.info
        assert info["support_size"] <= k or info["truncated"]
        assert res.k <= k
        if not info["exact_k"]:
            assert "message" in info
        sizes = list(info["tried"].values())
        assert any(s > k for s in sizes) or k >= max(sizes)


def test_sklearn_spca_reports_clipping():
    _, Xc, _ = planted(2)
    res = PEER_METHODS["sklearn-spca"](as_cov(Xc), 5)
    assert isinstance(res.info["clipped"], bool)
    assert 0.0 <= res.info["clipped_mass"] <= 1.0
    assert res.info["clipped"] == (res.info["clipped_mass"] > 0)


def test_errors_name_the_argument():
    _, Xc, _ = planted(0)
    cov = as_cov(Xc)
    with pytest.raises(InputError, match=r"unknown option\(s\) \['bogus'\] for method 'em'"):
        PEER_METHODS["em"](cov, 3, bogus=1)
    with pytest.raises(ValueError, match=r"`k` must be an int in \[1, n_features=14\]; got 0"):
        PEER_METHODS["tpower"](cov, 0)
    with pytest.raises(InputError, match="NMF needs nonnegative data"):
        PEER_METHODS["nmf"](cov, 3)
    with pytest.raises(InputError, match="`data` must be nonnegative"):
        PEER_METHODS["nmf"](cov, 3, data=Xc)
    with pytest.raises(InputError, match="`data` must have n_features=14 columns"):
        PEER_METHODS["nmf"](cov, 3, data=np.ones((5, 3)))
    with pytest.raises(InputError, match=r"`alpha` must be a float in \(0.0, inf\)"):
        PEER_METHODS["zass"](cov, 3, alpha=0)
    with pytest.raises(InputError, match=r"`restarts` must be an int >= 1; got 0"):
        PEER_METHODS["em"](cov, 3, restarts=0)
    with pytest.raises(InputError, match="`cov` must be a validated"):
        PEER_METHODS["em"](Xc, 3)
    with pytest.raises(InputError, match="`init` must be None, 'pc' or 'random'"):
        PEER_METHODS["em"](cov, 3, init="x")


def test_em_beats_zass_on_cbcl(cbcl_X):
    """Sigg & Buhmann Fig. 3: EM explains at least the variance of NSPCA (Zass–Shashua)
    at equal cardinality on CBCL faces."""
    cov = as_cov(cbcl_X / 255.0)
    z = PEER_METHODS["zass"](cov, 20)  # one k (support 19 here): the β search costs ~10 s
    em = PEER_METHODS["em"](cov, z.k)
    assert em.variance >= z.variance


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra.numpy import arrays  # noqa: E402


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 7).flatmap(lambda n: st.tuples(
    arrays(np.float64, (n + 2, n), elements=st.floats(-3, 3, allow_subnormal=False)),
    st.integers(1, n), st.sampled_from(["em", "tpower"]))))
def test_property_feasible_fast_peers(case):
    """Any data (zero columns, duplicates, rank-deficient): x >= 0, unit, <= k nonzeros."""
    B, k, name = case
    cov = as_cov(B)
    res = PEER_METHODS[name](cov, k, restarts=3)
    assert np.all(res.x >= 0)
    assert np.isclose(np.linalg.norm(res.x), 1.0)
    assert np.count_nonzero(res.x) <= k
    assert np.isclose(res.variance, cov.quad(res.x))
