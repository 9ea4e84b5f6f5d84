"""The background job registry (ui/jobs.py): reuse, partial results, Stop, idle cancel, shutdown."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from ui import jobs


@pytest.fixture
def registry():
    reg = jobs.Registry(max_jobs=4, idle_seconds=3600, heavy_slots=1, processes=False)
    yield reg
    reg.clear()


def gated(log: list, gate: threading.Event | None = None, steps: int = 1):
    """A unit of work that records its calls and, with a gate, blocks (calling back) until opened."""

    def work(unit, callback):
        log.append(unit)
        for i in range(steps):
            callback(i, steps)
        while gate is not None and not gate.is_set():
            callback(0, 1)
            time.sleep(0.005)
        return unit * 10

    return work


def test_units_in_order_results_complete(registry):
    log = []
    job = registry.submit("a", "A", [3, 1, 2], gated(log))
    assert job.wait(timeout=10)
    v = job.view()
    assert v.status == "done" and log == [3, 1, 2]
    assert list(v.results) == [3, 1, 2] and v.results == {3: 30, 1: 10, 2: 20}
    assert v.fraction == 1.0 and v.missing() == []


def test_reuse_same_key_runs_nothing_again(registry):
    log = []
    job = registry.submit("a", "A", [1, 2], gated(log))
    job.wait(timeout=10)
    again = registry.submit("a", "A", [1, 2], gated(log))
    assert again is job and again.wait(timeout=10) and log == [1, 2]


def test_new_units_are_added_first_and_done_job_restarts(registry):
    log = []
    job = registry.submit("a", "A", [1, 2], gated(log))
    job.wait(timeout=10)
    registry.submit("a", "A", [5, 1, 2], gated(log))
    assert job.wait([5], timeout=10)
    job.join(10)
    assert log == [1, 2, 5] and job.view().status == "done"


def test_partial_results_visible_while_running(registry):
    gate = threading.Event()
    seen = []

    def work(unit, callback):
        seen.append(unit)
        if unit == 2:  # the second unit blocks until the test has looked
            while not gate.is_set():
                callback(0, 1)
                time.sleep(0.005)
        return unit

    job = registry.submit("a", "A", [1, 2, 3], work)
    assert job.wait([1], timeout=10)
    v = job.view()
    assert v.status == "running" and v.results == {1: 1} and v.missing() == [2, 3]
    assert 1 / 3 <= v.fraction < 1
    gate.set()
    assert job.wait(timeout=10) and job.view().results == {1: 1, 2: 2, 3: 3}


def test_stop_keeps_done_units_and_stays_stopped_until_resume(registry):
    gate = threading.Event()
    log = []

    def work(unit, callback):
        log.append(unit)
        while unit == 2 and not gate.is_set():
            callback(0, 1)  # raises Cancelled once stopped
            time.sleep(0.005)
        return unit

    job = registry.submit("a", "A", [1, 2, 3], work)
    job.wait([1], timeout=10)
    while 2 not in log:
        time.sleep(0.005)
    registry.stop("a")
    assert job.join(10)
    v = job.view()
    assert v.status == "stopped" and v.results == {1: 1}
    # a second visit finds it stopped (no silent restart), with what was done
    assert registry.submit("a", "A", [1, 2, 3], work).view().status == "stopped"
    gate.set()
    registry.resume("a")
    assert job.wait(timeout=10) and job.view().results == {1: 1, 2: 2, 3: 3}
    assert log.count(1) == 1  # the finished unit was not computed again


def test_idle_job_is_cancelled_and_resumes_on_next_visit(registry):
    gate = threading.Event()
    job = registry.submit("a", "A", [1, 2], gated([], gate))
    time.sleep(0.05)
    assert registry.reap(now=time.monotonic() + 10) == []  # read recently enough (idle 3600 s)
    registry.idle_seconds = 0.01
    job.last_read = time.monotonic() - 1
    assert registry.reap() == [job]
    assert job.join(10) and job.view().status == "cancelled"
    assert "no page read it" in job.view().message
    gate.set()
    again = registry.submit("a", "A", [1, 2], gated([], gate))  # the next visit resumes
    assert again is job and job.wait(timeout=10) and job.view().status == "done"


def test_reader_keeps_job_alive():
    reg = jobs.Registry(idle_seconds=0.3, processes=False)
    gate = threading.Event()
    try:
        job = reg.submit("a", "A", [1], gated([], gate))
        t_end = time.monotonic() + 1.0
        while time.monotonic() < t_end:  # a page reading every 50 ms
            job.view()
            time.sleep(0.05)
            reg.reap()
        assert job.view().status == "running"
        time.sleep(0.4)
        reg.reap()
        assert job.join(10) and job.view(touch=False).status == "cancelled"
    finally:
        gate.set()
        reg.clear()


def test_cancel_all_stops_every_job_quickly_and_blocks_restarts(registry):
    gate = threading.Event()
    a = registry.submit("a", "A", [1], gated([], gate))
    b = registry.submit("b", "B", [1], gated([], gate))
    time.sleep(0.05)
    registry.cancel_all()
    assert a.join(5) and b.join(5)
    assert {a.view().status, b.view().status} == {"cancelled"}
    assert registry.submit("a", "A", [1], gated([], gate)).view().status == "cancelled"


def test_heavy_jobs_run_one_at_a_time(registry):
    gate = threading.Event()
    first = registry.submit("h1", "H1", [1], gated([], gate), heavy=True)
    second = registry.submit("h2", "H2", [1], gated([]), heavy=True)
    light = registry.submit("l", "L", [1], gated([]))
    assert light.wait(timeout=10)  # light work is not held up
    time.sleep(0.1)
    assert first.view().status == "running" and second.view().status == "queued"
    gate.set()
    assert second.wait(timeout=10) and second.view().status == "done"


def test_queued_job_can_be_stopped(registry):
    gate = threading.Event()
    registry.submit("h1", "H1", [1], gated([], gate), heavy=True)
    second = registry.submit("h2", "H2", [1, 2], gated([]), heavy=True)
    time.sleep(0.05)
    registry.stop("h2")
    assert second.join(5) and second.view().status == "stopped" and second.view().results == {}
    gate.set()


def test_failure_keeps_message_and_done_units(registry):
    def work(unit, callback):
        if unit == 2:
            raise ValueError("`k` must be at most 1; got 2")
        return unit

    job = registry.submit("a", "A", [1, 2], work)
    job.join(10)
    v = job.view()
    assert v.status == "failed" and v.results == {1: 1} and "`k` must be" in v.message


def test_registry_is_bounded_and_evicts_finished_jobs(registry):
    for i in range(6):
        registry.submit(i, str(i), [1], gated([])).join(10)
    assert len(registry.jobs()) == 4 and registry.get(0) is None and registry.get(5) is not None


def test_cancelled_passes_through_except_exception():
    """The core catches Exception in places: Cancelled must not be swallowed there."""
    assert not issubclass(jobs.Cancelled, Exception)


def test_core_callback_stops_a_real_solver(registry):
    """Stopping while the core certifies: the core's callback raises and the job ends promptly."""
    from nspca_core import certify

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 60))
    started = threading.Event()

    def work(k, callback):
        def cb(done, total):
            started.set()
            callback(done, total)
        return certify(X, k=k, callback=cb).upper_bound

    job = registry.submit("c", "C", list(range(2, 40)), work)
    assert started.wait(60)
    registry.stop("c")
    assert job.join(30)
    v = job.view()
    assert v.status == "stopped" and len(v.results) < 38


