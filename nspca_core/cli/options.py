"""The command line's arguments: the parser and the checks of the options' own ranges
and of the ε-net size (the library's messages are said with these options by :mod:`.words`).
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path

from .._common.params import DEFAULTS
from ..api import METHODS, STRATEGIES
from ..datasets.preprocessing import PREPROCESSING
from ..enet import enet_samples
from ..io.formats import NAN_POLICY_LABELS
from ..io.load import NAN_POLICIES
from ..methods import STRATEGIES as STRATEGY_SPECS
from .errors import _BadInput
from .serve import add_app_command, version_text

EXIT_OK, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2
#: most random directions the ε-net may draw from the command line (about 240 MB at d = 3)
MAX_NET_SAMPLES = 10_000_000
#: --weighting values (raw = the paper's raw counts) -> nspca_core.text weighting
WEIGHTINGS = {"raw": "counts", "tfidf": "tfidf", "log1p": "log1p"}


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
    p.add_argument("--version", action="version", version=version_text())
    sub = p.add_subparsers(dest="command", required=True, metavar="{fit,certify,app}")

    def common(sp):
        sp.add_argument("data", metavar="DATA", help="data file or built-in dataset name")
        sp.add_argument("--k", type=int, required=True, help="max nonzero loadings per component")
        sp.add_argument("--preprocessing", default=next(iter(PREPROCESSING)), choices=list(PREPROCESSING),
                        help="applied to the data before the covariance: " + "; ".join(
                            f"{name} ({spec.label})" for name, spec in PREPROCESSING.items())
                        + f" (default: {next(iter(PREPROCESSING))})")
        sp.add_argument("--no-center", action="store_true",
                        help="use the data as given, A = X^T X / m (the library's center=False; the same "
                             "as --preprocessing none)")
        sp.add_argument("--variable", default=None, help="array/variable name inside .npz/.mat files")
        sp.add_argument("--header", default="auto", choices=["auto", "yes", "no"],
                        help="CSV/TSV: does the first line hold column names? (default: auto, "
                             "detected; the choice is printed)")
        sp.add_argument("--orientation", default="auto",
                        choices=["auto", "rows-are-samples", "rows-are-features"],
                        help="how the table is stored: auto (default; decided from the file, e.g. "
                             "genes as rows with sample names in the header, and printed), "
                             "rows-are-samples, or rows-are-features (transposed)")
        sp.add_argument("--sample-info", default=None, metavar="FILE",
                        help="sample sheet (CSV/TSV, one row per sample) matched to the samples by "
                             "its id column; its columns join the metadata")
        sp.add_argument("--sample-id-column", default=None, metavar="NAME",
                        help="the sample sheet's column of sample ids (default: detected)")
        # the files GEO and labs hand out (issue 38): labels, AnnData layers, SOFT platforms, Excel sheets
        sp.add_argument("--label-column", default=None, metavar="NAME",
                        help="column giving the sample labels (a CSV/TSV column by name or 0-based index, a "
                             "sample-sheet column, an obs column "
                             "of .h5ad, a GEO characteristic or SOFT subset type)")
        sp.add_argument("--layer", default=None, metavar="NAME", help=".h5ad: read this layer instead of X")
        sp.add_argument("--use-raw", action="store_true", help=".h5ad: read .raw (raw.X) instead of X")
        sp.add_argument("--platform", default=None, metavar="GPL",
                        help="GEO family SOFT: the platform read (default: the one with most samples)")
        sp.add_argument("--sheet", default=None, metavar="NAME",
                        help="Excel: the sheet read, by name or 0-based position (default: the first "
                             "with a numeric block)")
        sp.add_argument("--nan-policy", default=NAN_POLICIES[0], choices=list(NAN_POLICIES),
                        help="missing/infinite values: " + "; ".join(
                            f"{name} ({label})" for name, label in NAN_POLICY_LABELS.items())
                        + f" (default: {NAN_POLICIES[0]})")
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
        sp.add_argument("--text-column", default=None, metavar="COLUMN",
                        help="raw text: the CSV/TSV column holding one document per row (default: "
                             "a column of free text is detected; a .zip of .txt files is one "
                             "document per file)")
        sp.add_argument("--stop-words", default=None, choices=["english", "none"],
                        help="raw text: words left out (default english: scikit-learn's list)")
        sp.add_argument("--min-df", type=int, default=None, metavar="N",
                        help="raw text: keep words of at least N documents (default 2)")
        sp.add_argument("--dask", action="store_true",
                        help="read DATA lazily as a Dask array (a .zarr store or a .npy file, in row "
                             "blocks) and run the Dask path: centered implicitly, never held whole")
        sp.add_argument("--scheduler", default=None, metavar="ADDRESS",
                        help="with --dask: a running distributed scheduler, e.g. tcp://host:8786 "
                             "(default: local threads)")
        sp.add_argument("--download", action="store_true",
                        help="fetch a missing registry dataset (e.g. cbcl) or corpus (kos, nips, enron, "
                             "nytimes) from its public source into the cache")

    f = sub.add_parser("fit", help="find nonnegative sparse components and certify them",
                       description="Find nonnegative k-sparse components and certify them.",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    common(f)
    f.add_argument("--components", type=int, default=1, help="number of components (default 1)")
    f.add_argument("--method", default=DEFAULTS["method"], help="algorithm: " + _listing(METHODS, DEFAULTS["method"]))
    f.add_argument("--strategy", default=DEFAULTS["strategy"],
                   help="several components: " + _listing(STRATEGIES, DEFAULTS["strategy"]))
    f.add_argument("--d", type=int, default=None,
                   help="rank of the approximation (default 3, or the number of features if fewer; "
                        "strategy bipartite: the number of components)")
    f.add_argument("--eps", type=float, default=DEFAULTS["eps"],
                   help=f"epsilon-net accuracy (default {DEFAULTS['eps']})")
    f.add_argument("--random-state", type=int, default=None, metavar="INT",
                   help=f"seed of the randomized parts (default {DEFAULTS['random_state']})")
    f.add_argument("--seed", type=int, default=None, help=argparse.SUPPRESS)  # deprecated: --random-state
    f.add_argument("--no-certify", action="store_true", help="skip the certified upper bound")
    f.add_argument("--out", required=True, help="output folder (created if missing)")

    c = sub.add_parser("certify", help="certify someone else's component(s)",
                       description="Certify given components: a proven upper bound on the optimum "
                       "and the fraction of it each component reaches.",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    common(c)
    c.add_argument("--x", required=True, help="CSV of components, one per column (or a single row/column)")
    c.add_argument("--out", default=None, help="also write certificate.json into this folder")
    add_app_command(sub)
    return p


def _listing(names, default: str) -> str:
    """``a (default), b, c`` from the registry's names (the help never copies the list)."""
    return ", ".join(f"{n} (default)" if n == default else n for n in names)


