"""The Topics page's background work: the job finding topics (:func:`topics_job`, its unit in
:mod:`ui.topics_units`), its result (:func:`job_run`) and its progress line with an estimate and
Stop (:func:`progress`).  Apart from :mod:`ui.topics` so that the job machinery (:mod:`ui.live`)
is imported by the page only (no import circle through :mod:`ui.uploads`)."""

from __future__ import annotations

import time

import streamlit as st

from ui import jobs, live
from ui.topics import (BIPARTITE_D, BIPARTITE_SAMPLES, Corpus, topics_params, unit_options, run_from,
                       topics_key, words_used)

__all__ = ["topics_job", "job_run", "estimate", "progress", "STARTED", "JOB_KEY"]


#: when each topics job's unit started computing (key -> time.monotonic()), for the estimate
STARTED: dict = {}
#: session-state key of the topics job this session shows (an earlier one is stopped)
JOB_KEY = "tp_job_key"


def topics_job(token: str, method: str, r: int, k: int, weighting: str, center: bool, seed: int,
               stop_words: bool, max_df: float, numbers: bool, *, corpus: Corpus):
    """The background job computing these topics (one unit, in a worker process, so that Stop is
    immediate); the session's previous topics job, if still computing, is stopped.  A failed or
    stopped job is returned as it is (not started again on every rerun)."""
    params = topics_params(method, r, k, weighting, center, seed, stop_words, max_df, numbers)
    key = topics_key(token, method, params)
    old = st.session_state.get(JOB_KEY)
    if old is not None and old != key:
        prev = jobs.REGISTRY.get(old)
        if prev is not None and prev.view(touch=False).active:
            jobs.REGISTRY.stop(old)
    st.session_state[JOB_KEY] = key
    job = jobs.REGISTRY.get(key)
    if job is not None and job.view(touch=False).status in ("failed", "stopped"):
        return job
    X, _, _, _ = words_used(token, bool(stop_words), float(max_df), bool(numbers), _corpus=corpus)
    data_id = ("topics", token, bool(stop_words), float(max_df), bool(numbers))
    options = unit_options(method, params)

    def work(unit, ctx):
        STARTED[key] = time.monotonic()
        return ctx.run("ui.topics_units.topics_unit", X, data_id, **options)

    return live.submit(key, f"topics ({r} of {k} words)", ["topics"], work)


def job_run(job, token: str, stop_words: bool, max_df: float, numbers: bool, *, corpus: Corpus):
    """The :class:`TopicsRun` of a finished :func:`topics_job`, or None."""
    view = job.view()
    if "topics" not in view.results:
        return None
    _, words, kept, prune_notes = words_used(token, bool(stop_words), float(max_df), bool(numbers),
                                             _corpus=corpus)
    method, params = job.key[2], dict(zip(("r", "k", "weighting", "center", "seed", "stop_words",
                                           "max_df", "numbers"), job.key[3:]))
    params.update(d=BIPARTITE_D, samples=BIPARTITE_SAMPLES)
    return run_from(view.results["topics"], method, params, words, kept, prune_notes)


def estimate(fraction: float, seconds: float) -> str:
    """The time left, from the share done and the seconds spent: ``"estimating…"`` before 2%
    of the work, then ``"at most about N s left"`` (the net search stops early once no sampled
    point can beat the best, so the share counts the work that may remain, an upper bound)."""
    if fraction < 0.02 or seconds <= 0:
        return "estimating the time left…"
    left = seconds * (1.0 - fraction) / fraction
    return f"at most about {left:,.0f} s left" if left < 120 else f"at most about {left / 60:,.0f} min left"


def progress(job, what: str) -> bool:
    """Progress of a topics job with an estimate and Stop (Continue once stopped, the message when
    it failed); returns whether it is still computing."""
    view = job.view()
    done, total = view.step
    fraction = float(done) / float(total) if total else 0.0
    started = STARTED.get(job.key)
    seconds = time.monotonic() - started if started is not None and view.status == "running" else 0.0
    c1, c2 = st.columns([5, 1], vertical_alignment="center")
    if view.active:
        waiting = view.status == "queued"
        c1.progress(min(fraction, 1.0), text=f"{what}: {fraction:.0%} ({seconds:,.0f} s; "
                    + ("waiting for another computation to finish" if waiting else estimate(fraction, seconds))
                    + "). Other pages can be used meanwhile.")
        c2.button("Stop", key="tp_halt", on_click=live.stop_job, args=(job.key,),
                  help="Stop finding these topics now (the computation's process ends).")
        return True
    if view.status == "failed":
        c1.error(f"{what} failed: {view.message}")
    elif view.status in ("stopped", "cancelled"):
        c1.info(f"{what}: {view.status}. Press Continue to compute them (or change a setting).")
        c2.button("Continue", key="tp_continue", on_click=live.resume_job, args=(job.key,),
                  help="Find these topics again from the start.")
    return False
