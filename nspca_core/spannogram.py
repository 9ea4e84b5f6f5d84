"""The spannogram: exact ``max_{x in S_k^n} ||V^T x||^2`` for a rank-d factor V.

Asteris, Papailiopoulos & Dimakis, "Nonnegative Sparse PCA with Provable
Guarantees", ICML 2014: Alg. 1 (solve (P_d) on every candidate support) and
Alg. 2 (the candidate supports ``S_d``).  The paper assumes rows of V in
general position; this module does not (ties, zero, duplicated and linearly
dependent rows are handled exactly, see :func:`candidate_supports`).
"""

from __future__ import annotations

from dataclasses import replace

import time
from itertools import combinations, permutations

import numpy as np

from ._validation import check_k, check_matrix, pow2_scale
from .constrained import _solve_pd
from .result import Result

__all__ = ["candidate_supports", "lowrank_nspca"]

# Relative tolerance (times the largest row norm) under which two values of
# V c count as tied.  Ties decide which neighbouring cells are enumerated; a
# spurious tie only adds candidates, a missed near-tie can only lose cells of
# angular size ~1e-10, i.e. a value change of the same relative order.
_TIE_TOL = 1e-10
_FEAS_TOL = 1e-10
_RANK_TOL = 1e-12
# Above this many distinct rows, d = 2 uses the angular sweep instead of all pairs.
_SWEEP_MIN_ROWS = 120
_SECTOR_CAP = 48
_FILTER_MIN_ROWS = 40
# The k = n shortcut is tried (method "auto") for k >= n / 3 and at least this many rows.
_FULL_MIN_ROWS = 40
_G_OVERRIDE = 0


# --------------------------------------------------------------------------- reduction


class _Reduced:
    """Distinct nonzero rows of V (``groups``), their multiplicities, a full-rank basis."""

    def __init__(self, V: np.ndarray):
        self.n, self.d = V.shape
        nz = np.flatnonzero(np.any(V != 0, axis=1))
        self.empty = nz.size == 0
        if self.empty:
            return
        uniq, inverse, counts = np.unique(V[nz], axis=0, return_inverse=True, return_counts=True)
        inverse = inverse.ravel()
        # order groups by their first original index (determinism, ties to the lower index)
        first = np.full(uniq.shape[0], V.shape[0])
        np.minimum.at(first, inverse, nz)
        order = np.argsort(first, kind="stable")
        rank_of = np.empty_like(order)
        rank_of[order] = np.arange(order.size)
        uniq, counts, inverse = uniq[order], counts[order], rank_of[inverse]
        self.mu = counts.astype(np.int64)
        self.m = uniq.shape[0]
        srt = np.argsort(inverse, kind="stable")  # nz is increasing, so members stay sorted
        self.members = np.split(nz[srt], np.cumsum(counts)[:-1])
        self.simple = bool((counts == 1).all())
        self.first = nz[srt][np.concatenate([[0], np.cumsum(counts)[:-1]])]
        # full column rank coordinates: rows of V in an orthonormal basis of its row space
        _, s, Wt = np.linalg.svd(uniq, full_matrices=False)
        r = int(np.sum(s > _RANK_TOL * s[0])) if s.size else 0
        self.r = max(r, 1)
        self.U = uniq @ Wt[: self.r].T
        self.rmax = float(np.linalg.norm(self.U, axis=1).max())
        self.tol = _TIE_TOL * self.rmax

    def expand(self, full: np.ndarray, partial=()) -> np.ndarray:
        """Original indices of a candidate: whole groups ``full`` and ``(group, copies)`` pairs."""
        if self.simple:
            idx = [self.first[full]]
            idx += [self.first[[g]] for g, j in partial if j > 0]
        else:
            idx = [self.members[g] for g in full]
            idx += [self.members[g][:j] for g, j in partial if j > 0]
        if not idx:
            return np.zeros(0, dtype=np.int64)
        return np.sort(np.concatenate(idx)).astype(np.int64)


# --------------------------------------------------------------------------- lexicographic ties


def _tangent_basis(c: np.ndarray) -> np.ndarray:
    """Orthonormal basis (r, r-1) of the complement of unit ``c``."""
    r = c.size
    if r == 1:
        return np.zeros((1, 0))
    # Householder-free: complete c to an orthonormal basis with QR
    M = np.column_stack([c, np.eye(r)])
    Qm, _ = np.linalg.qr(M)
    return Qm[:, 1:r]


