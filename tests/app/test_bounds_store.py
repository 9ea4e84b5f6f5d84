"""The store of proved bounds (ui/bounds_store.py) and the background job that gives way (ui/jobs.py).

The store keeps, per (dataset fingerprint, preprocessing, k), the smallest upper bound and the best
feasible point ever offered, and reads through the monotone envelope; checked against a brute force
written here (min over stored k' >= k, max over stored k' <= k), under concurrent offers, and with
datasets / preprocessings kept apart.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from ui import bounds_store as bs
from ui import jobs

A = bs.DataKey("0123456789abcdef", "center")
B = bs.DataKey("0123456789abcdef", "standardize")  # same matrix digest, other preprocessing
C = bs.DataKey("fedcba9876543210", "center")


def point(n: int, support, values) -> np.ndarray:
    x = np.zeros(n)
    x[list(support)] = values
    return x


# ------------------------------------------------------------------ keeps the best
def test_keeps_smallest_bound_and_best_point():
    s = bs.BoundsStore()
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
    s = bs.BoundsStore()
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
    s = bs.BoundsStore()
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
    s = bs.BoundsStore()
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
    s = bs.BoundsStore()
    s.offer(A, 4, upper=10.0, lower=9.0, optimal=False)
    assert not s.at(A, 4)["optimal"]
    s.offer(A, 6, upper=9.0 * (1 + 1e-7))  # a bound at larger k closes the gap at k = 4
    assert s.at(A, 4)["optimal"] and not s.get(A, 4).optimal
    s.offer(A, 2, upper=5.0, lower=1.0, optimal=True)  # the certificate says so (its own lower/upper)
    assert s.get(A, 2).optimal and s.at(A, 2)["optimal"]
    assert bs.closed(1.0, 1.0) and not bs.closed(1.0, 1.001) and not bs.closed(-np.inf, 1.0)


def test_version_grows_only_with_an_improvement():
    s = bs.BoundsStore()
    v0 = s.version(A)
    s.offer(A, 3, upper=5.0)
    s.offer(A, 3, upper=6.0)
    s.offer(A, 3, upper=5.0)
    assert s.version(A) == v0 + 1


def test_ran_knows_efforts_and_exact_time_limits():
    s = bs.BoundsStore()
    assert not s.ran(A, 3, "fast")
    s.offer(A, 3, upper=5.0, effort="auto")
    assert s.ran(A, 3, "fast") and s.ran(A, 3, "auto") and not s.ran(A, 3, "full")
    s.offer(A, 3, upper=5.0, effort="exact", time_limit=10)
    assert s.ran(A, 3, "full") and s.ran(A, 3, "exact", 10) and not s.ran(A, 3, "exact", 60)


# ------------------------------------------------------------------ keys
def test_datasets_and_preprocessings_are_kept_apart():
    s = bs.BoundsStore()
    s.offer(A, 3, upper=5.0, lower=1.0)
    s.offer(B, 3, upper=7.0, lower=2.0)
    s.offer(C, 3, upper=9.0, lower=3.0)
    assert [s.get(d, 3).upper for d in (A, B, C)] == [5.0, 7.0, 9.0]
    assert s.get(bs.DataKey("0123456789abcdef", "none"), 3) is None
    assert s.forget(B) and s.get(B, 3) is None and s.get(A, 3).upper == 5.0


def test_data_key_of_a_job_key():
    assert bs.data_key("digits/center/0123456789abcdef") == A
    assert bs.data_key("my/data/name/standardize/0123456789abcdef") == B  # a name may hold '/'
    assert bs.data_key("tour/cbcl/10") is None  # the tour's picture keys name no matrix
    assert bs.data_key("digits/center/0123456789ABCDEZ") is None


def test_least_recently_used_datasets_are_dropped():
    s = bs.BoundsStore(max_datasets=2)
    s.offer(A, 1, upper=1.0)
    s.offer(B, 1, upper=1.0)
    s.get(A, 1)  # reading does not refresh; offering does
    s.offer(A, 2, upper=1.0)
    s.offer(C, 1, upper=1.0)
    assert s.known(B) == {} and s.get(A, 1) is not None and s.get(C, 1) is not None


def test_bad_offers_are_refused_with_a_message():
    s = bs.BoundsStore()
    with pytest.raises(TypeError, match="`data` must be a DataKey; got str"):
        s.offer("digits", 3, upper=1.0)
    with pytest.raises(ValueError, match="a feasible point at k = 2 has at most 2 nonzeros; got 3"):
        s.offer(A, 2, lower=1.0, x=np.ones(3) / np.sqrt(3))


def test_offer_certificate_keeps_the_bound_of_an_infeasible_point_only():
    s = bs.BoundsStore()
    cert = dict(upper=4.0, lower=3.0, kind="dnn", optimal=False, probabilistic=False, x=np.ones(5) / np.sqrt(5))
    assert bs.offer_certificate(s, "digits/center/0123456789abcdef", 2, cert, effort="fast")
    b = s.get(A, 2)
    assert b.upper == 4.0 and b.lower == -np.inf and b.support is None
    assert not bs.offer_certificate(s, "tour/cbcl/10", 2, cert)
    assert not bs.offer_certificate(s, A, 2, None)


# ------------------------------------------------------------------ thread safety
def test_concurrent_offers_end_in_the_sequential_state():
    """8 threads offer 400 random bounds and points each, interleaved: the end state is the
    minimum / maximum of all of them (no lost update), whatever the order."""
    rng = np.random.default_rng(0)
    offers = [(int(k), float(u), float(f)) for k, u, f in
              zip(rng.integers(1, 20, 3200), rng.uniform(1, 100, 3200), rng.uniform(0, 1, 3200))]
    s = bs.BoundsStore()
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


# ------------------------------------------------------------------ a background job gives way
def test_background_job_gives_the_heavy_slot_to_a_foreground_one():
    reg = jobs.Registry(max_jobs=8, idle_seconds=3600, heavy_slots=1, processes=False)
    try:
        started, log = threading.Event(), []

        def slow(unit, ctx):  # a background unit: long, reporting progress (where it can be preempted)
            log.append(("bg", unit))
            started.set()
            t0 = time.monotonic()
            while time.monotonic() - t0 < 0.5:
                ctx(0, 1)
                time.sleep(0.005)
            return unit

        bg = reg.submit("bg", "tighten", [1, 2, 3], slow, background=True)
        assert bg.heavy and bg.background
        assert started.wait(10)
        fg = reg.submit("fg", "proof", ["p"], lambda u, ctx: log.append(("fg", u)) or "done", heavy=True)
        assert fg.wait(timeout=10) and fg.view().results == {"p": "done"}
        assert bg.view().active and len(bg.view().results) < 3  # the foreground did not wait for all of it
        assert reg.wait(20, background=True)
        assert bg.view().status == "done" and bg.view().results == {1: 1, 2: 2, 3: 3}
        assert log.index(("fg", "p")) < log.index(("bg", 3))
        assert log.count(("bg", 1)) == 2  # the preempted unit was computed anew
    finally:
        reg.clear()


def test_wait_ignores_background_jobs_unless_asked_and_stop_background():
    reg = jobs.Registry(max_jobs=8, idle_seconds=3600, heavy_slots=1, processes=False)
    try:
        gate = threading.Event()

        def blocked(unit, ctx):
            while not gate.is_set():
                ctx(0, 1)
                time.sleep(0.005)
            return unit

        bg = reg.submit("bg", "tighten", [1], blocked, background=True)
        assert reg.wait(2)  # only a background job is active
        assert not reg.wait(0.2, background=True)
        assert reg.stop_background() == [bg]
        assert reg.wait(10, background=True) and bg.view().status == "stopped"
    finally:
        gate.set()
        reg.clear()
