"""The residual bound at d = 2 or 3 for sparse data above the dense size, proved (no Lanczos assumption).

Why: on a topic corpus the operator route's bounds (:func:`.cheap._certify_operator`) are ``lambda_1`` and
``paper(d=2) = OPT_2 + lambda_3``.  There ``OPT_2`` is already within 0.2% of the answer and ``lambda_3`` is the
gap (issue 39: 5,000 x 3,000 and 8,000 x 6,000 stand-ins certified 0.942 / 0.947 at k = 5).  The k-sparse part of
the residual is smaller than its top eigenvalue: ``x^T R x`` over unit, nonnegative, k-sparse x is at most the
largest row sum of R's k largest positive entries, and only a few rows can bind.

The bound.  For any n x d matrix V and ``R = A - V V^T``: ``x^T A x = ||V^T x||^2 + x^T R x <= OPT_d(V) + max_i
r_i``, ``r_i`` the sum of the k largest ``(R_ij)_+`` over j (Collatz-Wielandt on the support, as in
:mod:`.sparse_rows`).  ``OPT_d(V)`` from above by :func:`.arcs.opt2_upper` (d = 2) or :func:`.caps.opt3_upper`
(d = 3), rigorous for the float V.

V and the screen.  ``A = Y^T Y`` with ``Y = (X - 1 mu^T) / sqrt(m)``.  For ``Q`` (m x d) with ``||Q||_2 <= 1``,
``V_e = Y^T Q`` gives ``A - V_e V_e^T = Y^T (I - Q Q^T) Y``, positive semidefinite, so its entries are at most
``sqrt(R_ii R_jj)`` with ``R_ii = A_ii - ||V_e,i||^2``.  Q is the data's image of d Lanczos vectors ``Y U
W^{-1/2}`` (so V is close to the top d eigenvectors, scaled), divided by a bound on its d x d Gram's largest
eigenvalue's root where that is above 1 (rounded up, and the division's rounding covered: ``||Q||_2 <= 1`` exactly).
The float ``V`` differs from ``V_e`` by ``beta_i = 4 (d + 2) (m + 4) eps sqrt(s_i)`` per row (``s_i`` the second
moment: the sparse product, the means and ``sqrt(m)`` each round, about ``3 m eps sqrt(s_i)`` per entry), so with
``nu_i >= ||V_i||, ||V_e,i||``: ``|R_ij| <= sqrt(D_i D_j) + beta_i nu_j + nu_i beta_j``, ``D_i >= A_ii - (||V_i|| -
beta_i)_+^2``, and a row's sum of any k entries is at most ``sqrt(D_i) T_D + beta_i N + nu_i B`` (T_D, N, B: the
sums of the k largest ``sqrt(D_j)``, ``nu_j``, ``beta_j``): the rows are computed in decreasing screen
(:func:`.sparse_rows.rows_loop`).

Rounding of a computed row: A's entries as in :mod:`.sparse_rows` (``4 (m + 8) eps sqrt(s_i s_j)``), the product
``V_i . V_j`` and the subtraction ``(d + 3) eps nu_i nu_j``, each row's k-sum rounded up.
Tests: ``tests/core/certificates/test_sparse_residual.py`` (brute force on exact rational covariances, hypothesis).
"""

from __future__ import annotations

import numpy as np

from ..operators.sparse import SparseCov
from .arcs import opt2_upper
from .caps import opt3_upper
from .sparse_rows import WORK_PER_NNZ, _top_sum, rows_loop

__all__ = ["residual_factor", "sparse_residual2"]

_EPS = float(np.finfo(np.float64).eps)


def _top_k_sum(v: np.ndarray, k: int) -> float:
    """The sum of the k largest entries of v, rounded up."""
    n = v.size
    return float(np.sort(v)[n - k:].sum()) * (1 + 4 * (k + 2) * _EPS)


def _unit_q(P: np.ndarray, m: int) -> np.ndarray:
    """``P`` (m x d) divided so that its spectral norm is at most 1 exactly (module docstring): the d x d Gram's
    largest eigenvalue from above (2 x 2: its closed form; else Gershgorin's largest absolute row sum), its rounding
    covered."""
    G = P.T @ P
    tr = float(np.trace(G))
    if G.shape[0] == 2:
        top = 0.5 * tr + float(np.hypot(0.5 * (G[0, 0] - G[1, 1]), G[0, 1]))
    else:
        top = float(np.abs(G).sum(axis=1).max())
    top = top * (1 + 8 * _EPS) + 2 * (m + 4) * _EPS * tr * G.shape[0]  # (the Gram's rounding, the bound's)
    if top <= 1.0:
        return P
    return P / (np.sqrt(top) * (1 + 4 * _EPS))


