"""The formats of gene-expression and single-cell data: GEO series matrix files, AnnData
``.h5ad`` (through the optional ``anndata`` package) and zipped 10x-style folders
(``matrix.mtx[.gz]`` + ``features.tsv``/``genes.tsv`` + ``barcodes.tsv``).
"""

from __future__ import annotations

import io
from pathlib import PurePosixPath

import numpy as np
import scipy.sparse as sp

from .._common.validation import InputError
from .anndata_io import pick_matrix, read_h5ad_quietly
from .archive import _archive_errors, _check_zip_members, _gunzip, _open_zip, _read_member
from .bow import read_mtx
from .loaded import (
    DataFormatError,
    LoadedData,
    _at_least_two,
    _finish,
    check_sparse_structure,
    made_unique,
    missing_label_note,
    refuse_missing_labels,
)
from .sniff import _MISSING, _decode

#: what to run when ``anndata`` is missing
ANNDATA_INSTALL = "pip install 'nspca-core[formats]'  (or: pip install anndata)"
_GEO_BEGIN, _GEO_END = "!series_matrix_table_begin", "!series_matrix_table_end"


def _base(name: str) -> str:
    return PurePosixPath(str(name).replace("\\", "/")).name.lower()


def is_geo_series(name: str, data: bytes) -> bool:
    """A GEO series matrix: named ``*_series_matrix.txt[.gz]`` or starting with ``!Series_``."""
    base = _base(name)
    if base.endswith(("series_matrix.txt", "series_matrix.txt.gz")):
        return True
    return data[:200].lstrip().startswith(b"!Series_")


def _geo_fields(line: str) -> tuple[str, list]:
    parts = line.rstrip("\r\n").split("\t")
    return parts[0], [p.strip().strip('"').strip() for p in parts[1:]]


def _label_from(metadata, label_column, name: str, notes: list, what: str):
    """Labels from a metadata column named by ``label_column`` (None: no labels)."""
    if label_column is None:
        return None
    cols = [str(c) for c in metadata.columns]
    if isinstance(label_column, str) and label_column in cols:
        refuse_missing_labels(metadata[label_column].tolist(), label_column, name)
        labels = np.array([str(v) for v in metadata[label_column]], dtype=str)
        notes.append(f"labels from {what} '{label_column}' ({len(set(labels.tolist()))} classes)")
        return labels
    raise InputError(f"`label_column` must be one of the {what}s of {name}: {cols[:30]}; got "
                     f"{label_column!r}", argument="label_column", value=label_column, allowed=tuple(cols))


