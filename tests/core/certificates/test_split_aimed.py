"""Issue 39 item 1 on wide data (helper i-mllc): the split certificate made cheaper must stay an upper
bound.  Against brute force on tiny inputs: the aimed refinements of the coupled bound
(``coupled._aimed``: since gcert, every binding sparsity in one joint test, tests/core/certificates/
test_joint_anchor.py), the goal value of one term (``coupled._meets``), the tree on S that skips
hopeless DNN node bounds (``exact.branch_and_bound(dnn_hope=)``, narrow row lists), and the cross
table's variance screen (``cross._screen``)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from nspca_core.certificates import coupled, cross
from nspca_core.certificates.dual import _kkt_point, _screen_init
from nspca_core.certificates.exact import _Nodes, branch_and_bound
from nspca_core.operators.cov import Cov

from tests.bruteforce import brute_opt
from tests.core.certificates.test_exact import _node, _node_max
from tests.core.certificates.test_single import _random_psd

TINY = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@given(st.floats(0, 1e6), st.floats(0, 1e6), st.floats(0, 1e6), st.floats(1e-3, 1e6))
def test_meets_brings_the_term_to_the_goal(a0, b, c, goal):
    """The value ``_meets`` returns makes the coupled term at most the goal (it only chooses where to
    test, but a test there that holds must meet it)."""
    a = coupled._meets(goal, b, c)
    if b >= goal:
        assert a == -np.inf
        return
    assert a > 0
    assert float(cross.coupled_terms(a, b, c)) <= goal * (1 + 1e-12)
    if a0 < a:  # any smaller B_S(i) too (the terms are nondecreasing in it)
        assert float(cross.coupled_terms(a0, b, c)) <= goal * (1 + 1e-12)


# ---- the aimed refinements


def _direct_case(seed: int, beta: float, aim: float = 1.0):
    """``coupled._aimed`` on a small psd ``A_SS`` (n_S = 6..8, k = 4..n_S): S's bound a hair above its
    optimum at k, ``B_S(i)`` otherwise only the variance sums (no DNN tangent), and a rest curve rising
    by ``beta`` x OPT per member, so the terms at i = 3..k - 1 sit above the goal and are tested.
    Returns ``(A_SS, sharper, k, value)``."""
    from types import SimpleNamespace

    rng = np.random.default_rng(seed)
    nS = int(rng.integers(6, 9))
    AS = _random_psd(rng, nS, kind=str(rng.choice(["gauss", "abs", "sparse"])))
    k = int(rng.integers(4, nS + 1))
    opt, xo = brute_opt(AS, k)
    certS = SimpleNamespace(upper_bound=opt * 1.001, info={}, x=xo)
    BT = beta * opt * np.arange(k + 1, dtype=float)
    sharper: dict = {}
    val = coupled._aimed(Cov(A=AS), certS, None, k, BT, k, None, None, 0.99 * opt, aim, sharper)
    return AS, sharper, k, val


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**31 - 1), st.floats(1e-3, 0.3), st.sampled_from([0.9, 0.975, 1.0]))
def test_aimed_refinements_hold_against_bruteforce(seed, beta, aim):
    """Every ``B_S(i)`` the aimed tests proved is at least S's optimum at sparsity i (enumeration), and
    the coupled value is at least every term's with the true optima in place of ``B_S(i)``."""
    AS, sharper, k, val = _direct_case(seed, beta, aim)
    assume(np.abs(AS).max() > 0)
    for i, b in sharper.items():
        assert b >= brute_opt(AS, i)[0] * (1 - 1e-12), (i, b)


def test_aimed_tests_run_and_a_false_proof_would_be_caught(monkeypatch):
    """The aimed tests do prove values on these inputs (finite ``B_S(i)``), and the brute-force check
    above fails when a test claims every goal value (the joint test forced to hold, no feasible-value
    guard)."""
    proved, broken = 0, 0
    for seed in range(12):
        beta = (0.01, 0.05, 0.1)[seed % 3]
        AS, sharper, k, _ = _direct_case(seed, beta)
        proved += sum(np.isfinite(v) for v in sharper.values())
        with monkeypatch.context() as mp:
            mp.setattr(coupled, "anchored_joint_test", lambda rows, ks, taus, r=None, **kw: (True, r))
            mp.setattr(coupled, "_truncated_all", lambda AS, x, ii: np.zeros(len(ii)))
            AS, sharper, k, _ = _direct_case(seed, beta)
            broken += any(b < brute_opt(AS, i)[0] * (1 - 1e-9) for i, b in sharper.items())
    assert proved > 0
    assert broken > 0


# ---- the tree on S: hopeless DNN node bounds skipped, narrow row lists


@TINY
@given(st.integers(2, 8), st.integers(0, 2**31 - 1), st.sampled_from([0.0, 0.02, 10.0]),
       st.sampled_from([None, 1, 3, 20]))
