"""The bytes of a file (path, bytes or file-like, size-capped) and its kind
(by extension, or by magic bytes when it has no name).
"""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

from .._validation import InputError
from .archive import _ARCHIVE_ERRORS
from .loaded import DataFormatError


TEXT_EXTENSIONS = (".csv", ".tsv", ".tab", ".txt")
IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".pgm", ".bmp")
ALLOWED_EXTENSIONS = TEXT_EXTENSIONS + (".npy", ".npz", ".mat") + IMAGE_EXTENSIONS + (".zip", ".mtx",
                                                                                    ".gz")


def _read_source(source, filename, max_bytes) -> tuple[bytes, str]:
    """Bytes of ``source`` (path, bytes or file-like) and a display name; size-capped."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if path.is_dir():
            raise DataFormatError(f"`source` {str(path)!r} is a folder, not a file; give one data "
                                  "file (a folder of images must be zipped first)")
        if not path.is_file():
            raise DataFormatError(f"`source` file not found: {str(path)!r}")
        size = path.stat().st_size
        if size > max_bytes:
            raise DataFormatError(f"file {path.name!r} is {size:,} bytes, over the size cap "
                                  f"max_bytes={max_bytes:,}; raise max_bytes to load it")
        try:
            return path.read_bytes(), filename or path.name
        except OSError as exc:
            raise DataFormatError(f"cannot read {str(path)!r}: {exc.strerror or exc}") from None
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        name = filename or "uploaded data"
    elif hasattr(source, "read"):
        name = filename or os.path.basename(str(getattr(source, "name", "") or "")) or "uploaded file"
        size = getattr(source, "size", None)
        if isinstance(size, int) and size > max_bytes:
            raise DataFormatError(f"file {name!r} is {size:,} bytes, over the size cap "
                                  f"max_bytes={max_bytes:,}; raise max_bytes to load it")
        if hasattr(source, "seek"):
            try:
                source.seek(0)
            except (OSError, ValueError):
                pass
        data = source.read(max_bytes + 1)
        if isinstance(data, str):
            data = data.encode("utf-8")
    else:
        raise InputError("`source` must be a path, bytes or a file-like object (e.g. a Streamlit "
                         f"UploadedFile); got {type(source).__name__}")
    if len(data) > max_bytes:
        raise DataFormatError(f"file {name!r} is over the size cap max_bytes={max_bytes:,} bytes; "
                              "raise max_bytes to load it")
    return data, name


def _sniff_kind(data: bytes) -> str | None:
    """Format from magic bytes (used when there is no file name)."""
    if data.startswith(b"\x93NUMPY"):
        return ".npy"
    if data.startswith(b"PK\x03\x04") or data.startswith(b"PK\x05\x06"):
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                names = [n for n in zf.namelist() if not n.endswith("/")]
            return ".npz" if names and all(n.endswith(".npy") for n in names) else ".zip"
        except _ARCHIVE_ERRORS:
            return ".zip"  # the zip reader then says what is wrong
    if data.startswith(b"MATLAB"):
        return ".mat"
    if data.startswith(b"\x89PNG"):
        return ".png"
    if data.startswith(b"\xff\xd8"):
        return ".jpg"
    if data.startswith(b"BM"):
        return ".bmp"
    if data[:2] in (b"P2", b"P5"):
        return ".pgm"
    return None


def _extension(name: str, data: bytes, named: bool) -> str:
    ext = os.path.splitext(name)[1].lower()
    if not named and not ext:
        return _sniff_kind(data) or ".csv"
    if ext not in ALLOWED_EXTENSIONS:
        raise DataFormatError(f"unknown file type {ext or '(no extension)'!r} for {name!r}; "
                              f"allowed: {', '.join(ALLOWED_EXTENSIONS)}")
    return ext
