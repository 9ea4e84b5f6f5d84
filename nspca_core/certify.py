"""Certified optimality: upper bounds on the unknown optimum of nonnegative sparse PCA.

``OPT = max_{x in S_k^n} x^T A x`` with ``S_k^n = {x : ||x|| = 1, x >= 0,
||x||_0 <= k}``.  Every function here returns numbers proven ``>= OPT`` (the
proof of each bound is in the docstring of the function computing it), the
minimum of them is the certificate, and ``lower / upper`` is the certified
fraction of the optimum reached by the best known feasible ``x``.

Bounds (names as they appear in ``Certificate.bounds``):

``lambda1``
    ``lambda_max(A)`` (:func:`_bound_lambda1`).
``exact(k<=2)``
    ``OPT`` itself for ``k <= 2`` by enumerating the ``n(n-1)/2`` pairs.
``paper(d=.)`` / ``paper-enet(d=.)``
    Asteris et al. 2014: ``OPT_d + lambda_{d+1}`` (:func:`paper_bound`).
``residual(d=.)``
    ``OPT_d + min(lambda_{d+1}, max_i sum of the k largest of ((A - A_d)_+)_i)``.
``dnn``
    The doubly-nonnegative dual ``lambda_max(A + N - mu 1 1^T) + mu k``
    (:mod:`nspca_core._dnn`), strengthened by sparsity cuts: for any vectors
    ``c_l`` and weights ``w_l >= 0``, ``OPT <= lambda_max(A + N - mu 1 1^T -
    sum_l w_l c_l c_l^T) + mu k + sum_l w_l beta_k(c_l)`` with
    ``beta_k(c) = max(s_k(c_+^2), s_k(c_-^2)) >= (c^T x)^2`` on ``S_k^n``
    (``s_k`` = sum of the k largest; proof in ``_dnn.cut_rhs``).  The ``c_l``
    come in cutting-plane rounds: the k-support directions
    (:func:`nspca_core._dnn.ksupport_cuts`) of the top Ritz vectors of the dual
    matrix, i.e. of where the relaxation's mass lives.
``dnn(tangent)``
    In :func:`certify_path`: the DNN dual point of another k evaluated at this
    k.  ``M = A + N - mu 1 1^T - sum_l w_l c_l c_l^T`` does not depend on k,
    so one rigorous ``lambda_max(M)`` gives ``lambda_max(M) + mu k + sum_l
    w_l beta_k(c_l) >= OPT_k`` at every k (:func:`nspca_core._dnn.dnn_tangent`).
``anchored``
    Collatz–Wielandt row sums taken from the optimum's largest entry and
    iterated (:mod:`nspca_core._anchor`): with ``rho = x / max_i x_i`` for an
    optimal x, stationarity on its support gives ``(OPT - A_ll) rho_l <=``
    the sum of its ``k - 1`` largest ``(A_lm)_+ rho_m``; bounds on rho that
    fall below 1 everywhere leave no room for the largest entry, refuting
    ``OPT > tau``.  Tight at small k, where the DNN is weakest.
``anchored(branch)``
    The same test with branch and bound on the support for each largest
    entry it leaves standing (:func:`nspca_core._anchor._refute_anchor`):
    nodes fix members and non-members of the support, which sharpens every
    row sum.  Tried at ``lower (1 + OPTIMAL_TOLERANCE/2)`` (a proof of
    optimality), then at ``1.01 lower``.
``split``
    Large n: ``B_S + B_T`` over a screened feature set S and its complement
    (:func:`_certify_split`).
``monotone``
    In :func:`certify_path`: a bound for ``k' >= k`` is a bound for ``k``.

Eigenvalues entering a bound are LAPACK's plus a stated tolerance (see
:func:`nspca_core._dnn.lmax_upper`), never Lanczos/Ritz estimates.
"""

from __future__ import annotations

import math
import numbers
import time

import numpy as np
import scipy.linalg
from scipy.sparse.linalg import eigsh  # at import time: a lazy import costs the first call ~5 eigh

from ._anchor import anchored_branch_bound, anchored_rowsum_bound
from ._common.ascent import ascent, opt_pairs, reweight, tie_key, topk_mask
from ._common.scale import normalized, rescale
from ._cov import Cov, as_cov
from ._dnn import (DnnState, dnn_optimize, dnn_tangent, dnn_value_lam, kkt_init,
                   ksupport_cuts, lmax_upper)
from ._dnn import _lmax_state as _dnn_lmax
from ._validation import InputError, check_int, check_k, check_vector
from .result import Certificate

__all__ = ["certify", "certify_path", "apriori_guarantee", "paper_bound", "EFFORTS",
           "OPTIMAL_TOLERANCE"]

EFFORTS = ("auto", "fast", "full")
# relative gap (upper - lower) <= OPTIMAL_TOLERANCE * upper under which `optimal` is declared
OPTIMAL_TOLERANCE = 1e-5
# above this many features the DNN runs on a screened subset (split bound)
_DENSE_MAX_N = 2500
_EPS = np.finfo(float).eps
# "auto" adds the cut phase of the DNN (doubling its cost) only below this certified ratio
_CUT_BELOW = 0.97
# the DNN optimizer (projected Adam, see nspca_core._dnn.dnn_optimize), relative to max|A_ij|:
# learning rate from a fresh start, from a neighbour's (or a previous round's) dual point, its
# decay per iteration, and the smoothing t (start, end)
_LR = 3e-3
_LR_WARM = 1e-3
_DECAY = 0.99
_T0, _T1 = 1e-3, 1e-4
# at most this many cut vectors carried along a path
_MAX_CUTS = 30
# the anchored row-sum bound (nspca_core._anchor) is tried for 3 <= k <= this, where the DNN
# certifies less than _CUT_BELOW
_ANCHOR_MAX_K = 64
# "auto" adds the rank-2 paper/residual bounds (exact rank-2 spannogram, O(n^3)) only up to this n
_D2_MAX_N = 120
# thin data of numerical rank up to this is certified by the exact spannogram alone
_LOWRANK_MAX_RANK = 3

# effort -> DNN settings.  "fast": a short run from the screening initialization (interactive);
# "auto": up to 120 iterations (+ 3 cutting-plane rounds of 40 while the ratio is below 0.97),
# stopping when the gap is below 1e-3 or progress stalls; "full": up to 2000 (+ 20 rounds of
# 2000) iterations aiming at OPTIMAL_TOLERANCE, plus more lower-bound starts and the expensive
# residual bounds.
_EFFORT = {
    "fast": dict(iters=40, cut_iters=0, cut_rounds=0, check_every=20, stall=1e-4, target_gap=1e-2,
                 split_size=600, ascent_starts=8, branch_nodes=0),
    "auto": dict(iters=80, cut_iters=40, cut_rounds=2, check_every=20, stall=3e-4, target_gap=1e-3,
                 split_size=1500, ascent_starts=24, branch_nodes=0),
    "full": dict(iters=2000, cut_iters=2000, cut_rounds=20, check_every=100, stall=1e-5,
                 target_gap=OPTIMAL_TOLERANCE, split_size=2500, ascent_starts=64, decay=0.998,
                 branch_nodes=3000),
}


# ----------------------------------------------------------------------------- validation
def _check_effort(effort) -> str:
    if not isinstance(effort, str) or effort not in EFFORTS:
        raise InputError(f"`effort` must be one of {EFFORTS}; got {effort!r}")
    return effort


def _check_callback(callback):
    if callback is not None and not callable(callback):
        raise InputError(f"`callback` must be callable(done, total) or None; got {type(callback).__name__}")
    return callback


def _check_x(x, n: int, k: int, name: str = "x") -> np.ndarray:
    """A feasible point: length n, nonnegative, at most k nonzeros, nonzero; returned unit-norm."""
    x = check_vector(x, name)
    if x.size != n:
        raise InputError(f"`{name}` must have length n_features={n}; got length {x.size}")
    if x.min() < 0:
        raise InputError(f"`{name}` must be nonnegative; got min({name}) = {x.min():.3g}")
    nnz = int(np.count_nonzero(x))
    if nnz == 0:
        raise InputError(f"`{name}` must have at least one nonzero entry; got the zero vector")
    if nnz > k:
        raise InputError(f"`{name}` must have at most k={k} nonzeros; got {nnz}")
    return x / np.linalg.norm(x)


