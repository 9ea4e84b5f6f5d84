"""Deep DNN runs on a large-n path's screened sets (issue 39, MLL; ``certificates.deep_s``): the dual point
bounds every sparsity (brute force), the deepened curves stay valid and never rise, and the path takes them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nspca_core import certify_path
from nspca_core.certificates import deep_s, route
from nspca_core.certificates.bounds import _rest_curve
from nspca_core.certificates.dnn import dnn_tangent, dnn_value_lam
from nspca_core.certificates.path_large import coupled_curve
from nspca_core.operators.cov import Cov

from tests.bruteforce import brute_opt
from tests.core.certificates.test_path_large import _force_split, _two_runs

_SLOW = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _small(rng, m, n, nonneg=False):
    X = rng.standard_normal((m, n)) * (0.2 + rng.random(n)) * 3
    if nonneg:
        X = np.abs(X)
    X -= X.mean(axis=0)
    return X, X.T @ X / m


@settings(max_examples=25, **_SLOW)
@given(st.integers(3, 8), st.integers(2, 7), st.integers(0, 2**31 - 1), st.booleans(), st.integers(5, 120))
def test_deep_dual_bounds_every_sparsity_against_bruteforce(n, m, seed, nonneg, iters):
    """deep_dual's point (found on A / a, scaled back) is a valid DNN dual point of A: its value at k and
    its tangent at every sparsity i = 1..n are at least the brute-force OPT_i; N >= 0 with a zero diagonal,
    mu >= 0, w >= 0; the value is the rigorous evaluation of that stored point on A itself."""
    rng = np.random.default_rng(seed)
    _, A = _small(rng, m, n, nonneg)
    A *= 10.0 ** rng.integers(-3, 4)  # any scale: the run is on A / a
    k = int(rng.integers(1, n + 1))
    stt, val, lam = deep_s.deep_dual(A, k, iters)
    N = np.asarray(stt.N, dtype=float)
    assert np.all(N >= 0) and np.all(np.diag(N) == 0) and stt.nu >= 0
    assert stt.w is None or np.all(stt.w >= 0)
    again, lam2 = dnn_value_lam(A, k, stt, fast=False)
    assert again == val and lam2 == lam
    assert val >= brute_opt(A, k)[0] * (1 - 1e-12)
    for i, b in zip(range(1, n + 1), dnn_tangent(lam, stt, n, np.arange(1, n + 1))):
        assert b >= brute_opt(A, i)[0] * (1 - 1e-12), (i, b)


def test_a_longer_deep_run_is_tighter_than_the_short_one():
    """The reason for the module: on correlated data with many more features than k the deep run ends
    well below a short run of the same optimizer, and never below OPT (checked by brute force, n = 9)."""
    rng = np.random.default_rng(7)
    X = rng.standard_normal((40, 3)) @ rng.standard_normal((3, 9)) + 0.3 * rng.standard_normal((40, 9))
    X -= X.mean(axis=0)
    A = X.T @ X / 40
    k = 4
    short = deep_s.deep_dual(A, k, 3)[1]
    deep = deep_s.deep_dual(A, k, 600)[1]
    opt = brute_opt(A, k)[0]
    assert opt * (1 - 1e-12) <= deep < short


@settings(max_examples=15, **_SLOW)
@given(st.integers(7, 9), st.integers(3, 6), st.integers(0, 2**31 - 1))
def test_deepened_runs_carry_valid_curves_never_above_the_undeepened(monkeypatch, n, m, seed):
    """deepen_runs on two runs' screened sets: the carried curve after it is at most the one before at
    every k and at least the brute-force OPT_k; a deepened run's S bound only falls, and only runs near
    a k below the optimal tolerance are deepened."""
    _force_split(monkeypatch, split_min=3, per_k=1, size=5)
    monkeypatch.setattr(deep_s, "_DEEP_BINDS", np.inf)  # every run counts as S-bound (all are deepened),
    monkeypatch.setattr(deep_s, "_DEEP_GAP", -1.0)      # whatever S's own gap,
    monkeypatch.setattr(deep_s, "_DEEP_MISSES", 99)     # however little each gains
    rng = np.random.default_rng(seed)
    X, A = _small(rng, m, n)
    cov = Cov(X, None)
    uniq, kept, rest, curve = _two_runs(cov, n, rng)
    before = curve.copy()
    bs = {k: kept[k]["certS"].upper_bound for k in kept}
    lows = np.array([brute_opt(A, int(k))[0] for k in uniq]) * 0.8  # every k far from closed
    done: dict = {}
    spent = deep_s.deepen_runs(cov, uniq, lows, lambda: curve.copy(), kept, curve,
                               lambda keep, at: coupled_curve(keep, rest[keep["T"].tobytes()], at), np.inf, done,
                               iters=80)
    assert spent > 0 and set(done) <= set(kept) and done
    assert np.all(curve <= before)
    for k in kept:
        assert kept[k]["certS"].upper_bound <= bs[k]
    for k, b in zip(uniq, curve):
        assert b >= brute_opt(A, int(k))[0] * (1 - 1e-12), (k, b)


def test_deepen_runs_skips_runs_where_the_rest_binds_or_s_is_closed_and_keeps_to_its_budget(monkeypatch):
    """Nothing is deepened when no run's coupled bound is S's alone (the rest binds: _DEEP_BINDS below
    zero), nor where S's own gap is below _DEEP_GAP, nor when the budget is below one run's counted cost;
    with the gates open the same run is deepened."""
    _force_split(monkeypatch, split_min=3, per_k=1, size=5)
    rng = np.random.default_rng(5)
    X, A = _small(rng, 5, 8)
    cov = Cov(X, None)
    uniq = np.arange(1, 9)
    keep: dict = {}
    route._certify_large(cov, 4, None, "auto", None, keep=keep)
    BT = _rest_curve(cov, keep["T"], 8)
    curve = coupled_curve(keep, BT, uniq)
    lows = np.array([brute_opt(A, int(k))[0] for k in uniq]) * 0.8
    args = (cov, uniq, lows, lambda: curve.copy(), {4: keep}, curve, lambda kp, at: coupled_curve(kp, BT, at))
    monkeypatch.setattr(deep_s, "_DEEP_GAP", -1.0)
    monkeypatch.setattr(deep_s, "_DEEP_BINDS", np.inf)
    assert deep_s.deepen_runs(*args, deep_s.deep_cost(keep) * 0.99) == 0.0
    for name, shut in (("_DEEP_BINDS", -1.0), ("_DEEP_GAP", 1.0)):
        with monkeypatch.context() as mp:
            mp.setattr(deep_s, name, shut)
            done: dict = {}
            assert deep_s.deepen_runs(*args, np.inf, done, iters=40) == 0.0 and not done
    done = {}
    assert deep_s.deepen_runs(*args, np.inf, done, iters=40) > 0 and list(done) == [4]


@settings(max_examples=10, **_SLOW)
@given(st.integers(7, 9), st.integers(3, 6), st.integers(0, 2**31 - 1))
def test_large_path_with_deep_runs_stays_valid_and_never_looser(monkeypatch, n, m, seed):
    """certify_path through the large-n code with and without the deep runs (DEEP_EFFORTS emptied): with
    them every k's bound is at least the brute-force OPT_k and at most the bound without them."""
    from nspca_core.certificates import path_large

    _force_split(monkeypatch, split_min=3, per_k=1, size=5)
    monkeypatch.setattr(deep_s, "_DEEP_BINDS", np.inf)
    monkeypatch.setattr(deep_s, "_DEEP_GAP", -1.0)
    rng = np.random.default_rng(seed)
    X, A = _small(rng, m, n)
    ks = list(range(1, n + 1))
    with_deep = certify_path(X, ks=ks)
    monkeypatch.setattr(path_large, "DEEP_EFFORTS", ())
    without = certify_path(X, ks=ks)
    for c, c0 in zip(with_deep, without):
        opt, _ = brute_opt(A, c.k)
        assert c.upper_bound >= opt * (1 - 1e-12), (c.k, c.kind, c.upper_bound, opt)
        assert c.upper_bound <= c0.upper_bound * (1 + 1e-12), (c.k, c.upper_bound, c0.upper_bound)
    assert "path_deepened" in with_deep[0].info and "path_deepened" in without[0].info


