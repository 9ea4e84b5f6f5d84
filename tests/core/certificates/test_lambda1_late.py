"""Issue 39, helper dense18 (img24 k = 50 near the 3x line):

- a one-k dense "auto" certificate whose answer's value is far below lambda_1 (``cheap._LATE_BELOW`` of the early
  top Ritz value, the d = 1 bounds out of reach) puts lambda_1's proof off (``lambda1_late.Lambda1Late``): made only
  where a bracket or the final bound could read it, the same floats as made at once: the same upper bound, above
  brute force; counted on both sides of ``_LATE_BELOW``;
- the KKT start's proved floor (``dual_start._kkt_floored``: ``kkt_floor`` above ``lower / _KKT_USEFUL``) gives
  ``_kkt_beaten``'s verdict without its estimate: counted on both sides of its threshold; the floor is at most the
  KKT point's rigorous value (brute force: ``test_kkt_floor``).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from nspca_core.certificates import cheap, certify, dual, dual_start, lambda1_late, single
from nspca_core.certificates.bounds import cheap_bounds_at
from nspca_core.certificates.budget import BoundReport
from nspca_core.certificates.cheap import lambda1_only
from nspca_core.certificates.lambda1_late import Lambda1Late

from tests.core.certificates.test_d1_late import _images, _small, image_case


def _answer(X: np.ndarray, k: int) -> np.ndarray:
    x = np.zeros(X.shape[1])
    x[np.argsort(-X.var(axis=0))[:k]] = 1.0
    return x / np.linalg.norm(x)


def _eager(monkeypatch):
    """The certificate as before this change: lambda_1 proved at once (``late`` never set)."""
    real = single._certify_dense
    monkeypatch.setattr("nspca_core.certificates.route._certify_dense",
                        lambda *a, late=False, **kw: real(*a, **kw))


def _proofs(monkeypatch) -> list:
    """Counts the Cholesky proofs of lambda1_only's guess (eager or put off)."""
    calls: list = []
    for mod in (cheap, lambda1_late):
        real = mod.chol_lmax
        monkeypatch.setattr(mod, "chol_lmax", lambda A, g, _r=real: calls.append(g) or _r(A, g))
    return calls


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), n=st.integers(6, 9), k=st.integers(3, 5), below=st.sampled_from([0.9, 2.0]))
@example(seed=1, n=8, k=3, below=2.0)
def test_the_late_proof_keeps_the_bound_and_stays_above_bruteforce(monkeypatch, seed, n, k, below):
    """Small inputs (the route's size thresholds lowered; ``_D1_FAR`` 1.5 and ``_LATE_BELOW`` 2 put every short
    case's proof off): the certificate with lambda_1's proof put off is the same upper bound, float for float, as
    with it made at once, and at least brute force's OPT; where lambda_1's bound is kept it is the same float."""
    _small(monkeypatch)
    monkeypatch.setattr(cheap, "_D1_FAR", 1.5)
    monkeypatch.setattr(cheap, "_LATE_BELOW", below)
    A, opt, x = image_case(seed, n, k)
    new = certify(cov=A, k=k, x=x)
    _eager(monkeypatch)
    old = certify(cov=A, k=k, x=x)
    assert new.upper_bound >= opt * (1 - 1e-9)
    assert new.upper_bound == old.upper_bound and new.kind == old.kind
    if "lambda1" in new.bounds:
        assert new.bounds["lambda1"] == old.bounds["lambda1"]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(8, 60), k=st.integers(3, 12))
def test_the_proof_made_late_is_the_eager_proof(seed, n, k):
    """``Lambda1Late.prove`` continues lambda1_only's block steps from where it stopped: the same bound (float) as
    lambda1_only made at once, at least LAPACK's lambda_max; the floor at most lambda_max."""
    X = _images(seed, 3 * n, n)
    A = np.cov(X, rowvar=False, bias=True)
    lower = 1e-9 * float(np.trace(A))  # (far below: the proof is put off wherever lambda1_only gets short)
    late = lambda1_only(A, k, lower=lower, late=Lambda1Late)
    eager = lambda1_only(A, k, lower=lower)
    if late is None or not getattr(late, "pending", False):
        assert (late is None) == (eager is None)
        return
    top = float(np.linalg.eigvalsh(A)[-1])
    assert late.floor <= top * (1 + 1e-12)
    got = late.bounds_at(k)
    if eager is None:  # (the proof failed at once: LAPACK's top eigenpairs, as the eager route's caller took them)
        assert late.failed
        return
    assert got == cheap_bounds_at(eager.spectrum(), k)
    assert got["lambda1"] >= top and late.tol == eager.tol


