"""All candidate supports S_d by enumerating the vertices of the arrangement (any d)."""

from __future__ import annotations

from itertools import combinations, islice, permutations

import numpy as np

from ._common import _FILTER_MIN_ROWS, _RANK_TOL, _TIE_TOL, _lex_selections, _Reduced, _tangent_basis
from .constrained import plane_bases


def _vertex_batches(U: np.ndarray, r: int, chunk: int = 4096):
    """Yield (C, D): unit null vectors C (N, r) of the pairwise differences of r-subsets
    of the rows of ``[U; 0]`` and the subsets D (N, r) (index m = the zero row)."""
    m = U.shape[0]
    Uz = np.vstack([U, np.zeros((1, r))])
    if r == 2:
        i, j = np.triu_indices(m + 1, 1)
        for s in range(0, i.size, chunk):
            a, b = i[s:s + chunk], j[s:s + chunk]
            diff = Uz[a] - Uz[b]
            C = np.stack([-diff[:, 1], diff[:, 0]], axis=1)
            yield C, np.stack([a, b], axis=1)
        return
    if r == 3:
        for a in range(m + 1):
            rest = np.arange(a + 1, m + 1)
            if rest.size < 2:
                continue
            bi, li = np.triu_indices(rest.size, 1)
            bi, li = rest[bi], rest[li]
            for s in range(0, bi.size, chunk):
                b, l = bi[s:s + chunk], li[s:s + chunk]
                C = np.cross(Uz[a] - Uz[b], Uz[a] - Uz[l])
                yield C, np.column_stack([np.full(b.size, a), b, l])
        return
    # general r: itertools + SVD null spaces (exact, practical only for small m); the subsets are
    # streamed chunk by chunk (a list of all C(m+1, r) of them took gigabytes at m = 200, r = 5)
    subsets = combinations(range(m + 1), r)
    while True:
        block = list(islice(subsets, chunk))
        if not block:
            return
        D = np.array(block, dtype=np.int64)
        Dm = Uz[D[:, 1:]] - Uz[D[:, :1]]
        _, sv, Wt = np.linalg.svd(Dm, full_matrices=True)
        dep = sv[:, -1] <= _RANK_TOL * np.maximum(sv[:, 0], 1e-300)
        C = Wt[:, -1, :].copy()
        C[dep] = 0.0
        yield C, D


def _level_lower_bound(U, mu, k, faces: int = 61) -> float:
    """A number ``<= min over unit c of the k-th largest entry of U c`` (counted with ``mu``).

    ``t_k(c)`` changes by at most ``max ||u_j|| * ||c - g||`` between directions,
    and every unit c is within chord distance ``h / sqrt(2)`` of a point ``g`` of
    a cube grid of spacing ``h`` radially projected to the sphere (the radial
    projection from outside the ball is 1-Lipschitz).
    """
    if mu.sum() < k:
        return -np.inf
    t = np.linspace(-1.0, 1.0, faces)
    a, b = np.meshgrid(t, t)
    a, b = a.ravel(), b.ravel()
    one = np.ones_like(a)
    pts = np.concatenate([np.stack(p, axis=1) for p in
                          [(one, a, b), (-one, a, b), (a, one, b), (a, -one, b), (a, b, one), (a, b, -one)]])
    pts /= np.linalg.norm(pts, axis=1, keepdims=True)
    W = U @ pts.T  # (m, G)
    if (mu == 1).all():
        kth = -np.partition(-W, k - 1, axis=0)[k - 1]
    else:
        order = np.argsort(-W, axis=0)
        cw = np.cumsum(mu[order], axis=0)
        pos = np.argmax(cw >= k, axis=0)
        kth = W[order[pos, np.arange(W.shape[1])], np.arange(W.shape[1])]
    h = 2.0 / (faces - 1)
    rmax = float(np.linalg.norm(U, axis=1).max())
    return float(kth.min() - rmax * h / np.sqrt(2.0) - 1e-12 * rmax)


