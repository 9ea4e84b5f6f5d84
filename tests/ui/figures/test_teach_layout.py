"""Layout of the teaching figures in pixels (issue 21, items 4 and 5).

Plotly places titles, sliders, buttons and legends in fractions of the plotting area; a
figure shrunk for the tour or a narrow screen then moves them onto each other.  These tests
convert the positions to pixels and check the room each part needs.  (The browser test
measures the drawn boxes on every page; these run without a browser.)
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import page_app
from ui.figures import teach as T

ROOT = Path(__file__).resolve().parents[3]
os.environ.setdefault("NSPCA_DATA_DIR", str(ROOT.parent / "shared" / "datasets"))
TITLE_LINE_PX = 22   # one more line of title text (a <br>)
SLIDER_PX = 90       # a scrub slider: current value, rail, ticks and their labels
AXIS_PX = 60         # tick labels and the axis title under a plot


def _plot_height(layout: dict) -> float:
    m = layout["margin"]
    return layout["height"] - m["t"] - m["b"]


def test_tour_figures_keep_their_titles_and_legends_off_the_plot():
    """The tour's spannogram title (three lines) ran over the curves with a 50 px top margin; the
    rank-1 and ε-net legends rose onto their axis titles when the figures were shrunk."""
    at = page_app("home.py", timeout=180).run()
    assert not at.exception
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert len(specs) >= 5
    for spec in specs:
        layout = spec["layout"]
        title = layout.get("title", {}).get("text", "") or ""
        lines = title.count("<br>")
        assert layout["margin"]["t"] >= 50 + TITLE_LINE_PX * lines, (title[:40], layout["margin"])
        _title_clears_the_toolbar(layout)
        legend = layout.get("legend", {})
        if layout.get("showlegend") is False or legend.get("orientation") != "h" \
                or legend.get("y", 1) >= 0:
            continue
        below = -legend["y"] * _plot_height(layout)  # px from the plot's bottom to the legend
        assert below >= AXIS_PX, (title[:40], below)
        assert layout["margin"]["b"] >= below + 40, (title[:40], layout["margin"])  # two rows fit


def _title_clears_the_toolbar(layout: dict) -> None:
    """The title starts under the toolbar band and all its lines fit above the plot."""
    title = layout["title"]
    assert title.get("yref") == "container" and title.get("yanchor") == "top" and title["y"] == 1
    size = layout.get("font", {}).get("size", 12)
    lines = title["text"].count("<br>")
    # a title of several lines hangs from the baseline of its first line (measured in Chromium)
    assert title["pad"]["t"] >= T.TOOLBAR_PX + (1.4 * size - 4 if lines else 0) >= 30
    assert layout["margin"]["t"] >= title["pad"]["t"] + 1.5 * size * max(lines, 1) + 8, title["text"][:40]


def test_every_teaching_figure_starts_its_title_under_the_toolbar():
    """Issue 21 item 5: the d = 3 title sat under the figure's toolbar (and long titles of the
    tour's narrow column did too)."""
    phis, vals = _curves()
    labels = np.array([[0, 0, 1], [1, 2, 2]])
    Q, R = np.array([[2.0, 0.3], [0.3, 1.0]]), np.array([[1.0, 0.2], [0.1, 1.0]])
    figures = [
        T.spannogram_d2(phis, vals, 3), T.spannogram_d2(phis, vals, 3, frames=10),
        T.spannogram_d2(phis, vals, 3, frames=10, lecture=True),
        T.spannogram_d3_cells(np.linspace(-1, 1, 3), np.linspace(-1, 1, 2), labels,
                              [(0, 1), (1, 2), (0, 2)], [1.0, 2.0, 3.0], frames=2),
        T.spannogram_d3_surfaces(phis[:5], phis[:4], np.zeros((2, 4, 5))),
        T.rank1_bars(vals[:, 0], 3), T.feasible_arc(Q, R), T.objective_on_circle(Q, R),
        T.enet_circle(phis[:9], vals[0, :9], 1.0), T.certificate_bar(1.0, 1.2, 1.5),
        T.candidate_count([4, 5], [3, 4], [10, 20]), T.sphere_pd3(np.eye(3), np.eye(3)[:2]),
        T.loading_images([np.ones(4), np.ones(4)], ["a", "b"], image_shape=(2, 2), main_title="x"),
    ]
    for f in figures:
        _title_clears_the_toolbar(f.to_plotly_json()["layout"])


