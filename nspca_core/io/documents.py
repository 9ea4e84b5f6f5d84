"""Raw text: documents become a documents x words count matrix, counted as scikit-learn's
``CountVectorizer`` counts, kept sparse.

Two ways documents come (issue 26, item 5):

* a ``.zip`` of ``.txt`` files, one document per file (the file names become the document
  names, in the archive's order), read one at a time and never held together; each decoded
  as the CSV reader decodes (:func:`decode_document`: byte-order mark, UTF-16 by its NUL
  pattern, UTF-8, Shift-JIS when it reads as Japanese, else Latin-1, said in the notes); files
  that are not ``.txt`` beside at least as many documents are skipped and named;
* a CSV/TSV with a column of texts, named (``text_column="body"`` or its index) or detected:
  a column of free text (most cells of several words, nearly all distinct) in a file with at
  most :data:`MAX_NUMERIC_WITH_TEXT` numeric columns.  The other columns become ``metadata``;
  ``label_column`` (or the first short text column with repeated values) the labels.

Words (:func:`count_words`): CountVectorizer's default tokens (runs of 2+ letters or digits) of
the lower-cased text that are not numbers (digits only: years, page numbers; ``numbers=True``
counts them too, issue 41), without the stop words (scikit-learn's English list by default) and
the words in fewer than ``min_df`` documents — the same matrix as ``CountVectorizer(lowercase=True,
token_pattern=WORD_PATTERN, stop_words=..., min_df=...)``, counted one document at a time with a
progress report, with the counts of what was dropped for the notes.
:func:`prune_vocabulary` serves the Topics page on any corpus.
"""

from __future__ import annotations

import csv
import io
import numbers
import re
import zipfile
from dataclasses import fields, replace
from pathlib import PurePosixPath

import numpy as np
import scipy.sparse as sp

from .._common.validation import InputError
from .archive import _ARCHIVE_ERRORS, _archive_errors, _check_zip_members, _read_member
from .bow import TextData
from .corpora import _finish_sparse
from .loaded import DataFormatError, LoadedData, missing_label_note, refuse_missing_labels
from .sniff import _BOMS, _choose_delimiter, _decode, _sniff_utf16, utf16_by_content
from .source import IMAGE_EXTENSIONS
from .vocabulary import WordCounts

__all__ = ["read_documents", "prune_vocabulary", "Pruned", "detect_text_column", "STOP_WORDS",
           "DEFAULT_MIN_DF", "MAX_NUMERIC_WITH_TEXT", "WORD_PATTERN", "TOKEN_PATTERN"]

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


#: CountVectorizer's default tokens: runs of 2 or more word characters (``numbers=True``)
TOKEN_PATTERN = r"(?u)\b\w\w+\b"
#: the words counted by default: those tokens but the numbers (runs of digits only)
WORD_PATTERN = r"(?u)\b(?!\d+\b)\w\w+\b"
_TOKEN, _WORD = re.compile(TOKEN_PATTERN), re.compile(WORD_PATTERN)
#: the last non-word character of a window (a document is tokenized in pieces cut there)
_LAST_NONWORD = re.compile(r"\W\w*\Z")
_NONWORD = re.compile(r"\W")
#: characters of a document lower-cased and tokenized at a time (bounds the token list)
_PIECE = 1 << 20
#: documents between two progress reports
_REPORT_EVERY = 256


def _pieces(text: str):
    """``text`` in pieces of about :data:`_PIECE` characters, each cut after a non-word character
    (a token never spans two pieces, since tokens are runs of word characters)."""
    start, n = 0, len(text)
    while n - start > _PIECE:
        end = start + _PIECE
        m = _LAST_NONWORD.search(text, max(start, end - 65_536), end)
        if m is None:  # 64 kB of word characters: cut after the next non-word character instead
            m = _NONWORD.search(text, end)
            if m is None:
                break
        cut = m.start() + 1
        yield text[start:cut]
        start = cut
    yield text[start:]


