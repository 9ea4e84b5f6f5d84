"""The one door to Streamlit's internals (ui/streamlit_runtime.py, issue 37 item 4).

The first test is the alarm of an upgrade: it fails, naming the internal, when any place the app
reaches into has moved in the installed Streamlit.  The others check that a moved internal is
reported (once, in the log) and that the feature it serves degrades as documented instead of
raising or silently doing nothing."""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
from pathlib import Path

import streamlit
import streamlit.runtime

from ui import streamlit_runtime as sr

ROOT = Path(__file__).resolve().parents[2]


def test_every_internal_the_app_reaches_is_where_it_expects():
    assert sr.problems() == [], (
        f"Streamlit {streamlit.__version__}: internals moved; fix ui/streamlit_runtime.py")


def test_the_installed_streamlit_is_in_the_supported_range_and_the_range_is_checked():
    assert sr.version_supported()
    (a, b), (c, d) = sr.SUPPORTED
    assert sr.version_supported(f"{a}.{b}.0") and not sr.version_supported(f"{a}.{b - 1}.9" if b else "0.99")
    assert not sr.version_supported(f"{c}.{d}.0") and sr.version_supported("1.67.0rc1")


def test_a_moved_internal_is_reported_by_the_probe(monkeypatch):
    from streamlit.runtime.pages_manager import PagesManager

    monkeypatch.delattr(PagesManager, "uses_pages_directory")
    found = sr.problems()
    assert len(found) == 1 and found[0].startswith("pages_manager:")
    monkeypatch.setattr(streamlit, "__version__", "2.1.0")
    assert any("outside the supported" in p for p in sr.problems())


def test_an_unsupported_version_is_said_once_in_the_log(monkeypatch, caplog):
    monkeypatch.setattr(streamlit, "__version__", "2.3.0")
    monkeypatch.setattr(sr, "_warned", set())
    with caplog.at_level(logging.WARNING, logger="nspca.streamlit_runtime"):
        for _ in range(3):
            sr.session_id()
            sr.session_alive("s")
    said = [r.getMessage() for r in caplog.records if "outside the range" in r.getMessage()]
    assert len(said) == 1 and "2.3.0" in said[0]


def test_a_moved_internal_is_said_once_in_the_log_and_the_feature_stops(monkeypatch, caplog):
    from streamlit.runtime.pages_manager import PagesManager

    monkeypatch.delattr(PagesManager, "uses_pages_directory")
    monkeypatch.setattr(sr, "_warned", set())
    with caplog.at_level(logging.WARNING, logger="nspca.streamlit_runtime"):
        assert sr.legacy_pages_mode() is False
        sr.leave_legacy_pages_mode()  # a no-op, not an AttributeError
        assert sr.legacy_pages_mode() is False
    said = [r for r in caplog.records if "PagesManager.uses_pages_directory" in r.getMessage()]
    assert len(said) == 1 and "a deep link" in said[0].getMessage()


def test_the_legacy_pages_flag_is_read_and_written_through_the_door(monkeypatch):
    from streamlit.runtime.pages_manager import PagesManager

    monkeypatch.setattr(PagesManager, "uses_pages_directory", True)
    assert sr.legacy_pages_mode() is True
    sr.leave_legacy_pages_mode()
    assert PagesManager.uses_pages_directory is False and sr.legacy_pages_mode() is False


def test_outside_a_server_there_is_no_session_and_every_session_is_alive():
    assert sr.session_id() is None
    assert sr.session_alive("anything") is True
    assert sr.remove_uploaded_files(["s"]) == 0
    assert sr.close_stored_sessions(["s"]) is False


class _FakeLoop:
    def __init__(self):
        self.calls = []

    def call_soon_threadsafe(self, fn):
        self.calls.append(fn)


