"""The rank-1 problem, solved exactly (Asteris et al. 2014, §3.1).

For a single vector ``v``, ``max_{x in S_k^n} (v^T x)^2`` is attained on one of
the two supports ``I_k^+(v)`` and ``I_k^+(-v)``: the k largest nonnegative
entries of ``v`` or of ``-v``.  On a support ``I`` the best unit ``x`` is
``x_I = ±v_I / ||v_I||`` (Cauchy–Schwarz), nonnegative by the choice of ``I``.
"""

from __future__ import annotations

import numpy as np

from ._common.rank1 import rank1_point, topk_support
from ._common.validation import check_k, check_vector

__all__ = ["topk_nonneg", "rank1_nspca"]


def _checked(v, k) -> tuple[np.ndarray, int]:
    v = check_vector(v, "v")
    return v, check_k(k, v.size)


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
    return topk_support(*_checked(v, k))


def rank1_nspca(v, k) -> np.ndarray:
    """Solve ``max (v^T x)^2`` over unit ``x >= 0`` with at most ``k`` nonzeros.

    Parameters
    ----------
    v : array_like of shape (n,)
        The vector of the rank-1 matrix ``v v^T``.
    k : int in [1, n]
        Maximum number of nonzeros.

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
    return rank1_point(*_checked(v, k))
