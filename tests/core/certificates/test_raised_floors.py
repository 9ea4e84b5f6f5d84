"""Issue 39 (helper widek15): ``screens.own_hopeless`` asks its ceilings again with S's floors raised
(``screens._Floors``: truncated power steps from x's truncations, ``aim_terms._ascended``) where ``lower`` falls
short of a ceiling's rule by less than ``screens._FLOOR_REACH``.  The raised floors are checked against S's optimum
by enumeration (each at most OPT_S(i)), the raised ceiling against the coupled terms with those optima (no bound
of S brings the coupled bound below it), the rule by counting the steps run and the own screen's DNN runs on both
sides of its thresholds; the certificate against the whole optimum."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from nspca_core.certificates import coupled, screens
from nspca_core.certificates.aim_terms import _ascended, _truncated_all
from nspca_core.certificates.bounds import _rest_curve, _rest_spectrum
from nspca_core.certificates.cross import cross_table
from nspca_core.certificates.split_point import _lambda_S
from nspca_core.operators.cov import Cov

from tests.bruteforce import brute_opt
from tests.core.certificates.test_skip_own import _own_counts, brute_t_terms
from tests.core.certificates.test_small_screen import TINY, _force_small, modules_case


def _poor_x(rng, s: int) -> np.ndarray:
    """A unit nonnegative point on S, some entries zero: truncations that power steps can improve."""
    xS = np.where(rng.random(s) < 0.7, rng.random(s), 0.0)
    xS[int(rng.integers(0, s))] = 1.0
    return xS / np.linalg.norm(xS)


@TINY
@given(st.integers(4, 9), st.integers(0, 2**31 - 1), st.integers(0, 12))
def test_the_raised_floors_are_feasible_values_at_most_the_optimum(s, seed, steps):
    """``_ascended`` at every sparsity i is at least x's truncation's value and at most S's optimum at i
    (enumeration): a floor under any bound of S at i."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(5, s)) + rng.normal(size=(5, 1))
    AS = X.T @ X / 5
    xS = _poor_x(rng, s)
    ii = np.arange(1, s + 1)
    up = _ascended(AS, xS, ii, steps)
    low = _truncated_all(AS, xS, ii)
    assert np.all(up >= low)
    for i in ii:
        assert up[i - 1] <= brute_opt(AS, int(i))[0] * (1 + 1e-12) + 1e-12, (i, up[i - 1])


def _case(seed: int, n: int, k: int, s: int, with_table: bool):
    X, A, _ = modules_case(seed, n, k, False)
    cov = Cov(X, None)
    S = np.sort(np.argsort(-np.diag(A), kind="stable")[:s])
    T = np.setdiff1d(np.arange(n), S)
    AS = A[np.ix_(S, S)]
    xS = _poor_x(np.random.default_rng(seed), s)
    kS = min(k, s)
    BT = _rest_curve(cov, T, k, spec=_rest_spectrum(cov, T, None, S))
    cross = cross_table(cov, S, T, kS, k, _lambda_S(cov, S)) if with_table else None
    return AS, xS, BT, kS, cross


@TINY
@given(st.integers(9, 12), st.integers(2, 4), st.integers(4, 7), st.integers(0, 2**31 - 1), st.booleans())
def test_the_raised_ceiling_is_below_every_coupled_bound_of_S(n, k, s, seed, with_table):
    """The ceiling with raised floors is at least ``t_ceiling``'s and at most the coupled bound's terms with part
    of the support in T when every ``B_S(i)`` is S's exact optimum at i (enumeration), same B_T and cross table."""
    AS, xS, BT, kS, cross = _case(seed, n, k, s, with_table)
    raised = screens._Floors(AS, xS, BT, k, kS).raised(cross)
    assert raised >= coupled.t_ceiling(AS, xS, BT, k, kS, cross)
    best = brute_t_terms(AS, BT, k, kS, cross)
    assert raised <= best * (1 + 1e-12) + 1e-12


def _raising_case():
    """A tiny case whose raised ceiling is above x's truncations' (the first seed that has one)."""
    for seed in range(200):
        AS, xS, BT, kS, cross = _case(seed, 11, 4, 6, False)
        plain = coupled.t_ceiling(AS, xS, BT, 4, kS, None)
        raised = screens._Floors(AS, xS, BT, 4, kS).raised(None)
        if raised > plain * (1 + 1e-6):
            return AS, xS, BT, kS, plain, raised
    raise AssertionError("no raising case")


def test_the_floors_are_raised_exactly_within_reach(monkeypatch):
    """Counting the steps (``_ascended`` calls) on both sides of ``lower < (goal + _FLOOR_REACH) x ceiling``, with
    ``goal`` between ``lower / raised`` and ``lower / ceiling`` (x's truncations say no, the raised floors yes):
    just within reach the steps run once and the rule holds, just outside they never run and it does not; where the
    truncations' ceiling already holds the rule, no steps."""
    AS, xS, BT, kS, plain, raised = _raising_case()
    calls = []
    monkeypatch.setattr(screens, "_ascended", lambda *a: (calls.append(1), _ascended(*a))[1])
    lower = 1.0
    goal = lower / np.sqrt(plain * raised)
    assert not lower < goal * plain and lower < goal * raised
    for side, eps in (("within", 1e-9), ("outside", -1e-9)):
        monkeypatch.setattr(screens, "_FLOOR_REACH", (lower / plain - goal) * (1 + eps))
        calls.clear()
        verdict = screens._Floors(AS, xS, BT, 4, kS).below(lower, goal, plain, None)
        assert (len(calls), verdict) == ((1, True) if side == "within" else (0, False))
    calls.clear()
    monkeypatch.setattr(screens, "_FLOOR_REACH", 1.0)
    assert screens._Floors(AS, xS, BT, 4, kS).below(lower, lower / plain * (1 + 1e-9), plain, None)
    assert calls == []


def test_the_own_screen_is_skipped_by_the_raised_floors_alone(monkeypatch):
    """certify(k)'s route where x's truncations leave the own screen's rule just short (the whole table's ceiling
    1e-9 below it): with ``_FLOOR_REACH`` 0 the own screen's DNN runs; with the reach the raised floors rule it out
    (only the larger screen's DNN runs).  The certificate is above OPT either way."""
    _force_small(monkeypatch, per_k=2)
    # (the screens are told apart by size: the other screen, chosen at 0.9x since wide26, is 6 features here as
    # the own one is; 1.5x keeps them apart, the rule counted is own_hopeless's)
    monkeypatch.setattr(screens, "_CROSS", 1.5)
    monkeypatch.setattr(coupled, "_SMALL_PER_K", 100)  # (no smaller screen: certify(k)'s own and the grown one)
    X, A, x = modules_case(5, 12, 3, True)
    opt = brute_opt(A, 3)[0]
    lower = float(x @ A @ x)
    _, _, _, ceil = _own_counts(monkeypatch, X, 3, x, 10.0)  # (fires at every ceiling: all three seen)
    aim = lower / ceil[-1] * (1 - 1e-9) + coupled._SMALL_SHORT  # (x's truncations: just short of the rule)
    own = 6
    dnn, _, cert, _ = _own_counts(monkeypatch, X, 3, x, aim)
    assert dnn[0] == own and cert.upper_bound >= opt * (1 - 1e-12)
    dnn, _, cert, _ = _own_counts(monkeypatch, X, 3, x, aim, reach=0.5)
    assert own not in dnn and dnn and cert.upper_bound >= opt * (1 - 1e-12)
