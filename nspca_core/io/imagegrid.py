"""Component image grids as PNG files, drawn with Matplotlib.

The one image-grid drawing of the project: the CLI's ``components.png``, the
app's PNG download and the reproduction's component figures all call
:func:`image_grid_png`.  Matplotlib is imported only when a grid is drawn, so
``import nspca_core`` does not pay for it.

Every data pixel becomes a ``scale x scale`` block of exactly one colour (the
tiles are placed with ``Figure.figimage``: no resampling, no blur), a one-pixel
border separates each image from its neighbours and from the white page, and
the canvas is sized from the measured text, so row labels, captions and the
title never clip.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence

import numpy as np

__all__ = ["image_grid_png"]

#: pixels per inch of the drawing (text sizes are in points at this resolution)
_DPI = 100
_PAD = 8
_BORDER = (77, 77, 77)  # dark grey, readable against white and against the darkest blue


def _lookup_table(cmap) -> np.ndarray:
    """``(N, 3)`` uint8 colours of a Matplotlib colormap name, a Colormap or an ``(N, 3)`` uint8 table."""
    if isinstance(cmap, np.ndarray):
        if cmap.ndim != 2 or cmap.shape[1] != 3 or cmap.dtype != np.uint8 or len(cmap) < 2:
            raise ValueError(f"a colour table must be an (N, 3) uint8 array with N >= 2; got "
                             f"{cmap.dtype} {cmap.shape}")
        return cmap
    import matplotlib

    cmap = matplotlib.colormaps[cmap] if isinstance(cmap, str) else cmap
    return cmap(np.arange(cmap.N), bytes=True)[:, :3]


def _tile(img: np.ndarray, lut: np.ndarray, *, signed: bool, scale: int) -> np.ndarray:
    """RGB uint8 tile of one image: scaled to its own max |value|, blocks of ``scale`` pixels, framed."""
    peak = float(np.max(np.abs(img))) if img.size else 0.0
    z = img / peak if peak > 0 else np.zeros_like(img)
    z = (z + 1) / 2 if signed else np.clip(z, 0, 1)
    rgb = lut[np.minimum((z * len(lut)).astype(int), len(lut) - 1)]
    rgb = np.repeat(np.repeat(rgb, scale, axis=0), scale, axis=1)
    tile = np.empty((rgb.shape[0] + 2, rgb.shape[1] + 2, 3), dtype=np.uint8)
    tile[...] = _BORDER
    tile[1:-1, 1:-1] = rgb
    return tile


def _text_size(renderer, text: str, size: float) -> tuple[float, float]:
    """Width and height in pixels of ``text`` at ``size`` points."""
    from matplotlib.font_manager import FontProperties

    if not text:
        return 0.0, 0.0
    w, h, _ = renderer.get_text_width_height_descent(text, FontProperties(size=size), ismath=False)
    return w, h


def image_grid_png(rows: Mapping[str, Sequence[np.ndarray]], *, image_shape: tuple[int, int],
                   titles: Mapping[str, Sequence[str]] | None = None, signed: Sequence[str] = (),
                   scale: int = 4, title: str = "", cmap="Blues", signed_cmap="PuOr") -> bytes:
    """Rows of images (one row per entry, e.g. per method) as one PNG.

    Parameters
    ----------
    rows : mapping of str to sequence of arrays
        Row label -> images, each a flat vector of length ``h * w`` or an
        ``(h, w)`` array.  Empty labels leave out the label column.
    image_shape : (int, int)
        ``(h, w)`` of every image.
    titles : mapping of str to sequence of str, optional
        Captions written under the images of a row.
    signed : sequence of str
        Rows drawn with ``signed_cmap`` from ``-max`` to ``max`` (e.g. dense
        PCA components); the others map ``0..max`` to ``cmap`` (negative
        entries are drawn as zero).
    scale : int
        Screen pixels per image pixel.
    title : str
        A line above the grid.
    cmap, signed_cmap : str, matplotlib Colormap or (N, 3) uint8 array
        The colour maps (``Blues``: zero is white, so sparse supports stand
        out; ``PuOr`` centred at zero), by Matplotlib name, as a Colormap or
        as a table of ``N`` colours.

    Returns
    -------
    bytes
        The PNG file.

    Notes
    -----
    A value ``z`` in ``[0, 1]`` (after scaling) takes entry
    ``min(floor(z N), N - 1)`` of an ``N``-colour table, as a Matplotlib
    colormap called on ``z`` does.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    h, w = (int(s) for s in image_shape)
    scale = int(scale)
    if h < 1 or w < 1 or scale < 1:
        raise ValueError(f"`image_shape` must be two positive ints and `scale` >= 1; got {image_shape}, {scale}")
    seq, div = _lookup_table(cmap), _lookup_table(signed_cmap)
    names = list(rows)
    titles = titles or {}
    label_size, caption_size, title_size = 11, 9, 13
    probe = FigureCanvasAgg(Figure(dpi=_DPI)).get_renderer()
    label_w = max([_text_size(probe, str(r), label_size)[0] for r in names] + [0.0])
    label_col = int(np.ceil(label_w)) + 2 * _PAD if label_w > 0 else 0
    captions = [str(c) for r in names for c in titles.get(r, ())]
    cap_w, cap_h = max([_text_size(probe, c, caption_size) for c in captions] + [(0.0, 0.0)])
    tile_w, tile_h = w * scale + 2, h * scale + 2
    col_w = max(tile_w, int(np.ceil(cap_w)) + 4)
    row_h = tile_h + (int(np.ceil(cap_h)) + 6 if captions else 0)
    top = int(np.ceil(_text_size(probe, title, title_size)[1])) + 2 * _PAD if title else _PAD
    ncols = max([len(rows[r]) for r in names] + [1])
    W = label_col + ncols * col_w + (ncols + 1) * _PAD
    H = top + max(len(names), 1) * (row_h + _PAD)
    # a hair over W x H pixels: the canvas truncates the figure size to whole pixels
    fig = Figure(figsize=((W + 0.01) / _DPI, (H + 0.01) / _DPI), dpi=_DPI, facecolor="white")
    if title:
        fig.text(_PAD / W, 1 - _PAD / H, title, ha="left", va="top", fontsize=title_size, parse_math=False)
    for i, r in enumerate(names):
        y_top = top + i * (row_h + _PAD)
        if label_col:
            fig.text(_PAD / W, 1 - (y_top + tile_h / 2) / H, str(r), ha="left", va="center",
                     fontsize=label_size, parse_math=False)
        caps = list(titles.get(r, ()))
        for j, vec in enumerate(rows[r]):
            img = np.asarray(vec, dtype=float).reshape(h, w)
            tile = _tile(img, div if r in signed else seq, signed=r in signed, scale=scale)
            x = label_col + _PAD + j * (col_w + _PAD) + (col_w - tile_w) // 2
            fig.figimage(tile, xo=x, yo=H - y_top - tile_h, origin="upper")
            if j < len(caps) and caps[j]:
                fig.text((x + tile_w / 2) / W, 1 - (y_top + tile_h + 3) / H, caps[j], ha="center", va="top",
                         fontsize=caption_size, parse_math=False)
    buf = io.BytesIO()
    FigureCanvasAgg(fig).print_png(buf)
    return buf.getvalue()
