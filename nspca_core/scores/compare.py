"""The comparisons of Bajorski, Hall & Rubinstein (2013): simulation cases, peers, rates.

* :func:`simulate_case` -- Cases 1-3 (p = 10, n = 1000, Beta(2, 4) sources).
* :func:`power_sources` -- the rate study's sources, ``F(x) = (x/γ)^c`` on [0, γ].
* :func:`nonneg_ica` -- Plumbley's nonnegative ICA (sum-of-squares negativity).
* :func:`pca_baseline` -- classic PCA.
* :func:`compare_methods` -- D_diff and W_diff after the best permutation.
* :func:`reproduce_tables` -- Tables 1-2 (every method, every case).
* :func:`rate_study` -- the 95th percentile of ``||ÂU - A|| / ||A||``.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import linear_sum_assignment

from .._common.validation import InputError, as_rng, check_int, check_matrix
from .descent import nonneg_scores
from .geometry import _assemble, _check_Y, _geodesic, _line_search, _pairs, _reorthonormalize, _whiten
from .result import ScoresResult

__all__ = ["CASES", "PAPER_TABLE1_D", "PAPER_RATES", "SimulatedCase", "Comparison",
           "beta_sources", "power_sources", "case_matrix", "simulate_case", "nonneg_ica",
           "pca_baseline", "compare_methods", "reproduce_tables", "rate_study"]

#: first NSPC variance share of each simulation case
CASES = {1: 0.96, 2: 0.77, 3: 0.57}
#: the paper's Table 1 (D_diff) for the two methods the issue quotes
PAPER_TABLE1_D = {"NSPCA": (0.236, 0.055, 0.086), "PCA": (0.771, 0.672, 0.663)}
#: the paper's Fig. 7 reading: 95th percentile of ||ÂU-A||/||A|| by n (p = 3, c = 1)
PAPER_RATES = {100: 0.20, 1000: 0.06, 10000: 0.02}

METHODS = ("nspca", "nica", "em", "zass", "pca")
_LABELS = {"nspca": "NSPCA", "nica": "NN-ICA", "em": "EM-NPCA (quasi-orth.)",
           "zass": "Zass-Shashua (k=p)", "pca": "PCA"}


# --------------------------------------------------------------------------- sources and cases

def beta_sources(n: int, p: int, seed=0, a: float = 2.0, b: float = 4.0) -> np.ndarray:
    """i.i.d. Beta(a, b) divided by its standard deviation (unit variance, nonnegative)."""
    rng = as_rng(seed)
    sd = np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1.0)))
    return rng.beta(a, b, size=(n, p)) / sd


def power_sources(n: int, p: int, c: float = 1.0, seed=0) -> np.ndarray:
    """i.i.d. sources with ``F(x) = (x/γ)^c`` on ``[0, γ]``, γ chosen for unit variance.

    ``X = γ V^{1/c}`` with V uniform; ``E X = γc/(c+1)``, ``E X² = γ²c/(c+2)``, so
    ``γ = (c/(c+2) - c²/(c+1)²)^{-1/2}`` (``√12`` for c = 1).  The density near 0
    behaves like ``x^{c-1}``: the smaller c, the more points near the faces.
    """
    n = check_int(n, "n", 1)
    p = check_int(p, "p", 1)
    if not (isinstance(c, (int, float)) and not isinstance(c, bool) and c > 0 and np.isfinite(c)):
        raise InputError(f"`c` must be a finite float > 0; got {c!r}")
    gamma = 1.0 / np.sqrt(c / (c + 2.0) - (c / (c + 1.0)) ** 2)
    rng = as_rng(seed)
    return gamma * rng.random((n, p)) ** (1.0 / c)


def case_matrix(case: int, p: int = 10, width: float = 0.6):
    """Mixing matrix of simulation Case 1, 2 or 3.

    How the first shares are matched: the NSPC variances ``λ_j = ||A e_j||²``
    are ``p·(s, (1-s)/(p-1), ..., (1-s)/(p-1))`` with ``s`` = 0.96, 0.77, 0.57,
    so the first NSPC carries exactly the paper's share and the rest split the
    remainder equally (total variance p).  The profiles ``D`` (unit columns)
    are nonnegative Gaussian bumps ``exp(-(i - μ_j)²/(2·width²))`` over the
    variables i, centred at evenly spaced ``μ_j`` — overlapping, so D is not
    orthogonal and PCA cannot read it off.  ``A = D Λ^{1/2}``.

    Returns ``(A, D, lambdas)``.
    """
    if case not in CASES:
        raise InputError(f"`case` must be one of 1, 2, 3; got {case!r}")
    p = check_int(p, "p", 2)
    s = CASES[case]
    idx = np.arange(p, dtype=float)
    centers = np.linspace(0.0, p - 1.0, p)
    D = np.exp(-0.5 * ((idx[:, None] - centers[None, :]) / width) ** 2)
    D /= np.linalg.norm(D, axis=0)
    lambdas = p * np.r_[s, np.full(p - 1, (1.0 - s) / (p - 1))]
    return D * np.sqrt(lambdas), D, lambdas


@dataclass(frozen=True, eq=False)
class SimulatedCase:
    """One draw of the model ``Y_i = A X_i`` (rows: ``Y = X Aᵀ = W Dᵀ``)."""

    Y: np.ndarray
    A: np.ndarray
    D: np.ndarray
    W: np.ndarray
    X: np.ndarray
    lambdas: np.ndarray
    case: int
    first_share: float


def simulate_case(case: int, *, p: int = 10, n: int = 1000, seed=0) -> SimulatedCase:
    """Simulation Case 1, 2 or 3: Beta(2, 4) sources scaled to unit variance.

    The mixing matrix is :func:`case_matrix` (first NSPC variance shares 96%,
    77%, 57%: the first column of A carries share s of the total variance,
    the other p-1 columns split the rest equally; D are overlapping
    nonnegative Gaussian bumps of width 0.6).  ``W = X Λ^{1/2}`` are the true
    nonnegative scores and ``D = A Λ^{-1/2}``, columns ordered by λ.
    """
    n = check_int(n, "n", 2)
    A, D, lambdas = case_matrix(case, p)
    X = beta_sources(n, p, seed)
    return SimulatedCase(Y=X @ A.T, A=A, D=D, W=X * np.sqrt(lambdas), X=X, lambdas=lambdas,
                         case=int(case), first_share=CASES[case])


# --------------------------------------------------------------------------- peers

def nonneg_ica(Y, *, n_components=None, seed=0, max_iter=500, tol=1e-10, callback=None) -> ScoresResult:
    """Plumbley's nonnegative ICA: rotate the whitened data to minimize ``½ E||Z⁻||²``.

    Parameters
    ----------
    Y : array (n_samples, n_features)
    n_components, seed, max_iter, tol, callback
        As in :func:`nspca_core.nonneg_scores` (the descent is deterministic;
        ``seed`` is recorded only).

    Returns
    -------
    ScoresResult
        ``method="nonneg-ica"``; same whitening and output conventions as
        :func:`nspca_core.nonneg_scores`.

    Notes
    -----
    Plumbley, "Algorithms for nonnegative independent component analysis",
    IEEE Trans. Neural Networks 14 (2003) 534-543.  With ``Z = U Bᵀ`` the
    whitened (uncentered) data and ``Z⁻ = min(Z, 0)``, the cost
    ``J(B) = 1/(2n) Σ_ij (Z⁻_ij)²`` is minimized over rotations by steepest
    descent along geodesics ``e^{tL}B``: ``dJ/dt = (1/n) Σ_i Z⁻_iᵀ L Z_i``, so the
    direction is ``L = -(M - Mᵀ)``, ``M = Z⁻ᵀZ/n`` (Plumbley's
    ``E[y⁻y⁺ᵀ - y⁺y⁻ᵀ]``), with a line search in t.  Stops when the gradient
    norm or J falls below ``tol``.
    """
    t0 = time.perf_counter()
    Y, r = _check_Y(Y, n_components)
    max_iter = check_int(max_iter, "max_iter", 1)
    cov, M, C = _whiten(Y, r)
    U = Y @ M.T
    n = U.shape[0]
    pairs = _pairs(r)

    def J(Bc):
        Zm = np.minimum(U @ Bc.T, 0.0)
        return 0.5 * float(np.einsum("ij,ij->", Zm, Zm)) / n

    B = np.eye(r)
    hist = [max(0.0, float(-(U @ B.T).min()))]
    frames, frame_iter = [B.copy()], [0]
    t_guess = 0.1
    it = 0
    converged = pairs[0].size == 0
    while it < max_iter and not converged:
        Z = U @ B.T
        Zm = np.minimum(Z, 0.0)
        Mm = Zm.T @ Z / n
        L = -(Mm - Mm.T)
        gnorm = np.linalg.norm(L)
        j0 = J(B)
        if gnorm <= tol or j0 <= tol ** 2:
            converged = True
            break
        L /= gnorm
        t, j1 = _line_search(J, L, B, j0, t_guess, np.pi)
        it += 1
        if t == 0 or j0 - j1 <= 1e-14 * max(j0, 1e-300):
            converged = True
            break
        B = _reorthonormalize(_geodesic(L, B, t))
        t_guess = 2 * t
        hist.append(max(0.0, float(-(U @ B.T).min())))
        frames.append(B.copy())
        frame_iter.append(it)
        if callback is not None:
            callback(it, max_iter)
    if not converged:
        warnings.warn(f"nonneg_ica stopped at max_iter={max_iter}", RuntimeWarning, stacklevel=2)
    A, D, W, lambdas, Bo, Xs, order = _assemble(U, C, B)
    return ScoresResult(
        A=A, D=D, W=W, lambdas=lambdas, B=Bo, negativity=max(0.0, float(-Xs.min())),
        converged=converged, iterations=it, history=np.asarray(hist),
        history_B=tuple(frames), history_iter=np.asarray(frame_iter), sources=Xs, whitened=U,
        whitener=M, order=order, status="converged" if converged else "max-iter",
        method="nonneg-ica", params=dict(n_components=r, max_iter=max_iter, tol=tol),
        seconds=time.perf_counter() - t0, info=dict(J=J(B)))


def pca_baseline(Y) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Classic PCA of ``Y`` (rows samples): ``(D, W, eigenvalues)``.

    ``D`` are the eigenvectors of the 1/(n-1) sample covariance (decreasing
    eigenvalue, sign flipped so each column sums to >= 0), ``W = Y D`` the
    (uncentered) scores, so ``Y = W Dᵀ`` as in the nonnegative-score model.
    """
    Y = check_matrix(Y, "Y", min_rows=2)
    cov = np.atleast_2d(np.cov(Y, rowvar=False, ddof=1))
    evals, V = np.linalg.eigh(cov)
    evals, V = evals[::-1], V[:, ::-1]
    V = V * np.where(V.sum(axis=0) < 0, -1.0, 1.0)
    return V, Y @ V, evals


