"""Certified ratios against another tree, k by k: how far each one-k certificate has moved (issue 39).

Issue 39 asks for certificates within 3x the answer's cost "keeping every ratio within 0.005 of today's". Each
round compared its ratios with the round before at a few k (``bench_certify.py --issue39 cost-ab``), so small
give-backs could add up between rounds and at the k no round measured.  This benchmark compares any two trees at
many k on the same feasible points: the data and the points (``fit(X, k, certify=False).x`` of THIS tree) are
written once to a folder, then each tree's worker (a subprocess with that tree first on ``sys.path``) certifies
them through the public ``nspca_core.certify`` only, which every tree since the issue was filed has.

    python benchmarks/bench_drift.py --base /tmp/filing        # git archive 10e002e | tar -x -C /tmp/filing
    python benchmarks/bench_drift.py --base /tmp/filing --data cbcl --ks 65,80,100,130

Prints, per dataset and k: the base's ratio and CPU seconds, this tree's, the change, and ``<<<`` where this tree
is more than ``--tol`` (0.005) looser.  The CPU clock, one BLAS thread (set before numpy loads).
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

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

# k per dataset: the issue's own (5, 10, 50, 65), the band where the DNN's stopping rules act (60..130) and the
# large k of the app's axis
KS = {"cbcl": (2, 5, 10, 20, 30, 50, 65, 80, 90, 100, 130, 200, 300),
      "lrs": (3, 5, 8, 10, 20, 50, 90),
      "mll": (5, 10, 20, 50, 70, 100, 150, 200),
      "golub": (5, 10, 20, 50, 70, 90, 110, 130, 160),
      "dlbcl": (5, 10, 20, 50, 70, 90, 110, 130, 160),
      "gene60": (5, 10, 20, 50, 70, 90),
      "gene100": (5, 10, 20, 50, 70, 90, 120),
      "corpus": (5, 10, 50),
      "kos": (5, 10, 50),
      # bench_unseen's topic-corpus stand-ins (made-up words written as text, CountVectorizer): c3000 takes the
      # dense route (n <= 2,500), c5000 / c8000 the operator route
      "c3000": (5, 10, 20, 50, 80),
      "c5000": (5, 10, 20, 50),
      "c8000": (5, 10, 50)}
UNSEEN = ("c3000", "c5000", "c8000")


def dataset(name: str):
    """The benchmarks' datasets (bench_certify's loaders and stand-ins) and two gene stand-ins of other shapes."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_certify as bc

    if name in ("golub", "dlbcl"):
        return bc.gene_shaped(name)
    if name == "gene60":
        return bc.gene_matrix(60, 2400, seed=7)
    if name == "gene100":
        return bc.gene_matrix(100, 5000, seed=8, modules=20)
    if name in UNSEEN:
        import bench_unseen as bu

        return bu.DATA[name][1]()
    return bc.cost_data(name)


def prepare(names, ks_arg, folder: Path) -> dict:
    """Write each dataset and this tree's answers at its k to ``folder``; returns ``{name: [k, ...]}``."""
    sys.path.insert(0, str(ROOT))
    from nspca_core import fit

    plan = {}
    for name in names:
        X = dataset(name)
        if X is None:
            continue
        ks = [k for k in (ks_arg or KS[name]) if k <= X.shape[1]]
        xs = {str(k): fit(X, k=k, certify=False).x for k in ks}
        if sp.issparse(X):
            sp.save_npz(folder / f"{name}_X.npz", sp.csr_matrix(X))
        else:
            np.save(folder / f"{name}_X.npy", np.asarray(X))
        np.savez(folder / f"{name}_xs.npz", **xs)
        plan[name] = ks
    return plan


def worker(folder: str, names: str) -> None:
    """One tree's certificates (``sys.path`` chosen by the caller): one JSON line per dataset."""
    from nspca_core import certify

    for name in names.split(","):
        base = Path(folder)
        dense = base / f"{name}_X.npy"
        X = np.load(dense) if dense.exists() else sp.load_npz(base / f"{name}_X.npz")
        xs = np.load(base / f"{name}_xs.npz")
        rows = {}
        for k in sorted(xs.files, key=int):
            t = time.process_time()
            c = certify(X, k=int(k), x=xs[k])
            rows[k] = (float(c.ratio), time.process_time() - t)
        print("DRIFT " + json.dumps({"name": name, "rows": rows}), flush=True)


def run_tree(tree: str, folder: Path, names) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run([sys.executable, __file__, "--worker", str(folder), "--names", ",".join(names)],
                         env=env, capture_output=True, text=True, cwd=tempfile.gettempdir())
    if out.returncode:
        print(f"drift: the worker of {tree} failed:\n{out.stderr[-2000:]}")
        return {}
    return {d["name"]: d["rows"] for d in (json.loads(line[6:]) for line in out.stdout.splitlines()
                                           if line.startswith("DRIFT "))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", help="the tree compared with (a checkout or git archive)")
    ap.add_argument("--data", default="cbcl,lrs,mll,golub,dlbcl,gene60,gene100,corpus,kos",
                    help="comma-separated names of KS (the topic corpora c3000,c5000,c8000 are not in the default)")
    ap.add_argument("--ks", default="", help="comma-separated k (default: per dataset, see KS)")
    ap.add_argument("--tol", type=float, default=0.005)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--names", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        worker(a.worker, a.names)
        return
    if not a.base:
        ap.error("--base is required")
    names = [s for s in a.data.split(",") if s]
    ks = [int(v) for v in a.ks.split(",")] if a.ks else None
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        plan = prepare(names, ks, folder)
        names = list(plan)
        before, after = run_tree(a.base, folder, names), run_tree(str(ROOT), folder, names)
    worst = 0.0
    for name in names:
        for k in plan[name]:
            b, n = before.get(name, {}).get(str(k)), after.get(name, {}).get(str(k))
            if b is None or n is None:
                continue
            d = n[0] - b[0]
            worst = min(worst, d)
            flag = "  <<<" if d < -a.tol else ""
            print(f"drift: {name:8s} k={k:4d}: ratio {b[0]:.4f} ({b[1]:.2f} CPU s) -> {n[0]:.4f} ({n[1]:.2f} CPU s), "
                  f"change {d:+.4f}{flag}", flush=True)
    print(f"drift: worst change {worst:+.4f} (tolerance {a.tol})")


if __name__ == "__main__":
    main()
