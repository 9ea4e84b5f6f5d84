"""Raw text (issue 26, item 5): a .zip of .txt documents or a CSV/TSV with a column of texts becomes a
documents x words count matrix, kept sparse, through scikit-learn's CountVectorizer — compared here
with CountVectorizer itself run with the same options, and with brute-force counts."""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections import Counter

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, CountVectorizer

from nspca_core import cli, load_file
from nspca_core._common.validation import InputError
from nspca_core.io import DataFormatError
from nspca_core.io.documents import TOKEN_PATTERN, WORD_PATTERN, detect_text_column, prune_vocabulary

DOCS = ["The cat sat on the mat. The cat purred.",
        "A dog and a cat played in the garden.",
        "Stocks fell as the market dropped; bonds rose.",
        "The market rallied and stocks rose again.",
        "Garden flowers bloom in spring, the dog sleeps.",
        "Bonds and stocks: the market is calm."]


def zip_of(docs, names=None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for i, doc in enumerate(docs):
            zf.writestr(names[i] if names else f"doc{i:02d}.txt", doc.encode("utf-8"))
    return buf.getvalue()


def csv_of(docs, labels=None, sep=",") -> bytes:
    head = sep.join(["id"] + (["topic"] if labels else []) + ["text"])
    rows = [sep.join([str(i)] + ([labels[i]] if labels else []) + ['"' + d.replace('"', '""') + '"'])
            for i, d in enumerate(docs)]
    return ("\n".join([head] + rows) + "\n").encode()


def reference(docs, numbers=False, **options):
    """CountVectorizer with the reader's tokens: its default pattern but the numbers (digits only),
    or its default itself with ``numbers=True`` (issue 41: numbers are not words by default)."""
    cv = CountVectorizer(lowercase=True, token_pattern=TOKEN_PATTERN if numbers else WORD_PATTERN, **options)
    return cv.fit_transform(docs).toarray().astype(float), cv.get_feature_names_out().tolist()


def test_zip_of_txt_equals_count_vectorizer_with_english_stop_words_and_min_df():
    out = load_file(zip_of(DOCS), filename="docs.zip")
    want, words = reference(DOCS, stop_words="english", min_df=2)
    assert sp.isspmatrix_csr(out.X) and out.X.dtype == np.float64 and out.extra["sparse"]
    np.testing.assert_array_equal(out.X.toarray(), want)
    assert out.feature_names == words and out.format == "text-zip"
    assert list(out.metadata["document"]) == [f"doc{i:02d}.txt" for i in range(6)]
    # the notes' counts, by brute force
    tokens = [{t for t in re.findall(r"(?u)\b\w\w+\b", d.lower()) if not t.isdigit()} for d in DOCS]
    vocab = set().union(*tokens)
    stop = {w for w in vocab if w in ENGLISH_STOP_WORDS}
    rare = {w for w in vocab - stop if sum(w in t for t in tokens) < 2}
    assert out.notes[0].startswith(f"raw text: 6 documents (one per .txt file of the archive) "
                                   f"counted as scikit-learn's CountVectorizer counts (lower case, words of "
                                   f"2+ letters or digits, numbers (digits only) left out): {len(vocab)} "
                                   f"distinct words, "
                                   f"{len(vocab) - len(stop) - len(rare)} kept")
    assert f"{len(stop)} stop word(s) removed" in out.notes[1]
    assert out.notes[2] == f"{len(rare)} word(s) in fewer than 2 document(s) removed (min_df=2)"
    assert out.extra["stop_words_removed"] == len(stop) and out.extra["rare_words_removed"] == len(rare)


def test_options_stop_words_none_and_min_df_one_keep_everything():
    out = load_file(zip_of(DOCS), filename="docs.zip", stop_words=None, min_df=1)
    want, words = reference(DOCS)
    np.testing.assert_array_equal(out.X.toarray(), want)
    assert out.feature_names == words and "the" in words
    assert "stop words kept (stop_words=None)" in out.notes


WORDS = ["the", "and", "cat", "dog", "market", "stocks", "of", "garden", "rose", "x", "Data", "it's",
         "1999", "42", "b2b", "3d", "٣٤"]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=12).map(" ".join),
                min_size=2, max_size=8),
       st.sampled_from(["english", None, ["cat", "dog"]]),
       st.one_of(st.integers(1, 3), st.sampled_from([0.25, 0.5, 1.0])), st.booleans())
