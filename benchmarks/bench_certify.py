"""Benchmark of the certificates (issue 4): certified ratios and time in eigh units, one run.

Usage: python benchmarks/bench_certify.py [--quick] [--no-fit]
       python benchmarks/bench_certify.py --issue28 exact,components,mll-path,genes
       python benchmarks/bench_certify.py --issue39 time-limit,exact-mll,cost,cliff,path [--stride 4]
       python benchmarks/bench_certify.py --issue39 path-ab --base /tmp/before --cache /tmp/cache --stride 4

``--issue39``: ``time-limit`` — effort="exact" at n = 2,000 with time_limit 1 / 5 / 20 s (wall
and CPU against the limit, issue 40 item 6); ``exact-mll`` — MLL k = 50 with a CPU-time budget of
10 and 60 s, the bound the callback reported along the way; ``cost`` — the certificate's CPU time
over the answer's at effort="auto" (LRS, CBCL, MLL, a synthetic 5,000 x 2,000 sparse review
corpus); ``cost-ab`` — the same before and after in one run (``--base``: a checkout of the
"before" tree, e.g. ``git archive main | tar -x -C /tmp/ccost-base``), adding a KOS-shaped
corpus; ``cliff`` — one-k certificates at
k = 60..80 on dlbcl- and golub-shaped synthetic gene matrices (the former k <= 64 limit); ``path`` —
certify_path over k = 2..200 (MLL, golub- and dlbcl-shaped) and k = 1..361 (CBCL): units, min and
mean ratio, and the number of k where the path's bound is above certify(k)'s by more than 1e-9
relative (``--stride s``: certify(k) at every s-th k only; ``--data``: which datasets); ``path-ab``
— the same, before (the checkout ``--base``) and after (this one) in one run, each path in its own
subprocess, certify(k) computed once by this checkout and kept in ``--cache``.

``--issue28`` (issue 28, CPU clock of the process, one BLAS thread): ``exact`` — effort="exact"
on LRS every k, CBCL k <= 10, MLL k = 2..5 (time limit 60 s wall each; CPU and wall reported);
``components`` — the joint certified ratio of several components (planted set, CBCL, LRS);
``mll-path`` — one-k certificates at k in {5, 10, 20, 50} (SVD units, target >= 0.97 in <= 30)
and certify_path over k = 2..200 (target >= 0.95 at every k, <= 2,000 SVD units), with certify(k)
beside the path at a few k (item 2: the path at least as tight); ``genes`` — the same on synthetic
gene matrices (72 x 5,147 and 78 x 7,600: log-normal levels, correlated modules;
:func:`gene_matrix`); ``cbcl-path`` — certify_path over all 361 k of CBCL (target >= 0.98 in
<= 500 eigh units).

Data from NSPCA_DATA_DIR (default ../shared/datasets from the repo root); a missing
dataset is skipped.  Centered data, A = X^T X / m.  Time unit: one numpy.linalg.eigh
of the same covariance (MLL: one thin SVD of the centered data), measured in this run.
Lower bounds: the path's own ascent, and fit(method="auto", certify=False) where the
path falls short of the target (time of fit not counted in the certificate time).
Lazily imported modules are imported once before any timing (warm_up): a per-process
one-off, not a cost of a certificate.  The machine may be shared: the unit is the fastest
of several eigh calls before and after, and figures vary by ~20% between runs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
# NSPCA_BENCH_CODE: the checkout whose nspca_core is measured (``--issue39 cost-ab``'s "before" runs a
# worker on another checkout, e.g. ``git worktree add /tmp/ccost-base <commit>``); data and helpers from here
sys.path.insert(0, os.environ.get("NSPCA_BENCH_CODE", str(ROOT)))

from nspca_core.certificates import certify_path  # noqa: E402
try:  # (a "before" checkout older than certificates/route.py: the same function in single.py)
    from nspca_core.certificates.route import _certify_cov  # noqa: E402
except ImportError:
    from nspca_core.certificates.single import _certify_cov  # noqa: E402
from nspca_core.operators.cov import Cov  # noqa: E402


def data_dir() -> Path:
    return Path(os.environ.get("NSPCA_DATA_DIR", ROOT.parent / "shared" / "datasets"))


def load(name):
    files = {"cbcl": "cbcl_faces_train.npz", "lrs": "lrs_spectrometer.npz", "mll": "mll_leukemia.npz"}
    p = data_dir() / files[name]
    if not p.exists():
        print(f"[skip] {name}: {p} not found")
        return None
    z = np.load(p, allow_pickle=False)
    X = (z["images"].reshape(len(z["images"]), -1) if name == "cbcl" else z["X"]).astype(float)
    return X - X.mean(axis=0)


def unit_eigh(A, reps=5, clock=time.perf_counter):
    """Fastest of a few eigh calls: the machine is shared, the minimum is the least noisy."""
    ts = []
    for _ in range(reps):
        t = clock()
        np.linalg.eigh(A)
        ts.append(clock() - t)
    return float(np.min(ts))


def fit_x(cov, k):
    try:
        from nspca_core.solve import fit_cov
    except ImportError:
        return None
    r = fit_cov(cov, k, "auto", 3, 0.1, 0, None, {})
    return r.x


def warm_up():
    """Import the lazily imported modules (scipy.sparse, spannogram, api) before any timing:
    a one-off per process, not part of a certificate's cost."""
    rng = np.random.default_rng(0)
    Y = rng.standard_normal((10, 200))
    A = Y.T @ Y
    certify_path(cov=A, ks=[1, 5, 9])
    _certify_cov(Cov(A=A), 5)
    fit_x(Cov(A=A), 5)


def path_bench(name, X, target, budget_units, use_fit, clock=time.perf_counter):
    A = X.T @ X / X.shape[0]
    cov = Cov(A=A)
    n = A.shape[0]
    unit = unit_eigh(A, clock=clock)
    ks = list(range(1, n + 1))
    t = clock()
    path = certify_path(cov=A, ks=ks)
    sec = clock() - t
    u_before = unit
    unit = min(unit, unit_eigh(A, clock=clock))
    ratios = np.array([c.ratio for c in path])
    print(f"{name}: n={n}, eigh unit {unit * 1e3:.1f} ms (before {u_before * 1e3:.1f} ms)")
    print(f"{name}: path k=1..{n}: {sec / unit:.0f} units (target <= {budget_units}); "
          f"min ratio {ratios.min():.4f} at k={ks[int(ratios.argmin())]}, mean {ratios.mean():.4f}, "
          f"optimal at {sum(c.optimal for c in path)} k's")
    kinds = {}
    for c in path:
        kinds[c.kind] = kinds.get(c.kind, 0) + 1
    print(f"{name}: winning bounds {kinds}")
    low = [k for k, r in zip(ks, ratios) if r < target]
    print(f"{name}: k with ratio < {target} (path's own lower bound): {low}")
    if use_fit and low:
        fixed = []
        for k in low:
            x = fit_x(cov, k)
            if x is None:
                break
            lower = cov.quad(x / np.linalg.norm(x))
            ub = path[k - 1].upper_bound
            ratios[k - 1] = max(ratios[k - 1], lower / ub)
            fixed.append((k, round(lower / ub, 4)))
        print(f"{name}: with fit(auto)'s answer at those k: {fixed}")
        print(f"{name}: min ratio with the best answer {ratios.min():.4f} at k={ks[int(ratios.argmin())]}; "
              f"k still < {target}: {[k for k, r in zip(ks, ratios) if r < target]}")
    print(f"{name}: ratio curve (k: ratio) " + ", ".join(
        f"{k}: {ratios[k - 1]:.3f}" for k in ks if k in (1, 2, 3, 5, 10, 20, 30, 50, 80, 100, 150, 180, 200,
                                                         250, 300, 361, n)))
    return A, unit


