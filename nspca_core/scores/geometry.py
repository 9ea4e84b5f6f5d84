"""The pieces of the rotation search of :mod:`nspca_core.scores.descent`.

Validation and whitening of the data, the geodesics ``t -> e^{tL} B`` on the
rotations (skew coordinates ℓ), the descent directions (the paper's and the
trust-region LP models), the negativity objective and the line search.  The
nonnegative-ICA peer (:mod:`nspca_core.scores.compare`) shares the whitening,
the output assembly and the geodesics.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import expm
from scipy.optimize import linprog, minimize_scalar

from .._common.validation import InputError, check_int, check_matrix


# --------------------------------------------------------------------------- validation

def _check_Y(Y, n_components):
    """Validate the data matrix and return (Y, r)."""
    Y = check_matrix(Y, "Y", min_rows=2)
    n, p = Y.shape
    if p > n:
        raise InputError(f"`Y` must have at least as many samples (rows) as variables (columns), "
                         f"n >= p; got n={n}, p={p} (transpose it if rows are variables)")
    r = p if n_components is None else check_int(n_components, "n_components", 1, p)
    return Y, r


def _whiten(Y: np.ndarray, r: int):
    """Sample covariance (1/(n-1)) and its whitener.

    Returns ``(cov, M, C)`` with ``M`` (r x p) such that ``M cov Mᵀ = I`` and
    ``C = cov Mᵀ`` (p x r) so that ``Â = C Bᵀ``.  When ``r = p``, ``M = Σ̂^{-1/2}``
    (the symmetric root, the paper's choice, so the descent starts at ``B = I``
    on ``Σ̂^{-1/2} Y``); when ``r < p``, ``M = Λ_r^{-1/2} V_rᵀ`` on the top r
    eigenpairs.
    """
    n, p = Y.shape
    cov = np.cov(Y, rowvar=False, ddof=1).reshape(p, p)
    evals, evecs = np.linalg.eigh(cov)
    evals, evecs = evals[::-1], evecs[:, ::-1]
    top = float(evals[0])
    # relative floor: below it Σ̂^{-1/2} amplifies rounding noise into whole components
    floor = 1e-10 * max(top, np.finfo(float).tiny)
    if top <= 0 or evals[r - 1] <= floor:
        raise InputError(f"the sample covariance of `Y` must be nonsingular on the {r} requested "
                         f"component(s); got eigenvalue {r} = {evals[r - 1]:.3g} <= 1e-10 x largest "
                         f"({top:.3g}): drop collinear/constant columns or lower `n_components`")
    if r == p:
        M = (evecs / np.sqrt(evals)) @ evecs.T
        M = 0.5 * (M + M.T)
        C = (evecs * np.sqrt(evals)) @ evecs.T
        C = 0.5 * (C + C.T)
    else:
        V, lam = evecs[:, :r], evals[:r]
        M = (V / np.sqrt(lam)).T
        C = V * np.sqrt(lam)
    return cov, M, C


def _assemble(U, C, B):
    """Order components by λ̂ and build (A, D, W, lambdas, B, sources, order)."""
    Xs = U @ B.T
    A = C @ B.T
    lambdas = np.einsum("ij,ij->j", A, A)
    order = np.argsort(-lambdas, kind="stable")
    A, Xs, lambdas, Bo = A[:, order], Xs[:, order], lambdas[order], B[order]
    root = np.sqrt(lambdas)
    return A, A / root, Xs * root, lambdas, Bo, Xs, order


# --------------------------------------------------------------------------- geometry

def _pairs(r: int):
    """Index pairs (a < b): coordinates ℓ of a skew matrix, ``L[a,b] = ℓ, L[b,a] = -ℓ``."""
    a, b = np.triu_indices(r, 1)
    return a, b


def _skew(ell, r, pairs):
    L = np.zeros((r, r))
    L[pairs] = ell
    return L - L.T


def _geodesic(L, B, t):
    """``P(t) = e^{tL} P₀`` with ``scipy.linalg.expm`` (a rotation: L is skew)."""
    return expm(t * L) @ B


class _Path:
    """The geodesic ``t -> e^{tL} B`` evaluated many times during a line search.

    ``iL`` is Hermitian, so ``L = -i Q diag(θ) Q^H`` and ``e^{tL} = Q diag(e^{-iθt}) Q^H``:
    one ``eigh`` per direction instead of one ``expm`` per trial step (same
    matrix to rounding; the accepted step itself is taken with ``expm``).
    """

    def __init__(self, L, B):
        self.L, self.B = L, B
        theta, Q = np.linalg.eigh(1j * L)
        self.theta, self.Q = theta, Q

    def __call__(self, t):
        R = ((self.Q * np.exp(-1j * self.theta * t)) @ self.Q.conj().T).real
        return R @ self.B

    def exact(self, t):
        return _reorthonormalize(_geodesic(self.L, self.B, t))


def _reorthonormalize(B):
    """Polar factor: removes the O(eps) drift of long products of expm's."""
    u, _, vt = np.linalg.svd(B)
    return u @ vt


