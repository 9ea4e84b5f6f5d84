"""nspca_core.io under hostile and everyday-but-unusual files (issue 18 items 1, 2, 11; issue 21
items 6, 8): numeric headers, number conventions, encodings, forged archives, 1-based positions.
The upload page phrasing the reader's messages with its own controls: tests/pages/your_data/.

The builders at the top (``forge_zip``, ``png_bytes``, ...) are shared with the fuzz suite.
"""

from __future__ import annotations

import io
import re
import stat
import struct
import zipfile

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st
from PIL import Image

from nspca_core import InputError, load_file
from nspca_core import io as nio
from nspca_core.io import DataFormatError, describe


# ----------------------------------------------------------------------------- builders

def csv_bytes(rows, sep=",", encoding="utf-8", newline="\n") -> bytes:
    return (newline.join(sep.join(str(c) for c in r) for r in rows) + newline).encode(encoding)


def png_bytes(arr, mode=None, fmt="PNG") -> bytes:
    buf = io.BytesIO()
    arr = np.asarray(arr)
    im = Image.fromarray(arr) if mode is None else Image.fromarray(arr, mode=mode)
    im.save(buf, format=fmt)
    return buf.getvalue()


def zip_bytes(members: dict, method=zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def symlink_zip(members: dict, link: str, target: str) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        info = zipfile.ZipInfo(link)
        info.create_system = 3  # unix, so that the mode bits count
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(info, target)
    return buf.getvalue()


def encrypted_zip(members: dict) -> bytes:
    """A zip whose members carry the 'encrypted' flag (bit 0), as a password tool writes."""
    data = bytearray(zip_bytes(members, zipfile.ZIP_STORED))
    for sig, off in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        i = data.find(sig)
        while i >= 0:
            flags = struct.unpack_from("<H", data, i + off)[0]
            struct.pack_into("<H", data, i + off, flags | 0x1)
            i = data.find(sig, i + 4)
    return bytes(data)


def forge_zip(data: bytes, member: str, *, file_size=None, compress_size=None, crc=None) -> bytes:
    """Rewrite the size / CRC fields of one member in its local and central headers (they lie)."""
    buf = bytearray(data)
    # (signature, crc, compressed size, uncompressed size, name length, name) offsets
    for sig, o_crc, o_cs, o_fs, o_len, o_name in ((b"PK\x03\x04", 14, 18, 22, 26, 30),
                                                  (b"PK\x01\x02", 16, 20, 24, 28, 46)):
        i = buf.find(sig)
        while i >= 0:
            n = struct.unpack_from("<H", buf, i + o_len)[0]
            if bytes(buf[i + o_name:i + o_name + n]).decode() == member:
                for off, value in ((o_crc, crc), (o_cs, compress_size), (o_fs, file_size)):
                    if value is not None:
                        struct.pack_into("<I", buf, i + off, value)
            i = buf.find(sig, i + 4)
    return bytes(buf)


def npy_bytes(arr, allow_pickle=False) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=allow_pickle)
    return buf.getvalue()


