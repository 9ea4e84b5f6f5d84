"""Issue 39 (ninth round, helper lazy; tenth round, helper cross): the anchored test at the top of a split
certificate's S bracket (``dual.top_test``) is run once per certificate: ``coupled.light_S`` runs it and, where
the light route fails or falls short, the DNN's route (``dual.dense_dual``, ``dual._anchored`` top first) asks
the same one.  The answer is handed explicitly from one to the other (``seen``, a dict the certificate owns:
no module-level memo).  The certificate is the same float for float with and without the hand-off, valid
against brute force, and the hand-off spares a test where the light route's failed (counted, not timed).
Eleventh round (helper cbcl12): the anchored test's forecast (``dual._forecast_fails``) keeps its record in the
same dict (``seen["forecast"]``, was the module-level ``_forecast_last``), counted the same way."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nspca_core.certificates import _settings as S
from nspca_core.certificates import coupled, dual, route
from nspca_core.operators.cov import Cov

from tests.bruteforce import brute_opt
from tests.core.certificates.test_split_cheaper import _force_split
from tests.core.certificates.test_split_coupled import _modules

TINY = settings(max_examples=30, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _no_memo(monkeypatch) -> None:
    """``top_test`` with nothing handed on (``seen`` dropped: each test computed afresh)."""
    real = dual.top_test

    def fresh(A, k, tau, seen=None):
        return real(A, k, tau)

    monkeypatch.setattr(dual, "top_test", fresh)
    monkeypatch.setattr(coupled, "top_test", fresh)


def _count_tests(monkeypatch) -> list:
    """Every anchored test ``dual`` runs (its ``(k, tau)``)."""
    seen: list = []
    real = dual.anchored_rowsum_test

    def spy(rows, tau, *a, **kw):
        seen.append((rows.k, float(tau)))
        return real(rows, tau, *a, **kw)

    monkeypatch.setattr(dual, "anchored_rowsum_test", spy)
    return seen


def _case(seed: int, n: int):
    rng = np.random.default_rng(seed)
    X = _modules(rng, 6, n, 3)
    return X, X.T @ X / X.shape[0]


def test_top_test_is_reused_only_from_its_record_for_the_same_matrix_k_and_tau(monkeypatch):
    """With the record handed on, the second call with the same A object, k and tau returns the first one's
    rows and answer without a test; another tau, k, or an equal matrix held in another object is tested afresh
    (and replaces the record).  Without a record (``seen`` None) nothing is kept: every call tests."""
    seen = _count_tests(monkeypatch)
    _, A = _case(3, 9)
    tau = 1.01 * float(np.linalg.eigvalsh(A)[-1])
    record: dict = {}
    first = dual.top_test(A, 4, tau, record)
    assert len(seen) == 1 and record["top"][0] is A
    again = dual.top_test(A, 4, tau, record)
    assert len(seen) == 1 and again[0] is first[0] and again[1] == first[1] and again[2] is first[2]
    dual.top_test(A, 4, tau * 1.001, record)
    dual.top_test(A, 5, tau * 1.001, record)
    dual.top_test(A.copy(), 5, tau * 1.001, record)
    assert len(seen) == 4
    dual.top_test(A, 4, tau)
    dual.top_test(A, 4, tau)
    assert len(seen) == 6
    assert not hasattr(dual, "_top_last")  # (no module-level slot: nothing kept between certificates)


@TINY
@given(st.integers(9, 12), st.integers(5, 8), st.integers(4, 6), st.integers(0, 2**31 - 1), st.booleans(),
       st.sampled_from([0.975, 0.995]))
def test_split_certificate_is_the_same_float_for_float_without_the_hand_off(monkeypatch, n, size, k, seed, lazy, skip):
    """A one-k split certificate (thin data, the light route open; S's bound lazy or eager; the first test at
    ``lower / skip``) with the first test handed on and without: the same bounds float for float, at least the
    brute-force optimum, and never more anchored tests with the hand-off."""
    _force_split(monkeypatch, size)
    monkeypatch.setattr(S, "_LAZY_S", lazy)
    for mod in (coupled, dual):
        monkeypatch.setattr(mod, "_DNN_SKIP_AT", skip)
    X, A = _case(seed, n)
    seen = _count_tests(monkeypatch)
    memo = route._certify_large(Cov(X, None), k, None, "auto", None)
    with_memo = len(seen)
    seen.clear()
    _no_memo(monkeypatch)
    plain = route._certify_large(Cov(X, None), k, None, "auto", None)
    assert memo.upper_bound.hex() == plain.upper_bound.hex()
    assert memo.bounds == plain.bounds and memo.lower == plain.lower
    assert memo.info.get("B_S") == plain.info.get("B_S")
    assert with_memo <= len(seen)
    assert memo.upper_bound >= brute_opt(A, k)[0] * (1 - 1e-12)


def test_a_failed_light_test_is_not_run_again_by_the_dnn_route(monkeypatch):
    """Cases where light_S's first test fails and the DNN's route follows (eager S bound): without the hand-off
    the same test (k, tau) runs twice, with it once, and one test fewer in all (the same certificate either
    way: the test above).  Counted by the anchored tests ``dual`` runs; fails when ``seen`` is not handed on."""
    _force_split(monkeypatch, 6)
    monkeypatch.setattr(S, "_LAZY_S", False)
    for mod in (coupled, dual):  # (the first test near the optimum, light_S's and dense_dual's: it fails often)
        monkeypatch.setattr(mod, "_DNN_SKIP_AT", 0.995)
    seen = _count_tests(monkeypatch)
    real = dual.top_test
    spared = 0
    for seed in range(40):
        X, _ = _case(seed, 10)
        runs = []
        for hand_on in (True, False):
            def top(A, k, tau, record=None, hand_on=hand_on):
                return real(A, k, tau, record if hand_on else None)

            monkeypatch.setattr(dual, "top_test", top)
            monkeypatch.setattr(coupled, "top_test", top)
            seen.clear()
            route._certify_large(Cov(X, None), 5, None, "auto", None)
            runs.append(list(seen))
        with_memo, without = runs
        assert len(with_memo) <= len(without)
        if len(with_memo) < len(without):
            twice = [key for key in set(without) if without.count(key) > with_memo.count(key)]
            assert twice and len(without) - len(with_memo) == sum(without.count(t) - with_memo.count(t) for t in twice)
            assert all(with_memo.count(t) == 1 and without.count(t) == 2 for t in twice)
            spared += 1
    assert spared > 0


# ---- the forecast (dual._forecast_fails): its record handed on in the same ``seen`` (issue 39, helper cbcl12)


def _forecasts_on(monkeypatch) -> None:
    """The forecast asked at every n and share (``_FORECAST_MIN_N`` 150 and ``_FORECAST_SHARE`` otherwise rule out
    these small matrices)."""
    monkeypatch.setattr(dual, "_FORECAST_MIN_N", 0)
    monkeypatch.setattr(dual, "_FORECAST_SHARE", 10.0)


def _count_forecasts(monkeypatch) -> list:
    """Every forecast ``dual`` computes (its ``(k, tau)``)."""
    computed: list = []
    real = dual.restricted_refutes

    def spy(A, k, x, tau, *a, **kw):
        computed.append((int(k), float(tau)))
        return real(A, k, x, tau, *a, **kw)

    monkeypatch.setattr(dual, "restricted_refutes", spy)
    return computed


def test_forecast_is_reused_only_from_its_record_for_the_same_matrix_k_tau_and_point(monkeypatch):
    """With the record handed on, the second ask with the same A object, k, tau and x returns the first verdict
    without a forecast; another tau, k, x, or an equal matrix held in another object is computed afresh (and
    replaces the record).  Without a record nothing is kept: every ask computes.  No module-level memo."""
    _forecasts_on(monkeypatch)
    computed = _count_forecasts(monkeypatch)
    _, A = _case(5, 9)
    x = np.zeros(9)
    x[:3] = 1 / np.sqrt(3)
    cfg = S._EFFORT["auto"]
    tau = 0.99 * float(x @ A @ x)
    record: dict = {}
    first = dual._forecast_fails(A, 3, x, tau, cfg, record)
    assert len(computed) == 1 and record["forecast"][0] is A and record["forecast"][2] == first
    assert dual._forecast_fails(A, 3, x, tau, cfg, record) == first and len(computed) == 1
    dual._forecast_fails(A, 3, x, tau * 1.001, cfg, record)
    dual._forecast_fails(A, 4, x, tau * 1.001, cfg, record)
    y = x.copy()
    y[3] = 0.1
    dual._forecast_fails(A, 4, y, tau * 1.001, cfg, record)
    dual._forecast_fails(A.copy(), 4, y, tau * 1.001, cfg, record)
    assert len(computed) == 5
    dual._forecast_fails(A, 3, x, tau, cfg)
    dual._forecast_fails(A, 3, x, tau, cfg)
    assert len(computed) == 7
    assert not hasattr(dual, "_forecast_last")  # (nothing kept between certificates)


def test_a_split_certificate_asks_its_forecast_once(monkeypatch):
    """Split certificates (thin data, eager S bound) where the light route's forecast is asked again by the
    DNN's route (the same A_SS, kS, x and tau): with the record handed on (``seen``) that forecast is computed
    once, without it twice; the certificate is the same float for float, at least the brute-force optimum.
    Counted by the forecasts ``dual`` computes; fails when ``seen`` is not handed on to the forecast."""
    _force_split(monkeypatch, 6)
    _forecasts_on(monkeypatch)
    monkeypatch.setattr(S, "_LAZY_S", False)
    for mod in (coupled, dual):  # (near the optimum: the forecast says "fails" often, and the DNN's route follows)
        monkeypatch.setattr(mod, "_DNN_SKIP_AT", 0.995)
    computed = _count_forecasts(monkeypatch)
    real = dual._forecast_fails
    spared = 0
    for seed in range(30):
        X, A = _case(seed, 10)
        runs, certs = [], []
        for hand_on in (True, False):
            def forecast(A_, k, x, tau, cfg, seen=None, hand_on=hand_on):
                return real(A_, k, x, tau, cfg, seen if hand_on else None)

            monkeypatch.setattr(dual, "_forecast_fails", forecast)
            monkeypatch.setattr(coupled, "_forecast_fails", forecast)
            computed.clear()
            certs.append(route._certify_large(Cov(X, None), 5, None, "auto", None))
            runs.append(list(computed))
        with_record, without = runs
        assert certs[0].upper_bound.hex() == certs[1].upper_bound.hex() and certs[0].bounds == certs[1].bounds
        assert certs[0].upper_bound >= brute_opt(A, 5)[0] * (1 - 1e-12)
        assert len(with_record) <= len(without)
        if len(with_record) < len(without):
            assert all(with_record.count(t) == 1 and without.count(t) == 2
                       for t in set(without) if without.count(t) > with_record.count(t))
            spared += 1
    assert spared > 0
