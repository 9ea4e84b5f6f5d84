"""The anchored row-sum bound (nspca_core.certificates.anchor) against brute force on tiny inputs."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nspca_core import certify, certify_path
from nspca_core.certificates.anchor import (AnchorRows, anchored_branch_bound, anchored_rowsum_bound,
                                            anchored_rowsum_test)

from tests.bruteforce import brute_opt
from tests.core.certificates.test_single import _check_cert, _random_psd

S = importlib.import_module("nspca_core.certificates._settings")


def _random_symmetric(rng, n):
    """psd of any rank and structure, or an indefinite symmetric matrix (the theorem needs neither)."""
    if rng.random() < 0.75:
        return _random_psd(rng, n)
    B = rng.standard_normal((n, n))
    return B + B.T


def _never_below_opt(A, k, rows):
    """No tau below OPT is proved, whatever the width of the candidate lists."""
    opt, _ = brute_opt(A, k)
    scale = max(float(np.abs(A).max()), 1e-300)
    for tau in (opt - 1e-6 * abs(opt) - 1e-9 * scale, opt - 1e-3 * abs(opt) - 1e-6 * scale):
        proved, _ = anchored_rowsum_test(rows, tau)
        assert not proved, (tau, opt)
    lo = max(float(np.diag(A).max()), 1e-12 * scale)
    hi = 2 * float(np.linalg.eigvalsh(A)[-1]) + k * scale + 1.0
    b = anchored_rowsum_bound(A, k, lo, hi, rows=rows, steps=40, rel_tol=0.0)
    if b is not None:
        assert b >= opt - 1e-9 * scale, (b, opt)
    return opt, b


def test_valid_on_thousands_of_tiny_instances():
    rng = np.random.default_rng(20261123)
    proved = 0
    for _ in range(1500):
        n = int(rng.integers(1, 9))
        k = int(rng.integers(1, n + 1))
        A = _random_symmetric(rng, n)
        width = None if rng.random() < 0.5 else int(rng.integers(0, n + 1))
        _, b = _never_below_opt(A, k, AnchorRows(A, k, width=width))
        proved += b is not None
    assert proved > 1000  # the test is not vacuous: most instances get a bound


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 7), st.integers(1, 7), st.integers(0, 2**31 - 1), st.integers(0, 8))
def test_property_bound_dominates_optimum(n, k, seed, width):
    k = min(k, n)
    A = _random_symmetric(np.random.default_rng(seed), n)
    _never_below_opt(A, k, AnchorRows(A, k, width=width))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(2, 7), st.integers(1, 7), st.integers(0, 2**31 - 1), st.sampled_from([0.0, 1e-3, 0.05]))
def test_narrow_bracket_bound_is_valid_and_inside_the_bracket(n, k, seed, below):
    """A near-optimal lower value (a narrow bracket) tries the test just above it first, then
    bisects from there: the bound is still never below OPT and inside the bracket."""
    k = min(k, n)
    A = _random_psd(np.random.default_rng(seed), n)
    opt, _ = brute_opt(A, k)
    if opt <= 0:
        return
    lower, rel = opt * (1 - below), 5e-5
    b = anchored_rowsum_bound(A, k, lower, lower * 1.001, rel_tol=rel)
    if b is not None:
        assert b >= opt * (1 - 1e-12)
        assert b <= lower * 1.001


def test_branching_never_proves_below_opt_and_often_proves_optimality():
    rng = np.random.default_rng(7)
    proved_opt = tried = plain = 0
    for _ in range(400):
        n = int(rng.integers(2, 9))
        k = int(rng.integers(2, n + 1))
        A = _random_symmetric(rng, n)
        opt, _ = brute_opt(A, k)
        scale = max(float(np.abs(A).max()), 1e-300)
        rows = AnchorRows(A, k, width=n - 1)
        below = opt - 1e-6 * abs(opt) - 1e-9 * scale
        assert not anchored_rowsum_test(rows, below, branch_budget=300)[0], (A, k)
        above = opt + 1e-6 * abs(opt) + 1e-9 * scale
        b = anchored_branch_bound(A, k, [below, above], budget=300)
        assert b is None or b >= opt - 1e-9 * scale
        if opt > 0:
            tried += 1
            proved_opt += b is not None
            plain += anchored_rowsum_test(rows, above)[0]
    # not vacuous: OPT is proved to 1e-6 on most of these, and branching proves more than the
    # plain test (on this seed 303 against 283 of 394)
    assert proved_opt > 0.6 * tried and proved_opt > plain, (proved_opt, plain, tried)


def test_k1_is_exact_and_tight_on_a_block():
    rng = np.random.default_rng(1)
    A = _random_psd(rng, 6, kind="gauss")
    # k = 1: OPT = max_i A_ii, proved just above it
    d = float(np.diag(A).max())
    assert anchored_rowsum_test(AnchorRows(A, 1), d * (1 + 1e-9))[0]
    assert not anchored_rowsum_test(AnchorRows(A, 1), d * (1 - 1e-9))[0]
    # a nonnegative block of size k with weak couplings: the bound is within 1% of OPT
    # (the first row-sum step alone, sum of the k largest entries of a row, is much looser)
    n, k = 8, 3
    A = 0.05 * np.abs(rng.standard_normal((n, n)))
    A = A + A.T
    B = 1.0 + 0.3 * rng.random((k, k))
    A[:k, :k] = B + B.T
    A[np.arange(n), np.arange(n)] += 4.0
    opt, _ = brute_opt(A, k)
    b = anchored_rowsum_bound(A, k, opt, 2 * np.linalg.eigvalsh(A)[-1], steps=40, rel_tol=1e-6)
    assert b is not None and opt <= b <= 1.01 * opt


def test_warm_start_from_an_unproved_tau_is_the_same_decision():
    rng = np.random.default_rng(5)
    for _ in range(50):
        n = int(rng.integers(3, 9))
        k = int(rng.integers(2, n + 1))
        A = _random_psd(rng, n)
        rows = AnchorRows(A, k)
        opt, _ = brute_opt(A, k)
        t1 = opt * 1.001 + 1e-12
        ok1, r1 = anchored_rowsum_test(rows, t1)
        if ok1:
            continue
        for t2 in (opt * 1.05, opt * 1.3, opt * 3):
            cold, _ = anchored_rowsum_test(rows, t2, max_iter=400, tol=0.0)
            warm, _ = anchored_rowsum_test(rows, t2, r1, max_iter=400, tol=0.0)
            assert warm or not cold  # a valid warm start never loses a proof


@pytest.mark.parametrize("effort", ["fast", "auto"])
def test_certify_uses_it_and_stays_above_bruteforce(monkeypatch, effort):
    # force the anchored bound at every k >= 3 (normally only where the DNN is below 0.97)
    monkeypatch.setattr(S, "_CUT_BELOW", 1.0 + 1e-12)
    rng = np.random.default_rng(11)
    used = 0
    for _ in range(25):
        n = int(rng.integers(4, 9))
        k = int(rng.integers(3, n + 1))
        A = _random_psd(rng, n)
        opt, _ = brute_opt(A, k)
        cert = certify(cov=A, k=k, effort=effort)
        _check_cert(cert, opt, A)
        used += "anchored" in cert.bounds
        path = certify_path(cov=A, ks=list(range(1, n + 1)), effort=effort)
        for c in path:
            _check_cert(c, brute_opt(A, c.k)[0], A)
            used += "anchored" in c.bounds
    assert used > 0


def test_cbcl_small_k_reaches_the_target(cbcl_X):
    """The reason for the bound: CBCL at k = 6, where the DNN relaxation certifies ~0.94."""
    X = cbcl_X - cbcl_X.mean(axis=0)
    A = X.T @ X / X.shape[0]
    cert = certify(cov=A, k=6)
    assert cert.kind == "anchored" and cert.ratio >= 0.97


def node_case(A, k: int, rng, narrow: bool, ninc: int):
    """A branch node of the anchored row sums on A at k: ``(rows, r, inc, blocked, q)`` with ``ninc`` included
    columns, about 30% of the rest excluded, random ratios r, and each row's count q of free products."""
    n = A.shape[0]
    rows = AnchorRows(A, k, width=k if narrow else None)
    r = rng.random(n)
    inc = np.zeros(n, dtype=bool)
    inc[rng.choice(n, min(ninc, k), replace=False)] = True
    exc = ~inc & (rng.random(n) < 0.3)
    blocked = (inc | exc)[rows.idx]
    q = np.where(inc, k - inc.sum(), k - 1 - inc.sum())
    return rows, r, inc, blocked, q


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(3, 14), st.integers(2, 8), st.integers(1, 4), st.booleans())
def test_node_sums_are_the_capped_top_q_sums(seed, n, k, ninc, narrow):
    """A branch node's row sums: the included columns exactly, plus the sum of the q_l largest
    free products of row l (each at least the row's cap), by a plain sort; never below it (the
    selection in float32 is rounded up) and above it by at most that rounding."""
    from nspca_core.certificates.anchor import node_sums

    k = min(k, n - 1)
    rng = np.random.default_rng(seed)
    A = _random_psd(rng, n)
    rows, r, inc, blocked, q = node_case(A, k, rng, narrow, ninc)
    got = node_sums(rows, r, inc, blocked, q)
    prod = rows.vals * r[rows.idx]
    prod[blocked] = 0.0
    for l in range(n):
        top = np.sort(np.maximum(prod[l], rows.cap[l]))[::-1][:max(q[l], 0)]
        want = rows.P[l, inc] @ r[inc] + top.sum()
        assert want * (1 - 1e-13) <= got[l] <= want * (1 + 1e-6) + k * 2.0 ** -140


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 40), st.integers(1, 12), st.sampled_from([1.0, 1e-40, 1e30, 1e-300]))
def test_top_sums_selected_in_float32_bound_the_float64_top_q(seed, L, q, scale):
    """The row sums' float32 selection (anchor._top_sums32, _sum_up) against brute force in
    float64 (math.fsum of a sort): never below the q largest of max(prod, cap), even with
    entries equal in float32 but not in float64 (near ties) and subnormal float32 values."""
    import math

    from nspca_core.certificates.anchor import _sum_up, _top_sums32

    rng = np.random.default_rng(seed)
    n = 5
    half = rng.random((n, (L + 1) // 2)) * scale
    prod = np.hstack([half, half * (1 + rng.random(half.shape) * 1e-8)])[:, :L]  # near ties
    prod = prod[:, rng.permutation(L)]
    cap = rng.random(n) * scale * 0.3
    got = _sum_up(_top_sums32(prod, q, cap))
    for l in range(n):
        want = math.fsum(np.sort(np.maximum(prod[l], cap[l]))[::-1][:min(q, L)])
        assert got[l] >= want
        assert got[l] <= want * (1 + 1e-6) + q * 2.0 ** -140
