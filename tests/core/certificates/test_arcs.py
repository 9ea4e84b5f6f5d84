"""OPT_2 from above by arcs of the circle (nspca_core.certificates.arcs): never below the brute-force optimum of
the rank-2 problem nor the exact spannogram's, within ``rel`` of it when the search runs to its end, and the
operator route's paper(d=2) bound through it."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core import certify, lowrank_nspca
from nspca_core.certificates import arcs
from nspca_core.certificates.arcs import opt2_upper
from tests.bruteforce import brute_opt_lowrank


@st.composite
def factors(draw):
    n = draw(st.integers(1, 8))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    V = rng.standard_normal((n, 2)) * [draw(st.floats(0.1, 10.0)), draw(st.floats(0.0, 3.0))]
    kind = draw(st.sampled_from(["plain", "one-signed", "ties", "zero rows", "huge"]))
    if kind == "one-signed":
        V[:, 0] = np.abs(V[:, 0])
    elif kind == "ties":
        V[: max(n // 2, 1)] = V[0]  # equal rows: the top k's order ties all along the circle
    elif kind == "zero rows":
        V[rng.random(n) < 0.4] = 0.0
    elif kind == "huge":
        V *= 1e150
    return V


@settings(max_examples=150, deadline=None)
@given(V=factors(), k=st.integers(1, 8), enough=st.sampled_from([None, 0.0, 0.5]))
def test_upper_at_least_brute_force(V, k, enough):
    """Above the brute-force OPT_2 however it stops (to its end, or at once by ``enough``), and within ``rel`` of it
    (and of the best value found) when run to the end."""
    n = V.shape[0]
    k = min(k, n)
    opt, _ = brute_opt_lowrank(V, k)
    scale = float((V * V).sum())
    stop = None if enough is None else enough * opt
    upper, lower, info = opt2_upper(V, k, enough=stop)
    assert upper >= opt * (1 - 1e-12) - 1e-300, (upper, opt, info)
    assert lower <= opt * (1 + 1e-12) + 1e-12 * scale
    if enough is None:
        assert info["stopped"] == "rel"
        assert upper <= opt * (1 + 1e-8) + 1e-12 * scale, (upper, opt, info)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(20, 300), k=st.integers(1, 60))
def test_upper_against_the_spannogram(seed, n, k):
    """Larger n than brute force reaches: at least the exact spannogram's OPT_2, within 1e-8 of it."""
    rng = np.random.default_rng(seed)
    V = rng.standard_normal((n, 2)) * [3.0, 1.0]
    V[:, 0] = np.abs(V[:, 0]) if seed % 3 == 0 else V[:, 0]  # a one-signed first factor, as a corpus's
    k = min(k, n)
    exact = float(lowrank_nspca(V, k).variance_lowrank)
    upper, _, info = opt2_upper(V, k)
    assert exact * (1 - 1e-12) <= upper <= exact * (1 + 1e-8), (upper, exact, info)


@settings(max_examples=100, deadline=None)
@given(V=factors(), k=st.integers(1, 8), start=st.floats(-np.pi, np.pi), width=st.floats(1e-9, 1.0))
def test_each_arc_bound_above_f_along_the_arc(V, k, start, width):
    """One arc's bound (either branch: the endpoint maxima, or a fixed support's sum of squares) is above
    ``f(theta) = s_k((a cos theta + b sin theta)_+^2)`` at 2,001 angles of the arc, f summed by sorting."""
    n = V.shape[0]
    k = min(k, n)
    width *= 2 * np.pi / arcs._FIRST_ARCS  # (no wider than the first level's arcs)
    t1, t2 = np.array([start]), np.array([start + width])
    a, b = V[:, 0].copy(), V[:, 1].copy()
    r = np.hypot(a, b) * (1 + 2 * arcs._EPS)
    slack = 4 * arcs._EPS * (np.abs(a) + np.abs(b))
    bound = float(arcs._arc_bounds(a, b, r, slack, t1, t2, k)[0][0])
    for t in np.linspace(start, start + width, 2001):
        u = np.maximum(a * np.cos(t) + b * np.sin(t), 0.0)
        f = float(np.sort(u * u)[::-1][:k].sum())
        assert bound >= f * (1 - 1e-13), (t, bound, f)


@pytest.mark.parametrize("k", [3, 6])
def test_operator_route_paper_d2_matches_the_spannogram(k):
    """certify on sparse counts above the dense size: paper(d=2) within 1e-9 of the exact spannogram's bound (the
    same Lanczos factor), or, where it stopped early, above every other bound (it cannot bind there)."""
    rng = np.random.default_rng(k)
    m, n = 400, 2600
    topic = rng.random((3, n)) ** 8
    D = rng.poisson(3 * topic[rng.integers(0, 3, m)] + 0.002)
    X = sp.csr_matrix(D.astype(np.int64))
    c = certify(X, k=k)
    from nspca_core.operators.covariance import as_cov

    V, eig = as_cov(X).factor(3)
    tol = 64 * n * np.finfo(float).eps * float(eig[0])
    exact = float(lowrank_nspca(V[:, :2], k).variance_lowrank) * (1 + 1e-12) + float(eig[2]) + 2 * tol
    got = c.bounds["paper(d=2)"]
    others = min(v for name, v in c.bounds.items() if name != "paper(d=2)")
    assert got >= exact * (1 - 1e-12)
    assert got <= exact * (1 + 1e-9) or got >= others
