"""The band's background tightening job (ui/work.py: tighten_job): caps, skips, the unit dicts.

The plan itself (the order of the steps, the cost model) is the core's and is tested there, without
Streamlit: tests/core/certificates/test_schedule.py.

Checked through the job itself with a stand-in for the certificate (no timing asserted: a stand-in step
either returns at once or runs until it is cut).
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import ui.units
from ui import bounds_store as bs
from ui import jobs, work

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
