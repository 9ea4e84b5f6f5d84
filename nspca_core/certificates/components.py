"""A certificate for several components with disjoint supports (seed 004's objective).

``OPT_c = max sum_t x_t^T A x_t`` over c unit, nonnegative vectors ``x_t`` with at most
``k_t`` nonzeros each and pairwise disjoint supports.  Bounds (names in ``bounds``):

``ky-fan``
    ``sum of the c largest eigenvalues of A``: disjoint supports make the x_t orthonormal.
``c x single``
    ``c`` times a bound on the best single component at ``max k_t``.
``ky-fan+single``
    ``min_j F_j + (c - j) min(B, F_j / j)`` over j = 0..c, mixing the two (below).
``dnn(c)``
    The doubly-nonnegative dual of the c-component problem:
    ``KyFan_c(A + N - mu 1 1^T - sum_l w_l c_l c_l^T) + mu s_K(1) + sum_l w_l s_K(c_l^2)``
    (``K = sum_t k_t``), and its mix with the single bound as above.
"""

from __future__ import annotations

import math
import time

import numpy as np

from .._common.eig import top_eigvalsh_upper
from .._common.params import check
from .._common.scale import normalized, rescale
from .._common.validation import InputError
from ..operators.cov import Cov
from ..operators.covariance import as_cov
from ..result import Certificate
from . import _settings as S
from ._settings import _EPS
from .bounds import _eig_tol, _gram_eig
from .dnn import DnnState, assemble_dual
from .route import _certify_cov
from .single import _certify_dense


def _mix(F: np.ndarray, B: float, c: int) -> float:
    """``min_{j=0..c} F_j + (c - j) min(B, F_j / j)`` (``F_0 = 0``, the j = 0 term is ``c B``).

    ``F_j`` bounds the sum of the j largest component variances, B each one.

    Proof: sort the variances ``v_1 >= ... >= v_c``.  For every j, ``sum_t v_t = sum_{t <= j}
    v_t + sum_{t > j} v_t <= F_j + (c - j) v_{j+1}``, and ``v_{j+1} <= v_j <= (v_1 + ... +
    v_j) / j <= F_j / j`` (j >= 1) and ``v_{j+1} <= B``.  Rounded up by ``4 c eps``.
    """
    best = c * B
    for j in range(1, c + 1):
        best = min(best, F[j - 1] + (c - j) * min(B, F[j - 1] / j))
    return float(best) * (1 + 4 * (c + 1) * _EPS)


def _kyfan_dnn(A: np.ndarray, c: int, K: int, state: DnnState) -> np.ndarray:
    """``G_j`` for j = 1..c: the c-component DNN dual bound of one dual point, for j components.

    Proof.  Let ``Z = sum_t x_t x_t^T`` (j components, disjoint supports): Z is psd with
    ``Z <= I`` (the x_t are orthonormal), ``tr Z = j``, ``Z >= 0`` entrywise (x_t >= 0), and
    ``1^T Z 1 = sum_t (1^T x_t)^2 <= sum_t |J_t| <= s_K(1) = min(K, n)`` (Cauchy-Schwarz on each
    support, the supports disjoint with at most K members together); for any vector c,
    ``c^T Z c = sum_t (c^T x_t)^2 <= sum_t ||c_{J_t}||^2 <= s_K(c^2)``, the sum of the K
    largest ``c_i^2``.  With ``M = A + N - mu J - sum_l w_l c_l c_l^T`` (N >= 0, mu, w >= 0):
    ``sum_t x_t^T A x_t = <A, Z> = <M, Z> - <N, Z> + mu 1^T Z 1 + sum_l w_l c_l^T Z c_l
    <= KyFan_j(M) + mu s_K(1) + sum_l w_l s_K(c_l^2)``, since ``<N, Z> >= 0`` and
    ``max {<M, Z> : 0 <= Z <= I, tr Z = j} = KyFan_j(M)`` (the sum of its j largest
    eigenvalues).  Each computed eigenvalue is within ``tol`` of an exact one (backward
    stability and Weyl), so ``j tol`` is added.
    """
    n = A.shape[0]
    M = assemble_dual(A, np.asarray(state.N, dtype=float), state.nu, state.C, state.w)
    mu = state.nu / n
    cnt = min(c, n)
    w = top_eigvalsh_upper(M, cnt)
    scale = float(np.linalg.norm(A) + np.linalg.norm(np.asarray(state.N, dtype=float)) + mu * n)
    rhs = mu * min(K, n) * (1 + 2 * _EPS)
    if state.C is not None and state.w is not None and np.any(state.w > 0):
        sq = -np.sort(-(state.C ** 2), axis=0)[: min(K, n)].sum(axis=0) * (1 + 4 * n * _EPS)
        scale += float(state.w @ (state.C ** 2).sum(axis=0))
        rhs += float(state.w @ sq) * (1 + 4 * state.w.size * _EPS)
    tol = 32.0 * n * _EPS * (float(np.linalg.norm(M)) + scale)
    F = np.cumsum(w + tol)
    if cnt < c:  # more components than features: the rest have variance 0
        F = np.concatenate([F, np.full(c - cnt, F[-1])])
    return F + rhs


