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
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import tarfile
import tempfile
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import synthetic
from ._validation import InputError, check_matrix

__all__ = [
    "DatasetInfo",
    "Dataset",
    "Preprocessed",
    "DatasetUnavailableError",
    "ChecksumError",
    "PREPROCESSING_STEPS",
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

#: allowed preprocessing steps, in the order they are applied
PREPROCESSING_STEPS = ("log1p", "center", "standardize")

#: where the checksums of the parsed real datasets live (written once from the
#: local copies, see datasets/README.md; package data, so it installs with the package)
CHECKSUMS_PATH = Path(__file__).resolve().parent / "data" / "checksums.json"

#: download size cap (bytes) -- the largest original (MLL, text) is ~20 MB
MAX_DOWNLOAD_BYTES = 300_000_000


class DatasetUnavailableError(InputError):
    """A real dataset is neither present locally nor downloadable right now."""


class ChecksumError(InputError):
    """The parsed arrays of a real dataset do not match the recorded checksum."""


# --------------------------------------------------------------------------- types

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


# --------------------------------------------------------------------------- registry

_CBCL_URL = "http://cbcl.mit.edu/projects/cbcl/software-datasets/faces.tar.gz"
_MLL_URL = "https://pubs.broadinstitute.org/mpr/projects/Leukemia/expression_data.txt"
_LRS_URL = "https://archive.ics.uci.edu/ml/machine-learning-databases/spectrometer/lrs.data"
_BOW_URL = "https://archive.ics.uci.edu/ml/machine-learning-databases/bag-of-words/"
_BOW_CITATION = ("Newman, D. (2008). Bag of Words. UCI Machine Learning Repository; used by "
                 "Asteris, Papailiopoulos, Kyrillidis & Dimakis, Sparse PCA via Bipartite "
                 "Matchings, NIPS 2015 (Tables 2-3).")
_BOW_PREPROCESSING = "raw word counts, centered (A = Xc^T Xc / m), as Asteris et al. 2015"

#: preprocessing names accepted for text corpora (centering is implicit)
TEXT_PREPROCESSING = ("counts", "tfidf", "log1p", "center", "none")


def _bow_info(key: str, title: str, what: str, shape: tuple) -> "DatasetInfo":
    return DatasetInfo(
        name=key, title=title,
        description=f"{shape[0]:,} {what} x {shape[1]:,} vocabulary words (word counts, sparse); "
                    "UCI Bag-of-Words.",
        kind="text", shape=shape,
        source="https://archive.ics.uci.edu/dataset/164/bag+of+words",
        citation=_BOW_CITATION, paper_preprocessing=_BOW_PREPROCESSING,
        image_shape=None, has_labels=False,
        filename=f"docword.{key}.txt.gz", url=f"{_BOW_URL}docword.{key}.txt.gz")

_REGISTRY: dict[str, DatasetInfo] = {
    "digits": DatasetInfo(
        name="digits",
        title="Handwritten digits (8x8)",
        description="1797 handwritten digits 0-9 as 8x8 grey images (pixel values 0-16), "
                    "bundled with scikit-learn: works offline.",
        kind="embedded",
        shape=(1797, 64),
        source="scikit-learn sklearn.datasets.load_digits (UCI optdigits test set)",
        citation="Alpaydin, E. & Kaynak, C. (1998). Optical Recognition of Handwritten Digits. "
                 "UCI Machine Learning Repository.",
        paper_preprocessing="not used by the seed papers; center the pixels (default)",
        image_shape=(8, 8),
        has_labels=True,
    ),
    "synthetic-planted": DatasetInfo(
        name="synthetic-planted",
        title="Planted nonnegative sparse components",
        description="Gaussian samples of a spiked covariance: a few disjoint nonnegative "
                    "k-sparse unit components with geometrically decaying variances, plus "
                    "isotropic noise. Ground truth: components, supports, variances.",
        kind="synthetic",
        shape=(200, 50),
        source="generated by nspca_core.synthetic.planted_sparse",
        citation="spiked covariance model (Johnstone 2001; Amini & Wainwright 2009) "
                 "with nonnegative components",
        paper_preprocessing="center",
        image_shape=None,
        has_labels=False,
        params=(("n", 50), ("m", 200), ("k", 5), ("n_components", 3), ("decay", 0.5),
                ("noise", 0.2)),
    ),
    "synthetic-parts": DatasetInfo(
        name="synthetic-parts",
        title="Images made of known parts",
        description="12x12 images, each a nonnegative combination of a few known disjoint "
                    "parts (square, bars, blob) plus nonnegative noise. Ground truth: "
                    "the parts.",
        kind="synthetic",
        shape=(400, 144),
        source="generated by nspca_core.synthetic.parts_images",
        citation="parts-based representation as in Lee & Seung (1999), Nature 401:788-791",
        paper_preprocessing="center",
        image_shape=synthetic.PARTS_SHAPE,
        has_labels=False,
        params=(("n", 400), ("n_parts", 4), ("noise", 0.05)),
    ),
    "synthetic-scores": DatasetInfo(
        name="synthetic-scores",
        title="Nonnegative-score model Y = A X",
        description="Y = A X with X i.i.d. Beta(2,4) scaled to unit variance (nonnegative, "
                    "uncorrelated sources). Ground truth: A, X, D, W, lambdas. "
                    "Use first_share=0.96/0.77/0.57 for the paper's Cases 1-3.",
        kind="synthetic",
        shape=(1000, 10),
        source="generated by nspca_core.synthetic.nonneg_scores_model",
        citation="Bajorski, P., Hall, P. & Rubinstein, Y. Nonnegative principal components "
                 "(the simulation of Section 5).",
        paper_preprocessing="none (the estimator centers and whitens internally)",
        image_shape=None,
        has_labels=False,
        params=(("p", 10), ("n", 1000), ("first_share", None)),
    ),
    "cbcl": DatasetInfo(
        name="cbcl",
        title="CBCL faces (train)",
        description="2429 upright frontal faces, 19x19 grey images (uint8), the MIT CBCL "
                    "face database #1 training faces.",
        kind="real",
        shape=(2429, 361),
        source="http://cbcl.mit.edu/software-datasets/FaceData2.html",
        citation="CBCL Face Database #1, MIT Center for Biological and Computational Learning; "
                 "Sung, K.-K. (1996). Learning and example selection for object and pattern "
                 "detection. PhD thesis, MIT.",
        paper_preprocessing="pixels centered (A = Xc^T Xc / m); seed 003 also standardized",
        image_shape=(19, 19),
        has_labels=False,
        filename="cbcl_faces_train.npz",
        url=_CBCL_URL,
    ),
    "mll": DatasetInfo(
        name="mll",
        title="MLL leukemia gene expression",
        description="72 leukemia samples (24 ALL, 20 MLL, 28 AML) x 12582 Affymetrix "
                    "HG-U95Av2 probe sets (scaled expression values).",
        kind="real",
        shape=(72, 12582),
        source="http://www.broadinstitute.org/cgi-bin/cancer/publications/pub_paper.cgi"
               "?mode=view&paper_id=63",
        citation="Armstrong, S. A. et al. (2002). MLL translocations specify a distinct gene "
                 "expression profile that distinguishes a unique leukemia. Nature Genetics "
                 "30:41-47.",
        paper_preprocessing="genes centered (A = Xc^T Xc / m); seed 003 also standardized",
        image_shape=None,
        has_labels=True,
        filename="mll_leukemia.npz",
        url=_MLL_URL,
    ),
    "lrs": DatasetInfo(
        name="lrs",
        title="IRAS LRS spectra",
        description="531 Low Resolution Spectrometer spectra of IRAS sources: 44 blue-band "
                    "and 49 red-band fluxes; labels are the LRS classes.",
        kind="real",
        shape=(531, 93),
        source="https://archive.ics.uci.edu/dataset/78/low+resolution+spectrometer",
        citation="IRAS Low Resolution Spectrometer database, UCI Machine Learning Repository "
                 "(donated by J. Kimmel / NASA Ames, 1988).",
        paper_preprocessing="band fluxes centered (A = Xc^T Xc / m)",
        image_shape=None,
        has_labels=True,
        filename="lrs_spectrometer.npz",
        url=_LRS_URL,
    ),
}

_REGISTRY.update({
    "kos": _bow_info("kos", "KOS blog entries", "blog entries (dailykos.com)", (3430, 6906)),
    "nips": _bow_info("nips", "NIPS full papers", "NIPS papers", (1500, 12419)),
    "enron": _bow_info("enron", "Enron emails", "emails", (39861, 28102)),
    "nytimes": _bow_info("nytimes", "NYTimes news articles", "news articles", (300000, 102660)),
})

#: arrays of each real set covered by the checksum (genes are names, not data)
_CHECKED_ARRAYS = {"cbcl": ("images",), "mll": ("X", "labels"), "lrs": ("X", "labels")}


def list_datasets(*, include_text: bool = False) -> list[DatasetInfo]:
    """Registry entries, embedded and synthetic first, then the real sets.

    ``include_text=True`` adds the sparse text corpora (kind ``"text"``).
    """
    return [i for i in _REGISTRY.values() if include_text or i.kind != "text"]


def get_info(name: str) -> DatasetInfo:
    """The :class:`DatasetInfo` of ``name`` (error lists the valid names)."""
    if not isinstance(name, str) or name not in _REGISTRY:
        raise InputError(f"`name` must be one of {list(_REGISTRY)}; got {name!r}")
    return _REGISTRY[name]


# --------------------------------------------------------------------------- locations

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


def is_available(name: str, data_dir=None) -> bool:
    """True if ``load_dataset(name, data_dir=data_dir)`` works without a download.

    Embedded and synthetic sets are always available; a real set is available
    when its ``.npz`` copy is in one of :func:`data_dirs` (the checksum is checked
    at load time, not here, to keep this cheap).
    """
    info = get_info(name)
    if info.kind == "text":
        return _find_bow(info.name, data_dir) is not None
    if info.kind != "real":
        return True
    return _find_local(info, data_dir) is not None


# --------------------------------------------------------------------------- checksums

def array_checksum(arrays: dict) -> str:
    """SHA-256 of parsed arrays, independent of how they were stored.

    For each name in sorted order: the name, then for numeric arrays the
    little-endian dtype string, the shape and the C-order bytes; for string
    arrays the shape and the UTF-8 of the entries joined by newlines (so
    ``<U2`` and ``<U3`` holding the same text agree).
    """
    h = hashlib.sha256()
    for key in sorted(arrays):
        a = np.asarray(arrays[key])
        h.update(key.encode())
        if a.dtype.kind in "US":
            h.update(repr(a.shape).encode())
            h.update("\n".join(str(s) for s in a.ravel().tolist()).encode("utf-8"))
        else:
            a = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<"))
            h.update(f"{a.dtype.str}{a.shape}".encode())
            h.update(a.tobytes())
    return h.hexdigest()


def _expected_checksums() -> dict:
    try:
        return json.loads(CHECKSUMS_PATH.read_text())
    except FileNotFoundError:
        raise ChecksumError(f"checksum file {CHECKSUMS_PATH} is missing; it ships with the "
                            "project in nspca_core/data/checksums.json") from None


def _verify(name: str, arrays: dict, where: str) -> None:
    expected = _expected_checksums()[name]
    got = array_checksum({k: arrays[k] for k in _CHECKED_ARRAYS[name]})
    if got != expected["sha256"]:
        raise ChecksumError(
            f"dataset {name!r} from {where} does not match its checksum "
            f"(sha256 of arrays {list(_CHECKED_ARRAYS[name])}: expected {expected['sha256'][:16]}..., "
            f"got {got[:16]}...); the file is corrupt or a different version: delete it and "
            f"download again (load_dataset({name!r}, download=True)) or replace it with a good copy")


# --------------------------------------------------------------------------- reading .npz

def _npz_str_array_without_pickle(path: Path, member: str) -> np.ndarray | None:
    """A pickled 1-D str array of an ``.npz``, read WITHOUT unpickling (or None)."""
    from .io import npy_strings_without_unpickling
    try:
        with zipfile.ZipFile(path) as zf:
            return npy_strings_without_unpickling(zf.read(member + ".npy"))
    except (OSError, KeyError, zipfile.BadZipFile):
        return None


def _read_npz(path: Path, name: str) -> tuple[dict, list]:
    """Arrays of a local copy (allow_pickle=False) plus notes."""
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
    missing = [k for k in _CHECKED_ARRAYS[name] if k not in arrays]
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


# --------------------------------------------------------------------------- downloading

def _fetch(url: str, dest: Path) -> None:
    """Download ``url`` to ``dest`` (streamed, size-capped, atomic rename)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=30) as resp:
            total = 0
            while True:
                chunk = resp.read(1 << 20)
                if not chunk:
                    break
                total += len(chunk)
                if total > MAX_DOWNLOAD_BYTES:
                    raise DatasetUnavailableError(
                        f"download of {url} exceeds {MAX_DOWNLOAD_BYTES} bytes; stopped")
                out.write(chunk)
        os.replace(tmp, dest)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _parse_pgm_bytes(data: bytes) -> np.ndarray:
    from PIL import Image
    with Image.open(io.BytesIO(data)) as im:
        return np.asarray(im.convert("L"), dtype=np.uint8)


def _parse_cbcl(path: Path) -> dict:
    """MIT CBCL ``faces.tar.gz`` -> ``images`` uint8 (2429, 19, 19).

    The tarball holds ``face.train.tar.gz`` whose ``train/face/face*.pgm`` are the
    training faces; they are read in file-name order, in memory (nothing is
    extracted to disk, so member paths cannot escape the cache).
    """
    def faces_from(tar: tarfile.TarFile) -> list[np.ndarray]:
        members = [m for m in tar.getmembers()
                   if m.isfile() and re.search(r"(^|/)train/face/[^/]+\.pgm$", m.name)]
        members.sort(key=lambda m: m.name)
        return [_parse_pgm_bytes(tar.extractfile(m).read()) for m in members]

    with tarfile.open(path, "r:*") as outer:
        images = faces_from(outer)
        if not images:
            inner = next((m for m in outer.getmembers()
                          if m.isfile() and m.name.endswith("face.train.tar.gz")), None)
            if inner is None:
                raise DatasetUnavailableError(
                    f"{path.name} has neither face.train.tar.gz nor train/face/*.pgm; "
                    "is it the CBCL faces.tar.gz?")
            data = outer.extractfile(inner).read()
            with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
                images = faces_from(tar)
    if not images:
        raise DatasetUnavailableError(f"no training faces found in {path.name}")
    return {"images": np.stack(images).astype(np.uint8)}


def _parse_lrs(path: Path) -> dict:
    """UCI ``lrs.data`` -> ``X`` (531, 93), ``bands``, ``labels``, ``names``.

    Each record has 103 fields: LRS-name, LRS-class, ID-type, right ascension,
    declination, scale factor, blue base 1 & 2, red base 1 & 2, then 44 blue-band
    and 49 red-band fluxes.  Parentheses group fields in the file; they are
    separators here.
    """
    text = path.read_text(encoding="latin-1")
    tokens = text.replace("(", " ").replace(")", " ").split()
    if not tokens or len(tokens) % 103:
        raise DatasetUnavailableError(
            f"{path.name}: expected records of 103 fields, got {len(tokens)} tokens")
    rec = np.array(tokens, dtype=object).reshape(-1, 103)
    X = rec[:, 10:].astype(np.float64)
    bands = np.array([f"blue-band-flux_{i}" for i in range(1, 45)]
                     + [f"red-band-flux_{i}" for i in range(1, 50)])
    return {"X": X, "bands": bands, "labels": rec[:, 1].astype(str), "names": rec[:, 0].astype(str)}


_MLL_ORDER = ("ALL",) * 24 + ("MLL",) * 20 + ("AML",) * 28


def _parse_mll(path: Path) -> dict:
    """Broad ``expression_data.txt`` (genes x samples, tab separated) ->
    ``X`` (72, 12582), ``genes``, ``labels``.

    Columns that parse as numbers in every row are samples (text columns such
    as the description and A/P calls are skipped).  Labels come from sample
    headers naming ALL/MLL/AML; if the headers do not name them, the published
    order (24 ALL, 20 MLL, 28 AML; Armstrong et al. 2002) is used.
    """
    import pandas as pd

    lines = [ln.rstrip("\r\n") for ln in path.read_text(encoding="latin-1").splitlines()
             if ln.strip()]
    header = lines[0].split("\t")
    rows = [ln.split("\t") for ln in lines[1:]]
    width = len(header)
    rows = [r + [""] * (width - len(r)) if len(r) < width else r[:width] for r in rows]
    cells = np.array(rows, dtype=object)
    # sample columns: numbers in most rows; rows: those numeric in every sample column
    parsed = np.column_stack([pd.to_numeric(pd.Series(cells[:, j]), errors="coerce").to_numpy()
                              for j in range(width)])
    ok = np.isfinite(parsed)
    numeric_cols = [j for j in range(1, width) if ok[:, j].mean() > 0.5]
    keep = ok[:, numeric_cols].all(axis=1)
    cells = cells[keep]
    X = parsed[np.ix_(keep, numeric_cols)].T
    genes = cells[:, 0].astype(str)
    heads = [header[j].upper() for j in numeric_cols]
    labels = []
    for h in heads:
        found = [c for c in ("MLL", "AML", "ALL") if re.search(rf"(^|[^A-Z]){c}([^A-Z]|$)", h)]
        labels.append(found[0] if len(found) == 1 else None)
    if None in labels and len(numeric_cols) == len(_MLL_ORDER):
        labels = list(_MLL_ORDER)
    return {"X": X, "genes": genes, "labels": np.array(labels, dtype=str)}


_PARSERS = {"cbcl": (_parse_cbcl, "faces.tar.gz"), "mll": (_parse_mll, "expression_data.txt"),
            "lrs": (_parse_lrs, "lrs.data")}


def _download(info: DatasetInfo, data_dir=None) -> Path:
    """Fetch, parse, verify and cache a real set; return the cached ``.npz``."""
    parse, raw_name = _PARSERS[info.name]
    target = cache_dir() / info.filename
    raw = cache_dir() / "raw" / raw_name
    if not raw.is_file():
        try:
            _fetch(info.url, raw)
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            reason = getattr(exc, "reason", exc)
            where = (f"data_dir={data_dir}" if data_dir is not None else
                     f"NSPCA_DATA_DIR={os.environ.get('NSPCA_DATA_DIR', '(unset)')}")
            raise DatasetUnavailableError(
                f"could not reach {info.url} ({reason}); put {info.filename} in {where} "
                f"(or in the cache {cache_dir()}) and try again") from None
    try:
        arrays = parse(raw)
    except DatasetUnavailableError:
        raise
    except Exception as exc:
        raise DatasetUnavailableError(f"could not parse the download {raw} of {info.name!r}: "
                                      f"{exc}; delete it and try again") from None
    try:
        _verify(info.name, arrays, f"the download {info.url}")
    except ChecksumError:
        raw.unlink(missing_ok=True)  # a bad download must not be reused by the next attempt
        raise
    _save_npz(target, arrays)
    return target


# --------------------------------------------------------------------------- text corpora

def _find_bow(key: str, data_dir) -> tuple[Path, Path | None] | None:
    """(docword, vocab or None) of a local UCI copy in :func:`data_dirs` or ``<cache>/raw``."""
    for d in data_dirs(data_dir) + [cache_dir() / "raw"]:
        for docname in (f"docword.{key}.txt.gz", f"docword.{key}.txt"):
            doc = d / docname
            if doc.is_file():
                vocab = d / f"vocab.{key}.txt"
                return doc, (vocab if vocab.is_file() else None)
    return None


def _corpus_checksum(X, vocabulary) -> str:
    """SHA-256 of a parsed corpus: the canonical CSR arrays and the words."""
    X = X.tocsr()
    X.sum_duplicates()
    X.sort_indices()
    return array_checksum({"data": X.data.astype(np.float64), "indices": X.indices.astype(np.int64),
                           "indptr": X.indptr.astype(np.int64),
                           "vocabulary": np.asarray(vocabulary, dtype=str)})


def _download_bow(info: DatasetInfo, data_dir) -> tuple[Path, Path]:
    """Fetch docword + vocab of a UCI corpus into ``<cache>/raw`` (kept across calls)."""
    raw = cache_dir() / "raw"
    out = []
    for fname in (f"docword.{info.name}.txt.gz", f"vocab.{info.name}.txt"):
        dest = raw / fname
        if not dest.is_file():
            url = _BOW_URL + fname
            try:
                _fetch(url, dest)
            except (urllib.error.URLError, OSError, TimeoutError) as exc:
                reason = getattr(exc, "reason", exc)
                where = (f"data_dir={data_dir}" if data_dir is not None else
                         f"NSPCA_DATA_DIR={os.environ.get('NSPCA_DATA_DIR', '(unset)')}")
                raise DatasetUnavailableError(
                    f"could not reach {url} ({reason}): this machine seems to be offline; "
                    f"download docword.{info.name}.txt.gz and vocab.{info.name}.txt from "
                    f"{_BOW_URL} by hand and put them in {where} (or in {raw}), then try "
                    "again") from None
        out.append(dest)
    return out[0], out[1]


def load_corpus(name: str, *, data_dir=None, download: bool = False):
    """A UCI Bag-of-Words corpus as :class:`nspca_core.text.TextData` (raw counts, CSR).

    Looks for ``docword.NAME.txt.gz`` (or ``.txt``) and ``vocab.NAME.txt`` in
    :func:`data_dirs` and ``<cache>/raw``; with ``download=True`` fetches both
    from the UCI repository into ``<cache>/raw``.  The parsed matrix and words
    are checked against ``nspca_core/data/checksums.json`` when a checksum is recorded
    there; otherwise a note gives the SHA-256 to record.

    Memory: the CSR counts (12 bytes per nonzero; NYTimes 69.7 M nonzeros,
    about 0.85 GB) plus the parser's temporary arrays (about twice that).

    Raises
    ------
    DatasetUnavailableError
        Not found locally and ``download`` is False, or the download failed.
    ChecksumError
        A recorded checksum that does not match.
    """
    from .text import read_uci_bow

    info = get_info(name)
    if info.kind != "text":
        names = [i.name for i in _REGISTRY.values() if i.kind == "text"]
        raise InputError(f"`name` must be a text corpus, one of {names}; got {name!r}")
    if not isinstance(download, bool):
        raise InputError(f"`download` must be True or False; got {download!r}")
    notes = []
    found = _find_bow(info.name, data_dir)
    if found is None:
        if not download:
            searched = ", ".join(str(d) for d in data_dirs(data_dir) + [cache_dir() / "raw"])
            raise DatasetUnavailableError(
                f"corpus {info.name!r} is not available locally: put docword.{info.name}.txt.gz "
                f"and vocab.{info.name}.txt in NSPCA_DATA_DIR (or pass data_dir=...); searched "
                f"{searched}; or call load_dataset({info.name!r}, download=True) to fetch them "
                f"from {_BOW_URL}")
        found = _download_bow(info, data_dir)
        notes.append(f"downloaded from {_BOW_URL} and cached in {found[0].parent}")
    doc, vocab = found
    text = read_uci_bow(doc, vocab)
    if vocab is None:
        notes.append(f"vocab.{info.name}.txt not found next to {doc.name}: words are numbered")
    digest = _corpus_checksum(text.X, text.vocabulary)
    expected = _expected_checksums().get(info.name)
    if expected is not None and vocab is not None:
        if digest != expected["sha256"]:
            raise ChecksumError(
                f"corpus {info.name!r} from {doc} does not match its checksum (expected "
                f"{expected['sha256'][:16]}..., got {digest[:16]}...); the file is corrupt or a "
                "different version: delete it and download again")
        notes.append("checksum verified")
    else:
        notes.append(f"no checksum recorded for {info.name!r} in nspca_core/data/checksums.json; the "
                     f"parsed corpus has sha256 {digest}")
    notes.insert(0, f"loaded {doc.name} from {doc.parent}")
    from .text import TextData
    return TextData(X=text.X, vocabulary=text.vocabulary, notes=notes + text.notes,
                    source_name=doc.name, format=text.format, extra={"sha256": digest})


def _text_weighting_from(preprocessing) -> tuple[str, bool]:
    """(weighting, center) from a ``load_dataset`` preprocessing value for text corpora."""
    items = (preprocessing,) if isinstance(preprocessing, str) or preprocessing is None \
        else tuple(preprocessing)
    weighting, center = "counts", False
    for item in items:
        step = "none" if item is None else str(item).lower().strip()
        if step not in TEXT_PREPROCESSING:
            raise InputError(f"`preprocessing` of a text corpus must be from {TEXT_PREPROCESSING} "
                             f"(or a tuple of them, e.g. ('tfidf', 'center')); got {item!r}")
        if step == "center":
            center = True
        elif step in ("tfidf", "log1p"):
            weighting = step
    return weighting, center


def _load_text_dataset(info: DatasetInfo, preprocessing, data_dir, download) -> "Dataset":
    from .text import text_weighting

    weighting, center = _text_weighting_from(preprocessing)
    corpus = load_corpus(info.name, data_dir=data_dir, download=download)
    w = text_weighting(corpus.X, weighting=weighting, center=center)
    m = w.X.shape[0]
    mean = np.asarray(w.X.sum(axis=0)).ravel() / m if center else None
    steps = (weighting,) + (("center",) if center else ())
    return Dataset(name=info.name, X=w.X, X_raw=corpus.X, feature_names=corpus.vocabulary,
                   labels=None, image_shape=None, preprocessing=steps, info=info,
                   ground_truth=None, notes=corpus.notes + w.notes, mean=mean, scale=None,
                   params={})


# --------------------------------------------------------------------------- preprocessing

def _parse_steps(steps, argname: str) -> tuple:
    allowed = ("center", "standardize", "log1p", "none")
    if steps is None:
        return ()
    items = (steps,) if isinstance(steps, str) else steps
    try:
        items = tuple(items)
    except TypeError:
        raise InputError(f"`{argname}` must be a string or a tuple of steps from "
                         f"{allowed}; got {steps!r}") from None
    out = set()
    for s in items:
        if not isinstance(s, str) or s.lower().strip() not in allowed:
            raise InputError(f"`{argname}` steps must be from {allowed} (or a tuple of them); "
                             f"got {s!r}")
        s = s.lower().strip()
        if s == "none":
            continue
        out.add(s)
        if s == "standardize":
            out.add("center")  # standardizing means centering and scaling
    return tuple(s for s in PREPROCESSING_STEPS if s in out)


def preprocess(X, *, steps=("center",)) -> Preprocessed:
    """Apply the shared preprocessing to a samples x features matrix.

    Parameters
    ----------
    X : array_like (m, n)
        Finite data, samples as rows.
    steps : str or tuple of str
        Any of ``"log1p"``, ``"center"``, ``"standardize"`` (implies ``"center"``),
        ``"none"``.  Steps are applied in the fixed order log1p -> center ->
        standardize whatever order they are given in.

    Returns
    -------
    Preprocessed
        ``X`` (float64 copy), ``steps`` applied, ``mean``, ``scale``, ``notes``.

    Raises
    ------
    InputError
        Unknown step, non-finite data, or log1p on data with negative values.

    Notes
    -----
    ``center`` subtracts each feature's mean, so ``A = X^T X / m`` is the sample
    covariance the papers use (Asteris et al. 2014, Sec. 5).  ``standardize``
    divides each centered feature by its standard deviation (ddof = 0, so ``A``
    has unit diagonal).  A constant feature has standard deviation 0: it is kept
    at zero (scale 1) and a note says so, never a division by zero.  ``log1p``
    maps ``x -> log(1 + x)`` and is only defined here for ``x >= 0``.
    """
    steps = _parse_steps(steps, "steps")
    A = check_matrix(X, "X").copy()
    m, n = A.shape
    notes = []
    mean = scale = None
    if "log1p" in steps:
        neg = A < 0
        if neg.any():
            i, j = np.argwhere(neg)[0]
            raise InputError(f"log1p needs nonnegative data; `X` has {int(neg.sum())} negative "
                             f"value(s), the first at row {i}, column {j} ({A[i, j]:g}); use "
                             "'center' or 'standardize' instead")
        A = np.log1p(A)
        notes.append(f"log1p: every value x replaced by log(1 + x) ({m} x {n} values)")
    if "center" in steps:
        mean = A.mean(axis=0)
        A -= mean
        notes.append(f"centered: each of the {n} features had its mean subtracted")
    if "standardize" in steps:
        sd = A.std(axis=0)
        # a feature is constant when its spread is at rounding level relative to its size
        ref = np.abs(mean) if mean is not None else np.zeros(n)
        const = sd <= 1e-12 * np.maximum(1.0, ref)
        scale = np.where(const, 1.0, sd)
        A /= scale
        if const.any():
            A[:, const] = 0.0
            idx = np.flatnonzero(const)
            shown = ", ".join(str(int(i)) for i in idx[:10]) + (", ..." if idx.size > 10 else "")
            notes.append(f"standardize: {idx.size} constant feature(s) (columns {shown}) have "
                         "zero spread; they were kept at zero instead of dividing by zero")
        notes.append(f"standardized: each non-constant feature divided by its standard "
                     f"deviation (ddof=0)")
    if not steps:
        notes.append("no preprocessing: the raw values are used as they are")
    return Preprocessed(X=A, steps=steps, mean=mean, scale=scale, notes=notes)


# --------------------------------------------------------------------------- loading

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
        notes.append(f"generated with {shown}, seed={seed if not isinstance(seed, np.random.Generator) else 'Generator'}")
    pre = preprocess(X, steps=steps)
    return Dataset(name=name, X=pre.X, X_raw=X, feature_names=names, labels=labels,
                   image_shape=image_shape, preprocessing=pre.steps, info=info,
                   ground_truth=truth, notes=notes + pre.notes, mean=pre.mean,
                   scale=pre.scale, params=params)
