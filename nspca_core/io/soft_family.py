"""GEO family SOFT files (``GSExxx_family.soft[.gz]``), streamed (see :mod:`.soft`): one
``^SAMPLE`` block per sample, each with its own ``ID_REF, VALUE, ...`` table on the platform
``!Sample_platform_id``; the samples of one platform are joined on ``ID_REF`` (a probe absent
from a sample is missing there, ``nan_policy``)."""

from __future__ import annotations

import numpy as np

from .._common.validation import InputError
from .loaded import DataFormatError, LoadedData, _finish, over_cap
from .soft_common import (_SYMBOL_COLUMNS, _duplicates, _listed, _pick_label, _records, _Source,
                          _symbol_names, _table, _values)

__all__ = ["load_family"]


class _Sample:
    __slots__ = ("gsm", "platform", "title", "source", "characteristics", "positions", "values", "line")

    def __init__(self, gsm, line):
        self.gsm, self.line = gsm, line
        self.platform = self.title = self.source = ""
        self.characteristics: list = []
        self.positions = self.values = None

    @property
    def tabled(self) -> bool:
        """Its table was read (values kept apart, or a row of the direct matrix)."""
        return self.values is not None or isinstance(self.positions, int)


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


class _Family:
    """One pass over a family file: its samples (with their tables), platforms and probes.

    The rows of samples listing the first sample's probes go straight into one matrix sized by
    the number of samples (known from the ^SERIES block or a scan): no second copy of the table.
    """

    def __init__(self, src: _Source, name: str, platform):
        self.src, self.name, self.platform = src, name, platform
        self.wanted = platform
        self.platforms: dict = {}  # id -> (probe ids, symbols) of its table, or None
        self.series_platforms: list = []
        self.series_samples = 0
        self.samples: list = []
        self.ref_ids: list = []
        self.ref_index: dict = {}
        self.direct, self.rows, self.capacity = None, 0, None

    def choose(self) -> None:
        """The platform read, when the first sample comes: the only one, else the one with the
        most samples."""
        known = set(self.series_platforms) | set(self.platforms)
        if len(known) == 1:
            self.wanted = next(iter(known))
            self.capacity = self.series_samples or None
        else:  # several platforms (or none declared): count the samples of each first
            counts = _platform_counts(self.src)
            if counts:
                self.wanted = max(sorted(counts), key=lambda p: counts[p])
                self.capacity = counts[self.wanted]

    def sample_table(self, s: _Sample, lines: str, start: int) -> None:
        name = self.name

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
        if not self.ref_ids:
            self.ref_ids.extend(ids)
            cap = self.capacity
            if cap and cap * len(ids) * 8 <= 4 * self.src.max_bytes:
                self.direct = np.empty((cap, len(ids)), dtype=np.float64)  # pages touched row by row
        if ids == self.ref_ids:
            D = self.direct
            if D is not None and self.rows < D.shape[0] and vals.size == D.shape[1]:
                D[self.rows] = vals
                s.positions, s.values = self.rows, None
                self.rows += 1
            else:
                s.positions, s.values = None, vals
            return
        if not self.ref_index:
            self.ref_index.update((i, k) for k, i in enumerate(self.ref_ids))
        pos = np.empty(len(ids), dtype=np.int64)
        for k, i in enumerate(ids):
            p = self.ref_index.get(i)
            if p is None:
                p = self.ref_index[i] = len(self.ref_ids)
                self.ref_ids.append(i)
            pos[k] = p
        s.positions, s.values = pos, vals

    def platform_table(self, gpl: str, lines: str, start: int) -> None:
        def want(header):
            low = [h.lower() for h in header]
            sym = next((low.index(c) for c in _SYMBOL_COLUMNS if c in low), None)
            return [0] if sym is None or sym == 0 else [0, sym]

        _, cols = _table(lines, self.name, f"platform {gpl}", start, want)
        self.platforms[gpl] = (cols[0], cols[1]) if len(cols) == 2 else None

    def scan(self, stream) -> None:
        """Read the file once: entities, attributes, and the tables of the platform read."""
        entity, current = None, None
        for kind, key, value, lineno in _records(stream):
            if kind == "^":
                entity = key
                if entity == "SAMPLE":
                    if self.wanted is None:
                        self.choose()
                    current = _Sample(value, lineno)
                    self.samples.append(current)
                elif entity == "PLATFORM":
                    current = value
                    self.platforms.setdefault(value, None)
            elif kind == "table":
                if value is None:
                    raise DataFormatError(f"{self.name}: the {key} table starting on line {lineno} never ends "
                                          f"('!{key}_table_end' missing): the file is truncated")
                if key == "sample" and isinstance(current, _Sample) and current.platform == self.wanted:
                    self.sample_table(current, value, lineno)
                elif key == "platform" and isinstance(current, str) and self.platform in (None, current):
                    self.platform_table(current, value, lineno)
            elif kind == "!" and entity == "SERIES" and key == "series_platform_id":
                self.series_platforms.append(value)
            elif kind == "!" and entity == "SERIES" and key == "series_sample_id":
                self.series_samples += 1
            elif kind == "!" and entity == "SAMPLE" and isinstance(current, _Sample):
                _sample_attribute(current, key, value)

    def chosen(self) -> tuple[list, dict]:
        """The samples of the platform read (each with its table) and the samples per platform."""
        name, wanted = self.name, self.wanted
        if not self.samples:
            raise DataFormatError(f"{name}: a family SOFT file without ^SAMPLE blocks; no sample tables to read")
        per_platform: dict = {}
        for s in self.samples:
            per_platform[s.platform] = per_platform.get(s.platform, 0) + 1
        if self.platform is not None and self.platform not in per_platform:
            raise InputError(f"`platform` must be one of the platforms of {name}: "
                             f"{', '.join(f'{p} ({c} samples)' for p, c in per_platform.items())}; "
                             f"got {self.platform!r}")
        chosen = [s for s in self.samples if s.platform == wanted and s.tabled]
        untabled = [s.gsm for s in self.samples if s.platform == wanted and not s.tabled]
        if untabled:
            raise DataFormatError(f"{name}: sample(s) {_listed(untabled)} of platform {wanted} have no data "
                                  "table (!sample_table_begin ... !sample_table_end)")
        dup = _duplicates([s.gsm for s in chosen])
        if dup:
            raise DataFormatError(f"{name}: duplicated sample id(s) {_listed(dup)}; every ^SAMPLE must be unique")
        return chosen, per_platform

    def matrix(self, chosen: list) -> tuple[np.ndarray, int]:
        """``(X, partial)``: the samples x probes matrix joined on ID_REF, and how many samples
        lack some probe (missing values there)."""
        n, m = len(self.ref_ids), len(chosen)
        need = m * n * 8
        if need > 4 * self.src.max_bytes:  # samples listing different probes: the joined table can outgrow the file
            raise over_cap(self.name, f"the {m} samples of platform {self.wanted} list {n:,} distinct probes in "
                                      f"all; the joined table would take {need:,} bytes, over ",
                           self.src.max_bytes, times=4)
        D = self.direct
        partial = 0
        if D is not None and self.rows == m and D.shape[1] == n and \
                all(isinstance(s.positions, int) and s.positions == r for r, s in enumerate(chosen)):
            return D[:m], 0  # every row already in place (the rows past m were never touched)
        X = np.empty((m, n), dtype=np.float64)
        for r, s in enumerate(chosen):
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
        return X, partial

    def symbols(self) -> list | None:
        """The gene symbols of the probes, from the platform's table (None without one)."""
        found = self.platforms.get(self.wanted)
        if found is None:
            return None
        table_symbols = dict(zip((i.strip() for i in found[0]), (v.strip() for v in found[1])))
        return [table_symbols.get(i, "") for i in self.ref_ids]


