"""The commands ``fit`` (dense data or a text corpus) and ``certify``, and :func:`main`.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from pathlib import Path

import numpy as np

from .._common.validation import InputError
from ..certificates import certify
from ..distributed.array import require_dask
from ..io.loaded import names_for as _names_for
from ..text import format_topics, topics_table
from .options import (
    EXIT_BAD_INPUT,
    EXIT_INTERNAL,
    EXIT_OK,
    _BadInput,
    _check_net_size,
    _check_options,
    _parser,
    beyond_centering,
)
from .words import for_shell
from .output import (
    _out_folder,
    _per_component,
    _progress,
    _save_image_grid,
    _summary_line,
    _write_csv,
    _write_long_components,
    _write_sparse_components,
    _write_text,
    _writing,
)
from .reading import _load, _preprocess, _read_components, _text_cov

#: words of each topic printed on stdout
TOPIC_WORDS = 10
#: the pip line of each optional module (its extra)
_INSTALL = {**{m: "pip install 'nspca-core[dask]'" for m in ("dask", "distributed", "zarr")},
            **{m: "pip install 'nspca-core[formats]'" for m in ("anndata", "h5py", "openpyxl", "zstandard")},
            **{m: "pip install 'nspca-core[app]'" for m in ("streamlit", "plotly")}}


def _run_components(args, data, n: int, unit: str) -> tuple:
    """``components`` on ``data`` (a matrix or a covariance operator of ``n`` features or
    words, the ``unit``) with the options of ``fit``: ``(result, d, output folder, seconds)``.

    The default rank adapts to few features; a --d given is passed as given.
    """
    from ..api import components, default_d

    d = default_d(args.d, n, args.strategy, args.components)  # the front's default (bipartite: d = r)
    if d > n:
        raise _BadInput(f"--d must be at most the number of {unit} ({n}); got {d}")
    _check_net_size(args, d, n)
    out = _out_folder(args.out)
    start = time.perf_counter()
    progress = _progress(not args.quiet)
    # the data were preprocessed (centered, when asked) by the command: used as given here
    res = components(data, n_components=args.components, k=args.k, method=args.method,
                     strategy=args.strategy, d=d, eps=args.eps, random_state=args.random_state,
                     certify=not args.no_certify, center=False, callback=progress)
    if progress is not None:
        progress.close()
    return res, d, out, time.perf_counter() - start


def _parameters(args, d: int) -> dict:
    """The options of ``fit`` recorded in summary.json (``d`` as used)."""
    return {"k": args.k, "components": args.components, "method": args.method,
            "strategy": args.strategy, "d": d, "d_given": args.d is not None,
            "eps": args.eps, "random_state": args.random_state, "certify": not args.no_certify,
            "center": args.preprocessing != "none"}


def _variances(res, per: list) -> dict:
    """The variance entries of summary.json, ``per`` the per-component records."""
    ub = float(getattr(res, "upper_bound", float("nan")))
    joint = {"joint_upper_bound": ub, "joint_ratio": float(res.ratio), "joint_bound_kind": res.bound_kind} \
        if np.isfinite(ub) else {}
    return {"total_variance": float(np.sum(res.variance)),
            "cumulative_variance": [float(v) for v in res.cumulative_variance],
            **joint, "summary": res.summary, "components": per}


def _joint_line(res) -> str | None:
    """The joint certificate as printed: the total variance against the bound on the best
    disjoint components (None without one)."""
    ub = float(getattr(res, "upper_bound", float("nan")))
    if not np.isfinite(ub):
        return None
    return (f"joint certified ratio={res.ratio:.4f}: total variance {res.total_variance:.6g} of at most "
            f"{ub:.6g} for {res.n_components} components with disjoint supports ({res.bound_kind})")


def _ratio(c: dict) -> str:
    """A component's certified ratio as printed ("n/a" without a certificate)."""
    return f"{c['certified_ratio']:.4f}" if c["certified_ratio"] is not None else "n/a"


#: rows per block when --dask reads a .npy file
DASK_BLOCK_ROWS = 50_000


