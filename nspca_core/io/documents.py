"""Raw text: documents become a documents x words count matrix through scikit-learn's
``CountVectorizer``, kept sparse.

Two ways documents come (issue 26, item 5):

* a ``.zip`` of ``.txt`` files, one document per file (the file names become the document
  names, in the archive's order);
* a CSV/TSV with a column of texts, named (``text_column="body"`` or its index) or detected:
  a column of free text (most cells of several words, nearly all distinct) in a file with at
  most :data:`MAX_NUMERIC_WITH_TEXT` numeric columns.  The other columns become ``metadata``;
  ``label_column`` (or the first short text column with repeated values) the labels.

Words: ``CountVectorizer(lowercase=True)`` with its default tokens (runs of 2+ letters or
digits), then :func:`prune_vocabulary` drops the stop words (scikit-learn's English list by
default) and the words in fewer than ``min_df`` documents — the same matrix as
``CountVectorizer(stop_words=..., min_df=...)``, with the counts of what was dropped for the
notes.  :func:`prune_vocabulary` also serves the Topics page on any corpus.
"""

from __future__ import annotations

import csv
import io
import numbers
import zipfile
from dataclasses import fields, replace
from pathlib import PurePosixPath

import numpy as np
import scipy.sparse as sp

from .._validation import InputError
from .archive import _ARCHIVE_ERRORS, _archive_errors, _check_zip_members, _read_member
from .bow import TextData
from .loaded import DataFormatError, LoadedData
from .source import IMAGE_EXTENSIONS

__all__ = ["read_documents", "prune_vocabulary", "Pruned", "detect_text_column", "STOP_WORDS",
           "DEFAULT_MIN_DF", "MAX_NUMERIC_WITH_TEXT"]

#: values of ``stop_words`` besides a list of words
STOP_WORDS = ("english", None)
#: default minimum document frequency of a kept word (a word of one document is no topic)
DEFAULT_MIN_DF = 2
#: a detected text column makes the file documents only when it has at most this many numeric columns
MAX_NUMERIC_WITH_TEXT = 2
#: bytes of a CSV looked at to detect a text column
_HEAD_BYTES = 65_536
_DOC_SUFFIXES = (".txt",)


# --------------------------------------------------------------------------- options

def check_text_options(text_column, stop_words, min_df):
    """``(text_column, stop words: "english", a frozenset or None, min_df)``, or InputError naming
    the option."""
    if text_column is not None and text_column is not False and not (
            isinstance(text_column, str) or (isinstance(text_column, int)
                                             and not isinstance(text_column, bool))):
        raise InputError("`text_column` must be None (detect a column of texts), False (never read "
                         f"texts), a column name or a column index; got {text_column!r}")
    if isinstance(stop_words, str) and stop_words.strip().lower() in ("none", ""):
        stop_words = None
    if stop_words is None:
        words = None
    elif isinstance(stop_words, str) and stop_words.strip().lower() == "english":
        words = "english"  # scikit-learn's list, imported when documents are counted
    elif isinstance(stop_words, (list, tuple, set, frozenset)) and all(isinstance(w, str)
                                                                       for w in stop_words):
        words = frozenset(w.lower() for w in stop_words)
    else:
        raise InputError("`stop_words` must be 'english' (scikit-learn's list), None (keep every "
                         f"word) or a list of words; got {stop_words!r}")
    ok_int = isinstance(min_df, numbers.Integral) and not isinstance(min_df, bool) and min_df >= 1
    ok_frac = isinstance(min_df, float) and 0.0 < min_df <= 1.0
    if not (ok_int or ok_frac):
        raise InputError("`min_df` must be an int >= 1 (documents a word must occur in) or a "
                         f"fraction in (0, 1] of the documents; got {min_df!r}")
    return text_column, words, min_df


# --------------------------------------------------------------------------- pruning

class Pruned:
    """Result of :func:`prune_vocabulary`: ``X`` (the kept columns, CSR), ``words``, ``kept``
    (column indices into the input), and the counts of what was removed and why."""

    def __init__(self, X, words, kept, n_stop, n_rare, n_common, notes):
        self.X, self.words, self.kept = X, words, kept
        self.n_stop, self.n_rare, self.n_common, self.notes = n_stop, n_rare, n_common, notes


def _df_threshold(value, n_docs: int) -> float:
    """A document count from an int, or a fraction of ``n_docs`` (CountVectorizer's rule)."""
    return float(value) if isinstance(value, numbers.Integral) else float(value) * n_docs