def residual_factor(rows_of, cols, mu: np.ndarray, U: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The float ``V = Y^T Q`` (n x d) of the module docstring: ``rows_of`` X (m x n CSR), ``cols`` its transpose
    as CSR, ``mu`` the means (zeros uncentered), ``U`` d (2 or 3) Lanczos vectors and ``w`` their values."""
    m = rows_of.shape[0]
    rm = np.sqrt(m)
    d = U.shape[1]
    U2 = np.asarray(U, dtype=np.float64)
    P = (np.asarray(rows_of @ U2) - mu @ U2) / (rm * np.sqrt(np.asarray(w[:d], dtype=np.float64)))
    Q = _unit_q(P, m)
    return (np.asarray(cols @ Q) - np.multiply.outer(mu, Q.sum(axis=0))) / rm


def _common(cov: SparseCov) -> dict:
    """What every d's bound reads of the data: X by rows and by columns, the means, the second moments rounded up,
    the variances from above, and each row's work (multiply-adds of its sparse product)."""
    X = cov.X_sparse
    m, n = cov.m, cov.n
    rows_of = X.tocsr().astype(np.float64, copy=False)
    cols = rows_of.tocsc().T.tocsr()
    mu = np.asarray(rows_of.sum(axis=0)).ravel() / m if cov.center else np.zeros(n)
    s = np.asarray(rows_of.multiply(rows_of).sum(axis=0)).ravel() / m
    s *= 1 + (m + 4) * _EPS
    var = np.clip(s - mu * mu, 0.0, None) + 4 * (m + 4) * _EPS * s
    row_len = np.diff(rows_of.indptr).astype(np.float64)
    work = np.asarray(rows_of.T @ row_len, dtype=np.float64).ravel()
    return dict(rows_of=rows_of, cols=cols, mu=mu, root_s=np.sqrt(s), var=var, work=work, m=m, n=n,
                center=cov.center, cap=WORK_PER_NNZ * max(X.nnz, 1))


def _plan(c: dict, k: int, U: np.ndarray, w: np.ndarray):
    """``(screen, opt, row_sums)`` of the bound at d = U's columns (module docstring)."""
    dim, m, mu, root_s, rows_of, cols = U.shape[1], c["m"], c["mu"], c["root_s"], c["rows_of"], c["cols"]
    V = residual_factor(rows_of, cols, mu, U, w)
    beta = 4 * (dim + 2) * (m + 4) * _EPS * root_s
    norm = np.linalg.norm(V, axis=1)
    nu = norm * (1 + 2 * _EPS) + beta
    low = np.clip(norm * (1 - 2 * _EPS) - beta, 0.0, None)
    D = np.clip(c["var"] - low * low, 0.0, None) * (1 + 4 * _EPS) + 4 * _EPS * c["var"]
    root_D = np.sqrt(D) * (1 + 2 * _EPS)
    TD, N, B, S = (_top_k_sum(v, k) for v in (root_D, nu, beta, root_s))
    screen = (root_D * TD + beta * N + nu * B) * (1 + 8 * _EPS)
    opt, _, _ = (opt2_upper if dim == 2 else opt3_upper)(V, k)

    def row_sums(idx):
        R = np.asarray((cols[idx] @ rows_of).toarray(), dtype=np.float64) / m
        if c["center"]:
            R -= np.multiply.outer(mu[idx], mu)
        R -= V[idx] @ V.T
        np.maximum(R, 0.0, out=R)
        return _top_sum(R, k) + 4 * (m + 9) * _EPS * root_s[idx] * S + (dim + 3) * _EPS * nu[idx] * N

    return screen, opt, row_sums


def _valid(cov, U, w, dims) -> int:
    U = np.asarray(U)
    dim = U.shape[1] if U.ndim == 2 else 0
    return dim if type(cov) is SparseCov and dim in dims and np.all(np.asarray(w[:dim]) > 0) else 0


def _finish(c, screen, opt, row_sums, work_cap, enough, dim):
    cap = c["cap"] if work_cap is None else float(work_cap)
    rest, info = rows_loop(screen, c["work"], row_sums, cap, None if enough is None else enough - opt)
    info.update(opt=opt, d=dim)
    return (opt + rest) * (1 + 4 * _EPS), info


def sparse_residual2(cov: SparseCov, k: int, U: np.ndarray, w: np.ndarray, *, work_cap: float | None = None,
                     enough: float | None = None, work_per_nnz: float | None = None) -> tuple[float, dict] | None:
    """``(bound, info)``: a rigorous ``OPT <= OPT_d(V) + max_i r_i`` (module docstring) from d = 2 or 3 Lanczos
    vectors ``U`` (n x d) and their values ``w`` (only V's choice rests on them); ``info``: the rows' (``rows``,
    ``of``, ``stopped``, ``work``), ``opt`` (OPT_d's bound: :func:`.arcs.opt2_upper`, :func:`.caps.opt3_upper`) and
    ``d``.  None for covariances other than a plain :class:`SparseCov`, or without d in (2, 3) positive values.
    ``enough``: a caller's bound: the search stops once sure to end above it (:func:`.sparse_rows.rows_loop`).
    Memory: one batch of rows and the n x d V; nothing n x n.  Work: the rows' (at most ``work_cap`` multiply-adds,
    else ``work_per_nnz * nnz(X)``, default ``WORK_PER_NNZ * nnz(X)``), one sparse product with d columns each way,
    OPT_d's search."""
    dim = _valid(cov, U, w, (2, 3))
    if not dim:
        return None
    c = _common(cov)
    k = int(min(k, c["n"]))
    U = np.asarray(U, dtype=np.float64)
    if work_cap is None and work_per_nnz is not None:
        work_cap = work_per_nnz * max(cov.X_sparse.nnz, 1)
    return _finish(c, *_plan(c, k, U, w), work_cap, enough, dim)
