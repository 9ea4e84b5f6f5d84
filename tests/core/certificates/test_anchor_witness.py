"""dual.dense_dual's first anchored test deferred where anchor_sums.witness_fails PROVES it fails (issue 39, corpus27):
the threshold counted on both sides; the deferral taken exactly where the witness holds (both outcomes met); the
certificate the same float for float as with the test run at once (its failure's rows and ratios made where a later
test reads them: dual._carry_failed); and every bound at least the exact optimum (brute force)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

import scipy.sparse as sp

from nspca_core import certify, fit
from nspca_core.certificates import anchor_sums, dual, route, sparse_route as R
from nspca_core.operators.sparse import as_sparse_cov
from tests.bruteforce import brute_opt
from tests.core.certificates.test_lambda1_lazy import _hex as _hex3, _routed, _topic
from tests.core.certificates.test_sparse_rows import exact_cov
from tests.core.certificates.test_top_test_fails import _case as _raw_case


def _case(seed, n, k, factor, kind):
    """test_top_test_fails' cases, the non-covariance kinds shifted to be positive semidefinite (certify's input)."""
    A, x, tau = _raw_case(seed, n, k, factor, kind)
    if kind:
        A = A + max(0.0, 1e-3 - float(np.linalg.eigvalsh(A)[0])) * np.eye(n)
        tau = float(x @ A @ x) / dual._DNN_SKIP_AT * factor
    return A, x, tau


@pytest.mark.parametrize("n, least, called", [(12, 12, 1), (12, 13, 0), (12, 11, 1)])
def test_witness_threshold_counted(monkeypatch, n, least, called):
    """witness_fails asks top_test_fails from _WITNESS_MIN_N features on, not below; and never without x."""
    A, x, tau = _case(3, n, 3, 1.0, 0)
    calls = []
    monkeypatch.setattr(anchor_sums, "_WITNESS_MIN_N", least)
    monkeypatch.setattr(anchor_sums, "top_test_fails", lambda *a: calls.append(a) or True)
    assert anchor_sums.witness_fails(A, 3, tau, x) is bool(called)
    assert len(calls) == called
    assert anchor_sums.witness_fails(A, 3, tau, None) is False and len(calls) == called


def _run(A, k, x, witness: bool):
    """certify(cov=A) with the witness on (from 1 feature) or off; (certificate, witness verdicts, first tests run)."""
    seen = {"verdicts": [], "tests": 0}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(anchor_sums, "_WITNESS_MIN_N", 1)
        real, top = anchor_sums.witness_fails, dual.top_test

        def spy(*a):
            v = real(*a) if witness else False
            seen["verdicts"].append(v)
            return v

        def tests(*a, **kw):
            seen["tests"] += 1
            return top(*a, **kw)
        mp.setattr(dual, "witness_fails", spy)
        mp.setattr(dual, "top_test", tests)
        c = certify(cov=A, k=k, x=x)
    return c, seen


def _hex(c):
    return float(c.upper_bound).hex(), {b: float(v).hex() for b, v in c.bounds.items()}


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(5, 8), k=st.integers(2, 5), factor=st.floats(0.9, 1.1),
       kind=st.integers(0, 2))
def test_deferral_same_floats_and_above_brute_force(seed, n, k, factor, kind):
    """With the witness on, the certificate is the one made with the test run at once (hex-equal bounds), each
    witness verdict that holds is a test that fails (run here), and every bound is at least the exact optimum."""
    k = min(k, n - 1)
    A, x, _ = _case(seed, n, k, factor, kind)
    on, s_on = _run(A, k, x, True)
    off, s_off = _run(A, k, x, False)
    assert _hex(on) == _hex(off)
    assert s_on["tests"] <= s_off["tests"]
    opt = brute_opt(A, k)[0]
    scale = max(1.0, float(np.abs(A).max()))
    for val in on.bounds.values():
        assert val >= opt - 1e-9 * scale


def test_both_sides_met_and_counted():
    """On topic-shaped data at n = 40: the witness holds at some k (then info says so and the first test is not run
    unless a later test reads it) and not at others (the test runs, as before); the same floats on both sides."""
    met = {True: 0, False: 0}
    for seed in range(6):
        for k in (3, 6, 12):
            A, x, _ = _case(seed, 40, k, 1.0, seed % 3)
            on, s_on = _run(A, k, x, True)
            off, s_off = _run(A, k, x, False)
            assert _hex(on) == _hex(off)
            for v in s_on["verdicts"]:
                met[v] += 1
            if any(s_on["verdicts"]):
                assert "'anchored_witness': 'fails'" in str(on.info)
                assert s_on["tests"] <= s_off["tests"] - 1 or "anchored_seconds" in str(on.info)
    assert met[True] > 0 and met[False] > 0, met


def test_carry_failed_is_the_failed_test():
    """_carry_failed fills carry with top_test's own failure (rows, tau, ratios), and nothing without a deferral."""
    A, x, tau = _case(5, 30, 4, 0.9, 0)
    rows, ok, r = dual.top_test(A, 4, tau)
    assert not ok
    carry = {"deferred": (tau, None)}
    dual._carry_failed(A, 4, carry)
    assert carry["tau"] == tau and np.array_equal(carry["r"], r) and "deferred" not in carry
    empty: dict = {}
    dual._carry_failed(A, 4, empty)
    assert empty == {}