def _lstsq_scores(Y, D):
    """Scores of non-orthogonal loadings: ``W`` minimizing ``||Y - W Dᵀ||`` (``Y pinv(D)ᵀ``)."""
    return Y @ np.linalg.pinv(D).T


# --------------------------------------------------------------------------- comparison

def _corr_columns(A, B):
    """Pearson correlations between the columns of A and of B (zero for constant columns)."""
    Ac = A - A.mean(axis=0)
    Bc = B - B.mean(axis=0)
    na = np.linalg.norm(Ac, axis=0)
    nb = np.linalg.norm(Bc, axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        Cm = (Ac.T @ Bc) / np.outer(na, nb)
    return np.nan_to_num(Cm)


def match_columns(D_hat, W_hat, D_true, W_true, *, signed=False):
    """Best permutation (Hungarian on |column correlations| of the scores).

    Returns ``(D, W, perm)`` with the estimated columns reordered to the truth's
    order (``D[:, j]`` estimates ``D_true[:, j]``).  ``signed=True`` (PCA, whose
    signs are arbitrary) also flips a column whose score correlation is negative.
    Estimated columns beyond the truth's count are dropped; missing ones are
    zero (they count fully in the error).
    """
    Cm = _corr_columns(W_hat, W_true)
    score = np.abs(Cm) if signed else Cm
    rows, cols = linear_sum_assignment(-score)
    p = D_true.shape[1]
    D = np.zeros_like(D_true, dtype=float)
    W = np.zeros_like(W_true, dtype=float)
    perm = np.full(p, -1)
    for i, j in zip(rows, cols):
        sgn = -1.0 if (signed and Cm[i, j] < 0) else 1.0
        D[:, j] = sgn * D_hat[:, i]
        W[:, j] = sgn * W_hat[:, i]
        perm[j] = i
    return D, W, perm


@dataclass(frozen=True, eq=False)
class Comparison:
    """Output of :func:`compare_methods`.

    ``table`` has one row per method (method, label, D_diff, W_diff, seconds,
    note; NaN errors for a method that was skipped or failed, the reason in
    ``note``); ``D`` and ``W`` map a method to its estimate matched to the
    truth's column order; ``notes`` lists skipped methods and why.
    """

    table: pd.DataFrame
    D: dict[str, np.ndarray] = field(default_factory=dict)
    W: dict[str, np.ndarray] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)


