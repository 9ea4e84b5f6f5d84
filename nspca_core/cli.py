"""Command line: ``python -m nspca_core fit|certify DATA ...``.

Exit codes: 0 ok, 1 bad input (the message on stderr), 2 internal error.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import sys
import time
import traceback
from pathlib import Path

import numpy as np

EXIT_OK, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2
#: most random directions the ε-net may draw from the command line (about 240 MB at d = 3)
MAX_NET_SAMPLES = 10_000_000
#: API argument -> command-line option, to phrase the library's messages for the shell
_OPTIONS = {"k": "--k", "d": "--d", "eps": "--eps", "seed": "--seed", "n_components": "--components",
            "method": "--method", "strategy": "--strategy", "variable": "--variable",
            "nan_policy": "--nan-policy", "resize": "--resize", "header": "--header",
            "max_bytes": "--max-bytes", "source": "DATA", "vocab": "--vocab",
            "weighting": "--weighting"}
#: --weighting values (raw = the paper's raw counts) -> nspca_core.text weighting
WEIGHTINGS = {"raw": "counts", "tfidf": "tfidf", "log1p": "log1p"}
#: words of each topic printed on stdout
TOPIC_WORDS = 10

DESCRIPTION = """\
Nonnegative sparse PCA with certified optimality.

Finds components x >= 0 with ||x|| = 1 and at most k nonzero loadings that
explain as much variance of your data as possible, and proves how close each
one is to the best possible (a certified upper bound on the unknown optimum).

DATA is a file (CSV/TSV, .npy, .npz, .mat, an image or a .zip of images;
rows = samples, columns = features) or a built-in dataset name such as
"digits" (offline) or "cbcl", "mll", "lrs" (local copies via NSPCA_DATA_DIR).

Text corpora are read sparse and never densified: the UCI Bag-of-Words
docword.NAME.txt[.gz] (its vocab.NAME.txt beside it, or --vocab FILE), Matrix
Market .mtx, a scipy.sparse.save_npz .npz, a .zip holding one of them and its
vocabulary, or the corpora "kos", "nips", "enron", "nytimes" (local copies via
NSPCA_DATA_DIR, or --download from the UCI repository).  Their components are
printed as topics (words and weights) and written to topics.csv.
"""

EPILOG = """\
examples:
  python -m nspca_core fit digits --k 10 --components 3 --out out/
  python -m nspca_core fit data.csv --k 40 --components 6 --method auto --out out/
  python -m nspca_core certify data.csv --k 40 --x out/components.csv
  python -m nspca_core fit docword.kos.txt --vocab vocab.kos.txt --components 8 --k 15 \
      --strategy bipartite --weighting raw --out out/

CSV/TSV: the header line is detected (--header auto; say yes/no to force it);
what the reader did (header, delimiter, number conventions, columns that are
not features) is printed on stderr and recorded in summary.json.

