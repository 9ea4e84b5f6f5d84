"""S's eager anchored bound in the thin route (:func:`.route.certify_thin`) with its top test moved.

:func:`.dual._anchored` (``top_first``) first tests ``top = lower / _DNN_SKIP_AT`` from the all-ones start, only to
learn whether anything is proved, then the test at ``1.001 lower`` (from the all-ones start too) and the bisection in
``[1.001 lower, top]`` (warm-started by the failures below each test).  None of those reads the top test's ratios.
Here the test at ``1.001 lower`` comes first; where it holds (a near-optimal point) the top test is not run at all,
and where it fails the top test starts from its ratios (valid at ``top``, above it): a few row-sum iterations instead
of ~11.  The bisection then as there, the same call.  Issue 39: on 60 x 2,500 genes the cold top test was 13% of
``certify_path``'s CPU (271 tests of ~11 row-sum iterations each, one per screen and k).

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
    top test moved (:func:`anchored`)."""
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
    """:func:`.dual._anchored` with ``top_first`` (``top = lower / top_ratio``), its top test moved: the test at
    ``1.001 lower`` from the all-ones start first; where it holds, the bisection below it (:func:`.dual._anchored_at`,
    the same call) and no top test; where it fails, ``top`` tested from its ratios, None where that fails, else the
    bisection in ``[1.001 lower, top]`` from the same ratios (:func:`.anchor.anchored_bisection`, the same call as
    there).  Returns the bound, or None where nothing below ``best`` is proved.  ``counts`` (a dict, optional): gets
    ``top_tests``, the top tests run (0 or 1).

    Valid: every value returned is a tau some test proved (:func:`.anchor.anchored_rowsum_test`), each test started
    from the all-ones ratios or a failure's below it.  Every test but the top one is ``dual._anchored``'s own call
    with its own start, and none of them reads the top test's ratios, so where both top tests hold (and where the
    test at ``1.001 lower`` holds) both return the same bound.  Where the top test fails, two tests ran where
    ``dual._anchored`` ran one (the top test alone decides that nothing is proved)."""
    top = lower / top_ratio
    if not (np.isfinite(top) and top > 0 and lower > 0 and lower * 1.001 < top):
        return _anchored(A, k, lower, best, rel_tol=rel_tol, top_ratio=top_ratio, top_first=True)
    state = {"rows": AnchorRows(A, k), "tau": -np.inf, "r": None}
    tb = _anchored_at(state, lower, lower * 1.001, rel_tol)
    if tb is None:
        if counts is not None:
            counts["top_tests"] = counts.get("top_tests", 0) + 1
        if not anchored_rowsum_test(state["rows"], top, state["r"])[0]:
            return None
        tb = anchored_bisection(state["rows"], lower, top, rel_tol, steps=12, tau_lo=state["tau"], r_lo=state["r"],
                                narrow=min(rel_tol, _NARROW_REL))[0]
    return tb if tb < best else None
