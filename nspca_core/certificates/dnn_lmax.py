"""Rigorous bounds on ``lambda_max`` of a DNN dual matrix and the block Rayleigh–Ritz steps behind them
(:func:`lmax_upper`, :func:`chol_lmax`, :func:`ritz_guess`, :func:`ritz_guesses`, :func:`_ritz`): moved out of
:mod:`.dnn` (issue 39, eleventh round: the module limit), unchanged; :mod:`.dnn` re-exports them."""

from __future__ import annotations

import numpy as np
import scipy.linalg

from .._common.eig import top_eigvalsh_upper
from .dnn_steps import DnnWork, _small_eigh

_EPS = np.finfo(float).eps


def lmax_upper(M: np.ndarray, scale: float, guess: float | None = None,
               work: DnnWork | None = None, norm: float | None = None) -> tuple[float, float]:
    """A rigorous upper bound on ``lambda_max`` of the exact matrix behind ``M``.

    Returns ``(value, tol)`` with ``value = lambda_hat + tol``: ``lambda_hat``
    is LAPACK's largest eigenvalue (``dsyevr``, backward stable: it is an exact
    eigenvalue of ``M + E`` with ``||E||_2 <= p(n) eps ||M||_2``) and
    ``tol = 32 n eps (||M||_F + scale)`` covers that backward error with a
    generous ``p(n) = 32 n`` plus the rounding made when ``M`` was assembled
    from ``A``, ``N`` and ``mu J`` (``scale`` is the Frobenius norm of the
    summed magnitudes of those terms).

    ``guess`` (optional, from Ritz values: any number, or several tried in turn): when a Cholesky
    factorization proves ``guess I - M`` positive definite (:func:`chol_lmax`,
    about a tenth of the eigenvalue cost), the value is ``guess`` plus that
    proof's rounding allowance plus the same ``tol``; otherwise LAPACK as above.  ``work``: the
    Cholesky factor's n x n array from there (:class:`DnnWork`; the same floats).  ``norm``: ``||M||_F`` as
    ``float(np.linalg.norm(M))`` when the caller has it (the same float).
    """
    n = M.shape[0]
    tol = 32.0 * n * _EPS * ((float(np.linalg.norm(M)) if norm is None else norm) + scale)
    for g in ([] if guess is None else np.atleast_1d(np.asarray(guess, dtype=float))):
        if np.isfinite(g):  # (several guesses: each tried in turn, the first proved is kept)
            slack = chol_lmax(M, float(g), None if work is None else work.scratch("MG", M.shape, M.dtype))
            if slack is not None:
                return float(g) + slack + tol, tol + slack
    lam = float(top_eigvalsh_upper(M, 1)[0])  # LAPACK's subset solver can fail: see top_eigh
    return lam + tol, tol


def chol_lmax(M: np.ndarray, c: float, out: np.ndarray | None = None) -> float | None:
    """Prove ``lambda_max(M) <= c + slack`` by a Cholesky factorization of ``H = c I - M``;
    returns ``slack`` (``>= 0``), or None when the factorization breaks down (nothing proved).

    Proof.  ``H`` is formed in floating point: only its diagonal is rounded,
    ``H = c I - M + E1`` with ``E1`` diagonal, ``|E1_ii| <= eps |H_ii|``.  If
    LAPACK's Cholesky runs to completion on ``H``, the computed factor satisfies
    ``R^T R = H + dH`` with ``|dH| <= g |R^T| |R|`` entrywise (Demmel 1989;
    Higham, *Accuracy and Stability*, Thm 10.3, ``g = gamma_{n+1}``; blocked
    variants obey the same form, and ``g = 32 (n + 1) eps`` here is generous).
    Then ``||dH||_2 <= g || |R| ||_2^2 <= g ||R||_F^2 = g tr(H + dH) <= g tr(H) +
    g ||R||_F^2``, so ``||dH||_2 <= g tr(H) / (1 - g)``.  ``H + dH = R^T R`` is
    positive semidefinite, hence ``c I - M >= -(E1 + dH)`` and ``lambda_max(M) <=
    c + ||E1||_2 + ||dH||_2``.  (The trace is summed with rounding: it is
    inflated by ``1 + (n + 1) eps``.)  ``out``: an array of M's shape (C order) to factor H in.
    """
    n = M.shape[0]
    H = np.negative(M, out=out)
    idx = np.diag_indices(n)
    H[idx] += c
    d = H[idx]
    if not np.all(d > 0):
        return None
    trace = float(d.sum()) * (1.0 + (n + 1) * _EPS)
    hmax = float(d.max())
    _, info = scipy.linalg.lapack.dpotrf(H.T, lower=1, clean=0, overwrite_a=1)  # H.T: Fortran order, no copy
    if info != 0:
        return None
    g = 32.0 * (n + 1) * _EPS
    return 2.0 * _EPS * hmax + g * trace / (1.0 - g)


