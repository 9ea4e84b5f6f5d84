"""The exact spannogram: candidate_supports (S_d) and lowrank_nspca against brute force."""

from __future__ import annotations

from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core import InputError, Result, candidate_supports, lowrank_nspca, rank1_nspca
from nspca_core.spannogram.solve import _lowrank
from tests.bruteforce import brute_opt, brute_opt_lowrank

REL = 1e-9


def _family(rng, name, n, d):
    """Random V of shape (n, d) from a family of (degenerate) inputs."""
    if name == "gaussian":
        return rng.normal(size=(n, d))
    if name == "integer":  # many exact ties
        return rng.integers(-2, 3, size=(n, d)).astype(float)
    if name == "sign":  # heavier ties: entries in {-1, 0, 1}
        return rng.integers(-1, 2, size=(n, d)).astype(float)
    if name == "zero-dup-multiple":
        V = rng.normal(size=(n, d))
        V[rng.random(n) < 0.3] = 0.0
        if n >= 3:
            V[-1] = V[0]  # duplicated row
            V[1] = rng.choice([-2.0, -1.0, 0.5, 3.0]) * V[0]  # a multiple (same or opposite)
        return V
    if name == "low-rank":  # linearly dependent columns / collinear rows
        V = rng.normal(size=(n, 1)) @ rng.normal(size=(1, d))
        if d == 3 and rng.random() < 0.5:
            V = rng.normal(size=(n, 2)) @ rng.normal(size=(2, d))
        return np.round(V) if rng.random() < 0.5 else V
    raise AssertionError(name)


FAMILIES = ["gaussian", "integer", "sign", "zero-dup-multiple", "low-rank"]


def _instances(seed, name, count):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n = int(rng.choice([1, 2, 3, 4, 5, 6, 7, 8, 9], p=[.05, .11, .17, .2, .18, .13, .08, .05, .03]))
        d = min(int(rng.integers(1, 4)), n)
        V = _family(rng, name, n, d)
        roll = rng.random()
        k = 1 if roll < 0.15 else n if roll < 0.3 else int(rng.integers(1, n + 1))
        yield V, k


def _assert_feasible(x, n, k):
    assert x.shape == (n,)
    assert (x >= 0).all()
    assert abs(np.linalg.norm(x) - 1.0) < 1e-12
    assert np.count_nonzero(x) <= k


@pytest.mark.parametrize("name", FAMILIES)
@pytest.mark.parametrize("seed", [0, 1])
def test_lowrank_nspca_matches_bruteforce(name, seed):
    # 2 seeds x 5 families x 200 = 2000 random instances with d in {1, 2, 3}
    for V, k in _instances(1000 * seed + FAMILIES.index(name), name, 200):
        opt, _ = brute_opt_lowrank(V, k)
        r = lowrank_nspca(V, k)
        n = V.shape[0]
        _assert_feasible(r.x, n, k)
        val = float(np.sum((V.T @ r.x) ** 2))
        assert r.variance == pytest.approx(val, rel=1e-12, abs=1e-300)
        assert abs(val - opt) <= REL * max(opt, 1e-300) + 1e-13, (V.tolist(), k, val, opt)


@pytest.mark.parametrize("name", ["gaussian", "integer", "zero-dup-multiple"])
def test_candidate_supports_contain_optimal_support_and_respect_bound(name):
    for V, k in _instances(77 + FAMILIES.index(name), name, 80):
        n, d = V.shape
        S = candidate_supports(V, k)
        assert len(S) <= 2 ** d * comb(n + 1, d)
        keys = {s.tobytes() for s in S}
        assert len(keys) == len(S)  # deduplicated
        for s in S:
            assert s.dtype.kind == "i" and 1 <= s.size <= k
            assert np.all(np.diff(s) > 0) and s[0] >= 0 and s[-1] < n
        opt, _ = brute_opt_lowrank(V, k)
        if opt <= 0:  # V = 0: everything is optimal
            continue
        # some candidate holds the support of an optimal x: the best x supported inside it is optimal
        A = V @ V.T
        best = max(brute_opt(A[np.ix_(s, s)], s.size)[0] for s in S)
        assert best >= opt * (1 - REL)