def count_words(documents, *, stop_words=None, min_df=1, callback=None, total=None, numbers=False,
                hash_fn=hash):
    r"""Count the words of ``documents`` (an iterable of str, consumed once) as scikit-learn's
    ``CountVectorizer(lowercase=True, token_pattern=..., stop_words=..., min_df=...)`` does, one
    document at a time; ``token_pattern`` :data:`WORD_PATTERN` (numbers are not words), or
    CountVectorizer's default :data:`TOKEN_PATTERN` with ``numbers=True``.

    Returns ``(X, words, info)``: ``X`` the documents x kept words CSR matrix of float64 counts
    (columns in the order of the sorted words, indices sorted), ``words`` the kept words (a
    :class:`.vocabulary.Words`, a sequence of str), ``info`` a dict: ``documents``,
    ``distinct_words`` (all words seen, stop words included), ``n_stop`` and ``n_rare`` (distinct
    words removed as stop words / in fewer than ``min_df`` documents).  ``callback(done, total)``
    is called every few documents and at the end.  ``hash_fn`` keys the words (checked against
    the words' text, so any function gives the same counts).

    Notes
    -----
    Tokens are CountVectorizer's default (``(?u)\b\w\w+\b`` on the lower-cased text) but the runs
    of digits only, unless ``numbers``; a document is lower-cased and tokenized a megabyte at a
    time.  Memory (:class:`.vocabulary.WordCounts`): per distinct word its UTF-8 bytes and 16 bytes
    (no Python str), per (document, word) pair 5 bytes while counting; at the end the kept pairs
    become the CSR arrays (12 bytes each).  No list of the documents is kept: a generator of
    documents is read once.
    """
    from collections import Counter


    table = WordCounts(hash_fn)
    n_docs, token = 0, _TOKEN if numbers else _WORD
    for doc in documents:
        found: Counter = Counter()
        for piece in _pieces(doc):
            found.update(token.findall(piece.lower()))
        table.add(found)
        n_docs += 1
        if callback is not None and n_docs % _REPORT_EVERY == 0:
            callback(n_docs, total if total is not None else n_docs)
    X, words, info = table.matrix(stop_words, _df_threshold(min_df, n_docs))
    if callback is not None:
        callback(n_docs, n_docs)
    return X, words, {"documents": n_docs, **info}


def _vectorize(documents, name: str, stop, min_df, how: str, *, callback=None, total=None,
               numbers=False) -> tuple:
    """(TextData, notes) of the documents (an iterable of str, read once): counted, then pruned."""
    if stop == "english":
        from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

        stop = frozenset(ENGLISH_STOP_WORDS)
    X, words, info = count_words(documents, stop_words=stop, min_df=min_df, callback=callback,
                                 total=total, numbers=numbers)
    what = "words of 2+ letters or digits" + ("" if numbers else ", numbers (digits only) left out")
    n_docs = info["documents"]
    if info["distinct_words"] == 0:
        raise DataFormatError(f"{name}: the {n_docs:,} documents hold no word ({what}); nothing to "
                              "count" + ("" if numbers else " (numbers=True counts the numbers)"))
    if not words:
        raise DataFormatError(
            f"{name}: no word is left to count: the {n_docs:,} documents hold "
            f"{info['distinct_words']:,} distinct word(s), {info['n_stop']:,} of them stop words and "
            f"{info['n_rare']:,} in fewer than {_df_threshold(min_df, n_docs):g} documents "
            f"(min_df={min_df!r}); lower min_df or keep the stop words (stop_words=None)")
    notes = [f"raw text: {n_docs:,} documents ({how}) counted as scikit-learn's CountVectorizer "
             f"counts (lower case, {what}): {info['distinct_words']:,} distinct "
             f"words, {len(words):,} kept"]
    if info["n_stop"]:
        notes.append(f"{info['n_stop']:,} stop word(s) removed (e.g. {', '.join(info['stop_examples'])})")
    if info["n_rare"]:
        lo = _df_threshold(min_df, n_docs)
        notes.append(f"{info['n_rare']:,} word(s) in no document removed" if lo <= 1 else
                     f"{info['n_rare']:,} word(s) in fewer than {lo:g} document(s) removed "
                     f"(min_df={min_df!r})")
    if stop is None:
        notes.append("stop words kept (stop_words=None)")
    text = TextData(X=X, vocabulary=words, notes=[], source_name=name,
                    format="text", extra={"documents": n_docs, "distinct_words": info["distinct_words"],
                                          "stop_words_removed": info["n_stop"],
                                          "rare_words_removed": info["n_rare"]})
    return text, notes


