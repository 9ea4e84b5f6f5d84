"""Streamlit's frontend files (its JavaScript, CSS, fonts), served gzipped from memory.

Why
---
Every new browser loads Streamlit's frontend: about 140 files, 10 MB, for the pages of this app
(issue 41).  Streamlit serves them with Starlette's ``StaticFiles``: per file a ``stat`` and an
``open`` in a worker thread, then the file read 64 KB at a time, each read another hop to a worker
thread, and the bytes sent uncompressed (Streamlit keeps its frontend out of its gzip middleware on
purpose: compressing per request would cost more).  On this app's server that was 0.25–0.42 CPU s
per student, more than the four teaching pages themselves.

Here each file is read and gzipped once per server, the first time a browser asks for it, and
answered from memory in one piece afterwards: no thread hop, a quarter of the bytes.  Only the files
Streamlit names by their content (under ``static/``, served ``immutable``) are answered; the page
itself (``index.html``, no-cache), an unknown path, a client that does not accept gzip or any other
method than GET/HEAD go to Streamlit's own handler, unchanged.  The memory kept is at most the
compressed size of the files browsers asked for (about 3 MB for this app).

:func:`ui.streamlit_runtime.serve_frontend_from_memory` puts :class:`FrontendFiles` in front of
Streamlit's handler (the one place that touches Streamlit's internals); this module knows nothing
of Streamlit and is tested on a directory of its own.
"""

from __future__ import annotations

import gzip
import hashlib
import mimetypes
import os
import threading
from dataclasses import dataclass
from email.utils import formatdate

__all__ = ["Entry", "FrontendFiles", "accepts_gzip", "PREFIX", "GZIP_LEVEL", "MIN_SAVING"]

PREFIX = "static/"  # Streamlit's content-hashed bundles (served "public, immutable")
GZIP_LEVEL = 6      # once per file and server: about 0.3 CPU s for the 10 MB a browser loads
MIN_SAVING = 0.9    # kept gzipped only when that is under 90 % of the file (not fonts and images)


@dataclass(frozen=True)
class Entry:
    """One file as it is sent: its bytes (gzipped or not) and its response headers."""

    body: bytes
    gzipped: bool
    headers: dict


def accepts_gzip(header: str) -> bool:
    """Whether an ``Accept-Encoding`` header value admits gzip (``gzip`` or ``*`` with q > 0)."""
    for part in header.split(","):
        name, _, params = part.strip().partition(";")
        if name.strip().lower() not in ("gzip", "*"):
            continue
        q = 1.0
        for p in params.split(";"):
            key, _, value = p.strip().partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        return q > 0
    return False


class FrontendFiles:
    """The files under ``root/PREFIX``, each read (and gzipped where that pays) once, on demand.

    Which files exist is listed once, when the object is made, by walking the directory: a request
    path is answered only when it is one of those names, so no path from a request reaches the file
    system.
    """

    def __init__(self, root: str, *, prefix: str = PREFIX, level: int = GZIP_LEVEL):
        self.root = os.path.realpath(root)
        self.level = int(level)
        self.names = frozenset(self._list(prefix))
        self._cache: dict[str, Entry] = {}
        self._lock = threading.Lock()
        self.reads = 0  # files read from disk (tests)
        self.replies: Replies | None = None  # the replay in front of the server, once installed

    def _list(self, prefix: str):
        top = os.path.join(self.root, prefix)
        for folder, _, files in os.walk(top):
            for name in files:
                full = os.path.join(folder, name)
                if os.path.isfile(full):
                    yield os.path.relpath(full, self.root).replace(os.sep, "/")

    def known(self, path: str) -> bool:
        """Whether ``path`` (relative to the root, as Starlette's ``get_path`` gives it) is served here."""
        return path.replace(os.sep, "/") in self.names

    def cached(self, path: str) -> Entry | None:
        return self._cache.get(path.replace(os.sep, "/"))

    def entry(self, path: str) -> Entry:
        """The file ``path`` as sent (read and compressed the first time; a known path only)."""
        name = path.replace(os.sep, "/")
        if name not in self.names:
            raise KeyError(name)
        hit = self._cache.get(name)
        if hit is not None:
            return hit
        with self._lock:  # browsers ask for the same files at once: each is compressed once
            hit = self._cache.get(name)
            if hit is None:
                hit = self._cache[name] = self._load(name)
        return hit

    def _load(self, name: str) -> Entry:
        full = os.path.join(self.root, name)
        with open(full, "rb") as f:
            raw = f.read()
        self.reads += 1
        packed = gzip.compress(raw, compresslevel=self.level, mtime=0)
        gzipped = len(packed) < MIN_SAVING * len(raw)
        body = packed if gzipped else raw
        media = mimetypes.guess_type(name)[0] or "text/plain"
        if media.startswith("text/") or media in ("application/javascript", "text/javascript"):
            media += "; charset=utf-8"
        headers = {"content-type": media, "content-length": str(len(body)),
                   "etag": '"' + hashlib.md5(body, usedforsecurity=False).hexdigest() + '"',
                   "last-modified": formatdate(os.stat(full).st_mtime, usegmt=True)}
        if gzipped:
            headers["content-encoding"] = "gzip"
            headers["vary"] = "Accept-Encoding"
        return Entry(body=body, gzipped=gzipped, headers=headers)

    def answer(self, path: str, method: str, request_headers: dict) -> tuple[int, Entry] | None:
        """``(status, entry)`` for a request of a cached file, or None when the caller must do
        something else (not a GET/HEAD, unknown path, not yet read, a gzipped file asked for by a
        client that does not accept gzip).  ``request_headers``: lower-case names."""
        if method not in ("GET", "HEAD"):
            return None
        hit = self.cached(path)
        if hit is None:
            return None
        if hit.gzipped and not accepts_gzip(request_headers.get("accept-encoding", "")):
            return None
        tags = request_headers.get("if-none-match", "")
        if tags and (tags.strip() == "*" or hit.headers["etag"] in (t.strip().removeprefix("W/")
                                                                      for t in tags.split(","))):
            return 304, hit
        return 200, hit