def test_witness_not_asked_where_the_same_test_held(monkeypatch):
    """corpus30: witness_fails answers False without asking top_test_fails exactly where seen records THE test (this A
    object, k, tau) as held; asked (counted) where it failed, at another tau or k, on another A object, or with no
    record -- and there its verdict is top_test_fails' own."""
    A, x, tau = _case(3, 40, 4, 1.0, 0)
    calls = []
    real = anchor_sums.top_test_fails
    monkeypatch.setattr(anchor_sums, "_WITNESS_MIN_N", 1)
    monkeypatch.setattr(anchor_sums, "top_test_fails", lambda *a: calls.append(a) or real(*a))
    rows = object()
    cases = [({"top": (A, (4, float(tau)), rows, True, None)}, 0),
             ({"top": (A, (4, float(tau)), rows, False, None)}, 1),
             ({"top": (A, (4, float(tau) * (1 + 1e-12)), rows, True, None)}, 1),
             ({"top": (A, (5, float(tau)), rows, True, None)}, 1),
             ({"top": (A.copy(), (4, float(tau)), rows, True, None)}, 1),
             ({}, 1), (None, 1)]
    for seen, asked in cases:
        calls.clear()
        got = anchor_sums.witness_fails(A, 4, tau, x, seen)
        assert len(calls) == asked
        assert got is (False if not asked else bool(real(A, 4, tau, x)))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(3, 5))
def test_sparse_dense_branch_asks_the_witness_once(seed, k):
    """corpus30: the sparse route's dense branch (its anchored test held) asks top_test_fails once -- its own, before
    the test -- not again in dense_dual; the certificate hex-equal to the one where dense_dual asks it again
    (seen not handed to witness_fails), every bound at least the exact optimum."""
    D = _topic(seed, 50, 14, 2, 6)
    X = sp.csr_matrix(D.astype(float))
    x = fit(X, k=k, certify=False).x
    out = {}
    for skip in (True, False):
        calls = []
        with pytest.MonkeyPatch.context() as mp:
            _routed(mp, 5)
            mp.setattr(anchor_sums, "_WITNESS_MIN_N", 1)
            real_ttf, real_w = anchor_sums.top_test_fails, anchor_sums.witness_fails
            mp.setattr(anchor_sums, "top_test_fails", lambda *a: calls.append(a) or real_ttf(*a))
            mp.setattr(R, "top_test_fails", lambda *a: calls.append(a) or real_ttf(*a))
            if not skip:  # (and dual._recorded off: dense33's skip of a recorded test's witness, either verdict)
                mp.setattr(dual, "witness_fails", lambda A, k, tau, x, seen=None: real_w(A, k, tau, x))
                mp.setattr(dual, "_recorded", lambda *a: False)
            c = R.sparse_route(as_sparse_cov(X), k, x, "auto", None, route._certify_large)
            held = c is not None and "split" not in str(c.info.get("route"))
        out[skip] = (c, len(calls), held)
    (on, n_on, held), (off, n_off, _) = out[True], out[False]
    if on is None:
        assert off is None
        return
    assert _hex3(on) == _hex3(off)
    event(f"dense branch, witness asked {n_on} / {n_off} times" if held else f"split route ({n_on} / {n_off})")
    if held and "anchored" in on.bounds:  # (the dense branch: the test held and dense_dual ran its bisection)
        assert n_on == 1 and n_off == 2, (n_on, n_off)
    else:  # (the split route: a recorded failed test on S is not asked again, dense33's rule; the reference asks it)
        assert n_off - 1 <= n_on <= n_off, (n_on, n_off)
    opt = brute_opt(exact_cov(D, True), k)[0]
    assert min(on.bounds.values()) >= opt * (1 - 1e-9) - 1e-12