def _lex_selections(P: np.ndarray, mu: np.ndarray, slots: int, signed: bool, tol: float):
    """Selections near a vertex: for every generic perturbation direction, the tied
    points ordered by it, the first ``slots`` copies (only positive ones if ``signed``).

    P : (t, q) tangent coordinates of the tied distinct rows (group order = index order).
    Returns a set of tuples ((local point, copies), ...).
    """
    t, q = P.shape
    out = set()

    def take(order, positive):
        sel, left = [], slots
        for a in order:
            if left <= 0:
                break
            if signed and not positive[a]:
                continue
            j = int(min(left, mu[a]))
            sel.append((int(a), j))
            left -= j
        return tuple(sorted(sel))

    if q == 0 or t == 0:
        return {take(range(t), np.zeros(t, bool) if signed else np.ones(t, bool))}
    if q == 1:
        for sgn in (1.0, -1.0):
            key = sgn * P[:, 0]
            order = sorted(range(t), key=lambda a: (-key[a], a))
            out.add(take(order, key > tol))
        return out
    if q == 2:
        normals = [P[a] - P[b] for a, b in combinations(range(t), 2)]
        if signed:
            normals += [P[a] for a in range(t)]
        dirs = []
        for nv in normals:
            nn = np.linalg.norm(nv)
            if nn > tol:
                dirs.append(np.array([-nv[1], nv[0]]) / nn)
        if not dirs:
            dirs = [np.array([1.0, 0.0])]
        for d1 in dirs:
            for s1 in (1.0, -1.0):
                e1 = s1 * d1
                for s2 in (1.0, -1.0):
                    e2 = s2 * np.array([-e1[1], e1[0]])
                    k1, k2 = P @ e1, P @ e2
                    # cluster the first key within tol, then order by the second
                    o1 = sorted(range(t), key=lambda a: -k1[a])
                    cl = np.empty(t)
                    cur, last = 0, None
                    for a in o1:
                        if last is not None and last - k1[a] > tol:
                            cur += 1
                        cl[a] = cur
                        last = k1[a]
                    order = sorted(range(t), key=lambda a: (cl[a], -k2[a], a))
                    pos = (k1 > tol) | ((np.abs(k1) <= tol) & (k2 > tol))
                    out.add(take(order, pos))
        return out
    # q >= 3 (d >= 4): every admissible completion (sound, possibly more than needed)
    for size in range(0, t + 1):
        for S in combinations(range(t), size):
            for perm in permutations(S):
                out.add(take(perm, np.ones(t, bool)))
    return out


# --------------------------------------------------------------------------- vertices


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
    # general r: itertools + SVD null spaces (exact, practical only for small m)
    subsets = list(combinations(range(m + 1), r))
    for s in range(0, len(subsets), chunk):
        D = np.array(subsets[s:s + chunk])
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
    from .constrained import _plane_bases

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
        Bs = _plane_bases(nab)  # (P, 3, 2)
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
    """Candidate cells of Alg. 2 by enumerating all r-subsets of ``[U; 0]``."""
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
    if r == 3 and method == "patches":
        return _supports_patches(red, k, callback)
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


# --------------------------------------------------------------------------- d = 2 sweep


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
        afb = always
        for fb, part in local:
            full_local = np.frombuffer(fb, dtype=np.int64)
            full = np.sort(np.concatenate([afb, rows[full_local]]))
            cands.add((full.tobytes(), tuple((int(rows[g]), j) for g, j in part)))
    if callback is not None:
        callback(total, total)
    return cands


