"""Nonnegative sparse PCA of Zass & Shashua (NIPS 2006), by coordinate ascent."""

from __future__ import annotations

import math
import time
import warnings

import numpy as np

from .._common.checks import check_callback, check_cov, check_float, check_peer_args
from .._common.points import leading_eigvec, make_result
from ..operators.cov import Cov
from .._common.summary import components_result
from .._common.validation import InputError, as_rng, check_int
from ..result import ComponentsResult, Result, seed_param

__all__ = ["zass_pca", "zass_components", "zass_objective"]

# β grid of the continuation: max-gradient * 2^-j, j = _GRID_STEPS .. 0
_GRID_STEPS = 10


# ----------------------------------------------------------------------------
# the one-dimensional problem: max_{u >= 0} f(u) = -a/4 u^4 + C2 u^2 + C1 u
# ----------------------------------------------------------------------------
def _best_u_scalar(C2: float, C1: float, alpha: float) -> float:
    """Maximizer over u >= 0 of ``-alpha/4 u^4 + C2 u^2 + C1 u`` (scalar, math only).

    f'(u) = -alpha u^3 + 2 C2 u + C1.  The roots of the depressed cubic
    u^3 + P u + Q (P = -2 C2/alpha, Q = -C1/alpha) sum to zero, so at most the
    largest one is a positive local maximum; compare it with u = 0.
    """
    P = -2.0 * C2 / alpha
    Q = -C1 / alpha
    disc = 0.25 * Q * Q + P * P * P / 27.0
    if disc >= 0:
        sq = math.sqrt(disc)
        u = math.cbrt(-0.5 * Q + sq) + math.cbrt(-0.5 * Q - sq)
    else:  # three real roots (P < 0): the largest, trigonometric form
        m = 2.0 * math.sqrt(-P / 3.0)
        arg = 3.0 * Q / (P * m)
        arg = min(1.0, max(-1.0, arg))
        u = m * math.cos(math.acos(arg) / 3.0)
    if u <= 0:
        return 0.0
    # one Newton step on f' polishes Cardano's cancellation
    fpp = -3.0 * alpha * u * u + 2.0 * C2
    if fpp < 0:
        u2 = u - (-alpha * u ** 3 + 2.0 * C2 * u + C1) / fpp
        if u2 > 0:
            u = u2
    f = u * (C1 + u * (C2 - 0.25 * alpha * u * u))
    return u if f > 0 else 0.0


def _best_u(C2: np.ndarray, C1: np.ndarray, alpha: float) -> np.ndarray:
    """Vectorized :func:`_best_u_scalar`."""
    P = -2.0 * C2 / alpha
    Q = -C1 / alpha
    disc = 0.25 * Q * Q + P ** 3 / 27.0
    with np.errstate(invalid="ignore", divide="ignore"):
        sq = np.sqrt(np.clip(disc, 0.0, None))
        u1 = np.cbrt(-0.5 * Q + sq) + np.cbrt(-0.5 * Q - sq)
        m = 2.0 * np.sqrt(np.clip(-P / 3.0, 0.0, None))
        arg = np.clip(np.where(m > 0, 3.0 * Q / (P * m), 0.0), -1.0, 1.0)
        u3 = m * np.cos(np.arccos(arg) / 3.0)
    u = np.where(disc >= 0, u1, u3)
    u = np.clip(u, 0.0, None)
    f = u * (C1 + u * (C2 - 0.25 * alpha * u * u))
    return np.where(f > 0, u, 0.0)


