"""The constrained quadratic maximization (P_d) of Asteris et al. (2014), solved exactly.

``(P_d)``:  maximize ``c^T Q c`` over unit ``c`` in ``R^d`` with ``R c >= 0``.

In the spannogram algorithm ``Q = V_I^T V_I`` and ``R = V_I`` for a candidate
support ``I``: a feasible ``c`` gives the nonnegative ``x_I = V_I c / ||V_I c||``.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from .._common.validation import InputError, check_matrix, pow2_scale

__all__ = ["solve_pd", "pd2_geometry", "PD2Geometry"]

# Relative tolerances.  Feasibility of a unit ``c`` is tested on unit-normalized
# rows of R, so ``_FEAS_TOL`` is an angle-like slack (radians, roughly).
_FEAS_TOL = 1e-10
_ZERO_ROW_TOL = 1e-13
_RANK_TOL = 1e-12


def _validate(Q, R):
    Q = check_matrix(Q, "Q", square=True, symmetric=True)
    d = Q.shape[0]
    try:
        R_arr = np.asarray(R, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"`R` must be a numeric 2-D array with {d} columns; got {type(R).__name__}") from None
    if R_arr.ndim == 1 and R_arr.size == 0:
        R_arr = R_arr.reshape(0, d)
    if R_arr.ndim != 2 or R_arr.shape[1] != d:
        raise InputError(f"`R` must be a 2-D array with d={d} columns (one constraint r_i^T c >= 0 "
                         f"per row); got shape {R_arr.shape}")
    if R_arr.size and not np.isfinite(R_arr).all():
        raise InputError(f"`R` must be finite; got {int((~np.isfinite(R_arr)).sum())} NaN/inf value(s)")
    return Q, R_arr


def _clean_rows(R: np.ndarray) -> np.ndarray:
    """Unit-normalized, zero rows dropped (they constrain nothing), exact duplicates merged."""
    if R.shape[0] == 0:
        return R
    norms = np.linalg.norm(R, axis=1)
    scale = norms.max()
    keep = norms > _ZERO_ROW_TOL * scale if scale > 0 else np.zeros(R.shape[0], bool)
    Rn = R[keep] / norms[keep, None]
    if Rn.shape[0] > 1:
        Rn = np.unique(Rn, axis=0)
    return Rn


def _null_basis(rows: np.ndarray, d: int):
    """Orthonormal basis (d, d - j) of the null space of ``j`` independent rows, or None if dependent."""
    if rows.shape[0] == 0:
        return np.eye(d)
    _, s, Wt = np.linalg.svd(rows, full_matrices=True)
    j = rows.shape[0]
    if s[-1] <= _RANK_TOL * max(1.0, s[0]):
        return None
    return Wt[j:].T


def _candidates(Q: np.ndarray, Rn: np.ndarray):
    """All KKT candidates: (values (N,), unit vectors (N, d)).

    For every set ``J`` of at most d-1 linearly independent constraints, the
    top eigenvector of Q restricted to ``null(R_J)``, both signs.  Batched for
    the subset sizes whose restricted problem has a closed form.
    """
    d = Q.shape[0]
    k = Rn.shape[0]
    vals, vecs = [], []

    def add(cs):
        cs = np.asarray(cs, dtype=float).reshape(-1, d)
        nrm = np.linalg.norm(cs, axis=1)
        ok = nrm > 0
        cs = cs[ok] / nrm[ok, None]
        cs = np.concatenate([cs, -cs])
        vecs.append(cs)
        vals.append(np.einsum("ij,jk,ik->i", cs, Q, cs))

    # J = {}: the unconstrained top eigenvector.
    w, U = np.linalg.eigh(Q)
    add(U[:, -1])
    if k == 0 or d == 1:
        return np.concatenate(vals), np.concatenate(vecs)
    # |J| = d - 1: a one-dimensional null space (Alg. 4 for d = 2: the rotated normals).
    if d == 2:
        add(Rn @ np.array([[0.0, 1.0], [-1.0, 0.0]]))
    elif d == 3:
        i, j = np.triu_indices(k, 1)
        if i.size:
            cr = np.cross(Rn[i], Rn[j])
            nrm = np.linalg.norm(cr, axis=1)
            add(cr[nrm > _RANK_TOL])  # parallel pairs span a 1-D row space: covered by |J| = 1
        # |J| = 1: top eigenvector on each plane r_i^perp, batched 2x2 problems.
        B = plane_bases(Rn)  # (k, 3, 2)
        Qr = np.einsum("kia,ij,kjb->kab", B, Q, B)
        _, Ur = np.linalg.eigh(Qr)
        add(np.einsum("kia,ka->ki", B, Ur[:, :, -1]))
    else:
        for size in range(1, d):
            for J in combinations(range(k), size):
                Bj = _null_basis(Rn[list(J)], d)
                if Bj is None:
                    continue
                _, Ur = np.linalg.eigh(Bj.T @ Q @ Bj)
                add(Bj @ Ur[:, -1])
    return np.concatenate(vals), np.concatenate(vecs)


def plane_bases(N: np.ndarray) -> np.ndarray:
    """Orthonormal bases (k, 3, 2) of the planes orthogonal to unit rows of N (k, 3)."""
    # a helper axis not parallel to each normal
    axis = np.zeros_like(N)
    axis[np.arange(N.shape[0]), np.argmin(np.abs(N), axis=1)] = 1.0
    e1 = np.cross(N, axis)
    e1 /= np.linalg.norm(e1, axis=1, keepdims=True)
    e2 = np.cross(N, e1)
    return np.stack([e1, e2], axis=2)


def solve_pd_unscaled(Q: np.ndarray, R: np.ndarray, *, return_value: bool = False):
    """:func:`solve_pd` on clean input (validated, rows of R of comparable scale): no checks, no rescaling.

    With ``return_value``, ``(c, c^T Q c)`` (``(None, nan)`` for the cone ``{0}``)."""
    Rn = _clean_rows(R)
    vals, vecs = _candidates(Q, Rn)
    order = np.argsort(-vals, kind="stable")
    # Scan in decreasing value; the first feasible candidate is optimal.
    chunk = 64
    for start in range(0, order.size, chunk):
        idx = order[start:start + chunk]
        C = vecs[idx]
        if Rn.shape[0]:
            ok = (C @ Rn.T >= -_FEAS_TOL).all(axis=1)
        else:
            ok = np.ones(idx.size, bool)
        hit = np.flatnonzero(ok)
        if hit.size:
            c = C[hit[0]]
            return (c, float(vals[idx[hit[0]]])) if return_value else c
    return (None, float("nan")) if return_value else None


def solve_pd(Q, R):
    """Exactly solve ``max c^T Q c`` subject to ``||c|| = 1`` and ``R c >= 0``.

    Parameters
    ----------
    Q : array_like of shape (d, d)
        Symmetric (not necessarily PSD).
    R : array_like of shape (k, d)
        One linear constraint ``r_i^T c >= 0`` per row; ``k = 0`` is allowed
        (no constraint).  Zero rows constrain nothing.

    Returns
    -------
    c : ndarray of shape (d,) or None
        A unit maximizer (feasible up to a relative slack of 1e-10 on the
        unit-normalized rows), or None when only ``c = 0`` satisfies
        ``R c >= 0`` (the cone is ``{0}``).  Scale-free: ``Q`` and ``R`` are
        divided by powers of two first, so ``(a Q, b R)`` gives the same ``c``
        for all positive finite ``a``, ``b`` (up to the rounding of the scaled
        inputs themselves).

    Notes
    -----
    Asteris, Papailiopoulos & Dimakis (ICML 2014), Alg. 4 (d = 2) and Alg. 5
    (any d).  Let ``c*`` be an optimal point whose set ``J`` of active
    constraints has maximal rank.  Near ``c*`` all other constraints are
    slack, so ``c*`` is a local, hence global, maximizer of the Rayleigh
    quotient on the unit sphere of ``L = null(R_J)``: ``c* = B u`` with ``u`` a
    top eigenvector of ``B^T Q B`` (``B`` an orthonormal basis of L).  If that
    top eigenvalue were repeated and some constraint were slack at ``c*``,
    rotating ``c*`` inside the (constant-value) top eigenspace towards
    ``-c*`` would make a new, independent constraint active at an optimal
    point, contradicting maximality; so either the top eigenvector is unique
    up to sign, or ``R c* = 0`` and every top eigenvector on ``L = null(R)``
    is feasible.  Hence enumerating all sets J of at most d - 1 independent
    rows (``O(k^{d-1})`` of them), taking ``±`` the top eigenvector on
    ``null(R_J)``, and returning the best feasible one is exact, including
    for repeated eigenvalues, zero, parallel or antiparallel rows and cones
    with empty interior.  For d = 3 the ``|J| = 2`` candidates are batched
    cross products and the ``|J| = 1`` ones batched 2x2 eigenproblems.
    """
    Q, R = _validate(Q, R)
    return solve_pd_unscaled(*_unit_scale(Q, R))


def _unit_scale(Q: np.ndarray, R: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``Q`` and ``R`` divided by powers of two (exact) so that their largest entries are in
    ``[1, 2)``: (P_d) has the same maximizers, and no norm or product under- or overflows
    (row norms of R below ~1e-154 vanished, eigenvalues of Q near 1e308 overflowed)."""
    return Q / pow2_scale(Q), (R / pow2_scale(R) if R.size else R)


