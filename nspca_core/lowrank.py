"""Top-d factor ``V = U_d Λ_d^{1/2}`` of the covariance, so ``A_d = V V^T``."""

from __future__ import annotations

import numpy as np

from ._common.eig import top_eigh
from ._common.validation import pow2_scale
from ._common.params import check

__all__ = ["lowrank_factor"]


def flip_signs(U: np.ndarray) -> np.ndarray:
    """Deterministic signs: the largest-magnitude entry of each column is positive."""
    if U.size == 0:
        return U
    rows = np.argmax(np.abs(U), axis=0)
    signs = np.sign(U[rows, np.arange(U.shape[1])])
    signs[signs == 0] = 1.0
    return U * signs


# Dense matrices of at least this order, asked for few eigenpairs, go to Lanczos (ARPACK):
# LAPACK's eigh reduces the whole matrix to tridiagonal form (4/3 n^3 flops) even for a
# subset of eigenpairs, while Lanczos costs O(n^2) per product and needs few products
# when the top of the spectrum is separated (covariances of real data).
_LANCZOS_MIN_N = 1500
# ... and only when count <= n / _LANCZOS_MAX_FRACTION
_LANCZOS_MAX_FRACTION = 20
_LANCZOS_SEED = 20140621
# a Lanczos pair is kept when ||A u - w u|| <= _LANCZOS_RESIDUAL * lambda_1 (else: eigh)
_LANCZOS_RESIDUAL = 1e-8
# at most about n / _LANCZOS_BUDGET matrix-vector products before giving up for eigh: about what
# the dense eigh itself costs
_LANCZOS_BUDGET = 10


# thin data with a power of two (:func:`pow2_scale`) in this range are factored without a scaled copy
# (:func:`_thin_pairs`): no product of two entries overflows, and both routes round alike
_SCALE_FREE_MIN, _SCALE_FREE_MAX = 2.0 ** -60, 2.0 ** 60


def _pow2_of(top: float) -> float:
    """:func:`pow2_scale` of an array whose ``max |a|`` is ``top`` (nonnegative)."""
    if top == 0.0 or not np.isfinite(top):
        return 1.0
    return float(np.ldexp(1.0, int(np.frexp(top)[1]) - 1))


def _thin_pairs(X: np.ndarray, d: int, s: float, keep: dict | None = None):
    """``(w, U)``: the top ``d + 1`` eigenpairs (descending, ``w`` clipped at 0) of the covariance of
    ``X / s`` (m < n rows), from its m x m Gram, with ``s`` a power of two, without the n-column copy
    ``X / s``: ``(X/s)(X/s)^T = (X X^T) / s^2`` and ``(X/s)^T P = (X^T P) / s`` entry for entry (a power
    of two moves only exponents, so every product and sum rounds alike), as long as no product of two
    entries leaves the normal range in either form: with ``s`` in ``[2^-60, 2^60]`` none overflows, and
    one underflows only where two entries below about ``2^-450 s`` meet (that term then rounds
    differently, far below the rest of its sum).  ``s = 1``: X as given.  ``keep``: a dict given
    receives the Gram ``(X/s)(X/s)^T / m`` as ``keep["gram"]`` and ``s`` as ``keep["scale"]``."""
    m = X.shape[0]
    # X = P S Q^T; A = Q (S^2/m) Q^T.  Eigenvectors of A from the m x m Gram.
    G = X @ X.T
    if s != 1.0:
        G *= 1.0 / (s * s)  # exact: a power of two
    G /= m
    if keep is not None:
        keep["gram"], keep["scale"] = G, s
    w, P = _top_eigh(G, d + 1)
    w = np.clip(w, 0.0, None)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(w > 0, 1.0 / np.sqrt(w * m), 0.0)
    U = X.T @ P
    U *= scale / s  # (X^T P) / s times scale in one rounding, that of (X/s)^T P times scale
    return w, U  # columns of zero eigenvalue are 0, harmless in V


