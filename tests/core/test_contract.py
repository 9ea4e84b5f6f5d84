"""One contract for every container (issue 36): the same data give the same answer whether they come
as a NumPy array, a DataFrame, an ``np.memmap``, float32, CSR, CSC, weighted with equal weights, or a
Dask array; centered by default, used as given with ``center=False``; ``random_state`` the one name of
the randomness; components ordered like PCA; the estimator's variances with scikit-learn's m - 1."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, Phase, given, settings, strategies as st

import nspca_core as nc
from nspca_core._common.params import DEFAULTS
from nspca_core.methods import STRATEGIES, STRATEGY_NAMES
from nspca_core.operators.covariance import as_cov
from nspca_core.operators import covariance as _covariance

RTOL = 1e-9
#: every example runs each container through four entry points: no shrinking (minutes per failure);
#: a failure prints the example, which reproduces it
NO_SHRINK = [Phase.explicit, Phase.reuse, Phase.generate]


def _data(seed: int, m: int, n: int, density: float) -> np.ndarray:
    """Nonnegative data exactly representable in float32 (so every container holds the same matrix)
    with a few exact zeros (so the sparse containers store fewer entries)."""
    rng = np.random.default_rng(seed)
    X = rng.gamma(2.0, 1.0, (m, n)) * (rng.random((m, n)) < density) + rng.random(n) * 3
    X[rng.random((m, n)) < 0.2] = 0.0
    return X.astype(np.float32).astype(np.float64)


def _containers(X: np.ndarray, tmp_path) -> dict:
    mm = np.memmap(tmp_path / f"x{X.shape}.dat", dtype=np.float64, mode="w+", shape=X.shape)
    mm[:] = X
    mm.flush()
    return {"numpy": X, "pandas": pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])]),
            "memmap": mm, "float32": X.astype(np.float32), "csr": sp.csr_matrix(X), "csc": sp.csc_matrix(X)}


def _same(values: dict, name: str, rtol: float = RTOL):
    ref = values["numpy"]
    for key, val in values.items():
        assert val == pytest.approx(ref, rel=rtol, abs=1e-12), f"{name}: {key} {val!r} vs numpy {ref!r}"


def _brute_centered(X, k):
    """max x^T A x over supports of size <= k of the centered covariance (tiny n): the top
    eigenvalue of each principal submatrix with a one-signed eigenvector bounds nothing here; we only
    need A itself to compare variances."""
    Xc = X - X.mean(axis=0)
    return Xc.T @ Xc / X.shape[0]


seeds = st.integers(0, 2**31 - 1)
shapes = st.tuples(st.integers(6, 30), st.integers(3, 9))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture],
          phases=NO_SHRINK)
@given(seed=seeds, shape=shapes, density=st.floats(0.3, 1.0), k=st.integers(1, 4))
def test_every_container_gives_one_answer(tmp_path, seed, shape, density, k):
    X = _data(seed, *shape, density)
    k = min(k, X.shape[1])
    A = _brute_centered(X, k)
    fits, supports, bounds, path_bounds, comps = {}, {}, {}, {}, {}
    for key, data in _containers(X, tmp_path).items():
        res = nc.fit(data, k=k)
        assert res.info["centered"] is True
        np.testing.assert_allclose(res.info["mean"], X.mean(axis=0), rtol=1e-12, atol=1e-12)
        assert res.variance == pytest.approx(res.x @ A @ res.x, rel=1e-9, abs=1e-12)  # the centered covariance
        fits[key], supports[key], bounds[key] = res.variance, tuple(res.support), res.upper_bound
        path_bounds[key] = tuple(c.upper_bound for c in nc.certify_path(data, ks=[1, k]))
        cr = nc.components(data, n_components=2, k=min(k, max(1, X.shape[1] // 2)), certify=False)
        comps[key] = float(np.sum(cr.variance))
    # weighted with equal weights: the same covariance
    w = nc.fit(X, k=k, sample_weight=np.full(X.shape[0], 2.5))
    fits["weighted"], supports["weighted"], bounds["weighted"] = w.variance, tuple(w.support), w.upper_bound
    ws = nc.fit(sp.csr_matrix(X), k=k, sample_weight=np.ones(X.shape[0]))
    fits["weighted-csr"], supports["weighted-csr"] = ws.variance, tuple(ws.support)
    _same(fits, "fit variance")
    _same(bounds, "fit upper bound")
    _same(comps, "components total variance")
    for key, pb in path_bounds.items():
        for a, b in zip(pb, path_bounds["numpy"]):
            assert a == pytest.approx(b, rel=RTOL), f"certify_path: {key}"
    assert len(set(supports.values())) == 1, supports


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture],
          phases=NO_SHRINK)
@given(seed=seeds, shape=shapes, k=st.integers(1, 4))
def test_center_false_uses_data_as_given_for_every_container(tmp_path, seed, shape, k):
    X = _data(seed, *shape, 0.7)
    k = min(k, X.shape[1])
    A0 = X.T @ X / X.shape[0]
    values, supports = {}, {}
    for key, data in _containers(X, tmp_path).items():
        res = nc.fit(data, k=k, center=False)
        assert res.info["centered"] is False and res.info["mean"] is None
        assert res.variance == pytest.approx(res.x @ A0 @ res.x, rel=1e-9)
        values[key], supports[key] = res.variance, tuple(res.support)
        cert = nc.certify(data, k=k, x=res.x, center=False)
        assert cert.upper_bound >= res.variance * (1 - 1e-12)
    _same(values, "fit(center=False) variance")
    assert len(set(supports.values())) == 1


def test_cov_is_never_centered():
    rng = np.random.default_rng(0)
    B = rng.random((5, 5)) + 1.0
    A = B @ B.T
    res = nc.fit(cov=A, k=2)
    assert res.info["centered"] is False
    assert res.variance == pytest.approx(res.x @ A @ res.x, rel=1e-12)
    # center=False changes nothing for a covariance
    assert nc.fit(cov=A, k=2, center=False).variance == res.variance


def test_centered_without_a_copy_when_memory_is_short(monkeypatch):
    """Above a quarter of the available memory a dense X is centered implicitly (no copy): the same
    answer as the centered copy, and the caller's array untouched."""
    X = _data(3, 40, 12, 0.8)
    before = X.copy()
    ref = nc.fit(X, k=4)
    monkeypatch.setattr(_covariance, "available_memory", lambda: 4.0 * X.nbytes - 1)
    op = as_cov(X)
    assert type(op).__name__ == "CenteredDenseCov" and op.X_sparse is X
    res = nc.fit(X, k=4)
    assert res.variance == pytest.approx(ref.variance, rel=RTOL)
    assert res.upper_bound == pytest.approx(ref.upper_bound, rel=RTOL)
    assert tuple(res.support) == tuple(ref.support)
    np.testing.assert_array_equal(X, before)
    np.testing.assert_allclose(op.diag(), np.var(X, axis=0), rtol=1e-12)
    np.testing.assert_allclose(op.submatrix([1, 3]), np.cov(X[:, [1, 3]].T, ddof=0), rtol=1e-12)


