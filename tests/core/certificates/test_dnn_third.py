"""Issue 39 (certify alone within 3x the answer): the DNN's cheaper steps keep their proofs.

- the evaluation tries the Cholesky first at the top Ritz value plus its own pair's allowance
  (``dnn_lmax.ritz_guesses``, several guesses for ``lmax_upper``): never below LAPACK's eigenvalue, never
  below brute force, tighter where the block's lower pairs crowd;
- the one-weight gradient by sgemm (the same values as the product it replaces);
- the Ritz step's thin operand in C order (the same Ritz values as LAPACK's).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nspca_core.certificates import dnn as _dnn
from nspca_core.certificates import dnn_lmax
from nspca_core.certificates.dnn import (DnnState, _lmax_state, _ritz, dnn_value_lam, lmax_upper, ritz_guess,
                                         ritz_guesses)
from nspca_core.certificates.dnn_steps import _float32_flushed, _gradient_into

from tests.bruteforce import brute_opt


def _sym(seed: int, n: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n, n))
    return (B + B.T) / 2 * rng.uniform(0.1, 10.0)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 90),
       offs=st.lists(st.one_of(st.floats(-0.5, 0.5), st.just(np.nan), st.just(np.inf)), min_size=0, max_size=4))
def test_lmax_upper_with_several_guesses_is_an_upper_bound(seed, n, offs):
    """Guesses tried in turn (any order, any values): the value is never below LAPACK's top
    eigenvalue; when every guess is below it, nothing is proved by them (LAPACK: tight)."""
    M = _sym(seed, n)
    lam = float(np.linalg.eigvalsh(M)[-1])
    guesses = [lam + o * abs(lam) for o in offs]
    v, tol = lmax_upper(M, 0.0, guesses)
    assert v >= lam and tol >= 0
    if all(not (g >= lam) for g in guesses):
        assert v == pytest.approx(lam, rel=1e-9, abs=1e-12)
    else:  # the first provable guess (a Cholesky may fail just above lam: then a later one or LAPACK)
        assert v <= max([g for g in guesses if np.isfinite(g)] + [lam]) + 1e-6 * (float(np.linalg.norm(M)) + 1.0)


def _dual_point(rng, n, start):
    X = rng.standard_normal((n // 2, n)) * rng.random(n)
    A = X.T @ X / X.shape[0]
    N = np.abs(rng.standard_normal((n, n))) * rng.uniform(0.0, 0.05) * float(np.abs(A).max())
    N = (N + N.T) / 2
    np.fill_diagonal(N, 0.0)
    nu = rng.uniform(0.0, 0.2) * float(np.abs(A).max()) * n
    M = _dnn.assemble_dual(A, N, nu)
    w, V = np.linalg.eigh(M)
    U = {"warm": V[:, -6:][:, ::-1], "random": np.linalg.qr(rng.standard_normal((n, 6)))[0],
         "bottom": V[:, :6], "near": np.linalg.qr(V[:, -6:] + 1e-3 * rng.standard_normal((n, 6)))[0]}[start]
    return A, DnnState(N, nu, U), M, float(w[-1])


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(64, 110), seed=st.integers(0, 2**31 - 1),
       start=st.sampled_from(["warm", "random", "bottom", "near"]))
def test_ritz_guesses_bound_is_rigorous_whatever_the_subspace(n, seed, start):
    """The evaluation's lambda_max bound (Ritz guesses proved by Cholesky, else LAPACK) is never
    below LAPACK's top eigenvalue of the same dual matrix, whatever the warm subspace; the guesses
    come in increasing order, the tight one never above the block's."""
    rng = np.random.default_rng(seed)
    A, state, M, exact = _dual_point(rng, n, start)
    g = ritz_guesses(M, state.U)
    assert g is not None and g == sorted(g)
    lam, _ = _lmax_state(A, state)
    assert lam >= exact
    scale = max(abs(exact), float(np.abs(A).max()))
    if start == "warm":  # (the tight guess: at most 4 accept = 4e-6 above the top Ritz value)
        assert lam <= exact + 1e-5 * scale
    if start == "near":  # (a Cholesky failing at the tight guess: the block's, as ritz_guess gave)
        assert lam <= exact + 1e-3 * scale


@pytest.mark.parametrize("seed", range(4))
def test_dnn_value_from_ritz_guesses_never_below_brute_force(seed):
    """The whole bound (lambda_max bound + mu k) at a dual point of a 64-feature covariance, k = 2:
    at least the optimum by enumeration of every support."""
    rng = np.random.default_rng(seed)
    n, k = 64, 2
    A, state, _, _ = _dual_point(rng, n, ["warm", "random", "bottom", "near"][seed])
    val, _ = dnn_value_lam(A, k, state)
    assert val >= brute_opt(A, k)[0]