class _FakeRuntime:
    """What the door reads of a running server: sessions s1 (connected) and s2 (closed tab, stored)."""

    def __init__(self):
        self.closed, self.removed = [], []
        self._async_objs = type("AsyncObjects", (), {"eventloop": _FakeLoop()})()
        self._session_mgr = type("Mgr", (), {"close_session": lambda _, sid: self.closed.append(sid)})()
        self.uploaded_file_mgr = type("Files", (), {"remove_session_files":
                                                    lambda _, sid: self.removed.append(sid)})()

    def is_active_session(self, sid):
        return sid == "s1"


def test_a_closed_tabs_files_and_stored_session_are_dropped_and_an_open_one_kept(monkeypatch):
    rt = _FakeRuntime()
    monkeypatch.setattr(streamlit.runtime, "exists", lambda: True)
    monkeypatch.setattr(streamlit.runtime, "get_instance", lambda: rt)
    assert sr.session_alive("s1") and not sr.session_alive("s2")
    assert sr.remove_uploaded_files(["s2"]) == 1 and rt.removed == ["s2"]
    after = []
    assert sr.close_stored_sessions(["s1", "s2"], then=lambda: after.append(1)) is True
    assert rt.closed == [] and after == []  # nothing runs off the server's loop
    (shut,) = rt._async_objs.eventloop.calls
    shut()
    assert rt.closed == ["s2"] and after == [1]


def test_a_runtime_without_the_session_manager_is_said_once(monkeypatch, caplog):
    rt = _FakeRuntime()
    del rt._session_mgr
    monkeypatch.setattr(streamlit.runtime, "exists", lambda: True)
    monkeypatch.setattr(streamlit.runtime, "get_instance", lambda: rt)
    monkeypatch.setattr(sr, "_warned", set())
    with caplog.at_level(logging.WARNING, logger="nspca.streamlit_runtime"):
        assert sr.close_stored_sessions(["s2"]) is False
        assert sr.close_stored_sessions(["s2"]) is False
    assert sum("_session_mgr" in r.getMessage() for r in caplog.records) == 1


def test_the_shutdown_hook_runs_before_threads_are_joined(monkeypatch):
    seen = []
    monkeypatch.setattr(threading, "_register_atexit", lambda fn: seen.append(fn))
    assert sr.run_before_thread_join(print) == "threading" and seen == [print]
    monkeypatch.delattr(threading, "_register_atexit")
    registered = []
    monkeypatch.setattr(sr.atexit, "register", lambda fn: registered.append(fn))
    monkeypatch.setattr(sr, "_warned", set())
    assert sr.run_before_thread_join(print) == "atexit" and registered == [print]


def test_a_worker_process_loads_the_jobs_module_without_streamlit():
    """Every worker process imports ui.jobs (its loop); the door it uses for the shutdown hook must not
    load Streamlit there (seconds per process on a loaded machine)."""
    code = "import sys, ui.jobs; print('streamlit' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "False"


def test_no_other_module_touches_the_internals():
    """Exactly one adapter: no other file of the app (ui/, pages/, app.py) names a private place of
    Streamlit or CPython's threading (the list: tools.structure.STREAMLIT_INTERNALS)."""
    from tools import structure

    assert structure.internals_touched(ROOT) == ["ui/streamlit_runtime.py"]


def test_polled_files_are_polled_at_the_period_asked_and_a_moved_period_is_said(monkeypatch, caplog):
    from streamlit.watcher import polling_path_watcher as ppw

    monkeypatch.setattr(ppw, "_POLLING_PERIOD_SECS", ppw._POLLING_PERIOD_SECS)  # put back after the test
    assert sr.poll_files_every(4.0) and ppw._POLLING_PERIOD_SECS == 4.0
    monkeypatch.delattr(ppw, "_POLLING_PERIOD_SECS")
    monkeypatch.setattr(sr, "_warned", set())
    assert any(p.startswith("polling_period:") for p in sr.problems())
    with caplog.at_level(logging.WARNING, logger="nspca.streamlit_runtime"):
        assert sr.poll_files_every(4.0) is False
    assert any("config files polled" in r.getMessage() for r in caplog.records)