def test_below_toolbar_and_legend_below_keep_the_plot_height():
    import plotly.graph_objects as go

    f = go.Figure(layout=dict(height=300, margin=dict(t=40, b=40), title="a<br>b<br>c",
                              font=dict(size=14), legend=dict(orientation="h")))
    T.legend_below(T.below_toolbar(f))
    lay = f.to_plotly_json()["layout"]
    assert _plot_height(lay) == 300 - 40 - 40
    assert -lay["legend"]["y"] * _plot_height(lay) == pytest.approx(64)
    assert lay["margin"]["b"] >= 64 + 2 * 22


def _curves(n=7, num=181):
    V = np.random.default_rng(0).standard_normal((n, 2))
    phis = np.linspace(-np.pi / 2, np.pi / 2, num + 1)[1:]
    return phis, V[:, :1] * np.sin(phis) + V[:, 1:] * np.cos(phis)


@pytest.mark.parametrize("lecture", [False, True])
def test_spannogram_d2_buttons_sit_under_the_slider_not_on_its_labels(lecture):
    """The play/pause buttons covered the slider's first labels (−1.57 … −0.93) at both widths;
    lecture mode's bigger text needs proportionally more room."""
    f = T.spannogram_d2(*_curves(), 3, frames=40, lecture=lecture).to_plotly_json()["layout"]
    h = _plot_height(f)
    grow = f.get("font", {}).get("size", 14) / 14
    slider, buttons, legend = f["sliders"][0], f["updatemenus"][0], f["legend"]
    assert slider["yanchor"] == buttons["yanchor"] == legend["yanchor"] == "top"
    assert -slider["y"] * h >= 45 * grow                           # under the φ axis title
    assert (slider["y"] - buttons["y"]) * h >= SLIDER_PX * grow    # the buttons under the slider
    assert (buttons["y"] - legend["y"]) * h >= 36 * grow           # the legend under the buttons
    assert f["margin"]["b"] >= -legend["y"] * h + 3 * 22 * grow    # three legend rows fit
    assert f["margin"]["t"] >= (50 + 2 * TITLE_LINE_PX) * grow     # a three-line title fits


def test_lecture_mode_figure_is_bigger():
    """Issue 20 (the teacher): lecture mode draws a bigger figure with bigger text."""
    normal = T.spannogram_d2(*_curves(), 3, frames=40).to_plotly_json()["layout"]
    big = T.spannogram_d2(*_curves(), 3, frames=40, lecture=True).to_plotly_json()["layout"]
    assert _plot_height(big) >= 1.25 * _plot_height(normal)
    assert big["font"]["size"] > normal["font"]["size"]


def test_d3_surfaces_stay_visible_under_each_other():
    """Issue 21 item 5: in the 3D tab, row 0 (a small surface under row 1) was invisible — see-
    through surfaces of 0.75 blended into one grey sheet.  Opaque surfaces (the depth test shows
    whichever is on top), each in its own colour with a wireframe of that colour."""
    p = np.linspace(-np.pi / 2, np.pi / 2, 31)
    rng = np.random.default_rng(0)
    V = rng.standard_normal((3, 3)) * [[0.2], [0.5], [1.5]]  # a small row under two larger ones
    P1, P2 = np.meshgrid(p, p)
    C = np.stack([np.cos(P2) * np.sin(P1), np.cos(P2) * np.cos(P1), np.sin(P2)])
    f = T.spannogram_d3_surfaces(p, p, np.einsum("id,dyx->iyx", V, C))
    rows = [t for t in f.data if t.name.startswith("row")]
    assert len(rows) == 3
    colours = [t.colorscale[0][1] for t in rows]
    assert len(set(colours)) == 3
    for t, c in zip(rows, colours):
        assert t.opacity == 1.0
        assert t.contours.x.show and t.contours.x.color == c and t.contours.y.color == c
    zero = next(t for t in f.data if t.name == "zero surface")
    assert zero.opacity <= 0.2 and zero.colorscale[0][1] not in colours
