"""The components' certificate never crashes (issue 40, item 5): on exchangeable covariances
``a I + b J`` LAPACK's subset eigensolver raised ``LinAlgError: Internal Error`` (in the joint
Ky Fan and DNN bounds, the single DNN bound and the factor); every bound stays above the best
disjoint components by brute force."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nspca_core as nc
from nspca_core._common import eig
from nspca_core.operators.cov import Cov
from nspca_core.certificates.components import components_bound
from tests.core.peers.test_bipartite_disjoint import brute_joint


def exchangeable(n: int, rho: float) -> np.ndarray:
    return np.full((n, n), rho) + (1 - rho) * np.eye(n)


# (n, index into np.linspace(0, 0.99, 400), n_components, k): each raised from one eigh before
# the fix: the joint DNN bound, the joint Ky Fan bound, the single DNN bound, the factor
CRASHED = [(6, 192, 2, 3), (6, 235, 2, 3), (8, 109, 3, 3), (6, 399, 3, 2)]


@pytest.mark.parametrize("n,i,c,k", CRASHED)
def test_cases_that_crashed_are_certified(n, i, c, k):
    A = exchangeable(n, float(np.linspace(0.0, 0.99, 400)[i]))
    res = nc.components(cov=A, n_components=c, k=k, strategy="bipartite", certify=True)
    opt = brute_joint(A, c, k)
    assert np.isfinite(res.upper_bound) and res.upper_bound >= opt * (1 - 1e-12)
    assert res.total_variance <= opt * (1 + 1e-12)
    assert all(np.isfinite(r.upper_bound) for r in res.results)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(3, 6), rho=st.floats(-0.15, 0.99), c=st.integers(1, 3), k=st.integers(1, 3),
       scale=st.sampled_from([1e-3, 1.0, 1e4]))
def test_exchangeable_bounds_above_brute_force(n, rho, c, k, scale):
    rho = max(rho, -1.0 / (n - 1) + 1e-3)  # positive definite
    A = exchangeable(n, rho) * scale
    c, k = min(c, n), min(k, n)
    res = nc.components(cov=A, n_components=c, k=k, strategy="bipartite", certify=True, samples=200)
    opt = brute_joint(A, c, k)
    assert np.isfinite(res.upper_bound) and res.upper_bound >= opt * (1 - 1e-12), res.bound_kind
    for name, val in components_bound(Cov(A=A), [k] * c)[0].items():
        assert val >= opt * (1 - 1e-12), name


def test_bounds_stay_valid_when_every_eigensolver_fails(monkeypatch):
    """The last resort (Gershgorin's discs) is looser and still above the optimum."""
    A = exchangeable(6, float(np.linspace(0.0, 0.99, 400)[192]))
    opt = brute_joint(A, 2, 3)
    before, _ = components_bound(Cov(A=A), [3, 3])

    def fail(*args, **kw):
        raise np.linalg.LinAlgError("Internal Error.")

    monkeypatch.setattr(eig.scipy.linalg, "eigh", fail)
    bounds, _ = components_bound(Cov(A=A), [3, 3], single=float(before["c x single"]) / 2)
    for name, val in bounds.items():
        assert np.isfinite(val) and val >= opt * (1 - 1e-12), name
    assert bounds["ky-fan"] >= before["ky-fan"]
