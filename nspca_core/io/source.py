"""The bytes of a file (path, bytes or file-like, size-capped) and its kind
(by extension, or by magic bytes when it has no name).
"""

from __future__ import annotations

import io
import os
import stat
import zipfile
from pathlib import Path

from .._common.validation import InputError
from .archive import _ARCHIVE_ERRORS
from .formats import ALLOWED_EXTENSIONS, IMAGE_EXTENSIONS, TEXT_EXTENSIONS  # the registry (.formats)
from .loaded import DataFormatError, over_cap

__all__ = ["ALLOWED_EXTENSIONS", "IMAGE_EXTENSIONS", "TEXT_EXTENSIONS"]


def _read_source(source, filename, max_bytes) -> tuple[bytes, str]:
    """Bytes of ``source`` (path, bytes or file-like) and a display name; size-capped."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if path.is_dir():
            raise DataFormatError(f"`source` {str(path)!r} is a folder, not a file; give one data "
                                  "file (a folder of images must be zipped first)")
        if not path.is_file():
            raise DataFormatError(_not_a_file(path))
        size = path.stat().st_size
        if size > max_bytes:
            raise over_cap(None, f"file {path.name!r} is {size:,} bytes, over ", max_bytes, purpose="to load it")
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
            raise over_cap(None, f"file {name!r} is {size:,} bytes, over ", max_bytes, purpose="to load it")
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
        raise over_cap(None, f"file {name!r} is over ", max_bytes, unit=True, purpose="to load it")
    return data, name


def _not_a_file(path: Path) -> str:
    """Why ``path`` (not a folder, not a regular file) cannot be read: missing, a broken link, or
    a special file (a FIFO would block the reader, a device like /dev/zero never ends)."""
    try:
        mode = path.stat().st_mode  # follows links
    except OSError:
        if path.is_symlink():
            return (f"`source` {str(path)!r} is a broken symbolic link (to {os.readlink(path)!r}); "
                    "give a regular data file")
        return f"`source` file not found: {str(path)!r}"
    kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a character device" if stat.S_ISCHR(mode)
            else "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a special file")
    via = f" (a link to {os.path.realpath(path)!r})" if path.is_symlink() else ""
    return (f"`source` {str(path)!r}{via} is not a regular file but {kind}; give a regular data file "
            "(it is read whole, so pipes and devices are not read)")


def describe_bytes(data: bytes) -> str:
    """What ``data`` looks like from its first bytes, for messages ("a zip archive", "text ...")."""
    kinds = ((b"PK\x03\x04", "a zip archive"), (b"PK\x05\x06", "a zip archive (empty)"),
             (b"\x89PNG", "a PNG image"), (b"\xff\xd8", "a JPEG image"), (b"BM", "a BMP image"),
             (b"GIF8", "a GIF image"), (b"%PDF", "a PDF document"), (b"\x1f\x8b", "gzip-compressed data"),
             (b"\x93NUMPY", "a NumPy .npy array"), (b"MATLAB", "a MATLAB .mat file"),
             (b"\x89HDF", "an HDF5 file"), (b"II*\x00", "a TIFF image"), (b"MM\x00*", "a TIFF image"),
             (b"RIFF", "a RIFF (WebP/WAV/AVI) file"))
    for magic, what in kinds:
        if data.startswith(magic):
            return what
    if not data:
        return "empty"
    head = data[:40]
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and all(c.isprintable() or c in "\r\n\t" for c in text):
        return f"text (starting {text.splitlines()[0][:30]!r})" if text.strip() else "blank text"
    return f"binary data of an unknown kind (first bytes {data[:8].hex(' ')})"


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
    if ext in IMAGE_EXTENSIONS:
        found = _sniff_kind(data)
        if found not in IMAGE_EXTENSIONS:  # named as an image, but its bytes are something else
            what = describe_bytes(data)
            hint = {".zip": "; rename it to .zip (a .zip of same-size images is read one image per sample)",
                    ".npz": "; rename it to .npz", ".npy": "; rename it to .npy", ".mat": "; rename it to .mat"}
            raise DataFormatError(f"{name}: named {ext} but it is {what}, not a {ext[1:].upper()} image"
                                  + hint.get(found or "", "; give the file its real extension"))
    return ext
