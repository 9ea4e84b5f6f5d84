"""S's eager anchored bound in the thin route (:func:`.route.certify_thin`) with its top test last.

:func:`.dual._anchored` (``top_first``) first tests ``top = lower / _DNN_SKIP_AT`` from the all-ones start, only to
learn whether anything is proved, then the test at ``1.001 lower`` and the bisection in ``[1.001 lower, top]``
(warm-started by the failures below each test).  Where a test of that bisection proves, ``top``'s own test decides
nothing: the bound is the smallest midpoint proved, a function of the tests the bisection runs and not of ``top``'s.
Here the same tests run in the same order with the same starts, ``top``'s left out: it runs only where the bisection
proved nothing (it would return ``top``), from the last failure's ratios (valid at ``top``, above that failure:
:func:`.anchor.anchored_rowsum_test`), and where the test at ``1.001 lower`` holds the bisection below it follows as
there.  Issue 39: on 60 x 2,500 genes the cold top test was 13% of ``certify_path``'s CPU (271 tests of ~11 row-sum
iterations each, one per screen and k), and it held at every k measured.

Entered by :func:`top_last` (a block: one thin certificate), read by :func:`.coupled.light_S` (:func:`on`); nothing
is kept after the block, and outside it every route runs :func:`.dual._anchored` as before."""

from __future__ import annotations

import contextlib
import contextvars

import numpy as np

from .anchor import AnchorRows, anchored_bisection, anchored_rowsum_test
from .dual import _NARROW_REL, _anchored, _anchored_at

_ON: contextvars.ContextVar = contextvars.ContextVar("thin_anchor_top_last", default=False)


@contextlib.contextmanager
def top_last():
    """A block (:func:`.route.certify_thin`) whose eager light S bounds (:func:`.coupled.light_S`) search with the
    top test last (:func:`anchored`)."""
    token = _ON.set(True)
    try:
        yield
    finally:
        _ON.reset(token)


def on() -> bool:
    """Whether a :func:`top_last` block is open."""
    return _ON.get()


def anchored(A: np.ndarray, k: int, lower: float, best: float, rel_tol: float, top_ratio: float,
             counts: dict | None = None) -> float | None:
    """:func:`.dual._anchored` with ``top_first`` (``top = lower / top_ratio``), the top test last: the test at
    ``1.001 lower`` from the all-ones start; where it holds, the bisection below it (:func:`.dual._anchored_at`,
    the same call); where it fails, the bisection in ``[1.001 lower, top]`` from its ratios
    (:func:`.anchor.anchored_bisection`, the same call as there with ``top`` taken as proved), and ``top`` itself
    tested (from the last failure's ratios) only where that bisection proved nothing below it.  Returns the bound,
    or None where nothing below ``best`` is proved.  ``counts`` (a dict, optional): gets ``top_tests``, the
    top tests run (0 or 1).

    Valid: every value returned is a tau some test proved (:func:`.anchor.anchored_rowsum_test`), each test
    started from the all-ones ratios or a failure's below it.  The bisection's answer below ``top`` does not
    depend on ``top``'s test (it never tests ``top``), so where ``dual._anchored``'s top test holds, both return
    the same bound; where the bisection proves nothing, this one's is ``top``'s warm test's."""
    top = lower / top_ratio
    if not (np.isfinite(top) and top > 0 and lower > 0 and lower * 1.001 < top):
        return _anchored(A, k, lower, best, rel_tol=rel_tol, top_ratio=top_ratio, top_first=True)
    state = {"rows": AnchorRows(A, k), "tau": -np.inf, "r": None}
    tb = _anchored_at(state, lower, lower * 1.001, rel_tol)
    if tb is None:
        tb, lo, r_lo = anchored_bisection(state["rows"], lower, top, rel_tol, steps=12, tau_lo=state["tau"],
                                          r_lo=state["r"], narrow=min(rel_tol, _NARROW_REL))
        if tb == top:  # (nothing below top proved: top's own test decides, from the last failure's ratios)
            if counts is not None:
                counts["top_tests"] = counts.get("top_tests", 0) + 1
            ok, _ = anchored_rowsum_test(state["rows"], top, r_lo)
            tb = top if ok else None
    return tb if tb is not None and tb < best else None
