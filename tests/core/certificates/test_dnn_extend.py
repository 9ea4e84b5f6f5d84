"""The cut run going on past its length while its ratio still climbs (issue 39, twelfth round).

``dnn_optimize(extend=(rate, more, aim))``: at iteration ``iters`` the run goes on for ``more`` iterations
(no cut renewed, a check at both ends) where the free estimates' ratio climbs by at least ``rate`` per
iteration (:func:`dnn_steps._climb_rate`) and is below ``aim``.  The rule decides effort only: every iterate
is a dual point and the value returned is the float64 bound of the point returned.  Tested here: that bound
against brute force, never above the run without the rule, the iterations the rule runs (counted), the run
without the rule float for float, and the rate written out.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from nspca_core.certificates import dnn as _dnn
from nspca_core.certificates.dnn_steps import _GIVE_UP_EVERY, _climb_rate
from tests.bruteforce import brute_opt
from tests.core.certificates.dnn_cases import cut_run, dense_psd

REL = 1e-9


@pytest.mark.parametrize("seed", range(5))
def test_an_extended_cut_run_is_a_valid_bound_and_runs_the_iterations_counted(seed, monkeypatch):
    """Forced on (a steep climb recorded): ``iters + more`` iterations, one evaluation more, never looser; forced
    off: ``iters``, the same floats as a run without the rule.  Each value is >= OPT (brute force) and the float64
    bound of the point returned."""
    n, k = 40, 2 + seed % 3
    A = dense_psd(seed, n)
    opt, xo = brute_opt(A, k)
    lower = float(xo @ A @ xo) * 0.97  # the ratio stays below the target: no run stops at its check
    scale = max(1.0, float(np.abs(A).max()))
    runs = {}
    for key, extend in {"none": None, "off": (np.inf, 8, 1.0), "on": (0.0, 8, 1.0)}.items():
        monkeypatch.setattr(_dnn, "_climb_rate", (lambda h, low: 1.0) if key == "on" else _climb_rate)
        state, val, info = cut_run(A, k, lower, extend=extend)
        assert val >= opt - REL * scale
        again, _ = _dnn.dnn_value(A, k, _dnn.DnnState(np.asarray(state.N, dtype=float), state.nu, None,
                                                     state.C, state.w))
        assert val >= again * (1 - 1e-6) and state.N.min() >= 0 and state.nu >= 0
        runs[key] = (val, info["iterations"], info["exact_evaluations"], state)
    assert runs["none"][1] == runs["off"][1] == 40
    assert runs["on"][1] == 48
    # the check at 40 as without the rule (made at the new end, skipped where the end's value is below its estimate:
    # dnn._DEFER_MARGIN), one more at the new end; never looser (the same iterates up to 40)
    assert runs["on"][2] in (runs["off"][2], runs["off"][2] + 1) and runs["off"][2] == runs["none"][2]
    assert runs["on"][0] <= runs["off"][0]
    assert runs["off"][0] == runs["none"][0]
    assert np.array_equal(runs["off"][3].N, runs["none"][3].N)


@pytest.mark.parametrize("seed", range(4))
def test_the_run_is_extended_exactly_where_its_pace_reaches_the_aim(seed, monkeypatch):
    """The rate and ratio the run saw at its end (recorded) decide: extended iff the ratio is below ``aim``, the
    rate at least ``rate`` and ``ratio + more * rate >= aim``.  Thresholds on both sides of what was seen."""
    n, k = 40, 2 + seed % 3
    A = dense_psd(seed, n)
    opt, xo = brute_opt(A, k)
    lower = float(xo @ A @ xo) * 0.97
    seen = []

    def spy(history, low):
        seen.append((_climb_rate(history, low), low / history[-1]))
        return seen[-1][0]

    monkeypatch.setattr(_dnn, "_climb_rate", spy)
    _, _, probe = cut_run(A, k, lower, extend=(np.inf, 8, 1.0))
    assert probe["iterations"] == 40 and len(seen) == 1
    rate, ratio = seen[0]
    reach = ratio + rate * 8
    for thr in (rate - abs(rate) - 1e-12, rate, rate + abs(rate) + 1e-12):
        for aim in (reach, reach + 1e-3, ratio + 1e-3, 1.0):
            seen.clear()
            _, val, info = cut_run(A, k, lower, extend=(thr, 8, aim))
            assert [s[0] for s in seen] == ([rate] if ratio < aim else [])  # (the same iterates up to there)
            want = ratio < aim and rate >= thr and reach >= aim
            assert info["iterations"] == (48 if want else 40)
            assert val >= opt - REL * max(1.0, float(np.abs(A).max()))


@given(h=st.lists(st.floats(1.0, 1e6), min_size=0, max_size=6), lower=st.floats(0.1, 1.0))
def test_climb_rate_is_the_ratio_gained_per_iteration_over_the_last_two_intervals(h, lower):
    got = _climb_rate(h, lower)
    if len(h) < 3:
        assert got == -np.inf
    else:
        want = (lower / h[-1] - lower / h[-3]) / (2 * _GIVE_UP_EVERY)
        assert got == pytest.approx(want, rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("seed", range(4))
def test_the_deferred_check_at_iters_is_skipped_only_where_the_end_is_below_its_estimate(seed, monkeypatch):
    """Counting, both sides of _DEFER_MARGIN (dense15): an extended run from an unevaluated start puts its check at
    40 off to its end.  Margin -inf (the end always below): skipped (as many evaluations as the run without the
    extension, info "skipped_check"); margin 1 (never): made (one more), and the value is at most the unextended
    run's (its check at 40, the same point).  At the real margin, a skipped check never left a looser bound: the value
    is at most the unextended run's.  Every value >= OPT (brute force) and the float64 bound of its point."""
    n, k = 40, 2 + seed % 3
    A = dense_psd(seed, n)
    opt, xo = brute_opt(A, k)
    lower = float(xo @ A @ xo) * 0.97
    scale = max(1.0, float(np.abs(A).max()))
    off = cut_run(A, k, lower, extend=(np.inf, 8, 1.0))
    monkeypatch.setattr(_dnn, "_climb_rate", lambda h, low: 1.0)
    out = {}
    for margin in (-np.inf, 1.0, _dnn._DEFER_MARGIN):
        monkeypatch.setattr(_dnn, "_DEFER_MARGIN", margin)
        state, val, info = cut_run(A, k, lower, extend=(0.0, 8, 1.0))
        assert info["iterations"] == 48 and val >= opt - REL * scale
        again, _ = _dnn.dnn_value(A, k, _dnn.DnnState(np.asarray(state.N, dtype=float), state.nu, None,
                                                     state.C, state.w))
        assert val >= again * (1 - 1e-6)
        out[margin] = (val, info["exact_evaluations"], info.get("skipped_check", False))
    assert out[-np.inf][1] == off[2]["exact_evaluations"] and out[-np.inf][2]
    assert out[1.0][1] == off[2]["exact_evaluations"] + 1 and not out[1.0][2]
    assert out[1.0][0] <= off[1]
    real = out[_dnn._DEFER_MARGIN]
    assert real[1] == off[2]["exact_evaluations"] + (0 if real[2] else 1)
    assert real[0] <= off[1] and real[0] == out[1.0][0]
