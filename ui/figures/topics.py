"""Figures of the Topics page: the words of each component and their weights.

Pure functions: a topics table (:func:`nspca_core.text.topics_table`: columns
``component, rank, word, word_index, weight``) in, a ``plotly`` Figure out; no
``st.*`` calls.  Bars are horizontal, the heaviest word on top, one panel per
component, in the Okabe–Ito blue of the loadings maps.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ui.figures import OKABE_ITO

__all__ = ["topic_bars", "topics_grid", "topic_variance"]

_BAR = OKABE_ITO["blue"]


def _check(table: pd.DataFrame) -> None:
    need = {"component", "rank", "word", "weight"}
    if not need <= set(table.columns):
        raise ValueError(f"`table` needs columns {sorted(need)}; got {list(table.columns)}")


def topic_bars(table: pd.DataFrame, component: int, *, title: str | None = None) -> go.Figure:
    """One component's words as horizontal bars (heaviest on top)."""
    _check(table)
    grp = table[table["component"] == component].sort_values("rank")
    fig = go.Figure(go.Bar(x=grp["weight"], y=grp["word"], orientation="h", marker_color=_BAR,
                           hovertemplate="%{y}: %{x:.4f}<extra></extra>"))
    fig.update_yaxes(autorange="reversed", title_text="word")
    fig.update_xaxes(title_text="loading (weight)", rangemode="tozero")
    fig.update_layout(title=title or f"Topic {component}", height=max(220, 22 * len(grp) + 90),
                      margin=dict(l=10, r=10, t=50, b=40), showlegend=False)
    return fig


def topics_grid(table: pd.DataFrame, *, n_cols: int = 4, variance=None,
                title: str = "Topics: the words of each component and their weights") -> go.Figure:
    """A bar chart per component in a grid (heaviest word on top of each panel).

    ``variance`` (one value per component) goes into the panel titles.
    """
    _check(table)
    comps = sorted(int(c) for c in table["component"].unique())
    if not comps:
        fig = go.Figure()
        fig.update_layout(title=f"{title} (no component)")
        return fig
    n_cols = max(1, min(int(n_cols), len(comps)))
    n_rows = math.ceil(len(comps) / n_cols)
    titles = [f"Topic {c}" + (f" — var {float(variance[c - 1]):.3g}" if variance is not None else "")
              for c in comps]
    longest = int(table.groupby("component").size().max())
    row_px = max(260, 18 * longest + 80)
    # about 70 px between rows: the x ticks of a row and the title of the next do not meet
    fig = make_subplots(rows=n_rows, cols=n_cols, subplot_titles=titles, horizontal_spacing=0.12,
                        vertical_spacing=min(0.3, 70 / (n_rows * row_px)) if n_rows > 1 else 0.1)
    for i, c in enumerate(comps):
        grp = table[table["component"] == c].sort_values("rank")
        row, col = divmod(i, n_cols)
        fig.add_trace(go.Bar(x=grp["weight"], y=grp["word"], orientation="h", marker_color=_BAR,
                             name=f"Topic {c}", hovertemplate="%{y}: %{x:.4f}<extra></extra>"),
                      row=row + 1, col=col + 1)
        fig.update_yaxes(autorange="reversed", tickfont=dict(size=10), row=row + 1, col=col + 1)
        fig.update_xaxes(rangemode="tozero", row=row + 1, col=col + 1)
    for col in range(1, n_cols + 1):
        fig.update_xaxes(title_text="weight", row=n_rows, col=col)
    fig.update_layout(title=title, showlegend=False, height=n_rows * row_px + 60,
                      margin=dict(l=10, r=10, t=80, b=40))
    return fig


def topic_variance(variance, cumulative, *, labels=None,
                   title: str = "Variance explained by the topics") -> go.Figure:
    """Variance of each topic (bars) and of the span of the first j (line)."""
    v = np.asarray(variance, float)
    cum = np.asarray(cumulative, float)
    x = labels or [f"Topic {j + 1}" for j in range(v.size)]
    fig = go.Figure([go.Bar(x=x, y=v, name="variance of the topic", marker_color=_BAR),
                     go.Scatter(x=x, y=cum, name="cumulative (span of topics 1..j)",
                                mode="lines+markers", line=dict(color=OKABE_ITO["vermillion"]))])
    fig.update_layout(title=title, xaxis_title="topic", yaxis_title="variance",
                      legend=dict(orientation="h", y=-0.25), height=360,
                      margin=dict(l=10, r=10, t=50, b=40))
    return fig
