"""Exploration helpers (spannogram curves d=2, cells d=3) against brute force."""

import numpy as np
import pytest

from nspca_core import InputError, spannogram_cells_d3, spannogram_curves_d2, topk_nonneg
from nspca_core.explore.d3 import _sph
from nspca_core.explore.supports import _pd_small
from tests.bruteforce import brute_opt_lowrank


def _supports_near(V, c, k, radius, count=24, rng=None):
    """Candidate supports I_k^+(±V c') at random points c' within `radius` of c (as tuples)."""
    rng = rng or np.random.default_rng(0)
    out = set()
    for _ in range(count):
        p = c + radius * rng.standard_normal(c.size)
        v = V @ p
        out.add((tuple(topk_nonneg(v, k)), tuple(topk_nonneg(-v, k))))
    return out


# ----------------------------------------------------------------------------- d = 2
def test_d2_optimum_matches_brute_force():
    rng = np.random.default_rng(0)
    for _ in range(60):
        n = int(rng.integers(1, 8))
        V = rng.standard_normal((n, 2))
        k = int(rng.integers(1, n + 1))
        r = spannogram_curves_d2(V, k, num=61)  # coarse grid: the crossing midpoints complete it
        opt, xo = brute_opt_lowrank(V, k)
        assert r.optimum_value == pytest.approx(opt, rel=1e-9, abs=1e-12)
        assert any(np.array_equal(s, np.flatnonzero(xo)) for s in r.supports) or \
            r.optimum_value >= opt * (1 - 1e-9)


def test_d2_degenerate_rows_are_feasible_and_bounded():
    rng = np.random.default_rng(1)
    for _ in range(30):
        n = int(rng.integers(3, 8))
        V = rng.standard_normal((n, 2))
        V[1] = 0.0
        V[2] = V[0]
        k = int(rng.integers(1, n + 1))
        r = spannogram_curves_d2(V, k, num=91)
        opt, _ = brute_opt_lowrank(V, k)
        assert r.optimum_value <= opt * (1 + 1e-9) + 1e-12
        assert r.optimum_value == pytest.approx(opt, rel=1e-9, abs=1e-12)
        X = r.support_x
        assert (X >= 0).all() and np.allclose(np.linalg.norm(X, axis=1), 1.0)
        for s, x in zip(r.supports, X):
            assert set(np.flatnonzero(x)) <= set(s.tolist())


def test_d2_fields_consistent():
    rng = np.random.default_rng(2)
    n, k = 9, 3
    V = rng.standard_normal((n, 2))
    r = spannogram_curves_d2(V, k, num=181)
    assert r.phi.shape == (181,) and r.phi[-1] == pytest.approx(np.pi / 2) and r.phi[0] > -np.pi / 2
    assert r.curves.shape == (n + 1, 181) and not r.curves[n].any()
    assert np.allclose(r.curves[:n], V @ np.vstack([np.sin(r.phi), np.cos(r.phi)]))
    for g in range(0, 181, 7):
        v = r.curves[:n, g]
        assert np.array_equal(r.supports[r.support_pos[g]], topk_nonneg(v, k))
        assert np.array_equal(r.supports[r.support_neg[g]], topk_nonneg(-v, k))
        assert r.envelope_pos[g] == pytest.approx(np.sort(v)[::-1][k - 1])
        assert r.envelope_neg[g] == pytest.approx(np.sort(-v)[::-1][k - 1])
    # every pair of the n + 1 curves crosses once on the half circle (general position)
    assert r.intersections_phi.size == (n + 1) * n // 2
    W = np.vstack([V, np.zeros(2)])
    c = np.vstack([np.sin(r.intersections_phi), np.cos(r.intersections_phi)])
    vi = np.einsum("pj,jp->p", W[r.intersections_i], c)
    vj = np.einsum("pj,jp->p", W[r.intersections_j], c)
    assert np.allclose(vi, vj, atol=1e-12) and np.allclose(vi, r.intersections_value, atol=1e-12)
    assert np.all((r.intersections_phi > -np.pi / 2) & (r.intersections_phi <= np.pi / 2))
    assert np.all(np.diff(r.intersections_phi) >= 0)
    assert np.allclose(r.support_values, np.sum((r.support_x @ V) ** 2, axis=1))
    assert r.optimum_value == r.support_values.max()


