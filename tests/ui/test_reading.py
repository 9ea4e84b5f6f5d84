"""ui/reading.py and ui/messages.py without a browser: the real readers' errors and notes, on files
written here, said with the "Your data" page's controls (composed from the parts the core gives, never
from its text); the label column typed as a position counted from 1; the file types read from the core.

Every message the page would show is checked for the API's argument names: none may leak."""

from __future__ import annotations

import gzip
import io
import zipfile

import numpy as np
import pytest
import scipy.io
from PIL import Image

from nspca_core import InputError
from nspca_core.io import ALLOWED_EXTENSIONS, load_file
from ui import reading
from ui.messages import CONTROLS, HEADERS, NAN_CHOICES, ORIENTATIONS, for_user

YEARS = b"2019,2020,2021\n1.5,2.5,3.5\n2.5,3.5,1.5\n3.5,1.5,2.5\n4.5,2.5,1.5\n"
#: the API's spellings that must never reach the page
API_WORDS = ("nan_policy", "max_bytes", "resize=", "variable=", "label_column", "sample_id_column",
             "sample_info", "header '", "orientation '", "`")


def _clean(text: str) -> str:
    leaked = [w for w in API_WORDS if w in text]
    assert not leaked, (leaked, text)
    return text


def _error(data: bytes, name: str, **options) -> str:
    """What the page says for the reader's error on ``data`` (the file's name is on the page already)."""
    with pytest.raises(InputError) as info:
        load_file(data, filename=name, **options)
    text = for_user(info.value, filename=name)
    assert not text.startswith(f"{name}:"), text
    return _clean(text)


def _notes(data: bytes, name: str, **options) -> tuple:
    loaded = load_file(data, filename=name, **options)
    return loaded, [_clean(for_user(nt)) for nt in loaded.notes]


def _under(argument: str, *values) -> str:
    """``choose “a” or “b” under "<control>" above``, as the page says a remedy."""
    control = CONTROLS[argument]
    shown = [f"“{control.choice(v)}”" for v in values]
    listed = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]
    return f'choose {listed} under "{control.label}" above'


def _png(arr) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(np.asarray(arr, dtype=np.uint8)).save(buf, format="PNG")
    return buf.getvalue()


def _zip(members: dict) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def _mixed_images() -> bytes:
    rng = np.random.default_rng(0)
    return _zip({**{f"a{i}.png": _png(rng.random((4, 5)) * 255) for i in range(3)},
                 **{f"b{i}.png": _png(rng.random((6, 6)) * 255) for i in range(3)}})


# ------------------------------------------------------------------- missing values (the NaN policy)
def test_nan_in_a_csv_names_the_missing_values_control_and_its_choices():
    text = _error(b"a,b\n1,2\nNA,3\n4,5\n", "n.csv")
    assert text.startswith("1 NaN/inf value(s)") and "(line 3, column 'a')" in text
    assert _under("nan_policy", "drop-rows", "drop-columns", "impute-mean") + " to handle them, or fix the file" \
        in text


def test_a_drop_leaving_no_data_offers_the_other_choices():
    text = _error(b"a,b\n1,NA\nNA,3\n", "gaps.csv", nan_policy="drop-rows")
    assert "every row has a NaN/inf value: dropping those rows would leave no data" in text
    assert _under("nan_policy", "drop-columns", "impute-mean") in text


def test_impute_without_a_finite_value_offers_dropping_the_column():
    text = _error(b"a,b,c\ninf,2,1\ninf,3,2\ninf,NA,3\n", "e.csv", nan_policy="impute-mean")
    assert "have no finite value to impute a mean from" in text and _under("nan_policy", "drop-columns") in text


def test_text_in_a_numeric_column_says_to_write_it_as_missing_and_choose():
    text = _error(b"a,b\n1,2\n2,x\n3,4\n4,5\n5,6\n", "t.csv")
    assert "column 'b' is numeric except for 1 value(s)" in text
    assert "fix them or write them as NA (missing) and " + _under("nan_policy", "drop-rows", "drop-columns",
                                                                  "impute-mean") in text


