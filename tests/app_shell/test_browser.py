"""Real-browser pass: start the app, visit every page in headless Chromium, screenshot each.

* Every page of app.py's PAGES at 1400 and 800 px wide: no Streamlit exception, a title, no
  figure squeezed under 200 px, no "Deploy" button, and at 800 px the sidebar collapsed.
  Screenshots go to ``test-artifacts/screenshots/<page>_<width>.png``.
* Runaway work (issue 21, item 1): "Variance vs k" on MLL shows curves while the certificates
  compute; closing the tab cancels the work (the job log says so and the server's CPU time stops
  growing), the peak memory of the server and its worker processes stays under the 2 GB budget
  (written to ``test-artifacts/memory_mll.txt``), a second visit resumes with what was done,
  and SIGTERM ends the server within seconds.

Skipped (with the reason) only when no Chromium executable is found; ``make test`` installs
Debian's ``chromium`` first (Makefile target ``browser``).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "test-artifacts" / "screenshots"
WIDTHS = (1400, 800)  # a desktop and a narrow screen (issue 21, item 4)


def _pages() -> list[str]:
    """Page names (file name without .py) in app.py's PAGES, so a new page is screenshotted too."""
    from tests.conftest import app_pages

    return [Path(path).stem for entries in app_pages().values() for path, *_ in entries]


# page file -> URL path (st.Page's default: the file name without .py; the default page is "/")
PAGES = _pages()
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


def server_fixture(log_dir: Path):
    """A module-scoped pytest fixture: the URL of the project's own Streamlit server (its log in
    ``log_dir``), stopped after the module's tests.  ``app_url = server_fixture(SHOTS)``."""
    @pytest.fixture(scope="module")
    def app_url():
        proc, url = _start_server(log_dir / "streamlit.log")
        try:
            yield url
        finally:
            _stop_server(proc)

    return app_url


def _start_server(log_path: Path, **extra_env):
    """Start ``streamlit run app.py`` on a free port; return (process, url) once healthy."""
    port = _free_port()
    env = dict(os.environ)
    env.setdefault("NSPCA_DATA_DIR", str(ROOT.parent / "shared" / "datasets"))
    env.update(extra_env)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log = open(log_path, "w")  # the server's output, for debugging
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
         "--server.headless", "true", "--server.port", str(port), "--server.address", "127.0.0.1",
         "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    proc.log_file = log
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return proc, url
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            _stop_server(proc)
            pytest.fail(f"streamlit did not start (exit code {proc.poll()})")
        time.sleep(0.5)


def _stop_server(proc) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    proc.log_file.close()


@pytest.fixture(scope="module")
def app_url():
    SHOTS.mkdir(parents=True, exist_ok=True)
    proc, url = _start_server(SHOTS.parent / "streamlit.log")
    try:
        yield url
    finally:
        _stop_server(proc)


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


