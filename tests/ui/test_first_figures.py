"""Analysts fairly served (issue 41 item 2): the same fit asked for by two pages at once is computed once
(single flight), a page already drawn gives way to another's first figure, and a figure is built once per
server for the same inputs.  Jobs in threads; the tests gate the work and wait for states, never for time."""

from __future__ import annotations

import sys
import threading
import time

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from ui import jobs, live, pause, units, work
from ui.fair_slots import BACKGROUND, FIRST, MORE


def _until(cond, what: str, limit: float = 60.0) -> None:
    """Wait for a state (polled); the limit only keeps a broken test from hanging."""
    deadline = time.monotonic() + limit
    while not cond():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.005)


@pytest.fixture
def registry(monkeypatch):
    """A thread-only registry in place of the app's, an empty store of fits and no fit under way."""
    reg = jobs.Registry(idle_seconds=3600, processes=False)
    monkeypatch.setattr(jobs, "REGISTRY", reg)
    monkeypatch.setattr(work, "_FITS", type(work._FITS)())
    monkeypatch.setattr(work, "_IN_FLIGHT", {})
    yield reg
    reg.clear()


class GatedFits:
    """``ui.units.fit_unit`` counted, held at its start until the test lets it go (it calls back meanwhile,
    so Stop stops it), and every entry into the single flight's claim recorded."""

    def __init__(self, monkeypatch):
        self.calls: list = []
        self.claims: list = []
        self.go = threading.Event()
        self.ticks = 0  # callbacks returned (a unit paused inside one does not return)
        real_fit, real_claim = units.fit_unit, work._claim

        def fit_unit(X, *, callback=None, **kwargs):
            self.calls.append((kwargs["method"], kwargs["k"]))
            while not self.go.wait(0.005):
                callback(0, 1)
                self.ticks += 1
            return real_fit(X, **kwargs)

        def claim(key, ctx):
            self.claims.append(key)
            return real_claim(key, ctx)

        monkeypatch.setattr(units, "fit_unit", fit_unit)
        monkeypatch.setattr(work, "_claim", claim)


def _data(seed: int = 0) -> np.ndarray:
    X = np.random.default_rng(seed).standard_normal((14, 10))
    return X - X.mean(axis=0)


def test_two_pages_asking_for_the_same_fit_at_once_compute_it_once(registry, monkeypatch):
    real_fit = units.fit_unit
    gated = GatedFits(monkeypatch)
    X = _data()
    path = work.path_job(X, "data", "tpower", [3], d=2, eps=0.1, seed=0)  # Variance vs k
    _until(lambda: gated.calls == [("tpower", 3)], "the first page's fit computing")
    fit = work.fit_jobs(X, "data", 3, ["tpower"], d=2, eps=0.1, seed=0)["tpower"]  # Compare, same fit
    _until(lambda: len(gated.claims) == 2, "the second page asking for the fit under way")
    gated.go.set()
    assert path.wait(timeout=60) and fit.wait(timeout=60), (path.view().message, fit.view().message)
    assert gated.calls == [("tpower", 3)]  # computed once
    assert fit.view().results[3] is path.view().results[3]
    # what both pages got is the fit itself (a direct call)
    np.testing.assert_allclose(path.view().results[3]["x"], real_fit(X, k=3, method="tpower", d=2, eps=0.1,
                                                                     seed=0)["x"])
    assert work._IN_FLIGHT == {}


def test_a_fit_stopped_while_another_page_waits_for_it_is_computed_by_that_page(registry, monkeypatch):
    gated = GatedFits(monkeypatch)
    X = _data(1)
    path = work.path_job(X, "data", "em", [2], d=2, eps=0.1, seed=0)
    _until(lambda: gated.calls == [("em", 2)], "the first page's fit computing")
    fit = work.fit_jobs(X, "data", 2, ["em"], d=2, eps=0.1, seed=0)["em"]
    _until(lambda: len(gated.claims) == 2, "the second page waiting for it")
    path.stop()
    _until(lambda: path.status == "stopped", "the first page's job stopped")
    _until(lambda: len(gated.calls) == 2, "the waiting page computing the fit itself")
    gated.go.set()
    assert fit.wait(timeout=60), fit.view().message
    assert 2 in fit.view().results and 2 not in path.view().results
    assert work.stored_fit("data", "em", 2, d=2, eps=0.1, seed=0) is fit.view().results[2]
    assert work._IN_FLIGHT == {}