def test_d2_change_flags_match_perturbation():
    rng = np.random.default_rng(3)
    V = rng.standard_normal((8, 2))
    r = spannogram_curves_d2(V, 3)
    for p in range(r.intersections_phi.size):
        f = r.intersections_phi[p]
        before, after = (V @ np.array([np.sin(f + s), np.cos(f + s)]) for s in (-1e-7, 1e-7))
        pos = not np.array_equal(topk_nonneg(before, 3), topk_nonneg(after, 3))
        neg = not np.array_equal(topk_nonneg(-before, 3), topk_nonneg(-after, 3))
        assert r.changes_pos[p] == pos and r.changes_neg[p] == neg
    assert r.changes.any() and not r.changes.all()


def test_d2_identical_rows_do_not_cross():
    V = np.array([[1.0, 2.0], [1.0, 2.0], [-1.0, 0.5]])
    r = spannogram_curves_d2(V, 1, num=11)
    pairs = set(zip(r.intersections_i.tolist(), r.intersections_j.tolist()))
    assert (0, 1) not in pairs and (0, 2) in pairs and (2, 3) in pairs


# ----------------------------------------------------------------------------- d = 3
def test_d3_optimum_matches_brute_force():
    rng = np.random.default_rng(4)
    for _ in range(30):
        n = int(rng.integers(1, 7))
        V = rng.standard_normal((n, 3))
        k = int(rng.integers(1, n + 1))
        r = spannogram_cells_d3(V, k, grid=15)  # coarse grid: the vertex sectors complete it
        opt, _ = brute_opt_lowrank(V, k)
        assert r.optimum_value == pytest.approx(opt, rel=1e-9, abs=1e-12)


def test_d3_cells_and_vertices_consistent():
    rng = np.random.default_rng(5)
    n, k = 7, 2
    V = rng.standard_normal((n, 3))
    r = spannogram_cells_d3(V, k, grid=21)
    assert r.cells_pos.shape == (21, 21) and r.vertices_complete
    for i1 in range(0, 21, 4):
        for i2 in range(0, 21, 5):
            c = _sph(r.phi1[i1], r.phi2[i2])
            assert np.array_equal(r.supports[r.cells_pos[i1, i2]], topk_nonneg(V @ c, k))
            assert np.array_equal(r.supports[r.cells_neg[i1, i2]], topk_nonneg(-(V @ c), k))
    # vertices: three rows (row n = zero) agree there, and c = c(φ1, φ2)
    W = np.vstack([V, np.zeros(3)])
    C = r.vertices_c
    vals = np.einsum("ptj,pj->pt", W[r.vertices_rows], C)
    assert np.allclose(vals, vals[:, :1], atol=1e-12) and np.allclose(vals[:, 0], r.vertices_value)
    assert np.allclose(np.linalg.norm(C, axis=1), 1.0)
    assert np.allclose(_sph(r.vertices_phi1, r.vertices_phi2).T, C, atol=1e-12)
    assert r.vertices_rows.shape[0] == (n + 1) * n * (n - 1) // 6  # general position: all isolated
    # change flags agree with sampling the supports around each vertex
    rng2 = np.random.default_rng(6)
    varies = np.array([len(_supports_near(V, C[p], k, 1e-7, rng=rng2)) > 1 for p in range(C.shape[0])])
    assert not (varies & ~r.vertices_changes).any()
    # sampling may miss a thin sector, so the converse is checked on the whole, not per vertex
    flagged = r.vertices_changes.sum()
    assert flagged >= 5 and (varies & r.vertices_changes).sum() >= 0.9 * flagged
    assert np.allclose(r.support_values, np.sum((r.support_x @ V) ** 2, axis=1))


