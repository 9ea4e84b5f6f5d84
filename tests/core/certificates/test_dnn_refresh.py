"""The DNN run that renews its cutting planes itself and gives up its plain phase early (issue 39:
"auto"'s one-k certificate at CBCL k = 65 in half the iterations).

Every point the optimizer reaches is a dual point; the bound reported is that point's, evaluated in
float64 and >= the brute-force optimum.  Renewing the cuts never changes the bound of the point
where it happens (the cuts dropped had weight 0), and the give-up rule only decides when to stop.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core import certify
from nspca_core.certificates import _settings as S
from nspca_core.certificates import dnn as _dnn
from nspca_core.certificates import dual
from tests.bruteforce import brute_opt
from tests.core.certificates.dnn_cases import dense_psd

REL = 1e-9


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("refresh", [1, 3, 7])
def test_run_renewing_its_cuts_is_a_valid_bound_wherever_it_stops(seed, refresh):
    """n = 36 > 3 r (the float32 Ritz steps), cuts renewed every `refresh` iterations, stopped after
    1..30 iterations with and without checks and the give-up rule: the state returned is a dual
    point (N >= 0 off a zero diagonal, mu >= 0, cut weights >= 0), the value reported is its
    float64 bound, and it is >= OPT."""
    n, k = 36, 2 + seed % 2
    A = dense_psd(seed, n)
    opt, _ = brute_opt(A, k)
    s = float(np.abs(A).max())
    start = dual._screen_init(A, k)
    opts = {kk: brute_opt(A, kk)[0] for kk in (1, 2, 3)}
    with_cuts = 0
    for iters, check, give_up in ((1, 0, None), (9, 0, 0.999), (30, 5, None), (30, 5, 0.999)):
        state, val, info = _dnn.dnn_optimize(A, k, start, iters=iters, t_start=1e-3 * s, t_end=1e-4 * s,
                                             lr=6e-3 * s, check_every=check, ritz32=True, r=4,
                                             refresh=refresh, give_up=give_up, lower=0.5 * opt)
        assert state.N.min() >= 0 and state.nu >= 0 and not np.diag(state.N).any()
        if state.C is not None:  # (the start itself, without cuts, when nothing reached was better)
            assert state.w is not None and state.w.min() >= 0 and state.C.shape[1] == state.w.size <= 30
        again, _ = _dnn.dnn_value(A, k, _dnn.DnnState(np.asarray(state.N, dtype=float), state.nu, None,
                                                      state.C, state.w))
        assert val == pytest.approx(again, rel=1e-6)
        assert val >= opt - REL * max(1.0, s) and again >= opt - REL * max(1.0, s)
        # every k from the same point (the path's tangents) stays above the optimum there too
        lam, _ = _dnn._lmax_state(A, state)
        for kk, o in opts.items():
            assert _dnn.dnn_tangent(lam, state, n, np.array([kk]))[0] >= o - REL * max(1.0, s)
        with_cuts += info["renewals"]
    assert with_cuts  # the cuts were renewed inside the runs


@pytest.mark.parametrize("seed", range(3))
def test_renewing_the_cuts_keeps_the_point_and_its_bound(seed):
    """refreshed_cuts keeps the cuts in use (positive weight, largest first, at most max_cuts) and
    adds the new ones at weight 0: the dual matrix, hence the bound, is the point's own."""
    rng = np.random.default_rng(seed)
    n, k = 30, 3
    A = dense_psd(seed, n)
    U = np.linalg.qr(rng.standard_normal((n, 4)))[0]
    C = rng.standard_normal((n, 6))
    w = np.array([0.0, 0.3, 0.0, 1.2, 0.05, 0.3]) * float(np.abs(A).max())
    base = _dnn.DnnState(np.zeros((n, n)), 0.5 * n, None, C, w)
    for max_cuts in (4, 5, 6, 12):
        C2, w2, keep = _dnn.refreshed_cuts(U, k, C, w, max_cuts)
        room = max(max_cuts - 4, 0)
        want = [j for j in sorted(range(6), key=lambda j: (-w[j], j)) if w[j] > 0][:room]
        assert list(keep) == want
        assert np.array_equal(C2[:, : len(want)], C[:, want]) and np.array_equal(w2[: len(want)], w[want])
        assert not w2[len(want):].any() and C2.shape[1] == len(want) + 4
        if room >= 4:  # every cut in use kept: the same matrix, the same bound
            v_old, _ = _dnn.dnn_value(A, k, base)
            v_new, _ = _dnn.dnn_value(A, k, _dnn.DnnState(base.N, base.nu, None, C2, w2))
            assert v_new == pytest.approx(v_old, rel=1e-12)


