"""The dense path's DNN grid (:func:`_grid_and_refine`): a coarse geometric grid of k, then the midpoints where the
tangents' envelope is above the chord (moved unchanged from :mod:`.path`, which neared the house's 600-line limit)."""

from __future__ import annotations

import numpy as np

from .path_large import refine_midpoints


def _grid_and_refine(uniq, pos, lows, target, pcfg, run, upper, refine: bool = True) -> list:
    """The DNN runs of the path: a coarse geometric grid of k (run ascending: the dual moves
    smoothly as mu decreases with k), then the intervals where the envelope is above the chord of
    the bounds at the ends by more than ``delta`` (relative) are split."""
    p = uniq.size
    grid = {int(uniq[-1]), int(uniq[0])}
    g = float(uniq[-1])
    while g > uniq[0]:
        g /= pcfg["grid"]
        j = int(np.searchsorted(uniq, round(g)))
        grid.add(int(uniq[min(j, p - 1)]))
    for k in sorted(grid):  # ascending: the dual moves smoothly as mu decreases with k
        run(k, goal=target)
    if refine:
        refine_midpoints(uniq, pos, sorted(grid), lows, run, upper, pcfg["delta"], target)
    return sorted(grid)
