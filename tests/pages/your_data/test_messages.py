"""The "Your data" page phrases the reader's messages with its own controls, lists the columns it
does not use, and reads a label column typed as a number as a position counted from 1 (moved from
tests/data/io/test_load_errors.py with the page's reading controls, now in ui/reading.py)."""

from __future__ import annotations

import numpy as np

from tests.conftest import page_app
from tests.data.io.test_load_errors import BODY, _fmt, csv_bytes, images, png_bytes, zip_bytes


def _page():
    return page_app("your_data.py", timeout=120).run()


def _upload(at, name, content):
    at.file_uploader(key="yd_file").set_value((name, content, "application/octet-stream"))
    return at.run()


def test_page_lists_dropped_columns_and_reads_conventions():
    at = _upload(_page(), "t.csv", b'id,amount,b\nx1,"1,000",2.5\nx2,"2,500",3.5\nx3,"7",1.25\n')
    assert not at.exception and not at.error
    warning = " | ".join(w.value for w in at.warning)
    assert "1 column(s) not used as features: **id** (text, e.g. 'x1'; kept as metadata" in warning
    assert any(m.label == "features" and m.value == "2" for m in at.metric)
    captions = " | ".join(c.value for c in at.caption)
    assert "first line read as column names" in captions and 'under "Header line" above' in captions
    assert "thousands separators" in captions


def test_page_phrases_messages_with_its_controls():
    at = _upload(_page(), "n.csv", b"a,b\n1,2\nNA,3\n4,5\n")
    text = at.error[0].value
    assert "Missing values (NaN/inf)" in text and "drop samples with missing values" in text
    assert "nan_policy" not in text and "'drop-columns'" not in text
    assert "(line 3, column 'a')" in text and "n.csv: " not in text
    mixed = zip_bytes({**images(3, (4, 5)), **{f"z{i}.png": png_bytes(np.zeros((6, 6), np.uint8))
                                               for i in range(3)}})
    at = _upload(at, "faces.zip", mixed)
    text = at.error[0].value
    assert 'fill in "Resize every image to height×width" above' in text
    assert "resize=(" not in text


def test_page_header_choice_and_label_position_from_one():
    data = csv_bytes([[2019, 2020, 2021]] + [[_fmt(v) for v in r] for r in BODY[:4]])
    at = _upload(_page(), "years.csv", data)
    assert any(m.label == "samples" and m.value == "4" for m in at.metric)
    at.selectbox(key="yd_header").set_value(False)
    at = at.run()
    assert any(m.label == "samples" and m.value == "5" for m in at.metric)
    at.selectbox(key="yd_header").set_value(None)
    at.text_input(key="yd_label").set_value("1")  # the first column, counted from 1
    at = at.run()
    assert not at.error and any(m.label == "features" and m.value == "2" for m in at.metric)
    assert "**2019** (used as labels)" in " | ".join(w.value for w in at.warning)
    at.text_input(key="yd_label").set_value("9")
    at = at.run()
    assert at.error[0].value.endswith(
        "\"Label column\" must be one of '2019', '2020', '2021' or a position from 1 to 3; got '9'")
