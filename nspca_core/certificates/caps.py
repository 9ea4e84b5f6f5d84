"""An upper bound on ``OPT_3`` (the rank-3 problem) by patches of the sphere: :mod:`.arcs` one dimension up.

``OPT_3 = max ||V^T x||^2`` over unit, nonnegative, k-sparse x for an n x 3 factor V equals ``max_c f(c)`` over unit
c in R^3, ``f(c) = s_k((V c)_+^2)`` (as for d = 2 in :mod:`.arcs`).  The sphere is covered by the six faces of the
cube ``[-1, 1]^3`` projected from the origin, each cut into squares (neighbours share their float edges, so the
patches cover every direction).  A patch lies in the cap of center ``c0`` (its center's direction) and angular radius
``rho``, the largest angle from ``c0`` to the square's corners (the angle to ``c0`` is quasiconvex on the square's
plane: its largest value over the square sits at a corner).  On a cap, entry ``v_i . c = r_i cos(angle)`` is at most
``r_i`` where the cap holds ``v_i``'s direction, else ``r_i cos(alpha_i - rho)`` (``alpha_i`` the angle from ``c0``),
and at least ``r_i cos(alpha_i + rho)`` (``-r_i`` past pi), so ``f <= s_k((h)_+^2)`` on the patch.  Where the
patch's top k cannot change (as in :mod:`.arcs`) f is the quadratic form ``c^T M c``, ``M = sum_J v_i v_i^T``, at most
``lambda_2 + (lambda_1 - lambda_2) max_cap (e_1 . c)^2`` (exact when the cap holds ``e_1``).  Patches are split in
four where their bound is above the best f found at a center (branch and bound).

Rounding: ``v_i . c0`` within ``8 eps |v_i|_1`` (``c0``'s normalization included), used on the safe side in every
formula (the cosine's upper value, the sine's from the smaller ``|v_i . c0|``); ``rho`` widened by 1e-12; M's
eigenvalues within ``4 (k + 8) eps tr M``, its top eigenvector's angle within that over the gap; the k-sums rounded up.
Tests: ``tests/core/certificates/test_caps.py`` (brute force, hypothesis).
"""

from __future__ import annotations

import numpy as np

from .arcs import _EPS, _fixed_supports, _top_sums

__all__ = ["opt3_upper"]

_FIRST_SPLIT = 3  # each face cut into 3 x 3 squares at the first level (54 patches)
_MAX_LEVELS = 30
_MAX_OPEN = 4096  # open patches at most: past it the search stops with the bound it has (valid)


