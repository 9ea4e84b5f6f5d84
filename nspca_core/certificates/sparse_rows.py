"""The row-sum bound for sparse data (a bag of words above the dense size), row by row.

Why: above ``_DENSE_MAX_N`` features a sparse matrix was certified by ``lambda_1`` and the paper's
bounds alone (its covariance is never formed), which are far from the optimum at small k: on a
KOS-shaped corpus (3,430 x 6,906 counts) ``lambda_1`` certified 0.47 at k = 5.  The row-sum bound
``OPT <= max_i`` (sum of the k largest entries of ``(A_i)_+``) needs the rows of A, but only the few
whose Cauchy-Schwarz screen can exceed the best row computed: a word's row entries are at most
``sqrt(A_ii A_jj)``, and in a Zipf vocabulary few words have a large variance.

Proof.  For unit ``x >= 0`` with support J, ``|J| <= k``: ``x^T A x <= x^T A_+ x <= lambda_max((A_+)_JJ)
<= max_{i in J} sum_{j in J} (A_ij)_+ <= max_i r_i`` with ``r_i`` the sum of the k largest ``(A_ij)_+``
over j.  A psd gives ``|A_ij| <= sqrt(A_ii A_jj)``, so ``r_i <= u_i = sqrt(d_i) * T`` with ``d >= diag(A)``
and ``T`` the sum of the k largest ``sqrt(d_j)``: the rows are computed in decreasing ``u_i``, and a row
not computed has ``r_i <= u_i <=`` the first ``u`` not computed.  The bound is the largest computed
``r_i`` (rounded up), or that ``u`` when the work cap (or a caller's ``enough``) stopped the rows first.

Rounding.  ``A = X^T X / m - mu mu^T`` (:class:`~nspca_core.operators.sparse.SparseCov`).  With ``s_i =
X_i^T X_i / m`` (the second moments), each computed entry is within ``4 (m + 8) eps sqrt(s_i s_j)`` of
the exact one: the sparse dot product's error is at most ``m eps sum_a |x_ai x_aj| <= m eps m
sqrt(s_i s_j)``; ``/ m``, ``mu_i mu_j`` and the subtraction round once each; the means' sums err by at
most ``m eps sqrt(s_i)`` (``|mu_i| <= sqrt(s_i)``).  ``max(a + e, 0) <= max(a, 0) + e`` then gives
``r_i <=`` the computed top-k sum plus ``4 (m + 8) eps sqrt(s_i) S``, ``S`` the sum of the k largest
``sqrt(s_j)``.  The variances ``d`` carry ``4 (m + 4) eps s`` for the cancellation of ``s - mu^2``.
Every sum of k terms is rounded up by ``4 (k + 2) eps``.
Tests: ``tests/core/certificates/test_sparse_rows.py`` (brute force, hypothesis, a forced early stop).
"""

from __future__ import annotations

import numpy as np

from ..operators.sparse import SparseCov

__all__ = ["rows_loop", "sparse_rowsum_bound"]

_EPS = float(np.finfo(np.float64).eps)
# the rows' work is capped at this many times nnz(X) multiply-adds (a sparse product with one column
# costs nnz): the rows of the largest variances of a KOS-shaped corpus (256 of 6,906) cost ~115 nnz
WORK_PER_NNZ = 160
# one batch of rows is at most this many float64 (rows x n): 64 MB
_BATCH_FLOATS = 8 * 2**20


def _top_sum(values: np.ndarray, k: int) -> np.ndarray:
    """The sum of the k largest entries of each row (``values`` (p, n)), rounded up."""
    n = values.shape[1]
    kk = min(k, n)
    top = np.partition(values, n - kk, axis=1)[:, n - kk:]
    return top.sum(axis=1) * (1 + 4 * (kk + 2) * _EPS)


