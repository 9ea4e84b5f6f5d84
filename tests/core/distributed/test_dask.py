"""The Dask path (nspca_core.distributed.array, through the public fit/components) on a real
distributed.LocalCluster equals the in-memory path.

Every answer is compared with the in-memory solvers on the same data centered
and densified in the test (1e-8), and the operator's products with a brute-force
covariance formed here.  Skipped cleanly when the optional extra is missing.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("dask.array", reason="the optional Dask extra (dask[array]) is not installed")
pytest.importorskip("distributed", reason="the optional Dask extra (distributed) is not installed")

import dask.array as da  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import nspca_core  # noqa: E402
from nspca_core import InputError  # noqa: E402
from nspca_core.operators.cov import Cov  # noqa: E402
from nspca_core.distributed.array import DaskCov, as_dask_cov  # noqa: E402
from nspca_core.peers.bipartite import deflation_components  # noqa: E402

TOL = 1e-8


@pytest.fixture(scope="module")
def client():
    """Two workers (threads of this process, one thread each: light on a 2-core machine);
    :func:`test_worker_processes` runs a cluster of worker processes."""
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                           dashboard_address=None, worker_dashboard_address=None)
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


def _dense_data(m=60, n=20, seed=0):
    """Low-rank signal plus noise with a nonzero mean and distinct variances."""
    rng = np.random.default_rng(seed)
    scale = np.linspace(3.0, 0.5, 4)
    Z = (rng.standard_normal((m, 4)) * scale) @ rng.standard_normal((4, n))
    return Z + 0.3 * rng.standard_normal((m, n)) + rng.uniform(0.5, 2.0, n)


def _sparse_data(m=70, n=20, seed=0):
    """Sparse nonnegative data with continuous values (no exactly tied variances)."""
    S = sp.random(m, n, density=0.25, format="csr", random_state=seed)
    # a shared direction makes a clear top eigenvalue
    rows = np.random.default_rng(seed).random(m) < 0.4
    S = S + sp.csr_matrix(np.outer(rows, np.r_[np.ones(5), np.zeros(n - 5)]) * 0.7)
    return sp.csr_matrix(S)


def _centered(Z):
    Z = Z.toarray() if sp.issparse(Z) else np.asarray(Z)
    return Z - Z.mean(axis=0)


@pytest.fixture(scope="module")
def dense_case(client):
    Z = _dense_data()
    X = da.from_array(Z, chunks=((12, 20, 18, 10), 20))  # uneven row blocks
    return Z, as_dask_cov(X, client=client)


@pytest.fixture(scope="module")
def sparse_case(client):
    S = _sparse_data()
    X = da.from_array(S, chunks=(25, S.shape[1]), asarray=False)  # scipy.sparse CSR chunks
    return S, as_dask_cov(X, client=client)


@pytest.fixture(params=["dense", "sparse"])
def case(request, dense_case, sparse_case):
    return dense_case if request.param == "dense" else sparse_case


def _dask_array(Z):
    """Z as the dask array the fixtures wrap (uneven dense row blocks; CSR chunks)."""
    if sp.issparse(Z):
        return da.from_array(Z, chunks=(25, Z.shape[1]), asarray=False)
    return da.from_array(Z, chunks=((12, 20, 18, 10), Z.shape[1]))


# --------------------------------------------------------------------------- the operator
def test_blocks_stay_sparse_and_on_the_workers(sparse_case, client):
    _, cov = sparse_case
    assert sp.issparse(cov.X_dask._meta)
    block = cov.X_dask.blocks[0].compute(scheduler=client)
    assert sp.issparse(block) and block.format == "csc"
    assert cov.X is None and not cov.thin
    assert set(client.has_what()) and any(client.has_what().values())  # persisted on workers


def test_mean_diag_submatrix_equal_brute_force(case):
    Z, cov = case
    Xc = _centered(Z)
    A = Xc.T @ Xc / Xc.shape[0]
    Zd = Z.toarray() if sp.issparse(Z) else Z
    np.testing.assert_allclose(cov.mean, Zd.mean(axis=0), rtol=0, atol=1e-12)
    np.testing.assert_allclose(cov.diag(), np.diag(A), rtol=0, atol=1e-12)
    assert abs(cov.trace() - np.trace(A)) < 1e-10
    J = [7, 2, 11, 0, 19]
    np.testing.assert_allclose(cov.submatrix(J), A[np.ix_(J, J)], rtol=0, atol=1e-12)
    np.testing.assert_allclose(cov.dense(), A, rtol=0, atol=1e-12)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), p=st.integers(1, 4), nnz=st.integers(1, 20))
def test_products_equal_brute_force(case, seed, p, nnz):
    """matvec/quads/quad for dense and for sparse arguments (the ascent's iterates)."""
    Z, cov = case
    Xc = _centered(Z)
    A = Xc.T @ Xc / Xc.shape[0]
    rng = np.random.default_rng(seed)
    v = np.zeros((cov.n, p))
    rows = rng.choice(cov.n, size=min(nnz, cov.n), replace=False)
    v[rows] = rng.standard_normal((rows.size, p))
    np.testing.assert_allclose(cov.matvec(v), A @ v, rtol=0, atol=1e-11 * max(1, np.abs(A).max()))
    np.testing.assert_allclose(cov.matvec(v[:, 0]), A @ v[:, 0], rtol=0, atol=1e-10)
    np.testing.assert_allclose(cov.quads(v), np.einsum("ij,ij->j", v, A @ v), rtol=1e-10, atol=1e-10)
    assert abs(cov.quad(v[:, 0]) - v[:, 0] @ A @ v[:, 0]) < 1e-10 * max(1.0, abs(v[:, 0] @ A @ v[:, 0]))


@pytest.mark.parametrize("kind", ["dense", "sparse"])
def test_products_without_the_client_cache(client, monkeypatch, kind):
    """quads/submatrix through the workers' scores and Grams (cache of A entries disabled)."""
    import nspca_core.distributed.array as nd

    monkeypatch.setattr(nd, "_GRAM_CACHE_MAX", 0)
    Z = _dense_data(seed=11) if kind == "dense" else _sparse_data(seed=11)
    chunks = (25, Z.shape[1])
    X = da.from_array(Z, chunks=chunks, asarray=False) if kind == "sparse" else da.from_array(Z, chunks=chunks)
    cov = as_dask_cov(X, client=client)
    Xc = _centered(Z)
    A = Xc.T @ Xc / Xc.shape[0]
    rng = np.random.default_rng(1)
    v = rng.standard_normal((cov.n, 3))
    v[rng.random(cov.n) < 0.7, 1] = 0.0  # a sparse column
    np.testing.assert_allclose(cov.quads(v), np.einsum("ij,ij->j", v, A @ v), rtol=1e-10)
    J = [3, 0, 17, 9]
    np.testing.assert_allclose(cov.submatrix(J), A[np.ix_(J, J)], rtol=0, atol=1e-12)
    assert "gram" not in cov._shared or cov._shared["gram"]["F"].size == 0


def test_columns_view_equals_the_submatrix_covariance(case):
    Z, cov = case
    Xc = _centered(Z)
    keep = np.array([1, 4, 5, 9, 12, 13, 15, 16, 18, 19])
    sub = cov.columns(keep)
    A = Xc[:, keep].T @ Xc[:, keep] / Xc.shape[0]
    v = np.random.default_rng(3).standard_normal((keep.size, 2))
    np.testing.assert_allclose(sub.matvec(v), A @ v, rtol=0, atol=1e-11)
    np.testing.assert_allclose(sub.diag(), np.diag(A), rtol=0, atol=1e-12)
    np.testing.assert_allclose(sub.submatrix([0, 3]), A[np.ix_([0, 3], [0, 3])], atol=1e-12)
    V, eig = sub.factor(2)
    V0, eig0 = nspca_core.lowrank_factor(Xc[:, keep], d=2)
    np.testing.assert_allclose(eig, eig0, rtol=TOL, atol=TOL)
    np.testing.assert_allclose(V, V0, rtol=0, atol=TOL)
    sub2 = sub.columns([0, 2, 4])  # a view of a view
    np.testing.assert_allclose(sub2.diag(), np.diag(A)[[0, 2, 4]], atol=1e-12)


def test_uncentered(client):
    Z = _dense_data(seed=5)
    cov = as_dask_cov(da.from_array(Z, chunks=(40, Z.shape[1])), center=False, client=client)
    A = Z.T @ Z / Z.shape[0]
    np.testing.assert_allclose(cov.mean, 0.0)
    np.testing.assert_allclose(cov.matvec(np.eye(Z.shape[1])[:, :3]), A[:, :3], atol=1e-11)
    V, eig = cov.factor(2)
    V0, eig0 = nspca_core.lowrank_factor(Z, d=2)
    np.testing.assert_allclose(eig, eig0, rtol=TOL)
    np.testing.assert_allclose(V, V0, atol=TOL)


# --------------------------------------------------------------------------- factor
@pytest.mark.parametrize("d", [1, 3])
def test_factor_equals_lowrank_factor(case, d):
    """Same V (signs, order, scaling by 1/m) and λ_1..λ_{d+1} as the in-memory factor."""
    Z, cov = case
    V, eig = cov.factor(d)
    V0, eig0 = nspca_core.lowrank_factor(_centered(Z), d=d)
    assert V.shape == (cov.n, d) and eig.shape == (d + 1,)
    np.testing.assert_allclose(eig, eig0, rtol=TOL, atol=TOL)
    np.testing.assert_allclose(V, V0, rtol=0, atol=TOL)
    assert cov.factor_info["converged"]


def test_factor_iterates_when_the_block_is_smaller_than_the_rank(dense_case, monkeypatch):
    """oversample=0: l = d + 1 < rank, so several rounds of subspace iteration are needed
    (products through the workers: with the client's n x n cache the factor is a dense eigh)."""
    monkeypatch.setattr("nspca_core.distributed.array._GRAM_CACHE_MAX", 0)
    Z, cov = dense_case
    V, eig = cov.factor(2, oversample=0, tol=1e-12, max_iter=2000)
    V0, eig0 = nspca_core.lowrank_factor(_centered(Z), d=2)
    assert cov.factor_info["iterations"] > 2 and cov.factor_info["block"] == 3
    np.testing.assert_allclose(eig, eig0, rtol=TOL)
    np.testing.assert_allclose(V, V0, atol=1e-7)


def test_factor_warns_when_not_converged(client, monkeypatch):
    monkeypatch.setattr("nspca_core.distributed.array._GRAM_CACHE_MAX", 0)  # subspace iteration, not eigh
    Z = _dense_data(seed=9)
    cov = as_dask_cov(da.from_array(Z, chunks=(20, 20)), client=client)
    with pytest.warns(RuntimeWarning, match="did not reach tol"):
        cov.factor(3, oversample=0, max_iter=1)
    assert cov.factor_info["converged"] is False


def test_feature_chunks_are_merged(client):
    Z = _dense_data(seed=2)
    cov = as_dask_cov(da.from_array(Z, chunks=(30, 6)), client=client)
    assert cov.X_dask.numblocks[1] == 1
    V0, eig0 = nspca_core.lowrank_factor(_centered(Z), d=2)
    np.testing.assert_allclose(cov.factor(2)[1], eig0, rtol=TOL)


# --------------------------------------------------------------------------- solvers (the public front)
def _check_fit(Z, client, method, k):
    d = 2 if method == "spannogram" else 3
    opts = {"restarts": 3} if method in ("tpower", "em") else {}
    r = nspca_core.fit(_dask_array(Z), k=k, method=method, d=d, certify=False, client=client, **opts)
    r0 = nspca_core.fit(_centered(Z), k=k, method=method, d=d, certify=False, **opts)
    np.testing.assert_allclose(r.x, r0.x, rtol=0, atol=TOL)
    np.testing.assert_array_equal(r.support, r0.support)
    assert abs(r.variance - r0.variance) <= TOL * max(1.0, r0.variance)
    assert r.method == r0.method and r.info["dask"]["factor"] is not None


@pytest.mark.parametrize("method,k", [("tpower", 5), ("em", 4), ("spannogram", 3)])
def test_fit_equals_fit_in_memory(case, client, method, k):
    _check_fit(case[0], client, method, k)


@pytest.mark.parametrize("method,k", [("enet", 6), ("auto", 4)])
def test_fit_factor_methods_equal_fit_in_memory(dense_case, client, method, k):
    _check_fit(dense_case[0], client, method, k)


def test_fit_tpower_non_convergence_warns(dense_case, client):
    with pytest.warns(RuntimeWarning, match="did not converge in max_iter=1"):
        nspca_core.fit(_dask_array(dense_case[0]), k=3, method="tpower", max_iter=1, certify=False, client=client)


def test_fit_takes_a_dask_array_and_the_default_client(client):
    """A plain dask array, no client argument: the Client created above is Dask's default."""
    S = _sparse_data(seed=4)
    r = nspca_core.fit(_dask_array(S), k=4, method="tpower", restarts=2, certify=False)
    r0 = nspca_core.fit(_centered(S), k=4, method="tpower", certify=False, restarts=2)
    np.testing.assert_allclose(r.x, r0.x, atol=TOL)
    assert r.params["restarts"] == 2 and r.params["method"] == "tpower"


def test_components_bipartite_equals_in_memory(case, client):
    Z, _ = case
    c = nspca_core.components(_dask_array(Z), n_components=3, k=4, strategy="bipartite", client=client)
    c0 = nspca_core.components(_centered(Z), n_components=3, k=4, strategy="bipartite")
    np.testing.assert_allclose(c.loadings, c0.loadings, rtol=0, atol=TOL)
    np.testing.assert_allclose(c.cumulative_variance, c0.cumulative_variance, rtol=TOL)
    supports = [set(s) for s in c.supports]
    assert all(not (a & b) for i, a in enumerate(supports) for b in supports[i + 1:])


@pytest.mark.parametrize("strategy", ["deflation-remove", "deflation-project"])
def test_components_deflation_equals_in_memory(dense_case, client, strategy):
    Z, _ = dense_case
    c = nspca_core.components(_dask_array(Z), n_components=3, k=4, strategy=strategy, method="tpower", d=3,
                              client=client)
    c0 = nspca_core.components(_centered(Z), n_components=3, k=4, strategy=strategy, method="tpower", d=3)
    np.testing.assert_allclose(c.loadings, c0.loadings, rtol=0, atol=TOL)


@pytest.mark.parametrize("method", ["tpower", "spannogram"])
def test_deflation_baselines_on_the_operator_equal_in_memory(dense_case, method):
    """The 2015 paper's baselines run unchanged on the Dask operator (views of the features)."""
    Z, cov = dense_case
    c = deflation_components(cov, 3, 4, method=method, d=3)
    c0 = deflation_components(Cov(_centered(Z)), 3, 4, method=method, d=3)
    np.testing.assert_allclose(c.loadings, c0.loadings, rtol=0, atol=TOL)


def test_pydata_sparse_chunks(client):
    sparse = pytest.importorskip("sparse", reason="the pydata `sparse` package is not installed")
    S = _sparse_data(seed=6)
    X = da.from_array(sparse.COO.from_scipy_sparse(S), chunks=(25, S.shape[1]), asarray=False)
    cov = as_dask_cov(X, client=client)
    V0, eig0 = nspca_core.lowrank_factor(_centered(S), d=3)
    np.testing.assert_allclose(cov.factor(3)[0], V0, atol=TOL)


# --------------------------------------------------------------------------- errors
def test_not_a_dask_array():
    with pytest.raises(InputError, match=r"`X` must be a dask.array.Array .*got ndarray"):
        as_dask_cov(np.ones((4, 3)))


def test_bad_arrays(client):
    with pytest.raises(InputError, match=r"`X` must be 2-D; got 1-D"):
        as_dask_cov(da.ones(5, chunks=2))
    Z = np.ones((6, 3))
    Z[2, 1] = np.nan
    with pytest.raises(InputError, match=r"`X` must be finite; got 1 NaN/inf"):
        as_dask_cov(da.from_array(Z, chunks=(3, 3)), client=client)
    S = sp.random(8, 4, density=0.5, format="csr", random_state=0)
    S.data[0] = np.inf
    with pytest.raises(InputError, match=r"`X` must be finite; got 1 NaN/inf"):
        as_dask_cov(da.from_array(S, chunks=(4, 4), asarray=False), client=client)
    with pytest.raises(InputError, match=r"`X` must hold real numbers; got dtype complex128"):
        as_dask_cov(da.ones((3, 3), chunks=3, dtype=complex))
    with pytest.raises(InputError, match=r"known chunk sizes"):
        x = da.ones((6, 3), chunks=(3, 3))
        as_dask_cov(x[x[:, 0] > 0])
    with pytest.raises(InputError, match=r"`center` must be True or False; got 1"):
        as_dask_cov(da.ones((3, 3), chunks=3), center=1)
    with pytest.raises(InputError, match=r"`client` must be a distributed.Client or None; got str"):
        as_dask_cov(da.ones((3, 3), chunks=3), client="tcp://host:8786")


def test_bad_options(dense_case, client):
    Z, cov = dense_case
    X = _dask_array(Z)
    with pytest.raises(InputError, match=r"`method` must be one of 'tpower', .* for Dask data; got 'zass'"):
        nspca_core.fit(X, k=3, method="zass", client=client)
    with pytest.raises(InputError, match=r"unknown option\(s\) \['bogus'\] for method 'tpower'"):
        nspca_core.fit(X, k=3, method="tpower", bogus=1, client=client)
    with pytest.raises(InputError, match=r"`k` must be an int in \[1, n_features=20\]"):
        nspca_core.fit(X, k=0, client=client)
    with pytest.raises(InputError, match=r"`strategy` must be one of 'deflation-remove', 'deflation-project', "
                                         r"'bipartite' for Dask data; got 'quasi-orthogonal'"):
        nspca_core.components(X, n_components=2, k=3, strategy="quasi-orthogonal", client=client)
    with pytest.raises(InputError, match=r"unknown option\(s\) \['restarts'\] for strategy 'bipartite'"):
        nspca_core.components(X, n_components=2, k=3, strategy="bipartite", restarts=3, client=client)
    with pytest.raises(InputError, match=r"`tol` must be a float in \(0, 1\); got 0"):
        cov.factor(2, tol=0)


def test_dense_refused_over_budget(client):
    Z = _dense_data(seed=1)
    cov = as_dask_cov(da.from_array(Z, chunks=(30, 20)), client=client, dense_budget=100)
    with pytest.raises(InputError, match=r"dense 20 x 20 covariance .* over the budget"):
        cov.dense()


def test_missing_dask_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "dask", None)
    monkeypatch.setitem(sys.modules, "dask.array", None)
    with pytest.raises(InputError, match=r"pip install 'nspca-core\[dask\]'.*distributed"):
        as_dask_cov(np.ones((3, 3)))


