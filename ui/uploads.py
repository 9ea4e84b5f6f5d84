"""The life of an upload: kept while a browser session uses it, released when every such session ended.

The "Your data" page parses a file (:func:`ui.compute.parse_upload`) and stores an :class:`Upload`
in the session (:func:`make_upload`); the pages read it preprocessed (:func:`uploaded_dataset`),
one :class:`nspca_core.datasets.Dataset` per (upload, preprocessing), kept here (at most
:data:`UPLOADS_KEPT`) with the sessions using it.  Once every such session has ended (its tab closed:
:func:`release_ended_sessions`, run by the job reaper every second) they are dropped, the session's
Upload is emptied, what other modules keep about the data is dropped through the hooks
:data:`ON_FORGET` (the stored fits: :mod:`ui.work`) and :data:`ON_RELEASE` (the parse caches:
:mod:`ui.compute`), the data's jobs are forgotten, Streamlit's copy of the uploaded file is removed
and the ended session is shut down (a disconnected session lingers in Streamlit's session storage
for minutes, with its widgets' values: :mod:`ui.streamlit_runtime`), and the freed memory is handed
back to the system (``malloc_trim``; glibc's ``mallopt`` set at import: :func:`tune_allocator`).
"""

from __future__ import annotations

import ctypes
import gc
import logging
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
import streamlit as st

from nspca_core import InputError
from nspca_core.datasets import Dataset, DatasetInfo, preprocess
from nspca_core.io import SINGLE_CELL, single_cell_note
from ui import jobs, messages, state, streamlit_runtime
from ui.keys import data_key, digest
from ui.topics import sparse_upload_dataset

__all__ = ["UPLOAD_DATASET", "Upload", "make_upload", "uploaded_dataset", "upload_token", "release_ended_sessions",
           "tune_allocator", "ON_FORGET", "ON_RELEASE", "UPLOADS_KEPT", "SESSION_GRACE_S"]

log = logging.getLogger(__name__)

# The value the sidebar's dataset choice takes for "your data" (the upload in
# st.session_state[state.UPLOAD]).
UPLOAD_DATASET = state.UPLOAD_NAME

@dataclass(frozen=True, eq=False)
class Upload:
    """What the "Your data" page stores in ``st.session_state[state.UPLOAD]``.

    The fields of ``nspca_core.io.LoadedData`` (after the user's label-column
    choice) plus the choices themselves and a digest identifying the data.

    Attributes
    ----------
    X : ndarray (m, n)
        The raw matrix, samples x features (not preprocessed).
    feature_names : list of str
    labels : ndarray or None
    image_shape : tuple or None
    notes : list of str
        What the loader (and the page) did to the data.
    metadata : dict
    source_name : str
        The uploaded file's name.
    options : dict
        The user's choices: variable, nan_policy, resize, label_column.
    token : str
        A digest of the file bytes and of every choice; identifies the data in caches.
    """

    X: np.ndarray
    feature_names: list
    labels: np.ndarray | None
    image_shape: tuple | None
    notes: list
    metadata: dict
    source_name: str
    options: dict = field(default_factory=dict)
    token: str = ""
    sample_names: list | None = None  # one per row of X (LoadedData.sample_names)


def _in_words(note):
    """A reader's note in the app's words (:func:`ui.messages.for_user`), still marked as saying the
    data are single-cell when it does (:func:`ui.topics.single_cell` reads the marker, not the text)."""
    text = messages.for_user(note)
    return single_cell_note(text) if getattr(note, "kind", None) == SINGLE_CELL else text


def make_upload(loaded, *, options: dict, file_digest: str) -> Upload:
    """The :class:`Upload` stored in session state for a parsed file."""
    X = loaded.X if sp.issparse(loaded.X) else np.asarray(loaded.X, dtype=np.float64)
    upload = Upload(X=X, feature_names=list(loaded.feature_names),
                    labels=None if loaded.labels is None else np.asarray(loaded.labels),
                    image_shape=None if loaded.image_shape is None else tuple(loaded.image_shape),
                    notes=[_in_words(nt) for nt in loaded.notes], metadata=loaded.metadata,
                    source_name=loaded.source_name,
                    options=dict(options), token=digest(file_digest, sorted(options.items())),
                    sample_names=list(getattr(loaded, "sample_names", None) or []) or None)
    _note_session_upload(upload)
    return upload


