"""Units of work for the worker-process tests of ui/jobs.py: stdlib only, so that importing this
module in a fresh worker process costs next to no CPU time."""

from __future__ import annotations

import time


def burn_unit(seconds, callback=None):
    """Computes for ``seconds`` of CPU time without calling back."""
    end = time.process_time() + seconds
    x = 0
    while time.process_time() < end:
        x += 1
    return "finished"


def sleep_unit(seconds, callback=None):
    """Waits ``seconds`` using no CPU (like a unit slowed down by other work on the machine)."""
    time.sleep(seconds)
    return "finished"
