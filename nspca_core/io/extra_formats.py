"""The files GEO and labs hand out, dispatched before the other readers: GEO SOFT
(:mod:`.soft`, streamed), compressed delimited text (``.csv.gz``, ``.tsv.bz2``, ``.txt.xz``,
``.csv.zst``: decompressed with a cap, then read exactly as the plain file), Excel workbooks
(:mod:`.excel`), Cell Ranger's 10x HDF5 (:mod:`.tenx_h5`) and in-memory AnnData objects
(:mod:`.anndata_io`).

:func:`load_extra` returns None for every other file, which the readers of :mod:`.load` then read.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from .._common.validation import InputError
from .compressed import MAGIC, SUFFIXES, compression_of, decompress, inner_name
from .loaded import DataFormatError, LoadedData, over_cap
from .soft import is_soft, load_soft
from .source import _read_source

#: the delimited-text suffixes read compressed (``table.tsv.gz``)
COMPRESSED_TEXT = (".csv", ".tsv", ".tab", ".txt")
EXCEL_EXTENSIONS = (".xlsx", ".xlsm", ".xls")


def _base(name: str) -> str:
    return PurePosixPath(str(name).replace("\\", "/")).name.lower()


def _display_name(source, filename) -> str | None:
    if filename is not None:
        return filename
    if isinstance(source, (str, os.PathLike)):
        return Path(source).name
    got = getattr(source, "name", None)
    return os.path.basename(str(got)) if got else None


def _head(source, n: int = 4096) -> bytes:
    """The first bytes of a path, bytes or a seekable file-like (b"" when they cannot be peeked)."""
    if isinstance(source, (str, os.PathLike)):
        if not Path(source).is_file():  # a FIFO or device would block or never end: the reader says so
            return b""
        try:
            with open(source, "rb") as fh:
                return fh.read(n)
        except OSError:
            return b""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source[:n])
    if hasattr(source, "read") and hasattr(source, "seek"):  # an upload: peek, then rewind
        try:
            source.seek(0)
            head = source.read(n)
            source.seek(0)
            return head if isinstance(head, bytes) else b""
        except (OSError, ValueError):
            return b""
    return b""


def _is_anndata(source) -> bool:
    return type(source).__name__ == "AnnData" and hasattr(source, "obs") and hasattr(source, "var")


def _compressed_text(base: str) -> bool:
    """``NAME.csv.gz`` & co. (not a UCI docword or a GEO series matrix: their readers handle those)."""
    inner = inner_name(base)
    if inner == base or not inner.endswith(COMPRESSED_TEXT):
        return False
    if base.startswith("docword") or inner.endswith("series_matrix.txt") and base.endswith(".gz"):
        return False
    return True


def load_extra(source, filename, *, max_bytes: int, nan_policy: str, label_column, vocab, reload,
               platform=None, sheet=None, layer=None, use_raw=False, feature_names=None) -> LoadedData | None:
    """The file read by one of this module's readers, or None when it is none of their kinds.

    ``reload(data, filename)`` reads decompressed text with the ordinary readers.
    """

    if _is_anndata(source):
        from .omics import load_anndata_object

        _only("the AnnData object", "AnnData", platform=platform, sheet=sheet, feature_names=feature_names)
        return load_anndata_object(source, filename or "AnnData object", nan_policy=nan_policy,
                                   label_column=label_column, layer=layer, use_raw=use_raw)
    name = _display_name(source, filename)
    base = _base(name or "")
    head = _head(source)

    if is_soft(base, head):
        _only(name, "a GEO SOFT file", sheet=sheet, layer=layer, use_raw=use_raw)
        if isinstance(source, (str, os.PathLike)):
            _check_path(Path(source), max_bytes)
            return load_soft(source, name, max_bytes=max_bytes, nan_policy=nan_policy,
                             label_column=label_column, platform=platform, feature_names=feature_names)
        data, name = _read_source(source, filename, max_bytes)
        return load_soft(data, name, max_bytes=max_bytes, nan_policy=nan_policy, label_column=label_column,
                         platform=platform, feature_names=feature_names)
    if base.endswith(EXCEL_EXTENSIONS):
        from .excel import load_excel

        _only(name, "an Excel workbook", platform=platform, layer=layer, use_raw=use_raw,
              feature_names=feature_names)
        data, name = _read_source(source, filename, max_bytes)
        return load_excel(data, name, sheet=sheet, nan_policy=nan_policy, label_column=label_column,
                          reload=reload, max_bytes=max_bytes)
    if base.endswith(".h5") or (not base and head.startswith(b"\x89HDF") and b"matrix" in head):
        from .tenx_h5 import load_tenx_h5

        _only(name, "a 10x HDF5 file", platform=platform, sheet=sheet, layer=layer, use_raw=use_raw)
        data, name = _read_source(source, filename, max_bytes)
        return load_tenx_h5(data, name, max_bytes=max_bytes, feature_names=feature_names)
    if base.endswith(".h5ad"):
        _only(name, "an .h5ad file", platform=platform, sheet=sheet, feature_names=feature_names)
        if layer is None and not use_raw:
            return None  # the .h5ad reader of .omics
        from .omics import load_h5ad_layer

        data, name = _read_source(source, filename, max_bytes)
        return load_h5ad_layer(data, name, nan_policy=nan_policy, label_column=label_column, layer=layer,
                               use_raw=use_raw)
    _only(name or "this file", None, platform=platform, sheet=sheet, layer=layer, use_raw=use_raw,
          feature_names=feature_names)
    if _compressed_text(base) and vocab is None:
        data, name = _read_source(source, filename, max_bytes)
        kind = compression_of(base, data[:8])
        if kind is None or not data.startswith(next(m for m, k in MAGIC if k == kind)):
            raise DataFormatError(f"{name}: named {os.path.splitext(base)[1]} but its content is not "
                                  f"{SUFFIXES.get(os.path.splitext(base)[1], 'compressed')} data; give the "
                                  "file its real extension")
        text = decompress(data, name, max_bytes, kind)
        inner = inner_name(name)
        try:
            loaded = reload(text, inner)
        except DataFormatError as exc:
            raise DataFormatError(str(exc).replace(inner, name, 1)) from None
        import dataclasses

        return dataclasses.replace(loaded, source_name=name,
                                   notes=[f"{kind} content decompressed ({len(data):,} -> {len(text):,} bytes)"]
                                   + list(loaded.notes))
    if base.endswith((".bz2", ".xz", ".zst")):
        raise DataFormatError(f"{name}: a compressed file is read when it holds delimited text "
                              "(NAME.csv/.tsv/.tab/.txt + .gz/.bz2/.xz/.zst) or a GEO SOFT file "
                              "(NAME.soft.gz); got " + repr(inner_name(name)))
    return None


def _check_path(path: Path, max_bytes: int) -> None:
    if not path.is_file():
        from .source import _read_source

        _read_source(path, None, max_bytes)  # raises the reader's message (missing, folder, FIFO)
    size = path.stat().st_size
    if size > max_bytes:
        raise over_cap(None, f"file {path.name!r} is {size:,} bytes, over ", max_bytes, purpose="to load it")


def _only(name, what, **given) -> None:
    """Refuse the options of another kind of file (they would be silently ignored)."""
    allowed = {"platform": "GEO family SOFT files", "sheet": "Excel workbooks (.xlsx/.xls)",
               "layer": "AnnData (.h5ad or an AnnData object)", "use_raw": "AnnData (.h5ad or an AnnData object)",
               "feature_names": "GEO SOFT and 10x HDF5 files (probe/feature ids or gene symbols)"}
    for key, value in given.items():
        if value is not None and value is not False:
            raise InputError(f"`{key}` applies only to {allowed[key]}; {name} is "
                             + (f"read as {what}" if what else "not one"))
