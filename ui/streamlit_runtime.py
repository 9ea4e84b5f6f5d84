"""The one door to Streamlit's runtime internals (and CPython's ``threading._register_atexit``).

The app needs a few things Streamlit's public API does not give: the id of the browser session
running a script, whether a session is still connected, dropping a closed tab's uploaded files and
shutting its stored session down (memory given back minutes earlier), leaving the legacy ``pages/``
mode for a deep link, a hook that runs before the interpreter waits for threads, and Streamlit's
frontend files answered gzipped from memory, in front of its middleware (:func:`serve_frontend_from_memory`).
Each reaches into a private or undocumented place; every such place is named once, in :data:`INTERNALS`, and
touched only here.

Supported: Streamlit :data:`SUPPORTED` (pyproject's ``streamlit>=1.40,<2``; the internals were read
on 1.67).  :func:`problems` probes every internal without a running server and says which moved;
``tests/ui/test_streamlit_runtime.py`` asserts it finds none, so an upgrade that moves one fails
that test loudly.  At run time a moved internal does not take the app down: the feature it serves
stops, and the log says so once (a warning naming the internal and the feature), never silently.

Streamlit itself is imported by each function, not at the top: :mod:`ui.jobs` uses this module for
its shutdown hook, and every worker process imports :mod:`ui.jobs` (its loop, ``_serve``) — a
worker must start without loading Streamlit.
"""

from __future__ import annotations

import atexit
import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ui import shutdown

__all__ = ["SUPPORTED", "INTERNALS", "version_supported", "problems", "session_id", "session_alive",
           "remove_uploaded_files", "close_stored_sessions", "legacy_pages_mode", "leave_legacy_pages_mode",
           "run_before_thread_join", "serve_frontend_from_memory", "send_shipped_figures_prebuilt",
           "poll_files_every", "on_server_loop"]

log = logging.getLogger("nspca.streamlit_runtime")

SUPPORTED = ((1, 40), (2, 0))  # [low, high): the Streamlit versions the app is written for


@dataclass(frozen=True)
class Internal:
    """A private place of Streamlit (or CPython) the app reaches, and what stops without it."""

    where: str
    feature: str


INTERNALS = {
    "script_run_ctx": Internal("streamlit.runtime.scriptrunner.get_script_run_ctx(...).session_id",
                               "the session id of a script run (jobs know their readers; uploads their sessions)"),
    "active_session": Internal("streamlit.runtime.get_instance().is_active_session",
                               "telling a closed tab's session from an open one"),
    "uploaded_file_mgr": Internal("Runtime.uploaded_file_mgr.remove_session_files",
                                  "dropping a closed tab's uploaded files before Streamlit expires them"),
    "session_mgr": Internal("Runtime._session_mgr.close_session",
                            "shutting a closed tab's stored session down (its state freed minutes earlier)"),
    "async_objs": Internal("Runtime._async_objs.eventloop", "running the session shutdown on the server's loop; "
                           "SIGTERM ending the server with a tab open (ui/shutdown.py)"),
    "pages_manager": Internal("streamlit.runtime.pages_manager.PagesManager.uses_pages_directory",
                              "a deep link on a fresh server runs through app.py"),
    "register_atexit": Internal("threading._register_atexit",
                                "jobs cancelled before the interpreter waits for threads (plain atexit used)"),
    "frontend_files": Internal("streamlit.web.server.starlette.starlette_static_routes serving "
                               "file_util.get_static_dir() through starlette StaticFiles.get_response",
                               "Streamlit's frontend files answered gzipped from memory (Streamlit's own "
                               "handler serves them, uncompressed, otherwise)"),
    "plotly_spec": Internal("streamlit.elements.plotly_chart: a figure's spec made by plotly.io.to_json(figure, "
                            "validate=False) of the dict plotly.tools.return_figure_from_figure_or_data gives",
                            "a shipped figure's JSON made once per server (it is encoded on every run otherwise)"),
    "polling_period": Internal("streamlit.watcher.polling_path_watcher._POLLING_PERIOD_SECS, read by "
                               "PollingPathWatcher's task before each poll",
                               "the config files polled every few seconds on a served app (5 times a second "
                               "otherwise, whatever server.fileWatcherType says)"),
    "frontend_replay": Internal("streamlit.web.server.starlette.starlette_path_security_middleware."
                                "PathSecurityMiddleware.__call__, the outermost of Streamlit's middleware",
                                "the frontend's files answered in front of Streamlit's middleware and router "
                                "(they are answered from memory behind them otherwise)"),
}

