"""The order and the caps of the band's background tightening (ui/work.py: tighten_plan, tighten_job).

On gene data a "full" certificate costs seconds at small k and at the largest k, and over a minute in
between, where the bound is often what the relaxation proves at the largest k anyway ("flat"): the plan
takes the cheapest k first with a short cap, then the largest k, proofs where cheap next, then a second
pass with the long cap where the first timed out, the flat k last.  Checked on the band of MLL's axis, on
dense data (where the order stays loosest first), as hypothesis properties against a reference written
here, and through the job itself with a stand-in for the certificate (no timing asserted: a stand-in step
either returns at once or runs until it is cut).
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

import ui.units
from ui import bounds_store as bs
from ui import jobs, work

MLL_KS = (1, 4, 10, 57, 220, 848, 1798, 3266, 3596, 5393, 7190, 8987, 9886, 10785, 12582)


def _split_size(n: int, k: int) -> int:
    """The DNN's size, written out from the core's docstring: n up to 2500, else max(300, 12 k) <= 2500."""
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
    plan = work.tighten_plan(MLL_KS, upper, ratio, 12582)
    # the cheapest (300^2 for k <= 25) loosest first, then the largest k (its bound serves the flat
    # ones), then by cost
    assert [u[1] for u in _firsts(plan)] == [10, 4, 1, 12582, 57, 220]
    flat = [k for k, f in zip(MLL_KS, work.flat_bounds(MLL_KS, upper)) if f]
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
    plan = work.tighten_plan(ks, upper, ratio, 361)
    assert [u[1] for u in _firsts(plan)] == [10, 5, 29, 52, 2, 67, 104, 1]  # loosest first (equal costs)
    assert [u[1] for u in _longs(plan)] == [10, 5, 29, 52, 2, 67, 104, 1]


def test_no_bound_yet_counts_as_the_loosest_and_is_not_flat():
    ks = (3, 40, 400)
    upper = np.array([np.nan, 2.0, 2.0])
    ratio = np.array([np.nan, 0.9, 0.8])
    assert work.flat_bounds(ks, upper).tolist() == [False, True, True]
    plan = work.tighten_plan(ks, upper, ratio, 20000)  # large n: the flat k waits
    assert _firsts(plan) == [("full", 3), ("full", 400)]  # 40 is flat (its bound is the one at 400)
    assert [u[1] for u in _longs(plan)] == [3, 400, 40]
    # nothing known at the largest k: only it is flat
    assert work.flat_bounds(ks, [1.0, 1.0, np.inf]).tolist() == [False, False, True]
    assert work.tighten_plan([], [], [], 10) == []


def test_full_cost_follows_the_size_of_the_dnn():
    for n, k in [(64, 3), (361, 300), (2500, 1), (12582, 1), (12582, 25), (12582, 26), (12582, 208),
                 (12582, 209), (7000, 7000), (2600, 2600)]:
        assert work.full_cost(n, k) == float(_split_size(n, k)) ** 2


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
    plan = work.tighten_plan(ks, upper, ratio, n)
    assert len(set(plan)) == len(plan)
    # reference: flat = finite bound within FLAT_TOL of the bound at the largest k (or the largest k itself)
    top = upper[-1]
    flat = [bool(np.isfinite(u) and u >= (1 - work.FLAT_TOL) * top) if np.isfinite(top) else k == ks[-1]
            for k, u in zip(ks, upper)]
    assert work.flat_bounds(ks, upper).tolist() == flat
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
    exact = sorted((k for k in ks if work.exact_cheap(n, k)), key=lambda k: (r[ks.index(k)], k))
    assert [u[1] for u in plan if u[0] == "exact"] == exact
    where = {u: i for i, u in enumerate(plan)}
    assert all(where[a] < where[b] for a in firsts for b in plan if b[0] == "exact")
    assert all(where[a] < where[b] for a in plan if a[0] == "exact" for b in longs)
    assert all(where[a] < where[b] for a in firsts for b in longs)


# ------------------------------------------------------------------ the job: caps, skips, the dict contract
DKEY = "genes/center/0123456789abcdef"


def _certificate(k: int, n: int, upper: float) -> dict:
    x = np.zeros(n)
    x[:k] = 1.0 / np.sqrt(k)
    return dict(upper=upper, lower=0.5, kind="dnn", optimal=False, probabilistic=False, x=x)


@pytest.fixture()
def registry(monkeypatch):
    """A registry computing in threads (no processes), standing in for the app's."""
    reg = jobs.Registry(max_jobs=8, idle_seconds=3600, heavy_slots=1, processes=False)
    monkeypatch.setattr(work.live, "submit", lambda key, title, units, fn, **kw: reg.submit(key, title, units, fn,
                                                                                             **kw))
    yield reg
    reg.clear()