# --------------------------------------------------------------------------- d = 2 geometry


@dataclass(frozen=True, eq=False)
class PD2Geometry:
    """What the app draws for (P_2) on the unit circle ``c = (cos φ, sin φ)``.

    Angles are radians, ``φ`` measured counter-clockwise from the first axis
    and reported in ``(-π, π]``.

    Attributes
    ----------
    feasible : bool
        False when only ``c = 0`` satisfies ``R c >= 0``.
    feasible_arcs : list of (float, float)
        Closed arcs ``(phi1, phi2)`` of feasible unit vectors, each traversed
        counter-clockwise from ``phi1 in (-π, π]`` to ``phi2`` with
        ``phi1 <= phi2 < phi1 + 2π`` (``phi2`` may exceed π when the arc wraps;
        ``phi1 == phi2`` is a single feasible point; ``(-π, π)`` the whole
        circle).
    u1 : ndarray of shape (2,)
        Top eigenvector of Q, sign chosen so its angle is in ``(-π/2, π/2]``.
    u1_angle : float
    eigenvalues : ndarray of shape (2,)
        Eigenvalues of Q, descending.
    u1_feasible : bool
        True when ``u1`` or ``-u1`` is feasible (then it is optimal, Alg. 4).
    normals : ndarray of shape (k, 2)
        The rows of R.
    normal_angles : ndarray of shape (k,)
        Angle of each row (nan for zero rows).
    boundary_angles : ndarray of shape (k, 2)
        The two unit points where ``r_i^T c = 0`` (``normal_angle ± π/2``).
    active : ndarray of bool, shape (k,)
        Constraints active (``r_i^T c = 0``) at the optimum.
    grid_phi, grid_value : ndarray
        ``φ`` on a uniform grid of ``(-π, π]`` and ``c(φ)^T Q c(φ)``.
    c : ndarray of shape (2,) or None
        The optimum of :func:`solve_pd`.
    phi : float
        Its angle (nan if infeasible).
    value : float
        ``c^T Q c`` at the optimum (nan if infeasible).
    """

    feasible: bool
    feasible_arcs: list
    u1: np.ndarray
    u1_angle: float
    eigenvalues: np.ndarray
    u1_feasible: bool
    normals: np.ndarray
    normal_angles: np.ndarray
    boundary_angles: np.ndarray
    active: np.ndarray
    grid_phi: np.ndarray
    grid_value: np.ndarray
    c: np.ndarray | None
    phi: float
    value: float


