"""Where the graphs of :mod:`nspca_core.distributed.array` run: the client, its scheduler's name, and the
memory of this machine, and whether the data's blocks fit in the cluster's memory
(:func:`persist_decision`, for :func:`nspca_core.distributed.array.decide_persist`).
"""

from __future__ import annotations

import os

from ..operators.sparse import format_bytes


def _scheduler_name(client) -> str:
    if client is None:
        return "dask default"
    try:
        return str(client.scheduler.address)
    except AttributeError:  # pragma: no cover - other client types
        return type(client).__name__


def _default_client(client):
    """The client graphs will run on: ``client``, else Dask's default ``distributed`` client,
    else None (the local threaded scheduler)."""
    if client is not None:
        return client
    try:
        from distributed import default_client
        return default_client()
    except (ImportError, ValueError):
        return None


def _available_bytes() -> int:
    """Memory available on this machine (``/proc/meminfo``'s MemAvailable, else total)."""
    try:
        with open("/proc/meminfo") as f:
            info = {line.split(":")[0]: int(line.split()[1]) * 1024 for line in f if ":" in line}
        return int(info.get("MemAvailable", info["MemTotal"]))
    except (OSError, KeyError, ValueError, IndexError):
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))


def persist_decision(X, client, fraction: float, *, sparse: bool) -> dict:
    """Whether the blocks of X fit in the cluster's memory: ``{"persist", "data_bytes",
    "memory_bytes", "where", "reason"}``.

    The data's size is ``X.nbytes`` (for sparse chunks the dense size: an upper bound, as their
    number of stored values is unknown before a pass).  The cluster's memory is the sum of the
    workers' ``memory_limit`` (of ``client``, or Dask's default client), or this machine's
    available memory under the local scheduler.  The blocks are persisted when they take at
    most ``fraction`` of it (the rest is for the scores, bases and the workers'
    own use); otherwise every pass streams them from their source.
    """
    client = _default_client(client)
    data = int(X.nbytes)
    where = "this machine's available memory (local scheduler)"
    memory = 0
    if client is not None:
        try:
            workers = client.scheduler_info().get("workers", {})
            memory = int(sum(int(w.get("memory_limit") or 0) for w in workers.values()))
            where = f"the memory_limit of the cluster's {len(workers)} worker(s)"
        except Exception:  # pragma: no cover - other client types
            memory = 0
    if memory <= 0:
        memory = _available_bytes()
        where = "this machine's available memory"
    persist = data <= fraction * memory
    verb = "kept in the workers' memory (persisted)" if persist else "streamed from their source at every pass"
    note = " (dense size: an upper bound for sparse chunks)" if sparse else ""
    reason = (f"the data's {format_bytes(data)}{note} {'fit' if persist else 'do not fit'} in "
              f"{fraction:.0%} of {where} ({format_bytes(memory)}): the blocks are {verb}")
    return {"persist": bool(persist), "data_bytes": data, "memory_bytes": memory, "where": where,
            "reason": reason}
