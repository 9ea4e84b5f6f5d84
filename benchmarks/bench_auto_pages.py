"""Fresh pages of ``fit(method="auto")`` (issue 39 target 4, the twenty-seventh round): minor page faults
a call, the peak of traced memory of one call, and the CPU of auto and tpower, on this checkout and on
``--base`` in alternating child processes (one data set, several k).

Usage (from the repository root, one BLAS thread, ``nice``)::

    python benchmarks/bench_auto_pages.py --base /tmp/before --data g48x1800,g60x2500 --cache /tmp/unseen-data

A call's large temporaries (auto's n x 36 starts and their projection) taken from memory the allocator
has just handed back to the system are fresh pages: each costs a minor fault (kernel time, counted in
the process's CPU clock).  ``--data``: stand-ins of ``bench_unseen`` (generated into ``--cache`` once) or
the tuned sets (MLL, golub, dlbcl, CBCL, LRS).  Per k: the median over ``--calls`` interleaved calls
(auto, then tpower, as bench_unseen's T4); the SVD unit is the median of 5 thin SVDs of the centered data
(m < n) or eighs of the covariance, measured before the calls.  Ratios of one child's CPU times; the
machine is shared, so the children alternate (``--rounds``) and the medians over rounds are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def child(name: str, ks: list, calls: int, cache: str) -> dict:
    import resource
    import time
    import tracemalloc

    sys.path.insert(0, str(HERE))
    import bench_unseen as bu
    import nspca_core as nc

    X = bu.read(str(bu.store(name, Path(cache))))
    unit = bu.unit_of(X)[0]

    def faults():
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt

    out = {"unit": unit}
    for k in ks:
        for method in ("auto", "tpower"):
            nc.fit(X, k=k, method=method, certify=False)
        rows = {"auto": [], "tpower": [], "fa": 0, "ft": 0}
        for _ in range(calls):
            for method, f in (("auto", "fa"), ("tpower", "ft")):
                f0, t0 = faults(), time.process_time()
                r = nc.fit(X, k=k, method=method, certify=False)
                rows[method].append(time.process_time() - t0)
                rows[f] += faults() - f0
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        nc.fit(X, k=k, certify=False)
        peak = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()
        out[k] = dict(auto=float(np.median(rows["auto"])), tpower=float(np.median(rows["tpower"])),
                      fa=rows["fa"] / calls, ft=rows["ft"] / calls, peak=peak / 2 ** 20, var=float(r.variance))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="the checkout measured beside this one")
    ap.add_argument("--data", default="g48x1800", help="comma list of bench_unseen stand-ins or tuned sets")
    ap.add_argument("--ks", default="5,10,20,50")
    ap.add_argument("--calls", type=int, default=15)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cache", default="/tmp/unseen-data")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    ks = [int(k) for k in a.ks.split(",")]
    if a.child:
        print(json.dumps(child(a.child, ks, a.calls, a.cache)))
        return
    trees = {"before": Path(a.base).resolve(), "this": HERE.parent}
    for name in a.data.split(","):
        got: dict = {t: [] for t in trees}
        for r in range(a.rounds):
            for t in (list(trees) if r % 2 == 0 else list(trees)[::-1]):
                env = dict(os.environ, PYTHONPATH=str(trees[t]))
                cmd = [sys.executable, str(HERE / "bench_auto_pages.py"), "--base", a.base, "--child", name,
                       "--ks", a.ks, "--calls", str(a.calls), "--cache", a.cache]
                o = subprocess.run(cmd, cwd=trees[t], env=env, capture_output=True, text=True, check=True)
                got[t].append(json.loads(o.stdout))
        for k in ks:
            cell = {}
            for t in trees:
                rs = [g[str(k)] for g in got[t]]
                med = {f: float(np.median([x[f] for x in rs])) for f in ("fa", "ft", "peak")}
                med["a/t"] = float(np.median([x["auto"] / x["tpower"] for x in rs]))
                med["units"] = float(np.median([x["auto"] / g["unit"] for x, g in zip(rs, got[t])]))
                med["ms"] = float(np.median([x["auto"] for x in rs])) * 1e3
                cell[t] = med
            b, n = cell["before"], cell["this"]
            same = all(g[str(k)]["var"] == got["before"][0][str(k)]["var"] for g in got["this"])
            print(f"{name} k={k:>3}: auto faults/call {b['fa']:.0f} -> {n['fa']:.0f} (tpower {b['ft']:.0f} -> "
                  f"{n['ft']:.0f}); peak {b['peak']:.2f} -> {n['peak']:.2f} MB; auto {b['ms']:.2f} -> {n['ms']:.2f} ms "
                  f"({n['ms'] / b['ms']:.3f}x); auto/tpower {b['a/t']:.2f} -> {n['a/t']:.2f}; SVD units "
                  f"{b['units']:.2f} -> {n['units']:.2f}; same variance {same}", flush=True)


if __name__ == "__main__":
    main()
