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

import io

import numpy as np

from .._common.validation import InputError
from .loaded import DataFormatError, LoadedData, _finish
from .sniff import _MISSING
from .soft_common import (_ENTITIES, _SYMBOL_COLUMNS, _Source, _attr, _base, _duplicates, _floats,  # noqa: F401
                          _listed, _pick_label, _symbol_names, _unique_names, is_soft)


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
            return _load_family(_Lines(stream), src, name, nan_policy, label_column, platform, feature_names)
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
    lineno = 0
    for line in stream:
        lineno += 1
        if line.startswith("^"):
            key, value = _attr(line)
            entity = key.upper()
            if entity == "SUBSET":
                subsets.append({"id": value})
        elif line.startswith("!"):
            key, value = _attr(line)
            low = key.lower()
            if low == "dataset_table_begin":
                if table_line is not None:
                    raise DataFormatError(f"{name}: line {lineno}: a second DataSet table; one is read")
                table_line = lineno
                block, count, ended = stream.until("!dataset_table_end")
                lineno += count
                if not ended:
                    break
                table_line = -table_line  # ended
                header, ids, symbols, values = _dataset_table(block, name, -table_line)
                blocks.append(values)
                del block
            elif entity == "SUBSET" and subsets:
                subsets[-1][low] = value
            elif entity == "DATASET":
                attrs.setdefault(low, value)
        elif line.startswith("#") and entity == "DATASET":
            key, value = _attr(line)
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


class _Sample:
    __slots__ = ("gsm", "platform", "title", "source", "characteristics", "positions", "values", "line")

    def __init__(self, gsm, line):
        self.gsm, self.line = gsm, line
        self.platform = self.title = self.source = ""
        self.characteristics: list = []
        self.positions = self.values = None


def _platform_counts(src: _Source) -> dict:
    """Samples per platform (``!Sample_platform_id`` lines), by a scan of the file in 1 MB chunks."""
    import re

    pattern = re.compile(r"^!Sample_platform_id\s*=\s*(\S*)", re.M)
    counts: dict = {}
    carry = ""
    with src.open() as fh:
        while True:
            chunk = fh.read(1 << 20)
            text = carry + chunk
            cut = text.rfind("\n") + 1 if chunk else len(text)  # whole lines only, the rest carried
            for p in pattern.findall(text, 0, cut):
                counts[p] = counts.get(p, 0) + 1
            carry = text[cut:]
            if not chunk:
                return counts


class _Lines:
    """Lines of a text stream, and whole tables cut out of it at C speed (:meth:`until`)."""

    def __init__(self, fh):
        self.fh, self.pend = fh, None

    def __iter__(self):
        return self

    def __next__(self):
        if self.pend is not None:
            line = self.pend.readline()
            if line.endswith("\n"):
                return line
            self.pend = None
            line += self.fh.readline()
        else:
            line = self.fh.readline()
        if not line:
            raise StopIteration
        return line

    def until(self, marker: str) -> tuple[str, int, bool]:
        """The text up to the line starting with ``marker`` (that line consumed): ``(text, lines
        consumed, found)``."""
        text = "\n" + (self.pend.read() if self.pend is not None else "")
        self.pend = None
        need = "\n" + marker
        start = 0
        while True:
            k = text.find(need, start)
            if k >= 0:
                e = text.find("\n", k + 1)
                while e < 0:
                    more = self.fh.read(1 << 20)
                    if not more:
                        e = len(text)
                        break
                    text += more
                    e = text.find("\n", k + 1)
                block = text[1:k + 1]
                self.pend = io.StringIO(text[e + 1:])
                return block, block.count("\n") + 1, True
            chunk = self.fh.read(1 << 20)
            if not chunk:
                return text[1:], text.count("\n"), False
            start = max(0, len(text) - len(need))
            text += chunk