# Inside every drawn Plotly figure, the pieces that must not sit on each other (issue 21,
# items 4 and 5): the title on the plotting area, play/pause buttons on the plot, on the scrub
# slider or on the legend, the legend on the plot or on the axis titles and tick labels,
# a colour bar on a plot, two subplot titles on each other.
OVERLAPS_JS = """
() => {
  const box = e => { const r = e.getBoundingClientRect();
                     return {x0: r.left, y0: r.top, x1: r.right, y1: r.bottom}; };
  const depth = (a, b) => Math.min(Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0),
                                    Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0));
  const cut = (a, b, tol) => depth(a, b) > tol;
  const all = (root, sel) => [...root.querySelectorAll(sel)]
                               .filter(e => e.tagName !== 'text' || e.textContent.trim())
                               .map(box).filter(b => b.x1 > b.x0 && b.y1 > b.y0);
  const out = [];
  document.querySelectorAll('[data-testid="stPlotlyChart"]').forEach((chart, n) => {
    if (chart.offsetParent === null) return;  // in a hidden tab
    const t = chart.querySelector('.g-gtitle .gtitle');
    const name = (t ? t.textContent : 'figure ' + n).slice(0, 50);
    const parts = {
      'title': all(chart, '.g-gtitle .gtitle'),
      'plot': all(chart, '.nsewdrag'),
      'button': all(chart, '.updatemenu-button'),
      'slider': all(chart, '.slider-label, .slider-rail-rect, .slider-current-value'),
      'legend': all(chart, '.legend .bg'),
      'axis title': all(chart, '.g-xtitle, .g-x2title, .g-x3title, .g-x4title, .g-ytitle'),
      'tick label': all(chart, '.xtick text'),
      'colour bar': all(chart, '.colorbar .cbfills'),
      'subplot title': all(chart, 'text.annotation-text'),
      'toolbar': all(chart, '.modebar'),
    };
    // (tolerance in px: a legend's frame may graze the axis title above it)
    const pairs = [['title', 'plot', 2], ['button', 'plot', 2], ['button', 'slider', 2],
                   ['button', 'legend', 2], ['legend', 'plot', 2], ['legend', 'axis title', 4],
                   ['legend', 'tick label', 4], ['colour bar', 'plot', 2],
                   ['subplot title', 'subplot title', 2], ['toolbar', 'title', 2]];
    for (const [a, b, tol] of pairs) {
      parts[a].forEach((p, i) => parts[b].forEach((q, j) => {
        if ((a !== b || i < j) && cut(p, q, tol))
          out.push(`${name}: ${a} on ${b} (${Math.round(depth(p, q))} px)`);
      }));
    }
  });
  return [...new Set(out)];
}
"""


# Overlaps found on pages whose figures another engineer owns, reported to them; the test
# turns back into a plain pass as soon as they are gone.
KNOWN_OVERLAPS: dict = {}  # (page, width) -> why an overlap is accepted; none today


def _overlaps(page) -> list[str]:
    return page.evaluate(OVERLAPS_JS)


def _settled_overlaps(page, timeout_s: float = 20.0) -> list[str]:
    """:func:`_overlaps`, polled until none is left or ``timeout_s`` passes (the last found).  A page whose work
    goes on (the band tightening in the background) reruns and redraws its figures; measured during a redraw's
    layout, a legend stood 19 px on its axis title once on a loaded machine (variance_vs_k at 800 px) and was
    clear a poll later.  An overlap that stays fails as before."""
    deadline = time.monotonic() + timeout_s
    while (found := _overlaps(page)) and time.monotonic() < deadline:
        time.sleep(0.5)
    return found


# Button labels cut short by a narrow column ("❚❚ pause" shown as "❚❚ …")
TRUNCATED_JS = """
() => [...document.querySelectorAll('[data-testid="stButton"] button, '
                                    + '[data-testid="stDownloadButton"] button')]
  .filter(b => b.offsetParent !== null)
  .filter(b => [...b.querySelectorAll('[data-testid="stMarkdownContainer"], p')]
                .some(e => e.scrollWidth > e.clientWidth + 1))
  .map(b => b.innerText)
"""


def _truncated_buttons(page) -> list[str]:
    return page.evaluate(TRUNCATED_JS)


# Control labels and chips cut short (issue 27 item 6: "TPo…" on Variance vs k at 1400 px,
# "deflation: proj…" on Several components at 800 px): a label, a multiselect's row of chips
# (it scrolled sideways under a fade) or one chip wider than its box, or a chip past its box's edge
CUT_LABELS_JS = """
() => {
  const vis = e => e.offsetParent !== null && e.getBoundingClientRect().width > 0;
  const cut = e => e.scrollWidth > e.clientWidth + 1;
  const out = [];
  const sel = ['[data-testid="stWidgetLabel"] [data-testid="stMarkdownContainer"]',
               '[data-testid="stMultiSelectTagsContainer"]', '[data-testid="stMultiSelectTagsContainer"] [data-tag]',
               '[data-testid="stMultiSelectTagsContainer"] [data-tag] > span',
               '[data-testid="stRadio"] label [data-testid="stMarkdownContainer"]',
               '[data-testid="stCheckbox"] label [data-testid="stMarkdownContainer"]',
               '[data-baseweb="tab"] [data-testid="stMarkdownContainer"]',
               '[data-testid="stMetricLabel"] [data-testid="stMarkdownContainer"]'];
  for (const s of sel)
    document.querySelectorAll(s).forEach(e => { if (vis(e) && cut(e)) out.push(e.textContent.slice(0, 60)); });
  document.querySelectorAll('[data-testid="stMultiSelectTagsContainer"]').forEach(box => {
    if (!vis(box)) return;
    const r = box.getBoundingClientRect();
    box.querySelectorAll('[data-tag]').forEach(t => {
      const q = t.getBoundingClientRect();
      if (q.right > r.right + 1 || q.bottom > r.bottom + 1) out.push('chip outside its box: ' + t.textContent);
    });
  });
  return [...new Set(out)];
}
"""