def load_geo(data: bytes, name: str, nan_policy: str, label_column, max_bytes: int) -> LoadedData:
    """A GEO series matrix (``GSE..._series_matrix.txt[.gz]``) as samples x probes.

    The table between ``!series_matrix_table_begin`` and ``!series_matrix_table_end``
    (``"ID_REF"`` then one column per GSM) is transposed: ``sample_names`` are the GSM
    ids, ``feature_names`` the probe ids.  ``metadata`` holds ``!Sample_title``,
    ``!Sample_source_name_ch1`` and one column per key of the
    ``!Sample_characteristics_ch1`` lines (``"key: value"``); ``label_column`` may
    name one of them.  ``null``/empty values are missing (``nan_policy``).
    """
    import pandas as pd

    notes: list = []
    if data[:2] == b"\x1f\x8b":
        data = _gunzip(data, name, max_bytes)
        notes.append("gzip content decompressed")
    text = _decode(data, name, notes)
    lines = text.splitlines()
    starts = [i for i, ln in enumerate(lines) if ln.strip().lower() == _GEO_BEGIN]
    ends = [i for i, ln in enumerate(lines) if ln.strip().lower() == _GEO_END]
    if not starts:
        raise DataFormatError(f"{name}: a GEO series matrix needs its table between the lines "
                              f"'{_GEO_BEGIN}' and '{_GEO_END}'; none found")
    b = starts[0]
    e = next((i for i in ends if i > b), None)
    if e is None:
        raise DataFormatError(f"{name}: the table starts on line {b + 1} ('{_GEO_BEGIN}') but never "
                              f"ends ('{_GEO_END}' missing): the file is truncated")
    meta: dict = {}
    characteristics: list = []
    for ln in lines[:b]:
        if not ln.startswith("!Sample_"):
            continue
        key, values = _geo_fields(ln)
        key = key[len("!Sample_"):]
        if key == "characteristics_ch1":
            characteristics.append(values)
        elif key in ("geo_accession", "title", "source_name_ch1") and key not in meta:
            meta[key] = values
    table = "\n".join(lines[b + 1:e])
    del lines, text
    if not table.strip():
        raise DataFormatError(f"{name}: the series matrix table is empty (no ID_REF line)")
    try:
        df = pd.read_csv(io.StringIO(table), sep="\t", index_col=0, dtype=str, keep_default_na=False)
    except (ValueError, pd.errors.ParserError) as exc:
        raise DataFormatError(f"{name}: the series matrix table cannot be read as tab-separated "
                              f"columns ({exc})") from None
    header = [c.strip().strip('"').strip() for c in table.lstrip("\r\n").split("\n", 1)[0].split("\t")]
    _refuse_repeated_samples(header[1:], name)
    gsm = header[1:] if len(header) - 1 == df.shape[1] else [str(c).strip().strip('"') for c in df.columns]
    probes = _unique_with_note([str(i).strip().strip('"') for i in df.index], notes,
                               "probe id(s) (ID_REF) repeated in the table")
    if df.shape[1] == 0:
        raise DataFormatError(f"{name}: the series matrix table has no sample column (only "
                              f"{df.index.name or 'ID_REF'})")
    cells = df.to_numpy(dtype=object)
    X = np.empty(cells.shape, dtype=np.float64)
    for j in range(cells.shape[1]):
        col = np.array([str(c).strip().strip('"') for c in cells[:, j]], dtype=object)
        miss = np.array([c.lower() in _MISSING for c in col])
        try:
            X[:, j] = np.where(miss, "nan", col).astype(np.float64)
        except ValueError:
            bad = next(c for c, mi in zip(col, miss) if not mi and not _is_float(c))
            raise DataFormatError(f"{name}: sample column '{gsm[j]}' holds {bad!r}, not a number; "
                                  "the series matrix table must hold numbers (or null for "
                                  "missing)") from None
    notes.append(f"GEO series matrix: {len(probes)} probes x {len(gsm)} samples, read as "
                 f"{len(gsm)} samples x {len(probes)} features (the table's rows are probes)")
    columns: dict = {"geo_accession": list(gsm)}
    if meta.get("geo_accession") and len(meta["geo_accession"]) == len(gsm):
        if meta["geo_accession"] != gsm:
            notes.append("the !Sample_ lines list the samples in another order than the table: "
                         "matched by GSM id")
        order = {g: i for i, g in enumerate(meta["geo_accession"])}
        pick = [order.get(g) for g in gsm]
        if None in pick:
            notes.append("some table columns have no !Sample_ lines: their metadata is empty")

        def aligned(values):
            return [values[i] if i is not None and i < len(values) else "" for i in pick]

        for key in ("title", "source_name_ch1"):
            if key in meta:
                columns[key] = aligned(meta[key])
        for values in characteristics:
            vals = aligned(values)
            keys = {v.split(":", 1)[0].strip() for v in vals if ":" in v}
            if len(keys) == 1:
                key = keys.pop()
                col = [v.split(":", 1)[1].strip() if ":" in v else v for v in vals]
            else:
                key, col = "characteristics_ch1", vals
            while key in columns:
                key += "_"
            columns[key] = col
    metadata = pd.DataFrame(columns)
    labels = _label_from(metadata, label_column, name, notes, "sample column")
    if labels is None:
        notes.append("no labels: name one of the sample columns "
                     f"({', '.join(list(columns)[1:8])}) as the label column, or give a sample sheet"
                     if len(columns) > 1 else "no labels: the file has no !Sample_ annotation lines; "
                     "give a sample sheet")
    return _finish(X.T, probes, labels, metadata, None, notes, name, "geo", nan_policy,
                   variable=label_column, sample_names=gsm,
                   extra={"orientation": "rows-are-features"})


def _refuse_repeated_samples(gsm: list, name: str) -> None:
    """A sample column written twice in a series matrix table is refused by name (never renamed
    ``GSM2.1`` and read as another sample)."""
    seen: dict = {}
    for j, g in enumerate(gsm):
        seen.setdefault(g, []).append(j)
    twice = {g: js for g, js in seen.items() if len(js) > 1}
    if twice:
        g, js = next(iter(twice.items()))
        raise DataFormatError(f"{name}: {len(twice):,} sample column(s) appear more than once in the table "
                              f"header (first: '{g}', columns {', '.join(str(j + 2) for j in js)}); each "
                              "sample must have one column")


def _unique_with_note(names: list, notes: list, what: str) -> list:
    """``names`` made unique (``.1``, ``.2``, ... on the repeats) with a note counting them."""
    out, repeated = made_unique(names)
    if repeated:
        first = next(iter(repeated))
        notes.append(f"{len(names) - len(set(names)):,} {what} ({len(repeated):,} distinct, first: "
                     f"'{first}', {repeated[first]} times): made unique with .1, .2, ... (each keeps "
                     "its values)")
    return out


def _is_float(t: str) -> bool:
    try:
        float(t)
        return True
    except ValueError:
        return False


