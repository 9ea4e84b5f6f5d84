"""The reader's errors carry the argument at fault and the value given (``InputError.argument`` /
``.value``), so a front maps them to its own control without reading the message (issue 37.5)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from nspca_core import InputError, load_file
from nspca_core._common.params import check
from nspca_core.io import zip_holds_images
from tests.data.io.test_load_errors import images, png_bytes, zip_bytes

CSV = b"a,b,c\n1,2,3\n4,5,6\n7,8,9\n"


@pytest.mark.parametrize("source,name,options,argument,value", [
    (CSV, "t.csv", dict(label_column="nope"), "label_column", "nope"),
    (CSV, "t.csv", dict(label_column=7), "label_column", 7),
    (b"a,b\n1,2\nNA,3\n4,5\n", "n.csv", {}, "nan_policy", "error"),
    (b"a,b\nNA,2\n3,NA\n", "n.csv", dict(nan_policy="drop-rows"), "nan_policy", "drop-rows"),
    (zip_bytes({**images(3, (4, 5)), **{f"z{i}.png": png_bytes(np.zeros((6, 6), np.uint8)) for i in range(3)}}),
     "faces.zip", {}, "resize", None),
    (CSV, "t.csv", dict(sample_info=b"id,cls\n1,x\n2,y\n3,z\n", sample_id_column="nope"), "sample_id_column",
     "nope"),
])
def test_reader_errors_name_their_argument(source, name, options, argument, value):
    with pytest.raises(InputError) as info:
        load_file(source, filename=name, **options)
    assert (info.value.argument, info.value.value) == (argument, value), str(info.value)
    again = pickle.loads(pickle.dumps(info.value))  # jobs hand errors across processes
    assert (again.argument, again.value, str(again)) == (argument, value, str(info.value))


def test_front_checks_name_their_argument():
    with pytest.raises(InputError, match=r"`k` must be an int in \[1, n_features=5\]; got 0") as info:
        check("k", 0, n_features=5)
    assert (info.value.argument, info.value.value) == ("k", 0)
    assert InputError("no argument").argument is None  # a message alone still makes an error


def test_zip_holds_images_reads_the_directory_only():
    assert zip_holds_images(zip_bytes(images(2, (3, 3))))
    assert not zip_holds_images(zip_bytes({"a.txt": b"one", "__MACOSX/x.png": b"", ".hidden.png": b""}))
    assert not zip_holds_images(b"not a zip")