_warned: set = set()
_warn_lock = threading.Lock()


def _streamlit():
    import streamlit

    return streamlit


def _runtime():
    from streamlit import runtime

    _check_version_once()
    return runtime


def _check_version_once() -> None:
    """Outside :data:`SUPPORTED`, say so once in the log (the features still try; a moved internal is
    then named by its own warning)."""
    with _warn_lock:
        if "version" in _warned:
            return
        _warned.add("version")
    if not version_supported():
        log.warning("Streamlit %s is outside the range this app supports (%s): ui/streamlit_runtime.py reaches "
                    "into its internals; run tests/ui/test_streamlit_runtime.py", _streamlit().__version__,
                    _range_text())


def _unavailable(name: str, why: object) -> None:
    """Say once in the log that an internal moved and what stops working."""
    with _warn_lock:
        if name in _warned:
            return
        _warned.add(name)
    it = INTERNALS[name]
    log.warning("Streamlit %s: %s is not where this app expects it (%s); %s stops working here. "
                "Supported Streamlit: %s; see ui/streamlit_runtime.py.", _streamlit().__version__, it.where, why,
                it.feature, _range_text())


def _range_text() -> str:
    (a, b), (c, d) = SUPPORTED
    return f">={a}.{b},<{c}.{d}"


def _version_tuple(text: str) -> tuple[int, int]:
    parts = []
    for piece in str(text).split(".")[:2]:
        digits = "".join(ch for ch in piece if ch.isdigit()) if not piece.isdigit() else piece
        parts.append(int(digits or 0))
    while len(parts) < 2:
        parts.append(0)
    return tuple(parts)


def version_supported(version: str | None = None) -> bool:
    """Whether ``version`` (default: the installed Streamlit's) is in :data:`SUPPORTED`."""
    v = _version_tuple(_streamlit().__version__ if version is None else version)
    return SUPPORTED[0] <= v < SUPPORTED[1]


# ------------------------------------------------------------------ probes (no running server needed)
def _runtime_class():
    from streamlit.runtime.runtime import Runtime

    return Runtime


def _probe_script_run_ctx() -> None:
    import dataclasses

    from streamlit.runtime.scriptrunner import ScriptRunContext, get_script_run_ctx

    if not callable(get_script_run_ctx):
        raise TypeError("get_script_run_ctx is not callable")
    if "session_id" not in {f.name for f in dataclasses.fields(ScriptRunContext)}:
        raise AttributeError("ScriptRunContext has no field session_id")


def _probe_active_session() -> None:
    runtime = _runtime()
    if not (callable(runtime.exists) and callable(runtime.get_instance)):
        raise AttributeError("streamlit.runtime.exists / get_instance")
    if not callable(getattr(_runtime_class(), "is_active_session", None)):
        raise AttributeError("Runtime.is_active_session")


def _probe_uploaded_file_mgr() -> None:
    if not isinstance(getattr(_runtime_class(), "uploaded_file_mgr", None), property):
        raise AttributeError("Runtime.uploaded_file_mgr")
    from streamlit.runtime.uploaded_file_manager import UploadedFileManager

    if not callable(getattr(UploadedFileManager, "remove_session_files", None)):
        raise AttributeError("UploadedFileManager.remove_session_files")


def _assigned_in_init(attr: str) -> None:
    """``attr`` is set by ``Runtime.__init__`` (read from its code: no Runtime is built)."""
    if attr not in _runtime_class().__init__.__code__.co_names:
        raise AttributeError(f"Runtime.__init__ no longer sets {attr}")


