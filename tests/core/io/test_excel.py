"""Excel workbooks written by openpyxl, read as the same table saved as text."""

import io

import numpy as np
import pytest

openpyxl = pytest.importorskip("openpyxl")

from nspca_core._common.validation import InputError  # noqa: E402
from nspca_core.io import DataFormatError, load_file  # noqa: E402


def _book(sheets):
    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    for title, rows in sheets:
        ws = wb.create_sheet(title)
        for r in rows:
            ws.append(r)
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def _table(seed=0, m=6, n=4):
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(m, n)) * 100, 3)
    rows = [["sample", "group"] + [f"gene{j}" for j in range(n)]]
    rows += [[f"s{i}", "ab"[i % 2]] + [float(v) for v in X[i]] for i in range(m)]
    return X, rows


def test_first_numeric_sheet_read_like_its_csv():
    X, rows = _table()
    data = _book([("About", [["Lab notes"], ["made by", "me"]]), ("Expression", rows), ("Other", rows)])
    got = load_file(data, filename="lab.xlsx")
    csv = "\n".join(",".join(str(c) for c in r) for r in rows).encode()
    ref = load_file(csv, filename="lab.csv")
    assert np.array_equal(got.X, X) and np.array_equal(got.X, ref.X)
    assert got.feature_names == ref.feature_names and got.labels.tolist() == ref.labels.tolist()
    assert got.format == "excel" and got.extra["sheet"] == "Expression"
    assert ("sheet 'Expression' read (the first sheet with a numeric block); other sheets: 'About', 'Other'"
            in got.notes[0])
    assert load_file(data, filename="lab.xlsx", sheet="Other").extra["sheet"] == "Other"
    assert load_file(data, filename="lab.xlsx", sheet=2).extra["sheet"] == "Other"


def test_excel_errors_are_named():
    X, rows = _table()
    data = _book([("Expression", rows)])
    with pytest.raises(InputError, match=r"`sheet` must be one of the sheets of lab.xlsx: \['Expression'\]"):
        load_file(data, filename="lab.xlsx", sheet="Nope")
    with pytest.raises(DataFormatError, match=r"no sheet holds a numeric block"):
        load_file(_book([("Text", [["a", "b"], ["c", "d"]])]), filename="t.xlsx")
    with pytest.raises(DataFormatError, match=r"not a (valid|readable)"):
        load_file(data[: len(data) // 2], filename="cut.xlsx")
    bad = [r[:] for r in rows]
    bad[3][4] = "n.d."
    with pytest.raises(DataFormatError, match=r"b.xlsx \(sheet 'E'\): column 'gene2' is numeric except for 1 "
                                              r"value\(s\): line 4 \('n.d.'\)"):
        load_file(_book([("E", bad)]), filename="b.xlsx")


def test_sample_sheet_in_excel():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(5, 3))
    csv = ("id,a,b,c\n" + "".join(f"S{i}," + ",".join(repr(float(v)) for v in X[i]) + "\n" for i in range(5))).encode()
    sheet = _book([("Samples", [["sample_id", "condition"]] + [[f"S{i}", "tumor" if i % 2 else "normal"]
                                                               for i in range(5)])])
    got = load_file(csv, filename="d.csv", sample_info=sheet)
    assert got.labels.tolist() == ["normal", "tumor", "normal", "tumor", "normal"]


def test_xls_without_xlrd_names_the_pip_line():
    import importlib.util

    if importlib.util.find_spec("xlrd") is not None:
        pytest.skip("xlrd is installed: .xls files are read")
    with pytest.raises(DataFormatError, match=r"old.xls: reading .xls workbooks needs the optional package xlrd; "
                                              r"install it with: pip install xlrd"):
        load_file(b"\xd0\xcf\x11\xe0 not really", filename="old.xls")
