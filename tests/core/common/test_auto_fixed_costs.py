"""auto's fixed costs (issue 39 item 4, twentieth round): the tie-break key makes the row sums ``A 1`` only
when two rounded variances tie, and orders only the tied runs by them (:func:`cov_key`), and the polish's
fixed-point check reads its products one row per point (:func:`_plainly_fixed`).  The same key and the same
booleans as the former code, counted on both sides of the key's rule."""

import numpy as np
from hypothesis import given, settings, strategies as st

from nspca_core._common.ascent import _XTOL, _round_sig, cov_key, tie_key
from nspca_core._common.polish import _plainly_fixed, polish_many
from nspca_core._common.steps import TopK, project
from nspca_core.operators.cov import Cov


class _Counting(Cov):
    """A Cov counting its products."""

    products = 0

    def matvec(self, v):
        self.products += 1
        return super().matvec(v)


def _data(seed, m, n, ties):
    """Data whose rounded variances are all distinct (``ties`` 0), tie in groups (1: columns repeated up to
    sign, equal variances and different row sums; some repeated exactly, equal in both keys), or all tie
    (2: standardized columns)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n)) * rng.uniform(0.2, 3.0, n)
    if ties == 1:
        src = rng.integers(0, max(1, n // 3), n)
        X = X[:, src] * rng.choice([-1.0, 1.0], n)
        X[:, 0] = X[:, -1] if n > 1 else X[:, 0]
    X = X - X.mean(axis=0)
    if ties == 2:
        X = X / np.maximum(X.std(axis=0), 1e-300)
    return X


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 30), st.integers(1, 60), st.integers(0, 2), st.booleans())
def test_cov_key_is_tie_key_of_variances_and_row_sums(seed, m, n, ties, dense):
    """cov_key equals the former tie_key(diag, A 1) on data with and without ties (thin, square, formed)."""
    X = _data(seed, m, n, ties)
    cov = Cov(None, X.T @ X / m) if dense else Cov(X, None)
    former = tie_key(cov.diag(), cov.matvec(np.ones(n)))
    assert np.array_equal(cov_key(cov), former)
    assert np.array_equal(cov_key(cov, cov.diag()), former)


def test_cov_key_counts_the_row_sums_only_on_a_tie():
    """Both sides of the rule: distinct rounded variances, no product; a tie (one duplicated column), one
    product, and the row sums decide (the same key as tie_key)."""
    X = _data(1, 12, 40, 0)
    cov = _Counting(X, None)
    r = _round_sig(cov.diag())
    assert np.unique(r).size == r.size
    key = cov_key(cov)
    assert cov.products == 0 and np.array_equal(key, tie_key(cov.diag(), X.T @ (X @ np.ones(40)) / 12))
    Y = X.copy()
    Y[:, 7] = -Y[:, 3]  # the same variance, the opposite row sum's share
    cov = _Counting(Y, None)
    key = cov_key(cov)
    assert cov.products == 1
    assert np.array_equal(key, tie_key(cov.diag(), cov.matvec(np.ones(40))))
    assert abs(int(key[7]) - int(key[3])) == 1  # adjacent ranks, ordered by the row sums
    Z = _data(2, 12, 40, 2)  # every variance ties: one run, all of it ordered by the row sums
    cov = _Counting(Z, None)
    key = cov_key(cov)
    assert cov.products == 1 and np.array_equal(key, tie_key(cov.diag(), cov.matvec(np.ones(40))))


def _former_plainly_fixed(Y, X, k, step):
    """The check as it was (column reductions on the n x c arrays), to compare booleans."""
    if step.signed or X.shape[1] == 0:
        return False
    on = X != 0
    c = on.sum(axis=0)
    if (c > k).any() or (c == 0).any():
        return False
    low = np.where(on, Y, np.inf).min(axis=0)
    out = np.where(on, -np.inf, Y).max(axis=0)
    if not ((low > 0) & (out < low) & ((c == k) | (out <= 0))).all():
        return False
    YJ = np.where(on, Y, 0.0)
    zz = np.einsum("ij,ij->j", YJ, YJ)
    if not ((zz > 1e-200) & (zz < 1e300) & (low > 1e-100 * np.sqrt(zz))).all():
        return False
    if step.both_signs:  # the sum itself (the former code's bound k max((-y)_+)^2 decided alike)
        N = np.maximum(-Y, 0.0)
        N = np.sort(N, axis=0)[Y.shape[0] - min(k, Y.shape[0]):]
        longest = np.einsum("ij,ij->j", N, N)
        if not (longest * (1 + 1e-6) < zz).all():
            return False
    dots = np.abs(np.einsum("ij,ij->j", YJ, X)) / np.sqrt(zz)
    return bool((dots >= 1 - _XTOL / 2).all())


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 40), st.integers(3, 30), st.integers(1, 4), st.booleans(),
       st.data())
def test_plainly_fixed_rows_say_what_the_columns_said(seed, n, m, c, both, data):
    """The row-wise check gives the former column-wise answer on support limits (fixed points: the check
    answers there) and off them (perturbed: it says no), 1-4 points, either sign rule."""
    k = data.draw(st.integers(1, n))
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n)) * rng.uniform(0.2, 3.0, n)
    if seed % 2 == 0:  # a strong direction: the polish's points are fixed points
        X += np.outer(rng.standard_normal(m), rng.uniform(0.5, 2.0, n))
    cov = Cov(X - X.mean(axis=0), None)
    key = cov_key(cov)
    P, _, _ = polish_many(cov, project(rng.standard_normal((n, c)), k, key), k, key=key, reweight_first=True)
    if data.draw(st.booleans()):
        P = P + 1e-4 * (P != 0) * rng.uniform(0, 1, P.shape)
        P /= np.linalg.norm(P, axis=0)
    step = TopK(both_signs=both)
    Y = cov.matvec(P)
    assert _plainly_fixed(Y, P, k, step) == _former_plainly_fixed(Y, P, k, step)


def test_plainly_fixed_answers_yes_on_several_settled_points():
    """Several points at their limits (the polish's case: 2-3 columns): the row-wise check says yes, and no
    once one of them moves off."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 60)) + np.outer(rng.standard_normal(30), rng.uniform(0.5, 2.0, 60))
    cov = Cov(X - X.mean(axis=0), None)
    key = cov_key(cov)
    P, _, _ = polish_many(cov, project(rng.standard_normal((60, 3)), 5, key), 5, key=key, reweight_first=True)
    step = TopK(both_signs=True)
    assert _plainly_fixed(cov.matvec(P), P, 5, step)
    Q = P.copy()
    Q[:, 2] += 1e-3 * (Q[:, 2] != 0) * np.arange(60)
    Q[:, 2] /= np.linalg.norm(Q[:, 2])
    assert not _plainly_fixed(cov.matvec(Q), Q, 5, step)
