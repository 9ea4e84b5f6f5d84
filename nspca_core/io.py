"""Turn a user's file into a data matrix (samples x features), safely and loudly.

``load_file(source, ...)`` reads CSV/TSV text, ``.npy``/``.npz`` (never
unpickled), MATLAB ``.mat`` (v4-v7.2, numeric arrays only), a ``.zip`` of images
(one grey image per sample) and returns a :class:`LoadedData`.  Anything it
cannot read unambiguously raises :class:`DataFormatError` (an
:class:`~nspca_core._validation.InputError`, hence a ``ValueError``) whose
message names the problem and what is allowed; anything it does to the data
(dropping a label column, converting colour to grey, dropping NaN rows when
asked) is said in ``notes``.  Nothing is written to disk; archives are read in
memory with their member names checked.
"""

from __future__ import annotations

import csv
import io
import os
import pickletools
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import numpy as np

from ._validation import InputError

__all__ = [
    "DataFormatError",
    "LoadedData",
    "load_file",
    "describe",
    "npz_variables",
    "mat_variables",
    "ALLOWED_EXTENSIONS",
    "NAN_POLICIES",
    "MAX_ZIP_MEMBERS",
    "npy_strings_without_unpickling",
]


class DataFormatError(InputError):
    """The file cannot be read as a data matrix; the message says why and what is allowed."""


TEXT_EXTENSIONS = (".csv", ".tsv", ".tab", ".txt")
IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".pgm", ".bmp")
ALLOWED_EXTENSIONS = TEXT_EXTENSIONS + (".npy", ".npz", ".mat") + IMAGE_EXTENSIONS + (".zip",)
NAN_POLICIES = ("error", "drop-rows", "drop-columns", "impute-mean")
#: most files a .zip may hold
MAX_ZIP_MEMBERS = 20_000
#: most pixels of one image (PIL's decompression-bomb limit is ~89 M)
MAX_IMAGE_PIXELS = 25_000_000
_ARCHIVE_SUFFIXES = (".zip", ".npz", ".tar", ".gz", ".tgz", ".bz2", ".xz", ".7z", ".rar", ".jar")
_MISSING = {"", "na", "n/a", "nan", "null", "none", "?", "-", "#n/a"}
_JUNK = ("__MACOSX/", ".DS_Store", "Thumbs.db", "desktop.ini")


@dataclass(frozen=True, eq=False)
class LoadedData:
    """A parsed file.

    Attributes
    ----------
    X : ndarray (m, n) float64 -- samples x features, finite
    feature_names : list[str] (n,)
    labels : ndarray (m,) or None -- one label per sample (a label column,
        a ``labels`` array, or image sub-folders)
    image_shape : (h, w) or None -- when each row is an image (row-major)
    notes : list[str] -- everything worth telling the user about the parse
    metadata : pandas.DataFrame or None -- non-numeric columns / file names, one row per sample
    source_name : str
    format : str -- "csv", "npy", "npz", "mat", "zip"
    variable : str or None -- the array / variable / label column used
    """

    X: np.ndarray
    feature_names: list
    labels: np.ndarray | None
    image_shape: tuple | None
    notes: list
    metadata: object
    source_name: str
    format: str = ""
    variable: str | None = None
    extra: dict = field(default_factory=dict)


# --------------------------------------------------------------------------- reading bytes

