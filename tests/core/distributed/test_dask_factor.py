"""DaskCov.factor (gap-aware subspace iteration) and the passes the Dask solvers make.

On a LocalCluster started here (threads, small arrays): the factor's values and vectors
against numpy's eigh of the same centered covariance, a flat noise spectrum stopping in few
passes (counted in ``factor_info``), the upper values of unresolved pairs above the true
eigenvalues, and the round trips of fit / components with and without the client's n x n
cache.  Skipped cleanly when the optional extra is missing.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("dask.array", reason="the optional Dask extra (dask[array]) is not installed")
pytest.importorskip("distributed", reason="the optional Dask extra (distributed) is not installed")

import dask.array as da  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import nspca_core  # noqa: E402
import nspca_core.distributed.array as nd  # noqa: E402
from nspca_core.distributed.array import as_dask_cov  # noqa: E402


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                           dashboard_address=None, worker_dashboard_address=None)
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(params=["passes", "client cache"])
def cache(request, monkeypatch):
    """Products through the workers (the n x n cache off), or on the client's cached A."""
    if request.param == "passes":
        monkeypatch.setattr(nd, "_GRAM_CACHE_MAX", 0)
    return request.param


def _planted(m=400, n=30, scales=(4.0, 3.0, 2.0), noise=0.3, seed=0):
    """Orthogonal planted directions with distinct variances over isotropic noise and an offset:
    eigenvalues about ``scales^2 + noise^2``, then a flat bulk about ``noise^2``."""
    rng = np.random.default_rng(seed)
    U = np.linalg.qr(rng.standard_normal((n, len(scales))))[0]
    Z = rng.standard_normal((m, len(scales))) * np.asarray(scales)
    return Z @ U.T + noise * rng.standard_normal((m, n)) + rng.uniform(1.0, 2.0, n)


def _eigh_centered(Z):
    Xc = Z - Z.mean(axis=0)
    w, U = np.linalg.eigh(Xc.T @ Xc / Z.shape[0])
    return w[::-1], U[:, ::-1]


@pytest.mark.parametrize("d", [1, 2])
def test_factor_equals_eigh_with_a_planted_spectrum(client, cache, d):
    """d <= 2 within the planted part: every value resolved, 1e-8 of numpy's eigh (values and
    the subspace of the vectors); the (d+1)-th value too."""
    Z = _planted()
    cov = as_dask_cov(da.from_array(Z, chunks=(100, Z.shape[1])), client=client)
    V, eig = cov.factor(d)
    w, U = _eigh_centered(Z)
    info = cov.factor_info
    assert info["converged"] and all(info.get("resolved", [True]))
    np.testing.assert_allclose(eig, w[:d + 1], rtol=1e-8, atol=0)
    # V = U_d sqrt(w_d) up to the sign of each column (fixed by the largest entry)
    W0 = U[:, :d] * np.sqrt(w[:d])
    signs = np.sign(np.sum(V * W0, axis=0))
    np.testing.assert_allclose(V, W0 * signs, rtol=0, atol=1e-8 * np.sqrt(w[0]))
    if cache == "passes":
        assert info["method"] == "subspace iteration" and info["passes"] == info["iterations"] <= 30
    else:
        assert info["method"].startswith("eigh") and info["passes"] == 1  # the pass forming A


def test_flat_spectrum_stops_in_few_passes(client, monkeypatch):
    """d = 5 over 3 planted directions: pairs 4..6 lie in the flat noise bulk.  The old rule
    (all d + 1 residuals below 1e-10 lambda_1) ran all max_iter rounds there; now the bulk's
    pairs are accepted as unresolvable and their values are given as upper values.  Products
    through the workers (with the client's n x n cache the factor is a dense eigh)."""
    monkeypatch.setattr(nd, "_GRAM_CACHE_MAX", 0)
    Z = _planted(m=3000, n=40)
    cov = as_dask_cov(da.from_array(Z, chunks=(1000, Z.shape[1])), client=client)
    trips = cov.round_trips
    V, eig = cov.factor(5, max_iter=300)
    info = cov.factor_info
    w, _ = _eigh_centered(Z)
    assert info["converged"]
    assert info["iterations"] <= 30, info["iterations"]
    assert info["passes"] == info["iterations"] == cov.round_trips - trips
    # the planted pairs are resolved, the bulk's are not (and need not be)
    assert info["resolved"][:3] == [True, True, True] and not all(info["resolved"][3:])
    np.testing.assert_allclose(eig[:3], w[:3], rtol=1e-8)
    ritz, res = np.array(info["ritz"]), np.array(info["residuals"])
    # interlacing: Ritz values below the eigenvalues; returned values: the upper value for the
    # unresolved pairs, which is above the true eigenvalue (the certificates add it)
    assert np.all(ritz <= w[:6] * (1 + 1e-12))
    assert np.all(eig[3:] >= w[3:6] * (1 - 1e-12))
    np.testing.assert_allclose(eig[3:], ritz[3:] + res[3:])
    assert np.all(eig[3:] - w[3:6] <= res[3:] + 1e-12)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**16), d=st.integers(1, 5), planted=st.integers(1, 4))