def _wrap(phi):
    """Angles to (-π, π]."""
    out = np.mod(np.asarray(phi, dtype=float) + np.pi, 2 * np.pi) - np.pi
    return np.where(out <= -np.pi, out + 2 * np.pi, out)


def _feasible_arcs(R: np.ndarray) -> list:
    """Closed feasible arcs of {φ : R c(φ) >= 0}."""
    Rn = _clean_rows(R)
    if Rn.shape[0] == 0:
        return [(float(-np.pi), float(np.pi))]
    theta = np.arctan2(Rn[:, 1], Rn[:, 0])
    bounds = np.unique(_wrap(np.concatenate([theta + np.pi / 2, theta - np.pi / 2])))

    def feas(phi):
        c = np.stack([np.cos(phi), np.sin(phi)], axis=-1)
        return (c @ Rn.T >= -_FEAS_TOL).all(axis=-1)

    nxt = np.append(bounds[1:], bounds[0] + 2 * np.pi)
    mid_ok = feas(0.5 * (bounds + nxt))
    pt_ok = feas(bounds)
    arcs = []
    nb = bounds.size
    if mid_ok.all():  # cannot happen with a nonzero row, kept for safety
        return [(float(-np.pi), float(np.pi))]
    # start at a gap that is infeasible so that arcs do not straddle the start
    start = int(np.flatnonzero(~mid_ok)[0]) + 1
    i = 0
    while i < nb:
        b = (start + i) % nb
        if mid_ok[b]:
            j = i
            while j + 1 < nb and mid_ok[(start + j + 1) % nb]:
                j += 1
            phi1 = bounds[b]
            e = (start + j) % nb
            phi2 = nxt[e]
            span = (phi2 - phi1) % (2 * np.pi)
            arcs.append((float(phi1), float(phi1 + span)))
            i = j + 1
        else:
            if pt_ok[b] and not mid_ok[(start + i - 1) % nb]:
                arcs.append((float(bounds[b]), float(bounds[b])))
            i += 1
    return arcs


