"""The cut run outpaced by the anchored bound (issue 39, the fourteenth round).

Where only the forecast (no test) ruled the anchored bound out at ``tried = lower / _DNN_SKIP_AT`` before the DNN,
:func:`dual.dense_dual` hands the cut run an ``outpaced(reach)`` rule (:func:`dnn.dnn_optimize`): from its third free
estimate on, ``reach`` (their ratio plus their climb per iteration times the iterations left) below
``lower / tried`` runs the anchored bisection once (the bracket ``(tried, lower / reach]``), and a proof there stops
the run, its point evaluated.  The rule decides effort only: every bound is the anchored test's own proof or the
DNN's evaluated point.  Tested here: the run with a rule that never stops it float for float as without, the
iteration it stops at, both sides of the threshold (counted) and every certificate against brute force.
"""

from __future__ import annotations

import numpy as np
import pytest

from nspca_core import certify
from nspca_core.certificates import _settings as S
from nspca_core.certificates import dnn as _dnn
from nspca_core.certificates import dual
from nspca_core.certificates.dnn_steps import _GIVE_UP_EVERY, _climb_rate
from tests.bruteforce import brute_opt
from tests.core.certificates.dnn_cases import cut_run, dense_psd

REL = 1e-9


@pytest.mark.parametrize("seed", range(4))
def test_an_outpaced_run_stops_at_its_third_estimate_and_a_never_outpaced_one_is_unchanged(seed):
    """A rule answering False: asked at every _GIVE_UP_EVERY-th iteration from the third estimate on, with the
    reach written out (ratio + climb x iterations left), and the run float for float the run without it.  A rule
    answering True: the run stops at its third estimate, its point >= OPT, its value the float64 bound of its point
    (or, unevaluated, inf: see the climb test below)."""
    n, k = 36, 2 + seed % 3
    A = dense_psd(seed, n)
    opt, xo = brute_opt(A, k)
    lower = float(xo @ A @ xo) * 0.97
    scale = max(1.0, float(np.abs(A).max()))
    plain = cut_run(A, k, lower, outpaced=None)
    asked = []
    never = cut_run(A, k, lower, outpaced=lambda reach: asked.append(reach) or False)
    assert never[1] == plain[1] and never[2]["iterations"] == plain[2]["iterations"] == 40
    assert np.array_equal(never[0].N, plain[0].N)
    assert len(asked) == 40 // _GIVE_UP_EVERY - 2
    stopped = cut_run(A, k, lower, outpaced=lambda reach: True)
    assert stopped[2]["iterations"] == 3 * _GIVE_UP_EVERY - 1 and stopped[2].get("gave_up")
    again, _ = _dnn.dnn_value(A, k, _dnn.DnnState(np.asarray(stopped[0].N, dtype=float), stopped[0].nu, None,
                                                 stopped[0].C, stopped[0].w))
    assert again >= opt - REL * scale
    # (from this unevaluated start: evaluated only where the estimates' climb was below 0, helper dense15)
    if stopped[2].get("unevaluated"):
        assert stopped[1] == np.inf and stopped[2].get("outpaced") and stopped[2]["exact_evaluations"] == 0
    else:
        assert stopped[1] >= opt - REL * scale and stopped[1] >= again * (1 - 1e-6)


def test_the_reach_is_the_estimates_ratio_plus_their_climb_times_the_iterations_left(monkeypatch):
    """The reach handed to the rule, rebuilt from the estimates the run recorded (its ratio and _climb_rate's)."""
    A = dense_psd(7, 36)
    opt, xo = brute_opt(A, 3)
    lower = float(xo @ A @ xo) * 0.97
    hist = []
    real = _climb_rate
    monkeypatch.setattr(_dnn, "_climb_rate", lambda h, low: hist.append(list(h)) or real(h, low))
    asked = []
    cut_run(A, 3, lower, outpaced=lambda reach: asked.append(reach) or False)
    assert len(asked) == len(hist) >= 3
    for j, (reach, h) in enumerate(zip(asked, hist)):
        it = _GIVE_UP_EVERY * len(h)
        assert it == _GIVE_UP_EVERY * (3 + j)
        assert reach == pytest.approx(lower / h[-1] + real(h, lower) * (40 - it), rel=1e-12)


