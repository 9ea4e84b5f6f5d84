"""The exact optimum for ``k <= 2``: every pair in closed form, screened, in blocks."""

from __future__ import annotations

import numpy as np

__all__ = ["opt_pairs"]


def _pair_values(Arows: np.ndarray, rows: np.ndarray, dg: np.ndarray) -> np.ndarray:
    """Closed-form best value on each pair {i, j} (i in rows): the top eigenvalue of the
    2 x 2 block when ``A_ij > 0``, else -inf (then a single coordinate is as good)."""
    a = dg[rows][:, None]
    b = dg[None, :]
    c = Arows
    h = 0.5 * (a - b)
    val = 0.5 * (a + b) + np.sqrt(h * h + c * c)
    val[c <= 0] = -np.inf
    val[np.arange(rows.size), rows] = -np.inf
    return val


def opt_pairs(cov, k: int, *, lower: float = 0.0, block_bytes: int = 64 * 2**20):
    """Exact OPT for ``k <= 2`` by enumeration; returns ``(OPT, x)``.

    ``k = 1``: ``OPT = max_i A_ii`` (x a basis vector).  ``k = 2``: on a pair
    ``{i, j}`` the best unit ``x >= 0`` is the top eigenvector of the 2 x 2 block
    when ``A_ij > 0`` (Perron: it is then nonnegative), value
    ``(a + b)/2 + sqrt(((a - b)/2)^2 + c^2)``; when ``A_ij <= 0``,
    ``x^T A x = a x_i^2 + b x_j^2 + 2 c x_i x_j <= max(a, b)``, a single
    coordinate.  So OPT is the max of these closed forms.

    Screening: the value on {i, j} is at most ``max(a, b) + c <= a_max +
    sqrt(a_i a_max)`` (Cauchy–Schwarz), so with a known feasible value
    ``lower`` only features with ``a_i >= (lower - a_max)^2 / a_max`` can be in a
    better pair.  The pairs of those are enumerated in blocks of rows of A
    (formed from the data block by block when the covariance is held as data):
    memory ``O(block_bytes)``, never n x n.
    """
    n = cov.n
    dg = cov.diag()
    i0 = int(np.argmax(dg))
    amax = float(dg[i0])
    best, x = amax, np.zeros(n)
    x[i0] = 1.0
    if k == 1 or n == 1 or amax <= 0:
        return best, x
    cand = np.arange(n)
    if lower > amax:
        cand = np.flatnonzero(dg >= (1 - 1e-9) * (lower - amax) ** 2 / amax)
    dc = dg[cand]
    step = max(1, block_bytes // (8 * max(cand.size, n if cov._A is None and cov.X is None else 0) * 4))
    arg = None
    for s in range(0, cand.size, step):
        rows = np.arange(s, min(cand.size, s + step))
        if cov.X is not None and cov._A is None:
            Arows = (cov.X[:, cand[rows]].T @ cov.X[:, cand]) / cov.X.shape[0]
        elif cov.X is None and cov._A is None:  # an operator (sparse data): columns of A
            E = np.zeros((n, rows.size))
            E[cand[rows], np.arange(rows.size)] = 1.0
            Arows = cov.matvec(E)[cand].T
        else:
            Arows = cov.dense()[np.ix_(cand[rows], cand)]
        val = _pair_values(Arows, rows, dc)
        ij = int(np.argmax(val))
        r, j = divmod(ij, cand.size)
        if val[r, j] > best:
            best, arg = float(val[r, j]), (int(cand[rows[r]]), int(cand[j]))
    if arg is not None:
        i, j = arg
        u = np.abs(np.linalg.eigh(cov.submatrix([i, j]))[1][:, -1])
        x = np.zeros(n)
        x[[i, j]] = u / np.linalg.norm(u)
    return best, x
