"""anchor_sums.top_test_fails: a proof that the anchored row sums' test (from the all-ones start) fails, so that
sparse_route need not run it.  Never True where the test itself proves (checked by running it: the brute force
of this claim); True and False both met on topic-shaped data; its margin counted on both sides; and sparse_route
skips the test only where it is proved to fail, with the same certificate float for float."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core import certify, fit
from nspca_core.certificates import anchor_sums, dual
from nspca_core.certificates import sparse_route as R
from nspca_core.certificates.anchor import AnchorRows, anchored_rowsum_test
from nspca_core.certificates.anchor_sums import top_test_fails


def topic_counts(seed: int, docs: int, vocab: int, topics: int = 6, length: int = 40):
    """Counts of ``docs`` documents over ``vocab`` words: Zipf frequencies mixed with Dirichlet topics."""
    rng = np.random.default_rng(seed)
    zipf = 1.0 / np.arange(1, vocab + 1) ** 1.07
    zipf /= zipf.sum()
    P = rng.dirichlet(np.full(vocab, 0.05), topics) * 0.5 + zipf * 0.5
    th = rng.dirichlet(np.full(topics, 0.3), docs)
    lens = rng.poisson(length, docs) + 5
    return sp.csr_matrix(rng.poisson(th @ P * lens[:, None]).astype(np.int64))


def _case(seed: int, n: int, k: int, factor: float, kind: int):
    """A (covariance of topic counts, or a random symmetric matrix with some negative entries), a k-sparse x >= 0
    on the rows of largest ``(A 1)_l``, and tau = x'Ax / 0.975 times ``factor``."""
    rng = np.random.default_rng(seed)
    if kind == 0:
        X = topic_counts(seed, 3 * n, n, topics=int(rng.integers(2, 9))).toarray().astype(float)
        A = np.cov(X, rowvar=False)
    elif kind == 1:
        G = rng.random((n, n)) ** 3 - 0.05 * rng.random()
        A = (G + G.T) / 2 + np.diag(rng.random(n) * rng.random())
    else:  # (a few levels, about the kept width of entries per row at the top one: the cap decides)
        G = (rng.random((n, n)) < rng.uniform(0.2, 0.6)) * 1.0 + (rng.random((n, n)) < 0.3) * rng.uniform(0.1, 0.5)
        A = G + G.T + np.diag(rng.random(n))
    x = np.zeros(n)
    sup = np.argsort(-A.sum(axis=1), kind="stable")[:k]
    x[sup] = rng.random(k) + 0.1
    x /= np.linalg.norm(x)
    return A, x, float(x @ A @ x) / dual._DNN_SKIP_AT * factor


def _test_holds(A, k, tau) -> bool:
    return bool(anchored_rowsum_test(AnchorRows(A, k), tau)[0])


def _threshold(A, k) -> float:
    """About the smallest tau the test proves (bisection; the test from the all-ones start at each)."""
    hi = float(np.abs(A).sum(axis=1).max()) * 2 + 1.0
    lo = float(np.diag(A).max())
    for _ in range(30):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if _test_holds(A, k, mid) else (mid, hi)
    return hi


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(40, 130), k=st.integers(2, 14),
       factor=st.floats(0.9, 1.6), kind=st.integers(0, 2), near=st.floats(0.97, 1.03), at_edge=st.booleans())
def test_never_claimed_where_the_test_holds(seed, n, k, factor, kind, near, at_edge):
    """Against the test itself, at x's level and (``at_edge``) within 3% of the smallest tau the test proves."""
    A, x, tau = _case(seed, n, k, factor, kind)
    if at_edge:
        tau = _threshold(A, k) * near
    if top_test_fails(A, k, tau, x):
        assert not _test_holds(A, k, tau)


def test_both_outcomes_met_and_right():
    """On topic-shaped covariances, near the smallest tau the test proves, both answers occur (and tests that
    hold); every True is a failing test."""
    seen = {True: 0, False: 0, "held": 0}
    for seed in range(6):
        for k in (3, 6, 10, 14):
            A, x, _ = _case(seed, 90, k, 1.0, 0)
            edge = _threshold(A, k)
            for tau in (edge * 0.9, edge * 0.999, edge * 1.001, edge * 1.1):
                f = top_test_fails(A, k, tau, x)
                seen[f] += 1
                held = _test_holds(A, k, tau)
                assert not (f and held)
                seen["held"] += held
    assert seen[True] >= 3 and seen[False] >= 3 and seen["held"] >= 3, seen


def test_gap_rule_on_both_sides():
    """A diagonal entry at tau (the test's own gap formula not positive): proved to fail, on any size; just
    above every diagonal entry, with no off-diagonal mass: not claimed (the test holds)."""
    A = np.diag([1.0, 2.0, 3.0])
    x = np.array([0.0, 0.0, 1.0])
    assert top_test_fails(A, 2, 3.0, x) and not _test_holds(A, 2, 3.0)
    assert not top_test_fails(A, 2, 3.0 * (1 + 1e-9), x) and _test_holds(A, 2, 3.0 * (1 + 1e-9))


