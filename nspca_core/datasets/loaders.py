"""The loaders registry entries carry (embedded, generated and real sets; the text
corpora's is in :mod:`.corpora`): each is called as
``loader(info, *, data_dir, download, seed, params)`` and returns a
:class:`Loaded`.  Per-set details (a generator, how a copy's arrays become a
matrix) are bound into the entry with :func:`functools.partial`, never looked up
by name here.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .._common.said import Remedy
from .checksums import _verify
from .download import _download
from .local import _find_local, _read_npz, data_dirs
from ..result import seed_param
from .types import DatasetInfo, DatasetUnavailableError, Loaded


def _pixel_names(h: int, w: int) -> list[str]:
    """``pixel_<row>_<col>`` in row-major order."""
    return [f"pixel_{r}_{c}" for r in range(h) for c in range(w)]


def _load_digits(info: DatasetInfo, *, data_dir, download: bool, seed, params) -> Loaded:
    """scikit-learn's bundled 8x8 digits (no download)."""
    from sklearn.datasets import load_digits  # scikit-learn is a requirement; import lazily
    bunch = load_digits()
    h, w = info.image_shape
    return Loaded(X=np.asarray(bunch.data, dtype=np.float64), feature_names=_pixel_names(h, w),
                  labels=np.asarray(bunch.target),
                  notes=["scikit-learn's bundled digits (no download)"])


def _load_synthetic(info: DatasetInfo, *, data_dir, download: bool, seed, params, generate,
                    prefix: str = "f", note: str | None = None) -> Loaded:
    """A set drawn by ``generate(seed=seed, **params) -> (X, truth)``.

    Features are named ``<prefix><j>``, or ``pixel_<r>_<c>`` when the entry has an
    image shape; ``note`` (if any) precedes the note of the parameters used.
    """
    X, truth = generate(seed=seed, **params)
    names = (_pixel_names(*info.image_shape) if info.image_shape is not None
             else [f"{prefix}{j}" for j in range(X.shape[1])])
    shown = ", ".join(f"{k}={v}" for k, v in params.items())
    seed_text = seed_param(seed)
    notes = ([note] if note else []) + [f"generated with {shown}, seed={seed_text}"]
    return Loaded(X=X, feature_names=names, ground_truth=truth, notes=notes)


def _load_real(info: DatasetInfo, *, data_dir, download: bool, seed, params, to_data) -> Loaded:
    """A real set: its verified local copy ``info.filename`` (else, with ``download``,
    the original fetched, parsed and cached), turned into data by ``to_data(arrays)``."""
    notes = []
    path = _find_local(info, data_dir)
    if path is None:
        if not download:
            searched = ", ".join(str(d) for d in data_dirs(data_dir))
            put = f"put {info.filename} in NSPCA_DATA_DIR"
            raise DatasetUnavailableError(
                f"dataset {info.name!r} is not available locally: {put} (or pass data_dir=...); searched "
                f"{searched}; or call load_dataset({info.name!r}, download=True) to fetch it from {info.url}",
                plain=f"dataset {info.name!r} is not available locally: {put}; searched {searched}",
                remedy=Remedy("download", verb="pass", spelled="True", lead="or",
                              purpose=f"to fetch it from {info.url}"))
        path = _download(info, data_dir)
        notes.append(f"downloaded from {info.url} and cached at {path}")
    arrays, more = _read_npz(path, info.name, info.checked_arrays)
    notes += more
    _verify(info, arrays, str(path))
    notes.insert(0, f"loaded {info.filename} from {path.parent} (checksum verified)")
    data = to_data(arrays)
    return replace(data, notes=notes + data.notes)


def _real_available(info: DatasetInfo, data_dir) -> bool:
    """Whether the ``.npz`` copy of a real set is in one of :func:`data_dirs`."""
    return _find_local(info, data_dir) is not None


def _images_data(arrays: dict) -> Loaded:
    """``images`` (m, h, w) -> one flattened image per row, pixels as features."""
    images = arrays["images"]
    X = images.reshape(images.shape[0], -1).astype(np.float64)
    h, w = images.shape[1:]
    return Loaded(X=X, feature_names=_pixel_names(h, w), image_shape=(h, w))


def _table_data(arrays: dict, *, names_key: str, prefix: str) -> Loaded:
    """``X`` and ``labels``; features named by ``arrays[names_key]`` when it fits,
    else ``<prefix>_<j>`` with a note."""
    X = np.asarray(arrays["X"], dtype=np.float64)
    notes = []
    if names_key in arrays and len(arrays[names_key]) == X.shape[1]:
        names = [str(s) for s in arrays[names_key]]
    else:
        names = [f"{prefix}_{j}" for j in range(X.shape[1])]
        notes.append(f"feature names ('{names_key}') unavailable: using {prefix}_0, {prefix}_1, ...")
    return Loaded(X=X, feature_names=names, labels=np.asarray(arrays["labels"]), notes=notes)
