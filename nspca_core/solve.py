"""The solvers below the front: :func:`fit_cov` (one component on a validated covariance
operator) and the "auto" solver with its starts.

The front (:mod:`nspca_core.api`, for in-memory and Dask arrays alike) validates and calls
:func:`fit_cov`; the certificates (:mod:`nspca_core.certificates.lower`) use it for their
lower bounds.  Nothing here imports a front.
"""

from __future__ import annotations

import math
import numbers
import time
import warnings
from dataclasses import replace

import numpy as np
import scipy.linalg.lapack

from ._common.ascent import Screen, SupportJump, ascent, cov_key, project, random_starts
from ._common.polish import polish_many
from ._common.screen import SingleProducts
from ._common.pairs import opt_pairs
from ._common.points import make_result
from ._common.rank1 import rank1_points
from ._common.single_step import SingleTopK
from ._common.steps import TopK
from ._common.validation import as_rng
from .enet import enet_directions, enet_samples, enet_top
from .methods import PEERS
from .operators.cov import THIN_GRAM_KEEP_RATIO, Cov
from .peers import PEER_METHODS
from .peers.tpower import tpower_starts
from .result import Result, seed_param
from .spannogram.budget import within_budget

__all__ = ["fit_cov", "seed_param"]

# "auto" enumerates S_3 exactly when 8 C(n+1, 3) candidate evaluations stay below this
_EXACT_D3_BUDGET = 200_000
# "auto" adds the exact d = 2 spannogram as an extra start up to this many features
_EXACT_D2_MAX_N = 4000
# minimum number of random directions "auto" draws for the ε-net
_AUTO_MIN_SAMPLES = 1024
# random starts of "auto"'s batched ascent, besides those of the truncated power method
_AUTO_RANDOM_STARTS = 24
_TPOWER_RESTARTS = 10
# eigenvalues below this * n * lambda_1 count as zero (data of rank <= d: auto is exact)
_RANK_TOL = 64 * np.finfo(float).eps
_AUTO_ENET = False
# best distinct ε-net candidates polished by "auto" besides the winner
_AUTO_ENET_STARTS = 8
# distinct local optima of the ascent that "auto" polishes fully (with reweighting)
_AUTO_FULL_POLISH = 3
# ... among those within this fraction of the best ascended value
_AUTO_POLISH_WITHIN = 0.99
# a column of auto's ascent stops once its value plus this many times its last gain is below the best
# value of the batch (:func:`nspca_core._common.ascent.ascent`'s ``dominated``).  A heuristic, measured
# (issue 39, ninth round, against 40): auto's answers on 1,389 cases (bench_auto --fingerprint --seeds 3,
# 378; k 3..200 x random_state 0..4 on the seven sets, 345; small, thin, LRS, CBCL x 13 k x random_state
# 0..11, 576; five other gene shapes x 6 k x 3 seeds, 90) bit-identical but for 11 on the same support
# within one ulp of the variance, none worse beyond that; golub-shaped k = 180: 244 -> 201 column-steps.
# 10 lost up to 0.3% (random 54 x 39, k = 4).  tpower's own starts are exempt (:func:`_tpower_own`): the stop
# once lost tpower's winner (random thin 12 x 1,019, k = 3: auto / tpower 0.9445)
_AUTO_DOMINATED = 20.0
# auto's random starts ``A r`` whose value is below this fraction of the batch's best stop as dominated with
# this factor instead (``ascent(far=)``, :func:`_far`): on thin gene data (72 x 1,000, k = 50) most random
# starts sit at 0.1-0.35 of the best after their first step and climbed on for 3-6 more steps.  Measured
# (issue 39, nineteenth round): bench_auto --fingerprint --seeds 3, 540 of 540 answers bit-identical.  The
# factor alone on every random start (no fraction) lost answers: 5 or 2 gave MLL random_state 2 k = 10
# -1.7% and small random_state 1 k = 3 -0.8% (the extra stops there sat at 0.55-0.98 of the best)
_AUTO_RANDOM_DOMINATED = 2.0
_AUTO_RANDOM_FAR = 0.5
# up to this many features "auto" also runs the "em" peer (same seed) and polishes its answer with the
# others: there it costs next to nothing, and em's soft steps can reach an optimum no hard-truncation
# start reaches (random 54 x 39 data, k = 5: +0.05%); above, auto >= em is measured, not built in
_AUTO_EM_MAX_N = 64
# from this many features "auto" explores (its starts' products and its batched ascent) with float32
# products (:class:`~nspca_core._common.screen.SingleProducts`); the polish and every value returned are
# float64.  Below, the products cost less than the calls around them
_AUTO_SINGLE_MIN_N = 256
# a column of auto's batched ascent stops once its support is unchanged and 1 - <x_new, x> <= this (the
# truncated power method's own stop is 1e-12): the ascent only chooses supports, and the polish starts the
# best distinct ones at their support's limit (``reweight_first``) and ascends them to 1e-12.  On a
# covariance (no support jump) the last steps converged a support already settled: LRS k = 3..10 one or
# two steps fewer (~0.2 of ~1.7 ms); answers bit-identical on the 378 cases of ``bench_auto.py
# --fingerprint --seeds 3``
_AUTO_XTOL = 1e-8
# ARPACK's relative residual tolerance of auto's factor on sparse data (and other data held as a
# SparseCov): its pairs only choose starts (the answer's weights come from its support's own
# eigenvector in the polish, its variance from the data), and they take fewer products than to
# machine precision (review corpus 5,000 x 2,000: 31 -> 14 ms, V within 2e-8 of tol = 0, eigenvalues
# within 2e-13 relative; KOS-shaped 23 -> 13 ms; auto's answers on both corpora, k = 2..150, d = 1..3,
# random_state 0..2: 144 of 144 bit-identical to tol = 0)
_AUTO_SPARSE_FACTOR_TOL = 1e-6
# auto's normal draws kept by (int seed, number of features) (:func:`_start_draws`): this many entries, each
# up to this many bytes (a larger one is drawn every time)
_DRAWS_KEEP = 2
_DRAWS_MAX_BYTES = 1 << 24
_DRAWS: dict = {}
# thin data (m < n samples) with float32 products: auto's random starts ``A r``, r ~ N(0, I_n), are drawn
# in the sample space as ``X^T F g``, g ~ N(0, I_m), with ``F F^T = G = (X/s)(X/s)^T / m`` (pivoted Cholesky of
# the factor's Gram, :meth:`Cov.thin_gram`): covariance ``X^T G X = (m / s^2) A^2``, the law of A r up to a
# scale (each start is projected), with m x 24 draws instead of n x 24 and one n x m product instead of two.
# Up to m^2 <= this * n: the Cholesky's m^3 / 3 flops stay below the 24 m n product saved
# (the operator keeps its Gram up to the same ratio, THIN_GRAM_KEEP_RATIO)
_SAMPLE_STARTS_RATIO = THIN_GRAM_KEEP_RATIO