def test_factor_values_bracket_the_eigenvalues(client, monkeypatch, seed, d, planted):
    """Any planted spectrum and d: the factor stops (converged) and each returned value is within
    1e-8 lambda_1 of the true eigenvalue when resolved, else in [lambda_j - 1e-8 lambda_1,
    lambda_j + r_j] (an upper value: what the certificates add)."""
    monkeypatch.setattr(nd, "_GRAM_CACHE_MAX", 0)
    scales = np.linspace(4.0, 1.5, planted)
    Z = _planted(m=500, n=24, scales=tuple(scales), seed=seed)
    cov = as_dask_cov(da.from_array(Z, chunks=(250, Z.shape[1])), client=client)
    V, eig = cov.factor(d)
    w, _ = _eigh_centered(Z)
    info = cov.factor_info
    res, resolved = np.array(info["residuals"]), np.array(info["resolved"])
    assert info["converged"] and eig.shape == (d + 1,)
    tol = 1e-8 * w[0]
    assert np.all(np.abs(eig - w[:d + 1])[resolved] <= tol)
    assert np.all(eig >= w[:d + 1] - tol)
    assert np.all(eig <= w[:d + 1] + res + tol)
    # V's columns: unit Ritz vectors scaled by the square roots of the Ritz values
    np.testing.assert_allclose(np.linalg.norm(V, axis=0) ** 2, np.array(info["ritz"])[:d], rtol=1e-10)


def test_factor_old_rule_would_not_stop(client, monkeypatch):
    """The same flat case with oversample=0 (the (d+1)-th pair is the block's last: it must be
    resolved): max_iter is reached with the warning, as before the gap-aware rule."""
    monkeypatch.setattr(nd, "_GRAM_CACHE_MAX", 0)
    Z = _planted(m=3000, n=40)
    cov = as_dask_cov(da.from_array(Z, chunks=(1000, Z.shape[1])), client=client)
    with pytest.warns(RuntimeWarning, match="did not reach tol"):
        cov.factor(5, oversample=0, max_iter=40)
    assert cov.factor_info["iterations"] == 40 and not cov.factor_info["converged"]


def test_round_trips_of_fit_and_components(client, cache):
    """Passes over the data of the public front: with the client's n x n cache, the means pass
    and one Gram pass, whatever the solver's iterations; without it, a pass per product."""
    Z = _planted(m=300, n=25)
    X = da.from_array(Z, chunks=(100, Z.shape[1]))
    cov = as_dask_cov(X, client=client)
    r = nspca_core.fit(cov, k=4, method="tpower", certify=False)
    trips_fit = cov.round_trips
    c = nspca_core.components(cov, n_components=3, k=4, strategy="bipartite", certify=False)
    trips_all = cov.round_trips
    r0 = nspca_core.fit(Z - Z.mean(axis=0), k=4, method="tpower", certify=False)
    c0 = nspca_core.components(Z - Z.mean(axis=0), n_components=3, k=4, strategy="bipartite", certify=False)
    np.testing.assert_allclose(r.x, r0.x, atol=1e-8)
    np.testing.assert_allclose(c.loadings, c0.loadings, atol=1e-8)
    if cache == "client cache":
        assert trips_fit == 2 and trips_all == 2  # means + Gram; components reuse the Gram
    else:
        assert trips_fit > 5


# --------------------------------------------------------------------------- registry (issue 29 item 5)
def test_dask_methods_derive_from_the_registry():
    from nspca_core.methods import REGISTRY, SINGLE

    assert set(nd.DASK_METHODS) == {n for n in SINGLE if REGISTRY[n].dask}
    assert nd.DASK_METHODS[0] == nd.DASK_DEFAULT_METHOD == "tpower"
    assert "zass" not in nd.DASK_METHODS and "bipartite" not in nd.DASK_METHODS


