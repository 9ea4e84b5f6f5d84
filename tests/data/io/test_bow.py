"""``load_file`` on text corpora the tests write: UCI docword (+ vocab as an argument, a
file beside it, or in a .zip), Matrix Market, scipy.sparse.save_npz; the result stays
sparse and equals a brute-force dense build; malformed files -> DataFormatError."""

from __future__ import annotations

import gzip
import io
import zipfile

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core._common.validation import InputError
from nspca_core.io import DataFormatError, describe, load_file

VOCAB = ["apple", "banana", "cherry", "date", "elder"]
TRIPLES = [(1, 1, 2), (1, 3, 1), (2, 2, 4), (3, 5, 1), (3, 1, 1), (4, 4, 3)]


def docword(D, W, triples, nnz=None) -> bytes:
    nnz = len(triples) if nnz is None else nnz
    return (f"{D}\n{W}\n{nnz}\n" + "".join(f"{d} {w} {c}\n" for d, w, c in triples)).encode()


def vocab_bytes(words) -> bytes:
    return ("\n".join(words) + "\n").encode()


def brute(D, W, triples) -> np.ndarray:
    M = np.zeros((D, W))
    for d, w, c in triples:
        M[d - 1, w - 1] += c
    return M


def zipped(members: dict) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def npz_bytes(M) -> bytes:
    buf = io.BytesIO()
    sp.save_npz(buf, M)
    return buf.getvalue()


def mtx_bytes(M) -> bytes:
    buf = io.BytesIO()
    scipy.io.mmwrite(buf, M)
    return buf.getvalue()


def check_sparse(out, M, words):
    assert sp.issparse(out.X) and out.X.format == "csr"
    np.testing.assert_array_equal(out.X.toarray(), M)
    assert out.feature_names == list(words)
    assert out.extra["sparse"] is True and out.extra["nnz"] == np.count_nonzero(M)
    assert out.labels is None and out.image_shape is None


# --------------------------------------------------------------------------- docword

@pytest.mark.parametrize("gz", [False, True])
def test_docword_path_finds_vocab_beside_it(tmp_path, gz):
    raw = docword(4, 5, TRIPLES)
    name = "docword.tiny.txt" + (".gz" if gz else "")
    (tmp_path / name).write_bytes(gzip.compress(raw) if gz else raw)
    (tmp_path / "vocab.tiny.txt").write_bytes(vocab_bytes(VOCAB))
    out = load_file(tmp_path / name)
    check_sparse(out, brute(4, 5, TRIPLES), VOCAB)
    assert out.format == "uci-bow" and out.extra["vocabulary"] is True
    assert any("vocab.tiny.txt found beside" in nt for nt in out.notes)


def test_docword_without_vocab_names_words(tmp_path):
    (tmp_path / "docword.x.txt").write_bytes(docword(4, 5, TRIPLES))
    out = load_file(tmp_path / "docword.x.txt")
    assert out.feature_names == [f"word_{j}" for j in range(1, 6)]
    assert out.extra["vocabulary"] is False
    assert any("no vocabulary" in nt for nt in out.notes)


@pytest.mark.parametrize("vocab", ["bytes", "list", "path"])
def test_docword_bytes_with_vocab_argument(tmp_path, vocab):
    v = {"bytes": vocab_bytes(VOCAB), "list": list(VOCAB)}.get(vocab)
    if vocab == "path":
        v = tmp_path / "words.txt"
        v.write_bytes(vocab_bytes(VOCAB))
    # any .txt is read as docword when a vocabulary is given
    out = load_file(docword(4, 5, TRIPLES), filename="counts.txt", vocab=v)
    check_sparse(out, brute(4, 5, TRIPLES), VOCAB)
    assert not any("no vocabulary" in nt for nt in out.notes)