def compare_methods(Y, D_true, W_true, *, methods=METHODS, seed=0, em_min_angle=20.0,
                    em_restarts=3, zass_alpha=1.0, max_iter=500, callback=None) -> Comparison:
    """D_diff and W_diff of every method against the true profiles and scores.

    Parameters
    ----------
    Y : array (n, p)
        Data, ``Y = W_true D_trueᵀ`` (plus noise, if any).
    D_true : array (p, r), W_true : array (n, r)
    methods : iterable of {"nspca", "nica", "em", "zass", "pca"}
    seed : int
        Passed to every randomized method.
    em_min_angle : float
        Minimum angle (degrees) between EM components (quasi-orthogonality).
    em_restarts : int
        Random starts per EM component (the peer's default is 10; fewer keeps
        the comparison fast).
    zass_alpha : float
        Zass–Shashua orthonormality weight; sparsity weight β = 0 (k = p).
    max_iter : int
        For the two rotation methods.
    callback : callable(done, total) or None
        After each method.

    Returns
    -------
    Comparison

    Notes
    -----
    ``D_diff = ||D̂ - D|| / ||D||``, ``W_diff = ||Ŵ - W|| / ||W||`` (Frobenius)
    after the best permutation: Hungarian matching
    (``scipy.optimize.linear_sum_assignment``) on the correlations between the
    estimated and true score columns, as in Bajorski, Hall & Rubinstein (2013)
    §5.  Scores: NSPCA and NN-ICA give them; PCA uses ``Y D̂`` (and may flip
    signs); EM and Zass–Shashua (loadings only, not orthogonal) use least
    squares ``Y pinv(D̂)ᵀ``.  EM and Zass–Shashua run on the 1/(n-1) sample
    covariance (centered) through :mod:`nspca_core.peers`; a missing peer module
    is skipped with a note.
    """
    Y = check_matrix(Y, "Y", min_rows=2)
    n, p = Y.shape
    D_true = check_matrix(D_true, "D_true")
    W_true = check_matrix(W_true, "W_true")
    if D_true.shape[0] != p or W_true.shape[0] != n or W_true.shape[1] != D_true.shape[1]:
        raise InputError(f"`D_true` must be (p={p}, r) and `W_true` (n={n}, r); got "
                         f"{D_true.shape} and {W_true.shape}")
    methods = tuple(methods)
    bad = [m for m in methods if m not in METHODS]
    if bad:
        raise InputError(f"`methods` must be drawn from {METHODS}; got {bad}")
    r = D_true.shape[1]
    rows, Ds, Ws, notes = [], {}, {}, []
    cov_mat = None

    def cov_obj():
        nonlocal cov_mat
        if cov_mat is None:
            from ..operators.covariance import as_cov
            cov_mat = as_cov(cov=np.cov(Y, rowvar=False, ddof=1))
        return cov_mat

    def skipped(m, why, t0):
        # keep the row (NaN errors) so tables and pages show what happened
        notes.append(f"{m} {why}")
        rows.append(dict(method=m, label=_LABELS[m], D_diff=np.nan, W_diff=np.nan,
                         seconds=time.perf_counter() - t0, note=why))

    for done, m in enumerate(methods, 1):
        t0 = time.perf_counter()
        note = ""
        signed = False
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                if m == "nspca":
                    res = nonneg_scores(Y, n_components=r, random_state=seed, max_iter=max_iter)
                    Dh, Wh = res.D, res.W
                    note = f"S={res.negativity:.3g}, {res.iterations} steps, {res.status}"
                elif m == "nica":
                    res = nonneg_ica(Y, n_components=r, seed=seed, max_iter=max_iter)
                    Dh, Wh = res.D, res.W
                    note = f"S={res.negativity:.3g}, {res.iterations} steps"
                elif m == "pca":
                    Dh, Wh, _ = pca_baseline(Y)
                    Dh, Wh = Dh[:, :r], Wh[:, :r]
                    signed = True
                elif m == "em":
                    try:
                        from ..peers.em import em_components
                    except ImportError as exc:
                        skipped(m, f"skipped: {exc}", t0)
                        continue
                    cr = em_components(cov_obj(), r, p, nonneg=True, min_angle=em_min_angle, seed=seed,
                                       restarts=em_restarts)
                    Dh = np.asarray(cr.loadings, dtype=float)
                    Wh = _lstsq_scores(Y, Dh)
                    note = f"min_angle={em_min_angle}°"
                else:  # zass
                    try:
                        from ..peers.zass import zass_components
                    except ImportError as exc:
                        skipped(m, f"skipped: {exc}", t0)
                        continue
                    cr = zass_components(cov_obj(), r, alpha=zass_alpha, beta=0.0, seed=seed)
                    Dh = np.asarray(cr.loadings, dtype=float)
                    Wh = _lstsq_scores(Y, Dh)
                    note = f"alpha={zass_alpha}, beta=0"
        except InputError as exc:
            skipped(m, f"failed: {exc}", t0)
            continue
        Dm, Wm, _ = match_columns(Dh, Wh, D_true, W_true, signed=signed)
        rows.append(dict(method=m, label=_LABELS[m],
                         D_diff=float(np.linalg.norm(Dm - D_true) / np.linalg.norm(D_true)),
                         W_diff=float(np.linalg.norm(Wm - W_true) / np.linalg.norm(W_true)),
                         seconds=time.perf_counter() - t0, note=note))
        Ds[m], Ws[m] = Dm, Wm
        if callback is not None:
            callback(done, len(methods))
    table = pd.DataFrame(rows, columns=["method", "label", "D_diff", "W_diff", "seconds", "note"])
    return Comparison(table=table, D=Ds, W=Ws, notes=notes)


