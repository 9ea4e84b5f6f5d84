"""A covariance given either as data ``X`` (m x n, ``A = X^T X / m``) or as ``A``.

Solvers take one of these so that, when ``m < n``, they work through ``X``
without forming the n x n matrix.
"""

from __future__ import annotations

import numpy as np

from ._validation import check_data_or_cov

__all__ = ["Cov", "as_cov"]


class Cov:
    """Covariance operator.  Build with :func:`as_cov` (which validates)."""

    def __init__(self, X: np.ndarray | None = None, A: np.ndarray | None = None):
        self.X = X
        self._A = A
        self.n = X.shape[1] if X is not None else A.shape[0]
        self.m = X.shape[0] if X is not None else None

    @property
    def thin(self) -> bool:
        """True when data with fewer samples than features is held (never form A)."""
        return self.X is not None and self.X.shape[0] < self.n

    def dense(self) -> np.ndarray:
        """The n x n covariance (formed and cached on first use)."""
        if self._A is None:
            self._A = (self.X.T @ self.X) / self.X.shape[0]
        return self._A

    def matvec(self, v: np.ndarray) -> np.ndarray:
        """``A @ v`` for v of shape (n,) or (n, p); through X when thin.  Only the rows of v
        that hold a nonzero enter the product (sparse iterates of the ascent cost O(k))."""
        rows = _used_rows(v)
        if self._A is None and self.thin:
            Xv = self.X @ v if rows is None else self.X[:, rows] @ v[rows]
            return self.X.T @ Xv / self.X.shape[0]
        A = self.dense()
        return A @ v if rows is None else A[:, rows] @ v[rows]

    def quad(self, x: np.ndarray) -> float:
        """``x^T A x``."""
        if self._A is None and self.thin:
            y = self.X @ x
            return float(y @ y) / self.X.shape[0]
        return float(x @ (self.dense() @ x))

    def quads(self, x: np.ndarray) -> np.ndarray:
        """``diag(x^T A x)`` for the columns of x (n, p)."""
        if self._A is None and self.thin:
            rows = _used_rows(x)
            y = self.X @ x if rows is None else self.X[:, rows] @ x[rows]
            return np.einsum("ij,ij->j", y, y) / self.X.shape[0]
        return np.einsum("ij,ij->j", x, self.dense() @ x)

    def submatrix(self, idx) -> np.ndarray:
        """``A[idx][:, idx]``, from the columns of X when data is held."""
        idx = np.asarray(idx, dtype=int)
        if self._A is None and self.X is not None:
            Xi = self.X[:, idx]
            return (Xi.T @ Xi) / self.X.shape[0]
        return self.dense()[np.ix_(idx, idx)]

    def diag(self) -> np.ndarray:
        """The variances ``diag(A)``."""
        if self._A is None and self.X is not None:
            return np.einsum("ij,ij->j", self.X, self.X) / self.X.shape[0]
        return np.diag(self.dense()).copy()

    def trace(self) -> float:
        return float(self.diag().sum())

    def factor(self, d: int):
        """``(V, eigenvalues)`` of :func:`nspca_core.lowrank_factor`."""
        from .lowrank import lowrank_factor

        if self.thin and self._A is None:
            return lowrank_factor(self.X, d=d)
        return lowrank_factor(cov=self.dense(), d=d)  # A formed once, shared with the solvers


def _used_rows(v: np.ndarray):
    """Indices of the rows of v holding a nonzero, when fewer than half of them do; else None."""
    used = v.any(axis=1) if v.ndim == 2 else v != 0
    count = int(np.count_nonzero(used))
    return np.flatnonzero(used) if count < 0.5 * used.size else None


def as_cov(X=None, cov=None) -> Cov:
    """Validate exactly one of ``X``/``cov`` and wrap it."""
    X, A = check_data_or_cov(X, cov)
    return Cov(X, A)
