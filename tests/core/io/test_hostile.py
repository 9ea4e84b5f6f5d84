"""Damaged files of the new kinds: load_file answers with a DataFormatError/InputError or data,
never another exception (byte flips, cuts and line edits of files made by the real writers)."""

import gzip
import io

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from nspca_core._common.validation import InputError
from nspca_core.io import load_file

from .geo_writer import dataset_soft, family_soft
from .test_soft import _family, _gds


def _outcome(data, filename):
    try:
        got = load_file(data, filename=filename)
    except InputError:  # DataFormatError is one
        return "refused"
    assert got.X.shape[0] >= 2 and got.X.shape[1] >= 2
    return "read"


def _mutate(data: bytes, cuts, flips) -> bytes:
    b = bytearray(data)
    for pos, val in flips:
        if b:
            b[pos % len(b)] = val
    if cuts is not None and b:
        b = b[: cuts % len(b)]
    return bytes(b)


SOFT = dataset_soft(*_gds()).encode()
FAMILY = family_soft(*_family()).encode()
mutations = dict(cuts=st.none() | st.integers(0, 10**6),
                 flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=6))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**mutations, which=st.sampled_from(["dataset", "family"]), gz=st.booleans())
def test_damaged_soft_never_raises_anything_else(cuts, flips, which, gz):
    data = _mutate(SOFT if which == "dataset" else FAMILY, cuts, flips)
    if gz:
        data = gzip.compress(data) if flips else gzip.compress(SOFT)[: (cuts or 10**6) % 400]
    _outcome(data, "x.soft.gz" if gz else "x.soft")


@settings(max_examples=40, deadline=None)
@given(**mutations, ext=st.sampled_from(["csv.gz", "tsv.bz2", "txt.xz"]))
def test_damaged_compressed_tables(cuts, flips, ext):
    import bz2
    import lzma

    text = ("a,b,c\n" + "".join(f"{i},{i * 2}.5,{i % 3}\n" for i in range(200))).encode()
    comp = {"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}[ext.split(".")[1]](text)
    _outcome(_mutate(comp, cuts, flips), f"t.{ext}")


def _xlsx():
    openpyxl = pytest.importorskip("openpyxl")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["id", "a", "b"])
    for i in range(10):
        ws.append([f"s{i}", float(i), float(i * i % 7)])
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def _h5(tmp_path_factory):
    h5py = pytest.importorskip("h5py")
    import scipy.sparse as sp

    from .test_anndata_tenx import _write_10x

    path = tmp_path_factory.mktemp("h5") / "m.h5"
    G = sp.random(6, 5, density=0.5, random_state=0, format="csc")
    _write_10x(path, G, [f"E{j}" for j in range(6)], [f"G{j}" for j in range(6)], [f"b{i}" for i in range(5)])
    assert h5py
    return path.read_bytes()


@pytest.fixture(scope="module")
def binaries(tmp_path_factory):
    return {"x.xlsx": _xlsx(), "m.h5": _h5(tmp_path_factory)}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(**mutations, name=st.sampled_from(["x.xlsx", "m.h5"]))
def test_damaged_workbooks_and_10x_h5(binaries, cuts, flips, name):
    _outcome(_mutate(binaries[name], cuts, flips), name)


def test_undamaged_inputs_of_the_fuzz_are_read(binaries):
    assert _outcome(SOFT, "x.soft") == _outcome(FAMILY, "x.soft") == "read"
    assert all(_outcome(v, k) == "read" for k, v in binaries.items())
    assert np.isfinite(load_file(binaries["m.h5"], filename="m.h5").X.data).all()
