"""What makes the batched ascent (:func:`nspca_core._common.ascent.ascent`) cheaper without changing
its steps: :class:`Screen`, the products ``A x`` computed only on the rows that can enter a top k, and
:class:`SupportJump`, a column moved to the limit of the power iteration on a support it keeps."""

from __future__ import annotations

import copy

import numpy as np

from ..operators.cov import Cov
from .eig import top_eigh
from .steps import _to_dense, kth_largest

__all__ = ["Screen", "SupportJump", "SingleProducts", "variance_order"]


class SingleProducts:
    """``A W`` of a plain :class:`~nspca_core.operators.cov.Cov` computed in single precision (float32
    copies of X or A, made once), returned as float64: for the exploratory ascent of "auto", whose
    steps only choose supports; every point it returns is polished and evaluated in float64.

    About twice the speed of the float64 products (half the memory traffic, twice the lanes).  The
    products carry float32 rounding, ``|y_i - (A x)_i| <= c u ||X_i|| ||X x|| / m`` with ``u = 2^-24``
    and c about the data's rows (or the support's size on a covariance): steps differ from float64
    ones only where two entries of ``A x`` tie to that precision.
    """

    def __init__(self, cov: Cov):
        self.thin = cov._A is None and cov.thin
        if self.thin:
            self.X = cov.X.astype(np.float32)
            self.scale = np.float32(1.0 / cov.X.shape[0])
        else:
            self.A = cov.dense().astype(np.float32)

    @staticmethod
    def applies(cov, min_n: int) -> bool:
        """Whether ``cov`` is a plain operator (dense data or covariance) of at least ``min_n`` features."""
        return type(cov) is Cov and cov.n >= min_n and (cov.X is not None or cov._A is not None)

    def rows_of(self, U: np.ndarray, rows: np.ndarray, W: np.ndarray, Z=None, out=None) -> np.ndarray:
        """``(A W)[U]`` (float64) for W (float64) nonzero on ``rows`` only (``W`` those rows; ``Z``
        optionally ``X_rows W`` already in float32); ``U`` None: every row.  ``out``: a float64 array
        of that shape written in place (the float32 products converted once, into it) and returned."""
        every = rows.size == (self.X.shape[1] if self.thin else self.A.shape[0])  # no gather then
        if self.thin:
            if Z is None:
                Z = (self.X if every else self.X[:, rows]) @ W.astype(np.float32)
                Z *= self.scale
            XU = self.X if U is None else self.X[:, U]
            Y = (Z.T @ XU).T
        else:
            if U is None:  # A symmetric: rows for columns
                AU = self.A if every else self.A[rows]
            else:
                AU = self.A[np.ix_(rows, U)]
            Y = (W.astype(np.float32).T @ AU).T
        if out is None:
            return Y.astype(np.float64)
        np.copyto(out, Y)  # float32 to float64: exact
        return out

    def z(self, rows: np.ndarray, W: np.ndarray):
        """``X_rows W / m`` in float32 (thin data), for :meth:`rows_of`; None on a covariance."""
        if not self.thin:
            return None
        Z = self.X[:, rows] @ W.astype(np.float32)
        Z *= self.scale
        return Z

    def __call__(self, W: np.ndarray, dense: bool = False, out=None) -> np.ndarray:
        """``A W`` for W (n, q); only the rows of W holding a nonzero enter the product (``dense``:
        W has no zero row, every row enters without the check).  ``out``: as in :meth:`rows_of`
        (W of two dimensions)."""
        W2 = W if W.ndim == 2 else W[:, None]
        n, q = W2.shape
        if not dense:
            used = np.flatnonzero(np.abs(W2).sum(axis=1))
            # gathering the used rows pays when the product with the rest is larger (as Cov.matvec)
            dense = used.size >= min(0.75, q / (q + 2)) * n
        Y = self.rows_of(None, np.arange(n), W2, out=out) if dense else \
            self.rows_of(None, used, W2[used], out=out)
        return Y if W.ndim == 2 else Y[:, 0]


