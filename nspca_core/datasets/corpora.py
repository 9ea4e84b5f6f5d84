"""The UCI Bag-of-Words corpora as sparse counts (:func:`load_corpus`) and as
weighted registry datasets.
"""

from __future__ import annotations

import numpy as np

from .._validation import InputError
from . import download as _dl  # the module: `download` is an argument here
from .checksums import _corpus_checksum, _verify_corpus
from .local import _find_bow, cache_dir, data_dirs
from .preprocessing import _text_weighting_from
from .registry import _REGISTRY, get_info
from .types import Dataset, DatasetInfo, DatasetUnavailableError


def load_corpus(name: str, *, data_dir=None, download: bool = False):
    """A UCI Bag-of-Words corpus as :class:`nspca_core.text.TextData` (raw counts, CSR).

    Looks for ``docword.NAME.txt.gz`` (or ``.txt``) and ``vocab.NAME.txt`` in
    :func:`data_dirs` and ``<cache>/raw``; with ``download=True`` fetches both
    from the UCI repository into ``<cache>/raw``.  The parsed matrix and words
    are checked against ``nspca_core/data/checksums.json`` when a checksum is recorded
    there; otherwise a note gives the SHA-256 to record.

    Memory: the CSR counts (12 bytes per nonzero; NYTimes 69.7 M nonzeros,
    about 0.85 GB) plus the parser's temporary arrays (about twice that).

    Raises
    ------
    DatasetUnavailableError
        Not found locally and ``download`` is False, or the download failed.
    ChecksumError
        A recorded checksum that does not match.
    """
    from ..text import read_uci_bow

    info = get_info(name)
    if info.kind != "text":
        names = [i.name for i in _REGISTRY.values() if i.kind == "text"]
        raise InputError(f"`name` must be a text corpus, one of {names}; got {name!r}")
    if not isinstance(download, bool):
        raise InputError(f"`download` must be True or False; got {download!r}")
    notes = []
    found = _find_bow(info.name, data_dir)
    if found is None:
        if not download:
            searched = ", ".join(str(d) for d in data_dirs(data_dir) + [cache_dir() / "raw"])
            raise DatasetUnavailableError(
                f"corpus {info.name!r} is not available locally: put docword.{info.name}.txt.gz "
                f"and vocab.{info.name}.txt in NSPCA_DATA_DIR (or pass data_dir=...); searched "
                f"{searched}; or call load_dataset({info.name!r}, download=True) to fetch them "
                f"from {_dl._BOW_URL}")
        found = _dl._download_bow(info, data_dir)
        notes.append(f"downloaded from {_dl._BOW_URL} and cached in {found[0].parent}")
    doc, vocab = found
    text = read_uci_bow(doc, vocab)
    if vocab is None:
        notes.append(f"vocab.{info.name}.txt not found next to {doc.name}: words are numbered")
    digest = _corpus_checksum(text.X, text.vocabulary)
    notes.append(_verify_corpus(info.name, digest, doc, vocab is not None))
    notes.insert(0, f"loaded {doc.name} from {doc.parent}")
    from ..text import TextData
    return TextData(X=text.X, vocabulary=text.vocabulary, notes=notes + text.notes,
                    source_name=doc.name, format=text.format, extra={"sha256": digest})


def _load_text_dataset(info: DatasetInfo, preprocessing, data_dir, download) -> "Dataset":
    from ..text import text_weighting

    weighting, center = _text_weighting_from(preprocessing)
    corpus = load_corpus(info.name, data_dir=data_dir, download=download)
    w = text_weighting(corpus.X, weighting=weighting, center=center)
    m = w.X.shape[0]
    mean = np.asarray(w.X.sum(axis=0)).ravel() / m if center else None
    steps = (weighting,) + (("center",) if center else ())
    return Dataset(name=info.name, X=w.X, X_raw=corpus.X, feature_names=corpus.vocabulary,
                   labels=None, image_shape=None, preprocessing=steps, info=info,
                   ground_truth=None, notes=corpus.notes + w.notes, mean=mean, scale=None,
                   params={})
