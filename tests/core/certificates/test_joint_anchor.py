"""Issue 39 item 1 on wide data (helper gcert): the anchored row-sum test of several sparsities at once
(``anchor.anchored_joint_test``, ``anchor.joint_blockers``) and the split bound's refinements aimed
through it (``coupled._aimed``), against brute force on tiny inputs."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from nspca_core._common.rank1 import rank1_point
from nspca_core.certificates import _settings as S
from nspca_core.certificates import anchor, coupled, dual, route, single
from nspca_core.certificates.anchor import AnchorRows, anchored_joint_test, joint_blockers
from nspca_core.operators.cov import Cov

from tests.bruteforce import brute_opt
from tests.core.certificates.test_anchor import _random_symmetric
from tests.core.certificates.test_single import _random_psd
from tests.core.certificates.test_split_coupled import _force_split, _modules

TINY = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _case(seed: int):
    """A tiny symmetric matrix (psd or not), candidate lists of a random width at a sparsity kmax, and
    1..4 hypotheses ``(k_t, tau_t)``: ``k_t`` in ``2..kmax``, ``tau_t`` 0.8..1.4 x ``OPT_{k_t}`` (plus a
    hair of the scale, so zero optima are tested too).  Returns ``(A, rows, ks, taus, opts)``."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 9))
    A = _random_symmetric(rng, n)
    kmax = int(rng.integers(2, n + 1))
    rows = AnchorRows(A, kmax, width=int(rng.integers(kmax - 1, n)))
    t = int(rng.integers(1, 5))
    ks = rng.integers(2, kmax + 1, size=t)
    opts = np.array([brute_opt(A, int(k))[0] for k in ks])
    scale = max(float(np.abs(A).max()), 1e-300)
    taus = opts * rng.uniform(0.8, 1.4, size=t) + rng.uniform(-1e-3, 1e-2, size=t) * scale
    return A, rows, ks, taus, opts


def _holds(A, ks, taus, opts):
    scale = max(float(np.abs(A).max()), 1.0)
    return all(o <= tau + 1e-9 * scale for o, tau in zip(opts, taus))


@TINY
@given(st.integers(0, 2**31 - 1))
def test_joint_test_proves_only_true_bounds(seed):
    """Whatever it proves holds at every one of its sparsities (enumeration)."""
    A, rows, ks, taus, opts = _case(seed)
    ok, r = anchored_joint_test(rows, ks, taus)
    if ok:
        assert _holds(A, ks, taus, opts), (ks, taus, opts)
    assert r.shape == (A.shape[0],) and (r <= 1.0).all()


@TINY
@given(st.integers(0, 2**31 - 1), st.floats(1.0, 1.3))
@example(17454854, 1.25)  # (negative taus: the continuation's premise must hold there too)
def test_joint_test_continued_from_a_failure_proves_only_true_bounds(seed, up):
    """A failed joint test's ratios start a later one whose every hypothesis has one before it at a
    sparsity at least as large and a value at most as large (the aimed search's larger values at
    fewer sparsities): what that one proves holds (enumeration)."""
    A, rows, ks, taus, opts = _case(seed)
    ok, r = anchored_joint_test(rows, ks, taus, patience=3, max_iter=5)
    rng = np.random.default_rng(seed + 1)
    pick = rng.integers(0, ks.size, size=int(rng.integers(1, ks.size + 1)))
    ks2 = np.array([int(rng.integers(2, ks[p] + 1)) for p in pick])
    # (at least as large as its hypothesis, negative values too: tau * up fell BELOW a negative tau, outside the
    # continuation's premise -- hypothesis found seed 17454854, up 1.25; for tau >= 0 the same values as tau * up)
    taus2 = taus[pick] + ((up - 1) + rng.uniform(0, 0.1)) * np.abs(taus[pick])
    opts2 = np.array([brute_opt(A, int(k))[0] for k in ks2])
    ok2, _ = anchored_joint_test(rows, ks2, taus2, r)
    if ok2:
        assert _holds(A, ks2, taus2, opts2), (ks2, taus2, opts2)


