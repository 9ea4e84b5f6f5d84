"""fit(method="auto") against tpower (issue 39 item 4): a base version and this one, in one run.

Usage (from the repository root)::

    python benchmarks/bench_auto.py --base /tmp/auto-base [--rounds 2] [--sets CBCL,LRS,MLL,golub,dlbcl]
    python benchmarks/bench_auto.py --base /tmp/auto-base --fingerprint [--seeds 3]
    python benchmarks/bench_auto.py --profile MLL:5,10,50

Each measurement runs in a fresh subprocess on one version's tree (``--base``: a checkout, e.g.
``git worktree add /tmp/auto-base <commit>``; this tree otherwise), the two versions alternating per
data set, ``--rounds`` times; the table keeps each figure's best.  In a child: the covariance operator
of the centered data is built once (as the front builds it), the unit is the median of 7 calls of one
``eigh(A)`` (n <= 1000: CBCL, LRS) or one thin SVD of the centered data (MLL and the gene-shaped
sets), and ``solve.fit_cov(auto)`` and ``fit_cov(tpower)`` (same d = 3, eps = 0.1, random_state 0)
are timed as the best of 3 interleaved calls, CPU time of the process, one BLAS thread.  So every
ratio auto/tpower and every unit count is measured in one process, and the two versions' figures
side by side in one run.

Targets: auto/tpower <= 1.5 everywhere; auto <= 1.5 units on the gene data (MLL, golub-shaped
72 x 7,129 and dlbcl-shaped 77 x 7,070 synthetic genes, ``bench_certify.gene_matrix``).

``--fingerprint``: auto's answer on a grid (data sets x k x d, random_state 0) in both versions,
compared: bit-identical x, the same support (different weights), better, worse variance; ``--seeds N``
repeats it for random_state 0 ... N - 1.  ``--guarantee``: auto against every shipped method on that grid.
``--profile``: cProfile (CPU clock) of fit_cov(auto) on this tree.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KS = (5, 10, 20, 50, 180)
SETS = ("CBCL", "LRS", "MLL", "golub", "dlbcl")
FP_SETS = SETS + ("small", "thin")
FP_KS = (3, 5, 10, 20, 50, 180)
FP_DS = (1, 2, 3)

_CHILD = r'''
import os, sys, json, time, hashlib, resource
for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[v] = "1"
sys.path.insert(0, {root!r})
sys.path.insert(1, {bench!r})
import numpy as np
try:
    from nspca_core.operators.covariance import as_cov
except ImportError:  # a base from before the module move (issue 37.6)
    from nspca_core._covariance import as_cov
from nspca_core.api import normalized
from nspca_core.solve import fit_cov
from bench_auto import load

def operator(X):
    C, _ = normalized(as_cov(X))
    if not C.thin:
        C.dense()
    return C

def cpu(f):
    t = time.process_time(); out = f(); return out, time.process_time() - t

mode, name, ks, seed = {mode!r}, {name!r}, {ks!r}, {seed!r}
X = load(name)
C = operator(X)
out = {{}}
if mode == "time":
    # warm: imports and first-call costs are not counted
    fit_cov(C, 5, "auto", 3, 0.1, 0, None, {{}}); fit_cov(C, 5, "tpower", 3, 0.1, 0, None, {{}})
    # the unit: one thin SVD of the centered data (its eigh when it has more samples than features, n <= 1,000)
    f = (lambda: np.linalg.eigh(C.dense())) if X.shape[0] >= X.shape[1] and X.shape[1] <= 1000 else \
        (lambda: np.linalg.svd(X, full_matrices=False))
    f()
    u = float(np.median([cpu(f)[1] for _ in range(7)]))
    for k in ks:
        k = min(k, C.n)
        ta, tt, fa = [], [], []
        for _ in range(3):
            f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            ra, t = cpu(lambda: fit_cov(C, k, "auto", min(3, C.n), 0.1, 0, None, {{}})); ta.append(t)
            fa.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)  # minor page faults of the fit
            rt, t = cpu(lambda: fit_cov(C, k, "tpower", min(3, C.n), 0.1, 0, None, {{}})); tt.append(t)
        out[str(k)] = dict(auto=min(ta) / u, tpower=min(tt) / u, var_ratio=ra.variance / rt.variance,
                           faults=float(np.median(fa)))
else:
    for k in ks:
        for d in {fp_ds!r}:
            r = fit_cov(C, min(k, C.n), "auto", d, 0.1, seed, None, {{}})
            out[f"{{k}},{{d}}"] = dict(x=hashlib.sha256(np.ascontiguousarray(r.x).tobytes()).hexdigest(),
                                      support=np.flatnonzero(r.x).tolist(), variance=float(r.variance))
            if d == 3:  # tpower has no d
                t = fit_cov(C, min(k, C.n), "tpower", d, 0.1, seed, None, {{}})
                out[f"{{k}},{{d}}"]["tpower"] = hashlib.sha256(np.ascontiguousarray(t.x).tobytes()).hexdigest()
print(json.dumps(out))
'''


def data_dir() -> Path:
    return Path(os.environ.get("NSPCA_DATA_DIR", ROOT.parent / "shared" / "datasets"))


def load(name):
    """Centered data of one set (a real one from NSPCA_DATA_DIR, or a gene-shaped synthetic one; g72x1000,
    g60x2500, g48x1800: bench_unseen's thin gene stand-ins, never in a default run)."""
    import numpy as np

    if name in ("small", "thin"):  # random data: 54 x 39 (em's range), 30 x 2,000 of rank ~3 plus noise
        rng = np.random.default_rng(7)
        m, n = (54, 39) if name == "small" else (30, 2000)
        X = rng.standard_normal((m, n)) * rng.uniform(0.2, 3.0, n)
        if name == "thin":
            X = 0.05 * X + rng.standard_normal((m, 3)) @ (rng.standard_normal((3, n)) * rng.uniform(0.1, 3.0, n))
        return X - X.mean(axis=0)
    if name in ("g72x1000", "g60x2500", "g48x1800"):  # bench_unseen's thin stand-ins, centered (issue 39 T4)
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from bench_unseen import GENES, gene

        X = gene(*GENES[name])
        return X - X.mean(axis=0)
    if name in ("golub", "dlbcl"):
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from bench_certify import gene_matrix

        return gene_matrix(m=72, n=7129, seed=0) if name == "golub" else gene_matrix(m=77, n=7070, seed=1)
    files = {"CBCL": ("cbcl_faces_train.npz", "images"), "LRS": ("lrs_spectrometer.npz", "X"),
             "MLL": ("mll_leukemia.npz", "X")}
    X = np.load(data_dir() / files[name][0], allow_pickle=False)[files[name][1]]
    X = X.reshape(X.shape[0], -1).astype(float)
    return X - X.mean(axis=0)


def child(root: Path, mode: str, name: str, ks, seed: int = 0) -> dict:
    code = _CHILD.format(root=str(root), bench=str(Path(__file__).resolve().parent), mode=mode, name=name,
                         ks=tuple(ks), fp_ds=FP_DS, seed=seed)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(root))
    if out.returncode:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def timing(base: Path, new: Path, sets, rounds: int):
    best: dict = {}
    for _ in range(rounds):
        for name in sets:
            for label, root in (("base", base), ("new", new)):
                res = child(root, "time", name, KS)
                for k, r in res.items():
                    cur = best.setdefault((name, k, label), r)
                    for f in ("auto", "tpower"):
                        cur[f] = min(cur[f], r[f])
                    cur["ratio"] = min(cur.get("ratio", float("inf")), r["auto"] / r["tpower"])
    print("CPU time, one BLAS thread; units: one eigh(A) (CBCL, LRS) / one thin SVD of Xc (gene data); "
          f"best of {rounds} rounds x 3 calls; ratio = auto/tpower measured in one process")
    print(f"{'data':>6} {'k':>4} | {'base auto u':>11} {'tpow u':>6} {'ratio':>5} | "
          f"{'new auto u':>10} {'tpow u':>6} {'ratio':>5} | {'var new/tpower':>14}")
    for name in sets:
        for k in sorted({k for (nm, k, _) in best if nm == name}, key=int):
            b, a = best[(name, k, "base")], best[(name, k, "new")]
            print(f"{name:>6} {k:>4} | {b['auto']:11.2f} {b['tpower']:6.2f} {b['ratio']:5.2f} | "
                  f"{a['auto']:10.2f} {a['tpower']:6.2f} {a['ratio']:5.2f} | {a['var_ratio']:14.12f}", flush=True)


