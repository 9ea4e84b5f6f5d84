"""Files the analysis pages offer for download (pure: data in, bytes/str out).

PNG image grids are composed with Pillow (no browser or kaleido needed), with
the same colour maps as the on-screen figures: ``Blues`` from 0 (white) for
nonnegative loadings, ``PuOr`` centred at 0 for signed ones.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from PIL import Image, ImageDraw, ImageFont
from plotly.colors import get_colorscale, sample_colorscale

from ui.figures.analysis import DIVERGING, SEQUENTIAL

__all__ = ["colormap_lut", "image_grid_png", "figure_html", "components_csv", "scores_csv"]


def colormap_lut(name: str, size: int = 256) -> np.ndarray:
    """A (size, 3) uint8 lookup table sampled from a plotly colour scale."""
    cols = sample_colorscale(get_colorscale(name), np.linspace(0, 1, size), colortype="tuple")
    return np.clip(np.round(np.asarray(cols) * (255 if np.max(cols) <= 1 else 1)), 0, 255).astype(np.uint8)


def _font(size: int):
    for name in ("DejaVuSans.ttf", "Arial.ttf"):
        try:
            return ImageFont.truetype(name, size)
        except OSError:
            continue
    return ImageFont.load_default()


def image_grid_png(rows: Mapping[str, Sequence[np.ndarray]], *, image_shape: tuple[int, int],
                   titles: Mapping[str, Sequence[str]] | None = None, signed: Sequence[str] = (),
                   scale: int = 6, title: str = "") -> bytes:
    """Compose rows of images (one row per entry, e.g. per algorithm) into one PNG.

    Each image (flat vector of length h*w) is scaled to its own max |value|:
    nonnegative rows map 0..max to ``Blues``, rows named in ``signed`` map
    −max..max to ``PuOr``.  Row names are written on the left, ``titles`` under
    each image.
    """
    h, w = image_shape
    names = list(rows)
    ncols = max((len(rows[r]) for r in names), default=0)
    seq, div = colormap_lut(SEQUENTIAL), colormap_lut(DIVERGING)
    font, bold = _font(13), _font(16)
    tw, th = w * scale, h * scale
    label_w = max([int(ImageDraw.Draw(Image.new("RGB", (1, 1))).textlength(r, font=font))
                   for r in names] + [0]) + 16
    cap_h = 20 if titles else 4
    top = 30 if title else 8
    pad = 8
    W = label_w + max(ncols, 1) * (tw + pad) + pad
    H = top + max(len(names), 1) * (th + cap_h + pad) + pad
    canvas = Image.new("RGB", (W, H), "white")
    draw = ImageDraw.Draw(canvas)
    if title:
        draw.text((pad, 6), title, fill="black", font=bold)
    for i, r in enumerate(names):
        y = top + i * (th + cap_h + pad)
        draw.text((pad, y + th / 2), r, fill="black", font=font, anchor="lm")
        for j, vec in enumerate(rows[r]):
            img = np.asarray(vec, float).reshape(h, w)
            peak = float(np.abs(img).max()) or 1.0
            if r in signed:
                idx = np.round((img / peak + 1) / 2 * 255)
                lut = div
            else:
                idx = np.round(np.clip(img / peak, 0, 1) * 255)
                lut = seq
            tile = lut[idx.astype(int)]
            tile = np.kron(tile, np.ones((scale, scale, 1), dtype=np.uint8))
            x = label_w + j * (tw + pad)
            canvas.paste(Image.fromarray(tile), (x, y))
            if titles and r in titles and j < len(titles[r]):
                draw.text((x + tw / 2, y + th + 3), str(titles[r][j]), fill="black", font=_font(11),
                          anchor="ma")
    buf = io.BytesIO()
    canvas.save(buf, format="PNG")
    return buf.getvalue()


def figure_html(fig) -> str:
    """A standalone HTML file of a plotly figure (plotly.js from its CDN)."""
    return fig.to_html(include_plotlyjs="cdn", full_html=True)


def components_csv(loadings: np.ndarray, feature_names: Sequence[str],
                   names: Sequence[str] | None = None) -> bytes:
    """The nonzero loadings as CSV, one row per (component, feature), largest first.

    Columns ``component, rank, feature, index, loading``: for each component
    (in order) its support, sorted by decreasing |loading|, with the feature's
    name and its 1-based column number in the file.  Zeros are left out (a
    k-sparse component has k rows, not n).
    """
    L = np.asarray(loadings, float)
    if L.ndim == 1:
        L = L[:, None]
    names = list(names) if names is not None else [f"component_{j + 1}" for j in range(L.shape[1])]
    rows = []
    for j, name in enumerate(names):
        col = L[:, j]
        idx = np.flatnonzero(col)
        idx = idx[np.argsort(-np.abs(col[idx]), kind="stable")]
        rows += [(name, r + 1, str(feature_names[i]), int(i) + 1, float(col[i])) for r, i in enumerate(idx)]
    df = pd.DataFrame(rows, columns=["component", "rank", "feature", "index", "loading"])
    return df.to_csv(index=False).encode()


def scores_csv(X: np.ndarray, loadings: np.ndarray, names: Sequence[str] | None = None, *,
               labels: Sequence | None = None) -> bytes:
    """Scores ``X @ loadings`` (samples × components) as CSV, X as preprocessed.

    Columns ``sample`` (1-based), ``label`` (when ``labels`` are given: the
    class of each sample, beside its scores), then one column per component.
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
    df.insert(0, "sample", np.arange(1, S.shape[0] + 1))
    return df.to_csv(index=False).encode()