@pytest.mark.parametrize("policy,said", [
    ("drop-rows", "dropped 1 row(s) with NaN/inf (lines 3;"),
    ("drop-columns", "dropped 1 column(s) with NaN/inf (a)"),
    ("impute-mean", "replaced 1 NaN/inf value(s) by their column's mean"),
])
def test_notes_of_a_policy_applied_name_the_control_and_the_choice(policy, said):
    loaded, notes = _notes(b"a,b,c\n1,2,3\nNA,3,4\n4,5,7\n", "n.csv", nan_policy=policy)
    applied = f'"{CONTROLS["nan_policy"].label}" → “{NAN_CHOICES[policy]}”: {said}'
    assert any(nt.startswith(applied) for nt in notes), notes
    if policy == "drop-columns":  # the column the policy removed, and why, in the page's words
        (gone,) = loaded.dropped_columns
        assert gone["column"] == "a"
        assert _clean(for_user(gone["reason"])) == f'"{CONTROLS["nan_policy"].label}" → “{NAN_CHOICES[policy]}”: ' \
                                                    "NaN/inf values"


# ------------------------------------------------------------------- images, arrays, variables
def test_images_of_mixed_sizes_say_to_fill_in_the_resize_box():
    text = _error(_mixed_images(), "faces.zip")
    assert text.startswith("images of mixed sizes: ")
    assert text.endswith('all images must have the same size, or fill in "Resize every image to height×width" '
                         "above to resize them")


def test_resized_images_note_says_the_size_asked():
    _, notes = _notes(_mixed_images(), "faces.zip", resize=(4, 5))
    assert '"Resize every image to height×width" → “4×5”: 3 of 6 image(s) resized (bilinear)' in notes


def test_an_npz_of_several_arrays_lists_them_under_the_variable_choice():
    buf = io.BytesIO()
    np.savez(buf, first=np.arange(12.0).reshape(4, 3), second=np.arange(20.0).reshape(5, 4))
    text = _error(buf.getvalue(), "two.npz")
    assert text.startswith("several numeric arrays (first, second)")
    assert text.endswith(_under("variable", "first", "second"))


def test_a_mat_of_several_matrices_lists_them_under_the_variable_choice():
    buf = io.BytesIO()
    scipy.io.savemat(buf, {"A": np.arange(12.0).reshape(4, 3), "B": np.arange(20.0).reshape(5, 4)})
    text = _error(buf.getvalue(), "two.mat")
    assert text.startswith("several numeric matrices (A, B)") and text.endswith(_under("variable", "A", "B"))


def test_an_h5ad_label_column_not_in_obs_lists_the_obs_columns(tmp_path):
    anndata = pytest.importorskip("anndata")
    import pandas as pd

    obs = pd.DataFrame({"cls": ["x", "y", "x", "y"], "batch": ["1", "1", "2", "2"]},
                       index=[f"c{i}" for i in range(4)])
    adata = anndata.AnnData(X=np.arange(12.0).reshape(4, 3) + 1, obs=obs)
    adata.write_h5ad(tmp_path / "cells.h5ad")
    text = _error((tmp_path / "cells.h5ad").read_bytes(), "cells.h5ad", label_column="tissue")
    assert text == "\"Label column\" must be one of 'cls', 'batch'; got 'tissue'"


# ------------------------------------------------------------------- the size cap
@pytest.mark.parametrize("make,name,cap,said", [
    (lambda: b"a,b\n" + b"1,2\n" * 50, "big.csv", 100, "over the size cap of 100 bytes"),
    (lambda: _zip({"m.csv": b"a,b\n" + b"1,2\n" * 5000}), "big.zip", 5000, "over the size cap of 5,000 bytes"),
    (lambda: gzip.compress(b"a,b\n" + b"1,2\n" * 50_000), "big.csv.gz", 5000,
     "more than the size cap of 5,000 bytes"),
])
def test_a_file_over_the_size_cap_says_the_cap_in_bytes_and_no_remedy_the_user_cannot_apply(make, name, cap, said):
    data = make()
    assert len(data) <= cap or name.endswith(".csv")  # archives: over the cap once expanded
    text = _error(data, name, max_bytes=cap)
    assert said in text and "raise" not in text


