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
