"""Randomized spannogram: the ε-net algorithm (Asteris et al. 2014, Alg. 3).

Instead of enumerating every candidate support of the rank-d problem
``max_{x in S_k^n} ||V^T x||^2`` (Alg. 1), sample unit directions ``c`` at
random, solve the rank-1 problem ``max_{x in S_k^n} (c^T V^T x)^2`` exactly for
each (the k largest nonnegative entries of ``±Vc``) and keep the best point by
``||V^T x||^2``.  Everything is vectorized over the samples: the directions
are drawn and processed in batches as matrices, never one per Python
iteration and never all at once (memory is bounded by ``_CHUNK_BYTES`` whatever
the count; counts above :data:`MAX_SAMPLES` are refused up front).
"""

from __future__ import annotations

import math
import numbers
import time

import numpy as np

from .._common.params import check
from .._common.rank1 import topk_support
from .path import ResultPath, fallback_x, finish, path_batch
from .._common.validation import InputError, as_rng, check_int, check_k, check_matrix, pow2_scale
from ..result import Result, seed_param
from .._common.params import SEED_NOT_GIVEN, renamed_seed

__all__ = ["enet_samples", "enet_seconds", "enet_nspca", "enet_path", "ResultPath"]

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
    eps = check("eps", eps)
    p = _cap_probability(d, eps)
    if p >= 1.0 or n == 1:
        return 1
    return max(1, int(math.ceil(math.log(n) / -math.log1p(-p))))


class _Directions:
    """The N unit directions of the ε-net, produced batch by batch: never all at once.

    Either explicit (an (N, d) array given by the user, sliced) or drawn from a
    Generator: ``rng.standard_normal((b, d))`` batch after batch gives exactly
    the rows of one ``rng.standard_normal((N, d))`` draw, so the answers are
    those of drawing all directions up front, for any batch size.  The
    generator's starting state is kept, so every pass yields the same rows.
    """

    def __init__(self, d: int, N: int, *, rng: np.random.Generator | None = None,
                 C: np.ndarray | None = None):
        self.d, self.N = int(d), int(N)
        self._C = C
        if rng is not None:
            self._bitgen = type(rng.bit_generator)
            self._state = rng.bit_generator.state

    @property
    def shape(self) -> tuple[int, int]:
        return (self.N, self.d)

    def batches(self, size: int):
        """``(start, C_b)`` for consecutive batches of at most ``size`` unit rows."""
        if self._C is not None:
            for start in range(0, self.N, size):
                yield start, self._C[start:start + size]
            return
        bitgen = self._bitgen()
        bitgen.state = self._state
        rng = np.random.Generator(bitgen)
        for start in range(0, self.N, size):
            C = rng.standard_normal((min(size, self.N - start), self.d))
            norms = np.linalg.norm(C, axis=1)
            norms[norms == 0] = 1.0  # probability zero; keeps the row (a zero direction is harmless)
            yield start, C / norms[:, None]


# Refuse more random directions than this (keyword ``max_samples`` of enet_nspca and
# enet_path; fit(method="enet") uses this module value).  Memory stays bounded whatever
# the count (batches of _CHUNK_BYTES), so the cap is about time: 10^7 directions take
# minutes already at n = 361 and far longer at n ~ 10^4 (the refusal gives its own estimate).
MAX_SAMPLES = 10_000_000
# directions timed to estimate the cost of a refused count
_PROBE_SAMPLES = 1024
# Refuse an ε-net whose estimated time is above this many seconds (keyword ``max_seconds`` of
# enet_nspca and enet_path; fit uses this module value).  The count cap alone let 9.2 M
# directions on n = 50 run for minutes: the work per direction grows with n and d.
MAX_SECONDS = 60.0
# The time model: per direction a fixed cost plus a cost per unit of n (d + 2) (one n x d by
# d x b product, an argpartition, one d x n by n x b product), for the path plus a sort
# (n (d + 2 + log2 n) units).  The rates: the largest measured by benchmarks/bench_enet.py on one
# core, rounded up (an estimate that refuses early rather than late).
_SECONDS_PER_DIRECTION = 2e-6
_SECONDS_PER_UNIT = {"single": 25e-9, "path": 35e-9}


def enet_seconds(n: int, d: int, N: int, *, path: bool = False) -> float:
    """Estimated seconds of the ε-net on ``N`` directions, ``n`` features, rank ``d``.

    ``N (2 µs + 25 ns · n (d + 2))`` for one k (:func:`enet_nspca`) and
    ``N (2 µs + 35 ns · n (d + 2 + log2 n))`` for a path of k (:func:`enet_path`); the
    rates are the largest measured on the reference machine (see ``_SECONDS_PER_UNIT``).
    Memory is bounded whatever N (batches of ``_CHUNK_BYTES``), so time is what is capped.
    """
    units = n * (d + 2 + (math.log2(max(n, 2)) if path else 0.0))
    return float(N) * (_SECONDS_PER_DIRECTION + _SECONDS_PER_UNIT["path" if path else "single"] * units)


