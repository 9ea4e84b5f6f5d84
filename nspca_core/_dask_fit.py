"""Nonnegative sparse PCA of a ``dask.array``: :func:`fit_dask` and :func:`components_dask`.

The public path is the front (``nspca_core.fit``, ``components``, ``certify`` with a
``dask.array``); the operator they run on is :class:`nspca_core._dask.DaskCov`.
"""

from __future__ import annotations

import importlib
import time
from dataclasses import replace

import numpy as np

from ._cov import Cov
from ._dask import DASK_METHODS, DASK_STRATEGIES, DaskCov, as_dask_cov
from ._dask_client import _scheduler_name
from .methods import REGISTRY
from ._validation import InputError, as_rng, check_d, check_k
from .solve import check_callback as _check_callback, check_eps as _check_eps, fit_cov
from .solve import seed_param as _seed_param

__all__ = ["fit_dask", "components_dask", "check_dask_method", "dask_info", "dask_entry", "tpower_dask"]


# --------------------------------------------------------------------------- the public front's Dask part
#: strategies of nspca_core.components on Dask data
FRONT_STRATEGIES = ("deflation-remove", "deflation-project", "bipartite")


def check_dask_method(C: Cov, method: str, strategy: str | None = None) -> None:
    """An InputError for a method or strategy the Dask operator does not run (C Dask data)."""
    if not getattr(C, "dask", False):
        return
    if method not in DASK_METHODS:
        raise InputError(f"`method` must be one of {', '.join(repr(m) for m in DASK_METHODS)} for Dask "
                         f"data; got {method!r}")
    if strategy is not None and strategy not in FRONT_STRATEGIES:
        raise InputError(f"`strategy` must be one of {', '.join(repr(s) for s in FRONT_STRATEGIES)} for "
                         f"Dask data; got {strategy!r}")


def dask_info(C: Cov, info: dict) -> dict:
    """``info`` with, for Dask data, ``info["dask"]`` (scheduler, persistence and its reason,
    factor) and the persistence reason among ``info["notes"]``."""
    if not getattr(C, "dask", False):
        return info
    persist = dict(C.persist_info)
    notes = [*info.get("notes", []), f"Dask data: {persist.get('reason', '')}"]
    return {**info, "notes": notes, "dask": {"scheduler": _scheduler_name(C.client), "persist": persist,
                                             "factor": dict(C.factor_info), "round_trips": C.round_trips}}


# --------------------------------------------------------------------------- solvers
def _dask_cov(X, center, client, persist) -> DaskCov:
    if isinstance(X, DaskCov):
        return X
    return as_dask_cov(X, center=center, client=client, persist=persist)


def dask_entry(method: str):
    """The Dask entry point of ``method`` from its registry field ``MethodSpec.dask``: a function
    ``f(cov, k, *, seed, callback, **options) -> Result``, or None when the method runs unchanged
    on the operator (through :func:`nspca_core.solve.fit_cov`)."""
    mode = REGISTRY[method].dask
    if mode == "operator":
        return None
    module, name = mode.split(":")
    return getattr(importlib.import_module(module), name)


#: options of :func:`tpower_dask`
_TPOWER_OPTIONS = ("nonneg", "restarts", "max_iter", "tol")


def tpower_dask(cov: DaskCov, k: int, *, seed=0, callback=None, **options):
    """:func:`nspca_core.peers.tpower.tpower_pca` with the leading eigenvector from
    :meth:`DaskCov.factor` (its own takes the m x m Gram or the n x n A): the same
    starts (same draws), the same batched ascent (:func:`nspca_core._common.ascent.ascent`).
    The Dask entry of "tpower" in :data:`nspca_core.methods.REGISTRY`."""
    from .peers.tpower import tpower_from, tpower_options

    unknown = sorted(set(options) - set(_TPOWER_OPTIONS))
    if unknown:
        raise InputError(f"unknown option(s) {unknown} for method 'tpower'; allowed: "
                         f"{sorted(_TPOWER_OPTIONS)}")
    t0 = time.perf_counter()
    rng = as_rng(seed)
    opts = tpower_options(options.get("nonneg", True), options.get("restarts", 10),
                          options.get("max_iter", 1000), options.get("tol", 1e-10))
    V, _ = cov.factor(1)
    nrm = np.linalg.norm(V[:, 0])
    if nrm > 0:
        v1 = V[:, 0] / nrm
    else:
        v1 = np.zeros(cov.n)
        v1[0] = 1.0
    return tpower_from(cov, v1, k, rng, t0=t0, seed=seed, callback=callback, stacklevel=3, **opts)


