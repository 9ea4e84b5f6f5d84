"""Front-door validation.  Public functions call these once; the algorithm
modules behind them assume clean input.

Every error is a :class:`InputError` (a ``ValueError``) whose message names the
argument, what is allowed and what was given.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "InputError",
    "check_int",
    "check_k",
    "check_d",
    "check_matrix",
    "check_vector",
    "check_data_or_cov",
    "covariance_from_data",
    "as_rng",
]


class InputError(ValueError):
    """Bad input: the message says what is wrong and what is allowed."""


def check_int(value, name: str, low: int, high: int | None = None) -> int:
    """Return ``value`` as an int in ``[low, high]`` or raise :class:`InputError`."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        allowed = f"[{low}, {high}]" if high is not None else f">= {low}"
        raise InputError(f"`{name}` must be an int in {allowed}; got {value!r}")
    value = int(value)
    if value < low or (high is not None and value > high):
        allowed = f"[{low}, {high}]" if high is not None else f">= {low}"
        raise InputError(f"`{name}` must be an int in {allowed}; got {value}")
    return value


def check_k(k, n: int) -> int:
    """``k`` must be an int in [1, n_features]."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise InputError(f"`k` must be an int in [1, n_features={n}]; got {k!r}")
    if not 1 <= int(k) <= n:
        raise InputError(f"`k` must be an int in [1, n_features={n}]; got {int(k)}")
    return int(k)


def check_d(d, n: int) -> int:
    """``d`` must be an int in [1, n_features]."""
    if isinstance(d, bool) or not isinstance(d, numbers.Integral):
        raise InputError(f"`d` must be an int in [1, n_features={n}]; got {d!r}")
    if not 1 <= int(d) <= n:
        raise InputError(f"`d` must be an int in [1, n_features={n}]; got {int(d)}")
    return int(d)


def check_matrix(a, name: str, *, square: bool = False, symmetric: bool = False,
                 min_rows: int = 1, min_cols: int = 1) -> np.ndarray:
    """Return ``a`` as a finite 2-D float64 array, or raise :class:`InputError`."""
    try:
        arr = np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"`{name}` must be a numeric 2-D array; got {type(a).__name__} "
                         f"that cannot be converted to float ({exc})") from None
    if arr.ndim != 2:
        raise InputError(f"`{name}` must be a 2-D array; got {arr.ndim}-D with shape {arr.shape}")
    if arr.shape[0] < min_rows or arr.shape[1] < min_cols:
        raise InputError(f"`{name}` must have at least {min_rows} row(s) and {min_cols} column(s); "
                         f"got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise InputError(f"`{name}` must be finite; got {int(bad.sum())} NaN/inf value(s), "
                         f"the first at row {i}, column {j}")
    if square and arr.shape[0] != arr.shape[1]:
        raise InputError(f"`{name}` must be square; got shape {arr.shape}")
    if symmetric:
        scale = max(1.0, float(np.abs(arr).max()))
        if not np.allclose(arr, arr.T, rtol=0, atol=1e-8 * scale):
            raise InputError(f"`{name}` must be symmetric; got max |{name} - {name}.T| = "
                             f"{float(np.abs(arr - arr.T).max()):.3g}")
        arr = 0.5 * (arr + arr.T)
    return arr


def check_vector(v, name: str) -> np.ndarray:
    """Return ``v`` as a finite 1-D float64 array, or raise :class:`InputError`."""
    try:
        arr = np.asarray(v, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"`{name}` must be a numeric 1-D array; got {type(v).__name__}") from None
    if arr.ndim != 1 or arr.size == 0:
        raise InputError(f"`{name}` must be a non-empty 1-D array; got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise InputError(f"`{name}` must be finite; got {int((~np.isfinite(arr)).sum())} NaN/inf value(s)")
    return arr


def check_data_or_cov(X=None, cov=None) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Exactly one of ``X`` (samples x features) and ``cov`` (features x features).

    Returns ``(X, cov)`` validated, the missing one None.  ``X`` is used as
    given (the covariance is ``X.T @ X / m``): center it first
    (:func:`nspca_core.preprocess`) — nothing here alters data silently.
    """
    if (X is None) == (cov is None):
        raise InputError("give exactly one of `X` (samples x features data) and `cov` "
                         f"(features x features covariance); got X={'None' if X is None else 'array'}, "
                         f"cov={'None' if cov is None else 'array'}")
    if X is not None:
        return check_matrix(X, "X"), None
    A = check_matrix(cov, "cov", square=True, symmetric=True)
    return None, A


def covariance_from_data(X: np.ndarray) -> np.ndarray:
    """``A = X^T X / m`` (forms the n x n matrix: only call when that is affordable)."""
    return (X.T @ X) / X.shape[0]


def as_rng(seed) -> np.random.Generator:
    """A Generator from an int seed, None, or a Generator (never global state)."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)):
        raise InputError(f"`seed` must be an int, None or a numpy Generator; got {seed!r}")
    return np.random.default_rng(seed)
