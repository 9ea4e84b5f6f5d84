"""The app's journeys in a real browser (headless Chromium), as its users take them.

- The analyst: uploads a generated 75 × 7,000 labelled gene matrix (CSV with a
  class column) on "Your data", then opens every analysis page on it; on
  "Features by class" the tables name the file's genes and the figures show the
  classes.
- The analyst on MLL: the same page on the real leukemia data (skipped without
  a local copy).
- The researcher: one click on an "as in the paper" preset opens the page with
  the paper's settings and its caption.

Each step asserts meaningful content — no Streamlit exception box, every figure
drawn with data in it, tables with the feature names — and saves a screenshot
under ``test-artifacts/screenshots/journeys/``.  No timing is asserted (the
seconds to first content are printed by ``benchmarks/bench_app.py``).
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.app_shell.test_browser import server_fixture, _wait_drawn, _wait_idle

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "test-artifacts" / "screenshots" / "journeys"
TIMEOUT_S = 300
WIDTH = 1400

pytestmark = pytest.mark.browser

# Pages of the "Analyse" section (navigation title -> URL path)
ANALYSIS = {
    "Variance vs k, certified": "variance_vs_k",
    "Components as images": "components_images",
    "Compare algorithms": "compare",
    "Several components": "several_components",
    "Nonnegative-score PCA": "nonneg_scores",
    "Features by class": "labelled",
}
PATHS = {**ANALYSIS, "Your data": "your_data"}
CLASSES = ("ALL", "AML", "MLL")
PLANTED = {"AML": range(0, 12), "MLL": range(12, 20)}  # genes raised in one class


# ------------------------------------------------------------------ data
def gene_name(j: int) -> str:
    return f"GENE{j:05d}"


def labelled_csv(path: Path, m: int = 75, n: int = 7000, seed: int = 0) -> Path:
    """A gene-expression-like CSV: a ``class`` column, then n log-normal genes.

    Classes ALL/AML/MLL in turn (25 each for m = 75); the genes in
    :data:`PLANTED` are raised in their class, so a component should pick them.
    """
    rng = np.random.default_rng(seed)
    classes = np.array(CLASSES)[np.arange(m) % len(CLASSES)]
    X = rng.lognormal(mean=5.0, sigma=1.0, size=(m, n))
    X[np.ix_(classes == "AML", list(PLANTED["AML"]))] *= 8.0
    X[np.ix_(classes == "MLL", list(PLANTED["MLL"]))] *= 6.0
    df = pd.DataFrame(np.round(X, 3), columns=[gene_name(j) for j in range(n)])
    df.insert(0, "class", classes)
    df.to_csv(path, index=False)
    return path


# ------------------------------------------------------------------ browser helpers
def open_app(page, url: str) -> None:
    """The entry page first: a fresh server must run app.py (its navigation) before a page URL."""
    page.goto(url + "/", wait_until="domcontentloaded", timeout=60_000)
    _wait_idle(page, TIMEOUT_S)


def go(page, title: str) -> None:
    """Open a page through the sidebar navigation."""
    page.get_by_role("link", name=title).first.click()
    page.wait_for_url(f"**/{PATHS[title]}", timeout=60_000)


def choose_dataset(page, label_start: str) -> None:
    page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').first.click()
    page.get_by_role("option", name=re.compile("^" + re.escape(label_start))).first.click()


def wait_for(predicate, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        out = predicate()
        if out:
            return out
        time.sleep(0.3)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")


FIGURE_STATE_JS = """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
  .filter(e => e.offsetParent !== null)
  .map(e => ({drawn: e.querySelector('.main-svg') !== null,
              marks: e.querySelectorAll('g.trace, g.hm, .heatmaplayer image, .imagelayer image, canvas').length,
              height: e.getBoundingClientRect().height}))"""


def no_exception(page) -> None:
    errors = page.locator('[data-testid="stException"]')
    assert errors.count() == 0, errors.first.inner_text()[:2000]


def text_shown(page, pattern: str, timeout_s: float = TIMEOUT_S) -> None:
    wait_for(lambda: page.get_by_text(re.compile(pattern)).count() >= 1, timeout_s, repr(pattern))


def figures(page) -> list[dict]:
    """Each visible figure: drawn?, number of data marks (SVG traces, heatmap images, WebGL
    canvases of 3-D scenes), height."""
    return page.evaluate(FIGURE_STATE_JS)


def drawn_figures(page) -> int:
    return sum(1 for f in figures(page) if f["drawn"] and f["marks"] > 0)


def grid_cells(page) -> list[str]:
    """Text of every dataframe cell and column header in the page (the grids' accessible table)."""
    return page.evaluate("""() => [...document.querySelectorAll(
        '[data-testid="stDataFrame"] [role="gridcell"], [data-testid="stDataFrame"] [role="columnheader"]')]
        .map(e => e.innerText.trim()).filter(t => t.length > 0)""")


def assert_meaningful(page, *, min_figures: int = 1, timeout_s: float = 60) -> None:
    """No exception box; at least ``min_figures`` figures, none empty or squeezed flat.

    Pages that draw background work redraw their figures every second, so the
    figures are polled until they all hold data (or the time is up).
    """
    def ok():
        figs = figures(page)
        return len(figs) >= min_figures and all(f["drawn"] and f["marks"] > 0 and f["height"] >= 200
                                                for f in figs)

    deadline = time.monotonic() + timeout_s
    while not ok() and time.monotonic() < deadline:
        time.sleep(0.5)
    errors = page.locator('[data-testid="stException"]')
    assert errors.count() == 0, errors.first.inner_text()[:2000]
    figs = figures(page)
    assert len(figs) >= min_figures, figs
    assert all(f["drawn"] and f["marks"] > 0 for f in figs), figs
    assert all(f["height"] >= 200 for f in figs), figs


def settle(page, timeout_s: float = 90) -> bool:
    """Wait (at most ``timeout_s``) until the page's background work is done: no Stop button left."""
    stop = page.locator('[data-testid="stMainBlockContainer"]').get_by_role("button", name="Stop", exact=True)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if stop.count() == 0:
            return True
        time.sleep(1.0)
    return False


def screenshot(page, name: str, folder: Path = SHOTS) -> Path:
    """Full-page screenshot ``folder/<name>.png`` (the viewport grown to the content, as in test_browser)."""
    folder.mkdir(parents=True, exist_ok=True)
    width = page.viewport_size["width"]
    height = page.evaluate(
        "() => Math.max(...[...document.querySelectorAll('[data-testid=\"stMain\"], "
        "[data-testid=\"stMainBlockContainer\"]')].map(e => e.scrollHeight), 1000)")
    page.set_viewport_size({"width": width, "height": min(int(height) + 80, 14000)})
    _wait_drawn(page, 60)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size({"width": width, "height": 1000})
    return path


def upload(page, csv: Path) -> None:
    """Upload on "Your data" and select it for every page."""
    go(page, "Your data")
    _wait_idle(page, TIMEOUT_S)
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(csv))
    page.get_by_role("button", name="Analyse this data on every page").wait_for(timeout=120_000)
    _wait_idle(page, TIMEOUT_S)
    assert page.get_by_text(re.compile(r"75 samples × 7000 features")).count() >= 1
    assert page.get_by_text(re.compile(r"text column 'class' used as labels")).count() >= 1
    page.get_by_role("button", name="Analyse this data on every page").click()
    _wait_idle(page, TIMEOUT_S)


