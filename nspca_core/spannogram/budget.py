"""What the exact enumeration would cost, estimated before any work, and the budget it must fit.

At rank r >= 4 every candidate support comes from a vertex of the arrangement: an r-subset
of the distinct nonzero rows of V and the zero row, ``C(m+1, r)`` of them.  Around a vertex
the cells are the orders of its r tied rows (both signs of the direction): at most
``2 r! C(m+1, r)`` candidate cells, each visited in Python.  The paper's bound on the
distinct supports is ``2^r C(m+1, r)`` (Asteris et al. 2014, Prop. 2; ``len`` of
:func:`candidate_supports`).  Both are checked against real enumerations on tiny inputs in
``tests/core/test_spannogram.py``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .._common.validation import InputError, check_int

#: Refuse an exact enumeration (rank >= 4) with more candidate cells than this; keyword
#: ``max_candidates`` of :func:`lowrank_nspca` / :func:`candidate_supports` (``fit`` uses this
#: module value): about half a minute on one core.
MAX_CANDIDATES = 10_000_000
#: seconds per candidate cell: the largest rate measured at d = 4, 5, 6 on one core, rounded up
SECONDS_PER_CELL = 3.5e-6
#: bytes per stored candidate support: its indices (8 per entry) twice (the set of cells and
#: the expanded list) and about 250 bytes of Python objects
_BYTES_PER_INDEX, _BYTES_PER_SUPPORT = 16, 250


@dataclass(frozen=True)
class EnumerationCost:
    """The exact enumeration's size for ``rows`` distinct nonzero rows of rank ``rank`` at sparsity ``k``.

    ``vertices = C(rows + 1, rank)``; ``cells = 2 · rank! · vertices`` (the work);
    ``supports = 2^rank · vertices`` (the paper's bound on the distinct candidate supports);
    ``bytes`` the memory those supports may take; ``seconds`` the time at
    :data:`SECONDS_PER_CELL`.
    """

    rows: int
    rank: int
    k: int
    vertices: int
    cells: int
    supports: int
    bytes: int
    seconds: float

    def describe(self) -> str:
        r, m = self.rank, self.rows
        return (f"the exact spannogram at rank {r} on {m:,} distinct rows examines C({m + 1}, {r}) = "
                f"{_count(self.vertices)} vertices and up to 2·{r}!·C({m + 1}, {r}) = {_count(self.cells)} "
                f"candidate cells: about {_duration(self.seconds)} (at {SECONDS_PER_CELL * 1e6:.3g} µs per "
                f"cell), and up to {_size(self.bytes)} for its up to 2^{r}·C({m + 1}, {r}) = "
                f"{_count(self.supports)} candidate supports")


def enumeration_cost(rows: int, rank: int, k: int) -> EnumerationCost:
    """:class:`EnumerationCost` of the enumeration of all ``rank``-subsets of ``rows`` rows and 0."""
    vertices = math.comb(rows + 1, rank)
    cells = 2 * math.factorial(rank) * vertices
    supports = 2 ** rank * vertices
    per = _BYTES_PER_INDEX * min(k, rows) + _BYTES_PER_SUPPORT
    return EnumerationCost(rows=rows, rank=rank, k=k, vertices=vertices, cells=cells, supports=supports,
                           bytes=supports * per, seconds=cells * SECONDS_PER_CELL)


def check_budget(rows: int, rank: int, k: int, max_candidates) -> None:
    """Refuse (InputError, before any work) an enumeration at rank >= 4 above the budget."""
    cap = MAX_CANDIDATES if max_candidates is None else check_int(max_candidates, "max_candidates", 1)
    if rank < 4:  # d <= 3 runs sweeps and pruned searches, polynomial and practical
        return
    cost = enumeration_cost(rows, rank, k)
    if cost.cells > cap:
        raise InputError(f"{cost.describe()}, more than `max_candidates` = {cap:,} cells. Use a smaller "
                         "`d` (d <= 3 is practical at any size), method='enet' (random directions, a (1 - eps) "
                         "guarantee) or method='auto', or raise `max_candidates` (default "
                         "nspca_core.spannogram.MAX_CANDIDATES)")


def within_budget(rows: int, rank: int, k: int, max_candidates=None) -> bool:
    """Whether :func:`check_budget` lets the enumeration run."""
    cap = MAX_CANDIDATES if max_candidates is None else max_candidates
    return rank < 4 or enumeration_cost(rows, rank, k).cells <= cap


def _count(v: int) -> str:
    return f"{v:,}" if v < 10 ** 12 else f"{v:.3g}"


def _size(b: float) -> str:
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if b >= size:
            return f"{b / size:.3g} {unit}"
    return f"{b:.0f} bytes"


def _duration(seconds: float) -> str:
    for unit, size in (("years", 3.15e7), ("days", 86400.0), ("hours", 3600.0), ("minutes", 60.0)):
        if seconds >= 2 * size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.3g} s"