def single_bench(name, A, unit, ks):
    cov = Cov(A=A)
    for k in ks:
        x = fit_x(cov, k)
        t = time.perf_counter()
        c = _certify_cov(cov, k, x=x)
        sec = time.perf_counter() - t
        print(f"{name}: one certificate k={k} (x from fit): {sec / unit:.1f} units (target <= 30), "
              f"ratio {c.ratio:.4f}, kind {c.kind}, dnn {c.info.get('dnn')}")


def mll_bench(X, ks, effort):
    m, n = X.shape
    ts = []
    for _ in range(3):
        t = time.perf_counter()
        np.linalg.svd(X, full_matrices=False)
        ts.append(time.perf_counter() - t)
    unit = float(np.min(ts))
    cov = Cov(X=X)
    print(f"mll: n={n}, m={m}, thin SVD unit {unit * 1e3:.1f} ms")
    for k in ks:
        t = time.perf_counter()
        x = fit_x(cov, k)
        tf = time.perf_counter() - t
        t = time.perf_counter()
        c = _certify_cov(cov, k, x=x, effort=effort)
        sec = time.perf_counter() - t
        print(f"mll: k={k}: ratio {c.ratio:.4f} (upper {c.upper_bound:.4g} = {c.kind}, lower {c.lower:.4g}), "
              f"B_S {c.info.get('B_S', float('nan')):.4g} B_T {c.info.get('B_T', float('nan')):.4g} "
              f"|S|={c.info.get('split_S')}, {sec / unit:.0f} units (fit {tf / unit:.0f} units)", flush=True)


def gene_matrix(m=75, n=6000, seed=0, modules=12):
    """An unseen-gene-matrix stand-in: log expression of m samples x n genes, log-normal gene
    levels with heteroscedastic noise, correlated modules (30-400 genes each) driven by latent
    sample factors, one of them tied to a two-class label; centered."""
    rng = np.random.default_rng(seed)
    base = rng.normal(6, 2, n)
    noise_sd = 0.2 + 0.6 * rng.gamma(2, 0.5, n)
    Z = rng.standard_normal((m, modules))
    Z[:, 0] += 2.5 * (rng.random(m) < 0.4)
    L = np.zeros((modules, n))
    for j in range(modules):
        size = int(rng.integers(30, 400))
        idx = rng.choice(n, size, replace=False)
        L[j, idx] = rng.normal(0, 1, size) * rng.gamma(2, 0.6) + (0.8 if rng.random() < .5 else 0)
    X = np.log1p(np.exp2(base + Z @ L + rng.standard_normal((m, n)) * noise_sd))
    return X - X.mean(axis=0)


def svd_unit(X):
    ts = []
    for _ in range(5):
        t = time.process_time()
        np.linalg.svd(X, full_matrices=False)
        ts.append(time.process_time() - t)
    return float(np.median(ts))


def load_note():
    return "load average " + ", ".join(f"{v:.1f}" for v in os.getloadavg())


def cost_rows(X, ks):
    """Per k the answer's CPU time (best of 3 ``fit(certify=False)``) and its certificate's (best of 2
    ``certify(x=answer)``, effort "auto"), the certified ratio and the bound's kind; the first-call costs
    (imports) are paid on a slice of X first."""
    import nspca_core as nc
    from nspca_core.certificates import certify

    nc.fit(X[:64], k=3)
    certify(X[:64], k=3)
    rows = []
    for k in ks:
        ta, tc = np.inf, np.inf
        for _ in range(3):
            c0 = time.process_time()
            r = nc.fit(X, k=k, certify=False)
            ta = min(ta, time.process_time() - c0)
        for _ in range(2):
            c0 = time.process_time()
            c = certify(X, k=k, x=r.x)
            tc = min(tc, time.process_time() - c0)
        rows.append({"k": k, "answer": ta, "cert": tc, "ratio": c.ratio, "kind": c.kind})
    return rows


def ab_runs(base: str, args, rounds: int, prefix: str, label: str, script: str = __file__, after: str = str(ROOT)):
    """``rounds`` times the ``base`` checkout's worker, then ``after``'s (alternating: the same machine
    moment), each a subprocess on one BLAS thread measuring its checkout's code (``NSPCA_BENCH_CODE``,
    run in it) and printing one line ``prefix`` + JSON.  ``args``: the worker's arguments, or a function
    of the checkout giving them.  Returns ``{"before": [...], "after": [...]}`` of those JSON values, or
    None when a worker failed (its error printed under ``label``)."""
    import subprocess

    res: dict = {"before": [], "after": []}
    for _ in range(rounds):
        for tag, code in (("before", base), ("after", after)):
            env = {**os.environ, "NSPCA_BENCH_CODE": code, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
                   "MKL_NUM_THREADS": "1"}
            argv = args(code) if callable(args) else args
            p = subprocess.run([sys.executable, script, *argv], env=env, capture_output=True, text=True, cwd=code)
            line = [ln for ln in p.stdout.splitlines() if ln.startswith(prefix)]
            if not line:
                print(f"{label}: {tag} failed:\n{p.stderr[-2000:]}", flush=True)
                return None
            res[tag].append(json.loads(line[0][len(prefix):]))
    return res


def by_k(res: dict) -> dict:
    """:func:`ab_runs`' cost workers' rows per side and round, by k."""
    return {tag: [{r["k"]: r for r in out["rows"]} for out in runs] for tag, runs in res.items()}


def cost_line(res: dict, k: int) -> str:
    """One k of :func:`by_k`'s table: cert / answer CPU per round, before -> after, their medians, the
    answers' median CPU, and the certified ratio (first round) before -> after."""
    b, a = ([r[k]["cert"] / r[k]["answer"] for r in res[tag]] for tag in ("before", "after"))
    ans = [np.median([r[k]["answer"] for r in res[tag]]) for tag in ("before", "after")]
    rb, ra = res["before"][0][k], res["after"][0][k]
    return (f"cert/answer {'/'.join(f'{v:.2f}' for v in b)} -> {'/'.join(f'{v:.2f}' for v in a)} (median "
            f"{np.median(b):.2f} -> {np.median(a):.2f}x, target <= 3x; answer {ans[0]:.3f} / {ans[1]:.3f} CPU s); "
            f"ratio {rb['ratio']:.4f} ({rb['kind']}) -> {ra['ratio']:.4f} ({ra['kind']}), "
            f"change {ra['ratio'] - rb['ratio']:+.6f}")


