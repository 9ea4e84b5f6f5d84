"""A covariance given either as data ``X`` (m x n, ``A = X^T X / m``) or as ``A``.

Solvers take one of these so that, when ``m < n``, they work through ``X``
without forming the n x n matrix.
"""

from __future__ import annotations

import numpy as np

from .._common.params import check
from ..lowrank import flip_signs, lowrank_factor_clean

__all__ = ["Cov", "ProjectedCov", "DENSE_FACTOR_MAX_N", "gram"]

#: operators of at most this many features are factored densely (an n x n ``eigh``, 2 MB at 512)
DENSE_FACTOR_MAX_N = 512


# The last covariance formed from data held privately by an operator (``Cov.own_x``), kept for a
# certificate of the same data (``Cov.reuse_gram``): ``fit`` then ``certify`` of one X formed the same
# m x n x n product twice (issue 39: ~10% of CBCL's one-k certificate).  Reused only when the new data equal the kept
# ones entry for entry (then the product is the one that would be computed); the kept data are an
# operator's private copy (never the caller's array), the covariance is copied in and out.
_GRAM_KEEP_MAX_BYTES = 2**26  # data and covariance above this (64 MB) are not kept
_gram_kept: list = []  # [(X, A)]: at most one
#: a factor through X keeps its m x m Gram (:meth:`Cov.thin_gram`, for auto's random starts) while
#: m^2 <= this * n: then at most this many n floats (below this / m of X's own size)
THIN_GRAM_KEEP_RATIO = 72


def gram(X: np.ndarray, keep: bool = False, reuse: bool = False) -> np.ndarray:
    """``X^T X / m``: with ``reuse``, the kept covariance when X equals the kept data entry for
    entry; else computed (and kept when ``keep``: X is a private copy nobody modifies, and both fit
    in :data:`_GRAM_KEEP_MAX_BYTES`)."""
    kept = _gram_kept[0] if _gram_kept and reuse else None
    if kept is not None and _same_data(kept[0], X):
        return kept[1].copy()
    A = (X.T @ X) / X.shape[0]
    if keep and X.nbytes + A.nbytes <= _GRAM_KEEP_MAX_BYTES:
        _gram_kept[:] = [(X, A.copy())]
    return A


def _same_data(K: np.ndarray, X: np.ndarray) -> bool:
    """Whether X equals K entry for entry (same shape and dtype); the first row is compared first
    (other data differ there at once)."""
    if K is X:
        return True
    if K.shape != X.shape or K.dtype != X.dtype or X.size == 0:
        return False
    return bool(np.array_equal(K[0], X[0]) and np.array_equal(K, X))


