"""Compressed files read as streams: gzip, bzip2, xz (standard library) and Zstandard (the optional
``zstandard`` package), with a running cap on the decompressed size.

A decompression bomb is refused as soon as the content passes the cap, with an estimate of its
full size from the ratio so far (a small forged file cannot expand without limit, and nothing is
allocated for it first).  A truncated or damaged stream is a :class:`DataFormatError`.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import struct
import zlib
from pathlib import PurePosixPath

from .loaded import DataFormatError, over_cap

#: compression of a file by its last suffix
SUFFIXES = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz", ".zst": "zstd"}
#: magic bytes of each compression
MAGIC = ((b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"), (b"\x28\xb5\x2f\xfd", "zstd"))
#: what to run when zstandard is missing
ZSTD_INSTALL = "pip install 'nspca-core[formats]'  (or: pip install zstandard)"
_CHUNK = 1 << 20


def compression_of(name: str, head: bytes = b"") -> str | None:
    """"gzip", "bzip2", "xz", "zstd" (by magic bytes, else by suffix) or None."""
    for magic, kind in MAGIC:
        if head.startswith(magic):
            return kind
    return SUFFIXES.get(os.path.splitext(str(name))[1].lower())


def inner_name(name: str) -> str:
    """``table.tsv`` for ``table.tsv.gz`` (the name without its compression suffix)."""
    base, ext = os.path.splitext(str(name))
    return base if ext.lower() in SUFFIXES else str(name)


def _base(name: str) -> str:
    return PurePosixPath(str(name).replace("\\", "/")).name


class _Counting(io.RawIOBase):
    """A binary file that counts the (compressed) bytes read from it."""

    def __init__(self, raw):
        self.raw, self.count = raw, 0

    def readable(self):
        return True

    def readinto(self, b):
        data = self.raw.read(len(b))
        n = len(data)
        b[:n] = data
        self.count += n
        return n


def _errors():
    errs = (OSError, EOFError, zlib.error, lzma.LZMAError, ValueError, struct.error)
    try:
        import zstandard

        errs = errs + (zstandard.ZstdError,)
    except ImportError:
        pass
    return errs


class _ZstdReader:
    """Zstandard frames decompressed one after another; a frame cut short is an error (the
    library's stream reader ends quietly on a truncated file)."""

    def __init__(self, raw, zstandard):
        self.raw, self.z, self.pending, self.done = raw, zstandard, b"", False
        self.dobj = zstandard.ZstdDecompressor().decompressobj()

    def read(self, n):
        while len(self.pending) < n and not self.done:
            chunk = self.raw.read(_CHUNK)
            if not chunk:
                self.done = True
                if not self.dobj.eof:
                    raise EOFError("the Zstandard frame ends before its end mark")
                break
            while chunk:
                if self.dobj.eof:  # the next frame
                    chunk = self.dobj.unused_data + chunk if self.dobj.unused_data else chunk
                    self.dobj = self.z.ZstdDecompressor().decompressobj()
                self.pending += self.dobj.decompress(chunk)
                chunk = self.dobj.unused_data if self.dobj.eof else b""
        out, self.pending = self.pending[:n], self.pending[n:]
        return out

    def close(self):
        pass


class CappedStream(io.RawIOBase):
    """The decompressed content of ``raw`` (a binary file), at most ``cap`` bytes.

    Past the cap it raises :class:`DataFormatError` with the size estimated from the ratio
    so far and ``total`` (the compressed size, when known); a truncated or damaged stream
    raises :class:`DataFormatError` too.
    """

    def __init__(self, raw, kind: str, name: str, cap: int, total: int | None = None):
        self.counting = _Counting(raw)
        self.kind, self.name, self.cap, self.total, self.out = kind, name, cap, total, 0
        self._errs = _errors()
        try:
            if kind == "gzip":
                self.inner = gzip.GzipFile(fileobj=self.counting)
            elif kind == "bzip2":
                self.inner = bz2.BZ2File(self.counting)
            elif kind == "xz":
                self.inner = lzma.LZMAFile(self.counting)
            elif kind == "zstd":
                try:
                    import zstandard
                except ImportError:
                    raise DataFormatError(f"{name}: reading Zstandard (.zst) files needs the optional "
                                          f"package zstandard; install it with: {ZSTD_INSTALL}") from None
                self.inner = _ZstdReader(self.counting, zstandard)
            else:  # plain
                self.inner = self.counting
        except DataFormatError:
            raise
        except self._errs as exc:
            raise self._damaged(exc) from None

    def readable(self):
        return True

    def _damaged(self, exc) -> DataFormatError:
        what = {"gzip": "gzip", "bzip2": "bzip2", "xz": "xz", "zstd": "Zstandard"}.get(self.kind, "")
        return DataFormatError(f"{self.name}: the {what} file is truncated or damaged after {self.out:,} "
                               f"decompressed bytes ({type(exc).__name__}: {exc}); download or compress "
                               "it again")

    def readinto(self, b):
        try:
            data = self.inner.read(min(len(b), _CHUNK))
        except DataFormatError:
            raise
        except self._errs as exc:
            raise self._damaged(exc) from None
        n = len(data)
        self.out += n
        if self.out > self.cap:
            raise self._too_big()
        b[:n] = data
        return n

    def _too_big(self) -> DataFormatError:
        done = max(1, self.counting.count)
        ratio = self.out / done
        est = f" (about {int(ratio * self.total):,} bytes in all, estimated from the ratio so far, " \
              f"{ratio:,.0f}:1)" if self.total else f" (ratio so far {ratio:,.0f}:1)"
        return over_cap(self.name, "the compressed content expands to more than ", self.cap,
                        f"{est}; possible decompression bomb", unit=True)

    def close(self):
        try:
            if self.inner is not self.counting:
                self.inner.close()
        except self._errs:
            pass
        super().close()


def open_stream(raw, kind: str | None, name: str, cap: int, total: int | None = None) -> CappedStream:
    """A capped, decompressed binary stream over ``raw`` (``kind`` None: read as is, capped).

    (The size a gzip trailer announces is not trusted: it is modulo 2**32, and garbage in a
    truncated file; the running cap on what decompression yields is the guard.)
    """
    return CappedStream(raw, kind, name, cap, total)


def decompress(data: bytes, name: str, cap: int, kind: str | None = None) -> bytes:
    """The whole decompressed content of ``data`` (capped at ``cap`` bytes)."""
    kind = kind or compression_of(name, data[:8])
    stream = open_stream(io.BytesIO(data), kind, name, cap, total=len(data))
    parts = []
    with stream:
        while True:
            chunk = stream.read(_CHUNK)
            if not chunk:
                break
            parts.append(chunk)
    return b"".join(parts)
