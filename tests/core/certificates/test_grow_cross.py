"""Issue 39 (helper wide23): the split certificate's larger screen (``screens.grown``) takes from T the columns
most covariant with the own screen (``grow_cross``), not those of the next largest variances.  Since helper wide26
the screen is chosen rather than grown: x's support and the first ``grow_cross._VARIANCE_SHARE`` of the own screen by
variance, filled with the columns most covariant with those to ``screens._CROSS`` times the own size (smaller than
it).  The choice is checked against ``||A_St||`` computed from A itself; the certificates on it are checked against
brute force on tiny inputs; the rule (only at the block's size, only inside the block, only on thin data held as an
array) is checked on both sides of each condition."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from nspca_core.certificates import grow_cross, screens, single
from nspca_core.certificates.split_point import _by_variance, _screened
from nspca_core.operators.cov import Cov

from tests.bruteforce import brute_opt
from tests.core.certificates.test_small_screen import TINY, _force_small, _screens, modules_case
from tests.core.certificates.test_split_coupled import _modules


def _point(rng, n: int, k: int) -> np.ndarray:
    x = np.zeros(n)
    x[rng.choice(n, size=k, replace=False)] = rng.uniform(0.1, 1.0, k)
    return x / np.linalg.norm(x)


@given(st.integers(6, 40), st.integers(1, 5), st.integers(2, 12), st.integers(-6, 30),
       st.integers(0, 2**31 - 1))
def test_the_chosen_screen_is_half_the_own_one_plus_the_most_covariant_columns(n, k, own, more, seed):
    """Inside ``cross_growth(cov, own, size)``: the screen of ``size`` features is S0 (the first half of the own
    screen by variance, with x's support) plus the columns of T with the largest ``||A_{S0 t}||`` (A formed here),
    S and T a partition, S of the size asked (or S0's, when that is larger), smaller or larger than the own one;
    any other size, and outside the block, the screen by variance, unchanged."""
    rng = np.random.default_rng(seed)
    m = max(2, n // 3)
    X = _modules(rng, m, n, 3)
    cov = Cov(X, None)
    k = min(k, n)
    x = _point(rng, n, k)
    dg = cov.diag()
    own = min(own, n)
    s = max(1, min(n, own + more))
    S0, _ = _by_variance(dg, x, max(1, int(grow_cross._VARIANCE_SHARE * own)))
    with grow_cross.cross_growth(cov, own, s):
        S, T = _screened(dg, x, s)
        others = [(v, _screened(dg, x, v)) for v in (own, s - 1, s + 1) if 1 <= v <= n and v != s]
    assert np.array_equal(np.sort(np.concatenate([S, T])), np.arange(n))
    sup = np.flatnonzero(x)
    sup = set(sup[np.argsort(-x[sup], kind="stable")[:s]])  # (x's s largest entries, as the screen by variance)
    assert set(S0) <= set(S) and sup <= set(S)
    assert S.size == max(s, len(set(S0) | sup))
    for v, got in others:  # (any other size inside the block: by variance)
        for a, b in zip(got, _by_variance(dg, x, v)):
            assert np.array_equal(a, b)
    for a, b in zip(_screened(dg, x, s), _by_variance(dg, x, s)):  # (outside the block)
        assert np.array_equal(a, b)
    A = X.T @ X / m
    base = np.union1d(S0, list(sup)).astype(int)
    score = (A[np.ix_(base, np.arange(n))] ** 2).sum(axis=0)
    added = np.setdiff1d(S, base)
    if added.size and T.size:
        assert score[added].min() >= score[T].max() * (1 - 1e-9) - 1e-12


@given(st.integers(0, 2**31 - 1), st.booleans())
def test_only_thin_data_held_as_an_array_is_grown_by_the_cross_term(seed, wide):
    """A covariance (no X) or data with at least as many samples as features: the screen by variance, even inside
    the block; thin data: grown by the cross term."""
    rng = np.random.default_rng(seed)
    n = 12
    X = _modules(rng, 5 if wide else 20, n, 3)
    x = _point(rng, n, 2)
    for cov in (Cov(X, None), Cov(None, X.T @ X / X.shape[0])):
        thin = cov.X is not None and wide
        assert grow_cross.applies(cov) == thin
        dg = cov.diag()
        with grow_cross.cross_growth(cov, 3, 8):
            assert (grow_cross._ACTIVE.get() is not None) == thin
            S, _ = _screened(dg, x, 8)
        if not thin:
            assert np.array_equal(S, _by_variance(dg, x, 8)[0])
    assert grow_cross._ACTIVE.get() is None


@TINY
@given(st.integers(10, 13), st.integers(2, 3), st.integers(0, 2**31 - 1), st.booleans())
def test_certificates_on_the_cross_chosen_screen_hold_against_bruteforce(monkeypatch, n, k, seed, given_x):
    """The split certificate on a screen chosen by the cross term (every size from 1 to n, below and above the own
    one) is above OPT_k (enumeration) and its point's value below it."""
    _force_small(monkeypatch, per_k=2)
    X, A, x = modules_case(seed, n, k, given_x)
    cov = Cov(X, None)
    opt, _ = brute_opt(A, k)
    own = max(4, 2 * k)
    seen = _screens(monkeypatch)
    for size in range(1, n + 1, 2):
        with grow_cross.cross_growth(cov, own, size):
            c = single._certify_split(cov, k, x, "auto", None, size=size)
        assert c.upper_bound >= opt * (1 - 1e-12)
        assert c.lower <= opt * (1 + 1e-12)
    assert any(v < own for v in seen)  # (screens smaller than the own one were certified too)


def test_grown_split_counts_the_rule_on_both_sides(monkeypatch):
    """``screens.grown_split`` opens the block at its size: a screen larger than S0 (half the own screen by variance
    and x's support) is filled by the cross term (the scores computed once), one at S0's size is not (no scores)."""
    _force_small(monkeypatch, per_k=2)
    calls: list = []
    real = grow_cross.cross_order
    monkeypatch.setattr(grow_cross, "cross_order", lambda *a: (calls.append(1), real(*a))[1])
    X = _modules(np.random.default_rng(3), 8, 12, 3)
    cov = Cov(X, None)
    own = max(4, 2 * 2)
    half = int(grow_cross._VARIANCE_SHARE * own)  # (x None: the point found has at most k = 2 features)
    c = screens.grown_split(single._certify_split, cov, 2, None, "auto", None, size=half)
    assert calls == [] and c.info["split_S"] >= half
    screens.grown_split(single._certify_split, cov, 2, None, "auto", None, size=own + 3)
    assert calls == [1]


@given(st.integers(5, 3000), st.sampled_from(["fast", "auto", "full"]))
def test_grow_to_chooses_the_cross_screen_where_the_variance_one_would_grow(size, effort):
    """``screens.grow_to(..., cross=True)``: ``ceil(_CROSS size)`` exactly where the screen by variance would grow
    (``_GROW_MIN`` times larger within the caps), None where it would not; ``cross=False`` and ``grow`` given:
    unchanged.  Counted on both sides of the room threshold (n just above and below ``_GROW_MIN size``)."""
    from nspca_core.certificates._settings import _EFFORT

    cap = _EFFORT[effort]["split_size"]
    for n in (int(np.ceil(screens._GROW_MIN * size)), int(np.ceil(screens._GROW_MIN * size)) - 1, 10**6):
        former = screens.grow_to(n, size, effort)
        room = min(n, cap, int(np.ceil(screens._GROW * size))) >= screens._GROW_MIN * size
        assert (former is not None) == room
        got = screens.grow_to(n, size, effort, cross=True)
        assert got == (int(np.ceil(screens._CROSS * size)) if room else None)
        assert screens.grow_to(n, size, effort, 1.5, cross=True) == screens.grow_to(n, size, effort, 1.5)
