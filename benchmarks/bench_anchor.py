"""Issue 39 (tenth round): the anchored row sums' fixpoint, before and after in ONE process.

Usage: python benchmarks/bench_anchor.py --base /tmp/anchor-base [--cases dlbcl:100,120;golub:150,200] [--path cbcl]
       [--rounds 3]

Records every ``anchor.row_fixpoint`` call (its rows, gaps, start ratios and options) that ``certify(X, k,
x=fit's answer)`` makes on each case (golub-/dlbcl-shaped synthetic matrices as ``bench_certify.gene_shaped``;
MLL, CBCL, LRS from NSPCA_DATA_DIR), and with ``--path NAME`` every other call of that dataset's
``certify_path``; then replays each call with the base checkout's row_fixpoint (``--base``: its nspca_core
imported under another name) and this checkout's, alternating, CPU time, min of ``--rounds`` per call and version,
one BLAS thread.  Prints per case the summed times, their ratio, and whether every replayed answer (proved, r) is
the same bit for bit.  The base's row_fixpoint must take the same arguments (true from dac4a9e on)."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def record(run) -> list:
    """The row_fixpoint calls ``run()`` makes: (rows, gap, r, options) with copies of what the call may change."""
    from nspca_core.certificates import anchor

    orig, calls = anchor.row_fixpoint, []

    def spy(rows, gap, r, **kw):
        calls.append((rows, gap.copy(), np.array(r, copy=True),
                      {a: (b.copy() if isinstance(b, np.ndarray) else b) for a, b in kw.items()}))
        return orig(rows, gap, r, **kw)

    anchor.row_fixpoint = spy
    try:
        run()
    finally:
        anchor.row_fixpoint = orig
    return calls


def replay(calls, old, new, rounds: int):
    """Summed min-of-``rounds`` CPU times of both versions over ``calls``, and how many answers agree bit for bit."""
    t_old = t_new = 0.0
    same = 0
    for rows, gap, r, kw in calls:
        if not hasattr(rows, "cap32"):
            rows.cap32 = rows.cap.astype(np.float32)
        bo = bn = np.inf
        for _ in range(rounds):
            t = time.process_time()
            a = old.row_fixpoint(rows, gap, r.copy(), **kw)
            bo = min(bo, time.process_time() - t)
            t = time.process_time()
            b = new.row_fixpoint(rows, gap, r.copy(), **kw)
            bn = min(bn, time.process_time() - t)
        t_old, t_new = t_old + bo, t_new + bn
        same += bool(a[0] == b[0] and np.array_equal(a[1], b[1]))
    return t_old, t_new, same


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, help="a checkout (git archive) whose nspca_core is 'before'")
    ap.add_argument("--cases", default="dlbcl:100,120;golub:150,200")
    ap.add_argument("--path", default="", help="also a certify_path's calls (every other one) on this dataset")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    link = Path(tempfile.mkdtemp()) / "nspca_core_base"
    link.symlink_to(Path(a.base) / "nspca_core")
    sys.path.insert(0, str(link.parent))
    old = importlib.import_module("nspca_core_base.certificates.anchor")
    from bench_certify import gene_shaped, load, load_note, path_data

    import nspca_core as nc
    from nspca_core.certificates import anchor as new
    from nspca_core.certificates import certify, certify_path

    print(f"bench_anchor: start ({load_note()}); base {old.__file__}, after {new.__file__}", flush=True)
    for item in [c for c in a.cases.split(";") if c]:
        name, ks = item.split(":")
        X = gene_shaped(name) if name in ("golub", "dlbcl") else load(name)
        for k in map(int, ks.split(",")):
            x = nc.fit(X, k=k, certify=False).x
            calls = record(lambda: certify(X, k=k, x=x))
            if not calls:
                print(f"bench_anchor: {name:6s} k={k:3d}: no anchored test", flush=True)
                continue
            to, tn, same = replay(calls, old, new, a.rounds)
            print(f"bench_anchor: {name:6s} k={k:3d}: {len(calls)} calls, identical {same}; row_fixpoint "
                  f"{to * 1e3:.1f} -> {tn * 1e3:.1f} ms ({tn / to:.3f}x)", flush=True)
    if a.path:
        X, ks, _, _ = path_data(a.path)
        calls = record(lambda: certify_path(X, ks=ks))[::2]
        to, tn, same = replay(calls, old, new, a.rounds)
        print(f"bench_anchor: {a.path} path: {len(calls)} calls (every other one), identical {same}; row_fixpoint "
              f"{to * 1e3:.1f} -> {tn * 1e3:.1f} ms ({tn / to:.3f}x)", flush=True)
    print(f"bench_anchor: end ({load_note()})", flush=True)


if __name__ == "__main__":
    main()