def _probe_session_mgr() -> None:
    _assigned_in_init("_session_mgr")
    from streamlit.runtime.session_manager import SessionManager

    if not callable(getattr(SessionManager, "close_session", None)):
        raise AttributeError("SessionManager.close_session")


def _probe_async_objs() -> None:
    _assigned_in_init("_async_objs")
    from streamlit.runtime.runtime import AsyncObjects

    if "eventloop" not in AsyncObjects._fields:
        raise AttributeError("AsyncObjects.eventloop")


def _probe_pages_manager() -> None:
    from streamlit.runtime.pages_manager import PagesManager

    if "uses_pages_directory" not in vars(PagesManager):
        raise AttributeError("PagesManager.uses_pages_directory")


def _probe_register_atexit() -> None:
    if not callable(getattr(threading, "_register_atexit", None)):
        raise AttributeError("threading._register_atexit")


def _probe_frontend_files() -> None:
    import inspect

    from starlette.staticfiles import StaticFiles
    from streamlit import file_util
    from streamlit.web.server.starlette.starlette_static_routes import create_streamlit_static_handler

    if not inspect.iscoroutinefunction(getattr(StaticFiles, "get_response", None)):
        raise AttributeError("starlette StaticFiles.get_response is not a coroutine function")
    root = file_util.get_static_dir()
    handler = create_streamlit_static_handler(root, None)
    if not isinstance(handler, StaticFiles) or getattr(handler, "directory", None) != root:
        raise TypeError("Streamlit's frontend handler is not a StaticFiles on file_util.get_static_dir()")


def _probe_frontend_replay() -> None:
    import inspect

    from streamlit.web.server.starlette import starlette_app
    from streamlit.web.server.starlette.starlette_path_security_middleware import PathSecurityMiddleware

    call = getattr(PathSecurityMiddleware, "__call__", None)
    if not inspect.iscoroutinefunction(getattr(call, "__wrapped__", call)):
        raise TypeError("PathSecurityMiddleware.__call__ is not a coroutine function")
    stack = [m.cls for m in starlette_app.create_streamlit_middleware()]
    if not stack or stack[0] is not PathSecurityMiddleware:
        raise TypeError("PathSecurityMiddleware is no longer the first of Streamlit's middleware")


def _probe_plotly_spec() -> None:
    import inspect

    import plotly.io
    import plotly.tools
    from streamlit.elements import plotly_chart

    source = inspect.getsource(plotly_chart)
    for call in ("plotly.io.to_json(figure, validate=False)", "plotly.tools.return_figure_from_figure_or_data("):
        if call not in source:
            raise AttributeError(f"streamlit.elements.plotly_chart no longer calls {call}")
    params = list(inspect.signature(getattr(plotly.io.to_json, "__wrapped__", plotly.io.to_json)).parameters)
    if params[:5] != ["fig", "validate", "pretty", "remove_uids", "engine"]:
        raise TypeError(f"plotly.io.to_json{tuple(params)}: not the signature the wrapper passes on")


def _probe_polling_period() -> None:
    from streamlit.watcher import polling_path_watcher as ppw

    if not isinstance(getattr(ppw, "_POLLING_PERIOD_SECS", None), (int, float)):
        raise AttributeError("polling_path_watcher._POLLING_PERIOD_SECS is not a number")
    schedule = getattr(getattr(ppw, "PollingPathWatcher", None), "_schedule", None)
    tasks = [c for c in getattr(getattr(schedule, "__code__", None), "co_consts", ()) if hasattr(c, "co_names")]
    if not any("_POLLING_PERIOD_SECS" in c.co_names for c in tasks):
        raise AttributeError("PollingPathWatcher._schedule's task no longer reads _POLLING_PERIOD_SECS")


_PROBES = {
    "script_run_ctx": _probe_script_run_ctx,
    "active_session": _probe_active_session,
    "uploaded_file_mgr": _probe_uploaded_file_mgr,
    "session_mgr": _probe_session_mgr,
    "async_objs": _probe_async_objs,
    "pages_manager": _probe_pages_manager,
    "register_atexit": _probe_register_atexit,
    "frontend_files": _probe_frontend_files,
    "frontend_replay": _probe_frontend_replay,
    "plotly_spec": _probe_plotly_spec,
    "polling_period": _probe_polling_period,
}


