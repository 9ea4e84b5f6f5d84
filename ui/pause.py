"""First figures first, inside the units too: work no page waits for pauses while a first figure is pending.

Why (issue 41 item 2)
---------------------
The slots of :mod:`ui.fair_slots` decide who computes *next*; a unit already computing went on.  With 8
analysts and a class at once, 161 units had finished before the last analyst's first figure, 17 of
them first figures: the certificates' further k, the band's tightening and the curves' further k
computed in their worker processes beside the first figures, on the same two cores.

Rule
----
While any job drawing a page's first figure (rank :data:`~ui.fair_slots.FIRST`: no result yet) is
queued or computing, every other unit *pauses* at its next check (:meth:`ui.jobs.Context.check`, every
50 ms): its worker process is stopped (``SIGSTOP``: it keeps its work and its memory, and uses no CPU),
a light job hands its slot to the waiting first figure, and the unit goes on (``SIGCONT``) where it
was once no first figure is pending — after taking a slot again in the fair order.  A unit run in a
thread (``Registry(processes=False)``: the tests) pauses at its next ``ctx(done, total)``.

Never a deadlock: a unit does not pause while

* a first figure waits for the answer it is computing (single flight, :func:`ui.work._fit`: the
  job's ``serves_first``);
* a first figure waits for the heavy slot (a heavy job pauses keeping its slot and the one heavy
  process, so it goes on instead: its unit ends and it hands the slot over, or a background one is
  preempted);
* it has already paused for :data:`PAUSE_MAX_S` in this unit (a safety valve for a wait this module
  does not know of: the unit then finishes at its normal priority).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable

from ui.fair_slots import FIRST

__all__ = ["PAUSE_MAX_S", "firsts_pending", "should_pause", "pause"]

log = logging.getLogger("nspca.jobs")

PAUSE_MAX_S = 30.0  # the longest one unit stays paused (wall seconds; a safety valve, see the module)
# NSPCA_FIRST_PAUSE=0 turns the rule off (benchmarks/bench_load.py measures the server with and without it)
ENABLED = os.environ.get("NSPCA_FIRST_PAUSE", "1") != "0"


def firsts_pending(registry, exclude=None) -> bool:
    """Whether a job drawing a page's first figure (other than ``exclude``) is queued or computing."""
    return any(j is not exclude and j.rank() == FIRST for j in registry.active())


def should_pause(job) -> bool:
    """Whether ``job``'s unit should pause now (see the module's rule)."""
    reg = job.registry
    if not ENABLED or reg is None or job.pause_spent or job.rank() == FIRST:
        return False
    if job.heavy and reg.heavy_first_waiting():
        return False
    serves = job.serves_first
    if serves is not None and serves():
        return False
    return firsts_pending(reg, job)


def pause(job, held: list, slots, *, stop: Callable[[], None] | None = None,
          resume: Callable[[], None] | None = None, wait: Callable[[float], None]) -> None:
    """Pause ``job``'s unit while :func:`should_pause`: ``stop()`` (its process), release its light slot
    (``held[0]``: whether it holds one), wait, take a slot again (``job._acquire``), ``resume()``.
    ``wait(seconds)`` waits up to that long and raises :class:`ui.jobs.Cancelled` when the job is stopped
    meanwhile (as ``job._acquire`` does; the process is still stopped then: the caller kills it)."""
    if stop is not None:
        stop()
    released = False
    if not job.heavy and held[0] and slots is not None:
        slots.release()
        held[0], released = False, True
    job.set_status("queued")
    log.info("job %s pauses for a first figure", job.title)
    deadline = time.monotonic() + PAUSE_MAX_S
    while should_pause(job):
        if time.monotonic() > deadline:
            job.pause_spent = True
            break
        wait(0.05)
    if released:
        held[0] = job._acquire(slots)
    if resume is not None:
        resume()
    job.set_status("running")
    log.info("job %s resumes", job.title)
