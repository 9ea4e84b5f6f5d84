"""The registries of reading, each declared once: the file formats :func:`nspca_core.load_file` reads
(extension -> reader, label) and the policies for missing values.

Every consumer derives from here: the extension check and its message (:mod:`.source`), the dispatch
of :func:`nspca_core.io.load.load_file`, the CLI (``--nan-policy`` choices) and the app (the file types
"Your data" accepts, the labels of its missing-values choice).  Adding a format that holds one numeric
matrix is a reader and one :class:`FileFormat` here; see CONTRIBUTING.md, "One file format".
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

__all__ = ["FileFormat", "FORMATS", "ALLOWED_EXTENSIONS", "TEXT_EXTENSIONS", "IMAGE_EXTENSIONS",
           "NAN_POLICY_LABELS", "format_of"]


@dataclass(frozen=True)
class FileFormat:
    """One kind of file :func:`nspca_core.load_file` reads.

    Attributes
    ----------
    extensions : tuple of str -- the endings it is recognized by, lower case with the dot (".npy")
    label : str -- how the app, the CLI and the messages name it
    reader : str -- "module:function" (loaded lazily, :meth:`read`) for a file holding one numeric
        matrix: ``f(data: bytes, name: str, *, nan_policy: str, variable, max_bytes: int) -> LoadedData``,
        the matrix as stored (``load_file`` transposes it when asked, ``orientation``); "" for a format
        with its own branch in :func:`nspca_core.io.load._load_any` (corpora, images, GEO, AnnData) or in
        :mod:`.extra_formats` (SOFT, compressed tables, Excel, 10x HDF5)
    """

    extensions: tuple
    label: str
    reader: str = ""

    def read(self):
        """The reader function."""
        module, name = self.reader.split(":")
        return getattr(importlib.import_module(module), name)


#: delimited text (delimiter, header and orientation detected)
TEXT_EXTENSIONS = (".csv", ".tsv", ".tab", ".txt")
#: single images: read one image per sample from a .zip of them
IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".pgm", ".bmp")

#: every format load_file reads, in the order the messages list them
FORMATS: tuple[FileFormat, ...] = (
    FileFormat(TEXT_EXTENSIONS, "delimited text (CSV/TSV/TXT)"),
    FileFormat((".npy",), "NumPy array (.npy)", "nspca_core.io.npy:read_npy"),
    FileFormat((".npz",), "NumPy archive (.npz)", "nspca_core.io.npy:read_npz"),
    FileFormat((".mat",), "MATLAB file (.mat)", "nspca_core.io.mat:read_mat"),
    FileFormat(IMAGE_EXTENSIONS, "images (PNG/JPEG/PGM/BMP), in a .zip"),
    FileFormat((".zip",), "ZIP of images, of text documents or of a 10x folder"),
    FileFormat((".mtx",), "Matrix Market (.mtx)"),
    FileFormat((".gz",), "gzip: GEO series matrix, docword, a table"),
    FileFormat((".h5ad",), "AnnData (.h5ad)"),
    FileFormat((".soft",), "GEO SOFT"),
    FileFormat((".bz2", ".xz", ".zst"), "compressed table (.bz2/.xz/.zst)"),
    FileFormat((".xlsx", ".xlsm", ".xls"), "Excel workbook"),
    FileFormat((".h5",), "10x HDF5 (.h5)"),
)

#: every extension load_file accepts (from :data:`FORMATS`)
ALLOWED_EXTENSIONS = tuple(ext for fmt in FORMATS for ext in fmt.extensions)

#: what to do with missing (NaN/inf) values: policy -> label (the first is the default)
NAN_POLICY_LABELS = {
    "error": "stop and tell me",
    "drop-rows": "drop samples with missing values",
    "drop-columns": "drop features with missing values",
    "impute-mean": "replace by the feature's mean",
}


def format_of(extension: str) -> FileFormat | None:
    """The :class:`FileFormat` of an extension (".npy"), or None."""
    return next((fmt for fmt in FORMATS if extension in fmt.extensions), None)
