"""The dense path's feasible points (``lower._path_lower(saturate=True)``, issue 39 item 2): once the best
point has fewer nonzeros than a block's largest k, the larger k take it instead of running their own starts
(the largest k checks it); every point feasible at its k, its value its ``x^T A x``, never above the
brute-force OPT_k, and where the sparsity stops binding, OPT itself."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nspca_core.certificates import lower as L
from nspca_core.certificates.bounds import _Spectral
from nspca_core.operators.cov import Cov

from tests.bruteforce import brute_opt
from tests.core.certificates.test_single import _random_psd

_SLOW = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]


def _points(A, uniq, saturate):
    return L._path_lower(Cov(None, A), np.asarray(uniq), _Spectral(A, 1).U, {}, saturate=saturate)


def _check_points(A, uniq, X, v):
    for i, k in enumerate(uniq):
        x = X[:, i]
        assert x.min() >= 0.0 and np.count_nonzero(x) <= k and abs(np.linalg.norm(x) - 1.0) < 1e-12
        assert abs(v[i] - x @ A @ x) <= 1e-12 * abs(v[i]) + 1e-15
        opt, _ = brute_opt(A, int(k))
        assert v[i] <= opt * (1 + 1e-9)


@settings(max_examples=25, deadline=None, suppress_health_check=_SLOW)
@given(st.integers(5, 9), st.integers(1, 4), st.booleans(), st.integers(0, 2**31 - 1))
def test_saturated_points_are_feasible_and_true_values(n, s, block, seed):
    """Random psd matrices and matrices whose optimum at every k >= s has s nonzeros (the sparsity
    saturates: :func:`_saturating`), every k or a random subset of k: every point feasible with at most k nonzeros,
    its value its quadratic form and at most the brute-force OPT_k; on the block matrices, OPT_k at
    every k >= the first k whose point already reaches the block's optimum."""
    rng = np.random.default_rng(seed)
    if block:
        A = _saturating(rng, n, s)
    else:
        A = _random_psd(rng, n)
    uniq = np.arange(1, n + 1) if rng.random() < 0.5 else np.unique(rng.integers(1, n + 1, size=n))
    X, v = _points(A, uniq, True)
    _check_points(A, uniq, X, v)
    opt_n, _ = brute_opt(A, n)
    reached = np.flatnonzero(v >= opt_n * (1 - 1e-9))
    if reached.size:  # from the first k that found the whole problem's optimum, every later k has it
        assert (v[reached[0]:] >= opt_n * (1 - 1e-9)).all()


def _saturating(rng, n, s):
    """``10 u u^T - 0.05 (u r^T + r u^T) + diag(d + r^2 / 2)``, u positive on the first s features and zero
    elsewhere, r the reverse, d in [0.1, 0.2] (psd: ``0.1 |ab| <= 10 a^2 + b^2 / 4000`` and
    ``(r^T x)^2 <= n sum r_i^2 x_i^2``): the optimum at every k >= s has those s nonzeros (mass moved to
    another feature gains little and loses about ``10 |u|^2``), so the sparsity stops binding at k = s."""
    u, r = np.zeros(n), np.zeros(n)
    u[:s] = rng.uniform(0.5, 1.0, s)
    r[s:] = rng.uniform(0.0, 1.0, n - s)
    return (10.0 * np.outer(u, u) - 0.05 * (np.outer(u, r) + np.outer(r, u))
            + np.diag(rng.uniform(0.1, 0.2, n) + 0.5 * r**2))


def test_saturation_skips_the_larger_k_and_the_largest_k_checks(monkeypatch):
    """k = 1..24 on a matrix whose optimum has 3 nonzeros at every k >= 3 (:func:`_saturating`): the
    blocks end at k = 3, 6, 12 and 24; the point found by k = 6 has 3 nonzeros, so k = 7..23 run no
    starts of their own (only the largest k does, and the neighbours' round) and take it; their values
    are OPT_k.  When the largest k's starts find more (a fake value), every skipped k runs its starts
    after all."""
    rng = np.random.default_rng(5)
    n, s = 24, 3
    A = _saturating(rng, n, s)
    uniq = np.arange(1, n + 1)
    seen = []
    real = L._ascent_batch

    def spy(cov, kc, X0, iters=50):
        seen.append(np.asarray(kc).copy())
        return real(cov, kc, X0, iters)

    monkeypatch.setattr(L, "_ascent_batch", spy)
    Xp, v = _points(A, uniq, True)
    first_round = np.concatenate(seen[:-1])  # (the last call: the neighbours' round at every k)
    assert set(first_round.tolist()) == set(range(1, 7)) | {24}
    assert set(seen[-1].tolist()) == set(range(1, 25))
    opt, _ = brute_opt(A, s)
    assert np.count_nonzero(Xp[:, 11]) == s and v[11] >= opt * (1 - 1e-9)
    assert np.allclose(v[s - 1:], opt, rtol=1e-9)

    def more_at_the_end(cov, kc, X0, iters=50):
        Xr, vr = real(cov, kc, X0, iters)
        kc = np.asarray(kc)
        if len(seen) < 99 and kc.max() == n and kc.min() == n:  # the largest k's check: finds "more"
            vr = vr + 1.0
        seen.append(kc.copy())
        return Xr, vr

    seen.clear()
    monkeypatch.setattr(L, "_ascent_batch", more_at_the_end)
    L._path_lower(Cov(None, A), uniq, _Spectral(A, 1).U, {}, saturate=True)
    assert set(np.concatenate(seen[:-1]).tolist()) == set(range(1, 25))


def test_without_saturate_one_batch_as_before():
    """``saturate=False`` (the large-n path's call): the starts of every k in one batch, as before."""
    rng = np.random.default_rng(2)
    A = _random_psd(rng, 7)
    uniq = np.arange(1, 8)
    X0, v0 = _points(A, uniq, False)
    X1, v1 = _points(A, uniq, True)
    _check_points(A, uniq, X0, v0)
    _check_points(A, uniq, X1, v1)