# ------------------------------------------------------------------ fixtures
app_url = server_fixture(SHOTS)  # the project's own Streamlit server, one per module


@pytest.fixture()
def page(browser):
    ctx = browser.new_context(viewport={"width": WIDTH, "height": 1000})
    pg = ctx.new_page()
    try:
        yield pg
    finally:
        ctx.close()


# ------------------------------------------------------------------ the analyst
def check_features_by_class(page, gene_like: re.Pattern, name: str) -> list[str]:
    """The Features by class page: tables with feature names, class columns, class figures."""
    wait_for(lambda: any(gene_like.fullmatch(t) for t in grid_cells(page)), TIMEOUT_S,
             "a table with the file's feature names")
    _wait_idle(page, TIMEOUT_S)
    cells = grid_cells(page)
    for cls in CLASSES:
        assert f"mean {cls}" in cells, cells[:40]
    assert {"feature", "loading", "F", "p-value"} <= set(cells)
    assert page.get_by_text("Component scores by class").count() >= 1
    wait_for(lambda: drawn_figures(page) >= 2, 60, "the scores and heatmap figures")
    assert_meaningful(page, min_figures=2)
    # the heatmap's rows are the selected features, by name; the class blocks are labelled
    ticks = page.evaluate("""() => [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
        .map(e => [...e.querySelectorAll('.ytick text, .annotation-text')].map(t => t.textContent))""")
    assert any(sum(bool(gene_like.fullmatch(t)) for t in chart) >= 10 for chart in ticks), ticks
    assert any(set(CLASSES) <= set(chart) for chart in ticks), ticks
    screenshot(page, name)
    return cells


