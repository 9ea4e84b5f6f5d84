"""The pieces of the GEO SOFT reader (:mod:`.soft`) that both kinds of file use: the names and
entities of the format, the stream source, attribute lines, numbers, ids and labels."""

from __future__ import annotations

import io
import os
from pathlib import Path, PurePosixPath

import numpy as np

from .._common.validation import InputError
from .compressed import compression_of, inner_name, open_stream
from .loaded import DataFormatError, made_unique
from .sniff import _MISSING

_ENTITIES = ("^DATABASE", "^DATASET", "^SUBSET", "^SERIES", "^PLATFORM", "^SAMPLE", "^ANNOTATION")
#: platform table columns holding gene symbols, in order of preference
_SYMBOL_COLUMNS = ("gene symbol", "gene_symbol", "symbol", "ilmn_gene", "genesymbol", "gene_name",
                   "orf", "identifier")


def _base(name: str) -> str:
    return PurePosixPath(str(name).replace("\\", "/")).name.lower()


def is_soft(name: str, head: bytes) -> bool:
    """A SOFT file: named ``*.soft`` (possibly compressed) or starting with a SOFT entity line."""
    if _base(inner_name(name)).endswith(".soft"):
        return True
    if head[:2] == b"\x1f\x8b":
        import zlib

        try:
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 4096)
        except zlib.error:
            return False
    text = head[:200].lstrip(b"\xef\xbb\xbf \t\r\n")
    return any(text.startswith(e.encode()) for e in _ENTITIES)


class _Source:
    """A re-openable text stream of the file (a path is reopened; bytes are wrapped)."""

    def __init__(self, source, name: str, max_bytes: int):
        self.name, self.max_bytes = name, max_bytes
        if isinstance(source, (str, os.PathLike)):
            self.path, self.data = Path(source), None
            self.total = self.path.stat().st_size
            with open(self.path, "rb") as fh:
                head = fh.read(8)
        else:
            self.path, self.data = None, source
            self.total, head = len(source), source[:8]
        self.kind = compression_of(name, head)
        if self.kind is not None and not any(head.startswith(m) for m, _ in
                                             ((b"\x1f\x8b", 0), (b"BZh", 0), (b"\xfd7zXZ\x00", 0),
                                              (b"\x28\xb5\x2f\xfd", 0))):
            self.kind = None  # named .gz but stored plain: read as is

    def open(self):
        raw = open(self.path, "rb") if self.path is not None else io.BytesIO(self.data)
        stream = open_stream(raw, self.kind, self.name, self.max_bytes, total=self.total)
        return io.TextIOWrapper(io.BufferedReader(stream, 1 << 20), encoding="utf-8", errors="replace",
                                newline=None)


def _attr(line: str) -> tuple[str, str]:
    key, _, value = line[1:].partition("=")
    return key.strip(), value.strip()


def _floats(cells: np.ndarray, name: str, where) -> np.ndarray:
    """Numbers of a string array (``null``/empty/NA are NaN); a non-number is refused by position,
    ``where(index)`` naming it."""
    s = np.char.strip(cells.astype(str))
    miss = np.isin(np.char.lower(s), list(_MISSING))
    try:
        return np.where(miss, "nan", s).astype(np.float64)
    except ValueError:
        flat = s.ravel()
        for i, t in enumerate(flat):
            if miss.ravel()[i]:
                continue
            try:
                float(t)
            except ValueError:
                raise DataFormatError(f"{name}: {str(t)!r} at {where(np.unravel_index(i, s.shape))} is not a "
                                      "number; the table's value columns must hold numbers (null or "
                                      "empty for missing)") from None
        raise


def _unique_names(names: list) -> tuple[list, int]:
    """Repeated names made unique with ``.1``, ``.2`` (and how many were renamed)."""
    out, repeated = made_unique(names)
    return out, sum(repeated.values()) - len(repeated)


def _duplicates(ids: list) -> list:
    seen, dup = set(), []
    for i in ids:
        if i in seen and i not in dup:
            dup.append(i)
        seen.add(i)
    return dup


def _listed(ids, limit: int = 5) -> str:
    ids = list(ids)
    return ", ".join(repr(str(i)) for i in ids[:limit]) + (f", ... ({len(ids)} in all)" if len(ids) > limit else "")


def _pick_label(metadata, columns: list, label_column, name: str, notes: list, what: str):
    """Labels from ``label_column`` (a metadata column), or the first of ``columns`` with >= 2 classes."""
    cols = [str(c) for c in metadata.columns]
    if label_column is not None:
        if not (isinstance(label_column, str) and label_column in cols):
            raise InputError(f"`label_column` must be one of the {what}s of {name}: {cols[:30]}; got "
                             f"{label_column!r}", argument="label_column", value=label_column,
                             allowed=tuple(cols))
        labels = np.array([str(v) for v in metadata[label_column]], dtype=str)
        notes.append(f"labels from the {what} '{label_column}' ({len(set(labels.tolist()))} classes)")
        return labels, label_column
    for c in columns:
        values = [str(v) for v in metadata[c]]
        if len({v for v in values if v}) >= 2:
            labels = np.array(values, dtype=str)
            others = [o for o in columns if o != c]
            notes.append(f"labels from the {what} '{c}' ({len(set(values))} classes), the first with at "
                         "least 2 classes" + (f"; others: {', '.join(others)} (choose one with "
                                              "label_column)" if others else ""))
            return labels, c
    return None, None