# ----------------------------------------------------------------------------- public helpers
def apriori_guarantee(n, k, eigenvalues, d) -> float:
    """The a-priori approximation guarantee of the rank-d spannogram.

    Parameters
    ----------
    n : int >= 1
        Number of features.
    k : int in [1, n]
    eigenvalues : array_like
        ``lambda_1 >= lambda_2 >= ...`` of A, at least ``d + 1`` of them.
    d : int in [1, n]

    Returns
    -------
    float
        ``rho_d >= max{k / (2n), 1 / (1 + 2 (n/k) lambda_{d+1} / lambda_1)}``:
        the exact rank-d solution reaches at least this fraction of OPT.

    Notes
    -----
    Asteris, Papailiopoulos & Dimakis, "Nonnegative Sparse PCA with Provable
    Guarantees", ICML 2014, Theorem 1.  Returns 1.0 when ``lambda_1 = 0``
    (A = 0: every feasible point is optimal).
    """
    n = check_int(n, "n", 1)
    k = check_k(k, n)
    d = check_int(d, "d", 1, n)
    eig = check_vector(eigenvalues, "eigenvalues")
    if eig.size < d + 1 and d < n:
        raise InputError(f"`eigenvalues` must hold at least d+1={d + 1} values; got {eig.size}")
    lam1 = float(eig[0])
    lam_next = float(eig[d]) if eig.size > d else 0.0
    if lam1 <= 0:
        return 1.0
    return float(max(k / (2.0 * n), 1.0 / (1.0 + 2.0 * (n / k) * max(lam_next, 0.0) / lam1)))


def paper_bound(opt_d, eigenvalues, d, eps=None) -> float:
    """The paper's data-dependent bound ``min(lambda_1, OPT_d + lambda_{d+1})``.

    Parameters
    ----------
    opt_d : float >= 0
        ``OPT_d = max_{x in S_k^n} ||V^T x||^2`` (exact, from the spannogram) or,
        when ``eps`` is given, the value ``||V^T x||^2`` the ε-net found.
    eigenvalues : array_like
        ``lambda_1 >= ...`` with at least ``d + 1`` values (``lambda_{d+1} = 0``
        if only d are given and ``d = n``).
    d : int >= 1
    eps : float in (0, 1), optional
        ε-net accuracy: then ``OPT_d <= value / (1 - eps)``, which holds with
        probability ``>= 1 - 1/n`` only (the bound is probabilistic).

    Returns
    -------
    float

    Notes
    -----
    Proof (Asteris et al. 2014, §4): ``A = A_d + (A - A_d)`` with
    ``A - A_d`` psd of top eigenvalue ``lambda_{d+1}``, so for unit x,
    ``x^T A x <= ||V^T x||^2 + lambda_{d+1} <= OPT_d + lambda_{d+1}``; and
    ``x^T A x <= lambda_1`` always.
    """
    try:
        opt_d = float(opt_d)
    except (TypeError, ValueError):
        raise InputError(f"`opt_d` must be a nonnegative number; got {opt_d!r}") from None
    if not np.isfinite(opt_d) or opt_d < 0:
        raise InputError(f"`opt_d` must be a finite number >= 0; got {opt_d!r}")
    d = check_int(d, "d", 1)
    eig = check_vector(eigenvalues, "eigenvalues")
    if eig.size < d:
        raise InputError(f"`eigenvalues` must hold at least d+1={d + 1} values; got {eig.size}")
    if eps is not None:
        if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not 0 < float(eps) < 1:
            raise InputError(f"`eps` must be a float in (0, 1) or None; got {eps!r}")
        opt_d = opt_d / (1.0 - float(eps))
    lam_next = float(eig[d]) if eig.size > d else 0.0
    return float(min(float(eig[0]), opt_d + max(lam_next, 0.0)))


# ----------------------------------------------------------------------------- bounds on dense A
def _eig_tol(A: np.ndarray) -> float:
    """Backward-error allowance for a LAPACK eigendecomposition of A: ``32 n eps ||A||_F``."""
    return 32.0 * A.shape[0] * _EPS * float(np.linalg.norm(A))


def _bound_lambda1(A: np.ndarray) -> float:
    """``OPT <= lambda_max(A)``: every x in S_k^n is a unit vector (Rayleigh quotient)."""
    return lmax_upper(A, 0.0)[0]


def _rowsum_topk(B: np.ndarray, k: int) -> float:
    """``max_i`` of the sum of the k largest entries of row i of ``B_+``.

    Bound for x in S_k^n with support J: ``x^T B x <= x^T B_+ x <= lambda_max((B_+)_JJ)
    <= max_{i in J} sum_{j in J} (B_+)_ij`` (x >= 0; Perron–Frobenius / Collatz:
    the spectral radius of a nonnegative matrix is at most its largest row sum),
    and a row of ``(B_+)_JJ`` sums at most k entries of row i of ``B_+``.
    """
    P = np.maximum(B, 0.0)
    kk = min(k, P.shape[1])
    if kk < P.shape[1]:
        P = np.partition(P, P.shape[1] - kk, axis=1)[:, P.shape[1] - kk:]
    return float(P.sum(axis=1).max())


def _rowsum_topk_all(B: np.ndarray) -> np.ndarray:
    """:func:`_rowsum_topk` for every k = 1..n at once (sort each row once)."""
    P = -np.sort(-np.maximum(B, 0.0), axis=1)
    return np.cumsum(P, axis=1).max(axis=0)


class _Spectral:
    """Top eigenpairs of a dense A (computed once per certificate/path) and OPT_d values."""

    def __init__(self, A: np.ndarray, dmax: int):
        n = A.shape[0]
        cnt = min(n, dmax + 1)
        w, U = scipy.linalg.eigh(A, subset_by_index=[n - cnt, n - 1], check_finite=False)
        self.w = np.clip(w[::-1], 0.0, None)
        self.U = U[:, ::-1]
        self.tol = _eig_tol(A)
        self.A = A

    def lam(self, j: int) -> float:
        """``lambda_{j+1}`` (0-based j) plus tolerance; 0 beyond the rank."""
        return (float(self.w[j]) if j < self.w.size else 0.0) + self.tol

    def V(self, d: int) -> np.ndarray:
        return self.U[:, :d] * np.sqrt(self.w[:d])


def _opt1(V1: np.ndarray, k: int) -> float:
    """Exact OPT_1 = max over S_k^n of (v^T x)^2: ``||v_I||^2`` on I_k^+(±v) (paper §3.1)."""
    v = V1.ravel()
    best = 0.0
    for s in (1.0, -1.0):
        p = np.maximum(s * v, 0.0)
        if k < p.size:
            p = np.partition(p, p.size - k)[p.size - k:]
        best = max(best, float(p @ p))
    return best


def _opt_d_exact(V: np.ndarray, k: int):
    """Exact OPT_d from the spannogram (lazy import), or None when unavailable."""
    if V.shape[1] == 1:
        return _opt1(V, k)
    try:
        from .spannogram import lowrank_nspca
    except ImportError:
        return None
    return float(lowrank_nspca(V, k).variance_lowrank)


def _lowrank_value(spec: _Spectral, d: int, x: np.ndarray) -> float:
    """``||V_d^T x||^2 <= OPT_d`` for a feasible x."""
    z = spec.V(min(d, spec.w.size)).T @ x
    return float(z @ z)


def _paper_and_residual(spec: _Spectral, k: int, ds, rowsums: dict | None = None) -> dict:
    """Bounds 2 and 3 for every d in ``ds`` whose OPT_d is computable exactly.

    ``paper(d)``: ``OPT_d + lambda_{d+1}`` (:func:`paper_bound`).
    ``residual(d)``: ``x^T A x = ||V^T x||^2 + x^T (A - A_d) x <= OPT_d +
    min(lambda_{d+1}, max_i sum of k largest of ((A - A_d)_+)_i)`` (the second
    term by :func:`_rowsum_topk`).  The computed ``V`` is an exact eigen-
    factor of ``A + E`` with ``||E||_2 <= tol`` (backward stability), so each
    bound gets ``tol`` added once more for ``x^T E x``.
    """
    out = {}
    A = spec.A
    n = A.shape[0]
    for d in ds:
        if d >= n or d >= spec.w.size:  # lambda_{d+1} must have been computed
            continue
        V = spec.V(d)
        opt_d = _opt_d_exact(V, k)
        if opt_d is None:
            continue
        lam_next = spec.lam(d)
        out[f"paper(d={d})"] = opt_d + lam_next + spec.tol
        if rowsums is not None and d in rowsums:
            rs = float(rowsums[d][min(k, n) - 1])
        else:
            rs = _rowsum_topk(A - V @ V.T, k)
        out[f"residual(d={d})"] = opt_d + min(lam_next, rs + 8 * n * _EPS * float(np.abs(A).max())) \
            + spec.tol
    return out


