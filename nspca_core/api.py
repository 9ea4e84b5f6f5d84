"""Public entry points: :func:`fit` (one component) and :func:`components` (several).

Both validate once at the front and dispatch to the solvers (spannogram,
ε-net, peers), which assume clean input.  Solver modules are imported lazily
so that a missing optional part only disables its own method.
"""

from __future__ import annotations

import math
import numbers
import time
from dataclasses import replace

import numpy as np

from ._common.options import check_options
from ._common.scale import normalized, rescale
from ._common.ascent import ascent, polish, project, random_starts, cov_key
from ._common.pairs import opt_pairs
from ._cov import Cov, ProjectedCov, _is_sparse, as_cov
from .methods import PEERS, SINGLE
from ._validation import InputError, as_rng, check_d, check_int, check_k
from .rank1 import _rank1_nspca
from .result import ComponentsResult, Result

__all__ = ["METHODS", "STRATEGIES", "fit", "components"]

METHODS = SINGLE  # from the method registry (nspca_core.methods)
STRATEGIES = ("deflation-remove", "deflation-project", "bipartite", "quasi-orthogonal")

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
# default minimum angle (degrees) between quasi-orthogonal EM components
_MIN_ANGLE = 75.0


# ----------------------------------------------------------------------------- validation
def _check_eps(eps) -> float:
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not 0.0 < float(eps) < 1.0:
        raise InputError(f"`eps` must be a float in (0, 1); got {eps!r}")
    return float(eps)


def _check_method(method) -> str:
    if method not in METHODS:
        raise InputError(f"`method` must be one of {', '.join(repr(m) for m in METHODS)}; "
                         f"got {method!r}")
    return method


def _check_callback(callback):
    if callback is not None and not callable(callback):
        raise InputError(f"`callback` must be callable (done, total) -> None or None; got {callback!r}")


def _peer(method: str):
    """The peer function of a validated method name (:data:`nspca_core.peers.PEER_METHODS`)."""
    from .peers import PEER_METHODS

    return PEER_METHODS[method]


def _allowed_options(method: str, strategy: str | None = None) -> set:
    """The keyword options ``fit``/``components`` accept for a method (and strategy)."""
    allowed = {"effort"}
    if method in ("auto", "enet"):
        allowed.add("samples")
    if method in PEERS:
        allowed.update(_peer(method).options)
    if strategy == "quasi-orthogonal":
        allowed.update({"min_angle", "restarts", "renormalize", "tol", "max_iter"})
    return allowed


def _check_ks(k, r: int, n: int) -> tuple:
    """``k`` as one sparsity per component (an int is repeated)."""
    if isinstance(k, (list, tuple, np.ndarray)):
        if len(k) != r:
            raise InputError(f"`k` must be an int or a sequence of n_components={r} ints; got {len(k)} "
                             f"values")
        return tuple(check_k(kj, n) for kj in k)
    return (check_k(k, n),) * r


def _check_partial(partial, n: int, r: int, strategy: str) -> np.ndarray:
    """Loadings (n, j) of components already found, validated; (n, 0) for None."""
    if partial is None:
        return np.zeros((n, 0))
    L = partial.loadings if isinstance(partial, ComponentsResult) else partial
    L = np.asarray(L, dtype=float)
    if L.ndim == 1:
        L = L[:, None]
    if L.ndim != 2 or L.shape[0] != n or not np.all(np.isfinite(L)) or (L < 0).any():
        raise InputError(f"`partial` must be a ComponentsResult or nonnegative loadings of shape "
                         f"({n}, j); got shape {L.shape}")
    if L.shape[1] > r:
        raise InputError(f"`partial` holds {L.shape[1]} components, more than n_components={r}")
    if strategy not in ("deflation-remove", "deflation-project"):
        raise InputError(f"`partial` continues a deflation; strategy {strategy!r} finds all "
                         f"components jointly")
    norms = np.linalg.norm(L, axis=0)
    if (norms == 0).any():
        raise InputError("`partial` has a zero column; every component must be a unit vector")
    return L / norms