def fingerprint(base: Path, new: Path, sets, seeds=(0,)):
    counts = dict(identical=0, same_support=0, better=0, worse=0, other_equal=0)
    tp_same = tp_all = 0
    for seed, name in ((s, nm) for s in seeds for nm in sets):
        b, a = child(base, "fp", name, FP_KS, seed), child(new, "fp", name, FP_KS, seed)
        name = f"{name} (random_state {seed})" if len(seeds) > 1 else name
        for key in b:
            vb, va = b[key]["variance"], a[key]["variance"]
            if b[key]["x"] == a[key]["x"]:
                counts["identical"] += 1
            elif va < vb * (1 - 1e-12):
                counts["worse"] += 1
                print(f"   worse: {name} (k, d) = ({key}) {va!r} < {vb!r}")
            elif va > vb * (1 + 1e-12):
                counts["better"] += 1
                print(f"   better: {name} (k, d) = ({key}) {va!r} > {vb!r}")
            elif b[key]["support"] == a[key]["support"]:
                counts["same_support"] += 1
            else:
                counts["other_equal"] += 1
                print(f"   equal value, other support: {name} (k, d) = ({key})")
            if "tpower" in b[key] and "tpower" in a[key]:
                tp_same += b[key]["tpower"] == a[key]["tpower"]
                tp_all += 1
    print(f"tpower's x bit-identical in {tp_same} of {tp_all} cases")
    total = sum(counts.values())
    print(f"fingerprint of auto on {total} cases ({', '.join(sets)} x k {FP_KS} x d {FP_DS} x random_state "
          f"{tuple(seeds)}): {counts}")


