"""AnnData beyond ``X``: a layer (``layer=``), ``.raw`` (``use_raw=``), an AnnData object already in
memory, and anndata's own warnings kept out of the output (recorded in ``notes``).

The reading itself (``obs`` as metadata, labels, names, sparse kept sparse, float32 kept for
sparse matrices) is :func:`.omics.load_h5ad`'s.
"""

from __future__ import annotations

import io
import warnings

from .._common.validation import InputError
from .loaded import DataFormatError, single_cell_note

ANNDATA_INSTALL = "pip install 'nspca-core[formats]'  (or: pip install anndata)"


def _record(caught, notes: list) -> None:
    seen = set()
    for w in caught:
        text = f"{w.category.__name__}: {str(w.message).splitlines()[0][:200]}"
        if text not in seen:
            seen.add(text)
            notes.append(f"anndata warned (not shown): {text}")


def read_h5ad_quietly(data: bytes, name: str, notes: list):
    """``anndata.read_h5ad`` of ``data``; its warnings recorded in ``notes``, never printed."""
    try:
        import anndata
    except ImportError:
        raise DataFormatError(f"{name}: reading .h5ad files needs the optional package anndata; "
                              f"install it with: {ANNDATA_INSTALL}") from None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            adata = anndata.read_h5ad(io.BytesIO(data))
        except Exception as exc:  # noqa: BLE001 - h5py/anndata raise many kinds on a damaged file
            raise DataFormatError(f"{name}: not a readable AnnData .h5ad file ({type(exc).__name__}: "
                                  f"{exc})") from None
    _record(caught, notes)
    return adata


def pick_matrix(adata, layer, use_raw: bool, name: str, notes: list):
    """``(matrix, var_names)``: ``X``, ``layers[layer]`` or ``raw.X``; what was used said in ``notes``."""
    layers = list(adata.layers.keys())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        raw = adata.raw
    _record(caught, notes)
    head = f"AnnData: {adata.n_obs} observations (cells/samples) x {adata.n_vars} variables (genes)"
    if layer is not None and use_raw:
        raise InputError("`layer` and `use_raw` exclude each other: read a layer, or .raw, or X")
    if layer is not None:
        if not isinstance(layer, str) or layer not in layers:
            raise InputError(f"`layer` must be one of the layers of {name}: {layers or '(none)'}; got {layer!r}")
        notes.append(single_cell_note(f"{head}; layer '{layer}' used" + (
            f" (other layers: {', '.join(x for x in layers if x != layer)})" if len(layers) > 1 else "")))
        return adata.layers[layer], adata.var_names
    if use_raw:
        if raw is None:
            raise InputError(f"`use_raw`: {name} has no .raw (the AnnData object holds only X"
                             + (f" and the layers {layers}" if layers else "") + ")")
        notes.append(single_cell_note(f"AnnData: {adata.n_obs} observations x {raw.n_vars} variables of .raw "
                                      f"used (raw.X, raw.var_names; X has {adata.n_vars})"))
        return raw.X, raw.var_names
    unused = ([f"layers: {', '.join(layers)} (layer= reads one)"] if layers else []) \
        + ([f".raw with {raw.n_vars} variables (use_raw=True reads it)"] if raw is not None else [])
    notes.append(single_cell_note(f"{head}; X used" + (f" (not used: {'; '.join(unused)})" if unused else "")))
    return adata.X, adata.var_names


def from_anndata(data):
    """``data`` itself, or for an in-memory ``anndata.AnnData`` its ``X`` as the estimators take it:
    a DataFrame named by ``var_names`` (dense) or the sparse matrix (its names are then lost).
    AnnData is recognised by its type's name, so anndata is never imported here."""
    if type(data).__name__ != "AnnData" or not hasattr(data, "var_names"):
        return data
    import scipy.sparse as sp

    X = data.X
    if X is None:
        raise InputError("the AnnData object has no X matrix; pass adata.layers[name] or adata.raw.X")
    if sp.issparse(X):
        return X
    import pandas as pd

    return pd.DataFrame(X, index=list(map(str, data.obs_names)), columns=list(map(str, data.var_names)))
