"""effort="exact" (issue 28): branch and bound over supports; a pruned node never held a better support."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nspca_core import InputError, certify, certify_path
from nspca_core.certificates.dnn import DnnState
from nspca_core.certificates.dual import _kkt_point, _screen_init
from nspca_core.certificates.exact import EXACT_TOLERANCE, _Nodes, branch_and_bound

from tests.bruteforce import brute_opt
from tests.core.certificates.test_single import _random_psd

TINY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _stationary_values(A, J):
    """Eigenvalues of A_JJ with a positive eigenvector (the values of stationary points on J)."""
    J = list(J)
    w, U = np.linalg.eigh(A[np.ix_(J, J)])
    out = []
    for j in range(len(J)):
        u = U[:, j] * np.sign(U[:, j].sum() or 1.0)
        if u.min() > 1e-9:
            out.append(float(w[j]))
    return out


def _node_max(A, k, inc, exc):
    """The largest stationary value over supports J with I ⊆ J ⊆ F, |J| <= k, by enumeration."""
    n = A.shape[0]
    I = set(np.flatnonzero(inc).tolist())
    free = [i for i in range(n) if not exc[i] and i not in I]
    best = -np.inf
    for size in range(0, k - len(I) + 1):
        for extra in combinations(free, size):
            J = sorted(I | set(extra))
            if J:
                best = max([best] + _stationary_values(A, J))
    return best


def _node(rng, n, k):
    inc = np.zeros(n, dtype=bool)
    exc = np.zeros(n, dtype=bool)
    perm = rng.permutation(n)
    ni = int(rng.integers(0, k + 1))
    ne = int(rng.integers(0, n - ni + 1))
    inc[perm[:ni]] = True
    exc[perm[ni:ni + ne]] = True
    return inc, exc


@TINY
@given(st.integers(2, 7), st.integers(0, 2**31 - 1), st.floats(0.9, 1.1))
def test_a_pruned_node_never_held_a_better_support(n, seed, f):
    rng = np.random.default_rng(seed)
    A = _random_psd(rng, n)
    k = int(rng.integers(1, n + 1))
    opt, x = brute_opt(A, k)
    state = _screen_init(A, k) if rng.random() < 0.5 else _kkt_point(A, k, x)[1]
    nodes = _Nodes(A, k, state)
    scale = max(1.0, float(np.abs(A).max()))
    for _ in range(4):
        inc, exc = _node(rng, n, k)
        if int(inc.sum()) > k:
            continue
        true = _node_max(A, k, inc, exc)
        tau = f * (true if np.isfinite(true) else opt)
        if nodes.rowsum_refutes(tau, inc, exc):
            assert true <= tau + 1e-9 * scale
        F = ~exc
        if F.any():
            refuted, val, _ = nodes.dnn_value(F, tau)
            sub = np.flatnonzero(F)
            best_F, _ = brute_opt(A[np.ix_(sub, sub)], min(k, sub.size))
            if refuted:
                assert best_F <= tau + 1e-9 * scale
            else:
                assert val >= best_F - 1e-9 * scale
        if inc.any():
            ub, xl = nodes.leaf(inc)
            for v in _stationary_values(A, np.flatnonzero(inc)):
                assert ub >= v - 1e-9 * scale
            if xl is not None:
                assert xl.min() >= 0 and np.count_nonzero(xl) <= int(inc.sum())


@TINY
@given(st.integers(2, 8), st.integers(0, 2**31 - 1))
def test_exact_is_an_upper_bound_and_optimal_means_optimal(n, seed):
    rng = np.random.default_rng(seed)
    A = _random_psd(rng, n)
    k = int(rng.integers(1, n + 1))
    opt, _ = brute_opt(A, k)
    c = certify(cov=A, k=k, effort="exact", time_limit=20)
    scale = max(1.0, float(np.abs(A).max()))
    assert c.upper_bound >= opt - 1e-9 * scale
    assert c.lower <= opt + 1e-9 * scale
    assert c.tolerance == EXACT_TOLERANCE
    assert c.info["gap"] == pytest.approx((c.upper_bound - c.lower) / c.upper_bound if c.upper_bound > 0 else 0.0)
    if c.optimal:
        assert c.lower >= opt * (1 - 2 * EXACT_TOLERANCE) - 1e-9 * scale
    assert c.x.min() >= 0 and np.count_nonzero(c.x) <= k


def test_branch_and_bound_from_a_poor_point_finds_the_optimum_and_proves_it():
    """Started from the worst coordinate vector with no dual point, the search itself must find
    the optimal support at a leaf and close every node."""
    rng = np.random.default_rng(3)
    for _ in range(6):
        n = int(rng.integers(4, 9))
        A = _random_psd(rng, n, kind=str(rng.choice(["gauss", "abs", "sparse"])))
        k = int(rng.integers(2, n))
        opt, _ = brute_opt(A, k)
        i = int(np.argmin(np.diag(A) + (np.diag(A) <= 0) * 1e9))
        if A[i, i] <= 0:
            continue
        x = np.zeros(n)
        x[i] = 1.0
        calls = []
        bb = branch_and_bound(A, k, x, float(A[i, i]), None, time_limit=30,
                              callback=lambda d, t: calls.append((d, t)))
        assert bb["complete"]
        assert bb["lower"] >= opt * (1 - 1e-9)
        assert bb["upper"] >= opt * (1 - 1e-12)
        assert bb["upper"] <= bb["lower"] * (1 + EXACT_TOLERANCE)
        assert calls and calls[-1][0] == bb["nodes"]


def test_node_budget_exhausted_reports_a_valid_bound_and_not_optimal():
    rng = np.random.default_rng(4)
    A = _random_psd(rng, 9, kind="gauss")
    k = 4
    opt, _ = brute_opt(A, k)
    x = np.zeros(9)
    x[int(np.argmax(np.diag(A)))] = 1.0
    bb = branch_and_bound(A, k, x, float(np.diag(A).max()), DnnState(np.zeros((9, 9)), 0.0),
                          time_limit=30, max_nodes=1)
    if not bb["complete"]:
        assert bb["open"] > 0
        assert bb["upper"] >= opt * (1 - 1e-12)


@pytest.mark.parametrize("kwargs, match", [
    (dict(effort="auto", time_limit=5), "applies to effort='exact' only"),
    (dict(effort="exact", time_limit=0), "positive number of seconds"),
    (dict(effort="exact", time_limit="1"), "positive number of seconds"),
    (dict(effort="exact", time_limit=float("inf")), "positive number of seconds"),
    (dict(effort="proof"), r"got 'proof' \(or 'exact' for one k: branch and bound\)"),
])
def test_time_limit_validation(kwargs, match):
    A = np.eye(3)
    with pytest.raises(InputError, match=match):
        certify(cov=A, k=2, **kwargs)


def test_path_refuses_exact():
    with pytest.raises(InputError, match="'exact' is for one k"):
        certify_path(cov=np.eye(3), ks=[1, 2], effort="exact")


def test_real_lrs_small_k_proved_optimal(lrs_X):
    for k in (3, 4):
        c = certify(lrs_X, k=k, effort="exact", time_limit=60)
        assert c.optimal and c.info["gap"] <= EXACT_TOLERANCE
        assert c.info["nodes"] >= 0


def test_split_bound_with_branch_on_S_valid_on_tiny_instances(monkeypatch):
    """The split bound's branch and bound on S (effort "auto", and "exact" above the dense limit)
    against brute force: the bound holds, a point it finds is feasible, the S part is closed."""
    import importlib

    S = importlib.import_module("nspca_core.certificates._settings")
    monkeypatch.setattr(S, "_DENSE_MAX_N", 2)
    monkeypatch.setattr(S, "_LOWRANK_MAX_RANK", 0)
    monkeypatch.setitem(S._EFFORT["auto"], "split_size", 4)
    monkeypatch.setattr(S, "_SPLIT_MIN", 4)
    rng = np.random.default_rng(11)
    closed = 0
    for i in range(30):
        n = int(rng.integers(5, 9))
        m = int(rng.integers(2, n + 2))
        X = rng.standard_normal((m, n)) * rng.random(n) * 3
        if i % 3 == 0:
            X = np.abs(X)
        A = X.T @ X / m
        k = int(rng.integers(2, 5))
        opt, _ = brute_opt(A, k)
        for effort in ("auto", "exact"):
            c = certify(X, k=k, effort=effort, center=False)
            scale = max(1.0, float(np.abs(A).max()))
            assert c.upper_bound >= opt - 1e-9 * scale
            assert c.lower <= opt + 1e-9 * scale
            assert c.x.min() >= 0 and np.count_nonzero(c.x) <= k
            assert float(c.x @ A @ c.x) == pytest.approx(c.lower, rel=1e-9, abs=1e-12 * scale)
            closed += bool(c.info.get("split_branch", {}).get("complete"))
    assert closed > 0  # the branch on S ran and closed somewhere


@pytest.mark.parametrize("nodes", [1, 2, 3])
def test_split_branch_on_S_stops_at_its_node_budget_with_a_valid_bound(monkeypatch, nodes):
    """"auto"'s tree on the split bound's S is limited by a node count (not a clock): it stops
    after ``split_branch_nodes`` nodes, its bound still above brute force, and the same input gives
    the same certificate twice."""
    import importlib

    S = importlib.import_module("nspca_core.certificates._settings")
    monkeypatch.setattr(S, "_DENSE_MAX_N", 2)
    monkeypatch.setattr(S, "_LOWRANK_MAX_RANK", 0)
    monkeypatch.setitem(S._EFFORT["auto"], "split_size", 6)
    monkeypatch.setitem(S._EFFORT["auto"], "split_branch_nodes", nodes)
    monkeypatch.setattr(S, "_SPLIT_MIN", 6)
    rng = np.random.default_rng(5)
    ran = 0
    for _ in range(25):
        n = int(rng.integers(7, 10))
        X = rng.standard_normal((n + 1, n)) * rng.random(n) * 3
        A = X.T @ X / X.shape[0]
        k = int(rng.integers(2, 5))
        opt, _ = brute_opt(A, k)
        c1 = certify(X, k=k, center=False)
        c2 = certify(X, k=k, center=False)
        assert c1.upper_bound == c2.upper_bound and c1.lower == c2.lower
        assert c1.upper_bound >= opt - 1e-9 * max(1.0, float(np.abs(A).max()))
        tree = c1.info.get("split_branch")
        if tree is not None:
            ran += 1
            assert tree["nodes"] <= nodes
    assert ran > 0
