"""The rank-1 problem on clean input (Asteris et al. 2014, §3.1): the kernels behind
:func:`nspca_core.topk_nonneg` and :func:`nspca_core.rank1_nspca`, which validate and call them.

For a single vector ``v``, ``max_{x in S_k^n} (v^T x)^2`` is attained on one of
the two supports ``I_k^+(v)`` and ``I_k^+(-v)``: the k largest nonnegative
entries of ``v`` or of ``-v``.  On a support ``I`` the best unit ``x`` is
``x_I = ±v_I / ||v_I||`` (Cauchy–Schwarz), nonnegative by the choice of ``I``.
"""

from __future__ import annotations

import numpy as np

from .steps import order_statistic

__all__ = ["topk_support", "rank1_point"]


def topk_support(v: np.ndarray, k: int) -> np.ndarray:
    """``I_k^+(v)`` of a vector ``v`` and an int ``k`` in ``[1, v.size]`` (:func:`nspca_core.topk_nonneg`)."""
    nonneg = np.flatnonzero(v >= 0)
    if nonneg.size > k:
        # the k largest, ties at the k-th value to the lower index (as a stable sort on -v would
        # give them), from one partition: the entries above the k-th value, then the first of
        # those equal to it
        w = v[nonneg]
        t = order_statistic(w, w.size - k)
        above = w > t
        tied = np.flatnonzero(w == t)[:k - np.count_nonzero(above)]
        above[tied] = True
        nonneg = nonneg[above]
    return nonneg



def _unit(u: np.ndarray) -> tuple[np.ndarray, float]:
    """``(u / ||u||, ||u||)`` for ``u != 0``, scaled by the largest entry first: tiny entries'
    squares would underflow (``[1e-162]`` gave a norm off by 0.3%, two subnormals a
    direction of norm sqrt 2)."""
    m = float(np.abs(u).max())
    w = u / m
    s = float(np.linalg.norm(w))
    return w / s, m * s


def rank1_point(v: np.ndarray, k: int) -> np.ndarray:
    """The rank-1 optimum of a vector ``v`` and an int ``k`` in ``[1, v.size]`` (:func:`nspca_core.rank1_nspca`)."""
    best_x, best_norm = None, -1.0
    for sign in (1.0, -1.0):
        idx = topk_support(sign * v, k)
        if idx.size == 0 or not np.any(v[idx]):
            continue
        direction, norm = _unit(sign * v[idx])
        if norm > best_norm:  # argmax of (v^T x)^2 = ||v_I||^2
            best_norm, best_x = norm, (idx, direction)
    x = np.zeros(v.size)
    if best_x is not None:
        idx, direction = best_x
        x[idx] = direction
    else:  # v == 0: every feasible x has value 0; return the first basis vector
        x[0] = 1.0
    return x

