""":func:`load_dataset`: a registry entry loaded by its own ``loader`` (embedded,
generated, a verified local copy or download, or a text corpus) and preprocessed
by its ``preprocessor``; :func:`load_corpus`: a text entry's raw counts.
"""

from __future__ import annotations

from .._common.validation import InputError
from .corpora import _read_corpus
from .preprocessing import _dense_preprocessor
from .registry import _REGISTRY, get_info
from .types import Dataset, DatasetInfo
from .._common.params import SEED_NOT_GIVEN, renamed_seed


def _check_params(info: DatasetInfo, params: dict) -> dict:
    allowed = dict(info.params)
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        what = f"parameters {sorted(allowed)}" if allowed else "no parameters"
        raise InputError(f"dataset {info.name!r} takes {what}; got unknown {unknown}")
    return {**allowed, **params}


def load_dataset(name: str, *, preprocessing="center", data_dir=None, download: bool = False,
                 random_state=0, seed=SEED_NOT_GIVEN, **params) -> Dataset:
    """Load a registry entry, preprocessed.

    Parameters
    ----------
    name : str
        One of ``[info.name for info in list_datasets()]``.
    preprocessing : str, tuple of str or None
        Steps for :func:`preprocess` (``"center"`` default, ``"standardize"``,
        ``"log1p"``, a tuple such as ``("log1p", "center")``, or ``"none"``/None).
    data_dir : path, optional
        Folder with the real sets' ``.npz`` copies (default: env ``NSPCA_DATA_DIR``);
        the cache is searched after it.
    download : bool
        Fetch a missing real set from its public source into the cache.
    random_state : int, None or numpy Generator
        For the synthetic generators (ignored by the others).
    **params
        Generator parameters of synthetic entries (see ``info.params``).

    Returns
    -------
    Dataset
        For a text corpus (kind ``"text"``) ``X`` is the weighted sparse CSR
        matrix, *not* centered: ``preprocessing`` is ``(weighting,)`` plus
        ``"center"`` when the covariance is to be centered implicitly
        (``as_sparse_cov(ds.X, center="center" in ds.preprocessing)``), and
        ``mean`` holds the column means.  Text preprocessing: ``"center"``
        (default: raw counts, centered, as the paper), ``"counts"``, ``"tfidf"``,
        ``"log1p"``, ``"none"`` or a tuple such as ``("tfidf", "center")``.

    Raises
    ------
    InputError
        Unknown name, parameter or preprocessing step.
    DatasetUnavailableError
        A real set absent locally (and not downloadable).
    ChecksumError
        A local copy or download whose parsed arrays differ from the record.
    """
    seed = renamed_seed(random_state, seed)  # `seed=`: deprecated name
    info = get_info(name)
    if not isinstance(download, bool):
        raise InputError(f"`download` must be True or False; got {download!r}")
    apply = (info.preprocessor or _dense_preprocessor)(preprocessing)
    params = _check_params(info, params)
    raw = info.loader(info, data_dir=data_dir, download=download, seed=seed, params=params)
    pre = apply(raw.X)
    image_shape = raw.image_shape if raw.image_shape is not None else info.image_shape
    return Dataset(name=info.name, X=pre.X, X_raw=raw.X, feature_names=raw.feature_names,
                   labels=raw.labels, image_shape=image_shape, preprocessing=pre.steps, info=info,
                   ground_truth=raw.ground_truth, notes=list(raw.notes) + list(pre.notes),
                   mean=pre.mean, scale=pre.scale, params=params)


def load_corpus(name: str, *, data_dir=None, download: bool = False):
    """A UCI Bag-of-Words corpus as :class:`nspca_core.io.bow.TextData` (raw counts, CSR).

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
    info = get_info(name)
    if info.kind != "text":
        names = [i.name for i in _REGISTRY.values() if i.kind == "text"]
        raise InputError(f"`name` must be a text corpus, one of {names}; got {name!r}")
    if not isinstance(download, bool):
        raise InputError(f"`download` must be True or False; got {download!r}")
    return _read_corpus(info, data_dir, download)
