"""Synthetic corpora: shapes, nonzeros, counts, ground truth, determinism, messages;
planted topics recovered by the bipartite method on the sparse covariance."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core.operators.sparse import as_sparse_cov
from nspca_core._common.validation import InputError
from nspca_core.corpus import CORPUS_SHAPES, corpus_like, synthetic_corpus, zipf_probabilities
from nspca_core.peers import bipartite_components


def jaccard(a, b):
    a, b = set(map(int, a)), set(map(int, b))
    return len(a & b) / len(a | b)


def test_kos_shape_nnz_and_ground_truth():
    c = corpus_like("kos", seed=1)
    D, W, nnz = CORPUS_SHAPES["kos"]
    X = c.X
    assert sp.isspmatrix_csr(X) and X.shape == (D, W) and X.dtype == np.float64
    assert X.indices.dtype == np.int32
    assert abs(X.nnz - nnz) / nnz < 0.01  # calibrated expectation, realized within 1%
    assert X.has_sorted_indices or X.copy().has_sorted_indices
    assert (X.data >= 1).all() and np.array_equal(X.data, np.round(X.data))
    assert len(c.topics) == 8 and all(T.size == 10 for T in c.topics)
    allw = np.concatenate(c.topics)
    assert np.unique(allw).size == allw.size  # disjoint
    for j, T in enumerate(c.topics):
        assert [c.vocabulary[w] for w in T] == [f"t{j}_w{i}" for i in range(10)]
    # a topic-carrying document adds Poisson(topic_share * mean_length) words of its topic
    rows = np.flatnonzero(c.doc_topic == 3)[:50]
    Xr = X[rows].toarray()
    assert (Xr[:, c.topics[3]].sum(axis=1) > 0).mean() > 0.95


def test_row_lengths_and_zipf_law():
    c = synthetic_corpus(3000, 400, mean_length=80.0, n_topics=0, seed=2)
    L = np.asarray(c.X.sum(axis=1)).ravel()
    assert L.mean() == pytest.approx(80.0, rel=0.02)
    assert L.var() == pytest.approx(80.0, rel=0.15)  # Poisson lengths
    freq = np.asarray(c.X.sum(axis=0)).ravel() / L.sum()
    p = zipf_probabilities(400)
    np.testing.assert_allclose(freq[:5], p[:5], rtol=0.05)
    assert (c.doc_topic == -1).all() and c.topics == []


def test_same_seed_same_corpus_any_chunking():
    a = synthetic_corpus(500, 300, nnz=8000, n_topics=3, seed=7, chunk_docs=64)
    b = synthetic_corpus(500, 300, nnz=8000, n_topics=3, seed=7, chunk_docs=64)
    assert (a.X != b.X).nnz == 0 and all(np.array_equal(s, t) for s, t in zip(a.topics, b.topics))
    c = synthetic_corpus(500, 300, nnz=8000, n_topics=3, seed=8, chunk_docs=64)
    assert (a.X != c.X).nnz > 0


@settings(max_examples=30, deadline=None)
@given(D=st.integers(1, 60), W=st.integers(5, 80), topics=st.integers(0, 3),
       chunk=st.integers(1, 70), seed=st.integers(0, 1000), f32=st.booleans())
def test_property_valid_csr(D, W, topics, chunk, seed, f32):
    size = max(1, min(5, W // max(topics, 1)))
    c = synthetic_corpus(D, W, mean_length=20.0, n_topics=topics, topic_size=size,
                         seed=seed, chunk_docs=chunk, dtype=np.float32 if f32 else np.float64)
    X = c.X
    X.check_format(full_check=True)
    assert X.shape == (D, W) and X.dtype == (np.float32 if f32 else np.float64)
    assert (X.data > 0).all()
    # no duplicate (doc, word) entries: every stored entry is a distinct word of its row
    for i in range(D):
        idx = X.indices[X.indptr[i]:X.indptr[i + 1]]
        assert np.unique(idx).size == idx.size
    assert len(c.vocabulary) == W and c.doc_topic.shape == (D,)
    assert ((c.doc_topic >= -1) & (c.doc_topic < max(topics, 1))).all()


def test_planted_topics_recovered_by_bipartite():
    c = synthetic_corpus(800, 600, nnz=40000, n_topics=4, topic_size=8, seed=3)
    res = bipartite_components(as_sparse_cov(c.X), 4, 8, d=4, seed=0, samples=300)
    best = [max(jaccard(sup, T) for sup in res.supports) for T in c.topics]
    assert min(best) >= 0.8, best


@pytest.mark.parametrize("kwargs, match", [
    (dict(n_docs=0, n_words=5), r"`n_docs` must be an int >= 1; got 0"),
    (dict(n_docs=5, n_words=10, n_topics=3, topic_size=4), r"at most n_words=10; got 3 \* 4"),
    (dict(n_docs=5, n_words=10, n_topics=1, topic_prob=1.5), r"`topic_prob` must be a number in \[0.0, 1.0\]"),
    (dict(n_docs=5, n_words=10, n_topics=1, dtype=np.int32), "`dtype` must be float32 or float64"),
    (dict(n_docs=5, n_words=10, n_topics=1, nnz=10, mean_length=3.0), "at most one of `nnz` and `mean_length`"),
    (dict(n_docs=5, n_words=10, n_topics=1, nnz=51), r"`nnz` must be an int in \[1, 50\]"),
])
def test_messages(kwargs, match):
    with pytest.raises(InputError, match=match):
        synthetic_corpus(**kwargs)


def test_corpus_like_scale_and_name():
    c = corpus_like("enron", scale=0.01, seed=0)
    D, W, nnz = CORPUS_SHAPES["enron"]
    assert c.X.shape == (round(D * 0.01), W)
    assert abs(c.X.nnz - nnz * 0.01) / (nnz * 0.01) < 0.03
    with pytest.raises(InputError, match="`name` must be one of"):
        corpus_like("reuters")
