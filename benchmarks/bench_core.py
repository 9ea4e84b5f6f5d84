"""Speed and memory of the exact spannogram (issue 3, "Speed and memory"), as ratios.

Run from the repository root:  ``python benchmarks/bench_core.py``

Units, measured in the same run (median of 3):
  * CBCL (n = 361): one ``numpy.linalg.eigh`` of the covariance;
  * MLL (n = 12582, m = 72): one thin SVD of the centered data.
Targets: CBCL exact d=2 one k <= 5, exact d=3 one k <= 150, enet_path d=3 eps=0.1 all k <= 60;
MLL exact d=2 one k <= 150, enet_path all k <= 50, peak memory <= 1 GB.

Data are read from NSPCA_DATA_DIR (default ../shared/datasets from the repository root); a
missing dataset is skipped.  BLAS threads default to 1 so that ratios are comparable.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nspca_core.lowrank import lowrank_factor  # noqa: E402
from nspca_core.spannogram import lowrank_nspca  # noqa: E402


def data_dir() -> Path:
    return Path(os.environ.get("NSPCA_DATA_DIR", ROOT.parent / "shared" / "datasets"))


def _median_time(fn, reps=3):
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def _peak_mb(fn):
    tracemalloc.start()
    try:
        out = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return out, peak / 2**20


def _load(name, key):
    path = data_dir() / name
    if not path.exists():
        print(f"[skip] {name} not found in {data_dir()}")
        return None
    return np.load(path, allow_pickle=False)[key]


# --------------------------------------------------------------------------- ε-net timings


def bench_enet(label, V, ks, unit, target):
    """enet_path timings (nspca_core.enet is written by another helper; skipped if absent)."""
    try:
        from nspca_core.enet import enet_path
    except ImportError:
        print(f"  {label}: enet_path not available (nspca_core.enet missing) - skipped")
        return
    _, sec = _timed(lambda: enet_path(V, ks, eps=0.1, seed=0))
    print(f"  {label}: enet_path d={V.shape[1]} eps=0.1, {len(ks)} values of k: "
          f"{sec / unit:8.1f} units (target <= {target})")


# --------------------------------------------------------------------------- datasets


def bench_cbcl(ks=(10, 40, 100, 180)):
    images = _load("cbcl_faces_train.npz", "images")
    if images is None:
        return
    X = images.reshape(images.shape[0], -1).astype(float)
    X -= X.mean(axis=0)
    A = X.T @ X / X.shape[0]
    unit = _median_time(lambda: np.linalg.eigh(A))
    print(f"CBCL n={A.shape[0]}: unit = eigh of the covariance = {unit * 1e3:.1f} ms")
    V3, _ = lowrank_factor(cov=A, d=3)
    for k in ks:
        r2, s2 = _timed(lambda: lowrank_nspca(V3[:, :2], k))
        print(f"  exact d=2 k={k}: {s2 / unit:8.1f} units (target <= 5)  "
              f"[{r2.info['candidates']} candidates, path {r2.info['path']}]")
        r3, s3 = _timed(lambda: lowrank_nspca(V3, k))
        print(f"  exact d=3 k={k}: {s3 / unit:8.1f} units (target <= 150)  "
              f"[{r3.info['candidates']} candidates, {r3.info['pd_solves']} (P_d) solves, "
              f"path {r3.info['path']}]")
    # ---- enet_path timings (section kept for nspca_core.enet) ----
    bench_enet("CBCL", V3, list(range(1, A.shape[0] + 1)), unit, 60)


def bench_mll(ks=(10, 100)):
    X = _load("mll_leukemia.npz", "X")
    if X is None:
        return
    X = X.astype(float)
    X -= X.mean(axis=0)
    unit = _median_time(lambda: np.linalg.svd(X, full_matrices=False))
    print(f"MLL {X.shape[0]}x{X.shape[1]}: unit = thin SVD of the centered data = {unit * 1e3:.1f} ms")
    V2, _ = lowrank_factor(X, d=2)
    for k in ks:
        (r, peak), sec = _timed(lambda: _peak_mb(lambda: lowrank_nspca(V2, k)))
        print(f"  exact d=2 k={k}: {sec / unit:8.1f} units (target <= 150), peak traced memory "
              f"{peak:.0f} MB (target <= 1024)  [{r.info['candidates']} candidates, path {r.info['path']}]")
    # ---- enet_path timings (section kept for nspca_core.enet) ----
    V3, _ = lowrank_factor(X, d=3)
    bench_enet("MLL", V3, list(range(1, X.shape[1] + 1)), unit, 50)


if __name__ == "__main__":
    bench_cbcl()
    bench_mll()
