"""Benchmark: the CPU seconds an analyst's first figure costs on each heavy page (issue 41 item 2).

One fresh process per scenario (a new server: nothing cached), the page run through Streamlit's
``AppTest`` and the job pool in threads (``Registry(processes=False)``), so that every CPU second of
the page runs *and* of the work is this process's (``time.process_time``, one BLAS thread).  Between
two runs of the page the probe waits for the next finished unit (no timer: the CPU counted is the
least any browser could cause).  Printed per scenario:

* ``first``: CPU s from opening the page (the sidebar's choices already made; the data set loaded
  by the first run) to a run that draws a figure with data;
* ``second``: the same for a second session opening the same page on the same data right after
  (what the shared caches and the single flight leave to pay);
* ``units``: units of work finished before the first figure, and which jobs they were.

Scenarios: MLL (72 × 12,582) on Variance vs k, Compare and Several components at the sidebar's
defaults (k = 10, d = 2, ε = 0.1), and the 75 × 7,000 gene CSV of ``bench_load.py`` uploaded on Your
data, then Variance vs k.  Compare rows of one run (the machine is shared).

Usage: ``python benchmarks/bench_first_figure.py [--only vk,compare,several,upload] [--profile DIR]``
(``--profile``: a py-spy record of each scenario's process, raw collapsed stacks).
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("NSPCA_DATA_DIR", str(ROOT.parent / "shared" / "datasets"))
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

SCENARIOS = {"vk": "variance_vs_k.py", "compare": "compare.py", "several": "several_components.py",
             "upload": "variance_vs_k.py"}
CAP_S = 600.0


def _has_figure(at) -> bool:
    """A plotly chart with at least one trace that has points (what the browser benchmark waits for)."""
    for chart in at.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        for trace in spec.get("data", []):
            if any(len(trace.get(ax) or []) for ax in ("x", "y", "z")):
                return True
    return False


def _finished_units(jobs_mod) -> int:
    return sum(len(j.view(touch=False).results) for j in jobs_mod.REGISTRY.jobs())


def _upload_state(jobs_mod, state, csv: Path) -> dict:
    """Upload the CSV on Your data and press "Analyse": the session state the other pages then see."""
    from tests.conftest import page_app

    at = page_app("your_data.py", timeout=CAP_S).run()
    at.file_uploader(key="yd_file").set_value((csv.name, csv.read_bytes(), "text/csv"))
    at = at.run()
    at.button(key="yd_use").click()
    at = at.run()
    if at.exception:
        raise RuntimeError(at.exception[0].value)
    return {state.UPLOAD: at.session_state[state.UPLOAD], state.DATASET: state.UPLOAD_NAME}


def _unit_cpu() -> float:
    return sum(cpu for _, cpu, _ in UNIT_CPU)


def _session(page: str, settings: dict, jobs_mod, redraws: int = 0) -> dict:
    """Open ``page`` in a new session and run it again at each finished unit until it draws a figure;
    then ``redraws`` more runs with nothing new (what a redraw costs).  CPU split into the units' own
    (their threads, inside ``ctx.run``) and the rest (the page runs and the job machinery)."""
    from tests.conftest import page_app

    at = page_app(page, timeout=CAP_S, **settings)
    cpu0, units_cpu0, t0, units0 = time.process_time(), _unit_cpu(), time.monotonic(), _finished_units(jobs_mod)
    runs = 0
    while time.monotonic() - t0 < CAP_S:
        at = at.run()
        runs += 1
        if at.exception:
            return dict(error=at.exception[0].value[:300])
        if _has_figure(at):
            break
        seen = _finished_units(jobs_mod)
        while _finished_units(jobs_mod) == seen and jobs_mod.REGISTRY.active() and time.monotonic() - t0 < CAP_S:
            time.sleep(0.01)
    cpu, units_cpu = time.process_time() - cpu0, _unit_cpu() - units_cpu0
    done = [(j.key[0], j.key[2] if len(j.key) > 2 else "", len(j.view(touch=False).results))
            for j in jobs_mod.REGISTRY.jobs()]
    out = dict(cpu=cpu, units_cpu=units_cpu, wall=time.monotonic() - t0, runs=runs,
               units=_finished_units(jobs_mod) - units0, jobs=[d for d in done if d[2]])
    if redraws:
        jobs_mod.REGISTRY.wait(CAP_S)  # the page's work done
        jobs_mod.REGISTRY.stop_background()  # and the tightening stopped: its CPU is not the redraws'
        jobs_mod.REGISTRY.wait(CAP_S, background=True)
        at.run()
        c0, u0 = time.process_time(), _unit_cpu()
        for _ in range(redraws):
            at.run()
        out["redraw"] = (time.process_time() - c0 - (_unit_cpu() - u0)) / redraws
    return out


UNIT_CPU: list = []  # (what, CPU s of the unit's thread) for every unit computed


def _count_units(jobs_mod) -> None:
    """Record the thread CPU seconds of every unit computed (``ctx.run`` in the job's thread)."""
    plain = jobs_mod.Context.run

    def run(self, fn, X, data_id, **kwargs):
        t = time.thread_time()
        try:
            return plain(self, fn, X, data_id, **kwargs)
        finally:
            what = fn.rsplit(".", 1)[1] + " " + " ".join(f"{k}={kwargs[k]}" for k in ("method", "strategy", "k",
                                                                                        "effort") if k in kwargs)
            UNIT_CPU.append((what, round(time.thread_time() - t, 3), round(time.process_time(), 2)))

    jobs_mod.Context.run = run


def probe(name: str) -> dict:
    """One scenario in this process (a fresh one): the first and a second session's first figure."""
    from streamlit.testing.v1 import AppTest  # noqa: F401 - imported before the clock starts
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    import ui.compute  # noqa: F401
    import ui.work  # noqa: F401
    from tests.app_shell.test_browser_journeys import labelled_csv
    from ui import jobs, state

    jobs.REGISTRY = jobs.Registry(processes=False)
    _count_units(jobs)
    # a warm-up on small data (not measured): the modules, Plotly's templates, Streamlit's first uses —
    # what a server pays once, at its first visit, not per analyst
    _session(SCENARIOS[name], {state.DATASET: "digits", state.K: 5, state.D: 2, state.EPS: 0.1}, jobs)
    jobs.REGISTRY.wait(CAP_S)
    UNIT_CPU.clear()
    settings = {state.DATASET: "mll", state.K: 10, state.D: 2, state.EPS: 0.1}
    cpu0 = time.process_time()
    if name == "upload":
        csv = labelled_csv(Path(tempfile.mkdtemp(prefix="nspca_ff_")) / "genes_75x7000.csv")
        settings = _upload_state(jobs, state, csv)
    else:  # the data set loaded once, as the sidebar does when it is chosen (cached per server)
        from ui.compute import load_dataset

        load_dataset("mll", "center", 0)
    opened = time.process_time() - cpu0
    first = _session(SCENARIOS[name], settings, jobs)
    second = _session(SCENARIOS[name], settings, jobs, redraws=3)
    jobs.REGISTRY.cancel_all()
    return dict(name=name, open=opened, first=first, second=second, units=UNIT_CPU, cpu0=cpu0)


def _row(r: dict) -> str:
    def part(s):
        if "error" in s:
            return f"error: {s['error']}"
        return (f"{s['cpu']:5.2f} CPU s = page runs {s['cpu'] - s['units_cpu']:4.2f} + units {s['units_cpu']:4.2f} "
                f"({s['runs']} runs, {s['units']} units)")
    redraw = r["second"].get("redraw")
    return (f"  {r['name']:<8} data {r['open']:4.2f} | first figure {part(r['first'])} | second session "
            f"{part(r['second'])} | a redraw {redraw if redraw is not None else float('nan'):.3f} CPU s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", default=",".join(SCENARIOS))
    ap.add_argument("--profile", default="", help="directory for a py-spy record of each scenario")
    ap.add_argument("--units", action="store_true", help="print every unit's CPU seconds")
    ap.add_argument("--probe", default="", help=argparse.SUPPRESS)  # the child process
    args = ap.parse_args()
    if args.probe:
        print(json.dumps(probe(args.probe)))
        return 0
    print(f"bench_first_figure: CPU s to an analyst's first figure, one fresh process per page; "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    for name in args.only.split(","):
        cmd = [sys.executable, __file__, "--probe", name]
        if args.profile:
            spy = Path(sys.executable).with_name("py-spy")
            out = Path(args.profile) / f"first_figure_{name}.txt"
            cmd = [str(spy), "record", "--idle", "--threads", "--format", "raw", "--rate", "100", "-o", str(out),
                   "--", *cmd]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        line = next((ln for ln in proc.stdout.splitlines()[::-1] if ln.startswith("{")), None)
        if line is None:
            print(f"  {name}: failed\n{proc.stderr[-2000:]}")
            continue
        r = json.loads(line)
        print(_row(r))
        print(f"           jobs with results at the first figure: {r['first'].get('jobs')}")
        if args.units:
            for what, cpu, at in r["units"]:
                print(f"           unit {what:<60} {cpu:6.2f} CPU s (ended at {at - r['cpu0']:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
