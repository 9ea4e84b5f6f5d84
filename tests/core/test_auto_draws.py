"""auto's normal draws kept per (seed, number of features) (issue 39, item 4, seventh round): the starts
are the floats the Generator gives, whether drawn now or kept from an earlier fit; the answers then
stay those of the brute force on tiny inputs and never below the methods auto includes.
"""

import numpy as np
import pytest
import scipy.linalg.lapack
from hypothesis import given, settings, strategies as st

import nspca_core.solve as solve
from nspca_core._common.ascent import cov_key, random_starts
from nspca_core._common.screen import SingleProducts
from nspca_core.operators.cov import Cov
from nspca_core.peers.tpower import tpower_starts
from tests.bruteforce import brute_opt
from tests.core.test_auto_cost import _centered as _data


def _reference_starts(cov, V, k, key, rng, single):
    """The starts as drawn without kept draws: one Generator, tpower's starts, then the random ones (on
    thin data with float32 products and a small Gram: ``X^T F g`` in float32, g of m rows, F the
    pivoted Cholesky factor of the factor's Gram, written out here)."""
    T = tpower_starts(V[:, 0], k, key, rng, solve._TPOWER_RESTARTS)
    kept = cov.thin_gram() if single is not None and cov.thin else None
    if kept is not None and kept[0].shape[0] ** 2 <= solve._SAMPLE_STARTS_RATIO * cov.n:
        G = kept[0]
        c, piv, rank, _ = scipy.linalg.lapack.dpstrf(G, lower=1)
        F = np.zeros_like(G)
        F[piv - 1, :rank] = np.tril(c)[:, :rank]
        Z = (F @ rng.standard_normal((G.shape[0], solve._AUTO_RANDOM_STARTS))).astype(np.float32)
        return T, (Z.T @ cov.X.astype(np.float32)).T.astype(np.float64)
    R = random_starts(key, rng, solve._AUTO_RANDOM_STARTS, nonneg=False, unit=single is None)
    return T, cov.matvec(R) if single is None else single(R, dense=True)


@pytest.fixture(autouse=True)
def _empty_draws(monkeypatch):
    monkeypatch.setattr(solve, "_DRAWS", {})


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31), st.integers(3, 300), st.integers(2, 40), st.integers(1, 12), st.booleans())
def test_kept_draws_give_the_generators_starts(seed, n, m, k, single_products):
    """First call (drawn) and second call (kept): the starts are bit-identical to those of the Generator
    of the same seed, on thin and tall data, with float64 and float32 products."""
    solve._DRAWS.clear()
    k = min(k, n)
    cov = Cov(_data(seed % 1000, m, n), None)
    V, _ = cov.factor(min(3, n))
    key = cov_key(cov)
    single = SingleProducts(cov) if single_products else None
    T, AR = _reference_starts(cov, V, k, key, np.random.default_rng(seed), single)
    p = T.shape[1] + V.shape[1] - 1
    for _ in range(2):
        names, X0 = solve._auto_starts(cov, V, k, key, seed, single)
        assert len(names) == X0.shape[1] == p + AR.shape[1]
        assert np.array_equal(X0[:, :T.shape[1]], T)
        assert np.array_equal(X0[:, p:], AR)
    rows = m if single_products and m < n and m * m <= solve._SAMPLE_STARTS_RATIO * n else n
    assert list(solve._DRAWS) == [(seed, n, rows)]


def test_second_fit_draws_nothing(monkeypatch):
    """The same seed and feature count again: no Generator is made (the draws are kept), and the answer
    is the first one's; another seed draws again."""
    cov = Cov(_data(0, 20, 60), None)
    first = solve.fit_cov(cov, 6, "auto", 3, 0.1, 4, None, {})
    made = []
    real = solve.as_rng
    monkeypatch.setattr(solve, "as_rng", lambda seed, *a: made.append(seed) or real(seed, *a))
    again = solve.fit_cov(Cov(_data(0, 20, 60), None), 6, "auto", 3, 0.1, 4, None, {})
    assert made == [] and np.array_equal(again.x, first.x) and again.variance == first.variance
    solve.fit_cov(cov, 6, "auto", 3, 0.1, 5, None, {})
    assert made == [5]


def test_generator_and_none_are_drawn_every_time():
    """A Generator is consumed as before (its state after the starts is the reference's); None and a
    Generator leave nothing kept."""
    cov = Cov(_data(1, 15, 40), None)
    V, _ = cov.factor(3)
    key = cov_key(cov)
    g, ref = np.random.default_rng(9), np.random.default_rng(9)
    _, X0 = solve._auto_starts(cov, V, 5, key, g, None)
    T, AR = _reference_starts(cov, V, 5, key, ref, None)
    assert np.array_equal(X0[:, :T.shape[1]], T) and np.array_equal(X0[:, -AR.shape[1]:], AR)
    assert g.bit_generator.state == ref.bit_generator.state
    solve._auto_starts(cov, V, 5, key, None, None)
    assert solve._DRAWS == {}


