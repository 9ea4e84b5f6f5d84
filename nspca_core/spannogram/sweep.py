"""d = 2: the angular sweep of the k-level, and the row screening for d = 2 and 3."""

from __future__ import annotations

import numpy as np

from ._common import _G_OVERRIDE, _SECTOR_CAP, _add_local, _Reduced
from .enumerate import _process_vertices, _vertex_batches
from .patches import _classify, _range_in_arc


def _supports_sweep(red: _Reduced, k: int, callback=None) -> set:
    """Exact d = 2 candidate cells by an angular sweep of the k-level.

    The circle is cut into sectors.  In a sector, a row whose largest value
    there is below the k-th largest of all smallest values (or below 0) is
    never in ``I_k^+``; a row whose smallest value exceeds the (k+1)-th
    largest of all largest values (and 0) always is.  Only the remaining rows
    (few when the sector is narrow) can meet at the k-level, so the pairwise
    vertex enumeration runs on them alone, with ``k`` reduced by the rows
    always in; sectors with many undecided rows are split further.
    """
    U, mu, tol = red.U, red.mu, red.tol
    m = U.shape[0]
    rad = np.linalg.norm(U, axis=1)
    psi = np.arctan2(U[:, 1], U[:, 0])
    cands: set = set()
    G = _G_OVERRIDE or int(min(4096, max(32, 4 * np.sqrt(m))))
    edges = np.linspace(0.0, 2 * np.pi, G + 1)
    stack = [(edges[g], edges[g + 1], np.arange(m), k, np.zeros(0, np.int64)) for g in range(G)]
    # process the first level vectorized over sectors, then recurse per sector
    work = []
    del stack[G:]
    for lo_g in range(0, G, 256):
        block = stack[lo_g:lo_g + 256]
        phi0 = np.array([b[0] for b in block])
        phi1 = np.array([b[1] for b in block])
        lo, hi = _range_in_arc(rad, psi, phi0, phi1)
        for t, (p0, p1, rows, kk, always) in enumerate(block):
            work.append(_classify(p0, p1, rows, kk, always, lo[t], hi[t], mu))
    total = len(work)
    done = 0
    while work:
        item = work.pop()
        if item is None:
            done += 1
            continue
        p0, p1, rows, kk, always = item
        if rows.size > _SECTOR_CAP and p1 - p0 > 1e-9:
            sub = np.linspace(p0, p1, 9)
            lo, hi = _range_in_arc(rad[rows], psi[rows], sub[:-1], sub[1:])
            for t in range(8):
                work.append(_classify(sub[t], sub[t + 1], rows, kk, always, lo[t], hi[t], mu[rows]))
            continue
        done += 1
        if callback is not None and done % 64 == 0:
            callback(min(done, total), total)
        if kk <= 0 or rows.size == 0:
            continue
        local: set = set()
        Ub = U[rows]
        mb = mu[rows]
        seen_local: set = set()
        for C, D in _vertex_batches(Ub, 2):
            _process_vertices(Ub, mb, kk, tol, C, D, local, seen_local, arc=(p0, p1))
        _add_local(cands, local, always, rows)
    if callback is not None:
        callback(total, total)
    return cands


# d = 2 with at least this many rows: screen out the rows that are never in a top-k set
_SCREEN_MIN_ROWS = 2000


def _screen_rows_d2(V: np.ndarray, k: int, grid: int = 128, block: int = 32) -> np.ndarray:
    """The rows of V (n, 2) that can be among the k largest of ``V c`` for some unit c.

    On an arc ``[a, b]`` of length below pi, ``v_i(t) = V_i . c(t)`` is a
    sinusoid whose minimum is at an end unless the arc holds its trough, where
    both ends are negative.  So the k-th largest of ``min(v_i(a), v_i(b))``
    bounds the k-th largest value ``t(c)`` on the arc from below whenever it is
    positive.  With ``t*`` the least such bound over a grid of arcs, a row with
    ``||V_i|| < t*`` is below k other rows at every c and is in no candidate
    support (every support of S_2 is a top-k set of some ``V c``).  Returns
    every row when ``t* <= 0`` (some direction has fewer than k positive values).
    Cost O(n grid) in blocks of ``block`` angles (memory O(n block)).
    """
    n = V.shape[0]
    norms = np.sqrt(np.einsum("ij,ij->i", V, V))
    # an order statistic over a subset is a lower bound of the one over all rows: the bound
    # is computed on the rows of largest norm only (the others rarely reach the top k)
    sub = V[np.argsort(-norms, kind="stable")[: min(n, max(50 * k, 2000))]]
    m = sub.shape[0]
    t = np.linspace(0.0, 2 * np.pi, grid + 1)
    C = np.stack([np.cos(t), np.sin(t)], axis=1)  # (grid + 1, 2)
    low = np.inf
    for s in range(0, grid, block):
        P = C[s: min(grid, s + block) + 1] @ sub.T  # angles x rows
        M = np.minimum(P[:-1], P[1:])
        kth = np.partition(M, m - k, axis=1)[:, m - k]
        low = min(low, float(kth.min()))
        if low <= 0:
            return np.arange(n)
    return np.flatnonzero(norms >= low * (1 - 1e-9))