def _supports_patches(red: _Reduced, k: int, callback=None, lower: float = -np.inf) -> set:
    """Exact r = 3 candidate cells by cutting the sphere into patches (the d = 3 sweep).

    The sphere is covered by the radial projections of squares on the faces
    of the cube.  On a patch with centre ``g`` every ``c`` is within chord
    distance ``δ`` (half the square's diagonal: radial projection from
    outside the unit ball is 1-Lipschitz), so ``u·c`` lies in
    ``[u·g - |u| δ, u·g + |u| δ]``.  As in the d = 2 sweep, rows certainly
    above or below the k-level there are set aside, and the vertices of the
    remaining rows (and 0) that fall in the patch are processed exactly with
    ``k`` reduced by the rows always in; crowded patches are split in four.
    """
    U, mu, tol = red.U, red.mu, red.tol
    m = U.shape[0]
    norms = np.linalg.norm(U, axis=1)
    cands: set = set()
    prune = np.isfinite(lower) and lower > 0
    if prune:
        # multiplicity-weighted Gram pieces: Gram(I) = sum_{g in I} mu_g u_g u_g^T
        outer = (mu[:, None, None] * U[:, :, None] * U[:, None, :]).astype(float)
        sqn = norms ** 2
        # keep cells within rounding of the lower bound (never prune a tie with the optimum)
        cut = lower * (1.0 - 1e-9)
    nside = 8
    edges = np.linspace(-1.0, 1.0, nside + 1)
    work = []
    for face in range(6):
        for i in range(nside):
            for j in range(nside):
                work.append((face, edges[i], edges[i + 1], edges[j], edges[j + 1],
                             np.arange(m), k, np.zeros(0, np.int64)))
    total = len(work)
    done = 0
    while work:
        face, u0, u1, v0, v1, rows, kk, always = work.pop()
        if kk <= 0 or rows.size == 0:
            done += 1
            continue
        g = _face_point(face, 0.5 * (u0 + u1), 0.5 * (v0 + v1))
        g /= np.linalg.norm(g)
        delta = 0.5 * np.hypot(u1 - u0, v1 - v0)
        val = U[rows] @ g
        rad = norms[rows] * delta
        eps = 1e-12 * red.rmax
        item_rows, item_always = rows, always
        item = _classify(None, None, rows, kk, always, val - rad - eps, val + rad + eps, mu[rows])
        _, _, rows, kk, always = item
        if kk <= 0 or rows.size == 0:
            done += 1
            if prune and always.size:
                # the whole patch lies in the cell of ``always`` (its vertices may be in
                # pruned patches, so it is added here)
                cands.add((np.sort(always).astype(np.int64).tobytes(), ()))
            continue
        if prune:
            # f(c) <= sum of the k largest (hi_i)_+^2 on the patch (hi: value upper bounds)
            # (rows set aside as "never" on a parent patch are below the k-th value here too)
            hi_al = U[item_always] @ g + norms[item_always] * delta + eps
            f_hi = _topk_weighted_sum(np.maximum(np.concatenate([hi_al, val + rad + eps]), 0.0) ** 2,
                                      np.concatenate([mu[item_always], mu[item_rows]]), k)
            if min(f_hi, _patch_value_bound(outer, sqn, mu, always, rows, kk)) < cut:
                # no maximizer of f in this patch, or no cell meeting it can be optimal
                done += 1
                continue
        if rows.size > _SECTOR_CAP and u1 - u0 > 1e-6:
            um, vm = 0.5 * (u0 + u1), 0.5 * (v0 + v1)
            for a_, b_, c_, d_ in ((u0, um, v0, vm), (um, u1, v0, vm), (u0, um, vm, v1), (um, u1, vm, v1)):
                work.append((face, a_, b_, c_, d_, rows, kk, always))
            total += 3
            continue
        done += 1
        if callback is not None and done % 32 == 0:
            callback(min(done, total), total)
        region = _patch_predicate(face, u0, u1, v0, v1)
        local: set = set()
        seen_local: set = set()
        Ub, mb = U[rows], mu[rows]
        D = _triples(rows.size + 1)  # all triples of [Ub; 0] in one batch (rows.size <= cap)
        Uz = np.vstack([Ub, np.zeros((1, 3))])
        C = np.cross(Uz[D[:, 0]] - Uz[D[:, 1]], Uz[D[:, 0]] - Uz[D[:, 2]])
        # only vertices in the patch (either sign) are processed here: select them first
        near = region(C) | region(-C)
        C, D = C[near], D[near]
        gc = (outer[rows], outer[always].sum(axis=0), cut) if prune else None
        _process_vertices(Ub, mb, kk, tol, C, D, local, seen_local, region=region, gram_cut=gc)
        if prune:
            _patch_boundary_cells(Ub, mb, kk, tol, face, u0, u1, v0, v1, region, local, gc)
        for fb, part in local:
            full_local = np.frombuffer(fb, dtype=np.int64)
            full = np.sort(np.concatenate([always, rows[full_local]]))
            cands.add((full.tobytes(), tuple((int(rows[g_]), j_) for g_, j_ in part)))
    if callback is not None:
        callback(total, total)
    return cands


_TRIPLES: dict = {}


def _triples(N: int) -> np.ndarray:
    """All index triples a < b < l of range(N), shape (C(N, 3), 3) (cached per N)."""
    D = _TRIPLES.get(N)
    if D is None:
        D = np.array(list(combinations(range(N), 3)), dtype=np.int64).reshape(-1, 3)
        _TRIPLES[N] = D
    return D


def _topk_weighted_sum(values, weights, k) -> float:
    """Sum of the k largest of ``values`` counted with integer ``weights``."""
    order = np.argsort(-values)
    w = weights[order]
    before = np.cumsum(w) - w
    take = np.clip(k - before, 0, w)
    return float(take @ values[order])


