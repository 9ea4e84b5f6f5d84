"""Issue 39 item 2 with the smaller screen first (``_settings._SMALL_FIRST``, helper path7): a large-n
path's runs take both screens (certify(k) may stand on either) and carry the smaller screen's bounds
too (its curve, :func:`.path_carry.coupled_curve`, and its refinements, :func:`.path_carry.carry_runs`).
Every carried bound is checked against brute force on tiny inputs, and the path against certify(k)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from nspca_core import certify_path
from nspca_core.certificates import _settings as S
from nspca_core.certificates import path_carry as PC
from nspca_core.certificates import path_large as PL
from nspca_core.certificates import route
from nspca_core.certificates.bounds import _rest_curve
from nspca_core.operators.covariance import as_cov

from tests.bruteforce import brute_opt
from tests.core.certificates.test_small_screen import _force_small
from tests.core.certificates.test_split_coupled import _modules

SMALL = settings(max_examples=6, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@SMALL
@given(st.integers(11, 12), st.integers(2, 5), st.integers(0, 2**31 - 1), st.sampled_from([0.9, 1.0, 1.01]))
def test_the_smaller_screens_keep_bounds_every_k_against_bruteforce(monkeypatch, n, k_run, seed, factor):
    """A run with both screens fills the smaller screen's ``keep`` (``small_keep``) where its split bound
    ran (and certify(k)'s own screen's ``keep`` only where the smaller one did not stand); its curve
    carried to every k = 1..n is at least the brute-force OPT_k, and so after the carried joint tests on
    its S (aimed at ``factor`` x OPT_k: below it too, nothing false may be proved), each of which bounds
    S's own optimum at its sparsity."""
    _force_small(monkeypatch)
    rng = np.random.default_rng(seed)
    X = _modules(rng, 8, n, 3)
    A = X.T @ X / X.shape[0]
    cov = as_cov(X)
    keep: dict = {}
    small: dict = {}
    route._certify_large(cov, k_run, None, "auto", None, keep=keep, both=True, small_keep=small)
    assume(small and small["T"].size > 0 and small["S"].size >= 3)
    # (the smaller screen's, not certify(k)'s own; where it stood the larger one was not run)
    assert not keep or small["S"].size < keep["S"].size
    ks = np.arange(1, n + 1)
    opt = np.array([brute_opt(A, int(k))[0] for k in ks])
    BT = _rest_curve(cov, small["T"], n)
    before = PC.coupled_curve(small, BT, ks)
    assert (before >= opt * (1 - 1e-12)).all(), (before, opt)
    held = PC.CarryS(cov, small)
    for k in ks:
        PC.carry_aimed(held, small, BT, int(k), factor * opt[k - 1], float(before[k - 1]), np.inf)
    AS = A[np.ix_(small["S"], small["S"])]
    for i, v in (small.get("BS_at") or {}).items():
        if 1 <= i <= small["S"].size:
            assert v >= brute_opt(AS, i)[0] * (1 - 1e-12) - 1e-12, (i, v)
    after = PC.coupled_curve(small, BT, ks)
    assert (after >= opt * (1 - 1e-12)).all(), (after, opt)
    assert (after <= before).all()


def _path_vs_one(X, ks):
    one = {k: route._certify_large(as_cov(X), k, None, "auto", None) for k in ks}
    path = certify_path(X, ks=ks)
    return path, one


def test_path_with_the_smaller_screen_first_is_never_looser_than_one_k(monkeypatch):
    """With ``_SMALL_FIRST`` on, certify(k) stands on the smaller screen where it certifies; the path's runs
    take both screens, so at every k (each one run: the floor) the path is at most certify(k)'s bound and
    at least OPT_k.  Fails with the runs of certify(k)'s own screen alone (the path before: looser at some
    k of these seeds)."""
    _force_small(monkeypatch)
    looser_before = 0
    for seed in range(6):
        rng = np.random.default_rng(seed)
        X = _modules(rng, 8, 11, 3)
        A = X.T @ X / X.shape[0]
        ks = list(range(2, 6))
        path, one = _path_vs_one(X, ks)
        for c in path:
            assert c.upper_bound <= one[c.k].upper_bound * (1 + 1e-9), (seed, c.k, c.upper_bound, one[c.k].upper_bound)
            assert c.upper_bound >= brute_opt(A, c.k)[0] * (1 - 1e-12)
        with monkeypatch.context() as mp:  # (the runs of the path before: certify(k)'s own screen only)
            real = route._certify_large

            def larger_only(*a, **kw):
                kw.pop("both", None)
                kw.pop("small_keep", None)
                return real(*a, **kw)

            mp.setattr(PL, "_certify_large", larger_only)
            old = certify_path(X, ks=ks)
        looser_before += sum(c.upper_bound > one[c.k].upper_bound * (1 + 1e-9) for c in old)
    assert looser_before > 0


