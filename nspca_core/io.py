"""Turn a user's file into a data matrix (samples x features), safely and loudly.

``load_file(source, ...)`` reads CSV/TSV text, ``.npy``/``.npz`` (never
unpickled), MATLAB ``.mat`` (v4-v7.2, numeric arrays only), a ``.zip`` of images
(one grey image per sample), and text corpora kept sparse (UCI Bag-of-Words
``docword.NAME.txt[.gz]`` + ``vocab.NAME.txt``, Matrix Market ``.mtx``,
``scipy.sparse.save_npz`` ``.npz``, or a ``.zip`` of them) and returns a
:class:`LoadedData`.  Anything it
cannot read unambiguously raises :class:`DataFormatError` (an
:class:`~nspca_core._validation.InputError`, hence a ``ValueError``) whose
message names the problem and what is allowed; anything it does to the data
(dropping a label column, converting colour to grey, dropping NaN rows when
asked) is said in ``notes``.  Nothing is written to disk; archives are read in
memory with their member names checked.
"""

from __future__ import annotations

import csv
import gzip
import io
import os
import pickletools
import re
import struct
import zipfile
import zlib
from contextlib import contextmanager
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
    "MAX_TOTAL_PIXELS",
    "HEADER_CHOICES",
    "npy_strings_without_unpickling",
]


class DataFormatError(InputError):
    """The file cannot be read as a data matrix; the message says why and what is allowed."""


TEXT_EXTENSIONS = (".csv", ".tsv", ".tab", ".txt")
IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".pgm", ".bmp")
ALLOWED_EXTENSIONS = TEXT_EXTENSIONS + (".npy", ".npz", ".mat") + IMAGE_EXTENSIONS + (".zip", ".mtx",
                                                                                    ".gz")
NAN_POLICIES = ("error", "drop-rows", "drop-columns", "impute-mean")
#: values of ``header``: detect, the first line is column names, the first line is data
HEADER_CHOICES = ("auto", "yes", "no")
#: most files a .zip may hold
MAX_ZIP_MEMBERS = 20_000
#: most pixels of one image (PIL's decompression-bomb limit is ~89 M)
MAX_IMAGE_PIXELS = 25_000_000
#: most pixels of all the images of a .zip together (800 MB as float64)
MAX_TOTAL_PIXELS = 100_000_000
#: bytes read from an archive member at a time (the running size cap is checked after each)
_CHUNK = 1 << 20
#: what a damaged or forged archive can raise while it is opened or read
_ARCHIVE_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, KeyError,
                   NotImplementedError, RuntimeError, struct.error, OverflowError, IndexError,
                   MemoryError)
_ARCHIVE_SUFFIXES = (".zip", ".npz", ".tar", ".gz", ".tgz", ".bz2", ".xz", ".7z", ".rar", ".jar")
_MISSING = {"", "na", "n/a", "nan", "null", "none", "?", "-", "#n/a"}
_JUNK = ("__MACOSX/", ".DS_Store", "Thumbs.db", "desktop.ini")


