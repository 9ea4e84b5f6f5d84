"""Issue 39 target 1 at large k (helper mllk7): a one-k split certificate on thin data with the cross table's
products in float32 (``cross._delta32``'s allowance), its column part first and the row part only where the
rest T still binds (``coupled._cross_cols_first``) and S's deferred anchored test behind its forecast
(``dual.dense_dual``).  Every bound is checked against brute force on tiny inputs; each change has a test that
fails without it."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nspca_core.certificates import _settings as S
from nspca_core.certificates import coupled, cross, dual, route, single
from nspca_core.certificates.cross import _delta32, cross_table
from nspca_core.operators.cov import Cov

from tests.core.certificates.test_split_coupled import _modules, modules_certified

TINY = settings(max_examples=30, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _force_split(monkeypatch, size: int):
    """Tiny thin data through the split code: S the ``size`` features of largest variance (and the point's
    support), T the rest; the light route and the DNN's route both open."""
    monkeypatch.setattr(S, "_DENSE_MAX_N", 2)
    monkeypatch.setattr(S, "_LOWRANK_MAX_RANK", 0)
    monkeypatch.setattr(S, "_SPLIT_MIN", size)
    monkeypatch.setattr(S, "_SPLIT_PER_K", 1)
    monkeypatch.setitem(S._EFFORT["auto"], "split_size", size)
    monkeypatch.setattr(single, "_SPLIT_BRANCH_MAX_K", 0)


def _best_cross(A: np.ndarray, Sx, T, i: int, j: int) -> float:
    """``max ||(A_IJ)_+||_2`` over |I| = i in S, |J| = j in T (enumeration): at least ``max y^T A_ST z``."""
    P = np.maximum(A[np.ix_(Sx, T)], 0.0)
    return max(np.linalg.norm(P[np.ix_(I, J)], 2)
               for I in combinations(range(len(Sx)), i) for J in combinations(range(len(T)), j))


@TINY
@given(st.integers(2, 5), st.integers(2, 6), st.integers(2, 9), st.integers(0, 2**31 - 1),
       st.sampled_from(["both", "cols", "rows"]), st.floats(-12, 12))
def test_each_part_of_the_cross_table_bounds_every_block_against_bruteforce(s, t, m, seed, part, e):
    """``cross_table(part=...)``: the column part alone, the row part alone and both bound ``C[i, j]`` from
    above (enumeration of the supports), at any scale (``2^e``: the float32 products' absolute terms), and
    the elementwise minimum of the two parts is the whole table, float for float."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, s + t)) * rng.random(s + t) * 3 * 2.0 ** e
    A = X.T @ X / m
    Sx, T = np.arange(s), np.arange(s, s + t)
    cov = Cov(X, None)
    C = cross_table(cov, Sx, T, s + 1, t + 1, part=part)
    for i in range(1, s + 1):
        for j in range(1, t + 1):
            best = _best_cross(A, Sx, T, i, j)
            assert C[i, j] >= best * (1 - 1e-12), (part, i, j, C[i, j], best)
    if part == "both":
        parts = [cross_table(cov, Sx, T, s + 1, t + 1, part=p) for p in ("cols", "rows")]
        assert np.array_equal(np.minimum(*parts), C)


@TINY
@given(st.integers(2, 5), st.integers(4, 14), st.integers(3, 8), st.integers(0, 2**31 - 1),
       st.sampled_from([1, 2, 4]), st.sampled_from(["both", "cols", "rows"]))
def test_float32_table_is_the_one_written_out_with_its_allowance(monkeypatch, s, t, m, seed, block, part):
    """With float32 products, T's variances decaying fast (the screen's regime) and blocks of 1..4 columns, the
    table (each part) is the one written out here from float32 products raised by ``_delta32`` (every column's
    squares: the screen dropped no column it needed), up to the products' own rounding in another blocking
    (within half the allowance either way), and bounds every block."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, s + t))
    X[:, s:] *= 4.0 ** -np.arange(t)
    A = X.T @ X / m
    Sx, Tx = np.arange(s), np.arange(s, s + t)
    monkeypatch.setattr(cross, "_BLOCK", block)
    jm = int(rng.integers(1, 4))
    C = cross_table(Cov(X, None), Sx, Tx, s, jm, part=part)
    X32 = X.astype(np.float32)
    d = np.einsum("ij,ij->j", X, X) / m
    b = np.divide(X32[:, Sx].T @ X32[:, Tx], m, dtype=np.float64)
    delta = _delta32(m, float(d[Sx].max()), float(d[Tx].max()))

    def written(shift: float) -> np.ndarray:
        P2 = np.maximum(b + delta + shift, 0.0) ** 2
        out = np.zeros((s + 1, jm + 1))
        for i in range(1, s + 1):
            for j in range(1, jm + 1):
                rows = np.sort(np.sort(P2, axis=1)[:, ::-1][:, :j].sum(axis=1))[::-1][:i].sum()
                cols = np.sort(np.sort(P2, axis=0)[::-1][:i].sum(axis=0))[::-1][:j].sum()
                out[i, j] = np.sqrt(min(rows, cols) if part == "both" else rows if part == "rows" else cols)
        return out

    lo, hi = written(-delta / 2), written(delta / 2)
    for i in range(1, s + 1):
        for j in range(1, jm + 1):
            assert lo[i, j] * (1 - 1e-12) <= C[i, j] <= hi[i, j] * (1 + 1e-12), (i, j, lo[i, j], C[i, j], hi[i, j])
            if i <= 2 and j <= 2:
                assert C[i, j] >= _best_cross(A, Sx, Tx, i, j) * (1 - 1e-12)


