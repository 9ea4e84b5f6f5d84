"""GEO SOFT files, streamed: DataSet files (``GDSxxx.soft[.gz]``) and family files
(``GSExxx_family.soft[.gz]``), read as samples x probes.

The format (GEO's "Simple Omnibus Format in Text"): lines starting ``^`` open an entity
(``^DATABASE``, ``^DATASET``, ``^SUBSET``, ``^SERIES``, ``^PLATFORM``, ``^SAMPLE``, written
``^KIND = id``), ``!key = value`` lines are its attributes, ``#column = description`` lines
describe its table's columns, and the table itself sits between ``!<kind>_table_begin`` and
``!<kind>_table_end`` (tab-separated, a header line first).

- DataSet: one table ``ID_REF, IDENTIFIER, GSM...`` (probes x samples); every ``^SUBSET``
  (``!subset_type`` such as "disease state", ``!subset_description`` its value,
  ``!subset_sample_id`` the GSM ids) becomes a sample-sheet column of ``metadata``.
- Family: one ``^SAMPLE`` block per sample, each with its own ``ID_REF, VALUE, ...`` table
  on the platform ``!Sample_platform_id``; the samples of one platform are joined on
  ``ID_REF`` (a probe absent from a sample is missing there, ``nan_policy``).

The file is read line by line (a path is never read whole; gzip/bzip2/xz/zstd content is
decompressed as it is read, capped at ``max_bytes``): the memory held is the numeric table,
about twice while it is assembled.
"""

from __future__ import annotations


import numpy as np

from .._common.validation import InputError
from .loaded import DataFormatError, LoadedData, _finish
from .soft_common import (_ENTITIES, _SYMBOL_COLUMNS, _attr, _base, _duplicates, _floats,  # noqa: F401
                          _Lines, _listed, _pick_label, _records, _Source, _symbol_names, _table,
                          _unique_names, is_soft)
from .soft_family import load_family


def load_soft(source, name: str, *, max_bytes: int, nan_policy: str, label_column=None, platform=None,
              feature_names=None) -> LoadedData:
    """A GEO SOFT file (DataSet or family) from a path or bytes; see the module docstring."""
    if platform is not None and not isinstance(platform, str):
        raise InputError(f"`platform` must be a GEO platform id such as 'GPL570'; got {platform!r}")
    src = _Source(source, name, max_bytes)
    with src.open() as fh:
        for first in fh:
            if first.strip():
                break
        else:
            raise DataFormatError(f"{name}: the file is empty")
        head = first.strip()
        if not head.startswith("^"):
            raise DataFormatError(f"{name}: not a GEO SOFT file: it must start with an entity line such as "
                                  f"'^DATABASE = GeoMiame' or '^DATASET = GDS507'; got {head[:40]!r}")
        # a DataSet file starts ^DATABASE then ^DATASET; a family file ^DATABASE then ^SERIES/^PLATFORM
        kind = head[1:].split("=", 1)[0].strip().upper()
        if kind == "DATABASE":
            kind = None
            for line in fh:
                if line.startswith("^"):
                    kind = line[1:].split("=", 1)[0].strip().upper()
                    break
    if kind == "DATASET":
        if platform is not None:
            raise InputError(f"`platform` applies to GEO family SOFT files; {name} is a DataSet "
                             "(one platform)")
        with src.open() as stream:  # read again from the start (nothing kept of the look ahead)
            return _load_dataset(_Lines(stream), name, nan_policy, label_column, feature_names)
    if kind in ("SERIES", "PLATFORM", "SAMPLE"):
        with src.open() as stream:
            return load_family(_Lines(stream), src, name, nan_policy, label_column, platform, feature_names)
    raise DataFormatError(f"{name}: a SOFT file without a ^DATASET, ^SERIES, ^PLATFORM or ^SAMPLE "
                          "block; GEO DataSet (GDS) and family (GSE) SOFT files are read")


def _dataset_table(block: str, name: str, start: int):
    """``(header, probe ids, identifiers, values probes x samples)`` of a DataSet table's text."""
    first = block[:block.find("\n") if "\n" in block else len(block)]
    header = [h.strip() for h in first.rstrip("\r").split("\t")]
    if len(header) < 4 or header[0].upper() != "ID_REF" or header[1].upper() != "IDENTIFIER":
        raise DataFormatError(f"{name}: line {start + 1}: a DataSet table starts with the header "
                              "'ID_REF, IDENTIFIER, GSM...' (at least 2 samples); got "
                              f"{_listed(header, 4)}")
    dup = _duplicates(header[2:])
    if dup:
        raise DataFormatError(f"{name}: duplicated sample id(s) in the DataSet table: {_listed(dup)}; every "
                              "id must be unique")
    cols = list(range(len(header)))
    got, columns = _table(block, name, "the DataSet", start, lambda h: cols, numeric=list(range(2, len(cols))))
    if not columns[0]:
        raise DataFormatError(f"{name}: the DataSet table has a header but no probe rows")
    ids = [str(i).strip() for i in columns[0]]
    symbols = [str(i).strip() for i in columns[1]]
    if all(isinstance(c, np.ndarray) and c.dtype == np.float64 for c in columns[2:]):
        values = np.column_stack(columns[2:])
    else:
        cells = np.column_stack([np.asarray(c, dtype=str) for c in columns[2:]])
        values = _floats(cells, name, lambda p: f"line {start + 2 + int(p[0])}, sample column "
                                                 f"{header[2 + int(p[1])]!r}")
    return header, ids, symbols, values


