"""Benchmark of sparse, large data (issue 17): synthetic corpora at the UCI shapes, one run.

Usage: python benchmarks/bench_scale.py [--shapes kos,enron,nytimes] [--seed 0]

Data: :func:`nspca_core.corpus.corpus_like` (Zipf background, Poisson lengths, 8
planted topics of 10 words; CSR float64 counts with int32 indices — float64 because
float32 made every product slower here: scipy casts the matrix per product).
Covariance: :class:`nspca_core.operators.sparse.SparseCov`, implicit centering, never dense.

Per shape it prints
- generation time and the process's peak resident memory so far (ru_maxrss);
- the top-(d+1) factor by each truncated solver (eigsh on the smaller side, svds on the
  centered operator, randomized range finder) with its time and eigenvalue error, and
  the ratio of the default (eigsh) to one ``scipy.sparse.linalg.svds(X, k=d)`` of the
  same (uncentered) matrix measured in the same run (target <= 1.5);
- a fit-like single component (k = 10): spannogram on the rank-3 factor + TPower,
  the better kept (targets: KOS <= 5 s, Enron <= 60 s);
- 8 disjoint components, s = 15, by the bipartite method with a rank-5 sketch (the
  paper's setting; NYTimes target <= 10 min and <= 8 GB peak including the matrix);
- planted-topic recovery: 8 components, s = 10 (the topic size), rank 8: the smallest
  over topics of the best Jaccard index with a found support (target >= 0.8), by the
  paper's method (sampled net + refinement) and with the swap step (``swap=True``).
Times are wall-clock on a shared 2-core machine (OMP_NUM_THREADS as set by the caller).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse.linalg as sla

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nspca_core.operators.sparse import FACTOR_METHODS, as_sparse_cov  # noqa: E402
from nspca_core.corpus import CORPUS_SHAPES, corpus_like  # noqa: E402
from nspca_core.peers.bipartite import deflation_components  # noqa: E402
from nspca_core.peers.bipartite import bipartite_components  # noqa: E402

TARGET_FIT = {"kos": 5.0, "enron": 60.0, "nytimes": None}


def peak_gb() -> float:
    """Peak resident memory of this process so far (Linux ru_maxrss is in KB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6


def timed(fn, *args, **kwargs):
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t


def jaccard(a, b) -> float:
    a, b = set(map(int, a)), set(map(int, b))
    return len(a & b) / len(a | b)


def run_shape(name: str, seed: int) -> None:
    D, W, nnz = CORPUS_SHAPES[name]
    print(f"\n=== {name}-shaped synthetic corpus: {D:,} x {W:,}, target {nnz:,} nonzeros ===")
    corpus, t_gen = timed(corpus_like, name, seed=seed)
    X = corpus.X
    mb = (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) / 1e6
    print(f"generated in {t_gen:.1f} s: {X.nnz:,} nonzeros, CSR {X.dtype} {mb:,.0f} MB; "
          f"peak RSS so far {peak_gb():.2f} GB")
    S = as_sparse_cov(X)
    d = 5

    # factor: the three truncated solvers, and one svds(k=d) of the same matrix as the unit
    _, t_unit = timed(sla.svds, X, k=d, random_state=0)
    ref = None
    t_default = None
    for method in FACTOR_METHODS:
        (V, w), t = timed(S.factor, d, method=method)
        ref = w if ref is None else ref
        err = float(np.abs(w - ref).max() / ref[0])
        print(f"factor d={d} by {method:10s}: {t:7.2f} s  ({t / t_unit:4.2f} x svds(X, k={d}) "
              f"= {t_unit:.2f} s)  max |lambda - lambda_eigsh| / lambda_1 = {err:.1e}")
        if method == "eigsh":
            t_default = t
    print(f"factor step / one svds(k=d): {t_default / t_unit:.2f} (target <= 1.5); "
          f"lambda_1..lambda_{d + 1} = {np.array2string(ref, precision=2)}")

    # fit-like single component, k = 10
    k = 10
    t0 = time.perf_counter()
    a = bipartite_components(S, 1, k, d=3, seed=0)
    b = deflation_components(S, 1, k, method="tpower", d=3)
    t_fit = time.perf_counter() - t0
    best = max(a.variance[0], b.variance[0])
    target = TARGET_FIT[name]
    ratio = f" ({t_fit / target:.2f} of the {target:.0f} s target)" if target else ""
    print(f"single component k={k} (spannogram d=3 + TPower): {t_fit:.2f} s{ratio}, variance "
          f"{best:.4g}; peak RSS so far {peak_gb():.2f} GB")

    # the paper's setting: 8 components, s = 15, rank-5 sketch
    res, t_bip = timed(bipartite_components, S, 8, 15, d=5, seed=0)
    print(f"bipartite 8 x s=15, rank 5: {t_bip:.1f} s ({t_bip / 600:.2f} of 10 min), total "
          f"variance {res.variance.sum():.4g}, {res.info['samples']} net points, "
          f"{res.info['assignments']} matchings, {res.info['refinements']} refinements; "
          f"peak RSS so far {peak_gb():.2f} GB (target 8 GB)")

    # planted-topic recovery: the paper's method (with refinement), then with the swap step
    size = corpus.topics[0].size
    r = len(corpus.topics)
    for swap in (False, True):
        rec, t_rec = timed(bipartite_components, S, r, size, d=r, seed=0, swap=swap)
        best_j = [max(jaccard(sup, T) for sup in rec.supports) for T in corpus.topics]
        print(f"planted topics ({r} x {size} words), bipartite rank {r}"
              f"{' + swap' if swap else ''}: min Jaccard {min(best_j):.2f} (target >= 0.8), "
              f"mean {np.mean(best_j):.2f}, total variance {rec.variance.sum():.4g}, {t_rec:.1f} s")
    print(f"peak RSS after {name}: {peak_gb():.2f} GB")


# --------------------------------------------------------------------------- the public API, per strategy
PUBLIC_STRATEGIES = ("bipartite", "deflation-remove", "deflation-project")


def _strategy_run(path: str, strategy: str, queue) -> None:
    """One strategy through ``nspca_core.components`` in a fresh process: its time, the
    process's peak and the memory the run added beyond the data (peak - after loading)."""
    import scipy.sparse as sp

    import nspca_core as nc

    X = sp.load_npz(path).tocsr()
    loaded = peak_gb()
    data_gb = (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) / 1e9
    opts = {"d": 5} if strategy == "bipartite" else {"method": "tpower"}
    t = time.perf_counter()
    res = nc.components(X, n_components=8, k=15, strategy=strategy, random_state=0, certify=False, **opts)
    queue.put({"seconds": time.perf_counter() - t, "peak": peak_gb(), "loaded": loaded, "data": data_gb,
               "total": float(res.variance.sum()), "found": res.n_components})


def run_public(name: str, seed: int, strategies) -> None:
    """Issue 30 item 3: the shape through ``nspca_core.components`` for every strategy, 8
    components of 15 nonzeros (bipartite: rank-5 sketch; deflation: method "tpower"); targets
    <= 4 GB peak and <= 10 min each, and the memory a run adds <= 2x the data's size."""
    import multiprocessing as mp
    import os
    import tempfile

    import scipy.sparse as sp

    D, W, nnz = CORPUS_SHAPES[name]
    corpus, t_gen = timed(corpus_like, name, seed=seed)
    print(f"\n=== {name}-shaped synthetic corpus through the public API: {D:,} x {W:,}, "
          f"{corpus.X.nnz:,} nonzeros (generated in {t_gen:.1f} s) ===", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "X.npz")
        sp.save_npz(path, corpus.X, compressed=False)
        del corpus
        ctx = mp.get_context("spawn")
        for strategy in strategies:
            q = ctx.Queue()
            p = ctx.Process(target=_strategy_run, args=(path, strategy, q))
            p.start()
            out = q.get()
            p.join()
            added = out["peak"] - out["loaded"]
            print(f"components(8, k=15, strategy={strategy!r}): {out['seconds']:.1f} s "
                  f"({out['seconds'] / 600:.2f} of 10 min), peak {out['peak']:.2f} GB "
                  f"({out['peak'] / 4:.2f} of 4 GB), added beyond the loaded data {added:.2f} GB = "
                  f"{added / out['data']:.2f}x the data's {out['data']:.2f} GB (target <= 2x), "
                  f"{out['found']} components, total variance {out['total']:.4g}; load "
                  f"{os.getloadavg()[0]:.1f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", default="kos,enron,nytimes")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--public", action="store_true",
                    help="instead: every strategy through nspca_core.components (issue 30 item 3)")
    ap.add_argument("--strategies", default=",".join(PUBLIC_STRATEGIES))
    args = ap.parse_args()
    if args.public:
        for s in [s.strip().lower() for s in args.shapes.split(",") if s.strip()]:
            run_public(s, args.seed, [t.strip() for t in args.strategies.split(",") if t.strip()])
        return
    shapes = [s.strip().lower() for s in args.shapes.split(",") if s.strip()]
    for s in shapes:
        if s not in CORPUS_SHAPES:
            ap.error(f"--shapes: {s!r} is not one of {sorted(CORPUS_SHAPES)}")
    import os
    print(f"bench_scale: shapes {shapes}, seed {args.seed}, OMP_NUM_THREADS="
          f"{os.environ.get('OMP_NUM_THREADS', '(unset)')}, load average at start "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (the machine is shared)")
    t = time.perf_counter()
    for s in shapes:
        run_shape(s, args.seed)
    print(f"\ntotal {time.perf_counter() - t:.0f} s, peak RSS {peak_gb():.2f} GB, load average "
          f"at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
