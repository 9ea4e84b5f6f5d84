"""Synthetic bag-of-words corpora at the shapes of the UCI corpora, with planted topics.

:func:`synthetic_corpus` draws a documents x words count matrix straight into
CSR, chunk by chunk (never a dense matrix): background words follow a Zipf law,
document lengths are Poisson, and a share of the documents spend part of their
words on one of a few *planted topics* — disjoint word sets that are the
ground truth for sparse PCA (each is a sparse nonnegative direction of high
variance).  :data:`CORPUS_SHAPES` holds the shapes and nonzero counts of the
UCI Bag-of-Words corpora used by Asteris et al. (2015), Table 2.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ._common.validation import InputError, as_rng, check_int
from .result import seed_param

__all__ = ["CORPUS_SHAPES", "SyntheticCorpus", "synthetic_corpus", "corpus_like",
           "zipf_probabilities"]

#: (documents, words, nonzeros) of the UCI Bag-of-Words corpora (docword headers)
CORPUS_SHAPES = {
    "kos": (3430, 6906, 353160),
    "nips": (1500, 12419, 746316),
    "enron": (39861, 28102, 3710420),
    "nytimes": (300000, 102660, 69679427),
}

_DEFAULT_CHUNK = 8192


@dataclass(frozen=True, eq=False)
class SyntheticCorpus:
    """A generated corpus.

    Attributes
    ----------
    X : scipy.sparse.csr_matrix (documents, words)
        Word counts (float64 by default, float32 on request); int32 indices.
    vocabulary : list of str
        ``"t{j}_w{i}"`` for word i of planted topic j, ``"w{id}"`` otherwise.
    topics : list of ndarray
        The planted word sets (sorted word ids), the ground truth.
    doc_topic : ndarray (documents,)
        The planted topic of each document, -1 for none.
    params : dict
        Every generator parameter, including the calibrated ``mean_length``.
    notes : list of str
    """

    X: sp.csr_matrix
    vocabulary: list
    topics: list
    doc_topic: np.ndarray
    params: dict
    notes: list


def zipf_probabilities(n_words: int, exponent: float = 1.0, offset: float = 2.7) -> np.ndarray:
    """Zipf–Mandelbrot word probabilities ``p_w ∝ (w + offset)^(-exponent)``, w = 0..n-1."""
    p = (np.arange(n_words, dtype=np.float64) + offset) ** (-float(exponent))
    return p / p.sum()


def _expected_distinct(mean_length, p, topic_prob, topic_share, topic_size):
    """Expected distinct words per document (Poisson lengths make word counts
    independent Poissons, so word w is present with probability 1 - exp(-λ_w))."""
    background = np.sum(-np.expm1(-mean_length * p))
    # topic words also occur in the background; their extra presence is second order
    topic = topic_size * -np.expm1(-mean_length * topic_share / topic_size)
    return background + topic_prob * topic


def _calibrate_length(target, p, topic_prob, topic_share, topic_size):
    """Mean document length whose expected distinct-word count is ``target`` (bisection)."""
    lo, hi = 1e-3, 1.0
    while _expected_distinct(hi, p, topic_prob, topic_share, topic_size) < target:
        hi *= 2.0
        if hi > 1e9:
            raise InputError(f"cannot reach {target:.4g} distinct words per document with "
                             f"{p.size} words")
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if _expected_distinct(mid, p, topic_prob, topic_share, topic_size) < target:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _check_frac(value, name, low=0.0, high=1.0):
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if not ok or not np.isfinite(value) or not low <= float(value) <= high:
        raise InputError(f"`{name}` must be a number in [{low}, {high}]; got {value!r}")
    return float(value)


def _pick_topics(rng, n_words, n_topics, topic_size):
    """Disjoint topic word sets from the middle of the frequency ranks (not the head)."""
    lo = min(n_words // 100, max(n_words - n_topics * topic_size, 0))
    hi = max(n_words // 2, lo + n_topics * topic_size)
    hi = min(hi, n_words)
    pool = rng.choice(np.arange(lo, hi), size=n_topics * topic_size, replace=False)
    return [np.sort(pool[j * topic_size:(j + 1) * topic_size]) for j in range(n_topics)]


def _chunk(rng, n_docs, n_words, cdf, mean_length, topics, doc_topic, topic_share):
    """CSR pieces (indptr counts, indices, data) of ``n_docs`` documents."""
    n_bg = rng.poisson(mean_length, n_docs)
    has = doc_topic >= 0
    n_topic = np.zeros(n_docs, dtype=np.int64)
    n_topic[has] = rng.poisson(topic_share * mean_length, int(has.sum()))
    doc_bg = np.repeat(np.arange(n_docs, dtype=np.int64), n_bg)
    words_bg = np.searchsorted(cdf, rng.random(doc_bg.size), side="right")
    np.minimum(words_bg, n_words - 1, out=words_bg)
    doc_tp = np.repeat(np.arange(n_docs, dtype=np.int64), n_topic)
    if doc_tp.size:
        T = np.stack(topics)  # (topics, size)
        t_of = doc_topic[doc_tp]
        words_tp = T[t_of, rng.integers(0, T.shape[1], doc_tp.size)]
    else:
        words_tp = np.zeros(0, dtype=np.int64)
    keys = np.concatenate([doc_bg * n_words + words_bg, doc_tp * n_words + words_tp])
    keys, counts = np.unique(keys, return_counts=True)
    docs = keys // n_words
    return (np.bincount(docs, minlength=n_docs), (keys - docs * n_words).astype(np.int32),
            counts)


def synthetic_corpus(n_docs: int, n_words: int, *, nnz=None, mean_length=None, n_topics: int = 8,
                     topic_size: int = 10, topic_prob: float = 0.8, topic_share: float = 0.5,
                     zipf_exponent: float = 1.0, seed=0, dtype=np.float64,
                     chunk_docs: int = _DEFAULT_CHUNK, callback=None) -> SyntheticCorpus:
    """Draw a documents x words count matrix with planted topics, straight into CSR.

    Parameters
    ----------
    n_docs, n_words : int >= 1
    nnz : int, optional
        Target number of nonzeros: the mean document length is calibrated so
        the expected number of distinct words per document is ``nnz / n_docs``
        (exact expectation under Poisson lengths; the realized count is within
        a fraction of a percent at corpus sizes).  Give ``nnz`` or ``mean_length``.
    mean_length : float, optional
        Mean tokens per document (Poisson).  Default: calibrated from ``nnz``,
        else 100.
    n_topics : int >= 0, default 8
    topic_size : int >= 1, default 10
        Words per planted topic (disjoint sets from the middle frequency ranks).
    topic_prob : float in [0, 1], default 0.8
        Share of documents that carry a topic (each picks one uniformly).
    topic_share : float in [0, 1], default 0.5
        A topic-carrying document adds ``Poisson(topic_share * mean_length)``
        tokens drawn uniformly from its topic's words.
    zipf_exponent : float > 0, default 1
        Background word law ``p_w ∝ (w + 2.7)^(-a)`` (word id = frequency rank).
    seed : int, None or Generator
    dtype : numpy float dtype, default float64
        float32 halves the value memory (counts are exact either way).
    chunk_docs : int, default 8192
        Documents drawn per chunk: memory per chunk is O(chunk_docs * mean_length).
    callback : callable(done, total), optional

    Returns
    -------
    SyntheticCorpus

    Notes
    -----
    Per document: ``Poisson(mean_length)`` background tokens i.i.d. Zipf;
    with probability ``topic_prob`` a topic ``t`` and, in addition,
    ``Poisson(topic_share * mean_length)`` tokens uniform on its words (added,
    so the background does not depend on the topic: no spurious variance of
    the frequent words).  Tokens are sorted and
    counted per chunk (``np.unique`` on ``doc * n_words + word``); only the CSR
    arrays (nnz values and int32 indices) are kept, so memory is about
    ``nnz * (itemsize + 4)`` bytes plus one chunk's tokens.  The topic words of
    topic-carrying documents co-occur, so the covariance has one sparse,
    nonnegative direction of high variance per topic.  The defaults make each
    topic's variance exceed that of the Zipf head (frequent words, correlated
    through the document length) at the KOS shape, so the planted sets are the
    sparse components to recover; ``topic_prob < 1`` keeps the topic
    indicators linearly independent after centering (with 1 they sum to one
    and the covariance has only ``n_topics - 1`` topic eigenvalues).
    """
    n_docs = check_int(n_docs, "n_docs", 1)
    n_words = check_int(n_words, "n_words", 1)
    n_topics = check_int(n_topics, "n_topics", 0)
    topic_size = check_int(topic_size, "topic_size", 1)
    if n_topics * topic_size > n_words:
        raise InputError(f"`n_topics` * `topic_size` must be at most n_words={n_words}; got "
                         f"{n_topics} * {topic_size} = {n_topics * topic_size}")
    topic_prob = _check_frac(topic_prob, "topic_prob") if n_topics else 0.0
    topic_share = _check_frac(topic_share, "topic_share")
    zipf_exponent = _check_frac(zipf_exponent, "zipf_exponent", 1e-6, 10.0)
    chunk_docs = check_int(chunk_docs, "chunk_docs", 1)
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise InputError(f"`dtype` must be float32 or float64; got {dtype}")
    if nnz is not None and mean_length is not None:
        raise InputError("give at most one of `nnz` and `mean_length`")
    rng = as_rng(seed)
    p = zipf_probabilities(n_words, zipf_exponent)
    if nnz is not None:
        nnz = check_int(nnz, "nnz", 1, n_docs * n_words)
        mean_length = _calibrate_length(nnz / n_docs, p, topic_prob, topic_share, topic_size)
    elif mean_length is None:
        mean_length = 100.0
    else:
        mean_length = _check_frac(mean_length, "mean_length", 1e-6, 1e9)
    cdf = np.cumsum(p)
    topics = _pick_topics(rng, n_words, n_topics, topic_size) if n_topics else []
    doc_topic = np.full(n_docs, -1, dtype=np.int64)
    if n_topics:
        carry = rng.random(n_docs) < topic_prob
        doc_topic[carry] = rng.integers(0, n_topics, int(carry.sum()))
    counts, indices, data = [], [], []
    for a in range(0, n_docs, chunk_docs):
        b = min(a + chunk_docs, n_docs)
        c, i, v = _chunk(rng, b - a, n_words, cdf, mean_length, topics, doc_topic[a:b],
                         topic_share)
        counts.append(c)
        indices.append(i)
        data.append(v.astype(dtype))
        if callback is not None:
            callback(b, n_docs)
    indptr = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(np.concatenate(counts), out=indptr[1:])
    if indptr[-1] < np.iinfo(np.int32).max:
        indptr = indptr.astype(np.int32)
    X = sp.csr_matrix((np.concatenate(data), np.concatenate(indices), indptr),
                      shape=(n_docs, n_words))
    vocabulary = [f"w{w}" for w in range(n_words)]
    for j, T in enumerate(topics):
        for i, w in enumerate(T):
            vocabulary[w] = f"t{j}_w{i}"
    params = dict(n_docs=n_docs, n_words=n_words, nnz_target=nnz, mean_length=float(mean_length),
                  n_topics=n_topics, topic_size=topic_size, topic_prob=topic_prob,
                  topic_share=topic_share, zipf_exponent=zipf_exponent, dtype=str(dtype),
                  random_state=seed_param(seed))
    notes = [f"synthetic corpus {n_docs} x {n_words}, {X.nnz} nonzeros "
             f"({X.nnz / (n_docs * n_words):.3%} dense), mean length {mean_length:.1f} tokens, "
             f"{n_topics} planted topics of {topic_size} words in {topic_prob:.0%} of documents"]
    return SyntheticCorpus(X=X, vocabulary=vocabulary, topics=topics, doc_topic=doc_topic,
                           params=params, notes=notes)


def corpus_like(name: str, *, seed=0, scale: float = 1.0, **options) -> SyntheticCorpus:
    """A synthetic corpus at the shape of a UCI corpus (:data:`CORPUS_SHAPES`).

    ``scale`` in (0, 1] shrinks the number of documents (same vocabulary and
    words per document), for quick runs; ``options`` go to :func:`synthetic_corpus`.
    """
    key = str(name).lower()
    if key not in CORPUS_SHAPES:
        raise InputError(f"`name` must be one of {sorted(CORPUS_SHAPES)}; got {name!r}")
    scale = _check_frac(scale, "scale", 1e-9, 1.0)
    D, W, nnz = CORPUS_SHAPES[key]
    Ds = max(1, int(round(D * scale)))
    return synthetic_corpus(Ds, W, nnz=max(1, int(round(nnz * Ds / D))), seed=seed, **options)
