"""A rigorous upper bound on ``lambda_max`` of the KKT dual matrix ``A + N`` (:func:`.dual_start.kkt_init`) through
the data's thin factor, without the n x n eigenvalue (issue 39, 25th round: MLL k = 1,798 / 12,582, |S| ~ 2,200,
LAPACK's eigenvalue of the KKT point's matrix was 0.76-0.81 of 1.3-2.9 CPU s).

On thin data (m samples, n > m + 2 columns) ``A = X^T X / m`` has rank at most m and the KKT point's N is of rank
two, so ``A + N = B D B^T`` with ``B = [X^T, e, u]`` (n x (m + 2)) and ``D = diag(I_m / m, [[0, 1], [1, 0]])``.
Whether a number c bounds its top eigenvalue is decided on an (m + 2) x (m + 2) matrix by an inertia count."""

from __future__ import annotations

import numpy as np

_EPS = np.finfo(float).eps
# the margin above the small problem's top eigenvalue tried first (relative), at most this many tries (each from T's
# slope at the last), never beyond the last margin (then nothing is proved here: LAPACK's eigenvalue instead)
_MARGIN_FIRST, _TRIES, _MARGIN_LAST = 1e-12, 6, 1e-5


def kkt_lmax_thin(XT: np.ndarray, m: int, x: np.ndarray, w: np.ndarray) -> float | None:
    """A number at or above ``lambda_max(A + N)`` (of the float matrices, exactly), or None (nothing proved).

    ``XT`` (m x n): the data's columns, ``A = fl(XT^T XT) / m`` in any summation order (:meth:`.Cov.submatrix`,
    :func:`.operators.cov.gram`); ``x`` (n, ``>= 0``, support I) and ``w`` (n, ``>= 0``, zero on I): N as
    :func:`.dual_start.kkt_init` forms it, ``N_ij = N_ji = fl(w_i x_j)`` for i off I, j in I, zero elsewhere.

    Proof.  (1) ``G = XT^T XT / m`` exactly: each entry of A is a sum of m products rounded in some order, then
    divided by m, so ``|A - G| <= (gamma_m + 2 eps) |XT|^T |XT| / m`` entrywise and ``||A - G||_2 <= (gamma_m +
    2 eps) ||XT||_F^2 / m`` (Frobenius of the entrywise bound).  (2) With ``s`` a power of two, ``e = w / s`` and
    ``u = x s`` are exact (checked: ``e s == w``, ``u / s == x``), and ``N_exact = e u^T + u e^T`` has entries
    ``w_i x_j`` exactly; ``|N - N_exact| <= eps |N_exact|`` (plus underflow), ``||N - N_exact||_2 <= 2 eps ||w||
    ||x|| + n 2^-1000``.  (3) ``G + N_exact = B D B^T``.  For ``c > 0`` Haynsworth's inertia additivity on
    ``Z = [[c I_n, B], [B^T, D^-1]]`` reads ``In(c I) + In(T) = In(D^-1) + In(c I - B D B^T)`` with ``T = D^-1 -
    B^T B / c``; ``D^-1 = diag(m I_m, J)`` has one negative eigenvalue (none without the rank-two part), so when T's
    second smallest eigenvalue is positive (its smallest, without it) T has at most one negative and no zero
    eigenvalue, and ``c I - B D B^T`` none: ``lambda_max(G + N_exact) < c``.  T is formed in floats: ``K = fl(B^T
    B)`` is within ``gamma_n ||B||_F^2`` of the exact Gram (2-norm), the division and subtraction within ``2 eps
    (||D^-1||_F + ||K||_F / c)``, and LAPACK's eigenvalues of the formed T within ``32 (m + 2) eps ||T||_F`` (the
    generous backward-error factor of :func:`.dnn_lmax.lmax_upper`; the others are summation bounds,
    ``gamma_n <= 1.01 n eps``, taken twice over); the computed eigenvalue must exceed their sum.  By Weyl,
    ``lambda_max(A + N) <= c + ||A - G||_2 + ||N - N_exact||_2``, rounded up.

    The point c: the top eigenvalue of ``F^T D F`` with ``K = V diag(s) V^T`` and ``F = V diag(s)^(1/2)`` (the
    nonzero eigenvalues of ``B D B^T``, up to rounding), times ``1 + rel``, rel from :data:`_MARGIN_FIRST` raised
    along T's slope until the test proves it; any c is valid where the test holds, the floats only choose it.
    Costs ``O(n m^2)``: one Gram of B and (m + 2) x (m + 2) eigenproblems."""
    n = XT.shape[1]
    if not (XT.shape[0] == m and m + 2 < n and x.shape == (n,) and w.shape == (n,)):
        return None
    I = x > 0
    rank2 = bool(np.any(w > 0))
    # X_S^T scaled by t = 2^-q (exact): ``G = Y Y^T / (m t^2)`` with ``m t^2`` near 1, the scale of the rank-two
    # block's, so that T's eigenvalue at the top moves ~1 per unit of ``c / lambda`` against ``||T||_F ~ sqrt(m)``
    # (with t = 1, ``||T||_F ~ m^1.5``: LAPACK's allowance on T was then ~5e-10 of the value, ~1e-11 now)
    t = float(np.ldexp(1.0, -int(np.round(np.log2(m) / 2.0))))
    Y = XT.T * t
    if not np.array_equal(Y / t, XT.T):
        return None
    mt2 = m * t * t  # (exact: a power of two times m)
    if rank2:
        nw = float(np.linalg.norm(w))
        s = float(np.ldexp(1.0, int(np.round(np.log2(nw) / 2.0))))  # (||e|| ~ ||u|| ~ sqrt(||w||): balanced)
        e, u = w / s, x * s
        if np.any(w[I] != 0) or not (np.array_equal(e * s, w) and np.array_equal(u / s, x)):
            return None
        B = np.column_stack([Y, e, u])
        Dinv = np.zeros((m + 2, m + 2))
        Dinv[m, m + 1] = Dinv[m + 1, m] = 1.0
    else:
        nw, B, Dinv = 0.0, Y, np.zeros((m, m))
    Dinv[np.arange(m), np.arange(m)] = mt2
    r = B.shape[1]
    K = B.T @ B
    K = 0.5 * (K + K.T)  # (exactly symmetric: the 2-norm bound on fl(B^T B) covers either triangle's entries)
    sv, V = np.linalg.eigh(K)
    F = V * np.sqrt(np.clip(sv, 0.0, None))
    D = np.zeros((r, r))
    D[np.arange(m), np.arange(m)] = 1.0 / mt2
    if rank2:
        D[m, m + 1] = D[m + 1, m] = 1.0
    p = float(np.linalg.eigvalsh(F.T @ D @ F)[-1])
    if not (np.isfinite(p) and p > 0 and n * _EPS < 0.01):
        return None
    fro2 = float(np.einsum("ij,ij->", B, B)) * (1.0 + 2.0 * n * r * _EPS)
    gram_tol = 2.0 * n * _EPS * fro2  # (gamma_n ||B||_F^2: gamma_n <= 1.01 n eps, twice over)
    rel = _MARGIN_FIRST
    for _ in range(_TRIES):
        c = p * (1.0 + rel)
        held, slope = _inertia_test(K, Dinv, c, 1 if rank2 else 0, gram_tol)
        if held > 0:
            tol_a = _gram_tol(XT, m)
            tol_n = 4.0 * _EPS * nw * float(np.linalg.norm(x)) + n * 2.0 ** -1000
            return (c + tol_a + tol_n) * (1.0 + 4.0 * _EPS)
        # the next margin from T's slope there (only a guess: the test decides)
        rel = max(4.0 * rel, 2.0 * -held / slope + rel) if slope > 0 else 4.0 * rel
        if not np.isfinite(rel) or rel > _MARGIN_LAST:
            return None
    return None