exit codes: 0 ok, 1 bad input (message on stderr), 2 internal error.
"""


class _Parser(argparse.ArgumentParser):
    """argparse exits 2 on usage errors; here a usage error is bad input (1)."""

    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def _prog() -> str:
    """``nspca`` when run as the installed console script, else ``python -m nspca_core``."""
    return "nspca" if Path(sys.argv[0]).stem == "nspca" else "python -m nspca_core"


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog=_prog(), description=DESCRIPTION, epilog=EPILOG,
                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True, metavar="{fit,certify}")

    def common(sp):
        sp.add_argument("data", metavar="DATA", help="data file or built-in dataset name")
        sp.add_argument("--k", type=int, required=True, help="max nonzero loadings per component")
        sp.add_argument("--preprocessing", default="center", choices=["center", "standardize", "none"],
                        help="applied to the data before the covariance (default: center)")
        sp.add_argument("--variable", default=None, help="array/variable name inside .npz/.mat files")
        sp.add_argument("--header", default="auto", choices=["auto", "yes", "no"],
                        help="CSV/TSV: does the first line hold column names? (default: auto, "
                             "detected; the choice is printed)")
        sp.add_argument("--nan-policy", default="error",
                        choices=["error", "drop-rows", "drop-columns", "impute-mean"],
                        help="missing/infinite values: stop (default), drop samples, drop "
                             "features or replace by the feature's mean")
        sp.add_argument("--resize", default=None, metavar="HEIGHTxWIDTH",
                        help=".zip of images: resize every image to this size (e.g. 32x32)")
        sp.add_argument("--max-bytes", type=int, default=200_000_000,
                        help="size cap for the file and the content of archives (default 200000000)")
        sp.add_argument("--quiet", action="store_true", help="no progress bar")
        sp.add_argument("--vocab", default=None, metavar="FILE",
                        help="text corpus: vocabulary file, one word per line (default: "
                             "vocab.NAME.txt beside docword.NAME.txt, or in the .zip)")
        sp.add_argument("--weighting", default=None, choices=list(WEIGHTINGS),
                        help="text corpus: raw counts (default, as Asteris et al. 2015), tf-idf "
                             "or log1p; --preprocessing center (default) or none")
        sp.add_argument("--download", action="store_true",
                        help="fetch a missing registry corpus (kos, nips, enron, nytimes) from the "
                             "UCI repository into the cache")

    f = sub.add_parser("fit", help="find nonnegative sparse components and certify them",
                       description="Find nonnegative k-sparse components and certify them.",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    common(f)
    f.add_argument("--components", type=int, default=1, help="number of components (default 1)")
    f.add_argument("--method", default="auto", help="algorithm: auto (default), spannogram, enet, em, "
                   "tpower, zass, sklearn-spca, nmf")
    f.add_argument("--strategy", default="deflation-remove",
                   help="several components: deflation-remove (default), deflation-project, bipartite")
    f.add_argument("--d", type=int, default=None,
                   help="rank of the approximation (default 3, or the number of features if fewer)")
    f.add_argument("--eps", type=float, default=0.1, help="epsilon-net accuracy (default 0.1)")
    f.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    f.add_argument("--no-certify", action="store_true", help="skip the certified upper bound")
    f.add_argument("--out", required=True, help="output folder (created if missing)")

    c = sub.add_parser("certify", help="certify someone else's component(s)",
                       description="Certify given components: a proven upper bound on the optimum "
                       "and the fraction of it each component reaches.",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    common(c)
    c.add_argument("--x", required=True, help="CSV of components, one per column (or a single row/column)")
    c.add_argument("--out", default=None, help="also write certificate.json into this folder")
    return p


def _progress(enabled: bool):
    if not (enabled and sys.stderr.isatty()):
        return None
    start = time.perf_counter()

    def callback(done, total):
        frac = done / total if total else 1.0
        bar = "#" * int(30 * frac)
        sys.stderr.write(f"\r[{bar:<30}] {100 * frac:5.1f}%  {time.perf_counter() - start:6.1f}s")
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return callback


class _BadInput(Exception):
    pass


def _parse_resize(text):
    """``"32x32"`` -> (32, 32); None stays None."""
    if text is None:
        return None
    m = re.fullmatch(r"\s*(\d+)\s*[xX×,]\s*(\d+)\s*", text)
    if not m or int(m.group(1)) < 1 or int(m.group(2)) < 1:
        raise _BadInput(f"--resize must look like 32x32 (HEIGHTxWIDTH, positive integers); "
                        f"got {text!r}")
    return int(m.group(1)), int(m.group(2))


def _check_options(args) -> None:
    """The options' own ranges, before any data is read (the data-dependent ones come later)."""
    if args.max_bytes < 1:
        raise _BadInput(f"--max-bytes must be a positive integer; got {args.max_bytes}")
    args.resize = _parse_resize(args.resize)
    if args.command != "fit":
        return
    if args.seed < 0:
        raise _BadInput(f"--seed must be a nonnegative integer (0, 1, 2, ...); got {args.seed}")
    if not (math.isfinite(args.eps) and 0 < args.eps < 1):
        raise _BadInput(f"--eps must be a number strictly between 0 and 1 (e.g. 0.1); "
                        f"got {args.eps}")
    if args.components < 1:
        raise _BadInput(f"--components must be a positive integer; got {args.components}")
    if args.d is not None and args.d < 1:
        raise _BadInput(f"--d must be a positive integer (at most the number of features); "
                        f"got {args.d}")


def _check_net_size(args, d: int, n: int) -> None:
    """Refuse an ε-net too large to draw, with the count and the smallest allowed --eps."""
    uses_net = args.method in ("enet", "auto") or args.strategy == "bipartite"
    if not uses_net or d < 2:
        return
    from .enet import enet_samples

    def count(eps):
        try:
            return enet_samples(d, eps, n)
        except (ZeroDivisionError, OverflowError, ValueError):
            return math.inf

    need = count(args.eps)
    if need <= MAX_NET_SAMPLES:
        return
    lo, hi = math.log(args.eps), 0.0  # bisection on log(eps): the count decreases with eps
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if count(math.exp(mid)) <= MAX_NET_SAMPLES else (mid, hi)
    shown = f"{need:.3g}" if isinstance(need, float) or need > 10 ** 15 else f"{need:,}"
    raise _BadInput(f"--eps {args.eps:g} with --d {d} would draw {shown} random directions for the "
                    f"ε-net (method {args.method}); at most {MAX_NET_SAMPLES:,} are allowed: use "
                    f"--eps {math.exp(hi):.2g} or larger, or a smaller --d")