def wide_path_bench(name, X, ks, target=0.95, budget=2000, compare=()):
    """Issue 28, items 2 and 3: certify_path over k = 2..200 (CPU clock, SVD units); ``compare``: k's
    at which certify(X, k) (no point given, effort "auto") is run too, its bounds beside the path's."""
    unit = svd_unit(X)
    print(f"{name}: path start ({load_note()})", flush=True)
    t = time.process_time()
    path = certify_path(X, ks=ks)
    sec = time.process_time() - t
    runs = path[0].info.get("path_runs", [])
    print(f"{name}: path ran the one-k split certificate at {len(runs)} of {len(ks)} k: {runs}", flush=True)
    r = np.array([c.ratio for c in path])
    below = [k for k, v in zip(ks, r) if v < target]
    print(f"{name}: path k={ks[0]}..{ks[-1]} ({X.shape[0]} x {X.shape[1]}): {sec / unit:.0f} SVD units "
          f"(unit {unit * 1e3:.1f} ms; target <= {budget}); min ratio {r.min():.4f} at k={ks[int(r.argmin())]}, "
          f"mean {r.mean():.4f}, {len(below)} of {len(ks)} k below {target}", flush=True)
    print(f"{name}: ratio curve " + ", ".join(f"{k}: {v:.3f}" for k, v in zip(ks, r)
                                              if k in (2, 3, 5, 10, 20, 30, 50, 70, 100, 150, 200)), flush=True)
    froms = sum(c.info["from_k"]["upper"] != c.k for c in path)
    print(f"{name}: upper side proved at a larger k at {froms} k; lower from a smaller k at "
          f"{sum(c.info['from_k']['lower'] != c.k for c in path)} k ({load_note()})", flush=True)
    kinds = {}
    for c in path:
        kinds[c.kind] = kinds.get(c.kind, 0) + 1
    print(f"{name}: winning bounds {kinds}", flush=True)
    polish_note(name, path)
    from nspca_core import certify

    for k in compare:
        c = path[ks.index(k)]
        t = time.process_time()
        one = certify(X, k=k)
        s1 = time.process_time() - t
        print(f"{name}: k={k} ({'run' if k in runs else 'carried'}): path {c.ratio:.4f} (upper/one-k's "
              f"{c.upper_bound / one.upper_bound:.5f}, lower/one-k's {c.lower / one.lower:.5f}); "
              f"one-k {one.ratio:.4f} in {s1 / unit:.1f} SVD units", flush=True)


def wide_single_bench(name, X, ks):
    """Issue 28, item 3: one-k certificates (fit's answer as x; CPU clock, SVD units)."""
    unit = svd_unit(X)
    cov = Cov(X=X)
    for k in ks:
        t = time.process_time()
        x = fit_x(cov, k)
        tf = time.process_time() - t
        t = time.process_time()
        c = _certify_cov(cov, k, x=x)
        sec = time.process_time() - t
        print(f"{name}: one certificate k={k}: ratio {c.ratio:.4f} ({c.kind}), {sec / unit:.1f} SVD units "
              f"(target <= 30 and >= 0.97; fit {tf / unit:.1f})", flush=True)


def exact_bench(name, X, ks, limit=60.0):
    """Issue 28, item 4: effort="exact" per k (CPU and wall seconds; the limit is wall clock)."""
    from nspca_core import certify

    worst, proved = 0.0, 0
    for k in ks:
        t, w = time.process_time(), time.perf_counter()
        c = certify(X, k=k, effort="exact", time_limit=limit)
        cpu, wall = time.process_time() - t, time.perf_counter() - w
        worst = max(worst, cpu)
        proved += c.optimal
        if not c.optimal or k <= 12 or k % 20 == 0:
            print(f"{name}: exact k={k}: optimal {c.optimal}, gap {c.info['gap']:.2e}, nodes {c.info['nodes']}, "
                  f"{cpu:.1f} CPU s ({wall:.1f} s wall), kind {c.kind}", flush=True)
    print(f"{name}: exact: proved optimal at {proved} of {len(ks)} k; slowest {worst:.1f} CPU s (limit {limit} s)",
          flush=True)


def components_bench():
    """Issue 28, item 5: the joint certified ratio of several components."""
    from nspca_core import components
    from nspca_core.synthetic import planted_sparse

    worst = 1.0
    for seed in range(5):
        X, _ = planted_sparse(seed=seed)
        X = X - X.mean(axis=0)
        for strategy in ("deflation-remove", "bipartite"):
            r = components(X, n_components=3, k=5, strategy=strategy, certify=True)
            worst = min(worst, r.ratio)
    print(f"planted (200 x 50, 3 components, k=5), 5 seeds x 2 strategies: joint ratio >= {worst:.4f} "
          f"(target >= 0.95)", flush=True)
    for name in ("cbcl", "lrs"):
        X = load(name)
        if X is None:
            continue
        for c, k in ((4, 30), (3, 10)):
            for strategy in ("deflation-remove", "bipartite"):
                t = time.process_time()
                r = components(X, n_components=c, k=k, strategy=strategy, certify=True)
                print(f"{name}: {c} components k={k} {strategy}: joint ratio {r.ratio:.4f} ({r.bound_kind}); "
                      f"{time.process_time() - t:.1f} CPU s with the components", flush=True)


def gene_shaped(name):
    """dlbcl / golub are not available here: synthetic gene matrices of their shapes (77 x 7,070,
    72 x 7,129) from :func:`gene_matrix` (log-normal levels, correlated modules, heavy-tailed)."""
    shapes = {"dlbcl": (77, 7070, 1), "golub": (72, 7129, 2)}
    if name not in shapes:
        raise ValueError(f"gene_shaped: {name!r} has no synthetic stand-in (allowed: dlbcl, golub)")
    m, n, seed = shapes[name]
    return gene_matrix(m, n, seed=seed)


def time_limit_bench(limits=(1.0, 5.0, 20.0), n=2000, m=3000, k=10):
    """Issue 40 item 6: certify(X, k, effort="exact", time_limit=T) at n = 2,000 returns within
    T (+10% or 0.5 s) of the wall clock, whatever runs inside; the bound it reached."""
    from nspca_core import certify

    rng = np.random.default_rng(0)
    X = rng.standard_normal((m, 5)) @ rng.standard_normal((5, n)) + rng.standard_normal((m, n))
    X -= X.mean(axis=0)
    certify(X[:, :60], k=k, effort="exact", time_limit=1.0)  # lazy imports: once per process
    for T in limits:
        t, c0 = time.perf_counter(), time.process_time()
        c = certify(X, k=k, effort="exact", time_limit=T)
        wall, cpu = time.perf_counter() - t, time.process_time() - c0
        ok = wall <= T + max(0.1 * T, 0.5)
        print(f"time-limit: n={n} m={m} k={k} time_limit={T:g}: wall {wall:.2f} s ({wall / T:.2f} x the limit, "
              f"{'within' if ok else 'OVER'} +max(10%, 0.5 s)), CPU {cpu:.2f} s; ratio {c.ratio:.4f} ({c.kind}), "
              f"nodes {c.info.get('nodes')}, stopped {c.info.get('stopped')} ({load_note()})", flush=True)


