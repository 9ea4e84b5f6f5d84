"""Settings whose cost is exponential in d: count, estimate, and ask before running.

The exact spannogram lists up to ``2^d · C(n+1, d)`` candidate supports
(Asteris, Papailiopoulos & Dimakis 2014, Prop. 2): cheap at d ≤ 2 (the core
sweeps the circle), polynomial of degree d beyond — 10⁷ candidates on the
64 digit pixels at d = 4, 10¹² on MLL at d = 3.  The pages show the count and
an estimate of the time *before* running; at d ≥ 4, or when the estimate
exceeds :data:`CONFIRM_S`, the exact method is left out unless the user
confirms, and beyond :data:`CAP_S` it is not run at all.

The estimate is ``candidates × seconds per candidate``, the rate measured
once per server process on a small random problem (d = 3, n = 60) with the
core's own ``lowrank_nspca`` — an order of magnitude, said as such.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from math import comb

import numpy as np

__all__ = ["Estimate", "exact_candidates", "seconds_per_candidate", "estimate_exact", "screen_methods",
           "CONFIRM_S", "CAP_S", "EXACT"]

CONFIRM_S = 30.0       # above this (or at d >= 4) the exact method needs a confirmation
CAP_S = 30 * 60.0      # above this it is not offered at all
EXACT = ("spannogram",)  # methods that enumerate the candidate supports exactly


@dataclass(frozen=True)
class Estimate:
    """What running the exact spannogram (or the ε-net) would cost, for ``runs`` runs."""

    n: int
    d: int
    candidates: int
    seconds: float
    method: str = "spannogram"
    eps: float = 0.0
    runs: int = 1

    @property
    def needs_confirmation(self) -> bool:
        return (self.method == "spannogram" and self.d >= 4) or self.seconds > CONFIRM_S

    @property
    def capped(self) -> bool:
        return self.seconds > CAP_S

    def describe(self) -> str:
        times = f" × {self.runs} values of k" if self.runs > 1 else ""
        if self.method == "enet":
            return (f"the ε-net at d = {self.d}, ε = {self.eps} draws {self.candidates:,} random "
                    f"directions (about ε^−d·log n) on {self.n:,} features{times}, estimated "
                    f"{human_seconds(self.seconds)} on this machine")
        return (f"the exact spannogram at d = {self.d} checks up to 2^{self.d}·C({self.n + 1}, {self.d}) = "
                f"{self.candidates:,} candidate supports{times}, estimated {human_seconds(self.seconds)} "
                "on this machine")


def exact_candidates(n: int, d: int) -> int:
    """``2^d · C(n+1, d)``: the bound on the spannogram's candidate supports (the +1 is the zero row)."""
    return 2 ** int(d) * comb(int(n) + 1, int(d))


@functools.lru_cache(maxsize=1)
def seconds_per_candidate() -> float:
    """Seconds per candidate of the core's exact spannogram, measured once (d = 3, n = 60)."""
    from nspca_core.spannogram import lowrank_nspca

    V = np.random.default_rng(0).standard_normal((60, 3))
    lowrank_nspca(V, 5)  # warm-up (imports, first-call costs)
    t0 = time.perf_counter()
    lowrank_nspca(V, 5)
    return max(time.perf_counter() - t0, 1e-6) / exact_candidates(60, 3)


def estimate_exact(n: int, d: int, runs: int = 1) -> Estimate:
    """Candidate count and estimated seconds of the exact spannogram on n features at rank d."""
    cand = exact_candidates(n, d)
    seconds = 0.0 if d <= 2 else cand * seconds_per_candidate() * runs
    return Estimate(n=int(n), d=int(d), candidates=cand, seconds=float(seconds), runs=int(runs))


@functools.lru_cache(maxsize=1)
def seconds_per_sample_feature() -> float:
    """Seconds of the core's ε-net per (direction × feature), measured once (n = 2000, 2000 directions)."""
    from nspca_core.enet import enet_nspca

    V = np.random.default_rng(0).standard_normal((2000, 3))
    enet_nspca(V, 10, samples=200)  # warm-up
    t0 = time.perf_counter()
    enet_nspca(V, 10, samples=2000)
    return max(time.perf_counter() - t0, 1e-6) / (2000 * 2000)


def estimate_enet(n: int, d: int, eps: float, runs: int = 1) -> Estimate:
    """Directions the ε-net draws by default (``nspca_core.enet.enet_samples``) and estimated seconds."""
    from nspca_core.enet import enet_samples

    N = int(enet_samples(int(d), float(eps), int(n)))
    seconds = N * n * seconds_per_sample_feature() * runs
    return Estimate(n=int(n), d=int(d), candidates=N, seconds=float(seconds), method="enet",
                    eps=float(eps), runs=int(runs))


def human_seconds(s: float) -> str:
    if s < 1:
        return "under a second"
    if s < 90:
        return f"~{s:.0f} s"
    if s < 5400:
        return f"~{s / 60:.0f} min"
    if s < 2 * 86400:
        return f"~{s / 3600:.0f} h"
    return f"~{s / 86400:,.0f} days"


def screen_methods(methods: list[str], n: int, d: int, *, key: str, eps: float | None = None,
                   runs: int = 1) -> list[str]:
    """Drop a method whose cost is exponential in d when it is too costly, saying why; keep it if
    the user confirms.

    The exact spannogram (d ≥ 3) and, when ``eps`` is given, the ε-net are
    estimated for ``runs`` runs (e.g. one per value of k).  Draws (with
    streamlit) the count and the estimate, a warning and, below :data:`CAP_S`,
    a checkbox "Run … anyway".  Returns the methods to run.
    """
    import streamlit as st

    out = list(methods)
    checks = []
    if "spannogram" in out and d > 2:
        checks.append(("spannogram", estimate_exact(n, d, runs), "the exact spannogram"))
    if eps is not None and "enet" in out and d > 2:
        checks.append(("enet", estimate_enet(n, d, eps, runs), "the ε-net"))
    for method, est, name in checks:
        if not est.needs_confirmation:
            st.caption(f"Cost: {est.describe()}.")
            continue
        if est.capped:
            st.warning(f"Left out: {est.describe()} — more than the {CAP_S / 60:.0f}-minute cap. "
                       + ("Choose d ≤ 3 in the sidebar for the exact method, or use the ε-net, which "
                          "samples directions instead of listing supports." if method == "spannogram"
                          else "Choose a smaller d or a larger ε in the sidebar, or fewer values of k."))
            out.remove(method)
            continue
        ok = st.checkbox(f"Run {name} at d = {d} anyway ({human_seconds(est.seconds)})", value=False,
                         key=f"{key}_{'exact' if method == 'spannogram' else 'enet'}_ok")
        if ok:
            st.caption(f"Running: {est.describe()}.")
            continue
        st.warning(f"Left out: {est.describe()}. "
                   + ("The ε-net gives a (1−ε) guarantee at a fraction of the cost; "
                      if method == "spannogram" else "A smaller d or a larger ε is much cheaper; ")
                   + "tick the box above to run it anyway.")
        out.remove(method)
    return out
