"""Shipped figures (ui/figures/ship.py) and their JSON made once per server (issue 41 item 1):
the text Streamlit sends for a shipped figure is the text it would have made itself, encoded once;
anything else is encoded by plotly as before."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import plotly.io
import plotly.io.json as plotly_json
import pytest

from ui import streamlit_runtime as sr
from ui.figures.ship import Shipped, prebuilt_json, ship


def _figure(seed: int = 0) -> go.Figure:
    rng = np.random.default_rng(seed)
    fig = go.Figure(go.Scatter(x=rng.random(20), y=[1.0, float("nan")] * 10, name="φ"))
    fig.update_layout(title="a title", sliders=[dict(steps=[dict(label="1", method="animate", args=[["f1"]])])])
    fig.frames = [go.Frame(data=[go.Scatter(y=rng.random(20))], name=f"f{i}") for i in range(3)]
    return fig


@pytest.fixture
def prebuilt(monkeypatch):
    """The wrapper installed for the test only (plotly.io.to_json put back afterwards)."""
    monkeypatch.setattr(plotly.io, "to_json", plotly_json.to_json)
    monkeypatch.setattr(sr, "_prebuilt", [])
    assert sr.send_shipped_figures_prebuilt() and sr.send_shipped_figures_prebuilt()
    assert plotly.io.to_json.__wrapped__ is plotly_json.to_json  # once, not wrapped twice


def test_a_shipped_figures_json_is_the_text_plotly_makes_for_the_figure():
    fig = _figure()
    shipped = ship(fig)
    assert ship(shipped) is shipped and isinstance(shipped, go.Figure)
    expected = plotly_json.to_json(_figure().to_dict(), validate=False)  # an independent build
    assert shipped.json == expected and shipped.json is shipped.json  # made once
    assert prebuilt_json(shipped.spec) is shipped.json


def test_only_the_very_dict_of_a_shipped_figure_has_prebuilt_json():
    shipped = Shipped(_figure())
    assert prebuilt_json(dict(shipped.spec)) is None  # equal, not the same
    assert prebuilt_json(_figure().to_dict()) is None
    for other in (None, "text", [shipped.spec], shipped):
        assert prebuilt_json(other) is None


def test_the_wrapper_answers_shipped_figures_with_their_text_and_encodes_the_rest(prebuilt):
    shipped = ship(_figure(1))
    assert plotly.io.to_json(shipped.to_dict(), validate=False) is shipped.json
    plain = _figure(2)
    assert plotly.io.to_json(plain, validate=False) == plotly_json.to_json(_figure(2), validate=False)
    # anything but plotly's defaults: plotly makes it, as asked
    assert plotly.io.to_json(shipped.to_dict(), pretty=True) == plotly_json.to_json(shipped.spec, pretty=True)
    assert plotly.io.to_json(shipped.to_dict(), remove_uids=False) is not shipped.json


def _page():
    import numpy as np
    import plotly.graph_objects as go
    import streamlit as st

    from ui.figures.ship import ship

    rng = np.random.default_rng(3)
    fig = go.Figure(go.Scatter(x=rng.random(20), y=rng.random(20)))
    fig.frames = [go.Frame(data=[go.Scatter(y=rng.random(20))], name=f"f{i}") for i in range(3)]
    st.plotly_chart(ship(fig), theme=None, key="shipped")
    st.plotly_chart(go.Figure(fig), theme=None, key="plain")


def test_streamlit_sends_a_shipped_figure_as_the_text_it_makes_for_the_plain_one(prebuilt):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_page).run()
    assert not at.exception
    shipped, plain = (el.proto.spec for el in at.get("plotly_chart"))
    assert shipped == plain and '"frames"' in shipped


def test_a_moved_plotly_call_is_reported_and_figures_are_encoded_per_run(monkeypatch, caplog):
    import inspect

    monkeypatch.setattr(inspect, "getsource", lambda obj: "")  # as if plotly_chart changed its call
    monkeypatch.setattr(sr, "_prebuilt", [])
    monkeypatch.setattr(sr, "_warned", set())
    monkeypatch.setattr(plotly.io, "to_json", plotly_json.to_json)
    assert any(p.startswith("plotly_spec:") for p in sr.problems())
    with caplog.at_level("WARNING", logger="nspca.streamlit_runtime"):
        assert sr.send_shipped_figures_prebuilt() is False
    assert plotly.io.to_json is plotly_json.to_json
    assert any("JSON made once per server" in r.getMessage() for r in caplog.records)
