"""Shared fixtures: the local copies of the papers' datasets (skip cleanly when absent); for the app's
tests (tests/ui/, tests/pages/, tests/app_shell/), one headless Chromium per test module and no background
work left running after a test."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True, scope="session")
def _one_blas_thread():
    """Two test workers share two cores: keep BLAS single-threaded (as `make test` does)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        yield
        return
    with threadpool_limits(1):
        yield


def page_app(name: str, *, timeout: float, **session):
    """``AppTest`` of ``pages/<name>`` with the given session-state values set."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "pages" / name), default_timeout=timeout)
    for key, value in session.items():
        at.session_state[key] = value
    return at


def app_pages() -> dict[str, list[tuple[str, str, str]]]:
    """app.py's ``PAGES`` (section -> [(file, title, icon)]), read without running the app."""
    import ast

    tree = ast.parse((ROOT / "app.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "PAGES" for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError("app.py has no PAGES table")


def data_dir() -> Path:
    return Path(os.environ.get("NSPCA_DATA_DIR", ROOT.parent / "shared" / "datasets"))


def _npz(name: str):
    path = data_dir() / name
    if not path.exists():
        pytest.skip(f"{name} not found in NSPCA_DATA_DIR={data_dir()} (local dataset copies absent)")
    return np.load(path, allow_pickle=False)


@pytest.fixture(scope="session")
def cbcl_X():
    """CBCL faces as a centered 2429 x 361 float matrix."""
    X = _npz("cbcl_faces_train.npz")["images"].reshape(-1, 361).astype(float)
    return X - X.mean(axis=0)


@pytest.fixture(scope="session")
def lrs_X():
    X = _npz("lrs_spectrometer.npz")["X"].astype(float)
    return X - X.mean(axis=0)


@pytest.fixture(scope="session")
def mll_X():
    X = _npz("mll_leukemia.npz")["X"].astype(float)
    return X - X.mean(axis=0)


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium driven by Playwright; the test skips with the install command when absent."""
    from tests.app_shell.test_browser import CHROMIUM_ARGS, _chromium

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
    """Stop the band's background tightening an app test left running (it may go on for minutes;
    ``jobs.REGISTRY.wait`` does not wait for it), so that it does not load the tests after.  Only where
    the test process has loaded the app's job registry: the core's tests never import it."""
    yield
    jobs = sys.modules.get("ui.jobs")
    if jobs is not None:
        jobs.REGISTRY.stop_background()