def guarantee(sets):
    """auto's variance against every shipped method's (same d, eps, random_state 0) on the grid of
    the fingerprint: the smallest ratio and its method per data set (target: never below 1)."""
    sys.path.insert(0, str(ROOT))
    from nspca_core.operators.covariance import as_cov
    from nspca_core.api import normalized
    from nspca_core.solve import fit_cov

    worst_all = float("inf")
    for name in sets:
        C, _ = normalized(as_cov(load(name)))
        if not C.thin:
            C.dense()
        worst = (float("inf"), None)
        for k in sorted({min(k, C.n) for k in FP_KS}):
            for d in FP_DS:
                a = fit_cov(C, k, "auto", d, 0.1, 0, None, {}).variance
                others = [("tpower", d), ("em", d), ("enet", d), ("zass", d), ("spannogram", 2)]
                if C.n <= 400:
                    others.append(("spannogram", 3))
                for method, dm in others:
                    if method == "spannogram" and d != 3:
                        continue
                    v = fit_cov(C, k, method, dm, 0.1, 0, None, {}).variance
                    if a / v < worst[0]:
                        worst = (a / v, f"{method}(d={dm}) k={k} d={d}")
        worst_all = min(worst_all, worst[0])
        print(f"   {name}: smallest auto / method {worst[0]:.12f} ({worst[1]})", flush=True)
    print(f"auto never below a shipped method (1e-12 relative): {worst_all >= 1 - 1e-12}")


def profile(spec: str):
    import cProfile
    import pstats
    import time

    sys.path.insert(0, str(ROOT))
    from nspca_core.operators.covariance import as_cov
    from nspca_core.api import normalized
    from nspca_core.solve import fit_cov

    for part in spec.split(";"):
        name, ks = part.split(":")
        C, _ = normalized(as_cov(load(name)))
        if not C.thin:
            C.dense()
        ks = [int(k) for k in ks.split(",")]
        fit_cov(C, 5, "auto", 3, 0.1, 0, None, {})
        pr = cProfile.Profile(time.process_time)
        pr.enable()
        for k in ks:
            fit_cov(C, k, "auto", 3, 0.1, 0, None, {})
        pr.disable()
        print(f"### {name} k = {ks}")
        pstats.Stats(pr).sort_stats("cumulative").print_stats(35)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--base", type=Path)
    p.add_argument("--new", type=Path, default=ROOT, help="the tree measured against --base (default this "
                   "one; a checkout of a commit keeps edits made during the run out of it)")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--sets", help=f"comma-separated (default {','.join(SETS)}; --fingerprint adds small, thin)")
    p.add_argument("--fingerprint", action="store_true")
    p.add_argument("--seeds", type=int, default=1, help="--fingerprint: random_state 0, ..., seeds - 1")
    p.add_argument("--profile")
    p.add_argument("--guarantee", action="store_true", help="auto against every shipped method, this tree")
    p.add_argument("--robust", type=int, metavar="N", help="timing from N interleaved calls per k (min of N; "
                   "for 2-3 ms calls such as LRS's), see robust_timing")
    p.add_argument("--ks", help="--robust: comma-separated k (default 5,10,20,50,180; k above n runs at n)")
    p.add_argument("--sparse", action="store_true", help="--robust on the sparse corpora (review corpus, "
                   "KOS-shaped), see sparse_timing")
    a = p.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if a.ks:
        global KS
        KS = tuple(int(k) for k in a.ks.split(","))
    if a.sparse:
        return sparse_timing(a.base, a.new, a.rounds, a.robust or 10)
    sets = a.sets.split(",") if a.sets else (FP_SETS if a.fingerprint or a.guarantee else SETS)
    if a.profile:
        profile(a.profile)
    elif a.guarantee:
        guarantee(sets)
    elif a.fingerprint:
        fingerprint(a.base, a.new, sets, tuple(range(a.seeds)))
    elif a.robust:
        robust_timing(a.base, a.new, sets, a.rounds, a.robust)
    else:
        timing(a.base, a.new, sets, a.rounds)


