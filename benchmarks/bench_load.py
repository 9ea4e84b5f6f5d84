"""Benchmark: N browser sessions at once on the heavy pages — first content, memory, cancellation.

Starts the app (``streamlit run app.py``) and opens N headless-Chromium sessions *at the same
time* (one browser context each, driven concurrently by Playwright's async API).  The sessions
cycle through four scenarios: MLL (72 × 12,582, from ``NSPCA_DATA_DIR``) on "Variance vs k",
"Compare algorithms" and "Several components", and a generated 75 × 7,000 labelled gene
matrix uploaded as CSV on "Your data", then "Variance vs k".  With N = 8 every scenario runs in
two sessions, whose identical work the server must share.

For every session it prints the seconds from opening the app to the sidebar, and from the
click on the page to its first content (a figure with data, as in ``bench_app.py``), and
whether an exception box showed.  For the server (its process and its worker processes) it
prints the resident memory at the start, the peak while the sessions work, the seconds from
closing every tab until no job is queued or running (from the job log, ``NSPCA_JOB_LOG``),
and the seconds until the memory is back within 300 MB of the start.

Budgets (issue 31 item 12), checked and printed as ``ok`` / ``OVER``: first content ≤ 10 s per
session at N = 8, server memory ≤ 4 GB (:data:`MEMORY_BUDGET_MB`), all work cancelled within
10 s of the tabs closing, memory within 300 MB of the start after it.  Wall-clock seconds of
one run on this machine (2 shared cores): compare within a run, not across machines.

With ``--upload-mb 184`` it also uploads a CSV of that size in one session (issue 26 item 8): the
server's peak while reading (budget 4× the file), and how soon after the tab closes the memory is
back within 300 MB of the start.

The class (issue 41 item 1, ``--sessions none --class 12,30``): after a teacher's first visit, N
students open the guided tour, d = 2, d = 3 and the feasible arc at once; server CPU per student
(``/proc``), also less the server's idle CPU over the class's wall time (measured for 20 s with no
browser open), first figure, memory, load average.  Analysts and a class at once (issue 41 item 2,
``--sessions none --analysts 8 --class 12``): the four heavy scenarios above in 8 sessions and 12
students, opened together; each analyst's first figure, the students' first figure, the server's
CPU (its own process, and its workers), memory, load average — and, load-independent, the server CPU
seconds spent before each analyst's first figure and the units of work finished before it (from the
job log; how many were served as a first figure), whose largest is the CPU a quiet machine needs before
the last first figure.  The work phase ends after :data:`MIXED_DEADLINE_S` whatever is left (the run
stays under 10 minutes; every browser and the server are stopped).  ``--clients browser,protocol`` runs
it twice, on a fresh server each: with a headless Chromium per session, and with the students and the
analysts as Streamlit protocol clients (``benchmarks/st_client.py``: the browser's messages, its
upload request and clicks, no drawing — a class has a machine per student, the 20 Chromiums of one
2-core machine took the cores the server needs).
``NSPCA_FIRST_PAUSE=0`` in the environment runs the server without :mod:`ui.pause` (the comparison).

Usage: ``python benchmarks/bench_load.py [--sessions 1,4,8] [--cap SECONDS] [--upload-mb MB]
[--class 12,30] [--analysts 8] [--clients browser,protocol] [--port PORT] [--profile]``; output kept in
``benchmarks/results/bench_load.txt`` (``bench_load_class.txt``, ``bench_load_mixed.txt``).
``tests/app_shell/test_load.py`` runs N = 3 through
:func:`run_load`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("NSPCA_DATA_DIR", str(ROOT.parent / "shared" / "datasets"))

from tests.app_shell.test_browser import CHROMIUM_ARGS, _chromium, _start_server, _status_mb, _stop_server, _tree  # noqa: E402
from tests.app_shell.test_browser_journeys import FIGURE_STATE_JS, PATHS, labelled_csv  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "bench_load.txt"
MEMORY_BUDGET_MB = 4096      # the server and its worker processes, N = 8
FIRST_CONTENT_BUDGET_S = 10.0
CANCEL_BUDGET_S = 10.0
MEMORY_BACK_MB = 300
SCENARIOS = (("mll", "Variance vs k, certified"), ("mll", "Compare algorithms"),
             ("mll", "Several components"), ("upload", "Variance vs k, certified"))
POLL_S = 0.25


@dataclass
class Session:
    index: int
    dataset: str
    title: str
    sidebar: float | None = None        # s from goto to the sidebar's dataset box
    first: float | None = None          # s from the click on the page to its first content
    total: float | None = None          # s from goto to the first content
    exception: str = ""
    notes: list = field(default_factory=list)


def use_port(port: int) -> None:
    """Start the benchmark's servers on ``port`` (one at a time) instead of any free one."""
    import tests.app_shell.test_browser as browser

    browser._free_port = lambda: port


def server_mb(pid: int) -> float:
    """Resident MB of the server and every process under it (workers, forkserver)."""
    return sum(_status_mb(p, "VmRSS") for p in _tree(pid))


class PeakMemory:
    """The server's resident memory sampled every 0.2 s between :meth:`start` and :meth:`stop`;
    ``peak`` is the largest seen (MB), from the value at construction on."""

    def __init__(self, pid: int):
        self.pid, self.peak = pid, server_mb(pid)
        self._stop, self._task = asyncio.Event(), None

    def start(self) -> "PeakMemory":
        self._task = asyncio.create_task(self._watch())
        return self

    async def _watch(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, server_mb(self.pid))
            await asyncio.sleep(0.2)

    async def stop(self) -> None:
        self._stop.set()
        await self._task