def exact_progress_bench(name, X, k, limits=(10.0, 60.0)):
    """Issue 39 item 3: effort="exact" with a CPU-time budget (the machine is shared: wall seconds
    buy 2-20x less); the best global bound reported by the callback after each limit, as the
    certified ratio of the final answer."""
    from nspca_core._common.scale import normalized
    from nspca_core.operators.covariance import as_cov
    from nspca_core.certificates.budget import Budget
    from nspca_core.certificates.route import certify_exact

    for T in limits:
        cov, _ = normalized(as_cov(X, None))
        seen = []
        c0 = time.process_time()
        c = certify_exact(cov, k, None, T, lambda d, t, bound: seen.append((time.process_time() - c0, d, bound)),
                          budget=Budget(T, clock=time.process_time))
        cpu = time.process_time() - c0
        marks = [(cut, [s for s in seen if s[0] <= cut]) for cut in (1, 2, 5, 10, 30, 60, 120, 300, 600) if cut <= T]
        trail = ", ".join(f"{cut} s: {c.lower / p[-1][2]:.5f} ({p[-1][1]} nodes)" for cut, p in marks if p)
        print(f"exact: {name} k={k} CPU limit {T:g} s: CPU {cpu:.1f} s, ratio {c.ratio:.5f} ({c.kind}), nodes "
              f"{c.info.get('nodes')} open {c.info.get('open_nodes')}; bound reported after {trail}", flush=True)


def cliff_bench(name, X, ks):
    """Issue 39 item 2: one-k certified ratios across the former k = 64 limit (SVD units, CPU)."""
    unit = svd_unit(X)
    for k in ks:
        c0 = time.process_time()
        c = _certify_cov(Cov(X, None), k)
        print(f"cliff: {name} k={k}: ratio {c.ratio:.4f} ({c.kind}), {(time.process_time() - c0) / unit:.0f} SVD units",
              flush=True)


def review_corpus(m=5000, n=2000, topics=8, seed=0):
    """A sparse bag-of-words stand-in (KOS / Enron / a review corpus's shape): Zipf word
    frequencies mixed with Dirichlet topics, ~60 words a document, counts in CSR."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, n + 1) ** 1.1
    p /= p.sum()
    T = rng.dirichlet(np.full(n, 0.05), topics) * 0.5 + p * 0.5
    rows, cols, vals = [], [], []
    for i in range(m):
        w = rng.choice(n, rng.poisson(60) + 5, p=T[rng.integers(topics)])
        u, c = np.unique(w, return_counts=True)
        rows += [i] * len(u)
        cols += list(u)
        vals += list(c)
    return sp.csr_matrix((np.array(vals, float), (rows, cols)), shape=(m, n))


def cost_bench(name, X, ks):
    """Issue 39 item 1: the certificate's CPU time over the answer's (fit(certify=False)), x given
    as fit(certify=True) gives it; target <= 3x with every ratio within 0.005 of the last run's."""
    import nspca_core as nc
    from nspca_core.certificates import certify

    for k in ks:
        c0 = time.process_time()
        r = nc.fit(X, k=k, certify=False)
        ta = time.process_time() - c0
        c0 = time.process_time()
        c = certify(X, k=k, x=r.x)
        tc = time.process_time() - c0
        print(f"cost: {name} k={k}: answer {ta:.2f} CPU s, certificate {tc:.2f} CPU s = {tc / ta:.1f}x the answer "
              f"(target <= 3x); ratio {c.ratio:.4f} ({c.kind})", flush=True)


def path_vs_one_bench(name, X, ks, stride=1, budget=2000, target=0.95, cache_dir=None, fill_only=False,
                      compare=None):
    """Issue 39 item 2: certify_path over ``ks`` (CPU clock; units: one thin SVD of X when m < n,
    else one eigh of the covariance), its min and mean certified ratio, then certify(X, k) (effort
    "auto", no point given) at every ``stride``-th k of ``ks``: the number of k where the path's
    upper bound is above one-k's by more than 1e-9 relative, and the largest such excess.  ``cache_dir``:
    certify(k)'s bounds are kept there (a JSON file per dataset) and read back by the next run, and the
    path's bounds per k; ``fill_only``: only certify(k) into that cache (no path); ``compare``: (lo, hi),
    certify(k) only at those k (inclusive)."""
    from nspca_core import certify

    m, n = X.shape
    if m < n:
        unit, uname = svd_unit(X), "SVD"
    else:
        A = X.T @ X / m
        unit, uname = unit_eigh(A, clock=time.process_time), "eigh"
    if fill_only:  # only certify(k) into the cache (another run compares its path with them)
        path = None
    else:
        print(f"{name}: path start ({load_note()})", flush=True)
        t = time.process_time()
        path = certify_path(X, ks=ks)
        sec = time.process_time() - t
    cache_file = None if cache_dir is None else Path(cache_dir) / f"one_k_{name}_{m}x{n}.json"
    if path is None:
        cache = json.loads(cache_file.read_text()) if cache_file.exists() else {}
        for k in ks[::stride]:
            if str(k) not in cache:
                cache[str(k)] = certify(X, k=k).upper_bound
                cache = {**json.loads(cache_file.read_text()), **cache} if cache_file.exists() else cache
                cache_file.write_text(json.dumps(cache))
        return
    if cache_dir is not None:
        (Path(cache_dir) / f"path_{name}_{m}x{n}_{os.getpid()}.json").write_text(
            json.dumps({c.k: [c.upper_bound, c.lower] for c in path}))
    r = np.array([c.ratio for c in path])
    print(f"{name}: path k={ks[0]}..{ks[-1]} ({m} x {n}): {sec / unit:.0f} {uname} units (target <= {budget}); "
          f"min {r.min():.4f} at k={ks[int(r.argmin())]}, mean {r.mean():.4f}, {int(np.sum(r < target))} k "
          f"below {target}", flush=True)
    kinds = {}
    for c in path:
        kinds[c.kind] = kinds.get(c.kind, 0) + 1
    print(f"{name}: winning bounds {kinds}", flush=True)
    sub = [k for k in ks[::stride] if compare is None or compare[0] <= k <= compare[1]]
    looser, worst, t1 = [], 0.0, 0.0
    cache = json.loads(cache_file.read_text()) if cache_file is not None and cache_file.exists() else {}
    for j, k in enumerate(sub):
        c = path[ks.index(k)]
        if cache_file is not None and cache_file.exists():  # another process may have added some
            cache = {**json.loads(cache_file.read_text()), **cache}
        if str(k) in cache:  # certify(k) from an earlier run on the same data (it does not depend on the path)
            one_ub = cache[str(k)]
        else:
            t = time.process_time()
            one_ub = certify(X, k=k).upper_bound
            t1 += time.process_time() - t
            cache[str(k)] = one_ub
            if cache_file is not None:
                cache = {**json.loads(cache_file.read_text()), **cache} if cache_file.exists() else cache
                cache_file.write_text(json.dumps(cache))
        ex = c.upper_bound / one_ub - 1.0
        if ex > 1e-9:
            looser.append((k, round(ex, 5)))
            worst = max(worst, ex)
        if (j + 1) % 20 == 0:
            print(f"{name}: ... {j + 1} of {len(sub)} k compared, path looser at {len(looser)}: {looser[-5:]}",
                  flush=True)
    print(f"{name}: path looser than certify(k) by > 1e-9 at {len(looser)} of {len(sub)} k compared "
          f"(every {stride}th k; worst {worst:.2e}): {looser}; one-k total {t1 / unit:.0f} {uname} units "
          f"({load_note()})", flush=True)