def _child_minima(src: str, root: Path, best: dict, key, fields) -> None:
    """Run one timing child (``python -c src`` in ``root``) and keep, per k, the least of each of ``fields``
    over the runs so far in ``best[key(k)]`` (the first run's record otherwise)."""
    out = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, cwd=str(root))
    if out.returncode:
        raise RuntimeError(out.stderr[-3000:])
    for k, r in json.loads(out.stdout.strip().splitlines()[-1]).items():
        cur = best.setdefault(key(k), dict(r))
        for f in fields:
            cur[f] = min(cur[f], r[f])


def _ab_minima(make_src, sets, rounds: int, base: Path, new: Path, fields) -> dict:
    """:func:`_child_minima` over ``rounds`` x data sets x both trees (base first), the child's code from
    ``make_src(name, root)``: ``{(name, k, "base" | "new"): record}``, each of ``fields`` the least seen."""
    best: dict = {}
    for _ in range(rounds):
        for name in sets:
            for label, root in (("base", base), ("new", new)):
                _child_minima(make_src(name, root), root, best, lambda k, name=name, label=label: (name, k, label),
                              fields)
    return best


def robust_timing(base: Path, new: Path, sets, rounds: int, reps: int):
    """As :func:`timing`, with ``reps`` interleaved calls of auto and tpower per k in each child (not 3):
    the minimum of many calls of a 2-3 ms solve (LRS) is its cost on an idle core, where the best of 3
    is often a call slowed by the other processes.  Each version's figure is the minimum over calls
    and rounds, the ratio that of the two minima (both measured in the same processes)."""
    code = _CHILD.replace("for _ in range(3):", f"for _ in range({int(reps)}):")
    best = _ab_minima(lambda name, root: code.format(root=str(root), bench=str(Path(__file__).resolve().parent),
                                                     mode="time", name=name, ks=KS, fp_ds=FP_DS, seed=0),
                      sets, rounds, base, new, ("auto", "tpower", "faults"))
    print(f"CPU time, one BLAS thread; min of {reps} interleaved calls x {rounds} rounds per version; "
          "units as in the default timing; ratio = min auto / min tpower")
    print("faults: minor page faults of one auto fit (the median in a child, the least over rounds; a base "
          "without the count: -1)")
    print(f"{'data':>8} {'k':>4} | {'base auto u':>11} {'tpow u':>6} {'ratio':>5} {'faults':>6} | "
          f"{'new auto u':>10} {'tpow u':>6} {'ratio':>5} {'faults':>6} | {'var new/tpower':>14}")
    for name in sets:
        for k in sorted({k for (nm, k, _) in best if nm == name}, key=int):
            b, a = best[(name, k, "base")], best[(name, k, "new")]
            print(f"{name:>8} {k:>4} | {b['auto']:11.2f} {b['tpower']:6.2f} {b['auto'] / b['tpower']:5.2f} "
                  f"{b.get('faults', -1):6.0f} | {a['auto']:10.2f} {a['tpower']:6.2f} {a['auto'] / a['tpower']:5.2f} "
                  f"{a.get('faults', -1):6.0f} | {a['var_ratio']:14.12f}", flush=True)


