"""Benchmark: who waits how long for a first result when 8 analysts open heavy pages at once (issue 41 item 2).

The jobs of 8 sessions — the four heavy scenarios of ``bench_load.py`` (Variance vs k: a curve of 14
units, 28 certificates, 20 background tightening steps; Compare: 5 light fits and a slow one;
Several components: 3 light jobs), submitted one session after the other — run through
:class:`ui.jobs.Registry` in threads (no processes), every unit a fake one.  Printed, per session: how
many units of work (anyone's) were completed before its first result — a count, not a time, so the
load of the machine does not change it — and where the first background unit came.  Run it against an
older checkout (``cd <checkout> && python <this file>``) to compare schedulers: one without the
``owner`` of :meth:`ui.jobs.Registry.submit` is the old one.

Usage: ``python benchmarks/bench_jobs_fair.py``.
"""

from __future__ import annotations

import inspect
import os
import sys
import threading
import time

sys.path.insert(0, os.getcwd())

from ui import jobs  # noqa: E402

SCENARIOS = ("vk", "compare", "several", "vk")


def simulate(n_sessions: int = 8) -> dict:
    done: list = []
    lock = threading.Lock()
    reg = jobs.Registry(max_jobs=400, idle_seconds=3600, heavy_slots=1, processes=False)
    params = inspect.signature(reg.submit).parameters
    fair = "owner" in params
    beside = {"first_figure": False} if "first_figure" in params else {}  # a certificate: no first figure waits

    def work(session, name):
        def run(unit, ctx):
            for _ in range(3):  # a unit with callbacks (where a background unit can be preempted)
                time.sleep(0.01)
                ctx(0, 1)
            with lock:
                done.append((session, name, unit))
            return unit
        return run

    def submit(s, key, units, **kw):
        if fair:
            kw["owner"] = s
        reg.submit((s, key), f"{s} {key}", units, work(s, key), **kw)

    for i in range(n_sessions):
        s, kind = f"S{i}", SCENARIOS[i % len(SCENARIOS)]
        if kind == "vk":
            submit(s, "path", list(range(14)))
            submit(s, "certify", list(range(28)), heavy=True, **beside)
            submit(s, "tighten", list(range(20)), background=True)
        elif kind == "compare":
            for m in range(5):
                submit(s, f"fit{m}", [0])
            submit(s, "slowfit", [0], heavy=True)
        else:
            for m in range(3):
                submit(s, f"components{m}", [0])
    reg.wait(600, background=True)
    reg.clear()
    first: dict = {}
    for n, (s, _, _) in enumerate(done):
        first.setdefault(s, n)
    background = next((n for n, (_, j, _) in enumerate(done) if j == "tighten"), None)
    return dict(fair=fair, units=len(done), first=first, background=background)


def main() -> int:
    r = simulate()
    firsts = sorted(r["first"].values())
    print(f"{'fair' if r['fair'] else 'old'} scheduler ({os.getcwd()}); {r['units']} units in all")
    print("  units done (by anyone) before each session's first result: "
          + " ".join(f"{s}:{n}" for s, n in sorted(r["first"].items())))
    print(f"  worst {firsts[-1]}, median {firsts[len(firsts) // 2]}; first background unit done at position "
          f"{r['background']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