def _read_source(source, filename, max_bytes) -> tuple[bytes, str]:
    """Bytes of ``source`` (path, bytes or file-like) and a display name; size-capped."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.is_file():
            raise DataFormatError(f"`source` file not found: {str(path)!r}")
        size = path.stat().st_size
        if size > max_bytes:
            raise DataFormatError(f"file {path.name!r} is {size:,} bytes, over the size cap "
                                  f"max_bytes={max_bytes:,}; raise max_bytes to load it")
        return path.read_bytes(), filename or path.name
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
        except zipfile.BadZipFile:
            return ".zip"
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


# --------------------------------------------------------------------------- shared checks

def _fmt_positions(pos: np.ndarray, names=None, limit: int = 5) -> str:
    parts = []
    for i, j in pos[:limit]:
        col = f"'{names[j]}'" if names is not None else str(int(j))
        parts.append(f"(row {int(i)}, column {col})")
    return ", ".join(parts) + (", ..." if len(pos) > limit else "")


def _finish(X, names, labels, metadata, image_shape, notes, name, fmt, nan_policy, variable=None,
            extra=None) -> LoadedData:
    """Checks shared by every format: shape, non-finite values, constant columns."""
    X = np.asarray(X)
    if X.dtype == bool:
        X = X.astype(np.float64)
        notes.append("boolean values converted to 0/1")
    if X.dtype.kind == "c":
        raise DataFormatError(f"{name}: complex numbers are not supported; give real values")
    X = X.astype(np.float64, copy=False)
    bad = ~np.isfinite(X)
    if bad.any():
        nbad = int(bad.sum())
        pos = np.argwhere(bad)
        where = _fmt_positions(pos, names)
        if nan_policy == "error":
            raise DataFormatError(
                f"{name}: {nbad} NaN/inf value(s) (missing or infinite) in {int(bad.any(axis=1).sum())} "
                f"row(s) and {int(bad.any(axis=0).sum())} column(s), first at {where}; "
                "choose nan_policy='drop-rows', 'drop-columns' or 'impute-mean' to handle them, "
                "or fix the file")
        if nan_policy == "drop-rows":
            keep = ~bad.any(axis=1)
            dropped = np.flatnonzero(~keep)
            if not keep.any():
                raise DataFormatError(f"{name}: every row has a NaN/inf value; nan_policy='drop-rows' "
                                      "would leave no data")
            X = X[keep]
            labels = None if labels is None else labels[keep]
            if metadata is not None:
                metadata = metadata.iloc[keep].reset_index(drop=True)
            notes.append(f"nan_policy='drop-rows': dropped {dropped.size} row(s) with NaN/inf "
                         f"(rows {', '.join(map(str, dropped[:10]))}{', ...' if dropped.size > 10 else ''})")
        elif nan_policy == "drop-columns":
            keep = ~bad.any(axis=0)
            dropped = np.flatnonzero(~keep)
            if not keep.any():
                raise DataFormatError(f"{name}: every column has a NaN/inf value; "
                                      "nan_policy='drop-columns' would leave no data")
            X = X[:, keep]
            gone = [names[j] for j in dropped]
            names = [n for n, k in zip(names, keep) if k]
            image_shape = None  # pixels removed: rows are no longer images
            notes.append(f"nan_policy='drop-columns': dropped {dropped.size} column(s) with NaN/inf "
                         f"({', '.join(gone[:10])}{', ...' if len(gone) > 10 else ''})")
        else:  # impute-mean
            X = X.copy()
            X[bad] = np.nan
            counts = (~bad).sum(axis=0)
            empty = np.flatnonzero(counts == 0)
            if empty.size:
                raise DataFormatError(f"{name}: column(s) {[names[j] for j in empty[:10]]} have no "
                                      "finite value to impute a mean from; use nan_policy="
                                      "'drop-columns'")
            means = np.nanmean(X, axis=0)
            X[bad] = means[np.nonzero(bad)[1]]
            notes.append(f"nan_policy='impute-mean': replaced {nbad} NaN/inf value(s) by their "
                         f"column's mean (first at {where})")
    m, n = X.shape
    if m < 2:
        raise DataFormatError(f"{name}: a single row (sample); PCA needs at least 2 rows, "
                              "samples as rows and features as columns")
    if n < 2:
        raise DataFormatError(f"{name}: a single column (feature); sparse PCA needs at least 2 "
                              "numeric columns, samples as rows and features as columns")
    const = np.all(X == X[0], axis=0)
    if const.any():
        idx = np.flatnonzero(const)
        shown = ", ".join(str(names[j]) for j in idx[:10]) + (", ..." if idx.size > 10 else "")
        notes.append(f"{idx.size} constant column(s) ({shown}): allowed, but they carry no "
                     "variance (standardizing keeps them at zero)")
    return LoadedData(X=np.ascontiguousarray(X), feature_names=[str(s) for s in names],
                      labels=labels, image_shape=image_shape, notes=notes, metadata=metadata,
                      source_name=name, format=fmt, variable=variable, extra=extra or {})


# --------------------------------------------------------------------------- CSV / TSV

def _decode(data: bytes, name: str, notes: list) -> str:
    if b"\x00" in data[:65536]:
        raise DataFormatError(f"{name}: binary content in a text file (NUL bytes); "
                              "is it really CSV/TSV?")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        notes.append("text is not UTF-8: read as Latin-1")
        return data.decode("latin-1")


def _choose_delimiter(lines: list[str], ext: str) -> str | None:
    """The delimiter giving a constant field count >= 2 on most sample lines.

    Returns None for whitespace-separated text.  Ties go to the preferred
    delimiter (tab for .tsv/.tab, then tab, ';', ',', '|').
    """
    sample = lines[:50]
    prefs = ["\t", ";", ",", "|"]
    best = None
    for rank, d in enumerate(prefs):
        counts = [len(r) for r in csv.reader(sample, delimiter=d)]
        modal = max(set(counts), key=counts.count)
        if modal < 2:
            continue
        frac = counts.count(modal) / len(counts)
        bonus = 1 if (d == "\t" and ext in (".tsv", ".tab")) else 0
        score = (frac >= 0.9, bonus, frac, -rank)
        if best is None or score > best[0]:
            best = (score, d)
    if best is not None and best[0][0]:
        return best[1]
    ws = [len(s.split()) for s in sample]
    if min(ws) >= 2 and len(set(ws)) == 1:
        return None
    return best[1] if best is not None else ","


def _strs(col) -> np.ndarray:
    """A column of text cells as stripped str."""
    return np.array([str(c).strip() for c in col], dtype=str)


def _parse_cells(cells: np.ndarray):
    """Parse a block of text cells column by column.

    Returns ``(values, numeric, missing)``: float values (NaN where missing or
    text), whether each cell is a number or a missing marker, whether it is a
    missing marker (empty, NA, ...).  A column of clean numbers takes the fast
    path (one C-level conversion); only columns with text or markers are
    examined cell by cell.
    """
    shape = cells.shape
    values = np.full(shape, np.nan)
    numeric = np.zeros(shape, dtype=bool)
    missing = np.zeros(shape, dtype=bool)
    for j in range(shape[1]):
        col = cells[:, j]
        try:
            values[:, j] = col.astype(np.float64)
            numeric[:, j] = True
            continue
        except ValueError:
            pass
        for i, raw in enumerate(col):
            t = str(raw).strip()
            if t.lower() in _MISSING:
                missing[i, j] = numeric[i, j] = True
                continue
            try:
                values[i, j] = float(t)
                numeric[i, j] = True
            except ValueError:
                pass
    return values, numeric, missing


def _load_text(data: bytes, name: str, ext: str, nan_policy: str, label_column, header):
    import pandas as pd

    notes: list = []
    text = _decode(data, name, notes)
    raw_lines = text.splitlines()
    lines = [ln for ln in raw_lines if ln.strip()]
    if not lines:
        raise DataFormatError(f"{name}: the file is empty (no data rows)")
    last = max(i for i, ln in enumerate(raw_lines) if ln.strip())
    inner_blank = sum(1 for ln in raw_lines[:last] if not ln.strip())
    if inner_blank:
        notes.append(f"skipped {inner_blank} blank line(s)")
    delim = _choose_delimiter(lines, ext)
    if delim is None:
        rows = [ln.split() for ln in lines]
        notes.append("whitespace-separated columns")
    else:
        rows = list(csv.reader(lines, delimiter=delim))
        notes.append(f"delimiter {'TAB' if delim == chr(9) else repr(delim)}")
    # drop a trailing empty field present on every row (a trailing delimiter)
    if rows and all(len(r) > 1 and r[-1].strip() == "" for r in rows):
        rows = [r[:-1] for r in rows]
        notes.append("ignored a trailing delimiter at the end of every line")
    widths = np.array([len(r) for r in rows])
    expected = widths[0]
    if (widths != expected).any():
        badrows = np.flatnonzero(widths != expected)
        shown = ", ".join(f"line {i + 1} has {widths[i]}" for i in badrows[:5])
        raise DataFormatError(f"{name}: ragged rows: the first line has {expected} field(s) but "
                              f"{shown}{', ...' if badrows.size > 5 else ''} "
                              f"({badrows.size} line(s) differ); every row needs the same number "
                              "of fields")
    cells = np.array(rows, dtype=object)
    v0, n0, m0 = _parse_cells(cells[:1])
    vals, numeric, missing = _parse_cells(cells[1:])
    # numbers like 'nan'/'inf' parse as floats: they are values (reported later), not text
    if header is None:
        first_text = ~n0[0] & ~m0[0]
        below_numeric = numeric.any(axis=0) if len(rows) > 1 else np.zeros(expected, bool)
        header = bool((first_text & below_numeric).any() or first_text.all())
    if header:
        names = [str(c).strip() or f"col_{j}" for j, c in enumerate(cells[0])]
        body, bnum, bmiss, bval = cells[1:], numeric, missing, vals
        notes.append("first line read as column names")
    else:
        names = [f"col_{j}" for j in range(expected)]
        body = cells
        bnum, bmiss, bval = (np.vstack([n0, numeric]), np.vstack([m0, missing]),
                             np.vstack([v0, vals]))
    if body.shape[0] == 0:
        raise DataFormatError(f"{name}: header only (column names but no data rows)")
    if len(set(names)) < len(names):
        seen: dict = {}
        uniq = []
        for nm in names:
            seen[nm] = seen.get(nm, -1) + 1
            uniq.append(nm if seen[nm] == 0 else f"{nm}.{seen[nm]}")
        names = uniq
        notes.append("duplicate column names made unique (.1, .2, ...)")
    # column kinds: numeric (every cell a number or missing), text (mostly non-numbers)
    frac_num = (bnum & ~bmiss).sum(axis=0) / np.maximum(1, (~bmiss).sum(axis=0))
    all_missing = bmiss.all(axis=0)
    is_num = bnum.all(axis=0) & ~all_missing
    mixed = ~is_num & ~all_missing & (frac_num > 0.5)
    if mixed.any():
        j = int(np.flatnonzero(mixed)[0])
        rows_bad = np.flatnonzero(~bnum[:, j])
        shown = ", ".join(f"row {i} ({str(body[i, j]).strip()!r})" for i in rows_bad[:3])
        raise DataFormatError(f"{name}: column '{names[j]}' is numeric except for "
                              f"{rows_bad.size} value(s): {shown}; fix them or write them as NA "
                              "(missing) and choose a nan_policy")
    if all_missing.any():
        gone = [names[j] for j in np.flatnonzero(all_missing)]
        notes.append(f"ignored {len(gone)} empty column(s): {', '.join(gone[:10])}")
    text_cols = [j for j in range(expected) if not is_num[j] and not all_missing[j]]
    num_cols = [j for j in range(expected) if is_num[j]]
    # the label column: asked for by name/index, else the first text column with repeats
    label_idx = None
    if label_column is not None:
        if isinstance(label_column, str) and label_column in names:
            label_idx = names.index(label_column)
        elif isinstance(label_column, int) and not isinstance(label_column, bool) \
                and -expected <= label_column < expected:
            label_idx = label_column % expected
        else:
            raise InputError(f"`label_column` must be one of the column names {names[:20]} or an "
                             f"index in [0, {expected - 1}]; got {label_column!r}")
    elif text_cols:
        for j in text_cols:
            if len(set(_strs(body[:, j]).tolist())) < body.shape[0]:
                label_idx = j
                break
    labels = None
    if label_idx is not None:
        labels = _strs(body[:, label_idx])
        if label_idx in num_cols:
            num_cols.remove(label_idx)
            notes.append(f"column '{names[label_idx]}' used as labels (removed from the features, "
                         "as asked)")
        else:
            notes.append(f"text column '{names[label_idx]}' used as labels "
                         f"({len(set(labels.tolist()))} distinct values)")
    if not num_cols:
        raise DataFormatError(f"{name}: non-numeric matrix: no column holds only numbers "
                              f"(columns: {names[:10]}{' ...' if len(names) > 10 else ''}); "
                              "features must be numeric, with at most some text columns for "
                              "labels/metadata")
    meta_cols = [j for j in text_cols if j != label_idx]
    metadata = None
    if text_cols or label_idx is not None:
        keep = [j for j in range(expected) if (j in text_cols or j == label_idx)]
        metadata = pd.DataFrame({names[j]: _strs(body[:, j]) for j in keep})
    if meta_cols:
        notes.append(f"{len(meta_cols)} non-numeric column(s) kept as metadata, not features: "
                     f"{', '.join(names[j] for j in meta_cols[:10])}")
    X = bval[:, num_cols]
    return _finish(X, [names[j] for j in num_cols], labels, metadata, None, notes, name,
                   "csv", nan_policy, variable=None if label_idx is None else names[label_idx])


# --------------------------------------------------------------------------- npy / npz

def npy_strings_without_unpickling(raw: bytes) -> np.ndarray | None:
    """Read a ``.npy`` holding a 1-D object array of str WITHOUT unpickling it.

    Object arrays in ``.npy`` are pickles; loading them would run the pickle
    machine (arbitrary code).  Instead the pickle stream is only *disassembled*
    with :func:`pickletools.genops` (which executes nothing) and the string
    constants of the element list are collected, following memo references.
    Anything unexpected (other element types, a length mismatch) returns None
    and the caller falls back to generic names.
    """
    try:
        f = io.BytesIO(raw)
        version = np.lib.format.read_magic(f)
        shape, _, dtype = (np.lib.format.read_array_header_1_0(f) if version == (1, 0)
                           else np.lib.format.read_array_header_2_0(f))
        if dtype != np.dtype(object) or len(shape) != 1:
            return None
        memo: list = []
        last = None
        in_list, out = False, []
        allowed_in_list = {"MARK", "APPENDS", "APPEND", "MEMOIZE", "FRAME", "BINGET",
                           "LONG_BINGET", "SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8",
                           "UNICODE"}
        for op, arg, _pos in pickletools.genops(f):
            name = op.name
            if name == "FRAME":
                continue  # framing can fall between a push and its MEMOIZE
            if name == "MEMOIZE":
                memo.append(last)
                continue
            if name in ("PUT", "BINPUT", "LONG_BINPUT"):
                return None  # old protocols: not what numpy writes today
            if in_list:
                if name in ("BINGET", "LONG_BINGET"):
                    value = memo[arg] if arg < len(memo) else None
                    if not isinstance(value, str):
                        return None
                    out.append(value)
                    last = value
                    continue
                if name in ("SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE"):
                    out.append(arg)
                    last = arg
                    continue
                if name not in allowed_in_list:
                    break  # end of the element list (e.g. the closing BUILD)
                last = None
                continue
            if name == "EMPTY_LIST":
                in_list = True
            last = arg if isinstance(arg, str) else None
        if len(out) != shape[0]:
            return None
        return np.array(out, dtype=str)
    except Exception:  # any surprise: no names rather than a crash
        return None



def _npy_header(f) -> tuple:
    version = np.lib.format.read_magic(f)
    if version == (1, 0):
        return np.lib.format.read_array_header_1_0(f)
    return np.lib.format.read_array_header_2_0(f)


def _check_array_dtype(dtype, shape, what: str, name: str) -> None:
    if dtype.hasobject:
        raise DataFormatError(f"{name}: {what} holds Python objects (dtype=object), which are "
                              "stored as pickles; pickles are never loaded (they can run code). "
                              "Save a numeric array instead (e.g. X.astype(float))")
    if dtype.names is not None:
        raise DataFormatError(f"{name}: {what} is a structured array (fields {list(dtype.names)}); "
                              "give a plain numeric 2-D array")
    if dtype.kind in "USV":
        raise DataFormatError(f"{name}: {what} holds text (dtype {dtype}): non-numeric matrix")
    if dtype.kind not in "biufc":
        raise DataFormatError(f"{name}: {what} has unsupported dtype {dtype}")


def _as_matrix(arr: np.ndarray, what: str, name: str, notes: list):
    """2-D as is; 3-D (N, h, w) as N images; anything else an error."""
    if arr.ndim == 2:
        return arr, None
    if arr.ndim == 3:
        N, h, w = arr.shape
        notes.append(f"{what} has shape {arr.shape}: read as {N} images of {h}x{w}, "
                     "one flattened (row-major) image per row")
        return arr.reshape(N, h * w), (h, w)
    if arr.ndim == 1:
        raise DataFormatError(f"{name}: {what} is 1-D (shape {arr.shape}): a single row or column; "
                              "need a 2-D array, samples as rows and features as columns")
    raise DataFormatError(f"{name}: {what} has {arr.ndim} dimensions (shape {arr.shape}); "
                          "need 2-D (samples x features) or 3-D (images x height x width)")


def _load_npy(data: bytes, name: str, nan_policy: str):
    notes: list = []
    f = io.BytesIO(data)
    try:
        shape, _, dtype = _npy_header(f)
    except Exception as exc:
        raise DataFormatError(f"{name}: not a valid .npy file ({exc})") from None
    _check_array_dtype(dtype, shape, "the array", name)
    try:
        arr = np.load(io.BytesIO(data), allow_pickle=False)
    except Exception as exc:
        raise DataFormatError(f"{name}: could not read the .npy array ({exc})") from None
    X, image_shape = _as_matrix(arr, "the array", name, notes)
    names = _names_for(X.shape[1], image_shape)
    return _finish(X, names, None, None, image_shape, notes, name, "npy", nan_policy)


def _names_for(n: int, image_shape) -> list:
    if image_shape is not None:
        h, w = image_shape
        return [f"pixel_{r}_{c}" for r in range(h) for c in range(w)]
    return [f"x{j}" for j in range(n)]


def _npz_index(data: bytes, name: str, max_bytes: int) -> dict:
    """name -> (shape, dtype) of every array, from headers only (no data read)."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise DataFormatError(f"{name}: not a valid .npz (zip) file") from None
    with zf:
        infos = [i for i in zf.infolist() if not i.is_dir()]
        _check_zip_members(infos, name, max_bytes, allow_npy=True)
        out = {}
        for info in infos:
            if not info.filename.endswith(".npy"):
                continue
            with zf.open(info) as fh:
                try:
                    shape, _, dtype = _npy_header(fh)
                except Exception as exc:
                    raise DataFormatError(f"{name}: member {info.filename!r} is not a valid .npy "
                                          f"({exc})") from None
            out[info.filename[:-4]] = (tuple(shape), dtype)
    if not out:
        raise DataFormatError(f"{name}: the .npz holds no arrays")
    return out


