"""NumPy ``.npy`` and ``.npz`` files, read with ``allow_pickle=False``; pickled string
lists are read statically, never unpickled.
"""

from __future__ import annotations

import io
import pickletools
import zipfile

import numpy as np

from .._common.said import Remedy
from .archive import _archive_errors, _check_zip_members, _open_zip
from .loaded import DataFormatError, LoadedData, _finish, _names_for
from .source import _read_source


def npy_strings_without_unpickling(raw: bytes) -> np.ndarray | None:
    """Read a ``.npy`` holding a 1-D object array of str WITHOUT unpickling it.

    Object arrays in ``.npy`` are pickles; loading them would run the pickle
    machine (arbitrary code).  Instead the pickle stream is only *disassembled*
    with :func:`pickletools.genops` (which executes nothing) and the string
    constants of the element list are collected, following memo references.
    Anything unexpected (other element types, a length mismatch) returns None
    and the caller falls back to generic names.
    """
    try:
        f = io.BytesIO(raw)
        version = np.lib.format.read_magic(f)
        shape, _, dtype = (np.lib.format.read_array_header_1_0(f) if version == (1, 0)
                           else np.lib.format.read_array_header_2_0(f))
        if dtype != np.dtype(object) or len(shape) != 1:
            return None
        memo: list = []
        last = None
        in_list, out = False, []
        allowed_in_list = {"MARK", "APPENDS", "APPEND", "MEMOIZE", "FRAME", "BINGET",
                           "LONG_BINGET", "SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8",
                           "UNICODE"}
        for op, arg, _pos in pickletools.genops(f):
            name = op.name
            if name == "FRAME":
                continue  # framing can fall between a push and its MEMOIZE
            if name == "MEMOIZE":
                memo.append(last)
                continue
            if name in ("PUT", "BINPUT", "LONG_BINPUT"):
                return None  # old protocols: not what numpy writes today
            if in_list:
                if name in ("BINGET", "LONG_BINGET"):
                    value = memo[arg] if arg < len(memo) else None
                    if not isinstance(value, str):
                        return None
                    out.append(value)
                    last = value
                    continue
                if name in ("SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE"):
                    out.append(arg)
                    last = arg
                    continue
                if name not in allowed_in_list:
                    break  # end of the element list (e.g. the closing BUILD)
                last = None
                continue
            if name == "EMPTY_LIST":
                in_list = True
            last = arg if isinstance(arg, str) else None
        if len(out) != shape[0]:
            return None
        return np.array(out, dtype=str)
    except Exception:  # any surprise: no names rather than a crash
        return None


def _npy_header(f) -> tuple:
    version = np.lib.format.read_magic(f)
    if version == (1, 0):
        return np.lib.format.read_array_header_1_0(f)
    return np.lib.format.read_array_header_2_0(f)


def _check_array_dtype(dtype, shape, what: str, name: str) -> None:
    if dtype.hasobject:
        raise DataFormatError(f"{name}: {what} holds Python objects (dtype=object), which are "
                              "stored as pickles; pickles are never loaded (they can run code). "
                              "Save a numeric array instead (e.g. X.astype(float))")
    if dtype.names is not None:
        raise DataFormatError(f"{name}: {what} is a structured array (fields {list(dtype.names)}); "
                              "give a plain numeric 2-D array")
    if dtype.kind in "USV":
        raise DataFormatError(f"{name}: {what} holds text (dtype {dtype}): non-numeric matrix")
    if dtype.kind not in "biufc":
        raise DataFormatError(f"{name}: {what} has unsupported dtype {dtype}")


def _as_matrix(arr: np.ndarray, what: str, name: str, notes: list):
    """2-D as is; 3-D (N, h, w) as N images; anything else an error."""
    if arr.ndim == 2:
        return arr, None
    if arr.ndim == 3:
        N, h, w = arr.shape
        notes.append(f"{what} has shape {arr.shape}: read as {N} images of {h}x{w}, "
                     "one flattened (row-major) image per row")
        return arr.reshape(N, h * w), (h, w)
    if arr.ndim == 1:
        raise DataFormatError(f"{name}: {what} is 1-D (shape {arr.shape}): a single row or column; "
                              "need a 2-D array, samples as rows and features as columns")
    raise DataFormatError(f"{name}: {what} has {arr.ndim} dimensions (shape {arr.shape}); "
                          "need 2-D (samples x features) or 3-D (images x height x width)")


def _load_npy(data: bytes, name: str, nan_policy: str):
    notes: list = []
    f = io.BytesIO(data)
    try:
        shape, _, dtype = _npy_header(f)
    except Exception as exc:
        raise DataFormatError(f"{name}: not a valid .npy file ({exc})") from None
    _check_array_dtype(dtype, shape, "the array", name)
    _check_npy_size(shape, dtype, len(data) - f.tell(), "the array", name)
    try:
        arr = np.load(io.BytesIO(data), allow_pickle=False)
    except Exception as exc:
        raise DataFormatError(f"{name}: could not read the .npy array ({exc})") from None
    X, image_shape = _as_matrix(arr, "the array", name, notes)
    names = _names_for(X.shape[1], image_shape)
    return _finish(X, names, None, None, image_shape, notes, name, "npy", nan_policy)


def _check_npy_size(shape, dtype, available: int, what: str, name: str) -> None:
    """Refuse a header announcing more data than the file holds (truncated or forged),
    before anything of that size is allocated."""
    need = int(np.prod(shape, dtype=object)) * dtype.itemsize
    if need > available:
        raise DataFormatError(f"{name}: {what} announces shape {tuple(shape)} of {dtype} "
                              f"({need:,} bytes) but only {max(available, 0):,} bytes follow its "
                              "header: the file is truncated or damaged")


