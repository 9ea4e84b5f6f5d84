"""The exact mode's time limit bounds the whole call (issue 40, item 6) and its best bound is
reported as it improves (issue 39, item 3): wherever a run stops, what it returns and what it
reported are valid bounds (brute force on tiny inputs), and the partial tree's bound never rises.

Stops are made deterministic with a fake clock that advances a fixed step per reading: the
steps drawn by hypothesis stop the call at every stage (before A is formed, after the cheap
bounds, inside the DNN, inside the branch and bound)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nspca_core import certify
from nspca_core.operators.cov import Cov
from nspca_core.certificates.budget import BoundReport, Budget, takes_bound
from nspca_core.certificates.dual import _kkt_point, _screen_init
from nspca_core.certificates.exact import EXACT_TOLERANCE, branch_and_bound
from nspca_core.certificates.route import certify_exact
from nspca_core.certificates.single import _variances_bound

from tests.bruteforce import brute_opt
from tests.core.certificates.test_single import _random_psd

TINY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


class FakeClock:
    """Advances ``tick`` seconds at every reading."""

    def __init__(self, tick: float):
        self.t, self.tick = 0.0, float(tick)

    def __call__(self) -> float:
        self.t += self.tick
        return self.t


def _data(rng, n):
    m = int(rng.integers(2, n + 3))
    X = rng.standard_normal((m, n)) * rng.random(n) * 3
    if rng.random() < 0.3:
        X = np.abs(X)
    X -= X.mean(axis=0)
    return X, X.T @ X / m


@TINY
@given(st.integers(2, 8), st.integers(0, 2**31 - 1), st.floats(1e-4, 0.2), st.booleans())
def test_a_call_stopped_anywhere_returns_and_reports_valid_bounds(n, seed, tick, as_data):
    rng = np.random.default_rng(seed)
    X, A = _data(rng, n)
    k = int(rng.integers(1, n + 1))
    opt, _ = brute_opt(A, k)
    scale = max(1.0, float(np.abs(A).max()))
    seen = []
    cov = Cov(X, None) if as_data else Cov(None, A)
    budget = Budget(1.0, clock=FakeClock(tick))
    c = certify_exact(cov, k, None, 1.0, lambda d, t, bound: seen.append(bound), budget=budget)
    assert c.upper_bound >= opt - 1e-9 * scale
    assert c.lower <= opt + 1e-9 * scale
    assert c.x.min() >= 0 and np.count_nonzero(c.x) <= k
    assert c.lower == pytest.approx(float(c.x @ A @ c.x), rel=1e-9, abs=1e-12 * scale)
    assert all(b >= opt - 1e-9 * scale for b in seen)
    assert all(b2 <= b1 for b1, b2 in zip(seen, seen[1:]))  # the best so far: never rises
    assert seen and seen[-1] == pytest.approx(c.upper_bound, rel=1e-12)


@TINY
@given(st.integers(3, 8), st.integers(0, 2**31 - 1), st.sampled_from(["kkt", "screen", "none"]))
def test_a_partial_tree_bound_is_valid_and_falls_with_the_nodes(n, seed, dual):
    """Stopped after j nodes for every j: the tree's bound (not the root's) is above the optimum
    and never rises with j (up to the tolerance tau moves by when a leaf improves the point)."""
    rng = np.random.default_rng(seed)
    A = _random_psd(rng, n, kind=str(rng.choice(["gauss", "abs", "sparse"])))
    k = int(rng.integers(2, n))
    opt, _ = brute_opt(A, k)
    scale = max(1.0, float(np.abs(A).max()))
    i = int(np.argmax(np.diag(A)))
    if A[i, i] <= 0:
        return
    x = np.zeros(n)
    x[i] = 1.0
    state = {"kkt": lambda: _kkt_point(A, k, x)[1], "screen": lambda: _screen_init(A, k),
             "none": lambda: None}[dual]()
    full = branch_and_bound(A, k, x, float(A[i, i]), state, time_limit=1e9)
    last = np.inf
    for j in range(1, min(full["nodes"], 60) + 1):
        seen = []
        bb = branch_and_bound(A, k, x, float(A[i, i]), state, time_limit=1e9, max_nodes=j,
                              callback=lambda d, t, bound: seen.append(bound))
        assert bb["upper"] >= opt - 1e-9 * scale
        assert all(b >= opt - 1e-9 * scale for b in seen)
        assert bb["upper"] <= last * (1 + 2 * EXACT_TOLERANCE) + 1e-12 * scale
        last = min(last, bb["upper"])
    assert full["upper"] >= opt - 1e-9 * scale


def test_the_tree_improves_on_the_root_when_stopped():
    """A search stopped before closing returns a bound below its root's DNN value (the open nodes'
    bounds), on an instance whose tree needs many nodes."""
    rng = np.random.default_rng(7)
    improved = 0
    for _ in range(8):
        A = _random_psd(rng, 12, kind="gauss")
        k = 4
        i = int(np.argmax(np.diag(A)))
        x = np.zeros(12)
        x[i] = 1.0
        st_ = _kkt_point(A, k, x)[1]
        one = branch_and_bound(A, k, x, float(A[i, i]), st_, time_limit=1e9, max_nodes=1)
        many = branch_and_bound(A, k, x, float(A[i, i]), st_, time_limit=1e9, max_nodes=40)
        opt, _ = brute_opt(A, k)
        assert many["upper"] >= opt * (1 - 1e-12)
        improved += many["upper"] < one["upper"] * (1 - 1e-6)
    assert improved >= 1


def test_callback_forms_and_the_callers_scale():
    """``callback(done, total)`` keeps working; one taking ``bound`` gets the best bound so far in
    the caller's scale (input scaled by 2^40: the certificate works on a normalized copy)."""
    rng = np.random.default_rng(5)
    A = _random_psd(rng, 7, kind="gauss") * 2.0 ** 40
    plain, bounds = [], []
    c1 = certify(cov=A, k=3, effort="exact", time_limit=30, callback=lambda d, t: plain.append((d, t)))
    c2 = certify(cov=A, k=3, effort="exact", time_limit=30, callback=lambda d, t, bound=None: bounds.append(bound))
    assert plain and all(len(p) == 2 for p in plain)
    assert bounds and bounds[-1] == pytest.approx(c2.upper_bound, rel=1e-12)
    assert c1.upper_bound == c2.upper_bound
    opt, _ = brute_opt(A, 3)
    assert min(bounds) >= opt * (1 - 1e-9)