class Screen:
    """The products ``y = A x`` of the truncated power step, computed only on the rows that can
    enter the top k of their column.

    A column whose iterate x has k nonzeros, and ``t`` (the smallest of y on them) positive,
    has its k-th largest entry at least t (k entries reach it): a row whose y is provably below
    t is neither kept nor tied with a kept one, and the step on the other rows alone is the
    step on all (:func:`_step_on_rows`).  Two bounds, both valid because A is PSD:

    - Cauchy–Schwarz, ``|y_i| <= sqrt(A_ii) sqrt(x^T A x)``: with the rows sorted by variance, the
      rows that pass are a prefix (one ``searchsorted``);
    - on that prefix, with ``V`` (n, d) the top-d part of A (``V V^T`` its d leading eigenpairs,
      :meth:`Cov.factor`) and the PSD rest ``R = A - V V^T``: ``|y_i - (V V^T x)_i| <=
      sqrt(R_ii) sqrt(x^T R x)``, ``R_ii = A_ii - ||V_i||^2``, ``x^T R x = x^T A x - ||V^T x||^2``.

    The rows that pass, and the support of every column, get y exactly, as :meth:`Cov.matvec`
    would compute it (``X_U^T (X x) / m``, or ``A_U x``): the steps are those without the screen
    up to the rounding of the products.  Both square roots are raised by ``guard`` (relative,
    plus ``1e-10 lambda_1`` absolute), far above the rounding of V and of the products.  A column
    with fewer than k nonzeros, ``t <= 0`` or a long prefix (``prefix_max``) gets the whole
    product; so do the columns left over once the union of the others' rows reaches
    ``union_max`` of n (the rows are counted per column: one loose column does not cost the
    others their screen).

    Only for :class:`~nspca_core.operators.cov.Cov` itself (dense data or a dense covariance): other
    operators have no product restricted to rows.
    """

    guard = 1e-9
    #: below this work (n times the rows of X, or the support's size, times at least 4 columns: one
    #: pass over X costs about as much as 4 columns' multiply-adds) the whole product is cheaper
    #: than the screen's own passes
    min_work = 3_000_000
    #: the screened columns' rows U at most this fraction of n (more, and the bounds' passes and the
    #: gather of X's columns cost about what the rows left out save)
    union_max = 1 / 8
    #: the residual bound is computed for columns whose Cauchy–Schwarz prefix is at most this fraction
    prefix_max = 1 / 4

    #: with :class:`SingleProducts`, rows are kept down to this fraction below t (the products' float32
    #: rounding): the screened steps are those of the unscreened float32 products
    single_slack = 1e-5
    #: with :class:`SingleProducts`, the screen is tried only when at least this share of the columns
    #: pass Cauchy–Schwarz's prefix (below: the split products and steps cost more than they save)
    single_share = 0.75

    def __init__(self, cov, V: np.ndarray, lam1: float, single: SingleProducts | None = None, *,
                 diag: np.ndarray | None = None, key: np.ndarray | None = None):
        """``diag``: ``cov.diag()`` already computed (the same floats); ``key``: the data's tie-break
        ranks (:func:`~nspca_core._common.ascent.tie_key` of those variances, larger first), from
        which the rows' order by variance comes without a sort of all n (:func:`variance_order`)."""
        self.cov = cov
        self.single = single
        self.V = V
        self.lam1 = lam1
        self.thin = cov._A is None and cov.thin
        self._skip, self._cooldown = 0, 1
        self._sorted = False
        self._diag, self._key = diag, key
        self._of = None  # the screen this one is the float64 twin of (:meth:`exact`)

    def _prepare(self):
        """The rows sorted by variance and the bounds' square roots, once, when the screen first
        gets that far (on data where it never does, no sort of all n variances)."""
        if self._sorted:
            return
        if self._of is not None:  # a twin (:meth:`exact`): the arrays of the screen it was made from
            self._of._prepare()
            for name in ("delta", "s", "order", "sd", "neg_sd"):
                setattr(self, name, getattr(self._of, name))
            self._sorted = True
            return
        V = self.V
        diag = np.maximum(self.cov.diag() if self._diag is None else self._diag, 0.0)
        self.delta = 1e-10 * max(float(self.lam1), 0.0)
        self.s = np.sqrt(np.maximum(diag - np.einsum("ij,ij->i", V, V), 0.0) + self.guard * diag + self.delta)
        self.order = variance_order(diag, self._key)
        self.sd = np.sqrt(diag * (1 + self.guard) + self.delta)
        self.neg_sd = -self.sd[self.order]  # increasing
        self._sorted = True

    def exact(self) -> "Screen":
        """This screen with float64 products (itself when it has them), sharing the rows' order and
        the bounds' square roots, computed once when either first needs them (auto's polish on thin data
        whose products cost less than the screen's passes never does: no sort of the n variances)."""
        if self.single is None:
            return self
        twin = copy.copy(self)
        twin.single, twin._skip, twin._cooldown = None, 0, 1
        if not self._sorted:
            twin._of = self
        return twin

    @staticmethod
    def applies(cov) -> bool:
        """Whether ``cov`` has the row-restricted products the screen needs."""

        return type(cov) is Cov

    def _rows(self, U: np.ndarray, rows: np.ndarray, Wr: np.ndarray, Z):
        """Exact ``(A W)[U]`` for W with nonzero rows ``rows`` only (``Wr`` those rows; ``Z = X_rows Wr``
        for data)."""
        cov = self.cov
        if self.single is not None:
            return self.single.rows_of(U, rows, Wr, Z)
        if self.thin:
            return cov.X[:, U].T @ Z / cov.X.shape[0]
        return cov.dense()[np.ix_(U, rows)] @ Wr

    def _whole(self, ia: np.ndarray, va: np.ndarray, n: int) -> np.ndarray:
        """``A X`` of the compact columns, the products :meth:`Cov.matvec` computes for the dense X
        (through X's columns on the rows used, when fewer than half: the same floats), without
        forming the dense n x q X and scanning it for those rows."""
        if self.single is not None:
            rows = _used_rows(ia, va, n)
            lut = np.full(n + 1, rows.size, dtype=np.intp)
            lut[rows] = np.arange(rows.size)
            W = np.zeros((rows.size + 1, ia.shape[1]))
            W[lut[ia], np.arange(ia.shape[1])] = va
            return self.single.rows_of(None, rows, W[:rows.size])
        if not self.thin:
            return self.cov.matvec(_to_dense(ia, va, n))
        rows = _used_rows(ia, va, n)
        if rows.size >= 0.5 * n:
            return self.cov.matvec(_to_dense(ia, va, n))
        lut = np.full(n + 1, rows.size, dtype=np.intp)
        lut[rows] = np.arange(rows.size)
        W = np.zeros((rows.size + 1, ia.shape[1]))
        W[lut[ia], np.arange(ia.shape[1])] = va  # entries off ``rows`` are zeros, on the dropped last row
        X = self.cov.X
        return X.T @ (X[:, rows] @ W[:rows.size]) / X.shape[0]

    def products(self, ia: np.ndarray, va: np.ndarray, kc: np.ndarray, n: int, both_signs: bool = False):
        """For the compact iterates ``(ia, va)`` (``kc[j]`` nonzeros allowed): ``(v, parts)``, ``v`` the
        values ``x^T A x`` and ``parts`` a list of ``(g, U, Y)`` covering the columns: columns g with
        ``Y = (A X)[U][:, g]`` exact on the sorted rows U, every other row below the k-th largest
        of its column (``U = None``: all n rows).

        The rows that can enter a column's top k are found per column (both bounds); the columns
        with the fewest such rows share one U as long as their union stays within n / 4, the
        others get the whole product (one column whose bound is loose does not cost the others
        their screen).  ``both_signs`` (the step also tries ``T_k(-y)``): a column is screened only
        where ``T_k((-y)_+)`` provably is not the longer (:meth:`_flip_ruled_out`; float64 products)."""
        q = ia.shape[1]
        cols = np.arange(q)
        self._skip -= 1
        if self.thin and n * max(q, 4) * self.cov.X.shape[0] < self.min_work:  # the whole product, whatever
            Y = self._whole(ia, va, n)  # the union of the supports (below)
            return np.einsum("ij,ij->j", va, Y[np.minimum(ia, n - 1), cols]), [(cols, None, Y)]
        used = np.zeros(n + 1, dtype=bool)
        used[ia] = True
        rows = np.flatnonzero(used[:n])  # the union of the supports
        r = rows.size
        work = n * max(q, 4) * (self.cov.X.shape[0] if self.thin else r)  # of the whole product
        if r > n // 4 or work < self.min_work or self._skip >= 0:  # the whole product
            Y = self._whole(ia, va, n)
            return np.einsum("ij,ij->j", va, Y[np.minimum(ia, n - 1), cols]), [(cols, None, Y)]
        self._prepare()
        lut = np.full(n + 1, r, dtype=np.intp)
        lut[rows] = np.arange(r)
        pos = lut[ia]  # padding n -> r
        Wr = np.zeros((r + 1, q))
        Wr[pos, cols] = va  # padding (vals 0) lands in row r
        Wr = Wr[:r]
        if self.single is not None:
            Z = self.single.z(rows, Wr)
        else:
            Z = self.cov.X[:, rows] @ Wr if self.thin else None
        Yr = self._rows(rows, rows, Wr, Z)  # exact on the supports

        def whole(sel):  # the whole product of the columns ``sel`` (float32: from Z, already formed)
            if self.single is not None:
                return self.single.rows_of(None, rows, Wr[:, sel], None if Z is None else Z[:, sel])
            return self._whole(ia[:, sel], va[:, sel], n)

        at = np.vstack([Yr, np.full((1, q), np.inf)])[pos, cols]
        v = np.einsum("ij,ij->j", va, np.where(ia < n, at, 0.0))
        t = at.min(axis=0)
        if self.single is not None:  # the float32 rounding of the products: rows within it are kept
            t = t - self.single_slack * np.abs(t)
        # Cauchy–Schwarz: the rows of variance at least (t / sqrt(v))^2 (a prefix of ``order``)
        vg = np.maximum(v, 0.0) * (1 + self.guard) + self.delta
        length = np.searchsorted(self.neg_sd, -t / np.sqrt(vg), side="right")
        prune = (np.count_nonzero(ia < n, axis=0) == kc) & (t > 0)
        if not prune.any():  # no column with k nonzeros and a positive t: nothing to screen
            return v, [(cols, None, whole(cols))]
        # the residual bound only on the columns whose prefix is short: on a long one its passes
        # cost about what the rows it leaves out save
        g = np.flatnonzero(prune & (length <= n * self.prefix_max))
        if self.single is not None and g.size < self.single_share * q:
            g = g[:0]  # float32: the columns left over cost the whole product and its n-row step anyway
        if both_signs and g.size:
            yJ = np.where(ia < n, at, 0.0)
            yy = np.einsum("ij,ij->j", yJ, yJ)  # ||y_J||^2 on the supports
            g = self._flip_ruled_out(g, rows, Wr, v, yy, kc) if self.single is None else g[:0]
        if g.size:
            g, U = self._screened(g, rows, Wr, v, t, length, kc, n)
        if not g.size:  # little to save: the whole product (and not again for a while: 1, 2,
            self._skip, self._cooldown = self._cooldown, 2 * self._cooldown  # 4, ... iterations)
            return v, [(cols, None, whole(cols))]
        self._cooldown = 1
        parts = []
        rest = np.setdiff1d(cols, g, assume_unique=True)
        if rest.size:
            parts.append((rest, None, whole(rest)))
        parts.append((g, U, self._rows(U, rows, Wr[:, g], None if Z is None else Z[:, g])))
        return v, parts

    def _flip_ruled_out(self, g, rows, Wr, v, yy, kc):
        """The columns of ``g`` where ``||T_k((-y)_+)||^2 < ||T_k(y_+)||^2`` is proved without the
        whole product (the step then keeps ``T_k(y_+)``, found on the screened rows).

        ``||T_k(y_+)||^2`` is at least ``yy = ||y_J||^2`` (the previous support J: k positive
        entries).  Each ``-y_i`` is at most ``b_i``, the smaller of ``-(V V^T x)_i + s_i ||R^{1/2} x||``
        and Cauchy–Schwarz's ``sqrt(A_ii x^T A x)`` (both with the screen's guards), so
        ``||T_k((-y)_+)||^2`` is at most the sum of the k largest ``(b_i)_+^2``; the column passes
        when that is below ``yy`` (margin ``1e-9`` relative)."""
        c = self.V[rows].T @ Wr[:, g]  # V^T x
        vg = np.maximum(v[g], 0.0)
        rr = np.sqrt(np.maximum(vg - np.einsum("ij,ij->j", c, c), 0.0) + self.guard * vg + self.delta)
        b = np.multiply.outer(self.s, rr)
        b -= self.V @ c
        np.minimum(b, np.multiply.outer(self.sd, np.sqrt(vg * (1 + self.guard) + self.delta)), out=b)
        np.maximum(b, 0.0, out=b)
        top = np.zeros(g.size)
        for k in np.unique(kc[g]):  # the sum of the k largest squares, ties at the k-th counted once each
            h = np.flatnonzero(kc[g] == k)
            bh = b if h.size == g.size else b[:, h]
            kth = kth_largest(bh, int(min(k, bh.shape[0])))
            above = bh > kth
            top[h] = np.einsum("ij,ij->j", bh, np.where(above, bh, 0.0)) + (k - above.sum(axis=0)) * kth * kth
        return g[top * (1 + 1e-9) < yy[g]]

    def _screened(self, g, rows, Wr, v, t, length, kc, n):
        """The columns of ``g`` to screen and their rows U: per column, the rows of its variance
        prefix (``length``) whose residual bound reaches its ``t``; the columns taken by
        increasing count while the union, with the supports and the k + 1 rows of largest
        variance, stays within n / 4."""
        L = length[g]
        P = self.order[:int(L.max())]
        c = self.V[rows].T @ Wr[:, g]  # V^T x
        rr = np.sqrt(np.maximum(v[g] - np.einsum("ij,ij->j", c, c), 0.0) + self.guard * v[g] + self.delta)
        B = self.V[P] @ c
        B += np.multiply.outer(self.s[P], rr)
        passes = B >= t[g]
        passes &= np.arange(P.size)[:, None] < L  # beyond its prefix, a column's Cauchy–Schwarz fails
        base = np.zeros(n, dtype=bool)
        base[rows] = True
        base[self.order[:int(kc[g].max()) + 1]] = True  # a (k+1)-th row for the step, at least
        by = np.argsort(np.count_nonzero(passes, axis=0), kind="stable")
        union = np.logical_or.accumulate(passes[:, by], axis=1)  # the rows of P of the first j columns
        extra = np.count_nonzero(base) - np.count_nonzero(base[P])  # base rows outside P
        sizes = np.count_nonzero(union | base[P][:, None], axis=0) + extra
        take = int(np.count_nonzero(sizes <= n * self.union_max))  # sizes increase with j
        if take == 0:
            return g[:0], None
        base[P[union[:, take - 1]]] = True
        return np.sort(g[by[:take]]), np.flatnonzero(base)


