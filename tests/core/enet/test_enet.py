"""ε-net (Alg. 3): guarantee against brute force, path = single solves, determinism, feasibility."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from nspca_core import InputError, enet_nspca, enet_path, enet_samples, rank1_nspca
from nspca_core._common.rank1 import topk_support
from tests.bruteforce import brute_opt_lowrank


def _random_V(rng, n, d, degenerate=False):
    V = rng.standard_normal((n, d))
    if degenerate and n >= 3:
        V[1] = 0.0  # zero row
        V[2] = V[0]  # duplicated row
        if n >= 4:
            V[3] = -2.0 * V[0]  # a (negative) multiple
    return V


def _reference(V, k, C):
    """Obviously-correct Alg. 3: a Python loop over samples and signs, best by ||V^T x||^2."""
    best = -1.0
    for c in C:
        v = V @ (c / np.linalg.norm(c))
        for sign in (1.0, -1.0):
            idx = topk_support(sign * v, k)
            w = sign * v[idx]
            if w @ w == 0:
                continue
            x = np.zeros(V.shape[0])
            x[idx] = w / np.linalg.norm(w)
            best = max(best, float(np.sum((V.T @ x) ** 2)))
    return best


# ----------------------------------------------------------------------------- sample count
@pytest.mark.parametrize("d, eps, n", [(1, 0.1, 50), (2, 0.1, 361), (3, 0.1, 361), (3, 0.05, 12582),
                                       (4, 0.2, 100), (3, 0.5, 2)])
def test_enet_samples_is_the_exact_count(d, eps, n):
    N = enet_samples(d, eps, n)
    if d == 1:
        assert N == 1  # c = ±1: the rank-1 problem is the whole problem
        return
    # p = P[(c^T u)^2 >= 1 - eps] for a uniform unit c, estimated independently by Monte Carlo
    rng = np.random.default_rng(0)
    c = rng.standard_normal((400_000, d))
    p_mc = np.mean(c[:, 0] ** 2 / np.sum(c * c, axis=1) >= 1 - eps)
    # N is the least count with (1 - p)^N <= 1/n
    assert (1 - p_mc) ** (N * 1.02) <= 1 / n <= (1 - p_mc) ** ((N - 1) * 0.98)


def test_enet_samples_monotone():
    assert enet_samples(3, 0.1, 361) < enet_samples(3, 0.1, 12582)
    assert enet_samples(3, 0.1, 361) < enet_samples(3, 0.05, 361)
    assert enet_samples(2, 0.1, 361) < enet_samples(3, 0.1, 361) < enet_samples(4, 0.1, 361)
    # within the paper's order O(eps^-d log n)
    for d in (2, 3, 4):
        assert enet_samples(d, 0.1, 1000) <= 0.1 ** -d * math.log(1000)


@pytest.mark.parametrize("args, msg", [((3, 0.0, 10), r"`eps` must be a float in \(0, 1\); got 0.0"),
                                       ((3, 1, 10), "got 1"), ((0, 0.1, 10), r"`d` must be an int"),
                                       ((3, 0.1, 0), r"`n` must be an int >= 1; got 0")])
def test_enet_samples_validation(args, msg):
    with pytest.raises(InputError, match=msg):
        enet_samples(*args)


# ----------------------------------------------------------------------------- guarantee
def test_enet_within_eps_of_brute_force():
    rng = np.random.default_rng(1)
    eps = 0.1
    for trial in range(120):
        n = int(rng.integers(1, 8))
        d = int(rng.integers(1, 4))
        V = _random_V(rng, n, d, degenerate=trial % 3 == 0)
        k = int(rng.integers(1, n + 1))
        # 600 directions: a sample misses the (1-eps) cap with probability <= (1-0.05)^600 < 1e-13
        r = enet_nspca(V, k, eps=eps, random_state=trial, samples=600)
        opt, _ = brute_opt_lowrank(V, k)
        assert r.variance >= (1 - eps) * opt - 1e-12
        assert r.variance <= opt + 1e-9 * max(1.0, opt)


def test_enet_matches_loop_reference_and_path_matches_single():
    rng = np.random.default_rng(2)
    for trial in range(60):
        n = int(rng.integers(1, 9))
        d = int(rng.integers(1, 4))
        V = _random_V(rng, n, d, degenerate=trial % 2 == 0)
        C = rng.standard_normal((int(rng.integers(1, 40)), d))
        ks = list(range(1, n + 1))
        path = enet_path(V, ks, samples=C)
        for k, rp in zip(ks, path):
            ref = _reference(V, k, C)
            rs = enet_nspca(V, k, samples=C)
            if ref < 0:  # every candidate vanished: both fall back to a feasible point
                continue
            assert rs.variance == pytest.approx(ref, rel=1e-10, abs=1e-12)
            assert rp.variance == pytest.approx(ref, rel=1e-10, abs=1e-12)
            assert rp.params["k"] == k


def test_enet_path_equals_single_with_seed_on_general_position():
    rng = np.random.default_rng(3)
    V = rng.standard_normal((40, 3))
    ks = [1, 5, 17, 40, 5]
    path = enet_path(V, ks, eps=0.2, random_state=11)
    assert len(path) == len(ks)
    for k, rp in zip(ks, path):
        rs = enet_nspca(V, k, eps=0.2, random_state=11)
        assert np.array_equal(rs.support, rp.support)
        assert np.allclose(rs.x, rp.x, atol=1e-14)
        assert rp.info["samples"] == enet_samples(3, 0.2, 40)


def test_enet_exact_for_d1():
    rng = np.random.default_rng(4)
    v = rng.standard_normal(9)
    for k in range(1, 10):
        r = enet_nspca(v[:, None], k)
        x = rank1_nspca(v, k)
        assert r.variance == pytest.approx((v @ x) ** 2, rel=1e-12)


def test_enet_zero_V_returns_feasible_point():
    r = enet_nspca(np.zeros((5, 2)), 3, samples=10)
    assert r.variance == 0.0 and np.isclose(np.linalg.norm(r.x), 1.0) and r.x.min() >= 0
    p = enet_path(np.zeros((5, 2)), [1, 3], samples=10)
    assert all(np.isclose(np.linalg.norm(q.x), 1.0) for q in p)


# ----------------------------------------------------------------------------- determinism, callbacks
def test_same_seed_same_output_and_generator_seed():
    V = np.random.default_rng(5).standard_normal((30, 3))
    a, b = enet_nspca(V, 4, random_state=7), enet_nspca(V, 4, seed=7)
    assert np.array_equal(a.x, b.x) and a.info["best_sample"] == b.info["best_sample"]
    g1, g2 = np.random.default_rng(9), np.random.default_rng(9)
    assert np.array_equal(enet_nspca(V, 4, random_state=g1).x, enet_nspca(V, 4, seed=g2).x)
    p1, p2 = enet_path(V, [2, 9], random_state=3), enet_path(V, [2, 9], seed=3)
    assert all(np.array_equal(x.x, y.x) for x, y in zip(p1, p2))


def test_chunking_does_not_change_the_answer(monkeypatch):
    import nspca_core.enet as enet

    V = np.random.default_rng(6).standard_normal((50, 3))
    full = enet_nspca(V, 6, samples=300), enet_path(V, [3, 6, 50], samples=300)
    monkeypatch.setattr(enet, "_CHUNK_BYTES", 8 * 50 * 5 * 3 * 7)  # 7 samples per chunk
    small = enet_nspca(V, 6, samples=300), enet_path(V, [3, 6, 50], samples=300)
    assert np.array_equal(full[0].x, small[0].x)
    assert all(np.array_equal(x.x, y.x) for x, y in zip(full[1], small[1]))


def test_callback_reports_progress(monkeypatch):
    import nspca_core.enet as enet

    monkeypatch.setattr(enet, "_CHUNK_BYTES", 8 * 20 * 5 * 3 * 10)
    calls = []
    enet_path(np.random.default_rng(0).standard_normal((20, 3)), [2, 4], samples=35,
              callback=lambda done, total: calls.append((done, total)))
    assert calls[-1] == (35, 35) and len(calls) == 4
    assert all(b == 35 for _, b in calls) and [a for a, _ in calls] == sorted(a for a, _ in calls)


# ----------------------------------------------------------------------------- properties
@settings(max_examples=80, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 12), st.integers(1, 4)),
              elements=st.floats(-100, 100, allow_subnormal=False)), st.data())
def test_feasibility_property(V, data):
    n = V.shape[0]
    k = data.draw(st.integers(1, n))
    for r in (enet_nspca(V, k, samples=20, random_state=1), enet_path(V, [k, n], samples=20, seed=1)[0]):
        assert r.x.shape == (n,) and r.x.min() >= 0
        assert np.count_nonzero(r.x) <= k and np.array_equal(r.support, np.flatnonzero(r.x))
        assert np.isclose(np.linalg.norm(r.x), 1.0)
        assert r.variance == pytest.approx(float(np.sum((V.T @ r.x) ** 2)), rel=1e-9, abs=1e-9)
        assert r.method == "enet"


# ----------------------------------------------------------------------------- validation
@pytest.mark.parametrize("kwargs, msg", [
    (dict(k=0), r"`k` must be an int in \[1, n_features=6\]; got 0"),
    (dict(k=2, eps=1.5), r"`eps` must be a float in \(0, 1\); got 1.5"),
    (dict(k=2, samples=0), r"`samples` must be an int >= 1; got 0"),
    (dict(k=2, samples=np.ones((4, 3))), r"`samples` must be an int >= 1 or an array .* got shape \(4, 3\)"),
    (dict(k=2, samples=np.zeros((4, 2))), "`samples` directions must be nonzero"),
    (dict(k=2, seed="a"), "`seed` must be None, an int >= 0, a numpy RandomState or Generator"),
    (dict(k=2, callback=3), "`callback` must be callable"),
])
def test_enet_validation(kwargs, msg):
    with pytest.raises(InputError, match=msg):
        enet_nspca(np.ones((6, 2)), **kwargs)


@pytest.mark.parametrize("ks, msg", [([], r"`ks` must be a non-empty sequence"),
                                     ([1, 7], r"`ks` must hold ints in \[1, n_features=6\]; got 7"),
                                     ([1.5], "`ks` must hold ints")])
def test_enet_path_validation(ks, msg):
    with pytest.raises(ValueError, match=msg):
        enet_path(np.ones((6, 2)), ks)


def test_enet_rejects_nonfinite_V():
    with pytest.raises(InputError, match="`V` must be finite"):
        enet_nspca(np.array([[1.0, np.nan]]), 1)


# ----------------------------------------------------------------------------- integration
def test_enet_close_to_exact_spannogram_on_cbcl(cbcl_X):
    spannogram = pytest.importorskip("nspca_core.spannogram")
    from nspca_core import lowrank_factor

    V, _ = lowrank_factor(cbcl_X, d=2)
    ks = [10, 60, 180]
    path = enet_path(V, ks, eps=0.1, random_state=0, samples=2000)
    for k, r in zip(ks, path):
        exact = spannogram.lowrank_nspca(V, k)
        assert (1 - 0.1) * exact.variance_lowrank <= r.variance_lowrank <= exact.variance_lowrank * (1 + 1e-9)


def test_path_is_a_lazy_sequence_of_results():
    from collections.abc import Sequence

    from nspca_core.enet import enet_path

    rng = np.random.default_rng(5)
    V = rng.standard_normal((40, 3))
    ks = [5, 1, 40, 5, 17]
    path = enet_path(V, ks, eps=0.2, random_state=3)
    assert isinstance(path, Sequence) and len(path) == len(ks)
    assert list(path.ks) == ks
    built = list(path)
    assert [r.params["k"] for r in built] == ks
    assert np.allclose(path.values, [r.variance_lowrank for r in built])
    assert [r.params["k"] for r in path[1:4]] == ks[1:4]
    assert np.array_equal(path[-1].x, built[-1].x)
    for r in built:
        assert r.x.min() >= 0 and np.count_nonzero(r.x) <= r.params["k"]
        assert np.isclose(np.linalg.norm(r.x), 1.0)
        assert np.isclose(np.sum((V.T @ r.x) ** 2), r.variance_lowrank)


# ----------------------------------------------------------------------------- bounded memory, cap
def test_batches_draw_the_same_directions_as_one_draw(monkeypatch):
    import nspca_core.enet as enet

    V = np.random.default_rng(2).standard_normal((9, 4))
    C = np.random.default_rng(5).standard_normal((1000, 4))
    C /= np.linalg.norm(C, axis=1, keepdims=True)  # what drawing all directions at once gave
    dirs = enet.enet_directions(V, 0.1, 5, 1000)
    for size in (1, 7, 1000, 5000):
        rows = np.concatenate([Cb for _, Cb in dirs.batches(size)])
        assert np.array_equal(rows, C)  # every pass, every batch size
    g = np.random.default_rng(5)
    enet.enet_directions(V, 0.1, g, 1000)  # a caller's generator is advanced as by one draw of all
    ref = np.random.default_rng(5)
    ref.standard_normal((1000, 4))
    assert g.random() == ref.random()


def test_directions_are_never_all_in_memory(monkeypatch):
    import tracemalloc

    import nspca_core.enet as enet

    n, d, N = 20, 3, 200_000
    V = np.random.default_rng(3).standard_normal((n, d))
    monkeypatch.setattr(enet, "_CHUNK_BYTES", 8 * n * (d + 2) * 3 * 100)  # 100 directions per batch
    all_at_once = N * d * 8  # 4.8 MB: the old (N, d) array, plus (N, 2) scores for enet_nspca
    for run in (lambda: enet_nspca(V, 4, samples=N), lambda: enet_path(V, [2, 4, 20], samples=N),
                lambda: enet.enet_top(V, 4, enet.enet_directions(V, 0.1, 0, N), 5)):
        tracemalloc.start()
        run()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < all_at_once / 4, peak


def test_same_answers_in_small_batches_for_top_candidates(monkeypatch):
    import nspca_core.enet as enet

    V = np.random.default_rng(8).standard_normal((12, 3))
    V[3] = V[0]  # duplicated supports among candidates
    C = enet.enet_directions(V, 0.1, 4, 400)
    full = enet.enet_top(V, 3, C, 6)
    # the obvious reference: all 2N candidates sorted by score, distinct supports in order
    rows = np.concatenate([Cb for _, Cb in C.batches(400)])
    cands = []
    for j, c in enumerate(rows):
        for s, sign in enumerate((1.0, -1.0)):
            x = enet._candidate(V, 3, c, sign)
            if x is not None:
                cands.append((-float(np.sum((V.T @ x) ** 2)), 2 * j + s, x))
    ref, seen = [], set()
    for _, _, x in sorted(cands, key=lambda t: (t[0], t[1])):
        key = np.flatnonzero(x).tobytes()
        if key not in seen and len(ref) < 6:
            seen.add(key)
            ref.append(x)
    assert len(full) == len(ref) == 6
    assert all(np.array_equal(np.flatnonzero(a), np.flatnonzero(b)) for a, b in zip(full, ref))
    monkeypatch.setattr(enet, "_CHUNK_BYTES", 8 * 12 * 5 * 3 * 3)  # 3 directions per batch
    small = enet.enet_top(V, 3, C, 6)
    assert all(np.array_equal(a, b) for a, b in zip(full, small))


def test_counts_past_the_cap_are_refused_with_count_and_time(monkeypatch):
    import nspca_core.enet as enet

    V = np.random.default_rng(4).standard_normal((30, 3))
    with pytest.raises(InputError, match=r"the ε-net would draw `samples`=101, more than `max_samples` = 100: "
                                         r"about \S+ (s|minutes|hours|days) at \S+ µs per direction \(timed on "
                                         r"101 directions just now\)"):
        enet_nspca(V, 3, samples=101, max_samples=100)
    with pytest.raises(InputError, match=r"enet_samples\(d=3, eps=0.001, n=30\) = 6,799 random directions, "
                                         r"more than `max_samples` = 1,000"):
        enet_path(V, [2, 3], eps=0.001, max_samples=1000)
    monkeypatch.setattr(enet, "MAX_SAMPLES", 50)  # the module default is what fit uses
    with pytest.raises(InputError, match="more than `max_samples` = 50"):
        enet_nspca(V, 3, samples=51)
    assert enet_nspca(V, 3, samples=50).info["samples"] == 50
    with pytest.raises(InputError, match=r"`max_samples` must be an int >= 1; got 0"):
        enet_nspca(V, 3, max_samples=0)


def test_fit_enet_d5_eps_1e4_is_refused_up_front():
    """The issue's case: 10^9 directions (> 8 GB at once before); refused before drawing any."""
    from nspca_core import fit

    X = np.random.default_rng(0).standard_normal((40, 361))
    with pytest.raises(InputError, match=r"enet_samples\(d=5, eps=0.0001, n=361\) = 1,570,315,106 random "
                                         r"directions, more than `max_samples` = 10,000,000: about"):
        fit(X, k=10, method="enet", d=5, eps=1e-4)


