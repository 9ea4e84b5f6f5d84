"""The one Result constructor and its one rule for zeros (issue 37, item 3)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core._common.points import ZERO_FRACTION, make_result, point_result
from nspca_core.operators.covariance import as_cov
from nspca_core.solve import _make_result


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 8), nonneg=st.booleans(),
       scale=st.sampled_from([1e-8, 1.0, 1e8]))
def test_make_result_cleans_one_way(seed, n, nonneg, scale):
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n, n))
    A = B @ B.T
    x = rng.standard_normal(n) * scale
    x[rng.random(n) < 0.3] *= 1e-17  # rounding-sized entries
    x[rng.random(n) < 0.2] = 0.0
    V = rng.standard_normal((n, 2))
    r = make_result(as_cov(cov=A), x, method="m", params={"k": n}, t0=0.0, V=V, nonneg=nonneg)
    # the brute reading of the rule
    y = np.where(x < 0, 0.0, x) if nonneg else x.copy()
    y[np.abs(y) <= ZERO_FRACTION * max(1.0, np.abs(y).max())] = 0.0
    if np.linalg.norm(y) > 0:
        y = y / np.linalg.norm(y)
    assert np.allclose(r.x, y, rtol=1e-15, atol=0) and np.array_equal(r.x != 0, y != 0)
    assert np.array_equal(r.support, np.flatnonzero(y))
    if nonneg:
        assert np.all(r.x >= 0)
    assert np.isclose(r.variance, y @ A @ y, rtol=1e-12, atol=1e-12 * np.abs(A).max())
    assert np.isclose(r.variance_lowrank, np.sum((V.T @ y) ** 2), rtol=1e-12, atol=1e-300)
    # the solvers' helper is the same constructor with nonneg=True
    if nonneg:
        r2 = _make_result(as_cov(cov=A), x, V, "m", {"k": n}, 0.0, {})
        assert np.array_equal(r2.x, r.x) and r2.variance == r.variance


def test_point_result_keeps_the_point_and_its_values():
    x = np.array([0.0, 0.6, 0.8])
    r = point_result(x, 2.5, method="m", params={}, t0=0.0, info={"a": 1})
    assert r.x is x and r.variance == r.variance_lowrank == 2.5
    assert np.array_equal(r.support, [1, 2]) and r.info == {"a": 1} and r.converged
    r = point_result(x, 2.5, method="m", params={}, t0=0.0, variance_lowrank=2.0, converged=False)
    assert r.variance_lowrank == 2.0 and not r.converged
