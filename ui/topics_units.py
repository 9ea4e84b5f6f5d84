"""The Topics page's unit of work, run in a worker process of :mod:`ui.jobs` (no streamlit, no
plotly): topics of a documents x words matrix (the words already chosen), with progress.

Running it in a process is what makes the page's Stop immediate (the process is killed) and keeps
the page responsive while it computes (issue 41: 8-10 minutes behind a spinner).
"""

from __future__ import annotations

import time

import numpy as np

__all__ = ["topics_unit", "order_by_variance", "STAGES"]

#: share of the progress bar of each stage (the net search is the long one)
STAGES = {"weighting": 0.05, "search": 0.85, "finish": 0.10}


def order_by_variance(cov, L: np.ndarray, variance: np.ndarray):
    """Columns of ``L`` by decreasing variance; the cumulative variance of the span of the
    first j in that order (trace of Q^T A Q over nested orthonormal bases, Q from QR of L)."""
    order = np.argsort(-np.asarray(variance, float), kind="stable")
    L, variance = L[:, order], np.asarray(variance, float)[order]
    Q, R = np.linalg.qr(L)
    keep = np.abs(np.diag(R)) > 1e-12 * max(1.0, float(np.abs(R).max()))
    Q = Q * keep  # a component inside the span of the ones before adds nothing
    AQ = cov.matvec(Q)
    cumulative = np.cumsum(np.einsum("ij,ij->j", Q, AQ))
    return L, variance, cumulative, order


def _scaled(callback, start: float, width: float):
    """A ``callback(done, total)`` reporting into [start, start + width] of 1000 steps."""
    if callback is None:
        return None

    def inner(done, total):
        frac = min(max(float(done) / float(total), 0.0), 1.0) if total else 0.0
        callback(round(1000 * (start + width * frac)), 1000)

    return inner


def topics_unit(X, *, method: str, r: int, k: int, weighting: str, center: bool, seed: int,
                d: int, samples: int, callback=None) -> dict:
    """Topics of ``X`` (documents x the words used, sparse): ``loadings`` (words x r) ordered by
    explained variance, ``variance``, ``cumulative_variance``, ``order``, ``weighting_notes``,
    ``seconds``.  ``callback(done, total)`` counts 1000 steps over the stages of :data:`STAGES`
    (the net search's share by the pairs it visited, at most all of them: an estimate from it is
    an upper bound)."""
    from nspca_core.operators.sparse import as_sparse_cov
    from nspca_core.text import text_weighting

    t0 = time.perf_counter()
    if callback is not None:
        callback(0, 1000)
    w = text_weighting(X, weighting=weighting, center=bool(center))
    cov = as_sparse_cov(w.X, center=w.center)
    search = _scaled(callback, STAGES["weighting"], STAGES["search"])
    if search is not None:
        search(0, 1)
    if method == "bipartite":
        from nspca_core.peers.bipartite import bipartite_components

        res = bipartite_components(cov, int(r), int(k), d=min(int(d), cov.n), samples=int(samples),
                                   seed=int(seed), callback=search)
    else:
        from nspca_core.api import components

        res = components(cov, n_components=int(r), k=int(k), method="tpower",
                         strategy="deflation-remove", random_state=int(seed), certify=False,
                         callback=search)
    if callback is not None:
        callback(round(1000 * (1 - STAGES["finish"])), 1000)
    L, variance, cumulative, order = order_by_variance(cov, np.asarray(res.loadings),
                                                       np.asarray(res.variance, float))
    if callback is not None:
        callback(1000, 1000)
    return dict(loadings=L, variance=variance, cumulative_variance=cumulative, order=order,
                weighting_notes=tuple(w.notes), seconds=time.perf_counter() - t0)