def problems() -> list[str]:
    """Every internal that moved (and the version, when outside :data:`SUPPORTED`), one line each;
    ``[]`` when all are where the app reaches them."""
    out = []
    if not version_supported():
        out.append(f"Streamlit {_streamlit().__version__} is outside the supported {_range_text()}")
    for name, probe in _PROBES.items():
        try:
            probe()
        except (ImportError, AttributeError, TypeError, OSError) as exc:
            out.append(f"{name}: {INTERNALS[name].where} ({type(exc).__name__}: {exc})")
    return out


# ------------------------------------------------------------------ the features
def session_id() -> str | None:
    """The id of the browser session running this script (None outside a Streamlit run)."""
    _check_version_once()
    try:
        from streamlit.runtime.scriptrunner import get_script_run_ctx

        ctx = get_script_run_ctx(suppress_warning=True)
    except (ImportError, TypeError) as exc:
        _unavailable("script_run_ctx", exc)
        return None
    if ctx is None:
        return None
    sid = getattr(ctx, "session_id", None)
    if sid is None:
        _unavailable("script_run_ctx", "the context has no session_id")
    return sid


def _instance():
    """The running server's Runtime, or None (AppTest, scripts, tests)."""
    runtime = _runtime()
    return runtime.get_instance() if runtime.exists() else None


def session_alive(sid) -> bool:
    """Whether the browser session ``sid`` is still connected (a closed tab's is not).

    Outside a running server (AppTest, scripts) every session counts as alive; so does every
    session when the runtime cannot tell (said once in the log)."""
    rt = _instance()
    if rt is None:
        return True
    check = getattr(rt, "is_active_session", None)
    if check is None:
        _unavailable("active_session", "Runtime.is_active_session is missing")
        return True
    return bool(check(sid))


def remove_uploaded_files(sids: Iterable[str]) -> int:
    """Drop Streamlit's copies of the files the ended sessions ``sids`` uploaded (kept until the
    session is finally shut down, minutes after its tab closed); how many sessions were cleared."""
    rt = _instance()
    if rt is None:
        return 0
    mgr = getattr(rt, "uploaded_file_mgr", None)
    remove = getattr(mgr, "remove_session_files", None)
    if remove is None:
        _unavailable("uploaded_file_mgr", "no uploaded_file_mgr.remove_session_files")
        return 0
    done = 0
    for sid in sids:
        try:
            remove(sid)
        except Exception:  # noqa: BLE001 - one session's files failing must not keep the others'
            log.exception("removing the uploaded files of session %s failed", sid)
            continue
        done += 1
    return done


def close_stored_sessions(sids: Iterable[str], then: Callable[[], None] | None = None) -> bool:
    """Shut the ended sessions ``sids`` down now, on the server's event loop, then call ``then``.

    Streamlit keeps a disconnected session (its session state, the uploader's copy of the file) for
    a reconnect, expired only lazily minutes later.  A session that reconnected meanwhile is left
    alone.  False when nothing was scheduled (no server, the loop closed, an internal moved)."""
    rt = _instance()
    if rt is None:
        return False
    mgr = getattr(rt, "_session_mgr", None)
    close = getattr(mgr, "close_session", None)
    if close is None:
        _unavailable("session_mgr", "Runtime._session_mgr.close_session is missing")
        return False
    sids = list(sids)

    def shut() -> None:
        for sid in sids:
            if rt.is_active_session(sid):  # reconnected meanwhile: kept
                continue
            try:
                close(sid)
            except Exception:  # noqa: BLE001 - one session's shutdown failing must not keep the others
                log.exception("closing the stored session %s failed", sid)
        if then is not None:
            then()

    return on_server_loop(shut)


