"""The lone column's step of auto's ascent (issue 39 item 4, twenty-first round): ``_select`` of one
column with its previous support takes the candidates reaching that support's smallest entry without
``_select_near``'s calls for many columns.  Against brute force written here and against the same
column's step inside a batch (the path of many columns), on columns with ties, zeros, a NaN and both
signs; and the path is counted: taken where a column's support stays or moves without a tie, left
where the k-th value ties."""

import numpy as np
from hypothesis import given, settings, strategies as st

import nspca_core._common.steps as steps
from nspca_core._common.steps import _select


def _brute_topk(s: np.ndarray, k: int) -> np.ndarray | None:
    """The rows of the k largest entries of s, increasing; None when the k-th ties the (k+1)-th."""
    order = np.argsort(-s, kind="stable")
    if s.size > k and s[order[k - 1]] <= s[order[k]]:
        return None
    return np.sort(order[:k])


def _column(rng, n, k, coarse, near):
    y = rng.standard_normal(n) + rng.uniform(-0.5, 2.0)
    if coarse:  # ties at the k-th value
        y = np.round(y * 2) / 2
    # the previous support: the true top k of a perturbed column (near convergence) or random
    src = y + (0.3 if near else 5.0) * rng.standard_normal(n)
    return y, np.sort(np.argsort(-src, kind="stable")[:k])


def _one_k(k, q):
    return np.broadcast_to(np.intp(k), (q,))  # one k as the step hands it (stride 0)


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 10_000), st.integers(4, 1500), st.booleans(), st.booleans(), st.booleans(), st.booleans(),
       st.data())
def test_lone_column_is_the_column_in_a_batch(seed, n, coarse, near, signed, nan, data):
    """One column's step equals its step among others (``_select_near`` then the partition), and where
    no tie decides it, the brute-force top k of y (|y| when signed) with y's values."""
    rng = np.random.default_rng(seed)
    k = data.draw(st.integers(1, n - 1))
    y, prev = _column(rng, n, k, coarse, near)
    if nan:
        y[rng.integers(n)] = np.nan
    other, _ = _column(rng, n, k, coarse, near)
    a_idx, a_vals = _select(y[:, None], _one_k(k, 1), None, signed, k, prev[:, None])
    Y2 = np.column_stack([y, other])
    b_idx, b_vals = _select(Y2, _one_k(k, 2), None, signed, k, np.column_stack([prev, prev]))
    assert np.array_equal(a_idx[:, 0], b_idx[:, 0])
    assert np.array_equal(a_vals[:, 0], b_vals[:, 0], equal_nan=True)
    s = np.abs(y) if signed else y
    if not nan:
        expect = _brute_topk(s, k)
        if expect is not None and s[expect].min() > 0:
            assert np.array_equal(a_idx[:, 0], expect)
            assert np.array_equal(a_vals[:, 0], y[expect])


def _count_partitions(monkeypatch):
    calls = []
    real = steps._select_near

    def spy(*args, **kw):
        calls.append(args[0].shape[1])
        return real(*args, **kw)

    monkeypatch.setattr(steps, "_select_near", spy)
    return calls


def test_lone_column_path_is_taken_and_left(monkeypatch):
    """Counting on both sides: a support that stays, and one that moves without a tie, take the lone
    path (no ``_select_near``); a tie at the k-th value, a previous support with a non-positive entry,
    and two columns go the batch's way."""
    calls = _count_partitions(monkeypatch)
    y = np.array([5.0, 4.0, 3.0, 2.0, 1.0, 0.5])
    k1 = _one_k(3, 1)
    idx, vals = _select(y[:, None], k1, None, False, 3, np.array([[0], [1], [2]]))  # stays
    assert idx[:, 0].tolist() == [0, 1, 2] and vals[:, 0].tolist() == [5.0, 4.0, 3.0]
    idx, vals = _select(y[:, None], k1, None, False, 3, np.array([[1], [2], [3]]))  # moves: 4 candidates
    assert idx[:, 0].tolist() == [0, 1, 2] and vals[:, 0].tolist() == [5.0, 4.0, 3.0]
    assert calls == []
    tie = np.array([5.0, 4.0, 3.0, 3.0, 1.0, 0.5])
    idx, _ = _select(tie[:, None], k1, None, False, 3, np.array([[0], [1], [4]]))  # 3 ties 3: the batch's way
    assert idx[:, 0].tolist() == [0, 1, 2] and calls == [1]
    neg = np.array([5.0, 4.0, -3.0, 2.0, 1.0, 0.5])
    _select(neg[:, None], k1, None, False, 3, np.array([[0], [1], [2]]))  # t <= 0
    assert calls == [1, 1]
    zero = np.array([5.0, 4.0, 0.0, -1.0, -2.0])  # t = 0: the zero is not kept (T_k of y_+)
    idx, vals = _select(zero[:, None], k1, None, False, 3, np.array([[0], [1], [2]]))
    assert idx[:, 0].tolist() == [0, 1, 5] and vals[:, 0].tolist() == [5.0, 4.0, 0.0] and calls == [1, 1, 1]
    _select(np.column_stack([y, y]), _one_k(3, 2), None, False, 3, np.array([[0, 0], [1, 1], [2, 2]]))
    assert calls == [1, 1, 1, 2]
    signed = np.array([-5.0, 4.0, -3.0, 0.1, 0.2])  # signed: the support of |y| stays, y's values kept
    idx, vals = _select(signed[:, None], k1, None, True, 3, np.array([[0], [1], [2]]))
    assert idx[:, 0].tolist() == [0, 1, 2] and vals[:, 0].tolist() == [-5.0, 4.0, -3.0] and calls == [1, 1, 1, 2]