def test_caller_arrays_are_never_modified():
    X = _data(5, 20, 6, 0.9)
    for data in (X, X.astype(np.float32), pd.DataFrame(X)):
        copy = np.array(data, copy=True)
        nc.fit(data, k=3)
        np.testing.assert_array_equal(np.asarray(data), copy)


def test_random_state_is_the_name_and_seed_is_deprecated():
    X = _data(1, 30, 8, 0.8)
    a = nc.fit(X, k=3, method="tpower", random_state=4)
    with pytest.warns(DeprecationWarning, match="random_state"):
        b = nc.fit(X, k=3, method="tpower", seed=4)
    assert a.variance == b.variance and tuple(a.support) == tuple(b.support)
    with pytest.warns(DeprecationWarning, match="random_state"):
        nc.components(X, n_components=2, k=2, seed=1, certify=False)
    with pytest.raises(nc.InputError, match="random_state"):
        nc.fit(X, k=3, random_state=2, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nc.fit(X, k=3, random_state=np.random.default_rng(0), certify=False)
        nc.fit(X, k=3, random_state=np.random.RandomState(0), certify=False)
    with pytest.raises(nc.InputError, match="random_state"):
        nc.fit(X, k=3, random_state=-1)


def test_one_set_of_defaults():
    import inspect

    from nspca_core.estimator import NonnegativeSparsePCA

    fit, comps = inspect.signature(nc.fit).parameters, inspect.signature(nc.components).parameters
    est = inspect.signature(NonnegativeSparsePCA).parameters
    for name in ("method", "d", "eps", "certify", "center", "random_state"):
        assert fit[name].default == DEFAULTS[name] == comps[name].default
    for name in ("method", "d", "eps", "certify", "strategy"):
        assert est[name].default == DEFAULTS[name]
    from nspca_core.cli.options import _parser

    args = _parser().parse_args(["fit", "digits", "--k", "3", "--out", "x"])
    assert (args.method, args.strategy, args.eps, args.d) == (DEFAULTS["method"], DEFAULTS["strategy"],
                                                              DEFAULTS["eps"], DEFAULTS["d"])


@settings(max_examples=20, deadline=None, phases=NO_SHRINK)
@given(seed=seeds, strategy=st.sampled_from(STRATEGY_NAMES))
def test_components_come_in_decreasing_variance(seed, strategy):
    X = _data(seed, 25, 9, 0.7)
    cr = nc.components(X, n_components=3, k=2, strategy=strategy, certify=False)
    if STRATEGIES[strategy].disjoint:
        key = cr.variance
        assert np.all(np.diff(key) <= 1e-12 * max(1.0, float(key[0])))
    else:  # at each place the component that adds the most after the ones before it (brute force)
        from nspca_core._common.summary import variance_summary
        from nspca_core.operators.cov import Cov

        A = np.cov(X, rowvar=False, bias=True)
        L = cr.loadings
        for j in range(L.shape[1] - 1):
            adds = [variance_summary(Cov(A=A), L[:, list(range(j)) + [i]])[2][-1] for i in range(j, L.shape[1])]
            assert adds[0] >= max(adds) - 1e-9 * max(1.0, float(cr.additional_variance[0])), (j, adds)
    order = cr.info.get("extraction_order")
    if order is not None:
        assert sorted(order) == list(range(cr.n_components))
    for j, res in enumerate(cr.results):  # each result follows its loading (deflation-remove: on the rest)
        if res.x.size == cr.loadings.shape[0]:
            np.testing.assert_allclose(res.x, cr.loadings[:, j], atol=1e-12)
        np.testing.assert_allclose(np.sort(res.x[res.x > 0]), np.sort(cr.loadings[cr.supports[j], j]), atol=1e-12)


def test_estimator_variances_follow_scikit_learn():
    from sklearn.decomposition import PCA

    from nspca_core.estimator import NonnegativeSparsePCA

    X = _data(7, 40, 6, 1.0)
    est = NonnegativeSparsePCA(n_components=1, k=6, random_state=0).fit(X)
    pca = PCA(n_components=1).fit(X)
    # k = n and a one-signed top eigenvector: the first PC itself, so the variances agree (m - 1)
    if np.all(pca.components_[0] >= 0) or np.all(pca.components_[0] <= 0):
        assert est.explained_variance_[0] == pytest.approx(pca.explained_variance_[0], rel=1e-8)
        assert est.explained_variance_ratio_[0] == pytest.approx(pca.explained_variance_ratio_[0], rel=1e-8)
    m = X.shape[0]
    assert est.explained_variance_[0] == pytest.approx(est.result_.variance[0] * m / (m - 1), rel=1e-12)


@pytest.fixture(scope="module")
def client():
    """A real distributed.LocalCluster (threads in this process: the tests' data stay small)."""
    pytest.importorskip("dask.array")
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                       dashboard_address=None)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture],
          phases=NO_SHRINK)