# ----------------------------------------------------------------------------- lower bounds
def _ascent_many(cov: Cov, k: int, X0: np.ndarray, iters: int = 60):
    """The best ``(x, value)`` of the batched ascent from the columns of X0, its support then
    reweighted (the best unit vector on J, when one-signed; supports up to 2000).  Any
    feasible point is a valid lower bound; the ascent only makes it a good one."""
    r = ascent(cov.matvec, X0, k, key=tie_key(cov.diag()), max_iter=iters)
    x, f, _ = r.best()
    return reweight(cov, x, f, max_support=2000)


def _starts(cov: Cov, k: int, U: np.ndarray | None, count: int, extra=()) -> np.ndarray:
    """Start points: rank-1 solutions of the given eigen/Ritz vectors (both signs), the top
    coordinates by variance, and any extra points."""
    from .rank1 import _rank1_nspca

    n = cov.n
    cols = [np.asarray(e, dtype=float) for e in extra if e is not None]
    if U is not None:
        for j in range(U.shape[1]):
            for s in (1.0, -1.0):
                cols.append(_rank1_nspca(s * U[:, j], k))
    dg = cov.diag()
    for i in np.argsort(-dg, kind="stable")[: max(count - len(cols), 1)]:
        e = np.zeros(n)
        e[i] = 1.0
        cols.append(e)
    return np.column_stack(cols)


def _fit_lower(cov: Cov, k: int):
    """The project's best answer (``fit(method="auto", certify=False)``), or None if unavailable."""
    try:
        from .api import _fit_cov
    except ImportError:
        return None
    try:
        # d = 3: "auto" runs the exact spannogram only where it is cheap (tiny n); its
        # batched ascent from many starts is what finds the answer
        r = _fit_cov(cov, k, "auto", min(3, cov.n), 0.1, 0, None, {})
    except Exception:  # a solver still being written must not break certification
        return None
    x = np.clip(np.asarray(r.x, dtype=float), 0.0, None)
    if np.count_nonzero(x) == 0 or np.count_nonzero(x) > k:
        return None
    x /= np.linalg.norm(x)
    return x, cov.quad(x)


