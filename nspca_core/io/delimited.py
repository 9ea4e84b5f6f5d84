"""CSV/TSV text: numeric columns become features, text columns labels or metadata.
"""

from __future__ import annotations

import re

import numpy as np

from .._validation import InputError
from .conventions import _number_conventions
from .loaded import DataFormatError, _finish
from .sniff import _decide_header, _decode, _parse_cells, _split_rows, _strs


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
