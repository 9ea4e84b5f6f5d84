"""Argument checks the solvers share (the peers, the Dask front): each written once.

Every check returns the validated value or raises :class:`~nspca_core.InputError`
with a message naming the argument, what is allowed and what was given.
"""

from __future__ import annotations

import numpy as np

from .._cov import Cov
from .._validation import InputError, as_rng, check_k

__all__ = ["check_cov", "check_bool", "check_float", "check_callback", "check_peer_args"]


def check_callback(callback):
    """``callback`` if it is callable or None."""
    if callback is not None and not callable(callback):
        raise InputError(f"`callback` must be callable(done, total) or None; got {callback!r}")
    return callback


def check_cov(cov) -> Cov:
    if not isinstance(cov, Cov):
        raise InputError("`cov` must be a validated nspca_core._cov.Cov (build it with "
                         f"nspca_core._cov.as_cov(X=..., cov=...)); got {type(cov).__name__}")
    return cov


def check_bool(value, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise InputError(f"`{name}` must be True or False; got {value!r}")
    return bool(value)


def check_float(value, name: str, low: float, high: float, *, low_open=True,
                high_open=False) -> float:
    ok_type = isinstance(value, (int, float, np.floating, np.integer)) and not isinstance(value, bool)
    v = float(value) if ok_type else float("nan")
    lo_ok = v > low if low_open else v >= low
    hi_ok = v < high if high_open else v <= high
    if not (ok_type and np.isfinite(v) and lo_ok and hi_ok):
        lb = "(" if low_open else "["
        rb = ")" if high_open else "]"
        raise InputError(f"`{name}` must be a float in {lb}{low}, {high}{rb}; got {value!r}")
    return v


def check_peer_args(cov, k, seed, callback):
    """The arguments every single-component peer takes: ``(cov, k, rng, callback)`` validated
    (``k`` in ``[1, cov.n]``, ``rng`` the Generator of ``seed``)."""
    cov = check_cov(cov)
    return cov, check_k(k, cov.n), as_rng(seed), check_callback(callback)