def _crowded(seed: int, n: int = 120):
    """A matrix whose top eigenvalue stands 5% clear and whose next twenty crowd within 2e-3, and a
    subspace near its top six eigenvectors."""
    rng = np.random.default_rng(seed)
    Q = np.linalg.qr(rng.standard_normal((n, n)))[0]
    lam = np.concatenate([[1.0], 0.95 - 1e-4 * np.arange(20), rng.uniform(-0.5, 0.5, n - 21)])
    M = (Q * lam) @ Q.T
    M = (M + M.T) / 2
    U = np.linalg.qr(Q[:, :6] + 1e-3 * rng.standard_normal((n, 6)))[0]
    return M, U, float(np.linalg.eigvalsh(M)[-1])


@pytest.mark.parametrize("seed", range(3))
def test_both_guesses_are_tried_before_lapack(seed, monkeypatch):
    """Where one guess is below lambda_max (here the block's: its gaps are to theta_7, the
    complement's top, while the spectrum crowds just below lambda_1) the other is proved by
    Cholesky, LAPACK never called; the value is an upper bound within 1e-5."""
    M, U, lam = _crowded(seed)
    g = ritz_guesses(M, U)
    assert len(g) == 2 and g[0] < lam  # (the first guess is refuted: its Cholesky breaks down)

    def no_lapack(*a, **k):
        raise AssertionError("LAPACK called")

    monkeypatch.setattr(dnn_lmax, "top_eigvalsh_upper", no_lapack)
    v, _ = lmax_upper(M, 0.0, g)
    assert lam <= v <= lam + 1e-5
    with pytest.raises(AssertionError, match="LAPACK"):  # (the single block guess alone: refuted)
        lmax_upper(M, 0.0, ritz_guess(M, U))


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 80), seed=st.integers(0, 2**31 - 1), q=st.floats(1e-6, 1.0),
       contiguous=st.booleans())
def test_one_weight_gradient_by_sgemm_equals_the_product(n, seed, q, contiguous):
    """G = q w w^T (flushed float32 factors) into G: the same values as the broadcast product
    (entries with tiny factors included); into a non-contiguous G by the product itself."""
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((n, 1)) * 10.0 ** rng.integers(-20, 2, (n, 1))
    W[rng.random((n, 1)) < 0.2] = 0.0
    qv = np.array([q])
    big = np.full((n, 2 * n), np.nan, dtype=np.float32)
    G = np.empty((n, n), dtype=np.float32) if contiguous else big[:, ::2]
    _gradient_into(W, qv, G)
    want = np.multiply(_float32_flushed(W * qv), _float32_flushed(W).T)
    assert np.array_equal(G, want)


@pytest.mark.parametrize("order", ["C", "F"])
def test_ritz_step_in_either_order_gives_lapack_top_values(order):
    """The block step (float32 M, its thin operand made C-ordered) converges to LAPACK's top
    eigenvalues from a Fortran- or C-ordered start alike."""
    rng = np.random.default_rng(5)
    n, r = 200, 6
    lam = np.concatenate([np.linspace(2.0, 1.5, r), rng.uniform(-1.0, 1.0, n - r)])
    Q = np.linalg.qr(rng.standard_normal((n, n)))[0]
    M = ((Q * lam) @ Q.T).astype(np.float32)
    U = np.asarray(np.linalg.qr(rng.standard_normal((n, r)))[0], order=order)
    for _ in range(30):
        w, U = _ritz(M, U, r)
    top = np.linalg.eigvalsh(M.astype(float))[::-1][:3]
    assert np.allclose(w[:3], top, rtol=1e-5)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(2, 40), seed=st.integers(0, 2**31 - 1), steps=st.integers(1, 200),
       lr=st.floats(1e-5, 1e-1))
def test_adam_matrix_steps_by_saxpy_follow_the_plain_recurrence(n, seed, steps, lr, monkeypatch):
    """_Adam on a matrix (scaled moments, one saxpy each, renormalized every ~130 steps) takes the
    steps of the plain recurrence (two passes per moment) to float32 rounding, keeps x >= 0, and
    carries moments equal to the plain ones once its scales are folded back."""
    from nspca_core.certificates import dnn_steps

    rng = np.random.default_rng(seed)
    x_new = np.abs(rng.standard_normal((n, n))).astype(np.float32)
    x_old = x_new.copy()
    new, old = dnn_steps._Adam((n, n)), dnn_steps._Adam((n, n))
    for _ in range(steps):
        g = (rng.standard_normal((n, n)) * 10.0 ** rng.uniform(-12, 0)).astype(np.float32)
        new.step(x_new, g, lr)
        with monkeypatch.context() as mp:
            mp.setattr(dnn_steps, "_saxpy_ok", lambda *a: False)
            old.step(x_old, g, lr)
    assert x_new.min() >= 0
    scale = max(float(np.abs(x_old).max()), lr)
    assert np.allclose(x_new, x_old, rtol=0, atol=1e-4 * scale)
    # (m sums gradients of both signs: its error is relative to its largest entries)
    assert np.allclose(new.m * np.float32(new.s1), old.m, rtol=1e-4, atol=1e-5 * float(np.abs(old.m).max()))
    assert np.allclose(new.v * np.float32(new.s2), old.v, rtol=1e-4, atol=1e-30)
