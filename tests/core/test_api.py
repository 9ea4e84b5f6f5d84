"""Public entry points fit / components: dispatch, auto strength, polish, certificates, validation."""

import importlib.util
import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from nspca_core import METHODS, InputError, components, enet_nspca, fit, lowrank_factor
from nspca_core.operators.cov import Cov
from nspca_core.methods import STRATEGY_NAMES
from nspca_core.operators.covariance import as_cov
from nspca_core._common.ascent import ascent
from nspca_core._common.polish import polish
from tests.bruteforce import brute_opt


def _available(module):
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:  # the parent package is there but one of its parts is not yet
        return False


def _peer_names():
    try:
        from nspca_core.peers import PEER_METHODS
    except ImportError:
        return []
    return sorted(PEER_METHODS)


def _data(seed, m=25, n=8):
    mix = np.random.default_rng(seed + 100).standard_normal((n, n))  # correlated features
    X = np.random.default_rng(seed).standard_normal((m, n)) @ mix
    return X - X.mean(axis=0)


def _feasible(x, k):
    assert x.min() >= 0 and np.count_nonzero(x) <= k and np.isclose(np.linalg.norm(x), 1.0)


# ----------------------------------------------------------------------------- basics
def test_methods_tuple():
    from nspca_core.methods import SINGLE
    # derived from the registry; the shipped methods come first, in this order (a new entry appends)
    assert METHODS == SINGLE
    assert METHODS[:8] == ("auto", "spannogram", "enet", "em", "tpower", "zass", "sklearn-spca", "nmf")


def test_fit_auto_feasible_and_fields():
    X = _data(0)
    A = X.T @ X / X.shape[0]
    r = fit(X, k=3)
    _feasible(r.x, 3)
    assert r.method == "auto" and r.params["k"] == 3
    assert r.variance == pytest.approx(r.x @ A @ r.x, rel=1e-12)
    V, _ = lowrank_factor(X, d=3)
    assert r.variance_lowrank == pytest.approx(np.sum((V.T @ r.x) ** 2), rel=1e-10)
    assert np.array_equal(r.support, np.flatnonzero(r.x))
    assert r.upper_bound >= r.variance * (1 - 1e-12) and r.bound_kind
    assert r.seconds > 0


def test_fit_auto_matches_brute_force_on_tiny():
    for seed in range(12):
        X = _data(seed, m=15, n=7)
        A = X.T @ X / X.shape[0]
        for k in (1, 2, 4, 7):
            r = fit(cov=A, k=k, certify=False)
            opt, _ = brute_opt(A, k)
            _feasible(r.x, k)
            assert r.variance <= opt * (1 + 1e-9)
            # local ascent from several strong starts: at least 99% of OPT on these instances
            assert r.variance >= 0.99 * opt


def test_thin_data_and_covariance_agree():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((6, 40))
    X -= X.mean(axis=0)
    a = fit(X, k=5, certify=False)
    b = fit(cov=X.T @ X / 6, k=5, certify=False)
    assert a.variance == pytest.approx(b.variance, rel=1e-8)
    _feasible(a.x, 5)


def test_fit_enet_is_enet_on_the_factor():
    X = _data(2, n=12)
    r = fit(X, k=4, method="enet", d=2, eps=0.2, random_state=5, certify=False, center=False)
    V, _ = lowrank_factor(X, d=2)
    e = enet_nspca(V, 4, eps=0.2, random_state=5)
    assert np.array_equal(r.x, e.x) and r.method == "enet"
    assert r.variance_lowrank == pytest.approx(e.variance_lowrank)


@pytest.mark.parametrize("seed", range(4))
def test_auto_at_least_every_other_method(seed):
    X = _data(10 + seed, m=40, n=14)
    for k in (2, 5, 9):
        auto = fit(X, k=k, certify=False)
        others = [fit(X, k=k, method="enet", certify=False)]
        if _available("nspca_core.spannogram"):
            others.append(fit(X, k=k, method="spannogram", certify=False))
        for name in _peer_names():
            try:
                others.append(fit(X, k=k, method=name, certify=False))
            except (InputError, ImportError, NotImplementedError):
                continue
        for o in others:
            assert auto.variance >= o.variance * (1 - 1e-9), (o.method, k)


def test_fit_each_available_method_is_feasible():
    X = np.abs(_data(3, m=30, n=10))  # nonnegative data so that "nmf" applies
    X -= X.mean(axis=0)
    names = ["auto", "enet"] + (["spannogram"] if _available("nspca_core.spannogram") else []) + _peer_names()
    for name in names:
        try:
            r = fit(X, k=3, method=name, certify=False)
        except InputError as exc:  # e.g. a peer that requires nonnegative data: a clear message
            assert name in ("nmf", "zass", "sklearn-spca"), exc
            continue
        _feasible(r.x, 3)
        assert r.variance == pytest.approx(as_cov(X).quad(r.x), rel=1e-9)


