"""Several components: bipartite matchings (Asteris et al. 2015), EM deflation and
quasi-orthogonality, Zass–Shashua jointly; the §7 counterexample."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

from nspca_core.operators.covariance import as_cov
from nspca_core._common.summary import variance_summary
from nspca_core._common.validation import InputError
from nspca_core.examples import bipartite_counterexample
from nspca_core.peers import bipartite_components, em_components, zass_components
from nspca_core.peers.bipartite import max_weight_disjoint
from tests.bruteforce import brute_opt


def brute_disjoint(A, r, s, nonneg=True):
    """max sum_j x_j^T A x_j over r unit vectors with disjoint supports of size <= s
    (nonnegative when ``nonneg``), by enumerating the supports.  r = 2 only."""
    assert r == 2
    n = A.shape[0]

    def f(I):
        I = list(I)
        if nonneg:
            return brute_opt(A[np.ix_(I, I)], len(I))[0]
        return float(np.linalg.eigvalsh(A[np.ix_(I, I)])[-1])

    best = -np.inf
    vals = {I: f(I) for size in range(1, s + 1) for I in combinations(range(n), size)}
    for I in vals:
        for J in vals:
            if not set(I) & set(J):
                best = max(best, vals[I] + vals[J])
    return best


def check_components(res, cov, k, *, disjoint, nonneg=True):
    L = res.loadings
    n, r = L.shape
    if nonneg:
        assert np.all(L >= 0)
    assert np.allclose(np.linalg.norm(L, axis=0), 1.0)
    assert all(np.count_nonzero(L[:, j]) <= k for j in range(r))
    for j in range(r):
        assert np.array_equal(res.supports[j], np.flatnonzero(L[:, j]))
    if disjoint:
        assert np.all(np.count_nonzero(L, axis=1) <= 1)
    assert len(res.results) == r and all(x.x.shape == (n,) for x in res.results)
    var, cum, add = variance_summary(cov, L)
    assert np.allclose(res.variance, var) and np.allclose(res.cumulative_variance, cum)
    assert np.allclose(res.additional_variance, add)


# ---------------------------------------------------------------- counterexample
def test_counterexample_values():
    A, known = bipartite_counterexample(0.1, 0.05)
    assert A.shape == (4, 4) and np.allclose(A, A.T)
    assert known["deflation"] == pytest.approx(1.15) and known["optimum"] == 2.0
    assert brute_disjoint(A, 2, 2) == pytest.approx(known["optimum"])


@pytest.mark.parametrize("eps,delta", [(0.1, 0.05), (0.3, 0.2), (0.01, 0.0)])
def test_bipartite_beats_deflation_on_counterexample(eps, delta):
    A, known = bipartite_counterexample(eps, delta)
    cov = as_cov(cov=A)
    bip = bipartite_components(cov, 2, 2, seed=0)
    defl = em_components(cov, 2, 2, seed=0)
    assert defl.total_variance == pytest.approx(known["deflation"])
    assert bip.total_variance == pytest.approx(known["optimum"])
    assert bip.total_variance > defl.total_variance
    check_components(bip, cov, 2, disjoint=True)


def test_counterexample_errors():
    with pytest.raises(InputError, match=r"`eps` must be a float in \(0, 1\); got 1.5"):
        bipartite_counterexample(1.5)
    with pytest.raises(InputError, match=r"`delta` must be a float in \[0, 1 - eps\)"):
        bipartite_counterexample(0.5, 0.6)


# ---------------------------------------------------------------- Alg. 2 and brute force
def test_matching_equals_enumeration():
    rng = np.random.default_rng(0)
    for _ in range(40):
        n, r, s = rng.integers(3, 7), 2, int(rng.integers(1, 3))
        Wt = rng.random((n, r)) ** 3
        if rng.random() < 0.3:
            Wt[:, 1] = Wt[:, 0]  # ties between the columns
        sets, val = max_weight_disjoint(Wt, s)
        best = -np.inf
        # every assignment of features to {none, 0, 1} with at most s per component
        for labels in np.ndindex(*([3] * n)):
            lab = np.array(labels)
            if (lab == 1).sum() <= s and (lab == 2).sum() <= s:
                best = max(best, Wt[lab == 1, 0].sum() + Wt[lab == 2, 1].sum())
        assert val == pytest.approx(best)
        assert not set(sets[0].tolist()) & set(sets[1].tolist())
        assert all(len(I) <= s for I in sets)


@pytest.mark.parametrize("nonneg", [True, False])
def test_bipartite_equals_brute_force_tiny(nonneg):
    """n <= 8, r = 2, exact low rank d = 2: with polishing the sampled net finds the optimum."""
    rng = np.random.default_rng(11 if nonneg else 12)
    for trial in range(6):
        n, s = int(rng.integers(5, 8)), int(rng.integers(2, 4))
        V = rng.standard_normal((n, 2))
        if nonneg:
            V[:, 0] = np.abs(V[:, 0])
        A = V @ V.T
        cov = as_cov(cov=A)
        res = bipartite_components(cov, 2, s, d=2, nonneg=nonneg, samples=3000, seed=trial)
        ref = brute_disjoint(A, 2, s, nonneg=nonneg)
        assert res.total_variance == pytest.approx(ref, rel=1e-9), (trial, n, s)
        check_components(res, cov, s, disjoint=True, nonneg=nonneg)


def test_bipartite_never_above_brute_force_full_rank():
    rng = np.random.default_rng(3)
    for trial in range(4):
        n, s = 6, 2
        B = rng.standard_normal((n, n))
        A = B @ B.T
        res = bipartite_components(as_cov(cov=A), 2, s, seed=trial)
        assert res.total_variance <= brute_disjoint(A, 2, s) * (1 + 1e-9)


def test_bipartite_info_and_determinism():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((30, 10))
    cov = as_cov(X - X.mean(axis=0))
    a = bipartite_components(cov, 3, 3, seed=5, samples=50)
    b = bipartite_components(cov, 3, 3, seed=5, samples=50)
    assert np.array_equal(a.loadings, b.loadings)
    assert a.info["samples"] == 50 and a.info["sign_patterns"] == 8
    assert a.info["net_size"] == pytest.approx((1 + 4 / 0.1) ** 9)
    assert a.info["pruned"] + a.info["assignments"] + a.info["disjoint_shortcuts"] == 50 * 8
    assert a.total_variance >= a.info["objective_before_polish"] - 1e-12
    check_components(a, cov, 3, disjoint=True)
    thin = as_cov(rng.standard_normal((5, 10)))
    check_components(bipartite_components(thin, 2, 4, samples=30), thin, 4, disjoint=True)


# ---------------------------------------------------------------- EM and Zass components
def test_em_components_deflation_and_quasi_orthogonal():
    rng = np.random.default_rng(6)
    X = rng.standard_normal((50, 12)) @ rng.standard_normal((12, 12))
    cov = as_cov(X - X.mean(axis=0))
    d = em_components(cov, 3, 4, seed=1)
    assert d.strategy == "deflation-remove"
    check_components(d, cov, 4, disjoint=True)
    assert np.array_equal(d.loadings, em_components(cov, 3, 4, seed=1).loadings)
    for angle in (30.0, 60.0):
        q = em_components(cov, 3, 4, seed=1, min_angle=angle)
        assert q.strategy == "quasi-orthogonal"
        check_components(q, cov, 4, disjoint=False)
        G = q.loadings.T @ q.loadings
        off = G[~np.eye(3, dtype=bool)]
        assert np.all(off <= np.cos(np.deg2rad(angle)) + 1e-9)
    s = em_components(cov, 2, 4, nonneg=False, seed=1)
    assert s.strategy == "deflation-project"
    check_components(s, cov, 4, disjoint=False, nonneg=False)
    # Mackey's projection deflation: component 2 was solved on (I - x1 x1^T) A (I - x1 x1^T)
    x1, x2 = s.loadings.T
    P = np.eye(12) - np.outer(x1, x1)
    assert s.results[1].variance == pytest.approx(x2 @ P @ cov.dense() @ P @ x2, rel=1e-9)


def test_zass_components_feasible():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((40, 10)) @ rng.standard_normal((10, 10))
    cov = as_cov(X - X.mean(axis=0))
    z = zass_components(cov, 2, seed=0)
    check_components(z, cov, 10, disjoint=False)
    assert np.array_equal(z.loadings, zass_components(cov, 2, seed=0).loadings)


def test_components_errors():
    cov = as_cov(cov=np.eye(4))
    with pytest.raises(InputError, match=r"`n_components` must be an int in \[1, 4\]; got 5"):
        bipartite_components(cov, 5, 1)
    with pytest.raises(InputError, match=r"`eps` must be a float in \(0.0, 1.0\]"):
        bipartite_components(cov, 2, 1, eps=0)
    with pytest.raises(InputError, match=r"`min_angle` must be a float in \(0.0, 90.0\]"):
        em_components(cov, 2, 1, min_angle=120)
    # each takes 2 features: fewer components, said as components() says it (the shared remove loop)
    few = em_components(as_cov(cov=np.ones((4, 4)) + np.eye(4)), 3, 2)
    assert few.n_components == 2 and len(few.results) == 2
    assert few.info["stopped_early"].startswith("all 4 features were used by the first 2 components")
    assert "2 of the 3 components asked for" in few.summary
    with pytest.raises(InputError, match="`Wt` must be nonnegative"):
        max_weight_disjoint(-np.ones((3, 2)), 1)