def test_d3_degenerate_and_cap():
    rng = np.random.default_rng(7)
    V = rng.standard_normal((6, 3))
    V[1] = 0.0
    V[2] = V[0]
    r = spannogram_cells_d3(V, 3, grid=15)
    opt, _ = brute_opt_lowrank(V, 3)
    assert r.optimum_value <= opt * (1 + 1e-9)
    assert r.optimum_value == pytest.approx(opt, rel=1e-9)
    # every listed vertex is isolated: its cross product was nonzero
    assert np.allclose(np.linalg.norm(r.vertices_c, axis=1), 1.0)
    capped = spannogram_cells_d3(rng.standard_normal((12, 3)), 2, grid=9, max_triples=20)
    assert not capped.vertices_complete and capped.vertices_rows.shape[0] <= 20


# ----------------------------------------------------------------------------- (P_d) fallback
@pytest.mark.parametrize("d", [2, 3])
def test_pd_small_against_sphere_sampling(d):
    rng = np.random.default_rng(8)
    S = rng.standard_normal((200_000, d))
    S /= np.linalg.norm(S, axis=1)[:, None]
    for trial in range(20):
        B = rng.standard_normal((d, d))
        Q = B @ B.T
        R = rng.standard_normal((int(rng.integers(1, 5)), d))
        if trial == 0:
            R = np.vstack([R[:1], -R[:1], R[:1] + 0.1 * rng.standard_normal(d)])  # tiny or empty cone
        c = _pd_small(Q, R)
        feas = np.all(S @ R.T >= 0, axis=1)
        if c is None:
            assert feas.sum() == 0
            continue
        assert np.all(R @ c >= -1e-9) and np.isclose(np.linalg.norm(c), 1.0)
        if feas.any():
            sampled = np.max(np.einsum("ij,jk,ik->i", S[feas], Q, S[feas]))
            assert c @ Q @ c >= sampled - 1e-9
            assert c @ Q @ c <= sampled + 0.05 * np.trace(Q)  # dense sampling gets close


# ----------------------------------------------------------------------------- validation
@pytest.mark.parametrize("f, V, kw, msg", [
    (spannogram_curves_d2, np.ones((4, 3)), dict(k=1), r"`V` must have shape \(n, 2\)"),
    (spannogram_curves_d2, np.ones((4, 2)), dict(k=5), r"`k` must be an int in \[1, n_features=4\]; got 5"),
    (spannogram_curves_d2, np.ones((4, 2)), dict(k=1, num=1), r"`num` must be an int >= 2; got 1"),
    (spannogram_cells_d3, np.ones((4, 2)), dict(k=1), r"`V` must have shape \(n, 3\)"),
    (spannogram_cells_d3, np.ones((4, 3)), dict(k=1, grid=0), r"`grid` must be an int"),
])
def test_explore_validation(f, V, kw, msg):
    with pytest.raises(InputError, match=msg):
        f(V, **kw)


def test_same_values_with_and_without_solve_pd(monkeypatch):
    rng = np.random.default_rng(9)
    V2, V3 = rng.standard_normal((8, 2)), rng.standard_normal((6, 3))
    with_pd = spannogram_curves_d2(V2, 3, num=41), spannogram_cells_d3(V3, 2, grid=11)
    monkeypatch.setitem(__import__("sys").modules, "nspca_core.spannogram.constrained", None)  # import fails
    without = spannogram_curves_d2(V2, 3, num=41), spannogram_cells_d3(V3, 2, grid=11)
    for a, b in zip(with_pd, without):
        assert b.info["pd_solver"] == "closed-form"
        assert np.allclose(a.support_values, b.support_values, rtol=1e-9, atol=1e-12)
