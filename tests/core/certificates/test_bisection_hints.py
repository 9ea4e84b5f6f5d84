"""Issue 39, fourteenth round: inside :func:`nspca_core.certificates.anchor.bisection_hints` (one thin certificate,
:func:`nspca_core.certificates.route.certify_thin`) an anchored bisection whose bracket another one of the block
searched first tests the two midpoints where that one's path ended (:func:`.anchor._hinted`), and runs the whole
loop only when they do not bracket.  Properties: every hinted bound is proved (at least OPT, brute force on thin
data), never looser than the loop without hints, the same floats where the loop takes the hint's path, and the
count of tests on both sides of the rule (2 where the hint holds, the loop's own plus the failed hint's where not)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core.certificates import anchor as anc
from nspca_core.certificates.anchor import AnchorRows, anchored_bisection, anchored_rowsum_test, bisection_hints

from tests.bruteforce import brute_opt


def _thin(m: int, n: int, seed: int) -> np.ndarray:
    """The covariance of m centered samples of n features (rank < m <= n: thin data), a correlated block first."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n)) * rng.uniform(0.3, 2.0, n)
    X[:, : n // 2] += rng.standard_normal((m, 1)) * rng.uniform(0.5, 2.0)
    X -= X.mean(axis=0)
    return X.T @ X / m


def _bracket(A: np.ndarray, k: int, frac: float):
    """A feasible value (``frac`` x OPT, brute force) and the variance sum's bound above it (proved when the test
    proves it: else None)."""
    opt, _ = brute_opt(A, k)
    lower = frac * opt
    hi = float(np.sort(np.diag(A))[-k:].sum())
    rows = AnchorRows(A, k)
    if not (hi > lower > 0) or not anchored_rowsum_test(rows, hi)[0]:
        return None
    return opt, lower, hi


class _Count:
    """Counts :func:`anchored_rowsum_test` calls made by the bisection (the rule's effort)."""

    def __init__(self, monkeypatch):
        self.n = 0
        real = anc.anchored_rowsum_test

        def counted(*a, **kw):
            self.n += 1
            return real(*a, **kw)

        monkeypatch.setattr(anc, "anchored_rowsum_test", counted)


@settings(max_examples=25, deadline=None)
@given(m=st.integers(4, 8), n=st.integers(10, 14), k=st.integers(2, 5), seed=st.integers(0, 2**31 - 1),
       frac=st.sampled_from([1.0, 0.999, 0.99]), sub=st.integers(0, 4), jitter=st.sampled_from([0.0, 1e-12]))
def test_hinted_bisection_is_proved_and_never_looser(m, n, k, seed, frac, sub, jitter):
    """A screen's bisection (the top-variance features, as the eager route's 2 k screen) leaves its path; the
    whole matrix's (the grown screen) on the same bracket (or one within its rounding) takes it first.  Its bound is
    at least OPT (brute force), at most the bound without hints, and where equal the same floats throughout."""
    A = _thin(m, n, seed)
    got = _bracket(A, k, frac)
    if got is None:
        return
    opt, lower, hi = got
    S = np.sort(np.argsort(-np.diag(A), kind="stable")[: max(k + 1, n - sub - 1)])
    rel = 1e-3
    lo1, hi1 = lower * (1 + jitter), hi * (1 + jitter)
    plain = anchored_bisection(AnchorRows(A, k), lo1, hi1, rel)
    with bisection_hints():
        rs = AnchorRows(A[np.ix_(S, S)], k)
        if anchored_rowsum_test(rs, hi)[0]:
            anchored_bisection(rs, lower, hi, rel)
        hinted = anchored_bisection(AnchorRows(A, k), lo1, hi1, rel)
    assert hinted[0] >= opt * (1 - 1e-9)
    assert hinted[0] <= plain[0]
    if hinted[0] == plain[0]:
        assert hinted[1] == plain[1]
        assert (hinted[2] is None) == (plain[2] is None)
        if plain[2] is not None:
            assert np.array_equal(hinted[2], plain[2])


def _qualifying(max_seed: int = 200):
    """A thin case whose bisection is proofs, then one failure (the path a hint records), found by seed."""
    for seed in range(max_seed):
        A = _thin(6, 12, seed)
        got = _bracket(A, 3, 0.999)
        if got is None:
            continue
        _, lower, hi = got
        if hi <= lower * 1.1:
            continue  # (the narrow probe would move the bracket)
        rows = AnchorRows(A, 3)
        lo, h, r_lo, outcomes = lower, hi, None, []
        for _ in range(12):
            if h <= lo * 1.001:
                break
            mid = float(np.sqrt(lo * h))
            ok, r = anchored_rowsum_test(rows, mid, r_lo)
            outcomes.append(ok)
            if ok:
                h = mid
            else:
                lo, r_lo = mid, r
        if len(outcomes) >= 3 and all(outcomes[:-1]) and not outcomes[-1]:
            return A, lower, hi
    raise AssertionError("no qualifying seed")


def test_counts_where_the_hint_holds(monkeypatch):
    """The same bisection twice in a block: the second runs 2 tests (the hint's g and its failure below) instead
    of the loop's, with the loop's floats (bound, last failure, its ratios)."""
    A, lower, hi = _qualifying()
    rows = AnchorRows(A, 3)
    count = _Count(monkeypatch)
    plain = anchored_bisection(rows, lower, hi, 1e-3)
    loop_tests = count.n
    with bisection_hints():
        first = anchored_bisection(rows, lower, hi, 1e-3)
        count.n = 0
        second = anchored_bisection(rows, lower, hi, 1e-3)
    assert loop_tests >= 3 and count.n == 2
    for got in (first, second):
        assert got[0] == plain[0] and got[1] == plain[1] and np.array_equal(got[2], plain[2])


def test_counts_where_the_hint_fails(monkeypatch):
    """A hint whose g does not hold on these rows (a path of proofs down to just above a feasible value at OPT):
    one test more than the loop's, then the loop's own floats."""
    found = 0
    for seed in range(60):
        A = _thin(6, 12, seed)
        got = _bracket(A, 3, 1.0)
        if got is None:
            continue
        opt, lower, hi = got
        rows = AnchorRows(A, 3)
        count = _Count(monkeypatch)
        plain = anchored_bisection(rows, lower, hi, 1e-3)
        loop_tests = count.n
        # the path "every test proves" to the loop's resolution: g just above lower, at OPT
        p, h = 0, hi
        while h > lower * 1.001 and p < 12:
            h, p = float(np.sqrt(lower * h)), p + 1
        if hi <= lower * 1.1 or anchored_rowsum_test(rows, h)[0]:
            continue  # (the narrow probe moves the bracket; g proved here: not this side of the rule)
        with bisection_hints():
            anc._HINTS.get()[(3, 1e-3, 12)] = [(lower, hi, p, 0)]
            count.n = 0
            hinted = anchored_bisection(rows, lower, hi, 1e-3)
        assert count.n == loop_tests + 1
        assert hinted[0] == plain[0] and hinted[1] == plain[1]
        assert (hinted[2] is None) == (plain[2] is None)
        found += 1
    assert found >= 3


def test_no_hints_outside_a_block():
    """Outside a block nothing is recorded or consulted (the other routes' bisections as before)."""
    assert anc._HINTS.get() is None
    with bisection_hints():
        assert anc._HINTS.get() == {}
    assert anc._HINTS.get() is None