def test_candidate_supports_general_position_count():
    # general position: exactly the supports of the open cells, at most 2^d C(n+1, d)
    rng = np.random.default_rng(5)
    for d in (1, 2, 3):
        V = rng.normal(size=(30, d))
        for k in (1, 4, 29):
            S = candidate_supports(V, k)
            assert 2 <= len(S) <= 2 ** d * comb(31, d)


def test_candidate_supports_many_collinear_ties_stay_small():
    # 40 rows on one line tie at one vertex: the lexicographic tie rule keeps S_2 polynomial
    j = np.arange(1, 41, dtype=float)
    V = np.column_stack([np.ones(40), j])
    S = candidate_supports(V, 20)
    assert len(S) <= 4 * comb(41, 2)
    r = lowrank_nspca(V, 20)
    # optimum: by symmetry of the objective, the 20 rows with largest j (Perron vector positive)
    assert set(r.support.tolist()) == set(range(20, 40))


@pytest.mark.parametrize("seed", range(3))
def test_sweep_equals_enumeration_d2(seed):
    rng = np.random.default_rng(seed)
    for _ in range(6):
        n = int(rng.integers(20, 160))
        kind = rng.integers(0, 3)
        if kind == 0:
            V = rng.normal(size=(n, 2)) * rng.gamma(1.0, size=(n, 1))
        elif kind == 1:
            V = rng.integers(-4, 5, size=(n, 2)).astype(float)  # many exact ties
        else:
            V = rng.normal(size=(n, 2))
            V[rng.random(n) < 0.2] = 0.0
            V[-5:] = V[:5]
        for k in (1, int(rng.integers(2, n)), n):
            a = _lowrank(V, k, method="sweep")
            b = _lowrank(V, k, method="enumerate")
            assert a.info["path"] == "sweep" and b.info["path"] == "enumerate"
            assert a.variance == pytest.approx(b.variance, rel=REL)
            _assert_feasible(a.x, n, k)


@pytest.mark.parametrize("method", ["filter", "patches"])
def test_d3_pruned_enumerations_give_the_same_candidates(method):
    # the circle filter and the sphere patches only skip vertices certainly off the k-level
    from nspca_core.spannogram._common import _Reduced
    from nspca_core.spannogram.enumerate import _supports_enumerate
    from nspca_core.spannogram.patches import _supports_patches
    from nspca_core.spannogram.solve import _expand_all

    rng = np.random.default_rng(21)
    for it in range(16 if method == "filter" else 8):
        n = int(rng.integers(4, 26 if method == "filter" else 16))
        V = _family(rng, ["gaussian", "integer", "zero-dup-multiple", "sign"][it % 4], n, 3)
        red = _Reduced(V)
        if red.empty or red.r < 3:
            continue
        for k in (1, int(rng.integers(1, n + 1)), n):
            pruned = (_supports_patches(red, k) if method == "patches"
                      else _supports_enumerate(red, k, method=method))
            got = _expand_all(red, pruned)
            ref = _expand_all(red, _supports_enumerate(red, k, method="plain"))
            assert {s.tobytes() for s in got} == {s.tobytes() for s in ref}


def test_d3_level_pruning_is_sound():
    # with many rows and small k the k-th value stays positive: rows and circles get pruned
    from nspca_core.spannogram._common import _Reduced
    from nspca_core.spannogram.enumerate import _level_lower_bound, _supports_enumerate
    from nspca_core.spannogram.solve import _expand_all

    rng = np.random.default_rng(8)
    pruned = 0
    for _ in range(3):
        V = rng.normal(size=(70, 3)) * np.array([3.0, 1.5, 1.0])
        red = _Reduced(V)
        for k in (1, 3):
            pruned += _level_lower_bound(red.U, red.mu, k) > 0
            got = _expand_all(red, _supports_enumerate(red, k, method="filter"))
            ref = _expand_all(red, _supports_enumerate(red, k, method="plain"))
            assert {s.tobytes() for s in got} == {s.tobytes() for s in ref}
    assert pruned >= 3


def test_auto_picks_sweep_for_many_rows():
    rng = np.random.default_rng(11)
    V = rng.normal(size=(400, 2))
    r = lowrank_nspca(V, 7)
    assert r.info["path"] == "sweep"
    assert r.variance == pytest.approx(_lowrank(V, 7, method="enumerate").variance, rel=REL)


