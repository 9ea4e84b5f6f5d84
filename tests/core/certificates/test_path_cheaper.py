"""The dense path made cheaper (issue 39 item 2, session 5): the branching first next to a k where the
DNN stalled (:func:`nspca_core.certificates.path_dense_polish.polish_to_goal`'s ``near``), and
certify(k)'s anchored forecast gating the path's anchored tries.  Neither proves anything new: the
bounds stay at least the brute-force optimum, and each rule only decides what is tried first or skipped."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core import certify_path
from nspca_core.certificates import dual as D
from nspca_core.certificates import path as P
from nspca_core.certificates.anchor import anchored_branch_bound
from nspca_core.certificates.path_dense_polish import polish_to_goal, stalled_near

from tests.bruteforce import brute_opt
from tests.core.certificates.test_path_dense_polish import _SLOW, _toy_run
from tests.core.certificates.test_single import _check_cert, _random_psd


def _near_brute(k, stalled, gained, near):
    """The rule by its words: among the k polished within ``near`` (other than k), those nearest; the
    branching first only when there are some and one of them stalled."""
    polished = sorted(j for j in set(stalled) | set(gained) if j != k and abs(j - k) <= near)
    if not polished:
        return False
    d = min(abs(j - k) for j in polished)
    return any(j in stalled for j in polished if abs(j - k) == d)


@given(st.integers(1, 12), st.sets(st.integers(1, 12)), st.sets(st.integers(1, 12)), st.integers(0, 3))
def test_stalled_near_is_its_definition(k, stalled, gained, near):
    assert stalled_near(k, stalled, gained, near) == _near_brute(k, stalled, gained, near)


def _toy(gains, lows):
    uniq = np.array(sorted(gains))
    pos = {int(k): i for i, k in enumerate(uniq)}
    values = {k: 1.0 for k in gains}
    states = {k: True for k in gains}
    run, own, calls = _toy_run(values, gains, states)
    return uniq, pos, np.array([lows[k] for k in uniq]), values, states, own, run, calls


@pytest.mark.parametrize("closes", [True, False])
def test_branch_first_next_to_a_stall(closes):
    """k = 2 stalls (no round gains) and is branched; its neighbours 1 and 3 are then branched first,
    before any DNN round (``near=2``); k = 10, far from it, is polished.  Where the branching closes
    a k (``closes``), no round runs there; where it does not, the rounds follow and the k is not
    branched a second time.  With ``near=0`` (the default) the neighbours get their rounds first."""
    gains = {1: 0.97, 2: 1.0, 3: 0.97, 10: 0.97}
    lows = {1: 0.93, 2: 0.90, 3: 0.94, 10: 0.95}
    uniq, pos, lo, values, states, own, run, calls = _toy(gains, lows)
    branched = []

    def branch(k, tau):
        branched.append(k)
        if closes:
            values[k] = min(values[k], tau)
            own[k] = (values[k], {}, 0.0)
        return 0.0

    def upper():
        return np.array([values[int(k)] for k in uniq])

    polish_to_goal(uniq, pos, lo, upper, states, own, run, below=0.98, goal=0.98, budget=1e4, first_run=50.0,
                   branch=branch, near=2)
    rounds = [k for k, polish in calls if polish]
    assert sorted(branched) == [1, 2, 3] and branched[0] == 2 and len(set(branched)) == len(branched)
    assert 10 in rounds and rounds.count(2) == 1  # k = 2: one round gaining nothing, then the branch
    if closes:
        assert 1 not in rounds and 3 not in rounds
    else:
        assert 1 in rounds and 3 in rounds
    for k in (1, 3, 10):
        assert lo[pos[k]] / values[k] >= 0.98 - 1e-12
    # the default: no branching first
    uniq, pos, lo, values, states, own, run, calls = _toy(gains, lows)
    branched.clear()
    polish_to_goal(uniq, pos, lo, upper, states, own, run, below=0.98, goal=0.98, budget=1e4, first_run=50.0,
                   branch=branch)
    assert branched == [2] and {1, 3} <= {k for k, polish in calls if polish}


def _count_anchored(m):
    calls = []
    real = P._anchored

    def counted(*a, **kw):
        calls.append(a[1])
        return real(*a, **kw)

    m.setattr(P, "_anchored", counted)
    return calls


def test_forecast_gates_the_paths_anchored_tries(monkeypatch):
    """Where certify(k)'s forecast says the anchored test fails, the path does not run certify(k)'s
    anchored call (as certify(k) does not); elsewhere it does."""
    rng = np.random.default_rng(3)
    A = _random_psd(rng, 12, kind="gauss")
    ks = list(range(1, 13))
    with monkeypatch.context() as m:
        calls = _count_anchored(m)
        certify_path(cov=A, ks=ks)
    assert calls
    with monkeypatch.context() as m:
        calls = _count_anchored(m)
        m.setattr(P, "_forecast_fails", lambda *a: True)
        certify_path(cov=A, ks=ks)
    assert not calls


@settings(max_examples=10, deadline=None, suppress_health_check=_SLOW)
@given(st.integers(5, 9), st.integers(0, 2**31 - 1))
def test_forecast_gated_path_is_rigorous(monkeypatch, n, seed):
    """The forecast switched on at any size (it skips tests, never proves): every bound at least the
    brute-force OPT_k."""
    rng = np.random.default_rng(seed)
    A = _random_psd(rng, n)
    with monkeypatch.context() as m:
        m.setattr(D, "_FORECAST_MIN_N", 0)
        m.setattr(D, "_FORECAST_SHARE", 10.0)
        path = certify_path(cov=A, ks=list(range(1, n + 1)))
    for c in path:
        opt, _ = brute_opt(A, c.k)
        _check_cert(c, opt, A)


@settings(max_examples=40, deadline=None, suppress_health_check=_SLOW)
@given(st.integers(4, 9), st.integers(1, 5), st.sampled_from([1, 2, 8, 40]), st.floats(0.9, 1.1),
       st.integers(0, 2**31 - 1))
def test_branching_with_few_node_iterations_is_rigorous(n, k, node_iters, scale, seed):
    """The path's branchings give each node ``node_iters`` row-sum iterations before splitting it: a
    proof of ``OPT_k <= tau`` is still one (brute force), at any ``tau`` around the optimum."""
    k = min(k, n)
    rng = np.random.default_rng(seed)
    A = _random_psd(rng, n)
    opt, _ = brute_opt(A, k)
    tau = opt * scale
    tb = anchored_branch_bound(A, k, [tau], budget=200, node_iters=node_iters)
    if tb is not None:
        assert opt <= tb * (1 + 1e-12) + 1e-12


def test_branching_with_few_node_iterations_still_proves():
    """On a 40-feature covariance with a common factor the branching at 1.001 x the optimum of k = 4 proves
    with 8 iterations a node as with 40, within the same node budget."""
    rng = np.random.default_rng(11)
    X = rng.standard_normal((60, 40)) + 0.6 * rng.standard_normal((60, 1))
    X -= X.mean(axis=0)
    A = X.T @ X / X.shape[0]
    opt = certify_path(cov=A, ks=[4])[0].lower
    tau = opt * 1.001
    assert anchored_branch_bound(A, 4, [tau], budget=300) is not None
    assert anchored_branch_bound(A, 4, [tau], budget=300, node_iters=8) is not None


def test_worked_includes_the_fresh_runs():
    """A k the polish had to run fresh (no dual point there) is reported as worked on, even where that run
    alone reached the goal (the path's second tier skips it: a run like certify(k)'s left it below the
    goal), as the polished ones."""
    gains = {1: 0.97, 5: 0.97}
    uniq, pos, lo, values, states, own, run, calls = _toy(gains, {1: 0.95, 5: 0.96})
    del states[5]

    def run2(k, polish=False, **kw):
        run(k, polish=polish, **kw)
        if not polish:  # the fresh run itself gains
            values[k] *= gains[k]
            own[k] = (values[k], {}, 0.0)

    worked: set = set()
    polish_to_goal(uniq, pos, lo, lambda: np.array([values[int(k)] for k in uniq]), states, own, run2, below=0.98,
                   goal=0.98, budget=1e4, first_run=50.0, worked=worked)
    assert calls.count((5, False)) == 1 and (5, True) not in calls and worked == {1, 5}
