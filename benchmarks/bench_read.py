"""Benchmark: reading CSV files as analysts have them (issue 26 item 3).

Writes, in a temporary folder, a wide 100 x 50,000 and a tall 20,000 x 200 CSV
(random normal values written with 6 significant digits by ``numpy.savetxt``,
one sample per line, no header) and reads each with ``nspca_core.io.load_file``
and with ``pandas.read_csv(path, header=None)``, every read in a fresh child
process (imports done, and each reader run once on a small file, before the
clock starts, so neither reader pays its imports).
Printed, from one run:

- seconds of each read (best of ``--reps``, the two readers alternating) and
  the ratio load_file / read_csv (target <= 2);
- peak memory of each read: the child's peak resident set (``VmHWM`` from
  ``/proc/self/status``, what the kernel saw, not an estimate) minus its resident
  set just before the call; the reader's result is alive at the peak.  Divided
  by the bytes of the final float64 matrix (m x n x 8), target <= 3.  The file's
  bytes that ``load_file`` reads into memory (it reads the whole file, as for an
  upload) are part of its figure; ``read_csv`` streams from the path.
- the same peak as ``tracemalloc`` sees it (Python and NumPy allocations only),
  in a separate child (tracing slows the reader down, so it is not timed).

Usage: ``python benchmarks/bench_read.py [--reps R] [--quick]`` (``--quick``:
files a quarter of the size).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

ROOT = Path(__file__).resolve().parents[1]


def _status(key: str) -> int:
    """A ``/proc/self/status`` figure in bytes (VmRSS, VmHWM)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"{key} not in /proc/self/status")


def child(reader: str, path: str, trace: bool) -> None:
    """One read in this process; prints JSON {seconds, peak_bytes, shape}."""
    import tracemalloc

    import numpy as np
    import pandas as pd

    sys.path.insert(0, str(ROOT))
    from nspca_core.io import load_file

    def read(source=path):
        if reader == "load_file":
            return np.asarray(load_file(source, max_bytes=2_000_000_000).X)
        return pd.read_csv(source, header=None).to_numpy()

    # warm-up on a small file of the same kind: the modules a reader imports on its first call
    # are loaded before the measurement (neither reader pays them)
    small = Path(path).with_suffix(".small.csv")
    np.savetxt(small, np.random.default_rng(0).standard_normal((60, 4)), delimiter=",", fmt="%.6g")
    read(str(small))

    if trace:
        tracemalloc.start()
        X = read()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(json.dumps({"peak_bytes": peak, "shape": list(X.shape)}))
        return
    # reset the high-water mark to now when the kernel allows it (Linux >= 4.0)
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass
    before = _status("VmRSS")
    t0 = time.perf_counter()
    X = read()
    seconds = time.perf_counter() - t0
    peak = _status("VmHWM") - before
    print(json.dumps({"seconds": seconds, "peak_bytes": peak, "shape": list(X.shape),
                      "checksum": float(np.round(X.sum(), 3))}))


def run_child(reader: str, path: Path, trace: bool = False) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", reader, str(path)] + (["--trace"] if trace else []),
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--child", nargs=2, metavar=("READER", "PATH"), help=argparse.SUPPRESS)
    ap.add_argument("--trace", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args.child[0], args.child[1], args.trace)
    import numpy as np

    div = 4 if args.quick else 1
    shapes = [(100, 50_000 // div), (20_000 // div, 200)]
    rng = np.random.default_rng(0)
    print(f"bench_read: load_file vs pandas.read_csv, best of {args.reps} (alternating), each read in a "
          "fresh process")
    print(f"{'file':>16} {'MB':>6} | {'load_file s':>11} {'read_csv s':>10} {'ratio':>6} (<= 2) | "
          f"{'peak/X RSS':>10} {'read_csv':>8} (<= 3) | {'peak/X tracemalloc':>18}")
    with tempfile.TemporaryDirectory() as tmp:
        for m, n in shapes:
            path = Path(tmp) / f"r{m}x{n}.csv"
            np.savetxt(path, rng.standard_normal((m, n)), delimiter=",", fmt="%.6g")
            size = path.stat().st_size
            final = m * n * 8
            runs = {"load_file": [], "read_csv": []}
            for _ in range(args.reps):
                for reader in runs:
                    runs[reader].append(run_child(reader, path))
            sums = {r: v[0]["checksum"] for r, v in runs.items()}
            assert all(v[0]["shape"] == [m, n] for v in runs.values()), runs
            assert abs(sums["load_file"] - sums["read_csv"]) <= 1e-6 * max(1.0, abs(sums["read_csv"])), sums
            best = {r: min(x["seconds"] for x in v) for r, v in runs.items()}
            peak = {r: min(x["peak_bytes"] for x in v) for r, v in runs.items()}
            traced = run_child("load_file", path, trace=True)["peak_bytes"]
            print(f"{f'{m} x {n}':>16} {size / 1e6:6.1f} | {best['load_file']:11.2f} {best['read_csv']:10.2f} "
                  f"{best['load_file'] / best['read_csv']:6.2f}        | {peak['load_file'] / final:10.2f} "
                  f"{peak['read_csv'] / final:8.2f}        | {traced / final:18.2f}")
    print("peak/X: peak memory of the read over the bytes of the final float64 matrix; RSS = the "
          "child's VmHWM minus its VmRSS before the call (the smallest of the runs).")


if __name__ == "__main__":
    main()
