"""The steps of the ascent (:func:`nspca_core._common.ascent.ascent`): what one iteration does
with the products ``Y = A X`` of the current iterates, as SciPy's trust-region driver takes its
subproblem.  The driver owns the loop (products, values, the best or last iterate, the columns
still moving, merging); a step owns the map ``Y -> X_new`` and says which columns stop.

A step is an object with

- ``compact`` (bool): it can run on compact iterates (``(idx, vals)``, below);
- ``start(X0, kc, key)``: the first iterates (n, p) from the starts;
- ``__call__(Y, ia, va, kc, key, xtol) -> (zi, zv, done, settled)``: the next iterates from the
  products ``Y`` (n, q) of the current ones ``(ia, va)``; ``done`` the columns that stop there,
  ``settled`` those whose support the step left unchanged (None: the driver does not merge).

The steps:

- :class:`TopK`: the hard truncation ``T_k`` (the k largest entries of ``y_+``; ``signed``: of
  ``|y|`` with their signs; ``both_signs``: the longer of ``T_k(y)`` and ``T_k(-y)``), the step
  of ``fit(method="auto")``, the certificates' lower bounds and the truncated power method;
- :class:`SoftTopK`: the constraint step of EM (Sigg & Buhmann 2008, Alg. 2), the k largest
  ``|w_i|`` shifted by the (k+1)-th, with a hard top-k when nothing is left;
- :class:`PlainPower`: ``x <- S(A x) / ||S(A x)||`` with a hard or soft top-k ``S``, every column
  until all have converged (the deflation baselines of the bipartite paper).
"""

from __future__ import annotations

from dataclasses import dataclass
import functools
from typing import Callable

import numpy as np

# the order statistics and the nonzeros by column (nspca_core._common.kth), re-exported
from .kth import (_KTH_SAMPLE_MIN_N, _KTH_STRIDE, _nonzero_by_column, column_counts, kth_largest,  # noqa: F401
                  kth_one, one_index, order_statistic)

__all__ = ["topk_mask", "truncate", "hard_topk", "soft_topk", "project", "TopK", "SoftTopK", "PlainPower"]


def topk_mask(Y: np.ndarray, kc, key: np.ndarray | None = None, *, floor=None, t=None) -> np.ndarray:
    """Boolean mask of the ``kc[j]`` largest entries of each column j of ``Y`` (n, p).

    ``kc`` is an int or one int per column.  Entries equal to the k-th value
    are taken by increasing ``key`` (default: the index).  With ``floor``, a
    k-th value ``<= floor`` is not tie-broken: the mask then holds every entry
    equal to it (callers that zero such entries anyway save the work).  ``t``: with one k, the
    k-th largest of each column, already known (exactly :func:`kth_largest`'s floats, up to the
    sign of a zero).
    """
    n, p = Y.shape
    if np.ndim(kc) and p > 1:
        kc = np.asarray(kc)
        if kc.min() == kc.max():
            kc = kc[0]
    if np.ndim(kc) == 0 or p == 1:  # one k for every column
        k = min(int(np.ravel(kc)[0]) if np.ndim(kc) else int(kc), n)
        if k == n:
            return np.ones((n, p), dtype=bool)
        t = kth_largest(Y, k) if t is None else t
        ge = Y >= t
        extra = column_counts(ge) > k  # a tie at the k-th value...
        if floor is not None:
            extra &= t > floor  # ...that matters
        if not extra.any():  # the common case
            return ge
        kk = np.full(p, k, dtype=np.intp)
    else:
        kk = np.minimum(np.asarray(kc, dtype=np.intp), n)
        t = np.sort(Y, axis=0)[n - kk, np.arange(p)]
    mask = Y > t
    eq = Y == t
    need = kk - column_counts(mask)
    over = column_counts(eq) > need
    if floor is not None:
        over &= t > floor
    tied = np.flatnonzero(over)
    mask |= eq
    for j in tied:  # rare: more entries equal to the k-th value than places left
        cand = np.flatnonzero(eq[:, j])
        order = np.argsort(key[cand], kind="stable") if key is not None else np.arange(cand.size)
        mask[cand[order[need[j]:]], j] = False
    return mask