@pytest.mark.parametrize("folder", ["", "kos/"])
def test_zip_of_docword_and_vocab(folder):
    blob = zipped({f"{folder}docword.kos.txt.gz": gzip.compress(docword(4, 5, TRIPLES)),
                   f"{folder}vocab.kos.txt": vocab_bytes(VOCAB), "__MACOSX/._x": b"junk"})
    out = load_file(blob, filename="kos.zip")
    check_sparse(out, brute(4, 5, TRIPLES), VOCAB)
    assert out.notes[0].startswith(f"text corpus in the archive: {folder}docword.kos.txt.gz")
    assert "4 documents x 5 words" in describe(out)


def test_repeated_pairs_summed_like_brute_force():
    trip = TRIPLES + [(1, 1, 5)]
    out = load_file(docword(4, 5, trip), filename="docword.d.txt", vocab=VOCAB)
    np.testing.assert_array_equal(out.X.toarray(), brute(4, 5, trip))


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 6), st.integers(2, 7), st.data())
def test_property_docword_equals_dense_brute_force(D, W, data):
    cells = data.draw(st.lists(st.tuples(st.integers(1, D), st.integers(1, W), st.integers(1, 9)),
                               min_size=1, max_size=25))
    gz = data.draw(st.booleans())
    raw = docword(D, W, cells)
    out = load_file(gzip.compress(raw) if gz else raw,
                    filename="docword.p.txt" + (".gz" if gz else ""))
    np.testing.assert_array_equal(out.X.toarray(), brute(D, W, cells))
    assert out.X.shape == (D, W)


# --------------------------------------------------------------------------- mtx / npz

def test_mtx_and_gzipped_mtx():
    M = sp.random(6, 5, density=0.4, format="csr", random_state=1)
    for blob, name in ((mtx_bytes(M), "m.mtx"), (gzip.compress(mtx_bytes(M)), "m.mtx.gz")):
        out = load_file(blob, filename=name, vocab=VOCAB)
        check_sparse(out, M.toarray(), VOCAB)
        assert out.format == "mtx"


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_sparse_npz_never_unpickled(fmt):
    M = sp.random(7, 5, density=0.5, format=fmt, random_state=2)
    out = load_file(npz_bytes(M), filename="m.npz", vocab=vocab_bytes(VOCAB))
    check_sparse(out, M.toarray(), VOCAB)
    assert out.format == "sparse-npz"


def test_zip_of_npz_and_vocab():
    M = sp.random(7, 5, density=0.5, format="csr", random_state=3)
    out = load_file(zipped({"m.npz": npz_bytes(M), "vocab.m.txt": vocab_bytes(VOCAB)}),
                    filename="m.zip")
    check_sparse(out, M.toarray(), VOCAB)


def test_dense_npz_still_dense():
    buf = io.BytesIO()
    np.savez(buf, X=np.arange(12.0).reshape(4, 3))
    out = load_file(buf.getvalue(), filename="d.npz")
    assert isinstance(out.X, np.ndarray) and out.format == "npz"


# --------------------------------------------------------------------------- malformed

@pytest.mark.parametrize("blob, name, match", [
    (b"3\nfour\n2\n1 1 1\n", "docword.a.txt", r"line 2 should hold W .*got 'four'"),
    (docword(4, 5, TRIPLES, nnz=9), "docword.a.txt", r"NNZ=9 triples but the file has fewer"),
    (docword(4, 5, [(1, 6, 1), (2, 1, 1)]), "docword.a.txt", r"wordID must be in \[1, 5\]"),
    (docword(4, 5, [(1, 1, -2), (2, 1, 1)]), "docword.a.txt", r"counts must be >= 0"),
    (b"2\n2\n2\n1 1 1\n2 x 1\n", "docword.a.txt", r"line 5 must be three integers"),
    (docword(1, 5, [(1, 1, 1)]), "docword.a.txt", r"a single document"),
    (docword(3, 1, [(1, 1, 1)]), "docword.a.txt", r"a single word"),
    (docword(3, 3, []), "docword.a.txt", r"no nonzero count"),
    (gzip.compress(docword(4, 5, TRIPLES * 40, nnz=240), mtime=0)[:60], "docword.a.txt.gz",
     r"gzip file is truncated or damaged"),
    (b"%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n", "m.mtx",
     r"not a valid Matrix Market file"),
    # (a .csv.gz is read as a table since issue 38; a gzipped array is not)
    (gzip.compress(b"1,2\n3,4\n", mtime=0), "data.npy.gz", r"a gzip file is read as a table .*or a text corpus"),
])
def test_malformed_corpus_files(blob, name, match):
    with pytest.raises(DataFormatError, match=match):
        load_file(blob, filename=name)


