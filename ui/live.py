"""Pages drawing background jobs (:mod:`ui.jobs`): keys, status lines, Stop, refresh.

A page submits its long work as jobs (``submit``), then draws what is done
so far inside :func:`live` — a fragment that redraws itself every second
while a job it shows is active and reruns the whole page once when they have
all finished.  :func:`heartbeat` (drawn by ``app.py`` in the sidebar on every
page) lists the session's background work with a Stop button and keeps it
alive while the tab is open; when the tab is closed nothing reads the jobs
and the registry cancels them after :data:`ui.jobs.IDLE_SECONDS`.
"""

from __future__ import annotations

import pickle
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass

import streamlit as st

from ui import jobs, keys, streamlit_runtime
from ui.compute import guard
from ui.figures.ship import Shipped, ship
from ui.keys import digest

SESSION_JOBS = "nspca_session_jobs"  # keys of the jobs this session started
REFRESH_S = 1.0
# Under many sessions the redraws themselves (figures rebuilt every REFRESH_S in every tab) took
# about a quarter of the server's busy samples (py-spy, 8 sessions: 23 %, against 11 % with 4;
# benchmarks/results/bench_load_pyspy_N8.txt): the period grows with the sessions showing
# background work, one period per two of them, at most:
REFRESH_MAX_S = 4.0


def refresh_seconds(*, first: bool = False) -> float:
    """The redraw period of :func:`live`: :data:`REFRESH_S` for one or two sessions watching
    background work, then ``REFRESH_S · sessions / 2`` up to :data:`REFRESH_MAX_S`.

    First figures first: while another page's first figure waits for a turn in the job pool
    (:meth:`ui.jobs.Registry.first_waiting`), a page that has drawn its own redraws every
    :data:`REFRESH_MAX_S`; a page still waiting for its first figure (``first``) every :data:`REFRESH_S`."""
    if first:
        return REFRESH_S
    if jobs.REGISTRY.first_waiting():
        return REFRESH_MAX_S
    watching = {sid for job in jobs.REGISTRY.active() for sid in job.readers}
    return min(REFRESH_MAX_S, REFRESH_S * max(1.0, len(watching) / 2))


session_id = streamlit_runtime.session_id  # the browser session running this script (None outside a run)
session_alive = streamlit_runtime.session_alive  # a closed tab's session is not (all are, outside a server)


jobs.REGISTRY.session_alive = session_alive  # jobs of closed tabs are cancelled at the next reap


def submit(key: Hashable, title: str, units: Iterable[Hashable], work: Callable, *,
           heavy: bool = False, background: bool = False, first_figure: bool = True) -> jobs.Job:
    """``jobs.REGISTRY.submit`` and remember the key for this session's heartbeat; the job
    records this session as a reader, so it is cancelled once every reader's tab is closed
    (work shared by several sessions runs on while one of them is open)."""
    job = jobs.REGISTRY.submit(key, title, units, work, heavy=heavy, background=background,
                               first_figure=first_figure)
    sid = session_id()
    if sid is not None:
        job.readers.add(sid)
    keys = st.session_state.setdefault(SESSION_JOBS, [])
    if key not in keys:
        keys.append(key)
        del keys[:-jobs.MAX_JOBS]
    return job


_DATA_KEYS: dict = {}  # id(X) -> (weak reference to X, (name, preprocessing), its key)
_DATA_KEYS_LOCK = threading.Lock()


def data_key(ds) -> str:
    """:func:`ui.keys.data_key` of a dataset (the pages key their jobs with it), remembered per data matrix
    while that matrix lives: its digest reads all of X (15 ms of every run and redraw on MLL), and a
    dataset's matrix is loaded once and only read (the cached datasets, an upload)."""
    X = ds.X
    tag = (ds.name, tuple(ds.preprocessing))
    with _DATA_KEYS_LOCK:
        hit = _DATA_KEYS.get(id(X))
    if hit is not None and hit[0]() is X and hit[1] == tag:
        return hit[2]
    key = keys.data_key(ds)
    try:
        ref = weakref.ref(X)
    except TypeError:  # not weakly referable: digested every time
        return key
    with _DATA_KEYS_LOCK:
        for gone in [i for i, entry in _DATA_KEYS.items() if entry[0]() is None]:
            del _DATA_KEYS[gone]
        _DATA_KEYS[id(X)] = (ref, tag, key)
    return key


# ------------------------------------------------------------------ figures built once per server
FIGURES_KEPT = 256  # finished figures kept (each the dict of a small figure: curves, bars, 80-row heatmaps)
_FIGURES: OrderedDict = OrderedDict()
_FIGURES_LOCK = threading.Lock()


def figure(name: str, inputs: tuple, build: Callable[[], object]) -> Shipped:
    """``build()`` frozen for sending (:func:`ui.figures.ship.ship`), built once per server for the same
    ``inputs``: a page redrawn every second while its work goes on, and every session showing the same
    results, send the figure made once instead of building it again (a Plotly figure with its layout
    costs tens of ms to build: a redraw of Compare on MLL took 0.11 CPU s, 0.03 with its figures kept,
    ``benchmarks/bench_first_figure.py``).

    ``name`` says which figure (and how ``build`` composes it); ``inputs`` must be everything ``build``
    reads (frames, arrays, numbers, strings): they are the key, by a digest of their pickle (which holds
    every value: two different inputs never share a key; equal ones laid out differently in memory may
    not, and then the figure is only built once more)."""
    key = (name, digest(pickle.dumps(tuple(inputs), protocol=pickle.HIGHEST_PROTOCOL)))
    with _FIGURES_LOCK:
        hit = _FIGURES.get(key)
        if hit is not None:
            _FIGURES.move_to_end(key)
            return hit
    shipped = ship(build())
    with _FIGURES_LOCK:
        _FIGURES[key] = shipped
        while len(_FIGURES) > FIGURES_KEPT:
            _FIGURES.popitem(last=False)
    return shipped


