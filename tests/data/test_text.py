"""Text readers (UCI bag-of-words, Matrix Market, save_npz) on small files the tests
write, malformed files -> DataFormatError, text weighting, topics tables."""

from __future__ import annotations

import gzip
import io

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core._common.validation import InputError
from nspca_core.io import DataFormatError
from nspca_core.io.bow import load_text, read_mtx, read_sparse_npz, read_uci_bow, read_vocab
from nspca_core.text import format_topics, text_weighting, topics_csv, topics_table


def docword_text(D, W, triples, nnz=None):
    nnz = len(triples) if nnz is None else nnz
    body = "".join(f"{d} {w} {c}\n" for d, w, c in triples)
    return f"{D}\n{W}\n{nnz}\n{body}"


def brute_matrix(D, W, triples):
    M = np.zeros((D, W))
    for d, w, c in triples:
        M[d - 1, w - 1] += c
    return M


TRIPLES = [(1, 1, 3), (1, 4, 1), (2, 2, 5), (3, 1, 2), (3, 3, 7), (3, 4, 1)]


@pytest.mark.parametrize("gz", [False, True])
def test_uci_bow_reads_paths_with_vocab(tmp_path, gz):
    text = docword_text(3, 4, TRIPLES).encode()
    path = tmp_path / ("docword.tiny.txt.gz" if gz else "docword.tiny.txt")
    path.write_bytes(gzip.compress(text) if gz else text)
    (tmp_path / "vocab.tiny.txt").write_text("apple\nbanana\ncherry\ndate\n")
    t = read_uci_bow(path, tmp_path / "vocab.tiny.txt")
    assert sp.isspmatrix_csr(t.X) and t.X.dtype == np.float64
    np.testing.assert_array_equal(t.X.toarray(), brute_matrix(3, 4, TRIPLES))
    assert t.vocabulary == ["apple", "banana", "cherry", "date"] and t.format == "uci-bow"
    assert load_text(path, tmp_path / "vocab.tiny.txt").X.nnz == len(TRIPLES)


def test_uci_bow_bytes_and_filelike_and_no_vocab():
    text = docword_text(3, 4, TRIPLES).encode()
    a = read_uci_bow(text, filename="docword.x.txt")
    b = read_uci_bow(io.BytesIO(gzip.compress(text)))
    np.testing.assert_array_equal(a.X.toarray(), b.X.toarray())
    assert a.vocabulary == ["word_1", "word_2", "word_3", "word_4"]
    assert any("no vocabulary" in n for n in a.notes)


def test_uci_bow_duplicates_summed_zero_counts_dropped():
    trip = [(1, 1, 2), (1, 1, 3), (2, 2, 0)]
    t = read_uci_bow(docword_text(2, 2, trip).encode())
    np.testing.assert_array_equal(t.X.toarray(), [[5, 0], [0, 0]])
    assert t.X.nnz == 1
    assert any("1 repeated" in n for n in t.notes) and any("1 zero count" in n for n in t.notes)


@settings(max_examples=40, deadline=None)
@given(D=st.integers(1, 8), W=st.integers(1, 8), data=st.data())
def test_property_uci_roundtrip_equals_brute_force(D, W, data):
    cells = data.draw(st.lists(st.tuples(st.integers(1, D), st.integers(1, W),
                                         st.integers(1, 50)), max_size=30))
    t = read_uci_bow(docword_text(D, W, cells).encode())
    np.testing.assert_array_equal(t.X.toarray(), brute_matrix(D, W, cells))
    t.X.check_format(full_check=True)


