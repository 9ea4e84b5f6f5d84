"""Unit points of the solvers: a deterministic sign, the leading eigenvector, a :class:`Result`."""

from __future__ import annotations

import time

import numpy as np

from ..operators.cov import Cov
from .eig import top_eigh
from ..result import Result

__all__ = ["flip", "make_result", "point_result", "leading_eigvec", "ZERO_FRACTION"]


def flip(x: np.ndarray) -> np.ndarray:
    """Deterministic sign for signed vectors: largest-magnitude entry positive."""
    i = int(np.argmax(np.abs(x)))
    return -x if x[i] < 0 else x


#: an entry within this fraction of a point's largest (in magnitude) is rounding: zero
ZERO_FRACTION = 1e-15


def point_result(x: np.ndarray, variance: float, *, method: str, params: dict, t0: float,
                 variance_lowrank: float | None = None, converged: bool = True, info: dict | None = None) -> Result:
    """The one constructor of a :class:`Result`: ``x`` as given, its support (the nonzeros),
    ``variance`` (``variance_lowrank`` the same unless given), ``seconds`` since ``t0``."""
    variance = float(variance)
    return Result(x=x, support=np.flatnonzero(x), variance=variance,
                  variance_lowrank=variance if variance_lowrank is None else float(variance_lowrank),
                  method=method, params=params, seconds=time.perf_counter() - t0, converged=bool(converged),
                  info=dict(info or {}))


def make_result(cov: Cov, x: np.ndarray, *, method: str, params: dict, t0: float,
                converged: bool = True, info: dict | None = None, V: np.ndarray | None = None,
                nonneg: bool = False) -> Result:
    """The :class:`Result` of a solver's point ``x`` (:func:`point_result`), cleaned one way: with
    ``nonneg`` negative entries become 0; an entry at most ``ZERO_FRACTION`` of the largest
    magnitude (or of 1) is 0; then unit norm.  ``variance = x^T A x`` on ``cov`` itself;
    ``variance_lowrank = ||V^T x||^2`` when the solver worked on the factor ``V``."""
    x = np.asarray(x, dtype=float).copy()
    if nonneg:
        x[x < 0] = 0.0
    x[np.abs(x) <= ZERO_FRACTION * max(1.0, np.abs(x).max(initial=0.0))] = 0.0
    nrm = np.linalg.norm(x)
    if nrm > 0:
        x /= nrm
    var = cov.quad(x)
    low = None
    if V is not None:
        support = np.flatnonzero(x)
        z = V[support].T @ x[support]
        low = float(z @ z)
    return point_result(x, var, method=method, params=params, t0=t0, variance_lowrank=low, converged=converged,
                        info=info)


def leading_eigvec(cov: Cov) -> np.ndarray:
    """Leading eigenvector of A (from the m x m Gram when thin; never n x n then)."""
    if cov.thin:
        X = cov.X
        G = X @ X.T
        _, P = top_eigh(G, 1)
        u = X.T @ P[:, 0]
    elif cov.X is None and cov._A is None:  # an operator (sparse data, ...): Lanczos
        u = cov.factor(1)[0][:, 0]
    else:
        A = cov.dense()
        _, U = top_eigh(A, 1)
        u = U[:, 0]
    nrm = np.linalg.norm(u)
    if nrm == 0:
        u = np.zeros(cov.n)
        u[0] = 1.0
        return u
    return flip(u / nrm)
