"""What the dataset functions return or raise: :class:`DatasetInfo` (a registry
entry), :class:`Loaded` (what an entry's loader returns), :class:`Dataset`,
:class:`Preprocessed` and the two errors.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .._common.validation import InputError


class DatasetUnavailableError(InputError):
    """A real dataset is neither present locally nor downloadable right now."""


class ChecksumError(InputError):
    """The parsed arrays of a real dataset do not match the recorded checksum."""


@dataclass(frozen=True)
class DatasetInfo:
    """What a registry entry is and how it is loaded (no data).

    An entry carries everything :func:`load_dataset` needs, so adding a dataset
    is adding one entry: the description, its ``loader``, and for a real set its
    local file name, download source, parser and checksummed arrays.

    Attributes
    ----------
    name, title, description : str
    kind : {"embedded", "synthetic", "real", "text"}
    shape : tuple (samples, features) -- for synthetic sets, at default parameters
    source : str -- where the data comes from (web page or generator)
    citation : str
    paper_preprocessing : str -- what the seed papers did before PCA
    image_shape : tuple or None -- (height, width) when a sample is an image
    has_labels : bool
    filename : str or None -- local copy name for real sets (``<filename>`` in the data dir)
    url : str or None -- the file the downloader fetches
    params : tuple of (name, default) -- parameters ``load_dataset`` accepts
    loader : callable or None
        ``loader(info, *, data_dir, download, seed, params) -> Loaded``: the raw
        matrix and what goes with it (``params`` already merged with the defaults).
    preprocessor : callable or None
        ``preprocessor(preprocessing) -> apply`` validates the ``preprocessing``
        argument of ``load_dataset`` (before anything is loaded) and returns
        ``apply(X) -> Preprocessed``; None means the shared dense steps of
        :func:`preprocess` (text corpora weight their counts instead).
    available : callable or None
        ``available(info, data_dir) -> bool``: whether it loads without a
        download; None means always (embedded and generated sets).
    raw_filename : str or None -- name of the downloaded original in ``<cache>/raw``
    parser : callable or None -- ``parser(path) -> dict`` of arrays from the original
    checked_arrays : tuple of str -- arrays covered by the recorded checksum
    """

    name: str
    title: str
    description: str
    kind: str
    shape: tuple
    source: str
    citation: str
    paper_preprocessing: str
    image_shape: tuple | None
    has_labels: bool
    filename: str | None = None
    url: str | None = None
    params: tuple = ()
    loader: Callable | None = field(default=None, repr=False, compare=False)
    preprocessor: Callable | None = field(default=None, repr=False, compare=False)
    available: Callable | None = field(default=None, repr=False, compare=False)
    raw_filename: str | None = None
    parser: Callable | None = field(default=None, repr=False, compare=False)
    checked_arrays: tuple = ()


@dataclass(frozen=True, eq=False)
class Loaded:
    """What a registry entry's ``loader`` returns: the data before preprocessing.

    ``X`` the raw matrix (samples x features; sparse for text corpora),
    ``feature_names`` one per column, ``labels`` per sample or None,
    ``image_shape`` (height, width) or None for the entry's own,
    ``ground_truth`` for generated sets, ``notes`` sentences for the user.
    """

    X: object
    feature_names: list
    labels: np.ndarray | None = None
    image_shape: tuple | None = None
    ground_truth: dict | None = None
    notes: list = field(default_factory=list)


@dataclass(frozen=True, eq=False)
class Preprocessed:
    """Result of :func:`preprocess`.

    ``X`` the transformed matrix; ``steps`` the steps applied, in order;
    ``mean`` the per-feature mean subtracted (None if not centered); ``scale`` the
    per-feature divisor (None if not standardized; 1 for constant columns);
    ``notes`` sentences saying what was done.
    """

    X: np.ndarray
    steps: tuple
    mean: np.ndarray | None
    scale: np.ndarray | None
    notes: list


@dataclass(frozen=True, eq=False)
class Dataset:
    """A loaded registry entry.

    ``X`` is the preprocessed float64 matrix (samples x features), ``X_raw`` the
    matrix before preprocessing, ``preprocessing`` the applied steps,
    ``ground_truth`` a dict for synthetic sets (None otherwise), ``notes``
    sentences for the user (preprocessing, fallbacks).  ``mean``/``scale`` are the
    preprocessing's (None when not applied), so ``X_raw`` ~ ``X * scale + mean``.
    """

    name: str
    X: np.ndarray
    X_raw: np.ndarray
    feature_names: list
    labels: np.ndarray | None
    image_shape: tuple | None
    preprocessing: tuple
    info: DatasetInfo
    ground_truth: dict | None
    notes: list
    mean: np.ndarray | None = None
    scale: np.ndarray | None = None
    params: dict = field(default_factory=dict)