def _patch_boundary_cells(Ub, mb, kk, tol, face, u0, u1, v0, v1, region, local, gram_cut=None):
    """Add the cells meeting a patch that have no arrangement vertex inside it.

    The part of a cell inside the (convex) patch is a convex polygon whose
    corners are arrangement vertices in the patch (processed by the caller),
    crossings of a tie circle with a patch edge, or patch corners.  At a
    crossing every cell touching the point is added (the tied rows ordered by
    every generic direction, as at a degenerate vertex).  If only patch
    corners remain, the patch lies in one cell, which holds the patch centre.
    """
    m = Ub.shape[0]
    corners = [_face_point(face, a_, b_) for a_, b_ in ((u0, v0), (u1, v0), (u1, v1), (u0, v1))]
    edge_normals = np.array([np.cross(corners[i], corners[(i + 1) % 4]) for i in range(4)])
    ia, ib = np.triu_indices(m + 1, 1)  # pairs of [Ub; 0]: tie circles
    Uz = np.vstack([Ub, np.zeros((1, 3))])
    nab = Uz[ia] - Uz[ib]
    P = np.cross(nab[:, None, :], edge_normals[None, :, :]).reshape(-1, 3)
    D = np.repeat(np.column_stack([ia, ib, ib]), 4, axis=0)
    ok = np.linalg.norm(P, axis=1) > 0
    P, D = P[ok], D[ok]
    inside = region(P) | region(-P)
    if inside.any():
        P, D = P[inside], D[inside]
        # the tied pair does not determine the point: no de-duplication by tie set
        _process_vertices(Ub, mb, kk, tol, P, D, local, None, region=region, force_lex=True,
                          gram_cut=gram_cut)
    # the cell holding the centre (exact when no tie there; otherwise a crossing covers it)
    g = _face_point(face, 0.5 * (u0 + u1), 0.5 * (v0 + v1))
    w = Ub @ (g / np.linalg.norm(g))
    order = np.argsort(-w, kind="stable")
    full, part, left = [], (), kk
    for a_ in order:
        if left <= 0 or w[a_] <= 0:
            break
        if mb[a_] <= left:
            full.append(int(a_))
            left -= int(mb[a_])
        else:
            part = ((int(a_), int(left)),)
            left = 0
    local.add((np.array(sorted(full), dtype=np.int64).tobytes(), part))


def _patch_value_bound(outer, sqn, mu, always, rows, kk) -> float:
    """Upper bound on ``max_c ||V_I c||^2`` over every support ``I`` valid somewhere in a patch.

    Every such ``I`` is ``always`` plus at most ``kk`` copies from ``rows``
    (rows classified "never" are below the k-th value, or negative, on the
    whole patch).  Gram matrices grow with the support, so
    ``lambda_1(Gram(I)) <= lambda_1(Gram(always + rows))``; and by Weyl,
    ``lambda_1(Gram(I)) <= lambda_1(Gram(always)) + trace(Gram(J))`` with
    ``J`` the added copies, at most the ``kk`` largest squared norms.
    """
    G_al = outer[always].sum(axis=0)
    G_all = G_al + outer[rows].sum(axis=0)
    b1 = float(np.linalg.eigvalsh(G_all)[-1])
    sq = sqn[rows]
    order = np.argsort(-sq)
    cw = np.cumsum(mu[rows][order])
    take = np.minimum(mu[rows][order], np.maximum(kk - (cw - mu[rows][order]), 0))
    b2 = float(np.linalg.eigvalsh(G_al)[-1]) + float(take @ sq[order])
    return min(b1, b2) * (1.0 + 1e-12)


def _ascent_lower_bound(U: np.ndarray, mu: np.ndarray, k: int, faces: int = 9, iters: int = 20) -> float:
    """A feasible value ``||V^T x||^2 <= OPT_d`` from many ascent runs (a proven lower bound).

    Starts at the directions of a cube grid (and the axes) and runs the shared
    truncated power ascent (:func:`nspca_core._common.ascent.ascent`) on
    ``V V^T``: ``x <- top-k positive part of V c`` (normalized) with
    ``c = V^T x``, which never decreases ``||V^T x||^2``.  Every ``x`` is in
    ``S_k^n``, so the best value bounds ``OPT_d`` from below.  Rows are repeated
    by multiplicity.
    """
    from ._common.ascent import ascent

    Ue = np.repeat(U, mu, axis=0)
    n, r = Ue.shape
    t = np.linspace(-1.0, 1.0, faces)
    a, b = (z.ravel() for z in np.meshgrid(t, t))
    one = np.ones_like(a)
    pts = [np.eye(r), -np.eye(r)]
    if r == 3:
        pts += [np.stack(p, axis=1) for p in
                [(one, a, b), (-one, a, b), (a, one, b), (a, -one, b), (a, b, one), (a, b, -one)]]
    C = np.concatenate(pts).T  # (r, N)
    X0 = Ue @ C
    X0 = X0[:, (X0 > 0).any(axis=0)]
    if X0.shape[1] == 0:
        return 0.0
    res = ascent(lambda W: Ue @ (Ue.T @ W), X0, min(k, n), max_iter=iters + 1)
    return max(0.0, float(res.values.max()))


def _face_point(face, u, v):
    """The point of cube face ``face`` (0..5: +x, -x, +y, -y, +z, -z) with face coordinates (u, v)."""
    axis, sign = divmod(face, 2)
    p = np.empty(3)
    p[axis] = 1.0 if sign == 0 else -1.0
    others = [i for i in range(3) if i != axis]
    p[others[0]], p[others[1]] = u, v
    return p


