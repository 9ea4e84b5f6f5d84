"""The Dask part of the one front: what ``nspca_core.fit``/``components`` check and report for a
``dask.array`` (the operator they run on is :class:`nspca_core.distributed.array.DaskCov`; the solvers run
on it unchanged).
"""

from __future__ import annotations

from ..operators.cov import Cov
from .array import DASK_METHODS
from .client import _scheduler_name
from .._common.validation import InputError

__all__ = ["check_dask_method", "dask_info", "FRONT_STRATEGIES"]


# --------------------------------------------------------------------------- the public front's Dask part
#: strategies of nspca_core.components on Dask data
FRONT_STRATEGIES = ("deflation-remove", "deflation-project", "bipartite")


def check_dask_method(C: Cov, method: str, strategy: str | None = None) -> None:
    """An InputError for a method or strategy the Dask operator does not run (C Dask data)."""
    if not getattr(C, "dask", False):
        return
    if method not in DASK_METHODS:
        raise InputError(f"`method` must be one of {', '.join(repr(m) for m in DASK_METHODS)} for Dask "
                         f"data; got {method!r}")
    if strategy is not None and strategy not in FRONT_STRATEGIES:
        raise InputError(f"`strategy` must be one of {', '.join(repr(s) for s in FRONT_STRATEGIES)} for "
                         f"Dask data; got {strategy!r}")


def dask_info(C: Cov, info: dict) -> dict:
    """``info`` with, for Dask data, ``info["dask"]`` (scheduler, persistence and its reason,
    factor) and the persistence reason among ``info["notes"]``."""
    if not getattr(C, "dask", False):
        return info
    persist = dict(C.persist_info)
    notes = [*info.get("notes", []), f"Dask data: {persist.get('reason', '')}"]
    return {**info, "notes": notes, "dask": {"scheduler": _scheduler_name(C.client), "persist": persist,
                                             "factor": dict(C.factor_info), "round_trips": C.round_trips}}