@given(seed=seeds, shape=st.tuples(st.integers(12, 40), st.integers(4, 9)), k=st.integers(1, 4),
       center=st.booleans())
def test_dask_gives_the_numpy_answer(client, seed, shape, k, center):
    import dask.array as da

    X = _data(seed, *shape, 0.8)
    k = min(k, X.shape[1])
    ref = nc.fit(X, k=k, method="tpower", center=center)
    got = nc.fit(da.from_array(X, chunks=(7, -1)), k=k, method="tpower", center=center, client=client)
    assert got.info["centered"] is center
    assert got.variance == pytest.approx(ref.variance, rel=RTOL)
    assert tuple(got.support) == tuple(ref.support)
    assert got.upper_bound == pytest.approx(ref.upper_bound, rel=RTOL)


@settings(max_examples=8, deadline=None, phases=NO_SHRINK)
@given(seed=seeds, shape=shapes, k=st.integers(1, 3))
def test_estimator_gives_one_answer_for_every_container(seed, shape, k):
    from nspca_core.estimator import NonnegativeSparsePCA

    X = _data(seed, *shape, 0.8)
    est = {name: NonnegativeSparsePCA(n_components=2, k=k, random_state=0).fit(data)
           for name, data in (("numpy", X), ("pandas", pd.DataFrame(X)), ("csr", sp.csr_matrix(X)),
                              ("float32", X.astype(np.float32)))}
    ref = est["numpy"]
    for name, e in est.items():
        np.testing.assert_allclose(e.explained_variance_, ref.explained_variance_, rtol=RTOL, err_msg=name)
        np.testing.assert_allclose(e.components_, ref.components_, rtol=1e-7, atol=1e-9, err_msg=name)
    # the functional API on the same data: the same components, variances on its 1/m scale
    cr = nc.components(X, n_components=2, k=k, random_state=0)
    m = X.shape[0]
    np.testing.assert_allclose(ref.explained_variance_, cr.variance * m / (m - 1), rtol=RTOL)


def test_data_centered_by_the_caller_are_not_copied():
    X = _data(9, 30, 7, 0.9)
    Xc = X - X.mean(axis=0)
    op = as_cov(Xc)
    assert op.X is Xc and op.center is True  # centered to rounding: used as it is
    assert as_cov(X).X is not X  # not centered: a centered copy
    assert nc.fit(Xc, k=3).variance == pytest.approx(nc.fit(X, k=3).variance, rel=RTOL)


def test_the_estimator_reads_an_in_memory_anndata():
    anndata = pytest.importorskip("anndata")
    from nspca_core.estimator import NonnegativeSparsePCA

    X = _data(11, 40, 8, 0.9)
    names = [f"g{j}" for j in range(8)]
    dense = anndata.AnnData(X=X.copy())
    dense.var_names = names
    ref = NonnegativeSparsePCA(2, k=3, random_state=0, certify=False).fit(X)
    for adata in (dense, anndata.AnnData(X=sp.csr_matrix(X))):
        est = NonnegativeSparsePCA(2, k=3, random_state=0, certify=False).fit(adata)
        np.testing.assert_allclose(est.components_, ref.components_, atol=1e-9)
        assert est.transform(adata).shape == (40, 2)
    est = NonnegativeSparsePCA(2, k=3, random_state=0, certify=False).fit(dense)
    assert list(est.feature_names_in_) == names
