"""What the "Variance vs k" page computes from its jobs' results, without drawing anything.

The page (``pages/variance_vs_k.py``) submits one path job per algorithm and one certify job
(:mod:`ui.work`), then draws the figure, numbers and table from what they have done so far and
what :mod:`ui.bounds_store` holds.  Everything between the jobs' results and the figure lives
here: the axis of k (:func:`k_grid`), the certified band (:func:`band`: per-k certificates,
the store's bounds, the monotone envelope, a bound below a feasible answer refused), the
tightening's status line (:func:`tighten_status`) and the frames the figure and the download
read (:func:`curves_frame`, :func:`band_frame`, :func:`table`).  No Streamlit call: it is
tested without a browser (``tests/ui/test_variance_k.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from nspca_core.certificates.monotone import monotone_envelope
from nspca_core.certificates.schedule import closed
from ui.work import certificate

__all__ = ["Band", "band", "band_frame", "curve_values", "curves_frame", "k_grid", "monotone_band",
           "table", "tighten_status", "variance_of"]


def k_grid(n: int, points: int, current: int | None = None) -> tuple[int, ...]:
    """Exactly ``min(points, n)`` values of k in 1..n, denser at small k, with ``current``.

    Half are spread linearly, half geometrically (small k, where curves bend,
    gets its share); rounding collisions are topped up by the integers
    farthest from those already chosen.  ``current`` (the sidebar's k)
    replaces the nearest interior value, so the count stays ``points``.
    """
    points = max(1, min(int(points), n))
    if points >= n:
        return tuple(range(1, n + 1))
    lin = np.linspace(1, n, points // 2 + 1)
    geo = np.geomspace(1, n, points - points // 2)
    ks = np.unique(np.clip(np.round(np.concatenate([lin, geo])), 1, n).astype(int))[:points]
    if ks.size > points:
        ks = ks[np.unique(np.round(np.linspace(0, ks.size - 1, points)).astype(int))]
    rest = np.arange(1, n + 1)
    while ks.size < points:
        free = np.setdiff1d(rest, ks)
        gap = np.min(np.abs(free[:, None] - ks[None, :]), axis=1)
        ks = np.sort(np.append(ks, free[int(np.argmax(gap))]))
    if current is not None and 1 <= current <= n and current not in ks:
        interior = np.flatnonzero((ks != ks.min()) & (ks != ks.max())) if points > 2 else np.arange(ks.size)
        j = interior[int(np.argmin(np.abs(ks[interior] - current)))]
        ks[j] = current
        ks = np.sort(ks)
    return tuple(int(k) for k in ks)


def variance_of(X: np.ndarray, x: np.ndarray) -> float:
    """xᵀAx with A = XᵀX/m, without forming A."""
    y = X @ x
    return float(y @ y) / X.shape[0]


def monotone_band(ks, upper: np.ndarray, best: np.ndarray):
    """OPT is nondecreasing in k: at each k the smallest bound proved at any k' >= k and the best
    answer found at any k' <= k (a point with fewer nonzeros is feasible at k)
    (:func:`nspca_core.certificates.monotone.monotone_envelope`).  Returns ``(upper, best,
    (upper_from_k, best_from_k))``; nan where there is none."""
    env = monotone_envelope(ks, upper, best)
    up = np.where(np.isfinite(env["upper"]), env["upper"], np.nan)
    lo = np.where(np.isfinite(env["lower"]), env["lower"], np.nan)
    return up, lo, (env["upper_from"], env["lower_from"])


def curve_values(results: Mapping, ks: Sequence[int], field: str = "variance") -> np.ndarray:
    """``results[k][field]`` for each k of ``ks`` (a path job's results), nan where not done."""
    return np.array([results[k][field] if k in results else np.nan for k in ks], float)


@dataclass(frozen=True)
class Band:
    """The certified band at each k of the axis (arrays of length ``len(ks)``).

    ``best``: the best feasible variance (any algorithm, a certificate's own answer, the store);
    ``best_idx``: the algorithm (column of the values) with the best curve value, -1 where none;
    ``upper``: the certified upper bound on the optimum (nan where none, or where it was refused);
    ``optimal``: provably optimal; ``kinds``: each bound's kind; ``probabilistic``: some bound
    holds with high probability only; ``full``: how many k have the full certificate (the others
    the quick first bound); ``from_k``: ``(upper_from_k, best_from_k)``, the k that proved each
    value (None without certificates); ``refused``: the k where a bound fell below a feasible
    answer (not shown: it cannot hold).
    """

    best: np.ndarray
    best_idx: np.ndarray
    upper: np.ndarray
    optimal: np.ndarray
    kinds: list
    probabilistic: bool = False
    full: int = 0
    from_k: tuple | None = None
    refused: tuple = ()

    @property
    def proved(self) -> np.ndarray:
        """Where the band has both edges."""
        return np.isfinite(self.upper) & np.isfinite(self.best)


def band(ks: Sequence[int], values: np.ndarray, cert_results: Mapping | None = None,
         stored: Mapping | None = None) -> Band:
    """The band from the curves ``values`` (len(ks) × algorithms, nan where not done), the
    certify job's results (None: no band asked) and the store's band at ``ks``
    (:meth:`ui.bounds_store.BoundsStore.band`, None when there is none).

    Every value used is a valid bound or a feasible answer at its k; the envelope then takes
    the smallest bound at any k' >= k and the best answer at any k' <= k.
    """
    K = len(ks)
    values = np.asarray(values, float).reshape(K, -1)
    finite = np.where(np.isfinite(values), values, -np.inf)
    have = np.isfinite(values).any(axis=1)
    best = np.where(have, finite.max(axis=1, initial=-np.inf), np.nan)
    best_idx = np.where(have, np.argmax(finite, axis=1) if values.shape[1] else -1, -1)
    upper, optimal, kinds = np.full(K, np.nan), np.zeros(K, bool), [""] * K
    if cert_results is None:
        return Band(best, best_idx, upper, optimal, kinds)
    probabilistic = False
    full = sum(int(k) in cert_results for k in ks)
    for j, k in enumerate(ks):
        c = certificate(cert_results, k)  # the full one, or the quick first bound
        if c is None:
            continue
        upper[j], optimal[j], kinds[j] = c["upper"], c["optimal"], c["kind"]
        probabilistic |= bool(c["probabilistic"])
        if np.isfinite(c["lower"]):  # the certificate may have found a better x
            best[j] = np.fmax(best[j], c["lower"])
    if stored is not None:  # everything proved on this data, at any k, by any page or effort
        tighter = np.isfinite(stored["upper"]) & ~(upper <= stored["upper"])
        upper = np.where(tighter, stored["upper"], upper)
        kinds = [kd if t else kinds[j] for j, (t, kd) in enumerate(zip(tighter, stored["kind"]))]
        probabilistic |= bool(np.any(stored["probabilistic"] & tighter))
        best = np.where(np.isfinite(stored["lower"]), np.fmax(best, stored["lower"]), best)
        optimal = optimal | stored["optimal"]
    upper, best, from_k = monotone_band(ks, upper, best)
    if stored is not None:  # the store's envelope reaches k outside the axis: its own k proved them
        from_k = (np.where(np.isfinite(stored["upper"]) & (stored["upper"] <= upper), stored["upper_from"],
                           from_k[0]), from_k[1])
    optimal = optimal | np.array([closed(b, u) for b, u in zip(best, upper)], bool)
    bad = upper < best * (1 - 1e-9)  # a bound below a feasible value cannot hold
    upper = np.where(bad, np.nan, upper)
    optimal = optimal & ~bad
    return Band(best, best_idx, upper, optimal, kinds, probabilistic, full, from_k,
                tuple(int(ks[i]) for i in np.flatnonzero(bad)))


def tighten_status(results: Mapping, start: Mapping, ks, ratio_now: np.ndarray) -> str:
    """The tightening's status line: "37 of 199 k improved, worst ratio 0.930 → 0.960"
    (improved: the certified ratio at k rose above the one when it started); ``results``: the
    tightening job's."""
    before = np.array([start.get(int(k), np.nan) for k in ks], float)
    now = np.asarray(ratio_now, float)
    better = int(np.sum(np.isfinite(now) & (~np.isfinite(before) | (now > before * (1 + 1e-9)))))
    worst0 = np.nanmin(before) if np.isfinite(before).any() else np.nan
    worst1 = np.nanmin(now) if np.isfinite(now).any() else np.nan
    proved = sum(1 for r in results.values() if r is not None and r.get("effort") == "exact"
                 and not r.get("skipped"))
    return (f"{better} of {len(ks)} k improved, worst ratio {worst0:.3f} → {worst1:.3f}"
            + (f"; {proved} exact proofs tried" if proved else ""))


def curves_frame(methods: Sequence[str], ks, values: np.ndarray, lam1: float,
                 upper: np.ndarray | None = None) -> pd.DataFrame:
    """The figure's curves: one row per (method, k done), variance ÷ λ₁, and the certified
    ratio at k when there is a band (``upper``)."""
    frames = []
    for i, mth in enumerate(methods):
        ok = np.isfinite(values[:, i])
        frame = pd.DataFrame(dict(method=mth, k=np.asarray(ks)[ok], value=values[ok, i] / lam1))
        if upper is not None:
            frame["ratio"] = values[ok, i] / upper[ok]
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def band_frame(ks, b: Band, lam1: float) -> pd.DataFrame | None:
    """The figure's band (÷ λ₁) where both edges are known; None where none is."""
    proved = b.proved
    if not proved.any():
        return None
    return pd.DataFrame(dict(k=np.asarray(ks)[proved], lower=b.best[proved] / lam1,
                             upper=b.upper[proved] / lam1, ratio=b.best[proved] / b.upper[proved],
                             optimal=b.optimal[proved]))


def table(ks, methods: Sequence[str], values: np.ndarray, seconds: np.ndarray, b: Band, lam1: float, *,
          certified: bool, paper: np.ndarray | None = None) -> pd.DataFrame:
    """The page's table and CSV: each algorithm's variance and seconds at each k, the best, λ₁,
    and with a band (``certified``) its bound, kind, the k that proved it, the ratio and optimality;
    the paper's bound when asked (``paper``)."""
    out = pd.DataFrame({"k": ks})
    for i, mth in enumerate(methods):
        out[f"variance_{mth}"] = values[:, i]
        out[f"seconds_{mth}"] = seconds[:, i]
    out["best_variance"] = b.best
    out["lambda1"] = lam1
    if certified:
        out["upper_bound"] = b.upper
        out["bound_kind"] = b.kinds
        out["upper_from_k"], out["best_from_k"] = b.from_k
        out["certified_ratio"] = b.best / b.upper
        out["provably_optimal"] = b.optimal
    if paper is not None:
        out["paper_bound"] = paper
    return out
