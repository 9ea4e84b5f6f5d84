"""Issue 39, the twenty-third round: :class:`~nspca_core.certificates.anchor.AnchorRows` preselects each row's largest
entries from a sample of the row (:func:`~nspca_core.certificates.anchor_sums.select_block`).  Its lists are the former
ones (each whole row of ``-P`` partitioned) up to the order of a row's columns and the choice among columns tied at
the cap; the caps the same floats.  Neither the order nor the tie choice may break a bound: checked against brute
force with the rows' lists shuffled, and through ``certify`` with the preselection forced onto tiny inputs."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nspca_core import certify
from nspca_core.certificates import anchor, anchor_sums
from nspca_core.certificates.anchor import AnchorRows

from tests.bruteforce import brute_opt
from tests.core.certificates.test_anchor import _never_below_opt, _random_symmetric
from tests.core.certificates.test_single import _check_cert, _random_psd

S = importlib.import_module("nspca_core.certificates._settings")


def _former(A: np.ndarray, L: int):
    """The former construction written out: P whole, -P partitioned in one call."""
    n = A.shape[0]
    P = np.maximum(A, 0.0)
    np.fill_diagonal(P, 0.0)
    part = np.argpartition(-P, L, axis=1)
    return P, part[:, :L], P[np.arange(n), part[:, L]]


def _tied(rng, A: np.ndarray) -> np.ndarray:
    """A with equal entries (rounded) and -0.0 entries: the ties a selection may split, zeros of either sign."""
    A = np.round(A, 1)
    A[(A == 0.0) & (rng.random(A.shape) < 0.5)] = -0.0
    return A


def _same_up_to_ties(rows: AnchorRows, A: np.ndarray) -> None:
    n, L = rows.n, rows.idx.shape[1]
    P, idx, cap = _former(A, L)
    assert np.array_equal(rows.cap.view(np.int64), cap.view(np.int64))  # (the same floats, zeros' signs too)
    for l in range(n):
        got = rows.idx[l]
        assert np.unique(got).size == L
        assert np.array_equal(rows.vals[l].view(np.int64), P[l, got].view(np.int64))
        out = np.setdiff1d(np.arange(n), got)
        assert np.all(P[l, out] <= rows.cap[l])
        diff = np.setxor1d(got, idx[l])
        assert np.all(P[l, diff] == cap[l])  # (only columns tied at the cap may be exchanged)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(3, 160), k=st.integers(2, 12), width=st.integers(1, 30), stride=st.sampled_from([1, 2, 3, 8]),
       extra=st.integers(0, 6), block=st.sampled_from([1, 7, 128]), seed=st.integers(0, 2**31 - 1),
       ties=st.booleans(), indefinite=st.booleans(), fortran=st.booleans())
def test_preselected_lists_are_the_former_up_to_order_and_ties(n, k, width, stride, extra, block, seed, ties,
                                                                 indefinite, fortran):
    rng = np.random.default_rng(seed)
    if indefinite:
        B = rng.standard_normal((n, n))
        A = B + B.T
    else:
        X = rng.standard_normal((n // 2 + 3, n)) * rng.uniform(0.2, 3.0, n)
        A = X.T @ X / X.shape[0]
    A = _tied(rng, A) if ties else A
    A = np.asfortranarray(A) if fortran else A  # (a block of rows not contiguous: read by row and column)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(anchor, "_ROWS_BLOCK", block)
        mp.setattr(anchor_sums, "_PRESEL_FROM", 0)
        mp.setattr(anchor_sums, "_PRESEL_STRIDE", stride)
        mp.setattr(anchor_sums, "_PRESEL_EXTRA", extra)
        rows = AnchorRows(A, k, width=width)
    if rows.idx.shape[1] < n - 1:
        _same_up_to_ties(rows, A)
        assert 0 <= rows.whole_rows <= n


def test_the_topic_shaped_rows_are_preselected_and_the_same_up_to_ties():
    """A 1,000-feature covariance of a sparse count matrix at the default rule (k = 5, L = 48): the preselection
    takes (almost) every row, and the lists are the former ones up to ties."""
    rng = np.random.default_rng(5)
    X = (rng.random((600, 1000)) < 0.02) * rng.integers(1, 4, (600, 1000))
    X = X - X.mean(axis=0)
    A = X.T @ X / 600.0
    rows = AnchorRows(A, 5)
    assert rows.idx.shape[1] == 48 and rows.whole_rows <= 50
    _same_up_to_ties(rows, A)


def _ladder(n: int) -> np.ndarray:
    """Rows whose entries fall with the column (distinct, positive): a row's sample of every s-th column has its
    j-th largest at column (j - 1) s, so the survivors are columns 0..(j - 1) s, the diagonal aside."""
    return np.tile(np.linspace(2.0, 1.0, n), (n, 1))


@pytest.mark.parametrize("L", [24, 40])
def test_counting_the_rows_partitioned_whole_on_both_sides_of_each_rule(L):
    s, e, wide, frm = (anchor_sums._PRESEL_STRIDE, anchor_sums._PRESEL_EXTRA, anchor_sums._PRESEL_WIDE,
                       anchor_sums._PRESEL_FROM)
    n = frm * (L + 1)
    j = -(-(L + 1) // s) + e
    assert j <= L  # (the construction below needs it)
    A = _ladder(n)
    lo = n - 10  # (rows far from the survivors' columns: the diagonal outside them)
    assert AnchorRows(A, L + 1, width=L).whole_rows == 0
    # the gate: from frm (L + 1) columns; one fewer, every row whole
    assert AnchorRows(A[:n - 1, :n - 1], L + 1, width=L).whole_rows == n - 1
    sampled = np.arange(0, n, s)
    others = np.setdiff1d(np.arange(n), sampled)
    B = A.copy()
    B[lo] = -1.0  # a threshold not positive: whole
    # exactly j sampled columns at 1 (the threshold), more at 1 elsewhere: survivors L (whole) / L + 1 (preselected)
    for row, at_t in ((lo + 1, L), (lo + 2, L + 1), (lo + 3, wide * (L + 1)), (lo + 4, wide * (L + 1) + 1)):
        B[row] = 0.5
        B[row, sampled[:j]] = 1.0
        B[row, others[:at_t - j]] = 1.0
    rows = AnchorRows(B, L + 1, width=L)
    assert rows.whole_rows == 3  # lo, lo + 1 (L survivors), lo + 4 (more than wide (L + 1))
    _same_up_to_ties(rows, B)


def _shuffled(rows: AnchorRows, rng) -> AnchorRows:
    """The same lists, each row's columns (and values) in a random order."""
    perm = np.argsort(rng.random(rows.idx.shape), axis=1)
    rows.idx = np.take_along_axis(rows.idx, perm, axis=1)
    rows.vals = np.take_along_axis(rows.vals, perm, axis=1)
    rows.vals32 = anchor_sums.vals32_of(rows.vals)
    return rows


