"""Variance accounting for several (possibly non-orthogonal) components, and the one
constructor of a :class:`~nspca_core.result.ComponentsResult` (:func:`components_result`)."""

from __future__ import annotations

import time

import numpy as np

from ..operators.cov import Cov
from ..result import ComponentsResult

__all__ = ["variance_summary", "components_result"]


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


def components_result(cov: Cov, loadings: np.ndarray, *, method: str, strategy: str, params: dict, t0: float,
                      results: list, info: dict, upper_bound: float = float("nan"),
                      bound_kind: str = "") -> ComponentsResult:
    """The :class:`ComponentsResult` of the columns of ``loadings`` — every strategy and peer builds
    its result here: the variances on ``cov`` (:func:`variance_summary`), each support the
    nonzeros of its column, ``seconds`` since ``t0``."""
    variance, cumulative, additional = variance_summary(cov, loadings)
    return ComponentsResult(loadings=loadings, variance=variance, cumulative_variance=cumulative,
                            additional_variance=additional,
                            supports=[np.flatnonzero(loadings[:, j]) for j in range(loadings.shape[1])],
                            method=method, strategy=strategy, params=params, seconds=time.perf_counter() - t0,
                            results=results, info=info, upper_bound=upper_bound, bound_kind=bound_kind)
