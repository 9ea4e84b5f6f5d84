"""Argument checks the solvers share (the peers, the Dask front): each written once.

Every check returns the validated value or raises :class:`~nspca_core.InputError`
with a message naming the argument, what is allowed and what was given.
"""

from __future__ import annotations


from ..operators.cov import Cov
from .validation import InputError, as_rng, check_k
from .params import check, in_interval

__all__ = ["check_cov", "check_bool", "check_float", "check_callback", "check_peer_args"]


def check_callback(callback):
    """``callback`` if it is callable or None."""
    return check("callback", callback)


def check_cov(cov) -> Cov:
    if not isinstance(cov, Cov):
        raise InputError("`cov` must be a validated nspca_core.operators.cov.Cov (build it with "
                         f"nspca_core.operators.covariance.as_cov(X=..., cov=...)); got {type(cov).__name__}")
    return cov


def check_bool(value, name: str) -> bool:
    return check("certify", value, name=name)


def check_float(value, name: str, low: float, high: float, *, low_open=True,
                high_open=False) -> float:
    return in_interval(value, name, low, high, low_open=low_open, high_open=high_open)


def check_peer_args(cov, k, seed, callback):
    """The arguments every single-component peer takes: ``(cov, k, rng, callback)`` validated
    (``k`` in ``[1, cov.n]``, ``rng`` the Generator of ``seed``)."""
    cov = check_cov(cov)
    return cov, check_k(k, cov.n), as_rng(seed), check_callback(callback)