def test_kept_entries_are_bounded_and_read_only(monkeypatch):
    """At most ``_DRAWS_KEEP`` entries (the oldest leaves first), none larger than ``_DRAWS_MAX_BYTES``,
    and a kept array cannot be changed by a caller."""
    for seed in range(4):
        solve._start_draws(seed, 30)
    assert list(solve._DRAWS) == [(2, 30, 30), (3, 30, 30)]
    assert all(not a.flags.writeable for arrays in solve._DRAWS.values() for a in arrays)
    with pytest.raises(AssertionError, match="recorded"):
        solve._start_draws(2, 30).standard_normal((30, 3))
    monkeypatch.setattr(solve, "_DRAWS_MAX_BYTES", 8 * 34 * 30 - 1)
    assert isinstance(solve._start_draws(7, 30), np.random.Generator)
    assert (7, 30, 30) not in solve._DRAWS


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(4, 9), st.integers(3, 30), st.data())
def test_auto_with_kept_draws_against_brute_force(seed, n, m, data):
    """Fitted twice (the second with the kept draws): the same answer, feasible, at most the brute-force
    optimum and at least tpower's and em's (same seed)."""
    k = data.draw(st.integers(3, n))
    X = _data(seed, m, n)
    cov = Cov(X, None)
    a = solve.fit_cov(cov, k, "auto", 3, 0.1, seed, None, {})
    b = solve.fit_cov(cov, k, "auto", 3, 0.1, seed, None, {})
    assert np.array_equal(a.x, b.x)
    assert np.all(b.x >= 0) and np.count_nonzero(b.x) <= k
    opt, _ = brute_opt(X.T @ X / m, k)
    assert b.variance <= opt * (1 + 1e-9)
    for method in ("tpower", "em"):
        assert b.variance >= solve.fit_cov(cov, k, method, 3, 0.1, seed, None, {}).variance * (1 - 1e-12)


# ----------------------------------------------------------------------------- the batched ascent's looser stop
def _recorded_ascents(monkeypatch):
    """The AscentResult and xtol of every batched ascent of auto (not the polish's)."""
    seen = []
    real = solve.ascent

    def recording(*args, **kwargs):
        r = real(*args, **kwargs)
        seen.append((kwargs.get("xtol"), r))
        return r

    monkeypatch.setattr(solve, "ascent", recording)
    return seen


def test_batched_ascent_stops_looser_than_the_polish(monkeypatch):
    """auto's batched ascent stops a settled column at ``_AUTO_XTOL`` (the polish and tpower keep 1e-12):
    on a 300 x 60 covariance (k = 4) it takes 10 steps instead of 14, for the same answer."""
    cov = Cov(_data(0, 300, 60), None)
    cov.dense()
    seen = _recorded_ascents(monkeypatch)
    xtol = solve._AUTO_XTOL
    loose = solve.fit_cov(cov, 4, "auto", 3, 0.1, 0, None, {})
    monkeypatch.setattr(solve, "_AUTO_XTOL", 1e-12)
    tight = solve.fit_cov(cov, 4, "auto", 3, 0.1, 0, None, {})
    (x_loose, r_loose), (x_tight, r_tight) = seen
    assert x_loose == xtol > 1e-12 == x_tight
    assert r_loose.iterations < r_tight.iterations
    assert np.array_equal(loose.x, tight.x) and loose.variance == tight.variance


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(4, 9), st.integers(10, 60), st.data())
def test_looser_stop_against_brute_force(seed, n, m, data):
    """Tall data (a covariance, no support jump): the answer is feasible, at most the brute-force optimum,
    at least tpower's, em's and the spannogram's, and at least the tight stop's best start before its
    polish (the polish starts from the support's limit either way)."""
    k = data.draw(st.integers(3, n))
    X = _data(seed, m, n)
    cov = Cov(X, None)
    r = solve.fit_cov(cov, k, "auto", 3, 0.1, seed, None, {})
    assert np.all(r.x >= 0) and np.count_nonzero(r.x) <= k and np.linalg.norm(r.x) == pytest.approx(1.0)
    opt, _ = brute_opt(X.T @ X / m, k)
    assert r.variance <= opt * (1 + 1e-9)
    for method in ("tpower", "em", "spannogram"):
        assert r.variance >= solve.fit_cov(cov, k, method, 3, 0.1, seed, None, {}).variance * (1 - 1e-12), method