def uploaded_dataset(upload: Upload, preprocessing="center"):
    """The uploaded data as a Dataset, preprocessed like the registry's datasets."""
    if upload.X is None:
        raise InputError("your upload was released when its browser session ended (the tab was closed): "
                         "open the *Your data* page and upload the file again")
    token = upload_token(upload)
    _note_session_upload(upload, token)
    return _uploaded_dataset(token, preprocessing, upload)


def upload_token(upload) -> str:
    """Cache key of an upload: its token plus a digest of everything the pages read from it."""
    labels = getattr(upload, "labels", None)
    return digest(getattr(upload, "token", ""),
                  upload.X if sp.issparse(upload.X) else np.asarray(upload.X),
                  None if labels is None else np.asarray(labels).astype(str),
                  getattr(upload, "image_shape", None), list(getattr(upload, "feature_names", [])))


# ----------------------------------------------------------------- the store and its sessions
UPLOADS_KEPT = 8          # preprocessed uploads kept (each X and X_raw)
SESSION_GRACE_S = 3.0     # a session gone this long is over (a reconnect within it keeps all)
_UPLOADED: dict = {}      # (token, preprocessing) -> Dataset
_SESSION_UPLOADS: dict = {}  # session id -> Upload it made or uses
_GONE_SINCE: dict = {}    # session id -> when it was first seen ended
_MEMORY_LOCK = threading.Lock()
# called with the job data key (ui.keys.data_key) of each preprocessed upload dropped (ui.work: its fits)
ON_FORGET: list[Callable[[str], object]] = []
# called once when an upload's arrays were freed (ui.compute: the parse caches holding the file)
ON_RELEASE: list[Callable[[], object]] = []


def _note_session_upload(upload, token: str | None = None) -> None:
    """Remember that this browser session uses ``upload`` (and the cached Dataset ``token``)."""
    sid = streamlit_runtime.session_id()
    if sid is not None and upload is not None:
        with _MEMORY_LOCK:
            prev = _SESSION_UPLOADS.get(sid)
            tokens = set(prev[1]) if prev is not None and prev[0] is upload else set()
            if token is not None:
                tokens.add(token)
            _SESSION_UPLOADS[sid] = (upload, tokens)
        _start_janitor()


def release_ended_sessions(now: float | None = None) -> list[str]:
    """Drop what only ended sessions used (see the module docstring); the session ids released."""
    now = time.monotonic() if now is None else now
    with _MEMORY_LOCK:
        ended = []
        for sid in list(_SESSION_UPLOADS):
            if streamlit_runtime.session_alive(sid):
                _GONE_SINCE.pop(sid, None)
            elif now - _GONE_SINCE.setdefault(sid, now) >= SESSION_GRACE_S:
                ended.append(sid)
        if not ended:
            return []
        gone = [_SESSION_UPLOADS.pop(sid) for sid in ended]
        for sid in ended:
            _GONE_SINCE.pop(sid, None)
        used = {t for _, tokens in _SESSION_UPLOADS.values() for t in tokens}
        kept = {id(u) for u, _ in _SESSION_UPLOADS.values()}
        freed = list({id(u): u for u, _ in gone if id(u) not in kept}.values())
        for key in [k for k in _UPLOADED if k[0] not in used]:
            ds = _UPLOADED.pop(key)
            _forget_fits(ds)
    for upload in freed:
        object.__setattr__(upload, "X", None)  # the ended session's own reference to the arrays
        object.__setattr__(upload, "labels", None)
    if freed:
        for hook in list(ON_RELEASE):
            hook()
    streamlit_runtime.remove_uploaded_files(ended)
    streamlit_runtime.close_stored_sessions(ended, then=_give_back_memory)
    _give_back_memory()
    jobs.log.info("released %d ended session(s) %s, %d upload(s), %d preprocessed kept", len(ended), ended,
                  len(freed), len(_UPLOADED))
    return ended


