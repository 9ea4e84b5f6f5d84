"""The dense path's late runs (:func:`nspca_core.certificates.path_parity.parity_runs`, issue 39 target 2, helper
imgpath13): where certify(k)'s own computation (or its anchored call) is run after the path's own steps -- every
stride-th k below a ratio, then along each band where a run helps -- and the path's bounds with those runs made at
every k against brute force."""

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


def _case(p=40):
    uniq = np.arange(1, p + 1)
    pos = {int(k): i for i, k in enumerate(uniq)}
    ub = 100.0 + np.arange(p, dtype=float)
    lows = 0.97 * ub
    return uniq, pos, lows, ub


def _runner(ub, better: dict, calls: list, verdict=None):
    """``run_one(k)``: records k and lowers ``ub`` at k to ``better[k]`` where that is lower (a run that helps)."""
    def run_one(k):
        calls.append(k)
        if k in better:
            ub[k - 1] = min(ub[k - 1], better[k])
        return None if verdict is None else verdict(k)
    return run_one


def test_parity_runs_seed_every_stride_th_k_below_the_ratio_and_follow_each_band_to_its_ends():
    uniq, pos, lows, ub = _case()
    # certify(k) below the path at k = 11..14 (a band around the seed 13) and at k = 30 alone (no seed reaches it)
    better = {k: 0.99 * ub[k - 1] for k in (11, 12, 13, 14, 30)}
    lows[pos[33]] = 0.995 * ub[pos[33]]  # the seed 33 certifies above ``below``: not a seed
    calls: list = []
    done = PR.parity_runs(uniq, pos, lows, lambda: ub, {21}, _runner(ub, better, calls), 4, 0.98)
    # seeds k = 1, 5, 9, 13, 17, 21 (run before: skipped), 25, 29, 33 (ratio 0.995: not a seed), 37;
    # the band from 13: 12, 11, then 10 (no gain: stops), then 14, 15 (no gain: stops)
    assert done == calls == [1, 5, 9, 13, 12, 11, 10, 14, 15, 17, 25, 29, 37]
    assert all(ub[k - 1] == better[k] for k in (11, 12, 13, 14)) and ub[29] > better[30]


def test_parity_runs_follow_a_run_that_lowered_a_neighbour_and_stop_at_one_that_lowered_only_farther():
    """A run helped where it lowered the path's bound at its own k or at the next k below or above (a DNN point above
    the path at its own k, below it at a neighbour: 24 x 24 images, certify(397)'s point lowered 401..445, not 397),
    not where it lowered only a k two or more away.  Seeds 1, 9, 17 (stride 8, 24 k): the run at 9 lowers only 10
    (followed: 8, which lowers nothing, then 10, which lowers 10 further: 11 (nothing)); the run at 17 lowers only 19
    (two away: not followed)."""
    uniq, pos, lows, ub = _case(24)
    lowers = {9: {10: 0.995}, 10: {10: 0.99}, 17: {19: 0.99}}
    calls: list = []

    def run_one(k):
        calls.append(k)
        for j, f in lowers.get(k, {}).items():
            ub[j - 1] = min(ub[j - 1], f * (100.0 + j - 1))

    done = PR.parity_runs(uniq, pos, lows, lambda: ub, (), run_one, 8, 0.98)
    assert done == calls == [1, 9, 8, 10, 11, 17]
    assert ub[9] == 0.99 * 109.0 and ub[18] == 0.99 * 118.0 and ub[8] == 108.0


def test_parity_runs_skip_closed_k_and_follow_by_the_verdict_when_run_one_gives_one():
    uniq, pos, lows, ub = _case(12)
    lows[pos[5]] = ub[pos[5]]  # closed at 5: never run
    calls: list = []
    # a verdict (the anchored call proved a bound) follows even where the bound did not move (a larger k's bound
    # carried down was already below), and no verdict stops even where it moved
    done = PR.parity_runs(uniq, pos, lows, lambda: ub, (), _runner(ub, {}, calls, lambda k: 3 <= k <= 7), 3)
    # seeds 1, 4, 7, 10: 4 proved -> 3 (proved -> 2: not), 5 (closed: skipped); 7 proved -> 6 (proved -> 5 closed, 7
    # run), 8 (not); 10 (not)
    assert done == [1, 4, 3, 2, 7, 6, 8, 10]
    assert 5 not in calls
    calls.clear()
    # the same with the candidates a subset: the next candidate below / above is the neighbour
    done = PR.parity_runs([2, 4, 9, 11], pos, lows, lambda: ub, (), _runner(ub, {}, calls, lambda k: k in (2, 4, 9)),
                          2)
    assert done == [2, 4, 9, 11]