def sparse_rowsum_bound(cov: SparseCov, k: int, *, work_cap: float | None = None,
                        enough: float | None = None) -> tuple[float, dict] | None:
    """A rigorous ``OPT <=`` bound from the rows of A that can bind (module docstring); with what it
    did (``rows``, ``of``, ``stopped``: "screen", "cap" or "enough").  None for covariances other than a plain
    :class:`SparseCov` (a weighted or dense-centered one rounds otherwise).  ``enough``: a caller's bound; once
    a computed row reaches it the rows stop (the bound, then the first screen value not computed, is no use
    to that caller), the first batches small (8 rows, doubling) so that a bound far above it stops early.

    Memory: one batch of rows, at most 64 MB, and a copy of X's index structure; nothing n x n.
    Work: at most ``work_cap`` (default ``WORK_PER_NNZ * nnz(X)``) multiply-adds for the rows."""
    if type(cov) is not SparseCov:
        return None
    X = cov.X_sparse
    m, n = cov.m, cov.n
    k = int(min(k, n))
    rows_of = X.tocsr().astype(np.float64, copy=False)  # float64 sums (float32 data round otherwise)
    cols = rows_of.tocsc().T.tocsr()  # X^T by rows: row i is the column X_i
    # the means in float64 here (``cov.mean`` may have been summed in float32)
    mu = np.asarray(rows_of.sum(axis=0)).ravel() / m if cov.center else np.zeros(n)
    s = np.asarray(rows_of.multiply(rows_of).sum(axis=0)).ravel() / m
    s *= 1 + (m + 4) * _EPS  # second moments, rounded up
    d = np.clip(s - mu * mu, 0.0, None) + 4 * (m + 4) * _EPS * s
    root_d, root_s = np.sqrt(d), np.sqrt(s)
    T = float(np.sort(root_d)[n - k:].sum()) * (1 + 4 * (k + 2) * _EPS)
    S = float(np.sort(root_s)[n - k:].sum()) * (1 + 4 * (k + 2) * _EPS)
    screen = root_d * T * (1 + 8 * _EPS)
    # multiply-adds of row i: every nonzero x_ai brings row a of X
    row_len = np.diff(rows_of.indptr).astype(np.float64)
    work = np.asarray(rows_of.T @ row_len, dtype=np.float64).ravel()

    def row_sums(idx):
        G = (cols[idx] @ rows_of).toarray()
        R = np.asarray(G, dtype=np.float64) / m
        if cov.center:
            R -= np.multiply.outer(mu[idx], mu)
        np.maximum(R, 0.0, out=R)
        return _top_sum(R, k) + 4 * (m + 8) * _EPS * root_s[idx] * S

    cap = WORK_PER_NNZ * max(X.nnz, 1) if work_cap is None else float(work_cap)
    return rows_loop(screen, work, row_sums, cap, enough)


def rows_loop(screen: np.ndarray, work: np.ndarray, row_sums, cap: float,
              enough: float | None) -> tuple[float, dict]:
    """The rows in decreasing ``screen`` (each row's bound at most its screen value), by batches of
    ``row_sums(idx)`` (those rows' rigorous bounds), until the next screen value is at most the best row (the
    bound: the best row), or the work ``cap`` (multiply-adds, ``work`` per row) or a caller's ``enough`` stops
    them (the bound: the first screen value not computed, above every row left).  Returns ``(bound, info)``."""
    n = screen.size
    order = np.argsort(-screen, kind="stable")
    batch = int(max(8, min(256, _BATCH_FLOATS // max(n, 1))))
    size = batch if enough is None else min(8, batch)

    best, done, spent, stopped = -np.inf, 0, 0.0, "all rows"
    while done < n:
        if screen[order[done]] <= best:
            stopped = "screen"
            break
        if enough is not None and best >= enough:
            best, stopped = max(best, float(screen[order[done]])), "enough"
            break
        idx = order[done:done + size]
        size = min(2 * size, batch)
        cost = float(work[idx].sum())
        if spent + cost > cap:
            best, stopped = max(best, float(screen[order[done]])), "cap"
            break
        best = max(best, float(row_sums(idx).max()))
        done += idx.size
        spent += cost
    return best, {"rows": int(done), "of": int(n), "stopped": stopped, "work": spent}