def _read_rows(path: str, start: int, stop: int):
    """Rows [start, stop) of a .npy file (memory-mapped: only those rows are read)."""
    return np.array(np.load(path, mmap_mode="r")[start:stop])


def _dask_data(args):
    """``(X, client)``: DATA as a lazy ``dask.array`` (a .zarr store, or a .npy file read in row
    blocks by the workers) and the ``distributed.Client`` of ``--scheduler`` (None: local)."""

    if beyond_centering(args.preprocessing):
        raise _BadInput("--dask centers implicitly (--preprocessing center) or not at all (none); "
                        f"got --preprocessing {args.preprocessing}")
    dask, da = require_dask()
    path = Path(args.data)
    if path.suffix == ".zarr" and path.exists():
        try:
            import zarr  # noqa: F401 - dask.array.from_zarr needs it
        except ImportError:
            raise _BadInput(f"reading the .zarr store {args.data!r} needs the optional package zarr; install "
                            f"it with: {_INSTALL['zarr']}") from None
        try:
            X = da.from_zarr(str(path))
        except (ValueError, KeyError, OSError, TypeError) as exc:
            raise _BadInput(f"{args.data!r} is not a readable zarr array ({type(exc).__name__}: {exc}); "
                            "--dask reads a .zarr store holding one 2-D array") from None
        if X.ndim != 2:
            raise _BadInput(f"--dask needs a 2-D zarr array (samples x features); got shape {X.shape}")
    elif path.suffix == ".npy" and path.is_file():
        head = np.load(path, mmap_mode="r")  # the header only: nothing is read
        if head.ndim != 2:
            raise _BadInput(f"--dask needs a 2-D .npy array (samples x features); got shape {head.shape}")
        (m, n), dtype = head.shape, head.dtype
        edges = list(range(0, m, DASK_BLOCK_ROWS)) + [m]
        X = da.concatenate([da.from_delayed(dask.delayed(_read_rows)(str(path.resolve()), a, b), shape=(b - a, n),
                                            dtype=dtype) for a, b in zip(edges[:-1], edges[1:])])
    else:
        raise _BadInput(f"--dask reads a .zarr store or a .npy file; got {args.data!r}")
    client = None
    if args.scheduler is not None:
        from distributed import Client

        client = Client(args.scheduler)
    return X, client


def _fit_dask(args) -> int:
    """``fit --dask``: components of a lazy array, written as an in-memory run writes them
    (components.csv, components_long.csv, scores.csv, summary.json)."""
    from ..api import components, default_d

    X, client = _dask_data(args)
    n = int(X.shape[1])
    d = default_d(args.d, n, args.strategy, args.components)
    out = _out_folder(args.out)
    start = time.perf_counter()
    progress = _progress(not args.quiet)
    res = components(X, n_components=args.components, k=args.k, method=args.method, strategy=args.strategy,
                     d=args.d, eps=args.eps, random_state=args.random_state, certify=not args.no_certify,
                     callback=progress, client=client, center=args.preprocessing == "center")
    if progress is not None:
        progress.close()
    d = res.params.get("d", d)
    cols = [f"component_{j + 1}" for j in range(res.n_components)]
    names = _names_for(n, None)  # as load_file names the columns of an array
    _write_csv(out / "components.csv", res.loadings, cols, index=names, index_name="feature")
    _write_long_components(out / "components_long.csv", res.loadings, names, cols)
    # scores of the data as the run used it: X L, minus mu L when centered (X - 1 mu^T never formed)
    L = np.asarray(res.loadings, dtype=float)
    scores = (X @ L).compute() if client is None else client.compute(X @ L).result()
    if args.preprocessing == "center":
        mean = X.mean(axis=0)
        mu = mean.compute() if client is None else client.compute(mean).result()
        scores = scores - np.asarray(mu, dtype=float) @ L
    _write_csv(out / "scores.csv", np.asarray(scores, dtype=float), cols, index=None, index_name="sample")
    per = _per_component(res, res.loadings)
    summary = {"data": str(args.data), "shape": [int(X.shape[0]), n], "dask": True,
               "preprocessing": ["center"] if args.preprocessing == "center" else [],
               "parameters": _parameters(args, d), "dask_notes": res.info.get("notes", []),
               "seconds": time.perf_counter() - start, **_variances(res, per)}
    _write_text(out / "summary.json", json.dumps(summary, indent=2, default=str))
    print(f"wrote {out}/components.csv, components_long.csv, scores.csv, summary.json")
    for note in res.info.get("notes", []):
        print(note, file=sys.stderr)
    for c in per:
        print(f"component {c['component']}: k={c['k']} variance={c['variance']:.6g} certified ratio={_ratio(c)}")
    if _summary_line(res):
        print(_summary_line(res))
    return EXIT_OK


