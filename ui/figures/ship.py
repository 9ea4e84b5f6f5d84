"""A finished figure, frozen once and sent to many browsers (issue 41, item 1).

``st.plotly_chart(fig)`` turns a ``go.Figure`` into its JSON on every script run: ``fig.to_dict()``
deep-copies every trace and frame (40 ms for the d = 2 spannogram's 60 frames), and a figure kept
in ``st.cache_data`` is unpickled, i.e. rebuilt and re-validated, on every hit.  A teaching page
whose figure depends only on its inputs builds it once per server (``st.cache_resource``, keyed by
those inputs) and hands Streamlit a :class:`Shipped`: its ``to_dict()`` returns the dict made once.

Encoding that dict is the rest: plotly's JSON encoder walks it three times (encode, parse back for
NaN and infinities, encode again), 30 ms a student for the four teaching pages' 2.7 MB of figures.
:meth:`Shipped.json` is that text, made once; :func:`prebuilt_json` finds it from the dict
``to_dict()`` gave (what Streamlit hands ``plotly.io.to_json``), and
:func:`ui.streamlit_runtime.send_shipped_figures_prebuilt` puts it in front of that call.

A shipped figure is read-only: every change goes on the ``go.Figure`` before :func:`ship`.
"""

from __future__ import annotations

import threading
import weakref

import plotly.graph_objects as go
import plotly.io.json as plotly_json

__all__ = ["Shipped", "ship", "prebuilt_json"]

_by_spec: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # id(spec dict) -> its Shipped
_lock = threading.Lock()


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
        self._shipped_json: str | None = None
        with _lock:
            _by_spec[id(spec)] = self

    def to_dict(self) -> dict:  # noqa: D401 - plotly's name
        return self._shipped_spec

    def to_plotly_json(self) -> dict:
        return self._shipped_spec

    @property
    def spec(self) -> dict:
        """The frozen dict (data, layout, frames), for tests and for the page's own checks."""
        return self._shipped_spec

    @property
    def json(self) -> str:
        """``plotly.io.to_json(spec, validate=False)`` — what Streamlit sends — made once."""
        text = self._shipped_json
        if text is None:  # two first visitors at once both encode; the same text either way
            # plotly.io.json's own function: plotly.io.to_json may be the wrapper that asks this property
            text = self._shipped_json = plotly_json.to_json(self._shipped_spec, validate=False)
        return text


def ship(figure: go.Figure) -> Shipped:
    """Freeze a finished figure for sending (see the module's docstring)."""
    return figure if isinstance(figure, Shipped) else Shipped(figure)


def prebuilt_json(obj) -> str | None:
    """The JSON of the shipped figure whose ``to_dict()`` is ``obj`` (the very dict, not an equal
    one), or None for anything else."""
    if type(obj) is not dict:
        return None
    owner = _by_spec.get(id(obj))
    if owner is None or owner._shipped_spec is not obj:  # an id reused after its figure was freed
        return None
    return owner.json
