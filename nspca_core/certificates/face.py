"""The DNN dual's slack off its optimal face: a bound below the DNN's (issue 39, MLL k = 48..52).

For a DNN dual point (:mod:`.dnn`: ``N >= 0`` with a zero diagonal, ``mu >= 0``, cut weights ``w >= 0``)
and a rigorous ``lam >= lambda_max(M)``, ``M = A + N - mu J - sum_l w_l c_l c_l^T``, every unit
``y >= 0`` with at most i nonzeros satisfies (:func:`.dnn.dnn_tangent`'s proof, keeping what it drops)::

    y^T A y = lam - y^T P y - y^T N y + mu (1^T y)^2 + sum_l w_l (c_l^T y)^2
            <= tangent(i) - y^T P y,        P = lam I - M  (psd).

The DNN bound drops ``y^T P y >= 0``.  Where the relaxation's optimum is spread over more features than
i (MLL k = 51, |S| = 308: P's two smallest eigenvalues 0 and 2e-5 B_S, the third 0.126 B_S; its null
space holds a nonnegative vector on ~116 features and a mixed-sign one), no i-sparse nonnegative y lies
in P's near-null space V, so ``y^T P y`` is bounded below away from 0 — a combinatorial fact the DNN
(a convex relaxation: any Lagrangian bound of this form is again a DNN dual point) cannot see.

:func:`face_gains` proves, for every ``i <= imax``::

    y^T P y  >=  p (1 - U_i) + low          for every unit y >= 0 with ||y||_0 <= i,

with ``V`` (n x r, here r = 2) the computed eigenvectors of P's r smallest eigenvalues, ``p`` the next
computed eigenvalue, ``low`` a rigorous lower bound on ``lambda_min(P - p (I - V V^T))`` (:func:`_face_low`)
and ``U_i >= max ||V^T y||^2`` over the same y (:func:`max_projection`).  Proof: ``y^T P y = y^T R y +
p (||y||^2 - ||V^T y||^2)`` with ``R = P - p (I - V V^T)``, and ``y^T R y >= lambda_min(R)`` for a unit y.
So ``OPT_i <= tangent(i) - gain(i)`` with ``gain(i) = max(0, p (1 - U_i) + low)``.  Nothing needs V to be
exact eigenvectors (``low`` is computed for the V used), nor p an eigenvalue (``low`` absorbs it).

The projection (r = 2): ``||V^T y|| = max_{||theta|| = 1} (V theta)^T y`` and, for fixed ``u = V theta``,
``max_y u^T y = ||top_i(u_+)||`` (Cauchy-Schwarz on y's support, attained by y proportional to
u's i largest positive entries); so ``max_y ||V^T y|| = max_theta g_i(theta)`` with ``g_i(theta) =
||top_i((V theta)_+)||``, 1-Lipschitz in u (a max of unit linear functionals) and so ``||V||_2``-Lipschitz
in theta.  A grid of angles with spacing h leaves every theta within the chord ``h / 2`` of a grid point
of its interval, so on an interval ``g_i <= max(ends) + ||V||_2 h / 2``; intervals that may hold the
maximum are subdivided (:data:`_LEVELS` times by :data:`_SPLIT`), the rest keep their coarse bound.

The joint form
--------------
The tangent also bounds ``mu (1^T y)^2 <= mu i`` on its own, tight only at a y uniform on its support, while
the projection is largest at the top i of a vector of V: not the same y.  Kept together (y unit, i-sparse,
``y >= 0``; the cut terms still by ``beta_i``)::

    y^T A y <= lam - y^T P y + mu (1^T y)^2 + sum_l w_l beta_i(c_l)
            <= lam - p - low + sum_l w_l beta_i(c_l) + ||W^T y||^2,     W = [sqrt(p) V, sqrt(mu) 1],

since ``y^T P y >= p (1 - ||V^T y||^2) + low`` and ``||W^T y||^2 = p ||V^T y||^2 + mu (1^T y)^2``.  Its
maximum over y is again ``max_theta ||top_i((W theta)_+)||^2``, now on the sphere in R^3:
:func:`max_projection3` (a cube-face search with corner bounds).  Any convex relaxation would give back the
tangent here (the DNN's own optimum sits in V with ``1^T Z 1 = k``): only the rank-one, sparse y sees it.

MLL k = 51, |S| = 308, certify(51)'s S after the path's deep run (2 restarts): ``U_i`` 0.9914 at i = 51,
0.9836 at 46; gains 0.11% / 0.21% of B_S(51): S alone 0.9509 -> 0.9519, the coupled bound at 51
0.9465 -> 0.9484 (its binding term j = 5 of T, i = 46 of S).  With the joint form (gains 0.71% / 0.75%): S
alone 0.9577, the coupled bound 0.9530.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from .dnn import DnnState, assemble_dual, cut_rhs_all, dnn_tangent

_EPS = np.finfo(float).eps
# the near-null space's dimension (MLL k = 48..52: P's two smallest eigenvalues ~0, the third 0.126 B_S);
# the projection's bound is a search over the circle, exact up to the Lipschitz margin, for r = 2 only
_RANK = 2
# the angle grid: _GRID points on the circle, then _LEVELS subdivisions by _SPLIT of the intervals that
# may hold a maximum (final chord margin ||V|| pi / (_GRID _SPLIT^_LEVELS) ~ 6e-6 of g ~ 1)
_GRID = 512
_SPLIT = 32
_LEVELS = 2


def face_gains(A: np.ndarray, state: DnnState, lam: float, imax: int) -> np.ndarray:
    """``gain[i]`` for ``i = 0..imax`` (``gain[0] = 0``): rigorous lower bounds on ``y^T P y`` over unit
    ``y >= 0`` with at most i nonzeros, ``P = lam I - M`` of the dual point ``state`` on ``A`` (``lam`` a
    rigorous upper bound on ``lambda_max(M)``, :func:`.dnn.dnn_value_lam`), each ``>= 0``; so ``OPT_i(A)
    <= dnn_tangent(lam, state, n, i) - gain[i]`` (module docstring).  Zero where nothing is proved."""
    A = np.asarray(A, dtype=float)
    imax = int(min(imax, A.shape[0]))
    out = np.zeros(imax + 1)
    parts = _face_parts(A, state, float(lam), imax)
    if parts is None:
        return out
    _, pr, low, U = parts
    out[1:] = np.maximum(pr * np.maximum(1.0 - U[1:], 0.0) * (1 - 8 * _EPS) + low, 0.0)
    return out


def _face_parts(A: np.ndarray, state: DnnState, lam: float, imax: int):
    """``(V, p, low, U2)`` of the module docstring (None where there is no room: n <= 2, imax < 1, lam not
    finite, or p <= 0)."""
    n = A.shape[0]
    if n <= _RANK or imax < 1 or not np.isfinite(lam):
        return None
    M = assemble_dual(A, np.asarray(state.N, dtype=float), float(state.nu), state.C, state.w)
    P = -M
    P[np.diag_indices(n)] += float(lam)
    p, Q = scipy.linalg.eigh(P, subset_by_index=[0, _RANK], check_finite=False)
    V, pr = np.ascontiguousarray(Q[:, :_RANK]), float(p[_RANK])
    if not pr > 0:
        return None
    return V, pr, _face_low(A, state, float(lam), P, V, pr), max_projection(V, imax)


def _face_low(A: np.ndarray, state: DnnState, lam: float, P: np.ndarray, V: np.ndarray, pr: float) -> float:
    """A rigorous lower bound on ``lambda_min(P* - pr (I - V V^T))``, ``P* = lam I - M`` with M exact (not
    the assembled floats ``P`` came from): LAPACK's smallest eigenvalue of the assembled ``R`` less
    ``32 n eps (||R||_F + scale)``, ``scale`` covering the roundings of M's and R's assembly (as
    :func:`.dnn_lmax.lmax_upper`: the summed magnitudes' Frobenius norms, generously)."""
    n = A.shape[0]
    R = P - pr * (np.eye(n) - V @ V.T)
    lo = float(scipy.linalg.eigh(R, eigvals_only=True, subset_by_index=[0, 0], check_finite=False)[0])
    mu = float(state.nu) / n
    scale = float(np.linalg.norm(A) + np.linalg.norm(np.asarray(state.N, dtype=float)) + mu * n)
    if state.C is not None and state.w is not None:
        scale += float(np.asarray(state.w, dtype=float) @ (np.asarray(state.C, dtype=float) ** 2).sum(axis=0))
    scale += abs(lam) * np.sqrt(n) + float(np.linalg.norm(P)) + pr * (np.sqrt(n) + float(np.linalg.norm(V)) ** 2)
    return lo - 32.0 * n * _EPS * (float(np.linalg.norm(R)) + scale)


def max_projection(V: np.ndarray, imax: int) -> np.ndarray:
    """``U[i] >= max ||V^T y||^2`` over unit ``y >= 0`` with at most i nonzeros, ``i = 0..imax``, for V
    with two columns (module docstring: the circle search with its Lipschitz margin), rounded up."""
    V = np.asarray(V, dtype=float)
    n, r = V.shape
    if r != 2:
        raise ValueError("max_projection: V needs two columns")
    imax = int(min(imax, n))
    G = V.T @ V
    Lv = float(np.sqrt(np.abs(G).sum(axis=1).max() * (1 + 8 * _EPS))) * (1 + 4 * _EPS)  # ||V||_2 (Gershgorin)
    h = 2 * np.pi / _GRID
    starts = np.arange(_GRID) * h
    ends = _values(V, np.append(starts, 2 * np.pi), imax)  # g at every grid point, shape (G + 1, imax)
    lo_v, hi_v = ends[:-1], ends[1:]
    best = ends.max(axis=0)  # values at points: the maximum is at least this
    width = np.full(_GRID, h)
    bound = np.maximum(lo_v, hi_v) + Lv * width[:, None] / 2
    for _ in range(_LEVELS):
        hot = np.flatnonzero((bound > best[None, :]).any(axis=1))
        if hot.size == 0:
            break
        w2 = width[hot] / _SPLIT
        pts = (starts[hot][:, None] + w2[:, None] * np.arange(_SPLIT + 1)[None, :]).ravel()
        vals = _values(V, pts, imax).reshape(hot.size, _SPLIT + 1, imax)
        best = np.maximum(best, vals.max(axis=(0, 1)))
        sub = np.maximum(vals[:, :-1], vals[:, 1:]) + Lv * w2[:, None, None] / 2  # (hot, _SPLIT, imax)
        keep = np.setdiff1d(np.arange(starts.size), hot)
        starts = np.concatenate([starts[keep], (starts[hot][:, None] + w2[:, None] * np.arange(_SPLIT)).ravel()])
        width = np.concatenate([width[keep], np.repeat(w2, _SPLIT)])
        bound = np.concatenate([bound[keep], sub.reshape(-1, imax)])
    gmax = bound.max(axis=0) * (1 + 8 * (n + 8) * _EPS) + 8 * _EPS * float(np.abs(V).sum())
    U = np.zeros(imax + 1)
    U[1:] = np.minimum(gmax * gmax * (1 + 4 * _EPS), float(np.linalg.eigvalsh(G)[-1]) * (1 + 64 * _EPS) + 8 * _EPS)
    return U


def _values(V: np.ndarray, angles: np.ndarray, imax: int) -> np.ndarray:
    """``g_i(theta) = ||top_i((V theta)_+)||`` at each angle (rows) for ``i = 1..imax`` (columns)."""
    Uv = np.maximum(np.outer(np.cos(angles), V[:, 0]) + np.outer(np.sin(angles), V[:, 1]), 0.0)  # (angles, n)
    n = Uv.shape[1]
    if imax < n:
        Uv = -np.partition(-Uv, imax - 1, axis=1)[:, :imax]
    Uv = -np.sort(-Uv, axis=1)
    return np.sqrt(np.cumsum(Uv * Uv, axis=1)[:, :imax])


def face_bounds(A: np.ndarray, state: DnnState, lam: float, imax: int, imin: int = 1) -> np.ndarray:
    """``B[i]`` for ``i = 1..imax`` (index ``i - 1``), each a rigorous bound on ``OPT_i(A)`` at most the
    point's tangent: the smaller of ``tangent(i) - gain[i]`` (:func:`face_gains`) and, for ``imin <= i``, the
    joint form ``lam - p - low + sum_l w_l beta_i(c_l) + U3_i`` (module docstring, "The joint form"), rounded up."""
    A = np.asarray(A, dtype=float)
    n = A.shape[0]
    imax = int(min(imax, n))
    ks = np.arange(1, imax + 1)
    tan = dnn_tangent(float(lam), state, n, ks)
    parts = _face_parts(A, state, float(lam), imax)
    if parts is None:
        return tan
    V, pr, low, U2 = parts
    gain = np.maximum(pr * np.maximum(1.0 - U2[1:], 0.0) * (1 - 8 * _EPS) + low, 0.0)
    out = np.maximum(tan - gain, 0.0) * (1 + 2 * _EPS)
    lo = max(int(imin), 1)
    mu = float(state.nu) / n
    if lo <= imax and mu > 0:
        W = np.column_stack([np.sqrt(pr) * V, np.full(n, np.sqrt(mu))])
        U3 = max_projection3(W, lo, imax) * (1 + 16 * _EPS)  # (the square roots' rounding in W)
        cut = np.zeros(imax - lo + 1)
        if state.C is not None and state.w is not None and np.any(state.w > 0):
            w = np.asarray(state.w, dtype=float)
            cut = (w @ cut_rhs_all(state.C)[:, np.arange(lo, imax + 1) - 1]) * (1.0 + 4 * w.size * _EPS)
        terms = float(lam) - pr - low
        joint = terms + cut + U3
        joint = joint + 16 * _EPS * (abs(float(lam)) + pr + abs(low) + cut + U3)
        out[lo - 1:] = np.minimum(out[lo - 1:], np.maximum(joint, 0.0))
    return out


# the sphere search of max_projection3: each face of the cube [-1, 1]^3 cut into _CELLS0^2 squares, then the
# squares that may hold a maximum split in four, at most _CELLS_LEVELS times or until _CELLS_LIVE squares would be
# live (MLL k = 51, |S| = 308: 20,000 live squares, 0.7 CPU s, U3 within 0.5% of the best point found)
_CELLS0 = 16
_CELLS_LEVELS = 12
_CELLS_LIVE = 20000


def max_projection3(W: np.ndarray, imin: int, imax: int) -> np.ndarray:
    """``U[i - imin] >= max ||W^T y||^2`` over unit ``y >= 0`` with at most i nonzeros, ``i = imin..imax``,
    for W with three columns (any, not orthonormal).  ``||W^T y|| = max_theta ||top_i((W theta)_+)||`` over
    the unit sphere (as :func:`max_projection`); every unit theta is ``c / ||c||`` for c on the surface of the
    cube ``[-1, 1]^3``; on a square of a face, ``(W c)_l`` is linear in c, so at most its largest value at
    the square's four corners, and ``(W theta)_l_+ <= max(that, 0) / min ||c||`` over the square; the
    norm of the top i of those bounds ``g`` there (g is nondecreasing in each positive part).  Squares whose
    bound is at most the best value found at a square's centre (for every i) are dropped, the rest split;
    the answer is the larger of the best found and the live squares' bounds, squared and rounded up."""
    W = np.asarray(W, dtype=float)
    n = W.shape[0]
    if W.shape[1] != 3:
        raise ValueError("max_projection3: W needs three columns")
    imax = int(min(imax, n))
    imin = int(max(1, imin))
    faces = [(a, *[b for b in range(3) if b != a], s) for a in range(3) for s in (1.0, -1.0)]
    h = 2.0 / _CELLS0
    cu = -1 + h * (np.arange(_CELLS0) + 0.5)
    F, U0, V0 = (x.ravel() for x in np.meshgrid(np.arange(6), cu, cu, indexing="ij"))
    H = np.full(F.size, h)
    absrow = 8 * _EPS * np.abs(W).sum(axis=1) * 2.0  # (corner products' rounding, |c| <= sqrt 3 < 2 entrywise sums)
    best = None
    for level in range(_CELLS_LEVELS + 1):
        ax = np.array([faces[f][0] for f in F])
        bx = np.array([faces[f][1] for f in F])
        cx = np.array([faces[f][2] for f in F])
        sg = np.array([faces[f][3] for f in F])
        rows = np.arange(F.size)

        def points(u, v):
            C = np.zeros((F.size, 3))
            C[rows, ax], C[rows, bx], C[rows, cx] = sg, u, v
            return C

        ctr = points(U0, V0)
        ctr /= np.linalg.norm(ctr, axis=1)[:, None]
        found = _top_norms(ctr @ W.T, imin, imax).max(axis=0)
        best = found if best is None else np.maximum(best, found)
        hi = None
        for du in (-0.5, 0.5):
            for dv in (-0.5, 0.5):
                Y = points(U0 + du * H, V0 + dv * H) @ W.T
                hi = Y if hi is None else np.maximum(hi, Y)
        mu_, mv_ = np.maximum(np.abs(U0) - H / 2, 0.0), np.maximum(np.abs(V0) - H / 2, 0.0)
        cmin = np.sqrt(1 + mu_ * mu_ + mv_ * mv_) * (1 - 4 * _EPS)
        hi = (np.maximum(hi, 0.0) + absrow[None, :]) / cmin[:, None] * (1 + 8 * _EPS)
        ub = _top_norms(hi, imin, imax) * (1 + 8 * (n + 8) * _EPS)
        live = (ub > best[None, :]).any(axis=1)
        if level == _CELLS_LEVELS or 4 * int(live.sum()) > _CELLS_LIVE:
            top = np.maximum(best, ub[live].max(axis=0)) if live.any() else best
            return top * top * (1 + 4 * _EPS)
        F, U0, V0, H = F[live], U0[live], V0[live], H[live]
        q = H / 4
        F, H = np.repeat(F, 4), np.repeat(H / 2, 4)
        U0 = (U0[:, None] + np.array([-1.0, -1.0, 1.0, 1.0])[None, :] * q[:, None]).ravel()
        V0 = (V0[:, None] + np.array([-1.0, 1.0, -1.0, 1.0])[None, :] * q[:, None]).ravel()
    raise AssertionError("unreachable")


def _top_norms(Y: np.ndarray, imin: int, imax: int) -> np.ndarray:
    """``||top_i(y_+)||`` of each row y of Y for ``i = imin..imax`` (columns)."""
    Y = np.maximum(Y, 0.0)
    if imax < Y.shape[1]:
        Y = -np.partition(-Y, imax - 1, axis=1)[:, :imax]
    Y = -np.sort(-Y, axis=1)
    return np.sqrt(np.cumsum(Y * Y, axis=1)[:, imin - 1:imax])
