"""Issue 39, sixteenth round (helper thin18): the thin route's first eager screen defers its aimed refinements
where the larger screen provably follows (:mod:`nspca_core.certificates.thin_defer`).  The deferred certificate
bounds the brute-force optimum, its floor is below the refined one's bound, and the thin certificate is the one
without the deferral (upper, lower, every bound), whichever branch of :func:`.route.eager_grown` runs."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from nspca_core.certificates import coupled, route, single
from nspca_core.operators.cov import Cov

from tests.bruteforce import brute_opt
from tests.core.certificates.test_thin_route import _small_screens, _thin

TINY = settings(max_examples=25, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _genes(m: int, n: int, seed: int, modules: int = 8) -> np.ndarray:
    """Gene-shaped thin data: log expression over log-normal levels, heteroscedastic noise, correlated modules."""
    rng = np.random.default_rng(seed)
    base, sd = rng.normal(6, 2, n), 0.2 + 0.6 * rng.gamma(2, 0.5, n)
    Z, L = rng.standard_normal((m, modules)), np.zeros((modules, n))
    for j in range(modules):
        idx = rng.choice(n, int(rng.integers(20, n // 6)), replace=False)
        L[j, idx] = rng.normal(0, 1, idx.size) * rng.gamma(2, 0.6) + 0.8 * (rng.random() < 0.5)
    X = np.log1p(np.exp2(base + Z @ L + rng.standard_normal((m, n)) * sd))
    return X - X.mean(axis=0)


def _same(a, b):
    assert (a.upper_bound, a.lower, a.kind, a.bounds) == (b.upper_bound, b.lower, b.kind, b.bounds)


def _thin_cert(X, k):
    return route.certify_thin(Cov(X), k, None, "auto", None)


def _without_deferral(monkeypatch, X, k):
    with monkeypatch.context() as mp:
        mp.setattr(single, "floor_or_none", lambda *a, **kw: None)
        return _thin_cert(X, k)


class _Spy:
    """Records, where eager_grown gets a deferred first certificate, its floor, its own bound and (``refine``) the
    refined one's (``again()``: the first screen run whole, as certify(k) ran it before; else None); counts _aimed
    and _certify_split calls (those of ``again()`` for the record included)."""

    def __init__(self, monkeypatch, refine: bool = False):
        self.seen, self.aimed, self.splits = [], 0, 0
        grown, aimed, split = route.eager_grown, coupled._aimed, route._certify_split

        def spy_grown(cov, k, d, effort, callback, keep, gram, again=None):
            if "deferred_floor" in d.info:
                self.seen.append((d.info["deferred_floor"], d.upper_bound, again().upper_bound if refine else None,
                                  d.lower, d.info["B_S"]))
            return grown(cov, k, d, effort, callback, keep, gram, again)

        def spy_aimed(*a, **kw):
            self.aimed += 1
            return aimed(*a, **kw)

        def spy_split(*a, **kw):
            self.splits += 1
            return split(*a, **kw)

        monkeypatch.setattr(route, "eager_grown", spy_grown)
        monkeypatch.setattr(coupled, "_aimed", spy_aimed)
        monkeypatch.setattr(route, "_certify_split", spy_split)


@TINY
@given(st.integers(5, 8), st.integers(11, 14), st.integers(3, 6), st.integers(0, 2**31 - 1))
@example(6, 14, 4, 1)
@example(7, 13, 6, 2)
def test_deferred_first_screen_bounds_the_optimum_its_floor_the_refined_bound(monkeypatch, m, n, k, seed):
    """Tiny thin data, screens forced small, every larger screen affordable and the slack negative (the larger
    screen follows wherever the first certificate exists: the deferral then hinges on its own conditions alone):
    where the first screen deferred, its certificate is >= the brute-force optimum and its floor <= the refined
    certificate's bound <= its own; the thin certificate equals the one without the deferral."""
    _small_screens(monkeypatch, min(k + 2, n - 2))
    monkeypatch.setattr(route, "route_flops", lambda m_, n_, s: (np.inf, 0.0))
    monkeypatch.setattr(route, "_EAGER_SLACK", -1.0)
    X = _thin(seed, m, n)
    opt = brute_opt(X.T @ X / m, k)[0]
    plain = _without_deferral(monkeypatch, X, k)
    spy = _Spy(monkeypatch, refine=True)
    c = _thin_cert(X, k)
    _same(c, plain)
    assert c.upper_bound >= opt * (1 - 1e-12)
    for floor, own, refined, _, _ in spy.seen:
        assert own >= opt * (1 - 1e-12)
        assert floor <= refined <= own
    if (m, n, k, seed) in ((6, 14, 4, 1), (7, 13, 6, 2)):
        assert spy.seen  # (the pinned examples defer: the property is not vacuous)


