"""Issue 39, helper dense16 (img24 / s300x400 k = 50 at the 3x line):

- a dense "auto" certificate with a given x whose d = 1 bounds (``paper(d=1)``, ``residual(d=1)``) are below
  lambda_1 but out of reach of x's value (``cheap.lambda1_only``'s ``lower``, ``cheap._D1_FAR``) proves lambda_1
  alone and computes the top eigenpairs after its dual side, only where its bound is not below ``_D1_LATE`` of
  their estimate; the DNN's screening start reads LAPACK's lambda_1 where its bracket depends on it
  (``Lambda1Only._bracket``): the same bound as when they are computed first, never looser, above brute force;
- the low-rank test on the dense route's data takes the Gram's eigenvalues alone first (``vectors=False``):
  the same answer as its eigendecomposition.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from nspca_core.certificates import bounds as _bounds
from nspca_core.certificates import cheap, certify, single
from nspca_core.certificates.bounds import _Spectral
from nspca_core.certificates.cheap import _certify_lowrank, lambda1_only
from nspca_core.operators.cov import Cov

from tests.bruteforce import brute_opt


def _images(seed: int, m: int, n: int) -> np.ndarray:
    """A lighting level over every feature plus nonnegative localized parts and noise (img24's kind: the d = 1
    bounds below lambda_1, certifying ~0.75-0.83 at n = 200, k = 40)."""
    rng = np.random.default_rng(seed)
    parts = np.zeros((8, n))
    for j in range(8):
        c = rng.integers(0, n)
        parts[j] = np.exp(-0.5 * ((np.arange(n) - c) / rng.uniform(3.0, 8.0)) ** 2)
    light = 1.0 + 0.3 * rng.random(n)
    return rng.random((m, 1)) * light + rng.random((m, 8)) @ parts + 0.05 * rng.random((m, n))


def image_case(seed: int, n: int, k: int) -> tuple[np.ndarray, float, np.ndarray]:
    """A small image-like covariance (``_images``' 3 n samples), brute force's OPT at k and a random unit answer
    on k features (entries >= 0.1 before scaling)."""
    rng = np.random.default_rng(seed)
    A = np.cov(_images(seed, 3 * n, n), rowvar=False, bias=True)
    opt, _ = brute_opt(A, k)
    x = np.zeros(n)
    x[rng.choice(n, k, replace=False)] = rng.random(k) + 0.1
    return A, opt, x / np.linalg.norm(x)


def _spy(monkeypatch):
    seen = {"lapack": 0}
    real = _bounds._Spectral.__init__

    def init(self, *a, **kw):
        seen["lapack"] += 1
        real(self, *a, **kw)

    monkeypatch.setattr(_bounds._Spectral, "__init__", init)
    return seen


def _small(monkeypatch):
    """The light route from a few features (its thresholds are 150 / 121 features in the code)."""
    monkeypatch.setattr(single, "_LIGHT_SPEC_MIN_N", 4)
    monkeypatch.setattr(single, "_D2_MAX_N", 3)


def _unlowered(monkeypatch):
    """lambda1_only as before this change: no feasible value handed in (the top eigenpairs where short)."""
    real = cheap.lambda1_only
    monkeypatch.setattr(single, "lambda1_only", lambda A, k, **kw: real(A, k))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), n=st.integers(6, 9), k=st.integers(2, 4), far=st.sampled_from([0.88, 1.5]))
@example(seed=1, n=8, k=3, far=1.5)
def test_the_late_d1_bounds_keep_the_bound_and_stay_above_bruteforce(monkeypatch, seed, n, k, far):
    """Small inputs (the route's size thresholds lowered): the certificate with the feasible value handed in is
    the same bound as without (the d = 1 bounds' choice never loosens it), above brute force's OPT; ``far`` 1.5
    puts every short case out of reach (the late computation or none)."""
    _small(monkeypatch)
    monkeypatch.setattr(cheap, "_D1_FAR", far)
    A, opt, x = image_case(seed, n, k)
    new = certify(cov=A, k=k, x=x)
    _unlowered(monkeypatch)
    old = certify(cov=A, k=k, x=x)
    assert new.upper_bound >= opt * (1 - 1e-9)
    assert new.upper_bound <= old.upper_bound * (1 + 1e-12)
    assert new.upper_bound >= new.lower


@pytest.mark.parametrize("seed", [1, 2])
def test_the_top_eigenpairs_wait_for_the_dual_side_only_where_out_of_reach(monkeypatch, seed):
    """img24's kind at n = 200, k = 40 (the d = 1 bounds below lambda_1): with x's value handed in and the d = 1
    bounds out of reach, no LAPACK top eigenpairs at all and no d = 1 bound; with ``_D1_FAR`` 0 (never out of
    reach) the eigenpairs first, as before; the same upper bound both ways."""
    X = _images(seed, 600, 200)
    k = 40
    x = np.zeros(200)
    x[np.argsort(-X.var(axis=0))[:k]] = 1.0
    x /= np.linalg.norm(x)
    seen = _spy(monkeypatch)
    A = np.cov(X, rowvar=False, bias=True)
    light = lambda1_only(A, k, lower=float(x @ A @ x))
    assert light is not None and light.d1 is not None, "not vacuous: the d = 1 bounds out of reach here"
    seen["lapack"] = 0
    late = certify(X, k=k, x=x)
    assert seen["lapack"] == 0 and "paper(d=1)" not in late.bounds
    monkeypatch.setattr(cheap, "_D1_FAR", 0.0)
    first = certify(X, k=k, x=x)
    assert seen["lapack"] == 1 and "residual(d=1)" in first.bounds
    assert late.upper_bound == first.upper_bound


def test_the_late_d1_bounds_are_computed_where_the_dual_side_left_them_in_reach(monkeypatch):
    """``_D1_LATE`` decides: at 0 (any bound is in reach) the top eigenpairs come after the dual side and their
    d = 1 bounds are the ones LAPACK's route gives (the same floats); at inf never."""
    X = _images(3, 600, 200)
    k = 40
    x = np.zeros(200)
    x[np.argsort(-X.var(axis=0))[:k]] = 1.0
    x /= np.linalg.norm(x)
    seen = _spy(monkeypatch)
    monkeypatch.setattr(single, "_D1_LATE", 0.0)
    late = certify(X, k=k, x=x)
    assert seen["lapack"] == 1
    monkeypatch.setattr(cheap, "_D1_FAR", 0.0)
    first = certify(X, k=k, x=x)
    for b in ("paper(d=1)", "residual(d=1)"):
        assert late.bounds[b] == first.bounds[b]
    monkeypatch.setattr(cheap, "_D1_FAR", 0.88)
    monkeypatch.setattr(single, "_D1_LATE", np.inf)
    seen["lapack"] = 0
    none = certify(X, k=k, x=x)
    assert seen["lapack"] == 0 and "paper(d=1)" not in none.bounds
    assert none.upper_bound == late.upper_bound


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(3, 40), k=st.integers(1, 40), scale=st.floats(0.0, 3.0))
def test_the_screening_bracket_reads_the_same_minimum_as_lapacks_lambda1(seed, n, k, scale):
    """``Lambda1Only._bracket`` (hi, max A_ii, k): ``min(hi, (value - max A_ii) / (k - 1))`` is the same float as
    with LAPACK's lambda_1 bound (``_Spectral(A, 2)``'s ``w[0] + tol``, what the screening start took before)."""
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n + 3, n))
    A = B.T @ B / (n + 3)
    k = min(k, n)
    theta = float(scipy.linalg.eigh(A, eigvals_only=True)[-1])
    lo = cheap.Lambda1Only(A, theta * 1.01, 0.0, d1=1.0, theta=theta)
    off = A - np.diag(np.diag(A))
    hi = float(off.max()) * scale
    dmax = float(np.diag(A).max())
    spec = _Spectral(A, 2)
    lapack = float(spec.w[0]) + spec.tol
    got = lo.bracket(hi, dmax, k)
    if k > 1:
        assert min(hi, (got - dmax) / (k - 1)) == min(hi, (lapack - dmax) / (k - 1))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), m=st.integers(2, 12), n=st.integers(3, 30), rank=st.integers(1, 6),
       k=st.integers(1, 5))