def _load(args):
    """(X raw, feature names, image shape, checksum, reading record) from a file or a dataset name.

    The reading record (header, notes, columns that are not features, whether
    X is a sparse text corpus) is printed on stderr and stored in summary.json.
    A text corpus (a file or a registry corpus) comes back as a
    ``scipy.sparse`` CSR matrix of raw counts, never densified.
    """
    from .datasets import list_datasets, load_dataset
    from .io import load_file

    path = Path(args.data)
    infos = list_datasets(include_text=True)
    if not path.exists() and args.data in {info.name for info in infos if info.kind == "text"}:
        return _load_registry_corpus(args)
    if not path.exists() and args.data in {info.name for info in infos}:
        _dense_only(args, f"dataset {args.data!r}")
        ds = load_dataset(args.data, preprocessing=())
        X = np.asarray(ds.X_raw, dtype=float)
        checksum = hashlib.sha256(np.ascontiguousarray(X).tobytes()).hexdigest()
        record = {"notes": [], "dropped_columns": [], "sparse": False}
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
    loaded = load_file(path, variable=args.variable, header=args.header,
                       nan_policy=args.nan_policy, resize=args.resize, max_bytes=args.max_bytes,
                       vocab=vocab)
    sparse = bool(loaded.extra.get("sparse"))
    if not sparse:
        _dense_only(args, f"{path.name} (read as a dense {loaded.format} matrix)")
    checksum = hashlib.sha256(path.read_bytes()).hexdigest()
    record = {"notes": list(loaded.notes), "dropped_columns": list(loaded.dropped_columns),
              "sparse": sparse}
    _report_reading(path.name, loaded)
    X = loaded.X if sparse else np.asarray(loaded.X, dtype=float)
    return X, list(loaded.feature_names), loaded.image_shape, f"sha256:{checksum} (file)", record


def _dense_only(args, what: str) -> None:
    """The text options refused for dense data (they would be silently ignored)."""
    for option, value in (("--weighting", args.weighting), ("--vocab", args.vocab)):
        if value is not None:
            raise _BadInput(f"{option} applies only to text corpora (docword.NAME.txt[.gz], .mtx, "
                            f"a sparse .npz, kos/nips/enron/nytimes); {what} is not one")


def _load_registry_corpus(args):
    """A registry corpus (raw counts, sparse) through :func:`nspca_core.datasets.load_corpus`."""
    from .datasets import load_corpus

    if args.vocab is not None:
        raise _BadInput(f"--vocab does not apply to the registry corpus {args.data!r} (its "
                        "vocabulary comes with it)")
    text = load_corpus(args.data, download=args.download)
    m, n = text.X.shape
    lines = [f"read corpus {args.data}: {m} documents x {n} words, {text.X.nnz:,} nonzeros (sparse)"]
    lines += [f"  note: {_for_shell(note)}" for note in text.notes]
    print("\n".join(lines), file=sys.stderr)
    record = {"notes": list(text.notes), "dropped_columns": [], "sparse": True}
    return text.X, list(text.vocabulary), None, \
        f"sha256:{text.extra.get('sha256', '')} (parsed corpus)", record


def _report_reading(name: str, loaded) -> None:
    """What the reader did, on stderr: always the columns that are not features."""
    m, n = loaded.X.shape
    lines = [f"read {name}: {m} documents x {n} words, {loaded.X.nnz:,} nonzeros (sparse)"
             if loaded.extra.get("sparse") else f"read {name}: {m} samples x {n} features"]
    lines += [f"  note: {_for_shell(note)}" for note in loaded.notes]
    if loaded.dropped_columns:
        lines.append(f"  warning: {len(loaded.dropped_columns)} column(s) not used as features:")
        lines += [f"    - {d['column']}: {_for_shell(d['reason'])}" for d in loaded.dropped_columns]
    print("\n".join(lines), file=sys.stderr)