def _numeric_candidates(index: dict) -> list:
    return [k for k, (shape, dt) in index.items()
            if not dt.hasobject and dt.names is None and dt.kind in "biuf" and len(shape) in (2, 3)]


def npz_variables(source, *, filename=None, max_bytes: int = 200_000_000) -> list[dict]:
    """Numeric 2-D/3-D arrays of an ``.npz`` for a chooser: ``[{name, shape, dtype}]``."""
    data, name = _read_source(source, filename, max_bytes)
    index = _npz_index(data, name, max_bytes)
    return [{"name": k, "shape": index[k][0], "dtype": str(index[k][1])}
            for k in _numeric_candidates(index)]


_LABEL_KEYS = ("labels", "label", "y", "target", "targets", "classes")
_NAME_KEYS = ("feature_names", "features", "genes", "bands", "columns", "names_features")


def _load_npz(data: bytes, name: str, variable, nan_policy: str, max_bytes: int):
    notes: list = []
    index = _npz_index(data, name, max_bytes)
    listing = ", ".join(f"{k} {index[k][0]} {index[k][1]}" for k in index)
    if variable is not None:
        if variable not in index:
            raise DataFormatError(f"{name}: no array named {variable!r}; it holds: {listing}")
        chosen = variable
        _check_array_dtype(index[chosen][1], index[chosen][0], f"array {chosen!r}", name)
    else:
        cands = _numeric_candidates(index)
        if not cands:
            objs = [k for k, (_, dt) in index.items() if dt.hasobject]
            if objs:
                _check_array_dtype(index[objs[0]][1], index[objs[0]][0], f"array {objs[0]!r}", name)
            raise DataFormatError(f"{name}: no numeric 2-D or 3-D array; it holds: {listing}")
        if len(cands) > 1:
            raise DataFormatError(f"{name}: several numeric arrays ({', '.join(cands)}); choose one "
                                  f"with variable=... ; it holds: {listing}")
        chosen = cands[0]
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        arr = z[chosen]
        X, image_shape = _as_matrix(arr, f"array {chosen!r}", name, notes)
        m, n = X.shape
        labels = None
        names = _names_for(n, image_shape)
        for key in index:
            if key == chosen:
                continue
            shape, dt = index[key]
            strings = None
            if dt.hasobject:
                # a pickled list of strings (names, labels) is read statically, never unpickled
                if key.lower() in _LABEL_KEYS + _NAME_KEYS:
                    with zipfile.ZipFile(io.BytesIO(data)) as zf:
                        strings = npy_strings_without_unpickling(zf.read(key + ".npy"))
                if strings is None:
                    notes.append(f"array {key!r} holds Python objects (a pickle) and was not loaded")
                    continue
                notes.append(f"array {key!r} is a pickled object array: its strings were read "
                             "without unpickling")
            if key.lower() in _LABEL_KEYS and shape == (m,) and labels is None:
                labels = z[key] if strings is None else strings
                notes.append(f"array {key!r} used as labels")
            elif key.lower() in _NAME_KEYS and shape == (n,) and (dt.kind in "US" or strings is not None):
                names = [str(s) for s in (z[key] if strings is None else strings)]
                notes.append(f"array {key!r} used as feature names")
            else:
                notes.append(f"array {key!r} {shape} not used")
    notes.insert(0, f"array {chosen!r} {arr.shape} {arr.dtype}")
    return _finish(X, names, labels, None, image_shape, notes, name, "npz", nan_policy,
                   variable=chosen)