@settings(max_examples=20, **_SLOW)
@given(st.integers(3, 8), st.integers(2, 7), st.integers(0, 2**31 - 1), st.integers(0, 3), st.integers(5, 60))
def test_restarted_deep_dual_bounds_every_sparsity_and_never_rises(monkeypatch, n, m, seed, restarts, iters):
    """deep_dual with warm restarts: its kept point is a valid DNN dual point of A (value and tangent at
    every sparsity at least the brute-force OPT_i, N >= 0 with a zero diagonal, mu, w >= 0), its value is
    the rigorous evaluation of that point, the smallest of its runs' values, and at most the value without
    restarts (the first run is that run)."""
    monkeypatch.setattr(deep_s, "_DEEP_RESTART_GAIN", -np.inf)  # every restart runs
    rng = np.random.default_rng(seed)
    _, A = _small(rng, m, n, bool(seed % 2))
    A *= 10.0 ** rng.integers(-3, 4)
    k = int(rng.integers(1, n + 1))
    runs: list = []
    stt, val, lam = deep_s.deep_dual(A, k, iters, restarts, runs)
    assert len(runs) == restarts + 1 and val == min(runs)
    assert val <= deep_s.deep_dual(A, k, iters)[1] == runs[0]
    N = np.asarray(stt.N, dtype=float)
    assert np.all(N >= 0) and np.all(np.diag(N) == 0) and stt.nu >= 0
    assert stt.w is None or np.all(stt.w >= 0)
    assert dnn_value_lam(A, k, stt, fast=False) == (val, lam)
    for i, b in zip(range(1, n + 1), dnn_tangent(lam, stt, n, np.arange(1, n + 1))):
        assert b >= brute_opt(A, i)[0] * (1 - 1e-12), (i, b)


