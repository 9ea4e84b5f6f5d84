"""Variance accounting for several (possibly non-orthogonal) components."""

from __future__ import annotations

import numpy as np

from ._cov import Cov

__all__ = ["variance_summary"]


def variance_summary(cov: Cov, loadings: np.ndarray):
    """Per-component, cumulative and additional variance of the columns of ``loadings``.

    Returns
    -------
    variance : ndarray (r,)
        ``x_j^T A x_j``.
    cumulative : ndarray (r,)
        ``trace(Q_j^T A Q_j)`` with ``Q_j`` an orthonormal basis of the span of
        the first j loadings: the variance of the data projected on that span.
    additional : ndarray (r,)
        ``diff(cumulative)`` with ``additional[0] = cumulative[0]``: what each
        component adds after the earlier ones are projected out (nsprcomp's
        ``asdev**2``).  Never double counts.
    """
    L = np.asarray(loadings, dtype=float)
    variance = cov.quads(L) if L.size else np.zeros(0)
    r = L.shape[1]
    cumulative = np.zeros(r)
    Q = np.zeros((L.shape[0], 0))
    total = 0.0
    for j in range(r):
        # Gram–Schmidt step (twice, for stability) of column j against Q
        q = L[:, j].copy()
        for _ in range(2):
            q -= Q @ (Q.T @ q)
        nq = np.linalg.norm(q)
        if nq > 1e-10 * max(1.0, np.linalg.norm(L[:, j])):
            q /= nq
            total += cov.quad(q)
            Q = np.column_stack([Q, q])
        cumulative[j] = total
    additional = np.diff(cumulative, prepend=0.0)
    return variance, cumulative, additional