def _patch_predicate(face, u0, u1, v0, v1, slack=1e-9):
    """Vectorized test: unit rows of C whose radial projection lies in the (slightly grown) patch."""
    axis, sign = divmod(face, 2)
    others = [i for i in range(3) if i != axis]

    def inside(C):
        lead = C[:, axis] if sign == 0 else -C[:, axis]
        ok = lead > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            u = C[:, others[0]] / lead
            v = C[:, others[1]] / lead
        ok &= (u >= u0 - slack) & (u <= u1 + slack) & (v >= v0 - slack) & (v <= v1 + slack)
        return ok

    return inside


def _range_in_arc(rad, psi, phi0, phi1):
    """Min and max of ``rad * cos(phi - psi)`` over ``phi in [phi0, phi1]`` (arrays of sectors)."""
    a0 = np.cos(phi0[:, None] - psi[None, :]) * rad
    a1 = np.cos(phi1[:, None] - psi[None, :]) * rad
    lo = np.minimum(a0, a1)
    hi = np.maximum(a0, a1)
    # the maximum rad sits at phi = psi, the minimum -rad at psi + pi
    pk = np.mod(psi[None, :] - phi0[:, None], 2 * np.pi)
    width = (phi1 - phi0)[:, None]
    hi = np.where(pk <= width, rad, hi)
    tr = np.mod(psi[None, :] + np.pi - phi0[:, None], 2 * np.pi)
    lo = np.where(tr <= width, -rad, lo)
    # widen by rounding so that the classification stays sound
    eps = 1e-12 * (rad.max() if rad.size else 1.0)
    return lo - eps, hi + eps


def _kth_largest(values, weights, k):
    """The k-th largest of ``values`` counted with integer ``weights`` (-inf if fewer)."""
    if weights.sum() < k:
        return -np.inf
    order = np.argsort(-values, kind="stable")
    cw = np.cumsum(weights[order])
    return values[order[np.searchsorted(cw, k)]]


def _classify(p0, p1, rows, kk, always, lo, hi, mw):
    """Split ``rows`` of a sector into always-in, never-in and undecided.

    ``lo``, ``hi``, ``mw`` (value range over the sector, multiplicity) are aligned with ``rows``.
    """
    if kk <= 0 or rows.size == 0:
        return (p0, p1, rows[:0], kk, always)
    L = _kth_largest(lo, mw, kk)
    Uk = _kth_largest(hi, mw, kk + 1)
    never = hi < max(L, 0.0)
    alw = (lo > max(Uk, 0.0)) & ~never
    a = int(mw[alw].sum())
    keep = ~never & ~alw
    new_always = np.concatenate([always, rows[alw]]) if alw.any() else always
    return (p0, p1, rows[keep], kk - a, new_always)


# --------------------------------------------------------------------------- public


def _check_V(V):
    V = check_matrix(V, "V")
    return V


def _candidate_set(V: np.ndarray, k: int, *, method: str = "auto", callback=None, optimum_only=False):
    """(reduction, candidate cells, path).  ``optimum_only``: a subset that still holds an
    optimal support (value pruning, d = 3 with many rows), for :func:`lowrank_nspca` only."""
    red = _Reduced(V)
    if red.empty:
        return red, set(), "empty"
    if red.r == 3 and (method == "prune" or (optimum_only and method == "auto" and red.m >= _FILTER_MIN_ROWS)):
        lower = _ascent_lower_bound(red.U, red.mu, k)
        return red, _supports_patches(red, k, callback, lower=lower), "pruned"
    if red.r == 2 and (method == "sweep" or (method == "auto" and red.m >= _SWEEP_MIN_ROWS)):
        return red, _supports_sweep(red, k, callback), "sweep"
    return red, _supports_enumerate(red, k, callback, method), "enumerate"


def _expand_all(red: _Reduced, cands: set) -> list:
    out = {}
    for fb, part in cands:
        full = np.frombuffer(fb, dtype=np.int64)
        idx = red.expand(full, part)
        if idx.size:
            out.setdefault(idx.tobytes(), idx)
    return sorted(out.values(), key=lambda a: (a.size, a.tolist()))