def fit_dask(X, *, k, method="tpower", d=3, eps=0.1, seed=0, center=True, client=None,
             persist="auto", callback=None, **options):
    """One nonnegative, k-sparse principal component of a ``dask.array`` (or a :class:`DaskCov`).

    Parameters
    ----------
    X : dask.array.Array (m, n) or DaskCov
        Data chunked along the samples (dense or sparse chunks; see
        :func:`as_dask_cov`).  Pass a :class:`DaskCov` to reuse its means,
        diagonal and factors across calls.
    k : int in [1, n]
    method : {"tpower", "em", "spannogram", "enet", "auto"}, default "tpower"
        ``"tpower"``/``"em"``: matrix–vector products only (one Dask graph per
        iteration, n x restarts numbers each way).  ``"spannogram"``,
        ``"enet"``: on the n x d factor, on the client.  ``"auto"``: as
        :func:`nspca_core.fit` (its k <= 2 branch needs the dense A: small n only).
    d : int, default 3
        Rank of the factor for "spannogram", "enet", "auto".
    eps : float in (0, 1), default 0.1
    seed : int, None or Generator, default 0
    center : bool, default True
        Implicit centering (ignored when X is a DaskCov).
    client : distributed.Client, optional
        The cluster: ``distributed.Client("tcp://host:8786")`` for a running
        scheduler at that address; None for Dask's default.
    persist : bool or "auto", default "auto"
        Keep the blocks in the workers' memory between passes; "auto": when they
        fit (:func:`nspca_core._dask.decide_persist`; its reason in ``info["dask"]``).
    callback : callable(done, total), optional
    **options
        Of the method, as in :func:`nspca_core.fit` (``restarts``,
        ``max_iter``, ``tol``, ``nonneg``, ``samples``).

    Returns
    -------
    Result
        As :func:`nspca_core.fit` with ``certify=False`` on the same data
        centered in memory; ``info["dask"]`` holds the scheduler address and
        the factor's convergence (``factor_info``).

    Examples
    --------
    >>> import dask.array as da, distributed                          # doctest: +SKIP
    >>> client = distributed.Client("tcp://scheduler-host:8786")     # doctest: +SKIP
    >>> X = da.from_zarr("s3://bucket/counts.zarr")                  # doctest: +SKIP
    >>> res = fit_dask(X, k=10, method="tpower", client=client)      # doctest: +SKIP
    """
    t0 = time.perf_counter()
    cov = _dask_cov(X, center, client, persist)
    k = check_k(k, cov.n)
    d = check_d(d, cov.n)
    eps = _check_eps(eps)
    if method not in DASK_METHODS:
        raise InputError(f"`method` must be one of {', '.join(repr(m) for m in DASK_METHODS)} "
                         f"for Dask data; got {method!r}")
    as_rng(seed)
    _check_callback(callback)
    entry = dask_entry(method)
    if entry is not None:
        r = entry(cov, k, seed=seed, callback=callback, **options)
        params = {"k": k, "method": method, "d": d, "eps": eps, "seed": _seed_param(seed)}
        res = replace(r, params={**params, **r.params})
    else:
        res = fit_cov(cov, k, method, d, eps, seed, callback, dict(options))
    info = {**res.info, "dask": {"scheduler": _scheduler_name(cov.client),
                                 "factor": dict(cov.factor_info), "round_trips": cov.round_trips,
                                 "persist": dict(cov.persist_info)}}
    return replace(res, info=info, seconds=time.perf_counter() - t0)


def components_dask(X, *, n_components, k, strategy="bipartite", method="tpower", d=None,
                    eps=0.1, seed=0, center=True, client=None, persist="auto", callback=None,
                    **options):
    """Several nonnegative k-sparse components with disjoint supports, of a ``dask.array``.

    Parameters
    ----------
    X : dask.array.Array (m, n) or DaskCov
    n_components : int in [1, n]
    k : int in [1, n]
        Nonzeros per component.
    strategy : {"bipartite", "deflation"}, default "bipartite"
        ``"bipartite"``: :func:`nspca_core.peers.bipartite.bipartite_components`
        (Asteris et al. 2015; the net and the matchings on the n x d factor on
        the client, candidates scored by Dask products) — what
        :func:`nspca_core.components` does with ``strategy="bipartite"``.
        ``"deflation"``: :func:`~nspca_core.deflation.deflation_components`
        with ``method`` (the paper's Table 2 baselines; removed features are
        views, nothing is copied).
    method : {"tpower", "em", "spannogram"}, default "tpower"
        For ``"deflation"``.
    d : int, optional
        Rank of the factor (default: n_components for "bipartite", 5 for "deflation").
    eps, seed, center, client, persist, callback
        As in :func:`fit_dask`.
    **options
        ``samples``, ``polish``, ``refine`` (bipartite); ``samples``, ``max_iter`` (deflation).

    Returns
    -------
    ComponentsResult
        ``info["dask"]`` as in :func:`fit_dask`.
    """
    from .deflation import deflation_components
    from .peers.bipartite import bipartite_components

    t0 = time.perf_counter()
    cov = _dask_cov(X, center, client, persist)
    if strategy not in DASK_STRATEGIES:
        raise InputError(f"`strategy` must be one of {', '.join(repr(s) for s in DASK_STRATEGIES)} "
                         f"for Dask data; got {strategy!r}")
    if strategy == "bipartite":
        allowed = {"samples", "polish", "refine"}
    else:
        allowed = {"samples", "max_iter"}
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise InputError(f"unknown option(s) {unknown} for strategy {strategy!r}; allowed: "
                         f"{sorted(allowed)}")
    if strategy == "bipartite":
        cr = bipartite_components(cov, n_components, k, eps=eps, seed=seed, nonneg=True, d=d,
                                  callback=callback, **options)
    else:
        cr = deflation_components(cov, n_components, k, method=method, d=5 if d is None else d,
                                  seed=seed, callback=callback, **options)
    info = {**cr.info, "dask": {"scheduler": _scheduler_name(cov.client),
                                "factor": dict(cov.factor_info), "round_trips": cov.round_trips,
                                "persist": dict(cov.persist_info)}}
    return replace(cr, info=info, seconds=time.perf_counter() - t0)