def test_restarts_stop_after_one_that_gains_too_little_and_a_restart_can_gain():
    """The restarts stop after the first one that lowers the value by less than _DEEP_RESTART_GAIN
    (relative); on correlated data with n >> k a re-heated restart goes below where one short run stalls,
    never below OPT (brute force)."""
    rng = np.random.default_rng(7)
    X = rng.standard_normal((40, 3)) @ rng.standard_normal((3, 9)) + 0.3 * rng.standard_normal((40, 9))
    X -= X.mean(axis=0)
    A = X.T @ X / 40
    k = 4
    runs: list = []
    val = deep_s.deep_dual(A, k, 30, 5, runs)[1]
    gains = [(min(runs[:i]) - runs[i]) / min(runs[:i]) for i in range(1, len(runs))]
    assert all(g >= deep_s._DEEP_RESTART_GAIN for g in gains[:-1])
    assert len(runs) == 6 or gains[-1] < deep_s._DEEP_RESTART_GAIN
    assert brute_opt(A, k)[0] * (1 - 1e-12) <= val < runs[0]


def _one_run_case(monkeypatch, seed=5, n=8, m=5):
    _force_split(monkeypatch, split_min=3, per_k=1, size=5)
    monkeypatch.setattr(deep_s, "_DEEP_GAP", -1.0)
    monkeypatch.setattr(deep_s, "_DEEP_BINDS", np.inf)
    rng = np.random.default_rng(seed)
    X, A = _small(rng, m, n)
    cov = Cov(X, None)
    uniq = np.arange(1, n + 1)
    keep: dict = {}
    route._certify_large(cov, 4, None, "auto", None, keep=keep)
    BT = _rest_curve(cov, keep["T"], n)
    curve = coupled_curve(keep, BT, uniq)
    lows = np.array([brute_opt(A, int(k))[0] for k in uniq]) * 0.8
    return A, cov, uniq, keep, BT, curve, lows


