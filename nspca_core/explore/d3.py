"""The candidate-support cells of a rank-3 factor and their triple-intersection vertices."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._common.validation import check_int
from .supports import CandidateSupports, _check_factor, _flags, _grid, _support_ids, _support_points, _tol

__all__ = ["SpannogramD3", "spannogram_cells_d3"]

_MAX_TRIPLES = 300_000  # triple-intersection vertices enumerated at most (d = 3)


@dataclass(frozen=True, eq=False, kw_only=True)
class SpannogramD3(CandidateSupports):
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
    vertices_c: np.ndarray
    vertices_phi1: np.ndarray
    vertices_phi2: np.ndarray
    vertices_rows: np.ndarray
    vertices_value: np.ndarray
    vertices_changes: np.ndarray
    vertices_complete: bool


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
    V, k = _check_factor(V, k, 3, "the d=3 cells")
    n = V.shape[0]
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