def variance_order(diag: np.ndarray, key: np.ndarray | None = None) -> np.ndarray:
    """``np.argsort(-diag, kind="stable")``: the features by decreasing variance, ties by index.

    With ``key`` (a permutation of ``range(n)``, e.g. :func:`~nspca_core._common.ascent.tie_key`'s
    ranks, which order the features by their variances rounded to 9 digits), the features are first
    taken in the key's order, which is sorted but for variances equal to 9 digits, and that nearly
    sorted array is sorted stably (a merge sort finds the sorted runs: O(n) passes, not n log n
    comparisons).  Without two equal variances the order by variance is unique, so it is the
    argsort's; with a tie (which the key may order otherwise than by index) the argsort is taken."""
    neg = -diag
    if key is not None and key.shape == diag.shape:
        by_key = np.empty_like(key)
        by_key[key] = np.arange(key.size)
        order = by_key[np.argsort(neg[by_key], kind="stable")]
        v = neg[order]
        if (v[1:] > v[:-1]).all():  # strictly increasing: no tie, no NaN (a NaN compares False)
            return order
    return np.argsort(neg, kind="stable")


class SupportJump:
    """The limit of the truncated power step on a support it keeps: the top eigenvector of ``A_JJ``.

    While the support J of an iterate stays, the step is the power iteration of ``A_JJ``
    (nonnegative iterates), which converges to its top eigenvector u, slowly when the
    eigengap is small.  When u is positive it is also feasible and maximizes ``y^T A y`` over
    the unit y on J, so moving there never decreases the value; the step from u then either
    keeps J (u is a fixed point: the column stops) or leaves it, as the iterates would once
    close enough to u.  ``u`` comes from ``eigh(A_JJ)`` (``top_only``: its top eigenpair alone), or
    of the m x m Gram of ``X_J`` when the data have fewer rows m than |J|; it is computed only
    where it costs less than the steps it saves (:meth:`pays`; on a covariance, never above
    ``max_support``).
    """

    #: columns that would stop within this many steps anyway are left to the iteration
    min_steps = 4

    def __init__(self, cov, max_support: int = 128, *, top_only: bool = False):
        self.cov = cov
        self.max_support = max_support
        self.top_only = top_only
        self._thin = cov._A is None and cov.thin and cov.X is not None

    def pays(self, size: int, steps: float) -> bool:
        """Whether an eigh for a support of ``size`` costs less than ``steps`` steps of one column
        (about ``9 s^3`` flops for an eigh of order s; a step ``2 n |J|``, or ``2 m n`` through X)."""
        n = self.cov.n
        if self._thin:
            m = self.cov.X.shape[0]
            s = min(size, m)
            return 9.0 * s ** 3 + 2.0 * m * m * size <= steps * 2.0 * m * n
        return size <= self.max_support and 9.0 * size ** 3 <= steps * 2.0 * n * size

    def top(self, J: np.ndarray):
        """The positive unit top eigenvector of ``A_JJ``, or None."""
        X = self.cov.X if self._thin else None
        if X is not None and X.shape[0] < J.size:
            XJ = X[:, J]
            G = XJ @ XJ.T
            u = XJ.T @ (top_eigh(G, 1)[1][:, 0] if self.top_only else np.linalg.eigh(G)[1][:, -1])
        else:
            M = self.cov.submatrix(J)
            u = top_eigh(M, 1)[1][:, 0] if self.top_only else np.linalg.eigh(M)[1][:, -1]
        if u.sum() < 0:
            u = -u
        if not (u > 0).all():
            return None
        return u / np.linalg.norm(u)

    def __call__(self, zi: np.ndarray, zv: np.ndarray, cols: np.ndarray, n: int, steps=None) -> np.ndarray:
        """Columns ``cols`` of the iterates ``(zi, zv)`` (compact, or dense when ``zi`` has no rows)
        moved to their support's limit where it is positive and, given the ``steps`` each would
        still need, where the eigh costs less than those steps; ``zv`` updated in place."""
        for c, j in enumerate(cols):
            J = zi[:, j][zi[:, j] < n] if zi.shape[0] else np.flatnonzero(zv[:, j])
            if J.size < 2 or (steps is not None and not self.pays(J.size, float(steps[c]))):
                continue
            u = self.top(J)
            if u is None:
                continue
            if zi.shape[0]:
                zv[:J.size, j] = u  # the indices are increasing, as J
            else:
                zv[J, j] = u
        return zv


