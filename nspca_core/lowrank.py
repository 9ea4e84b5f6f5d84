"""Top-d factor ``V = U_d Λ_d^{1/2}`` of the covariance, so ``A_d = V V^T``."""

from __future__ import annotations

import numpy as np
import scipy.linalg

from ._validation import check_d, check_data_or_cov

__all__ = ["lowrank_factor"]


def _flip_signs(U: np.ndarray) -> np.ndarray:
    """Deterministic signs: the largest-magnitude entry of each column is positive."""
    if U.size == 0:
        return U
    rows = np.argmax(np.abs(U), axis=0)
    signs = np.sign(U[rows, np.arange(U.shape[1])])
    signs[signs == 0] = 1.0
    return U * signs


def _top_eigh(A: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Top ``count`` eigenpairs of symmetric ``A``, descending."""
    n = A.shape[0]
    count = min(count, n)
    w, U = scipy.linalg.eigh(A, subset_by_index=[n - count, n - 1])
    return w[::-1], U[:, ::-1]


def lowrank_factor(X=None, *, cov=None, d):
    """Top-d factor of the covariance.

    Parameters
    ----------
    X : array_like of shape (m, n), optional
        Data, used as given: the covariance is ``A = X^T X / m`` (center first).
    cov : array_like of shape (n, n), optional
        The covariance itself (symmetric PSD).  Give exactly one of X, cov.
    d : int in [1, n]

    Returns
    -------
    V : ndarray of shape (n, d)
        ``U_d Λ_d^{1/2}`` with ``A_d = V V^T`` the best rank-d approximation.
        Column signs are fixed (largest-magnitude entry positive).
    eigenvalues : ndarray of shape (d + 1,)
        ``λ_1 >= ... >= λ_{d+1}`` (``λ_{d+1} = 0`` when ``d = n`` or the rank
        is at most d), for the bounds ``OPT <= OPT_d + λ_{d+1}``.

    Notes
    -----
    From data with ``m < n`` only the m x m Gram matrix is formed (a thin
    problem of cost O(m^2 n)); the n x n covariance never is.  Otherwise the
    n x n covariance is formed and its top ``d + 1`` eigenpairs are computed
    (``scipy.linalg.eigh`` with ``subset_by_index``).  Eigenvalues below zero
    from rounding are clipped to zero.
    """
    X, A = check_data_or_cov(X, cov)
    n = X.shape[1] if X is not None else A.shape[0]
    d = check_d(d, n)
    if X is not None and X.shape[0] < n:
        m = X.shape[0]
        # X = P S Q^T; A = Q (S^2/m) Q^T.  Eigenvectors of A from the m x m Gram.
        G = (X @ X.T) / m
        w, P = _top_eigh(G, d + 1)
        w = np.clip(w, 0.0, None)
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = np.where(w > 0, 1.0 / np.sqrt(w * m), 0.0)
        U = (X.T @ P) * scale  # columns of zero eigenvalue become 0, harmless in V
    else:
        if A is None:
            A = (X.T @ X) / X.shape[0]
        w, U = _top_eigh(A, d + 1)
        w = np.clip(w, 0.0, None)
    U = _flip_signs(U[:, :d])
    if U.shape[1] < d:  # rank-deficient thin case (d >= m): pad with zero columns
        U = np.hstack([U, np.zeros((n, d - U.shape[1]))])
    eig = np.zeros(d + 1)
    eig[: w.size] = w[: d + 1]
    V = U * np.sqrt(eig[:d])
    return V, eig
