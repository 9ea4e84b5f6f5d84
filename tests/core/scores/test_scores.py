"""Nonnegative-score PCA (issue 6): nspca_core.scores and nspca_core.scores.compare."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.linalg import expm

from nspca_core import InputError, nonneg_scores
from nspca_core.scores import geometry as S  # the pieces of the search, checked one by one
from nspca_core.scores import compare as sc


# --------------------------------------------------------------------------- designs

def product_design(p, m, seed):
    """All m^p combinations of p independent 1-D samples, each containing 0.

    A full product has *exactly* zero sample covariance between coordinates;
    scaled to unit variance, its sample covariance is exactly I, so the
    whitened data is an exact rotation of X.  The zeros put points on every
    axis: X is wedged in and the rotation is unique up to permutation.
    """
    rng = np.random.default_rng(seed)
    cols = []
    for _ in range(p):
        s = np.r_[0.0, rng.uniform(0.2, 3.0, m - 1)]
        cols.append(s)
    X = np.array(list(itertools.product(*cols)))
    return X / X.std(axis=0, ddof=1)


def random_mixing(p, seed):
    rng = np.random.default_rng(seed)
    return np.eye(p) + 0.4 * rng.standard_normal((p, p))


def perm_error(A_hat, A):
    return sc.rate_error(A_hat, A)


# --------------------------------------------------------------------------- recovery

@pytest.mark.parametrize("p,m,seed", [(2, 12, 0), (3, 7, 1), (4, 4, 2)])
def test_exact_recovery_noise_free_wedged_in(p, m, seed):
    X = product_design(p, m, seed)
    assert np.allclose(np.cov(X, rowvar=False), np.eye(p), atol=1e-12)
    A = random_mixing(p, seed)
    Y = X @ A.T
    res = nonneg_scores(Y, random_state=0)
    assert res.status == "zero-negativity" and res.converged
    assert res.negativity <= 1e-8
    # Â = A up to a permutation of columns
    assert perm_error(res.A, A) < 1e-6
    # Y = W Dᵀ exactly; scores nonnegative; λ ordered
    assert np.allclose(res.W @ res.D.T, Y, atol=1e-9 * np.abs(Y).max())
    assert res.W.min() >= -1e-8
    assert np.all(np.diff(res.lambdas) <= 1e-12)
    assert np.allclose(np.linalg.norm(res.D, axis=0), 1.0)


def test_zero_negativity_reached_with_points_on_every_axis():
    # the cloud starts far from the orthant (A mixes signs), yet S(B̂) = 0 is reached
    X = product_design(3, 8, 5)
    A = np.array([[1.0, -0.8, 0.3], [0.5, 1.0, -0.9], [-0.7, 0.2, 1.0]])
    res = nonneg_scores(X @ A.T, random_state=3)
    assert res.history[0] > 0.1
    assert res.negativity <= 1e-8
    assert res.status == "zero-negativity"
    assert res.history[-1] <= 1e-8 and res.history[0] > 1e3 * res.history[-1]


def test_n_components_lower_than_p_matches_recovery():
    # a rank-3 model observed in 5 variables: whitening on the top 3 PCs recovers A
    X = product_design(3, 6, 7)
    A = np.random.default_rng(7).uniform(0.0, 1.0, (5, 3))
    res = nonneg_scores(X @ A.T, n_components=3)
    assert res.A.shape == (5, 3) and res.W.shape == (X.shape[0], 3) and res.B.shape == (3, 3)
    assert perm_error(res.A, A) < 1e-6


def test_local_minimum_matches_brute_force_in_two_dimensions():
    # p = 2: rotations are angles; a fine grid is the obviously-correct reference
    rng = np.random.default_rng(11)
    Y = rng.standard_normal((60, 2)) + np.array([0.3, 0.1])   # not the model: min S* > 0
    res = nonneg_scores(Y, selection="none", restarts=5, random_state=1)
    U = res.whitened

    def S_of(th):
        c, s = np.cos(th), np.sin(th)
        # Z = U Bᵀ with B = [[c, -s], [s, c]]
        z1 = U[:, :1] * c - U[:, 1:] * s
        z2 = U[:, :1] * s + U[:, 1:] * c
        return np.maximum(-z1.min(axis=0), -z2.min(axis=0))

    th = np.linspace(-np.pi, np.pi, 4001)
    for _ in range(4):                                     # grid, then zoom in around its minimum
        k = int(np.argmin(S_of(th)))
        th = np.linspace(th[max(k - 1, 0)], th[min(k + 1, th.size - 1)], 2001)
    brute = S_of(th).min()
    assert brute > 0
    assert res.negativity == pytest.approx(brute, abs=1e-8)


# --------------------------------------------------------------------------- descent direction

def _rates(Z, L, ii, jj):
    """d(-Z_ij)/dt along e^{tL}: analytic and by central differences with expm."""
    analytic = -(Z[ii] @ L.T)[np.arange(ii.size), jj]
    h = 1e-6
    Zp = Z @ expm(h * L).T
    Zm = Z @ expm(-h * L).T
    fd = -(Zp[ii, jj] - Zm[ii, jj]) / (2 * h)
    return analytic, fd


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), r=st.integers(3, 6), k=st.integers(1, 3),
       same_component=st.booleans())
def test_multi_active_direction_lowers_every_active_maximum(seed, r, k, same_component):
    # k <= r(r-1)/2 tied maxima (more ties than dimensions may have no common descent)
    rng = np.random.default_rng(seed)
    n = 12
    Z = rng.uniform(0.2, 2.0, (n, r))
    ii = rng.choice(n, size=k, replace=False)
    jj = np.full(k, rng.integers(r)) if same_component else rng.choice(r, size=k, replace=False)
    Z[ii, jj] = -1.0                                  # k tied maxima of -Z, S* = 1
    pairs = S._pairs(r)
    assert k <= pairs[0].size
    ell = S._paper_direction(Z, ii, jj, pairs)
    assume_ok = ell is not None
    if not assume_ok:                                 # singular E: the LP fallback must do it
        G = -S._z_rows(Z, ii, jj, pairs)
        ell, rate = S._lp_model([(1.0, np.zeros(k), G)], pairs[0].size, 1.0)
        assert ell is not None and rate < 0
    L = S._skew(ell, r, pairs)
    assert np.allclose(L, -L.T)
    assert np.sqrt(2) * np.linalg.norm(ell) == pytest.approx(1.0)
    analytic, fd = _rates(Z, L, ii, jj)
    assert np.allclose(analytic, fd, atol=1e-6)
    assert np.all(analytic < -1e-8)                   # every active maximum falls
    if assume_ok and k > 1:
        assert np.allclose(analytic, analytic[0], rtol=1e-8)   # ... at the same rate
    # and S* itself decreases along the geodesic for a small step
    t = 1e-4
    assert (-(Z @ expm(t * L).T)).max() < 1.0


def test_lp_model_when_ties_outnumber_dimensions():
    # k > r(r-1)/2 gradients: the LP finds the common descent when one exists ...
    rng = np.random.default_rng(8)
    q = 3
    for _ in range(20):
        target = rng.standard_normal(q)
        G = rng.standard_normal((7, q))
        G[G @ target > 0] *= -1                       # plant: every row decreases along target
        ell, rate = S._lp_model([(1.0, np.zeros(7), G)], q, 1.0)
        assert ell is not None and rate < 0
        assert np.all(G @ ell < 0)
        # with gaps, pieces below the max may rise but not overtake it (to first order)
        gaps = -rng.uniform(0, 0.5, 7)
        tau = 0.3
        ell, rate = S._lp_model([(1.0, gaps, G)], q, tau)
        x = ell / np.abs(ell).max()
        assert np.all(gaps + tau * G @ x <= rate + 1e-9) and rate < 0
    # ... and reports none when 0 is in the convex hull of the gradients
    G = np.array([[1.0, 0.5, 0.0], [-1.0, -0.5, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, -1.0]])
    ell, rate = S._lp_model([(1.0, np.zeros(4), G)], q, 1.0)
    assert ell is None or rate >= -1e-12


def test_paper_E_equals_F_plus_diag_b():
    # distinct components j_m: E_lm = v_{m,j_l} v_{l,j_m} (l != m), E_ll = v_{l,j_l}^2 - ||v_l||^2
    rng = np.random.default_rng(4)
    r, n = 5, 9
    Z = rng.uniform(-1, 1, (n, r))
    ii, jj = np.array([1, 4, 6]), np.array([0, 2, 3])
    V = -Z[ii]                                       # v_m = -Z_{i_m}
    F = V[:, jj].T * V[:, jj]                         # F[l, m] = v_m[j_l] * v_l[j_m]
    b = -np.sum(V ** 2, axis=1)
    E_paper = F + np.diag(b)
    pairs = S._pairs(r)
    G = -S._z_rows(Z, ii, jj, pairs)
    assert np.allclose(-(G @ G.T), E_paper)
    # single active entry: L = Q - Qᵀ with Q's j0-th column = v
    ell = S._paper_direction(Z, ii[:1], jj[:1], pairs)
    Q = np.zeros((r, r))
    Q[:, jj[0]] = V[0]
    Lp = Q - Q.T
    assert np.allclose(S._skew(ell, r, pairs), Lp / np.linalg.norm(Lp))


def test_point_on_negative_axis_is_a_flat_spot():
    # the single-entry direction vanishes: the estimator must escape with a random rotation
    Z = np.array([[-1.0, 0.0, 0.0], [0.5, 0.5, 0.5]])
    pairs = S._pairs(3)
    assert S._paper_direction(Z, np.array([0]), np.array([0]), pairs) is None


# --------------------------------------------------------------------------- invariants

def test_rotation_orthogonal_and_history():
    sim = sc.simulate_case(2, p=5, n=300, seed=1)
    res = nonneg_scores(sim.Y, random_state=0, max_frames=20)
    I = np.eye(5)
    assert np.abs(res.B.T @ res.B - I).max() <= 1e-10
    assert len(res.history_B) <= 21
    for Bt in res.history_B:
        assert np.abs(Bt.T @ Bt - I).max() <= 1e-10
    assert res.history.size == res.iterations + 1 or res.history.size == res.iterations + 2
    assert np.all(np.diff(res.history[res.history_phase == 1]) <= 1e-12) or res.info["escapes"] > 0
    assert np.allclose(res.history_B[-1][res.order], res.B)
    assert res.negativity == pytest.approx(res.history[-1], abs=1e-12)
    # the final rotation explains the data: Y = W Dᵀ
    assert np.allclose(res.W @ res.D.T, sim.Y, atol=1e-9 * np.abs(sim.Y).max())


def test_selection_sum_keeps_zero_negativity_and_raises_the_sum():
    sim = sc.simulate_case(3, p=4, n=300, seed=4)
    none = nonneg_scores(sim.Y, selection="none")
    res = nonneg_scores(sim.Y, selection="sum")
    assert none.status == res.status == "zero-negativity"
    assert not np.any(none.history_phase == 2)
    two = res.history_phase == 2
    assert two.any()
    assert np.all(res.history[two] <= res.params["tol"])            # S = 0 throughout phase 2
    sums = res.history_sum[np.r_[np.flatnonzero(two)[0] - 1, np.flatnonzero(two)]]
    assert np.all(np.diff(sums) > 0)                                   # Σ Z rises at every step
    assert res.history_sum[-1] > none.history_sum[-1]


def test_determinism_under_seed():
    sim = sc.simulate_case(3, p=4, n=200, seed=2)
    a = nonneg_scores(sim.Y, random_state=5)
    b = nonneg_scores(sim.Y, random_state=5)
    for f in ("A", "D", "W", "B", "lambdas", "history"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f
    c = nonneg_scores(sim.Y, random_state=np.random.default_rng(5))
    assert np.array_equal(a.A, c.A)


def test_callback_and_penalized_variant():
    sim = sc.simulate_case(2, p=3, n=100, seed=0)
    calls = []
    plain = nonneg_scores(sim.Y)
    pen = nonneg_scores(sim.Y, penalty=5.0, callback=lambda d, t: calls.append((d, t)))
    assert calls and all(d <= t for d, t in calls)
    assert pen.info["a_negativity"] <= plain.info["a_negativity"] + 1e-9
    assert np.abs(pen.B.T @ pen.B - np.eye(3)).max() <= 1e-10


# --------------------------------------------------------------------------- errors

@pytest.mark.parametrize("Y,kw,match", [
    (np.ones((3, 5)), {}, r"`Y` must have at least as many samples .* got n=3, p=5"),
    (np.c_[np.arange(10.0), 2 * np.arange(10.0)], {}, r"sample covariance of `Y` must be nonsingular"),
    (np.array([[1.0, np.nan], [2.0, 1.0], [0.0, 3.0]]), {}, r"`Y` must be finite"),
    (np.random.default_rng(0).random((10, 3)), {"n_components": 4},
     r"`n_components` must be an int in \[1, 3\]; got 4"),
    (np.random.default_rng(0).random((10, 3)), {"selection": "best"}, r"`selection` must be one of"),
    (np.random.default_rng(0).random((10, 3)), {"penalty": -1.0}, r"`penalty` must be a finite float"),
    (np.random.default_rng(0).random((10, 3)), {"tol": 0}, r"`tol` must be a float in \(0, 1\)"),
    (np.random.default_rng(0).random((10, 3)), {"max_iter": 0}, r"`max_iter` must be an int"),
    (np.random.default_rng(0).random((10, 3)), {"seed": "a"}, r"`seed` must be None, an int >= 0"),
    (np.random.default_rng(0).random((10, 3)), {"callback": 3}, r"`callback` must be callable"),
])
def test_errors(Y, kw, match):
    with pytest.raises(ValueError, match=match):
        nonneg_scores(Y, **kw)
    with pytest.raises(InputError):
        nonneg_scores(Y, **kw)


def test_compare_errors():
    with pytest.raises(InputError, match="`case` must be one of 1, 2, 3"):
        sc.simulate_case(4)
    with pytest.raises(InputError, match="`c` must be a finite float > 0"):
        sc.power_sources(10, 3, c=0.0)
    sim = sc.simulate_case(1, p=3, n=50)
    with pytest.raises(InputError, match="`methods` must be drawn from"):
        sc.compare_methods(sim.Y, sim.D, sim.W, methods=("nspca", "foo"))
    with pytest.raises(InputError, match="`D_true` must be"):
        sc.compare_methods(sim.Y, sim.D[:2], sim.W)


# --------------------------------------------------------------------------- comparisons

def test_simulated_cases_match_first_shares():
    for case, share in sc.CASES.items():
        sim = sc.simulate_case(case, p=10, n=50, seed=0)
        assert sim.lambdas[0] / sim.lambdas.sum() == pytest.approx(share)
        assert np.allclose(np.linalg.norm(sim.A, axis=0) ** 2, sim.lambdas)
        assert np.allclose(sim.W @ sim.D.T, sim.Y)
        assert sim.X.min() >= 0


def test_power_sources_unit_variance():
    for c in (0.5, 1.0, 3.0):
        X = sc.power_sources(200_000, 1, c, seed=0)
        assert X.min() >= 0
        assert X.var() == pytest.approx(1.0, rel=0.02)
    # c = 1 is uniform on [0, √12]
    assert sc.power_sources(50_000, 1, 1.0, seed=1).max() <= np.sqrt(12)


def test_match_columns_recovers_permutation_and_sign():
    rng = np.random.default_rng(0)
    D = np.abs(rng.standard_normal((5, 4)))
    W = rng.random((100, 4))
    perm = np.array([2, 0, 3, 1])
    Dm, Wm, got = sc.match_columns(D[:, perm], W[:, perm], D, W)
    assert np.allclose(Dm, D) and np.allclose(Wm, W)
    flip = np.array([1, -1, 1, -1.0])
    Dm, Wm, _ = sc.match_columns(D[:, perm] * flip, W[:, perm] * flip, D, W, signed=True)
    assert np.allclose(Dm, D) and np.allclose(Wm, W)
    A = rng.random((3, 3))
    assert sc.rate_error(A[:, [2, 0, 1]], A) == pytest.approx(0.0, abs=1e-15)


def test_nonneg_ica_recovers_product_design():
    X = product_design(3, 6, 3)
    A = random_mixing(3, 3)
    res = sc.nonneg_ica(X @ A.T)
    assert res.method == "nonneg-ica"
    assert perm_error(res.A, A) < 1e-3
    assert np.abs(res.B.T @ res.B - np.eye(3)).max() <= 1e-10


def test_compare_methods_small_case():
    sim = sc.simulate_case(2, p=4, n=300, seed=0)
    cmp_ = sc.compare_methods(sim.Y, sim.D, sim.W, methods=("nspca", "nica", "pca"))
    t = cmp_.table.set_index("method")
    assert set(t.index) == {"nspca", "nica", "pca"}
    assert t.loc["nspca", "D_diff"] < t.loc["pca", "D_diff"]
    assert t.loc["nspca", "W_diff"] < t.loc["pca", "W_diff"]
    assert cmp_.D["nspca"].shape == sim.D.shape


def test_rate_study_shrinks_with_n():
    df = sc.rate_study(ns=(100, 1000), reps=3, seed=0)
    assert list(df["n"]) == [100, 1000]
    assert df["p95"].iloc[1] < df["p95"].iloc[0]
    assert df["paper"].iloc[0] == pytest.approx(0.20)