def test_vocab_of_wrong_size():
    with pytest.raises(DataFormatError, match=r"vocabulary has 3 words but the matrix has 5"):
        load_file(docword(4, 5, TRIPLES), filename="docword.a.txt", vocab=VOCAB[:3])
    with pytest.raises(DataFormatError, match=r"vocabulary has 4 words but the matrix has 5"):
        load_file(docword(4, 5, TRIPLES), filename="docword.a.txt", vocab=vocab_bytes(VOCAB[:4]))


def test_vocab_with_empty_line_names_it():
    with pytest.raises(DataFormatError, match=r"line 2 of the vocabulary is empty"):
        load_file(docword(4, 5, TRIPLES), filename="docword.a.txt", vocab=b"a\n\nc\nd\ne\n")


def test_gzip_bomb_capped():
    blob = gzip.compress(docword(2, 2, [(1, 1, 1)]) + b" " * 5_000_000)
    with pytest.raises(DataFormatError, match=r"expands to more than the size cap"):
        load_file(blob, filename="docword.b.txt.gz", max_bytes=1_000_000)


@pytest.mark.parametrize("members, match", [
    ({"docword.a.txt": docword(4, 5, TRIPLES), "b.mtx": b"x"}, r"holds 2 matrix files"),
    ({"docword.a.txt": docword(4, 5, TRIPLES), "vocab.a.txt": b"a\n", "vocab.b.txt": b"b\n"},
     r"holds 2 vocabulary files"),
    ({"../docword.a.txt": docword(4, 5, TRIPLES)}, r"unsafe path in the archive"),
])
def test_malformed_corpus_zip(members, match):
    with pytest.raises(DataFormatError, match=match):
        load_file(zipped(members), filename="c.zip")


def test_sparse_npz_with_pickled_entry_refused():
    buf = io.BytesIO()
    M = sp.random(4, 3, density=0.5, format="csr", random_state=0)
    np.savez(buf, format=np.array(b"csr"), data=M.data, indices=M.indices, indptr=M.indptr,
             shape=np.array(M.shape), extra=np.array([{"a": 1}], dtype=object))
    with pytest.raises(DataFormatError, match=r"pickled object array; pickles are never loaded"):
        load_file(buf.getvalue(), filename="p.npz")


@pytest.mark.parametrize("kw, match", [
    ({"variable": "X"}, r"`variable` does not apply to a text corpus"),
    ({"label_column": "x"}, r"`label_column` does not apply to a text corpus"),
])
def test_dense_options_refused_for_corpora(kw, match):
    with pytest.raises(InputError, match=match):
        load_file(docword(4, 5, TRIPLES), filename="docword.a.txt", **kw)


def test_vocab_refused_for_dense_files():
    with pytest.raises(InputError, match=r"`vocab` applies only to text corpora"):
        load_file(b"a,b\n1,2\n3,4\n", filename="d.csv", vocab=["a", "b"])


def test_vocab_given_twice_refused():
    blob = zipped({"docword.a.txt": docword(4, 5, TRIPLES), "vocab.a.txt": vocab_bytes(VOCAB)})
    with pytest.raises(InputError, match=r"holds its vocabulary file; do not give `vocab` too"):
        load_file(blob, filename="a.zip", vocab=VOCAB)