def candidate_supports(V, k) -> list:
    """The candidate supports ``S_d`` of Alg. 2 (Asteris et al. 2014), exact for every V.

    Parameters
    ----------
    V : array_like of shape (n, d)
        Any real matrix (ties, zero, duplicated or dependent rows allowed).
    k : int in [1, n]

    Returns
    -------
    list of ndarray of int
        Sorted, distinct supports (each of size at most k).  One of them is
        the support of an optimal ``x`` of ``max_{x in S_k^n} ||V^T x||^2``
        (for ``V = 0`` the list is empty: every feasible x is optimal).
        ``len <= 2^d * C(n+1, d)``.

    Notes
    -----
    For unit ``c`` let ``f(c)`` be the sum of the squared k largest positive
    entries of ``Vc``; ``OPT_d = max_c f(c)``.  Zero rows never help and
    identical rows are interchangeable (ties go to the lower index), so both
    are factored out, and V is expressed in a basis of its row space (rank
    r).  The sphere is cut by the hyperplanes where two rows, or a row and 0,
    tie.  In every open cell ``C`` the support ``I_C = I_k^+(Vc)`` is constant
    and positive, and ``f = ||V_{I_C} c||^2`` on its closure, so ``(P_d)`` on
    ``I_C`` reaches ``OPT_d`` for the cell whose closure holds a maximizer.
    The set of ``c`` where ``I_C`` is a valid top-k choice is a pointed
    polyhedral cone; an extreme ray of it is cut out by r-1 independent ties,
    all at the k-th order (or at 0), hence by r tied rows of ``[V; 0]``: the
    paper's d-subsets.  Near such a vertex the rows above the tie stay in,
    those below stay out, and the tied rows are ordered lexicographically by
    the direction of departure; the cells touching the vertex are exactly the
    orders of the tied rows under generic directions.  In general position
    (r tied rows) these are all their orders; otherwise they are enumerated
    from the critical directions of the tied rows (exact for r <= 3; for
    r >= 4 every admissible completion is added).  Each candidate is the
    support of a real open cell, so the paper's bound holds (a generic
    perturbation keeps every open cell).  For d = 2 and many rows the
    vertices on the k-level are found by an angular sweep instead of all
    pairs.
    """
    V = _check_V(V)
    k = check_k(k, V.shape[0])
    red, cands, _ = _candidate_set(V / pow2_scale(V), k)  # scale-free, as lowrank_nspca
    return _expand_all(red, cands)


def _evaluate(V: np.ndarray, supports: list, callback=None):
    """max over candidates of (P_d): batched top eigenvectors, (P_d) only where needed.

    Returns (value, x, n_pd_solves).
    """
    n, d = V.shape
    outer = (V[:, :, None] * V[:, None, :]).reshape(n, d * d)
    rnorm = np.linalg.norm(V, axis=1)
    Ms, tops, cs, fpos, fneg, two = [], [], [], [], [], []
    # batches of candidates with a bounded number of indices (memory stays O(n + batch))
    budget, start = 1 << 21, 0
    while start < len(supports):
        stop, used = start, 0
        while stop < len(supports) and (used == 0 or used + supports[stop].size <= budget):
            used += supports[stop].size
            stop += 1
        batch = supports[start:stop]
        sizes = np.array([s.size for s in batch])
        flat = np.concatenate(batch)
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        M = np.add.reduceat(outer[flat], starts, axis=0).reshape(-1, d, d)
        lam, vec = np.linalg.eigh(M)
        c = vec[:, :, -1]
        # feasibility of ±c on each support: min and max of V_I c
        proj = np.einsum("ij,ij->i", V[flat], np.repeat(c, sizes, axis=0))
        slack = _FEAS_TOL * rnorm[flat]
        fpos.append(np.minimum.reduceat(proj + slack, starts) >= 0)
        fneg.append(np.maximum.reduceat(proj - slack, starts) <= 0)
        if d == 3:
            # the rows most violated by c and by -c: (P_d) relaxed to these two
            # constraints is infeasible at ±c, so its optimum has one of them active
            pn = proj / np.maximum(rnorm[flat], 1e-300)
            seg = np.repeat(np.arange(sizes.size), sizes)
            lo_i = np.unique(seg[np.flatnonzero(pn == np.repeat(np.minimum.reduceat(pn, starts), sizes))],
                             return_index=True)[1]
            hi_i = np.unique(seg[np.flatnonzero(pn == np.repeat(np.maximum.reduceat(pn, starts), sizes))],
                             return_index=True)[1]
            pos_lo = np.flatnonzero(pn == np.repeat(np.minimum.reduceat(pn, starts), sizes))[lo_i]
            pos_hi = np.flatnonzero(pn == np.repeat(np.maximum.reduceat(pn, starts), sizes))[hi_i]
            two.append(np.maximum(_plane_top(M, V[flat[pos_lo]]), _plane_top(M, V[flat[pos_hi]])))
        Ms.append(M)
        tops.append(lam[:, -1])
        cs.append(c)
        start = stop
    M = np.concatenate(Ms)
    top = np.concatenate(tops)
    c = np.concatenate(cs)
    feas_pos = np.concatenate(fpos)
    feas_neg = np.concatenate(fneg)
    feasible = feas_pos | feas_neg
    # upper bound on (P_d) of the infeasible candidates (top eigenvalue, or the two-row relaxation)
    ub = np.minimum(top, np.concatenate(two)) if d == 3 else top
    best, best_x = -np.inf, None
    if feasible.any():
        j = int(np.flatnonzero(feasible)[np.argmax(top[feasible])])
        best = float(top[j])
        best_x = _x_from_c(V, supports[j], c[j] if feas_pos[j] else -c[j])
        best = float(np.sum((V.T @ best_x) ** 2))
    # (P_d) is bounded by the top eigenvalue: solve it only where it could win
    solves = 0
    todo = np.flatnonzero(~feasible & (ub > best * (1 + 1e-12) + 1e-300))
    todo = todo[np.argsort(-ub[todo], kind="stable")]
    for j in todo:
        if ub[j] <= best * (1 + 1e-12):
            break
        I = supports[j]
        cj = _solve_pd_cuts(M[j], V[I], c[j], best)
        solves += 1
        if cj is None:
            continue
        x = _x_from_c(V, I, cj)
        val = float(np.sum((V.T @ x) ** 2))
        if val > best:
            best, best_x = val, x
    return best, best_x, solves