def _gram_tol(XT: np.ndarray, m: int) -> float:
    """``||A - G||_2`` at most this, ``A = fl(XT^T XT) / m`` in any summation order and ``G`` its exact value
    (:func:`kkt_lmax_thin`'s (1)): ``(gamma_m + 2 eps) ||XT||_F^2 / m``, ``gamma_m + 2 eps <= 1.01 (m + 2) eps``
    taken twice over, the Frobenius norm rounded up."""
    fro_x = float(np.einsum("ij,ij->", XT, XT)) * (1.0 + 2.0 * m * XT.shape[1] * _EPS)
    return 2.0 * (m + 2) * _EPS * fro_x / m


def _inertia_test(K: np.ndarray, Dinv: np.ndarray, c: float, j: int, gram_tol: float) -> tuple[float, float]:
    """``(held, slope)``: ``held > 0`` proves that ``T = D^-1 - K_exact / c`` has its eigenvalue of index j (from the
    smallest) positive, K within ``gram_tol`` (2-norm) of ``K_exact`` (:func:`kkt_lmax_thin`'s proof: ``held`` is
    the computed eigenvalue less every allowance); ``slope``: ``d lambda_j / dc`` there, ``v^T K v / c^2``, times c."""
    T = Dinv - K / c
    lam, vec = np.linalg.eigh(T)
    r = K.shape[0]
    allow = 32.0 * _EPS * (r * float(np.linalg.norm(T)) + float(np.linalg.norm(Dinv)) + float(np.linalg.norm(K)) / c)
    held = float(lam[j]) - (allow + gram_tol / c)
    return (held if np.isfinite(held) else -np.inf), float(vec[:, j] @ K @ vec[:, j]) / c


