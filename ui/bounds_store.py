"""What has been proved, kept for every page, session and visit (issue 28, item 4).

Every certificate the app computes — the band of "Variance vs k", its background tightening, the
certificate of "Compare", "Your data", the "full" refinement, a proof of optimality — is offered
to one :class:`BoundsStore` (:func:`shared`: a ``st.cache_resource`` object, so one per server).
Per (dataset fingerprint, preprocessing, k) it keeps

* the **best upper bound** on ``OPT_k`` (the smallest offered; its kind and the effort that proved it),
* the **best feasible point** (largest variance offered; kept as its support and values: x is k-sparse),
* ``optimal``: a certificate said so, or the kept bound and point close the gap to the core's
  tolerance,
* the efforts already run at that k (so a page does not run them again).

Reading goes through the monotone envelope (:func:`nspca_core.certificates.monotone_envelope`):
``OPT_k`` is nondecreasing in k, so at each k the smallest bound proved at any stored ``k' >= k`` and
the best point found at any stored ``k' <= k`` serve (:meth:`BoundsStore.band`), whichever page or
effort proved them.  Nothing is ever worsened by an offer (an upper bound only decreases, a feasible
value only increases), so concurrent offers in any order end in the same state.

Thread-safe (one lock; the job threads of :mod:`ui.jobs` offer while script threads read).  Only
vectors of length k and scalars are kept; at most :data:`MAX_DATASETS` datasets (least recently
used dropped), and :meth:`BoundsStore.forget` drops an upload whose sessions ended.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import streamlit as st

from nspca_core.certificates import OPTIMAL_TOLERANCE, monotone_envelope

__all__ = ["DataKey", "Bound", "BoundsStore", "data_key", "shared", "MAX_DATASETS", "EFFORT_RANK", "closed",
           "offer_certificate", "OPTIMAL_TOLERANCE"]

MAX_DATASETS = 32
# how thorough an effort is: a unit asking for an effort at most one already run at k has nothing to add
EFFORT_RANK = {"fast": 0, "auto": 1, "full": 2, "exact": 3}


@dataclass(frozen=True)
class DataKey:
    """Which matrix the bounds are about: the dataset's fingerprint (a digest of the analysed
    matrix) and its preprocessing (kept apart even when two preprocessings give equal matrices)."""

    fingerprint: str
    preprocessing: str


def data_key(dkey: str) -> DataKey | None:
    """The :class:`DataKey` of a job data key ``name/preprocessing/digest`` (:func:`ui.live.data_key`);
    None for other keys (the tour's ``tour/...`` keys name a picture, not a dataset's matrix)."""
    parts = str(dkey).rsplit("/", 2)
    if len(parts) != 3 or len(parts[2]) != 16 or any(c not in "0123456789abcdef" for c in parts[2]):
        return None
    return DataKey(fingerprint=parts[2], preprocessing=parts[1])


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


def closed(lower: float, upper: float) -> bool:
    """Whether a feasible value ``lower`` and an upper bound ``upper`` prove optimality (the core's
    relative tolerance, :data:`nspca_core.certificates.OPTIMAL_TOLERANCE`)."""
    return bool(np.isfinite(lower) and np.isfinite(upper) and upper - lower <= OPTIMAL_TOLERANCE * abs(upper))


class BoundsStore:
    """Best bounds and points per (dataset, preprocessing, k); see the module docstring."""

    def __init__(self, max_datasets: int = MAX_DATASETS):
        self.max_datasets = int(max_datasets)
        self._lock = threading.Lock()
        self._data: OrderedDict[DataKey, dict[int, Bound]] = OrderedDict()
        self._version: dict[DataKey, int] = {}

    # ------------------------------------------------------------------ writing
    def offer(self, data: DataKey, k: int, *, upper: float = np.inf, lower: float = -np.inf,
              x: np.ndarray | None = None, kind: str = "", effort: str = "", optimal: bool = False,
              probabilistic: bool = False, time_limit: float = 0.0) -> bool:
        """Keep what improves on the store at ``(data, k)``; True when the bound or the point improved
        (or ``optimal`` became known).

        ``upper``: an upper bound on ``OPT_k``; ``lower``: the variance of ``x`` (a feasible point
        with at most k nonzeros; ``x`` may be None when only the value is known); ``effort``: the
        certificate's effort (recorded as run at k, with ``time_limit`` for "exact").
        """
        if not isinstance(data, DataKey):
            raise TypeError(f"`data` must be a DataKey; got {type(data).__name__}")
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
                          time_limit=max(old.time_limit, float(time_limit) if effort == "exact" else 0.0))
            table[k] = new
            improved = new.upper < old.upper or new.lower > old.lower or (new.optimal and not old.optimal)
            if improved:
                self._version[data] = self._version.get(data, 0) + 1
            return improved

    def forget(self, data: DataKey) -> bool:
        """Drop everything known about ``data`` (an upload whose sessions ended)."""
        with self._lock:
            self._version.pop(data, None)
            return self._data.pop(data, None) is not None

    # ------------------------------------------------------------------ reading
    def get(self, data: DataKey, k: int) -> Bound | None:
        """What was offered at exactly ``(data, k)`` (no envelope)."""
        with self._lock:
            return self._data.get(data, {}).get(int(k))

    def known(self, data: DataKey) -> dict[int, Bound]:
        """Every stored k of ``data``."""
        with self._lock:
            return dict(self._data.get(data, {}))

    def version(self, data: DataKey) -> int:
        """Grows by one with every improvement of ``data``'s bounds (a page redraws when it changed)."""
        with self._lock:
            return self._version.get(data, 0)

    def ran(self, data: DataKey, k: int, effort: str, time_limit: float = 0.0) -> bool:
        """Whether a certificate of ``effort`` (or a more thorough one) already ran at ``(data, k)``;
        for "exact", one with a time limit at least ``time_limit``."""
        b = self.get(data, k)
        if b is None:
            return False
        if effort == "exact":
            return "exact" in b.efforts and b.time_limit >= float(time_limit)
        rank = EFFORT_RANK.get(effort, 0)
        return any(EFFORT_RANK.get(e, -1) >= rank for e in b.efforts)

    def band(self, data: DataKey, ks: Sequence[int]) -> dict:
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

    def at(self, data: DataKey, k: int) -> dict:
        """:meth:`band` at one k, as scalars (plus ``x``: the best point at any stored ``k' <= k``)."""
        b = self.band(data, [int(k)])
        out = {name: (v[0] if isinstance(v, np.ndarray | list) else v) for name, v in b.items()}
        out["x"] = self.best_x(data, k)
        return out

    def best_x(self, data: DataKey, k: int) -> np.ndarray | None:
        """The kept point of largest variance among the stored ``k' <= k`` (feasible at k)."""
        table = self.known(data)
        found = [b for kk, b in table.items() if kk <= int(k) and b.support is not None]
        return max(found, key=lambda b: b.lower).x() if found else None


@st.cache_resource(show_spinner=False)
def shared() -> BoundsStore:
    """The server's store: one object shared by every session (``st.cache_resource``); job
    threads get it from the page that submitted them."""
    return BoundsStore()


def offer_certificate(store: BoundsStore, dkey: str | Hashable, k: int, cert: dict | None, *,
                      effort: str = "", time_limit: float = 0.0) -> bool:
    """Offer a certificate unit's dict (``upper, lower, kind, optimal, probabilistic, x``: what
    :func:`ui.units.certify_unit` returns) for the job data key ``dkey``; False when there is
    nothing to offer (no dict, or a key that names no dataset)."""
    data = data_key(str(dkey)) if not isinstance(dkey, DataKey) else dkey
    if data is None or cert is None:
        return False
    x, lower = cert.get("x"), cert.get("lower", -np.inf)
    if x is not None and np.count_nonzero(x) > int(k):  # not a point of S_k: keep the bound only
        x, lower = None, -np.inf
    return store.offer(data, k, upper=cert.get("upper", np.inf), lower=lower, x=x, kind=cert.get("kind", ""),
                       effort=effort, optimal=bool(cert.get("optimal", False)),
                       probabilistic=bool(cert.get("probabilistic", False)), time_limit=time_limit)