def _sample_names(record: dict, m: int) -> list | None:
    """The samples' names for scores.csv when the file had them (ids, a transposed header, GSM
    ids, obs_names, document names); None (no name column: rows in the file's order) when the
    reader only numbered them 1..m."""
    names = record.get("sample_names")
    if names is None or len(names) != m or list(names) == [str(i + 1) for i in range(m)]:
        return None
    return list(names)


def _cmd_fit(args) -> int:
    if getattr(args, "dask", False):
        return _fit_dask(args)
    X, names, image_shape, checksum, record = _load(args)
    if record.get("sparse"):
        return _fit_text(args, X, names, checksum, record)
    pre = _preprocess(X, args.preprocessing)
    res, d, out, seconds = _run_components(args, pre.X, pre.X.shape[1], "features")
    cols = [f"component_{j + 1}" for j in range(res.n_components)]
    _write_csv(out / "components.csv", res.loadings, cols, index=names, index_name="feature")
    _write_long_components(out / "components_long.csv", res.loadings, names, cols)
    scores = pre.X @ res.loadings
    _write_csv(out / "scores.csv", scores, cols, index=_sample_names(record, scores.shape[0]),
               index_name="sample", labels=record.get("labels"))
    per = _per_component(res, res.loadings)
    summary = {"data": str(args.data), "data_checksum": checksum, "shape": list(X.shape),
               "preprocessing": list(pre.steps), "parameters": {
                   **_parameters(args, d), "header": args.header, "nan_policy": args.nan_policy},
               "reading_notes": record["notes"], "dropped_columns": record["dropped_columns"],
               "seconds": seconds, **_variances(res, per)}
    _write_text(out / "summary.json", json.dumps(summary, indent=2))
    if image_shape is not None:
        _save_image_grid(res.loadings, tuple(image_shape), out / "components.png")
    print(f"wrote {out}/components.csv, components_long.csv, scores.csv, summary.json"
          + (", components.png" if image_shape is not None else ""))
    joint = _joint_line(res)
    for c in per:
        print(f"component {c['component']}: k={c['k']} variance={c['variance']:.6g}"
              + ("" if joint else f" certified ratio={_ratio(c)}"))
    if joint:
        print(joint)
    if _summary_line(res):
        print(_summary_line(res))
    return EXIT_OK