def _ritz_block(M: np.ndarray, U: np.ndarray | None, max_steps: int, accept: float, by_top: bool):
    """Block-Krylov steps from U for :func:`ritz_guess` / :func:`ritz_guesses`: ``(w, block, top)``
    with the Ritz values w, the block's allowance ``max_i res_i^2 / (theta_i - theta_{r+1})`` and the
    top pair's ``res_1^2 / (theta_1 - theta_2)``; steps stop once the top pair's (``by_top``) or the
    block's allowance is below ``accept |theta_1|``.  None without a subspace or on small matrices."""
    n = M.shape[0]
    if U is None or n < 64 or U.shape[1] * 3 >= n:
        return None
    r = U.shape[1]
    # a float64 M (an evaluation's): M U of the step's U is also the next step's first product (the same
    # floats, one product with M fewer per step after the first)
    reuse, MU = M.dtype == np.float64, None
    for _ in range(max_steps):
        w, U = _ritz(M, U, r, MU=MU)
        MU = _times(M, U) if reuse else None
        R = (M @ U if MU is None else MU) - U * w[:r]
        res2 = np.einsum("ij,ij->j", R, R)
        gap = np.maximum(w[:r] - w[min(r, w.size - 1)], 1e-300)
        block = float(np.max(res2 / gap))
        top = float(res2[0]) / max(float(w[0] - w[1]), 1e-300) if w.size > 1 else block
        if (top if by_top else block) <= accept * abs(float(w[0])):
            break
    return w, block, top


def ritz_guess(M: np.ndarray, U: np.ndarray | None, max_steps: int = 4, rel: float = 1e-9,
               accept: float = 1e-7) -> float | None:
    """A number just above ``lambda_max(M)`` (not a proof: :func:`lmax_upper` checks it): the top
    Ritz value of block-Krylov steps from U plus a Kato–Temple-like allowance
    ``res_i^2 / (theta_i - theta_r)`` over the block's Ritz pairs and a ``rel`` margin (relative
    to ``||M||_F``); steps stop once the allowance is below ``accept |theta_1|``.  None without a
    subspace or on small matrices (LAPACK is cheap there)."""
    steps = _ritz_block(M, U, max_steps, accept, by_top=False)
    if steps is None:
        return None
    w, allow, _ = steps
    return float(w[0]) + allow + rel * float(np.linalg.norm(M))


# ritz_guesses: the tight guess takes the top pair's own allowance this many times over
_TIGHT_SAFETY = 4.0


def ritz_guesses(M: np.ndarray, U: np.ndarray | None, max_steps: int = 4, rel: float = 1e-9,
                 accept: float = 1e-6, norm: float | None = None) -> list | None:
    """Two numbers just above ``lambda_max(M)`` for :func:`lmax_upper` to try in turn (not proofs: the
    Cholesky test decides), from block-Krylov steps from U as :func:`ritz_guess`: first the top Ritz
    value plus :data:`_TIGHT_SAFETY` times its own pair's allowance ``res_1^2 / (theta_1 - theta_2)``,
    and :func:`ritz_guess`'s (the allowance over every pair of the block), each plus the ``rel``
    margin, the smaller first (the block's gaps to ``theta_{r+1}`` can also be the wider ones: then
    its guess is the lower).  Steps stop once the top pair's allowance is below ``accept |theta_1|``.

    Why: at a DNN point the top Ritz value converges in 1-2 steps (CBCL k = 60..90: within 1e-7 of
    LAPACK's after one) while the block's lower pairs, whose eigenvalues the DNN crowds together,
    keep the block's allowance at 1e-5..1e-4 of the value after 4 (issue 39).  ``accept`` 1e-6:
    the tight guess then sits at most ``4e-6`` (relative) above the top Ritz value, still below
    the block's allowance, one step sooner (2 instead of 3 there).  None as :func:`ritz_guess`.
    ``norm``: as :func:`lmax_upper`'s (``||M||_F``, the same float, summed once for both)."""
    steps = _ritz_block(M, U, max_steps, accept, by_top=True)
    if steps is None:
        return None
    w, block, top = steps
    margin = rel * (float(np.linalg.norm(M)) if norm is None else norm)
    tight = float(w[0]) + _TIGHT_SAFETY * top + margin
    safe = float(w[0]) + block + margin
    return sorted({tight, safe})  # (the smaller first: either may be the one below lambda_max)


