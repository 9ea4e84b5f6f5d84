"""Lower bounds: good feasible points from the shared ascent kernel and ``fit(auto)``
(any feasible point is a valid lower bound; the search only makes it a good one)."""

from __future__ import annotations

import numpy as np

from .._common.ascent import ascent, cov_key, reweight, topk_mask
from .._common.rank1 import rank1_point as _rank1_nspca
from ..operators.cov import Cov
from ..solve import fit_cov


def _ascent_many(cov: Cov, k: int, X0: np.ndarray, iters: int = 60):
    """The best ``(x, value)`` of the batched ascent from the columns of X0, its support then
    reweighted (the best unit vector on J, when one-signed; supports up to 2000).  Any
    feasible point is a valid lower bound; the ascent only makes it a good one."""
    r = ascent(cov.matvec, X0, k, key=cov_key(cov), max_iter=iters)
    x, f, _ = r.best()
    return reweight(cov, x, f, max_support=2000)


def _starts(cov: Cov, k: int, U: np.ndarray | None, count: int, extra=()) -> np.ndarray:
    """Start points: rank-1 solutions of the given eigen/Ritz vectors (both signs), the top
    coordinates by variance, and any extra points."""

    n = cov.n
    cols = [np.asarray(e, dtype=float) for e in extra if e is not None]
    if U is not None:
        for j in range(U.shape[1]):
            for s in (1.0, -1.0):
                cols.append(_rank1_nspca(s * U[:, j], k))
    dg = cov.diag()
    for i in np.argsort(-dg, kind="stable")[: max(count - len(cols), 1)]:
        e = np.zeros(n)
        e[i] = 1.0
        cols.append(e)
    return np.column_stack(cols)


def _fit_lower(cov: Cov, k: int):
    """The project's best answer (``fit(method="auto", certify=False)``), or None when it is not
    a feasible point (zero, or more than k nonzeros after clipping)."""
    # d = 3: "auto" runs the exact spannogram only where it is cheap (tiny n); its
    # batched ascent from many starts is what finds the answer
    r = fit_cov(cov, k, "auto", min(3, cov.n), 0.1, 0, None, {})
    x = np.clip(np.asarray(r.x, dtype=float), 0.0, None)
    if np.count_nonzero(x) == 0 or np.count_nonzero(x) > k:
        return None
    x /= np.linalg.norm(x)
    return x, cov.quad(x)


def _ascent_batch(cov: Cov, kc: np.ndarray, X0: np.ndarray, iters: int = 50):
    """The batched ascent with a different k per column: ``(X, values)``, the best iterate of
    each column (feasible for its k) and ``x^T A x``."""
    r = ascent(cov.matvec, X0, kc, key=cov_key(cov), max_iter=iters)
    return r.X, r.values


def _rank1_cols(u: np.ndarray, ks: np.ndarray) -> np.ndarray:
    """Rank-1 solutions ``I_k^+(u)`` (normalized) for each k in ks, as columns."""
    M = topk_mask(np.repeat(u[:, None], ks.size, axis=1), ks) & (u[:, None] > 0)
    return np.where(M, u[:, None], 0.0)


def _path_lower(cov: Cov, uniq: np.ndarray, U: np.ndarray, given: dict, saturate: bool = False):
    """Feasible points for every k at once: batched ascent from rank-1 starts of the top
    eigenvectors, then from the neighbours' answers (k-1's is feasible for k, k+1's truncated).
    Returns ``(X, values)`` with one column per k in ``uniq``.

    ``saturate``: the starts run in blocks of k (:func:`_k_blocks`, ascending); once the best point
    found has fewer nonzeros than the block's largest k (the sparsity no longer binds: CBCL from
    k = 138 of 361), the larger k take that point (feasible there) instead of their own starts, and
    only the largest k runs its starts, as a check: where it finds more, every skipped k runs them
    after all.  The neighbours' round follows at every k as before.  (CBCL: the k > 180 were 0.25
    of the 0.6 CPU s and never found a better point than k = 138's.)"""
    cols = []
    for j in range(min(2, U.shape[1])):
        for s in (1.0, -1.0):
            cols.append(_rank1_cols(s * U[:, j], uniq))
    dg = cov.diag()
    e = np.zeros((cov.n, uniq.size))
    e[int(np.argmax(dg)), :] = 1.0
    cols.append(e)
    p = uniq.size
    bx, bv = np.zeros((cov.n, p)), np.full(p, -np.inf)

    def starts_at(idx):  # the starts of the k in ``idx``, each k's best into bx, bv
        X, v = _ascent_batch(cov, np.tile(uniq[idx], len(cols)), np.hstack([c[:, idx] for c in cols]))
        X, v = X.reshape(cov.n, len(cols), idx.size), v.reshape(len(cols), idx.size)
        j = np.argmax(v, axis=0)
        bx[:, idx], bv[idx] = X[:, j, np.arange(idx.size)], v[j, np.arange(idx.size)]

    blocks = _k_blocks(uniq) if saturate else [np.arange(p)]
    checked = False
    for b, idx in enumerate(blocks):
        starts_at(idx)
        top = int(np.argmax(bv[: idx[-1] + 1]))
        rest = np.arange(idx[-1] + 1, p - 1)
        if b + 1 < len(blocks) and rest.size and np.count_nonzero(bx[:, top]) < uniq[idx[-1]]:
            if not checked:  # (once: the largest k's starts give the same answer again)
                starts_at(np.array([p - 1]))
                checked = True
            if bv[p - 1] <= bv[top]:  # the largest k found no more: the point is the rest's
                bx[:, rest], bv[rest] = bx[:, [top]], bv[top]
                break
    # round 2: neighbours' answers as starts
    if p > 1:
        starts = np.hstack([np.roll(bx, 1, axis=1), np.roll(bx, -1, axis=1)])
        X2, v2 = _ascent_batch(cov, np.concatenate([uniq, uniq]), starts)
        X2, v2 = X2.reshape(cov.n, 2, p), v2.reshape(2, p)
        for r in range(2):
            upd = v2[r] > bv
            bx[:, upd], bv[upd] = X2[:, r, upd], v2[r, upd]
    # a caller's point is the lower bound at its k (as in `certify(x=...)`)
    for i, k in enumerate(uniq):
        g = given.get(int(k))
        if g is not None:
            bx[:, i], bv[i] = g, cov.quad(g)
    return bx, bv


def _k_blocks(uniq: np.ndarray) -> list[np.ndarray]:
    """Positions in the sorted ``uniq`` in blocks of k ending at ``uniq[-1] / 8``, ``/ 4``, ``/ 2`` and
    ``uniq[-1]`` (empty blocks left out)."""
    edges = [uniq[-1] / 8, uniq[-1] / 4, uniq[-1] / 2, np.inf]
    out, lo = [], 0
    for e in edges:
        hi = int(np.searchsorted(uniq, e, side="right"))
        if hi > lo:
            out.append(np.arange(lo, hi))
        lo = max(lo, hi)
    return out
