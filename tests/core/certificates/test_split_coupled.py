"""The split bound's coupling with sharpened ``B_S(i)`` (issue 28, item 3): where the maximum over j of
``B_S(k - j) + B_T(j)`` sits at a sparsity i of S whose bound was only the DNN's tangent, the anchored
row sums at i replace it (``coupled._coupled_refined``).  Every sharpened value is an upper bound on S's
optimum at i (brute force), the coupled bound stays above OPT_k, and it is never above the plain one."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from nspca_core.operators.cov import Cov
from nspca_core.certificates import _settings as S
from nspca_core.certificates import coupled, route
from nspca_core.certificates.bounds import _rest_curve
from nspca_core.certificates.path_large import coupled_curve

from tests.bruteforce import assert_cross_table_bounds, brute_opt


def _force_split(monkeypatch, size: int):
    """Small data through the large-n code: S = the ``size`` features of largest variance (plus the
    point's support), T the rest."""
    monkeypatch.setattr(S, "_DENSE_MAX_N", 2)
    monkeypatch.setattr(S, "_LOWRANK_MAX_RANK", 0)
    monkeypatch.setattr(S, "_SPLIT_MIN", size)
    monkeypatch.setattr(S, "_SPLIT_PER_K", 1)
    monkeypatch.setitem(S._EFFORT["auto"], "split_size", size)


def _modules(rng, m: int, n: int, groups: int) -> np.ndarray:
    """Positively correlated features in ``groups`` modules of decreasing strength (the strongest
    module's features have the largest variances, the others sit in the rest T)."""
    Z = rng.standard_normal((m, groups))
    L = np.zeros((groups, n))
    for g, cols in enumerate(np.array_split(rng.permutation(n), groups)):
        L[g, cols] = rng.uniform(0.5, 1.0, cols.size) * 2.0 ** -g
    X = Z @ L + 0.2 * rng.standard_normal((m, n))
    return X - X.mean(axis=0)


def modules_certified(seed: int, n: int, k: int):
    """A one-k split certificate at k of 30 samples of :func:`_modules` (3 modules), checked >= the brute-force
    OPT_k: ``(cov, cert)`` (the caller's forced split and switches in place)."""
    X = _modules(np.random.default_rng(seed), 30, n, 3)
    cov = Cov(X, None)
    cert = route._certify_large(cov, k, None, "auto", None)
    opt, _ = brute_opt(X.T @ X / X.shape[0], k)
    assert cert.upper_bound >= opt * (1 - 1e-12)
    return cov, cert


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.integers(9, 11), st.integers(5, 7), st.integers(4, 6), st.integers(0, 2**31 - 1))
def test_sharpened_bounds_hold_against_bruteforce(monkeypatch, n, size, k, seed):
    _force_split(monkeypatch, size)
    rng = np.random.default_rng(seed)
    X = _modules(rng, 30, n, 3)
    A = X.T @ X / X.shape[0]
    keep: dict = {}
    cov = Cov(X, None)
    cert = route._certify_large(cov, k, None, "auto", None, keep=keep)
    assume(keep["T"].size > 0)
    opt, _ = brute_opt(A, k)
    assert cert.upper_bound >= opt * (1 - 1e-12)
    S_idx = keep["S"]
    for i, b in keep["BS_at"].items():  # S's optimum at sparsity i, by enumeration
        opt_i, _ = brute_opt(A[np.ix_(S_idx, S_idx)], i)
        assert b >= opt_i * (1 - 1e-12), (i, b, opt_i)
    # the coupled bound with the sharpened values is at most the plain one, and still valid
    BT = _rest_curve(cov, keep["T"], k)
    plain = coupled._coupled(keep["certS"], keep["stS"], keep["dS"], keep["kS"], BT, k, keep["pair"])
    sharp = coupled._coupled(keep["certS"], keep["stS"], keep["dS"], keep["kS"], BT, k, keep["pair"],
                            keep["BS_at"])
    assert sharp <= plain and sharp >= opt * (1 - 1e-12)
    # the path's carried curve uses them too, and stays above OPT at every k
    curve = coupled_curve(keep, _rest_curve(cov, keep["T"], n), np.arange(1, n + 1))
    for kk, b in zip(range(1, n + 1), curve):
        assert b >= brute_opt(A, kk)[0] * (1 - 1e-12), (kk, b)


def test_sharpening_lowers_the_coupled_bound_where_the_tangent_was_loose(monkeypatch):
    """A module structure where the rest T holds weaker modules: the plain coupling adds T's
    variances to a DNN tangent at ``k - j``; the anchored bound at that sparsity removes most of it
    (and the certificate says which sparsities it sharpened)."""
    _force_split(monkeypatch, 30)
    rng = np.random.default_rng(0)
    X = _modules(rng, 60, 400, 8)
    keep: dict = {}
    cov = Cov(X, None)
    k = 15
    cert = route._certify_large(cov, k, None, "auto", None, keep=keep)
    BT = _rest_curve(cov, keep["T"], k)
    plain = coupled._coupled(keep["certS"], keep["stS"], keep["dS"], keep["kS"], BT, k, keep["pair"])
    assert any(np.isfinite(v) for v in keep["BS_at"].values()), "no sparsity of S was sharpened"
    # measured: 0.9617 of the plain bound -> 0.9999 (S's own certificate); "auto" sharpens until the
    # ratio the DNN's cuts aim for (0.97), so at least that
    assert cert.lower >= S._CUT_BELOW * cert.upper_bound and cert.lower < S._CUT_BELOW * plain, \
        (cert.ratio, cert.lower / plain)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 5), st.integers(2, 6), st.integers(3, 8), st.integers(0, 2**31 - 1), st.booleans())
