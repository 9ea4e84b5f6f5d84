"""Issue 39, the twenty-fifth round (helper point34): the split certificate's feasible point without a caller's point
(:func:`.split_point._split_lower`) is fit(auto)'s; the batched ascent from :func:`.lower._starts` runs only where
fit(auto) gives no point (not run within a time limit, or not feasible), except at "full" (``ascent_with_fit``).
Counted on both sides of that rule, and the thin certificates and paths that take the point checked against brute
force and certify(k)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import nspca_core as nc
from nspca_core.certificates import _settings as S
from nspca_core.certificates import route, split_point
from nspca_core.certificates.budget import Budget
from nspca_core.operators.cov import Cov

from tests.bruteforce import brute_opt
from tests.core.certificates.test_thin_route import _small_screens, _thin

_CFG = {"ascent_starts": 8}


def _ascents(monkeypatch) -> list:
    """The k of every batched ascent :func:`.split_point._split_lower` runs (the real one, counted)."""
    calls, real = [], split_point._ascent_many

    def counted(cov, k, X0, *args, **kwargs):
        calls.append(k)
        return real(cov, k, X0, *args, **kwargs)

    monkeypatch.setattr(split_point, "_ascent_many", counted)
    return calls


def _feasible(x: np.ndarray, k: int) -> bool:
    return bool((x >= 0).all() and np.count_nonzero(x) <= k and abs(np.linalg.norm(x) - 1) < 1e-12)


def test_fit_auto_s_point_leaves_the_ascent_out(monkeypatch):
    """fit(auto) gives a point: no ascent, its point and value (lower_source "fit(auto)"); a caller's point: neither."""
    calls = _ascents(monkeypatch)
    cov = Cov(_thin(4, 10, 60))
    for k in (3, 7, 20):
        info: dict = {}
        x, lower = split_point._split_lower(cov, k, None, cov.diag(), 1.0, _CFG, None, info)
        fx, fv = split_point._fit_lower(cov, k)
        assert info["lower_source"] == "fit(auto)" and np.array_equal(x, fx) and lower == fv and _feasible(x, k)
    assert calls == []
    info = {}
    assert split_point._split_lower(cov, 3, fx, cov.diag(), 1.0, _CFG, None, info)[1] == cov.quad(fx)
    assert info["lower_source"] == "given" and calls == []
    # "full" (ascent_with_fit): the ascent after fit(auto) too, the better of the two
    full = S._EFFORT["full"]
    assert full.get("ascent_with_fit") and not any(S._EFFORT[e].get("ascent_with_fit") for e in ("fast", "auto"))
    info = {}
    x, lower = split_point._split_lower(cov, 20, None, cov.diag(), 1.0, full, None, info)
    assert calls == [20] and lower >= split_point._fit_lower(cov, 20)[1] and _feasible(x, 20)


def test_the_ascent_runs_where_fit_auto_gives_no_point(monkeypatch):
    """fit(auto) infeasible (None): one ascent, its point; a time limit that affords no fit(auto): one ascent, the best
    of it and the largest variance."""
    calls = _ascents(monkeypatch)
    cov = Cov(_thin(5, 10, 60))
    monkeypatch.setattr(split_point, "_fit_lower", lambda cov, k: None)
    info: dict = {}
    x, lower = split_point._split_lower(cov, 6, None, cov.diag(), 1.0, _CFG, None, info)
    assert calls == [6] and info["lower_source"] == "ascent" and _feasible(x, 6) and lower == cov.quad(x)
    monkeypatch.undo()
    calls = _ascents(monkeypatch)
    monkeypatch.setattr(split_point, "fits", lambda budget, kind, size, times=1.0: kind != "fit")
    info = {}
    x, lower = split_point._split_lower(cov, 6, None, cov.diag(), 1.0, _CFG, Budget(1e6), info)
    assert calls == [6] and info["lower_source"] in ("ascent", "variance") and _feasible(x, 6)
    assert lower >= float(cov.diag().max()) * (1 - 1e-12)


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.integers(5, 8), st.integers(11, 14), st.integers(0, 2**31 - 1))
@example(6, 14, 1)
def test_thin_certificates_on_fit_auto_s_point_bound_the_optimum(monkeypatch, m, n, seed):
    """certify_thin at k = 3..5 (screens forced small) without a point, and certify_path over them: no ascent runs,
    every bound at least the brute-force optimum, every lower bound at most it, the path at most certify(k)'s
    bound (1e-9 relative) at every k."""
    _small_screens(monkeypatch, 4)
    X = _thin(seed, m, n)
    A = X.T @ X / m
    cov = Cov(X)
    ks = [3, 4, 5]
    calls = _ascents(monkeypatch)
    own = {k: route.certify_thin(cov, k, None, "auto", None) for k in ks}
    path = nc.certify_path(X, ks=ks, center=False)
    assert calls == [] and all(c.info["lower_source"] == "fit(auto)" for c in own.values())
    for c, k in zip(path, ks):
        opt = brute_opt(A, k)[0]
        for d in (own[k], c):
            assert d.upper_bound >= opt * (1 - 1e-12) and d.lower <= opt * (1 + 1e-12)
        assert c.upper_bound <= own[k].upper_bound * (1 + 1e-9)