def _screen_rows_d3(V: np.ndarray, k: int, grid: int = 10) -> np.ndarray:
    """:func:`_screen_rows_d2` for d = 3, with spherical caps instead of arcs.

    The sphere is covered by the gnomonic images of a ``grid x grid`` split of
    each cube face; each cell (geodesically convex) lies in the cap around its
    centre ``c0`` whose radius ``rho`` is the largest angle to a corner.  On
    that cap ``V_i . c >= ||V_i|| cos(theta_i + rho)`` (``theta_i`` the angle
    between ``V_i`` and ``c0``), so the k-th largest of these bounds the k-th
    largest value from below on the whole cell.  Rows whose norm is below the
    least such bound (when positive) are in no top-k set.
    """
    n = V.shape[0]
    norms = np.sqrt(np.einsum("ij,ij->i", V, V))
    sub = np.argsort(-norms, kind="stable")[: min(n, max(50 * k, 2000))]
    W, wn = V[sub], norms[sub]
    m = W.shape[0]
    e = np.linspace(-1.0, 1.0, grid + 1)
    mid = 0.5 * (e[:-1] + e[1:])
    low = np.inf
    for axis in range(3):
        for sign in (1.0, -1.0):
            others = [i for i in range(3) if i != axis]

            def point(u, v):
                p = np.zeros(np.broadcast(u, v).shape + (3,))
                p[..., axis] = sign
                p[..., others[0]], p[..., others[1]] = u, v
                return p / np.linalg.norm(p, axis=-1, keepdims=True)

            cu, cv = np.meshgrid(mid, mid, indexing="ij")
            centre = point(cu, cv).reshape(-1, 3)
            rho = np.zeros(centre.shape[0])
            for du in (0, 1):
                for dv in (0, 1):
                    corner = point(*np.meshgrid(e[du:grid + du], e[dv:grid + dv], indexing="ij"))
                    cosang = np.clip(np.einsum("ij,ij->i", corner.reshape(-1, 3), centre), -1, 1)
                    rho = np.maximum(rho, np.arccos(cosang))
            P = centre @ W.T  # cells x rows
            with np.errstate(invalid="ignore", divide="ignore"):
                cos_t = np.clip(np.where(wn > 0, P / wn, 1.0), -1.0, 1.0)
            theta = np.arccos(cos_t)
            bound = wn * np.cos(np.minimum(theta + (rho[:, None] + 1e-12), np.pi))
            kth = np.partition(bound, m - k, axis=1)[:, m - k]
            low = min(low, float(kth.min()))
            if low <= 0:
                return np.arange(n)
    return np.flatnonzero(norms >= low * (1 - 1e-9))


def _arc_sweep(W: np.ndarray, outer: np.ndarray):
    """Sweep the circle ``c(t) = (cos t, sin t)`` for rows ``W`` (m, 2), all nonzero.

    Returns ``(ev, Qarc)``: the 2m sorted angles in [0, 2 pi) where a row
    changes sign, and for every open arc ``(ev[t], ev[t+1])`` (the last one
    wraps) the sum of ``outer`` (m, q) over the rows positive on it.  Row j is
    positive on ``(alpha_j - pi/2, alpha_j + pi/2)``, so the set changes by one
    row per event and the sums are one cumulative sum.  Coincident events give
    zero-length arcs with intermediate sets (harmless: they only add points).
    """
    m = W.shape[0]
    alpha = np.arctan2(W[:, 1], W[:, 0])
    two_pi = 2 * np.pi
    enter = np.mod(alpha - np.pi / 2, two_pi)
    leave = np.mod(alpha + np.pi / 2, two_pi)
    enter[enter >= two_pi] = 0.0  # np.mod can round up to 2 pi
    leave[leave >= two_pi] = 0.0
    ang = np.concatenate([enter, leave])
    order = np.argsort(ang, kind="stable")
    sign = np.where(order < m, 1.0, -1.0)
    wrap = leave < enter  # positive just below angle 2 pi (the arc before the first event)
    Q0 = outer[wrap].sum(axis=0)
    Qarc = Q0 + np.cumsum(sign[:, None] * outer[order % m], axis=0)
    return ang[order], Qarc
