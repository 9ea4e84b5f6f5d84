"""The benchmarks' Streamlit protocol client (``benchmarks/st_client.py``, issue 41 item 2) against a real
server started here: it gets the page's first figure, and it gets what a browser gets (the same page
script runs — the same elements in the same order — and the same figure arrives).

Waits poll for state (the client's messages), never a wall-clock assertion."""

from __future__ import annotations

import asyncio
import json
import os

import pytest

from benchmarks.st_client import Client, figure_has_data, open_page
from tests.app_shell.test_browser import CHROMIUM_ARGS, SHOTS, _chromium, _start_server, _stop_server

PAGE = "spannogram_d2"  # a teaching page: one figure on the default dataset, drawn at once
CAP_S = 240.0


@pytest.fixture(scope="module")
def server_url(monkeypatch_module):
    if os.environ.get("NSPCA_TEST_PORT"):  # a port of one's own on a shared machine
        import tests.app_shell.test_browser as browser

        monkeypatch_module.setattr(browser, "_free_port", lambda: int(os.environ["NSPCA_TEST_PORT"]))
    proc, url = _start_server(SHOTS.parent / "streamlit_protocol_client.log")
    try:
        yield url
    finally:
        _stop_server(proc)


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


def test_figure_has_data_reads_lists_and_typed_arrays():
    assert figure_has_data({"data": [{"type": "scatter", "x": [1, 2], "y": [3, 4]}]})
    assert figure_has_data(json.dumps({"data": [{"type": "heatmap", "z": {"dtype": "f8", "bdata": "AAAA"}}]}))
    assert not figure_has_data({"data": [{"type": "scatter", "x": [], "y": []}]})
    assert not figure_has_data({"data": [], "layout": {"title": {"text": "empty"}}})


def test_open_page_gets_a_figure_from_a_real_server(server_url):
    seconds = asyncio.run(open_page(server_url, PAGE, timeout=CAP_S))
    assert seconds is not None, f"no figure with data from {PAGE} within {CAP_S} s"


def _elements(frames) -> tuple[list[str], list[str]]:
    """The kinds of the new elements of a page's run, in order, and the specs of its figures with data,
    from the ForwardMsg frames one session received."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    kinds, specs = [], []
    for data in frames:
        msg = ForwardMsg()
        msg.ParseFromString(data)
        if msg.WhichOneof("type") != "delta" or msg.delta.WhichOneof("type") != "new_element":
            continue
        el = msg.delta.new_element
        kind = el.WhichOneof("type")
        kinds.append(kind)
        if kind == "plotly_chart" and figure_has_data(el.plotly_chart.spec):
            specs.append(el.plotly_chart.spec)
    return kinds, specs


@pytest.mark.browser
def test_the_client_gets_what_a_browser_gets(server_url):
    if _chromium() is None:
        pytest.skip("no Chromium executable found (make browser)")

    async def both():
        from playwright.async_api import async_playwright

        frames: list[bytes] = []
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=_chromium(), headless=True, args=CHROMIUM_ARGS)
            try:
                page = await browser.new_page(viewport={"width": 1400, "height": 1000})
                page.on("websocket", lambda ws: ws.on(
                    "framereceived", lambda payload: frames.append(payload) if isinstance(payload, bytes) else None))
                await page.goto(f"{server_url}/{PAGE}", wait_until="domcontentloaded", timeout=int(CAP_S * 1000))
                for _ in range(int(CAP_S / 0.25)):  # poll: until the browser's session received a figure
                    if _elements(frames)[1]:
                        break
                    await asyncio.sleep(0.25)
                await page.locator(".js-plotly-plot").first.wait_for(timeout=int(CAP_S * 1000))
                await page.screenshot(path=str(SHOTS / f"protocol_client_{PAGE}_browser.png"))
            finally:
                await browser.close()
        received: list[bytes] = []
        async with Client(server_url) as c:
            original = c._handle

            def keep(msg):
                received.append(msg.SerializeToString())
                original(msg)

            c._handle = keep
            seconds = await c.open(PAGE, timeout=CAP_S)
            for _ in range(int(CAP_S / 0.25)):  # poll: until the run that drew the figure has finished
                if c.finished:
                    break
                await asyncio.sleep(0.25)
        return frames, received, seconds

    SHOTS.mkdir(parents=True, exist_ok=True)
    frames, received, seconds = asyncio.run(both())
    assert seconds is not None
    browser_kinds, browser_specs = _elements(frames)
    client_kinds, client_specs = _elements(received)
    assert browser_specs and client_specs
    assert client_specs[0] == browser_specs[0], "the first figure differs between the browser and the client"
    n = min(len(browser_kinds), len(client_kinds))  # the same page script ran: the same elements in order
    assert n > 3 and browser_kinds[:n] == client_kinds[:n]


def test_the_client_uploads_a_file_and_presses_a_button(server_url, tmp_path):
    """The upload as a browser sends it (an address asked for, the file sent with the XSRF cookie, the uploader's
    new state), then "Analyse": the sidebar offers the upload as the dataset."""
    rng = __import__("numpy").random.default_rng(0)
    rows = "\n".join(",".join(f"{v:.3f}" for v in rng.random(6)) for _ in range(12))
    data = ("a,b,c,d,e,f\n" + rows + "\n").encode()

    async def go():
        async with Client(server_url) as c:
            await c.open("your_data", timeout=CAP_S, figure=False)
            await c.ran(timeout=CAP_S)
            assert await c.upload("Upload a data file", "small.csv", data, timeout=CAP_S)
            assert await c.click("Analyse this data on every page", timeout=CAP_S)
            return list(c.widgets["Dataset"].options), c.exceptions

    options, exceptions = asyncio.run(go())
    assert not exceptions
    assert any("small.csv" in o for o in options), options
