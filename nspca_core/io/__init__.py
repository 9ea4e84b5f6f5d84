"""Turn a user's file into a data matrix (samples x features), safely and loudly.

``load_file(source, ...)`` reads CSV/TSV text, ``.npy``/``.npz`` (never
unpickled), MATLAB ``.mat`` (v4-v7.2, numeric arrays only), a ``.zip`` of images
(one grey image per sample), and text corpora kept sparse (UCI Bag-of-Words
``docword.NAME.txt[.gz]`` + ``vocab.NAME.txt``, Matrix Market ``.mtx``,
``scipy.sparse.save_npz`` ``.npz``, or a ``.zip`` of them), GEO series matrix
files, AnnData ``.h5ad`` and zipped 10x folders (:mod:`.omics`), in either
orientation (:mod:`.orientation`: genes as rows are detected and transposed, and
said), with an optional sample sheet (:mod:`.samples`), and returns a
:class:`LoadedData`.  Anything it
cannot read unambiguously raises :class:`DataFormatError` (an
:class:`~nspca_core._common.validation.InputError`, hence a ``ValueError``) whose
message names the problem and what is allowed; anything it does to the data
(dropping a label column, converting colour to grey, dropping NaN rows when
asked) is said in ``notes``.  The messages that name an argument carry their
parts too (``plain``, ``remedy``, ``argument``, ``value``, ``allowed``,
``source``; notes as ``Note`` strings, :mod:`nspca_core._common.said`), so a
front says them with its own controls without reading the text.  Nothing is written to disk; archives are read in
memory with their member names checked.

Modules: :mod:`.load` (the front door), :mod:`.source` (bytes and file kind),
:mod:`.loaded` (the result and the checks every format shares), the readers
:mod:`.delimited` (CSV/TSV, with :mod:`.sniff` and :mod:`.conventions` for
how the text is written), :mod:`.npy`, :mod:`.mat`, :mod:`.images`,
:mod:`.corpora` (with the bag-of-words readers of :mod:`.bow`), :mod:`.documents` (raw text
counted as scikit-learn's CountVectorizer counts), and :mod:`.archive` (safe in-memory archives).
Files as GEO and labs hand them out are dispatched first by :mod:`.extra_formats`: GEO SOFT
(:mod:`.soft`, streamed), compressed tables (:mod:`.compressed`), Excel (:mod:`.excel`), Cell
Ranger's HDF5 (:mod:`.tenx_h5`) and AnnData layers/objects (:mod:`.anndata_io`).
"""

from .archive import MAX_ZIP_MEMBERS, _read_member
from .conventions import _cell_kind
from .corpora import CORPUS_EXTENSIONS
from .formats import FORMATS, NAN_POLICY_LABELS, FileFormat
from .images import MAX_IMAGE_PIXELS, MAX_TOTAL_PIXELS, zip_holds_images
from .load import HEADER_CHOICES, NAN_POLICIES, describe, load_file
from .loaded import DataFormatError, LoadedData
from .mat import mat_variables
from .npy import npy_strings_without_unpickling, npz_variables
from .omics import ANNDATA_INSTALL
from .orientation import ORIENTATIONS
from .samples import sheet_columns
from .source import ALLOWED_EXTENSIONS, IMAGE_EXTENSIONS, TEXT_EXTENSIONS

__all__ = [
    "DataFormatError",
    "LoadedData",
    "load_file",
    "describe",
    "npz_variables",
    "mat_variables",
    "ALLOWED_EXTENSIONS",
    "FORMATS",
    "FileFormat",
    "NAN_POLICIES",
    "NAN_POLICY_LABELS",
    "MAX_ZIP_MEMBERS",
    "MAX_TOTAL_PIXELS",
    "HEADER_CHOICES",
    "npy_strings_without_unpickling",
    "ORIENTATIONS",
    "ANNDATA_INSTALL",
    "sheet_columns",
    "zip_holds_images",
]