def _limit_brute(values):
    """Aitken's limit of three values written out: a + (b - a) / (1 - q), q the ratio of the gains."""
    a, b, c = values
    q = (b - c) / (a - b)
    return b - (b - c) / (1 - q)


@settings(max_examples=200, deadline=None)
@given(st.floats(1.0, 1e6), st.floats(1e-6, 0.5), st.floats(0.0, 0.99), st.floats(0.5, 1.0), st.floats(0.9, 1.0))
def test_hopeless_is_the_geometric_limit_against_the_aim(start, gain, q, low_frac, aim):
    """_hopeless: the bound's three last values with gains g, q g head for start - g - q g / (1 - q);
    the verdict is ``lower < aim * limit``; growing gains or no gain give no verdict."""
    a = start
    b = a - gain * a
    c = b - q * gain * a
    hist = [2 * a, a, b, c]
    limit = _limit_brute((a, b, c)) if q > 0 else c
    lower = low_frac * limit
    if limit <= 0:
        return
    got = _dnn._hopeless(hist, lower, aim)
    if abs(lower - aim * limit) > 1e-9 * abs(limit):
        assert got == (lower < aim * limit)
    assert not _dnn._hopeless([a, a + 1.0, a + 3.0], 0.0, aim)  # a rising bound: no verdict
    assert not _dnn._hopeless([a, a - 1.0, a - 2.0], lower, aim)  # gains not shrinking: no verdict
    assert not _dnn._hopeless([a, b], lower, aim)  # too few values


def test_adam_resized_carries_the_kept_moments():
    opt = _dnn._Adam((5,))
    x = np.ones(5)
    for g in (np.arange(5.0), -np.arange(5.0) + 1.0):
        x = opt.step(x, g, 0.1)
    new = opt.resized(np.array([3, 1]), 2)
    assert new.m.shape == (4,) and np.array_equal(new.m[:2], opt.m[[3, 1]])
    assert np.array_equal(new.v[:2], opt.v[[3, 1]]) and not new.m[2:].any() and not new.v[2:].any()


@pytest.mark.parametrize("seed", range(3))
def test_certify_auto_through_the_renewed_cuts_is_above_bruteforce(monkeypatch, seed):
    """certify(effort="auto") on n = 40 (> 3 x the 6 Ritz vectors): with the anchored bound kept
    out, the DNN's plain run gives up and its cuts are renewed in one run (forced by a cut
    threshold above any ratio); the certificate is >= OPT (brute force)."""
    monkeypatch.setattr(S, "_CUT_BELOW", 0.9999)
    monkeypatch.setattr(S, "anchor_ok", lambda n, k: False)
    monkeypatch.setitem(S._EFFORT["auto"], "schedule_min_n", 0)  # (the schedule from 64 features up)
    n, k = 40, 3
    A = dense_psd(100 + seed, n)
    opt, _ = brute_opt(A, k)
    c = certify(cov=A, k=k, effort="auto")
    assert c.upper_bound >= opt * (1 - REL)
    dnn = c.info["dnn"]
    assert dnn["gave_up"] and dnn["cuts"]["rounds"] == 1 and dnn["cuts"]["count"] > 0  # (not vacuous)


