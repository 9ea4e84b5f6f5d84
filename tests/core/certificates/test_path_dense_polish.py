"""The dense path's polish to its goal (issue 39 item 2, ``certificates/path_dense_polish.py``) and the
bounds it carries between k: every bound at least the brute-force optimum, a polished path never
looser than the unpolished one, and the one-k runs' dual points carried to every k."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, HealthCheck, assume, given, settings
from hypothesis import strategies as st

from nspca_core import certify, certify_path
from nspca_core.certificates import _settings as S
from nspca_core.certificates import path as P
from nspca_core.certificates import path_parity as PR
from nspca_core.certificates.path_dense_polish import polish_to_goal

from tests.bruteforce import brute_opt
from tests.core.certificates.test_single import _check_cert, _random_psd

_SLOW = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much]


def _forced(monkeypatch, *, polish: bool, one_k: bool = False, below: float = 1.0):
    """Make the polish work on tiny data: no floor and no per-k budget (no anchored tries, no
    certify(k) runs, none late either: path_parity.parity_runs, dnn_runs; ``one_k``: the floor as it is, which runs
    certify(k) wherever the gap is open), every k whose ratio is below ``below`` polished, a large polish
    budget; ``polish=False`` turns it off."""
    if not one_k:
        monkeypatch.setattr(S, "_PATH_FLOOR", 0.0)
        monkeypatch.setattr(S, "_PATH_DENSE_RUNS_PER_K", 0.0)
        monkeypatch.setattr(P, "parity_runs", lambda *a, **kw: [])
        monkeypatch.setattr(P, "dnn_runs", lambda *a, **kw: [])  # (certify(k)'s DNN, the path's last step: none)
    monkeypatch.setattr(S, "_POLISH_BELOW", below)
    monkeypatch.setattr(P, "_POLISH_ITERS_PER_K", 2000.0)
    cfg = dict(S._PATH["auto"], polish_runs=S._PATH["auto"]["polish_runs"] if polish else 0)
    monkeypatch.setitem(S._PATH, "auto", cfg)


def _block_matrix(rng, n, s):
    """A psd matrix whose nonnegative optimum at every k >= s is the top eigenvector of a positive
    s x s block (the rest negatively correlated with it): certify(s) proves it by the KKT point."""
    Y = np.abs(rng.standard_normal((n + 2, s))) + 0.5
    Z = rng.standard_normal((n + 2, n - s)) * 0.3 - Y.sum(axis=1, keepdims=True) * 0.2
    X = np.hstack([Y, Z])
    X -= X.mean(axis=0)
    return X


@settings(max_examples=15, deadline=None, suppress_health_check=_SLOW)
@given(st.integers(4, 8), st.integers(0, 2**31 - 1))
def test_polished_path_is_valid_and_never_looser_than_unpolished(monkeypatch, n, seed):
    """With the polish forced at every open k (and the branching where the DNN stalls): every bound
    of every k at least the brute-force OPT_k (the polished dual points and the branch proofs are
    rigorous); at every k the bound at most the unpolished path's (the polish only adds bounds)."""
    rng = np.random.default_rng(seed)
    A = _random_psd(rng, n)
    ks = list(range(1, n + 1))
    with monkeypatch.context() as m:
        _forced(m, polish=False)
        plain = certify_path(cov=A, ks=ks)
    with monkeypatch.context() as m:
        _forced(m, polish=True)
        polished = certify_path(cov=A, ks=ks)
    for c0, c in zip(plain, polished):
        opt, _ = brute_opt(A, c.k)
        _check_cert(c, opt, A)
        assert c.upper_bound <= c0.upper_bound * (1 + 1e-12), (c.k, c.kind, c0.kind)
        assert c.lower >= c0.lower * (1 - 1e-12)