class JobLog:
    """Jobs queued/running per the server's job log (``ui.jobs`` writes one line per change)."""

    LINE = re.compile(r"job (.*) (queued|running|done|stopped|cancelled|failed)( \d+/\d+| \()")

    def __init__(self, path: Path):
        self.path = path

    def active(self) -> set[str]:
        state: dict[str, str] = {}
        for line in self.path.read_text(errors="replace").splitlines():
            m = self.LINE.search(line)
            if m:
                state[m.group(1)] = m.group(2)
        return {t for t, s in state.items() if s in ("queued", "running")}


async def _drawn(page) -> int:
    figs = await page.evaluate(FIGURE_STATE_JS)
    return sum(1 for f in figs if f["drawn"] and f["marks"] > 0)


async def _exception(page) -> str:
    box = page.locator('[data-testid="stException"]')
    return (await box.first.inner_text())[:300] if await box.count() else ""


async def _wait(predicate, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if await predicate():
            return True
        await asyncio.sleep(POLL_S)
    return False


async def _idle(page, timeout_s: float) -> None:
    async def quiet():
        return await page.locator('[data-testid="stStatusWidget"]').count() == 0
    for _ in range(3):  # idle three polls in a row
        await _wait(quiet, timeout_s)
        await asyncio.sleep(POLL_S)


async def drive(browser, url: str, s: Session, csv: Path, cap: float) -> None:
    """One session: open the app, choose the data, open the page, wait for its first content."""
    ctx = await browser.new_context(viewport={"width": 1400, "height": 1000})
    ctx.set_default_timeout(cap * 1000)
    s.notes.append(ctx)
    page = await ctx.new_page()
    t0 = time.monotonic()
    await page.goto(url + "/", wait_until="domcontentloaded", timeout=int(cap * 1000))
    box = page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').first
    await box.wait_for(timeout=int(cap * 1000))
    s.sidebar = time.monotonic() - t0
    await _idle(page, cap)
    if s.dataset == "mll":
        await box.click()
        await page.get_by_role("option", name=re.compile("^MLL leukemia")).first.click()
        await _idle(page, cap)
    else:
        await page.get_by_role("link", name="Your data").first.click()
        await page.wait_for_url(f"**/{PATHS['Your data']}", timeout=int(cap * 1000))
        await page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(csv))
        button = page.get_by_role("button", name="Analyse this data on every page")
        await button.wait_for(timeout=int(cap * 1000))
        await _idle(page, cap)
        await button.click()
        await _idle(page, cap)
    t1 = time.monotonic()
    await page.get_by_role("link", name=s.title).first.click()
    await page.wait_for_url(f"**/{PATHS[s.title]}", timeout=int(cap * 1000))

    async def content():
        s.exception = s.exception or await _exception(page)
        return bool(s.exception) or await _drawn(page) > 0

    if await _wait(content, cap):
        s.first, s.total = time.monotonic() - t1, time.monotonic() - t0
    s.exception = s.exception or await _exception(page)


async def _load(n: int, url: str, pid: int, log: JobLog, csv: Path, cap: float, out, profile_to=None,
                cancel_cap: float = 60.0) -> dict:
    from playwright.async_api import async_playwright

    sessions = [Session(i, *SCENARIOS[i % len(SCENARIOS)]) for i in range(n)]
    cold_mb = server_mb(pid)
    stop = asyncio.Event()
    stacks: list[str] = []

    async def watch():
        while not stop.is_set():
            peak[0] = max(peak[0], server_mb(pid))
            await asyncio.sleep(0.2)

    async def profile():  # py-spy dump of the server's threads every 5 s while the sessions work
        exe = Path(sys.executable).with_name("py-spy")
        while not stop.is_set() and exe.exists():
            proc = await asyncio.create_subprocess_exec(str(exe), "dump", "--pid", str(pid),
                                                        stdout=asyncio.subprocess.PIPE,
                                                        stderr=asyncio.subprocess.STDOUT)
            text = (await proc.communicate())[0].decode(errors="replace")
            stacks.append(f"--- t = {time.monotonic() - t0:.1f} s\n{text}")
            await asyncio.sleep(5.0)

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=_chromium(), headless=True, args=CHROMIUM_ARGS)
        # warm-up: one visit of the entry page loads the app's modules and the forkserver; the memory
        # after it is the start the budgets compare with (the cold figure is printed too)
        ctx = await browser.new_context()
        page = await ctx.new_page()
        await page.goto(url + "/", wait_until="domcontentloaded", timeout=int(cap * 1000))
        await page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').first.wait_for(
            timeout=int(cap * 1000))
        await _idle(page, cap)
        await ctx.close()
        await asyncio.sleep(3.0)
        start_mb = server_mb(pid)
        peak = [start_mb]
        t0 = time.monotonic()
        watcher = asyncio.create_task(watch())
        profiler = asyncio.create_task(profile()) if profile_to is not None else None
        t0 = time.monotonic()
        results = await asyncio.gather(*(drive(browser, url, s, csv, cap) for s in sessions),
                                       return_exceptions=True)
        for s, r in zip(sessions, results):
            if isinstance(r, BaseException):
                s.exception = s.exception or f"driver: {type(r).__name__}: {str(r)[:200]}"
        work_s = time.monotonic() - t0
        if profiler is not None:
            profiler.cancel()
        active_before = log.active()
        for s in sessions:  # close every tab at once
            for ctx in [c for c in s.notes if hasattr(c, "close")]:
                await ctx.close()
        closed = time.monotonic()
        cancelled = None
        while time.monotonic() - closed < cancel_cap:
            if not log.active():
                cancelled = time.monotonic() - closed
                break
            await asyncio.sleep(0.5)
        back = None
        while time.monotonic() - closed < cancel_cap + 60:
            if server_mb(pid) <= start_mb + MEMORY_BACK_MB:
                back = time.monotonic() - closed
                break
            await asyncio.sleep(1.0)
        stop.set()
        await watcher
        await browser.close()
    end_mb = server_mb(pid)
    by_process = {p: _status_mb(p, "VmRSS") for p in _tree(pid)}
    if profile_to is not None and stacks:
        Path(profile_to).write_text("\n".join(stacks))
    return {"sessions": sessions, "cold_mb": cold_mb, "start_mb": start_mb, "peak_mb": peak[0], "end_mb": end_mb,
            "cancelled_s": cancelled, "cancel_cap": cancel_cap, "back_s": back, "work_s": work_s,
            "active_at_close": len(active_before),
            "by_process": by_process}