def _for_shell(message: str) -> str:
    """The library's message with its argument names replaced by the command-line options."""
    message = message.replace("nan_policy='drop-rows', 'drop-columns' or 'impute-mean'",
                              "--nan-policy drop-rows, drop-columns or impute-mean")
    message = re.sub(r"nan_policy='([a-z-]+)'", r"--nan-policy \1", message)
    message = message.replace("pass resize=(height, width)", "pass --resize HEIGHTxWIDTH")
    message = re.sub(r"resize=\((\d+), (\d+)\)", r"--resize \1x\2", message)
    message = message.replace("with variable=...", "with --variable NAME")
    message = re.sub(r"max_bytes=([\d,]+)", r"--max-bytes \1", message)
    message = message.replace("raise max_bytes", "raise --max-bytes")
    message = re.sub(r"call load_dataset\('([a-z]+)', download=True\)", r"pass --download", message)
    message = message.replace("(or pass data_dir=...)", "")
    return re.sub(r"`([a-z_]+)`", lambda mt: _OPTIONS.get(mt.group(1), mt.group(0)), message)


def _preprocess(X, how):
    from .datasets import preprocess

    steps = {"center": ("center",), "standardize": ("center", "standardize"), "none": ()}[how]
    return preprocess(X, steps=steps)


def _out_folder(path) -> Path:
    """The output folder, created now (before any work) or refused with the reason."""
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise _BadInput(f"--out {str(path)!r} is an existing file; --out names a folder (created if "
                        "missing) for the result files")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _BadInput(f"--out {str(path)!r}: cannot create this folder ({exc.strerror or exc})") \
            from None
    return out


def _write_text(path: Path, text: str) -> None:
    try:
        path.write_text(text)
    except OSError as exc:
        raise _BadInput(f"cannot write {str(path)!r}: {exc.strerror or exc}") from None


