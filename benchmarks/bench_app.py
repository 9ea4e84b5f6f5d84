"""Benchmark: the app's journeys in a real browser — seconds to first content and to complete, per page.

Starts the app (``streamlit run app.py``), drives headless Chromium through
the analyst's journey on MLL (72 × 12,582, from ``NSPCA_DATA_DIR``) and on a
generated 75 × 7,000 labelled gene matrix uploaded as CSV on "Your data", and
prints for every analysis page:

- **first**: seconds from the click in the navigation to the first meaningful
  content — a figure drawn with data in it, or the page's note when it does
  not apply (images of non-image data);
- **complete**: seconds until the page is done — the script idle and no
  background work left (no Stop button) for 2 s in a row; pages still working
  after ``--cap`` seconds are reported as "> cap" and their work is stopped
  (Stop) before the next page, so one page's leftovers do not slow the next;
- on "Variance vs k": seconds until every selected algorithm's curve has all
  its values of k (no progress line but the band's; each curve's own time in
  brackets when it was still computing at first content), and how many values
  of k the certified band has when the page completes or at the cap (and when
  every k first had a certified bound);
- **revisit**: each page opened a second time, seconds to first content.

"Variance vs k" keeps tightening its band in the background once it is drawn
(issue 28, item 4): that work has its own Stop and does not count as the page's
work — the page is complete when the curves and the band's first pass are.  The
tightening is then watched for ``--watch`` seconds (its status line: how many k
improved, the worst certified ratio before → after, and how long after the page
completed the first k improved) and stopped, so that the next page is measured alone.

Also the upload itself (file chosen -> preview; "Analyse" -> page idle).  The
output is kept in ``benchmarks/results/bench_app.txt``.  Wall-clock seconds of
one run on this machine (2 shared cores), browser included: compare pages and
datasets within one run, not across machines.

Usage: ``python benchmarks/bench_app.py [--cap SECONDS] [--watch SECONDS] [--datasets mll,upload]``.
Each run appends a dated section (with the machine's load average) to the results file.
Needs Chromium (``make browser``) and the test dependencies (playwright).
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("NSPCA_DATA_DIR", str(ROOT.parent / "shared" / "datasets"))

from tests.app_shell.test_browser import CHROMIUM_ARGS, _chromium, _start_server, _stop_server  # noqa: E402
from tests.app_shell.test_browser_journeys import (ANALYSIS, PATHS, choose_dataset, drawn_figures,  # noqa: E402
                                         labelled_csv, open_app)

RESULTS = ROOT / "benchmarks" / "results" / "bench_app.txt"
POLL_S = 0.2
QUIET_S = 2.0


TIGHTEN = '[class*="st-key-vk_tighten_stop"]'  # the band's background tightening: its own Stop


def _running(page) -> bool:
    """The script is running, or the page shows background work (a Stop button; the band's
    background tightening not counted)."""
    if page.locator('[data-testid="stStatusWidget"]').count() > 0:
        return True
    main = page.locator('[data-testid="stMainBlockContainer"]')
    stops = main.get_by_role("button", name="Stop", exact=True).count()
    return stops > page.locator(f"{TIGHTEN} button").count()


TIGHT_RE = re.compile(r"(\d+) of (\d+) k improved, worst ratio ([0-9.]+|nan) → ([0-9.]+|nan)")


def _tightening(page) -> str:
    """The band's tightening status ("12 of 15 k improved, worst ratio 0.617 → 0.802"), "" if none."""
    text = page.locator('[data-testid="stMainBlockContainer"]').inner_text()
    m = TIGHT_RE.search(text)
    return m.group(0) if m else ""


def watch_tightening(page, seconds: float) -> tuple[str, str, bool, float | None]:
    """The tightening's status now and after ``seconds`` (or when it ends), then Stop; whether it ended,
    and the seconds until its status first counted an improved k (0: already at the start; None: none)."""
    start = _tightening(page)
    t0 = time.monotonic()
    ended = False
    first = _first_improved(start, 0.0)
    while time.monotonic() - t0 < seconds:
        if page.locator(f"{TIGHTEN} button").count() == 0 and start:
            ended = True
            break
        time.sleep(1.0)
        first = first if first is not None else _first_improved(_tightening(page), time.monotonic() - t0)
    end = _tightening(page)
    for i in range(page.locator(f"{TIGHTEN} button").count()):
        try:
            page.locator(f"{TIGHTEN} button").nth(i).click(timeout=5_000)
        except Exception:  # noqa: BLE001 - it ended meanwhile
            pass
    time.sleep(2.0)
    first = first if first is not None else _first_improved(end, time.monotonic() - t0)
    return start, end, ended, first


def _first_improved(status: str, now: float) -> float | None:
    """``now`` when the status line counts at least one improved k, else None."""
    m = TIGHT_RE.search(status)
    return now if m and int(m.group(1)) >= 1 else None


