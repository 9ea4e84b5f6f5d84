"""Work and memory tied to browser sessions (issue 31 item 12, issue 26 item 8): a job whose every
reader session has ended is cancelled at the next reap, shared work runs on while one reader is
left, the idle heavy worker process ends, and an upload's arrays are dropped once every session
using it has ended."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from ui import jobs


@pytest.fixture
def registry():
    reg = jobs.Registry(max_jobs=8, idle_seconds=3600, heavy_slots=1, processes=False)
    alive: set = set()
    reg.session_alive = lambda sid: sid in alive
    reg.alive = alive
    yield reg
    reg.clear()


def blocking(gate: threading.Event):
    def work(unit, ctx):
        while not gate.is_set():
            ctx(0, 1)
            time.sleep(0.005)
        return unit
    return work


def test_job_of_closed_tabs_is_cancelled_at_the_next_reap(registry):
    gate = threading.Event()
    job = registry.submit("a", "A", [1, 2], blocking(gate))
    job.readers.update({"s1", "s2"})
    registry.alive.update({"s1", "s2"})
    assert registry.reap() == [] and job.status in ("queued", "running")
    registry.alive.discard("s1")  # one tab closed: the other still shows the shared work
    assert registry.reap() == [] and job.status in ("queued", "running")
    registry.alive.discard("s2")
    assert registry.reap() == [job]
    job.join(5)
    v = job.view()
    assert v.status == "cancelled" and v.message == "cancelled: every browser tab showing it was closed"
    # a later visit (a new session) resumes the work
    registry.alive.add("s3")
    again = registry.submit("a", "A", [1, 2], blocking(gate))
    again.readers.add("s3")
    gate.set()
    assert again is job and job.wait(timeout=10) and job.view().status == "done"


def test_job_without_readers_waits_for_the_idle_timeout(registry):
    """Jobs started outside a browser session (tests, scripts) are not cancelled by the session rule."""
    gate = threading.Event()
    job = registry.submit("b", "B", [1], blocking(gate))
    assert registry.reap() == [] and job.status in ("queued", "running")
    gate.set()
    assert job.wait(timeout=10)


def test_reap_runs_its_hooks_and_survives_a_failing_one(registry):
    calls = []
    registry.on_reap.extend([lambda: 1 / 0, lambda: calls.append(1)])
    registry.reap()
    assert calls == [1]


def test_idle_heavy_worker_process_ends():
    """The heavy worker keeps copies of the data between units; it ends once no heavy job has been
    active for WORKER_IDLE_S (a new one is forked for the next unit)."""
    reg = jobs.Registry(max_jobs=4, idle_seconds=3600)
    try:
        job = reg.submit("h", "H", [1], lambda unit, ctx: ctx.run("tests.jobs_units.sleep_unit", 0.01, "d"),
                         heavy=True)
        assert job.wait(timeout=120) and job.view().status == "done"
        heavy = reg._workers["heavy"]
        assert heavy.pid is not None  # the process stays for the next unit...
        t0 = time.monotonic()
        reg.reap(t0)
        assert heavy.pid is not None
        reg.reap(t0 + jobs.WORKER_IDLE_S + 0.1)  # ...until no heavy job was active for WORKER_IDLE_S
        assert heavy.pid is None
        again = reg.submit("h2", "H2", [1], lambda unit, ctx: ctx.run("tests.jobs_units.sleep_unit", 0.01, "d"),
                           heavy=True)
        assert again.wait(timeout=120) and again.view().status == "done" and heavy.pid is not None
    finally:
        reg.clear()


def test_upload_arrays_are_dropped_when_every_session_using_them_ended(monkeypatch):
    """issue 26 item 8: an upload stays while a session uses it; once all its sessions ended
    (after a grace period) its Dataset, its fits and the session's own Upload arrays are dropped."""
    from ui import compute, live, streamlit_runtime, uploads, work

    alive = {"s1", "s2"}
    current = ["s1"]
    monkeypatch.setattr(streamlit_runtime, "session_alive", lambda sid: sid in alive)
    monkeypatch.setattr(streamlit_runtime, "session_id", lambda: current[0])
    monkeypatch.setattr(uploads, "_start_janitor", lambda: None)
    monkeypatch.setattr(uploads, "_UPLOADED", {})
    monkeypatch.setattr(uploads, "_SESSION_UPLOADS", {})
    monkeypatch.setattr(uploads, "_GONE_SINCE", {})
    monkeypatch.setattr(uploads.st, "spinner", lambda *a, **k: __import__("contextlib").nullcontext())
    X = np.random.default_rng(0).standard_normal((20, 6))
    up = compute.Upload(X=X, feature_names=[f"f{j}" for j in range(6)], labels=None, image_shape=None,
                        notes=[], metadata={}, source_name="u.csv", token="tok")
    ds = compute.uploaded_dataset(up, "center")
    current[0] = "s2"
    assert compute.uploaded_dataset(up, "center") is ds  # the second session shares it
    dkey = live.data_key(ds)
    work._store_fit(work._fit_key(dkey, "auto", 3, 3, 0.1, 0), {"x": np.zeros(6), "variance": 1.0})
    reg = jobs.Registry(max_jobs=8, idle_seconds=3600, processes=False)
    monkeypatch.setattr(jobs, "REGISTRY", reg)
    held = reg.submit(("path", dkey, "auto"), "P", [1], lambda unit, ctx: float(ds.X.sum()))  # holds X
    other = reg.submit(("path", "mll/center/0", "auto"), "Q", [1], lambda unit, ctx: 0.0)
    assert held.wait(timeout=10) and other.wait(timeout=10)
    t0 = time.monotonic()
    alive.discard("s1")
    assert uploads.release_ended_sessions(t0) == []  # within the grace period
    assert uploads.release_ended_sessions(t0 + uploads.SESSION_GRACE_S) == ["s1"]
    assert uploads._UPLOADED and up.X is not None  # s2 still uses it
    alive.discard("s2")
    uploads.release_ended_sessions(t0 + 2 * uploads.SESSION_GRACE_S)
    assert uploads.release_ended_sessions(t0 + 4 * uploads.SESSION_GRACE_S) == ["s2"]
    assert uploads._UPLOADED == {} and up.X is None
    assert work.stored_fit(dkey, "auto", 3, d=3, eps=0.1, seed=0) is None
    assert reg.get(("path", dkey, "auto")) is None and held._work is None  # the job (and its X) dropped
    assert reg.get(("path", "mll/center/0", "auto")) is other  # other data's jobs stay
    with pytest.raises(compute.InputError, match=r"your upload was released when its browser session ended"):
        compute.uploaded_dataset(up, "center")