def _cut_labels(page) -> list[str]:
    return page.evaluate(CUT_LABELS_JS)


# Formulas cut at the right edge (the tour's OPT formula at 800 px, issue 21 item 4)
CUT_FORMULAS_JS = """
() => [...document.querySelectorAll('[data-testid="stMainBlockContainer"] .katex-display, '
                                    + '[data-testid="stMainBlockContainer"] .katex')]
  .filter(e => e.offsetParent !== null)
  .filter(e => e.scrollWidth > e.clientWidth + 1
               || e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
  .map(e => e.textContent.slice(0, 40))
"""


def _cut_formulas(page) -> list[str]:
    return page.evaluate(CUT_FORMULAS_JS)


def _url(app_url: str, name: str) -> str:
    return app_url + ("/" if name == PAGES[0] else f"/{name}")


@pytest.fixture(scope="module")
def warm_app(app_url, browser):
    """Open the entry page once (warms the caches).  A deep link as a fresh server's first visit
    is tested on a server of its own (test_browser_frames.py, issue 27 item 9)."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    try:
        page.goto(app_url + "/", wait_until="domcontentloaded", timeout=60_000)
        _wait_idle(page, PAGE_TIMEOUT_S)
    finally:
        ctx.close()
    return app_url


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", PAGES)
def test_page_in_browser(name, width, warm_app, browser):
    app_url = warm_app
    if not (ROOT / "pages" / f"{name}.py").is_file():
        pytest.skip(f"pages/{name}.py not present")
    SHOTS.mkdir(parents=True, exist_ok=True)
    ctx = browser.new_context(viewport={"width": width, "height": 1000})
    page = ctx.new_page()
    try:
        page.goto(_url(app_url, name), wait_until="domcontentloaded", timeout=60_000)
        _wait_idle(page, PAGE_TIMEOUT_S)
        if width < 1000:  # narrow screen: the sidebar starts collapsed, content uses the width
            _wait_for(lambda: page.locator('[data-testid="stSidebar"][data-collapsed="false"]').count() == 0,
                      15, "the sidebar to collapse on a narrow screen")
        # Streamlit scrolls inside its main container: grow the viewport to the content's
        # height so the screenshot shows the whole page
        height = page.evaluate(
            "() => Math.max(...[...document.querySelectorAll('[data-testid=\"stMain\"], "
            "[data-testid=\"stMainBlockContainer\"]')].map(e => e.scrollHeight), 1000)")
        page.set_viewport_size({"width": width, "height": min(int(height) + 80, 12000)})
        _wait_drawn(page, 60)
        page.screenshot(path=str(SHOTS / f"{name}_{width}.png"), full_page=True)
        errors = page.locator('[data-testid="stException"]')
        assert errors.count() == 0, errors.first.inner_text()[:2000]
        assert page.locator('[data-testid="stMainBlockContainer"] h1').first.inner_text().strip()
        # no figure squeezed flat (the narrow spannogram was ~60 px high)
        heights = page.evaluate("() => [...document.querySelectorAll('[data-testid=\"stPlotlyChart\"]')]"
                                ".filter(e => e.offsetParent !== null).map(e => e.getBoundingClientRect().height)")
        assert all(h >= 200 for h in heights), heights
        assert not _truncated_buttons(page)
        assert not _cut_labels(page), _cut_labels(page)
        assert not _cut_formulas(page)
        # no developer menu or Deploy button for the audience (client.toolbarMode = "viewer")
        assert page.locator('[data-testid="stAppDeployButton"]').count() == 0
        overlaps = _settled_overlaps(page)
        if overlaps and (name, width) in KNOWN_OVERLAPS:
            pytest.xfail(KNOWN_OVERLAPS[name, width] + f": {overlaps}")
        assert not overlaps, overlaps
    finally:
        ctx.close()


def _open(browser, url: str, name: str, width: int = 1400, **context):
    """A new tab on page ``name``, idle and drawn; returns (context, page)."""
    ctx = browser.new_context(viewport={"width": width, "height": 1000}, **context)
    page = ctx.new_page()
    page.goto(_url(url, name), wait_until="domcontentloaded", timeout=60_000)
    _wait_idle(page, PAGE_TIMEOUT_S)
    _wait_drawn(page, 60)
    return ctx, page


def _figure_title(chart) -> str:
    return chart.locator(".g-gtitle .gtitle").first.text_content()


@pytest.mark.parametrize("name,button", [("spannogram_d2", "▶ play"), ("spannogram_d3", "▶ sweep φ₂"),
                                         ("feasible_arc", "▶ play")])
def test_animation_text_follows_every_frame(name, button, warm_app, browser):
    """Issue 21 item 3: while ▶ swept φ the subtitle and the φ text stayed at the first frame."""
    if not (ROOT / "pages" / f"{name}.py").is_file():
        pytest.skip(f"pages/{name}.py not present")
    ctx, page = _open(browser, warm_app, name)
    try:
        chart = page.locator('[data-testid="stPlotlyChart"]').first
        before = (_figure_title(chart), chart.locator(".slider-group > .slider-label").first.text_content())
        chart.locator(".updatemenu-button", has_text=button).click()
        seen = {before}
        for _ in range(12):  # the frames change the title and the slider's value as they play
            time.sleep(0.5)
            seen.add((_figure_title(chart), chart.locator(".slider-group > .slider-label").first.text_content()))
        chart.locator(".updatemenu-button", has_text="pause").click()
        page.screenshot(path=str(SHOTS / f"{name}_playing_1400.png"))
        titles, values = {t for t, _ in seen}, {v for _, v in seen}
        assert len(titles) >= 3 and len(values) >= 3, seen
        assert page.locator('[data-testid="stException"]').count() == 0
    finally:
        ctx.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_d3_surfaces_tab(width, warm_app, browser):
    """The 3D tab (hidden at first, so not measured by the page pass): drawn, tall enough, every
    chosen row in the legend; screenshot for a look (issue 21 item 5: row 0 was invisible)."""
    if not (ROOT / "pages" / "spannogram_d3.py").is_file():
        pytest.skip("pages/spannogram_d3.py not present")
    ctx, page = _open(browser, warm_app, "spannogram_d3", width=width)
    try:
        page.get_by_role("tab", name="Surfaces in 3D").click()
        chart = page.locator('[data-testid="stPlotlyChart"]').nth(1)
        _wait_for(lambda: chart.locator(".gl-container canvas, canvas").count() > 0, 60, "the 3D scene")
        chart.scroll_into_view_if_needed()
        time.sleep(2.0)
        assert chart.bounding_box()["height"] >= 400
        legend = chart.locator(".legend").text_content()
        assert all(f"row {i}" in legend for i in range(3)), legend
        chart.screenshot(path=str(SHOTS / f"spannogram_d3_surfaces_{width}.png"))
        assert page.locator('[data-testid="stException"]').count() == 0
    finally:
        ctx.close()


def test_lecture_mode_steps_and_the_figure_goes_full_screen(warm_app, browser):
    """Issue 20 (the teacher): step buttons from one support change to the next with the reason,
    a bigger figure, and a full-screen figure; no developer menu (checked on every page above)."""
    if not (ROOT / "pages" / "spannogram_d2.py").is_file():
        pytest.skip("pages/spannogram_d2.py not present")
    ctx, page = _open(browser, warm_app, "spannogram_d2")
    try:
        small = page.locator('[data-testid="stPlotlyChart"]').first.bounding_box()["height"]
        page.get_by_text("Lecture mode").click()
        _wait_idle(page, PAGE_TIMEOUT_S)
        phi = page.locator('[data-testid="stSlider"] input[aria-label^="φ — angle"]')
        phi0 = float(phi.input_value())
        page.get_by_role("button", name="next change ▶").click()
        _wait_idle(page, PAGE_TIMEOUT_S)
        _wait_drawn(page, 60)
        phi1 = float(phi.input_value())
        assert phi1 > phi0
        main = page.locator('[data-testid="stMainBlockContainer"]')
        assert main.get_by_text("Why this support").count() >= 1
        chart = page.locator('[data-testid="stPlotlyChart"]').first
        assert chart.bounding_box()["height"] > small  # a bigger figure for the room
        shown = re.search(r"φ = ([+-][0-9.]+)", _figure_title(chart))  # the figure follows the step
        assert shown and abs(float(shown.group(1)) - phi1) < 0.011, _figure_title(chart)
        page.screenshot(path=str(SHOTS / "spannogram_d2_lecture_1400.png"), full_page=True)
        assert _overlaps(page) == []
        assert not _truncated_buttons(page)  # "◀ previo…" / "next cha…" in a narrow column
        # full screen: the figure's own toolbar button
        chart.hover()
        chart.locator('.modebar-btn[data-title="Fullscreen"]').click()
        _wait_for(lambda: (page.locator('[data-testid="stPlotlyChart"] .main-svg').first
                           .bounding_box() or {"width": 0})["width"] >= 0.9 * 1400,
                  15, "the figure to fill the screen")
        time.sleep(1.0)
        page.screenshot(path=str(SHOTS / "spannogram_d2_fullscreen_1400.png"))
        page.keyboard.press("Escape")
    finally:
        ctx.close()


def test_d3_lecture_mode_in_the_browser(warm_app, browser):
    """d = 3 lecture mode: the step moves the line and the reason is shown; nothing overlaps,
    no button label is cut; screenshot for a look."""
    if not (ROOT / "pages" / "spannogram_d3.py").is_file():
        pytest.skip("pages/spannogram_d3.py not present")
    ctx, page = _open(browser, warm_app, "spannogram_d3")
    try:
        page.get_by_text("Lecture mode").click()
        _wait_idle(page, PAGE_TIMEOUT_S)
        chart = page.locator('[data-testid="stPlotlyChart"]').first
        for _ in range(2):
            page.get_by_role("button", name="next change ▶").click()
            _wait_idle(page, PAGE_TIMEOUT_S)
        _wait_drawn(page, 60)
        assert "φ₂ = -1.54" not in _figure_title(chart)  # the line left the bottom row
        assert page.locator('[data-testid="stMainBlockContainer"]').get_by_text("Why these supports").count() >= 1
        assert _overlaps(page) == [] and not _truncated_buttons(page)
        page.screenshot(path=str(SHOTS / "spannogram_d3_lecture_1400.png"))
    finally:
        ctx.close()


def _background(page) -> float:
    """Mean of the app background's RGB channels (0 black .. 255 white)."""
    bg = page.evaluate("() => getComputedStyle(document.querySelector('[data-testid=\"stApp\"]'))"
                       ".backgroundColor")
    return sum(int(c) for c in bg[bg.index("(") + 1:bg.index(")")].split(",")[:3]) / 3


