"""Minimal PNG charts with Pillow, for headless reports (no plotting library in the core).

Two figure kinds cover the papers' figures: line charts (with optional shaded
bands between two curves) and image grids.  Colours are the Okabe–Ito
colour-blind-safe palette.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from PIL import Image, ImageDraw, ImageFont

__all__ = ["OKABE_ITO", "Series", "Band", "line_chart", "image_grid"]

OKABE_ITO = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000"]


@dataclass
class Series:
    x: np.ndarray
    y: np.ndarray
    label: str
    color: str | None = None
    dashed: bool = False
    markers: bool = False


@dataclass
class Band:
    x: np.ndarray
    low: np.ndarray
    high: np.ndarray
    label: str
    color: str = "#56B4E9"
    alpha: int = 70


@dataclass
class _Frame:
    left: int = 70
    right: int = 20
    top: int = 40
    bottom: int = 55
    extra: dict = field(default_factory=dict)


def _font(size=13):
    for name in ("DejaVuSans.ttf", "Arial.ttf"):
        try:
            return ImageFont.truetype(name, size)
        except OSError:
            continue
    return ImageFont.load_default()


def _ticks(lo, hi, count=5):
    if not np.isfinite(lo) or not np.isfinite(hi) or hi <= lo:
        return np.array([lo])
    raw = (hi - lo) / count
    mag = 10 ** np.floor(np.log10(raw))
    step = min((s * mag for s in (1, 2, 2.5, 5, 10) if s * mag >= raw), default=10 * mag)
    start = np.ceil(lo / step) * step
    return np.arange(start, hi + 1e-9 * step, step)


def _hex(color, alpha=255):
    color = color.lstrip("#")
    return tuple(int(color[i:i + 2], 16) for i in (0, 2, 4)) + (alpha,)


def _dashed(draw, pts, color, dash=9.0, gap=6.0):
    """A dashed polyline: the dash pattern runs along the arc length."""
    phase, on = 0.0, True
    for (x0, y0), (x1, y1) in zip(pts[:-1], pts[1:]):
        seg = float(np.hypot(x1 - x0, y1 - y0))
        pos = 0.0
        while pos < seg:
            step = min((dash if on else gap) - phase, seg - pos)
            if on:
                a, b = pos / seg, (pos + step) / seg
                draw.line([(x0 + a * (x1 - x0), y0 + a * (y1 - y0)),
                           (x0 + b * (x1 - x0), y0 + b * (y1 - y0))], fill=color, width=2)
            pos += step
            phase += step
            if phase >= (dash if on else gap) - 1e-9:
                phase, on = 0.0, not on


def line_chart(series, *, bands=(), title="", xlabel="", ylabel="", size=(900, 520),
               ylim=None, xlim=None, legend="lower right") -> Image.Image:
    """Render line series (and shaded bands) to an RGB image.

    ``legend`` is "lower right" or "upper right" (or "upper left").
    """
    W, H = size
    fr = _Frame()
    img = Image.new("RGBA", size, (255, 255, 255, 255))
    overlay = Image.new("RGBA", size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(img)
    odraw = ImageDraw.Draw(overlay)
    f, fs = _font(13), _font(15)
    xs = [np.asarray(s.x, float) for s in series] + [np.asarray(b.x, float) for b in bands]
    ys = [np.asarray(s.y, float) for s in series] + [np.asarray(b.low, float) for b in bands] \
        + [np.asarray(b.high, float) for b in bands]
    allx = np.concatenate(xs) if xs else np.array([0.0, 1.0])
    ally = np.concatenate(ys) if ys else np.array([0.0, 1.0])
    ally = ally[np.isfinite(ally)]
    x0, x1 = xlim or (float(np.nanmin(allx)), float(np.nanmax(allx)))
    y0, y1 = ylim or (float(ally.min()) if ally.size else 0.0, float(ally.max()) if ally.size else 1.0)
    if x1 <= x0:
        x1 = x0 + 1
    if y1 <= y0:
        y1 = y0 + 1
    pw, ph = W - fr.left - fr.right, H - fr.top - fr.bottom

    def px(x):
        return fr.left + (np.asarray(x, float) - x0) / (x1 - x0) * pw

    def py(y):
        return fr.top + ph - (np.asarray(y, float) - y0) / (y1 - y0) * ph

    # grid and ticks
    for t in _ticks(y0, y1):
        yy = float(py(t))
        draw.line([(fr.left, yy), (fr.left + pw, yy)], fill=(225, 225, 225, 255))
        draw.text((fr.left - 6, yy), f"{t:g}", fill="black", font=f, anchor="rm")
    for t in _ticks(x0, x1, 8):
        xx = float(px(t))
        draw.line([(xx, fr.top + ph), (xx, fr.top + ph + 4)], fill="black")
        draw.text((xx, fr.top + ph + 6), f"{t:g}", fill="black", font=f, anchor="ma")
    draw.rectangle([fr.left, fr.top, fr.left + pw, fr.top + ph], outline="black")
    for b in bands:
        x = np.asarray(b.x, float)
        lo, hi = np.asarray(b.low, float), np.asarray(b.high, float)
        ok = np.isfinite(lo) & np.isfinite(hi)
        if ok.sum() < 2:
            continue
        poly = list(zip(px(x[ok]), py(np.clip(hi[ok], y0, y1)))) + \
            list(zip(px(x[ok])[::-1], py(np.clip(lo[ok], y0, y1))[::-1]))
        odraw.polygon([(float(a), float(c)) for a, c in poly], fill=_hex(b.color, b.alpha))
    img = Image.alpha_composite(img, overlay)
    draw = ImageDraw.Draw(img)
    for i, s in enumerate(series):
        color = s.color or OKABE_ITO[i % len(OKABE_ITO)]
        x, y = np.asarray(s.x, float), np.asarray(s.y, float)
        ok = np.isfinite(y)
        pts = [(float(a), float(c)) for a, c in zip(px(x[ok]), py(np.clip(y[ok], y0, y1)))]
        if len(pts) >= 2:
            if s.dashed:
                _dashed(draw, pts, color)
            else:
                draw.line(pts, fill=color, width=2)
        if s.markers or len(pts) == 1:
            for (a, c) in pts:
                draw.ellipse([a - 3, c - 3, a + 3, c + 3], fill=color)
    # legend
    entries = [(b.label, b.color, True) for b in bands] + \
        [(s.label, s.color or OKABE_ITO[i % len(OKABE_ITO)], False) for i, s in enumerate(series)]
    ly = fr.top + 8 if legend.startswith("upper") else fr.top + ph - 10 - 18 * (len(entries) - 1)
    for label, color, is_band in entries:
        lx = fr.left + pw - 250 if legend.endswith("right") else fr.left + 12
        if is_band:
            draw.rectangle([lx, ly - 5, lx + 24, ly + 5], fill=_hex(color, 120))
        else:
            draw.line([(lx, ly), (lx + 24, ly)], fill=color, width=3)
        draw.text((lx + 30, ly), label, fill="black", font=f, anchor="lm")
        ly += 18
    draw.text((W / 2, 12), title, fill="black", font=fs, anchor="ma")
    draw.text((fr.left + pw / 2, H - 18), xlabel, fill="black", font=f, anchor="mm")
    ylab = Image.new("RGBA", (ph, 20), (255, 255, 255, 0))
    ImageDraw.Draw(ylab).text((ph / 2, 10), ylabel, fill="black", font=f, anchor="mm")
    img.alpha_composite(ylab.rotate(90, expand=True), (4, fr.top))
    return img.convert("RGB")


def image_grid(images, *, titles=None, row_labels=None, ncols=None, scale=4, pad=6,
               signed=False) -> Image.Image:
    """Tile 2-D arrays into one image (each scaled to its own max; darker = larger).

    ``images`` is a list of rows (list of 2-D arrays) or a flat list (then
    ``ncols`` sets the width).  ``signed=True`` draws negative entries in
    orange and positive in blue (for dense PCA components).
    """
    if images and isinstance(images[0], np.ndarray):
        ncols = ncols or len(images)
        images = [images[i:i + ncols] for i in range(0, len(images), ncols)]
        if titles is not None:
            titles = [titles[i:i + ncols] for i in range(0, len(titles), ncols)]
    f = _font(12)
    h, w = np.asarray(images[0][0]).shape
    th, tw = h * scale, w * scale
    label_w = 110 if row_labels else 0
    title_h = 16 if titles is not None else 0
    cols = max(len(r) for r in images)
    W = label_w + cols * (tw + pad) + pad
    H = len(images) * (th + pad + title_h) + pad
    canvas = Image.new("RGB", (W, H), "white")
    draw = ImageDraw.Draw(canvas)
    for r, row in enumerate(images):
        y = pad + r * (th + pad + title_h)
        if row_labels:
            draw.text((4, y + th / 2), row_labels[r], fill="black", font=f, anchor="lm")
        for c, a in enumerate(row):
            a = np.asarray(a, float)
            peak = np.abs(a).max()
            z = a / peak if peak > 0 else a
            if signed:
                rgb = np.ones(a.shape + (3,))
                pos, neg = np.clip(z, 0, 1), np.clip(-z, 0, 1)
                rgb -= pos[..., None] * (1 - np.array([0, 114, 178]) / 255)
                rgb -= neg[..., None] * (1 - np.array([213, 94, 0]) / 255)
                tile = (255 * np.clip(rgb, 0, 1)).astype(np.uint8)
            else:
                g = (255 * (1 - np.clip(z, 0, 1))).astype(np.uint8)
                tile = np.stack([g, g, g], axis=-1)
            tile = np.kron(tile, np.ones((scale, scale, 1), dtype=np.uint8))
            x = label_w + pad + c * (tw + pad)
            canvas.paste(Image.fromarray(tile), (x, y + title_h))
            if titles is not None and titles[r][c]:
                draw.text((x + tw / 2, y), str(titles[r][c]), fill="black", font=f, anchor="ma")
    return canvas