def _sparse_result(X, features, samples, metadata, labels, notes, name, fmt, variable=None,
                   extra=None) -> LoadedData:
    check_sparse_structure(X, name, "cells", "genes")  # before any kernel touches the indices
    # float32 kept (the sparse operators accept it: half the memory of a large atlas)
    X = sp.csr_matrix(X, dtype=np.float32 if X.dtype == np.float32 else np.float64)
    if not np.isfinite(X.data).all():
        raise DataFormatError(f"{name}: {int((~np.isfinite(X.data)).sum())} NaN/inf value(s) in the "
                              "sparse matrix; they must be finite")
    _at_least_two(X.shape, name, "a single row (sample/cell); PCA needs at least 2",
                  "a single column (feature); sparse PCA needs at least 2")
    return LoadedData(X=X, feature_names=[str(f) for f in features], labels=labels, image_shape=None,
                      notes=notes, metadata=metadata, source_name=name, format=fmt, variable=variable,
                      extra={"sparse": True, "nnz": int(X.nnz), "orientation": "rows-are-samples",
                             **(extra or {})},
                      sample_names=[str(s) for s in samples])


def load_h5ad(data: bytes, name: str, nan_policy: str, label_column, layer=None, use_raw=False,
              adata=None) -> LoadedData:
    """An AnnData ``.h5ad``: ``X`` (kept sparse when sparse), ``obs`` as metadata (labels from a
    categorical column, or ``label_column``), ``var_names``/``obs_names`` as the names.
    ``layer``/``use_raw`` read a layer or ``.raw`` instead of ``X`` (:mod:`.anndata_io`);
    ``adata`` an AnnData object already in memory (``data`` is then unused)."""
    notes: list = []
    if adata is None:
        adata = read_h5ad_quietly(data, name, notes)
    X, var_names = pick_matrix(adata, layer, use_raw, name, notes)
    if X is None:
        raise DataFormatError(f"{name}: the AnnData object has no X matrix")
    X = _numeric_x(X, name)
    obs = adata.obs.copy()
    for c in obs.columns:
        if str(obs[c].dtype) == "category":
            obs[c] = obs[c].astype(str)
    metadata = obs.reset_index(drop=True) if obs.shape[1] else None
    labels = None
    if label_column is not None:
        labels = _label_from(obs, label_column, name, notes, "obs column")
    else:
        for c in [c for c in adata.obs.columns if str(adata.obs[c].dtype) == "category"]:
            values = adata.obs[c].tolist()
            note = missing_label_note(values, c, "the categorical obs column")
            if note is not None:
                notes.append(note)
                continue
            labels = np.array([str(v) for v in values], dtype=str)
            label_column = str(c)
            notes.append(f"labels from the categorical obs column '{c}' ({len(set(labels.tolist()))} classes)")
            break
    features = _unique_with_note(list(map(str, var_names)), notes, "variable name(s) (var_names) repeated")
    samples = _unique_with_note(list(map(str, adata.obs_names)), notes, "observation name(s) (obs_names) repeated")
    if sp.issparse(X):
        return _sparse_result(X, features, samples, metadata, labels, notes, name, "h5ad",
                              variable=label_column)
    return _finish(np.asarray(X), features, labels, metadata, None, notes, name, "h5ad", nan_policy,
                   variable=label_column, sample_names=samples,
                   extra={"orientation": "rows-are-samples"})


def _numeric_x(X, name: str):
    """``X`` when it holds numbers; text (strings, or objects that are not numbers) refused with
    an example and where it is."""
    dtype = X.dtype
    if dtype.kind in "biuf":
        return X
    if sp.issparse(X):
        raise DataFormatError(f"{name}: X is a sparse matrix of dtype {dtype}, not of numbers; X must "
                              "hold counts or expression values")
    arr = np.asarray(X)
    if dtype.kind == "O":
        try:
            return arr.astype(np.float64)
        except (TypeError, ValueError):
            pass
    flat = arr.ravel()
    k = next((i for i, v in enumerate(flat) if not _is_number(v)), 0)
    i, j = divmod(k, arr.shape[1]) if arr.ndim == 2 and arr.shape[1] else (k, 0)
    raise DataFormatError(f"{name}: X holds text, not numbers (dtype {dtype}; e.g. {flat[k]!r} at cell "
                          f"{i + 1}, gene {j + 1}); X must hold counts or expression values — text "
                          "about the cells belongs in obs, about the genes in var")


def _is_number(v) -> bool:
    if isinstance(v, (bytes, str)):
        return _is_float(v.decode("utf-8", "replace") if isinstance(v, bytes) else v)
    try:
        float(v)
        return True
    except (TypeError, ValueError):
        return False