def reproduce_tables(*, p: int = 10, n: int = 1000, seed=0, methods=METHODS, callback=None
                     ) -> pd.DataFrame:
    """Tables 1-2 of the paper: D_diff and W_diff for every method and Case 1-3.

    One row per (case, method) with the paper's NSPCA/PCA D_diff beside ours
    (``paper_D_diff``, NaN where the issue does not quote it).
    """
    frames = []
    for k, case in enumerate(CASES, 1):
        sim = simulate_case(case, p=p, n=n, seed=seed)
        cmp_ = compare_methods(sim.Y, sim.D, sim.W, methods=methods, seed=seed)
        t = cmp_.table.copy()
        t.insert(0, "case", case)
        t["paper_D_diff"] = [PAPER_TABLE1_D.get({"nspca": "NSPCA", "pca": "PCA"}.get(m, ""),
                                                (np.nan,) * 3)[case - 1] for m in t["method"]]
        frames.append(t)
        if callback is not None:
            callback(k, len(CASES))
    return pd.concat(frames, ignore_index=True)


def rate_error(A_hat, A) -> float:
    """``min_U ||Â U - A|| / ||A||`` over permutation matrices U (Hungarian on column distances)."""
    cost = ((A_hat[:, :, None] - A[:, None, :]) ** 2).sum(axis=0)
    rows, cols = linear_sum_assignment(cost)
    return float(np.sqrt(cost[rows, cols].sum()) / np.linalg.norm(A))


