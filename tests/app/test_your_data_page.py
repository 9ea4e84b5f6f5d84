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
    assert any("transposed, because the id column holds probe/gene ids" in w.value for w in at.warning)
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

    from tests.data.test_io_yourdata import genes_by_samples, series_matrix, tenx_zip

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
