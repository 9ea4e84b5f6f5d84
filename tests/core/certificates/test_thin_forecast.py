"""Issue 39 (helper thin19): the thin route's eager S bound (:func:`nspca_core.certificates.coupled.light_S` inside
:func:`nspca_core.certificates.thin_anchor.top_last`) asks no forecast (:func:`.dual._forecast_fails`): its search
(:func:`.thin_anchor.anchored`) runs where the forecast would have said "fails" too.  Every bound it returns is a
proved one (at least the brute-force optimum); where the forecast says "proves", the same search follows it as
before, so the same bound float for float; outside the block the forecast is asked as before (counted, both
sides)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from nspca_core.certificates import coupled, dual, thin_anchor
from nspca_core.certificates.dual import _ANCHOR_REL, _DNN_SKIP_AT
from nspca_core.operators.cov import Cov

from tests.bruteforce import brute_opt
from tests.core.certificates.test_bisection_hints import _thin
from tests.core.certificates.test_top_memo import _count_forecasts, _forecasts_on


def _point(A: np.ndarray, k: int, frac: float) -> np.ndarray:
    """A feasible point: the brute-force optimum's (``frac`` 1) or the k largest variances' (``frac`` < 1)."""
    if frac >= 1.0:
        return brute_opt(A, k)[1]
    x = np.zeros(A.shape[0])
    x[np.argsort(-np.diag(A), kind="stable")[:k]] = 1.0 / np.sqrt(k)
    return x


@settings(max_examples=40, deadline=None)
@given(m=st.integers(3, 7), n=st.integers(6, 10), k=st.integers(2, 4), seed=st.integers(0, 2**31 - 1),
       frac=st.sampled_from([1.0, 0.9]), skip=st.sampled_from([_DNN_SKIP_AT, 0.999, 0.9999]))
@example(m=3, n=6, k=3, seed=2, frac=1.0, skip=_DNN_SKIP_AT)  # (the feasible value to the bit: light_S's own)
def test_thin_light_S_asks_no_forecast_and_proves_only_above_opt(m, n, k, seed, frac, skip):
    """Inside the thin block: no forecast computed; the bound (where one is returned) at least OPT and the thin
    search's own (:func:`thin_anchor.anchored`, the same call), float for float: where the forecast says the top
    test proves, the former code ran that search too; where it says "fails" (``restricted_refutes`` True), the
    former code returned None (checked outside the block).  Outside, one forecast per call (where a search may
    run)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(coupled, "_DNN_SKIP_AT", skip)  # (near the optimum: the forecast says "fails" often)
        _forecasts_on(mp)
        _check(_count_forecasts(mp), m, n, k, seed, frac, skip)


def _check(computed: list, m: int, n: int, k: int, seed: int, frac: float, skip: float) -> None:
    A = _thin(m, n, seed)
    k = min(k, n)
    x = _point(A, k, frac)
    opt = brute_opt(A, k)[0]
    lower = Cov(None, A).quad(x)  # (light_S's own feasible value, to the bit)
    with thin_anchor.top_last():
        cert = coupled.light_S(Cov(None, A), k, x)
    assert computed == []
    outside = coupled.light_S(Cov(None, A), k, x)
    asked = len(computed)
    assert asked == (1 if lower > 0 and coupled.anchor_ok(n, k) else 0)
    if cert is not None:
        assert cert.upper_bound >= opt * (1 - 1e-12)
        assert cert.bounds["anchored"] >= opt * (1 - 1e-12)
    if not asked:
        return
    fails = dual.restricted_refutes(A, k, x, lower / skip)  # (True: the forecast says the top test fails)
    bounds = {"variances": coupled._variances_bound(np.diag(A).copy(), k)}
    own = thin_anchor.anchored(A, k, lower, min(bounds.values()), _ANCHOR_REL, skip)
    assert (cert is None) == (own is None)  # (the search's own answer in both cases)
    assert cert is None or cert.bounds["anchored"] == own
    if fails:  # (the former code: None, no search)
        assert outside is None


def test_forecast_asked_outside_the_thin_block_only(monkeypatch):
    """Counting, both sides of the rule: the same calls inside :func:`thin_anchor.top_last` compute no forecast,
    outside one each; a case where the forecast says "fails": None outside, the thin search's proved bound (or
    None, as the search decides) inside, never below OPT."""
    monkeypatch.setattr(coupled, "_DNN_SKIP_AT", 0.9999)
    _forecasts_on(monkeypatch)
    computed = _count_forecasts(monkeypatch)
    fails = 0
    for seed in range(12):
        A = _thin(6, 9, seed)
        x = _point(A, 3, 0.9)
        computed.clear()
        with thin_anchor.top_last():
            inside = coupled.light_S(Cov(None, A), 3, x)
        assert computed == []
        outside = coupled.light_S(Cov(None, A), 3, x)
        assert len(computed) == 1
        if dual.restricted_refutes(A, 3, x, Cov(None, A).quad(x) / 0.9999):  # (the forecast: "fails")
            fails += 1
            assert outside is None
            assert inside is None or inside.upper_bound >= brute_opt(A, 3)[0] * (1 - 1e-12)
    assert fails > 0