def peer(method: str):
    """The peer function of a validated method name (:data:`nspca_core.peers.PEER_METHODS`)."""

    return PEER_METHODS[method]


# ----------------------------------------------------------------------------- single component
def _make_result(cov, x, V, method, params, t0, info, converged=True) -> Result:
    """A nonnegative point's Result (:func:`nspca_core._common.points.make_result`)."""
    return make_result(cov, x, method=method, params=params, t0=t0, converged=converged, info=info, V=V,
                       nonneg=True)


def _exact_d3_cheap(n: int) -> bool:
    return 8 * math.comb(n + 1, 3) <= _EXACT_D3_BUDGET


def fit_cov(cov: Cov, k: int, method: str, d: int, eps: float, seed, callback, options) -> Result:
    """Solve on a validated Cov without certification.  ``info['opt_d']`` holds an exact OPT_d
    (with its d) when one was computed, for the paper bound."""
    t0 = time.perf_counter()
    params = {"k": k, "method": method, "d": d, "eps": eps, "random_state": seed_param(seed)}
    if method in PEERS:
        r = peer(method)(cov, k, seed=seed, callback=callback, **options)
        return replace(r, params={**params, **r.params}, seconds=time.perf_counter() - t0)
    samples = options.get("samples")
    if method == "spannogram":
        from .spannogram import lowrank_nspca

        V, eig = cov.factor(d)
        r = lowrank_nspca(V, k, callback=callback)
        info = {**r.info, "eigenvalues": eig, "opt_d": (d, float(r.variance_lowrank))}
        return _make_result(cov, r.x, V, "spannogram", params, t0, info)
    if method == "enet":
        from .enet import enet_nspca

        V, eig = cov.factor(d)
        r = enet_nspca(V, k, eps=eps, random_state=seed, samples=samples, callback=callback)
        info = {**r.info, "eigenvalues": eig}
        params["samples"] = r.params["samples"]
        return _make_result(cov, r.x, V, "enet", {**params}, t0, info)
    return _fit_auto(cov, k, d, eps, seed, callback, options, params, t0)


