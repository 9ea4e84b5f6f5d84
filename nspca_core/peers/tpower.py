"""Truncated power method (Yuan & Zhang, JMLR 2013), with a nonnegative variant."""

from __future__ import annotations

import time
import warnings

import numpy as np

from .._common.ascent import ascent, cov_key, project, random_starts
from .._common.points import flip, leading_eigvec, make_result
from .._common.rank1 import rank1_point
from .._common.steps import TopK
from ..operators.cov import Cov
from .._common.validation import as_rng
from ..result import Result, seed_param

__all__ = ["tpower_pca", "tpower_starts", "tpower_from"]


def tpower_starts(v1: np.ndarray, k: int, key: np.ndarray, rng: np.random.Generator, restarts: int,
                  *, nonneg: bool = True, first: np.ndarray | None = None) -> np.ndarray:
    """The starts of :func:`tpower_pca` as columns: the k-truncation of the leading eigenvector
    ``v1``, the indicator of the k features of largest variance (``key < k``), then random
    (nonnegative) unit vectors drawn per rank of ``key`` (order-free).  ``first``: the first start
    already computed by the caller (``rank1_point(v1, k)``, nonneg)."""
    X0 = random_starts(key, rng, restarts, nonneg=nonneg)
    if first is None:
        first = rank1_point(v1, k) if nonneg else project(v1[:, None], k, key, signed=True)[:, 0]
    X0[:, 0] = first
    if restarts > 1:
        X0[:, 1] = (key < k) / np.sqrt(k)
    return X0


def tpower_pca(cov: Cov, k: int, *, seed=0, callback=None, nonneg=True, restarts=10,
               max_iter=1000, tol=1e-10) -> Result:
    """One k-sparse (nonnegative) component by the truncated power method.

    Parameters
    ----------
    cov : Cov
        Products ``A x`` go through ``X`` when the data are thin (never n x n).
    k : int in [1, n]
    seed : int or Generator
    callback : callable(done, total), optional
    nonneg : bool, default True
        Project ``A x`` on the nonnegative orthant before truncating.
    restarts : int >= 1, default 10
        Start 0 is the k-truncation of the leading eigenvector (the better sign,
        :func:`rank1_nspca`), start 1 the indicator of the k largest variances
        ``diag(A)``, the others random nonnegative (signed) unit vectors.
    max_iter : int, default 1000
    tol : float in (0, 1), default 1e-10
        A start stops when its support is unchanged and ``|x_{t+1}^T x_t| > 1 - tol``.

    Returns
    -------
    Result
        ``method="tpower"``.

    Notes
    -----
    X.-T. Yuan and T. Zhang, "Truncated Power Method for Sparse Eigenvalue
    Problems", JMLR 14 (2013), Alg. 1 (TPower): ``x_{t+1} = Truncate(A x_t, k) /
    ||.||``.  Nonnegative variant: ``Truncate`` keeps the k largest entries of
    ``(A x_t)_+``.  Each step does not decrease ``x^T A x`` (A PSD: by
    convexity, ``f(y) >= f(x) + 2 (Ax)^T (y - x)`` and ``y`` maximizes
    ``(Ax)^T y`` over the feasible set).  Starts run vectorized as the columns
    of one n x restarts matrix.
    """
    t0 = time.perf_counter()
    return tpower_from(cov, leading_eigvec(cov), k, as_rng(seed), t0=t0, seed=seed, callback=callback,
                       stacklevel=2, nonneg=nonneg, restarts=restarts, max_iter=max_iter, tol=tol)


def tpower_from(cov: Cov, v1: np.ndarray, k: int, rng: np.random.Generator, *, t0: float, seed,
                callback, nonneg: bool, restarts: int, max_iter: int, tol: float,
                stacklevel: int = 2) -> Result:
    """The truncated power method on validated arguments, started from the leading eigenvector
    ``v1``: the starts of :func:`tpower_starts`, one batched ascent, the best start as a Result.

    :func:`tpower_pca` ends here; a caller with its own leading eigenvector can start here.
    ``stacklevel`` of the non-convergence warning is the one the caller would give
    :func:`warnings.warn` itself (2: the warning points at the caller's caller).
    """
    key = cov_key(cov)
    X0 = tpower_starts(v1, k, key, rng, restarts, nonneg=nonneg)
    r = ascent(cov.matvec, X0, k, step=TopK(signed=not nonneg), key=key, max_iter=max_iter, xtol=tol,
               merge=False)
    W, conv, it = r.X, r.converged, r.iterations
    vals = r.values
    best = int(np.argmax(vals))
    x = W[:, best] if nonneg else flip(W[:, best])
    if not conv[best]:
        warnings.warn(f"tpower: the best start did not converge in max_iter={max_iter} iterations",
                      RuntimeWarning, stacklevel=stacklevel + 1)
    if callback is not None:
        callback(restarts, restarts)
    params = dict(k=k, random_state=seed_param(seed),
                  nonneg=nonneg, restarts=restarts, max_iter=max_iter, tol=tol)
    info = dict(restart_variances=vals.tolist(), best_restart=best, iterations=int(it))
    return make_result(cov, x, method="tpower", params=params, t0=t0, converged=bool(conv[best]),
                       info=info)
