"""The dense path's KKT dual points (:func:`kkt_carry`): certify(k)'s first DNN start, carried to every k.

Why: where the path's feasible point at k is nearly optimal, certify(k) starts its DNN from the KKT dual
point of that point (:func:`.dual_start.kkt_init`: ``N >= 0`` making x an eigenvector of ``A + N``, ``mu = 0``)
and its bound there is that point's ``lambda_max(A + N)`` or less.  Without it the path carried another
k's dual point: on a 400 x 180 factor-plus-noise matrix (seed 1, k = 108..132) the path's bound was
1e-7 (relative) above certify(k)'s, the run at k = 180 having reached a slightly larger ``lambda_max``.

Rigour: ``x^T A x <= x^T (A + N) x <= lambda_max(A + N)`` for every unit ``x >= 0`` (``N >= 0``
elementwise), at any sparsity: the point's bound at every k is its rigorous ``lambda_max`` (``mu = 0``:
:func:`.dnn.dnn_tangent` is constant in k).
"""

from __future__ import annotations

import numpy as np

from .dual_start import _kkt_beaten, _kkt_point


def kkt_carry(A: np.ndarray, uniq: np.ndarray, pos: dict, lows: np.ndarray, LX: np.ndarray, upper, carry,
              enough: float) -> list:
    """At each k of ``uniq`` whose bound is open (``lows < enough * upper()``), the KKT dual point of the
    path's feasible point ``LX[:, i]`` (:func:`.dual_start._kkt_point`, the evaluation certify(k) makes from
    the same x, lower value and block) where a Ritz value of its matrix (below its ``lambda_max``) is
    below the path's bound (:func:`.dual_start._kkt_beaten`: elsewhere it cannot lower it); each point is
    given to ``carry(state, lam)``.  One evaluation per distinct point.  Returns the k evaluated."""
    done: list = []
    seen: set = set()
    for k in uniq:
        k = int(k)
        i = pos[k]
        lo, ub = float(lows[i]), float(upper()[i])
        x = LX[:, i]
        if not (lo > 0 and lo < enough * ub) or x.tobytes() in seen:
            continue
        seen.add(x.tobytes())
        block: dict = {}
        # (best = ub / (1 + 1e-6): _kkt_beaten's margin, so that a point estimated below ub is evaluated)
        if _kkt_beaten(A, x, ub / (1.0 + 1e-6), lo, block):
            continue
        _, st, lam = _kkt_point(A, k, x, block.get("U"), lo)
        carry(st, lam)
        done.append(k)
    return done