def test_property_documents_equal_count_vectorizer(docs, stop_words, min_df, numbers):
    options = dict(stop_words=stop_words, min_df=min_df, numbers=numbers)
    try:
        want, words = reference(docs, **options)
    except ValueError:  # scikit-learn: nothing left
        with pytest.raises(DataFormatError, match=r"no word is left to count|hold no word"):
            load_file(zip_of(docs), filename="h.zip", **options)
        return
    if len(words) < 2:
        with pytest.raises(DataFormatError, match=r"h\.zip: a single word \(column\)"):
            load_file(zip_of(docs), filename="h.zip", **options)
        return
    out = load_file(zip_of(docs), filename="h.zip", **options)
    np.testing.assert_array_equal(out.X.toarray(), want)
    assert out.feature_names == words


def test_csv_with_a_detected_text_column_labels_and_metadata():
    labels = ["pets", "pets", "money", "money", "garden", "money"]
    out = load_file(csv_of(DOCS, labels), filename="reviews.csv")
    want, words = reference(DOCS, stop_words="english", min_df=2)
    np.testing.assert_array_equal(out.X.toarray(), want)
    assert out.feature_names == words and out.format == "text-table"
    assert list(out.labels) == labels
    assert list(out.metadata.columns) == ["document", "id", "topic"]
    assert list(out.metadata["document"]) == [f"line {i}" for i in range(2, 8)]
    assert "column 'text' detected as the texts" in out.notes[0]
    assert list(out.sample_names) == [str(i) for i in range(6)]  # the id column names them
    assert "documents named by column 'id'" in out.notes
    # no id column: the lines name them; a 'document' column of the file is kept as it is
    data = b"document,text\na,one two three four words here\na,five six seven eight words more\n"
    out = load_file(data, filename="n.csv", min_df=1)
    assert list(out.sample_names) == ["line 2", "line 3"]
    assert list(out.metadata.columns) == ["file line", "document"]


def test_tsv_with_a_named_text_column_and_an_index():
    data = csv_of(DOCS, sep="\t")
    a = load_file(data, filename="d.tsv", text_column="text", min_df=1)
    b = load_file(data, filename="d.tsv", text_column=1, min_df=1)
    want, _ = reference(DOCS, stop_words="english", min_df=1)
    np.testing.assert_array_equal(a.X.toarray(), want)
    np.testing.assert_array_equal(b.X.toarray(), want)
    assert "column 'text' as asked" in a.notes[0]


def test_numeric_tables_with_a_description_stay_dense():
    rng = np.random.default_rng(0)
    rows = ["gene,description,s1,s2,s3"] + [
        f"g{i},\"a long free text description of gene number {i} here\",{rng.random():.3f},"
        f"{rng.random():.3f},{rng.random():.3f}" for i in range(6)]
    out = load_file(("\n".join(rows) + "\n").encode(), filename="g.csv")
    assert not sp.issparse(out.X) and out.X.shape == (6, 3)
    # and text_column=False never reads texts
    with pytest.raises(DataFormatError):
        load_file(csv_of(DOCS), filename="t.csv", text_column=False)


def test_detect_text_column_rules():
    body = [["1", f"some words in a sentence number {i}"] for i in range(4)]
    assert detect_text_column(["id", "text"], body)[0] == 1
    assert detect_text_column(["id", "text"], [["1", "a b"], ["2", "c d"]])[0] is None  # short
    same = [["1", "the same sentence in every row"]] * 4
    assert detect_text_column(["id", "text"], same)[0] is None  # not distinct
    wide = [["1", "2", "3", f"some words in a sentence number {i}"] for i in range(4)]
    assert detect_text_column(["a", "b", "c", "t"], wide) == (None, "3 numeric columns beside the text")