def _auto_starts(cov: Cov, V: np.ndarray, k: int, key: np.ndarray, seed,
                 matvec: SingleProducts | None = None) -> tuple[list, np.ndarray]:
    """The cheap starts of "auto" as ``(names, X0)``, X0 (n, p) one start per column: those of the
    truncated power method with the same seed (so "auto" is never below "tpower"), the rank-1
    solutions of the other top eigenvectors, and ``A r`` for random signed r drawn per rank of
    ``key`` (order-free).  On thin data with float32 products and a small Gram (:func:`_sample_gram`) the
    random starts are drawn in the sample space instead: ``X^T F g``, the law of ``A r``
    (:data:`_SAMPLE_STARTS_RATIO`; the draws do not see the features' order).  One matrix filled by blocks:
    no n-vector per start to stack again.
    ``matvec``: a :class:`~nspca_core._common.screen.SingleProducts` for ``A r`` (default ``cov.matvec``)."""

    gram = _sample_gram(cov, matvec)
    rng = _start_draws(seed, cov.n, cov.n if gram is None else gram.shape[0])
    F = rank1_points(V, k)  # the rank-1 points of every factor column (tpower's first start among them)
    T = tpower_starts(V[:, 0], k, key, rng, _TPOWER_RESTARTS, first=F[:, 0])
    d = V.shape[1]
    # with float32 products the columns need not be unit: A r is projected (normalized) anyway
    R = random_starts(key, rng, _AUTO_RANDOM_STARTS, nonneg=False, unit=matvec is None) if gram is None \
        else _sample_factor(gram) @ rng.standard_normal((gram.shape[0], _AUTO_RANDOM_STARTS))
    q = _AUTO_RANDOM_STARTS
    names = ["rank1(u1)", "top-variance"] + [f"tpower#{i}" for i in range(2, T.shape[1])]
    names += [f"rank1(u{j + 1})" for j in range(1, d)] + [f"random#{i + 1}" for i in range(q)]
    # column-major with float32 products (large n): the starts are projected column by column
    X0 = np.empty((cov.n, len(names)), order="C" if matvec is None else "F")
    p = T.shape[1]
    X0[:, :p] = T
    X0[:, p:p + d - 1] = F[:, 1:]
    if matvec is None:
        X0[:, p + d - 1:] = cov.matvec(R)
    elif gram is not None:  # X^T (F g) in float32 (a scale of a column does not matter: it is projected)
        matvec.rows_of(None, np.arange(cov.n), None, Z=R.astype(np.float32), out=X0[:, p + d - 1:])
    else:  # the float32 products converted straight into X0's block
        matvec(R, dense=True, out=X0[:, p + d - 1:])
    return names, X0


def _sample_gram(cov: Cov, matvec) -> np.ndarray | None:
    """The m x m Gram of thin data for auto's random starts in the sample space (see
    :data:`_SAMPLE_STARTS_RATIO`), or None: other data, float64 products, or m too large."""
    if matvec is None or not getattr(matvec, "thin", False):
        return None
    kept = cov.thin_gram()
    if kept is None or kept[0].shape[0] ** 2 > _SAMPLE_STARTS_RATIO * cov.n:
        return None
    return kept[0]