def _orthonormal(Z: np.ndarray) -> np.ndarray:
    """Q of the thin QR of Z (n x r, n >= r): LAPACK's geqrf/orgqr called directly, the same Q
    as ``numpy.linalg.qr`` at half its call overhead (this runs once per DNN step)."""
    geqrf, orgqr = scipy.linalg.lapack.get_lapack_funcs(("geqrf", "orgqr"), (Z,))
    qr, tau, _, info = geqrf(Z)
    if info == 0:
        q, _, info = orgqr(qr, tau)
        if info == 0:
            return q
    return np.linalg.qr(Z)[0]


def _times(M: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """``M Z`` in float64 as :func:`_ritz` forms it: a float32 M (dnn_optimize's) times Z in float32,
    half the memory traffic (the direction only).  Z in C order: LAPACK's Q (Fortran order) as the
    thin operand ran 2-2.4x slower in OpenBLAS's GEMM (n = 361, 4-6 columns: 44 -> 19 us in float32,
    95 -> 43 us in float64)."""
    return (M @ Z.astype(M.dtype, order="C", copy=False)).astype(float, copy=False)


def _ritz(M: np.ndarray, U: np.ndarray, r: int, L: np.ndarray | None = None,
          lw: np.ndarray | None = None, MU: np.ndarray | None = None):
    """One block-Krylov Rayleigh–Ritz step from U: (values desc, vectors n x r), for the
    operator ``M - L diag(lw) L^T`` (the low-rank part, when given, applied as such: no n x n
    pass to subtract it).  M may be float32 (the optimizer's direction only: never a bound).
    ``MU``: ``_times(M, U)`` when the caller has it (no L; used only when U needs no
    orthonormalizing: the same floats as the product made here)."""
    n = M.shape[0]
    if n <= 3 * r or U is None:
        M = np.asarray(M, dtype=float)
        if L is not None:
            M = M - (L * lw) @ L.T
        w, V = np.linalg.eigh(M)
        return w[::-1], V[:, ::-1][:, :r]

    Lw = L * lw if L is not None else None  # (the same product for both operands below)

    def op(Z):  # (the low-rank part applied as such)
        out = _times(M, Z)
        if L is not None:
            out -= Lw @ (L.T @ Z)
        return out

    # the basis [U, Z]: U (orthonormal, kept warm) and Z, the part of M U orthogonal to it
    # (block Gram-Schmidt, twice: orthogonal to rounding even when M U is nearly in span U)
    UU = U.T @ U
    UU.flat[:: r + 1] -= 1.0
    if np.abs(UU).max() > 1e-8:  # a start from elsewhere: orthonormalize it
        U, MU = np.linalg.qr(U)[0], None
    MU = op(U) if MU is None or L is not None else MU
    Z = MU - U @ (U.T @ MU)
    Z -= U @ (U.T @ Z)
    Z = _orthonormal(Z)
    MZ = op(Z)  # M [U, Z] = [M U, M Z]: r new products with M, not 2r
    H = np.empty((2 * r, 2 * r))
    H[:r, :r], H[:r, r:], H[r:, r:] = U.T @ MU, U.T @ MZ, Z.T @ MZ
    H[r:, :r] = H[:r, r:].T
    w, V = _small_eigh(0.5 * (H + H.T))
    w, V = w[::-1], V[:, ::-1]
    return w, U @ V[:r, :r] + Z @ V[r:, :r]