@contextlib.contextmanager
def _gene_server(workdir: Path | None, prefix: str):
    """A server logging its jobs, and a gene-sized labelled CSV to upload, in ``workdir`` (a new
    temporary folder by default); yields (url, pid, csv, job log) and stops the server after."""
    workdir = Path(workdir or tempfile.mkdtemp(prefix=prefix))
    csv = labelled_csv(workdir / "genes_75x7000.csv")
    job_log = workdir / "jobs.log"
    job_log.write_text("")
    proc, url = _start_server(workdir / "streamlit.log", NSPCA_JOB_LOG=str(job_log))
    try:
        yield url, proc.pid, csv, job_log
    finally:
        _stop_server(proc)


def run_load(n: int, *, cap: float = 120.0, out=print, workdir: Path | None = None, profile_to=None,
             cancel_cap: float = 60.0) -> dict:
    """Start a server, run ``n`` sessions at once, stop the server; the measurements as a dict.
    ``cancel_cap``: how long to wait, once every tab is closed, for the server's jobs to end."""
    with _gene_server(workdir, "nspca_load_") as (url, pid, csv, job_log):
        return asyncio.run(_load(n, url, pid, JobLog(job_log), csv, cap, out, profile_to, cancel_cap))


# ------------------------------------------------------------------ the class (issue 41 item 1)
CLASS_PAGES = (("Guided tour", ""), ("Spannogram, d = 2", "spannogram_d2"),
               ("Spannogram, d = 3", "spannogram_d3"), ("Feasible arc of (P₂)", "feasible_arc"))
CLASS_CPU_BUDGET_S = 0.2     # server CPU s per student session after the teacher's first visit
IDLE_S = 20.0                # seconds the server's background CPU is measured with no browser open
TICKS = os.sysconf("SC_CLK_TCK")


