"""The dense path's KKT dual points (:mod:`nspca_core.certificates.path_kkt`, issue 39 target 2, helper dense):
the carried bound against brute force at every k, which k are evaluated, and the path against certify(k)
where certify(k)'s bound was the KKT point's (a 400 x 180 factor-plus-noise matrix, k = 108..132)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nspca_core import certify, certify_path
from nspca_core.certificates import path_kkt as PK
from nspca_core.certificates.dnn import dnn_tangent

from tests.bruteforce import brute_opt
from tests.core.certificates.test_path_dense_parity import factor_plus_noise

SMALL = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _random_case(n: int, seed: int):
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n + 2, n)) * rng.uniform(0.2, 2.0, n)
    A = B.T @ B / (n + 2)
    ks = np.arange(1, n + 1)
    LX = np.zeros((n, n))
    for i, k in enumerate(ks):  # a nonnegative unit point with at most k nonzeros at each k
        x = np.zeros(n)
        sup = rng.choice(n, size=int(rng.integers(1, k + 1)), replace=False)
        x[sup] = rng.uniform(0.0, 1.0, sup.size) + 1e-3
        LX[:, i] = x / np.linalg.norm(x)
    lows = np.einsum("ij,ij->j", LX, A @ LX)
    return A, ks, LX, lows


@SMALL
@given(st.integers(3, 8), st.integers(0, 2**31 - 1))
def test_carried_kkt_points_bound_every_k_against_bruteforce(n, seed):
    A, ks, LX, lows = _random_case(n, seed)
    pos = {int(k): i for i, k in enumerate(ks)}
    opt = np.array([brute_opt(A, int(k))[0] for k in ks])
    got = []
    done = PK.kkt_carry(A, ks, pos, lows, LX, lambda: np.full(n, np.inf), lambda s, lam: got.append((s, lam)))
    assert len(got) == len(done) > 0
    for s, lam in got:
        assert s.nu == 0.0 and np.all(s.N >= 0)
        # the point's bound at every k (mu = 0: one lambda_max), never below the optimum there
        assert np.all(dnn_tangent(float(lam), s, n, ks) >= opt * (1 - 1e-12))


def test_kkt_points_only_where_the_bound_is_open_and_each_point_once(monkeypatch):
    A, ks, LX, lows = _random_case(6, 3)
    LX[:, 4] = LX[:, 3]  # the same point at k = 4 and 5: evaluated once
    lows[4] = lows[3]
    pos = {int(k): i for i, k in enumerate(ks)}
    ub = np.full(6, np.inf)
    ub[1] = lows[1]  # closed at k = 2
    got = []
    done = PK.kkt_carry(A, ks, pos, lows, LX, lambda: ub, lambda s, lam: got.append(lam))
    assert done == [1, 3, 4, 6] and len(got) == 4
    # where the Ritz estimate says the point cannot lower the path's bound, no evaluation
    monkeypatch.setattr(PK, "_kkt_beaten", lambda *a, **kw: True)
    assert PK.kkt_carry(A, ks, pos, lows, LX, lambda: ub, lambda s, lam: got.append(lam)) == []


@pytest.mark.slow
def test_dense_path_not_looser_than_certify_where_its_kkt_point_bounds():
    # certify(k)'s bound at k = 108..132 is the KKT point of its feasible point (mu = 0); the path carried the
    # DNN point of k = 180, 5e-8..1.6e-7 above it (main 0254e52)
    X = factor_plus_noise(1)
    path = {c.k: c.upper_bound for c in certify_path(X, ks=range(1, X.shape[1] + 1))}
    looser = [k for k in range(108, 133) if path[k] > certify(X, k=k).upper_bound * (1 + 1e-9)]
    assert looser == []


def _kkt_case(n: int, seed: int, k: int):
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n // 2, n)) * rng.uniform(0.2, 2.0, n)
    A = B.T @ B / (n // 2)
    x = np.zeros(n)
    sup = rng.choice(n, size=k, replace=False)
    x[sup] = rng.uniform(0.0, 1.0, k) + 1e-3
    return A, x / np.linalg.norm(x)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(150, 170), st.integers(0, 2**31 - 1), st.integers(1, 40), st.floats(0.5, 1.5),
       st.floats(0.3, 1.0))
def test_early_kkt_estimate_skips_only_what_certify_would(n, seed, k, fb, fl):
    # the path's rank-2 first look (no n x n matrix, stops once decided): where it skips the evaluation, the
    # KKT point's exact lambda_max (LAPACK, the n x n matrix formed) could not have lowered `best` by more than
    # the 1e-6 margin, or is beyond the usefulness test; and certify(k)'s own estimate (_kkt_beaten) skips it too
    from nspca_core.certificates.dual_start import _KKT_USEFUL, _kkt_beaten, kkt_init

    A, x = _kkt_case(n, seed, k)
    lam = float(np.linalg.eigvalsh(A + kkt_init(A, x))[-1])
    best, lower = fb * lam, fl * lam
    if PK._kkt_beaten_early(A, x, best, lower):
        assert lam * (1 + 1e-12) >= best * (1 + 1e-6) or lower < _KKT_USEFUL * lam * (1 + 1e-12)
        assert _kkt_beaten(A, x, best, lower)


def test_early_kkt_estimate_decides_before_certify_estimate(monkeypatch):
    # kkt_carry asks _kkt_beaten (certify(k)'s estimate, whose block the evaluation starts from) only where the
    # early look did not decide; a point it does not skip is evaluated as before
    A, x = _kkt_case(160, 5, 12)
    lam = float(np.linalg.eigvalsh(A + kkt_init_of(A, x))[-1])
    lo = float(x @ A @ x)
    assert PK._kkt_beaten_early(A, x, 0.9 * lam, lo)  # the estimate is above a bound already 10% below
    assert not PK._kkt_beaten_early(A, x, 2.0 * lam, lam)  # far above lambda_max and useful: not decided
    asked = []
    real = PK._kkt_beaten
    monkeypatch.setattr(PK, "_kkt_beaten", lambda *a, **kw: asked.append(1) or real(*a, **kw))
    LX, pos, lows = x[:, None], {12: 0}, np.array([lo])
    got = []
    assert PK.kkt_carry(A, np.array([12]), pos, lows, LX, lambda: np.array([0.9 * lam]),
                        lambda s, v: got.append(v)) == [] and asked == [] and got == []
    done = PK.kkt_carry(A, np.array([12]), pos, np.array([0.999 * lam]), LX, lambda: np.array([2.0 * lam]),
                        lambda s, v: got.append(v))
    assert asked == [1] and done == [12] and len(got) == 1 and got[0] >= lam * (1 - 1e-12)


def kkt_init_of(A, x):
    from nspca_core.certificates.dual_start import kkt_init

    return kkt_init(A, x)
