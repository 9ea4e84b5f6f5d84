"""Compute layer of the "Features by class" page: labelled data, per class.

For a dataset with labels (MLL's ALL/AML/MLL, LRS classes, digits, an upload
with a class column) the page shows, for each nonnegative sparse component,
its features with their loading, their mean in every class and a separation
score, the component scores by class and a heatmap of the selected features
× samples ordered by class.

Everything here is pure: arrays in, arrays / tables / bytes out.  The only
cached function is :func:`fast_components` (the solver, through the public
``nspca_core.api.components`` with ``certify=False``: the page never waits on
a certificate).  The rest is cheap (it touches the selected features only) and
recomputed on every run.

Separation score
----------------
The one-way ANOVA F statistic of a feature across the classes,

    F = [Σ_g n_g (μ_g − μ)² / (G − 1)] / [Σ_g Σ_{i∈g} (x_i − μ_g)² / (m − G)],

between-class over within-class mean square (G classes, m samples), with its
p-value from the F(G − 1, m − G) distribution.  F is unchanged by centering
and by scaling a feature, so it is the same on the file's values and on the
centered or standardized matrix the components were found on.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st
from scipy import stats

from nspca_core import InputError
from nspca_core.methods import REMOVE

__all__ = [
    "NO_LABEL",
    "ClassAnalysis",
    "fast_components",
    "class_codes",
    "class_means",
    "anova_f",
    "feature_table",
    "component_scores",
    "selected_features",
    "heatmap_matrix",
    "analyse",
    "tables_csv",
    "scores_csv",
    "heatmap_csv",
]

# The class of a sample whose label is missing (None, NaN or an empty string).
NO_LABEL = "(no label)"


@st.cache_data(show_spinner=False, max_entries=32)
def fast_components(X: np.ndarray, n_components: int, k: int, method: str = "auto", d: int = 3,
                    eps: float = 0.1, seed: int = 0, _callback=None):
    """``nspca_core.api.components(X, ..., certify=False)``, features of earlier components removed.

    The fast answer only (no certificate).  ``strategy="deflation-remove"``
    gives disjoint supports, so each feature belongs to one component and the
    per-component tables do not repeat features.
    """
    from nspca_core.api import components
    return components(
        X, n_components=int(n_components), k=int(k), method=method, strategy=REMOVE,
        d=int(d), eps=float(eps), random_state=int(seed), certify=False, center=False,
        callback=_callback)


# ----------------------------------------------------------------- classes
def _is_missing(value) -> bool:
    if value is None:
        return True
    if isinstance(value, float | np.floating) and np.isnan(value):
        return True
    return isinstance(value, str) and value.strip() == ""


def _natural_key(name: str):
    """Sort key: numbers by value (2 before 12), then text; the missing class last."""
    if name == NO_LABEL:
        return (2, 0.0, "")
    try:
        return (0, float(name), "")
    except ValueError:
        return (1, 0.0, name.casefold())


def class_codes(labels) -> tuple[list[str], np.ndarray]:
    """The classes (as text, in natural order) and each sample's class index.

    Parameters
    ----------
    labels : array-like of shape (m,)
        One label per sample, of any type; missing ones (None, NaN, "") form
        the class :data:`NO_LABEL`.

    Returns
    -------
    classes : list of str
        Distinct labels; numeric labels sorted by value, text alphabetically.
    codes : ndarray of int, shape (m,)
        ``classes[codes[i]]`` is the label of sample i.
    """
    raw = np.asarray(labels, dtype=object).ravel()
    text = np.array([NO_LABEL if _is_missing(v) else _label_text(v) for v in raw], dtype=object)
    classes = sorted(set(text.tolist()), key=_natural_key)
    index = {c: i for i, c in enumerate(classes)}
    return classes, np.array([index[t] for t in text], dtype=int)


def _label_text(value) -> str:
    """A label as text; integral floats (1.0, read from a numeric column) as integers."""
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    return str(value)


def class_means(X: np.ndarray, codes: np.ndarray, n_classes: int) -> np.ndarray:
    """Mean of every column of ``X`` in every class, shape (n_classes, n_columns).

    A class without samples gets NaN.
    """
    X = np.asarray(X, dtype=float)
    onehot = np.zeros((X.shape[0], n_classes))
    onehot[np.arange(X.shape[0]), codes] = 1.0
    counts = onehot.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (onehot.T @ X) / counts[:, None]


def anova_f(X: np.ndarray, codes: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """One-way ANOVA F statistic and p-value of every column of ``X`` across the classes.

    Parameters
    ----------
    X : ndarray of shape (m, p)
    codes : ndarray of int, shape (m,)
        Class index of each sample (:func:`class_codes`).
    n_classes : int

    Returns
    -------
    F, p : ndarrays of shape (p,)
        ``F = inf`` (p = 0) when the classes differ and every class is constant;
        ``F = nan`` for a constant column.

    Raises
    ------
    InputError
        Fewer than 2 classes with samples, or no more samples than classes.
    """
    X = np.asarray(X, dtype=float)
    m = X.shape[0]
    counts = np.bincount(codes, minlength=n_classes)
    G = int(np.count_nonzero(counts))
    if G < 2:
        raise InputError(f"the separation score needs at least 2 classes; the labels have {G}")
    if m <= G:
        raise InputError(f"the separation score needs more samples than classes; got {m} samples "
                         f"in {G} classes")
    means = class_means(X, codes, n_classes)
    grand = X.mean(axis=0)
    present = counts > 0
    ssb = counts[present] @ (means[present] - grand) ** 2
    ssw = np.sum((X - means[codes]) ** 2, axis=0)
    total = ssb + ssw
    scale = np.maximum(np.sum(X**2, axis=0), np.finfo(float).tiny)
    constant = total <= 1e-24 * scale          # no variation at all (rounding only)
    pure = ~constant & (ssw <= 1e-12 * total)  # classes differ, no spread inside them
    with np.errstate(invalid="ignore", divide="ignore"):
        F = (ssb / (G - 1)) / (ssw / (m - G))
    F = np.where(constant, np.nan, np.where(pure, np.inf, F))
    p = np.where(np.isnan(F), np.nan, stats.f.sf(np.where(np.isfinite(F), F, 0.0), G - 1, m - G))
    p = np.where(np.isposinf(F), 0.0, p)
    return F, p


# ----------------------------------------------------------------- tables
def feature_table(values: np.ndarray, x: np.ndarray, feature_names, classes: list[str],
                  codes: np.ndarray) -> pd.DataFrame:
    """The features of one component: name, loading, mean per class, F, p, highest class.

    Parameters
    ----------
    values : ndarray of shape (m, n)
        The values whose class means are shown (the file's values or the
        analysed matrix).
    x : ndarray of shape (n,)
        The component (nonnegative loadings); its nonzeros are the rows.
    feature_names : sequence of str, length n
    classes, codes
        From :func:`class_codes`.

    Returns
    -------
    DataFrame sorted by loading (largest first), one row per nonzero loading;
    columns ``feature``, ``loading``, ``mean <class>`` per class, ``F``,
    ``p-value``, ``highest mean in``.
    """
    x = np.asarray(x, dtype=float)
    support = np.flatnonzero(x != 0)
    support = support[np.argsort(-x[support], kind="stable")]
    sub = np.asarray(values, dtype=float)[:, support]
    G = len(classes)
    means = class_means(sub, codes, G)  # (G, s)
    F, p = anova_f(sub, codes, G) if support.size else (np.zeros(0), np.zeros(0))
    table = pd.DataFrame({"feature": [str(feature_names[j]) for j in support], "loading": x[support]})
    for g, name in enumerate(classes):
        table[f"mean {name}"] = means[g]
    table["F"] = F
    table["p-value"] = p
    filled = np.where(np.isnan(means), -np.inf, means)
    table["highest mean in"] = [classes[g] for g in np.argmax(filled, axis=0)] if support.size else []
    table.index = pd.Index(support, name="column")
    return table


def component_scores(X: np.ndarray, loadings: np.ndarray) -> np.ndarray:
    """Scores ``X @ loadings`` (samples × components) of the analysed matrix."""
    L = np.asarray(loadings, dtype=float)
    return np.asarray(X, dtype=float) @ (L[:, None] if L.ndim == 1 else L)


def selected_features(loadings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The features used by any component, component by component, largest loading first.

    Returns
    -------
    features : ndarray of int
        Column indices, each once (the first component that uses it).
    component : ndarray of int
        The (0-based) component each feature is listed under.
    """
    L = np.asarray(loadings, dtype=float)
    L = L[:, None] if L.ndim == 1 else L
    seen: set[int] = set()
    feats, comps = [], []
    for j in range(L.shape[1]):
        col = L[:, j]
        support = np.flatnonzero(col != 0)
        for i in support[np.argsort(-col[support], kind="stable")]:
            if int(i) not in seen:
                seen.add(int(i))
                feats.append(int(i))
                comps.append(j)
    return np.array(feats, dtype=int), np.array(comps, dtype=int)