# --------------------------------------------------------------------------- .mat

def _mat_check_version(data: bytes, name: str) -> None:
    if b"MATLAB 7.3" in data[:128] or data[512:520] == b"\x89HDF\r\n\x1a\n":
        raise DataFormatError(f"{name}: MATLAB v7.3 (HDF5) .mat files are not supported; in "
                              "MATLAB re-save with save(file, var, '-v7'), or export to .csv/.npy")


def _loadmat(data: bytes, name: str) -> dict:
    import scipy.io

    _mat_check_version(data, name)
    try:
        return scipy.io.loadmat(io.BytesIO(data), squeeze_me=False, chars_as_strings=True)
    except NotImplementedError as exc:
        raise DataFormatError(f"{name}: unsupported .mat version ({exc}); re-save with "
                              "'-v7' or export to .csv/.npy") from None
    except Exception as exc:
        raise DataFormatError(f"{name}: not a readable .mat file ({type(exc).__name__}: {exc})") from None


def _mat_numeric(content: dict) -> dict:
    return {k: v for k, v in content.items()
            if not k.startswith("__") and isinstance(v, np.ndarray) and v.dtype.names is None
            and v.dtype.kind in "biuf" and v.ndim in (2, 3) and v.size > 0
            and not (v.ndim == 2 and 1 in v.shape)}


