"""The public entry points: candidate supports, their evaluation by (P_d), lowrank_nspca."""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from .._common.params import check, in_interval
from .._common.points import point_result
from .._common.validation import pow2_scale
from ..result import Result
from ._common import _FEAS_TOL, _FILTER_MIN_ROWS, _FULL_MIN_ROWS, _SWEEP_MIN_ROWS, _check_V, _Reduced
from .budget import check_budget
from .constrained import plane_bases, solve_pd_unscaled
from .enumerate import _supports_enumerate
from .full import _opt_nonneg_full
from .patches import _ascent_lower_bound, _supports_patches
from .sweep import _SCREEN_MIN_ROWS, _screen_rows_d2, _screen_rows_d3, _supports_sweep


def _candidate_set(V: np.ndarray, k: int, *, method: str = "auto", callback=None, optimum_only=False,
                   max_candidates=None):
    """(reduction, candidate cells, path).  ``optimum_only``: a subset that still holds an
    optimal support (value pruning, d = 3 with many rows), for :func:`lowrank_nspca` only.
    An enumeration at rank >= 4 above ``max_candidates`` cells is refused before any work."""
    red = _Reduced(V)
    if red.empty:
        return red, set(), "empty"
    check_budget(red.m, red.r, k, max_candidates)
    if red.r == 3 and (method == "prune" or (optimum_only and method == "auto" and red.m >= _FILTER_MIN_ROWS)):
        lower = _ascent_lower_bound(red.U, red.mu, k)
        return red, _supports_patches(red, k, callback, lower=lower), "pruned"
    if red.r == 3 and method == "patches":
        return red, _supports_patches(red, k, callback), "enumerate"
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


def candidate_supports(V, k, *, max_candidates=None) -> list:
    """The candidate supports ``S_d`` of Alg. 2 (Asteris et al. 2014), exact for every V.

    Parameters
    ----------
    V : array_like of shape (n, d)
        Any real matrix (ties, zero, duplicated or dependent rows allowed).
    k : int in [1, n]
    max_candidates : int, optional
        At rank d >= 4, refuse (:class:`InputError`, before any work) an
        enumeration of more candidate cells than this (default
        :data:`nspca_core.spannogram.MAX_CANDIDATES`, 10^7); the message gives
        the counts, the time and the memory estimated
        (:func:`nspca_core.spannogram.enumeration_cost`).

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
    k = check("k", k, n_features=V.shape[0])
    red, cands, _ = _candidate_set(V / pow2_scale(V), k, max_candidates=max_candidates)  # scale-free
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

    nr = np.linalg.norm(r, axis=1)
    out = np.linalg.eigvalsh(M)[:, -1].copy()
    ok = nr > 0
    if ok.any():
        B = plane_bases(r[ok] / nr[ok, None])  # (N, 3, 2)
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
        cj, val = solve_pd_unscaled(Q, Rn[active], return_value=True)
        if cj is None or val <= floor * (1 + 1e-12):
            return None
        s = Rn @ cj
        worst = int(np.argmin(s))
        if s[worst] >= -_FEAS_TOL:
            return cj
        if worst in active or len(active) >= Rn.shape[0]:  # rounding: fall back to the full solver
            return solve_pd_unscaled(Q, R)
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


def lowrank_nspca(V, k, *, callback=None, max_candidates=None) -> Result:
    """Exact ``argmax_{x in S_k^n} ||V^T x||^2`` (Alg. 1 of Asteris et al. 2014).

    Parameters
    ----------
    V : array_like of shape (n, d)
        Rank-d factor (``A_d = V V^T``), e.g. from :func:`nspca_core.lowrank_factor`.
    k : int in [1, n]
    callback : callable, optional
        ``callback(done, total)`` while candidates are enumerated.
    max_candidates : int, optional
        At rank d >= 4 (all d-subsets of rows are enumerated, ``2 d! C(n+1, d)``
        candidate cells), refuse with :class:`InputError` before any work when
        the cells exceed this; default :data:`nspca_core.spannogram.MAX_CANDIDATES`
        (10^7, a module constant that ``fit(method="spannogram")`` uses).  The
        message gives the counts and the estimated time and memory, and what to
        use instead (a smaller d, ``method="enet"`` or ``"auto"``).

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
    k = check("k", k, n_features=n)
    # scale-free: the search runs on V / 2^j with max|V / 2^j| in [1, 2) (exact), so no
    # product of entries under- or overflows (d = 3 failed below ~1e-81, above ~1e76)
    if max_candidates is not None:
        in_interval(max_candidates, "max_candidates", 1, kind="int")
    s = pow2_scale(V)
    return _scale_values(_lowrank(V / s, k, callback=callback, t0=t0, max_candidates=max_candidates), s * s)


def _scale_values(r: Result, factor: float) -> Result:
    """``r`` with ``variance`` and ``variance_lowrank`` multiplied by ``factor`` (a power of 2:
    exact unless it overflows, which it then does to inf as the true value would)."""
    import dataclasses

    if factor == 1.0:
        return r
    with np.errstate(over="ignore", under="ignore"):
        var, low = np.float64(r.variance) * factor, np.float64(r.variance_lowrank) * factor
    return dataclasses.replace(r, variance=float(var), variance_lowrank=float(low))


def _lowrank(V, k, *, callback=None, t0=None, method="auto", screen=True, max_candidates=None):
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
            return point_result(x, val, method="spannogram", params={"k": k, "d": d}, t0=t0,
                                info={"candidates": 0, "pd_solves": 0, "path": "full-nonneg"})
        if method == "full":
            method = "auto"
    if screen and d in (2, 3) and n >= _SCREEN_MIN_ROWS and method == "auto":
        rows = _screen_rows_d2(V, k) if d == 2 else _screen_rows_d3(V, k)
        if rows.size < n:  # solve on the rows that can be in a top-k set; the rest stay zero
            r = _lowrank(V[rows], min(k, rows.size), callback=callback, t0=t0, screen=False,
                         max_candidates=max_candidates)
            x = np.zeros(n)
            x[rows] = r.x
            return replace(r, x=x, support=rows[r.support],
                           info={**r.info, "screened_rows": int(rows.size)})
    red, cands, path = _candidate_set(V, k, method=method, callback=callback, optimum_only=True,
                                      max_candidates=max_candidates)
    supports = _expand_all(red, cands) if cands else []
    if not supports:
        x = np.zeros(n)
        x[0] = 1.0
        val, solves = float(np.sum(V[0] ** 2)), 0
    else:
        val, x, solves = _evaluate(V, supports)
    return point_result(x, val, method="spannogram", params={"k": k, "d": d}, t0=t0,
                        info={"candidates": len(supports), "pd_solves": solves, "path": path})