def test_tree_skipping_dnn_nodes_is_valid_against_bruteforce(n, seed, hope, max_nodes):
    """``dnn_hope`` (any, incl. 0: skip whenever an ancestor's value is above tau) and a node limit:
    the bound is >= OPT, a complete tree proves its point optimal to the tolerance, the point is
    feasible."""
    rng = np.random.default_rng(seed)
    A = _random_psd(rng, n)
    k = int(rng.integers(1, n + 1))
    opt, xo = brute_opt(A, k)
    d = np.diag(A)
    assume(d.max() > 0)
    x = np.zeros(n)
    x[int(np.argmax(d))] = 1.0
    state = _screen_init(A, k) if rng.random() < 0.5 else _kkt_point(A, k, xo)[1]
    bb = branch_and_bound(A, k, x, float(d.max()), state, time_limit=None, max_nodes=max_nodes, dnn_hope=hope)
    scale = max(1.0, float(np.abs(A).max()))
    assert bb["upper"] >= opt - 1e-9 * scale
    assert bb["lower"] <= opt + 1e-9 * scale
    if bb["complete"]:
        assert bb["lower"] >= opt * (1 - 1e-5) - 1e-9 * scale
    assert bb["x"].min() >= 0 and np.count_nonzero(bb["x"]) <= k


@TINY
@given(st.integers(3, 7), st.integers(0, 2**31 - 1), st.floats(0.9, 1.1))
def test_narrow_node_rows_never_refute_a_better_support(monkeypatch, n, seed, f):
    """The tree's row lists at the anchored bound's width (``_Nodes(narrow=True)``; the width rule
    forced to k - 1 so tiny rows are narrow): a refuted node held no stationary support above tau
    (enumeration)."""
    from nspca_core.certificates import exact

    monkeypatch.setattr(exact, "anchor_width", lambda nn, kk: max(kk - 1, 1))
    rng = np.random.default_rng(seed)
    A = _random_psd(rng, n)
    k = int(rng.integers(1, n + 1))
    opt, _ = brute_opt(A, k)
    nodes = _Nodes(A, k, None, narrow=True)
    scale = max(1.0, float(np.abs(A).max()))
    for _ in range(4):
        inc, exc = _node(rng, n, k)
        if int(inc.sum()) > k:
            continue
        true = _node_max(A, k, inc, exc)
        tau = f * (true if np.isfinite(true) else opt)
        if nodes.rowsum_refutes(tau, inc, exc):
            assert true <= tau + 1e-9 * scale


# ---- the cross table's variance screen


@TINY
@given(st.integers(2, 5), st.integers(4, 14), st.integers(3, 8), st.integers(0, 2**31 - 1),
       st.sampled_from([1, 2, 4]), st.booleans())
def test_cross_table_screen_keeps_the_table_against_bruteforce(monkeypatch, s, t, m, seed, block, tight_lam):
    """T's variances decaying fast (the screen's regime) and blocks of 1..4 columns: the table equals
    the exact one written out here (every column's squares), with or without ``lam_S`` (an upper
    bound on ``lambda_max(A_SS)``), and is >= ``||(A_IJ)_+||_2`` on every pair of supports."""
    from itertools import combinations

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, s + t))
    X[:, s:] *= 4.0 ** -np.arange(t)  # T's variances fall by 16x per column
    A = X.T @ X / m
    Sx, Tx = np.arange(s), np.arange(s, s + t)
    perm = rng.permutation(t)
    Tx = Tx[perm]  # (any order: the table sorts T by variance)
    monkeypatch.setattr(cross, "_BLOCK", block)
    monkeypatch.setattr(cross, "_single", lambda *a: None)  # (float64 products: the table written out below)
    lam = float(np.linalg.eigvalsh(A[np.ix_(Sx, Sx)]).max()) * (1 + 1e-9) if tight_lam else None
    jm = int(rng.integers(1, 4))  # (fewer than |T|: a top can be full, and the screen can stop)
    C = cross.cross_table(Cov(X, None), Sx, Tx, s, jm, lam)
    eps = np.finfo(float).eps
    delta = 2 * (m + 2) * eps * np.sqrt(np.diag(A)[Sx].max() * np.diag(A)[Tx].max()) * (1 + 4 * m * eps)
    P2 = np.maximum(A[np.ix_(Sx, Tx)] + delta, 0.0) ** 2
    for i in range(1, s + 1):
        for j in range(1, jm + 1):
            rows = np.sort(np.sort(P2, axis=1)[:, ::-1][:, :j].sum(axis=1))[::-1][:i].sum()
            cols = np.sort(np.sort(P2, axis=0)[::-1][:i].sum(axis=0))[::-1][:j].sum()
            assert C[i, j] == pytest.approx(np.sqrt(min(rows, cols)), rel=1e-9, abs=1e-300)
            if i <= 2 and j <= 3:
                best = max(np.linalg.norm(np.maximum(A[np.ix_(Sx, Tx)], 0.0)[np.ix_(I, J)], 2)
                           for I in combinations(range(s), i) for J in combinations(range(t), j))
                assert C[i, j] >= best * (1 - 1e-12)


