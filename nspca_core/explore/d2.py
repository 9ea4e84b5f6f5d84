"""The spannogram of a rank-2 factor: curves, crossings and candidate supports (Alg. 2)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._common.validation import check_int
from .supports import CandidateSupports, _check_factor, _flags, _grid, _support_ids, _support_points, _tol

__all__ = ["SpannogramD2", "spannogram_curves_d2"]


@dataclass(frozen=True, eq=False, kw_only=True)
class SpannogramD2(CandidateSupports):
    """The spannogram of a rank-2 factor (:func:`spannogram_curves_d2`).

    Directions are ``c(φ) = (sin φ, cos φ)`` for ``φ`` in ``(-π/2, π/2]`` (``±c``
    give the same candidates, so half the circle suffices).

    Attributes
    ----------
    phi : ndarray (G,)
        The grid of angles, increasing, ending at ``π/2``.
    curves : ndarray (n + 1, G)
        ``v_i(φ) = V_i1 sin φ + V_i2 cos φ`` for every row ``i < n``; row ``n``
        is the zero curve (all zeros), the extra row of Alg. 2.
    envelope_pos, envelope_neg : ndarray (G,)
        The k-th largest of ``v(φ)`` and of ``-v(φ)`` over the n rows (the
        k-th order curves; the support ``I_k^+(±v)`` is the rows at or above
        it and at or above zero).
    support_pos, support_neg : ndarray of int (G,)
        Index into ``supports`` of ``I_k^+(v(φ))`` and ``I_k^+(-v(φ))`` at each
        grid angle.
    intersections_phi, intersections_value : ndarray (P,)
        Every isolated crossing of two curves (pairs of distinct rows,
        including the zero curve): its angle in ``(-π/2, π/2]`` and the common
        value.  Identical rows (curves that coincide everywhere) are skipped.
    intersections_i, intersections_j : ndarray of int (P,)
        The two rows crossing, ``i < j``; ``j == n`` means the zero curve.
    changes_pos, changes_neg : ndarray of bool (P,)
        True where the candidate support ``I_k^+(v)`` (resp. ``I_k^+(-v)``)
        changes at that crossing: the tie straddles the k-th order (among
        nonnegative values) or a support row crosses zero.
    changes : ndarray of bool (P,)
        ``changes_pos | changes_neg``.
    supports : list of ndarray of int
        The distinct candidate supports (sorted indices) met on the grid and
        between consecutive changing crossings.
    support_values : ndarray (S,)
        ``||V^T x||^2`` of the point built from each support as in Alg. 1:
        ``x_I = V_I c / ||V_I c||`` with ``c`` solving
        ``(P_d): max ||V_I c||^2 s.t. ||c|| = 1, V_I c >= 0``.
    support_x : ndarray (S, n)
        Those points (nonnegative, unit norm, supported in the support).
    support_exact : ndarray of bool (S,)
        True where (P_d) was solved exactly.  Elsewhere the value is that of
        the rank-1 point of a direction generating the support (a feasible
        value, possibly below Alg. 1's), and the support is proven not better
        than the optimum (``λ_max(V_I^T V_I) <= optimum_value``), so the
        optimum is always exact.
    optimum_id : int
        Index of the best support; ``optimum_value`` and ``optimum_x`` are
        its value and point.  Besides the grid, one angle inside every arc
        between consecutive changing crossings is evaluated, so every
        candidate support is listed (in general position) and this is
        ``OPT_2``, checked against brute force in the tests.
    k, n : int
    info : dict
        ``pd_solver`` ("solve_pd" or "closed-form"), grid size, counts.
    """

    phi: np.ndarray
    curves: np.ndarray
    envelope_pos: np.ndarray
    envelope_neg: np.ndarray
    support_pos: np.ndarray
    support_neg: np.ndarray
    intersections_phi: np.ndarray
    intersections_value: np.ndarray
    intersections_i: np.ndarray
    intersections_j: np.ndarray
    changes_pos: np.ndarray
    changes_neg: np.ndarray
    changes: np.ndarray


# ----------------------------------------------------------------------------- d = 2
def spannogram_curves_d2(V, k, *, num=721) -> SpannogramD2:
    """Spannogram curves, k-th order envelopes, crossings and candidate supports for d = 2.

    Parameters
    ----------
    V : array_like of shape (n, 2)
        Rank-2 factor (``A_2 = V V^T``).
    k : int in [1, n]
    num : int >= 2, default 721
        Number of grid angles in ``(-π/2, π/2]``.

    Returns
    -------
    SpannogramD2
        See its docstring for every field.

    Notes
    -----
    Asteris, Papailiopoulos & Dimakis, ICML 2014, §3.2 and Fig. 1: with
    ``c(φ) = (sin φ, cos φ)`` each row is a sinusoid ``v_i(φ)``; the candidate
    support ``I_k^+(v(φ))`` is constant between consecutive crossings of the
    k-th order curve, and changes only at crossings of two curves at the k-th
    order or of a curve with zero.  Crossings are computed exactly: rows i, j
    meet where ``(V_i - V_j)·c(φ) = 0``, i.e. ``tan φ = -b/a`` for
    ``(a, b) = V_i - V_j`` (``φ = π/2`` when ``a = 0``).  There are
    ``C(n+1, 2)`` of them.  Support values use
    :func:`nspca_core.solve_pd` when available, else an exact closed form
    (the best feasible KKT point of (P_2)).
    """
    V, k = _check_factor(V, k, 2, "the d=2 spannogram")
    n = V.shape[0]
    num = check_int(num, "num", 2)
    phi = _grid(num)
    Cg = np.vstack([np.sin(phi), np.cos(phi)])  # (2, G)
    P = V @ Cg  # (n, G)
    curves = np.vstack([P, np.zeros((1, num))])
    # k-th largest of +v and of -v along the grid
    env_pos = -np.partition(-P, k - 1, axis=0)[k - 1]
    env_neg = -np.partition(P, k - 1, axis=0)[k - 1]
    # crossings of every pair of the n + 1 curves (row n = zero curve)
    W = np.vstack([V, np.zeros((1, 2))])
    ii, jj = np.triu_indices(n + 1, 1)
    D = W[ii] - W[jj]
    a, b = D[:, 0], D[:, 1]
    tol = _tol(V)
    keep = (np.abs(a) > tol) | (np.abs(b) > tol)  # identical rows never cross in isolation
    ii, jj, a, b = ii[keep], jj[keep], a[keep], b[keep]
    with np.errstate(divide="ignore", invalid="ignore"):
        ph = np.where(np.abs(a) > 0, np.arctan(-b / np.where(a != 0, a, 1.0)), np.pi / 2)
    ph = np.where(ph <= -np.pi / 2, np.pi / 2, ph)
    cvec = np.vstack([np.sin(ph), np.cos(ph)])
    val = np.einsum("pj,jp->p", W[ii], cvec)
    # nearest grid angle (within one step δ = π/num; ||c(φ) - c(φ')|| <= |φ - φ'|)
    gi = np.clip(np.rint((ph + np.pi / 2) * num / np.pi).astype(int) - 1, 0, num - 1)
    band = 1.01 * float(np.linalg.norm(V, axis=1).max(initial=0.0)) * np.pi / num
    ch_pos, ch_neg = _flags(V, cvec, val, k, tol, env_pos[gi], env_neg[gi], band)
    order = np.lexsort((jj, ii, ph))
    # the support is constant between consecutive changing crossings: one point inside each
    # such arc (besides the grid) makes the list of supports complete in general position
    cut = np.unique(ph[ch_pos | ch_neg])
    if cut.size:
        nxt = np.append(cut[1:], cut[0] + np.pi)
        mids = 0.5 * (cut + nxt)
        Pm = V @ np.vstack([np.sin(mids), np.cos(mids)])
    else:
        Pm = np.zeros((n, 0))
    Pall = np.hstack([P, Pm])
    ids_pos, ids_neg, supports, rep = _support_ids([P, Pm], k)
    ids_pos, ids_neg = ids_pos[:num], ids_neg[:num]
    X, vals, exact, solver = _support_points(V, supports, Pall, rep)
    best = int(np.argmax(vals))
    return SpannogramD2(
        phi=phi, curves=curves, envelope_pos=env_pos, envelope_neg=env_neg,
        support_pos=ids_pos, support_neg=ids_neg,
        intersections_phi=ph[order], intersections_value=val[order],
        intersections_i=ii[order], intersections_j=jj[order],
        changes_pos=ch_pos[order], changes_neg=ch_neg[order], changes=(ch_pos | ch_neg)[order],
        supports=supports, support_values=vals, support_x=X, support_exact=exact,
        optimum_id=best, optimum_value=float(vals[best]), optimum_x=X[best], k=k, n=n,
        info={"pd_solver": solver, "num": num, "n_supports": len(supports),
              "n_intersections": int(ph.size), "n_changes": int((ch_pos | ch_neg).sum())},
    )
