""":func:`nspca_core.certificates.path_parity.anchored_floor`: the least value certify(k)'s anchored
call can return from a feasible value.  certify_path's late tries are skipped where the path's bound is
at or below it (a run there cannot undercut the path), so the floor must hold for every form of the
call -- both brackets, ``top_first``, any ``rel_tol`` -- and be tight (reached where the narrow probe
is proved), else the skip would hide nothing or too much."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nspca_core.certificates import dual
from nspca_core.certificates.path_parity import anchored_floor

from tests.bruteforce import brute_opt
from tests.core.certificates.test_cost import matrices


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(A=matrices, k=st.integers(2, 8), rel=st.sampled_from([5e-5, 1e-3, 1e-2]),
       top=st.sampled_from([None, 0.975, 0.9]), first=st.booleans(), shrink=st.sampled_from([1.0, 0.9999, 0.99]))
def test_anchored_never_returns_below_its_floor(A, k, rel, top, first, shrink):
    n = A.shape[0]
    k = min(k, n)
    opt, xo = brute_opt(A, k)
    if opt <= 0:
        return
    lower = float(xo @ A @ xo) * shrink  # (a feasible value, at or below the optimum)
    tb = dual._anchored(A, k, lower, np.inf, rel_tol=rel, top_ratio=top, top_first=first)
    if tb is not None:
        assert tb >= anchored_floor(lower, rel)
        assert tb >= opt * (1 - 1e-9)  # (and a bound: brute force)


def test_floor_is_reached_at_an_optimal_point():
    """A diagonal covariance: the optimum is its largest entry at k = 1..n (one coordinate), the anchored test proves
    any tau above it, so the call from the optimal value returns the floor itself (the skip is not loose)."""
    A = np.diag([3.0, 2.0, 1.0, 0.5])
    tb = dual._anchored(A, 2, 3.0, np.inf, rel_tol=1e-3, top_ratio=0.975, top_first=True)
    assert tb == anchored_floor(3.0, 1e-3)
    assert 3.0 < tb <= 3.0 * (1 + 1e-4)