def test_takes_bound():
    assert takes_bound(lambda d, t, bound: None)
    assert takes_bound(lambda d, t, **kw: None)
    assert not takes_bound(lambda d, t: None)
    assert not takes_bound(lambda *a: None)
    assert not takes_bound(None)
    r = BoundReport(lambda d, t, bound: None)
    assert r.offer(3.0) == 3.0 and r.offer(5.0) == 3.0 and r.through(lambda b: 2 * b).offer(1.0) == 2.0


@TINY
@given(st.lists(st.floats(-1.0, 10.0), min_size=1, max_size=10), st.integers(1, 10))
def test_variances_bound_is_above_every_sparse_quadratic_form(vals, k):
    """``sum of the k largest variances >= lambda_max(A_JJ)`` for every |J| <= k (A psd)."""
    rng = np.random.default_rng(len(vals))
    n = len(vals)
    B = rng.standard_normal((n, n)) * np.sqrt(np.abs(vals))
    A = B.T @ B
    kk = min(k, n)
    opt, _ = brute_opt(A, kk)
    assert _variances_bound(np.diag(A), kk) >= opt * (1 - 1e-12)


def test_split_exact_with_a_budget_valid_on_tiny_instances(monkeypatch):
    """Above the dense limit the exact mode is the split bound with the branch and bound on S run
    last under the budget, its bound put back into the coupled bound: valid wherever it stops."""
    S = importlib.import_module("nspca_core.certificates._settings")
    monkeypatch.setattr(S, "_DENSE_MAX_N", 2)
    monkeypatch.setattr(S, "_LOWRANK_MAX_RANK", 0)
    monkeypatch.setitem(S._EFFORT["auto"], "split_size", 4)
    monkeypatch.setattr(S, "_SPLIT_MIN", 4)
    rng = np.random.default_rng(12)
    for i in range(24):
        n = int(rng.integers(5, 9))
        X, A = _data(rng, n)
        k = int(rng.integers(2, 5))
        opt, _ = brute_opt(A, k)
        scale = max(1.0, float(np.abs(A).max()))
        seen = []
        tick = [1e-4, 1e-3, 1e-2, 0.05][i % 4]
        c = certify_exact(Cov(X, None), k, None, 1.0, lambda d, t, bound: seen.append(bound),
                          budget=Budget(1.0, clock=FakeClock(tick)))
        assert c.upper_bound >= opt - 1e-9 * scale
        assert c.lower <= opt + 1e-9 * scale
        assert all(b >= opt - 1e-9 * scale for b in seen)
        assert c.x.min() >= 0 and np.count_nonzero(c.x) <= k
