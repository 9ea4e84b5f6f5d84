"""The covariance operator of any input: dense data or a covariance, ``scipy.sparse`` data,
a ``dask.array`` (the one place that chooses among :mod:`._cov`, :mod:`._sparse` and :mod:`._dask`).

It sits above the operators it builds, so none of them imports it back.
"""

from __future__ import annotations

import sys

from ._cov import Cov
from ._dask import as_dask_cov
from ._sparse import as_sparse_cov
from ._validation import InputError, check_data_or_cov

__all__ = ["as_cov"]


def as_cov(X=None, cov=None) -> Cov:
    """Validate exactly one of ``X``/``cov`` and wrap it.

    ``X`` may also be ``scipy.sparse`` data (wrapped as
    :class:`nspca_core._sparse.SparseCov`, centered implicitly, never densified), a
    ``dask.array.Array`` (:func:`nspca_core._dask.as_dask_cov`: centered implicitly, its
    blocks persisted on the workers when they fit) or
    an already built covariance operator (a :class:`Cov`, e.g. ``as_sparse_cov(X,
    center=False)`` or a Dask one), used as it is.
    """
    if isinstance(X, Cov) and cov is None:
        return X
    if _is_dask(X) or _is_dask(cov):
        if cov is not None:
            raise InputError("a Dask covariance `cov` is not accepted: pass the Dask data as `X` "
                             "(centered implicitly, never gathered); got a dask.array.Array as `cov`")
        return as_dask_cov(X)  # centered implicitly; persisted when it fits the cluster
    if cov is not None and _is_sparse(cov):  # numpy would say "setting an array element with a sequence"
        n = cov.shape[0]
        raise InputError(f"`cov` is a scipy.sparse matrix ({cov.shape[0]} x {cov.shape[1]}, {cov.nnz:,} "
                         "nonzeros); a sparse `cov` is not supported. Pass the sparse data itself as `X` "
                         "(samples x features: its covariance is used implicitly, never densified), or "
                         f"a dense covariance (`cov.toarray()`, {8 * n * n / 1e6:,.3g} MB as float64)")
    if cov is None and X is not None and _is_sparse(X):
        return as_sparse_cov(X, center=True)
    X, A = check_data_or_cov(X, cov)
    return Cov(X, A)


def _is_dask(X) -> bool:
    """True for a ``dask.array.Array`` (never imports Dask)."""
    da = sys.modules.get("dask.array")
    return da is not None and isinstance(X, da.Array)


def _is_sparse(X) -> bool:
    sp = sys.modules.get("scipy.sparse")  # only data built with scipy.sparse can be sparse
    return sp is not None and sp.issparse(X)
