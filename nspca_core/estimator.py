"""scikit-learn estimators over the functional core.

Thin classes: every constructor argument is passed to
:func:`nspca_core.components` (or :func:`nspca_core.nonneg_scores`) unchanged;
fitted attributes are read off the result.  scikit-learn is imported here only,
so the rest of the core never needs it.
"""

from __future__ import annotations

import sys

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, clone
from sklearn.utils.validation import _check_feature_names_in, check_is_fitted, validate_data

from ._common.params import DEFAULTS, check, check_params, seed_of
from ._common.validation import InputError
from .api import METHODS, _allowed_options
from .datasets.preprocessing import PREPROCESSING, log1p_data
from .io.anndata_io import from_anndata
from .methods import STRATEGIES
from .operators.sparse import as_sparse_cov
from .operators.weighted import check_sample_weight, weighted_sparse_cov
from .peers import PEER_METHODS
from .result import ComponentsResult, iterations_run
from .scores import nonneg_scores

__all__ = ["NonnegativeSparsePCA", "NonnegativeScorePCA"]



def _is_dask(X) -> bool:
    """True for a ``dask.array.Array`` (never imports dask: only data built with it can be one)."""
    da = sys.modules.get("dask.array")
    return da is not None and isinstance(X, da.Array)


def _distinct_rows(X, sample_weight, limit: int) -> int:
    """The number of distinct rows of positive weight in X, counted up to ``limit`` (a repeated
    sample and a weighted one count the same; one pass over the rows, no copy of X)."""
    keep = np.arange(X.shape[0]) if sample_weight is None else np.flatnonzero(sample_weight > 0)
    seen = set()
    if sp.issparse(X):
        X = X.tocsr()
    for i in keep:
        if sp.issparse(X):
            a, b = X.indptr[i], X.indptr[i + 1]
            idx, val = X.indices[a:b], X.data[a:b]
            order = np.argsort(idx, kind="stable")
            nz = val[order] != 0
            key = idx[order][nz].tobytes() + b"|" + (val[order][nz] + 0.0).tobytes()  # + 0.0: -0.0 is 0.0
        else:
            key = (np.ascontiguousarray(X[i]) + 0.0).tobytes()
        seen.add(key)
        if len(seen) >= limit:
            break
    return max(len(seen), 1)


#: ``n_components=None`` keeps the components until one adds at most this fraction of the total variance
_EXHAUSTED = 1e-10


def _explaining(res, total: float, keep: int):
    """``res`` cut before its first component (after the ``keep`` given ones) that adds no variance
    (at most ``_EXHAUSTED * total``): once the data's variance is exhausted the strategy has
    nothing more to give (the rest would be arbitrary unit vectors of zero variance)."""
    from dataclasses import replace

    added = np.asarray(res.additional_variance, dtype=float)
    empty = np.flatnonzero(added[keep:] <= _EXHAUSTED * total)
    r = max(keep + (int(empty[0]) if empty.size else added.size - keep), 1)
    if r >= added.size:
        return res
    note = f"n_components=None: {r} of {added.size} components kept; the rest add no variance"
    return replace(res, loadings=res.loadings[:, :r], variance=res.variance[:r],
                   cumulative_variance=res.cumulative_variance[:r], additional_variance=added[:r],
                   supports=list(res.supports[:r]), results=list(res.results[:r]),
                   info={**res.info, "notes": [*res.info.get("notes", []), note]})