class _State:
    """Coordinate-ascent state for F(U) = ½ tr(U^T Ā U) - α/4 ||I - U^T U||² - β 1^T U 1.

    Ā = A / λ₁ (so α and β are in units of the top eigenvalue).  With thin data
    Ā = Xs^T Xs, Xs = X / sqrt(m λ₁), and we keep Y = Xs U (m x r) instead of
    Ā U (never n x n); otherwise Ā is dense and we keep G = Ā U.
    """

    def __init__(self, cov: Cov, scale: float):
        self.thin = cov.thin
        if self.thin:
            Xs = cov.X / math.sqrt(cov.X.shape[0] * scale)
            self.XsT = np.ascontiguousarray(Xs.T)
            self.Xs = Xs
            self.diag = np.einsum("ij,ij->i", self.XsT, self.XsT)
        else:
            self.Abar = np.ascontiguousarray(cov.dense() / scale)
            self.diag = np.diag(self.Abar).copy()

    def AU(self, U):
        if self.thin:
            return self.XsT @ (self.Xs @ U)
        return self.Abar @ U

    def objective(self, U, alpha, beta):
        M = U.T @ U
        E = np.eye(U.shape[1]) - M
        return float(0.5 * np.sum(U * self.AU(U)) - 0.25 * alpha * np.sum(E * E) - beta * U.sum())


def _jacobi_best(st: _State, U, G, M, alpha, beta):
    """Every coordinate's exact maximizer given the current U (vectorized check)."""
    a = st.diag[:, None]
    rowsq = np.sum(U * U, axis=1, keepdims=True)
    Mss = np.diag(M)[None, :]
    b = G - a * U
    c = Mss - U * U
    sq_other = rowsq - U * U
    cross = (U @ M - Mss * U) - U * sq_other
    C2 = 0.5 * a + 0.5 * alpha * (1.0 - c) - 0.5 * alpha * sq_other
    C1 = b - alpha * cross - beta
    return _best_u(C2, C1, alpha)


def _coordinate_ascent(st: _State, U0, alpha, beta, tol, max_sweeps):
    """Exact coordinate ascent from U0; returns (U, converged, sweeps).

    Each sweep first checks every coordinate at once (vectorized); the
    sequential Gauss–Seidel pass then visits only the coordinates that are
    nonzero or want to enter — the others would stay at zero.  Every update is
    an exact one-dimensional maximization, so F never decreases.  Converged
    when a pass changes no entry by more than ``tol * max(U)`` and no zero
    coordinate wants to enter.
    """
    U = U0.copy()
    n, r = U.shape
    converged = False
    sweeps = 0
    for sweeps in range(1, max_sweeps + 1):
        if st.thin:
            Y = st.Xs @ U
            G = st.XsT @ Y
        else:
            G = st.Abar @ U
        M = U.T @ U
        Ub = _jacobi_best(st, U, G, M, alpha, beta)
        entering = (U == 0) & (Ub > 0)
        change = 0.0
        scale = max(float(U.max()), 1e-300)
        coords = np.argwhere((U > 0) | entering)  # rows (p, s), sorted by p then s
        diag = st.diag
        for p, s in coords:
            row = U[p].copy()
            u_old = row[s]
            g = float(st.XsT[p] @ Y[:, s]) if st.thin else float(G[p, s])
            b = g - diag[p] * u_old
            Ms = M[s]
            c = Ms[s] - u_old * u_old
            sq_other = float(row @ row) - u_old * u_old
            cross = (float(Ms @ row) - Ms[s] * u_old) - u_old * sq_other
            C2 = 0.5 * diag[p] + 0.5 * alpha * (1.0 - c) - 0.5 * alpha * sq_other
            C1 = b - alpha * cross - beta
            u_new = _best_u_scalar(C2, C1, alpha)
            delta = u_new - u_old
            if delta == 0.0:
                continue
            change = max(change, abs(delta))
            U[p, s] = u_new
            if st.thin:
                Y[:, s] += st.XsT[p] * delta
            else:
                G[:, s] += st.Abar[p] * delta  # Ā symmetric: column p = row p
            Ms_row = delta * row
            Ms_row[s] = u_new * u_new - u_old * u_old
            M[s] += Ms_row
            M[:, s] += Ms_row
            M[s, s] -= Ms_row[s]  # added twice above
        if change <= tol * scale and not entering.any():
            converged = True
            break
        if change <= tol * scale and sweeps > 1:
            # only entering coordinates moved; check again next sweep
            pass
    return U, converged, sweeps