def test_cbcl_d2_sweep_equals_enumeration(cbcl_X):
    from nspca_core import lowrank_factor

    V, _ = lowrank_factor(cbcl_X, d=2)
    for k in (5, 60):
        a = _lowrank(V, k, method="sweep")
        b = _lowrank(V, k, method="enumerate")
        assert a.variance == pytest.approx(b.variance, rel=REL)


def test_result_fields_and_callback():
    rng = np.random.default_rng(2)
    V = rng.normal(size=(12, 3))
    calls = []
    r = lowrank_nspca(V, 4, callback=lambda done, total: calls.append((done, total)))
    assert isinstance(r, Result)
    assert r.method == "spannogram"
    assert r.variance == r.variance_lowrank
    assert r.params == {"k": 4, "d": 3}
    assert r.info["candidates"] == len(candidate_supports(V, 4))
    assert np.array_equal(r.support, np.flatnonzero(r.x))
    assert calls and all(0 <= a <= b for a, b in calls) and calls[-1][0] == calls[-1][1]


def test_zero_matrix_and_trivial_cases():
    r = lowrank_nspca(np.zeros((4, 2)), 2)
    _assert_feasible(r.x, 4, 2)
    assert r.variance == 0.0
    assert candidate_supports(np.zeros((4, 2)), 2) == []
    # k = n with one negative-only row: it is left out
    V = np.array([[1.0, 0.0], [-1.0, 0.0]])
    assert lowrank_nspca(V, 2).variance == pytest.approx(1.0)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 12), d=st.integers(1, 3), k=st.integers(1, 12), seed=st.integers(0, 2**31 - 1),
       integer=st.booleans())
def test_property_feasible_and_beats_heuristics(n, d, k, seed, integer):
    d, k = min(d, n), min(k, n)
    rng = np.random.default_rng(seed)
    V = rng.integers(-2, 3, size=(n, d)).astype(float) if integer else rng.normal(size=(n, d))
    r = lowrank_nspca(V, k)
    _assert_feasible(r.x, n, k)
    val = float(np.sum((V.T @ r.x) ** 2))
    # exact >= the rank-1 solution on the first column and >= random feasible points
    x1 = rank1_nspca(V[:, 0], k)
    assert val >= np.sum((V.T @ x1) ** 2) * (1 - 1e-12) - 1e-12
    for _ in range(20):
        S = rng.choice(n, size=int(rng.integers(1, k + 1)), replace=False)
        x = np.zeros(n)
        x[S] = rng.random(S.size)
        x /= np.linalg.norm(x)
        assert val >= np.sum((V.T @ x) ** 2) * (1 - 1e-12) - 1e-12


def test_validation_messages():
    with pytest.raises(InputError, match=r"`k` must be an int in \[1, n_features=3\]; got 0"):
        lowrank_nspca(np.ones((3, 2)), 0)
    with pytest.raises(InputError, match=r"`k` must be an int in \[1, n_features=3\]; got 4"):
        candidate_supports(np.ones((3, 2)), 4)
    with pytest.raises(InputError, match=r"`k` must be an int in \[1, n_features=3\]; got 1.5"):
        lowrank_nspca(np.ones((3, 2)), 1.5)
    with pytest.raises(InputError, match="`V` must be a 2-D array"):
        lowrank_nspca(np.ones(3), 1)
    with pytest.raises(InputError, match="`V` must be finite"):
        candidate_supports([[np.nan, 1.0]], 1)


# --------------------------------------------------------------------------- value-pruned d = 3 path


@pytest.mark.parametrize("name", FAMILIES)
def test_pruned_d3_matches_bruteforce(name):
    # the branch and bound over sphere patches stays exact on degenerate inputs too
    rng = np.random.default_rng(300 + FAMILIES.index(name))
    for _ in range(60):
        n = int(rng.integers(3, 10))
        V = _family(rng, name, n, 3)
        k = int(rng.choice([1, n, int(rng.integers(1, n + 1))]))
        opt, _ = brute_opt_lowrank(V, k)
        r = _lowrank(V, k, method="prune")
        _assert_feasible(r.x, n, k)
        val = float(np.sum((V.T @ r.x) ** 2))
        assert abs(val - opt) <= REL * max(opt, 1e-300) + 1e-13, (V.tolist(), k, val, opt)


