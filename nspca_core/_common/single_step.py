"""The truncated power step of ``fit(method="auto")``'s batched ascent on float32 products
(:class:`SingleTopK`): its selection, and its random starts' projection, partition in single precision.

With :class:`~nspca_core._common.screen.SingleProducts` the products ``A x`` are computed in float32
and handed to the step as float64 copies; below ``_KTH_SAMPLE_MIN_N`` features they are
Fortran-ordered and :func:`~nspca_core._common.steps._select` finds each column's (k+1)-th largest
by one ``np.partition`` of all n entries (:func:`~nspca_core._common.kth.kth_one`), the most of the
step's cost.  Every entry is a float32 number, so the float32 copy of the products holds the same
numbers: the same order statistics, the same comparisons, the same supports, and the values kept are
read from the float64 products.  A partition of float32 columns is faster (half the bytes, twice the
lanes): 72 x 1,000 genes, the batch's steps 0.8-1.3 -> 0.65-1.05 ms a fit (issue 39, eighteenth round).
The projection of auto's random starts ``A r`` (float32 products too) takes its k-th largest the same
way (:func:`project_single`: 32 columns of 1,000, 214 -> 68 us).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .kth import _nonzero_by_column, column_counts, kth_largest, kth_one, one_index
from .steps import TopK, _kth_clipped, _scatter, topk_mask, unit_compact

__all__ = ["SingleTopK", "select_single", "project_single"]


def select_single(Y: np.ndarray, k: int):
    """The compact ``T_k`` (unsigned: the k largest entries of ``y_+``) of the columns of Y (n, q),
    whose entries are float32 numbers, as ``(idx, vals)`` of k rows, rows increasing; or None where
    :func:`~nspca_core._common.steps._select`'s common case does not hold (a tie at a column's k-th
    largest, fewer than k entries above its (k+1)-th, or a kept entry not positive): the caller then
    selects as before.  Where it holds, the same points as ``_select``'s: the (k+1)-th largest u of
    each column from one partition of the float32 copy (the same number as in float64), the k entries
    above u kept with their float64 values."""
    n, q = Y.shape
    u = kth_one(Y.astype(np.float32), k + 1)  # the float32 copy keeps Y's (Fortran) order
    cols, rows = _nonzero_by_column(Y > u)
    if rows.size != k * q:  # at most k entries lie above each u: k in every column, without counts
        return None
    idx = rows.reshape(q, k).T
    vals = Y[idx, np.arange(q)]
    return (idx, vals) if (vals > 0).all() else None


def project_single(X0: np.ndarray, k: int, key, width: int, j0: int):
    """:func:`~nspca_core._common.steps.project_compact` of the columns of X0 (n, p) at one k (0 < k < n)
    whose columns from ``j0`` on hold float32 numbers (auto's random starts ``A r`` from float32 products),
    Fortran-ordered: ``(idx, vals)`` of ``width`` rows, the same floats.  Its code, but for the k-th
    largest of those columns (``_kth_clipped``: one partition at one index), taken from their float32
    copy: the same numbers (it enters only comparisons).  One mask of the whole matrix, the columns with at
    most k positive entries masked by ``t = 0`` (every entry: their positive ones kept, the zeros dropped by
    ``_scatter``, as project_compact's ``Yp != 0``): no copy of the other columns (fewer large temporaries,
    fewer fresh pages: 304 -> 249 minor page faults a fit on 72 x 1,000).  The normalization runs on the whole
    (width, p) matrix as there: a reduction over fewer columns may sum in another order (one column: pairwise)."""
    n, p = X0.shape
    Yp = np.maximum(X0, 0.0)
    many = column_counts(Yp != 0) > k  # the columns with more than k positive entries
    g = np.flatnonzero(many)
    # the k-th largest per column; 0 on the others (a mask of every entry, no tie broken at 0: their
    # positive entries, the zeros dropped by _scatter, as project_compact's mask of Yp != 0 there)
    t = np.zeros(p)
    head = g[g < j0]
    if head.size:
        th = _kth_clipped(X0[:, head], k)
        t[head] = th if th is not None else kth_largest(Yp[:, head], k)
    # the float32 columns (a view of them, not a copy): on one with at most k positive entries the clipped
    # k-th largest is 0 or its smallest positive entry, and the mask keeps its positive entries as well
    t[j0:] = np.maximum(kth_one(X0[:, j0:].astype(np.float32), k), 0.0)
    cols, rows = _nonzero_by_column(topk_mask(Yp, np.full(p, k), key, floor=0.0, t=t))
    return unit_compact(*_scatter(rows, cols, Yp[rows, cols], n, p, width), n, key)


@dataclass(frozen=True)
class SingleTopK(TopK):
    """:class:`~nspca_core._common.steps.TopK` (unsigned) for products whose entries are float32 numbers
    (:class:`~nspca_core._common.screen.SingleProducts`): where ``_select`` would partition all n
    entries of Fortran-ordered products at one k (:func:`one_index`), :func:`select_single` does it in
    float32.  ``single_from``: the first of the trailing start columns that hold float32 numbers (auto's
    random starts), whose k-th largest :func:`project_single` takes in float32.  The same
    iterates."""

    single_from: int | None = None

    def start_compact(self, X0: np.ndarray, kc, key, width: int):
        j0 = self.single_from
        kk = np.asarray(kc)
        if j0 is not None and self.compact_start and not self.signed and 0 <= j0 < X0.shape[1] \
                and kk.size and kk.min() == kk.max() and 0 < int(kk.flat[0]) < X0.shape[0] \
                and one_index(X0[:, j0:]):
            return project_single(X0, int(kk.flat[0]), key, width, j0)
        return super().start_compact(X0, kc, key, width)

    def _select(self, Y, ia, kc, key, prev):
        if ia.shape[0] and not self.signed and np.ndim(kc) == 0 and int(kc) == ia.shape[0] < Y.shape[0] \
                and one_index(Y):
            out = select_single(Y, int(kc))
            if out is not None:
                return out
        return super()._select(Y, ia, kc, key, prev)
