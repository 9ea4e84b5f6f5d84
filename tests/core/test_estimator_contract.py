"""The estimator scikit-learn and nsprcomp users expect (issue 30 item 4; issue 31 item 9).

Each feature is checked against the functional API or a brute force written here:
``n_components=None``, ``k`` per component, ``partial_model``, ``tol``/``max_iter``,
``n_iter_``/``n_components_``/``n_samples_``, feature names out and ``set_output``,
``score`` (and ``GridSearchCV`` without ``scoring``), sparse input with
``sample_weight`` (the weighted implicitly centered operator).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from nspca_core import InputError, NonnegativeScorePCA, NonnegativeSparsePCA, components
from nspca_core.operators.weighted import check_sample_weight, weighted_sparse_cov
from tests.bruteforce import brute_opt


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n, m = 12, 200
    W = np.zeros((n, 3))
    W[:4, 0] = 1.0
    W[6:9, 1] = 1.0
    W[9:, 2] = 1.0
    return rng.standard_normal((m, 3)) * [3.0, 2.0, 1.5] @ W.T + 0.3 * rng.standard_normal((m, n))


def _centered(X, w=None):
    w = np.ones(len(X)) if w is None else np.asarray(w, float)
    return X - w @ X / w.sum()


def _projection_fraction(X, C, mean, scale):
    """Brute force: the variance of X about ``mean`` in span(C), by an explicit projector."""
    Xc = (X - mean) / scale
    Q, _ = np.linalg.qr(C.T)  # orthonormal basis of the span (C has full row rank here)
    P = Q @ Q.T
    return float(np.sum((Xc @ P) ** 2) / np.sum(Xc ** 2))


# ----------------------------------------------------------------------------- n_components=None, k per component
def test_n_components_none_deflation_remove_uses_every_feature(data):
    est = NonnegativeSparsePCA(None, k=4, certify=False, random_state=0).fit(data)
    C = est.components_
    supports = [set(np.flatnonzero(c)) for c in C]
    assert set().union(*supports) == set(range(data.shape[1]))  # until no feature is left
    assert all(not (a & b) for i, a in enumerate(supports) for b in supports[i + 1:])  # disjoint
    assert est.n_components_ == C.shape[0] == len(est.explained_variance_) == len(est.upper_bounds_)
    ref = components(_centered(data), n_components=data.shape[1], k=4, random_state=0)
    assert np.allclose(C, ref.loadings.T)


def test_n_components_none_other_strategies(data):
    small = data[:8]  # 8 samples < 12 features: at most min(n_samples, n_features) = 8
    est = NonnegativeSparsePCA(None, k=3, strategy="deflation-project", certify=False, random_state=0).fit(small)
    assert 1 <= est.n_components_ <= 8
    total = np.sum(_centered(small) ** 2) / 8
    assert (est.additional_variance_ > 1e-10 * total).all()  # each one adds variance
    ref = components(_centered(small), n_components=8, k=3, strategy="deflation-project", random_state=0)
    assert np.allclose(est.components_, ref.loadings[:, :est.n_components_].T)
    # what was cut adds nothing (the data's variance is exhausted)
    assert np.all(ref.additional_variance[est.n_components_:] <= 1e-10 * total)
    # rank 2 data: two components explain everything, a third would add nothing
    rng = np.random.default_rng(2)
    low = rng.standard_normal((50, 2)) @ np.abs(rng.standard_normal((2, 6)))
    two = NonnegativeSparsePCA(None, k=6, strategy="deflation-project", certify=False, random_state=0).fit(low)
    assert two.n_components_ < 6 and two.score(low) == pytest.approx(1.0)  # stopped once exhausted
    assert any("components kept; the rest add no variance" in note for note in two.result_.info["notes"])
    bip = NonnegativeSparsePCA(None, k=5, strategy="bipartite", certify=False, random_state=0).fit(data)
    assert bip.n_components_ == data.shape[1] // 5


def test_k_per_component_matches_the_functional_api(data):
    est = NonnegativeSparsePCA(None, k=[4, 2, 3], certify=False, random_state=0).fit(data)
    assert est.n_components_ == 3 and est.k_ == [4, 2, 3]
    assert (np.count_nonzero(est.components_, axis=1) <= [4, 2, 3]).all()
    ref = components(_centered(data), n_components=3, k=[4, 2, 3], random_state=0)
    assert np.allclose(est.components_, ref.loadings.T)
    clipped = NonnegativeSparsePCA(2, k=[99, 3], certify=False, random_state=0).fit(data)
    assert clipped.k_ == [12, 3]


@settings(max_examples=15, deadline=None)
@given(ks=st.lists(st.integers(1, 5), min_size=1, max_size=3),  # up to 15 nonzeros on 8 features
       strategy=st.sampled_from(["deflation-remove", "deflation-project"]), seed=st.integers(0, 50))
def test_k_per_component_is_honoured(ks, strategy, seed):
    X = np.random.default_rng(seed).standard_normal((30, 8))
    est = NonnegativeSparsePCA(None, k=ks, strategy=strategy, certify=False, random_state=seed).fit(X)
    C = est.components_
    # deflation-remove stops early when the features run out (e.g. k=[5, 5, 5] on 8 features)
    assert C.shape[0] == len(ks) if strategy == "deflation-project" else 1 <= C.shape[0] <= len(ks)
    assert (C >= 0).all() and np.allclose(np.linalg.norm(C, axis=1), 1.0)
    assert (np.count_nonzero(C, axis=1) <= ks[:C.shape[0]]).all()


def test_first_component_is_the_brute_force_optimum():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((40, 7)) @ rng.standard_normal((7, 7))
    est = NonnegativeSparsePCA(1, k=3, random_state=0).fit(X)
    Xc = _centered(X)
    opt, _ = brute_opt(Xc.T @ Xc / (len(X) - 1), 3)  # scikit-learn's PCA convention: m - 1
    assert est.explained_variance_[0] == pytest.approx(opt, rel=1e-9)


# ----------------------------------------------------------------------------- partial_model
@pytest.mark.parametrize("strategy", ["deflation-remove", "deflation-project"])
def test_partial_model_continues_the_deflation(data, strategy):
    one = NonnegativeSparsePCA(1, k=4, strategy=strategy, certify=False, random_state=0).fit(data)
    more = NonnegativeSparsePCA(3, k=4, strategy=strategy, certify=False, random_state=0,
                                partial_model=one).fit(data)
    scratch = NonnegativeSparsePCA(3, k=4, strategy=strategy, certify=False, random_state=0).fit(data)
    assert np.array_equal(more.components_[0], one.components_[0])  # kept as given
    assert np.allclose(more.components_, scratch.components_)  # the same deflation, continued
    # a ComponentsResult or the components themselves do the same
    for earlier in (one.result_, one.components_):
        again = NonnegativeSparsePCA(3, k=4, strategy=strategy, certify=False, random_state=0,
                                     partial_model=earlier).fit(data)
        assert np.allclose(again.components_, more.components_)


def test_partial_model_survives_clone_and_grid_search(data):
    one = NonnegativeSparsePCA(1, k=4, certify=False, random_state=0).fit(data)
    est = NonnegativeSparsePCA(2, k=4, certify=False, random_state=0, partial_model=one)
    assert clone(est).partial_model is one  # a fitted model is data: kept, not refitted
    gs = GridSearchCV(est, {"k": [2, 4]}, cv=2).fit(data)
    assert np.array_equal(gs.best_estimator_.components_[0], one.components_[0])


@pytest.mark.parametrize("kwargs, msg", [
    (dict(partial_model="x"), r"`partial_model` must be a fitted NonnegativeSparsePCA, a ComponentsResult "
                              r"or components of shape \(j, n_features\); got str"),
    (dict(partial_model=NonnegativeSparsePCA()), r"`partial_model` must be a fitted NonnegativeSparsePCA; "
                                                 r"got an unfitted one"),
    (dict(partial_model=np.ones((1, 5))), r"`partial_model` must hold components of 12 features "
                                          r"\(shape \(j, 12\)\), as X has; got shape \(1, 5\)"),
    (dict(partial_model=-np.ones((1, 12))), r"`partial_model` components must be finite, nonnegative and nonzero"),
    (dict(partial_model=np.ones((1, 12)), strategy="bipartite"),
     r"`partial_model` continues a deflation; strategy 'bipartite' finds all components jointly"),
    (dict(n_components=1, partial_model=np.eye(12)[:2]),
     r"`n_components`=1 is below the 2 components of `partial_model` \(n_components counts them\)"),
])
def test_partial_model_errors(data, kwargs, msg):
    with pytest.raises(InputError, match=msg):
        NonnegativeSparsePCA(**{"k": 3, "certify": False, **kwargs}).fit(data)


# ----------------------------------------------------------------------------- tol, max_iter, n_iter_
def test_tol_and_max_iter_reach_the_solver(monkeypatch, data):
    import nspca_core.api as api

    seen = {}
    real = api.components

    def spy(X=None, **kwargs):
        seen.update(kwargs)
        return real(X, **kwargs)

    monkeypatch.setattr(api, "components", spy)
    est = NonnegativeSparsePCA(2, k=3, method="tpower", tol=1e-4, max_iter=3, certify=False,
                               random_state=0).fit(data)
    assert seen["tol"] == 1e-4 and seen["max_iter"] == 3
    assert all(r.params["max_iter"] == 3 and r.params["tol"] == 1e-4 for r in est.result_.results)
    assert 1 <= est.n_iter_ <= 3
    NonnegativeSparsePCA(1, k=3, method="zass", max_iter=5, certify=False, random_state=0).fit(data)
    assert seen["max_sweeps"] == 5  # Zass–Shashua counts sweeps
    NonnegativeSparsePCA(2, k=3, strategy="quasi-orthogonal", tol=1e-3, certify=False, random_state=0).fit(data)
    assert seen["tol"] == 1e-3


def test_n_iter_counts_the_solver_iterations(data):
    est = NonnegativeSparsePCA(2, k=3, method="tpower", certify=False, random_state=0).fit(data)
    assert est.n_iter_ == max(r.info["iterations"] for r in est.result_.results) >= 1
    assert est.n_samples_ == data.shape[0] and est.n_components_ == 2


@pytest.mark.parametrize("kwargs, msg", [
    (dict(tol=1e-3), r"`tol` applies to the iterative solvers \(methods em, tpower, zass, sklearn-spca, nmf "
                     r"with a deflation strategy, or strategy 'quasi-orthogonal'\); method 'auto' with "
                     r"strategy 'deflation-remove' has none: leave tol=None"),
    (dict(max_iter=10, method="spannogram"), r"`max_iter` applies to the iterative solvers .* method "
                                             r"'spannogram' .* leave max_iter=None"),
    (dict(tol=2.0, method="tpower"), r"`tol` must be a float in \(0, 1\) or None; got 2.0"),
    (dict(max_iter=0, method="tpower"), r"`max_iter` must be an int >= 1 or None; got 0"),
    (dict(k=[3, 0]), r"`k` must be an int >= 1 or a non-empty sequence of them \(one per component\); "
                     r"got \[3, 0\]"),
    (dict(k=[]), r"`k` must be an int >= 1 or a non-empty sequence of them"),
    (dict(k=[3, 2], n_components=3), r"`k` holds 2 values, one per component; n_components=3 needs as many"),
    (dict(n_components=0), r"`n_components` must be an int >= 1 or None; got 0"),
    (dict(random_state="x"), r"`random_state` must be None, an int >= 0, a numpy RandomState or Generator; "
                             r"got 'x'"),
    (dict(random_state=-1), r"`random_state` must be None, an int >= 0, a numpy RandomState or Generator; "
                            r"got -1"),
    (dict(strategy="magic"), r"`strategy` must be one of 'deflation-remove', 'deflation-project', "
                             r"'bipartite', 'quasi-orthogonal'; got 'magic'"),
])
def test_parameter_errors_name_the_parameter(data, kwargs, msg):
    with pytest.raises(InputError, match=msg):
        NonnegativeSparsePCA(**{"k": 3, "certify": False, **kwargs}).fit(data)


def test_random_state_of_the_score_estimator_is_named():
    X = np.random.default_rng(0).standard_normal((30, 3))
    with pytest.raises(InputError, match=r"`random_state` must be None, an int >= 0"):
        NonnegativeScorePCA(random_state="x").fit(X)


def test_random_state_accepts_a_generator_and_a_randomstate(data):
    a = NonnegativeSparsePCA(1, k=3, certify=False, random_state=np.random.default_rng(1)).fit(data)
    b = NonnegativeSparsePCA(1, k=3, certify=False, random_state=np.random.RandomState(1)).fit(data)
    assert a.components_.shape == b.components_.shape == (1, 12)


# ----------------------------------------------------------------------------- feature names, set_output
def test_feature_names_out_and_pandas_output(data):
    pd = pytest.importorskip("pandas")
    cols = [f"g{i}" for i in range(data.shape[1])]
    df = pd.DataFrame(data, columns=cols)
    est = NonnegativeSparsePCA(2, k=4, certify=False, random_state=0).set_output(transform="pandas").fit(df)
    names = est.get_feature_names_out()
    assert list(names) == ["nonnegativesparsepca0", "nonnegativesparsepca1"]
    out = est.transform(df)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == list(names)
    assert list(out.index) == list(df.index)
    assert np.allclose(out.to_numpy(), est.set_output(transform="default").transform(df))
    # each component's features named from the DataFrame's columns, largest loading first
    for c, feats in zip(est.components_, est.component_features_):
        s = np.flatnonzero(c)
        assert list(feats) == [cols[j] for j in s[np.argsort(-c[s], kind="stable")]]
    with pytest.raises(ValueError, match="input_features is not equal to feature_names_in_"):
        est.get_feature_names_out(["a"] * data.shape[1])


def test_component_features_without_names(data):
    est = NonnegativeSparsePCA(1, k=2, certify=False, random_state=0).fit(data)
    s = np.flatnonzero(est.components_[0])
    assert set(est.component_features_[0]) == {f"x{j}" for j in s}


# ----------------------------------------------------------------------------- score
def test_score_is_the_explained_fraction_by_brute_force(data):
    est = NonnegativeSparsePCA(2, k=4, strategy="deflation-project", certify=False, random_state=0,
                               preprocessing="standardize").fit(data)
    new = np.random.default_rng(9).standard_normal((50, 12)) + data[:50]
    for X in (data, new):
        assert est.score(X) == pytest.approx(_projection_fraction(X, est.components_, est.mean_, est.scale_),
                                             rel=1e-10)
    # on the training data with disjoint supports: the explained variance ratios' sum
    rem = NonnegativeSparsePCA(2, k=4, certify=False, random_state=0).fit(data)
    assert rem.score(data) == pytest.approx(rem.explained_variance_ratio_.sum(), rel=1e-10)
    # weights: the fraction with weighted sums, the same as repeating rows
    w = np.random.default_rng(1).integers(0, 3, len(data))
    rep = np.repeat(data, w, axis=0)
    assert est.score(data, sample_weight=w) == pytest.approx(est.score(rep), rel=1e-10)


def test_grid_search_without_scoring_picks_the_larger_k(data):
    gs = GridSearchCV(NonnegativeSparsePCA(1, certify=False, random_state=0), {"k": [1, 2, 4]}, cv=3).fit(data)
    assert gs.best_params_ == {"k": 4}  # more nonzeros explain more variance
    assert np.all(np.diff(gs.cv_results_["mean_test_score"]) >= 0)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 1000), k=st.integers(1, 6), r=st.integers(1, 3),
       strategy=st.sampled_from(["deflation-remove", "deflation-project", "quasi-orthogonal"]),
       sparse=st.booleans())
def test_score_is_a_fraction(seed, k, r, strategy, sparse):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((25, 6)) * rng.uniform(0.1, 3, 6)
    est = NonnegativeSparsePCA(r, k=k, strategy=strategy, certify=False, random_state=seed).fit(X)
    Y = rng.standard_normal((10, 6))
    for Z in (X, Y):
        s = est.score(sp.csr_matrix(Z) if sparse else Z)
        assert 0.0 <= s <= 1.0
        assert s == pytest.approx(est.score(Z), rel=1e-9, abs=1e-12)  # sparse and dense agree


def test_score_of_data_without_variance_is_one(data):
    est = NonnegativeSparsePCA(1, k=3, certify=False, random_state=0).fit(data)
    assert est.score(np.tile(est.mean_, (4, 1))) == 1.0


# ----------------------------------------------------------------------------- sparse input with sample_weight
def _sparse_data(seed=0, m=60, n=9):
    rng = np.random.default_rng(seed)
    X = sp.random(m, n, density=0.4, random_state=seed, format="csr") * 3
    X = X + sp.csr_matrix(np.outer(rng.random(m) < 0.5, np.r_[np.ones(3), np.zeros(n - 3)]))
    return sp.csr_matrix(X), rng.integers(0, 4, m).astype(float)


def test_weighted_sparse_operator_by_brute_force():
    X, w = _sparse_data()
    D = X.toarray()
    mu = w @ D / w.sum()
    A = ((D - mu) * w[:, None]).T @ (D - mu) / w.sum()  # the weighted covariance, written out
    C = weighted_sparse_cov(X, w, dense_budget=0)  # no n x n allowed: everything by products
    v = np.random.default_rng(1).standard_normal((9, 4))
    assert np.allclose(C.matvec(v), A @ v)
    assert np.allclose(C.quads(v), np.einsum("ij,ij->j", v, A @ v))
    assert np.allclose(C.diag(), np.diag(A))
    assert np.allclose(C.submatrix([0, 4, 7]), A[np.ix_([0, 4, 7], [0, 4, 7])])
    assert np.allclose(C.data_rmatvec(C.data_matvec(v)) / C.m, A @ v)
    V, eig = C.factor(2)
    assert np.allclose(eig, np.linalg.eigvalsh(A)[::-1][:3])
    assert np.allclose(V @ V.T, (lambda e, U: (U[:, -2:] * e[-2:]) @ U[:, -2:].T)(*np.linalg.eigh(A)))
    with pytest.raises(InputError, match="over the budget"):
        C.dense()
    sub = C.columns([1, 2, 5])  # an index view of the operator (no copy of the data)
    assert sub.n == 3 and np.allclose(sub.diag(), np.diag(A)[[1, 2, 5]])
    assert np.allclose(sub.matvec(v[[1, 2, 5]]), A[np.ix_([1, 2, 5], [1, 2, 5])] @ v[[1, 2, 5]])
    raw = weighted_sparse_cov(X, w, center=False)
    assert np.allclose(raw.dense(), (D * w[:, None]).T @ D / w.sum())


@pytest.mark.parametrize("preprocessing", ["center", "standardize", "none"])
def test_sparse_with_weights_equals_dense_with_weights_and_repeated_rows(preprocessing):
    X, w = _sparse_data(3)
    kw = dict(n_components=2, k=3, preprocessing=preprocessing, random_state=0)
    s = NonnegativeSparsePCA(**kw).fit(X, sample_weight=w)
    d = NonnegativeSparsePCA(**kw).fit(X.toarray(), sample_weight=w)
    r = NonnegativeSparsePCA(**kw).fit(np.repeat(X.toarray(), w.astype(int), axis=0))
    for other in (d, r):
        assert np.allclose(s.components_, other.components_, atol=1e-8)
        # on the papers' 1/m scale (explained_variance_ divides by m - 1: repeated rows change m)
        assert np.allclose(s.result_.variance, other.result_.variance, rtol=1e-8)
        assert np.allclose(s.explained_variance_ratio_, other.explained_variance_ratio_, rtol=1e-8)
        assert np.allclose(s.upper_bounds_, other.upper_bounds_, rtol=1e-6)
        assert np.allclose(s.mean_, other.mean_) and np.allclose(s.scale_, other.scale_)
    assert np.allclose(s.transform(X), d.transform(X.toarray()))
    assert isinstance(s.result_.params, dict)


@pytest.mark.parametrize("weights, msg", [
    (np.ones(5), r"`sample_weight` must hold 60 finite weights >= 0, not all zero; got shape \(5,\)"),
    (np.r_[np.nan, np.ones(59)], r"got 1 NaN/inf weight\(s\)"),
    (np.r_[-2.0, np.ones(59)], r"got 1 negative weight\(s\), the first -2"),
    (np.zeros(60), r"got all weights zero"),
    (["a"] * 60, r"`sample_weight` must hold 60 finite weights >= 0, not all zero; got list that is not numeric"),
])
def test_sample_weight_errors(weights, msg):
    X, _ = _sparse_data()
    with pytest.raises(InputError, match=msg):
        check_sample_weight(weights, 60)
    with pytest.raises(InputError, match=msg):
        NonnegativeSparsePCA(k=2).fit(X, sample_weight=weights)
    with pytest.raises(InputError, match=r"`center` must be True or False; got 1"):
        weighted_sparse_cov(X, np.ones(60), center=1)


# ----------------------------------------------------------------------------- Dask arrays
@pytest.fixture(scope="module")
def dask_client():
    pytest.importorskip("dask.array")
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as client:
        yield client


@pytest.mark.parametrize("preprocessing", ["center", "standardize", "none"])
def test_dask_array_goes_through_the_public_components(dask_client, monkeypatch, preprocessing):
    import dask.array as da

    import nspca_core.api as api

    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 10))
    X[:, :3] += 2 * rng.standard_normal((400, 1))
    D = da.from_array(X, chunks=(100, 10))
    passed = []
    real = api.components

    def spy(data=None, **kwargs):
        passed.append((data, kwargs))
        return real(data, **kwargs)

    monkeypatch.setattr(api, "components", spy)
    # the exact spannogram on the rank-2 factor: a few Dask passes (tpower makes one round trip per step)
    kw = dict(n_components=2, k=3, method="spannogram", d=2, certify=False, preprocessing=preprocessing,
              random_state=0)
    est = NonnegativeSparsePCA(**kw).fit(D)
    data, kwargs = passed[-1]
    assert isinstance(data, da.Array)  # never converted to NumPy by the estimator
    assert kwargs.get("center", True) is (preprocessing != "none")
    ref = NonnegativeSparsePCA(**kw).fit(X)
    assert np.allclose(est.components_, ref.components_, atol=1e-8)
    assert np.allclose(est.explained_variance_ratio_, ref.explained_variance_ratio_, rtol=1e-8)
    Z = est.transform(D)
    assert isinstance(Z, da.Array)  # lazy
    assert np.allclose(Z.compute(), ref.transform(X), atol=1e-8)
    assert est.score(D) == pytest.approx(ref.score(X), rel=1e-9)
    assert est.n_features_in_ == 10 and est.n_samples_ == 400


def test_dask_errors(dask_client):
    import dask.array as da

    D = da.from_array(np.random.default_rng(0).standard_normal((40, 5)), chunks=(20, 5))
    with pytest.raises(InputError, match=r"`sample_weight` is not supported with a Dask array X"):
        NonnegativeSparsePCA(k=2, method="spannogram", d=2).fit(D, sample_weight=np.ones(40))
    with pytest.raises(InputError, match=r"`X` must be a 2-D array; got a 3-D Dask array of shape \(2, 2, 2\)"):
        NonnegativeSparsePCA(k=2).fit(da.ones((2, 2, 2)))
    est = NonnegativeSparsePCA(k=2, method="spannogram", d=2, certify=False).fit(D)
    with pytest.raises(ValueError, match="X has 4 features, but NonnegativeSparsePCA is expecting 5"):
        est.transform(D[:, :4])


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), m=st.integers(2, 30), n=st.integers(1, 8),
       density=st.floats(0.05, 1.0), center=st.booleans())
def test_weighted_sparse_operator_is_the_weighted_covariance(seed, m, n, density, center):
    rng = np.random.default_rng(seed)
    X = sp.random(m, n, density=density, random_state=seed, format="csc")
    w = rng.integers(0, 4, m).astype(float)
    w[rng.integers(m)] += 0.5  # never all zero
    D = X.toarray()
    mu = w @ D / w.sum() if center else np.zeros(n)
    A = ((D - mu) * w[:, None]).T @ (D - mu) / w.sum()
    C = weighted_sparse_cov(X, w, center=center)
    v = rng.standard_normal((n, 3))
    assert np.allclose(C.matvec(v), A @ v, atol=1e-12)
    assert np.allclose(C.quads(v), np.einsum("ij,ij->j", v, A @ v), atol=1e-12)
    assert np.allclose(C.diag(), np.diag(A), atol=1e-12)
    assert C.trace() == pytest.approx(np.trace(A), abs=1e-12)


@pytest.mark.slow
def test_sparse_weighted_fit_never_densifies():
    """20,000 x 3,000 sparse data (dense: 480 MB; its covariance: 72 MB) with weights: the fit's
    peak of traced allocations stays far below either."""
    import tracemalloc

    X = sp.random(20_000, 3_000, density=5e-4, random_state=0, format="csr")
    w = np.random.default_rng(0).integers(0, 3, 20_000).astype(float)
    tracemalloc.start()
    try:
        est = NonnegativeSparsePCA(1, k=5, method="tpower", certify=False, random_state=0).fit(X, sample_weight=w)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 36e6, peak  # half the covariance's size
    assert est.components_.shape == (1, 3_000) and 0 < est.score(X, sample_weight=w) <= 1


@pytest.mark.parametrize("k", [2, [9, 9, 2]])
def test_partial_model_with_a_smaller_k_keeps_the_kept_components_sparsity(data, k):
    """Continuing a k=4 model with k=2: the kept component is certified at its own sparsity."""
    one = NonnegativeSparsePCA(1, k=4, random_state=0).fit(data)
    more = NonnegativeSparsePCA(3, k=k, random_state=0, partial_model=one).fit(data)
    nnz = int(np.count_nonzero(one.components_[0]))
    assert more.k_ == [nnz, 2, 2] if isinstance(k, int) else more.k_ == [nnz, 9, 2]
    assert np.array_equal(more.components_[0], one.components_[0])
    assert (np.count_nonzero(more.components_[1:], axis=1) <= more.k_[1:]).all()
    assert more.upper_bounds_[0] == pytest.approx(one.upper_bounds_[0], rel=1e-6)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), m=st.integers(1, 20), n=st.integers(1, 5), limit=st.integers(1, 30),
       sparse=st.booleans(), weighted=st.booleans())
def test_distinct_rows_against_numpy_unique(seed, m, n, limit, sparse, weighted):
    from nspca_core.estimator import _distinct_rows

    rng = np.random.default_rng(seed)
    X = rng.integers(-1, 2, (m, n)).astype(float)  # few values: many repeated rows
    w = rng.integers(0, 3, m).astype(float) if weighted else None
    rows = X if w is None else X[w > 0]
    expected = max(1, min(limit, len(np.unique(rows, axis=0)) if len(rows) else 0))
    assert _distinct_rows(sp.csr_matrix(X) if sparse else X, w, limit) == expected


def test_n_components_none_counts_a_weighted_sample_as_its_repeats():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((9, 30))
    w = rng.integers(1, 4, 9).astype(float)
    kw = dict(n_components=None, k=2, strategy="deflation-project", certify=False, random_state=0)
    a = NonnegativeSparsePCA(**kw).fit(X, sample_weight=w)
    b = NonnegativeSparsePCA(**kw).fit(np.repeat(X, w.astype(int), axis=0))
    assert a.n_components_ == b.n_components_ <= 9
    assert np.allclose(a.components_, b.components_, atol=1e-8)


def test_score_pca_names_and_counts():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(3)
    df = pd.DataFrame(rng.beta(2, 4, size=(300, 3)) @ np.array([[1.0, 0.3, 0.1], [0.2, 1.0, 0.3], [0.1, 0.2, 1.0]]),
                      columns=["a", "b", "c"])
    est = NonnegativeScorePCA(random_state=0).set_output(transform="pandas").fit(df)
    out = est.transform(df)
    assert list(out.columns) == [f"nonnegativescorepca{j}" for j in range(est.n_components_)]
    assert est.n_components_ == est.components_.shape[0] == 3 and est.n_samples_ == 300


def test_functional_api_takes_sparse_data_with_weights():
    """fit/components with scipy.sparse X and sample_weight: the weighted implicitly centered
    covariance, the same as the weighted covariance of the dense data centered with the weights."""
    import nspca_core as nc

    X, w = _sparse_data(7)
    D = X.toarray()
    mu = w @ D / w.sum()
    A = ((D - mu) * w[:, None]).T @ (D - mu) / w.sum()
    a = nc.fit(X, k=3, sample_weight=w)
    b = nc.fit(cov=A, k=3)
    assert a.variance == pytest.approx(b.variance, rel=1e-9) and np.allclose(a.x, b.x)
    assert a.upper_bound == pytest.approx(b.upper_bound, rel=1e-6)
    ca = nc.components(X, n_components=2, k=3, sample_weight=w)
    cb = nc.components(cov=A, n_components=2, k=3)
    assert np.allclose(ca.loadings, cb.loadings) and np.allclose(ca.variance, cb.variance)
    with pytest.raises(InputError, match=r"`sample_weight` must hold 60 finite weights >= 0, not all zero; "
                                         r"got shape \(3,\)"):
        nc.fit(X, k=3, sample_weight=np.ones(3))
    with pytest.raises(InputError, match=r"`sample_weight` needs data `X` \(samples x features, dense or "
                                         r"sparse\); got a covariance"):
        nc.fit(cov=A, k=3, sample_weight=w)


@pytest.mark.parametrize("strategy", ["deflation-remove", "deflation-project"])
def test_components_continues_with_a_smaller_k_and_certifies(data, strategy):
    """components(partial=...) with k below the kept component's nonzeros (was an InputError from
    the certificate): the kept one is certified at its own sparsity, as when it was found."""
    X = _centered(data)
    first = components(X, n_components=1, k=4, certify=True, strategy=strategy)
    more = components(X, n_components=2, k=2, partial=first, certify=True, strategy=strategy)
    assert np.array_equal(more.loadings[:, 0], first.loadings[:, 0])
    assert more.results[0].upper_bound == pytest.approx(first.results[0].upper_bound, rel=1e-9)
    assert np.count_nonzero(more.loadings[:, 1]) <= 2 and more.results[1].upper_bound >= more.results[1].variance
