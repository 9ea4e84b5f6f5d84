"""Benchmark: the files of issue 38 — a GEO family SOFT file read streamed, compressed tables.

1. A family SOFT file written as GEO writes one (``tests/core/io/geo_writer.py``: ^SERIES, a
   platform table, one ^SAMPLE block per sample with ``ID_REF, VALUE, ABS_CALL``) of about
   ``--soft-mb`` MB (default 200), read by :func:`nspca_core.io.load_file` in a fresh child
   process: seconds, and the peak resident memory (VmHWM) above the process's memory before the call
   (pandas imported),
   as a multiple of the numeric table (samples x probes float64) and of the file — the budget
   is 3x the table.  With ``--geoparse DIR`` (a folder where GEOparse is importable, e.g.
   ``pip install --target DIR GEOparse tqdm``) GEOparse reads the same file too
   (``GEOparse.get_GEO(filepath=...)`` then ``pivot_samples("VALUE")``): its seconds and peak.
2. A numeric CSV table of ``--csv-mb`` MB (default 50), read plain and gzip-compressed: the
   time ratio gz/plain (the decompression's own share).

Ratios within one run on this machine (2 shared cores, loaded): compare within a run.
Usage: ``python benchmarks/bench_files.py [--soft-mb 200] [--csv-mb 50] [--geoparse DIR]``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CHILD = r"""
import json, sys, time
sys.path.insert(0, {root!r})
{setup}
def rss(key="VmRSS"):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key):
                return int(line.split()[1]) * 1024
before = rss()
t = time.perf_counter()
{call}
seconds = time.perf_counter() - t
peak = rss("VmHWM")  # not ru_maxrss: Linux keeps the parent's high-water mark across fork + exec
print(json.dumps({{"seconds": seconds, "before": before, "peak": peak, "shape": list(shape)}}))
"""


def child(setup: str, call: str) -> dict:
    code = CHILD.format(root=str(ROOT), setup=setup, call=call)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def write_family(path: Path, mb: float, n_probes: int = 54_675) -> tuple:
    """A family SOFT of about ``mb`` MB: one platform, samples of ``n_probes`` probes each."""
    from tests.core.io.geo_writer import family_soft

    rng = np.random.default_rng(0)
    ids = [f"{200000 + i}_s_at" for i in range(n_probes)]
    syms = [f"GENE{i % 20000}" for i in range(n_probes)]
    one = len(family_soft([{"gsm": "GSM1", "platform": "GPL570", "title": "t", "ids": ids,
                            "values": np.round(rng.gamma(2, 300, n_probes), 1)}], {"GPL570": (ids, syms)}))
    per_sample = one - len(family_soft([], {"GPL570": (ids, syms)}))
    m = max(2, int(mb * 1e6 // per_sample))
    samples = [{"gsm": f"GSM{1000 + j}", "platform": "GPL570", "title": f"patient {j}",
                "characteristics": [f"disease state: {'AML' if j % 3 else 'healthy'}"], "ids": ids,
                "values": np.round(rng.gamma(2, 300, n_probes), 1)} for j in range(m)]
    path.write_text(family_soft(samples, {"GPL570": (ids, syms)}))
    return m, n_probes


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--soft-mb", type=float, default=200)
    ap.add_argument("--csv-mb", type=float, default=50)
    ap.add_argument("--geoparse", default=None)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        soft = tmp / "GSE1_family.soft"
        m, n = write_family(soft, args.soft_mb)
        size = soft.stat().st_size
        table = m * n * 8
        r = child("import pandas; from nspca_core.io import load_file",
                  f"d = load_file({str(soft)!r}, max_bytes=10**10); shape = d.X.shape")
        grow = r["peak"] - r["before"]
        print(f"family SOFT {size / 1e6:.0f} MB ({m} samples x {n} probes, table {table / 1e6:.0f} MB float64): "
              f"load_file {r['seconds']:.1f} s, peak +{grow / 1e6:.0f} MB = {grow / table:.2f}x the table "
              f"(budget 3x: {'ok' if grow <= 3 * table else 'OVER'}), {grow / size:.2f}x the file")
        if args.geoparse:
            g = child(f"sys.path.insert(0, {args.geoparse!r}); import GEOparse, logging; "
                      "logging.disable(logging.CRITICAL)",
                      f"gse = GEOparse.get_GEO(filepath={str(soft)!r}, silent=True); "
                      "df = gse.pivot_samples('VALUE'); shape = df.T.shape")
            ggrow = g["peak"] - g["before"]
            print(f"GEOparse on the same file: {g['seconds']:.1f} s, peak +{ggrow / 1e6:.0f} MB = "
                  f"{ggrow / table:.2f}x the table; time ratio load_file/GEOparse "
                  f"{r['seconds'] / g['seconds']:.2f}, memory ratio {grow / ggrow:.2f}")
        soft.unlink()
        rng = np.random.default_rng(1)
        cols = 200
        rows = max(10, int(args.csv_mb * 1e6 // (cols * 12)))
        X = np.round(rng.normal(size=(rows, cols)) * 1000, 4)
        csv = tmp / "t.csv"
        np.savetxt(csv, X, delimiter=",", fmt="%.4f", header=",".join(f"g{j}" for j in range(cols)), comments="")
        (tmp / "t.csv.gz").write_bytes(gzip.compress(csv.read_bytes(), compresslevel=6))
        times = {}
        for name in ("t.csv", "t.csv.gz"):
            best = min(child("import pandas; from nspca_core.io import load_file",
                             f"d = load_file({str(tmp / name)!r}, max_bytes=10**10); shape = d.X.shape")["seconds"]
                       for _ in range(2))
            times[name] = best
        gz_mb = (tmp / "t.csv.gz").stat().st_size / 1e6
        print(f"CSV {csv.stat().st_size / 1e6:.0f} MB ({rows} x {cols}), gzip {gz_mb:.0f} MB: "
              f"plain {times['t.csv']:.2f} s, gz {times['t.csv.gz']:.2f} s, ratio gz/plain "
              f"{times['t.csv.gz'] / times['t.csv']:.2f}")


if __name__ == "__main__":
    main()