def test_spannogram_method_exact_on_lowrank():
    pytest.importorskip("nspca_core.spannogram")
    rng = np.random.default_rng(4)
    V = rng.standard_normal((7, 2))
    A = V @ V.T
    for k in (1, 3, 7):
        r = fit(cov=A, k=k, method="spannogram", d=2, certify=False)
        assert r.variance == pytest.approx(brute_opt(A, k)[0], rel=1e-9)


# ----------------------------------------------------------------------------- polish
@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 9), st.booleans())
def test_polish_never_worse(seed, k, thin):
    rng = np.random.default_rng(seed)
    n = 9
    X = rng.standard_normal((4 if thin else 20, n))
    cov = Cov(X, None)
    x0 = np.abs(rng.standard_normal(n)) * (rng.random(n) < 0.6)
    if not x0.any():
        x0[0] = 1.0
    keep = np.argsort(-x0)[:k]
    x = np.zeros(n)
    x[keep] = x0[keep]
    x /= np.linalg.norm(x)
    f0 = cov.quad(x)
    # a single step is monotone (proof in nspca_core._common.ascent)
    r = ascent(cov.matvec, x[:, None], k, max_iter=1, both_signs=True)
    y, f1 = r.X[:, 0], float(r.values[0])
    assert f1 >= f0 * (1 - 1e-12) and cov.quad(y) == pytest.approx(f1)
    z, f2, _ = polish(cov, x, k)
    assert f2 >= f0 * (1 - 1e-12) and cov.quad(z) == pytest.approx(f2)
    _feasible(z, k)


def test_auto_polish_reported_not_worse_than_starts():
    X = _data(5, n=20)
    r = fit(X, k=6, certify=False)
    starts, polished = r.info["starts"], r.info["polished"]
    assert set(starts) == set(polished) and r.info["winner"] in starts
    for name in starts:
        assert polished[name] >= starts[name] * (1 - 1e-12)
    assert r.variance == pytest.approx(max(polished.values()))


# ----------------------------------------------------------------------------- certificates
def test_upper_bound_above_brute_force():
    for seed in range(8):
        X = _data(20 + seed, m=12, n=6)
        A = X.T @ X / X.shape[0]
        for k in (1, 3, 6):
            opt, _ = brute_opt(A, k)
            for method in ("auto", "enet"):
                r = fit(cov=A, k=k, method=method)
                assert r.upper_bound >= opt * (1 - 1e-9)
                assert r.variance <= r.upper_bound * (1 + 1e-9)


def test_components_deflation_remove_disjoint_and_summary():
    X = _data(7, m=30, n=12)
    A = X.T @ X / X.shape[0]
    c = components(X, n_components=3, k=4)
    assert c.loadings.shape == (12, 3) and c.strategy == "deflation-remove"
    for j in range(3):
        _feasible(c.loadings[:, j], 4)
    sets = [set(s.tolist()) for s in c.supports]
    assert all(not (sets[i] & sets[j]) for i in range(3) for j in range(i))
    assert np.allclose(c.variance, np.einsum("ij,ik,kj->j", c.loadings, A, c.loadings))
    assert np.allclose(np.cumsum(c.additional_variance), c.cumulative_variance)
    assert c.cumulative_variance[0] == pytest.approx(c.variance[0])
    # disjoint nonnegative supports: orthogonal, so nothing is double counted
    assert np.allclose(c.cumulative_variance, np.cumsum(c.variance))
    assert c.cumulative_variance[-1] <= np.trace(A) * (1 + 1e-12)


def test_components_remove_runs_out_of_features():
    X = _data(8, m=20, n=7)
    c = components(X, n_components=3, k=3)
    assert c.loadings.shape[1] == 3
    assert any("only 1 unused features remained" in note for note in c.info["notes"])
    # a positive covariance: the first component takes every feature, nothing is left
    c2 = components(cov=np.ones((7, 7)) + np.eye(7), n_components=2, k=7)
    assert "stopped_early" in c2.info and c2.loadings.shape[1] == 1


def test_components_deflation_project_thin_equals_dense():
    rng = np.random.default_rng(9)
    X = rng.standard_normal((5, 15))
    X -= X.mean(axis=0)
    a = components(X, n_components=3, k=4, strategy="deflation-project", method="enet", d=2)
    b = components(cov=X.T @ X / 5, n_components=3, k=4, strategy="deflation-project", method="enet", d=2)
    assert np.allclose(a.variance, b.variance, rtol=1e-7)
    assert np.allclose(a.cumulative_variance, b.cumulative_variance, rtol=1e-7)
    for j in range(3):
        _feasible(a.loadings[:, j], 4)
    # each later component is found on A projected away from the earlier ones
    x1 = a.loadings[:, 0]
    P = np.eye(15) - np.outer(x1, x1)
    A1 = P @ (X.T @ X / 5) @ P
    assert a.results[1].variance == pytest.approx(a.loadings[:, 1] @ A1 @ a.loadings[:, 1], rel=1e-8)