def enet_directions(V: np.ndarray, k_eps, seed, samples, *, max_samples=None, probe=None, max_seconds=None,
                path=False) -> _Directions:
    """Validated sample directions: N unit rows of length d, produced in batches.

    A count above ``max_samples`` (default :data:`MAX_SAMPLES`) is refused before any
    direction is drawn, with the count and an estimate of the time it would take
    (``probe(C_b)`` — default the rank-1 scorer of :func:`enet_nspca` — timed on
    ``_PROBE_SAMPLES`` directions, the least of two runs, scaled linearly to N).  A Generator given as ``seed``
    is advanced by the N draws here, as when the directions were drawn at once.
    """
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
        return _Directions(d, C.shape[0], C=C / norms[:, None])
    cap = MAX_SAMPLES if max_samples is None else check_int(max_samples, "max_samples", 1)
    limit = check("max_seconds", max_seconds)
    limit = MAX_SECONDS if limit is None else limit
    if N > cap:
        _refuse_count(V, N, cap, k_eps, samples, probe)
    est = enet_seconds(n, d, N, path=path)
    if est > limit:
        origin = (f"`samples`={N:,} directions" if samples is not None
                  else f"enet_samples(d={d}, eps={k_eps:g}, n={n}) = {N:,} random directions")
        model = (f"{N:,} × (2 µs + 35 ns × n (d + 2 + log2 n))" if path else f"{N:,} × (2 µs + 25 ns × n (d + 2))")
        raise InputError(f"the ε-net would draw {origin} on n = {n:,} features at d = {d}: about "
                         f"{_duration(est)} estimated ({model}; memory stays bounded), more than `max_seconds` = "
                         f"{limit:g} s. Use a larger `eps` or a smaller `d`, pass a smaller `samples`, or raise "
                         "`max_seconds` (default nspca_core.enet.MAX_SECONDS)")
    rng = as_rng(seed)
    dirs = _Directions(d, N, rng=rng)
    if isinstance(seed, np.random.Generator):  # advance the caller's generator as one draw would
        for start in range(0, N, 1 << 16):
            rng.standard_normal((min(1 << 16, N - start), d))
    return dirs


def _refuse_count(V, N: int, cap: int, eps, samples, probe) -> None:
    n, d = V.shape
    b = min(N, _PROBE_SAMPLES)
    C = np.random.default_rng(0).standard_normal((b, d))
    C /= np.linalg.norm(C, axis=1, keepdims=True)
    probe = probe or (lambda Cb: _batch_scores(V, min(n, 10), Cb))
    B = _chunk_size(n, d, b)
    per = np.inf
    for _ in range(2):  # the least of two runs: the first pays one-off costs (caches, imports)
        t = time.perf_counter()
        for start in range(0, b, B):
            probe(C[start:start + B])
        per = min(per, (time.perf_counter() - t) / b)
    origin = (f"`samples`={N:,}" if samples is not None
              else f"enet_samples(d={d}, eps={eps:g}, n={n}) = {N:,} random directions")
    raise InputError(f"the ε-net would draw {origin}, more than `max_samples` = {cap:,}: about "
                     f"{_duration(per * N)} at {per * 1e6:.3g} µs per direction (timed on {b} "
                     f"directions just now). Use a larger `eps` or a smaller `d`, pass a smaller "
                     f"`samples`, or raise `max_samples` (default nspca_core.enet.MAX_SAMPLES)")


def _duration(seconds: float) -> str:
    for unit, size in (("days", 86400.0), ("hours", 3600.0), ("minutes", 60.0)):
        if seconds >= 2 * size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.3g} s"


def _validate(V, eps, callback):
    V = check_matrix(V, "V")
    eps = check("eps", eps)
    check("callback", callback)
    return V, eps