def server_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) of the server and every process under it, from ``/proc``:
    each live process's own time plus the time of the children it has already reaped."""
    total = 0
    for p in _tree(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # the process just ended
            continue
        total += sum(int(v) for v in fields[11:15])  # utime stime cutime cstime
    return total / TICKS


@dataclass
class Student:
    index: int
    first: float | None = None          # s from goto to the tour's first drawn figure
    pages: dict = field(default_factory=dict)   # page title -> s from the click to idle with a figure
    exception: str = ""


async def student(browser, url: str, s: Student, cap: float, width: int = 1400, fetched: list | None = None) -> None:
    """One student: opens the app (the guided tour), then d = 2, d = 3 and the feasible arc.
    ``fetched``: collects the addresses of the frontend's static files the browser loaded."""
    ctx = await browser.new_context(viewport={"width": width, "height": 1000})
    ctx.set_default_timeout(cap * 1000)
    try:
        page = await ctx.new_page()
        if fetched is not None:
            page.on("response", lambda r: fetched.append(r.url) if "/static/" in r.url else None)
        t0 = time.monotonic()
        await page.goto(url + "/", wait_until="domcontentloaded", timeout=int(cap * 1000))
        if await _wait(lambda: _drawn_positive(page), cap):
            s.first = time.monotonic() - t0
        await _idle(page, cap)
        for title, path in CLASS_PAGES[1:]:
            t1 = time.monotonic()
            await page.get_by_role("link", name=title).first.click()
            await page.wait_for_url(f"**/{path}", timeout=int(cap * 1000))
            await _wait(lambda: _drawn_positive(page), cap)
            await _idle(page, cap)
            s.pages[title] = time.monotonic() - t1
            s.exception = s.exception or await _exception(page)
        s.exception = s.exception or await _exception(page)
    finally:
        await ctx.close()


async def _class(counts: list[int], url: str, pid: int, cap: float, profile_to=None) -> list[dict]:
    from playwright.async_api import async_playwright

    out = []
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=_chromium(), headless=True, args=CHROMIUM_ARGS)
        teacher = Student(-1)  # the teacher's first visit fills the shared caches
        cpu0 = server_cpu_s(pid)
        fetched: list[str] = []
        await student(browser, url, teacher, cap, fetched=fetched)
        await asyncio.sleep(2.0)
        teacher_cpu = server_cpu_s(pid) - cpu0
        # the floor no page can lower: Streamlit's frontend (its static files), served to each new browser
        cpu0, size = server_cpu_s(pid), 0
        for address in dict.fromkeys(fetched):
            # --compressed: curl accepts gzip, as every browser does
            proc = await asyncio.create_subprocess_exec("curl", "-s", "--compressed", "-o", "/dev/null", "-w",
                                                        "%{size_download}", address, stdout=asyncio.subprocess.PIPE)
            size += int((await proc.communicate())[0] or 0)
        static = dict(files=len(set(fetched)), mb=size / 1e6, cpu_s=server_cpu_s(pid) - cpu0)
        # the server's own background (its event loop's ticks, polled files) per wall second, no browser
        # open: on a busy machine a class takes minutes, and that background is paid over all of them
        cpu0, t_idle = server_cpu_s(pid), time.monotonic()
        await asyncio.sleep(IDLE_S)
        idle_rate = (server_cpu_s(pid) - cpu0) / (time.monotonic() - t_idle)
        for n in counts:
            students = [Student(i) for i in range(n)]
            start_mb = server_mb(pid)
            spy = None
            exe = Path(sys.executable).with_name("py-spy")
            if profile_to is not None and exe.exists():
                spy = await asyncio.create_subprocess_exec(
                    str(exe), "record", "--pid", str(pid), "--gil", "--format", "raw",
                    "--rate", "50", "--output", str(Path(profile_to).with_suffix(f".N{n}.txt")),
                    stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
            load0 = os.getloadavg()
            memory = PeakMemory(pid).start()
            cpu0, t0 = server_cpu_s(pid), time.monotonic()
            results = await asyncio.gather(*(student(browser, url, s, cap) for s in students),
                                           return_exceptions=True)
            wall = time.monotonic() - t0
            await asyncio.sleep(2.0)  # what the last reruns still do
            cpu = server_cpu_s(pid) - cpu0
            await memory.stop()
            if spy is not None:
                spy.send_signal(2)  # SIGINT: py-spy writes its samples and exits
                await spy.wait()
            for s, r in zip(students, results):
                if isinstance(r, BaseException):
                    s.exception = s.exception or f"driver: {type(r).__name__}: {str(r)[:200]}"
            out.append(dict(n=n, students=students, cpu_s=cpu, wall_s=wall, start_mb=start_mb, peak_mb=memory.peak,
                            teacher_cpu_s=teacher_cpu, teacher_first=teacher.first, load_before=load0, static=static,
                            idle_rate=idle_rate,
                            load_after=os.getloadavg()))
        await browser.close()
    return out


def run_class(counts: list[int], *, cap: float = 300.0, workdir: Path | None = None, profile_to=None) -> list[dict]:
    """Start a server, let a teacher visit the four teaching pages once, then for each N in
    ``counts`` let N students open the same four pages at once; server CPU, memory, first figure."""
    workdir = Path(workdir or tempfile.mkdtemp(prefix="nspca_class_"))
    proc, url = _start_server(workdir / "streamlit.log", NSPCA_JOB_LOG=str(workdir / "jobs.log"))
    try:
        return asyncio.run(_class(counts, url, proc.pid, cap, profile_to))
    finally:
        _stop_server(proc)


def report_class(rows: list[dict], out) -> None:
    out("Class: N students open the guided tour, d = 2, d = 3 and the feasible arc at once, after the "
        "teacher's first visit")
    if rows:
        r = rows[0]
        out(f"  teacher's first visit: server CPU {r['teacher_cpu_s']:.2f} s, tour's first figure "
            f"{r['teacher_first'] or float('nan'):.1f} s")
        st_ = r["static"]
        out(f"  Streamlit's frontend alone (its {st_['files']} static files, {st_['mb']:.1f} MB, fetched once more "
            f"with curl, gzip accepted; MB as sent): server CPU {st_['cpu_s']:.2f} s — paid by every new "
            "browser, whatever the pages do")
        out(f"  the server idle (no browser open): {r['idle_rate'] * 100:.2f} % of a core, paid over a class's whole "
            "wall time (the 'less idle' column takes it out)")
    out(f"  {'N':>3} {'server CPU/session (s)':>23} {'budget':>7} {'less frontend files':>20} "
        f"{'server CPU total (s)':>21} "
        f"{'first figure median/worst (s)':>30} {'memory start/peak (MB)':>23} {'wall (s)':>9} "
        f"{'load avg before/after':>22} {'less idle':>10}  exceptions")
    for r in rows:
        n = r["n"]
        per = r["cpu_s"] / n
        firsts = sorted(s.first for s in r["students"] if s.first is not None)
        med = firsts[len(firsts) // 2] if firsts else float("nan")
        worst = firsts[-1] if len(firsts) == n else float("inf")
        exc = [s.exception for s in r["students"] if s.exception]
        out(f"  {n:>3} {per:>23.3f} {_ok(per <= CLASS_CPU_BUDGET_S):>7} {per - r['static']['cpu_s']:>20.3f} "
            f"{r['cpu_s']:>21.2f} "
            f"{med:>14.1f} / {worst:<13.1f} {r['start_mb']:>11.0f} / {r['peak_mb']:<9.0f} {r['wall_s']:>9.1f} "
            f"{r['load_before'][0]:>10.2f} / {r['load_after'][0]:<9.2f} "
            f"{(r['cpu_s'] - r['idle_rate'] * (r['wall_s'] + 2.0)) / n:>10.3f}  {len(exc)}"
            + (f": {exc[0][:200]}" if exc else ""))
    out("  (server CPU: user + system seconds of the server and its workers from /proc over the N sessions "
        "and 2 s after; the browsers' own CPU is not counted. The machine is shared with other agents' "
        "work: first-figure seconds are wall clock under that load; the CPU seconds are the server's own.)")


# ------------------------------------------------------------------ analysts and a class at once (issue 41 item 2)
def process_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) of the process ``pid`` alone (not its workers), from ``/proc``."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS


MIXED_DEADLINE_S = 420.0  # the sessions' work phase ends here whatever is left (the whole run stays under 10 min)


class FirstFigures:
    """What the server had done when each analyst's first figure showed (load-independent figures):
    its CPU seconds since the sessions opened (``/proc``, server and workers) and the units of work it
    had finished (lines of the job log, ``ui.jobs``), sampled every 0.1 s while the sessions work."""

    UNIT = re.compile(r"job .* finished a unit \(rank (\d)\)")

    def __init__(self, pid: int, log_path: Path, sessions: list, cpu0: float):
        self.pid, self.log_path, self.sessions, self.cpu0 = pid, log_path, sessions, cpu0
        self.at: dict = {}  # session index -> dict(cpu=..., units=..., first_rank_units=...)
        self._stop, self._task = asyncio.Event(), None

    def units(self) -> tuple[int, int]:
        """Units finished so far in all, and how many of them were served as a first figure."""
        ranks = self.UNIT.findall(self.log_path.read_text(errors="replace"))
        return len(ranks), sum(r == "0" for r in ranks)

    def start(self) -> "FirstFigures":
        self._task = asyncio.create_task(self._watch())
        return self

    def _sample(self) -> None:
        fresh = [s for s in self.sessions if s.first is not None and s.index not in self.at]
        if fresh:
            cpu = server_cpu_s(self.pid) - self.cpu0
            units, firsts = self.units()
            for s in fresh:
                self.at[s.index] = dict(cpu=cpu, units=units, first_units=firsts)

    async def _watch(self) -> None:
        while not self._stop.is_set():
            self._sample()
            await asyncio.sleep(0.1)

    async def stop(self) -> None:
        self._stop.set()
        await self._task
        self._sample()


CLIENTS = ("browser", "protocol")  # who opens the pages of the mixed scenario (--clients)


async def student_protocol(url: str, s: Student, cap: float) -> None:
    """A student as a protocol client (``benchmarks/st_client.py``): the same four pages as
    :func:`student`, without a browser drawing them (a class has a machine per student)."""
    from benchmarks.st_client import Client

    async with Client(url) as c:
        s.first = await c.open("", timeout=cap)
        await c.ran(timeout=cap)
        for title, path in CLASS_PAGES[1:]:
            t1 = time.monotonic()
            await c.open(path, timeout=cap)
            await c.ran(timeout=cap)
            s.pages[title] = time.monotonic() - t1
        s.exception = c.exceptions[0] if c.exceptions else ""


async def analyst_protocol(url: str, s: Session, csv: Path, cap: float) -> None:
    """An analyst as a protocol client, as :func:`drive` in a browser: the app's entry page, MLL chosen in
    the sidebar (or the CSV uploaded on Your data and "Analyse" pressed), then the page (its first figure
    timed from the request, as :func:`drive` times it from the click).  The session stays open
    (``s.notes``) until the run's end, as the browser's tab does."""
    from benchmarks.st_client import Client

    c = Client(url)
    await c.__aenter__()
    s.notes.append(c)
    t0 = time.monotonic()
    await c.open("", timeout=cap)
    await c.ran(timeout=cap)
    s.sidebar = time.monotonic() - t0
    if s.dataset == "mll":
        chosen = await c.choose("Dataset", r"^MLL leukemia", timeout=cap)
    else:
        await c.open(PATHS["Your data"], timeout=cap, figure=False)
        await c.ran(timeout=cap)
        chosen = (await c.upload("Upload a data file", csv.name, csv.read_bytes(), timeout=cap)
                  and await c.click("Analyse this data on every page", timeout=cap))
    if not chosen:
        s.exception = f"protocol client: could not choose the data ({s.dataset}); {c.exceptions[:1]}"
        return
    t1 = time.monotonic()
    first = await c.open(PATHS[s.title], timeout=cap)
    if first is not None:
        s.first, s.total = first, t1 - t0 + first
    s.exception = c.exceptions[0] if c.exceptions else ""


async def _mixed(n_analysts: int, n_students: int, url: str, pid: int, csv: Path, cap: float,
                 job_log: Path, deadline: float, clients: str = "browser") -> dict:
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=_chromium(), headless=True, args=CHROMIUM_ARGS)
        try:
            teacher = Student(-1)  # the teacher's first visit fills the teaching pages' shared caches
            await student(browser, url, teacher, cap)
            await asyncio.sleep(3.0)
            analysts = [Session(i, *SCENARIOS[i % len(SCENARIOS)]) for i in range(n_analysts)]
            students = [Student(i) for i in range(n_students)]
            start_mb = server_mb(pid)
            load0 = os.getloadavg()
            memory = PeakMemory(pid).start()
            cpu0, main0, t0 = server_cpu_s(pid), process_cpu_s(pid), time.monotonic()
            units0 = FirstFigures(pid, job_log, [], cpu0).units()[0]
            firsts = FirstFigures(pid, job_log, analysts, cpu0).start()
            if clients == "protocol":  # no browser: the server's messages only
                runs = [*(analyst_protocol(url, s, csv, cap) for s in analysts),
                        *(student_protocol(url, s, cap) for s in students)]
            else:
                runs = [*(drive(browser, url, s, csv, cap) for s in analysts), *(student(browser, url, s, cap)
                                                                                for s in students)]
            tasks = [asyncio.create_task(c) for c in runs]
            _, late = await asyncio.wait(tasks, timeout=deadline)
            for t in late:  # past the run's deadline: stopped, reported as such (the run ends in time)
                t.cancel()
            results = await asyncio.gather(*tasks, return_exceptions=True)
            wall = time.monotonic() - t0
            await firsts.stop()
            await asyncio.sleep(2.0)
            cpu, main = server_cpu_s(pid) - cpu0, process_cpu_s(pid) - main0
            load1 = os.getloadavg()
            await memory.stop()
            for s, r in zip([*analysts, *students], results):
                if isinstance(r, BaseException):
                    s.exception = s.exception or f"driver: {type(r).__name__}: {str(r)[:200]}"
            for s in analysts:
                for ctx in [c for c in s.notes if hasattr(c, "close")]:
                    await ctx.close()
        finally:
            await browser.close()
    return dict(analysts=analysts, students=students, cpu_s=cpu, main_cpu_s=main, wall_s=wall, start_mb=start_mb,
                peak_mb=memory.peak, load_before=load0, load_after=load1, firsts=firsts.at, units0=units0,
                clients=clients, chromiums=n_analysts + n_students if clients == "browser" else 0)


