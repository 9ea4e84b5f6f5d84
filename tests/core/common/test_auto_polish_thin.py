"""auto's polish on thin data from _COMPACT_MIN_N features on (issue 39 item 4, seventeenth round): the
fixed-point check read from the products (:func:`_plainly_fixed`) before the ascent, never the step's own
selection there.  Where it answers, the polish returns its reweighted points instead of the ascent's copy of
them (one rounding of a normalization apart): the same supports and values within rounding, never below
the start, and never below tpower or the brute-force optimum's bound on small inputs."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import nspca_core._common.polish as polish_mod
from nspca_core._common.ascent import cov_key
from nspca_core._common.polish import _checks_fixed, _fixed_points, polish_many
from nspca_core._common.steps import _COMPACT_MIN_N, TopK, project
from nspca_core.operators.cov import Cov
from nspca_core.solve import fit_cov
from tests.bruteforce import brute_opt


def _thin(seed, m, n, strong=True):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n)) * rng.uniform(0.2, 3.0, n)
    if strong:  # a strong direction: supports settle, the polish's points are fixed points
        X += 2.0 * np.outer(rng.standard_normal(m), rng.uniform(0.5, 2.0, n))
    return Cov(X - X.mean(axis=0), None)


def _starts(seed, n, k, key, c=3):
    return project(np.random.default_rng(seed).standard_normal((n, c)), k, key)


def test_which_polish_asks_the_check():
    """None without reweight_first and on operators other than thin in-memory data from
    _COMPACT_MIN_N features (a formed A, a covariance); the whole check below it; plain only above."""
    n = _COMPACT_MIN_N
    thin = _thin(0, 12, n)
    assert _checks_fixed(thin, n, False) is None
    assert _checks_fixed(thin, n, True) is True
    assert _checks_fixed(thin, n - 1, True) is False
    assert _checks_fixed(_thin(0, 12, 40), 40, True) is False
    formed = _thin(0, 12, n)
    formed.dense()
    assert _checks_fixed(formed, n, True) is None
    assert _checks_fixed(Cov(None, np.eye(n)), n, True) is None
    wide_rows = Cov(np.random.default_rng(1).standard_normal((n + 5, n)), None)  # m >= n: not thin
    assert _checks_fixed(wide_rows, n, True) is None


def test_plain_only_never_runs_the_step():
    """With plain_only the step's selection is not made: off the fixed points the answer is False at once."""
    cov = _thin(3, 10, 60)
    key = cov_key(cov)
    X = _starts(3, 60, 4, key)

    class Refuse(TopK):
        def __call__(self, *a, **kw):
            raise AssertionError("the step ran")

    step = Refuse(both_signs=True, compact_start=True)
    assert _fixed_points(cov, X, 4, key, step, plain_only=True) is False
    with pytest.raises(AssertionError, match="the step ran"):
        _fixed_points(cov, X, 4, key, step, plain_only=False)


def _without_check(monkeypatch, cov, X0, k, key):
    monkeypatch.setattr(polish_mod, "_checks_fixed", lambda *a: None)
    try:
        return polish_many(cov, X0, k, key=key, reweight_first=True)
    finally:
        monkeypatch.undo()


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 10_000), st.integers(4, 16), st.integers(1, 12), st.booleans())
def test_polish_on_thin_data_against_the_ascent(seed, m, k, strong):
    """From _COMPACT_MIN_N features on thin data, polish_many(reweight_first) with the check and with the
    ascent alone: the same supports, values within 1e-12 relative, each at least the start's; where the
    check answered (one iteration) the points are the reweighted starts the ascent began from."""
    n = _COMPACT_MIN_N + seed % 50
    cov = _thin(seed, m, n, strong)
    key = cov_key(cov)
    X0 = _starts(seed, n, k, key)
    got = polish_many(cov, X0, k, key=key, reweight_first=True)
    ref = _without_check(pytest.MonkeyPatch(), cov, X0, k, key)
    assert np.array_equal(got[0] != 0, ref[0] != 0)
    np.testing.assert_allclose(got[1], ref[1], rtol=1e-12, atol=0)
    start = cov.quads(X0)
    assert (got[1] >= start * (1 - 1e-12)).all()
    for j in range(X0.shape[1]):  # the values returned are those of the points returned
        assert np.isclose(got[1][j], cov.quad(got[0][:, j]), rtol=1e-12, atol=0)


def test_the_check_answers_on_settled_thin_data(monkeypatch):
    """On data with a strong direction the check answers (the polish then takes one iteration) and the
    points match the ascent's to rounding; a mutation that skips the check changes the iteration count."""
    n = _COMPACT_MIN_N + 7
    cov = _thin(0, 12, n)
    key = cov_key(cov)
    k = 5
    X0 = polish_many(cov, _starts(0, n, k, key), k, key=key, reweight_first=True)[0]  # settled points
    got = polish_many(cov, X0, k, key=key, reweight_first=True)
    assert got[2] == 1
    ref = _without_check(monkeypatch, cov, X0, k, key)
    assert ref[2] >= 1
    np.testing.assert_allclose(got[0], ref[0], rtol=0, atol=1e-14)
    np.testing.assert_allclose(got[1], ref[1], rtol=1e-13, atol=0)