def polish_note(name, path):
    """Issue 39 item 2: the large-n path's polished runs (``path_polished``: k -> rounds, relative gain
    of the run's screened-set bound)."""
    pol = path[0].info.get("path_polished") or {}
    if pol:
        top = sorted(pol.items(), key=lambda kv: -kv[1][1])[:5]
        print(f"{name}: polished {len(pol)} runs, {sum(r for r, _ in pol.values())} rounds; largest gains "
              + ", ".join(f"k={k} {g:.2%} in {r}" for k, (r, g) in top), flush=True)


COST_CASES = (("cbcl", (5, 10, 50, 65)), ("lrs", (5, 10, 50)), ("mll", (5, 10, 50)), ("corpus", (5, 10, 50)),
              ("kos", (5, 10, 50)))
SYNTHETIC = ("corpus", "kos")  # generated here: the review corpus, corpus_like("kos") (3,430 x 6,906 counts)


def cost_data(name):
    """A cost-ab dataset: the review corpus, the KOS-shaped synthetic corpus, or a stored one."""
    if name == "kos":
        from nspca_core.corpus import corpus_like

        return corpus_like("kos", seed=0).X
    return review_corpus() if name == "corpus" else load(name)


def cost_worker(name, ks):
    """One checkout's side of ``cost-ab`` (a subprocess): :func:`cost_rows` on the case's data, as JSON."""
    import nspca_core as nc

    rows = cost_rows(cost_data(name), ks)
    print("COST " + json.dumps({"name": name, "code": nc.__file__, "rows": rows}), flush=True)


def cost_ab(base: str):
    """Issue 39 item 1, before and after in one run: for each dataset the base checkout's worker
    then this one's (same data, same machine moment), certificate CPU / answer CPU and the ratio."""
    print(f"cost-ab: start ({load_note()})", flush=True)
    for name, ks in COST_CASES:
        if name not in SYNTHETIC and not (data_dir() / {"cbcl": "cbcl_faces_train.npz", "lrs": "lrs_spectrometer.npz",
                                                   "mll": "mll_leukemia.npz"}[name]).exists():
            continue
        res = ab_runs(base, ["--cost-worker", f"{name}:{','.join(map(str, ks))}"], 1, "COST ", f"cost-ab: {name}")
        if res is None:
            continue
        res = {tag: runs[0] for tag, runs in by_k(res).items()}
        for k in ks:
            b, a = res["before"][k], res["after"][k]
            print(f"cost-ab: {name:6s} k={k:3d}: cert/answer {b['cert'] / b['answer']:5.1f}x -> "
                  f"{a['cert'] / a['answer']:5.1f}x "
                  f"(target <= 3x; answer {b['answer']:.3f} / {a['answer']:.3f} CPU s); ratio {b['ratio']:.4f} "
                  f"({b['kind']}) -> {a['ratio']:.4f} ({a['kind']}), change {a['ratio'] - b['ratio']:+.4f}", flush=True)
    print(f"cost-ab: end ({load_note()})", flush=True)


PATH_CASES = ("mll", "golub", "dlbcl", "cbcl")


def factor_plus_noise(seed: int, m: int = 400, n: int = 180, r: int = 6) -> np.ndarray:
    """X = F W + 0.5 N, F (m x r) and N standard normal, W = |standard normal| (r x n) kept where uniform < 0.3,
    drawn from default_rng(seed) in that order, centered (issue 39 target 2 on dense data, helper dense)."""
    rng = np.random.default_rng(seed)
    F = rng.standard_normal((m, r))
    N = rng.standard_normal((m, n))
    W = np.abs(rng.standard_normal((r, n)))
    W = W * (rng.uniform(size=(r, n)) < 0.3)
    X = F @ W + 0.5 * N
    return X - X.mean(axis=0)


def path_data(name):
    """The data of a path case: golub-/dlbcl-shaped synthetic matrices, else the stored dataset;
    its ks (k = 2..200, CBCL every k), target ratio and unit budget (issue 39 item 2)."""
    if name in ("fpn1", "fpn2"):  # the dense factor-plus-noise matrices of issue39_dense10.txt (every k)
        X = factor_plus_noise(int(name[3:]))
        return X, list(range(1, X.shape[1] + 1)), 0.9, 500
    if name in ("img19", "img24"):  # bench_unseen's 19 x 19 / 24 x 24 parts-based images (issue39_unseen11.txt)
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from bench_unseen import DATA

        X = DATA[name][1]()  # img24: every 4th k (1, 5, .., 573; its certify(k) at all 576 k cost ~176 CPU s)
        return X, list(range(1, X.shape[1] + 1, 1 if name == "img19" else 4)), 0.95, 500
    if name in ("g60x2500", "g72x1000", "g48x1800"):  # bench_unseen's thin gene stand-ins (uncentered, as written)
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from bench_unseen import DATA

        return DATA[name][1](), list(range(2, 201)), 0.95, 2000
    X = gene_shaped(name) if name in ("golub", "dlbcl") else load(name)
    if X is None:
        return None, None, None, None
    if name == "cbcl":
        return X, list(range(1, X.shape[1] + 1)), 0.98, 500
    return X, list(range(2, 201)), 0.95, 2000


def path_worker(name, out):
    """One checkout's side of ``path-ab`` (a subprocess): certify_path over the case's ks (CPU time
    in units of one thin SVD of X, or one eigh of the covariance when m >= n), its bounds to ``out``."""
    X, ks, _, _ = path_data(name)
    m, n = X.shape
    unit = svd_unit(X - X.mean(axis=0)) if m < n else unit_eigh(X.T @ X / m, clock=time.process_time)
    t = time.process_time()
    path = certify_path(X, ks=ks)
    sec = time.process_time() - t
    Path(out).write_text(json.dumps({"units": sec / unit, "runs": len(path[0].info.get("path_runs", [])),
                                     "path": {c.k: [c.upper_bound, c.lower] for c in path}}))


