"""The split certificate's refinements by cost (:func:`nspca_core.certificates._settings.refine_pays`): the cross table
and the anchored tests on S run only where the table's counted cost is at most ``_REFINE_PASSES`` thin passes over
the data; else the plain coupled bound stands, still above brute force."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nspca_core.certificates import _settings as S
from nspca_core.certificates import coupled, dual, route, single
from nspca_core.certificates._settings import refine_pays
from nspca_core.operators.cov import Cov

from tests.bruteforce import brute_opt
from tests.core.certificates.test_split_coupled import _force_split, _modules


def test_refine_pays_on_both_sides_of_its_thresholds():
    # m = 10, n = 100: a thin pass counts 10 x 100 x 16 entries; 80 of them = 1.28e6 = 40 x 60 x k at k = 533.3,
    # 320 of them at k = 2,133.3
    assert refine_pays(10, 100, 40, 60, 533, "auto") == "all"
    assert refine_pays(10, 100, 40, 60, 534, "auto") == "cross"
    assert refine_pays(10, 100, 40, 60, 534, "fast") == "cross"
    assert refine_pays(10, 100, 40, 60, 2133, "auto") == "cross"
    assert refine_pays(10, 100, 40, 60, 2134, "auto") == ""
    assert refine_pays(10, 100, 40, 60, 2134, "full") == "all"  # ("full": today's refinements, the tighter bound)
    assert refine_pays(10, 100, 40, 60, 2134, "auto", exact=True) == "all"  # (the exact mode's budget decides there)
    assert refine_pays(10, 100, 40, 0, 10**6, "auto") == "all"  # (no rest T: nothing to refine)


def _counted(monkeypatch, passes: float, seed: int = 3, n: int = 11, size: int = 6, k: int = 5, tests=None,
             cross: float = 0.0):
    """A forced split certificate with ``_REFINE_PASSES = passes``: (its bound, cross tables made, brute force);
    ``tests`` (a list) gets one entry per anchored search on S (the light route's, the dense one's)."""
    _force_split(monkeypatch, size)
    monkeypatch.setattr(S, "_REFINE_PASSES", passes)
    monkeypatch.setattr(S, "_CROSS_PASSES", max(cross, passes))
    calls, tests = [], tests if tests is not None else []
    real = coupled.cross_table
    monkeypatch.setattr(coupled, "cross_table", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    for mod, name in ((single, "light_S"), (dual, "_anchored")):
        monkeypatch.setattr(mod, name, (lambda f: lambda *a, **kw: tests.append(name) or f(*a, **kw))(
            getattr(mod, name)))
    X = _modules(np.random.default_rng(seed), 30, n, 3)
    cert = route._certify_large(Cov(X, None), k, None, "auto", None)
    return cert, len(calls), brute_opt(X.T @ X / X.shape[0], k)[0] if n <= 14 else None


def test_the_cross_table_is_made_only_where_its_cost_pays(monkeypatch):
    # n = 11, |S| = 6 + the point's support, k = 5, m = 30: the table counts |S| |T| 16 entries; a pass 30 x 11 x 16
    with monkeypatch.context() as mp:
        paid, made, opt = _counted(mp, 1e9)
    assert made >= 1 and paid.upper_bound >= opt * (1 - 1e-12)
    nS = paid.info["split_S"]
    cost = nS * (11 - nS) * 16 / (30 * 11 * 16)
    with monkeypatch.context() as mp:
        above, made_above, _ = _counted(mp, cost * (1 + 1e-6))  # (at its cost: still paid)
    with monkeypatch.context() as mp:
        below, none, _ = _counted(mp, cost * (1 - 1e-6))  # (just short of it: the plain coupled bound)
    assert made_above == made and above.upper_bound == paid.upper_bound
    assert none == 0 and below.upper_bound >= opt * (1 - 1e-12)
    assert below.upper_bound >= paid.upper_bound


def test_no_anchored_test_on_S_where_the_refinements_do_not_pay(monkeypatch):
    # k = 20 > _SPLIT_BRANCH_MAX_K (the light route's sparsities), n = 80, |S| >= 40: S's anchored searches counted
    n, size, k = 80, 40, 20
    paid_tests, short_tests = [], []
    with monkeypatch.context() as mp:
        paid, made, _ = _counted(mp, 1e9, 5, n, size, k, tests=paid_tests)
    with monkeypatch.context() as mp:  # (0: no screen's refinements pay; route may try more than one screen)
        below, none, _ = _counted(mp, 0.0, 5, n, size, k, tests=short_tests)
    assert paid_tests and made >= 1
    assert not short_tests and none == 0 and below.upper_bound >= paid.upper_bound


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.integers(9, 11), st.integers(5, 7), st.integers(4, 6), st.integers(0, 2**31 - 1))
def test_the_plain_coupled_bound_holds_against_bruteforce(monkeypatch, n, size, k, seed):
    """Where nothing pays (``_REFINE_PASSES = 0``) the split certificate is the plain coupled bound: above OPT_k."""
    with monkeypatch.context() as mp:
        cert, made, opt = _counted(mp, 0.0, seed, n, size, k)
    assert made == 0
    assert cert.upper_bound >= opt * (1 - 1e-12)


def test_the_cross_tier_makes_the_table_and_no_anchored_test(monkeypatch):
    """Between the thresholds ("cross"): the cross table is made, S's anchored tests are not (the aimed joint tests
    given up, the light route and dense_dual's off); the bound between the plain one's and every refinement's."""
    n, size, k, seed = 60, 30, 24, 7  # (a case where the cross tier would run 2 joint tests without its give-up)
    tests_all, tests_cross = [], []
    with monkeypatch.context() as mp:
        full, made_all, _ = _counted(mp, 1e9, seed, n, size, k, tests=tests_all)
    joint = []
    with monkeypatch.context() as mp:
        real = coupled.anchored_joint_test
        mp.setattr(coupled, "anchored_joint_test", lambda *a, **kw: joint.append(1) or real(*a, **kw))
        mid, made_cross, _ = _counted(mp, 0.0, seed, n, size, k, tests=tests_cross, cross=1e9)
    with monkeypatch.context() as mp:
        plain, made_none, _ = _counted(mp, 0.0, seed, n, size, k)
    assert made_all >= 1 and made_cross >= 1 and made_none == 0
    assert tests_all and not tests_cross and not joint
    assert full.upper_bound <= mid.upper_bound <= plain.upper_bound


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.integers(9, 11), st.integers(5, 7), st.integers(4, 6), st.integers(0, 2**31 - 1))
def test_the_cross_tier_holds_against_bruteforce(monkeypatch, n, size, k, seed):
    """The cross table alone (tier "cross") on the plain coupled bound: above OPT_k."""
    with monkeypatch.context() as mp:
        cert, _, opt = _counted(mp, 0.0, seed, n, size, k, cross=1e9)
    assert cert.upper_bound >= opt * (1 - 1e-12)
