"""A ``.zip`` of images: one grey image per sample, sizes checked from the headers
before anything is decoded.
"""

from __future__ import annotations

import io
import os
import re
import struct
import zipfile
from pathlib import PurePosixPath

import numpy as np

from .._common.said import Note, Remedy
from .archive import _archive_errors, _check_zip_members, _open_zip, _read_member
from .loaded import DataFormatError, _finish, _names_for
from .source import IMAGE_EXTENSIONS, describe_bytes


#: most pixels of one image (PIL's decompression-bomb limit is ~89 M)
MAX_IMAGE_PIXELS = 25_000_000
#: most pixels of all the images of a .zip together (800 MB as float64)
MAX_TOTAL_PIXELS = 100_000_000


_JUNK = ("__MACOSX/", ".DS_Store", "Thumbs.db", "desktop.ini")


def zip_holds_images(data: bytes) -> bool:
    """Whether the bytes of a ``.zip`` hold image files (what the ``resize`` option applies to).

    Reads the archive's directory only (no member is decompressed); an unreadable archive holds
    none (reading it then says what is wrong).  macOS resource folders and hidden files are not
    counted."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            names = [i.filename.replace("\\", "/") for i in zf.infolist() if not i.is_dir()]
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return False
    return any(PurePosixPath(fn).name.lower().endswith(IMAGE_EXTENSIONS) for fn in names
               if not fn.startswith("__MACOSX/") and not PurePosixPath(fn).name.startswith("."))


def _image_size(raw: bytes, label: str, name: str) -> tuple[int, int]:
    """(width, height) from the image header only (nothing decoded)."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(raw)) as im:
            return im.size
    except (UnidentifiedImageError, OSError, ValueError, struct.error, SyntaxError, EOFError,
            Image.DecompressionBombError) as exc:
        raise _unreadable(raw, label, name, exc) from None


def _unreadable(raw: bytes, label: str, name: str, exc: Exception) -> DataFormatError:
    """Why an archive member named as an image is not one: what its bytes are (never PIL's
    "cannot identify image file <_io.BytesIO object at 0x...>")."""
    from PIL import UnidentifiedImageError

    ext = os.path.splitext(label)[1].lower()
    what = describe_bytes(raw)
    if (isinstance(exc, UnidentifiedImageError) or not raw) and "image" not in what:
        return DataFormatError(f"{name}: {label!r} is not a readable image: it is named {ext} but holds "
                               f"{what}; the archive must hold images ({', '.join(IMAGE_EXTENSIONS)})")
    detail = ("its header does not match any image format PIL reads" if isinstance(exc, UnidentifiedImageError)
              else re.sub(r"<_io\.BytesIO object at 0x[0-9a-f]+>", "the member", str(exc)))
    return DataFormatError(f"{name}: {label!r} is not a readable image (damaged or unsupported: {detail})")


def _decode_image(raw: bytes, label: str, name: str, notes_acc: dict) -> np.ndarray:
    from PIL import Image, UnidentifiedImageError

    try:
        im = Image.open(io.BytesIO(raw))
        w, h = im.size
        if w * h > MAX_IMAGE_PIXELS:
            raise DataFormatError(f"{name}: image {label!r} is {w}x{h} pixels, over the limit of "
                                  f"{MAX_IMAGE_PIXELS:,} pixels")
        mode = im.mode
        if mode in ("I;16", "I;16B", "I;16L", "I", "F"):
            arr = np.asarray(im, dtype=np.float64)
        elif mode == "L":
            arr = np.asarray(im, dtype=np.float64)
        else:
            notes_acc.setdefault(mode, 0)
            notes_acc[mode] += 1
            arr = np.asarray(im.convert("L"), dtype=np.float64)
        return arr
    except DataFormatError:
        raise
    except (UnidentifiedImageError, OSError, ValueError, struct.error, SyntaxError, EOFError,
            Image.DecompressionBombError) as exc:
        raise _unreadable(raw, label, name, exc) from None


def _mix(files: list) -> str:
    """What a .zip without images holds, by kind, and what a .zip is read as (for the message)."""
    if not files:
        return ""
    kinds: dict = {}
    for fn in files:
        ext = os.path.splitext(fn)[1].lower() or "(no extension)"
        kinds[ext] = kinds.get(ext, 0) + 1
    held = ", ".join(f"{c} {e}" for e, c in sorted(kinds.items(), key=lambda ec: (-ec[1], ec[0])))
    return (f"; it holds {held} file(s). A .zip is read as images (one per sample), as .txt documents "
            "(at least 2, and at least as many as its other files, which are then skipped), as a 10x "
            "folder or as a text corpus (docword/.mtx/.npz with its vocabulary); a table (.csv/.tsv) "
            "is read by itself, not zipped")


