"""Bag-of-words readers: a documents x words count matrix kept sparse, from the files text
corpora come in.

Readers return a :class:`TextData` (a documents x words CSR matrix of float64
counts, the vocabulary, notes) and raise :class:`~nspca_core.io.DataFormatError`
with a message naming the problem (line and value) for anything malformed:

* :func:`read_uci_bow` — the UCI Bag-of-Words format: ``docword.NAME.txt`` (or
  ``.txt.gz``) with three header lines ``D``, ``W``, ``NNZ`` then ``NNZ`` lines
  ``docID wordID count`` (1-based), plus ``vocab.NAME.txt`` (one word per line,
  word ``i`` on line ``i``).
* :func:`read_mtx` — Matrix Market ``.mtx`` (``scipy.io.mmread``, in a child process).
* :func:`read_sparse_npz` — ``.npz`` written by ``scipy.sparse.save_npz``,
  opened with ``allow_pickle=False`` and checked key by key (never unpickled).
* :func:`load_text` — any of the three by file name.

Before anything is allocated, the sizes a header announces are checked against the file
(:func:`check_announced`): a few bytes claiming 2e9 x 2e9 are refused with the memory
they would need.  Weighting and topic tables are in :mod:`nspca_core.text`.
"""

from __future__ import annotations

import gzip
import io
import os
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .._common.params import check
from .._common.validation import InputError
from .isolated import MMREAD, run_reader
from .loaded import DataFormatError

__all__ = ["TextData", "TEXT_FORMATS", "read_uci_bow", "read_vocab", "read_mtx", "read_sparse_npz",
           "load_text"]

#: file types :func:`load_text` reads
TEXT_FORMATS = ("docword .txt/.txt.gz (UCI Bag-of-Words)", ".mtx (Matrix Market)",
                ".npz (scipy.sparse.save_npz)")


_CHUNK_ROWS = 1_000_000
_GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True, eq=False)
class TextData:
    """A documents x words matrix read from a file.

    Attributes
    ----------
    X : scipy.sparse.csr_matrix (documents, words), float64
    vocabulary : list of str (words,)
        From the vocabulary file when given, else ``word_1, word_2, ...``.
    notes : list of str
    source_name : str
    format : {"uci-bow", "mtx", "npz"}
    """

    X: sp.csr_matrix
    vocabulary: list
    notes: list
    source_name: str
    format: str
    extra: dict = field(default_factory=dict)



# --------------------------------------------------------------------------- sources

def _open_binary(source, filename):
    """(binary file object, display name, owned) for a path, bytes or file-like."""
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.is_file():
            raise DataFormatError(f"`source` file not found: {str(path)!r}")
        return open(path, "rb"), filename or path.name, True
    if isinstance(source, (bytes, bytearray, memoryview)):
        return io.BytesIO(bytes(source)), filename or "uploaded data", True
    if hasattr(source, "read"):
        name = filename or os.path.basename(str(getattr(source, "name", "") or "")) or "uploaded file"
        if hasattr(source, "seek"):
            try:
                source.seek(0)
            except (OSError, ValueError):
                pass
        data = source.read()
        if isinstance(data, str):
            data = data.encode("utf-8")
        return io.BytesIO(data), name, True
    raise InputError("`source` must be a path, bytes or a file-like object (e.g. a Streamlit "
                     f"UploadedFile); got {type(source).__name__}")


def _maybe_gunzip(fh):
    """Wrap ``fh`` in a gzip reader when it starts with the gzip magic bytes."""
    head = fh.read(2)
    fh.seek(0)
    return gzip.GzipFile(fileobj=fh) if head == _GZIP_MAGIC else fh


def _read_all(fh, name: str) -> bytes:
    """Everything of ``fh`` (gzip content when gzip); a truncated or damaged gzip stream is a
    DataFormatError, not an EOFError."""
    try:
        return _maybe_gunzip(fh).read()
    except (EOFError, OSError, zlib.error) as exc:
        raise DataFormatError(f"{name}: the gzip file is truncated or damaged ({exc}); download or "
                              "compress it again") from None


# --------------------------------------------------------------------------- announced sizes

#: bytes the sizes in a header may imply whatever the file (above it: 8 x the file's bytes)
MAX_ANNOUNCED_BYTES = 1 << 30
#: bytes per row or column the reading needs (CSR/CSC index pointers, one word name)
_BYTES_PER_LINE = 72
#: bytes per stored entry (row/column index and value, CSR and CSC copies)
_BYTES_PER_ENTRY = 32