def _save_image_grid(loadings, image_shape, path):
    """The components as images side by side (Matplotlib; zero is white, darker blue is larger)."""
    from .imagegrid import image_grid_png

    h, w = image_shape
    r = loadings.shape[1]
    png = image_grid_png({"": [loadings[:, j] for j in range(r)]}, image_shape=(h, w),
                         titles={"": [f"component {j + 1}" for j in range(r)]}, scale=max(1, 64 // max(h, w)))
    try:
        path.write_bytes(png)
    except OSError as exc:
        raise _BadInput(f"cannot write {str(path)!r}: {exc.strerror or exc}") from None


def _cmd_fit(args) -> int:
    from .api import components

    X, names, image_shape, checksum, record = _load(args)
    if record.get("sparse"):
        return _fit_text(args, X, names, checksum, record)
    pre = _preprocess(X, args.preprocessing)
    n = pre.X.shape[1]
    # the default rank adapts to few features; a --d given is passed as given
    d = args.d if args.d is not None else min(3, n)
    if d > n:
        raise _BadInput(f"--d must be at most the number of features ({n}); got {d}")
    _check_net_size(args, d, n)
    out = _out_folder(args.out)
    start = time.perf_counter()
    res = components(pre.X, n_components=args.components, k=args.k, method=args.method,
                     strategy=args.strategy, d=d, eps=args.eps, seed=args.seed,
                     certify=not args.no_certify, callback=_progress(not args.quiet))
    seconds = time.perf_counter() - start
    cols = [f"component_{j + 1}" for j in range(res.n_components)]
    _write_csv(out / "components.csv", res.loadings, cols, index=names, index_name="feature")
    scores = pre.X @ res.loadings
    _write_csv(out / "scores.csv", scores, cols, index=None, index_name="sample")
    per = _per_component(res, res.loadings)
    summary = {"data": str(args.data), "data_checksum": checksum, "shape": list(X.shape),
               "preprocessing": list(pre.steps), "parameters": {
                   "k": args.k, "components": args.components, "method": args.method,
                   "strategy": args.strategy, "d": d, "d_given": args.d is not None,
                   "eps": args.eps, "seed": args.seed, "certify": not args.no_certify,
                   "header": args.header, "nan_policy": args.nan_policy},
               "reading_notes": record["notes"], "dropped_columns": record["dropped_columns"],
               "seconds": seconds, "total_variance": float(np.sum(res.variance)),
               "cumulative_variance": [float(v) for v in res.cumulative_variance],
               "components": per}
    _write_text(out / "summary.json", json.dumps(summary, indent=2))
    if image_shape is not None:
        _save_image_grid(res.loadings, tuple(image_shape), out / "components.png")
    print(f"wrote {out}/components.csv, scores.csv, summary.json"
          + (", components.png" if image_shape is not None else ""))
    for c in per:
        ratio = f"{c['certified_ratio']:.4f}" if c["certified_ratio"] is not None else "n/a"
        print(f"component {c['component']}: k={c['k']} variance={c['variance']:.6g} "
              f"certified ratio={ratio}")
    return EXIT_OK


def _text_cov(args, X):
    """(weighted corpus, covariance operator) of a sparse corpus: never densified."""
    from ._sparse import as_sparse_cov
    from .text import text_weighting

    if args.preprocessing == "standardize":
        raise _BadInput("--preprocessing standardize does not apply to a text corpus (scaling every "
                        "word would make it dense); use center (default, as the paper) or none, "
                        "and --weighting tfidf or log1p to reweight the words")
    w = text_weighting(X, weighting=WEIGHTINGS[args.weighting or "raw"],
                       center=args.preprocessing == "center")
    return w, as_sparse_cov(w.X, center=w.center)


def _fit_text(args, X, words, checksum, record) -> int:
    """``fit`` on a sparse text corpus: components as topics (topics.csv, printed)."""
    from .api import components
    from .text import format_topics, topics_table

    w, cov = _text_cov(args, X)
    m, n = X.shape
    d = args.d if args.d is not None else min(3, n)
    if d > n:
        raise _BadInput(f"--d must be at most the number of words ({n}); got {d}")
    _check_net_size(args, d, n)
    out = _out_folder(args.out)
    start = time.perf_counter()
    res = components(cov, n_components=args.components, k=args.k, method=args.method,
                     strategy=args.strategy, d=d, eps=args.eps, seed=args.seed,
                     certify=not args.no_certify, callback=_progress(not args.quiet))
    seconds = time.perf_counter() - start
    L = np.asarray(res.loadings)
    cols = [f"component_{j + 1}" for j in range(L.shape[1])]
    _write_sparse_components(out / "components.csv", L, words, cols)
    table = topics_table(L, words)
    try:
        table.to_csv(out / "topics.csv", index=False, float_format="%.6g")
    except OSError as exc:
        raise _BadInput(f"cannot write {str(out / 'topics.csv')!r}: {exc.strerror or exc}") from None
    scores = np.asarray(w.X @ L)
    if w.center:  # scores of the centered data, (X - 1 mu^T) L, without forming X - 1 mu^T
        scores -= np.asarray(w.X.mean(axis=0)).ravel() @ L
    _write_csv(out / "scores.csv", scores, cols, index=None, index_name="document")
    per = _per_component(res, L)
    for c, grp in zip(per, (table[table["component"] == j + 1] for j in range(L.shape[1]))):
        c["words"] = grp["word"].tolist()
        c["weights"] = [float(v) for v in grp["weight"]]
    summary = {"data": str(args.data), "data_checksum": checksum, "shape": [m, n],
               "sparse": True, "nonzeros": int(X.nnz), "weighting": args.weighting or "raw",
               "centered": w.center, "preprocessing": [w.weighting] + (["center"] if w.center else []),
               "weighting_notes": list(w.notes), "parameters": {
                   "k": args.k, "components": args.components, "method": args.method,
                   "strategy": args.strategy, "d": d, "d_given": args.d is not None,
                   "eps": args.eps, "seed": args.seed, "certify": not args.no_certify},
               "reading_notes": record["notes"], "seconds": seconds,
               "total_variance": float(np.sum(res.variance)),
               "cumulative_variance": [float(v) for v in res.cumulative_variance],
               "components": per}
    _write_text(out / "summary.json", json.dumps(summary, indent=2))
    print(f"wrote {out}/components.csv, topics.csv, scores.csv, summary.json")
    print(f"weighting: {args.weighting or 'raw'} ({'; '.join(w.notes)})")
    lines = format_topics(L, words, n_words=TOPIC_WORDS).splitlines()
    for c, line in zip(per, lines):
        ratio = f"{c['certified_ratio']:.4f}" if c["certified_ratio"] is not None else "n/a"
        print(f"topic {c['component']} (k={c['k']}, variance={c['variance']:.6g}, certified "
              f"ratio={ratio}): {line.split(': ', 1)[1]}")
    return EXIT_OK


def _per_component(res, L) -> list:
    per = []
    for j, r in enumerate(res.results):
        ub = float(getattr(r, "upper_bound", float("nan")))
        per.append({"component": j + 1, "k": int(np.count_nonzero(L[:, j])),
                    "variance": float(res.variance[j]),
                    "additional_variance": float(res.additional_variance[j]),
                    "variance_on_its_problem": float(r.variance),
                    "upper_bound": ub if np.isfinite(ub) else None,
                    "bound_kind": getattr(r, "bound_kind", "") or None,
                    "certified_ratio": float(r.variance / ub) if np.isfinite(ub) and ub > 0 else None})
    return per


def _write_sparse_components(path, L, words, cols):
    """The nonzero loadings only: one row per word some component uses, with its word,
    grouped by the first component using it and sorted by decreasing loading there."""
    import pandas as pd

    used = np.flatnonzero(np.any(L != 0, axis=1))
    first = np.argmax(L[used] != 0, axis=1)
    order = np.lexsort((used, -L[used, first], first))
    rows = used[order]
    df = pd.DataFrame(L[rows], columns=cols)
    df.insert(0, "word_index", rows)
    df.insert(0, "word", [str(words[i]) for i in rows])
    try:
        df.to_csv(path, index=False, float_format="%.6g")
    except OSError as exc:
        raise _BadInput(f"cannot write {str(path)!r}: {exc.strerror or exc}") from None


def _write_csv(path, matrix, columns, *, index, index_name):
    import pandas as pd

    df = pd.DataFrame(matrix, columns=columns)
    if index is not None:
        df.insert(0, index_name, index)
    try:
        df.to_csv(path, index=False)
    except OSError as exc:
        raise _BadInput(f"cannot write {str(path)!r}: {exc.strerror or exc}") from None


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
        return M
    if M.shape[1] == n:
        return M.T
    raise _BadInput(f"--x {str(path)!r} has shape {M.shape}; expected {n} rows (one per feature) "
                    f"or {n} columns")


def _cmd_certify(args) -> int:
    from .certificates import certify

    X, names, _, checksum, record = _load(args)
    if record.get("sparse"):  # the covariance operator of the corpus, never densified
        w, data = _text_cov(args, X)
        steps = [w.weighting] + (["center"] if w.center else [])
    else:
        pre = _preprocess(X, args.preprocessing)
        data, steps = pre.X, list(pre.steps)
    n = X.shape[1]
    comps = _read_components(args.x, n)
    if not 1 <= args.k <= n:
        raise _BadInput(f"--k must be an int in [1, n_features={n}]; got {args.k}")
    out_dir = _out_folder(args.out) if args.out else None
    out = []
    for j in range(comps.shape[1]):
        x = comps[:, j]
        if (x < 0).any() or np.count_nonzero(x) > args.k or not np.isclose(np.linalg.norm(x), 1, atol=1e-6):
            raise _BadInput(f"component {j + 1} of --x is not feasible: it must be >= 0, unit norm, "
                            f"with at most k={args.k} nonzeros; got min={x.min():.3g}, "
                            f"norm={np.linalg.norm(x):.6g}, nonzeros={np.count_nonzero(x)}")
        cert = certify(data, k=args.k, x=x, callback=_progress(not args.quiet))
        out.append({"component": j + 1, "variance": cert.lower, "upper_bound": cert.upper_bound,
                    "kind": cert.kind, "ratio": cert.ratio, "optimal": bool(cert.optimal),
                    "probabilistic": bool(cert.probabilistic), "seconds": cert.seconds})
        print(f"component {j + 1}: variance={cert.lower:.6g} upper bound={cert.upper_bound:.6g} "
              f"({cert.kind}) certified ratio={cert.ratio:.4f}"
              + (" — provably optimal" if cert.optimal else ""))
    if out_dir is not None:
        _write_text(out_dir / "certificate.json", json.dumps(
            {"data": str(args.data), "data_checksum": checksum, "k": args.k,
             "preprocessing": steps, "reading_notes": record["notes"],
             "dropped_columns": record["dropped_columns"], "certificates": out}, indent=2))
    return EXIT_OK


def main(argv=None) -> int:
    from ._validation import InputError

    args = _parser().parse_args(argv)
    try:
        _check_options(args)
        return {"fit": _cmd_fit, "certify": _cmd_certify}[args.command](args)
    except (InputError, ValueError, _BadInput, FileNotFoundError) as exc:
        print(f"error: {_for_shell(str(exc))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except MemoryError:
        print("error: not enough memory for this input; try a smaller file, fewer features or "
              "a smaller --d / larger --eps", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception:  # noqa: BLE001 - last resort: report, exit 2
        traceback.print_exc()
        print("internal error: please report it with the traceback above", file=sys.stderr)
        return EXIT_INTERNAL
