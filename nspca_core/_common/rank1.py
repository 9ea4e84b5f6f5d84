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

__all__ = ["topk_support", "rank1_point", "rank1_points"]

# rank1_points sorts whole columns (n log n) up to this many entries; above, rank1_point per column
# (a partition) costs less than the calls it saves
_SORT_MAX_N = 1024


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


def _first_k_rows(U: np.ndarray, k: int) -> np.ndarray:
    """``np.sort(np.argsort(-U, axis=0, kind="stable")[:k], axis=0)`` for finite U (n, q), ``1 <= k <= n``:
    the rows of each column's k largest entries, ties at the k-th value to the lower index, in
    increasing order, from one partition instead of a sort (the same integers).  The entries above
    the k-th largest t are kept, then the first of those equal to t (a stable order of ``-U`` ranks
    equal entries by index)."""
    n, q = U.shape
    t = order_statistic(U, n - k)
    M = U >= t
    if np.count_nonzero(M) != k * q:  # a tie at the k-th value in some column (rare)
        eq = U == t
        need = k - np.count_nonzero(U > t, axis=0)
        M &= ~eq | (np.cumsum(eq, axis=0) <= need)
    return np.divmod(np.flatnonzero(M.T), n)[1].reshape(q, k).T


def rank1_points(W: np.ndarray, k: int) -> np.ndarray:
    """``rank1_point`` of each column of ``W`` (n, c) as the columns of one matrix, the same floats.

    Up to ``_SORT_MAX_N`` entries (finite) from one stable sort of both signs: the first k rows of the
    stable order of ``-w`` are the k largest entries of w with ties at the k-th value to the lower
    index, the entries ``I_k^+(w)`` keeps once its negatives are left out (at most k nonnegative
    entries: all of them), and each support, in index order, is normalized as ``rank1_point`` does
    (:func:`_unit`).  For few small columns (auto's factor starts, issue 39) the Python calls of two
    selections per column cost more than the sort."""
    n, c = W.shape
    if n > _SORT_MAX_N or not np.isfinite(W).all():
        return np.column_stack([rank1_point(W[:, j], k) for j in range(c)]) if c else np.zeros((n, 0))
    U = np.concatenate([W, -W], axis=1)  # column j + c: the sign -1 of column j
    top = _first_k_rows(U, k)
    out = np.zeros((n, c))
    for j in range(c):
        best, best_norm = None, -1.0
        for h in (j, j + c):  # sign +1 first: it keeps a tie of the norms, as in rank1_point
            idx = top[:, h]
            u = U[idx, h]
            keep = u >= 0
            if not keep.all():
                idx, u = idx[keep], u[keep]
            if idx.size == 0 or not u.any():
                continue
            direction, norm = _unit(u)
            if norm > best_norm:
                best_norm, best = norm, (idx, direction)
        if best is None:  # a zero column: the first basis vector
            out[0, j] = 1.0
        else:
            out[best[0], j] = best[1]
    return out