def _gib(n: float) -> str:
    return f"{n / 2 ** 30:,.2f} GiB" if n >= 2 ** 30 else f"{n / 2 ** 20:,.1f} MiB"


def check_announced(name: str, rows: int, cols: int, entries: int, *, file_bytes: int,
                    body_bytes: int | None = None, min_entry_bytes: int = 6,
                    what: str = "entries", announcer: str = "the header", invalid: str = "") -> int:
    """Refuse a header whose sizes the file cannot hold, before anything is allocated.

    Two checks (a forged 40-byte file claiming 2e9 x 2e9 would otherwise allocate gigabytes):
    ``entries`` written after the header take at least ``min_entry_bytes`` each (``"1 1 1\\n"``),
    so more than ``body_bytes`` allow is a truncated file or a wrong header; and the memory the
    sizes imply — about ``72 (rows + cols + 2) + 32 entries`` bytes for the sparse matrix in CSR
    and CSC and the word names — must stay within ``max(MAX_ANNOUNCED_BYTES, 8 * file_bytes)``.
    Returns the estimate in bytes.

    Raises
    ------
    DataFormatError
        Naming the announced sizes, the estimate and the bytes the file holds.
    """
    if body_bytes is not None and entries and entries * min_entry_bytes > body_bytes + 1:
        raise DataFormatError(f"{name}: {invalid}{announcer} announces {entries:,} {what}, which take at least "
                              f"{entries * min_entry_bytes:,} bytes, but only {body_bytes:,} bytes "
                              "follow the header; the file is truncated or its header is wrong")
    need = _BYTES_PER_LINE * (rows + cols + 2) + _BYTES_PER_ENTRY * entries
    allowed = max(MAX_ANNOUNCED_BYTES, 8 * file_bytes)
    if need > allowed:
        raise DataFormatError(f"{name}: {announcer} announces {rows:,} x {cols:,} with {entries:,} "
                              f"{what}; reading it would need about {_gib(need)} of memory, over the "
                              f"{_gib(allowed)} allowed for a file of {file_bytes:,} bytes; the "
                              "sizes are wrong (a sparse matrix's sizes should be those of its "
                              "data)")
    return need


# --------------------------------------------------------------------------- UCI bag of words

def _header_int(line: bytes, what: str, lineno: int, name: str) -> int:
    text = line.decode("ascii", "replace").strip()
    if not text:
        raise DataFormatError(f"{name}: line {lineno} should hold {what} (the UCI docword header "
                              "is three lines: D, W, NNZ); got an empty line or the end of the file")
    try:
        value = int(text)
    except ValueError:
        raise DataFormatError(f"{name}: line {lineno} should hold {what} as one integer (the UCI "
                              f"docword header is three lines: D, W, NNZ); got {text[:40]!r}") from None
    if value < 0:
        raise DataFormatError(f"{name}: {what} on line {lineno} must be >= 0; got {value}")
    return value


def _first_bad_line(fh, start_line: int, name: str):
    """Slow scan for the first line that is not three integers (only after a parse error)."""
    for lineno, raw in enumerate(fh, start=start_line):
        parts = raw.split()
        if not parts:
            continue
        try:
            if len(parts) != 3:
                raise ValueError
            [int(p) for p in parts]
        except ValueError:
            text = raw.decode("utf-8", "replace").strip()
            raise DataFormatError(f"{name}: line {lineno} must be three integers 'docID wordID "
                                  f"count'; got {text[:60]!r}") from None
    raise DataFormatError(f"{name}: the triples could not be parsed as 'docID wordID count' "
                          "integers")


def _narrow(a: np.ndarray) -> np.ndarray:
    """``a`` as int32 when its values fit (half the memory of int64), else as it is."""
    if a.size and (a.min() < np.iinfo(np.int32).min or a.max() > np.iinfo(np.int32).max):
        return a
    return a.astype(np.int32)