def _nonnegative_gram(rng, n: int) -> np.ndarray:
    """The Gram matrix of sparse nonnegative data (counts-like): positive off-diagonal entries, which the
    preselection takes (a threshold > 0)."""
    X = rng.random((n + 2, n)) * (rng.random((n + 2, n)) < 0.7)
    return X.T @ X


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(4, 8), st.integers(2, 7), st.integers(0, 2**31 - 1), st.integers(1, 6), st.booleans(),
       st.booleans(), st.booleans())
def test_preselected_and_shuffled_rows_never_prove_below_opt(n, k, seed, width, ties, shuffle, gram):
    """Brute force: the anchored test and bound on the preselected lists (forced onto tiny inputs: the whole row
    sampled, its (L + 1)-th largest the threshold), with each row's columns in any order, never prove a value
    below OPT."""
    k = min(k, n)
    rng = np.random.default_rng(seed)
    A = _nonnegative_gram(rng, n) if gram else _random_symmetric(rng, n)
    A = _tied(rng, A) if ties else A
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(anchor_sums, "_PRESEL_FROM", 0)
        mp.setattr(anchor_sums, "_PRESEL_STRIDE", 1)
        mp.setattr(anchor_sums, "_PRESEL_EXTRA", 0)
        rows = AnchorRows(A, k, width=min(width, n - 2))
    if shuffle:
        rows = _shuffled(rows, rng)
    _never_below_opt(A, k, rows)


def test_certify_through_the_preselection_stays_above_bruteforce(monkeypatch):
    """``certify`` with the anchored bound forced at every k >= 3, every AnchorRows narrower than its row (so the
    preselection can take rows) and the preselection forced at tiny n; tied and -0.0 entries half the time."""
    monkeypatch.setattr(S, "_CUT_BELOW", 1.0 + 1e-12)
    monkeypatch.setattr(anchor_sums, "_PRESEL_FROM", 0)
    monkeypatch.setattr(anchor_sums, "_PRESEL_STRIDE", 1)
    monkeypatch.setattr(anchor_sums, "_PRESEL_EXTRA", 0)
    init, made = AnchorRows.__init__, []

    def narrow(self, A, k, width=None):
        n = np.asarray(A).shape[0]
        init(self, A, k, width=max(int(k) - 1, (n - 2) // 2) if width is None else width)
        made.append((self.n, self.whole_rows))

    monkeypatch.setattr(AnchorRows, "__init__", narrow)
    rng = np.random.default_rng(39)
    for t in range(30):
        n = int(rng.integers(5, 9))
        k = int(rng.integers(3, n))
        if t % 2:  # (integer Gram entries: ties and zeros, some -0.0; still psd)
            X = np.round(rng.standard_normal((n + 2, n)) * 1.5)
            A = X.T @ X
            A[(A == 0.0) & (rng.random(A.shape) < 0.5)] = -0.0
        else:
            A = _random_psd(rng, n) if t % 4 == 0 else _nonnegative_gram(rng, n)
        opt, _ = brute_opt(A, k)
        _check_cert(certify(cov=A, k=k, effort="fast"), opt, A)
    assert sum(n - w for n, w in made) > 0.5 * sum(n for n, _ in made)  # (the preselection took most rows)