def test_every_dask_method_runs_its_own_function_on_the_operator(client):
    """Every method offered for Dask data runs the registry's function unchanged on the operator
    (no second Dask entry): the peers' info comes back through nspca_core.fit."""
    from nspca_core import methods

    assert all(methods.REGISTRY[n].dask == "operator" for n in nd.DASK_METHODS)
    Z = _planted(m=200, n=15)
    X = da.from_array(Z, chunks=(100, Z.shape[1]))
    for method in ("em", "tpower"):
        r = nspca_core.fit(X, k=3, method=method, restarts=2, certify=False, client=client)
        assert r.method == method and len(r.info["restart_variances"]) == 2
    with pytest.raises(nspca_core.InputError, match=r"unknown option\(s\) \['samples'\] for method 'tpower'"):
        nspca_core.fit(X, k=3, method="tpower", samples=5, client=client)


# --------------------------------------------------------------------------- columns of A on the client
def test_column_cache_products_and_round_trips(client, monkeypatch):
    """Without the whole A on the client (too many features), products with sparse arguments use
    cached columns of A: equal to brute force, a pass only for features not seen before.  A
    product of p columns fetches at most max(2p, the columns whose payload is the data's size):
    for dense data the rows per block (3 here: 5 new columns of one product are not fetched)."""
    monkeypatch.setattr(nd, "_FULL_GRAM_BYTES", 0)
    Z = _planted(m=300, n=25, seed=3)
    thin = as_dask_cov(da.from_array(Z, chunks=(3, Z.shape[1])), client=client)
    assert thin._fetch_limit(1) == 3 and thin._fetch_limit(4) == 8
    e = np.zeros((25, 1))
    e[[0, 2, 3, 5, 6], 0] = 1.0
    t0 = thin.round_trips
    thin.matvec(e)  # 5 new columns > max(2, 3): a plain pass, nothing cached
    assert thin.round_trips == t0 + 1
    assert thin._shared.get("columns", {"F": np.zeros(0)})["F"].size == 0
    thin.matvec(e[:, [0, 0, 0]])  # 5 <= 6: fetched
    assert sorted(thin._shared["columns"]["F"]) == [0, 2, 3, 5, 6]
    X = da.from_array(Z, chunks=(100, Z.shape[1]))
    cov = as_dask_cov(X, client=client, persist=False)
    Xc = Z - Z.mean(axis=0)
    A = Xc.T @ Xc / Z.shape[0]
    v = np.zeros((25, 2))
    v[[1, 4, 7], 0] = [0.5, 1.0, -2.0]
    v[[4, 9], 1] = [1.0, 3.0]
    t0 = cov.round_trips
    np.testing.assert_allclose(cov.matvec(v), A @ v, rtol=0, atol=1e-12)
    assert cov.round_trips == t0 + 1 and sorted(cov._shared["columns"]["F"]) == [1, 4, 7, 9]
    np.testing.assert_allclose(cov.quads(v[:, ::-1]), np.einsum("ij,ij->j", v[:, ::-1], A @ v[:, ::-1]), rtol=1e-12)
    np.testing.assert_allclose(cov.submatrix([9, 1]), A[np.ix_([9, 1], [9, 1])], rtol=0, atol=1e-12)
    sub = cov.columns(np.array([0, 1, 4, 7, 9, 11]))  # a view shares the cache
    np.testing.assert_allclose(sub.matvec(np.r_[0, 1.0, 2.0, 0, 0, 0]), A[np.ix_([0, 1, 4, 7, 9, 11], [1, 4])]
                               @ [1.0, 2.0], atol=1e-12)
    assert cov.round_trips == t0 + 1  # nothing new was needed
    cov.matvec(np.eye(25)[:, 12])
    assert cov.round_trips == t0 + 2
    # a dense argument goes through the workers (more than half the features)
    np.testing.assert_allclose(cov.matvec(np.ones(25)), A @ np.ones(25), atol=1e-11)
    assert cov.round_trips == t0 + 3


def test_column_cache_cuts_the_passes_of_tpower(client, monkeypatch):
    """TPower's ascent on streamed data: one pass per step without the cache, far fewer with it;
    the same x."""
    Z = _planted(m=300, n=40, seed=4)
    X = da.from_array(Z, chunks=(100, Z.shape[1]))
    monkeypatch.setattr(nd, "_FULL_GRAM_BYTES", 0)
    cov = as_dask_cov(X, client=client, persist=False)
    r = nspca_core.fit(cov, k=5, method="tpower", certify=False)
    with_cache = cov.round_trips
    monkeypatch.setattr(nd, "_COLUMN_CACHE_BYTES", 0)
    cov0 = as_dask_cov(X, client=client, persist=False)
    r0 = nspca_core.fit(cov0, k=5, method="tpower", certify=False)
    np.testing.assert_allclose(r.x, r0.x, atol=1e-10)
    assert r.info["iterations"] + 1 < cov0.round_trips
    assert with_cache < cov0.round_trips - r.info["iterations"] // 2