def _plane_top(M, r):
    """Top eigenvalue of each ``M[j]`` (3 x 3) restricted to the plane ``r[j]^perp``.

    Zero rows give the unrestricted top eigenvalue (no constraint).
    """
    from .constrained import _plane_bases

    nr = np.linalg.norm(r, axis=1)
    out = np.linalg.eigvalsh(M)[:, -1].copy()
    ok = nr > 0
    if ok.any():
        B = _plane_bases(r[ok] / nr[ok, None])  # (N, 3, 2)
        Mr = np.einsum("nia,nij,njb->nab", B, M[ok], B)
        out[ok] = np.linalg.eigvalsh(Mr)[:, -1]
    return out * (1 + 1e-12)


def _solve_pd_cuts(Q, R, c0, floor):
    """(P_d) on ``(Q, R)`` by adding violated constraints, or None if it cannot beat ``floor``.

    Dropping constraints relaxes (P_d): the relaxed optimum bounds it from
    above, and when it satisfies every row of ``R`` it is the optimum.  So
    the most violated row is added until the relaxed optimum is feasible
    (exact), its value is at most ``floor`` (the candidate cannot win), or
    its cone is empty.  A few constraints usually suffice, instead of the
    ``O(k^2)`` pairs of the full solver.  ``c0``: the unconstrained top
    eigenvector (its most violated rows, for both signs, start the set).
    """
    norms = np.linalg.norm(R, axis=1)
    keep = norms > 0
    Rn = R[keep] / norms[keep, None]
    if Rn.shape[0] == 0:
        return c0
    s0 = Rn @ c0
    active = sorted({int(np.argmin(s0)), int(np.argmax(s0))})
    while True:
        cj, val = _solve_pd(Q, Rn[active], return_value=True)
        if cj is None or val <= floor * (1 + 1e-12):
            return None
        s = Rn @ cj
        worst = int(np.argmin(s))
        if s[worst] >= -_FEAS_TOL:
            return cj
        if worst in active or len(active) >= Rn.shape[0]:  # rounding: fall back to the full solver
            return _solve_pd(Q, R)
        active.append(worst)


def _x_from_c(V, I, c):
    x = np.zeros(V.shape[0])
    xi = V[I] @ c
    xi = np.clip(xi, 0.0, None)  # rounding-level negatives only (c is feasible)
    nrm = np.linalg.norm(xi)
    if nrm == 0:
        x[I[0]] = 1.0
        return x
    x[I] = xi / nrm
    return x


def lowrank_nspca(V, k, *, callback=None) -> Result:
    """Exact ``argmax_{x in S_k^n} ||V^T x||^2`` (Alg. 1 of Asteris et al. 2014).

    Parameters
    ----------
    V : array_like of shape (n, d)
        Rank-d factor (``A_d = V V^T``), e.g. from :func:`nspca_core.lowrank_factor`.
    k : int in [1, n]
    callback : callable, optional
        ``callback(done, total)`` while candidates are enumerated.

    Returns
    -------
    Result
        ``method="spannogram"``; ``variance = variance_lowrank = ||V^T x||^2``
        (callers with the true covariance recompute ``variance``);
        ``info["candidates"]`` the number of candidate supports,
        ``info["pd_solves"]`` how many needed the full (P_d) solver,
        ``info["path"]`` "enumerate" (all d-subsets), "sweep" (d = 2 k-level
        sweep), "pruned" (d = 3 with many rows: only the sphere patches
        that can hold an optimum, so ``candidates`` counts a subset of S_d)
        or "full-nonneg" (large k: the optimum without the sparsity
        constraint already has at most k nonzeros; ``candidates = 0``).

    Notes
    -----
    ``OPT_d = max_{I in S_d} (P_d)(V_I^T V_I, V_I)`` with ``x_I = V_I c /
    ||V_I c||`` (see :func:`candidate_supports` for why ``S_d`` suffices and
    :func:`nspca_core.solve_pd` for (P_d)).  The candidates are evaluated in
    one batch: the top eigenpair of every ``V_I^T V_I``; when ``±`` that
    eigenvector is feasible it solves (P_d).  Since (P_d) never exceeds the
    top eigenvalue, the exact solver only runs on infeasible candidates whose
    top eigenvalue beats the best value found, in decreasing order.
    Cost: O(n^{d+1}) for the enumeration (d = 2 with many rows: a sweep whose
    cost grows with the number of k-level crossings), practical for d <= 3.

    For d = 3 with many rows, only sphere patches that can matter are
    enumerated (branch and bound, exact).  A lower bound ``L <= OPT_d`` comes
    from feasible ascent runs; a patch is skipped when either bound below is
    under ``L``: ``max_{c in patch} f(c) <= sum`` of the k largest squared
    positive parts of the row values' upper bounds on the patch (then no
    maximizer of f lies in it), or ``lambda_1`` of the Gram matrix of the
    rows that can be in ``I_k^+`` there (then no cell meeting it is
    optimal).  Every cell meeting a kept patch is enumerated (its vertices
    in the patch, its crossings with the patch edges, or the patch centre),
    and some kept patch meets a cell whose closure holds a maximizer.

    Large k (``3k >= n``, d <= 3, n >= 40): ``OPT_d(k)`` is nondecreasing in k,
    so if an optimum of the k = n problem (nonnegativity only, see
    :func:`_opt_nonneg_full`, O(n^2 log n) for d = 3) has at most k nonzeros
    it is optimal for k and is returned; otherwise the paths above run.
    """
    t0 = time.perf_counter()
    V = _check_V(V)
    n, d = V.shape
    k = check_k(k, n)
    # scale-free: the search runs on V / 2^j with max|V / 2^j| in [1, 2) (exact), so no
    # product of entries under- or overflows (d = 3 failed below ~1e-81, above ~1e76)
    s = pow2_scale(V)
    return _scale_values(_lowrank(V / s, k, callback=callback, t0=t0), s * s)


