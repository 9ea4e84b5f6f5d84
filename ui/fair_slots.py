"""Who computes next: the slots of the job pool, handed out fairly across browser sessions.

Policy (issue 41 item 2, "analysts fairly served")
-------------------------------------------------
Each waiting request is a :class:`Ticket` — the session it is for (``owner``), a ``rank`` and its
arrival number.  A free slot goes to the waiting ticket with the smallest

    (rank, the owner's last grant, arrival)

* ``rank``: :data:`FIRST` — a job that has no result yet (what a page needs for its first figure);
  :data:`MORE` — the later units of a page's job; :data:`BACKGROUND` — the band's tightening, which
  runs for minutes.  Any session's first figure goes before any session's further units, and those
  before any background work.
* the owner's last grant: among tickets of one rank the session served least recently goes first
  (never served: first of all) — round robin across sessions, whatever the number of jobs each one
  started;
* arrival: first come, first served within a session.

A job asks for a slot before each unit and, when another ticket would now be served before its next
one (:meth:`FairSlots.would_wait`), hands its slot over between units; a *background* job also gives
its slot up in the middle of a unit when a better-ranked ticket waits (:meth:`FairSlots.better_waiting`).

:class:`FairQueue` is the policy alone (no threads, no clock: the tests drive it step by step);
:class:`FairSlots` adds the blocking and the slot count for the worker threads of :mod:`ui.jobs`.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

__all__ = ["FIRST", "MORE", "BACKGROUND", "Ticket", "FairQueue", "FairSlots"]

FIRST, MORE, BACKGROUND = 0, 1, 2


@dataclass(frozen=True)
class Ticket:
    """A request for a slot: ``owner`` (a session id; None for work outside a session), ``rank``
    (:data:`FIRST`, :data:`MORE` or :data:`BACKGROUND`), ``seq`` (arrival order, set by the queue)
    and ``job`` (whatever names the requester; not compared)."""

    owner: Hashable
    rank: int
    seq: int = 0
    job: object = field(default=None, compare=False)


class FairQueue:
    """The waiting tickets and the order they are served in (see the module's policy)."""

    def __init__(self):
        self._waiting: list[Ticket] = []
        self._arrivals = itertools.count()
        self._grants = itertools.count(1)
        self._last: dict = {}  # owner -> number of its latest grant (0: never served)

    def __len__(self) -> int:
        return len(self._waiting)

    def ticket(self, owner: Hashable, rank: int, job: object = None) -> Ticket:
        """A new ticket (not queued yet): the next arrival number."""
        if rank not in (FIRST, MORE, BACKGROUND):
            raise ValueError(f"`rank` must be one of FIRST=0, MORE=1, BACKGROUND=2; got {rank!r}")
        return Ticket(owner, rank, next(self._arrivals), job)

    def push(self, ticket: Ticket) -> Ticket:
        self._waiting.append(ticket)
        return ticket

    def remove(self, ticket: Ticket) -> None:
        """Take a ticket out of the line (its job was cancelled while waiting)."""
        if ticket in self._waiting:
            self._waiting.remove(ticket)

    def order(self, ticket: Ticket) -> tuple:
        return ticket.rank, self._last.get(ticket.owner, 0), ticket.seq

    def head(self) -> Ticket | None:
        """The ticket served next (None when nobody waits)."""
        return min(self._waiting, key=self.order, default=None)

    def pop(self) -> Ticket | None:
        """Serve the next ticket: out of the line, its owner marked as served now."""
        best = self.head()
        if best is not None:
            self._waiting.remove(best)
            self._last[best.owner] = next(self._grants)
        return best

    def would_wait(self, owner: Hashable, rank: int) -> bool:
        """Whether a waiting ticket would be served before one of ``owner`` at ``rank`` asked for
        now: a better rank, or the same rank and a session served less recently (another job of the
        same session at the same rank does not come first: within a session, the holder goes on)."""
        mine = (rank, self._last.get(owner, 0))
        return any((t.rank, self._last.get(t.owner, 0)) < mine for t in self._waiting)

    def better_waiting(self, rank: int) -> bool:
        """Whether a ticket of a better (smaller) rank than ``rank`` waits."""
        return any(t.rank < rank for t in self._waiting)

    def waiting(self) -> list[Ticket]:
        """The waiting tickets, in the order they will be served (if nobody else arrives)."""
        return sorted(self._waiting, key=self.order)


class FairSlots:
    """``capacity`` slots handed out in :class:`FairQueue` order to the threads that ask.

    ``acquire`` blocks until the caller's ticket is served and a slot is free; ``cancelled()`` is
    polled while waiting (each ``poll`` seconds) and, when true, the ticket leaves the line and
    ``acquire`` returns False.  Slots are not tied to a thread: ``release`` frees one.
    """

    def __init__(self, capacity: int):
        if int(capacity) < 1:
            raise ValueError(f"`capacity` must be an int >= 1; got {capacity!r}")
        self.capacity = int(capacity)
        self.busy = 0
        self.queue = FairQueue()
        self._cond = threading.Condition()

    def acquire(self, owner: Hashable, rank: int, *, job: object = None,
                cancelled: Callable[[], bool] = lambda: False, poll: float = 0.2) -> bool:
        with self._cond:
            ticket = self.queue.push(self.queue.ticket(owner, rank, job))
            while True:
                if cancelled():
                    self.queue.remove(ticket)
                    self._cond.notify_all()
                    return False
                if self.busy < self.capacity and self.queue.head() is ticket:
                    self.queue.pop()
                    self.busy += 1
                    self._cond.notify_all()  # the next in line may take another free slot
                    return True
                self._cond.wait(poll)

    def release(self) -> None:
        with self._cond:
            if self.busy <= 0:
                raise RuntimeError("FairSlots.release() without a slot held")
            self.busy -= 1
            self._cond.notify_all()

    def would_wait(self, owner: Hashable, rank: int) -> bool:
        """Whether a holder asking again for ``owner`` at ``rank`` would now be served after
        someone already waiting (then it hands its slot over between units)."""
        with self._cond:
            return self.queue.would_wait(owner, rank)

    def better_waiting(self, rank: int) -> bool:
        with self._cond:
            return self.queue.better_waiting(rank)

    def waiting(self) -> list[Ticket]:
        with self._cond:
            return self.queue.waiting()
