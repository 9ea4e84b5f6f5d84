"""What the commands read: DATA (a file, a registry dataset or corpus), said on
stderr; its preprocessing; and the components given to ``certify``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import sys
import warnings
from pathlib import Path

import numpy as np

from .._common.validation import InputError
from ..datasets import list_datasets, load_corpus, load_dataset, preprocess
from ..datasets.preprocessing import PREPROCESSING
from ..io import load_file
from ..operators.sparse import as_sparse_cov
from ..text import text_weighting
from .options import WEIGHTINGS, _BadInput, beyond_centering
from .output import _progress
from .words import for_shell


def _load(args):
    """(X raw, feature names, image shape, checksum, reading record) from a file or a dataset name.

    The reading record (header, notes, columns that are not features, whether
    X is a sparse text corpus) is printed on stderr and stored in summary.json.
    A text corpus (a file or a registry corpus) comes back as a
    ``scipy.sparse`` CSR matrix of raw counts, never densified.
    """

    path = Path(args.data)
    infos = list_datasets(include_text=True)
    if not path.exists() and args.data in {info.name for info in infos if info.kind == "text"}:
        return _load_registry_corpus(args)
    if not path.exists() and args.data in {info.name for info in infos}:
        _dense_only(args, f"dataset {args.data!r}")
        _applies(args, "dataset", f"{args.data!r} is a built-in dataset")
        _raw_text_only(args, "dataset", f"{args.data!r} is a built-in dataset")
        ds = load_dataset(args.data, preprocessing=(), download=args.download)
        X = np.asarray(ds.X_raw, dtype=float)
        checksum = hashlib.sha256(np.ascontiguousarray(X).tobytes()).hexdigest()
        record = {"notes": [], "dropped_columns": [], "sparse": False,
                  "sample_names": [str(i + 1) for i in range(X.shape[0])],
                  "labels": None if ds.labels is None else [str(v) for v in ds.labels]}
        return X, list(ds.feature_names), ds.image_shape, f"sha256:{checksum} (array)", record
    if path.is_dir():
        raise _BadInput(f"DATA {args.data!r} is a folder; give a data file (CSV/TSV, .npy, .npz, "
                        ".mat, a .zip of images, or a text corpus docword.NAME.txt[.gz] / .mtx) or "
                        "a built-in dataset name")
    if not path.exists():
        names = ", ".join(sorted(info.name for info in infos))
        raise _BadInput(f"DATA {args.data!r} is neither a file nor a built-in dataset ({names})")
    vocab = None
    if args.vocab is not None:
        vocab = Path(args.vocab)
        if not vocab.is_file():
            raise _BadInput(f"--vocab {args.vocab!r} is not a file; give the vocabulary file "
                            "(one word per line, word i on line i)")
    sheet = getattr(args, "sample_info", None)
    if sheet is not None and not Path(sheet).is_file():
        raise _BadInput(f"--sample-info {sheet!r} is not a file; give the sample sheet (CSV/TSV, one "
                        "row per sample, a header line)")
    if getattr(args, "sample_id_column", None) is not None and sheet is None:
        raise _BadInput("--sample-id-column applies only with --sample-info (a sample sheet)")
    progress = _progress(not getattr(args, "quiet", False))
    if hasattr(progress, "stage"):
        progress.label = "reading"
    with warnings.catch_warnings(record=True) as caught:  # third-party warnings go to the notes
        warnings.simplefilter("always")
        def read(**options):
            return load_file(path, variable=args.variable, header=args.header,
                             nan_policy=args.nan_policy, resize=args.resize, max_bytes=args.max_bytes,
                             vocab=vocab, orientation=getattr(args, "orientation", "auto"),
                             sample_info=None if sheet is None else Path(sheet),
                             sample_id_column=getattr(args, "sample_id_column", None),
                             callback=progress,  # raw text: documents counted
                             **options)

        options = {**_text_options(args), **_file_options(args)}
        try:
            loaded = read(**options)
        except InputError as exc:  # a column given as the text of an index and named by no column
            column = options.get("label_column") if exc.argument == "label_column" else None
            if not (isinstance(column, str) and column.strip().lstrip("-").isdigit()):
                raise
            loaded = read(**{**options, "label_column": int(column)})
    if hasattr(progress, "close"):
        progress.close()
    loaded = _with_warnings(loaded, caught)
    _raw_text_only(args, loaded.format, f"{loaded.source_name} was read as {loaded.format}")
    sparse = bool(loaded.extra.get("sparse"))
    _applies(args, loaded.format, f"{loaded.source_name} was read as {loaded.format}")
    if not sparse:
        _dense_only(args, f"{path.name} (read as a dense {loaded.format} matrix)")
    checksum = hashlib.sha256(path.read_bytes()).hexdigest()
    record = {"notes": list(loaded.notes), "dropped_columns": list(loaded.dropped_columns),
              "sparse": sparse, "orientation": loaded.extra.get("orientation"),
              "sample_names": list(loaded.sample_names),
              "labels": None if loaded.labels is None else [str(v) for v in loaded.labels]}
    _report_reading(path.name, loaded)
    X = loaded.X if sparse else np.asarray(loaded.X, dtype=float)
    return X, list(loaded.feature_names), loaded.image_shape, f"sha256:{checksum} (file)", record


def _file_options(args) -> dict:
    """--label-column, --layer, --use-raw, --platform, --sheet as load_file's options (those given)."""
    out = {}
    label = getattr(args, "label_column", None)
    if label is not None:
        out["label_column"] = label
    for key in ("layer", "platform"):
        if getattr(args, key, None) is not None:
            out[key] = getattr(args, key)
    if getattr(args, "use_raw", False):
        out["use_raw"] = True
    sheet = getattr(args, "sheet", None)
    if sheet is not None:
        out["sheet"] = int(sheet) if sheet.isdigit() else sheet
    return out