def _weighted(X, sample_weight):
    """Data whose covariance ``X_w^T X_w / m`` is the weighted ``sum_i w_i x_i x_i^T / sum_i w_i``
    (rows scaled by ``sqrt(w_i / mean(w))``; a copy).  X is used as given: center it with the
    same weights first.  None: X itself."""
    if sample_weight is None:
        return X
    if X is None or isinstance(X, Cov) or _is_sparse(X):
        raise InputError("`sample_weight` needs dense data `X` (samples x features); got "
                         + ("a covariance" if X is None else type(X).__name__))
    w = np.asarray(sample_weight, dtype=float)
    X = np.asarray(X)
    if w.shape != (X.shape[0],) or not np.all(np.isfinite(w)) or (w < 0).any() or w.sum() <= 0:
        raise InputError(f"`sample_weight` must hold {X.shape[0]} finite weights >= 0, not all zero; "
                         f"got shape {w.shape}")
    return X * np.sqrt(w / w.mean())[:, None]


def _default_d(d, n: int):
    """``d=None``: ``min(3, n)`` (1- and 2-feature problems work with the default)."""
    return min(3, n) if d is None else d


def _seed_param(seed):
    return "generator" if isinstance(seed, np.random.Generator) else seed


# ----------------------------------------------------------------------------- single component
def _make_result(cov, x, V, method, params, t0, info, converged=True) -> Result:
    x = np.clip(np.asarray(x, dtype=float), 0.0, None)
    nx = np.linalg.norm(x)
    if nx > 0:
        x = x / nx
    support = np.flatnonzero(x)
    var = cov.quad(x)
    if V is not None:
        z = V[support].T @ x[support]
        vl = float(z @ z)
    else:
        vl = var
    return Result(x=x, support=support, variance=float(var), variance_lowrank=vl, method=method,
                  params=params, seconds=time.perf_counter() - t0, converged=converged, info=info)


def _exact_d3_cheap(n: int) -> bool:
    return 8 * math.comb(n + 1, 3) <= _EXACT_D3_BUDGET


def _fit_cov(cov: Cov, k: int, method: str, d: int, eps: float, seed, callback, options) -> Result:
    """Solve on a validated Cov without certification.  ``info['opt_d']`` holds an exact OPT_d
    (with its d) when one was computed, for the paper bound."""
    t0 = time.perf_counter()
    n = cov.n
    params = {"k": k, "method": method, "d": d, "eps": eps, "seed": _seed_param(seed)}
    if method in PEERS:
        r = _peer(method)(cov, k, seed=seed, callback=callback, **options)
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
        r = enet_nspca(V, k, eps=eps, seed=seed, samples=samples, callback=callback)
        info = {**r.info, "eigenvalues": eig}
        params["samples"] = r.params["samples"]
        return _make_result(cov, r.x, V, "enet", {**params}, t0, info)
    return _fit_auto(cov, k, d, eps, seed, callback, options, params, t0)


fit_cov = _fit_cov  # its name for the certificates (lower bounds) and the Dask front


def _auto_starts(cov: Cov, V: np.ndarray, k: int, key: np.ndarray, seed) -> dict:
    """The cheap starts of "auto": those of the truncated power method with the same seed
    (so "auto" is never below "tpower"), the rank-1 solutions of the other top eigenvectors,
    and ``A r`` for random signed r drawn per rank of ``key`` (order-free)."""
    from .peers.tpower import tpower_starts

    rng = as_rng(seed)
    T = tpower_starts(V[:, 0], k, key, rng, _TPOWER_RESTARTS)
    starts = {"rank1(u1)": T[:, 0], "top-variance": T[:, 1]}
    starts.update({f"tpower#{i}": T[:, i] for i in range(2, T.shape[1])})
    starts.update({f"rank1(u{j + 1})": _rank1_nspca(V[:, j], k) for j in range(1, V.shape[1])})
    R = cov.matvec(random_starts(key, rng, _AUTO_RANDOM_STARTS, nonneg=False))
    starts.update({f"random#{i + 1}": R[:, i] for i in range(R.shape[1])})
    return starts


def _enet_starts(V: np.ndarray, k: int, d: int, eps: float, seed, samples, info: dict) -> dict:
    """The best distinct candidates of the ε-net (Alg. 3) on the rank-d factor."""
    from .enet import _directions, _enet_top, enet_samples

    N = samples or max(enet_samples(d, eps, V.shape[0]), _AUTO_MIN_SAMPLES)
    # the same directions as enet_nspca(V, k, eps=eps, seed=seed, samples=N) draws
    C = _directions(V, eps, seed, N)
    info["enet_samples"] = int(C.shape[0])
    return {f"enet(d={d})#{i + 1}": x for i, x in enumerate(_enet_top(V, k, C, _AUTO_ENET_STARTS))}