def _circle_filtered_triples(U, mu, k, tol, chunk=128, rows_ok=None, t_low=-np.inf):
    """Yield (C, D) for the triples of ``[U; 0]`` (r = 3) whose vertex may lie on the k-level.

    A vertex of rows a < b < l lies on the great circle where rows a and b
    tie.  Along that circle row j is above a on an open half circle, so after
    one sort of the angles per circle, the number of rows above the tie at
    every crossing is read off cumulative weights (O(m log m) per circle
    instead of O(m) per vertex).  Counts are bracketed with an angular
    margin, so the filter only drops vertices that are certainly not at the
    k-level; the survivors are checked exactly by :func:`_process_vertices`.
    """

    m_all = U.shape[0]
    Uz_all = np.vstack([U, np.zeros((1, 3))])
    wz_all = np.append(mu, 0).astype(float)
    if rows_ok is None:
        rows_ok = np.ones(m_all + 1, bool)
    # Rows outside rows_ok (norm below every k-th value) are below the tie at every
    # k-level vertex: they neither count as "above" nor define vertices, so the
    # whole computation runs on the others (local indices below).
    cand = np.flatnonzero(rows_ok)
    Uz, wz = Uz_all[cand], wz_all[cand]
    m = cand.size - 1  # local index range 0..m
    ia, ib = np.triu_indices(cand.size, 1)
    if t_low > 0:
        # on the circle of a and b, row a is at most its norm inside the plane: circles
        # where it stays below every k-th value carry no k-level vertex
        nab = Uz[ia] - Uz[ib]
        along = np.einsum("ij,ij->i", Uz[ia], nab) ** 2 / np.einsum("ij,ij->i", nab, nab)
        inplane = np.sqrt(np.maximum(np.einsum("ij,ij->i", Uz[ia], Uz[ia]) - along, 0.0))
        keep = inplane >= t_low * (1 - 1e-9)
        ia, ib = ia[keep], ib[keep]
    eps = 1e-7
    big = 32.0  # > 6 pi: the per-circle offset
    for s0 in range(0, ia.size, chunk):
        a, b = ia[s0:s0 + chunk], ib[s0:s0 + chunk]
        P = a.size
        nab = Uz[a] - Uz[b]
        nab /= np.linalg.norm(nab, axis=1, keepdims=True)
        Bs = plane_bases(nab)  # (P, 3, 2)
        G = np.matmul(Uz[None, :, :], Bs)  # plane coordinates of every row (P, m+1, 2)
        Ga = G[np.arange(P), a]  # (P, 2): row a (= row b) on its circle
        rel = G - Ga[:, None, :]
        rho = np.sqrt(rel[..., 0] ** 2 + rel[..., 1] ** 2)
        psi = np.mod(np.arctan2(rel[..., 1], rel[..., 0]), 2 * np.pi)
        sure = rho > 1e-6 * max(1.0, tol / _TIE_TOL)
        # rows whose angle is uncertain (nearly tied with a along the whole circle)
        unsure_w = np.where(sure, 0.0, wz[None, :]).sum(axis=1)
        order = np.argsort(psi, axis=1)
        ps = np.take_along_axis(psi, order, axis=1)
        ws = np.where(np.take_along_axis(sure, order, axis=1), wz[order], 0.0)
        # three turns of the sorted angles, offset per circle; one search per circle row
        # finds, for every row l, the end of the half circle (psi_l, psi_l + pi)
        M1 = m + 1
        width = 3 * M1
        off = big * np.arange(P)[:, None]
        turns = np.concatenate([ps, ps + 2 * np.pi, ps + 4 * np.pi], axis=1)
        flat = (turns + off).ravel()
        cw = np.concatenate([np.zeros((P, 1)), np.cumsum(np.tile(ws, 3), axis=1)], axis=1)
        y = ps + 3 * np.pi  # psi_l + pi, seen from the middle turn
        J = np.searchsorted(flat, (y + off).ravel(), side="left").reshape(P, M1) - np.arange(P)[:, None] * width
        i1 = M1 + np.arange(M1)[None, :]  # row l in the middle turn
        cnt0 = np.take_along_axis(cw, J, axis=1) - np.take_along_axis(cw, np.broadcast_to(i1 + 1, J.shape), axis=1)
        total_w = cw[:, M1:M1 + 1]
        cntpi = total_w - ws - cnt0  # the other half circle (no ties at its ends, else ambiguous)
        # near-ties make a count ambiguous: keep those vertices for the exact check
        nxt = np.concatenate([ps[:, 1:], ps[:, :1] + 2 * np.pi], axis=1)
        prv = np.concatenate([ps[:, -1:] - 2 * np.pi, ps[:, :-1]], axis=1)
        amb = (nxt - ps <= eps) | (ps - prv <= eps)
        after = np.take_along_axis(turns, np.minimum(J, width - 1), axis=1)
        before = np.take_along_axis(turns, np.maximum(J - 1, 0), axis=1)
        amb |= (after - y <= eps) | (y - before <= eps)
        keep_sorted = np.zeros((P, m + 1), bool)
        wl = wz[order]
        # value of the tie at the crossing theta = psi_l + pi/2 (+ pi): c(theta) = (-sin, cos)(psi_l)
        relx = np.take_along_axis(rel[..., 0], order, axis=1)
        rely = np.take_along_axis(rel[..., 1], order, axis=1)
        rhos = np.maximum(np.take_along_axis(rho, order, axis=1), 1e-300)
        s0 = (Ga[:, 1:2] * relx - Ga[:, 0:1] * rely) / rhos
        for sgn, cnt in ((1.0, cnt0), (-1.0, cntpi)):
            lo = cnt
            hi = cnt + unsure_w[:, None]
            s = sgn * s0
            tied_max = wz[a][:, None] + wz[b][:, None] + wl + unsure_w[:, None]
            near0 = np.abs(s) <= tol * 1e3 + 1e-300
            pos = s > -tol * 1e3
            keep_sorted |= pos & (amb | ((lo <= k - 1) & ((hi + tied_max >= k) | near0)))
        keep_any = np.zeros((P, m + 1), bool)
        np.put_along_axis(keep_any, order, keep_sorted, axis=1)
        lidx = np.arange(m + 1)[None, :]
        keep_any &= (lidx > b[:, None]) & sure
        pi_, li = np.nonzero(keep_any)
        A_, B_, L_ = a[pi_], b[pi_], li
        C = np.cross(Uz[A_] - Uz[B_], Uz[A_] - Uz[L_]).reshape(-1, 3)
        A_, B_, L_ = cand[A_], cand[B_], cand[L_]  # back to indices of [U; 0]
        yield C, np.column_stack([A_, B_, L_]).reshape(-1, 3), (s0 + P, ia.size)