# ----------------------------------------------------------------------------- DNN driver
def _screen_init(A: np.ndarray, k: int) -> DnnState:
    """The one-parameter family ``N(mu)_ij = (mu - A_ij)_+`` (i != j), mu searched.

    Then ``M = A + N - mu J`` has off-diagonal ``(A_ij - mu)_+`` and diagonal
    ``A_ii - mu``, a soft-thresholding of A; the bound
    ``lambda_max(M) + mu k`` (valid: N >= 0) is minimized over mu by a
    coarse grid and golden-section refinement using cheap Lanczos values
    (only the chosen point matters; it is re-evaluated exactly later).
    """
    n = A.shape[0]
    dg = np.diag(A)
    off = A - np.diag(dg)
    hi = float(off.max()) if n > 1 else 0.0
    lam1 = float(scipy.linalg.eigh(A, subset_by_index=[n - 1, n - 1], eigvals_only=True)[0]) \
        if n > 1 else float(dg[0])
    if k > 1:
        hi = min(hi, (lam1 - float(dg.max())) / (k - 1))
    if hi <= 0 or n < 3:
        return DnnState(np.zeros((n, n)), 0.0)
    # a positive start: M has nonnegative off-diagonal entries, so its top (Perron) eigenvector
    # can be taken nonnegative and is never orthogonal to 1 (a warm start from another mu can be)
    ones = np.ones(n)

    def h(mu):
        M = np.maximum(off - mu, 0.0)
        M[np.diag_indices(n)] = dg - mu
        if n <= 150:  # LAPACK beats Lanczos' overhead on small matrices
            return float(scipy.linalg.eigh(M, subset_by_index=[n - 1, n - 1], eigvals_only=True,
                                           check_finite=False)[0]) + mu * k
        try:
            lam = float(eigsh(M, k=1, which="LA", v0=ones, tol=1e-6, maxiter=2000,
                              return_eigenvectors=False)[0])
        except Exception:
            lam = float(np.linalg.eigvalsh(M)[-1])
        return lam + mu * k

    grid = np.linspace(0.0, hi, 7)
    vals = [h(m) for m in grid]
    j = int(np.argmin(vals))
    a, b = grid[max(j - 1, 0)], grid[min(j + 1, grid.size - 1)]
    g = (math.sqrt(5) - 1) / 2
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = h(c), h(d)
    for _ in range(6):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = h(c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = h(d)
    cands = [(vals[j], grid[j]), (fc, c), (fd, d)]
    mu = min(cands)[1]
    N = np.maximum(mu - off, 0.0)
    N[np.diag_indices(n)] = 0.0
    return DnnState(N, mu * n)


def _branch(A: np.ndarray, k: int, lower: float, upper: float, nodes: int):
    """:func:`nspca_core._anchor.anchored_branch_bound` at ``lower (1 + OPTIMAL_TOLERANCE/2)``
    (proves the answer optimal), then at ``1.01 lower``; None when neither is proved or better
    than ``upper``."""
    if not lower > 0:
        return None
    taus = [t for t in (lower * (1 + OPTIMAL_TOLERANCE / 2), lower * 1.01) if t < upper]
    return anchored_branch_bound(A, k, taus, budget=nodes) if taus else None


def _dnn(A: np.ndarray, k: int, lower: float, effort: str, warm: DnnState | None, x=None,
         callback=None, before_cuts=None):
    """Run the DNN optimizer; returns (value, state, info).  Value is rigorous.

    ``before_cuts(value) -> float``, optional: called before the cutting-plane
    phase with the DNN value so far; returns the best bound known otherwise.
    The cut phase (which doubles the cost) is skipped when that bound already
    certifies the ratio the cuts aim for.
    """
    cfg = _EFFORT[effort]
    n = A.shape[0]
    lam1 = max(float(np.abs(A).max()), 1e-300)
    scale = lam1
    cands = []
    if warm is not None and warm.N.shape == A.shape:
        cands.append(("warm", DnnState(warm.N.copy(), warm.nu, warm.U)))
    else:
        cands.append(("screen", _screen_init(A, k)))
        if x is not None:
            cands.append(("kkt", DnnState(kkt_init(A, x), 0.0)))
    target = 1.0 - cfg["target_gap"]
    best = None
    for name, st in cands:
        v, lam = dnn_value_lam(A, k, st)
        if best is None or v < best[0]:
            best = (v, st, name, lam)
        if name == "warm" and lower < target * v:
            # a neighbour's dual point can be far off at small k: also try a fresh start
            st2 = _screen_init(A, k)
            v2, lam2 = dnn_value_lam(A, k, st2)
            if v2 < best[0]:
                best = (v2, st2, "screen", lam2)
    v0, st, init, lam0 = best
    if lower >= target * v0:
        return v0, st, {"init": init, "iterations": 0, "exact_evaluations": len(cands)}
    lr = (_LR if init != "warm" else _LR_WARM) * scale
    st.U = st.U if st.U is not None else (warm.U if warm is not None else None)
    st, val, info = dnn_optimize(A, k, st, iters=cfg["iters"], t_start=_T0 * scale,
                                 t_end=_T1 * scale, lr=lr, decay=cfg.get("decay", _DECAY),
                                 check_every=cfg["check_every"], target=target, lower=lower,
                                 callback=callback, stall=cfg["stall"], start_lam=lam0)
    info["init"] = init
    info["exact_evaluations"] += len(cands)
    lam = info.pop("lam")
    cut_target = target if effort == "full" else min(target, _CUT_BELOW)
    other = np.inf
    if lower < cut_target * val and before_cuts is not None:
        other = before_cuts(val)
    if lower < cut_target * min(val, other) and st.U is not None and effort != "fast":
        st, val, cinfo = _cut_rounds(A, k, st, val, lower, target, cfg["cut_rounds"],
                                     lam=lam,
                                     iters=cfg["cut_iters"],
                                     check_every=min(cfg["cut_iters"], 2 * cfg["check_every"]),
                                     stall=cfg["stall"], callback=callback,
                                     decay=cfg.get("decay", _DECAY))
        cinfo.pop("lam")
        info["cuts"] = cinfo
        info["exact_evaluations"] += cinfo.pop("exact_evaluations")
    return val, st, info


def _fresh_cuts(st: DnnState, k: int, max_cuts: int = _MAX_CUTS):
    """Cut vectors for a continued DNN run: k-support directions of the current top Ritz vectors
    (weights 0, so the bound can only improve) plus the cuts already in use (largest weights
    first), at most ``max_cuts``."""
    C2 = ksupport_cuts(st.U, k)
    w2 = np.zeros(C2.shape[1])
    if st.C is not None and st.w is not None:
        keep = np.argsort(-st.w)[: max(max_cuts - C2.shape[1], 0)]
        keep = keep[st.w[keep] > 0]
        C2, w2 = np.hstack([st.C[:, keep], C2]), np.concatenate([st.w[keep], w2])
    return C2, w2


def _cut_rounds(A: np.ndarray, k: int, st: DnnState, val: float, lower: float, target: float,
                rounds: int, *, iters: int, check_every: int, stall: float, callback=None,
                min_iters: int | None = None, decay: float = _DECAY, lam: float | None = None):
    """Cutting-plane rounds of the DNN: each round adds cuts ``(c^T x)^2 <= beta_k(c)`` along
    the k-support directions of the current top Ritz vectors (:func:`ksupport_cuts`; where the
    relaxation's mass lives is where a k-sparse x cannot follow) and re-optimizes all dual
    variables from there.  New cuts enter with weight 0, so no round makes the bound worse.
    Stops at ``target`` or when a round gains less than 1e-4 (relative).  ``lam``: the rigorous
    ``lambda_max`` bound of ``st`` when known (saves an exact evaluation per round).  Returns
    ``(state, value, info)``; the value is rigorous."""
    scale = max(float(np.abs(A).max()), 1e-300)
    gains, its, evals = [], 0, 0
    for _ in range(rounds):
        if lower >= target * val or st.U is None:
            break
        C2, w2 = _fresh_cuts(st, k)
        st2 = DnnState(st.N.copy(), st.nu, st.U, C2, w2)
        # the same dual matrix (hence lambda) when every cut in use was kept
        same = st.w is None or np.count_nonzero(w2 > 0) == np.count_nonzero(st.w > 0)
        st2, val2, info2 = dnn_optimize(A, k, st2, iters=iters, t_start=_T0 * scale,
                                        lr=_LR_WARM * scale, decay=decay,
                                        t_end=_T1 * scale, check_every=check_every,
                                        target=target, lower=lower, callback=callback, stall=stall,
                                        min_iters=min_iters, start_lam=lam if same else None)
        its += info2["iterations"]
        evals += info2["exact_evaluations"]
        gains.append(float(max(val - val2, 0.0)))
        if val2 < val:
            st, val, lam = st2, val2, info2["lam"]
        if gains[-1] < 1e-4 * abs(val):
            break
    return st, val, {"rounds": len(gains), "count": 0 if st.C is None else int(st.C.shape[1]),
                     "iterations": its, "gain": float(sum(gains)), "exact_evaluations": evals,
                     "lam": lam}


# ----------------------------------------------------------------------------- certificates
def _finish(bounds: dict, lower: float, x, k: int, t0: float, info: dict,
            probabilistic_names=()) -> Certificate:
    kind = min(bounds, key=bounds.get)
    ub = float(bounds[kind])
    if np.isfinite(lower):
        ub = max(ub, lower)  # rounding only: a valid bound is never below a feasible value
    ratio = float(lower / ub) if ub > 0 and np.isfinite(lower) else (1.0 if ub == 0 else float("nan"))
    optimal = bool(np.isfinite(lower) and ub - lower <= OPTIMAL_TOLERANCE * abs(ub))
    return Certificate(upper_bound=ub, kind=kind, lower=float(lower), ratio=ratio, optimal=optimal,
                       tolerance=OPTIMAL_TOLERANCE, seconds=time.perf_counter() - t0,
                       bounds={kname: float(v) for kname, v in bounds.items()},
                       probabilistic=kind in probabilistic_names, k=int(k), x=x, info=info)


def _certify_dense(cov: Cov, k: int, x, effort: str, callback, *, warm=None, spec=None,
                   rowsums=None, lower_hint=None, use_fit=True):
    """Certificate on a dense covariance (n <= _DENSE_MAX_N).  Returns (Certificate, DnnState)."""
    t0 = time.perf_counter()
    cfg = _EFFORT[effort]
    A = cov.dense()
    n = A.shape[0]
    info: dict = {"n": n}
    if spec is None:
        spec = _Spectral(A, 3 if effort == "full" else 2)
    bounds = {"lambda1": float(spec.w[0]) + spec.tol}
    # ---- lower bound
    if x is not None:
        lower = cov.quad(x)
        info["lower_source"] = "given"
    else:
        found = []
        if use_fit:
            r = _fit_lower(cov, k)
            if r is not None:
                found.append((r[1], r[0], "fit(auto)"))
        extra = [lower_hint] if lower_hint is not None else []
        X0 = _starts(cov, k, spec.U[:, : min(3, spec.U.shape[1])], cfg["ascent_starts"], extra)
        xa, fa = _ascent_many(cov, k, X0)
        found.append((fa, xa, "ascent"))
        fa_, xa_, src = max(found, key=lambda t: t[0])
        x, lower = xa_, fa_
        info["lower_source"] = src
    if k <= 2:
        opt, xo = opt_pairs(Cov(None, A), k)
        bounds["exact(k<=2)"] = opt * (1 + 8 * _EPS) + 8 * _EPS * float(np.abs(A).max())
        if info.get("lower_source") != "given" and opt > lower:
            x, lower = xo, cov.quad(xo)
            info["lower_source"] = "exact(k<=2)"
    # d = 2 needs the O(n^3) exact rank-2 spannogram: in "auto" only where that is cheap
    ds = [1, 2, 3] if effort == "full" else ([1, 2] if n <= _D2_MAX_N else [1])
    if warm is not None or effort == "fast":
        ds = [1]  # along a path or interactively: d = 1 is O(n); d >= 2 enumerations cost more
    target = 1.0 - cfg["target_gap"]
    # OPT_d >= ||V_d^T x||^2: a paper bound for d >= 2 (an exact spannogram) is computed only
    # when it can still certify the target; the DNN is the tighter bound otherwise
    ds = [d for d in ds if d == 1 or target * (_lowrank_value(spec, d, x) + spec.lam(d)) <= lower]
    bounds.update(_paper_and_residual(spec, k, ds, rowsums))
    # ---- DNN (skip when a cheaper bound already certifies to the target gap)
    best_now = min(bounds.values())
    state = warm
    if lower < (1 - cfg["target_gap"]) * best_now:
        def anchored(val):
            # where the DNN is weak (small k, ratio below _CUT_BELOW) the anchored row sums
            # often are not: try them before paying for cutting planes
            if lower < _CUT_BELOW * val and 3 <= k <= _ANCHOR_MAX_K:
                t1 = time.perf_counter()
                tb = anchored_rowsum_bound(A, k, lower, min(val, best_now))
                info["anchored_seconds"] = time.perf_counter() - t1
                if tb is not None:
                    bounds["anchored"] = tb
                if cfg["branch_nodes"]:
                    tb = _branch(A, k, lower, min(bounds.values()), cfg["branch_nodes"])
                    if tb is not None:
                        bounds["anchored(branch)"] = tb
            return min(bounds.values())

        val, state, dinfo = _dnn(A, k, lower, effort, warm, x=x, callback=callback,
                                 before_cuts=anchored)
        bounds["dnn"] = val
        info["dnn"] = dinfo
        # the DNN's Ritz vectors are good starts for the lower bound too
        if info.get("lower_source") != "given" and state is not None and state.U is not None:
            X0 = _starts(cov, k, state.U[:, :4], 8, [x])
            xb, fb = _ascent_many(cov, k, X0)
            if fb > lower:
                x, lower = xb, fb
                info["lower_source"] = "ascent(dnn)"
    info["eig_tolerance"] = spec.tol
    if callback is not None:
        callback(1, 1)
    return _finish(bounds, lower, x, k, t0, info), state


def _thin_lambdas(XT: np.ndarray, m: int, count: int):
    """Top eigenvalues (+ tolerance) and eigenvectors of ``X_T^T X_T / m`` through the Gram."""
    G = (XT @ XT.T) / m
    w, P = np.linalg.eigh(G)
    w, P = np.clip(w[::-1], 0.0, None), P[:, ::-1]
    tol = 32.0 * (G.shape[0] + XT.shape[1]) * _EPS * (float(np.linalg.norm(G)) + float(np.trace(G)))
    cnt = min(count, w.size)
    with np.errstate(divide="ignore", invalid="ignore"):
        sc = np.where(w[:cnt] > 0, 1.0 / np.sqrt(w[:cnt] * m), 0.0)
    U = (XT.T @ P[:, :cnt]) * sc
    return w, U, tol


def _bound_rest(cov: Cov, T: np.ndarray, k: int, effort: str) -> dict:
    """Bounds on ``B_T = max x_T^T A_TT x_T`` over unit, nonnegative, k-sparse x_T.

    ``trace-k``: ``lambda_max(A_JJ) <= tr(A_JJ)`` (A_JJ psd) ``<=`` the sum of the
    k largest variances in T.  ``lambda1``, ``paper(d=1)``: as for A, on A_TT
    (through ``X_T`` when data is held, never forming T x T).  ``rowsum`` /
    ``residual(d=1)`` (effort "full" only, O(m |T|^2) in row blocks):
    :func:`_rowsum_topk` on ``A_TT`` and on ``A_TT - A_1``.
    """
    kT = min(k, T.size)
    dg = cov.diag()[T]
    top = np.partition(dg, dg.size - kT)[dg.size - kT:] if kT < dg.size else dg
    out = {"trace-k": float(top.sum()) * (1 + 4 * T.size * _EPS)}
    if cov.X is not None and cov.X.shape[0] < T.size:
        XT = cov.X[:, T]
        m = cov.X.shape[0]
        w, U, tol = _thin_lambdas(XT, m, 2)
        row_block = lambda rows: (XT[:, rows].T @ XT) / m  # noqa: E731
    else:
        ATT = cov.submatrix(T)
        sp = _Spectral(ATT, 1)
        w, U, tol = sp.w, sp.U, sp.tol
        row_block = lambda rows: ATT[rows]  # noqa: E731
    lam1 = float(w[0]) + tol
    lam2 = (float(w[1]) if w.size > 1 else 0.0) + tol
    out["lambda1"] = lam1
    v1 = U[:, 0] * math.sqrt(w[0])
    opt1 = _opt1(v1[:, None], kT)
    out["paper(d=1)"] = opt1 + lam2 + tol
    if effort == "full":
        rs0, rs1 = 0.0, 0.0
        for s in range(0, T.size, 512):
            rows = np.arange(s, min(s + 512, T.size))
            B = row_block(rows)
            rs0 = max(rs0, _rowsum_topk(B, kT))
            rs1 = max(rs1, _rowsum_topk(B - np.outer(v1[rows], v1), kT))
        slack = 8 * T.size * _EPS * float(dg.max())
        out["rowsum"] = rs0 + slack
        out["residual(d=1)"] = opt1 + min(lam2, rs1 + slack) + tol
    return out


def _certify_split(cov: Cov, k: int, x, effort: str, callback) -> Certificate:
    """Large n: DNN on a screened set S, cheap bounds on the rest T.

    Bound ``OPT <= B_S + B_T`` where ``B_S >= max`` of ``y^T A_SS y`` and
    ``B_T >= max`` of ``z^T A_TT z`` over unit, nonnegative, k-sparse y, z.

    Proof: write ``A = Y^T Y`` (``Y = X / sqrt(m)``, or any square root) and
    ``x = x_S + x_T`` with ``a = ||x_S||``, ``b = ||x_T||``, ``a^2 + b^2 = 1``.
    ``x_S / a`` is unit, nonnegative and has at most k nonzeros, so
    ``||Y x_S|| = a ||Y (x_S/a)|| <= a sqrt(B_S)``; likewise ``||Y x_T|| <=
    b sqrt(B_T)``.  Then ``x^T A x = ||Y x_S + Y x_T||^2 <= (a sqrt(B_S) +
    b sqrt(B_T))^2 <= (a^2 + b^2)(B_S + B_T) = B_S + B_T`` by the triangle and
    Cauchy–Schwarz inequalities.  (This is never worse than the issue's
    ``(sqrt(B_S) + sqrt(B_T))^2``.)

    S: the ``split_size`` features of largest variance plus the support of the
    best known x (so the lower bound is also feasible on S).
    """
    t0 = time.perf_counter()
    cfg = _EFFORT[effort]
    n = cov.n
    info: dict = {"n": n}
    # ---- lower bound (through X; never n x n)
    if x is not None:
        lower = cov.quad(x)
        info["lower_source"] = "given"
    else:
        found = []
        r = _fit_lower(cov, k)
        if r is not None:
            found.append((r[1], r[0], "fit(auto)"))
        if cov.X is not None and cov.thin:
            w, U, _ = _thin_lambdas(cov.X, cov.X.shape[0], 3)
        else:
            U = None
        X0 = _starts(cov, k, U, cfg["ascent_starts"])
        xa, fa = _ascent_many(cov, k, X0)
        found.append((fa, xa, "ascent"))
        lower, x, src = max(found, key=lambda t: t[0])
        info["lower_source"] = src
    dg = cov.diag()
    s = min(n, max(cfg["split_size"], 2 * k))
    order = np.argsort(-dg, kind="stable")
    Smask = np.zeros(n, dtype=bool)
    Smask[order[:s]] = True
    Smask[np.flatnonzero(x)] = True
    S, T = np.flatnonzero(Smask), np.flatnonzero(~Smask)
    # whole-problem bounds (cheap, thin)
    bounds = {}
    if cov.X is not None and cov.thin:
        w, U, tol = _thin_lambdas(cov.X, cov.X.shape[0], 2)
    else:
        sp = _Spectral(cov.dense(), 1)
        w, U, tol = sp.w, sp.U, sp.tol
    bounds["lambda1"] = float(w[0]) + tol
    v1 = U[:, 0] * math.sqrt(w[0])
    bounds["paper(d=1)"] = _opt1(v1[:, None], k) + (float(w[1]) if w.size > 1 else 0.0) + 2 * tol
    # ---- B_S by the dense machinery on A_SS (x restricted to S is feasible there)
    covS = Cov(A=cov.submatrix(S))
    xS = x[S] / np.linalg.norm(x[S])
    kS = min(k, S.size)
    certS, _ = _certify_dense(covS, kS, xS, effort, callback)
    B_S = certS.upper_bound
    # ---- B_T
    if T.size:
        bt = _bound_rest(cov, T, k, effort)
        B_T = min(bt.values())
    else:
        bt, B_T = {}, 0.0
    bounds["split"] = B_S + B_T
    info.update({"S": S, "split_S": int(S.size), "split_T": int(T.size), "B_S": B_S, "B_S_kind": certS.kind,
                 "B_S_bounds": certS.bounds, "B_T": B_T, "B_T_bounds": bt,
                 "dnn": certS.info.get("dnn")})
    if callback is not None:
        callback(1, 1)
    return _finish(bounds, lower, x, k, t0, info)


def _certify_lowrank(cov: Cov, k: int, x, callback, max_rank: int | None = None):
    """Data of numerical rank ``r <= max_rank`` (thin, through the m x m Gram): the exact
    spannogram on the rank-r factor V is the answer and its own certificate.

    ``A = V V^T + R`` with ``||R||_2 = lambda_{r+1} <= tol`` (zero to rounding) and V the
    computed eigen-factor (backward error ``tol``), so ``x^T A x <= OPT_r + lambda_{r+1} +
    2 tol`` for every feasible x, with ``OPT_r`` exact (:func:`nspca_core.lowrank_nspca`).
    Returns None when the rank is above ``max_rank``.  Memory O(n r); nothing n x n.
    """
    t0 = time.perf_counter()
    max_rank = _LOWRANK_MAX_RANK if max_rank is None else max_rank
    m = cov.X.shape[0]
    w, _, tol = _thin_lambdas(cov.X, m, 0)
    r = int(np.count_nonzero(w > tol))
    if r > max_rank:
        return None
    _, U, _ = _thin_lambdas(cov.X, m, max(r, 1))
    V = U[:, : max(r, 1)] * np.sqrt(w[: max(r, 1)])
    from .spannogram import lowrank_nspca

    res = lowrank_nspca(V, k)
    lam_next = float(w[r]) if r < w.size else 0.0
    bounds = {f"paper(d={max(r, 1)})": float(res.variance_lowrank) * (1 + 1e-12) + lam_next + 2 * tol,
              "lambda1": float(w[0]) + tol}
    info: dict = {"n": cov.n, "rank": r}
    if x is not None:
        lower = cov.quad(x)
        info["lower_source"] = "given"
    else:
        x, lower = res.x, cov.quad(res.x)
        info["lower_source"] = f"spannogram(d={max(r, 1)})"
    if callback is not None:
        callback(1, 1)
    return _finish(bounds, lower, x, k, t0, info)


def _certify_cov(cov: Cov, k, x=None, effort="auto", callback=None) -> Certificate:
    """Certificate on a validated :class:`Cov` (``fit`` calls this with its answer x).

    ``k`` and ``x`` are checked here too (cheap) since callers are internal.
    """
    k = check_k(k, cov.n)
    effort = _check_effort(effort)
    _check_callback(callback)
    if x is not None:
        x = _check_x(x, cov.n, k)
    if cov.thin:
        cert = _certify_lowrank(cov, k, x, callback)
        if cert is not None:
            return cert
    if cov.n > _DENSE_MAX_N:
        return _certify_split(cov, k, x, effort, callback)
    cert, _ = _certify_dense(cov, k, x, effort, callback)
    return cert


def certify(X=None, *, cov=None, k, x=None, effort="auto", callback=None) -> Certificate:
    """Upper bound on the optimum of nonnegative sparse PCA, and how close ``x`` is to it.

    Parameters
    ----------
    X : array_like of shape (m, n), optional
        Data used as given (center first); the covariance is ``A = X^T X / m``.
    cov : array_like of shape (n, n), optional
        The covariance (symmetric psd).  Give exactly one of X, cov.
    k : int in [1, n]
    x : array_like of shape (n,), optional
        A feasible point (nonnegative, at most k nonzeros; it is normalized):
        ``lower = x^T A x``.  When omitted the best of the project's
        ``fit(method="auto")`` and a nonnegative truncated-power ascent is used.
    effort : {"auto", "fast", "full"}, default "auto"
        "fast": d = 1 bounds and a 40-iteration DNN run from its screening
        initialization (interactive use); "auto": d = 1 bounds (d <= 2 for
        n <= 120, where the exact rank-2 spannogram is cheap) and up to 120
        DNN iterations, stopping at a 1e-3 relative gap or when progress
        stalls, then (only while the ratio is below 0.97) up to 60 more with
        sparsity cuts; "full": d <= 3, residual bounds on the split remainder,
        up to 2000 + 2000 DNN iterations aiming at ``OPTIMAL_TOLERANCE``.
    callback : callable(done, total), optional
        Progress (DNN iterations).

    Returns
    -------
    Certificate
        ``upper_bound >= OPT`` (with probability ``>= 1 - 1/n`` only when
        ``probabilistic``), ``kind`` the winning bound, ``bounds`` all bounds
        tried, ``lower``/``ratio``/``optimal`` (``optimal`` when ``upper -
        lower <= OPTIMAL_TOLERANCE * upper`` = 1e-5 relative).

    Notes
    -----
    See the module docstring for the bounds, each proven in its function's
    docstring.  Forms the n x n covariance only when ``n <= 2500``; above,
    the split bound forms ``|S| x |S|`` (``|S| <= 2500``) and works through
    ``X`` elsewhere.  Seed paper: Asteris, Papailiopoulos & Dimakis, ICML
    2014; the DNN relaxation follows d'Aspremont et al., SIAM Review 2007,
    with nonnegativity.
    """
    cov_ = as_cov(X, cov)
    k = check_k(k, cov_.n)
    effort = _check_effort(effort)
    _check_callback(callback)
    if x is not None:
        x = _check_x(x, cov_.n, k)
    cov_, factors = normalized(cov_)  # entries far from 1: a power-of-2 copy (scale-free)
    return rescale(_certify_cov(cov_, k, x, effort, callback), factors)


def _check_ks(ks, n: int) -> list[int]:
    try:
        items = list(ks)
    except TypeError:
        raise InputError(f"`ks` must be a sequence of ints in [1, n_features={n}]; got {ks!r}") from None
    if not items:
        raise InputError("`ks` must be a non-empty sequence of ints; got an empty one")
    out = []
    for v in items:
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or not 1 <= int(v) <= n:
            raise InputError(f"`ks` must hold ints in [1, n_features={n}]; got {v!r}")
        out.append(int(v))
    return out


def _ascent_batch(cov: Cov, kc: np.ndarray, X0: np.ndarray, iters: int = 50):
    """The batched ascent with a different k per column: ``(X, values)``, the best iterate of
    each column (feasible for its k) and ``x^T A x``."""
    r = ascent(cov.matvec, X0, kc, key=tie_key(cov.diag()), max_iter=iters)
    return r.X, r.values


def _rank1_cols(u: np.ndarray, ks: np.ndarray) -> np.ndarray:
    """Rank-1 solutions ``I_k^+(u)`` (normalized) for each k in ks, as columns."""
    M = topk_mask(np.repeat(u[:, None], ks.size, axis=1), ks) & (u[:, None] > 0)
    return np.where(M, u[:, None], 0.0)


def _path_lower(cov: Cov, uniq: np.ndarray, U: np.ndarray, given: dict):
    """Feasible points for every k at once: batched ascent from rank-1 starts of the top
    eigenvectors, then from the neighbours' answers (k-1's is feasible for k, k+1's truncated).
    Returns ``(X, values)`` with one column per k in ``uniq``."""
    cols, kc = [], []
    for j in range(min(2, U.shape[1])):
        for s in (1.0, -1.0):
            cols.append(_rank1_cols(s * U[:, j], uniq))
            kc.append(uniq)
    dg = cov.diag()
    e = np.zeros((cov.n, uniq.size))
    e[int(np.argmax(dg)), :] = 1.0
    cols.append(e)
    kc.append(uniq)
    X, v = _ascent_batch(cov, np.concatenate(kc), np.hstack(cols))
    p = uniq.size
    X, v = X.reshape(cov.n, -1, p), v.reshape(-1, p)
    j = np.argmax(v, axis=0)
    bx, bv = X[:, j, np.arange(p)], v[j, np.arange(p)]
    # round 2: neighbours' answers as starts
    if p > 1:
        starts = np.hstack([np.roll(bx, 1, axis=1), np.roll(bx, -1, axis=1)])
        X2, v2 = _ascent_batch(cov, np.concatenate([uniq, uniq]), starts)
        X2, v2 = X2.reshape(cov.n, 2, p), v2.reshape(2, p)
        for r in range(2):
            upd = v2[r] > bv
            bx[:, upd], bv[upd] = X2[:, r, upd], v2[r, upd]
    # a caller's point is the lower bound at its k (as in `certify(x=...)`)
    for i, k in enumerate(uniq):
        g = given.get(int(k))
        if g is not None:
            bx[:, i], bv[i] = g, cov.quad(g)
    return bx, bv


def _path_cheap_bounds(spec: "_Spectral", A: np.ndarray, uniq: np.ndarray, rowsum1: np.ndarray) -> dict:
    """lambda1, paper(d=1), residual(d=1) (and exact(k<=2)) for every k at once (same proofs as
    :func:`_paper_and_residual`: ``OPT_1(k)`` is the rank-1 value on the k largest entries of
    ``+-sqrt(lambda_1) u_1``, see :func:`_opt1`)."""
    n = A.shape[0]
    out = {"lambda1": np.full(uniq.size, float(spec.w[0]) + spec.tol)}
    if n >= 2 and spec.w.size >= 2:
        v = spec.V(1).ravel()
        opt1 = np.zeros(n)
        for sg in (1.0, -1.0):
            q = -np.sort(-(np.maximum(sg * v, 0.0) ** 2))
            opt1 = np.maximum(opt1, np.cumsum(q))
        opt1 = opt1[uniq - 1] * (1 + 4 * n * _EPS)
        lam2 = spec.lam(1)
        out["paper(d=1)"] = opt1 + lam2 + spec.tol
        slack = 8 * n * _EPS * float(np.abs(A).max())
        out["residual(d=1)"] = opt1 + np.minimum(lam2, rowsum1[uniq - 1] + slack) + spec.tol
    return out


def certify_path(X=None, *, cov=None, ks, xs=None, effort="auto", callback=None) -> list[Certificate]:
    """One certificate per k in ``ks``, warm-started along k.

    Parameters
    ----------
    X, cov : as in :func:`certify`
    ks : sequence of int in [1, n]
    xs : sequence of array_like or None, optional
        Feasible points, one per k (entries may be None).
    effort : {"auto", "fast", "full"}
    callback : callable(done, total), optional
        Called after each DNN run (``total`` is an estimate) and at the end.

    Returns
    -------
    list of Certificate, in the order of ``ks``.

    Notes
    -----
    Facts that make the path far cheaper than one certificate per k:

    * ``S_k^n`` grows with k: a point feasible for ``k' <= k`` is feasible for k
      (lower bounds carry upward) and a bound for ``k' >= k`` is a bound for k
      (``monotone``).
    * One DNN dual point certifies every k (``dnn(tangent)``,
      :func:`nspca_core._dnn.dnn_tangent`): ``M = A + N - mu J - sum w c c^T``
      does not depend on k, so its one rigorous ``lambda_max`` gives the bound
      ``lambda_max(M) + mu k + sum_l w_l beta_k(c_l)`` at every k.
    * The DNN value is concave in k, so the lower envelope of the tangents of
      a few k's is close to it everywhere.  The DNN therefore runs on a
      coarse geometric grid of k, then only on midpoints of intervals where
      the envelope is more than a small relative amount above the chord of
      the bounds at the interval's ends (where a DNN run could still gain),
      each run warm-started from the dual point of the nearest k already done.
    * The feasible points of all k come from one batched truncated-power
      ascent (a different k per column), restarted from the neighbours'
      answers.  The eigenpairs and the row sums of ``A - A_1`` are computed
      once for all k.
    """
    cov_, factors = normalized(as_cov(X, cov))  # entries far from 1: a power-of-2 copy
    n = cov_.n
    ks = _check_ks(ks, n)
    effort = _check_effort(effort)
    _check_callback(callback)
    if xs is not None:
        xs = list(xs)
        if len(xs) != len(ks):
            raise InputError(f"`xs` must have one entry per k (len(ks)={len(ks)}); got {len(xs)}")
        xs = [None if v is None else _check_x(v, n, k, "xs[%d]" % i) for i, (v, k) in enumerate(zip(xs, ks))]
    else:
        xs = [None] * len(ks)
    uniq = sorted(set(ks))
    given = {}
    for k, v in zip(ks, xs):
        if v is not None and (k not in given or cov_.quad(v) > cov_.quad(given[k])):
            given[k] = v
    certs: dict[int, Certificate] = {}
    total = len(uniq)
    if n > _DENSE_MAX_N:
        for i, k in enumerate(uniq):
            certs[k] = _certify_split(cov_, k, given.get(k), effort, None)
            if callback is not None:
                callback(i + 1, total)
        return [rescale(c, factors) for c in _carry(ks, certs, given)]
    return [rescale(c, factors) for c in _carry(ks, _path_dense(cov_, np.array(uniq), given, effort,
                                                                callback), given)]


# path settings per effort: DNN iterations per k, stall threshold, refinement threshold delta
_PATH = {
    "fast": dict(iters=30, cut_iters=0, cut_rounds=0, check_every=10, stall=1e-3, min_iters=20,
                 delta=1e-2, grid=2.0, polish_runs=0, polish_iters=0, polish_rounds=0,
                 target_gap=1e-2, branch_nodes=0),
    "auto": dict(iters=100, cut_iters=60, cut_rounds=2, check_every=10, stall=3e-4, min_iters=20,
                 delta=1e-3, grid=2 ** 0.5, polish_runs=14, polish_iters=200, polish_rounds=3,
                 target_gap=OPTIMAL_TOLERANCE, branch_nodes=300),
    "full": dict(iters=600, cut_iters=300, cut_rounds=10, check_every=50, stall=1e-5, min_iters=200,
                 delta=2e-4, grid=2 ** 0.25, polish_runs=40, polish_iters=300, polish_rounds=10,
                 decay=0.998, target_gap=OPTIMAL_TOLERANCE, branch_nodes=3000),
}


def _path_dense(cov: Cov, uniq: np.ndarray, given: dict, effort: str, callback) -> dict:
    """:func:`certify_path` on a dense covariance; returns ``{k: Certificate}``."""
    t_all = time.perf_counter()
    pcfg = _PATH[effort]
    A = cov.dense()
    n = A.shape[0]
    p = uniq.size
    pos = {int(k): i for i, k in enumerate(uniq)}
    spec = _Spectral(A, 1)
    rowsum1 = _rowsum_topk_all(A - spec.V(1) @ spec.V(1).T)
    # ---- lower bounds for all k, then carried upward (feasible for k' <= k is feasible for k)
    LX, lows = _path_lower(cov, uniq, spec.U, given)
    src = ["ascent"] * p
    for i, k in enumerate(uniq):
        if int(k) in given:
            src[i] = "given"
    cheap = _path_cheap_bounds(spec, A, uniq, rowsum1)
    exact = {}
    for k in uniq[uniq <= 2]:
        opt, xo = opt_pairs(Cov(None, A), int(k))
        exact[int(k)] = opt * (1 + 8 * _EPS) + 8 * _EPS * float(np.abs(A).max())
        i = pos[int(k)]
        if src[i] != "given" and opt > lows[i]:
            LX[:, i], lows[i] = xo, cov.quad(xo)
            src[i] = "exact(k<=2)"
    ub_cheap = np.minimum.reduce(list(cheap.values()))
    for k, v in exact.items():
        ub_cheap[pos[k]] = min(ub_cheap[pos[k]], v)
    env = np.full(p, np.inf)        # lower envelope of the DNN tangents
    own = {}                        # k -> (value, dnn info) of the DNN run at k
    states: dict[int, DnnState] = {}
    target = 1.0 - pcfg["target_gap"]
    scale = max(float(np.abs(A).max()), 1e-300)

    def upper():
        u = np.minimum(ub_cheap, env)
        return np.minimum.accumulate(u[::-1])[::-1]  # monotone: a bound for k' >= k holds at k

    polished: set = set()

    def run(k: int, polish: bool = False):
        i = pos[k]
        if lows[i] >= target * upper()[i]:
            return
        t0 = time.perf_counter()
        if polish:
            st0, lam0 = states[k]
            st, val, dinfo = _cut_rounds(A, k, st0, own[k][0], float(lows[i]), target, pcfg["polish_rounds"],
                                         iters=pcfg["polish_iters"], check_every=pcfg["check_every"],
                                         stall=pcfg["stall"] / 3, min_iters=pcfg["polish_iters"] // 2,
                                         decay=pcfg.get("decay", _DECAY), lam=lam0)
            lam = dinfo.pop("lam")
            dinfo["init"] = "polish"
            prev = own[k]
            dinfo = {**prev[1], "polish": dinfo}
            finish_run(k, st, lam, dinfo, t0, prev[2])
            return
        # start from the nearest done k's dual point (its value at this k is its tangent,
        # already certified); the screening family at this k (15 eigenvalues) is tried too only
        # when that tangent is far from the lower bound, or when there is none yet
        st, init, lam = None, "screen", None
        if states:
            near = min(states, key=lambda kk: (abs(kk - k), kk))
            st0, lam0 = states[near]
            v_warm = float(dnn_tangent(lam0, st0, n, np.array([k]))[0])
            st = DnnState(st0.N.copy(), st0.nu, st0.U, st0.C, None if st0.w is None else st0.w.copy())
            init, lam = f"warm(k={near})", lam0  # the same dual matrix as st0
        if st is None or lows[i] < _CUT_BELOW * v_warm:
            st_s = _screen_init(A, k)
            v_screen, lam_s = dnn_value_lam(A, k, st_s)
            if st is None or v_screen < v_warm:
                st, init, lam = st_s, "screen", lam_s
        lr = (_LR if init == "screen" else _LR_WARM) * scale
        st, val, dinfo = dnn_optimize(A, k, st, iters=pcfg["iters"], t_start=_T0 * scale,
                                      lr=lr, decay=pcfg.get("decay", _DECAY),
                                      t_end=_T1 * scale, check_every=pcfg["check_every"],
                                      target=target, lower=float(lows[i]), stall=pcfg["stall"],
                                      min_iters=pcfg["min_iters"], push=_CUT_BELOW,
                                      push_stall=pcfg["stall"] / 3, t_iters=pcfg["min_iters"],
                                      start_lam=lam)
        lam = dinfo.pop("lam")
        if pcfg["cut_iters"] and st.U is not None and lows[i] < min(target, _CUT_BELOW) * val:
            # cutting-plane rounds along the k-support directions of this k's top Ritz vectors,
            # keeping the inherited cuts still in use (see _cut_rounds)
            st, val, cinfo = _cut_rounds(A, k, st, val, float(lows[i]), target, pcfg["cut_rounds"],
                                         iters=pcfg["cut_iters"], check_every=pcfg["check_every"],
                                         stall=pcfg["stall"], min_iters=pcfg["cut_iters"] * 2 // 3,
                                         decay=pcfg.get("decay", _DECAY), lam=lam)
            cinfo.pop("exact_evaluations")
            lam = cinfo.pop("lam")
            dinfo["cuts"] = cinfo
        dinfo["init"] = init
        finish_run(k, st, lam, dinfo, t0, 0.0)

    def finish_run(k, st, lam, dinfo, t0, spent):
        """Record a DNN run's dual point at k (``lam``: its rigorous lambda_max bound, or None)."""
        i = pos[k]
        if lam is None:
            lam, _ = _dnn_lmax(A, st)
        tang = dnn_tangent(lam, st, n, uniq)
        np.minimum(env, tang, out=env)
        if k in own and own[k][0] <= tang[i]:  # a polish that did not help: keep the old point
            own[k] = (own[k][0], dinfo, spent + time.perf_counter() - t0)
            return
        states[k] = (st, lam)
        own[k] = (float(tang[i]), dinfo, spent + time.perf_counter() - t0)
        # the dual's Ritz vectors are good ascent starts at this k
        if src[i] != "given" and st.U is not None:
            X0 = np.column_stack([LX[:, i]] + [_rank1_cols(sg * st.U[:, j], np.array([k]))[:, 0]
                                               for j in range(min(4, st.U.shape[1])) for sg in (1., -1.)])
            Xb, vb = _ascent_batch(cov, np.full(X0.shape[1], k), X0)
            jb = int(np.argmax(vb))
            if vb[jb] > lows[i]:
                LX[:, i], lows[i], src[i] = Xb[:, jb], vb[jb], "ascent(dnn)"
        if callback is not None:
            callback(len(own), max(len(own) + 1, p))

    # coarse geometric grid (descending), then refinement of intervals where the envelope
    # is above the chord of the bounds at the ends by more than delta (relative)
    grid = {int(uniq[-1]), int(uniq[0])}
    g = float(uniq[-1])
    while g > uniq[0]:
        g /= pcfg["grid"]
        j = int(np.searchsorted(uniq, round(g)))
        grid.add(int(uniq[min(j, p - 1)]))
    for k in sorted(grid):  # ascending: the dual moves smoothly as mu decreases with k
        run(k)
    done = sorted(grid)
    stack = list(zip(done[:-1], done[1:]))
    while stack:
        a, b = stack.pop()
        ia, ib = pos[a], pos[b]
        if ib - ia < 2:
            continue
        ub = upper()
        seg = np.arange(ia + 1, ib)
        ka, kb = float(uniq[ia]), float(uniq[ib])
        chord = ub[ia] + (ub[ib] - ub[ia]) * (uniq[seg] - ka) / (kb - ka)
        excess = (ub[seg] - chord) / ub[seg]
        need = (excess > pcfg["delta"]) & (lows[seg] < target * ub[seg])
        if not need.any():
            continue
        m = int(uniq[(ia + ib) // 2])
        run(m)
        stack.append((a, m))
        stack.append((m, b))
    # ---- anchored row sums where the DNN certifies less than _CUT_BELOW (small k: the DNN's
    # weak spot, the anchored bound's strong one); descending, so each k starts from the
    # monotone bound of the larger ones
    anchored = {}
    for i in range(p - 1, -1, -1):
        k = int(uniq[i])
        ub_i = float(upper()[i])
        if 3 <= k <= _ANCHOR_MAX_K and lows[i] < _CUT_BELOW * ub_i:
            tb = anchored_rowsum_bound(A, k, float(lows[i]), ub_i)
            if tb is not None:
                anchored[k] = tb
                ub_cheap[i] = min(ub_cheap[i], tb)
    # ... and there, branch and bound on the support (a few dozen nodes at CBCL's k = 5..7)
    # to prove the best answer optimal, or else within 1%
    branched = {}
    for k in sorted(anchored) if pcfg["branch_nodes"] else ():
        i = pos[k]
        tb = _branch(A, k, float(lows[i]), float(upper()[i]), pcfg["branch_nodes"])
        if tb is not None:
            branched[k] = tb
            ub_cheap[i] = min(ub_cheap[i], tb)
    # ---- polish: at the worst-certified k (run first if it was not on the grid), more
    # cutting-plane rounds; its tangents also tighten the neighbours.  A k whose polish gained
    # less than 0.2% is not tried again (the relaxation, not the optimizer, is the limit there).
    for _ in range(pcfg["polish_runs"]):
        ub = upper()
        ratio = lows / ub
        cand = [int(k) for k in uniq if int(k) not in polished and ratio[pos[int(k)]] < _CUT_BELOW]
        if not cand:
            break
        k = min(cand, key=lambda kk: ratio[pos[kk]])
        if k not in states:
            run(k)
            continue
        before = own[k][0]
        run(k, polish=True)
        if own[k][0] > (1 - 2e-3) * before:
            polished.add(k)
    # ---- assemble the certificates
    ub = upper()
    share = (time.perf_counter() - t_all) / p
    out = {}
    for i, k in enumerate(uniq):
        k = int(k)
        bounds = {name: float(v[i]) for name, v in cheap.items()}
        if k in exact:
            bounds["exact(k<=2)"] = exact[k]
        info = {"n": n, "lower_source": src[i], "eig_tolerance": spec.tol}
        if k in own:
            bounds["dnn"] = own[k][0]
            info["dnn"] = own[k][1]
        if k in anchored:
            bounds["anchored"] = anchored[k]
        if k in branched:
            bounds["anchored(branch)"] = branched[k]
        if np.isfinite(env[i]) and (k not in own or env[i] < own[k][0]):
            bounds["dnn(tangent)"] = float(env[i])
        if ub[i] < min(bounds.values()):
            bounds["monotone"] = float(ub[i])
        t0 = time.perf_counter() - share - (own[k][2] if k in own else 0.0)
        out[k] = _finish(bounds, float(lows[i]), LX[:, i].copy(), k, t0, info)
    if callback is not None:
        callback(p, p)
    return out


def _carry(ks, certs: dict, given: dict) -> list[Certificate]:
    """Post-pass: upper bounds carried down from larger k, lower points up from smaller k
    (unless the caller gave x for that k: then lower stays x^T A x of the given point)."""
    uniq = sorted(certs)
    out = {}
    ub = np.inf
    for k in reversed(uniq):
        c = certs[k]
        if ub < c.upper_bound:
            b = dict(c.bounds)
            b["monotone"] = ub
            c = _finish(b, c.lower, c.x, k, time.perf_counter() - c.seconds, c.info)
        ub = min(ub, c.upper_bound)
        out[k] = c
    best = None
    for k in uniq:
        c = out[k]
        if k not in given and best is not None and best.lower > c.lower:
            info = {**c.info, "lower_source": "monotone"}
            c = _finish(dict(c.bounds), best.lower, best.x, k, time.perf_counter() - c.seconds, info)
            out[k] = c
        if best is None or c.lower > best.lower:
            best = c
    return [out[k] for k in ks]