def test_first_pass_cut_short_second_pass_long_and_the_unit_dicts(monkeypatch, registry):
    n = 3000  # above the dense limit: the cost grows with k
    slow = {40}  # the stand-in certificate at k = 40 runs until it is cut, or for 1 s (the long cap is 30 s)
    calls = []

    def certify_unit(X, *, k, x=None, effort="auto", time_limit=None, callback=None):
        calls.append((k, effort))
        if k in slow:
            t0 = time.monotonic()
            while time.monotonic() - t0 < 1.0:
                callback(0, 1)
                time.sleep(0.01)
        return _certificate(min(k, 3), n, 1.0 + 0.01 * k - 0.001 * len(calls))

    monkeypatch.setattr(ui.units, "certify_unit", certify_unit)
    monkeypatch.setattr(work, "TIGHTEN_FIRST_S", 0.2)
    monkeypatch.setattr(work, "TIGHTEN_FULL_S", 30.0)
    store = bs.BoundsStore()
    data = bs.data_key(DKEY)
    ks = [8, 40, 400, 900, 2000]
    for k in ks:  # the band's first pass ("auto"): 900 flat (the bound at 2000 is no better), 8-400 below
        store.offer(data, k, upper=1.0 + 0.01 * k if k < 900 else 100.0, lower=0.5, effort="auto")
    X = np.zeros((4, n))
    job = work.tighten_job(X, DKEY, ks, store=store, time_limit=5.0)
    assert job.wait(timeout=60) and job.view().status == "done"
    res = job.view().results
    # first pass: the cheapest (k = 8: the DNN's least size), the largest k, then cheapest first;
    # the long pass loosest first, the flat k = 900 last
    assert list(job.view().units) == [("full", 8), ("full", 2000), ("full", 40), ("full", 400),
                                      ("full", 2000, "long"), ("full", 400, "long"), ("full", 40, "long"),
                                      ("full", 8, "long"), ("full", 900, "long")]
    for unit, r in res.items():
        assert set(r) == {"k", "effort", "improved", "before", "after", "skipped"}
        assert r["k"] == unit[1] and r["effort"] == "full"
    assert res[("full", 40)]["skipped"] == "timed out" and not res[("full", 40)]["improved"]
    assert res[("full", 40, "long")]["skipped"] == "" and res[("full", 40, "long")]["improved"]
    assert res[("full", 8, "long")]["skipped"] == "ran"  # the first pass finished there
    assert res[("full", 900, "long")]["skipped"] == ""  # flat: only the long pass, at the end
    assert [c[0] for c in calls] == [8, 2000, 40, 400, 40, 900]
    assert store.ran(data, 40, "full") and store.ran(data, 900, "full")


def test_stop_during_a_long_step_ends_the_job(monkeypatch, registry):
    gate = threading.Event()

    def certify_unit(X, *, k, x=None, effort="auto", time_limit=None, callback=None):
        gate.set()
        while True:
            callback(0, 1)
            time.sleep(0.01)

    monkeypatch.setattr(ui.units, "certify_unit", certify_unit)
    store = bs.BoundsStore()
    store.offer(bs.data_key(DKEY), 10, upper=2.0, lower=1.0, effort="auto")
    job = work.tighten_job(np.zeros((4, 3000)), DKEY, [10, 20], store=store, time_limit=5.0)
    assert gate.wait(30)
    registry.stop(job.key)
    assert job.join(10) and job.view().status == "stopped"
