"""Slow, obviously-correct references for tiny inputs (n <= 9).

``brute_opt(A, k)``: OPT = max x^T A x over unit x >= 0 with at most k nonzeros.

Why enumerating supports and eigenvectors is exact: take an optimal x whose
support J is minimal.  Stationarity on the relative interior of the face gives
A_JJ x_J = OPT x_J with x_J > 0.  If the OPT-eigenspace E of A_JJ had dimension
>= 2, a unit y in E orthogonal to x_J has a negative entry, so the arc
x_J cos t + y sin t (inside E, unit norm, same value) leaves the orthant at
some t, giving an optimal point with a smaller support: a contradiction.  So E
is one-dimensional, eigh returns ±x_J, and checking every eigenvector of every
principal submatrix for a constant sign finds OPT.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np


def brute_opt(A, k, *, tol=1e-9):
    """Return (OPT, x) by enumeration; x is an optimal feasible point."""
    A = np.asarray(A, dtype=float)
    n = A.shape[0]
    best, best_x = -np.inf, None
    for size in range(1, k + 1):
        for J in combinations(range(n), size):
            J = list(J)
            w, U = np.linalg.eigh(A[np.ix_(J, J)])
            for j in range(size):
                u = U[:, j]
                if u.max() <= tol:
                    u = -u
                if u.min() < -tol:
                    continue
                u = np.clip(u, 0.0, None)
                u /= np.linalg.norm(u)
                val = float(u @ A[np.ix_(J, J)] @ u)
                if val > best:
                    x = np.zeros(n)
                    x[J] = u
                    best, best_x = val, x
    return best, best_x


def brute_opt_lowrank(V, k):
    """OPT_d = max ||V^T x||^2 over S_k^n, by :func:`brute_opt` on V V^T."""
    V = np.asarray(V, dtype=float)
    return brute_opt(V @ V.T, k)


def assert_cross_table_bounds(C, A, S, T):
    """Every entry ``C[i, j]`` (1 <= i <= |S|, 1 <= j <= |T|) of a cross table is at least the largest spectral
    norm of an i x j submatrix of ``max(A_ST, 0)``, by enumeration of both index sets (small S and T only)."""
    P = np.maximum(A[np.ix_(S, T)], 0.0)
    s, t = len(S), len(T)
    for i in range(1, s + 1):
        for j in range(1, t + 1):
            best = max(np.linalg.norm(P[np.ix_(I, J)], 2)
                       for I in combinations(range(s), i) for J in combinations(range(t), j))
            assert C[i, j] >= best * (1 - 1e-12), (i, j, C[i, j], best)


def assert_certify_above_bruteforce(A, k, seed, *, rel=1e-9):
    """``certify`` of a given answer (brute force's own for even ``seed``, else a random feasible point)
    holds a bound >= OPT, and so does every bound it reports (to ``rel`` of A's scale)."""
    from nspca_core import certify

    n = A.shape[0]
    k = min(k, n)
    opt, xo = brute_opt(A, k)
    rng = np.random.default_rng(seed)
    x = xo if seed % 2 == 0 else np.abs(rng.standard_normal(n)) * (rng.permutation(n) < k)
    if not np.any(x > 0):
        x = xo
    c = certify(cov=A, k=k, x=x)
    scale = max(1.0, float(np.abs(A).max()))
    assert c.upper_bound >= opt - rel * scale
    for val in c.bounds.values():
        assert val >= opt - rel * scale
    return c
