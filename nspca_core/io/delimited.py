"""CSV/TSV text: numeric columns become features, text columns labels or metadata.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass

import numpy as np

from .._common.said import Remedy
from .._common.validation import InputError
from .conventions import _cell_kind, _number_conventions
from .loaded import (HANDLING, DataFormatError, _dropped_text, _finish, made_unique, missing_label_note,
                     refuse_missing_labels)
from .orientation import decide_orientation, transpose_names
from .sniff import _BOMS, _MISSING, _decide_header, _decode, _parse_cells, _sniff_utf16, _split_rows, _strs

#: files of at least this many bytes try the fast reader first (NumPy's C parser, no cell objects)
FAST_MIN_BYTES = 1_000_000
#: lines looked at cell by cell to decide the delimiter, header and column kinds of a large file
HEAD_LINES = 50
#: ... or fewer lines when they are long (wide files): about this many characters
HEAD_CHARS = 400_000


def _unique_names(names: list, notes: list) -> list:
    uniq, repeated = made_unique(names)
    if repeated:
        notes.append("duplicate column names made unique (.1, .2, ...)")
    return uniq


def _label_index(label_column, names: list, text_cols: list, text: dict, m: int,
                 notes: list | None = None) -> int | None:
    """The label column: asked for by name/index, else the first text column with repeats and no
    missing cell (a column passed over for its missing cells is said in ``notes``)."""
    width = len(names)
    if label_column is not None:
        if isinstance(label_column, str) and label_column in names:
            return names.index(label_column)
        if isinstance(label_column, int) and not isinstance(label_column, bool) \
                and -width <= label_column < width:
            return label_column % width
        raise InputError(f"`label_column` must be one of the column names {names[:20]} or an "
                         f"index in [0, {width - 1}]; got {label_column!r}", argument="label_column",
                         value=label_column, allowed=(*names, range(width)))
    for j in text_cols:
        if len(set(text[j].tolist())) < m:
            note = missing_label_note(text[j], names[j])
            if note is None:
                return j
            if notes is not None:
                notes.append(note)
    return None


@dataclass
class _Table:
    """A delimited file split into columns: numeric ones as one float block, text ones as str.

    ``raw_header``: the first line's cells as written (None without a header);
    ``names``: a unique name per column; ``values``: (m, len(num_cols)) float64;
    ``text``: column index -> (m,) str array (stripped); ``column_text(j)``: the
    cells of any column as text (for a numeric column used as labels);
    ``lines``: the file line of each row (counted from 1, header included).
    """

    names: list
    raw_header: list | None
    num_cols: list
    values: np.ndarray
    text: dict
    column_text: object
    lines: np.ndarray
    dropped: list
    hex_ids: dict
    notes: list


def _underscore_numbers(cells, numeric, missing, start: int, name: str) -> None:
    """Refuse numbers written with underscores ('1_000'): Python reads 1000, R and spreadsheets text."""
    for i, j in zip(*np.nonzero(numeric & ~missing)):
        t = str(cells[i, j])
        if "_" in t:
            col = (f"'{str(cells[0, j]).strip()}'" if start and not numeric[0, j]
                   else f"column {int(j) + 1}")
            raise DataFormatError(
                f"{name}: column {col} holds {t.strip()!r} on line {int(i) + 1}, a number written "
                "with underscores (Python reads it as " f"{float(t):g}, R and spreadsheets as text); "
                "write plain numbers (1000) or, if it is an identifier, make it text")


def _cells_table(data: bytes, name: str, ext: str, header) -> _Table:
    """Every cell looked at: any encoding, number convention, missing marker or mixed column."""
    notes: list = []
    text = _decode(data, name, notes)
    rows, line_no, delim = _split_rows(text, name, ext, notes)
    del text
    width = len(rows[0])
    cells = np.array(rows, dtype=object)
    del rows
    # numbers like 'nan'/'inf' parse as floats: they are values (reported later), not text
    values, numeric, missing = _parse_cells(cells)
    if b"_" in data:
        _underscore_numbers(cells, numeric, missing, 1 if cells.shape[0] > 1 else 0, name)
    hex_ids = _number_conventions(cells, values, numeric, missing, delim, name, notes)
    has_header, note = _decide_header(header, cells, values, numeric, missing)
    notes.insert(0, note)
    if has_header:
        raw = [str(c).strip() for c in cells[0]]
        names = [c or f"col_{j}" for j, c in enumerate(raw)]
        body, bnum, bmiss, bval, lines = cells[1:], numeric[1:], missing[1:], values[1:], line_no[1:]
    else:
        raw = None
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
                              "(missing) and choose a nan_policy", source=name,
                              plain=f"column '{names[j]}' is numeric except for {rows_bad.size} value(s): "
                                    f"{shown} (lines of the file counted from 1, the header line included)",
                              remedy=Remedy("nan_policy", HANDLING,
                                            lead="fix them or write them as NA (missing) and"))
    dropped = [{"column": names[j], "reason": "empty (no values)"}
               for j in np.flatnonzero(all_missing)]
    if dropped:
        notes.append(f"ignored {len(dropped)} empty column(s): "
                     f"{', '.join(d['column'] for d in dropped[:10])}")
    text_cols = [j for j in range(width) if not is_num[j] and not all_missing[j]]
    num_cols = [j for j in range(width) if is_num[j]]
    if not num_cols:
        raise DataFormatError(f"{name}: non-numeric matrix: no column holds only numbers "
                              f"(columns: {names[:10]}{' ...' if len(names) > 10 else ''}); "
                              "features must be numeric, with at most some text columns for "
                              "labels/metadata" + _decimal_hint(delim, cells))
    return _Table(names=names, raw_header=raw, num_cols=num_cols, values=bval[:, num_cols],
                  text={j: _strs(body[:, j]) for j in text_cols},
                  column_text=lambda j: _strs(body[:, j]), lines=np.asarray(lines),
                  dropped=dropped, hex_ids=hex_ids, notes=notes)


def _load_text(data: bytes, name: str, ext: str, nan_policy: str, label_column, header,
               orientation: str = "auto"):
    table = _fast_table(data, name, ext, header)
    if table is None:
        table = _cells_table(data, name, ext, header)
    _integer_ids(table)
    m = table.values.shape[0]
    text_cols = list(table.text)
    distinct = [j for j in text_cols if len(set(table.text[j].tolist())) == m]
    id_col = distinct[0] if distinct else (text_cols[0] if text_cols else None)
    raw = table.raw_header
    decided, note = decide_orientation(
        orientation, ids=None if id_col is None else table.text[id_col],
        id_header=None if (raw is None or id_col is None) else raw[id_col],
        column_names=None if raw is None else [raw[j] for j in table.num_cols],
        n_rows=m, n_numeric=len(table.num_cols))
    table.notes.insert(1, note)
    if decided == "rows-are-features":
        return _features_as_rows(table, id_col, name, nan_policy, label_column)
    return _samples_as_rows(table, distinct, name, nan_policy, label_column)


#: headers of a first column of integers that are ids (R's row names, GEO's ID_REF), not a feature
_ID_HEADERS = {"", "unnamed: 0", "id_ref", "row.names", "rownames", "probe_id", "probeset_id", "gene_id",
               "entrez", "entrez_id", "geneid"}


def _integer_ids(table: _Table) -> None:
    """A first column of distinct integers under an empty header (as R's write.csv writes row
    names) or ``ID_REF``/``gene_id``/... holds ids, not a feature: it becomes a text column."""
    if table.raw_header is None or not table.num_cols or table.num_cols[0] != 0 or len(table.num_cols) < 3:
        return
    if table.raw_header[0].strip().lower() not in _ID_HEADERS:
        return
    col = table.values[:, 0]
    if not (np.isfinite(col).all() and (col == np.round(col)).all() and np.unique(col).size == col.size):
        return
    table.text = {0: table.column_text(0), **table.text}
    table.values = table.values[:, 1:]
    table.num_cols = table.num_cols[1:]
    table.notes.append(f"first column '{table.raw_header[0]}' holds distinct integers under "
                       f"{'an empty header (row names)' if not table.raw_header[0].strip() else 'an id header'}: "
                       "read as ids, not as a feature")


def _features_as_rows(table: _Table, id_col, name: str, nan_policy: str, label_column):
    """The table transposed: columns are samples (the header their names), rows features."""
    if label_column is not None:
        raise InputError(f"`label_column` {label_column!r} names a column of {name}, but its rows are "
                         "read as features (each column a sample): give the labels in a sample sheet "
                         "(`sample_info`, one row per sample) and name its column, or choose "
                         "orientation 'rows-are-samples'", argument="label_column", value=label_column,
                         plain=f"the label column {label_column!r} names a column of {name}, but its rows are "
                               "read as features (each column a sample)",
                         remedy=Remedy("orientation", ("rows-are-samples",),
                                       lead="give the labels in a sample sheet (one row per sample) and name "
                                            "its column, or"))
    notes, names = table.notes, table.names
    n_rows = table.values.shape[0]
    dropped = list(table.dropped)
    if id_col is None:
        features = transpose_names(n_rows)
        notes.append(f"no id column: the features are named by their row (row_1 ... row_{n_rows})")
    else:
        features = _unique_names(table.text[id_col].tolist(), notes)
        notes.append(f"feature names from the id column '{names[id_col]}' (e.g. '{features[0]}')")
    for j in table.text:
        if j != id_col:
            dropped.append({"column": names[j], "reason": "text about the features (the file's rows), "
                                                          "not a sample; not used"})
    samples = ([names[j] for j in table.num_cols] if table.raw_header is not None
               else [str(i + 1) for i in range(len(table.num_cols))])
    return _finish(table.values.T, features, None, None, None, notes, name, "csv", nan_policy,
                   dropped=dropped, sample_names=samples,
                   extra={"orientation": "rows-are-features"})


def _samples_as_rows(table: _Table, distinct: list, name: str, nan_policy: str, label_column):
    import pandas as pd

    notes, names, text = table.notes, table.names, table.text
    m = table.values.shape[0]
    text_cols = list(text)
    num_cols = list(table.num_cols)
    dropped = list(table.dropped)
    label_idx = _label_index(label_column, names, text_cols, text, m, notes)
    labels = None
    X = table.values
    if label_idx is not None:
        labels = text[label_idx] if label_idx in text else table.column_text(label_idx)
        refuse_missing_labels(labels, names[label_idx], name, table.lines)
        if label_idx in num_cols:
            X = np.delete(X, num_cols.index(label_idx), axis=1)
            num_cols.remove(label_idx)
            notes.append(f"column '{names[label_idx]}' used as labels (removed from the features, "
                         "as asked)")
        else:
            notes.append(f"text column '{names[label_idx]}' used as labels "
                         f"({len(set(labels.tolist()))} distinct values)")
        dropped.append({"column": names[label_idx], "reason": "used as labels"})
    meta_cols = [j for j in text_cols if j != label_idx]
    for j in meta_cols:
        example = next((str(c) for c in text[j] if c and c.lower() not in _MISSING), "")
        reason = table.hex_ids.get(j, "text")
        dropped.append({"column": names[j], "reason": f"{reason}, e.g. {example!r}; kept as "
                                                      "metadata, not a feature"})
    if not num_cols:
        raise DataFormatError(f"{name}: a single column (feature); sparse PCA needs at least 2 numeric "
                              "columns, samples as rows and features as columns (not features: "
                              f"{_dropped_text(dropped)})")
    metadata = None
    if text_cols or label_idx is not None:
        keep = [j for j in range(len(names)) if (j in text or j == label_idx)]
        metadata = pd.DataFrame({names[j]: (text[j] if j in text else labels) for j in keep})
    if meta_cols:
        notes.append(f"{len(meta_cols)} non-numeric column(s) kept as metadata, not features: "
                     f"{', '.join(names[j] for j in meta_cols[:10])}")
    ids = next((j for j in distinct if j != label_idx), None)
    return _finish(X, [names[j] for j in num_cols], labels, metadata, None, notes, name,
                   "csv", nan_policy, variable=None if label_idx is None else names[label_idx],
                   lines=table.lines, dropped=dropped,
                   sample_names=None if ids is None else text[ids].tolist(),
                   extra={"orientation": "rows-are-samples"})


def _decimal_hint(delim, cells) -> str:
    """A likely cause when nothing is numeric: a convention we do not read."""
    sample = "|".join(str(c) for c in cells[1:6].ravel())
    if re.search("\\d[ \u00a0\u202f'\u2019]\\d{3}\\b", sample):
        return ("; numbers seem to group thousands with spaces or apostrophes ('1 000'), which "
                "are not read: write plain numbers (1000)")
    if re.search(r"\d%", sample):
        return "; percentages ('12%') are not read as numbers: write 12 or 0.12"
    return ""


def _cell_value(text: str) -> float:
    """A numeric cell as the careful reader reads it: a missing marker is NaN, ``1_000`` is refused."""
    t = text.strip()
    if t.lower() in _MISSING:
        return np.nan
    if "_" in t:
        raise ValueError(f"underscored number {t!r}")
    return float(t)


def _fast_table(data: bytes, name: str, ext: str, header) -> _Table | None:
    """A large clean file read by NumPy's C parser, or None (then every cell is looked at).

    The first :data:`HEAD_LINES` lines decide the delimiter, the header and which
    columns are numbers or text, exactly as the cell-by-cell reader would; the
    numeric columns are then parsed in one pass into a float64 block, the text
    columns into strings.  Anything the head does not settle (missing markers,
    number conventions, blank lines, a numeric first line above text columns,
    a non-UTF-8 encoding) or that the parser refuses (text in a numeric column,
    ragged rows) goes to the careful reader, which gives the same result or the
    precise message.  Memory: the file's bytes, the matrix, and the parser's
    buffer (one block of lines).
    """
    if len(data) < FAST_MIN_BYTES or data.startswith((b"\n", b"\r")) or b"\n\n" in data \
            or b"\n\r\n" in data or any(data.startswith(bom) for bom, _ in _BOMS) \
            or _sniff_utf16(data) is not None or b"\x00" in data[:65536] \
            or data.lstrip().startswith(b"#") or b"\n#" in data:  # comment lines: the careful reader
        return None
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return None
    first = data.find(b"\n")
    if first < 0:
        return None
    # about HEAD_CELLS characters of whole lines, at least 3 lines (a header and two rows)
    end, n_head = 0, max(3, min(HEAD_LINES, -(-HEAD_CHARS // (first + 1))))
    for _ in range(n_head):
        nxt = data.find(b"\n", end)
        if nxt < 0:
            return None
        end = nxt + 1
    notes: list = []
    rows, _, delim = _split_rows(data[:end].decode("utf-8"), name, ext, notes)
    if any("trailing delimiter" in nt for nt in notes):
        return None
    cells = np.array(rows, dtype=object)
    values, numeric, missing = _parse_cells(cells)
    body_num = numeric[1:].all(axis=0)
    body_text = (~numeric[1:]).all(axis=0)
    if not (body_num | body_text).all() or body_text.all() or missing[1:].all(axis=0).any():
        return None  # mixed or all-text head, or a column of only missing values (maybe empty)
    has_missing = bool(missing[1:].any())
    if b"_" in data[:end] and any("_" in str(c) for c in cells[numeric]):
        return None  # '1_000': the careful reader refuses it by name
    if any(_cell_kind(str(c).strip()) for c in cells[1:][:, body_text].ravel()):
        return None  # hex or comma numbers in a text-looking column
    has_header, hnote = _decide_header(header, cells, values, numeric, missing)
    settled = header is not None or "text above numbers" in hnote
    if has_missing and not settled:
        return None
    num_cols = [int(j) for j in np.flatnonzero(body_num)]
    text_cols = [int(j) for j in np.flatnonzero(body_text)]
    kw = dict(delimiter=delim, comments=None, quotechar='"', ndmin=2, encoding="utf-8")
    n_lines = data.count(b"\n") + (not data.endswith(b"\n"))
    skip = 1 if (settled and has_header) else 0
    X = None
    if not has_missing:
        try:  # max_rows: the result is allocated once, at its size
            X = np.loadtxt(io.BytesIO(data), dtype=np.float64, skiprows=skip, max_rows=n_lines - skip,
                           usecols=num_cols if text_cols else None, **kw)
        except (ValueError, TypeError, IndexError):
            X = None
    if X is None:
        if not settled:
            return None
        try:  # missing markers (NA, empty, ...): each cell through Python's float, still no cell objects
            X = np.loadtxt(io.BytesIO(data), dtype=np.float64, skiprows=skip, max_rows=n_lines - skip,
                           usecols=num_cols if text_cols else None, converters=_cell_value, **kw)
        except (ValueError, TypeError, IndexError):
            return None
        if np.isnan(X).all(axis=0).any():
            return None  # a column without a value: the careful reader says whether it is empty
    if not settled:
        # numbers (or text over text columns) on the first line: decide on the whole body of the
        # numeric columns, as the careful reader does (text columns take no part in that choice)
        if missing[0, num_cols].any():
            return None
        # every cell a number, none missing: read-only views, no matrix-sized masks
        has_header, hnote = _decide_header(header, cells[:, num_cols], X, np.broadcast_to(True, X.shape),
                                           np.broadcast_to(False, X.shape))
        if has_header:
            X = X[1:]
    if X.shape[0] != n_lines - has_header or X.shape[0] == 0:
        return None
    text = {}
    if text_cols:
        try:
            T = np.loadtxt(io.BytesIO(data), dtype=str, skiprows=int(has_header), usecols=text_cols, **kw)
        except (ValueError, TypeError, IndexError):
            return None
        T = np.char.strip(T)
        if T.shape[0] != X.shape[0]:
            return None
        for c, j in enumerate(text_cols):
            col = T[:, c]
            _, tnum, tmiss = _parse_cells(col[:, None].astype(object))
            if tnum.any() or tmiss.any():
                return None  # numbers or missing markers in a text column: look at every cell
            text[j] = col
    notes.insert(0, hnote)
    width = cells.shape[1]
    if has_header:
        raw = [str(c).strip() for c in cells[0]]
        names = _unique_names([c or f"col_{j}" for j, c in enumerate(raw)], notes)
    else:
        raw, names = None, [f"col_{j}" for j in range(width)]
    skip = int(has_header)

    def column_text(j):
        col = np.loadtxt(io.BytesIO(data), dtype=str, skiprows=skip, usecols=[j], **kw)
        return np.char.strip(col.ravel())

    return _Table(names=names, raw_header=raw, num_cols=num_cols, values=X, text=text,
                  column_text=column_text, lines=np.arange(X.shape[0]) + 1 + skip, dropped=[],
                  hex_ids={}, notes=notes)
