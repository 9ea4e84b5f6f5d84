"""Deflation: several components found one at a time on a shrinking problem.

- "deflation-remove": each component is solved on the features no earlier one uses
  (:meth:`nspca_core.operators.cov.Cov.columns`: an index view of an operator, never a copy of
  sparse or Dask data; dense data gives its kept columns, one copy alive at a time).
- "deflation-project": Mackey's projection deflation ``A <- (I - x x^T) A (I - x x^T)``
  (:func:`project_out`: through ``X <- X (I - x x^T)`` for dense data, as a
  :class:`~nspca_core.operators.cov.ProjectedCov` view of an operator).

:func:`nspca_core.components` validates and calls :func:`deflate` with the single-component
solver :func:`nspca_core.solve.fit_cov` as its step.  The two loops, :func:`remove_each` and :func:`project_each`,
are the only ones: the peers' own deflations (:func:`nspca_core.peers.em.em_components`, the
2015 paper's baselines :func:`nspca_core.peers.bipartite.deflation_components`) run them with
their own single-component step.  Nothing here imports a solver or a peer: they import this.
"""

from __future__ import annotations

import time

import numpy as np

from .operators.cov import Cov, ProjectedCov
from ._common.validation import InputError
from ._common.points import make_result
from .result import ComponentsResult

__all__ = ["STRATEGIES", "check_partial", "deflate", "project_out", "remove_each", "project_each"]

#: the deflation strategies of :func:`deflate`
STRATEGIES = ("deflation-remove", "deflation-project")


def project_out(cov: Cov, x: np.ndarray) -> Cov:
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


def check_partial(partial, n: int, r: int, strategy: str) -> np.ndarray:
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
    # unit columns (a previous result's) are kept bit for bit: dividing by a norm 1 +- 1 ulp would move them
    unit = np.abs(norms - 1.0) <= 8 * np.finfo(float).eps
    return np.where(unit, L, L / norms)


def remove_each(C: Cov, ks, solve, *, first: int = 0, remaining=None, info: dict, whole: bool = False):
    """Components ``first, ..., len(ks) - 1`` by "deflation-remove": yields ``(j, sub, x, out)``.

    Component j is ``(x_sub, out) = solve(sub, kj, remaining)`` on ``sub``, the covariance of the
    features ``remaining`` that no earlier component uses (:meth:`Cov.columns`: a view of an
    operator, the kept columns of dense data; with ``whole``, C itself while every feature
    remains: no copy, and the products and factor C has already computed), with
    ``kj = min(ks[j], remaining.size)``; ``x`` is ``x_sub`` in all n features, and its support
    leaves ``remaining``.  Stops early when no feature remains (``info["stopped_early"]``); a
    lowered k is noted in ``info["notes"]``.
    """
    n, r = C.n, len(ks)
    remaining = np.arange(n) if remaining is None else remaining
    for j in range(first, r):
        k = ks[j]
        if remaining.size == 0:
            info["stopped_early"] = (f"all {n} features were used by the first {j} components; returned {j} "
                                     f"instead of {r} (k at most {n // r}, or strategy 'bipartite', which shares "
                                     f"the features among all {r} components at once, gives {r})")
            return
        kj = min(k, remaining.size)
        if kj < k:
            info.setdefault("notes", []).append(
                f"component {j + 1}: only {remaining.size} unused features remained "
                f"(< k={k}); it uses all of them")
        sub = C if whole and remaining.size == n else C.columns(remaining)
        x_sub, out = solve(sub, kj, remaining)
        x = np.zeros(n)
        x[remaining] = x_sub
        remaining = remaining[np.asarray(x_sub) == 0]
        yield j, sub, x, out
        sub = None  # dense data's reduced copy goes before the next one is made


def project_each(C: Cov, ks, solve, *, first: int = 0):
    """Components ``first, ..., len(ks) - 1`` by "deflation-project": yields ``(j, sub, x, out)``
    with ``out = solve(sub, ks[j])`` on ``sub``, C with the earlier components projected out
    (:func:`project_out`), and ``x = out.x``."""
    cur = C
    for j in range(first, len(ks)):
        sub = cur
        out = solve(cur, ks[j])
        x = np.asarray(out.x, dtype=float)
        cur = project_out(cur, x)
        yield j, sub, x, out
        sub = None


def deflate(C: Cov, ks: tuple, given: np.ndarray, *, strategy: str, method: str, d: int, eps: float, seed,
            options: dict, fit, callback=None, keep_problems: bool = False):
    """``(loadings, results, problems, info)`` of ``len(ks)`` components by deflation on a
    validated operator C (``given``: (n, j) unit loadings of components already found, kept
    first and deflated as the loop would), each solved by
    ``fit(cov, k, method, d, eps, seed, callback, options)`` (:func:`nspca_core.solve.fit_cov`).

    ``problems[j]`` is the covariance component j was solved on (for its certificate), kept
    only when ``keep_problems`` (views of an operator are light; dense data's reduced copies
    are otherwise released after each component).
    """
    n, r = C.n, len(ks)
    if method == "nmf" and strategy == "deflation-project":
        # NMF factors the raw nonnegative data, which projection deflation never changes
        raise InputError("method 'nmf' works on the raw nonnegative data, which projection "
                         "deflation does not change; use strategy='deflation-remove'")
    sub_opts = {key: val for key, val in options.items() if key != "effort"}
    info: dict = {}
    cols, results, problems = [], [], []
    cur, remaining = C, np.arange(n)
    for x in given.T:
        cols.append(x)
        results.append(make_result(C, x, method="given", params={"k": int(np.count_nonzero(x))}, t0=time.perf_counter(),
                                   info={}, nonneg=True))
        problems.append(C)
        if strategy == "deflation-remove":
            remaining = np.setdiff1d(remaining, np.flatnonzero(x))
        else:
            cur = project_out(cur, x)
    def solve(sub, kj, remaining):  # the registry's method on the remaining features
        opts_j = dict(sub_opts)
        if opts_j.get("data") is not None:  # raw data for NMF: the same features
            opts_j["data"] = np.asarray(opts_j["data"])[:, remaining]
        rj = fit(sub, kj, method, min(d, remaining.size), eps, seed, None, opts_j)
        return rj.x, rj

    if strategy == "deflation-remove":
        each = remove_each(C, ks, solve, first=given.shape[1], remaining=remaining, info=info)
    else:
        each = project_each(cur, ks, lambda c, k: fit(c, k, method, d, eps, seed, None, dict(sub_opts)),
                             first=given.shape[1])
    for j, sub, x, rj in each:
        if keep_problems:
            problems.append(sub)
        del sub
        results.append(rj)
        cols.append(x)
        if callback is not None:
            callback(j + 1, r)
    loadings = np.column_stack(cols) if cols else np.zeros((n, 0))
    return loadings, results, problems, info
