"""The scikit-learn estimators: contract, sklearn conventions, and that arguments reach the core."""

import pickle

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from nspca_core import NonnegativeScorePCA, NonnegativeSparsePCA


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    # two planted nonnegative sparse directions plus noise
    n, m = 12, 200
    W = np.zeros((n, 2))
    W[:4, 0] = 1.0
    W[6:9, 1] = 1.0
    return rng.standard_normal((m, 2)) * [3.0, 2.0] @ W.T + 0.1 * rng.standard_normal((m, n))


def test_fitted_attributes(data):
    est = NonnegativeSparsePCA(2, k=4, random_state=0).fit(data)
    C = est.components_
    assert C.shape == (2, data.shape[1])
    assert (C >= 0).all() and (np.count_nonzero(C, axis=1) <= 4).all()
    assert np.allclose(np.linalg.norm(C, axis=1), 1.0)
    Xc = data - data.mean(axis=0)
    A = Xc.T @ Xc / len(Xc)
    # scikit-learn's PCA divides by m - 1 (the ratio is the same either way)
    assert np.allclose(est.explained_variance_, np.einsum("ij,jk,ik->i", C, A, C) * len(Xc) / (len(Xc) - 1))
    assert np.allclose(est.explained_variance_ratio_, est.result_.variance / np.trace(A))
    assert est.additional_variance_.shape == (2,)
    found = np.array([r.variance for r in est.result_.results])
    assert np.all(est.upper_bounds_ >= found - 1e-9)
    assert np.all((est.certified_ratio_ > 0) & (est.certified_ratio_ <= 1 + 1e-9))
    assert est.n_features_in_ == data.shape[1]
    # planted supports recovered
    assert set(np.flatnonzero(C[0])) == {0, 1, 2, 3}


def test_transform_roundtrip_is_projection(data):
    est = NonnegativeSparsePCA(2, k=4, random_state=0).fit(data)
    Z = est.transform(data)
    back = est.inverse_transform(Z)
    # projecting twice changes nothing
    assert np.allclose(est.transform(back), Z, atol=1e-8)
    assert Z.shape == (len(data), 2)


def test_feature_names_and_pickle(data):
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(data, columns=[f"g{i}" for i in range(data.shape[1])])
    est = NonnegativeSparsePCA(1, k=3, random_state=0).fit(df)
    assert list(est.feature_names_in_) == list(df.columns)
    clone = pickle.loads(pickle.dumps(est))
    assert np.allclose(clone.transform(df), est.transform(df))


def test_pipeline_and_gridsearch(data):
    pipe = make_pipeline(FunctionTransformer(), NonnegativeSparsePCA(1, k=3, random_state=0))
    pipe.fit(data)
    assert pipe.transform(data).shape == (len(data), 1)

    def score(est, X, y=None):
        return float(est[-1].explained_variance_[0])

    gs = GridSearchCV(pipe, {"nonnegativesparsepca__k": [2, 4]}, cv=2, scoring=score).fit(data)
    assert gs.best_params_["nonnegativesparsepca__k"] == 4


def test_every_argument_reaches_the_core(monkeypatch, data):
    import nspca_core.api as api

    seen = {}
    real = api.components

    def spy(X=None, **kwargs):
        seen.update(kwargs)
        return real(X, **kwargs)

    monkeypatch.setattr(api, "components", spy)
    est = NonnegativeSparsePCA(2, k=3, method="enet", d=2, eps=0.2, strategy="deflation-project",
                               certify=False, preprocessing="standardize", random_state=7).fit(data)
    assert seen == {"n_components": 2, "k": 3, "method": "enet", "strategy": "deflation-project",
                    "d": 2, "eps": 0.2, "random_state": 7, "certify": False, "center": False,
                    "sample_weight": None}
    assert np.isnan(est.upper_bounds_).all()
    assert np.allclose(est.scale_, data.std(axis=0))


def test_k_above_n_features_is_clipped_and_reported(data):
    est = NonnegativeSparsePCA(k=99, certify=False, random_state=0).fit(data)
    assert est.k_ == data.shape[1] and est.result_.params["k"] == data.shape[1]
    assert np.count_nonzero(est.components_, axis=1).max() <= data.shape[1]


@pytest.mark.parametrize("n", [1, 2])
def test_one_and_two_features_work_with_the_defaults(n):
    rng = np.random.default_rng(n)
    X = rng.standard_normal((30, n))
    est = NonnegativeSparsePCA(random_state=0).fit(X)
    assert est.k_ == n and est.components_.shape == (1, n)
    assert est.transform(X).shape == (30, 1)


@pytest.mark.parametrize("kwargs, msg", [({"d": 99}, r"`d` must be an int in \[1, n_features=12\] or None; got 99"),
                                         ({"k": 2, "method": "magic"}, "`method` must be one of"),
                                         ({"k": 2, "n_components": 13}, "`n_components` must be")])
def test_bad_parameters(data, kwargs, msg):
    with pytest.raises(ValueError, match=msg):
        NonnegativeSparsePCA(**kwargs).fit(data)


@parametrize_with_checks([
    # the checks fit on data with as few as one feature: the defaults adapt (k clipped, d = min(3, n))
    NonnegativeSparsePCA(1, k=3, certify=False, random_state=0),
    NonnegativeSparsePCA(1, k=1, method="enet", d=1, certify=False, random_state=0),
    # as many components as the strategy gives: the same count for weights and repeated rows
    NonnegativeSparsePCA(None, k=2, strategy="deflation-project", certify=False, random_state=0),
    NonnegativeScorePCA(random_state=0),
])  # every check passes: no expected failures
def test_scikit_learn_conventions(estimator, check):
    check(estimator)


def test_nonneg_score_pca_recovers_nonnegative_scores():
    rng = np.random.default_rng(3)
    S = rng.beta(2, 4, size=(2000, 3))
    S = S / S.std(axis=0)
    A = np.array([[1.0, 0.3, 0.1], [0.2, 1.0, 0.3], [0.1, 0.2, 1.0]])
    Y = S @ A.T
    est = NonnegativeScorePCA(random_state=0).fit(Y)
    W = est.transform(Y)
    assert W.shape == (2000, 3)
    assert est.mixing_.shape == (3, 3) and est.components_.shape == (3, 3)
    assert W.min() >= -1e-6 * np.abs(W).max() or est.negativity_ > 0
    assert np.allclose(est.inverse_transform(W), Y, atol=1e-6 * np.abs(Y).max())
