"""Streamlit's frontend files answered gzipped from memory (issue 41 item 1): ui.frontend_files on a
directory of its own, and the hook of ui.streamlit_runtime on Streamlit's own handler (an ASGI call,
no server)."""

from __future__ import annotations

import asyncio
import gzip
import os

import pytest

from ui import streamlit_runtime as sr
from ui.frontend_files import FrontendFiles, Replies, accepts_gzip


@pytest.fixture
def site(tmp_path):
    (tmp_path / "static" / "js").mkdir(parents=True)
    (tmp_path / "static" / "js" / "main.abc123.js").write_text("function f(){return 1}\n" * 400)
    (tmp_path / "static" / "media" / "x").mkdir(parents=True)
    (tmp_path / "static" / "media" / "x" / "font.woff2").write_bytes(os.urandom(5000))
    (tmp_path / "index.html").write_text("<html></html>")
    return tmp_path


@pytest.mark.parametrize("header, ok", [
    ("gzip, deflate, br, zstd", True), ("br;q=1.0, gzip;q=0.5", True), ("gzip;q=0", False),
    ("identity", False), ("", False), ("*", True), ("GZIP", True), ("deflate, *;q=0", False),
    ("gzip;q=x", False)])
def test_accept_encoding_is_read_like_rfc_9110(header, ok):
    assert accepts_gzip(header) is ok


def test_only_files_under_static_are_known_and_no_request_path_reaches_the_disk(site):
    files = FrontendFiles(str(site))
    assert files.names == {"static/js/main.abc123.js", "static/media/x/font.woff2"}
    for path in ("index.html", "static/../index.html", "static/js", "/etc/passwd", "static/js/none.js"):
        assert not files.known(path)
        with pytest.raises(KeyError):
            files.entry(path)


def test_text_is_sent_gzipped_and_incompressible_files_as_they_are_each_read_once(site):
    files = FrontendFiles(str(site))
    js = files.entry("static/js/main.abc123.js")
    assert js.gzipped and gzip.decompress(js.body) == (site / "static/js/main.abc123.js").read_bytes()
    assert js.headers["content-encoding"] == "gzip" and js.headers["vary"] == "Accept-Encoding"
    assert js.headers["content-type"].split(";")[0] in ("text/javascript", "application/javascript")
    assert int(js.headers["content-length"]) == len(js.body)
    font = files.entry("static/media/x/font.woff2")
    assert not font.gzipped and font.body == (site / "static/media/x/font.woff2").read_bytes()
    assert "content-encoding" not in font.headers
    for _ in range(3):
        files.entry("static/js/main.abc123.js")
    assert files.reads == 2


def test_answers_need_a_cached_file_a_get_and_gzip_when_gzipped(site):
    files = FrontendFiles(str(site))
    js, gz = "static/js/main.abc123.js", {"accept-encoding": "gzip"}
    assert files.answer(js, "GET", gz) is None  # not read yet: the caller reads it (off the loop)
    entry = files.entry(js)
    assert files.answer(js, "GET", gz) == (200, entry)
    assert files.answer(js, "HEAD", gz) == (200, entry)
    assert files.answer(js, "POST", gz) is None
    assert files.answer(js, "GET", {"accept-encoding": "identity"}) is None
    assert files.answer(js, "GET", {**gz, "if-none-match": entry.headers["etag"]}) == (304, entry)
    assert files.answer(js, "GET", {**gz, "if-none-match": '"other", W/' + entry.headers["etag"]}) == (304, entry)
    assert files.answer(js, "GET", {**gz, "if-none-match": '"other"'}) == (200, entry)
    font = "static/media/x/font.woff2"
    files.entry(font)
    assert files.answer(font, "GET", {})[0] == 200  # not gzipped: any client


def _call(app, path: str, headers: dict, method: str = "GET") -> tuple[int, dict, bytes]:
    """One HTTP request through an ASGI app, without a server."""
    scope = {"type": "http", "method": method, "path": path, "raw_path": path.encode(), "root_path": "",
             "query_string": b"", "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
             "http_version": "1.1", "scheme": "http",
             "asgi": {"version": "3.0", "spec_version": "2.4"}, "server": ("127.0.0.1", 80), "client": ("127.0.0.1", 1)}
    out = {"body": b""}
    asked = []

    async def receive():  # the request, then (once the response is sent) the client leaving
        asked.append(1)
        if len(asked) > 1:
            await asyncio.sleep(0)
            return {"type": "http.disconnect"}
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        if message["type"] == "http.response.start":
            out["status"] = message["status"]
            out["headers"] = {k.decode(): v.decode() for k, v in message["headers"]}
        else:
            out["body"] += message.get("body", b"")

    asyncio.run(app(scope, receive, send))
    return out["status"], out["headers"], out["body"]