def _sample_factor(G: np.ndarray) -> np.ndarray:
    """F (m, m) with ``F F^T = G`` to rounding for the PSD ``G`` (m x m): LAPACK's pivoted Cholesky
    ``P^T G P = L L^T`` stopping at the numerical rank r, ``F = P L`` (its columns past r zero); any such
    F gives ``F g`` the law N(0, G) for g ~ N(0, I_m)."""
    c, piv, rank, info = scipy.linalg.lapack.dpstrf(G, lower=1)
    if info < 0:
        raise np.linalg.LinAlgError(f"dpstrf: argument {-info} illegal")
    F = np.zeros((G.shape[0], G.shape[0]))
    F[piv - 1, :rank] = np.tril(c)[:, :rank]
    return F


class _Draws:
    """The Generator of ``as_rng(seed)`` as :func:`_auto_starts` uses it: the standard normal arrays it
    draws, replayed in order (copies: the caller may change them in place).  Of shapes other than those
    recorded it knows nothing (an AssertionError, never other numbers)."""

    def __init__(self, arrays: tuple):
        self._arrays, self._next = arrays, 0

    def standard_normal(self, shape) -> np.ndarray:
        a = self._arrays[self._next]
        if a.shape != tuple(shape):
            raise AssertionError(f"draws recorded of shape {a.shape}, asked for {tuple(shape)}")
        self._next += 1
        return a.copy()


def _start_draws(seed, n: int, rows: int | None = None):
    """The random stream of auto's starts: ``as_rng(seed)``, or for an int seed its normal draws kept
    from an earlier fit with the same seed and feature count (:data:`_DRAWS`).  They depend on nothing
    else, and a session fits the same data at many k (the app's slider, a path): the n x 34 draws cost
    more than the starts' products on gene data (dlbcl-shaped 77 x 7,070: 2.2 of 3.9 ms).  The same
    floats either way (one Generator, the same calls in the same order).  ``rows``: the rows of the
    random starts' draw (n by default; m when drawn in the sample space)."""
    rows = n if rows is None else rows
    if seed is None or isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or int(seed) < 0 \
            or 8 * (n * _TPOWER_RESTARTS + rows * _AUTO_RANDOM_STARTS) > _DRAWS_MAX_BYTES:
        return as_rng(seed)  # a Generator, a RandomState, None, or too many features: drawn every time
    tag = (int(seed), int(n), int(rows))
    arrays = _DRAWS.get(tag)
    if arrays is None:
        rng = as_rng(seed)
        arrays = tuple(rng.standard_normal(shape) for shape in ((n, _TPOWER_RESTARTS), (rows, _AUTO_RANDOM_STARTS)))
        for a in arrays:
            a.flags.writeable = False
        for old in list(_DRAWS)[:max(0, len(_DRAWS) - _DRAWS_KEEP + 1)]:  # the oldest first
            _DRAWS.pop(old, None)
        _DRAWS[tag] = arrays
    return _Draws(arrays)


def _enet_starts(V: np.ndarray, k: int, d: int, eps: float, seed, samples, info: dict) -> tuple[list, np.ndarray]:
    """The best distinct candidates of the ε-net (Alg. 3) on the rank-d factor, as ``(names, X0)``."""

    N = samples or max(enet_samples(d, eps, V.shape[0]), _AUTO_MIN_SAMPLES)
    # the same directions as enet_nspca(V, k, eps=eps, seed=seed, samples=N) draws
    C = enet_directions(V, eps, seed, N)
    info["enet_samples"] = int(C.shape[0])
    xs = enet_top(V, k, C, _AUTO_ENET_STARTS)
    return [f"enet(d={d})#{i + 1}" for i in range(len(xs))], np.column_stack(xs)


