"""Issue 39, the twenty-third round (helper grown32): a thin path's grown screens chosen by the CARRIED bound's gap
(:func:`.route.path_grown`), certify(k)'s own only where the gap exceeds the 0.005 rule (``route._EAGER_SLACK``).
The rule is counted on both sides of its threshold (the gap the bound carried from a larger k leaves, not the k's
own), and a path's thin certificates with it are checked against brute force."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from nspca_core.certificates import route
from nspca_core.operators.cov import Cov

from tests.bruteforce import brute_opt
from tests.core.certificates.test_thin_route import _small_screens, _thin

_B_S = 1.0 / 0.9975  # (stand-in certificates: S's own ratio 0.9975, their lower bound 1)


def _cert(gap: float, size: int = 300, lower: float = 1.0) -> SimpleNamespace:
    """A stand-in certify_thin certificate whose own ratio is ``gap`` below S's own (on ``size`` features)."""
    return SimpleNamespace(x=np.ones(2500), lower=lower, upper_bound=lower / (lower / (_B_S * lower) - gap),
                           info={"B_S": _B_S * lower, "split_S": size})


def _runs(monkeypatch, certs: dict, below: float = 0.5) -> list:
    """path_grown on ``certs`` (60 x 2,500 zeros: every grown screen's predicted flops below the dense route's):
    the (k, size) of the grown screens it runs; each returns ``below`` times the certificate's bound."""
    calls = []

    def split(cov, k, x, effort, callback, **kw):
        calls.append((k, kw["size"]))
        return SimpleNamespace(upper_bound=certs[k].upper_bound * below, info={})

    monkeypatch.setattr(route, "_certify_split", split)
    route.path_grown(Cov(np.zeros((60, 2500))), certs, "auto")
    return calls


def test_a_path_grows_where_the_carried_gap_exceeds_the_path_slack(monkeypatch):
    """One k (150): no grown screen within the path's slack (0.99 of it), one 3x larger beyond it (1.01 of it), whose
    bound then stands; none where certify(k) grew its screen already (3x the 2 k screen; one feature fewer grows) or
    had no S bound."""
    s = route._PATH_SLACK
    assert 0 < s < route._EAGER_SLACK
    assert _runs(monkeypatch, {150: _cert(s * 0.99)}) == []
    certs = {150: _cert(s * 1.01)}
    first = certs[150].upper_bound
    assert _runs(monkeypatch, certs) == [(150, 900)]
    assert certs[150].upper_bound == first * 0.5
    assert _runs(monkeypatch, {100: _cert(s * 1.01, size=600)}) == []  # (k = 100: 3x its 2 k screen, grown)
    assert _runs(monkeypatch, {100: _cert(s * 1.01, size=599)}) == [(100, 1797)]
    c = _cert(s * 1.01)
    c.info.pop("B_S")
    assert _runs(monkeypatch, {150: c}) == []


def test_the_gap_is_the_carried_bounds(monkeypatch):
    """Two k: k = 150's own gap beyond the slack (twice it), k = 151 grown already (its bound carried only): where its
    bound carried to 150 leaves a gap within the slack (0.99 of it) nothing runs, at 1.01 of it k = 150 grows.  A
    grown screen at the larger k (its own gap beyond the slack) carries too: the k below then runs nothing where its
    bound stands (halved), and runs where it does not (k from the largest down)."""
    s = route._PATH_SLACK

    def pair(gap151: float, size151: int = 900) -> dict:
        return {150: _cert(2 * s), 151: _cert(gap151, size=size151)}

    assert _runs(monkeypatch, pair(s * 0.99)) == []
    assert _runs(monkeypatch, pair(s * 1.01)) == [(150, 900)]
    assert _runs(monkeypatch, pair(2 * s, 300)) == [(151, 900)]
    assert _runs(monkeypatch, pair(2 * s, 300), below=1.0) == [(151, 900), (150, 900)]


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.integers(5, 8), st.integers(11, 14), st.integers(0, 2**31 - 1))
@example(6, 14, 1)
def test_path_grown_certificates_bound_the_optimum(monkeypatch, m, n, seed):
    """certify_thin at k = 3..5 (screens forced small), then path_grown with its slack -1 (a grown screen wherever
    certify(k) grew none and it may grow): every bound at least the brute-force optimum, never above certify(k)'s."""
    k0 = 3
    _small_screens(monkeypatch, min(k0 + 1, n - 6))
    monkeypatch.setattr(route, "_PATH_SLACK", -1.0)
    monkeypatch.setattr(route, "_grows", lambda cov, size: size < cov.n)
    X = _thin(seed, m, n)
    A = X.T @ X / m
    cov = Cov(X)
    certs = {k: route.certify_thin(cov, k, None, "auto", None) for k in range(k0, k0 + 3)}
    own = {k: c.upper_bound for k, c in certs.items()}
    route.path_grown(cov, certs, "auto")
    for k, c in certs.items():
        opt = brute_opt(A, k)[0]
        assert c.upper_bound >= opt * (1 - 1e-12)
        assert c.upper_bound <= own[k]
        assert c.lower <= opt * (1 + 1e-12)
