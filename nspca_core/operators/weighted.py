"""Weighted covariance of ``scipy.sparse`` data, centered implicitly, never densified.

For data ``X`` (m x n, sparse) and sample weights ``w >= 0`` (``sum w > 0``) the
operator is

    A = X^T W X / sum(w) - mu_w mu_w^T,    mu_w = X^T w / sum(w)     (``center=True``)
    A = X^T W X / sum(w)                                             (``center=False``)

with ``W = diag(w)``: the covariance of the samples repeated in proportion to
their weights (R ``nsprcomp``'s ``omega``; scikit-learn's ``sample_weight``).
It has the interface of :class:`nspca_core.operators.sparse.SparseCov`: every product
goes through the sparse ``X``, the weights and the mean, so memory stays
O(nnz(X) + m + n d) and ``X`` is neither copied nor densified.

The "centered data" of this operator (what :meth:`WeightedSparseCov.data_matvec`
applies, and what the Gram and ``svds`` factor paths of ``SparseCov`` use) is
``Xc = S (X - 1 mu_w^T)`` with ``S = diag(sqrt(m w / sum(w)))``, so that
``Xc^T Xc / m = A`` exactly as for the unweighted operator.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._common.params import check
from .sparse import DENSE_BUDGET_BYTES, SparseCov, _check_sparse, check_dense_budget
from .._common.validation import InputError

__all__ = ["WeightedSparseCov", "weighted_sparse_cov", "check_sample_weight"]


def check_sample_weight(sample_weight, m: int) -> np.ndarray:
    """``sample_weight`` as m finite floats >= 0, not all zero, or :class:`InputError`."""
    try:
        w = np.asarray(sample_weight, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"`sample_weight` must hold {m} finite weights >= 0, not all zero; got "
                         f"{type(sample_weight).__name__} that is not numeric ({exc})") from None
    if w.shape != (m,):
        raise InputError(f"`sample_weight` must hold {m} finite weights >= 0, not all zero; got shape "
                         f"{w.shape}")
    if not np.all(np.isfinite(w)):
        what = f"{int((~np.isfinite(w)).sum())} NaN/inf weight(s)"
    elif (w < 0).any():
        what = f"{int((w < 0).sum())} negative weight(s), the first {w[w < 0][0]:g}"
    elif not w.sum() > 0:
        what = "all weights zero"
    else:
        return w
    raise InputError(f"`sample_weight` must hold {m} finite weights >= 0, not all zero; got {what}")


class WeightedSparseCov(SparseCov):
    """Weighted covariance operator of sparse data.  Build with :func:`weighted_sparse_cov`.

    Attributes (besides those of :class:`~nspca_core.operators.sparse.SparseCov`)
    ----------
    weights : ndarray (m,)
        The sample weights as given (not normalized).
    mean : ndarray (n,)
        The weighted column means ``mu_w`` (zeros when ``center=False``).

    Notes
    -----
    Memory: the sparse matrix as given (not copied), ``weights`` and the row
    factors ``sqrt(m w / sum w)`` (m floats each), ``mean`` and the cached
    ``diag`` (n floats each); a product with p columns forms one m x p and one
    n x p array.  ``columns(keep)`` (deflation) is the base class's index view: no copy.
    """

    def __init__(self, X_sparse, weights: np.ndarray, *, center: bool = True,
                 dense_budget: float = DENSE_BUDGET_BYTES):
        self.X = None
        self._A = None
        self.X_sparse = X_sparse
        self.m, self.n = X_sparse.shape
        self.center = bool(center)
        self.dense_budget = float(dense_budget)
        self.weights = np.asarray(weights, dtype=np.float64)
        self._wsum = float(self.weights.sum())
        self._p = self.weights / self._wsum  # sums to 1
        self._s = np.sqrt(self.m * self._p)  # row factors of the centered data
        if self.center:
            self.mean = np.asarray(X_sparse.T @ self._p, dtype=np.float64).ravel()
        else:
            self.mean = np.zeros(self.n)
        self._diag = None

    def _rows(self, factor: np.ndarray, a: np.ndarray) -> np.ndarray:
        """``diag(factor) @ a`` for a of shape (m,) or (m, p)."""
        return factor * a if a.ndim == 1 else factor[:, None] * a

    def data_matvec(self, v: np.ndarray) -> np.ndarray:
        """``Xc @ v = S (X v - 1 mu_w^T v)``, (m,) or (m, p)."""
        v = np.asarray(v, dtype=np.float64)
        return self._rows(self._s, np.asarray(self.X_sparse @ v) - (self.mean @ v))

    def data_rmatvec(self, u: np.ndarray) -> np.ndarray:
        """``Xc^T @ u = X^T (S u) - mu_w (1^T S u)``, (n,) or (n, p)."""
        su = self._rows(self._s, np.asarray(u, dtype=np.float64))
        return np.asarray(self.X_sparse.T @ su) - np.multiply.outer(self.mean, su.sum(axis=0))

    def matvec(self, v: np.ndarray) -> np.ndarray:
        """``A @ v = X^T (p * (X v)) - mu_w (mu_w^T v)`` with ``p = w / sum(w)``; A never formed."""
        v = np.asarray(v, dtype=np.float64)
        out = np.asarray(self.X_sparse.T @ self._rows(self._p, np.asarray(self.X_sparse @ v)))
        return out - np.multiply.outer(self.mean, self.mean @ v)

    def submatrix(self, idx) -> np.ndarray:
        """``A[idx][:, idx] = X_J^T W X_J / sum(w) - mu_J mu_J^T`` (a dense |J| x |J|)."""
        idx = np.asarray(idx, dtype=int)
        XJ = self.X_sparse[:, idx]
        G = XJ.T @ sp.diags(self._p) @ XJ
        G = G.toarray() if sp.issparse(G) else np.asarray(G)
        muJ = self.mean[idx]
        return np.asarray(G, dtype=np.float64) - np.outer(muJ, muJ)

    def diag(self) -> np.ndarray:
        """The weighted variances ``sum_i p_i x_ij^2 - mu_j^2`` (cached, n floats)."""
        if self._diag is None:
            sq = self.X_sparse.multiply(self.X_sparse)
            s2 = np.asarray(sq.T @ self._p, dtype=np.float64).ravel()
            self._diag = np.clip(s2 - self.mean ** 2, 0.0, None)
        return self._diag.copy()

    def dense(self) -> np.ndarray:
        """The n x n covariance, formed only when ``8 n^2`` bytes is within the budget."""
        if self._A is None:
            check_dense_budget(self.n, self.dense_budget, "sparse data")
            G = self.X_sparse.T @ sp.diags(self._p) @ self.X_sparse
            G = G.toarray() if sp.issparse(G) else np.asarray(G)
            A = np.asarray(G, dtype=np.float64) - np.outer(self.mean, self.mean)
            self._A = 0.5 * (A + A.T)
        return self._A


def weighted_sparse_cov(X, sample_weight, *, center: bool = True,
                        dense_budget: float = DENSE_BUDGET_BYTES) -> WeightedSparseCov:
    """Validate sparse data and weights and wrap them as a :class:`WeightedSparseCov`.

    Parameters
    ----------
    X : scipy.sparse matrix or array (m, n)
        CSR and CSC are used as given (other formats become CSR); never densified.
    sample_weight : array_like (m,)
        Finite weights >= 0, not all zero.
    center : bool, default True
        Weighted implicit centering ``A = X^T W X / sum(w) - mu_w mu_w^T``; False gives
        ``A = X^T W X / sum(w)``.

    Raises
    ------
    InputError
        Bad data (as :func:`nspca_core.operators.sparse.as_sparse_cov`) or bad weights.
    """
    center = check("center", center)
    X = _check_sparse(X)
    w = check_sample_weight(sample_weight, X.shape[0])
    return WeightedSparseCov(X, w, center=bool(center), dense_budget=dense_budget)