def _top_eigh(A: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Top ``count`` eigenpairs of symmetric ``A``, descending.

    ``scipy.linalg.eigh(subset_by_index=...)`` for small matrices or many
    pairs (the full solver when it fails: :func:`nspca_core._common.eig.top_eigh`); otherwise
    :func:`_top_lanczos`, falling back to ``eigh`` when ARPACK does not converge or a residual
    is above tolerance.
    """
    n = A.shape[0]
    count = min(count, n)
    if n >= _LANCZOS_MIN_N and count * _LANCZOS_MAX_FRACTION <= n:
        pairs = _top_lanczos(A, count)
        if pairs is not None:
            return pairs
    w, U = top_eigh(A, count)  # LAPACK's subset solver, else the full one when it fails
    return w[::-1], U[:, ::-1]


def _top_lanczos(A: np.ndarray, count: int):
    """Top ``count`` eigenpairs by ARPACK (``eigsh(which="LA", tol=0)``: machine precision),
    descending, or None when it fails or a residual ``||A u - w u||`` exceeds
    ``_LANCZOS_RESIDUAL * max|w|``.  The start vector is fixed (same input, same output)."""
    from scipy.sparse.linalg import ArpackError, ArpackNoConvergence, eigsh

    n = A.shape[0]
    v0 = np.random.default_rng(_LANCZOS_SEED).standard_normal(n)
    ncv = min(n, max(2 * count + 1, 20))
    # restarts within a budget of about n / _LANCZOS_BUDGET products, the cost of the dense
    # eigh (flat spectra need more; they then fall back to eigh)
    maxiter = max(1, (n // _LANCZOS_BUDGET - ncv) // (ncv - count))
    try:
        w, U = eigsh(A, k=count, which="LA", tol=0, v0=v0, ncv=ncv, maxiter=maxiter)
    except (ArpackNoConvergence, ArpackError):
        return None
    order = np.argsort(-w, kind="stable")
    w, U = w[order], U[:, order]
    top = float(np.abs(w).max())
    res = np.linalg.norm(A @ U - U * w, axis=0)
    if top == 0 or not np.all(res <= _LANCZOS_RESIDUAL * top) or _missed_above(A, U, w[-1], top):
        return None
    return w, U


def _missed_above(A: np.ndarray, U: np.ndarray, floor: float, top: float) -> bool:
    """Whether ``A`` has an eigenvalue above ``floor`` that the orthonormal columns of U miss.

    Lanczos from one start vector sees one vector per distinct eigenvalue in
    exact arithmetic: a repeated top eigenvalue could be returned once and the
    next one taken for ``λ_{d+1}``, which the bounds ``OPT_d + λ_{d+1}`` would
    then underestimate.  So the top eigenvalue of ``P A P`` (``P = I - U U^T``)
    is estimated by a second, loose Lanczos run: a Ritz value above
    ``floor + 1e-6 top`` proves a miss (Ritz values never exceed the top
    eigenvalue); no convergence counts as a miss too (the caller falls back to
    ``eigh``).
    """
    from scipy.sparse.linalg import ArpackError, ArpackNoConvergence, LinearOperator, eigsh

    n = A.shape[0]

    def deflate(v):
        return v - U @ (U.T @ v)

    op = LinearOperator((n, n), matvec=lambda v: deflate(A @ deflate(np.ravel(v))), dtype=np.float64)
    v0 = deflate(np.random.default_rng(_LANCZOS_SEED + 1).standard_normal(n))
    try:
        theta = eigsh(op, k=1, which="LA", tol=1e-6, v0=v0, ncv=20, maxiter=50,
                      return_eigenvectors=False)[0]
    except (ArpackNoConvergence, ArpackError):
        return True
    return bool(theta > floor + 1e-6 * top)


def lowrank_factor(X=None, *, cov=None, d):
    """Top-d factor of the covariance.

    Parameters
    ----------
    X : array_like of shape (m, n), optional
        Data, used as given: the covariance is ``A = X^T X / m`` (center first).
    cov : array_like of shape (n, n), optional
        The covariance itself (symmetric PSD).  Give exactly one of X, cov.
    d : int in [1, n]

    Returns
    -------
    V : ndarray of shape (n, d)
        ``U_d Λ_d^{1/2}`` with ``A_d = V V^T`` the best rank-d approximation.
        Column signs are fixed (largest-magnitude entry positive).
    eigenvalues : ndarray of shape (d + 1,)
        ``λ_1 >= ... >= λ_{d+1}`` (``λ_{d+1} = 0`` when ``d = n`` or the rank
        is at most d), for the bounds ``OPT <= OPT_d + λ_{d+1}``.

    Notes
    -----
    From data with ``m < n`` only the m x m Gram matrix is formed (a thin
    problem of cost O(m^2 n)); the n x n covariance never is.  Otherwise the
    n x n covariance is formed.  The top ``d + 1`` eigenpairs of the matrix
    formed come from a partial eigensolver: ARPACK Lanczos
    (``scipy.sparse.linalg.eigsh``, machine-precision tolerance, fixed start
    vector, at most about ``n / 10`` products) when its order is at least 1500
    and ``d + 1`` at most a twentieth of it, with every residual ``||A u - λ u||`` checked (``<= 1e-8 λ_1``), a
    second Lanczos run on the deflated matrix checking that no eigenvalue
    above ``λ_{d+1}`` was missed (repeated eigenvalues), and
    ``scipy.linalg.eigh(subset_by_index=...)`` as the fallback and for
    smaller problems (which still reduces the whole matrix to tridiagonal
    form, 4/3 n^3 flops).  Eigenvalues below zero from rounding are clipped
    to zero.  ``cov`` must be positive semidefinite
    (:func:`nspca_core._common.validation.check_psd`).
    """
    X, A = check("data_or_cov", (X, cov))
    n = X.shape[1] if X is not None else A.shape[0]
    d = check("d", d, n_features=n)
    return lowrank_factor_clean(X, A, d)


def lowrank_factor_clean(X, A, d: int, top: float | None = None, keep: dict | None = None):
    """Unvalidated :func:`lowrank_factor` (exactly one of ``X``, ``A`` given).

    Works on the input divided by a power of two (exact) so that neither
    ``X X^T`` nor the eigenvalues under- or overflow for tiny or huge data;
    the answer is scaled back (``λ`` by ``s^2`` for data, ``s`` for a
    covariance), so it does not depend on the scale up to rounding.  Thin data
    whose power of two is within ``[2^-60, 2^60]`` are not copied: the division
    is applied to the m x m Gram and the n x (d + 1) product instead
    (:func:`_thin_pairs`, the same floats).  ``top``: ``max |X|`` when the
    caller has it (:func:`pow2_scale`'s pass is then not made again).  ``keep``: on thin data, a dict
    that receives the m x m Gram the pairs came from (:func:`_thin_pairs`; it is not changed after).
    """
    n = X.shape[1] if X is not None else A.shape[0]
    if X is not None:
        s = pow2_scale(X) if top is None else _pow2_of(top)
        unit = s  # A = s^2 (X/s)^T (X/s) / m: eigenvalues times s^2, V times s
        if X.shape[0] < n:
            free = _SCALE_FREE_MIN <= s <= _SCALE_FREE_MAX  # X / s only through the Gram and X^T P
            w, U = _thin_pairs(X, d, s, keep) if free else _thin_pairs(X / s, d, 1.0, keep)
        else:
            X = X / s
            A = (X.T @ X) / X.shape[0]  # one array on both sides: BLAS's symmetric product, as before
            w, U = _top_eigh(A, d + 1)
            w = np.clip(w, 0.0, None)
    else:
        s = pow2_scale(A)
        A, unit = A / s, np.sqrt(s)
        w, U = _top_eigh(A, d + 1)
        w = np.clip(w, 0.0, None)
    U = flip_signs(U[:, :d])
    if U.shape[1] < d:  # rank-deficient thin case (d >= m): pad with zero columns
        U = np.hstack([U, np.zeros((n, d - U.shape[1]))])
    eig = np.zeros(d + 1)
    eig[: w.size] = w[: d + 1]
    V = U * (np.sqrt(eig[:d]) * unit)
    with np.errstate(over="ignore", under="ignore"):  # λ of data near the float limits
        eig = eig * unit * unit
    return V, eig