def _parse_resize(text):
    """``"32x32"`` -> (32, 32); None stays None."""
    if text is None:
        return None
    m = re.fullmatch(r"\s*(\d+)\s*[xX×,]\s*(\d+)\s*", text)
    if not m or int(m.group(1)) < 1 or int(m.group(2)) < 1:
        raise _BadInput(f"--resize must look like 32x32 (HEIGHTxWIDTH, positive integers); "
                        f"got {text!r}")
    return int(m.group(1)), int(m.group(2))


def beyond_centering(preprocessing: str) -> list:
    """The steps of a --preprocessing choice besides centering (none for "center" and "none")."""
    return [step for step in PREPROCESSING[preprocessing].steps if step != "center"]


def _check_options(args) -> None:
    """The options' own ranges, before any data is read (the data-dependent ones come later)."""
    if args.max_bytes < 1:
        raise _BadInput(f"--max-bytes must be a positive integer; got {args.max_bytes}")
    args.resize = _parse_resize(args.resize)
    if args.no_center:
        if beyond_centering(args.preprocessing):
            raise _BadInput(f"--no-center and --preprocessing {args.preprocessing} contradict each other "
                            f"({args.preprocessing} centers too); use one of them")
        args.preprocessing = "none"
    if args.command != "fit":
        return
    if args.seed is not None:
        if args.random_state is not None:
            raise _BadInput("give --random-state only (--seed is its deprecated name)")
        sys.stderr.write("note: --seed is deprecated; use --random-state\n")
        args.random_state = args.seed
    if args.random_state is None:
        args.random_state = DEFAULTS["random_state"]
    if args.random_state < 0:
        raise _BadInput(f"--random-state must be a nonnegative integer (0, 1, 2, ...); got {args.random_state}")
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
    # the ε-net of the method, or of a strategy drawing its own points (option "samples": bipartite matchings)
    uses_net = args.method in ("enet", "auto") or "samples" in getattr(STRATEGY_SPECS.get(args.strategy), "options", ())
    if not uses_net or d < 2:
        return

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
