"""Text corpora kept sparse (documents x words): UCI Bag-of-Words, Matrix Market, a
sparse ``.npz`` or a ``.zip`` of them, parsed by :mod:`.bow`.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path, PurePosixPath

import numpy as np

from .._common.validation import InputError
from .archive import _ARCHIVE_ERRORS, _archive_errors, _check_zip_members, _gunzip, _read_member
from .bow import read_mtx, read_sparse_npz, read_uci_bow, read_vocab
from .loaded import DataFormatError, LoadedData, _at_least_two, check_sparse_structure
from .npy import _npz_index
from .source import IMAGE_EXTENSIONS, _read_source
from .vocabulary import Words

#: file types read as a sparse documents x words matrix (see :func:`load_file`)
CORPUS_EXTENSIONS = (".mtx", ".gz")
_SPARSE_NPZ_KEYS = ({"format", "data", "indices", "indptr", "shape"},
                    {"format", "data", "row", "col", "shape"})


def _base(name: str) -> str:
    return PurePosixPath(str(name).replace("\\", "/")).name.lower()


def _is_docword(name: str) -> bool:
    """``docword.NAME.txt`` / ``docword.NAME.txt.gz`` (the UCI Bag-of-Words file names)."""
    base = _base(name)
    return base.startswith("docword") and base.endswith((".txt", ".txt.gz"))


def _corpus_kind(name: str, data: bytes, has_vocab: bool) -> str | None:
    """"uci-bow", "mtx" or None (not a text corpus) from the file name (and a given vocabulary)."""
    base = _base(name)
    if base.endswith((".mtx", ".mtx.gz")):
        return "mtx"
    if _is_docword(base) or (has_vocab and base.endswith((".txt", ".txt.gz"))):
        return "uci-bow"
    if base.endswith(".gz"):
        raise DataFormatError(f"{name}: a gzip file is read as a table (NAME.csv/.tsv/.tab/.txt.gz), a GEO "
                              "file (NAME.soft.gz, GSE..._series_matrix.txt.gz) or a text corpus "
                              "('docword.NAME.txt.gz' UCI Bag-of-Words, 'NAME.mtx.gz' Matrix Market); "
                              "other data must be uncompressed or in a .zip")
    return None


def _is_sparse_npz(data: bytes, name: str, max_bytes: int) -> bool:
    """True when an ``.npz`` holds the arrays ``scipy.sparse.save_npz`` writes (headers only)."""
    keys = set(_npz_index(data, name, max_bytes))
    return any(need <= keys for need in _SPARSE_NPZ_KEYS)


def _vocab_words(vocab, name: str, max_bytes: int):
    """``vocab`` as given to :func:`load_file` as a list of words (None stays None)."""
    if vocab is None or isinstance(vocab, (list, tuple)):
        if vocab is not None and not all(isinstance(w, str) for w in vocab):
            raise InputError("`vocab` must be a vocabulary file (path, bytes, file-like) or a list "
                             "of words (str)")
        return vocab
    data, vname = _read_source(vocab, None, max_bytes)
    return read_vocab(_gunzip(data, vname, max_bytes), filename=f"vocabulary {vname}")


def _beside(path: Path) -> Path | None:
    """``vocab.NAME.txt`` next to ``docword.NAME.txt[.gz]`` (how the UCI files come)."""
    base = path.name
    for suffix in (".txt.gz", ".txt"):
        if base.lower().startswith("docword.") and base.lower().endswith(suffix):
            cand = path.with_name("vocab." + base[len("docword."):-len(suffix)] + ".txt")
            return cand if cand.is_file() else None
    return None


def _read_corpus(kind: str, data: bytes, vocab, name: str, max_bytes: int, callback=None):
    """A :class:`.bow.TextData` from the file's bytes."""
    if kind == "npz":
        return read_sparse_npz(data, vocab, filename=name)
    data = _gunzip(data, name, max_bytes)
    if kind == "mtx":
        return read_mtx(data, vocab, filename=name)
    if vocab is not None:
        text = read_uci_bow(data, None, filename=name, callback=callback)
        if len(vocab) != text.X.shape[1]:
            raise DataFormatError(f"{name}: the vocabulary has {len(vocab)} words but the matrix "
                                  f"has {text.X.shape[1]} word columns; they must match")
        return type(text)(X=text.X, vocabulary=[str(w) for w in vocab],
                          notes=[nt for nt in text.notes if not nt.startswith("no vocabulary")],
                          source_name=text.source_name, format=text.format)
    return read_uci_bow(data, vocab, filename=name, callback=callback)