def run_mixed(n_analysts: int, n_students: int, *, cap: float = 300.0, workdir: Path | None = None,
              deadline: float = MIXED_DEADLINE_S, clients: str = "browser") -> dict:
    """Start a server, let a teacher visit the teaching pages once, then open ``n_analysts`` heavy
    sessions (:data:`SCENARIOS`) and ``n_students`` students (:data:`CLASS_PAGES`) at the same time.
    ``clients``: "browser" (a headless Chromium each) or "protocol" (every session a protocol client,
    :mod:`benchmarks.st_client`: the same pages, clicks and upload, nothing drawn)."""
    if clients not in CLIENTS:
        raise ValueError(f"`clients` must be one of {CLIENTS}; got {clients!r}")
    with _gene_server(workdir, "nspca_mixed_") as (url, pid, csv, job_log):
        return asyncio.run(_mixed(n_analysts, n_students, url, pid, csv, cap, job_log, deadline, clients))


def report_mixed(r: dict, out) -> None:
    na, ns = len(r["analysts"]), len(r["students"])
    out(f"Analysts and a class at once [{r.get('clients', 'browser')} clients: {r.get('chromiums', na + ns)} "
        f"Chromiums]: {na} heavy sessions and {ns} students opened together, after the "
        f"teacher's first visit (work phase {r['wall_s']:.1f} s; load average {r['load_before'][0]:.1f} before, "
        f"{r['load_after'][0]:.1f} after, on {os.cpu_count()} cores: first-figure seconds are wall clock under it)")
    out(f"  {'analyst':<8} {'data':<7} {'page':<26} {'first figure (s)':>17} {'from open (s)':>14} "
        f"{'server CPU before (s)':>22} {'units before':>13}  exception")
    at, u0 = r.get("firsts", {}), r.get("units0", 0)
    for s in r["analysts"]:
        first = f"{s.first:.1f}" if s.first is not None else "none"
        total = f"{s.total:.1f}" if s.total is not None else "-"
        mark = at.get(s.index)
        cpu = f"{mark['cpu']:.1f}" if mark else "-"
        units = f"{mark['units'] - u0} ({mark['first_units']} first)" if mark else "-"
        out(f"  {s.index:<8} {s.dataset:<7} {s.title:<26} {first:>17} {total:>14} {cpu:>22} {units:>13}  "
            f"{s.exception or '-'}")
    firsts = sorted(s.first for s in r["analysts"] if s.first is not None)
    worst = firsts[-1] if len(firsts) == na else float("inf")
    med = firsts[len(firsts) // 2] if firsts else float("nan")
    out(f"  analysts' first figure: median {med:.1f} s, worst {worst:.1f} s (target {FIRST_CONTENT_BUDGET_S:.0f} s "
        f"on a quiet machine: {_ok(worst <= FIRST_CONTENT_BUDGET_S)} at this load: "
        f"{r['load_before'][0]:.1f} before, {r['load_after'][0]:.1f} after)")
    if at:
        last = max(at.values(), key=lambda m: m["cpu"])
        cores = os.cpu_count() or 1
        out(f"  load-independent: server CPU spent before the last analyst's first figure {last['cpu']:.1f} s "
            f"(server and workers, students' runs included; on {cores} idle cores at least "
            f"{last['cpu'] / cores:.1f} s of wall clock), {last['units'] - u0} units of work finished before it")
    sf = sorted(s.first for s in r["students"] if s.first is not None)
    sworst = sf[-1] if len(sf) == ns else float("inf")
    out(f"  students' tour first figure: median {sf[len(sf) // 2] if sf else float('nan'):.1f} s, worst {sworst:.1f} s;"
        f" exception boxes: analysts {sum(bool(s.exception) for s in r['analysts'])}, students "
        f"{sum(bool(s.exception) for s in r['students'])}")
    out(f"  server CPU: {r['cpu_s']:.1f} s in all ({r['main_cpu_s']:.1f} s the server process — every page run of "
        f"students and analysts —, {r['cpu_s'] - r['main_cpu_s']:.1f} s its worker processes); server process per "
        f"student, analysts' page runs included: {r['main_cpu_s'] / max(ns, 1):.3f} s")
    out(f"  memory of the server and its workers: start {r['start_mb']:.0f} MB, peak {r['peak_mb']:.0f} MB")


def summarize_raw(path: Path, top: int = 14) -> str:
    """The hottest app/Streamlit frames of a py-spy ``--format raw`` record (collapsed stacks)."""
    from collections import Counter

    own: Counter = Counter()
    incl: Counter = Counter()
    total = 0
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        c = int(count)
        total += c
        frames = stack.split(";")
        seen = set()
        for f in frames:
            key = re.sub(r":\d+\)$", ")", f.strip())
            if key not in seen:
                incl[key] += c
                seen.add(key)
        own[frames[-1].strip()] += c
    lines = [f"{total} samples; inclusive share of the busiest frames:"]
    for f, c in incl.most_common(200):
        if "(ui/" in f or "(pages/" in f or "plotly/" in f or "streamlit/runtime/scriptrunner" in f \
                or "json" in f or "arrow" in f.lower() or "pandas" in f:
            lines.append(f"    {c / total:6.1%}  {f[:140]}")
            if len(lines) > top:
                break
    return "\n".join(lines)


def big_csv(path: Path, megabytes: float, n: int = 2000, seed: int = 0) -> Path:
    """A samples x genes CSV of about ``megabytes`` MB (values written with 6 decimals)."""
    import numpy as np

    rows = max(4, int(megabytes * 1e6 / (n * 10)))
    rng = np.random.default_rng(seed)
    with open(path, "w") as f:
        f.write(",".join(f"g{j}" for j in range(n)) + "\n")
        for start in range(0, rows, 500):
            block = rng.lognormal(1.0, 0.5, size=(min(500, rows - start), n))
            np.savetxt(f, block, delimiter=",", fmt="%.6f")
    return path


async def _upload_memory(url: str, pid: int, csv: Path, cap: float) -> dict:
    """One session uploads ``csv`` and analyses it on "Variance vs k"; the tab is closed; memory."""
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=_chromium(), headless=True, args=CHROMIUM_ARGS)
        ctx = await browser.new_context(viewport={"width": 1400, "height": 1000})
        ctx.set_default_timeout(cap * 1000)
        page = await ctx.new_page()
        await page.goto(url + "/", wait_until="domcontentloaded")
        await page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').first.wait_for()
        await _idle(page, cap)
        await asyncio.sleep(3.0)
        start = server_mb(pid)
        memory = PeakMemory(pid).start()
        await page.get_by_role("link", name="Your data").first.click()
        await page.wait_for_url(f"**/{PATHS['Your data']}")
        t0 = time.monotonic()
        await page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(str(csv))
        button = page.get_by_role("button", name="Analyse this data on every page")
        await button.wait_for()
        read_s = time.monotonic() - t0
        await _idle(page, cap)
        upload_peak = memory.peak
        await button.click()
        await _idle(page, cap)
        await page.get_by_role("link", name="Variance vs k, certified").first.click()
        await _wait(lambda: _drawn_positive(page), cap)
        exception = await _exception(page)
        used = server_mb(pid)
        await ctx.close()
        closed = time.monotonic()
        back = None
        while time.monotonic() - closed < 120:
            if server_mb(pid) <= start + MEMORY_BACK_MB:
                back = time.monotonic() - closed
                break
            await asyncio.sleep(1.0)
        await memory.stop()
        await browser.close()
    by_process = {}
    for p in _tree(pid):
        try:
            name = Path(f"/proc/{p}/cmdline").read_bytes().replace(b"\0", b" ").decode()[-60:]
        except OSError:
            name = "?"
        by_process[f"{p} {name}"] = _status_mb(p, "VmRSS")
    return {"file_mb": csv.stat().st_size / 1e6, "start_mb": start, "upload_peak_mb": upload_peak,
            "peak_mb": memory.peak, "in_use_mb": used, "end_mb": server_mb(pid), "back_s": back, "read_s": read_s,
            "exception": exception, "by_process": by_process}


