"""The dense path's last step (:func:`nspca_core.certificates.path_parity.dnn_runs`, issue 39 target 2, helper
imgpath21): certify(k)'s own DNN at the k whose bound is still a DNN tangent carried from another k below the polish's
goal -- which k it runs at, that its run is certify(k)'s DNN float for float, and the path's bounds with it made at
every k against brute force."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.bench_certify import factor_plus_noise
from nspca_core import certify
from nspca_core.certificates import path_parity as PR
from nspca_core.certificates.dnn import dnn_tangent

from tests.core.certificates.test_path_parity_runs import _forced_path_against_brute


class _State:
    """A stand-in dual point (the fake run's): its tangent is ``value`` at every k."""

    def __init__(self, k, value):
        self.k, self.value = k, value


def test_dnn_runs_only_below_the_ratio_where_a_carried_tangent_binds_and_nothing_ran(monkeypatch):
    # k = 1..10, bounds 100 + k, feasible values 0.97 of them, below = 0.975 (so every k qualifies by ratio) but:
    # k = 3 ran before, k = 5's bound is not a tangent, k = 7's ratio is exactly `below` (not run) while k = 8's is one
    # ulp under it (run); k = 2's run carries a tangent that lifts k = 4's ratio to `below` (not run); the rest run,
    # ascending, each lowering ub_cheap at its k to its value and carrying its point once
    n = 10
    uniq = np.arange(1, n + 1)
    pos = {int(k): i for i, k in enumerate(uniq)}
    below = 0.975
    ub = 100.0 + uniq.astype(float)
    lows = 0.97 * ub
    lows[pos[7]] = below * ub[pos[7]]
    lows[pos[8]] = np.nextafter(below * ub[pos[8]], 0.0)
    binds = np.ones(n, dtype=bool)
    binds[pos[5]] = False
    ub_cheap = ub.copy()
    calls, carried = [], []
    value = {k: ub[pos[k]] * 0.999 for k in range(1, n + 1)}

    def fake(A, k, lower, effort, warm, **kw):
        calls.append(k)
        assert warm is None and lower == lows[pos[k]] and np.isfinite(kw["top_eig"])
        return value[k], _State(k, value[k]), {"lam": -1.0}

    def carry(st, lam):
        carried.append((st.k, lam))
        if st.k == 2:
            ub[pos[4]] = lows[pos[4]] / below

    monkeypatch.setattr(PR, "_dnn", fake)
    done = PR.dnn_runs(np.eye(n), uniq, pos, lows, lambda: ub, lambda: binds, {3}, ub_cheap, carry, "auto", below)
    assert done == calls == [1, 2, 6, 8, 9, 10]
    assert carried == [(k, -1.0) for k in done]
    assert all(ub_cheap[pos[k]] == value[k] for k in done)
    assert all(ub_cheap[pos[k]] == 100.0 + k for k in uniq if k not in done)
    calls.clear()
    assert PR.dnn_runs(np.eye(n), uniq, pos, lows, lambda: ub, lambda: binds, set(uniq), ub_cheap, carry, "auto",
                       below) == [] == calls


def test_dnn_runs_is_certify_k_s_dnn_float_for_float():
    # fpn2 (400 x 180 factor-plus-noise, seed 2) k = 46: certify(k)'s bound is its own DNN from the screening start
    # (the path was 3.1e-3 above it); from certify(k)'s feasible value the run gives that DNN bound, bit for bit, and
    # its dual point's tangent at k is at most that value
    X = factor_plus_noise(2)
    A = X.T @ X / X.shape[0]
    k = 46
    c = certify(X, k=k)
    assert c.info["dnn"]["init"] == "screen" and c.upper_bound == c.bounds["dnn"]
    n = A.shape[0]
    uniq = np.arange(1, n + 1)
    pos = {int(j): i for i, j in enumerate(uniq)}
    lows = np.zeros(n)
    lows[pos[k]] = c.lower
    ub, ub_cheap = np.full(n, np.inf), np.full(n, np.inf)
    binds = np.zeros(n, dtype=bool)
    binds[pos[k]] = True
    got = []
    done = PR.dnn_runs(A, uniq, pos, lows, lambda: ub, lambda: binds, (), ub_cheap,
                       lambda st, lam: got.append((st, lam)), "auto", 0.9805)
    assert done == [k] and ub_cheap[pos[k]] == c.bounds["dnn"]
    (st, lam), = got
    assert dnn_tangent(lam, st, n, np.array([k]))[0] <= c.bounds["dnn"] * (1 + 1e-12)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.function_scoped_fixture])
@given(st.integers(6, 9), st.integers(1, 3), st.integers(0, 2**31 - 1))
def test_path_with_dnn_runs_at_every_k_keeps_bounds_against_bruteforce(monkeypatch, n, r, seed):
    # certify(k)'s DNN of path_parity.dnn_runs made at every k (whatever bound binds, at any ratio, nothing skipped as
    # run before), each run's value and its dual point's tangent carried to the other k: every bound stays >= OPT_k
    def forced(orig, A, uniq, pos, lows, upper, binds, ran, ub_cheap, carry, effort, below):
        return orig(A, uniq, pos, lows, upper, lambda: np.ones(len(uniq), dtype=bool), (), ub_cheap, carry, effort,
                    np.inf)

    _forced_path_against_brute(monkeypatch, n, r, seed, "dnn_runs", forced)
