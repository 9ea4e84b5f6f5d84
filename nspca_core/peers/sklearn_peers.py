"""scikit-learn's SparsePCA and NMF as familiar references (imported lazily)."""

from __future__ import annotations

import time
import warnings

import numpy as np

from ..operators.cov import Cov
from .._common.validation import InputError, check_k, check_matrix
from ..result import Result
from .._common.checks import check_callback, check_cov, check_float
from .._common.points import make_result

__all__ = ["sklearn_spca", "nmf_pca"]


def _seed_int(seed) -> int:
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(2 ** 31 - 1))
    if seed is None:
        return 0
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise InputError(f"`seed` must be an int, None or a numpy Generator; got {seed!r}")
    return int(seed)


def _pseudo_data(cov: Cov) -> np.ndarray:
    """Rows D with column means zero and ``D^T D = m A`` (SparsePCA centers its input).

    SparsePCA's objective depends on the data only through ``D^T D`` (the
    optimal unit score vector is ``D v/||D v||``), so any rows with that Gram
    matrix give the same answer.  With data of at most 2n rows, ``X`` itself
    (stacked as ``[X; -X]/√2`` when not centered, which keeps ``X^T X``);
    otherwise (or from ``A`` alone, with m = n) the 2n rows
    ``±sqrt(m w_i / 2) u_i^T`` of the eigendecomposition ``A = U diag(w) U^T``.
    """
    X = cov.X
    if X is not None and X.shape[0] <= 2 * cov.n:
        if np.allclose(X.mean(axis=0), 0.0, atol=1e-12 * max(1.0, float(np.abs(X).max()))):
            return X
        return np.vstack([X, -X]) / np.sqrt(2.0)
    m = X.shape[0] if X is not None else cov.n
    A = cov.dense()
    w, U = np.linalg.eigh(A)
    R = (U * np.sqrt(np.clip(w, 0.0, None) * m / 2.0)).T
    return np.vstack([R, -R])


def _search(fit_support, lo, hi, k, steps):
    """Geometric bisection on a penalty in [lo, hi] for the largest support <= k.

    ``fit_support(a) -> (support_size, payload)``; support shrinks as ``a``
    grows (not always monotonically: every evaluation is kept and the best
    admissible one wins — largest support, then the evaluation order).
    """
    tried = {}

    def ev(a):
        if a not in tried:
            tried[a] = fit_support(a)
        return tried[a][0]

    if ev(lo) <= k:
        hi = lo
    else:
        s_hi = ev(hi)
        grow = 0
        while s_hi > k and grow < 20:
            lo, hi = hi, hi * 4.0
            s_hi = ev(hi)
            grow += 1
        for _ in range(steps):
            if tried[hi][0] == k:
                break
            mid = np.sqrt(lo * hi)
            if ev(mid) > k:
                lo = mid
            else:
                hi = mid
    return tried


def _pick(tried, k):
    ok = [(a, s, p) for a, (s, p) in tried.items() if 1 <= s <= k]
    if not ok:
        return None
    return max(ok, key=lambda t: (t[1], -t[0]))