def _first_content(page, title: str) -> bool:
    if page.locator('[data-testid="stException"]').count() > 0:
        return True  # an error is content too (reported below)
    if title == "Components as images" and page.get_by_text("is not an image dataset").count() > 0:
        return True
    return drawn_figures(page) > 0


VK = "Variance vs k, certified"
BAND_RE = re.compile(r"at the (\d+) of (\d+) values of k certified so far")


def _curves_pending(page) -> set[str]:
    """The algorithms whose curve still has a progress line (not the certified band's)."""
    texts = page.locator('[data-testid="stMainBlockContainer"] [data-testid="stProgress"]').all_inner_texts()
    return {t.strip().split(":")[0] for t in texts
            if not t.strip().startswith(("Certified band", "Tightening the band"))}


FULL_RE = re.compile(r"The full certificate is done at (\d+) of them")


def _band(page) -> str:
    """``"certified/total"`` values of k from the band's caption ("" when not shown), and
    ``" (full certificate at f)"`` while some of them have only the quick first bound."""
    text = page.locator('[data-testid="stMainBlockContainer"]').inner_text()
    m = BAND_RE.search(text)
    if not m:
        return ""
    full = FULL_RE.search(text)
    return f"{m.group(1)}/{m.group(2)}" + (f" (full certificate at {full.group(1)})" if full else "")


def measure_page(page, title: str, cap: float) -> dict:
    """Open ``title`` from the navigation; seconds to first content and to complete.

    On "Variance vs k" also the seconds until every algorithm's curve has all
    its values of k (``curves``) and how many k the band has (``band``).
    """
    t0 = time.monotonic()
    page.get_by_role("link", name=title).first.click()
    page.wait_for_url(f"**/{PATHS[title]}", timeout=60_000)
    first = complete = curves = full_band = None
    each: dict[str, float | None] = {}  # curve -> seconds until its progress line went away
    quiet_since = None
    while True:
        now = time.monotonic() - t0
        if first is None and _first_content(page, title):
            first = now
        if title == VK and first is not None and curves is None:
            pending = _curves_pending(page)
            for name in pending:
                each.setdefault(name, None)
            for name in [nm for nm, t in each.items() if t is None and nm not in pending]:
                each[name] = now
            if not pending:
                curves = now
        if title == VK and full_band is None and first is not None:
            got = _band(page)
            if got and got.split("/")[0] == got.split("/")[1].split(" ")[0]:
                full_band = now
        if _running(page):
            quiet_since = None
        else:
            quiet_since = now if quiet_since is None else quiet_since
            if first is not None and now - quiet_since >= QUIET_S:
                complete = quiet_since
                break
        if now > cap:
            break
        time.sleep(POLL_S)
    errors = page.locator('[data-testid="stException"]').count()
    band = _band(page) if title == VK else ""
    stopped = False
    if complete is None:  # stop what is left, so the next page is measured alone
        stops = page.locator('[data-testid="stMainBlockContainer"]').get_by_role("button", name="Stop", exact=True)
        for i in range(stops.count()):
            try:
                stops.nth(i).click(timeout=5_000)
                stopped = True
            except Exception:  # noqa: BLE001 - the button went away meanwhile
                pass
        time.sleep(2.0)
    return dict(page=title, first=first, complete=complete, errors=errors, stopped=stopped, curves=curves,
                band=band, each=each, full_band=full_band)


def revisit(page, title: str, cap: float = 30.0) -> float | None:
    """Open ``title`` again (its work done or stopped): seconds to first content."""
    t0 = time.monotonic()
    page.get_by_role("link", name=title).first.click()
    page.wait_for_url(f"**/{PATHS[title]}", timeout=60_000)
    while time.monotonic() - t0 < cap:
        if _first_content(page, title):
            return time.monotonic() - t0
        time.sleep(0.05)
    return None


def upload(page, csv: Path) -> tuple[float, float]:
    """Seconds from choosing the file to the preview, and from "Analyse" to the page idle."""
    page.get_by_role("link", name="Your data").first.click()
    page.wait_for_url("**/your_data", timeout=60_000)
    page.wait_for_selector('[data-testid="stFileUploaderDropzoneInput"]', state="attached",
                           timeout=60_000)
    t0 = time.monotonic()
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(csv))
    button = page.get_by_role("button", name="Analyse this data on every page")
    button.wait_for(timeout=300_000)
    read = time.monotonic() - t0
    while _running(page):
        time.sleep(POLL_S)
    t0 = time.monotonic()
    button.click()
    time.sleep(0.5)
    quiet = None
    while True:
        now = time.monotonic() - t0
        if _running(page):
            quiet = None
        elif quiet is None:
            quiet = now
        elif now - quiet >= QUIET_S:
            return read, quiet
        time.sleep(POLL_S)