@pytest.mark.parametrize("c", [2.0 ** -900, 1e-150, 1e-80, 1e80, 1e150, 2.0 ** 900])
def test_enet_is_scale_free(c):
    V = np.random.default_rng(12).standard_normal((25, 3))
    base, path = enet_nspca(V, 5, random_state=2), enet_path(V, [2, 5], seed=2)
    r, p = enet_nspca(V * c, 5, random_state=2), enet_path(V * c, [2, 5], seed=2)
    assert np.array_equal(r.support, base.support) and np.allclose(r.x, base.x, rtol=1e-12, atol=0)
    assert all(np.array_equal(a.support, b.support) for a, b in zip(p, path))
    if 1e-300 < c * c < 1e300:  # the values themselves are representable
        assert p.values / (c * c) == pytest.approx(path.values, rel=1e-12)
        assert r.variance / (c * c) == pytest.approx(base.variance, rel=1e-12)


# ----------------------------------------------------------------------------- issue 31 item 7: a cap on work

def test_the_issue_case_is_refused_by_its_estimated_time():
    """``fit(randn(150, 50), k=5, d=4, eps=1e-4, method="enet")`` drew 9.2 M directions (under the
    count cap) and ran for minutes: the cap now counts work, n (d + 2) per direction."""
    from nspca_core import fit

    X = np.random.default_rng(0).standard_normal((150, 50))
    with pytest.raises(InputError, match=r"the ε-net would draw enet_samples\(d=4, eps=0.0001, n=50\) = 9,217,209 "
                                         r"random directions on n = 50 features at d = 4: about 87.6 s estimated "
                                         r"\(9,217,209 × \(2 µs \+ 25 ns × n \(d \+ 2\)\); memory stays bounded\), "
                                         r"more than `max_seconds` = 60 s. Use a larger `eps` or a smaller `d`, "
                                         r"pass a smaller `samples`, or raise `max_seconds`"):
        fit(X, k=5, d=4, eps=1e-4, method="enet")