def sklearn_spca(cov: Cov, k: int, *, seed=0, callback=None, ridge_alpha=0.01, max_iter=200,
                 tol=1e-6, search_steps=12, method="lars") -> Result:
    """One component of scikit-learn's ``SparsePCA``, with ``alpha`` searched for support <= k.

    Parameters
    ----------
    cov : Cov
        SparsePCA needs rows of data with covariance ``A``: ``cov.X`` when it
        has at most 2n rows (stacked with ``-X`` if not centered, so that
        SparsePCA's own centering leaves ``A`` unchanged), otherwise 2n
        pseudo-rows with the same Gram matrix (an n x n eigendecomposition;
        the answer depends on the data only through ``X^T X``).
    k : int in [1, n]
    seed : int or Generator
        ``random_state`` of SparsePCA.
    callback : callable(done, total), optional
        Called once at the end.
    ridge_alpha, max_iter, tol, method
        Passed to ``sklearn.decomposition.SparsePCA``.
    search_steps : int, default 12
        Geometric bisection steps on ``alpha``.

    Returns
    -------
    Result
        ``method="sklearn-spca"``.  SparsePCA's loadings are signed: the sign
        with the larger positive mass is kept and negative entries are clipped
        to zero, which ``info["clipped"]`` (and the clipped fraction of the
        squared norm, ``info["clipped_mass"]``) says.  ``info["alpha"]`` is
        the penalty used; ``info["message"]`` says when no alpha gave a
        support of at most k (then the least penalized loading is cut to its
        k largest entries).

    Notes
    -----
    Zou, Hastie & Tibshirani's sparse PCA as implemented by scikit-learn
    (dictionary learning with an l1 penalty ``alpha`` on the components).
    ``alpha >= max_i ||D_i||`` (a column norm of the data) gives a zero
    component, so the search runs on ``(0, max_i ||D_i||]``.
    """
    t0 = time.perf_counter()
    cov = check_cov(cov)
    n = cov.n
    k = check_k(k, n)
    callback = check_callback(callback)
    ridge_alpha = check_float(ridge_alpha, "ridge_alpha", 0.0, np.inf, low_open=False, high_open=True)
    tol = check_float(tol, "tol", 0.0, 1.0, high_open=True)
    from sklearn.decomposition import SparsePCA  # lazily: the core does not need sklearn

    rs = _seed_int(seed)
    D = _pseudo_data(cov)
    hi = float(np.sqrt(np.max(np.einsum("ij,ij->j", D, D))))
    if hi == 0:
        hi = 1.0

    def fit(a):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = SparsePCA(n_components=1, alpha=a, ridge_alpha=ridge_alpha, max_iter=max_iter,
                            tol=tol, method=method, random_state=rs)
            est.fit(D)
        v = est.components_[0].copy()
        return int(np.count_nonzero(v)), v

    tried = _search(fit, hi * 1e-4, hi, k, int(search_steps))
    best = _pick(tried, k)
    info = dict(tried={float(a): s for a, (s, _) in tried.items()}, truncated=False)
    if best is None:
        a, s, v = min(((a, s, p) for a, (s, p) in tried.items()), key=lambda t: t[0])
        info["message"] = (f"no alpha gives a support in [1, k={k}]; the alpha={a:.3g} loading "
                           "was cut to k entries")
        info["truncated"] = True
    else:
        a, s, v = best
        if s != k:
            info["message"] = f"no alpha tried gives exactly k={k} nonzeros; largest support <= k is {s}"
    pos, neg = np.sum(np.clip(v, 0, None) ** 2), np.sum(np.clip(-v, 0, None) ** 2)
    if neg > pos:
        v = -v
        pos, neg = neg, pos
    clipped = bool(neg > 0)
    x = np.clip(v, 0.0, None)
    if info["truncated"]:
        keep = np.argsort(-x, kind="stable")[:k]
        x2 = np.zeros(n)
        x2[keep] = x[keep]
        x = x2
    if not x.any():
        x = np.zeros(n)
        x[int(np.argmax(cov.diag()))] = 1.0
        info["message"] = "SparsePCA returned a zero loading; the top-variance feature is used"
    info.update(alpha=float(a), support_size_sklearn=int(s), clipped=clipped,
                clipped_mass=float(neg / (pos + neg)) if pos + neg > 0 else 0.0)
    if callback is not None:
        callback(1, 1)
    params = dict(k=k, alpha=float(a), ridge_alpha=ridge_alpha, max_iter=max_iter, tol=tol,
                  method=method, seed=rs)
    return make_result(cov, x, method="sklearn-spca", params=params, t0=t0, info=info)