class Cov:
    """Covariance operator.  Build with :func:`nspca_core.operators.covariance.as_cov` (which validates).

    ``center``/``mean``: whether column means were subtracted from the data, and which (None: nothing
    was subtracted — data used as given, or a covariance)."""

    center = False
    mean = None
    # X is a copy only this operator holds (a centered copy of the caller's data): its covariance
    # may be kept for the next operator of the same data (:func:`gram`)
    own_x = False
    # the kept covariance of the same data is taken (:func:`gram`): a certificate after ``fit``
    reuse_gram = False

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
            self._A = gram(self.X, keep=self.own_x, reuse=self.reuse_gram)
        return self._A

    def matvec(self, v: np.ndarray) -> np.ndarray:
        """``A @ v`` for v of shape (n,) or (n, p); through X when thin.  Only the rows of v
        that hold a nonzero enter the product (sparse iterates of the ascent cost O(k))."""
        if self._A is None and self.thin:
            rows = _used_rows(v)
            Xv = self.X @ v if rows is None else self.X[:, rows] @ v[rows]
            return self.X.T @ Xv / self.X.shape[0]
        A = self.dense()
        q = v.shape[1] if v.ndim == 2 else 1
        # gathering the r used rows costs about one pass over n r entries: it pays when the
        # product with the rest is larger (measured: r < n/3 for one column, 2n/3 for many)
        rows = _used_rows(v, min(0.75, q / (q + 2)))
        if rows is None:
            return A @ v
        At = self._columns_as_rows(A)
        return At[rows].T @ v[rows] if At is not None else A[:, rows] @ v[rows]

    def _columns_as_rows(self, A: np.ndarray):
        """A matrix whose rows are the columns of A: A itself when exactly symmetric, else a
        contiguous copy of A^T made once (an n x n copy: only up to 256 MB; None above, and the
        columns are gathered instead).  A gather of rows is several times faster than one of
        columns."""
        cached = getattr(self, "_At", None)
        if cached is None or cached[0] is not A:
            if np.array_equal(A, A.T):
                At = A
            else:
                At = np.ascontiguousarray(A.T) if A.nbytes <= 2**28 else None
            cached = (A, At)
            self._At = cached
        return cached[1]

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
        """``(V, eigenvalues)`` of :func:`nspca_core.lowrank_factor` (the input was validated
        when this Cov was built: no second check)."""

        d = check("d", d, n_features=self.n)
        # kept per d and route (through X while A is not formed, else from A: the two differ by rounding, so
        # the route of each call is the one it always took): a refit of the same operator at another k
        # (the app's slider, a path) reuses the eigenpairs; copies are handed out, the kept arrays never change
        key = (d, self.thin and self._A is None)
        kept = self.__dict__.setdefault("_factors", {})
        if key not in kept:
            if key[1]:
                gram: dict = {}
                kept[key] = lowrank_factor_clean(self.X, None, d, top=self._x_top(), keep=gram)
                if self.m * self.m <= THIN_GRAM_KEEP_RATIO * self.n:  # small: at most that many n floats
                    self._gram_thin = (self.X, gram)
            else:  # A formed once, shared with the solvers
                kept[key] = lowrank_factor_clean(None, self.dense(), d)
        V, eig = kept[key]
        return V.copy(order="K"), eig.copy()  # (the layout kept: BLAS rounds by it)

    def thin_gram(self):
        """``(G, s)``: the m x m Gram ``(X/s)(X/s)^T / m`` of the data held (``s`` a power of two) that a
        :meth:`factor` through X made, or None (none made yet, X replaced since, or m^2 above
        :data:`THIN_GRAM_KEEP_RATIO` n: not kept).  Read only."""
        kept = self.__dict__.get("_gram_thin")
        return (kept[1]["gram"], kept[1]["scale"]) if kept is not None and kept[0] is self.X else None

    def note_top(self, top: float) -> None:
        """Record ``max |X|`` of the data held (computed by the caller, e.g.
        :func:`~nspca_core._common.scale.normalized`), for the factor's scale: its pass over X is
        then not made again.  Kept with the array it belongs to (another X: not used)."""
        self._top = (self.X, float(top))

    def _x_top(self):
        """``max |X|`` as recorded by :meth:`note_top` for the data held now, else None."""
        kept = self.__dict__.get("_top")
        return kept[1] if kept is not None and kept[0] is self.X else None

    def columns(self, keep) -> "Cov":
        """The covariance of the features ``keep`` (``A[keep][:, keep]``), for deflation.

        Dense data: the kept columns of X (at most the data's size; a deflation holds one at
        a time); a dense covariance: its submatrix.  An operator (sparse, projected, weighted
        or Dask data) is never copied: the result is an index view whose products embed
        their argument in all features and select the result's rows.
        """
        return _columns(self, keep)


def _columns(cov: Cov, keep) -> Cov:
    keep = np.asarray(keep, dtype=int)
    if isinstance(cov, _Restricted):  # a view of a view: one view of the base
        return _Restricted(cov.base, cov.keep[keep])
    if cov.X is not None:
        return Cov(cov.X[:, keep], None)
    if cov._A is not None:
        return Cov(None, cov._A[np.ix_(keep, keep)])
    return _Restricted(cov, keep)


def _used_rows(v: np.ndarray, fraction: float = 0.5):
    """Indices of the rows of v holding a nonzero, when fewer than ``fraction`` of them do;
    else None."""
    # sum of |v| per row: > 0 exactly when the row holds a nonzero (faster than any(axis=1))
    used = (np.abs(v) @ np.ones(v.shape[1]) != 0) if v.ndim == 2 else v != 0
    count = int(np.count_nonzero(used))
    return np.flatnonzero(used) if count < fraction * used.size else None


