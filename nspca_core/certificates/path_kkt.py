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

from .dnn import _ritz
from .dual_start import _KKT_EST_MIN_N, _KKT_EST_R, _KKT_EST_STEPS, _KKT_USEFUL, _kkt_beaten, _kkt_point


def _kkt_beaten_early(A: np.ndarray, x: np.ndarray, best: float, lower: float) -> bool:
    """A cheaper first look at :func:`.dual_start._kkt_beaten`'s question, for the path only: True where a
    Ritz value of ``A + N`` (``N`` = :func:`.dual_start.kkt_init`'s, rank 2) already says the KKT point is
    not worth its evaluation.  ``N = u x^T + x u^T`` (``u``: ``(A x)^-`` off x's support) is applied as
    ``(a a^T - b b^T) / 2`` with ``a, b = u +- x`` (no n x n matrix), and the block steps stop as soon as
    their top Ritz value decides: each step keeps the previous block in its basis, so that value only
    grows with the steps, and ``_kkt_beaten``'s two tests (``est >= best (1 + 1e-6)``,
    ``lower < _KKT_USEFUL est``) stay true once true.  Ritz values are Rayleigh quotients, below
    ``lambda_max(A + N)`` whatever the rounding of the product (the 1e-6 margin covers it).  False means
    "ask ``_kkt_beaten``", which then decides as certify(k) does, with its block for the evaluation."""
    n = A.shape[0]
    I = x > 0
    if n < _KKT_EST_MIN_N or not I.any() or I.all():
        return False
    u = np.where(I, 0.0, np.maximum(-(A @ x), 0.0))
    v = np.where(I, x, 0.0)
    L = np.column_stack([u + v, u - v])
    lw = np.array([-0.5, 0.5])  # the operator A - L diag(lw) L^T = A + N
    U = np.column_stack([x, np.random.default_rng(0).standard_normal((n, _KKT_EST_R - 1))])
    for _ in range(_KKT_EST_STEPS):
        w, U = _ritz(A, U, _KKT_EST_R, L=L, lw=lw)
        est = float(w[0])
        if est >= best * (1.0 + 1e-6) or lower < _KKT_USEFUL * est:
            return True
    return False


def kkt_carry(A: np.ndarray, uniq: np.ndarray, pos: dict, lows: np.ndarray, LX: np.ndarray, upper, carry) -> list:
    """At each k of ``uniq`` whose bound is open (``lows < upper()``: every open gap, not only below an
    accepted ratio, so that a path already closer at some k carries the same points as one further away),
    the KKT dual point of the path's feasible point ``LX[:, i]`` (:func:`.dual_start._kkt_point`, the
    evaluation certify(k) makes from the same x, lower value and block) where a Ritz value of its matrix
    (below its ``lambda_max``) is below the path's bound (:func:`.dual_start._kkt_beaten`: elsewhere it
    cannot lower it); each point is given to ``carry(state, lam)``.  One evaluation per distinct point.
    Returns the k evaluated."""
    done: list = []
    seen: set = set()
    for k in uniq:
        k = int(k)
        i = pos[k]
        lo, ub = float(lows[i]), float(upper()[i])
        x = LX[:, i]
        if not (0 < lo < ub) or x.tobytes() in seen:
            continue
        seen.add(x.tobytes())
        block: dict = {}
        # (best = ub / (1 + 1e-6): _kkt_beaten's margin, so that a point estimated below ub is evaluated)
        if (_kkt_beaten_early(A, x, ub / (1.0 + 1e-6), lo)
                or _kkt_beaten(A, x, ub / (1.0 + 1e-6), lo, block)):
            continue
        _, st, lam = _kkt_point(A, k, x, block.get("U"), lo)
        carry(st, lam)
        done.append(k)
    return done
