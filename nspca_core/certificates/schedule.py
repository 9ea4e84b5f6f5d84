"""Tightening the certificates of many k over time: what is proved, what a step costs, which step next.

A caller that certifies a whole axis of sparsities (the app's band of "Variance vs k", a script
running for hours) offers every certificate it gets to a :class:`BoundsStore`, reads the axis back
through the monotone envelope (:func:`nspca_core.certificates.monotone_envelope`: a bound proved at
``k' >= k`` and a point found at ``k'' <= k`` serve at k), and asks :func:`tighten_plan` for the
order of the next steps, from the band as it is then and the cost model :func:`full_cost`.

* :class:`BoundsStore` keeps, per (data key, k), the smallest upper bound offered and the best
  feasible point (kept as its support and values), ``optimal`` (a certificate said so, or the kept
  bound and point close the gap to :data:`OPTIMAL_TOLERANCE`: :func:`closed`), and the efforts
  already run at k.  An offer never worsens anything (an upper bound only decreases, a feasible
  value only increases), so concurrent offers in any order end in the same state; thread-safe.
* :func:`full_cost` is the relative cost of an ``effort="full"`` certificate at k on n features:
  its DNN works on all n features up to the dense limit, else on the split bound's screened set,
  and an iteration costs the square of that size.
* :func:`tighten_plan` orders the steps (tuned on MLL, 72 x 12,582, and a 75 x 7,000 upload):
  the cheapest k first, then the largest k (its bound serves every "flat" k), then the others by
  cost; proofs of optimality where :func:`exact_cheap`; then a long pass.

Pure Python and numpy: no solver runs here; the caller runs each planned step with
:func:`nspca_core.certificates.certify` and offers the result.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from .._common.params import EFFORT_ORDER
from ._settings import _DENSE_MAX_N, _EFFORT, EXACT_EFFORT, OPTIMAL_TOLERANCE, screened_size
from .monotone import monotone_envelope

__all__ = ["Bound", "BoundsStore", "closed", "EFFORT_RANK", "MAX_DATASETS", "OPTIMAL_TOLERANCE",
           "full_cost", "exact_cheap", "flat_bounds", "tighten_plan", "TIGHTEN_FIRST_S", "TIGHTEN_FULL_S",
           "FLAT_TOL", "LONG", "EXACT_ALL_N", "EXACT_SMALL_N", "EXACT_SMALL_K", "EXACT_TINY_K"]

# how thorough an effort is: a step asking for an effort at most one already run at k has nothing to add
# (every effort of the certificates, EFFORTS, has a rank: tests/core/test_certificates_schedule.py)
EFFORT_RANK = {effort: rank for rank, effort in enumerate(EFFORT_ORDER)}  # the one list (_common/params)

MAX_DATASETS = 32  # data keys a store keeps (least recently offered dropped)


def closed(lower: float, upper: float) -> bool:
    """Whether a feasible value ``lower`` and an upper bound ``upper`` prove optimality (relative gap at
    most :data:`OPTIMAL_TOLERANCE`, the certificates' own)."""
    return bool(np.isfinite(lower) and np.isfinite(upper) and upper - lower <= OPTIMAL_TOLERANCE * abs(upper))


@dataclass(frozen=True)
class Bound:
    """What is known at one k: ``upper >= OPT_k >= lower``; ``x`` (when kept) reaches ``lower``."""

    k: int
    upper: float = np.inf
    kind: str = ""
    upper_effort: str = ""
    probabilistic: bool = False
    lower: float = -np.inf
    support: np.ndarray | None = None
    values: np.ndarray | None = None
    n: int = 0
    optimal: bool = False
    efforts: frozenset = field(default_factory=frozenset)
    time_limit: float = 0.0  # the longest exact proof run at k (seconds)

    @property
    def ratio(self) -> float:
        return self.lower / self.upper if np.isfinite(self.lower) and np.isfinite(self.upper) \
            and self.upper > 0 else np.nan

    def x(self) -> np.ndarray | None:
        """The kept feasible point as a dense vector of length n (None when none is kept)."""
        if self.support is None:
            return None
        out = np.zeros(self.n)
        out[self.support] = self.values
        return out


class BoundsStore:
    """Best bounds and points per (data key, k); see the module docstring.

    ``key_type`` (a class attribute): when set, every data key must be an instance of it (a caller
    keying by a dataclass of its own catches a mixed-up key at once)."""

    key_type: type | None = None

    def __init__(self, max_datasets: int = MAX_DATASETS):
        self.max_datasets = int(max_datasets)
        self._lock = threading.Lock()
        self._data: OrderedDict[Hashable, dict[int, Bound]] = OrderedDict()
        self._version: dict[Hashable, int] = {}

    # ------------------------------------------------------------------ writing
    def offer(self, data: Hashable, k: int, *, upper: float = np.inf, lower: float = -np.inf,
              x: np.ndarray | None = None, kind: str = "", effort: str = "", optimal: bool = False,
              probabilistic: bool = False, time_limit: float = 0.0) -> bool:
        """Keep what improves on the store at ``(data, k)``; True when the bound or the point improved
        (or ``optimal`` became known).

        ``upper``: an upper bound on ``OPT_k``; ``lower``: the variance of ``x`` (a feasible point
        with at most k nonzeros; ``x`` may be None when only the value is known); ``effort``: the
        certificate's effort (recorded as run at k, with ``time_limit`` for "exact").
        """
        if self.key_type is not None and not isinstance(data, self.key_type):
            raise TypeError(f"`data` must be a {self.key_type.__name__}; got {type(data).__name__}")
        k = int(k)
        upper = float(upper) if upper is not None and np.isfinite(upper) else np.inf
        lower = float(lower) if lower is not None and np.isfinite(lower) else -np.inf
        keep_x = None
        if x is not None and np.isfinite(lower):
            xv = np.asarray(x, float).ravel()
            sup = np.flatnonzero(xv)
            if sup.size > k:
                raise ValueError(f"a feasible point at k = {k} has at most {k} nonzeros; got {sup.size}")
            keep_x = (sup, xv[sup].copy(), xv.size)
        with self._lock:
            table = self._data.setdefault(data, {})
            self._data.move_to_end(data)
            while len(self._data) > self.max_datasets:
                old, _ = self._data.popitem(last=False)
                self._version.pop(old, None)
            old = table.get(k, Bound(k=k))
            new = old
            if upper < old.upper:
                new = replace(new, upper=upper, kind=str(kind), upper_effort=str(effort),
                              probabilistic=bool(probabilistic))
            if lower > old.lower:
                new = replace(new, lower=lower)
                new = replace(new, support=keep_x[0], values=keep_x[1], n=keep_x[2]) if keep_x is not None \
                    else replace(new, support=None, values=None, n=0)
            opt = bool(optimal or closed(new.lower, new.upper) or old.optimal)
            efforts = old.efforts | ({str(effort)} if effort else set())
            new = replace(new, optimal=opt, efforts=frozenset(efforts),
                          time_limit=max(old.time_limit, float(time_limit) if effort == EXACT_EFFORT else 0.0))
            table[k] = new
            improved = new.upper < old.upper or new.lower > old.lower or (new.optimal and not old.optimal)
            if improved:
                self._version[data] = self._version.get(data, 0) + 1
            return improved

    def forget(self, data: Hashable) -> bool:
        """Drop everything known about ``data``."""
        with self._lock:
            self._version.pop(data, None)
            return self._data.pop(data, None) is not None

    # ------------------------------------------------------------------ reading
    def get(self, data: Hashable, k: int) -> Bound | None:
        """What was offered at exactly ``(data, k)`` (no envelope)."""
        with self._lock:
            return self._data.get(data, {}).get(int(k))

    def known(self, data: Hashable) -> dict[int, Bound]:
        """Every stored k of ``data``."""
        with self._lock:
            return dict(self._data.get(data, {}))

    def version(self, data: Hashable) -> int:
        """Grows by one with every improvement of ``data``'s bounds (a reader redraws when it changed)."""
        with self._lock:
            return self._version.get(data, 0)

    def ran(self, data: Hashable, k: int, effort: str, time_limit: float = 0.0) -> bool:
        """Whether a certificate of ``effort`` (or a more thorough one) already ran at ``(data, k)``;
        for "exact", one with a time limit at least ``time_limit``."""
        b = self.get(data, k)
        if b is None:
            return False
        if effort == EXACT_EFFORT:
            return EXACT_EFFORT in b.efforts and b.time_limit >= float(time_limit)
        rank = EFFORT_RANK.get(effort, 0)
        return any(EFFORT_RANK.get(e, -1) >= rank for e in b.efforts)

    def band(self, data: Hashable, ks: Sequence[int]) -> dict:
        """The monotone envelope of everything stored for ``data``, at ``ks``.

        Returns a dict of arrays in the order of ``ks``: ``upper`` (inf: none), ``lower`` (-inf:
        none), ``upper_from`` / ``lower_from`` (the stored k that proved each side; -1: none),
        ``optimal`` (a proof at that k, or the envelope closing the gap), ``kind``,
        ``probabilistic`` (of the bound used) and ``ratio``.
        """
        table = self.known(data)
        ks = [int(k) for k in ks]
        stored = sorted(table)
        all_k = stored + ks
        up = [table[k].upper for k in stored] + [np.inf] * len(ks)
        lo = [table[k].lower for k in stored] + [-np.inf] * len(ks)
        env = monotone_envelope(all_k, up, lo)
        sl = slice(len(stored), None)
        upper, lower = env["upper"][sl], env["lower"][sl]
        ufrom, lfrom = env["upper_from"][sl], env["lower_from"][sl]
        optimal = np.array([(k in table and table[k].optimal) or closed(lo_, u)
                            for k, u, lo_ in zip(ks, upper, lower)], bool)
        kind = [table[int(f)].kind if f >= 0 else "" for f in ufrom]
        prob = np.array([bool(table[int(f)].probabilistic) if f >= 0 else False for f in ufrom], bool)
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = np.where(np.isfinite(upper) & np.isfinite(lower) & (upper > 0), lower / upper, np.nan)
        return dict(upper=upper, lower=lower, upper_from=ufrom, lower_from=lfrom, optimal=optimal, kind=kind,
                    probabilistic=prob, ratio=ratio)

    def at(self, data: Hashable, k: int) -> dict:
        """:meth:`band` at one k, as scalars (plus ``x``: the best point at any stored ``k' <= k``)."""
        b = self.band(data, [int(k)])
        out = {name: (v[0] if isinstance(v, np.ndarray | list) else v) for name, v in b.items()}
        out["x"] = self.best_x(data, k)
        return out

    def best_x(self, data: Hashable, k: int) -> np.ndarray | None:
        """The kept point of largest variance among the stored ``k' <= k`` (feasible at k)."""
        table = self.known(data)
        found = [b for kk, b in table.items() if kk <= int(k) and b.support is not None]
        return max(found, key=lambda b: b.lower).x() if found else None


# ------------------------------------------------------------------ the cost model and the schedule
# where the tightening tries a proof of optimality (see exact_cheap)
EXACT_ALL_N, EXACT_SMALL_N, EXACT_SMALL_K, EXACT_TINY_K = 120, 1000, 10, 5

# The tightening's "full" steps come in two passes.  A "full" certificate costs little at small k on gene
# data and a lot in between (CPU s, one thread, from the "auto" bound and point: MLL k = 4, 10: 4, 8 s,
# ratio 0.981 -> 1.000, 0.979 -> 0.986; k = 57, 220, 848, 3,266: over 60 s each; a 75 x 7,000 upload
# k = 4: 1.3 s, 0.960 -> 0.970; k = 44, 157, 558, 2,001: over 60 s each), and at the largest k of the
# axis (k = n: MLL 10.5 s, 0.916 -> 0.941; the upload 13.5 s, 0.781 -> 0.848), and its bound serves every
# smaller k whose own bound is no better (monotone envelope).  So the first pass takes the cheapest k first,
# then the largest k, and abandons a step after TIGHTEN_FIRST_S CPU seconds; the second pass gives what timed
# out TIGHTEN_FULL_S (on a 75 x 7,000 log-normal matrix "full" lifts k = 44 from 0.609 to 0.677 in 17 CPU s).
TIGHTEN_FIRST_S = 20.0
TIGHTEN_FULL_S = 60.0
# a bound within this relative distance of the band's bound at its largest k is "flat": the relaxation
# proves no more at k than at the largest k (gene data above k ~ 500: MLL's "auto" bounds at k >= 3,266
# are within 1e-4 of the one at k = 12,582, the upload's at k >= 2,001 of the one at 7,000), so a step at
# k rarely beats the one at the largest k, whose bound serves them all: such k come last
FLAT_TOL = 1e-3
LONG = "long"  # the third field of a second-pass step ("full", k, LONG)


def exact_cheap(n: int, k: int) -> bool:
    """Where the tightening tries a proof of optimality (branch and bound): every k on up to
    :data:`EXACT_ALL_N` features (LRS, 93: every k under a second), k <= :data:`EXACT_SMALL_K` on up to
    :data:`EXACT_SMALL_N` (CBCL, 361: k <= 10 in seconds each), and k <= :data:`EXACT_TINY_K` on any
    data (MLL: k <= 5 within a minute each)."""
    return n <= EXACT_ALL_N or (n <= EXACT_SMALL_N and k <= EXACT_SMALL_K) or k <= EXACT_TINY_K


def full_cost(n: int, k: int) -> float:
    """The relative cost of a "full" certificate at k on n features, to order the tightening's steps
    (cheapest first): its DNN works on all n features when n is at most the dense limit
    (``_DENSE_MAX_N``), else on the split bound's screened set (``screened_size`` with "full"'s settings,
    at most the dense limit), and an iteration costs the square of that size."""
    n, k = int(n), int(k)
    size = n if n <= _DENSE_MAX_N else min(screened_size(n, k, _EFFORT["full"]), _DENSE_MAX_N)
    return float(size) ** 2


def flat_bounds(ks: Sequence[int], upper) -> np.ndarray:
    """Which of ``ks`` have a bound no better (within :data:`FLAT_TOL`) than the one at the largest of
    them: there the relaxation, not the effort, limits the certificate (see :data:`FLAT_TOL`).  The
    largest k is flat by definition; a k without a finite bound is not."""
    up = np.asarray(upper, float)
    ks = np.asarray(ks, int)
    if up.size == 0:
        return np.zeros(0, bool)
    top = up[int(np.argmax(ks))]
    if not np.isfinite(top):
        return ks == ks.max()
    return np.isfinite(up) & (up >= (1.0 - FLAT_TOL) * top)


def tighten_plan(ks: Sequence[int], upper, ratio, n: int) -> list[tuple]:
    """The order of the tightening's steps, from the band now (pure: ``ks`` with the store's
    ``upper`` and certified ``ratio`` at each, nan where none; ``n`` features):

    1. ``("full", k)`` — "full", capped at :data:`TIGHTEN_FIRST_S` CPU s — at the k of least
       :func:`full_cost` (loosest first), then at the largest k (its bound serves every flat k), then
       at the other k whose bound is not flat (:func:`flat_bounds`; only where the cost grows with k),
       cheapest first, loosest first among equal costs (dense data: every k costs the same, so this is
       every k, loosest first);
    2. ``("exact", k)`` where :func:`exact_cheap`, loosest first;
    3. ``("full", k, LONG)`` — "full", capped at :data:`TIGHTEN_FULL_S` — at the same k, loosest first
       (it computes only where the first pass timed out), then at the flat k, loosest first.

    A k without a ratio counts as the loosest."""
    ks = [int(k) for k in ks]
    if not ks:
        return []
    r = np.nan_to_num(np.asarray(ratio, float), nan=-1.0).tolist()
    cost = [full_cost(n, k) for k in ks]
    # flat k wait only where a step's cost grows with k (the split bound of large n: there a flat k is
    # among the dearest); on dense data every k costs the same and a step at a flat k may prove it optimal
    flat = flat_bounds(ks, upper).tolist() if full_cost(n, 1) < full_cost(n, n) else [False] * len(ks)
    top = int(np.argmax(ks))
    flat[top] = False  # the largest k: flat by definition, and the one step that tightens the flat ones
    least = min(cost)
    loose = sorted(range(len(ks)), key=lambda i: (r[i], ks[i]))
    group = [0 if c == least else 1 if i == top else 2 for i, c in enumerate(cost)]
    cheap = sorted(range(len(ks)), key=lambda i: (group[i], cost[i], r[i], ks[i]))
    first = [("full", ks[i]) for i in cheap if not flat[i]]
    exact = [(EXACT_EFFORT, ks[i]) for i in loose if exact_cheap(n, ks[i])]
    second = [("full", ks[i], LONG) for i in loose if not flat[i]] \
        + [("full", ks[i], LONG) for i in loose if flat[i]]
    return first + exact + second
