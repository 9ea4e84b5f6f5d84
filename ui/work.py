"""The app's long computations as background jobs (:mod:`ui.jobs`), one unit at a time.

Each function submits (or finds) the job for its key and returns the
:class:`ui.jobs.Job`; pages read ``job.view().results`` as the units finish.
Keys start with the task and the dataset key of :func:`ui.live.data_key`, so
any page of any session showing the same data reuses the same work.

What a unit stores is small on purpose (vectors of length n and scalars, never
an n × n matrix): the registry keeps results for the life of the server.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from nspca_core import methods as registry
from ui import live
from ui.compute import Unavailable, available_methods, digest

__all__ = ["SLOW_METHODS", "path_job", "certify_job", "fit_job", "best_x"]

# Methods of cost "slow" in the registry (they search a penalty for k nonzeros: tens of seconds
# on CBCL/MLL): heavy jobs.
SLOW_METHODS = registry.with_cost("slow")


def _check_method(method: str) -> None:
    if method not in available_methods():
        raise Unavailable(f"method {method!r} is not in nspca_core.api.METHODS={available_methods()}")


def _fit(X, dkey, method, d, eps, seed, raw, k, ctx) -> dict:
    return ctx.run("ui.units.fit_unit", X, dkey, k=int(k), method=method, d=int(d), eps=float(eps),
                   seed=int(seed), raw=raw if method == "nmf" else None)


def path_job(X: np.ndarray, dkey: str, method: str, ks: Sequence[int], *, d: int, eps: float,
             seed: int, raw: np.ndarray | None = None, title: str = ""):
    """``fit(X, k, method, certify=False)`` for every k in ``ks`` (units: k).

    Each unit is a dict ``x, support, variance (xᵀAx), lowrank (‖Vᵀx‖²),
    seconds, converged``.
    """
    _check_method(method)
    key = ("path", dkey, method, int(d), float(eps), int(seed))

    def work(k, ctx):
        return _fit(X, dkey, method, d, eps, seed, raw, k, ctx)

    return live.submit(key, title or f"{method} path", [int(k) for k in ks], work,
                       heavy=method in SLOW_METHODS)


def fit_job(X: np.ndarray, dkey: str, k: int, methods: Sequence[str], *, d: int, eps: float,
            seed: int, raw: np.ndarray | None = None, title: str = ""):
    """Every method at one k (units: method names); each unit as in :func:`path_job`.

    A method the core does not have fails its job with a clear message; the
    page asks for the available ones only.
    """
    key = ("fit", dkey, int(k), int(d), float(eps), int(seed))

    def work(method, ctx):
        _check_method(method)
        return _fit(X, dkey, method, d, eps, seed, raw, k, ctx)

    heavy = any(m in SLOW_METHODS for m in methods)
    return live.submit(key, title or f"methods at k = {k}", list(methods), work, heavy=heavy)


def certify_job(X: np.ndarray, dkey: str, ks: Sequence[int], *,
                start: Callable[[int], np.ndarray | None] | None = None, title: str = ""):
    """``certify(X, k=k, x=start(k))`` for every k in ``ks``, in that order (units: k).

    ``start(k)`` gives the best known answer at k when the unit starts (it
    only raises the certificate's lower bound; the upper bound does not depend
    on it, so the job is keyed by the data alone).  Each unit is a dict
    ``upper, lower, kind, optimal, probabilistic, x``.
    """
    key = ("certify", dkey)

    def work(k, ctx):
        x0 = start(int(k)) if start is not None else None
        return ctx.run("ui.units.certify_unit", X, dkey, k=int(k), x=x0)

    return live.submit(key, title or "certificates", [int(k) for k in ks], work, heavy=True)


def certify_one_job(X: np.ndarray, dkey: str, k: int, x: np.ndarray, *, effort: str = "fast",
                    title: str = ""):
    """One certificate of a given answer ``x`` (the tour's button): one unit, heavy."""
    key = ("certify-one", dkey, int(k), effort, digest(np.asarray(x)))

    def work(kk, ctx):
        return ctx.run("ui.units.certify_unit", X, dkey, k=int(kk), x=x, effort=effort)

    return live.submit(key, title or f"certificate at k = {k}", [int(k)], work, heavy=True)


def best_x(jobs_: Sequence, k) -> np.ndarray | None:
    """The answer of largest variance at unit ``k`` among the finished units of ``jobs_``."""
    best, arg = -np.inf, None
    for job in jobs_:
        r = job.view(touch=False).results.get(k)
        if r is not None and r["variance"] > best:
            best, arg = r["variance"], r["x"]
    return arg


def components_job(X: np.ndarray, dkey: str, strategies: Sequence[str], *, r: int, k: int, method: str,
                   d: int, eps: float, seed: int, title: str = ""):
    """``components(X, n_components=r, k=k, strategy=...)`` for each strategy (units: strategy).

    "quasi-orthogonal" uses EM (Sigg & Buhmann's deflation); the others ``method``.
    """
    key = ("components", dkey, int(r), int(k), method, int(d), float(eps), int(seed))

    def work(strategy, ctx):
        base = "em" if strategy == "quasi-orthogonal" else method
        return ctx.run("ui.units.components_unit", X, dkey, n_components=int(r), k=int(k), method=base,
                       strategy=strategy, d=int(d), eps=float(eps), seed=int(seed))

    return live.submit(key, title or "components", list(strategies), work)
