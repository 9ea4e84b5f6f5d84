"""A finished figure, frozen once and sent to many browsers (issue 41, item 1).

``st.plotly_chart(fig)`` turns a ``go.Figure`` into its JSON on every script run: ``fig.to_dict()``
deep-copies every trace and frame (40 ms for the d = 2 spannogram's 60 frames), and a figure kept
in ``st.cache_data`` is unpickled, i.e. rebuilt and re-validated, on every hit.  A teaching page
whose figure depends only on its inputs builds it once per server (``st.cache_resource``, keyed by
those inputs) and hands Streamlit a :class:`Shipped`: its ``to_dict()`` returns the dict made once,
so a student's run costs only the JSON encoding of that dict.

A shipped figure is read-only: every change goes on the ``go.Figure`` before :func:`ship`.
"""

from __future__ import annotations

import plotly.graph_objects as go

__all__ = ["Shipped", "ship"]


class Shipped(go.Figure):
    """A ``go.Figure`` whose ``to_dict()`` is the dict of a finished figure, computed once.

    Streamlit (``plotly.tools.return_figure_from_figure_or_data``) accepts any ``BaseFigure``
    without validating it again and calls ``to_dict()``; the dict is shared by every session,
    so nothing may change it (the JSON encoder only reads it).
    """

    def __init__(self, figure: go.Figure | dict):
        super().__init__()
        spec = figure.to_dict() if isinstance(figure, go.Figure) else dict(figure)
        self._shipped_spec = spec

    def to_dict(self) -> dict:  # noqa: D401 - plotly's name
        return self._shipped_spec

    def to_plotly_json(self) -> dict:
        return self._shipped_spec

    @property
    def spec(self) -> dict:
        """The frozen dict (data, layout, frames), for tests and for the page's own checks."""
        return self._shipped_spec


def ship(figure: go.Figure) -> Shipped:
    """Freeze a finished figure for sending (see the module's docstring)."""
    return figure if isinstance(figure, Shipped) else Shipped(figure)