def test_float32_products_keep_their_allowance():
    """A cross entry that float32 rounds away (``(1 + 2^-30) 1 - 1 1 = 2^-30``: 0 in float32) is still bounded:
    the table takes ``_delta32``'s allowance, not float64's (with that one this test fails)."""
    X = np.array([[1.0 + 2.0 ** -30, 1.0], [1.0, -1.0]])  # columns: s = (1 + 2^-30, 1), t = (1, -1)
    A = X.T @ X / 2
    assert A[0, 1] > 0 and np.float32(X[0, 0]) * np.float32(1) - np.float32(1) == 0
    C = cross_table(Cov(X, None), np.array([0]), np.array([1]), 1, 1)
    assert C[1, 1] >= A[0, 1]
    assert cross._single(X, 2) is not None  # (the float32 route was taken)
    assert _delta32(2, 1.0, 1.0) > 2 * 4 * 2.0 ** -24


@TINY
@given(st.integers(2, 80), st.floats(-20, 20), st.integers(0, 2**31 - 1))
def test_delta32_covers_the_float32_products_of_random_columns(m, e, seed):
    """Half of ``_delta32`` is at least ``|b - A_st|`` for b the float32 product divided by m, A_st in
    float64 (its own error ~1e-16 relative, far inside), on columns with cancellation and any scale."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(m) * 2.0 ** e
    y = -x + rng.standard_normal(m) * 1e-3 * 2.0 ** e  # (nearly opposite: the dot product cancels)
    b = float(np.divide(x.astype(np.float32) @ y.astype(np.float32), m, dtype=np.float64))
    exact = float(x @ y) / m
    dx, dy = float(x @ x) / m, float(y @ y) / m
    assert abs(b - exact) <= _delta32(m, dx, dy) / 2 * (1 - 1e-6) + 1e-15 * np.sqrt(dx * dy)


def _spy_parts(monkeypatch) -> list:
    """Records the ``part`` of every cross table computed."""
    seen: list = []
    real = cross.cross_table

    def spy(*a, part="both", **kw):
        seen.append(part)
        return real(*a, part=part, **kw)

    for mod in (coupled, cross):
        monkeypatch.setattr(mod, "cross_table", spy)
    return seen


@TINY
@given(st.integers(9, 11), st.integers(5, 7), st.integers(4, 6), st.integers(0, 2**31 - 1))
def test_one_k_split_with_the_column_part_first_is_the_whole_tables_bound(monkeypatch, n, size, k, seed):
    """A one-k split certificate computing the cross table's column part first (S's own bound below the aim) is
    valid (brute force) and equal to the one computing the whole table at once (``cross.cols_first`` off): where
    S alone binds with the columns' table the rows could not lower it, elsewhere the rows are merged in."""
    _force_split(monkeypatch, size)
    monkeypatch.setattr(coupled, "_COUPLED_AIM", 1.01)  # (S's own bound below the aim: the column part first)
    cov, first = modules_certified(seed, n, k)
    with monkeypatch.context() as mp:
        mp.setattr(coupled, "cols_first", lambda *a, **kw: None)
        whole = route._certify_large(cov, k, None, "auto", None)
    assert first.upper_bound == whole.upper_bound and first.lower == whole.lower


