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

Proof of monotonicity (A PSD).  ``f(y) = y^T A y`` is convex and even, so with
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

__all__ = ["AscentResult", "tie_key", "cov_key", "topk_mask", "truncate", "project", "random_starts", "ascent", "reweight", "polish"]

# 1 - <x_new, x> below this (same support): a column has converged
_XTOL = 1e-12


@dataclass(frozen=True, eq=False)
class AscentResult:
    """Per column: the best iterate ``X[:, j]`` (nonnegative, unit, at most ``kc[j]`` nonzeros),
    its value ``values[j] = x^T A x``, whether it converged; ``iterations`` run in all."""

    X: np.ndarray
    values: np.ndarray
    converged: np.ndarray
    iterations: int

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


def topk_mask(Y: np.ndarray, kc, key: np.ndarray | None = None, *, floor=None) -> np.ndarray:
    """Boolean mask of the ``kc[j]`` largest entries of each column j of ``Y`` (n, p).

    ``kc`` is an int or one int per column.  Entries equal to the k-th value
    are taken by increasing ``key`` (default: the index).  With ``floor``, a
    k-th value ``<= floor`` is not tie-broken: the mask then holds every entry
    equal to it (callers that zero such entries anyway save the work).
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
        t = np.partition(Y, n - k, axis=0)[n - k]
        ge = Y >= t
        extra = ge.sum(axis=0) > k  # a tie at the k-th value...
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
    need = kk - mask.sum(axis=0)
    over = eq.sum(axis=0) > need
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


def _nonzero_by_column(M: np.ndarray):
    """``(cols, rows)`` of the nonzeros of M (n, q), grouped by column, rows increasing."""
    return np.divmod(np.flatnonzero(M.T), M.shape[0])


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


def _select(Y: np.ndarray, kc: np.ndarray, key, signed: bool, width: int):
    """Compact ``T_k`` of each column of Y (n, q) (``signed``: the k largest |entries| with
    their signs), the same points as the dense :func:`_step` without ``both_signs``.

    Per k: one ``np.partition`` finds the (k+1)-th largest value u of each column and the
    entries above u are the k kept ones.  When fewer than k lie above u, the k-th value
    equals u (a tie); if it is positive, :func:`topk_mask` breaks the tie by ``key`` on
    that column (rare), else the tied entries are zero after truncation anyway."""
    n, q = Y.shape
    S = np.abs(Y) if signed else Y
    ks = np.unique(kc)
    if ks.size > 4 or ks[-1] >= n:  # many different k (a path), or whole columns: dense
        return _to_compact(_step(Y, kc, key, False, signed), width)
    masks, dense_cols = [], []
    for k in ks:
        g = np.flatnonzero(kc == k) if ks.size > 1 else np.arange(q)
        Sg = S if ks.size == 1 else S[:, g]
        u = np.partition(Sg, n - k - 1, axis=0)[n - k - 1]
        M = Sg > u
        count = M.sum(axis=0)
        if ks.size == 1 and k == width and (count == k).all():
            # the common case: k entries above u in every column (no tie), kept if positive
            cols, rows = _nonzero_by_column(M)
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


def ascent(matvec, X0: np.ndarray, kc, *, key: np.ndarray | None = None, max_iter: int = 200,
           rtol: float = 1e-13, both_signs: bool = False, signed: bool = False,
           xtol: float = _XTOL, merge: bool = True, stop=None) -> AscentResult:
    """Batched truncated power ascent from the columns of ``X0`` (n, p).

    Parameters
    ----------
    matvec : callable
        ``matvec(W) = A @ W`` for W of shape (n, q); A symmetric PSD.
    X0 : ndarray (n, p)
        Starts; projected on the feasible set first (``T_k`` of the start,
        normalized; a start with no positive entry becomes the basis vector of
        the feature of smallest ``key``).
    kc : int or ndarray (p,)
        Nonzeros allowed per column.
    key : ndarray (n,) of int, optional
        Tie-break priority (:func:`tie_key`); default the index.
    max_iter : int
    rtol : float
        A column stops when a step gains less than ``rtol`` (relative) or its
        iterate no longer moves (same support, ``1 - <x_new, x> <= 1e-12``).
    both_signs : bool
        Also try ``T_k(-A x)`` (the exact rank-1 step).
    signed : bool
        Keep the k largest entries of ``|A x|`` with their signs instead (the
        truncated power method without the nonnegativity constraint); then the
        iterates and the starts may have any sign.
    xtol : float
        A column has converged when its support is unchanged and
        ``1 - |<x_new, x>| <= xtol``.
    merge : bool
        Drop columns whose support, unchanged by the last step, is that of
        another settled column of larger value (same k; copies of a column
        among them); their result is the kept column's (or their own best
        iterate, if larger).
    stop : callable, optional
        ``stop()`` returning True ends the iterations early (best iterates so far).

    Returns
    -------
    AscentResult
    """
    n, p = X0.shape
    kc = np.broadcast_to(np.asarray(kc, dtype=np.intp), (p,)).copy()
    width = int(min(kc.max(), n)) if p else 1
    compact = n >= _COMPACT_MIN_N and 4 * width <= n
    P = project(X0, kc, key, signed=signed)
    idx, vals = _to_compact(P, width) if compact else (np.zeros((0, p), dtype=np.intp), P)
    best_idx, best_vals, best_v = idx.copy(), vals.copy(), np.full(p, -np.inf)
    prev_v = np.full(p, np.nan)
    converged = np.zeros(p, dtype=bool)
    active = np.arange(p)
    alias: list = []
    w_merge = _merge_weights(n) if merge else None
    it = 0

    def score(ia, va):  # (A x) and x^T A x of the columns
        Y = matvec(_to_dense(ia, va, n))
        at = Y[np.minimum(ia, n - 1), np.arange(ia.shape[1])] if compact else Y
        return Y, np.einsum("ij,ij->j", va, at)

    k_one = int(kc[0]) if p and kc.min() == kc.max() else None  # one k for every column

    def select(Y):
        if compact:
            return _select(Y, kc[active], key, signed, width)
        return idx[:, active], _step(Y, kc[active] if k_one is None else k_one, key, False, signed)

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
        Y, v = score(ia, va)
        keep_best(ia, va, v, full)
        pv = prev_v[active]
        gained = np.isnan(pv) | (v > pv + rtol * np.abs(pv))
        prev_v[active] = v
        zi, zv = select(Y)
        if both_signs:  # the longer of T_k(y) and T_k(-y)
            mi, mv = select(-Y)
            flip = np.einsum("ij,ij->j", mv, mv) > np.einsum("ij,ij->j", zv, zv)
            zi[:, flip], zv[:, flip] = mi[:, flip], mv[:, flip]
        zi, zv = _normalize_compact(zv, zi, ia, va)
        moved = ~(zi == ia).all(axis=0) if compact else ((zv != 0) != (va != 0)).any(axis=0)
        still = moved | (np.abs(np.einsum("ij,ij->j", zv, va)) < 1 - xtol)
        moving = gained & still
        converged[active[~moving]] = True
        if full:
            idx, vals = zi, zv
        else:
            idx[:, active], vals[:, active] = zi, zv
        if merge:
            moving = _merge_settled(zi, zv, ~moved, v, kc, active, alias, n, w_merge, moving)
        active = active[moving]
    if active.size:  # score the last iterates of columns still moving
        ia, va = idx[:, active], vals[:, active]
        keep_best(ia, va, score(ia, va)[1], False)
    for dropped, kept in reversed(alias):
        if best_v[kept] > best_v[dropped]:
            best_v[dropped] = best_v[kept]
            best_idx[:, dropped], best_vals[:, dropped] = best_idx[:, kept], best_vals[:, kept]
        converged[dropped] = converged[kept]
    return AscentResult(X=_to_dense(best_idx, best_vals, n), values=best_v, converged=converged,
                        iterations=it)


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