def _fit_auto(cov, k, d, eps, seed, callback, options, params, t0) -> Result:
    """Many cheap starts, one batched ascent on the true A, full polish of the best few.

    ``k <= 2`` is solved exactly (all pairs).  Otherwise the starts are those of
    :func:`_auto_starts`, plus the exact spannogram's answer when it is cheap
    (d <= 2 on small n) and the ε-net's best candidates when the cheap starts
    disagree or ``samples`` is given.  All run through one batched ascent
    (:func:`nspca_core._common.ascent.ascent`); the best distinct local optima
    are then polished with support reweighting.

    Cost (issue 39): the starts are one matrix filled by blocks; the ascent computes ``A x`` only
    on the rows that can enter a top k, counted per column (:class:`~nspca_core._common.ascent.Screen`,
    exact: the same steps), selects the top k
    among the entries reaching the previous support's smallest, moves a column whose
    support stays to that support's limit on thin data
    (:class:`~nspca_core._common.ascent.SupportJump`, never lower), and merges a column
    into a better one as soon as it reaches its support (``merge="support"``).  From
    ``_AUTO_SINGLE_MIN_N`` features the starts' products and the batched ascent run in float32
    (:class:`~nspca_core._common.screen.SingleProducts`: they only choose supports); the best
    distinct points are then polished in float64 from their support's limit
    (``polish_many(reweight_first=True)``), and the answer's variance is that of a float64 point.
    """
    n = cov.n
    V, eig = _auto_factor(cov, d)
    info: dict = {"eigenvalues": eig, "exact": False}
    diag = cov.diag()  # the variances, for the key and the screen's order
    key = cov_key(cov, diag)
    if k <= 2:
        low = cov.quads(project(np.column_stack([V, diag]), k, key)).max()
        opt, x = opt_pairs(cov, k, lower=float(low))
        info.update({"starts": {"pairs": opt}, "polished": {"pairs": opt}, "winner": "pairs",
                     "polish_iterations": 0, "exact": True, "opt": opt})
        return _make_result(cov, x, V, "auto", params, t0, info)
    steps = 3

    def tick(step):
        if callback is not None:
            callback(step, steps)

    first: tuple | None = None  # the exact spannogram's answer, the first start when computed
    # the data's rank when it is at most d (the spectrum beyond is zero to rounding): then
    # A = V V^T and the exact spannogram is the optimum itself
    rank = int(np.count_nonzero(eig[:d] > _RANK_TOL * n * eig[0])) if eig[d] <= _RANK_TOL * n * eig[0] \
        else None
    if rank is not None and not within_budget(n, max(rank, 1), k):  # rank >= 4 on many rows: not enumerated
        rank = None
    if rank is not None or (d <= 2 and n <= _EXACT_D2_MAX_N) or (d == 3 and _exact_d3_cheap(n)):
        from .spannogram import lowrank_nspca

        dd = max(rank, 1) if rank is not None else d
        r = lowrank_nspca(V[:, :dd], k)
        first = (f"spannogram(d={dd})", r.x)
        info["opt_d"] = (dd, float(r.variance_lowrank))
        if rank is not None:  # A = V V^T: the spannogram's answer is optimal, nothing to polish
            val = cov.quad(r.x)
            info.update({"starts": {f"spannogram(d={dd})": val}, "polished": {f"spannogram(d={dd})": val},
                         "winner": f"spannogram(d={dd})", "polish_iterations": 0, "exact": True})
            return _make_result(cov, r.x, V, "auto", params, t0, info)
    single = SingleProducts(cov) if SingleProducts.applies(cov, _AUTO_SINGLE_MIN_N) else None
    names, X0 = _auto_starts(cov, V, k, key, seed, single)
    if first is not None:
        names, X0 = [first[0]] + names, np.column_stack([first[1], X0])
    tick(1)
    screen = Screen(cov, V, eig[0], single, diag=diag, key=key) if Screen.applies(cov) else None
    before, after, ascended, supports = _ascend(cov, names, X0, k, key, screen, single)
    del X0  # written over by the ascent's start (not held through the polish)
    if options.get("samples") or (_AUTO_ENET and _disagree(after)):
        more = _enet_starts(V, k, d, eps, seed, options.get("samples"), info)
        b2, a2, x2, s2 = _ascend(cov, *more, k, key, screen, single)
        before.update(b2)
        after.update(a2)
        ascended.update(x2)
        supports.update({nm: s2[nm] for nm in x2})  # made now: s2 holds its own points
    if n <= _AUTO_EM_MAX_N:
        with warnings.catch_warnings():  # em's own non-convergence is not auto's: its point still counts
            warnings.simplefilter("ignore", RuntimeWarning)
            r_em = peer("em")(cov, k, seed=seed)
        before["em"] = after["em"] = float(r_em.variance)
        ascended["em"] = r_em.x
        supports["em"] = (r_em.x != 0).tobytes()
    tick(2)
    distinct: dict[bytes, str] = {}
    for name in sorted(after, key=lambda nm: -after[nm]):
        distinct.setdefault(supports[name], name)  # one name per support
        if len(distinct) == _AUTO_FULL_POLISH:  # the first few are polished: the rest is not looked at
            break
    best_name, best_x, best_f = None, None, -np.inf
    top = max(after.values())
    # the best distinct optima (far below the best, a polish's small gains will not overtake it),
    # polished together
    names = [nm for i, nm in enumerate(list(distinct.values())[:_AUTO_FULL_POLISH])
             if i == 0 or after[nm] >= top * _AUTO_POLISH_WITHIN]
    Xp, fp, iters = polish_many(cov, np.column_stack([ascended[nm] for nm in names]), k, key=key,
                                reweight_first=True,
                                screen=None if screen is None else screen.exact())
    for j, name in enumerate(names):
        after[name] = max(after[name], float(fp[j]))
        if fp[j] > best_f:
            best_name, best_x, best_f = name, Xp[:, j], float(fp[j])
    tick(3)
    info.update({"starts": before, "polished": after, "winner": best_name, "polish_iterations": iters})
    return _make_result(cov, best_x, V, "auto", params, t0, info)