def _process_vertices(red_U, mu, k, tol, C, D, cands, degenerate_seen, arc=None, region=None,
                      force_lex=False, gram_cut=None):
    """Add to ``cands`` the supports of all cells around the relevant vertices of a batch.

    red_U : (m, r) distinct rows; mu : multiplicities; D rows use index m for the zero row.
    arc : optional (phi0, phi1) for r = 2, keep only vertices with angle in it.
    force_lex : the points are not vertices but crossings of one tie with a patch edge
        (generic there: one pair, or one row and 0, tied).
    gram_cut : optional (weighted outer products (m, r, r), Gram of rows always in, cut):
        skip vertices where lambda_1 of the Gram of every row that can be in a
        cell around it is below ``cut`` (no such cell can reach the optimum).
    """
    m, r = red_U.shape
    nrm = np.linalg.norm(C, axis=1)
    if r == 3:
        # |d1 x d2| = |d1| |d2| sin(angle): dependent differences give no vertex
        Uz = np.vstack([red_U, np.zeros((1, r))])
        d1 = np.linalg.norm(Uz[D[:, 0]] - Uz[D[:, 1]], axis=1)
        d2 = np.linalg.norm(Uz[D[:, 0]] - Uz[D[:, 2]], axis=1)
        ok = nrm > _RANK_TOL * d1 * d2
    else:
        ok = nrm > 0
    C, D = C[ok] / nrm[ok, None], D[ok]
    if C.shape[0] == 0:
        return
    W = red_U @ C.T  # (m, N)
    has_zero = (D == m).any(axis=1)
    D0 = D[:, 0]
    t0 = np.where(D0 == m, 0.0, W[np.minimum(D0, m - 1), np.arange(D0.size)])
    n_real_def = r - has_zero.astype(int)
    tied = np.abs(W - t0) <= tol
    tied_distinct = tied.sum(axis=0)
    tied_cnt = mu @ tied
    for sgn in (1.0, -1.0):
        s = sgn * t0
        if arc is not None:
            phi = np.mod(np.arctan2(sgn * C[:, 1], sgn * C[:, 0]), 2 * np.pi)
            lo, hi = arc
            inside = ((phi >= lo - 1e-12) & (phi <= hi + 1e-12)) | ((phi + 2 * np.pi >= lo - 1e-12)
                                                                   & (phi + 2 * np.pi <= hi + 1e-12))
        elif region is not None:
            inside = region(sgn * C)
        else:
            inside = np.ones(C.shape[0], bool)
        above = (sgn * W > s + tol)
        above_cnt = mu @ above
        s_pos = s > tol
        s_zero = np.abs(s) <= tol
        rel = inside & (((s_pos & (above_cnt < k) & (above_cnt + tied_cnt > k))
                         | (s_zero & (above_cnt < k))))
        if not rel.any():
            continue
        if gram_cut is not None:
            outer_l, G_base, cut = gram_cut
            Gv = G_base + np.einsum("mij,mn->nij", outer_l, (above | tied).astype(float))
            rel &= np.linalg.eigvalsh(Gv)[:, -1] * (1 + 1e-12) >= cut
            if not rel.any():
                continue
        generic = (tied_distinct == n_real_def - int(force_lex)) & (s_zero == has_zero)
        for v in np.flatnonzero(rel):
            slots = int(k - above_cnt[v])
            full = np.flatnonzero(above[:, v])
            T = np.flatnonzero(tied[:, v])
            if generic[v]:
                sels = set()
                if s_zero[v]:
                    for perm in permutations(range(T.size)):
                        for p in range(T.size + 1):
                            sels.add(_take_prefix(perm[:p], mu[T], slots))
                else:
                    for perm in permutations(range(T.size)):
                        sels.add(_take_prefix(perm, mu[T], slots))
            else:
                key = (sgn, bool(s_zero[v]), T.tobytes())
                if degenerate_seen is not None:  # None: points not determined by T (patch edges)
                    if key in degenerate_seen:
                        continue
                    degenerate_seen.add(key)
                c = sgn * C[v]
                B = _tangent_basis(c)
                P = red_U[T] @ B
                sels = _lex_selections(P, mu[T], slots, bool(s_zero[v]), tol)
            fb = full.tobytes()
            for sel in sels:
                cands.add((fb, tuple((int(T[a]), j) for a, j in sel)))


