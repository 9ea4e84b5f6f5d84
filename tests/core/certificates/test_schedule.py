"""The core's schedule of tightening (nspca_core/certificates/schedule.py), tested without Streamlit.

The store of proved bounds keeps, per (data key, k), the smallest upper bound and the best feasible
point ever offered, and reads through the monotone envelope; checked against a brute force written
here (min over stored k' >= k, max over stored k' <= k), under concurrent offers, and with data keys
kept apart.  The plan: on gene data a "full" certificate costs seconds at small k and at the largest
k, and over a minute in between, where the bound is often what the relaxation proves at the largest k
anyway ("flat"): the plan takes the cheapest k first with a short cap, then the largest k, proofs
where cheap next, then a second pass with the long cap where the first timed out, the flat k last.
Checked on the band of MLL's axis, on dense data (where the order stays loosest first), and as
hypothesis properties against a reference written here.  (Moved from tests/app/test_bounds_store.py
and tests/app/test_tighten_order.py with the code, unchanged but for the keys: plain tuples here.)
"""

from __future__ import annotations

import subprocess
import sys
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from nspca_core.certificates import schedule as sch
from nspca_core.certificates._settings import EFFORTS, EXACT_EFFORT

A = ("0123456789abcdef", "center")
B = ("0123456789abcdef", "standardize")  # same matrix digest, other preprocessing
C = ("fedcba9876543210", "center")


def point(n: int, support, values) -> np.ndarray:
    x = np.zeros(n)
    x[list(support)] = values
    return x