def _chunk_size(n: int, d: int, N: int) -> int:
    return int(max(1, min(N, _CHUNK_BYTES // (8 * n * (d + 2) * 3))))


def _batch_scores(V, k, C):
    """``||V^T x||^2`` of both rank-1 candidates ``I_k^+(±Vc)`` of the rows c of C: (b, 2).

    One product ``V C^T``, one ``argpartition`` per column and sign, one product
    ``V^T W``.  A candidate whose ``(Vc)_I`` vanishes scores -1.
    """
    n = V.shape[0]
    P = V @ C.T  # (n, b): the sampled vectors Vc
    b = P.shape[1]
    scores = np.empty((b, 2))
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
            scores[:, s] = np.where(sq > 0, np.einsum("ij,ij->j", Y, Y) / sq, -1.0)
    return scores


def _scan(V, k, dirs, callback, visit):
    """Score every direction batch by batch (memory O(n b), b from ``_CHUNK_BYTES``);
    ``visit(start, C_b, scores_b)`` sees each batch in order."""
    n, d = V.shape
    N = dirs.shape[0]
    B = _chunk_size(n, d, N)
    for start, Cb in dirs.batches(B):
        visit(start, Cb, _batch_scores(V, k, Cb))
        if callback is not None:
            callback(min(start + B, N), N)


def _candidate(V, k, c, sign):
    """The rank-1 candidate ``x_I = ±(Vc)_I / ||(Vc)_I||`` on ``I = I_k^+(±Vc)``, or None."""
    v = sign * (V @ c)
    idx = topk_support(v, k)
    w = v[idx]
    nw = float(np.sqrt(w @ w))
    if nw == 0:
        return None
    x = np.zeros(V.shape[0])
    x[idx] = w / nw
    return x


def _as_directions(C) -> _Directions:
    return C if isinstance(C, _Directions) else _Directions(C.shape[1], C.shape[0], C=np.asarray(C))


def _enet_single(V, k, C, callback):
    """Best (sample, sign) for one k; returns (x or None, sample, sign).

    Ties: per sample the + sign, then the first sample (as :func:`enet_path`).
    Only the best direction so far is kept, not the scores of all N.
    """
    best = {"val": -np.inf, "j": 0, "sign": 1.0, "c": None}

    def visit(start, Cb, scores):
        use_neg = scores[:, 1] > scores[:, 0]
        top = np.where(use_neg, scores[:, 1], scores[:, 0])
        j = int(np.argmax(top))
        if top[j] > best["val"]:  # strictly: the first best sample wins ties
            best.update(val=float(top[j]), j=start + j, sign=-1.0 if use_neg[j] else 1.0, c=Cb[j].copy())

    _scan(V, k, _as_directions(C), callback, visit)
    if best["val"] < 0:
        return None, best["j"], best["sign"]
    return _candidate(V, k, best["c"], best["sign"]), best["j"], best["sign"]


def enet_top(V, k, C, count):
    """Up to ``count`` best distinct-support candidates (for multi-start local search;
    ``V`` is scaled here, so any scale gives the same candidates).

    The order is that of all ``2N`` candidates sorted by score (descending, then
    sample, + before -), duplicates of an earlier support skipped.  It is kept
    batch by batch: a candidate ranked below ``count`` distinct supports among
    those seen never rises (more candidates only add supports above it), so a
    pool of ``count`` entries is enough.
    """
    pool = []  # (score, flat index, x, key), in order

    def visit(start, Cb, scores):
        flat = 2 * start + np.arange(scores.size)  # sample-major, + then -
        sc = scores.ravel()
        keep = sc >= 0
        if len(pool) >= count:  # later samples rank below equal scores: only a higher one enters
            keep &= sc > pool[-1][0]
        new = sorted(zip((-sc[keep]).tolist(), flat[keep].tolist()))
        old = [(-e[0], e[1], e) for e in pool]
        merged = sorted([(a, b, None) for a, b in new] + old, key=lambda t: (t[0], t[1]))
        out, seen = [], set()
        for neg, f, entry in merged:
            if len(out) >= count:
                break
            if entry is None:
                j = f // 2 - start
                x = _candidate(V, k, Cb[j], 1.0 if f % 2 == 0 else -1.0)
                if x is None:
                    continue
                entry = (-neg, f, x, np.flatnonzero(x).tobytes())
            if entry[3] not in seen:
                seen.add(entry[3])
                out.append(entry)
        pool[:] = out

    V = V / pow2_scale(V)
    _scan(V, k, _as_directions(C), None, visit)
    return [e[2] for e in pool]


def enet_nspca(V, k, *, eps=0.1, random_state=0, samples=None, callback=None, max_samples=None,
               max_seconds=None, seed=SEED_NOT_GIVEN) -> Result:
    """Approximate ``OPT_d = max_{x in S_k^n} ||V^T x||^2`` by random directions (Alg. 3).

    Parameters
    ----------
    V : array_like of shape (n, d)
        Low-rank factor, ``A_d = V V^T`` (see :func:`nspca_core.lowrank_factor`).
    k : int in [1, n]
        Maximum number of nonzeros.
    eps : float in (0, 1), default 0.1
        Target accuracy; sets the default number of samples (:func:`enet_samples`).
    random_state : int, None or numpy.random.Generator, default 0
        Source of the random directions (same seed, same output).
    samples : int or array_like of shape (N, d), optional
        Number of random directions (default ``enet_samples(d, eps, n)``), or
        the directions themselves (rows; normalized here).
    callback : callable(done, total), optional
        Progress, called after each chunk of samples.
    max_samples : int, optional
        Refuse (:class:`InputError`, before drawing anything) a random count
        above this, default :data:`MAX_SAMPLES` (10^7, a module constant
        that ``fit(method="enet")`` uses).  The message gives the count and
        the time it would take, estimated by timing 1024 directions of this
        solver on ``V`` at the time of the call.
    max_seconds : float, optional
        Refuse (:class:`InputError`, before drawing anything) a random count
        whose estimated time (:func:`enet_seconds`: it grows with n and d, not
        only with the count) is above this; default :data:`MAX_SECONDS` (60 s,
        a module constant that ``fit(method="enet")`` uses).

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
    ``n x b`` product: O(N n d) time.

    Memory is bounded whatever N: the directions are drawn and scored batch
    by batch (``b = _CHUNK_BYTES / (24 n (d + 2))`` directions per batch, a
    budget of 48 MB for the largest temporaries, at least one direction) and
    only the best direction so far is kept; the batches draw the same numbers
    as one draw of all N, so the answer does not depend on b.  Scale-free: the
    search runs on ``V`` divided by a power of two (exact).
    """
    seed = renamed_seed(random_state, seed)  # `seed=`: deprecated name
    t0 = time.perf_counter()
    V, eps = _validate(V, eps, callback)
    n, d = V.shape
    k = check_k(k, n)
    Vs = V / pow2_scale(V)
    C = enet_directions(Vs, eps, seed, samples, max_samples=max_samples, max_seconds=max_seconds)
    x, j, sign = _enet_single(Vs, k, C, callback)
    if x is None:
        x = fallback_x(Vs)
    params = {"k": k, "d": d, "eps": eps, "random_state": seed_param(seed), "samples": int(C.shape[0])}
    info = {"samples": int(C.shape[0]), "best_sample": j, "sign": int(sign),
            "guarantee": f">= (1 - eps) OPT_d with probability >= 1 - 1/n when samples >= "
                         f"enet_samples(d, eps, n) = {enet_samples(d, eps, n)}"}
    return finish(V, x, k, "enet", params, t0, info)


def enet_path(V, ks, *, eps=0.1, random_state=0, samples=None, callback=None,
              max_samples=None, max_seconds=None, seed=SEED_NOT_GIVEN) -> "ResultPath":
    """:func:`enet_nspca` for many sparsities at once, sharing the random directions.

    Parameters
    ----------
    V : array_like of shape (n, d)
    ks : sequence of int in [1, n]
        Sparsities (any order, repeats allowed); one Result per entry.
    eps, seed, samples, callback, max_samples, max_seconds
        As in :func:`enet_nspca` (the time estimate includes the sort per direction);
        the same seed gives the same directions, so ``enet_path(V, [k])[0]`` and ``enet_nspca(V, k)`` pick from the
        same candidates.

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
    time, O(n b d) working memory per batch of ``b`` directions (the budget
    of :func:`enet_nspca`, 48 MB); the directions are drawn batch by batch and
    only the winning one of each k is kept.  The points ``x`` are built only
    when a Result is accessed, so memory stays O(n b d + len(ks) d) however
    many k and directions are asked for.
    """
    seed = renamed_seed(random_state, seed)  # `seed=`: deprecated name
    t0 = time.perf_counter()
    V, eps = _validate(V, eps, callback)
    n, d = V.shape
    ks_arr = np.asarray(check("ks", ks, n_features=n), dtype=np.int64)
    scale = pow2_scale(V)
    Vs = V / scale
    uk, inv = np.unique(ks_arr, return_inverse=True)
    K = uk.size
    C = enet_directions(Vs, eps, seed, samples, max_samples=max_samples,
                    probe=lambda Cb: path_batch(Vs, uk, Cb), max_seconds=max_seconds, path=True)
    N = C.shape[0]
    best_val = np.full(K, -np.inf)
    best_sample = np.zeros(K, dtype=np.int64)
    best_sign = np.ones(K)
    best_dir = np.zeros((K, d))  # the winning direction of each k (not all N are kept)
    B = _chunk_size(n, d, N)
    for start, Cb in C.batches(B):
        score, use_neg = path_batch(Vs, uk, Cb)
        # per k the first best sample
        j = np.argmax(score, axis=1)
        val = score[np.arange(K), j]
        better = val > best_val
        best_val[better] = val[better]
        best_sample[better] = start + j[better]
        best_sign[better] = np.where(use_neg[np.arange(K), j], -1.0, 1.0)[better]
        best_dir[better] = Cb[j[better]]
        if callback is not None:
            callback(min(start + B, N), N)
    params_base = {"d": d, "eps": eps, "random_state": seed_param(seed), "samples": int(N)}
    return ResultPath(V, Vs, best_dir, N, uk, inv, best_val * (scale * scale), best_sample, best_sign,
                      params_base, seconds=time.perf_counter() - t0)