@pytest.mark.parametrize("text, match", [
    ("", "line 1 should hold D"),
    ("3\n4\n", "line 3 should hold NNZ"),
    ("3\nfour\n2\n1 1 1\n1 2 1\n", r"line 2 should hold W \(number of words\) as one integer.*'four'"),
    ("0\n4\n0\n", "D >= 1 documents and W >= 1 words; got D=0"),
    ("3\n4\n-2\n", "must be >= 0; got -2"),
    (docword_text(3, 4, TRIPLES, nnz=8), r"NNZ=8 triples but the file has fewer \(6\).*truncated"),
    (docword_text(3, 4, TRIPLES, nnz=4), r"NNZ=4 triples but the file has more"),
    (docword_text(3, 4, [(1, 1, 1), (4, 1, 1)]), r"docID must be in \[1, 3\].*got 4 on line 5"),
    (docword_text(3, 4, [(1, 0, 1)]), r"wordID must be in \[1, 4\].*got 0 on line 4"),
    (docword_text(3, 4, [(1, 1, 1), (2, 2, -3)]), r"counts must be >= 0; got -3 on line 5"),
    ("3\n4\n2\n1 1 1\n2 2\n", r"line 5 must be three integers.*'2 2'"),
    ("3\n4\n2\n1 1 1\n2 2 1.5\n", r"line 5 must be three integers.*'2 2 1.5'"),
    ("3\n4\n2\n1 1 1 1\n2 2 1\n", r"line 4 must be three integers"),
])
def test_uci_bow_malformed(text, match):
    with pytest.raises(DataFormatError, match=match):
        read_uci_bow(text.encode(), filename="docword.bad.txt")


