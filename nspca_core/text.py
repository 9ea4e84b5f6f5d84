"""Text data: weighting of a documents x words count matrix and components shown as topics.

:func:`text_weighting` applies the paper's raw counts or tf-idf / log1p, named in
the result; centering stays implicit (:func:`nspca_core.operators.sparse.as_sparse_cov`).
:func:`topics_table` / :func:`topics_csv` turn loadings into topics.

The bag-of-words readers (:class:`TextData`, :func:`read_uci_bow`, :func:`read_mtx`,
:func:`read_sparse_npz`, :func:`read_vocab`, :func:`load_text`) live in
:mod:`nspca_core.io.bow` (files are read in ``io``); they are importable from here as before.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ._common.validation import InputError
from .io.bow import (TEXT_FORMATS, TextData, load_text, read_mtx, read_sparse_npz,  # noqa: F401
                     read_uci_bow, read_vocab)

__all__ = [
    "TextData",
    "Weighted",
    "WEIGHTINGS",
    "read_uci_bow",
    "read_vocab",
    "read_mtx",
    "read_sparse_npz",
    "load_text",
    "text_weighting",
    "topics_table",
    "topics_csv",
    "format_topics",
    "TEXT_FORMATS",
]


#: weightings of :func:`text_weighting`
WEIGHTINGS = ("counts", "tfidf", "log1p")


@dataclass(frozen=True, eq=False)
class Weighted:
    """Result of :func:`text_weighting`.

    ``X`` the weighted sparse matrix (not centered: centering is implicit in
    :func:`~nspca_core.operators.sparse.as_sparse_cov`), ``weighting`` its name,
    ``center`` whether the covariance is to be centered, ``idf`` the inverse
    document frequencies (tf-idf only), ``notes`` what was done.
    """

    X: sp.csr_matrix
    weighting: str
    center: bool
    idf: np.ndarray | None
    notes: list


# --------------------------------------------------------------------------- weighting

def text_weighting(X, *, weighting: str = "counts", center: bool = True) -> Weighted:
    """The paper's raw counts, or tf-idf / log1p, on a sparse documents x words matrix.

    Parameters
    ----------
    X : scipy.sparse (documents, words), nonnegative
    weighting : {"counts", "tfidf", "log1p"}
        ``"counts"`` as given (Asteris et al. 2015 used raw counts, centered);
        ``"tfidf"``: ``x_ij * idf_j`` with the smoothed
        ``idf_j = ln((1 + D) / (1 + df_j)) + 1`` (scikit-learn's default, no
        row normalization; computed by scikit-learn's ``TfidfTransformer(norm=None)``,
        whose formula this is); ``"log1p"``: ``log(1 + x_ij)`` on the stored values
        (zeros stay zero, so sparsity is kept).
    center : bool, default True
        Recorded for the covariance (centering is implicit in
        :func:`~nspca_core.operators.sparse.as_sparse_cov`; the matrix is never densified).

    Returns
    -------
    Weighted
    """
    if not sp.issparse(X):
        raise InputError(f"`X` must be a scipy.sparse matrix; got {type(X).__name__}")
    if weighting not in WEIGHTINGS:
        raise InputError(f"`weighting` must be one of {WEIGHTINGS}; got {weighting!r}")
    if not isinstance(center, (bool, np.bool_)):
        raise InputError(f"`center` must be True or False; got {center!r}")
    X = sp.csr_matrix(X, dtype=np.float64, copy=True)
    if X.nnz and X.data.min() < 0:
        raise InputError(f"`X` must hold nonnegative counts for text weighting; got min "
                         f"{float(X.data.min()):g}")
    idf = None
    if weighting == "counts":
        notes = ["raw counts (as in Asteris et al. 2015)"]
    elif weighting == "log1p":
        X.data = np.log1p(X.data)
        notes = ["log1p: each count x replaced by log(1 + x) (zeros stay zero)"]
    else:
        from sklearn.feature_extraction.text import TfidfTransformer

        X.eliminate_zeros()  # scikit-learn counts stored entries as occurrences
        tfidf = TfidfTransformer(norm=None, use_idf=True, smooth_idf=True, sublinear_tf=False)
        X = sp.csr_matrix(tfidf.fit_transform(X), dtype=np.float64)
        idf = np.asarray(tfidf.idf_, dtype=np.float64)
        notes = ["tf-idf: counts times idf = ln((1 + D) / (1 + df)) + 1 (smoothed, no row "
                 "normalization)"]
    notes.append("centered implicitly (A = X^T X / m - mu mu^T; the matrix stays sparse)"
                 if center else "not centered (A = X^T X / m)")
    return Weighted(X=X, weighting=weighting, center=bool(center), idf=idf, notes=notes)


# --------------------------------------------------------------------------- topics

def topics_table(loadings, vocabulary, *, n_words: int | None = None):
    """Topics: the words of each component with their weights, sorted.

    Parameters
    ----------
    loadings : array_like (n, r)
        Component loadings (one column per component), e.g.
        ``ComponentsResult.loadings``; a 1-D vector is one component.
    vocabulary : sequence of str (n,)
    n_words : int, optional
        Keep at most this many words per component (default: all nonzeros).

    Returns
    -------
    pandas.DataFrame
        Columns ``component`` (1-based), ``rank`` (1-based), ``word``,
        ``word_index`` (0-based column), ``weight``; the nonzero loadings of
        each component by decreasing ``|weight|`` (ties by index).
    """
    import pandas as pd

    L = np.asarray(loadings, dtype=np.float64)
    if L.ndim == 1:
        L = L[:, None]
    if L.ndim != 2:
        raise InputError(f"`loadings` must be 1-D or 2-D (words x components); got shape {L.shape}")
    n = L.shape[0]
    if len(vocabulary) != n:
        raise InputError(f"`vocabulary` must have one word per row of `loadings` ({n}); got "
                         f"{len(vocabulary)}")
    if n_words is not None and (isinstance(n_words, bool) or not isinstance(n_words, int)
                                or n_words < 1):
        raise InputError(f"`n_words` must be an int >= 1 or None; got {n_words!r}")
    rows = []
    for j in range(L.shape[1]):
        idx = np.flatnonzero(L[:, j])
        idx = idx[np.lexsort((idx, -np.abs(L[idx, j])))]
        if n_words is not None:
            idx = idx[:n_words]
        rows += [(j + 1, r + 1, str(vocabulary[i]), int(i), float(L[i, j]))
                 for r, i in enumerate(idx)]
    return pd.DataFrame(rows, columns=["component", "rank", "word", "word_index", "weight"])


def topics_csv(loadings, vocabulary, *, n_words: int | None = None) -> str:
    """:func:`topics_table` as CSV text (header ``component,rank,word,word_index,weight``)."""
    return topics_table(loadings, vocabulary, n_words=n_words).to_csv(index=False,
                                                                      float_format="%.6g")


def format_topics(loadings, vocabulary, *, n_words: int | None = 10) -> str:
    """One line per component: ``1: word (0.412), word (0.398), ...`` (for the CLI)."""
    table = topics_table(loadings, vocabulary, n_words=n_words)
    lines = []
    for j, grp in table.groupby("component", sort=True):
        words = ", ".join(f"{w} ({v:.3f})" for w, v in zip(grp["word"], grp["weight"]))
        lines.append(f"{j}: {words}")
    return "\n".join(lines)