def test_a_drawn_page_redraws_less_often_while_another_pages_first_figure_waits(registry):
    gate = threading.Event()

    def blocking(unit, ctx):
        while not gate.wait(0.005):
            ctx(0, 1)
        return unit

    try:
        held = [registry.submit(f"j{i}", f"j{i}", [1], blocking, owner=f"S{i}") for i in range(jobs.LIGHT_SLOTS)]
        _until(lambda: all(j.status == "running" for j in held), "the light slots busy")
        assert not registry.first_waiting()
        assert live.refresh_seconds() == live.REFRESH_S
        late = registry.submit("late", "late", [1], blocking, owner="late")  # no result yet: a first figure
        _until(lambda: len(registry._light.waiting()) == 1, "the late session's first figure waiting")
        assert registry.first_waiting()
        assert live.refresh_seconds() == live.REFRESH_MAX_S  # pages already drawn give way
        assert live.refresh_seconds(first=True) == live.REFRESH_S  # the page waiting for its own does not
        gate.set()
        assert late.wait(timeout=60) and all(j.wait(timeout=60) for j in held)
        assert not registry.first_waiting() and live.refresh_seconds() == live.REFRESH_S
    finally:
        gate.set()


@pytest.mark.parametrize("rank, first", [(MORE, False), (BACKGROUND, False)])
def test_only_a_first_figure_waiting_slows_the_drawn_pages(registry, rank, first):
    queue = registry._slots.queue
    queue.push(queue.ticket("someone", rank))
    assert registry.first_waiting() is first


def _frame(values) -> pd.DataFrame:
    return pd.DataFrame(dict(method=["em", "tpower"][: len(values)], value=values))


def test_a_figure_is_built_once_per_server_for_the_same_inputs(monkeypatch):
    monkeypatch.setattr(live, "_FIGURES", type(live._FIGURES)())
    built: list = []

    def build(frame):
        def make():
            built.append(frame["value"].tolist())
            return go.Figure(go.Scatter(x=frame["method"], y=frame["value"]))
        return make

    a = _frame([0.5, 0.25])
    first = live.figure("f", (a, 3, "title"), build(a))
    again = live.figure("f", (a.copy(), 3, "title"), build(a))  # equal inputs, another object: the one built
    assert again is first and len(built) == 1
    assert first.to_plotly_json() is first.to_dict()  # frozen: the dict made once
    fresh = go.Figure(go.Scatter(x=a["method"], y=a["value"]))
    assert pio.to_json(first, validate=False) == pio.to_json(fresh, validate=False)  # what build() made
    b = _frame([0.5, 0.25 + 1e-12])  # a value changed, however little: built again
    live.figure("f", (b, 3, "title"), build(b))
    live.figure("f", (a, 4, "title"), build(a))  # another scalar input
    live.figure("g", (a, 3, "title"), build(a))  # another figure of the same inputs
    live.figure("f", ({"em": np.arange(3.0)}, None), build(a))
    live.figure("f", ({"em": np.arange(3.0) + 1}, None), build(a))
    assert len(built) == 6


def test_the_figures_kept_are_bounded(monkeypatch):
    monkeypatch.setattr(live, "_FIGURES", type(live._FIGURES)())
    monkeypatch.setattr(live, "FIGURES_KEPT", 3)
    for i in range(5):
        live.figure("f", (i,), go.Figure)
    assert len(live._FIGURES) == 3


# ------------------------------------------------------------------ first figures before further heavy units
class Gates:
    """Units that say when they start and finish only when the test lets that job's unit through."""

    def __init__(self):
        self.started: list = []
        self.done: list = []
        self._go: dict = {}

    def work(self, name):
        self._go[name] = threading.Semaphore(0)

        def run(unit, ctx):
            self.started.append((name, unit))
            while not self._go[name].acquire(timeout=0.005):
                ctx(0, 1)  # a callback: where a background unit is preempted
            self.done.append((name, unit))
            return unit
        return run

    def let_through(self, name) -> None:
        self._go[name].release()


def _fill_light_slots(reg, gates) -> list:
    held = [reg.submit(f"light{i}", f"light{i}", [1], gates.work(f"light{i}"), owner=f"L{i}")
            for i in range(jobs.LIGHT_SLOTS)]
    _until(lambda: all(j.status == "running" for j in held), "the light slots busy")
    return held


