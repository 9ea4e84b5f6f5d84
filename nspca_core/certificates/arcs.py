"""An upper bound on ``OPT_2`` (the rank-2 problem of the paper's d = 2 bound) by arcs of the circle.

Why: the operator route's ``paper(d=2)`` bound (:func:`.cheap._certify_operator`, sparse data above the dense
size) needs ``OPT_2 = max ||V^T x||^2`` over unit, nonnegative, k-sparse x for the n x 2 factor V.  The exact
spannogram (:func:`nspca_core.lowrank_nspca`) costs 0.6 of the certificate's 0.9 CPU s on an 8,000 x 6,000
topic corpus (issue 39: 5x the answer), though the bound only needs a number at least ``OPT_2``, close to it.

The bound.  ``(c^T V^T x)^2 <= ||V^T x||^2`` for unit c, with equality at ``c = V^T x / ||V^T x||``, so
``OPT_2 = max_theta f(theta)``, ``f(theta) = max_x (u_theta^T x)^2 = s_k((u_theta)_+^2)`` with ``u_theta = a cos
theta + b sin theta`` (a, b: V's columns; s_k the sum of the k largest entries; x on the top k entries of
``(u_theta)_+``, proportional to them).  On an arc ``[t1, t2]`` of width below pi, ``u_i(theta) = r_i cos(theta -
phi_i)`` has its largest value ``r_i = ||(a_i, b_i)||`` where the arc holds ``phi_i`` (the derivative ``r_i
sin(phi_i - theta)`` is positive at t1 and negative at t2), else at an endpoint (a sinusoid has one maximum on
the circle: an arc without it holds at most the minimum inside).  With ``h_i`` that largest value,
``f(theta) <= s_k((h)_+^2)`` on the whole arc (s_k of squares of positive parts is monotone entrywise).  The
arcs cover the circle (neighbours share their float endpoints), so the largest arc bound is at least
``OPT_2``.  Arcs are split where their bound is above the best ``f`` found at their centers
(branch and bound over theta) until the two agree to ``rel``.

Rounding: each computed ``u_i`` or derivative is within ``4 eps (|a_i| + |b_i|)`` of the exact value at the
float angle (the products, one sum, the cosine and sine each within an ulp), the containment test is widened by
that much (an arc in doubt takes ``r_i``), every ``h_i`` is raised by ``8 eps (|a_i| + |b_i|)`` plus ``r_i``'s
ulp, and the sum of k squares is rounded up by ``4 (k + 4) eps``.
Tests: ``tests/core/certificates/test_arcs.py`` (brute force, the exact spannogram, hypothesis).
"""

from __future__ import annotations

import numpy as np

__all__ = ["opt2_upper"]

_EPS = float(np.finfo(np.float64).eps)
# the first level's arcs (each child level splits the arcs still open in two)
_FIRST_ARCS = 64
# at most this many levels (each halves the open arcs' width): 64 * 2^-40 of the circle is far below any rel
_MAX_LEVELS = 40


def _top_sums(P: np.ndarray, k: int) -> np.ndarray:
    """The sum of the k largest entries of each column of ``P`` (n, M), in float64."""
    n = P.shape[0]
    if k < n:
        P = np.partition(P, n - k, axis=0)[n - k:]
    return P.sum(axis=0)


def _centers(a, b, theta: np.ndarray, k: int) -> np.ndarray:
    """``f`` at the angles ``theta`` (plain float: only the search's guide and the lower value)."""
    u = np.multiply.outer(a, np.cos(theta)) + np.multiply.outer(b, np.sin(theta))
    np.maximum(u, 0.0, out=u)
    return _top_sums(u * u, k)


def _in_arc(a, b, slack, c1, s1, c2, s2) -> np.ndarray:
    """Whether the arc may hold the maximum of ``a cos + b sin`` (its derivative ``b cos - a sin`` >= 0 at the
    start, <= 0 at the end, each widened by ``slack``: an arc in doubt counts as holding it)."""
    return ((np.multiply.outer(b, c1) - np.multiply.outer(a, s1)) >= -slack[:, None]) & (
        (np.multiply.outer(b, c2) - np.multiply.outer(a, s2)) <= slack[:, None])


