"""auto's guarantee (issue 39 target 4): never less variance than tpower or another cheap shipped method,
on any data.  The dominance stop of auto's batched ascent (``ascent(dominated=)``) once stopped the column
that would have ended as tpower's winner (random thin 12 x 1,019 data, k = 3, random_state 4: auto / tpower
0.9445); tpower's own starts are now exempt from it (``ascent(exempt=)``, solve._tpower_own)."""

import numpy as np
import pytest
from hypothesis import Phase, example, given, settings, strategies as st

from nspca_core._common.ascent import ascent, project
from nspca_core._common.steps import TopK
from nspca_core.operators.cov import Cov
from nspca_core.solve import _AUTO_DOMINATED, _AUTO_EM_MAX_N, _tpower_own, fit_cov


def _data(seed, m, n, strong):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n)) * rng.uniform(0.2, 3.0, n)
    if strong:  # a strong direction: supports settle early
        X += 2.0 * np.outer(rng.standard_normal(m), rng.uniform(0.5, 2.0, n))
    cov = Cov(X - X.mean(axis=0), None)
    if not cov.thin:
        cov.dense()
    return cov


def _others(n):
    """The cheap shipped methods bench_auto --guarantee compares (enet and the spannogram on small n); em
    where auto runs it (``_AUTO_EM_MAX_N``): above, auto >= em is not built in, and it fails (random thin
    30 x 280 data, seed 2349 with a strong direction, k = 3, random_state 5: auto / em 0.99701)."""
    out = [("tpower", 3), ("zass", 3)] + ([("em", 3)] if n <= _AUTO_EM_MAX_N else [])
    return out + [("enet", 3), ("spannogram", 2)] if n <= 300 else out


# auto >= tpower (its own starts, exempt from the dominance stop) and >= em where auto runs it are built in;
# zass, enet and the d = 2 spannogram are not run by auto at d = 3, and random draws exist where one of them is
# better (below).  So the draws are fixed (derandomize): the test checks these draws on every change, and a
# new draw that breaks the unbuilt part is a finding for bench_auto's grid, not a flaky make test.
@settings(max_examples=25, deadline=None, derandomize=True, phases=[Phase.explicit, Phase.generate])
@given(st.integers(0, 10_000), st.sampled_from([(12, 1019), (10, 300), (30, 280), (8, 600), (60, 40), (40, 60),
                                                  (150, 90), (20, 120)]),
       st.integers(3, 10), st.integers(0, 5), st.booleans())
@example(8899, (12, 1019), 3, 4, False)  # auto / tpower 0.9445 (and / em 0.9817) before the exemption
def test_auto_never_below_a_cheap_shipped_method(seed, shape, k, rs, strong):
    """auto's variance >= that of tpower, zass (em, enet, the d = 2 spannogram on small n), same d and
    random_state, within 1e-12 relative, on thin data (float32 exploration from 256 features) and dense."""
    m, n = shape
    cov = _data(seed, m, n, strong)
    a = fit_cov(cov, k, "auto", 3, 0.1, rs, None, {})
    assert (a.x >= 0).all() and np.count_nonzero(a.x) <= k
    for method, d in _others(n):
        v = fit_cov(cov, k, method, d, 0.1, rs, None, {}).variance
        assert a.variance >= v * (1 - 1e-12), (method, a.variance / v)


@pytest.mark.parametrize("seed, shape, k, rs, strong, method, d, ratio", [
    pytest.param(1645, (10, 300), 6, 4, False, "enet", 3, 0.98910, marks=pytest.mark.xfail(strict=True)),
    pytest.param(732, (40, 60), 5, 1, True, "spannogram", 2, 0.99689, marks=pytest.mark.xfail(strict=True)),
])
def test_inputs_where_a_method_auto_does_not_run_is_better(seed, shape, k, rs, strong, method, d, ratio):
    """Random draws (issue 39, helper auto23) where the eps-net or the d = 2 spannogram, which auto does not
    run at d = 3 (n > 52: ``_exact_d3_cheap``; ``_AUTO_ENET`` off), finds more variance than auto: the
    guarantee beyond tpower and em is bench_auto's grid and the fixed draws above, not every input.  Strict
    xfail: the day auto reaches them, this fails and the README's wording can widen."""
    cov = _data(seed, *shape, strong)
    a = fit_cov(cov, k, "auto", 3, 0.1, rs, None, {}).variance
    v = fit_cov(cov, k, method, d, 0.1, rs, None, {}).variance
    assert a >= v * (1 - 1e-12), (method, a / v, "measured", ratio)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10_000), st.integers(5, 1200), st.integers(3, 30), st.data())
def test_exempt_columns_ascend_as_without_the_stop(seed, n, m, data):
    """Every column exempt: the floats of the ascent without the dominance stop.  Some exempt: those columns
    are never reported stopped (each converged, or merged into a column that carries its exemption)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n)) * rng.uniform(0.2, 3.0, n)
    cov = Cov(X - X.mean(axis=0), None)
    k = data.draw(st.integers(1, max(1, n // 4)))
    R = np.abs(rng.standard_normal((n, 12)))
    step = TopK(compact_start=True)
    free = ascent(cov.matvec, R, k, step=step, merge="support", xtol=1e-8)
    every = ascent(cov.matvec, R, k, step=step, merge="support", xtol=1e-8, dominated=_AUTO_DOMINATED,
                   exempt=np.ones(12, dtype=bool))
    assert np.array_equal(free.X, every.X) and np.array_equal(free.values, every.values)
    assert np.array_equal(free.converged, every.converged)
    own = np.arange(12) < 4
    some = ascent(cov.matvec, R, k, step=step, merge="support", xtol=1e-8, dominated=_AUTO_DOMINATED,
                  exempt=own)
    assert some.converged[own].all()
    assert np.all(some.values >= cov.quads(project(R, k)) * (1 - 1e-12))


def test_tpower_own_starts_are_the_exempt_columns():
    """The names of _auto_starts that are tpower's starts (its first two and its random ones), and only
    those, are exempt; the ε-net's batch has none."""
    names = ["spannogram(d=2)", "rank1(u1)", "top-variance", "tpower#2", "tpower#9", "rank1(u2)", "random#1"]
    assert _tpower_own(names).tolist() == [False, True, True, True, True, False, False]
    assert _tpower_own(["enet(d=3)#1", "enet(d=3)#2"]) is None
