"""Issue 39 (helper wide22): ``cross_table(part="parts")`` computes the column and the row part in one pass over
S x T's products and returns both.  Each is the same table, float for float, as its part's own call (through X,
float32 and float64 products, any block and chunk size, held as A), their minimum the whole table's; each still
bounds ``||(A_IJ)_+||_2`` by enumeration.  ``screens.own_hopeless`` takes the parts so (``screens._PARTS``): the same
verdict and the same tables handed on (``pre``) as the two calls."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from nspca_core.certificates import cross, screens
from nspca_core.certificates.cross import cross_table
from nspca_core.operators.cov import Cov

from tests.bruteforce import assert_cross_table_bounds
from tests.core.certificates.test_cross_scan import _data

SLOW = settings(max_examples=80, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@SLOW
@given(s=st.integers(1, 9), t=st.integers(1, 40), m=st.integers(2, 9), seed=st.integers(0, 2**31 - 1),
       block=st.integers(1, 6), first=st.sampled_from([1, 3, 256]), chunk=st.sampled_from([1, 5, 1 << 17]),
       f64=st.booleans(), spread=st.sampled_from([0.0, 1.0, 4.0]), sparse=st.booleans(), held=st.booleans())
@example(s=6, t=30, m=4, seed=1, block=3, first=1, chunk=5, f64=False, spread=1.0, sparse=True, held=False)
def test_parts_are_each_parts_own_table_float_for_float(monkeypatch, s, t, m, seed, block, first, chunk, f64, spread,
                                                        sparse, held):
    """Blocks of 1..6 columns, chunks of one row up to the whole block, X or A: ``"parts"`` gives ``("cols",
    "rows")``'s tables bit for bit, and their elementwise minimum is ``"both"``'s."""
    rng = np.random.default_rng(seed)
    X = _data(rng, m, s + t, spread, sparse)
    monkeypatch.setattr(cross, "_BLOCK", block)
    monkeypatch.setattr(cross, "_FIRST", first)
    monkeypatch.setattr(cross, "_CHUNK", chunk)
    if f64:
        monkeypatch.setattr(cross, "_single", lambda *a: None)
    cov = Cov(None, X.T @ X / m) if held else Cov(X, None)
    S, T = np.arange(s), np.arange(s, s + t)
    imax, jmax = int(rng.integers(1, s + 2)), int(rng.integers(1, t + 2))
    cols, rows = cross_table(cov, S, T, imax, jmax, part="parts")
    assert np.array_equal(cols, cross_table(cov, S, T, imax, jmax, part="cols"))
    assert np.array_equal(rows, cross_table(cov, S, T, imax, jmax, part="rows"))
    assert np.array_equal(np.minimum(cols, rows), cross_table(cov, S, T, imax, jmax, part="both"))


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(s=st.integers(1, 4), t=st.integers(1, 6), m=st.integers(2, 7), seed=st.integers(0, 2**31 - 1),
       block=st.integers(1, 3))
def test_each_part_bounds_brute_force(monkeypatch, s, t, m, seed, block):
    """Every entry of either part is at least ``||(A_IJ)_+||_2`` over supports I of S and J of T, enumerated."""
    rng = np.random.default_rng(seed)
    X = _data(rng, m, s + t, 1.0, False)
    monkeypatch.setattr(cross, "_BLOCK", block)
    monkeypatch.setattr(cross, "_FIRST", 1)
    S, T = np.arange(s), np.arange(s, s + t)
    for C in cross_table(Cov(X, None), S, T, s, t, part="parts"):
        assert_cross_table_bounds(C, X.T @ X / m, S, T)


def test_empty_sides_give_two_tables_of_zeros():
    X = np.random.default_rng(0).standard_normal((5, 4))
    cols, rows = cross_table(Cov(X, None), np.arange(2), np.arange(2, 4), 0, 3, part="parts")
    assert cols.shape == rows.shape == (1, 4) and not cols.any() and not rows.any() and cols is not rows


def test_own_hopeless_gives_the_same_verdict_and_tables_with_parts(monkeypatch):
    """On small cases, ``lower`` scaled so that no table, the column part alone or both parts decide: the verdict
    and the tables own_hopeless hands on (``pre``) are those of the two calls, float for float (the row part handed
    on as well where computed), in one table call where the two calls made one or two."""
    from tests.core.certificates.test_small_screen import modules_case

    cases = []
    for seed, (m, n, k, sS) in enumerate([(6, 40, 3, 12), (8, 60, 4, 16), (5, 30, 2, 10)]):
        X = _data(np.random.default_rng(seed), m, n, 1.0, False)
        cases.append((X, k, sS))
    X, _, _ = modules_case(5, 12, 3, True)
    cases.append((X, 3, 6))
    seen = set()
    for X, k, sS in cases:
        cov = Cov(X, None)
        d = cov.diag()
        S = np.sort(np.argsort(-d, kind="stable")[:sS])
        T = np.setdiff1d(np.arange(cov.n), S)
        covS = Cov(A=cov.submatrix(S))
        xS = np.zeros(S.size)
        xS[np.argsort(-d[S], kind="stable")[:k]] = 1.0 / np.sqrt(k)
        lower = float(xS @ covS.dense() @ xS)
        for scale in np.linspace(0.5, 1.0, 26):
            got = {}
            for parts in (False, True):
                calls = []
                real = screens.cross_table
                monkeypatch.setattr(screens, "_PARTS", parts)
                monkeypatch.setattr(screens, "cross_table", lambda *a, **kw: (calls.append(kw.get("part")),
                                                                               real(*a, **kw))[1])
                pre: dict = {}
                v = screens.own_hopeless(pre, cov, S, T, covS, xS, k, k, lower * scale)
                monkeypatch.setattr(screens, "cross_table", real)
                got[parts] = (v, pre, calls)
            (v0, pre0, calls0), (v1, pre1, calls1) = got[False], got[True]
            assert v0 == v1
            seen.add(tuple(calls0))
            assert len(calls1) <= 1 and (calls1 == []) == (calls0 == [])
            for key in ("cols", "rows"):
                if key in pre0:
                    assert np.array_equal(pre0[key], pre1[key])
            if "rows" in pre1 and "rows" not in pre0:  # (the column part decided: the row part handed on too)
                assert calls0 == ["cols"] and np.array_equal(pre1["rows"], screens.cross_table(
                    cov, S, T, k, k, None, part="rows"))
    assert seen == {(), ("cols",), ("cols", "rows")}  # (every branch of the rule met)