def _arc_bounds(a, b, r, slack, t1: np.ndarray, t2: np.ndarray, k: int) -> np.ndarray:
    """The rigorous bound of ``f`` on each arc ``[t1_j, t2_j]`` (module docstring), and where the arc's top k
    cannot change (its k entries' smallest values above every other entry's largest and above 0) the largest
    value of their sum of squares over the arc, which is ``f`` there exactly (a sinusoid in ``2 theta``)."""
    c1, s1, c2, s2 = np.cos(t1), np.sin(t1), np.cos(t2), np.sin(t2)
    e1 = np.multiply.outer(a, c1) + np.multiply.outer(b, s1)
    e2 = np.multiply.outer(a, c2) + np.multiply.outer(b, s2)
    h, lo = np.maximum(e1, e2), np.minimum(e1, e2)
    np.copyto(h, np.broadcast_to(r[:, None], h.shape), where=_in_arc(a, b, slack, c1, s1, c2, s2))
    np.copyto(lo, np.broadcast_to(-r[:, None], lo.shape), where=_in_arc(-a, -b, slack, c1, s1, c2, s2))
    h += 2 * slack[:, None]
    lo -= 2 * slack[:, None]
    n, M = h.shape
    hp = np.maximum(h, 0.0)
    out = _top_sums(hp * hp, k) * (1 + 4 * (k + 4) * _EPS)
    # the arcs where f's support cannot change, J (a mask): (1) the entries positive all along the arc, at most
    # k of them, every other entry <= 0 all along it; (2) the k largest smallest values, each above 0 and above
    # the rest's largest values
    mask = lo > 0
    fixed = (mask.sum(axis=0) <= k) & np.all(mask | (h <= 0), axis=0)
    if k < n:
        J = np.argpartition(lo, n - k, axis=0)[n - k:]
        cols = np.arange(M)
        floor = lo[J, cols].min(axis=0)
        h[J, cols] = -np.inf
        top = ~fixed & (floor > 0) & (h.max(axis=0) <= floor)
        mask[:, top] = False
        mask[J[:, top], cols[top]] = True
        fixed |= top
    if not np.any(fixed):
        return out
    mask = mask[:, fixed]
    w = mask.astype(np.float64)
    p, q, s = (a * a) @ w, (a * b) @ w, (b * b) @ w
    # p cos^2 + 2 q sin cos + s sin^2 = (p + s) / 2 + ((p - s) / 2) cos 2t + q sin 2t: its largest value on the arc
    # at an endpoint unless the arc (width < pi / 2 here: the first level's) holds that of the double angle
    half, R = 0.5 * (p + s), np.hypot(0.5 * (p - s), q)
    u1, u2 = 2 * t1[fixed], 2 * t2[fixed]
    g1 = half + 0.5 * (p - s) * np.cos(u1) + q * np.sin(u1)
    g2 = half + 0.5 * (p - s) * np.cos(u2) + q * np.sin(u2)
    scale = p + s
    tol = 8 * _EPS * scale
    cu1, su1, cu2, su2 = np.cos(u1), np.sin(u1), np.cos(u2), np.sin(u2)
    ca, cb = 0.5 * (p - s), q
    inside = ((cb * cu1 - ca * su1) >= -tol) & ((cb * cu2 - ca * su2) <= tol)
    g = np.where(inside, half + R, np.maximum(g1, g2))
    # (each sum of k products within k eps of the sum of |terms| <= scale; the angle terms within a few ulps)
    g = (g + 4 * (k + 8) * _EPS * scale) * (1 + 8 * _EPS)
    out[fixed] = np.minimum(out[fixed], g)
    return out


def opt2_upper(V: np.ndarray, k: int, rel: float = 1e-9, enough: float | None = None) -> tuple[float, float, dict]:
    """``(upper, lower, info)``: ``upper >= OPT_2`` of the n x 2 factor V at sparsity k (rigorous, module
    docstring), ``lower`` the best ``f`` found (``<= OPT_2`` up to rounding: a guide, not a bound), ``upper <=
    lower (1 + rel)`` unless stopped early: at ``enough`` (the search stops once ``lower >= enough``: a caller
    for which any value above it is of no use) or after ``_MAX_LEVELS`` levels.  ``info``: ``levels``,
    ``arcs`` (evaluated), ``stopped``."""
    V = np.asarray(V, dtype=np.float64)
    n = V.shape[0]
    k = int(min(max(k, 1), n))
    a, b = np.ascontiguousarray(V[:, 0]), np.ascontiguousarray(V[:, 1])
    r = np.hypot(a, b) * (1 + 2 * _EPS)
    slack = 4 * _EPS * (np.abs(a) + np.abs(b))
    edges = np.linspace(-np.pi, np.pi, _FIRST_ARCS + 1)
    t1, t2 = edges[:-1], edges[1:]
    settled, lower, arcs, stopped = -np.inf, -np.inf, 0, "rel"
    for level in range(_MAX_LEVELS):
        ub = _arc_bounds(a, b, r, slack, t1, t2, k)
        lower = max(lower, float(_centers(a, b, 0.5 * (t1 + t2), k).max()))
        arcs += t1.size
        open_ = ub > lower * (1 + rel)
        settled = max(settled, float(ub[~open_].max()) if np.any(~open_) else -np.inf)
        if not np.any(open_):
            break
        if enough is not None and lower >= enough:
            settled, stopped = max(settled, float(ub[open_].max())), "enough"
            break
        if level == _MAX_LEVELS - 1:
            settled, stopped = max(settled, float(ub[open_].max())), "levels"
            break
        t1, t2 = t1[open_], t2[open_]
        mid = 0.5 * (t1 + t2)
        t1, t2 = np.concatenate([t1, mid]), np.concatenate([mid, t2])
    return settled, lower, {"levels": level + 1, "arcs": arcs, "stopped": stopped}