@dataclass(frozen=True, eq=False)
class LoadedData:
    """A parsed file.

    Attributes
    ----------
    X : ndarray (m, n) float64 -- samples x features, finite; for a text
        corpus a ``scipy.sparse.csr_matrix`` (documents x words), never densified
    feature_names : list[str] (n,) -- for a text corpus, the vocabulary words
    labels : ndarray (m,) or None -- one label per sample (a label column,
        a ``labels`` array, or image sub-folders)
    image_shape : (h, w) or None -- when each row is an image (row-major)
    notes : list[str] -- everything worth telling the user about the parse
    metadata : pandas.DataFrame or None -- non-numeric columns / file names, one row per sample
    source_name : str
    format : str -- "csv", "npy", "npz", "mat", "zip"; text corpora "uci-bow",
        "mtx", "sparse-npz" (``extra["sparse"]`` True)
    variable : str or None -- the array / variable / label column used
    dropped_columns : list[dict] -- input columns that are not features, each
        ``{"column": name, "reason": why}`` (text kept as metadata, empty, used as
        labels, dropped for NaN/inf); empty when every column is a feature
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
    dropped_columns: list = field(default_factory=list)


# --------------------------------------------------------------------------- reading bytes

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


# --------------------------------------------------------------------------- shared checks

def _row_word(i: int, lines) -> str:
    """How the user counts row ``i`` (0-based index into X): a file line or a 1-based row."""
    return f"line {int(lines[i])}" if lines is not None else f"row {int(i) + 1}"


def _counting(lines) -> str:
    return ("lines of the file counted from 1, the header line included" if lines is not None
            else "rows counted from 1")


def _fmt_positions(pos: np.ndarray, names=None, limit: int = 5, lines=None) -> str:
    parts = []
    for i, j in pos[:limit]:
        col = f"'{names[j]}'" if names is not None else str(int(j) + 1)
        parts.append(f"({_row_word(i, lines)}, column {col})")
    return ", ".join(parts) + (", ..." if len(pos) > limit else "")


def _finish(X, names, labels, metadata, image_shape, notes, name, fmt, nan_policy, variable=None,
            extra=None, lines=None, dropped=None) -> LoadedData:
    """Checks shared by every format: shape, non-finite values, constant columns.

    ``lines`` (CSV only) maps each row of X to its line number in the file, so
    that messages count rows as the user sees them; ``dropped`` lists the input
    columns that are not features (``{"column", "reason"}``).
    """
    dropped = list(dropped or [])
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
        where = _fmt_positions(pos, names, lines=lines)
        if nan_policy == "error":
            raise DataFormatError(
                f"{name}: {nbad} NaN/inf value(s) (missing or infinite) in {int(bad.any(axis=1).sum())} "
                f"row(s) and {int(bad.any(axis=0).sum())} column(s), first at {where} "
                f"({_counting(lines)}); choose nan_policy='drop-rows', 'drop-columns' or "
                "'impute-mean' to handle them, or fix the file")
        if nan_policy == "drop-rows":
            keep = ~bad.any(axis=1)
            gone = np.flatnonzero(~keep)
            if not keep.any():
                raise DataFormatError(f"{name}: every row has a NaN/inf value; nan_policy='drop-rows' "
                                      "would leave no data")
            X = X[keep]
            labels = None if labels is None else labels[keep]
            if metadata is not None:
                metadata = metadata.iloc[keep].reset_index(drop=True)
            shown = ", ".join(str(int(lines[i]) if lines is not None else int(i) + 1)
                              for i in gone[:10])
            notes.append(f"nan_policy='drop-rows': dropped {gone.size} row(s) with NaN/inf "
                         f"({'lines' if lines is not None else 'rows'} {shown}"
                         f"{', ...' if gone.size > 10 else ''}; {_counting(lines)})")
            lines = None if lines is None else np.asarray(lines)[keep]
        elif nan_policy == "drop-columns":
            keep = ~bad.any(axis=0)
            gone_idx = np.flatnonzero(~keep)
            if not keep.any():
                raise DataFormatError(f"{name}: every column has a NaN/inf value; "
                                      "nan_policy='drop-columns' would leave no data")
            X = X[:, keep]
            gone = [names[j] for j in gone_idx]
            dropped += [{"column": str(g), "reason": "NaN/inf values (nan_policy='drop-columns')"}
                        for g in gone]
            names = [n for n, k in zip(names, keep) if k]
            image_shape = None  # pixels removed: rows are no longer images
            notes.append(f"nan_policy='drop-columns': dropped {gone_idx.size} column(s) with NaN/inf "
                         f"({', '.join(map(str, gone[:10]))}{', ...' if len(gone) > 10 else ''})")
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
                         f"column's mean (first at {where}; {_counting(lines)})")
    m, n = X.shape
    if m < 2:
        raise DataFormatError(f"{name}: a single row (sample); PCA needs at least 2 rows, "
                              "samples as rows and features as columns")
    if n < 2:
        raise DataFormatError(f"{name}: a single column (feature); sparse PCA needs at least 2 "
                              "numeric columns, samples as rows and features as columns"
                              + (f" (not features: {_dropped_text(dropped)})" if dropped else ""))
    const = np.all(X == X[0], axis=0)
    if const.any():
        idx = np.flatnonzero(const)
        shown = ", ".join(str(names[j]) for j in idx[:10]) + (", ..." if idx.size > 10 else "")
        notes.append(f"{idx.size} constant column(s) ({shown}): allowed, but they carry no "
                     "variance (standardizing keeps them at zero)")
    return LoadedData(X=np.ascontiguousarray(X), feature_names=[str(s) for s in names],
                      labels=labels, image_shape=image_shape, notes=notes, metadata=metadata,
                      source_name=name, format=fmt, variable=variable, extra=extra or {},
                      dropped_columns=dropped)


def _dropped_text(dropped: list, limit: int = 10) -> str:
    """``'id' (text, e.g. 'a1'), 'note' (empty)`` for messages."""
    parts = [f"'{d['column']}' ({d['reason']})" for d in dropped[:limit]]
    return ", ".join(parts) + (f", ... ({len(dropped)} in all)" if len(dropped) > limit else "")


# --------------------------------------------------------------------------- CSV / TSV

_BOMS = ((b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"),
         (b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))


def _sniff_utf16(data: bytes) -> str | None:
    """UTF-16 without a byte-order mark: ASCII text has a NUL in every other byte."""
    head = data[:4096]
    if len(head) < 4:
        return None
    even, odd = head[0::2], head[1::2]
    if odd.count(0) > 0.9 * len(odd) and even.count(0) < 0.1 * len(even):
        return "utf-16-le"
    if even.count(0) > 0.9 * len(even) and odd.count(0) < 0.1 * len(odd):
        return "utf-16-be"
    return None


def _decode(data: bytes, name: str, notes: list) -> str:
    """Text from bytes: byte-order marks (UTF-8/16/32, e.g. Excel's "Unicode text"), then
    UTF-16 without a mark, UTF-8, and Latin-1 as the last resort; said in ``notes``."""
    encoding = next((enc for bom, enc in _BOMS if data.startswith(bom)), None)
    how = "byte-order mark"
    if encoding is None:
        encoding, how = _sniff_utf16(data), "NUL byte pattern"
    if encoding is not None:
        if encoding != "utf-8-sig":
            try:
                text = data.decode(encoding)
            except UnicodeDecodeError as exc:
                raise DataFormatError(f"{name}: looks like {encoding.upper()} text ({how}) but does "
                                      f"not decode ({exc.reason} at byte {exc.start}); save it as "
                                      "UTF-8 CSV") from None
            notes.append(f"text decoded as {encoding.upper().replace('-LE', '').replace('-BE', '')} "
                         f"(found by its {how})")
            return text.lstrip("\ufeff")
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


# number conventions other than Python's float(): "1,000" "3,14" "1.234,5" "0x1F"
_AMBIGUOUS_COMMA = re.compile(r"[+-]?\d{1,3},\d{3}")
_THOUSANDS = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?(?:[eE][+-]?\d+)?")
_DECIMAL_COMMA = re.compile(r"[+-]?\d*,\d+(?:[eE][+-]?\d+)?")
_DOT_GROUPED = re.compile(r"[+-]?\d{1,3}(?:\.\d{3})+")
_DOT_GROUPED_DECIMAL_COMMA = re.compile(r"[+-]?\d{1,3}(?:\.\d{3})+,\d*")
_HEX = re.compile(r"[+-]?0[xX][0-9a-fA-F]+")
_INT_FORMAT = re.compile(r"[+-]?\d+|[+-]?\d{1,3}(?:,\d{3})+")
#: largest integer a float64 holds exactly
_EXACT_INT = 2 ** 53


def _cell_kind(t: str) -> str | None:
    """Which convention a text cell that ``float()`` refused follows, if any."""
    if _AMBIGUOUS_COMMA.fullmatch(t):
        return "ambiguous"  # "1,000": 1000 with a thousands separator, or 1.0 with a decimal comma
    if _THOUSANDS.fullmatch(t):
        return "thousands"
    if _DECIMAL_COMMA.fullmatch(t):
        return "decimal"
    if _DOT_GROUPED_DECIMAL_COMMA.fullmatch(t):
        return "decimal"
    if _HEX.fullmatch(t):
        return "hex"
    return None


def _col_label(cells: np.ndarray, numeric: np.ndarray, j: int) -> str:
    """A column's name for messages before the header is decided: its first cell if text."""
    first = str(cells[0, j]).strip()
    return f"'{first}'" if first and not numeric[0, j] else f"column {j + 1}"


def _fits(kind: str | None, convention: str) -> bool:
    """Whether a cell of ``kind`` is a number in ``convention``."""
    if convention == "hex":
        return kind == "hex"
    return kind in ("ambiguous", convention)


def _convention_value(t: str, convention: str) -> float:
    if convention == "hex":
        return float(int(t, 16))
    if convention == "thousands":
        return float(t.replace(",", ""))
    return float(t.replace(".", "").replace(",", "."))  # decimal comma, '.' groups thousands


def _text_kinds(cells, numeric, j: int, start: int) -> dict | None:
    """``{kind: first example}`` of the text cells of column j; None when one of them
    below row ``start`` follows no known number convention (a real text column).  A
    first-line cell in no convention is a column name and is passed over."""
    found: dict = {}
    for i in np.flatnonzero(~numeric[:, j]):
        t = str(cells[i, j]).strip()
        kind = _cell_kind(t)
        if kind is None:
            if i < start:
                continue
            return None
        found.setdefault(kind, t)
    return found


def _number_conventions(cells, values, numeric, missing, delim, name: str, notes: list) -> dict:
    """Read thousands separators, decimal commas and hex as numbers, or refuse clearly.

    Only columns whose every text cell (below the first line, which may be a
    header) follows one convention are converted; one convention holds for the
    whole file.  ``"1,000"`` alone is ambiguous: read as 1000 in a comma-delimited
    file (where such cells must be quoted, as spreadsheets do for thousands),
    refused otherwise unless another column settles it.  ``values``/``numeric``
    are updated in place; returns ``{column index: reason}`` for hex columns
    left as text.
    """
    start = 1 if cells.shape[0] > 1 else 0
    kinds = {}
    for j in np.flatnonzero(~numeric.all(axis=0)):
        found = _text_kinds(cells, numeric, j, start)
        if found:
            kinds[int(j)] = found
    if not kinds:
        return {}
    label = lambda j: _col_label(cells, numeric, j)  # noqa: E731
    hexa = {j: f for j, f in kinds.items() if "hex" in f}
    for j, f in hexa.items():
        if set(f) != {"hex"} or (numeric[start:, j] & ~missing[start:, j]).any():
            raise DataFormatError(f"{name}: column {label(j)} mixes hexadecimal numbers "
                                  f"({f.get('hex')!r}) with other numbers; write the whole column "
                                  "in one convention (all 0x... or all decimal)")
    convention = _comma_convention({j: f for j, f in kinds.items() if j not in hexa}, delim,
                                   label, name)
    done: dict = {"thousands": [], "decimal": [], "hex": []}
    left_as_text: dict = {}
    for j in kinds:
        conv = "hex" if j in hexa else convention
        # the first line joins in only when it is written in the same convention (else a name)
        ok = [i for i in np.flatnonzero(~numeric[:, j])
              if i >= start or _fits(_cell_kind(str(cells[i, j]).strip()), conv)]
        vals = [_convention_value(str(cells[i, j]).strip(), conv) for i in ok]
        if conv == "hex" and any(abs(v) > _EXACT_INT for v in vals):
            left_as_text[j] = ("hexadecimal values above 2**53 (identifiers?), not exact as "
                               "numbers")
            continue
        if conv == "decimal":
            _dotted_in_decimal_column(cells, numeric, missing, values, j, start, label(j), name)
        values[ok, j] = vals
        numeric[ok, j] = True
        done[conv].append(j)
    if convention == "decimal":
        _dotted_columns_in_decimal_file(cells, numeric, missing, done["decimal"], start, label,
                                        name, notes)
    examples = {"thousands": "'1,234' = 1234", "decimal": "'3,14' = 3.14", "hex": "'0x1F' = 31"}
    words = {"thousands": "with thousands separators", "decimal": "with a decimal comma",
             "hex": "in hexadecimal"}
    for conv, cols in done.items():
        if cols:
            notes.append(f"{len(cols)} column(s) written {words[conv]}, read as numbers "
                         f"({examples[conv]}): {', '.join(label(j) for j in cols[:10])}"
                         f"{', ...' if len(cols) > 10 else ''}")
    return left_as_text


def _comma_convention(commas: dict, delim, label, name: str) -> str | None:
    """The file's one comma convention ("thousands" or "decimal") from the columns' cells."""
    dec = [j for j, f in commas.items() if "decimal" in f]
    thou = [j for j, f in commas.items() if "thousands" in f]
    if dec and thou:
        raise DataFormatError(
            f"{name}: column {label(dec[0])} writes numbers with a decimal comma "
            f"({commas[dec[0]]['decimal']!r}) but column {label(thou[0])} with thousands separators "
            f"({commas[thou[0]]['thousands']!r}); use one convention in the whole file")
    if dec or thou:
        return "decimal" if dec else "thousands"
    if not commas:
        return None
    if delim == ",":
        return "thousands"  # quoted "1,000" in a comma-separated file: a spreadsheet's thousands
    j = next(iter(commas))
    raise DataFormatError(
        f"{name}: column {label(j)} holds numbers like {commas[j]['ambiguous']!r}, which read "
        "as a thousand with a thousands separator or as 1.0 with a decimal comma; write them "
        "without thousands separators (1000) or with a decimal point (1.0)")


def _dotted_in_decimal_column(cells, numeric, missing, values, j, start, label, name) -> None:
    """In a decimal-comma column, '1.234' groups thousands (1234); '3.5' is refused."""
    for i in np.flatnonzero(numeric[:, j] & ~missing[:, j]):
        t = str(cells[i, j]).strip()
        if "." not in t:
            continue
        if _DOT_GROUPED.fullmatch(t):
            values[i, j] = float(t.replace(".", ""))
            continue
        raise DataFormatError(f"{name}: column {label} mixes a decimal point ({t!r}) with decimal "
                              "commas; write every number of the column the same way")


def _dotted_columns_in_decimal_file(cells, numeric, missing, converted, start, label, name,
                                    notes) -> None:
    """Other columns of a decimal-comma file: '1.500' may mean 1500 -- refuse; '0.25' is said."""
    dotted = []
    for j in range(cells.shape[1]):
        if j in converted or not numeric[start:, j].all() or missing[start:, j].all():
            continue
        texts = cells[start:, j].astype(str)
        with_dot = [t.strip() for t in texts[np.char.find(texts, ".") >= 0]]
        if not with_dot:
            continue
        if all(_DOT_GROUPED.fullmatch(t) for t in with_dot):
            raise DataFormatError(
                f"{name}: column {label(j)} holds numbers like {with_dot[0]!r} in a file that writes "
                "decimals with commas: the '.' may be a thousands separator (1500) or a decimal "
                "point (1.5); write them unambiguously")
        dotted.append(j)
    if dotted:
        notes.append(f"column(s) {', '.join(label(j) for j in dotted[:10])} use a decimal point "
                     "while the file uses decimal commas elsewhere: both read as decimals")


def _header_note(has_header: bool, how: str) -> str:
    if has_header:
        return f"header: first line read as column names ({how}); if it is data, choose header 'no'"
    return f"header: first line read as data ({how}); if it holds column names, choose header 'yes'"


def _written_with_decimals(texts, values, missing, sample: int = 1000) -> bool:
    """Whether a numeric column is written with decimals (``0.5``, ``1.0``, ``1e3``),
    not as integers: a non-integral value says so at once, else the text of its
    first ``sample`` cells is looked at (a column is written one way)."""
    with np.errstate(invalid="ignore"):
        if (values[~missing] != np.round(values[~missing])).any():
            return True
    return any(not _INT_FORMAT.fullmatch(str(t).strip())
               for t, miss in zip(texts[:sample], missing[:sample]) if not miss)


def _numeric_header(cells, values, numeric, missing) -> str | None:
    """Why an all-number first line is column names (years, ids, wavelengths), or None.

    It is when its numbers are distinct integers (written as such) and either
    (a) above columns written with decimals, and increasing/decreasing or far
    outside the values below, or (b) increasing/decreasing and, in every
    non-constant column (at least 2, with at least 3 body rows), farther from
    the body's range than 3 times its width.  A file of 2 lines has no header
    of numbers (one row of data would be left).
    """
    body_num = numeric[1:].all(axis=0) & ~missing[1:].all(axis=0)
    cols = np.flatnonzero(body_num & numeric[0] & ~missing[0])
    if cols.size < 2 or cells.shape[0] < 3:  # a header over a single row would leave no PCA
        return None
    v = values[0, cols]
    if np.unique(v).size < cols.size or not np.isfinite(v).all():
        return None
    steps = np.diff(v)
    monotone = bool((steps > 0).all() or (steps < 0).all())
    first = [str(cells[0, j]).strip() for j in cols]
    ints = all(_INT_FORMAT.fullmatch(t) for t in first)
    if not ints:
        return None
    body = values[1:, cols]
    decimal_body = all(_written_with_decimals(cells[1:, j], body[:, c], missing[1:, j])
                       for c, j in enumerate(cols))
    outside = False
    if body.shape[0] >= 3:
        with np.errstate(invalid="ignore"):
            lo, hi = np.nanmin(body, axis=0), np.nanmax(body, axis=0)
        span, dist = hi - lo, np.maximum(lo - v, v - hi)
        # constant columns say nothing; every other one must sit far from the first line
        varied = span > 0
        outside = bool(varied.sum() >= 2 and (dist[varied] > 3 * span[varied]).all())
    shown = ", ".join(first[:3]) + (", ..." if len(first) > 3 else "")
    if decimal_body and (monotone or outside):
        return (f"its numbers ({shown}) are distinct integers over decimal numbers"
                + (", in order" if monotone else ", far outside the values below"))
    if monotone and outside:
        return f"its numbers ({shown}) are integers in order, far outside the values below them"
    return None


def _decide_header(header, cells, values, numeric, missing) -> tuple[bool, str]:
    """Whether the first line holds column names, and the note that says so and why."""
    if header is True:
        return True, _header_note(True, "as asked")
    if header is False:
        return False, _header_note(False, "as asked")
    first_text = ~numeric[0] & ~missing[0]
    if first_text.all() or (first_text & numeric[1:].any(axis=0)).any():
        return True, _header_note(True, "detected: text above numbers")
    if cells.shape[0] < 2:
        return False, _header_note(False, "a single line")
    why = _numeric_header(cells, values, numeric, missing)
    if why is not None:
        return True, _header_note(True, f"detected: {why}")
    return False, _header_note(False, "detected: numbers like the lines below")


def _split_rows(text: str, name: str, ext: str, notes: list):
    """``(rows of fields, file line number of each row, delimiter)``; ragged rows refused."""
    raw_lines = text.splitlines()
    numbered = [(i + 1, ln) for i, ln in enumerate(raw_lines) if ln.strip()]
    if not numbered:
        raise DataFormatError(f"{name}: the file is empty (no data rows)")
    inner_blank = numbered[-1][0] - len(numbered)
    if inner_blank:
        notes.append(f"skipped {inner_blank} blank line(s)")
    line_no = np.array([i for i, _ in numbered])
    lines = [ln for _, ln in numbered]
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
    if (widths != widths[0]).any():
        bad = np.flatnonzero(widths != widths[0])
        shown = ", ".join(f"line {line_no[i]} has {widths[i]}" for i in bad[:5])
        raise DataFormatError(f"{name}: ragged rows: the first line has {widths[0]} field(s) but "
                              f"{shown}{', ...' if bad.size > 5 else ''} "
                              f"({bad.size} line(s) differ); every row needs the same number "
                              "of fields")
    return rows, line_no, delim


def _unique_names(names: list, notes: list) -> list:
    if len(set(names)) == len(names):
        return names
    seen: dict = {}
    uniq = []
    for nm in names:
        seen[nm] = seen.get(nm, -1) + 1
        uniq.append(nm if seen[nm] == 0 else f"{nm}.{seen[nm]}")
    notes.append("duplicate column names made unique (.1, .2, ...)")
    return uniq


def _label_index(label_column, names: list, text_cols: list, body) -> int | None:
    """The label column: asked for by name/index, else the first text column with repeats."""
    width = len(names)
    if label_column is not None:
        if isinstance(label_column, str) and label_column in names:
            return names.index(label_column)
        if isinstance(label_column, int) and not isinstance(label_column, bool) \
                and -width <= label_column < width:
            return label_column % width
        raise InputError(f"`label_column` must be one of the column names {names[:20]} or an "
                         f"index in [0, {width - 1}]; got {label_column!r}")
    for j in text_cols:
        if len(set(_strs(body[:, j]).tolist())) < body.shape[0]:
            return j
    return None


def _load_text(data: bytes, name: str, ext: str, nan_policy: str, label_column, header):
    import pandas as pd

    notes: list = []
    text = _decode(data, name, notes)
    rows, line_no, delim = _split_rows(text, name, ext, notes)
    width = len(rows[0])
    cells = np.array(rows, dtype=object)
    # numbers like 'nan'/'inf' parse as floats: they are values (reported later), not text
    values, numeric, missing = _parse_cells(cells)
    hex_ids = _number_conventions(cells, values, numeric, missing, delim, name, notes)
    has_header, note = _decide_header(header, cells, values, numeric, missing)
    notes.insert(0, note)
    if has_header:
        names = [str(c).strip() or f"col_{j}" for j, c in enumerate(cells[0])]
        body, bnum, bmiss, bval, lines = cells[1:], numeric[1:], missing[1:], values[1:], line_no[1:]
    else:
        names = [f"col_{j}" for j in range(width)]
        body, bnum, bmiss, bval, lines = cells, numeric, missing, values, line_no
    if body.shape[0] == 0:
        raise DataFormatError(f"{name}: header only (column names but no data rows)")
    names = _unique_names(names, notes)
    # column kinds: numeric (every cell a number or missing), text (mostly non-numbers)
    frac_num = (bnum & ~bmiss).sum(axis=0) / np.maximum(1, (~bmiss).sum(axis=0))
    all_missing = bmiss.all(axis=0)
    is_num = bnum.all(axis=0) & ~all_missing
    mixed = ~is_num & ~all_missing & (frac_num > 0.5)
    if mixed.any():
        j = int(np.flatnonzero(mixed)[0])
        rows_bad = np.flatnonzero(~bnum[:, j])
        shown = ", ".join(f"line {lines[i]} ({str(body[i, j]).strip()!r})" for i in rows_bad[:3])
        raise DataFormatError(f"{name}: column '{names[j]}' is numeric except for "
                              f"{rows_bad.size} value(s): {shown} (lines of the file counted from "
                              "1, the header line included); fix them or write them as NA "
                              "(missing) and choose a nan_policy")
    dropped = [{"column": names[j], "reason": "empty (no values)"}
               for j in np.flatnonzero(all_missing)]
    if dropped:
        notes.append(f"ignored {len(dropped)} empty column(s): "
                     f"{', '.join(d['column'] for d in dropped[:10])}")
    text_cols = [j for j in range(width) if not is_num[j] and not all_missing[j]]
    num_cols = [j for j in range(width) if is_num[j]]
    label_idx = _label_index(label_column, names, text_cols, body)
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
        dropped.append({"column": names[label_idx], "reason": "used as labels"})
    meta_cols = [j for j in text_cols if j != label_idx]
    for j in meta_cols:
        example = next((str(c).strip() for c, nm, mi in zip(body[:, j], bnum[:, j], bmiss[:, j])
                        if not nm and not mi), "")
        reason = hex_ids.get(j, "text")
        dropped.append({"column": names[j], "reason": f"{reason}, e.g. {example!r}; kept as "
                                                      "metadata, not a feature"})
    if not num_cols:
        raise DataFormatError(f"{name}: non-numeric matrix: no column holds only numbers "
                              f"(columns: {names[:10]}{' ...' if len(names) > 10 else ''}); "
                              "features must be numeric, with at most some text columns for "
                              "labels/metadata" + _decimal_hint(delim, cells))
    metadata = None
    if text_cols or label_idx is not None:
        keep = [j for j in range(width) if (j in text_cols or j == label_idx)]
        metadata = pd.DataFrame({names[j]: _strs(body[:, j]) for j in keep})
    if meta_cols:
        notes.append(f"{len(meta_cols)} non-numeric column(s) kept as metadata, not features: "
                     f"{', '.join(names[j] for j in meta_cols[:10])}")
    X = bval[:, num_cols]
    return _finish(X, [names[j] for j in num_cols], labels, metadata, None, notes, name,
                   "csv", nan_policy, variable=None if label_idx is None else names[label_idx],
                   lines=lines, dropped=dropped)


def _decimal_hint(delim, cells) -> str:
    """A likely cause when nothing is numeric: a convention we do not read."""
    sample = "|".join(str(c) for c in cells[1:6].ravel())
    if re.search("\\d[ \u00a0\u202f'\u2019]\\d{3}\\b", sample):
        return ("; numbers seem to group thousands with spaces or apostrophes ('1 000'), which "
                "are not read: write plain numbers (1000)")
    if re.search(r"\d%", sample):
        return "; percentages ('12%') are not read as numbers: write 12 or 0.12"
    return ""


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
    _check_npy_size(shape, dtype, len(data) - f.tell(), "the array", name)
    try:
        arr = np.load(io.BytesIO(data), allow_pickle=False)
    except Exception as exc:
        raise DataFormatError(f"{name}: could not read the .npy array ({exc})") from None
    X, image_shape = _as_matrix(arr, "the array", name, notes)
    names = _names_for(X.shape[1], image_shape)
    return _finish(X, names, None, None, image_shape, notes, name, "npy", nan_policy)


def _check_npy_size(shape, dtype, available: int, what: str, name: str) -> None:
    """Refuse a header announcing more data than the file holds (truncated or forged),
    before anything of that size is allocated."""
    need = int(np.prod(shape, dtype=object)) * dtype.itemsize
    if need > available:
        raise DataFormatError(f"{name}: {what} announces shape {tuple(shape)} of {dtype} "
                              f"({need:,} bytes) but only {max(available, 0):,} bytes follow its "
                              "header: the file is truncated or damaged")


def _names_for(n: int, image_shape) -> list:
    if image_shape is not None:
        h, w = image_shape
        return [f"pixel_{r}_{c}" for r in range(h) for c in range(w)]
    return [f"x{j}" for j in range(n)]


def _npz_index(data: bytes, name: str, max_bytes: int) -> dict:
    """name -> (shape, dtype) of every array, from headers only (no data read)."""
    zf = _open_zip(data, name, ".npz")
    with zf, _archive_errors(name, ".npz"):
        infos = [i for i in zf.infolist() if not i.is_dir()]
        _check_zip_members(infos, name, max_bytes, allow_npy=True)
        out = {}
        for info in infos:
            if not info.filename.endswith(".npy"):
                continue
            with zf.open(info) as fh:
                try:
                    shape, _, dtype = _npy_header(fh)
                    header_len = fh.tell()
                except Exception as exc:
                    raise DataFormatError(f"{name}: member {info.filename!r} is not a valid .npy "
                                          f"({exc})") from None
            if not dtype.hasobject:
                _check_npy_size(shape, dtype, info.file_size - header_len,
                                f"member {info.filename!r}", name)
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
    with _archive_errors(name, ".npz"), np.load(io.BytesIO(data), allow_pickle=False) as z:
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
        raise DataFormatError(f"{name}: the archive expands to {total:,} bytes, over the size cap "
                              f"max_bytes={max_bytes:,} (possible zip bomb); raise max_bytes if "
                              "this is intended")


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


def _read_member(zf: zipfile.ZipFile, info, budget: int, name: str) -> bytes:
    """A member's bytes, streamed with a running cap of ``budget`` bytes.

    The sizes in a zip directory can lie (a forged zip bomb): what counts is
    what decompression actually yields, checked after every chunk.
    """
    parts, got = [], 0
    with zf.open(info) as fh:
        while True:
            chunk = fh.read(min(_CHUNK, budget - got + 1))
            if not chunk:
                break
            got += len(chunk)
            if got > budget:
                raise DataFormatError(f"{name}: the archive expands to more than the size cap "
                                      f"(max_bytes) while reading {info.filename!r} (possible zip "
                                      "bomb); raise max_bytes if this is intended")
            parts.append(chunk)
    return b"".join(parts)


def _image_size(raw: bytes, label: str, name: str) -> tuple[int, int]:
    """(width, height) from the image header only (nothing decoded)."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(raw)) as im:
            return im.size
    except (UnidentifiedImageError, OSError, ValueError, struct.error, SyntaxError, EOFError,
            Image.DecompressionBombError) as exc:
        raise DataFormatError(f"{name}: {label!r} is not a readable image ({exc})") from None


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
        raise DataFormatError(f"{name}: {label!r} is not a readable image ({exc})") from None


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
                                  f"{', '.join(IMAGE_EXTENSIONS)})")
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


# --------------------------------------------------------------------------- text corpora (sparse)

#: file types read as a sparse documents x words matrix (see :func:`load_file`)
CORPUS_EXTENSIONS = (".mtx", ".gz")
_GZIP_MAGIC = b"\x1f\x8b"
_SPARSE_NPZ_KEYS = ({"format", "data", "indices", "indptr", "shape"},
                    {"format", "data", "row", "col", "shape"})


def _base(name: str) -> str:
    return PurePosixPath(str(name).replace("\\", "/")).name.lower()


def _is_docword(name: str) -> bool:
    """``docword.NAME.txt`` / ``docword.NAME.txt.gz`` (the UCI Bag-of-Words file names)."""
    base = _base(name)
    return base.startswith("docword") and base.endswith((".txt", ".txt.gz"))


def _corpus_kind(name: str, data: bytes, has_vocab: bool) -> str | None:
    """"uci-bow", "mtx" or None (not a text corpus) from the file name (and a given vocabulary)."""
    base = _base(name)
    if base.endswith((".mtx", ".mtx.gz")):
        return "mtx"
    if _is_docword(base) or (has_vocab and base.endswith((".txt", ".txt.gz"))):
        return "uci-bow"
    if base.endswith(".gz"):
        raise DataFormatError(f"{name}: a gzip file is read only as a text corpus: "
                              "'docword.NAME.txt.gz' (UCI Bag-of-Words) or 'NAME.mtx.gz' (Matrix "
                              "Market); other data must be uncompressed or in a .zip")
    return None


def _gunzip(data: bytes, name: str, max_bytes: int) -> bytes:
    """The content of gzip ``data`` (returned as is when not gzip), capped at ``max_bytes``.

    Decompression is streamed and the cap checked after every chunk, so a small
    forged file cannot expand without limit (a gzip bomb).
    """
    if not data.startswith(_GZIP_MAGIC):
        return data
    parts, got = [], 0
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as fh:
            while True:
                chunk = fh.read(_CHUNK)
                if not chunk:
                    break
                got += len(chunk)
                if got > max_bytes:
                    raise DataFormatError(f"{name}: the gzip content expands to more than the size "
                                          f"cap max_bytes={max_bytes:,} bytes (possible gzip bomb); "
                                          "raise max_bytes if this is intended")
                parts.append(chunk)
    except (OSError, EOFError, zlib.error) as exc:
        raise DataFormatError(f"{name}: the gzip file is truncated or damaged ({exc}); download "
                              "or compress it again") from None
    return b"".join(parts)


def _is_sparse_npz(data: bytes, name: str, max_bytes: int) -> bool:
    """True when an ``.npz`` holds the arrays ``scipy.sparse.save_npz`` writes (headers only)."""
    keys = set(_npz_index(data, name, max_bytes))
    return any(need <= keys for need in _SPARSE_NPZ_KEYS)


def _vocab_words(vocab, name: str, max_bytes: int):
    """``vocab`` as given to :func:`load_file` as a list of words (None stays None)."""
    if vocab is None or isinstance(vocab, (list, tuple)):
        if vocab is not None and not all(isinstance(w, str) for w in vocab):
            raise InputError("`vocab` must be a vocabulary file (path, bytes, file-like) or a list "
                             "of words (str)")
        return vocab
    from .text import read_vocab

    data, vname = _read_source(vocab, None, max_bytes)
    return read_vocab(_gunzip(data, vname, max_bytes), filename=f"vocabulary {vname}")


def _beside(path: Path) -> Path | None:
    """``vocab.NAME.txt`` next to ``docword.NAME.txt[.gz]`` (how the UCI files come)."""
    base = path.name
    for suffix in (".txt.gz", ".txt"):
        if base.lower().startswith("docword.") and base.lower().endswith(suffix):
            cand = path.with_name("vocab." + base[len("docword."):-len(suffix)] + ".txt")
            return cand if cand.is_file() else None
    return None


def _read_corpus(kind: str, data: bytes, vocab, name: str, max_bytes: int):
    """A :class:`nspca_core.text.TextData` from the file's bytes."""
    from .text import read_mtx, read_sparse_npz, read_uci_bow

    if kind == "npz":
        return read_sparse_npz(data, vocab, filename=name)
    data = _gunzip(data, name, max_bytes)
    if kind == "mtx":
        return read_mtx(data, vocab, filename=name)
    if vocab is not None:
        text = read_uci_bow(data, None, filename=name)
        if len(vocab) != text.X.shape[1]:
            raise DataFormatError(f"{name}: the vocabulary has {len(vocab)} words but the matrix "
                                  f"has {text.X.shape[1]} word columns; they must match")
        return type(text)(X=text.X, vocabulary=[str(w) for w in vocab],
                          notes=[nt for nt in text.notes if not nt.startswith("no vocabulary")],
                          source_name=text.source_name, format=text.format)
    return read_uci_bow(data, vocab, filename=name)


def _finish_sparse(text, name: str, fmt: str, notes: list) -> LoadedData:
    """Checks shared by the text corpora: at least 2 documents and 2 words; empty rows/columns noted."""
    X = text.X
    m, n = X.shape
    if m < 2:
        raise DataFormatError(f"{name}: a single document (row); PCA needs at least 2 documents "
                              "(rows) and 2 words (columns)")
    if n < 2:
        raise DataFormatError(f"{name}: a single word (column); sparse PCA needs at least 2 words "
                              "(columns)")
    if X.nnz == 0:
        raise DataFormatError(f"{name}: the matrix has no nonzero count; there is no variance to "
                              "explain")
    notes = list(notes) + list(text.notes)
    unused = int(n - np.count_nonzero(np.diff(X.tocsc().indptr)))
    if unused:
        notes.append(f"{unused} word(s) occur in no document: allowed, but they carry no variance")
    empty = int(m - np.count_nonzero(np.diff(X.indptr)))
    if empty:
        notes.append(f"{empty} document(s) hold no word: kept (they count in the mean)")
    notes.append(f"kept sparse: {X.nnz:,} nonzeros ({X.nnz / (m * n):.3%} of {m:,} x {n:,}); "
                 "never densified")
    return LoadedData(X=X, feature_names=[str(w) for w in text.vocabulary], labels=None,
                      image_shape=None, notes=notes, metadata=None, source_name=name, format=fmt,
                      extra={"sparse": True, "nnz": int(X.nnz),
                             "vocabulary": not any(nt.startswith("no vocabulary")
                                                   for nt in text.notes)})


def _corpus_zip_members(data: bytes, name: str, max_bytes: int):
    """(matrix member name, its bytes, vocabulary bytes or None) of a corpus .zip, or None.

    A .zip is a text corpus when it holds no image and one matrix file:
    ``docword.NAME.txt[.gz]``, ``NAME.mtx[.gz]`` or a sparse ``NAME.npz``;
    ``vocab*.txt`` beside it is the vocabulary.
    """
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except _ARCHIVE_ERRORS:
        return None  # the image reader says what is wrong
    with zf, _archive_errors(name):
        infos = [i for i in zf.infolist() if not i.is_dir()
                 and not i.filename.startswith("__MACOSX/") and not _base(i.filename).startswith("._")]
        bases = [_base(i.filename) for i in infos]
        if any(b.endswith(IMAGE_EXTENSIONS) for b in bases):
            return None
        mats = [i for i, b in zip(infos, bases)
                if _is_docword(b) or b.endswith((".mtx", ".mtx.gz", ".npz"))]
        if not mats:
            return None
        _check_zip_members(infos, name, max_bytes, allow=(".txt.gz", ".mtx.gz", ".npz"))
        if len(mats) > 1:
            raise DataFormatError(f"{name}: the archive holds {len(mats)} matrix files "
                                  f"({', '.join(i.filename for i in mats[:5])}); a corpus .zip "
                                  "holds one (docword.NAME.txt[.gz], .mtx or .npz) and its "
                                  "vocab.NAME.txt")
        vocabs = [i for i, b in zip(infos, bases) if b.startswith("vocab") and
                  b.endswith((".txt", ".txt.gz"))]
        if len(vocabs) > 1:
            raise DataFormatError(f"{name}: the archive holds {len(vocabs)} vocabulary files "
                                  f"({', '.join(i.filename for i in vocabs[:5])}); give one")
        raw = _read_member(zf, mats[0], max_bytes, name)
        vocab = _read_member(zf, vocabs[0], max_bytes - len(raw), name) if vocabs else None
    return mats[0].filename, raw, vocab


def _load_corpus(data: bytes, name: str, kind: str, vocab, max_bytes: int,
                 notes=None) -> LoadedData:
    vocab = _vocab_words(vocab, name, max_bytes)
    text = _read_corpus(kind, data, vocab, name, max_bytes)
    fmt = {"uci-bow": "uci-bow", "mtx": "mtx", "npz": "sparse-npz"}[kind]
    return _finish_sparse(text, name, fmt, notes or [])


def _load_corpus_zip(found, name: str, vocab, max_bytes: int) -> LoadedData:
    member, raw, zvocab = found
    if zvocab is not None and vocab is not None:
        raise InputError(f"{name}: the archive holds its vocabulary file; do not give `vocab` too")
    if zvocab is not None:
        from .text import read_vocab

        zvocab = read_vocab(_gunzip(zvocab, name, max_bytes), filename=f"{name}: vocabulary")
    base = _base(member)
    kind = "npz" if base.endswith(".npz") else "mtx" if base.endswith((".mtx", ".mtx.gz")) \
        else "uci-bow"
    notes = [f"text corpus in the archive: {member}"
             + (" with its vocabulary" if zvocab is not None else "")]
    return _load_corpus(raw, name, kind, zvocab if zvocab is not None else vocab, max_bytes, notes)


def _reject_dense_options(name, variable, resize, label_column):
    for arg, value in (("variable", variable), ("resize", resize), ("label_column", label_column)):
        if value is not None:
            raise InputError(f"`{arg}` does not apply to a text corpus ({name}: documents x words, "
                             f"read sparse); got {value!r}")


# --------------------------------------------------------------------------- front door

def _check_header(header):
    """``header`` as True (column names), False (data) or None (detect)."""
    choices = {"auto": None, "yes": True, "no": False, None: None, True: True, False: False}
    if isinstance(header, str):
        header = header.strip().lower()
    if not isinstance(header, (str, bool, type(None))) or header not in choices:
        raise InputError("`header` must be 'auto' (detect), 'yes'/True (the first line holds column "
                         f"names) or 'no'/False (the first line is data); got {header!r}")
    return choices[header]


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
              nan_policy: str = "error", label_column=None, header="auto",
              vocab=None) -> LoadedData:
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
    header : {"auto", "yes", "no"} or bool, default "auto"
        CSV/TSV: whether the first line holds column names.  ``"yes"``/``True``
        and ``"no"``/``False`` force it; ``"auto"`` (or None) detects it: the
        first line is a header when it holds text above numbers, or numbers
        written differently from the body (e.g. the years ``2019,2020,2021``
        over decimal values), see Notes.  ``notes`` always says which was chosen
        and why.
    vocab : path, bytes, file-like or list of str, optional
        Text corpora only: the vocabulary (``vocab.NAME.txt``, one word per
        line, word i on line i), or the words themselves.  Without it the
        vocabulary is taken from the corpus ``.zip``, or from
        ``vocab.NAME.txt`` beside a ``docword.NAME.txt[.gz]`` path; else the
        words are named ``word_1, word_2, ...`` (a note says so).

    Returns
    -------
    LoadedData
        For a text corpus ``X`` is a ``scipy.sparse.csr_matrix`` (documents x
        words, float64 counts, never densified) and ``feature_names`` the
        vocabulary; ``format`` is ``"uci-bow"``, ``"mtx"`` or ``"sparse-npz"``
        and ``extra["sparse"]`` is True.  Every other format gives a dense
        ndarray.

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

    Text: UTF-8, Latin-1, and UTF-16/32 (by byte-order mark, as Excel's
    "Unicode text" writes, or by its NUL byte pattern).  Numbers may use
    thousands separators (``"1,234"``) or decimal commas (``3,14``, with
    ``.`` grouping thousands as in ``1.234,5``), one convention per file, or
    be hexadecimal (``0x1F``); ``notes`` names the columns so read, and a file
    that mixes conventions or is ambiguous (only ``1,000``-like numbers in a
    file not delimited by commas) is refused with the column named.

    Header detection (``header="auto"``): a first line with text above numeric
    columns is a header.  An all-number first line is one when its numbers are
    distinct integers (written without decimals) and either above columns
    written with decimals, in increasing/decreasing order or far from the
    values below; or in order and, in every non-constant column, farther from
    the range of the values below (at least 3 rows) than 3 times its width.
    Otherwise it is data.

    Columns that are not features (text kept as metadata, empty, labels,
    dropped for NaN/inf) are listed in ``dropped_columns`` with the reason.
    Positions in messages count as the user does: CSV line numbers from 1
    with the header line included, array rows from 1.

    Text corpora (documents x words, read sparse by :mod:`nspca_core.text`):
    the UCI Bag-of-Words ``docword.NAME.txt`` or ``.txt.gz`` (recognised by
    its name, or any ``.txt`` when ``vocab`` is given), Matrix Market
    ``.mtx``/``.mtx.gz``, an ``.npz`` written by ``scipy.sparse.save_npz``
    (recognised by its arrays; never unpickled), or a ``.zip`` holding one of
    these and its ``vocab.NAME.txt``.  gzip content is capped at
    ``max_bytes`` like archives.  ``variable``, ``resize`` and
    ``label_column`` do not apply (InputError); ``nan_policy`` and ``header``
    are ignored (non-finite values are always refused).  Malformed files
    raise DataFormatError naming the line and value.

    A single image file is rejected: one image is one sample, and PCA needs
    many.  Upload a ``.zip`` of same-size images (one per sample) instead; to
    analyse an image's pixel matrix itself, save it as ``.csv``/``.npy``.
    """
    resize = _check_args(max_bytes, resize, nan_policy, variable, filename)
    header = _check_header(header)
    named = filename is not None or isinstance(source, (str, os.PathLike)) or \
        bool(getattr(source, "name", None))
    data, name = _read_source(source, filename, max_bytes)
    if len(data) == 0 or not data.strip():
        raise DataFormatError(f"{name}: the file is empty")
    notes: list = []
    if vocab is None and isinstance(source, (str, os.PathLike)) and _is_docword(name):
        vocab = _beside(Path(source))
        if vocab is not None:
            notes.append(f"vocabulary {vocab.name} found beside {name}")
    kind = _corpus_kind(name, data, vocab is not None)
    if kind is not None:
        _reject_dense_options(name, variable, resize, label_column)
        return _load_corpus(data, name, kind, vocab, max_bytes, notes)
    ext = _extension(name, data, named)
    if ext == ".npz" and _is_sparse_npz(data, name, max_bytes):
        _reject_dense_options(name, variable, resize, label_column)
        return _load_corpus(data, name, "npz", vocab, max_bytes)
    found = _corpus_zip_members(data, name, max_bytes) if ext == ".zip" else None
    if found is not None:
        _reject_dense_options(name, variable, resize, label_column)
        return _load_corpus_zip(found, name, vocab, max_bytes)
    if vocab is not None:
        raise InputError(f"`vocab` applies only to text corpora (docword.NAME.txt[.gz], .mtx, a "
                         f"sparse .npz or a .zip of them); {name} is read as a dense matrix")
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
    if loaded.extra.get("sparse"):
        lines = [f"**{loaded.source_name}**: {m} documents x {n} words ({loaded.format}, sparse: "
                 f"{loaded.extra.get('nnz', 0):,} nonzeros)"]
        return "\n".join(lines + [f"- {note}" for note in loaded.notes])
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
    if loaded.dropped_columns:
        lines.append(f"not used as features: {_dropped_text(loaded.dropped_columns)}")
    lines += [f"- {note}" for note in loaded.notes]
    return "\n".join(lines)