def _read_triples(fh, name: str, n_expected: int, callback=None):
    """All triples after the header, as integer arrays (int32 where they fit), chunk by chunk;
    ``callback(done, n_expected)`` after each chunk."""
    import pandas as pd

    docs, words, counts = [], [], []
    total = 0
    try:
        reader = pd.read_csv(fh, sep=r"\s+", header=None, names=["d", "w", "c"],
                             dtype=np.int64, engine="c", chunksize=_CHUNK_ROWS,
                             skip_blank_lines=True, comment=None)
        for chunk in reader:
            a = chunk.to_numpy()
            docs.append(_narrow(a[:, 0]))
            words.append(_narrow(a[:, 1]))
            counts.append(_narrow(a[:, 2]))
            del a, chunk
            total += docs[-1].shape[0]
            if callback is not None:
                callback(min(total, n_expected), n_expected)
            if total > n_expected:
                break
    except (ValueError, pd.errors.ParserError, TypeError):
        return None
    except (EOFError, OSError, gzip.BadGzipFile, zipfile.BadZipFile) as exc:
        raise DataFormatError(f"{name}: the file is truncated or not valid gzip ({exc}); "
                              "download it again") from None
    if not docs:
        z = np.zeros(0, dtype=np.int64)
        return z, z, z
    return np.concatenate(docs), np.concatenate(words), np.concatenate(counts)


def _check_triples(d, w, c, D, W, NNZ, name):
    if d.size != NNZ:
        more = "more" if d.size > NNZ else "fewer"
        raise DataFormatError(f"{name}: the header says NNZ={NNZ} triples but the file has {more} "
                              f"({'at least ' if d.size > NNZ else ''}{d.size}); the file is "
                              f"{'truncated' if more == 'fewer' else 'inconsistent'}")
    for arr, bound, what in ((d, D, "docID"), (w, W, "wordID")):
        bad = (arr < 1) | (arr > bound)
        if bad.any():
            i = int(np.argmax(bad))
            raise DataFormatError(f"{name}: {what} must be in [1, {bound}] (1-based, the header "
                                  f"says {'D' if what == 'docID' else 'W'}={bound}); got {arr[i]} "
                                  f"on line {i + 4} ({int(bad.sum())} such line(s))")
    neg = c < 0
    if neg.any():
        i = int(np.argmax(neg))
        raise DataFormatError(f"{name}: counts must be >= 0; got {c[i]} on line {i + 4} "
                              f"({int(neg.sum())} negative count(s))")


def read_vocab(source, *, n_words: int | None = None, filename=None) -> list:
    """Words of a ``vocab.NAME.txt`` (one per line; word i on line i).

    Raises
    ------
    DataFormatError
        Not UTF-8 text, an empty word, or ``n_words`` given and the count differs.
    """
    fh, name, _ = _open_binary(source, filename)
    with fh:
        raw = _read_all(fh, name)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataFormatError(f"{name}: the vocabulary must be UTF-8 text, one word per line "
                              f"({exc})") from None
    lines = text.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    words = [s.strip() for s in lines]
    empty = [i + 1 for i, s in enumerate(words) if not s]
    if empty:
        raise DataFormatError(f"{name}: line {empty[0]} of the vocabulary is empty "
                              f"({len(empty)} empty line(s)); one word per line is expected")
    if n_words is not None and len(words) != n_words:
        raise DataFormatError(f"{name}: the vocabulary has {len(words)} words but the matrix has "
                              f"{n_words} word columns; they must match (word i on line i)")
    return words


