"""Line charts of the reproduction report, drawn with Matplotlib in the app's palette.

Colours come from the method registry (:mod:`nspca_core.methods`: the
Okabe–Ito palette and each method's colour), so a method has the same colour in
the report as on the app's pages.  Figures are built with the object-oriented API
(``matplotlib.figure.Figure``, no pyplot state) and saved as PNG.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from nspca_core.methods import OKABE_ITO, REGISTRY

__all__ = ["Series", "Band", "line_chart", "save_png", "OKABE_ITO", "method_color", "GREY"]

#: reference lines that are not a method (the paper's bound, random baselines)
GREY = "#888888"
_CYCLE = [OKABE_ITO[c] for c in ("blue", "vermillion", "green", "purple", "orange", "sky", "black")]


def method_color(method: str) -> str:
    """The registry's colour of ``method`` (grey for a name that is not a method)."""
    spec = REGISTRY.get(method)
    return spec.color if spec is not None else GREY


@dataclass
class Series:
    """One curve: ``y`` against ``x``; ``color=None`` takes the next colour of the palette."""

    x: np.ndarray
    y: np.ndarray
    label: str
    color: str | None = None
    dashed: bool = False
    markers: bool = False


@dataclass
class Band:
    """A shaded region between ``low`` and ``high`` (NaN entries leave gaps)."""

    x: np.ndarray
    low: np.ndarray
    high: np.ndarray
    label: str
    color: str = OKABE_ITO["sky"]
    alpha: float = 0.3


def line_chart(series, *, bands=(), title="", xlabel="", ylabel="", legend="lower right",
               size=(9.0, 5.2)) -> Figure:
    """Curves and shaded bands on one axes, with a legend; NaN points are left out of a curve."""
    fig = Figure(figsize=size, dpi=100, layout="constrained")
    ax = fig.add_subplot()
    for b in bands:
        x, lo, hi = (np.asarray(v, dtype=float) for v in (b.x, b.low, b.high))
        ax.fill_between(x, lo, hi, where=np.isfinite(lo) & np.isfinite(hi), color=b.color, alpha=b.alpha,
                        linewidth=0, label=b.label)
    for i, s in enumerate(series):
        x, y = np.asarray(s.x, dtype=float), np.asarray(s.y, dtype=float)
        ok = np.isfinite(y)
        ax.plot(x[ok], y[ok], color=s.color or _CYCLE[i % len(_CYCLE)], linestyle="--" if s.dashed else "-",
                marker="o" if s.markers or ok.sum() == 1 else None, markersize=4, linewidth=1.8, label=s.label)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, color="#e1e1e1", linewidth=0.8)
    ax.set_axisbelow(True)
    if series or bands:
        ax.legend(loc=legend, fontsize=9, framealpha=0.9)
    return fig


def save_png(fig: Figure, path: Path) -> None:
    """Write ``fig`` as a PNG file."""
    FigureCanvasAgg(fig).print_png(str(path))