def test_stop_kills_a_unit_that_never_calls_back():
    """A unit in the worker process that reports no progress (like EM at large k) stops at once."""
    reg = jobs.Registry(idle_seconds=3600)
    X = np.ones((3, 3))
    try:
        job = reg.submit("s", "S", [1, 2], lambda unit, ctx: ctx.run("tests.ui.test_jobs.sleep_unit", 600.0, "none"))
        t_end = time.monotonic() + 60
        while not reg.worker_pids() and time.monotonic() < t_end:
            time.sleep(0.05)
        pid = reg.worker_pids()[0]
        time.sleep(0.5)
        t0 = time.monotonic()
        reg.stop("s")
        # ended long before the unit's 600 s (the margin is wide: no speed is asserted, a loaded machine is slow)
        assert job.join(120) and job.view().status == "stopped"
        assert time.monotonic() - t0 < 120
        assert not _alive(pid)
        # the next unit gets a fresh process and real work gives real results
        job2 = reg.submit("f", "F", [2, 3], lambda k, ctx: ctx.run("ui.units.fit_unit", X, "ones",
                                                                    k=k, method="em", d=2, eps=0.1,
                                                                    seed=0))
        assert job2.wait(timeout=120), job2.view().message
        r = job2.view().results[2]
        assert r["x"].shape == (3,) and np.count_nonzero(r["x"]) <= 2 and r["variance"] >= 0
    finally:
        reg.clear()