_TENX = {"matrix": ("matrix.mtx", "matrix.mtx.gz"),
         "features": ("features.tsv", "features.tsv.gz", "genes.tsv", "genes.tsv.gz"),
         "barcodes": ("barcodes.tsv", "barcodes.tsv.gz")}


def tenx_members(data: bytes, name: str) -> dict | None:
    """``{"matrix"|"features"|"barcodes": ZipInfo}`` of a zipped 10x folder, or None."""
    zf = _open_zip(data, name)
    with _archive_errors(name):
        infos = [i for i in zf.infolist() if not i.is_dir()]
    by_dir: dict = {}
    for info in infos:
        path = PurePosixPath(info.filename.replace("\\", "/"))
        if path.name.startswith(".") or "__MACOSX" in path.parts:
            continue
        for role, names in _TENX.items():
            if path.name.lower() in names:
                by_dir.setdefault(str(path.parent), {})[role] = info
    full = [found for found in by_dir.values() if len(found) == 3]
    if len(full) > 1:
        raise DataFormatError(f"{name}: {len(full)} 10x folders in one archive; zip one folder "
                              "(matrix.mtx + features.tsv + barcodes.tsv)")
    if full:
        return full[0]
    partial = [found for found in by_dir.values() if "matrix" in found and len(found) < 3]
    if partial and any(r in partial[0] for r in ("features", "barcodes")):
        lacking = [r for r in _TENX if r not in partial[0]]
        raise DataFormatError(f"{name}: a 10x folder needs matrix.mtx[.gz], features.tsv (or "
                              f"genes.tsv) and barcodes.tsv[.gz]; missing: {', '.join(lacking)}")
    return None


def _tsv_lines(raw: bytes, name: str, member: str, max_bytes: int) -> list:
    text = _decode(_gunzip(raw, f"{name}:{member}", max_bytes), f"{name}:{member}", [])
    return [ln.split("\t") for ln in text.splitlines() if ln.strip()]


def load_tenx(data: bytes, name: str, members: dict, max_bytes: int) -> LoadedData:
    """A zipped 10x folder: the genes x cells Matrix Market file read as cells x genes (CSR),
    gene names (the features file's second column, else its first) as features, barcodes as
    sample names."""

    zf = _open_zip(data, name)
    with _archive_errors(name):
        _check_zip_members([i for i in zf.infolist() if not i.is_dir()], name, max_bytes,
                           allow=(".mtx.gz", ".tsv.gz"))
        raw = {role: _read_member(zf, info, max_bytes, name) for role, info in members.items()}
    features = _tsv_lines(raw["features"], name, members["features"].filename, max_bytes)
    barcodes = [r[0].strip() for r in _tsv_lines(raw["barcodes"], name, members["barcodes"].filename,
                                                 max_bytes)]
    where = f"{name}:{members['matrix'].filename}"
    # the matrix's gzip content under the cap (a 3 MB bomb expands to GBs), truncation a message
    mat = read_mtx(_gunzip(raw.pop("matrix"), where, max_bytes), filename=where, transpose=True)
    X = mat.X
    n_cells, n_genes = X.shape
    if len(features) != n_genes or len(barcodes) != n_cells:
        raise DataFormatError(
            f"{name}: matrix.mtx holds {n_genes} genes x {n_cells} cells but "
            f"{members['features'].filename} lists {len(features)} and "
            f"{members['barcodes'].filename} {len(barcodes)}; they must match (genes as the rows "
            "of matrix.mtx)")
    notes = [nt for nt in mat.notes if "vocabulary" not in nt and "document" not in nt]
    notes += [f"10x folder: {n_genes} genes x {n_cells} cells, read as {n_cells} "
                               f"cells x {n_genes} genes (sparse)"]
    ids = [r[0].strip() for r in features]
    genes = [(r[1].strip() if len(r) > 1 and r[1].strip() else r[0].strip()) for r in features]
    genes, repeated = made_unique(genes)
    if repeated:
        notes.append(f"{sum(repeated.values()) - len(repeated)} repeated gene name(s) made unique (.1, .2, ...)")
    return _sparse_result(X, genes, barcodes, None, None, notes, name, "10x",
                          extra={"feature_ids": ids})


def load_anndata_object(adata, name: str, *, nan_policy: str, label_column, layer=None,
                        use_raw: bool = False) -> LoadedData:
    """An in-memory ``anndata.AnnData`` read like an ``.h5ad`` file."""
    return load_h5ad(b"", name, nan_policy, label_column, layer=layer, use_raw=use_raw, adata=adata)


def load_h5ad_layer(data: bytes, name: str, *, nan_policy: str, label_column, layer=None,
                    use_raw: bool = False) -> LoadedData:
    """An ``.h5ad`` file's layer or ``.raw``."""
    return load_h5ad(data, name, nan_policy, label_column, layer=layer, use_raw=use_raw)
