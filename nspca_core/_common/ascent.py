"""The truncated power ascent, once: many starts as the columns of one matrix.

Every local search of the project — ``fit(method="auto")``'s polish, the
certificates' lower bounds, the truncated power method (Yuan & Zhang 2013) —
iterates

    x  <-  T_k(A x) / ||T_k(A x)||,    T_k(y) = the k largest entries of y_+

(optionally also trying ``T_k(-A x)`` and keeping the longer of the two, which
is the exact rank-1 step of Asteris et al. 2014, §3.1).  :func:`ascent` runs it
on the columns of a start matrix at once, each with its own k, dropping columns
that have converged and columns that have settled on the support of a better
one (the same power iteration on ``A_JJ`` from there; copies of a column among
them).

The step is an argument (``step=``, as SciPy's trust-region driver takes its
subproblem; :mod:`nspca_core._common.steps`): the hard truncation above
(:class:`~nspca_core._common.steps.TopK`, the default), EM's soft top-k
(:class:`~nspca_core._common.steps.SoftTopK`) or the plain power iteration of the
bipartite paper's deflation baselines (:class:`~nspca_core._common.steps.PlainPower`)
all run in this one driver.  Steps that do not ascend return their last iterate
(``keep="last"``) and stop on their own rule only (``rtol=None``).

Proof of monotonicity (A PSD, hard truncation).  ``f(y) = y^T A y`` is convex and even, so with
``g = A x``: ``f(y) >= f(x) + 2 g^T (y - x) = 2 g^T y - f(x)``.  The step
chooses the unit ``y >= 0`` with at most k nonzeros maximizing ``g^T y`` (or
``|g^T y|`` with both signs, then flip the sign of ``g``), and ``x`` is such a
point, so ``g^T y >= g^T x = f(x)`` and ``f(y) >= f(x)``.  The value of every
iterate is computed from the same product ``A x`` (no extra work), and each
column returns its best iterate, so rounding cannot make a column worse than
its (projected) start.

Ties.  The k-th largest value may be shared; ties are broken by a
data-derived ``key`` (e.g. the rank of each feature's variance), not by the
column order, so that permuting the features permutes the answer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .steps import _COMPACT_MIN_N, TopK, _to_compact, _to_dense, hard_topk, project, topk_mask, truncate

__all__ = ["AscentResult", "tie_key", "cov_key", "topk_mask", "truncate", "project", "random_starts",
           "factor_starts", "ascent", "reweight", "polish"]

# 1 - <x_new, x> below this (same support): a column has converged
_XTOL = 1e-12


@dataclass(frozen=True, eq=False)
class AscentResult:
    """Per column: the best iterate ``X[:, j]`` (nonnegative, unit, at most ``kc[j]`` nonzeros),
    its value ``values[j] = x^T A x``, whether it converged; ``iterations`` run in all; the
    values of the starts made feasible (None when the step's values are not computed)."""

    X: np.ndarray
    values: np.ndarray
    converged: np.ndarray
    iterations: int
    #: the value of each feasible start (``step.start`` of the column), from the first products
    start_values: np.ndarray | None = None

    def best(self) -> tuple[np.ndarray, float, int]:
        """``(x, value, column)`` of the best column."""
        j = int(np.argmax(self.values))
        return self.X[:, j], float(self.values[j]), j


def _round_sig(v: np.ndarray, digits: int = 9) -> np.ndarray:
    """``v`` rounded to ``digits`` significant digits (relative to its largest entry), so that
    values equal up to rounding compare equal."""
    top = float(np.abs(v).max()) if v.size else 0.0
    if top == 0 or not np.isfinite(top):
        return np.zeros_like(v)
    q = 10.0 ** (np.floor(np.log10(top)) - digits + 1)
    return np.round(v / q)


def tie_key(diag: np.ndarray, second: np.ndarray | None = None) -> np.ndarray:
    """A tie-break priority per feature from the data: larger variance first, then larger
    ``second`` (e.g. the row sums ``A 1``), compared to 9 significant digits.

    Returns ``key`` with ``key[i]`` the rank of feature i.  Comparing rounded values makes
    the order independent of how the covariance was computed (dense or sparse, permuted):
    standardized data have all variances equal up to rounding, and the row sums then decide.
    Features equal in both keep their order: they are then true symmetries of the problem or
    duplicated features.
    """
    keys = [-_round_sig(np.asarray(diag, dtype=float))]
    if second is not None:
        keys.insert(0, -_round_sig(np.asarray(second, dtype=float)))
    order = np.lexsort(keys)  # the last key is the primary one
    key = np.empty(diag.size, dtype=np.intp)
    key[order] = np.arange(diag.size)
    return key


def cov_key(cov) -> np.ndarray:
    """:func:`tie_key` of a covariance operator: its variances, then its row sums ``A 1``."""
    return tie_key(cov.diag(), cov.matvec(np.ones(cov.n)))



def random_starts(key: np.ndarray, rng: np.random.Generator, count: int, *,
                  nonneg: bool = True) -> np.ndarray:
    """``count`` random unit columns drawn per rank of ``key``, not per feature index: the
    feature of rank r gets row r of the draw, so permuting the features permutes the
    starts (and, with the tie-breaks of :func:`topk_mask`, the answers)."""
    R = rng.standard_normal((key.size, count))
    if nonneg:
        R = np.abs(R)
    R = R[key]
    return R / np.linalg.norm(R, axis=0)


def factor_starts(cov, V: np.ndarray, k: int, nonneg: bool) -> np.ndarray:
    """Starts from the data: the indicator of the k features of largest variance (ties to the
    lower index), then each column of a factor ``V`` (n, d) with both signs, hard-truncated to k
    entries (:func:`~nspca_core._common.steps.hard_topk`), those that keep a nonzero."""
    n = cov.n
    top = np.argsort(-cov.diag(), kind="stable")[:k]
    cols = [np.zeros(n)]
    cols[0][top] = 1.0
    for j in range(V.shape[1]):
        for sg in (1.0, -1.0):
            v = hard_topk((sg * V[:, j])[:, None], k, nonneg)[:, 0]
            if v.any():
                cols.append(v)
    return np.column_stack(cols)


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
    with fewer than k nonzeros, ``t <= 0`` or a long prefix gets the whole product.

    Only for :class:`~nspca_core.operators.cov.Cov` itself (dense data or a dense covariance): other
    operators have no product restricted to rows.
    """

    guard = 1e-9
    #: below this work (n times the rows of X, or the support's size, times at least 4 columns: one
    #: pass over X costs about as much as 4 columns' multiply-adds) the whole product is cheaper
    #: than the screen's own passes
    min_work = 3_000_000

    def __init__(self, cov, V: np.ndarray, lam1: float):
        self.cov = cov
        self.V = V
        diag = np.maximum(cov.diag(), 0.0)
        self.delta = 1e-10 * max(float(lam1), 0.0)
        self.s = np.sqrt(np.maximum(diag - np.einsum("ij,ij->i", V, V), 0.0) + self.guard * diag + self.delta)
        self.order = np.argsort(-diag, kind="stable")
        self.neg_sd = -np.sqrt(diag[self.order] * (1 + self.guard) + self.delta)  # increasing
        self.thin = cov._A is None and cov.thin
        self._skip, self._cooldown = 0, 1

    @staticmethod
    def applies(cov) -> bool:
        """Whether ``cov`` has the row-restricted products the screen needs."""
        from ..operators.cov import Cov

        return type(cov) is Cov

    def _rows(self, U: np.ndarray, rows: np.ndarray, Wr: np.ndarray, Z):
        """Exact ``(A W)[U]`` for W with nonzero rows ``rows`` only (``Wr`` those rows; ``Z = X_rows Wr``
        for data)."""
        cov = self.cov
        if self.thin:
            return cov.X[:, U].T @ Z / cov.X.shape[0]
        return cov.dense()[np.ix_(U, rows)] @ Wr

    def products(self, ia: np.ndarray, va: np.ndarray, kc: np.ndarray, n: int):
        """For the compact iterates ``(ia, va)`` (``kc[j]`` nonzeros allowed): ``(v, parts)``, ``v`` the
        values ``x^T A x`` and ``parts`` a list of ``(g, U, Y)`` covering the columns: columns g with
        ``Y = (A X)[U][:, g]`` exact on the sorted rows U, every other row below the k-th largest
        of its column (``U = None``: all n rows)."""
        q = ia.shape[1]
        cols = np.arange(q)
        used = np.zeros(n + 1, dtype=bool)
        used[ia] = True
        rows = np.flatnonzero(used[:n])  # the union of the supports
        r = rows.size
        work = n * max(q, 4) * (self.cov.X.shape[0] if self.thin else r)  # of the whole product
        self._skip -= 1
        if r > n // 4 or work < self.min_work or self._skip >= 0:  # the whole product
            Y = self.cov.matvec(_to_dense(ia, va, n))
            return np.einsum("ij,ij->j", va, Y[np.minimum(ia, n - 1), cols]), [(cols, None, Y)]
        lut = np.full(n + 1, r, dtype=np.intp)
        lut[rows] = np.arange(r)
        pos = lut[ia]  # padding n -> r
        Wr = np.zeros((r + 1, q))
        Wr[pos, cols] = va  # padding (vals 0) lands in row r
        Wr = Wr[:r]
        Z = self.cov.X[:, rows] @ Wr if self.thin else None
        Yr = self._rows(rows, rows, Wr, Z)  # exact on the supports
        at = np.vstack([Yr, np.full((1, q), np.inf)])[pos, cols]
        v = np.einsum("ij,ij->j", va, np.where(ia < n, at, 0.0))
        t = at.min(axis=0)
        # Cauchy–Schwarz: the rows of variance at least (t / sqrt(v))^2 (a prefix of ``order``)
        vg = np.maximum(v, 0.0) * (1 + self.guard) + self.delta
        length = np.searchsorted(self.neg_sd, -t / np.sqrt(vg), side="right")
        prune = (np.count_nonzero(ia < n, axis=0) == kc) & (t > 0)
        parts = []
        if not prune.all():
            g = np.flatnonzero(~prune)
            parts.append((g, None, self.cov.matvec(_to_dense(ia[:, g], va[:, g], n))))
            if g.size == q:
                return v, parts
        g = np.flatnonzero(prune)
        P = self.order[:int(length[g].max())]
        c = self.V[rows].T @ Wr[:, g]  # V^T x
        rr = np.sqrt(np.maximum(v[g] - np.einsum("ij,ij->j", c, c), 0.0) + self.guard * v[g] + self.delta)
        B = self.V[P] @ c
        B += np.multiply.outer(self.s[P], rr)
        used[P[(B >= t[g]).any(axis=1)]] = True
        used[self.order[:int(kc[g].max()) + 1]] = True  # a (k+1)-th row for the step, at least
        U = np.flatnonzero(used[:n])
        if U.size > n // 4:  # little to save: the whole product (and not again for a while: 1, 2,
            self._skip, self._cooldown = self._cooldown, 2 * self._cooldown  # 4, ... iterations)
            parts.append((g, None, self.cov.matvec(_to_dense(ia[:, g], va[:, g], n))))
            return v, parts
        self._cooldown = 1
        parts.append((g, U, self._rows(U, rows, Wr[:, g], None if Z is None else Z[:, g])))
        return v, parts


class SupportJump:
    """The limit of the truncated power step on a support it keeps: the top eigenvector of ``A_JJ``.

    While the support J of an iterate stays, the step is the power iteration of ``A_JJ``
    (nonnegative iterates), which converges to its top eigenvector u, slowly when the
    eigengap is small.  When u is positive it is also feasible and maximizes ``y^T A y`` over
    the unit y on J, so moving there never decreases the value; the step from u then either
    keeps J (u is a fixed point: the column stops) or leaves it, as the iterates would once
    close enough to u.  ``u`` comes from ``eigh(A_JJ)``, or from the m x m Gram of ``X_J`` when
    the data have fewer rows m than |J|; it is computed only where it costs less than the steps
    it saves (:meth:`pays`; on a covariance, never above ``max_support``).
    """

    #: columns that would stop within this many steps anyway are left to the iteration
    min_steps = 4

    def __init__(self, cov, max_support: int = 128):
        self.cov = cov
        self.max_support = max_support
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
            w, P = np.linalg.eigh(XJ @ XJ.T)
            u = XJ.T @ P[:, -1]
        else:
            u = np.linalg.eigh(self.cov.submatrix(J))[1][:, -1]
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


def _merge_weights(n: int) -> np.ndarray:
    """The fixed weights of :func:`_merge_settled`'s support hash (row n: compact padding)."""
    return 1.0 + 0.5 * np.sin(np.arange(n + 1))


def _merge_settled(idx: np.ndarray, vals: np.ndarray, settled: np.ndarray, v: np.ndarray, kc: np.ndarray,
                   active: np.ndarray, alias: list, n: int, w: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Drop settled columns (support unchanged by the last step) whose support and k equal those
    of another settled column of larger value ``v``: on a fixed support J the step is the power
    iteration of ``A_JJ``, so both converge to its top eigenvector (the same point) unless the
    support changes, which it then does for both (copies of a column are merged this way as soon
    as they settle).  Updates ``keep`` (the columns still moving) in place and returns it; records
    ``(dropped, kept)`` in alias.  Candidates share one hash of the support (``w`` summed over
    it), then compare exactly."""
    cand = np.flatnonzero(keep & settled)
    if cand.size < 2:
        return keep
    S = idx[:, cand] if idx.shape[0] else (vals[:, cand] != 0)  # their supports
    h = w[S].sum(axis=0) if idx.shape[0] else w[:n] @ S
    hs = np.sort(h)
    if not (hs[1:] == hs[:-1]).any():  # the common case: no two settled supports alike
        return keep
    kk = kc[active[cand]]
    order = np.lexsort((-v[cand], h, kk))  # groups by (k, hash), best value first
    hs, ks = h[order], kk[order]
    first = np.concatenate(([True], (hs[1:] != hs[:-1]) | (ks[1:] != ks[:-1])))
    starts, same = np.flatnonzero(first), np.flatnonzero(~first)
    a = order[starts[np.searchsorted(starts, same, side="right") - 1]]  # each group's best
    b = order[same]
    equal = (S[:, a] == S[:, b]).all(axis=0)
    keep[cand[b[equal]]] = False
    alias.extend(zip(active[cand[b[equal]]].tolist(), active[cand[a[equal]]].tolist()))
    return keep


def ascent(matvec, X0: np.ndarray, kc, *, step=None, key: np.ndarray | None = None, max_iter: int = 200,
           rtol: float | None = 1e-13, both_signs: bool = False, signed: bool = False,
           xtol: float = _XTOL, merge: bool | str = True, stop=None, keep: str = "best",
           quads=None, screen: Screen | None = None, jump: SupportJump | None = None) -> AscentResult:
    """Batched ascent from the columns of ``X0`` (n, p), one ``step`` per iteration.

    Parameters
    ----------
    matvec : callable
        ``matvec(W) = A @ W`` for W of shape (n, q); A symmetric PSD.
    X0 : ndarray (n, p)
        Starts; made feasible by ``step.start`` first (the hard truncation: ``T_k`` of the
        start, normalized; a start with no positive entry becomes the basis vector of the
        feature of smallest ``key``).
    kc : int or ndarray (p,)
        Nonzeros allowed per column.
    step : step object, optional
        What one iteration does with the products ``A X`` (:mod:`nspca_core._common.steps`).
        Default ``TopK(signed=signed, both_signs=both_signs)``: the truncated power step.
    key : ndarray (n,) of int, optional
        Tie-break priority (:func:`tie_key`); default the index.
    max_iter : int
    rtol : float or None
        A column stops when a step gains less than ``rtol`` (relative); None: only the step's
        own rule stops a column.
    both_signs : bool
        Default step: also try ``T_k(-A x)`` (the exact rank-1 step).
    signed : bool
        Default step: keep the k largest entries of ``|A x|`` with their signs instead (the
        truncated power method without the nonnegativity constraint); then the iterates and
        the starts may have any sign.
    xtol : float
        Passed to the step: the hard truncation stops a column when its support is unchanged
        and ``1 - |<x_new, x>| <= xtol``.
    merge : bool or "support"
        Drop columns whose support, unchanged by the last step, is that of another settled
        column of larger value (same k; copies of a column among them); their result is the
        kept column's (or their own best iterate, if larger).  Only for steps that report
        settled supports, with ``keep="best"``.  ``"support"``: also columns that have just
        reached the support of another (a heuristic: they then converge together unless the
        weights they arrive with send them apart; measured on CBCL, LRS, MLL, gene-like and
        600 random inputs, it never changed the three best distinct points of auto's ascent).
    stop : callable, optional
        ``stop()`` returning True ends the iterations early (best iterates so far).
    keep : {"best", "last"}
        Return each column's best iterate (an ascent), or its last one (a step that need not
        ascend, e.g. EM's soft top-k); with "last" the values are ``quads(X)`` of the last
        iterates (default ``x^T (A x)`` through ``matvec``).

    Returns
    -------
    AscentResult
    """
    if keep not in ("best", "last"):
        raise ValueError(f"`keep` must be 'best' or 'last'; got {keep!r}")
    step = TopK(signed=signed, both_signs=both_signs) if step is None else step
    best_kept = keep == "best"
    n, p = X0.shape
    kc = np.broadcast_to(np.asarray(kc, dtype=np.intp), (p,)).copy()
    width = int(min(kc.max(), n)) if p else 1
    compact = step.compact and n >= _COMPACT_MIN_N and 4 * width <= n
    P = step.start(X0, kc, key)
    idx, vals = _to_compact(P, width) if compact else (np.zeros((0, p), dtype=np.intp), P)
    if best_kept:
        best_idx, best_vals, best_v = idx.copy(), vals.copy(), np.full(p, -np.inf)
    prev_v = np.full(p, np.nan)
    converged = np.zeros(p, dtype=bool)
    active = np.arange(p)
    alias: list = []
    w_merge = _merge_weights(n) if merge and best_kept else None
    need_v = best_kept or rtol is not None or w_merge is not None  # the values of the iterates
    it = 0
    first = None

    screened = screen is not None and compact and isinstance(step, TopK) and not step.signed \
        and not step.both_signs
    jumps = jump is not None and best_kept and rtol is not None and isinstance(step, TopK) and not step.signed
    was_settled = np.zeros(p, dtype=bool)
    prev_gain = np.full(p, np.nan)

    def score(ia, va):  # (A x) and x^T A x of the columns
        Y = matvec(_to_dense(ia, va, n))
        at = Y[np.minimum(ia, n - 1), np.arange(ia.shape[1])] if compact else Y
        return Y, np.einsum("ij,ij->j", va, at)

    k_one = int(kc[0]) if p and kc.min() == kc.max() else None  # one k for every column

    def keep_best(ia, va, v, full):
        nonlocal best_idx, best_vals
        better = v > best_v[active]
        if better.all():
            if full:  # every column: the iterates themselves become the best (no copy; the
                best_v[:], best_idx, best_vals = v, ia, va  # loop rebinds, never writes, them)
            else:
                best_v[active], best_idx[:, active], best_vals[:, active] = v, ia, va
            return
        cols = active[better]
        best_v[cols] = v[better]
        best_idx[:, cols] = ia[:, better]
        best_vals[:, cols] = va[:, better]

    while active.size and it < max_iter and not (stop is not None and stop()):
        it += 1
        full = active.size == p  # every column active: views, not copies
        ia, va = (idx, vals) if full else (idx[:, active], vals[:, active])
        if screened:  # the values, and the products where the step needs them
            v, parts = screen.products(ia, va, kc[active], n)
        else:
            Y, v = score(ia, va) if need_v else (matvec(_to_dense(ia, va, n)), None)
        if it == 1 and need_v:
            first = v.copy()
        if best_kept:
            keep_best(ia, va, v, full)
        if rtol is None:
            gained = True
        else:
            pv = prev_v[active]
            gained = np.isnan(pv) | (v > pv + rtol * np.abs(pv))
            prev_v[active] = v
            if jumps:
                gain = v - pv
                slow = _slow(gain, prev_gain[active], np.abs(v) * rtol)
                prev_gain[active] = gain
        kca = kc[active] if k_one is None else k_one
        if not screened:
            zi, zv, done, settled = step(Y, ia, va, kca, key, xtol)
        elif len(parts) == 1 and parts[0][1] is None:
            zi, zv, done, settled = step(parts[0][2], ia, va, kca, key, xtol)
        else:
            zi, zv = np.empty_like(ia), np.empty_like(va)
            done, settled = np.empty(ia.shape[1], dtype=bool), np.empty(ia.shape[1], dtype=bool)
            for g, U, Yg in parts:
                kg = kca if k_one is not None else kca[g]
                if U is None:
                    out = step(Yg, ia[:, g], va[:, g], kg, key, xtol)
                else:
                    out = _step_on_rows(step, U, Yg, ia[:, g], va[:, g], kg, key, xtol, n)
                zi[:, g], zv[:, g], done[g], settled[g] = out
        moving = gained & ~done
        converged[active[~moving]] = True
        if jumps:  # settled twice in a row and still moving: to the support's limit
            twice = np.flatnonzero(settled & was_settled[active] & moving & (slow > jump.min_steps))
            was_settled[active] = settled
            if twice.size:
                zv = jump(zi, zv, twice, n, slow[twice])
        if full:
            idx, vals = zi, zv
        else:
            idx[:, active], vals[:, active] = zi, zv
        if w_merge is not None and settled is not None:
            if merge == "support":
                settled = np.ones_like(settled)
            moving = _merge_settled(zi, zv, settled, v, kc, active, alias, n, w_merge, moving)
        active = active[moving]
    if not best_kept:  # the last iterates, row-major whatever layout the step kept them in
        X = np.ascontiguousarray(_to_dense(idx, vals, n))
        values = quads(X) if quads is not None else np.einsum("ij,ij->j", X, matvec(X))
        return AscentResult(X=X, values=values, converged=converged, iterations=it, start_values=first)
    if active.size:  # score the last iterates of columns still moving
        ia, va = idx[:, active], vals[:, active]
        keep_best(ia, va, score(ia, va)[1], False)
    for dropped, kept in reversed(alias):
        if best_v[kept] > best_v[dropped]:
            best_v[dropped] = best_v[kept]
            best_idx[:, dropped], best_vals[:, dropped] = best_idx[:, kept], best_vals[:, kept]
        converged[dropped] = converged[kept]
    return AscentResult(X=_to_dense(best_idx, best_vals, n), values=best_v, converged=converged,
                        iterations=it, start_values=first)


def reweight(cov, x: np.ndarray, f: float, *, max_support: int | None = None):
    """Best weights on the support J of x: the top eigenvector of ``A_JJ`` if it is one-signed.

    Never worse: that eigenvector maximizes ``y^T A_JJ y`` over all unit y on J,
    and it is feasible when it has one sign.  Through ``X_J`` (thin SVD) when the
    data has fewer rows than the support (nothing |J| x |J| then).  Supports
    larger than ``max_support`` are left as they are.  Returns ``(x, f)``.
    """
    J = np.flatnonzero(x)
    if J.size < 2 or (max_support is not None and J.size > max_support):
        return x, f
    if cov.X is not None and cov.X.shape[0] < J.size:
        u = np.linalg.svd(cov.X[:, J], full_matrices=False)[2][0]
    else:
        u = np.linalg.eigh(cov.submatrix(J))[1][:, -1]
    if u.sum() < 0:
        u = -u
    if u.min() < 0:
        return x, f
    y = np.zeros_like(x)
    y[J] = u / np.linalg.norm(u)
    fy = cov.quad(y)
    return (y, fy) if fy > f else (x, f)


def polish(cov, x: np.ndarray, k: int, *, key=None, max_iter: int = 200, rounds: int = 5):
    """Ascent (both signs), reweighting, ascent again while either gains; returns
    ``(x, f, iterations)``.  Never decreases ``f`` (each part keeps the better point).
    A support already reweighted is not reweighted again (the same eigenvector)."""
    f = cov.quad(x)
    total = 0
    done = None
    for _ in range(rounds):
        f_before = f
        r = ascent(cov.matvec, x[:, None], k, key=key, max_iter=max_iter, both_signs=True,
                   merge=False)
        total += r.iterations
        if r.values[0] > f:
            x, f = r.X[:, 0], float(r.values[0])
        if done is None or not np.array_equal(np.flatnonzero(x), done):
            x, f = reweight(cov, x, f)
            done = np.flatnonzero(x)
        if f <= f_before * (1 + 1e-13):
            break
    return x, f, total