async def _drawn_positive(page) -> bool:
    return await _drawn(page) > 0


def run_upload(megabytes: float, *, cap: float = 600.0, workdir: Path | None = None) -> dict:
    """Start a server, upload a CSV of about ``megabytes`` MB in one session, close it; memory."""
    workdir = Path(workdir or tempfile.mkdtemp(prefix="nspca_upload_"))
    csv = big_csv(workdir / "big.csv", megabytes)
    proc, url = _start_server(workdir / "streamlit.log", NSPCA_JOB_LOG=str(workdir / "jobs.log"))
    try:
        return asyncio.run(_upload_memory(url, proc.pid, csv, cap))
    finally:
        _stop_server(proc)


def report_upload(r: dict, out) -> None:
    f = r["file_mb"]
    out(f"Upload of a {f:.0f} MB CSV (one session; memory of the server and its workers):")
    out(f"  start {r['start_mb']:.0f} MB; file read and previewed after {r['read_s']:.1f} s; peak while "
        f"reading {r['upload_peak_mb']:.0f} MB (+{r['upload_peak_mb'] - r['start_mb']:.0f} MB = "
        f"{(r['upload_peak_mb'] - r['start_mb']) / f:.2f}x the file; budget 4x: "
        f"{_ok(r['upload_peak_mb'] - r['start_mb'] <= 4 * f)})")
    out(f"  peak with Variance vs k {r['peak_mb']:.0f} MB (+{(r['peak_mb'] - r['start_mb']) / f:.2f}x the file), "
        f"in use before closing {r['in_use_mb']:.0f} MB; exception: {r['exception'] or '-'}")
    back = r["back_s"]
    out(f"  tab closed: back within {MEMORY_BACK_MB} MB of the start after "
        f"{'%.1f s' % back if back is not None else '> 120 s'} ({_ok(back is not None)}); end {r['end_mb']:.0f} MB")
    out("  at the end, per process: " + "; ".join(f"{k}: {v:.0f} MB" for k, v in r["by_process"].items()))