def test_margin_on_both_sides(monkeypatch):
    """A case where the witness holds by a measured ratio mu > 1: claimed with the margin just below mu - 1,
    not claimed just above (the witness is checked, not assumed); and not claimed with no power steps' width."""
    X = topic_counts(1, 800, 400)
    k = 10
    A = np.cov(X.toarray().astype(float), rowvar=False)
    x = fit(X, k=k, certify=False).x
    tau = float(x @ A @ x) / dual._DNN_SKIP_AT
    assert top_test_fails(A, k, tau, x) and not _test_holds(A, k, tau)
    lo, hi = 0.0, 10.0  # (the largest margin it holds at, by bisection)
    for _ in range(60):
        mid = (lo + hi) / 2
        monkeypatch.setattr(anchor_sums, "_FAILS_MARGIN", mid)
        lo, hi = (mid, hi) if top_test_fails(A, k, tau, x) else (lo, mid)
    assert 1e-3 < lo < 5.0
    monkeypatch.setattr(anchor_sums, "_FAILS_MARGIN", lo * (1 - 1e-6))
    assert top_test_fails(A, k, tau, x)
    monkeypatch.setattr(anchor_sums, "_FAILS_MARGIN", hi * (1 + 1e-6))
    assert not top_test_fails(A, k, tau, x)
    monkeypatch.setattr(anchor_sums, "_FAILS_MARGIN", 1e-6)
    monkeypatch.setattr(anchor_sums, "_FAILS_ROWS", 0.5)  # (fewer rows than the kept width: no cap bound)
    assert not top_test_fails(A, k, tau, x)


@pytest.mark.parametrize("k, skipped", [(3, False), (10, True), (20, True)])
def test_sparse_route_skips_only_proved_failures(monkeypatch, k, skipped):
    """Counted: where top_test_fails holds, the test on the whole A is not run and the certificate is the one
    with the test run (the same floats: the split route both ways); where it does not, the test runs as before."""
    X = topic_counts(1, 800, 400)
    x = fit(X, k=k, certify=False).x
    n = X.shape[1]
    calls = []
    real = dual.top_test

    def spy(A, kk, tau, seen=None):
        calls.append(A.shape[0])
        return real(A, kk, tau, seen)

    monkeypatch.setattr(dual, "top_test", spy)
    c = certify(X, k=k, x=x)
    ran = calls.count(n)
    assert (ran == 0) == skipped
    monkeypatch.setattr(R, "top_test_fails", lambda *a: False)
    calls.clear()
    b = certify(X, k=k, x=x)
    assert calls.count(n) >= 1 and (skipped or calls.count(n) == ran)
    assert float(c.upper_bound).hex() == float(b.upper_bound).hex()
    assert {u: float(v).hex() for u, v in c.bounds.items()} == {u: float(v).hex() for u, v in b.bounds.items()}
    assert c.info.get("route") == b.info.get("route")


def _star(leaves: int, n: int = 100):
    A = np.diag(np.linspace(0.01, 0.02, n))
    A[0, 1:leaves + 1] = A[1:leaves + 1, 0] = 1.0
    return A


@pytest.mark.parametrize("leaves, fails", [(44, False), (60, True)])
def test_cap_decides_on_both_sides(leaves, fails):
    """A star, k = 10, tau = 5 (its lambda_max is 3 at 9 leaves): with 44 leaves the kept width (L = 48) holds them
    all, the cap is 0 and the test proves tau; with 60 leaves the cap is 1, the centre's sum 9 > 5, the test fails,
    and the claim (its cap bound from W's 61 rows) says so.  A cap bound taken from fewer than L + 1 entries of a
    row would claim the first too."""
    A, k, tau = _star(leaves), 10, 5.0
    x = np.zeros(100)
    x[:k] = 1.0 / np.sqrt(k)
    assert _test_holds(A, k, tau) == (not fails)
    assert top_test_fails(A, k, tau, x) == fails


def test_steps_end_at_the_first_witness_counted(monkeypatch):
    """Counted (the evaluations of T^W, ``record``): every iterate is checked as it is made and the first that holds
    ends the steps.  Rows of sum 99 against tau = 5: claimed at the all-ones start (1 evaluation); the star of
    test_cap_decides_on_both_sides, 60 leaves: after one step (2).  A topic case that
    needs s evaluations: with one power step fewer than that allowed (_FAILS_STEPS = s - 2) not claimed, every step
    made (s - 1 evaluations); with exactly enough (s - 1) claimed after s; with the default as many, no more.  A
    case where no witness holds: every step made, not claimed."""
    x = np.zeros(100)
    x[:10] = 1.0 / np.sqrt(10)
    A = np.full((100, 100), 1.0)
    np.fill_diagonal(A, 0.5)
    rec: dict = {}
    assert top_test_fails(A, 10, 5.0, x, rec) and rec["steps"] == 1 and not _test_holds(A, 10, 5.0)
    rec = {}
    assert top_test_fails(_star(60), 10, 5.0, x, rec) and rec["steps"] == 2  # (the leaves' rows: one step down)
    X = topic_counts(1, 800, 400)
    k = 10
    A = np.cov(X.toarray().astype(float), rowvar=False)
    x = fit(X, k=k, certify=False).x
    tau = float(x @ A @ x) / dual._DNN_SKIP_AT
    rec = {}
    assert top_test_fails(A, k, tau, x, rec) and not _test_holds(A, k, tau)
    s = rec["steps"]
    assert 2 <= s <= anchor_sums._FAILS_STEPS
    monkeypatch.setattr(anchor_sums, "_FAILS_STEPS", s - 2)
    rec = {}
    assert not top_test_fails(A, k, tau, x, rec) and rec["steps"] == s - 1
    monkeypatch.setattr(anchor_sums, "_FAILS_STEPS", s - 1)
    rec = {}
    assert top_test_fails(A, k, tau, x, rec) and rec["steps"] == s
    monkeypatch.undo()
    rec = {}
    assert not top_test_fails(_star(44), 10, 5.0, np.r_[np.ones(10), np.zeros(90)] / np.sqrt(10), rec)
    assert rec["steps"] == anchor_sums._FAILS_STEPS + 1
