"""Certificates and bounds that need no optimization: the final assembly (:func:`_finish`),
low-rank data (exact), an operator's Lanczos bounds, and what a short time limit affords (the
variances, the row sums, ``A`` formed by blocks while the budget lasts)."""

from __future__ import annotations

import math
import time

import numpy as np
from scipy.sparse import issparse
from scipy.sparse.linalg import ArpackError, ArpackNoConvergence, LinearOperator, eigsh

from ..operators.cov import Cov
from ..result import Certificate
from ..spannogram import lowrank_nspca
from . import _settings as S
from ._settings import _EPS, OPTIMAL_TOLERANCE
from .bounds import (Spectrum, _gram_basis_bound, _gram_eig, _gram_of, _gram_tol, _opt1, _rowsum_topk, _Spectral,
                     cheap_bounds_at)
from .arcs import opt2_upper
from .budget import Budget
from .dnn import _ritz, chol_lmax
from .lower import _fit_lower
from .sparse_residual import sparse_residual2
from .sparse_rows import sparse_rowsum_bound


def _finish(bounds: dict, lower: float, x, k: int, t0: float, info: dict,
            probabilistic_names=()) -> Certificate:
    kind = min(bounds, key=bounds.get)
    ub = float(bounds[kind])
    if np.isfinite(lower):
        ub = max(ub, lower)  # rounding only: a valid bound is never below a feasible value
    ratio = float(lower / ub) if ub > 0 and np.isfinite(lower) else (1.0 if ub == 0 else float("nan"))
    optimal = bool(np.isfinite(lower) and ub - lower <= OPTIMAL_TOLERANCE * abs(ub))
    info.setdefault("from_k", {"upper": int(k), "lower": int(k)})  # which k proved each side
    return Certificate(upper_bound=ub, kind=kind, lower=float(lower), ratio=ratio, optimal=optimal,
                       tolerance=OPTIMAL_TOLERANCE, seconds=time.perf_counter() - t0,
                       bounds={kname: float(v) for kname, v in bounds.items()},
                       probabilistic=kind in probabilistic_names, k=int(k), x=x, info=info)


def _variances_bound(dg: np.ndarray, k: int) -> float:
    """``OPT <= lambda_max(A_JJ) <= tr(A_JJ) <=`` the sum of the k largest variances (``A`` psd),
    rounded up: the bound that costs only the variances (a time limit too short for more)."""
    top = -np.sort(-np.asarray(dg, dtype=float))[: min(k, dg.size)]
    return float(np.clip(top, 0.0, None).sum()) * (1 + 4 * (k + 2) * _EPS)


def _quad_held(cov: Cov, x: np.ndarray) -> float:
    """``x^T A x`` through X when A is not held (without forming it)."""
    if cov._A is None and cov.X is not None:
        y = cov.X @ x
        return float(y @ y) / cov.X.shape[0]
    return cov.quad(x)