def _load_dataset(stream, name: str, nan_policy: str, label_column, feature_names) -> LoadedData:
    import pandas as pd

    notes: list = []
    subsets: list = []
    attrs: dict = {}
    descriptions: dict = {}
    entity = None
    header = None
    blocks, ids, symbols = [], [], []
    table_line = None
    for kind, key, value, lineno in _records(stream):
        if kind == "^":
            entity = key
            if entity == "SUBSET":
                subsets.append({"id": value})
        elif kind == "table" and key == "dataset":
            if table_line is not None:
                raise DataFormatError(f"{name}: line {lineno}: a second DataSet table; one is read")
            table_line = lineno
            if value is None:
                break
            table_line = -table_line  # ended
            header, ids, symbols, values = _dataset_table(value, name, lineno)
            blocks.append(values)
        elif kind == "!" and entity == "SUBSET" and subsets:
            subsets[-1][key] = value
        elif kind == "!" and entity == "DATASET":
            attrs.setdefault(key, value)
        elif kind == "#" and entity == "DATASET":
            descriptions[key] = value
    if table_line is None:
        raise DataFormatError(f"{name}: a DataSet SOFT file needs its table between '!dataset_table_begin' "
                              "and '!dataset_table_end'; none found")
    if table_line > 0:
        raise DataFormatError(f"{name}: the DataSet table starts on line {table_line + 1} but never ends "
                              "('!dataset_table_end' missing): the file is truncated")
    if not blocks:
        raise DataFormatError(f"{name}: the DataSet table has a header but no probe rows")
    gsm = header[2:]
    for what, values in (("sample", gsm), ("probe (ID_REF)", ids)):
        dup = _duplicates(values)
        if dup:
            raise DataFormatError(f"{name}: duplicated {what} id(s) in the DataSet table: {_listed(dup)}; "
                                  "every id must be unique")
    X = np.concatenate(blocks, axis=0).T  # samples x probes
    blocks.clear()
    notes.append(f"GEO DataSet SOFT{' ' + attrs['dataset_platform'] if 'dataset_platform' in attrs else ''}: "
                 f"{len(ids)} probes x {len(gsm)} samples, read as {len(gsm)} samples x {len(ids)} "
                 "features (the table's rows are probes)"
                 + (f"; values: {attrs['dataset_value_type']}" if "dataset_value_type" in attrs else ""))
    columns: dict = {"geo_accession": list(gsm)}
    titles = []
    for g in gsm:
        d = descriptions.get(g, "")
        d = d.split(":", 1)[1].strip() if d.lower().startswith("value for") and ":" in d else d
        titles.append(d.split("; src:", 1)[0].strip())
    if any(titles):
        columns["title"] = titles
    types: list = []
    shared = 0
    for s in subsets:
        t = s.get("subset_type", "").strip() or "subset"
        if t not in types:
            types.append(t)
            if t in columns:
                t_key = t + "_"
                types[-1] = t_key
                t = t_key
            columns[t] = [""] * len(gsm)
        member = {x.strip() for x in s.get("subset_sample_id", "").split(",") if x.strip()}
        for j, g in enumerate(gsm):
            if g in member:
                if columns[t][j]:
                    shared += 1
                columns[t][j] = (columns[t][j] + "; " if columns[t][j] else "") + s.get("subset_description", "")
    if shared:
        notes.append(f"{shared} sample(s) belong to several subsets of one type: their values are joined "
                     "with '; '")
    unassigned = sorted({g for t in types for g, v in zip(gsm, columns[t]) if not v})
    if unassigned:
        notes.append(f"{len(unassigned)} sample(s) are in no subset of some type: empty there "
                     f"({_listed(unassigned)})")
    metadata = pd.DataFrame(columns)
    labels, used = _pick_label(metadata, types, label_column, name, notes, "subset type")
    if labels is None:
        notes.append("no labels: the DataSet has no subset type with at least 2 classes"
                     if label_column is None else "")
    names = _symbol_names(ids, symbols, feature_names, name, notes)
    return _finish(X, names, labels, metadata, None, notes, name, "geo-soft", nan_policy, variable=used,
                   sample_names=list(gsm),
                   extra={"orientation": "rows-are-features", "gene_symbols": symbols, "feature_ids": ids,
                          "soft": "dataset"})


