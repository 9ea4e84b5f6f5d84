"""Messages as data (nspca_core/_common/said.py): an error's or a note's text composed from its parts,
the parts kept through pickling, and the readers' messages giving both the API's text (naming the
argument and what is allowed) and the parts a front needs (no argument named in ``plain``)."""

from __future__ import annotations

import io
import pickle
import zipfile

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from nspca_core import InputError
from nspca_core._common.said import Note, Remedy, either, said
from nspca_core.io import DataFormatError, load_file


@given(st.lists(st.text(min_size=1, max_size=5), min_size=1, max_size=6))
def test_either_lists_every_item_once_with_or_before_the_last(items):
    text = either(items)
    if len(items) == 1:
        assert text == items[0]
    else:
        assert text == ", ".join(items[:-1]) + " or " + items[-1]


@pytest.mark.parametrize("remedy,api", [
    (Remedy("nan_policy", ("drop-rows", "impute-mean"), purpose="to handle them"),
     "choose nan_policy='drop-rows' or 'impute-mean' to handle them"),
    (Remedy("resize", verb="pass", spelled="(height, width)", lead="or"), "or pass resize=(height, width)"),
    (Remedy("max_bytes", verb="raise", purpose="to load it"), "raise max_bytes to load it"),
    (Remedy("header", (False,), lead="if it is data,"), "if it is data, choose header=False"),
])
def test_remedy_as_the_library_says_it(remedy, api):
    assert remedy.api() == api


def test_an_error_from_parts_composes_its_message_and_keeps_them_through_pickling():
    remedy = Remedy("nan_policy", ("drop-rows",))
    exc = DataFormatError(plain="2 NaN values", source="f.csv", remedy=remedy, argument="nan_policy",
                          value="error", allowed=("error", "drop-rows"))
    assert str(exc) == "f.csv: 2 NaN values; choose nan_policy='drop-rows'"
    back = pickle.loads(pickle.dumps(exc))
    assert type(back) is DataFormatError and str(back) == str(exc)
    assert (back.plain, back.source, back.remedy, back.argument, back.value, back.allowed) == \
        ("2 NaN values", "f.csv", remedy, "nan_policy", "error", ("error", "drop-rows"))
    assert back.unsourced() == "2 NaN values; choose nan_policy='drop-rows'"


def test_an_error_given_its_text_keeps_it_and_names_its_source_only_when_it_leads():
    exc = InputError("f.csv: the file is empty")
    assert exc.plain is None and exc.unsourced() == str(exc)
    exc.name_source("g.csv")
    assert exc.source is None
    exc.name_source("f.csv")
    assert exc.source == "f.csv" and exc.unsourced() == "the file is empty"


def test_a_note_is_its_text_and_keeps_its_parts_through_pickling():
    note = Note("dropped 2 row(s)", argument="nan_policy", value="drop-rows")
    assert note == "nan_policy='drop-rows': dropped 2 row(s)" and isinstance(note, str)
    back = pickle.loads(pickle.dumps(note))
    assert back == note and (back.plain, back.argument, back.value, back.remedy) == \
        ("dropped 2 row(s)", "nan_policy", "drop-rows", None)
    told = Note("first line read as data", text="header: first line read as data; choose header 'yes'",
                argument="header", value=False, remedy=Remedy("header", (True,)))
    assert told == "header: first line read as data; choose header 'yes'" and told.remedy.choices == (True,)
    assert said("x", source="s", remedy=Remedy("a", (1,))) == "s: x; choose a=1"


def _png(shape, seed):
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray((np.random.default_rng(seed).random(shape) * 255).astype(np.uint8)).save(buf, "PNG")
    return buf.getvalue()


def _mixed_zip():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for i in range(3):
            zf.writestr(f"a{i}.png", _png((4, 5), i))
            zf.writestr(f"b{i}.png", _png((6, 6), 10 + i))
    return buf.getvalue()


# (file, name, options, the API's words naming the argument and what is allowed)
CASES = [
    (b"a,b\n1,2\nNA,3\n4,5\n", "n.csv", {}, "choose nan_policy='drop-rows', 'drop-columns' or 'impute-mean'"),
    (b"a,b\n1,NA\nNA,3\n", "n.csv", {"nan_policy": "drop-rows"}, "choose nan_policy='drop-columns' or 'impute-mean'"),
    (b"a,b,c\ninf,2,1\ninf,3,2\n", "n.csv", {"nan_policy": "impute-mean"}, "choose nan_policy='drop-columns'"),
    (b"a,b\n1,2\n2,x\n3,4\n4,5\n", "t.csv", {}, "choose a nan_policy"),
    (_mixed_zip(), "m.zip", {}, "pass resize=(height, width) to resize them"),
    (b"a,b\n" + b"1,2\n" * 40, "big.csv", {"max_bytes": 50},
     "over the size cap max_bytes=50 bytes; raise max_bytes to load it"),
]


@pytest.mark.parametrize("data,name,options,api", CASES, ids=[c[1] + str(i) for i, c in enumerate(CASES)])
def test_reader_errors_name_the_argument_in_the_text_and_none_in_plain(data, name, options, api):
    with pytest.raises(DataFormatError) as info:
        load_file(data, filename=name, **options)
    exc = info.value
    assert api in str(exc), str(exc)
    assert str(exc).startswith((f"{name}: ", f"file {name!r}"))
    assert exc.remedy is not None and exc.remedy.argument in str(exc)
    assert exc.plain and not any(w in exc.plain for w in ("nan_policy", "max_bytes", "resize", "`", "="))
