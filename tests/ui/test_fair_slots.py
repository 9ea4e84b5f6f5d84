"""The job pool served fairly (issue 41 item 2): ui.fair_slots' policy step by step (no threads, no
clock), checked against a brute-force statement of the policy and by invariants on random arrivals;
then the blocking slots and the registry with fake jobs in threads (the test gates every unit and
waits for states, never for time)."""

from __future__ import annotations

import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from ui import jobs
from ui.fair_slots import BACKGROUND, FIRST, MORE, FairQueue, FairSlots


def _serve_all(q: FairQueue) -> list:
    out = []
    while (t := q.pop()) is not None:
        out.append(t.job)
    return out


def test_every_first_figure_before_further_units_before_background_work():
    q = FairQueue()
    for owner, rank, name in [("a", BACKGROUND, "a-tighten"), ("a", MORE, "a-more"), ("b", MORE, "b-more"),
                              ("b", FIRST, "b-first"), ("c", BACKGROUND, "c-tighten"), ("c", FIRST, "c-first")]:
        q.push(q.ticket(owner, rank, name))
    # c was served before a (c-first, then a-more): c's background work goes first
    assert _serve_all(q) == ["b-first", "c-first", "a-more", "b-more", "c-tighten", "a-tighten"]


def test_round_robin_across_sessions_however_many_jobs_each_started():
    q = FairQueue()
    for name in ["a1", "a2", "a3", "a4"]:
        q.push(q.ticket("a", MORE, name))
    q.push(q.ticket("b", MORE, "b1"))
    q.push(q.ticket("c", MORE, "c1"))
    q.push(q.ticket("c", MORE, "c2"))
    assert _serve_all(q) == ["a1", "b1", "c1", "a2", "c2", "a3", "a4"]


def test_a_session_never_served_goes_before_one_served_already():
    q = FairQueue()
    q.push(q.ticket("a", MORE, "a1"))
    assert q.pop().job == "a1"
    q.push(q.ticket("a", MORE, "a2"))
    q.push(q.ticket("late", MORE, "late1"))  # arrives after a2, but was never served
    assert _serve_all(q) == ["late1", "a2"]


def test_a_holder_hands_over_only_to_a_better_rank_or_a_session_served_less_recently():
    q = FairQueue()
    q.push(q.ticket("a", MORE, "a1"))
    q.pop()  # a holds the slot now
    assert not q.would_wait("a", MORE)  # nobody waits
    q.push(q.ticket("a", MORE, "a-other-job"))
    assert not q.would_wait("a", MORE)  # a's own other job: a goes on
    q.push(q.ticket("b", MORE, "b1"))
    assert q.would_wait("a", MORE)  # b has not been served yet
    assert q.better_waiting(BACKGROUND) and not q.better_waiting(MORE)
    q.push(q.ticket("c", FIRST, "c1"))
    assert q.better_waiting(MORE) and q.would_wait("a", FIRST)


def test_bad_rank_says_what_is_allowed():
    with pytest.raises(ValueError, match=r"`rank` must be one of FIRST=0, MORE=1, BACKGROUND=2; got 7"):
        FairQueue().ticket("a", 7)
    with pytest.raises(ValueError, match=r"`capacity` must be an int >= 1; got 0"):
        FairSlots(0)


def _brute_next(waiting: list, last: dict):
    """The policy said plainly: the best rank; among those, the sessions served longest ago (never
    served: first); among those, the earliest arrival."""
    best_rank = min(t.rank for t in waiting)
    ranked = [t for t in waiting if t.rank == best_rank]
    oldest = min(last.get(t.owner, 0) for t in ranked)
    return min((t for t in ranked if last.get(t.owner, 0) == oldest), key=lambda t: t.seq)


events = hs.lists(hs.one_of(hs.tuples(hs.just("push"), hs.sampled_from("abcd"), hs.sampled_from([FIRST, MORE,
                                                                                                  BACKGROUND])),
                            hs.just(("pop",))), max_size=60)


@settings(max_examples=300, deadline=None)
@given(events)
def test_the_queue_serves_as_the_brute_force_policy_and_keeps_its_promises(evs):
    q = FairQueue()
    waiting, last, grants = [], {}, 0
    served_since: dict = {}  # owner -> grants to *other* owners of its rank while it waited
    for ev in evs:
        if ev[0] == "push":
            t = q.push(q.ticket(ev[1], ev[2], job=len(waiting)))
            waiting.append(t)
            continue
        if not waiting:
            assert q.pop() is None
            continue
        expect = _brute_next(waiting, last)
        got = q.pop()
        assert got == expect
        # promises: no better rank was waiting; within a session and rank, arrival order
        assert all(t.rank >= got.rank for t in waiting)
        assert all(t.seq >= got.seq for t in waiting if t.owner == got.owner and t.rank == got.rank)
        waiting.remove(got)
        grants += 1
        last[got.owner] = grants
        # round robin: while a session waits at a rank, no other session is served twice at that rank
        # before it is served
        for owner in {t.owner for t in waiting if t.rank == got.rank and t.owner != got.owner}:
            key = (owner, got.rank, got.owner)
            served_since[key] = served_since.get(key, 0) + 1
            assert served_since[key] <= 1, f"{got.owner} served twice while {owner} waited"
        for key in [k for k in served_since if k[0] == got.owner]:
            del served_since[key]
    assert len(q) == len(waiting)


