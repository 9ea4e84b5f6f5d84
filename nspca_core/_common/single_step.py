"""The truncated power step of ``fit(method="auto")``'s batched ascent on float32 products
(:class:`SingleTopK`): its selection partitions the products in single precision.

With :class:`~nspca_core._common.screen.SingleProducts` the products ``A x`` are computed in float32
and handed to the step as float64 copies; below ``_KTH_SAMPLE_MIN_N`` features they are
Fortran-ordered and :func:`~nspca_core._common.steps._select` finds each column's (k+1)-th largest
by one ``np.partition`` of all n entries (:func:`~nspca_core._common.kth.kth_one`), the most of the
step's cost.  Every entry is a float32 number, so the float32 copy of the products holds the same
numbers: the same order statistics, the same comparisons, the same supports, and the values kept are
read from the float64 products.  A partition of float32 columns is faster (half the bytes, twice the
lanes): 72 x 1,000 genes, the batch's steps 0.8-1.3 -> 0.65-1.05 ms a fit (issue 39, eighteenth round).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .kth import _nonzero_by_column, kth_one, one_index
from .steps import TopK

__all__ = ["SingleTopK", "select_single"]


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


@dataclass(frozen=True)
class SingleTopK(TopK):
    """:class:`~nspca_core._common.steps.TopK` (unsigned) for products whose entries are float32 numbers
    (:class:`~nspca_core._common.screen.SingleProducts`): where ``_select`` would partition all n
    entries of Fortran-ordered products at one k (:func:`one_index`), :func:`select_single` does it in
    float32.  The same iterates."""

    def _select(self, Y, ia, kc, key, prev):
        if ia.shape[0] and not self.signed and np.ndim(kc) == 0 and int(kc) == ia.shape[0] < Y.shape[0] \
                and one_index(Y):
            out = select_single(Y, int(kc))
            if out is not None:
                return out
        return super()._select(Y, ia, kc, key, prev)
