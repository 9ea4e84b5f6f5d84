"""auto's random starts on thin data drawn in the sample space (issue 39, item 4, thirteenth round):
``X^T F g`` with ``F F^T`` the factor's m x m Gram has the law of ``A r`` (r ~ N(0, I_n)); the factor is
checked against the Gram, the law's covariance against ``A^2`` formed densely, the route's conditions,
and auto's answers through it against the brute force on tiny inputs.
"""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import nspca_core.solve as solve
from nspca_core._common.ascent import cov_key
from nspca_core._common.screen import SingleProducts
from nspca_core.operators.cov import Cov
from tests.bruteforce import brute_opt
from tests.core.test_auto_cost import _centered as _data


@pytest.fixture(autouse=True)
def _empty_draws(monkeypatch):
    monkeypatch.setattr(solve, "_DRAWS", {})


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31), st.integers(1, 30), st.integers(0, 30), st.sampled_from([2.0**-40, 1.0, 2.0**40]))
def test_sample_factor_reproduces_the_gram(seed, m, r, scale):
    """``F F^T = G`` to rounding for PSD G of any rank (0 to m, e.g. a centered Gram of rank m - 1), at
    any scale; F's columns past the rank are zero."""
    rng = np.random.default_rng(seed)
    r = min(r, m)
    Y = rng.standard_normal((m, r)) * scale
    G = Y @ Y.T
    F = solve._sample_factor(G)
    assert F.shape == (m, m)
    top = max(float(np.abs(G).max()), np.finfo(float).tiny)
    assert np.abs(F @ F.T - G).max() <= 1e-10 * top
    assert np.count_nonzero(np.abs(F).sum(axis=0)) <= max(r, 0) + 1  # the numerical rank, up to one


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 20), st.integers(30, 120), st.sampled_from([2.0**-30, 1.0, 2.0**30]))
def test_sample_starts_have_the_law_of_A_r(seed, m, n, scale):
    """The covariance of ``X^T F g`` (g ~ N(0, I_m)) is ``(X^T F)(X^T F)^T``; with the factor's Gram
    ``G = (X/s)(X/s)^T / m`` it equals ``(m / s^2) A^2``, A^2 being the covariance of ``A r`` (A formed
    densely from the data here)."""
    X = _data(seed, m, n) * scale
    cov = Cov(X, None)
    cov.factor(3)
    G, s = cov.thin_gram()
    XF = X.T @ solve._sample_factor(G)
    A = X.T @ X / m
    want = A @ A * (m / s**2)
    assert np.abs(XF @ XF.T - want).max() <= 1e-9 * np.abs(want).max()


def test_route_conditions():
    """The sample space only on thin data held as X, with float32 products, a factor made through X, and
    m^2 <= _SAMPLE_STARTS_RATIO n; the Gram is forgotten when X is replaced."""
    thin = Cov(_data(0, 12, 300), None)
    assert thin.thin_gram() is None  # no factor yet
    thin.factor(3)
    G, s = thin.thin_gram()
    assert G.shape == (12, 12) and s > 0
    assert solve._sample_gram(thin, SingleProducts(thin)) is G
    assert solve._sample_gram(thin, None) is None  # float64 products
    tall = Cov(_data(1, 400, 300), None)
    tall.factor(3)
    assert tall.thin_gram() is None and solve._sample_gram(tall, SingleProducts(tall)) is None
    wide = Cov(_data(2, 100, 120), None)  # thin, but m^2 above the ratio times n
    wide.factor(3)
    assert 100 * 100 > solve._SAMPLE_STARTS_RATIO * 120
    assert wide.thin_gram() is None and solve._sample_gram(wide, SingleProducts(wide)) is None  # not kept
    thin.X = thin.X.copy()
    assert thin.thin_gram() is None


def test_route_off_above_the_ratio(monkeypatch):
    """Above the ratio the starts are the n-space ones (draws of n rows are kept)."""
    cov = Cov(_data(3, 12, 300), None)
    V, _ = cov.factor(3)
    key = cov_key(cov)
    monkeypatch.setattr(solve, "_SAMPLE_STARTS_RATIO", 0)
    solve._auto_starts(cov, V, 5, key, 1, SingleProducts(cov))
    assert list(solve._DRAWS) == [(1, 300, 300)]
    monkeypatch.setattr(solve, "_SAMPLE_STARTS_RATIO", 72)
    solve._auto_starts(cov, V, 5, key, 1, SingleProducts(cov))
    assert list(solve._DRAWS)[-1] == (1, 300, 12)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(5, 8), st.data())
def test_auto_through_sample_starts_against_brute_force(seed, m, data):
    """Thin tiny data (rank above d: the starts are made) with float32 products from any n, so the
    sample-space starts are used: auto's answer is feasible, at most the brute-force optimum and at least
    tpower's and em's (same seed)."""
    n = data.draw(st.integers(m + 1, 10))
    k = data.draw(st.integers(3, n))
    X = _data(seed, m, n)
    used = []
    real = solve._sample_gram
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(solve, "_AUTO_SINGLE_MIN_N", 0)
        mp.setattr(solve, "_sample_gram", lambda cov, mv: used.append(real(cov, mv)) or used[-1])
        cov = Cov(X, None)
        r = solve.fit_cov(cov, k, "auto", 3, 0.1, seed, None, {})
    assert len(used) == 1 and used[0] is not None
    assert np.all(r.x >= 0) and np.count_nonzero(r.x) <= k
    opt, _ = brute_opt(X.T @ X / m, k)
    assert r.variance <= opt * (1 + 1e-9)
    for method in ("tpower", "em"):
        assert r.variance >= solve.fit_cov(cov, k, method, 3, 0.1, seed, None, {}).variance * (1 - 1e-12)
