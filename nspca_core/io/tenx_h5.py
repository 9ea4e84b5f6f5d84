"""Cell Ranger's HDF5 matrix (``filtered_feature_bc_matrix.h5``) through h5py, kept sparse.

Layout (Cell Ranger >= 3): group ``matrix`` with ``data``, ``indices``, ``indptr``, ``shape``
(a features x barcodes CSC matrix: column j = cell j), ``barcodes`` and ``features/{id, name,
feature_type}``.  Cell Ranger 2 wrote one group per genome with ``genes``/``gene_names``
instead of ``features``; both are read.  CSC features x cells is exactly CSR cells x
features, so nothing is transposed or densified.
"""

from __future__ import annotations

import io

import numpy as np

from .loaded import DataFormatError, LoadedData, made_unique, over_cap

#: what to run when h5py is missing
H5PY_INSTALL = "pip install 'nspca-core[formats]'  (or: pip install h5py)"
_NEEDED = ("data", "indices", "indptr", "shape", "barcodes")


def _strings(ds) -> list:
    return [v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v) for v in ds[()]]


def _group(f, name: str):
    """The matrix group: ``matrix`` (v3) or the single genome group (v2)."""
    if "matrix" in f:
        return f["matrix"], "v3"
    groups = [k for k in f.keys() if hasattr(f[k], "keys") and all(n in f[k] for n in _NEEDED)]
    if len(groups) == 1:
        return f[groups[0]], "v2"
    hint = "; it looks like an AnnData file: give it the extension .h5ad" if {"obs", "var"} <= set(f.keys()) else ""
    raise DataFormatError(f"{name}: not a 10x (Cell Ranger) HDF5 matrix: it needs a group 'matrix' with "
                          "data, indices, indptr, shape, barcodes and features/name, features/id; found "
                          f"groups {list(f.keys())[:10]}{hint}")


def load_tenx_h5(data: bytes, name: str, *, max_bytes: int, feature_names=None) -> LoadedData:
    """A Cell Ranger ``.h5`` as cells x genes (CSR), gene symbols (``features/name``) as feature names
    (``feature_names="id"``: the Ensembl ids), barcodes as sample names."""
    import scipy.sparse as sp

    try:
        import h5py
    except ImportError:
        raise DataFormatError(f"{name}: reading 10x HDF5 files needs the optional package h5py; install it "
                              f"with: {H5PY_INSTALL}") from None
    if not data.startswith(b"\x89HDF\r\n\x1a\n"):
        raise DataFormatError(f"{name}: not an HDF5 file (it does not start with the HDF5 signature); a 10x "
                              ".h5 is written by Cell Ranger")
    try:
        f = h5py.File(io.BytesIO(data), "r")
    except Exception as exc:  # noqa: BLE001 - h5py raises OSError/KeyError/... on a damaged file
        raise DataFormatError(f"{name}: not a readable HDF5 file ({type(exc).__name__}: {exc})") from None
    try:
        with f:
            return _read(f, name, max_bytes, feature_names, sp)
    except DataFormatError:
        raise
    except Exception as exc:  # noqa: BLE001 - damaged datasets surface as OSError/ValueError/KeyError
        raise DataFormatError(f"{name}: the 10x HDF5 file is damaged or not as Cell Ranger writes it "
                              f"({type(exc).__name__}: {exc})") from None


