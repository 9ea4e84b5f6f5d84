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

from .bruteforce import brute_opt

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
    a = nc.fit(X, k=k, method=method, seed=seed, certify=False)
    b = nc.fit(X[:, perm], k=k, method=method, seed=seed, certify=False)
    assert b.variance == pytest.approx(a.variance, rel=1e-10)
    assert np.allclose(b.x, a.x[perm], atol=1e-8)
