"""What the dataset functions return or raise: :class:`DatasetInfo` (a registry
entry), :class:`Dataset`, :class:`Preprocessed` and the two errors.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._validation import InputError


class DatasetUnavailableError(InputError):
    """A real dataset is neither present locally nor downloadable right now."""


class ChecksumError(InputError):
    """The parsed arrays of a real dataset do not match the recorded checksum."""


@dataclass(frozen=True)
class DatasetInfo:
    """What a registry entry is (no data).

    Attributes
    ----------
    name, title, description : str
    kind : {"embedded", "synthetic", "real"}
    shape : tuple (samples, features) -- for synthetic sets, at default parameters
    source : str -- where the data comes from (web page or generator)
    citation : str
    paper_preprocessing : str -- what the seed papers did before PCA
    image_shape : tuple or None -- (height, width) when a sample is an image
    has_labels : bool
    filename : str or None -- local copy name for real sets (``<filename>`` in the data dir)
    url : str or None -- the file the downloader fetches
    params : tuple of (name, default) -- parameters ``load_dataset`` accepts
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
