"""The rank-1 problem, solved exactly (Asteris et al. 2014, §3.1).

For a single vector ``v``, ``max_{x in S_k^n} (v^T x)^2`` is attained on one of
the two supports ``I_k^+(v)`` and ``I_k^+(-v)``: the k largest nonnegative
entries of ``v`` or of ``-v``.  On a support ``I`` the best unit ``x`` is
``x_I = ±v_I / ||v_I||`` (Cauchy–Schwarz), nonnegative by the choice of ``I``.
"""

from __future__ import annotations

import numpy as np

from ._validation import InputError, check_k, check_vector

__all__ = ["topk_nonneg", "rank1_nspca"]


def _topk_nonneg(v: np.ndarray, k: int) -> np.ndarray:
    """Unvalidated :func:`topk_nonneg`."""
    nonneg = np.flatnonzero(v >= 0)
    if nonneg.size > k:
        # stable sort on -v: ties at the k-th value go to the lower index
        order = np.argsort(-v[nonneg], kind="stable")[:k]
        nonneg = np.sort(nonneg[order])
    return nonneg


def topk_nonneg(v, k) -> np.ndarray:
    """``I_k^+(v)``: indices of the (at most) k largest nonnegative entries of ``v``.

    Parameters
    ----------
    v : array_like of shape (n,)
    k : int in [1, n]

    Returns
    -------
    ndarray of int
        Sorted indices; fewer than ``k`` when ``v`` has fewer than ``k``
        nonnegative entries.  Ties at the k-th value go to the lower index.
    """
    v = check_vector(v, "v")
    k = check_k(k, v.size)
    return _topk_nonneg(v, k)


def _unit(u: np.ndarray) -> tuple[np.ndarray, float]:
    """``(u / ||u||, ||u||)`` for ``u != 0``, scaled by the largest entry first: tiny entries'
    squares would underflow (``[1e-162]`` gave a norm off by 0.3%, two subnormals a
    direction of norm sqrt 2)."""
    m = float(np.abs(u).max())
    w = u / m
    s = float(np.linalg.norm(w))
    return w / s, m * s


def _rank1_nspca(v: np.ndarray, k: int) -> np.ndarray:
    """Unvalidated :func:`rank1_nspca`."""
    best_x, best_norm = None, -1.0
    for sign in (1.0, -1.0):
        idx = _topk_nonneg(sign * v, k)
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


def rank1_nspca(v, k) -> np.ndarray:
    """Solve ``max (v^T x)^2`` over unit ``x >= 0`` with at most ``k`` nonzeros.

    Parameters
    ----------
    v : array_like of shape (n,)
    k : int in [1, n]

    Returns
    -------
    x : ndarray of shape (n,)
        Nonnegative, unit norm, at most ``k`` nonzeros; ``x_I = ±v_I/||v_I||``
        on the better of ``I_k^+(v)`` and ``I_k^+(-v)``.  For ``v = 0`` every
        feasible point is optimal and ``e_0`` is returned.

    Notes
    -----
    Asteris, Papailiopoulos & Dimakis, "Nonnegative Sparse PCA with Provable
    Guarantees", ICML 2014, §3.1.
    """
    v = check_vector(v, "v")
    k = check_k(k, v.size)
    return _rank1_nspca(v, k)
