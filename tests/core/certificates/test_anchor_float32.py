"""Issue 39 (helper thin15): inside :func:`nspca_core.certificates.anchor_sums.float32_products` (one thin
certificate, :func:`nspca_core.certificates.route.certify_thin`) the anchored row sums' products are float32
multiplies of the candidates' values and the ratios, both rounded up to float32.  Properties: every row sum is at
least the exact one (rational arithmetic, brute force over every column), the joint sums too, every bound proved in
the block is at least OPT (brute force), the rounding up is exact and minimal, and outside a block the products are
the former float64 ones (no float32 values kept).  And the hinted bisection's reordered tests (the failure first,
then g from its ratios): the loop's floats with 2 tests where the hint holds, one more (g from the loop's own start)
where g's test from the failure's ratios gives up."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core.certificates import anchor as anc
from nspca_core.certificates.anchor import (AnchorRows, anchored_bisection, anchored_joint_test, anchored_rowsum_bound,
                                            bisection_hints)
from nspca_core.certificates.anchor_sums import _joint_sums, _plain_sums, float32_products, up32

from tests.bruteforce import brute_opt


def _thin(m: int, n: int, seed: int, scale: float = 1.0) -> np.ndarray:
    """The covariance of m centered samples of n features (thin: m <= n), a correlated block first, times ``scale``."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n)) * rng.uniform(0.3, 2.0, n)
    X[:, : n // 2] += rng.standard_normal((m, 1)) * rng.uniform(0.5, 2.0)
    X -= X.mean(axis=0)
    return X.T @ X / m * scale


def _exact_top(A: np.ndarray, r: np.ndarray, q: int) -> list[Fraction]:
    """Per row l, the exact sum of the q largest ``(A_lm)_+ r_m`` over every m != l (rationals)."""
    n = A.shape[0]
    out = []
    for l in range(n):
        prods = sorted((Fraction(max(float(A[l, m]), 0.0)) * Fraction(float(r[m])) for m in range(n) if m != l),
                       reverse=True)
        out.append(sum(prods[:q], Fraction(0)))
    return out


_ratios = st.lists(st.sampled_from([1.0, 0.0, 0.5, 1e-40, 0.3333333333333333, 0.7071067811865476, 0.999999]),
                   min_size=14, max_size=14)


@settings(max_examples=40, deadline=None)
@given(m=st.integers(3, 8), n=st.integers(6, 14), k=st.integers(2, 6), seed=st.integers(0, 2**31 - 1),
       scale=st.sampled_from([1.0, 1e-3, 1e6, 1e-30]), rr=_ratios, width=st.sampled_from([None, 3, 5]))
def test_float32_sums_bound_the_exact_sums(m, n, k, seed, scale, rr, width):
    """The plain row sums and the joint sums from the float32 products are at least the exact sums (every column,
    rationals), also with a few candidates kept (the cap padding), tiny and large values; close to the float64
    products' sums (the rounding only)."""
    A = _thin(m, n, seed, scale)
    k = min(k, n)
    r = np.array(rr[:n])
    with float32_products():
        rows = AnchorRows(A, k, width=width)
    plain_rows = AnchorRows(A, k, width=width)
    assert rows.vals32 is not None and plain_rows.vals32 is None
    assert (rows.vals32.astype(np.float64) >= rows.vals).all()
    s = _plain_sums(rows, r)
    exact = _exact_top(A, r, k - 1)
    assert all(Fraction(float(a)) >= b for a, b in zip(s, exact))
    s64 = _plain_sums(plain_rows, r)
    assert np.allclose(s, s64, rtol=1e-6, atol=n * 2.0**-120 * max(1.0, float(np.abs(A).max())))  # (ratios below
    # 2^-125 raised to it in the float32 products)
    qs = np.arange(1, k)
    js = _joint_sums(rows, r, qs)
    for t, q in enumerate(qs):
        ex = _exact_top(A, r, int(q))
        assert all(Fraction(float(a)) >= b for a, b in zip(js[:, t], ex))


@settings(max_examples=25, deadline=None)
@given(m=st.integers(4, 8), n=st.integers(8, 13), k=st.integers(2, 5), seed=st.integers(0, 2**31 - 1),
       frac=st.sampled_from([1.0, 0.999, 0.99]))
def test_bounds_in_the_block_are_proved(m, n, k, seed, frac):
    """The anchored bound (top test and bisection) and the joint test, rows made in the block: at least OPT
    (brute force at every sparsity asked)."""
    A = _thin(m, n, seed)
    opt, _ = brute_opt(A, k)
    hi = float(np.sort(np.diag(A))[-k:].sum())
    with float32_products():
        rows = AnchorRows(A, k)
        b = anchored_rowsum_bound(A, k, frac * opt, hi, rel_tol=1e-4, rows=rows)
        if b is not None:
            assert b >= opt * (1 - 1e-12)
        ks = np.arange(2, k + 1)
        opts = np.array([brute_opt(A, int(i))[0] for i in ks])
        for f in (1.0005, 1.01, 1.05):
            ok, _ = anchored_joint_test(rows, ks, opts * f)
            if ok:
                assert (opts * f >= opts * (1 - 1e-12)).all()
            ok, _ = anchored_joint_test(rows, ks, opts * (1 - 1e-6))
            assert not ok  # (below OPT at every sparsity: nothing can be proved)


@given(st.lists(st.floats(0.0, 1e38, allow_subnormal=True), min_size=1, max_size=30))
def test_up32_rounds_up_and_keeps_zeros(vals):
    """:func:`up32`: at least the float64 value (the bound's premise), zeros kept zero (no subnormal products),
    at most ``a (1 + 2^-21) + 2^-124`` above it."""
    a = np.array(vals)
    b = up32(a)
    assert b.dtype == np.float32
    b64 = b.astype(np.float64)
    assert (b64 >= a).all()
    assert ((b64 == 0) == (a == 0)).all()
    assert (b64 <= a * (1 + 2.0**-21) + 2.0**-124).all()


def test_float32_products_only_inside_a_block():
    """Rows made outside a block keep no float32 values (the float64 products as before); the block restores."""
    A = _thin(5, 10, 3)
    assert AnchorRows(A, 3).vals32 is None
    with float32_products():
        assert AnchorRows(A, 3).vals32 is not None
        with float32_products():
            pass
        assert AnchorRows(A, 3).vals32 is not None
    assert AnchorRows(A, 3).vals32 is None
    with float32_products():  # (values too large for float32's range: the float64 products)
        assert AnchorRows(A * 1e32, 3).vals32 is None


def _bracket(A, k, frac):
    opt, _ = brute_opt(A, k)
    lower = frac * opt
    hi = float(np.sort(np.diag(A))[-k:].sum())
    if not (hi > lower * 1.1) or not anc.anchored_rowsum_test(AnchorRows(A, k), hi)[0]:
        return None
    return lower, hi


def _one_failure_case():
    """A thin case whose bisection is proofs, then one failure (the path a hint records), found by seed."""
    for seed in range(200):
        A = _thin(6, 12, seed)
        got = _bracket(A, 3, 0.999)
        if got is None:
            continue
        lower, hi = got
        with bisection_hints():
            anchored_bisection(AnchorRows(A, 3), lower, hi, 1e-3)
            paths = anc._HINTS.get().get((3, 1e-3, 12), [])
        if paths and paths[0][3] == 1 and paths[0][2] >= 2:
            return A, lower, hi
    raise AssertionError("no qualifying seed")


class _Calls:
    """Records each :func:`anchored_rowsum_test` call as ``(tau, start)``, start "ones" (None), "fail" (the
    ratios the last failed test returned) or "other"; ``refuse``: tests started from those failure ratios are
    reported unproved (as if the give-up rules had stopped them)."""

    def __init__(self, monkeypatch):
        self.calls, self.refuse, self.fail = [], False, None
        real = anc.anchored_rowsum_test

        def rec(rows, tau, r=None, **kw):
            start = "ones" if r is None else "fail" if r is self.fail else "other"
            self.calls.append((tau, start))
            if start == "fail" and self.refuse:
                return False, np.array(r)
            ok, out = real(rows, tau, r, **kw)
            if not ok:
                self.fail = out
            return ok, out

        monkeypatch.setattr(anc, "anchored_rowsum_test", rec)


def test_hinted_failure_first_then_g_from_its_ratios(monkeypatch):
    """Where the hint holds: 2 tests, the failure's midpoint first (from the loop's start), then g from the
    failure's own ratios; the loop's floats (bound, last failure, its ratios).  Where g's test from those ratios
    gives up: one test more, g from the loop's start, the same floats."""
    A, lower, hi = _one_failure_case()
    rows = AnchorRows(A, 3)
    plain = anchored_bisection(rows, lower, hi, 1e-3)
    calls = _Calls(monkeypatch)
    with bisection_hints():
        anchored_bisection(rows, lower, hi, 1e-3)
        for refuse, want in ((False, [(plain[1], "ones"), (plain[0], "fail")]),
                             (True, [(plain[1], "ones"), (plain[0], "fail"), (plain[0], "ones")])):
            calls.calls.clear()
            calls.refuse = refuse
            got = anchored_bisection(rows, lower, hi, 1e-3)
            assert calls.calls == want
            assert got[0] == plain[0] and got[1] == plain[1] and np.array_equal(got[2], plain[2])