def _fit_auto(cov, k, d, eps, seed, callback, options, params, t0) -> Result:
    """Many cheap starts, one batched ascent on the true A, full polish of the best few.

    ``k <= 2`` is solved exactly (all pairs).  Otherwise the starts are those of
    :func:`_auto_starts`, plus the exact spannogram's answer when it is cheap
    (d <= 2 on small n) and the ε-net's best candidates when the cheap starts
    disagree or ``samples`` is given.  All run through one batched ascent
    (:func:`nspca_core._common.ascent.ascent`); the best distinct local optima
    are then polished with support reweighting.
    """
    n = cov.n
    V, eig = cov.factor(d)
    info: dict = {"eigenvalues": eig, "exact": False}
    key = cov_key(cov)
    if k <= 2:
        low = cov.quads(project(np.column_stack([V, cov.diag()]), k, key)).max()
        opt, x = opt_pairs(cov, k, lower=float(low))
        info.update({"starts": {"pairs": opt}, "polished": {"pairs": opt}, "winner": "pairs",
                     "polish_iterations": 0, "exact": True, "opt": opt})
        return _make_result(cov, x, V, "auto", params, t0, info)
    steps = 3

    def tick(step):
        if callback is not None:
            callback(step, steps)

    starts: dict = {}
    # the data's rank when it is at most d (the spectrum beyond is zero to rounding): then
    # A = V V^T and the exact spannogram is the optimum itself
    rank = int(np.count_nonzero(eig[:d] > _RANK_TOL * n * eig[0])) if eig[d] <= _RANK_TOL * n * eig[0] \
        else None
    if rank is not None or (d <= 2 and n <= _EXACT_D2_MAX_N) or (d == 3 and _exact_d3_cheap(n)):
        from .spannogram import lowrank_nspca

        dd = max(rank, 1) if rank is not None else d
        r = lowrank_nspca(V[:, :dd], k)
        starts[f"spannogram(d={dd})"] = r.x
        info["opt_d"] = (dd, float(r.variance_lowrank))
        if rank is not None:  # A = V V^T: the spannogram's answer is optimal, nothing to polish
            val = cov.quad(r.x)
            info.update({"starts": {f"spannogram(d={dd})": val}, "polished": {f"spannogram(d={dd})": val},
                         "winner": f"spannogram(d={dd})", "polish_iterations": 0, "exact": True})
            return _make_result(cov, r.x, V, "auto", params, t0, info)
    starts.update(_auto_starts(cov, V, k, key, seed))
    tick(1)
    before, after, ascended = _ascend(cov, starts, k, key)
    if options.get("samples") or (_AUTO_ENET and _disagree(after)):
        more = _enet_starts(V, k, d, eps, seed, options.get("samples"), info)
        b2, a2, x2 = _ascend(cov, more, k, key)
        before.update(b2)
        after.update(a2)
        ascended.update(x2)
    tick(2)
    iters = 0
    distinct: dict[bytes, str] = {}
    for name in sorted(after, key=lambda nm: -after[nm]):
        distinct.setdefault(np.flatnonzero(ascended[name]).tobytes(), name)
    best_name, best_x, best_f = None, None, -np.inf
    top = max(after.values())
    for name in list(distinct.values())[:_AUTO_FULL_POLISH]:
        if after[name] < top * _AUTO_POLISH_WITHIN and best_x is not None:
            break  # far below the best: a polish (small gains) will not overtake it
        x, f, it = polish(cov, ascended[name], k, key=key)
        iters += it
        after[name] = max(after[name], f)
        if f > best_f:
            best_name, best_x, best_f = name, x, f
    tick(3)
    info.update({"starts": before, "polished": after, "winner": best_name, "polish_iterations": iters})
    return _make_result(cov, best_x, V, "auto", params, t0, info)


def _ascend(cov: Cov, starts: dict, k: int, key: np.ndarray):
    """One batched ascent from every start: ``(value before, value after, point after)`` by name."""
    names = list(starts)
    X0 = np.column_stack([np.asarray(starts[nm], dtype=float) for nm in names])
    before = dict(zip(names, cov.quads(project(X0, k, key))))
    r = ascent(cov.matvec, X0, k, key=key)
    after = {nm: float(max(v, before[nm])) for nm, v in zip(names, r.values)}
    return before, after, {nm: r.X[:, j] for j, nm in enumerate(names)}