@pytest.mark.parametrize("seed", range(3))
def test_pruned_d3_equals_plain_enumeration(seed):
    rng = np.random.default_rng(40 + seed)
    for it in range(4):
        n = int(rng.integers(20, 70))
        V = _family(rng, ["gaussian", "integer", "zero-dup-multiple", "sign"][it], n, 3)
        V = V * np.array([3.0, 1.5, 1.0])  # a spectrum like a covariance factor
        for k in (1, int(rng.integers(2, n)), n):
            a = _lowrank(V, k, method="prune")
            b = _lowrank(V, k, method="plain")
            assert a.info["path"] == "pruned"
            assert a.variance == pytest.approx(b.variance, rel=REL)
            _assert_feasible(a.x, n, k)


def test_pruned_lower_bound_is_feasible_value():
    from nspca_core.spannogram._common import _Reduced
    from nspca_core.spannogram.patches import _ascent_lower_bound

    rng = np.random.default_rng(9)
    for _ in range(20):
        V = rng.normal(size=(8, 3))
        k = int(rng.integers(1, 9))
        red = _Reduced(V)
        lb = _ascent_lower_bound(red.U, red.mu, k)
        opt, _ = brute_opt_lowrank(V, k)
        assert 0 < lb <= opt * (1 + 1e-12)


def test_lowrank_auto_uses_pruning_for_many_rows():
    rng = np.random.default_rng(12)
    V = rng.normal(size=(60, 3)) * np.array([2.0, 1.0, 0.5])
    r = lowrank_nspca(V, 6)
    assert r.info["path"] == "pruned"
    assert r.variance == pytest.approx(_lowrank(V, 6, method="filter").variance, rel=REL)
    # candidate_supports stays the complete S_d (no value pruning there)
    assert len(candidate_supports(V, 6)) > r.info["candidates"]


def test_cbcl_d3_pruned_equals_circle_filter(cbcl_X):
    from nspca_core import lowrank_factor

    V, _ = lowrank_factor(cbcl_X, d=3)
    for k in (5, 12):
        a = _lowrank(V, k, method="auto")
        b = _lowrank(V, k, method="filter")
        assert a.info["path"] == "pruned" and b.info["path"] == "enumerate"
        assert a.variance == pytest.approx(b.variance, rel=REL)
        assert np.array_equal(a.support, b.support)


# --------------------------------------------------------------------------- k = n shortcut (large k)


@pytest.mark.parametrize("name", FAMILIES)
def test_full_nonneg_matches_bruteforce_at_k_equal_n(name):
    # max over unit x >= 0 of ||V^T x||^2 without sparsity, incl. zero, duplicated, opposite rows
    from nspca_core.spannogram.full import _opt_nonneg_full

    rng = np.random.default_rng(500 + FAMILIES.index(name))
    for _ in range(120):
        n = int(rng.integers(1, 9))
        d = int(rng.integers(1, 4))
        V = _family(rng, name, n, d)
        if rng.random() < 0.2:
            V[rng.integers(n)] = 0.0
        opt, _ = brute_opt_lowrank(V, n)
        out = _opt_nonneg_full(V)
        if not np.any(V):
            assert out is None
            continue
        val, x = out
        _assert_feasible(x, n, n)
        assert val == pytest.approx(float(np.sum((V.T @ x) ** 2)), rel=1e-12)
        assert abs(val - opt) <= REL * opt + 1e-13, (V.tolist(), val, opt)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 8), d=st.integers(2, 3), seed=st.integers(0, 2**31 - 1), integer=st.booleans())
def test_property_full_nonneg_equals_bruteforce(n, d, seed, integer):
    from nspca_core.spannogram.full import _opt_nonneg_full

    rng = np.random.default_rng(seed)
    V = rng.integers(-2, 3, size=(n, d)).astype(float) if integer else rng.normal(size=(n, d))
    opt, _ = brute_opt_lowrank(V, n)
    out = _opt_nonneg_full(V)
    val = 0.0 if out is None else out[0]
    assert abs(val - max(opt, 0.0)) <= REL * max(opt, 0.0) + 1e-13


