"""Dataset registry shared by the app and the API: embedded, synthetic and real sets.

``list_datasets()`` describes every entry; ``load_dataset(name, ...)`` returns a
:class:`Dataset` with the preprocessed matrix, the raw one, feature names,
labels, image shape and, for synthetic sets, the ground truth; ``preprocess``
applies the shared preprocessing options (center, standardize, log1p) and says
what it did.

Real datasets (CBCL faces, MLL leukemia, LRS spectra) are never shipped with the
project.  A local copy ``<name>.npz`` (the layout of ``../shared/datasets``, see
its README) is looked up in

1. the ``data_dir`` argument, or else the environment variable ``NSPCA_DATA_DIR``;
2. the cache directory: ``NSPCA_CACHE_DIR`` or ``~/.cache/nspca``.

With ``download=True`` a missing set is fetched from its public source, parsed
and written to the cache as the same ``.npz`` layout.

Text corpora (kind ``"text"``: the UCI Bag-of-Words KOS, NIPS, Enron, NYTimes
of Asteris et al. 2015) are local ``docword.NAME.txt[.gz]`` + ``vocab.NAME.txt``
pairs in the same folders, or downloaded from the UCI repository into
``<cache>/raw``; ``load_dataset`` returns them as a *sparse* CSR matrix with the
centering implicit (see :func:`load_corpus`).  They are listed by
``list_datasets(include_text=True)`` only, until every consumer handles sparse
data.  Both paths verify a
SHA-256 checksum of the *parsed arrays* (``nspca_core/data/checksums.json``), so a local
copy and a fresh download are held to the same bytes.  Every ``.npz`` is opened
with ``allow_pickle=False``.

Each registry entry carries its loader (and a real set its local file name,
download source, parser and checksummed arrays), so adding a dataset is one
entry in ``registry._REGISTRY``; ``load_dataset`` has no per-name branch.

Modules: :mod:`.registry` (the entries), :mod:`.load` (``load_dataset``,
``load_corpus``), :mod:`.loaders` (the loaders entries carry),
:mod:`.preprocessing`, :mod:`.local` (copies on disk), :mod:`.download` with
:mod:`.parsers` (the original files), :mod:`.checksums`, :mod:`.corpora` (the
UCI text corpora) and :mod:`.types`.
"""

from . import checksums, download
from .checksums import CHECKSUMS_PATH, _expected_checksums, array_checksum
from .download import MAX_DOWNLOAD_BYTES
from .load import load_corpus, load_dataset
from .local import _read_npz, cache_dir, data_dirs
from .preprocessing import PREPROCESSING, PREPROCESSING_STEPS, TEXT_PREPROCESSING, PreprocessingSpec, preprocess
from .registry import _CHECKED_ARRAYS, _REGISTRY, get_info, is_available, list_datasets
from .types import ChecksumError, Dataset, DatasetInfo, DatasetUnavailableError, Loaded, Preprocessed

__all__ = [
    "DatasetInfo",
    "Dataset",
    "Loaded",
    "Preprocessed",
    "DatasetUnavailableError",
    "ChecksumError",
    "PREPROCESSING_STEPS",
    "PREPROCESSING",
    "PreprocessingSpec",
    "list_datasets",
    "get_info",
    "is_available",
    "load_dataset",
    "preprocess",
    "data_dirs",
    "cache_dir",
    "array_checksum",
    "load_corpus",
    "TEXT_PREPROCESSING",
]
