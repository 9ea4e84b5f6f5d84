"""Truncated power method (Yuan & Zhang, JMLR 2013), with a nonnegative variant."""

from __future__ import annotations

import time
import warnings

import numpy as np

from .._cov import Cov
from .._validation import as_rng, check_int, check_k
from ..rank1 import _rank1_nspca
from ..result import Result
from .em import (_check_bool, _check_callback, _check_cov, _check_float, _col_norms, _flip,
                 _leading_eigvec, _make_result, _random_nonneg)

__all__ = ["tpower_pca"]


def _truncate(Y: np.ndarray, k: int, nonneg: bool) -> np.ndarray:
    """Column-wise truncation: (nonneg: project on the orthant, then) keep the k largest.

    Ties at the k-th value go to the lower index (a stable sort), so the map is
    deterministic.
    """
    n = Y.shape[0]
    Z = np.clip(Y, 0.0, None) if nonneg else Y
    if k >= n:
        return Z.copy()
    key = Z if nonneg else np.abs(Z)
    order = np.argsort(-key, axis=0, kind="stable")[:k]
    out = np.zeros_like(Z)
    cols = np.arange(Z.shape[1])[None, :]
    out[order, cols] = Z[order, cols]
    return out


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
    cov = _check_cov(cov)
    n = cov.n
    k = check_k(k, n)
    rng = as_rng(seed)
    callback = _check_callback(callback)
    nonneg = _check_bool(nonneg, "nonneg")
    restarts = check_int(restarts, "restarts", 1)
    max_iter = check_int(max_iter, "max_iter", 1)
    tol = _check_float(tol, "tol", 0.0, 1.0, high_open=True)

    if nonneg:
        X0 = _random_nonneg(rng, n, restarts)
    else:
        X0 = rng.standard_normal((n, restarts))
        X0 /= np.linalg.norm(X0, axis=0)
    v1 = _leading_eigvec(cov)
    X0[:, 0] = _rank1_nspca(v1, k) if nonneg else _truncate(v1[:, None], k, False)[:, 0]
    if restarts > 1:
        top = np.argsort(-cov.diag(), kind="stable")[:k]
        X0[:, 1] = 0.0
        X0[top, 1] = 1.0 / np.sqrt(k)
    X0 = _truncate(X0, k, nonneg)
    X0 /= _col_norms(X0)

    W = X0
    active = np.ones(restarts, dtype=bool)
    conv = np.zeros(restarts, dtype=bool)
    it = 0
    for it in range(1, max_iter + 1):
        cols = np.flatnonzero(active)
        if cols.size == 0:
            break
        Wa = W[:, cols]
        Wn = _truncate(cov.matvec(Wa), k, nonneg)
        nrm = _col_norms(Wn)
        stuck = nrm == 0  # (A x)_+ = 0: x^T A x = 0 already, nothing to follow
        nrm[stuck] = 1.0
        Wn = Wn / nrm
        Wn[:, stuck] = Wa[:, stuck]
        same_support = np.all((Wn != 0) == (Wa != 0), axis=0)
        done = (same_support & (np.abs(np.einsum("ij,ij->j", Wn, Wa)) > 1.0 - tol)) | stuck
        W[:, cols] = Wn
        conv[cols[done]] = True
        active[cols[done]] = False
    vals = cov.quads(W)
    best = int(np.argmax(vals))
    x = W[:, best] if nonneg else _flip(W[:, best])
    if not conv[best]:
        warnings.warn(f"tpower: the best start did not converge in max_iter={max_iter} iterations",
                      RuntimeWarning, stacklevel=2)
    if callback is not None:
        callback(restarts, restarts)
    params = dict(k=k, seed=seed if not isinstance(seed, np.random.Generator) else "Generator",
                  nonneg=nonneg, restarts=restarts, max_iter=max_iter, tol=tol)
    info = dict(restart_variances=vals.tolist(), best_restart=best, iterations=int(it))
    return _make_result(cov, x, method="tpower", params=params, t0=t0, converged=bool(conv[best]),
                        info=info)