def _symbol_names(ids: list, symbols: list | None, feature_names: str, name: str, notes: list) -> list:
    if feature_names == "symbol":
        if symbols is None:
            raise InputError(f"feature_names='symbol': {name} has no gene symbols (no IDENTIFIER column "
                             "or platform symbol column); use feature_names='id'")
        named = [s if s else i for s, i in zip(symbols, ids)]
        named, renamed = _unique_names(named)
        notes.append("feature names: gene symbols" + (f" ({renamed} repeated symbol(s) made unique with "
                                                      ".1, .2, ...)" if renamed else ""))
        return named
    if symbols is not None:
        notes.append("feature names: probe ids (ID_REF); gene symbols are in extra['gene_symbols'] "
                     "(feature_names='symbol' uses them)")
    return ids


class _Lines:
    """Lines of a text stream, and whole tables cut out of it at C speed (:meth:`until`)."""

    def __init__(self, fh):
        self.fh, self.pend = fh, None

    def __iter__(self):
        return self

    def __next__(self):
        if self.pend is not None:
            line = self.pend.readline()
            if line.endswith("\n"):
                return line
            self.pend = None
            line += self.fh.readline()
        else:
            line = self.fh.readline()
        if not line:
            raise StopIteration
        return line

    def until(self, marker: str) -> tuple[str, int, bool]:
        """The text up to the line starting with ``marker`` (that line consumed): ``(text, lines
        consumed, found)``."""
        text = "\n" + (self.pend.read() if self.pend is not None else "")
        self.pend = None
        need = "\n" + marker
        start = 0
        while True:
            k = text.find(need, start)
            if k >= 0:
                e = text.find("\n", k + 1)
                while e < 0:
                    more = self.fh.read(1 << 20)
                    if not more:
                        e = len(text)
                        break
                    text += more
                    e = text.find("\n", k + 1)
                block = text[1:k + 1]
                self.pend = io.StringIO(text[e + 1:])
                return block, block.count("\n") + 1, True
            chunk = self.fh.read(1 << 20)
            if not chunk:
                return text[1:], text.count("\n"), False
            start = max(0, len(text) - len(need))
            text += chunk


def _table(block: str, name: str, what: str, start: int, want, numeric: int | None = None):
    """Columns of a SOFT table (its text, the header line first) as lists: ``want(header)`` gives
    the column positions read; column ``numeric`` (a position) is read as float64 when every cell
    is a number or a missing mark (else as str, for the caller to find the culprit).  Parsed by
    pandas' C reader (quotes are literal, as GEO writes them)."""
    import csv

    import pandas as pd

    first = block[:block.find("\n") if "\n" in block else len(block)]
    header = [h.strip() for h in first.rstrip("\r").split("\t")] if block.strip() else []
    cols = want(header)
    numeric = set() if numeric is None else {cols[k] for k in (numeric if isinstance(numeric, list) else [numeric])}
    if block.count("\n") < 1 or not block[len(first) + 1:].strip():
        return header, [[] for _ in cols]
    missing = sorted({v for t in _MISSING for v in (t, t.upper(), t.capitalize())})
    kw = dict(sep="\t", header=0, usecols=cols, quoting=csv.QUOTE_NONE, engine="c")
    try:
        if numeric:
            try:
                df = pd.read_csv(io.StringIO(block), dtype={c: (np.float64 if c in numeric else str) for c in cols},
                                 na_values=missing, keep_default_na=False, float_precision="round_trip", **kw)
                order = sorted(cols)
                return header, [df.iloc[:, order.index(c)].to_numpy() if c in numeric
                                else df.iloc[:, order.index(c)].fillna("").tolist() for c in cols]
            except ValueError as exc:
                if "could not convert" not in str(exc) and "Unable to parse" not in str(exc):
                    raise
        df = pd.read_csv(io.StringIO(block), dtype=str, na_filter=False, **kw).fillna("")  # short rows
    except (ValueError, pd.errors.ParserError) as exc:
        raise DataFormatError(f"{name}: the table of {what} (from line {start}) cannot be read as tab-separated "
                              f"columns ({str(exc).strip()}; lines counted from its header)") from None
    order = sorted(cols)
    return header, [df.iloc[:, order.index(c)].tolist() for c in cols]


def _values(texts: list, name: str, where) -> np.ndarray:
    """Numbers of a column of str (``null``/empty/NA missing), a non-number refused by its row."""
    import pandas as pd

    vals = pd.to_numeric(pd.Series(texts, dtype=object), errors="coerce").to_numpy(dtype=np.float64)
    for k in np.flatnonzero(np.isnan(vals)):
        t = str(texts[k]).strip()
        if t.lower() in _MISSING:
            continue
        try:
            vals[k] = float(t)
        except ValueError:
            raise DataFormatError(f"{name}: {t!r} at {where(int(k))} is not a number; the table's VALUE "
                                  "column must hold numbers (null or empty for missing)") from None
    return vals


def _records(stream):
    """The lines of a SOFT stream (a :class:`_Lines`) as records ``(kind, key, value, line)``:
    ``"^"`` an entity (its name upper-cased), ``"!"`` an attribute (its key lower-cased),
    ``"#"`` a column description, and ``"table"`` a whole table cut out at once (``key`` its
    kind such as ``"sample"``, ``value`` its text, ``line`` the line of ``!<kind>_table_begin``);
    a table that never ends is the last record, its text None."""
    lineno = 0
    for line in stream:
        lineno += 1
        mark = line[:1]
        if mark not in ("^", "!", "#"):
            continue
        key, value = _attr(line)
        if mark == "^":
            yield "^", key.upper(), value, lineno
        elif mark == "#":
            yield "#", key, value, lineno
        elif key.lower().endswith("_table_begin"):
            kind = key.lower()[:-len("_table_begin")]
            block, count, ended = stream.until(f"!{kind}_table_end")
            start, lineno = lineno, lineno + count
            yield "table", kind, block if ended else None, start
            del block
            if not ended:
                return
        else:
            yield "!", key.lower(), value, lineno
