"""Archives read safely in memory: member checks (path traversal, nested archives,
encryption, links, zip bombs), damaged-archive errors, and streamed reads of
members and gzip content under a running size cap.
"""

from __future__ import annotations

import gzip
import io
import re
import struct
import zipfile
import zlib
from contextlib import contextmanager
from pathlib import PurePosixPath

from .._common.said import Remedy
from .loaded import DataFormatError, over_cap


#: most files a .zip may hold
MAX_ZIP_MEMBERS = 20_000
#: bytes read from an archive member at a time (the running size cap is checked after each)
_CHUNK = 1 << 20
#: what a damaged or forged archive can raise while it is opened or read
_ARCHIVE_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, KeyError,
                   NotImplementedError, RuntimeError, struct.error, OverflowError, IndexError,
                   MemoryError)
_ARCHIVE_SUFFIXES = (".zip", ".npz", ".tar", ".gz", ".tgz", ".bz2", ".xz", ".7z", ".rar", ".jar")
_GZIP_MAGIC = b"\x1f\x8b"


def _check_zip_members(infos, name: str, max_bytes: int, *, allow_npy: bool = False,
                       allow: tuple = ()) -> None:
    """Reject path traversal, nested archives, too many members, zip bombs, encryption.

    ``allow``: member suffixes that are not nested archives here (a text
    corpus's ``docword.NAME.txt.gz`` or sparse ``.npz``, read in memory with a cap).
    """
    if len(infos) > MAX_ZIP_MEMBERS:
        raise DataFormatError(f"{name}: too many files in the archive ({len(infos):,}); the limit "
                              f"is {MAX_ZIP_MEMBERS:,}")
    total = 0
    for info in infos:
        fn = info.filename.replace("\\", "/")
        parts = PurePosixPath(fn).parts
        if fn.startswith("/") or re.match(r"^[A-Za-z]:", fn) or ".." in parts:
            raise DataFormatError(f"{name}: unsafe path in the archive: {info.filename!r} (absolute "
                                  "or '..' path traversal); archives must hold relative names only")
        low = fn.lower()
        if low.endswith(_ARCHIVE_SUFFIXES) and not (allow_npy and low.endswith(".npy")) \
                and not low.endswith(allow):
            raise DataFormatError(f"{name}: nested archive {info.filename!r} inside the archive; "
                                  "put the images themselves in one .zip")
        if info.flag_bits & 0x1:
            raise DataFormatError(f"{name}: encrypted member {info.filename!r}; encrypted archives "
                                  "are not supported")
        if (info.external_attr >> 16) & 0o170000 == 0o120000:
            raise DataFormatError(f"{name}: {info.filename!r} is a symbolic link; archives must "
                                  "hold the files themselves, not links")
        total += info.file_size
    if total > max_bytes:
        raise over_cap(name, f"the archive expands to {total:,} bytes, over ", max_bytes, " (possible zip bomb)")


def _open_zip(data: bytes, name: str, what: str = ".zip") -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(io.BytesIO(data))
    except _ARCHIVE_ERRORS as exc:
        kind = what if what == ".zip" else f"{what} (zip)"
        raise DataFormatError(f"{name}: not a valid {kind} file ({type(exc).__name__}: "
                              f"{exc})") from None


@contextmanager
def _archive_errors(name: str, what: str = ".zip"):
    """Every failure inside a damaged or forged archive becomes a DataFormatError."""
    try:
        yield
    except DataFormatError:
        raise
    except _ARCHIVE_ERRORS as exc:
        raise DataFormatError(f"{name}: the {what} archive is damaged or forged (its sizes or "
                              f"checksums do not match its content: {type(exc).__name__}: {exc}); "
                              "re-create it with a standard zip tool") from None


def _read_capped(fh, budget: int, too_big) -> bytes:
    """Everything ``fh`` yields, read in chunks; past ``budget`` bytes, ``too_big`` raised (a
    DataFormatError, or a function of the bytes read so far giving one).

    The cap is checked after every chunk, on what decompression actually yields
    (the sizes an archive announces can lie).
    """
    parts, got = [], 0
    while True:
        chunk = fh.read(min(_CHUNK, budget - got + 1))
        if not chunk:
            break
        got += len(chunk)
        if got > budget:
            raise too_big if isinstance(too_big, DataFormatError) else too_big(got)
        parts.append(chunk)
    return b"".join(parts)


def _read_member(zf: zipfile.ZipFile, info, budget: int, name: str) -> bytes:
    """A member's bytes, streamed with a running cap of ``budget`` bytes.

    The sizes in a zip directory can lie (a forged zip bomb): what counts is
    what decompression actually yields, checked after every chunk.
    """
    with zf.open(info) as fh:
        plain = f"the archive expands to more than the size cap while reading {info.filename!r} (possible zip bomb)"
        remedy = Remedy("max_bytes", verb="raise", purpose="if this is intended")
        return _read_capped(fh, budget, DataFormatError(
            f"{name}: the archive expands to more than the size cap (max_bytes) while reading "
            f"{info.filename!r} (possible zip bomb); {remedy.api()}", argument="max_bytes", source=name,
            plain=plain, remedy=remedy))


def _gunzip(data: bytes, name: str, max_bytes: int) -> bytes:
    """The content of gzip ``data`` (returned as is when not gzip), capped at ``max_bytes``.

    Decompression is streamed and the cap checked after every chunk, so a small
    forged file cannot expand without limit (a gzip bomb): it stops at the cap,
    and the message gives an estimate of the whole (:func:`_gzip_estimate`).  A
    truncated or damaged stream is a DataFormatError, never an EOFError.
    """
    if not data.startswith(_GZIP_MAGIC):
        return data
    def too_big(got: int) -> DataFormatError:
        total, how = _gzip_estimate(data, got, raw.tell())
        return over_cap(name, "the gzip content expands to more than ", max_bytes,
                        f" (about {total:,} bytes in all, by {how}; possible gzip bomb: {len(data):,} "
                        "compressed bytes); stopped at the cap, nothing else was decompressed", unit=True)

    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as fh:
            raw = fh.fileobj  # the compressed stream: its position says how much was consumed
            return _read_capped(fh, max_bytes, too_big)
    except (OSError, EOFError, zlib.error) as exc:
        raise DataFormatError(f"{name}: the gzip file is truncated or damaged ({exc}); download "
                              "or compress it again") from None


def _gzip_estimate(data: bytes, got: int, consumed: int) -> tuple[int, str]:
    """How many bytes a gzip stream expands to, known after ``got`` bytes from ``consumed``
    compressed ones: its trailer's size (the last 4 bytes, modulo 2**32) when that is not
    smaller than what was read, else the compression ratio so far applied to the whole file."""
    isize = struct.unpack("<I", data[-4:])[0] if len(data) >= 18 else 0
    if isize >= got:
        return isize, "its gzip trailer"
    consumed = max(1, min(int(consumed), len(data)))
    return int(got * len(data) / consumed), f"the compression ratio so far, {got / consumed:,.0f}:1"
