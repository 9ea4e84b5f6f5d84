"""The covariance operator of any input: dense data or a covariance, ``scipy.sparse`` data,
a ``dask.array`` (the one place that chooses among :mod:`._cov`, :mod:`._sparse` and :mod:`._dask`).

It sits above the operators it builds, so none of them imports it back.
"""

from __future__ import annotations

import sys

import numpy as np

from .cov import Cov
from ..distributed.array import as_dask_cov
from .sparse import CenteredDenseCov, as_sparse_cov
from .._common.validation import InputError
from .._common.params import check

__all__ = ["as_cov", "COPY_FRACTION"]

#: a centered copy of dense data is made only while it takes at most this share of the memory
#: available now; above it the data are centered implicitly (:class:`~nspca_core.operators.sparse.CenteredDenseCov`)
COPY_FRACTION = 0.25


def as_cov(X=None, cov=None, *, center: bool = True) -> Cov:
    """Validate exactly one of ``X``/``cov`` and wrap it.

    The one contract of every container (NumPy, pandas, ``np.memmap``, float32, ``scipy.sparse``
    CSR/CSC, ``dask.array``): ``center=True`` makes the covariance that of the centered data,
    ``A = (X - 1 mu^T)^T (X - 1 mu^T) / m``, ``center=False`` uses X as given, ``A = X^T X / m``.
    ``cov`` is never centered.  The operator records it (``.center``, ``.mean``: the column means
    used, None when nothing was subtracted).

    - dense data: a centered copy when it takes at most :data:`COPY_FRACTION` of the memory
      available (none when validation already made a private float64 copy, e.g. of float32 or a
      DataFrame: that copy is centered in place), else the implicit operator
      :class:`~nspca_core.operators.sparse.CenteredDenseCov` (``X^T X / m - mu mu^T``, X never copied);
    - ``scipy.sparse`` data: :class:`nspca_core.operators.sparse.SparseCov` (implicit, never densified);
    - a ``dask.array.Array``: :func:`nspca_core.distributed.array.as_dask_cov` (implicit, never gathered);
    - an already built operator (a :class:`Cov`): used as it is (``center`` does not apply).

    The caller's array is never modified.
    """
    if isinstance(X, Cov) and cov is None:
        return X
    if _is_dask(X) or _is_dask(cov):
        if cov is not None:
            raise InputError("a Dask covariance `cov` is not accepted: pass the Dask data as `X` "
                             "(centered implicitly, never gathered); got a dask.array.Array as `cov`")
        return as_dask_cov(X, center=center)  # persisted when it fits the cluster
    if cov is not None and is_sparse(cov):  # numpy would say "setting an array element with a sequence"
        n = cov.shape[0]
        raise InputError(f"`cov` is a scipy.sparse matrix ({cov.shape[0]} x {cov.shape[1]}, {cov.nnz:,} "
                         "nonzeros); a sparse `cov` is not supported. Pass the sparse data itself as `X` "
                         "(samples x features: its covariance is used implicitly, never densified), or "
                         f"a dense covariance (`cov.toarray()`, {8 * n * n / 1e6:,.3g} MB as float64)")
    if cov is None and X is not None and is_sparse(X):
        return as_sparse_cov(X, center=center)
    given = X
    X, A = check("data_or_cov", (X, cov))
    if X is None or not center:
        return Cov(X, A)
    # validation made a private copy of the caller's ndarray (float32, ints): centered in place
    private = isinstance(given, np.ndarray) and not np.may_share_memory(X, given)
    return centered_dense(X, private=private)


def centered_dense(X: np.ndarray, *, private: bool = False) -> Cov:
    """The covariance operator of the centered dense data ``X`` (validated float64).

    Data already centered to rounding (every column mean within 8 ulp of the column's largest
    entry) are used as they are.  ``private``: X is a copy nobody else holds (it is centered in
    place).  Otherwise a centered copy is made when it fits :data:`COPY_FRACTION` of the available
    memory, else the implicit operator (X read as given, never copied)."""
    mean = X.mean(axis=0)
    own = True  # X below is a copy only this operator holds
    if _already_centered(X, mean):  # centering would change no entry beyond rounding: no copy
        own = private
    elif private:
        X -= mean
    elif X.nbytes <= COPY_FRACTION * available_memory():
        X = X - mean
    else:
        return CenteredDenseCov(X, mean)
    cov = Cov(X, None)
    cov.center, cov.mean, cov.own_x = True, mean, own
    return cov


def _already_centered(X: np.ndarray, mean: np.ndarray) -> bool:
    """True when every column mean is within a few units of rounding of the column's largest entry
    (data centered by the caller): subtracting it would move each entry by less than its own
    rounding, so the covariance is the centered one to working precision without a copy."""
    if X.size == 0:
        return True
    tol = 8 * np.finfo(float).eps
    size = np.abs(mean)
    j = int(np.argmax(size))  # the column most likely off: alone it decides for uncentered data
    if not size[j] <= tol * max(float(X[:, j].max()), -float(X[:, j].min())):
        return False
    scale = np.maximum(X.max(axis=0), -X.min(axis=0))  # max |X_ij| per column, no |X| temporary
    return bool(np.all(size <= tol * scale))


def available_memory() -> float:
    """Bytes of memory available now (``MemAvailable`` of ``/proc/meminfo``; where it cannot be
    read, the free physical pages; inf where neither exists)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024.0
    except OSError:
        pass
    try:
        import os

        return float(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return float("inf")


def _is_dask(X) -> bool:
    """True for a ``dask.array.Array`` (never imports Dask)."""
    da = sys.modules.get("dask.array")
    return da is not None and isinstance(X, da.Array)


def is_sparse(X) -> bool:
    sp = sys.modules.get("scipy.sparse")  # only data built with scipy.sparse can be sparse
    return sp is not None and sp.issparse(X)
