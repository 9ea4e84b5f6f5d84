"""MATLAB ``.mat`` files (v4 to v7.2, numeric arrays only) through ``scipy.io.loadmat``.
"""

from __future__ import annotations


import numpy as np

from .._common.said import Remedy
from .isolated import run_reader
from .loaded import DataFormatError, LoadedData, _finish, _names_for
from .npy import _LABEL_KEYS, _as_matrix
from .source import _read_source


def _mat_check_version(data: bytes, name: str) -> None:
    if b"MATLAB 7.3" in data[:128] or data[512:520] == b"\x89HDF\r\n\x1a\n":
        raise DataFormatError(f"{name}: MATLAB v7.3 (HDF5) .mat files are not supported; in "
                              "MATLAB re-save with save(file, var, '-v7'), or export to .csv/.npy")


# scipy's compiled MAT reader can crash the whole process on a file with one byte changed: it
# runs in a child process (:mod:`nspca_core.io.isolated`), which sends back numeric and
# character arrays and cell arrays of strings; other variables by name, shape and type only.
_CHILD = r"""
import scipy.io
import scipy.sparse

def cellstr(v):
    cells = list(v.ravel())
    if v.dtype == object and cells and all(isinstance(c, np.ndarray) and c.dtype.kind == "U"
                                           and c.size == 1 for c in cells):
        return np.array([str(c.ravel()[0]) for c in cells]).reshape(v.shape)
    return None

try:
    content = scipy.io.loadmat(io.BytesIO(data), squeeze_me=False, chars_as_strings=True)
except NotImplementedError as exc:
    fail("version", str(exc))
except Exception as exc:
    fail("read", f"{type(exc).__name__}: {exc}")
manifest, arrays = [], {}
for key, v in content.items():
    if key.startswith("__"):
        continue
    entry = {"name": key, "shape": list(getattr(v, "shape", ())),
             "dtype": str(getattr(v, "dtype", type(v).__name__)), "kind": "other"}
    if scipy.sparse.issparse(v):  # named as sparse (its dtype and shape alone read like a dense matrix)
        entry["kind"] = "sparse"
        entry["nnz"] = int(v.nnz)
    elif isinstance(v, np.ndarray) and v.dtype.names is None and v.dtype.kind in "biufU":
        entry["kind"] = "array"
        arrays[f"v{len(manifest)}"] = v
    elif isinstance(v, np.ndarray) and (c := cellstr(v)) is not None:
        entry["kind"] = "cellstr"
        arrays[f"v{len(manifest)}"] = c
    manifest.append(entry)
send({"variables": manifest}, arrays)
"""


class _Other:
    """A variable the reader does not pass on (struct, cell of non-strings, ...): its name in
    the listing only."""

    def __init__(self, shape, dtype: str, nnz=None):
        self.shape, self.dtype, self.nnz = tuple(shape), dtype, nnz

    def __str__(self) -> str:
        if self.nnz is None:
            return f"{self.shape} {self.dtype}"
        return f"{self.shape} {self.dtype} sparse, {self.nnz:,} nonzeros"


def _sparse_refusal(name: str, key: str, v: _Other) -> DataFormatError:
    m, n = v.shape
    return DataFormatError(f"{name}: variable {key!r} is a sparse matrix ({m} x {n}, {v.nnz:,} nonzeros), "
                           "which is not read from .mat files; save it dense (X = full(X) in MATLAB, "
                           "then save with '-v7'), or as a scipy.sparse .npz (scipy.sparse.save_npz), "
                           "which is read sparse as documents x words")


def _loadmat(data: bytes, name: str) -> dict:
    """The variables of a .mat file: numeric and character arrays, cell arrays of strings
    (object arrays of 1-element strings, as ``scipy.io.loadmat`` gives them), the rest as
    :class:`_Other`.  ``scipy.io.loadmat`` runs in a child process (see ``_CHILD``)."""
    _mat_check_version(data, name)
    header, arrays = run_reader(_CHILD, data, name, ".mat file")
    if "error" in header:
        if header["error"] == "version":
            raise DataFormatError(f"{name}: unsupported .mat version ({header['message']}); re-save "
                                  "with '-v7' or export to .csv/.npy")
        raise DataFormatError(f"{name}: not a readable .mat file ({header['message']})")
    content: dict = {}
    for i, entry in enumerate(header["variables"]):
        v = arrays.get(f"v{i}")
        if entry["kind"] == "array":
            content[entry["name"]] = v
        elif entry["kind"] == "cellstr":
            cells = np.empty(v.shape, dtype=object)
            for j, text in enumerate(v.ravel()):
                cells.flat[j] = np.array([text])
            content[entry["name"]] = cells
        else:
            content[entry["name"]] = _Other(entry["shape"], entry["dtype"], entry.get("nnz"))
    return content


