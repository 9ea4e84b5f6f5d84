"""Sample sheets: a table with one row per sample, matched to the data's ``sample_names``
by an id column; its columns join ``metadata`` and one of them may give the labels.
"""

from __future__ import annotations

import dataclasses
import os

import numpy as np

from .._common.said import Remedy
from .._common.validation import InputError
from .loaded import DataFormatError, LoadedData, missing_label_note, refuse_missing_labels
from .sniff import _decode, _split_rows
from .source import _read_source


def _listed(ids, limit: int = 10) -> str:
    ids = list(ids)
    shown = ", ".join(repr(str(i)) for i in ids[:limit])
    return shown + (f", ... ({len(ids)} in all)" if len(ids) > limit else "")


def read_sheet(sample_info, max_bytes: int):
    """``(DataFrame of str cells, display name)`` of a sample sheet given as path, bytes,
    file-like or DataFrame.  Text sheets are CSV/TSV with a header line."""
    import pandas as pd


    if isinstance(sample_info, pd.DataFrame):
        df = sample_info
        if not isinstance(df.index, pd.RangeIndex):  # ids kept as the index (pandas' index_col)
            df = df.reset_index()
        return df.astype(object).where(df.notna(), "").astype(str), "the sample sheet"
    if not isinstance(sample_info, (str, os.PathLike, bytes, bytearray, memoryview)) \
            and not hasattr(sample_info, "read"):
        raise InputError("`sample_info` must be a path, bytes, a file-like object or a pandas "
                         f"DataFrame (one row per sample); got {type(sample_info).__name__}")
    data, name = _read_source(sample_info, None, max_bytes)
    if name in ("uploaded data", "uploaded file"):
        name = "(uploaded)"
    if data.startswith(b"PK\x03\x04") or name.lower().endswith((".xlsx", ".xlsm", ".xls")):
        from .excel import excel_sheet_table  # a workbook: its first non-empty sheet

        return excel_sheet_table(data, name, max_bytes), f"sample sheet {name}"
    notes: list = []
    text = _decode(data, name, notes)
    if not text.strip():
        raise DataFormatError(f"sample sheet {name}: the file is empty")
    ext = os.path.splitext(name)[1].lower()
    rows, _, _ = _split_rows(text, f"sample sheet {name}", ext or ".csv", notes)
    if len(rows) < 2:
        raise DataFormatError(f"sample sheet {name}: a header line and one row per sample are "
                              "needed; got a single line")
    header = [c.strip() or f"col_{j}" for j, c in enumerate(rows[0])]
    seen: dict = {}
    for j, h in enumerate(header):
        seen[h] = seen.get(h, -1) + 1
        if seen[h]:
            header[j] = f"{h}.{seen[h]}"
    return pd.DataFrame([[c.strip() for c in r] for r in rows[1:]], columns=header), f"sample sheet {name}"