def _auto_factor(cov: Cov, d: int):
    """``cov.factor(d)``; on a :class:`~nspca_core.operators.sparse.SparseCov` ARPACK stops at the relative
    residual ``_AUTO_SPARSE_FACTOR_TOL`` (its eigenvalues then within that of exact ones, relative)."""
    from .operators.sparse import SparseCov

    if isinstance(cov, SparseCov):
        return cov.factor(d, tol=_AUTO_SPARSE_FACTOR_TOL)
    return cov.factor(d)


def _ascend(cov: Cov, names: list, X0: np.ndarray, k: int, key: np.ndarray, screen: Screen | None = None,
            single: SingleProducts | None = None):
    """One batched ascent from every start (the columns of X0, named by ``names``): ``(value before,
    value after, point after, support as bytes)`` by name (the support: ``(x != 0).tobytes()``, from one
    comparison of all points).  ``screen``: the products exact only where the top k can be
    (:class:`Screen`); ``single``: float32 products (the values then carry their rounding, the points
    are polished in float64 after).  X0 is the caller's scratch: the starts' projection may write in it."""
    # the support's limit through the m x m Gram of thin data; on a covariance the eigh and its
    # bookkeeping cost more than the steps they save (CBCL, LRS)
    jump = SupportJump(cov, top_only=single is not None) if type(cov) is Cov and cov.thin and cov._A is None \
        else None
    matvec = single if single is not None else _SparseRows.of(cov, k) or cov.matvec
    # X0 is the caller's, made for this ascent and dropped after it: the starts' projection writes in it
    step = TopK(compact_start=True, own_starts=True) if single is None else \
        SingleTopK(compact_start=True, own_starts=True, single_from=_random_from(names))
    r = ascent(matvec, X0, k, step=step, key=key, screen=screen, jump=jump,
               merge="support", dominated=_AUTO_DOMINATED, far=_far(names), exempt=_tpower_own(names), xtol=_AUTO_XTOL)
    # the starts made feasible are the first iterates: their values come with the first products
    before = dict(zip(names, r.start_values.tolist()))
    after = {nm: float(max(v, before[nm])) for nm, v in zip(names, r.values)}
    return (before, after, {nm: r.X[:, j] for j, nm in enumerate(names)}, _Supports(r.X, names))