def test_cross_table_bounds_every_block_against_bruteforce(s, t, m, seed, held_as_A):
    """``cross_table``'s ``C[i, j]`` is at least ``max y^T A_ST z`` over unit nonnegative i-sparse y
    on S and j-sparse z on T: checked against ``||(A_IJ)_+||_2`` (which bounds that maximum, with
    equality when A_IJ >= 0) for every pair of supports, enumerated; zero at i = 0 or j = 0;
    nondecreasing in i and j."""

    from nspca_core.certificates.cross import cross_table

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, s + t)) * rng.random(s + t) * 3
    A = X.T @ X / m
    S, T = np.arange(s), np.arange(s, s + t)
    cov = Cov(None, A) if held_as_A else Cov(X, None)
    C = cross_table(cov, S, T, s + 1, t + 1)
    assert C.shape == (s + 2, t + 2) and not C[0].any() and not C[:, 0].any()
    assert np.all(np.diff(C, axis=0) >= 0) and np.all(np.diff(C, axis=1) >= 0)
    assert_cross_table_bounds(C, A, S, T)
    # beyond the sizes of S and T the largest value stands
    assert C[s + 1, t + 1] == C[s, t]


def test_pair_bound_is_the_top_eigenvalue():
    from nspca_core.certificates.cross import pair_bound

    rng = np.random.default_rng(0)
    for _ in range(200):
        a, b, c = rng.random(3) * 10
        top = np.linalg.eigvalsh(np.array([[a, c], [c, b]]))[-1]
        assert top <= pair_bound(a, b, c) <= top * (1 + 1e-14)
    assert pair_bound(2.0, 3.0, np.sqrt(6.0)) >= 5.0  # c = sqrt(ab): the old sum B_S + B_T


def test_path_carries_the_cross_term_and_stays_valid_against_bruteforce(monkeypatch):
    """certify_path on large n extends a run's cross table to every sparsity its carried bounds use
    (path_large.run): on small module-structured data forced through the split code, every k's bound
    is at least the brute-force OPT, and some run did carry a table."""
    from nspca_core import certify_path
    from nspca_core.certificates import path_large

    _force_split(monkeypatch, 5)
    seen = []
    real = path_large.coupled_curve

    def spy(run, BT, ks):
        seen.append(run.get("cross") is not None)
        return real(run, BT, ks)

    monkeypatch.setattr(path_large, "coupled_curve", spy)
    extended = []
    real_table = path_large.cross_table

    def table_spy(*args, **kw):
        extended.append(args[3:5])
        return real_table(*args, **kw)

    monkeypatch.setattr(path_large, "cross_table", table_spy)
    for seed in range(3):
        rng = np.random.default_rng(seed)
        X = _modules(rng, 30, 11, 3)
        A = X.T @ X / X.shape[0]
        ks = list(range(1, 12))
        for c in certify_path(X, ks=ks):
            assert c.upper_bound >= brute_opt(A, c.k)[0] * (1 - 1e-12), (seed, c.k, c.kind)
    assert any(seen), "no run carried a cross table"
    assert extended, "no run's table was extended to the carried sparsities"


def test_no_sparsity_limit_sharpens_above_64(monkeypatch):
    """Issue 39 item 2: the anchored sharpening of ``B_S(i)`` is chosen by its counted cost, not by
    ``i <= 64`` (the certified ratio fell 5 points at k = 65 on a gene matrix).  A coupled bound whose
    maximum sits at i = 70 of S (B_S(i) = the i largest variances of S, B_T rising steeply to j = 10)
    asks the anchored bound at i = 70; the former limit refused it."""
    from types import SimpleNamespace

    nS, k, d = 200, 80, 1.0
    asked = []
    monkeypatch.setattr(coupled, "_anchored", lambda A, i, lo, cur, rel_tol: asked.append(i))
    monkeypatch.setattr(coupled, "_ascent_many", lambda cov, i, X0: (X0[:, 0], 1.0))
    certS = SimpleNamespace(upper_bound=1e9, info={}, x=np.full(nS, nS ** -0.5))
    BT = 3.0 * np.minimum(np.arange(k + 1), 10.0)
    val, i = coupled._coupled(certS, None, np.full(nS, d), k, BT, k, argmax=True)
    assert i == 70
    coupled._coupled_refined(Cov(A=np.eye(nS) * d), certS, None, k, BT, k, None, None, lower=1.0, stop=1.0)
    assert asked == [70]


@given(st.integers(4, 4000), st.integers(3, 4000))
def test_anchored_bound_is_affordable_at_every_sparsity(n, k):
    """Its counted cost (a bisection over n x w(k) candidates, w(k) < n) never exceeds a DNN run of
    "auto" (or a path's per-k run): the choice no longer depends on a k limit."""
    k = min(k, n)
    for cfg in (S._EFFORT["auto"], S._PATH["auto"]):
        assert S.anchor_affordable(n, k, cfg["iters"] + cfg["cut_rounds"] * cfg["cut_iters"])
    assert not S.anchor_affordable(n, 2, 10**6)  # k <= 2 has its exact bound