def on_server_loop(fn: Callable[[], None]) -> bool:
    """Run ``fn`` soon on the server's event loop (the main thread); False when not scheduled (no loop)."""
    rt = _instance()
    objs = None if rt is None else getattr(rt, "_async_objs", None)
    loop = getattr(objs, "eventloop", None)
    if objs is not None and loop is None:
        _unavailable("async_objs", "Runtime._async_objs has no eventloop")
    if loop is None:  # no server, or it has not started its loop yet
        return False
    try:
        loop.call_soon_threadsafe(fn)
    except RuntimeError:  # the loop is closed: the server is stopping
        if not loop.is_closed():
            raise
        return False
    return True


def _pages_manager():
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError as exc:
        _unavailable("pages_manager", exc)
        return None
    if "uses_pages_directory" not in vars(PagesManager):
        _unavailable("pages_manager", "no class attribute uses_pages_directory")
        return None
    return PagesManager


def legacy_pages_mode() -> bool:
    """Whether Streamlit runs this server in the legacy ``pages/`` mode (decided once per server:
    a ``pages/`` folder beside the entry script and no ``st.navigation`` call yet)."""
    pm = _pages_manager()
    return bool(pm is not None and pm.uses_pages_directory)


def leave_legacy_pages_mode() -> None:
    """Leave the legacy ``pages/`` mode for the whole server (what ``st.navigation`` itself does)."""
    pm = _pages_manager()
    if pm is not None:
        pm.uses_pages_directory = False


def run_before_thread_join(fn: Callable[[], None]) -> str:
    """Run ``fn`` when the interpreter starts to shut down, *before* it waits for non-daemon threads
    (CPython's ``threading._register_atexit``); plain ``atexit`` (after the wait) where that is
    missing, said once in the log.  Returns which one was used."""
    register = getattr(threading, "_register_atexit", None)
    if register is not None:
        try:
            register(fn)
            return "threading"
        except RuntimeError:  # the interpreter is already shutting down: nothing to wait for
            return "none"
    _unavailable("register_atexit", "threading has no _register_atexit")
    atexit.register(fn)
    return "atexit"


# ------------------------------------------------------------------ Streamlit's frontend, from memory
_frontend: list = []  # the installed ui.frontend_files.FrontendFiles (at most one per process)


def _request_headers(scope) -> dict:
    want = (b"accept-encoding", b"if-none-match")
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", ())
            if k.lower() in want}


def serve_frontend_from_memory():
    """Answer Streamlit's frontend files (its ``static/`` bundles) gzipped from memory
    (:mod:`ui.frontend_files`), in front of Streamlit's own handler, for the whole server; once per
    process (later calls return the same object).  The :class:`~ui.frontend_files.FrontendFiles`,
    or None where the internal moved (Streamlit's handler then serves every file, as it would).

    Streamlit serves its frontend with Starlette's ``StaticFiles``; ``get_response`` of that class
    is wrapped: for Streamlit's frontend directory and a file of it, the answer comes from memory,
    for anything else from the original method.  Once a file was answered, later plain requests of it
    are answered in front of Streamlit's middleware and router (:func:`_replay_in_front`)."""
    with _warn_lock:
        if _frontend:
            return _frontend[0]
    try:
        _probe_frontend_files()
        import anyio
        from starlette.responses import Response
        from starlette.staticfiles import StaticFiles
        from streamlit import file_util
    except (ImportError, AttributeError, TypeError) as exc:
        _unavailable("frontend_files", exc)
        return None
    import os

    from ui.frontend_files import FrontendFiles

    files = FrontendFiles(file_util.get_static_dir())
    original = StaticFiles.get_response
    ours: dict = {}  # a StaticFiles' directory -> whether it is Streamlit's frontend

    async def get_response(self, path, scope):
        directory = getattr(self, "directory", None)
        mine = ours.get(directory)
        if mine is None:
            mine = ours[directory] = directory is not None and os.path.realpath(directory) == files.root
        if mine and files.known(path) and scope.get("method") in ("GET", "HEAD"):
            if files.cached(path) is None:
                await anyio.to_thread.run_sync(files.entry, path)  # once per file and server
            got = files.answer(path, scope["method"], _request_headers(scope))
            if got is not None:
                status, entry = got
                if status == 304:
                    return Response(status_code=304, headers={"etag": entry.headers["etag"]})
                return Response(entry.body, headers=entry.headers)
        return await original(self, path, scope)

    get_response.__wrapped__ = original
    with _warn_lock:
        if _frontend:  # another thread installed it meanwhile
            return _frontend[0]
        StaticFiles.get_response = get_response
        _frontend.append(files)
    _replay_in_front(files)
    return files