def test_parity_runs_nothing_below_the_ratio_runs_nothing():
    uniq, pos, lows, ub = _case()
    calls: list = []
    assert PR.parity_runs(uniq, pos, lows, lambda: ub, (), _runner(ub, {}, calls), 4, 0.96) == [] == calls


def _forced_path_against_brute(monkeypatch, n: int, r: int, seed: int, name: str, forced) -> None:
    """certify_path over k = 1..n of a small factor-plus-noise problem with the path's step ``name`` (a
    :mod:`.path_parity` function) replaced by ``forced(orig, *args)``: the step ran at some k, and every bound it
    leaves, carried to the other k, stays >= brute force's OPT_k."""
    X = factor_plus_noise(seed, m=2 * n, n=n, r=r)
    A = X.T @ X / X.shape[0]
    orig, seen = getattr(PR, name), []

    def spy(*args, **kw):
        got = forced(orig, *args, **kw)
        seen.extend(got)
        return got

    monkeypatch.setattr(P, name, spy)
    path = certify_path(X, ks=list(range(1, n + 1)))
    assert seen
    for c in path:
        _check_cert(c, brute_opt(A, c.k)[0], A)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.function_scoped_fixture])
@given(st.integers(6, 9), st.integers(1, 3), st.integers(0, 2**31 - 1))
def test_path_with_late_runs_at_every_k_keeps_bounds_against_bruteforce(monkeypatch, n, r, seed):
    # the late anchored calls and certify(k)'s own runs made at every k (stride 1, no ratio limit, nothing skipped as
    # run before): each bound they leave, carried to the other k, stays >= OPT_k
    def forced(orig, ks, pos, lows, upper, ran, run_one, stride, below=np.inf, tol=1e-9):
        return orig(ks, pos, lows, upper, (), run_one, 1, np.inf, tol)

    _forced_path_against_brute(monkeypatch, n, r, seed, "parity_runs", forced)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.function_scoped_fixture])
@given(st.integers(6, 9), st.integers(1, 3), st.integers(0, 2**31 - 1))
def test_path_with_the_finer_anchored_bisection_at_every_tried_k_keeps_bounds_against_bruteforce(monkeypatch, n, r,
                                                                                                   seed):
    # the finer bisection after certify(k)'s anchored call (path.py's rest(): now at every tried k its steps left
    # open, above the polish's goal too), here to 1e-7 relative: each bound it proves, carried to the other k,
    # stays >= OPT_k
    X = factor_plus_noise(seed, m=2 * n, n=n, r=r)
    A = X.T @ X / X.shape[0]
    seen = []
    orig = P.anchored_bisection

    def spy(rows, *a, **kw):
        got = orig(rows, *a, **kw)
        seen.append((rows.k, got[0]))
        return got

    monkeypatch.setattr(P, "anchored_bisection", spy)
    monkeypatch.setattr(P, "_ANCHOR_FINE", 1e-7)
    monkeypatch.setattr(P, "_ANCHOR_FINE_TOP", 1e-7)
    path = certify_path(X, ks=list(range(1, n + 1)))
    scale = max(1.0, float(np.abs(A).max()))
    for k, v in seen:  # each finer bound itself, at its own k
        assert v >= brute_opt(A, k)[0] - 1e-9 * scale
    for c in path:
        _check_cert(c, brute_opt(A, c.k)[0], A)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(5, 9), st.integers(1, 3), st.integers(0, 2**31 - 1), st.floats(0.0, 1.0), st.floats(1.0, 1.5))