def _forced(monkeypatch, reach_at):
    """certify(effort="auto")'s dense route on a small n with the forecast failing, the schedule on (lazy start,
    give-up, one cut run) and the cut run's climb set so that its reach is ``reach_at``; records the anchored
    bisections' tops and the cut runs' iterations."""
    monkeypatch.setattr(dual, "_forecast_fails", lambda *a, **kw: True)
    monkeypatch.setattr(S, "anchor_ok", lambda n, k: True)
    monkeypatch.setattr(S, "_CUT_BELOW", 0.9999)  # (the cut run always follows the plain run)
    monkeypatch.setattr(dual, "_kkt_beaten", lambda *a: True)
    monkeypatch.setitem(S._EFFORT["auto"], "schedule_min_n", 0)
    iters = S._EFFORT["auto"]["refresh_iters"]
    monkeypatch.setattr(_dnn, "_climb_rate",
                        lambda h, low: (reach_at - low / h[-1]) / max(iters - _GIVE_UP_EVERY * len(h), 1))
    tops, runs = [], []
    real_above = dual._anchored_above
    monkeypatch.setattr(dual, "_anchored_above", lambda c, low, top, rel: tops.append(low / top) or
                        real_above(c, low, top, rel))
    real_opt = dual.dnn_optimize
    monkeypatch.setattr(dual, "dnn_optimize", lambda *a, **kw: runs.append((kw.get("outpaced"), real_opt(*a, **kw)))
                        or runs[-1][1])
    return tops, runs


@pytest.mark.parametrize("reach_at", [0.99, 0.9])
def test_the_bisection_runs_only_where_the_cut_runs_reach_is_below_the_forecasts_level(monkeypatch, reach_at):
    """Both sides of lower / tried (= _DNN_SKIP_AT): a reach above it runs no anchored bisection during the cut run;
    a reach below runs it once, with the top lower / reach, and a proof there stops the cut run at its third
    estimate.  Every certificate is >= OPT (brute force)."""
    tops, runs = _forced(monkeypatch, reach_at)
    stops = asked = 0
    for seed in range(5):
        n, k = 40, 3
        A = dense_psd(500 + seed, n)
        opt, xo = brute_opt(A, k)
        tops.clear()
        runs.clear()
        c = certify(cov=A, k=k, x=xo * (1 + 0.1 * np.arange(n) / n), effort="auto")
        assert c.upper_bound >= opt * (1 - REL)
        cut = [r for o, r in runs if o is not None]
        if not cut:
            continue
        asked += 1
        during = [t for t in tops if t == pytest.approx(reach_at, rel=1e-9)]
        if reach_at > dual._DNN_SKIP_AT:
            assert not during
        else:
            assert len(during) == 1
            if "anchored" in c.bounds:
                stops += 1
                assert cut[-1][2]["iterations"] == 3 * _GIVE_UP_EVERY - 1
                assert c.bounds["anchored"] >= opt * (1 - REL)
    assert asked  # (not vacuous: the cut run was given the rule)
    if reach_at < dual._DNN_SKIP_AT:
        assert stops  # (a proof stopped a run)


