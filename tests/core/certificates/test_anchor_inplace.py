"""Issue 39, ninth round: the anchored row sums write their products in float32 directly (the float64
multiply's output cast, :func:`nspca_core.certificates.anchor._prods32`), select the largest in place
(``ndarray.partition``; :func:`nspca_core.certificates.anchor._top32`) and the joint test sorts its block in
place (:func:`nspca_core.certificates.anchor._joint_sums`): two n x w arrays fewer per iteration.  The same
floats as the former selections, and still upper bounds on the exact sums (brute force: every row sorted)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core.certificates.anchor import (_SEL32_ABS, _SEL32_REL, AnchorRows, _joint_sums, _plain_sums,
                                            _sum_up, _top_sums32)


def _former_top(prod: np.ndarray, q: int, cap: np.ndarray) -> np.ndarray:
    L = prod.shape[1]
    p32 = prod.astype(np.float32)
    top = np.partition(p32, L - q, axis=1)[:, L - q:] if q < L else p32
    return np.maximum(top, cap.astype(np.float32)[:, None])


def _former_joint(rows: AnchorRows, r: np.ndarray, qs: np.ndarray) -> np.ndarray:
    qmax = int(qs.max())
    top = _former_top(rows.vals * np.take(r, rows.idx), qmax, rows.cap)
    top = -np.sort(-top, axis=1)[:, :qmax]
    csum = np.cumsum(top, axis=1, dtype=np.float64)
    q = np.minimum(qs, top.shape[1])
    return csum[:, q - 1] * _SEL32_REL + q * _SEL32_ABS


def _psd(n: int, seed: int, ties: bool) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n + 3, n)) * rng.uniform(0.2, 3.0, n)
    A = X.T @ X / X.shape[0]
    return np.round(A, 1) if ties else A  # (rounded: equal products, the ties a selection could treat apart)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 40), w=st.integers(1, 40), q=st.integers(1, 45), seed=st.integers(0, 2**31 - 1),
       ties=st.booleans())
def test_top_sums_select_the_former_blocks(n, w, q, seed, ties):
    """The float32 top-q block is the former one (np.partition's copy), entry for entry."""
    rng = np.random.default_rng(seed)
    prod = np.abs(rng.standard_normal((n, w)))
    if ties:
        prod = np.round(prod, 1)
    cap = np.abs(rng.standard_normal(n)) * 0.1
    got, want = _top_sums32(prod, q, cap), _former_top(prod, q, cap)
    assert got.shape == want.shape and np.array_equal(np.sort(got, axis=1), np.sort(want, axis=1))


@settings(max_examples=40, deadline=None)
@given(n=st.integers(3, 30), k=st.integers(2, 12), seed=st.integers(0, 2**31 - 1), ties=st.booleans(),
       width=st.sampled_from([None, 2, 5]))
def test_joint_sums_equal_the_former_and_bound_the_exact_sums(n, k, seed, ties, width):
    """Per row and sum size, the former value bit for bit, and at least the exact sum of the q largest
    ``(A_lm)_+ r_m`` over ``m != l`` (every row sorted in float64: brute force)."""
    A = _psd(n, seed, ties)
    k = min(k, n)
    rows = AnchorRows(A, k, width=width)
    rng = np.random.default_rng(seed + 1)
    r = rng.uniform(0.0, 1.0, n)
    qs = np.unique(rng.integers(1, k, size=3)) if k > 1 else np.array([1])
    got, want = _joint_sums(rows, r, qs), _former_joint(rows, r, qs)
    assert np.array_equal(got, want)
    P = np.maximum(A, 0.0) * r[None, :]
    np.fill_diagonal(P, 0.0)
    exact = np.cumsum(-np.sort(-P, axis=1), axis=1)
    for t, q in enumerate(qs):
        assert np.all(got[:, t] >= exact[:, min(q, n - 1) - 1] * (1 - 1e-12))


@settings(max_examples=40, deadline=None)
@given(n=st.integers(3, 30), k=st.integers(2, 12), seed=st.integers(0, 2**31 - 1), ties=st.booleans(),
       width=st.sampled_from([None, 2, 5]), tiny=st.booleans())
def test_plain_sums_equal_the_former_and_bound_the_exact_sums(n, k, seed, ties, width, tiny):
    """The plain test's row sums, the former value bit for bit (products in float64, then cast), with ratios
    down to float32's subnormals (``tiny``), and at least the exact sum of the ``k - 1`` largest products."""
    A = _psd(n, seed, ties)
    k = min(k, n)
    rows = AnchorRows(A, k, width=width)
    rng = np.random.default_rng(seed + 2)
    r = rng.uniform(0.0, 1.0, n) * (1e-42 if tiny else 1.0)
    got = _plain_sums(rows, r)
    want = _sum_up(_former_top(rows.vals * np.take(r, rows.idx), rows.m, rows.cap))
    assert np.array_equal(got, want)
    P = np.maximum(A, 0.0) * r[None, :]
    np.fill_diagonal(P, 0.0)
    exact = np.sort(P, axis=1)[:, ::-1][:, : rows.m].sum(axis=1)
    assert np.all(got >= exact * (1 - 1e-12))