@dataclass(frozen=True)
class Reply:
    """One whole answer as the server sent it: the ASGI start message's headers and the body."""

    headers: tuple
    body: bytes


class Replies:
    """Answers to the frontend's files, recorded once per path as the server's whole stack gave them
    and replayed in front of that stack (an ASGI wrapper, :meth:`front`).

    Every request of a file still walks the server's middleware, its router and its static-files
    handler before :class:`FrontendFiles` answers from memory: for ~140 small answers per new
    browser that walk cost more than the answers (issue 41).  The first answer to a path is kept
    (its headers exactly as sent, e.g. the handler's ``cache-control``, and its body, the same bytes
    object :class:`FrontendFiles` holds) and later requests of that path get it directly.

    Only what is the same for every browser is replayed: a ``GET`` of a path that is exactly one of
    ``files``' names (``"/" + name``: no base URL), from a client that accepts gzip and sends no
    ``If-None-Match``, answered ``200`` in one body without ``set-cookie``.  Anything else goes to
    the stack, unchanged; a path is therefore never answered here before the stack answered it once.
    """

    def __init__(self, files: FrontendFiles):
        self.files = files
        self._kept: dict[str, Reply] = {}
        self.replayed = 0  # answers given here (tests, benchmarks)

    def kept(self, path: str) -> Reply | None:
        return self._kept.get(path)

    @staticmethod
    def _plain_gzip_request(scope) -> bool:
        """Accepts gzip, and no conditional request (whose answer depends on the browser's cache)."""
        encoding = ""
        for name, value in scope.get("headers", ()):
            name = name.lower()
            if name == b"if-none-match":
                return False
            if name == b"accept-encoding":
                encoding = value.decode("latin-1")
        return accepts_gzip(encoding)

    async def front(self, app, scope, receive, send) -> None:
        """The ASGI call of ``app`` with the replay in front."""
        if scope.get("type") == "http" and scope.get("method") == "GET":
            path = scope.get("path", "")
            kept = self._kept.get(path)
            if kept is not None or self.files.known(path[1:]):
                if self._plain_gzip_request(scope):
                    if kept is not None:
                        self.replayed += 1
                        await send({"type": "http.response.start", "status": 200, "headers": list(kept.headers)})
                        await send({"type": "http.response.body", "body": kept.body})
                        return
                    send = self._recording(path, send)
        await app(scope, receive, send)

    def _recording(self, path: str, send):
        got: dict = {}

        async def record(message) -> None:
            kind = message.get("type")
            if kind == "http.response.start":
                got["start"] = message
            elif kind == "http.response.body" and "start" in got and "done" not in got:
                got["done"] = True
                start = got["start"]
                headers = tuple((bytes(k), bytes(v)) for k, v in start.get("headers", ()))
                if (start.get("status") == 200 and not message.get("more_body", False)
                        and all(k.lower() != b"set-cookie" for k, _ in headers)):
                    self._kept.setdefault(path, Reply(headers=headers, body=bytes(message.get("body", b""))))
            await send(message)

        return record
