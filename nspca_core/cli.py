"""Command line: ``python -m nspca_core fit|certify DATA ...``.

Exit codes: 0 ok, 1 bad input (the message on stderr), 2 internal error.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
import traceback
from pathlib import Path

import numpy as np

EXIT_OK, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2

DESCRIPTION = """\
Nonnegative sparse PCA with certified optimality.

Finds components x >= 0 with ||x|| = 1 and at most k nonzero loadings that
explain as much variance of your data as possible, and proves how close each
one is to the best possible (a certified upper bound on the unknown optimum).

DATA is a file (CSV/TSV, .npy, .npz, .mat, an image or a .zip of images;
rows = samples, columns = features) or a built-in dataset name such as
"digits" (offline) or "cbcl", "mll", "lrs" (local copies via NSPCA_DATA_DIR).
"""

EPILOG = """\
examples:
  python -m nspca_core fit digits --k 10 --components 3 --out out/
  python -m nspca_core fit data.csv --k 40 --components 6 --method auto --out out/
  python -m nspca_core certify data.csv --k 40 --x out/components.csv

exit codes: 0 ok, 1 bad input (message on stderr), 2 internal error.
"""


class _Parser(argparse.ArgumentParser):
    """argparse exits 2 on usage errors; here a usage error is bad input (1)."""

    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m nspca_core", description=DESCRIPTION, epilog=EPILOG,
                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True, metavar="{fit,certify}")

    def common(sp):
        sp.add_argument("data", metavar="DATA", help="data file or built-in dataset name")
        sp.add_argument("--k", type=int, required=True, help="max nonzero loadings per component")
        sp.add_argument("--preprocessing", default="center", choices=["center", "standardize", "none"],
                        help="applied to the data before the covariance (default: center)")
        sp.add_argument("--variable", default=None, help="array/variable name inside .npz/.mat files")
        sp.add_argument("--quiet", action="store_true", help="no progress bar")

    f = sub.add_parser("fit", help="find nonnegative sparse components and certify them",
                       description="Find nonnegative k-sparse components and certify them.",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    common(f)
    f.add_argument("--components", type=int, default=1, help="number of components (default 1)")
    f.add_argument("--method", default="auto", help="algorithm: auto (default), spannogram, enet, em, "
                   "tpower, zass, sklearn-spca, nmf")
    f.add_argument("--strategy", default="deflation-remove",
                   help="several components: deflation-remove (default), deflation-project, bipartite")
    f.add_argument("--d", type=int, default=3, help="rank of the approximation (default 3)")
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


def _load(args):
    """(X raw, feature names, image shape, checksum) from a file or a registry name."""
    from .datasets import list_datasets, load_dataset
    from .io import load_file

    path = Path(args.data)
    if not path.exists() and args.data in {info.name for info in list_datasets()}:
        ds = load_dataset(args.data, preprocessing=())
        X = np.asarray(ds.X_raw, dtype=float)
        checksum = hashlib.sha256(np.ascontiguousarray(X).tobytes()).hexdigest()
        return X, list(ds.feature_names), ds.image_shape, f"sha256:{checksum} (array)"
    if not path.exists():
        names = ", ".join(sorted(info.name for info in list_datasets()))
        raise _BadInput(f"DATA {args.data!r} is neither a file nor a built-in dataset ({names})")
    loaded = load_file(path, variable=args.variable)
    checksum = hashlib.sha256(path.read_bytes()).hexdigest()
    return np.asarray(loaded.X, dtype=float), list(loaded.feature_names), loaded.image_shape, \
        f"sha256:{checksum} (file)"


class _BadInput(Exception):
    pass


def _preprocess(X, how):
    from .datasets import preprocess

    steps = {"center": ("center",), "standardize": ("center", "standardize"), "none": ()}[how]
    return preprocess(X, steps=steps)


def _save_image_grid(loadings, image_shape, path):
    from PIL import Image

    h, w = image_shape
    r = loadings.shape[1]
    pad, scale = 2, max(1, 64 // max(h, w))
    canvas = np.full((h * scale + 2 * pad, r * (w * scale + pad) + pad), 255, dtype=np.uint8)
    for j in range(r):
        img = loadings[:, j].reshape(h, w)
        peak = img.max()
        tile = 255 - (255 * (img / peak if peak > 0 else img)).astype(np.uint8)
        tile = np.kron(tile, np.ones((scale, scale), dtype=np.uint8))
        x0 = pad + j * (w * scale + pad)
        canvas[pad:pad + h * scale, x0:x0 + w * scale] = tile
    Image.fromarray(canvas).save(path)


def _cmd_fit(args) -> int:
    from .api import components

    X, names, image_shape, checksum = _load(args)
    pre = _preprocess(X, args.preprocessing)
    start = time.perf_counter()
    res = components(pre.X, n_components=args.components, k=args.k, method=args.method,
                     strategy=args.strategy, d=args.d, eps=args.eps, seed=args.seed,
                     certify=not args.no_certify, callback=_progress(not args.quiet))
    seconds = time.perf_counter() - start
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cols = [f"component_{j + 1}" for j in range(res.n_components)]
    _write_csv(out / "components.csv", res.loadings, cols, index=names, index_name="feature")
    scores = pre.X @ res.loadings
    _write_csv(out / "scores.csv", scores, cols, index=None, index_name="sample")
    per = []
    for j, r in enumerate(res.results):
        ub = float(getattr(r, "upper_bound", float("nan")))
        per.append({"component": j + 1, "k": int(np.count_nonzero(res.loadings[:, j])),
                    "variance": float(res.variance[j]),
                    "additional_variance": float(res.additional_variance[j]),
                    "variance_on_its_problem": float(r.variance),
                    "upper_bound": ub if np.isfinite(ub) else None,
                    "bound_kind": getattr(r, "bound_kind", "") or None,
                    "certified_ratio": float(r.variance / ub) if np.isfinite(ub) and ub > 0 else None})
    summary = {"data": str(args.data), "data_checksum": checksum, "shape": list(X.shape),
               "preprocessing": list(pre.steps), "parameters": {
                   "k": args.k, "components": args.components, "method": args.method,
                   "strategy": args.strategy, "d": args.d, "eps": args.eps, "seed": args.seed,
                   "certify": not args.no_certify},
               "seconds": seconds, "total_variance": float(np.sum(res.variance)),
               "cumulative_variance": [float(v) for v in res.cumulative_variance],
               "components": per}
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    if image_shape is not None:
        _save_image_grid(res.loadings, tuple(image_shape), out / "components.png")
    print(f"wrote {out}/components.csv, scores.csv, summary.json"
          + (", components.png" if image_shape is not None else ""))
    for c in per:
        ratio = f"{c['certified_ratio']:.4f}" if c["certified_ratio"] is not None else "n/a"
        print(f"component {c['component']}: k={c['k']} variance={c['variance']:.6g} "
              f"certified ratio={ratio}")
    return EXIT_OK


def _write_csv(path, matrix, columns, *, index, index_name):
    import pandas as pd

    df = pd.DataFrame(matrix, columns=columns)
    if index is not None:
        df.insert(0, index_name, index)
    df.to_csv(path, index=False)


def _read_components(path, n):
    import pandas as pd

    p = Path(path)
    if not p.exists():
        raise _BadInput(f"--x file {path!r} does not exist")
    df = pd.read_csv(p)
    num = df.select_dtypes(include=[np.number])
    M = num.to_numpy(dtype=float)
    if M.ndim != 2 or M.size == 0:
        raise _BadInput(f"--x {path!r} holds no numeric columns")
    if M.shape[0] == n:
        return M
    if M.shape[1] == n:
        return M.T
    raise _BadInput(f"--x {path!r} has shape {M.shape}; expected {n} rows (one per feature) "
                    f"or {n} columns")


def _cmd_certify(args) -> int:
    from .certify import certify

    X, names, _, checksum = _load(args)
    pre = _preprocess(X, args.preprocessing)
    n = pre.X.shape[1]
    comps = _read_components(args.x, n)
    out = []
    for j in range(comps.shape[1]):
        x = comps[:, j]
        if (x < 0).any() or np.count_nonzero(x) > args.k or not np.isclose(np.linalg.norm(x), 1, atol=1e-6):
            raise _BadInput(f"component {j + 1} of --x is not feasible: it must be >= 0, unit norm, "
                            f"with at most k={args.k} nonzeros; got min={x.min():.3g}, "
                            f"norm={np.linalg.norm(x):.6g}, nonzeros={np.count_nonzero(x)}")
        cert = certify(pre.X, k=args.k, x=x, callback=_progress(not args.quiet))
        out.append({"component": j + 1, "variance": cert.lower, "upper_bound": cert.upper_bound,
                    "kind": cert.kind, "ratio": cert.ratio, "optimal": bool(cert.optimal),
                    "probabilistic": bool(cert.probabilistic), "seconds": cert.seconds})
        print(f"component {j + 1}: variance={cert.lower:.6g} upper bound={cert.upper_bound:.6g} "
              f"({cert.kind}) certified ratio={cert.ratio:.4f}"
              + (" — provably optimal" if cert.optimal else ""))
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "certificate.json").write_text(json.dumps(
            {"data": str(args.data), "data_checksum": checksum, "k": args.k,
             "preprocessing": list(pre.steps), "certificates": out}, indent=2))
    return EXIT_OK


def main(argv=None) -> int:
    from ._validation import InputError

    args = _parser().parse_args(argv)
    try:
        return {"fit": _cmd_fit, "certify": _cmd_certify}[args.command](args)
    except (InputError, ValueError, _BadInput, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception:  # noqa: BLE001 - last resort: report, exit 2
        traceback.print_exc()
        print("internal error: please report it with the traceback above", file=sys.stderr)
        return EXIT_INTERNAL
