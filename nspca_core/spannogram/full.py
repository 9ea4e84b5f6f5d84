"""The k = n shortcut: the optimum with the nonnegativity constraint only (d <= 3)."""

from __future__ import annotations

import numpy as np

from ._common import _BOUND_TOL, _FEAS_TOL, _PAR_TOL, _RANK_TOL, _f_plus
from .constrained import plane_bases
from .sweep import _arc_sweep


def _full_points_d2(U: np.ndarray) -> np.ndarray:
    """Unit points (2, N) containing a maximizer of ``f(c) = ||(U c)_+||^2``, U (n, 2)."""
    W = U[np.any(U != 0, axis=1)]
    if W.shape[0] == 0:
        return np.array([[1.0], [0.0]])
    outer = (W[:, :, None] * W[:, None, :]).reshape(-1, 4)
    ev, Qa = _arc_sweep(W, outer)
    _, vec = np.linalg.eigh(Qa.reshape(-1, 2, 2))
    top = vec[:, :, -1].T
    return np.concatenate([np.stack([np.cos(ev), np.sin(ev)]), top, -top], axis=1)


def _full_best_d3(U: np.ndarray, gate=None):
    """(value, c): ``max_{||c|| = 1} ||(U c)_+||^2`` for U (n, 3) of rank 3.

    ``gate``: return None when the ascent point already has more than ``gate``
    positive entries (a cheap guess that the exact support will be too large
    for the caller; it never affects the value returned otherwise).
    """

    U = U[np.any(U != 0, axis=1)]
    m = U.shape[0]
    norms = np.linalg.norm(U, axis=1)
    outer = (U[:, :, None] * U[:, None, :]).reshape(m, 9)
    # lower bound: alternating maximization x = (Uc)_+, c = U^T x (monotone) from a few starts
    C = np.concatenate([np.eye(3), -np.eye(3)], axis=1)
    for _ in range(30):
        P = np.maximum(U @ C, 0.0)
        C2 = U.T @ P
        nrm = np.linalg.norm(C2, axis=0)
        C = np.where(nrm > 0, C2 / np.where(nrm > 0, nrm, 1.0), C)
    vals = _f_plus(U, C)
    j = int(np.argmax(vals))
    best, best_c = float(vals[j]), C[:, j].copy()
    if gate is not None and np.count_nonzero(U @ best_c > _FEAS_TOL * norms) > gate:
        return None
    units = U / norms[:, None]
    bases = plane_bases(units)  # (m, 3, 2)
    done = np.zeros(m, bool)
    for i in range(m):
        if done[i]:
            continue
        B = bases[i]
        W = U @ B
        on = np.linalg.norm(W, axis=1) <= _PAR_TOL * norms
        done |= on  # parallel rows share this great circle
        off = ~on
        if not off.any():
            continue
        ev, Qa = _arc_sweep(W[off], outer[off])
        side = U[on] @ units[i]
        Qp = Qa + outer[on][side > 0].sum(axis=0)
        Qm = Qa + outer[on][side < 0].sum(axis=0)
        thr = best * (1 - _BOUND_TOL)
        pts = []
        # arcs: on the circle f = c^T Qa c; its max over an arc is at an end or at a top eigenvector
        Qe = np.einsum("ia,nij,jb->nab", B, Qa.reshape(-1, 3, 3), B)
        lam, vec = np.linalg.eigh(Qe)
        live = np.flatnonzero(lam[:, -1] * (1 + _BOUND_TOL) >= thr)
        if live.size:
            e = B @ vec[live, :, -1].T
            ends = np.concatenate([ev[live], ev[(live + 1) % ev.size]])
            pts += [e, -e, B @ np.stack([np.cos(ends), np.sin(ends)])]
        # the two cells along each arc: an interior maximizer is a top eigenvector of their Gram sum
        Qs = np.concatenate([Qp, Qm])
        cand = np.flatnonzero(np.sqrt(np.einsum("ij,ij->i", Qs, Qs)) * (1 + _BOUND_TOL) >= thr)
        if cand.size:
            lam3, vec3 = np.linalg.eigh(Qs[cand].reshape(-1, 3, 3))
            live3 = lam3[:, -1] * (1 + _BOUND_TOL) >= thr
            if live3.any():
                e3 = vec3[live3, :, -1].T
                pts += [e3, -e3]
        if pts:
            P = np.concatenate(pts, axis=1)
            vals = _f_plus(U, P)
            j = int(np.argmax(vals))
            if vals[j] > best:
                best, best_c = float(vals[j]), P[:, j].copy()
    return best, best_c


def _opt_nonneg_full(V: np.ndarray, gate=None):
    """``(value, x)`` with x optimal for ``max ||V^T x||^2`` over unit ``x >= 0`` (no sparsity).

    Returns None when V = 0 or its rank exceeds 3 (not handled), and, for
    rank 3 with ``gate`` given, when a cheap ascent point has more than
    ``gate`` positive entries (the caller only wants small supports).

    Notes
    -----
    ``max_{x >= 0, ||x|| = 1} ||V^T x||^2 = max_{||c|| = 1} f(c)`` with
    ``f(c) = ||(V c)_+||^2`` (for fixed c the best x is ``(Vc)_+``
    normalized; Cauchy-Schwarz in c).  This is OPT_d of Asteris et al.
    (ICML 2014) at k = n; its candidate supports are the sign patterns of
    the cells of the arrangement of the hyperplanes ``V_i c = 0``.  On the
    closure of a cell J, ``f = c^T V_J^T V_J c``, so a maximizer inside a
    cell is a top eigenvector of ``V_J^T V_J`` (a local maximum of a
    Rayleigh quotient is a global one; a multiple top eigenvalue makes f
    constant along a great circle through the cell, so a maximizer also
    lies on its boundary).  The same holds one dimension down on every
    great circle (its arcs between crossings) and finally at the vertices.
    So the maximum is attained among: r = 2, the arc ends and the top
    eigenvectors of the arcs' Gram sums; r = 3, the vertices, the top
    eigenvectors of the arcs restricted to their plane and of the two cells
    along each arc.  Points whose upper bound (top eigenvalue, or Frobenius
    norm) is below a value already attained are skipped.  f is evaluated
    exactly at every point, so rounding in the incremental Gram sums only
    affects the skipping margin.
    """
    n, d = V.shape
    if not np.any(V):
        return None
    _, s, Wt = np.linalg.svd(V, full_matrices=False)
    r = int(np.sum(s > _RANK_TOL * s[0]))
    Wr = Wt[:r]
    U = V @ Wr.T
    if r == 1:
        P = np.array([[1.0, -1.0]])
    elif r == 2:
        P = _full_points_d2(U)
    elif r == 3:
        best = _full_best_d3(U, gate)
        if best is None:
            return None
        P = best[1][:, None]
    else:
        return None
    vals = _f_plus(U, P)
    c = Wr.T @ P[:, int(np.argmax(vals))]
    y = V @ c
    # rows at the boundary (V_i c = 0 up to rounding) carry no weight: leave them out
    y[y <= _FEAS_TOL * np.linalg.norm(V, axis=1)] = 0.0
    nrm = np.linalg.norm(y)
    if nrm == 0:
        return None
    x = y / nrm
    return float(np.sum((V.T @ x) ** 2)), x