def pd2_geometry(Q, R, *, grid: int = 721) -> PD2Geometry:
    """The d = 2 picture of (P_2): feasible arcs, ``u1``, active constraints, the objective.

    Parameters
    ----------
    Q : array_like of shape (2, 2), symmetric
    R : array_like of shape (k, 2)
    grid : int, default 721
        Number of points of the objective curve over ``(-π, π]``.

    Returns
    -------
    PD2Geometry
        See its docstring for the angle convention (``c = (cos φ, sin φ)``,
        ``φ`` in ``(-π, π]``, arcs counter-clockwise).

    Notes
    -----
    Each constraint ``r_i^T c >= 0`` keeps the closed half circle
    ``[θ_i - π/2, θ_i + π/2]``; the feasible set is their intersection, a
    single arc, two antipodal points (``r`` and ``-r`` only) or empty.  The
    maximum of ``c^T Q c`` is at ``±u_1`` when feasible, otherwise at an arc
    end (Alg. 4 of Asteris et al. 2014).
    """
    Q, R = _validate(Q, R)
    if Q.shape[0] != 2:
        raise InputError(f"`Q` must be 2 x 2 for pd2_geometry (d = 2); got shape {Q.shape}")
    if isinstance(grid, bool) or not isinstance(grid, (int, np.integer)) or grid < 3:
        raise InputError(f"`grid` must be an int >= 3; got {grid!r}")
    w, U = np.linalg.eigh(Q)
    u1 = U[:, -1].copy()
    ang = float(np.arctan2(u1[1], u1[0]))
    if ang <= -np.pi / 2 or ang > np.pi / 2:
        u1 = -u1
        ang = float(np.arctan2(u1[1], u1[0]))
    Qs, Rs = _unit_scale(Q, R)  # the geometry of R is that of R / 2^j: no norm under- or overflows
    Rn = _clean_rows(Rs)
    u1_feasible = bool(Rn.shape[0] == 0 or (Rn @ u1 >= -_FEAS_TOL).all() or (Rn @ -u1 >= -_FEAS_TOL).all())
    c = solve_pd_unscaled(Qs, Rs)
    value = float(c @ Q @ c) if c is not None else float("nan")
    norms = np.linalg.norm(Rs, axis=1) if R.shape[0] else np.zeros(0)
    with np.errstate(invalid="ignore"):
        theta = np.where(norms > 0, np.arctan2(R[:, 1], R[:, 0]) if R.shape[0] else 0.0, np.nan)
    boundary = np.stack([_wrap(theta - np.pi / 2), _wrap(theta + np.pi / 2)], axis=1) if R.shape[0] \
        else np.zeros((0, 2))
    if c is not None and R.shape[0]:
        active = (norms > 0) & (np.abs(Rs @ c) <= _FEAS_TOL * np.maximum(norms, 1e-300) * 10)
    else:
        active = np.zeros(R.shape[0], bool)
    phis = np.linspace(-np.pi, np.pi, grid + 1)[1:]
    C = np.stack([np.cos(phis), np.sin(phis)], axis=1)
    gv = np.einsum("ij,jk,ik->i", C, Q, C)
    return PD2Geometry(
        feasible=c is not None,
        feasible_arcs=_feasible_arcs(Rs) if c is not None else [],
        u1=u1, u1_angle=ang, eigenvalues=w[::-1].copy(), u1_feasible=u1_feasible,
        normals=R, normal_angles=theta, boundary_angles=boundary, active=active,
        grid_phi=phis, grid_value=gv, c=c,
        phi=float(np.arctan2(c[1], c[0])) if c is not None else float("nan"),
        value=float(value),
    )