_SPARSE_CHILD = r'''
import os, sys, time, json
for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[v] = "1"
sys.path.insert(0, {root!r})
import scipy.sparse as sp
from nspca_core.operators.covariance import as_cov
from nspca_core.api import normalized
from nspca_core.solve import fit_cov
C, _ = normalized(as_cov(sp.load_npz({path!r})))
def cpu(f):
    t = time.process_time(); r = f(); return r, time.process_time() - t
fit_cov(C, 5, "auto", 3, 0.1, 0, None, {{}}); fit_cov(C, 5, "tpower", 3, 0.1, 0, None, {{}})
out = {{}}
for k in {ks!r}:
    ta, tt = [], []
    for _ in range({reps}):
        ra, t = cpu(lambda: fit_cov(C, k, "auto", 3, 0.1, 0, None, {{}})); ta.append(t)
        rt, t = cpu(lambda: fit_cov(C, k, "tpower", 3, 0.1, 0, None, {{}})); tt.append(t)
    out[str(k)] = dict(auto=min(ta), tpower=min(tt), var_ratio=ra.variance / rt.variance)
print(json.dumps(out))
'''


def sparse_timing(base: Path, new: Path, rounds: int, reps: int):
    """auto against tpower on the sparse corpora (``bench_certify.cost_data``: the 5,000 x 2,000 review
    corpus and the KOS-shaped one, CSR counts, through the front's operator), both trees alternating:
    per k the minimum of ``reps`` interleaved calls in each child, CPU time, one BLAS thread, and over
    ``rounds``; the ratio is that of the two minima (``--ks``: the k, default 2,3,5,10,20,50,100,150)."""
    import tempfile

    import scipy.sparse as sp

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.path.insert(0, str(ROOT))
    from bench_certify import cost_data

    ks = KS if KS != (5, 10, 20, 50, 180) else (2, 3, 5, 10, 20, 50, 100, 150)
    tmp = Path(tempfile.mkdtemp(prefix="bench_auto_sparse_"))
    for name in ("corpus", "kos"):
        path = tmp / f"{name}.npz"
        sp.save_npz(path, sp.csr_matrix(cost_data(name)))
        best: dict = {}
        for _ in range(rounds):
            for label, root in (("base", base), ("new", new)):
                src = _SPARSE_CHILD.format(root=str(root), path=str(path), ks=tuple(ks), reps=int(reps))
                _child_minima(src, root, best, lambda k, label=label: (k, label), ("auto", "tpower"))
        shape = sp.load_npz(path).shape
        print(f"{name} {shape[0]} x {shape[1]} (min of {reps} interleaved calls x {rounds} rounds): k | base auto ms "
              "tpower ms ratio | new auto ms tpower ms ratio | var new auto/tpower", flush=True)
        for k in ks:
            b, a = best[(str(k), "base")], best[(str(k), "new")]
            print(f"  {k:4d} | {b['auto'] * 1e3:8.2f} {b['tpower'] * 1e3:8.2f} {b['auto'] / b['tpower']:5.2f} | "
                  f"{a['auto'] * 1e3:8.2f} {a['tpower'] * 1e3:8.2f} {a['auto'] / a['tpower']:5.2f} | "
                  f"{a['var_ratio']:.12f}", flush=True)


_FIRST_CHILD = r'''
import os, sys, json, time
for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[v] = "1"
sys.path.insert(0, {root!r})
sys.path.insert(1, {bench!r})
import numpy as np
import nspca_core.solve as solve
from nspca_core.operators.covariance import as_cov
from nspca_core.api import normalized
from bench_auto import load
X = load({name!r})
C, _ = normalized(as_cov(X))
if not C.thin:
    C.dense()
def cpu(f):
    t = time.process_time(); out = f(); return out, time.process_time() - t
fit = solve.fit_cov
fit(C, 5, "auto", 3, 0.1, 1, None, {{}}); fit(C, 5, "tpower", 3, 0.1, 1, None, {{}})  # imports, seed 1
f = (lambda: np.linalg.eigh(C.dense())) if X.shape[0] >= X.shape[1] and X.shape[1] <= 1000 else \
    (lambda: np.linalg.svd(X, full_matrices=False))  # the default timing's unit (thin 72 x 1,000: the SVD)
f()
u = float(np.median([cpu(f)[1] for _ in range(7)]))
kept = getattr(solve, "_DRAWS", None)
def fresh():  # a new operator of the same data, as a front builds one per call (outside the timer)
    F, _ = normalized(as_cov(X))
    if not F.thin:
        F.dense()
    return F
out = {{}}
for k in {ks!r}:
    k = min(k, C.n)
    tf, tk, tt, tn, tp = [], [], [], [], []
    for _ in range({reps}):
        if kept is not None:
            kept.clear()  # seed 0's draws not kept: the first fit of a process
        ra, t = cpu(lambda: fit(C, k, "auto", min(3, C.n), 0.1, 0, None, {{}})); tf.append(t)
        rb, t = cpu(lambda: fit(C, k, "auto", min(3, C.n), 0.1, 0, None, {{}})); tk.append(t)
        rt, t = cpu(lambda: fit(C, k, "tpower", min(3, C.n), 0.1, 0, None, {{}})); tt.append(t)
        if kept is not None:
            kept.clear()
        F = fresh()
        rf, t = cpu(lambda: fit(F, k, "auto", min(3, C.n), 0.1, 0, None, {{}})); tn.append(t)
        F = fresh()
        rp, t = cpu(lambda: fit(F, k, "tpower", min(3, C.n), 0.1, 0, None, {{}})); tp.append(t)
    assert np.array_equal(ra.x, rb.x)
    out[str(k)] = dict(first=min(tf) / u, kept=min(tk) / u, tpower=min(tt) / u, var_ratio=ra.variance / rt.variance,
                       fresh=min(tn) / u, fresh_tpower=min(tp) / u, fresh_var_ratio=rf.variance / rp.variance)
print(json.dumps(out))
'''


