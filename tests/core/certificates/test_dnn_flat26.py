"""The plain DNN run stopped where it stands still (issue 39, the twentieth round).

:func:`dnn.dnn_optimize`'s ``flat``: a plain run that a cut run follows (``give_up`` set; :func:`dual._dnn` hands it
``flat = cut_at``, the ratio below which the cut run follows) stops, from its third free estimate on, where their
ratio is below ``flat`` and the band of the last three (:func:`dnn_steps._still_pace`, ratio per iteration) times the
iterations left is below :data:`dnn_steps._FLAT_REACH` (:func:`dnn_steps._flat`); its point is evaluated as at a
give-up.  The rule decides effort only (every bound is an evaluated dual point).  Tested here: :func:`_flat` on
both sides of both thresholds, a run on both sides of them (counted: the iteration it stops at, its evaluations;
unchanged float for float where the rule does not fire), what :func:`dual._dnn` hands the plain run, and
certificates with the rule firing against brute force.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core import certify
from nspca_core.certificates import _settings as S
from nspca_core.certificates import dnn as _dnn
from nspca_core.certificates import dnn_steps, dual
from nspca_core.certificates.dnn_steps import _FLAT_REACH, _GIVE_UP_EVERY, _flat, _still_pace
from tests.bruteforce import brute_opt
from tests.core.certificates.dnn_cases import dense_psd

REL = 1e-9


def test_flat_on_both_sides_of_its_thresholds():
    """The band's reach (its pace x iterations left) just below / above _FLAT_REACH, in either direction (a rising
    estimate moves as much as a falling one); the ratio just below / above ``below``; fewer than three estimates;
    no iterations left."""
    lower = 0.95
    hist = [1.0, 1.0, 1.0]  # (a run standing still at ratio 0.95)
    assert _flat(hist, lower, 25, 0.96) and not _flat(hist, lower, 25, 0.95 * (1 - 1e-12))
    assert not _flat(hist[:2], lower, 25, 0.96)
    left = 20
    for side, factor in ((True, 0.99), (False, 1.01)):
        width = factor * _FLAT_REACH / left * 2 * _GIVE_UP_EVERY  # (the band's width in ratio)
        for h in ([1.0, 1.0, lower / (lower + width)], [lower / (lower + width), 1.0, 1.0],
                  [1.0, lower / (lower - width), 1.0]):
            assert _still_pace(h, lower) * left == pytest.approx(factor * _FLAT_REACH, rel=1e-6)
            assert _flat(h, lower, left, 0.999) is side
    assert _flat([1.0, 1.0, 0.99], lower, 0, 0.999)  # (nothing left: nothing to reach)
    assert not _flat([1.0, 1.0, 0.99], lower, 1000, 0.999)
    assert not _flat([1.0, 1.0, 1.01], lower, 1000, 0.999)  # (a rising estimate is not standing still)


def _plain(A, k, lower, **rule):
    """A plain "auto" run (give-up rule on, a cut run to follow) from the screening point, as :func:`dual._dnn`
    starts it."""
    scale = float(np.abs(A).max())
    st0 = dual._screen_init(A, k)
    lam = _dnn.dnn_value_lam(A, k, st0)[1]
    return _dnn.dnn_optimize(A, k, st0, iters=40, t_start=1e-3 * scale, t_end=1e-4 * scale, lr=6e-3 * scale, r=6,
                             check_every=20, target=0.999, lower=lower, ritz32=True, give_up=0.0, start_lam=lam,
                             stall=3e-4, **rule)


@pytest.mark.parametrize("seed", range(3))
def test_a_plain_run_stops_at_its_third_estimate_only_below_both_thresholds(seed, monkeypatch):
    """Counting, with the band's pace set: a reach of 0.99 x _FLAT_REACH (at every estimate) stops the run at
    iteration 14,
    ``info["flat"]``, its point evaluated (one evaluation), its value >= OPT (brute force) and at most the point's
    own float64 bound (+1e-6); 1.01 x (at every estimate), or ``flat`` below the estimates' ratio, or ``flat=None``:
    the run float for float as without the rule."""
    n, k = 36, 2 + seed % 3
    A = dense_psd(70 + seed, n)
    opt, xo = brute_opt(A, k)
    lower = float(xo @ A @ xo) * 0.9
    scale = max(1.0, float(np.abs(A).max()))
    monkeypatch.setattr(dnn_steps, "_still_pace", lambda h, low: 0.0)
    ref = _plain(A, k, lower)
    assert "flat" not in ref[2] and ref[2]["iterations"] > 3 * _GIVE_UP_EVERY
    for factor, flat, fires in ((0.99, 0.9999, True), (1.01, 0.9999, False), (0.0, 0.5, False), (0.0, None, False)):
        # (the band's pace at each estimate such that its reach over the iterations left is factor x _FLAT_REACH)
        monkeypatch.setattr(dnn_steps, "_still_pace",
                            lambda h, low, f=factor: f * _FLAT_REACH / max(40 - _GIVE_UP_EVERY * len(h), 1))
        st, val, info = _plain(A, k, lower, flat=flat)
        if fires:
            assert info.get("flat") and info.get("gave_up") and info["iterations"] == 3 * _GIVE_UP_EVERY - 1
            assert info["exact_evaluations"] == 1 and np.isfinite(val) and val >= opt - REL * scale
            again, _ = _dnn.dnn_value(A, k, _dnn.DnnState(np.asarray(st.N, dtype=float), st.nu, None, st.C, st.w))
            assert again >= opt - REL * scale and val <= again * (1 + 1e-6)
        else:
            assert "flat" not in info and val == ref[1] and info["iterations"] == ref[2]["iterations"]
            assert np.array_equal(st.N, ref[0].N) and info["exact_evaluations"] == ref[2]["exact_evaluations"]


def test_the_rule_needs_give_up(monkeypatch):
    """Without ``give_up`` (no cut run follows) ``flat`` is never asked: the run float for float as without it."""
    A = dense_psd(90, 36)
    opt, xo = brute_opt(A, 3)
    lower = float(xo @ A @ xo) * 0.9
    monkeypatch.setattr(dnn_steps, "_still_pace", lambda h, low: 0.0)
    scale = float(np.abs(A).max())
    runs = []
    for flat in (None, 0.9999):
        runs.append(_dnn.dnn_optimize(A, 3, dual._screen_init(A, 3), iters=40, t_start=1e-3 * scale,
                                      t_end=1e-4 * scale, lr=6e-3 * scale, r=6, check_every=20, target=0.999,
                                      lower=lower, ritz32=True, flat=flat))
    assert runs[0][1] == runs[1][1] and "flat" not in runs[1][2]
    assert runs[0][2]["iterations"] == runs[1][2]["iterations"] and np.array_equal(runs[0][0].N, runs[1][0].N)


def _forced(monkeypatch):
    """certify(effort="auto")'s dense route on a small n with the "auto" schedule on (give-up, one cut run) and the
    plain run's band 0 (the rule fires wherever its ratio is below cut_at; the give-up rule off); records each run's
    ``flat`` and info."""
    monkeypatch.setitem(S._EFFORT["auto"], "schedule_min_n", 0)
    monkeypatch.setattr(dual, "_kkt_beaten", lambda *a: True)
    monkeypatch.setattr(dual, "_forecast_fails", lambda *a, **kw: True)  # (no anchored test: the DNN runs)
    monkeypatch.setattr(dnn_steps, "_still_pace", lambda h, low: 0.0)
    monkeypatch.setattr(_dnn, "_hopeless", lambda *a: False)  # (the plain run stops by this rule or not early)
    runs = []
    real = dual.dnn_optimize
    monkeypatch.setattr(dual, "dnn_optimize", lambda *a, **kw: runs.append((kw.get("flat"), kw.get("give_up"),
                                                                            real(*a, **kw))) or runs[-1][2])
    return runs


def test_dual_hands_the_plain_run_cut_at_and_the_cut_run_follows(monkeypatch):
    """:func:`dual._dnn` gives ``flat = cut_at`` (here _CUT_BELOW: a one-k certificate) to the plain run only (the
    one with ``give_up``); where the rule stopped it, the cut run follows, and every certificate is >= OPT."""
    runs = _forced(monkeypatch)
    fired = 0
    for seed in range(6):
        n, k = 36, 3
        A = dense_psd(300 + seed, n)
        opt, xo = brute_opt(A, k)
        runs.clear()
        c = certify(cov=A, k=k, x=xo * (1 + 0.1 * np.arange(n) / n), effort="auto")
        assert c.upper_bound >= opt * (1 - REL)
        for flat, give_up, _ in runs:
            assert (flat is None) == (give_up is None)
            if flat is not None:
                assert flat == S._CUT_BELOW
        plain = [r for f, g, r in runs if g is not None]
        if plain and plain[0][2].get("flat") and plain[0][2]["iterations"] == 3 * _GIVE_UP_EVERY - 1:
            fired += 1
            assert len(runs) >= 2  # (the cut run followed)
    assert fired  # (not vacuous)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(8, 14), k=st.integers(2, 4), seed=st.integers(0, 10_000))
def test_certificates_with_the_rule_firing_are_above_brute_force(n, k, seed):
    """certify(effort="auto") with the "auto" schedule on small n and the plain run's band 0: >= OPT (brute force)."""
    with pytest.MonkeyPatch.context() as mp:
        _forced(mp)
        A = dense_psd(seed, n)
        opt, xo = brute_opt(A, k)
        c = certify(cov=A, k=k, x=xo, effort="auto")
        assert c.upper_bound >= opt * (1 - REL)


