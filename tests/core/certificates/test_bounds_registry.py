"""The cheap bounds declared once (``certificates.bounds.BOUNDS``): every bound in every form a
driver computes it (dense per k, dense for a path of k, thin through the Gram) is >= the brute-force
optimum, the forms agree, and each driver lists exactly the bounds that apply to it."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core import certify, certify_path
from nspca_core.certificates.bounds import BOUNDS, Spectrum, _Spectral, _thin_spectrum, cheap_bounds, cheap_bounds_at

from tests.bruteforce import brute_opt


def _data(seed: int, m: int, n: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n)) * rng.uniform(0.1, 3.0, n)
    return X - X.mean(0)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 8), m=st.integers(2, 12))
def test_every_bound_in_every_form_is_at_least_the_optimum(seed, n, m):
    X = _data(seed, m, n)
    A = X.T @ X / m
    ks = np.arange(1, n + 1)
    opts = np.array([brute_opt(A, int(k))[0] for k in ks])
    per_k = _Spectral(A, 2).spectrum()
    path = _Spectral(A, 1).spectrum(many_k=True)
    thin = _thin_spectrum(X, m, diag=np.diag(A))
    for spec in (per_k, path, thin):
        for name, values in cheap_bounds(spec, ks).items():
            assert np.all(values >= opts * (1 - 1e-12)), (name, values, opts)
    # the path's cumulative sums and the per-k values are the same bounds up to rounding
    a, b = cheap_bounds(per_k, ks), cheap_bounds(path, ks)
    assert list(a) == list(b) == [bd.name for bd in BOUNDS]
    for name in a:
        np.testing.assert_allclose(a[name], b[name], rtol=1e-10)


def test_applicability_follows_what_the_driver_knows():
    w, tol = np.array([3.0, 1.0]), 1e-12
    v1 = np.array([1.0, 1.0, 0.5])
    assert list(cheap_bounds_at(Spectrum(3, w, tol), 2)) == ["lambda1"]  # no top eigenvector
    assert list(cheap_bounds_at(Spectrum(3, w[:1], tol, v1=v1), 2)) == ["lambda1"]  # lambda_2 unknown
    # every nonzero eigenvalue known (a thin Gram): lambda_2 = 0
    got = cheap_bounds_at(Spectrum(3, w[:1], tol, complete=True, v1=v1), 2)
    assert list(got) == ["lambda1", "paper(d=1)"] and got["paper(d=1)"] == 2.0 + 2 * tol
    assert list(cheap_bounds_at(Spectrum(1, w[:1], tol, complete=True, v1=v1[:1]), 1)) == ["lambda1"]  # d < n


def test_drivers_list_the_registered_bounds():
    X = _data(3, 20, 9)
    names = [b.name for b in BOUNDS]
    c = certify(X, k=4, effort="fast")
    assert [n for n in c.bounds if n in names] == names
    for c in certify_path(X, ks=[1, 4, 9], effort="fast"):
        assert [n for n in c.bounds if n in names] == names