@TINY
@given(st.integers(0, 2**31 - 1))
def test_joint_test_of_one_sparsity_is_the_plain_test_and_not_vacuous(seed):
    """One hypothesis: the plain test's verdict (away from its boundary: values well above OPT prove
    in one step, every row's ``A_ll +`` its k - 1 largest positive entries below tau)."""
    A, rows, ks, taus, opts = _case(seed)
    P = np.maximum(A, 0.0)
    np.fill_diagonal(P, 0.0)
    top = np.sort(P, axis=1)[:, ::-1]
    easy = np.array([float(np.max(np.diag(A) + top[:, : k - 1].sum(axis=1))) for k in ks])
    # (at least 1e-36: the float32 selection's sums carry an absolute 2^-149 per entry, so a zero matrix
    # proves nothing at 1e-306 -- seed 462 drew one)
    easy = np.abs(easy) * 1.01 + 1e-6 * max(float(np.abs(A).max()), 1e-30)
    ok, _ = anchored_joint_test(rows, ks, easy)
    assert ok
    ok1, _ = anchored_joint_test(rows, ks[:1], easy[:1])
    ok2, _ = anchor.anchored_rowsum_test(AnchorRows(A, int(ks[0]), width=rows.idx.shape[1]), float(easy[0]))
    assert ok1 and ok2


@TINY
@given(st.integers(0, 2**31 - 1))
def test_blockers_name_hypotheses_of_the_failed_test(seed):
    """``joint_blockers`` after a failure: indices of the test's hypotheses, one at least while a row is
    still able to be the anchor."""
    A, rows, ks, taus, opts = _case(seed)
    ok, r = anchored_joint_test(rows, ks, taus, patience=3)
    if ok:
        return
    b = joint_blockers(rows, ks, taus, r)
    assert ((b >= 0) & (b < ks.size)).all()
    assert b.size > 0 or not (r >= 1.0).any()


@TINY
@given(st.integers(3, 9), st.integers(0, 2**31 - 1))
def test_truncated_values_are_the_cut_points_values(n, seed):
    """``_truncated_all``: at each sparsity i the value of x cut to its i largest entries (normalized):
    a feasible value at i (``rank1_point``'s point on a nonnegative x)."""
    rng = np.random.default_rng(seed)
    A = _random_psd(rng, n)
    x = np.abs(rng.standard_normal(n)) * (rng.random(n) < 0.7)
    if not x.any():
        x[0] = 1.0
    ii = np.arange(1, n + 1)
    got = coupled._truncated_all(A, x, ii)
    for i, g in zip(ii, got):
        y = rank1_point(x, int(i))
        assert abs(g - float(y @ A @ y)) <= 1e-9 * max(1.0, float(np.abs(A).max()))


def _aimed_case(seed: int, beta: float, with_cross: bool, nS: int = 8, kind: str | None = None, kmin: int = 4,
                gallop: int = coupled._AIM_GALLOP):
    """``coupled._aimed`` on a psd ``A_SS``: S's bound a hair above its optimum at k, ``B_S(i)``
    otherwise the variance sums, a rest curve rising by ``beta`` x OPT per member and (``with_cross``)
    a cross table of random values, so the terms at i = 3..k - 1 sit above the goal."""
    rng = np.random.default_rng(seed)
    AS = _random_psd(rng, nS, kind=kind or str(rng.choice(["gauss", "abs", "sparse"])))
    k = int(rng.integers(kmin, nS + 1))
    opt, xo = brute_opt(AS, k)
    certS = SimpleNamespace(upper_bound=opt * 1.001, info={}, x=xo)
    BT = beta * opt * np.arange(k + 1, dtype=float)
    C = rng.uniform(0, 1, (k + 1, k + 1)) * np.sqrt(opt * BT.max()) if with_cross else None
    sharper: dict = {}
    notes: dict = {}
    val = coupled._aimed(Cov(A=AS), certS, None, k, BT, k, None, C, 0.99 * opt, 0.975, sharper, notes,
                         gallop=gallop)
    return AS, sharper, k, val, notes


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**31 - 1), st.floats(1e-3, 0.3), st.booleans())
def test_aimed_joint_refinements_hold_against_bruteforce(seed, beta, with_cross):
    """Every ``B_S(i)`` the joint tests proved is at least S's optimum at sparsity i (enumeration), with
    and without the cross term; the tests' counted cost is reported, and the least value any bounds
    could give is at most the bound."""
    AS, sharper, k, val, notes = _aimed_case(seed, beta, with_cross)
    for i, b in sharper.items():
        assert b >= brute_opt(AS, i)[0] * (1 - 1e-12), (i, b)
    assert notes["cost"] >= 0.0 and notes["least"] <= val * (1 + 1e-12)


