"""The "auto" cut run tried again at the default rate where it gained nothing (issue 39, thirteenth round).

``dual._cut_rounds(retry_lr=)``: a renewing run (``refresh``) from an evaluated point that gains less than
``dual._RETRY_GAIN`` (relative) at its rate ``lr`` runs once more from the same point at ``retry_lr``, and the
better end is kept.  The rule decides effort only: each run's value is the float64 bound of its point.  Tested
here: the runs counted on both sides of the threshold (placed around the gain the first run really made), the
run without the rule float for float below it, the value never above the first run's, and every value against
brute force.
"""

from __future__ import annotations

import numpy as np
import pytest

from nspca_core.certificates import dnn as _dnn
from nspca_core.certificates import dual
from tests.bruteforce import brute_opt
from tests.core.certificates.dnn_cases import dense_psd, evaluated_start

REL = 1e-9
LR, RETRY = 3e-3, 1e-3


def _rounds(A, k, lower, retry_lr, monkeypatch, gain=None, lr=LR):
    """One "auto" cut run (renewing every 8 of 24 iterations) at ``lr``: its result, the start's value, and the
    rates run and values their runs ended at."""
    rates, ends = [], []
    real = dual.dnn_optimize

    def spy(A_, k_, st, **kw):
        rates.append(kw["lr"] / float(np.abs(A_).max()))
        out = real(A_, k_, st, **kw)
        ends.append(out[1])
        return out

    monkeypatch.setattr(dual, "dnn_optimize", spy)
    if gain is not None:
        monkeypatch.setattr(dual, "_RETRY_GAIN", gain)
    # the retry rule alone: the run at lr runs to its end (the rule that stops it early where it falls away from its
    # start, dual._FALL_RISE, is counted in test_dnn_fall.py; here it would stop seed 3's)
    monkeypatch.setattr(dual, "_FALL_RISE", np.inf)
    st0, val, lam = evaluated_start(A, k)
    out = dual._cut_rounds(A, k, st0, val, lower, 0.999, 1, iters=24, check_every=24, stall=3e-4, lam=lam,
                           refresh=8, lr=lr, r=6, ritz32=True, retry_lr=retry_lr)
    return out, rates, val, ends


def _check_bound(A, k, state, val, opt):
    scale = max(1.0, float(np.abs(A).max()))
    assert val >= opt - REL * scale
    again, _ = _dnn.dnn_value(A, k, _dnn.DnnState(np.asarray(state.N, dtype=float), state.nu, None, state.C,
                                                 state.w))
    assert val >= again * (1 - 1e-6) and state.N.min() >= 0 and state.nu >= 0


@pytest.mark.parametrize("seed", range(4))
def test_the_run_is_retried_exactly_where_its_gain_is_below_the_threshold(seed, monkeypatch):
    """The first run's relative gain g (measured without the rule): with the threshold above g, a second run at
    ``retry_lr`` from the same start (two runs, the value never above the first's); at or below g, one run and the
    same floats as without the rule.  Each value is >= OPT (brute force) and the float64 bound of its point."""
    n, k = 30, 2 + seed % 3
    A = dense_psd(seed, n)
    opt, xo = brute_opt(A, k)
    lower = float(xo @ A @ xo) * 0.97  # below the target: no run stops at its check
    (st1, v1, info1), rates, val0, ends = _rounds(A, k, lower, None, monkeypatch)
    assert rates == [LR] and "retried" not in info1
    g = (val0 - ends[0]) / abs(val0)  # (negative where the run ended above its start)
    _check_bound(A, k, st1, v1, opt)
    # below the gain made: no retry, the run without the rule
    (st2, v2, info2), rates, _, _ = _rounds(A, k, lower, RETRY, monkeypatch, gain=g - 1e-6 * abs(g) - 1e-15)
    assert rates == [LR] and "retried" not in info2
    assert v2 == v1 and np.array_equal(st2.N, st1.N) and info2["iterations"] == info1["iterations"]
    # above it: the retry at RETRY, from the same start; the better end kept
    (st3, v3, info3), rates, _, ends3 = _rounds(A, k, lower, RETRY, monkeypatch, gain=g + 1e-6 * abs(g) + 1e-15)
    assert rates == [LR, RETRY] and info3["retried"] and ends3[0] == ends[0]
    assert info3["iterations"] > info1["iterations"]
    assert v3 <= v1 and v3 == min(v1, ends3[1])
    _check_bound(A, k, st3, v3, opt)
    # the retry is the run at RETRY alone from the same start (float for float)
    _, rates, _, solo = _rounds(A, k, lower, None, monkeypatch, lr=RETRY)
    assert rates == [RETRY] and solo[0] == ends3[1]


def test_no_retry_without_an_evaluated_start_or_with_the_same_rate(monkeypatch):
    """An unevaluated start (``val`` inf: the gain is unknown) and ``retry_lr == lr`` run once, whatever the gain."""
    A = dense_psd(7, 30)
    k = 3
    monkeypatch.setattr(dual, "_RETRY_GAIN", np.inf)
    rates = []
    real = dual.dnn_optimize

    def spy(A_, k_, st, **kw):
        rates.append(kw["lr"])
        return real(A_, k_, st, **kw)

    monkeypatch.setattr(dual, "dnn_optimize", spy)
    st0, val, lam = evaluated_start(A, k)
    dual._cut_rounds(A, k, st0, np.inf, 0.5 * val, 0.999, 1, iters=16, check_every=16, stall=3e-4, refresh=8,
                     lr=LR, r=6, ritz32=True, evaluate_start=False, retry_lr=RETRY)
    assert len(rates) == 1
    dual._cut_rounds(A, k, st0, val, 0.5 * val, 0.999, 1, iters=16, check_every=16, stall=3e-4, lam=lam,
                     refresh=8, lr=LR, r=6, ritz32=True, retry_lr=LR)
    assert len(rates) == 2


def test_auto_passes_the_default_rate_as_the_retry(monkeypatch):
    """"auto"'s one-k DNN (a cut_lr set) hands _cut_rounds ``retry_lr = _LR_WARM``."""
    seen = []
    real = dual._cut_rounds

    def spy(*a, **kw):
        seen.append((kw.get("lr"), kw.get("retry_lr")))
        return real(*a, **kw)

    monkeypatch.setattr(dual, "_cut_rounds", spy)
    rng = np.random.default_rng(0)
    Y = rng.standard_normal((100, 70))  # (noise: the ratio below the cut run's aim after the plain run)
    A = Y.T @ Y / 100
    k = 8
    dual._dnn(A, k, 0.92 * float(np.linalg.eigvalsh(A)[-1]) * 0.5, "auto", None)
    assert seen and all(lr == dual._EFFORT["auto"]["cut_lr"] and rr == dual._LR_WARM for lr, rr in seen)