@pytest.mark.parametrize("strategy, module", [("bipartite", "nspca_core.peers.bipartite"),
                                              ("quasi-orthogonal", "nspca_core.peers.em")])
def test_components_peer_strategies(strategy, module):
    if not _available(module):
        pytest.skip(f"{module} not available yet")
    X = _data(11, m=30, n=10)
    calls = []
    c = components(X, n_components=2, k=3, strategy=strategy, callback=lambda a, b: calls.append((a, b)))
    assert c.loadings.shape == (10, 2) and c.strategy == strategy
    for j in range(2):
        _feasible(c.loadings[:, j], 3)
    assert np.allclose(np.cumsum(c.additional_variance), c.cumulative_variance)
    if strategy == "bipartite":
        assert not (set(c.supports[0].tolist()) & set(c.supports[1].tolist()))


def test_components_callback():
    calls = []
    components(_data(12), n_components=2, k=2, certify=False, callback=lambda a, b: calls.append((a, b)))
    assert calls == [(1, 2), (2, 2)]
    calls.clear()  # certifying: the components' steps first, then each certificate's own
    components(_data(12), n_components=2, k=2, callback=lambda a, b: calls.append((a, b)))
    assert calls[:2] == [(1, 2), (2, 2)] and calls[-1][0] == calls[-1][1]


# ----------------------------------------------------------------------------- validation
@pytest.mark.parametrize("kwargs, msg", [
    (dict(k=0), r"`k` must be an int in \[1, n_features=8\]; got 0"),
    (dict(k=2, d=9), r"`d` must be an int in \[1, n_features=8\]; got 9"),
    (dict(k=2, eps=0), r"`eps` must be a float in \(0, 1\); got 0"),
    (dict(k=2, method="pca"), r"`method` must be one of 'auto', 'spannogram', 'enet', 'em', 'tpower', "
                              r"'zass', 'sklearn-spca', 'nmf'(, '[a-z0-9-]+')*; got 'pca'"),
    (dict(k=2, random_state=1.5), "`random_state` must be None, an int >= 0"),
    (dict(k=2, certify="yes"), "`certify` must be True or False"),
    (dict(k=2, callback="x"), "`callback` must be callable"),
])
def test_fit_validation(kwargs, msg):
    with pytest.raises(InputError, match=msg):
        fit(_data(0), **kwargs)


def test_fit_requires_exactly_one_input():
    with pytest.raises(ValueError, match="give exactly one of `X`"):
        fit(k=1)
    with pytest.raises(ValueError, match="`cov` must be square"):
        fit(cov=np.ones((2, 3)), k=1)


@pytest.mark.parametrize("kwargs, msg", [
    (dict(n_components=0, k=2), r"`n_components` must be an int in \[1, 8\]; got 0"),
    (dict(n_components=2, k=2, strategy="greedy"),  # the registry's strategies, in its order
     re.escape(f"`strategy` must be one of {', '.join(map(repr, STRATEGY_NAMES))}; got 'greedy'")),
    (dict(n_components=2, k=9), r"`k` must be an int in \[1, n_features=8\]; got 9"),
    (dict(n_components=2, k=2, method="x"), "`method` must be one of"),
])
def test_components_validation(kwargs, msg):
    with pytest.raises(InputError, match=msg):
        components(_data(0), **kwargs)


# ----------------------------------------------------------------------------- real data
def test_auto_on_lrs_beats_enet_and_is_certified(lrs_X):
    for k in (5, 20):
        auto = fit(lrs_X, k=k)
        enet = fit(lrs_X, k=k, method="enet", certify=False)
        assert auto.variance >= enet.variance * (1 - 1e-12)
        assert auto.variance <= auto.upper_bound * (1 + 1e-9)
        _feasible(auto.x, k)


def test_components_nmf_uses_the_remaining_raw_features():
    rng = np.random.default_rng(0)
    raw = rng.random((40, 12))
    X = raw - raw.mean(axis=0)
    res = components(X, n_components=3, k=3, method="nmf", data=raw)
    sup = [set(s.tolist()) for s in res.supports]
    assert all(len(s) <= 3 for s in sup)
    assert not (sup[0] & sup[1]) and not (sup[0] & sup[2]) and not (sup[1] & sup[2])
    with pytest.raises(ValueError, match="use strategy='deflation-remove'"):
        components(X, n_components=2, k=3, method="nmf", strategy="deflation-project", data=raw)


def test_components_certify_bounds_each_component_problem():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((50, 7))
    X -= X.mean(axis=0)
    res = components(X, n_components=2, k=2, certify=True)
    A = X.T @ X / 50
    first, _ = brute_opt(A, 2)
    assert res.results[0].upper_bound >= first - 1e-9
    # the second component solved the problem on the unused features
    rest = np.setdiff1d(np.arange(7), res.supports[0])
    second, _ = brute_opt(A[np.ix_(rest, rest)], 2)
    assert res.results[1].upper_bound >= second - 1e-9
    assert res.results[1].variance <= second + 1e-9