def _scale_values(r: Result, factor: float) -> Result:
    """``r`` with ``variance`` and ``variance_lowrank`` multiplied by ``factor`` (a power of 2:
    exact unless it overflows, which it then does to inf as the true value would)."""
    import dataclasses

    if factor == 1.0:
        return r
    with np.errstate(over="ignore", under="ignore"):
        var, low = np.float64(r.variance) * factor, np.float64(r.variance_lowrank) * factor
    return dataclasses.replace(r, variance=float(var), variance_lowrank=float(low))


def _lowrank(V, k, *, callback=None, t0=None, method="auto", screen=True):
    t0 = time.perf_counter() if t0 is None else t0
    n, d = V.shape
    # k = n shortcut: OPT_d(k) <= OPT_d(n), so an optimum of the problem without the
    # sparsity constraint that has at most k nonzeros is optimal for k
    if method == "full" or (method == "auto" and d <= 3 and n >= _FULL_MIN_ROWS and 3 * k >= n):
        full = _opt_nonneg_full(V, gate=None if method == "full" else k)
        if full is not None and np.count_nonzero(full[1]) <= k:
            val, x = full
            if callback is not None:
                callback(1, 1)
            return Result(x=x, support=np.flatnonzero(x > 0), variance=val, variance_lowrank=val,
                          method="spannogram", params={"k": k, "d": d}, seconds=time.perf_counter() - t0,
                          info={"candidates": 0, "pd_solves": 0, "path": "full-nonneg"})
        if method == "full":
            method = "auto"
    if screen and d in (2, 3) and n >= _SCREEN_MIN_ROWS and method == "auto":
        rows = _screen_rows_d2(V, k) if d == 2 else _screen_rows_d3(V, k)
        if rows.size < n:  # solve on the rows that can be in a top-k set; the rest stay zero
            r = _lowrank(V[rows], min(k, rows.size), callback=callback, t0=t0, screen=False)
            x = np.zeros(n)
            x[rows] = r.x
            return replace(r, x=x, support=rows[r.support],
                           info={**r.info, "screened_rows": int(rows.size)})
    red, cands, path = _candidate_set(V, k, method=method, callback=callback, optimum_only=True)
    supports = _expand_all(red, cands) if cands else []
    if not supports:
        x = np.zeros(n)
        x[0] = 1.0
        val, solves = float(np.sum(V[0] ** 2)), 0
    else:
        val, x, solves = _evaluate(V, supports)
    support = np.flatnonzero(x > 0)
    return Result(x=x, support=support, variance=val, variance_lowrank=val, method="spannogram",
                  params={"k": k, "d": d}, seconds=time.perf_counter() - t0,
                  info={"candidates": len(supports), "pd_solves": solves, "path": path})


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


# --------------------------------------------------------------------------- k = n shortcut

# Rows whose in-plane part is below this (relative to their norm) lie on a great circle.
_PAR_TOL = 1e-9
# Relative margin on the bounds used to skip cells and arcs (rounding of the incremental sums).
_BOUND_TOL = 1e-9


def _f_plus(U: np.ndarray, C: np.ndarray) -> np.ndarray:
    """``f(c) = ||(U c)_+||^2`` for every column c of ``C`` (r, N)."""
    P = U @ C
    np.maximum(P, 0.0, out=P)
    return np.einsum("ij,ij->j", P, P)


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
    from .constrained import _plane_bases

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
    bases = _plane_bases(units)  # (m, 3, 2)
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