def npy_with_shape(shape, dtype="<f8", payload=b"\x00" * 64) -> bytes:
    """A .npy whose header announces ``shape`` but which holds only ``payload``."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": dtype, "fortran_order": False,
                                               "shape": tuple(shape)})
    return buf.getvalue() + payload


def images(count=6, shape=(4, 5), seed=0) -> dict:
    rng = np.random.default_rng(seed)
    return {f"img_{i:02d}.png": png_bytes((rng.random(shape) * 255).astype(np.uint8))
            for i in range(count)}


RNG = np.random.default_rng(7)
BODY = (RNG.random((6, 3)) * 10).round(3) + 0.125  # non-integral values written with decimals


def _fmt(v) -> str:
    return repr(float(v))


# ----------------------------------------------------------------------------- headers (item 1)

def test_numeric_header_of_years_over_decimals_is_detected_and_said():
    data = csv_bytes([[2019, 2020, 2021]] + [[_fmt(v) for v in r] for r in BODY])
    out = load_file(data, filename="years.csv")
    assert out.feature_names == ["2019", "2020", "2021"]
    assert np.array_equal(out.X, BODY)  # the years are not a sample
    assert re.match(r"header: first line read as column names \(detected: its numbers "
                    r"\(2019, 2020, 2021\) are distinct integers over decimal numbers", out.notes[0])


def test_numeric_header_over_integer_counts_far_outside_their_range():
    counts = RNG.integers(0, 30, size=(5, 4))
    data = csv_bytes([[400, 410, 420, 430]] + counts.tolist())
    out = load_file(data, filename="wavelengths.csv")
    assert out.feature_names == ["400", "410", "420", "430"]
    assert np.array_equal(out.X, counts)
    assert "far outside the values below" in out.notes[0]


@pytest.mark.parametrize("rows", [
    [[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12]],       # a ramp: integers like the rest
    [[3, 1, 2], [0.5, 1.5, 2.5], [1.5, 0.5, 3.5]],          # not in order, not far: data
    [[2019, 2020, 2021], [5, 3, 2], [1, 0, 4]],             # only 2 rows below: no evidence
    [[1.5, 2.5, 3.5], [0.5, 1.5, 2.5], [1.5, 0.5, 3.5]],    # decimals: data
])
def test_all_number_first_line_without_evidence_is_data_and_said(rows):
    out = load_file(csv_bytes(rows), filename="d.csv")
    assert out.X.shape[0] == len(rows) and out.feature_names[0] == "col_0"
    assert out.notes[0].startswith("header: first line read as data (detected: numbers like the "
                                   "lines below); if it holds column names, choose header 'yes'")


@pytest.mark.parametrize("header, has_header", [("yes", True), (True, True), ("no", False),
                                                (False, False), ("auto", True), (None, True),
                                                ("YES", True)])
def test_header_option_forces_the_choice(header, has_header):
    data = csv_bytes([[2019, 2020, 2021]] + [[_fmt(v) for v in r] for r in BODY])
    out = load_file(data, filename="years.csv", header=header)
    assert out.X.shape[0] == (6 if has_header else 7)
    assert out.notes[0].startswith("header: first line read as column names") == has_header
    if header in ("yes", True, "no", False):
        assert "(as asked)" in out.notes[0]


@pytest.mark.parametrize("header", ["maybe", 1, 0, "true", ["yes"]])
def test_header_option_validated(header):
    with pytest.raises(InputError, match=r"`header` must be 'auto' \(detect\), 'yes'/True .* "
                                         r"'no'/False .*; got"):
        load_file(csv_bytes([[1, 2], [3, 4]]), filename="d.csv", header=header)


def test_r_style_header_with_empty_corner_and_row_names():
    data = b'"","2019","2020"\n"a",0.5,1.5\n"b",0.25,2.5\n"c",1.5,2.125\n'
    out = load_file(data, filename="r.csv")
    assert out.feature_names == ["2019", "2020"] and out.X.shape == (3, 2)
    assert out.dropped_columns == [{"column": "col_0",
                                    "reason": "text, e.g. 'a'; kept as metadata, not a feature"}]


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 6), st.integers(3, 8), st.integers(1900, 2100), st.integers(1, 10),
       st.data())
def test_property_increasing_integer_header_over_decimals_detected(n, m, start, step, data):
    body = np.array(data.draw(st.lists(st.lists(
        st.floats(-1e4, 1e4, allow_nan=False).filter(lambda v: v != round(v)),
        min_size=n, max_size=n), min_size=m, max_size=m)))
    head = [start + step * j for j in range(n)]
    out = load_file(csv_bytes([head] + [[repr(float(v)) for v in r] for r in body]),
                    filename="p.csv")
    assert out.feature_names == [str(h) for h in head]
    assert np.array_equal(out.X, body)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 6), st.integers(2, 8), st.data())
def test_property_first_line_with_a_decimal_value_is_data(n, m, data):
    A = np.array(data.draw(st.lists(st.lists(st.floats(-1e4, 1e4, allow_nan=False),
                                             min_size=n, max_size=n), min_size=m, max_size=m)))
    assume(not np.array_equal(A[0], np.round(A[0])))
    out = load_file(csv_bytes([[repr(float(v)) for v in r] for r in A]), filename="p.csv")
    assert np.array_equal(out.X, A) and out.feature_names[0] == "col_0"


# ----------------------------------------------------------------------------- conventions (item 2)

def _thousands_reference(t: str) -> float:
    """'1,234,567.5' by hand: the groups are digits, each group worth 1000 times the next."""
    sign = -1.0 if t.startswith("-") else 1.0
    t = t.lstrip("+-")
    whole, _, frac = t.partition(".")
    value = 0
    for group in whole.split(","):
        value = value * 1000 + int(group)
    return sign * (value + (int(frac) / 10 ** len(frac) if frac else 0.0))


def _decimal_comma_reference(t: str) -> float:
    """'1.234,5' by hand: '.' groups thousands, ',' is the decimal mark."""
    sign = -1.0 if t.startswith("-") else 1.0
    whole, _, frac = t.lstrip("+-").partition(",")
    value = 0
    for group in whole.split("."):
        value = value * 1000 + int(group)
    return sign * (value + (int(frac) / 10 ** len(frac) if frac else 0.0))


def test_thousands_separators_are_numbers_not_metadata():
    cells = ["1,000", "12,500", "1,234,567", "-3,000.5", "7"]
    rows = [["amount", "b"]] + [[f'"{c}"', i + 0.5] for i, c in enumerate(cells)]
    out = load_file(csv_bytes(rows), filename="t.csv")
    assert out.feature_names == ["amount", "b"] and out.dropped_columns == []
    np.testing.assert_array_equal(out.X[:, 0], [_thousands_reference(c) for c in cells])
    assert any(re.match(r"1 column\(s\) written with thousands separators, read as numbers "
                        r"\('1,234' = 1234\): 'amount'", nt) for nt in out.notes)


def test_decimal_commas_with_semicolons_are_numbers():
    cells = [["3,14", "1.234,5", "7"], ["-0,5", "2.000,25", "8"], ["2,75", "999", "9"]]
    out = load_file(csv_bytes([["a", "b", "c"]] + cells, sep=";"), filename="eu.csv")
    expected = [[_decimal_comma_reference(c) for c in r] for r in cells]
    np.testing.assert_array_equal(out.X, expected)
    assert any("written with a decimal comma, read as numbers" in nt and "'a', 'b'" in nt
               for nt in out.notes)


def test_hexadecimal_column_read_as_integers():
    out = load_file(b"h,b\n0x1F,1.5\n0xff,2.5\n-0x10,0.5\n", filename="h.csv")
    np.testing.assert_array_equal(out.X[:, 0], [31, 255, -16])
    assert any("in hexadecimal, read as numbers" in nt for nt in out.notes)


def test_hexadecimal_identifiers_beyond_float_precision_are_listed_as_dropped():
    out = load_file(b"id,a,b\n0xffffffffffffffffff,1,2\n0x1,3,4.5\n0x2,5,6\n", filename="h.csv")
    assert out.feature_names == ["a", "b"]
    assert out.dropped_columns[0]["column"] == "id"
    assert "hexadecimal values above 2**53" in out.dropped_columns[0]["reason"]


@pytest.mark.parametrize("data, msg", [
    (b"a;b\n1,000;2\n2,000;3\n",
     r"column 'a' holds numbers like '1,000', which read as a thousand with a thousands separator "
     r"or as 1.0 with a decimal comma"),
    (b'a,b\n"1,5","1,000,000"\n"2,5","2,000,000"\n',
     r"column 'a' writes numbers with a decimal comma \('1,5'\) but column 'b' with thousands "
     r"separators \('1,000,000'\); use one convention"),
    (b"a;b\n1,5;1.500\n2,5;2.250\n",
     r"column 'b' holds numbers like '1.500' in a file that writes decimals with commas"),
    (b"a;b\n1,5;1\n3.5;2\n",
     r"column 'a' mixes a decimal point \('3.5'\) with decimal commas"),
    (b"a,b\n0x1F,1\n12,2\n",
     r"column 'a' mixes hexadecimal numbers \('0x1F'\) with other numbers"),
    (b"a,b\n12%,3%\n5%,7%\n", r"non-numeric matrix.*percentages \('12%'\) are not read"),
    (b"a;b\n1 000;2 000\n3 000;4 500\n", r"non-numeric matrix.*group thousands with spaces"),
])
def test_conventions_refused_with_the_column_and_the_convention(data, msg):
    with pytest.raises(DataFormatError, match=msg):
        load_file(data, filename="c.csv")


def test_dropped_columns_listed_with_reasons_and_in_describe():
    data = b"id,species,a,b,empty\nx1,cat,1.5,2,\nx2,dog,2.5,3,\nx3,cat,3.5,1,\n"
    out = load_file(data, filename="d.csv")
    assert out.feature_names == ["a", "b"]
    by = {d["column"]: d["reason"] for d in out.dropped_columns}
    assert by == {"empty": "empty (no values)", "species": "used as labels",
                  "id": "text, e.g. 'x1'; kept as metadata, not a feature"}
    assert "not used as features: 'empty' (empty (no values))" in describe(out)
    out = load_file(b"a,b,c\n1,,2\n2,3,4\n5,6,7\n", filename="n.csv", nan_policy="drop-columns")
    assert out.dropped_columns == [{"column": "b",
                                    "reason": "NaN/inf values (nan_policy='drop-columns')"}]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.integers(-10 ** 9, 10 ** 9), min_size=2, max_size=4), min_size=2,
                max_size=6).filter(lambda rows: len({len(r) for r in rows}) == 1))
def test_property_thousands_round_trip(rows):
    text = "\n".join(",".join(f'"{v:,}"' for v in r) for r in rows)
    A = np.array(rows, dtype=float)
    out = load_file(("a" + ",b" * (A.shape[1] - 1) + "\n" + text).encode(), filename="p.csv",
                    header="yes")
    np.testing.assert_array_equal(out.X, A)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
                         min_size=2, max_size=4), min_size=2, max_size=6)
       .filter(lambda rows: len({len(r) for r in rows}) == 1))
def test_property_decimal_comma_round_trip_or_named_ambiguity(rows):
    A = np.array(rows, dtype=float)
    cells = [[repr(float(v)).replace(".", ",") for v in r] for r in rows]
    data = ("\n".join(";".join(r) for r in cells) + "\n").encode()
    unambiguous = any(nio._cell_kind(c) == "decimal" for r in cells for c in r)
    try:
        out = load_file(data, filename="p.csv", header="no")
    except DataFormatError as exc:
        assert not unambiguous and "thousands separator or as 1.0 with a decimal comma" in str(exc)
        return
    np.testing.assert_array_equal(out.X, A)


# ----------------------------------------------------------------------------- encodings (21.8)

def test_excel_unicode_text_utf16_tabs_decimal_commas():
    rows = [["gene", "s1", "s2"], ["g1", "1,5", "2"], ["g2", "0,25", "3"], ["g1", "4", "5,75"]]
    data = csv_bytes(rows, sep="\t", encoding="utf-16", newline="\r\n")  # BOM + UTF-16-LE
    assert data.startswith(b"\xff\xfe")
    out = load_file(data, filename="excel.txt")
    np.testing.assert_array_equal(out.X, [[1.5, 2], [0.25, 3], [4, 5.75]])
    assert list(out.labels) == ["g1", "g2", "g1"]
    assert any("decoded as UTF-16 (found by its byte-order mark)" in nt for nt in out.notes)


@pytest.mark.parametrize("encoding, how", [("utf-16-be", "NUL byte pattern"),
                                           ("utf-16-le", "NUL byte pattern"),
                                           ("utf-8-sig", None), ("utf-32", "byte-order mark")])
def test_other_unicode_encodings(encoding, how):
    out = load_file(csv_bytes([["a", "b"], [1, 2.5], [3, 4]], encoding=encoding), filename="u.csv")
    np.testing.assert_array_equal(out.X, [[1, 2.5], [3, 4]])
    assert out.feature_names == ["a", "b"]
    if how:
        assert any(how in nt for nt in out.notes)


def test_broken_utf16_says_so():
    data = "a,b\n1,2\n".encode("utf-16")[:-1] + b"\x00\xd8"  # a lone surrogate at the end
    with pytest.raises(DataFormatError, match=r"looks like UTF-16-LE text \(byte-order mark\) but "
                                              r"does not decode.*save it as UTF-8"):
        load_file(data, filename="u.csv")


# ----------------------------------------------------------------------------- archives (item 11)

def test_forged_sizes_are_data_format_errors_not_bad_zip_file():
    members = images()
    members["bomb.png"] = b"\x00" * 5_000_000
    lying = forge_zip(zip_bytes(members), "bomb.png", file_size=100)  # says 100 B, holds 5 MB
    with pytest.raises(DataFormatError, match=r"damaged or forged .*Bad CRC-32 for file 'bomb.png'"):
        load_file(lying, filename="bomb.zip", max_bytes=1_000_000)
    good = zip_bytes(images())
    for kw in ({"compress_size": 5}, {"crc": 1234}, {"file_size": 3}):
        with pytest.raises(DataFormatError, match="damaged or forged"):
            load_file(forge_zip(good, "img_01.png", **kw), filename="f.zip")
    with pytest.raises(DataFormatError, match=r"not a valid \.zip file"):
        load_file(good[: len(good) // 2], filename="cut.zip")


def test_member_stream_has_a_running_cap():
    data = zip_bytes({"a.png": b"\x00" * 3_000_000})
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        info = zf.infolist()[0]
        assert nio._read_member(zf, info, 3_000_000, "z.zip") == b"\x00" * 3_000_000
        with pytest.raises(DataFormatError, match=r"expands to more than the size cap .* while "
                                                  r"reading 'a.png' \(possible zip bomb\)"):
            nio._read_member(zf, info, 2_500_000, "z.zip")


def test_symlink_member_refused():
    with pytest.raises(DataFormatError, match=r"'link.png' is a symbolic link"):
        load_file(symlink_zip(images(), "link.png", "/etc/passwd"), filename="s.zip")


def test_encrypted_member_refused():
    with pytest.raises(DataFormatError, match="encrypted member"):
        load_file(encrypted_zip(images()), filename="e.zip")


def test_images_hold_too_many_pixels_in_all(monkeypatch):
    monkeypatch.setattr(nio.images, "MAX_TOTAL_PIXELS", 100)
    with pytest.raises(DataFormatError, match=r"more than 100 pixels in all \(reached at "
                                              r"'img_05.png', 5x4\)"):
        load_file(zip_bytes(images()), filename="many.zip")


def test_decompression_bomb_image_refused_before_decoding():
    bomb = png_bytes(np.zeros((5001, 5001), dtype=np.uint8))  # 25 M pixels in ~25 kB
    assert len(bomb) < 200_000
    with pytest.raises(DataFormatError, match=r"5001x5001 pixels, over the limit of 25,000,000"):
        load_file(zip_bytes({**images(), "zz.png": bomb}), filename="b.zip")


def test_forged_npy_and_npz_headers_refused_before_allocating():
    with pytest.raises(DataFormatError, match=r"announces shape \(100000, 100000\) of float64 "
                                              r"\(80,000,000,000 bytes\) but only 64 bytes follow"):
        load_file(npy_with_shape((100000, 100000)), filename="f.npy")
    npz = zip_bytes({"X.npy": npy_with_shape((100000, 100000))})
    with pytest.raises(DataFormatError, match=r"member 'X.npy' announces shape"):
        load_file(npz, filename="f.npz")
    with pytest.raises(DataFormatError, match=r"'X.npy' is not a valid .npy \(Bad CRC-32"):
        load_file(forge_zip(zip_bytes({"X.npy": npy_bytes(np.ones((4, 3)))}), "X.npy", crc=7),
                  filename="c.npz")


# ----------------------------------------------------------------------------- positions (21.6)

def test_positions_count_lines_as_the_user_does():
    data = b"a,b\n1,2\n\n3,oops\n4,5\n6,7\n"  # the bad value is on line 4 (a blank line above)
    with pytest.raises(DataFormatError, match=r"column 'b' is numeric except for 1 value\(s\): "
                                              r"line 4 \('oops'\) \(lines of the file counted from "
                                              r"1, the header line included\)"):
        load_file(data, filename="m.csv")
    with pytest.raises(DataFormatError, match=r"ragged rows: .*line 4 has 2"):
        load_file(b"1,2,3\n4,5,6\n\n7,8\n", filename="r.csv")
    out = load_file(b"a,b\n1,2\nNA,3\n4,5\n6,7\n", filename="n.csv", nan_policy="drop-rows")
    assert any("(lines 3; lines of the file counted from 1, the header line included)" in nt
               for nt in out.notes)


def test_folder_as_source_says_folder(tmp_path):
    with pytest.raises(DataFormatError, match="is a folder, not a file"):
        load_file(tmp_path)


# ----------------------------------------------------------------------------- issue 31 item 10

def test_fifo_and_devices_are_not_regular_files(tmp_path):
    """A FIFO (read would block) and a link to /dev/zero (never ends) said "file not found"."""
    import os

    os.mkfifo(tmp_path / "pipe.csv")
    with pytest.raises(DataFormatError, match=r"`source` '.*pipe.csv' is not a regular file but a FIFO "
                                              r"\(named pipe\); give a regular data file"):
        load_file(tmp_path / "pipe.csv")
    os.symlink("/dev/zero", tmp_path / "zero.csv")
    with pytest.raises(DataFormatError, match=r"'.*zero.csv' \(a link to '/dev/zero'\) is not a regular file "
                                              r"but a character device"):
        load_file(tmp_path / "zero.csv")
    os.symlink(tmp_path / "nowhere.csv", tmp_path / "broken.csv")
    with pytest.raises(DataFormatError, match=r"'.*broken.csv' is a broken symbolic link \(to '.*nowhere.csv'\)"):
        load_file(tmp_path / "broken.csv")
    with pytest.raises(DataFormatError, match=r"`source` file not found: '.*missing.csv'"):
        load_file(tmp_path / "missing.csv")


def test_fifo_through_the_cli(tmp_path, capsys):
    import os

    from nspca_core import cli

    os.mkfifo(tmp_path / "pipe.csv")
    code = cli.main(["fit", str(tmp_path / "pipe.csv"), "--k", "2", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 1 and "is not a regular file but a FIFO (named pipe)" in err, err


@pytest.mark.parametrize("member, data, what", [
    ("a.png", b"hello, world\n", r"text \(starting 'hello, world'\)"),
    ("a.png", zip_bytes({"x.txt": b"1"}), "a zip archive"),
    ("a.jpg", b"%PDF-1.7\n", "a PDF document"),
    ("a.bmp", b"\x00\x01\x02\x03\xfe\xff", r"binary data of an unknown kind \(first bytes 00 01 02 03 fe ff\)"),
    ("a.png", b"", "empty"),
])
def test_zip_member_named_as_an_image_says_what_it_holds(member, data, what):
    with pytest.raises(DataFormatError) as err:
        load_file(zip_bytes({member: data, "b.png": data}), filename="f.zip")
    assert re.search(rf"f.zip: '{member}' is not a readable image: it is named \.\w+ but holds {what}; the "
                     r"archive must hold images", str(err.value)), str(err.value)
    assert "BytesIO" not in str(err.value)


@settings(max_examples=40, deadline=None)
@given(st.binary(max_size=64))
def test_no_message_shows_an_object_address(data):
    """Whatever a member named .png holds, the message never shows ``<_io.BytesIO object at 0x...>``."""
    try:
        load_file(zip_bytes({"a.png": data, "b.png": data}), filename="f.zip")
    except DataFormatError as exc:
        assert " object at 0x" not in str(exc), str(exc)


def test_sparse_mat_is_named():
    import scipy.io
    import scipy.sparse

    buf = io.BytesIO()
    scipy.io.savemat(buf, {"X": scipy.sparse.random(20, 4, density=0.5, random_state=0, format="csc")})
    with pytest.raises(DataFormatError, match=r"s.mat: variable 'X' is a sparse matrix \(20 x 4, 40 nonzeros\), "
                                              r"which is not read from .mat files; save it dense \(X = full\(X\)"):
        load_file(buf.getvalue(), filename="s.mat")
    with pytest.raises(DataFormatError, match=r"variable 'X' is a sparse matrix"):
        load_file(buf.getvalue(), filename="s.mat", variable="X")


def test_sparse_cov_says_sparse():
    import scipy.sparse

    from nspca_core import components, fit
    from nspca_core.certificates import certify

    X = np.random.default_rng(0).standard_normal((20, 4))
    A = scipy.sparse.csr_matrix(X.T @ X / 20)
    msg = (r"`cov` is a scipy.sparse matrix \(4 x 4, 16 nonzeros\); a sparse `cov` is not supported. Pass the "
           r"sparse data itself as `X` \(samples x features: its covariance is used implicitly, never "
           r"densified\), or a dense covariance \(`cov.toarray\(\)`")
    with pytest.raises(InputError, match=msg):
        fit(cov=A, k=2)
    with pytest.raises(InputError, match=msg):
        components(cov=A, k=2, n_components=2)
    with pytest.raises(InputError, match=msg):
        certify(cov=A, k=2)
