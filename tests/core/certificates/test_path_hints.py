"""Issue 39, fifteenth round: inside :func:`nspca_core.certificates.path_hints.carried_hints` (certify_path's thin
k, one after the other) an anchored bisection takes the outcome path of an earlier one on a bracket of the same
ratio ``hi / lo`` as a hint (:func:`nspca_core.certificates.anchor._hinted`: the path's failures in order, then its
last proof g from the last failure's ratios).  Properties: every hinted bound is proved (at least OPT, brute force
on thin data), never looser than the loop, the loop's floats where equal; the count of tests on both sides of the
rule (the path's failures + 1 where it holds; the hint's tests + the loop's where it does not); nothing carried
outside a block (certify(k) alone)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core.certificates import anchor as anc
from nspca_core.certificates import path_hints as ph
from nspca_core.certificates.anchor import AnchorRows, anchored_bisection, anchored_rowsum_test, bisection_hints

from tests.bruteforce import brute_opt


def _thin(m: int, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n)) * rng.uniform(0.3, 2.0, n)
    X[:, : n // 2] += rng.standard_normal((m, 1)) * rng.uniform(0.5, 2.0)
    X -= X.mean(axis=0)
    return X.T @ X / m


class _Count:
    def __init__(self, monkeypatch):
        self.n = 0
        real = anc.anchored_rowsum_test

        def counted(*a, **kw):
            self.n += 1
            return real(*a, **kw)

        monkeypatch.setattr(anc, "anchored_rowsum_test", counted)


def _loop_path(rows, lo, hi, rel, steps=12):
    """The loop's outcomes on ``[lo, hi]`` from the all-ones start (no hints): a list of bools."""
    outs, r_lo = [], None
    for _ in range(steps):
        if hi <= lo * (1 + rel):
            break
        mid = float(np.sqrt(lo * hi))
        ok, r = anchored_rowsum_test(rows, mid, r_lo)
        outs.append(ok)
        hi, lo, r_lo = (mid, lo, r_lo) if ok else (hi, mid, r)
    return outs


@settings(max_examples=25, deadline=None)
@given(m=st.integers(4, 8), n=st.integers(9, 13), seed=st.integers(0, 2**31 - 1),
       fracs=st.lists(st.sampled_from([1.0, 0.999, 0.995, 0.98]), min_size=2, max_size=4),
       ratio=st.sampled_from([1.02, 1.1, 1.3]))
def test_carried_bounds_are_proved_and_never_looser(m, n, seed, fracs, ratio):
    """Bisections at k = 2, 3, ... (one bisection_hints block each, as certify_thin at each k of the path) on
    brackets ``[frac OPT_k, ratio frac OPT_k]`` (the same ratio: carried hints apply): each bound at least OPT_k
    (brute force), at most the loop's without hints, the same floats where equal."""
    A = _thin(m, n, seed)
    rel = 1e-3
    with ph.carried_hints():
        for k, frac in enumerate(fracs, start=2):
            opt, _ = brute_opt(A, k)
            lower = frac * opt
            hi = lower * ratio
            if not anchored_rowsum_test(AnchorRows(A, k), hi)[0]:
                continue
            token = ph._CARRIED.set(None)  # (the loop alone, nothing carried or recorded)
            try:
                plain = anchored_bisection(AnchorRows(A, k), lower, hi, rel)
            finally:
                ph._CARRIED.reset(token)
            with bisection_hints():
                got = anchored_bisection(AnchorRows(A, k), lower, hi, rel)
            assert got[0] >= opt * (1 - 1e-9)
            assert got[0] <= plain[0]
            if got[0] == plain[0]:
                assert got[1] == plain[1] and (got[2] is None) == (plain[2] is None)
                if plain[2] is not None:
                    assert np.array_equal(got[2], plain[2])


