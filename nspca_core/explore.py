"""Exploration helpers: what the spannogram pages draw, computed here (no plotting).

For a rank-d factor ``V`` (n x d) and a unit direction ``c``, the vector
``v = Vc`` has the candidate supports ``I_k^+(v)`` and ``I_k^+(-v)`` (the k
largest nonnegative entries of ``±v``).  As ``c`` moves on the sphere the
candidates change only where two rows of ``V`` (or a row and the zero row)
agree: on the circle for d = 2 (the spannogram curves), along great circles
meeting at triple-intersection vertices for d = 3.  The best of the candidate
supports is the optimum of ``max_{x in S_k^n} ||V^T x||^2``
(Asteris, Papailiopoulos & Dimakis, ICML 2014, §3–4, Figs. 1–2).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._validation import InputError, check_int, check_k, check_matrix

__all__ = ["SpannogramD2", "SpannogramD3", "spannogram_curves_d2", "spannogram_cells_d3"]

_MAX_TRIPLES = 300_000  # triple-intersection vertices enumerated at most (d = 3)
_CHUNK_ELEMS = 4_000_000  # floats per temporary (n x chunk) block


# ----------------------------------------------------------------------------- result types
@dataclass(frozen=True, eq=False)
class SpannogramD2:
    """The spannogram of a rank-2 factor (:func:`spannogram_curves_d2`).

    Directions are ``c(φ) = (sin φ, cos φ)`` for ``φ`` in ``(-π/2, π/2]`` (``±c``
    give the same candidates, so half the circle suffices).

    Attributes
    ----------
    phi : ndarray (G,)
        The grid of angles, increasing, ending at ``π/2``.
    curves : ndarray (n + 1, G)
        ``v_i(φ) = V_i1 sin φ + V_i2 cos φ`` for every row ``i < n``; row ``n``
        is the zero curve (all zeros), the extra row of Alg. 2.
    envelope_pos, envelope_neg : ndarray (G,)
        The k-th largest of ``v(φ)`` and of ``-v(φ)`` over the n rows (the
        k-th order curves; the support ``I_k^+(±v)`` is the rows at or above
        it and at or above zero).
    support_pos, support_neg : ndarray of int (G,)
        Index into ``supports`` of ``I_k^+(v(φ))`` and ``I_k^+(-v(φ))`` at each
        grid angle.
    intersections_phi, intersections_value : ndarray (P,)
        Every isolated crossing of two curves (pairs of distinct rows,
        including the zero curve): its angle in ``(-π/2, π/2]`` and the common
        value.  Identical rows (curves that coincide everywhere) are skipped.
    intersections_i, intersections_j : ndarray of int (P,)
        The two rows crossing, ``i < j``; ``j == n`` means the zero curve.
    changes_pos, changes_neg : ndarray of bool (P,)
        True where the candidate support ``I_k^+(v)`` (resp. ``I_k^+(-v)``)
        changes at that crossing: the tie straddles the k-th order (among
        nonnegative values) or a support row crosses zero.
    changes : ndarray of bool (P,)
        ``changes_pos | changes_neg``.
    supports : list of ndarray of int
        The distinct candidate supports (sorted indices) met on the grid and
        between consecutive changing crossings.
    support_values : ndarray (S,)
        ``||V^T x||^2`` of the point built from each support as in Alg. 1:
        ``x_I = V_I c / ||V_I c||`` with ``c`` solving
        ``(P_d): max ||V_I c||^2 s.t. ||c|| = 1, V_I c >= 0``.
    support_x : ndarray (S, n)
        Those points (nonnegative, unit norm, supported in the support).
    support_exact : ndarray of bool (S,)
        True where (P_d) was solved exactly.  Elsewhere the value is that of
        the rank-1 point of a direction generating the support (a feasible
        value, possibly below Alg. 1's), and the support is proven not better
        than the optimum (``λ_max(V_I^T V_I) <= optimum_value``), so the
        optimum is always exact.
    optimum_id : int
        Index of the best support; ``optimum_value`` and ``optimum_x`` are
        its value and point.  Besides the grid, one angle inside every arc
        between consecutive changing crossings is evaluated, so every
        candidate support is listed (in general position) and this is
        ``OPT_2``, checked against brute force in the tests.
    k, n : int
    info : dict
        ``pd_solver`` ("solve_pd" or "closed-form"), grid size, counts.
    """

    phi: np.ndarray
    curves: np.ndarray
    envelope_pos: np.ndarray
    envelope_neg: np.ndarray
    support_pos: np.ndarray
    support_neg: np.ndarray
    intersections_phi: np.ndarray
    intersections_value: np.ndarray
    intersections_i: np.ndarray
    intersections_j: np.ndarray
    changes_pos: np.ndarray
    changes_neg: np.ndarray
    changes: np.ndarray
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


@dataclass(frozen=True, eq=False)
class SpannogramD3:
    """The candidate-support cells of a rank-3 factor (:func:`spannogram_cells_d3`).

    Directions are the spherical coordinates
    ``c(φ1, φ2) = (sin φ1, cos φ1 sin φ2, cos φ1 cos φ2)`` with ``φ1, φ2`` in
    ``(-π/2, π/2]``; every direction is ``±c(φ1, φ2)`` for some grid pair (the
    sign is irrelevant because both ``±v`` are considered).

    Attributes
    ----------
    phi1, phi2 : ndarray (G,)
        The grid of each angle (the map is indexed ``[i1, i2]``).
    cells_pos, cells_neg : ndarray of int (G, G)
        Index into ``supports`` of ``I_k^+(Vc)`` and ``I_k^+(-Vc)`` at
        ``c(phi1[i1], phi2[i2])``.
    supports : list of ndarray of int
        Distinct candidate supports met on the grid.
    support_values : ndarray (S,)
        ``||V^T x||^2`` of Alg. 1's point for each support (see
        :class:`SpannogramD2`).
    support_x : ndarray (S, n)
    support_exact : ndarray of bool (S,)
        See :class:`SpannogramD2`.
    vertices_c : ndarray (P, 3)
        Triple-intersection vertices as unit directions, sign chosen so that
        the point is ``c(vertices_phi1, vertices_phi2)``: points where three
        rows, or two rows and the zero row, take one common value, among the
        rows that come near the k-th order (or near zero above it) somewhere on
        the grid — the only rows that can meet at a vertex where the candidate
        support changes (the k-th order statistic is Lipschitz; a far row's
        vertices are of no consequence and would number ``C(n+1, 3)``).  Computed
        exactly: ``c`` spans the null space of the two differences
        ``V_i - V_j, V_i - V_l`` (their cross product); triples whose
        differences are dependent (no isolated vertex) are skipped.
    vertices_phi1, vertices_phi2 : ndarray (P,)
    vertices_rows : ndarray of int (P, 3)
        The three rows ``i < j < l``; ``n`` means the zero row.
    vertices_value : ndarray (P,)
        The common value ``V_i c``.
    vertices_changes : ndarray of bool (P,)
        True where ``I_k^+(±Vc)`` changes around the vertex (the tie straddles
        the k-th order among nonnegative values, or sits at zero).
    vertices_complete : bool
        False when those rows gave more than ``max_triples`` triples and only
        the rows occurring most often in the listed supports were kept.
    optimum_id : int
    optimum_value : float
    optimum_x : ndarray (n,)
    k, n : int
    info : dict
    """

    phi1: np.ndarray
    phi2: np.ndarray
    cells_pos: np.ndarray
    cells_neg: np.ndarray
    supports: list
    support_values: np.ndarray
    support_x: np.ndarray
    support_exact: np.ndarray
    vertices_c: np.ndarray
    vertices_phi1: np.ndarray
    vertices_phi2: np.ndarray
    vertices_rows: np.ndarray
    vertices_value: np.ndarray
    vertices_changes: np.ndarray
    vertices_complete: bool
    optimum_id: int
    optimum_value: float
    optimum_x: np.ndarray
    k: int
    n: int
    info: dict[str, Any] = field(default_factory=dict)


# ----------------------------------------------------------------------------- helpers
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
        from .constrained import solve_pd

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
def spannogram_curves_d2(V, k, *, num=721) -> SpannogramD2:
    """Spannogram curves, k-th order envelopes, crossings and candidate supports for d = 2.

    Parameters
    ----------
    V : array_like of shape (n, 2)
        Rank-2 factor (``A_2 = V V^T``).
    k : int in [1, n]
    num : int >= 2, default 721
        Number of grid angles in ``(-π/2, π/2]``.

    Returns
    -------
    SpannogramD2
        See its docstring for every field.

    Notes
    -----
    Asteris, Papailiopoulos & Dimakis, ICML 2014, §3.2 and Fig. 1: with
    ``c(φ) = (sin φ, cos φ)`` each row is a sinusoid ``v_i(φ)``; the candidate
    support ``I_k^+(v(φ))`` is constant between consecutive crossings of the
    k-th order curve, and changes only at crossings of two curves at the k-th
    order or of a curve with zero.  Crossings are computed exactly: rows i, j
    meet where ``(V_i - V_j)·c(φ) = 0``, i.e. ``tan φ = -b/a`` for
    ``(a, b) = V_i - V_j`` (``φ = π/2`` when ``a = 0``).  There are
    ``C(n+1, 2)`` of them.  Support values use
    :func:`nspca_core.solve_pd` when available, else an exact closed form
    (the best feasible KKT point of (P_2)).
    """
    V = check_matrix(V, "V")
    if V.shape[1] != 2:
        raise InputError(f"`V` must have shape (n, 2) for the d=2 spannogram; got shape {V.shape}")
    n = V.shape[0]
    k = check_k(k, n)
    num = check_int(num, "num", 2)
    phi = _grid(num)
    Cg = np.vstack([np.sin(phi), np.cos(phi)])  # (2, G)
    P = V @ Cg  # (n, G)
    curves = np.vstack([P, np.zeros((1, num))])
    # k-th largest of +v and of -v along the grid
    env_pos = -np.partition(-P, k - 1, axis=0)[k - 1]
    env_neg = -np.partition(P, k - 1, axis=0)[k - 1]
    # crossings of every pair of the n + 1 curves (row n = zero curve)
    W = np.vstack([V, np.zeros((1, 2))])
    ii, jj = np.triu_indices(n + 1, 1)
    D = W[ii] - W[jj]
    a, b = D[:, 0], D[:, 1]
    tol = _tol(V)
    keep = (np.abs(a) > tol) | (np.abs(b) > tol)  # identical rows never cross in isolation
    ii, jj, a, b = ii[keep], jj[keep], a[keep], b[keep]
    with np.errstate(divide="ignore", invalid="ignore"):
        ph = np.where(np.abs(a) > 0, np.arctan(-b / np.where(a != 0, a, 1.0)), np.pi / 2)
    ph = np.where(ph <= -np.pi / 2, np.pi / 2, ph)
    cvec = np.vstack([np.sin(ph), np.cos(ph)])
    val = np.einsum("pj,jp->p", W[ii], cvec)
    # nearest grid angle (within one step δ = π/num; ||c(φ) - c(φ')|| <= |φ - φ'|)
    gi = np.clip(np.rint((ph + np.pi / 2) * num / np.pi).astype(int) - 1, 0, num - 1)
    band = 1.01 * float(np.linalg.norm(V, axis=1).max(initial=0.0)) * np.pi / num
    ch_pos, ch_neg = _flags(V, cvec, val, k, tol, env_pos[gi], env_neg[gi], band)
    order = np.lexsort((jj, ii, ph))
    # the support is constant between consecutive changing crossings: one point inside each
    # such arc (besides the grid) makes the list of supports complete in general position
    cut = np.unique(ph[ch_pos | ch_neg])
    if cut.size:
        nxt = np.append(cut[1:], cut[0] + np.pi)
        mids = 0.5 * (cut + nxt)
        Pm = V @ np.vstack([np.sin(mids), np.cos(mids)])
    else:
        Pm = np.zeros((n, 0))
    Pall = np.hstack([P, Pm])
    ids_pos, ids_neg, supports, rep = _support_ids([P, Pm], k)
    ids_pos, ids_neg = ids_pos[:num], ids_neg[:num]
    X, vals, exact, solver = _support_points(V, supports, Pall, rep)
    best = int(np.argmax(vals))
    return SpannogramD2(
        phi=phi, curves=curves, envelope_pos=env_pos, envelope_neg=env_neg,
        support_pos=ids_pos, support_neg=ids_neg,
        intersections_phi=ph[order], intersections_value=val[order],
        intersections_i=ii[order], intersections_j=jj[order],
        changes_pos=ch_pos[order], changes_neg=ch_neg[order], changes=(ch_pos | ch_neg)[order],
        supports=supports, support_values=vals, support_x=X, support_exact=exact,
        optimum_id=best, optimum_value=float(vals[best]), optimum_x=X[best], k=k, n=n,
        info={"pd_solver": solver, "num": num, "n_supports": len(supports),
              "n_intersections": int(ph.size), "n_changes": int((ch_pos | ch_neg).sum())},
    )


# ----------------------------------------------------------------------------- d = 3
def _sph(phi1, phi2):
    """``c(φ1, φ2) = (sin φ1, cos φ1 sin φ2, cos φ1 cos φ2)`` (broadcasting)."""
    return np.stack([np.sin(phi1) * np.ones_like(phi2),
                     np.cos(phi1) * np.sin(phi2),
                     np.cos(phi1) * np.cos(phi2)])


def _to_angles(C: np.ndarray):
    """Unit directions (P, 3) -> (φ1, φ2, flipped) with ``±C = c(φ1, φ2)``.

    The sign is chosen so that the last nonzero of (c3, c2, c1), checked in
    that order, is positive; then ``φ1 = asin(c1)``, ``φ2 = atan2(c2, c3)``.
    """
    flip = np.where(np.abs(C[:, 2]) > 1e-15, C[:, 2] < 0,
                    np.where(np.abs(C[:, 1]) > 1e-15, C[:, 1] < 0, C[:, 0] < 0))
    C = np.where(flip[:, None], -C, C)
    phi1 = np.arcsin(np.clip(C[:, 0], -1.0, 1.0))
    phi2 = np.where(np.abs(np.cos(phi1)) > 1e-15, np.arctan2(C[:, 1], C[:, 2]), 0.0)
    phi1 = np.where(phi1 <= -np.pi / 2, np.pi / 2, phi1)
    phi2 = np.where(phi2 <= -np.pi / 2, np.pi / 2, phi2)
    return phi1, phi2, flip, C


def _sector_points(W: np.ndarray, C: np.ndarray, t: np.ndarray, tol: float) -> np.ndarray:
    """Directions just inside each sector that the great circles through a vertex cut around it.

    ``W`` is ``V`` with the zero row appended; ``C`` (P, 3) unit vertices with
    tied value ``t``.  The circles through a vertex are ``(W_a - W_b)·c = 0``
    for the tied rows a, b; in the tangent plane they are lines, and the
    bisector of every pair of consecutive line directions points into one
    adjacent cell.
    """
    out = []
    scale = max(1e-300, float(np.abs(W).max(initial=0.0)))
    if C.shape[0] == 0:
        return np.zeros((0, 3))
    tied_all = np.abs(W @ C.T - t) <= tol  # (n + 1, P)
    # orthonormal bases of c^⊥ from the cross product with the least aligned axis
    E = np.zeros_like(C)
    E[np.arange(C.shape[0]), np.argmin(np.abs(C), axis=1)] = 1.0
    B0 = np.cross(C, E)
    B0 /= np.linalg.norm(B0, axis=1)[:, None]
    B1 = np.cross(C, B0)
    for p, c0 in enumerate(C):
        tied = np.flatnonzero(tied_all[:, p])
        if tied.size < 2:
            continue
        a, b = np.triu_indices(tied.size, 1)
        N = W[tied[a]] - W[tied[b]]
        B = np.vstack([B0[p], B1[p]])
        nB = N @ B.T
        nB = nB[np.linalg.norm(nB, axis=1) > 1e-10 * scale]
        if nB.shape[0] == 0:
            continue
        theta = np.mod(np.arctan2(nB[:, 0], -nB[:, 1]), np.pi)  # line directions mod π
        theta = np.sort(np.concatenate([theta, theta + np.pi]))
        theta = theta[np.append(True, np.diff(theta) > 1e-12)]
        nxt = np.append(theta[1:], theta[0] + 2 * np.pi)
        mid = 0.5 * (theta + nxt)
        delta = 1e-6
        P = c0[None, :] + delta * (np.cos(mid)[:, None] * B[0] + np.sin(mid)[:, None] * B[1])
        out.append(P / np.linalg.norm(P, axis=1)[:, None])
    return np.vstack(out) if out else np.zeros((0, 3))


def spannogram_cells_d3(V, k, *, grid=121, max_triples=_MAX_TRIPLES) -> SpannogramD3:
    """Map of the candidate supports over the sphere and the triple-intersection vertices, d = 3.

    Parameters
    ----------
    V : array_like of shape (n, 3)
        Rank-3 factor.
    k : int in [1, n]
    grid : int >= 2, default 121
        Grid points per angle; the map has ``grid x grid`` cells.
    max_triples : int, default 300000
        Cap on the triples enumerated for the vertices (among the rows near the
        k-th order); beyond it only the rows occurring most often in the listed
        supports are used (and ``vertices_complete`` is False).

    Returns
    -------
    SpannogramD3
        See its docstring for every field.

    Notes
    -----
    Asteris, Papailiopoulos & Dimakis, ICML 2014, §4 and Alg. 2: the
    candidate supports of d = 3 are constant on the cells cut out of the
    sphere by the great circles ``(V_i - V_j)·c = 0``; each candidate of
    ``S_3`` is attained at a vertex where three rows (or two and the zero
    row) take one value.  The map, the supports and their values are
    vectorized over the grid.  Support values use
    :func:`nspca_core.solve_pd` when available, else exact KKT candidates
    (O(k^3) per support).
    """
    V = check_matrix(V, "V")
    if V.shape[1] != 3:
        raise InputError(f"`V` must have shape (n, 3) for the d=3 cells; got shape {V.shape}")
    n = V.shape[0]
    k = check_k(k, n)
    grid = check_int(grid, "grid", 2)
    max_triples = check_int(max_triples, "max_triples", 1)
    phi = _grid(grid)
    F1, F2 = np.meshgrid(phi, phi, indexing="ij")
    Cg = _sph(F1.ravel(), F2.ravel())  # (3, G^2)
    P = V @ Cg
    env_pos = -np.partition(-P, k - 1, axis=0)[k - 1]
    env_neg = -np.partition(P, k - 1, axis=0)[k - 1]
    # every direction is within 2δ (δ = π/grid) of a grid point: ||c - c_g|| <= |Δφ1| + |Δφ2|
    L = float(np.linalg.norm(V, axis=1).max(initial=0.0))
    band = 1.01 * L * 2 * np.pi / grid
    tol = _tol(V)
    # rows that can take part in a change: near the k-th order (or near zero above it) at
    # some grid point; a row tied at a changing vertex is within 2*band of the envelope there
    near_count = np.zeros(n)
    for Ps, env in ((P, env_pos), (-P, env_neg)):
        near_count += np.count_nonzero((np.abs(Ps - env) <= 2 * band + tol) |
                                       ((np.abs(Ps) <= 2 * band + tol) & (env <= 2 * band + tol)), axis=1)
    near = near_count > 0
    # triple intersections among those rows and the zero row
    W = np.vstack([V, np.zeros((1, 3))])
    rows = np.append(np.flatnonzero(near), n)
    complete = True
    if rows.size * (rows.size - 1) * (rows.size - 2) // 6 > max_triples:
        complete = False
        used = rows
        m = used.size
        while m * (m - 1) * (m - 2) // 6 > max_triples:  # keep the most frequent rows
            m -= 1
        if m < used.size:
            freq = np.append(near_count, np.inf)  # rows near the k-th order most often
            used = np.sort(used[np.argsort(-freq[used], kind="stable")[:m]])
        rows = used
    m = rows.size
    a_, b_, c_ = np.nonzero((np.arange(m)[:, None, None] < np.arange(m)[None, :, None]) &
                            (np.arange(m)[None, :, None] < np.arange(m)[None, None, :]))
    T = np.column_stack([rows[a_], rows[b_], rows[c_]]).astype(np.int64)
    if T.size:
        C = np.cross(W[T[:, 0]] - W[T[:, 1]], W[T[:, 0]] - W[T[:, 2]])
        cn = np.linalg.norm(C, axis=1)
        scale = max(1e-300, float(np.abs(V).max(initial=0.0))) ** 2
        good = cn > 1e-10 * scale
        T, C = T[good], C[good] / cn[good][:, None]
    else:
        C = np.zeros((0, 3))
    ph1, ph2, flip, C = _to_angles(C)
    t = np.einsum("pj,pj->p", W[T[:, 0]], C) if T.size else np.zeros(0)
    g1 = np.clip(np.rint((ph1 + np.pi / 2) * grid / np.pi).astype(int) - 1, 0, grid - 1)
    g2 = np.clip(np.rint((ph2 + np.pi / 2) * grid / np.pi).astype(int) - 1, 0, grid - 1)
    gi = g1 * grid + g2
    cp, cn_ = _flags(V, C.T, t, k, tol, env_pos[gi], env_neg[gi], band)
    ch = cp | cn_
    # one direction inside every sector around each changing vertex: the supports of the
    # cells meeting there (Alg. 2's completions), so tiny cells missed by the grid are listed
    extra = _sector_points(W, C[ch], t[ch], tol)
    Pe = V @ extra.T
    ids_pos, ids_neg, supports, (cols, signs) = _support_ids([P, Pe], k)
    G = P.shape[1]
    ids_pos, ids_neg = ids_pos[:G], ids_neg[:G]
    gen = np.where(cols < G, P[:, np.minimum(cols, G - 1)], Pe[:, np.maximum(cols - G, 0)]) \
        if Pe.shape[1] else P[:, cols]
    X, vals, exact, solver = _support_points(V, supports, gen, (np.arange(len(supports)), signs))
    best = int(np.argmax(vals))
    return SpannogramD3(
        phi1=phi, phi2=phi.copy(), cells_pos=ids_pos.reshape(grid, grid),
        cells_neg=ids_neg.reshape(grid, grid), supports=supports, support_values=vals,
        support_x=X, support_exact=exact, vertices_c=C, vertices_phi1=ph1, vertices_phi2=ph2,
        vertices_rows=T,
        vertices_value=t, vertices_changes=ch, vertices_complete=complete,
        optimum_id=best, optimum_value=float(vals[best]), optimum_x=X[best], k=k, n=n,
        info={"pd_solver": solver, "grid": grid, "n_supports": len(supports),
              "n_vertices": int(t.size), "coordinates": "c = (sin φ1, cos φ1 sin φ2, cos φ1 cos φ2)"},
    )