def test_streamlits_handler_answers_its_bundles_gzipped_from_memory_and_the_rest_unchanged(monkeypatch):
    from starlette.staticfiles import StaticFiles
    from streamlit import file_util
    from streamlit.web.server.starlette.starlette_static_routes import create_streamlit_static_handler

    # Streamlit's own method (an earlier test in this process may have run the app, which installs
    # the in-memory answer process-wide); put back after the test
    original = StaticFiles.get_response
    while hasattr(original, "__wrapped__"):
        original = original.__wrapped__
    monkeypatch.setattr(StaticFiles, "get_response", original)
    _unwrapped_front(monkeypatch)
    monkeypatch.setattr(sr, "_frontend", [])
    root = file_util.get_static_dir()
    handler = create_streamlit_static_handler(root, None)
    bundle = next(n for n in sorted(os.listdir(os.path.join(root, "static", "js"))) if n.endswith(".js"))
    path = f"/static/js/{bundle}"
    raw = open(os.path.join(root, "static", "js", bundle), "rb").read()
    before = _call(handler, path, {"accept-encoding": "gzip"})
    assert before[0] == 200 and before[2] == raw and "content-encoding" not in before[1]
    files = sr.serve_frontend_from_memory()
    assert files is not None and sr.serve_frontend_from_memory() is files
    status, headers, body = _call(handler, path, {"accept-encoding": "gzip, deflate, br"})
    assert status == 200 and headers["content-encoding"] == "gzip" and gzip.decompress(body) == raw
    assert headers["cache-control"] == before[1]["cache-control"]  # Streamlit's headers still applied
    assert _call(handler, path, {"accept-encoding": "identity"})[2] == raw
    assert _call(handler, path, {"accept-encoding": "gzip", "if-none-match": headers["etag"]})[0] == 304
    page = _call(handler, "/", {"accept-encoding": "gzip"})  # index.html: Streamlit's answer, no-cache
    assert page[0] == 200 and page[1]["cache-control"] == "no-cache" and "content-encoding" not in page[1]
    assert _call(handler, "/static/js/../../index.html", {"accept-encoding": "gzip"})[0] == 400
    assert _call(handler, "/some/page", {"accept-encoding": "gzip"})[1]["cache-control"] == "no-cache"
    other = StaticFiles(directory=os.path.join(root, "static"))  # any other StaticFiles: untouched
    assert "content-encoding" not in _call(other, f"/js/{bundle}", {"accept-encoding": "gzip"})[1]


def test_a_moved_frontend_handler_is_said_and_streamlit_serves_as_before(monkeypatch, caplog):
    import streamlit.web.server.starlette.starlette_static_routes as routes

    monkeypatch.delattr(routes, "create_streamlit_static_handler")
    monkeypatch.setattr(sr, "_frontend", [])
    monkeypatch.setattr(sr, "_warned", set())
    assert any(p.startswith("frontend_files:") for p in sr.problems())
    with caplog.at_level("WARNING", logger="nspca.streamlit_runtime"):
        assert sr.serve_frontend_from_memory() is None
    assert any("frontend files" in r.getMessage() for r in caplog.records)


def _unwrapped_front(monkeypatch):
    """Streamlit's own outermost middleware (put back after the test, as with ``get_response``)."""
    from streamlit.web.server.starlette.starlette_path_security_middleware import PathSecurityMiddleware

    original = PathSecurityMiddleware.__call__
    while hasattr(original, "__wrapped__"):
        original = original.__wrapped__
    monkeypatch.setattr(PathSecurityMiddleware, "__call__", original)
    return PathSecurityMiddleware