class ProjectedCov(Cov):
    """Mackey's projection deflation ``P A P`` (``P = I - x x^T``, x unit) of any covariance
    operator, applied as an operator: nothing n x n unless ``dense()`` is asked for (and the
    base allows it).  Used for operators that hold no dense data (sparse, distributed)."""

    def __init__(self, base: Cov, x: np.ndarray):
        self.base, self.x = base, np.asarray(x, dtype=float)
        self.X, self._A = None, None
        self.n, self.m = base.n, base.m
        self.Ax = base.matvec(self.x)
        self.f = float(self.x @ self.Ax)
        self.sparse = getattr(base, "sparse", False)

    @property
    def thin(self) -> bool:
        return False

    def _P(self, v):
        return v - np.multiply.outer(self.x, self.x @ v)

    def matvec(self, v):
        return self._P(self.base.matvec(self._P(v)))

    def quads(self, x):
        return self.base.quads(self._P(x))

    def quad(self, x):
        return float(self.base.quads(self._P(np.asarray(x, dtype=float))[:, None])[0])

    def submatrix(self, idx):
        idx = np.asarray(idx, dtype=int)
        xJ, aJ = self.x[idx], self.Ax[idx]
        B = self.base.submatrix(idx) - np.outer(xJ, aJ) - np.outer(aJ, xJ) + self.f * np.outer(xJ, xJ)
        return 0.5 * (B + B.T)

    def diag(self):
        return np.clip(self.base.diag() - 2 * self.x * self.Ax + self.f * self.x ** 2, 0.0, None)

    def dense(self):
        if self._A is None:
            A = self.base.dense()
            B = A - np.outer(self.x, self.Ax) - np.outer(self.Ax, self.x) + self.f * np.outer(self.x, self.x)
            self._A = 0.5 * (B + B.T)
        return self._A

    def factor(self, d: int):
        """Top-d factor by Lanczos on the operator (``eigsh``); eigenvalues ``λ_1..λ_{d+1}``.

        Few features (n <= :data:`DENSE_FACTOR_MAX_N`, or too few for Lanczos to find d + 1
        eigenvalues): the n x n matrix and a dense ``eigh``, exact to rounding.  Lanczos cannot
        return n eigenvalues of an n x n operator, and λ_{d+1} left out (as zero) would make the
        data look of rank d to the solvers (an "exact" answer that is not)."""
        from scipy.sparse.linalg import LinearOperator, eigsh


        count = min(d + 1, self.n - 1) if self.n > 2 else 0
        if count < d + 1 or self.n <= DENSE_FACTOR_MAX_N:
            return Cov(None, self.dense()).factor(d)
        op = LinearOperator((self.n, self.n), matvec=self.matvec, matmat=self.matvec, dtype=float)
        w, U = eigsh(op, k=count, which="LA", v0=np.ones(self.n) / np.sqrt(self.n))
        order = np.argsort(-w)
        w, U = np.clip(w[order], 0.0, None), U[:, order]
        V = flip_signs(U[:, :d]) * np.sqrt(w[:d])
        eig = np.zeros(d + 1)
        eig[: w.size] = w[: d + 1]
        return V, eig


class _Restricted(Cov):
    """The covariance of a subset of features of an operator (through embedding)."""

    def __init__(self, base: Cov, keep: np.ndarray):
        self.base, self.keep = base, keep
        self.X, self._A = None, None
        self.n, self.m = keep.size, base.m
        self.sparse = getattr(base, "sparse", False)

    @property
    def thin(self) -> bool:
        return False

    def _embed(self, v):
        out = np.zeros((self.base.n,) + np.shape(v)[1:])
        out[self.keep] = v
        return out

    def matvec(self, v):
        return self.base.matvec(self._embed(v))[self.keep]

    def quads(self, x):
        return self.base.quads(self._embed(x))

    def quad(self, x):
        return self.base.quad(self._embed(x))

    def submatrix(self, idx):
        return self.base.submatrix(self.keep[np.asarray(idx, dtype=int)])

    def diag(self):
        return self.base.diag()[self.keep]

    def dense(self):
        if self._A is None:
            self._A = self.base.submatrix(self.keep)
        return self._A

    def factor(self, d: int):
        return ProjectedCov.factor(self, d)