@settings(max_examples=6, deadline=None)
@given(st.integers(0, 10_000), st.integers(3, 6))
def test_auto_on_thin_data_as_through_the_ascent(seed, k):
    """auto on thin data from _COMPACT_MIN_N features with the check and with the polish's ascent alone:
    feasible, the same support, the variance within 1e-12 relative (never lower beyond it)."""
    n = _COMPACT_MIN_N + seed % 30
    cov = _thin(seed, 10 + seed % 7, n, strong=seed % 2 == 0)
    r = fit_cov(cov, k, "auto", 3, 0.1, seed % 5, None, {})
    mp = pytest.MonkeyPatch()
    mp.setattr(polish_mod, "_checks_fixed", lambda *a: None)
    try:
        ref = fit_cov(cov, k, "auto", 3, 0.1, seed % 5, None, {})
    finally:
        mp.undo()
    assert (r.x >= 0).all() and np.count_nonzero(r.x) <= k
    assert np.array_equal(r.x != 0, ref.x != 0)
    assert r.variance >= ref.variance * (1 - 1e-12)


def test_auto_below_the_brute_force_optimum_through_the_new_route(monkeypatch):
    """The new route on inputs small enough to enumerate (the threshold lowered so it runs): auto never
    above the optimum, never below tpower."""
    monkeypatch.setattr(polish_mod, "_COMPACT_MIN_N", 6)
    for seed in range(6):
        cov = _thin(seed, 5, 9, strong=seed % 2 == 0)
        for k in (3, 4):
            r = fit_cov(cov, k, "auto", 3, 0.1, seed, None, {})
            t = fit_cov(cov, k, "tpower", 3, 0.1, seed, None, {})
            opt, _ = brute_opt(cov.dense(), k)
            assert r.variance <= opt * (1 + 1e-9) + 1e-12
            assert r.variance >= t.variance * (1 - 1e-12)


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 60), st.integers(1, 4), st.booleans(), st.data())
def test_longest_negative_bounds_the_step_from_above(seed, n, c, ties, data):
    """Against the sorted sum: at least ||T_k(-y)||^2 in every column (1e-12 relative), and that sum itself
    (to rounding) where k max((-y)_+)^2 is not below zz by the margin."""
    k = data.draw(st.integers(1, n))
    rng = np.random.default_rng(seed)
    Y = rng.integers(-3, 4, (n, c)).astype(float) if ties else rng.standard_normal((n, c)) * rng.uniform(0.1, 3, c)
    zz = rng.uniform(0, 2, c) * k * np.maximum(-Y.min(axis=0), 0.0) ** 2
    got = polish_mod._longest_negative(np.ascontiguousarray(Y.T), k, zz)  # one row per product
    N = np.maximum(-Y, 0.0)
    exact = np.array([float(np.sum(np.sort(N[:, j] ** 2)[::-1][:k])) for j in range(c)])
    assert (got >= exact * (1 - 1e-12)).all()
    neg = np.maximum(-Y.min(axis=0), 0.0)
    crude = k * neg * neg
    loose = ~(crude * (1 + 1e-6) < zz)
    np.testing.assert_allclose(got[loose], exact[loose], rtol=1e-12, atol=0)
    np.testing.assert_array_equal(got[~loose], crude[~loose])


def test_the_check_answers_at_large_k():
    """On data whose leading direction has both signs, the crude k max((-y)_+)^2 bound fails on settled
    points at k = 20..150 of 400; the partition's sum lets the check answer, and the step agrees."""
    n, m = 400, 12
    step = TopK(both_signs=True, compact_start=True)
    for seed in range(3):
        rng = np.random.default_rng(seed)
        w = rng.uniform(0.5, 2.0, n)
        w[rng.permutation(n)[:n // 2]] *= -1
        X = 0.3 * rng.standard_normal((m, n)) + 2.0 * np.outer(rng.standard_normal(m), w)
        cov = Cov(X - X.mean(axis=0), None)
        key = cov_key(cov)
        for k in (20, 60, 150):
            P = polish_many(cov, _starts(seed, n, k, key), k, key=key, reweight_first=True)[0]
            Y = cov.matvec(P)
            neg = np.maximum(-Y.min(axis=0), 0.0)
            YJ = np.where(P != 0, Y, 0.0)
            zz = np.einsum("ij,ij->j", YJ, YJ)
            assert not (k * neg * neg * (1 + 1e-6) < zz).any()  # the crude bound alone says no
            assert polish_mod._plainly_fixed(Y, P, k, step)
            assert step(Y, np.zeros((0, P.shape[1]), dtype=np.intp), P, k, key, 1e-12)[2].all()