def _z_rows(Z, i, j, pairs):
    """Derivatives of the entries ``Z[i, j]`` along ℓ (rows, one per entry).

    Along ``B(t) = e^{tL}B``, ``dZ_i/dt = L Z_i`` so ``dZ_ij/dℓ_ab =
    [j=a] Z_ib - [j=b] Z_ia``.
    """
    a, b = pairs
    zi = Z[i]
    return (j[:, None] == a[None]) * zi[:, b] - (j[:, None] == b[None]) * zi[:, a]


def _a_rows(Ahat, k, l, pairs):
    """Derivatives of the entries ``Â[k, l]`` along ℓ (``Â(t) = C Bᵀ e^{-tL}``, dÂ = -Â L)."""
    a, b = pairs
    ak = Ahat[k]
    return (l[:, None] == a[None]) * ak[:, b] - (l[:, None] == b[None]) * ak[:, a]


def _paper_direction(Z, i, j, pairs):
    """The paper's descent direction for the active negativity entries ``(i_m, j_m)``.

    One active entry: ``L = Q - Qᵀ`` with ``Q``'s ``j₀``-th column equal to
    ``v = -Z_{i₀}`` (the paper indexes V by component x sample), which lowers
    ``-Z_{i₀ j₀}`` at the rate ``||v||² - v_{j₀}²``.

    Several: ``L = Σ_m x_m H_m`` over the single-entry directions ``H_m``, with
    ``x = E^{-1}(-1)`` where ``E_lm`` is the rate of entry l along ``H_m``, so all
    active maxima fall at the same rate.  With distinct components ``j_m`` this
    is the paper's ``E = F + diag(b)``, ``F_lm = v_{m,j_l} v_{l,j_m}``,
    ``b_l = -||v_l||²``.  In the coordinates ℓ, ``H_m = -g_m`` (``g_m`` the
    gradient of ``-Z_{i_m j_m}``) and ``E = -G Gᵀ``, so ``L`` is the
    minimum-norm direction with all active rates equal to -1.

    Returns ``ell`` (unit Frobenius norm of L) or None when E is singular /
    badly conditioned (more active entries than ``r(r-1)/2`` or dependent
    rows), or when the direction vanishes (a point on a negative axis).
    """
    G = -_z_rows(Z, i, j, pairs)                     # gradients of -Z_ij
    if G.shape[0] == 1:
        ell = -G[0]                                  # = (Q - Qᵀ) in coordinates
    else:
        if G.shape[0] > G.shape[1]:
            return None
        E = -(G @ G.T)
        if np.linalg.cond(E) > 1e10:
            return None
        x = np.linalg.solve(E, -np.ones(G.shape[0]))
        ell = -(G.T @ x)
    nrm = np.sqrt(2.0) * np.linalg.norm(ell)
    scale = max(1.0, float(np.abs(Z[i]).max()))
    if nrm <= 1e-12 * scale:
        return None
    return ell / nrm


