"""The "auto" cut run stopped where it falls away from its start (issue 39, fourteenth round).

``dnn_optimize(fall=(rise, at))``: from an evaluated start, where the free estimates at every ``_GIVE_UP_EVERY``
iterations up to ``at`` are all at least ``1 + rise`` times the start's value, the run stops there unevaluated and
returns its start.  ``dual._cut_rounds`` passes ``(_FALL_RISE, _FALL_AT)`` to the run at ``lr`` wherever its retry at
``retry_lr`` can follow, which then runs at once (the run that fell would have gained nothing worth keeping on the
topic corpus that asked for the retry).  The rule decides effort only.  Tested here: the rule counted on both sides
of its threshold (placed around the rise the run really made), the run that only looks float for float the run
without the rule, the retry float for float the run at ``retry_lr`` alone, where the rule is not passed, and every
value against brute force and the float64 bound of its point.
"""

from __future__ import annotations

import numpy as np
import pytest

from nspca_core.certificates import dnn as _dnn
from nspca_core.certificates import dual
from nspca_core.certificates._settings import _DECAY, _T0, _T1
from tests.bruteforce import brute_opt
from tests.core.certificates.dnn_cases import dense_psd, evaluated_start

LR, RETRY = 3e-3, 1e-3
# (n, seed, k) whose runs at LR rise far above their starts by iteration 10 (rises 0.3 / 1.1 / 0.16)
CASES = [(30, 3, 2), (70, 0, 2), (70, 1, 3)]


def _run(A, k, st0, lam, lower, rate, fall):
    scale = float(np.abs(A).max())
    # (as dual._cut_rounds runs it)
    return _dnn.dnn_optimize(A, k, st0, iters=24, t_start=_T0 * scale, t_end=_T1 * scale, lr=rate * scale,
                             decay=_DECAY, refresh=8, r=6, check_every=24, target=0.999, lower=lower, stall=3e-4,
                             start_lam=lam, ritz32=True, fall=fall)


def _rounds(A, k, st0, val, lam, lower, monkeypatch, rise, retry_lr=RETRY):
    """One "auto" cut run (renewing every 8 of 24 iterations) at LR with the rule at ``rise``: its result and the
    runs made (their rates, the rule passed, their infos and values)."""
    runs = []
    real = dual.dnn_optimize

    def spy(A_, k_, st, **kw):
        out = real(A_, k_, st, **kw)
        runs.append((kw["lr"] / float(np.abs(A_).max()), kw.get("fall"), out[2], out[1]))
        return out

    monkeypatch.setattr(dual, "dnn_optimize", spy)
    monkeypatch.setattr(dual, "_FALL_RISE", rise)
    out = dual._cut_rounds(A, k, st0, val, lower, 0.999, 1, iters=24, check_every=24, stall=3e-4, lam=lam,
                           refresh=8, lr=LR, r=6, ritz32=True, retry_lr=retry_lr)
    monkeypatch.setattr(dual, "dnn_optimize", real)
    return out, runs


def _same(a, b):
    (s1, v1, i1), (s2, v2, i2) = a, b
    assert v1 == v2 and i1["lam"] == i2["lam"] and i1["iterations"] == i2["iterations"]
    assert np.array_equal(s1.N, s2.N) and s1.nu == s2.nu and np.array_equal(s1.U, s2.U)


def _check_bound(A, k, state, val, opt):
    scale = max(1.0, float(np.abs(A).max()))
    assert val >= opt - 1e-9 * scale
    again, _ = _dnn.dnn_value(A, k, _dnn.DnnState(np.asarray(state.N, dtype=float), state.nu, None, state.C,
                                                 state.w))
    assert val >= again * (1 - 1e-6) and state.N.min() >= 0 and state.nu >= 0