def test_after_dnn_anchored_against_bruteforce(n, r, seed, at, above):
    # certify(k)'s bisection after its DNN made at the path's bound (path_parity.after_dnn_anchored), to 1e-3 then
    # finer to 1e-7, from a feasible value at or below OPT_k, at a level anywhere from that value to 1.5 x OPT_k:
    # None, or a bound >= OPT_k
    X = factor_plus_noise(seed, m=2 * n, n=n, r=r)
    A = X.T @ X / X.shape[0]
    k = 1 + seed % n
    opt = brute_opt(A, k)[0]
    lower = opt * (0.9 + 0.1 * at)
    tb = PR.after_dnn_anchored(A, k, lower, lower + (above * opt - lower) * at + 1e-12, 1e-3, 1e-7)
    assert tb is None or tb >= opt * (1 - 1e-9)


def test_after_dnn_anchored_runs_only_below_the_goal(monkeypatch):
    # the path's after-DNN anchored calls (path.py, after the late tries) are made only at the tried k whose ratio is
    # below the polish's goal: none with the goal at 0, some with it above 1 (each at a k whose bound was open)
    X = factor_plus_noise(3, m=120, n=40, r=4)
    calls = []
    orig = P.after_dnn_anchored

    def spy(A, k, lower, level, *a):
        calls.append((k, lower, level))
        return orig(A, k, lower, level, *a)

    monkeypatch.setattr(P, "after_dnn_anchored", spy)
    monkeypatch.setattr(P, "_AFTER_DNN_BELOW", 0.0)
    certify_path(X, ks=list(range(1, 41)))
    assert calls == []
    monkeypatch.setattr(P, "_AFTER_DNN_BELOW", 2.0)
    certify_path(X, ks=list(range(1, 41)))
    assert calls and all(level > lower for _, lower, level in calls)


def test_dense_path_reports_the_k_where_certify_k_ran(monkeypatch):
    """``info["path_runs"]`` on the dense path: the k where certify(k)'s own computation ran (those whose certificate
    carries ``info["one_k"]``), on every certificate (bench_certify's path-ab printed "0 one-k runs" while the dense
    path ran some: the key was never set).  The spy counts the runs one_k_runs made."""
    made = []
    real = PR._certify_dense

    def spy(cov, k, *a, **kw):
        made.append(int(k))
        return real(cov, k, *a, **kw)

    monkeypatch.setattr(PR, "_certify_dense", spy)
    X = factor_plus_noise(1, m=120, n=30)
    P_ = certify_path(X, ks=list(range(1, 31)))
    runs = sorted(c.k for c in P_ if "one_k" in c.info)
    assert runs and runs == sorted(set(made))
    assert all(c.info["path_runs"] == runs for c in P_)


def test_top_runs_only_where_the_bound_is_still_the_anchored_top_and_certify_k_did_not_run():
    # path_parity.top_runs: certify(k) at the k whose bound is still at or above its anchored call's top (lows / 0.975
    # from the path's own feasible value), ascending; not where a later step brought the bound below the top, nor
    # where certify(k) ran already
    uniq, pos, lows, ub = _case(10)
    tops = {k: float(ub[k - 1]) for k in (2, 4, 6, 8)}
    ub[pos[4]] = np.nextafter(tops[4], 0.0)  # just below its top: not run
    ub[pos[6]] = np.nextafter(tops[6], np.inf)  # just above (the top was not the bound): run
    calls: list = []
    done = PR.top_runs(tops, pos, lambda: ub, {8: None}, _runner(ub, {2: 0.5 * ub[pos[2]]}, calls))
    assert done == calls == [2, 6]
    assert PR.top_runs({}, pos, lambda: ub, {}, _runner(ub, {}, calls)) == []


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.function_scoped_fixture])
@given(st.integers(6, 9), st.integers(1, 3), st.integers(0, 2**31 - 1))
def test_path_with_top_runs_at_every_k_keeps_bounds_against_bruteforce(monkeypatch, n, r, seed):
    # certify(k)'s own runs of path_parity.top_runs made at every k (not only where the anchored top binds), each
    # run's bound and its dual point's tangent carried to the other k: every bound stays >= OPT_k
    def forced(orig, tops, pos, upper, ran, run_one):
        return orig({k: -np.inf for k in pos}, pos, upper, (), run_one)

    _forced_path_against_brute(monkeypatch, n, r, seed, "top_runs", forced)
