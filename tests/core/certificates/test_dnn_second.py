"""Issue 39, second round of "auto"'s one-k DNN certificate: runs that start or give up without an
evaluation, the anchored test skipped where a test on a few rows fails, cuts chosen for all
columns at once and renewed with their right-hand sides kept.

None of these may let a certificate claim more than brute force allows: every value reported is a
float64 evaluation of the point returned, and a point returned unevaluated is reported as ``inf``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core import certify
from nspca_core.certificates import _settings as S
from nspca_core.certificates import anchor
from nspca_core.certificates import dnn as _dnn
from nspca_core.certificates import dnn_steps
from nspca_core.certificates import dual
from tests.bruteforce import brute_opt
from tests.core.certificates.dnn_cases import dense_psd

REL = 1e-9


def _float64_bound(A, k, state):
    return _dnn.dnn_value(A, k, _dnn.DnnState(np.asarray(state.N, dtype=float), state.nu, None, state.C,
                                              state.w))[0]


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 30), st.integers(1, 6), st.integers(1, 30), st.integers(0, 2**31 - 1), st.booleans())
def test_ksupport_cuts_column_by_column(n, L, k, seed, ties):
    """The cuts of V (all columns at once) are those of each column alone, bit for bit (one column:
    test_single's brute force of the k-support norm), and for a nonnegative column each reaches at
    least the violation of the raw column (c = v)."""
    k = min(k, n)
    rng = np.random.default_rng(seed)
    V = rng.standard_normal((n, L))
    V[:, ::2] = np.abs(V[:, ::2])
    if ties:
        V = np.round(V, 1) * (rng.random((n, L)) < 0.7)
    C = _dnn.ksupport_cuts(V, k)
    for j in range(L):
        assert np.array_equal(C[:, j], _dnn.ksupport_cuts(V[:, [j]], k)[:, 0])
        v = V[:, j]
        if np.any(v) and k < n and v.min() >= 0:
            raw = float((v @ v) ** 2 / _dnn.cut_rhs(v[:, None], k)[0])
            assert float((C[:, j] @ v) ** 2 / _dnn.cut_rhs(C[:, [j]], k)[0]) >= raw * (1 - 1e-9)


@settings(max_examples=40, deadline=None)
@given(st.integers(8, 40), st.integers(1, 8), st.integers(0, 2**31 - 1), st.integers(1, 5))
def test_renewed_cuts_keep_exact_right_hand_sides(n, k, seed, renewals):
    """After any number of renewals (weights of some cuts made positive in between) the kept
    right-hand sides equal cut_rhs of the cut set recomputed from scratch."""
    k = min(k, n - 1)
    rng = np.random.default_rng(seed)
    cuts = dnn_steps._Cuts(None, None, k, n)
    for _ in range(renewals):
        U = np.linalg.qr(rng.standard_normal((n, 3)))[0]
        cuts.renew(U, 7)
        cuts.w = np.where(rng.random(cuts.w.size) < 0.5, rng.random(cuts.w.size), 0.0)
        assert np.array_equal(cuts.beta, _dnn.cut_rhs(cuts.C, k))
        assert cuts.cols.shape[1] == cuts.C.shape[1] + 1


@settings(max_examples=30, deadline=None)
@given(st.integers(14, 24), st.integers(1, 3), st.integers(0, 2**31 - 1), st.integers(0, 20),
       st.sampled_from([None, 0.5, 0.999]), st.booleans(), st.integers(0, 8))
def test_unevaluated_start_and_give_up_never_claim_more(n, k, seed, iters, give_up, eval_give_up, check):
    """dnn_optimize(evaluate_start=False), with or without evaluate_give_up: either the run returns
    its point unevaluated (value inf, a dual point) or the value is that point's float64 bound, and
    >= OPT; a cut run from the unevaluated point (val inf) ends evaluated, >= OPT."""
    A = dense_psd(seed, n)
    opt, _ = brute_opt(A, k)
    s = float(np.abs(A).max())
    start = dual._screen_init(A, k)
    state, val, info = _dnn.dnn_optimize(A, k, start, iters=iters, t_start=1e-3 * s, t_end=1e-4 * s,
                                         lr=6e-3 * s, check_every=check, ritz32=True, r=4, give_up=give_up,
                                         lower=0.99 * opt, evaluate_start=False,
                                         evaluate_give_up=eval_give_up)
    assert state.N.min() >= 0 and state.nu >= 0 and not np.diag(state.N).any()
    if info.get("unevaluated"):
        assert val == np.inf and info["gave_up"] and not eval_give_up
        if state.U is None:
            return
        state, val, _ = dual._cut_rounds(A, k, state, np.inf, 0.99 * opt, 0.999, 1, iters=7, check_every=7,
                                         stall=3e-4, refresh=2, lr=3e-3, r=4, ritz32=True, evaluate_start=False)
    assert np.isfinite(val)
    assert val == pytest.approx(_float64_bound(A, k, state), rel=1e-6)
    assert val >= opt - REL * max(1.0, s)


@settings(max_examples=40, deadline=None)
@given(st.integers(6, 9), st.integers(2, 4), st.integers(0, 2**31 - 1), st.floats(0.9, 1.3))
def test_restricted_test_fails_where_the_full_test_fails(n, k, seed, frac):
    """The forecast's premise on tiny inputs: where the anchored test on all of A proves tau, the
    same test on the rows R (the answer's support and the k rows next to it) proves it too (so a
    forecast of failure never hides a proof the full test would make), and a proof is >= OPT."""
    k = min(k, n - 1)
    A = dense_psd(seed, n)
    opt, x = brute_opt(A, k)
    tau = frac * opt
    proved, _ = anchor.anchored_rowsum_test(anchor.AnchorRows(A, k), tau)
    if proved:
        assert tau >= opt * (1 - REL)
        assert not anchor.restricted_refutes(A, k, x, tau)


@pytest.mark.parametrize("seed", range(3))
def test_certify_with_the_forecast_is_above_bruteforce(monkeypatch, seed):
    """certify(effort="auto") on n = 9 with the forecast allowed at any size (every verdict recorded):
    the certificate is >= OPT, and the forecast of a failure was made at least once (not vacuous)."""
    monkeypatch.setattr(dual, "_FORECAST_MIN_N", 0)
    monkeypatch.setattr(dual, "_FORECAST_SHARE", 1.0)
    monkeypatch.setattr(S, "anchor_ok", lambda n, k: k >= 3)
    verdicts = []
    real = anchor.restricted_refutes
    monkeypatch.setattr(dual, "restricted_refutes", lambda *a: verdicts.append(real(*a)) or verdicts[-1])
    for j in range(4):
        A = dense_psd(300 + 10 * seed + j, 9)
        for k in (3, 4):
            opt, _ = brute_opt(A, k)
            rng = np.random.default_rng(seed + j)
            x = np.abs(rng.standard_normal(9)) * (np.arange(9) < k)
            for given_x in (x, None):
                c = certify(cov=A, k=k, x=given_x, effort="auto")
                assert c.upper_bound >= opt * (1 - REL)
    assert True in verdicts  # a failure was forecast (the test skipped)


def test_certify_auto_through_an_unevaluated_give_up_is_above_bruteforce(monkeypatch):
    """certify(effort="auto") on n = 40 with the schedule forced (lazy start, give-up, one cut run):
    where the plain run gives up before any evaluation it hands its point unevaluated (value inf)
    to the cut run, which evaluates its end; the certificate is >= OPT (brute force) every time."""
    monkeypatch.setattr(S, "_CUT_BELOW", 0.9999)
    monkeypatch.setattr(S, "anchor_ok", lambda n, k: False)
    monkeypatch.setattr(dual, "_kkt_beaten", lambda *a: True)  # (CBCL's case: the screening start alone)
    monkeypatch.setitem(S._EFFORT["auto"], "schedule_min_n", 0)
    runs = []
    real = dual.dnn_optimize
    monkeypatch.setattr(dual, "dnn_optimize", lambda *a, **kw: runs.append(real(*a, **kw)) or runs[-1])
    handed = 0
    for seed in range(6):
        n, k = 40, 3
        A = dense_psd(400 + seed, n)
        opt, xo = brute_opt(A, k)
        runs.clear()
        c = certify(cov=A, k=k, x=xo * (1 + 0.1 * np.arange(n) / n), effort="auto")
        assert c.upper_bound >= opt * (1 - REL)
        if runs[0][1] == np.inf:
            handed += 1
            assert len(runs) == 2 and np.isfinite(runs[1][1]) and c.upper_bound <= runs[1][1]
            assert runs[1][1] == pytest.approx(_float64_bound(A, k, runs[1][0]), rel=1e-6)
    assert handed  # (not vacuous)
