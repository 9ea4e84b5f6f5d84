"""Randomized spannogram: the ε-net algorithm (Asteris et al. 2014, Alg. 3).

Instead of enumerating every candidate support of the rank-d problem
``max_{x in S_k^n} ||V^T x||^2`` (Alg. 1), sample unit directions ``c`` at
random, solve the rank-1 problem ``max_{x in S_k^n} (c^T V^T x)^2`` exactly for
each (the k largest nonnegative entries of ``±Vc``) and keep the best point by
``||V^T x||^2``.  Everything is vectorized over the samples: the directions
are processed in chunks as matrices, never one per Python iteration.
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from ._validation import InputError, as_rng, check_int, check_k, check_matrix
from .result import Result

__all__ = ["enet_samples", "enet_nspca", "enet_path", "ResultPath"]

# working-memory budget per chunk of samples (bytes); the largest temporary is
# an (n, chunk, d) float64 array, a few of them live at once.
_CHUNK_BYTES = 48_000_000


def _cap_probability(d: int, eps: float) -> float:
    """``P[(c^T u)^2 >= 1 - eps]`` for ``c`` uniform on the unit sphere of R^d, ``u`` fixed.

    ``(c^T u)^2 ~ Beta(1/2, (d-1)/2)``, so ``1 - (c^T u)^2 ~ Beta((d-1)/2, 1/2)``
    and the probability is the regularized incomplete beta ``I_eps((d-1)/2, 1/2)``.
    For d = 1, ``c = ±u`` always: the probability is 1.
    """
    if d == 1:
        return 1.0
    from scipy.special import betainc

    return float(betainc((d - 1) / 2.0, 0.5, eps))


def enet_samples(d, eps, n) -> int:
    """Number of random directions Alg. 3 draws for a ``(1 - eps)`` guarantee.

    Parameters
    ----------
    d : int >= 1
        Rank of the approximation (columns of ``V``).
    eps : float in (0, 1)
        Accuracy: the answer is ``>= (1 - eps) OPT_d`` with probability ``>= 1 - 1/n``.
    n : int >= 1
        Number of features.

    Returns
    -------
    int
        ``N = max(1, ceil(ln(n) / -ln(1 - p_d(eps))))`` (``N = 1`` when
        ``p_d(eps) = 1``, i.e. ``d = 1``), where
        ``p_d(eps) = I_eps((d-1)/2, 1/2)`` is the probability that a uniform
        random unit ``c`` in R^d satisfies ``(c^T u)^2 >= 1 - eps`` for a fixed
        unit ``u`` (regularized incomplete beta function).

    Notes
    -----
    Source: Asteris, Papailiopoulos & Dimakis, "Nonnegative Sparse PCA with
    Provable Guarantees", ICML 2014, Alg. 3, which draws ``O(eps^{-d} log n)``
    random directions.  We use the exact count behind that order.  Let
    ``x*`` be optimal for ``OPT_d`` and ``u = V^T x* / ||V^T x*||``.  If a
    sample ``c`` has ``(c^T u)^2 >= 1 - eps``, the rank-1 solution ``x_c`` of
    ``max_{x in S_k^n} (c^T V^T x)^2`` satisfies

        ``||V^T x_c||^2 >= (c^T V^T x_c)^2 >= (c^T V^T x*)^2
                       = (c^T u)^2 OPT_d >= (1 - eps) OPT_d``.

    ``N`` independent samples all miss that double cap with probability
    ``(1 - p)^N <= 1/n``.  Since ``p_d(eps) = Θ(eps^{(d-1)/2})`` for fixed d,
    ``N = O(eps^{-(d-1)/2} log n)``, within the paper's ``O(eps^{-d} log n)``.
    Examples: d=3, eps=0.1 gives 112 samples for n=361 and 180 for n=12582.
    """
    d = check_int(d, "d", 1)
    n = check_int(n, "n", 1)
    eps = _check_eps(eps)
    p = _cap_probability(d, eps)
    if p >= 1.0 or n == 1:
        return 1
    return max(1, int(math.ceil(math.log(n) / -math.log1p(-p))))


def _check_eps(eps) -> float:
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not 0.0 < float(eps) < 1.0:
        raise InputError(f"`eps` must be a float in (0, 1); got {eps!r}")
    return float(eps)


def _directions(V: np.ndarray, k_eps, seed, samples) -> np.ndarray:
    """Validated sample directions, shape (N, d), rows of unit norm."""
    n, d = V.shape
    if samples is None:
        N = enet_samples(d, k_eps, n)
    elif isinstance(samples, numbers.Integral) and not isinstance(samples, bool):
        N = check_int(samples, "samples", 1)
    else:
        C = check_matrix(samples, "samples")
        if C.shape[1] != d:
            raise InputError(f"`samples` must be an int >= 1 or an array of directions of shape "
                             f"(N, d={d}); got shape {C.shape}")
        norms = np.linalg.norm(C, axis=1)
        if np.any(norms == 0):
            raise InputError("`samples` directions must be nonzero; got a zero row at index "
                             f"{int(np.flatnonzero(norms == 0)[0])}")
        return C / norms[:, None]
    rng = as_rng(seed)
    # all directions are drawn up front so that the chunking never changes the output
    C = rng.standard_normal((N, d))
    norms = np.linalg.norm(C, axis=1)
    norms[norms == 0] = 1.0  # probability zero; keeps the row (a zero direction is harmless)
    return C / norms[:, None]


def _validate(V, eps, callback):
    V = check_matrix(V, "V")
    eps = _check_eps(eps)
    if callback is not None and not callable(callback):
        raise InputError(f"`callback` must be callable (done, total) -> None or None; got {callback!r}")
    return V, eps


def _chunk_size(n: int, d: int, N: int) -> int:
    return int(max(1, min(N, _CHUNK_BYTES // (8 * n * (d + 2) * 3))))


def _finish(V, x, k, method, params, t0, info) -> Result:
    support = np.flatnonzero(x)
    y = V[support].T @ x[support]
    val = float(y @ y)
    return Result(x=x, support=support, variance=val, variance_lowrank=val, method=method,
                  params=params, seconds=time.perf_counter() - t0, info=info)


def _fallback_x(V: np.ndarray) -> np.ndarray:
    """Used only when every sampled ``Vc`` vanishes on its candidate support (e.g. V = 0):
    the best single coordinate."""
    x = np.zeros(V.shape[0])
    x[int(np.argmax(np.einsum("ij,ij->i", V, V)))] = 1.0
    return x


def _enet_scores(V, k, C, callback):
    """``||V^T x||^2`` of both rank-1 candidates ``I_k^+(±Vc)`` of every direction: (N, 2).

    Per chunk: one product ``V C_b^T``, one ``argpartition`` per column and
    sign, one product ``V^T W``.  A candidate whose ``(Vc)_I`` vanishes scores -1.
    """
    n, d = V.shape
    N = C.shape[0]
    B = _chunk_size(n, d, N)
    scores = np.empty((N, 2))
    for start in range(0, N, B):
        P = V @ C[start:start + B].T  # (n, b): the sampled vectors Vc
        b = P.shape[1]
        for s, sign in enumerate((1.0, -1.0)):
            S = sign * P
            if k < n:
                idx = np.argpartition(-S, k - 1, axis=0)[:k]  # k largest of each column
            else:
                idx = np.broadcast_to(np.arange(n)[:, None], (n, b))
            vals = np.take_along_axis(S, idx, axis=0)
            vals = np.where(vals >= 0, vals, 0.0)  # I_k^+ keeps only nonnegative entries
            W = np.zeros((n, b))
            np.put_along_axis(W, idx, vals, axis=0)
            sq = np.einsum("ij,ij->j", W, W)
            Y = V.T @ W  # (d, b): V^T x up to the normalization 1/||v_I||
            with np.errstate(divide="ignore", invalid="ignore"):
                scores[start:start + b, s] = np.where(sq > 0, np.einsum("ij,ij->j", Y, Y) / sq, -1.0)
        if callback is not None:
            callback(min(start + B, N), N)
    return scores


def _candidate(V, k, c, sign):
    """The rank-1 candidate ``x_I = ±(Vc)_I / ||(Vc)_I||`` on ``I = I_k^+(±Vc)``, or None."""
    from .rank1 import _topk_nonneg

    v = sign * (V @ c)
    idx = _topk_nonneg(v, k)
    w = v[idx]
    nw = float(np.sqrt(w @ w))
    if nw == 0:
        return None
    x = np.zeros(V.shape[0])
    x[idx] = w / nw
    return x


def _enet_single(V, k, C, callback):
    """Best (sample, sign) for one k; returns (x or None, sample, sign).

    Ties: per sample the + sign, then the first sample (as :func:`enet_path`).
    """
    scores = _enet_scores(V, k, C, callback)
    use_neg = scores[:, 1] > scores[:, 0]
    best = np.where(use_neg, scores[:, 1], scores[:, 0])
    j = int(np.argmax(best))
    sign = -1.0 if use_neg[j] else 1.0
    if best[j] < 0:
        return None, j, sign
    return _candidate(V, k, C[j], sign), j, sign


def _enet_top(V, k, C, count):
    """Up to ``count`` best distinct-support candidates (for multi-start local search)."""
    scores = _enet_scores(V, k, C, None).ravel()
    order = np.argsort(-scores, kind="stable")
    out, seen = [], set()
    for flat in order:
        if scores[flat] < 0 or len(out) >= count:
            break
        x = _candidate(V, k, C[flat // 2], 1.0 if flat % 2 == 0 else -1.0)
        if x is None:
            continue
        key = np.flatnonzero(x).tobytes()
        if key not in seen:
            seen.add(key)
            out.append(x)
    return out


def enet_nspca(V, k, *, eps=0.1, seed=0, samples=None, callback=None) -> Result:
    """Approximate ``OPT_d = max_{x in S_k^n} ||V^T x||^2`` by random directions (Alg. 3).

    Parameters
    ----------
    V : array_like of shape (n, d)
        Low-rank factor, ``A_d = V V^T`` (see :func:`nspca_core.lowrank_factor`).
    k : int in [1, n]
        Maximum number of nonzeros.
    eps : float in (0, 1), default 0.1
        Target accuracy; sets the default number of samples (:func:`enet_samples`).
    seed : int, None or numpy.random.Generator, default 0
        Source of the random directions (same seed, same output).
    samples : int or array_like of shape (N, d), optional
        Number of random directions (default ``enet_samples(d, eps, n)``), or
        the directions themselves (rows; normalized here).
    callback : callable(done, total), optional
        Progress, called after each chunk of samples.

    Returns
    -------
    Result
        ``method="enet"``; ``variance`` and ``variance_lowrank`` are both
        ``||V^T x||^2`` (this solver sees only ``V``; :func:`nspca_core.fit`
        re-evaluates on the true covariance).  ``info`` has ``samples``,
        ``best_sample``, ``sign`` and ``guarantee``.

    Notes
    -----
    Asteris, Papailiopoulos & Dimakis, ICML 2014, Alg. 3.  For each unit
    ``c`` the rank-1 problem ``max_{x in S_k^n} (c^T V^T x)^2`` is solved
    exactly on both candidates ``I_k^+(±Vc)`` (``x_I = ±(Vc)_I / ||(Vc)_I||``,
    §3.1); both candidates are scored by ``||V^T x||^2`` (at least as good as
    keeping only the rank-1 winner, so the guarantee of :func:`enet_samples`
    holds: ``>= (1 - eps) OPT_d`` with probability ``>= 1 - 1/n`` for the
    default count).  Per chunk of ``b`` samples the work is one ``n x d`` by
    ``d x b`` product, one ``argpartition`` per column and one ``d x n`` by
    ``n x b`` product: O(N n d) time, O(n b) memory.
    """
    t0 = time.perf_counter()
    V, eps = _validate(V, eps, callback)
    n, d = V.shape
    k = check_k(k, n)
    C = _directions(V, eps, seed, samples)
    x, j, sign = _enet_single(V, k, C, callback)
    if x is None:
        x = _fallback_x(V)
    params = {"k": k, "d": d, "eps": eps, "seed": seed if not isinstance(seed, np.random.Generator)
              else "generator", "samples": int(C.shape[0])}
    info = {"samples": int(C.shape[0]), "best_sample": j, "sign": int(sign),
            "guarantee": f">= (1 - eps) OPT_d with probability >= 1 - 1/n when samples >= "
                         f"enet_samples(d, eps, n) = {enet_samples(d, eps, n)}"}
    return _finish(V, x, k, "enet", params, t0, info)


def _check_ks(ks, n: int) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(ks))
    if arr.ndim != 1 or arr.size == 0 or not (np.issubdtype(arr.dtype, np.integer)):
        raise InputError(f"`ks` must be a non-empty 1-D sequence of ints in [1, n_features={n}]; "
                         f"got {ks!r}")
    bad = (arr < 1) | (arr > n)
    if bad.any():
        raise InputError(f"`ks` must contain ints in [1, n_features={n}]; got {int(arr[bad][0])}")
    return arr.astype(np.int64)


def enet_path(V, ks, *, eps=0.1, seed=0, samples=None, callback=None) -> "ResultPath":
    """:func:`enet_nspca` for many sparsities at once, sharing the random directions.

    Parameters
    ----------
    V : array_like of shape (n, d)
    ks : sequence of int in [1, n]
        Sparsities (any order, repeats allowed); one Result per entry.
    eps, seed, samples, callback
        As in :func:`enet_nspca`; the same seed gives the same directions, so
        ``enet_path(V, [k])[0]`` and ``enet_nspca(V, k)`` pick from the same
        candidates.

    Returns
    -------
    ResultPath
        A sequence of Result (``len``, indexing, iteration), one per k in the
        order given: ``method="enet"``, ``variance = variance_lowrank =
        ||V^T x||^2``.  Each Result is built on access (see :class:`ResultPath`);
        ``path.values`` has every value without building any point.

    Notes
    -----
    Each sampled vector ``v = Vc`` is sorted once (descending, stable).  The
    candidate ``I_k^+(v)`` is the first ``min(k, #{v_i >= 0})`` sorted indices
    and ``I_k^+(-v)`` the last ``min(k, #{v_i <= 0})`` (for ``-v`` equal values
    are then taken from the higher index first; only exact ties are affected).
    With prefix sums ``P_j = sum_{t<=j} V_{o_t} v_{o_t}`` (d-vectors) and
    ``Q_j = sum_{t<=j} v_{o_t}^2`` along the sorted order ``o``, the candidate
    of size j scores ``||V^T x||^2 = ||P_j||^2 / Q_j``, so every k is read off
    the same prefix sums (and suffix sums for ``-v``).  Cost: O(N n (log n + d))
    time, O(n b d) working memory per chunk of ``b`` directions.  The points
    ``x`` are built only when a Result is accessed, so memory stays
    O(n b d) however many k are asked for.
    """
    t0 = time.perf_counter()
    V, eps = _validate(V, eps, callback)
    n, d = V.shape
    ks_arr = _check_ks(ks, n)
    C = _directions(V, eps, seed, samples)
    N = C.shape[0]
    uk, inv = np.unique(ks_arr, return_inverse=True)
    K = uk.size
    best_val = np.full(K, -np.inf)
    best_sample = np.zeros(K, dtype=np.int64)
    best_sign = np.ones(K)
    B = _chunk_size(n, d, N)
    for start in range(0, N, B):
        Cb = C[start:start + B]
        P = V @ Cb.T  # (n, b)
        b = P.shape[1]
        order = np.argsort(-P, axis=0, kind="stable")  # descending, ties to the lower index
        vs = np.take_along_axis(P, order, axis=0)  # sorted values, descending
        npos = np.count_nonzero(P >= 0, axis=0)  # size cap of I^+(v)
        nneg = np.count_nonzero(P <= 0, axis=0)  # size cap of I^+(-v)
        G = V[order] * vs[:, :, None]  # (n, b, d): V_{o_t} v_{o_t}
        sq = vs * vs
        cols = np.arange(b)[None, :]
        # + side: prefixes of the descending order
        Pf = np.cumsum(G, axis=0)
        Qf = np.cumsum(sq, axis=0)
        m = np.minimum(uk[:, None], npos[None, :])  # (K, b) candidate sizes
        num = np.einsum("kbd,kbd->kb", Pf[np.maximum(m - 1, 0), cols], Pf[np.maximum(m - 1, 0), cols])
        den = Qf[np.maximum(m - 1, 0), cols]
        with np.errstate(divide="ignore", invalid="ignore"):
            score_pos = np.where((m > 0) & (den > 0), num / den, -1.0)
        del Pf, Qf
        # - side: suffixes (the ascending order), same arrays reversed
        Pb = np.cumsum(G[::-1], axis=0)
        Qb = np.cumsum(sq[::-1], axis=0)
        del G
        m = np.minimum(uk[:, None], nneg[None, :])
        num = np.einsum("kbd,kbd->kb", Pb[np.maximum(m - 1, 0), cols], Pb[np.maximum(m - 1, 0), cols])
        den = Qb[np.maximum(m - 1, 0), cols]
        with np.errstate(divide="ignore", invalid="ignore"):
            score_neg = np.where((m > 0) & (den > 0), num / den, -1.0)
        del Pb, Qb
        # per (k, sample) the better sign, + wins ties; per k the first best sample
        use_neg = score_neg > score_pos
        score = np.where(use_neg, score_neg, score_pos)
        j = np.argmax(score, axis=1)
        val = score[np.arange(K), j]
        better = val > best_val
        best_val[better] = val[better]
        best_sample[better] = start + j[better]
        best_sign[better] = np.where(use_neg[np.arange(K), j], -1.0, 1.0)[better]
        if callback is not None:
            callback(min(start + B, N), N)
    params_base = {"d": d, "eps": eps, "seed": seed if not isinstance(seed, np.random.Generator)
                   else "generator", "samples": int(N)}
    return ResultPath(V, C, uk, inv, best_val, best_sample, best_sign, params_base,
                      seconds=time.perf_counter() - t0)


class ResultPath(Sequence):
    """The answers of :func:`enet_path`: a read-only sequence of :class:`Result`, one per k.

    Each Result is built when it is accessed, from the winning direction of its
    k (one product ``V c`` and one sort, cached for the last direction used),
    so the path holds O(n d + N d + len(ks)) numbers instead of ``len(ks)``
    dense vectors: all 12582 values of k on MLL would otherwise be the
    12582 x 12582 matrix.  ``list(path)`` materializes every Result.
    """

    def __init__(self, V, C, uk, inv, best_val, best_sample, best_sign, params, seconds):
        self._V, self._C = V, C
        self._uk, self._inv = uk, inv
        self._val, self._sample, self._sign = best_val, best_sample, best_sign
        self._params = params
        self.seconds = float(seconds)  # shared wall-clock time of the whole path
        self._sorted = (None, None, None)  # (sample, order, sorted values)

    def __len__(self) -> int:
        return int(self._inv.size)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        i = int(self._inv[index])
        return self._result(i)

    def __repr__(self) -> str:
        return f"ResultPath(len={len(self)}, n={self._V.shape[0]}, d={self._V.shape[1]})"

    @property
    def ks(self) -> np.ndarray:
        """The sparsities, in the order given."""
        return self._uk[self._inv]

    @property
    def values(self) -> np.ndarray:
        """``||V^T x||^2`` of every answer, without building the points."""
        return np.maximum(self._val[self._inv], 0.0)

    def _order(self, s: int):
        if self._sorted[0] != s:
            v = self._V @ self._C[s]
            order = np.argsort(-v, kind="stable")
            self._sorted = (s, order, v[order])
        return self._sorted[1], self._sorted[2]

    def _result(self, i: int) -> Result:
        V = self._V
        n = V.shape[0]
        k = int(self._uk[i])
        if self._val[i] < 0:  # every candidate vanished (V c = 0 on it): fallback
            x = _fallback_x(V)
        else:
            order, vs = self._order(int(self._sample[i]))
            x = np.zeros(n)
            if self._sign[i] > 0:
                m = min(k, int(np.count_nonzero(vs >= 0)))
                idx, w = order[:m], vs[:m]
            else:
                m = min(k, int(np.count_nonzero(vs <= 0)))
                idx, w = order[n - m:], -vs[n - m:]
            x[idx] = w / np.sqrt(w @ w)
        info = {"samples": int(self._C.shape[0]), "best_sample": int(self._sample[i]),
                "sign": int(self._sign[i]), "path": True}
        res = _finish(V, x, k, "enet", {"k": k, **self._params}, 0.0, info)
        return replace(res, seconds=self.seconds)