# --------------------------------------------------------------------------- sources

def _looks_japanese(raw: bytes) -> str | None:
    """The text of ``raw`` read as Shift-JIS (Windows cp932) when it decodes strictly and reads as
    Japanese, else None.  Japanese text in Shift-JIS has lead or trail bytes in 0x80-0x9F, which
    Latin-1 text never holds (C1 control characters), and most of its non-ASCII characters are
    kana, kanji or full-width forms; Latin-1 bytes that happen to decode as cp932 give half-width
    katakana or private-use characters instead."""
    if not any(0x80 <= b <= 0x9F for b in raw[:1_000_000]):
        return None
    try:
        text = raw.decode("cp932")
    except UnicodeDecodeError:
        return None
    wide = nonascii = 0
    for ch in text:
        o = ord(ch)
        if o > 127:
            nonascii += 1
            wide += 0x3000 <= o <= 0x30FF or 0x4E00 <= o <= 0x9FFF or 0xFF01 <= o <= 0xFF5E
    return text if wide and wide >= 0.5 * nonascii else None


#: C0 control characters that text never holds (tab, line feed, form feed... excepted)
_CONTROL = re.compile(r"[\x01-\x08\x0e-\x1f]")


def decode_document(raw: bytes, label: str) -> tuple[str, str]:
    """``(text, encoding read)`` of a document's bytes, found as the CSV reader finds it.

    A byte-order mark (UTF-8/16/32), UTF-16 without one (its NUL byte pattern, or with little
    ASCII its high bytes' low entropy, characters in common use and a text of letters:
    :func:`.sniff.utf16_by_content`), then UTF-8 (unless it holds control characters and reads
    as UTF-16: short Cyrillic); bytes that are none of these are Shift-JIS when they decode as
    such and read as Japanese (:func:`_looks_japanese`), UTF-16 when they read as such without
    a NUL byte (CJK text), else Latin-1 (which reads any bytes: said in the notes).  A document whose mark names
    an encoding it does not decode in, or that holds NUL bytes without being UTF-16/32 in
    either byte order, is refused (never read as garbage words such as ``ÿþb``).
    """

    encoding = next((enc for bom, enc in _BOMS if raw.startswith(bom)), None)
    how = "byte-order mark"
    if encoding is None:
        encoding, how = _sniff_utf16(raw), "NUL byte pattern"
    if encoding is None and b"\x00" in raw:
        encoding, how = utf16_by_content(raw) or (None, "")
    if encoding is not None:
        return _decode_as(raw, encoding, how, label)
    if b"\x00" in raw:
        raise DataFormatError(f"{label}: binary content (NUL bytes) in a .txt document, and not "
                              "UTF-16 text in either byte order; documents must be text (UTF-8, "
                              "UTF-16 or UTF-32, Shift-JIS, Latin-1)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None:
        # control characters (0x04 is Cyrillic's high byte) in "UTF-8": UTF-16 without a NUL?
        found = utf16_by_content(raw) if _CONTROL.search(text) else None
        return (text, "UTF-8") if found is None else _decode_as(raw, found[0], found[1], label)
    japanese = _looks_japanese(raw)
    if japanese is not None:
        return japanese, "Shift-JIS (cp932: it decodes and reads as Japanese)"
    found = utf16_by_content(raw, nul=False)
    if found is not None:
        return _decode_as(raw, found[0], found[1], label)
    return raw.decode("latin-1"), "Latin-1 (not UTF-8: the last resort)"


def _decode_as(raw: bytes, encoding: str, how: str, label: str) -> tuple[str, str]:
    shown = encoding.upper().replace("-SIG", "").replace("-LE", "").replace("-BE", "")
    try:
        return raw.decode(encoding).lstrip("\ufeff"), f"{shown} ({how.split(':')[0]})"
    except UnicodeDecodeError as exc:
        raise DataFormatError(f"{label}: looks like {encoding.upper()} text ({how}) but does not "
                              f"decode ({exc.reason} at byte {exc.start}); save it as UTF-8") from None


#: most files a .zip of documents may hold besides its .txt documents (skipped and named): at
#: most as many as the documents
_JUNK_NAMES = (".DS_Store", "Thumbs.db", "desktop.ini")


def _zip_listing(data: bytes, name: str, max_bytes: int):
    """``(ZipFile, document infos, skipped names)`` of a .zip of ``.txt`` documents, or None.

    It is one when it holds no image and at least 2 ``.txt`` files, at least as many as its
    other files (those are skipped and named in the notes: a README, a table of metadata).
    """
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except _ARCHIVE_ERRORS:
        return None
    with _archive_errors(name):
        infos = [i for i in zf.infolist() if not i.is_dir() and not i.filename.startswith("__MACOSX/")
                 and not PurePosixPath(i.filename).name.startswith(".")
                 and PurePosixPath(i.filename).name not in _JUNK_NAMES]
    bases = [PurePosixPath(i.filename).name.lower() for i in infos]
    docs = [i for i, b in zip(infos, bases) if b.endswith(_DOC_SUFFIXES)]
    others = [i.filename for i, b in zip(infos, bases) if not b.endswith(_DOC_SUFFIXES)]
    if not docs or any(b.endswith(IMAGE_EXTENSIONS) for b in bases) or len(others) > len(docs) \
            or (len(docs) < 2 and others):
        zf.close()
        return None
    with _archive_errors(name):
        _check_zip_members(infos, name, max_bytes)
    if len(docs) < 2:
        zf.close()
        raise DataFormatError(f"{name}: the archive holds no images and only 1 text document "
                              f"({docs[0].filename}); a .zip of text documents needs at least 2 "
                              ".txt files (one document each), a .zip of images one image per sample")
    return zf, docs, others


def _zip_texts(zf, infos, name: str, max_bytes: int, encodings: dict):
    """The documents of the archive, one at a time (each read, decoded, then dropped)."""
    budget = max_bytes
    for info in infos:
        with _archive_errors(name):
            raw = _read_member(zf, info, budget, name)
        budget -= len(raw)
        text, encoding = decode_document(raw, f"{name}:{info.filename}")
        del raw
        encodings[encoding] = encodings.get(encoding, 0) + 1
        yield text


def _encoding_notes(encodings: dict) -> list:
    """A note on the documents not in UTF-8 (none when they all are)."""
    other = {e: c for e, c in encodings.items() if e != "UTF-8"}
    if not other:
        return []
    parts = ", ".join(f"{c:,} as {e}" for e, c in sorted(other.items(), key=lambda ec: -ec[1]))
    return [f"{sum(other.values()):,} document(s) not in UTF-8: read {parts}"]


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
    median has at least 4 words (tokens as counted: runs of 2+ letters or digits), their mean
    length is at least 20 characters, and at least 80% of them are distinct; the table is documents
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
        words = float(np.median([len(_TOKEN.findall(c)) for c in cells]))
        distinct = len(set(cells)) / len(cells)
        chars = [len(c) for c in cells]
        if nums <= 0.2 * len(cells) and words >= 4 and distinct >= 0.8 and np.mean(chars) >= 20:
            if best is None or words > best[1]:
                best = (j, words, float(np.median(chars)))
    if best is None:
        return None, "no column of free text"
    if numeric > MAX_NUMERIC_WITH_TEXT:
        return None, f"{numeric} numeric columns beside the text"
    return best[0], (f"column '{header[best[0]]}' detected as the texts (median {best[1]:,g} words and "
                     f"{best[2]:,g} characters per cell, nearly all distinct)")


def _table_documents(data: bytes, name: str, ext: str, text_column, label_column):
    """(names, texts, metadata, labels, how, decode notes) of a CSV/TSV of texts, or None."""
    import pandas as pd


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
                             f"got {label_column!r}", argument="label_column", value=label_column,
                             allowed=tuple(str(c) for c in meta.columns))
        lab = label_column
    else:
        for c in meta.columns:
            vals = meta[c].str.strip()
            if vals.nunique() < len(vals) and not all(_is_number(v) for v in vals if v):
                note = missing_label_note(vals.tolist(), c)
                if note is None:
                    lab = c
                    break
                notes.append(note)
    if lab is not None:
        labels = meta[lab].str.strip().to_numpy(dtype=str)
        refuse_missing_labels(labels, lab, name, [i + 2 for i in range(len(labels))])
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
                   min_df=DEFAULT_MIN_DF, label_column=None, max_bytes: int = 200_000_000,
                   callback=None, numbers: bool = False):
    """A :class:`LoadedData` of raw text documents, or None when the file holds none.

    ``ext`` is the file's kind (``.zip`` or a CSV/TSV kind).  ``X`` is the documents x words
    CSR matrix of float64 counts (``extra["sparse"]`` True, never densified), ``feature_names``
    the words, ``format`` ``"text-zip"`` or ``"text-table"``, ``metadata`` the document names
    (and a table's other columns), ``notes`` what was counted and removed.  ``callback(done,
    total)``, when given, is called as the documents are counted (every few documents, and once
    at the end with ``done == total``).  ``numbers``: count the runs of digits only (years,
    page numbers) as words too (by default they are not words).

    Raises
    ------
    DataFormatError
        A single document, documents without any word, no word left after the stop words and
        ``min_df`` (with the counts), a named ``text_column`` that is missing.
    """
    import pandas as pd


    text_column, stop, min_df = check_text_options(text_column, stop_words, min_df)
    if not isinstance(numbers, (bool, np.bool_)):
        raise InputError(f"`numbers` must be True (count numbers as words) or False; got {numbers!r}")
    if text_column is False:
        return None
    if ext == ".zip":
        found = _zip_listing(data, name, max_bytes)
        if found is None:
            if text_column is not None:
                raise InputError(f"`text_column` applies to a CSV/TSV of texts; {name} is a .zip "
                                 "that is not all .txt documents")
            return None
        zf, infos, skipped = found
        if label_column is not None or text_column is not None:
            zf.close()
            raise InputError(f"`label_column` and `text_column` do not apply to a .zip of .txt "
                             f"documents ({name}: one document per file, no columns); got "
                             f"{label_column if label_column is not None else text_column!r}")
        doc_names = [i.filename for i in infos]
        encodings: dict = {}
        with zf:
            text, notes = _vectorize(_zip_texts(zf, infos, name, max_bytes, encodings), name, stop,
                                     min_df, "one per .txt file of the archive", callback=callback,
                                     total=len(infos), numbers=bool(numbers))
        extra_notes = _encoding_notes(encodings)
        if skipped:
            extra_notes.append(f"skipped {len(skipped):,} file(s) that are not .txt documents: "
                               f"{', '.join(skipped[:5])}{', ...' if len(skipped) > 5 else ''}")
        metadata, labels, fmt = pd.DataFrame({"document": doc_names}), None, "text-zip"
    else:
        found = _table_documents(data, name, ext, text_column, label_column)
        if found is None:
            return None
        doc_names, texts, metadata, labels, how, extra_notes = found
        fmt = "text-table"
        text, notes = _vectorize(texts, name, stop, min_df, how, callback=callback, total=len(texts),
                                 numbers=bool(numbers))
    loaded = _finish_sparse(text, name, fmt, notes + extra_notes)
    more = {"sample_names": [str(d) for d in doc_names]} \
        if "sample_names" in {f.name for f in fields(LoadedData)} else {}
    return replace(loaded, labels=labels, metadata=metadata,
                   extra={**loaded.extra, **text.extra, "vocabulary": True}, **more)