def _table(block: str, name: str, what: str, start: int, want, numeric: int | None = None):
    """Columns of a SOFT table (its text, the header line first) as lists: ``want(header)`` gives
    the column positions read; column ``numeric`` (a position) is read as float64 when every cell
    is a number or a missing mark (else as str, for the caller to find the culprit).  Parsed by
    pandas' C reader (quotes are literal, as GEO writes them)."""
    import csv

    import pandas as pd

    first = block[:block.find("\n") if "\n" in block else len(block)]
    header = [h.strip() for h in first.rstrip("\r").split("\t")] if block.strip() else []
    cols = want(header)
    numeric = set() if numeric is None else {cols[k] for k in (numeric if isinstance(numeric, list) else [numeric])}
    if block.count("\n") < 1 or not block[len(first) + 1:].strip():
        return header, [[] for _ in cols]
    missing = sorted({v for t in _MISSING for v in (t, t.upper(), t.capitalize())})
    kw = dict(sep="\t", header=0, usecols=cols, quoting=csv.QUOTE_NONE, engine="c")
    try:
        if numeric:
            try:
                df = pd.read_csv(io.StringIO(block), dtype={c: (np.float64 if c in numeric else str) for c in cols},
                                 na_values=missing, keep_default_na=False, **kw)
                order = sorted(cols)
                return header, [df.iloc[:, order.index(c)].to_numpy() if c in numeric
                                else df.iloc[:, order.index(c)].fillna("").tolist() for c in cols]
            except ValueError as exc:
                if "could not convert" not in str(exc) and "Unable to parse" not in str(exc):
                    raise
        df = pd.read_csv(io.StringIO(block), dtype=str, na_filter=False, **kw).fillna("")  # short rows
    except (ValueError, pd.errors.ParserError) as exc:
        raise DataFormatError(f"{name}: the table of {what} (from line {start}) cannot be read as tab-separated "
                              f"columns ({str(exc).strip()}; lines counted from its header)") from None
    order = sorted(cols)
    return header, [df.iloc[:, order.index(c)].tolist() for c in cols]


def _values(texts: list, name: str, where) -> np.ndarray:
    """Numbers of a column of str (``null``/empty/NA missing), a non-number refused by its row."""
    import pandas as pd

    vals = pd.to_numeric(pd.Series(texts, dtype=object), errors="coerce").to_numpy(dtype=np.float64)
    for k in np.flatnonzero(np.isnan(vals)):
        t = str(texts[k]).strip()
        if t.lower() in _MISSING:
            continue
        try:
            vals[k] = float(t)
        except ValueError:
            raise DataFormatError(f"{name}: {t!r} at {where(int(k))} is not a number; the table's VALUE "
                                  "column must hold numbers (null or empty for missing)") from None
    return vals