def _points(face: np.ndarray, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The cube's points (M, 3) of faces ``face`` (axis ``face // 2``, sign by parity) at (u, v)."""
    M = face.size
    ax = face // 2
    p = np.empty((M, 3))
    rows = np.arange(M)
    p[rows, ax] = np.where(face % 2 == 0, 1.0, -1.0)
    p[rows, (ax + 1) % 3] = u
    p[rows, (ax + 2) % 3] = v
    return p


def _unit(p: np.ndarray) -> np.ndarray:
    return p / np.linalg.norm(p, axis=1)[:, None]


def _caps(face, u0, u1, v0, v1):
    """Each patch's cap: center direction (M, 3), cos and sin of its (widened) radius."""
    c0 = _unit(_points(face, 0.5 * (u0 + u1), 0.5 * (v0 + v1)))
    cos = np.ones(face.size)
    for uu, vv in ((u0, v0), (u0, v1), (u1, v0), (u1, v1)):
        cos = np.minimum(cos, np.einsum("ij,ij->i", c0, _unit(_points(face, uu, vv))))
    rho = np.arccos(np.clip(cos - 8 * _EPS, -1.0, 1.0)) + 1e-12
    return c0, np.cos(rho), np.sin(rho)


def _patch_bounds(V, r, slack, c0, cr, sr, k):
    """The rigorous bound of f on each patch's cap, and each cap's k-th largest smallest value."""
    g = c0 @ V.T  # (M, n)
    gh, gl = g + slack, g - slack
    side = np.sqrt(np.clip(r * r - np.maximum(np.abs(g) - slack, 0.0) ** 2, 0.0, None)) * (1 + 2 * _EPS)
    # (a cap that may hold v_i's direction, or its opposite, takes r_i, -r_i: the tests widened by the roundings of
    # r, rho's cosine and v_i . c0)
    edge = r * cr[:, None] * (1 - 16 * _EPS)
    h = np.where(gh >= edge - slack, r, gh * cr[:, None] + side * sr[:, None] + 4 * _EPS * r)
    lo = np.where(gl <= slack - edge, -r, gl * cr[:, None] - side * sr[:, None] - 4 * _EPS * r)
    out, mask, fixed, kth = _fixed_supports(h, lo, k)
    for j in np.flatnonzero(fixed):
        Vj = V[mask[j]]
        Mj = Vj.T @ Vj
        w, E = np.linalg.eigh(Mj)
        tol = 4 * (k + 8) * _EPS * float(np.trace(Mj))
        lam1, lam2 = float(w[2]) + tol, float(w[1]) + tol
        gap = max(float(w[2] - w[1]), 0.0)
        delta = np.pi if gap <= 2 * tol else float(np.arcsin(min(1.0, 2 * tol / gap))) + 1e-12
        cosang = abs(float(E[:, 2] @ c0[j]))
        ang = float(np.arccos(min(1.0, cosang * (1 + 4 * _EPS))))
        rho = float(np.arctan2(sr[j], cr[j]))
        t = 1.0 if ang <= rho + delta else float(np.cos(ang - rho - delta)) ** 2 * (1 + 4 * _EPS)
        out[j] = min(out[j], (lam2 + (lam1 - lam2) * min(t, 1.0)) * (1 + 8 * _EPS))
    return out, kth


def opt3_upper(V: np.ndarray, k: int, rel: float = 1e-9, enough: float | None = None) -> tuple[float, float, dict]:
    """``(upper, lower, info)`` as :func:`.arcs.opt2_upper`, for an n x 3 factor V (module docstring); also stops
    with the bound it has past ``_MAX_OPEN`` open patches or ``_MAX_LEVELS`` levels."""
    V = np.ascontiguousarray(np.asarray(V, dtype=np.float64))
    n = V.shape[0]
    k = int(min(max(k, 1), n))
    r = np.linalg.norm(V, axis=1) * (1 + 4 * _EPS)
    slack = 8 * _EPS * np.abs(V).sum(axis=1)
    e = np.linspace(-1.0, 1.0, _FIRST_SPLIT + 1)
    grid = np.array([(f, e[i], e[i + 1], e[j], e[j + 1]) for f in range(6) for i in range(_FIRST_SPLIT)
                     for j in range(_FIRST_SPLIT)])
    face, u0, u1, v0, v1 = grid[:, 0].astype(int), grid[:, 1], grid[:, 2], grid[:, 3], grid[:, 4]
    settled, lower, patches, stopped = -np.inf, -np.inf, 0, "rel"
    for level in range(_MAX_LEVELS):
        c0, cr, sr = _caps(face, u0, u1, v0, v1)
        ub, kth = _patch_bounds(V, r, slack, c0, cr, sr, k)
        f = np.maximum(c0 @ V.T, 0.0)
        lower = max(lower, float(_top_sums(f * f, k).max()))
        patches += face.size
        open_ = ub > lower * (1 + rel)
        settled = max(settled, float(ub[~open_].max()) if np.any(~open_) else -np.inf)
        if not np.any(open_):
            break
        stop = ("enough" if enough is not None and lower >= enough else
                "levels" if level == _MAX_LEVELS - 1 else "open" if 4 * np.count_nonzero(open_) > _MAX_OPEN else None)
        if stop:
            settled, stopped = max(settled, float(ub[open_].max())), stop
            break
        keep = r >= kth[open_].min()
        if keep.sum() < V.shape[0]:
            V, r, slack = V[keep], r[keep], slack[keep]
        face, u0, u1, v0, v1 = face[open_], u0[open_], u1[open_], v0[open_], v1[open_]
        um, vm = 0.5 * (u0 + u1), 0.5 * (v0 + v1)
        face = np.tile(face, 4)
        u0, u1 = np.concatenate([u0, u0, um, um]), np.concatenate([um, um, u1, u1])
        v0, v1 = np.concatenate([v0, vm, v0, vm]), np.concatenate([vm, v1, vm, v1])
    return settled, lower, {"levels": level + 1, "patches": patches, "rows": int(V.shape[0]), "stopped": stopped}