def mat_variables(source, *, filename=None, max_bytes: int = 200_000_000) -> list[dict]:
    """Numeric matrices of a ``.mat`` file for a chooser: ``[{name, shape, dtype}]``."""
    data, name = _read_source(source, filename, max_bytes)
    content = _loadmat(data, name)
    return [{"name": k, "shape": v.shape, "dtype": str(v.dtype)}
            for k, v in _mat_numeric(content).items()]


def _mat_labels(v, m: int):
    """A label vector from a numeric vector, a char matrix or a cell array of strings."""
    if not isinstance(v, np.ndarray):
        return None
    if v.dtype.kind in "biuf" and v.size == m and (v.ndim == 1 or 1 in v.shape):
        return v.ravel()
    if v.dtype.kind == "U" and v.shape[0] == m:
        return np.array([str(s).strip() for s in v.ravel()]) if v.size == m else None
    if v.dtype == object and v.size == m:
        out = []
        for cell in v.ravel():
            if isinstance(cell, np.ndarray) and cell.dtype.kind == "U" and cell.size == 1:
                out.append(str(cell.ravel()[0]))
            else:
                return None
        return np.array(out)
    return None


def _load_mat(data: bytes, name: str, variable, nan_policy: str):
    notes: list = []
    content = _loadmat(data, name)
    numeric = _mat_numeric(content)
    user = {k: v for k, v in content.items() if not k.startswith("__")}
    listing = ", ".join(f"{k} {getattr(v, 'shape', '')} {getattr(v, 'dtype', type(v).__name__)}"
                        for k, v in user.items()) or "(nothing)"
    if variable is not None:
        if variable not in user:
            raise DataFormatError(f"{name}: no variable named {variable!r}; it holds: {listing}")
        if variable not in numeric:
            raise DataFormatError(f"{name}: variable {variable!r} is not a numeric 2-D/3-D matrix; "
                                  f"numeric matrices: {list(numeric) or 'none'}")
        chosen = variable
    else:
        if not numeric:
            raise DataFormatError(f"{name}: no numeric matrix in the .mat file (need a numeric "
                                  f"2-D array with >= 2 rows and columns); it holds: {listing}")
        if len(numeric) > 1:
            raise DataFormatError(f"{name}: several numeric matrices ({', '.join(numeric)}); choose "
                                  f"one with variable=... ; it holds: {listing}")
        chosen = next(iter(numeric))
    X, image_shape = _as_matrix(numeric[chosen], f"variable {chosen!r}", name, notes)
    m, n = X.shape
    labels = None
    names = _names_for(n, image_shape)
    for key, v in user.items():
        if key == chosen:
            continue
        if key.lower() in _LABEL_KEYS and labels is None:
            labels = _mat_labels(v, m)
            if labels is not None:
                notes.append(f"variable {key!r} used as labels")
                continue
        notes.append(f"variable {key!r} not used")
    notes.insert(0, f"variable {chosen!r} {numeric[chosen].shape} {numeric[chosen].dtype}")
    return _finish(X, names, labels, None, image_shape, notes, name, "mat", nan_policy,
                   variable=chosen)