def _used_rows(ia: np.ndarray, va: np.ndarray, n: int) -> np.ndarray:
    """The sorted rows holding a nonzero of the compact columns ``(ia, va)`` (padding n left out): the
    array ``np.unique(ia[(ia < n) & (va != 0)])`` is, from a mask of n + 1 flags instead of a sort of
    all q k indices (dlbcl-shaped k = 180, 36 columns: 0.37 -> 0.02 ms a product)."""
    used = np.zeros(n + 1, dtype=bool)
    used[ia[va != 0]] = True
    used[n] = False  # padding (index n) holds zeros; dropped even if a caller's did not
    return np.flatnonzero(used)


def _slow(gain: np.ndarray, prev_gain: np.ndarray, tol: np.ndarray) -> np.ndarray:
    """The steps each column needs before its gains, shrinking by ``gain / prev_gain`` per step,
    fall below ``tol`` (many: a power iteration with a small eigengap); inf when they do not
    shrink, 0 when they are below ``tol`` already."""
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = gain / prev_gain
        ok = (gain > tol) & (rate > 0) & (rate < 1)
        need = np.log(np.where(ok, tol / gain, 1.0)) / np.log(np.where(ok, rate, 0.5))
    return np.where((gain > tol) & (rate >= 1), np.inf, np.where(ok, need, 0.0))


def _step_on_rows(step, U, Y, ia, va, kc, key, xtol, n):
    """The step on the rows U (sorted) of the columns only, indices mapped to and from U."""
    nu = U.size
    li = np.searchsorted(U, ia)  # the supports are in U; the padding n becomes nu
    zi, zv, done, settled = step(Y, li, va, kc, None if key is None else key[U], xtol)
    return np.where(zi < nu, U[np.minimum(zi, nu - 1)], n), zv, done, settled
