"""Issue 39, ninth round (helper cross): a block's row tops from its entries above the rows' kept squares alone
(``cross._row_tops_entries``: the same table float for float, which still bounds every block against brute
force), the column part first only where S's ratio is below the aim by a margin (a lazy S bound sits at the
aim: the whole table at once), and a lazy S bound's finish skipped by a one-k certificate where it cannot lower
the coupled bound by more than ``coupled._FLOOR_REL`` (brute force; a path's run still finishes)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nspca_core.certificates import coupled, cross, route, single
from nspca_core.certificates.cross import _row_tops, _row_tops_entries, cross_table
from nspca_core.operators.cov import Cov

from tests.bruteforce import assert_cross_table_bounds
from tests.core.certificates.test_split_coupled import _force_split, _modules, modules_certified

SLOW = settings(max_examples=20, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def random_case(m: int, s: int, t: int, seed: int, through_X: bool):
    """A cross table's case: centered Gaussian data (m x (s + t), columns of random scales), ``(cov, A, S, T)`` with
    S the first s features, T the rest, the covariance held as A or through X."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, s + t)) * rng.random(s + t) * 3
    X -= X.mean(axis=0)
    A = X.T @ X / m
    cov = Cov(X, None) if through_X else Cov(None, A)
    return cov, A, np.arange(s), np.arange(s, s + t)


@settings(max_examples=80, deadline=None)
@given(s=st.integers(1, 12), jm=st.integers(1, 9), c=st.integers(1, 30), seed=st.integers(0, 2**31 - 1),
       ties=st.booleans(), scale=st.sampled_from([0.3, 1.0, 3.0]))
def test_row_tops_from_the_entries_above_the_kept_are_the_same_multisets(s, jm, c, seed, ties, scale):
    """Per row the same multiset of ``jm`` values as :func:`_row_tops` of the whole block (ties and zeros
    among the squares; rows keeping fewer new entries than others padded with zeros)."""
    rng = np.random.default_rng(seed)
    new = (rng.random((s, c)) * scale) ** 2
    rows = rng.random((s, jm)) ** 2
    if ties:
        new, rows = np.round(new * 3) / 3, np.round(rows * 3) / 3
    over = new > rows.min(axis=1)[:, None]
    want = np.sort(_row_tops(rows.copy(), new.copy(), jm, False), axis=1)
    got = np.sort(_row_tops_entries(rows.copy(), new.copy(), over, jm), axis=1)
    assert got.shape == want.shape and np.array_equal(got, want)


@SLOW
@given(s=st.integers(2, 5), t=st.integers(3, 10), m=st.integers(3, 8), seed=st.integers(0, 2**31 - 1),
       part=st.sampled_from(["both", "rows"]), through_X=st.booleans(), block=st.sampled_from([1, 2, 3]))
def test_table_with_gathered_row_tops_is_the_former_and_bounds_brute_force(monkeypatch, s, t, m, seed, part,
                                                                           through_X, block):
    """In blocks of 1..3 columns (the gathered row tops run from the second block on), held as A or through X
    (float32 products: the same blocks either way), the table is the one merging whole blocks (the former
    :func:`_row_tops` of the columns with any entry above its row's kept squares), float for float, and every
    ``C[i, j]`` is at least ``||(A_IJ)_+||_2`` over the supports, enumerated."""
    cov, A, S, T = random_case(m, s, t, seed, through_X)
    monkeypatch.setattr(cross, "_BLOCK", block)
    monkeypatch.setattr(cross, "_FIRST", 1)
    C = cross_table(cov, S, T, s + 1, t + 1, part=part)
    with monkeypatch.context() as mp:
        mp.setattr(cross, "_SCAN", False)  # (the blocks written out: the chunked route of test_cross_scan.py too)
        mp.setattr(cross, "_row_tops_entries",
                   lambda rows, P2, over, jm: _row_tops(rows, P2[:, over.any(axis=0)], jm, False))
        former = cross_table(cov, S, T, s + 1, t + 1, part=part)
    assert np.array_equal(C, former)
    assert_cross_table_bounds(C, A, S, T)