def test_main_menu_offers_the_theme_and_no_developer_entries(warm_app, browser):
    """Issue 21 item 9 / issue 20: no "Deploy", "Clear cache" or "Rerun" for students; the
    theme switch (light / dark) is there and works."""
    ctx, page = _open(browser, warm_app, "home", width=800)
    try:
        assert _background(page) > 200
        page.locator('[data-testid="stMainMenuButton"]').click()
        menu = page.locator('[data-testid="stMainMenuList"]')
        menu.wait_for(timeout=60_000)
        text = menu.inner_text()
        for word in ("Deploy", "Clear cache", "Rerun", "Settings", "Developer"):
            assert word not in text, text
        page.locator('[data-testid="stMainMenuItem-theme-Dark"]').click()
        _wait_for(lambda: _background(page) < 60, 120, "the dark theme")
    finally:
        ctx.close()


def test_dark_theme_on_a_narrow_screen(warm_app, browser):
    """Issue 20 item 6: a viewer whose system is dark gets the dark theme; the figures stay
    readable (drawn on their own light card), nothing overlaps at 800 px."""
    for name in ("spannogram_d2", "home"):
        ctx, page = _open(browser, warm_app, name, width=800, color_scheme="dark")
        try:
            assert _background(page) < 60  # the dark theme of .streamlit/config.toml
            assert page.locator('[data-testid="stException"]').count() == 0
            heights = page.evaluate("() => [...document.querySelectorAll('[data-testid=\"stPlotlyChart\"]')]"
                                    ".map(e => e.getBoundingClientRect().height)")
            assert heights and all(h >= 200 for h in heights), heights
            assert _overlaps(page) == []
            page.screenshot(path=str(SHOTS / f"dark_{name}_800.png"), full_page=True)
        finally:
            ctx.close()