def _replay_in_front(files) -> None:
    """Answers to the frontend's files replayed in front of Streamlit's middleware and router
    (:class:`ui.frontend_files.Replies`): ``PathSecurityMiddleware.__call__``, the outermost of
    them, is wrapped (the class's method, so the server's already built stack gets it too)."""
    try:
        _probe_frontend_replay()
        from streamlit.web.server.starlette.starlette_path_security_middleware import PathSecurityMiddleware
    except (ImportError, AttributeError, TypeError) as exc:
        _unavailable("frontend_replay", exc)
        return
    from ui.frontend_files import Replies

    replies = Replies(files)
    files.replies = replies
    original = PathSecurityMiddleware.__call__

    async def call(self, scope, receive, send):
        if shutdown.STOPPING.is_set() and scope.get("type") == "http":  # a polling tab must not hold it up
            send = shutdown.closing(send)
        await replies.front(lambda sc, rc, sd: original(self, sc, rc, sd), scope, receive, send)

    call.__wrapped__ = original
    PathSecurityMiddleware.__call__ = call


# ------------------------------------------------------------------ shipped figures, encoded once
_prebuilt: list = []  # the installed wrapper of plotly.io.to_json (at most one per process)


def send_shipped_figures_prebuilt() -> bool:
    """Streamlit sends a :class:`ui.figures.ship.Shipped` figure as its JSON made once
    (:attr:`~ui.figures.ship.Shipped.json`) instead of encoding it on every run; once per process.

    ``st.plotly_chart`` makes a figure's spec with ``plotly.io.to_json(figure_dict, validate=False)``
    of the dict the figure's ``to_dict()`` gave; ``plotly.io.to_json`` is wrapped: for the very dict
    of a shipped figure (and plotly's defaults otherwise) it returns the prebuilt text, for anything
    else it calls plotly.  False where the internal moved (every figure is then encoded per run)."""
    with _warn_lock:
        if _prebuilt:
            return True
    try:
        _probe_plotly_spec()
        import plotly.io
    except (ImportError, AttributeError, TypeError, OSError) as exc:
        _unavailable("plotly_spec", exc)
        return False
    from ui.figures.ship import prebuilt_json

    original = plotly.io.to_json

    def to_json(fig, validate=True, pretty=False, remove_uids=True, engine=None):
        if not pretty and remove_uids and engine is None:
            text = prebuilt_json(fig)
            if text is not None:
                return text
        return original(fig, validate, pretty, remove_uids, engine)

    to_json.__wrapped__ = original
    with _warn_lock:
        if _prebuilt:
            return True
        plotly.io.to_json = to_json
        _prebuilt.append(to_json)
    return True


# ------------------------------------------------------------------ Streamlit's polled files
def poll_files_every(seconds: float) -> bool:
    """Poll the files Streamlit watches by polling every ``seconds`` (0.2 s by Streamlit's default).

    Whatever ``server.fileWatcherType`` says, Streamlit polls its config files (and secrets files,
    once read) five times a second, each poll a task handed to a thread pool: on this app's server,
    idle, about 0.3 % of a core, i.e. a second of CPU over a 6-minute class of 12 — a third of what
    the students themselves cost (issue 41).  A served app (``fileWatcherType = "none"``) does not
    need a config change noticed within 0.2 s.  False where the internal moved (polling unchanged)."""
    try:
        _probe_polling_period()
        from streamlit.watcher import polling_path_watcher
    except (ImportError, AttributeError) as exc:
        _unavailable("polling_period", exc)
        return False
    polling_path_watcher._POLLING_PERIOD_SECS = float(seconds)
    return True