def say(out: list[str], line: str) -> None:
    """Print a line now and keep it for the results file."""
    out.append(line)
    print(line, flush=True)


def fmt(x: float | None, cap: float) -> str:
    return f"> {cap:.0f}" if x is None else f"{x:.1f}"


def journey(browser, url: str, dataset: str, csv: Path | None, cap: float, out: list[str],
            watch: float = 60.0) -> None:
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = ctx.new_page()
    try:
        open_app(page, url)
        if dataset == "upload":
            read, analysed = upload(page, csv)
            say(out, f"  upload {csv.name}: preview after {read:.1f} s; "
                       f"'Analyse this data' page idle after {analysed:.1f} s")
        else:
            choose_dataset(page, "MLL leukemia")
            while _running(page):
                time.sleep(POLL_S)
        say(out, f"  {'page':<28} {'first content (s)':>18} {'complete (s)':>14}  notes")
        for title in ANALYSIS:
            r = measure_page(page, title, cap)
            notes = []
            if title == VK:
                notes.append(f"all curves at {fmt(r['curves'], cap)} s"
                             + (" (" + ", ".join(f"{nm} {fmt(t, cap)} s" for nm, t in r["each"].items())
                                + ")" if r["each"] else ""))
                if r["band"]:
                    notes.append(f"band {r['band']} k certified"
                                 + (f", every k at {r['full_band']:.1f} s" if r["full_band"] else ""))
            if r["errors"]:
                notes.append(f"{r['errors']} exception box(es)")
            if r["stopped"]:
                notes.append("background work stopped at the cap")
            say(out, f"  {title:<28} {fmt(r['first'], cap):>18} {fmt(r['complete'], cap):>14}  "
                       + "; ".join(notes))
            if title == VK and watch > 0:
                start, end, ended, first = watch_tightening(page, watch)
                say(out, f"  {'':<28} then the band's background tightening: {start or '(no status)'} at "
                         f"complete; {end or '(no status)'} " + ("when it ended" if ended else
                                                                 f"after {watch:.0f} s more (stopped)")
                         + ("; first k improved " + ("at complete" if first == 0 else f"{first:.0f} s after it")
                            if first is not None else f"; no k improved within {watch:.0f} s"))
        say(out, f"  {'revisit (second visit)':<28} {'first content (s)':>18}")
        for title in ANALYSIS:
            say(out, f"  {title:<28} {fmt(revisit(page, title), 30):>18}")
    finally:
        ctx.close()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cap", type=float, default=180.0,
                    help="seconds after which a page counts as not complete (default 180)")
    ap.add_argument("--watch", type=float, default=60.0,
                    help="seconds to watch the band's background tightening on Variance vs k (default 60)")
    ap.add_argument("--datasets", default="mll,upload",
                    help="comma-separated: mll, upload (default both)")
    args = ap.parse_args(argv)
    exe = _chromium()
    out: list[str] = []
    say(out, "== App journeys in headless Chromium: seconds to first content and to complete, per page")
    say(out, f"   ({datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; cap {args.cap:.0f} s; "
             f"1400 px wide; one server; wall clock on this machine; load average at the start "
             f"{' '.join(f'{v:.2f}' for v in os.getloadavg())})")
    if exe is None:
        say(out, "skipped: no Chromium found (`make browser` installs Debian's chromium)")
        return 0
    from playwright.sync_api import sync_playwright

    wanted = [d.strip() for d in args.datasets.split(",") if d.strip()]
    mll_here = (Path(os.environ["NSPCA_DATA_DIR"]) / "mll_leukemia.npz").exists()
    with tempfile.TemporaryDirectory() as tmp:
        csv = labelled_csv(Path(tmp) / "genes_75x7000.csv")
        proc, url = _start_server(Path(tmp) / "streamlit.log")
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_ARGS)
                try:
                    for dataset in wanted:
                        if dataset == "mll" and not mll_here:
                            say(out, "\nMLL: skipped (mll_leukemia.npz not in NSPCA_DATA_DIR)")
                            continue
                        head = ("MLL leukemia, 72 × 12,582 (sidebar: center, k = 10, d = 2, ε = 0.1)"
                                if dataset == "mll" else
                                "Uploaded CSV, 75 × 7,000 with a class column (3 classes; sidebar "
                                "defaults)")
                        say(out, f"\n{head}")
                        journey(browser, url, dataset, csv, args.cap, out, watch=args.watch)
                finally:
                    browser.close()
        finally:
            _stop_server(proc)
    say(out, f"   (load average at the end {' '.join(f'{v:.2f}' for v in os.getloadavg())})")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    with RESULTS.open("a") as f:  # a dated section per run, after the earlier ones
        f.write("\n" + "\n".join(out) + "\n")
    print(f"\n(kept in {RESULTS.relative_to(ROOT)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
