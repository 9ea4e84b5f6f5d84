"""Dask data through the public front: ``fit``, ``components``, ``certify``, ``certify_path``.

A ``dask.array`` is centered implicitly and runs on the Dask operator; every answer equals the
in-memory answer on the same data centered with NumPy.  The cluster is a LocalCluster started
here (threads of this process: light on a 2-core machine).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("dask.array", reason="the optional Dask extra (dask[array]) is not installed")
pytest.importorskip("distributed", reason="the optional Dask extra (distributed) is not installed")

import dask.array as da  # noqa: E402

import nspca_core as nc  # noqa: E402
from nspca_core import InputError  # noqa: E402
from nspca_core.distributed.array import decide_persist  # noqa: E402

TOL = 1e-8


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=False, memory_limit="4GB",
                           dashboard_address=None, worker_dashboard_address=None)
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


def _data(m=80, n=16, seed=0):
    """Low-rank signal, noise and a large mean: the uncentered answer is far from the centered one."""
    rng = np.random.default_rng(seed)
    Z = (rng.standard_normal((m, 3)) * [3.0, 1.5, 0.7]) @ rng.standard_normal((3, n))
    return Z + 0.3 * rng.standard_normal((m, n)) + rng.uniform(8.0, 12.0, n)


def _centered(Z):
    Z = Z.toarray() if sp.issparse(Z) else np.asarray(Z)
    return Z - Z.mean(axis=0)


@pytest.fixture(scope="module")
def dense(client):
    Z = _data()
    return Z, da.from_array(Z, chunks=(25, Z.shape[1]))


@pytest.mark.parametrize("method", ["auto", "tpower", "spannogram"])
def test_fit_equals_in_memory_on_centered_data(dense, client, method):
    Z, X = dense
    r = nc.fit(X, k=4, method=method, client=client)
    r0 = nc.fit(_centered(Z), k=4, method=method)
    np.testing.assert_allclose(r.x, r0.x, rtol=0, atol=TOL)
    assert abs(r.variance - r0.variance) <= TOL * r0.variance
    assert abs(r.upper_bound - r0.upper_bound) <= 1e-6 * r0.upper_bound
    # never the uncentered answer: X^T X / m is dominated by the means (center=False asks for it)
    raw = nc.fit(Z, k=4, method=method, certify=False, center=False)
    assert raw.variance > 2 * r.variance
    assert nc.fit(Z, k=4, method=method, certify=False).variance == pytest.approx(r.variance, rel=TOL)
    assert r.info["dask"]["persist"]["persist"] is True
    assert any("persisted" in note for note in r.info["notes"])


def test_fit_sparse_chunks(client):
    S = sp.random(90, 14, density=0.3, format="csr", random_state=1)
    X = da.from_array(S, chunks=(30, 14), asarray=False)
    r = nc.fit(X, k=3, method="tpower", certify=False, client=client)
    r0 = nc.fit(S, k=3, method="tpower", certify=False)  # scipy.sparse: centered implicitly too
    np.testing.assert_allclose(r.x, r0.x, rtol=0, atol=TOL)


@pytest.mark.parametrize("strategy", ["bipartite", "deflation-remove", "deflation-project"])
def test_components_equal_in_memory(dense, client, strategy):
    Z, X = dense
    c = nc.components(X, n_components=3, k=4, strategy=strategy, client=client)
    c0 = nc.components(_centered(Z), n_components=3, k=4, strategy=strategy)
    np.testing.assert_allclose(c.loadings, c0.loadings, rtol=0, atol=TOL)
    np.testing.assert_allclose(c.cumulative_variance, c0.cumulative_variance, rtol=TOL)
    assert c.info["dask"]["scheduler"] == client.scheduler.address


def test_certify_and_path_equal_in_memory(dense, client):
    Z, X = dense
    x = nc.fit(_centered(Z), k=4, certify=False).x
    cert = nc.certify(X, k=4, x=x)
    cert0 = nc.certify(_centered(Z), k=4, x=x)
    assert abs(cert.upper_bound - cert0.upper_bound) <= 1e-6 * cert0.upper_bound
    assert abs(cert.lower - cert0.lower) <= 1e-8 * cert0.lower
    path = nc.certify_path(X, ks=[2, 4])
    path0 = nc.certify_path(_centered(Z), ks=[2, 4])
    for c, c0 in zip(path, path0):
        assert abs(c.upper_bound - c0.upper_bound) <= 1e-6 * c0.upper_bound


def test_persist_decides_from_the_cluster_memory(client):
    small = da.zeros((100, 10), chunks=(50, 10))
    big = da.zeros((1_000_000, 1_000), chunks=(100_000, 1_000))  # 8 GB > 50% of 2 x 4 GB (never computed)
    s, b = decide_persist(small, client), decide_persist(big, client)
    assert s["persist"] and not b["persist"]
    assert s["memory_bytes"] == b["memory_bytes"] == 8_000_000_000
    assert "do not fit" in b["reason"] and "streamed" in b["reason"] and "2 worker(s)" in b["reason"]


def test_streamed_when_it_does_not_fit(client, monkeypatch):
    """Over the fraction, the blocks are not persisted and the answer is the same."""
    import nspca_core.distributed.array as nd

    Z = _data(seed=3)
    monkeypatch.setattr(nd, "PERSIST_FRACTION", 1e-9)
    r = nc.fit(da.from_array(Z, chunks=(20, Z.shape[1])), k=3, method="tpower", certify=False, client=client)
    r0 = nc.fit(_centered(Z), k=3, method="tpower", certify=False)
    np.testing.assert_allclose(r.x, r0.x, rtol=0, atol=TOL)
    assert r.info["dask"]["persist"]["persist"] is False
    assert any("streamed" in note for note in r.info["notes"])


def test_errors(dense, client):
    Z, X = dense
    with pytest.raises(InputError, match=r"`method` must be one of 'tpower', .* for Dask data; got 'zass'"):
        nc.fit(X, k=3, method="zass", client=client)
    with pytest.raises(InputError, match=r"`strategy` must be one of .* for Dask data; got 'quasi-orthogonal'"):
        nc.components(X, n_components=2, k=3, strategy="quasi-orthogonal", client=client)
    with pytest.raises(InputError, match=r"`sample_weight` needs in-memory data; got a dask.array.Array"):
        nc.fit(X, k=3, sample_weight=np.ones(Z.shape[0]))
    with pytest.raises(InputError, match=r"option\(s\) \['client', 'persist'\] apply to Dask data only"):
        nc.fit(Z, k=3, client=client, persist=True)
    with pytest.raises(InputError, match=r"`persist` must be True, False or 'auto'; got 'yes'"):
        nc.fit(X, k=3, persist="yes")
    with pytest.raises(InputError, match=r"a Dask covariance `cov` is not accepted"):
        nc.certify(cov=da.from_array(np.eye(3)), k=1, x=np.eye(3)[0])


@pytest.mark.parametrize("fmt", ["npy", "zarr"])
def test_cli_dask_equals_in_memory(tmp_path, fmt):
    import json

    from nspca_core.cli import main

    Z = _data(m=90, n=12, seed=5)
    path = tmp_path / f"z.{fmt}"
    if fmt == "npy":
        np.save(path, Z)
    else:
        pytest.importorskip("zarr")
        da.from_array(Z, chunks=(30, 12)).to_zarr(str(path))
    out = tmp_path / "out"
    assert main(["fit", str(path), "--dask", "--k", "3", "--components", "2", "--strategy", "bipartite",
                 "--out", str(out), "--quiet", "--no-certify"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    ref = nc.components(_centered(Z), n_components=2, k=3, strategy="bipartite")
    assert summary["parameters"]["d"] == 2 and summary["dask"] is True
    assert abs(summary["total_variance"] - float(ref.variance.sum())) <= 1e-9 * summary["total_variance"]


def test_cli_dask_errors(tmp_path, capsys):
    from nspca_core.cli import main

    np.savetxt(tmp_path / "z.csv", _data(m=10, n=4))
    assert main(["fit", str(tmp_path / "z.csv"), "--dask", "--k", "2", "--out", str(tmp_path / "o")]) == 1
    assert "--dask reads a .zarr store or a .npy file" in capsys.readouterr().err
    np.save(tmp_path / "v.npy", np.ones(5))
    assert main(["fit", str(tmp_path / "v.npy"), "--dask", "--k", "2", "--out", str(tmp_path / "o")]) == 1
    assert "2-D .npy array" in capsys.readouterr().err
    np.save(tmp_path / "z.npy", _data(m=10, n=4))
    assert main(["fit", str(tmp_path / "z.npy"), "--dask", "--k", "2", "--preprocessing", "standardize",
                 "--out", str(tmp_path / "o")]) == 1
    assert "--dask centers implicitly" in capsys.readouterr().err