# --------------------------------------------------------------------------- images / zip

def _check_zip_members(infos, name: str, max_bytes: int, *, allow_npy: bool = False) -> None:
    """Reject path traversal, nested archives, too many members, zip bombs, encryption."""
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
        if low.endswith(_ARCHIVE_SUFFIXES) and not (allow_npy and low.endswith(".npy")):
            raise DataFormatError(f"{name}: nested archive {info.filename!r} inside the archive; "
                                  "put the images themselves in one .zip")
        if info.flag_bits & 0x1:
            raise DataFormatError(f"{name}: encrypted member {info.filename!r}; encrypted archives "
                                  "are not supported")
        total += info.file_size
    if total > max_bytes:
        raise DataFormatError(f"{name}: the archive expands to {total:,} bytes, over the size cap "
                              f"max_bytes={max_bytes:,} (possible zip bomb); raise max_bytes if "
                              "this is intended")


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
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError) as exc:
        raise DataFormatError(f"{name}: {label!r} is not a readable image ({exc})") from None


def _load_zip(data: bytes, name: str, resize, nan_policy: str, max_bytes: int):
    import pandas as pd

    notes: list = []
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise DataFormatError(f"{name}: not a valid .zip file") from None
    with zf:
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
                                  f"{', '.join(IMAGE_EXTENSIONS)})")
        arrays, modes, read = [], {}, 0
        for info in images:
            # read with a hard limit: the declared sizes in the zip directory can lie
            with zf.open(info) as fh:
                raw = fh.read(max_bytes - read + 1)
            read += len(raw)
            if read > max_bytes:
                raise DataFormatError(f"{name}: the archive expands to more than max_bytes="
                                      f"{max_bytes:,} bytes (possible zip bomb)")
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
        notes.append(f"resize=({h}, {w}) asked: {changed} of {len(files)} image(s) resized "
                     "(bilinear)")
    elif len(shapes) > 1:
        desc = "; ".join(f"{s[0]}x{s[1]} (h x w): {len(fs)} file(s), e.g. {fs[0]!r}"
                         for s, fs in list(shapes.items())[:5])
        raise DataFormatError(f"{name}: images of mixed sizes: {desc}; all images must have the "
                              "same size, or pass resize=(height, width) to resize them")
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
                   nan_policy)