def test_cross_table_screen_stops_early_and_would_be_caught_dropping_needed_columns(monkeypatch):
    """On fast-decaying T the screen computes fewer columns than T has; a screen that skipped every
    column after the first block (a level of infinity) gives a different table, so the equality above
    can fail."""
    rng = np.random.default_rng(1)
    m, s, t = 6, 3, 40
    X = rng.standard_normal((m, s + t))
    X[:, s:] *= 2.0 ** -np.arange(t)
    monkeypatch.setattr(cross, "_BLOCK", 4)
    seen = []
    real = cross._squares_up
    monkeypatch.setattr(cross, "_squares_up", lambda B, d, drop=None: (seen.append(B.shape[1]), real(B, d, drop))[1])
    Sx, Tx = np.arange(s), np.arange(s, s + t)
    C = cross.cross_table(Cov(X, None), Sx, Tx, s, 3)
    assert sum(seen) < t
    monkeypatch.setattr(cross, "_screen", lambda *a: np.inf)
    C_bad = cross.cross_table(Cov(X, None), Sx, Tx, s, 3)
    assert not np.allclose(C, C_bad, rtol=1e-9)


# ---- the Gram of X computed once per certificate


@pytest.mark.parametrize("seed", range(4))
def test_split_reuses_the_low_rank_tests_gram(monkeypatch, seed):
    """certify on thin data above the dense size: the low-rank test's eigendecomposition of X's Gram
    serves the split bound's spectrum of A (one ``_gram_eig`` of X fewer, the same numbers) and its
    Gram that of A_TT (minus S's part: equal to rounding)."""
    from nspca_core.certificates import bounds, cheap, route
    from tests.core.certificates.test_split_coupled import _force_split, _modules

    _force_split(monkeypatch, 6)
    rng = np.random.default_rng(seed)
    X = _modules(rng, 8, 14, 3)
    cov = Cov(X, None)
    k = 4
    calls = []
    real = bounds._gram_eig
    for mod in (bounds, cheap):
        monkeypatch.setattr(mod, "_gram_eig", lambda XT, m, out=None: (calls.append(XT.shape), real(XT, m, out))[1])
    with_reuse = route._certify_cov(cov, k)
    full = [c for c in calls if c == X.shape]
    calls.clear()
    alone = route._certify_large(cov, k, None, "auto", None)
    assert with_reuse.lower == alone.lower
    assert with_reuse.upper_bound == pytest.approx(alone.upper_bound, rel=1e-9)
    assert with_reuse.bounds["lambda1"] == alone.bounds["lambda1"]  # (A's spectrum: the same numbers)
    # one Gram of X per certificate with the reuse (the low-rank test's), two without (the point's
    # ascent starts and the spectrum of A)
    assert len(full) == 1 and len([c for c in calls if c == X.shape]) == 2
    assert with_reuse.info["B_T"] == pytest.approx(alone.info["B_T"], rel=1e-9)


@TINY
@given(st.integers(2, 5), st.integers(7, 10), st.integers(0, 2**31 - 1), st.sampled_from([1e-3, 1.0, 1e3]))
def test_rest_spectrum_from_the_whole_gram_bounds_the_rest_against_bruteforce(m, n, seed, scale):
    """A_TT's spectrum from X's whole Gram minus S's part (``bounds._rest_gram_eig``): its eigenvalues
    within the tolerance of A_TT's (numpy on A_TT itself), and the rest curve built on it at least the
    optimum of A_TT at every sparsity (enumeration)."""
    from nspca_core.certificates import bounds

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n)) * rng.random(n) * scale
    X[:, 0] *= 30.0  # (S's columns far larger than T's: the subtraction's cancellation)
    Sx = np.sort(rng.choice(n, int(rng.integers(1, 4)), replace=False))
    Tx = np.setdiff1d(np.arange(n), Sx)
    assume(m < Tx.size)
    cov = Cov(X, None)
    G = (X @ X.T) / m
    spec = bounds._rest_spectrum(cov, Tx, G, Sx)
    A = X.T @ X / m
    ATT = A[np.ix_(Tx, Tx)]
    true = np.sort(np.linalg.eigvalsh(ATT))[::-1][:m]
    assert np.all(np.abs(spec.w[:m] - np.clip(true, 0, None)) <= spec.tol + 1e-12 * np.abs(A).max())
    curve = bounds._rest_curve(cov, Tx, min(4, Tx.size), spec=spec)
    for j in range(1, curve.size):
        assert curve[j] >= brute_opt(ATT, j)[0] * (1 - 1e-12), (j, curve[j])
