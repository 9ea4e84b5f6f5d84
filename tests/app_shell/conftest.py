"""Fixtures shared by the app's browser tests: one headless Chromium per test module."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium driven by Playwright; the test skips with the install command when absent."""
    from tests.app.test_browser import CHROMIUM_ARGS, _chromium

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


@pytest.fixture(autouse=True)
def _no_background_work_left():
    """Stop the band's background tightening a page test left running (it may go on for minutes;
    ``jobs.REGISTRY.wait`` does not wait for it), so that it does not load the tests after."""
    yield
    from ui import jobs

    jobs.REGISTRY.stop_background()