def summarize_stacks(text: str) -> str:
    """Where the server's busy threads were in the py-spy dumps: share of active samples by kind."""
    from collections import Counter

    kinds: Counter = Counter()
    leaves: Counter = Counter()
    for block in re.split(r"\n(?=Thread )", text):
        lines = block.splitlines()
        if not lines or "(active" not in lines[0]:
            continue
        if "ScriptRunner" in block:
            kind = "script: live fragment redraw" if "ui/live.py" in block else "script: page run"
            ours = next((ln.strip() for ln in lines[1:] if re.search(r"\((ui|pages)/|\(\w+\.py:", ln)
                         and "streamlit/" not in ln), "")
            leaves[ours[:90]] += 1
        elif "MainThread" in lines[0]:
            kind = "server event loop"
        elif "nspca-job" in lines[0]:
            kind = "job threads (waiting on workers)"
        else:
            kind = "other server threads"
        kinds[kind] += 1
    total = sum(kinds.values()) or 1
    out = ", ".join(f"{k} {v / total:.0%}" for k, v in kinds.most_common())
    top = "; ".join(f"{k} ({v})" for k, v in leaves.most_common(6))
    return f"{total} busy samples: {out}\n    innermost app frames of the busy script threads: {top}"


def _ok(good: bool) -> str:
    return "ok" if good else "OVER"