def test_the_lowrank_test_from_eigenvalues_alone_answers_as_the_eigendecomposition(seed, m, n, rank, k):
    """``_certify_lowrank(vectors=False)``: None exactly where the eigendecomposition's rank test says so, else the
    same certificate (float for float); above brute force where it certifies (n small)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, min(rank, m))) @ rng.standard_normal((min(rank, m), n))
    X -= X.mean(axis=0)
    cov = Cov(X)
    k = min(k, n)
    a = _certify_lowrank(cov, k, None, None, gram={})
    b = _certify_lowrank(cov, k, None, None, gram={}, vectors=False)
    assert (a is None) == (b is None)
    if a is not None:
        assert a.upper_bound == b.upper_bound and a.lower == b.lower
        if n <= 10:
            assert a.upper_bound >= brute_opt(cov.dense(), k)[0] * (1 - 1e-9)


def test_the_lowrank_test_on_full_rank_data_skips_the_eigenvectors(monkeypatch):
    """Full-rank thin data (300 x 400 spectra's shape, smaller): no eigendecomposition of the Gram with
    vectors=False, one with vectors=True; the Gram left for the caller either way."""
    X = np.random.default_rng(0).standard_normal((40, 60))
    calls = []
    real = np.linalg.eigh
    monkeypatch.setattr(np.linalg, "eigh", lambda G, *a, **kw: calls.append(1) or real(G, *a, **kw))
    gram: dict = {}
    assert _certify_lowrank(Cov(X - X.mean(axis=0)), 5, None, None, gram=gram, vectors=False) is None
    assert calls == [] and "G" in gram and "eig" not in gram
    gram = {}
    assert _certify_lowrank(Cov(X - X.mean(axis=0)), 5, None, None, gram=gram) is None
    assert calls == [1] and "eig" in gram


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), m=st.integers(5, 9), extra=st.integers(1, 6), k=st.integers(1, 4),
       scale=st.sampled_from([1e-3, 1.0, 1e3]))
def test_the_gram_eigenvalue_handed_to_lambda1_only_is_a_bound(seed, m, extra, k, scale):
    """The low-rank test's ``gram["top"]`` (thin data above its rank limit): ``value + tol`` is at least
    LAPACK's lambda_max of the covariance the dense route forms and brute force's OPT, and ``lambda1_only``
    given it (and x's value) reports exactly that bound where it takes it."""
    rng = np.random.default_rng(seed)
    n = m + extra
    X = rng.standard_normal((m, n)) * scale * rng.uniform(0.1, 3.0, n)
    X -= X.mean(axis=0)
    cov = Cov(X)
    k = min(k, n)
    gram: dict = {}
    if _certify_lowrank(cov, k, None, None, gram=gram, vectors=False) is not None:
        return
    value, tol = gram["top"]
    A = cov.dense()
    assert value + tol >= float(np.linalg.eigvalsh(A)[-1])
    assert value + tol >= brute_opt(A, k)[0] * (1 - 1e-12)
    out = lambda1_only(A, k, margin=-0.5, lower=0.0, proved=gram["top"])  # (lower 0: never out of reach)
    if out is not None:
        assert out.d1 is None or out.w[0] == value


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), m=st.integers(5, 8), extra=st.integers(1, 4), k=st.integers(2, 4),
       far=st.sampled_from([0.88, 1.5]))
def test_thin_data_on_the_dense_route_stays_above_bruteforce(monkeypatch, seed, m, extra, k, far):
    """Thin data the dense route takes (size thresholds lowered): the certificate, whose lambda_1 bound is the
    Gram's where the d = 1 bounds are out of reach (``far`` 1.5: wherever short), is above brute force's OPT."""
    _small(monkeypatch)
    monkeypatch.setattr(cheap, "_D1_FAR", far)
    rng = np.random.default_rng(seed)
    n = m + extra
    X = _images(seed, m, n)
    x = np.zeros(n)
    x[rng.choice(n, k, replace=False)] = rng.random(k) + 0.1
    x /= np.linalg.norm(x)
    c = certify(X, k=k, x=x)
    A = np.cov(X, rowvar=False, bias=True)
    assert c.upper_bound >= brute_opt(A, k)[0] * (1 - 1e-9)
    assert c.upper_bound >= c.lower
