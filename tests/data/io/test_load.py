"""nspca_core.io: every format round-trips; every bad input gets its specific error."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest
import scipy.io
from PIL import Image

from nspca_core import InputError, load_file
from nspca_core.io import (ALLOWED_EXTENSIONS, DataFormatError, describe, mat_variables,
                           npz_variables)

RNG = np.random.default_rng(0)
M = RNG.normal(size=(6, 4)).round(6)


def _csv(rows, sep=","):
    return ("\n".join(sep.join(str(c) for c in r) for r in rows) + "\n").encode()


def _npz(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def _npy(arr, allow_pickle=False) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=allow_pickle)
    return buf.getvalue()


def _mat(**variables) -> bytes:
    buf = io.BytesIO()
    scipy.io.savemat(buf, variables)
    return buf.getvalue()


def _png(arr, mode=None, fmt="PNG") -> bytes:
    buf = io.BytesIO()
    im = Image.fromarray(np.asarray(arr, dtype=np.uint8))
    if mode:
        im = im.convert(mode)
    im.save(buf, format=fmt)
    return buf.getvalue()


def _zip(members: dict) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


# ----------------------------------------------------------------------------- round trips

def test_csv_round_trip_with_header_and_label_column(tmp_path):
    labels = ["a", "b", "a", "b", "a", "c"]
    rows = [["label", "x0", "x1", "x2", "x3"]] + [[lab, *row] for lab, row in zip(labels, M)]
    path = tmp_path / "data.csv"
    path.write_bytes(_csv(rows))
    out = load_file(path)
    assert np.array_equal(out.X, M)
    assert out.feature_names == ["x0", "x1", "x2", "x3"]
    assert out.labels.tolist() == labels
    assert list(out.metadata.columns) == ["label"]
    assert any("used as labels" in n for n in out.notes)
    assert out.source_name == "data.csv" and out.format == "csv"
    assert "6 samples x 4 features" in describe(out)


def test_tsv_without_header_and_semicolon_and_whitespace():
    out = load_file(_csv(M, sep="\t"), filename="d.tsv")
    assert np.array_equal(out.X, M) and out.feature_names[0] == "col_0"
    assert any("TAB" in n for n in out.notes)
    assert np.array_equal(load_file(_csv(M, sep=";"), filename="d.csv").X, M)
    assert np.array_equal(load_file(_csv(M, sep="   "), filename="d.txt").X, M)


def test_csv_id_column_is_metadata_not_labels_and_label_column_choice():
    ids = [f"s{i}" for i in range(6)]
    klass = [0, 1, 0, 1, 1, 0]
    rows = [["id", "a", "b", "class"]] + [[i, r[0], r[1], c] for i, r, c in zip(ids, M, klass)]
    out = load_file(_csv(rows), filename="d.csv")
    assert out.labels is None and out.X.shape == (6, 3)   # unique ids are not classes
    assert out.metadata["id"].tolist() == ids
    assert any("metadata" in n for n in out.notes)
    out = load_file(_csv(rows), filename="d.csv", label_column="class")
    assert out.X.shape == (6, 2) and out.labels.tolist() == [str(c) for c in klass]
    with pytest.raises(InputError, match="`label_column` must be one of the column names"):
        load_file(_csv(rows), filename="d.csv", label_column="nope")


def test_file_like_source_uses_its_name():
    class Upload(io.BytesIO):
        name = "upload.csv"
    out = load_file(Upload(_csv(M)))
    assert out.source_name == "upload.csv" and np.array_equal(out.X, M)


def test_npy_round_trip_and_image_stack(tmp_path):
    path = tmp_path / "m.npy"
    np.save(path, M)
    assert np.array_equal(load_file(path).X, M)
    stack = RNG.integers(0, 255, size=(5, 3, 4)).astype(np.uint8)
    out = load_file(_npy(stack), filename="s.npy")
    assert out.X.shape == (5, 12) and out.image_shape == (3, 4)
    assert np.array_equal(out.X[2].reshape(3, 4), stack[2])


def test_npz_round_trip_labels_and_names():
    names = np.array(["g1", "g2", "g3", "g4"])
    out = load_file(_npz(X=M, labels=np.arange(6) % 2, genes=names), filename="d.npz")
    assert np.array_equal(out.X, M) and out.labels.tolist() == [0, 1, 0, 1, 0, 1]
    assert out.feature_names == names.tolist() and out.variable == "X"
    data = _npz(A=M, B=M[:, :3] * 2)
    assert np.array_equal(load_file(data, filename="d.npz", variable="B").X, M[:, :3] * 2)
    assert [v["name"] for v in npz_variables(data, filename="d.npz")] == ["A", "B"]


def test_npz_object_side_array_is_skipped_with_note():
    data = _npz(X=M, meta=np.array([{"a": 1}], dtype=object))
    out = load_file(data, filename="d.npz")
    assert np.array_equal(out.X, M)
    assert any("'meta' holds Python objects" in n for n in out.notes)


def test_mat_round_trip_with_labels():
    data = _mat(X=M, labels=np.arange(6).reshape(-1, 1))
    out = load_file(data, filename="d.mat")
    assert np.allclose(out.X, M) and out.labels.tolist() == list(range(6))
    data = _mat(A=M, B=M.T @ M)
    assert np.allclose(load_file(data, filename="d.mat", variable="B").X, M.T @ M)
    assert {v["name"] for v in mat_variables(data, filename="d.mat")} == {"A", "B"}


def test_zip_of_images_round_trip_with_folder_labels():
    imgs = RNG.integers(0, 255, size=(4, 5, 6)).astype(np.uint8)
    members = {"cats/img0.png": _png(imgs[0]), "cats/img1.png": _png(imgs[1]),
               "dogs/img2.pgm": _pgm(imgs[2]), "dogs/img3.bmp": _png(imgs[3], fmt="BMP")}
    members["readme.txt"] = b"hello"
    members["__MACOSX/._x.png"] = b"junk"
    out = load_file(_zip(members), filename="faces.zip")
    assert out.X.shape == (4, 30) and out.image_shape == (5, 6)
    assert np.array_equal(out.X.reshape(4, 5, 6), imgs.astype(float))
    assert out.labels.tolist() == ["cats", "cats", "dogs", "dogs"]
    assert out.metadata["file"].tolist()[0] == "cats/img0.png"
    assert any("non-image" in n for n in out.notes) and any("system file" in n for n in out.notes)


def _pgm(arr) -> bytes:
    h, w = arr.shape
    return f"P5\n{w} {h}\n255\n".encode() + np.asarray(arr, dtype=np.uint8).tobytes()


def test_zip_colour_and_jpeg_converted_to_grey_said_in_notes():
    rgb = RNG.integers(0, 255, size=(3, 4, 4, 3)).astype(np.uint8)
    members = {f"{i}.jpg": _png(rgb[i], fmt="JPEG") for i in range(3)}
    out = load_file(_zip(members), filename="c.zip")
    assert out.X.shape == (3, 16)
    assert any("converted to grey" in n for n in out.notes)


def test_zip_resize_when_asked():
    members = {"a.png": _png(np.full((4, 4), 10)), "b.png": _png(np.full((8, 8), 20))}
    out = load_file(_zip(members), filename="m.zip", resize=(4, 4))
    assert out.X.shape == (2, 16) and np.allclose(out.X[1], 20)
    assert any("resize=(4, 4) asked: 1 of 2" in n for n in out.notes)


# ----------------------------------------------------------------------------- nan policies

def _with_nans():
    rows = [["a", "b", "c"]] + [list(r[:3]) for r in M]
    rows[2][1] = "NA"
    rows[4][2] = "inf"
    return _csv(rows)


def test_nan_error_says_how_many_where_and_options():
    # positions count as the user does: file lines from 1, the header line included (issue 21)
    with pytest.raises(DataFormatError, match=r"2 NaN/inf value\(s\).*\(line 3, column 'b'\), "
                                              r"\(line 5, column 'c'\) \(lines of the file counted "
                                              r"from 1, the header line included\).*"
                                              r"nan_policy='drop-rows'"):
        load_file(_with_nans(), filename="n.csv")


def test_nan_policies_do_what_they_say():
    out = load_file(_with_nans(), filename="n.csv", nan_policy="drop-rows")
    assert out.X.shape == (4, 3) and any("dropped 2 row(s)" in n for n in out.notes)
    rows = [["a", "b", "c", "d"]] + [list(r) for r in M]
    rows[2][1] = ""
    out = load_file(_csv(rows), filename="n.csv", nan_policy="drop-columns")
    assert out.feature_names == ["a", "c", "d"] and np.array_equal(out.X, M[:, [0, 2, 3]])
    assert any("dropped 1 column(s) with NaN/inf (b)" in n for n in out.notes)
    out = load_file(_with_nans(), filename="n.csv", nan_policy="impute-mean")
    keep = [0, 2, 3, 4, 5]
    assert np.isclose(out.X[1, 1], M[keep, 1].mean())
    assert np.isfinite(out.X).all() and any("impute-mean" in n for n in out.notes)


def test_nan_policy_drop_columns_leaves_single_column_error():
    # the drop leaves one column: that is then reported as a single column
    with pytest.raises(DataFormatError, match="a single column"):
        load_file(_with_nans(), filename="n.csv", nan_policy="drop-columns")


def test_nan_in_npy_reported():
    A = M.copy()
    A[3, 2] = np.nan
    with pytest.raises(DataFormatError, match=r"1 NaN/inf value\(s\).*\(row 4, column 'x2'\) "
                                              r"\(rows counted from 1\)"):
        load_file(_npy(A), filename="a.npy")


# ----------------------------------------------------------------------------- errors

@pytest.mark.parametrize("data, msg", [
    (b"", "the file is empty"),
    (b"\n\n  \n", "the file is empty"),
    (b"a,b,c\n", "header only"),
    (b"a,b\nx,y\nz,w\n", "non-numeric matrix"),
    (b"1,2,3\n", "a single row"),
    (b"x\n1\n2\n3\n", "a single column"),
    (b"1,2,3\n4,5\n6,7,8\n", r"ragged rows: .*line 2 has 2"),
    (b"a,b\n1,2\n3,oops\n4,5\n", r"column 'b' is numeric except for 1 value"),
    (b"1,2\x00,3\n", "binary content"),
])
def test_text_errors(data, msg):
    with pytest.raises(DataFormatError, match=msg):
        load_file(data, filename="bad.csv")


def test_constant_columns_allowed_and_said():
    A = M.copy()
    A[:, 1] = 3.0
    out = load_file(_npy(A), filename="c.npy")
    assert np.array_equal(out.X, A)
    assert any("1 constant column(s) (x1)" in n for n in out.notes)


def test_over_max_bytes(tmp_path):
    path = tmp_path / "big.csv"
    path.write_bytes(_csv(M))
    with pytest.raises(DataFormatError, match="over the size cap max_bytes=10"):
        load_file(path, max_bytes=10)
    with pytest.raises(DataFormatError, match="over the size cap"):
        load_file(io.BytesIO(_csv(M)), filename="b.csv", max_bytes=10)


def test_unknown_extension_lists_allowed():
    with pytest.raises(DataFormatError, match=r"unknown file type '.ods'.*allowed: .csv"):
        load_file(b"1,2\n3,4\n", filename="sheet.ods")  # (.xlsx is read since issue 38)
    assert ".zip" in ALLOWED_EXTENSIONS


def test_npy_object_array_never_unpickled():
    data = _npy(np.array([{"evil": 1}, 2], dtype=object), allow_pickle=True)
    with pytest.raises(DataFormatError, match="Python objects .* never loaded"):
        load_file(data, filename="o.npy")


def test_npz_with_object_arrays():
    data = _npz(X=np.array([[1, "a"], [2, {}]], dtype=object))
    with pytest.raises(DataFormatError, match="array 'X' holds Python objects"):
        load_file(data, filename="o.npz")
    with pytest.raises(DataFormatError, match="array 'X' holds Python objects"):
        load_file(_npz(X=np.array([[1, "a"], [2, {}]], dtype=object), Y=M),
                  filename="o.npz", variable="X")


def test_npz_several_arrays_needs_variable_and_lists_them():
    data = _npz(A=M, B=M)
    with pytest.raises(DataFormatError, match=r"several numeric arrays \(A, B\).*variable="):
        load_file(data, filename="d.npz")
    with pytest.raises(DataFormatError, match=r"no array named 'C'; it holds: A \(6, 4\)"):
        load_file(data, filename="d.npz", variable="C")


def test_npy_one_dimensional_and_text_arrays():
    with pytest.raises(DataFormatError, match="1-D"):
        load_file(_npy(np.arange(5.0)), filename="v.npy")
    with pytest.raises(DataFormatError, match="holds text"):
        load_file(_npy(np.array([["a", "b"], ["c", "d"]])), filename="t.npy")


def test_mat_without_numeric_matrix():
    data = _mat(name="hello", v=np.arange(3.0))
    with pytest.raises(DataFormatError, match="no numeric matrix in the .mat file"):
        load_file(data, filename="d.mat")


def test_mat_several_and_bad_variable():
    data = _mat(A=M, B=M)
    with pytest.raises(DataFormatError, match="several numeric matrices"):
        load_file(data, filename="d.mat")
    with pytest.raises(DataFormatError, match="no variable named 'C'"):
        load_file(data, filename="d.mat", variable="C")


def test_mat_v73_hdf5_not_supported():
    header = b"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: Mon Jan  1 2024 HDF5 schema"
    data = header.ljust(512, b" ") + b"\x89HDF\r\n\x1a\n" + b"\x00" * 100
    with pytest.raises(DataFormatError, match=r"v7.3 \(HDF5\) .mat files are not supported"):
        load_file(data, filename="new.mat")


def test_single_image_is_an_error_with_advice(tmp_path):
    path = tmp_path / "one.png"
    path.write_bytes(_png(np.zeros((4, 4))))
    with pytest.raises(DataFormatError, match=r"a single image is one sample.*\.zip"):
        load_file(path)


def test_zip_mixed_sizes():
    members = {"a.png": _png(np.zeros((4, 4))), "b.png": _png(np.zeros((5, 4)))}
    with pytest.raises(DataFormatError, match=r"images of mixed sizes: 4x4.*resize=\(height, width\)"):
        load_file(_zip(members), filename="m.zip")


@pytest.mark.parametrize("bad", ["../evil.png", "/etc/evil.png", "a/../../evil.png",
                                 "C:/evil.png", "..\\evil.png"])
def test_zip_path_traversal(bad):
    members = {"ok.png": _png(np.zeros((4, 4))), bad: _png(np.zeros((4, 4)))}
    with pytest.raises(DataFormatError, match="unsafe path in the archive"):
        load_file(_zip(members), filename="t.zip")


@pytest.mark.parametrize("inner", ["more.zip", "sub/data.tar.gz", "x.npz"])
def test_zip_nested_archive(inner):
    members = {"ok.png": _png(np.zeros((4, 4))), inner: b"PK whatever"}
    with pytest.raises(DataFormatError, match="nested archive"):
        load_file(_zip(members), filename="n.zip")


def test_zip_too_many_files(monkeypatch):
    import nspca_core.io as nio
    monkeypatch.setattr(nio.archive, "MAX_ZIP_MEMBERS", 3)
    members = {f"{i}.png": _png(np.zeros((2, 2))) for i in range(4)}
    with pytest.raises(DataFormatError, match=r"too many files in the archive \(4\)"):
        load_file(_zip(members), filename="many.zip")


def test_zip_bomb_uncompressed_size_over_cap():
    members = {"a.png": _png(np.zeros((4, 4))), "b.png": b"\x00" * 5_000_000}
    data = _zip(members)
    assert len(data) < 100_000  # compresses very well
    with pytest.raises(DataFormatError, match=r"expands to 5,000,\d+ bytes, over the size cap"):
        load_file(data, filename="bomb.zip", max_bytes=1_000_000)


def test_zip_without_images_and_single_image_zip():
    with pytest.raises(DataFormatError, match="holds no images"):
        load_file(_zip({"a.txt": b"1,2"}), filename="z.zip")
    with pytest.raises(DataFormatError, match="a single row"):
        load_file(_zip({"a.png": _png(np.zeros((3, 3)))}), filename="z.zip")


def test_bad_image_member():
    with pytest.raises(DataFormatError, match="'b.png' is not a readable image"):
        load_file(_zip({"a.png": _png(np.zeros((3, 3))), "b.png": b"not an image"}),
                  filename="z.zip")


@pytest.mark.parametrize("kwargs, msg", [
    ({"nan_policy": "ignore"}, "`nan_policy` must be one of"),
    ({"max_bytes": 0}, "`max_bytes` must be a positive int"),
    ({"resize": (4,)}, r"`resize` must be None or \(height, width\)"),
    ({"variable": 3}, "`variable` must be a string"),
])
def test_argument_validation(kwargs, msg):
    with pytest.raises(InputError, match=msg):
        load_file(_csv(M), filename="d.csv", **kwargs)


def test_sniffing_without_a_name():
    assert np.array_equal(load_file(_npy(M)).X, M)
    assert np.array_equal(load_file(_npz(X=M)).X, M)
    assert np.array_equal(load_file(_csv(M)).X, M)


# ----------------------------------------------------------------------------- pickles

CALLED = []


def _side_effect(*args):
    CALLED.append(args)
    return "pwned"


class _Evil:
    def __reduce__(self):
        return (_side_effect, ("ran",))


def test_pickled_string_names_read_statically_and_evil_pickles_never_run():
    from nspca_core.io import npy_strings_without_unpickling
    names = np.array(["g_a", "g_b", "g_a", "g_d"], dtype=object)  # repeats use memo references
    out = load_file(_npz(X=M, genes=names), filename="d.npz")
    assert out.feature_names == ["g_a", "g_b", "g_a", "g_d"]
    assert any("without unpickling" in n for n in out.notes)
    evil = np.array(["x", _Evil(), "y", "z"], dtype=object)
    assert npy_strings_without_unpickling(_npy(evil, allow_pickle=True)) is None
    out = load_file(_npz(X=M, genes=evil), filename="e.npz")
    assert out.feature_names == ["x0", "x1", "x2", "x3"]
    assert any("'genes' holds Python objects" in n for n in out.notes)
    with pytest.raises(DataFormatError, match="Python objects"):
        load_file(_npy(evil, allow_pickle=True), filename="e.npy")
    assert CALLED == []


# ----------------------------------------------------------------------------- properties

from hypothesis import given, settings, strategies as st  # noqa: E402
from hypothesis.extra.numpy import arrays  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(2, 6), st.integers(2, 5)),
              elements=st.floats(-1e6, 1e6, allow_nan=False)),
       st.sampled_from([",", "\t", ";"]), st.booleans())
def test_csv_round_trip_property(A, sep, with_header):
    buf = io.StringIO()
    header = sep.join(f"h{j}" for j in range(A.shape[1])) if with_header else ""
    np.savetxt(buf, A, delimiter=sep, fmt="%.17g", header=header, comments="")
    data = buf.getvalue().encode()
    # told, the header choice is exact
    out = load_file(data, filename="p.csv", header="yes" if with_header else "no")
    assert np.array_equal(out.X, A)
    assert out.feature_names[0] == ("h0" if with_header else "col_0")
    # detected: exact too, unless the first line meets the stated rule for a numeric header
    # (distinct integers) -- an all-number first line is ambiguous, and the note says so
    out = load_file(data, filename="p.csv")
    first = A[0]
    numeric_header_possible = (not with_header and np.array_equal(first, np.round(first))
                               and np.unique(first).size == first.size)
    if not numeric_header_possible:
        assert np.array_equal(out.X, A)
        assert out.feature_names[0] == ("h0" if with_header else "col_0")
    elif not np.array_equal(out.X, A):
        assert np.array_equal(out.X, A[1:]) and "its numbers" in out.notes[0]
    assert out.notes[0].startswith("header: first line read as")