def test_a_lazy_S_bound_at_the_aim_takes_the_whole_table_at_once():
    """``split_cross``: S's bound exactly ``lower / aim`` (a lazy light_S's) is not below the aim, whatever the
    rounding of ``aim x (lower / aim)``: no column part first; below it by more than the margin, the column part
    first (a one-k certificate only)."""
    X = _modules(np.random.default_rng(0), 20, 40, 4)
    cov = Cov(X, None)
    A = X.T @ X / X.shape[0]
    Sx, T, k = np.arange(12), np.arange(12, 40), 6
    cert0, _ = single._certify_dense(Cov(A=A[np.ix_(Sx, Sx)]), k, None, "auto", None)
    seen = 0
    for lower in np.linspace(1.0, 2.0, 200):
        ub = lower / coupled._COUPLED_AIM
        seen += coupled._COUPLED_AIM * ub != lower  # (the rounding that decided it before)
        at = replace(cert0, upper_bound=ub, info={})
        make, rows = coupled.split_cross(cov, Sx, T, k, k, at, lower, None, True)
        assert rows is None and make.one_k
        below = replace(cert0, upper_bound=ub * 1.001, info={})
        assert coupled.split_cross(cov, Sx, T, k, k, below, lower, None, True)[1] is not None
        assert coupled.split_cross(cov, Sx, T, k, k, below, lower, None, False)[1] is None
    assert seen  # (some products rounded below lower: the former test took the column part first there)


@SLOW
@given(st.integers(9, 11), st.integers(5, 7), st.integers(4, 6), st.integers(0, 2**31 - 1))
def test_the_finish_skipped_only_where_it_cannot_lower_the_bound(monkeypatch, n, size, k, seed):
    """A lazy S bound's finish (``coupled.light_finish``) is skipped by a one-k certificate only where S's bound
    at its floor (the feasible value) leaves the coupled bound within ``_FLOOR_REL``: the certificate is then
    valid (brute force) and within that of the one that finishes (the skip off), never looser by more."""
    from nspca_core.certificates import _settings as S

    _force_split(monkeypatch, size)
    monkeypatch.setattr(S, "_LAZY_S", True)
    cov, skip = modules_certified(seed, n, k)
    with monkeypatch.context() as mp:
        mp.setattr(coupled, "_FLOOR_REL", -1.0)  # (floor 2 lower, the bound 2 x: never held, always finished)
        fin = route._certify_large(cov, k, None, "auto", None)
    assert fin.upper_bound <= skip.upper_bound <= fin.upper_bound * (1 + coupled._FLOOR_REL)


def test_the_finish_is_skipped_on_a_gene_shaped_case(monkeypatch):
    """Golub-shaped data at k = 100 (the joint test at the goal holds for every term there): the one-k
    certificate skips the finish, within 1e-9 of the bound with it, and a path's run (no flag) finishes."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
    from bench_certify import gene_shaped

    import nspca_core as nc
    from nspca_core.certificates import _settings as S, certify

    if not S._LAZY_S:
        monkeypatch.setattr(S, "_LAZY_S", True)
    X = gene_shaped("golub")
    k = 100
    x = nc.fit(X, k=k, certify=False).x
    calls = []
    real = coupled.light_finish
    monkeypatch.setattr(coupled, "light_finish", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    skip = certify(X, k=k, x=x)
    skipped = not calls
    calls.clear()
    with monkeypatch.context() as mp:
        mp.setattr(coupled, "_FLOOR_REL", -1.0)
        fin = certify(X, k=k, x=x)
    assert fin.upper_bound <= skip.upper_bound <= fin.upper_bound * (1 + 1e-9)
    assert skipped and calls  # (skipped with the flag; finished without the skip)
