"""Real-browser pass: start the app, visit every page in headless Chromium, screenshot each.

Skipped (with the reason) only when no Chromium executable is found; ``make test``
installs Debian's ``chromium`` first (Makefile target ``browser``).
Screenshots go to ``test-artifacts/screenshots/<page>.png``.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / "test-artifacts" / "screenshots"
# page file -> URL path (st.Page's default: the file name without .py; the default page is "/")
PAGES = ["home", "spannogram_d2", "spannogram_d3", "feasible_arc", "variance_vs_k",
         "components_images", "compare", "your_data", "several_components", "nonneg_scores"]
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PAGE_TIMEOUT_S = 240

pytestmark = pytest.mark.browser


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def app_url():
    port = _free_port()
    env = dict(os.environ)
    env.setdefault("NSPCA_DATA_DIR", str(ROOT.parent / "shared" / "datasets"))
    SHOTS.mkdir(parents=True, exist_ok=True)
    log = open(SHOTS.parent / "streamlit.log", "w")  # the server's output, for debugging
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
         "--server.headless", "true", "--server.port", str(port), "--server.address", "127.0.0.1",
         "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"streamlit did not start (exit code {proc.poll()})")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="module")
def browser():
    exe = _chromium()
    if exe is None:
        pytest.skip("no Chromium found (shutil.which('chromium') and /usr/bin/chromium); "
                    "`make test` installs Debian's chromium — run `apt-get install -y chromium`")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


def _wait_idle(page, timeout_s: float) -> None:
    """Wait until the script run is over: the app is rendered and no 'Running…' status shows."""
    page.wait_for_selector('[data-testid="stApp"]', timeout=timeout_s * 1000)
    page.wait_for_selector('[data-testid="stMainBlockContainer"] h1', timeout=timeout_s * 1000)
    deadline = time.monotonic() + timeout_s
    quiet = 0
    while time.monotonic() < deadline:
        running = page.locator('[data-testid="stStatusWidget"]').count() > 0
        quiet = 0 if running else quiet + 1
        if quiet >= 4:  # idle for ~2 s in a row
            return
        time.sleep(0.5)
    raise AssertionError(f"page still running after {timeout_s} s")


def _wait_drawn(page, timeout_s: float) -> None:
    """Wait until every chart is drawn and no loading skeleton is left (after a resize)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        charts = page.locator('[data-testid="stPlotlyChart"]').count()
        drawn = page.locator('[data-testid="stPlotlyChart"] .main-svg').count()
        skeletons = page.locator('[data-testid="stSkeleton"]').count()
        if skeletons == 0 and (charts == 0 or drawn >= charts):
            time.sleep(1.0)  # let the last transitions settle
            return
        time.sleep(0.5)


@pytest.mark.parametrize("name", PAGES)
def test_page_in_browser(name, app_url, browser):
    if not (ROOT / "pages" / f"{name}.py").is_file():
        pytest.skip(f"pages/{name}.py not present")
    SHOTS.mkdir(parents=True, exist_ok=True)
    ctx = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = ctx.new_page()
    try:
        page.goto(app_url + ("/" if name == "home" else f"/{name}"), wait_until="domcontentloaded",
                  timeout=60_000)
        _wait_idle(page, PAGE_TIMEOUT_S)
        # Streamlit scrolls inside its main container: grow the viewport to the content's
        # height so the screenshot shows the whole page
        height = page.evaluate(
            "() => Math.max(...[...document.querySelectorAll('[data-testid=\"stMain\"], "
            "[data-testid=\"stMainBlockContainer\"]')].map(e => e.scrollHeight), 1000)")
        page.set_viewport_size({"width": 1440, "height": min(int(height) + 80, 9000)})
        _wait_drawn(page, 60)
        page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
        errors = page.locator('[data-testid="stException"]')
        assert errors.count() == 0, errors.first.inner_text()[:2000]
        assert page.locator('[data-testid="stMainBlockContainer"] h1').first.inner_text().strip()
    finally:
        ctx.close()


def test_sidebar_choice_survives_page_switch(app_url, browser):
    """Set k in the shared sidebar, move to another page through the navigation: k stays."""
    if not (ROOT / "pages" / "spannogram_d2.py").is_file():
        pytest.skip("pages/spannogram_d2.py not present")
    ctx = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = ctx.new_page()
    try:
        page.goto(app_url + "/", wait_until="domcontentloaded", timeout=60_000)
        _wait_idle(page, PAGE_TIMEOUT_S)
        box = page.get_by_role("spinbutton", name="k — nonzeros allowed")
        box.fill("7")
        box.press("Enter")
        _wait_idle(page, PAGE_TIMEOUT_S)
        page.get_by_role("link", name="Spannogram, d = 2").first.click()
        page.wait_for_url("**/spannogram_d2", timeout=60_000)
        _wait_idle(page, PAGE_TIMEOUT_S)
        assert page.get_by_role("spinbutton", name="k — nonzeros allowed").input_value() == "7"
        assert page.locator('[data-testid="stException"]').count() == 0
    finally:
        ctx.close()