@pytest.mark.parametrize("rule", ["flat", "give_up"])
def test_a_flat_stop_from_a_lazy_start_is_evaluated(rule, monkeypatch):
    """Counting: from an unevaluated start (the lazy plain run, ``evaluate_give_up=False``) a flat stop at the third
    estimate is evaluated (one evaluation, a finite value >= OPT: the cut run then starts from a known value, as from
    the check the run would have made), where a give-up stop there returns its point unevaluated (0 evaluations)."""
    n, k = 36, 3
    A = dense_psd(95, n)
    opt, xo = brute_opt(A, k)
    lower = float(xo @ A @ xo) * 0.9
    scale = float(np.abs(A).max())
    if rule == "flat":
        monkeypatch.setattr(dnn_steps, "_still_pace", lambda h, low: 0.0)
        monkeypatch.setattr(_dnn, "_hopeless", lambda *a: False)
    else:
        monkeypatch.setattr(_dnn, "_hopeless", lambda h, low, aim: len(h) >= 3)
    st, val, info = _dnn.dnn_optimize(A, k, dual._screen_init(A, k), iters=40, t_start=1e-3 * scale,
                                      t_end=1e-4 * scale, lr=6e-3 * scale, r=6, check_every=20, target=0.999,
                                      lower=lower, ritz32=True, give_up=0.0, evaluate_start=False,
                                      evaluate_give_up=False, flat=0.9999)
    assert info["iterations"] == 3 * _GIVE_UP_EVERY - 1 and info.get("gave_up")
    if rule == "flat":
        assert info.get("flat") and "unevaluated" not in info and info["exact_evaluations"] == 1
        assert np.isfinite(val) and val >= opt * (1 - REL)
    else:
        assert "flat" not in info and info.get("unevaluated") and info["exact_evaluations"] == 0 and val == np.inf
