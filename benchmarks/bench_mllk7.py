"""Issue 39 target 1 at large k on wide gene data (helper mllk7, session 7): one-k certificate CPU / answer CPU,
before (``--base``, a ``git archive`` of another commit) and after (this checkout) alternating in ONE run, with
``_settings._SMALL_FIRST`` off and on (the smaller screen first), on MLL and the golub-/dlbcl-shaped stand-ins.

    NSPCA_DATA_DIR=... python benchmarks/bench_mllk7.py --base /tmp/mllk7-base --rounds 2

Each measurement is a fresh subprocess on one BLAS thread; per k the answer is the best of 3 ``fit(certify=False)``
and the certificate the best of 2 ``certify(X, k, x=answer)`` (CPU time, ``time.process_time``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path


HERE = Path(__file__).resolve().parent
CASES = (("mll", (50, 65, 80, 100, 120, 150, 200)), ("golub", (65, 80, 100, 120, 150, 200)),
         ("dlbcl", (65, 80, 100, 120, 150, 200)))


def worker(code: str, name: str, ks, small: bool) -> None:
    """One checkout's side (run in a subprocess whose ``sys.path`` starts at ``code``)."""
    sys.path.insert(0, code)
    import nspca_core as nc
    from nspca_core.certificates import _settings as S

    sys.path.insert(1, str(HERE))
    from bench_certify import cost_rows, gene_shaped, load

    S._SMALL_FIRST = small
    rows = cost_rows(load(name) if name == "mll" else gene_shaped(name), ks)
    print("COST " + json.dumps({"file": nc.__file__, "rows": rows}), flush=True)


def _load() -> str:
    return "load average " + " ".join(f"{v:.1f}" for v in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", default="/tmp/mllk7-base")
    ap.add_argument("--after", default=str(HERE.parent), help="the checkout measured as 'after' (default: this one)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--data", default="mll,golub,dlbcl")
    ap.add_argument("--small", default="0,1", help="_SMALL_FIRST settings (comma list of 0, 1)")
    ap.add_argument("--ks", default="", help="these k on every dataset")
    ap.add_argument("--worker", default="", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        code, name, ks, small = a.worker.split(":")
        return worker(code, name, [int(v) for v in ks.split(",")], small == "1")
    sys.path.insert(0, str(HERE))
    from bench_certify import ab_runs, by_k, cost_line

    print(f"bench_mllk7: start ({_load()})", flush=True)
    for name, ks in CASES:
        if name not in a.data.split(","):
            continue
        ks = tuple(int(v) for v in a.ks.split(",")) if a.ks else ks
        for small in a.small.split(","):
            res = ab_runs(a.base, lambda code: ["--worker", f"{code}:{name}:{','.join(map(str, ks))}:{small}"],
                          a.rounds, "COST ", name, script=__file__, after=a.after)
            if res is None:
                return
            for tag, code in (("before", a.base), ("after", a.after)):
                assert all(out["file"].startswith(code) for out in res[tag]), (tag, code)
            res = by_k(res)
            for k in ks:
                print(f"{name:5s} small={small} k={k:3d}: {cost_line(res, k)}", flush=True)
    print(f"bench_mllk7: end ({_load()})", flush=True)


if __name__ == "__main__":
    main()