# ------------------------------------------------------------------ the blocking slots, in threads
def _until(cond, what: str, limit: float = 60.0) -> None:
    """Wait for a state (polled); the limit only keeps a broken test from hanging."""
    deadline = time.monotonic() + limit
    while not cond():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.005)


def test_the_slots_are_granted_in_the_policys_order_and_a_cancelled_wait_leaves_the_line():
    slots = FairSlots(1)
    assert slots.acquire("holder", MORE)
    order, threads, stop = [], [], {"x": threading.Event()}

    def ask(owner, rank, name, cancel=None):
        ok = slots.acquire(owner, rank, job=name, cancelled=(cancel.is_set if cancel else lambda: False), poll=0.01)
        if ok:
            order.append(name)
            slots.release()
        else:
            order.append(f"{name} cancelled")

    for owner, rank, name in [("a", BACKGROUND, "a-bg"), ("a", MORE, "a-more"), ("x", FIRST, "x-first"),
                              ("b", FIRST, "b-first")]:
        t = threading.Thread(target=ask, args=(owner, rank, name, stop.get(owner)))
        t.start()
        threads.append(t)
        _until(lambda n=len(threads): len(slots.waiting()) == n, f"{name} waiting")
    assert [t.job for t in slots.waiting()] == ["x-first", "b-first", "a-more", "a-bg"]
    stop["x"].set()
    _until(lambda: len(slots.waiting()) == 3, "x left the line")
    slots.release()
    for t in threads:
        t.join(60)
    assert order == ["x-first cancelled", "b-first", "a-more", "a-bg"]
    assert slots.busy == 0
    with pytest.raises(RuntimeError, match="without a slot held"):
        slots.release()


# ------------------------------------------------------------------ the registry with fake jobs
class Gate:
    """Units that start, say so, and finish only when the test lets one through."""

    def __init__(self):
        self.started: list = []
        self.done: list = []
        self._go = threading.Semaphore(0)

    def work(self, name):
        def run(unit, ctx):
            self.started.append((name, unit))
            while not self._go.acquire(timeout=0.01):
                ctx(0, 1)  # a callback: a background unit is preempted here
            self.done.append((name, unit))
            return unit
        return run

    def let_one_through(self):
        self._go.release()


@pytest.fixture()
def reg():
    r = jobs.Registry(max_jobs=16, idle_seconds=3600, heavy_slots=1, processes=False)
    yield r
    r.clear()


def test_other_sessions_first_figures_come_between_one_sessions_units(reg):
    gate = Gate()
    reg.submit("a", "a", [1, 2, 3], gate.work("a"), heavy=True, owner="A")
    _until(lambda: gate.started == [("a", 1)], "a's first unit running")
    reg.submit("b", "b", [1, 2], gate.work("b"), heavy=True, owner="B")
    reg.submit("c", "c", [1], gate.work("c"), heavy=True, owner="C")
    _until(lambda: len(reg._slots.waiting()) == 2, "b and c waiting")
    for _ in range(6):
        n = len(gate.done)
        gate.let_one_through()
        _until(lambda: len(gate.done) == n + 1, "a unit done")
        _until(lambda: len(gate.started) == min(len(gate.done) + 1, 6), "the next unit started")
    assert gate.done == [("a", 1), ("b", 1), ("c", 1), ("a", 2), ("b", 2), ("a", 3)]


def test_background_tightening_yields_mid_unit_to_another_sessions_first_figure(reg):
    gate = Gate()
    bg = reg.submit("tighten", "tighten", ["t1", "t2"], gate.work("bg"), background=True, owner="A")
    _until(lambda: gate.started == [("bg", "t1")], "the tightening running")
    fg = reg.submit("cert", "cert", ["c1"], gate.work("fg"), heavy=True, owner="B")
    _until(lambda: gate.started[-1:] == [("fg", "c1")], "the first figure's unit running")
    assert bg.status == "queued" and gate.done == []  # t1 abandoned (to be computed again)
    gate.let_one_through()
    _until(lambda: fg.status == "done", "the first figure done")
    _until(lambda: gate.started[-1:] == [("bg", "t1")], "the tightening back on t1")
    for _ in range(2):
        n = len(gate.done)
        gate.let_one_through()
        _until(lambda: len(gate.done) == n + 1, "a unit done")
    _until(lambda: bg.status == "done", "the tightening done")
    assert gate.done == [("fg", "c1"), ("bg", "t1"), ("bg", "t2")]


def test_a_light_jobs_waiting_for_its_turn_hold_no_slot_and_stop_cleanly(reg):
    gate = Gate()
    jobs_ = [reg.submit(f"j{i}", f"j{i}", [1, 2], gate.work(f"j{i}"), owner=f"S{i}") for i in range(5)]
    _until(lambda: len(gate.started) == jobs.LIGHT_SLOTS, "the light slots busy")
    _until(lambda: len(reg._light.waiting()) == 5 - jobs.LIGHT_SLOTS, "the others waiting")
    waiting = [j for j in jobs_ if j.status == "queued"]
    for j in waiting:
        j.stop()
    _until(lambda: all(j.status == "stopped" for j in waiting), "the waiting jobs stopped")
    assert reg._light.waiting() == []
    for _ in range(2 * jobs.LIGHT_SLOTS):
        gate.let_one_through()
    _until(lambda: all(j.status in ("done", "stopped") for j in jobs_), "all ended")
    assert reg._light.busy == 0
