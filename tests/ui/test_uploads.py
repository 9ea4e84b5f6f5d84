"""The life of an upload (ui/uploads.py): what release_ended_sessions hands to the other modules and to
Streamlit's runtime once every session using an upload has ended (the arrays themselves:
tests/ui/test_jobs_sessions.py)."""

from __future__ import annotations

import contextlib

import numpy as np

from ui import streamlit_runtime, uploads


def test_release_calls_the_hooks_and_the_runtime_door_once_for_the_ended_sessions(monkeypatch):
    alive = {"s1", "s2"}
    current = ["s1"]
    calls = []
    monkeypatch.setattr(streamlit_runtime, "session_alive", lambda sid: sid in alive)
    monkeypatch.setattr(streamlit_runtime, "session_id", lambda: current[0])
    monkeypatch.setattr(streamlit_runtime, "remove_uploaded_files", lambda sids: calls.append(("files", list(sids))))
    monkeypatch.setattr(streamlit_runtime, "close_stored_sessions",
                        lambda sids, then=None: calls.append(("close", list(sids), then is not None)))
    monkeypatch.setattr(uploads, "_start_janitor", lambda: None)
    monkeypatch.setattr(uploads, "_UPLOADED", {})
    monkeypatch.setattr(uploads, "_SESSION_UPLOADS", {})
    monkeypatch.setattr(uploads, "_GONE_SINCE", {})
    monkeypatch.setattr(uploads, "ON_FORGET", [lambda dkey: calls.append(("forget", dkey))])
    monkeypatch.setattr(uploads, "ON_RELEASE", [lambda: calls.append(("release",))])
    monkeypatch.setattr(uploads.st, "spinner", lambda *a, **k: contextlib.nullcontext())
    X = np.random.default_rng(1).standard_normal((12, 5))
    up = uploads.Upload(X=X, feature_names=[f"f{j}" for j in range(5)], labels=None, image_shape=None, notes=[],
                        metadata={}, source_name="u.csv", token="t")
    ds = uploads.uploaded_dataset(up, "center")
    other = uploads.Upload(X=X.copy(), feature_names=[f"f{j}" for j in range(5)], labels=None, image_shape=None,
                           notes=[], metadata={}, source_name="v.csv", token="v")
    current[0] = "s2"
    uploads.uploaded_dataset(other, "center")
    alive.discard("s1")
    assert uploads.release_ended_sessions(0.0) == []
    assert calls == []  # within the grace period nothing is touched
    assert uploads.release_ended_sessions(uploads.SESSION_GRACE_S) == ["s1"]
    assert calls == [("forget", uploads.data_key(ds)), ("release",), ("files", ["s1"]), ("close", ["s1"], True)]
    assert up.X is None and other.X is not None  # s2's upload kept
    calls.clear()
    assert uploads.release_ended_sessions(2 * uploads.SESSION_GRACE_S) == []  # nothing more ended
    assert calls == []


def test_the_upload_store_keeps_a_few_preprocessed_uploads(monkeypatch):
    monkeypatch.setattr(uploads, "_start_janitor", lambda: None)
    monkeypatch.setattr(uploads, "_UPLOADED", {})
    monkeypatch.setattr(uploads.st, "spinner", lambda *a, **k: contextlib.nullcontext())
    rng = np.random.default_rng(2)
    made = []
    for i in range(uploads.UPLOADS_KEPT + 2):
        up = uploads.Upload(X=rng.standard_normal((6, 3)), feature_names=["a", "b", "c"], labels=None,
                            image_shape=None, notes=[], metadata={}, source_name=f"{i}.csv", token=str(i))
        made.append(uploads.uploaded_dataset(up, "none"))
        np.testing.assert_array_equal(made[-1].X, up.X)  # "none": the data as given
    assert len(uploads._UPLOADED) == uploads.UPLOADS_KEPT  # the oldest dropped first
