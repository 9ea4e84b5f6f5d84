"""dual.dense_dual asks no witness of the first anchored test's failure (anchor_sums.witness_fails ->
top_test_fails) where ``seen`` already records THAT test (this A object, k, tau), held or failed: its answer is
read free there (dual.top_test's record; issue 39, dense33: a split certificate's light route ran it on A_SS just
before, dlbcl-shaped k = 130, ~0.08 CPU s).  Counted on both sides (the record at exactly that tau: not asked; at
another tau, k or A object: asked as before); the bounds hex-equal to the ones made with the witness asked; every
bound at least the exact optimum (brute force)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core.certificates import anchor_sums, dual
from nspca_core.certificates.budget import BoundReport
from tests.bruteforce import brute_opt
from tests.core.certificates.test_anchor_witness import _case


def _dense_dual(A, k, x, seen, recorded=True):
    """dense_dual as a split certificate's S runs it (need_dual, the effort "auto"), the witness from 1 feature on;
    ``recorded=False``: dual._recorded answering False (the witness asked as before).  (bounds, witness calls)."""
    calls = []
    real = anchor_sums.top_test_fails
    lower = float(x @ A @ x)
    bounds = {"variances": float(np.sort(np.diag(A))[::-1][:k].sum()) * (1 + 1e-12)}
    info: dict = {}
    with __import__("pytest").MonkeyPatch.context() as mp:
        mp.setattr(anchor_sums, "_WITNESS_MIN_N", 1)
        mp.setattr(anchor_sums, "top_test_fails", lambda *a, **kw: calls.append(a) or real(*a, **kw))
        if not recorded:
            mp.setattr(dual, "_recorded", lambda *a: False)
        dual.dense_dual(A, k, x, lower, bounds, info, BoundReport(), "auto", warm=None, callback=None, budget=None,
                        need_dual=True, seen=seen)
    return {b: float(v).hex() for b, v in bounds.items()}, len(calls)


def _first(A, k, x, shift=1.0, other_k=None, copy=False):
    """``seen`` as the light route leaves it: top_test at lower / _DNN_SKIP_AT (times ``shift``; at ``other_k``; on a
    copy of A) recorded; with its verdict."""
    seen: dict = {}
    tau = float(x @ A @ x) / dual._DNN_SKIP_AT * shift
    ok = dual.top_test(A.copy() if copy else A, k if other_k is None else other_k, tau, seen)[1]
    return seen, ok


def test_not_asked_where_recorded_asked_elsewhere():
    """Both verdicts of the recorded test met; the witness asked 0 times where the record is THE test, once where it
    is at another tau (1e-12 relative above), another k or another A object (the threshold of the rule: identity),
    with the same bounds either way, and as with the witness asked."""
    met = {True: 0, False: 0}
    for seed in range(6):
        for k, best in ((3, False), (3, True), (4, True)):
            A, x, _ = _case(seed, 14, k, 1.0, seed % 3)
            x = brute_opt(A, k)[1] if best else x  # (an optimal x: the test at lower / 0.975 often holds there)
            seen, ok = _first(A, k, x)
            b0, n0 = _dense_dual(A, k, x, seen)
            assert n0 == 0
            reached = _dense_dual(A, k, x, {})[1]  # (1: the anchored stage reached, else the KKT point proved)
            met[bool(ok)] += reached
            b1, n1 = _dense_dual(A, k, x, _first(A, k, x)[0], recorded=False)
            assert b0 == b1 and n1 == (0 if ok else reached)  # (witness_fails itself skips a recorded held test)
            for other in (_first(A, k, x, shift=1 + 1e-12)[0], _first(A, k, x, other_k=k + 1)[0],
                          _first(A, k, x, copy=True)[0], {}):
                b2, n2 = _dense_dual(A, k, x, other)
                assert n2 == reached and b2 == b0
    assert met[True] > 0 and met[False] > 0, met


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(5, 8), k=st.integers(2, 4), kind=st.integers(0, 2))
def test_bounds_above_brute_force(seed, n, k, kind):
    """With the record reused, every bound dense_dual leaves is at least the exact optimum and equals the one made
    with the witness asked."""
    k = min(k, n - 1)
    A, x, _ = _case(seed, n, k, 1.0, kind)
    b0, _ = _dense_dual(A, k, x, _first(A, k, x)[0])
    b1, _ = _dense_dual(A, k, x, _first(A, k, x)[0], recorded=False)
    assert b0 == b1
    opt = brute_opt(A, k)[0]
    scale = max(1.0, float(np.abs(A).max()))
    for v in b0.values():
        assert float.fromhex(v) >= opt - 1e-9 * scale