RATE_A = np.array([[1.0, 0.5, 0.2],
                   [0.3, 1.0, 0.4],
                   [0.2, 0.3, 1.0]])


def rate_study(ns=(100, 1000, 10000), *, p: int = 3, c: float = 1.0, reps: int = 200, seed=0,
               A=None, quantile: float = 0.95, callback=None) -> pd.DataFrame:
    """The paper's rate study: quantiles of ``||ÂU - A|| / ||A||`` as n grows.

    Sources from :func:`power_sources` (``F(x) = (x/γ)^c``); ``A`` defaults to
    :data:`RATE_A` for p = 3 (a fixed, well-conditioned nonnegative matrix —
    the paper's A is not restated in the issue) and to a seeded
    ``I + 0.3·|N(0,1)|`` otherwise.  One row per n: ``n``, ``p95`` (the
    ``quantile``), ``median``, ``mean``, ``reps``, ``paper`` (Fig. 7 reading).
    """
    ns = tuple(check_int(v, "ns", 2) for v in np.atleast_1d(ns).tolist())
    p = check_int(p, "p", 2)
    reps = check_int(reps, "reps", 1)
    rng = as_rng(seed)
    if A is None:
        A = RATE_A if p == 3 else np.eye(p) + 0.3 * np.abs(as_rng(12345).standard_normal((p, p)))
    A = check_matrix(A, "A", square=True)
    if A.shape[0] != p:
        raise InputError(f"`A` must be {p} x {p}; got {A.shape}")
    rows = []
    total = len(ns) * reps
    done = 0
    for n in ns:
        if n < p:
            raise InputError(f"`ns` must be >= p={p}; got {n}")
        errs = np.empty(reps)
        for k in range(reps):
            X = power_sources(n, p, c, rng)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                res = nonneg_scores(X @ A.T, random_state=rng)
            errs[k] = rate_error(res.A, A)
            done += 1
            if callback is not None:
                callback(done, total)
        rows.append(dict(n=n, p95=float(np.quantile(errs, quantile)), median=float(np.median(errs)),
                         mean=float(errs.mean()), reps=reps,
                         paper=PAPER_RATES.get(n, np.nan) if (p == 3 and c == 1) else np.nan))
    return pd.DataFrame(rows)
