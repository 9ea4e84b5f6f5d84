"""Public entry points: :func:`fit` (one component) and :func:`components` (several).

Both validate once at the front, build the covariance operator and dispatch to the
solvers (:func:`nspca_core.solve.fit_cov`, the peers), which assume clean input.
Solver modules are imported lazily so that a missing optional part only disables
its own method.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from ._common.options import check_options
from ._common.params import check
from ._common.scale import normalized, rescale
from ._cov import Cov
from ._covariance import _is_sparse, as_cov
from ._dask import as_dask_cov, is_dask_array
from ._dask_fit import check_dask_method as _check_dask_method, dask_info as _dask_info
from .deflation import STRATEGIES as DEFLATION_STRATEGIES, check_partial as _check_partial, deflate
from .methods import PEERS, SINGLE
from ._validation import InputError, as_rng, check_d, check_int, check_k
from .result import ComponentsResult, Result
from .solve import fit_cov, peer as _peer
from .solve import seed_param as _seed_param

__all__ = ["METHODS", "STRATEGIES", "fit", "components"]

METHODS = SINGLE  # from the method registry (nspca_core.methods)
STRATEGIES = (*DEFLATION_STRATEGIES, "bipartite", "quasi-orthogonal")

# keyword options of Dask data (nspca_core._dask.as_dask_cov)
_DASK_OPTIONS = ("client", "persist", "center")
# keyword options of the bipartite strategy (nspca_core.peers.bipartite.bipartite_components)
_BIPARTITE_OPTIONS = {"effort", "samples", "polish", "refine", "swap"}
# default minimum angle (degrees) between quasi-orthogonal EM components
_MIN_ANGLE = 75.0


# ----------------------------------------------------------------------------- validation
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


def _weighted(X, sample_weight):
    """Data whose covariance ``X_w^T X_w / m`` is the weighted ``sum_i w_i x_i x_i^T / sum_i w_i``
    (rows scaled by ``sqrt(w_i / mean(w))``; a copy).  X is used as given: center it with the
    same weights first.  None: X itself.  Sparse X: the weighted operator
    (:class:`nspca_core._weighted.WeightedSparseCov`, centered implicitly with the weighted mean,
    never densified)."""
    if sample_weight is None:
        return X
    if _is_sparse(X):  # centered implicitly, as sparse data always is: with the weighted mean
        from ._weighted import weighted_sparse_cov

        return weighted_sparse_cov(X, sample_weight)
    if X is None or isinstance(X, Cov):
        raise InputError("`sample_weight` needs data `X` (samples x features, dense or sparse); got "
                         + ("a covariance" if X is None else type(X).__name__))
    w = np.asarray(sample_weight, dtype=float)
    X = np.asarray(X)
    if w.shape != (X.shape[0],) or not np.all(np.isfinite(w)) or (w < 0).any() or w.sum() <= 0:
        raise InputError(f"`sample_weight` must hold {X.shape[0]} finite weights >= 0, not all zero; "
                         f"got shape {w.shape}")
    return X * np.sqrt(w / w.mean())[:, None]


def _operator(X, cov, sample_weight, options: dict) -> Cov:
    """The covariance operator of the input (:func:`nspca_core._covariance.as_cov`); a ``dask.array``
    becomes a :class:`~nspca_core._dask.DaskCov` (centered implicitly, never gathered) with the
    options ``client``, ``persist``, ``center`` (taken out of ``options``)."""
    given = {name: options.pop(name) for name in _DASK_OPTIONS if name in options}
    if is_dask_array(X):
        if sample_weight is not None:
            raise InputError("`sample_weight` needs in-memory data; got a dask.array.Array "
                             "(weight its rows before wrapping it, or pass NumPy data)")
        return as_dask_cov(X, **given)
    if given:
        raise InputError(f"option(s) {sorted(given)} apply to Dask data only (`X` a dask.array.Array); "
                         f"got `X` of type {type(X).__name__}")
    return as_cov(_weighted(X, sample_weight), cov)


def default_d(d, n: int, strategy: str | None = None, n_components: int = 1):
    """The rank used for ``d=None``: ``min(n_components, n)`` for the bipartite strategy (the
    paper's d = r), else ``min(3, n)`` (1- and 2-feature problems work with the default)."""
    if d is not None:
        return d
    return min(n_components, n) if strategy == "bipartite" else min(3, n)

# ----------------------------------------------------------------------------- single component
def fit(X=None, *, cov=None, k, method="auto", d=None, eps=0.1, seed=0, certify=True, callback=None,
        sample_weight=None, **options) -> Result:
    """One nonnegative, k-sparse principal component.

    Parameters
    ----------
    X : array_like of shape (m, n), optional
        Data used as given (center it first); the covariance is ``X^T X / m``.
        ``scipy.sparse`` data and a ``dask.array.Array`` are centered implicitly
        (never densified; Dask data runs on :class:`nspca_core._dask.DaskCov`
        with the options ``client``, ``persist`` — default "auto": the blocks
        stay in the workers' memory when they fit, see ``info["notes"]`` — and
        ``center``; methods "tpower", "em", "spannogram", "enet", "auto").
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
        ``sum_i w_i x_i x_i^T / sum_i w_i``.  Dense X is used as given (center
        it with the same weights first); ``scipy.sparse`` X is centered
        implicitly with the weighted mean (never densified).
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
    C = _operator(X, cov, sample_weight, options)
    n = C.n
    k = check_k(k, n)
    d = check_d(default_d(d, n), n)
    eps = check("eps", eps)
    method = check("method", method, options=METHODS)
    _check_dask_method(C, method)
    check_options(options, _allowed_options(method), f"method {method!r}")
    as_rng(seed)  # validates the seed without consuming a Generator
    check("callback", callback)
    certify = check("certify", certify)
    effort = options.pop("effort", "auto")
    C, factors = normalized(C)  # entries far from 1: a power-of-2 copy (scale-free answers)
    res = fit_cov(C, k, method, d, eps, seed, callback, options)
    if certify:
        from .certificates import certify_cov as _certify_cov

        cert = _certify_cov(C, k, x=res.x, effort=effort)
        res = replace(res, upper_bound=float(cert.upper_bound), bound_kind=cert.kind,
                      info={**res.info, "certificate": cert})
    res = replace(res, info=_dask_info(C, res.info))
    return replace(rescale(res, factors), seconds=time.perf_counter() - t0)


# ----------------------------------------------------------------------------- several components
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
    d : int in [1, n], optional
        Rank of the approximation, as in :func:`fit`; for "bipartite" the rank of
        the sketch ``A_d`` (default ``n_components``, the paper's d = r).  The d
        used is ``params["d"]``.
    eps, seed, callback, sample_weight, **options
        As in :func:`fit`; "bipartite" also takes ``samples`` (net points),
        ``polish``, ``refine``, ``swap``.
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
    C = _operator(X, cov, sample_weight, options)
    n = C.n
    r = check_int(n_components, "n_components", 1, n)
    ks = check("k_per_component", k, name="k", n_features=n, n_components=r)
    k = max(ks)
    d = check_d(default_d(d, n, strategy, r), n)
    eps = check("eps", eps)
    method = check("method", method, options=METHODS)
    as_rng(seed)
    check("callback", callback)
    check("strategy", strategy, options=STRATEGIES)
    _check_dask_method(C, method, strategy)
    where = f"strategy {strategy!r}" if strategy in ("bipartite", "quasi-orthogonal") else f"method {method!r}"
    check_options(options, _allowed_options(method, strategy) if strategy != "bipartite" else _BIPARTITE_OPTIONS,
                  where)
    from ._summary import components_result

    certify = check("certify", certify)
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

        cr = bipartite_components(C, r, k, eps=eps, seed=seed, nonneg=True, callback=callback, d=d,
                                  **{key: val for key, val in options.items() if key != "effort"})
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
        loadings, results, problems, found = deflate(C, ks, given, strategy=strategy, method=method, d=d, eps=eps,
                                                     seed=seed, options=options, fit=fit_cov, callback=callback,
                                                     keep_problems=certify)
        method_name = method
        info.update(found)
    if certify:
        from .certificates import certify_cov as _certify_cov

        effort = options.get("effort", "auto")
        certified = []
        for rj, prob, k in zip(results, problems, ks):
            # a kept (`partial`) component may hold more than this k: certified at its own sparsity
            kj = max(1, min(max(k, int(np.count_nonzero(rj.x))), prob.n))
            xj = rj.x if rj.x.size == prob.n else None
            cert = _certify_cov(prob, kj, x=xj, effort=effort)
            certified.append(replace(rj, upper_bound=float(cert.upper_bound), bound_kind=cert.kind,
                                     info={**rj.info, "certificate": cert}))
        results = certified
    out = components_result(C, loadings, method=method_name, strategy=strategy, params=params, t0=t0,
                            results=results, info=_dask_info(C, info))
    if certify and strategy in ("bipartite", "deflation-remove"):  # disjoint supports: the joint bound
        from .certificates.components import joint_bound

        out = replace(out, **joint_bound(C, loadings, ks, results, problems, options.get("effort", "auto")))
    return replace(rescale(out, factors), seconds=time.perf_counter() - t0)