def path_ab(base: str, names, stride: int, cache_dir: str, rounds: int = 2):
    """Issue 39 item 2, before and after in one run: per case ``rounds`` rounds of the two checkouts' paths
    (subprocesses, same data, same machine moment) in alternating order (before-after, then after-before, ...:
    the tree run second measured 6-35% more units with identical bounds, issue39_imgpath14.txt), then
    certify(k) (this checkout, effort "auto", no point; kept in ``cache_dir``) at every ``stride``-th k: min /
    mean certified ratio, units (mean over the rounds, and each round's), the number of compared k where the
    path's bound is above certify(k)'s by more than 1e-9; and the order's bias: the mean units of the run made
    second over the run made first in the same round (both trees)."""
    import subprocess

    from nspca_core import certify

    for name in names:
        X, ks, target, budget = path_data(name)
        if X is None:
            continue
        res: dict = {"before": [], "after": []}
        slot: dict = {0: [], 1: []}  # units by position in the round (first / second)
        for rnd in range(rounds):
            order = (("before", base), ("after", str(ROOT)))[:: 1 if rnd % 2 == 0 else -1]
            for pos, (tag, code) in enumerate(order):
                out = Path(cache_dir) / f"path_ab_{name}_{tag}.json"
                out.unlink(missing_ok=True)
                env = {**os.environ, "NSPCA_BENCH_CODE": code, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
                       "MKL_NUM_THREADS": "1"}
                p = subprocess.run([sys.executable, __file__, "--path-worker", f"{name}:{out}"], env=env,
                                   capture_output=True, text=True, cwd=code)
                if p.returncode or not out.exists():
                    print(f"path-ab: {name} {tag} failed:\n{p.stderr[-2000:]}", flush=True)
                    res = {}
                    break
                res[tag].append(json.loads(out.read_text()))
                slot[pos].append(res[tag][-1]["units"])
            if not res:
                break
        if not res:
            continue
        for tag in ("before", "after"):
            if any(r["path"] != res[tag][0]["path"] for r in res[tag][1:]):
                print(f"path-ab: {name} {tag}: the rounds' bounds differ (the path is not deterministic)", flush=True)
        cache_file = Path(cache_dir) / f"one_k_{name}_{X.shape[0]}x{X.shape[1]}.json"
        cache = json.loads(cache_file.read_text()) if cache_file.exists() else {}
        sub = ks[::stride]
        for k in sub:
            if str(k) not in cache:
                cache[str(k)] = certify(X, k=k).upper_bound
                cache_file.write_text(json.dumps(cache))
        for tag in ("before", "after"):
            P = res[tag][0]["path"]
            units = [r["units"] for r in res[tag]]
            r = np.array([P[str(k)][1] / P[str(k)][0] for k in ks])
            looser = [(k, round(P[str(k)][0] / cache[str(k)] - 1, 5)) for k in sub
                      if P[str(k)][0] > cache[str(k)] * (1 + 1e-9)]
            print(f"path-ab: {name:6s} {tag:6s}: min {r.min():.4f} at k={ks[int(r.argmin())]} (target >= {target}), "
                  f"mean {r.mean():.4f}, {np.mean(units):.0f} units (rounds: {', '.join(f'{u:.0f}' for u in units)}; "
                  f"target <= {budget}), {res[tag][0]['runs']} one-k runs; looser than certify(k) at {len(looser)} "
                  f"of {len(sub)} compared k: {looser}", flush=True)
        mean = {tag: np.mean([r["units"] for r in res[tag]]) for tag in res}
        print(f"path-ab: {name:6s} units after / before {mean['after'] / mean['before']:.3f}; "
              f"order bias (second run / first run of a round, mean over {rounds} rounds) "
              f"{np.mean(slot[1]) / np.mean(slot[0]):.3f}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cost-worker", default="", help=argparse.SUPPRESS)
    ap.add_argument("--path-worker", default="", help=argparse.SUPPRESS)
    ap.add_argument("--base", default="/tmp/ccost-base", help="cost-ab, path-ab: the checkout measured as 'before'")
    ap.add_argument("--quick", action="store_true", help="skip the long CBCL path")
    ap.add_argument("--no-fit", action="store_true")
    ap.add_argument("--only", default="lrs,cbcl,mll")
    ap.add_argument("--issue28", default="", help="comma list of: exact, components, mll-path, genes, cbcl-path")
    ap.add_argument("--issue39", default="",
                    help="comma list of: time-limit, exact-mll, cost, cost-ab, cliff, path, path-ab")
    ap.add_argument("--stride", type=int, default=1, help="--issue39 path: compare certify(k) at every stride-th k")
    ap.add_argument("--data", default="mll,cbcl,golub,dlbcl", help="--issue39 path: datasets")
    ap.add_argument("--cache", default=None, help="--issue39 path: a folder for certify(k)'s bounds between runs")
    ap.add_argument("--fill-cache", action="store_true", help="--issue39 path: only certify(k) into --cache")
    ap.add_argument("--compare", default=None, help="--issue39 path: lo:hi, certify(k) only at those k")
    ap.add_argument("--rounds", type=int, default=2,
                    help="--issue39 path-ab: rounds of the two paths, in alternating order (even: fair)")
    a = ap.parse_args()
    only = a.only.split(",")
    if a.cost_worker:
        name, ks = a.cost_worker.split(":")
        return cost_worker(name, [int(v) for v in ks.split(",")])
    if a.path_worker:
        name, out = a.path_worker.split(":", 1)
        return path_worker(name, out)
    warm_up()
    i39 = [s for s in a.issue39.split(",") if s]
    if i39:
        if "time-limit" in i39:
            time_limit_bench()
        if "exact-mll" in i39 and (X := load("mll")) is not None:
            exact_progress_bench("mll", X, 50)
        if "cost-ab" in i39:
            cost_ab(a.base)
        if "path-ab" in i39:
            path_ab(a.base, a.data.split(","), a.stride, a.cache or "/tmp", a.rounds)
        if "cost" in i39:
            for name, ks in (("lrs", [5, 20]), ("cbcl", [10]), ("mll", [10, 50])):
                if (X := load(name)) is not None:
                    cost_bench(name, X, ks)
            cost_bench("review corpus 5,000 x 2,000 (synthetic)", review_corpus(), [10])
        if "cliff" in i39:
            for name in ("dlbcl", "golub"):
                cliff_bench(f"{name}-shaped", gene_shaped(name), [60, 64, 65, 70, 80])
        if "path" in i39:
            compare = None if a.compare is None else tuple(int(v) for v in a.compare.split(":"))
            for name in a.data.split(","):
                if name in ("golub", "dlbcl"):
                    X = gene_shaped(name)
                elif (X := load(name)) is None:
                    continue
                if name in ("cbcl", "lrs"):  # (dense: every k)
                    path_vs_one_bench(name, X, list(range(1, X.shape[1] + 1)), a.stride, 500, 0.98, a.cache,
                                      a.fill_cache, compare)
                else:
                    path_vs_one_bench(f"{name}" + ("-shaped" if name in ("golub", "dlbcl") else ""), X,
                                      list(range(2, 201)), a.stride, cache_dir=a.cache, fill_only=a.fill_cache,
                                      compare=compare)
        return
    extra = [s for s in a.issue28.split(",") if s]
    if extra:
        if "exact" in extra:
            for name, ks in (("lrs", range(1, 94)), ("cbcl", range(1, 11)), ("mll", range(2, 6))):
                if (X := load(name)) is not None:
                    exact_bench(name, X, list(ks))
        if "components" in extra:
            components_bench()
        if "mll-path" in extra and (X := load("mll")) is not None:
            wide_single_bench("mll", X, [5, 10, 20, 50])
            wide_path_bench("mll", X, list(range(2, 201)), compare=(10, 30, 45, 50, 60, 100, 150, 180, 200))
        if "genes" in extra:
            for seed, (m, n) in enumerate([(72, 5147), (78, 7600)]):
                X = gene_matrix(m, n, seed=seed)
                wide_single_bench(f"genes{seed} ({m} x {n})", X, [5, 10, 20, 50])
                wide_path_bench(f"genes{seed} ({m} x {n})", X, list(range(2, 201)), compare=(30, 50, 100, 200))
        if "cbcl-path" in extra and (X := load("cbcl")) is not None:
            print(f"cbcl: path start ({load_note()})", flush=True)
            path_bench("cbcl", X, 0.98, 500, False, clock=time.process_time)
            print(f"cbcl: path done ({load_note()})", flush=True)
        return
    if "lrs" in only and (X := load("lrs")) is not None:
        path_bench("lrs", X, 0.97, 300, not a.no_fit)
    if "cbcl" in only and (X := load("cbcl")) is not None:
        A = X.T @ X / X.shape[0]
        single_bench("cbcl", A, unit_eigh(A), [6, 20, 50, 180])
        if not a.quick:
            path_bench("cbcl", X, 0.97, 1500, not a.no_fit)
    if "mll" in only and (X := load("mll")) is not None:
        mll_bench(X, [50] if a.quick else [50, 5, 10, 20, 100, 200], "auto")


