"""Single-cell data are recognised by the reader's marker (``Note.kind``), not by a note's text (issue
37 item 5): through ``load_file``, through the upload the app stores, and not from a look-alike text."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from nspca_core.io import SINGLE_CELL, load_file, single_cell_note
from tests.data.io.test_orientation_samples import tenx_zip
from ui import topics, uploads


def _tenx():
    M = np.random.default_rng(5).poisson(0.5, size=(12, 9)).astype(float)
    return load_file(tenx_zip(M, [f"G{i}" for i in range(12)], [f"AAAC{i}-1" for i in range(9)]),
                     filename="pbmc.zip")


def test_a_10x_folder_is_single_cell_through_the_upload():
    loaded = _tenx()
    assert [getattr(nt, "kind", None) for nt in loaded.notes].count(SINGLE_CELL) == 1
    assert topics.single_cell(loaded.notes)
    up = uploads.make_upload(loaded, options={}, file_digest="d")
    assert topics.single_cell(up.notes)  # the app's words keep the marker
    assert topics.row_col_words(up.X, up.notes) == ("cells", "genes")


def test_the_text_alone_does_not_make_single_cell_data():
    X = sp.random(6, 4, density=0.5, format="csr", random_state=0)
    look_alike = ["10x folder: written by hand", "AnnData: a word in a corpus note"]
    assert not topics.single_cell(look_alike)
    assert topics.row_col_words(X, look_alike) == ("documents", "words")
    assert topics.row_col_words(X, [single_cell_note("cells")]) == ("cells", "genes")