def test_uci_bow_truncated_gzip():
    blob = gzip.compress(docword_text(3, 4, TRIPLES * 50, nnz=300).encode())
    with pytest.raises(DataFormatError, match="truncated"):
        read_uci_bow(blob[: len(blob) // 2], filename="docword.cut.txt.gz")


def test_vocab_messages(tmp_path):
    with pytest.raises(DataFormatError, match="vocabulary has 2 words but the matrix has 4"):
        read_uci_bow(docword_text(3, 4, TRIPLES).encode(), b"a\nb\n")
    with pytest.raises(DataFormatError, match="line 2 of the vocabulary is empty"):
        read_vocab(b"a\n\nc\n")
    with pytest.raises(DataFormatError, match="must be UTF-8"):
        read_vocab(b"\xff\xfe\n")
    with pytest.raises(DataFormatError, match="file not found"):
        read_uci_bow(tmp_path / "nope.txt")


def _mtx_bytes(M):
    buf = io.BytesIO()
    scipy.io.mmwrite(buf, M)
    return buf.getvalue()


def test_mtx_reads_sparse_and_transposes():
    M = sp.random(6, 9, density=0.3, format="coo", random_state=0)
    t = read_mtx(_mtx_bytes(M), filename="x.mtx")
    np.testing.assert_allclose(t.X.toarray(), M.toarray())
    tt = read_mtx(_mtx_bytes(M), transpose=True)
    np.testing.assert_allclose(tt.X.toarray(), M.toarray().T)
    assert load_text(_mtx_bytes(M), filename="x.mtx").format == "mtx"


def test_mtx_dense_array_and_vocab_list():
    t = read_mtx(_mtx_bytes(np.array([[1.0, 0.0], [0.0, 2.0]])), ["a", "b"])
    assert t.vocabulary == ["a", "b"] and any("dense" in n for n in t.notes)


@pytest.mark.parametrize("blob, match", [
    (b"%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n", "not a valid Matrix Market"),
    (b"hello world\n", "not a valid Matrix Market"),
    (b"%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1.0 2.0\n", "complex values"),
])
def test_mtx_malformed(blob, match):
    with pytest.raises(DataFormatError, match=match):
        read_mtx(blob, filename="bad.mtx")


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_save_npz_roundtrip(fmt, tmp_path):
    M = sp.random(7, 5, density=0.4, format=fmt, random_state=1)
    sp.save_npz(tmp_path / "m.npz", M)
    t = read_sparse_npz(tmp_path / "m.npz", ["a", "b", "c", "d", "e"])
    np.testing.assert_allclose(t.X.toarray(), M.toarray())
    assert t.vocabulary[0] == "a" and t.format == "npz"
    A = sp.csr_array(M)
    sp.save_npz(tmp_path / "a.npz", A)
    np.testing.assert_allclose(load_text(tmp_path / "a.npz").X.toarray(), M.toarray())


def _npz(**arrays):
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


@pytest.mark.parametrize("arrays, match", [
    (dict(X=np.ones((2, 2))), "no 'format' entry"),
    (dict(format=np.array(b"dia"), shape=np.array([2, 2]), data=np.ones(2)), "format 'dia' is not supported"),
    (dict(format=np.array(b"csr"), shape=np.array([2, 2]), data=np.ones(2)), r"missing \['indices', 'indptr'\]"),
    (dict(format=np.array(b"csr"), shape=np.array([2, 2]), data=np.ones(2),
          indices=np.array([0, 5]), indptr=np.array([0, 1, 2])), "inconsistent"),
    (dict(format=np.array(b"csr"), shape=np.array([2, 2]), data=np.ones(2),
          indices=np.array([0, 1]), indptr=np.array([0, 2, 1])), "inconsistent"),
    (dict(format=np.array(b"coo"), shape=np.array([2, 2]), data=np.ones(1),
          row=np.array([3]), col=np.array([0])), "out of range"),
    (dict(format=np.array(b"csr"), shape=np.array([0, 2]), data=np.ones(0),
          indices=np.zeros(0, int), indptr=np.array([0])), "two positive integers"),
    (dict(format=np.array(b"csr"), shape=np.array([1, 2]), data=np.array([np.nan]),
          indices=np.array([0]), indptr=np.array([0, 1])), "finite"),
    (dict(format=np.array(b"csr"), shape=np.array([1, 1]), data=np.array([object()], dtype=object),
          indices=np.array([0]), indptr=np.array([0, 1])), "pickled object array"),
])
def test_save_npz_malformed(arrays, match):
    if any(np.asarray(v).dtype == object for v in arrays.values()):
        buf = io.BytesIO()
        np.savez(buf, **arrays)  # writes a pickle, which the reader must refuse
        blob = buf.getvalue()
    else:
        blob = _npz(**arrays)
    with pytest.raises(DataFormatError, match=match):
        read_sparse_npz(blob, filename="bad.npz")


def test_not_a_zip():
    with pytest.raises(DataFormatError, match="not a readable .npz"):
        read_sparse_npz(b"PK\x03\x04garbage", filename="bad.npz")
    with pytest.raises(DataFormatError, match="cannot tell the text format"):
        load_text(b"1", filename="x.csv")


def test_weightings_brute_force():
    M = np.array([[3.0, 0, 1], [0, 2, 0], [1, 0, 0], [0, 0, 4]])
    X = sp.csr_matrix(M)
    w = text_weighting(X)
    assert w.weighting == "counts" and w.center and (w.X != X).nnz == 0
    lg = text_weighting(X, weighting="log1p", center=False)
    np.testing.assert_allclose(lg.X.toarray(), np.log1p(M))
    assert not lg.center and "not centered" in lg.notes[-1]
    tf = text_weighting(X, weighting="tfidf")
    df = (M > 0).sum(axis=0)
    np.testing.assert_allclose(tf.idf, np.log(5.0 / (1 + df)) + 1)
    np.testing.assert_allclose(tf.X.toarray(), M * tf.idf)
    assert tf.weighting == "tfidf" and "tf-idf" in tf.notes[0]


def test_weighting_messages():
    X = sp.csr_matrix(np.eye(2))
    with pytest.raises(InputError, match="`weighting` must be one of"):
        text_weighting(X, weighting="bm25")
    with pytest.raises(InputError, match="nonnegative counts"):
        text_weighting(-X)
    with pytest.raises(InputError, match="must be a scipy.sparse"):
        text_weighting(np.eye(2))
    with pytest.raises(InputError, match="`center` must be True or False"):
        text_weighting(X, center=1)


def test_topics_table_sorted_and_csv():
    L = np.zeros((5, 2))
    L[[0, 3, 4], 0] = [0.2, 0.9, 0.4]
    L[[1, 2], 1] = [0.6, 0.8]
    vocab = ["a", "b", "c", "d", "e"]
    t = topics_table(L, vocab)
    assert list(t.columns) == ["component", "rank", "word", "word_index", "weight"]
    assert t[t.component == 1].word.tolist() == ["d", "e", "a"]
    assert t[t.component == 2].word.tolist() == ["c", "b"]
    assert topics_table(L, vocab, n_words=1).word.tolist() == ["d", "c"]
    csv = topics_csv(L, vocab)
    assert csv.splitlines()[0] == "component,rank,word,word_index,weight"
    assert csv.splitlines()[1] == "1,1,d,3,0.9"
    assert format_topics(L, vocab).splitlines()[1] == "2: c (0.800), b (0.600)"
    with pytest.raises(InputError, match="one word per row"):
        topics_table(L, vocab[:3])
    with pytest.raises(InputError, match="`n_words` must be"):
        topics_table(L, vocab, n_words=0)