def heatmap_matrix(values: np.ndarray, features: np.ndarray, codes: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Selected features × samples, each feature standardized, samples ordered by class.

    Returns
    -------
    Z : ndarray of shape (len(features), m)
        ``(value − feature mean) / feature standard deviation`` over all
        samples (0 for a constant feature), columns in ``order``.
    order : ndarray of int, shape (m,)
        Sample indices sorted by class (stable: file order inside a class).
    """
    order = np.argsort(codes, kind="stable")
    sub = np.asarray(values, dtype=float)[:, np.asarray(features, dtype=int)]
    mu = sub.mean(axis=0)
    sd = sub.std(axis=0)
    Z = np.divide(sub - mu, sd, out=np.zeros_like(sub), where=sd > 0)
    return Z[order].T, order


# ----------------------------------------------------------------- everything
@dataclass(frozen=True)
class ClassAnalysis:
    """What the page shows for labelled data and r components.

    Attributes
    ----------
    classes : list of str
    codes : ndarray of int (m,)
    counts : ndarray of int (G,)
        Samples per class.
    tables : list of DataFrame
        :func:`feature_table` of each component.
    scores : ndarray (m, r)
        Component scores of the analysed matrix.
    score_F, score_p : ndarray (r,)
        One-way ANOVA of the scores across the classes.
    features, feature_component : ndarray of int
        :func:`selected_features`.
    Z : ndarray (len(features), m)
        :func:`heatmap_matrix`; ``order`` its sample order.
    order : ndarray of int (m,)
    """

    classes: list
    codes: np.ndarray
    counts: np.ndarray
    tables: list
    scores: np.ndarray
    score_F: np.ndarray
    score_p: np.ndarray
    features: np.ndarray
    feature_component: np.ndarray
    Z: np.ndarray
    order: np.ndarray


def analyse(X: np.ndarray, values: np.ndarray, labels, feature_names, loadings: np.ndarray
            ) -> ClassAnalysis:
    """Tables, scores, score separation and heatmap of labelled data for given components.

    Parameters
    ----------
    X : ndarray (m, n)
        The analysed (preprocessed) matrix: scores are ``X @ loadings``.
    values : ndarray (m, n)
        The values shown per class (class means, F, heatmap); the file's
        values or ``X`` itself.
    labels : array-like (m,)
    feature_names : sequence of str (n,)
    loadings : ndarray (n, r)

    Raises
    ------
    InputError
        Labels of the wrong length, or fewer than 2 classes.
    """
    X = np.asarray(X, dtype=float)
    values = np.asarray(values, dtype=float)
    m, n = X.shape
    labels = np.asarray(labels, dtype=object).ravel()
    if labels.shape[0] != m:
        raise InputError(f"`labels` must have one entry per sample (m={m}); got {labels.shape[0]}")
    if values.shape != X.shape:
        raise InputError(f"`values` must have the shape of the data {X.shape}; got {values.shape}")
    if len(feature_names) != n:
        raise InputError(f"`feature_names` must name the n={n} features; got {len(feature_names)}")
    classes, codes = class_codes(labels)
    if len(classes) < 2:
        raise InputError(f"the labels have {len(classes)} class ({classes[0] if classes else 'none'}); "
                         "comparing classes needs at least 2")
    L = np.asarray(loadings, dtype=float)
    L = L[:, None] if L.ndim == 1 else L
    G = len(classes)
    tables = [feature_table(values, L[:, j], feature_names, classes, codes) for j in range(L.shape[1])]
    scores = component_scores(X, L)
    score_F, score_p = anova_f(scores, codes, G)
    features, comp = selected_features(L)
    Z, order = heatmap_matrix(values, features, codes)
    return ClassAnalysis(classes=classes, codes=codes, counts=np.bincount(codes, minlength=G),
                         tables=tables, scores=scores, score_F=score_F, score_p=score_p,
                         features=features, feature_component=comp, Z=Z, order=order)


# ----------------------------------------------------------------- exports
def _csv(df: pd.DataFrame) -> bytes:
    buf = io.StringIO()
    df.to_csv(buf, index=False)
    return buf.getvalue().encode()


def tables_csv(tables: list[pd.DataFrame]) -> bytes:
    """Every component's feature table in one CSV, with a ``component`` column (from 1)."""
    parts = [t.reset_index().drop(columns="column").assign(component=j + 1)
             for j, t in enumerate(tables)]
    if not parts:
        return _csv(pd.DataFrame(columns=["component", "feature", "loading"]))
    df = pd.concat(parts, ignore_index=True)
    return _csv(df[["component", *[c for c in df.columns if c != "component"]]])


def scores_csv(scores: np.ndarray, classes: list[str], codes: np.ndarray, sample_names=None) -> bytes:
    """One row per sample (in data order): its name (``sample_names``, else its number from 1),
    its class and its component scores."""
    S = np.asarray(scores, dtype=float)
    df = pd.DataFrame(S, columns=[f"component {j + 1}" for j in range(S.shape[1])])
    df.insert(0, "class", [classes[c] for c in codes])
    if sample_names is not None and len(sample_names) == S.shape[0]:
        df.insert(0, "sample", [str(v) for v in sample_names])
    else:
        df.insert(0, "sample", np.arange(1, S.shape[0] + 1))
    return _csv(df)


def heatmap_csv(Z: np.ndarray, feature_names, features: np.ndarray, order: np.ndarray,
                classes: list[str], codes: np.ndarray) -> bytes:
    """The heatmap's matrix: one row per selected feature, one column per sample (class order).

    Column headers are ``<class>:<sample number from 1>``.
    """
    cols = [f"{classes[codes[i]]}:{i + 1}" for i in order]
    df = pd.DataFrame(np.asarray(Z, dtype=float), columns=cols)
    df.insert(0, "feature", [str(feature_names[j]) for j in features])
    return _csv(df)
