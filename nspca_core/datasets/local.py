"""Local copies: where they are looked for (``data_dir``, ``NSPCA_DATA_DIR``, the
cache), whether a set is available, and the ``.npz`` copies read and written
without ever unpickling.
"""

from __future__ import annotations

import os
import tempfile
import zipfile
from pathlib import Path

import numpy as np

from ..io import npy_strings_without_unpickling
from .types import ChecksumError, DatasetInfo


def cache_dir() -> Path:
    """The download cache: env ``NSPCA_CACHE_DIR`` or ``~/.cache/nspca``."""
    env = os.environ.get("NSPCA_CACHE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "nspca"


def data_dirs(data_dir=None) -> list[Path]:
    """Folders searched for local copies, in order: ``data_dir`` (else
    ``NSPCA_DATA_DIR``), then the cache."""
    dirs = []
    if data_dir is not None:
        dirs.append(Path(data_dir).expanduser())
    elif os.environ.get("NSPCA_DATA_DIR"):
        dirs.append(Path(os.environ["NSPCA_DATA_DIR"]).expanduser())
    dirs.append(cache_dir())
    return dirs


def _find_local(info: DatasetInfo, data_dir) -> Path | None:
    for d in data_dirs(data_dir):
        path = d / info.filename
        if path.is_file():
            return path
    return None


def _find_bow(key: str, data_dir) -> tuple[Path, Path | None] | None:
    """(docword, vocab or None) of a local UCI copy in :func:`data_dirs` or ``<cache>/raw``."""
    for d in data_dirs(data_dir) + [cache_dir() / "raw"]:
        for docname in (f"docword.{key}.txt.gz", f"docword.{key}.txt"):
            doc = d / docname
            if doc.is_file():
                vocab = d / f"vocab.{key}.txt"
                return doc, (vocab if vocab.is_file() else None)
    return None


def _npz_str_array_without_pickle(path: Path, member: str) -> np.ndarray | None:
    """A pickled 1-D str array of an ``.npz``, read WITHOUT unpickling (or None)."""
    try:
        with zipfile.ZipFile(path) as zf:
            return npy_strings_without_unpickling(zf.read(member + ".npy"))
    except (OSError, KeyError, zipfile.BadZipFile):
        return None


def _read_npz(path: Path, name: str, required: tuple = ()) -> tuple[dict, list]:
    """Arrays of a local copy of dataset ``name`` (allow_pickle=False) plus notes;
    a ChecksumError when one of the ``required`` arrays is absent."""
    notes = []
    arrays = {}
    with np.load(path, allow_pickle=False) as z:
        for key in z.files:
            try:
                arrays[key] = z[key]
            except ValueError:
                # object array: never unpickled; string lists are recovered statically
                recovered = _npz_str_array_without_pickle(path, key)
                if recovered is not None:
                    arrays[key] = recovered
                    notes.append(f"{path.name}: '{key}' is stored as a pickled object array; "
                                 "its strings were read without unpickling")
                else:
                    notes.append(f"{path.name}: '{key}' is a pickled object array and was "
                                 "not loaded (pickles are never loaded)")
    missing = [k for k in required if k not in arrays]
    if missing:
        raise ChecksumError(f"{path} lacks array(s) {missing} expected for dataset {name!r}; "
                            f"it holds {sorted(arrays)}")
    return arrays, notes


def _save_npz(path: Path, arrays: dict) -> None:
    """Write a cache copy atomically (no object arrays: strings as unicode)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    clean = {k: (np.asarray(v, dtype=str) if np.asarray(v).dtype == object else np.asarray(v))
             for k, v in arrays.items()}
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".npz.part")
    os.close(fd)
    try:
        with open(tmp, "wb") as f:
            np.savez_compressed(f, **clean)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