# --------------------------------------------------------------------------- front door

def _check_args(max_bytes, resize, nan_policy, variable, filename):
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
        raise InputError(f"`max_bytes` must be a positive int; got {max_bytes!r}")
    if nan_policy not in NAN_POLICIES:
        raise InputError(f"`nan_policy` must be one of {NAN_POLICIES}; got {nan_policy!r}")
    if variable is not None and not isinstance(variable, str):
        raise InputError(f"`variable` must be a string (an array/variable name) or None; "
                         f"got {variable!r}")
    if filename is not None and not isinstance(filename, str):
        raise InputError(f"`filename` must be a string or None; got {filename!r}")
    if resize is not None:
        ok = (isinstance(resize, (tuple, list)) and len(resize) == 2
              and all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in resize))
        if not ok:
            raise InputError(f"`resize` must be None or (height, width) with positive ints; "
                             f"got {resize!r}")
        resize = (int(resize[0]), int(resize[1]))
    return resize


def load_file(source, *, filename=None, variable=None, max_bytes: int = 200_000_000, resize=None,
              nan_policy: str = "error", label_column=None, header=None) -> LoadedData:
    """Read a data file into a samples x features matrix.

    Parameters
    ----------
    source : path, bytes or file-like
        A path, raw bytes, or an object with ``read()`` (e.g. Streamlit's
        ``UploadedFile``, whose ``name`` gives the type).
    filename : str, optional
        Name used for the type (by extension) and in messages; needed for bytes
        (else the type is sniffed from magic bytes, text meaning CSV).
    variable : str, optional
        The array of an ``.npz`` / variable of a ``.mat`` to use (required when
        there are several numeric ones; the error lists them).
    max_bytes : int
        Size cap for the file and for the uncompressed content of archives.
    resize : (height, width), optional
        Resize every image of a ``.zip`` to this size (only then are mixed sizes
        accepted).
    nan_policy : {"error", "drop-rows", "drop-columns", "impute-mean"}
        What to do with NaN/inf (missing) values; only ``"error"`` leaves the data
        untouched, the others are said in ``notes``.
    label_column : str or int, optional
        CSV/TSV column to use as labels (a numeric one is then removed from the
        features).  By default the first text column with repeated values.
    header : bool, optional
        CSV/TSV: whether the first line holds column names (default: detected).

    Returns
    -------
    LoadedData

    Raises
    ------
    DataFormatError
        With a message naming the problem: empty file, header only, non-numeric
        matrix, NaN/inf (count and first positions), single row/column, ragged
        rows, mixed image sizes, unsafe or nested archives, too many files, a zip
        bomb, a file over ``max_bytes``, object arrays, a ``.mat`` without a
        numeric matrix or in v7.3 format, an unknown extension, a single image.

    Notes
    -----
    Formats: ``.csv .tsv .tab .txt`` (delimiter and header detected; text columns
    become labels/metadata and ``notes`` says so), ``.npy`` and ``.npz``
    (``allow_pickle=False`` always; 3-D arrays are read as image stacks),
    ``.mat`` (scipy.io.loadmat, numeric arrays only), ``.zip`` of
    ``.png .jpg .jpeg .pgm .bmp`` images (grey, common size).

    A single image file is rejected: one image is one sample, and PCA needs
    many.  Upload a ``.zip`` of same-size images (one per sample) instead; to
    analyse an image's pixel matrix itself, save it as ``.csv``/``.npy``.
    """
    resize = _check_args(max_bytes, resize, nan_policy, variable, filename)
    named = filename is not None or isinstance(source, (str, os.PathLike)) or \
        bool(getattr(source, "name", None))
    data, name = _read_source(source, filename, max_bytes)
    if len(data) == 0 or not data.strip():
        raise DataFormatError(f"{name}: the file is empty")
    ext = _extension(name, data, named)
    if ext in TEXT_EXTENSIONS:
        return _load_text(data, name, ext, nan_policy, label_column, header)
    if ext == ".npy":
        return _load_npy(data, name, nan_policy)
    if ext == ".npz":
        return _load_npz(data, name, variable, nan_policy, max_bytes)
    if ext == ".mat":
        return _load_mat(data, name, variable, nan_policy)
    if ext == ".zip":
        return _load_zip(data, name, resize, nan_policy, max_bytes)
    raise DataFormatError(f"{name}: a single image is one sample, and PCA needs many; upload a "
                          ".zip of same-size images (one image per sample), or save the pixel "
                          "matrix as .csv/.npy to analyse its rows")


def describe(loaded: LoadedData) -> str:
    """A few lines the app can show under an upload: size, format, labels, notes."""
    m, n = loaded.X.shape
    lines = [f"**{loaded.source_name}**: {m} samples x {n} features ({loaded.format or 'data'}"
             + (f", variable '{loaded.variable}'" if loaded.variable and loaded.format != "csv" else "")
             + ")"]
    if loaded.image_shape is not None:
        lines.append(f"images of {loaded.image_shape[0]}x{loaded.image_shape[1]} pixels")
    if loaded.labels is not None:
        uniq = np.unique(np.asarray(loaded.labels).astype(str))
        shown = ", ".join(uniq[:8].tolist()) + (", ..." if uniq.size > 8 else "")
        lines.append(f"labels: {uniq.size} classes ({shown})")
    if loaded.metadata is not None:
        lines.append(f"metadata columns: {', '.join(map(str, loaded.metadata.columns))}")
    lines += [f"- {note}" for note in loaded.notes]
    return "\n".join(lines)