def _load_family(stream, src: _Source, name: str, nan_policy: str, label_column, platform,
                 feature_names) -> LoadedData:
    import pandas as pd

    notes: list = []
    platforms: dict = {}  # id -> (probe ids, symbols) of its table, or None
    series_platforms: list = []
    samples: list = []
    entity, current = None, None
    wanted = platform
    ref_ids: list = []
    ref_index: dict = {}
    lineno = 0
    series_samples = 0
    # the rows of samples listing the first sample's probes go straight into one matrix sized by the
    # number of samples (known from the scan or the ^SERIES block): no second copy of the table
    direct = {"X": None, "rows": 0, "capacity": None}

    def choose():
        nonlocal wanted
        known = set(series_platforms) | set(platforms)
        if len(known) == 1:
            wanted = next(iter(known))
            direct["capacity"] = series_samples or None
        else:  # several platforms (or none declared): count the samples of each first
            counts = _platform_counts(src)
            if counts:
                wanted = max(sorted(counts), key=lambda p: counts[p])
                direct["capacity"] = counts[wanted]

    def sample_table(s, lines, start):
        def want(header):
            up = [h.upper() for h in header]
            if "ID_REF" not in up or "VALUE" not in up:
                raise DataFormatError(f"{name}: line {start + 1}: the table of sample {s.gsm} needs the columns "
                                      f"ID_REF and VALUE; got {_listed(header, 6)}")
            return [up.index("ID_REF"), up.index("VALUE")]

        _, (ids, texts) = _table(lines, name, f"sample {s.gsm}", start, want, numeric=1)
        if len(set(ids)) != len(ids):
            raise DataFormatError(f"{name}: sample {s.gsm}: duplicated ID_REF id(s) in its table: "
                                  f"{_listed(_duplicates(ids))}; every probe id must be unique")
        if isinstance(texts, np.ndarray) and texts.dtype == np.float64:
            vals = texts
        else:
            vals = _values(texts, name, lambda k: f"line {start + 2 + k} (sample {s.gsm}, column VALUE)")
        if not ref_ids:
            ref_ids.extend(ids)
            cap = direct["capacity"]
            if cap and cap * len(ids) * 8 <= 4 * src.max_bytes:
                direct["X"] = np.empty((cap, len(ids)), dtype=np.float64)  # pages touched row by row
        if ids == ref_ids:
            D = direct["X"]
            if D is not None and direct["rows"] < D.shape[0] and vals.size == D.shape[1]:
                D[direct["rows"]] = vals
                s.positions, s.values = direct["rows"], None
                direct["rows"] += 1
            else:
                s.positions, s.values = None, vals
            return
        if not ref_index:
            ref_index.update((i, k) for k, i in enumerate(ref_ids))
        pos = np.empty(len(ids), dtype=np.int64)
        for k, i in enumerate(ids):
            p = ref_index.get(i)
            if p is None:
                p = ref_index[i] = len(ref_ids)
                ref_ids.append(i)
            pos[k] = p
        s.positions, s.values = pos, vals

    def platform_table(gpl, lines, start):
        def want(header):
            low = [h.lower() for h in header]
            sym = next((low.index(c) for c in _SYMBOL_COLUMNS if c in low), None)
            return [0] if sym is None or sym == 0 else [0, sym]

        _, cols = _table(lines, name, f"platform {gpl}", start, want)
        platforms[gpl] = (cols[0], cols[1]) if len(cols) == 2 else None

    table = None
    for line in stream:
        lineno += 1
        if line.startswith("^"):
            key, value = _attr(line)
            entity = key.upper()
            if entity == "SAMPLE":
                if wanted is None:
                    choose()
                current = _Sample(value, lineno)
                samples.append(current)
            elif entity == "PLATFORM":
                current = value
                platforms.setdefault(value, None)
        elif line.startswith("!"):
            key, value = _attr(line)
            low = key.lower()
            if low.endswith("_table_begin"):
                kind = low[:-len("_table_begin")]
                keep = (kind == "sample" and isinstance(current, _Sample) and current.platform == wanted) or \
                    (kind == "platform" and isinstance(current, str) and (platform is None or current == platform))
                lines, count, ended = stream.until(f"!{kind}_table_end")
                start = lineno
                lineno += count
                if not ended:
                    table = (kind, start)
                    break
                if keep and kind == "sample":
                    sample_table(current, lines, start)
                elif keep:
                    platform_table(current, lines, start)
                del lines
                continue
            if entity == "SERIES" and low == "series_platform_id":
                series_platforms.append(value)
            elif entity == "SERIES" and low == "series_sample_id":
                series_samples += 1
            elif entity == "SAMPLE" and isinstance(current, _Sample):
                if low == "sample_platform_id":
                    current.platform = value
                elif low == "sample_title":
                    current.title = value
                elif low == "sample_source_name_ch1":
                    current.source = value
                elif low.startswith("sample_characteristics_ch1"):
                    current.characteristics.append(value)
    if table is not None:
        raise DataFormatError(f"{name}: the {table[0]} table starting on line {table[1]} never ends "
                              f"('!{table[0]}_table_end' missing): the file is truncated")
    if not samples:
        raise DataFormatError(f"{name}: a family SOFT file without ^SAMPLE blocks; no sample tables to read")
    per_platform: dict = {}
    for s in samples:
        per_platform[s.platform] = per_platform.get(s.platform, 0) + 1
    if platform is not None and platform not in per_platform:
        raise InputError(f"`platform` must be one of the platforms of {name}: "
                         f"{', '.join(f'{p} ({c} samples)' for p, c in per_platform.items())}; got {platform!r}")
    def tabled(s):
        return s.values is not None or isinstance(s.positions, int)

    chosen = [s for s in samples if s.platform == wanted and tabled(s)]
    untabled = [s.gsm for s in samples if s.platform == wanted and not tabled(s)]
    if untabled:
        raise DataFormatError(f"{name}: sample(s) {_listed(untabled)} of platform {wanted} have no data "
                              "table (!sample_table_begin ... !sample_table_end)")
    dup = _duplicates([s.gsm for s in chosen])
    if dup:
        raise DataFormatError(f"{name}: duplicated sample id(s) {_listed(dup)}; every ^SAMPLE must be unique")
    n = len(ref_ids)
    m = len(chosen)
    need = m * n * 8
    if need > 4 * src.max_bytes:  # samples listing different probes: the joined table can outgrow the file
        raise DataFormatError(f"{name}: the {m} samples of platform {wanted} list {n:,} distinct probes in all; "
                              f"the joined table would take {need:,} bytes, over 4 x max_bytes="
                              f"{src.max_bytes:,}; raise max_bytes if this is intended")
    D = direct["X"]
    partial = 0
    if D is not None and direct["rows"] == m and D.shape[1] == n and \
            all(isinstance(s.positions, int) and s.positions == r for r, s in enumerate(chosen)):
        X = D[:m]  # every row already in place (the rows past m were never touched)
        chosen_rows: list = []
    else:
        X = np.empty((m, n), dtype=np.float64)
        chosen_rows = chosen
    for r, s in enumerate(chosen_rows):
        if isinstance(s.positions, int):  # a row of the direct matrix, narrower when probes were added
            X[r] = np.nan
            X[r, :D.shape[1]] = D[s.positions]
            partial += D.shape[1] < n
        elif s.positions is None and s.values.size == n:
            X[r] = s.values
        else:
            X[r] = np.nan
            pos = np.arange(s.values.size) if s.positions is None else s.positions
            X[r, pos] = s.values
            partial += 1
        s.values = s.positions = None  # freed as X fills (np.empty's pages are touched row by row)
    others = {p: c for p, c in per_platform.items() if p != wanted}
    notes.append(f"GEO family SOFT, platform {wanted}: {m} samples joined on ID_REF ({n} probes), read as "
                 f"{m} samples x {n} features")
    if others:
        how = "as asked (platform=)" if platform is not None else "the platform with the most samples"
        notes.append(f"platform {wanted} read ({how}); other platforms in the file: "
                     + ", ".join(f"{p} ({c} samples)" for p, c in others.items())
                     + " (choose one with platform=)")
    if partial:
        notes.append(f"{partial} sample(s) list other probes than the first sample: probes absent from a "
                     "sample are missing values there (nan_policy)")
    columns: dict = {"geo_accession": [s.gsm for s in chosen], "title": [s.title for s in chosen],
                     "source_name_ch1": [s.source for s in chosen]}
    char_cols: list = []
    for r, s in enumerate(chosen):
        for c in s.characteristics:
            key, sep, val = c.partition(":")
            key = key.strip() if sep else "characteristics_ch1"
            val = val.strip() if sep else c
            if key in ("geo_accession", "title", "source_name_ch1"):
                key += "_"
            if key not in columns:
                columns[key] = [""] * m
                char_cols.append(key)
            columns[key][r] = val if not columns[key][r] else columns[key][r] + "; " + val
    metadata = pd.DataFrame(columns)
    labels, used = (None, None)
    if label_column is not None:
        labels, used = _pick_label(metadata, [], label_column, name, notes, "sample column")
    else:
        notes.append("no labels: name one of the sample columns ("
                     + ", ".join(["title", "source_name_ch1"] + char_cols[:6])
                     + ") as the label column, or give a sample sheet")
    found = platforms.get(wanted)
    symbols = None
    if found is not None:
        table_symbols = dict(zip((i.strip() for i in found[0]), (v.strip() for v in found[1])))
        symbols = [table_symbols.get(i, "") for i in ref_ids]
    names = _symbol_names(list(ref_ids), symbols, feature_names, name, notes)
    return _finish(X, names, labels, metadata, None, notes, name, "geo-soft", nan_policy, variable=used,
                   sample_names=[s.gsm for s in chosen],
                   extra={"orientation": "rows-are-features", "gene_symbols": symbols, "feature_ids": list(ref_ids),
                          "platform": wanted, "platforms": dict(per_platform), "soft": "family"})