def _npz_index(data: bytes, name: str, max_bytes: int) -> dict:
    """name -> (shape, dtype) of every array, from headers only (no data read)."""
    zf = _open_zip(data, name, ".npz")
    with zf, _archive_errors(name, ".npz"):
        infos = [i for i in zf.infolist() if not i.is_dir()]
        _check_zip_members(infos, name, max_bytes, allow_npy=True)
        out = {}
        for info in infos:
            if not info.filename.endswith(".npy"):
                continue
            with zf.open(info) as fh:
                try:
                    shape, _, dtype = _npy_header(fh)
                    header_len = fh.tell()
                except Exception as exc:
                    raise DataFormatError(f"{name}: member {info.filename!r} is not a valid .npy "
                                          f"({exc})") from None
            if not dtype.hasobject:
                _check_npy_size(shape, dtype, info.file_size - header_len,
                                f"member {info.filename!r}", name)
            out[info.filename[:-4]] = (tuple(shape), dtype)
    if not out:
        raise DataFormatError(f"{name}: the .npz holds no arrays")
    return out


def _numeric_candidates(index: dict) -> list:
    return [k for k, (shape, dt) in index.items()
            if not dt.hasobject and dt.names is None and dt.kind in "biuf" and len(shape) in (2, 3)]


def npz_variables(source, *, filename=None, max_bytes: int = 200_000_000) -> list[dict]:
    """Numeric 2-D/3-D arrays of an ``.npz`` for a chooser: ``[{name, shape, dtype}]``."""
    data, name = _read_source(source, filename, max_bytes)
    index = _npz_index(data, name, max_bytes)
    return [{"name": k, "shape": index[k][0], "dtype": str(index[k][1])}
            for k in _numeric_candidates(index)]


_LABEL_KEYS = ("labels", "label", "y", "target", "targets", "classes")
_NAME_KEYS = ("feature_names", "features", "genes", "bands", "columns", "names_features")


def _load_npz(data: bytes, name: str, variable, nan_policy: str, max_bytes: int):
    notes: list = []
    index = _npz_index(data, name, max_bytes)
    listing = ", ".join(f"{k} {index[k][0]} {index[k][1]}" for k in index)
    if variable is not None:
        if variable not in index:
            raise DataFormatError(f"{name}: no array named {variable!r}; it holds: {listing}")
        chosen = variable
        _check_array_dtype(index[chosen][1], index[chosen][0], f"array {chosen!r}", name)
    else:
        cands = _numeric_candidates(index)
        if not cands:
            objs = [k for k, (_, dt) in index.items() if dt.hasobject]
            if objs:
                _check_array_dtype(index[objs[0]][1], index[objs[0]][0], f"array {objs[0]!r}", name)
            raise DataFormatError(f"{name}: no numeric 2-D or 3-D array; it holds: {listing}")
        if len(cands) > 1:
            raise DataFormatError(f"{name}: several numeric arrays ({', '.join(cands)}); choose one "
                                  f"with variable=... ; it holds: {listing}", argument="variable", value=None,
                                  allowed=tuple(cands), source=name,
                                  plain=f"several numeric arrays ({', '.join(cands)}); it holds: {listing}",
                                  remedy=Remedy("variable", tuple(cands)))
        chosen = cands[0]
    with _archive_errors(name, ".npz"), np.load(io.BytesIO(data), allow_pickle=False) as z:
        arr = z[chosen]
        X, image_shape = _as_matrix(arr, f"array {chosen!r}", name, notes)
        m, n = X.shape
        labels = None
        names = _names_for(n, image_shape)
        for key in index:
            if key == chosen:
                continue
            shape, dt = index[key]
            strings = None
            if dt.hasobject:
                # a pickled list of strings (names, labels) is read statically, never unpickled
                if key.lower() in _LABEL_KEYS + _NAME_KEYS:
                    with zipfile.ZipFile(io.BytesIO(data)) as zf:
                        strings = npy_strings_without_unpickling(zf.read(key + ".npy"))
                if strings is None:
                    notes.append(f"array {key!r} holds Python objects (a pickle) and was not loaded")
                    continue
                notes.append(f"array {key!r} is a pickled object array: its strings were read "
                             "without unpickling")
            if key.lower() in _LABEL_KEYS and shape == (m,) and labels is None:
                labels = z[key] if strings is None else strings
                notes.append(f"array {key!r} used as labels")
            elif key.lower() in _NAME_KEYS and shape == (n,) and (dt.kind in "US" or strings is not None):
                names = [str(s) for s in (z[key] if strings is None else strings)]
                notes.append(f"array {key!r} used as feature names")
            else:
                notes.append(f"array {key!r} {shape} not used")
    notes.insert(0, f"array {chosen!r} {arr.shape} {arr.dtype}")
    return _finish(X, names, labels, None, image_shape, notes, name, "npz", nan_policy,
                   variable=chosen)


def read_npy(data: bytes, name: str, *, nan_policy: str, variable=None, max_bytes: int) -> LoadedData:
    """The ``.npy`` reader of the format registry (:data:`nspca_core.io.formats.FORMATS`)."""
    return _load_npy(data, name, nan_policy)


def read_npz(data: bytes, name: str, *, nan_policy: str, variable=None, max_bytes: int) -> LoadedData:
    """The ``.npz`` reader of the format registry (:data:`nspca_core.io.formats.FORMATS`)."""
    return _load_npz(data, name, variable, nan_policy, max_bytes)
