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


def test_far_runs_follow_a_run_that_helped_to_its_neighbours_outside_the_budget():
    # a run lowering the bound at its own k or the next k is followed to k - 1 and k + 1 (whatever the distance rule,
    # the ratio band and the budget), and those runs in turn while they help; a run lowering nothing near is not
    uniq, pos, lows, ub0 = _case()
    certified = ub0.copy()
    certified[18:22] -= 0.5  # certify(k)'s own runs win at k = 19..22 only (their bounds there below the path's)

    def follow(win, lows=lows):
        ub = ub0.copy()
        ran = []

        def run_one(k):  # certify(k)'s run: its bound at k and its dual point's tangent at k - 1, k + 1
            ran.append(k)
            near = [pos[j] for j in (k - 1, k, k + 1) if j in pos]
            ub[near] = np.minimum(ub[near], win[near])

        done = PR.far_runs(uniq, pos, lows, lambda: ub, lambda: np.ones(30, bool), {5, 30}, run_one,
                           lambda k: 1.0, 1.0, lo_ratio=0.98, hi_ratio=0.996, min_dist=4)
        assert done == ran
        return done

    # the one budgeted run is at 17 (the farthest from {5, 30}, the smaller of 17, 18): it lowers nothing at 16..18,
    # nothing is followed
    assert follow(certified) == [17]
    # a win at 18 too (17's neighbour): 16 and 18 are run (16 lowers nothing near: not followed), then 19 (18 lowered
    # 19), 20, 21, 22 (each lowered its next k); 22 lowers nothing new (23 wins nowhere): the band ends there
    certified[17] -= 0.5
    assert follow(certified) == [17, 16, 18, 19, 20, 21, 22]
    # a bound closed by the run before (k = 21 at lows after 20's run) is not run: the band stops there
    lows2 = lows.copy()
    lows2[20] = certified[20]
    assert follow(certified, lows2) == [17, 16, 18, 19, 20]


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
