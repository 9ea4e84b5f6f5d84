"""Issue 39, twelfth round (helper thin13): thin data held densely with n <= ``_DENSE_MAX_N`` take the split route
where its predicted flops are below the dense route's (``route.split_cheaper``, ``route.route_flops``), S's bound
``eager`` (the anchored row sums' whole search on ``A_SS``, the refinements aimed at S's own ratio).  Every bound of
that route is checked against brute force on tiny thin inputs (screens forced small, so S is a strict subset), and
the path there is never looser than certify(k)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

import nspca_core as nc
from nspca_core.certificates import _settings as S
from nspca_core.certificates import route
from nspca_core.operators.cov import Cov

from tests.bruteforce import brute_opt
from tests.core.certificates.test_split_coupled import _modules

TINY = settings(max_examples=20, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _small_screens(monkeypatch, size: int):
    """Screens of ``size`` features (the split route's S a strict subset of tiny data); no exact low-rank
    certificate (it would take these tiny thin inputs first)."""
    monkeypatch.setattr(S, "_LOWRANK_MAX_RANK", 0)
    monkeypatch.setattr(S, "_SPLIT_MIN", size)
    monkeypatch.setattr(S, "_SPLIT_PER_K", 1)
    monkeypatch.setitem(S._EFFORT["auto"], "split_size", size)


def _thin(seed: int, m: int, n: int) -> np.ndarray:
    return _modules(np.random.default_rng(seed), m, n, 2)


def test_the_route_is_chosen_by_predicted_flops():
    """``split_cheaper`` is ``route_flops``' comparison, only for thin data held as X at effort "auto", and only
    where the eager screen is smaller than n; certify(k) then runs the split route (``split_S`` in its info) and
    the dense one otherwise.  A 60 x 2,500 gene-shaped matrix goes split at every k up to 300; 300 x 400 (X's
    Gram about as costly as A), 2,000 x 361 (m > n) and a covariance stay dense."""
    for m, n in [(60, 2500), (72, 1000), (40, 500), (150, 400), (300, 400)]:
        for k in (5, 50, 80, 150):
            s = S.eager_size(n, k)
            dense, split = route.route_flops(m, n, s)
            cov = Cov(np.zeros((m, n)))
            assert route.split_cheaper(cov, k, "auto") == (s < n and split < dense), (m, n, k)
            assert not route.split_cheaper(cov, k, "full")
    assert all(route.split_cheaper(Cov(np.zeros((60, 2500))), k, "auto") for k in range(1, 301))
    assert not any(route.split_cheaper(Cov(np.zeros((300, 400))), k, "auto") for k in range(1, 401))
    assert not route.split_cheaper(Cov(np.zeros((2000, 361))), 5, "auto")
    X = _thin(3, 24, 700)
    c = nc.certify(X, k=8)
    assert "split_S" in c.info and c.info["split_S"] < 700
    assert "split_S" not in nc.certify(X, k=8, effort="full").info
    A = X.T @ X / X.shape[0]
    assert "split_S" not in nc.certify(cov=A, k=8).info  # (A given: nothing to spare by the split)


@TINY
@given(st.integers(4, 8), st.integers(10, 14), st.integers(2, 6), st.integers(0, 2**31 - 1), st.integers(0, 1))
@example(5, 10, 2, 820, 0)
@example(5, 10, 2, 820, 1)
def test_the_thin_route_bounds_the_optimum_and_the_path_is_never_looser(monkeypatch, m, n, k, seed, given_x):
    """On tiny thin data (m = 4..8, n = 10..14), where the cost model sends it there (screens grown to ``k + 2``
    features at most), certify(k) takes the split route with S's bound eager (certify_thin's dense fallback where
    that proves less); its upper bound is at least the brute-force optimum and its feasible value at most it;
    certify_path's bound is at least the optimum and at most certify(k)'s (1e-9 relative) at every k."""
    _small_screens(monkeypatch, min(k + 2, n - 2))
    X = _thin(seed, m, n)
    A = X.T @ X / m
    ks = list(range(1, min(n, 8) + 1))
    opts = {kk: brute_opt(A, kk)[0] for kk in ks}
    x = brute_opt(A, k)[1] if given_x else None
    cov = Cov(X)
    assume(route.split_cheaper(cov, k, "auto"))
    c = route._certify_cov(cov, k, x)
    if "split_S" in c.info:
        assert c.info["split_S"] < n
    else:  # (certify_thin's dense fallback stood, the smaller proved bound: e.g. m, n, k, seed = 5, 10, 2, 820)
        assert c.upper_bound < route._certify_large(Cov(X), k, x, "auto", None, eager=True).upper_bound
    assert c.upper_bound >= opts[k] * (1 - 1e-12)
    assert c.lower <= opts[k] * (1 + 1e-12)
    path = nc.certify_path(X, ks=ks, center=False)
    for kk, p in zip(ks, path):
        one = route._certify_cov(Cov(X), kk)
        assert p.upper_bound >= opts[kk] * (1 - 1e-12), kk
        assert p.upper_bound <= one.upper_bound * (1 + 1e-9), (kk, p.upper_bound, one.upper_bound)


@TINY
@given(st.integers(5, 8), st.integers(11, 14), st.integers(3, 6), st.integers(0, 2**31 - 1))
def test_the_eager_and_lazy_split_bounds_both_bound_the_optimum(monkeypatch, m, n, k, seed):
    """The eager split certificate (``_certify_large(eager=True)``) and the lazy one at its point (the light route
    at every k): both bound the brute-force optimum, and S's bound of each is at least the optimum on S.  (Neither is
    below the other in general: the lazy one's finish and the DNN's route differ from the eager search.)"""
    _small_screens(monkeypatch, min(k + 2, n - 2))
    monkeypatch.setattr(S, "_SPLIT_BRANCH_MAX_K", 0)  # (the light route at every k, both)
    X = _thin(seed, m, n)
    A = X.T @ X / m
    opt = brute_opt(A, k)[0]
    eager = route._certify_large(Cov(X), k, None, "auto", None, eager=True)
    lazy = route._certify_large(Cov(X), k, eager.x, "auto", None)
    for c in (eager, lazy):
        assert c.upper_bound >= opt * (1 - 1e-12)
        if "S" in c.info:
            Sx = np.asarray(c.info["S"])
            kS = min(k, Sx.size)
            assert c.info["B_S"] >= brute_opt(A[np.ix_(Sx, Sx)], kS)[0] * (1 - 1e-12)


def _noise_above_module(seed: int) -> np.ndarray:
    """30 x 500: a correlated module of 60 features under 440 independent ones of larger variance (the eager
    screen, the largest variances and the answer's support, leaves the module's other features in T)."""
    rng = np.random.default_rng(seed)
    X = 0.6 * rng.standard_normal((30, 500))
    X[:, :60] += rng.standard_normal((30, 1)) * rng.uniform(0.3, 0.6, 60)
    X[:, 60:] *= 1.3
    return X - X.mean(axis=0)


def test_the_screen_grows_where_T_binds_and_the_dense_route_stands_where_no_screen_catches_it():
    """``eager_grown``: where T holds the 2 k screen's ratio below S's own, a larger screen is tried and the smaller
    bound stands (never above the first screen's); ``certify_thin``: where T still binds after that, the dense
    route's certificate too, the smaller bound standing (here the dense one: its anchored test on the whole A)."""
    from nspca_core.certificates import single

    grew = fell = 0
    for seed in range(2):
        X = _noise_above_module(seed)
        for k in (10, 20):
            assert route.split_cheaper(Cov(X), k, "auto")
            first = single._certify_split(Cov(X), k, None, "auto", None, size=S.eager_size(500, k), eager=True)
            grown = route._certify_large(Cov(X), k, None, "auto", None, eager=True)
            assert grown.upper_bound <= first.upper_bound
            grew += grown.info["split_S"] > first.info["split_S"]
            thin = route.certify_thin(Cov(X), k, None, "auto", None)
            dense, _ = single._certify_dense(Cov(X), k, None, "auto", None)
            assert thin.upper_bound == min(grown.upper_bound, dense.upper_bound)
            fell += thin.upper_bound < grown.upper_bound
            assert route._certify_cov(Cov(X), k).upper_bound == thin.upper_bound  # (certify(k)'s route)
    assert grew and fell