def prune_vocabulary(X, words, *, stop_words=frozenset(), min_df=1, max_df=1.0) -> Pruned:
    """Drop stop words, words in fewer than ``min_df`` and in more than ``max_df`` documents.

    ``X`` documents x words (sparse, counts); ``words`` the column names; ``stop_words`` a set
    of lower-case words (or None); ``min_df``/``max_df`` an int (documents) or a float
    (fraction of the documents), as ``CountVectorizer`` reads them.  A word is kept when it is
    not a stop word and ``min_df <= df <= max_df``.  The matrix stays sparse (a column
    selection).  Counts in the result: each word is counted once, under the first reason
    (stop word, then rare, then common).
    """
    X = sp.csr_matrix(X)
    m, n = X.shape
    names = [str(w) for w in words]
    stop = np.array([w.lower() in stop_words for w in names], dtype=bool) if stop_words else \
        np.zeros(n, dtype=bool)
    df = np.bincount(X.indices[X.data != 0], minlength=n)
    rare = ~stop & (df < _df_threshold(min_df, m))
    common = ~stop & ~rare & (df > _df_threshold(max_df, m))
    keep = np.flatnonzero(~(stop | rare | common))
    notes = []
    if stop.any():
        notes.append(f"{int(stop.sum()):,} stop word(s) removed (e.g. "
                     f"{', '.join(names[j] for j in np.flatnonzero(stop)[:5])})")
    if rare.any():
        lo = _df_threshold(min_df, m)
        notes.append(f"{int(rare.sum()):,} word(s) in no document removed" if lo <= 1 else
                     f"{int(rare.sum()):,} word(s) in fewer than {lo:g} document(s) removed "
                     f"(min_df={min_df!r})")
    if common.any():
        notes.append(f"{int(common.sum()):,} word(s) in more than {_df_threshold(max_df, m):g} of "
                     f"the {m:,} documents removed (max_df={max_df!r}; e.g. "
                     f"{', '.join(names[j] for j in np.flatnonzero(common)[:5])})")
    return Pruned(X[:, keep].tocsr(), [names[j] for j in keep], keep, int(stop.sum()),
                  int(rare.sum()), int(common.sum()), notes)


def _vectorize(texts: list, doc_names: list, name: str, stop, min_df,
               how: str) -> tuple:
    """(TextData, notes) of the documents: CountVectorizer, then the pruning."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, CountVectorizer

    if stop == "english":
        stop = frozenset(ENGLISH_STOP_WORDS)
    cv = CountVectorizer(lowercase=True, dtype=np.float64)
    try:
        X = cv.fit_transform(texts)
    except ValueError:  # scikit-learn: "empty vocabulary; perhaps the documents only contain stop words"
        raise DataFormatError(f"{name}: the {len(texts):,} documents hold no word (words are runs of "
                              "2 or more letters or digits); nothing to count") from None
    vocab = cv.get_feature_names_out().tolist()
    pruned = prune_vocabulary(X, vocab, stop_words=stop, min_df=min_df)
    if not pruned.words:
        raise DataFormatError(
            f"{name}: no word is left to count: the {len(texts):,} documents hold {len(vocab):,} "
            f"distinct word(s), {pruned.n_stop:,} of them stop words and {pruned.n_rare:,} in fewer "
            f"than {_df_threshold(min_df, len(texts)):g} documents (min_df={min_df!r}); lower "
            "min_df or keep the stop words (stop_words=None)")
    notes = [f"raw text: {len(texts):,} documents ({how}) counted by scikit-learn's "
             f"CountVectorizer (lower case, words of 2+ letters or digits): {len(vocab):,} distinct "
             f"words, {len(pruned.words):,} kept"] + pruned.notes
    if stop is None:
        notes.append("stop words kept (stop_words=None)")
    text = TextData(X=pruned.X, vocabulary=pruned.words, notes=[], source_name=name,
                    format="text", extra={"documents": len(texts), "distinct_words": len(vocab),
                                          "stop_words_removed": pruned.n_stop,
                                          "rare_words_removed": pruned.n_rare})
    return text, notes


# --------------------------------------------------------------------------- sources

def _decode_text(raw: bytes) -> tuple[str, bool]:
    """UTF-8 (with or without a BOM), else Latin-1; whether the fallback was used."""
    try:
        return raw.decode("utf-8-sig"), False
    except UnicodeDecodeError:
        return raw.decode("latin-1"), True


def _zip_documents(data: bytes, name: str, max_bytes: int):
    """(names, texts) of a .zip whose files are all ``.txt`` documents, else None."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except _ARCHIVE_ERRORS:
        return None
    with zf, _archive_errors(name):
        infos = [i for i in zf.infolist() if not i.is_dir() and not i.filename.startswith("__MACOSX/")
                 and not PurePosixPath(i.filename).name.startswith(".")]
        bases = [PurePosixPath(i.filename).name.lower() for i in infos]
        if not infos or not all(b.endswith(_DOC_SUFFIXES) for b in bases) \
                or any(b.endswith(IMAGE_EXTENSIONS) for b in bases):
            return None
        _check_zip_members(infos, name, max_bytes)
        texts, budget, latin = [], max_bytes, 0
        for info in infos:
            raw = _read_member(zf, info, budget, name)
            budget -= len(raw)
            text, fallback = _decode_text(raw)
            latin += fallback
            texts.append(text)
    if len(infos) < 2:
        raise DataFormatError(f"{name}: the archive holds no images and only 1 text document "
                              f"({infos[0].filename}); a .zip of text documents needs at least 2 "
                              ".txt files (one document each), a .zip of images one image per sample")
    return [i.filename for i in infos], texts, latin


