"""UTF-16 without a byte-order mark and with little ASCII (issue 40, item 9 continued): documents
written by Python's codecs in utf-16-le/-be, in Japanese, Russian and English, are read as the
text they are, in a .zip of documents and as a CSV; other bytes are not mistaken for UTF-16, and
what cannot be told apart is refused by name, never read as garbage."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.feature_extraction.text import CountVectorizer

from nspca_core.io import load_file
from nspca_core.io.documents import decode_document
from nspca_core.io.loaded import DataFormatError
from nspca_core.io.sniff import _decode, utf16_by_content
from tests.data.io.round4_files import zip_of

SENTENCES = {
    "ja": ["日本語の文書です。東京都に住んでいます。今日は天気がいいので散歩に行きました。",
           "桜の花が咲いています。電車で会社に行って、先生と経済の問題について話しました。",
           "私は学生です。毎日図書館で勉強しています。"],
    "ru": ["Это русский текст о погоде. Сегодня хорошая погода, и мы пошли гулять в парк.",
           "Привет мир", "Москва столица России, в ней живут миллионы людей."],
    "en": ["This is an English document about the weather, written to test the reader.",
           "Cats and dogs", "The quick brown fox jumps over the lazy dog."],
}
WORDS = {
    "ja": ("日本 東京 桜 散歩 天気 今日 文書 私 学生 先生 電車 会社 時間 問題 世界 経済 "
           "ひらがな カタカナ です ます").split(),
    "ru": "это русский текст погода сегодня хорошая мы пошли гулять парк москва столица люди".split(),
    "en": "the cat sat on mat and dog weather reader document english quick brown fox".split(),
}


@pytest.mark.parametrize("lang", sorted(SENTENCES))
@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_sentences_without_a_mark_decode_to_their_text(lang, encoding):
    for text in SENTENCES[lang]:
        raw = text.encode(encoding)
        assert not raw.startswith((b"\xff\xfe", b"\xfe\xff"))
        got, how = decode_document(raw, "d.txt")
        assert got == text
        assert how.startswith("UTF-16")


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_a_zip_of_japanese_russian_english_documents_equals_count_vectorizer(encoding):
    texts = [t for lang in sorted(SENTENCES) for t in SENTENCES[lang]]
    data = zip_of({f"d{i}.txt": t.encode(encoding) for i, t in enumerate(texts)})
    out = load_file(data, filename="docs.zip", min_df=1, stop_words=None)
    cv = CountVectorizer(lowercase=True)
    want = cv.fit_transform(texts)
    assert list(out.feature_names) == list(cv.get_feature_names_out())
    np.testing.assert_array_equal(out.X.toarray(), want.toarray())
    note = next(n for n in out.notes if "not in UTF-8" in n)
    assert note.startswith(f"{len(texts)} document(s) not in UTF-8: read ")
    assert "UTF-8" not in note.split(": read ")[1] and "Latin" not in note


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lang=st.sampled_from(sorted(WORDS)), encoding=st.sampled_from(["utf-16-le", "utf-16-be"]),
       words=st.lists(st.integers(0, 10_000), min_size=1, max_size=40))
def test_property_utf16_without_a_mark_is_read_right_or_refused_by_name(lang, encoding, words):
    """Never a wrong reading: the text itself, or (a short, repetitive document whose byte order
    cannot be told) a refusal that says so."""
    vocab = WORDS[lang]
    text = " ".join(vocab[w % len(vocab)] for w in words)
    try:
        got, how = decode_document(text.encode(encoding), "d.txt")
    except DataFormatError as exc:
        assert "not UTF-16 text in either byte order" in str(exc)
        return
    if len(text) >= 6 or how.startswith("UTF-16"):
        assert got == text, how


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.lists(st.sampled_from("le café est très bon à Paris où les élèves étudient la "
                                     "société française même en été garçon naïve".split()),
                     min_size=1, max_size=40).map(" ".join))
def test_property_latin1_text_is_never_read_as_utf16(text):
    raw = text.encode("latin-1")
    assert utf16_by_content(raw, nul=False) is None
    got, how = decode_document(raw, "d.txt")
    assert got == text and how.startswith(("UTF-8", "Latin-1"))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(words=st.lists(st.sampled_from(WORDS["ja"]), min_size=2, max_size=30))
def test_property_shift_jis_japanese_is_never_read_as_utf16(words):
    for sep in ("", " ", "、"):
        text = sep.join(words)
        got, how = decode_document(text.encode("shift_jis"), "d.txt")
        assert got == text and how.startswith("Shift-JIS"), how


def test_binary_bytes_with_nuls_are_refused_by_name():
    rng = np.random.default_rng(0)
    for _ in range(20):
        raw = rng.integers(0, 256, 2000, dtype=np.uint8).tobytes()
        with pytest.raises(DataFormatError, match="binary content .* not UTF-16 text in either byte order"):
            decode_document(raw, "d.txt")


def test_a_russian_csv_in_utf16_without_a_mark_is_read():
    text = "город,население,площадь\nМосква,13010112,2561\nСанкт-Петербург,5601911,1439\nКазань,1308660,614\n"
    for encoding in ("utf-16-le", "utf-16-be"):
        notes: list = []
        assert _decode(text.encode(encoding), "t.csv", notes) == text
        assert any("UTF-16" in n for n in notes)
    with pytest.raises(DataFormatError, match=r"binary content in a text file \(NUL bytes that are "
                                              r"not UTF-16 text in either byte order\)"):
        _decode(np.random.default_rng(1).integers(0, 256, 1200, dtype=np.uint8).tobytes(), "t.csv", [])