def test_deferral_both_sides_of_its_thresholds_same_certificate(monkeypatch):
    """40 x 900 gene-shaped data, k = 120: the first screen defers (no aimed search there, no joint test: the
    larger screen's alone) and the larger screen stands, the certificate bit for bit the one without the deferral.
    Both sides of the two thresholds (the slack against ``lower / B_S - lower / floor``): just below the one the
    t_ceiling floor sets, nothing aimed on the first screen; just above it, the aimed search runs and gives up
    before its first test (its first value the floor: deferred, no joint test); just above that floor's, the
    search runs its joint tests and nothing is deferred.  The same certificate everywhere."""
    X = _genes(40, 900, 2)
    k = 120
    plain = _without_deferral(monkeypatch, X, k)

    def run(mp):
        spy = _Spy(mp)
        return _thin_cert(X, k), spy

    with monkeypatch.context() as mp:
        c, spy = run(mp)
    _same(c, plain)
    assert len(spy.seen) == 1 and spy.aimed == 1 and spy.splits == 2
    floor, own, _, lower, bs = spy.seen[0]
    assert plain.upper_bound < floor < own  # (the larger screen's bound below the floor: it stands)
    edge = lower / bs - lower / floor  # (deferred where the slack is below it)
    assert edge > route._EAGER_SLACK
    with monkeypatch.context() as mp:
        mp.setattr(route, "_EAGER_SLACK", edge * (1 - 1e-6))
        ref = _without_deferral(mp, X, k)
        c, spy = run(mp)
    _same(c, ref)
    assert spy.seen and spy.aimed == 1
    with monkeypatch.context() as mp:
        mp.setattr(route, "_EAGER_SLACK", edge * (1 + 1e-6))
        ref = _without_deferral(mp, X, k)
        c, spy = run(mp)
    _same(c, ref)
    assert spy.seen and spy.aimed == 2  # (the search's first value decides: it gives up before testing)
    floor2 = spy.seen[0][0]
    assert floor < floor2
    edge2 = lower / bs - lower / floor2
    with monkeypatch.context() as mp:
        mp.setattr(route, "_EAGER_SLACK", edge2 * (1 + 1e-6))
        ref = _without_deferral(mp, X, k)
        jt, joint = coupled.anchored_joint_test, []
        mp.setattr(coupled, "anchored_joint_test", lambda rows, *a, **kw: (joint.append(rows.n), jt(rows, *a, **kw))[1])
        spy = _Spy(mp)
        c = _thin_cert(X, k)
    _same(c, ref)
    assert not spy.seen and spy.aimed == 2 and min(joint) <= 3 * k  # (on the first screen: 2 k + x)
    with monkeypatch.context() as mp:
        mp.setattr(route, "_EAGER_SLACK", edge2 * (1 - 1e-6))
        jt, joint = coupled.anchored_joint_test, []
        mp.setattr(coupled, "anchored_joint_test", lambda rows, *a, **kw: (joint.append(rows.n), jt(rows, *a, **kw))[1])
        spy = _Spy(mp)
        _thin_cert(X, k)
    assert spy.seen and spy.aimed == 2 and min(joint, default=np.inf) > 3 * k  # (none on the first screen)