def _head_rows(text: str, delim: str, limit: int = _HEAD_BYTES) -> list:
    head = text[:limit]
    if len(text) > limit:  # whole records only
        head = head[: head.rfind("\n") + 1] or head
    try:
        return list(csv.reader(io.StringIO(head), delimiter=delim))
    except csv.Error:
        return []


def _is_number(cell: str) -> bool:
    try:
        float(cell.replace(",", ""))
        return True
    except ValueError:
        return False


def detect_text_column(header: list, rows: list) -> tuple[int | None, str]:
    """The index of a column of free text in a table's first rows, or None; and why.

    A column is free text when at least 80% of its non-empty cells are not numbers, their
    median has at least 4 words, their mean length is at least 20 characters, and at least
    80% of them are distinct; the table is documents
    only when it has at most :data:`MAX_NUMERIC_WITH_TEXT` numeric columns (else the numbers
    are the data and the text is metadata).  The widest such column wins.
    """
    width = len(header)
    body = [r for r in rows if len(r) == width]
    if len(body) < 2 or width < 1:
        return None, "too few rows"
    best, numeric = None, 0
    for j in range(width):
        cells = [r[j].strip() for r in body if r[j].strip()]
        if not cells:
            continue
        nums = sum(_is_number(c) for c in cells)
        if nums >= 0.8 * len(cells):
            numeric += 1
            continue
        words = np.median([len(c.split()) for c in cells])
        distinct = len(set(cells)) / len(cells)
        long = np.mean([len(c) for c in cells]) >= 20
        if nums <= 0.2 * len(cells) and words >= 4 and distinct >= 0.8 and long:
            if best is None or words > best[1]:
                best = (j, words)
    if best is None:
        return None, "no column of free text"
    if numeric > MAX_NUMERIC_WITH_TEXT:
        return None, f"{numeric} numeric columns beside the text"
    return best[0], (f"column '{header[best[0]]}' detected as the texts (median {best[1]:g} words "
                     "per cell, nearly all distinct)")