# ------------------------------------------------------------------- header, orientation, label column
def test_header_note_says_the_header_choice():
    _, notes = _notes(YEARS, "years.csv")
    header = next(nt for nt in notes if "first line read as" in nt)
    assert header.startswith("first line read as column names (detected: ")
    assert header.endswith(f"if it is data, {_under('header', False)}") and HEADERS[False] in header


def test_orientation_note_offers_the_other_reading_and_its_button():
    genes = "id," + ",".join(f"GSM{100 + j}" for j in range(4)) + "\n" + "".join(
        f"{p}_at," + ",".join(f"{(i * 7 + j) % 11 + 0.5}" for j in range(4)) + "\n"
        for i, p in enumerate(f"{1000 + i}" for i in range(40)))
    loaded, notes = _notes(genes.encode(), "genes.csv")
    assert loaded.extra["orientation"] == "rows-are-features"
    said = next(nt for nt in notes if "table is transposed" in nt)
    assert said.endswith(f'if each row is a sample, choose “{ORIENTATIONS["rows-are-samples"]}” under '
                         f'"{CONTROLS["orientation"].label}" above (or press "Read the other way")')


def test_label_column_not_in_the_file_lists_names_and_positions_from_one():
    text = _error(b"a,b\n1,2\n3,4\n", "ab.csv", label_column="z")
    assert text == "\"Label column\" must be one of 'a', 'b' or a position from 1 to 2; got 'z'"


def test_label_column_typed_as_a_number_is_a_position_from_one():
    loaded = reading.parse(YEARS, "years.csv", {"label_column": "1"})
    assert loaded.X.shape == (4, 2) and list(loaded.labels) == ["1.5", "2.5", "3.5", "4.5"]
    with pytest.raises(InputError) as info:  # a position past the last column: the reader's own error
        reading.parse(YEARS, "years.csv", {"label_column": "9"})
    assert info.value.argument == "label_column"
    said = _clean(for_user(info.value, filename="years.csv"))
    assert said.endswith("or a position from 1 to 3; got '9'")  # what was typed, counted from 1
    with pytest.raises(ValueError, match='"Label column": positions count from 1; got 0'):
        reading.parse(YEARS, "years.csv", {"label_column": "0"})


# ------------------------------------------------------------------- the sample sheet
def test_sample_sheet_without_the_data_ids_says_to_choose_the_id_column():
    data = b"s,a,b\nx1,1,2\nx2,3,4\nx3,5,7\n"
    sheet = b"name,cls\nq1,A\nq2,B\nq3,A\n"
    text = _error(data, "d.csv", sample_info=sheet)
    assert "no column holds the data's sample names" in text
    assert text.endswith(_under("sample_id_column", "name", "cls"))


def test_sample_sheet_id_column_not_in_the_sheet_lists_its_columns():
    text = _error(b"s,a,b\nx1,1,2\nx2,3,4\n", "d.csv", sample_info=b"name,cls\nx1,A\nx2,B\n",
                  sample_id_column="id")
    assert text == "\"Sheet column of sample ids\" must be one of 'name', 'cls'; got 'id'"


# ------------------------------------------------------------------- errors of the core below the readers
def test_nonfinite_data_counts_rows_and_columns_from_one():
    from nspca_core import fit

    X = np.ones((4, 5))
    X[1, 3] = np.nan
    with pytest.raises(InputError) as info:
        fit(X, k=2)
    assert "row 1, column 3" in str(info.value)  # the API counts from 0
    assert "the first at row 2, column 4 (counted from 1)" in _clean(for_user(info.value))


def test_a_message_without_parts_is_the_cores_text():
    exc = InputError("`k` must be an int in [1, 64]; got 0", argument="k", value=0)
    assert for_user(exc) == str(exc)
    assert for_user("a note as text") == "a note as text"


def test_file_types_are_the_readers():
    assert reading.TYPES == [e.lstrip(".") for e in ALLOWED_EXTENSIONS]