def zass_objective(cov: Cov, U, *, alpha=1.0, beta=0.0) -> float:
    """F(U) = ½ tr(U^T Ā U) - α/4 ||I - U^T U||²_F - (β/√n) Σ U, with Ā = A / λ₁(A)."""
    cov = check_cov(cov)
    scale = _scale(cov)
    U = np.asarray(U, dtype=float).reshape(cov.n, -1)
    return _State(cov, scale).objective(U, alpha, beta / math.sqrt(cov.n))


def _scale(cov: Cov) -> float:
    u = leading_eigvec(cov)
    lam = cov.quad(u)
    return lam if lam > 0 else 1.0


def _init(cov: Cov, r: int, alpha: float, init: str, rng) -> np.ndarray:
    """Starting U >= 0: columns of norm² 1 + 1/α (the norm of a top eigenvector stationary point)."""
    n = cov.n
    if init == "eig" and r == 1:
        U = np.abs(leading_eigvec(cov))[:, None]
    else:
        U = np.abs(rng.standard_normal((n, r)))
        U /= np.linalg.norm(U, axis=0)
    return U * math.sqrt(1.0 + 1.0 / alpha)


def zass_pca(cov: Cov, k: int, *, seed=0, callback=None, alpha=1.0, beta=None, tol=1e-6,
             max_sweeps=500, init="eig", bisection_steps=20) -> Result:
    """One nonnegative sparse component of Zass & Shashua, with β searched for ``k``.

    Parameters
    ----------
    cov : Cov
        Thin data are used through ``X`` (the state keeps ``X U``).
    k : int in [1, n]
        Largest support wanted: β is found by bisection for the largest
        support ``<= k``.
    seed : int or Generator
        Used by ``init="random"``.
    callback : callable(done, total), optional
        Called after each β tried.
    alpha : float > 0, default 1.0
        Orthonormality weight, in units of λ₁(A).
    beta : float >= 0, optional
        Fix β (units of λ₁/√n, the size of the entries of ``A u`` for a unit
        ``u`` spread over all features) instead of searching; ``k`` then only caps the
        support (a larger one is reported and truncated, see ``info``).
    tol : float, default 1e-6
        Relative change per sweep below which coordinate ascent stops.
    max_sweeps : int, default 500
    init : {"eig", "random"}
        Start from |leading eigenvector| (deterministic) or a random nonnegative U.
    bisection_steps : int, default 20

    Returns
    -------
    Result
        ``method="zass"``; ``info`` has ``beta``, ``support_size``,
        ``exact_k`` (whether some β gave exactly k nonzeros), ``tried``
        (β -> support size) and ``message`` when no β gives a support in
        [1, k] (then the answer is the smallest-β solution cut to its k
        largest entries, ``truncated=True``).

    Notes
    -----
    R. Zass and A. Shashua, "Nonnegative Sparse PCA", NIPS 2006: maximize
    ``½ ||U^T X||² - α/4 ||I - U^T U||² - β 1^T U 1`` over ``U >= 0`` by
    coordinate ascent; as a function of one entry ``u`` the objective is the
    quartic ``-α/4 u⁴ + C2 u² + C1 u``, maximized exactly through the roots of
    its derivative (a depressed cubic).  Here ``X X^T`` is ``A / λ₁`` so α, β
    are scale-free.  Sparsity comes from β, not from a count, so the support
    size is searched: bracket β by halving from 1 (until the support exceeds
    k), then bisect.  The returned x is the column of U scaled to unit norm.
    """
    t0 = time.perf_counter()
    cov, k, rng, callback = check_peer_args(cov, k, seed, callback)
    n = cov.n
    alpha = check_float(alpha, "alpha", 0.0, np.inf, high_open=True)
    if beta is not None:
        beta = check_float(beta, "beta", 0.0, np.inf, low_open=False, high_open=True)
    tol = check_float(tol, "tol", 0.0, 1.0, high_open=True)
    max_sweeps = check_int(max_sweeps, "max_sweeps", 1)
    bisection_steps = check_int(bisection_steps, "bisection_steps", 1)
    if init not in ("eig", "random"):
        raise InputError(f"`init` must be 'eig' or 'random'; got {init!r}")

    st = _State(cov, _scale(cov))
    U0 = _init(cov, 1, alpha, init, rng)
    tried = {}
    total = 1 if beta is not None else bisection_steps + _GRID_STEPS + 1

    def solve(b, Ustart):
        U, conv, sweeps = _coordinate_ascent(st, Ustart, alpha, b, tol, max_sweeps)
        size = int(np.count_nonzero(U[:, 0]))
        tried[b] = dict(U=U, size=size, converged=conv, sweeps=sweeps)
        if callback is not None:
            callback(min(len(tried), total), total)
        return size

    if beta is not None:
        solve(beta / math.sqrt(n), U0)
    else:
        # Continuation in β (warm starts): from the β = 0 solution (the top
        # eigenvector branch) up a geometric grid until the support is <= k,
        # then bisection between the last two grid points, each solve started
        # from the denser bracket end.  Cold starts at a large β collapse onto
        # spurious one-coordinate maxima of the coordinate ascent.
        lo = 0.0
        s = solve(lo, U0)
        hi = None
        if s > k:
            g = float(np.max(st.AU(tried[lo]["U"])))  # β above max gradient empties u
            b = g * 2.0 ** (-_GRID_STEPS)
            for _ in range(_GRID_STEPS + 8):
                s = solve(b, tried[lo]["U"])
                if s <= k:
                    hi = b
                    break
                lo, b = b, 2.0 * b
        if hi is not None and tried[hi]["size"] != k:
            for _ in range(bisection_steps):
                mid = 0.5 * (lo + hi)
                s = solve(mid, tried[lo]["U"])
                if s > k:
                    lo = mid
                else:
                    hi = mid
                if s == k or hi - lo <= 1e-3 * hi:
                    break

    feasible = [(b, t) for b, t in tried.items() if 1 <= t["size"] <= k]
    # β is reported in units of λ₁/√n (internally Ā = A/λ₁ units)
    info = dict(alpha=alpha, tried={float(b) * math.sqrt(n): t["size"] for b, t in tried.items()},
                truncated=False)
    if feasible:
        st_vals = {b: cov.quad(t["U"][:, 0] / np.linalg.norm(t["U"][:, 0])) for b, t in feasible}
        b_best, t_best = max(feasible, key=lambda bt: (bt[1]["size"], st_vals[bt[0]]))
        x = t_best["U"][:, 0].copy()
        info.update(beta=float(b_best) * math.sqrt(n), support_size=t_best["size"],
                    exact_k=t_best["size"] == k)
        if t_best["size"] != k:
            info["message"] = (f"no β tried gives exactly k={k} nonzeros; the largest support "
                               f"<= k found has {t_best['size']}")
    else:
        # no β gives a k-sparse nonzero answer: cut the densest solution to k entries
        b_best = min(tried)
        t_best = tried[b_best]
        x = t_best["U"][:, 0].copy()
        if not x.any():
            x = np.abs(leading_eigvec(cov))
        keep = np.argsort(-x, kind="stable")[:k]
        xx = np.zeros(n)
        xx[keep] = x[keep]
        x = xx
        info.update(beta=float(b_best) * math.sqrt(n), support_size=int(t_best["size"]), exact_k=False,
                    truncated=True,
                    message=f"no β gives a support in [1, k={k}]; the β={b_best * math.sqrt(n):.3g} solution "
                            f"(support {t_best['size']}) was cut to its {k} largest entries")
    if not t_best["converged"]:
        warnings.warn("zass: coordinate ascent hit max_sweeps", RuntimeWarning, stacklevel=2)
    params = dict(k=k, alpha=alpha, beta=info["beta"], tol=tol, max_sweeps=max_sweeps, init=init,
                  random_state=seed_param(seed))
    return make_result(cov, x, method="zass", params=params, t0=t0,
                        converged=bool(t_best["converged"]), info=info)