def chol_slack_thin(A: np.ndarray, XT: np.ndarray, m: int, c: float) -> float | None:
    """:func:`.dnn_lmax.chol_lmax`'s ``slack`` at ``c`` (the same float, from A's diagonal alone), or None, where
    ``lambda_max(A) <= c`` is proved through the thin factor, ``A = fl(XT^T XT) / m`` (any summation order; XT m x n,
    m < n), with no n x n factorization (issue 39, 25th round: a thin split's S, :func:`.cheap.lambda1_only`).

    Proof.  ``G = XT^T XT / m`` exactly has the nonzero eigenvalues of ``K0 / m``, ``K0 = XT XT^T`` (m x m), and
    ``||A - G||_2 <= tol_a`` (:func:`kkt_lmax_thin`'s (1)).  ``K`` is the computed ``fl(XT XT^T)``'s lower triangle
    mirrored (the entries LAPACK reads): each entry a computed inner product of length n, ``|K - K0| <= gamma_n P0``
    entrywise with ``P0 = |XT| |XT|^T``, whose computed ``P`` (sums of nonnegative terms) has ``P0 <= P / (1 -
    gamma_n)``; so ``||K - K0||_2 <= ||K - K0||_F <= gamma_n / (1 - gamma_n) ||P||_F``, taken as ``2 n eps ||P||_F``
    (twice over, plus ``m n 2^-1000`` for underflow; on centered MLL ``||P||_F`` is ~0.65 of ``||XT||_F^2``, the
    cruder bound kkt_lmax_thin takes, which misses the ~4e-12 margin of lambda1_only's guess).  LAPACK's top
    eigenvalue of K is within ``32 m eps ||K||_F`` (:func:`.dnn_lmax.lmax_upper`'s backward-error factor) of
    ``lambda_max(K)``.  By Weyl ``lambda_max(A) <= (lam + 32 m eps ||K||_F + 2 n eps ||P||_F + m n 2^-1000) / m +
    tol_a``, each norm and the sum inflated for their rounding;
    where that is at most c, the slack returned (chol_lmax's formula ``2 eps max_i (c - A_ii) + g tr(c I - A) / (1 -
    g)``, nonnegative where every ``c - A_ii > 0``, else None as there) makes ``c + slack`` a bound, the float
    chol_lmax's proof would give."""
    n = A.shape[0]
    if not (XT.shape == (m, n) and m < n and n * _EPS < 0.01 and np.isfinite(c) and c > 0):
        return None
    d = c - np.diagonal(A)  # (chol_lmax's H diagonal: fl(-A_ii + c) == fl(c - A_ii))
    if not np.all(d > 0):
        return None
    K = np.tril(XT @ XT.T)
    K = K + np.tril(K, -1).T  # (exactly the lower triangle mirrored: adding zeros)
    aX = np.abs(XT)
    P = aX @ aX.T
    inf = 1.0 + 4.0 * m * m * _EPS  # (a Frobenius norm's rounding, generous)
    fro_k, fro_p = float(np.linalg.norm(K)) * inf, float(np.linalg.norm(P)) * inf
    tol_a = _gram_tol(XT, m)
    lam = float(np.linalg.eigvalsh(K)[-1])
    bound = ((max(lam, 0.0) + 32.0 * m * _EPS * fro_k + 2.0 * n * _EPS * fro_p + m * n * 2.0 ** -1000) / m
             + tol_a) * (1.0 + 8.0 * _EPS)
    if not (np.isfinite(bound) and bound <= c):
        return None
    trace = float(d.sum()) * (1.0 + (n + 1) * _EPS)
    g = 32.0 * (n + 1) * _EPS
    return 2.0 * _EPS * float(d.max()) + g * trace / (1.0 - g)