def test_the_row_part_is_merged_only_where_T_binds_with_the_columns(monkeypatch):
    """``coupled._cross_cols_first``: where S's own bound binds with the columns' table (``j = 0``: S's bound
    far above the rest's terms) the row part is not computed (on the base the whole table always was); where T
    binds it is, and the merged table is the whole one, float for float.  A one-k certificate starts from the
    column part, a path's run (``keep``) computes the whole table (it is carried to other k)."""
    from dataclasses import replace

    from nspca_core.certificates.bounds import _rest_curve

    X = _modules(np.random.default_rng(0), 20, 40, 4)
    X[:, 12:] *= 0.3  # (T's variances below S's)
    cov = Cov(X, None)
    A = X.T @ X / X.shape[0]
    Sx, T, k = np.arange(12), np.arange(12, 40), 6
    dS = np.diag(A)[Sx]
    BT = _rest_curve(cov, T, k)
    cols = cross_table(cov, Sx, T, k, k, part="cols")
    calls = []

    def rows():
        calls.append(1)
        return cross_table(cov, Sx, T, k, k, part="rows")

    cert0, _ = single._certify_dense(Cov(A=A[np.ix_(Sx, Sx)]), k, None, "auto", None)
    loose = replace(cert0, upper_bound=1e3 * float(A.max()) * k, info={})
    assert coupled._cross_cols_first(loose, None, dS, k, BT, k, None, cols, rows) is cols and not calls
    tight = replace(cert0, upper_bound=float(dS.max()), info={})
    merged = coupled._cross_cols_first(tight, None, dS, k, BT, k, None, cols, rows)
    assert len(calls) == 1 and np.array_equal(merged, cross_table(cov, Sx, T, k, k))
    # (the part each certificate asks for first: here S's own bound certifies ~0.9999, T binds, the whole table
    # at once; with S's bound below the aim the column part first; a path's run the whole table)
    _force_split(monkeypatch, 30)
    X = _modules(np.random.default_rng(0), 60, 400, 8)
    seen = _spy_parts(monkeypatch)
    route._certify_large(Cov(X, None), 15, None, "auto", None)
    assert seen == ["both"], seen
    seen.clear()
    with monkeypatch.context() as mp:
        mp.setattr(coupled, "_COUPLED_AIM", 1.01)
        route._certify_large(Cov(X, None), 15, None, "auto", None)
    assert seen[:1] == ["cols"], seen
    seen.clear()
    route._certify_large(Cov(X, None), 15, None, "auto", None, keep={})
    assert seen == ["both"], seen


@pytest.mark.parametrize("fails", [True, False])
def test_the_deferred_anchored_test_on_S_waits_for_its_forecast(monkeypatch, fails):
    """On a split bound's S (``need_dual``, its own ``iters``) the anchored test after the DNN runs only where
    the forecast (``dual._forecast_fails``) does not say it fails (on the base it ran regardless: MLL's S at
    k = 120..200, 0.02-0.13 CPU s, proving nothing)."""
    rng = np.random.default_rng(3)
    X = _modules(rng, 40, 200, 6)
    A = X.T @ X / X.shape[0]
    k = 40
    x = np.zeros(200)
    x[np.argsort(-np.diag(A))[:k]] = 1.0
    x /= np.linalg.norm(x)
    calls = {"above": 0}
    real = dual._anchored_above

    def above(*a, **kw):
        calls["above"] += 1
        return real(*a, **kw)

    monkeypatch.setattr(dual, "_anchored_above", above)
    monkeypatch.setattr(dual, "_forecast_fails", lambda *a, **kw: fails)
    monkeypatch.setattr(S, "_CUT_BELOW", 1.0)  # (the deferred test's condition: the DNN's ratio below it)
    info: dict = {}
    bnds = {"variances": float(np.sort(np.diag(A))[-k:].sum())}
    from nspca_core.certificates.budget import BoundReport

    dual.dense_dual(A, k, x, float(x @ A @ x), bnds, info, BoundReport(), "auto", warm=None, callback=None,
                    budget=None, need_dual=True, iters=40)
    assert (calls["above"] == 0) == fails, calls
    assert ("anchored" in bnds) != fails  # (here the test proves a bound when it runs)
    assert all(v >= float(x @ A @ x) for v in bnds.values())
