"""Issue 39, fourteenth round: the row sums of a test's start are computed once for the tests that share it
(:func:`nspca_core.certificates.anchor._first_sums`: a bisection after each proof, the first two tests from the
all-ones start, a hinted bisection's two).  The same floats as computing them again, whatever the order of
tests and starts, and the sums handed out are the caller's own (scaled in place without touching the record)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core.certificates import anchor as anc
from nspca_core.certificates.anchor import AnchorRows, anchored_bisection, anchored_rowsum_test

from tests.bruteforce import brute_opt


def _thin(m: int, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n)) * rng.uniform(0.3, 2.0, n)
    X -= X.mean(axis=0)
    return X.T @ X / m


@settings(max_examples=30, deadline=None)
@given(m=st.integers(4, 8), n=st.integers(10, 14), k=st.integers(2, 5), seed=st.integers(0, 2**31 - 1),
       taus=st.lists(st.floats(0.9, 1.6), min_size=1, max_size=6))
def test_first_sums_are_the_plain_sums(m, n, k, seed, taus):
    """Tests at several tau, each from the last failure's ratios or the all-ones start, and a bisection: the same
    proofs, ratios and bound as with the start's sums computed afresh each time; no proof below OPT (brute)."""
    A = _thin(m, n, seed)
    opt, _ = brute_opt(A, k)

    def run():
        rows, out, r = AnchorRows(A, k), [], None
        for t in taus:
            ok, r2 = anchored_rowsum_test(rows, t * opt, r)
            out.append((ok, r2.copy()))
            r = None if ok else r2
        hi = float(np.sort(np.diag(A))[-k:].sum())
        if anchored_rowsum_test(rows, hi)[0] and hi > opt:
            out.append(anchored_bisection(rows, opt * 0.999, hi, 1e-3)[0])
        return out

    cached = run()
    keep = anc._first_sums
    anc._first_sums = lambda rows, r: anc._plain_sums(rows, r)  # (not the fixture: hypothesis runs it many times)
    try:
        fresh = run()
    finally:
        anc._first_sums = keep
    assert len(cached) == len(fresh)
    for a, b in zip(cached, fresh):
        if isinstance(a, tuple):
            assert a[0] == b[0] and np.array_equal(a[1], b[1])
        else:
            assert a == b and a >= opt * (1 - 1e-9)
    for t, (ok, _) in zip(taus, cached):
        assert not ok or t * opt >= opt * (1 - 1e-9)


def test_the_record_is_not_the_callers():
    """The sums handed out twice from one start are equal and distinct arrays (scaling one leaves the other)."""
    A = _thin(6, 12, 0)
    rows = AnchorRows(A, 3)
    r = np.ones(12)
    a = anc._first_sums(rows, r)
    a *= 2.0
    b = anc._first_sums(rows, r)
    assert np.array_equal(b, anc._plain_sums(rows, r)) and not np.shares_memory(a, b)
    assert rows.first is not None and rows.first[0] == r.tobytes()
