"""Files the analysis pages offer for download (pure: data in, bytes/str out).

PNG image grids are drawn with Matplotlib by :func:`nspca_core.io.imagegrid.image_grid_png`
(no browser or kaleido needed), with the same colour maps as the on-screen figures:
plotly's ``Blues`` from 0 (white) for nonnegative loadings, ``PuOr`` centred at 0
for signed ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from plotly.colors import get_colorscale, sample_colorscale

from ui.figures.analysis import DIVERGING, SEQUENTIAL

__all__ = ["colormap_lut", "image_grid_png", "figure_html", "components_csv", "components_wide_csv", "scores_csv"]


def colormap_lut(name: str, size: int = 256) -> np.ndarray:
    """A (size, 3) uint8 lookup table sampled from a plotly colour scale."""
    cols = sample_colorscale(get_colorscale(name), np.linspace(0, 1, size), colortype="tuple")
    return np.clip(np.round(np.asarray(cols) * (255 if np.max(cols) <= 1 else 1)), 0, 255).astype(np.uint8)


def image_grid_png(rows: Mapping[str, Sequence[np.ndarray]], *, image_shape: tuple[int, int],
                   titles: Mapping[str, Sequence[str]] | None = None, signed: Sequence[str] = (),
                   scale: int = 6, title: str = "") -> bytes:
    """Compose rows of images (one row per entry, e.g. per algorithm) into one PNG.

    Each image (flat vector of length h*w) is scaled to its own max |value|:
    nonnegative rows map 0..max to ``Blues``, rows named in ``signed`` map
    −max..max to ``PuOr``.  Row names are written on the left, ``titles`` under
    each image.
    """
    from nspca_core.io.imagegrid import image_grid_png as draw

    return draw(rows, image_shape=image_shape, titles=titles, signed=signed, scale=scale, title=title,
                cmap=colormap_lut(SEQUENTIAL), signed_cmap=colormap_lut(DIVERGING))


def figure_html(fig) -> str:
    """A standalone HTML file of a plotly figure that opens offline (plotly.js embedded, ~4.5 MB)."""
    return fig.to_html(include_plotlyjs=True, full_html=True)


def components_csv(loadings: np.ndarray, feature_names: Sequence[str],
                   names: Sequence[str] | None = None) -> bytes:
    """The nonzero loadings as CSV, one row per (component, feature), largest first.

    Columns ``component, rank, feature, index, loading``: for each component
    (in order) its support, sorted by decreasing |loading|, with the feature's
    name and its 1-based column number in the file.  Zeros are left out (a
    k-sparse component has k rows, not n).
    """
    from nspca_core.io.written import components_long

    return components_long(loadings, feature_names, names).to_csv(index=False).encode()


def components_wide_csv(loadings: np.ndarray, feature_names: Sequence[str],
                        names: Sequence[str] | None = None) -> bytes:
    """Every loading as CSV, one row per feature (``feature`` then one column per component), as the
    CLI's ``components.csv``; :func:`components_csv` is the long table (nonzeros only)."""
    L = np.asarray(loadings, float)
    if L.ndim == 1:
        L = L[:, None]
    names = list(names) if names is not None else [f"component_{j + 1}" for j in range(L.shape[1])]
    df = pd.DataFrame(L, columns=names)
    df.insert(0, "feature", [str(f) for f in feature_names])
    return df.to_csv(index=False).encode()


def scores_csv(X: np.ndarray, loadings: np.ndarray, names: Sequence[str] | None = None, *,
               labels: Sequence | None = None, sample_names: Sequence[str] | None = None) -> bytes:
    """Scores ``X @ loadings`` (samples × components) as CSV, X as preprocessed.

    Columns ``sample`` (the sample's name when ``sample_names`` are given, else
    its 1-based row), ``label`` (when ``labels`` are given: the class of each
    sample, beside its scores), then one column per component.
    """
    L = np.asarray(loadings, float)
    if L.ndim == 1:
        L = L[:, None]
    S = np.asarray(X, float) @ L
    names = list(names) if names is not None else [f"score_{j + 1}" for j in range(S.shape[1])]
    df = pd.DataFrame(S, columns=names)
    if labels is not None:
        labels = np.asarray(labels)
        if labels.shape[0] != S.shape[0]:
            raise ValueError(f"`labels` must have one entry per sample ({S.shape[0]}); got {labels.shape[0]}")
        df.insert(0, "label", labels.astype(str))
    if sample_names is not None:
        sample_names = [str(v) for v in sample_names]
        if len(sample_names) != S.shape[0]:
            raise ValueError(f"`sample_names` must have one entry per sample ({S.shape[0]}); "
                             f"got {len(sample_names)}")
        df.insert(0, "sample", sample_names)
    else:
        df.insert(0, "sample", np.arange(1, S.shape[0] + 1))
    return df.to_csv(index=False).encode()