@settings(max_examples=10, deadline=None, suppress_health_check=_SLOW)
@example(n=8, refresh=0, seed=50)  # (the KKT carry gated by the accepted ratio: the polished path above)
@given(st.integers(4, 8), st.sampled_from([0, 3, 10]), st.integers(0, 2**31 - 1))
def test_polish_schedules_are_valid_against_brute_force(monkeypatch, n, refresh, seed):
    """The polish's rounds as one run renewing its cuts every ``refresh`` iterations (0: rounds that
    restart the optimizer on fresh cuts) on a forced polish: every bound at least the brute-force OPT_k,
    never above the unpolished path; the renewing schedule reaches the cut rounds (``_cut_rounds(refresh=)``)."""
    from nspca_core.certificates import path_dense_polish as PP

    rng = np.random.default_rng(seed)
    A = _random_psd(rng, n)
    ks = list(range(1, n + 1))
    with monkeypatch.context() as m:
        _forced(m, polish=False)
        plain = certify_path(cov=A, ks=ks)
    seen = []
    real = P._cut_rounds

    def spy(*a, **kw):
        seen.append(kw.get("refresh", 0))
        return real(*a, **kw)

    with monkeypatch.context() as m:
        _forced(m, polish=True)
        m.setattr(PP, "REFRESH", refresh)
        m.setattr(P, "_cut_rounds", spy)
        polished = certify_path(cov=A, ks=ks)
    assert all(r in (0, refresh) for r in seen)
    for c0, c in zip(plain, polished):
        opt, _ = brute_opt(A, c.k)
        _check_cert(c, opt, A)
        assert c.upper_bound <= c0.upper_bound * (1 + 1e-12), (c.k, c.kind, c0.kind)


def test_polish_renews_its_cuts_in_one_run(monkeypatch):
    """On a 40-feature covariance the forced polish calls the cut rounds with the renewing schedule
    (path_dense_polish.REFRESH, its learning rate) and the result is never looser than unpolished."""
    from nspca_core.certificates import path_dense_polish as PP

    rng = np.random.default_rng(3)
    X = rng.standard_normal((60, 40)) + 0.4 * rng.standard_normal((60, 1))
    ks = list(range(1, 41))
    with monkeypatch.context() as m:
        _forced(m, polish=False)
        plain = certify_path(X, ks=ks)
    seen = []
    real = P._cut_rounds

    def spy(*a, **kw):
        seen.append((kw.get("refresh", 0), kw.get("lr"), kw.get("iters")))
        return real(*a, **kw)

    with monkeypatch.context() as m:
        _forced(m, polish=True)
        m.setattr(P, "_cut_rounds", spy)
        polished = certify_path(X, ks=ks)
    assert (PP.REFRESH, PP.REFRESH_LR, PP.REFRESH_ITERS) in seen
    for c0, c in zip(plain, polished):
        assert c.lower <= c.upper_bound <= c0.upper_bound * (1 + 1e-12)