def _finish_sparse(text, name: str, fmt: str, notes: list) -> LoadedData:
    """Checks shared by the text corpora: at least 2 documents and 2 words; empty rows/columns noted."""
    X = text.X
    check_sparse_structure(X, name, "documents", "words")
    m, n = X.shape
    _at_least_two(X.shape, name, "a single document (row); PCA needs at least 2 documents (rows) "
                  "and 2 words (columns)",
                  "a single word (column); sparse PCA needs at least 2 words (columns)")
    if X.nnz == 0:
        raise DataFormatError(f"{name}: the matrix has no nonzero count; there is no variance to "
                              "explain")
    notes = list(notes) + list(text.notes)
    used = np.zeros(n, dtype=bool)  # (no CSC copy of X, no int64 copy of its indices)
    for lo in range(0, X.nnz, 1 << 16):
        used[X.indices[lo:lo + (1 << 16)]] = True
    unused = int(n - np.count_nonzero(used))
    if unused:
        notes.append(f"{unused} word(s) occur in no document: allowed, but they carry no variance")
    empty = int(m - np.count_nonzero(np.diff(X.indptr)))
    if empty:
        notes.append(f"{empty} document(s) hold no word: kept (they count in the mean)")
    notes.append(f"kept sparse: {X.nnz:,} nonzeros ({X.nnz / (m * n):.3%} of {m:,} x {n:,}); "
                 "never densified")
    words = text.vocabulary if isinstance(text.vocabulary, Words) else [str(w) for w in text.vocabulary]
    return LoadedData(X=X, feature_names=words, labels=None,
                      image_shape=None, notes=notes, metadata=None, source_name=name, format=fmt,
                      extra={"sparse": True, "nnz": int(X.nnz),
                             "vocabulary": not any(nt.startswith("no vocabulary")
                                                   for nt in text.notes)})


def _corpus_zip_members(data: bytes, name: str, max_bytes: int):
    """(matrix member name, its bytes, vocabulary bytes or None) of a corpus .zip, or None.

    A .zip is a text corpus when it holds no image and one matrix file:
    ``docword.NAME.txt[.gz]``, ``NAME.mtx[.gz]`` or a sparse ``NAME.npz``;
    ``vocab*.txt`` beside it is the vocabulary.
    """
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except _ARCHIVE_ERRORS:
        return None  # the image reader says what is wrong
    with zf, _archive_errors(name):
        infos = [i for i in zf.infolist() if not i.is_dir()
                 and not i.filename.startswith("__MACOSX/") and not _base(i.filename).startswith("._")]
        bases = [_base(i.filename) for i in infos]
        if any(b.endswith(IMAGE_EXTENSIONS) for b in bases):
            return None
        mats = [i for i, b in zip(infos, bases)
                if _is_docword(b) or b.endswith((".mtx", ".mtx.gz", ".npz"))]
        if not mats:
            return None
        _check_zip_members(infos, name, max_bytes, allow=(".txt.gz", ".mtx.gz", ".npz"))
        if len(mats) > 1:
            raise DataFormatError(f"{name}: the archive holds {len(mats)} matrix files "
                                  f"({', '.join(i.filename for i in mats[:5])}); a corpus .zip "
                                  "holds one (docword.NAME.txt[.gz], .mtx or .npz) and its "
                                  "vocab.NAME.txt")
        vocabs = [i for i, b in zip(infos, bases) if b.startswith("vocab") and
                  b.endswith((".txt", ".txt.gz"))]
        if len(vocabs) > 1:
            raise DataFormatError(f"{name}: the archive holds {len(vocabs)} vocabulary files "
                                  f"({', '.join(i.filename for i in vocabs[:5])}); give one")
        raw = _read_member(zf, mats[0], max_bytes, name)
        vocab = _read_member(zf, vocabs[0], max_bytes - len(raw), name) if vocabs else None
    return mats[0].filename, raw, vocab


def _load_corpus(data: bytes, name: str, kind: str, vocab, max_bytes: int,
                 notes=None, callback=None) -> LoadedData:
    vocab = _vocab_words(vocab, name, max_bytes)
    text = _read_corpus(kind, data, vocab, name, max_bytes, callback)
    fmt = {"uci-bow": "uci-bow", "mtx": "mtx", "npz": "sparse-npz"}[kind]
    return _finish_sparse(text, name, fmt, notes or [])


def _load_corpus_zip(found, name: str, vocab, max_bytes: int, callback=None) -> LoadedData:
    member, raw, zvocab = found
    if zvocab is not None and vocab is not None:
        raise InputError(f"{name}: the archive holds its vocabulary file; do not give `vocab` too")
    if zvocab is not None:
        zvocab = read_vocab(_gunzip(zvocab, name, max_bytes), filename=f"{name}: vocabulary")
    base = _base(member)
    kind = "npz" if base.endswith(".npz") else "mtx" if base.endswith((".mtx", ".mtx.gz")) \
        else "uci-bow"
    notes = [f"text corpus in the archive: {member}"
             + (" with its vocabulary" if zvocab is not None else "")]
    return _load_corpus(raw, name, kind, zvocab if zvocab is not None else vocab, max_bytes, notes,
                        callback)


def _reject_dense_options(name, variable, resize, label_column):
    for arg, value in (("variable", variable), ("resize", resize), ("label_column", label_column)):
        if value is not None:
            raise InputError(f"`{arg}` does not apply to a text corpus ({name}: documents x words, "
                             f"read sparse); got {value!r}")
