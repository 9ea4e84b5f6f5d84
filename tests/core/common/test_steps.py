"""The steps of the one ascent driver (nspca_core._common.steps) against plain loops written out
here: the hard and soft top-k of each column, EM's constraint step (SoftTopK) and the lockstep
power iteration of the 2015 deflation baselines (PlainPower), each run through ``ascent``."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from nspca_core._common.ascent import ascent, factor_starts
from nspca_core._common.steps import PlainPower, SoftTopK, TopK, hard_topk, soft_topk
from nspca_core.operators.cov import Cov
from nspca_core.methods import REGISTRY
from nspca_core.peers.bipartite import DEFLATION_METHODS


def brute_hard(y, k, nonneg):
    """The k largest entries of y_+ (nonneg) or of |y|, ties to the lower index, by a sort."""
    score = np.maximum(y, 0.0) if nonneg else np.abs(y)
    order = sorted(range(y.size), key=lambda i: (-score[i], i))[:k]
    out = np.zeros_like(y)
    for i in order:
        if score[i] > 0:
            out[i] = y[i]
    return out


def brute_soft(w, k):
    """sign(w_i) (|w_i| - t)_+ with t the (k+1)-th largest |w_i| (0 when k >= n)."""
    a = np.sort(np.abs(w))[::-1]
    t = a[k] if k < w.size else 0.0
    return np.sign(w) * np.maximum(np.abs(w) - t, 0.0)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 9), st.integers(1, 4), st.booleans(), st.booleans())
def test_hard_topk_is_the_sorted_top_k_with_ties_to_the_lower_index(seed, n, p, nonneg, coarse):
    rng = np.random.default_rng(seed)
    Y = rng.integers(-2, 3, (n, p)).astype(float) if coarse else rng.standard_normal((n, p))
    k = int(rng.integers(1, n + 1))
    Z = hard_topk(Y, k, nonneg)
    for j in range(p):
        assert np.array_equal(Z[:, j], brute_hard(Y[:, j], k, nonneg))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 9), st.integers(1, 4), st.booleans())
def test_soft_topk_shifts_the_k_largest_by_the_next(seed, n, p, coarse):
    rng = np.random.default_rng(seed)
    W = rng.integers(-2, 3, (n, p)).astype(float) if coarse else rng.standard_normal((n, p))
    k = int(rng.integers(1, n + 1))
    Z = soft_topk(W, k)
    for j in range(p):
        np.testing.assert_array_equal(Z[:, j], brute_soft(W[:, j], k))
        assert np.count_nonzero(Z[:, j]) <= k


def _cov(seed, m=30, n=8):
    X = np.random.default_rng(seed).standard_normal((m, n))
    return Cov(X=X - X.mean(0))


def _em_reference(A, w, k, nonneg, tol, max_iter):
    """One EM start written out (Sigg & Buhmann, Alg. 2, no fallbacks): (w, steps, converged)."""
    for step in range(1, max_iter + 1):
        y = A @ w
        if nonneg:
            y = np.maximum(y, 0.0)
        z = brute_soft(y, k)
        z = z / np.linalg.norm(z)
        done = abs(z @ w) > 1 - tol
        w = z
        if done:
            return w, step, True
    return w, max_iter, False


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 6), st.booleans())
def test_the_em_step_in_the_driver_is_em(seed, k, nonneg):
    cov = _cov(seed)
    A = cov.dense()
    W0 = np.abs(np.random.default_rng(seed + 1).standard_normal((cov.n, 5)))
    W0 /= np.linalg.norm(W0, axis=0)
    r = ascent(cov.matvec, W0, k, step=SoftTopK(nonneg=nonneg), max_iter=300, rtol=None, xtol=1e-8,
               merge=False, keep="last", quads=cov.quads)
    refs = [_em_reference(A, W0[:, j], k, nonneg, 1e-8, 300) for j in range(5)]
    np.testing.assert_allclose(r.X, np.column_stack([w for w, _, _ in refs]), atol=1e-9)
    assert r.converged.tolist() == [c for _, _, c in refs]
    assert r.iterations == max(s for _, s, _ in refs)
    np.testing.assert_allclose(r.values, [w @ A @ w for w, _, _ in refs], rtol=1e-12)


def test_the_em_step_falls_back_to_a_hard_top_k():
    step = SoftTopK(nonneg=True)
    # soft step leaves nothing (the two largest tie): the hard top-1 of the same vector
    Y = np.array([[2.0], [2.0], [0.5]])
    va = np.full((3, 1), 1 / np.sqrt(3))
    _, Z, done, settled = step(Y, np.zeros((0, 1), dtype=np.intp), va, 1, None, 1e-9)
    assert np.array_equal(Z[:, 0], [1.0, 0.0, 0.0]) and not done[0] and settled is None
    # A w has no positive entry: stuck, the hard top-k of w itself, and the column stops
    A = np.array([[1.0, -1.0], [-1.0, 1.0]])
    w = np.full((2, 1), np.sqrt(0.5))  # A w = 0
    r = ascent(lambda V: A @ V, w, 1, step=step, rtol=None, merge=False, keep="last")
    assert np.array_equal(r.X[:, 0], [1.0, 0.0]) and r.converged[0] and r.iterations == 1


def _power_reference(cov, starts, k, nonneg, soft, max_iter, tol=1e-10):
    """The baselines' iteration written out: every column steps until all have converged."""
    S = (lambda y: brute_soft(np.maximum(y, 0.0) if nonneg else y, k)) if soft else \
        (lambda y: brute_hard(y, k, nonneg))
    X = np.column_stack([S(starts[:, j]) for j in range(starts.shape[1])])
    X = X / np.linalg.norm(X, axis=0)
    A = cov.dense()
    steps = 0
    for steps in range(1, max_iter + 1):
        Xn = np.column_stack([S(A @ X[:, j]) for j in range(X.shape[1])])
        nrm = np.linalg.norm(Xn, axis=0)
        Xn = np.where(nrm > 0, Xn / np.where(nrm > 0, nrm, 1.0), X)
        done = np.all(np.abs(np.sum(Xn * X, axis=0)) > 1 - tol)
        X = Xn
        if done:
            break
    return X, steps