def truncate(Y: np.ndarray, kc, key: np.ndarray | None = None) -> np.ndarray:
    """``T_k`` column-wise: the ``kc[j]`` largest entries of ``Y[:, j]_+``, zeros elsewhere."""
    Yp = np.maximum(Y, 0.0)
    return np.where(topk_mask(Yp, kc, key, floor=0.0), Yp, 0.0)


def _step(Y: np.ndarray, kc, key, both_signs: bool, signed: bool) -> np.ndarray:
    if signed:  # the k largest |entries|, with their signs (plain TPower)
        return np.where(topk_mask(np.abs(Y), kc, key), Y, 0.0)
    Z = truncate(Y, kc, key)
    if both_signs:  # the exact rank-1 step: the longer of T_k(y) and T_k(-y)
        Zm = truncate(-Y, kc, key)
        flip = np.einsum("ij,ij->j", Zm, Zm) > np.einsum("ij,ij->j", Z, Z)
        Z[:, flip] = Zm[:, flip]
    return Z


def _normalize(Z: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    """Unit columns, in place; a zero column takes ``fallback``'s column (nothing to follow).
    The norm is taken after scaling by the largest entry so that tiny entries do not underflow."""
    top = np.abs(Z).max(axis=0)
    ok = top > 0
    if ok.all():
        Z /= top
        Z /= np.linalg.norm(Z, axis=0)
        return Z
    Z[:, ok] /= top[ok]
    Z[:, ok] /= np.linalg.norm(Z[:, ok], axis=0)
    Z[:, ~ok] = fallback[:, ~ok]
    return Z


def project(X0: np.ndarray, kc, key: np.ndarray | None = None, *, signed: bool = False) -> np.ndarray:
    """The feasible point of each start: ``T_k`` of the column, normalized; a column with
    no positive entry becomes the basis vector of the feature of smallest ``key``.  With
    ``signed``, the k largest |entries| with their signs."""
    n, p = X0.shape
    basis = np.zeros((n, p))
    basis[int(np.argmin(key)) if key is not None else 0, :] = 1.0
    X0 = np.asarray(X0, dtype=float)
    Z = np.where(topk_mask(np.abs(X0), kc, key), X0, 0.0) if signed else truncate(X0, kc, key)
    return _normalize(Z, basis)


# ---------------------------------------------------------------- compact iterates
# The iterates of the ascent have at most k nonzeros each.  When k is small next to n they
# are held as ``(idx, vals)``, both (w, q) with w = max k, one column per iterate: the indices
# of the nonzeros in increasing order, then padding (index n, value 0).  Every O(n) pass of a
# step then runs once, on the product ``A x`` only (the selection of its top k); the rest
# costs O(k).  Otherwise (small n, or k near n) ``idx`` has no rows and ``vals`` is the
# dense (n, q) matrix: fewer, larger numpy calls are then faster.

# compact iterates from this many features on, when k <= n / 4
_COMPACT_MIN_N = 1000


def _to_dense(idx: np.ndarray, vals: np.ndarray, n: int) -> np.ndarray:
    """The (n, q) matrix of the columns (compact: padding lands in a dropped row n)."""
    if idx.shape[0] == 0:
        return vals
    Z = np.zeros((n + 1, idx.shape[1]))
    Z[idx, np.arange(idx.shape[1])] = vals
    return Z[:n]


def _to_compact(Z: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """``(idx, vals)`` of the columns of Z (n, q), each with at most ``width`` nonzeros."""
    cols, rows = _nonzero_by_column(Z)
    return _scatter(rows, cols, Z[rows, cols], Z.shape[0], Z.shape[1], width)


def _scatter(rows, cols, values, n: int, q: int, width: int):
    """Compact columns from the entries ``(rows, cols, values)``, grouped by column with rows
    increasing; zero values are dropped."""
    nz = values != 0
    if not nz.all():
        rows, cols, values = rows[nz], cols[nz], values[nz]
    counts = np.bincount(cols, minlength=q)
    pos = np.arange(cols.size) - np.repeat(np.cumsum(counts) - counts, counts)
    idx = np.full((width, q), n, dtype=np.intp)
    vals = np.zeros((width, q))
    idx[pos, cols] = rows
    vals[pos, cols] = values
    return idx, vals


# a column whose entries at or above its previous support's smallest value number more than this
# fraction of n is selected by np.partition rather than among those candidates (the same points; 1/16
# before issue 39's 14th round: 72 x 1,000 genes k = 50, auto 9.1 -> 8.6 ms, other sets unchanged)
_CANDIDATE_FRACTION = 1 / 2


def _select_near(Y: np.ndarray, S: np.ndarray, prev: np.ndarray, k: int, signed: bool):
    """The compact ``T_k`` of the columns of Y (n, q) whose previous iterate ``prev`` (k, q) had
    k entries, found among few candidates instead of by a partition of all n entries.

    ``t_j``, the smallest of ``S[:, j]`` (Y, or |Y| when ``signed``) on the previous support, is at
    most the k-th largest of ``S[:, j]`` (k entries reach it), so every entry of the top k is among
    the candidates ``S[:, j] >= t_j``, and so is the (k+1)-th largest u when there are more than k
    candidates.  With exactly k candidates, the support is unchanged (the common case near
    convergence).  Otherwise the candidates of a column are ranked and the k above u kept: the
    same points as :func:`_select`'s partition.  Returns ``(done, idx, vals)`` with ``done`` the
    columns found (the others: a tie at the k-th value, ``t_j <= 0`` — the truncation of the
    positive part may then keep fewer than k —, or too many candidates) and ``idx``, ``vals``
    (k, q) filled on them."""
    n, q = Y.shape
    cols = np.arange(q)
    t = S[prev, cols].min(axis=0)
    M = S >= t
    count = column_counts(M)
    done = (t > 0) & (count <= max(k + 1, int(_CANDIDATE_FRACTION * n)))
    idx = prev.copy()
    more = (done & (count > k)).nonzero()[0]
    if more.size:
        cc, rr = _nonzero_by_column(M[:, more])  # candidates, by column, rows increasing
        v = S[rr, more[cc]]
        cm = count[more]
        width = int(cm.max())
        # the candidates of each column in one padded column (-inf below them), partitioned at the
        # k-th and (k+1)-th largest: no sort of all candidates
        P = np.full((width, more.size), -np.inf)
        P[np.arange(cc.size) - np.repeat(np.cumsum(cm) - cm, cm), cc] = v
        P.partition([width - k - 1, width - k], axis=0)
        u, kth = P[width - k - 1], P[width - k]
        tie = kth <= u
        keep = v > u[cc]  # without a tie: exactly the k largest, rows increasing
        keep &= ~tie[cc]
        ok = more[~tie]
        idx[:, ok] = rr[keep].reshape(ok.size, k).T
        done[more[tie]] = False
    found = done.nonzero()[0]
    vals = np.zeros((k, q))
    vals[:, found] = Y[idx[:, found], found]
    return done, idx, vals


def _select(Y: np.ndarray, kc: np.ndarray, key, signed: bool, width: int, prev: np.ndarray | None = None):
    """Compact ``T_k`` of each column of Y (n, q) (``signed``: the k largest |entries| with
    their signs), the same points as the dense :func:`_step` without ``both_signs``.

    With one k (= ``width``) and the previous iterates' indices ``prev`` (width, q), the columns
    whose previous iterate had k entries are selected among few candidates first
    (:func:`_select_near`).  The rest: per k, one ``np.partition`` finds the (k+1)-th largest
    value u of each column and the entries above u are the k kept ones.  When fewer than k lie
    above u, the k-th value equals u (a tie); if it is positive, :func:`topk_mask` breaks the
    tie by ``key`` on that column (rare), else the tied entries are zero after truncation
    anyway."""
    n, q = Y.shape
    S = np.abs(Y) if signed else Y
    if q == 1 and prev is not None and width < n and kc.size == 1 and kc[0] == width and prev.max() < n:
        # one column (an ascent's last steps): _select_near's points without its calls for many columns.
        # The candidates reach t, the smallest on the previous support: k of them (the support stays),
        # or the k above their (k+1)-th largest u when no tie; else as below
        s = S[:, 0]
        t = s[prev[:, 0]].min()
        if t > 0:
            r = np.flatnonzero(s >= t)
            if r.size == width:
                return prev.copy(), Y[prev[:, 0]]
            if r.size <= max(width + 1, int(_CANDIDATE_FRACTION * n)):
                v = s[r]
                u, kth = np.partition(v, [r.size - width - 1, r.size - width])[r.size - width - 1:r.size - width + 1]
                if kth > u:
                    idx = r[v > u][:, None]
                    return idx, Y[idx[:, 0]]
    # one k for every column (a broadcast one: stride 0): np.unique's sort skipped
    ks = kc[:1] if kc.ndim == 1 and kc.size and kc.strides[0] == 0 else np.unique(kc)
    if ks.size > 4 or ks[-1] >= n:  # many different k (a path), or whole columns: dense
        return _to_compact(_step(Y, kc, key, False, signed), width)
    one = one_index(S)  # Fortran-ordered columns (float32 products): a partition of all n is cheaper
    if prev is not None and ks.size == 1 and ks[0] == width and width < n and not one:
        near = (prev < n).all(axis=0).nonzero()[0]  # previous iterates with k entries
        if near.size:
            full = near.size == q
            done, idx, vals = _select_near(Y if full else Y[:, near], S if full else S[:, near],
                                              prev if full else prev[:, near], width, signed)
            if done.all() and full:
                return idx, vals
            rest = (np.bincount(near[done], minlength=q) == 0).nonzero()[0]  # setdiff1d's, sorted
            ri, rv = _select(Y[:, rest], kc[rest], key, signed, width)
            idx_all = np.empty((width, q), dtype=np.intp)
            vals_all = np.empty((width, q))
            idx_all[:, near[done]], vals_all[:, near[done]] = idx[:, done], vals[:, done]
            idx_all[:, rest], vals_all[:, rest] = ri, rv
            return idx_all, vals_all
    masks, dense_cols = [], []
    for k in ks:
        g = np.flatnonzero(kc == k) if ks.size > 1 else np.arange(q)
        Sg = S if ks.size == 1 else S[:, g]
        u = kth_one(Sg, k + 1) if one and ks.size == 1 else kth_largest(Sg, k + 1)
        M = Sg > u
        count = None
        if ks.size == 1 and k == width:
            # at most k entries lie above a column's (k+1)-th largest (NaN above none): k q of them in all
            # is k in every column, without the counts by column
            cols, rows = _nonzero_by_column(M)
            if rows.size != k * q:
                count = column_counts(M)
        else:
            count = column_counts(M)
        if ks.size == 1 and k == width and count is None:
            # the common case: k entries above u in every column (no tie), kept if positive
            idx = rows.reshape(q, k).T
            vals = Y[idx, np.arange(q)]
            if signed or (vals > 0).all():
                return idx, vals
            return _scatter(rows, cols, np.maximum(vals.T.ravel(), 0.0), n, q, width)
        ok = (count == k) | (u <= 0)
        if not ok.all():
            M[:, ~ok] = False
            dense_cols.append(g[~ok])
        masks.append((g, M))
    if dense_cols:
        g = np.concatenate(dense_cols)
        masks.append((g, _step(Y[:, g], kc[g], key, False, signed) != 0))
    if len(masks) == 1:
        cols, rows = _nonzero_by_column(masks[0][1])
    else:
        M = np.zeros((n, q), dtype=bool)
        for g, Mg in masks:
            M[:, g] |= Mg
        cols, rows = _nonzero_by_column(M)
    values = Y[rows, cols] if signed else np.maximum(Y[rows, cols], 0.0)
    return _scatter(rows, cols, values, n, q, width)


def _normalize_compact(vals: np.ndarray, idx: np.ndarray, prev_idx: np.ndarray,
                       prev_vals: np.ndarray):
    """Unit columns; a zero column takes the previous iterate (nothing to follow).  One pass
    when the sums of squares are far from under/overflow, else scaled by the largest entry
    first (as :func:`_normalize`)."""
    ss = np.einsum("ij,ij->j", vals, vals)
    if ss.size and ss.min() > 1e-200 and ss.max() < 1e300:  # no under/overflow: one pass
        return idx, vals * (1.0 / np.sqrt(ss))
    top = np.abs(vals).max(axis=0)
    ok = top > 0
    vals = vals / np.where(ok, top, 1.0)
    vals /= np.where(ok, np.linalg.norm(vals, axis=0), 1.0)
    if not ok.all():
        idx = idx.copy()
        idx[:, ~ok], vals[:, ~ok] = prev_idx[:, ~ok], prev_vals[:, ~ok]
    return idx, vals



def _kth_clipped(X0: np.ndarray, kc):
    """The k-th largest of each column of ``max(X0, 0)`` (one k), as ``max(k-th largest of X0, 0)`` (the map
    is nondecreasing: the same value, up to the sign of a zero), from one partition of X0 at one index
    where :func:`~nspca_core._common.kth.one_index` holds (X0 itself has no ties at the zeros the
    clipping makes: random starts ``A r`` are half negative); else None."""
    kk = np.asarray(kc)
    if kk.ndim:
        if kk.size == 0 or kk.min() != kk.max():
            return None
        kk = kk.flat[0]
    n = X0.shape[0]
    if not 0 < kk < n or not one_index(X0):
        return None
    return np.maximum(kth_one(X0, int(kk)), 0.0)


def _one_k_of(kc, p: int) -> int | None:
    """The one k of ``kc`` (an int, or one per column all equal), else None."""
    kk = np.asarray(kc)
    if kk.ndim == 0:
        return int(kk)
    if kk.size != p or kk.size == 0 or kk.min() != kk.max():
        return None
    return int(kk.flat[0])


def project_compact(X0: np.ndarray, kc, key: np.ndarray | None, width: int, overwrite: bool = False):
    """:func:`project` (unsigned) of the columns of X0 (n, p) as compact iterates ``(idx, vals)`` of
    ``width`` rows: the same floats as ``_to_compact(project(X0, kc, key), width)``, without the
    dense n x p passes after the selection (the division by the largest entry, then by the
    norm, run on the kept entries in the same order).  ``overwrite``: X0 is the caller's scratch (a
    writeable float64 matrix it drops after): on long columns at one k its positive part is made in it."""
    n, p = X0.shape
    k = _one_k_of(kc, p)
    if k is not None and 0 < k < n and p > 1 and n >= _KTH_SAMPLE_MIN_N:
        # one k on long columns (auto's starts, n >= 1,024): one mask of the whole matrix, no copy of the
        # columns to select, with ``overwrite`` none at all (fewer fresh pages: g48x1800 k = 10, traced
        # memory above the input 1.59 -> 0.25 MB at its peak).  A column with at most k positive entries
        # has its clipped k-th largest t at 0 or at its smallest positive entry: the mask keeps its
        # positive entries (the zeros dropped by _scatter), no tie broken (exactly k reach t > 0, or t = 0
        # is the floor), as the mask ``Yp != 0`` did there; the other columns' masks are topk_mask's of
        # them alone (it is per column), with the same t
        t = _kth_clipped(X0, k)  # (from X0 before it is overwritten)
        own = overwrite and X0.dtype == np.float64 and X0.flags.writeable
        Yp = np.maximum(X0, 0.0, out=X0) if own else np.maximum(np.asarray(X0, dtype=float), 0.0)
        cols, rows = _nonzero_by_column(topk_mask(Yp, k, key, floor=0.0, t=t))
        return unit_compact(*_scatter(rows, cols, Yp[rows, cols], n, p, width), n, key)
    Yp = np.maximum(np.asarray(X0, dtype=float), 0.0)
    M = Yp != 0
    # feasible supports (a polish, a rank-1 start): T_k keeps every positive entry.  The counts from the
    # mask (count_nonzero along an axis of the floats converts them all to integers first)
    few = column_counts(M) <= kc
    if few.all():
        cols, rows = _nonzero_by_column(M)
    elif not few.any():
        cols, rows = _nonzero_by_column(topk_mask(Yp, kc, key, floor=0.0, t=_kth_clipped(X0, kc)))
    else:  # the selection on the other columns only (it is per column: the same masks)
        g = np.flatnonzero(~few)
        kg = kc if np.ndim(kc) == 0 else np.asarray(kc)[g]
        M[:, g] = topk_mask(Yp[:, g], kg, key, floor=0.0, t=_kth_clipped(X0[:, g], kg))
        cols, rows = _nonzero_by_column(M)
    return unit_compact(*_scatter(rows, cols, Yp[rows, cols], n, p, width), n, key)


def unit_compact(idx: np.ndarray, vals: np.ndarray, n: int, key: np.ndarray | None):
    """Compact iterates ``(idx, vals)`` (``width x p``, from :func:`_scatter`) divided by each column's
    largest entry, then by its norm, in place (:func:`project_compact`'s floats); a column with no positive
    entry becomes the basis vector of the smallest key (index 0 without one)."""
    p = vals.shape[1]
    top = vals.max(axis=0) if vals.shape[0] else np.zeros(p)
    ok = top > 0
    if ok.all():
        vals /= top
        vals /= np.linalg.norm(vals, axis=0)
        return idx, vals
    vals[:, ok] /= top[ok]
    vals[:, ok] /= np.linalg.norm(vals[:, ok], axis=0)
    idx[:, ~ok], vals[:, ~ok] = n, 0.0  # no positive entry: the basis vector of the smallest key
    idx[0, ~ok], vals[0, ~ok] = int(np.argmin(key)) if key is not None else 0, 1.0
    return idx, vals


def hard_topk(Y: np.ndarray, k, nonneg: bool = True, key: np.ndarray | None = None) -> np.ndarray:
    """Column-wise hard top-k: the k largest entries of ``Y_+`` (``nonneg``) or of ``|Y|`` with their
    signs, zeros elsewhere; ties at the k-th value by increasing ``key`` (default: the index)."""
    return _step(Y, k, key, False, not nonneg)


def soft_topk(W: np.ndarray, k: int) -> np.ndarray:
    """Sigg–Buhmann sparse M-step, column-wise: keep the k largest |w_i| shifted by the (k+1)-th.

    ``w_i <- sign(w_i) (|w_i| - |w|_(k+1))_+`` — the axis-aligned descent of
    their Fig. 1 stopped when k coordinates have entered.  Ties at the (k+1)-th
    value drop out, so at most k entries stay nonzero.
    """
    n = W.shape[0]
    if k >= n:
        return W
    a = np.abs(W)
    t = order_statistic(a, n - k - 1)
    return np.sign(W) * np.clip(a - t, 0.0, None)


def _col_norms(W: np.ndarray) -> np.ndarray:
    """Column 2-norms without underflow (scaled by the column's max |entry| first)."""
    mx = np.abs(W).max(axis=0)
    safe = np.where(mx > 0, mx, 1.0)
    return np.linalg.norm(W / safe, axis=0) * mx


@functools.lru_cache(maxsize=64)
def _k_row(k: int, q: int) -> np.ndarray:
    """``np.broadcast_to(np.intp(k), (q,))`` (read only, stride 0: :func:`_select` reads it as one k),
    made once per ``(k, q)`` rather than at every step."""
    return np.broadcast_to(np.intp(k), (q,))


def _one_k(kc) -> int:
    """The one k of a step that runs every column with the same k."""
    return int(kc) if np.ndim(kc) == 0 else int(np.ravel(kc)[0])


@dataclass(frozen=True)
class TopK:
    """The hard truncation step ``x <- T_k(A x) / ||T_k(A x)||`` (the driver's default).

    ``signed``: the k largest ``|A x|`` with their signs (the truncated power method without the
    nonnegativity constraint; then the iterates and the starts may have any sign).
    ``both_signs``: also ``T_k(-A x)``, keeping the longer (the exact rank-1 step).  Starts are
    projected (:func:`project`).  A column stops when its support is unchanged and
    ``|<x_new, x>| >= 1 - xtol``; the supports it leaves unchanged are ``settled`` (merged by
    the driver).  Runs on compact iterates.
    """

    signed: bool = False
    both_signs: bool = False
    #: compact starts projected without a dense intermediate (:meth:`start_compact`)
    compact_start: bool = False
    #: the starts matrix is the caller's scratch, dropped after the start: the projection may write in it
    own_starts: bool = False
    compact = True

    def start(self, X0: np.ndarray, kc, key) -> np.ndarray:
        return project(X0, kc, key, signed=self.signed)

    def start_compact(self, X0: np.ndarray, kc, key, width: int):
        """``_to_compact(self.start(X0, kc, key), width)``; with ``compact_start``, without the dense
        intermediate (:func:`project_compact`: the norms of long columns may then differ in the
        last bit)."""
        if self.signed or not self.compact_start:
            return _to_compact(self.start(X0, kc, key), width)
        return project_compact(X0, kc, key, width, overwrite=self.own_starts)

    def _select(self, Y, ia, kc, key, prev):
        if ia.shape[0]:  # compact iterates, of width the largest k
            kcs = _k_row(int(kc), Y.shape[1]) if np.ndim(kc) == 0 else kc
            return _select(Y, kcs, key, self.signed, ia.shape[0], prev)
        return ia, _step(Y, kc, key, False, self.signed)

    def _flip(self, Y, ia, kc, key, zi, zv):
        """``T_k(-y)`` where it is longer than ``T_k(y)`` (``zi, zv``, updated in place).  Only the
        columns where it can be are selected: ``||T_k((-y)_+)||^2 <= k max((-y)_+)^2``, and for any
        ``tau >= 0`` at most the squares of the entries of ``(-y)_+`` reaching tau plus ``k tau^2``
        (the k kept entries below tau add less than tau^2 each); with ``k tau^2 = ||T_k(y_+)||^2 / 2``
        a column where either bound is below ``||T_k(y_+)||^2`` keeps ``T_k(y)`` (the margin covers
        the rounding of the sums)."""
        zz = np.einsum("ij,ij->j", zv, zv)
        top = np.maximum(-Y.min(axis=0), 0.0)
        kk = np.broadcast_to(kc, zz.shape)
        may = np.flatnonzero(kk * top * top * (1 + 1e-9) >= zz)
        if may.size:  # the second bound, on those columns
            Ym = Y[:, may]
            tau = np.sqrt(0.5 * zz[may] / kk[may])
            big = np.einsum("ij,ij->j", Ym, np.where(Ym <= -tau, Ym, 0.0))
            may = may[(big + 0.5 * zz[may]) * (1 + 1e-9) >= zz[may]]
        if not may.size:
            return zi, zv
        every = may.size == zz.size
        kcm = kc if np.ndim(kc) == 0 or every else np.asarray(kc)[may]
        mi, mv = self._select(-Y if every else -Y[:, may], ia if every else ia[:, may], kcm, key, None)
        flip = np.einsum("ij,ij->j", mv, mv) > zz[may]
        zi[:, may[flip]], zv[:, may[flip]] = mi[:, flip], mv[:, flip]
        return zi, zv

    def __call__(self, Y, ia, va, kc, key, xtol):
        zi, zv = self._select(Y, ia, kc, key, ia if ia.shape[0] else None)
        if self.both_signs:  # the longer of T_k(y) and T_k(-y)
            zi, zv = self._flip(Y, ia, kc, key, zi, zv)
        zi, zv = _normalize_compact(zv, zi, ia, va)
        moved = ~(zi == ia).all(axis=0) if ia.shape[0] else ((zv != 0) != (va != 0)).any(axis=0)
        still = moved | (np.abs(np.einsum("ij,ij->j", zv, va)) < 1 - xtol)
        return zi, zv, ~still, ~moved


@dataclass(frozen=True)
class SoftTopK:
    """The constraint step of EM (Sigg & Buhmann 2008, Alg. 2): ``A w`` with its negatives zeroed
    (``nonneg``; or ``mstep(A w)`` column by column, e.g. the quasi-orthogonal QP), then
    :func:`soft_topk`, then normalized.

    Starts are used as given.  When the soft step leaves nothing (all top entries tie), the hard
    top-k of the same vector is taken; when ``A w`` has no admissible entry the column stops at
    the hard top-k of ``w`` (``stuck``; a unit basis vector if that is empty too).  A column stops
    when ``|<w_new, w>| > 1 - xtol``.  Dense iterates only, held column-major (the layout EM's
    own loop had: products with a column-major block round differently).
    """

    nonneg: bool = True
    mstep: Callable | None = None
    compact = False

    def start(self, X0: np.ndarray, kc, key) -> np.ndarray:
        return np.array(X0, dtype=float, order="F")

    def __call__(self, Y, ia, va, kc, key, xtol):
        k, nonneg = _one_k(kc), self.nonneg
        Ws = Y
        if self.mstep is not None:
            Ws = np.column_stack([self.mstep(Ws[:, j]) for j in range(Ws.shape[1])])
        elif nonneg:
            Ws = np.clip(Ws, 0.0, None)
        Wn = soft_topk(Ws, k)
        nrm = _col_norms(Wn)
        dead = nrm == 0
        if dead.any():
            # everything cancelled (e.g. all top entries tie): fall back to a hard top-k
            Wn[:, dead] = hard_topk(Ws[:, dead], k, nonneg)
            nrm = _col_norms(Wn)
        stuck = nrm == 0  # A w has no admissible entry: stop at a feasible cut of w
        if stuck.any():
            Wn[:, stuck] = hard_topk(va[:, stuck], k, nonneg)
            nrm = _col_norms(Wn)
            for j in np.flatnonzero(nrm == 0):  # w itself had nothing left: a unit vector
                Wn[:, j] = 0.0
                Wn[0, j] = 1.0
            nrm = _col_norms(Wn)
        Wn = np.asfortranarray(Wn / nrm)
        done = (np.abs(np.einsum("ij,ij->j", Wn, va)) > 1.0 - xtol) | stuck
        return ia, Wn, done, None


@dataclass(frozen=True)
class PlainPower:
    """``x <- S(A x) / ||S(A x)||`` with ``S`` the hard top-k (:func:`hard_topk`, ``soft=False``)
    or the soft one (:func:`soft_topk` of ``(A x)_+`` when ``nonneg``, ``soft=True``).

    Starts are ``S`` of the given columns, normalized (they must keep a nonzero).  A column whose
    ``S(A x)`` is zero keeps its iterate.  Every column runs until all have
    ``|<x_new, x>| > 1 - xtol`` (one stop for the batch).  Dense iterates only.
    """

    soft: bool = False
    nonneg: bool = True
    compact = False

    def _s(self, W: np.ndarray, k: int) -> np.ndarray:
        if not self.soft:
            return hard_topk(W, k, self.nonneg)
        return soft_topk(np.clip(W, 0.0, None) if self.nonneg else W, k)

    def start(self, X0: np.ndarray, kc, key) -> np.ndarray:
        Z = self._s(np.asarray(X0, dtype=float), _one_k(kc))
        # column-major, as the baselines' own loop had them (products round by layout)
        return np.asfortranarray(Z) / np.linalg.norm(Z, axis=0)

    def __call__(self, Y, ia, va, kc, key, xtol):
        Xn = self._s(Y, _one_k(kc))
        nrm = np.linalg.norm(Xn, axis=0)
        Xn = np.where(nrm > 0, Xn / np.where(nrm > 0, nrm, 1.0), va)
        done = np.all(np.abs(np.einsum("ij,ij->j", Xn, va)) > 1 - xtol)
        return ia, Xn, np.full(Xn.shape[1], done), None
