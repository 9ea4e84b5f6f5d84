"""The "Your data" page counts as the user does and labels its axes for what they show
(issue 21, items 6 and 9), on a labelled gene-like upload."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd

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
