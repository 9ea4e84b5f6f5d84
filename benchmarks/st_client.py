"""A Streamlit client without a browser: the app's own websocket protocol, for load benchmarks.

Why
---
On one 2-core machine, 20 headless Chromiums rendering Plotly take the cores the server needs (issue 41
item 2: the load went from 0.4 to 19 and the analysts' first figures waited for the browsers, not the
server); a real class has a machine per student.  This client does what the browser does *on the
server*: it opens ``/_stcore/stream``, sends the ``BackMsg`` a page load sends (``rerun_script`` with
the page), answers the server's ``auto_rerun`` requests (the redraw of a page's fragments, as the
browser's timers do) and reads the ``ForwardMsg`` deltas — without drawing anything.  The classes
are Streamlit's own (``streamlit.proto``), so the messages are the browser's.

A *first figure* is what ``benchmarks/bench_load.py``'s browsers wait for: the first ``plotly_chart``
element whose figure has data (a trace with at least one point).

API
---
``await open_page(url, page)`` -> seconds from the request to the first figure (None: none within
``timeout``).  :class:`Client` keeps one session open for several pages and widget changes::

    async with Client(url) as c:
        await c.open("")                                   # the guided tour
        await c.choose("Dataset", r"^MLL leukemia")       # a selectbox in the sidebar
        seconds = await c.open("variance_vs_k")
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from urllib.parse import urlsplit

__all__ = ["Client", "open_page", "figure_has_data"]


def figure_has_data(spec: str | dict) -> bool:
    """Whether a Plotly figure (its JSON, as ``PlotlyChart.spec`` carries it) has a trace with a point
    (the browser benchmark's "marks > 0")."""
    fig = json.loads(spec) if isinstance(spec, str) else spec
    for trace in fig.get("data") or []:
        for axis in ("x", "y", "z", "values", "lat", "r"):
            v = trace.get(axis)
            if isinstance(v, dict):  # plotly's typed arrays: {"dtype": ..., "bdata": ...}
                if v.get("bdata") or v.get("shape"):
                    return True
            elif isinstance(v, (list, tuple)) and len(v) > 0:
                return True
    return False


class Client:
    """One browser session of a Streamlit app, spoken in its protocol (see the module).

    Attributes after a page ran: ``figures`` (the figures with data received since the last
    :meth:`open`, in order), ``exceptions`` (texts of exception elements), ``widgets`` (label ->
    the last widget element of that label), ``pages`` (url path -> page script hash), ``finished``
    (the whole script runs finished: not a fragment's redraw, not a run cut short by a rerun).
    """

    def __init__(self, url: str, *, query: str = ""):
        parts = urlsplit(url)
        self.url = url.rstrip("/")
        self.stream = f"ws://{parts.netloc}{parts.path.rstrip('/')}/_stcore/stream"
        self.query = query
        self.page_hash = ""
        self.page_name = ""
        self.pages: dict[str, str] = {}
        self.widgets: dict = {}
        self.states: dict = {}  # widget id -> WidgetState set by choose()
        self.figures: list[dict] = []
        self.exceptions: list[str] = []
        self.finished = 0
        self.session_id = ""
        self._file_urls: dict = {}  # request id -> FileURLsResponse
        self._opened = 0
        self.messages = 0
        self._ws = None
        self._reader: asyncio.Task | None = None
        self._timers: dict[str, asyncio.Task] = {}
        self._asked: set = set()  # fragments whose redraw the current run asked for (auto_rerun)
        self._changed = asyncio.Event()

    # ------------------------------------------------------------------ connection
    async def __aenter__(self) -> "Client":
        import websockets

        self._ws = await websockets.connect(self.stream, subprotocols=["streamlit"], max_size=None,
                                            origin=self.url, open_timeout=60, ping_interval=None)
        self._reader = asyncio.create_task(self._read())
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def close(self) -> None:
        for t in self._timers.values():
            t.cancel()
        self._timers.clear()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
        if self._ws is not None:
            with contextlib.suppress(Exception):
                await self._ws.close()

    async def _send_rerun(self, *, fragment_id: str = "", auto: bool = False) -> None:
        from streamlit.proto.BackMsg_pb2 import BackMsg

        msg = BackMsg()
        cs = msg.rerun_script
        cs.query_string = self.query
        cs.page_script_hash = self.page_hash
        cs.page_name = self.page_name
        cs.fragment_id = fragment_id
        cs.is_auto_rerun = auto
        cs.context_info.timezone = "UTC"
        cs.context_info.locale = "en-US"
        cs.context_info.url = f"{self.url}/{self.page_name}"
        for state in self.states.values():
            cs.widget_states.widgets.append(state)
        await self._ws.send(msg.SerializeToString())

    # ------------------------------------------------------------------ what the server sends
    async def _read(self) -> None:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        async for data in self._ws:
            msg = ForwardMsg()
            msg.ParseFromString(data)
            self.messages += 1
            self._handle(msg)
            self._changed.set()

    def _handle(self, msg) -> None:
        kind = msg.WhichOneof("type")
        if kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            self._element(msg.delta.new_element)
        elif kind == "new_session":  # a script run starts
            self._asked.clear()
            self.session_id = msg.new_session.initialize.session_id or self.session_id
            self._learn_pages(msg.new_session.app_pages)
            if msg.new_session.page_script_hash:
                self.page_hash = msg.new_session.page_script_hash
        elif kind == "navigation":
            self._learn_pages(msg.navigation.app_pages)
            if msg.navigation.page_script_hash:
                self.page_hash = msg.navigation.page_script_hash
        elif kind == "auto_rerun":
            self._asked.add(msg.auto_rerun.fragment_id)
            self._every(msg.auto_rerun.fragment_id, msg.auto_rerun.interval)
        elif kind == "stop_auto_rerun":
            for fid in msg.stop_auto_rerun.fragment_ids or list(self._timers):
                t = self._timers.pop(fid, None)
                if t is not None:
                    t.cancel()
        elif kind == "script_finished" and msg.script_finished == msg.FINISHED_SUCCESSFULLY:
            # a whole run to its end (not a fragment's, not one cut short by st.rerun): the page as drawn,
            # whose fragments are the ones it asked to redraw
            self.finished += 1
            for fid in [f for f in self._timers if f not in self._asked]:
                self._timers.pop(fid).cancel()
        elif kind == "file_urls_response":
            self._file_urls[msg.file_urls_response.response_id] = msg.file_urls_response

    def _learn_pages(self, app_pages) -> None:
        for p in app_pages:
            self.pages[p.url_pathname] = p.page_script_hash

    def _element(self, el) -> None:
        kind = el.WhichOneof("type")
        if kind == "plotly_chart":
            if el.plotly_chart.spec and figure_has_data(el.plotly_chart.spec):
                self.figures.append({"at": time.monotonic(), "id": el.plotly_chart.id})
        elif kind == "exception":
            self.exceptions.append(f"{el.exception.type}: {el.exception.message}"[:300])
        elif kind is not None and hasattr(getattr(el, kind), "label") and hasattr(getattr(el, kind), "id"):
            w = getattr(el, kind)
            self.widgets[w.label] = w

    def _every(self, fragment_id: str, interval: float) -> None:
        old = self._timers.pop(fragment_id, None)
        if old is not None:
            old.cancel()

        async def tick():
            while True:
                await asyncio.sleep(interval)
                await self._send_rerun(fragment_id=fragment_id, auto=True)

        self._timers[fragment_id] = asyncio.create_task(tick())

    # ------------------------------------------------------------------ what the user does
    async def open(self, page: str = "", *, timeout: float = 120.0, figure: bool = True) -> float | None:
        """Open ``page`` (its url path; "" the default page) as a click on its link does (a new
        run of the script for that page, the widgets as they are); seconds to its first figure
        with data (None: none within ``timeout``).  ``figure=False``: do not wait (a page without
        a figure; :meth:`ran` waits for its run)."""
        for t in self._timers.values():  # a page's fragments end with the page
            t.cancel()
        self._timers.clear()
        self.page_name = page
        self.page_hash = self.pages.get(page, "")
        self.figures.clear()
        self._opened = self.finished
        t0 = time.monotonic()
        await self._send_rerun()
        if not figure:
            return 0.0
        return await self._until(lambda: bool(self.figures), t0, timeout)

    async def ran(self, *, timeout: float = 120.0) -> float | None:
        """Wait until a script run has finished since the last :meth:`open` (the page's whole run,
        as the browser's "running" status going away); seconds waited, None past ``timeout``."""
        return await self._until(lambda: self.finished > self._opened, time.monotonic(), timeout)

    async def choose(self, label: str, option: str, *, timeout: float = 120.0) -> bool:
        """Choose the first option matching the regular expression ``option`` in the selectbox
        ``label`` drawn by the last run (as a click in the browser does: a rerun with its new
        value); waits for that run to finish.  False when no such widget or option."""
        w = self.widgets.get(label)
        if w is None or not hasattr(w, "options"):
            return False
        pick = next((o for o in w.options if re.search(option, o)), None)
        if pick is None:
            return False
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        self.states[w.id] = WidgetState(id=w.id, string_value=pick)
        done = self.finished
        await self._send_rerun()
        return await self._until(lambda: self.finished > done, time.monotonic(), timeout) is not None

    async def click(self, label: str, *, timeout: float = 120.0) -> bool:
        """Press the button ``label`` drawn by the last run (a rerun with its trigger, sent once, as the
        browser does); waits for that run to finish.  False when no such button."""
        w = self.widgets.get(label)
        if w is None:
            return False
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        self.states[w.id] = WidgetState(id=w.id, trigger_value=True)
        done = self.finished
        try:
            await self._send_rerun()
        finally:
            del self.states[w.id]
        return await self._until(lambda: self.finished > done, time.monotonic(), timeout) is not None

    async def upload(self, label: str, name: str, data: bytes, *, mime: str = "text/csv",
                     timeout: float = 120.0) -> bool:
        """Upload ``data`` as the file ``name`` into the file uploader ``label`` drawn by the last run,
        as the browser does: ask the server for an address (``file_urls_request``), send the file there
        (HTTP PUT, multipart, with the XSRF cookie and header), then rerun with the uploader's new state;
        waits for that run to finish.  False when no such uploader or the server refused the file."""
        import uuid

        from streamlit.proto.BackMsg_pb2 import BackMsg
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        w = self.widgets.get(label)
        if w is None or not self.session_id:
            return False
        msg = BackMsg()
        rid = uuid.uuid4().hex
        msg.file_urls_request.request_id = rid
        msg.file_urls_request.session_id = self.session_id
        msg.file_urls_request.file_names.append(name)
        await self._ws.send(msg.SerializeToString())
        if await self._until(lambda: rid in self._file_urls, time.monotonic(), timeout) is None:
            return False
        answer = self._file_urls.pop(rid)
        if answer.error_msg or not answer.file_urls:
            return False
        urls = answer.file_urls[0]
        if not await asyncio.to_thread(self._put, urls.upload_url, name, data, mime):
            return False
        state = WidgetState(id=w.id)
        info = state.file_uploader_state_value.uploaded_file_info.add()
        info.file_id, info.name, info.size = urls.file_id, name, len(data)
        info.file_urls.CopyFrom(urls)
        self.states[w.id] = state
        done = self.finished
        await self._send_rerun()
        return await self._until(lambda: self.finished > done, time.monotonic(), timeout) is not None

    def _put(self, address: str, name: str, data: bytes, mime: str) -> bool:
        """The browser's upload request (blocking; run in a thread)."""
        import urllib.request

        base = self.url if not address.startswith("http") else ""
        with urllib.request.urlopen(self.url + "/_stcore/health", timeout=60) as r:  # sets the XSRF cookie
            cookie = next((c.split(";", 1)[0] for c in r.headers.get_all("Set-Cookie") or []
                           if c.startswith("_streamlit_xsrf=")), "")
        token = cookie.split("=", 1)[1] if cookie else ""
        boundary = "----nspca" + str(abs(hash(name)))
        body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"UploadedFile\"; filename=\"{name}\"\r\n"
                f"Content-Type: {mime}\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
        req = urllib.request.Request(base + address, data=body, method="PUT", headers={
            "Content-Type": f"multipart/form-data; boundary={boundary}", "X-Xsrftoken": token, "Cookie": cookie,
            "Origin": self.url})
        try:
            with urllib.request.urlopen(req, timeout=300) as r:
                return 200 <= r.status < 300
        except OSError:
            return False

    async def _until(self, predicate, t0: float, timeout: float) -> float | None:
        deadline = t0 + timeout
        while not predicate():
            left = deadline - time.monotonic()
            if left <= 0 or (self._reader is not None and self._reader.done()):
                return None
            self._changed.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._changed.wait(), min(left, 1.0))
        return time.monotonic() - t0


async def open_page(url: str, page: str = "", *, timeout: float = 120.0, query: str = "") -> float | None:
    """Open ``page`` of the app at ``url`` in a new session; seconds to its first figure with data
    (None: none within ``timeout``).  The session is closed after."""
    async with Client(url, query=query) as c:
        return await c.open(page, timeout=timeout)
