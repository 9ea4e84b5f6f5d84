"""Issue 39, tenth round (helper cross): through X, a cross table block's squares are formed a chunk of rows at
a time (``cross._scan``: the row part's entries above their rows' kept squares, the columns' largest square and
their sums) and formed again only for the columns the column part keeps, the block never written out whole.
The same table float for float as the former route (``cross._SCAN`` off: each block's squares written out),
every chunk size and block size, float32 and float64 products, both parts and each alone; every entry still
bounds ``||(A_IJ)_+||_2`` by enumeration."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from nspca_core.certificates import cross
from nspca_core.certificates.cross import _scan, _squares_up, cross_table
from nspca_core.operators.cov import Cov

from tests.bruteforce import assert_cross_table_bounds

SLOW = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _data(rng, m: int, n: int, spread: float, sparse: bool) -> np.ndarray:
    """Centered m x n data: columns of widely spread scales (``spread`` decades), some mostly zero."""
    X = rng.standard_normal((m, n)) * 10.0 ** rng.uniform(-spread, spread, n)
    if sparse:
        X *= rng.random((m, n)) < 0.4
    return X - X.mean(axis=0)


def _both(monkeypatch, cov, S, T, imax, jmax, part):
    """The table by the chunked route and by the former one (blocks written out)."""
    new = cross_table(cov, S, T, imax, jmax, part=part)
    with monkeypatch.context() as mp:
        mp.setattr(cross, "_SCAN", False)
        old = cross_table(cov, S, T, imax, jmax, part=part)
    return new, old


@SLOW
@given(s=st.integers(1, 9), t=st.integers(2, 40), m=st.integers(2, 9), seed=st.integers(0, 2**31 - 1),
       part=st.sampled_from(["both", "rows", "cols"]), block=st.integers(1, 6),
       chunk=st.sampled_from([1, 5, 16, 1 << 17]), f64=st.booleans(), spread=st.sampled_from([0.0, 1.0, 4.0]),
       sparse=st.booleans())
@example(s=6, t=30, m=4, seed=1, part="both", block=3, chunk=5, f64=False, spread=1.0, sparse=True)
def test_chunked_blocks_give_the_former_table_float_for_float(monkeypatch, s, t, m, seed, part, block, chunk, f64,
                                                              spread, sparse):
    """Blocks of 1..6 columns after a first of one (the screen's route from the second block on), chunks of one
    row up to the whole block: the same table as the former route, bit for bit."""
    rng = np.random.default_rng(seed)
    X = _data(rng, m, s + t, spread, sparse)
    monkeypatch.setattr(cross, "_BLOCK", block)
    monkeypatch.setattr(cross, "_FIRST", 1)
    monkeypatch.setattr(cross, "_CHUNK", chunk)
    if f64:
        monkeypatch.setattr(cross, "_single", lambda *a: None)
    S, T = np.arange(s), np.arange(s, s + t)
    jmax = int(rng.integers(1, t + 2))
    new, old = _both(monkeypatch, Cov(X, None), S, T, s + 1, jmax, part)
    assert new.shape == old.shape and np.array_equal(new, old)


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(s=st.integers(1, 4), t=st.integers(2, 6), m=st.integers(2, 7), seed=st.integers(0, 2**31 - 1),
       part=st.sampled_from(["both", "rows", "cols"]), chunk=st.sampled_from([1, 3, 1 << 17]))
def test_chunked_table_bounds_brute_force(monkeypatch, s, t, m, seed, part, chunk):
    """Every ``C[i, j]`` of the chunked route is at least ``||(A_IJ)_+||_2`` over supports I of S and J of T,
    enumerated (blocks of one column: every block after the first through the chunks)."""
    rng = np.random.default_rng(seed)
    X = _data(rng, m, s + t, 1.0, False)
    A = X.T @ X / m
    monkeypatch.setattr(cross, "_BLOCK", 1)
    monkeypatch.setattr(cross, "_FIRST", 1)
    monkeypatch.setattr(cross, "_CHUNK", chunk)
    S, T = np.arange(s), np.arange(s, s + t)
    assert_cross_table_bounds(cross_table(Cov(X, None), S, T, s, t, part=part), A, S, T)


@settings(max_examples=80, deadline=None)
@given(s=st.integers(1, 40), c=st.integers(2, 60), seed=st.integers(0, 2**31 - 1),
       chunk=st.sampled_from([1, 7, 64, 1 << 17]), level=st.sampled_from([0.0, 0.5, 2.0, np.inf]),
       f32=st.booleans())
def test_scan_is_the_written_out_blocks_statistics(s, c, seed, chunk, level, f32):
    """``_scan``'s entries above ``rmin`` (in ``np.nonzero``'s order; None where more than a quarter of the
    block) and the columns' maxima and sums (the sums over rows in order, as NumPy
    sums a C-ordered block of two or more columns: equal bit for bit) against the squares written out
    (:func:`_squares_up`).  (A single column NumPy sums pairwise: cross_table sends those blocks the former
    way, the tables' test above covers them with blocks of one column.)"""
    rng = np.random.default_rng(seed)
    prod = rng.standard_normal((s, c)) * 10.0 ** rng.uniform(-6, 6, (s, 1))
    prod = prod.astype(np.float32) if f32 else prod
    m, delta = int(rng.integers(1, 50)), float(rng.choice([0.0, 1e-3]))
    P2 = _squares_up(np.divide(prod, m, dtype=np.float64), delta)
    rmin = np.quantile(P2, 0.9, axis=1) * level if np.isfinite(level) else np.full(s, np.inf)
    old = cross._CHUNK
    cross._CHUNK = chunk
    try:
        (r, v), (mx, tot) = _scan(prod, m, delta, rmin, True)
    finally:
        cross._CHUNK = old
    over = P2 > rmin[:, None]
    if np.count_nonzero(over) * 4 <= over.size:
        rr, cc = np.nonzero(over)
        assert np.array_equal(r, rr) and np.array_equal(v, P2[rr, cc])
    else:
        assert r is None
    assert mx.tobytes() == P2.max(axis=0).tobytes() and tot.tobytes() == P2.sum(axis=0).tobytes()


@pytest.mark.parametrize("name,k", [("golub", 80), ("dlbcl", 120)])
def test_gene_shaped_table_is_the_former_float_for_float(monkeypatch, name, k):
    """On the gene-shaped matrices of the benchmarks (thousands of T's columns, the screen's second block through
    the chunks) the table of a split certificate's screen is the former route's, bit for bit."""
    from benchmarks.bench_certify import gene_shaped

    X = gene_shaped(name)
    cov = Cov(X, None)
    d = cov.diag()
    S = np.sort(np.argsort(-d, kind="stable")[: 4 * k])
    T = np.setdiff1d(np.arange(X.shape[1]), S)
    for part in ("both", "cols"):
        new, old = _both(monkeypatch, cov, S, T, k, k, part)
        assert np.array_equal(new, old)


def _reference(A: np.ndarray, S, T, imax: int, jmax: int, part: str) -> np.ndarray:
    """The table written from its definition (:func:`cross_table`'s docstring) on the whole block of squares at
    once, sorted outright: per row its jm largest, per column its im largest, summed in descending order."""
    eps = np.finfo(float).eps
    P2 = np.maximum(A[np.ix_(S, T)], 0.0) ** 2
    s, t = P2.shape
    im, jm = min(imax, s), min(jmax, t)
    R = np.cumsum(-np.sort(-P2, axis=1)[:, :jm], axis=1)
    by_rows = np.cumsum(-np.sort(-R, axis=0), axis=0)[:im] if part != "cols" else np.inf
    colsum = np.cumsum(-np.sort(-P2, axis=0)[:im], axis=0)
    by_cols = np.cumsum(-np.sort(-colsum, axis=1)[:, :jm], axis=1) if part != "rows" else np.inf
    C = np.zeros((imax + 1, jmax + 1))
    C[1:im + 1, 1:jm + 1] = np.sqrt(np.minimum(by_rows, by_cols) * (1 + 4 * (im + jm + 2) * eps)) * (1 + 2 * eps)
    C[im + 1:, :] = C[im:im + 1, :]
    C[:, jm + 1:] = C[:, jm:jm + 1]
    return C


@SLOW
@given(s=st.integers(1, 9), t=st.integers(1, 30), m=st.integers(2, 9), seed=st.integers(0, 2**31 - 1),
       part=st.sampled_from(["both", "rows", "cols"]), block=st.integers(1, 40), sparse=st.booleans())
def test_table_held_as_A_is_its_definition_float_for_float(monkeypatch, s, t, m, seed, part, block, sparse):
    """Held as A (the blocks written out, any block size: the first one's squares partitioned in place by the row
    part after the column part has read them), the table equals :func:`_reference`, bit for bit."""
    rng = np.random.default_rng(seed)
    X = _data(rng, m, s + t, 1.0, sparse)
    A = X.T @ X / m
    monkeypatch.setattr(cross, "_BLOCK", block)
    S, T = np.arange(s), np.arange(s, s + t)
    imax, jmax = int(rng.integers(1, s + 2)), int(rng.integers(1, t + 2))
    got = cross_table(Cov(None, A), S, T, imax, jmax, part=part)
    assert np.array_equal(got, _reference(A, S, T, imax, jmax, part))
