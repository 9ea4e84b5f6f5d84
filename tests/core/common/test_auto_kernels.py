"""The kernels that made auto cheaper (issue 39 item 4) against plain references written here: the
exact k-th largest from a sample, the compact projection of the starts, the whole product of compact
columns through X, the batched polish, and the ascent's stops (a finished support, a dominated column)."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from nspca_core._common.ascent import Screen, ascent
from nspca_core._common.polish import polish, polish_many
from nspca_core._common.steps import TopK, _to_compact, _to_dense, kth_largest, project, project_compact
from nspca_core.operators.cov import Cov


def _columns(rng, n, p, kind):
    """Columns with the structures the sampled threshold must survive: noise, zeros, coarse ties,
    sorted columns (the sample then sees only part of the range), mostly-zero sparse columns."""
    if kind == 0:
        return rng.standard_normal((n, p))
    if kind == 1:
        return np.maximum(rng.standard_normal((n, p)), 0.0)
    if kind == 2:
        return np.round(rng.standard_normal((n, p)) * 2) / 2
    if kind == 3:
        return np.sort(rng.standard_normal((n, p)), axis=0)
    Y = np.zeros((n, p))
    for j in range(p):
        nz = int(rng.integers(0, min(n, 200) + 1))
        Y[rng.choice(n, nz, replace=False), j] = rng.standard_normal(nz)
    return Y


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 4000), st.integers(1, 6), st.integers(0, 4), st.data())
def test_kth_largest_is_the_sorted_columns_entry(seed, n, p, kind, data):
    rng = np.random.default_rng(seed)
    Y = _columns(rng, n, p, kind)
    j = data.draw(st.integers(1, min(n, 80)))
    expect = np.array([np.sort(Y[:, c])[::-1][j - 1] for c in range(p)])
    assert np.array_equal(kth_largest(Y, j), expect)


def test_kth_largest_takes_the_sampled_path():
    """The inputs above reach the sampled threshold (long columns, small j), not only the partition."""
    rng = np.random.default_rng(0)
    Y = rng.standard_normal((5000, 3))
    import nspca_core._common.steps as steps

    assert 4 * steps._KTH_STRIDE * 10 <= Y.shape[0] and Y.shape[0] >= steps._KTH_SAMPLE_MIN_N
    assert np.array_equal(kth_largest(Y, 10), -np.sort(-Y, axis=0)[9])


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 3000), st.integers(1, 8), st.booleans(), st.data())
def test_project_compact_is_project(seed, n, p, with_key, data):
    """The same kept entries as the dense projection, the same values to the last bits, unit norm;
    a column with no positive entry becomes the basis vector of the smallest key."""
    rng = np.random.default_rng(seed)
    X0 = _columns(rng, n, p, int(rng.integers(0, 5))) * 10.0 ** float(rng.integers(-150, 150))
    X0[:, 0] = -np.abs(X0[:, 0]) if seed % 3 == 0 else X0[:, 0]
    k = data.draw(st.integers(1, n))
    key = rng.permutation(n) if with_key else None
    idx, vals = _to_compact(project(X0, k, key), k)
    ci, cv = project_compact(X0, k, key, k)
    assert np.array_equal(idx, ci)
    assert np.allclose(vals, cv, rtol=4e-16 * k, atol=0)
    assert np.allclose(np.linalg.norm(cv, axis=0), 1.0, rtol=1e-14)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(3, 40), st.integers(50, 3000), st.integers(1, 30), st.data())
def test_screen_whole_product_is_the_matvec(seed, m, n, q, data):
    """The whole product of compact columns through X: the floats Cov.matvec gives the dense columns."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n))
    cov = Cov(X, None)
    k = data.draw(st.integers(1, min(n, 200)))
    Z = np.zeros((n, q))
    for j in range(q):
        Z[rng.choice(n, k, replace=False), j] = rng.random(k) + 0.1
    ia, va = _to_compact(Z, k)
    V, eig = cov.factor(min(3, m))
    assert np.array_equal(Screen(cov, V, eig[0])._whole(ia, va, n), cov.matvec(_to_dense(ia, va, n)))


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(5, 60), st.integers(3, 40), st.data())
def test_polish_many_is_polish_per_column(seed, n, m, data):
    """Each column of the batched polish: feasible, never below its start, and the value polish()
    reaches alone (up to rounding: the products of a batch round differently)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n)) * rng.uniform(0.2, 3.0, n)
    cov = Cov(X - X.mean(axis=0), None)
    k = data.draw(st.integers(1, n))
    X0 = project(np.abs(rng.standard_normal((n, 3))), k)
    P, f, _ = polish_many(cov, X0, k)
    for j in range(3):
        x = P[:, j]
        assert np.all(x >= 0) and np.count_nonzero(x) <= k and np.isclose(np.linalg.norm(x), 1.0)
        assert f[j] == pytest.approx(cov.quad(x), rel=1e-12)
        assert f[j] >= cov.quad(X0[:, j]) * (1 - 1e-12)
        assert f[j] == pytest.approx(polish(cov, X0[:, j], k)[1], rel=1e-9)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(5, 1500), st.integers(3, 30), st.data())
def test_ascent_stops_keep_every_column_at_or_above_its_start(seed, n, m, data):
    """With merge='support' (a finished support ends the columns reaching it) and dominated columns
    stopped: every column is feasible and at least its start's value; stopped columns are not
    reported converged; copies of a start end where it ends."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n)) * rng.uniform(0.2, 3.0, n)
    cov = Cov(X - X.mean(axis=0), None)
    k = data.draw(st.integers(1, max(1, n // 4)))
    R = np.abs(rng.standard_normal((n, 12)))
    R[:, 6:] = R[:, :6]
    r = ascent(cov.matvec, R, k, step=TopK(compact_start=True), merge="support", dominated=100.0)
    start = cov.quads(project(R, k))
    assert np.all(r.values >= start * (1 - 1e-12))
    assert np.all(r.X >= 0) and np.all(np.count_nonzero(r.X, axis=0) <= k)
    assert np.allclose(cov.quads(r.X), r.values, rtol=1e-10)
    assert np.array_equal(r.values[:6], r.values[6:]) and np.array_equal(r.X[:, :6], r.X[:, 6:])


def test_dominated_columns_stop_and_the_best_stays():
    """On data with one strong direction, starts far below the best stop early (reported not
    converged), and the best point is the one the full ascent reaches."""
    rng = np.random.default_rng(5)
    n, m = 400, 30
    X = rng.standard_normal((m, 2)) @ (rng.standard_normal((2, n)) * rng.uniform(0.1, 3.0, n))
    X += 0.3 * rng.standard_normal((m, n))
    cov = Cov(X - X.mean(axis=0), None)
    R = np.abs(rng.standard_normal((n, 24)))
    full = ascent(cov.matvec, R, 10, merge="support")
    cut = ascent(cov.matvec, R, 10, merge="support", dominated=100.0)
    assert not cut.converged.all() and full.converged.all()
    assert cut.values.max() == full.values.max()
    assert np.array_equal(cut.X[:, np.argmax(cut.values)], full.X[:, np.argmax(full.values)])


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 1500), st.integers(1, 6), st.booleans(), st.data())
def test_both_signs_step_is_the_longer_truncation(seed, n, q, compact, data):
    """The exact rank-1 step selects T_k(-y) only where it can be longer; its points are those of
    selecting both and keeping the longer (columns of mostly negative entries flip)."""
    from nspca_core._common.steps import _step

    rng = np.random.default_rng(seed)
    k = data.draw(st.integers(1, max(1, n // 4) if compact else n))
    Y = rng.standard_normal((n, q)) + rng.uniform(-2.0, 2.0, q)  # shifted: some columns mostly negative
    step = TopK(both_signs=True)
    if compact and n >= 4 * k:
        ia = np.full((k, q), n, dtype=np.intp)
        ia[0] = 0
        va = np.zeros((k, q))
        va[0] = 1.0
    else:
        ia, va = np.zeros((0, q), dtype=np.intp), np.eye(n, q)
    zi, zv, _, _ = step(Y, ia, va, k, None, 1e-12)
    Zp, Zm = _step(Y, k, None, False, False), _step(-Y, k, None, False, False)
    flip = np.einsum("ij,ij->j", Zm, Zm) > np.einsum("ij,ij->j", Zp, Zp)
    expect = np.where(flip, Zm, Zp)
    got = _to_dense(zi, zv, n)
    ref = _to_dense(*_to_compact(expect, k), n) if ia.shape[0] else expect
    nrm = np.linalg.norm(ref, axis=0)
    assert np.array_equal(got != 0, ref != 0)
    assert np.allclose(got, ref / np.where(nrm > 0, nrm, 1.0), rtol=1e-14, atol=0)


def _one_direction_data():
    rng = np.random.default_rng(5)
    n, m = 400, 30
    X = rng.standard_normal((m, 2)) @ (rng.standard_normal((2, n)) * rng.uniform(0.1, 3.0, n))
    X += 0.3 * rng.standard_normal((m, n))
    return Cov(X - X.mean(axis=0), None), np.abs(rng.standard_normal((n, 24)))



@pytest.mark.parametrize("f", [2.0, 20.0])
def test_far_factors_equal_to_dominated_are_the_plain_rule(f):
    """``far`` with every factor equal to ``dominated`` gives the floats of ``dominated`` alone."""
    cov, R = _one_direction_data()
    a = ascent(cov.matvec, R, 10, merge="support", dominated=f)
    b = ascent(cov.matvec, R, 10, merge="support", dominated=f, far=(np.full(R.shape[1], f), 0.5))
    assert np.array_equal(a.X, b.X) and np.array_equal(a.values, b.values)
    assert np.array_equal(a.converged, b.converged) and a.iterations == b.iterations


def test_far_factor_counts_on_both_sides():
    """Column 6 of this batch stops as dominated with factor 2 and ascends to the end with 5 (the
    others unchanged): its own factor decides, and only while it is below ``fraction`` of the best
    (auto's random starts: ``_AUTO_RANDOM_DOMINATED`` below ``_AUTO_RANDOM_FAR``)."""
    cov, R = _one_direction_data()
    for own, frac, stops in ((2.0, 1.0, True), (5.0, 1.0, False), (2.0, 0.0, False)):
        d = np.full(R.shape[1], 5.0)
        d[6] = own
        r = ascent(cov.matvec, R, 10, merge="support", dominated=5.0, far=(d, frac))
        assert r.converged[6] != stops
        assert np.count_nonzero(~r.converged) == 22 + stops


def test_auto_random_starts_take_their_own_dominance_factor():
    from nspca_core import solve

    names = ["rank1(u1)", "top-variance", "tpower#1", "random#1", "random#2"]
    d, frac = solve._far(names)
    assert np.array_equal(d, [solve._AUTO_DOMINATED] * 3 + [solve._AUTO_RANDOM_DOMINATED] * 2)
    assert solve._AUTO_RANDOM_DOMINATED < solve._AUTO_DOMINATED and 0 < frac == solve._AUTO_RANDOM_FAR < 1
    assert solve._far(names[:3]) is None


def test_auto_stops_far_random_starts_sooner(monkeypatch):
    """Counting, through auto's own ascent on thin module data (72 x 1,000, k = 50): the random starts
    far below the best stop as dominated (not converged) with ``_AUTO_RANDOM_DOMINATED``, more of them
    than with the factor of the other starts; the answer is the same."""
    import nspca_core as nc
    from nspca_core import solve

    rng = np.random.default_rng(72)
    X = rng.standard_normal((72, 6)) @ (rng.standard_normal((6, 1000)) * (rng.random((6, 1000)) < 0.05))
    X += 0.5 * rng.standard_normal((72, 1000))
    seen = []
    real = solve.ascent

    def spy(*args, **kw):
        r = real(*args, **kw)
        seen.append(int(np.count_nonzero(~r.converged)))
        return r

    monkeypatch.setattr(solve, "ascent", spy)
    out = {}
    for f in (solve._AUTO_DOMINATED, solve._AUTO_RANDOM_DOMINATED):
        monkeypatch.setattr(solve, "_AUTO_RANDOM_DOMINATED", f)
        seen.clear()
        out[f] = (nc.fit(X, k=50, method="auto", certify=False).variance, seen[0])
    (v20, n20), (v2, n2) = out[solve._AUTO_DOMINATED], out[min(out)]
    assert v2 == v20 and n2 > n20