def _load_zip(data: bytes, name: str, resize, nan_policy: str, max_bytes: int):
    import pandas as pd

    notes: list = []
    zf = _open_zip(data, name)
    with zf, _archive_errors(name):
        infos = [i for i in zf.infolist() if not i.is_dir()]
        _check_zip_members(infos, name, max_bytes)
        images, skipped, junk = [], [], 0
        for info in sorted(infos, key=lambda i: i.filename):
            fn = info.filename.replace("\\", "/")
            base = PurePosixPath(fn).name
            if fn.startswith("__MACOSX/") or base in _JUNK or base.startswith("._"):
                junk += 1
                continue
            if os.path.splitext(base)[1].lower() not in IMAGE_EXTENSIONS:
                skipped.append(fn)
                continue
            images.append(info)
        if skipped:
            notes.append(f"ignored {len(skipped)} non-image file(s): {', '.join(skipped[:5])}"
                         f"{', ...' if len(skipped) > 5 else ''}")
        if junk:
            notes.append(f"ignored {junk} system file(s) (__MACOSX, .DS_Store, ...)")
        if not images:
            raise DataFormatError(f"{name}: the archive holds no images (allowed: "
                                  f"{', '.join(IMAGE_EXTENSIONS)})" + _mix(skipped))
        arrays, modes, read, pixels = [], {}, 0, 0
        for info in images:
            raw = _read_member(zf, info, max_bytes - read, name)
            read += len(raw)
            # decoded size from the header, before decoding: small files can hold huge images
            w, h = _image_size(raw, info.filename, name)
            pixels += w * h
            if pixels > MAX_TOTAL_PIXELS:
                raise DataFormatError(f"{name}: the images hold more than {MAX_TOTAL_PIXELS:,} "
                                      f"pixels in all (reached at {info.filename!r}, {w}x{h}); "
                                      "use fewer or smaller images")
            arrays.append(_decode_image(raw, info.filename, name, modes))
    files = [i.filename for i in images]
    for mode, count in modes.items():
        notes.append(f"{count} image(s) in mode {mode} converted to grey (PIL 'L': ITU-R 601-2 luma"
                     f"{', alpha dropped' if 'A' in mode else ''})")
    shapes = {}
    for a, f in zip(arrays, files):
        shapes.setdefault(a.shape, []).append(f)
    if resize is not None:
        from PIL import Image
        h, w = resize
        out = []
        changed = 0
        for a in arrays:
            if a.shape != (h, w):
                changed += 1
                a = np.asarray(Image.fromarray(a.astype(np.float32))
                               .resize((w, h), Image.BILINEAR), dtype=np.float64)
            out.append(a)
        arrays = out
        notes.append(Note(f"{changed} of {len(files)} image(s) resized (bilinear)",
                          text=f"resize=({h}, {w}) asked: {changed} of {len(files)} image(s) resized (bilinear)",
                          argument="resize", value=(h, w)))
    elif len(shapes) > 1:
        desc = "; ".join(f"{s[0]}x{s[1]} (h x w): {len(fs)} file(s), e.g. {fs[0]!r}"
                         for s, fs in list(shapes.items())[:5])
        raise DataFormatError(f"{name}: images of mixed sizes: {desc}; all images must have the "
                              "same size, or pass resize=(height, width) to resize them",
                              argument="resize", value=resize, source=name,
                              plain=f"images of mixed sizes: {desc}",
                              remedy=Remedy("resize", verb="pass", spelled="(height, width)",
                                            lead="all images must have the same size, or",
                                            purpose="to resize them"))
    h, w = arrays[0].shape
    X = np.stack([a.ravel() for a in arrays])
    folders = [str(PurePosixPath(f.replace("\\", "/")).parent) for f in files]
    labels = None
    if len(set(folders)) > 1:
        labels = np.array(folders)
        notes.append(f"images come from {len(set(folders))} folders: folder names used as labels")
    notes.insert(0, f"{len(files)} image(s) of {h}x{w} pixels in file-name order, one flattened "
                    "(row-major) image per row")
    metadata = pd.DataFrame({"file": files})
    return _finish(X, _names_for(h * w, (h, w)), labels, metadata, (h, w), notes, name, "zip",
                   nan_policy, sample_names=list(files))  # each image named by its file