@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.integers(11, 12), st.integers(2, 6), st.integers(0, 2**31 - 1), st.sampled_from([0.0, 0.3]))
def test_spaced_out_path_with_both_screens_stays_valid_against_bruteforce(monkeypatch, n, m, seed, per_k):
    """The path with ``_SMALL_FIRST`` on and its runs spaced out (no floor, ``per_k`` cheapest runs per k;
    the carry unlimited): each k's bound, carried from both screens of the runs, is at least the
    brute-force OPT_k, its point feasible."""
    _force_small(monkeypatch)
    monkeypatch.setattr(S, "_PATH_FLOOR", 0.0)
    monkeypatch.setattr(S, "_PATH_SPLIT_RUNS_PER_K", per_k)
    monkeypatch.setattr(PL, "_CARRY_SHARE", 1e6)
    rng = np.random.default_rng(seed)
    X = _modules(rng, max(m, 3), n, 3)
    A = X.T @ X / X.shape[0]
    for c in certify_path(X, ks=list(range(1, n + 1))):
        assert c.upper_bound >= brute_opt(A, c.k)[0] * (1 - 1e-12), (c.k, c.kind, c.upper_bound)
        assert np.count_nonzero(c.x) <= c.k and c.x.min() >= 0


def test_the_carry_asks_the_forecast_where_it_is_above_the_aim(monkeypatch):
    """Where the runs' forecast ratio is above certify(k)'s aim (here the aim lowered to 0.9), the carried
    tests ask the forecast first (``path_carry._CARRY_SHARP_TESTS``): with no last runs, the path is at most
    the same path's with the aim alone at every k, and tighter at some k (fails without the sharp tests:
    the aim's goal is all the carry asks), every bound at least the best feasible value found."""
    from tests.core.certificates.test_path_large import _forced_wide

    X, ks, one = _forced_wide(monkeypatch)
    monkeypatch.setattr(PL, "_MATCH_SHARE", 0.0)
    monkeypatch.setattr(PL, "_CARRY_SHARE", 1e6)
    monkeypatch.setattr(PC, "_COUPLED_AIM", 0.9)
    monkeypatch.setattr(PC, "_CARRY_SHARP_TESTS", 0)
    aim = certify_path(X, ks=ks)
    monkeypatch.setattr(PC, "_CARRY_SHARP_TESTS", 2)
    sharp = certify_path(X, ks=ks)
    for c, a in zip(sharp, aim):
        assert c.upper_bound <= a.upper_bound * (1 + 1e-12), (c.k, c.upper_bound, a.upper_bound)
        assert c.upper_bound >= max(one[c.k].lower, c.lower) * (1 - 1e-12)
    assert any(c.upper_bound < a.upper_bound * (1 - 1e-6) for c, a in zip(sharp, aim))


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.integers(7, 9), st.integers(2, 6), st.integers(0, 2**31 - 1), st.sampled_from([0.5, 0.9, 0.975]),
       st.booleans())
def test_sharp_carry_stays_valid_against_bruteforce(monkeypatch, n, m, seed, aim, small_first):
    """The carry asking the forecast above the aim (``aim``: certify(k)'s, lowered), either setting of
    ``_SMALL_FIRST``, the runs spaced out and no last runs: every bound at least the brute-force OPT_k."""
    from tests.core.certificates.test_path_large import _force_split

    _force_split(monkeypatch, split_min=5, per_k=1, size=6)
    monkeypatch.setattr(S, "_SMALL_FIRST", small_first)
    monkeypatch.setattr(S, "_PATH_FLOOR", 0.0)
    monkeypatch.setattr(S, "_PATH_SPLIT_RUNS_PER_K", 0.3)
    monkeypatch.setattr(PL, "_MATCH_SHARE", 0.0)
    monkeypatch.setattr(PL, "_CARRY_SHARE", 1e6)
    monkeypatch.setattr(PC, "_COUPLED_AIM", aim)
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n)) * rng.random(n) * 3
    X -= X.mean(axis=0)
    A = X.T @ X / m
    for c in certify_path(X, ks=list(range(1, n + 1))):
        assert c.upper_bound >= brute_opt(A, c.k)[0] * (1 - 1e-12), (c.k, c.kind, c.upper_bound)
