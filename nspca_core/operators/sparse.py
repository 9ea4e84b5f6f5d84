"""Covariance of a ``scipy.sparse`` data matrix, centered implicitly, never densified.

:class:`SparseCov` has the interface of :class:`nspca_core.operators.cov.Cov` for data
``X`` (m x n, CSR or CSC, ``scipy.sparse`` matrix or array) with

    A = X^T X / m - mu mu^T        (``center=True``, mu the column means)
    A = X^T X / m                  (``center=False``)

applied as an operator: every method works through products with the sparse
``X`` and the mean vector, so memory stays O(nnz(X) + n d).  Only
:meth:`SparseCov.dense` forms the n x n matrix, and it refuses when that is over
a budget.

The top-d factor (:meth:`SparseCov.factor`) comes from a truncated solver on a
``scipy.sparse.linalg.LinearOperator``: Lanczos (ARPACK ``eigsh``) on the
smaller of the n x n covariance operator and the m x m Gram operator of the
centered data (default; measured fastest at the bag-of-words shapes, see
``benchmarks/bench_scale.py``), ``svds`` on the m x n centered operator, or a
randomized range finder with power iterations.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, eigsh, svds

from .._common.params import check
from .cov import Cov
from .._common.validation import InputError
from ..lowrank import flip_signs

__all__ = ["SparseCov", "CenteredDenseCov", "as_sparse_cov", "centered_gram", "DENSE_BUDGET_BYTES", "FACTOR_METHODS"]

#: largest n x n float64 covariance :meth:`SparseCov.dense` forms (bytes; n ~ 11,585)
DENSE_BUDGET_BYTES = 1 << 30

#: truncated solvers accepted by :meth:`SparseCov.factor`
FACTOR_METHODS = ("eigsh", "svds", "randomized")

# a fixed start vector for ARPACK: same input, same output (never global state)
_V0_SEED = 0


def format_bytes(b: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB", "TB"):
        if b < 1000 or unit == "TB":
            return f"{b:.3g} {unit}"
        b /= 1000.0
    return f"{b:.3g} TB"  # pragma: no cover


def check_dense_budget(n: int, budget: float, what: str) -> None:
    """Refuse, with the estimate, to form an n x n float64 covariance over ``budget`` bytes:
    data held as an operator (``what``: "sparse data", "Dask data") stays one."""
    need = 8 * n * n
    if need > budget:
        raise InputError(
            f"this step needs the dense {n} x {n} covariance ({format_bytes(need)} as float64), "
            f"over the budget of {format_bytes(budget)} for {what}; use a method that works "
            "through matrix-vector products (the bipartite method, TPower, EM, the low-rank "
            "factor) or fewer features")


class SparseCov(Cov):
    """Covariance operator of sparse data.  Build with :func:`as_sparse_cov` (which validates).

    Attributes
    ----------
    X : None
        Always None: there is no dense data matrix.  Code written for
        :class:`Cov` that reads ``cov.X`` therefore takes its ``cov.dense()``
        branch, which forms A only under the budget and otherwise raises a
        clear :class:`InputError` — never a silently uncentered product.
    X_sparse : scipy.sparse CSR or CSC (m, n)
        The data as given (float32/float64 kept, other dtypes as float64).
    mean : ndarray (n,)
        Column means ``mu`` (zeros when ``center=False``).
    center : bool
    n, m : int
    sparse : True
        Marks the sparse operator for dispatch.

    Notes
    -----
    Memory: the sparse matrix (nnz values + indices), ``mean`` and the cached
    ``diag`` (n floats each); each product forms one m- and one n-vector per
    column of its argument.  ``auto`` on CSR data at k <= n / 16 keeps a CSC copy of the
    nonzeros (:meth:`csc`) for the operator's life.
    """

    sparse = True

    def __init__(self, X_sparse, *, center: bool = True, dense_budget: float = DENSE_BUDGET_BYTES):
        self.X = None
        self._A = None
        self.X_sparse = X_sparse
        self.m, self.n = X_sparse.shape
        self.center = bool(center)
        self.dense_budget = float(dense_budget)
        if self.center:
            self.mean = np.asarray(X_sparse.sum(axis=0), dtype=np.float64).ravel() / self.m
        else:
            self.mean = np.zeros(self.n)
        self._diag = None

    @property
    def thin(self) -> bool:
        """False: there is no dense ``X`` to work through (see the class notes)."""
        return False

    @property
    def nnz(self) -> int:
        return int(self.X_sparse.nnz)

    # ------------------------------------------------------------------ products

    def data_matvec(self, v: np.ndarray) -> np.ndarray:
        """``Xc @ v`` with ``Xc = X - 1 mu^T`` (m,) or (m, p); forms m x p."""
        v = np.asarray(v, dtype=np.float64)
        return self.X_sparse @ v - (self.mean @ v)

    def data_rmatvec(self, u: np.ndarray) -> np.ndarray:
        """``Xc^T @ u`` (n,) or (n, p); forms n x p."""
        u = np.asarray(u, dtype=np.float64)
        return self.X_sparse.T @ u - np.multiply.outer(self.mean, u.sum(axis=0))

    def matvec(self, v: np.ndarray) -> np.ndarray:
        """``A @ v`` for v of shape (n,) or (n, p): ``X^T (X v) / m - mu (mu^T v)``.

        Forms one m x p and one n x p array; A is never formed.
        """
        v = np.asarray(v, dtype=np.float64)
        out = np.asarray(self.X_sparse.T @ (self.X_sparse @ v)) / self.m
        return out - np.multiply.outer(self.mean, self.mean @ v)

    def quads(self, x: np.ndarray) -> np.ndarray:
        """``diag(x^T A x)`` for the columns of x (n, p): ``||Xc x_j||^2 / m``.

        The centered scores ``X x - 1 (mu^T x)`` are formed (m x p), which
        avoids the cancellation of ``||X x||^2 / m - (mu^T x)^2``.
        """
        y = self.data_matvec(x)
        return np.einsum("ij,ij->j", y, y) / self.m

    def quad(self, x: np.ndarray) -> float:
        """``x^T A x``."""
        y = self.data_matvec(np.asarray(x, dtype=np.float64))
        return float(y @ y) / self.m

    def csc(self):
        """The data as CSC with sorted indices, made once and kept (a second copy of the nonzeros):
        products through a few columns (auto's ascent on CSR data) and the column slices of
        :meth:`submatrix` read it.  Each column's entries are in document order, as in the CSR rows."""
        Xc = getattr(self, "_csc", None)
        if Xc is None:
            Xc = self.X_sparse.tocsc(copy=True)
            Xc.sort_indices()
            self._csc = Xc
        return Xc

    def submatrix(self, idx) -> np.ndarray:
        """``A[idx][:, idx]`` from the columns ``X[:, idx]``: ``X_J^T X_J / m - mu_J mu_J^T``.

        Forms the sparse product of the selected columns and a dense |J| x |J|, or, where :meth:`dense` has formed
        A with every block pair of ``X^T X`` exactly symmetric (each entry then ``g_ij / m - mu_i mu_j`` with
        ``g_ij`` the same sum in the same document order as here), A's rows and columns: the same floats without a
        product (issue 39: the split route on a 3,000 x 1,600 corpus formed A_SS and A_TT again, 0.06 CPU s).
        When :meth:`csc` has been made and idx increases, the columns come from it (``Xc[:, J]`` back to CSR: the same
        arrays as the CSR column slice, so the same floats, without a pass over every row).
        """
        idx = np.asarray(idx, dtype=int)
        if self._A is not None and getattr(self, "_A_rows", False):
            return _principal(self._A, idx)  # (A held, formed with no symmetrizing: the same floats, no product)
        Xc = getattr(self, "_csc", None)
        if Xc is not None and self.X_sparse.format == "csr" and self.X_sparse.has_canonical_format \
                and (idx.size < 2 or bool(np.all(idx[1:] > idx[:-1]))):
            XJ = Xc[:, idx].tocsr()
        else:
            XJ = self.X_sparse[:, idx]
        G = XJ.T @ XJ
        G = G.toarray() if sp.issparse(G) else np.asarray(G)
        muJ = self.mean[idx]
        return np.asarray(G, dtype=np.float64) / self.m - np.outer(muJ, muJ)

    def diag(self) -> np.ndarray:
        """The variances ``diag(A)`` from column sums of squares (cached, n floats)."""
        if self._diag is None:
            sq = self.X_sparse.multiply(self.X_sparse)
            s2 = np.asarray(sq.sum(axis=0), dtype=np.float64).ravel() / self.m
            self._diag = np.clip(s2 - self.mean ** 2, 0.0, None)
        return self._diag.copy()

    def trace(self) -> float:
        return float(self.diag().sum())

    def dense_bytes(self) -> int:
        """Memory the n x n float64 covariance would take."""
        return 8 * self.n * self.n

    def dense(self) -> np.ndarray:
        """The n x n covariance, formed only when ``8 n^2`` bytes is within the budget.

        Raises
        ------
        InputError
            When the n x n matrix would exceed ``dense_budget`` (the message
            gives the estimate): sparse data is meant to stay an operator.
        """
        if self._A is None:
            check_dense_budget(self.n, self.dense_budget, "sparse data")
            edges = _chunk_edges(self.n) if _upper_applies(self.X_sparse) else None
            if edges is not None:  # (X^T X's upper block triangle only, mirrored: the same floats)
                self._A = _centered_upper(_upper_gram(self.csc(), edges, self.X_sparse), self.m, self.mean)
                self._A_rows = True
                return self._A
            G = self.X_sparse.T @ self.X_sparse
            G = G.toarray() if sp.issparse(G) else np.asarray(G)
            seen: dict = {}
            self._A = centered_gram(G, self.m, self.mean, seen)
            # every block pair exactly symmetric: each entry of A is the float :meth:`submatrix` computes
            self._A_rows = bool(seen.get("symmetric"))
        return self._A

    # ------------------------------------------------------------------ factor

    def operator(self) -> LinearOperator:
        """A as an n x n ``LinearOperator`` (symmetric)."""
        return LinearOperator((self.n, self.n), matvec=self.matvec, rmatvec=self.matvec,
                              matmat=self.matvec, rmatmat=self.matvec, dtype=np.float64)

    def data_operator(self) -> LinearOperator:
        """The centered data ``Xc`` as an m x n ``LinearOperator``."""
        return LinearOperator((self.m, self.n), matvec=self.data_matvec,
                              rmatvec=self.data_rmatvec, matmat=self.data_matvec,
                              rmatmat=self.data_rmatvec, dtype=np.float64)

    def gram_operator(self) -> LinearOperator:
        """``Xc Xc^T / m`` as an m x m ``LinearOperator`` (same nonzero spectrum as A)."""
        def mv(u):
            return self.data_matvec(self.data_rmatvec(u)) / self.m
        return LinearOperator((self.m, self.m), matvec=mv, rmatvec=mv, matmat=mv,
                              rmatmat=mv, dtype=np.float64)

    def factor(self, d: int, *, method: str = "eigsh", tol: float = 0.0, n_iter: int = 4):
        """``(V, eigenvalues)`` as :func:`nspca_core.lowrank_factor`: ``V = U_d Λ_d^{1/2}``.

        Parameters
        ----------
        d : int in [1, n]
        method : {"eigsh", "svds", "randomized"}
            ``"eigsh"`` (default): ARPACK Lanczos for the top ``d + 1``
            eigenpairs of the smaller of the n x n operator ``A`` and the m x m
            Gram operator ``Xc Xc^T / m`` (eigenvectors of A then from
            ``Xc^T P``).  ``"svds"``: ``scipy.sparse.linalg.svds`` of the m x n
            centered operator, ``λ = σ² / m``.  ``"randomized"``: a range
            finder with ``d + 11`` columns and ``n_iter`` power iterations
            (QR-orthonormalized), then Rayleigh–Ritz; accurate only to the
            spectral gap, not to ``tol``.
        tol : float, default 0
            ARPACK tolerance (0: machine precision).
        n_iter : int, default 4
            Power iterations of ``"randomized"``.

        Returns
        -------
        V : ndarray (n, d)
            Column signs fixed (largest-magnitude entry positive).
        eigenvalues : ndarray (d + 1,)
            ``λ_1 >= ... >= λ_{d+1}``, all from the same run, clipped at 0.

        Notes
        -----
        Memory O(nnz + (n + m)(d + 1)) plus the solver's Krylov basis (ARPACK
        keeps ``ncv = max(2(d+1)+1, 20)`` vectors of the operator's side).
        When ARPACK's Krylov basis would span the smaller side (``min(m, n) <=
        max(2(d+1)+1, 20)``, or ``d + 1`` not below it) the problem is tiny and
        is solved densely: the m x m Gram of the centered data when ``m < n``,
        else :meth:`dense` where the budget allows ``8 n^2`` bytes (else
        ARPACK, unless ``d + 1 >= n``: then :meth:`dense` or its refusal).  ARPACK restarts from its own
        random vector when its basis becomes invariant, a seed that advances
        from call to call: the same data gave another last bit of ``V`` (and
        of every answer built on it) on a second call in one process.
        """
        d = check("d", d, n_features=self.n)
        if method not in FACTOR_METHODS:
            raise InputError(f"`method` must be one of {FACTOR_METHODS}; got {method!r}")
        count = d + 1
        whole = count >= min(self.m, self.n)
        if whole or min(self.m, self.n) <= max(2 * count + 1, 20):  # (ARPACK's ncv default: its basis, the side)
            from ..lowrank import lowrank_factor_clean
            if self.m < self.n:  # the centered data, m x n with m <= 20 or so rows (no n x n matrix)
                return lowrank_factor_clean(self.data_rmatvec(np.eye(self.m)).T, None, d)
            if whole or 8 * self.n * self.n <= self.dense_budget:  # (else ARPACK, as the budget asks)
                return lowrank_factor_clean(None, self.dense(), d)  # A built here: no second validation
        if method == "eigsh":
            w, U = self._factor_eigsh(count, tol)
        elif method == "svds":
            w, U = self._factor_svds(count, tol)
        else:
            w, U = self._factor_randomized(count, n_iter)
        order = np.argsort(-w, kind="stable")
        w, U = np.clip(w[order], 0.0, None), U[:, order]
        V = flip_signs(U[:, :d]) * np.sqrt(w[:d])
        return V, w[:count].copy()

    def _v0(self, size: int) -> np.ndarray:
        return np.random.default_rng(_V0_SEED).standard_normal(size)

    def _factor_eigsh(self, count: int, tol: float):
        if self.m < self.n:
            w, P = eigsh(self.gram_operator(), k=count, which="LA", tol=tol, v0=self._v0(self.m))
            w = np.clip(w, 0.0, None)
            U = self.data_rmatvec(P)
            nrm = np.linalg.norm(U, axis=0)
            U = U / np.where(nrm > 0, nrm, 1.0)
            return w, U
        w, U = eigsh(self.operator(), k=count, which="LA", tol=tol, v0=self._v0(self.n))
        return w, U

    def _factor_svds(self, count: int, tol: float):
        _, s, Vt = svds(self.data_operator(), k=count, tol=tol,
                        v0=self._v0(min(self.m, self.n)))
        return s ** 2 / self.m, Vt.T

    def _factor_randomized(self, count: int, n_iter: int):
        if isinstance(n_iter, bool) or not isinstance(n_iter, numbers.Integral) or n_iter < 0:
            raise InputError(f"`n_iter` must be an int >= 0; got {n_iter!r}")
        ell = min(count + 10, self.n)
        rng = np.random.default_rng(_V0_SEED)
        Q, _ = np.linalg.qr(self.matvec(rng.standard_normal((self.n, ell))))
        for _ in range(int(n_iter)):
            Q, _ = np.linalg.qr(self.matvec(Q))
        B = Q.T @ self.matvec(Q)
        w, Z = np.linalg.eigh(0.5 * (B + B.T))
        return w[::-1][:count], (Q @ Z[:, ::-1])[:, :count]


class CenteredDenseCov(SparseCov):
    """Covariance of dense data centered implicitly, ``A = X^T X / m - mu mu^T``: the operator of
    :class:`SparseCov` over a dense ``X`` that is never copied (used by
    :func:`nspca_core.operators.covariance.as_cov` when a centered copy would not fit in memory, e.g. a
    large ``np.memmap``).  Products read X as given; the variances are accumulated by blocks of rows."""

    _ROWS = 4096  # rows per block of the sums of squares (a block x n temporary)

    def __init__(self, X: np.ndarray, mean: np.ndarray, *, dense_budget: float = DENSE_BUDGET_BYTES):
        self.X, self._A = None, None
        self.X_sparse = X
        self.m, self.n = X.shape
        self.center = True
        self.mean = np.asarray(mean, dtype=np.float64)
        self.dense_budget = float(dense_budget)
        self._diag = None

    def submatrix(self, idx) -> np.ndarray:
        idx = np.asarray(idx, dtype=int)
        XJ = np.asarray(self.X_sparse[:, idx], dtype=np.float64) - self.mean[idx]
        return XJ.T @ XJ / self.m

    def diag(self) -> np.ndarray:
        if self._diag is None:
            s2 = np.zeros(self.n)
            for i in range(0, self.m, self._ROWS):
                block = np.asarray(self.X_sparse[i:i + self._ROWS], dtype=np.float64) - self.mean
                s2 += np.einsum("ij,ij->j", block, block)
            self._diag = s2 / self.m
        return self._diag.copy()

    def dense(self) -> np.ndarray:
        if self._A is None:
            check_dense_budget(self.n, self.dense_budget, "data centered implicitly")
            self._A = centered_gram(np.asarray(self.X_sparse.T @ self.X_sparse), self.m, self.mean)
        return self._A


# centered_gram's blocks: block x block temporaries
_GRAM_BLOCK = 128


def centered_gram(G: np.ndarray, m: int, mean: np.ndarray, seen: dict | None = None) -> np.ndarray:
    """``0.5 (A + A^T)`` with ``A = G / m - mean mean^T`` (G = X^T X of the data), entry for entry
    the same floats as that expression (each is ``a_ij + a_ji`` times 0.5, ``a_ij = g_ij / m -
    mean_i mean_j``), computed in place by blocks: no n x n temporaries (five of them cost a
    quarter of a 2,000-feature sparse corpus's covariance, issue 39).  G is overwritten when it is
    a float64 array (else a float64 copy is made).

    Where a block pair of G is exactly symmetric (``G_IJ == G_JI^T``: a sparse ``X^T X`` sums each pair's
    products in the same order), ``a_ji`` is ``a_ij`` (``fl(mean_i mean_j)`` commutes), so ``0.5 (a_ij +
    a_ji) = a_ij`` exactly and the block is formed once (issue 39, ninth round: ~40% of this pass).  ``seen`` (a
    dict, optional): ``seen["symmetric"]`` set to whether every block pair was (no entry averaged)."""
    A = G if isinstance(G, np.ndarray) and G.dtype == np.float64 and G.flags.writeable else \
        np.array(G, dtype=np.float64)
    n, b = A.shape[0], _GRAM_BLOCK
    symmetric = True
    for i in range(0, n, b):  # one pass over memory: each pair of blocks (I, J), (J, I) while in cache
        for j in range(i, n, b):
            s = A[i:i + b, j:j + b] / m
            s -= np.outer(mean[i:i + b], mean[j:j + b])
            if not np.array_equal(A[i:i + b, j:j + b], A[j:j + b, i:i + b].T):
                symmetric = False
                t = A[j:j + b, i:i + b] / m
                t -= np.outer(mean[j:j + b], mean[i:i + b])
                s += t.T
                s *= 0.5
            A[i:i + b, j:j + b] = s
            A[j:j + b, i:i + b] = s.T
    if seen is not None:
        seen["symmetric"] = symmetric
    return A


# SparseCov.dense on canonical CSR data: X^T X's upper block triangle in this many column chunks (chunk c: its columns'
# products with every column from its first on), each a multiple of _GRAM_BLOCK columns.  Issue 39, corpus18: the
# 3,000 x 1,600 topic corpus, sum_d r_d^2 = 15.9 M products, 12.1 M with 4 chunks: forming A 0.089 -> 0.078 CPU s
# (2 chunks 0.087, 3 0.077, 6 0.076, 8 0.082: the column slices' and symbolic passes' overheads grow)
_GRAM_CHUNKS = 4
# _upper_gram_direct: the kernels' output entries a call (a buffer of 12 bytes an entry, reused by every call)
_GRAM_OUT = 200_000


def _upper_applies(X) -> bool:
    """Whether :meth:`SparseCov.dense` forms ``X^T X`` by :func:`_upper_gram`: CSR data in canonical format (sorted
    indices, no duplicates), where every entry of ``X^T X`` -- whole or by column chunks -- is the sum of the products
    of its two columns in document order (so the chunks give the whole product's floats)."""
    return X.format == "csr" and bool(X.has_canonical_format)


def _chunk_edges(n: int, b: int | None = None, chunks: int | None = None) -> list[int] | None:
    """The column chunks' edges for :func:`_upper_gram` (multiples of ``b`` = :data:`_GRAM_BLOCK`, at most ``chunks`` =
    :data:`_GRAM_CHUNKS` chunks), or None where fewer than two blocks of ``b`` columns fit (the whole product then)."""
    b, chunks = b or _GRAM_BLOCK, chunks or _GRAM_CHUNKS
    nb = -(-n // b)
    c = min(chunks, nb)
    if c < 2:
        return None
    return sorted({min(n, b * ((nb * i) // c)) for i in range(c + 1)})


def _upper_gram(Xc, edges: list[int], X=None) -> np.ndarray:
    """``X^T X`` (n x n float64, from ``Xc`` = the data as CSC with sorted indices) whose upper block triangle over
    ``edges`` is filled -- rows of chunk c, columns from its first on: ``X_c^T X_{c..}`` -- and the rest left unwritten
    (:func:`_centered_upper` reads only that triangle).  Each entry the sum over documents in increasing order of the
    two columns' products (the CSC columns' order), as the whole ``X^T X`` of canonical CSR data sums it: the same
    floats, ~25% fewer products on a topic corpus (the lower blocks are the upper ones' mirror).  ``X`` (the same
    data as canonical CSR, float64): by :func:`_upper_gram_direct` where scipy's kernels take it."""
    if X is not None and X.dtype == np.float64 and Xc.dtype == np.float64:
        try:
            return _upper_gram_direct(X, Xc, edges)
        except (AttributeError, TypeError, ValueError):  # (scipy's private kernels changed: the public product)
            pass
    n = Xc.shape[1]
    G = np.empty((n, n))
    for lo, hi in zip(edges[:-1], edges[1:]):
        P = Xc[:, lo:hi].T @ Xc[:, lo:].tocsr()
        G[lo:hi, lo:] = P.toarray() if sp.issparse(P) else np.asarray(P)
    return G


def _upper_gram_direct(X, Xc, edges: list[int]) -> np.ndarray:
    """:func:`_upper_gram` by scipy's own CSR product and densifying kernels (``scipy.sparse._sparsetools``: private),
    called with the output sized by the dense block (``|C| (n - lo)`` entries) instead of scipy's symbolic pass
    (``csr_matmat_maxnnz``, ~40% of the product on a topic corpus), and densified straight into G's rows (zeros
    there: each entry written once, ``0 + g = g``).  The right factor keeps the CSR rows' entries from column lo on
    with their own column indices.  The kernel sums each entry over the left row's documents in increasing order:
    the same floats as the public product.  Issue 39, corpus18: the 3,000 x 1,600 topic corpus, X^T X's upper
    triangle 0.062 -> 0.044 CPU s.  Each chunk's rows go through the kernels :data:`_GRAM_OUT` output entries at a
    time (at least one row), in ONE output buffer for every chunk: a row's products and sums do not depend on the
    rows beside it, so the same floats; the buffers' fresh pages were ~19 MB a certificate (each page's first touch a
    ~2.4 us fault on the 2-core test VM), 2.4 MB now (issue 39, corpus30: repeated certificates of c3000 at k >= 10
    with 0 faults instead of ~5,000; k = 10 0.088-0.091 -> 0.080-0.081 CPU s, minima of 3 rounds)."""
    from scipy.sparse import _sparsetools as kern

    m, n, ip, ix, dx = X.shape[0], X.shape[1], X.indptr, X.indices, X.data
    G = np.zeros((n, n))
    key = None  # (row * n + column per entry: increasing, the rows' entries sorted; made at the first chunk past 0)
    Cj = Cx = None  # (the one output buffer, made at the first chunk: the largest rows' block, see below)
    for lo, hi in zip(edges[:-1], edges[1:]):
        L = Xc[:, lo:hi].T  # (CSR |C| x m: each row a column of X, its documents increasing)
        step = max(1, min(hi - lo, _GRAM_OUT // (n - lo)))  # (rows a kernel call: at most _GRAM_OUT entries out)
        bound = step * (n - lo)
        idt = np.int64 if max(int(ip[-1]), int(L.indptr[-1]), (hi - lo) * (n - lo), X.shape[0], n) >= 2**31 - 1 \
            else np.int32
        if lo == 0:  # (every entry kept: the data's own arrays)
            Bp, Bj, Bx = ip.astype(idt, copy=False), ix.astype(idt, copy=False), dx
        else:
            # each row's kept entries (column >= lo) are its suffix from its first key >= row * n + lo: their counts
            # by one search per row (corpus19: in place of a cumulative sum over every entry, per chunk)
            if key is None:
                key = np.repeat(np.arange(m, dtype=np.int64) * n, np.diff(ip)) + ix
            starts = np.searchsorted(key, np.arange(m, dtype=np.int64) * n + lo)
            Bp = np.zeros(m + 1, dtype=idt)
            Bp[1:] = np.cumsum(ip[1:] - starts)
            keep = ix >= lo
            Bj, Bx = ix[keep].astype(idt, copy=False), dx[keep]
        if Cj is None or Cj.size < bound or Cj.dtype != idt:  # (the first chunk's rows are the widest: n - 0)
            Cj, Cx = np.empty(bound, dtype=idt), np.empty(bound, dtype=np.float64)
        Lp, Lj = L.indptr.astype(idt, copy=False), L.indices.astype(idt, copy=False)
        Cp = np.empty(step + 1, dtype=idt)
        for a in range(0, hi - lo, step):  # (rows a .. b of the chunk: L's rows sliced, their entries a view)
            b = min(hi - lo, a + step)
            s, e = int(Lp[a]), int(Lp[b])
            kern.csr_matmat(b - a, n, Lp[a:b + 1] - Lp[a], Lj[s:e], L.data[s:e], Bp, Bj, Bx, Cp, Cj, Cx)
            kern.csr_todense(b - a, n, Cp, Cj, Cx, G[lo + a:lo + b].reshape(-1))
    return G


def _principal(A: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``A[np.ix_(idx, idx)]`` (a copy: the same floats either way), by two takes -- the rows first, each a contiguous
    copy, then their columns -- where idx holds more than half of A's rows: the split route's A_TT (1,300 of 1,600 on
    the 3,000 x 1,600 topic corpus) 0.0049 -> 0.0035 CPU s; below that the fancy index is the quicker (300: 0.0003
    against 0.0004; corpus19)."""
    if 2 * idx.size > A.shape[0]:
        return A.take(idx, axis=0).take(idx, axis=1)
    return A[np.ix_(idx, idx)]


def _centered_upper(G: np.ndarray, m: int, mean: np.ndarray) -> np.ndarray:
    """:func:`centered_gram` of an exactly symmetric G of which only the upper triangle of :data:`_GRAM_BLOCK` blocks is
    read (:func:`_upper_gram`'s): each block ``a_ij = g_ij / m - mean_i mean_j`` formed once and mirrored, the floats
    centered_gram makes where every block pair is exactly symmetric (then ``0.5 (a_ij + a_ji) = a_ij``)."""
    n, b = G.shape[0], _GRAM_BLOCK
    for i in range(0, n, b):
        for j in range(i, n, b):
            s = G[i:i + b, j:j + b] / m
            s -= np.outer(mean[i:i + b], mean[j:j + b])
            G[i:i + b, j:j + b] = s
            G[j:j + b, i:i + b] = s.T
    return G


def _check_sparse(X, name: str = "X"):
    """Validate sparse data: 2-D, nonzero sizes, numeric, finite; CSR/CSC out."""
    if not sp.issparse(X):
        raise InputError(f"`{name}` must be a scipy.sparse matrix or array (CSR/CSC); got "
                         f"{type(X).__name__} (dense data goes through as_cov)")
    if X.ndim != 2:
        raise InputError(f"`{name}` must be 2-D; got {X.ndim}-D with shape {X.shape}")
    m, n = X.shape
    if m < 1 or n < 1:
        raise InputError(f"`{name}` must have at least 1 row and 1 column; got shape {X.shape}")
    check("sparse_structure", X, name)  # before any kernel reads the indices (a crash otherwise)
    if X.format not in ("csr", "csc"):
        X = X.tocsr()
    if X.dtype.kind not in "biuf":
        raise InputError(f"`{name}` must hold real numbers; got dtype {X.dtype}")
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    data = X.data
    bad = ~np.isfinite(data)
    if bad.any():
        raise InputError(f"`{name}` must be finite; got {int(bad.sum())} NaN/inf stored value(s)")
    return X


def as_sparse_cov(X, center: bool = True, *, dense_budget: float = DENSE_BUDGET_BYTES) -> SparseCov:
    """Validate sparse data and wrap it as a :class:`SparseCov`.

    Parameters
    ----------
    X : scipy.sparse matrix or array (m, n)
        CSR and CSC are used as given; other formats are converted to CSR.
        Integer counts become float64; float32 is kept (half the memory).
    center : bool, default True
        Implicit centering ``A = X^T X / m - mu mu^T`` (the data is never
        altered); False gives ``A = X^T X / m``.
    dense_budget : float, optional
        Bytes :meth:`SparseCov.dense` may use for the n x n matrix.

    Raises
    ------
    InputError
        Not sparse, not 2-D, an empty dimension, non-numeric or non-finite values.
    """
    center = check("center", center)
    if not isinstance(dense_budget, numbers.Real) or not dense_budget >= 0:
        raise InputError(f"`dense_budget` must be a number of bytes >= 0; got {dense_budget!r}")
    return SparseCov(_check_sparse(X), center=bool(center), dense_budget=dense_budget)
