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
_FIRST_ARCS = 16
# at most this many levels (each halves the open arcs' width): 2^-44 of the circle is far below any rel
_MAX_LEVELS = 40


def _top_sums(P: np.ndarray, k: int) -> np.ndarray:
    """The sum of the k largest entries of each row of ``P`` (M, n), in float64."""
    n = P.shape[1]
    if k < n:
        P = np.partition(P, n - k, axis=1)[:, n - k:]
    return P.sum(axis=1)


def _values(a, b, c, s) -> np.ndarray:
    """``a cos + b sin`` at each angle (rows) for each entry (columns): (M, n)."""
    return np.multiply.outer(c, a) + np.multiply.outer(s, b)


def _centers(a, b, theta: np.ndarray, k: int) -> np.ndarray:
    """``f`` at the angles ``theta`` (plain float: only the search's guide and the lower value)."""
    u = _values(a, b, np.cos(theta), np.sin(theta))
    np.maximum(u, 0.0, out=u)
    return _top_sums(u * u, k)


def _in_arc(a, b, slack, c1, s1, c2, s2) -> np.ndarray:
    """Whether the arc may hold the maximum of ``a cos + b sin`` (its derivative ``b cos - a sin`` >= 0 at the
    start, <= 0 at the end, each widened by ``slack``: an arc in doubt counts as holding it)."""
    return (_values(b, -a, c1, s1) >= -slack) & (_values(b, -a, c2, s2) <= slack)


def _fixed_supports(h: np.ndarray, lo: np.ndarray, k: int):
    """For regions (rows) whose entries lie within ``[lo, h]`` (M, n) all over the region: ``(out, mask, fixed,
    kth)``, ``out`` each region's bound on f (the sum of the k largest ``max(h, 0)^2``, rounding covered), ``fixed``
    the regions where f's support cannot change, ``mask`` (M, n) that support there, ``kth`` each region's k-th
    largest smallest value (-inf where k >= n).  Written once for :func:`_arc_bounds` and
    :func:`.caps._patch_bounds` (``h`` is overwritten)."""
    M, n = h.shape
    hp = np.maximum(h, 0.0)
    out = _top_sums(hp * hp, k) * (1 + 4 * (k + 4) * _EPS)
    # the regions where f's support cannot change, J (a mask): (1) the entries positive all over the region, at
    # most k of them, every other entry <= 0 all over it; (2) the k largest smallest values, each above 0 and above
    # the rest's largest values
    mask = lo > 0
    fixed = (mask.sum(axis=1) <= k) & np.all(mask | (h <= 0), axis=1)
    kth = np.full(M, -np.inf)
    if k < n:
        J = np.argpartition(lo, n - k, axis=1)[:, n - k:]
        rows = np.arange(M)[:, None]
        kth = lo[rows, J].min(axis=1)
        h[rows, J] = -np.inf
        top = ~fixed & (kth > 0) & (h.max(axis=1) <= kth)
        mask[top] = False
        mask[rows[top], J[top]] = True
        fixed |= top
    return out, mask, fixed, kth


def _arc_bounds(a, b, r, slack, t1: np.ndarray, t2: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The rigorous bound of ``f`` on each arc ``[t1_j, t2_j]`` (module docstring), and where the arc's top k
    cannot change (its k entries' smallest values above every other entry's largest and above 0) the largest
    value of their sum of squares over the arc, which is ``f`` there exactly (a sinusoid in ``2 theta``).  Also
    each arc's k-th largest smallest value (-inf where k >= n): on any part of the arc, the entries of a largest
    value below it are outside the top k."""
    c1, s1, c2, s2 = np.cos(t1), np.sin(t1), np.cos(t2), np.sin(t2)
    e1, e2 = _values(a, b, c1, s1), _values(a, b, c2, s2)
    h, lo = np.maximum(e1, e2), np.minimum(e1, e2)
    np.copyto(h, np.broadcast_to(r, h.shape), where=_in_arc(a, b, slack, c1, s1, c2, s2))
    np.copyto(lo, np.broadcast_to(-r, lo.shape), where=_in_arc(-a, -b, slack, c1, s1, c2, s2))
    h += 2 * slack
    lo -= 2 * slack
    out, mask, fixed, kth = _fixed_supports(h, lo, k)
    if not np.any(fixed):
        return out, kth
    w = mask[fixed].astype(np.float64)
    p, q, s = w @ (a * a), w @ (a * b), w @ (b * b)
    # p cos^2 + 2 q sin cos + s sin^2 = (p + s) / 2 + ((p - s) / 2) cos 2t + q sin 2t: its largest value on the arc
    # at an endpoint unless the arc (width < pi / 2: no wider than the first level's) holds that of the double
    # angle
    half, R = 0.5 * (p + s), np.hypot(0.5 * (p - s), q)
    u1, u2 = 2 * t1[fixed], 2 * t2[fixed]
    cu1, su1, cu2, su2 = np.cos(u1), np.sin(u1), np.cos(u2), np.sin(u2)
    ca, cb = 0.5 * (p - s), q
    g1, g2 = half + ca * cu1 + cb * su1, half + ca * cu2 + cb * su2
    scale = p + s
    tol = 8 * _EPS * scale
    inside = ((cb * cu1 - ca * su1) >= -tol) & ((cb * cu2 - ca * su2) <= tol)
    g = np.where(inside, half + R, np.maximum(g1, g2))
    # (each sum of k products within k eps of the sum of |terms| <= scale; the angle terms within a few ulps)
    g = (g + 4 * (k + 8) * _EPS * scale) * (1 + 8 * _EPS)
    out[fixed] = np.minimum(out[fixed], g)
    return out, kth


def opt2_upper(V: np.ndarray, k: int, rel: float = 1e-9, enough: float | None = None) -> tuple[float, float, dict]:
    """``(upper, lower, info)``: ``upper >= OPT_2`` of the n x 2 factor V at sparsity k (rigorous, module
    docstring), ``lower`` the best ``f`` found (``<= OPT_2`` up to rounding: a guide, not a bound), ``upper <=
    lower (1 + rel)`` unless stopped early: at ``enough`` (the search stops once ``lower >= enough``: a caller
    for which any value above it is of no use) or after ``_MAX_LEVELS`` levels.  ``info``: ``levels``,
    ``arcs`` (evaluated), ``rows`` (left after the screen), ``stopped``.

    The screen: after each level the entries whose largest value anywhere (``r_i``) is below the k-th largest
    smallest value of every open arc are dropped (on each open arc and every part of it, k entries stay at or
    above that value, so a dropped entry is in no top k: neither a sum nor a fixed support changes)."""
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
        ub, kth = _arc_bounds(a, b, r, slack, t1, t2, k)
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
        keep = r >= kth[open_].min()
        if keep.sum() < a.size:
            a, b, r, slack = a[keep], b[keep], r[keep], slack[keep]
        t1, t2 = t1[open_], t2[open_]
        mid = 0.5 * (t1 + t2)
        t1, t2 = np.concatenate([t1, mid]), np.concatenate([mid, t2])
    return settled, lower, {"levels": level + 1, "arcs": arcs, "rows": int(a.size), "stopped": stopped}
