"""The one contract's costs (issue 36), as ratios measured in one run.

Run from the repository root:  ``python benchmarks/bench_contract.py``  (``--quick``: a smaller corpus)

1. The certify default of ``components`` (True, as ``fit``): ``components(certify=True)`` over
   ``components(certify=False)`` on CBCL (2,429 x 361, when its local copy is present) and on a
   synthetic corpus of NYTimes' width (102,660 words, ~230 distinct words per document, Zipf word
   frequencies; fewer documents than NYTimes' 300,000 so the run stays minutes), CPU time.
2. Centering dense data: the extra memory ``fit`` allocates for centering (tracemalloc peak over the
   data's size) with the centered copy, and with the implicit operator (what a matrix above a
   quarter of the available memory gets), and the time of the two paths over one thin SVD.
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
import scipy.sparse as sp  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import nspca_core as nc  # noqa: E402
from nspca_core.operators import covariance as _covariance  # noqa: E402


def _cpu(f):
    t = time.process_time()
    out = f()
    return out, time.process_time() - t


def corpus(m: int, n: int = 102_660, per_doc: int = 230, seed: int = 0):
    """Documents x words counts with Zipf-distributed word frequencies (NYTimes' width)."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, n + 1) ** 1.07
    p /= p.sum()
    rows = np.repeat(np.arange(m), per_doc)
    cols = rng.choice(n, size=m * per_doc, p=p)
    X = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(m, n))
    X.sum_duplicates()
    return X


def bench_certify_default(name, X, r=3, k=10):
    off, t_off = _cpu(lambda: nc.components(X, n_components=r, k=k, certify=False))
    on, t_on = _cpu(lambda: nc.components(X, n_components=r, k=k))
    ratios = [f"{res.ratio:.3f}" for res in on.results]
    print(f"{name} {X.shape}, {r} components of k = {k} (deflation-remove): certify=True / certify=False "
          f"= {t_on / t_off:.2f} ({t_on:.2f} / {t_off:.2f} CPU s); certified ratios {', '.join(ratios)}; "
          f"joint {on.ratio:.3f}")


def bench_centering(m=2000, n=3000):
    rng = np.random.default_rng(1)
    X = rng.gamma(2.0, 1.0, (m, n))
    _, t_svd = _cpu(lambda: np.linalg.svd(X - X.mean(axis=0), full_matrices=False))
    for label, limit in (("centered copy", None), ("implicit (memory short)", 4.0 * X.nbytes - 1)):
        saved = _covariance.available_memory
        if limit is not None:
            _covariance.available_memory = lambda: limit
        try:
            tracemalloc.start()
            res, t = _cpu(lambda: nc.fit(X, k=10, method="tpower", certify=False))
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        finally:
            _covariance.available_memory = saved
        print(f"{label}: fit(tpower) on {m} x {n} ({X.nbytes / 1e6:.0f} MB): peak allocation "
              f"{peak / X.nbytes:.2f} x the data, {t / t_svd:.2f} thin SVDs, variance {res.variance:.6g}")


def main(quick=False):
    print(f"CPU time of this process; BLAS threads {os.environ['OMP_NUM_THREADS']}; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    path = Path(os.environ.get("NSPCA_DATA_DIR", ROOT.parent / "shared" / "datasets")) / "cbcl_faces_train.npz"
    print("\n-- 1. the certify default of components")
    if path.exists():
        X = np.load(path, allow_pickle=False)["images"]
        bench_certify_default("CBCL", X.reshape(X.shape[0], -1).astype(float))
    else:
        print(f"[skip] {path.name} not found")
    bench_certify_default("NYTimes-width corpus", corpus(5_000 if quick else 30_000))
    print("\n-- 2. centering dense data")
    bench_centering()


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