@pytest.mark.parametrize("typed", ["100000", "0", "-5"])
def test_invalid_k_is_refused_on_screen_and_the_last_k_shown(typed, warm_app, browser):
    """Issue 21 item 7: an invalid k only turned the box red (the app kept the old k) and
    "Press Enter to apply" covered the value."""
    ctx, page = _open(browser, warm_app, "spannogram_d2")
    try:
        box = page.get_by_role("spinbutton", name="k — nonzeros allowed")
        before = box.input_value()
        box.fill(typed)
        hint = page.locator('[data-testid="stSidebar"] [data-testid="InputInstructions"]')
        _wait_for(lambda: hint.count() > 0, 5, "Streamlit's input hint")
        assert not hint.first.is_visible()  # ui/style.py hides it: nothing over the value
        box.press("Enter")
        _wait_idle(page, PAGE_TIMEOUT_S)
        alert = page.locator('[data-testid="stSidebar"] [data-testid="stAlert"]')
        _wait_for(lambda: alert.count() > 0, 120, "the message about k")
        text = alert.first.inner_text()
        assert "k must be a whole number from 1 to 64" in text and f"Keeping k = {before}" in text, text
        _wait_for(lambda: box.input_value() == before, 120, "the box to show the last valid k")
        assert page.locator('[data-testid="stException"]').count() == 0
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