def _read(f, name, max_bytes, feature_names, sp) -> LoadedData:
    g, version = _group(f, name)
    missing = [k for k in _NEEDED if k not in g]
    feats = g.get("features") if version == "v3" else None
    if version == "v3" and (feats is None or "id" not in feats or "name" not in feats):
        missing.append("features/id, features/name")
    if version == "v2" and not ("genes" in g and "gene_names" in g):
        missing.append("genes, gene_names")
    if missing:
        raise DataFormatError(f"{name}: the 10x matrix group lacks {', '.join(missing)}")
    shape = tuple(int(v) for v in g["shape"][()])
    if len(shape) != 2 or min(shape) < 0:
        raise DataFormatError(f"{name}: matrix/shape must hold 2 sizes (features, barcodes); got {shape}")
    n_genes, n_cells = shape
    nnz = int(g["data"].shape[0])
    need = nnz * (4 + 4) + (n_cells + 1) * 8 + n_genes * 64 + n_cells * 32
    if need > max_bytes * 4:  # bounded before any array is read (a forged shape or nnz)
        raise over_cap(name, f"the matrix holds {nnz:,} nonzeros for {n_cells:,} cells x {n_genes:,} genes, "
                             f"about {need:,} bytes in memory, over ", max_bytes, times=4)
    if g["indices"].shape[0] != nnz or g["indptr"].shape[0] != n_cells + 1:
        raise DataFormatError(f"{name}: inconsistent 10x matrix: {nnz} values, {g['indices'].shape[0]} indices "
                              f"and {g['indptr'].shape[0]} pointers for {n_cells} barcodes (expected "
                              f"{n_cells + 1} pointers)")
    indptr = g["indptr"][()].astype(np.int64)
    indices = g["indices"][()]
    if indptr[0] != 0 or indptr[-1] != nnz or (np.diff(indptr) < 0).any():
        raise DataFormatError(f"{name}: matrix/indptr must rise from 0 to the number of values ({nnz}); it "
                              "does not (a damaged file)")
    if nnz and (indices.min() < 0 or indices.max() >= n_genes):
        raise DataFormatError(f"{name}: matrix/indices hold a feature index outside [0, {n_genes}) (a damaged "
                              "file)")
    values = g["data"][()]
    if values.dtype.kind not in "iuf":
        raise DataFormatError(f"{name}: matrix/data holds {values.dtype} values; counts must be numbers")
    barcodes = _strings(g["barcodes"])
    if version == "v3":
        ids, symbols = _strings(feats["id"]), _strings(feats["name"])
        types = _strings(feats["feature_type"]) if "feature_type" in feats else []
    else:
        ids, symbols, types = _strings(g["genes"]), _strings(g["gene_names"]), []
    if len(barcodes) != n_cells or len(ids) != n_genes or len(symbols) != n_genes:
        raise DataFormatError(f"{name}: the matrix is {n_genes} features x {n_cells} barcodes but the file lists "
                              f"{len(ids)} feature ids, {len(symbols)} names and {len(barcodes)} barcodes")
    seen_b: set = set()
    dup = sorted({b for b in barcodes if b in seen_b or seen_b.add(b)})
    if dup:
        raise DataFormatError(f"{name}: duplicated barcode(s) {dup[:5]}; every cell must be unique")
    notes = [f"10x HDF5 (Cell Ranger {version}): {n_genes} features x {n_cells} barcodes, read as {n_cells} "
             f"cells x {n_genes} features (sparse, {nnz:,} nonzeros)"]
    if types and len(set(types)) > 1:
        counts = {t: types.count(t) for t in dict.fromkeys(types)}
        notes.append("feature types: " + ", ".join(f"{t} ({c})" for t, c in counts.items()))
    # counts are integers: float32 holds them exactly below 2**24 (half the memory of float64)
    if values.dtype.kind in "iu" and (nnz == 0 or int(values.max()) < 2 ** 24) or values.dtype == np.float32:
        dtype = np.float32
    else:
        dtype = np.float64
    X = sp.csr_matrix((values.astype(dtype, copy=False), indices, indptr), shape=(n_cells, n_genes))
    if not np.isfinite(X.data).all():
        raise DataFormatError(f"{name}: {int((~np.isfinite(X.data)).sum())} NaN/inf value(s) in the matrix; "
                              "counts must be finite")
    if n_cells < 2 or n_genes < 2:
        raise DataFormatError(f"{name}: {n_cells} cell(s) x {n_genes} feature(s); PCA needs at least 2 of each")
    names = ids if feature_names == "id" else symbols
    names, repeated = made_unique(names)
    if repeated:
        notes.append(f"{sum(repeated.values()) - len(repeated)} repeated feature name(s) made unique "
                     "(.1, .2, ...)")
    notes.append("feature names: " + ("feature ids (features/id)" if feature_names == "id" else
                                      "gene symbols (features/name); the ids are in extra['feature_ids']"))
    return LoadedData(X=X, feature_names=names, labels=None, image_shape=None, notes=notes, metadata=None,
                      source_name=name, format="10x", variable=None,
                      extra={"sparse": True, "nnz": int(X.nnz), "orientation": "rows-are-samples",
                             "feature_ids": ids, "gene_symbols": symbols, "feature_types": types,
                             "file": "h5"},
                      sample_names=barcodes)
