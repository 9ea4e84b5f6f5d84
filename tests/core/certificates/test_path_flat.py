"""The dense path's flat points (:func:`nspca_core.certificates.path_parity.flat_points` / ``deepen_flat``, issue 39
target 2, helper parity12): which mu = 0 dual points get more iterations at their own k, the fact that makes the
iterations at k0 count below k0 (a dual point's bound is nondecreasing in k), and the path's bounds with every point
deepened against brute force."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nspca_core import certify_path
from nspca_core.certificates import path as P
from nspca_core.certificates import path_parity as PR
from nspca_core.certificates.dnn import DnnState, dnn_tangent, lmax_state

from tests.bruteforce import brute_opt
from tests.core.certificates.test_path_dense_parity import factor_plus_noise
from tests.core.certificates.test_single import _check_cert


def _state(nu: float) -> DnnState:
    return DnnState(np.zeros((2, 2)), nu)


def _case(p=40):
    uniq = np.arange(1, p + 1)
    pos = {int(k): i for i, k in enumerate(uniq)}
    ub = 100.0 + np.arange(p, dtype=float)  # increasing: no band yet
    ub[19:] = 120.0                          # k = 20..40 flat at 120
    lows = 0.999 * ub
    lows[19:29] = 0.99 * 120.0               # k = 20..29: the ratio 0.99, below the accepted 0.996
    return uniq, pos, lows, ub


def _tangents(table: dict):
    """``tangent(state, lam)`` read from ``{id(state): bound at every k}``."""
    return lambda st, lam: table[id(st)]


def test_flat_points_pick_the_mu0_point_bounding_a_band_below_accept_from_above():
    uniq, pos, lows, ub = _case()
    flat, mu, low_k0, above, sloped, loose, closed = (_state(0.0), _state(1.0), _state(0.0), _state(0.0),
                                                      _state(0.0), _state(0.0), _state(0.0))
    table = {id(flat): np.full(40, 120.0),                      # k0 = 40: binds k = 20..40, ratio 0.99 at 20..29
             id(mu): np.full(40, 120.0),                        # the same bound, mu > 0: not flat in general
             id(low_k0): np.full(40, 120.0),                    # k0 = 25: the band reaches above k0
             id(above): np.full(40, 120.0),                     # k0 = 35 ...
             id(sloped): np.where(uniq < 25, 119.0, 120.0),     # k0 = 38: not the same at every k of its band
             id(loose): np.full(40, 121.0),                     # k0 = 39: bounds nowhere
             id(closed): np.full(40, 120.0)}                    # k0 = 30 with its gap closed (below)
    lows_c = lows.copy()
    lows_c[pos[30]] = 120.0
    states = {40: (flat, 1.0), 37: (mu, 1.0), 25: (low_k0, 1.0), 38: (sloped, 1.0), 39: (loose, 1.0),
              30: (closed, 1.0)}
    got = PR.flat_points(uniq, pos, lows_c, lambda: ub, states, _tangents(table), 0.996)
    assert [k for k, _ in got] == [40]
    assert np.isclose(got[0][1], 1.0 - lows[pos[40]] / 120.0)
    # nothing below the accepted ratio: nothing to pick; above k0 = 35 the band ends at k = 29
    assert PR.flat_points(uniq, pos, np.minimum(ub, 0.999 * ub), lambda: ub, {40: (flat, 1.0)},
                          _tangents(table), 0.996) == []
    assert [k for k, _ in PR.flat_points(uniq, pos, lows, lambda: ub, {35: (above, 1.0)}, _tangents(table),
                                         0.996)] == [35]


def test_deepen_flat_once_per_point_and_picks_again_after_each():
    uniq, pos, lows, ub = _case()
    a, b = _state(0.0), _state(0.0)
    table = {id(a): np.full(40, 120.0), id(b): np.full(40, 120.0)}
    calls = []

    def deepen(k0, stall):  # the first point deepened: both tangents a little lower, the band k = 20..29 still open
        calls.append((k0, stall))
        ub[19:] = 0.9995 * 120.0
        table[id(a)][:] = table[id(b)][:] = 0.9995 * 120.0

    states = {39: (a, 1.0), 40: (b, 1.0)}
    done = PR.deepen_flat(uniq, pos, lows, lambda: ub, states, _tangents(table), 0.996, deepen)
    # 39 first (the smaller k0), once; then the ratio at k = 20..29 is 0.9905: still open, both bind; 40 too, once
    assert done == [39, 40] and [k for k, _ in calls] == [39, 40]
    assert np.isclose(calls[0][1], PR.FLAT_STALL * (1.0 - lows[pos[39]] / 120.0))
    calls.clear()

    def closing(k0, stall):  # the first closes the band: the second is not deepened
        calls.append(k0)
        lows[19:29] = 0.999 * ub[19:29]

    table = {id(a): np.full(40, 120.0), id(b): np.full(40, 120.0)}
    ub[19:] = 120.0
    assert PR.deepen_flat(uniq, pos, lows, lambda: ub, states, _tangents(table), 0.996, closing) == [39]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(2, 9), st.integers(0, 3), st.integers(0, 2**31 - 1))
def test_a_dual_points_bound_is_nondecreasing_in_k(n, m, seed):
    # why iterations at k0 lower the bound of every k <= k0 of a flat band: mu, w >= 0 and the cuts' right-hand sides
    # nondecreasing in k; and the bound is rigorous at every k (brute force)
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n + 1, n))
    A = B.T @ B / (n + 1)
    N = rng.uniform(0.0, 1.0, (n, n)) * rng.integers(0, 2, (n, n))
    N = (N + N.T) / 2
    np.fill_diagonal(N, 0.0)
    C = np.abs(rng.standard_normal((n, m))) if m else None
    w = rng.uniform(0.0, 1.0, m) if m else None
    state = DnnState(N, float(rng.uniform(0.0, 2.0)) * float(rng.integers(0, 2)), None, C, w)
    lam, _ = lmax_state(A, state)
    ks = np.arange(1, n + 1)
    tg = dnn_tangent(lam, state, n, ks)
    assert np.all(np.diff(tg) >= 0)
    for k in ks:
        assert tg[k - 1] >= brute_opt(A, int(k))[0]


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.function_scoped_fixture])
@given(st.integers(6, 9), st.integers(1, 3), st.integers(0, 2**31 - 1))
def test_path_with_every_point_deepened_keeps_bounds_against_bruteforce(monkeypatch, n, r, seed):
    # every dual point of the path deepened at its own k (any mu, no stall rule): each bound carried stays >= OPT_k
    X = factor_plus_noise(seed, m=2 * n, n=n, r=r)
    A = X.T @ X / X.shape[0]
    seen = []

    def spy(uniq, pos, lows, upper, states, tangent, accept, deepen):
        for k0 in sorted(states):
            deepen(k0, 0.0)
            seen.append(k0)
        return seen

    monkeypatch.setattr(P, "deepen_flat", spy)
    path = certify_path(X, ks=list(range(1, n + 1)))
    assert seen  # (the path holds at least one dual point on these matrices)
    for c in path:
        _check_cert(c, brute_opt(A, c.k)[0], A)