def test_first_screen_run_whole_again_where_the_larger_one_does_not_beat_its_floor(monkeypatch):
    """Both other branches of eager_grown: where the larger screen's bound is not below the floor (forced: its
    bound raised to the floor), the first screen runs whole again (three split certificates) and the certificate
    is the one without the deferral under the same forcing; where no larger screen is affordable (k = 140 here:
    the grown screen's predicted flops), nothing is deferred (one split certificate, one aimed search), and forcing
    the deferral there (``_grows`` True) ends in the whole first screen again (two), the same certificate.  (At the
    slack this was written for, 2e-3, and its fallback 5e-3: at larger slacks (helper thin25 measured 6e-3 / 7e-3)
    the forced deferral at k = 140 is decided by the aimed search's give-up, not by the floor, which the counts below
    pin.)"""
    monkeypatch.setattr(route, "_EAGER_SLACK", 2e-3)
    monkeypatch.setattr(route, "_EAGER_FALLBACK", 5e-3)
    X = _genes(40, 900, 2)
    refined: dict = {}
    split = route._certify_split

    def raised(cov, k, *a, **kw):  # (the larger screen's bound raised to the first screen's refined one)
        c = split(cov, k, *a, **kw)
        if "defer" in kw and "deferred_floor" not in c.info:
            refined.setdefault(k, c.upper_bound)
        if "defer" not in kw and kw.get("size", 0) > route.S.eager_size(cov.n, k) and k in refined:
            return replace(c, upper_bound=refined[k])
        return c

    with monkeypatch.context() as mp:
        mp.setattr(route, "_certify_split", raised)
        ref = _without_deferral(mp, X, 120)
        spy = _Spy(mp)
        c = _thin_cert(X, 120)
    _same(c, ref)
    assert len(spy.seen) == 1 and spy.seen[0][0] <= refined[120]  # (then certify_thin's dense route stands here)
    assert spy.splits == 3
    plain = _without_deferral(monkeypatch, X, 140)
    with monkeypatch.context() as mp:
        spy = _Spy(mp)
        _same(_thin_cert(X, 140), plain)
    assert (spy.splits, spy.aimed, spy.seen) == (1, 1, [])
    with monkeypatch.context() as mp:
        mp.setattr(route, "_grows", lambda cov, size: True)
        spy = _Spy(mp)
        _same(_thin_cert(X, 140), plain)
    assert spy.splits == 2 and spy.aimed == 1


@TINY
@given(st.integers(5, 8), st.integers(11, 14), st.integers(3, 6), st.integers(0, 2**31 - 1))
@example(6, 14, 4, 1)
@example(8, 14, 5, 1)
def test_the_aimed_search_never_returns_below_a_value_its_give_up_was_asked(monkeypatch, m, n, k, seed):
    """``give_up(lo)`` of :func:`.coupled._aimed` is asked only at values the search cannot return below: before the
    first test (its value, or ``bottom`` where the deep search may go there) and after each failed one.  With a rule
    that never gives up (the slack too large for any floor to decide) the search runs whole: its bound is at least
    every value asked (1e-9 relative), and at least the brute-force optimum."""
    from nspca_core.certificates import thin_defer

    _small_screens(monkeypatch, min(k + 2, n - 2))
    monkeypatch.setattr(route, "route_flops", lambda m_, n_, s: (np.inf, 0.0))
    monkeypatch.setattr(route, "_EAGER_SLACK", 1.0)
    asked: list = []
    rule_of, aimed = thin_defer.floor_rule, coupled._aimed

    def recording(*a):
        rule = rule_of(*a)
        return lambda lo: (asked.append(lo), rule(lo))[1]

    out: list = []

    def spy_aimed(*a, **kw):
        v = aimed(*a, **kw)
        if kw.get("give_up") is not None:
            out.append((v, list(asked)))
        asked.clear()
        return v

    monkeypatch.setattr(thin_defer, "floor_rule", recording)
    monkeypatch.setattr(coupled, "_aimed", spy_aimed)
    X = _thin(seed, m, n)
    opt = brute_opt(X.T @ X / m, k)[0]
    _thin_cert(X, k)
    for v, los in out:
        assert los and v >= opt * (1 - 1e-12)
        assert v >= max(los) * (1 - 1e-9)
    if (m, n, k, seed) in ((6, 14, 4, 1), (8, 14, 5, 1)):
        assert out  # (the pinned examples ask: not vacuous)
