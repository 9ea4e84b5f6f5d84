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
    """What running the exact spannogram would cost."""

    n: int
    d: int
    candidates: int
    seconds: float

    @property
    def needs_confirmation(self) -> bool:
        return self.d >= 4 or self.seconds > CONFIRM_S

    @property
    def capped(self) -> bool:
        return self.seconds > CAP_S

    def describe(self) -> str:
        return (f"the exact spannogram at d = {self.d} checks up to 2^{self.d}·C({self.n + 1}, {self.d}) = "
                f"{self.candidates:,} candidate supports, estimated {human_seconds(self.seconds)} "
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


def estimate_exact(n: int, d: int) -> Estimate:
    """Candidate count and estimated seconds of the exact spannogram on n features at rank d."""
    cand = exact_candidates(n, d)
    seconds = 0.0 if d <= 2 else cand * seconds_per_candidate()
    return Estimate(n=int(n), d=int(d), candidates=cand, seconds=float(seconds))


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


def screen_methods(methods: list[str], n: int, d: int, *, key: str) -> list[str]:
    """Drop the exact method when it is too costly, saying why; keep it if the user confirms.

    Draws (with streamlit) a warning and, when the cost is below :data:`CAP_S`,
    a checkbox "Run the exact spannogram anyway".  Returns the methods to run.
    """
    import streamlit as st

    exact = [m for m in methods if m in EXACT]
    if not exact or d <= 2:
        return list(methods)
    est = estimate_exact(n, d)
    if not est.needs_confirmation:
        st.caption(f"Cost: {est.describe()}.")
        return list(methods)
    if est.capped:
        st.warning(f"Left out: {est.describe()} — more than the {CAP_S / 60:.0f}-minute cap. "
                   "Choose d ≤ 3 in the sidebar for the exact method, or use the ε-net, which "
                   "samples directions instead of listing supports.")
        return [m for m in methods if m not in EXACT]
    ok = st.checkbox(f"Run the exact spannogram at d = {d} anyway ({human_seconds(est.seconds)})",
                     value=False, key=f"{key}_exact_ok")
    if not ok:
        st.warning(f"Left out: {est.describe()}. The ε-net gives a (1−ε) guarantee at a fraction "
                   "of the cost; tick the box above to run the exact method anyway.")
        return [m for m in methods if m not in EXACT]
    st.caption(f"Running: {est.describe()}.")
    return list(methods)
