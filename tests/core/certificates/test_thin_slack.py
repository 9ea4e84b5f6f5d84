"""Issue 39, nineteenth round (helper thin25): the thin route's two effort rules inside the 0.005 ratio rule
(the slack 2e-3 -> 4e-3, the fallback 5e-3 above it); since helper grown32 (the twenty-third round) the slack is the
fallback's 0.005: a gap within the issue's rule pays for neither the grown screen nor the dense route.
The grown screen follows only where T holds the 2 k screen's ratio more than ``route._EAGER_SLACK`` below S's own,
and the dense certificate too only where T still holds it more than ``route._EAGER_FALLBACK`` below.  Both rules
are counted on both sides of their thresholds, and certify_thin with them is checked against brute force."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from nspca_core.certificates import route
from nspca_core.operators.cov import Cov

from tests.bruteforce import brute_opt
from tests.core.certificates.test_thin_route import _small_screens, _thin

_B_S = 1.0 / 0.9975  # (a stand-in first certificate: S's own ratio 0.9975, its lower bound 1)


def _first(gap: float) -> SimpleNamespace:
    """A stand-in first (eager, 2 k) certificate whose ratio is ``gap`` below S's own."""
    return SimpleNamespace(x=np.ones(2500), lower=1.0, upper_bound=1.0 / (1.0 / _B_S - gap),
                           info={"B_S": _B_S, "split_S": 300})


def _grows_once(monkeypatch, gap: float) -> list:
    """eager_grown on :func:`_first`: the larger screens it runs (their sizes; each returns a bound above the first
    one's, so it stops after one)."""
    calls = []

    def split(cov, k, x, effort, callback, **kw):
        calls.append(kw["size"])
        return SimpleNamespace(upper_bound=np.inf, info={})

    monkeypatch.setattr(route, "_certify_split", split)
    route.eager_grown(Cov(np.zeros((60, 2500))), 150, _first(gap), "auto", None, None, None)
    return calls


def test_the_screen_grows_only_where_T_holds_the_ratio_more_than_the_slack_below_S(monkeypatch):
    """The grown screen's rule, both sides of its threshold: no larger screen within the slack (at 0.99 of it, and
    at 3e-3, where the former slack 2e-3 grew, and at 4.5e-3, where thin25's 4e-3 grew), one 3x larger beyond it
    (1.01 of it)."""
    assert route._EAGER_SLACK > 4.5e-3
    assert _grows_once(monkeypatch, route._EAGER_SLACK * 0.99) == []
    assert _grows_once(monkeypatch, 3e-3) == []
    assert _grows_once(monkeypatch, 4.5e-3) == []
    assert _grows_once(monkeypatch, route._EAGER_SLACK * 1.01) == [900]


def test_both_rules_read_6e3_since_the_plain_contraction(monkeypatch):
    """Helper thin35: S's plain tests' contraction proof lifts S's ratio ~0.0008, so both rules are 6e-3 (the 0.005
    rule plus that shift): at 5.5e-3 (beyond the former 5e-3) neither the grown screen nor the dense route runs; at
    6.5e-3 both do."""
    assert route._EAGER_SLACK == route._EAGER_FALLBACK == 6e-3
    assert _grows_once(monkeypatch, 5.5e-3) == []
    assert _dense_runs(monkeypatch, 5.5e-3) == 0
    assert _grows_once(monkeypatch, 6.5e-3) == [900]
    assert _dense_runs(monkeypatch, 6.5e-3) == 1


def _dense_runs(monkeypatch, gap: float) -> int:
    """certify_thin on a stand-in eager certificate (:func:`_first`): how many dense certificates it runs."""
    runs = []
    monkeypatch.setattr(route, "_certify_large", lambda *a, **kw: _first(gap))

    def dense(*a, **kw):
        runs.append(1)
        return SimpleNamespace(upper_bound=np.inf), None

    monkeypatch.setattr(route, "_certify_dense", dense)
    route.certify_thin(Cov(np.zeros((60, 2500))), 150, None, "auto", None)
    return len(runs)


def test_the_dense_route_follows_only_where_T_holds_the_ratio_more_than_the_fallback_below_S(monkeypatch):
    """The dense fallback's rule, both sides of its threshold: not within it (0.99 of it; and within the slack,
    where no grown screen ran: the fallback is not below the slack, so no k without a grown screen pays the dense
    route), run beyond it (1.01 of it)."""
    assert route._EAGER_FALLBACK >= route._EAGER_SLACK
    assert _dense_runs(monkeypatch, route._EAGER_FALLBACK * 0.99) == 0
    assert _dense_runs(monkeypatch, route._EAGER_SLACK * 0.99) == 0
    assert _dense_runs(monkeypatch, route._EAGER_FALLBACK * 1.01) == 1


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.integers(5, 8), st.integers(11, 14), st.integers(3, 6), st.integers(0, 2**31 - 1))
@example(6, 14, 4, 1)
def test_the_thin_certificate_bounds_the_optimum(monkeypatch, m, n, k, seed):
    """certify_thin with both rules (screens forced small, so S is a strict subset and the grown screen can run):
    at least the brute-force optimum, its feasible value at most it."""
    _small_screens(monkeypatch, min(k + 1, n - 4))
    X = _thin(seed, m, n)
    A = X.T @ X / m
    opt = brute_opt(A, k)[0]
    c = route.certify_thin(Cov(X), k, None, "auto", None)
    assert c.upper_bound >= opt * (1 - 1e-12)
    assert c.lower <= opt * (1 + 1e-12)