@pytest.mark.parametrize("data, filename, options, match", [
    (zip_of(["the and of", "it is the", "and so on"]), "stop.zip", {},
     r"stop\.zip: no word is left to count: the 3 documents hold \d+ distinct word\(s\), \d+ of them "
     r"stop words and 0 in fewer than 2 documents \(min_df=2\); lower min_df or keep the stop words"),
    (zip_of(["alpha beta", "gamma delta"]), "rare.zip", {},
     r"no word is left to count: .* 0 of them stop words and 4 in fewer than 2 documents"),
    (zip_of(["!!", "? ."]), "punct.zip", {}, r"the 2 documents hold no word \(words of 2\+ letters or digits, "
     r"numbers \(digits only\) left out\)"),
    (zip_of(["just one document"]), "one.zip", {},
     r"holds no images and only 1 text document \(doc00\.txt\); a \.zip of text documents needs at "
     r"least 2"),
    (csv_of(DOCS), "t.csv", {"text_column": "body"},
     r"`text_column` must be one of the column names \['id', 'text'\]"),
    (csv_of(DOCS), "t.csv", {"stop_words": "french"}, r"`stop_words` must be 'english'"),
    (csv_of(DOCS), "t.csv", {"min_df": 0}, r"`min_df` must be an int >= 1 .* got 0"),
    (csv_of(DOCS), "t.csv", {"min_df": 1.5}, r"`min_df` must be .* fraction in \(0, 1\]"),
    (csv_of(DOCS), "t.csv", {"text_column": 2.5}, r"`text_column` must be None"),
    (csv_of(DOCS), "t.csv", {"label_column": "nope"}, r"`label_column` must be one of the other "),
    (zip_of(DOCS), "d.zip", {"label_column": "topic"},
     r"`label_column` and `text_column` do not apply to a \.zip of \.txt documents \(d\.zip"),
    (np.save.__doc__ and b"\x93NUMPY", "a.npy", {"text_column": "text"},
     r"`text_column` applies to a CSV/TSV of texts; a\.npy is not one"),
])
def test_refusals(data, filename, options, match):
    with pytest.raises(InputError, match=match):
        load_file(data, filename=filename, **options)


def test_prune_vocabulary_against_brute_force():
    rng = np.random.default_rng(3)
    X = sp.csr_matrix(rng.poisson(0.6, (12, 9)).astype(float))
    words = ["the", "cat", "dog", "of", "sun", "moon", "and", "star", "sky"]
    for min_df, max_df in [(1, 1.0), (2, 0.5), (0.25, 8), (3, 0.9)]:
        p = prune_vocabulary(X, words, stop_words=frozenset(ENGLISH_STOP_WORDS), min_df=min_df,
                             max_df=max_df)
        D = X.toarray()
        df = (D > 0).sum(axis=0)
        lo = min_df if isinstance(min_df, int) else min_df * 12
        hi = max_df if isinstance(max_df, int) else max_df * 12
        keep = [j for j, w in enumerate(words) if w not in ENGLISH_STOP_WORDS and lo <= df[j] <= hi]
        assert list(p.kept) == keep and p.words == [words[j] for j in keep]
        np.testing.assert_array_equal(p.X.toarray(), D[:, keep])
        assert p.n_stop == 3 and p.n_stop + p.n_rare + p.n_common == 9 - len(keep)


