"""Upper bounds that need no optimization: a-priori, lambda_1, row sums, the paper's
``OPT_d + lambda_{d+1}``, the residual bound, and the cheap bounds on a block A_TT.

:data:`BOUNDS` lists the cheap bounds every certificate driver computes (dense, split, operator,
low-rank, a path of k, the split's remainder T): each is defined once, as a function of a
:class:`Spectrum` (what the driver knows of its covariance) and the sparsities k, and the drivers
loop over the list (:func:`cheap_bounds`).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np
import scipy.linalg

from .._common.params import check, in_interval
from .._common.validation import InputError
from ..operators.cov import Cov
from ..spannogram import lowrank_nspca
from ._settings import _EPS
from .rest_top import trace_curve, trace_k


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
    n = in_interval(n, "n", 1, kind="int")
    k = check("k", k, n_features=n)
    d = in_interval(d, "d", 1, n, kind="int")
    eig = check("vector", eigenvalues, "eigenvalues")
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
    d = in_interval(d, "d", 1, kind="int")
    eig = check("vector", eigenvalues, "eigenvalues")
    if eig.size < d:
        raise InputError(f"`eigenvalues` must hold at least d+1={d + 1} values; got {eig.size}")
    if eps is not None:
        if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not 0 < float(eps) < 1:
            raise InputError(f"`eps` must be a float in (0, 1) or None; got {eps!r}")
        opt_d = opt_d / (1.0 - float(eps))
    lam_next = float(eig[d]) if eig.size > d else 0.0
    return float(min(float(eig[0]), opt_d + max(lam_next, 0.0)))


def _eig_tol(A: np.ndarray) -> float:
    """Backward-error allowance for a LAPACK eigendecomposition of A: ``32 n eps ||A||_F``."""
    return 32.0 * A.shape[0] * _EPS * float(np.linalg.norm(A))


def _rowsum_topk(B: np.ndarray, k: int) -> float:
    """``max_i`` of the sum of the k largest entries of row i of ``B_+``.

    Bound for x in S_k^n with support J: ``x^T B x <= x^T B_+ x <= lambda_max((B_+)_JJ)
    <= max_{i in J} sum_{j in J} (B_+)_ij`` (x >= 0; Perron–Frobenius / Collatz:
    the spectral radius of a nonnegative matrix is at most its largest row sum),
    and a row of ``(B_+)_JJ`` sums at most k entries of row i of ``B_+``.
    """
    P = np.maximum(B, 0.0)
    n = P.shape[1]
    kk = min(k, n)
    if kk < n:
        if P.shape[0] > _ROWSUM_FIRST:
            return _rowsum_topk_pruned(P, kk)
        P = np.partition(P, n - kk, axis=1)[:, n - kk:]
    return float(P.sum(axis=1).max())


# _rowsum_topk: the rows with the largest positive sums first, this many
_ROWSUM_FIRST = 16


def _rowsum_topk_pruned(P: np.ndarray, kk: int) -> float:
    """:func:`_rowsum_topk` of ``P = B_+`` (kk < n), the same float: the k largest entries are
    selected and summed only in rows whose whole sum (rounded up by ``(1 + 2 n eps)``: at or above
    any sum of some of its entries in any order) reaches the best k-sum found, the rows of largest
    sums first (a row's selection and sum do not depend on the other rows)."""
    n = P.shape[1]
    total = P.sum(axis=1) * (1.0 + 2 * n * _EPS)
    order = np.argsort(-total, kind="stable")
    first = order[:_ROWSUM_FIRST]
    best = float(np.partition(P[first], n - kk, axis=1)[:, n - kk:].sum(axis=1).max())
    rest = order[_ROWSUM_FIRST:]
    rest = rest[total[rest] >= best]
    if rest.size:
        best = max(best, float(np.partition(P[rest], n - kk, axis=1)[:, n - kk:].sum(axis=1).max()))
    return best


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

    def spectrum(self, *, rows: bool = True, many_k: bool = False) -> "Spectrum":
        """The :class:`Spectrum` of A for :data:`BOUNDS`; ``rows``: with the row sums of ``A - A_1``
        (O(n^2), sorted once for every k when ``many_k``)."""
        A, n = self.A, self.A.shape[0]
        rowsum = None
        if rows and many_k:
            R = A - self.V(1) @ self.V(1).T
            slack = 8 * n * _EPS * float(np.abs(A).max())
            table = _rowsum_topk_all(R)
            rowsum = lambda ks: table[ks - 1] + slack  # noqa: E731
        elif rows:
            rowsum = self._rowsum_at
        return Spectrum(n, self.w, self.tol, complete=self.complete or self.w.size == n, v1=self.V(1).ravel(),
                        diag=np.diag(A), many_k=many_k, rowsum=rowsum)

    #: every nonzero eigenvalue is in ``w`` (the rest are 0)
    complete = False

    def _rowsum_at(self, ks) -> np.ndarray:
        """The row sums of ``R = A - v_1 v_1^T`` at each k (:func:`_rowsum_topk` plus its rounding allowance) as
        :func:`_residual1` takes them, ``min(lambda_2 + tol, row sums)``: where the :data:`_ROWSUM_FIRST` rows of
        largest variance already reach ``lambda_2 + tol``, the row sums (a maximum over all rows, each row's sum
        the same float wherever it is computed) are at least that and ``inf`` (a valid bound on them) gives
        :func:`_residual1` the same float; R (n x n) is formed only for the other k.  Issue 39: MLL's screened
        set at k = 200 (|S| = 1,200) 15.8 -> 0.7 ms, k = 100 4.0 -> 0.3 ms."""
        A, n = self.A, self.A.shape[0]
        v1 = self.V(1).ravel()
        out = np.full(len(ks), np.nan)
        if self.w.size >= 2:
            first = np.argsort(-np.diag(A), kind="stable")[:_ROWSUM_FIRST]
            R1 = A[first] - np.outer(v1[first], v1)  # (those rows of R, the same floats)
            lam2 = float(self.w[1]) + self.tol
            out = np.array([np.inf if _rowsum_topk(R1, int(k)) >= lam2 * (1 + 1e-12) else np.nan for k in ks])
        if np.isnan(out).any():
            R = A - self.V(1) @ self.V(1).T
            slack = 8 * n * _EPS * max(float(A.max()), -float(A.min()))  # (|A|'s max)
            out = np.where(np.isnan(out), np.array([_rowsum_topk(R, int(k)) for k in ks]) + slack, out)
        return out


class _ThinSpectral(_Spectral):
    """:class:`_Spectral` of ``A = X^T X / m`` (X m x n, m < n) through X's m x m Gram: O(m^2 n), against
    O(n^3) for LAPACK's top eigenpairs of A (issue 39: MLL's screened set, 72 x 1,200, 0.14 CPU s by LAPACK).
    ``A`` (the float ``fl(X^T X) / m``, held by the caller) only serves the row sums of ``A - v_1 v_1^T``
    (:meth:`_Spectral.spectrum`); ``eig``: :func:`_gram_eig` of this X when computed already.

    What is a proof and what an estimate: ``w`` are the computed eigenvalues of ``fl(X X^T) / m`` (every
    nonzero one: ``complete``) and ``tol`` is :func:`_gram_eig`'s ``32 (m + n) eps (||G||_F + tr G)``.  It
    covers the Gram's rounding (``gamma_n tr G`` in norm), eigh's backward error (``O(m eps ||G||_F)``) and the
    difference between the exact ``X^T X / m`` and the float A (``gamma_m tr G`` in norm): so ``w[0] + tol``
    bounds ``lambda_max`` of both, and ``w[j] + tol`` the j-th.  ``v_1 = fl(X^T p_1 / sqrt(m))`` (p_1 the
    computed top eigenvector of the Gram) is an estimate: ``A - v_1 v_1^T`` is ``X^T (I - p_1 p_1^T) X / m``
    up to ``O(m eps tr G)``, whose top eigenvalue is that of ``Q G Q`` (``Q = I - p_1 p_1^T``), at most
    ``w[1]`` plus the same allowances: the ``tol`` the d = 1 bounds add once more (:func:`_paper1`) covers
    it, as for the whole problem's thin spectrum (:func:`_thin_spectrum`).  The row sums of
    ``A - v_1 v_1^T`` (:func:`_residual1`) hold for any ``v_1``: ``x^T A x = (v_1^T x)^2 + x^T (A - v_1
    v_1^T) x`` exactly.  Forms nothing n x n.

    ``bracket``, an estimate (no proof rests on it): ``w[0] + 32 n eps ||A||_F``, the value LAPACK's route
    gives A's lambda_1 bound to a few units in the last place (:func:`_eig_tol`; the Gram's ``tol`` is about
    twice that), for the DNN's screening start (:func:`.dual._screen_init`'s bracket of mu).  With the
    Gram's bound there, the start moved by ~1e-11 relative and, on MLL k = 65 / 70, golden-section
    comparisons between near-equal values flipped: a mu 6e-6 apart and a bound 0.06-0.1% looser."""

    complete = True

    def __init__(self, A: np.ndarray, X: np.ndarray, m: int, dmax: int, eig=None):
        w, U, tol = _thin_lambdas(X, m, dmax + 1, eig)
        self.w, self.U, self.tol, self.A = w, U, tol, A
        self.bracket = float(w[0]) + _eig_tol(A)


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


@dataclass(frozen=True)
class Spectrum:
    """What the cheap bounds are computed from, as a certificate driver knows its covariance A.

    ``n``: features; ``w``: the top eigenvalues of A computed (descending, clipped at 0) and ``tol``
    their backward-error allowance; ``complete``: ``w`` holds every nonzero eigenvalue (the thin
    Gram's), so the ones not computed are 0; ``v1``: ``sqrt(lambda_1) u_1`` (None: not computed);
    ``diag``: the variances ``A_ii`` (None: not at hand); ``many_k``: ``OPT_1`` for many k at once
    by one cumulative sum with its rounding allowance (a path of k) rather than exactly per k;
    ``rowsum``: ``ks -> max_i`` of the sum of the k largest entries of row i of ``(A - v1 v1^T)_+``
    plus its rounding allowance, at each k (None: not computed).
    """

    n: int
    w: np.ndarray
    tol: float
    complete: bool = False
    v1: np.ndarray | None = None
    diag: np.ndarray | None = None
    many_k: bool = False
    rowsum: Callable[[np.ndarray], np.ndarray] | None = None

    def lam(self, j: int) -> float | None:
        """``lambda_{j+1}`` (0-based j) plus ``tol``; None when it was not computed (and may be > 0)."""
        if j < self.w.size:
            return float(self.w[j]) + self.tol
        return 0.0 + self.tol if self.complete else None

    def opt1(self, ks: np.ndarray) -> np.ndarray:
        """``OPT_1`` at each k: exact per k (:func:`_opt1`), or for many k the cumulative sums of the
        sorted ``(+-v_1)_+^2`` (the same maxima), rounded up by ``4 n eps``."""
        if not self.many_k:
            return np.array([_opt1(self.v1, int(k)) for k in ks])
        q_max = np.zeros(min(int(ks.max()), self.v1.size))
        for sg in (1.0, -1.0):
            q = -np.sort(-(np.maximum(sg * self.v1, 0.0) ** 2))[:q_max.size]
            q_max = np.maximum(q_max, np.cumsum(q))
        return q_max[np.minimum(ks, self.v1.size) - 1] * (1 + 4 * self.n * _EPS)


@dataclass(frozen=True)
class Bound:
    """One cheap bound: its name in ``Certificate.bounds``, when a driver's :class:`Spectrum` allows
    it, and its value at each k (an array, rounding allowances included)."""

    name: str
    applies: Callable[[Spectrum], bool]
    value: Callable[[Spectrum, np.ndarray], np.ndarray]


def _lambda1(s: Spectrum, ks: np.ndarray) -> np.ndarray:
    """``OPT <= lambda_max(A)``: every x in S_k^n is a unit vector (Rayleigh quotient)."""
    return np.full(ks.size, float(s.w[0]) + s.tol)


def _paper1(s: Spectrum, ks: np.ndarray) -> np.ndarray:
    """``OPT <= OPT_1 + lambda_2`` (:func:`paper_bound` at d = 1, Asteris et al. 2014 §4); the computed
    ``v_1`` is an exact eigenvector of ``A + E``, ``||E||_2 <= tol``: ``tol`` once more for ``x^T E x``."""
    return s.opt1(ks) + s.lam(1) + s.tol


def _residual1(s: Spectrum, ks: np.ndarray) -> np.ndarray:
    """``OPT <= OPT_1 + min(lambda_2, max_i`` sum of the k largest of ``((A - v_1 v_1^T)_+)_i)``: the
    second term bounds ``x^T (A - A_1) x`` two ways (its top eigenvalue; :func:`_rowsum_topk`)."""
    return s.opt1(ks) + np.minimum(s.lam(1), s.rowsum(ks)) + s.tol


def _has_lambda2(s: Spectrum) -> bool:
    return s.n >= 2 and s.v1 is not None and s.lam(1) is not None


#: the cheap bounds, in the order they appear in ``Certificate.bounds``
BOUNDS: tuple[Bound, ...] = (
    Bound("lambda1", lambda s: True, _lambda1),
    Bound("paper(d=1)", _has_lambda2, _paper1),
    Bound("residual(d=1)", lambda s: _has_lambda2(s) and s.rowsum is not None, _residual1),
)


def cheap_bounds(s: Spectrum, ks) -> dict[str, np.ndarray]:
    """``{name: value at each k}`` of every bound of :data:`BOUNDS` that applies to ``s``."""
    ks = np.asarray(ks, dtype=int).reshape(-1)
    return {b.name: b.value(s, ks) for b in BOUNDS if b.applies(s)}


def cheap_bounds_at(s: Spectrum, k: int) -> dict[str, float]:
    """:func:`cheap_bounds` at one k, as floats."""
    return {name: float(v[0]) for name, v in cheap_bounds(s, [k]).items()}


def _opt_d_exact(V: np.ndarray, k: int):
    """Exact OPT_d from the spannogram (imported lazily: it is only needed for d >= 2)."""
    if V.shape[1] == 1:
        return _opt1(V, k)

    return float(lowrank_nspca(V, k).variance_lowrank)


def _lowrank_value(spec: _Spectral, d: int, x: np.ndarray) -> float:
    """``||V_d^T x||^2 <= OPT_d`` for a feasible x."""
    z = spec.V(min(d, spec.w.size)).T @ x
    return float(z @ z)


def _paper_and_residual(spec: _Spectral, k: int, ds) -> dict:
    """``paper(d)`` and ``residual(d)`` for every d >= 2 in ``ds`` whose OPT_d is computable exactly
    (d = 1: :data:`BOUNDS`).

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
        rs = _rowsum_topk(A - V @ V.T, k)
        out[f"residual(d={d})"] = opt_d + min(lam_next, rs + 8 * n * _EPS * float(np.abs(A).max())) \
            + spec.tol
    return out


def _gram_eig(XT: np.ndarray, m: int, out: dict | None = None, G: np.ndarray | None = None):
    """Eigenvalues (descending, clipped at 0), eigenvectors and their backward-error
    tolerance of the Gram ``X_T X_T^T / m`` (``out``: gets the Gram as ``out["G"]``; ``G``: that Gram
    when formed already, :func:`_gram_of`)."""
    G = _gram_of(XT, m) if G is None else G
    if out is not None:
        out["G"] = G
    w, P = np.linalg.eigh(G)
    w, P = np.clip(w[::-1], 0.0, None), P[:, ::-1]
    return w, P, _gram_tol(G, XT.shape[1])


def _gram_of(XT: np.ndarray, m: int) -> np.ndarray:
    """The Gram ``fl(X_T X_T^T) / m`` as :func:`_gram_eig` forms it."""
    return (XT @ XT.T) / m


def _gram_tol(G: np.ndarray, n: int) -> float:
    """:func:`_gram_eig`'s tolerance of the Gram ``G`` of n columns: ``32 (m + n) eps (||G||_F + tr G)``."""
    return 32.0 * (G.shape[0] + n) * _EPS * (float(np.linalg.norm(G)) + float(np.trace(G)))


def _thin_lambdas(XT: np.ndarray, m: int, count: int, eig=None):
    """Top eigenvalues (+ tolerance) and eigenvectors of ``X_T^T X_T / m`` through the Gram (``eig``:
    :func:`_gram_eig` of this same ``XT`` already computed, e.g. by the low-rank test)."""
    w, P, tol = _gram_eig(XT, m) if eig is None else eig
    cnt = min(count, w.size)
    with np.errstate(divide="ignore", invalid="ignore"):
        sc = np.where(w[:cnt] > 0, 1.0 / np.sqrt(w[:cnt] * m), 0.0)
    U = (XT.T @ P[:, :cnt]) * sc
    return w, U, tol


def _thin_spectrum(XT: np.ndarray, m: int, count: int = 2, *, diag=None, many_k: bool = False,
                   eig=None) -> Spectrum:
    """The :class:`Spectrum` of ``X_T^T X_T / m`` through its m x m Gram (every nonzero eigenvalue;
    ``count`` eigenvectors formed, the first used; ``eig``: as :func:`_thin_lambdas`)."""
    w, U, tol = _thin_lambdas(XT, m, count, eig)
    return Spectrum(XT.shape[1], w, tol, complete=True, v1=U[:, 0] * math.sqrt(w[0]), diag=diag, many_k=many_k)


def _rest_spectrum(cov: Cov, T: np.ndarray, G: np.ndarray | None = None, S: np.ndarray | None = None) -> Spectrum:
    """The :class:`Spectrum` of ``A_TT`` (through ``X_T``'s Gram when data is held with fewer rows
    than |T|, never forming T x T; else the eigenpairs of ``A_TT``), for :func:`_bound_rest` and
    :func:`_rest_curve` (one computation for both).  ``G`` (X's whole Gram ``fl(X X^T) / m``, computed
    already) and ``S`` (the other columns): X_T's Gram as ``G - X_S X_S^T / m`` (:func:`_rest_gram_eig`)."""
    dg = cov.diag()[T]
    if cov.X is not None and cov.X.shape[0] < T.size:
        if G is not None and S is not None:
            X, m = cov.X, cov.X.shape[0]
            w, P, tol = _rest_gram_eig(X, G, S)
            with np.errstate(divide="ignore", invalid="ignore"):
                sc = np.where(w[:1] > 0, 1.0 / np.sqrt(w[:1] * m), 0.0)
            v1 = (X.T @ P[:, :1])[T, 0] * sc[0] * math.sqrt(w[0])
            return Spectrum(T.size, w, tol, complete=True, v1=v1, diag=dg)
        return _thin_spectrum(cov.X[:, T], cov.X.shape[0], diag=dg)
    from .rest_top import partial_rest, rest_products, rest_top  # (sparse data, A held: two Cholesky proofs)

    M = cov.submatrix(T)
    top = rest_top(M, rest_products(cov, T)) if partial_rest(cov, T) else None
    if top is not None:
        return Spectrum(T.size, top[0], top[1], v1=top[2], diag=np.diag(M).copy())
    return _Spectral(M, 1).spectrum(rows=False)


def _rest_gram_eig(X: np.ndarray, G: np.ndarray, S: np.ndarray):
    """:func:`_gram_eig` of ``X_T`` (T: the columns not in S) from X's whole Gram ``G = fl(X X^T) / m``:
    ``G_T = fl(G - fl(X_S X_S^T) / m)``, no copy of X_T and no pass over it.

    Tolerance: each entry of ``fl(X X^T) / m`` is within ``(gamma_n + eps) sqrt(G_aa G_bb)`` of the
    exact one (``sum_j |x_aj x_bj| <= m sqrt(G_aa G_bb)``), the S part's within the same (its
    diagonal is at most G's), the subtraction adds ``eps |G_T|``; so the computed ``G_T`` is within
    ``2 (gamma_n + eps) tr(G) + eps ||G_T||_F`` in norm of the exact ``X_T X_T^T / m``, below
    :func:`_gram_eig`'s ``32 (m + n) eps (||G_T||_F + tr(G))`` with G's whole trace (n: all columns)
    in place of T's, which also covers eigh's backward error as there."""
    m, n = X.shape
    XS = X[:, S]
    GT = G - (XS @ XS.T) / m
    w, P = np.linalg.eigh(GT)
    w, P = np.clip(w[::-1], 0.0, None), P[:, ::-1]
    tol = 32.0 * (m + n) * _EPS * (float(np.linalg.norm(GT)) + float(np.trace(G)))
    return w, P, tol


def _bound_rest(cov: Cov, T: np.ndarray, k: int, effort: str, spec: Spectrum | None = None) -> dict:
    """Bounds on ``B_T = max x_T^T A_TT x_T`` over unit, nonnegative, k-sparse x_T.

    ``trace-k``: ``lambda_max(A_JJ) <= tr(A_JJ)`` (A_JJ psd) ``<=`` the sum of the
    k largest variances in T.  ``lambda1``, ``paper(d=1)``: as for A, on A_TT
    (through ``X_T`` when data is held, never forming T x T).  ``rowsum`` /
    ``residual(d=1)`` (effort "full" only, O(m |T|^2) in row blocks):
    :func:`_rowsum_topk` on ``A_TT`` and on ``A_TT - A_1``.  ``spec``: :func:`_rest_spectrum`
    when the caller has it.
    """
    kT = min(k, T.size)
    dg = cov.diag()[T]
    out = {"trace-k": trace_k(dg, k)}
    spec = _rest_spectrum(cov, T) if spec is None else spec
    rowsum = None
    if effort == "full":
        if cov.X is not None and cov.X.shape[0] < T.size:
            XT = cov.X[:, T]
            m = cov.X.shape[0]
            row_block = lambda rows: (XT[:, rows].T @ XT) / m  # noqa: E731
        else:
            ATT = cov.submatrix(T)
            row_block = lambda rows: ATT[rows]  # noqa: E731
        v1 = spec.v1
        rs0, rs1 = 0.0, 0.0
        for s in range(0, T.size, 512):
            rows = np.arange(s, min(s + 512, T.size))
            B = row_block(rows)
            rs0 = max(rs0, _rowsum_topk(B, kT))
            rs1 = max(rs1, _rowsum_topk(B - np.outer(v1[rows], v1), kT))
        slack = 8 * T.size * _EPS * float(dg.max())
        out["rowsum"] = rs0 + slack
        rowsum = lambda ks: np.full(ks.size, rs1 + slack)  # noqa: E731  (at this k only)
    spec = replace(spec, rowsum=rowsum)
    out.update(cheap_bounds_at(spec, kT))
    return out


def _rest_curve(cov: Cov, T: np.ndarray, kmax: int, spec: Spectrum | None = None) -> np.ndarray:
    """``B_T(j)`` for ``j = 0..min(kmax, |T|)``: bounds on ``max z^T A_TT z`` over unit,
    nonnegative, j-sparse z (``B_T(0) = 0``), the minimum of ``trace-j`` (the sum of the j
    largest variances in T), ``lambda1`` and ``paper(d=1)`` of :func:`_bound_rest` at each j
    (same proofs; ``OPT_1(j)`` is the sum of the j largest ``(+-v_1)_+^2``, :func:`_opt1`).
    ``spec``: :func:`_rest_spectrum` when the caller has it."""
    jm = min(int(kmax), T.size)
    out = np.zeros(jm + 1)
    if jm == 0:
        return out
    trace = trace_curve(cov.diag()[T], jm)[1:]
    spec = replace(_rest_spectrum(cov, T) if spec is None else spec, many_k=True)
    out[1:] = np.minimum.reduce([trace, *cheap_bounds(spec, np.arange(1, jm + 1)).values()])
    return out


def _gram_basis_bound(XT: np.ndarray, P: np.ndarray, r: int, k: int, opt_r: float,
                      block: int = 1 << 15) -> float:
    """Upper bound on ``max x^T A x`` (``A = X_T^T X_T / m``) over unit, k-sparse x, from the
    computed eigenvectors ``P`` (m x m) of the Gram ``X_T X_T^T / m`` and the exact
    ``opt_r = max ||W x||^2`` of the computed factor ``W = fl(P_r^T X_T) / sqrt(m)`` (r x n,
    the spannogram's problem).  Rounding cannot break it, and its slack is relative to the
    values involved (the k largest variances), not to the trace as in :func:`_thin_lambdas`:
    on data of rank r it certifies the spannogram's answer to ~1e-12 (the allowance for the
    spannogram's own rounding).

    Proof.  With ``y = X_T x``: ``||P^T y||^2 >= (1 - eta) ||y||^2`` for
    ``eta >= ||P^T P - I||_2``, and ``||P^T y||^2 = ||P_r^T y||^2 + ||P_c^T y||^2``.
    ``||P_r^T y|| / sqrt(m) <= ||W x|| + delta_r`` where ``|fl(P_r^T X_T) - P_r^T X_T| <=
    gamma |P_r|^T |X_T|`` entrywise, so ``delta_r = gamma ||P_r||_F sqrt(D_k)`` with
    ``|| |X_T| |x| ||^2 <= m D_k`` (Cauchy-Schwarz on the support; ``D_k`` the sum of the k
    largest variances).  The same for ``P_c`` with ``||R x||^2 <= T_k``, the k largest squared
    column norms of the computed ``R = P_c^T X_T / sqrt(m)`` (Cauchy-Schwarz again).  Then
    ``x^T A x <= ((sqrt(opt_r) + delta_r)^2 + (sqrt(T_k) + delta_c)^2) / (1 - eta)``.
    Memory: O(m n) in column blocks of ``block``; nothing n x n.
    """
    m, n = XT.shape
    k = min(k, n)
    eps = _EPS
    gamma = (m + 4) * eps / (1 - (m + 4) * eps)
    E = P.T @ P - np.eye(m)
    eta = float(np.linalg.norm(E)) * (1 + m * m * eps) + 2 * m * gamma
    if eta >= 0.5:
        return np.inf
    dg = np.einsum("ij,ij->j", XT, XT) / m
    D = float(np.partition(dg, n - k)[n - k:].sum()) * (1 + (m + 4) * eps) if k < n else \
        float(dg.sum()) * (1 + (m + 4) * eps)
    Pc = P[:, r:]
    colsq = np.empty(n)
    for s in range(0, n, block):
        R = (Pc.T @ XT[:, s:s + block]) / math.sqrt(m)
        colsq[s:s + block] = np.einsum("ij,ij->j", R, R)
    T = float(np.partition(colsq, n - k)[n - k:].sum()) if k < n else float(colsq.sum())
    T *= 1 + (m + 4) * eps
    root = math.sqrt(max(D, 0.0))
    d_r = gamma * math.sqrt(r * (1 + eta)) * root
    d_c = gamma * math.sqrt((m - r) * (1 + eta)) * root
    top = (math.sqrt(max(opt_r, 0.0) * (1 + 1e-12)) + d_r) ** 2 + (math.sqrt(T) + d_c) ** 2
    return top / (1 - eta) * (1 + 16 * eps)