def test_settle_proves_only_where_the_minimum_could_be_lambda1():
    """``settle(v, best)``: ``min(v, best)`` the same float as with lambda_1's bound held -- below the floor
    nothing proved; at or above it the proof made and offered."""
    X = _images(5, 120, 40)
    A = np.cov(X, rowvar=False, bias=True)
    late = lambda1_only(A, 4, lower=1e-9 * float(np.trace(A)), late=Lambda1Late)
    assert late is not None and late.pending, "not vacuous: the proof put off"
    held = lambda1_only(A, 4, lower=1e-9 * float(np.trace(A)))
    lam = cheap_bounds_at(held.spectrum(), 4)["lambda1"]
    bounds, report = {"lambda1": np.inf}, BoundReport()
    v = 0.5 * late.floor
    assert late.settle(v, np.inf, bounds, report, 4) == np.inf and late.pending
    assert min(v, np.inf) == min(v, lam)
    best = late.settle(late.floor, np.inf, bounds, report, 4)
    assert not late.pending and bounds["lambda1"] == lam == best


@pytest.mark.parametrize("seed", [1, 2])
def test_the_proof_is_put_off_only_below_the_line(monkeypatch, seed):
    """img24's kind at n = 200, k = 40: with ``_LATE_BELOW`` 0.9 no Cholesky proof of lambda_1 at all and no
    ``lambda1`` entry (the anchored or DNN bound far below it); with ``_LATE_BELOW`` 0 (never put off) one proof
    and the entry, as before; the same upper bound both ways."""
    X = _images(seed, 600, 200)
    k = 40
    x = _answer(X, k)
    A = np.cov(X, rowvar=False, bias=True)
    light = lambda1_only(A, k, lower=float(x @ A @ x), late=Lambda1Late)
    assert light is not None and getattr(light, "pending", False), "not vacuous: put off here"
    calls = _proofs(monkeypatch)
    late = certify(X, k=k, x=x)
    assert len(calls) == 0 and "lambda1" not in late.bounds
    monkeypatch.setattr(cheap, "_LATE_BELOW", 0.0)
    first = certify(X, k=k, x=x)
    assert len(calls) == 1 and "lambda1" in first.bounds
    assert late.upper_bound == first.upper_bound and late.kind == first.kind


def test_the_proof_is_made_where_lambda1_could_be_the_bound(monkeypatch):
    """Where nothing else proves less than the floor (every other bound taken out), the late proof is made after
    the dual side and is the certificate's bound: the same float as the eager route's."""
    X = _images(4, 600, 200)
    k = 40
    x = _answer(X, k)
    real = dual.dense_dual

    def no_dual(A, k, x, lower, bounds, info, report, effort, **kw):  # (nothing proved on the dual side)
        return None, False

    monkeypatch.setattr(single, "dense_dual", no_dual)
    late = certify(X, k=k, x=x)
    _eager(monkeypatch)
    first = certify(X, k=k, x=x)
    monkeypatch.setattr(single, "dense_dual", real)
    assert late.kind == first.kind and late.upper_bound == first.upper_bound
    assert late.bounds["lambda1"] == first.bounds["lambda1"]  # (proved late: the same float)


def _kkt_counts(monkeypatch):
    asked: list = []
    real = dual._kkt_beaten
    monkeypatch.setattr(dual, "_kkt_beaten", lambda *a, **kw: asked.append(1) or real(*a, **kw))
    return asked


def test_the_kkt_floor_decides_on_both_sides_of_its_threshold(monkeypatch):
    """``_kkt_floored``: ``_kkt_beaten`` not asked where ``_KKT_USEFUL`` times the floor is above x's value (img24's
    kind, n = 200: the floor far above it; also with ``_KKT_USEFUL`` at 1.001 of x's value over the floor), asked
    with it at 0.999 of that; the same upper bound where the estimate rules the point out too."""
    X = _images(6, 600, 200)
    k = 40
    x = _answer(X, k)
    A = np.cov(X, rowvar=False, bias=True)
    asked = _kkt_counts(monkeypatch)
    c0 = certify(X, k=k, x=x)
    lower, f = c0.lower, dual_start.kkt_floor(A, x)
    assert dual_start._KKT_USEFUL * f > lower * 1.01, "not vacuous: the floor rules the point out here"
    assert asked == [] and c0.kind != "dnn"
    monkeypatch.setattr(dual_start, "_KKT_USEFUL", 1.001 * lower / f)
    c1 = certify(X, k=k, x=x)
    assert asked == []
    monkeypatch.setattr(dual_start, "_KKT_USEFUL", 0.999 * lower / f)
    assert not dual_start._kkt_floored(A, x, lower)
    c2 = certify(X, k=k, x=x)
    assert len(asked) == 1
    assert c0.upper_bound == c1.upper_bound
    if "dnn" not in c2.bounds or c2.info["dnn"].get("init") != "kkt":  # (the estimate ruled it out as well)
        assert c2.upper_bound == c1.upper_bound