def test_deepen_runs_counts_each_restart_and_keeps_to_its_budget(monkeypatch):
    """The cold runs keep their former share (_DEEP_COLD_SHARE of _DEEP_SHARE); the restarts come after them,
    warm from the deepened point, each counted as one run (deep_cost), only as far as the budget goes."""
    _, cov, uniq, keep, BT, curve, lows = _one_run_case(monkeypatch)
    monkeypatch.setattr(deep_s, "_DEEP_RESTART_GAIN", -np.inf)
    seen: list = []
    real = deep_s.deep_dual

    def spy(A, k, iters, restarts=0, runs=None, start=None):
        seen.append((restarts, start is not None))
        return real(A, k, iters, restarts, runs, start)

    monkeypatch.setattr(deep_s, "deep_dual", spy)
    args = (cov, uniq, lows, lambda: curve.copy(), {4: keep}, curve, lambda kp, at: coupled_curve(kp, BT, at))
    c = deep_s.deep_cost(keep, 40)
    total = 1.5 * c * deep_s._DEEP_SHARE / deep_s._DEEP_COLD_SHARE  # the cold share: 1.5 runs
    assert deep_s.deepen_runs(*args, total, iters=40) == pytest.approx(min(total // c, 1 + deep_s._DEEP_RESTARTS) * c)
    assert seen[0] == (0, False) and seen[1][1] and len(seen) == 2
    seen.clear()
    assert deep_s.deepen_runs(*args, np.inf, iters=40) == (1 + deep_s._DEEP_RESTARTS) * c
    assert seen == [(0, False), (deep_s._DEEP_RESTARTS - 1, True)]


@settings(max_examples=10, **_SLOW)
@given(st.integers(0, 2**31 - 1), st.integers(7, 9), st.integers(3, 6))
def test_restarted_deepening_never_above_the_cold_one_and_valid(monkeypatch, seed, n, m):
    """deepen_runs with restarts against the same without (_DEEP_RESTARTS = 0), from the same runs: the curve
    with them is at most the one without at every k (the cold part is the same, a restart only lowers) and at
    least the brute-force OPT_k."""
    import copy

    A, cov, uniq, keep, BT, curve, lows = _one_run_case(monkeypatch, seed, n, m)
    monkeypatch.setattr(deep_s, "_DEEP_RESTART_GAIN", -np.inf)
    out = {}
    for r in (0, 2):
        monkeypatch.setattr(deep_s, "_DEEP_RESTARTS", r)
        kp, cv = copy.deepcopy(keep), curve.copy()
        deep_s.deepen_runs(cov, uniq, lows, lambda cv=cv: cv.copy(), {4: kp}, cv,
                           lambda x, at: coupled_curve(x, BT, at), np.inf, iters=30)
        out[r] = cv
    assert np.all(out[2] <= out[0]) and np.all(out[0] <= curve)
    for k, b in zip(uniq, out[2]):
        assert b >= brute_opt(A, int(k))[0] * (1 - 1e-12), (k, b)


def test_cold_runs_go_to_each_worst_k_own_run_once(monkeypatch):
    """The cold pick (_DEEP_OWN): the worst-certified k whose own nearest run is not yet deepened.  A k that stays
    the worst after its own run was deepened (the relaxation holds it) does not draw its neighbours' runs: the next
    run is the next worst k's own (was: run 8, next to k = 10, before run 25 at the second-worst k = 25)."""
    from dataclasses import dataclass, field

    @dataclass
    class Cert:
        upper_bound: float
        lower: float
        info: dict = field(default_factory=dict)

    uniq = np.arange(1, 31)
    runs = (8, 10, 12, 25)
    kept = {r: {"certS": Cert(100.0, 50.0), "stS": object(), "S": np.arange(3), "kS": r} for r in runs}
    curve = np.full(uniq.size, 100.0)
    lows = np.full(uniq.size, 99.9)
    lows[10 - 1], lows[25 - 1] = 90.0, 94.0

    def carry(keep, at):  # a run's bound (S binds) at the k within reach of it
        return np.where(np.abs(np.asarray(at) - keep["kS"]) <= deep_s._DEEP_REACH, keep["certS"].upper_bound, np.inf)

    seen: list = []

    def fake_deep(A, k, iters=0, restarts=0, runs_=None, start=None):
        seen.append(int(k))
        return object(), kept[int(k)]["certS"].upper_bound * 0.99, 1.0

    monkeypatch.setattr(deep_s, "deep_dual", fake_deep)
    cov = Cov(np.zeros((2, 3)), None)
    monkeypatch.setattr(cov, "submatrix", lambda idx: np.zeros((3, 3)))
    c = deep_s.deep_cost(kept[10], 10)
    order: list = []
    spent = deep_s._deepen_cold(cov, uniq, lows, lambda: curve.copy(), kept, curve, carry, 2.5 * c, order, 10)
    assert seen == [10, 25] and spent == 2 * c and [p for p, _ in order] == [10, 25]
