"""The UCI Bag-of-Words corpora: a local or downloaded copy read as sparse counts
(:func:`_read_corpus`, behind :func:`load_corpus`) and the loader of the text
entries of the registry.
"""

from __future__ import annotations

from .._common.said import Remedy
from ..io.bow import TextData, read_uci_bow
from . import download as _dl  # the module: `download` is an argument here
from .checksums import _corpus_checksum, _verify_corpus
from .local import _find_bow, cache_dir, data_dirs
from .types import DatasetInfo, DatasetUnavailableError, Loaded


def _read_corpus(info: DatasetInfo, data_dir, download: bool):
    """The corpus of a text entry as :class:`nspca_core.io.bow.TextData` (see :func:`load_corpus`)."""

    notes = []
    found = _find_bow(info.name, data_dir)
    if found is None:
        if not download:
            searched = ", ".join(str(d) for d in data_dirs(data_dir) + [cache_dir() / "raw"])
            put = f"put docword.{info.name}.txt.gz and vocab.{info.name}.txt in NSPCA_DATA_DIR"
            raise DatasetUnavailableError(
                f"corpus {info.name!r} is not available locally: {put} (or pass data_dir=...); searched "
                f"{searched}; or call load_dataset({info.name!r}, download=True) to fetch them "
                f"from {_dl._BOW_URL}",
                plain=f"corpus {info.name!r} is not available locally: {put}; searched {searched}",
                remedy=Remedy("download", verb="pass", spelled="True", lead="or",
                              purpose=f"to fetch them from {_dl._BOW_URL}"))
        found = _dl._download_bow(info, data_dir)
        notes.append(f"downloaded from {_dl._BOW_URL} and cached in {found[0].parent}")
    doc, vocab = found
    text = read_uci_bow(doc, vocab)
    if vocab is None:
        notes.append(f"vocab.{info.name}.txt not found next to {doc.name}: words are numbered")
    digest = _corpus_checksum(text.X, text.vocabulary)
    notes.append(_verify_corpus(info.name, digest, doc, vocab is not None))
    notes.insert(0, f"loaded {doc.name} from {doc.parent}")
    return TextData(X=text.X, vocabulary=text.vocabulary, notes=notes + text.notes,
                    source_name=doc.name, format=text.format, extra={"sha256": digest})


def _load_text(info: DatasetInfo, *, data_dir, download: bool, seed, params) -> Loaded:
    """Loader of a text entry: the raw counts (CSR) and the words."""
    corpus = _read_corpus(info, data_dir, download)
    return Loaded(X=corpus.X, feature_names=corpus.vocabulary, notes=corpus.notes)


def _corpus_available(info: DatasetInfo, data_dir) -> bool:
    """Whether a docword file of the corpus is in :func:`data_dirs` or ``<cache>/raw``."""
    return _find_bow(info.name, data_dir) is not None
