"""Figures of the "Features by class" page: scores by class, features × samples by class.

Pure functions: arrays in, a ``plotly.graph_objects.Figure`` out (no ``st.*``
calls).  One colour per class, in class order, from the Okabe–Ito palette
(then Paul Tol's colour-blind-safe extras, then repeated); feature and class
names are the file's.  Static export (PNG/SVG) goes through Plotly's own
``Figure.to_image``, which needs the ``kaleido`` package and a Chrome/Chromium;
:func:`static_export_available` says whether this installation has both.
"""

from __future__ import annotations

import functools
import importlib.util
import math
import os
import shutil
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ui.figures import OKABE_ITO

__all__ = ["CLASS_COLORS", "class_color", "scores_by_class", "class_heatmap",
           "static_export_available", "to_static", "to_json"]

# Okabe–Ito without black (reserved for text), then Paul Tol's extras.
CLASS_COLORS = (OKABE_ITO["blue"], OKABE_ITO["orange"], OKABE_ITO["green"], OKABE_ITO["vermillion"],
                OKABE_ITO["purple"], OKABE_ITO["sky"], "#B8A200", "#332288", "#882255", "#44AA99",
                "#999933", "#661100")
_LAYOUT = dict(font=dict(size=14), margin=dict(l=70, r=20, t=80, b=60))
DIVERGING = "RdBu_r"  # blue = below the feature's mean, red = above; white = the mean


def class_color(g: int) -> str:
    """The colour of the g-th class (0-based, cycling after 12)."""
    return CLASS_COLORS[g % len(CLASS_COLORS)]


def _title(text: str) -> dict:
    return dict(text=text, x=0.01, xanchor="left")


def _fmt_f(F: float) -> str:
    if not np.isfinite(F):
        return "∞" if F > 0 else "n/a"
    return f"{F:.3g}"


def scores_by_class(scores: np.ndarray, codes: np.ndarray, classes: Sequence[str], *,
                    component_names: Sequence[str] | None = None,
                    score_F: Sequence[float] | None = None, ncols: int = 3,
                    title: str = "Component scores by class", points: bool = True) -> go.Figure:
    """One panel per component: its scores as a box per class with every sample as a dot.

    Parameters
    ----------
    scores : ndarray (m, r)
        Component scores (``X @ loadings``).
    codes : ndarray of int (m,)
        Class index of each sample; ``classes[codes[i]]`` its name.
    classes : sequence of str
    component_names : names of the panels (default "component 1", …)
    score_F : the ANOVA F of each component's scores, written in the panel title
    ncols : panels per row
    points : draw every sample (jittered) beside the box
    """
    S = np.asarray(scores, dtype=float)
    S = S[:, None] if S.ndim == 1 else S
    r = S.shape[1]
    names = list(component_names) if component_names is not None else [f"component {j + 1}"
                                                                       for j in range(r)]
    subtitles = [n if score_F is None else f"{n} (F = {_fmt_f(float(score_F[j]))})"
                 for j, n in enumerate(names)]
    ncols = max(1, min(int(ncols), r))
    nrows = math.ceil(r / ncols)
    fig = make_subplots(rows=nrows, cols=ncols, subplot_titles=subtitles,
                        horizontal_spacing=0.08 if ncols > 1 else 0.0,
                        vertical_spacing=min(0.3, 0.6 / nrows) if nrows > 1 else 0.0)
    codes = np.asarray(codes, dtype=int)
    for j in range(r):
        row, col = j // ncols + 1, j % ncols + 1
        for g, name in enumerate(classes):
            y = S[codes == g, j]
            if y.size == 0:
                continue
            fig.add_trace(go.Box(
                y=y, x=[str(name)] * y.size, name=str(name), legendgroup=str(name),
                showlegend=False, marker=dict(color=class_color(g), size=5),
                line=dict(color=class_color(g)), boxpoints="all" if points else "outliers",
                jitter=0.45, pointpos=0, boxmean=False,
                hovertemplate=f"{name}<br>score %{{y:.4g}}<extra>{names[j]}</extra>"),
                row=row, col=col)
        fig.update_xaxes(type="category", categoryorder="array",
                         categoryarray=[str(c) for c in classes], row=row, col=col)
        fig.update_yaxes(title_text="score" if col == 1 else None, row=row, col=col)
    # no legend: each box is named by its x tick label, in every panel (a legend under the
    # panels collided with tick labels rotated on a narrow screen)
    fig.update_layout(**_LAYOUT, title=_title(title), height=120 + 330 * nrows,
                      showlegend=False, boxmode="overlay")
    return fig


PLOT_PX = 560  # the heatmap's plotting width at an 800 px window, for spacing the class names