def _take_prefix(order, mu, slots):
    sel, left = [], slots
    for a in order:
        if left <= 0:
            break
        j = int(min(left, mu[a]))
        sel.append((int(a), j))
        left -= j
    return tuple(sorted(sel))


def _supports_enumerate(red: _Reduced, k: int, callback=None, method: str = "auto") -> set:
    """Candidate cells of Alg. 2 by enumerating all r-subsets of ``[U; 0]`` (``method``: "plain",
    "filter" or "auto"; the sphere patches of d = 3 are :func:`.patches._supports_patches`)."""
    U, mu, r, tol = red.U, red.mu, red.r, red.tol
    cands: set = set()
    if r == 1:
        # c = ±1: the order of the distinct values decides everything
        for sgn in (1.0, -1.0):
            w = sgn * U[:, 0]
            order = np.argsort(-w, kind="stable")
            full, left, part = [], k, []
            for g in order:
                if w[g] <= 0 or left <= 0:
                    break
                if mu[g] <= left:
                    full.append(g)
                    left -= mu[g]
                else:
                    part.append((int(g), left))
                    left = 0
            cands.add((np.array(sorted(full), dtype=np.int64).tobytes(), tuple(part)))
        if callback is not None:
            callback(1, 1)
        return cands
    degenerate_seen: set = set()
    total = _n_subsets(red.m + 1, r)
    done = 0
    if r == 3 and (method == "filter" or (method == "auto" and red.m >= _FILTER_MIN_ROWS)):
        # rows that are never as large as the k-th value cannot tie at the k-level
        t_low = _level_lower_bound(U, mu, k)
        rows_ok = np.append(np.linalg.norm(U, axis=1) >= t_low, t_low <= 0)
        batches = _circle_filtered_triples(U, mu, k, tol, rows_ok=rows_ok, t_low=t_low)
        total = None
    else:
        batches = ((C, D, None) for C, D in _vertex_batches(U, r))
    for C, D, progress in batches:
        if C.shape[0]:
            _process_vertices(U, mu, k, tol, C, D, cands, degenerate_seen)
        if progress is not None:
            done, total = progress
        else:
            done += C.shape[0]
        if callback is not None:
            callback(done, total)
    if callback is not None and not total:  # every circle was pruned
        callback(1, 1)
    return cands


def _n_subsets(N, r):
    from math import comb
    return comb(N, r)