# ---- issue 39 item 1 on wide gene data (helper i-mllc): MLL and the golub-/dlbcl-shaped matrices only,
# before and after alternating in one run, several rounds (`--cost-ab-wide --base <dir> --rounds 3`)
WIDE_COST_CASES = (("mll", (5, 10, 50)), ("golub", (5, 10, 50, 65, 100)), ("dlbcl", (5, 10, 50, 65, 100)))


def wide_cost_worker(name, ks):
    """:func:`cost_worker` for MLL and the gene-shaped matrices (:func:`gene_shaped`)."""
    rows = cost_rows(load(name) if name == "mll" else gene_shaped(name), ks)
    print("COST " + json.dumps({"name": name, "rows": rows}), flush=True)


def cost_ab_wide(base: str, rounds: int, cases=WIDE_COST_CASES):
    """Before (``base``) and after (this checkout) alternating per dataset, ``rounds`` times; per k the
    certificate / answer CPU ratios of every round and the certified ratios (:func:`cost_rounds`)."""
    cost_rounds(base, cases, rounds, "--wide-cost-worker", "cost-ab-wide")


def cost_rounds(base: str, cases, rounds: int, worker: str, label: str):
    """Per dataset of ``cases`` ((name, ks)), ``rounds`` rounds of the ``worker`` option's subprocess in the
    base checkout then this one (:func:`ab_runs`), and per k :func:`cost_line`."""
    print(f"{label}: start ({load_note()})", flush=True)
    for name, ks in cases:
        res = ab_runs(base, [worker, f"{name}:{','.join(map(str, ks))}"], rounds, "COST ", f"{label}: {name}")
        if res is None:
            return
        res = by_k(res)
        for k in ks:
            print(f"{label}: {name:6s} k={k:3d}: {cost_line(res, k)}", flush=True)
    print(f"{label}: end ({load_note()})", flush=True)


def wide_main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cost-ab-wide", action="store_true")
    ap.add_argument("--wide-cost-worker", default="")
    ap.add_argument("--base", default="/tmp/mllc-base")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ks", default="", help="--cost-ab-wide: these k (comma list) on every dataset")
    ap.add_argument("--data", default="", help="--cost-ab-wide: these datasets (comma list of mll, golub, dlbcl)")
    a = ap.parse_args()
    if a.wide_cost_worker:
        name, ks = a.wide_cost_worker.split(":")
        return wide_cost_worker(name, [int(v) for v in ks.split(",")])
    cases = [(name, tuple(int(v) for v in a.ks.split(",")) if a.ks else ks) for name, ks in WIDE_COST_CASES
             if not a.data or name in a.data.split(",")]
    cost_ab_wide(a.base, a.rounds, cases)


# ---- issue 39 item 2 on MLL (helper i-mll95): which term of the split certificate binds where the path is
# below 0.95 (`--s-terms 44,48,51,52,56 [--s-caps 204,252,302] [--s-full 51] [--s-exact 51:10,60]`)


def s_terms_bench(X, ks, caps, effort="auto"):
    """certify(k)'s split bound at screens of at most ``caps`` features: the ratio, lower / B_S(k) (S's
    DNN, its upper bound at k), and the coupled bound's largest terms: the sparsity i of S, lower / term,
    lower / B_S(i), B_T(k - i) / B_S(k) (the rest's share); CPU units of one thin SVD."""
    from nspca_core.certificates import single as sg
    from nspca_core.certificates.coupled import _coupled_bs, _terms
    from nspca_core.operators.covariance import as_cov
    from nspca_core._common.scale import normalized

    unit = svd_unit(X)
    cov, _ = normalized(as_cov(X, None, center=True))
    for k in ks:
        for cap in caps:
            keep: dict = {}
            t = time.process_time()
            c = sg._certify_split(cov, k, None, effort, None, split_cap=cap, keep=keep)
            sec = time.process_time() - t
            T = keep["T"]
            BT = sg._rest_curve(cov, T, k, spec=sg._rest_spectrum(cov, T, None, keep["S"]))
            BS = _coupled_bs(keep["certS"], keep["stS"], keep["dS"], keep["kS"], keep["pair"], keep["BS_at"])
            vals, ii = _terms(BS, BT, k, keep["kS"], keep["cross"])
            lo, bk = c.lower, BS[keep["kS"]]
            top = [(int(ii[t]), round(float(lo / vals[t]), 4), round(float(lo / BS[ii[t]]), 4),
                    round(float(BT[k - ii[t]] / bk), 4))
                   for t in np.argsort(-vals)[:3]]
            print(f"s-terms {effort}: k={k} |S|={keep['S'].size}: ratio {c.ratio:.4f}, lower/B_S(k) {lo / bk:.4f}, "
                  f"terms (i, lower/term, lower/B_S(i), B_T(k-i)/B_S(k)) {top}; {sec / unit:.0f} SVD units "
                  f"({load_note()})", flush=True)


def s_exact_bench(X, k, limits):
    """certify(X, k, effort="exact", time_limit=) at each limit (wall seconds): its ratio, S's tree bound
    (lower / B_S(k)) and the coupled bound's (lower / coupled), nodes, CPU units."""
    from nspca_core import certify

    unit = svd_unit(X)
    for lim in limits:
        t = time.process_time()
        c = certify(X, k=k, effort="exact", time_limit=lim)
        print(f"s-exact: k={k} time_limit={lim:g} s: ratio {c.ratio:.4f}, lower/B_S(k) {c.lower / c.info['B_S']:.4f}, "
              f"lower/coupled {c.lower / c.info['coupled']:.4f}, nodes {c.info.get('nodes')} (open "
              f"{c.info.get('open_nodes')}); {(time.process_time() - t) / unit:.0f} CPU SVD units ({load_note()})",
              flush=True)


def s_terms_main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--s-terms", default="44,48,51,52,56")
    ap.add_argument("--s-caps", default="auto", help="screen caps (auto: certify(k)'s own screen)")
    ap.add_argument("--s-full", default="", help="k list: the same at effort='full' (the converged DNN on S)")
    ap.add_argument("--s-exact", default="", help="k:limit,limit (wall seconds)")
    a = ap.parse_args()
    X = load("mll")
    if X is None:
        return
    caps = [None if v == "auto" else int(v) for v in a.s_caps.split(",")]
    s_terms_bench(X, [int(v) for v in a.s_terms.split(",") if v], caps)
    if a.s_full:
        s_terms_bench(X, [int(v) for v in a.s_full.split(",")], caps, "full")
    if a.s_exact:
        k, lims = a.s_exact.split(":")
        s_exact_bench(X, int(k), [float(v) for v in lims.split(",")])



