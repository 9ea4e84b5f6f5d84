"""Work shared between pages (ui/work.py), merged job views (ui/live.py), worker priorities (ui/jobs.py)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from ui import jobs, live, units, work


@pytest.fixture
def registry(monkeypatch):
    """A thread-only registry in place of the app's, and an empty store of fits."""
    reg = jobs.Registry(idle_seconds=3600, processes=False)
    monkeypatch.setattr(jobs, "REGISTRY", reg)
    monkeypatch.setattr(work, "_FITS", type(work._FITS)())
    yield reg
    reg.clear()


@pytest.fixture
def counted(monkeypatch):
    """Count the fits actually computed (``ui.units.fit_unit`` calls)."""
    calls = []
    real = units.fit_unit

    def fit_unit(X, **kwargs):
        calls.append((kwargs["method"], kwargs["k"]))
        return real(X, **kwargs)

    monkeypatch.setattr(units, "fit_unit", fit_unit)
    return calls


def _data(seed: int = 0) -> np.ndarray:
    X = np.random.default_rng(seed).standard_normal((12, 9))
    return X - X.mean(axis=0)


def test_a_fit_done_for_one_page_is_not_computed_again_by_another(registry, counted):
    X = _data()
    path = work.path_job(X, "data", "tpower", [2, 3, 5], d=2, eps=0.1, seed=0)
    assert path.wait(timeout=60), path.view().message
    assert sorted(counted) == [("tpower", 2), ("tpower", 3), ("tpower", 5)]
    fits = work.fit_jobs(X, "data", 3, ["tpower", "em"], d=2, eps=0.1, seed=0)
    for job in fits.values():
        assert job.wait(timeout=60), job.view().message
    assert sorted(counted) == [("em", 3), ("tpower", 2), ("tpower", 3), ("tpower", 5)]  # em only
    assert fits["tpower"].view().results[3] is path.view().results[3]
    # another seed, d or data is another answer: computed
    other = work.fit_jobs(X, "data", 3, ["tpower"], d=2, eps=0.1, seed=1)["tpower"]
    assert other.wait(timeout=60) and counted.count(("tpower", 3)) == 2


def test_stored_fit_is_the_unit_and_the_store_is_bounded(registry, counted, monkeypatch):
    X = _data(1)
    monkeypatch.setattr(work, "FITS_KEPT", 2)
    job = work.path_job(X, "d1", "em", [1, 2, 4], d=2, eps=0.1, seed=0)
    assert job.wait(timeout=60)
    assert work.stored_fit("d1", "em", 1, d=2, eps=0.1, seed=0) is None  # the oldest went
    r4 = work.stored_fit("d1", "em", 4, d=2, eps=0.1, seed=0)
    y = X @ r4["x"]
    assert r4 is job.view().results[4] and np.isclose(r4["variance"], y @ y / X.shape[0])


def test_best_stored_x_is_the_largest_variance_at_k_on_that_data(registry):
    X = _data(2)
    for method in ("em", "tpower", "enet"):
        job = work.path_job(X, "d2", method, [3], d=2, eps=0.1, seed=0)
        assert job.wait(timeout=60)
    stored = {m: work.stored_fit("d2", m, 3, d=2, eps=0.1, seed=0) for m in ("em", "tpower", "enet")}
    best = max(stored.values(), key=lambda r: r["variance"])
    assert np.array_equal(work.best_stored_x("d2", 3), best["x"])
    assert work.best_stored_x("d2", 4) is None and work.best_stored_x("other", 3) is None


def _view(key, status, results, units, message="", seconds=1.0):
    return jobs.JobView(key=key, title=str(key), status=status, results=results, units=units, step=(0, 0),
                        message=message, seconds=seconds)


@pytest.mark.parametrize("statuses, merged", [
    (("done", "done"), "done"),
    (("done", "running"), "running"),
    (("queued", "done"), "queued"),
    (("running", "failed"), "running"),
    (("failed", "stopped"), "failed"),
    (("stopped", "done"), "stopped"),
    (("cancelled", "done"), "cancelled"),
])
def test_merge_counts_every_unit_and_reports_the_most_pressing_status(statuses, merged):
    why = ["boom" if st == "failed" else "" for st in statuses]
    a = _view("a", statuses[0], {3: "x"}, (3,), message=why[0], seconds=2.0)
    b = _view("b", statuses[1], {}, (3,), message=why[1])
    v = live.merge([a, b])
    assert v.status == merged
    assert v.units == (("a", 3), ("b", 3)) and v.results == {("a", 3): "x"}  # same unit, two jobs
    assert v.fraction == pytest.approx(0.5) or v.active
    assert v.seconds == 2.0
    assert ("boom" in v.message) == ("failed" in statuses)


