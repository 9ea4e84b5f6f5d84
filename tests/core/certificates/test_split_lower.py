"""Issue 39, the twenty-fifth round (helper point34): on the eager split route (thin data that
:func:`.route.split_cheaper` sends to the split certificate, a thin path's every k) the feasible point without a
caller's point (:func:`.split_point._split_lower`, ``after_fit=False``) is fit(auto)'s; the batched ascent from
:func:`.lower._starts` runs there only where fit(auto) gives no point (not run within a time limit, or not
feasible), elsewhere after fit(auto) as before.  Counted on both sides of that rule, and the thin certificates and
paths that take the point checked against brute force and certify(k)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import nspca_core as nc
from nspca_core.certificates import route, single, split_point
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


def _lower(cov, k, after_fit, budget=None, x=None):
    info: dict = {}
    x, lower = split_point._split_lower(cov, k, x, cov.diag(), 1.0, _CFG, budget, info, after_fit=after_fit)
    return x, lower, info["lower_source"]


def test_after_fit_false_leaves_the_ascent_out_where_fit_auto_gives_a_point(monkeypatch):
    """``after_fit=False`` and fit(auto) gives a point: no ascent, fit(auto)'s point and value; ``after_fit=True``
    (the default, the other split routes): one ascent after it, the better of the two; a caller's point: neither."""
    calls = _ascents(monkeypatch)
    cov = Cov(_thin(4, 10, 60))
    for k in (3, 7, 20):
        x, lower, src = _lower(cov, k, False)
        fx, fv = split_point._fit_lower(cov, k)
        assert src == "fit(auto)" and np.array_equal(x, fx) and lower == fv and _feasible(x, k)
    assert calls == []
    x, lower, src = _lower(cov, 20, True)
    assert calls == [20] and src in ("fit(auto)", "ascent") and lower >= fv and _feasible(x, 20)
    assert _lower(cov, 3, False, x=fx)[1:] == (cov.quad(fx), "given") and _lower(cov, 3, True, x=fx)[2] == "given"
    assert calls == [20]


def test_the_ascent_runs_where_fit_auto_gives_no_point(monkeypatch):
    """``after_fit=False``, fit(auto) infeasible (None): one ascent, its point; a time limit that affords no
    fit(auto): one ascent, the best of it and the largest variance."""
    calls = _ascents(monkeypatch)
    cov = Cov(_thin(5, 10, 60))
    monkeypatch.setattr(split_point, "_fit_lower", lambda cov, k: None)
    x, lower, src = _lower(cov, 6, False)
    assert calls == [6] and src == "ascent" and _feasible(x, 6) and lower == cov.quad(x)
    monkeypatch.undo()
    calls = _ascents(monkeypatch)
    monkeypatch.setattr(split_point, "fits", lambda budget, kind, size, times=1.0: kind != "fit")
    x, lower, src = _lower(cov, 6, False, Budget(1e6))
    assert calls == [6] and src in ("ascent", "variance") and _feasible(x, 6)
    assert lower >= float(cov.diag().max()) * (1 - 1e-12)


def test_only_the_eager_split_route_leaves_it_out(monkeypatch):
    """_certify_split passes ``after_fit=not eager``: the eager route (certify_thin) no ascent, the other split
    route (wide data's) one ascent per certificate."""
    seen = []
    real = single._split_lower

    def spy(*args, after_fit=True, **kwargs):
        seen.append(after_fit)
        return real(*args, after_fit=after_fit, **kwargs)

    monkeypatch.setattr(single, "_split_lower", spy)
    _small_screens(monkeypatch, 8)
    cov = Cov(_thin(6, 8, 40))
    single._certify_split(cov, 4, None, "auto", None, eager=True, size=8)
    single._certify_split(cov, 4, None, "auto", None)
    assert seen == [False, True]


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.integers(4, 6), st.integers(14, 15), st.integers(0, 2**31 - 1))
@example(6, 14, 1)
def test_thin_certificates_on_fit_auto_s_point_bound_the_optimum(monkeypatch, m, n, seed):
    """certify_thin at k = 3..5 (screens forced small; shapes the eager route takes at each) without a point, and
    certify_path over them: no ascent runs, every bound at least the brute-force optimum, every lower bound at most
    it, the path at most certify(k)'s bound (1e-9 relative) at every k."""
    _small_screens(monkeypatch, 4)
    X = _thin(seed, m, n)
    A = X.T @ X / m
    cov = Cov(X)
    ks = [3, 4, 5]
    assert all(route.split_cheaper(cov, k, "auto") for k in ks)
    calls = _ascents(monkeypatch)
    own = {k: nc.certify(X, k=k, center=False) for k in ks}
    path = nc.certify_path(X, ks=ks, center=False)
    assert calls == [] and all(c.info["lower_source"] == "fit(auto)" for c in own.values())
    for c, k in zip(path, ks):
        opt = brute_opt(A, k)[0]
        for d in (own[k], c):
            assert d.upper_bound >= opt * (1 - 1e-12) and d.lower <= opt * (1 + 1e-12)
        assert c.upper_bound <= own[k].upper_bound * (1 + 1e-9)