def test_a_certificates_further_unit_pauses_while_a_first_figure_is_pending(registry, monkeypatch):
    monkeypatch.setattr(pause, "PAUSE_MAX_S", 3600.0)
    gates = Gates()
    cert = registry.submit("cert", "cert", [1, 2, 3], gates.work("cert"), heavy=True, owner="A")
    _until(lambda: gates.started == [("cert", 1)], "the certificate's first unit running")
    gates.let_through("cert")
    _until(lambda: ("cert", 2) in gates.started, "its second unit (a further one) running")
    late = registry.submit("late", "late", [1], gates.work("late"), owner="B")  # a first figure, a light slot free
    _until(lambda: cert.status == "queued", "the certificate's unit pausing in the middle")
    _until(lambda: ("late", 1) in gates.started, "the first figure computing")
    gates.let_through("cert")  # the paused unit does not take it until no first figure is pending
    assert gates.done == [("cert", 1)]
    gates.let_through("late")
    _until(lambda: ("cert", 3) in gates.started, "the certificate going on once the first figure is drawn")
    assert gates.done.index(("late", 1)) < gates.done.index(("cert", 2))
    gates.let_through("cert")
    assert cert.wait(timeout=60) and late.wait(timeout=60)


def test_further_light_units_pause_and_hand_their_slots_to_a_first_figure(registry, monkeypatch):
    monkeypatch.setattr(pause, "PAUSE_MAX_S", 3600.0)
    gates = Gates()
    curves = [registry.submit(f"c{i}", f"c{i}", [1, 2], gates.work(f"c{i}"), owner=f"L{i}")
              for i in range(jobs.LIGHT_SLOTS)]
    _until(lambda: all(j.status == "running" for j in curves), "the light slots busy")
    for i in range(jobs.LIGHT_SLOTS):
        gates.let_through(f"c{i}")
    _until(lambda: all((f"c{i}", 2) in gates.started for i in range(jobs.LIGHT_SLOTS)), "their further units")
    late = registry.submit("late", "late", [1], gates.work("late"), owner="B")
    _until(lambda: ("late", 1) in gates.started, "the first figure given a slot a paused unit handed over")
    _until(lambda: all(j.status == "queued" for j in curves), "every further unit paused")
    assert registry._light.busy == 1  # the first figure's: the paused units handed theirs over
    for i in range(jobs.LIGHT_SLOTS):
        gates.let_through(f"c{i}")
    assert len(gates.done) == jobs.LIGHT_SLOTS  # the further units wait, paused
    gates.let_through("late")
    assert late.wait(timeout=60) and all(j.wait(timeout=60) for j in curves)
    assert gates.done.index(("late", 1)) < min(gates.done.index((f"c{i}", 2)) for i in range(jobs.LIGHT_SLOTS))


def test_a_fit_a_first_figure_waits_for_does_not_pause(registry, monkeypatch):
    """Single flight and pausing: the further unit computing the fit another page's first figure waits for
    goes on (were it paused for that first figure, neither would ever end)."""
    monkeypatch.setattr(pause, "PAUSE_MAX_S", 3600.0)
    gated = GatedFits(monkeypatch)
    X = _data(2)
    gated.go.set()
    first = work.path_job(X, "data", "tpower", [2], d=2, eps=0.1, seed=0)
    assert first.wait(timeout=60)
    gated.go.clear()
    path = work.path_job(X, "data", "tpower", [2, 3], d=2, eps=0.1, seed=0)  # k = 2 stored: 3 is further work
    _until(lambda: gated.calls == [("tpower", 2), ("tpower", 3)], "the curve's further fit computing (held)")
    assert path.rank() == MORE
    fit = work.fit_jobs(X, "data", 3, ["tpower"], d=2, eps=0.1, seed=0)["tpower"]  # Compare's first figure
    _until(lambda: len(gated.claims) == 3, "the first figure waiting for the fit under way")
    ticks = gated.ticks
    _until(lambda: gated.ticks > ticks + 2, "the fit computing on, not paused for the first figure waiting for it")
    gated.go.set()
    assert fit.wait(timeout=60) and path.wait(timeout=60), (fit.view().message, path.view().message)
    assert gated.calls == [("tpower", 2), ("tpower", 3)]