def test_stop_and_continue_of_a_merged_view_act_on_every_job(registry):
    import threading

    gate = threading.Event()

    def slow(unit, ctx):
        while not gate.is_set():
            ctx(0, 1)
        return unit

    a = registry.submit("a", "A", [1, 2], slow)
    b = registry.submit("b", "B", [1, 2], slow)
    key = live.merge([a.view(), b.view()]).key
    live._stop(key)
    assert a.join(10) and b.join(10)
    assert a.view().status == b.view().status == "stopped"
    gate.set()
    live._resume(key)
    assert a.wait(timeout=10) and b.wait(timeout=10)
    assert a.view().results == b.view().results == {1: 1, 2: 2}


def niceness_unit(X, callback=None):
    """The scheduling priority of the process computing the unit (run in the worker process)."""
    return os.nice(0)


def test_certificates_run_at_a_lower_priority_than_the_curves():
    reg = jobs.Registry(idle_seconds=3600)
    try:
        X = np.ones((2, 2))
        heavy = reg.submit("h", "H", [0], lambda u, ctx: ctx.run("tests.ui.test_jobs_sharing.niceness_unit", X, "x"),
                           heavy=True)
        light = reg.submit("l", "L", [0], lambda u, ctx: ctx.run("tests.ui.test_jobs_sharing.niceness_unit", X, "x"))
        assert heavy.wait(timeout=120), heavy.view().message
        assert light.wait(timeout=120), light.view().message
        here = os.nice(0)
        assert light.view().results[0] == here
        assert heavy.view().results[0] == min(here + jobs.HEAVY_NICE, 19)
    finally:
        reg.clear()


def test_a_unit_past_its_timeout_is_abandoned_and_the_job_goes_on(registry):
    def long_unit(unit, ctx):
        try:
            return ctx.run("tests.ui.test_jobs_sharing.busy_unit", 5.0, "x", timeout=0.2)
        except jobs.TimedOut:
            return "gave up"

    job = registry.submit("t", "T", [1, 2], long_unit)
    assert job.wait(timeout=10) and job.view().results == {1: "gave up", 2: "gave up"}


def busy_unit(seconds, callback=None):
    """Computes for ``seconds``, calling back (a core solver reporting progress)."""
    import time

    end = time.monotonic() + seconds
    while time.monotonic() < end:
        callback(0, 1)
        time.sleep(0.01)
    return "finished"


def test_certify_job_quick_pass_first_then_full_and_slow_quick_units_skipped(registry, monkeypatch):
    """The band: a quick bound for every k first (abandoned from the first one that is too slow),
    then the full certificates; each k shows its tightest bound."""
    calls = []

    def certify_unit(X, *, k, x=None, effort="auto", callback=None):
        calls.append((effort, k))
        if effort == "fast" and k >= 5:  # the cheap bound is slow at large k
            busy_unit(5.0, callback)
        top = float(k)
        return dict(upper=top + (1.0 if effort == "fast" else 0.5), lower=top - (0.25 if effort == "fast" else 0.5),
                    kind=effort, optimal=False, probabilistic=False, x=None)

    monkeypatch.setattr(units, "certify_unit", certify_unit)
    monkeypatch.setattr(work, "QUICK_S", 0.3)
    X = _data(3)
    job = work.certify_job(X, "d3", [3, 1, 5, 8])
    assert job.wait(timeout=30), job.view().message
    assert calls == [("fast", 3), ("fast", 1), ("fast", 5),  # 5 timed out: 8 never asked
                     ("auto", 3), ("auto", 1), ("auto", 5), ("auto", 8)]
    res = job.view().results
    assert res[(work.QUICK, 5)] is None and res[(work.QUICK, 8)] is None
    c = work.certificate(res, 3)
    assert c["upper"] == 3.5 and c["lower"] == 2.75  # the smaller bound, the larger feasible value
    assert work.certificate(res, 8)["kind"] == "auto"
    assert work.certificate({(work.QUICK, 4): res[(work.QUICK, 3)]}, 4)["kind"] == "fast"
    assert work.certificate({}, 3) is None
    assert work.certified(res, [3, 1, 5, 8]) == (4, 4)
    assert work.certified({(work.QUICK, 3): res[(work.QUICK, 3)], (work.QUICK, 5): None}, [3, 5]) == (1, 0)


def test_in_a_process_the_timeout_counts_the_units_cpu_seconds():
    reg = jobs.Registry(idle_seconds=3600)

    def unit(fn):
        def work(u, ctx):
            try:
                return ctx.run(f"tests.jobs_units.{fn}", 3.0, "x", timeout=1.0)
            except jobs.TimedOut:
                return "gave up"
        return work

    try:
        burning = reg.submit("b", "B", [0], unit("burn_unit"), heavy=True)
        assert burning.wait(timeout=120), burning.view().message
        assert burning.view().results == {0: "gave up"}  # killed at 1 of its 3 CPU seconds
        waiting = reg.submit("w", "W", [0], unit("sleep_unit"), heavy=True)
        assert waiting.wait(timeout=120), waiting.view().message
        assert waiting.view().results == {0: "finished"}  # 3 s of wall time, ~0 CPU seconds
    finally:
        reg.clear()