def any_active(views: Sequence[jobs.JobView]) -> bool:
    return any(v.active for v in views)


@dataclass(frozen=True)
class Group:
    """The key of a merged view (:func:`merge`): Stop / Continue act on every job in it."""

    keys: tuple


def merge(views: Sequence[jobs.JobView], *, title: str = "") -> jobs.JobView:
    """One view of several jobs run side by side (one status line, one Stop for all).

    Units and results are keyed ``(job key, unit)``; the status is the most
    pressing one (running, queued, failed, stopped, cancelled, done); the
    step is that of a running job; the seconds are the longest job's.
    """
    results, units = {}, []
    for v in views:
        units.extend((v.key, u) for u in v.units)
        results.update({(v.key, u): r for u, r in v.results.items()})
    statuses = {v.status for v in views}
    status = next((st_ for st_ in ("running", "queued", "failed", "stopped", "cancelled") if st_ in statuses),
                  "done")
    step = next((v.step for v in views if v.status == "running"), (0, 0))
    message = "; ".join(dict.fromkeys(f"{v.title}: {v.message}" for v in views if v.message))
    return jobs.JobView(key=Group(tuple(v.key for v in views)), title=title, status=status, results=results,
                        units=tuple(units), step=step, message=message,
                        seconds=max((v.seconds for v in views), default=0.0))


def _keys(key) -> tuple:
    return key.keys if isinstance(key, Group) else (key,)


def _stop(key) -> None:
    for k in _keys(key):
        jobs.REGISTRY.stop(k)


def _resume(key) -> None:
    for k in _keys(key):
        jobs.REGISTRY.resume(k)


def stop_job(key) -> None:
    """Stop the job ``key`` (or every job of a :class:`Group`): a button's ``on_click``."""
    _stop(key)


def resume_job(key) -> None:
    """Continue the stopped job ``key`` (or every job of a :class:`Group`): a button's ``on_click``."""
    _resume(key)


def live(draw: Callable[[], bool], *, active: bool, period: float | None = None, first: bool = False) -> None:
    """Run ``draw()`` in a fragment that redraws every second (more under many sessions:
    :func:`refresh_seconds`) while work is under way.

    ``active`` says whether a job ``draw`` shows is queued or running now;
    ``draw`` returns the same after drawing.  Once the work has ended the page
    reruns once, so the final page has no timer.  ``period``: the least redraw
    period in seconds (a page showing only slow background work asks for more).
    ``first``: the page has no figure yet (it keeps the short period while others wait).
    """

    def body():
        out = {}
        guard(lambda: out.__setitem__("active", draw()))  # a fragment rerun has no outer guard
        if active and not out.get("active", False):
            st.rerun()

    every = (refresh_seconds(first=first) if first else max(refresh_seconds(), period or 0.0)) if active else None
    st.fragment(run_every=every)(body)()


def restart_if_resumed(now: bool, page_active: bool) -> bool:
    """``now`` (whether work is under way after a redraw); when work is under way that was not when the
    page ran — a Continue pressed inside the redrawn part resumed a job — the whole page runs again, so
    that it redraws itself while the work goes on: the redrawn part of a page with no work under way
    has no timer, and it showed the resumed work with a Stop that was never redrawn (a Stop then
    seemed to need a second click: the first stopped the work, and nothing showed it)."""
    if now and not page_active:
        st.rerun()
    return now


def status_line(view: jobs.JobView, *, what: str, unit_name: str = "values", key: str,
                units: Sequence | None = None) -> None:
    """One line of progress for a job, with Stop (while active) or Continue (when stopped).

    ``units`` (default: all of the job's) are the ones the page shows; they are counted.
    ``unit_name`` is their plural ("values of k", "algorithms").
    """
    units = view.units if units is None else tuple(units)
    n_done, n_all = sum(u in view.results for u in units), len(units)
    if view.status == "done" or (n_done == n_all and not view.active):
        return
    c1, c2 = st.columns([5, 1], vertical_alignment="center")
    if view.active:
        label = (f"{what}: {n_done} of {n_all} {unit_name} done"
                 + (" — waiting for another computation to finish" if view.status == "queued" else "")
                 + f" ({view.seconds:.0f} s). Results appear as they are computed; other pages "
                   "can be used meanwhile.")
        c1.progress(view.fraction, text=label)
        c2.button("Stop", key=f"{key}_stop", help="Stop after the current step; keep what is done.",
                  on_click=_stop, args=(view.key,))
    else:
        why = {"stopped": "stopped", "cancelled": "cancelled", "failed": "failed"}[view.status]
        msg = f" ({view.message})" if view.message else ""
        c1.info(f"{what}: {why} after {n_done} of {n_all} {unit_name}{msg}. What is done is shown.")
        c2.button("Continue", key=f"{key}_resume", on_click=_resume, args=(view.key,),
                  help="Compute the missing ones (what is done is kept).")


def heartbeat() -> None:
    """Sidebar list of this session's background work; keeps it alive while the tab is open."""
    keys = list(st.session_state.get(SESSION_JOBS, []))
    mine = [j for j in (jobs.REGISTRY.get(k) for k in keys) if j is not None]
    if not any(j.status in ("queued", "running") for j in mine):
        return

    @st.fragment(run_every=5.0)
    def beat():
        views = [j.view() for j in mine]
        running = [v for v in views if v.active]
        if not running:
            return
        with st.expander(f"Background work ({len(running)})", expanded=False):
            for v in running:
                st.caption(f"{v.title}: {len(v.results)}/{len(v.units)}")

    with st.sidebar:
        beat()