def first_fit_timing(base: Path, new: Path, sets, rounds: int, reps: int):
    """auto's first fit in a process (its kept normal draws cleared before each call, ``_start_draws``)
    and a later fit (draws kept), against tpower, both trees alternating per data set: per k the minimum
    of ``reps`` interleaved (first, later, tpower) calls in each child, over ``rounds``, in units as the
    default timing (issue 39 item 4, eighth round: "first fit and later fits apart").  ``fresh``: auto and
    tpower each on a new operator of the data per call (built outside the timer, as a front that makes one
    per request would): nothing kept on the operator (the factor, A^T's rows), the draws cleared."""
    best = _ab_minima(lambda name, root: _FIRST_CHILD.format(root=str(root), bench=str(Path(__file__).resolve().parent),
                                                             name=name, ks=KS, reps=int(reps)),
                      sets, rounds, base, new, ("first", "kept", "tpower", "fresh", "fresh_tpower"))
    print(f"CPU time, one BLAS thread; min of {reps} interleaved calls x {rounds} rounds per version; units as "
          "the default timing; first = draws cleared before the call, later = draws kept (one operator for "
          "every call: its factor kept); fresh = a new operator for each call of auto and of tpower (draws "
          "cleared); ratios to tpower on the same kind of operator")
    print(f"{'data':>6} {'k':>4} | {'base first':>10} {'later':>6} {'tpow':>6} {'r1st':>5} {'rlat':>5} "
          f"{'fresh':>6} {'tpow':>6} {'rfrsh':>5} | {'new first':>10} {'later':>6} {'tpow':>6} {'r1st':>5} "
          f"{'rlat':>5} {'fresh':>6} {'tpow':>6} {'rfrsh':>5} | {'var new/tpower':>14} {'fresh':>14}")
    for name in sets:
        for k in sorted({k for (nm, k, _) in best if nm == name}, key=int):
            cells = []
            for r in (best[(name, k, "base")], best[(name, k, "new")]):
                cells.append(f"{r['first']:10.2f} {r['kept']:6.2f} {r['tpower']:6.2f} {r['first'] / r['tpower']:5.2f} "
                             f"{r['kept'] / r['tpower']:5.2f} {r['fresh']:6.2f} {r['fresh_tpower']:6.2f} "
                             f"{r['fresh'] / r['fresh_tpower']:5.2f}")
            a = best[(name, k, "new")]
            print(f"{name:>6} {k:>4} | {cells[0]} | {cells[1]} | {a['var_ratio']:14.12f} "
                  f"{a['fresh_var_ratio']:14.12f}", flush=True)


def _main_first_fit() -> bool:
    """``--first-fit N [--base DIR] [--sets ...] [--ks ...] [--rounds R]``: :func:`first_fit_timing`; True
    when it ran (the option is parsed here so that :func:`main` stays as it was)."""
    if "--first-fit" not in sys.argv:
        return False
    p = argparse.ArgumentParser()
    p.add_argument("--first-fit", type=int, required=True, metavar="N")
    p.add_argument("--base", type=Path, required=True)
    p.add_argument("--new", type=Path, default=ROOT)
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--sets", default="LRS,dlbcl,golub,MLL,CBCL")
    p.add_argument("--ks", default="3,5,10,20,50,180")
    a = p.parse_args()
    global KS
    KS = tuple(int(k) for k in a.ks.split(","))
    first_fit_timing(a.base, a.new, a.sets.split(","), a.rounds, a.first_fit)
    return True


if __name__ == "__main__":
    if not _main_first_fit():
        main()
