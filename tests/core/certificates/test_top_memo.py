"""Issue 39 (ninth round, helper lazy; tenth round, helper cross): the anchored test at the top of a split
certificate's S bracket (``dual.top_test``) is run once per certificate: ``coupled.light_S`` runs it and, where
the light route fails or falls short, the DNN's route (``dual.dense_dual``, ``dual._anchored`` top first) asks
the same one.  The answer is handed explicitly from one to the other (``seen``, a dict the certificate owns:
no module-level memo).  The certificate is the same float for float with and without the hand-off, valid
against brute force, and the hand-off spares a test where the light route's failed (counted, not timed)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nspca_core.certificates import _settings as S
from nspca_core.certificates import coupled, dual, single
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
    memo = single._certify_large(Cov(X, None), k, None, "auto", None)
    with_memo = len(seen)
    seen.clear()
    _no_memo(monkeypatch)
    plain = single._certify_large(Cov(X, None), k, None, "auto", None)
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
            single._certify_large(Cov(X, None), 5, None, "auto", None)
            runs.append(list(seen))
        with_memo, without = runs
        assert len(with_memo) <= len(without)
        if len(with_memo) < len(without):
            twice = [key for key in set(without) if without.count(key) > with_memo.count(key)]
            assert twice and len(without) - len(with_memo) == sum(without.count(t) - with_memo.count(t) for t in twice)
            assert all(with_memo.count(t) == 1 and without.count(t) == 2 for t in twice)
            spared += 1
    assert spared > 0
