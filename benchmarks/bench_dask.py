"""The Dask path on a LocalCluster against the in-memory scipy.sparse path, Enron-shaped.

Enron-shaped synthetic bag-of-words (``nspca_core.corpus.corpus_like("enron")``: 39,861
documents x 28,102 words, Zipf frequencies, planted topics, CSR float64) is written as
one ``.npz`` per block of rows ("one block per file").  Then, each in its own process so
that peak memory is measured per path:

- in memory: the blocks stacked into one CSR, ``SparseCov`` (implicit centering), the
  top-5 factor by ``scipy.sparse.linalg.svds`` on the centered operator, TPower (k = 10)
  and the bipartite method (8 components, s = 15, rank-5 sketch) with NumPy products;
- Dask: ``distributed.LocalCluster`` with 2 worker processes (1 thread each), the blocks
  loaded by the workers from their files (``dask.delayed(load_npz)``; the client never
  holds the data), ``DaskCov`` (tsqr subspace iteration for the factor, Dask graphs for
  the products), the same TPower and bipartite calls.

Prints each step's seconds, the Dask / in-memory time ratio, the agreement of the answers,
and the peak resident memory of each path (in memory: the process; Dask: client + the
workers' peaks), all measured in this one run.  Usage::

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_dask.py [--scale 1.0] [--blocks 8]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import tempfile
import time

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

K_FIT, D_FACTOR, R_COMP, S_COMP = 10, 5, 8, 15


def _peak_mb() -> float:
    """This process's peak resident memory (MB): /proc's VmHWM, not ``ru_maxrss``, which Linux carries over from the
    parent across fork + exec (the spawned workers reported the nanny's or the benchmark's own high-water mark)."""
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM")) / 1024.0


def _solve(cov, out: dict) -> None:
    """The three steps on any Cov-like operator, timed."""
    from nspca_core.peers.tpower import tpower_pca
    from nspca_core.peers.bipartite import bipartite_components

    t = time.perf_counter()
    V, eig = cov.factor(D_FACTOR) if not hasattr(cov, "X_sparse") else \
        cov.factor(D_FACTOR, method="svds")
    out["factor_s"] = time.perf_counter() - t
    out["eig"] = eig
    t = time.perf_counter()
    r = tpower_pca(cov, K_FIT)  # as nspca_core.fit(method="tpower") runs it on the operator
    out["tpower_s"] = time.perf_counter() - t
    out["tpower_x"], out["tpower_var"] = r.x, r.variance
    t = time.perf_counter()
    c = bipartite_components(cov, R_COMP, S_COMP, d=D_FACTOR, seed=0)
    out["bipartite_s"] = time.perf_counter() - t
    out["bipartite_total"] = float(c.variance.sum())
    out["bipartite_supports"] = [s.tolist() for s in c.supports]


def _in_memory(files, queue) -> None:
    from nspca_core.operators.sparse import as_sparse_cov

    out = {}
    t = time.perf_counter()
    X = sp.vstack([sp.load_npz(f) for f in files], format="csr")
    cov = as_sparse_cov(X)
    out["setup_s"] = time.perf_counter() - t
    _solve(cov, out)
    out["peak_mb"] = _peak_mb()
    queue.put(out)


def _worker_peak() -> float:
    return _peak_mb()  # (run in each worker by client.run)


def _with_dask(files, shapes, queue) -> None:
    import dask
    import dask.array as da
    from distributed import Client, LocalCluster

    from nspca_core.distributed.array import as_dask_cov

    out = {}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None, memory_limit="6GB") as cluster, \
            Client(cluster) as client:
        t = time.perf_counter()
        meta = sp.csr_matrix((0, 0))
        blocks = [da.from_delayed(dask.delayed(sp.load_npz)(f), shape=s, dtype=np.float64,
                                  meta=meta) for f, s in zip(files, shapes)]
        X = da.concatenate(blocks, axis=0)
        cov = as_dask_cov(X, client=client)
        cov.diag()
        out["setup_s"] = time.perf_counter() - t
        _solve(cov, out)
        out["factor_rounds"] = cov.factor_info.get("iterations")
        workers = client.run(_worker_peak)
        out["workers_peak_mb"] = sorted(workers.values())
    out["client_peak_mb"] = _peak_mb()
    out["peak_mb"] = out["client_peak_mb"] + sum(out["workers_peak_mb"])
    queue.put(out)


def _run(target, *args):
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=target, args=(*args, q))
    p.start()
    out = q.get()
    p.join()
    return out


# --------------------------------------------------------------------------- end to end, 16 GB
LAZY_M, LAZY_N, LAZY_ROWS, LAZY_GROUPS, LAZY_SIZE = 2_000_000, 2_000, 4_000, 8, 20


def _lazy_block(index):
    """Rows ``[i LAZY_ROWS, (i + 1) LAZY_ROWS)`` of the planted data, float32, made from the
    block's own seed (the same block every time it is read): 8 disjoint groups of 20
    features driven by one factor each (scales 3 ... 1.25), plus uniform noise and an offset."""
    i = int(np.asarray(index).ravel()[0])
    rng = np.random.default_rng([12345, i])
    X = rng.random((LAZY_ROWS, LAZY_N), dtype=np.float32)
    X += np.float32(0.5)
    Z = rng.standard_normal((LAZY_ROWS, LAZY_GROUPS), dtype=np.float32)
    Z *= np.linspace(3.0, 1.25, LAZY_GROUPS, dtype=np.float32)
    for g in range(LAZY_GROUPS):
        X[:, g * LAZY_SIZE:(g + 1) * LAZY_SIZE] += Z[:, g:g + 1]
    return X


def _lazy_array(m: int):
    import dask.array as da

    blocks = m // LAZY_ROWS
    idx = da.arange(blocks, chunks=1)
    return da.map_blocks(_lazy_block, idx, chunks=((LAZY_ROWS,) * blocks, (LAZY_N,)), new_axis=1,
                         dtype=np.float32, meta=np.empty((0, 0), dtype=np.float32))


def _log_passes(t0: float):
    """Print one timestamped line per Dask computation (each a pass over the blocks it reads), so
    that a run stopped early still shows the passes done and their rate."""
    from nspca_core.distributed.array import DaskCov

    compute = DaskCov._compute

    def logged(self, *objs):
        t = time.perf_counter()
        out = compute(self, *objs)
        print(f"  [{time.strftime('%H:%M:%S', time.gmtime())} UTC done; started at +{t - t0:.1f} s] "
              f"Dask computation {self.round_trips} of this operator: {time.perf_counter() - t:.1f} s", flush=True)
        return out

    DaskCov._compute = logged


def _end_to_end(m: int, k_comp: int) -> None:
    """``nspca_core.fit`` and ``components`` on the lazily generated array, through the public
    front, on a LocalCluster of 2 worker processes with memory_limit="1GB" each."""
    from distributed import Client, LocalCluster

    import nspca_core as nc

    X = _lazy_array(m)
    print(f"lazily generated array: {X.shape[0]:,} x {X.shape[1]:,} {X.dtype}, "
          f"{X.nbytes / 1e9:.1f} GB, {X.numblocks[0]} row blocks of {LAZY_ROWS:,}")
    print(f"started {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC; machine: {os.cpu_count()} cores; "
          "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg()) + " at start", flush=True)
    t_all = time.perf_counter()
    _log_passes(t_all)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      memory_limit="1GB") as cluster, Client(cluster) as client:
        t = time.perf_counter()
        r = nc.fit(X, k=10, method="tpower", certify=False, client=client)
        t_fit = time.perf_counter() - t
        w_fit = client.run(_worker_peak)
        print(f"fit(k=10, method='tpower'): {t_fit:.1f} s, {r.info['dask']['round_trips']} Dask computations "
              f"(passes), variance {r.variance:.4f}, support {r.support.tolist()}", flush=True)
        print("  " + r.info["notes"][0], flush=True)
        print(f"  load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}; peak so far: client "
              f"{_peak_mb():.0f} MB, workers " + ", ".join(f"{w:.0f} MB" for w in sorted(w_fit.values())),
              flush=True)
        t = time.perf_counter()
        c = nc.components(X, n_components=LAZY_GROUPS, k=k_comp, strategy="bipartite", client=client)
        t_comp = time.perf_counter() - t
        planted = [set(range(g * LAZY_SIZE, (g + 1) * LAZY_SIZE)) for g in range(LAZY_GROUPS)]
        found = sum(any(set(s.tolist()) <= p for p in planted) for s in c.supports)
        print(f"components({LAZY_GROUPS}, k={k_comp}, strategy='bipartite', d={c.params['d']}): "
              f"{t_comp:.1f} s, {c.info['dask']['round_trips']} Dask computations (passes), {found} of "
              f"{LAZY_GROUPS} supports inside one planted group, total variance {c.variance.sum():.2f}",
              flush=True)
        workers = client.run(_worker_peak)
    client_mb = _peak_mb()
    print(f"\ntotal {time.perf_counter() - t_all:.1f} s; load average "
          + " ".join(f"{x:.1f}" for x in os.getloadavg()) + " at the end")
    print(f"peak resident memory per process: client (with the scheduler and the nannies) "
          f"{client_mb:.0f} MB; workers " + ", ".join(f"{w:.0f} MB" for w in sorted(workers.values()))
          + " (memory_limit 1 GB each)")
    print(f"data {X.nbytes / 1e9:.1f} GB / largest process {max([client_mb, *workers.values()]) / 1e3:.2f} GB"
          f" = {X.nbytes / 1e6 / max([client_mb, *workers.values()]):.0f}x")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0, help="fraction of the Enron documents")
    ap.add_argument("--blocks", type=int, default=8, help="files (row blocks)")
    ap.add_argument("--lazy", action="store_true",
                    help="the end-to-end case instead: a lazily generated 2,000,000 x 2,000 float32 array")
    ap.add_argument("--rows", type=int, default=LAZY_M, help="rows of the lazy array (--lazy)")
    args = ap.parse_args(argv)
    if args.lazy:
        _end_to_end(args.rows, LAZY_SIZE)
        return

    from nspca_core.corpus import corpus_like

    t = time.perf_counter()
    corpus = corpus_like("enron", seed=0, scale=args.scale)
    X = corpus.X.tocsr()
    m, n = X.shape
    print(f"Enron-shaped synthetic corpus: {m:,} x {n:,}, {X.nnz:,} nonzeros, {X.dtype}, "
          f"generated in {time.perf_counter() - t:.1f} s")
    print(f"steps: top-{D_FACTOR} factor; TPower k={K_FIT} (10 restarts); bipartite "
          f"{R_COMP} components x s={S_COMP}, rank-{D_FACTOR} sketch (2000 net points)")
    print("machine: " + f"{os.cpu_count()} cores; load average "
          + " ".join(f"{x:.1f}" for x in os.getloadavg()) + " at start")
    with tempfile.TemporaryDirectory() as tmp:
        edges = np.linspace(0, m, args.blocks + 1).astype(int)
        files, shapes = [], []
        for i, (a, b) in enumerate(zip(edges[:-1], edges[1:])):
            f = os.path.join(tmp, f"block{i:03d}.npz")
            sp.save_npz(f, X[a:b])
            files.append(f)
            shapes.append((b - a, n))
        del X, corpus
        mem = _run(_in_memory, files)
        dsk = _run(_with_dask, files, shapes)

    print(f"\n{'step':<26}{'in memory s':>12}{'Dask s':>10}{'ratio':>8}")
    for key, label in [("setup_s", "load + means (+ diag)"), ("factor_s", f"factor d={D_FACTOR}"),
                       ("tpower_s", f"TPower k={K_FIT}"),
                       ("bipartite_s", f"bipartite {R_COMP} x {S_COMP}")]:
        print(f"{label:<26}{mem[key]:>12.2f}{dsk[key]:>10.2f}{dsk[key] / mem[key]:>8.2f}")
    tot_m = sum(mem[k] for k in ("factor_s", "tpower_s", "bipartite_s"))
    tot_d = sum(dsk[k] for k in ("factor_s", "tpower_s", "bipartite_s"))
    print(f"{'solvers total':<26}{tot_m:>12.2f}{tot_d:>10.2f}{tot_d / tot_m:>8.2f}")
    print(f"\nDask factor: {dsk['factor_rounds']} subspace rounds (one pass each, gap-aware stop); in memory: "
          "svds on the centered LinearOperator")
    rel = np.abs(dsk["eig"] - mem["eig"]) / mem["eig"][0]
    print(f"eigenvalues λ1..λ{D_FACTOR + 1}: max |Δ| / λ1 = {rel.max():.2e}")
    print(f"TPower: max |x_dask - x_mem| = {np.abs(dsk['tpower_x'] - mem['tpower_x']).max():.2e}, "
          f"variance {dsk['tpower_var']:.6g} vs {mem['tpower_var']:.6g}")
    same = dsk["bipartite_supports"] == mem["bipartite_supports"]
    print(f"bipartite: total variance {dsk['bipartite_total']:.6g} vs {mem['bipartite_total']:.6g}, "
          f"same supports: {same}")
    print(f"\npeak memory: in memory {mem['peak_mb']:.0f} MB (one process); Dask "
          f"{dsk['peak_mb']:.0f} MB = client {dsk['client_peak_mb']:.0f} MB + workers "
          + " + ".join(f"{w:.0f}" for w in dsk["workers_peak_mb"]) + " MB")
    print("(the Dask path pays a scheduler round trip per product: on one small machine it is "
          "slower; it exists for data that does not fit one machine)")


if __name__ == "__main__":
    main()