def test_nspca_core_does_not_import_dask():
    """``import nspca_core`` (and its solvers) must not pull Dask in."""
    import subprocess

    code = ("import sys, nspca_core, nspca_core.api, nspca_core.distributed.array; "
            "print(any(m == 'dask' or m.startswith('dask.') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_daskcov_is_a_cov(dense_case):
    _, cov = dense_case
    assert isinstance(cov, Cov) and isinstance(cov, DaskCov) and cov.m == 60 and cov.n == 20


def test_worker_processes():
    """Two worker processes: the kernels and the data really cross process borders."""
    from distributed import Client, LocalCluster

    S = _sparse_data(seed=8)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      worker_dashboard_address=None) as cluster, Client(cluster) as c:
        cov = as_dask_cov(da.from_array(S, chunks=(20, S.shape[1]), asarray=False), client=c)
        assert len(c.has_what()) == 2
        Xc = _centered(S)
        A = Xc.T @ Xc / Xc.shape[0]
        v = np.random.default_rng(0).standard_normal((cov.n, 2))
        np.testing.assert_allclose(cov.matvec(v), A @ v, rtol=0, atol=1e-12)
        V0, eig0 = nspca_core.lowrank_factor(Xc, d=2)
        V, eig = cov.factor(2)
        np.testing.assert_allclose(eig, eig0, rtol=TOL)
        np.testing.assert_allclose(V, V0, atol=TOL)
