"""Bisection hints carried from one k to the next inside :func:`nspca_core.certificates.path.certify_path`'s thin
part (issue 39, fifteenth round).  There each k runs certify(k)'s eager split certificate
(:func:`nspca_core.certificates.route.certify_thin`), whose anchored bisections search brackets that are the same
relative to the feasible value at every k (``[1.001 lower, lower / top_ratio]``: :func:`.dual._anchored`) and end
on the same outcome path at most k (g60x2500: 4 proofs, then 1 failure).  Inside :func:`carried_hints` every
bisection with a proof (:func:`nspca_core.certificates.anchor.anchored_bisection`) leaves its bracket's
ratio ``hi / lo`` and that path, and a later one on a bracket of the same ratio (within :data:`_RATIO_NEAR`) takes
it as a hint (:func:`nspca_core.certificates.anchor._hinted`: the path's failures in order, then its last proof
g from the last failure's ratios).  A hint only orders tests: the hinted bound is proved by its own test, never
above the loop's, and the loop's floats where the loop takes that path (``_hinted``'s proof needs nothing of where
the hint came from).  Outside a block (certify(k) alone) nothing is recorded or consulted."""

from __future__ import annotations

import contextlib
import contextvars

# (rel_tol, steps) -> [(hi / lo, outcomes), ...], the latest first; None outside a block
_CARRIED: contextvars.ContextVar = contextvars.ContextVar("carried_bisection_hints", default=None)
# a carried path applies to a bracket whose ratio hi / lo is within this of its own (relative)
_RATIO_NEAR = 1e-9
# at most this many brackets remembered per (rel_tol, steps) (the 2 k screen's, the grown one's, the refinements')
_KEEP = 8


@contextlib.contextmanager
def carried_hints():
    """A block (certify_path's thin k, one after the other) inside which bisection paths are carried to later k."""
    token = _CARRIED.set({})
    try:
        yield
    finally:
        _CARRIED.reset(token)


def carried(lo: float, hi: float, rel_tol: float, steps: int) -> list:
    """The carried paths for a bracket ``[lo, hi]``, as :func:`nspca_core.certificates.anchor._hinted`'s hints
    ``(lo, hi, outcomes)`` on this bracket itself (the midpoints are then this bracket's own); [] outside a block."""
    store = _CARRIED.get()
    if store is None or not lo > 0:
        return []
    ratio = hi / lo
    return [(lo, hi, outs) for q, outs in store.get((rel_tol, steps), ()) if abs(ratio - q) <= _RATIO_NEAR * q]


def carry(lo: float, hi: float, rel_tol: float, steps: int, outs: tuple) -> None:
    """Record a bisection's bracket ratio and outcome path (``outs``: True where a test proved) for later k."""
    store = _CARRIED.get()
    if store is None or not lo > 0:
        return
    ratio = hi / lo
    kept = [h for h in store.get((rel_tol, steps), ()) if abs(ratio - h[0]) > _RATIO_NEAR * h[0]]
    store[(rel_tol, steps)] = [(ratio, outs)] + kept[: _KEEP - 1]