def test_polish_runs_and_tightens_where_the_path_was_loose(monkeypatch):
    """On a 40-feature covariance the forced polish works (polished dual points or branch proofs at
    some k) and lowers the bound at some k; never below the feasible value."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((60, 40)) + 0.4 * rng.standard_normal((60, 1))
    ks = list(range(1, 41))
    with monkeypatch.context() as m:
        _forced(m, polish=False)
        plain = certify_path(X, ks=ks)
    with monkeypatch.context() as m:
        _forced(m, polish=True)
        polished = certify_path(X, ks=ks)
    worked = [c.k for c in polished
              if "polish" in (c.info.get("dnn") or {}) or "anchored(branch)" in c.bounds]
    assert worked
    gained = [c.k for c0, c in zip(plain, polished) if c.upper_bound < c0.upper_bound * (1 - 1e-6)]
    assert gained
    for c0, c in zip(plain, polished):
        assert c.lower <= c.upper_bound and c.upper_bound <= c0.upper_bound * (1 + 1e-12)


@settings(max_examples=10, deadline=None, suppress_health_check=_SLOW)
@given(st.integers(6, 9), st.integers(2, 4), st.integers(0, 2**31 - 1))
def test_one_k_runs_carry_their_dual_point_to_every_k(monkeypatch, n, s, seed):
    """certify(k)'s runs inside the path carry their DNN dual point (its tangent) to every k: every
    bound stays at least OPT_k, and at every k the path is at most each run's tangent there (LRS: the
    run at k = 24 proved the optimum for every k >= 24, where the path's own tangents were 2.7e-6
    above certify(k))."""
    from nspca_core.certificates.dnn import dnn_tangent

    rng = np.random.default_rng(seed)
    X = _block_matrix(rng, n, s)
    A = X.T @ X / X.shape[0]
    seen = []
    real = PR._certify_dense

    def spy(cov, k, *a, **kw):
        c, st_ = real(cov, k, *a, **kw)
        seen.append((k, c, st_))
        return c, st_

    with monkeypatch.context() as m:
        _forced(m, polish=False, one_k=True)
        # a budget of about one certify(k) run: the others' bounds come from what is carried
        m.setattr(S, "_PATH_FLOOR", 3.0 * S.dense_run_cost(n, 1, "auto"))
        m.setattr(PR, "_certify_dense", spy)  # (certify(k)'s runs: path_parity.one_k_runs)
        path = certify_path(X, ks=list(range(1, n + 1)))
    for c in path:
        opt, _ = brute_opt(A, c.k)
        _check_cert(c, opt, A)
    ks = np.arange(1, n + 1)
    assume(seen)  # (certify(k) ran inside the path: where some k's bound was open)
    for k, c, st_ in seen:
        lam = (c.info.get("dnn") or {}).get("lam")
        if st_ is None or lam is None:
            continue
        tang = dnn_tangent(float(lam), st_, n, ks)  # (X's entries are near 1: no power-of-2 copy)
        for j, cj in enumerate(path):
            assert cj.upper_bound <= tang[j] * (1 + 1e-12), (k, cj.k, cj.kind)


def _toy_run(values, gains, states):
    """A fake path for :func:`polish_to_goal`: ``values[k]`` the DNN's bound at k (the path's bound),
    each polish round multiplies it by ``gains[k]``; a fresh run adds k to ``states``."""
    calls = []

    def run(k, polish=False, **kw):
        calls.append((k, polish))
        if not polish:
            states[k] = True
            own[k] = (values[k], {}, 0.0)
            return
        values[k] *= gains[k]
        own[k] = (values[k], {}, 0.0)

    own = {k: (v, {}, 0.0) for k, v in values.items() if k in states}
    return run, own, calls


def test_polish_to_goal_works_worst_first_drops_stalls_and_branches_within_budget():
    uniq = np.array([1, 2, 3])
    pos = {1: 0, 2: 1, 3: 2}
    lows = np.array([0.95, 0.90, 0.97])
    values = {1: 1.0, 2: 1.0, 3: 1.0}
    gains = {1: 0.99, 2: 1.0, 3: 0.995}  # k = 2 never gains: the DNN stalls there
    states: dict = {1: True, 3: True}
    run, own, calls = _toy_run(values, gains, states)
    branched = []

    def branch(k, tau):
        branched.append((k, tau))
        return 0.0

    def upper():
        return np.array([values[1], values[2], values[3]])

    spent = polish_to_goal(uniq, pos, lows, upper, states, own, run, below=0.98, goal=0.98, budget=1000.0,
                           first_run=50.0, round_iters=100, branch=branch)
    assert calls[0] == (2, False)  # the worst k (0.90) first, run fresh: it had no dual point
    assert branched == [(2, pytest.approx(0.90 / 0.98))]  # stalled: one branch proof at lows / goal
    assert all(lows[pos[k]] / values[k] >= 0.98 for k in (1, 3))  # the others polished to the goal
    assert spent <= 1000.0
    # within a budget of one round nothing but the worst k's fresh run and one round fits
    values2 = {1: 1.0, 2: 1.0, 3: 1.0}
    states2: dict = {1: True, 2: True, 3: True}
    run2, own2, calls2 = _toy_run(values2, gains, states2)
    polish_to_goal(uniq, pos, lows, lambda: np.array([values2[1], values2[2], values2[3]]), states2, own2, run2,
                   below=0.98, budget=150.0, first_run=50.0, round_iters=100)
    assert calls2 == [(2, True)]


@pytest.mark.parametrize("k", [3, 5])
def test_polish_keeps_certify_k_where_it_ran(monkeypatch, k):
    """Where certify(k)'s computation ran inside the path, the bound stays at most certify(k)'s with
    the polish on (the polish only lowers bounds)."""
    rng = np.random.default_rng(k)
    A = _random_psd(rng, 7, kind="gauss")
    with monkeypatch.context() as m:
        _forced(m, polish=True, one_k=True)
        path = certify_path(cov=A, ks=list(range(1, 8)))
    assert any("one_k" in c.info for c in path)
    for c in path:
        if "one_k" in c.info:
            assert c.upper_bound <= certify(cov=A, k=c.k).upper_bound * (1 + 1e-9)


def _stalled(real):
    """``_cut_rounds`` whose polish rounds (100 iterations) gain nothing; the grid runs' own as they are."""

    def stalled(A_, k, st_, val, lower, target, rounds, **kw):
        if kw.get("iters") != 100:
            return real(A_, k, st_, val, lower, target, rounds, **kw)
        return st_, val, {"lam": kw.get("lam"), "rounds": 0, "iterations": 0}

    return stalled