def nmf_pca(cov: Cov, k: int, *, seed=0, callback=None, data=None, max_iter=200, tol=1e-4,
            search_steps=12) -> Result:
    """One k-sparse nonnegative loading from scikit-learn's rank-1 ``NMF`` of nonnegative data.

    Parameters
    ----------
    cov : Cov
        The variance of the answer is measured on this covariance.
    k : int in [1, n]
    seed : int or Generator
    callback : callable(done, total), optional
    data : array_like (m', n), optional
        The raw NONNEGATIVE data.  NMF factorizes data, not a covariance, and
        centered data have negative entries, so pass the raw matrix here (e.g.
        the uint8 CBCL pixels).  Without it ``cov.X`` is used when it is
        nonnegative; otherwise an :class:`InputError` says so.
    max_iter, tol
        Passed to ``sklearn.decomposition.NMF``.
    search_steps : int, default 12
        Geometric bisection steps on the l1 penalty.

    Returns
    -------
    Result
        ``method="nmf"``: ``x = H / ||H||`` for the 1 x n factor ``H`` of
        ``data ≈ W H`` with an l1 penalty (``l1_ratio=1``, ``alpha_W`` =
        ``alpha_H``) searched for the largest support ``<= k``;
        ``info["penalty"]``, and ``info["message"]`` when no penalty gives
        such a support (then ``H`` is cut to its k largest entries).

    Notes
    -----
    NMF (Lee & Seung) maximizes fit to the uncentered data, not variance;
    it is here as a familiar reference.  ``variance`` is ``x^T A x`` on
    ``cov`` (usually the centered covariance), so it is typically below the
    variance-maximizing methods.
    """
    t0 = time.perf_counter()
    cov = check_cov(cov)
    n = cov.n
    k = check_k(k, n)
    callback = check_callback(callback)
    if data is None:
        if cov.X is None or float(cov.X.min()) < 0:
            raise InputError("NMF needs nonnegative data: pass the raw nonnegative matrix as "
                             "`data=` (the covariance's data "
                             + ("is absent" if cov.X is None else
                                f"has negative entries, min {float(cov.X.min()):.3g}, e.g. after centering")
                             + ")")
        D = cov.X
    else:
        D = check_matrix(data, "data")
        if D.shape[1] != n:
            raise InputError(f"`data` must have n_features={n} columns; got shape {D.shape}")
        if float(D.min()) < 0:
            raise InputError(f"`data` must be nonnegative for NMF; got min {float(D.min()):.3g}")
    from sklearn.decomposition import NMF  # lazily

    rs = _seed_int(seed)
    m = D.shape[0]
    # penalty scale: sklearn multiplies alpha_W by n and alpha_H by m; this is the
    # magnitude at which the l1 term matches the data's squared size per entry
    scale = float(np.mean(D * D)) if D.size else 1.0
    scale = scale if scale > 0 else 1.0

    def fit(a):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = NMF(n_components=1, init="nndsvda", l1_ratio=1.0, alpha_W=a, alpha_H="same",
                      max_iter=max_iter, tol=tol, random_state=rs)
            est.fit(D)
        h = est.components_[0].copy()
        return int(np.count_nonzero(h)), h

    if k >= n:
        tried = {0.0: fit(0.0)}
    else:
        tried = _search(fit, scale * 1e-6, scale, k, int(search_steps))
    best = _pick(tried, k)
    info = dict(tried={float(a): s for a, (s, _) in tried.items()}, truncated=False, rows=m)
    if best is None:
        a, s, h = min(((a, s, p) for a, (s, p) in tried.items()), key=lambda t: t[0])
        keep = np.argsort(-h, kind="stable")[:k]
        x = np.zeros(n)
        x[keep] = h[keep]
        info["truncated"] = True
        info["message"] = (f"no penalty gives a support in [1, k={k}]; the penalty={a:.3g} "
                           f"factor (support {s}) was cut to its k largest entries")
    else:
        a, s, h = best
        x = h
        if s != k:
            info["message"] = f"no penalty tried gives exactly k={k} nonzeros; largest support <= k is {s}"
    if not x.any():
        x = np.zeros(n)
        x[int(np.argmax(cov.diag()))] = 1.0
        info["message"] = "NMF returned a zero factor; the top-variance feature is used"
    info.update(penalty=float(a), support_size=int(np.count_nonzero(x)))
    if callback is not None:
        callback(1, 1)
    params = dict(k=k, penalty=float(a), max_iter=max_iter, tol=tol, seed=rs,
                  data="given" if data is not None else "cov.X")
    return make_result(cov, x, method="nmf", params=params, t0=t0, info=info)
