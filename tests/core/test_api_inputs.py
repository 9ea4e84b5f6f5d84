"""Reliability of the public API (issue 18): scale-free answers, unknown options, defaults
that adapt to tiny problems, answers that do not depend on the order of the features."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nspca_core as nc
from nspca_core._common.options import UnknownOptionError

from tests.bruteforce import brute_opt

SCALES = (1e-150, 1e-80, 1.0, 1e80, 1e150)


def _data(seed, m=30, n=10):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n)) * rng.uniform(0.3, 3.0, n)
    return X - X.mean(axis=0)


# ----------------------------------------------------------------------------- scale
@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 10), st.sampled_from(["auto", "tpower", "em", "spannogram"]))
def test_fit_is_scale_free(seed, k, method):
    X = _data(seed)
    base = nc.fit(X, k=k, method=method, certify=False)
    for c in SCALES:
        r = nc.fit(c * X, k=k, method=method, certify=False)
        assert np.allclose(r.x, base.x, atol=1e-9), (c, method)
        assert r.variance == pytest.approx(c * c * base.variance, rel=1e-9)


@pytest.mark.parametrize("c", SCALES + (1e160, 1e-200))
def test_certify_scale_free_and_never_a_raw_error(c):
    X = _data(3, m=12, n=7)
    A = X.T @ X / X.shape[0]
    opt, _ = brute_opt(A, 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cert = nc.certify(c * X, k=3)
        res = nc.fit(c * X, k=3)
    if np.isfinite(c * c * opt) and c * c * opt > 0:
        assert cert.upper_bound >= c * c * opt * (1 - 1e-9)
        assert res.variance == pytest.approx(c * c * opt, rel=1e-9)
    else:  # not representable in float64: said, and x is still the optimum
        assert any("outside the range of float64" in str(w.message) for w in caught)
        assert float(res.x @ A @ res.x) == pytest.approx(opt, rel=1e-9)
    assert cert.ratio == pytest.approx(nc.certify(X, k=3).ratio, rel=1e-6)


@pytest.mark.parametrize("c", [1e-150, 1e40, 1e60, 1e150])
def test_covariance_at_extreme_scales(c):
    for seed in range(5):
        X = _data(seed, m=25, n=9)
        A = X.T @ X / X.shape[0]
        opt, _ = brute_opt(A, 4)
        r = nc.fit(cov=c * A, k=4)
        assert r.upper_bound >= c * opt * (1 - 1e-9)
        assert r.variance == pytest.approx(c * opt, rel=1e-6)


def test_components_and_path_scale_free():
    X = _data(5, n=12)
    base = nc.components(X, n_components=2, k=3)
    big = nc.components(1e150 * X, n_components=2, k=3)
    assert np.allclose(big.loadings, base.loadings)
    assert np.allclose(big.variance, 1e300 * base.variance, rtol=1e-9)
    p0 = nc.certify_path(X, ks=[2, 4])
    p1 = nc.certify_path(1e-150 * X, ks=[2, 4])
    assert [c.ratio for c in p1] == pytest.approx([c.ratio for c in p0], rel=1e-6)


# ----------------------------------------------------------------------------- options
@pytest.mark.parametrize("call", [
    lambda X: nc.fit(X, k=2, eps_=0.2),
    lambda X: nc.fit(X, k=2, method="tpower", restart=3),
    lambda X: nc.fit(X, k=2, method="spannogram", samples=10),
    lambda X: nc.components(X, n_components=2, k=2, sampels=10),
    lambda X: nc.components(X, n_components=2, k=2, strategy="bipartite", restarts=3),
])
def test_unknown_options_are_a_type_error_naming_them(call):
    with pytest.raises(TypeError, match=r"unknown option\(s\) \['\w+'\] for (method|strategy) '[\w-]+'; "
                                        r"allowed: \["):
        call(_data(1))
    with pytest.raises(UnknownOptionError):  # also an InputError (a ValueError)
        call(_data(1))


def test_known_options_still_work():
    X = _data(2)
    assert nc.fit(X, k=3, method="tpower", restarts=3, certify=False).variance > 0
    assert nc.fit(X, k=3, samples=50, effort="fast").upper_bound > 0
    assert nc.components(X, n_components=2, k=3, strategy="quasi-orthogonal", min_angle=60).loadings.shape == (10, 2)


# ----------------------------------------------------------------------------- defaults
@pytest.mark.parametrize("n", [1, 2])
def test_default_d_adapts_to_one_and_two_features(n):
    X = _data(4, m=20, n=n)
    A = X.T @ X / X.shape[0]
    r = nc.fit(X, k=n)
    assert r.variance == pytest.approx(brute_opt(A, n)[0], rel=1e-9) and r.params["d"] == n
    c = nc.components(X, n_components=n, k=1)
    assert c.loadings.shape == (n, n)


# ----------------------------------------------------------------------------- order
@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 9), st.sampled_from(["auto", "tpower", "em"]))
def test_permuting_features_permutes_the_answer(seed, k, method):
    rng = np.random.default_rng(seed)
    X = _data(seed, m=25, n=14)
    perm = rng.permutation(X.shape[1])
    a = nc.fit(X, k=k, method=method, random_state=seed, certify=False)
    b = nc.fit(X[:, perm], k=k, method=method, random_state=seed, certify=False)
    assert b.variance == pytest.approx(a.variance, rel=1e-10)
    assert np.allclose(b.x, a.x[perm], atol=1e-8)


# ----------------------------------------------------------------------------- peers' API
def test_a_sparsity_per_component():
    X = _data(9, n=20)
    c = nc.components(X, n_components=3, k=[6, 4, 2])
    assert [s.size for s in c.supports] == [6, 4, 2] and c.params["k"] == [6, 4, 2]
    for strategy in ("deflation-remove", "deflation-project"):
        one = nc.components(X, n_components=2, k=[5, 5], strategy=strategy)
        assert np.allclose(one.loadings, nc.components(X, n_components=2, k=5, strategy=strategy).loadings)
    with pytest.raises(nc.InputError, match="a sparsity per component"):
        nc.components(X, n_components=2, k=[5, 3], strategy="bipartite")
    with pytest.raises(nc.InputError, match="sequence of n_components=3"):
        nc.components(X, n_components=3, k=[5, 3])


@pytest.mark.parametrize("strategy", ["deflation-remove", "deflation-project"])
def test_continuing_a_fitted_set_of_components(strategy):
    X = _data(10, n=18)
    full = nc.components(X, n_components=3, k=4, strategy=strategy)
    first = nc.components(X, n_components=1, k=4, strategy=strategy)
    more = nc.components(X, n_components=3, k=4, strategy=strategy, partial=first)
    assert np.allclose(more.loadings, full.loadings) and np.allclose(more.variance, full.variance)
    with pytest.raises(nc.InputError, match="more than n_components"):
        nc.components(X, n_components=1, k=4, partial=full)


def test_sample_weight_equals_repeating_samples():
    rng = np.random.default_rng(11)
    X = _data(11, m=40, n=12)
    w = rng.integers(0, 4, 40)
    w[0] = 1
    Xr = np.repeat(X, w, axis=0)
    for method in ("auto", "tpower", "em"):
        a = nc.fit(X, k=4, method=method, sample_weight=w, certify=False)
        b = nc.fit(Xr, k=4, method=method, certify=False)
        assert a.variance == pytest.approx(b.variance, rel=1e-9)
    ca = nc.components(X, n_components=2, k=3, sample_weight=w)
    assert np.allclose(ca.variance, nc.components(Xr, n_components=2, k=3).variance)
    est_w = nc.NonnegativeSparsePCA(2, k=3, certify=False, random_state=0).fit(X, sample_weight=w)
    est_r = nc.NonnegativeSparsePCA(2, k=3, certify=False, random_state=0).fit(Xr)
    assert np.allclose(est_w.components_, est_r.components_) and np.allclose(est_w.mean_, est_r.mean_)
    with pytest.raises(nc.InputError, match="`sample_weight` must hold 40 finite weights"):
        nc.fit(X, k=2, sample_weight=-np.ones(40))