def _screen_family(A: np.ndarray, c: int, K: int, points: int = 9):
    """The best of the one-parameter dual points ``N(mu)_ij = (mu - A_ij)_+`` (as
    :func:`nspca_core.certificates.dual._screen_init`) for the c-component bound ``G_c``: a
    grid and golden-section steps over mu.  Returns ``(G, state)``."""
    n = A.shape[0]
    dg = np.diag(A)
    off = A - np.diag(dg)
    hi = float(off.max()) if n > 1 else 0.0
    if hi <= 0 or n < 3:
        st = DnnState(np.zeros((n, n)), 0.0)
        return _kyfan_dnn(A, c, K, st), st

    def make(mu):
        N = np.maximum(mu - off, 0.0)
        N[np.diag_indices(n)] = 0.0
        return DnnState(N, mu * n)

    cache = {}

    def h(mu):
        if mu not in cache:
            st = make(mu)
            cache[mu] = (_kyfan_dnn(A, c, K, st), st)
        return float(cache[mu][0][-1])

    grid = np.linspace(0.0, hi, points)
    vals = [h(m) for m in grid]
    j = int(np.argmin(vals))
    a, b = grid[max(j - 1, 0)], grid[min(j + 1, grid.size - 1)]
    g = (math.sqrt(5) - 1) / 2
    for _ in range(6):
        x1, x2 = b - g * (b - a), a + g * (b - a)
        if h(x1) < h(x2):
            b = x2
        else:
            a = x1
    best = min(cache, key=lambda m: cache[m][0][-1])
    return cache[best]


def _check_loadings(L, n: int, ks: list[int]) -> np.ndarray:
    L = np.asarray(L, dtype=float)
    if L.ndim == 1:
        L = L[:, None]
    if L.ndim != 2 or L.shape[0] != n:
        raise InputError(f"`loadings` must have shape (n_features={n}, n_components); got {np.shape(L)}")
    if not np.isfinite(L).all() or (L < 0).any():
        raise InputError("`loadings` must be finite and nonnegative")
    nz = L != 0
    if (nz.sum(axis=1) > 1).any():
        i = int(np.flatnonzero(nz.sum(axis=1) > 1)[0])
        raise InputError(f"`loadings` must have disjoint supports; feature {i} is in several components")
    counts = nz.sum(axis=0)
    for t, (cnt, kt) in enumerate(zip(counts, ks)):
        if cnt == 0:
            raise InputError(f"`loadings` column {t} is zero")
        if cnt > kt:
            raise InputError(f"`loadings` column {t} has {int(cnt)} nonzeros; at most k={kt} allowed")
    return L / np.linalg.norm(L, axis=0)