# ---- issue 39 item 1, the dense DNN's cost (helper i-dnn7): cost-ab at chosen k, both trees alternating,
# several rounds (`--cost-ab-ks "cbcl:10-120/5;lrs:5,10,50;mll:5,10,50" --base <dir> --rounds 3`); CBCL certify(k)
# after a fit, CPU and minor page faults per certificate (`--dnn-faults 10,30,60,65,70,75,100 --base <dir>`)


def _parse_cases(spec: str):
    """``"cbcl:10-120/5;lrs:5,10,50"`` -> ``[("cbcl", (10, 15, ..., 120)), ("lrs", (5, 10, 50))]``."""
    cases = []
    for part in spec.split(";"):
        name, ks = part.split(":")
        if "-" in ks:
            lo, rest = ks.split("-")
            hi, stepk = (rest.split("/") + ["1"])[:2]
            cases.append((name, tuple(range(int(lo), int(hi) + 1, int(stepk)))))
        else:
            cases.append((name, tuple(int(v) for v in ks.split(","))))
    return cases


def cost_ab_ks(base: str, cases, rounds: int):
    """:func:`cost_ab` at the given k: per round and dataset the base checkout's worker, then this one's
    (alternating), each k's cert / answer CPU ratio per round, its median, and the certified ratio."""
    cost_rounds(base, cases, rounds, "--cost-worker", "cost-ab-ks")


def cost_ab_ks_main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cost-ab-ks", default="cbcl:10-120/5;lrs:5,10,50;mll:5,10,50")
    ap.add_argument("--base", default="/tmp/dnn7-base")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    cost_ab_ks(a.base, _parse_cases(a.cost_ab_ks), a.rounds)



def faults_worker(ks, reps=5):
    """One checkout's side of ``--dnn-faults``: per CBCL k, ``reps`` times a fit then certify(x=answer): the
    certificate's CPU time and minor page faults (``getrusage``), the fit's CPU time, as JSON."""
    import resource

    import nspca_core as nc
    from nspca_core.certificates import certify

    X = load("cbcl")
    nc.fit(X[:64], k=3)
    certify(X[:64], k=3)
    out = []
    for k in ks:
        rows = []
        for _ in range(reps):
            c0 = time.process_time()
            r = nc.fit(X, k=k, certify=False)
            ta = time.process_time() - c0
            f0, c0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt, time.process_time()
            c = certify(X, k=k, x=r.x)
            rows.append((time.process_time() - c0, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0, ta))
        out.append({"k": k, "rows": rows, "bound": c.upper_bound})
    print("FAULTS " + json.dumps(out), flush=True)


def dnn_faults(base: str, ks, rounds: int):
    """CBCL certify(k) after a fit, both checkouts alternating (subprocesses), ``rounds`` rounds of 5: median
    certificate CPU / median fit CPU, median minor page faults per certificate, and whether the bounds agree."""
    print(f"dnn-faults: start ({load_note()}; MALLOC_MMAP_THRESHOLD_={os.environ.get('MALLOC_MMAP_THRESHOLD_')})",
          flush=True)
    res = ab_runs(base, ["--faults-worker", ",".join(map(str, ks))], rounds, "FAULTS ", "dnn-faults")
    if res is None:
        return
    res = {tag: [{r["k"]: r for r in out} for out in runs] for tag, runs in res.items()}
    for k in ks:
        summary = {}
        for tag in ("before", "after"):
            rows = [row for run in res[tag] for row in run[k]["rows"]]
            cert, faults, fit = (np.median([row[j] for row in rows]) for j in range(3))
            summary[tag] = (cert / fit, faults, cert)
        same = all(run[k]["bound"] == res["before"][0][k]["bound"] for tag in res for run in res[tag])
        b, a = summary["before"], summary["after"]
        print(f"dnn-faults: cbcl k={k:3d}: cert/answer {b[0]:.2f} -> {a[0]:.2f}x, cert {b[2] * 1e3:.1f} -> "
              f"{a[2] * 1e3:.1f} ms CPU, minor faults {b[1]:.0f} -> {a[1]:.0f} per certificate (medians); "
              f"bounds {'bit-identical' if same else 'DIFFER'}", flush=True)
    print(f"dnn-faults: end ({load_note()})", flush=True)


def dnn_faults_main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dnn-faults", default="10,30,60,65,70,75,100")
    ap.add_argument("--faults-worker", default="")
    ap.add_argument("--base", default="/tmp/dnn7-base")
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    if a.faults_worker:
        return faults_worker([int(v) for v in a.faults_worker.split(",")])
    dnn_faults(a.base, [int(v) for v in a.dnn_faults.split(",")], a.rounds)


def small_first_main():
    """Issue 39 item 2 with the smaller screen first (helper path7): ``--small-first-path on,off`` runs
    ``--issue39 path``'s comparison (certify_path against certify(k), cached per setting in ``--cache``) with
    ``_settings._SMALL_FIRST`` set each way, on ``--data`` (golub, dlbcl: the gene-shaped stand-ins; mll,
    cbcl: the datasets; standin: ``gene_matrix(60, 5000, seed=3)``), every ``--stride``-th k."""
    from nspca_core.certificates import _settings

    ap = argparse.ArgumentParser()
    ap.add_argument("--small-first-path", default="on,off")
    ap.add_argument("--data", default="standin,golub,dlbcl")
    ap.add_argument("--stride", type=int, default=1)
    ap.add_argument("--cache", default="/tmp")
    ap.add_argument("--fill-cache", action="store_true")
    a = ap.parse_args()
    warm_up()
    for setting in a.small_first_path.split(","):
        _settings._SMALL_FIRST = setting == "on"
        for name in a.data.split(","):
            if name == "standin":
                X = gene_matrix(60, 5000, seed=3)
            elif name in ("golub", "dlbcl"):
                X = gene_shaped(name)
            elif (X := load(name)) is None:
                continue
            tag = f"{name}-small-first-{setting}"
            if name in ("cbcl", "lrs"):
                path_vs_one_bench(tag, X, list(range(1, X.shape[1] + 1)), a.stride, 500, 0.98, a.cache, a.fill_cache)
            else:
                path_vs_one_bench(tag, X, list(range(2, 201)), a.stride, cache_dir=a.cache, fill_only=a.fill_cache)


if __name__ == "__main__":
    if "--dnn-faults" in sys.argv or "--faults-worker" in sys.argv:
        dnn_faults_main()
    elif "--cost-ab-ks" in sys.argv:
        cost_ab_ks_main()
    elif "--small-first-path" in sys.argv:
        small_first_main()
    elif "--s-terms" in sys.argv:
        s_terms_main()
    elif "--cost-ab-wide" in sys.argv or "--wide-cost-worker" in sys.argv:
        wide_main()
    else:
        main()
