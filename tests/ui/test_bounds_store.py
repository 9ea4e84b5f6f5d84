"""The app's wiring of the store of proved bounds (ui/bounds_store.py: DataKey, job keys, offers of
certificate units) and the background job that gives way (ui/jobs.py).  The store itself is the core's:
tests/core/certificates/test_schedule.py.

Here: a job data key read as a DataKey (dataset fingerprint and preprocessing), the app's store
refusing any other key, a certificate unit offered (an infeasible point keeps its bound only), and
datasets / preprocessings kept apart.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from ui import bounds_store as bs
from ui import jobs

A = bs.DataKey("0123456789abcdef", "center")
B = bs.DataKey("0123456789abcdef", "standardize")  # same matrix digest, other preprocessing
C = bs.DataKey("fedcba9876543210", "center")


def point(n: int, support, values) -> np.ndarray:
    x = np.zeros(n)
    x[list(support)] = values
    return x


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