class NonnegativeSparsePCA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Nonnegative sparse principal components with certified optimality.

    Each component maximizes the variance ``x^T A x`` over unit ``x >= 0`` with
    at most ``k`` nonzeros (Asteris, Papailiopoulos & Dimakis, ICML 2014);
    several components come from ``strategy`` (deflation or joint bipartite
    matchings).  A thin wrapper of :func:`nspca_core.components`.

    Parameters
    ----------
    n_components : int or None, default=1
        Number of components, counting those of ``partial_model``.  None: as
        many as the strategy can give — "deflation-remove" runs until every
        feature is used (one per ``k`` at least), "deflation-project" and
        "quasi-orthogonal" up to ``min(n_samples, n_features)`` (distinct
        samples of positive weight), "bipartite" ``n_features // k`` disjoint supports (its
        cost grows as ``2^r``) — and keeps them up to the first that adds no
        variance (``<= 1e-10`` of the total: the data's variance is exhausted);
        a sequence ``k`` gives ``len(k)``.
    k : int >= 1 or sequence of them
        Maximum number of nonzero loadings per component, or one per component
        (R ``nsprcomp``'s ``k``; deflation strategies).  A value above
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
    preprocessing : {"center", "standardize", "log1p", "none"}, default="center"
        One of :data:`nspca_core.datasets.PREPROCESSING`, applied in ``fit`` and, with the fitted
        ``mean_``/``scale_``, in ``transform`` and ``score``: "log1p" maps every value x of the
        (nonnegative) data to ``log(1 + x)`` first (sparse data: the stored values, zeros stay
        zero) and then centers; ``inverse_transform`` maps back with ``expm1``.
    random_state : int >= 0, RandomState, Generator or None
        Seed of the randomized parts (ε-net samples, restarts).
    partial_model : NonnegativeSparsePCA (fitted), ComponentsResult or array (j, n_features), optional
        Components already found, kept as the first j components; the deflation
        continues from them (R ``nsprcomp``'s ``partial_model``), so
        ``n_components - j`` new ones are computed.  Deflation strategies only.
        The kept components keep their own sparsity: ``k_`` lists their numbers
        of nonzeros first (a sequence ``k`` still has one entry per component;
        the entries of the kept ones are replaced by those counts).
        A fitted model is read, never refitted (``clone`` keeps it as it is).
    tol : float in (0, 1) or None, default=None
        Convergence tolerance of the iterative solvers (the methods "em",
        "tpower", "zass", "sklearn-spca", "nmf" and the strategy
        "quasi-orthogonal"); None keeps each solver's default.  Refused for a
        solver without one (the spannogram and "auto" stop by themselves).
    max_iter : int >= 1 or None, default=None
        Iteration cap of the same solvers ("zass": its ``max_sweeps``); None
        keeps each solver's default.

    Attributes
    ----------
    components_ : ndarray of shape (n_components_, n_features)
        Each row nonnegative, unit norm, at most ``k`` nonzeros.
    n_components_ : int
        Number of components found (can be below ``n_components`` when
        "deflation-remove" runs out of features).
    explained_variance_ : ndarray of shape (n_components_,)
        The variance along each component, divided by ``n_samples - 1`` as scikit-learn's
        ``PCA`` (R's ``prcomp`` ``sdev**2``): ``x_j^T A x_j m / (m - 1)``, in decreasing order.
    explained_variance_ratio_ : ndarray of shape (n_components_,)
        ``explained_variance_`` over the total variance (the same with either divisor).
    additional_variance_ : ndarray of shape (n_components_,)
        What each component adds after projecting out the earlier ones (nsprcomp's
        ``asdev**2``).  It and ``upper_bounds_`` divide by ``n_samples``, as the functional API.
    upper_bounds_ : ndarray of shape (n_components_,)
        Certified upper bound on the optimum of the problem each component
        solved (nan when ``certify=False``).

    No ``singular_values_``/``noise_variance_`` (PCA's): the components need not be orthogonal
    and come from no single SVD, so neither has its meaning here.
    certified_ratio_ : ndarray of shape (n_components_,)
        Variance found on that problem / its upper bound.
    mean_, scale_ : ndarray of shape (n_features,)
    k_ : int or list of int
        The sparsity used: ``min(k, n_features)`` (per component for a sequence).
    n_iter_ : int
        The largest number of iterations any component's solver ran (at
        least 1; the exact solvers make one pass).
    n_samples_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of str (only for pandas input with string columns)
    component_features_ : list of ndarray of str
        For each component, the names of the features it loads (a DataFrame's
        columns, else ``x0, x1, ...``), largest loading first.
    result_ : ComponentsResult
        The core's full answer.

    Notes
    -----
    ``transform`` returns least-squares coordinates of the (preprocessed) data
    in the span of the components, so ``inverse_transform(transform(X))`` is
    the projection of ``X`` onto that span; for disjoint supports
    (deflation-remove) the components are orthonormal and this is simply
    ``(X - mean_) / scale_ @ components_.T``.  ``score(X)`` is the fraction of
    the variance of X (about ``mean_``, scaled by ``scale_``) in that span, so
    model selection (``GridSearchCV``) needs no ``scoring=``.

    ``sample_weight`` (R ``nsprcomp``'s ``omega``) weights the mean, the scale
    and the covariance.  With ``scipy.sparse`` X the centering stays implicit:
    ``A = X^T W X / sum(w) - mu_w mu_w^T`` is applied as an operator
    (:class:`nspca_core.operators.weighted.WeightedSparseCov`), X is never densified.

    A ``dask.array`` X is handed to :func:`nspca_core.components` as it is; ``transform`` returns a
    Dask array.  An in-memory ``anndata.AnnData`` is read as its ``X`` named by ``var_names``.
    """

    # each parameter's rule in the one table (nspca_core._common.params.PARAMETERS), checked at fit
    _params = {
        "n_components": "n_components_or_none",
        "k": "k_or_ks",
        "d": "d_or_none",
        "eps": "eps",
        "strategy": ("strategy", lambda: __import__("nspca_core.api", fromlist=["STRATEGIES"]).STRATEGIES),
        "method": ("method", lambda: __import__("nspca_core.api", fromlist=["METHODS"]).METHODS),
        "certify": "certify",
        "preprocessing": ("preprocessing", tuple(PREPROCESSING)),
        "random_state": "random_state",
        "tol": "tol_or_none",
        "max_iter": "max_iter_or_none",
    }

    def __init__(self, n_components=1, *, k=10, method=DEFAULTS["method"], d=DEFAULTS["d"], eps=DEFAULTS["eps"],
                 strategy=DEFAULTS["strategy"], certify=DEFAULTS["certify"], preprocessing="center",
                 random_state=None, partial_model=None, tol=None, max_iter=None):
        self.n_components = n_components
        self.k = k
        self.method = method
        self.d = d
        self.eps = eps
        self.strategy = strategy
        self.certify = certify
        self.preprocessing = preprocessing
        self.random_state = random_state
        self.partial_model = partial_model
        self.tol = tol
        self.max_iter = max_iter

    def __sklearn_clone__(self):
        """A fitted ``partial_model`` is data to continue from: a clone keeps it as it is (the
        default would replace it by an unfitted copy)."""
        if not isinstance(self.partial_model, BaseEstimator):
            return super().__sklearn_clone__()
        params = self.get_params(deep=False)
        given = params.pop("partial_model")
        return type(self)(**{name: clone(value, safe=False) for name, value in params.items()},
                          partial_model=given)

    # ------------------------------------------------------------------ preprocessing
    def _preprocess(self, X, *, fitting, sample_weight=None):
        """Centered (and scaled) data; for sparse X only the scaling is applied (a sparse
        copy) and the centering is left to the covariance operator or to ``transform``."""
        if fitting:
            w = np.ones(X.shape[0]) if sample_weight is None else sample_weight
            if sp.issparse(X):
                mean = np.asarray(X.T @ w).ravel() / w.sum()
                sq = np.asarray(X.multiply(X).T @ w).ravel() / w.sum()
                std = np.sqrt(np.clip(sq - mean ** 2, 0, None))
            elif _is_dask(X):  # two n-vectors come back; X stays distributed
                import dask

                mean, sq = dask.compute(X.mean(axis=0), (X * X).mean(axis=0))
                mean, sq = np.asarray(mean, dtype=np.float64), np.asarray(sq, dtype=np.float64)
                std = np.sqrt(np.clip(sq - mean ** 2, 0, None))
                self._moments = (sq, std ** 2)  # for the trace of the covariance
            else:
                mean = np.average(X, axis=0, weights=w)
                std = np.sqrt(np.average((X - mean) ** 2, axis=0, weights=w))
            steps = PREPROCESSING[self.preprocessing].steps
            self.mean_ = mean if "center" in steps else np.zeros(X.shape[1])
            # constant features stay zero after centering: keep their scale at 1
            self.scale_ = np.where(std > 0, std, 1.0) if "standardize" in steps else np.ones(X.shape[1])
        if sp.issparse(X):
            return sp.csr_matrix(X.multiply(1.0 / self.scale_[None, :]))
        if _is_dask(X):  # scaled lazily; the core's Dask operator centers implicitly (sparse blocks stay sparse)
            return X if np.all(self.scale_ == 1.0) else X * (1.0 / self.scale_)
        return (X - self.mean_) / self.scale_

    def _check_X(self, X, *, reset: bool):
        """Validated data (:meth:`_validate_X`), mapped by ``log1p`` when the preprocessing starts with it."""
        X = self._validate_X(X, reset=reset)
        return log1p_data(X) if "log1p" in PREPROCESSING[self.preprocessing].steps else X

    def _validate_X(self, X, *, reset: bool):
        """Validated data: NumPy/SciPy/pandas/AnnData (its X, named by var_names) through scikit-learn's
        ``validate_data``; a Dask array as it is (its shape checked, nothing computed)."""
        X = check("sparse_structure", from_anndata(X), "X")  # before scikit-learn's conversions read it
        if _is_dask(X):
            if X.ndim != 2:
                raise InputError(f"`X` must be a 2-D array; got a {X.ndim}-D Dask array of shape {X.shape}")
            if reset:
                self.n_features_in_ = int(X.shape[1])
                if hasattr(self, "feature_names_in_"):
                    del self.feature_names_in_
            elif X.shape[1] != self.n_features_in_:
                raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                                 f"{self.n_features_in_} features as input.")
            return X
        kwargs = dict(ensure_min_samples=2) if reset else {}
        return validate_data(self, X, dtype=np.float64, reset=reset, accept_sparse=("csr", "csc"), **kwargs)

    # ------------------------------------------------------------------ fit
    def _partial(self, n: int):
        """The loadings (n, j) of ``partial_model``, or None."""

        given = self.partial_model
        if given is None:
            return None
        if not STRATEGIES[self.strategy].partial:
            takers = " or ".join(repr(name) for name, spec in STRATEGIES.items() if spec.partial)
            raise InputError(f"`partial_model` continues a deflation; strategy {self.strategy!r} finds all "
                             f"components jointly: use {takers}")
        if isinstance(given, NonnegativeSparsePCA):
            if not hasattr(given, "components_"):
                raise InputError("`partial_model` must be a fitted NonnegativeSparsePCA; got an unfitted one")
            C = given.components_
        elif isinstance(given, ComponentsResult):
            C = np.asarray(given.loadings, dtype=float).T
        elif isinstance(given, (np.ndarray, list, tuple)):
            C = np.atleast_2d(np.asarray(given, dtype=float))
        else:
            raise InputError(f"`partial_model` must be a fitted NonnegativeSparsePCA, a ComponentsResult or "
                             f"components of shape (j, n_features); got {type(given).__name__}")
        if C.ndim != 2 or C.shape[1] != n or C.shape[0] < 1:
            raise InputError(f"`partial_model` must hold components of {n} features (shape (j, {n})), "
                             f"as X has; got shape {C.shape}")
        if not np.all(np.isfinite(C)) or (C < 0).any() or (np.linalg.norm(C, axis=1) == 0).any():
            raise InputError("`partial_model` components must be finite, nonnegative and nonzero")
        return np.ascontiguousarray(C.T)

    def _n_components(self, n: int, m: int, ks, given: int) -> int:
        """The number of components to find (``n_components`` or, for None, the strategy's)."""
        if isinstance(ks, list):
            r = len(ks) if self.n_components is None else self.n_components
            if r != len(ks):
                raise InputError(f"`k` holds {len(ks)} values, one per component; n_components="
                                 f"{self.n_components} needs as many")
        elif self.n_components is not None:
            r = self.n_components
        elif STRATEGIES[self.strategy].max_components == "n_features":
            r = n  # stops when every feature is used
        elif STRATEGIES[self.strategy].max_components == "n_features // k":
            r = max(1, n // ks)
        else:
            r = min(m, n)
        r = max(r, given) if self.n_components is None else r
        if not 1 <= r <= n:
            raise InputError(f"`n_components` must be an int in [1, n_features={n}] or None; got {r}")
        if r < given:
            raise InputError(f"`n_components`={r} is below the {given} components of `partial_model` "
                             f"(n_components counts them)")
        return r

    def _options(self) -> dict:
        """``tol``/``max_iter`` as the chosen solver's keyword options (only those given)."""

        wanted = {"tol": self.tol, "max_iter": self.max_iter}
        wanted = {key: value for key, value in wanted.items() if value is not None}
        if not wanted:
            return {}
        allowed = _allowed_options(self.method, self.strategy)
        options = {}
        for key, value in wanted.items():
            target = "max_sweeps" if key == "max_iter" and "max_sweeps" in allowed else key
            if target not in allowed:
                takers = [m for m in METHODS if m in PEER_METHODS and
                          ({key, "max_sweeps"} if key == "max_iter" else {key}) & set(PEER_METHODS[m].options)]
                raise InputError(f"`{key}` applies to the iterative solvers (methods {', '.join(takers)} with a "
                                 f"deflation strategy, or strategy 'quasi-orthogonal'); method "
                                 f"{self.method!r} with strategy {self.strategy!r} has none: leave {key}=None")
            options[target] = value
        return options

    def fit(self, X, y=None, sample_weight=None):
        """Fit the components on ``X`` (n_samples, n_features); ``y`` is ignored.

        ``sample_weight`` (n_samples,), optional: weights of the samples (R ``nsprcomp``'s
        ``omega``); the mean, the scale and the covariance are weighted (for sparse X the
        weighted centering is implicit, see the class notes).
        """
        from .api import components

        check_params(self)
        X = self._check_X(X, reset=True)
        m, n = X.shape
        dask = _is_dask(X)
        if sample_weight is not None and dask:
            raise InputError("`sample_weight` is not supported with a Dask array X; pass weights with "
                             "NumPy or scipy.sparse data, or none")
        # a count above n means "no sparsity constraint": clip, and report the value used
        ks = [min(int(kj), n) for kj in np.ravel(self.k)] if isinstance(self.k, (list, tuple, np.ndarray)) \
            else min(int(self.k), n)
        if self.d is not None and self.d > n:
            raise InputError(f"`d` must be an int in [1, n_features={n}] or None; got {self.d}")
        partial = self._partial(n)
        if sample_weight is not None:
            sample_weight = check_sample_weight(sample_weight, m)
        m_eff = m  # for n_components=None: the samples that count (distinct, of positive weight)
        if self.n_components is None and STRATEGIES[self.strategy].max_components == "samples" and not dask:
            m_eff = _distinct_rows(X, sample_weight, n)
        r = self._n_components(n, m_eff, ks, 0 if partial is None else partial.shape[1])
        if partial is not None:  # a kept component's sparsity is its own (its certificate's k)
            given = [int(c) for c in np.count_nonzero(partial, axis=0)]
            ks = given + (ks[len(given):] if isinstance(ks, list) else [ks] * (r - len(given)))
        options = self._options()
        Xp = self._preprocess(X, fitting=True, sample_weight=sample_weight)
        center = "center" in PREPROCESSING[self.preprocessing].steps
        weights = sample_weight
        if sp.issparse(X):  # centered implicitly by the operator: X is never densified
            Xp = as_sparse_cov(Xp, center=center) if sample_weight is None else \
                weighted_sparse_cov(Xp, sample_weight, center=center)
            weights = None  # in the operator
        extra = dict(options)
        if partial is not None:
            extra["partial"] = partial
        # dense data were centered (and scaled) above; sparse data are in their operator; Dask data are
        # centered implicitly by the core's operator when the preprocessing asks for it
        res = components(Xp, n_components=r, k=ks, method=self.method,
                         strategy=self.strategy, d=self.d, eps=self.eps,
                         random_state=seed_of(self.random_state), certify=self.certify,
                         center=center if dask else False, sample_weight=weights, **extra)
        if sp.issparse(X):
            total = Xp.trace()  # of the (weighted) implicitly centered operator
        elif dask:  # the trace from the column moments fit computed
            total = float(np.sum(self._moments[1 if center else 0] / self.scale_ ** 2))
        else:
            w = np.ones(m) if sample_weight is None else sample_weight
            total = float(np.einsum("i,ij,ij->", w, Xp, Xp)) / float(w.sum())
        if self.n_components is None and not isinstance(self.k, (list, tuple, np.ndarray)):
            res = _explaining(res, total, 0 if partial is None else partial.shape[1])
        self.k_ = ks[:res.n_components] if isinstance(ks, list) else ks  # deflation-remove can stop early
        self.result_ = res
        self.components_ = np.ascontiguousarray(res.loadings.T)
        self.n_components_ = int(self.components_.shape[0])
        self._n_features_out = self.n_components_
        self.n_samples_ = int(m)
        self.n_iter_ = iterations_run(res)
        # scikit-learn's PCA (and R's prcomp/nsprcomp sdev^2) divide by m - 1; the core by m (the papers')
        ddof = m / (m - 1) if m > 1 else 1.0
        self.explained_variance_ = np.asarray(res.variance, dtype=float) * ddof
        self.explained_variance_ratio_ = (np.asarray(res.variance, dtype=float) / total if total > 0
                                          else np.zeros_like(self.explained_variance_))
        self.additional_variance_ = np.asarray(res.additional_variance, dtype=float)
        ub = np.array([getattr(rj, "upper_bound", np.nan) for rj in res.results], dtype=float)
        found = np.array([getattr(rj, "variance", np.nan) for rj in res.results], dtype=float)
        if ub.size != self.n_components_:
            ub = np.full(self.n_components_, np.nan)
            found = np.asarray(res.variance, dtype=float)
        self.upper_bounds_ = ub
        with np.errstate(divide="ignore", invalid="ignore"):
            self.certified_ratio_ = np.where(ub > 0, found / ub, np.nan)
        names = _check_feature_names_in(self, None)
        self.component_features_ = [names[s[np.argsort(-self.components_[j, s], kind="stable")]]
                                    for j, s in enumerate(np.flatnonzero(c) for c in self.components_)]
        return self

    # ------------------------------------------------------------------ transform, score
    def _centered_products(self, X):
        """``(Y, row_sq)``: ``Y = Xc C^T`` (n_samples, n_components_) and the squared norms of the
        rows of ``Xc = (X - mean_) / scale_``, without densifying sparse X (nor computing Dask X)."""
        C = self.components_
        mu = self.mean_ / self.scale_
        if sp.issparse(X):
            Xs = sp.csr_matrix(X.multiply(1.0 / self.scale_[None, :]))
            Y = np.asarray(Xs @ C.T) - mu @ C.T
            row_sq = np.asarray(Xs.multiply(Xs).sum(axis=1)).ravel() - 2 * np.asarray(Xs @ mu).ravel() + mu @ mu
            return Y, np.clip(row_sq, 0.0, None)
        if _is_dask(X):  # lazy; the blocks are never shifted
            Xs = X * (1.0 / self.scale_)
            return Xs @ C.T - mu @ C.T, (Xs * Xs).sum(axis=1) - 2 * (Xs @ mu) + mu @ mu
        Xc = (X - self.mean_) / self.scale_
        return Xc @ C.T, (Xc * Xc).sum(axis=1)

    def transform(self, X):
        """Least-squares coordinates of ``X`` in the span of the components."""
        check_is_fitted(self)
        X = self._check_X(X, reset=False)
        C = self.components_
        if sp.issparse(X) or _is_dask(X):  # (X - mean) C^T (C C^T)^+ without densifying X
            Y, _ = self._centered_products(X)
            return Y @ np.linalg.pinv(C @ C.T)
        Xp = self._preprocess(X, fitting=False)
        coef, *_ = np.linalg.lstsq(C.T, Xp.T, rcond=None)
        return coef.T

    def inverse_transform(self, X):
        """Map coordinates back to feature space (the projection onto the span)."""
        check_is_fitted(self)
        if not _is_dask(X):
            X = np.asarray(X, dtype=np.float64)
        Xr = (X @ self.components_) * self.scale_ + self.mean_
        return np.expm1(Xr) if "log1p" in PREPROCESSING[self.preprocessing].steps else Xr

    def score(self, X, y=None, sample_weight=None):
        """The fraction of the variance of ``X`` the components explain, in [0, 1].

        ``sum_i w_i ||P xc_i||^2 / sum_i w_i ||xc_i||^2`` with ``xc_i = (x_i - mean_) / scale_``
        (the preprocessing fitted) and ``P`` the orthogonal projection onto the span of the
        components (what ``inverse_transform(transform(X))`` gives); ``w`` = ``sample_weight``
        or ones.  1.0 when X has no variance about ``mean_``.  Higher is better, so
        ``GridSearchCV`` uses it when no ``scoring`` is given.  ``y`` is ignored.
        """

        check_is_fitted(self)
        X = self._check_X(X, reset=False)
        Y, row_sq = self._centered_products(X)
        C = self.components_
        row_proj = ((Y @ np.linalg.pinv(C @ C.T)) * Y).sum(axis=1)  # y G^+ y^T = ||P xc||^2
        if sample_weight is not None:
            if _is_dask(X):
                raise InputError("`sample_weight` is not supported with a Dask array X")
            w = check_sample_weight(sample_weight, X.shape[0])
            row_proj, row_sq = row_proj * w, row_sq * w
        explained, total = row_proj.sum(), row_sq.sum()
        if _is_dask(X):
            import dask

            explained, total = dask.compute(explained, total)
        explained, total = float(explained), float(total)
        if not total > 0:
            return 1.0
        return float(min(1.0, max(0.0, explained / total)))  # in [0, 1] up to rounding

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.input_tags.sparse = True  # scipy.sparse data: centered implicitly, never densified
        return tags


class NonnegativeScorePCA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
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
    n_components_ : int
    n_samples_ : int
    result_ :
        The core's full answer.
    """


    _params = {"n_components": "n_components_or_none", "max_iter": "max_iter", "random_state": "random_state"}

    def __init__(self, n_components=None, *, max_iter=500, random_state=None):
        self.n_components = n_components
        self.max_iter = max_iter
        self.random_state = random_state

    def fit(self, X, y=None):
        """Fit on ``X`` (n_samples, n_features); ``y`` is ignored."""

        check_params(self)

        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        res = nonneg_scores(X, n_components=self.n_components, random_state=seed_of(self.random_state),
                            max_iter=self.max_iter)
        self.result_ = res
        self.mixing_ = np.asarray(res.A, dtype=float)
        self.components_ = np.ascontiguousarray(np.asarray(res.D, dtype=float).T)
        self.lambdas_ = np.asarray(res.lambdas, dtype=float)
        self.negativity_ = float(res.negativity)
        self.n_iter_ = max(1, int(res.iterations))
        self.n_components_ = int(self.components_.shape[0])
        self._n_features_out = self.n_components_
        self.n_samples_ = int(X.shape[0])
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
