""":func:`load_dataset`: a registry entry loaded (embedded, generated, a verified
local copy or download, or a text corpus) and preprocessed.
"""

from __future__ import annotations

import numpy as np

from .. import synthetic
from .._validation import InputError
from .checksums import _verify
from .corpora import _load_text_dataset
from .download import _download
from .local import _find_local, _read_npz, data_dirs
from .preprocessing import _parse_steps, preprocess
from .registry import get_info
from .types import Dataset, DatasetInfo, DatasetUnavailableError


def _check_params(info: DatasetInfo, params: dict) -> dict:
    allowed = dict(info.params)
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        what = f"parameters {sorted(allowed)}" if allowed else "no parameters"
        raise InputError(f"dataset {info.name!r} takes {what}; got unknown {unknown}")
    return {**allowed, **params}


def _load_real(info: DatasetInfo, data_dir, download: bool):
    notes = []
    path = _find_local(info, data_dir)
    if path is None:
        if not download:
            searched = ", ".join(str(d) for d in data_dirs(data_dir))
            raise DatasetUnavailableError(
                f"dataset {info.name!r} is not available locally: put {info.filename} in "
                f"NSPCA_DATA_DIR (or pass data_dir=...); searched {searched}; or call "
                f"load_dataset({info.name!r}, download=True) to fetch it from {info.url}")
        path = _download(info, data_dir)
        notes.append(f"downloaded from {info.url} and cached at {path}")
    arrays, more = _read_npz(path, info.name)
    notes += more
    _verify(info.name, arrays, str(path))
    notes.insert(0, f"loaded {info.filename} from {path.parent} (checksum verified)")
    if info.name == "cbcl":
        images = arrays["images"]
        X = images.reshape(images.shape[0], -1).astype(np.float64)
        h, w = images.shape[1:]
        names = [f"pixel_{r}_{c}" for r in range(h) for c in range(w)]
        return X, names, None, (h, w), notes
    X = np.asarray(arrays["X"], dtype=np.float64)
    key = "genes" if info.name == "mll" else "bands"
    if key in arrays and len(arrays[key]) == X.shape[1]:
        names = [str(s) for s in arrays[key]]
    else:
        prefix = "probe" if info.name == "mll" else "band"
        names = [f"{prefix}_{j}" for j in range(X.shape[1])]
        notes.append(f"feature names ('{key}') unavailable: using {prefix}_0, {prefix}_1, ...")
    return X, names, np.asarray(arrays["labels"]), None, notes


def load_dataset(name: str, *, preprocessing="center", data_dir=None, download: bool = False,
                 seed=0, **params) -> Dataset:
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
    seed : int, None or numpy Generator
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
    info = get_info(name)
    if not isinstance(download, bool):
        raise InputError(f"`download` must be True or False; got {download!r}")
    if info.kind == "text":
        _check_params(info, params)
        return _load_text_dataset(info, preprocessing, data_dir, download)
    steps = _parse_steps(preprocessing, "preprocessing")
    params = _check_params(info, params)
    notes: list = []
    truth = None
    labels = None
    image_shape = info.image_shape
    if info.kind == "real":
        X, names, labels, image_shape, notes = _load_real(info, data_dir, download)
    elif name == "digits":
        from sklearn.datasets import load_digits  # scikit-learn is a requirement; import lazily
        bunch = load_digits()
        X = np.asarray(bunch.data, dtype=np.float64)
        labels = np.asarray(bunch.target)
        names = [f"pixel_{r}_{c}" for r in range(8) for c in range(8)]
        notes.append("scikit-learn's bundled digits (no download)")
    elif name == "synthetic-planted":
        X, truth = synthetic.planted_sparse(seed=seed, **params)
        names = [f"f{j}" for j in range(X.shape[1])]
    elif name == "synthetic-parts":
        X, truth = synthetic.parts_images(seed=seed, **params)
        names = [f"pixel_{r}_{c}" for r in range(12) for c in range(12)]
    else:  # synthetic-scores
        X, truth = synthetic.nonneg_scores_model(seed=seed, **params)
        names = [f"y{j}" for j in range(X.shape[1])]
        notes.append("ground_truth['X'] holds the sources; the dataset's X is the data Y")
    if info.kind == "synthetic":
        shown = ", ".join(f"{k}={v}" for k, v in params.items())
        seed_text = seed if not isinstance(seed, np.random.Generator) else 'Generator'
        notes.append(f"generated with {shown}, seed={seed_text}")
    pre = preprocess(X, steps=steps)
    return Dataset(name=name, X=pre.X, X_raw=X, feature_names=names, labels=labels,
                   image_shape=image_shape, preprocessing=pre.steps, info=info,
                   ground_truth=truth, notes=notes + pre.notes, mean=pre.mean,
                   scale=pre.scale, params=params)
