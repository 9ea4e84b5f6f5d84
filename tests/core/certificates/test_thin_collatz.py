"""Issue 39 (helper t1g37): S's eager anchored bound in the thin route by a Collatz–Wielandt vector of the plain
anchored test's row sums (:func:`nspca_core.certificates.thin_anchor.collatz`), the search before it
(:func:`nspca_core.certificates.thin_anchor.top_moved`) only where that does not settle.

- Every bound it returns is at least OPT (brute force), its lower end at most its bound and within ``rel`` of it,
  on rows keeping every entry and on narrow rows (caps padded in).
- Its lower end is where the tests start to prove: no anchored test proves below it, so its bound is within ``rel``
  of (or below) every bound the bisection proves.
- On nonnegative A at k = n the threshold is the Perron root, OPT itself: the bound is at least it and within
  ``rel`` of it (the mutation "the bound is the smallest ratio, not the largest" fails here).
- :func:`nspca_core.certificates.thin_anchor.anchored`: a bound at least OPT, collatz's where it says so, else the
  former search's float for float.
"""

from __future__ import annotations

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from nspca_core.certificates import thin_anchor
from nspca_core.certificates.anchor import AnchorRows, anchored_rowsum_bound, anchored_rowsum_test
from nspca_core.certificates.anchor_sums import float32_products

from tests.bruteforce import brute_opt
from tests.core.certificates.test_bisection_hints import _thin


def _rows(A: np.ndarray, k: int, width=None) -> AnchorRows:
    with float32_products():
        return AnchorRows(A, k, width=width)


@settings(max_examples=40, deadline=None)
@given(m=st.integers(3, 7), n=st.integers(5, 10), k=st.integers(2, 5), seed=st.integers(0, 2**31 - 1),
       width=st.sampled_from([None, 1, 2]), rel=st.sampled_from([1e-2, 2.5e-4]))
@example(m=4, n=8, k=3, seed=5, width=None, rel=2.5e-4)
def test_collatz_is_a_bound(m, n, k, seed, width, rel):
    """``(tau, low)``: tau at least OPT (brute force), ``low <= tau <= low (1 + rel)`` up to the rounding allowance;
    narrow rows (``width`` 1 or 2: every other entry bounded by the cap) too."""
    A = _thin(m, n, seed)
    k = min(k, n)
    opt, _ = brute_opt(A, k)
    with float32_products():
        out = thin_anchor.collatz(_rows(A, k, width), rel)
    if out is None:
        return
    tau, low = out
    assert tau >= opt * (1 - 1e-12)
    assert low <= tau <= low * (1 + rel) * (1 + 1e-12)


@settings(max_examples=30, deadline=None)
@given(m=st.integers(3, 7), n=st.integers(5, 10), k=st.integers(2, 5), seed=st.integers(0, 2**31 - 1))
def test_collatz_is_where_the_tests_start_to_prove(m, n, k, seed):
    """No anchored test proves a tau below collatz's lower end (from the all-ones start), so its bound is within
    ``rel`` of every bound the bisection proves (:func:`anchor.anchored_rowsum_bound` from OPT up to the variance
    sum's bound), or below it."""
    A = _thin(m, n, seed)
    k = min(k, n)
    rel = 1e-4
    opt, _ = brute_opt(A, k)
    top = float(np.sort(np.diag(A))[::-1][:k].sum()) * (1 + 1e-9)
    with float32_products():
        out = thin_anchor.collatz(_rows(A, k), rel)
        if out is None:
            return
        tau, low = out
        assert not anchored_rowsum_test(_rows(A, k), low * (1 - 1e-6), max_iter=2000)[0]
        searched = anchored_rowsum_bound(A, k, opt, top, rel_tol=1e-6, steps=40, rows=_rows(A, k))
    if searched is not None:
        assert searched >= low * (1 - 1e-6)
        assert tau <= searched * (1 + rel) * (1 + 1e-6)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(3, 8), seed=st.integers(0, 2**31 - 1), rel=st.sampled_from([5e-2, 1e-2, 1e-4]))
def test_collatz_at_the_perron_root(n, seed, rel):
    """Nonnegative A, k = n: OPT is A's Perron root (brute force), and the anchored test's threshold is that root
    too; collatz settles, at least OPT and within ``rel`` of it."""
    rng = np.random.default_rng(seed)
    B = rng.uniform(0.0, 1.0, (n, n))
    A = (B + B.T) / 2
    opt, _ = brute_opt(A, n)
    with float32_products():
        out = thin_anchor.collatz(_rows(A, n), rel, iters=500)
    assert out is not None
    tau, low = out
    assert tau >= opt * (1 - 1e-12)
    assert tau <= opt * (1 + rel) * (1 + 1e-6)


@settings(max_examples=60, deadline=None)
@given(m=st.integers(3, 7), n=st.integers(6, 10), k=st.integers(2, 4), seed=st.integers(0, 2**31 - 1),
       frac=st.sampled_from([1.0, 0.999, 0.99, 0.98, 0.9]))
def test_anchored_is_collatz_or_the_former_search(m, n, k, seed, frac):
    """:func:`thin_anchor.anchored` from ``frac`` x OPT: every bound at least OPT; where ``counts["collatz"]`` is set,
    collatz's bound (below the top; the former search's resolution recorded; at most ``rel_tol / 4`` above the former
    search's bound), else :func:`thin_anchor.top_moved`'s float for float."""
    A = _thin(m, n, seed)
    k = min(k, n)
    opt, _ = brute_opt(A, k)
    lower = opt * frac
    counts: dict = {}
    with float32_products():
        got = thin_anchor.anchored(A, k, lower, np.inf, 1e-3, 0.975, counts)
        former = thin_anchor.top_moved(A, k, lower, np.inf, 1e-3, 0.975)
        cw = thin_anchor.collatz(_rows(A, k), 1e-3 / 4, fine=(lower * 1.001, 5e-5), floor=lower)
    if got is not None:
        assert got >= opt * (1 - 1e-12)
    if counts.get("collatz"):
        assert cw is not None and got == cw[0] and got < lower / 0.975
        assert counts["collatz"] == (1e-3 if got > lower * 1.001 else 5e-5)
        assert former is None or got <= former * (1 + 1e-3 / 4) * (1 + 1e-9)  # (the search's, to rel_tol / 4)
    else:
        assert got == former
