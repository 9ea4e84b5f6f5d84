"""Background jobs: long computations off the script thread, shared by every page and session.

Why
---
A Streamlit script run that calls a long solver blocks its session, keeps
running after the browser tab is closed, loses everything when the user opens
another page, and keeps the server from exiting on SIGTERM.  Here a long
computation is a :class:`Job`: one daemon worker thread per key (dataset
digest, preprocessing, task), whose results are stored *unit by unit* (one k,
one method, ...) in a thread-safe dict that any page of any session reads.

Life cycle
----------
``queued -> running -> done``, or ``stopped`` (the user pressed Stop),
``cancelled`` (every browser session that showed it has ended — checked every
:data:`REAP_S` — or nobody read the job for :data:`IDLE_SECONDS`, or the server
is shutting down) or ``failed`` (the work raised; the message is kept).  A
stopped or cancelled job keeps its finished units; :meth:`Registry.submit`
with the same key starts a new worker that skips them (a second visit resumes
where the first one stopped).

Each unit computes in a worker process (``ctx.run``; :mod:`ui.units` holds
the functions): a light job (one algorithm's curve) in its own process, at
most :data:`LIGHT_SLOTS` at a time, so a slow unit of one method never holds
up another's curve; heavy jobs (certificates) in the one heavy process, which
runs at a lower priority (:data:`HEAVY_NICE`) so that the curves and the pages
get the CPU first and the certificates the rest.  The
core's solvers report progress only between their own steps — EM and the
split certificate once per call, minutes at large k on MLL — so a thread
could not be interrupted inside one; a process is simply killed on Stop, on
idle cancel and at shutdown, and a new one is forked (from a forkserver that
has numpy and the core loaded) for the next unit.  The thread driving a job
checks its ``threading.Event`` every 50 ms and between units; a unit run in
the thread itself (``Registry(processes=False)``) stops at the core's next
``callback(done, total)``, where :class:`Cancelled` — a ``BaseException``, so
that no ``except Exception`` inside the core swallows it — is raised.

Budget
------
At most :data:`HEAVY_SLOTS` (1) heavy job computes at a time (others wait in
``queued``), and at most :data:`LIGHT_SLOTS` light ones.  Who computes next is decided unit by unit
by :mod:`ui.fair_slots`: a page's first figure (a job without a result yet) before the further units
of any page, those before the background tightening, and round robin across the browser sessions
(the job's ``owner``, the session that started it) — one session's many jobs do not hold the others
up.  A job that would now wait behind another session hands its slot over between two units.  A job
no page waits for to draw its first figure (``first_figure=False``: the band's certificates) ranks as
further work from the start.  The two pools see each other's first figures: while one waits for a light
slot, the background tightening gives its slot up in the middle of a unit and a heavy job's further
units wait (:meth:`Job.gives_way`), and pages already drawn redraw less often (:mod:`ui.live`).  Inside a
unit too: while any page's first figure is pending, every other unit pauses — its worker process stopped,
a light slot handed over — and goes on where it was once that figure is drawn (:mod:`ui.pause`).
The memory of the certificates is that of one certificate run in one process: on MLL (72 × 12,582)
``certify`` works from X (m ≪ n) and peaks near 400 MB, and the registry keeps only vectors and scalars,
never an n × n matrix.  The registry holds at most :data:`MAX_JOBS` jobs and evicts
the least recently read finished ones.  The stated budget of the app for MLL
is 2 GB resident; ``tests/app_shell/test_browser.py`` measures it.

Shutdown
--------
On SIGTERM (or SIGINT) :mod:`ui.shutdown` runs :func:`cancel_all` at once — the worker processes are
killed — and makes sure a tab still open cannot keep the server waiting.  ``threading._register_atexit``
(through :mod:`ui.streamlit_runtime`) runs it again when the interpreter starts to shut down, *before* it
waits for non-daemon threads; the workers are daemon threads.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import types
import time
import traceback
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Any

from ui import pause as pausing
from ui import streamlit_runtime
from ui.fair_slots import BACKGROUND, FIRST, MORE, FairSlots

__all__ = ["Cancelled", "Preempted", "TimedOut", "Context", "Job", "JobView", "Registry", "Worker", "REGISTRY",
           "IDLE_SECONDS", "MAX_JOBS", "HEAVY_SLOTS", "HEAVY_NICE", "REAP_S", "WORKER_IDLE_S", "cancel_all"]

log = logging.getLogger("nspca.jobs")
if os.environ.get("NSPCA_JOB_LOG") and not log.handlers:  # a debug trace of every state change
    _handler = logging.FileHandler(os.environ["NSPCA_JOB_LOG"])
    _handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    log.addHandler(_handler)
    log.setLevel(logging.INFO)
    log.propagate = False

IDLE_SECONDS = float(os.environ.get("NSPCA_JOB_IDLE_S", 45))
REAP_S = 1.0         # how often the reaper looks (idle jobs, ended sessions, the idle heavy worker)
WORKER_IDLE_S = 5.0  # the heavy worker process (and its copies of the data) ends after this long idle
MAX_JOBS = 48
HEAVY_SLOTS = 1
LIGHT_SLOTS = 3  # light jobs computing at once (each in its own process)
FINAL = ("done", "stopped", "cancelled", "failed")


class Cancelled(BaseException):
    """Raised inside a worker (from a callback or between units) to stop it cleanly."""


class Preempted(Cancelled):
    """Raised inside a *background* job's unit when a foreground heavy job waits for the slot:
    the unit is abandoned (its process killed) and computed again once the slot is free."""


class TimedOut(Cancelled):
    """Raised by ``ctx.run(..., timeout=s)`` when the unit computed longer than ``s`` seconds
    (its process is killed, as on Stop); the work function may catch it and go on."""


@dataclass(frozen=True)
class JobView:
    """A consistent copy of a job's state, for drawing.

    Attributes
    ----------
    key : hashable
    title : str
    status : str
        ``queued``, ``running``, ``done``, ``stopped``, ``cancelled`` or ``failed``.
    results : dict
        Finished units, unit -> value, in the order they finished.
    units : tuple
        Every unit of the job, in the order they are computed.
    step : tuple of (done, total)
        Progress inside the current unit (from the core's callback).
    message : str
        Why the job failed or was cancelled ("" otherwise).
    seconds : float
        Wall time spent computing so far.
    """

    key: Hashable
    title: str
    status: str
    results: dict
    units: tuple
    step: tuple
    message: str
    seconds: float

    @property
    def finished(self) -> bool:
        return self.status in FINAL

    @property
    def active(self) -> bool:
        return self.status in ("queued", "running")

    @property
    def fraction(self) -> float:
        """Share of the units done (the current unit counted by its step progress)."""
        if not self.units:
            return 1.0
        done, total = self.step
        inner = (done / total) if total else 0.0
        part = len(self.results) + (min(max(inner, 0.0), 1.0) if self.active else 0.0)
        return min(part / len(self.units), 1.0)

    def missing(self) -> list:
        """Units without a result yet."""
        return [u for u in self.units if u not in self.results]


# ------------------------------------------------------------------ worker processes
# Imported once in the forkserver, so that a new worker process starts with the solvers and the
# certificates loaded (about 0.5 s less per process; a missing module is skipped by multiprocessing).
_PRELOAD = ["numpy", "nspca_core", "nspca_core.api", "nspca_core.enet", "nspca_core.peers",
            "nspca_core.certificates", "ui.units"]
_DATA_SLOTS = 2  # data matrices a worker process keeps between units
# Scheduling priority (nice increment) of the heavy worker process: the certificates take the
# CPU the curves and the page leave, so on a 2-core machine the fast answers come first.
HEAVY_NICE = 5


def _serve(conn, nice: int = 0) -> None:  # pragma: no cover - runs in the worker process
    """Worker process loop: (function, data id, X or None, kwargs) in, messages out."""
    import importlib

    from threadpoolctl import threadpool_limits

    if nice:
        with contextlib.suppress(OSError):
            os.nice(int(nice))
    # one BLAS thread per worker: the workers (one per curve, and the certificates) already run
    # side by side, and BLAS threads on top of them oversubscribe the cores (OpenBLAS's threads
    # spin while they wait: on MLL a 50 ms fit took 0.2-0.8 s with three workers on 2 cores)
    threadpool_limits(1)
    data: OrderedDict = OrderedDict()
    while True:
        try:
            fn, data_id, X, kwargs = conn.recv()
        except (EOFError, OSError):
            return
        if X is not None:
            data[data_id] = X
            while len(data) > _DATA_SLOTS:
                data.popitem(last=False)
        last = [0.0]

        def callback(done, total) -> None:
            now = time.monotonic()
            if now - last[0] >= 0.2:
                last[0] = now
                conn.send(("progress", float(done), float(total)))

        try:
            module, name = fn.rsplit(".", 1)
            out = getattr(importlib.import_module(module), name)(data[data_id], callback=callback,
                                                                  **kwargs)
            conn.send(("result", out))
        except Exception as exc:  # noqa: BLE001 - sent to the job, shown on the page
            conn.send(("error", isinstance(exc, ValueError),
                       str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"))


_MAIN_LOCK = threading.Lock()


@contextlib.contextmanager
def _without_main_module():
    """Hide ``sys.modules["__main__"]`` while a worker process starts.

    multiprocessing re-imports the parent's ``__main__`` (by its file) in each
    child.  Under Streamlit ``__main__`` is the page script being run, so every
    worker would run the whole page first (loading data, calling the solvers).
    A bare module without ``__file__`` / ``__spec__`` makes the child import
    nothing but what the unit needs.
    """
    with _MAIN_LOCK:
        saved = sys.modules.get("__main__")
        sys.modules["__main__"] = types.ModuleType("__main__")
        try:
            yield
        finally:
            if saved is not None:
                sys.modules["__main__"] = saved


class Worker:
    """One worker process (forkserver) that computes units; killed to cancel one at once.

    The data matrix is sent once per worker and kept there (the last
    :data:`_DATA_SLOTS`), so a path of many cheap units costs one transfer.
    """

    def __init__(self, name: str, nice: int = 0):
        self.name = name
        self.nice = int(nice)
        self._lock = threading.Lock()
        self._proc = None
        self._conn = None
        self._data: OrderedDict = OrderedDict()

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid

    def _ensure(self) -> None:
        if self._proc is not None and self._proc.is_alive():
            return
        import multiprocessing

        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(_PRELOAD)
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_serve, args=(child, self.nice), daemon=True, name=f"nspca-{self.name}")
        with _without_main_module():
            proc.start()
        child.close()
        self._proc, self._conn, self._data = proc, parent, OrderedDict()

    def cpu_seconds(self) -> float | None:
        """CPU seconds the process has used (Linux ``/proc``; None elsewhere or when not running)."""
        pid = self.pid
        if pid is None:
            return None
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
        except (OSError, ValueError, IndexError):
            return None

    def _spent(self, cpu0: float | None, t0: float) -> float:
        """Seconds the unit has computed: CPU seconds since ``cpu0``, else wall seconds since ``t0``."""
        now = self.cpu_seconds()
        return now - cpu0 if now is not None and cpu0 is not None else time.monotonic() - t0

    def suspend(self) -> None:
        """Stop the process where it is (``SIGSTOP``: no CPU, its work and memory kept); :meth:`resume`."""
        self._signal("SIGSTOP")

    def resume(self) -> None:
        """Let a suspended process go on (``SIGCONT``)."""
        self._signal("SIGCONT")

    def _signal(self, name: str) -> None:
        import signal

        pid, sig = self.pid, getattr(signal, name, None)
        if pid is not None and sig is not None:
            with contextlib.suppress(OSError):
                os.kill(pid, sig)

    def kill(self) -> None:
        """Terminate the process (a new one starts with the next unit)."""
        proc, conn = self._proc, self._conn
        self._proc = self._conn = None
        if proc is not None and proc.is_alive():
            proc.kill()
            proc.join(5)
        if conn is not None:
            conn.close()

    def run(self, fn: str, X, data_id: Hashable, check: Callable[[], None],
            progress: Callable[[float, float], None], *, timeout: float | None = None, **kwargs):
        """``fn(X, callback=..., **kwargs)`` in the worker; ``check()`` raising stops it at once,
        and so does the unit using more than ``timeout`` CPU seconds (wall seconds where the
        system does not report CPU time): :class:`TimedOut`."""
        while not self._lock.acquire(timeout=0.1):  # another job's unit is computing here
            check()
        try:
            try:
                self._ensure()
                cpu0, t0 = self.cpu_seconds(), time.monotonic()
                fresh = data_id not in self._data
                self._conn.send((fn, data_id, X if fresh else None, kwargs))
                self._data[data_id] = True
                self._data.move_to_end(data_id)
                while len(self._data) > _DATA_SLOTS:
                    self._data.popitem(last=False)
                while True:
                    check()
                    if timeout is not None and self._spent(cpu0, t0) > timeout:
                        raise TimedOut
                    if not self._conn.poll(0.05):
                        if not self._proc.is_alive():
                            check()  # killed because the job was cancelled (shutdown)
                            code = self._proc.exitcode
                            self.kill()
                            raise RuntimeError(f"the computation's process ended unexpectedly "
                                               f"(exit code {code}; out of memory?)")
                        continue
                    kind, *rest = self._conn.recv()
                    if kind == "progress":
                        progress(*rest)
                    elif kind == "result":
                        return rest[0]
                    else:
                        is_value, message = rest
                        raise (ValueError if is_value else RuntimeError)(message)
            except Cancelled:
                self.kill()
                raise
            except (EOFError, OSError, BrokenPipeError, AttributeError) as exc:
                self.kill()
                check()  # the process was killed for a cancel (shutdown): not a failure
                raise RuntimeError(f"the computation's process ended unexpectedly ({exc})") from None
        finally:
            self._lock.release()


class Context:
    """What a unit of work gets: ``ctx(done, total)`` reports progress (and raises
    :class:`Cancelled` when stopped); ``ctx.run(fn, X, data_id, **kwargs)`` computes
    ``fn`` in the job's worker process."""

    def __init__(self, job: "Job", worker: Worker | None):
        self._job = job
        self._worker = worker

    def __call__(self, done, total) -> None:
        self._job.callback(done, total)

    def check(self) -> None:
        """Called every 50 ms while a unit computes in the worker process: raises :class:`Cancelled`
        (Stop) or :class:`Preempted`, or pauses the process while a first figure is pending
        (:mod:`ui.pause`)."""
        job = self._job
        if job._cancel.is_set():
            raise Cancelled
        if job.must_yield():
            raise Preempted
        if job.should_pause():
            w = self._worker
            job.pause(stop=None if w is None else w.suspend, resume=None if w is None else w.resume)

    @property
    def job(self) -> "Job":
        return self._job

    def run(self, fn: str, X, data_id: Hashable, *, timeout: float | None = None, **kwargs):
        """``fn(X, callback=..., **kwargs)``; past ``timeout`` seconds :class:`TimedOut` is raised
        (the process killed at once; in a thread, at the core's next callback).

        In a worker process the seconds are the CPU seconds of the unit (where the system
        reports them), so a unit slowed down by other work on the machine is not cut short;
        otherwise wall-clock seconds.
        """
        if self._worker is None:  # no process (tests): in this thread
            import importlib

            deadline = None if timeout is None else time.monotonic() + float(timeout)

            def callback(done, total) -> None:
                self(done, total)
                if deadline is not None and time.monotonic() > deadline:
                    raise TimedOut

            module, name = fn.rsplit(".", 1)
            return getattr(importlib.import_module(module), name)(X, callback=callback, **kwargs)
        return self._worker.run(fn, X, data_id, self.check, self._job.callback, timeout=timeout, **kwargs)


class Job:
    """One computation over ``units``: ``work(unit, ctx) -> value`` for each unit.

    Parameters
    ----------
    key : hashable
        Identifies the job in the registry (dataset digest, preprocessing, task).
    title : str
        Shown to the user ("Certifying 14 values of k on MLL").
    units : iterable of hashable
        The pieces of work, computed in this order (results appear one by one).
    work : callable(unit, ctx) -> value
        Computes one unit.  ``ctx(done, total)`` reports progress inside the
        unit and raises :class:`Cancelled` when the job must stop;
        ``ctx.run("module.function", X, data_id, **kwargs)`` computes in the
        job's worker process (killed at once on Stop).
    heavy : bool
        Heavy jobs take one of :data:`HEAVY_SLOTS` slots while computing.
    background : bool
        A heavy job that gives way: while a foreground heavy job waits for the slot, its current
        unit is abandoned (:class:`Preempted`, the process killed) and it waits (status
        ``queued``) until the slot is free again, then computes that unit anew.  The band's
        tightening (:func:`ui.work.tighten_job`) is one: it may run for many minutes, and a
        click on "Prove optimality" or the certificate of another page goes first.
    """

    def __init__(self, key: Hashable, title: str, units: Iterable[Hashable],
                 work: Callable[[Any, Callable], Any], *, heavy: bool = False, background: bool = False,
                 first_figure: bool = True):
        self.key = key
        self.title = title
        self.units = tuple(units)
        self.heavy = heavy or background
        self.background = background
        # False: no page waits for this job to draw its first figure (a certificate beside the curves)
        self.first_figure = first_figure
        self.registry: Registry | None = None  # set by Registry.submit (who may preempt a background job)
        self._work = work
        self._lock = threading.Lock()
        self._results: OrderedDict = OrderedDict()
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None
        self._status = "queued"
        self._message = ""
        self._step = (0, 0)
        self._seconds = 0.0
        self._pending_status = "cancelled"
        self._worker: Worker | None = None
        self.last_read = time.monotonic()
        self.readers: set = set()  # ids of the browser sessions that showed this job (see Registry.reap)
        self.owner: Hashable = None  # the session that started it: whose turn it is (ui.fair_slots)
        # () -> bool while the current unit computes what a first figure waits for (ui.work's single flight)
        self.serves_first: Callable[[], bool] | None = None
        self.pause_spent = False  # the current unit paused PAUSE_MAX_S already (ui.pause)
        self._held: list = [False]
        self._slots: FairSlots | None = None

    # ---------------------------------------------------------- reader side
    def view(self, *, touch: bool = True) -> JobView:
        """A copy of the state; ``touch`` marks the job as read now (keeps it alive)."""
        if touch:
            self.last_read = time.monotonic()
        with self._lock:
            return JobView(key=self.key, title=self.title, status=self._status,
                           results=dict(self._results), units=self.units, step=self._step,
                           message=self._message, seconds=self._seconds)

    @property
    def status(self) -> str:
        return self._status

    def stop(self, reason: str = "stopped") -> None:
        """Ask the worker to stop after the current step; finished units are kept."""
        with self._lock:
            if self._status in FINAL:
                return
            self._message = {"stopped": "", "cancelled": self._message}.get(reason, reason)
            self._pending_status = "stopped" if reason == "stopped" else "cancelled"
        self._cancel.set()
        if self._thread is None:  # never started: final at once
            self._finish(self._pending_status)

    def wait(self, units: Iterable[Hashable] | None = None, timeout: float = 0.0) -> bool:
        """Wait up to ``timeout`` s until ``units`` (default: all) are done or the job ended."""
        want = self.units if units is None else tuple(units)
        deadline = time.monotonic() + timeout
        while True:
            self.last_read = time.monotonic()  # waiting is reading
            with self._lock:
                ready = all(u in self._results for u in want)
            if ready or self._status in FINAL:
                return ready
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the worker; True when it has ended (or never started)."""
        t = self._thread
        if t is not None:
            t.join(timeout)
            return not t.is_alive()
        return True

    # ---------------------------------------------------------- worker side
    def callback(self, done, total) -> None:
        """The core's ``callback(done, total)``: record progress, stop if asked."""
        if self._cancel.is_set():
            raise Cancelled
        if self.must_yield():
            raise Preempted
        if self._worker is None and self.should_pause():  # a unit in this thread pauses here
            self.pause()
        self._step = (float(done), float(total))

    def should_pause(self) -> bool:
        """Whether the current unit pauses now for a pending first figure (:mod:`ui.pause`)."""
        return pausing.should_pause(self)

    def pause(self, *, stop: Callable[[], None] | None = None, resume: Callable[[], None] | None = None) -> None:
        """Pause the current unit while :meth:`should_pause` (see :func:`ui.pause.pause`)."""
        pausing.pause(self, self._held, self._slots, stop=stop, resume=resume, wait=self._wait_or_cancel)

    def _wait_or_cancel(self, seconds: float) -> None:
        if self._cancel.wait(seconds):
            raise Cancelled

    def set_status(self, status: str) -> None:
        with self._lock:
            if self._status not in FINAL:
                self._status = status

    def must_yield(self) -> bool:
        """Whether this background job should give its slot (in the middle of a unit) to better-ranked
        waiting work: a heavy job that is not a background one, or any page's first figure (which
        waits for a light slot: the tightening's CPU goes to it)."""
        reg = self.registry
        return bool(self.background and reg is not None and (reg.foreground_waiting() or reg.light_first_waiting()))

    def gives_way(self) -> bool:
        """Whether this heavy job gives its slot up before its next unit and stays out of the line: while a
        page's first figure waits for a *light* slot (the other pool, which the heavy pool's order does not
        see), a background job and a heavy job's further units (a certificate's next k) wait — first
        figures before further units across the two pools, their CPU to that first figure."""
        reg = self.registry
        if reg is None or not self.heavy or not reg.light_first_waiting():
            return False
        return self.background or self.rank() == MORE

    def rank(self) -> int:
        """Its place in the line (:mod:`ui.fair_slots`): background, a first figure (a job drawing one
        without a result yet), or more."""
        if self.background:
            return BACKGROUND
        with self._lock:
            return MORE if self._results or not self.first_figure else FIRST

    def _hand_over(self, slots: FairSlots | None, held: list) -> None:
        """Release the slot and wait for a turn again (``held[0]``: whether this thread holds the slot,
        kept right when :class:`Cancelled` is raised while waiting).  A light job's own process ends
        meanwhile (a new one is forked for its next unit), so that waiting jobs hold no memory."""
        if held[0]:
            slots.release()
            held[0] = False
        if self._worker is not None and self._worker.name.startswith("job "):
            self._worker.kill()
        with self._lock:
            self._status = "queued"
        log.info("job %s gives way", self.title)
        while self.gives_way():  # out of the line until the first figures it gives way to are served
            if self._cancel.wait(0.05):
                raise Cancelled
        held[0] = self._acquire(slots)
        with self._lock:
            self._status = "running"

    def start(self, slots: FairSlots | None, worker: Worker | None = None) -> None:
        """Start a worker thread for the units without a result."""
        self._worker = worker
        with self._lock:
            self._cancel = threading.Event()
            self._status = "queued"
            self._message = ""
            self._pending_status = "cancelled"
            self._step = (0, 0)
        self.last_read = time.monotonic()
        # logged before the thread starts: a fast unit's "running ... done" must follow it in the log
        log.info("job %s queued %r", self.title, self.key)
        self._thread = threading.Thread(target=self._run, args=(slots,), daemon=True,
                                        name=f"nspca-job {self.title}")
        self._thread.start()

    def _acquire(self, slots: FairSlots | None) -> bool:
        if slots is None:
            return False
        if not slots.acquire(self.owner, self.rank(), job=self.title, cancelled=self._cancel.is_set):
            raise Cancelled
        return True

    def _run(self, slots: FairSlots | None) -> None:
        held = [False]  # a list: _hand_over (and ui.pause) release and take the slot again
        self._held, self._slots = held, slots
        t0 = time.perf_counter()
        base = self._seconds
        try:
            held[0] = self._acquire(slots)
            with self._lock:
                self._status = "running"
            log.info("job %s running %d/%d", self.title, len(self._results), len(self.units))
            ran = False  # a unit computed since the slot was granted (a turn is at least one unit)
            while (unit := self._next_unit()) is not None:
                if self._cancel.is_set():
                    raise Cancelled
                if held[0] and (self.must_yield() or self.gives_way()
                                or (ran and slots.would_wait(self.owner, self.rank()))):
                    self._hand_over(slots, held)  # another session's turn (or a first figure) first
                    ran = False
                    continue
                ran = True
                self._step = (0, 0)
                self.pause_spent = False
                try:
                    value = self._work(unit, Context(self, self._worker))
                except Preempted:
                    if self._cancel.is_set():
                        raise Cancelled from None
                    self._hand_over(slots, held)
                    ran = False
                    continue
                served_as = self.rank()  # what the unit was served as (a first figure, more, background)
                with self._lock:
                    self._results[unit] = value
                    self._seconds = base + time.perf_counter() - t0
                log.info("job %s finished a unit (rank %d) %r", self.title, served_as, unit)
            self._finish("done")
        except Cancelled:
            self._finish(getattr(self, "_pending_status", "cancelled"))
        except Exception as exc:  # noqa: BLE001 - the message is shown on the page
            log.info("job %s failed:\n%s", self.title, traceback.format_exc())
            with self._lock:
                self._message = str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
            self._finish("failed")
        finally:
            if held[0]:
                slots.release()
            if self._worker is not None and self._worker.name.startswith("job "):
                self._worker.kill()  # a light job's own process ends with it
            with self._lock:
                self._seconds = base + time.perf_counter() - t0

    def _next_unit(self):
        with self._lock:
            return next((u for u in self.units if u not in self._results), None)

    def add_units(self, units: Iterable[Hashable]) -> bool:
        """Put ``units`` first (in their order), the others after; True if any is new."""
        units = tuple(dict.fromkeys(units))
        with self._lock:
            new = any(u not in self.units for u in units)
            self.units = units + tuple(u for u in self.units if u not in units)
        return new

    def _finish(self, status: str) -> None:
        with self._lock:
            self._status = status
        log.info("job %s %s %d/%d", self.title, status, len(self._results), len(self.units))


class Registry:
    """Process-wide jobs by key: start, reuse, stop, cancel the unread, cancel all.

    Parameters
    ----------
    max_jobs : int
        Jobs kept; beyond it the least recently read finished jobs are dropped.
    idle_seconds : float
        A running job nobody has read for this long is cancelled (its finished
        units are kept for the next visit).
    heavy_slots : int
        Heavy jobs computing at the same time.
    """

    def __init__(self, *, max_jobs: int = MAX_JOBS, idle_seconds: float = IDLE_SECONDS,
                 heavy_slots: int = HEAVY_SLOTS, processes: bool = True):
        self.max_jobs = max_jobs
        # session_alive(session id) -> bool, set by ui.live under Streamlit: a job whose every
        # reader session has ended is cancelled at the next reap (not after idle_seconds)
        self.session_alive: Callable[[Hashable], bool] | None = None
        self.on_reap: list[Callable[[], None]] = []  # run after each reap (ui.compute's janitor)
        self._heavy_idle_since: float | None = None
        # heavy jobs share one process (they hold the slot while computing); a light job
        # gets its own process, so a slow unit of one method never holds up another's curve
        self._processes = processes
        self._workers = {"heavy": Worker("heavy", nice=HEAVY_NICE)} if processes else {}
        self._light = FairSlots(LIGHT_SLOTS)
        self._warming: threading.Thread | None = None
        self.idle_seconds = idle_seconds
        self._slots = FairSlots(heavy_slots)
        self._jobs: OrderedDict[Hashable, Job] = OrderedDict()
        self._lock = threading.Lock()
        self._reaper: threading.Thread | None = None
        self._closed = threading.Event()

    def get(self, key: Hashable) -> Job | None:
        with self._lock:
            return self._jobs.get(key)

    def submit(self, key: Hashable, title: str, units: Iterable[Hashable],
               work: Callable[[Any, Callable], Any], *, heavy: bool = False,
               resume: bool = True, background: bool = False, owner: Hashable = "session",
               first_figure: bool = True) -> Job:
        """The job for ``key``, started if new.

        A job that is queued, running or done is returned as it is (reuse);
        ``units`` it does not have yet are added first in line (a running
        worker picks them up, a done job restarts on them).  A cancelled or
        failed one restarts on its missing units when ``resume``; a *stopped*
        one (the user's Stop) stays stopped until :meth:`resume` is called.
        ``background``: a heavy job that gives way to the others (see :class:`Job`).
        ``first_figure``: False for a job no page waits for to draw its first figure (the band's
        certificates, a bound beside the components): its units rank as further work from the start.
        ``owner``: the session whose turn the job's units take (:mod:`ui.fair_slots`); by default
        the browser session running this script (None outside one).  A job another session
        restarts becomes that session's.
        """
        if owner == "session":
            owner = streamlit_runtime.session_id()
        self._start_reaper()
        with self._lock:
            job = self._jobs.get(key)
            if job is None:
                job = Job(key, title, units, work, heavy=heavy, background=background, first_figure=first_figure)
                job.registry = self
                self._jobs[key] = job
                self._evict()
                fresh = True
            else:
                self._jobs.move_to_end(key)
                fresh = False
        added = False if fresh else job.add_units(units)
        restart = (job.status in ("cancelled", "failed") and resume) or (job.status == "done" and added)
        if fresh or (restart and not self._closed.is_set()):
            job.owner = owner
            job.start(self._slots_for(job), self._worker_for(job))
        job.last_read = time.monotonic()
        return job

    def resume(self, key: Hashable) -> Job | None:
        """Restart a stopped/cancelled/failed job on its missing units."""
        job = self.get(key)
        if job is not None and job.status in ("stopped", "cancelled", "failed"):
            job.start(self._slots_for(job), self._worker_for(job))
        return job

    def warm(self) -> None:
        """Start the forkserver (numpy and the core loaded) in the background, once per process,
        so that the first unit does not wait for it."""
        if not self._processes or self._warming is not None:
            return

        def start():
            import multiprocessing
            import multiprocessing.forkserver

            multiprocessing.get_context("forkserver").set_forkserver_preload(_PRELOAD)
            with _without_main_module():
                multiprocessing.forkserver.ensure_running()

        self._warming = threading.Thread(target=start, daemon=True, name="nspca-forkserver-warm")
        self._warming.start()

    def _worker_for(self, job: Job) -> Worker | None:
        if not self._processes:
            return None
        return self._workers["heavy"] if job.heavy else Worker(f"job {job.title}")

    def _slots_for(self, job: Job) -> FairSlots:
        return self._slots if job.heavy else self._light

    def _all_workers(self) -> list[Worker]:
        own = [j._worker for j in self.jobs() if j._worker is not None]
        return list({id(w): w for w in [*self._workers.values(), *own]}.values())

    def worker_pids(self) -> list[int]:
        """Process ids of the live worker processes (tests, memory checks)."""
        return [w.pid for w in self._all_workers() if w.pid is not None]

    def stop(self, key: Hashable) -> None:
        job = self.get(key)
        if job is not None:
            job.stop("stopped")

    def jobs(self) -> list[Job]:
        with self._lock:
            return list(self._jobs.values())

    def active(self) -> list[Job]:
        return [j for j in self.jobs() if j.status in ("queued", "running")]

    def foreground_waiting(self) -> bool:
        """Whether work ranked before the background tightening (a heavy job that is not a background
        one) waits for the heavy slot."""
        return self._slots.better_waiting(BACKGROUND)

    def first_waiting(self) -> bool:
        """Whether some page's first figure waits for a turn (a job without a result yet waits for a
        light or the heavy slot): pages already drawn then redraw less often (:func:`ui.live.refresh_seconds`),
        the background tightening gives its slot up and a certificate's further units wait
        (:meth:`Job.gives_way`), so that the server's CPU goes to that first figure."""
        return self._light.better_waiting(MORE) or self._slots.better_waiting(MORE)

    def heavy_first_waiting(self) -> bool:
        """Whether a page's first figure waits for the heavy slot (the one heavy process is then wanted:
        a heavy unit does not pause, :mod:`ui.pause`, it ends its unit and hands the slot over)."""
        return self._slots.better_waiting(MORE)

    def light_first_waiting(self) -> bool:
        """Whether a page's first figure waits for a light slot (see :meth:`Job.gives_way`)."""
        return self._light.better_waiting(MORE)

    def stop_background(self, reason: str = "stopped") -> list[Job]:
        """Stop every active background job (tests; a page's Stop acts on one job)."""
        out = [j for j in self.active() if j.background]
        for job in out:
            job.stop(reason)
        return out

    def reap(self, now: float | None = None) -> list[Job]:
        """Cancel the active jobs nobody read for ``idle_seconds``, and those whose every reader
        session has ended (:attr:`session_alive`); kill the heavy worker process once no heavy
        job has been active for :data:`WORKER_IDLE_S` (it holds copies of the data); return
        the cancelled jobs."""
        now = time.monotonic() if now is None else now
        alive = self.session_alive
        out = []
        for job in self.active():
            if now - job.last_read > self.idle_seconds:
                job._message = f"cancelled: no page read it for {self.idle_seconds:.0f} s"
            elif alive is not None and job.readers and not any(alive(s) for s in list(job.readers)):
                job._message = "cancelled: every browser tab showing it was closed"
            else:
                continue
            job.stop("cancelled")
            out.append(job)
        heavy = self._workers.get("heavy")
        if heavy is not None and heavy.pid is not None:
            if any(j.heavy for j in self.active()):
                self._heavy_idle_since = None
            elif self._heavy_idle_since is None:
                self._heavy_idle_since = now
            elif now - self._heavy_idle_since >= WORKER_IDLE_S and heavy._lock.acquire(blocking=False):
                try:
                    heavy.kill()  # a new one is forked (from the warm forkserver) for the next unit
                finally:
                    heavy._lock.release()
                self._heavy_idle_since = None
        for hook in list(self.on_reap):
            try:
                hook()
            except Exception:  # noqa: BLE001 - a cleanup hook never stops the reaper
                log.info("reap hook failed:\n%s", traceback.format_exc())
        return out

    def cancel_all(self, reason: str = "server shutting down") -> None:
        """Cancel every active job (shutdown)."""
        self._closed.set()
        for job in self.active():
            job._message = reason
            job.stop("cancelled")
        for worker in self._all_workers():
            worker.kill()

    def wait(self, timeout: float = 60.0, *, background: bool = False) -> bool:
        """Wait until no job is active (tests); True when all ended in time.  Background jobs
        (the band's tightening, which may run for many minutes) are waited for only when
        ``background``."""
        def busy():
            return [j for j in self.active() if background or not j.background]

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not busy():
                return True
            time.sleep(0.02)
        return not busy()

    def forget(self, match: Callable[[Hashable], bool]) -> int:
        """Cancel and drop the jobs whose key ``match``es (their data is gone: the work function
        holds the data matrix, so a job kept in the registry keeps it in memory); how many."""
        with self._lock:
            gone = [(k, j) for k, j in self._jobs.items() if match(k)]
            for k, _ in gone:
                del self._jobs[k]
        for _, job in gone:
            job.stop("cancelled")
            job._work = None
        return len(gone)

    def clear(self) -> None:
        """Cancel and forget every job (tests)."""
        for job in self.jobs():
            job.stop("cancelled")
            job.join(5)
        with self._lock:
            self._jobs.clear()
        for worker in self._all_workers():
            worker.kill()
        self._closed.clear()

    def _evict(self) -> None:
        while len(self._jobs) > self.max_jobs:
            victim = next((k for k, j in self._jobs.items() if j.status in FINAL), None)
            if victim is None:
                return
            del self._jobs[victim]

    def start_reaper(self) -> None:
        """Start the reaper thread (idle and orphaned jobs, :attr:`on_reap` hooks) if not running."""
        self._start_reaper()

    def _start_reaper(self) -> None:
        if self._reaper is not None and self._reaper.is_alive():
            return
        self._reaper = threading.Thread(target=self._reap_loop, daemon=True, name="nspca-job-reaper")
        self._reaper.start()

    def _reap_loop(self) -> None:
        while not self._closed.wait(min(REAP_S, self.idle_seconds / 4)):
            self.reap()


REGISTRY = Registry()


def cancel_all() -> None:
    """Cancel every job of the process-wide registry."""
    REGISTRY.cancel_all()


# Run before the interpreter waits for non-daemon threads (plain atexit runs after): CPython's
# threading._register_atexit, reached through the one door to such internals.
streamlit_runtime.run_before_thread_join(cancel_all)