def report(n: int, r: dict, out) -> None:
    out(f"N = {n} sessions at once (work phase {r['work_s']:.1f} s):")
    out(f"  {'session':<8} {'data':<7} {'page':<26} {'sidebar (s)':>11} {'first content (s)':>18} "
        f"{'from open (s)':>14}  exception")
    for s in r["sessions"]:
        first = f"{s.first:.1f}" if s.first is not None else "none"
        total = f"{s.total:.1f}" if s.total is not None else "-"
        side = f"{s.sidebar:.1f}" if s.sidebar is not None else "none"
        out(f"  {s.index:<8} {s.dataset:<7} {s.title:<26} {side:>11} {first:>18} {total:>14}  {s.exception or '-'}")
    firsts = [s.first for s in r["sessions"] if s.first is not None]
    worst = max(firsts) if len(firsts) == len(r["sessions"]) else float("inf")
    out(f"  first content: worst {worst:.1f} s (budget {FIRST_CONTENT_BUDGET_S:.0f} s at N = 8: "
        f"{_ok(worst <= FIRST_CONTENT_BUDGET_S)}); exception boxes: "
        f"{sum(bool(s.exception) for s in r['sessions'])}")
    out(f"  server memory: cold {r['cold_mb']:.0f} MB, start (after a warm-up visit) {r['start_mb']:.0f} MB, "
        f"peak {r['peak_mb']:.0f} MB (budget "
        f"{MEMORY_BUDGET_MB} MB: {_ok(r['peak_mb'] <= MEMORY_BUDGET_MB)}), end {r['end_mb']:.0f} MB")
    canc = r["cancelled_s"]
    out(f"  tabs closed with {r['active_at_close']} job(s) active: no job active after "
        f"{'%.1f s' % canc if canc is not None else '> %.0f s' % r['cancel_cap']} (budget {CANCEL_BUDGET_S:.0f} s: "
        f"{_ok(canc is not None and canc <= CANCEL_BUDGET_S)})")
    back, waited = r["back_s"], r["cancel_cap"] + 60
    out(f"  memory back within {MEMORY_BACK_MB} MB of the start after "
        f"{'%.1f s' % back if back is not None else '> %.0f s' % waited} ({_ok(back is not None)}); at the end, per "
        f"process: " + ", ".join(f"{pid}: {mb:.0f} MB" for pid, mb in r["by_process"].items()))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", default="1,4,8",
                    help="comma-separated session counts (default 1,4,8); 'none' with --upload-mb runs "
                         "the upload case alone and appends it to the results")
    ap.add_argument("--cap", type=float, default=120.0, help="seconds a session may take per step")
    ap.add_argument("--upload-mb", type=float, default=0.0,
                    help="also upload a CSV of about this many MB in one session (issue 26 item 8: 184)")
    ap.add_argument("--class", dest="klass", default="",
                    help="the class scenario (issue 41): comma-separated student counts, e.g. 12,30; "
                         "with --sessions none it runs alone (results in bench_load_class.txt)")
    ap.add_argument("--analysts", type=int, default=0,
                    help="with --class N (one count): N students and this many heavy sessions at once (issue 41 "
                         "item 2; results in bench_load_mixed.txt)")
    ap.add_argument("--clients", default="browser,protocol",
                    help="with --analysts: who opens the pages, one run each — 'browser' (a headless Chromium per "
                         "session) and/or 'protocol' (every session a Streamlit protocol client, "
                         "benchmarks/st_client.py: the server's own cost without 20 browsers on its cores)")
    ap.add_argument("--port", type=int, default=0,
                    help="the server's port (default: any free one; on a shared machine, your own)")
    ap.add_argument("--profile", action="store_true",
                    help="py-spy dump the server every 5 s (results/bench_load_pyspy_N<n>.txt)")
    args = ap.parse_args()
    if args.port:
        use_port(args.port)
    if _chromium() is None:
        print("no Chromium found; install Debian's chromium (make browser)")
        return 1
    lines: list[str] = []

    def out(text=""):
        print(text, flush=True)
        lines.append(text)

    out(f"bench_load: N browser sessions at once; {os.cpu_count()} cores; MLL from {os.environ['NSPCA_DATA_DIR']}")
    counts = [] if args.sessions == "none" else [int(v) for v in args.sessions.split(",")]
    for n in counts:
        prof = RESULTS.with_name(f"bench_load_pyspy_N{n}.txt") if args.profile else None
        report(n, run_load(n, cap=args.cap, out=out, profile_to=prof), out)
        if prof is not None and prof.exists():
            out("  py-spy (server, every 5 s): " + summarize_stacks(prof.read_text()))
        out()
    if args.upload_mb > 0:
        report_upload(run_upload(args.upload_mb), out)
    if args.analysts:
        n_students = int(args.klass or 12)
        for clients in args.clients.split(","):
            out(f"load average at the start: {os.getloadavg()[0]:.2f} (1 min) on {os.cpu_count()} cores")
            report_mixed(run_mixed(args.analysts, n_students, cap=args.cap * 2.5, clients=clients.strip()), out)
            out()
        RESULTS.with_name("bench_load_mixed.txt").write_text("\n".join(lines) + "\n")
        return 0
    if args.klass:
        ncls = [int(v) for v in args.klass.split(",")]
        prof = RESULTS.with_name("bench_load_class_pyspy") if args.profile else None
        out(f"load average at the start: {os.getloadavg()[0]:.2f} (1 min) on {os.cpu_count()} cores — the "
            "machine is shared and busy; compare rows within this run")
        report_class(run_class(ncls, cap=args.cap * 2.5), out)
        if prof is not None:  # a run of its own: py-spy stops the server at every sample, which costs it CPU
            run_class([3], cap=args.cap * 2.5, profile_to=prof)
            raw = prof.with_suffix(".N3.txt")
            if raw.exists():
                out("  py-spy record (--gil) of the server in a separate run of N = 3 (its CPU is not the "
                    "table's): " + summarize_raw(raw))
        RESULTS.with_name("bench_load_class.txt").write_text("\n".join(lines) + "\n")
        if not counts:
            return 0
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    if counts:
        RESULTS.write_text("\n".join(lines) + "\n")
    else:  # the upload run alone: added below the last sessions run
        with RESULTS.open("a") as f:
            f.write("\n" + "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
