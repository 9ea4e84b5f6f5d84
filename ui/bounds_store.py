"""What has been proved, kept for every page, session and visit (issue 28, item 4): the app's wiring.

The store itself is the core's :class:`nspca_core.certificates.schedule.BoundsStore` (best upper
bound and best feasible point per data key and k, read through the monotone envelope; efforts
already run; ``optimal`` when a certificate said so or the gap closed).  Here only what ties it to
the app:

* :class:`DataKey` — which matrix the bounds are about (the dataset's fingerprint and its
  preprocessing) — and :func:`data_key`, which reads it off a job data key (:func:`ui.keys.data_key`);
  the app's store accepts no other key;
* :func:`shared` — one store per server (``st.cache_resource``), offered every certificate the app
  computes (the band of "Variance vs k", its background tightening, "Compare", "Your data", the
  "full" refinement, a proof of optimality) and read by every page and session;
* :func:`offer_certificate` — a certificate unit's dict (:func:`ui.units.certify_unit`) offered to it.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np
import streamlit as st

from nspca_core.certificates import schedule
from nspca_core.certificates.schedule import EFFORT_RANK, MAX_DATASETS, OPTIMAL_TOLERANCE, Bound, closed

__all__ = ["DataKey", "Bound", "BoundsStore", "data_key", "shared", "MAX_DATASETS", "EFFORT_RANK", "closed",
           "offer_certificate", "OPTIMAL_TOLERANCE"]


@dataclass(frozen=True)
class DataKey:
    """Which matrix the bounds are about: the dataset's fingerprint (a digest of the analysed
    matrix) and its preprocessing (kept apart even when two preprocessings give equal matrices)."""

    fingerprint: str
    preprocessing: str


def data_key(dkey: str) -> DataKey | None:
    """The :class:`DataKey` of a job data key ``name/preprocessing/digest`` (:func:`ui.keys.data_key`);
    None for other keys (the tour's ``tour/...`` keys name a picture, not a dataset's matrix)."""
    parts = str(dkey).rsplit("/", 2)
    if len(parts) != 3 or len(parts[2]) != 16 or any(c not in "0123456789abcdef" for c in parts[2]):
        return None
    return DataKey(fingerprint=parts[2], preprocessing=parts[1])


class BoundsStore(schedule.BoundsStore):
    """The core's store, keyed by :class:`DataKey` only (a job key or a string is refused)."""

    key_type = DataKey


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
