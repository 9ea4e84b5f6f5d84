"""What the spannogram explorations of d = 2 and d = 3 share.

The distinct candidate supports met on a grid of directions (packed and
uniqued), Alg. 1's point and value for each (:func:`_support_points`, with
(P_d) solved exactly or by the closed form of :func:`_pd_small`), and the test
of whether a tie of rows changes a candidate support (:func:`_flags`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._common.validation import InputError, check_k, check_matrix

_CHUNK_ELEMS = 4_000_000  # floats per temporary (n x chunk) block


# ----------------------------------------------------------------------------- result types
@dataclass(frozen=True, eq=False, kw_only=True)
class CandidateSupports:
    """What :class:`~nspca_core.explore.SpannogramD2` and
    :class:`~nspca_core.explore.SpannogramD3` share: the distinct candidate
    supports met, Alg. 1's point and value for each, and the best of them
    (attributes documented there)."""

    supports: list
    support_values: np.ndarray
    support_x: np.ndarray
    support_exact: np.ndarray
    optimum_id: int
    optimum_value: float
    optimum_x: np.ndarray
    k: int
    n: int
    info: dict[str, Any] = field(default_factory=dict)


# ----------------------------------------------------------------------------- helpers
def _check_factor(V, k, d: int, what: str):
    """``(V, k)`` validated: ``V`` a finite (n, d) matrix, ``k`` an int in ``[1, n]``."""
    V = check_matrix(V, "V")
    if V.shape[1] != d:
        raise InputError(f"`V` must have shape (n, {d}) for {what}; got shape {V.shape}")
    return V, check_k(k, V.shape[0])


def _grid(num: int) -> np.ndarray:
    """``num`` equispaced angles in ``(-π/2, π/2]``."""
    return -np.pi / 2 + np.pi * np.arange(1, num + 1) / num


def _unique_rows(packed: np.ndarray):
    """``np.unique(packed, axis=0, return_index=True, return_inverse=True)``, fast.

    Rows are hashed to one int64 (random odd weights, wrapping arithmetic) and
    uniqued as scalars; the result is verified against the bytes and the slow
    exact path is taken on a (vanishingly unlikely) collision.
    """
    w = np.random.default_rng(12345).integers(1, 2**62, size=packed.shape[1], dtype=np.int64) | 1
    with np.errstate(over="ignore"):
        h = (packed.astype(np.int64) * w).sum(axis=1)
        h = h * np.int64(0x9E3779B97F4A7C15 - 2**64) + (packed[:, ::-1].astype(np.int64) * w).sum(axis=1)
    _, first, inv = np.unique(h, return_index=True, return_inverse=True)
    inv = np.asarray(inv).reshape(-1)
    if not np.array_equal(packed[first][inv], packed):
        uniq, first, inv = np.unique(packed, axis=0, return_index=True, return_inverse=True)
        return uniq, first, np.asarray(inv).reshape(-1)
    # order the distinct supports lexicographically by their bits (deterministic ids)
    order = np.lexsort(packed[first].T[::-1])
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return packed[first][order], first[order], rank[inv]


def _support_ids(P, k: int):
    """Candidate supports of every column of ``P`` (n x G), both signs.

    Returns ``(ids_pos, ids_neg, supports, (cols, signs))``: ids index into
    the list of distinct supports (sorted int arrays), ordered
    lexicographically by their packed membership bits; ``cols, signs`` give
    for each support a column of P and a sign generating it.  ``P`` may be a
    list of blocks (columns concatenated).  Uses the convention of
    :func:`nspca_core.topk_nonneg` (ties to the lower index).
    """
    blocks = P if isinstance(P, (list, tuple)) else [P]
    n = blocks[0].shape[0]
    G = sum(b.shape[1] for b in blocks)
    offsets = np.cumsum([0] + [b.shape[1] for b in blocks])
    nbytes = (n + 7) // 8
    packed = np.empty((2 * G, nbytes), dtype=np.uint8)
    step = max(1, _CHUNK_ELEMS // max(n, 1))
    for s, sign in enumerate((1.0, -1.0)):
        for blk, off in zip(blocks, offsets):
            for a0 in range(0, blk.shape[1], step):
                a = off + a0
                S = sign * blk[:, a0:a0 + step]
                g = S.shape[1]
                # top k without sorting: everything above the k-th value, then the entries
                # equal to it in index order until k are taken (ties to the lower index)
                kth = -np.partition(-S, k - 1, axis=0)[k - 1]
                above = S > kth
                tied = S == kth
                room = k - np.count_nonzero(above, axis=0)
                M = (above | (tied & (np.cumsum(tied, axis=0) <= room))) & (S >= 0)
                packed[s * G + a: s * G + a + g] = np.packbits(M.T, axis=1)
    uniq, first, inv = _unique_rows(packed)
    supports = [np.flatnonzero(np.unpackbits(row, count=n)) for row in uniq]
    # a column and sign that generate each support (its first occurrence)
    rep = (first % G, np.where(first < G, 1.0, -1.0))
    return inv[:G], inv[G:], supports, rep


def _pd_small(Q: np.ndarray, R: np.ndarray):
    """Exact ``(P_d)`` for d <= 3 by KKT candidates (fallback when ``solve_pd`` is absent).

    ``max c^T Q c`` over unit ``c`` with ``R c >= 0``.  A maximizer lies in the
    relative interior of a face of the spherical cone, where it is a
    stationary point of ``Q`` restricted to that face's span: the top
    eigenvector of ``Q`` (no active constraint), of ``Q`` on ``r_i^⊥`` (one
    active constraint) or ``±r_i × r_j`` (two, d = 3) / ``±r_i^⊥`` (one, d = 2).
    All candidates are checked for feasibility; O(m^2) candidates for d = 3.
    """
    d = Q.shape[0]
    norms = np.linalg.norm(R, axis=1)
    Rn = R[norms > 1e-300]
    cands = []
    w, U = np.linalg.eigh(Q)
    cands.append(U[:, -1])
    if d == 2:
        cands.extend(np.column_stack([-Rn[:, 1], Rn[:, 0]]))
    elif d == 3:
        for r in Rn:
            # orthonormal basis of r^⊥
            B = np.linalg.svd(r[None, :])[2][1:].T  # (3, 2)
            w2, U2 = np.linalg.eigh(B.T @ Q @ B)
            cands.append(B @ U2[:, -1])
        if Rn.shape[0] >= 2:
            i, j = np.triu_indices(Rn.shape[0], 1)
            cands.extend(np.cross(Rn[i], Rn[j]))
    C = np.array(cands, dtype=float).reshape(-1, d)
    cn = np.linalg.norm(C, axis=1)
    C = C[cn > 1e-12 * max(1.0, cn.max(initial=0.0))]
    C = C / np.linalg.norm(C, axis=1)[:, None]
    C = np.vstack([C, -C])
    tol = 1e-10 * max(1.0, float(norms.max(initial=0.0)))
    feas = np.all(R @ C.T >= -tol, axis=0)
    if not feas.any():
        return None
    C = C[feas]
    vals = np.einsum("ij,jk,ik->i", C, Q, C)
    return C[int(np.argmax(vals))]


def _support_points(V: np.ndarray, supports: list, P: np.ndarray, rep):
    """Alg. 1's point and value for the supports: ``x_I = V_I c / ||V_I c||``, c from (P_d).

    Every support gets a cheap feasible value first (the rank-1 point of the
    direction that generated it) and the upper bound ``λ_max(V_I^T V_I)`` (no
    x supported in I does better).  (P_d) is then solved exactly in the order
    of decreasing upper bound until the bound falls below the best value
    found: the optimum is exact while most supports cost O(|I| d).
    Returns ``(X, values, exact, solver_name)``.
    """
    n, d = V.shape
    S = len(supports)
    try:  # the project's (P_d) solver, when present
        from ..spannogram.constrained import solve_pd

        solver, name = solve_pd, "solve_pd"
    except ImportError:
        solver, name = _pd_small, "closed-form"
    M = np.zeros((S, n))
    for s, I in enumerate(supports):
        M[s, I] = 1.0
    cols, signs = rep
    Wv = (P[:, cols] * signs).T * M  # (S, n): the generating vector on its support
    Wv = np.clip(Wv, 0.0, None)
    nw = np.linalg.norm(Wv, axis=1)
    X = np.zeros((S, n))
    ok = nw > 0
    X[ok] = Wv[ok] / nw[ok, None]
    vals = np.sum((X @ V) ** 2, axis=1)
    gram = np.einsum("sn,ni,nj->sij", M, V, V)
    upper = np.linalg.eigvalsh(gram)[:, -1] if S else np.zeros(0)
    exact = np.zeros(S, dtype=bool)
    best = vals.max(initial=-np.inf)
    for s in np.argsort(-upper, kind="stable"):
        if upper[s] <= best * (1 + 1e-12) + 1e-300 and exact.any():
            break
        I = supports[s]
        x = np.zeros(n)
        if I.size:
            VI = V[I]
            c = solver(VI.T @ VI, VI)
            y = np.clip(VI @ np.asarray(c, dtype=float), 0.0, None) if c is not None else np.zeros(I.size)
            ny = np.linalg.norm(y)
            if ny > 0:
                x[I] = y / ny
            else:  # V_I c = 0 on the whole cone: the best single row of I
                x[I[int(np.argmax(np.einsum("ij,ij->i", VI, VI)))]] = 1.0
        z = V.T @ x
        v = float(z @ z)
        exact[s] = True
        if v >= vals[s] or not ok[s]:
            X[s], vals[s] = x, v
        best = max(best, vals[s])
    for s in np.flatnonzero(~ok & ~exact):  # degenerate generator: a feasible point on I
        I = supports[s]
        if I.size:
            X[s, I[int(np.argmax(np.einsum("ij,ij->i", V[I], V[I])))]] = 1.0
        else:
            X[s, 0] = 1.0
        vals[s] = float(np.sum((V.T @ X[s]) ** 2))
    return X, vals, exact, name


def _change_flags(Vc: np.ndarray, t: np.ndarray, k: int, tol: float):
    """Does ``I_k^+(±v)`` change around a point where some rows tie at value ``t``?

    ``Vc`` (n x P) holds ``v`` at each tie point, ``t`` (P,) the tied value.
    For ``+v``: with ``g`` rows strictly above the tie and ``e`` rows at it,
    the support changes iff the tie is nonnegative, ``g < k`` (the tie reaches
    the top k) and either the tie straddles the k-th place (``g + e > k``) or
    it sits at zero (a row enters or leaves the nonnegative part).
    """
    out = []
    for sign in (1.0, -1.0):
        S, ts = sign * Vc, sign * t
        g = np.count_nonzero(S > ts + tol, axis=0)
        e = np.count_nonzero(np.abs(S - ts) <= tol, axis=0)
        out.append((ts >= -tol) & (g < k) & ((g + e > k) | (np.abs(ts) <= tol)))
    return out[0], out[1]


def _maybe_changes(t, env_pos, env_neg, band, tol):
    """Cheap necessary condition for :func:`_change_flags` (per sign).

    A change needs the tie value at the k-th order (or at zero above it).
    The k-th order statistic is L-Lipschitz on the sphere (L = max row norm),
    so at distance ``δ`` from a grid point it is within ``band = L δ`` of the
    grid envelope there.
    """
    out = []
    for ts, env in ((t, env_pos), (-t, env_neg)):
        out.append((ts >= -tol) & (ts >= env - band - tol) & ((ts <= env + band + tol) | (np.abs(ts) <= tol)))
    return out[0], out[1]


def _flags(V, C, t, k, tol, env_pos, env_neg, band):
    """Exact change flags, computed only where the prefilter allows a change."""
    n = V.shape[0]
    mp, mn = _maybe_changes(t, env_pos, env_neg, band, tol)
    ch_pos = np.zeros(t.size, dtype=bool)
    ch_neg = np.zeros(t.size, dtype=bool)
    idx = np.flatnonzero(mp | mn)
    step = max(1, _CHUNK_ELEMS // max(n, 1))
    for s in range(0, idx.size, step):
        sel = idx[s:s + step]
        cp, cn = _change_flags(V @ C[:, sel], t[sel], k, tol)
        ch_pos[sel], ch_neg[sel] = cp & mp[sel], cn & mn[sel]
    return ch_pos, ch_neg


def _tol(V: np.ndarray) -> float:
    return 1e-9 * max(1e-300, float(np.abs(V).max(initial=0.0)))


# ----------------------------------------------------------------------------- d = 2