# ------------------------------------------------------------------ runaway work (issue 21, item 1)
def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux /proc), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _status_mb(pid: int, field: str) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    except OSError:  # the process just ended
        pass
    return 0.0


def _tree(pid: int) -> list[int]:
    """pid and all its descendants (Linux /proc)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        for task in Path(f"/proc/{p}/task").glob("*"):
            try:
                todo += [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                pass
    return out


class _MemoryWatch:
    """Peak resident memory of the server and its worker processes, sampled every 0.2 s."""

    def __init__(self, pid: int):
        import threading

        self.pid, self.peak_mb, self._stop = pid, 0.0, threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self):
        while not self._stop.wait(0.2):
            try:
                total = sum(_status_mb(p, "VmRSS") for p in _tree(self.pid))
            except OSError:
                continue
            self.peak_mb = max(self.peak_mb, total, _status_mb(self.pid, "VmHWM"))

    def stop(self) -> float:
        self._stop.set()
        self._thread.join(2)
        return self.peak_mb


def _wait_for(predicate, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        out = predicate()
        if out:
            return out
        time.sleep(0.5)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")


def _choose_dataset(page, text: str) -> None:
    box = page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').first
    box.click()
    page.get_by_role("option", name=text).first.click()


def _open_variance_on_mll(page, url: str) -> None:
    """Open the app at its entry page (a fresh server runs app.py first), choose MLL, go to the page."""
    page.goto(url + "/", wait_until="domcontentloaded", timeout=60_000)
    _wait_idle(page, PAGE_TIMEOUT_S)
    _choose_dataset(page, "MLL leukemia gene expression — local copy")
    _wait_idle(page, PAGE_TIMEOUT_S)
    page.get_by_role("link", name="Variance vs k, certified").first.click()
    page.wait_for_url("**/variance_vs_k", timeout=60_000)


def _stacks(pid: int) -> str:
    """Every thread's Python stack of a live process (py-spy), for a failure message."""
    spy = Path(sys.executable).with_name("py-spy")
    if not spy.exists():
        return "(py-spy not installed)"
    try:
        out = subprocess.run([str(spy), "dump", "--pid", str(pid)], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"(py-spy failed: {exc})"
    return out.stdout + out.stderr


MLL_BUDGET_MB = 2048  # the app's stated memory budget for MLL (ui/jobs.py)


def test_closed_tab_stops_work_and_sigterm_ends_server(browser):
    """Variance vs k on MLL: closing the tab cancels the certificates, memory stays in budget,
    a second visit resumes with what was done, and SIGTERM ends the server promptly."""
    if not (ROOT.parent / "shared" / "datasets" / "mll_leukemia.npz").exists() and \
            not Path(os.environ.get("NSPCA_DATA_DIR", "/nonexistent"), "mll_leukemia.npz").exists():
        pytest.skip("MLL not found locally (NSPCA_DATA_DIR)")
    job_log = SHOTS.parent / "jobs.log"
    job_log.write_text("")
    proc, url = _start_server(SHOTS.parent / "streamlit_lifecycle.log", NSPCA_JOB_LOG=str(job_log),
                              NSPCA_JOB_IDLE_S="10")
    memory = _MemoryWatch(proc.pid)
    try:
        ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = ctx.new_page()
        _open_variance_on_mll(page, url)
        # results first: the curves are drawn while the certificates are still running
        _wait_for(lambda: "Certificates on MLL" in job_log.read_text() and
                  " running " in job_log.read_text(), 120, "the certificate job to start")
        _wait_for(lambda: page.locator('[data-testid="stPlotlyChart"] .main-svg').count() > 0,
                  120, "the first curves")
        assert page.get_by_role("button", name="Stop", exact=True).count() >= 1
        _wait_for(lambda: page.locator("text=certified so far").count() > 0, 240,
                  "the first certified values of k")
        page.screenshot(path=str(SHOTS / "variance_vs_k_mll_partial.png"), full_page=True)
        ctx.close()  # the user closes the tab
        _wait_for(lambda: any("Certificates on MLL" in ln and " cancelled " in ln
                              for ln in job_log.read_text().splitlines()),
                  60, "the unread certificate job to be cancelled")
        time.sleep(2)
        cpu0 = sum(_cpu_seconds(p) for p in _tree(proc.pid))
        time.sleep(5)
        spent = sum(_cpu_seconds(p) for p in _tree(proc.pid)) - cpu0
        assert spent < 1.0, f"the server still computes after the tab closed ({spent:.1f} s CPU in 5 s)"
        peak = memory.peak_mb
        (SHOTS.parent / "memory_mll.txt").write_text(f"peak resident memory, server + workers: "
                                                     f"{peak:.0f} MB (budget {MLL_BUDGET_MB} MB)\n")
        assert peak < MLL_BUDGET_MB, f"peak resident memory {peak:.0f} MB"
        # a second visit resumes: the job restarts on what is missing, what was done is kept
        ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = ctx.new_page()
        _open_variance_on_mll(page, url)
        lines = _wait_for(lambda: [ln for ln in job_log.read_text().splitlines()
                                   if "Certificates on MLL" in ln and " running " in ln][1:],
                          120, "the resumed job")
        done_before = int(lines[0].split("running")[1].split("/")[0])
        assert done_before >= 1, lines
        # SIGTERM while it computes: the server exits by itself (no time asserted: a loaded machine is
        # slow; a server that ignores SIGTERM would wait for the kill below, which fails the test)
        t0 = time.monotonic()
        proc.terminate()
        try:
            proc.wait(timeout=180)
        except subprocess.TimeoutExpired:
            pytest.fail("the server did not end within 180 s of SIGTERM; where its threads were:\n"
                        + _stacks(proc.pid))
        (SHOTS.parent / "sigterm_mll.txt").write_text(f"server ended {time.monotonic() - t0:.1f} s after "
                                                      f"SIGTERM (exit code {proc.returncode})\n")
        ctx.close()
    finally:
        memory.stop()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.log_file.close()