def _forget_fits(ds) -> None:
    """What is kept about the data ``ds`` elsewhere (the stored fits: vectors of length n kept for every
    page, through :data:`ON_FORGET`) and its jobs (their work functions hold the matrix).  Best effort:
    a failure is logged with its traceback and the release goes on."""
    try:
        dkey = data_key(ds)
        for hook in list(ON_FORGET):
            hook(dkey)
        jobs.REGISTRY.forget(lambda key: isinstance(key, tuple) and dkey in key)
    except Exception:  # noqa: BLE001 - the release must go on (the session's own arrays, the files)
        log.warning("could not drop what is kept about an upload:\n%s", traceback.format_exc())


def _give_back_memory() -> None:
    """Collect, then return free heap pages to the system (glibc ``malloc_trim``; elsewhere a no-op)."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: the collection above is all there is
        pass


# glibc's mallopt parameters (malloc.h)
_M_MMAP_THRESHOLD, _M_ARENA_MAX = -3, -8
MMAP_THRESHOLD = 1 << 20  # allocations from 1 MB up get their own mapping, unmapped when freed
ARENA_MAX = 2             # heaps shared by the server's many threads


def tune_allocator() -> bool:
    """Make freed arrays go back to the system (glibc; elsewhere a no-op returning False).

    glibc raises its mmap threshold each time a mapped block is freed (up to 32 MB), so after
    the first upload an analysis's arrays of 1-32 MB come from heaps shared with long-lived
    objects and stay in the process after they are freed; every thread that allocates under
    contention also gets a heap of its own.  A fixed threshold (which also turns the raising
    off) and two heaps kept the server 217 MB lower after a 32 MB upload analysed on Variance vs
    k and closed (back within 300 MB of its start in 2 s, was > 120 s: benchmarks/bench_load.py
    --upload-mb).  Done once at import; ``make run`` and ``nspca app`` also set
    ``MALLOC_MMAP_THRESHOLD_``/``MALLOC_ARENA_MAX`` so the server starts so."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
                    and libc.mallopt(_M_ARENA_MAX, ARENA_MAX) == 1)
    except (OSError, AttributeError):
        return False


tune_allocator()


def _start_janitor() -> None:
    if release_ended_sessions not in jobs.REGISTRY.on_reap:
        jobs.REGISTRY.on_reap.append(release_ended_sessions)
    jobs.REGISTRY.start_reaper()


def _uploaded_dataset(token: str, preprocessing, _upload: Upload):
    """The preprocessed Dataset of an upload, kept per (token, preprocessing) while a session uses it."""
    key = (token, preprocessing if isinstance(preprocessing, str) else tuple(preprocessing))
    with _MEMORY_LOCK:
        ds = _UPLOADED.get(key)
    if ds is not None:
        return ds
    with st.spinner("Preprocessing your data…"):
        ds = _build_uploaded_dataset(_upload, preprocessing)
    with _MEMORY_LOCK:
        _UPLOADED[key] = ds
        while len(_UPLOADED) > UPLOADS_KEPT:
            _UPLOADED.pop(next(iter(_UPLOADED)))
    return ds


def _build_uploaded_dataset(_upload: Upload, preprocessing):
    data = _upload
    if sp.issparse(data.X):  # a text corpus stays sparse (ui/topics.py)
        return sparse_upload_dataset(data, state.steps_of(preprocessing), UPLOAD_DATASET)
    source_name = getattr(data, "source_name", "") or "upload"
    X_raw = np.asarray(data.X, dtype=np.float64)
    steps = state.steps_of(preprocessing)
    pre = preprocess(X_raw, steps=steps)
    labels = None if getattr(data, "labels", None) is None else np.asarray(data.labels)
    image_shape = getattr(data, "image_shape", None)
    image_shape = tuple(image_shape) if image_shape is not None else None
    notes = list(getattr(data, "notes", []) or []) + list(getattr(pre, "notes", []) or [])
    fields = dict(name=UPLOAD_DATASET, X=np.asarray(pre.X, dtype=np.float64), X_raw=X_raw,
                  feature_names=[str(f) for f in data.feature_names], labels=labels,
                  image_shape=image_shape, preprocessing=tuple(pre.steps), ground_truth=None,
                  notes=notes)
    info_fields = dict(name=UPLOAD_DATASET, title=f"Your data ({source_name})",
                       description=f"Uploaded file {source_name}", kind="upload",
                       shape=tuple(X_raw.shape), source=source_name, citation="",
                       paper_preprocessing="", image_shape=image_shape, has_labels=labels is not None)
    return Dataset(**fields, info=DatasetInfo(**info_fields))