def components_bound(cov: Cov, ks: list[int], effort: str = "auto", single: float | None = None,
                     state: DnnState | None = None) -> tuple[dict, dict]:
    """Upper bounds on ``OPT_c`` (``c = len(ks)`` components, ``k_t`` nonzeros each, disjoint
    supports) on a validated :class:`Cov`: ``(bounds, info)``.  ``single``: a bound already
    proved on the best single component at ``max k_t`` (else one is computed); ``state``: a DNN
    dual point to try besides the screening family.  Nothing n x n is formed above
    ``S._DENSE_MAX_N`` features (Ky Fan through the m x m Gram of thin data; the single bound
    by the split certificate)."""

    c = len(ks)
    K = int(sum(ks))
    kmax = int(max(ks))
    effort = "auto" if effort == "exact" else effort  # (components(effort="exact") certifies each one exactly)
    info: dict = {"n_components": c, "K": K}
    bounds: dict = {}
    n = cov.n
    dense = n <= S._DENSE_MAX_N
    if dense:
        A = cov.dense()
        cnt = min(c, n)
        w = top_eigvalsh_upper(A, cnt)
        tol = _eig_tol(A)
    elif cov.X is not None and cov.thin:
        w, _, tol = _gram_eig(cov.X, cov.X.shape[0])
        w = w[: min(c, w.size)]
    else:
        raise InputError("the components' certificate needs the data or covariance held in memory "
                         "(dense, or thin data m < n); got an operator")
    F = np.cumsum(np.clip(w, 0.0, None) + tol)
    if F.size < c:
        F = np.concatenate([F, np.full(c - F.size, F[-1])])
    bounds["ky-fan"] = float(F[-1]) * (1 + 4 * (c + 1) * _EPS)
    if single is None:
        if dense:
            cert, st = _certify_dense(cov, kmax, None, effort, None, need_dual=True)
            state = state if state is not None else st
        else:
            cert = _certify_cov(cov, kmax, None, effort)
        single = cert.upper_bound
        info["single_kind"] = cert.kind
    bounds["c x single"] = float(c * single) * (1 + 2 * _EPS)
    bounds["ky-fan+single"] = _mix(F, float(single), c)
    if dense and c > 1:
        cands = [_screen_family(A, c, K)[0]]
        if state is not None and state.N.shape == A.shape:
            cands.append(_kyfan_dnn(A, c, K, state))
        for G in cands:
            val = _mix(np.minimum(G, F), float(single), c)
            bounds["dnn(c)"] = min(bounds.get("dnn(c)", np.inf), val)
    return bounds, info


def certify_components(X=None, *, cov=None, k, loadings=None, n_components=None, effort="auto",
                       center=True) -> Certificate:
    """Upper bound on the total variance of several nonnegative sparse components with disjoint
    supports, and how close given components are to it.

    Parameters
    ----------
    X, cov, center : as in :func:`nspca_core.certify`
    k : int or sequence of int
        Nonzeros per component (one for all, or one per component).
    loadings : array_like of shape (n, c), optional
        Components (nonnegative, disjoint supports, at most k nonzeros each; each column is
        normalized): ``lower = sum_t x_t^T A x_t``.
    n_components : int, optional
        c when no loadings are given (else it must match their columns).
    effort : {"auto", "fast", "full"}
        Of the single-component certificate inside.

    Returns
    -------
    Certificate
        ``upper_bound >= OPT_c``, ``kind`` the winning bound (module docstring), ``lower`` the
        loadings' total variance, ``ratio = lower / upper_bound``; ``k`` is ``max k_t``, ``x``
        the loadings; ``info["n_components"]``; ``bounds["c x single"] / c`` is the single bound used.

    Notes
    -----
    Each bound's proof is in the docstring of the function computing it (:func:`_mix`,
    :func:`_kyfan_dnn`); Ky Fan's maximum principle: ``sum_{t <= c} x_t^T A x_t <=
    lambda_1 + ... + lambda_c`` for orthonormal x_t, and disjoint supports make the x_t
    orthonormal.  Seed paper: Asteris, Papailiopoulos, Kyrillidis & Dimakis, "Sparse PCA via
    bipartite matchings", NIPS 2015 (the objective).
    """
    t0 = time.perf_counter()
    cov_ = as_cov(X, cov, center=check("center", center))
    n = cov_.n
    effort = check("effort", effort)
    if effort == "exact":
        raise InputError("`effort` for several components must be 'auto', 'fast' or 'full'; got 'exact'")
    if loadings is not None:
        L = np.asarray(loadings, dtype=float)
        c = 1 if L.ndim == 1 else (L.shape[1] if L.ndim == 2 else -1)
        if n_components is not None and n_components != c:
            raise InputError(f"`n_components` must match the columns of `loadings` ({c}); got {n_components!r}")
    elif n_components is None:
        raise InputError("give `loadings` or `n_components`")
    else:
        c = n_components
        if isinstance(c, bool) or not isinstance(c, (int, np.integer)) or c < 1:
            raise InputError(f"`n_components` must be an int >= 1; got {n_components!r}")
        c = int(c)
    ks = list(k) if np.ndim(k) else [k] * int(c)
    if len(ks) != c:
        raise InputError(f"`k` must be an int or one per component ({c}); got {len(ks)}")
    ks = [check("k", kt, n_features=n) for kt in ks]
    x = _check_loadings(loadings, n, ks) if loadings is not None else None
    cov_, factors = normalized(cov_)
    bounds, info = components_bound(cov_, ks, effort)
    lower = float(sum(cov_.quad(x[:, t]) for t in range(c))) if x is not None else float("nan")
    kind = min(bounds, key=bounds.get)
    ub = float(bounds[kind])
    if np.isfinite(lower):
        ub = max(ub, lower)
    ratio = lower / ub if ub > 0 and np.isfinite(lower) else (1.0 if ub == 0 else float("nan"))
    cert = Certificate(upper_bound=ub, kind=kind, lower=lower, ratio=float(ratio),
                       optimal=bool(np.isfinite(lower) and ub - lower <= S.OPTIMAL_TOLERANCE * ub),
                       tolerance=S.OPTIMAL_TOLERANCE, seconds=time.perf_counter() - t0, bounds=bounds,
                       k=int(max(ks)), x=x, info=info)
    return rescale(cert, factors)


