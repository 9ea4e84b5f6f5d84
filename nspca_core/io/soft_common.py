"""The pieces of the GEO SOFT reader (:mod:`.soft`) that both kinds of file use: the names and
entities of the format, the stream source, attribute lines, numbers, ids and labels."""

from __future__ import annotations

import io
import os
from pathlib import Path, PurePosixPath

import numpy as np

from .._common.validation import InputError
from .compressed import compression_of, inner_name, open_stream
from .loaded import DataFormatError
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
    seen: dict = {}
    out = []
    for g in names:
        seen[g] = seen.get(g, -1) + 1
        out.append(g if seen[g] == 0 else f"{g}.{seen[g]}")
    return out, sum(v for v in seen.values())


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
                             f"{label_column!r}")
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