@settings(max_examples=40, deadline=None)
@given(st.integers(150, 170), st.integers(2, 12), st.integers(0, 2**31 - 1), st.floats(0.3, 1.5), st.floats(0.0, 1.2))
def test_kkt_evaluation_skipped_only_where_it_could_not_help(n, k, seed, best_frac, low_frac):
    """dual._kkt_beaten (no evaluation of the KKT point) only when its rigorous bound v is at least
    the best bound so far or cannot certify _KKT_USEFUL: skipped => v >= best or lower < 0.9 v."""
    rng = np.random.default_rng(seed)
    A = dense_psd(seed, n)
    x = np.zeros(n)
    sup = rng.choice(n, size=k, replace=False)
    x[sup] = np.abs(rng.standard_normal(k)) + 0.1
    x /= np.linalg.norm(x)
    v, _, _ = dual._kkt_point(A, k, x)
    best, lower = best_frac * v, low_frac * v
    if dual._kkt_beaten(A, x, best, lower):
        assert v >= best * (1 - 1e-9) or lower < dual._KKT_USEFUL * v * (1 + 1e-9)


@pytest.mark.parametrize("seed", range(2))
def test_certify_without_the_kkt_evaluation_is_above_bruteforce(monkeypatch, seed):
    """n = 150 (the estimate's size): with the KKT evaluation skipped or not (by the estimate or by the proved
    floor, dual_start._kkt_floored, asked first), certify(x) >= OPT."""
    verdicts = []
    beaten, floored = dual._kkt_beaten, dual._kkt_floored
    monkeypatch.setattr(dual, "_kkt_beaten", lambda *a: verdicts.append(beaten(*a)) or verdicts[-1])
    monkeypatch.setattr(dual, "_kkt_floored", lambda *a: verdicts.append(floored(*a)) or verdicts[-1])
    n, k = 150, 2
    A = dense_psd(200 + seed, n)
    opt, xo = brute_opt(A, k)
    rng = np.random.default_rng(seed)
    for x in (xo, np.abs(rng.standard_normal(n)) * (np.arange(n) < k)):
        c = certify(cov=A, k=k, x=x, effort="auto")
        assert c.upper_bound >= opt * (1 - REL)
    assert True in verdicts  # the skip was exercised


@settings(max_examples=25, deadline=None)
@given(st.integers(16, 26), st.integers(1, 3), st.integers(0, 2**31 - 1), st.integers(1, 8), st.integers(1, 25),
       st.sampled_from([None, 0.5, 0.999]), st.booleans())
def test_property_renewed_cuts_run_above_bruteforce(n, k, seed, refresh, iters, give_up, with_cuts):
    """Any size, sparsity, renewal interval, length, give-up level, and a start with or without cuts
    of its own: the run's reported bound is its state's float64 bound, and >= OPT."""
    A = dense_psd(seed, n)
    opt, _ = brute_opt(A, k)
    s = float(np.abs(A).max())
    start = dual._screen_init(A, k)
    if with_cuts:
        C = np.random.default_rng(seed).standard_normal((n, 3))
        start = _dnn.DnnState(start.N, start.nu, None, C, np.array([0.0, 0.1 * s, 0.2 * s]))
    state, val, _ = _dnn.dnn_optimize(A, k, start, iters=iters, t_start=1e-3 * s, t_end=1e-4 * s, lr=6e-3 * s,
                                      check_every=5, ritz32=True, r=4, refresh=refresh, give_up=give_up,
                                      lower=0.9 * opt)
    again, _ = _dnn.dnn_value(A, k, _dnn.DnnState(np.asarray(state.N, dtype=float), state.nu, None, state.C,
                                                  state.w))
    assert val == pytest.approx(again, rel=1e-6)
    assert min(val, again) >= opt - REL * max(1.0, s)