def test_aimed_refines_many_sparsities_with_few_tests(monkeypatch):
    """The point of the joint test: many binding sparsities sharpened by a handful of anchored
    iterations' runs (``row_fixpoint`` calls), at most ``_AIM_JOINT``; one test per sparsity (the
    former aimed refinements) needs one run or more for each (on these 16 cases: 64 sparsities
    refined in 89 runs; now 73 in 23).  The ladder of aims after a proved goal (``coupled._ladder``) left out: its
    tests sharpen the same sparsities further, one joint test per rung (counted in test_aim_ladder.py)."""
    calls = []
    real = anchor.row_fixpoint
    monkeypatch.setattr(anchor, "row_fixpoint", lambda *a, **kw: (calls.append(1), real(*a, **kw))[1])
    monkeypatch.setattr(coupled, "_LADDER_RUNS", 0.0)
    refined, runs = 0, 0
    for seed in range(8):
        for beta in (0.02, 0.05):
            calls.clear()
            _, sharper, k, _, _ = _aimed_case(seed, beta, False, nS=12, kind="abs", kmin=7)
            refined += sum(np.isfinite(v) for v in sharper.values())
            runs += len(calls)
            assert len(calls) <= coupled._AIM_JOINT
    assert refined >= 2 * runs > 0, (refined, runs)


# ---- the light route: S's bound from the anchored row sums alone (coupled.light_S), the DNN's route after


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.integers(9, 11), st.integers(5, 7), st.integers(3, 6), st.integers(0, 2**31 - 1), st.booleans())
def test_light_route_bounds_hold_against_bruteforce(monkeypatch, n, size, k, seed, fall_back):
    """One-k split certificates through the light route (the tree's sparsity limit forced to 0 so tiny k
    take it; ``fall_back``: the loss allowed forced negative, so the DNN's route follows every light
    attempt): the bound is above OPT_k (enumeration), S's anchored bound above S's optimum at kS."""
    _force_split(monkeypatch, size)
    monkeypatch.setattr(single, "_SPLIT_BRANCH_MAX_K", 0)
    if fall_back:
        monkeypatch.setattr(single, "_LIGHT_LOSS", -1.0)
    seen: list = []
    real = single.light_S
    monkeypatch.setattr(single, "light_S", lambda *a, **kw: (lambda c: (seen.append((a, c)), c)[1])(real(*a, **kw)))
    rng = np.random.default_rng(seed)
    X = _modules(rng, 8, n, 3)  # (m < n: thin data, the light route's condition)
    A = X.T @ X / X.shape[0]
    cert = route._certify_large(Cov(X, None), k, None, "auto", None)
    opt, _ = brute_opt(A, k)
    assert cert.upper_bound >= opt * (1 - 1e-12)
    for (covS, kS, xS, lam), c in seen:
        if c is not None:
            AS = covS.dense()
            assert c.upper_bound >= brute_opt(AS, kS)[0] * (1 - 1e-12)
            assert lam >= float(np.linalg.eigvalsh(AS)[-1]) * (1 - 1e-12)


def test_light_route_is_taken_and_skips_the_dnn(monkeypatch):
    """On thin modular data above the tree's sparsities the light route certifies without a DNN run on S
    (``dual._dnn`` never called) at least once in these cases, and its bound is still above OPT_k."""
    _force_split(monkeypatch, 7)
    monkeypatch.setattr(single, "_SPLIT_BRANCH_MAX_K", 0)
    calls: list = []
    real = dual._dnn
    monkeypatch.setattr(dual, "_dnn", lambda *a, **kw: (calls.append(1), real(*a, **kw))[1])
    light = 0
    for seed in range(8):
        calls.clear()
        rng = np.random.default_rng(seed)
        X = _modules(rng, 8, 10, 3)
        A = X.T @ X / X.shape[0]
        cert = route._certify_large(Cov(X, None), 5, None, "auto", None)
        assert cert.upper_bound >= brute_opt(A, 5)[0] * (1 - 1e-12)
        light += not calls
    assert light > 0


