"""Covariance of a ``dask.array`` data matrix: nonnegative sparse PCA past one machine.

An optional extra (``pip install 'nspca-core[dask]'``, i.e. ``dask[array]`` and
``distributed``).  Dask is imported only inside this module, and only when one
of its functions is called; without it they raise a clear :class:`InputError`.
The per-block kernels the workers run are in :mod:`nspca_core.distributed.kernels`; the front,
``nspca_core.fit``, ``components`` and ``certify`` with a ``dask.array``, runs the solvers on
:class:`DaskCov` (its Dask checks and report in :mod:`nspca_core.distributed.fit`).

:class:`DaskCov` has the interface of :class:`nspca_core.operators.cov.Cov` for data
``X`` (m x n) held as a ``dask.array`` chunked along the samples (rows) — one
block per file of a corpus too big for one machine, say — with dense
(``numpy``) or sparse (``scipy.sparse``, or ``sparse.COO``) chunks:

    A = X^T X / m - mu mu^T        (``center=True``, mu the column means)
    A = X^T X / m                  (``center=False``)

Centering is implicit: the blocks are never shifted (a shifted sparse block would be dense);
every product is a Dask graph whose per-block tasks run on the workers, partial sums added by
Dask's tree reductions.  Each graph is a pass over the data, so the client keeps what spares
passes: the whole n x n covariance when n is small (:meth:`DaskCov._full`), else the columns of
A touched by sparse iterates.  The top-d factor (:meth:`DaskCov.factor`,
:mod:`nspca_core.distributed.factor`) is subspace iteration with a gap-aware stopping rule.  The
solvers run unchanged on the operator (``nspca_core.fit``, ``components``).

Pointing it at a cluster: start a scheduler and workers (``dask scheduler``,
``dask worker tcp://host:8786``, or any Dask deployment), then pass
``client=distributed.Client("tcp://host:8786")`` — see ``docs/DASK.md``.
"""

from __future__ import annotations

import numbers
import sys

import numpy as np
import scipy.sparse as sp

from ..operators.cov import Cov
from ..operators.sparse import check_dense_budget
from .client import persist_decision
from .factor import ritz_factor
from ..methods import REGISTRY, SINGLE
from .kernels import k_bad, k_cgram, k_colsum, k_gram, k_sqdev, k_sqsum, k_xty, k_xv, prepare_block
from .._common.validation import InputError, check_d, check_int

__all__ = ["DaskCov", "as_dask_cov", "decide_persist", "is_dask_array", "DASK_METHODS",
           "DENSE_BUDGET_BYTES", "require_dask"]

#: listed first among the methods for Dask data (products only: one pass per iteration)
DASK_DEFAULT_METHOD = "tpower"
#: single-component methods offered for Dask data: those with a ``dask`` mode in
#: :data:`nspca_core.methods.REGISTRY` (registry order, the default first)
DASK_METHODS = tuple(sorted((n for n in SINGLE if REGISTRY[n].dask), key=lambda n: n != DASK_DEFAULT_METHOD))
#: the blocks are persisted when they take at most this fraction of the cluster's memory
PERSIST_FRACTION = 0.5
#: largest n x n float64 covariance :meth:`DaskCov.dense` forms (bytes; n ~ 11,585)
DENSE_BUDGET_BYTES = 1 << 30
_EXTRA = ("pip install 'nspca-core[dask]' (or: pip install 'dask[array]' distributed)")
# features whose covariance entries the client caches (8 * 2048^2 bytes = 34 MB at most)
_GRAM_CACHE_MAX = 2048
# at most this many features (and 8 n^2 <= _FULL_GRAM_BYTES): the client holds the whole n x n A,
# formed in one pass the first time a product, a quadratic form or a submatrix needs it
_FULL_GRAM_BYTES = 64 << 20
# columns of A the client caches for products with sparse arguments (bytes: n_all x |F| float64)
_COLUMN_CACHE_BYTES = 128 << 20


def require_dask():
    """``(dask, dask.array)``, or an InputError naming the extra to install."""
    try:
        import dask
        import dask.array as da
    except ImportError as exc:
        raise InputError(f"Dask input needs the optional extra: {_EXTRA}; "
                         f"importing dask.array failed ({exc})") from None
    return dask, da


