"""What every reader returns or raises: :class:`LoadedData`, :class:`DataFormatError`,
and the checks every dense format shares (shape, non-finite values, constant columns).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._common.said import Note, Remedy, said
from .._common.validation import InputError, sparse_structure_problem


#: the ``kind`` of a reader's note saying the data are cells x genes (a 10x folder, AnnData), kept sparse
SINGLE_CELL = "single-cell"


def single_cell_note(text: str) -> Note:
    """A note saying what a single-cell reader read (``kind`` :data:`SINGLE_CELL`), the text as given."""
    return Note(text, kind=SINGLE_CELL)


class DataFormatError(InputError):
    """The file cannot be read as a data matrix; the message says why and what is allowed."""


#: the missing-value policies that handle NaN/inf (``"error"`` refuses them)
HANDLING = ("drop-rows", "drop-columns", "impute-mean")


def over_cap(source: str | None, lead: str, cap: int, tail: str = "", *, times: int = 1, unit: bool = False,
             purpose: str = "if this is intended") -> DataFormatError:
    """The error of a file over the size cap ``max_bytes``: ``"<source>: <lead>the size cap
    max_bytes=<cap>[ bytes]<tail>; raise max_bytes <purpose>"`` (``times``: over a multiple of it;
    ``unit``: " bytes" after the number), with its parts as data (``plain`` says the cap in bytes and
    names no argument)."""
    scale = "" if times == 1 else f"{times} x "
    plain = f"{lead}{scale}the size cap of {cap:,} bytes{tail}"
    remedy = Remedy("max_bytes", verb="raise", purpose=purpose)
    return DataFormatError(said(f"{lead}{scale}the size cap max_bytes={cap:,}{' bytes' if unit else ''}{tail}",
                                source=source, remedy=remedy),
                           argument="max_bytes", value=cap, plain=plain, source=source, remedy=remedy)


@dataclass(frozen=True, eq=False)
class LoadedData:
    """A parsed file.

    Attributes
    ----------
    X : ndarray (m, n) float64 -- samples x features, finite; for a text
        corpus a ``scipy.sparse.csr_matrix`` (documents x words), never densified
    feature_names : list[str] (n,) -- for a text corpus, the vocabulary words
    labels : ndarray (m,) or None -- one label per sample (a label column,
        a ``labels`` array, or image sub-folders)
    image_shape : (h, w) or None -- when each row is an image (row-major)
    notes : list[str] -- everything worth telling the user about the parse
    metadata : pandas.DataFrame or None -- non-numeric columns / file names, one row per sample
    source_name : str
    format : str -- "csv", "npy", "npz", "mat", "zip"; text corpora "uci-bow",
        "mtx", "sparse-npz" (``extra["sparse"]`` True)
    variable : str or None -- the array / variable / label column used
    dropped_columns : list[dict] -- input columns that are not features, each
        ``{"column": name, "reason": why}`` (text kept as metadata, empty, used as
        labels, dropped for NaN/inf); empty when every column is a feature
    sample_names : list[str] (m,) -- one name per row of ``X``: from the file when
        it has them (an id column, the header of a file whose rows are features,
        GSM ids, ``obs_names``, cell barcodes), else ``"1", "2", ...``
    """

    X: np.ndarray
    feature_names: list
    labels: np.ndarray | None
    image_shape: tuple | None
    notes: list
    metadata: object
    source_name: str
    format: str = ""
    variable: str | None = None
    extra: dict = field(default_factory=dict)
    dropped_columns: list = field(default_factory=list)
    sample_names: list | None = None

    def __post_init__(self):
        m = self.X.shape[0]
        names = self.sample_names
        if names is None:
            names = [str(i + 1) for i in range(m)]
        else:
            names = [str(s) for s in names]
            if len(names) != m:
                raise ValueError(f"`sample_names` must have one name per row of X ({m}); got {len(names)}")
        object.__setattr__(self, "sample_names", names)


def _row_word(i: int, lines) -> str:
    """How the user counts row ``i`` (0-based index into X): a file line or a 1-based row."""
    return f"line {int(lines[i])}" if lines is not None else f"row {int(i) + 1}"


def _counting(lines) -> str:
    return ("lines of the file counted from 1, the header line included" if lines is not None
            else "rows counted from 1")


def _fmt_positions(pos: np.ndarray, names=None, limit: int = 5, lines=None) -> str:
    parts = []
    for i, j in pos[:limit]:
        col = f"'{names[j]}'" if names is not None else str(int(j) + 1)
        parts.append(f"({_row_word(i, lines)}, column {col})")
    return ", ".join(parts) + (", ..." if len(pos) > limit else "")


def _kept(bad: np.ndarray, what: str, name: str) -> tuple:
    """``(keep, dropped indices)`` of the rows or columns (``what``) without a NaN/inf value.

    Refuses a drop that would leave no data (nan_policy ``'drop-rows'``/``'drop-columns'``).
    """
    keep = ~bad.any(axis=1 if what == "row" else 0)
    if not keep.any():
        others = tuple(p for p in HANDLING if p != f"drop-{what}s")
        raise DataFormatError(f"{name}: every {what} has a NaN/inf value; nan_policy='drop-{what}s' "
                              f"would leave no data; choose nan_policy={others[0]!r} or {others[1]!r}",
                              argument="nan_policy", value=f"drop-{what}s", source=name,
                              plain=f"every {what} has a NaN/inf value: dropping those {what}s would leave "
                                    "no data", remedy=Remedy("nan_policy", others))
    return keep, np.flatnonzero(~keep)


def _at_least_two(shape: tuple, name: str, one_row: str, one_column: str) -> None:
    """Refuse a matrix of fewer than 2 rows (message ``one_row``) or 2 columns (``one_column``)."""
    m, n = shape
    if m < 2:
        raise DataFormatError(f"{name}: {one_row}")
    if n < 2:
        raise DataFormatError(f"{name}: {one_column}")


def _finish(X, names, labels, metadata, image_shape, notes, name, fmt, nan_policy, variable=None,
            extra=None, lines=None, dropped=None, sample_names=None) -> LoadedData:
    """Checks shared by every format: shape, non-finite values, constant columns.

    ``lines`` (CSV only) maps each row of X to its line number in the file, so
    that messages count rows as the user sees them; ``dropped`` lists the input
    columns that are not features (``{"column", "reason"}``).
    """
    dropped = list(dropped or [])
    X = np.asarray(X)
    if X.dtype == bool:
        X = X.astype(np.float64)
        notes.append("boolean values converted to 0/1")
    if X.dtype.kind == "c":
        raise DataFormatError(f"{name}: complex numbers are not supported; give real values")
    if X.dtype.kind in "OSUV":  # a reader that let text through: refused here, never a raw ValueError
        try:
            X = X.astype(np.float64) if X.dtype.kind == "O" else None
        except (TypeError, ValueError):
            X = None
        if X is None:
            raise DataFormatError(f"{name}: the matrix holds text or objects, not numbers; features "
                                  "must be numeric")
    X = X.astype(np.float64, copy=False)
    # the mask of non-finite values only when there is one (a large matrix needs no m x n mask)
    bad = None if (X.size == 0 or np.isfinite(X).all()) else ~np.isfinite(X)
    if bad is not None:
        nbad = int(bad.sum())
        pos = np.argwhere(bad)
        where = _fmt_positions(pos, names, lines=lines)
        if nan_policy == "error":
            raise DataFormatError(
                argument="nan_policy", value=nan_policy, source=name, allowed=("error",) + HANDLING,
                plain=f"{nbad} NaN/inf value(s) (missing or infinite) in {int(bad.any(axis=1).sum())} "
                      f"row(s) and {int(bad.any(axis=0).sum())} column(s), first at {where} ({_counting(lines)})",
                remedy=Remedy("nan_policy", HANDLING, purpose="to handle them, or fix the file"))
        if nan_policy == "drop-rows":
            keep, gone = _kept(bad, "row", name)
            if sample_names is None:  # keep the rows' own numbers, not a renumbering
                sample_names = [str(i + 1) for i in range(X.shape[0])]
            X = X[keep]
            labels = None if labels is None else labels[keep]
            if metadata is not None:
                metadata = metadata.iloc[keep].reset_index(drop=True)
            if sample_names is not None:
                sample_names = [s for s, k in zip(sample_names, keep) if k]
            shown = ", ".join(str(int(lines[i]) if lines is not None else int(i) + 1)
                              for i in gone[:10])
            notes.append(Note(f"dropped {gone.size} row(s) with NaN/inf "
                              f"({'lines' if lines is not None else 'rows'} {shown}"
                              f"{', ...' if gone.size > 10 else ''}; {_counting(lines)})",
                              argument="nan_policy", value="drop-rows"))
            lines = None if lines is None else np.asarray(lines)[keep]
        elif nan_policy == "drop-columns":
            keep, gone_idx = _kept(bad, "column", name)
            X = X[:, keep]
            gone = [names[j] for j in gone_idx]
            reason = Note("NaN/inf values", text="NaN/inf values (nan_policy='drop-columns')",
                          argument="nan_policy", value="drop-columns")
            dropped += [{"column": str(g), "reason": reason} for g in gone]
            names = [n for n, k in zip(names, keep) if k]
            image_shape = None  # pixels removed: rows are no longer images
            notes.append(Note(f"dropped {gone_idx.size} column(s) with NaN/inf "
                              f"({', '.join(map(str, gone[:10]))}{', ...' if len(gone) > 10 else ''})",
                              argument="nan_policy", value="drop-columns"))
        else:  # impute-mean
            X = X.copy()
            X[bad] = np.nan
            counts = (~bad).sum(axis=0)
            empty = np.flatnonzero(counts == 0)
            if empty.size:
                raise DataFormatError(argument="nan_policy", value="impute-mean", source=name,
                                      plain=f"column(s) {[names[j] for j in empty[:10]]} have no finite "
                                            "value to impute a mean from",
                                      remedy=Remedy("nan_policy", ("drop-columns",)))
            means = np.nanmean(X, axis=0)
            X[bad] = means[np.nonzero(bad)[1]]
            notes.append(Note(f"replaced {nbad} NaN/inf value(s) by their column's mean (first at "
                              f"{where}; {_counting(lines)})", argument="nan_policy", value="impute-mean"))
    _at_least_two(X.shape, name, "a single row (sample); PCA needs at least 2 rows, samples as rows "
                  "and features as columns",
                  "a single column (feature); sparse PCA needs at least 2 numeric columns, samples "
                  "as rows and features as columns"
                  + (f" (not features: {_dropped_text(dropped)})" if dropped else ""))
    const = X.min(axis=0) == X.max(axis=0) if X.shape[0] else np.zeros(X.shape[1], dtype=bool)
    if const.any():
        idx = np.flatnonzero(const)
        shown = ", ".join(str(names[j]) for j in idx[:10]) + (", ..." if idx.size > 10 else "")
        notes.append(f"{idx.size} constant column(s) ({shown}): allowed, but they carry no "
                     "variance (standardizing keeps them at zero)")
    return LoadedData(X=np.ascontiguousarray(X), feature_names=[str(s) for s in names],
                      labels=labels, image_shape=image_shape, notes=notes, metadata=metadata,
                      source_name=name, format=fmt, variable=variable, extra=extra or {},
                      dropped_columns=dropped, sample_names=sample_names)


def _dropped_text(dropped: list, limit: int = 10) -> str:
    """``'id' (text, e.g. 'a1'), 'note' (empty)`` for messages."""
    parts = [f"'{d['column']}' ({d['reason']})" for d in dropped[:limit]]
    return ", ".join(parts) + (f", ... ({len(dropped)} in all)" if len(dropped) > limit else "")


def _names_for(n: int, image_shape) -> list:
    if image_shape is not None:
        h, w = image_shape
        return [f"pixel_{r}_{c}" for r in range(h) for c in range(w)]
    return [f"x{j}" for j in range(n)]



#: the column names :func:`nspca_core.load_file` gives an array (public name for the CLI)
names_for = _names_for

def check_sparse_structure(X, name: str, rows: str = "rows", cols: str = "columns") -> None:
    """Refuse a CSR/CSC/COO matrix whose index arrays do not describe its shape.

    A file can hold a compressed sparse matrix whose column index is past the last column, or
    whose ``indptr`` decreases: SciPy builds it without a full check, and the compiled kernels
    that multiply by it then read out of bounds (a crash, or wrong numbers).  Checked here, in
    O(nnz) without a copy: ``indptr`` has one entry per row (column for CSC) plus one, starts at
    0, never decreases and ends at the number of stored values; every index lies in
    ``[0, size)``.  ``rows``/``cols`` name the two dimensions in the message (``"cells"``,
    ``"genes"``).

    Raises
    ------
    DataFormatError
        Naming the first bad entry, how many there are, and the size it had to stay below.
    """
    import scipy.sparse as sp

    if not sp.issparse(X):
        return
    m, n = X.shape
    fmt = X.format
    where = f"{name}: the sparse matrix ({fmt.upper()}, {m:,} {rows} x {n:,} {cols}) is inconsistent"
    tail = "; the file is damaged or was written by a faulty tool (refused rather than read out of bounds)"
    if fmt not in ("coo", "csr", "csc"):
        return
    problem = sparse_structure_problem(X, rows, cols)
    if problem is not None:
        raise DataFormatError(f"{where}: {problem}{tail}")


def made_unique(names: list) -> tuple[list, dict]:
    """``names`` with the repeats renamed ``name.1``, ``name.2``, ... (the first keeps its name;
    ``names`` itself when all are distinct), and ``{name: times}`` of the repeated names."""
    if len(set(names)) == len(names):
        return names, {}
    seen: dict = {}
    out = []
    for nm in names:
        seen[nm] = seen.get(nm, -1) + 1
        out.append(nm if seen[nm] == 0 else f"{nm}.{seen[nm]}")
    return out, {nm: c + 1 for nm, c in seen.items() if c > 0}


#: label cells that are no label (never a class): empty, NaN and the usual missing markers
LABEL_MISSING = frozenset({"", "nan", "na", "n/a", "null", "#n/a", "<na>"})


def missing_labels(values) -> np.ndarray:
    """Which label cells are missing: None, a float NaN, or text in :data:`LABEL_MISSING`
    (case and surrounding spaces ignored)."""
    out = np.zeros(len(values), dtype=bool)
    for i, v in enumerate(values):
        out[i] = v is None or (isinstance(v, float) and v != v) or str(v).strip().lower() in LABEL_MISSING
    return out


def _missing_examples(values, miss) -> str:
    shown = sorted({repr(str(values[i]).strip()) for i in np.flatnonzero(miss)})
    return ", ".join(shown[:4])


def refuse_missing_labels(values, column, name: str, lines=None) -> None:
    """The label column asked for must label every sample: missing cells are refused, counted,
    with their rows (a missing label is not a class)."""
    miss = missing_labels(values)
    if not miss.any():
        return
    idx = np.flatnonzero(miss)
    rows = ", ".join(_row_word(i, lines) for i in idx[:5]) + (", ..." if idx.size > 5 else "")
    raise DataFormatError(f"{name}: the label column '{column}' has {idx.size:,} missing cell(s) of "
                          f"{len(values):,} ({_missing_examples(values, miss)}; {rows}); a missing label "
                          "is not a class: fill them in, drop those samples, or choose another label "
                          "column")


def missing_label_note(values, column, what: str = "column") -> str | None:
    """The note for a column not taken as labels because cells are missing, or None when none is."""
    miss = missing_labels(values)
    if not miss.any():
        return None
    return (f"{what} '{column}' not used as labels: {int(miss.sum()):,} of its {len(values):,} cells are "
            f"missing ({_missing_examples(values, miss)}), and a missing label is not a class; fill "
            "them in and name it as the label column")


def column_position(column, names: list) -> int | None:
    """The position of ``column`` in ``names``: a column name, or an int index in [-len, len);
    ``None`` when it is neither (a string is always a name: the shell's text of an index is
    turned into an int by the command line, which knows it typed text)."""
    if isinstance(column, str):
        return names.index(column) if column in names else None
    width = len(names)
    if isinstance(column, int | np.integer) and not isinstance(column, bool) and -width <= column < width:
        return int(column) % width
    return None