def read_uci_bow(docword, vocab=None, *, filename=None, callback=None) -> TextData:
    """Read the UCI Bag-of-Words format.

    Parameters
    ----------
    docword : path, bytes or file-like
        ``docword.NAME.txt`` or ``docword.NAME.txt.gz`` (gzip detected from the
        content): lines ``D``, ``W``, ``NNZ``, then ``NNZ`` lines
        ``docID wordID count`` with 1-based ids.
    vocab : path, bytes or file-like, optional
        ``vocab.NAME.txt``: ``W`` words, one per line.
    filename : str, optional
        Display name for bytes / file-like input.
    callback : callable, optional
        ``callback(done, NNZ)`` after every million triples read.

    Returns
    -------
    TextData
        ``format="uci-bow"``; ``X`` is D x W CSR float64 (repeated
        ``(docID, wordID)`` pairs are summed and a note says so; zero counts
        are dropped).

    Raises
    ------
    DataFormatError
        A header that is not three nonnegative integers, a line that is not
        three integers, ids out of range, negative counts, a triple count
        different from ``NNZ`` (truncated file), a vocabulary of the wrong size.

    Notes
    -----
    Parsed with pandas' C reader in chunks of 1 M lines, each narrowed to int32 when its
    values fit; memory is about ``NNZ * 12`` bytes for the parsed triples plus the CSR result
    (``NNZ * 12``) and its COO input; NYTimes (69.7 M triples) needs about 2 GB.
    """
    fh, name, _ = _open_binary(docword, filename)
    with fh:
        size = fh.seek(0, io.SEEK_END)
        fh.seek(0)
        src = _maybe_gunzip(fh)
        try:
            D = _header_int(src.readline(), "D (number of documents)", 1, name)
            W = _header_int(src.readline(), "W (number of words)", 2, name)
            NNZ = _header_int(src.readline(), "NNZ (number of triples)", 3, name)
        except (EOFError, OSError) as exc:
            raise DataFormatError(f"{name}: the file is truncated or not valid gzip ({exc})") from None
        if D < 1 or W < 1:
            raise DataFormatError(f"{name}: the header must give D >= 1 documents and W >= 1 "
                                  f"words; got D={D}, W={W}")
        pos = src.tell()
        # before any allocation: parsing stops at the end of the file (a wrong NNZ is refused
        # then, with the count found), so the triples counted are those the file can hold
        body = size - pos if src is fh else size
        check_announced(name, D, W, min(NNZ, body // 6 + 1), file_bytes=size,
                        what="(docID, wordID, count) triples")
        parsed = _read_triples(src, name, NNZ, callback)
        if parsed is None:
            src.seek(pos)
            _first_bad_line(src, 4, name)
    d, w, c = parsed
    _check_triples(d, w, c, D, W, NNZ, name)
    notes = [f"UCI bag-of-words: {D} documents x {W} words, {NNZ} (document, word) counts"]
    d -= 1  # in place: 0-based (checked >= 1 above)
    w -= 1
    X = sp.coo_matrix((c.astype(np.float64), (d, w)), shape=(D, W)).tocsr()
    if X.nnz < NNZ:
        zeros = int((c == 0).sum())
        dup = NNZ - zeros - int(np.count_nonzero(X.data))
        if dup > 0:
            notes.append(f"{dup} repeated (docID, wordID) pair(s) were summed")
        if zeros:
            notes.append(f"{zeros} zero count(s) dropped")
    X.eliminate_zeros()
    X.sort_indices()
    if vocab is not None:
        vocabulary = read_vocab(vocab, n_words=W)
    else:
        vocabulary = [f"word_{j + 1}" for j in range(W)]
        notes.append("no vocabulary file: words named word_1 ... word_W")
    return TextData(X=X, vocabulary=vocabulary, notes=notes, source_name=name, format="uci-bow")


# --------------------------------------------------------------------------- Matrix Market

def read_mtx(source, vocab=None, *, filename=None, transpose: bool = False) -> TextData:
    """Read a Matrix Market ``.mtx`` file (documents as rows) into CSR.

    ``transpose=True`` for files stored words x documents.  A dense
    (``array``) file is accepted and converted (a note says so); ``pattern``
    entries become 1.  Complex or non-finite values are rejected.  ``scipy.io.mmread`` runs
    in a child process (it can crash on hostile bytes); the file's bytes and the matrix are
    held once more there.
    """

    transpose = check("flag", transpose, "transpose")
    fh, name, _ = _open_binary(source, filename)
    with fh:
        data = _read_all(fh, name)
    announced = _mtx_header(data)
    if announced is not None:
        rows, cols, entries, body, min_entry = announced
        check_announced(name, rows, cols, entries, file_bytes=len(data), body_bytes=body,
                        min_entry_bytes=min_entry, what="entries",
                        invalid="not a valid Matrix Market file: ")
    # scipy's compiled reader can crash the process on hostile bytes: a child process reads
    header, arrays = run_reader(MMREAD, data, name, "Matrix Market file")
    if "error" in header:  # scipy raises ValueError/TypeError/IndexError on bad input
        raise DataFormatError(f"{name}: not a valid Matrix Market file ({header['message']}); "
                              "expected a '%%MatrixMarket matrix coordinate real general' header, "
                              "a size line 'rows cols nnz' and 'row col value' lines")
    notes = []
    if header["dense"]:
        notes.append("the file is a dense Matrix Market array; converted to sparse")
        M = sp.csr_matrix(arrays["A"])
    else:
        M = sp.coo_matrix((arrays["data"], (arrays["row"], arrays["col"])), shape=tuple(header["shape"]))
    if np.iscomplexobj(M.data):
        raise DataFormatError(f"{name}: complex values are not supported; a real or integer "
                              "matrix is expected")
    X = sp.csr_matrix(M, dtype=np.float64)
    if not header["dense"]:
        note = _repeated_note(arrays["row"], arrays["col"], X.nnz, M.shape)
        if note:
            notes.append(note)
    if transpose:
        X = X.T.tocsr()
        notes.append("transposed: the file's columns are the documents")
    _check_sparse_values(X, name)
    m, n = X.shape
    if m < 1 or n < 1:
        raise DataFormatError(f"{name}: the matrix must have at least one row and one column; "
                              f"got shape {X.shape}")
    notes.insert(0, f"Matrix Market: {m} documents x {n} words, {X.nnz} nonzeros")
    vocabulary = _vocabulary(vocab, n, notes)
    X.sort_indices()
    return TextData(X=X, vocabulary=vocabulary, notes=notes, source_name=name, format="mtx")


def _mtx_header(data: bytes):
    """``(rows, cols, entries, bytes after the size line, least bytes per entry)`` announced by
    a Matrix Market file, or None when its header cannot be read (``mmread`` then says why)."""
    first, sep, rest = data.partition(b"\n")
    banner = first.decode("ascii", "replace").lower().split()
    if not sep or len(banner) < 4 or banner[0] != "%%matrixmarket":
        return None
    pos = len(first) + 1
    while pos < len(data):
        end = data.find(b"\n", pos)
        end = len(data) if end < 0 else end
        line = data[pos:end].strip()
        pos = end + 1
        if not line or line.startswith(b"%"):
            continue
        try:
            sizes = [int(v) for v in line.split()]
        except ValueError:
            return None
        body = max(len(data) - pos, 0)
        if banner[2] == "coordinate" and len(sizes) == 3 and min(sizes) >= 0:
            per = 4 if banner[3] == "pattern" else 8 if banner[3] == "complex" else 6
            return sizes[0], sizes[1], sizes[2], body, per
        if banner[2] == "array" and len(sizes) == 2 and min(sizes) >= 0:
            # a dense array: every value is written (at least "0\n"), one triangle when symmetric
            rows, cols = sizes
            general = len(banner) < 5 or banner[4] == "general"
            return rows, cols, rows * cols if general else rows * (rows - 1) // 2, body, 2
        return None
    return None


def _repeated_note(row, col, distinct: int, shape) -> str | None:
    """The note for entries written more than once (summed), with the count and an example."""
    repeated = int(np.asarray(row).size) - int(distinct)
    if repeated <= 0:
        return None
    keys = np.asarray(row, np.int64) * int(shape[1]) + np.asarray(col, np.int64)
    uniq, counts = np.unique(keys, return_counts=True)
    first = int(uniq[np.argmax(counts > 1)])
    r, c = divmod(first, int(shape[1]))
    times = int(counts[np.searchsorted(uniq, first)])
    return (f"{repeated} repeated (row, column) entr{'y' if repeated == 1 else 'ies'} summed into "
            f"the value before: {int((counts > 1).sum())} position(s) written more than once "
            f"(first: row {r + 1}, column {c + 1}, {times} times)")


def _check_sparse_values(X, name):
    bad = ~np.isfinite(X.data)
    if bad.any():
        raise DataFormatError(f"{name}: the matrix must be finite; got {int(bad.sum())} NaN/inf "
                              "value(s)")


def _vocabulary(vocab, n, notes):
    if vocab is None:
        notes.append("no vocabulary file: words named word_1 ... word_n")
        return [f"word_{j + 1}" for j in range(n)]
    if isinstance(vocab, (list, tuple)):
        if len(vocab) != n:
            raise DataFormatError(f"the vocabulary has {len(vocab)} words but the matrix has {n} "
                                  "word columns; they must match")
        return [str(v) for v in vocab]
    return read_vocab(vocab, n_words=n)


# --------------------------------------------------------------------------- save_npz

_NPZ_KEYS = {"csr": ("data", "indices", "indptr", "shape"),
             "csc": ("data", "indices", "indptr", "shape"),
             "coo": ("data", "row", "col", "shape")}


def read_sparse_npz(source, vocab=None, *, filename=None) -> TextData:
    """Read an ``.npz`` written by ``scipy.sparse.save_npz`` (CSR, CSC or COO).

    Opened with ``allow_pickle=False``; the ``format`` entry and the arrays it
    needs are checked before the matrix is built, and the built matrix is
    checked in full (``check_format(full_check=True)``: index ranges and
    ``indptr`` monotone).  Never unpickled.
    """
    fh, name, _ = _open_binary(source, filename)
    with fh:
        file_bytes = fh.seek(0, io.SEEK_END)
        fh.seek(0)
        try:
            z = np.load(fh, allow_pickle=False)
            arrays = {}
            for key in z.files:
                try:
                    arrays[key] = z[key]
                except ValueError:
                    raise DataFormatError(f"{name}: entry {key!r} is a pickled object array; "
                                          "pickles are never loaded") from None
        except DataFormatError:
            raise
        except (ValueError, OSError, zipfile.BadZipFile, EOFError) as exc:
            raise DataFormatError(f"{name}: not a readable .npz archive ({exc})") from None
    if "format" not in arrays:
        raise DataFormatError(f"{name}: not a scipy.sparse.save_npz file (no 'format' entry; it "
                              f"holds {sorted(arrays)}); dense arrays are read by load_file")
    fmt = arrays["format"]
    fmt = fmt.item() if fmt.shape == () else fmt
    fmt = fmt.decode("ascii", "replace") if isinstance(fmt, bytes) else str(fmt)
    if fmt not in _NPZ_KEYS:
        raise DataFormatError(f"{name}: sparse format {fmt!r} is not supported; save the matrix "
                              f"as one of {sorted(_NPZ_KEYS)} (X.tocsr())")
    missing = [k for k in _NPZ_KEYS[fmt] if k not in arrays]
    if missing:
        raise DataFormatError(f"{name}: a {fmt} matrix needs entries {list(_NPZ_KEYS[fmt])}; "
                              f"missing {missing}")
    shape = arrays["shape"]
    if shape.shape != (2,) or shape.dtype.kind not in "iu" or (shape < 1).any():
        raise DataFormatError(f"{name}: 'shape' must be two positive integers; got {shape.tolist()}")
    shape = tuple(int(s) for s in shape)
    data = arrays["data"]
    check_announced(name, shape[0], shape[1], int(data.size), file_bytes=file_bytes,
                    what="stored values", announcer="its 'shape' entry")
    if data.dtype.kind not in "biuf":
        raise DataFormatError(f"{name}: 'data' must be real numbers; got dtype {data.dtype}")
    try:
        if fmt == "coo":
            row, col = arrays["row"], arrays["col"]
            if not (row.size == col.size == data.size):
                raise ValueError(f"row/col/data lengths {row.size}/{col.size}/{data.size} differ")
            if row.size and (row.min() < 0 or row.max() >= shape[0] or col.min() < 0
                             or col.max() >= shape[1]):
                raise ValueError("row/col index out of range")
            X = sp.coo_matrix((data, (row, col)), shape=shape).tocsr()
        else:
            cls = sp.csr_matrix if fmt == "csr" else sp.csc_matrix
            X = cls((data, arrays["indices"], arrays["indptr"]), shape=shape)
            X.check_format(full_check=True)
            X = X.tocsr()
    except (ValueError, TypeError, IndexError) as exc:
        raise DataFormatError(f"{name}: the {fmt} arrays are inconsistent ({exc})") from None
    X = sp.csr_matrix(X, dtype=np.float64)
    _check_sparse_values(X, name)
    notes = [f"sparse .npz ({fmt}): {shape[0]} documents x {shape[1]} words, {X.nnz} nonzeros"]
    vocabulary = _vocabulary(vocab, shape[1], notes)
    X.sort_indices()
    return TextData(X=X, vocabulary=vocabulary, notes=notes, source_name=name, format="npz")


def load_text(source, vocab=None, *, filename=None) -> TextData:
    """Read a sparse text matrix by its file name: ``.mtx``, ``.npz``, else UCI docword.

    ``.mtx``/``.mtx.gz`` go to :func:`read_mtx`, ``.npz`` to
    :func:`read_sparse_npz`, ``.txt``/``.txt.gz`` (UCI docword) to
    :func:`read_uci_bow`.
    """
    name = filename or (Path(source).name if isinstance(source, (str, os.PathLike)) else
                        os.path.basename(str(getattr(source, "name", "") or "")))
    low = str(name).lower()
    if low.endswith((".mtx", ".mtx.gz")):
        return read_mtx(source, vocab, filename=filename)
    if low.endswith(".npz"):
        return read_sparse_npz(source, vocab, filename=filename)
    if low.endswith((".txt", ".txt.gz", ".gz")):
        return read_uci_bow(source, vocab, filename=filename)
    raise DataFormatError(f"{name or 'the file'}: cannot tell the text format from the name; "
                          f"allowed: {', '.join(TEXT_FORMATS)}")