@pytest.mark.parametrize("n,seed,k", CASES)
def test_the_run_falls_exactly_where_its_rise_reaches_the_threshold(n, seed, k, monkeypatch):
    """The rise the run at LR really makes by iteration 10 (the rule looking only: the run without the rule, float for
    float): with the threshold at or below it, the run stops at iteration 10 unevaluated, its start returned, and the
    retry at RETRY from the same start follows (float for float that run alone); above it, one run to its end and the
    floats of the run without the rule (where it gained less than the retry's threshold, the retry after it)."""
    A = dense_psd(seed, n)
    opt, xo = brute_opt(A, k)
    st0, val, lam = evaluated_start(A, k)
    lower = float(xo @ A @ xo) * 0.97  # below the target: no run stops at its check
    plain = _run(A, k, st0, lam, lower, LR, None)
    looked = _run(A, k, st0, lam, lower, LR, (np.inf, dual._FALL_AT))
    _same(plain, looked)
    rise = looked[2]["rise"]
    assert rise > 0
    # at the threshold: the run falls, the retry follows at once
    fell = _run(A, k, st0, lam, lower, LR, (rise, dual._FALL_AT))
    assert fell[2]["fell"] and fell[2]["iterations"] == dual._FALL_AT - 1 and fell[2]["exact_evaluations"] == 0
    assert fell[0] is st0 and fell[1] == val and fell[2]["lam"] == lam
    (st1, v1, info1), runs = _rounds(A, k, st0, val, lam, lower, monkeypatch, rise)
    assert [r[0] for r in runs] == [LR, RETRY] and runs[0][1] == (rise, dual._FALL_AT) and runs[1][1] is None
    assert runs[0][2]["fell"] and info1["fell"] and info1["retried"]
    alone = _run(A, k, st0, lam, lower, RETRY, None)
    assert runs[1][3] == alone[1] and v1 == min(val, alone[1])
    if alone[1] < val:
        assert np.array_equal(st1.N, alone[0].N) and st1.nu == alone[0].nu
    _check_bound(A, k, st1, v1, opt)
    # just above it: the run goes on (one run, or the retry where it gained < _RETRY_GAIN), its floats unchanged
    (st2, v2, info2), runs = _rounds(A, k, st0, val, lam, lower, monkeypatch, rise * (1 + 1e-9) + 1e-15)
    assert "fell" not in info2 and "fell" not in runs[0][2] and runs[0][3] == plain[1]
    assert runs[0][2]["iterations"] == plain[2]["iterations"]
    assert len(runs) == (2 if val - plain[1] < dual._RETRY_GAIN * abs(val) else 1)
    _check_bound(A, k, st2, v2, opt)


def test_the_rule_is_not_passed_where_no_retry_can_follow(monkeypatch):
    """No retry rate, an unevaluated start (``val`` inf) or a retry at the same rate: the run is not given the rule
    (it runs to its end, float for float as before)."""
    n, seed, k = CASES[0]
    A = dense_psd(seed, n)
    st0, val, lam = evaluated_start(A, k)
    lower = 0.5 * val
    _, runs = _rounds(A, k, st0, val, lam, lower, monkeypatch, 0.0, retry_lr=None)
    assert [r[1] for r in runs] == [None]
    real = dual.dnn_optimize
    seen = []

    def spy(A_, k_, st, **kw):
        seen.append(kw.get("fall"))
        return real(A_, k_, st, **kw)

    monkeypatch.setattr(dual, "dnn_optimize", spy)
    monkeypatch.setattr(dual, "_FALL_RISE", 0.0)
    dual._cut_rounds(A, k, st0, np.inf, lower, 0.999, 1, iters=16, check_every=16, stall=3e-4, refresh=8, lr=LR,
                     r=6, ritz32=True, evaluate_start=False, retry_lr=RETRY)
    dual._cut_rounds(A, k, st0, val, lower, 0.999, 1, iters=16, check_every=16, stall=3e-4, lam=lam, refresh=8,
                     lr=LR, r=6, ritz32=True, retry_lr=LR)
    assert seen == [None, None]


def test_a_start_without_its_lambda_falls_back_to_its_evaluated_copy():
    """Where the caller gives no lambda the run evaluates its own copy of the start (N in float32): a fall returns
    that copy with its rigorous value, >= OPT and the float64 bound of the point returned."""
    n, seed, k = CASES[1]
    A = dense_psd(seed, n)
    opt, _ = brute_opt(A, k)
    st0, val, _ = evaluated_start(A, k)
    fell = _run(A, k, st0, None, 0.5 * val, LR, (-1.0, dual._FALL_AT))  # (any rise above -100%: it falls)
    assert fell[2]["fell"] and fell[2]["exact_evaluations"] == 1 and fell[0] is not st0
    assert fell[0].N.dtype == np.float32 and np.array_equal(fell[0].N, st0.N.astype(np.float32))
    _check_bound(A, k, fell[0], fell[1], opt)