@pytest.mark.parametrize("seed", range(3))
def test_an_outpaced_run_from_an_unevaluated_start_is_evaluated_only_where_its_climb_is_below_zero(seed, monkeypatch):
    """Counting, both sides of climb = 0 (helper dense15): a rule answering True stops the run at its third estimate;
    from an unevaluated start (the lazy cut run) with the estimates' climb >= 0 (0 and 1e-4) nothing is evaluated
    (value inf, info "unevaluated" and "outpaced", 0 evaluations); with a climb of -1e-12 the point is evaluated as
    before (one evaluation, its float64 bound, >= OPT).  From an evaluated start the stopped point is evaluated
    whatever the climb.  Every point returned, evaluated here, is >= OPT (brute force)."""
    n, k = 36, 2 + seed % 3
    A = dense_psd(40 + seed, n)
    opt, xo = brute_opt(A, k)
    lower = float(xo @ A @ xo) * 0.97
    scale = max(1.0, float(np.abs(A).max()))
    for climb in (1e-4, 0.0, -1e-12):
        monkeypatch.setattr(_dnn, "_climb_rate", lambda h, low, c=climb: c)
        st, val, info = cut_run(A, k, lower, outpaced=lambda reach: True)
        assert info["iterations"] == 3 * _GIVE_UP_EVERY - 1 and info.get("gave_up")
        again, _ = _dnn.dnn_value(A, k, _dnn.DnnState(np.asarray(st.N, dtype=float), st.nu, None, st.C, st.w))
        assert again >= opt - REL * scale
        if climb >= 0:
            assert val == np.inf and info.get("unevaluated") and info.get("outpaced")
            assert info["exact_evaluations"] == 0 and info["lam"] is None
        else:
            assert np.isfinite(val) and "unevaluated" not in info and "outpaced" not in info
            assert info["exact_evaluations"] == 1 and val >= opt - REL * scale and val >= again * (1 - 1e-6)
    # an evaluated start: the stopped point evaluated as before (its start's value kept where better)
    monkeypatch.setattr(_dnn, "_climb_rate", lambda h, low: 1e-4)
    scale_A = float(np.abs(A).max())
    st, val, info = _dnn.dnn_optimize(A, k, dual._screen_init(A, k), iters=40, t_start=1e-3 * scale_A,
                                      t_end=1e-4 * scale_A, lr=3e-3 * scale_A, refresh=8, r=6, check_every=40,
                                      target=0.999, lower=lower, ritz32=True, outpaced=lambda reach: True)
    assert np.isfinite(val) and val >= opt - REL * scale and "unevaluated" not in info
    assert info["exact_evaluations"] == 2  # (its start and the stopped point)


def test_a_certificate_whose_cut_run_was_outpaced_unevaluated_is_the_anchored_bound(monkeypatch):
    """Through certify(effort="auto") (the forecast forced to fail, the cut run forced, its climb 0 so that its reach
    is its own estimates' ratio): where the anchored bisection proved and the run stopped unevaluated, the
    certificate has no "dnn" bound, its bound is the anchored one (>= OPT, brute force), and the point the run
    stopped at, evaluated here, is at or above it (the value left out could not have been the certificate's)."""
    _forced(monkeypatch, 0.9)
    monkeypatch.setattr(_dnn, "_climb_rate", lambda h, low: 0.0)
    runs = []
    real_opt = _dnn.dnn_optimize
    monkeypatch.setattr(dual, "dnn_optimize", lambda *a, **kw: runs.append((kw.get("outpaced"), real_opt(*a, **kw)))
                        or runs[-1][1])
    unevaluated = 0
    for seed in range(8):
        n, k = 40, 3
        A = dense_psd(600 + seed, n)
        opt, xo = brute_opt(A, k)
        runs.clear()
        c = certify(cov=A, k=k, x=xo * (1 + 0.1 * np.arange(n) / n), effort="auto")
        assert c.upper_bound >= opt * (1 - REL)
        cut = [r for o, r in runs if o is not None]
        if not cut or not cut[-1][2].get("outpaced"):
            continue
        unevaluated += 1
        st = cut[-1][0]
        assert "dnn" not in c.bounds and c.upper_bound == c.bounds["anchored"] >= opt * (1 - REL)
        again, _ = _dnn.dnn_value(A, k, _dnn.DnnState(np.asarray(st.N, dtype=float), st.nu, None, st.C, st.w))
        assert again >= c.bounds["anchored"] * (1 - 1e-6)
    assert unevaluated  # (not vacuous)
