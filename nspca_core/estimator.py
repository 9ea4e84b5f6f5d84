"""scikit-learn estimators over the functional core.

Thin classes: every constructor argument is passed to
:func:`nspca_core.components` (or :func:`nspca_core.nonneg_scores`) unchanged;
fitted attributes are read off the result.  scikit-learn is imported here only,
so the rest of the core never needs it.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, check_random_state, validate_data

__all__ = ["NonnegativeSparsePCA", "NonnegativeScorePCA"]

_PREPROCESSING = ("center", "standardize", "none")


def _check_int(value, name: str, low: int, *, allow_none: bool = False) -> None:
    """Parameters are checked at ``fit`` (scikit-learn's convention), with messages that name
    the parameter, what is allowed and what was given."""
    if value is None and allow_none:
        return
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"`{name}` must be an int >= {low}{' or None' if allow_none else ''}; "
                         f"got {value!r}")


def _check_choice(value, name: str, allowed) -> None:
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"`{name}` must be one of {list(allowed)}; got {value!r}")


def _seed(random_state) -> int:
    """An int seed for the core from sklearn's ``random_state`` convention."""
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        return int(random_state)
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


class NonnegativeSparsePCA(TransformerMixin, BaseEstimator):
    """Nonnegative sparse principal components with certified optimality.

    Each component maximizes the variance ``x^T A x`` over unit ``x >= 0`` with
    at most ``k`` nonzeros (Asteris, Papailiopoulos & Dimakis, ICML 2014);
    several components come from ``strategy`` (deflation or joint bipartite
    matchings).  A thin wrapper of :func:`nspca_core.components`.

    Parameters
    ----------
    n_components : int, default=1
    k : int >= 1
        Maximum number of nonzero loadings per component; a value above
        n_features means no sparsity constraint and is clipped (``k_``).
    method : str, default="auto"
        One of :data:`nspca_core.METHODS`.
    d : int or None, default=None
        Rank of the approximation used by the spannogram / ε-net; None means
        ``min(3, n_features)``.
    eps : float, default=0.1
        Accuracy of the ε-net.
    strategy : str, default="deflation-remove"
        "deflation-remove", "deflation-project", "bipartite" or
        "quasi-orthogonal".
    certify : bool, default=True
        Compute a certified upper bound for each component.
    preprocessing : {"center", "standardize", "none"}, default="center"
        Applied in ``fit`` and, with the fitted ``mean_``/``scale_``, in
        ``transform``.
    random_state : int, RandomState or None
        Seed of the randomized parts (ε-net samples, restarts).

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Each row nonnegative, unit norm, at most ``k`` nonzeros.
    explained_variance_ : ndarray of shape (n_components,)
        ``x_j^T A x_j`` on the preprocessed training data.
    explained_variance_ratio_ : ndarray of shape (n_components,)
        ``explained_variance_ / trace(A)``.
    additional_variance_ : ndarray of shape (n_components,)
        What each component adds after projecting out the earlier ones
        (nsprcomp's ``asdev**2``); sums to the variance of the span.
    upper_bounds_ : ndarray of shape (n_components,)
        Certified upper bound on the optimum of the problem each component
        solved (nan when ``certify=False``).
    certified_ratio_ : ndarray of shape (n_components,)
        Variance found on that problem / its upper bound.
    mean_, scale_ : ndarray of shape (n_features,)
    k_ : int
        The sparsity used: ``min(k, n_features)``.
    n_features_in_ : int
    feature_names_in_ : ndarray of str (only for pandas input with string columns)
    result_ : ComponentsResult
        The core's full answer.

    Notes
    -----
    ``transform`` returns least-squares coordinates of the (preprocessed) data
    in the span of the components, so ``inverse_transform(transform(X))`` is
    the projection of ``X`` onto that span; for disjoint supports
    (deflation-remove) the components are orthonormal and this is simply
    ``(X - mean_) / scale_ @ components_.T``.
    """


    def __init__(self, n_components=1, *, k=10, method="auto", d=None, eps=0.1,
                 strategy="deflation-remove", certify=True, preprocessing="center",
                 random_state=None):
        self.n_components = n_components
        self.k = k
        self.method = method
        self.d = d
        self.eps = eps
        self.strategy = strategy
        self.certify = certify
        self.preprocessing = preprocessing
        self.random_state = random_state

    def _preprocess(self, X, *, fitting, sample_weight=None):
        """Centered (and scaled) data; for sparse X only the scaling is applied (a sparse
        copy) and the centering is left to the covariance operator or to ``transform``."""
        if fitting:
            if sp.issparse(X):
                w = np.ones(X.shape[0]) if sample_weight is None else sample_weight
                mean = np.asarray(X.T @ w).ravel() / w.sum()
                sq = np.asarray(X.multiply(X).T @ w).ravel() / w.sum()
                std = np.sqrt(np.clip(sq - mean ** 2, 0, None))
            else:
                w = np.ones(X.shape[0]) if sample_weight is None else sample_weight
                mean = np.average(X, axis=0, weights=w)
                std = np.sqrt(np.average((X - mean) ** 2, axis=0, weights=w))
            self.mean_ = mean if self.preprocessing != "none" else np.zeros(X.shape[1])
            # constant features stay zero after centering: keep their scale at 1
            self.scale_ = np.where(std > 0, std, 1.0) if self.preprocessing == "standardize" \
                else np.ones(X.shape[1])
        if sp.issparse(X):
            return sp.csr_matrix(X.multiply(1.0 / self.scale_[None, :]))
        return (X - self.mean_) / self.scale_

    def fit(self, X, y=None, sample_weight=None):
        """Fit the components on ``X`` (n_samples, n_features); ``y`` is ignored.

        ``sample_weight`` (n_samples,), optional: weights of the samples (R ``nsprcomp``'s
        ``omega``); the mean, the scale and the covariance are weighted (dense X only).
        """
        from ._sparse import as_sparse_cov
        from .api import METHODS, STRATEGIES, components

        _check_int(self.n_components, "n_components", 1)
        _check_int(self.k, "k", 1)
        _check_int(self.d, "d", 1, allow_none=True)
        if isinstance(self.eps, bool) or not isinstance(self.eps, numbers.Real) or not 0 < self.eps < 1:
            raise ValueError(f"`eps` must be a float in (0, 1); got {self.eps!r}")
        _check_choice(self.strategy, "strategy", STRATEGIES)
        _check_choice(self.preprocessing, "preprocessing", _PREPROCESSING)
        if not isinstance(self.certify, (bool, np.bool_)):
            raise ValueError(f"`certify` must be True or False; got {self.certify!r}")

        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2,
                          accept_sparse=("csr", "csc"))
        n = X.shape[1]
        if self.method not in METHODS:
            raise ValueError(f"`method` must be one of {list(METHODS)}; got {self.method!r}")
        # a count above n means "no sparsity constraint": clip, and report the value used
        self.k_ = min(int(self.k), n)
        if self.d is not None and self.d > n:
            raise ValueError(f"`d` must be an int in [1, n_features={n}] or None; got {self.d}")
        if self.n_components > n:
            raise ValueError(f"`n_components` must be an int in [1, n_features={n}]; "
                             f"got {self.n_components}")
        if sample_weight is not None:
            if sp.issparse(X):
                raise ValueError("`sample_weight` is not supported with scipy.sparse X (the implicit "
                                 "centering is unweighted); pass dense X or no weights")
            sample_weight = np.asarray(sample_weight, dtype=np.float64)
            if sample_weight.shape != (X.shape[0],) or not np.all(np.isfinite(sample_weight)) \
                    or (sample_weight < 0).any() or sample_weight.sum() <= 0:
                raise ValueError(f"`sample_weight` must hold {X.shape[0]} finite weights >= 0, "
                                 f"not all zero; got shape {sample_weight.shape}")
        Xp = self._preprocess(X, fitting=True, sample_weight=sample_weight)
        if sp.issparse(X):  # centered implicitly by the operator: X is never densified
            Xp = as_sparse_cov(Xp, center=self.preprocessing != "none")
        res = components(Xp, n_components=self.n_components, k=self.k_, method=self.method,
                         strategy=self.strategy, d=self.d, eps=self.eps,
                         seed=_seed(self.random_state), certify=self.certify,
                         sample_weight=sample_weight)
        self.result_ = res
        self.components_ = np.ascontiguousarray(res.loadings.T)
        self.explained_variance_ = np.asarray(res.variance, dtype=float)
        if sp.issparse(X):
            total = Xp.trace()  # of the weighted, implicitly centered operator
        else:
            w = np.ones(X.shape[0]) if sample_weight is None else sample_weight
            total = float(np.einsum("i,ij,ij->", w, Xp, Xp)) / float(w.sum())
        self.explained_variance_ratio_ = (self.explained_variance_ / total if total > 0
                                          else np.zeros_like(self.explained_variance_))
        self.additional_variance_ = np.asarray(res.additional_variance, dtype=float)
        ub = np.array([getattr(r, "upper_bound", np.nan) for r in res.results], dtype=float)
        found = np.array([getattr(r, "variance", np.nan) for r in res.results], dtype=float)
        if ub.size != self.components_.shape[0]:
            ub = np.full(self.components_.shape[0], np.nan)
            found = self.explained_variance_
        self.upper_bounds_ = ub
        with np.errstate(divide="ignore", invalid="ignore"):
            self.certified_ratio_ = np.where(ub > 0, found / ub, np.nan)
        return self

    def transform(self, X):
        """Least-squares coordinates of ``X`` in the span of the components."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False, accept_sparse=("csr", "csc"))
        Xp = self._preprocess(X, fitting=False)
        C = self.components_
        if sp.issparse(Xp):  # (X - mean) C^T without densifying X: X C^T - mean C^T
            rhs = np.asarray(Xp @ C.T) - (self.mean_ / self.scale_) @ C.T
            coef, *_ = np.linalg.lstsq(C @ C.T, rhs.T, rcond=None)
            return coef.T
        coef, *_ = np.linalg.lstsq(C.T, Xp.T, rcond=None)
        return coef.T

    def inverse_transform(self, X):
        """Map coordinates back to feature space (the projection onto the span)."""
        check_is_fitted(self)
        X = np.asarray(X, dtype=np.float64)
        return (X @ self.components_) * self.scale_ + self.mean_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.input_tags.sparse = True  # scipy.sparse data: centered implicitly, never densified
        return tags


class NonnegativeScorePCA(TransformerMixin, BaseEstimator):
    """Nonnegative-score PCA (Bajorski, Hall & Rubinstein): nonnegative, uncorrelated scores.

    Model ``Y = A X`` with ``X`` nonnegative, uncorrelated, unit-variance
    sources.  A thin wrapper of :func:`nspca_core.nonneg_scores`.

    Parameters
    ----------
    n_components : int or None
        Passed to the core (None: all variables).
    max_iter : int, default=500
    random_state : int, RandomState or None

    Attributes
    ----------
    mixing_ : ndarray of shape (n_features, n_components)
        The estimated mixing matrix Â (columns scaled so the sources have unit variance).
    components_ : ndarray of shape (n_components, n_features)
        Unit-norm directions, the columns of D̂ as rows.
    lambdas_ : ndarray of shape (n_components,)
        Variances of the nonnegative scores (squared column norms of Â).
    negativity_ : float
        Final negativity score S(B̂) on the training data (0 when every
        training score is nonnegative).
    n_iter_ : int
        Iterations run (at least 1).
    result_ :
        The core's full answer.
    """


    def __init__(self, n_components=None, *, max_iter=500, random_state=None):
        self.n_components = n_components
        self.max_iter = max_iter
        self.random_state = random_state

    def fit(self, X, y=None):
        """Fit on ``X`` (n_samples, n_features); ``y`` is ignored."""
        from .scores import nonneg_scores

        _check_int(self.n_components, "n_components", 1, allow_none=True)
        _check_int(self.max_iter, "max_iter", 1)

        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        res = nonneg_scores(X, n_components=self.n_components, seed=_seed(self.random_state),
                            max_iter=self.max_iter)
        self.result_ = res
        self.mixing_ = np.asarray(res.A, dtype=float)
        self.components_ = np.ascontiguousarray(np.asarray(res.D, dtype=float).T)
        self.lambdas_ = np.asarray(res.lambdas, dtype=float)
        self.negativity_ = float(res.negativity)
        self.n_iter_ = max(1, int(res.iterations))
        # sources X = pinv(A) Y; nonnegative scores W = Λ^{1/2} X
        self._unmix = np.linalg.pinv(self.mixing_)
        return self

    def transform(self, X):
        """The nonnegative scores ``W`` (n_samples, n_components)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return (X @ self._unmix.T) * np.sqrt(self.lambdas_)

    def inverse_transform(self, W):
        """Back from scores to data: ``Y = D W``."""
        check_is_fitted(self)
        W = np.asarray(W, dtype=np.float64)
        return W @ self.components_
