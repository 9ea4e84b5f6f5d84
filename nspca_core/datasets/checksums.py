"""SHA-256 of the *parsed arrays* of the real sets and corpora, checked against the
record ``nspca_core/data/checksums.json`` (package data).
"""

from __future__ import annotations

import hashlib
import json
from importlib.resources import files
from pathlib import Path

import numpy as np

from .types import ChecksumError, DatasetInfo


#: where the checksums of the parsed real datasets live (written once from the
#: local copies, see datasets/README.md; package data, so it installs with the package)
CHECKSUMS_PATH = Path(str(files("nspca_core") / "data" / "checksums.json"))


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


def _verify(info: DatasetInfo, arrays: dict, where: str) -> None:
    """Check the entry's ``checked_arrays`` of ``arrays`` against its recorded checksum."""
    name, checked = info.name, list(info.checked_arrays)
    expected = _expected_checksums()[name]
    got = array_checksum({k: arrays[k] for k in checked})
    if got != expected["sha256"]:
        raise ChecksumError(
            f"dataset {name!r} from {where} does not match its checksum "
            f"(sha256 of arrays {checked}: expected {expected['sha256'][:16]}..., "
            f"got {got[:16]}...); the file is corrupt or a different version: delete it and "
            f"download again (load_dataset({name!r}, download=True)) or replace it with a good copy")


def _corpus_checksum(X, vocabulary) -> str:
    """SHA-256 of a parsed corpus: the canonical CSR arrays and the words."""
    X = X.tocsr()
    X.sum_duplicates()
    X.sort_indices()
    return array_checksum({"data": X.data.astype(np.float64), "indices": X.indices.astype(np.int64),
                           "indptr": X.indptr.astype(np.int64),
                           "vocabulary": np.asarray(vocabulary, dtype=str)})


def _verify_corpus(name: str, digest: str, doc, has_vocab: bool) -> str:
    """Check a parsed corpus's ``digest`` against the record (when one is recorded and the
    words are known); the note that says which."""
    expected = _expected_checksums().get(name)
    if expected is not None and has_vocab:
        if digest != expected["sha256"]:
            raise ChecksumError(
                f"corpus {name!r} from {doc} does not match its checksum (expected "
                f"{expected['sha256'][:16]}..., got {digest[:16]}...); the file is corrupt or a "
                "different version: delete it and download again")
        return "checksum verified"
    return (f"no checksum recorded for {name!r} in nspca_core/data/checksums.json; the "
            f"parsed corpus has sha256 {digest}")
