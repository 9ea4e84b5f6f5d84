"""The top eigenvalues (and eigenvectors) of a symmetric matrix, without LAPACK's subset failures.

``scipy.linalg.eigh(subset_by_index=...)`` runs LAPACK's ``syevr``, which on some matrices with
clustered eigenvalues (equicorrelated covariances, the dual matrices built from them) raises
``LinAlgError: Internal Error``.  :func:`top_eigh` tries it first (so a result that did not fail is
unchanged) and falls back to the full divide-and-conquer solver ``syevd``.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

__all__ = ["top_eigh", "top_eigvalsh_upper"]


def top_eigh(M: np.ndarray, count: int, *, eigvals_only: bool = False, check_finite: bool = True):
    """The ``count`` largest eigenvalues of the symmetric ``M`` in ASCENDING order (as ``eigh``
    with ``subset_by_index=[n - count, n - 1]`` returns them), with their eigenvectors as columns
    unless ``eigvals_only``.  Both solvers are backward stable: each computed eigenvalue is within
    ``O(n eps ||M||)`` of an exact one either way."""
    n = M.shape[0]
    try:
        return scipy.linalg.eigh(M, subset_by_index=[n - count, n - 1], eigvals_only=eigvals_only,
                                 check_finite=check_finite)
    except np.linalg.LinAlgError:
        out = scipy.linalg.eigh(M, eigvals_only=eigvals_only, driver="evd", check_finite=check_finite)
    if eigvals_only:
        return out[n - count:]
    w, U = out
    return w[n - count:], U[:, n - count:]


def top_eigvalsh_upper(M: np.ndarray, count: int) -> np.ndarray:
    """Numbers at or above the ``count`` largest eigenvalues of the symmetric ``M``, DESCENDING,
    up to the rounding of an eigensolver (the caller adds its allowance): :func:`top_eigh`, or
    when even the full solver fails, Gershgorin's bound ``max_i sum_j |M_ij|`` (every eigenvalue
    lies in a disc ``|lambda - M_ii| <= sum_{j != i} |M_ij|``), rounded up by ``(1 + 2 n eps)``
    for the n additions, repeated ``count`` times: looser, still an upper bound."""
    try:
        return top_eigh(M, count, eigvals_only=True, check_finite=False)[::-1]
    except np.linalg.LinAlgError:
        n = M.shape[0]
        g = float(np.abs(M).sum(axis=1).max()) * (1 + 2 * n * np.finfo(float).eps)
        return np.full(count, g)