def attach_sample_info(loaded: LoadedData, sample_info, *, sample_id_column=None, label_column=None,
                       max_bytes: int = 200_000_000, sheet=None) -> LoadedData:
    """``loaded`` with the sheet's columns joined to ``metadata`` (in the data's row order) and,
    when ``label_column`` names one of them (or, unnamed, the first with repeated values),
    its labels.  Mismatches (missing, extra, duplicate ids) are refused by name, never dropped."""
    import pandas as pd

    df, what = sheet if sheet is not None else read_sheet(sample_info, max_bytes)
    names = [str(s) for s in loaded.sample_names]
    m = len(names)
    if df.shape[0] == 0 or df.shape[1] == 0:
        raise DataFormatError(f"{what}: no rows or no columns; it needs one row per sample and a "
                              "column of sample ids")
    cols = [str(c) for c in df.columns]
    df.columns = cols
    if sample_id_column is not None:
        if isinstance(sample_id_column, int) and not isinstance(sample_id_column, bool) \
                and -len(cols) <= sample_id_column < len(cols):
            id_col = cols[sample_id_column]
        elif isinstance(sample_id_column, str) and sample_id_column in cols:
            id_col = sample_id_column
        else:
            raise InputError(f"`sample_id_column` must be one of the sheet's columns {cols[:20]} or an "
                             f"index in [0, {len(cols) - 1}]; got {sample_id_column!r}",
                             argument="sample_id_column", value=sample_id_column,
                             allowed=(*cols, range(len(cols))))
    else:
        wanted = set(names)
        hits = [sum(str(v).strip() in wanted for v in df[c]) for c in cols]
        best = int(np.argmax(hits))
        if hits[best] == 0:
            raise DataFormatError(
                f"{what}: no column holds the data's sample names ({_listed(names, 5)}); the sheet "
                f"needs a column of these ids (its columns: {cols[:20]}), or name it with "
                "`sample_id_column`", source=what,
                plain=f"no column holds the data's sample names ({_listed(names, 5)})",
                remedy=Remedy("sample_id_column", tuple(cols),
                              lead=f"the sheet needs a column of these ids (its columns: {cols[:20]}), or"))
        id_col = cols[best]
    ids = [str(v).strip() for v in df[id_col]]
    count: dict = {}
    for i in ids:
        count[i] = count.get(i, 0) + 1
    dup = [i for i, c in count.items() if c > 1]
    data_dup = sorted({s for s in names if names.count(s) > 1}) if len(set(names)) < m else []
    missing = [s for s in names if s not in count]
    extra = [i for i in count if i not in set(names)]
    problems = []
    if missing:
        problems.append(f"{len(missing)} sample(s) of the data not in the sheet: {_listed(missing)}")
    if dup:
        problems.append(f"{len(dup)} id(s) on more than one row of the sheet: {_listed(dup)}")
    if data_dup:
        problems.append(f"{len(data_dup)} sample name(s) repeated in the data: {_listed(data_dup)}")
    if extra and problems:
        problems.append(f"{len(extra)} id(s) of the sheet not in the data: {_listed(extra)}")
    if problems:
        plain = (f"{what} does not match the data's {m} samples by its column '{id_col}': "
                 + "; ".join(problems) + ". Nothing was dropped or reordered")
        raise DataFormatError(
            plain + ": fix the sheet (one row per sample, each id once) or name the id column with "
            "`sample_id_column`", plain=plain,
            remedy=Remedy("sample_id_column", tuple(cols), lead="fix the sheet (one row per sample, each id "
                                                               "once) or"))
    notes = list(loaded.notes)
    if extra:
        notes.append(f"{what}: {len(extra)} row(s) for samples not in the data ignored: {_listed(extra)}")
    where = {i: r for r, i in enumerate(ids)}
    order = [where[s] for s in names]
    joined = df.iloc[order].reset_index(drop=True)
    others = [c for c in cols if c != id_col]
    label_col = None
    if isinstance(label_column, str) and label_column in cols:
        label_col = label_column
    elif label_column is not None:
        raise InputError(f"`label_column` {label_column!r} is not a column of {what} (its columns: "
                         f"{cols[:20]})", argument="label_column", value=label_column, allowed=tuple(cols))
    else:
        for c in others:
            values = joined[c].tolist()
            k = len(set(values))
            if 2 <= k <= max(2, m // 2):
                note = missing_label_note(values, c)
                if note is None:
                    label_col = c
                    break
                notes.append(f"{what}: {note}")
    labels = loaded.labels
    variable = loaded.variable
    if label_col is not None:
        refuse_missing_labels(joined[label_col].tolist(), label_col, what)
        labels = np.array(joined[label_col].tolist(), dtype=str)
        variable = label_col
        how = "as asked" if label_column is not None else "the first column with repeated values"
        notes.append(f"labels from the sheet's column '{label_col}' ({how}): "
                     f"{len(set(labels.tolist()))} classes"
                     + (" (they replace the labels read from the file)" if loaded.labels is not None
                        else ""))
    meta = joined
    if loaded.metadata is not None:
        base = loaded.metadata.reset_index(drop=True)
        meta = meta.rename(columns={c: (f"{c} (sheet)" if c in base.columns else c) for c in cols})
        meta = pd.concat([base, meta], axis=1)
    notes.append(f"{what}: matched {m} samples by its column '{id_col}'; its columns "
                 f"{', '.join(repr(c) for c in others[:10])}{', ...' if len(others) > 10 else ''} "
                 "joined the metadata")
    extra_info = dict(loaded.extra)
    extra_info["sample_sheet"] = {"id_column": id_col, "columns": cols, "label_column": label_col}
    return dataclasses.replace(loaded, labels=labels, metadata=meta, notes=notes, variable=variable,
                               extra=extra_info)


def sheet_columns(sample_info, max_bytes: int = 200_000_000) -> list:
    """The column names of a sample sheet (for the app's label choice)."""
    return [str(c) for c in read_sheet(sample_info, max_bytes)[0].columns]