def test_the_kkt_floor_keeps_the_size_threshold(monkeypatch):
    """Below ``_KKT_EST_MIN_N`` features the floor is not asked (the point is evaluated there, as before)."""
    X = _images(7, 300, 60)
    A = np.cov(X, rowvar=False, bias=True)
    x = _answer(X, 5)
    assert A.shape[0] < dual_start._KKT_EST_MIN_N
    assert not dual_start._kkt_floored(A, x, 0.0)
    monkeypatch.setattr(dual_start, "_KKT_EST_MIN_N", 10)
    assert dual_start._kkt_floored(A, x, 0.0) == (dual_start._KKT_USEFUL * dual_start.kkt_floor(A, x) > 0.0)


@pytest.mark.parametrize("seed,n,k", [(0, 200, 40), (1, 120, 20), (2, 60, 10), (4, 200, 40)])
@pytest.mark.parametrize("accept", [1e-10, 1e-14])
def test_the_steps_after_the_early_one_are_made_late_as_at_once(monkeypatch, seed, n, k, accept):
    """Where the early block step found the d = 1 bounds out of reach (the proof put off from there: its block
    steps too), the late proof is the eager one, float for float (``_LIGHT_ACCEPT`` 1e-14: more block steps)."""
    monkeypatch.setattr(cheap, "_LIGHT_ACCEPT", accept)
    X = _images(seed, 3 * n, n)
    A = np.cov(X, rowvar=False, bias=True)
    lower = 1e-9 * float(np.trace(A))
    late = lambda1_only(A, k, lower=lower, late=Lambda1Late)
    assert late is not None and late.pending and late._state[2] == cheap._LIGHT_EARLY  # (not vacuous)
    eager = lambda1_only(A, k, lower=lower)
    assert late.bounds_at(k) == cheap_bounds_at(eager.spectrum(), k) and late.theta == eager.theta


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(8, 70), k=st.integers(3, 40), scale=st.floats(0.0, 3.0))
def test_the_screening_bracket_is_the_eager_routes_minimum(seed, n, k, scale):
    """``Lambda1Late._bracket(hi, max A_ii, k)``: ``min(hi, (value - max A_ii) / (k - 1))`` is the same float as
    with the eager route's value (its ``_bracket`` where the d = 1 bounds were out of reach, else its bound)."""
    X = _images(seed, 3 * n, n)
    A = np.cov(X, rowvar=False, bias=True)
    lower = 1e-9 * float(np.trace(A))
    late = lambda1_only(A, k, lower=lower, late=Lambda1Late)
    if late is None or not late.pending:
        return
    eager = lambda1_only(A, k, lower=lower)
    off = A - np.diag(np.diag(A))
    hi = scale * float(off.max())
    dmax = float(np.diag(A).max())
    want = eager._bracket(hi, dmax, k) if eager.d1 is not None else cheap_bounds_at(eager.spectrum(), k)["lambda1"]
    got = late.bracket(hi, dmax, k)
    assert min(hi, (got - dmax) / (k - 1)) == min(hi, (want - dmax) / (k - 1))


def test_the_put_off_proof_holds_no_reference_cycle():
    """corpus30: a Lambda1Late (its ``bracket`` a method of the class, not a bound method stored on the instance) is
    freed with its last reference -- with the garbage collector off -- so its A is not held until a collection; the
    bracket read the same (the d = 1 estimate's and the bound's routes both) as the former attribute's."""
    import gc
    import weakref

    X = _images(5, 120, 40)
    A = np.cov(X, rowvar=False, bias=True)
    late = lambda1_only(A, 4, lower=1e-9 * float(np.trace(A)), late=Lambda1Late)
    assert late is not None and late.pending, "not vacuous: the proof put off"
    assert "bracket" not in vars(late) and callable(late.bracket)
    hi, dmax = float(np.max(A - np.diag(np.diag(A)))), float(np.diag(A).max())
    again = lambda1_only(A, 4, lower=1e-9 * float(np.trace(A)), late=Lambda1Late)
    assert late.bracket(hi, dmax, 4) == Lambda1Late._bracket(again, hi, dmax, 4)
    ref = weakref.ref(late)
    was = gc.isenabled()
    gc.disable()
    try:
        del late
        assert ref() is None, "a reference cycle kept the put-off proof (and its A) alive"
    finally:
        if was:
            gc.enable()