def test_no_streamlit_in_the_schedule():
    code = ("import sys, nspca_core.certificates.schedule; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('streamlit', 'ui', 'plotly')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_every_effort_has_a_rank_exact_the_most_thorough():
    assert set(sch.EFFORT_RANK) == set(EFFORTS) | {EXACT_EFFORT}
    assert max(sch.EFFORT_RANK, key=sch.EFFORT_RANK.get) == EXACT_EFFORT
    assert sch.EFFORT_RANK["fast"] < sch.EFFORT_RANK["auto"] < sch.EFFORT_RANK["full"]


def test_a_store_with_a_key_type_refuses_other_keys():
    class Typed(sch.BoundsStore):
        key_type = tuple

    with pytest.raises(TypeError, match="`data` must be a tuple; got str"):
        Typed().offer("digits", 3, upper=1.0)
    assert sch.BoundsStore().offer("any hashable", 3, upper=1.0)  # the core's own store takes any key
    with pytest.raises(ValueError, match="a feasible point at k = 2 has at most 2 nonzeros; got 3"):
        sch.BoundsStore().offer(A, 2, lower=1.0, x=np.ones(3) / np.sqrt(3))


# ------------------------------------------------------------------ keeps the best
def test_keeps_smallest_bound_and_best_point():
    s = sch.BoundsStore()
    x1 = point(6, [0, 1], [0.6, 0.8])
    x2 = point(6, [2, 3], [0.8, 0.6])
    assert s.offer(A, 2, upper=5.0, lower=3.0, x=x1, kind="dnn", effort="fast")
    assert not s.offer(A, 2, upper=6.0, lower=2.0, x=x2, kind="lambda1", effort="auto")  # both worse
    b = s.get(A, 2)
    assert (b.upper, b.kind, b.upper_effort, b.lower) == (5.0, "dnn", "fast", 3.0)
    np.testing.assert_array_equal(b.x(), x1)
    assert b.efforts == {"fast", "auto"}  # a worse answer still records that the effort ran
    assert s.offer(A, 2, upper=4.0, lower=np.nan, kind="anchored", effort="full")  # a better bound only
    assert s.offer(A, 2, lower=3.5, x=x2)  # a better point only
    b = s.get(A, 2)
    assert (b.upper, b.kind, b.lower) == (4.0, "anchored", 3.5)
    np.testing.assert_array_equal(b.x(), x2)
    assert b.ratio == pytest.approx(3.5 / 4.0)


@settings(max_examples=60, deadline=None)
@given(hs.lists(hs.tuples(hs.integers(1, 6), hs.floats(1, 100), hs.floats(0, 1)), min_size=1, max_size=25))
def test_store_equals_min_and_max_of_everything_offered(offers):
    """Any order of offers: the stored bound is the minimum offered, the point the best (brute force)."""
    s = sch.BoundsStore()
    for k, up, frac in offers:
        s.offer(A, k, upper=up, lower=up * frac * 0.5)
    for k in {k for k, _, _ in offers}:
        mine = [(u, u * f * 0.5) for kk, u, f in offers if kk == k]
        b = s.get(A, k)
        assert b.upper == min(u for u, _ in mine)
        assert b.lower == max(lo for _, lo in mine)


@settings(max_examples=60, deadline=None)
@given(hs.dictionaries(hs.integers(1, 12), hs.tuples(hs.floats(1, 100), hs.floats(0, 1)), min_size=1, max_size=10),
       hs.lists(hs.integers(1, 14), min_size=1, max_size=8))
def test_band_is_the_monotone_envelope_brute_force(stored, ks):
    """At each k: the smallest bound stored at any k' >= k, the best value at any k' <= k, and
    which k proved each (-1: none) — against a brute force over the stored k."""
    s = sch.BoundsStore()
    for k, (up, frac) in stored.items():
        s.offer(A, k, upper=up, lower=up * frac, kind=f"kind{k}")
    band = s.band(A, ks)
    for j, k in enumerate(ks):
        ups = [(u, kk) for kk, (u, _) in stored.items() if kk >= k]
        los = [(u * f, kk) for kk, (u, f) in stored.items() if kk <= k]
        if ups:
            u = min(v for v, _ in ups)
            assert band["upper"][j] == u
            assert stored[band["upper_from"][j]][0] == u and band["upper_from"][j] >= k
            assert band["kind"][j] == f"kind{band['upper_from'][j]}"
        else:
            assert band["upper"][j] == np.inf and band["upper_from"][j] == -1 and band["kind"][j] == ""
        if los:
            lo = max(v for v, _ in los)
            assert band["lower"][j] == lo and band["lower_from"][j] <= k
        else:
            assert band["lower"][j] == -np.inf and band["lower_from"][j] == -1
        if ups and los:
            assert band["ratio"][j] == pytest.approx(band["lower"][j] / band["upper"][j])
        else:
            assert np.isnan(band["ratio"][j])


def test_a_bound_at_larger_k_tightens_smaller_k_and_a_point_at_smaller_k_serves_larger():
    s = sch.BoundsStore()
    x3 = point(8, [0, 1, 2], [0.6, 0.0, 0.8])  # two nonzeros: feasible at k = 3 and above
    s.offer(A, 10, upper=4.0, kind="full")
    s.offer(A, 5, upper=9.0, lower=2.0, kind="fast")
    s.offer(A, 3, upper=8.0, lower=3.0, x=x3)
    at5 = s.at(A, 5)
    assert at5["upper"] == 4.0 and at5["upper_from"] == 10 and at5["kind"] == "full"
    assert at5["lower"] == 3.0 and at5["lower_from"] == 3
    np.testing.assert_array_equal(at5["x"], x3)
    assert s.best_x(A, 2) is None  # the point at k = 3 is not feasible at k = 2


def test_optimal_when_proved_or_when_the_envelope_closes_the_gap():
    s = sch.BoundsStore()
    s.offer(A, 4, upper=10.0, lower=9.0, optimal=False)
    assert not s.at(A, 4)["optimal"]
    s.offer(A, 6, upper=9.0 * (1 + 1e-7))  # a bound at larger k closes the gap at k = 4
    assert s.at(A, 4)["optimal"] and not s.get(A, 4).optimal
    s.offer(A, 2, upper=5.0, lower=1.0, optimal=True)  # the certificate says so (its own lower/upper)
    assert s.get(A, 2).optimal and s.at(A, 2)["optimal"]
    assert sch.closed(1.0, 1.0) and not sch.closed(1.0, 1.001) and not sch.closed(-np.inf, 1.0)


def test_version_grows_only_with_an_improvement():
    s = sch.BoundsStore()
    v0 = s.version(A)
    s.offer(A, 3, upper=5.0)
    s.offer(A, 3, upper=6.0)
    s.offer(A, 3, upper=5.0)
    assert s.version(A) == v0 + 1


def test_ran_knows_efforts_and_exact_time_limits():
    s = sch.BoundsStore()
    assert not s.ran(A, 3, "fast")
    s.offer(A, 3, upper=5.0, effort="auto")
    assert s.ran(A, 3, "fast") and s.ran(A, 3, "auto") and not s.ran(A, 3, "full")
    s.offer(A, 3, upper=5.0, effort="exact", time_limit=10)
    assert s.ran(A, 3, "full") and s.ran(A, 3, "exact", 10) and not s.ran(A, 3, "exact", 60)


def test_datasets_and_preprocessings_are_kept_apart():
    s = sch.BoundsStore()
    s.offer(A, 3, upper=5.0, lower=1.0)
    s.offer(B, 3, upper=7.0, lower=2.0)
    s.offer(C, 3, upper=9.0, lower=3.0)
    assert [s.get(d, 3).upper for d in (A, B, C)] == [5.0, 7.0, 9.0]
    assert s.get(("0123456789abcdef", "none"), 3) is None
    assert s.forget(B) and s.get(B, 3) is None and s.get(A, 3).upper == 5.0


def test_least_recently_used_datasets_are_dropped():
    s = sch.BoundsStore(max_datasets=2)
    s.offer(A, 1, upper=1.0)
    s.offer(B, 1, upper=1.0)
    s.get(A, 1)  # reading does not refresh; offering does
    s.offer(A, 2, upper=1.0)
    s.offer(C, 1, upper=1.0)
    assert s.known(B) == {} and s.get(A, 1) is not None and s.get(C, 1) is not None


# ------------------------------------------------------------------ thread safety
def test_concurrent_offers_end_in_the_sequential_state():
    """8 threads offer 400 random bounds and points each, interleaved: the end state is the
    minimum / maximum of all of them (no lost update), whatever the order."""
    rng = np.random.default_rng(0)
    offers = [(int(k), float(u), float(f)) for k, u, f in
              zip(rng.integers(1, 20, 3200), rng.uniform(1, 100, 3200), rng.uniform(0, 1, 3200))]
    s = sch.BoundsStore()
    barrier = threading.Barrier(8)

    def run(part):
        barrier.wait()
        for k, u, f in part:
            x = point(30, range(k), np.full(k, 1 / np.sqrt(k)))
            s.offer(A, k, upper=u, lower=u * f, x=x)
            s.band(A, [1, 5, 10])  # readers at the same time

    threads = [threading.Thread(target=run, args=(offers[i::8],)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in {k for k, _, _ in offers}:
        mine = [(u, u * f) for kk, u, f in offers if kk == k]
        b = s.get(A, k)
        assert b.upper == min(u for u, _ in mine) and b.lower == max(lo for _, lo in mine)
        assert b.support.size == k


# ------------------------------------------------------------------ the plan
MLL_KS = (1, 4, 10, 57, 220, 848, 1798, 3266, 3596, 5393, 7190, 8987, 9886, 10785, 12582)


def _split_size(n: int, k: int) -> int:
    """The "full" DNN's size, written out from the core's docstring: n up to 2500, else max(300, 12 k)
    <= 2500 ("full" keeps 12 k features per unit of sparsity; "auto" takes 6 k)."""
    return n if n <= 2500 else min(max(300, 12 * k), 2500)


def _firsts(plan):
    return [u for u in plan if u[0] == "full" and len(u) == 2]


def _longs(plan):
    return [u for u in plan if u[0] == "full" and len(u) == 3]


# ------------------------------------------------------------------ the plan on gene data and on dense data
def test_gene_data_cheapest_k_first_then_the_largest_flat_k_last():
    # the band of MLL's axis after its first pass: small k nearly certified, k >= 848 flat at the bound of
    # k = 12,582 (the relaxation's limit), k = 220 the loosest but costly
    upper = np.array([0.027, 0.058, 0.103, 0.263, 0.683, 0.68775, 0.68782, 0.68792, 0.68793, 0.68794, 0.68794,
                      0.68795, 0.68795, 0.68795, 0.68795])
    ratio = np.array([1.0, 0.981, 0.979, 0.94, 0.57, 0.767, 0.873, 0.912, 0.915, 0.92, 0.92, 0.92, 0.92, 0.92,
                      0.92])
    plan = sch.tighten_plan(MLL_KS, upper, ratio, 12582)
    # the cheapest (300^2 for k <= 25) loosest first, then the largest k (its bound serves the flat
    # ones), then by cost
    assert [u[1] for u in _firsts(plan)] == [10, 4, 1, 12582, 57, 220]
    flat = [k for k, f in zip(MLL_KS, sch.flat_bounds(MLL_KS, upper)) if f]
    assert flat == [848, 1798, 3266, 3596, 5393, 7190, 8987, 9886, 10785, 12582]
    # second pass: the others loosest first, then the flat ones loosest first (ties: smaller k first)
    assert [u[1] for u in _longs(plan)] == [220, 12582, 57, 10, 4, 1, 848, 1798, 3266, 3596, 5393, 7190, 8987,
                                            9886, 10785]
    assert [u[1] for u in plan if u[0] == "exact"] == [4, 1]  # k <= 5 on any data
    kinds = [("full1" if len(u) == 2 else "full2") if u[0] == "full" else "exact" for u in plan]
    assert kinds == sorted(kinds, key=["full1", "exact", "full2"].index)


def test_dense_data_keeps_loosest_first():
    ks = (1, 2, 5, 10, 29, 52, 67, 104)
    ratio = np.array([1.0, 0.99, 0.975, 0.974, 0.98, 0.985, 0.99, 0.995])
    upper = np.array([1.0, 1.5, 2.0, 2.5, 3.0, 5.0, 5.0, 5.0])  # 52 and 67 flat: on dense data they do not wait
    plan = sch.tighten_plan(ks, upper, ratio, 361)
    assert [u[1] for u in _firsts(plan)] == [10, 5, 29, 52, 2, 67, 104, 1]  # loosest first (equal costs)
    assert [u[1] for u in _longs(plan)] == [10, 5, 29, 52, 2, 67, 104, 1]


def test_no_bound_yet_counts_as_the_loosest_and_is_not_flat():
    ks = (3, 40, 400)
    upper = np.array([np.nan, 2.0, 2.0])
    ratio = np.array([np.nan, 0.9, 0.8])
    assert sch.flat_bounds(ks, upper).tolist() == [False, True, True]
    plan = sch.tighten_plan(ks, upper, ratio, 20000)  # large n: the flat k waits
    assert _firsts(plan) == [("full", 3), ("full", 400)]  # 40 is flat (its bound is the one at 400)
    assert [u[1] for u in _longs(plan)] == [3, 400, 40]
    # nothing known at the largest k: only it is flat
    assert sch.flat_bounds(ks, [1.0, 1.0, np.inf]).tolist() == [False, False, True]
    assert sch.tighten_plan([], [], [], 10) == []


def test_full_cost_follows_the_size_of_the_dnn():
    for n, k in [(64, 3), (361, 300), (2500, 1), (12582, 1), (12582, 25), (12582, 26), (12582, 208),
                 (12582, 209), (7000, 7000), (2600, 2600)]:
        assert sch.full_cost(n, k) == float(_split_size(n, k)) ** 2


@settings(max_examples=150, deadline=None)
@given(n=hs.sampled_from([30, 361, 3000, 12582]), data=hs.data())
def test_plan_properties(n, data):
    ks = sorted(data.draw(hs.sets(hs.integers(1, n), min_size=1, max_size=12)))
    raw = data.draw(hs.lists(hs.floats(0.1, 10.0), min_size=len(ks), max_size=len(ks)))
    upper = np.maximum.accumulate(np.array(raw))  # the monotone envelope is nondecreasing in k
    for i in data.draw(hs.sets(hs.integers(0, len(ks) - 1), max_size=min(2, len(ks) - 1))):
        upper[i] = np.nan  # no bound yet at some k
    ratio = np.array(data.draw(hs.lists(hs.one_of(hs.floats(0.3, 1.0), hs.just(np.nan)), min_size=len(ks),
                                        max_size=len(ks))))
    plan = sch.tighten_plan(ks, upper, ratio, n)
    assert len(set(plan)) == len(plan)
    # reference: flat = finite bound within FLAT_TOL of the bound at the largest k (or the largest k itself)
    top = upper[-1]
    flat = [bool(np.isfinite(u) and u >= (1 - sch.FLAT_TOL) * top) if np.isfinite(top) else k == ks[-1]
            for k, u in zip(ks, upper)]
    assert sch.flat_bounds(ks, upper).tolist() == flat
    if n <= 2500:  # dense data: every k costs the same, and no k waits for being flat
        flat = [False] * len(ks)
    r = np.where(np.isnan(ratio), -1.0, ratio)
    flat[-1] = False  # the largest k always has its first-pass step (its bound serves the flat ones)
    firsts, longs = _firsts(plan), _longs(plan)
    assert sorted(u[1] for u in firsts) == [k for k, f in zip(ks, flat) if not f]
    assert sorted(u[1] for u in longs) == ks  # every k gets the long pass once
    least = min(_split_size(n, k) ** 2 for k in ks)
    keys = []
    for u in firsts:
        c = _split_size(n, u[1]) ** 2
        keys.append((0 if c == least else 1 if u[1] == ks[-1] else 2, c, r[ks.index(u[1])], u[1]))
    assert keys == sorted(keys)  # the cheapest, then the largest k, then cheapest first; loosest first on ties
    order = [flat[ks.index(u[1])] for u in longs]
    assert order == sorted(order)  # flat k after the others
    for part in (False, True):
        rs = [(r[ks.index(u[1])], u[1]) for u in longs if flat[ks.index(u[1])] == part]
        assert rs == sorted(rs)
    exact = sorted((k for k in ks if sch.exact_cheap(n, k)), key=lambda k: (r[ks.index(k)], k))
    assert [u[1] for u in plan if u[0] == "exact"] == exact
    where = {u: i for i, u in enumerate(plan)}
    assert all(where[a] < where[b] for a in firsts for b in plan if b[0] == "exact")
    assert all(where[a] < where[b] for a in plan if a[0] == "exact" for b in longs)
    assert all(where[a] < where[b] for a in firsts for b in longs)
