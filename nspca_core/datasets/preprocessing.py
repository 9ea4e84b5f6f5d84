"""The shared preprocessing (log1p, center, standardize) of dense data, the
weighting of text corpora, and the two ``preprocessor`` s registry entries carry.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import partial

import numpy as np

from .._common.params import check
from .._common.validation import InputError
from ..text import text_weighting
from .types import Preprocessed

#: allowed preprocessing steps, in the order they are applied
PREPROCESSING_STEPS = ("log1p", "center", "standardize")


@dataclass(frozen=True)
class PreprocessingSpec:
    """One preprocessing choice offered by the app's sidebar, the CLI's ``--preprocessing`` and the
    estimator's ``preprocessing=``: its ``name``, the ``steps`` of :func:`preprocess` it applies (in
    the order of :data:`PREPROCESSING_STEPS`) and its ``label``."""

    name: str
    steps: tuple
    label: str


#: the preprocessing choices, declared once (the first is the default)
PREPROCESSING = {s.name: s for s in (
    PreprocessingSpec("center", ("center",), "center features"),
    PreprocessingSpec("standardize", ("center", "standardize"), "center + unit variance"),
    PreprocessingSpec("log1p", ("log1p", "center"), "log(1+x), then center"),
    PreprocessingSpec("none", (), "none (use as given)"),
)}


#: preprocessing names accepted for text corpora (centering is implicit)
TEXT_PREPROCESSING = ("counts", "tfidf", "log1p", "center", "none")


def _parse_steps(steps, argname: str) -> tuple:
    allowed = ("center", "standardize", "log1p", "none")
    if steps is None:
        return ()
    items = (steps,) if isinstance(steps, str) else steps
    try:
        items = tuple(items)
    except TypeError:
        raise InputError(f"`{argname}` must be a string or a tuple of steps from "
                         f"{allowed}; got {steps!r}") from None
    out = set()
    for s in items:
        if not isinstance(s, str) or s.lower().strip() not in allowed:
            raise InputError(f"`{argname}` steps must be from {allowed} (or a tuple of them); "
                             f"got {s!r}")
        s = s.lower().strip()
        if s == "none":
            continue
        out.add(s)
        if s == "standardize":
            out.add("center")  # standardizing means centering and scaling
    return tuple(s for s in PREPROCESSING_STEPS if s in out)


def log1p_data(X):
    """``log(1 + X)`` of nonnegative data in its container: dense (a new array), ``scipy.sparse`` (its
    stored values: zeros stay zero) or a ``dask.array`` (lazily; its values are not looked at).
    Negative values are refused with the message of :func:`preprocess`."""
    da = sys.modules.get("dask.array")
    if da is not None and isinstance(X, da.Array):
        return da.log1p(X)
    low = float(X.min()) if X.shape[0] * X.shape[1] else 0.0
    if low < 0:
        raise InputError(f"log1p needs nonnegative data; `X` has min {low:.6g}; use 'center' or "
                         "'standardize' instead")
    return X.log1p() if hasattr(X, "log1p") else np.log1p(X)


def preprocess(X, *, steps=("center",)) -> Preprocessed:
    """Apply the shared preprocessing to a samples x features matrix.

    Parameters
    ----------
    X : array_like (m, n)
        Finite data, samples as rows.
    steps : str or tuple of str
        Any of ``"log1p"``, ``"center"``, ``"standardize"`` (implies ``"center"``),
        ``"none"``.  Steps are applied in the fixed order log1p -> center ->
        standardize whatever order they are given in.

    Returns
    -------
    Preprocessed
        ``X`` (float64 copy), ``steps`` applied, ``mean``, ``scale``, ``notes``.

    Raises
    ------
    InputError
        Unknown step, non-finite data, or log1p on data with negative values.

    Notes
    -----
    ``center`` subtracts each feature's mean, so ``A = X^T X / m`` is the sample
    covariance the papers use (Asteris et al. 2014, Sec. 5).  ``standardize``
    divides each centered feature by its standard deviation (ddof = 0, so ``A``
    has unit diagonal).  A constant feature has standard deviation 0: it is kept
    at zero (scale 1) and a note says so, never a division by zero.  ``log1p``
    maps ``x -> log(1 + x)`` and is only defined here for ``x >= 0``.
    """
    steps = _parse_steps(steps, "steps")
    A = check("matrix", X, "X").copy()
    m, n = A.shape
    notes = []
    mean = scale = None
    if "log1p" in steps:
        neg = A < 0
        if neg.any():
            i, j = np.argwhere(neg)[0]
            raise InputError(f"log1p needs nonnegative data; `X` has {int(neg.sum())} negative "
                             f"value(s), the first at row {i}, column {j} ({A[i, j]:g}); use "
                             "'center' or 'standardize' instead", argument="X",
                             plain=f"log(1+x) needs nonnegative data; the data have {int(neg.sum())} "
                                   f"negative value(s), the first at row {i + 1}, column {j + 1} (counted "
                                   f"from 1; {A[i, j]:g}); use 'center' or 'standardize' instead")
        A = np.log1p(A)
        notes.append(f"log1p: every value x replaced by log(1 + x) ({m} x {n} values)")
    if "center" in steps:
        mean = A.mean(axis=0)
        A -= mean
        notes.append(f"centered: each of the {n} features had its mean subtracted")
    if "standardize" in steps:
        sd = A.std(axis=0)
        # a feature is constant when its spread is at rounding level relative to its size
        ref = np.abs(mean) if mean is not None else np.zeros(n)
        const = sd <= 1e-12 * np.maximum(1.0, ref)
        scale = np.where(const, 1.0, sd)
        A /= scale
        if const.any():
            A[:, const] = 0.0
            idx = np.flatnonzero(const)
            shown = ", ".join(str(int(i)) for i in idx[:10]) + (", ..." if idx.size > 10 else "")
            notes.append(f"standardize: {idx.size} constant feature(s) (columns {shown}) have "
                         "zero spread; they were kept at zero instead of dividing by zero")
        notes.append("standardized: each non-constant feature divided by its standard "
                     "deviation (ddof=0)")
    if not steps:
        notes.append("no preprocessing: the raw values are used as they are")
    return Preprocessed(X=A, steps=steps, mean=mean, scale=scale, notes=notes)


def _text_weighting_from(preprocessing) -> tuple[str, bool]:
    """(weighting, center) from a ``load_dataset`` preprocessing value for text corpora."""
    items = (preprocessing,) if isinstance(preprocessing, str) or preprocessing is None \
        else tuple(preprocessing)
    weighting, center = "counts", False
    for item in items:
        step = "none" if item is None else str(item).lower().strip()
        if step not in TEXT_PREPROCESSING:
            raise InputError(f"`preprocessing` of a text corpus must be from {TEXT_PREPROCESSING} "
                             f"(or a tuple of them, e.g. ('tfidf', 'center')); got {item!r}")
        if step == "center":
            center = True
        elif step in ("tfidf", "log1p"):
            weighting = step
    return weighting, center


def _dense_preprocessor(preprocessing):
    """The default ``preprocessor`` of an entry: ``preprocessing`` checked now, then
    :func:`preprocess` with those steps."""
    return partial(preprocess, steps=_parse_steps(preprocessing, "preprocessing"))


def _text_preprocessor(preprocessing):
    """``preprocessor`` of a text entry: ``preprocessing`` checked now, then the counts
    weighted (:func:`_weight_text`); the centering stays implicit."""
    weighting, center = _text_weighting_from(preprocessing)
    return partial(_weight_text, weighting=weighting, center=center)


def _weight_text(X, *, weighting: str, center: bool) -> Preprocessed:
    """Weighted sparse counts; ``mean`` the column means when the covariance is to be
    centered implicitly."""

    w = text_weighting(X, weighting=weighting, center=center)
    m = w.X.shape[0]
    mean = np.asarray(w.X.sum(axis=0)).ravel() / m if center else None
    steps = (weighting,) + (("center",) if center else ())
    return Preprocessed(X=w.X, steps=steps, mean=mean, scale=None, notes=list(w.notes))
