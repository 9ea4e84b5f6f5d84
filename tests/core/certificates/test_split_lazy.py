"""Issue 39 target 1, eighth round (helper split8): a one-k split certificate's S bound from the anchored row
sums at kS (``coupled.light_S``) is lazy: one test at the aim's value, the bisection below it
(``coupled.light_finish``) only where that term binds the coupled bound (``coupled.light_refined``).  Every
bound is checked against brute force on tiny inputs; the laziness has a test that fails without it.  The switch
``_settings._LAZY_S`` was off then (certify_path's obligation, met in the ninth round: single._certify_split's
``follow``, path_carry's _CARRY_DEEP); these tests set it themselves."""

from __future__ import annotations

import numpy as np
from hypothesis import example, HealthCheck, given, settings
from hypothesis import strategies as st

from nspca_core.certificates import _settings as S
from nspca_core.certificates import anchor, coupled, dual, route, single
from nspca_core.operators.cov import Cov

from tests.bruteforce import brute_opt
from tests.core.certificates.test_split_cheaper import _force_split
from tests.core.certificates.test_split_coupled import _modules

TINY = settings(max_examples=30, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _psd(rng, m: int, n: int) -> np.ndarray:
    """A tiny covariance of positively correlated features (where the anchored test proves something)."""
    X = _modules(rng, m, n, 2)
    return X.T @ X / m


def _x_at(A: np.ndarray, k: int) -> np.ndarray:
    """A feasible point at sparsity k: the brute-force optimum (its value the largest feasible)."""
    return brute_opt(A, k)[1]


@TINY
@given(st.integers(5, 8), st.integers(2, 5), st.integers(0, 2**31 - 1), st.sampled_from([0.9, 0.99, 1.0]))
def test_light_finish_at_the_eager_resolution_is_the_eager_bound(monkeypatch, n, k, seed, shrink):
    """``light_finish(rel=_ANCHOR_REL)`` runs the tests the eager ``light_S`` (``dual._anchored``, top first) runs
    after its first, from the same starts: the same bound, float for float; both bound the optimum at kS (brute
    force) and the lazy bound (the first test's value) is at least the finished one.  ``shrink``: a point below
    the optimum (a wider bracket)."""
    monkeypatch.setattr(S, "_LAZY_S", True)
    rng = np.random.default_rng(seed)
    A = _psd(rng, 20, n)
    opt, x = brute_opt(A, k)
    x = x * np.where(np.arange(n) == np.argmax(x), 1.0, shrink)
    x /= np.linalg.norm(x)
    covS = Cov(A=A)
    lazy: dict = {}
    lz = coupled.light_S(covS, k, x, None, lazy)
    eager = coupled.light_S(covS, k, x, None)
    assert (lz is None) == (eager is None)
    if lz is None:
        return
    if not lazy:  # (the first test's value not below the other bounds: the eager search, as without lazy)
        assert lz.upper_bound == eager.upper_bound
        return
    assert lz.upper_bound == lazy["top"] and lazy["cert"] is lz
    fin = coupled.light_finish(lazy, rel=dual._ANCHOR_REL)
    assert fin.upper_bound == eager.upper_bound
    for c in (lz, fin, coupled.light_finish(lazy)):
        assert c.upper_bound >= opt * (1 - 1e-12)
    assert fin.upper_bound <= lz.upper_bound


def _spy_tests(monkeypatch) -> list:
    """The sparsities of the anchored tests ``coupled`` runs itself (light_S's lazy test, light_finish's)."""
    seen: list = []
    real = coupled.anchored_rowsum_test

    def spy(rows, tau, *a, **kw):
        seen.append(rows.k)
        return real(rows, tau, *a, **kw)

    monkeypatch.setattr(coupled, "anchored_rowsum_test", spy)
    real_top = coupled.top_test  # (light_S's lazy test: through dual.top_test, its record handed on)

    def spy_top(A, k, tau, record=None):
        seen.append(int(k))
        return real_top(A, k, tau, record)

    monkeypatch.setattr(coupled, "top_test", spy_top)
    return seen


@example(n=9, size=5, k=6, seed=1677, t_scale=1.0, skip_at=0.995)  # (kS = 5 < k: the test asked at kS)
@TINY
@given(st.integers(9, 12), st.integers(5, 8), st.integers(4, 6), st.integers(0, 2**31 - 1),
       st.sampled_from([1.0, 1e-3]), st.sampled_from([0.975, 0.995]))
def test_one_k_split_with_a_lazy_S_bound_is_valid_and_bisects_only_where_it_binds(monkeypatch, n, size, k, seed,
                                                                                  t_scale, skip_at):
    """A one-k split certificate through the lazy light route (thin data: 6 samples): valid (brute force); S's
    bound at kS is one anchored test (the aim's value, ``lower / skip_at``) unless that term binds the coupled
    bound, where light_finish runs and the bound is then at most the lazy one.  ``t_scale``: the rest T's
    features shrunk (S binds alone); ``skip_at``: the first test's ratio (0.995: T binds more often)."""
    _force_split(monkeypatch, size)
    monkeypatch.setattr(S, "_LAZY_S", True)
    monkeypatch.setattr(coupled, "_DNN_SKIP_AT", skip_at)
    calls: list = []
    real_finish = coupled.light_finish

    def finish(lazy, rel=None):
        calls.append(lazy["top"])
        return real_finish(lazy, rel)

    monkeypatch.setattr(coupled, "light_finish", finish)
    seen = _spy_tests(monkeypatch)
    rng = np.random.default_rng(seed)
    X = _modules(rng, 6, n, 3)
    X[:, np.argsort(-X.var(axis=0))[size:]] *= t_scale
    A = X.T @ X / X.shape[0]
    c = route._certify_large(Cov(X, None), k, None, "auto", None)
    opt, _ = brute_opt(A, k)
    assert c.upper_bound >= opt * (1 - 1e-12)
    if not seen:
        return  # (the light route proved nothing at kS: the DNN's route, not lazy)
    if calls:
        assert c.info["B_S"] <= calls[0]
    else:
        # one test, at S's sparsity kS = min(k, |S|) (k = 6 on a 5-feature S asks at 5; the base ran the whole
        # bisection here: two tests or more)
        assert len(seen) == 1 and seen[0] <= k, seen


def test_where_T_binds_S_bound_stays_at_the_aims_value(monkeypatch):
    """Cases where the rest T binds the coupled bound (thin data, the first test at ``lower / 0.995``):
    light_finish never runs and the one-k certificate's S bound is the lazy test's value, proved by one test at
    kS (the base bisected below it: several tests at kS); the bound is valid (brute force)."""
    _force_split(monkeypatch, 6)
    monkeypatch.setattr(S, "_LAZY_S", True)
    monkeypatch.setattr(coupled, "_DNN_SKIP_AT", 0.995)  # (the first test near the optimum: T binds above it)
    seen = _spy_tests(monkeypatch)
    finished, kept = [], []
    real_finish = coupled.light_finish
    monkeypatch.setattr(coupled, "light_finish", lambda lazy, rel=None: finished.append(1) or real_finish(lazy, rel))
    real_light = single.light_S

    def light(covS, kS, xS, lam=None, lazy=None, seen=None):
        kept.append(lazy)
        return real_light(covS, kS, xS, lam, lazy, seen)

    monkeypatch.setattr(single, "light_S", light)
    found = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        X = _modules(rng, 6, 10, 3)
        A = X.T @ X / X.shape[0]
        seen.clear(), finished.clear(), kept.clear()
        c = route._certify_large(Cov(X, None), 5, None, "auto", None)
        assert c.upper_bound >= brute_opt(A, 5)[0] * (1 - 1e-12)
        if kept and kept[0] and not finished and c.info.get("dnn") is None:  # (the light route stood)
            assert seen == [5] and c.info["B_S"] == kept[0]["top"]
            found += 1
    assert found, "no case where T binds: the test covers nothing"


def test_anchor_rows_are_shared_with_the_finish(monkeypatch):
    """light_finish reuses the lazy test's candidate lists (no second AnchorRows on A_SS)."""
    monkeypatch.setattr(S, "_LAZY_S", True)
    for seed in range(40):
        rng = np.random.default_rng(seed)
        A = _psd(rng, 20, 7)
        lazy: dict = {}
        if coupled.light_S(Cov(A=A), 3, _x_at(A, 3), None, lazy) is not None and lazy:
            break
    assert lazy, "no lazy case: the test covers nothing"
    made = []
    real = anchor.AnchorRows.__init__

    def init(self, *a, **kw):
        made.append(1)
        real(self, *a, **kw)

    try:
        anchor.AnchorRows.__init__ = init
        coupled.light_finish(lazy)
    finally:
        anchor.AnchorRows.__init__ = real
    assert not made


def test_switched_off_the_one_k_light_route_is_eager(monkeypatch):
    """With ``_LAZY_S`` off light_S's lazy dict stays empty and light_finish never runs: the one-k certificate
    is the eager one (S's bound bisected at kS, as before the eighth round)."""
    _force_split(monkeypatch, 6)
    monkeypatch.setattr(S, "_LAZY_S", False)
    got, finished = [], []
    real_light, real_finish = single.light_S, coupled.light_finish

    def light(covS, kS, xS, lam=None, lazy=None, seen=None):
        got.append(lazy)
        return real_light(covS, kS, xS, lam, lazy, seen)

    monkeypatch.setattr(single, "light_S", light)
    monkeypatch.setattr(coupled, "light_finish", lambda lazy, rel=None: finished.append(1) or real_finish(lazy, rel))
    for seed in range(4):
        X = _modules(np.random.default_rng(seed), 6, 10, 3)
        route._certify_large(Cov(X, None), 5, None, "auto", None)
    assert got and all(g == {} for g in got) and not finished
