"""Calls handed from a worker thread to an event loop in order, one wake-up of the loop per burst.

Why (issue 41)
--------------
A Streamlit script run sends each element it draws to the browser as one message, handed from the
script's thread to the server's event loop: one ``call_soon_threadsafe`` per message, i.e. a write to
the loop's wake-up pipe, a wake-up of the loop and a switch of the GIL between the two threads, for a
few hundred messages per student on the teaching pages.  :class:`Batch` keeps the calls of one
source (one browser session) in a list and schedules one drain while the list is not empty: the
calls run in the order they were added, in the loop, and the calls added while a drain is pending
ride with it.  Calls added after the drain emptied the list schedule the next one.

This module knows nothing of Streamlit: :func:`ui.streamlit_runtime.batch_script_messages` puts a
:class:`Batch` between a session's script thread and the server's loop.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

__all__ = ["Batch"]

log = logging.getLogger("nspca.loop_batch")


class Batch:
    """Calls of one source, run in order by drains handed to ``schedule`` (e.g. a loop's
    ``call_soon_threadsafe``), one drain scheduled at a time.

    A call that raises is logged and the drain goes on with the next (as the loop would for a call
    scheduled alone); :attr:`wakeups` counts the drains scheduled (for tests and benchmarks)."""

    def __init__(self, schedule: Callable[[Callable[[], None]], None]):
        self._schedule = schedule
        self._lock = threading.Lock()
        self._calls: list = []
        self._pending = False
        self.wakeups = 0

    def add(self, fn: Callable, *args, **kwargs) -> None:
        """Run ``fn(*args, **kwargs)`` in the loop after every call added before it."""
        with self._lock:
            self._calls.append((fn, args, kwargs))
            if self._pending:  # a drain is scheduled and has not taken the list yet: it runs this too
                return
            self._pending = True
            self.wakeups += 1
        try:
            self._schedule(self.drain)
        except BaseException:
            with self._lock:  # not scheduled: the next call schedules again
                self._pending = False
            raise

    def drain(self) -> None:
        """Run every call added so far, in order, and those added meanwhile (in the loop)."""
        while True:
            with self._lock:
                if not self._calls:
                    self._pending = False
                    return
                calls, self._calls = self._calls, []
            for fn, args, kwargs in calls:
                try:
                    fn(*args, **kwargs)
                except Exception:  # noqa: BLE001 - one failing call must not stop the session's others
                    log.exception("a call handed to the loop failed: %r", fn)
