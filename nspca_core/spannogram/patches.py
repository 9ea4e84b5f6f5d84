"""d = 3 with many rows: branch and bound over sphere patches (only those that can hold an
optimum are enumerated)."""

from __future__ import annotations

import numpy as np

from .._common.ascent import ascent
from ._common import _SECTOR_CAP, _add_local, _kth_largest, _Reduced, _topk_weighted_sum, _triples
from .enumerate import _process_vertices


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
        _add_local(cands, local, always, rows)
    if callback is not None:
        callback(total, total)
    return cands


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