def test_cli_fits_topics_of_a_zip_of_documents(tmp_path, capsys):
    docs = [f"{' '.join(['cat', 'dog', 'pet', 'fur'] * (1 + i))} doc{i}" if i % 2 else
            f"{' '.join(['stocks', 'bonds', 'market', 'trade'] * (1 + i))} doc{i}" for i in range(10)]
    path = tmp_path / "docs.zip"
    path.write_bytes(zip_of(docs))
    code = cli.main(["fit", str(path), "--k", "4", "--components", "2", "--out",
                     str(tmp_path / "out"), "--quiet", "--min-df", "2"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "read docs.zip: 10 documents x 8 words" in err and "raw text: 10 documents" in err
    topics = (tmp_path / "out" / "topics.csv").read_text()
    found = Counter(line.split(",")[2] for line in topics.splitlines()[1:])
    assert set(found) == {"cat", "dog", "pet", "fur", "stocks", "bonds", "market", "trade"}
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary is not None


def test_cli_refuses_text_options_where_they_do_not_apply(tmp_path, capsys):
    path = tmp_path / "d.csv"
    path.write_text("a,b\n1,2\n3,4\n5,7\n")
    code = cli.main(["fit", str(path), "--k", "1", "--out", str(tmp_path / "o"), "--quiet",
                     "--stop-words", "none"])
    err = capsys.readouterr().err
    assert code == 1 and "--stop-words applies only to raw text" in err, err


def test_prune_notes_name_each_reason():
    X = sp.csr_matrix(np.array([[1, 0, 2, 1], [3, 0, 1, 0], [1, 0, 0, 0]], float))
    p = prune_vocabulary(X, ["the", "ghost", "moon", "sun"], stop_words=frozenset({"the"}),
                         min_df=1, max_df=0.5)
    assert p.words == ["sun"]
    assert p.notes == ["1 stop word(s) removed (e.g. the)", "1 word(s) in no document removed",
                       "1 word(s) in more than 1.5 of the 3 documents removed (max_df=0.5; e.g. moon)"]
    p = prune_vocabulary(X, ["the", "ghost", "moon", "sun"], min_df=2)
    assert p.words == ["the", "moon"] and p.notes == ["2 word(s) in fewer than 2 document(s) removed "
                                                      "(min_df=2)"]


# ------------------------------------------------- issue 41: numbers are not words; the cell note
def test_numbers_are_not_words_unless_asked():
    docs = ["Released in 1999 and again in 2004, the b2b tool", "In 1999 the 3d b2b tool shipped",
            "2004 tool notes: 3d b2b", "page 12 of 40, tool 1999"]
    out = load_file(zip_of(docs), filename="n.zip", min_df=1)
    assert not {"1999", "2004", "12", "40"} & set(out.feature_names)
    assert {"b2b", "3d", "tool"} <= set(out.feature_names)  # letters and digits together are words
    assert "numbers (digits only) left out" in out.notes[0]
    both = load_file(zip_of(docs), filename="n.zip", min_df=1, numbers=True)
    want, words = reference(docs, numbers=True, stop_words="english", min_df=1)
    assert both.feature_names == words and {"1999", "2004", "12"} <= set(words)
    np.testing.assert_array_equal(both.X.toarray(), want)
    assert "numbers (digits only) left out" not in both.notes[0]
    with pytest.raises(DataFormatError, match=r"hold no word .*\(numbers=True counts the numbers\)"):
        load_file(zip_of(["1999 2004", "12 40"]), filename="only.zip", min_df=1)
    with pytest.raises(InputError, match=r"`numbers` must be True \(count numbers as words\) or False; got 'yes'"):
        load_file(zip_of(docs), filename="n.zip", numbers="yes")


def test_text_column_note_gives_words_and_characters_of_the_cells():
    """The note's median counts the words as they are counted (not characters), by brute force."""
    rng = np.random.default_rng(5)
    vocab = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "kappa", "lambda"]
    texts = [" ".join(rng.choice(vocab, size=int(rng.integers(30, 90)))) + f", row {i}." for i in range(11)]
    out = load_file(csv_of(texts), filename="cells.csv")
    n_words = np.median([len(re.findall(r"(?u)\b\w\w+\b", t)) for t in texts])
    n_chars = np.median([len(t) for t in texts])
    assert f"(median {n_words:,g} words and {n_chars:,g} characters per cell, nearly all distinct)" \
        in out.notes[0], out.notes[0]
    assert n_chars > 3 * n_words  # the two figures cannot be confused here
