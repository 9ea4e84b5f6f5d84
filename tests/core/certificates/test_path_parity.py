"""certify(k)'s runs after the dense path's polish where its DNN bound is carried from far
(:func:`nspca_core.certificates.path_parity.far_runs`, issue 39 target 2, helper dense): which k are run,
and the path's bounds with those runs against brute force."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nspca_core import certify_path
from nspca_core.certificates import path as P
from nspca_core.certificates import path_parity as PR

from tests.bruteforce import brute_opt
from tests.core.certificates.test_path_dense_parity import factor_plus_noise
from tests.core.certificates.test_single import _check_cert


def _case(p=30):
    uniq = np.arange(1, p + 1)
    pos = {int(k): i for i, k in enumerate(uniq)}
    ub = 100.0 + np.arange(p, dtype=float)  # increasing: nowhere flat
    lows = 0.99 * ub
    return uniq, pos, lows, ub


def test_far_runs_farthest_first_within_band_budget_and_distance():
    uniq, pos, lows, ub = _case()
    ran = []
    done = PR.far_runs(uniq, pos, lows, lambda: ub, lambda: np.ones(30, bool), {5, 25}, ran.append,
                       lambda k: 1.0, 3.0, lo_ratio=0.98, hi_ratio=0.996, min_dist=4)
    assert done == ran == [15, 10, 20]  # the farthest from {5, 25} first, then from {5, 15, 25}; 3 runs of cost 1
    # nothing nearer than min_dist, nothing outside the band or where the bound is not the DNN's
    assert PR.far_runs(uniq, pos, lows, lambda: ub, lambda: np.ones(30, bool), set(range(1, 31, 3)), ran.append,
                       lambda k: 1.0, 99.0, lo_ratio=0.98, hi_ratio=0.996, min_dist=4) == []
    assert PR.far_runs(uniq, pos, lows, lambda: ub, lambda: np.ones(30, bool), {5, 25}, ran.append,
                       lambda k: 1.0, 99.0, lo_ratio=0.995, hi_ratio=0.996, min_dist=4) == []
    assert PR.far_runs(uniq, pos, lows, lambda: ub, lambda: np.zeros(30, bool), {5, 25}, ran.append,
                       lambda k: 1.0, 99.0, lo_ratio=0.98, hi_ratio=0.996, min_dist=4) == []


def test_far_runs_skip_flat_bounds():
    # a bound equal to the next k's (a mu = 0 point's: certify(k) stands on its KKT point there) is not run
    uniq, pos, lows, ub = _case()
    ub[10:] = ub[10]
    lows = 0.99 * ub
    done = PR.far_runs(uniq, pos, lows, lambda: ub, lambda: np.ones(30, bool), {1}, lambda k: None,
                       lambda k: 1.0, 99.0, lo_ratio=0.98, hi_ratio=0.996, min_dist=2)
    assert done and all(k <= 10 for k in done)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.function_scoped_fixture])
@given(st.integers(6, 9), st.integers(1, 3), st.integers(0, 2**31 - 1))
def test_path_with_far_runs_keeps_bounds_against_bruteforce(monkeypatch, n, r, seed):
    # the far runs forced wherever the bound is not flat (any distance, any ratio, any bound, a large budget):
    # every bound they carry (certify(k)'s, and its dual point's tangent at every k) stays at least OPT_k
    X = factor_plus_noise(seed, m=2 * n, n=n, r=r)
    A = X.T @ X / X.shape[0]
    seen = []
    real = PR.far_runs

    def spy(uniq, pos, lows, upper, binds, *a, **kw):
        done = real(uniq, pos, lows, upper, lambda: np.ones(len(uniq), bool), *a,
                    **{**kw, "min_dist": 1, "lo_ratio": 0.0, "hi_ratio": 2.0})
        seen.extend(done)
        return done

    monkeypatch.setattr(P, "far_runs", spy)
    monkeypatch.setattr(P, "_FAR_SHARE", 100.0)
    path = certify_path(X, ks=list(range(1, n + 1)))
    assert seen
    for c in path:
        _check_cert(c, brute_opt(A, c.k)[0], A)