def _lp_model(groups, q, tau):
    """Trust-region LP model of a weighted sum of maxima (the fallback direction).

    ``groups`` holds ``(weight, offsets, G)``: piece m of group g is
    ``f_m + G_m·ℓ`` to first order with ``f_m <= 0`` its gap below the group's
    max.  Solves ``min Σ w_g r_g  s.t.  f_m + τ G_m·ℓ <= r_g,  -1 <= ℓ <= 1`` —
    pieces below the max may rise as long as they do not overtake it, which
    is what lets the descent land on a sharp (vertex) minimum.  Returns
    ``(ell, model change)`` with ``ell`` of unit Frobenius norm in L.
    """
    ng = len(groups)
    nv = q + ng
    c = np.zeros(nv)
    rows, rhs = [], []
    for g, (w, f, G) in enumerate(groups):
        c[q + g] = w
        blk = np.zeros((G.shape[0], nv))
        blk[:, :q] = tau * G
        blk[:, q + g] = -1.0
        rows.append(blk)
        rhs.append(-f)
    bounds = [(-1.0, 1.0)] * q + [(None, None)] * ng
    res = linprog(c, A_ub=np.vstack(rows), b_ub=np.concatenate(rhs), bounds=bounds, method="highs")
    if res.status != 0:
        return None, 0.0
    ell = res.x[:q]
    nrm = np.sqrt(2.0) * np.linalg.norm(ell)
    if nrm == 0:
        return None, 0.0
    return ell / nrm, float(res.fun)


def _box_norm(ell_unit):
    """Infinity norm of ℓ scaled back to the LP box (``||ℓ||_∞ = 1`` there)."""
    m = float(np.abs(ell_unit).max())
    return 1.0 / m if m > 0 else 1.0


def _lp_ascent_model(grad, c0, C_rows, q, tau):
    """Trust-region LP for the ascent phase: ``max τ grad·ℓ`` s.t.
    ``c0_m + τ C_m·ℓ >= 0``, ``-1 <= ℓ <= 1``.  Returns (ell of unit Frobenius
    norm in L, model gain)."""
    A_ub = -tau * C_rows
    res = linprog(-tau * grad, A_ub=A_ub if A_ub.shape[0] else None,
                  b_ub=c0 if A_ub.shape[0] else None, bounds=[(-1.0, 1.0)] * q, method="highs")
    if res.status != 0:
        return None, 0.0
    ell = res.x
    nrm = np.sqrt(2.0) * np.linalg.norm(ell)
    if nrm == 0:
        return None, 0.0
    return ell / nrm, float(-res.fun)


def _random_rotation(rng, r, angle):
    """``e^{angle K}`` with K a random skew matrix of unit Frobenius norm."""
    K = rng.standard_normal((r, r))
    K = K - K.T
    K /= np.linalg.norm(K)
    return expm(angle * K)


# --------------------------------------------------------------------------- objectives

class _Problem:
    """Negativity of the whitened scores (and optionally of Â) as functions of B."""

    def __init__(self, U, C, penalty, a_scale):
        self.U, self.C, self.penalty, self.a_scale = U, C, penalty, a_scale

    def parts(self, B):
        Z = self.U @ B.T
        s = float(-Z.min())
        if self.penalty > 0:
            Ah = (self.C @ B.T) / self.a_scale
            nneg = float(-Ah.min())
        else:
            Ah, nneg = None, 0.0
        return Z, s, Ah, nneg

    def value(self, B):
        """``S*(B) + a·max(N*(B), 0)`` with ``N*`` the (scaled) negativity of Â."""
        Z, s, Ah, nneg = self.parts(B)
        return s + self.penalty * max(nneg, 0.0)


def _line_search(phi, L, B, f0, t0, t_max):
    """Minimize ``phi(e^{tL}B)`` over ``t in (0, t_max]``: bracket then bounded Brent.

    Returns ``(t, value)``; ``t = 0`` when no tested step decreases ``phi``.
    """
    path = _Path(L, B)

    def at(t):
        return phi(path(t))

    t = min(t0, t_max)
    ft = at(t)
    # shrink until the step decreases the objective
    while ft >= f0 and t > 1e-12:
        t *= 0.25
        ft = at(t)
    if ft >= f0:
        return 0.0, f0
    # expand while it keeps decreasing
    lo = 0.0
    while 2 * t <= t_max:
        f2 = at(2 * t)
        if f2 >= ft:
            hi = 2 * t
            break
        lo, t, ft = t, 2 * t, f2
    else:
        hi = t_max
    res = minimize_scalar(at, bounds=(lo, hi), method="bounded",
                          options={"xatol": 1e-12 + 1e-9 * hi, "maxiter": 60})
    if res.fun < ft:
        return float(res.x), float(res.fun)
    return t, ft
