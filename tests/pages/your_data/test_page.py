"""The "Your data" page counts as the user does and labels its axes for what they show
(issue 21, items 6 and 9), on a labelled gene-like upload."""

from __future__ import annotations

import io
import json
import re

import numpy as np
import pandas as pd
import pytest

from tests.conftest import page_app
from ui import state


def _genes_csv(m: int = 24, n: int = 40, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    X = rng.lognormal(size=(m, n))
    X[: m // 2, :5] *= 6.0  # a few genes raised in the first class
    df = pd.DataFrame(np.round(X, 4), columns=[f"GENE{j:05d}" for j in range(n)])
    df.insert(0, "class", np.repeat(["AML", "ALL"], [m // 2, m - m // 2]))
    buf = io.StringIO()
    df.to_csv(buf, index=False)
    return buf.getvalue().encode()


def test_preview_counts_samples_from_one_and_components_axis_says_component():
    at = page_app("your_data.py", timeout=180, **{state.K: 4}).run()
    at.file_uploader(key="yd_file").set_value(("genes.csv", _genes_csv(), "text/csv"))
    at = at.run()
    assert not at.exception
    preview = at.dataframe[0].value
    assert list(preview.index) == list(range(1, 11)) and preview.index.name == "sample"
    assert list(preview.columns[:2]) == ["GENE00000", "GENE00001"]
    at.button(key="yd_use").click()
    at = at.run()
    assert not at.exception
    spec = json.loads(at.get("plotly_chart")[-1].proto.spec)
    assert spec["layout"]["xaxis"]["title"]["text"] == "component"
    assert all(str(t).startswith("GENE") for t in spec["data"][0]["y"])  # the file's gene names


def test_preview_counts_constant_features():
    """Two constant genes (every value equal; one of them 0.1, whose mean is not exactly 0.1) are
    counted, a gene that varies by one last digit is not."""
    rng = np.random.default_rng(3)
    df = pd.DataFrame(np.round(rng.lognormal(size=(12, 6)), 4), columns=[f"G{j}" for j in range(6)])
    df["G1"], df["G4"] = 7.25, 0.1
    df.loc[0, "G5"] = df.loc[1, "G5"] + 0.0001
    df.loc[1:, "G5"] = df.loc[1, "G5"]
    at = page_app("your_data.py", timeout=180).run()
    at.file_uploader(key="yd_file").set_value(("c.csv", df.to_csv(index=False).encode(), "text/csv"))
    at = at.run()
    assert not at.exception
    assert any(i.value.startswith("2 feature(s) are constant") for i in at.info), [i.value for i in at.info]


# ----------------------------------------------------------------- issue 26: orientation, sheets, names
def _genes_by_samples_csv(genes: int = 120, samples: int = 9) -> tuple[bytes, bytes, list]:
    """A genes-as-rows CSV as R writes it (probe ids, GSM header) and its sample sheet."""
    rng = np.random.default_rng(4)
    E = np.round(rng.lognormal(3.0, 1.0, size=(genes, samples)), 3)
    ids = ["AFFX-BioB-5_at"] + [f"{200000 + i}_at" for i in range(1, genes)]
    gsm = [f"GSM{500 + j}" for j in range(samples)]
    csv = pd.DataFrame(E, index=ids, columns=gsm).to_csv().encode()
    sheet = pd.DataFrame({"sample": gsm[::-1], "subtype": (["ALL", "AML", "MLL"] * 3)[::-1]})
    return csv, sheet.to_csv(index=False).encode(), gsm


def test_genes_as_rows_upload_says_transposed_reads_the_other_way_and_takes_a_sheet():
    csv, sheet, gsm = _genes_by_samples_csv()
    at = page_app("your_data.py", timeout=180).run()
    at.file_uploader(key="yd_file").set_value(("expr.csv", csv, "text/csv"))
    at = at.run()
    assert not at.exception and not at.error
    assert any("9 samples × 120 features" in s.value for s in at.success)
    why = ("transposed, because the id column holds probe ids ('AFFX-BioB-5_at', '200001_at', '200002_at', "
           "...) +3; the header holds sample ids ('GSM500', 'GSM501', 'GSM502', ...) +2: evidence +5, 3 needed; "
           "the shape (120 rows for 9 numeric columns) is not counted")
    assert any(why in w.value for w in at.warning)
    assert list(at.dataframe[0].value.index[:2]) == gsm[:2]  # the samples by their names
    at.button(key="yd_other_way").click()
    at = at.run()
    assert any("120 samples × 9 features" in s.value for s in at.success)
    assert at.selectbox(key="yd_orientation").value == "rows-are-samples"
    at.selectbox(key="yd_orientation").set_value("auto")
    at = at.run()
    at.file_uploader(key="yd_sheet").set_value(("sheet.csv", sheet, "text/csv"))
    at = at.run()
    assert not at.exception and not at.error
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["labels"] == "3 classes"
    at.button(key="yd_use").click()
    at = at.run()
    upload = at.session_state[state.UPLOAD]
    assert upload.sample_names == gsm
    assert list(upload.labels) == ["ALL", "AML", "MLL"] * 3  # matched by id (the sheet is reversed)
    # Features by class on it: the sheet's classes, the probe ids, the GSM ids in the heatmap's hover
    lab = page_app("labelled.py", timeout=300, **{state.UPLOAD: upload, state.DATASET: state.UPLOAD_NAME,
                                                   state.K: 3}).run()
    assert not lab.exception and not lab.error
    cells = " ".join(" ".join(map(str, df.value.columns)) for df in lab.dataframe)
    assert all(f"mean {c}" in cells for c in ("ALL", "AML", "MLL"))
    features = " ".join(" ".join(map(str, df.value.get("feature", []))) for df in lab.dataframe)
    assert re.search(r"\d{6}_at|AFFX-BioB-5_at", features), features[:200]
    specs = [json.loads(c.proto.spec) for c in lab.get("plotly_chart")]
    assert any("GSM50" in json.dumps(sp.get("data", [])) for sp in specs)


def test_sheet_mismatch_is_listed_on_the_page():
    csv, _, gsm = _genes_by_samples_csv()
    sheet = pd.DataFrame({"sample": gsm[1:] + ["GSM999", gsm[3]], "subtype": ["a"] * 10})
    at = page_app("your_data.py", timeout=180).run()
    at.file_uploader(key="yd_file").set_value(("expr.csv", csv, "text/csv"))
    at = at.run()
    at.file_uploader(key="yd_sheet").set_value(("sheet.csv", sheet.to_csv(index=False).encode(), "text/csv"))
    at = at.run()
    assert not at.exception
    msg = " ".join(e.value for e in at.error)
    assert "not in the sheet: 'GSM500'" in msg and "'GSM503'" in msg and "'GSM999'" in msg


def test_downloads_name_samples_and_embed_plotly():
    from ui import downloads
    from ui.figures import analysis as figs

    X = np.array([[1.0, 2.0], [3.0, 4.0], [0.5, 0.0]])
    L = np.array([[1.0], [0.0]])
    sc = pd.read_csv(io.BytesIO(downloads.scores_csv(X, L, labels=["a", "b", "a"],
                                                     sample_names=["GSM1", "GSM2", "GSM3"])))
    assert sc["sample"].tolist() == ["GSM1", "GSM2", "GSM3"] and sc["label"].tolist() == ["a", "b", "a"]
    np.testing.assert_allclose(sc["score_1"], X @ L[:, 0])
    with pytest.raises(ValueError, match="`sample_names` must have one entry per sample"):
        downloads.scores_csv(X, L, sample_names=["x"])
    html = downloads.figure_html(figs.negativity_history([1.0, 0.0]))
    assert re.search(r"<script[^>]*\bsrc=", html) is None  # no script loaded from anywhere
    assert "Plotly.newPlot" in html and len(html) > 1_000_000  # plotly.js itself is in the file


def test_geo_and_10x_uploads():
    import gzip

    from tests.data.io.test_orientation_samples import genes_by_samples, series_matrix, tenx_zip

    E, ids, gsm = genes_by_samples(50, 6)
    at = page_app("your_data.py", timeout=180).run()
    at.file_uploader(key="yd_file").set_value(("GSE1_series_matrix.txt.gz", gzip.compress(series_matrix(gsm, ids, E)),
                                               "application/gzip"))
    at = at.run()
    at.text_input(key="yd_label_meta").set_value("disease")
    at = at.run()
    assert not at.exception and not at.error
    assert any("6 samples × 50 features" in s.value for s in at.success)
    assert {m.label: m.value for m in at.metric}["labels"] == "2 classes"
    assert list(at.dataframe[0].value.index[:2]) == gsm[:2]
    M = np.random.default_rng(5).poisson(0.5, size=(40, 30)).astype(float)
    at = page_app("your_data.py", timeout=180).run()
    at.file_uploader(key="yd_file").set_value(("pbmc.zip", tenx_zip(M, [f"G{i}" for i in range(40)],
                                                                    [f"AAAC{i}-1" for i in range(30)]),
                                               "application/zip"))
    at = at.run()
    at.button(key="yd_use").click()
    at = at.run()
    assert not at.exception and not at.error
    assert any("sparse single-cell data (cells × genes)" in i.value for i in at.info)
    assert at.session_state[state.UPLOAD].sample_names[:2] == ["AAAC0-1", "AAAC1-1"]


# ----------------------------------------------------------------- raw text and a low certificate
def _documents_zip(n: int = 24) -> bytes:
    """A .zip of n .txt documents on four themes (one document per file)."""
    import zipfile

    themes = [["river", "boat", "water", "fish"], ["goal", "match", "team", "score"],
              ["vote", "party", "election", "senate"], ["cell", "gene", "protein", "virus"]]
    rng = np.random.default_rng(3)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for i in range(n):
            words = list(rng.choice(themes[i % 4], 20)) + ["the", "of", "and"]
            zf.writestr(f"doc{i:02d}.txt", " ".join(words))
    return buf.getvalue()


def _images_zip(n: int = 4) -> bytes:
    import zipfile

    from PIL import Image

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for i in range(n):
            png = io.BytesIO()
            Image.fromarray(np.full((6, 5), 40 * i, np.uint8)).save(png, format="PNG")
            zf.writestr(f"img{i}.png", png.getvalue())
    return buf.getvalue()


def test_text_upload_says_documents_by_words_hides_resize_and_points_to_topics():
    """A .zip of .txt documents was described as "24 samples × 16 features" under an image-resize
    field; now documents × words, no resize field, and the way to its topics."""
    at = page_app("your_data.py", timeout=180).run()
    at.file_uploader(key="yd_file").set_value(("docs.zip", _documents_zip(), "application/zip"))
    at = at.run()
    assert not at.exception and not at.error
    read = " ".join(s.value for s in at.success)
    found = re.search(r"24 documents × (\d+) words", read)
    assert found, read
    n_words = int(found.group(1))
    assert "samples" not in read and "features" not in read and "*Topics* page" in read
    assert "yd_resize" not in [t.key for t in at.text_input]
    assert {m.label: m.value for m in at.metric}["documents"] == "24"
    at.button(key="yd_use").click()
    at = at.run()
    assert not at.exception and not at.error
    assert any(f"(24 documents × {n_words} words)" in s.value for s in at.success)
    assert any("text corpus" in i.value and "*Topics* page" in i.value for i in at.info)
    upload = at.session_state[state.UPLOAD]
    # the Topics page offers the upload and opens on it
    tp = page_app("topics.py", timeout=300, **{state.UPLOAD: upload, state.DATASET: state.UPLOAD_NAME,
                                               "tp_r": 2, "tp_k": 3}).run()
    assert not tp.exception and not tp.error, [e.value for e in tp.error]
    assert tp.selectbox(key="tp_corpus").value == "upload"
    assert any(f"**docs.zip**: 24 documents × {n_words} words" in c.value for c in tp.caption)
    # a zip of images keeps its resize field
    at = page_app("your_data.py", timeout=180).run()
    at.file_uploader(key="yd_file").set_value(("faces.zip", _images_zip(), "application/zip"))
    at = at.run()
    assert not at.exception and not at.error
    assert "yd_resize" in [t.key for t in at.text_input]
    assert any("4 samples × 30 features" in s.value for s in at.success)



def test_low_certified_fraction_is_explained_and_can_be_tightened():
    """Issue 27 item 8: on structureless data the page said "certified fraction of the optimum
    ≥ 14.50%" with no word on why; now it says what a low fraction means and offers the full
    certificate, whose progress redraws itself until the refined fraction is shown."""
    import time

    from ui import compute, jobs

    X = np.random.default_rng(1).standard_normal((100, 300))  # noise: no sparse structure
    up = compute.Upload(X=X, feature_names=[f"g{j}" for j in range(300)], labels=None, image_shape=None,
                        notes=[], metadata=None, source_name="noise.csv", options={}, token="noise")
    at = page_app("your_data.py", timeout=300, **{state.UPLOAD: up, state.DATASET: state.UPLOAD_NAME,
                                                   state.K: 20}).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    frac = next(m for m in at.metric if m.label == "certified fraction of the optimum")
    value = float(frac.value.strip("≥ %")) / 100
    assert value < 0.9, frac.value  # the premise: noise gets a low certified fraction
    info = " ".join(i.value for i in at.info)
    assert f"Why only ≥ {value:.1%}?" in info and "bound may be loose" in info and "k = 20" in info
    at.button(key="yd_refine").click()
    at = at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any(p.proto.text.startswith("Full certificate at k = 20: 0 of 1") for p in at.get("progress")) or \
        any(s.value.startswith("Full certificate at k = 20") for s in at.success)  # running, or already done
    deadline = time.monotonic() + 600
    done: list = []
    while not done and time.monotonic() < deadline:
        jobs.REGISTRY.wait(5)
        at = at.run()
        assert not at.exception, [e.message for e in at.exception]
        done = [s.value for s in at.success if s.value.startswith("Full certificate at k = 20")]
    assert done, ([s.value for s in at.success], [i.value for i in at.info])
    refined = float(done[0].split("**≥ ")[1].split("%")[0]) / 100
    assert refined >= value - 1e-4 and f"was ≥ {value:.2%}" in done[0]


def test_high_certified_fraction_draws_no_explanation():
    X = np.random.default_rng(2).standard_normal((40, 30)) * 0.05
    X[:, :4] += np.random.default_rng(3).standard_normal((40, 1)) * 3.0  # one strong sparse direction
    from ui import compute

    up = compute.Upload(X=X, feature_names=[f"g{j}" for j in range(30)], labels=None, image_shape=None,
                        notes=[], metadata=None, source_name="planted.csv", options={}, token="planted")
    at = page_app("your_data.py", timeout=300, **{state.UPLOAD: up, state.DATASET: state.UPLOAD_NAME,
                                                   state.K: 4}).run()
    assert not at.exception and not at.error
    frac = next(m for m in at.metric if m.label == "certified fraction of the optimum")
    assert float(frac.value.strip("≥ %")) / 100 >= 0.9, frac.value
    assert not any("Why only" in i.value for i in at.info)
    assert not [b for b in at.button if b.key == "yd_refine"]


# ------------------------------------------------- issue 41: a refused file said in words
@pytest.mark.parametrize("name,kind,todo", [
    ("results.ods", "spreadsheet workbook", "CSV UTF-8"),  # .xlsx is read (openpyxl); .ods is not
    ("paper.PDF", "PDF document", "as CSV"),
    ("model.pkl", "Python pickle", "numpy.save"),
    ("data.weird", ".weird file", "formats below"),
])
def test_a_file_the_app_does_not_read_is_refused_in_words_on_the_page(name, kind, todo):
    from ui.messages import refused_file

    at = page_app("your_data.py", timeout=180).run()
    at.file_uploader(key="yd_file").set_value((name, b"PK\x03\x04 not a table", "application/octet-stream"))
    at = at.run()
    assert not at.exception, [e.message for e in at.exception]
    said = " ".join(e.value for e in at.error)
    assert f"**{name}** is a" in said and kind in said and todo in said and ".csv" in said, said
    assert state.UPLOAD not in at.session_state or at.session_state[state.UPLOAD] is None
    assert refused_file("table.CSV", ["csv"]) is None and refused_file("m.txt.gz", ["gz"]) is None


def test_an_h5ad_upload_shows_only_the_choices_that_apply():
    """Issue 41: an AnnData file showed the missing-values choice (its counts have none) and its one
    choice, the label column, alone in the third column."""
    at = page_app("your_data.py", timeout=180).run()
    at.file_uploader(key="yd_file").set_value(("cells.h5ad", b"\x89HDF\r\n\x1a\n not really", "application/x-hdf"))
    at = at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert not [s for s in at.selectbox if s.key == "yd_nan"]
    assert [t for t in at.text_input if t.key == "yd_label_meta"]


def test_a_new_reading_of_the_file_in_use_reaches_every_page_at_once():
    """Issue 41: naming another label column showed in the preview but the other pages kept the old
    reading until "Analyse" was pressed again, while the sidebar already named the file."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.lognormal(size=(30, 8)), columns=[f"g{j}" for j in range(8)])
    df.insert(0, "site", np.repeat(["north", "south", "east"], 10))
    df.insert(0, "group", np.tile(["a", "b"], 15))
    data = df.to_csv(index=False).encode()
    at = page_app("your_data.py", timeout=180).run()
    at.file_uploader(key="yd_file").set_value(("two_labels.csv", data, "text/csv"))
    at = at.run()
    at.button(key="yd_use").click()
    at = at.run()
    assert not at.exception, [e.message for e in at.exception]
    first = at.session_state[state.UPLOAD]
    at.text_input(key="yd_label").set_value("site")
    at = at.run()
    assert not at.exception, [e.message for e in at.exception]
    now = at.session_state[state.UPLOAD]
    assert now.token != first.token and set(map(str, now.labels)) == {"north", "south", "east"}
    assert at.session_state[state.DATASET] == state.UPLOAD_NAME
    assert any("every page now uses this reading" in i.value for i in at.info)
