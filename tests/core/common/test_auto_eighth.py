"""auto at tpower's price (issue 39 item 4, eighth round): the factor's rank-1 starts from one sort
(:func:`rank1_points`) and the polish's fixed-point check read from the products
(:func:`_plainly_fixed`) change no float.  Checked against the per-column kernel, the step itself, and
brute force on tiny inputs."""

from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import nspca_core._common.ascent as ascent_mod
import nspca_core._common.polish as polish_mod
import nspca_core._common.rank1 as rank1_mod
from nspca_core._common.ascent import cov_key
from nspca_core._common.polish import _plainly_fixed, polish_many
from nspca_core._common.rank1 import rank1_point, rank1_points
from nspca_core._common.steps import TopK, project
from nspca_core.operators.cov import Cov
from nspca_core.solve import fit_cov
from tests.bruteforce import brute_opt


def _columns(seed, n, c, ties):
    """Columns of both signs; ``ties``: small integers (many equal entries, zeros, all-negative columns)."""
    rng = np.random.default_rng(seed)
    if ties:
        return rng.integers(-3, 4, (n, c)).astype(float)
    return rng.standard_normal((n, c)) * rng.uniform(0.1, 3.0, c)


def _brute_rank1(v, k):
    """max (v^T x)^2 over unit x >= 0 with at most k nonzeros: every support, x_I = ±v_I / ||v_I||
    where that is nonnegative."""
    best = 0.0
    for size in range(1, k + 1):
        for J in combinations(range(v.size), size):
            u = v[list(J)]
            if (u >= 0).all() or (u <= 0).all():
                best = max(best, float(u @ u))
    return best


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 40), st.integers(0, 4), st.booleans(), st.data())
def test_rank1_points_are_the_per_column_points(seed, n, c, ties, data):
    """Bit for bit rank1_point's column, both through the sort and through the per-column fallback."""
    k = data.draw(st.integers(1, n))
    W = _columns(seed, n, c, ties)
    if c and data.draw(st.booleans()):
        W[:, 0] = 0.0  # a zero column: the first basis vector
    expect = np.column_stack([rank1_point(W[:, j], k) for j in range(c)]) if c else np.zeros((n, 0))
    assert np.array_equal(rank1_points(W, k), expect)


def test_rank1_points_fallback_above_the_sort_limit(monkeypatch):
    """Above _SORT_MAX_N (and on non-finite input) the per-column kernel answers: the same floats."""
    W = _columns(3, 50, 3, True)
    expect = np.column_stack([rank1_point(W[:, j], 7) for j in range(3)])
    monkeypatch.setattr(rank1_mod, "_SORT_MAX_N", 10)
    assert np.array_equal(rank1_points(W, 7), expect)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 8), st.booleans(), st.data())
def test_rank1_points_reach_the_brute_force_optimum(seed, n, ties, data):
    """(v^T x)^2 of each column's point is the rank-1 optimum by enumeration of supports."""
    k = data.draw(st.integers(1, n))
    W = _columns(seed, n, 2, ties)
    X = rank1_points(W, k)
    for j in range(2):
        x = X[:, j]
        assert (x >= 0).all() and np.count_nonzero(x) <= k and np.isclose(np.linalg.norm(x), 1.0)
        assert np.isclose(float(W[:, j] @ x) ** 2, _brute_rank1(W[:, j], k), rtol=1e-12, atol=1e-12)


def _cov(seed, m, n):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n)) * rng.uniform(0.2, 3.0, n)
    if seed % 3 == 0:  # a strong direction: supports settle, the polish's points are fixed points
        X += np.outer(rng.standard_normal(m), rng.uniform(0.5, 2.0, n))
    return Cov(X - X.mean(axis=0), None)


def _starts(seed, n, k, key):
    """Three feasible starts (the polish's input: unit, nonnegative, at most k nonzeros)."""
    return project(np.random.default_rng(seed).standard_normal((n, 3)), k, key)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 40), st.integers(3, 30), st.booleans(), st.data())
def test_plainly_fixed_implies_the_steps_fixed_point(seed, n, m, both, data):
    """Where the check from the products says "fixed", the step itself leaves every column where it is
    (on support limits, the polish's points, and on perturbed ones that are not)."""
    k = data.draw(st.integers(1, n))
    cov = _cov(seed, m, n)
    key = cov_key(cov)
    step = TopK(both_signs=both)
    X, _, _ = polish_many(cov, _starts(seed, n, k, key), k, key=key,
                          reweight_first=True)
    if data.draw(st.booleans()):  # off the limit
        X = X + 1e-4 * (X != 0) * np.random.default_rng(seed + 1).uniform(0, 1, X.shape)
        X /= np.linalg.norm(X, axis=0)
    Y = cov.matvec(X)
    if _plainly_fixed(Y, X, k, step):
        done = step(Y, np.zeros((0, X.shape[1]), dtype=np.intp), X, k, key, ascent_mod._XTOL)[2]
        assert done.all()


def test_plainly_fixed_is_reached_on_settled_limits():
    """The fast check answers at the support limits of data with a strong direction (else it would save
    nothing), and says no off them."""
    cov = _cov(0, 30, 40)
    key = cov_key(cov)
    X, _, _ = polish_many(cov, _starts(0, 40, 5, key), 5, key=key,
                          reweight_first=True)
    step = TopK(both_signs=True)
    assert _plainly_fixed(cov.matvec(X), X, 5, step)
    Z = X + 1e-3 * (X != 0) * np.arange(40)[:, None]
    Z /= np.linalg.norm(Z, axis=0)
    assert not _plainly_fixed(cov.matvec(Z), Z, 5, step)
    assert not _plainly_fixed(cov.matvec(X), X, 5, TopK(signed=True))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(3, 30), st.integers(3, 20), st.data())
def test_polish_with_and_without_the_fast_check_is_the_same(seed, n, m, data):
    """polish_many(reweight_first) gives the same floats whether the fixed point is read from the products
    or from the step."""
    k = data.draw(st.integers(1, n))
    cov = _cov(seed, m, n)
    key = cov_key(cov)
    X0 = _starts(seed, n, k, key)
    got = polish_many(cov, X0, k, key=key, reweight_first=True)
    mp = pytest.MonkeyPatch()
    mp.setattr(polish_mod, "_plainly_fixed", lambda *a: False)
    try:
        ref = polish_many(cov, X0, k, key=key, reweight_first=True)
    finally:
        mp.undo()
    assert np.array_equal(got[0], ref[0]) and np.array_equal(got[1], ref[1]) and got[2] == ref[2]


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(3, 8), st.integers(3, 12), st.data())
def test_auto_against_brute_force_and_tpower_on_tiny_inputs(seed, n, m, data):
    """auto (through both changed routes) is feasible, never above the enumerated optimum and never
    below tpower with the same seed."""
    k = data.draw(st.integers(3, n))
    cov = _cov(seed, m, n)
    d = min(3, n - 1)
    r = fit_cov(cov, k, "auto", d, 0.1, seed % 5, None, {})
    t = fit_cov(cov, k, "tpower", d, 0.1, seed % 5, None, {})
    opt, _ = brute_opt(cov.dense(), k)
    assert (r.x >= 0).all() and np.count_nonzero(r.x) <= k
    assert r.variance <= opt * (1 + 1e-9) + 1e-12
    assert r.variance >= t.variance * (1 - 1e-12)
