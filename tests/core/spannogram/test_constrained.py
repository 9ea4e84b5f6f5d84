"""(P_d) = max c^T Q c over unit c with R c >= 0: solve_pd and pd2_geometry."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core import InputError, pd2_geometry, solve_pd

FEAS = 1e-9


def _circle(num=40_000):
    phi = np.linspace(-np.pi, np.pi, num, endpoint=False)
    return np.stack([np.cos(phi), np.sin(phi)], axis=1)


def _sphere(num=60_000):
    # Fibonacci lattice: spacing ~ sqrt(4 pi / num)
    i = np.arange(num) + 0.5
    z = 1 - 2 * i / num
    phi = np.pi * (1 + 5 ** 0.5) * i
    rr = np.sqrt(1 - z * z)
    return np.stack([rr * np.cos(phi), rr * np.sin(phi), z], axis=1)


CIRCLE = _circle()
SPHERE = _sphere()


def _random_problem(rng, d):
    B = rng.normal(size=(d, d))
    Q = B + B.T if rng.random() < 0.3 else B @ B.T  # indefinite sometimes
    k = int(rng.integers(0, 6))
    R = rng.normal(size=(k, d))
    roll = rng.random()
    if k >= 2 and roll < 0.2:
        R[1] = -2.0 * R[0]  # antiparallel pair: feasible set inside a hyperplane
    elif k >= 2 and roll < 0.4:
        R[1] = 3.0 * R[0]  # parallel duplicate
    if k >= 1 and rng.random() < 0.2:
        R[-1] = 0.0  # zero row constrains nothing
    if rng.random() < 0.15:
        Q = np.eye(d) * rng.normal()  # fully repeated eigenvalue
    return Q, R


def _check_against_samples(Q, R, pts, lipschitz_step):
    c = solve_pd(Q, R)
    if R.shape[0]:
        ok = (pts @ R.T >= 0).all(axis=1)
    else:
        ok = np.ones(pts.shape[0], bool)
    if c is None:
        assert not ok.any(), "solve_pd said empty but sampled feasible points exist"
        return None
    assert np.isclose(np.linalg.norm(c), 1.0)
    if R.shape[0]:
        rn = np.linalg.norm(R, axis=1)
        assert (R @ c >= -FEAS * np.maximum(rn, 1)).all()
    val = c @ Q @ c
    if ok.any():
        vals = np.einsum("ij,jk,ik->i", pts[ok], Q, pts[ok])
        scale = np.abs(np.linalg.eigvalsh(Q)).max() + 1e-300
        assert val >= vals.max() - 1e-9 * scale  # exact is never beaten by a sample
        # a full-dimensional feasible set is sampled densely: the optimum is nearly attained
        if ok.mean() > 1e-3:
            assert val <= vals.max() + 4 * lipschitz_step * scale + 1e-12
    return c


@pytest.mark.parametrize("seed", range(4))
def test_solve_pd_d2_matches_dense_circle(seed):
    rng = np.random.default_rng(seed)
    step = 2 * np.pi / CIRCLE.shape[0]
    for _ in range(100):
        Q, R = _random_problem(rng, 2)
        _check_against_samples(Q, R, CIRCLE, step)


@pytest.mark.parametrize("seed", range(3))
def test_solve_pd_d3_matches_dense_sphere(seed):
    rng = np.random.default_rng(100 + seed)
    step = np.sqrt(4 * np.pi / SPHERE.shape[0])
    for _ in range(60):
        Q, R = _random_problem(rng, 3)
        _check_against_samples(Q, R, SPHERE, step)


def test_solve_pd_d1():
    assert solve_pd([[2.0]], [[1.0]]) == pytest.approx([1.0])
    assert solve_pd([[2.0]], [[-1.0]]) == pytest.approx([-1.0])
    assert solve_pd([[2.0]], [[1.0], [-3.0]]) is None
    assert solve_pd([[2.0]], [[0.0]]) is not None


def test_solve_pd_degenerate_cones_d2():
    Q = np.array([[1.0, 0.0], [0.0, 5.0]])
    # a single feasible ray: c1 = 0 and c2 >= 0
    c = solve_pd(Q, [[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])
    assert c == pytest.approx([0.0, 1.0], abs=1e-12)
    # two antipodal points (a line): both have the same value
    c = solve_pd(np.diag([5.0, 1.0]), [[1.0, 0.0], [-1.0, 0.0]])
    assert abs(c[0]) < 1e-12 and abs(abs(c[1]) - 1) < 1e-12
    # only c = 0
    assert solve_pd(Q, [[1, 0], [-1, 0], [0, 1], [0, -1]]) is None
    assert solve_pd(Q, [[1, 0], [-0.5, np.sqrt(3) / 2], [-0.5, -np.sqrt(3) / 2]]) is None
    # no constraints / zero rows only: top eigenvector
    c = solve_pd(Q, np.zeros((0, 2)))
    assert abs(c @ Q @ c - 5) < 1e-12
    c = solve_pd(Q, [[0.0, 0.0]])
    assert abs(c @ Q @ c - 5) < 1e-12


def test_solve_pd_repeated_eigenvalue_d3():
    # top eigenspace is a plane; the cone meets it only along one ray
    Q = np.diag([3.0, 3.0, 1.0])
    R = np.array([[1.0, 0, 0], [0, 1.0, 0], [-1.0, -1.0, 0.5]])
    c = solve_pd(Q, R)
    assert (R @ c >= -1e-12).all()
    pts = SPHERE[(SPHERE @ R.T >= 0).all(axis=1)]
    assert c @ Q @ c >= np.einsum("ij,jk,ik->i", pts, Q, pts).max() - 1e-12
    # Q = identity: every feasible point is optimal
    c = solve_pd(np.eye(3), R)
    assert (R @ c >= -1e-12).all() and abs(np.linalg.norm(c) - 1) < 1e-12


def test_solve_pd_single_ray_d3():
    # x >= 0, y >= 0, x + y <= 0  ->  x = y = 0, z free sign? no: add z >= 0: the ray e3
    R = np.array([[1.0, 0, 0], [0, 1.0, 0], [-1.0, -1.0, 0], [0, 0, 1.0]])
    c = solve_pd(np.diag([10.0, 5.0, 1.0]), R)
    assert c == pytest.approx([0, 0, 1.0], abs=1e-12)
    R2 = np.vstack([R, [0, 0, -1.0]])
    assert solve_pd(np.eye(3), R2) is None


def test_solve_pd_general_d4_against_samples():
    rng = np.random.default_rng(7)
    pts = rng.normal(size=(50_000, 4))
    pts /= np.linalg.norm(pts, axis=1, keepdims=True)
    for _ in range(10):
        B = rng.normal(size=(4, 4))
        Q = B @ B.T
        R = rng.normal(size=(3, 4))
        c = solve_pd(Q, R)
        ok = (pts @ R.T >= 0).all(axis=1)
        assert (R @ c >= -1e-9).all()
        assert c @ Q @ c >= np.einsum("ij,jk,ik->i", pts[ok], Q, pts[ok]).max() - 1e-9


@settings(max_examples=40, deadline=None)
@given(d=st.integers(1, 3), k=st.integers(0, 5), seed=st.integers(0, 2**31 - 1))
def test_solve_pd_property_feasible_and_unbeaten(d, k, seed):
    rng = np.random.default_rng(seed)
    B = rng.integers(-3, 4, size=(d, d)).astype(float)
    Q = B + B.T
    R = rng.integers(-2, 3, size=(k, d)).astype(float)
    c = solve_pd(Q, R)
    trial = rng.normal(size=(2000, d))
    trial /= np.linalg.norm(trial, axis=1, keepdims=True)
    ok = (trial @ R.T >= 0).all(axis=1) if k else np.ones(2000, bool)
    if c is None:
        assert not ok.any()
        return
    assert abs(np.linalg.norm(c) - 1) < 1e-12
    assert (R @ c >= -1e-9).all()
    if ok.any():
        assert c @ Q @ c >= np.einsum("ij,jk,ik->i", trial[ok], Q, trial[ok]).max() - 1e-9


# --------------------------------------------------------------------------- pd2_geometry


def test_pd2_geometry_fields_and_arcs():
    Q = np.array([[1.0, 0.0], [0.0, 4.0]])
    R = np.array([[1.0, 0.0], [1.0, -1.0]])  # c1 >= 0, c1 >= c2: arc [-pi/2, pi/4]
    g = pd2_geometry(Q, R)
    assert g.feasible
    assert len(g.feasible_arcs) == 1
    a, b = g.feasible_arcs[0]
    assert a == pytest.approx(-np.pi / 2) and b == pytest.approx(np.pi / 4)
    # u1 = ±e2 is infeasible at +pi/2 but -e2 (phi = -pi/2) is feasible (an arc end)
    assert g.u1_angle == pytest.approx(np.pi / 2)
    assert g.u1_feasible
    assert g.value == pytest.approx(4.0)
    assert g.phi == pytest.approx(-np.pi / 2)
    assert g.active.tolist() == [True, False]
    assert g.boundary_angles.shape == (2, 2)
    assert g.grid_phi.shape == g.grid_value.shape
    assert g.grid_value.max() == pytest.approx(4.0, rel=1e-4)
    assert np.all(g.eigenvalues == pytest.approx([4.0, 1.0]))


def test_pd2_geometry_optimum_on_arc_end_and_wrapping():
    Q = np.array([[4.0, 0.0], [0.0, 1.0]])
    # feasible: c2 >= 0 and c2 >= c1 * tan(60deg)... arc from 60deg to 180deg
    R = np.array([[0.0, 1.0], [-np.sin(np.pi / 3), np.cos(np.pi / 3)]])
    g = pd2_geometry(Q, R)
    a, b = g.feasible_arcs[0]
    assert a == pytest.approx(np.pi / 3) and b == pytest.approx(np.pi)
    assert g.u1_angle == pytest.approx(0.0) and g.u1_feasible  # -e1 (phi = pi) is feasible
    assert g.value == pytest.approx(4.0)
    # an arc that wraps through pi: c1 <= 0 and c2 unconstrained -> [pi/2, 3pi/2]
    g2 = pd2_geometry(Q, [[-1.0, 0.0]])
    a, b = g2.feasible_arcs[0]
    assert a == pytest.approx(np.pi / 2) and b == pytest.approx(3 * np.pi / 2)


def test_pd2_geometry_degenerate_and_empty():
    Q = np.eye(2)
    g = pd2_geometry(Q, [[1.0, 0.0], [-1.0, 0.0]])
    assert g.feasible and len(g.feasible_arcs) == 2
    assert all(a == pytest.approx(b) for a, b in g.feasible_arcs)
    g = pd2_geometry(Q, [[1, 0], [-1, 0], [0, 1], [0, -1]])
    assert not g.feasible and g.feasible_arcs == [] and g.c is None and np.isnan(g.value)
    g = pd2_geometry(Q, np.zeros((0, 2)))
    assert g.feasible_arcs == [(pytest.approx(-np.pi), pytest.approx(np.pi))]


def test_pd2_geometry_random_consistency():
    rng = np.random.default_rng(3)
    for _ in range(100):
        B = rng.normal(size=(2, 2))
        Q = B @ B.T
        R = rng.normal(size=(int(rng.integers(1, 4)), 2))
        g = pd2_geometry(Q, R)
        c = solve_pd(Q, R)
        assert g.feasible == (c is not None)
        if c is None:
            continue
        assert g.value == pytest.approx(c @ Q @ c)
        # the optimum lies on one of the arcs
        on = False
        for a, b in g.feasible_arcs:
            t = (g.phi - a) % (2 * np.pi)
            on |= t <= (b - a) + 1e-9 or t >= 2 * np.pi - 1e-9
        assert on


# --------------------------------------------------------------------------- validation


def test_validation_messages():
    with pytest.raises(InputError, match="`Q` must be square"):
        solve_pd(np.ones((2, 3)), np.ones((1, 3)))
    with pytest.raises(InputError, match="`Q` must be symmetric"):
        solve_pd([[1.0, 2.0], [0.0, 1.0]], [[1.0, 0.0]])
    with pytest.raises(InputError, match=r"`R` must be a 2-D array with d=2 columns.*got shape \(1, 3\)"):
        solve_pd(np.eye(2), np.ones((1, 3)))
    with pytest.raises(InputError, match="`R` must be finite"):
        solve_pd(np.eye(2), [[np.nan, 1.0]])
    with pytest.raises(InputError, match="`Q` must be finite"):
        solve_pd([[np.inf, 0], [0, 1]], [[1.0, 0.0]])
    with pytest.raises(ValueError, match=r"`Q` must be 2 x 2 for pd2_geometry"):
        pd2_geometry(np.eye(3), np.ones((1, 3)))
    with pytest.raises(ValueError, match="`grid` must be an int >= 3"):
        pd2_geometry(np.eye(2), np.ones((1, 2)), grid=2)


# ----------------------------------------------------------------------------- scale (issue 18 item 6)
@pytest.mark.parametrize("cq, cr", [(1.0, 1e-200), (1e-300, 1.0), (1e300, 1e300), (1e-160, 1e160)])
def test_solve_pd_same_answer_at_any_scale(cq, cr):
    """Rows of R below ~1e-154 had a zero norm and were dropped (the answer left the cone)."""
    Q = np.array([[2.0, 0.3, 0.0], [0.3, 1.0, 0.2], [0.0, 0.2, 0.5]])
    R = np.array([[-1.0, 0.2, 0.1], [0.3, -1.0, 0.4]])
    c0, c1 = solve_pd(Q, R), solve_pd(Q * cq, R * cr)
    assert np.all(R @ c0 >= -1e-10) and np.allclose(c1, c0, atol=1e-12)
    g, g0 = pd2_geometry(Q[:2, :2] * cq, R[:, :2] * cr), pd2_geometry(Q[:2, :2], R[:, :2])
    assert np.allclose(g.c, g0.c, atol=1e-12)
    assert np.array_equal(g.active, g0.active) and g.u1_feasible == g0.u1_feasible
    assert np.allclose(g.feasible_arcs, g0.feasible_arcs, atol=1e-12)
