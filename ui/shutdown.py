"""SIGTERM ends the server promptly, even with a browser tab still open.

Why
---
Streamlit (1.67, on uvicorn) answers SIGTERM by asking uvicorn to exit; uvicorn then waits, with no
limit, for every open connection to close.  It closes the idle ones at once, but a keep-alive
connection that receives a request afterwards — a tab whose websocket just dropped polls
``/_stcore/health`` every second or two on the connection it already has — is answered as
keep-alive again, so the wait never ends and the server lives until SIGKILL.  Measured: 1 of 3
runs of ``test_closed_tab_stops_work_and_sigterm_ends_server`` on a loaded machine (a stack dump of
the stuck server: uvicorn's shutdown polling a connection whose last request, ``/_stcore/health``,
had completed after the signal).

What
----
:func:`install` wraps the process's SIGTERM and SIGINT handlers (on the server's event loop: the main
thread, the only one that may set a handler).  On the signal:

1. :data:`STOPPING` is set: every HTTP answer from then on says ``connection: close``
   (:func:`closing`, applied by the outermost middleware of :mod:`ui.streamlit_runtime`), so a
   polling tab's connection closes after its next answer and uvicorn's wait ends;
2. ``first`` runs in a thread of its own (the app passes :func:`ui.jobs.cancel_all`: the worker
   processes are killed now, not when the interpreter finally exits);
3. Streamlit's own handler runs, as before;
4. a last resort is armed: should the process still be alive :data:`GRACE_S` seconds later (a wait
   this module does not know of), every thread's stack is written to stderr and the process ends
   (``faulthandler.dump_traceback_later(..., exit=True)``: exit code 1, the stacks say why).
"""

from __future__ import annotations

import faulthandler
import logging
import os
import signal
import threading
from collections.abc import Callable

__all__ = ["GRACE_S", "STOPPING", "install", "installed", "closing", "on_signal"]

log = logging.getLogger("nspca.shutdown")

GRACE_S = 20.0  # seconds from the signal to the forced end (only reached when something still waits)
STOPPING = threading.Event()  # set when SIGTERM or SIGINT arrived
_SIGNALS = ("SIGTERM", "SIGINT")
_arm = faulthandler.dump_traceback_later  # the last resort (tests put a recorder here)
_installed: list = []  # the signals whose handler is wrapped (filled once per process)
_lock = threading.Lock()


def installed() -> bool:
    """Whether the handlers of this process are wrapped."""
    return bool(_installed)


def closing(send: Callable) -> Callable:
    """``send`` of an ASGI HTTP answer with ``connection: close`` added to its start (kept as is when it
    already says it)."""
    async def send_closing(message):
        if message.get("type") == "http.response.start":
            headers = list(message.get("headers", ()))
            if not any(k.lower() == b"connection" and b"close" in v.lower() for k, v in headers):
                message = {**message, "headers": [*headers, (b"connection", b"close")]}
        await send(message)

    return send_closing


def on_signal(signum: int, frame, previous, first: Callable[[], None] | None, grace_s: float = GRACE_S) -> None:
    """What the wrapped handler does for ``signum`` (see the module), then ``previous`` (the handler it
    replaced: a callable, ``SIG_DFL`` or ``SIG_IGN``)."""
    if previous == signal.SIG_IGN:
        return
    first_time = not STOPPING.is_set()
    STOPPING.set()
    if first_time:
        log.info("signal %s: cancelling the jobs; the server ends within %.0f s", signum, grace_s)
        if first is not None:
            threading.Thread(target=first, daemon=True, name="nspca-shutdown").start()
        _arm(grace_s, exit=True)
    if callable(previous):
        previous(signum, frame)
    elif previous == signal.SIG_DFL:  # what the signal would have done: end the process
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)


def install(first: Callable[[], None] | None = None, *, grace_s: float = GRACE_S) -> bool:
    """Wrap the SIGTERM / SIGINT handlers (see the module); call on the main thread (the server's event
    loop runs there: :func:`ui.streamlit_runtime.on_server_loop` schedules it).  Once per process; True
    when the handlers are (now or already) wrapped."""
    with _lock:
        if _installed:
            return True
        if threading.current_thread() is not threading.main_thread():
            log.warning("shutdown.install called off the main thread: SIGTERM is left to Streamlit alone")
            return False
        for name in _SIGNALS:
            sig = getattr(signal, name, None)
            if sig is None:
                continue
            previous = signal.getsignal(sig)

            def handler(signum, frame, previous=previous):
                on_signal(signum, frame, previous, first, grace_s)

            signal.signal(sig, handler)
            _installed.append(name)
        return True