def _gram_within(X: np.ndarray, budget: Budget) -> np.ndarray | None:
    """``A = X^T X / m`` formed by blocks of columns (its upper triangle, mirrored: exactly
    symmetric) while the budget lasts; None when the time ran out first."""
    m, n = X.shape
    A = np.empty((n, n))
    b = max(64, -(-n // 16))
    for j0 in range(0, n, b):
        j1 = min(n, j0 + b)
        size = float(m) * j1 * (j1 - j0)
        if not budget.fits("gram", size):
            return None
        with budget.step("gram", size):
            A[:j1, j0:j1] = (X[:, :j1].T @ X[:, j0:j1]) / m
            A[j0:j1, :j0] = A[:j0, j0:j1].T
            blk = A[j0:j1, j0:j1]
            A[j0:j1, j0:j1] = np.triu(blk) + np.triu(blk, 1).T
    return A


def _rowsum_bound(A: np.ndarray, k: int) -> float:
    """:func:`.bounds._rowsum_topk` of A (``OPT <= max_i`` of the k largest of ``(A_i)_+``), rounded
    up by the k-term sum's error: O(n^2), no eigenvalue (a time limit too short for one)."""
    return _rowsum_topk(A, k) * (1 + 4 * (k + 2) * _EPS)


def _certify_lowrank(cov: Cov, k: int, x, callback, max_rank: int | None = None, gram: dict | None = None,
                     vectors: bool = True):
    """Data of numerical rank ``r <= max_rank`` (thin, through the m x m Gram): the exact
    spannogram on the rank-r factor V is the answer and its own certificate.

    ``A = V V^T + R`` with ``||R||_2 = lambda_{r+1} <= tol`` (zero to rounding) and V the
    computed eigen-factor (backward error ``tol``), so ``x^T A x <= OPT_r + lambda_{r+1} +
    2 tol`` for every feasible x, with ``OPT_r`` exact (:func:`nspca_core.lowrank_nspca`).
    That slack scales with the trace; :func:`_gram_basis_bound` bounds the same quantity with
    a slack relative to the k largest variances, and the smaller of the two is kept (both are
    upper bounds): the ratio is then 1 to ~1e-12.
    Returns None when the rank is above ``max_rank``.  Memory O(n m); nothing n x n.  ``gram`` (a
    dict, optional): gets the Gram of X and its eigendecomposition as ``gram["G"]``, ``gram["eig"]``
    (the split bound's spectra of A and of A_TT reuse them: :func:`.bounds._thin_spectrum`'s ``eig``,
    :func:`.bounds._rest_spectrum`'s ``G``).  ``vectors=False`` (the caller reads no ``gram["eig"]``: the
    dense route's data): the Gram's eigenvalues alone first (LAPACK without eigenvectors, ~0.4x the time at
    m = 300), None where the one at ``max_rank`` is above twice ``tol`` (the eigendecomposition's would be
    above ``tol``: the two differ by at most their backward errors, each below a sixteenth of ``tol``), so
    the rank is above ``max_rank`` as the eigendecomposition would find it; else the eigendecomposition
    as before (issue 39: s300x400, 7.8 -> 3.3 ms of a ~45 ms certificate).
    """
    t0 = time.perf_counter()
    max_rank = S._LOWRANK_MAX_RANK if max_rank is None else max_rank
    m = cov.X.shape[0]
    G = None
    if not vectors:
        G = _gram_of(cov.X, m)
        vals = np.linalg.eigvalsh(G)  # (ascending)
        tol = _gram_tol(G, cov.n)
        if vals.size > max_rank and float(vals[-1 - max_rank]) > 2.0 * tol:
            if gram is not None:  # (top: a proved lambda_1 bound of A, value + tol, as bounds._ThinSpectral's)
                gram.update(G=G, top=(max(float(vals[-1]), 0.0), tol))
            return None
    w, P, tol = _gram_eig(cov.X, m, gram) if G is None else _gram_eig(cov.X, m, gram, G=G)
    if gram is not None:
        gram["eig"] = (w, P, tol)
    r = int(np.count_nonzero(w > tol))
    if r > max_rank:
        return None
    rr = max(r, 1)
    V = (cov.X.T @ P[:, :rr]) / math.sqrt(m)  # = fl(P_r^T X) / sqrt(m), as _gram_basis_bound

    res = lowrank_nspca(V, k)
    lam_next = float(w[r]) if r < w.size else 0.0
    opt_r = float(res.variance_lowrank)
    paper = opt_r * (1 + 1e-12) + lam_next + 2 * tol
    bounds = {f"paper(d={rr})": min(paper, _gram_basis_bound(cov.X, P, rr, k, opt_r)),
              **cheap_bounds_at(Spectrum(cov.n, w, tol, complete=True), k)}  # lambda1 (OPT_r replaces d = 1)
    info: dict = {"n": cov.n, "rank": r}
    if x is not None:
        lower = cov.quad(x)
        info["lower_source"] = "given"
    else:
        x, lower = res.x, cov.quad(res.x)
        info["lower_source"] = f"spannogram(d={rr})"
    if callback is not None:
        callback(1, 1)
    return _finish(bounds, lower, x, k, t0, info)


# the residual bound's d in _certify_operator (.sparse_residual): 3 where lambda_3 > 0 (OPT_3 by .caps), its rows'
# work capped at _RESIDUAL_WORK multiply-adds per nonzero of X (about what the Lanczos factor's ~40 products with X and
# X^T cost; past it the bound is the screen's value there, valid).  Its rows are smaller than d = 2's but their screen
# falls more slowly at larger k: uncapped, bench_unseen's 8,000 x 6,000 corpus at k = 10 needed 760 rows of 6,000
# (d = 2: 178) and 3.7x the answer.  One process (benchmarks/results/issue39_corpus13.txt), cert/answer and ratio at
# 5,000 x 3,000 / 8,000 x 6,000, k = 5 / 10: d = 3 capped 1.9-2.2x 0.9630, 2.2-2.4x 0.9434 / 1.9-2.0x 0.9667,
# 2.3-2.5x 0.9591; d = 2 (uncapped) 1.5x 0.9496, 2.6-3.0x 0.9472 / 1.5x 0.9528, 1.2-1.4x 0.9567 (lambda1).  A choice
# of d by each d's rows above the bound to beat was tried and mispredicted (it chose d = 3 uncapped at k = 10)
_RESIDUAL_D = 3
_RESIDUAL_WORK = 80


def _certify_operator(cov: Cov, k: int, x, callback) -> Certificate:
    """A covariance held as an operator (sparse data, a Dask array): bounds from its Lanczos
    factor, nothing n x n.

    ``lambda1``: ``OPT <= lambda_1``.  ``paper(d=1)``, ``paper(d=2)``: ``OPT <= OPT_d +
    lambda_{d+1}`` (:func:`~nspca_core.certificates.paper_bound`) with ``OPT_1`` exact and ``OPT_2``
    from above by arcs of the circle (:func:`.arcs.opt2_upper`, to 1e-9 relative where it can bind).  The eigenvalues
    come from one Lanczos run (ARPACK, converged to machine precision) plus ``64 n eps
    lambda_1``; Lanczos cannot prove that no eigenvalue was missed, so the certificate is
    marked ``probabilistic`` (it fails only if the run missed one of the top eigenvalues).
    ``rowsum`` (sparse data): the row-sum bound from the rows of A that can bind
    (:func:`.sparse_rows.sparse_rowsum_bound`), proved without Lanczos.
    Memory: the n x 3 factor, O(n) vectors and one batch of rows (at most 64 MB).
    """
    t0 = time.perf_counter()

    d = min(3, cov.n - 1)
    V, eig = cov.factor(d)
    tol = 64 * cov.n * _EPS * float(eig[0])
    bounds = cheap_bounds_at(Spectrum(cov.n, np.asarray(eig, dtype=float), tol, v1=V[:, 0]), k)
    info: dict = {"n": cov.n, "eigenvalues": "Lanczos (ARPACK)"}
    # the rows only until they are sure not to bind (their bound then the screen's value, above the others)
    rows = sparse_rowsum_bound(cov, k, enough=min(bounds.values()))
    if d >= 2:
        # OPT_2 from above by arcs of the circle (.arcs, issue 39: the exact spannogram was 0.66 of 0.89 CPU s on
        # an 8,000 x 6,000 corpus), searched only until paper(d=2) is either settled or sure not to bind
        rest = float(eig[2]) + 2 * tol
        best = min(min(bounds.values()), rows[0] if rows is not None else np.inf)
        opt2, low2, _ = opt2_upper(V[:, :2], k, enough=(best - rest) * (1 + 1e-9))
        bounds["paper(d=2)"] = opt2 * (1 + 1e-12) + rest
    probabilistic = tuple(bounds)
    if rows is not None:  # proved without Lanczos: a certificate it decides is not probabilistic
        bounds["rowsum"], info["rowsum_rows"] = rows
    if d >= 2 and eig[1] > 0 and low2 < min(bounds.values()):
        # OPT_d + the k-sparse rows of the residual, proved (.sparse_residual; d: _RESIDUAL_D): on a topic corpus
        # lambda_3 is paper(d=2)'s whole gap and the residual's k-sparse rows are smaller (issue 39); only where it
        # can bind (OPT_2's lower value below every bound so far)
        dd = 3 if _RESIDUAL_D == 3 and d >= 3 and eig[2] > 0 else 2
        res = sparse_residual2(cov, k, V[:, :dd] / np.sqrt(eig[:dd]), eig[:dd], enough=min(bounds.values()),
                               work_per_nnz=_RESIDUAL_WORK if dd == 3 else None)
        if res is not None:
            bounds[f"residual(d={dd})"], info["residual_rows"] = res
    if x is not None:
        lower = cov.quad(x)
        info["lower_source"] = "given"
    else:
        found = _fit_lower(cov, k)
        x, lower = found if found is not None else (None, float("nan"))
        info["lower_source"] = "fit(auto)"
    if callback is not None:
        callback(1, 1)
    return _finish(bounds, lower, x, k, t0, info, probabilistic_names=probabilistic)


# lambda_1 by Lanczos and a Cholesky proof (:func:`lambda1_proved`) is tried first only from this
# many features (below, the dense top eigenvalues cost a few milliseconds)
_LANCZOS_MIN_N = 1000


def lambda1_proved(A: np.ndarray, matvec=None, need: float | None = None) -> tuple[float, float] | None:
    """``(bound, estimate)``: a rigorous upper bound on ``lambda_max(A)`` at a fraction of a dense
    eigensolver's cost, and the Lanczos value it proves; None when Lanczos does not converge or
    the proof fails.

    A Lanczos estimate ``theta`` (ARPACK, from the ones vector: deterministic) with its residual
    ``r = A u - theta u`` gives the guess ``c = theta + ||r|| + 1e-12 |theta|`` (just above
    ``lambda_max`` when Lanczos found the top eigenvalue; nothing is assumed about that): a
    Cholesky factorization of ``c I - A`` proves ``lambda_max(A) <= c + slack``
    (:func:`.dnn_lmax.lmax_upper`, proof in :func:`.dnn_lmax.chol_lmax`; ``n^3 / 3``
    flops where the top eigenvalues by tridiagonalization cost ``4 n^3 / 3``) plus the backward
    error allowance ``32 n eps ||A||_F``.  A guess below ``lambda_max`` makes ``c I - A``
    indefinite: the factorization fails and None is returned (nothing is proved).

    ``matvec`` (optional): products with A for the Lanczos run, e.g. sparse data's covariance
    operator (A up to rounding, at a quarter of a dense product's cost on a 5,000 x 2,000 word-count
    corpus: issue 39).  Only the guess comes from it: the residual is A's and the proof is on A.
    ``need`` (optional): the largest bound of use to the caller; when the Lanczos value is already
    above it, the proof is not attempted (None): the bound would be at least ``guess >= theta``.

    First try (issue 39, ninth round): :data:`_ARROW_STEPS` Lanczos steps through ``matvec`` and
    :func:`lambda1_arrow` on their top Ritz vectors, O(n^2 p) and no factorization; its bound is returned
    when it is no looser than the least the Cholesky proof could give (else that proof runs as above)."""
    n = A.shape[0]
    if _ARROW_STEPS > 0:
        # first the Krylov space's top Ritz vectors and a Frobenius tail (:func:`lambda1_arrow`, O(n^2 p)):
        # kept when it is as tight as the Cholesky proof below could be (issue 39: the review corpus's
        # 2,000 x 2,000 factorization was 0.23 of the certificate's 0.25-0.4 CPU s)
        out = _lambda1_by_arrow(A, matvec, need)
        if out is not None:
            return None if out == "above need" else out
    op = A if matvec is None else LinearOperator(A.shape, matvec=matvec, dtype=np.float64)
    try:
        w, U = eigsh(op, k=1, which="LA", v0=np.ones(n), tol=1e-10, maxiter=300)
    except (ArpackNoConvergence, ArpackError):
        return None
    theta, u = float(w[0]), U[:, 0] / np.linalg.norm(U[:, 0])
    if need is not None and theta > need * (1.0 + 1e-12) and theta > 0:
        return None
    guess = theta + float(np.linalg.norm(A @ u - theta * u)) + 1e-12 * abs(theta)
    slack = chol_lmax(A, guess)
    if slack is None:
        return None
    tol = 32.0 * n * _EPS * float(np.linalg.norm(A))
    return guess + slack + tol, theta


# lambda1_proved's first try: this many Lanczos steps (full reorthogonalization, from the ones vector), the
# top _ARROW_P Ritz vectors kept for :func:`lambda1_arrow` (0 steps: straight to the Cholesky proof).  On the
# 5,000 x 2,000 review corpus 15 steps and 4 vectors prove lambda_1 to 2e-10 (relative) in ~15 ms
_ARROW_STEPS, _ARROW_P = 15, 4


def _lanczos_ritz(matvec, start: np.ndarray, steps: int, p: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The top ``p`` Ritz pairs ``(theta desc, V n x p)`` of ``steps`` Lanczos steps from ``start`` with full
    reorthogonalization (twice): only a guess of the top invariant subspace, nothing rests on it (the
    bound that uses it, :func:`lambda1_arrow`, holds for any V).  None on a zero start or product."""
    n = start.size
    steps = min(steps, n)
    Q = np.empty((n, steps))
    W = np.empty((n, steps))
    nq = float(np.linalg.norm(start))
    if not nq > 0:
        return None
    q = start / nq
    j = 0
    for j in range(steps):
        Q[:, j] = q
        w = np.asarray(matvec(q), dtype=np.float64).reshape(-1)
        if not np.all(np.isfinite(w)):
            return None
        W[:, j] = w
        B = Q[:, : j + 1]
        z = w - B @ (B.T @ w)
        z -= B @ (B.T @ z)
        nz = float(np.linalg.norm(z))
        if j + 1 == steps or not nz > 1e-14 * float(np.linalg.norm(w)):
            break  # (an invariant subspace found: the Ritz pairs are exact to rounding)
        q = z / nz
    Q, W = Q[:, : j + 1], W[:, : j + 1]
    T = Q.T @ W
    T = 0.5 * (T + T.T)
    theta, Y = np.linalg.eigh(T)
    p = min(p, theta.size)
    return theta[::-1][:p], Q @ Y[:, ::-1][:, :p]


def lambda1_arrow(A: np.ndarray, V: np.ndarray, fro: float | None = None) -> float | None:
    """A rigorous upper bound on ``lambda_max(A)`` (A symmetric, as stored) from an approximately
    orthonormal n x p block V (nearly the top eigenvectors) in O(n^2 p): no factorization.  None when V is
    not orthonormal to 1e-3 or the bound's last check fails.

    Proof (exact arithmetic first).  Let U be orthonormal (n x p), ``B = U^T A U``, ``P = I - U U^T``.  A
    unit z is ``U b + w`` with ``w = P z``, ``|b|^2 + |w|^2 = 1``.  Then ``z^T A z = b^T B b + 2 b^T U^T A w
    + w^T A w`` and (i) ``b^T B b <= sum_i B_ii b_i^2 + ||B - diag B||_2 |b|^2``; (ii) since ``u_i^T w =
    0``, ``u_i^T A w = (A u_i - B_ii u_i)^T w <= rho_i |w|`` with ``rho_i >= ||A u_i - B_ii u_i||``;
    (iii) ``w^T A w <= ||P A P||_2 |w|^2 <= omega |w|^2`` with ``omega^2 >= ||P A P||_F^2 = ||A||_F^2 -
    ||B||_F^2 - 2 ||P A U||_F^2 <= ||A||_F^2 - sum_i B_ii^2``.  So ``z^T A z <= t^T M t`` for the
    nonnegative unit ``t = (|b_1|, .., |b_p|, |w|)`` and the arrowhead ``M = [[diag(d), rho], [rho^T,
    omega]]``, ``d_i = B_ii + ||B - diag B||_2``: ``lambda_max(A) <= lambda_max(M)``.  For ``c > max d``,
    ``c I - M`` is psd iff its Schur complement ``c - omega - sum_i rho_i^2 / (c - d_i)`` is ``>= 0``:
    checked at a ``c`` just above M's computed top eigenvalue, so ``c`` is the bound.

    Rounding.  V is the computed block: ``G = V^T V``, ``phi >= ||G - I||_2`` (the computed ``||G - I||_F``
    plus ``4 p gamma_n``, gamma_n = n eps / (1 - n eps)); ``U = V G^{-1/2}`` is exactly orthonormal with
    ``||U - V||_2 <= sqrt(1 + phi) phi <= psi = 1.01 phi`` (phi <= 1e-3).  With ``f >= ||A||_F >= ||A||_2``
    (the computed norm inflated), every computed ``v_i^T A v_j``, ``A v_i`` (dot products of n terms:
    ``|fl - exact| <= gamma_n ||A||_F ||v||``) differs from U's exact value by at most
    ``tau = 4 (gamma_n + psi) f``: so ``d_i`` is taken as ``h_ii + tau + ||fl(H) - diag||_F + p tau``, ``rho_i``
    as the computed residual norm inflated plus ``3 tau``, and ``sum B_ii^2`` from ``(|h_ii| - tau)_+``;
    the Schur test is rounded towards failing (and each sum is moved up by a few ulps).  ``fro``:
    ``np.linalg.norm(A)`` when the caller has it (inflated here by ``4 gamma_n + (n^2 + 4) eps``).  The
    margins are O((n eps + phi) ||A||_F): on the review corpus the bound is lambda_1 + 2e-10 relative
    (tested against eigvalsh on small matrices)."""
    n, p = V.shape
    if p < 1 or n < 1:
        return None
    gam = n * _EPS / (1.0 - n * _EPS)
    G = V.T @ V
    G.flat[:: p + 1] -= 1.0
    phi = float(np.linalg.norm(G)) + 4.0 * p * gam
    if not phi <= 1e-3:
        return None
    psi = 1.01 * phi
    fro = float(np.linalg.norm(A) if fro is None else fro) * (1.0 + 4.0 * gam + (n * n + 4) * _EPS) + 1e-300
    if not math.isfinite(fro):
        return None
    tau = 4.0 * (gam + psi) * fro
    AV = A @ V
    H = V.T @ AV
    h = np.diag(H).copy()
    off = float(np.linalg.norm(H - np.diag(h))) * (1.0 + 4.0 * gam) + p * tau
    rho = np.linalg.norm(AV - V * h, axis=0) * (1.0 + 4.0 * gam) + 3.0 * tau
    low = np.maximum(np.abs(h) - tau, 0.0)
    tail = fro * fro * (1.0 + 4.0 * _EPS) - float(low @ low) * (1.0 - 4.0 * (p + 1) * _EPS)
    omega = math.sqrt(max(tail, 0.0)) * (1.0 + 4.0 * _EPS)
    d = h + tau + off
    d += 4.0 * _EPS * np.abs(d)
    rho *= 1.0 + 4.0 * _EPS
    M = np.diag(np.append(d, omega))
    M[:p, p] = rho
    M[p, :p] = rho
    c = float(np.linalg.eigvalsh(M)[-1])
    c += 1e-13 * abs(c) + 4.0 * _EPS * fro
    step = max(1e-12 * abs(c), float(rho.max()), 1e-300)
    for _ in range(8):
        gap = (c - d) * (1.0 - 4.0 * _EPS)
        if np.all(gap > 0) and c > omega:
            schur = float(np.sum(rho * rho / gap)) * (1.0 + 4.0 * (p + 2) * _EPS)
            if (c - omega) * (1.0 - 2.0 * _EPS) >= schur:
                return c
        c += step
        step *= 4.0
    return None


def _lambda1_by_arrow(A: np.ndarray, matvec, need: float | None, keep: dict | None = None):
    """:func:`lambda1_proved`'s first try: ``(bound, theta)`` by :func:`lambda1_arrow` on the top Ritz
    vectors of :data:`_ARROW_STEPS` Lanczos steps (``matvec``: the guess's products; the bound is A's);
    "above need" when the Ritz value already exceeds ``need``; None when the bound is not as tight as the
    Cholesky proof's least slack (then that proof runs).  ``keep`` (a dict): gets the Ritz pairs as ``keep["ritz"]``
    (:mod:`.sparse_route` estimates the d = 1 bounds from them)."""
    n = A.shape[0]
    out = _lanczos_ritz(A.__matmul__ if matvec is None else matvec, np.ones(n), _ARROW_STEPS, _ARROW_P)
    if keep is not None:
        keep["ritz"] = out
    if out is None:
        return None
    theta = float(out[0][0])
    if need is not None and theta > need * (1.0 + 1e-12) and theta > 0:
        return "above need"
    fro = float(np.linalg.norm(A))
    if fro * fro - float(out[0] @ out[0]) >= theta * theta:
        return None  # (the rest's Frobenius norm, by the Ritz values, is not below lambda_1: no useful bound)
    bound = lambda1_arrow(A, out[1], fro)
    if bound is None:
        return None
    # the Cholesky proof's bound at a guess c >= theta is at least c + its slack g tr(c I - A) / (1 - g)
    # (:func:`.dnn_lmax.chol_lmax`, g = 32 (n + 1) eps) + 32 n eps ||A||_F: the arrowhead bound is kept only
    # when it is no looser than that least value (so never looser than the proof it replaces)
    g = 32.0 * (n + 1) * _EPS
    least = theta + g * max(n * theta - float(np.trace(A)), 0.0) / (1.0 - g) + 32.0 * n * _EPS * fro
    if bound > least:
        return None
    return bound, min(theta, bound)  # (theta is matvec's: above A's lambda_1 when matvec is not A's)


# _certify_dense ("auto", a given x): lambda_1 proved at a Lanczos guess instead of the top eigenpairs by
# LAPACK (:func:`lambda1_only`) from this many features, where the d = 1 bounds estimated from the same
# Lanczos pairs come out above that lambda_1 by this share (then they cannot be the smallest bound)
_LIGHT_SPEC_MIN_N = 150
_LIGHT_SPEC_MARGIN = 1e-2


class Lambda1Only:
    """What :func:`.single._certify_dense` reads of a :class:`.bounds._Spectral` where only lambda_1
    was proved (:func:`lambda1_only`): ``spectrum()`` (lambda_1's bound alone: no v_1, no lambda_2),
    ``tol``, ``A``, no eigenvectors."""

    def __init__(self, A: np.ndarray, value: float, tol: float, d1: float | None = None, theta: float = 0.0):
        self.A, self.tol, self.U = A, tol, None
        self.w = np.array([value])  # ``w[0] + tol``: the proved bound, summed as lambda1_proved sums it
        # d1 (given a feasible value): the d = 1 bounds' low estimate where they were below lambda_1 but out of reach
        # (:func:`lambda1_only`'s ``lower``); the caller computes them after its dual side where they could win
        # (:meth:`top`), and the DNN's screening start takes LAPACK's lambda_1 bound as before (:meth:`bracket`)
        self.d1, self.theta, self.full = d1, theta, None
        if d1 is not None:
            self.bracket = self._bracket

    def spectrum(self, *, rows: bool = True, many_k: bool = False) -> Spectrum:
        return Spectrum(self.A.shape[0], self.w, self.tol)

    def top(self):
        """The top eigenpairs by LAPACK (:class:`.bounds._Spectral`, ``dmax`` 2 as "auto"'s), computed once."""
        if self.full is None:
            self.full = _Spectral(self.A, 2)
        return self.full

    def _bracket(self, hi: float, dmax: float, k: int) -> float:
        """The screening start's lambda_1 (:func:`.dual_start._screen_init`, which takes ``min(hi, (lambda_1 -
        dmax) / (k - 1))``): LAPACK's lambda_1 bound (``w[0] + tol`` of :meth:`top`), the value it took before
        this route existed, where that minimum could depend on it; else a value below LAPACK's (the top Ritz
        value less 1e-10 of it: a Rayleigh quotient, at most lambda_1 to rounding, which ``tol`` covers) whose
        term is already at least ``hi``, so the minimum is ``hi`` whichever (rounding is monotone)."""
        low = self.theta * (1.0 - 1e-10)
        if k > 1 and low > 0 and (low - dmax) / (k - 1) >= hi:
            return low
        return float(self.top().w[0]) + self.top().tol


# _rows_low: the rows of largest residual variance tried first
_LOW_ROWS = 16


def _rows_low(A: np.ndarray, v1: np.ndarray, k: int) -> float:
    """A lower estimate of ``max_i`` of the sum of the k largest entries of row i of ``(A - v1 v1^T)_+``
    (the residual bound's row sums): that maximum over the :data:`_LOW_ROWS` rows of largest
    ``A_ii - v1_i^2`` only (a fraction of the n x n pass; the row holding the maximum on CBCL).  At most
    the full one (:func:`.bounds._rowsum_topk`; to a sum's rounding), so a choice it allows the full one allows too."""
    n = A.shape[0]
    rows = np.argsort(-(np.diag(A) - v1 * v1), kind="stable")[:_LOW_ROWS]
    P = np.maximum(A[rows] - np.outer(v1[rows], v1), 0.0)
    kk = min(k, n)
    if kk < n:
        P = np.partition(P, n - kk, axis=1)[:, n - kk:]
    return float(P.sum(axis=1).max())


def _d1_low(A: np.ndarray, w: np.ndarray, U: np.ndarray, k: int) -> float:
    """The d = 1 bounds' low estimate from the Ritz pairs ``(w, U)``: ``OPT_1 + min(lambda_2, row sums on a few
    rows)`` (:func:`_rows_low`, below the full row sums), as :func:`_short` without ``full`` compares it."""
    theta = float(w[0])
    if not theta > 0:
        return 0.0
    v1 = math.sqrt(theta) * U[:, 0]
    return _opt1(v1, k) + min(max(float(w[1]), 0.0), _rows_low(A, v1, k))


def _short(A: np.ndarray, w: np.ndarray, U: np.ndarray, k: int, need: float, full: bool = True) -> bool:
    """Whether the d = 1 bounds' estimate from the Ritz pairs ``(w, U)`` (:func:`lambda1_only`),
    ``OPT_1 + min(lambda_2, row sums)``, is below ``need``: the paper bound's part first (no row sums),
    then the row sums on a few rows (:func:`_rows_low`, a lower estimate), then (``full``) on all of them
    (without: the lower estimate decides; it only chooses what is computed, never a bound)."""
    theta = float(w[0])
    if not theta > 0:
        return True
    v1 = math.sqrt(theta) * U[:, 0]
    opt1 = _opt1(v1, k)
    lam2 = max(float(w[1]), 0.0)
    if opt1 + lam2 < need:
        return True
    return (opt1 + min(lam2, _rows_low(A, v1, k)) < need
            and (not full or opt1 + min(lam2, _rowsum_topk(A - np.outer(v1, v1), k)) < need))


# lambda1_only's block: this many vectors (a ones vector and a seeded rest), at most this many block steps,
# stopping when the top pair's allowance res^2 / (theta_1 - theta_2) is below this share of theta_1
_LIGHT_R, _LIGHT_STEPS, _LIGHT_ACCEPT = 4, 12, 1e-10
# after this many steps (Ritz values to ~1e-4, the vector to a few %), a d = 1 estimate below this share of the
# top Ritz value ends the try (CBCL k = 1..56, where it is short: ~0.6 ms instead of 1.1-2.4 before the top
# eigenpairs, at most k; the same choices as the full estimate at every CBCL k and on factor data)
_LIGHT_EARLY, _LIGHT_SHORT = 3, 0.97


def lambda1_only(A: np.ndarray, k: int, margin: float = _LIGHT_SPEC_MARGIN,
                 steps: int = _LIGHT_STEPS, lower: float | None = None,
                 proved: tuple[float, float] | None = None, late=None, thin=None) -> Lambda1Only | None:
    """lambda_1 of a dense A proved by a Cholesky factorization at a guess from block-Krylov steps
    (:func:`nspca_core.certificates.dnn_lmax.chol_lmax`: ~1.2 ms against ~4.7 ms for the top eigenpairs by
    LAPACK and their bounds at n = 361), where the paper's and the residual bound at d = 1
    (:data:`.bounds.BOUNDS`) could not be the smallest of the three: their values estimated from the
    block's two top Ritz pairs, ``OPT_1 + min(lambda_2, row sums of (A - v_1 v_1^T)_+)`` (the smaller of
    the two), are above the guess by ``margin``.  None otherwise (or when the proof fails): the caller
    computes the top eigenpairs.  ``steps``: at most that many block steps.

    Only the choice of bounds rests on the estimates: leaving a valid upper bound out never makes the
    certificate invalid, and the one kept is proved.  The guess is the top Ritz value plus 4 times its
    pair's allowance ``res_1^2 / (theta_1 - theta_2)`` (as :func:`nspca_core.certificates.dnn_lmax.ritz_guesses`;
    a guess below lambda_1 fails the factorization: nothing is assumed of it).  On CBCL (issue 39) the
    d = 1 bounds are 3-40% above lambda_1 at k = 60..361 and never bind.

    ``lower`` (a feasible value, the caller's answer's): where the d = 1 bounds come out below lambda_1 but
    their low estimate (:func:`_d1_low`) leaves them out of reach -- ``lower`` below :data:`_D1_FAR` of it,
    a ratio the dual side that follows aims past (``_settings._CUT_BELOW``) and at which the KKT start is
    ruled out whatever they are (:data:`.dual_start._KKT_USEFUL`) -- lambda_1 is proved alone all the same
    and that estimate is kept (``d1``): the caller computes the top eigenpairs after its dual side, only
    where its bound is not below :data:`_D1_LATE` of it (issue 39: img24 k = 30..150 and s300x400 k = 5..100,
    d = 1 certifying 0.67-0.87 against 0.96-1.0: 12.6 ms of img24 k = 50's ~139).  There lambda_1's bound
    decides nothing before the dual side (``lower`` is below 0.9 of it: every rule that reads the bounds so far
    -- the KKT start's, the anchored bisection's ceiling, the DNN's skip -- answers the same for any bound above
    that), so ``proved`` (``(value, tol)``, ``value + tol`` a proved bound on lambda_1: the low-rank test's Gram
    eigenvalue and tolerance, :func:`_certify_lowrank`) is taken as it is, with no more block steps and no
    Cholesky factorization (s300x400: ~2 of ~3 ms).  ``late`` (:class:`.lambda1_late.Lambda1Late`, given by the
    caller: no import circle; no ``proved``; k >= 3; ``lower`` below :data:`_LATE_BELOW` of the top Ritz value): the
    rest of the proof -- the block steps after the early one where that step found the d = 1 bounds out of reach,
    else the factorization alone -- is put off: ``late(A, d1, (w, U, steps done, steps at most))`` returned, which
    makes it, the same floats, only where asked.  ``thin`` (a callable ``c -> slack or None``): the factorization's
    slack proved through a thin factor first (:func:`.dnn_thin.chol_slack_thin`: the same float, O(n m^2))."""
    n = A.shape[0]
    r = _LIGHT_R
    U = np.column_stack([np.ones(n), np.random.default_rng(0).standard_normal((n, r - 1))])
    far = None  # (the d = 1 bounds' low estimate, where short but out of reach of `lower`)
    for step in range(steps):
        w, U = _ritz(A, U, r)
        if step + 1 == _LIGHT_EARLY and _short(A, w, U, k, _LIGHT_SHORT * abs(float(w[0])), full=False):
            far = _far(A, w, U, k, lower)
            if far is None:
                return None  # (clearly short already: no more steps, no proof)
            if proved is not None:
                return Lambda1Only(A, proved[0], proved[1], far, float(w[0]))
            if late is not None and k >= 3 and lower < _LATE_BELOW * float(w[0]) * (1.0 - 1e-10):  # (far: lower > 0)
                return late(A, far, (w, U, step + 1, steps))
        res = A @ U[:, 0] - w[0] * U[:, 0]
        allow = float(res @ res) / max(float(w[0] - w[1]), 1e-300)
        if allow <= _LIGHT_ACCEPT * abs(float(w[0])):
            break
    theta = float(w[0])
    if not theta > 0:
        return None
    guess = theta + 4.0 * allow + 1e-12 * abs(theta)
    if far is None and _short(A, w, U, k, (1.0 + margin) * guess):
        far = _far(A, w, U, k, lower)
        if far is None:
            return None
    if far is not None and proved is not None:
        return Lambda1Only(A, proved[0], proved[1], far, theta)
    if (late is not None and proved is None and k >= 3 and lower is not None
            and lower < _LATE_BELOW * theta * (1.0 - 1e-10)):
        return late(A, far, (w, U, steps, steps))  # (the factorization alone put off)
    slack = thin(guess) if thin is not None else None
    if slack is None:
        slack = chol_lmax(A, guess)
    if slack is None:
        return None
    return Lambda1Only(A, guess + slack, 32.0 * n * _EPS * float(np.linalg.norm(A)), far, theta)


# lambda1_only given a feasible value: the d = 1 bounds are out of reach where that value is below _D1_FAR of their
# low estimate; computed after the dual side where its bound is not below _D1_LATE of that estimate.  ``late``: the
# proof put off only where that value is also below _LATE_BELOW of the top Ritz value (every rule of the dual side
# answers the same for any bound above that: :mod:`.lambda1_late`)
_D1_FAR, _D1_LATE, _LATE_BELOW = 0.88, 0.9, 0.9


def _far(A: np.ndarray, w: np.ndarray, U: np.ndarray, k: int, lower: float | None) -> float | None:
    """The d = 1 bounds' low estimate (:func:`_d1_low`) where ``lower`` is below :data:`_D1_FAR` of it, else None."""
    if lower is None or not lower > 0:
        return None
    est = _d1_low(A, w, U, k)
    return est if lower < _D1_FAR * est else None


def _sparse_products(cov: Cov) -> bool:
    """Whether products with ``cov`` through its sparse data (two passes over the nonzeros) cost
    less than with the dense n x n covariance."""
    data = getattr(cov, "X_sparse", None)
    return data is not None and issparse(data) and 2 * data.nnz < cov.n * cov.n
