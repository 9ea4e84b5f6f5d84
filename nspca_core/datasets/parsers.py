"""The original files of the real sets (CBCL tarball, MLL expression table, LRS
records) parsed in memory into the arrays of their ``.npz`` copies.
"""

from __future__ import annotations

import io
import re
import tarfile
from pathlib import Path

import numpy as np

from .types import DatasetUnavailableError


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