@settings(max_examples=6, deadline=None, suppress_health_check=_SLOW)
@given(st.integers(9, 11), st.integers(0, 2**31 - 1))
def test_branch_where_the_dnn_stalls_is_rigorous(monkeypatch, n, seed):
    """Where the polish's DNN rounds gain nothing (here: made to), the path tries the anchored row sums
    with branching at ``lows / goal`` (next to a stalled k first, before the DNN rounds); what they
    prove is at least the brute-force OPT_k (data from a few rows plus a common factor, so that not
    every k closes)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n + 3, n)) + rng.uniform(0, 1) * rng.standard_normal((n + 3, 1))
    X -= X.mean(axis=0)
    A = X.T @ X / X.shape[0]
    with monkeypatch.context() as m:
        _forced(m, polish=True)
        m.setattr(P, "_cut_rounds", _stalled(P._cut_rounds))
        path = certify_path(cov=A, ks=list(range(1, n + 1)))
    for c in path:
        opt, _ = brute_opt(A, c.k)
        _check_cert(c, opt, A)


def test_branch_where_the_dnn_stalls_runs(monkeypatch):
    """The same on a 30-feature covariance: the branching proves a bound at some k."""
    rng = np.random.default_rng(7)
    X = rng.standard_normal((50, 30)) + 0.5 * rng.standard_normal((50, 1))

    with monkeypatch.context() as m:
        _forced(m, polish=True)
        m.setattr(P, "_cut_rounds", _stalled(P._cut_rounds))
        path = certify_path(X, ks=list(range(1, 31)))
    assert any("anchored(branch)" in c.bounds for c in path)


def test_polish_to_goal_only_where_asked():
    """``where``: the k it rejects are never run, however loose."""
    uniq = np.array([1, 2, 3])
    pos = {1: 0, 2: 1, 3: 2}
    lows = np.array([0.90, 0.95, 0.97])
    values = {1: 1.0, 2: 1.0, 3: 1.0}
    states: dict = {1: True, 2: True, 3: True}
    run, own, calls = _toy_run(values, {1: 0.99, 2: 0.99, 3: 0.99}, states)
    polish_to_goal(uniq, pos, lows, lambda: np.array([values[1], values[2], values[3]]), states, own, run,
                   below=0.98, budget=1000.0, first_run=50.0, where=lambda k: k != 1)
    assert calls and all(k != 1 for k, _ in calls)
    assert values[1] == 1.0 and lows[1] / values[2] >= 0.98


def test_polish_to_goal_reports_the_k_it_worked_on():
    """``worked``: every k given a polish round (here 1 and 3, polished to the goal, and 2, which
    stalls and is branched), none it never ran (the path's second tier skips them)."""
    uniq = np.array([1, 2, 3, 4])
    pos = {1: 0, 2: 1, 3: 2, 4: 3}
    lows = np.array([0.95, 0.90, 0.97, 0.99])
    values = {1: 1.0, 2: 1.0, 3: 1.0, 4: 1.0}
    states: dict = {1: True, 2: True, 3: True, 4: True}
    run, own, calls = _toy_run(values, {1: 0.99, 2: 1.0, 3: 0.995, 4: 0.99}, states)
    worked: set = set()
    polish_to_goal(uniq, pos, lows, lambda: np.array([values[k] for k in (1, 2, 3, 4)]), states, own, run,
                   below=0.98, goal=0.98, budget=1000.0, first_run=50.0, branch=lambda k, tau: 0.0,
                   worked=worked)
    assert worked == {k for k, polish in calls if polish} == {1, 2, 3}


@settings(max_examples=12, deadline=None, suppress_health_check=_SLOW)
@given(st.integers(6, 9), st.sampled_from([0.0, 0.25, 1.0]), st.sampled_from([0.0, 1e3, 1e5]),
       st.sampled_from([0, 1, 8]), st.integers(0, 2**31 - 1))
def test_anchored_share_and_second_tier_keep_bounds_against_brute_force(monkeypatch, n, share, floor, stop, seed):
    """The anchored tries' share of the path's budget (``_ANCHOR_SHARE``: none, a quarter, all) with a small
    counted budget (``_PATH_FLOOR``), their stop after failures in a row (``_ANCHOR_STOP_FAILS``: 0 tries
    nothing), and the polish's both tiers (the second skipping the k next to the first's): every bound at
    every k at least the brute-force OPT_k, every point feasible."""
    rng = np.random.default_rng(seed)
    A = _random_psd(rng, n)
    monkeypatch.setattr(P, "_ANCHOR_SHARE", share)
    monkeypatch.setattr(P, "_ANCHOR_STOP_FAILS", stop)
    monkeypatch.setattr(S, "_PATH_FLOOR", floor)
    monkeypatch.setattr(S, "_POLISH_BELOW", 0.999)
    for c in certify_path(cov=A, ks=list(range(1, n + 1))):
        opt, _ = brute_opt(A, c.k)
        _check_cert(c, opt, A)


def test_second_tier_skips_the_k_next_to_the_first_tiers(monkeypatch):
    """The second tier's ``where``: not at a k the first tier worked on, nor at k +- 1 (the first tier's weak
    spot spans neighbouring k), elsewhere as before (a k with a dual point whose DNN gives the bound)."""
    calls = []

    def spy(uniq, pos, lows, upper, states, own, run, **kw):
        calls.append(kw)
        if kw.get("worked") is not None:
            kw["worked"].update({3, 4})  # as if the first tier had polished k = 3 and 4
        return 0.0

    monkeypatch.setattr(P, "polish_to_goal", spy)
    n = 9
    uniq = np.arange(1, n + 1)
    pos = {int(k): i for i, k in enumerate(uniq)}
    states = {int(k): None for k in uniq}
    env, ub = np.ones(n), np.full(n, 2.0)
    P._polish(np.eye(n), uniq, pos, np.ones(n), lambda: ub, states, {}, None, env, ub, {}, S._PATH["auto"], "auto")
    assert len(calls) == 2
    where = calls[1]["where"]
    assert [k for k in range(1, n + 1) if where(k)] == [1, 6, 7, 8, 9]
    env[pos[7]] = 3.0  # the DNN does not give the bound at 7: not polished there either
    assert [k for k in range(1, n + 1) if where(k)] == [1, 6, 8, 9]

def _tries_in_order(monkeypatch, n: int, ub_value: float, order=None, out=None):
    """The dense path's anchored tries (``P._anchored_and_branched``) on an n x n identity stand-in, every k
    tried in ascending order (or in ``order``) with nothing counted against a budget (``gap_runs`` replaced),
    lower values 1 and bounds ``ub_value``: ``(uniq, anchored, rest)``."""
    uniq = np.arange(1, n + 1)
    pos = {int(k): i for i, k in enumerate(uniq)}
    lows, ub = np.ones(n), np.full(n, ub_value)

    def in_order(tried, pos, lows, upper, f, cost, budget):
        for k in (tried if order is None else order):
            f(int(k))
        return 0.0

    monkeypatch.setattr(P, "gap_runs", in_order)
    anchored, rest, _, late = P._anchored_and_branched(np.eye(n), uniq, pos, lows, np.eye(n), ub, S._PATH["auto"],
                                                 lambda: ub, "auto", 1e18)
    if out is not None:
        out["late"] = late
    return uniq, anchored, rest



def test_anchored_tries_stop_after_failures_in_a_row(monkeypatch):
    """``_ANCHOR_STOP_FAILS``: after that many tries in a row whose test ran and proved nothing, no further
    anchored call; a success resets the count (a fake ``_anchored``: None except at the k listed)."""
    calls = []

    def fake(A, k, lo, best, **kw):
        calls.append(k)
        return 2.0 * lo if k in (3, 6, 11) else None

    monkeypatch.setattr(P, "_anchored", fake)
    monkeypatch.setattr(P, "_forecast_fails", lambda *a, **kw: False)
    monkeypatch.setattr(P, "_ANCHOR_STOP_FAILS", 3)
    n = 40
    uniq, anchored, _ = _tries_in_order(monkeypatch, n, 10.0)
    tried = [int(k) for k in uniq if S.anchor_ok(n, int(k))]
    assert tried[:8] == list(range(3, 11))
    # 4, 5 failed, 6 proved (the count reset), 7, 8, 9 failed: 10 and 11 (which would prove) are never asked
    assert calls == [3, 4, 5, 6, 7, 8, 9]
    assert set(anchored) == {3, 6}


def test_late_tries_ask_where_no_test_ran_and_follow_what_they_prove(monkeypatch):
    """The late tries (``late()``, the path's last step): certify(k)'s anchored call, without the stop rules, at every
    8th k whose test never ran (here 10..40, after the stop rule), then along each k where it proves a bound."""
    calls = []
    proves = {3, 6, 17, 18, 19, 20}

    def fake(A, k, lo, best, **kw):
        calls.append(k)
        return 2.0 * lo if k in proves else None

    after = []  # then certify(k)'s bisection after its DNN (path_parity.after_dnn_anchored), here proving nothing
    monkeypatch.setattr(P, "_anchored", fake)
    monkeypatch.setattr(P, "after_dnn_anchored", lambda A, k, *a: after.append(k))
    monkeypatch.setattr(P, "_forecast_fails", lambda *a, **kw: False)
    monkeypatch.setattr(P, "_ANCHOR_STOP_FAILS", 3)
    monkeypatch.setattr(P, "_PARITY_STRIDE", 8)
    n, out = 40, {}
    uniq, anchored, _ = _tries_in_order(monkeypatch, n, 10.0, out=out)
    assert calls == [3, 4, 5, 6, 7, 8, 9]
    calls.clear()
    out["late"]()
    # seeds 10, 18, 26, 34; 18 proved: 17 (proved: 16), 19 (proved: 20, proved: 21)
    assert calls == [10, 18, 17, 16, 19, 20, 21, 26, 34]
    assert set(anchored) == proves and after == []
    # the path's very last step, late(after=True): at every tried k whose try did not prove (ratio 0.1, below the
    # polish's goal), in order, once each
    out["late"](after=True)
    tried = [k for k in range(1, n + 1) if S.anchor_ok(n, k)]
    assert after == [k for k in tried if k not in proves]


def test_finer_bisection_at_every_tried_k_the_coarse_steps_left_open(monkeypatch):
    """After the refinement (``rest``), the finer anchored bisection runs at every tried k where certify(k)'s call
    left more than ``_ANCHOR_FINE`` (relative) between the feasible value and what it proved -- above the polish's
    goal too (issue 39, helper imgpath14: 24 x 24 images k = 17 at 0.985, 3e-4 above certify(17), whose coarse steps
    from another feasible value landed lower): at k = 3 certify(k)'s call certified 0.99, at k = 4 0.975, at k = 5
    0.999 (finer, from that call's last failed test; the bound proved is kept there), at k = 6 1 - _ANCHOR_FINE / 2
    (nothing finer: within the finer steps already); above the goal the finer steps are _ANCHOR_FINE_TOP."""
    from nspca_core.certificates.path_dense_polish import GOAL

    ratios = {3: 0.99, 4: 0.975, 5: 0.999, 6: 1.0 - P._ANCHOR_FINE / 2}
    finer = []

    def fake(A, k, lo, best, carry=None, **kw):
        carry.update({"rows": k, "tau": lo * (1.0 + P._ANCHOR_FINE / 4), "r": None})
        return lo / ratios[k] if k in ratios else None

    rels = {}

    def fake_bisection(rows, lo, top, rel, tau_lo=None, r_lo=None):
        finer.append(rows)
        rels[rows] = rel
        return lo / min(ratios[rows] + 0.0005, 1.0), tau_lo, r_lo

    monkeypatch.setattr(P, "_anchored", fake)
    monkeypatch.setattr(P, "_forecast_fails", lambda *a, **kw: False)
    monkeypatch.setattr(P, "anchored_bisection", fake_bisection)
    monkeypatch.setattr(P, "anchored_rowsum_bound", lambda *a, **kw: None)
    n = 7
    uniq, anchored, rest = _tries_in_order(monkeypatch, n, 2.0)
    rest(lambda i: 2.0)
    assert ratios[3] >= GOAL > ratios[4] and finer == [3, 4, 5]
    # above the goal (nothing lowers the bound there after it) to _ANCHOR_FINE_TOP; below it, or within two of
    # certify(k)'s steps of optimal (k = 5), to _ANCHOR_FINE as before
    assert rels == {3: P._ANCHOR_FINE_TOP, 4: P._ANCHOR_FINE, 5: P._ANCHOR_FINE}
    assert anchored[3] == 1 / (ratios[3] + 0.0005) and anchored[4] == 1 / (ratios[4] + 0.0005)
    assert anchored[5] == 1 / (ratios[5] + 0.0005) and anchored[6] == 1 / ratios[6]


def test_anchored_forecast_only_where_no_neighbour_proved(monkeypatch):
    """certify(k)'s forecast (``_forecast_fails``) is asked only at a tried k with no neighbour (k +- 1) whose
    test proved a bound; next to one, the test runs at once (a fake ``_anchored`` proving at k = 3, 4, 8 and
    a fake forecast failing at k = 6, 7: asked at 3, 6, 7, 8 and 10..12; the tests run everywhere else)."""
    asked, ran = [], []

    def fake(A, k, lo, best, **kw):
        ran.append(k)
        return 2.0 * lo if k in (3, 4, 8) else None

    def forecast(A, k, x, tau, cfg):
        asked.append(k)
        return k in (6, 7)

    monkeypatch.setattr(P, "_anchored", fake)
    monkeypatch.setattr(P, "_forecast_fails", forecast)
    monkeypatch.setattr(P, "_ANCHOR_STOP_FAILS", 99)
    monkeypatch.setattr(P, "_ANCHOR_FAILED_BELOW", 99)  # (that rule: the next test)
    n = 12
    uniq, anchored, _ = _tries_in_order(monkeypatch, n, 10.0)
    assert [int(k) for k in uniq if S.anchor_ok(n, int(k))] == list(range(3, 13))
    assert asked == [3, 6, 7, 8, 10, 11, 12]
    assert ran == [3, 4, 5, 8, 9, 10, 11, 12]
    assert set(anchored) == {3, 4, 8}


def test_anchored_try_skipped_above_failed_tests(monkeypatch):
    """``_ANCHOR_FAILED_BELOW``: a try is not made where the 3 nearest k below it whose test ran all proved
    nothing; it counts as made and failed (in ``rest``'s k, not in the stop-after-failures count).  A fake
    ``_anchored`` proving only at k = 6, tries in the order 4, 5, 6, 12, 3, 8, 10, 11, 13, 14: 12 runs (6 below
    it proved), 8, 10, 11 run (6 among their 3 nearest below), 13 and 14 not (10, 11, 12 failed)."""
    calls, after = [], []

    def fake(A, k, lo, best, **kw):
        calls.append(k)
        return lo if k == 6 else None  # (optimal: nothing finer to prove)

    monkeypatch.setattr(P, "_anchored", fake)
    monkeypatch.setattr(P, "_forecast_fails", lambda *a, **kw: False)
    monkeypatch.setattr(P, "_ANCHOR_STOP_FAILS", 99)
    monkeypatch.setattr(P, "anchored_rowsum_bound", lambda A, k, lo, ub: after.append(k))
    monkeypatch.setattr(P, "weak_branch", lambda *a, **kw: {})
    n = 40
    order = [4, 5, 6, 12, 3, 8, 10, 11, 13, 14]
    assert all(S.anchor_ok(n, k) for k in order)

    uniq, anchored, rest = _tries_in_order(monkeypatch, n, 10.0, order=order)
    assert calls == [4, 5, 6, 12, 3, 8, 10, 11]
    assert set(anchored) == {6}
    rest(lambda i: 10.0)
    # after the refinement the skipped k are treated as the failed ones (6, proved optimal, is closed)
    assert after == [k for k in order if k != 6]
