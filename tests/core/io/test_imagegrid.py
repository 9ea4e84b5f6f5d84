"""nspca_core.io.imagegrid: exact pixels, a border around every image, text that fits the canvas."""

from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst
from PIL import Image

pytest.importorskip("matplotlib")

from nspca_core.io import imagegrid as G  # noqa: E402
from nspca_core.cli import _save_image_grid  # noqa: E402

BORDER = np.array(G._BORDER, dtype=np.uint8)


def _rgb(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def _frames(img: np.ndarray):
    """Bounding boxes (top, left, bottom, right) of the one-pixel frames, found by their colour."""
    is_border = (img == BORDER).all(axis=-1)
    boxes, seen = [], np.zeros_like(is_border)
    for r, c in zip(*np.nonzero(is_border)):
        if seen[r, c]:
            continue
        # walk right and down along the frame from its top-left corner
        right = c
        while right + 1 < img.shape[1] and is_border[r, right + 1]:
            right += 1
        bottom = r
        while bottom + 1 < img.shape[0] and is_border[bottom + 1, c]:
            bottom += 1
        closed = (is_border[bottom, c:right + 1].all() and is_border[r:bottom + 1, right].all())
        if bottom - r >= 2 and right - c >= 2 and closed:  # a frame, not a grey pixel of text
            seen[r:bottom + 1, c:right + 1] = True
            boxes.append((r, c, bottom, right))
    return boxes


def _expected_tile(a: np.ndarray, lut: np.ndarray, scale: int, signed: bool) -> np.ndarray:
    """Pixel by pixel, the obvious way: scale to max |a|, look up, repeat each pixel scale x scale."""
    h, w = a.shape
    peak = max(abs(float(v)) for v in a.ravel())
    out = np.zeros((h * scale, w * scale, 3), dtype=np.uint8)
    for i in range(h):
        for j in range(w):
            z = a[i, j] / peak if peak > 0 else 0.0
            z = (z + 1) / 2 if signed else min(max(z, 0.0), 1.0)
            out[i * scale:(i + 1) * scale, j * scale:(j + 1) * scale] = lut[min(int(z * len(lut)), len(lut) - 1)]
    return out


@settings(max_examples=30, deadline=None)
@given(hst.integers(1, 5), hst.integers(1, 5), hst.integers(1, 4), hst.integers(1, 3), hst.booleans(),
       hst.integers(0, 2**32 - 1))
def test_every_data_pixel_is_an_exact_block_inside_a_frame(h, w, scale, count, signed, seed):
    rng = np.random.default_rng(seed)
    images = [rng.standard_normal((h, w)) if signed else rng.random((h, w)) for _ in range(count)]
    lut = np.stack([np.arange(256), 255 - np.arange(256), np.full(256, 7)], axis=1).astype(np.uint8)
    png = G.image_grid_png({"row": images}, image_shape=(h, w), scale=scale, cmap=lut, signed_cmap=lut,
                           signed=["row"] if signed else [])
    img = _rgb(png)
    frames = sorted(_frames(img), key=lambda b: b[1])
    assert len(frames) == count
    for (top, left, bottom, right), a in zip(frames, images):
        assert (bottom - top - 1, right - left - 1) == (h * scale, w * scale)
        np.testing.assert_array_equal(img[top + 1:bottom, left + 1:right], _expected_tile(a, lut, scale, signed))
    # neighbours are apart: white between consecutive frames
    for (_, _, _, r0), (t1, l1, b1, _) in zip(frames, frames[1:]):
        assert l1 > r0 + 1 and (img[t1:b1 + 1, r0 + 1:l1] == 255).all()


def test_named_colormap_matches_matplotlib():
    import matplotlib

    a = np.array([[0.0, 0.25], [0.5, 1.0]])
    img = _rgb(G.image_grid_png({"": [a]}, image_shape=(2, 2), scale=3))
    (top, left, bottom, right), = _frames(img)
    lut = matplotlib.colormaps["Blues"](np.arange(256), bytes=True)[:, :3]
    np.testing.assert_array_equal(img[top + 1:bottom, left + 1:right], _expected_tile(a, lut, 3, False))


def test_long_labels_captions_and_title_fit_inside_the_canvas():
    long = "a rather long row label, ε-net spannogram (d = 3, ε = 0.1)"
    rows = {long: [np.eye(4).ravel()] * 2, "b": [np.ones(16)]}
    titles = {long: ["component 1: 12.34% of the variance", "component 2: 9.87% of the variance"]}
    img = _rgb(G.image_grid_png(rows, image_shape=(4, 4), titles=titles, scale=3,
                                title="a title that is longer than the images are wide"))
    # nothing touches the edges: a clipped text would run into them
    for edge in (img[:3], img[-3:], img[:, :3], img[:, -3:]):
        assert (edge == 255).all()
    # the text is drawn: dark pixels left of the first frame (the label) and under it (the caption)
    (top, left, bottom, right) = min(_frames(img), key=lambda b: (b[0], b[1]))
    assert (img[top:bottom, :left] < 128).any()
    assert (img[bottom + 1:, left:right] < 128).any()


def test_bad_arguments_name_what_is_allowed():
    with pytest.raises(ValueError, match="`image_shape` must be two positive ints"):
        G.image_grid_png({"": [np.ones(4)]}, image_shape=(0, 4))
    with pytest.raises(ValueError, match=r"colour table must be an \(N, 3\) uint8 array"):
        G.image_grid_png({"": [np.ones(4)]}, image_shape=(2, 2), cmap=np.zeros((4, 3)))


def test_cli_grid_has_one_framed_tile_per_component(tmp_path):
    rng = np.random.default_rng(1)
    loadings = np.abs(rng.standard_normal((6 * 5, 3)))
    _save_image_grid(loadings, (6, 5), tmp_path / "components.png")
    img = np.asarray(Image.open(tmp_path / "components.png").convert("RGB"))
    frames = _frames(img)
    assert len(frames) == 3
    scale = 64 // 6
    assert all((b - t - 1, r - le - 1) == (6 * scale, 5 * scale) for t, le, b, r in frames)
