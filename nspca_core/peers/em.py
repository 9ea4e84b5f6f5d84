"""EM for sparse and nonnegative PCA (Sigg & Buhmann, ICML 2008).

The variational renormalization on a support (:func:`renormalize_on_support`)
is used by the bipartite method too; the checks and the Result builder the
peers share are in :mod:`nspca_core._common`.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import replace
from itertools import combinations

import numpy as np
import scipy.optimize

from .._common.ascent import ascent, cov_key, random_starts
from .._common.options import check_options
from .._common.checks import check_bool, check_callback, check_cov, check_float, check_peer_args
from .._common.points import flip, leading_eigvec, make_result
from .._common.rank1 import rank1_point
from .._common.steps import PlainPower, SoftTopK
from ..operators.cov import Cov
from ..deflation import project_each, remove_each
from .._common.summary import components_result
from .._common.validation import InputError, as_rng, check_int, check_k
from ..result import ComponentsResult, Result, seed_param

__all__ = ["em_pca", "em_components"]

# Supports up to this size are renormalized exactly by enumeration when the
# leading eigenvector of A_II is not sign-consistent (2^12 tiny eighs).
_EXACT_SUPPORT = 12


def _lambda_max(cov: Cov) -> float:
    u = leading_eigvec(cov)
    return max(cov.quad(u), 0.0)


def _random_nonneg(rng: np.random.Generator, cov: Cov, count: int, nonneg: bool = True) -> np.ndarray:
    """``count`` random unit vectors (of the nonnegative orthant) as columns, drawn per rank
    of the features' variances so that permuting the features permutes them
    (:func:`nspca_core._common.ascent.random_starts`)."""
    return random_starts(cov_key(cov), rng, count, nonneg=nonneg)


def _nonneg_pca_exact_small(B: np.ndarray):
    """max x^T B x over unit x >= 0 for tiny B (size <= _EXACT_SUPPORT), by enumeration.

    At an optimum with minimal support J, x_J is a positive eigenvector of
    B_JJ (see tests/bruteforce.py); enumerate J, batched per size.
    """
    s = B.shape[0]
    best_val, best_x = -np.inf, None
    for size in range(1, s + 1):
        J = np.array(list(combinations(range(s), size)), dtype=int)
        sub = B[J[:, :, None], J[:, None, :]]
        w, U = np.linalg.eigh(sub)  # (C, size), (C, size, size)
        # orient each eigenvector by its sum, then keep sign-consistent ones
        sg = np.where(U.sum(axis=1, keepdims=True) < 0, -1.0, 1.0)
        U = U * sg
        ok = U.min(axis=1) >= -1e-12
        if not ok.any():
            continue
        vals = np.where(ok, w, -np.inf)
        c, j = np.unravel_index(int(np.argmax(vals)), vals.shape)
        if vals[c, j] > best_val:
            x = np.zeros(s)
            x[J[c]] = np.clip(U[c, :, j], 0.0, None)
            best_val, best_x = float(vals[c, j]), x / np.linalg.norm(x)
    return best_x


def _projected_ascent(B, x: np.ndarray, tol=1e-10, max_iter=2000) -> np.ndarray:
    """Monotone ascent of x^T B x over the nonnegative unit sphere (B PSD) from a unit ``x >= 0``:
    the one ascent driver with the step ``x <- P_+(Bx)/||P_+(Bx)||`` (:class:`PlainPower` with
    k = every entry), its last iterate.

    For convex f(x) = x^T B x, f(y) >= f(x) + 2 (Bx)^T (y - x); y = P_+(Bx)/||P_+(Bx)||
    maximizes (Bx)^T y over the feasible set, so f never decreases.
    """
    r = ascent(lambda W: B @ W, x[:, None], x.size, step=PlainPower(nonneg=True), max_iter=max_iter, rtol=None,
               xtol=tol, merge=False, keep="last", quads=lambda W: np.zeros(W.shape[1]))
    return r.X[:, 0]


class _GramSide:
    """``A_II = X_Iᵀ X_I / m`` of thin data (m < |I|) as an operator: ``B @ v`` and ``v @ B``
    cost two products with the m × |I| block; the |I| × |I| matrix is never formed."""

    __array_ufunc__ = None  # ``ndarray @ self`` defers to __rmatmul__

    def __init__(self, XI: np.ndarray):
        self.XI, self.m = XI, XI.shape[0]

    def __matmul__(self, v):
        return self.XI.T @ (self.XI @ v) / self.m

    __rmatmul__ = __matmul__


def _support_matrix_and_top_vector(cov: Cov, idx: np.ndarray):
    """``A_II`` (an array, or a :class:`_GramSide` operator when the data are thinner than the
    support) and its leading eigenvector.  On the Gram side the eigenvector is ``X_Iᵀ v`` for the
    top eigenvector v of the m × m ``X_I X_Iᵀ / m`` (same nonzero spectrum): O(m²|I|) instead of
    the O(|I|³) of a full eigendecomposition (|I| = 12,582 on MLL: 100 s -> a fraction of one)."""
    X = getattr(cov, "X", None)
    if (idx.size > _EXACT_SUPPORT and getattr(cov, "_A", None) is None and isinstance(X, np.ndarray)
            and X.shape[0] < idx.size):
        XI = X[:, idx]
        _, V = np.linalg.eigh(XI @ XI.T / X.shape[0])
        u = XI.T @ V[:, -1]
        nu = np.linalg.norm(u)
        return _GramSide(XI), (u / nu if nu > 0 else u)
    B = cov.submatrix(idx)
    return B, np.linalg.eigh(B)[1][:, -1]


def renormalize_on_support(cov: Cov, x: np.ndarray, nonneg: bool):
    """Variational renormalization: the best unit vector on the support of ``x``.

    Signed: the leading eigenvector of A_II (Moghaddam et al. 2006), exact.
    Nonnegative: max x^T A_II x over x >= 0 — exact when the leading
    eigenvector of A_II is sign-consistent or |I| <= 12 (enumeration);
    otherwise a monotone projected ascent started from ``x`` and from the
    positive part of that eigenvector.  Never returns a worse point than ``x``.

    Returns ``(x_new, how)``.
    """
    idx = np.flatnonzero(x)
    if idx.size == 0:
        return x, "none"
    B, u = _support_matrix_and_top_vector(cov, idx)
    u = -u if u.sum() < 0 else u
    xs = x[idx]
    old = float(xs @ B @ xs)
    if not nonneg:
        cand, how = u, "eigenvector"
    elif u.min() >= -1e-12 * np.abs(u).max():
        cand, how = np.clip(u, 0.0, None), "eigenvector"
    elif idx.size <= _EXACT_SUPPORT:
        cand, how = _nonneg_pca_exact_small(B), "exact-enumeration"
    else:
        c1 = _projected_ascent(B, xs / np.linalg.norm(xs))
        up = np.clip(u, 0.0, None)
        c2 = _projected_ascent(B, up / np.linalg.norm(up)) if up.any() else c1
        cand = c1 if c1 @ B @ c1 >= c2 @ B @ c2 else c2
        how = "projected-ascent"
    cand = cand / np.linalg.norm(cand)
    if float(cand @ B @ cand) < old:  # rounding only; keep the better point
        return x, "kept"
    out = np.zeros_like(x)
    out[idx] = cand
    return out, how


# ----------------------------------------------------------------------------
# EM iterations
# ----------------------------------------------------------------------------
def _em_ascent(cov: Cov, W0: np.ndarray, k: int, nonneg: bool, tol: float, max_iter: int, mstep=None):
    """Run Sigg–Buhmann EM from each column of W0 on the one ascent driver: ``(AscentResult, iterations)``.

    E-step y = X w and M-step w* = sum_n y_n x_n / sum_n y_n^2 combine to
    w* = A w / (w^T A w); the scale is irrelevant after renormalizing, so the step
    starts from A w.  Constraint step (their Alg. 2; :class:`~nspca_core._common.steps.SoftTopK`):
    zero the negatives (nonneg), then the soft top-k step, then normalize.  ``mstep(w_star) -> w``
    optionally replaces the nonnegativity projection (the quasi-orthogonal QP); it works per
    column.  The last iterates are kept (EM need not ascend); their values are ``cov.quads``.
    ``iterations`` counts, as EM always has, the pass that finds every start converged.
    """
    r = ascent(cov.matvec, W0, k, step=SoftTopK(nonneg=nonneg, mstep=mstep), max_iter=max_iter, rtol=None,
               xtol=tol, merge=False, keep="last", quads=cov.quads)
    return r, r.iterations + int(r.iterations < max_iter and bool(r.converged.all()))


def em_pca(cov: Cov, k: int, *, seed=0, callback=None, nonneg=True, restarts=10,
           renormalize=True, tol=1e-6, max_iter=1000, init=None) -> Result:
    """One sparse (and nonnegative) component by EM (Sigg & Buhmann 2008).

    Parameters
    ----------
    cov : Cov
        Validated covariance; with thin data (m < n) everything goes through
        ``X`` (products ``X^T (X w)``), the n x n matrix is never formed.
    k : int in [1, n]
    seed : int or Generator
    callback : callable(done, total), optional
        Called once per restart batch end (here: once, the restarts run vectorized).
    nonneg : bool, default True
        Nonnegative components (zero negatives, then the sparse step).  With
        False the signed sparse PCA of the paper (initialized at the first PC).
    restarts : int >= 1, default 10
        Random nonnegative unit starts (nonneg); for signed PCA the first start
        is the first PC and the others are random signed vectors.
    renormalize : bool, default True
        Variational renormalization: replace the converged w by the best unit
        vector on its support (see Notes).
    tol : float in (0, 1), default 1e-6
        Stop a start when ``|w_{t+1}^T w_t| > 1 - tol``.
    max_iter : int, default 1000
    init : {None, "pc", "random"}
        Override the first start (used by tests: "random" makes the k = n,
        signed case a genuine power iteration).

    Returns
    -------
    Result
        ``method="em"``; ``info`` has the restart values, iterations and how
        the renormalization was done.

    Notes
    -----
    C. D. Sigg and J. M. Buhmann, "Expectation-Maximization for Sparse and
    Non-Negative PCA", ICML 2008, Alg. 2: E-step ``y = X w``, M-step
    ``w* = sum y_n x_n / sum y_n^2`` (``= A w / w^T A w``), then the constraint
    step: negative entries set to zero, then the K largest ``|w_i|`` shifted
    by the (K+1)-th (their axis-aligned descent, cardinality set directly),
    then renormalization.  Converged when ``|w^(t+1)T w^(t)| > 1 - tol``.

    The variational renormalization (Moghaddam, Weiss & Avidan 2006) on the
    support ``I``: signed, the leading eigenvector of ``A_II`` (exact).
    Nonnegative, ``max x^T A_II x`` over ``x >= 0`` — itself a nonnegative PCA:
    exact when the leading eigenvector of ``A_II`` has one sign or
    ``|I| <= 12`` (enumeration of sub-supports), otherwise a monotone
    projected ascent from the EM point; never worse than the EM point.
    """
    t0 = time.perf_counter()
    cov, k, rng, callback = check_peer_args(cov, k, seed, callback)
    n = cov.n
    nonneg = check_bool(nonneg, "nonneg")
    renormalize = check_bool(renormalize, "renormalize")
    restarts = check_int(restarts, "restarts", 1)
    max_iter = check_int(max_iter, "max_iter", 1)
    tol = check_float(tol, "tol", 0.0, 1.0, high_open=True)
    if init not in (None, "pc", "random"):
        raise InputError(f"`init` must be None, 'pc' or 'random'; got {init!r}")

    if nonneg:
        W0 = _random_nonneg(rng, cov, restarts)
        if init == "pc":
            W0[:, 0] = rank1_point(leading_eigvec(cov), n)
    else:
        W0 = _random_nonneg(rng, cov, restarts, nonneg=False)
        if init != "random":
            W0[:, 0] = leading_eigvec(cov)
    r, iters = _em_ascent(cov, W0, k, nonneg, tol, max_iter)
    W, conv, vals = r.X, r.converged, r.values
    best = int(np.argmax(vals))  # ties -> the first start
    x = W[:, best]
    how = "off"
    if renormalize:
        x, how = renormalize_on_support(cov, x, nonneg)
    if not nonneg:
        x = flip(x)
    if not conv[best]:
        warnings.warn(f"em: the best start did not converge in max_iter={max_iter} iterations",
                      RuntimeWarning, stacklevel=2)
    if callback is not None:
        callback(restarts, restarts)
    params = dict(k=k, random_state=seed_param(seed),
                  nonneg=nonneg, restarts=restarts, renormalize=renormalize, tol=tol,
                  max_iter=max_iter, init=init)
    info = dict(restart_variances=vals.tolist(), best_restart=best, iterations=int(iters),
                renormalization=how, variance_before_renormalization=float(vals[best]))
    return make_result(cov, x, method="em", params=params, t0=t0, converged=bool(conv[best]),
                        info=info)


# ----------------------------------------------------------------------------
# several components
# ----------------------------------------------------------------------------
def _penalized_mstep(V: np.ndarray, gamma: float):
    """Quasi-orthogonal M-step: argmin_{w >= 0} ½||w - w*||² + (γ/2)||V^T w||², by its dual.

    With (γ/2)||z||² = max_μ μ^T z - ||μ||²/(2γ), the inner minimum over
    w >= 0 is w(μ) = (w* - V μ)_+, and the dual g(μ) = ½||w(μ) - w*||² +
    μ^T V^T w(μ) - ||μ||²/(2γ) is concave and smooth in μ ∈ R^{l-1}
    (gradient V^T w(μ) - μ/γ): a QP with only l-1 unknowns, solved by L-BFGS.
    w* is scaled to unit norm first so γ is dimensionless.
    """
    def step(ws):
        s = np.linalg.norm(ws)
        if s == 0:
            return ws
        ws = ws / s

        def negdual(mu):
            w = np.clip(ws - V @ mu, 0.0, None)
            g = 0.5 * float((w - ws) @ (w - ws)) + float(mu @ (V.T @ w)) - float(mu @ mu) / (2 * gamma)
            return -g, -(V.T @ w - mu / gamma)

        mu0 = gamma * (V.T @ np.clip(ws, 0.0, None))
        res = scipy.optimize.minimize(negdual, mu0, jac=True, method="L-BFGS-B",
                                      options=dict(maxiter=200, gtol=1e-12))
        return np.clip(ws - V @ res.x, 0.0, None)
    return step


def _deflation_remove(cov: Cov, L: np.ndarray, k: int, rng, restarts: int, opts: dict, callback,
                      results: list, info: dict) -> int:
    """Nonnegative orthogonal components (into the columns of ``L``): each on the features the
    earlier ones left unused (the "deflation-remove" loop :func:`nspca_core.deflation.remove_each`;
    fewer components when none is left, ``info["stopped_early"]``).  How many were found."""
    r = L.shape[1]

    def solve(sub, kj, keep):
        res = em_pca(sub, kj, seed=rng, nonneg=True, restarts=restarts, **opts)
        return res.x, res

    found = 0
    for j, _, x, res in remove_each(cov, (k,) * r, solve, info=info):
        L[:, j] = x
        # report the component in the original coordinates (same x^T A x)
        results.append(replace(res, x=x.copy(), support=np.flatnonzero(x)))
        found = j + 1
        if callback is not None:
            callback(j + 1, r)
    return found


def _deflation_project(cov: Cov, L: np.ndarray, k: int, rng, restarts: int, opts: dict, callback,
                       results: list) -> None:
    """Signed components (into the columns of ``L``) by Mackey's projection deflation (the
    "deflation-project" loop :func:`nspca_core.deflation.project_each`)."""
    r = L.shape[1]
    each = project_each(cov, (k,) * r, lambda sub, kj: em_pca(sub, kj, seed=rng, nonneg=False, restarts=restarts,
                                                                **opts))
    for j, _, x, res in each:
        L[:, j] = x
        results.append(res)
        if callback is not None:
            callback(j + 1, r)


def _quasi_orthogonal(cov: Cov, L: np.ndarray, k: int, min_angle: float, rng, restarts: int, opts: dict,
                      callback, results: list, notes: list) -> bool:
    """Sigg & Buhmann §4 (into the columns of ``L``): every component keeps all features and the
    M-step penalty against the earlier ones grows until every angle is at least ``min_angle``
    (else disjoint support, else the most orthogonal candidate).  Whether every angle is met."""
    n, r = L.shape
    converged_all = True
    cos_max = np.cos(np.deg2rad(min_angle))
    tol, max_iter = float(opts["tol"]), int(opts["max_iter"])
    for j in range(r):
        W0 = _random_nonneg(rng, cov, restarts)
        gamma, chosen, used_gamma = 0.0, None, None
        closest, closest_cos = None, np.inf  # the most orthogonal candidate seen
        for step in range(12):
            mstep = None if j == 0 or gamma == 0 else _penalized_mstep(L[:, :j], gamma)
            r, _ = _em_ascent(cov, W0, k, True, tol, max_iter, mstep=mstep)
            W, vals = r.X, r.values
            ok = np.all(W.T @ L[:, :j] <= cos_max + 1e-9, axis=1) if j else np.ones(restarts, bool)
            if j:
                worst = (W.T @ L[:, :j]).max(axis=1)
                b = int(np.argmin(worst))
                if worst[b] < closest_cos:
                    closest, closest_cos, closest_gamma = W[:, b].copy(), float(worst[b]), gamma
            if ok.any():
                vals = np.where(ok, vals, -np.inf)
                b = int(np.argmax(vals))
                chosen, used_gamma = W[:, b], gamma
                break
            W0 = W  # warm start the stronger penalty
            gamma = 1.0 if gamma == 0 else 4.0 * gamma
        if chosen is None:
            # the penalty cap was hit: fall back to disjoint support (angle 90 degrees)
            used = np.flatnonzero(L[:, :j].sum(axis=1) > 0)
            keep = np.setdiff1d(np.arange(n), used)
            if keep.size == 0:
                # no feature left for a disjoint support: keep the most orthogonal
                # candidate found, and say the angle constraint is not met
                chosen, used_gamma = closest, closest_gamma
                angle = float(np.degrees(np.arccos(np.clip(closest_cos, -1.0, 1.0))))
                converged_all = False
                notes.append(f"component {j + 1}: no rotation reached min_angle={min_angle} "
                             f"degrees and no unused feature remained; kept the most orthogonal "
                             f"candidate (smallest angle to an earlier component {angle:.1f} degrees)")
                warnings.warn(notes[-1], RuntimeWarning, stacklevel=3)  # em_components' caller
            else:
                sub = em_pca(cov.columns(keep), min(k, keep.size), seed=rng, restarts=restarts)
                chosen = np.zeros(n)
                chosen[keep] = sub.x
                notes.append(f"component {j + 1}: penalty cap reached; used disjoint support")
        res = make_result(cov, chosen, method="em", t0=time.perf_counter(),
                           params=dict(k=k, gamma=used_gamma),
                           info=dict(gamma=used_gamma))
        L[:, j] = res.x
        results.append(res)
        if callback is not None:
            callback(j + 1, r)
    return converged_all


def em_components(cov: Cov, n_components: int, k: int, *, nonneg=True, min_angle=None, seed=0,
                  restarts=10, callback=None, **options) -> ComponentsResult:
    """Several EM components: orthogonal by deflation, or quasi-orthogonal.

    Parameters
    ----------
    cov : Cov
    n_components : int in [1, n]
    k : int in [1, n]
        Nonzeros per component.
    nonneg : bool, default True
        False gives the signed sparse variant (the only case with signed loadings).
    min_angle : float in (0, 90] degrees, optional
        None: orthogonal components by deflation — nonnegative (or, with
        ``nonneg=True``, any) orthogonal vectors need disjoint supports, so the
        features used by earlier components are removed ("deflation-remove");
        signed components use Mackey's projection deflation instead.
        Given: the quasi-orthogonal variant of Sigg & Buhmann §4 (nonneg only):
        every component keeps all features, the M-step gets the penalty
        ``γ ||V^T w||²`` against the earlier components V, and γ grows
        (0, 1, 4, 16, ...) until every angle to an earlier component is at least
        ``min_angle``.
    seed, restarts, callback
        As in :func:`em_pca`; ``callback(done, total)`` after each component.
    **options
        ``renormalize``, ``tol``, ``max_iter`` passed to :func:`em_pca`.

    Returns
    -------
    ComponentsResult
        ``method="em"``, ``strategy`` "deflation-remove", "deflation-project"
        or "quasi-orthogonal"; variances from :func:`variance_summary`.  "deflation-remove"
        returns fewer components when the earlier ones used every feature (the reason in
        ``info["stopped_early"]`` and the result's ``summary``).

    Notes
    -----
    Sigg & Buhmann (ICML 2008), §4.  Renormalization is not applied inside the
    quasi-orthogonal variant (it could undo the angle); there the M-step QP is
    solved through its (l-1)-dimensional dual with scipy.
    """
    t0 = time.perf_counter()
    cov = check_cov(cov)
    n = cov.n
    r = check_int(n_components, "n_components", 1, n)
    k = check_k(k, n)
    nonneg = check_bool(nonneg, "nonneg")
    restarts = check_int(restarts, "restarts", 1)
    callback = check_callback(callback)
    opts = dict(renormalize=True, tol=1e-6, max_iter=1000)
    check_options(options, opts, "method 'em'")
    opts.update(options)
    if min_angle is not None:
        min_angle = check_float(min_angle, "min_angle", 0.0, 90.0)
        if not nonneg:
            raise InputError("`min_angle` (quasi-orthogonal EM) needs `nonneg=True`; got nonneg=False")
    rng = as_rng(seed)
    L = np.zeros((n, r))
    results, notes = [], []

    converged_all = True
    info: dict = {}
    if min_angle is None and nonneg:
        strategy = "deflation-remove"
        L = L[:, :_deflation_remove(cov, L, k, rng, restarts, opts, callback, results, info)]
        notes = info.pop("notes", [])
    elif min_angle is None:
        strategy = "deflation-project"
        _deflation_project(cov, L, k, rng, restarts, opts, callback, results)
    else:
        strategy = "quasi-orthogonal"
        converged_all = _quasi_orthogonal(cov, L, k, min_angle, rng, restarts, opts, callback, results,
                                          notes)

    params = dict(n_components=r, k=k, nonneg=nonneg, min_angle=min_angle,
                  random_state=seed_param(seed),
                  restarts=restarts, **opts)
    return components_result(cov, L, method="em", strategy=strategy, params=params, t0=t0, results=results,
                             info=dict(notes=notes, angle_constraint_met=converged_all
                                       if min_angle is not None else None, **info))
