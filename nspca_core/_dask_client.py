"""Where the graphs of :mod:`nspca_core._dask` run: the client, its scheduler's name, and the
memory of this machine (for :func:`nspca_core._dask.decide_persist` under the local scheduler).
"""

from __future__ import annotations

import os


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
