"""Excel workbooks (``.xlsx``/``.xlsm`` through openpyxl, ``.xls`` through xlrd, both via pandas):
one sheet is written out as tab-separated text and read by the CSV/TSV reader, so a sheet and
the same table saved as text give the same data, header decision, labels and orientation.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import math
import numbers

from .._common.validation import InputError
from .archive import _ARCHIVE_ERRORS, _open_zip
from .loaded import DataFormatError, LoadedData, over_cap

#: what to run when the Excel readers are missing
EXCEL_INSTALL = {"openpyxl": "pip install 'nspca-core[formats]'  (or: pip install openpyxl)",
                 "xlrd": "pip install xlrd"}


def _engine(name: str) -> str:
    return "xlrd" if name.lower().endswith(".xls") else "openpyxl"


def _check_size(data: bytes, name: str, max_bytes: int) -> None:
    """An .xlsx is a zip of XML: refuse one expanding past ``max_bytes`` before parsing it."""
    if not data.startswith(b"PK"):
        return

    zf = _open_zip(data, name, ".xlsx")
    try:
        total = sum(i.file_size for i in zf.infolist())
    except _ARCHIVE_ERRORS:  # pragma: no cover - a damaged directory: openpyxl then says so
        return
    if total > max_bytes:
        raise over_cap(name, f"the workbook expands to {total:,} bytes of XML, over ", max_bytes,
                       " (possible zip bomb)")


def read_workbook(data: bytes, name: str, max_bytes: int) -> dict:
    """``{sheet name: list of rows (lists of cell values)}`` of a workbook, in sheet order."""
    import pandas as pd

    engine = _engine(name)
    try:
        __import__(engine)
    except ImportError:
        raise DataFormatError(f"{name}: reading {'.xls' if engine == 'xlrd' else '.xlsx'} workbooks needs the "
                              f"optional package {engine}; install it with: {EXCEL_INSTALL[engine]}") from None
    _check_size(data, name, max_bytes)
    try:
        sheets = pd.read_excel(io.BytesIO(data), sheet_name=None, header=None, dtype=object, engine=engine)
    except Exception as exc:  # noqa: BLE001 - zipfile/openpyxl/xlrd raise many kinds on a damaged file
        raise DataFormatError(f"{name}: not a readable Excel workbook ({type(exc).__name__}: {exc}); save it "
                              "again from Excel, or as CSV") from None
    out = {}
    for sheet, df in sheets.items():
        rows = df.astype(object).where(df.notna(), None).values.tolist()
        out[str(sheet)] = rows
    return out


def _is_number(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(float(v))


def _numeric_block(rows: list) -> bool:
    """At least 2 columns holding at least 2 numbers each."""
    if len(rows) < 2:
        return False
    width = max((len(r) for r in rows), default=0)
    counts = [sum(1 for r in rows if j < len(r) and _is_number(r[j])) for j in range(width)]
    return sum(c >= 2 for c in counts) >= 2


def _cell_text(v) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return str(v).upper()
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        return repr(float(v))
    return str(v)


def _as_tsv(rows: list) -> bytes:
    """The rows as tab-separated text (trailing empty rows/columns dropped)."""
    while rows and all(v is None for v in rows[-1]):
        rows = rows[:-1]
    width = max((max((j + 1 for j, v in enumerate(r) if v is not None), default=0) for r in rows), default=0)
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter="\t", lineterminator="\n")
    for r in rows:
        writer.writerow([_cell_text(v) for v in list(r[:width]) + [None] * (width - len(r[:width]))])
    return buf.getvalue().encode("utf-8")


def _pick_sheet(book: dict, sheet, name: str, need_numbers: bool = True) -> str:
    names = list(book)
    if sheet is not None:
        if isinstance(sheet, int) and not isinstance(sheet, bool) and -len(names) <= sheet < len(names):
            return names[sheet]
        if isinstance(sheet, str) and sheet in names:
            return sheet
        raise InputError(f"`sheet` must be one of the sheets of {name}: {names[:20]} (a name or a 0-based "
                         f"position); got {sheet!r}")
    for s in names:
        if (_numeric_block(book[s]) if need_numbers else any(any(v is not None for v in r) for r in book[s])):
            return s
    raise DataFormatError(f"{name}: no sheet holds a numeric block (at least 2 columns of numbers); sheets: "
                          f"{names[:20]}")


def load_excel(data: bytes, name: str, *, sheet, nan_policy: str, label_column, reload,
               max_bytes: int) -> LoadedData:
    """A workbook's sheet (``sheet``, else the first with a numeric block) read as a CSV/TSV table."""
    book = read_workbook(data, name, max_bytes)
    chosen = _pick_sheet(book, sheet, name)
    tsv = _as_tsv(book[chosen])
    inner = f"{name} [sheet {chosen}].tsv"
    try:
        loaded = reload(tsv, inner)
    except DataFormatError as exc:
        raise DataFormatError(str(exc).replace(inner, f"{name} (sheet {chosen!r})", 1)) from None
    others = [s for s in book if s != chosen]
    how = "as asked" if sheet is not None else "the first sheet with a numeric block"
    note = f"Excel workbook: sheet {chosen!r} read ({how})" + (f"; other sheets: {', '.join(map(repr, others))}"
                                                             " (choose one with sheet=)" if others else "")
    return dataclasses.replace(loaded, source_name=name, format="excel", notes=[note] + list(loaded.notes),
                               extra={**loaded.extra, "sheet": chosen})


def excel_sheet_table(data: bytes, name: str, max_bytes: int):
    """A sample sheet in a workbook: its first non-empty sheet as a DataFrame of str cells (header row first)."""
    import pandas as pd

    book = read_workbook(data, name, max_bytes)
    chosen = _pick_sheet(book, None, name, need_numbers=False)
    rows = [[_cell_text(v).strip() for v in r] for r in book[chosen] if any(v is not None for v in r)]
    if len(rows) < 2:
        raise DataFormatError(f"sample sheet {name}: a header line and one row per sample are needed; sheet "
                              f"{chosen!r} has {len(rows)} row(s)")
    header = [c or f"col_{j}" for j, c in enumerate(rows[0])]
    seen: dict = {}
    for j, h in enumerate(header):
        seen[h] = seen.get(h, -1) + 1
        if seen[h]:
            header[j] = f"{h}.{seen[h]}"
    return pd.DataFrame(rows[1:], columns=header)