def _mat_numeric(content: dict) -> dict:
    return {k: v for k, v in content.items()
            if not k.startswith("__") and isinstance(v, np.ndarray) and v.dtype.names is None
            and v.dtype.kind in "biuf" and v.ndim in (2, 3) and v.size > 0
            and not (v.ndim == 2 and 1 in v.shape)}


def mat_variables(source, *, filename=None, max_bytes: int = 200_000_000) -> list[dict]:
    """Numeric matrices of a ``.mat`` file for a chooser: ``[{name, shape, dtype}]``."""
    data, name = _read_source(source, filename, max_bytes)
    content = _loadmat(data, name)
    return [{"name": k, "shape": v.shape, "dtype": str(v.dtype)}
            for k, v in _mat_numeric(content).items()]


def _mat_labels(v, m: int):
    """A label vector from a numeric vector, a char matrix or a cell array of strings."""
    if not isinstance(v, np.ndarray):
        return None
    if v.dtype.kind in "biuf" and v.size == m and (v.ndim == 1 or 1 in v.shape):
        return v.ravel()
    if v.dtype.kind == "U" and v.shape[0] == m:
        return np.array([str(s).strip() for s in v.ravel()]) if v.size == m else None
    if v.dtype == object and v.size == m:
        out = []
        for cell in v.ravel():
            if isinstance(cell, np.ndarray) and cell.dtype.kind == "U" and cell.size == 1:
                out.append(str(cell.ravel()[0]))
            else:
                return None
        return np.array(out)
    return None


def _load_mat(data: bytes, name: str, variable, nan_policy: str):
    notes: list = []
    content = _loadmat(data, name)
    numeric = _mat_numeric(content)
    user = {k: v for k, v in content.items() if not k.startswith("__")}
    listing = ", ".join(f"{k} {v}" if isinstance(v, _Other) else
                        f"{k} {getattr(v, 'shape', '')} {getattr(v, 'dtype', type(v).__name__)}"
                        for k, v in user.items()) or "(nothing)"
    sparse = {k: v for k, v in user.items() if isinstance(v, _Other) and v.nnz is not None}
    if variable is not None:
        if variable not in user:
            raise DataFormatError(f"{name}: no variable named {variable!r}; it holds: {listing}")
        if variable in sparse:
            raise _sparse_refusal(name, variable, sparse[variable])
        if variable not in numeric:
            raise DataFormatError(f"{name}: variable {variable!r} is not a numeric 2-D/3-D matrix; "
                                  f"numeric matrices: {list(numeric) or 'none'}")
        chosen = variable
    else:
        if not numeric and sparse:
            key = next(iter(sparse))
            raise _sparse_refusal(name, key, sparse[key])
        if not numeric:
            raise DataFormatError(f"{name}: no numeric matrix in the .mat file (need a numeric "
                                  f"2-D array with >= 2 rows and columns); it holds: {listing}")
        if len(numeric) > 1:
            raise DataFormatError(f"{name}: several numeric matrices ({', '.join(numeric)}); choose "
                                  f"one with variable=... ; it holds: {listing}", argument="variable", value=None,
                                  allowed=tuple(numeric), source=name,
                                  plain=f"several numeric matrices ({', '.join(numeric)}); it holds: {listing}",
                                  remedy=Remedy("variable", tuple(numeric)))
        chosen = next(iter(numeric))
    X, image_shape = _as_matrix(numeric[chosen], f"variable {chosen!r}", name, notes)
    m, n = X.shape
    labels = None
    names = _names_for(n, image_shape)
    for key, v in user.items():
        if key == chosen:
            continue
        if key.lower() in _LABEL_KEYS and labels is None:
            labels = _mat_labels(v, m)
            if labels is not None:
                notes.append(f"variable {key!r} used as labels")
                continue
        notes.append(f"variable {key!r} not used")
    notes.insert(0, f"variable {chosen!r} {numeric[chosen].shape} {numeric[chosen].dtype}")
    return _finish(X, names, labels, None, image_shape, notes, name, "mat", nan_policy,
                   variable=chosen)


def read_mat(data: bytes, name: str, *, nan_policy: str, variable=None, max_bytes: int) -> LoadedData:
    """The ``.mat`` reader of the format registry (:data:`nspca_core.io.formats.FORMATS`)."""
    return _load_mat(data, name, variable, nan_policy)