def class_heatmap(Z: np.ndarray, feature_names: Sequence[str], sample_classes: Sequence[int],
                  classes: Sequence[str], *, feature_component: Sequence[int] | None = None,
                  sample_ids: Sequence[int] | None = None,
                  title: str = "Selected features × samples, ordered by class") -> go.Figure:
    """Heatmap of standardized values: selected features (rows) × samples (columns, by class).

    Parameters
    ----------
    Z : ndarray (p, m)
        Standardized values, columns already ordered by class.
    feature_names : sequence of str (p,)
        Row labels; every row is labelled (duplicate names stay separate rows).
    sample_classes : sequence of int (m,)
        Class index of each column (non-decreasing).
    classes : sequence of str
    feature_component : the component (0-based) of each row; rows of
        different components are separated by a line.
    sample_ids : the sample number of each column (hover), default 1..m
    """
    Z = np.asarray(Z, dtype=float)
    p, m = Z.shape
    sc = np.asarray(sample_classes, dtype=int)
    ids = np.arange(1, m + 1) if sample_ids is None else np.asarray(sample_ids)
    zmax = float(np.nanmax(np.abs(Z))) if Z.size else 1.0
    zmax = min(max(zmax, 1e-12), 3.0)  # beyond 3 standard deviations: saturated
    names = [str(f) for f in feature_names]
    hover = np.array([[f"{names[i]}<br>sample {ids[c]} ({classes[sc[c]]})" for c in range(m)]
                      for i in range(p)], dtype=object) if p else None
    fig = go.Figure(go.Heatmap(
        z=Z, x=np.arange(m), y=np.arange(p), colorscale=DIVERGING, zmin=-zmax, zmax=zmax, zmid=0,
        text=hover, hovertemplate="%{text}<br>standardized %{z:.2f}<extra></extra>",
        colorbar=dict(title="(value − mean) / sd", thickness=14, len=0.8, x=1.0, xanchor="left")))
    # class blocks: a line between classes and the class name above each block
    bounds = np.flatnonzero(np.diff(sc)) + 1
    for b in bounds:
        fig.add_vline(x=b - 0.5, line=dict(color="black", width=1.5))
    starts = np.concatenate([[0], bounds])
    ends = np.concatenate([bounds, [m]])
    # names that would touch their neighbour go up a row (issue 41: ten classes drew their names on
    # top of each other): widths in samples for a plot of PLOT_PX pixels, 7.5 px a character
    rows_end: list[float] = []
    lifted = 0
    for s, e in zip(starts, ends):
        if len(starts) <= 12 or (e - s) >= 0.025 * m:  # room for the name
            name = str(classes[sc[s]])
            half = (7.5 * len(name) + 8) / 2 * m / PLOT_PX
            x = (s + e - 1) / 2
            row = next((r for r, end in enumerate(rows_end) if end <= x - half), len(rows_end))
            if row == len(rows_end):
                rows_end.append(-np.inf)
            rows_end[row] = x + half
            lifted = max(lifted, row)
            fig.add_annotation(x=x, y=1.0, yref="paper", yanchor="bottom", yshift=16 * row,
                               text=name, showarrow=False, font=dict(size=12, color=class_color(int(sc[s]))))
    if feature_component is not None and p:
        fc = np.asarray(feature_component, dtype=int)
        for b in np.flatnonzero(np.diff(fc)) + 1:
            fig.add_hline(y=b - 0.5, line=dict(color="black", width=1, dash="dot"))
    fig.update_yaxes(tickmode="array", tickvals=np.arange(p).tolist(), ticktext=names,
                     autorange="reversed", title_text="feature", tickfont=dict(size=11))
    fig.update_xaxes(showticklabels=False, title_text=f"samples ({m}), grouped by class")
    fig.update_layout(**_LAYOUT, title=_title(title), height=max(380, 160 + 16 * p))
    fig.update_layout(margin=dict(l=70, r=20, t=100 + 16 * lifted, b=60))
    return fig


# ----------------------------------------------------------------- export
@functools.lru_cache(maxsize=1)
def static_export_available() -> bool:
    """Whether ``Figure.to_image`` can work here: kaleido installed and a Chrome/Chromium found."""
    if importlib.util.find_spec("kaleido") is None:
        return False
    if os.environ.get("BROWSER_PATH"):
        return True
    return any(shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome",
                                               "chrome"))


def to_static(fig: go.Figure, fmt: str, *, width: int = 1200, height: int | None = None) -> bytes:
    """The figure as PNG or SVG bytes through Plotly's own export (kaleido).

    Raises
    ------
    ValueError
        ``fmt`` is not "png" or "svg".
    RuntimeError
        No static export in this installation (see :func:`static_export_available`).
    """
    if fmt not in ("png", "svg"):
        raise ValueError(f"`fmt` must be 'png' or 'svg'; got {fmt!r}")
    if not static_export_available():
        raise RuntimeError("PNG/SVG export needs the kaleido package and Chrome/Chromium")
    h = height or int(fig.layout.height or 500)
    return fig.to_image(format=fmt, width=width, height=h, scale=2 if fmt == "png" else 1)


def to_json(fig: go.Figure) -> bytes:
    """The figure as Plotly JSON (re-open with ``plotly.io.from_json`` or in Chart Studio)."""
    return fig.to_json().encode()