def test_worker_errors_come_back_as_messages():
    reg = jobs.Registry(idle_seconds=3600)
    try:
        X = np.ones((4, 3))
        job = reg.submit("e", "E", [7], lambda k, ctx: ctx.run("ui.units.fit_unit", X, "x", k=k,
                                                                method="em", d=2, eps=0.1, seed=0))
        job.join(120)
        v = job.view()
        assert v.status == "failed" and "`k`" in v.message and v.results == {}
    finally:
        reg.clear()


def test_cancel_all_kills_worker_processes():
    reg = jobs.Registry(idle_seconds=3600)
    try:
        job = reg.submit("s", "S", [1], lambda unit, ctx: ctx.run("tests.ui.test_jobs.sleep_unit", 60.0, "none"))
        t_end = time.monotonic() + 60
        while not reg.worker_pids() and time.monotonic() < t_end:
            time.sleep(0.05)
        pid = reg.worker_pids()[0]
        reg.cancel_all()
        assert job.join(10) and job.view().status == "cancelled" and not _alive(pid)
    finally:
        reg.clear()


def _alive(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a killed child not yet reaped is a zombie: not computing
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


def sleep_unit(seconds, callback=None):
    """A unit that computes for ``seconds`` without calling back (run in the worker process)."""
    time.sleep(seconds)
    return seconds


def test_worker_does_not_rerun_the_main_script(tmp_path, monkeypatch):
    """Under Streamlit ``__main__`` is the page script; a worker must not execute it again."""
    import sys
    import types

    marker = tmp_path / "ran.txt"
    script = tmp_path / "page.py"
    script.write_text(f"open({str(marker)!r}, 'w').write('the page ran in the worker')\n")
    fake = types.ModuleType("__main__")
    fake.__file__ = str(script)
    monkeypatch.setitem(sys.modules, "__main__", fake)
    reg = jobs.Registry(idle_seconds=3600)
    try:
        job = reg.submit("m", "M", [0.01], lambda s, ctx: ctx.run("tests.ui.test_jobs.sleep_unit", s, "x"))
        assert job.wait(timeout=120), job.view().message
        assert job.view().results == {0.01: 0.01}
        assert not marker.exists()
    finally:
        reg.clear()


def test_the_job_log_ends_on_each_jobs_final_state_whatever_the_scheduling(tmp_path, monkeypatch):
    """The job log (``NSPCA_JOB_LOG``, read by ``bench_load``'s load test to see that every job ended once
    the tabs closed) has each job's final state last, even when a fast job's thread runs to its end before
    ``Job.start`` returns (the "queued" line once came after a fast job's "done": the load test then saw a
    finished job as queued forever).  The scheduler here lets each new thread run to its end first."""
    from benchmarks.bench_load import JobLog

    class RunsFirst(threading.Thread):
        def start(self):
            super().start()
            self.join(10)

    monkeypatch.setattr(jobs.threading, "Thread", RunsFirst)
    path = tmp_path / "jobs.log"
    handler = jobs.logging.FileHandler(path)
    handler.setFormatter(jobs.logging.Formatter("%(asctime)s %(message)s"))
    level = jobs.log.level
    jobs.log.addHandler(handler)
    jobs.log.setLevel(jobs.logging.INFO)
    reg = jobs.Registry(processes=False)
    try:
        finished = [reg.submit(("fast", i), f"fast {i}", [1, 2], gated([])) for i in range(3)]
        assert all(j.status == "done" for j in finished)
        handler.flush()
        assert JobLog(path).active() == set(), path.read_text()
    finally:
        jobs.log.removeHandler(handler)
        handler.close()
        jobs.log.setLevel(level)
        reg.clear()
