"""Streamlit's frontend files answered gzipped from memory (issue 41 item 1): ui.frontend_files on a
directory of its own, and the hook of ui.streamlit_runtime on Streamlit's own handler (an ASGI call,
no server)."""

from __future__ import annotations

import asyncio
import gzip
import os

import pytest

from ui import streamlit_runtime as sr
from ui.frontend_files import FrontendFiles, accepts_gzip


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