class _Stack:
    """A toy server stack: answers every path, counts the calls; ``cookie`` adds a set-cookie."""

    def __init__(self, status=200, cookie=False, chunks=1):
        self.calls, self.status, self.cookie, self.chunks = 0, status, cookie, chunks

    async def __call__(self, scope, receive, send):
        self.calls += 1
        headers = [(b"content-type", b"text/javascript"), (b"cache-control", b"public, immutable"),
                   (b"x-call", str(self.calls).encode())]
        if self.cookie:
            headers.append((b"set-cookie", b"s=1"))
        await send({"type": "http.response.start", "status": self.status, "headers": headers})
        for i in range(self.chunks):
            await send({"type": "http.response.body", "body": b"part%d" % i, "more_body": i < self.chunks - 1})


def _through(replies, stack, path, headers=None, method="GET"):
    async def app(scope, receive, send):
        await replies.front(stack, scope, receive, send)

    return _call(app, path, {"accept-encoding": "gzip"} if headers is None else headers, method)


def test_the_first_answer_of_a_file_is_replayed_as_sent_and_anything_else_goes_to_the_stack(site):
    files = FrontendFiles(str(site))
    replies, stack = Replies(files), _Stack()
    js = "/static/js/main.abc123.js"
    first = _through(replies, stack, js)
    assert stack.calls == 1 and replies.kept(js) is not None
    for _ in range(3):  # later plain requests: the recorded answer, headers as the stack sent them
        assert _through(replies, stack, js) == first
    assert stack.calls == 1 and replies.replayed == 3
    # a client without gzip, a conditional request, HEAD, POST: the stack answers, every time
    for headers, method in (({"accept-encoding": "identity"}, "GET"), ({}, "GET"),
                            ({"accept-encoding": "gzip", "if-none-match": '"x"'}, "GET"),
                            ({"accept-encoding": "gzip"}, "HEAD"), ({"accept-encoding": "gzip"}, "POST")):
        before = stack.calls
        assert _through(replies, stack, js, headers, method)[1]["x-call"] == str(before + 1)
    # paths that are not exactly a frontend file are never recorded
    for path in ("/", "/index.html", "/static/js/none.js", "/static/js/../js/main.abc123.js", "/x" + js):
        for _ in range(2):
            _through(replies, stack, path)
        assert replies.kept(path) is None
    assert replies.replayed == 3


@pytest.mark.parametrize("stack", [_Stack(status=404), _Stack(cookie=True), _Stack(chunks=3)],
                         ids=["not-200", "set-cookie", "streamed"])
def test_an_answer_that_is_not_the_same_for_every_browser_is_not_replayed(site, stack):
    replies = Replies(FrontendFiles(str(site)))
    for _ in range(3):
        _through(replies, stack, "/static/js/main.abc123.js")
    assert stack.calls == 3 and replies.replayed == 0


def test_streamlits_middleware_replays_its_frontend_after_the_first_answer(monkeypatch):
    from starlette.staticfiles import StaticFiles
    from streamlit import file_util
    from streamlit.web.server.starlette.starlette_static_routes import create_streamlit_static_handler

    original = StaticFiles.get_response
    while hasattr(original, "__wrapped__"):
        original = original.__wrapped__
    monkeypatch.setattr(StaticFiles, "get_response", original)
    front = _unwrapped_front(monkeypatch)
    monkeypatch.setattr(sr, "_frontend", [])
    root = file_util.get_static_dir()
    served = []

    async def handler(scope, receive, send):  # Streamlit's handler, counted
        served.append(scope["path"])
        await create_streamlit_static_handler(root, None)(scope, receive, send)

    app = front(handler)  # the outermost of Streamlit's middleware, around its frontend
    files = sr.serve_frontend_from_memory()
    assert files is not None and files.replies is not None
    bundle = next(n for n in sorted(os.listdir(os.path.join(root, "static", "js"))) if n.endswith(".js"))
    path, gz = f"/static/js/{bundle}", {"accept-encoding": "gzip, deflate, br"}
    first = _call(app, path, gz)
    raw = open(os.path.join(root, "static", "js", bundle), "rb").read()
    assert first[0] == 200 and gzip.decompress(first[2]) == raw and first[1]["cache-control"].startswith("public")
    assert _call(app, path, gz) == first and served == [path] and files.replies.replayed == 1
    assert _call(app, path, {"accept-encoding": "identity"})[2] == raw and served == [path, path]
    assert _call(app, "//etc/passwd", gz)[0] == 400  # Streamlit's own checks still stand in front of the rest