def test_redraw_period_grows_with_the_sessions_watching(monkeypatch):
    """One or two sessions: every second; eight: every 4 s (the redraws took the server's CPU)."""
    from ui import live

    reg = jobs.Registry(max_jobs=16, idle_seconds=3600, processes=False)
    monkeypatch.setattr(jobs, "REGISTRY", reg)
    gate = threading.Event()
    try:
        assert live.refresh_seconds() == live.REFRESH_S
        job = reg.submit("a", "A", [1], blocking(gate))
        job.readers.update({"s1", "s2"})
        assert live.refresh_seconds() == live.REFRESH_S
        other = reg.submit("b", "B", [1], blocking(gate))
        other.readers.update({"s2", "s3", "s4", "s5", "s6"})
        assert live.refresh_seconds() == pytest.approx(3 * live.REFRESH_S)
        other.readers.update({"s7", "s8", "s9", "s10"})
        assert live.refresh_seconds() == live.REFRESH_MAX_S
        gate.set()
        assert job.wait(timeout=10) and other.wait(timeout=10)
        assert live.refresh_seconds() == live.REFRESH_S  # finished jobs are not watched
    finally:
        gate.set()
        reg.clear()


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="glibc's mallopt")
def test_allocator_tuned_so_freed_arrays_leave_the_server():
    """Importing the app's compute module fixes glibc's mmap threshold (1 MB) and heap count: the
    settings behind the server's memory going back after an upload's session ends."""
    import subprocess
    import sys

    from ui import uploads

    assert uploads.tune_allocator() is True
    # a fresh interpreter: a 4 MB block freed and taken again is mapped afresh (with glibc's
    # default the first free raises the threshold and the next 4 MB comes from the heap)
    probe = ("import ctypes, ui.compute; libc = ctypes.CDLL('libc.so.6'); "
             "libc.malloc.restype = ctypes.c_void_p; a = libc.malloc(4 << 20); libc.free(ctypes.c_void_p(a)); "
             "b = libc.malloc(4 << 20); maps = open('/proc/self/maps').read(); "
             "print(any(int(r.split('-')[0], 16) <= b < int(r.split()[0].split('-')[1], 16) and '[heap]' in r "
             "for r in maps.splitlines()))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                         cwd=__import__("pathlib").Path(__file__).resolve().parents[2])
    assert out.stdout.strip().splitlines()[-1] == "False"  # not on the heap: its own mapping


def test_digest_hashes_the_data_without_a_copy_and_keeps_its_keys():
    """Cache keys of an upload hash the arrays' buffers (no matrix-sized copy per call) and are the
    keys they were: the sha1 of the C-order bytes, whatever the memory order or container."""
    import hashlib

    import scipy.sparse as sp

    from ui.compute import digest

    X = np.random.default_rng(0).random((40, 7))

    def old(*parts):  # the former definition (copies through tobytes / bytes)
        h = hashlib.sha1()
        for p in parts:
            if isinstance(p, np.ndarray):
                h.update(str((p.dtype, p.shape)).encode())
                h.update(np.ascontiguousarray(p).tobytes())
            elif sp.issparse(p):
                q = sp.csr_matrix(p)
                h.update(str((q.dtype, q.shape)).encode())
                for a in (q.data, q.indices, q.indptr):
                    h.update(a.tobytes())
            elif isinstance(p, bytes | bytearray | memoryview):
                h.update(bytes(p))
            else:
                h.update(repr(p).encode())
        return h.hexdigest()[:16]

    S = sp.random(30, 9, density=0.3, format="csc", random_state=1)
    for parts in [(X,), (np.asfortranarray(X),), (X[:, ::2],), (S,), (b"abc", "opts", 3),
                  (memoryview(b"abcdef")[::2],), (bytearray(b"xy"), X)]:
        assert digest(*parts) == old(*parts)
    assert digest(X) != digest(X + 1e-12)