@pytest.mark.parametrize("name", FAMILIES)
def test_full_shortcut_matches_bruteforce_for_large_k(name):
    rng = np.random.default_rng(600 + FAMILIES.index(name))
    used = 0
    for _ in range(120):
        n = int(rng.integers(2, 10))
        V = _family(rng, name, n, int(rng.integers(2, 4)))
        k = int(rng.integers((n + 1) // 2, n + 1))
        opt, _ = brute_opt_lowrank(V, k)
        r = _lowrank(V, k, method="full")
        used += r.info["path"] == "full-nonneg"
        _assert_feasible(r.x, n, k)
        val = float(np.sum((V.T @ r.x) ** 2))
        assert r.variance == pytest.approx(val, rel=1e-12, abs=1e-300)
        assert abs(val - opt) <= REL * max(opt, 1e-300) + 1e-13, (V.tolist(), k, val, opt)
    assert used >= 20  # the shortcut itself is exercised, not only the fallback


@pytest.mark.parametrize("d", [2, 3])
def test_full_shortcut_equals_enumeration_mid_size(d):
    rng = np.random.default_rng(70 + d)
    used = 0
    for it in range(4):
        n = int(rng.integers(40, 70))
        V = _family(rng, ["gaussian", "integer", "zero-dup-multiple", "sign"][it], n, d)
        V = V * np.array([3.0, 1.5, 1.0][:d])
        for k in (n // 3 + 1, n // 2, n):
            a = lowrank_nspca(V, k)
            b = _lowrank(V, k, method="enumerate" if d == 2 else "filter")
            used += a.info["path"] == "full-nonneg"
            assert a.variance == pytest.approx(b.variance, rel=REL)
            _assert_feasible(a.x, n, k)
    assert used >= 4


def test_cbcl_large_k_shortcut_equals_old_path(cbcl_X):
    from nspca_core import lowrank_factor

    V, _ = lowrank_factor(cbcl_X, d=3)
    for W, old in ((V[:, :2], "sweep"), (V, "prune")):
        a = lowrank_nspca(W, 180)
        b = _lowrank(W, 180, method=old)
        assert a.info["path"] == "full-nonneg" and b.info["path"] != "full-nonneg"
        assert a.variance == pytest.approx(b.variance, rel=REL)
        _assert_feasible(a.x, W.shape[0], 180)


# ----------------------------------------------------------------------------- scale (issue 18 item 6)
@pytest.mark.parametrize("c", [1e-300, 1e-82, 1e76, 1e300])
def test_candidate_supports_and_optimum_do_not_depend_on_the_scale(c):
    rng = np.random.default_rng(31)
    for d in (2, 3):
        V = rng.standard_normal((9, d))
        for k in (1, 3):
            same = [s.tolist() for s in candidate_supports(V * c, k)]
            assert same == [s.tolist() for s in candidate_supports(V, k)]
            r = lowrank_nspca(V * c, k)
            assert np.sum((V.T @ r.x) ** 2) >= brute_opt_lowrank(V, k)[0] * (1 - 1e-9)
    # the example: d = 3 returned [1, 0, 0] (25% of OPT) at 1e-82
    assert np.array_equal(lowrank_nspca(np.diag([1.0, 1.0, 2.0]) * c, 1).x, [0.0, 0.0, 1.0])


# ----------------------------------------------------------------------------- issue 31 item 6: the budget

@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 5), st.integers(4, 6))
def test_vertex_count_is_the_enumerations_own(seed, extra, r):
    """``C(m+1, r)`` is exactly the number of r-subsets of ``[U; 0]`` the enumeration examines
    (streamed in chunks: the count does not depend on the chunk size)."""
    from nspca_core.spannogram import enumeration_cost
    from nspca_core.spannogram.enumerate import _vertex_batches

    m = r + extra  # the rank never exceeds the number of distinct rows
    U = np.random.default_rng(seed).standard_normal((m, r))
    for chunk in (1, 7, 4096):
        seen = [D for _, D in _vertex_batches(U, r, chunk=chunk)]
        D = np.concatenate(seen)
        assert D.shape == (comb(m + 1, r), r) == (enumeration_cost(m, r, 2).vertices, r)
        assert len({tuple(row) for row in D.tolist()}) == D.shape[0]  # all distinct
        assert all(len(b) <= chunk for b in seen)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(4, 9), st.sampled_from(["gaussian", "integer", "sign"]), st.data())
def test_candidates_within_the_estimate(seed, n, family, data):
    """The distinct supports found never exceed the paper's ``2^d C(m+1, d)`` nor the cells
    ``2 d! C(m+1, d)`` the estimate charges for (m distinct nonzero rows, r their rank)."""
    from nspca_core.spannogram import enumeration_cost
    from nspca_core.spannogram._common import _Reduced

    V = _family(np.random.default_rng(seed), family, n, 4)
    k = data.draw(st.integers(1, n))
    red = _Reduced(V)
    cands = candidate_supports(V, k)
    if red.empty:
        assert cands == []
        return
    cost = enumeration_cost(red.m, red.r, k)
    assert len(cands) <= min(cost.supports, cost.cells)


