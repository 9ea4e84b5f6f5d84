"""Variance vs k: the band refines itself in the background, with Stop, and a later visit draws it from
the store of proved bounds (issue 28, item 4).  AppTest on the embedded default dataset (digits)."""

from __future__ import annotations

import re
import time

import numpy as np

from tests.conftest import page_app
from ui import bounds_store, jobs, state

SETTINGS = {state.DATASET: "digits", state.K: 10, "vk_methods": ["auto"], "vk_points": 8}
STATUS = re.compile(r"(\d+) of (\d+) k improved, worst ratio ([0-9.]+) → ([0-9.]+)")


def _fresh():
    """No jobs and an empty store: what a first visit to a new server sees."""
    jobs.REGISTRY.clear()
    bounds_store.shared.clear()


def _texts(at) -> list[str]:
    out = [e.value for e in [*at.caption, *at.info, *at.success, *at.markdown]]
    out += [getattr(e.proto, "text", "") for e in at.get("progress")]
    return out


def _status(at) -> tuple[int, int, float, float] | None:
    for t in _texts(at):
        if m := STATUS.search(t):
            return int(m[1]), int(m[2]), float(m[3]), float(m[4])
    return None


def _tighten_job():
    return next((j for j in jobs.REGISTRY.jobs() if j.key[0] == "tighten"), None)


def _band_first_pass(at):
    at.run()
    assert jobs.REGISTRY.wait(300)  # the curves and the band's first pass (not the tightening)
    return at.run()


def test_band_tightens_then_stop_works_and_a_new_visit_reuses_the_bounds():
    _fresh()
    try:
        at = _band_first_pass(page_app("variance_vs_k.py", timeout=300, **SETTINGS))
        assert not at.exception and not at.error
        job = _tighten_job()
        assert job is not None and job.background, "the tightening starts once the band is drawn"
        first = _status(at)
        assert first is not None and first[1] == 8, _texts(at)
        assert first[0] == 0 or job.view().results  # nothing improved before a step ran
        # it improves: wait for the whole tightening (8 k of digits: seconds), then read the page
        assert job.wait(timeout=300)  # (waiting reads the job: nobody else does while AppTest sleeps)
        at = at.run()
        assert not at.exception and not at.error
        done = _status(at)
        assert done is not None and done[0] >= 1 and done[3] > done[2], (first, done)
        assert any("Band tightened in the background" in t for t in _texts(at))
        table = at.dataframe[0].value
        assert table["provably_optimal"].any()  # exact proofs at small k: the mark in the table
        ratios = table["certified_ratio"].to_numpy()
        assert np.nanmin(ratios) == done[3] or abs(np.nanmin(ratios) - done[3]) < 1e-3

        # a new visit (new session, jobs gone): the band comes from the store at once, no certificate runs
        jobs.REGISTRY.clear()
        again = page_app("variance_vs_k.py", timeout=300, **SETTINGS)
        again.run()
        assert jobs.REGISTRY.wait(300)
        again.run()
        cert = next(j for j in jobs.REGISTRY.jobs() if j.key[0] == "certify")
        values = [v for v in cert.view().results.values() if v is not None]
        assert values and all(v.get("stored") for v in values), "every unit came from the store"
        table2 = again.dataframe[0].value
        np.testing.assert_allclose(table2["upper_bound"], table["upper_bound"])
        assert table2["provably_optimal"].sum() == table["provably_optimal"].sum()
        tj = _tighten_job()
        assert tj.wait(timeout=60)
        assert all(r["skipped"] for r in tj.view().results.values())  # nothing left to tighten
    finally:
        jobs.REGISTRY.stop_background()


def test_stop_keeps_what_is_proved_and_continue_goes_on():
    _fresh()
    try:
        # 40 values of k of 64 features: 80 steps ("full", then exact at every k), tens of seconds
        at = _band_first_pass(page_app("variance_vs_k.py", timeout=300, **{**SETTINGS, "vk_points": 40}))
        job = _tighten_job()
        assert job is not None
        deadline = time.monotonic() + 120
        while not job.view().results and time.monotonic() < deadline:  # at least one step done
            time.sleep(0.05)
        at.run()
        assert job.view().active and len(job.view().results) < len(job.view().units)
        at.button(key="vk_tighten_stop").click()
        at = at.run()
        assert not at.exception
        job.join(10)  # the step under way ends at once (its process is killed)
        assert job.view().status == "stopped"
        at = at.run()
        kept = len(job.view().results)
        assert any("Tightening the band stopped" in t for t in _texts(at)), _texts(at)
        time.sleep(1.0)
        assert len(job.view().results) == kept  # nothing more after Stop
        at.button(key="vk_tighten_resume").click()
        at = at.run()
        assert job.wait(timeout=300)
        job.join(10)
        assert job.view().status == "done" and len(job.view().results) == len(job.view().units)
    finally:
        jobs.REGISTRY.stop_background()
