"""Issue 39, the twenty-first round (helper golub28): ``anchor.joint_blockers`` reads only the rows still able to be
the anchor (``anchor._RowsOf``): the same ratios, float for float, as the whole table's rows there (the former
route, written out here), hence the same blockers, with the float64 products and inside ``float32_products``."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nspca_core.certificates import anchor, anchor_sums
from nspca_core.certificates.anchor import AnchorRows, joint_blockers
from nspca_core.certificates.anchor_sums import _joint_sums

SOME = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _whole_table_blockers(rows, ks, taus, r):
    """The former route: the whole table's sums and gaps, then the alive rows of them."""
    ks = np.asarray(ks, dtype=int)
    alive = np.flatnonzero(r >= 1.0)
    if alive.size == 0 or ks.size == 0:
        return np.zeros(0, dtype=int), None
    gap = np.stack([anchor._gaps(rows, float(t)) for t in taus], axis=1)[alive]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = _joint_sums(rows, r, ks - 1)[alive] / np.where(gap > 0, gap, np.nan)
    ratio = np.where(np.isnan(ratio), np.inf, ratio)
    return np.unique(np.argmax(ratio, axis=1)), ratio


def _case(seed: int):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 160))
    m = int(rng.integers(2, 30))
    X = rng.standard_normal((m, n)) * rng.gamma(1.0, 1.0, n)
    A = X.T @ X / m
    if rng.random() < 0.3:  # (an indefinite one too: the test holds for any symmetric A)
        E = rng.standard_normal((n, n)) * 0.3
        A = A + (E + E.T)
    kmax = int(rng.integers(2, min(n, 50) + 1))
    width = None if rng.random() < 0.5 else int(rng.integers(kmax - 1, n))
    rows_args = (A, kmax, width)
    r = np.where(rng.random(n) < rng.uniform(0.02, 0.5), 1.0, rng.random(n) * rng.uniform(0.0, 1.0))
    near = rng.random(n) < 0.2
    r[near] = 1.0 - rng.uniform(1e-12, 1e-3, int(near.sum()))  # (just below 1: not able to be the anchor)
    t = int(rng.integers(1, 9))
    ks = rng.integers(2, kmax + 1, size=t)
    d = np.diag(A)
    taus = float(d.max()) + rng.uniform(-0.5, 3.0, size=t) * max(float(np.abs(A).max()), 1e-12)
    return rows_args, ks, taus, r


def _check(rows, ks, taus, r):
    want, ratio = _whole_table_blockers(rows, ks, taus, r)
    got = joint_blockers(rows, ks, taus, r)
    assert np.array_equal(got, want), (got, want)
    alive = np.flatnonzero(r >= 1.0)
    if alive.size:
        live = anchor._RowsOf(rows, alive)
        gap = np.stack([anchor._gaps(live, float(t)) for t in taus], axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            mine = _joint_sums(live, r, np.asarray(ks, dtype=int) - 1) / np.where(gap > 0, gap, np.nan)
        mine = np.where(np.isnan(mine), np.inf, mine)
        assert np.array_equal(mine, ratio)  # (float for float, not merely the same argmax)


@SOME
@given(st.integers(0, 2**31 - 1))
def test_blockers_from_the_alive_rows_are_the_whole_tables(seed):
    (A, kmax, width), ks, taus, r = _case(seed)
    _check(AnchorRows(A, kmax, width), ks, taus, r)


@SOME
@given(st.integers(0, 2**31 - 1))
def test_blockers_from_the_alive_rows_with_float32_products(seed):
    (A, kmax, width), ks, taus, r = _case(seed)
    with anchor_sums.float32_products():
        rows = AnchorRows(A, kmax, width)
    assert rows.vals32 is not None or not rows.vals.size or not float(rows.vals.max()) < anchor_sums._VALS32_MAX
    _check(rows, ks, taus, r)


def test_blockers_read_the_alive_rows_only(monkeypatch):
    """The products are formed for the rows with ``r_l >= 1`` alone (3 of 200 here), not the whole table."""
    rng = np.random.default_rng(7)
    X = rng.standard_normal((20, 200))
    A = X.T @ X / 20
    rows = AnchorRows(A, 30)
    r = rng.random(200) * 0.9
    r[[5, 77, 150]] = 1.0
    seen = []
    real = anchor_sums._prods32

    def counting(rows_, r_, sel=None):
        out = real(rows_, r_, sel)
        seen.append(out.shape[0])
        return out

    monkeypatch.setattr(anchor_sums, "_prods32", counting)
    b = joint_blockers(rows, [10, 30], [float(np.diag(A).max()) * 2] * 2, r)
    assert seen == [3]
    assert b.size >= 1