def test_analyst_uploads_genes_and_reads_every_page(app_url, page, tmp_path):
    csv = labelled_csv(tmp_path / "leukemia_like.csv")
    open_app(page, app_url)
    upload(page, csv)
    screenshot(page, "analyst_1_your_data")

    go(page, "Features by class")
    cells = check_features_by_class(page, re.compile(r"GENE\d{5}"), "analyst_2_features_by_class")
    # the planted AML genes are found and named
    planted = {gene_name(j) for j in PLANTED["AML"]}
    assert planted & set(cells), [c for c in cells if c.startswith("GENE")][:30]

    go(page, "Variance vs k, certified")  # results first: curves while certificates run
    wait_for(lambda: drawn_figures(page) >= 1, TIMEOUT_S, "the first curves")
    assert_meaningful(page)
    screenshot(page, "analyst_3_variance_vs_k")

    go(page, "Components as images")  # not images: a clear note, no figure needed
    _wait_idle(page, TIMEOUT_S)
    assert page.get_by_text("is not an image dataset").count() >= 1
    assert page.locator('[data-testid="stException"]').count() == 0

    for step, title in enumerate(("Compare algorithms", "Several components",
                                  "Nonnegative-score PCA"), start=4):
        go(page, title)
        _wait_idle(page, TIMEOUT_S)
        wait_for(lambda: drawn_figures(page) >= 1, TIMEOUT_S, f"a figure on {title}")
        settle(page)
        assert_meaningful(page)
        screenshot(page, f"analyst_{step}_{ANALYSIS[title]}")


def test_analyst_on_mll(app_url, page):
    data_dir = Path(os.environ.get("NSPCA_DATA_DIR", ROOT.parent / "shared" / "datasets"))
    if not (data_dir / "mll_leukemia.npz").exists():
        pytest.skip("MLL not found locally (NSPCA_DATA_DIR)")
    open_app(page, app_url)
    choose_dataset(page, "MLL leukemia")
    _wait_idle(page, TIMEOUT_S)
    go(page, "Features by class")
    # Affymetrix probe-set names (e.g. 36239_at, AFFX-...), as in the file
    check_features_by_class(page, re.compile(r"[\w.-]+_at"), "mll_features_by_class")


# ------------------------------------------------------------------ the researcher
def apply_preset(page, label: str, path: str) -> None:
    """Click a preset link of the sidebar's "As in the paper" block; its page opens."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    sidebar = page.locator('[data-testid="stSidebar"]')
    link = sidebar.get_by_role("link", name=label)
    target = re.compile(rf".*/{path}(\?.*)?$")
    # under load a click landing while the sidebar redraws (the expander opening, the entry page's
    # script still running) can be lost: wait for the link, and click again if nothing navigated
    for attempt in range(3):
        if link.count() == 0 or not link.first.is_visible():
            sidebar.get_by_text("As in the paper").first.click()
            link.first.wait_for(state="visible", timeout=30_000)
        link.first.click()
        try:
            page.wait_for_url(target, timeout=20_000 if attempt < 2 else 60_000)
            break
        except PlaywrightTimeout:
            if attempt == 2:
                raise
    _wait_idle(page, TIMEOUT_S)


def test_researcher_presets_open_the_paper_figures(app_url, page):
    data_dir = Path(os.environ.get("NSPCA_DATA_DIR", ROOT.parent / "shared" / "datasets"))
    if not (data_dir / "lrs_spectrometer.npz").exists():
        pytest.skip("LRS not found locally (NSPCA_DATA_DIR)")
    open_app(page, app_url)
    apply_preset(page, "Fig. 6 · LRS variance vs k", "variance_vs_k")
    wait_for(lambda: drawn_figures(page) >= 1, TIMEOUT_S, "the curves of Fig. 6")
    sidebar = page.locator('[data-testid="stSidebar"]')
    assert sidebar.get_by_text("Asteris, Papailiopoulos & Dimakis (ICML 2014), Fig. 6").count() >= 1
    assert page.get_by_role("spinbutton", name="k — nonzeros allowed").input_value() == "20"
    main = page.locator('[data-testid="stMain"]')
    assert main.get_by_text("ε-net spannogram").count() >= 1 and main.get_by_text("EM (Sigg").count() >= 1
    assert main.get_by_text(re.compile(r"IRAS LRS spectra: 531 samples × 93 features")).count() >= 1
    assert_meaningful(page)
    screenshot(page, "researcher_1_fig6_lrs")

    if not (data_dir / "cbcl_faces_train.npz").exists():
        return
    apply_preset(page, "Fig. 3 · CBCL components", "components_images")
    _wait_idle(page, TIMEOUT_S)
    wait_for(lambda: drawn_figures(page) >= 1, 60, "the components of Fig. 3")
    assert page.get_by_text(re.compile(r"k = 40 pixels per component, d = 3")).count() >= 1
    assert_meaningful(page)
    screenshot(page, "researcher_2_fig3_cbcl")
