"""The certificate for several components with disjoint supports (issue 28, item 5)."""

from __future__ import annotations

from functools import lru_cache
from itertools import product

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nspca_core import InputError, components
from nspca_core.operators.cov import Cov
from nspca_core.certificates.dnn import DnnState
from nspca_core.certificates.components import _kyfan_dnn, _mix, certify_components, components_bound
from nspca_core.synthetic import planted_sparse

from tests.bruteforce import brute_opt
from tests.core.certificates.test_single import _random_psd

TINY = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _brute_components(A, ks):
    """max sum_t OPT(A on J_t) over disjoint J_t with |J_t| <= k_t, by enumerating assignments."""
    n = A.shape[0]
    c = len(ks)

    @lru_cache(maxsize=None)
    def best_on(J):
        if not J:
            return -np.inf
        sub = A[np.ix_(J, J)]
        return brute_opt(sub, len(J))[0]

    best = -np.inf
    for assign in product(range(c + 1), repeat=n):
        Js = [tuple(i for i in range(n) if assign[i] == t + 1) for t in range(c)]
        if any(len(J) > kt or not J for J, kt in zip(Js, ks)):
            continue
        best = max(best, sum(best_on(J) for J in Js))
    return best


@TINY
@given(st.integers(3, 6), st.integers(2, 3), st.integers(1, 3), st.integers(0, 2**31 - 1))
def test_bounds_above_the_best_disjoint_choice(n, c, k, seed):
    rng = np.random.default_rng(seed)
    A = _random_psd(rng, n)
    ks = [min(k, n)] * c
    if c > n:
        return
    opt = _brute_components(A, ks)
    if not np.isfinite(opt):
        return
    bounds, _ = components_bound(Cov(A=A), ks, "auto")
    scale = max(1.0, float(np.abs(A).max()))
    for name, val in bounds.items():
        assert val >= opt - 1e-9 * scale, (name, val, opt)
    # a random dual point (any N >= 0, mu, cuts) bounds it too
    N = rng.random((n, n)) * scale
    N = (N + N.T) / 2
    np.fill_diagonal(N, 0.0)
    C = rng.standard_normal((n, 2))
    st_ = DnnState(N, float(rng.random() * scale * n), C=C, w=rng.random(2) * scale)
    G = _kyfan_dnn(A, c, sum(ks), st_)
    assert G[-1] >= opt - 1e-9 * scale


@given(st.lists(st.floats(0, 10), min_size=1, max_size=6), st.floats(0, 10))
def test_mix_bounds_every_sorted_sequence_it_admits(vals, B):
    """_mix(F, B, c) >= sum(v) for any v with every v_t <= B and every prefix of sorted v <= F_j:
    in particular for F_j = the prefix sums of v itself and B = max(v)."""
    v = np.sort(np.asarray(vals))[::-1]
    F = np.cumsum(v)
    assert _mix(F, max(float(v[0]), B), v.size) >= float(v.sum()) * (1 - 1e-12)
    assert _mix(F, max(float(v[0]), B), v.size) <= F[-1] * (1 + 1e-12)


def test_planted_components_joint_ratio():
    for seed in range(3):
        X, truth = planted_sparse(seed=seed)
        X = X - X.mean(axis=0)
        for strategy in ("deflation-remove", "bipartite"):
            r = components(X, n_components=3, k=5, strategy=strategy)
            c = certify_components(X, k=5, loadings=r.loadings)
            assert c.ratio >= 0.95
            assert c.lower == pytest.approx(float(r.variance.sum()), rel=1e-9)
        # the planted components themselves
        c = certify_components(X, k=5, loadings=truth["components"])
        assert c.upper_bound >= c.lower


def test_scale_free_and_per_component_k():
    rng = np.random.default_rng(1)
    Y = rng.standard_normal((30, 8))
    A = Y.T @ Y
    L = np.zeros((8, 2))
    L[[0, 1], 0] = 1.0
    L[[2, 3, 4], 1] = 1.0
    c1 = certify_components(cov=A, k=[2, 3], loadings=L)
    c2 = certify_components(cov=A * 2.0 ** 100, k=[2, 3], loadings=L)
    assert c2.upper_bound == pytest.approx(c1.upper_bound * 2.0 ** 100, rel=1e-9)
    assert c1.ratio == pytest.approx(c2.ratio, rel=1e-9)
    c3 = certify_components(cov=A, k=3, n_components=2)
    assert np.isnan(c3.lower) and c3.upper_bound > 0


@pytest.mark.parametrize("kwargs, match", [
    (dict(k=2), "give `loadings` or `n_components`"),
    (dict(k=2, n_components=0), "must be an int >= 1"),
    (dict(k=[2, 2], n_components=3), "one per component"),
    (dict(k=2, loadings=np.ones((4, 2))), "disjoint supports"),
    (dict(k=1, loadings=np.array([[1.0, 0], [1.0, 0], [0, 1.0], [0, 0]])), "at most k=1 allowed"),
    (dict(k=2, loadings=-np.eye(4)[:, :2]), "finite and nonnegative"),
    (dict(k=2, loadings=np.eye(4)[:, [0, 0]] * [1, 0]), "column 1 is zero"),
    (dict(k=2, loadings=np.ones((3, 1))), "shape"),
    (dict(k=2, loadings=np.eye(4)[:, :2], n_components=3), "must match the columns"),
    (dict(k=2, n_components=2, effort="exact"), "'auto', 'fast' or 'full'"),
])
def test_validation(kwargs, match):
    with pytest.raises(InputError, match=match):
        certify_components(cov=np.eye(4), **kwargs)


def test_components_report_the_joint_bound_for_disjoint_strategies():
    X, _ = planted_sparse(seed=4)
    X = X - X.mean(axis=0)
    for strategy in ("deflation-remove", "bipartite"):
        r = components(X, n_components=3, k=5, strategy=strategy, certify=True)
        assert np.isfinite(r.upper_bound) and r.upper_bound >= r.total_variance
        assert r.ratio == pytest.approx(r.total_variance / r.upper_bound)
        assert r.bound_kind in ("ky-fan", "c x single", "ky-fan+single", "dnn(c)")
        assert r.ratio >= 0.95
        direct = certify_components(X, k=5, loadings=r.loadings)
        assert r.upper_bound <= direct.upper_bound * (1 + 1e-9) or r.bound_kind == direct.kind
    r = components(X, n_components=3, k=5, strategy="deflation-project", certify=True)
    assert np.isnan(r.upper_bound) and np.isnan(r.ratio)
    r = components(X, n_components=3, k=5, strategy="bipartite", certify=False)
    assert np.isnan(r.upper_bound)


def test_cli_prints_and_saves_the_joint_ratio(tmp_path, capsys):
    import json

    from nspca_core import cli

    X, _ = planted_sparse(m=60, n=12, k=3, n_components=2, seed=2)
    path = tmp_path / "x.csv"
    np.savetxt(path, X, delimiter=",")
    code = cli.main(["fit", str(path), "--k", "3", "--components", "2", "--out", str(tmp_path / "o"), "--quiet"])
    out, err = capsys.readouterr()
    assert code == 0, err
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["joint_upper_bound"] >= summary["total_variance"]
    assert summary["joint_ratio"] == pytest.approx(summary["total_variance"] / summary["joint_upper_bound"])
    assert f"joint certified ratio={summary['joint_ratio']:.4f}" in out
    assert "component 1: k=3" in out and "component 1: k=3 variance" in out