def test_counts_where_the_carried_path_holds(monkeypatch):
    """The same bracket ratio at a later k whose loop takes the carried path: the path's failures + 1 tests (g
    last, from the last failure's ratios), against the loop's every test; the loop's floats.  Found over seeds:
    at least 3 cases, one with a failure before a proof (a path the certificate's own hints never record)."""
    found, mixed = 0, 0
    for seed in range(80):
        A = _thin(6, 12, seed)
        k = 3
        opt, _ = brute_opt(A, k)
        lower, rel = 0.995 * opt, 1e-3
        hi = lower * 1.2
        rows = AnchorRows(A, k)
        if not anchored_rowsum_test(rows, hi)[0]:
            continue
        outs = _loop_path(rows, lower, hi, rel)
        if not any(outs):
            continue
        count = _Count(monkeypatch)
        plain = anchored_bisection(rows, lower, hi, rel)
        loop_tests = count.n
        with ph.carried_hints():
            ph.carry(lower, hi, rel, 12, tuple(outs))
            count.n = 0
            with bisection_hints():
                got = anchored_bisection(AnchorRows(A, k), lower, hi, rel)
        fails = len(outs) - sum(outs)
        assert loop_tests == len(outs)
        assert count.n in (fails + 1, fails + 2)  # (+1: g from the last failure's ratios gave up, then its own start)
        assert got[0] == plain[0] and got[1] == plain[1]
        assert (got[2] is None) == (plain[2] is None)
        if plain[2] is not None:
            assert np.array_equal(got[2], plain[2])
        found += count.n == fails + 1 and count.n < loop_tests
        mixed += any(not o for o in outs[: max(i for i, o in enumerate(outs) if o)])
        monkeypatch.undo()
    assert found >= 3 and mixed >= 1


def test_counts_where_the_carried_path_fails(monkeypatch):
    """A carried path whose g cannot hold here (every test proves, down to just above a feasible value at OPT):
    g's one test, then the loop's own tests and floats."""
    found = 0
    for seed in range(60):
        A = _thin(6, 12, seed)
        k = 3
        opt, _ = brute_opt(A, k)
        lower, rel = opt, 1e-3
        hi = lower * 1.2
        rows = AnchorRows(A, k)
        if not anchored_rowsum_test(rows, hi)[0]:
            continue
        p, h = 0, hi
        while h > lower * (1 + rel) and p < 12:
            h, p = float(np.sqrt(lower * h)), p + 1
        if anchored_rowsum_test(rows, h)[0]:
            continue  # (g proved here: not this side of the rule)
        count = _Count(monkeypatch)
        plain = anchored_bisection(rows, lower, hi, rel)
        loop_tests = count.n
        with ph.carried_hints():
            ph.carry(lower * 7.0, hi * 7.0, rel, 12, (True,) * p)  # (another k's bracket, the same ratio)
            count.n = 0
            with bisection_hints():
                got = anchored_bisection(rows, lower, hi, rel)
        assert count.n == loop_tests + 1
        assert got[0] == plain[0] and got[1] == plain[1]
        found += 1
        monkeypatch.undo()
    assert found >= 3


def test_nothing_carried_outside_a_block():
    """Outside carried_hints nothing is recorded or returned (certify(k) alone); a block starts empty and is gone
    after; a bracket of another ratio gets nothing."""
    assert ph._CARRIED.get() is None
    ph.carry(1.0, 1.1, 1e-3, 12, (True,))
    assert ph.carried(1.0, 1.1, 1e-3, 12) == []
    with ph.carried_hints():
        assert ph.carried(1.0, 1.1, 1e-3, 12) == []
        ph.carry(1.0, 1.1, 1e-3, 12, (True, False))
        assert ph.carried(2.0, 2.2, 1e-3, 12) == [(2.0, 2.2, (True, False))]
        assert ph.carried(2.0, 2.3, 1e-3, 12) == []
        assert ph.carried(2.0, 2.2, 1e-4, 12) == []
    assert ph._CARRIED.get() is None