@pytest.mark.parametrize("soft", [False, True])
@pytest.mark.parametrize("nonneg", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_plain_power_step_runs_every_column_until_all_converge(seed, nonneg, soft):
    cov = _cov(seed, n=10)
    V = cov.factor(3)[0]
    starts = factor_starts(cov, V, 3, nonneg)
    for max_iter in (1, 4, 200):
        r = ascent(cov.matvec, starts, 3, step=PlainPower(soft=soft, nonneg=nonneg), max_iter=max_iter,
                   rtol=None, xtol=1e-10, merge=False, keep="last", quads=cov.quads)
        X, steps = _power_reference(cov, starts, 3, nonneg, soft, max_iter)
        np.testing.assert_allclose(r.X, X, atol=1e-10)
        assert r.iterations == steps
        assert len(set(r.converged.tolist())) == 1  # one stop for the batch


def test_factor_starts_are_the_top_variances_then_truncated_factor_columns():
    cov = _cov(3, n=9)
    V = cov.factor(2)[0]
    S = factor_starts(cov, V, 4, True)
    top = sorted(range(9), key=lambda i: (-cov.diag()[i], i))[:4]
    assert np.array_equal(np.flatnonzero(S[:, 0]), np.sort(top)) and np.all(S[top, 0] == 1.0)
    want = [brute_hard(sg * V[:, j], 4, True) for j in range(2) for sg in (1.0, -1.0)]
    want = [v for v in want if v.any()]
    np.testing.assert_array_equal(S[:, 1:], np.column_stack(want))


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 8), st.sampled_from(["topk", "both", "signed", "soft", "power"]))
def test_every_step_gives_unit_iterates_with_at_most_k_nonzeros(seed, k, which):
    cov = _cov(seed)
    rng = np.random.default_rng(seed)
    X0 = np.abs(rng.standard_normal((cov.n, 4))) + 0.01
    step = {"topk": TopK(), "both": TopK(both_signs=True), "signed": TopK(signed=True),
            "soft": SoftTopK(), "power": PlainPower()}[which]
    keep = "best" if isinstance(step, TopK) else "last"
    r = ascent(cov.matvec, X0, k, step=step, keep=keep, rtol=None if keep == "last" else 1e-13,
               merge=False, max_iter=50)
    np.testing.assert_allclose(np.linalg.norm(r.X, axis=0), 1.0, rtol=1e-12)
    assert (np.count_nonzero(r.X, axis=0) <= k).all()
    if which != "signed":
        assert (r.X >= 0).all()
    np.testing.assert_allclose(r.values, np.einsum("ij,ij->j", r.X, cov.matvec(r.X)), rtol=1e-10, atol=1e-14)


def test_keep_last_returns_the_last_iterate_not_the_best():
    cov = _cov(5)
    X0 = np.abs(np.random.default_rng(0).standard_normal((cov.n, 3)))
    one = ascent(cov.matvec, X0, 2, max_iter=1, keep="last", merge=False)
    P = TopK().start(X0, 2, None)
    Z = hard_topk(cov.matvec(P), 2, True)
    np.testing.assert_allclose(one.X, Z / np.linalg.norm(Z, axis=0), rtol=1e-15, atol=0)
    assert np.array_equal(one.X != 0, Z != 0)
    best = ascent(cov.matvec, X0, 2, max_iter=1, merge=False)
    quad = lambda M: np.einsum("ij,ij->j", M, cov.matvec(M))  # noqa: E731
    np.testing.assert_allclose(best.values, np.maximum(quad(P), quad(one.X)), rtol=1e-13)
    # a step that does not ascend (EM's soft top-k): "last" is the last iterate, "best" the best seen
    soft = dict(step=SoftTopK(), rtol=None, merge=False, max_iter=3)
    last, top = ascent(cov.matvec, X0, 2, keep="last", **soft), ascent(cov.matvec, X0, 2, **soft)
    assert (top.values >= last.values - 1e-15).all()
    W = X0.copy()
    for _ in range(last.iterations):
        Z = soft_topk(np.maximum(cov.dense() @ W, 0.0), 2)
        W = Z / np.linalg.norm(Z, axis=0)
    np.testing.assert_allclose(last.X, W, atol=1e-12)


def test_keep_must_be_best_or_last():
    with pytest.raises(ValueError, match=r"`keep` must be 'best' or 'last'; got 'Last'"):
        ascent(lambda V: V, np.ones((3, 1)), 1, keep="Last")


def test_deflation_methods_come_from_the_registry():
    assert DEFLATION_METHODS == tuple(n for n, s in REGISTRY.items() if s.deflation_baseline)
    assert set(DEFLATION_METHODS) == {"tpower", "em", "spannogram"}