def _table_documents(data: bytes, name: str, ext: str, text_column, label_column):
    """(names, texts, metadata, labels, how, decode notes) of a CSV/TSV of texts, or None."""
    import pandas as pd

    from .sniff import _choose_delimiter, _decode

    notes: list = []
    # the head decides (a numeric table is not decoded twice); the whole file only for texts
    head = _decode(data[: 4 * _HEAD_BYTES], name, []) if len(data) > 4 * _HEAD_BYTES else None
    text = _decode(data, name, notes) if head is None else head
    lines = [ln for ln in text[:_HEAD_BYTES].splitlines() if ln.strip()][:50]
    if not lines:
        return None
    delim = _choose_delimiter(lines, ext) or ("\t" if ext in (".tsv", ".tab") else ",")
    if text_column is None:
        rows = _head_rows(text, delim)
        if len(rows) < 3:
            return None
        if ext == ".txt" and len(rows[0]) < 2:  # prose, not a table: one document is no corpus
            return None
        col, why = detect_text_column([c.strip() for c in rows[0]], rows[1:])
        if col is None:
            return None
    if head is not None:
        text = _decode(data, name, notes)
    try:
        table = pd.read_csv(io.StringIO(text), sep=delim, dtype=str, keep_default_na=False,
                            engine="python" if len(delim) > 1 else "c", skipinitialspace=False)
    except (ValueError, pd.errors.ParserError, csv.Error) as exc:
        raise DataFormatError(f"{name}: cannot be read as a table of texts ({exc}); quote texts "
                              "that hold the delimiter or line breaks") from None
    names = [str(c).strip() for c in table.columns]
    table.columns = names
    if text_column is None:
        how = why
    else:
        if isinstance(text_column, str) and text_column in names:
            col = names.index(text_column)
        elif isinstance(text_column, int) and -len(names) <= text_column < len(names):
            col = text_column % len(names)
        else:
            raise InputError(f"`text_column` must be one of the column names {names[:20]} or an "
                             f"index in [0, {len(names) - 1}]; got {text_column!r}")
        how = f"column '{names[col]}' as asked"
    if len(table) < 2:
        raise DataFormatError(f"{name}: a single document (row); topics need at least 2 documents")
    texts = table.iloc[:, col].tolist()
    meta = table.drop(columns=table.columns[col])
    labels, lab = None, None
    if label_column is not None:
        if label_column not in meta.columns:
            raise InputError(f"`label_column` must be one of the other columns {list(meta.columns)[:20]}; "
                             f"got {label_column!r}")
        lab = label_column
    else:
        for c in meta.columns:
            vals = meta[c].str.strip()
            if vals.nunique() < len(vals) and not all(_is_number(v) for v in vals if v):
                lab = c
                break
    if lab is not None:
        labels = meta[lab].str.strip().to_numpy(dtype=str)
        notes.append(f"labels from column '{lab}' ({len(set(labels.tolist()))} classes)")
    if meta.shape[1]:
        notes.append(f"other column(s) kept as metadata: {', '.join(map(str, meta.columns[:10]))}")
    doc_names = [f"line {i + 2}" for i in range(len(texts))]  # the line of each row, header line 1
    for c in meta.columns:  # an id column (distinct, non-empty values) names the documents
        ids = meta[c].str.strip()
        if c != lab and ids.ne("").all() and ids.nunique() == len(ids):
            doc_names = ids.tolist()
            notes.append(f"documents named by column '{c}'")
            break
    meta.insert(0, "document" if "document" not in meta.columns else "file line",
                [f"line {i + 2}" for i in range(len(texts))])
    return doc_names, texts, meta.reset_index(drop=True), labels, \
        f"one per row of the {ext} file, {how}", notes


# --------------------------------------------------------------------------- front

def read_documents(data: bytes, name: str, ext: str, *, text_column=None, stop_words="english",
                   min_df=DEFAULT_MIN_DF, label_column=None, max_bytes: int = 200_000_000):
    """A :class:`LoadedData` of raw text documents, or None when the file holds none.

    ``ext`` is the file's kind (``.zip`` or a CSV/TSV kind).  ``X`` is the documents x words
    CSR matrix of float64 counts (``extra["sparse"]`` True, never densified), ``feature_names``
    the words, ``format`` ``"text-zip"`` or ``"text-table"``, ``metadata`` the document names
    (and a table's other columns), ``notes`` what was counted and removed.

    Raises
    ------
    DataFormatError
        A single document, documents without any word, no word left after the stop words and
        ``min_df`` (with the counts), a named ``text_column`` that is missing.
    """
    import pandas as pd

    from .corpora import _finish_sparse

    text_column, stop, min_df = check_text_options(text_column, stop_words, min_df)
    if text_column is False:
        return None
    if ext == ".zip":
        found = _zip_documents(data, name, max_bytes)
        if found is None:
            if text_column is not None:
                raise InputError(f"`text_column` applies to a CSV/TSV of texts; {name} is a .zip "
                                 "that is not all .txt documents")
            return None
        if label_column is not None or text_column is not None:
            raise InputError(f"`label_column` and `text_column` do not apply to a .zip of .txt "
                             f"documents ({name}: one document per file, no columns); got "
                             f"{label_column if label_column is not None else text_column!r}")
        doc_names, texts, latin = found
        extra_notes = [f"{latin} document(s) not UTF-8: read as Latin-1"] if latin else []
        metadata, labels, fmt = pd.DataFrame({"document": doc_names}), None, "text-zip"
        how = "one per .txt file of the archive"
    else:
        found = _table_documents(data, name, ext, text_column, label_column)
        if found is None:
            return None
        doc_names, texts, metadata, labels, how, extra_notes = found
        fmt = "text-table"
    text, notes = _vectorize(texts, doc_names, name, stop, min_df, how)
    loaded = _finish_sparse(text, name, fmt, notes + extra_notes)
    more = {"sample_names": [str(d) for d in doc_names]} \
        if "sample_names" in {f.name for f in fields(LoadedData)} else {}
    return replace(loaded, labels=labels, metadata=metadata,
                   extra={**loaded.extra, **text.extra, "vocabulary": True}, **more)