def _sample_attribute(s: _Sample, key: str, value: str) -> None:
    if key == "sample_platform_id":
        s.platform = value
    elif key == "sample_title":
        s.title = value
    elif key == "sample_source_name_ch1":
        s.source = value
    elif key.startswith("sample_characteristics_ch1"):
        s.characteristics.append(value)


def _sample_sheet(chosen: list):
    """``(metadata, characteristics columns)``: one row per sample, its id, title, source and
    ``key: value`` characteristics (each key a column; repeated keys joined with '; ')."""
    import pandas as pd

    m = len(chosen)
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
    return pd.DataFrame(columns), char_cols


def load_family(stream, src: _Source, name: str, nan_policy: str, label_column, platform,
                feature_names) -> LoadedData:
    """A family SOFT file (its lines in ``stream``, a :class:`.soft_common._Lines`) as samples x
    probes of one platform (``platform``, else the one with the most samples)."""
    family = _Family(src, name, platform)
    family.scan(stream)
    chosen, per_platform = family.chosen()
    X, partial = family.matrix(chosen)
    wanted, m, n = family.wanted, len(chosen), len(family.ref_ids)
    notes = [f"GEO family SOFT, platform {wanted}: {m} samples joined on ID_REF ({n} probes), read as "
             f"{m} samples x {n} features"]
    others = {p: c for p, c in per_platform.items() if p != wanted}
    if others:
        how = "as asked (platform=)" if platform is not None else "the platform with the most samples"
        notes.append(f"platform {wanted} read ({how}); other platforms in the file: "
                     + ", ".join(f"{p} ({c} samples)" for p, c in others.items())
                     + " (choose one with platform=)")
    if partial:
        notes.append(f"{partial} sample(s) list other probes than the first sample: probes absent from a "
                     "sample are missing values there (nan_policy)")
    metadata, char_cols = _sample_sheet(chosen)
    labels, used = (None, None)
    if label_column is not None:
        labels, used = _pick_label(metadata, [], label_column, name, notes, "sample column")
    else:
        notes.append("no labels: name one of the sample columns ("
                     + ", ".join(["title", "source_name_ch1"] + char_cols[:6])
                     + ") as the label column, or give a sample sheet")
    symbols = family.symbols()
    ref_ids = family.ref_ids
    names = _symbol_names(list(ref_ids), symbols, feature_names, name, notes)
    return _finish(X, names, labels, metadata, None, notes, name, "geo-soft", nan_policy, variable=used,
                   sample_names=[s.gsm for s in chosen],
                   extra={"orientation": "rows-are-features", "gene_symbols": symbols, "feature_ids": list(ref_ids),
                          "platform": wanted, "platforms": dict(per_platform), "soft": "family"})