def test_aimed_gallop_gives_up_after_three_failed_tests(monkeypatch):
    """A one-k certificate's aimed search (``gallop=_AIM_GALLOP_ONE``), where no joint test holds, stops
    after 3 failed tests (the goal, +0.1%, +0.3% of it; dlbcl-shaped k = 200: a 4th, 1.1% above, cost
    0.52 CPU s and proved nothing; a path's runs keep 4), nothing refined; a test that holds at the 3rd
    is still reached and its values kept (dlbcl-shaped k = 150 proved there), above the optima."""
    calls: list = []
    real = coupled.anchored_joint_test

    def failing(rows, ks, taus, r=None, **kw):
        calls.append(1)
        return False, r

    def third_holds(rows, ks, taus, r=None, **kw):
        calls.append(1)
        return real(rows, ks, taus, r, **kw) if len(calls) >= 3 else (False, r)

    gave_up, reached, path_more = 0, 0, 0
    one = coupled._AIM_GALLOP_ONE
    for seed in range(6):
        calls.clear()
        with monkeypatch.context() as mp:
            mp.setattr(coupled, "anchored_joint_test", failing)
            _, sharper, k, _, _ = _aimed_case(seed, 0.05, False, nS=10, kind="abs", kmin=7, gallop=one)
        assert len(calls) <= 3 and not sharper
        gave_up += len(calls) == 3
        calls.clear()
        with monkeypatch.context() as mp:
            mp.setattr(coupled, "anchored_joint_test", third_holds)
            AS, sharper, k, _, _ = _aimed_case(seed, 0.05, False, nS=10, kind="abs", kmin=7, gallop=one)
        for i, b in sharper.items():
            assert b >= brute_opt(AS, i)[0] * (1 - 1e-12), (i, b)
        reached += len(calls) >= 3 and any(np.isfinite(v) for v in sharper.values())
        calls.clear()
        with monkeypatch.context() as mp:
            mp.setattr(coupled, "anchored_joint_test", failing)
            _aimed_case(seed, 0.05, False, nS=10, kind="abs", kmin=7)  # (a path's runs: one more)
        path_more += len(calls) == 4
    assert gave_up > 0 and reached > 0 and path_more > 0, (gave_up, reached, path_more)


@pytest.mark.parametrize("lazy", [False, True])
def test_one_k_split_gallops_less_than_a_paths_runs(monkeypatch, lazy):
    """``single._certify_split`` hands the aimed search the one-k limit and resolution, a path's runs
    (``keep``) theirs; with S's bound lazy (``_settings._LAZY_S``) a path's run first searches as certify(k)
    does (its light route, float for float: the path never looser at its runs), then with its own."""
    monkeypatch.setattr(S, "_LAZY_S", lazy)
    seen: list = []
    real = coupled._aimed
    monkeypatch.setattr(coupled, "_aimed", lambda *a, **kw: (seen.append(a[-2:]), real(*a, **kw))[1])
    _force_split(monkeypatch, 6)
    monkeypatch.setattr(single, "_SPLIT_BRANCH_MAX_K", 0)
    cov = Cov(_modules(np.random.default_rng(0), 8, 11, 3), None)  # (one that reaches the aimed search)
    route._certify_large(cov, 5, None, "auto", None)
    one = list(seen)
    seen.clear()
    single._certify_split(cov, 5, None, "auto", None, keep={})
    assert one and set(one) == {(coupled._AIM_GALLOP_ONE, coupled._AIM_REL_ONE)}, one
    if lazy:
        assert seen[0] == (coupled._AIM_GALLOP_ONE, coupled._AIM_REL_ONE), seen
        seen = seen[1:]
    assert seen and set(seen) == {(coupled._AIM_GALLOP, coupled._AIM_REL)}, seen