def _with_warnings(loaded, caught):
    """``loaded`` with the warnings a library raised while reading recorded in its notes."""
    seen = []
    for w in caught:
        text = f"a library warned (not shown): {w.category.__name__}: {str(w.message).splitlines()[0][:200]}"
        if text not in seen and not any(text.split(": ", 1)[1] in n for n in loaded.notes):
            seen.append(text)
    return dataclasses.replace(loaded, notes=list(loaded.notes) + seen) if seen else loaded


def _applies(args, fmt, what: str) -> None:
    """--variable and --resize refused where the reader had no use for them (else silently ignored)."""
    if args.variable is not None and fmt not in ("npz", "mat"):
        raise _BadInput(f"--variable {args.variable!r} applies only to .npz and .mat files (it names the "
                        f"array to read); {what}, which has no variables: leave --variable out")
    if args.resize is not None and fmt != "zip":
        raise _BadInput(f"--resize {args.resize[0]}x{args.resize[1]} applies only to a .zip of images; "
                        f"{what}: leave --resize out")
    given = {"--layer": getattr(args, "layer", None) is not None, "--use-raw": getattr(args, "use_raw", False),
             "--platform": getattr(args, "platform", None) is not None,
             "--sheet": getattr(args, "sheet", None) is not None,
             "--label-column": getattr(args, "label_column", None) is not None}
    kinds = {"--layer": ("h5ad",), "--use-raw": ("h5ad",), "--platform": ("geo-soft",), "--sheet": ("excel",),
             "--label-column": () if fmt in ("dataset", "corpus") else (fmt,)}
    for option, on in given.items():
        if on and fmt not in kinds[option]:
            raise _BadInput(f"{option} applies only to "
                            + {"--layer": ".h5ad files", "--use-raw": ".h5ad files",
                               "--platform": "GEO family SOFT files", "--sheet": "Excel workbooks",
                               "--label-column": "data files"}[option] + f"; {what}: leave {option} out")


def _text_options(args) -> dict:
    """--text-column, --stop-words, --min-df as load_file's options (only those given)."""
    out = {}
    if getattr(args, "text_column", None) is not None:
        col = args.text_column
        out["text_column"] = int(col) if col.lstrip("-").isdigit() else col
    if getattr(args, "stop_words", None) is not None:
        out["stop_words"] = None if args.stop_words == "none" else args.stop_words
    if getattr(args, "min_df", None) is not None:
        out["min_df"] = args.min_df
    return out


def _raw_text_only(args, fmt, what: str) -> None:
    """The raw-text options refused where no documents were counted (else silently ignored)."""
    if fmt in ("text-zip", "text-table"):
        return
    for option in ("--text-column", "--stop-words", "--min-df"):
        if getattr(args, option[2:].replace("-", "_"), None) is not None:
            raise _BadInput(f"{option} applies only to raw text (a .zip of .txt documents or a "
                            f"CSV/TSV with a column of texts); {what}: leave {option} out")


def _dense_only(args, what: str) -> None:
    """The text options refused for dense data (they would be silently ignored)."""
    for option, value in (("--weighting", args.weighting), ("--vocab", args.vocab)):
        if value is not None:
            raise _BadInput(f"{option} applies only to text corpora (docword.NAME.txt[.gz], .mtx, "
                            f"a sparse .npz, kos/nips/enron/nytimes); {what} is not one")


