"""Probes of the places in Streamlit (and plotly, Starlette) the server-wide features reach.

Each function reads Streamlit's code or classes, without a running server, and raises
``ImportError``/``AttributeError``/``TypeError`` naming what moved; :mod:`ui.streamlit_runtime`, the
one door that uses these places, names them in its ``INTERNALS``, runs these probes in ``problems()``
and before it installs a feature.  Split from that module by concern (issue 41): this one only looks.
"""

from __future__ import annotations

__all__ = ["frontend_files", "frontend_replay", "plotly_spec", "polling_period", "script_messages"]


def frontend_files() -> None:
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


def frontend_replay() -> None:
    import inspect

    from streamlit.web.server.starlette import starlette_app
    from streamlit.web.server.starlette.starlette_path_security_middleware import PathSecurityMiddleware

    call = getattr(PathSecurityMiddleware, "__call__", None)
    if not inspect.iscoroutinefunction(getattr(call, "__wrapped__", call)):
        raise TypeError("PathSecurityMiddleware.__call__ is not a coroutine function")
    stack = [m.cls for m in starlette_app.create_streamlit_middleware()]
    if not stack or stack[0] is not PathSecurityMiddleware:
        raise TypeError("PathSecurityMiddleware is no longer the first of Streamlit's middleware")


def plotly_spec() -> None:
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


def polling_period() -> None:
    from streamlit.watcher import polling_path_watcher as ppw

    if not isinstance(getattr(ppw, "_POLLING_PERIOD_SECS", None), (int, float)):
        raise AttributeError("polling_path_watcher._POLLING_PERIOD_SECS is not a number")
    schedule = getattr(getattr(ppw, "PollingPathWatcher", None), "_schedule", None)
    tasks = [c for c in getattr(getattr(schedule, "__code__", None), "co_consts", ()) if hasattr(c, "co_names")]
    if not any("_POLLING_PERIOD_SECS" in c.co_names for c in tasks):
        raise AttributeError("PollingPathWatcher._schedule's task no longer reads _POLLING_PERIOD_SECS")


def script_messages() -> None:
    import inspect

    from streamlit.runtime.app_session import AppSession
    from streamlit.runtime.runtime import Runtime

    def code(fn):  # Streamlit's own function, also once ui.streamlit_runtime has wrapped it
        return getattr(fn, "__wrapped__", fn).__code__

    outer = code(AppSession._on_scriptrunner_event)  # the handler is called in a lambda inside it
    names = set(outer.co_names).union(*(c.co_names for c in outer.co_consts if hasattr(c, "co_names")))
    if "_call_soon_on_event_loop" not in names or "_handle_scriptrunner_event_on_event_loop" not in names:
        raise AttributeError("AppSession._on_scriptrunner_event no longer hands the event to the loop")
    params = list(inspect.signature(AppSession._handle_scriptrunner_event_on_event_loop).parameters)
    if params[:3] != ["self", "sender", "event"]:
        raise TypeError(f"AppSession._handle_scriptrunner_event_on_event_loop{tuple(params)}")
    if not {"_get_async_objs", "need_send_data"} <= set(code(Runtime._enqueued_some_message).co_names):
        raise AttributeError("Runtime._enqueued_some_message no longer sets _get_async_objs().need_send_data")