def _far(names: list):
    """``ascent(far=)``: the random starts ``A r`` far below the best (``_AUTO_RANDOM_FAR`` of its value)
    stop as dominated with the smaller factor ``_AUTO_RANDOM_DOMINATED``; None without random starts."""
    rnd = np.array([nm.startswith("random#") for nm in names])
    if not rnd.any():
        return None
    return np.where(rnd, _AUTO_RANDOM_DOMINATED, _AUTO_DOMINATED), _AUTO_RANDOM_FAR


def _random_from(names: list) -> int | None:
    """The first of the random starts ``A r`` when they are the last columns (:func:`_auto_starts`; with
    float32 products their entries are float32 numbers, :class:`SingleTopK`'s ``single_from``), else None."""
    j = next((i for i, nm in enumerate(names) if nm.startswith("random#")), None)
    return j if j is not None and all(nm.startswith("random#") for nm in names[j:]) else None


def _tpower_own(names: list) -> np.ndarray | None:
    """The columns started from tpower's own starts (:func:`_auto_starts`), never stopped as dominated
    (``ascent(exempt=)``): each then ascends as tpower's does, so auto's candidates hold tpower's points
    (the dominance stop alone lost one: random thin 12 x 1,019 data, k = 3, auto / tpower 0.9445)."""
    own = np.array([nm in _TPOWER_NAMES or nm.startswith("tpower#") for nm in names])
    return own if own.any() else None


_TPOWER_NAMES = frozenset({"rank1(u1)", "top-variance"})


class _Supports(dict):
    """The supports of the ascent's points by name, as bytes (``(x != 0).tobytes()``), each made when
    first asked for (the caller looks at the best few): from one comparison of all points."""

    def __init__(self, X: np.ndarray, names: list):
        super().__init__()
        self._on, self._col = None, {nm: j for j, nm in enumerate(names)}
        self._X = X

    def __missing__(self, name):
        if self._on is None:
            self._on = self._X.T != 0  # row j: column j's support (tobytes copies it in its logical order)
        value = self[name] = self._on[self._col[name]].tobytes()
        return value


class _SparseRows:
    """``cov.matvec`` of a :class:`~nspca_core.operators.sparse.SparseCov` holding CSR data, the same
    floats, with ``X W`` through the columns of X on W's nonzero rows only (the ascent's iterates use
    k of n rows): CSR sums each document's terms in the order of its features, and the terms left
    out are products with zeros, which do not change a sum.  The columns come from the operator's CSC
    copy (:meth:`~nspca_core.operators.sparse.SparseCov.csc`, made at the first product that uses it
    and kept: the next fits and the polish's support Gram matrices read it too; CSC columns sum in
    the same order: by feature, then document)."""

    def __init__(self, cov):
        self.cov = cov
        self.Xc = None  # the CSC copy, made at the first product that uses it

    @classmethod
    def of(cls, cov, k: int):
        """The product for an ascent at sparsity k, or None (other data, or k above n / 16: the supports'
        union then covers most features and the CSC copy costs more than the products save)."""
        from .operators.sparse import SparseCov

        if type(cov) is not SparseCov or 16 * k > cov.n or cov.X_sparse.format != "csr" \
                or cov.X_sparse.dtype != np.float64 or not cov.X_sparse.has_canonical_format:
            return None
        return cls(cov)

    def __call__(self, v: np.ndarray) -> np.ndarray:
        cov = self.cov
        if v.ndim != 2 or v.dtype != np.float64:
            return cov.matvec(v)
        rows = np.flatnonzero(np.abs(v) @ np.ones(v.shape[1]))
        if rows.size > cov.n // 4:
            return cov.matvec(v)
        if self.Xc is None:
            self.Xc = cov.csc()
        out = np.asarray(cov.X_sparse.T @ (self.Xc[:, rows] @ v[rows]))
        out /= cov.m  # in place: the floats of ``/`` and ``-``, without two more n x q arrays
        out -= np.multiply.outer(cov.mean, cov.mean @ v)
        return out


def _disagree(values: dict, rtol: float = 1e-9) -> bool:
    """True unless the cheap starts' best value was reached by at least half of them."""
    v = np.fromiter(values.values(), dtype=float)
    return np.count_nonzero(v >= v.max() * (1 - rtol)) < max(2, v.size // 2)