def test_enumeration_estimate_formula():
    from nspca_core.spannogram import enumeration_cost

    c = enumeration_cost(200, 5, 10)
    assert c.vertices == comb(201, 5) == 2_600_334_990
    assert c.cells == 2 * 120 * comb(201, 5) and c.supports == 32 * comb(201, 5)
    assert c.bytes == c.supports * (16 * 10 + 250) and c.seconds == pytest.approx(c.cells * 3.5e-6)


def test_exact_d5_on_200_rows_is_refused_before_any_work():
    """The issue's case: ``lowrank_nspca(randn(200, 5), 10)`` reached 8 GiB after 77 s."""
    import tracemalloc

    V = np.random.default_rng(0).standard_normal((200, 5))
    msg = (r"the exact spannogram at rank 5 on 200 distinct rows examines C\(201, 5\) = 2,600,334,990 vertices and "
           r"up to 2·5!·C\(201, 5\) = 624,080,397,600 candidate cells: about [\d.]+ days \(at 3.5 µs per cell\), "
           r"and up to [\d.]+ TB for its up to 2\^5·C\(201, 5\) = 83,210,719,680 candidate supports, more than "
           r"`max_candidates` = 10,000,000 cells. Use a smaller `d` \(d <= 3 is practical at any size\), "
           r"method='enet' \(random directions, a \(1 - eps\) guarantee\) or method='auto', or raise "
           r"`max_candidates`")
    tracemalloc.start()
    try:
        with pytest.raises(InputError, match=msg):
            lowrank_nspca(V, 10)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10_000_000
    with pytest.raises(InputError, match=r"rank 5 on 200 distinct rows"):
        candidate_supports(V, 10)


def test_budget_through_fit_and_the_keyword(monkeypatch):
    from nspca_core import fit, spannogram

    X = np.random.default_rng(1).standard_normal((60, 50))
    with pytest.raises(InputError, match=r"rank 4 on 50 distinct rows examines C\(51, 4\) = 249,900 vertices .* "
                                         r"more than `max_candidates` = 10,000,000 cells"):
        fit(X, k=5, d=4, method="spannogram")
    V = np.random.default_rng(2).standard_normal((9, 4))
    cells = 2 * 24 * comb(10, 4)
    with pytest.raises(InputError, match=rf"more than `max_candidates` = {cells - 1:,} cells"):
        lowrank_nspca(V, 3, max_candidates=cells - 1)
    assert lowrank_nspca(V, 3, max_candidates=cells).variance == pytest.approx(brute_opt_lowrank(V, 3)[0], rel=REL)
    monkeypatch.setattr(spannogram.budget, "MAX_CANDIDATES", cells - 1)  # the module value is what fit uses
    with pytest.raises(InputError, match="more than `max_candidates`"):
        lowrank_nspca(V, 3)
    with pytest.raises(InputError, match=r"`max_candidates` must be an int >= 1; got 0"):
        lowrank_nspca(V, 3, max_candidates=0)
    # duplicates and zero rows are factored out first: the budget counts distinct rows
    W = np.vstack([V, V, np.zeros((5, 4))])
    assert lowrank_nspca(W, 3, max_candidates=cells).info["candidates"] > 0
    # d <= 3 is never refused (sweeps and pruned searches)
    assert lowrank_nspca(np.random.default_rng(3).standard_normal((300, 3)), 5, max_candidates=1).x.size == 300


def test_auto_on_low_rank_data_skips_an_exact_enumeration_over_budget():
    """"auto" uses the exact spannogram when the data's rank is at most d; at rank 4 on many
    features that enumeration is over budget, so auto runs its usual starts instead of raising."""
    from nspca_core import fit

    X = np.random.default_rng(4).standard_normal((5, 80))
    X -= X.mean(axis=0)  # rank 4
    r = fit(X, k=5, d=4, certify=False)
    assert r.info["exact"] is False and np.count_nonzero(r.x) <= 5
    small = fit(X[:, :8], k=3, d=4, certify=False)  # C(9, 4) vertices: the exact answer
    assert small.info["exact"] is True