# --------------------------------------------------------------------------- the operator
class DaskCov(Cov):
    """Covariance operator of a chunked ``dask.array``.  Build with :func:`as_dask_cov`.

    Attributes
    ----------
    X : None
        Always None: the data is not a NumPy array on the client.  Code written
        for :class:`Cov` that reads ``cov.X`` takes its ``cov.dense()`` branch,
        which forms A only under the budget and otherwise raises a clear
        :class:`InputError`.
    X_dask : dask.array.Array (m, n_all)
        The data, one chunk along the features, blocks as CSC or ndarray
        (persisted on the workers when ``persist=True``).
    mean : ndarray (n,)
        Column means ``mu`` (zeros when ``center=False``), on the client.
    center : bool
    n, m : int
    client : distributed.Client or None
        Where graphs run (None: Dask's current default — a default ``Client``
        if one exists, else the local threaded scheduler).
    factor_info : dict
        Of the last :meth:`factor`: ``iterations``, ``residuals``,
        ``converged``, ``block`` (columns l of the subspace).
    sparse : True
        Marks an operator without a dense ``X`` that has :meth:`columns`
        (the deflation baselines use it, as for
        :class:`~nspca_core.operators.sparse.SparseCov`).
    dask : True

    Notes
    -----
    On the client: ``mean``, the cached ``diag`` (n floats each) and, per
    product, the n x p argument and result.  On the workers: the blocks of X,
    per task one m_b x p score block and one n x p partial.  A view made by
    :meth:`columns` shares X and ``mean`` (its products pad the argument with
    zeros to all features and select the result's rows).
    """

    sparse = True
    dask = True

    def __init__(self, X_dask, mean_all, *, center, client, dense_budget, keep=None, shared=None):
        self.X = None
        self._A = None
        self.X_dask = X_dask
        self.m = int(X_dask.shape[0])
        self._n_all = int(X_dask.shape[1])
        self._keep = None if keep is None else np.asarray(keep, dtype=int)
        self.n = self._n_all if self._keep is None else int(self._keep.size)
        self._mean_all = mean_all
        self.mean = mean_all if self._keep is None else mean_all[self._keep]
        self.center = bool(center)
        self.client = client
        self.dense_budget = float(dense_budget)
        # caches shared by every view of the same data
        self._shared = shared if shared is not None else {"diag": None}
        self._factors: dict = {}
        self.factor_info: dict = {}
        self.persist_info: dict = {}

    @property
    def thin(self) -> bool:
        """False: there is no NumPy ``X`` on the client (see the class notes)."""
        return False

    # ------------------------------------------------------------------ dask plumbing
    @property
    def round_trips(self) -> int:
        """Dask computations (each a pass over the blocks it reads) made so far for this data,
        by this operator and every view of it."""
        return int(self._shared.get("round_trips", 0))

    def _compute(self, *objs):
        dask, _ = require_dask()
        self._shared["round_trips"] = self._shared.get("round_trips", 0) + 1
        if self.client is not None:
            return dask.compute(*objs, scheduler=self.client)
        return dask.compute(*objs)

    def _persist(self, *arrs):
        """Keep ``arrs`` on the workers (one graph: shared tasks run once); non-blocking on a
        distributed client."""
        dask, _ = require_dask()
        if self.client is not None:
            out = self.client.persist(list(arrs))
        else:
            out = dask.persist(*arrs)
        return out[0] if len(arrs) == 1 else tuple(out)

    def _const(self, a: np.ndarray):
        """A client-side array as a one-chunk dask array: one key in the graph, shipped once
        to each worker that needs it (not once per task)."""
        _, da = require_dask()
        a = np.ascontiguousarray(a)
        return da.from_array(a, chunks=a.shape if a.ndim else ())

    def _per_block(self, func, width: int, *args):
        """``func(B, *args)`` on each row block B, each giving (1, width), summed over blocks
        by Dask's tree reduction: a lazy (width,) array.  ``args`` are client arrays, shipped
        as one-chunk dask arrays."""
        _, da = require_dask()
        pairs = []
        for j, a in enumerate(args):
            a = np.asarray(a)
            idx = "".join(chr(ord("k") + 3 * j + t) for t in range(a.ndim))
            pairs += [self._const(a), idx]
        P = da.blockwise(func, "ij", self.X_dask, "ij", *pairs, concatenate=True,
                         adjust_chunks={"i": 1, "j": width}, dtype=np.float64)
        return P.sum(axis=0, split_every=4)  # at most 4 partials (n^2 each for a Gram) wait per sum

    def _pad(self, v: np.ndarray) -> np.ndarray:
        """The argument on all features (zeros off the view's columns)."""
        if self._keep is None:
            return v
        out = np.zeros((self._n_all,) + v.shape[1:])
        out[self._keep] = v
        return out

    def _sel(self, w: np.ndarray) -> np.ndarray:
        return w if self._keep is None else w[self._keep]

    def _scores(self, V: np.ndarray):
        """Lazy centered scores ``Xc V`` (m x p, chunked like X's rows) for V (n, p).

        Only the rows of V holding a nonzero enter (when fewer than half do): the
        sparse iterates of the ascent ship O(k p) numbers and select k columns per block.
        """
        _, da = require_dask()
        W = self._pad(np.asarray(V, dtype=np.float64))
        used = W.any(axis=1)
        rows = np.flatnonzero(used) if np.count_nonzero(used) < 0.5 * used.size else np.zeros(0, int)
        Wr = W[rows] if rows.size else W
        mu = self._mean_all[rows] if rows.size else self._mean_all
        shift = mu @ Wr
        p = W.shape[1]
        return da.blockwise(k_xv, "ij", self.X_dask, "ij", self._const(rows), "a",
                            self._const(Wr), "bc", shift, None, concatenate=True,
                            adjust_chunks={"j": p}, dtype=np.float64)

    def _rscores(self, Y):
        """Lazy ``Xc^T Y`` pieces for a lazy Y (m, p): ``(X^T Y flattened, 1^T Y)``."""
        _, da = require_dask()
        p = Y.shape[1]
        P = da.blockwise(k_xty, "ij", self.X_dask, "ij", Y, "il", concatenate=True,
                         adjust_chunks={"i": 1, "j": self._n_all * p}, dtype=np.float64)
        return P.sum(axis=0), Y.sum(axis=0)

    def _finish_rscores(self, XtY: np.ndarray, colsum: np.ndarray, p: int) -> np.ndarray:
        """``Xc^T Y = X^T Y - mu (1^T Y)`` on the client, the view's rows."""
        W = XtY.reshape(self._n_all, p) - np.multiply.outer(self._mean_all, colsum)
        return self._sel(W)

    # ------------------------------------------------------------------ products
    def _full(self):
        """The whole covariance of all features (n_all x n_all, on the client), or None when n_all
        is over :data:`_GRAM_CACHE_MAX` or ``8 n_all^2`` over :data:`_FULL_GRAM_BYTES`.

        Formed once, in one pass (workers: the centered n_all x n_all Gram of each block; client:
        their sum, 32 MB for 2,000 features), and shared by every view.  After it every product,
        quadratic form, submatrix and the factor run on the client: a solver's iterations cost
        no pass over the data (on a streamed array each pass regenerates or re-reads it).
        """
        n = self._n_all
        if n > _GRAM_CACHE_MAX or 8 * n * n > _FULL_GRAM_BYTES:
            return None
        if self._shared.get("A") is None:
            (G,) = self._compute(self._per_block(k_cgram, n * n, self._mean_all))
            G = np.asarray(G).reshape(n, n) / self.m
            self._shared["A"] = 0.5 * (G + G.T)
        return self._shared["A"]

    def matvec(self, v: np.ndarray) -> np.ndarray:
        """``A @ v`` for v of shape (n,) or (n, p): ``Xc^T (Xc v) / m``.

        Workers: the scores ``Xc v`` (m_b x p per block, never sent back) and one
        n x p partial per block; client: the n x p sum.  A is never formed.
        """
        v = np.asarray(v, dtype=np.float64)
        V = v[:, None] if v.ndim == 1 else v
        A = self._full()
        if A is not None:
            out = self._sel(A[:, self._keep] @ V if self._keep is not None else A @ V)
            return out[:, 0] if v.ndim == 1 else out
        W = self._pad(V)
        used = np.flatnonzero(W.any(axis=1))
        C = self._columns_of_a(used, fetch=self._fetch_limit(W.shape[1]))
        if C is not None:
            out = self._sel(C @ W[used])
            return out[:, 0] if v.ndim == 1 else out
        Y = self._scores(V)
        XtY, colsum = self._rscores(Y)
        XtY, colsum = self._compute(XtY, colsum)
        out = self._finish_rscores(XtY, colsum, V.shape[1]) / self.m
        return out[:, 0] if v.ndim == 1 else out

    def _fetch_limit(self, p: int) -> int:
        """Columns of A worth fetching in one pass: max(2p, as many as make a payload (numblocks x
        8 n_all bytes each) no larger than the data a pass touches — its stored values, plus row
        indices for sparse chunks; for dense data, the rows per block)."""
        per_column = 8.0 * self._n_all * self.X_dask.numblocks[0]
        return max(2 * p, int(self._shared.get("data_bytes", 0.0) // per_column))

    def _columns_of_a(self, used: np.ndarray, fetch: int):
        """``A[:, used]`` from the client's cache of columns of A, or None when more than
        ``fetch`` are missing, the cache would pass :data:`_COLUMN_CACHE_BYTES`, or ``used``
        holds over half the features.  Missing columns cost one pass (as :meth:`matvec` of unit
        vectors), so a product fetches at most :meth:`_fetch_limit` new ones.  Settled sparse
        iterates (TPower, EM, the bipartite polish) then cost no pass."""
        n = self._n_all
        limit = min(_COLUMN_CACHE_BYTES // (8 * n), _GRAM_CACHE_MAX)
        if used.size > min(limit, n // 2):
            return None
        cache = self._shared.setdefault("columns", {"F": np.zeros(0, dtype=int), "C": np.zeros((n, 0)),
                                                    "pos": np.full(n, -1, dtype=np.intp)})
        pos = cache["pos"]
        new = used[pos[used] < 0]
        if new.size:
            if new.size > fetch or cache["F"].size + new.size > limit:
                return None
            E = np.zeros((n, new.size))
            E[new, np.arange(new.size)] = 1.0
            Y = self._scores(E)
            XtY, colsum = self._rscores(Y)
            XtY, colsum = self._compute(XtY, colsum)
            Cn = (XtY.reshape(n, new.size) - np.multiply.outer(self._mean_all, colsum)) / self.m
            pos[new] = cache["F"].size + np.arange(new.size)
            cache["F"] = np.concatenate([cache["F"], new])
            cache["C"] = np.hstack([cache["C"], Cn])
        return cache["C"][:, pos[used]]

    def quads(self, x: np.ndarray) -> np.ndarray:
        """``diag(x^T A x)`` for the columns of x (n, p).

        x using at most ``_GRAM_CACHE_MAX`` rows: ``x_J^T A_JJ x_J`` from the
        client's cache of covariance entries (:meth:`_gram`, extended by one Dask
        pass when J has new features; the candidate scoring of the bipartite
        method then costs no round trip).  Otherwise ``||Xc x_j||^2 / m`` with
        the centered scores formed on the workers (m_b x p per block) and p
        numbers to the client.
        """
        x = np.asarray(x, dtype=np.float64)
        W = self._pad(x)
        A = self._full()
        if A is not None:
            return np.einsum("ij,ij->j", W, A @ W)
        used = np.flatnonzero(W.any(axis=1))
        C = self._columns_of_a(used, fetch=self._fetch_limit(0))
        if C is not None:
            Wu = W[used]
            return np.einsum("ij,ij->j", Wu, C[used] @ Wu)
        if used.size <= _GRAM_CACHE_MAX:
            G = self._gram(used)
            if G is not None:
                Wu = W[used]
                return np.einsum("ij,ij->j", Wu, G @ Wu)
        Y = self._scores(x)
        _, da = require_dask()
        S = da.map_blocks(k_sqsum, Y, chunks=((1,) * Y.numblocks[0], (x.shape[1],)),
                          dtype=np.float64).sum(axis=0)
        (s,) = self._compute(S)
        return np.asarray(s) / self.m

    def _gram(self, cols: np.ndarray):
        """``A[cols][:, cols]`` (cols: indices into all features) from a client-side cache of
        the covariance among the features seen so far, or None past ``_GRAM_CACHE_MAX``
        features.  New features cost one pass (workers: a |F| x |new| centered Gram per
        block; client: that block, at most 8 _GRAM_CACHE_MAX^2 bytes in all)."""
        cache = self._shared.setdefault("gram", {"F": np.zeros(0, dtype=int), "G": np.zeros((0, 0)),
                                                 "pos": None})
        if cache["pos"] is None:
            cache["pos"] = np.full(self._n_all, -1, dtype=np.intp)
        F, pos = cache["F"], cache["pos"]
        new = np.unique(cols[pos[cols] < 0])
        if new.size:
            if F.size + new.size > _GRAM_CACHE_MAX:
                return None
            allc = np.concatenate([F, new])
            mu = self._mean_all
            (C,) = self._compute(self._per_block(k_gram, allc.size * new.size, allc, new,
                                                 mu[allc], mu[new]))
            C = np.asarray(C).reshape(allc.size, new.size) / self.m
            G = np.empty((allc.size, allc.size))
            G[:F.size, :F.size] = cache["G"]
            G[:, F.size:] = C
            G[F.size:, :F.size] = C[:F.size].T
            G[F.size:, F.size:] = 0.5 * (C[F.size:] + C[F.size:].T)
            pos[new] = np.arange(F.size, allc.size)
            cache["F"], cache["G"] = allc, G
        p = pos[cols]
        return cache["G"][np.ix_(p, p)]

    def quad(self, x: np.ndarray) -> float:
        """``x^T A x`` (one :meth:`quads` column)."""
        return float(self.quads(np.asarray(x, dtype=np.float64)[:, None])[0])

    def submatrix(self, idx) -> np.ndarray:
        """``A[idx][:, idx]``: from the client's cache (:meth:`_gram`) when |J| is small,
        else workers form the centered |J| x |J| Gram of the selected columns of each
        block (sparse blocks through their sparse product); client: |J| x |J|."""
        idx = np.asarray(idx, dtype=int)
        cols = idx if self._keep is None else self._keep[idx]
        A = self._full()
        if A is not None:
            return A[np.ix_(cols, cols)].copy()
        C = self._columns_of_a(cols, fetch=self._fetch_limit(0))
        if C is not None:
            G = C[cols]
            return 0.5 * (G + G.T)
        G = self._gram(cols) if cols.size <= _GRAM_CACHE_MAX // 4 else None
        if G is not None:
            return G.copy()
        J = cols.size
        mu = self._mean_all[cols]
        (G,) = self._compute(self._per_block(k_gram, J * J, cols, cols, mu, mu))
        G = np.asarray(G).reshape(J, J) / self.m
        return 0.5 * (G + G.T)

    def diag(self) -> np.ndarray:
        """The variances ``diag(A)`` (one pass, cached; n floats on the client).

        ``sum_i (x_ij - mu_j)^2 / m`` per block, without the cancellation of
        ``E[x^2] - mu^2``; sparse blocks stay sparse.
        """
        if self._shared["diag"] is None and self._full() is not None:
            self._shared["diag"] = np.clip(np.diag(self._full()).copy(), 0.0, None)
        if self._shared["diag"] is None:
            (s,) = self._compute(self._per_block(k_sqdev, self._n_all, self._mean_all))
            self._shared["diag"] = np.clip(np.asarray(s) / self.m, 0.0, None)
        return self._sel(self._shared["diag"]).copy()

    def trace(self) -> float:
        return float(self.diag().sum())

    def columns(self, keep) -> "DaskCov":
        """The covariance of the features ``keep`` (``A[keep][:, keep]``) as a view.

        Nothing is copied: the view shares X, the means and the cached diagonal;
        its products pad their argument to all features.
        """
        keep = np.asarray(keep, dtype=int)
        full = keep if self._keep is None else self._keep[keep]
        return DaskCov(self.X_dask, self._mean_all, center=self.center, client=self.client,
                       dense_budget=self.dense_budget, keep=full, shared=self._shared)

    def dense_bytes(self) -> int:
        """Memory the n x n float64 covariance would take."""
        return 8 * self.n * self.n

    def dense(self) -> np.ndarray:
        """The n x n covariance, only when ``8 n^2`` bytes is within ``dense_budget``.

        Formed by :meth:`submatrix` of all features (per-block Grams on the
        workers, one n x n on the client).

        Raises
        ------
        InputError
            Over the budget: Dask data is meant to stay an operator.
        """
        if self._A is None:
            check_dense_budget(self.n, self.dense_budget, "Dask data")
            self._A = self.submatrix(np.arange(self.n))
        return self._A

    # ------------------------------------------------------------------ factor
    def factor(self, d: int, *, oversample: int = 10, tol: float = 1e-10, max_iter: int = 300):
        """``(V, eigenvalues)`` as :func:`nspca_core.lowrank_factor`: ``V = U_d Θ_d^{1/2}``.

        Parameters
        ----------
        d : int in [1, n]
        oversample : int >= 0, default 10
            Extra columns of the subspace: ``l = min(d + 1 + oversample, n)``.
        tol : float in (0, 1), default 1e-10
            A Ritz pair ``(θ_j, z_j)`` is *resolved* when ``||A z_j - θ_j z_j|| <= tol θ_1``.
        max_iter : int >= 1, default 300
            Passes (a warning, and ``factor_info['converged'] = False``, when reached).

        Returns
        -------
        V : ndarray (n, d)
            Ritz vectors scaled by the square roots of their Ritz values, column signs fixed
            (largest-magnitude entry positive).
        eigenvalues : ndarray (d + 1,)
            ``λ_1 >= ... >= λ_{d+1}`` (zeros past n): the Ritz value ``θ_j`` of a resolved pair
            (then ``|θ_j - λ_j| <= r_j^2 / gap``, far below ``tol θ_1``), else the upper value
            ``θ_j + r_j`` (a-posteriori: an eigenvalue of A lies within the residual ``r_j`` of
            ``θ_j``, and ``θ_j <= λ_j`` by interlacing), so a certificate that adds an
            eigenvalue stays an upper bound.  ``factor_info`` holds ``ritz``,
            ``residuals`` and ``resolved`` per value.

        Notes
        -----
        Block subspace iteration with Rayleigh–Ritz, one pass over the blocks per round and a
        gap-aware stopping rule; with the whole covariance on the client, its dense
        eigendecomposition.  See :func:`nspca_core.distributed.factor.ritz_factor`.
        """
        d = check_d(d, self.n)
        oversample = check_int(oversample, "oversample", 0)
        max_iter = check_int(max_iter, "max_iter", 1)
        if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not 0 < float(tol) < 1:
            raise InputError(f"`tol` must be a float in (0, 1); got {tol!r}")
        key = (d, oversample, float(tol), max_iter)
        if key not in self._factors:
            self._factors[key] = self._factor(d, oversample, float(tol), max_iter)
        V, eig, info = self._factors[key]
        self.factor_info = dict(info)
        return V.copy(), eig.copy()

    def _factor(self, d: int, oversample: int, tol: float, max_iter: int):
        return ritz_factor(self, d, oversample, tol, max_iter)


# --------------------------------------------------------------------------- validation
def is_dask_array(X) -> bool:
    """True when X is a ``dask.array.Array`` (without importing Dask: a Dask array exists only
    once ``dask.array`` was imported)."""
    da = sys.modules.get("dask.array")
    return da is not None and isinstance(X, da.Array)


def decide_persist(X, client=None) -> dict:
    """Whether the blocks of X fit in the cluster's memory (at most :data:`PERSIST_FRACTION` of
    it): ``{"persist", "data_bytes", "memory_bytes", "where", "reason"}``; see
    :func:`nspca_core.distributed.client.persist_decision`."""
    return persist_decision(X, client, PERSIST_FRACTION, sparse=_sparse_meta(X))


def _sparse_meta(X) -> bool:
    meta = getattr(X, "_meta", None)
    return sp.issparse(meta) or hasattr(meta, "tocsc")


def as_dask_cov(X, *, center: bool = True, client=None, persist="auto",
                dense_budget: float = DENSE_BUDGET_BYTES) -> DaskCov:
    """Validate a ``dask.array`` and wrap it as a :class:`DaskCov`.

    Parameters
    ----------
    X : dask.array.Array (m, n)
        Numeric data with known chunk sizes, dense or sparse chunks
        (``scipy.sparse`` or ``sparse.COO``; made CSC per block).  Chunks along
        the features are merged into one (``X.rechunk({1: -1})``): each block
        is a set of whole samples.
    center : bool, default True
        Implicit centering (the data is never altered).
    client : distributed.Client, optional
        The cluster to run on, e.g. ``distributed.Client("tcp://host:8786")``
        (see ``docs/DASK.md``).  None: Dask's default (a default Client if one
        was created, else local threads).
    persist : bool or "auto", default "auto"
        Keep the (CSC/ndarray) blocks in the workers' memory; False re-reads
        them from their source at every pass (data bigger than the cluster's memory).
        "auto": persist when they fit (:func:`decide_persist`, recorded with its
        reason in ``cov.persist_info``).
    dense_budget : float, optional
        Bytes :meth:`DaskCov.dense` may use for the n x n matrix.

    Returns
    -------
    DaskCov
        Its column means are computed by Dask in one pass that also checks
        for NaN/inf (n floats to the client).

    Raises
    ------
    InputError
        Dask missing (naming the extra), not a dask array, not 2-D, unknown
        chunk sizes, an empty dimension, non-numeric or non-finite values.
    """
    dask, da = require_dask()
    if not isinstance(X, da.Array):
        raise InputError(f"`X` must be a dask.array.Array (m x n); got {type(X).__name__} "
                         "(NumPy and scipy.sparse data go through nspca_core.fit)")
    if X.ndim != 2:
        raise InputError(f"`X` must be 2-D; got {X.ndim}-D with shape {X.shape}")
    if any(isinstance(c, float) and np.isnan(c) for c in X.shape):
        raise InputError(f"`X` must have known chunk sizes; got shape {X.shape} "
                         "(call X.compute_chunk_sizes() first)")
    m, n = X.shape
    if m < 1 or n < 1:
        raise InputError(f"`X` must have at least 1 row and 1 column; got shape {X.shape}")
    if np.dtype(X.dtype).kind not in "biuf":
        raise InputError(f"`X` must hold real numbers; got dtype {X.dtype}")
    if not isinstance(center, (bool, np.bool_)):
        raise InputError(f"`center` must be True or False; got {center!r}")
    if not (isinstance(persist, (bool, np.bool_)) or (isinstance(persist, str) and persist == "auto")):
        raise InputError(f"`persist` must be True, False or 'auto'; got {persist!r}")
    if not isinstance(dense_budget, numbers.Real) or not dense_budget >= 0:
        raise InputError(f"`dense_budget` must be a number of bytes >= 0; got {dense_budget!r}")
    if client is not None and not hasattr(client, "persist"):
        raise InputError(f"`client` must be a distributed.Client or None; got {type(client).__name__}")
    if X.numblocks[1] > 1:
        X = X.rechunk({1: -1})
    meta = X._meta
    if sp.issparse(meta) or hasattr(meta, "tocsc"):
        meta = sp.csc_matrix((0, 0), dtype=X.dtype)
    Xp = X.map_blocks(prepare_block, dtype=X.dtype, meta=meta)
    cov = DaskCov(Xp, np.zeros(n), center=bool(center), client=client, dense_budget=dense_budget)
    if isinstance(persist, str):
        cov.persist_info = decide_persist(X, client)
    else:
        cov.persist_info = {"persist": bool(persist), "reason": f"persist={bool(persist)} was given"}
    if cov.persist_info["persist"]:
        cov.X_dask = cov._persist(Xp)
    Xd = cov.X_dask
    sums = da.map_blocks(k_colsum, Xd, chunks=((1,) * Xd.numblocks[0], (n,)),
                         dtype=np.float64).sum(axis=0)
    counts = da.map_blocks(k_bad, Xd, chunks=((1,) * Xd.numblocks[0], (2,)),
                           dtype=np.float64).sum(axis=0)
    sums, (bad, stored) = cov._compute(sums, counts)
    cov._shared["data_bytes"] = float(stored) * (X.dtype.itemsize + (4 if sp.issparse(meta) else 0))
    if bad > 0:
        raise InputError(f"`X` must be finite; got {int(bad)} NaN/inf value(s)")
    if center:
        cov._mean_all = np.asarray(sums, dtype=np.float64) / m
        cov.mean = cov._mean_all
    return cov
