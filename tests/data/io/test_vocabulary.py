"""The compact vocabulary (issue 40: a million distinct words within 4x the text): word keys are
hashes checked against the words' text, so the counts equal CountVectorizer's whatever the hash
(colliding hashes included), the sort equals Python's, and :class:`Words` acts as a list of str."""

from __future__ import annotations

import pickle
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.feature_extraction.text import CountVectorizer

from nspca_core.io import documents
from nspca_core.io.vocabulary import Words, WordCounts, _sorted_order

#: hash functions from the real one to all-colliding ones (keys are a hash's top 38 bits)
HASHES = {"python": hash, "all collide": lambda w: 0, "16 keys": lambda w: (hash(w) & 15) << 40,
          "by length": lambda w: len(w) << 30}

WORDS = ["apple", "Apple", "été", "über", "ab", "abc", "abcdefgh", "abcdefghi", "abcdefghij",
         "日本語", "日本", "слово", "слова", "x1", "42", "the", "and", "zz" * 20, "zz" * 21]


def _brute(docs, stop, min_df):
    """documents x words counts by Counter, the words sorted, CountVectorizer's rules."""
    per_doc = [Counter(documents._TOKEN.findall(d.lower())) for d in docs]
    df = Counter(w for c in per_doc for w in c)
    kept = sorted(w for w, n in df.items() if n >= min_df and not (stop and w in stop))
    return np.array([[c[w] for w in kept] for c in per_doc], dtype=float).reshape(len(docs), len(kept)), kept


@pytest.mark.parametrize("name", sorted(HASHES))
@settings(max_examples=40, deadline=None)
@given(docs=st.lists(st.lists(st.sampled_from(WORDS), min_size=0, max_size=15).map(" ".join),
                     min_size=1, max_size=8),
       min_df=st.integers(1, 3), stop=st.sampled_from([None, frozenset({"the", "and", "ab"})]))
def test_property_counts_equal_brute_force_whatever_the_hash(name, docs, min_df, stop):
    X, words, info = documents.count_words(iter(docs), numbers=True, stop_words=stop, min_df=min_df,
                                           hash_fn=HASHES[name])
    want, kept = _brute(docs, stop, min_df)
    assert list(words) == kept
    assert words == kept
    np.testing.assert_array_equal(X.toarray(), want)
    assert X.has_sorted_indices
    all_words = {w for d in docs for w in documents._TOKEN.findall(d.lower())}
    assert info["distinct_words"] == len(all_words)
    assert info["n_stop"] == len(all_words & (stop or set()))


@pytest.mark.parametrize("name", sorted(HASHES))
def test_equals_count_vectorizer_with_collisions_across_batches(name, monkeypatch):
    """Words repeat across many batches (a batch of 7 pairs here), colliding or not."""
    from nspca_core.io import vocabulary

    monkeypatch.setattr(vocabulary, "_BATCH", 7)
    rng = np.random.default_rng(0)
    docs = [" ".join(rng.choice(WORDS, size=rng.integers(1, 30))) for _ in range(60)]
    X, words, _ = documents.count_words(iter(docs), numbers=True, stop_words=None, min_df=2, hash_fn=HASHES[name])
    cv = CountVectorizer(lowercase=True, min_df=2)
    want = cv.fit_transform(docs)
    assert list(words) == list(cv.get_feature_names_out())
    np.testing.assert_array_equal(X.toarray(), want.toarray())


def test_counts_above_255_are_exact():
    docs = ["ab " * 300 + "cd", "ab cd " * 256 + "ef " * 1000, "cd"]
    X, words, _ = documents.count_words(iter(docs), numbers=True, min_df=1)
    assert list(words) == ["ab", "cd", "ef"]
    np.testing.assert_array_equal(X.toarray(), [[300, 1, 0], [256, 256, 1000], [0, 1, 0]])


def test_words_dropped_by_min_df_do_not_shift_large_counts():
    docs = ["zz " * 400 + "solo", "zz yy " * 300, "yy"]
    X, words, _ = documents.count_words(iter(docs), numbers=True, min_df=2)
    assert list(words) == ["yy", "zz"]
    np.testing.assert_array_equal(X.toarray(), [[0, 400], [300, 300], [1, 0]])


@settings(max_examples=60, deadline=None)
@given(st.sets(st.text(st.sampled_from("ab\u00e9\u65e5\U0001f600z"), min_size=1, max_size=40),
               min_size=1, max_size=60),
       st.integers(0, 3))
def test_property_sorted_order_is_pythons(words, pad):
    """Words sharing long prefixes (chunks of 8 bytes tie), multibyte UTF-8, a common prefix."""
    words = ["p" * (8 * pad) + w for w in words]
    table = WordCounts()
    table.add(dict.fromkeys(words, 1))
    table._flush()
    buf = np.frombuffer(table._buf, dtype=np.uint8)
    ends = np.frombuffer(table._ends, dtype=np.uint32)
    ids = np.arange(len(words), dtype=np.int32)
    got = [table.word(int(j)) for j in _sorted_order(buf, ends, ids)]
    assert got == sorted(words)


def test_words_act_as_a_list_of_str():
    names = ["alpha", "été", "日本語", "", "z"]
    w = Words.from_list(names)
    assert len(w) == 5 and list(w) == names and w == names and w == tuple(names)
    assert w[0] == "alpha" and w[-1] == "z" and w[np.int64(2)] == "日本語" and w[3] == ""
    assert w[1:3] == ["été", "日本語"] and w[::-2] == names[::-2]
    assert w + ["x"] == names + ["x"] and ["x"] + w == ["x"] + names
    assert pickle.loads(pickle.dumps(w)) == names
    assert np.asarray(w).tolist() == names and np.asarray(w, dtype=object).tolist() == names
    assert "été" in w and w.index("z") == 4
    with pytest.raises(IndexError, match="out of range"):
        w[5]
    with pytest.raises(TypeError, match="integers or slices"):
        w[1.5]
    assert w != names[:-1]
    assert "5 words" in repr(w)


def test_a_zip_of_documents_gives_words_that_act_as_a_list(tmp_path):
    import io
    import zipfile

    from nspca_core.io import load_file

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("a.txt", "gamma beta alpha")
        zf.writestr("b.txt", "alpha beta delta")
    out = load_file(buf.getvalue(), filename="docs.zip", min_df=1, stop_words=None)
    assert isinstance(out.feature_names, Words)
    assert list(out.feature_names) == ["alpha", "beta", "delta", "gamma"]
    assert out.feature_names[:2] == ["alpha", "beta"]