def joint_bound(C: Cov, loadings: np.ndarray, ks, results, problems, effort: str) -> dict:
    """``{"upper_bound", "bound_kind"}`` for :func:`nspca_core.components` (``certify=True``) when
    its components have disjoint supports of at most ``k_t`` nonzeros, else ``{}``.  The single
    bound is the smallest certificate of a component solved on the whole covariance ``C`` (all k
    equal), else computed."""
    c = loadings.shape[1]
    nz = loadings != 0
    if c == 0 or (nz.sum(axis=1) > 1).any():
        return {}
    ks = [int(kt) for kt in list(ks)[:c]]
    if any(int(cnt) > kt for cnt, kt in zip(nz.sum(axis=0), ks)):
        return {}
    singles = [float(r.upper_bound) for r, p in zip(results, problems)
               if p is C and np.isfinite(r.upper_bound) and r.x.size == C.n and np.count_nonzero(r.x) <= max(ks)]
    single = min(singles) if singles and len(set(ks)) == 1 else None
    held = (C.n <= S._DENSE_MAX_N and (C._A is not None or isinstance(C.X, np.ndarray))) \
        or (isinstance(C.X, np.ndarray) and C.thin)
    total = float(sum(C.quad(loadings[:, t] / np.linalg.norm(loadings[:, t])) for t in range(c)))
    if type(C) is not Cov or not held:
        # an operator (sparse or distributed data): Ky Fan and the single bound from Lanczos
        # eigenvalues (as the operator's single certificates), probabilistic like them
        if single is None or C.n < 3:
            return {}
        _, eig = C.factor(min(c, C.n - 2))
        w = np.asarray(eig, dtype=float)[:c]
        tol = 64 * C.n * _EPS * float(w[0])
        F = np.cumsum(np.clip(w, 0.0, None) + tol)
        if F.size < c:
            F = np.concatenate([F, np.full(c - F.size, F[-1])])
        return {"upper_bound": max(_mix(F, single, c), total), "bound_kind": "ky-fan+single (Lanczos, probabilistic)"}
    bounds, _ = components_bound(C, ks, effort, single=single)
    kind = min(bounds, key=bounds.get)
    return {"upper_bound": max(float(bounds[kind]), total), "bound_kind": kind}
