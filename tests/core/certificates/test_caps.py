"""OPT_3 from above by patches of the sphere (nspca_core.certificates.caps): never below the brute-force optimum of
the rank-3 problem nor the exact spannogram's, within ``rel`` of it when the search runs to its end, and each
patch's bound above f at points of the patch."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core import lowrank_nspca
from nspca_core.certificates import caps
from nspca_core.certificates.caps import opt3_upper
from tests.bruteforce import brute_opt_lowrank


@st.composite
def factors(draw):
    n = draw(st.integers(1, 8))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    V = rng.standard_normal((n, 3)) * [draw(st.floats(0.1, 10.0)), draw(st.floats(0.0, 3.0)), draw(st.floats(0.0, 2.0))]
    kind = draw(st.sampled_from(["plain", "one-signed", "ties", "zero rows", "axis", "huge"]))
    if kind == "one-signed":
        V[:, 0] = np.abs(V[:, 0])
    elif kind == "ties":
        V[: max(n // 2, 1)] = V[0]
    elif kind == "zero rows":
        V[rng.random(n) < 0.4] = 0.0
    elif kind == "axis":  # rows along the cube's axes and diagonals: patch corners and edges exactly
        V = np.array([[1.0, 0, 0], [0, 1.0, 0], [0, 0, -1.0], [1.0, 1.0, 1.0], [1.0, -1.0, 0]])[: max(n, 1)] * 2.0
    elif kind == "huge":
        V *= 1e150
    return V


@settings(max_examples=120, deadline=None)
@given(V=factors(), k=st.integers(1, 8), enough=st.sampled_from([None, 0.0, 0.5]))
def test_upper_at_least_brute_force(V, k, enough):
    """Above the brute-force OPT_3 however it stops, within ``rel`` of it when run to the end."""
    n = V.shape[0]
    k = min(k, n)
    opt, _ = brute_opt_lowrank(V, k)
    scale = float((V * V).sum())
    upper, lower, info = opt3_upper(V, k, enough=None if enough is None else enough * opt)
    assert upper >= opt * (1 - 1e-12) - 1e-300, (upper, opt, info)
    assert lower <= opt * (1 + 1e-12) + 1e-12 * scale
    if enough is None and info["stopped"] == "rel":
        assert upper <= opt * (1 + 1e-8) + 1e-12 * scale, (upper, opt, info)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(20, 150), k=st.integers(1, 40))
def test_upper_against_the_spannogram(seed, n, k):
    """Larger n than brute force reaches: at least the exact rank-3 spannogram's OPT_3, within 1e-8 of it."""
    rng = np.random.default_rng(seed)
    V = rng.standard_normal((n, 3)) * [3.0, 1.5, 1.0]
    if seed % 3 == 0:
        V[:, 0] = np.abs(V[:, 0])  # a one-signed first factor, as a corpus's
    k = min(k, n)
    exact = float(lowrank_nspca(V, k).variance_lowrank)
    upper, _, info = opt3_upper(V, k)
    assert upper >= exact * (1 - 1e-12), (upper, exact, info)
    assert upper <= exact * (1 + 1e-8) or info["stopped"] != "rel", (upper, exact, info)


@settings(max_examples=80, deadline=None)
@given(V=factors(), k=st.integers(1, 8), face=st.integers(0, 5),
       corner=st.tuples(st.floats(-1, 0.9), st.floats(-1, 0.9)), size=st.floats(1e-6, 0.1))
def test_each_patch_bound_above_f_on_the_patch(V, k, face, corner, size):
    """One patch's bound (either branch) is above ``f(c) = s_k((V c)_+^2)`` at 21 x 21 points of the patch, f summed
    by sorting."""
    n = V.shape[0]
    k = min(k, n)
    u0, v0 = corner
    u1, v1 = min(u0 + size, 1.0), min(v0 + size, 1.0)
    f_ = np.array([face])
    c0, cr, sr = caps._caps(f_, np.array([u0]), np.array([u1]), np.array([v0]), np.array([v1]))
    r = np.linalg.norm(V, axis=1) * (1 + 4 * caps._EPS)
    slack = 8 * caps._EPS * np.abs(V).sum(axis=1)
    bound = float(caps._patch_bounds(V, r, slack, c0, cr, sr, k)[0][0])
    for u in np.linspace(u0, u1, 21):
        for v in np.linspace(v0, v1, 21):
            c = caps._unit(caps._points(f_, np.array([u]), np.array([v])))[0]
            w = np.maximum(V @ c, 0.0)
            f = float(np.sort(w * w)[::-1][:k].sum())
            assert bound >= f * (1 - 1e-13), (u, v, bound, f)