def _disagree(values: dict, rtol: float = 1e-9) -> bool:
    """True unless the cheap starts' best value was reached by at least half of them."""
    v = np.fromiter(values.values(), dtype=float)
    return np.count_nonzero(v >= v.max() * (1 - rtol)) < max(2, v.size // 2)


def fit(X=None, *, cov=None, k, method="auto", d=None, eps=0.1, seed=0, certify=True, callback=None,
        sample_weight=None, **options) -> Result:
    """One nonnegative, k-sparse principal component.

    Parameters
    ----------
    X : array_like of shape (m, n), optional
        Data used as given (center it first); the covariance is ``X^T X / m``.
    cov : array_like of shape (n, n), optional
        The covariance itself.  Give exactly one of X, cov.
    k : int in [1, n]
        Maximum number of nonzeros.
    method : str, default "auto"
        One of :data:`METHODS`: "spannogram" (exact on the rank-d
        approximation, Alg. 1), "enet" (Alg. 3), the peers "em", "tpower",
        "zass", "sklearn-spca", "nmf", or "auto" (below).
    d : int in [1, n], optional
        Rank of the approximation for "spannogram", "enet" and "auto";
        default ``min(3, n)``.
    eps : float in (0, 1), default 0.1
        ε-net accuracy.
    seed : int, None or numpy.random.Generator, default 0
    certify : bool, default True
        Fill ``upper_bound``/``bound_kind`` (from :mod:`nspca_core.certificates`, or the
        paper's bound ``min(λ1, OPT_d + λ_{d+1})`` when that module is absent).
    callback : callable(done, total), optional
    sample_weight : array_like of shape (m,), optional
        Weights of the samples (R ``nsprcomp``'s ``omega``): the covariance is
        ``sum_i w_i x_i x_i^T / sum_i w_i``.  Dense X only, used as given
        (center it with the same weights first).
    **options
        Passed to the peer method (e.g. ``restarts``), ``samples`` for the ε-net,
        ``effort`` for the certificate.  An unknown name raises
        :class:`~nspca_core._common.options.UnknownOptionError` (a ``TypeError``
        and an :class:`~nspca_core.InputError`) naming it and the allowed ones.

    Returns
    -------
    Result
        ``variance = x^T A x`` on the true covariance (through X when thin),
        ``variance_lowrank = ||V^T x||^2`` for the V used (equal to variance
        for peers); ``seconds`` includes certification.

    Notes
    -----
    "auto": the exact spannogram (Asteris, Papailiopoulos & Dimakis, ICML 2014,
    Alg. 1) when cheap (d <= 2, or d = 3 with ``8 C(n+1, 3) <= 2e5``, n <= 53), else the
    ε-net (Alg. 3, at least 1024 directions) plus the exact d = 2 optimum as
    an extra start; further starts are the rank-1 solution of the top
    eigenvector and the "tpower"/"em" peers when present.  Every start is
    polished on the true A by the monotone ascent ``x <- rank1_nspca(A x, k)``
    (proof in ``_ascent``) and by re-optimizing the weights on the support
    (the top eigenvector of ``A_JJ`` when it is one-signed), and the best is
    returned: never worse than any start, in particular than the "spannogram"
    or "enet" answer with the same d, eps, seed.
    """
    t0 = time.perf_counter()
    C = as_cov(_weighted(X, sample_weight), cov)
    n = C.n
    k = check_k(k, n)
    d = check_d(_default_d(d, n), n)
    eps = _check_eps(eps)
    method = _check_method(method)
    check_options(options, _allowed_options(method), f"method {method!r}")
    as_rng(seed)  # validates the seed without consuming a Generator
    _check_callback(callback)
    if not isinstance(certify, bool):
        raise InputError(f"`certify` must be True or False; got {certify!r}")
    effort = options.pop("effort", "auto")
    C, factors = normalized(C)  # entries far from 1: a power-of-2 copy (scale-free answers)
    res = _fit_cov(C, k, method, d, eps, seed, callback, options)
    if certify:
        from .certificates import certify_cov as _certify_cov

        cert = _certify_cov(C, k, x=res.x, effort=effort)
        res = replace(res, upper_bound=float(cert.upper_bound), bound_kind=cert.kind,
                      info={**res.info, "certificate": cert})
    return replace(rescale(res, factors), seconds=time.perf_counter() - t0)


# ----------------------------------------------------------------------------- several components
def _sub_cov(cov: Cov, idx: np.ndarray) -> Cov:
    if cov.X is not None:
        return Cov(cov.X[:, idx], None)
    if hasattr(cov, "columns"):  # operators (sparse, projected): no dense n x n
        return cov.columns(idx)
    return Cov(None, cov.dense()[np.ix_(idx, idx)])


def _project_out(cov: Cov, x: np.ndarray) -> Cov:
    """Mackey's projection deflation ``A <- (I - x x^T) A (I - x x^T)``; through X when data."""
    if cov.X is not None:
        X = cov.X
        return Cov(X - np.outer(X @ x, x), None)
    if cov._A is None:  # an operator (sparse, distributed, already projected): stay one
        return ProjectedCov(cov, x)
    A = cov.dense()
    Ax = A @ x
    f = float(x @ Ax)
    A2 = A - np.outer(x, Ax) - np.outer(Ax, x) + f * np.outer(x, x)
    return Cov(None, 0.5 * (A2 + A2.T))


def components(X=None, *, cov=None, n_components, k, method="auto", strategy="deflation-remove", d=None,
               eps=0.1, seed=0, certify=False, callback=None, sample_weight=None, partial=None,
               **options) -> ComponentsResult:
    """Several nonnegative, k-sparse components.

    Parameters
    ----------
    X, cov
        Data (m x n, used as given) or covariance (n x n); exactly one.
    n_components : int in [1, n]
    k : int in [1, n], or a sequence of n_components of them
        Nonzeros per component; a sequence gives each component its own
        sparsity (deflation strategies; R ``nsprcomp``'s ``k``).
    method : str, default "auto"
        Single-component method (one of :data:`METHODS`) for the deflation strategies.
    strategy : str, default "deflation-remove"
        - "deflation-remove": each component is solved on the features not used by
          earlier ones (orthogonal, disjoint supports; the paper's CBCL Fig. 3).
          When fewer than k features remain, all remaining ones are allowed (noted
          in ``info``); when none remain, fewer components are returned.
        - "deflation-project": Mackey's projection deflation
          ``A <- (I - x x^T) A (I - x x^T)`` (through ``X <- X (I - x x^T)`` for data).
        - "bipartite": joint disjoint supports by bipartite matchings
          (:func:`nspca_core.peers.bipartite.bipartite_components`, nonnegative variant).
        - "quasi-orthogonal": EM with a minimum angle between components
          (:func:`nspca_core.peers.em.em_components`; option ``min_angle`` in degrees,
          default 75).
    d, eps, seed, callback, sample_weight, **options
        As in :func:`fit`.
    partial : ComponentsResult or ndarray (n, j), optional
        Components already found (a previous result, or its loadings): they are
        kept as the first j components and the deflation continues from them
        (R ``nsprcomp``'s ``partial_model``), so ``n_components - j`` new ones
        are computed.  Deflation strategies only.
    certify : bool, default False
        Certify each component on the problem it solved: for the deflation
        strategies the (reduced or deflated) covariance it was found on, for
        the joint strategies the original covariance (a bound on the best
        single component).  Fills ``results[j].upper_bound``/``bound_kind``.

    Returns
    -------
    ComponentsResult
        ``variance``, ``cumulative_variance`` and ``additional_variance`` are
        computed on the ORIGINAL covariance (:func:`nspca_core._summary.variance_summary`).
    """
    t0 = time.perf_counter()
    C = as_cov(_weighted(X, sample_weight), cov)
    n = C.n
    r = check_int(n_components, "n_components", 1, n)
    ks = _check_ks(k, r, n)
    k = max(ks)
    d = check_d(_default_d(d, n), n)
    eps = _check_eps(eps)
    method = _check_method(method)
    as_rng(seed)
    _check_callback(callback)
    if strategy not in STRATEGIES:
        raise InputError(f"`strategy` must be one of {', '.join(repr(s) for s in STRATEGIES)}; "
                         f"got {strategy!r}")
    where = f"strategy {strategy!r}" if strategy in ("bipartite", "quasi-orthogonal") else f"method {method!r}"
    check_options(options, _allowed_options(method, strategy) if strategy != "bipartite" else {"effort"},
                  where)
    from ._summary import variance_summary

    if not isinstance(certify, bool):
        raise InputError(f"`certify` must be True or False; got {certify!r}")
    if len(set(ks)) > 1 and strategy in ("bipartite", "quasi-orthogonal"):
        raise InputError(f"a sparsity per component (`k`={list(ks)}) needs a deflation strategy "
                         f"('deflation-remove' or 'deflation-project'); got strategy={strategy!r}")
    given = _check_partial(partial, n, r, strategy)
    C, factors = normalized(C)  # entries far from 1: a power-of-2 copy (scale-free answers)
    params = {"n_components": r, "k": ks[0] if len(set(ks)) == 1 else list(ks), "method": method,
              "strategy": strategy, "d": d, "eps": eps, "seed": _seed_param(seed), "certify": certify}
    info: dict = {}
    results: list[Result] = []
    problems: list[Cov] = []  # the covariance each component was solved on
    if strategy == "bipartite":
        from .peers.bipartite import bipartite_components

        cr = bipartite_components(C, r, k, eps=eps, seed=seed, nonneg=True, callback=callback)
        loadings, results, method_name = cr.loadings, list(cr.results), "bipartite"
        problems = [C] * len(results)
        info.update(cr.info)
    elif strategy == "quasi-orthogonal":
        from .peers.em import em_components

        extra = {key: val for key, val in options.items()
                 if key not in ("min_angle", "restarts", "effort", "samples")}
        cr = em_components(C, r, k, nonneg=True, min_angle=options.get("min_angle", _MIN_ANGLE),
                           seed=seed, restarts=options.get("restarts", 10), callback=callback, **extra)
        loadings, results, method_name = cr.loadings, list(cr.results), "em"
        problems = [C] * len(results)
        info.update(cr.info)
    else:
        cols = []
        method_name = method
        sub_opts = {key: val for key, val in options.items() if key != "effort"}
        if method == "nmf" and strategy == "deflation-project":
            # NMF factors the raw nonnegative data, which projection deflation never changes
            raise InputError("method 'nmf' works on the raw nonnegative data, which projection "
                             "deflation does not change; use strategy='deflation-remove'")
        cur = C
        remaining = np.arange(n)
        for x in given.T:  # components already found: kept, and deflated as the loop would
            cols.append(x)
            results.append(_make_result(C, x, None, "given", {"k": int(np.count_nonzero(x))},
                                        time.perf_counter(), {}))
            problems.append(C)
            if strategy == "deflation-remove":
                remaining = np.setdiff1d(remaining, np.flatnonzero(x))
            else:
                cur = _project_out(cur, x)
        for j in range(given.shape[1], r):
            k = ks[j]
            if strategy == "deflation-remove":
                if remaining.size == 0:
                    info["stopped_early"] = (f"all {n} features were used by the first {j} "
                                             f"components; returned {j} instead of {r}")
                    break
                kj = min(k, remaining.size)
                if kj < k:
                    info.setdefault("notes", []).append(
                        f"component {j + 1}: only {remaining.size} unused features remained "
                        f"(< k={k}); it uses all of them")
                sub = _sub_cov(C, remaining)
                dj = min(d, remaining.size)
                opts_j = dict(sub_opts)
                if opts_j.get("data") is not None:  # raw data for NMF: the same features
                    opts_j["data"] = np.asarray(opts_j["data"])[:, remaining]
                rj = _fit_cov(sub, kj, method, dj, eps, seed, None, opts_j)
                problems.append(sub)
                x = np.zeros(n)
                x[remaining] = rj.x
                remaining = np.setdiff1d(remaining, remaining[rj.support])
            else:
                rj = _fit_cov(cur, k, method, d, eps, seed, None, dict(sub_opts))
                problems.append(cur)
                x = np.asarray(rj.x, dtype=float)
                cur = _project_out(cur, x)
            results.append(rj)
            cols.append(x)
            if callback is not None:
                callback(j + 1, r)
        loadings = np.column_stack(cols) if cols else np.zeros((n, 0))
    if certify:
        from .certificates import certify_cov as _certify_cov

        effort = options.get("effort", "auto")
        certified = []
        for rj, prob, k in zip(results, problems, ks):
            kj = max(1, min(k, prob.n))
            xj = rj.x if rj.x.size == prob.n else None
            cert = _certify_cov(prob, kj, x=xj, effort=effort)
            certified.append(replace(rj, upper_bound=float(cert.upper_bound), bound_kind=cert.kind,
                                     info={**rj.info, "certificate": cert}))
        results = certified
    variance, cumulative, additional = variance_summary(C, loadings)
    supports = [np.flatnonzero(loadings[:, j]) for j in range(loadings.shape[1])]
    out = ComponentsResult(loadings=loadings, variance=variance, cumulative_variance=cumulative,
                           additional_variance=additional, supports=supports, method=method_name,
                           strategy=strategy, params=params, seconds=time.perf_counter() - t0,
                           results=results, info=info)
    return replace(rescale(out, factors), seconds=time.perf_counter() - t0)
