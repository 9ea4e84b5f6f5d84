"""SIGTERM ends the server with a tab open (ui/shutdown.py): the wrapped handler, and the answers that
close their keep-alive connection once the server stops."""

from __future__ import annotations

import asyncio
import signal
import threading

import pytest

from ui import shutdown
from ui import streamlit_runtime as sr


@pytest.fixture
def fresh(monkeypatch):
    """A process that has not seen the signal: its own STOPPING, nothing installed, the last resort recorded."""
    armed = []
    monkeypatch.setattr(shutdown, "STOPPING", threading.Event())
    monkeypatch.setattr(shutdown, "_installed", [])
    monkeypatch.setattr(shutdown, "_arm", lambda seconds, exit: armed.append((seconds, exit)))
    return armed


def _sent(send_wrapper, messages):
    out = []

    async def send(message):
        out.append(message)

    async def run():
        wrapped = send_wrapper(send)
        for m in messages:
            await wrapped(m)

    asyncio.run(run())
    return out


def test_an_answer_after_the_signal_closes_its_connection_once():
    start = {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]}
    body = {"type": "http.response.body", "body": b"ok"}
    out = _sent(shutdown.closing, [start, body])
    assert out[0]["headers"] == [(b"content-type", b"text/plain"), (b"connection", b"close")]
    assert out[1] is body and start["headers"] == [(b"content-type", b"text/plain")]  # the caller's dict kept
    said = {"type": "http.response.start", "status": 200, "headers": [(b"Connection", b"Close")]}
    assert _sent(shutdown.closing, [said])[0]["headers"] == [(b"Connection", b"Close")]  # not twice


def test_the_signal_cancels_the_work_arms_the_last_resort_and_calls_streamlits_handler(fresh):
    calls, cancelled = [], threading.Event()
    previous = lambda signum, frame: calls.append((signum, frame))  # noqa: E731 - Streamlit's handler
    shutdown.on_signal(signal.SIGTERM, "frame", previous, cancelled.set, grace_s=7.0)
    assert shutdown.STOPPING.is_set() and calls == [(signal.SIGTERM, "frame")] and fresh == [(7.0, True)]
    assert cancelled.wait(60)
    # a second signal (SIGINT after SIGTERM) reaches Streamlit again; the work is not cancelled twice
    again = threading.Event()
    shutdown.on_signal(signal.SIGINT, None, previous, again.set, grace_s=7.0)
    assert calls[-1] == (signal.SIGINT, None) and fresh == [(7.0, True)] and not again.wait(0.2)


def test_an_ignored_signal_stays_ignored(fresh):
    shutdown.on_signal(signal.SIGTERM, None, signal.SIG_IGN, lambda: pytest.fail("cancelled"))
    assert not shutdown.STOPPING.is_set() and fresh == []


def test_a_default_handler_still_ends_the_process(fresh, monkeypatch):
    seen = []
    monkeypatch.setattr(shutdown.signal, "signal", lambda sig, handler: seen.append(("handler", sig, handler)))
    monkeypatch.setattr(shutdown.os, "kill", lambda pid, sig: seen.append(("kill", sig)))
    shutdown.on_signal(signal.SIGTERM, None, signal.SIG_DFL, None)
    assert seen == [("handler", signal.SIGTERM, signal.SIG_DFL), ("kill", signal.SIGTERM)]


def test_install_wraps_the_handlers_once_and_only_on_the_main_thread(fresh):
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    seen = []
    try:
        signal.signal(signal.SIGTERM, lambda signum, frame: seen.append(signum))
        off = []
        t = threading.Thread(target=lambda: off.append(shutdown.install(None)))
        t.start()
        t.join()
        assert off == [False] and not shutdown.installed()
        assert shutdown.install(None) and shutdown.installed() and shutdown.install(None)
        handler = signal.getsignal(signal.SIGTERM)
        handler(signal.SIGTERM, None)  # as the interpreter would call it
        assert seen == [signal.SIGTERM] and shutdown.STOPPING.is_set() and len(fresh) == 1
    finally:
        for s, h in saved.items():
            signal.signal(s, h)


def test_streamlits_outermost_middleware_closes_connections_once_stopping(fresh, monkeypatch):
    """The answers of a tab polling ``/_stcore/health`` after the signal say ``connection: close``
    (uvicorn then closes that keep-alive connection, and its wait for open connections ends)."""
    from streamlit.web.server.starlette.starlette_path_security_middleware import PathSecurityMiddleware

    from ui.frontend_files import FrontendFiles

    original = PathSecurityMiddleware.__call__
    while hasattr(original, "__wrapped__"):
        original = original.__wrapped__
    monkeypatch.setattr(PathSecurityMiddleware, "__call__", original)  # put back after the test

    async def health(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"ok"})

    class _NoFiles(FrontendFiles):
        def __init__(self):
            pass

        def known(self, path):
            return False

    sr._replay_in_front(_NoFiles())
    app = PathSecurityMiddleware(health)

    def answer():
        out = []

        async def send(message):
            out.append(message)

        async def receive():
            return {"type": "http.request", "body": b"", "more_body": False}

        scope = {"type": "http", "method": "GET", "path": "/_stcore/health", "raw_path": b"/_stcore/health",
                 "headers": [], "query_string": b""}
        asyncio.run(app(scope, receive, send))
        return dict(out[0]["headers"])

    assert b"connection" not in answer()
    shutdown.STOPPING.set()
    assert answer()[b"connection"] == b"close"