def _load_registry_corpus(args):
    """A registry corpus (raw counts, sparse) through :func:`nspca_core.datasets.load_corpus`."""

    _applies(args, "corpus", f"{args.data!r} is a built-in text corpus")
    _raw_text_only(args, "corpus", f"{args.data!r} is a built-in text corpus")
    if args.vocab is not None:
        raise _BadInput(f"--vocab does not apply to the registry corpus {args.data!r} (its "
                        "vocabulary comes with it)")
    text = load_corpus(args.data, download=args.download)
    m, n = text.X.shape
    lines = [f"read corpus {args.data}: {m} documents x {n} words, {text.X.nnz:,} nonzeros (sparse)"]
    lines += [f"  note: {for_shell(note)}" for note in text.notes]
    print("\n".join(lines), file=sys.stderr)
    record = {"notes": list(text.notes), "dropped_columns": [], "sparse": True}
    return text.X, list(text.vocabulary), None, \
        f"sha256:{text.extra.get('sha256', '')} (parsed corpus)", record


def _report_reading(name: str, loaded) -> None:
    """What the reader did, on stderr: always the columns that are not features."""
    m, n = loaded.X.shape
    rows, cols = ("cells", "genes") if loaded.format in ("h5ad", "10x") else ("documents", "words")
    lines = [f"read {name}: {m} {rows} x {n} {cols}, {loaded.X.nnz:,} nonzeros (sparse)"
             if loaded.extra.get("sparse") else f"read {name}: {m} samples x {n} features"]
    lines += [f"  note: {for_shell(note)}" for note in loaded.notes]
    if loaded.dropped_columns:
        lines.append(f"  warning: {len(loaded.dropped_columns)} column(s) not used as features:")
        lines += [f"    - {d['column']}: {for_shell(d['reason'], reason=True)}" for d in loaded.dropped_columns]
    print("\n".join(lines), file=sys.stderr)


def _preprocess(X, how):

    return preprocess(X, steps=PREPROCESSING[how].steps)


def _text_cov(args, X):
    """(weighted corpus, covariance operator) of a sparse corpus: never densified."""

    if beyond_centering(args.preprocessing):
        raise _BadInput(f"--preprocessing {args.preprocessing} does not apply to a text corpus (a step "
                        "on every word would make it dense); use center (default, as the paper) or none, "
                        "and --weighting tfidf or log1p to reweight the words")
    w = text_weighting(X, weighting=WEIGHTINGS[args.weighting or "raw"],
                       center=args.preprocessing == "center")
    return w, as_sparse_cov(w.X, center=w.center)


def _components_table(path) -> np.ndarray:
    """The numbers of a --x file: a header line (if any) and a 'feature' column are skipped."""
    import csv

    p = Path(path)
    if p.is_dir():
        raise _BadInput(f"--x {str(path)!r} is a folder; give a CSV file of components")
    if not p.exists():
        raise _BadInput(f"--x file {str(path)!r} does not exist")
    try:
        text = p.read_bytes().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise _BadInput(f"--x {str(path)!r} cannot be read as UTF-8 text ({exc})") from None
    rows = [r for r in csv.reader(text.splitlines()) if any(c.strip() for c in r)]
    if not rows:
        raise _BadInput(f"--x {str(path)!r} is empty; it must hold the components as numbers, one "
                        "component per column (a row per feature) or a single row")
    if len({len(r) for r in rows}) > 1:
        raise _BadInput(f"--x {str(path)!r} has rows of different lengths; every row needs the "
                        "same number of fields")

    def number(c):
        try:
            return float(c)
        except ValueError:
            return None

    header = rows[0] if any(number(c) is None for c in rows[0]) else None
    body = rows[1:] if header is not None else rows
    keep = [j for j in range(len(rows[0]))
            if not (header is not None and header[j].strip().lower() == "feature")]
    table = [[number(r[j]) for j in keep] for r in body]
    if not body or not keep:
        raise _BadInput(f"--x {str(path)!r} holds no numbers, only a header line")
    bad = [(i, j) for i, r in enumerate(table) for j, v in enumerate(r) if v is None]
    if bad:
        i, j = bad[0]
        line = i + 1 + (header is not None)
        raise _BadInput(f"--x {str(path)!r}: {body[i][keep[j]]!r} on line {line} is not a number "
                        "(lines counted from 1, the header line included); components are numbers")
    M = np.array(table, dtype=float)
    if not np.isfinite(M).all():
        raise _BadInput(f"--x {str(path)!r} holds NaN or infinite values; components are finite "
                        "numbers")
    return M


def _read_components(path, n):
    M = _components_table(path)
    if M.shape[0] == n:
        if M.shape[1] == n and n > 1:  # square: either reading fits, say which one is used
            print(f"note: --x {str(path)!r} is square ({n} x {n}): read as one component per column "
                  "(a row per feature, as fit writes components.csv); if your components are rows, "
                  "transpose the file", file=sys.stderr)
        return M
    if M.shape[1] == n:
        return M.T
    raise _BadInput(f"--x {str(path)!r} has shape {M.shape}; expected {n} rows (one per feature) "
                    f"or {n} columns")