def zass_components(cov: Cov, n_components: int, *, alpha=1.0, beta=0.5, seed=0, callback=None,
                    tol=1e-6, max_sweeps=300) -> ComponentsResult:
    """Several nonnegative sparse components, jointly (Zass & Shashua 2006).

    Parameters
    ----------
    cov : Cov
    n_components : int in [1, n]
    alpha : float > 0, default 1.0
        Orthonormality weight (units of λ₁): larger means closer to orthogonal,
        i.e. less overlapping supports.
    beta : float >= 0, default 0.5
        Sparsity weight in units of λ₁/√n (the size of the entries of ``A u``
        for a unit ``u`` spread over all features); larger means sparser.  The number of
        nonzeros is not a parameter of this method.
    seed : int or Generator
        Random nonnegative start (as in the paper).
    callback : callable(done, total), optional
        Called once at the end (the components are solved jointly).
    tol, max_sweeps
        As in :func:`zass_pca`.

    Returns
    -------
    ComponentsResult
        ``method="zass"``, ``strategy="joint"``; loadings are the columns of U
        scaled to unit norm.  A column that coordinate ascent drove to zero is
        replaced by the unused feature of largest variance (listed in
        ``info["empty_columns"]``).

    Notes
    -----
    Maximizes ``½ tr(U^T Ā U) - α/4 ||I - U^T U||²_F - β 1^T U 1`` over
    ``U >= 0`` (n x r) by exact coordinate ascent (see :func:`zass_pca`), from
    a random nonnegative start at ``β/16`` and then by continuation through
    ``β/8, β/4, β/2, β`` (warm starts).
    """
    t0 = time.perf_counter()
    cov = check_cov(cov)
    n = cov.n
    r = check_int(n_components, "n_components", 1, n)
    alpha = check_float(alpha, "alpha", 0.0, np.inf, high_open=True)
    beta = check_float(beta, "beta", 0.0, np.inf, low_open=False, high_open=True)
    tol = check_float(tol, "tol", 0.0, 1.0, high_open=True)
    max_sweeps = check_int(max_sweeps, "max_sweeps", 1)
    callback = check_callback(callback)
    rng = as_rng(seed)
    st = _State(cov, _scale(cov))
    U0 = _init(cov, r, alpha, "random", rng)
    # continuation as in zass_pca (warm starts up a short geometric grid to β)
    b_int = beta / math.sqrt(n)  # β is given in units of λ₁/√n
    U, sweeps = U0, 0
    for j in range(4, -1, -1):
        U, conv, sw = _coordinate_ascent(st, U, alpha, b_int * 2.0 ** (-j), tol, max_sweeps)
        sweeps += sw
    if not conv:
        warnings.warn("zass: coordinate ascent hit max_sweeps", RuntimeWarning, stacklevel=2)
    L = U.copy()
    empty = []
    d = cov.diag()
    for j in range(r):
        nj = np.linalg.norm(L[:, j])
        if nj > 0:
            L[:, j] /= nj
        else:
            used = L.sum(axis=1) > 0
            cand = np.where(used, -np.inf, d)
            L[int(np.argmax(cand)), j] = 1.0
            empty.append(j)
    results = [make_result(cov, L[:, j], method="zass", params=dict(alpha=alpha, beta=beta),
                            t0=t0, converged=conv) for j in range(r)]
    params = dict(n_components=r, alpha=alpha, beta=beta, tol=tol, max_sweeps=max_sweeps,
                  random_state=seed_param(seed))
    info = dict(sweeps=sweeps, converged=conv, empty_columns=empty,
                objective=st.objective(U, alpha, b_int))
    return components_result(cov, L, method="zass", strategy="joint", params=params, t0=t0, results=results,
                             info=info)
