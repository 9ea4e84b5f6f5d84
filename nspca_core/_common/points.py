"""Unit points of the solvers: a deterministic sign, the leading eigenvector, a :class:`Result`."""

from __future__ import annotations

import time

import numpy as np
import scipy.linalg

from .._cov import Cov
from ..result import Result

__all__ = ["flip", "make_result", "leading_eigvec"]


def flip(x: np.ndarray) -> np.ndarray:
    """Deterministic sign for signed vectors: largest-magnitude entry positive."""
    i = int(np.argmax(np.abs(x)))
    return -x if x[i] < 0 else x


def make_result(cov: Cov, x: np.ndarray, *, method: str, params: dict, t0: float,
                converged: bool = True, info: dict | None = None) -> Result:
    """A :class:`Result` whose variance is ``x^T A x`` on ``cov`` itself."""
    x = np.asarray(x, dtype=float).copy()
    x[np.abs(x) <= 1e-15 * max(1.0, np.abs(x).max())] = 0.0
    nrm = np.linalg.norm(x)
    if nrm > 0:
        x /= nrm
    support = np.flatnonzero(x)
    var = cov.quad(x)
    return Result(x=x, support=support, variance=var, variance_lowrank=var, method=method,
                  params=params, seconds=time.perf_counter() - t0, converged=bool(converged),
                  info=dict(info or {}))


def leading_eigvec(cov: Cov) -> np.ndarray:
    """Leading eigenvector of A (from the m x m Gram when thin; never n x n then)."""
    if cov.thin:
        X = cov.X
        G = X @ X.T
        m = G.shape[0]
        _, P = scipy.linalg.eigh(G, subset_by_index=[m - 1, m - 1])
        u = X.T @ P[:, 0]
    elif cov.X is None and cov._A is None:  # an operator (sparse data, ...): Lanczos
        u = cov.factor(1)[0][:, 0]
    else:
        A = cov.dense()
        n = A.shape[0]
        _, U = scipy.linalg.eigh(A, subset_by_index=[n - 1, n - 1])
        u = U[:, 0]
    nrm = np.linalg.norm(u)
    if nrm == 0:
        u = np.zeros(cov.n)
        u[0] = 1.0
        return u
    return flip(u / nrm)
