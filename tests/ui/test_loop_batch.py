"""ui/loop_batch.py (issue 41): calls handed to an event loop in order, one wake-up per burst."""

from __future__ import annotations

import asyncio
import logging
import threading

from hypothesis import given
from hypothesis import strategies as hst

from ui.loop_batch import Batch


def test_a_burst_is_one_wake_up_and_keeps_its_order():
    scheduled, seen = [], []
    batch = Batch(scheduled.append)
    for i in range(50):
        batch.add(seen.append, i)
    assert len(scheduled) == 1 and batch.wakeups == 1 and seen == []  # nothing runs before the drain
    scheduled.pop()()
    assert seen == list(range(50))
    batch.add(seen.append, 50)  # the list was emptied: the next call schedules the next drain
    assert len(scheduled) == 1 and batch.wakeups == 2
    scheduled.pop()()
    assert seen == list(range(51))


@given(hst.lists(hst.sampled_from(["add", "drain"]), max_size=60))
def test_any_interleaving_of_adds_and_drains_runs_every_call_once_in_order(steps):
    """Against the plain rule (every call, in order, exactly once): drains run whenever the loop
    gets to them, calls added while one is pending ride with it."""
    scheduled, seen = [], []
    batch = Batch(scheduled.append)
    added = 0
    for step in steps:
        if step == "add":
            batch.add(seen.append, added)
            added += 1
        elif scheduled:
            scheduled.pop(0)()
        assert len(scheduled) <= 1  # never more than one drain pending
    while scheduled:
        scheduled.pop(0)()
    assert seen == list(range(added))


def test_kwargs_pass_and_a_failing_call_is_logged_and_the_rest_run(caplog):
    scheduled, seen = [], []
    batch = Batch(scheduled.append)

    def boom():
        raise ValueError("boom")

    batch.add(seen.append, "a")
    batch.add(boom)
    batch.add(lambda x, *, y: seen.append(x + y), "b", y="c")
    with caplog.at_level(logging.ERROR, logger="nspca.loop_batch"):
        scheduled.pop()()
    assert seen == ["a", "bc"] and any("failed" in r.getMessage() for r in caplog.records)
    batch.add(seen.append, "d")  # not stuck after the failure
    scheduled.pop()()
    assert seen == ["a", "bc", "d"]


def test_a_refused_schedule_is_retried_by_the_next_call():
    calls = []

    def schedule(fn):
        calls.append(fn)
        if len(calls) == 1:
            raise RuntimeError("loop closed")

    batch = Batch(schedule)
    try:
        batch.add(print)
    except RuntimeError:
        pass
    batch.add(print)
    assert len(calls) == 2


def test_a_thread_feeding_a_real_loop_wakes_it_once_while_it_is_busy():
    """A script thread adds 200 calls while the loop is busy with something else: the loop is woken
    once and runs them in order (no clock: the loop waits for the thread's signal)."""
    seen = []

    async def main():
        loop = asyncio.get_running_loop()
        batch = Batch(loop.call_soon_threadsafe)
        done = threading.Event()

        def feed():
            for i in range(200):
                batch.add(seen.append, i)
            done.set()

        t = threading.Thread(target=feed)
        t.start()
        done.wait()  # the loop itself is held (as by other work) until the thread has added every call
        t.join()
        while len(seen) < 200:
            await asyncio.sleep(0)
        return batch.wakeups

    wakeups = asyncio.run(main())
    assert seen == list(range(200)) and wakeups == 1
