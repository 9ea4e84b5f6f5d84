"""ui/reading.py without a browser: the reader's messages phrased with the page's controls, the
label column typed as a position counted from 1, the file types read from the core."""

from __future__ import annotations

import pytest

from nspca_core import InputError
from nspca_core.io import ALLOWED_EXTENSIONS
from ui import reading

YEARS = b"2019,2020,2021\n1.5,2.5,3.5\n2.5,3.5,1.5\n3.5,1.5,2.5\n4.5,2.5,1.5\n"


@pytest.mark.parametrize("raw,said,unsaid", [
    ("n.csv: 2 NaN/inf value(s); choose nan_policy='drop-rows', 'drop-columns' or 'impute-mean' to handle them",
     'choose what to do with them under "Missing values (NaN/inf)" above', "nan_policy"),
    ("nan_policy='drop-rows': dropped 1 row(s)", '"Missing values (NaN/inf): drop samples with missing values"',
     "nan_policy"),
    ("images of mixed sizes; all images must have the same size, or pass resize=(height, width) to resize them",
     'fill in "Resize every image to height×width" above to resize them', "resize="),
    ("file 'x' is over the size cap max_bytes=1,000 bytes; raise max_bytes to load it",
     "over the upload limit of 1,000 bytes", "max_bytes"),
    ("`label_column` must be one of the column names ['a', 'b'] or an index in [0, 1]; got 'z'",
     "\"Label column\" must be one of the column names ['a', 'b'] or a position from 1 to 2", "index in"),
    ("header: first line read as data (why); if it holds column names, choose header 'yes'",
     'choose "yes" under "Header line"', "header 'yes'"),
])
def test_messages_name_the_page_controls(raw, said, unsaid):
    text = reading.on_screen(raw, "n.csv")
    assert said in text and unsaid not in text and not text.startswith("n.csv: ")


def test_label_column_typed_as_a_number_is_a_position_from_one():
    loaded = reading.parse(YEARS, "years.csv", {"label_column": "1"})
    assert loaded.X.shape == (4, 2) and list(loaded.labels) == ["1.5", "2.5", "3.5", "4.5"]
    with pytest.raises(InputError) as info:  # a position past the last column: the reader's own error
        reading.parse(YEARS, "years.csv", {"label_column": "9"})
    assert info.value.argument == "label_column"
    with pytest.raises(ValueError, match='"Label column": positions count from 1; got 0'):
        reading.parse(YEARS, "years.csv", {"label_column": "0"})


def test_file_types_are_the_readers():
    assert reading.TYPES == [e.lstrip(".") for e in ALLOWED_EXTENSIONS]