def _fit_text(args, X, words, checksum, record) -> int:
    """``fit`` on a sparse text corpus: components as topics (topics.csv, printed)."""

    w, cov = _text_cov(args, X)
    m, n = X.shape
    res, d, out, seconds = _run_components(args, cov, n, "words")
    L = np.asarray(res.loadings)
    cols = [f"component_{j + 1}" for j in range(L.shape[1])]
    _write_sparse_components(out / "components.csv", L, words, cols)
    _write_long_components(out / "components_long.csv", L, words, cols)
    table = topics_table(L, words)
    with _writing(out / "topics.csv"):
        table.to_csv(out / "topics.csv", index=False, float_format="%.6g")
    scores = np.asarray(w.X @ L)
    if w.center:  # scores of the centered data, (X - 1 mu^T) L, without forming X - 1 mu^T
        scores -= np.asarray(w.X.mean(axis=0)).ravel() @ L
    _write_csv(out / "scores.csv", scores, cols, index=_sample_names(record, scores.shape[0]),
               index_name="document", labels=record.get("labels"))
    per = _per_component(res, L)
    for c, grp in zip(per, (table[table["component"] == j + 1] for j in range(L.shape[1]))):
        c["words"] = grp["word"].tolist()
        c["weights"] = [float(v) for v in grp["weight"]]
    summary = {"data": str(args.data), "data_checksum": checksum, "shape": [m, n],
               "sparse": True, "nonzeros": int(X.nnz), "weighting": args.weighting or "raw",
               "centered": w.center, "preprocessing": [w.weighting] + (["center"] if w.center else []),
               "weighting_notes": list(w.notes), "parameters": _parameters(args, d),
               "reading_notes": record["notes"], "seconds": seconds, **_variances(res, per)}
    _write_text(out / "summary.json", json.dumps(summary, indent=2))
    print(f"wrote {out}/components.csv, components_long.csv, topics.csv, scores.csv, summary.json")
    print(f"weighting: {args.weighting or 'raw'} ({'; '.join(w.notes)})")
    lines = format_topics(L, words, n_words=TOPIC_WORDS).splitlines()
    joint = _joint_line(res)
    for c, line in zip(per, lines):
        print(f"topic {c['component']} (k={c['k']}, variance={c['variance']:.6g}"
              + ("" if joint else f", certified ratio={_ratio(c)}") + f"): {line.split(': ', 1)[1]}")
    if joint:
        print(joint)
    if _summary_line(res):
        print(_summary_line(res))
    return EXIT_OK


def _cmd_certify(args) -> int:

    if getattr(args, "dask", False):
        from ..distributed.array import as_dask_cov

        X, client = _dask_data(args)
        center = args.preprocessing == "center"
        data, steps, checksum = as_dask_cov(X, center=center, client=client), ["center"] * center, None
        record = {"notes": []}
    else:
        X, names, _, checksum, record = _load(args)
    if getattr(args, "dask", False):
        pass  # the Dask operator above
    elif record.get("sparse"):  # the covariance operator of the corpus, never densified
        w, data = _text_cov(args, X)
        steps = [w.weighting] + (["center"] if w.center else [])
    else:
        pre = _preprocess(X, args.preprocessing)
        data, steps = pre.X, list(pre.steps)
    n = X.shape[1]
    comps = _read_components(args.x, n)
    if not 1 <= args.k <= n:
        raise _BadInput(f"--k must be an int in [1, n_features={n}]; got {args.k}")
    out_dir = _out_folder(args.out) if args.out is not None else None
    out = []
    for j in range(comps.shape[1]):
        x = comps[:, j]
        if (x < 0).any() or np.count_nonzero(x) > args.k or not np.isclose(np.linalg.norm(x), 1, atol=1e-6):
            raise _BadInput(f"component {j + 1} of --x is not feasible: it must be >= 0, unit norm, "
                            f"with at most k={args.k} nonzeros; got min={x.min():.3g}, "
                            f"norm={np.linalg.norm(x):.6g}, nonzeros={np.count_nonzero(x)}")
        progress = _progress(not args.quiet)
        if progress is not None:
            progress.stage(f"certifying component {j + 1} of {comps.shape[1]}, k = {args.k}")
        cert = certify(data, k=args.k, x=x, callback=progress, center=False)  # preprocessed above
        if progress is not None:
            progress.close()
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

    args = _parser().parse_args(argv)
    try:
        if args.command == "app":
            from .serve import run_app

            return run_app(args)
        _check_options(args)
        return {"fit": _cmd_fit, "certify": _cmd_certify}[args.command](args)
    except (InputError, ValueError, _BadInput, FileNotFoundError) as exc:
        print(f"error: {for_shell(exc)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ImportError as exc:  # an optional module missing: the pip line, never "internal error"
        module = (exc.name or "").split(".")[0]
        print(f"error: this needs the optional package {module or exc}; install it with: "
              f"{_INSTALL.get(module, f'pip install {module}')}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except MemoryError:
        print("error: not enough memory for this input; try a smaller file, fewer features or "
              "a smaller --d / larger --eps", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception:  # noqa: BLE001 - last resort: report, exit 2
        traceback.print_exc()
        print("internal error: please report it with the traceback above", file=sys.stderr)
        return EXIT_INTERNAL