def test_the_background_tightening_yields_mid_unit_to_a_first_figure_waiting_for_a_light_slot(registry):
    gates = Gates()
    bg = registry.submit("tighten", "tighten", ["t1"], gates.work("bg"), background=True, owner="A")
    _until(lambda: gates.started == [("bg", "t1")], "the tightening running")
    _fill_light_slots(registry, gates)
    registry.submit("late", "late", [1], gates.work("late"), owner="B")
    _until(lambda: bg.status == "queued", "the tightening giving its unit up")
    assert gates.done == []  # abandoned mid-unit (computed again later)
    gates.let_through("light0")
    # whichever check saw the first figure first, the tightening gave its unit up (Preempted: computed again
    # once a slot is free) or paused in it (ui.pause); either way it finishes only after the first figure
    gates.let_through("late")
    _until(lambda: ("late", 1) in gates.done, "the first figure drawn")
    for name in ("bg", "light1", "light2"):
        gates.let_through(name)
    assert bg.wait(timeout=60)
    assert gates.done.index(("late", 1)) < gates.done.index(("bg", "t1"))


def test_the_data_key_is_remembered_per_matrix_and_equals_the_digest(monkeypatch):
    from types import SimpleNamespace

    from ui import keys

    monkeypatch.setattr(live, "_DATA_KEYS", {})
    X = np.arange(12.0).reshape(3, 4)
    ds = SimpleNamespace(name="d", preprocessing=("center",), X=X)
    assert live.data_key(ds) == keys.data_key(ds)
    monkeypatch.setattr(keys, "data_key", lambda _: pytest.fail("digested again"))
    assert live.data_key(ds) == live.data_key(SimpleNamespace(name="d", preprocessing=("center",), X=X))
    monkeypatch.undo()
    monkeypatch.setattr(live, "_DATA_KEYS", {})
    other = SimpleNamespace(name="d", preprocessing=("center",), X=X + 1)  # another matrix: its own digest
    raw = SimpleNamespace(name="d", preprocessing=(), X=X)  # the same matrix named otherwise: its own key
    assert len({live.data_key(ds), live.data_key(other), live.data_key(raw)}) == 3
    assert live.data_key(raw) == keys.data_key(raw)


def test_a_job_no_first_figure_waits_for_ranks_as_further_work_from_the_start(registry):
    gates = Gates()
    cert = registry.submit("cert", "cert", [1, 2], gates.work("cert"), heavy=True, owner="A", first_figure=False)
    _until(lambda: gates.started == [("cert", 1)], "the certificate running")
    slow_fit = registry.submit("fit", "fit", [1], gates.work("fit"), heavy=True, owner="A")  # the page's figure
    assert cert.rank() == MORE and slow_fit.rank() == FIRST
    gates.let_through("cert")
    _until(lambda: ("fit", 1) in gates.started, "the same session's first figure served first")
    assert ("cert", 2) not in gates.started
    gates.let_through("fit")
    gates.let_through("cert")
    assert cert.wait(timeout=60) and slow_fit.wait(timeout=60)
    assert gates.done == [("cert", 1), ("fit", 1), ("cert", 2)]


def _state(pid: int) -> str:
    """The process's state letter from /proc (T: stopped)."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the process state in /proc (Linux)")
def test_a_further_unit_in_a_worker_process_is_stopped_while_a_first_figure_is_pending(monkeypatch):
    """In the worker processes: the further unit's process is stopped (SIGSTOP, no CPU) while another page's
    first figure computes, and goes on once it is no longer pending."""
    monkeypatch.setattr(pause, "PAUSE_MAX_S", 3600.0)
    reg = jobs.Registry(idle_seconds=3600)
    try:
        curve = reg.submit("curve", "curve", [1, 2], lambda u, ctx: ctx.run(
            "tests.jobs_units.burn_unit", 0.0 if u == 1 else 600.0, f"d{u}"), owner="A")
        _until(lambda: 1 in curve.view().results and curve._worker.pid is not None
               and _state(curve._worker.pid) == "R", "the curve's further unit computing")
        pid = curve._worker.pid
        first = reg.submit("first", "first", [1], lambda u, ctx: ctx.run("tests.jobs_units.sleep_unit", 600.0, "s"),
                           owner="B")
        _until(lambda: _state(pid) == "T", "the further unit's process stopped")
        assert curve.status == "queued" and first.status == "running"
        first.stop()  # no first figure pending any more
        _until(lambda: _state(pid) != "T" and curve.status == "running", "the further unit going on")
        assert curve._worker.pid == pid  # the same process: its work kept
    finally:
        reg.clear()
