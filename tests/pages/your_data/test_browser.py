"""Your data as analysts have it, in a real browser (issue 26): a genes-as-rows CSV (probe ids
in the first column, GSM sample ids in the header, as R's write.csv saves it) and its sample
sheet (in another order than the file's columns) are uploaded on "Your data"; the page says the
table was read transposed and offers to read it the other way; "Features by class" then shows
the sheet's classes and the file's probe ids.  Screenshots at 1400 and 800 px under
``test-artifacts/screenshots/your_data/``.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.app_shell.test_browser import server_fixture, _wait_idle
from tests.app_shell.test_browser_journeys import screenshot as journey_screenshot
from tests.app_shell.test_browser_journeys import (drawn_figures, grid_cells, no_exception, settle, text_shown,
                                             wait_for)

ROOT = Path(__file__).resolve().parents[3]
SHOTS = ROOT / "test-artifacts" / "screenshots" / "your_data"
TIMEOUT_S = 300
CLASSES = ("ALL", "AML", "MLL")
GENES, SAMPLES = 500, 30
PROBE = re.compile(r"(\d+_(s_)?at|AFFX-\w+_at)")

pytestmark = pytest.mark.browser


def probe_id(i: int) -> str:
    return "AFFX-BioB-5_at" if i == 0 else (f"{200000 + i}_s_at" if i % 2 else f"{200000 + i}_at")


def write_files(tmp: Path) -> tuple[Path, Path]:
    """(genes x samples CSV as R writes it, sample sheet CSV in reverse order)."""
    rng = np.random.default_rng(1)
    classes = np.array(CLASSES)[np.arange(SAMPLES) % 3]
    E = rng.lognormal(4.0, 1.0, size=(GENES, SAMPLES))
    E[np.ix_(range(1, 13), np.flatnonzero(classes == "AML"))] *= 8.0
    gsm = [f"GSM{300100 + j}" for j in range(SAMPLES)]
    lines = ['""' + "".join(f',"{g}"' for g in gsm)]
    lines += [f'"{probe_id(i)}"' + "".join(f",{v:.4f}" for v in E[i]) for i in range(GENES)]
    data = tmp / "expression_genes_by_samples.csv"
    data.write_text("\n".join(lines) + "\n")
    sheet = tmp / "samples.csv"
    pd.DataFrame({"title": [f"patient {j}" for j in range(SAMPLES)], "sample": gsm,
                  "subtype": classes})[::-1].to_csv(sheet, index=False)
    return data, sheet


def screenshot(page, name: str) -> Path:
    """``<name>_<width>.png`` in this test's folder."""
    return journey_screenshot(page, f"{name}_{page.viewport_size['width']}", SHOTS)


app_url = server_fixture(SHOTS)  # the project's own Streamlit server, one per module


@pytest.mark.parametrize("width", [1400, 800])
def test_genes_as_rows_with_a_sample_sheet_reach_features_by_class(app_url, browser, tmp_path, width):
    data, sheet = write_files(tmp_path)
    ctx = browser.new_context(viewport={"width": width, "height": 1000})
    page = ctx.new_page()
    try:
        page.goto(app_url + "/", wait_until="domcontentloaded", timeout=60_000)
        _wait_idle(page, TIMEOUT_S)
        page.goto(app_url + "/your_data", wait_until="domcontentloaded", timeout=60_000)
        _wait_idle(page, TIMEOUT_S)
        page.locator('[data-testid="stFileUploaderDropzoneInput"]').first.set_input_files(str(data))
        text_shown(page, rf"{SAMPLES} samples × {GENES} features")
        _wait_idle(page, TIMEOUT_S)
        text_shown(page, r"read as a \*?\*?feature|was read as a feature|feature\*\* \(e\.g\. a gene\)")
        no_exception(page)
        # one click reads it the other way, one more click back
        page.get_by_role("button", name=re.compile(r"Read the other way")).click()
        text_shown(page, rf"{GENES} samples × {SAMPLES} features")
        _wait_idle(page, TIMEOUT_S)
        page.get_by_role("button", name=re.compile(r"Read the other way")).click()
        text_shown(page, rf"{SAMPLES} samples × {GENES} features")
        _wait_idle(page, TIMEOUT_S)
        # the sample sheet: the second uploader
        page.locator('[data-testid="stFileUploaderDropzoneInput"]').nth(1).set_input_files(str(sheet))
        text_shown(page, r"labels from the sheet's column 'subtype'")
        _wait_idle(page, TIMEOUT_S)
        no_exception(page)
        cells = grid_cells(page)
        assert "GSM300100" in cells and any(PROBE.fullmatch(c) for c in cells), cells[:40]
        screenshot(page, "1_your_data")
        page.get_by_role("button", name="Analyse this data on every page").click()
        _wait_idle(page, TIMEOUT_S)
        no_exception(page)
        link = page.get_by_role("link", name="Features by class").first
        box = link.bounding_box()
        if box is None or box["x"] < 0 or not link.is_visible():  # narrow window: sidebar collapsed
            page.locator('[data-testid="stExpandSidebarButton"], [data-testid="stSidebarCollapsedControl"] '
                         'button').first.click()
            wait_for(lambda: (link.bounding_box() or {"x": -1})["x"] >= 0, 120, "the sidebar to open")
        link.click()
        page.wait_for_url("**/labelled", timeout=60_000)
        _wait_idle(page, TIMEOUT_S)
        wait_for(lambda: any(PROBE.fullmatch(t) for t in grid_cells(page)), TIMEOUT_S,
                 "a table with the file's probe ids")
        _wait_idle(page, TIMEOUT_S)
        cells = grid_cells(page)
        for cls in CLASSES:
            assert f"mean {cls}" in cells, cells[:40]
        wait_for(lambda: drawn_figures(page) >= 2, TIMEOUT_S, "the scores and heatmap figures")
        settle(page)
        no_exception(page)
        screenshot(page, "2_features_by_class")
    finally:
        ctx.close()
