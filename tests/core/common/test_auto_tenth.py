"""auto at tpower's price (issue 39 item 4, tenth round): work auto repeated between its key and its
screen done once, without changing a float.  Each helper is checked against the expression it
replaces, on random and tied inputs."""

import numpy as np
from hypothesis import example, given, settings, strategies as st

from nspca_core._common.ascent import Screen, cov_key, tie_key
from nspca_core._common.screen import SingleProducts, variance_order
from nspca_core.operators.cov import Cov
from nspca_core.solve import fit_cov


def _variances(seed, n, ties, zeros):
    """Variances as data give them: spread over decades, some equal (``ties``), some zero."""
    rng = np.random.default_rng(seed)
    d = 10.0 ** rng.uniform(-3, 3, n)
    if ties and n > 1:
        d[rng.integers(0, n, n // 3 + 1)] = d[int(rng.integers(0, n))]
    if zeros:
        d[rng.random(n) < 0.2] = 0.0
    return d


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 400), st.booleans(), st.booleans(),
       st.sampled_from(["tie", "perm", "none"]))
@example(0, 5, True, False, "tie")
def test_variance_order_is_the_stable_argsort(seed, n, ties, zeros, kind):
    d = _variances(seed, n, ties, zeros)
    rng = np.random.default_rng(seed + 1)
    # the key auto passes (the variances rounded, then row sums); a random permutation (any key must
    # give the argsort); or none
    key = {"tie": tie_key(d, rng.standard_normal(n)), "perm": rng.permutation(n), "none": None}[kind]
    got = variance_order(d, key)
    expect = np.argsort(-d, kind="stable")
    assert got.dtype == expect.dtype and np.array_equal(got, expect)


def _cov(seed, m, n):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n)) * rng.uniform(0.1, 3.0, n)
    return Cov(X - X.mean(axis=0), None)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([(20, 300), (40, 1200)]), st.booleans())
def test_screen_with_the_keys_order_prepares_what_it_prepared(seed, shape, single):
    cov = _cov(seed, *shape)
    V, eig = cov.factor(3)
    sp = SingleProducts(cov) if single else None
    diag = cov.diag()
    key = cov_key(cov, diag)
    assert np.array_equal(key, cov_key(cov))
    old = Screen(cov, V, eig[0], sp)
    new = Screen(cov, V, eig[0], sp, diag=diag, key=key)
    old._prepare()
    new._prepare()
    for name in ("order", "s", "sd", "neg_sd", "delta"):
        assert np.array_equal(getattr(old, name), getattr(new, name)), name


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000), st.integers(3, 40))
def test_auto_on_gene_shaped_data_is_what_the_sorted_screen_gives(seed, k):
    """auto's answer with the screen's order from the key is the answer with the argsort (the order
    is the same array, so every float is)."""
    import nspca_core.solve as solve

    cov = _cov(seed, 30, 1500)
    r = fit_cov(cov, k, "auto", 3, 0.1, seed, None, {})
    plain = solve.Screen

    class Sorted(plain):  # the screen as before: cov.diag() and the argsort, no key
        def __init__(self, c, V, lam, single=None, **kw):
            super().__init__(c, V, lam, single)

    try:
        solve.Screen = Sorted
        r0 = fit_cov(cov, k, "auto", 3, 0.1, seed, None, {})
    finally:
        solve.Screen = plain
    assert np.array_equal(r.x, r0.x) and r.variance == r0.variance


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.booleans(), st.integers(1, 6), st.booleans())
def test_single_products_into_a_block_equal_the_returned_products(seed, thin, q, some_zero_rows):
    """``SingleProducts(W, out=block)`` (auto's random starts written into X0) holds the floats of the
    returned product: the float32 products converted once, exactly."""
    rng = np.random.default_rng(seed)
    m, n = (12, 300) if thin else (400, 300)
    X = rng.standard_normal((m, n)) * rng.uniform(0.1, 3.0, n)
    cov = Cov(X - X.mean(axis=0), None)
    if not thin:
        cov.dense()
    sp = SingleProducts(cov)
    W = rng.standard_normal((n, q))
    if some_zero_rows:
        W[rng.random(n) < 0.7] = 0.0
    X0 = np.full((n, q + 3), np.nan, order="F")
    got = sp(W, dense=not some_zero_rows, out=X0[:, 3:])
    expect = sp(W, dense=not some_zero_rows)
    assert got.dtype == np.float64 and np.array_equal(got, expect) and np.array_equal(X0[:, 3:], expect)
    assert np.isnan(X0[:, :3]).all()


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 40), st.integers(1, 12))
def test_supports_made_when_asked_are_the_eager_ones(seed, n, p):
    """auto's supports by name, each made when first asked for, are ``(x != 0).tobytes()`` of the
    points (what ``_ascend`` returned for every name before), equal supports equal bytes."""
    from nspca_core.solve import _Supports

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p)) * (rng.random((n, p)) < 0.4)
    X[:, p // 2] = X[:, 0]  # two points on one support
    names = [f"s{j}" for j in range(p)]
    sup = _Supports(X, names)
    order = rng.permutation(p)
    for j in order:
        assert sup[names[j]] == (X[:, j] != 0).tobytes()
    assert sup[names[p // 2]] == sup[names[0]]
    assert len(sup) == p