def test_time_cap_keyword_path_and_module_default(monkeypatch):
    import nspca_core.enet as enet

    V = np.random.default_rng(5).standard_normal((40, 3))
    est = enet.enet_seconds(40, 3, 5000)
    assert est == pytest.approx(5000 * (2e-6 + 25e-9 * 40 * 5))
    with pytest.raises(InputError, match=r"`samples`=5,000 directions on n = 40 features at d = 3: about .* more "
                                         r"than `max_seconds` = 0.01 s"):
        enet_nspca(V, 3, samples=5000, max_seconds=0.01)
    assert enet_nspca(V, 3, samples=5000, max_seconds=est * 1.01).info["samples"] == 5000
    path_est = enet.enet_seconds(40, 3, 5000, path=True)
    assert path_est > est
    with pytest.raises(InputError, match=r"35 ns × n \(d \+ 2 \+ log2 n\)"):
        enet_path(V, [2, 3], samples=5000, max_seconds=(est + path_est) / 2)
    assert len(enet_path(V, [2, 3], samples=5000, max_seconds=path_est * 1.01)) == 2
    monkeypatch.setattr(enet, "MAX_SECONDS", est / 2)  # the module value is what fit uses
    with pytest.raises(InputError, match="more than `max_seconds`"):
        enet_nspca(V, 3, samples=5000)
    for bad in (0, -1.0, float("inf"), float("nan"), "10", True):
        with pytest.raises(InputError, match=r"`max_seconds` must be a positive number of seconds or None; got"):
            enet_nspca(V, 3, samples=10, max_seconds=bad)
    # explicit directions are the caller's own: never capped
    C = np.random.default_rng(1).standard_normal((5000, 3))
    assert enet_nspca(V, 3, samples=C, max_seconds=1e-9).info["samples"] == 5000


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 10 ** 5), st.integers(1, 10 ** 4), st.integers(1, 8), st.integers(1, 10 ** 7))
def test_estimated_time_grows_with_work(n, d_extra, d, N):
    """Work, not count: the same count costs more on more features or a larger d."""
    from nspca_core.enet import enet_seconds

    base = enet_seconds(n, d, N)
    assert enet_seconds(n + d_extra, d, N) > base and enet_seconds(n, d + 1, N) > base
    assert enet_seconds(n, d, N + 1) > base and enet_seconds(n, d, N, path=True) >= base
