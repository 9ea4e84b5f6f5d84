"""Cached compute layer: ``st.cache_data`` / ``st.cache_resource`` wrappers around ``nspca_core``.

Every cached function is pure in its (hashed) arguments: the data matrix ``X``
itself is an argument (Streamlit hashes a 2429×361 array in ~5 ms), so an
upload and a registry dataset can never be confused, and moving a slider back
to an earlier value is a cache hit.  Arguments whose name starts with ``_``
(progress callbacks) are not hashed.

Progress: pages wrap long calls in :func:`progress`, which draws an
``st.progress`` bar and hands the solver a ``callback(done, total)``.  The bar
is updated from a copy of the script's context taken *before* the cached call,
so the updates are not recorded for replay by the cache (Streamlit refuses to
replay messages aimed at a block created outside the cached function); on a
cache hit the function does not run and the bar is simply removed.

Names here mirror the core: :func:`fit`, :func:`components`, :func:`certify`,
:func:`certify_path`, :func:`nonneg_scores`; :func:`current_dataset` is the one
function every page calls to get the data the sidebar selected (the uploaded
data included).
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import importlib
import logging
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
import streamlit as st

from nspca_core import methods as registry
from nspca_core._validation import InputError
from ui import messages, state

__all__ = [
    "UPLOAD_DATASET",
    "Upload",
    "Unavailable",
    "available_methods",
    "load_dataset",
    "uploaded_dataset",
    "current_dataset",
    "parse_upload",
    "file_variables",
    "make_upload",
    "progress",
    "guard",
    "lowrank",
    "fit",
    "method_path",
    "certify",
    "certify_path",
    "paper_bounds",
    "components",
    "pca",
    "true_variance",
    "counterexample",
    "nonneg_scores",
    "simulate_case",
    "compare_methods",
    "jaccard_matrix",
    "pair_jaccard",
    "kmeans_jaccard",
    "digest",
    "release_ended_sessions",
]

log = logging.getLogger(__name__)

# The value the sidebar's dataset choice takes for "your data" (the upload in
# st.session_state[state.UPLOAD]).
UPLOAD_DATASET = state.UPLOAD_NAME

# Single-component methods the pages offer, in display order: the method registry's.
SINGLE_METHODS = registry.SINGLE


class Unavailable(RuntimeError):
    """A method the page was asked for is not one the core offers (e.g. a stale URL or preset)."""


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


# ----------------------------------------------------------------- helpers
def available_methods() -> list[str]:
    """The single-component methods ``nspca_core.api.fit`` accepts, in display order (the registry's)."""
    return list(SINGLE_METHODS)


def digest(*parts) -> str:
    """A short sha1 of bytes/str/arrays, for cache keys of uploaded data."""
    h = hashlib.sha1()
    for p in parts:
        if isinstance(p, np.ndarray):
            h.update(str((p.dtype, p.shape)).encode())
            h.update(np.ascontiguousarray(p))  # the buffer itself: no copy of an upload's matrix
        elif sp.issparse(p):  # a text corpus: its CSR arrays (never densified)
            q = sp.csr_matrix(p)
            h.update(str((q.dtype, q.shape)).encode())
            for a in (q.data, q.indices, q.indptr):
                h.update(np.ascontiguousarray(a))
        elif isinstance(p, bytes | bytearray | memoryview):
            h.update(p if not isinstance(p, memoryview) or p.c_contiguous else p.tobytes())
        else:
            h.update(repr(p).encode())
    return h.hexdigest()[:16]


@contextlib.contextmanager
def progress(label: str):
    """Draw a progress bar and yield ``callback(done, total)`` for the solver.

    The bar is removed when the block exits.  Updates are throttled (at most
    one per percent) and sent through a context copied before any cached call,
    so the cache never records them (see the module docstring).
    """
    holder = st.empty()
    bar = holder.progress(0.0, text=label)
    ctx = contextvars.copy_context()
    last = [-1.0]

    def callback(done, total) -> None:
        frac = 0.0 if not total else min(max(float(done) / float(total), 0.0), 1.0)
        if frac - last[0] >= 0.01 or frac >= 1.0:
            last[0] = frac
            try:
                ctx.run(bar.progress, frac, text=f"{label} ({int(done)}/{int(total)})")
            except RuntimeError:  # context already entered (nested callback): skip the update
                pass

    try:
        yield callback
    finally:
        holder.empty()


def guard(main: Callable[[], None]) -> None:
    """Run a page body; bad input and missing features become messages, never tracebacks.

    ``InputError`` (and ``ValueError``) -> ``st.error`` with the core's message;
    :class:`Unavailable` -> ``st.info``; anything else -> ``st.error`` with the
    type and message (the traceback goes to the server log only).
    """
    try:
        main()
    except Unavailable as exc:
        st.info(f"Not available yet: {exc}")
    except ValueError as exc:  # InputError, DataFormatError are ValueErrors
        st.error(messages.for_user(str(exc)))
    except Exception as exc:  # noqa: BLE001 - the page must stay up
        log.error("page failed:\n%s", traceback.format_exc())
        st.error(f"Something went wrong ({type(exc).__name__}): {exc}")


# ----------------------------------------------------------------- datasets
@st.cache_resource(show_spinner="Loading the dataset…", max_entries=24)
def load_dataset(name: str, preprocessing: str = "center", seed: int = 0):
    """``nspca_core.load_dataset(name, preprocessing=..., seed=...)``, cached (read-only result)."""
    from nspca_core.datasets import load_dataset as load_core

    # download=True: a real dataset without a local copy is fetched (cached, checksummed)
    return load_core(name, preprocessing=_steps(preprocessing), seed=int(seed), download=True)


def _steps(preprocessing) -> tuple:
    """The preprocessing steps of a sidebar choice ("center", "standardize", ...)."""
    if isinstance(preprocessing, str):
        return state.preprocessing_steps(preprocessing)
    return tuple(preprocessing)


# ----------------------------------------------------------------- memory given back
# An upload's arrays (the parsed file, its preprocessed Dataset, the fits on it) are kept
# per token, with the browser sessions using it; once every such session has ended (its tab
# closed: :func:`release_ended_sessions`, run by the job reaper every second) they are
# dropped, the session's Upload is emptied, Streamlit's copy of the uploaded file is removed
# and the ended session is shut down (a disconnected session lingers in Streamlit's session
# storage for minutes, with its widgets' values), and the freed memory is handed back to the
# system (``malloc_trim``).
UPLOADS_KEPT = 8          # preprocessed uploads kept (each X and X_raw)
SESSION_GRACE_S = 3.0     # a session gone this long is over (a reconnect within it keeps all)
_UPLOADED: dict = {}      # (token, preprocessing) -> Dataset
_SESSION_UPLOADS: dict = {}  # session id -> Upload it made or uses
_GONE_SINCE: dict = {}    # session id -> when it was first seen ended
_MEMORY_LOCK = __import__("threading").Lock()


def _note_session_upload(upload, token: str | None = None) -> None:
    """Remember that this browser session uses ``upload`` (and the cached Dataset ``token``)."""
    from ui import live

    sid = live.session_id()
    if sid is not None and upload is not None:
        with _MEMORY_LOCK:
            prev = _SESSION_UPLOADS.get(sid)
            tokens = set(prev[1]) if prev is not None and prev[0] is upload else set()
            if token is not None:
                tokens.add(token)
            _SESSION_UPLOADS[sid] = (upload, tokens)
        _start_janitor()


def release_ended_sessions(now: float | None = None) -> list[str]:
    """Drop what only ended sessions used (see the comment above); the session ids released."""
    from ui import live

    now = time.monotonic() if now is None else now
    with _MEMORY_LOCK:
        ended = []
        for sid in list(_SESSION_UPLOADS):
            if live.session_alive(sid):
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
        _parse_upload.clear()
        file_variables.clear()
    _remove_uploaded_files(ended)
    _shut_down_stored_sessions(ended)
    _give_back_memory()
    from ui import jobs

    jobs.log.info("released %d ended session(s) %s, %d upload(s), %d preprocessed kept", len(ended), ended,
                  len(freed), len(_UPLOADED))
    return ended


def _forget_fits(ds) -> None:
    """The stored fits of the data ``ds`` (vectors of length n, kept for every page) and its jobs
    (their work functions hold the matrix)."""
    try:
        from ui import jobs, live, work

        dkey = live.data_key(ds)
        work.forget_data(dkey)
        jobs.REGISTRY.forget(lambda key: isinstance(key, tuple) and dkey in key)
    except Exception:  # noqa: BLE001 - best effort
        log.info("could not drop the fits of an upload:\n%s", traceback.format_exc())


def _remove_uploaded_files(sids) -> None:
    """Streamlit's copies of the files the ended sessions uploaded (kept until the session is
    finally shut down, minutes after its tab closed)."""
    from streamlit import runtime

    if not runtime.exists():
        return
    mgr = getattr(runtime.get_instance(), "_uploaded_file_mgr", None)
    for sid in sids:
        with contextlib.suppress(Exception):
            mgr.remove_session_files(sid)


def _shut_down_stored_sessions(sids) -> None:
    """Shut the ended sessions down now: Streamlit keeps a disconnected session (its session
    state, the uploader's copy of the file) for a reconnect, expired only lazily minutes later.
    Runs on the server's event loop (AppSession.shutdown must); a session that reconnected
    meanwhile is left alone."""
    from streamlit import runtime

    if not runtime.exists():
        return
    rt = runtime.get_instance()
    storage = getattr(getattr(rt, "_session_mgr", None), "_session_storage", None)
    loop = getattr(getattr(rt, "_async_objs", None), "eventloop", None)
    if storage is None or loop is None or not hasattr(storage, "get"):
        return

    def shut() -> None:
        for sid in sids:
            with contextlib.suppress(Exception):
                if rt.is_active_session(sid):
                    continue
                info = storage.get(sid)
                if info is not None:
                    storage.delete(sid)
                    info.session.shutdown()
        _give_back_memory()

    with contextlib.suppress(RuntimeError):  # the loop is closed: the server is stopping
        loop.call_soon_threadsafe(shut)


def _give_back_memory() -> None:
    """Collect, then return free heap pages to the system (glibc ``malloc_trim``; elsewhere a no-op)."""
    import ctypes
    import gc

    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


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
    import ctypes

    try:
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
                    and libc.mallopt(_M_ARENA_MAX, ARENA_MAX) == 1)
    except (OSError, AttributeError):
        return False


tune_allocator()


def _start_janitor() -> None:
    from ui import jobs

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
        from ui.topics import sparse_upload_dataset

        return sparse_upload_dataset(data, _steps(preprocessing), UPLOAD_DATASET)
    source_name = getattr(data, "source_name", "") or "upload"
    X_raw = np.asarray(data.X, dtype=np.float64)
    steps = _steps(preprocessing)
    from nspca_core.datasets import preprocess
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
    from nspca_core.datasets import Dataset, DatasetInfo

    return Dataset(**fields, info=DatasetInfo(**info_fields))


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


def current_dataset():
    """The Dataset the sidebar selected (the upload when "your data" is chosen).

    Raises
    ------
    InputError
        When "your data" is selected but nothing was uploaded yet (pages show it
        with ``st.error`` through :func:`guard`).
    """
    s = state.settings()
    if s.dataset == UPLOAD_DATASET:
        upload = st.session_state.get(state.UPLOAD)
        if upload is None:
            raise InputError("`dataset` is \"your data\" but nothing has been uploaded yet: open the "
                             "*Your data* page and upload a file, or choose another dataset.")
        if sp.issparse(upload.X):  # the dense pages would densify it (ui/topics.py handles it)
            m, n = upload.X.shape
            raise InputError(f"your data is a text corpus ({m:,} documents × {n:,} words, kept "
                             "sparse): open the *Topics* page for its components as topics; this "
                             "page works on dense data, so choose another dataset here.")
        return uploaded_dataset(upload, s.preprocessing)
    return load_dataset(s.dataset, s.preprocessing, s.seed)


# ----------------------------------------------------------------- uploads
# cache_resource, not cache_data: cache_data keeps a pickled copy of the parsed matrix and hands
# every rerun a fresh unpickled copy (two more copies of an upload at least); the LoadedData is
# only read, and dropped with the session (release_ended_sessions)
@st.cache_resource(show_spinner="Reading the file…", max_entries=4)
def _parse_upload(data: bytes, filename: str, variable: str | None = None, nan_policy: str = "error",
                  resize: tuple | None = None, label_column=None, header: bool | None = None,
                  vocab: bytes | None = None, orientation: str = "auto", sample_info: bytes | None = None,
                  sample_id_column=None):
    from nspca_core.io import load_file
    return load_file(data, filename=filename, variable=variable, nan_policy=nan_policy,
                     resize=resize, label_column=label_column, header=header,
                     vocab=vocab, orientation=orientation, sample_info=sample_info,
                     sample_id_column=sample_id_column)


def parse_upload(data: bytes, filename: str, variable: str | None = None, nan_policy: str = "error",
                 resize: tuple | None = None, label_column=None, header: bool | None = None,
                 vocab: bytes | None = None, orientation: str = "auto", sample_info: bytes | None = None,
                 sample_id_column=None):
    """``nspca_core.io.load_file`` on the uploaded bytes, cached (raises DataFormatError).

    ``vocab``: the vocabulary file of a text corpus (docword / .mtx / .npz), if uploaded.

    The error message names the page's controls, not the API's arguments
    (:func:`ui.messages.for_user`), and does not repeat the file name.
    """
    try:
        return _parse_upload(data, filename, variable, nan_policy, resize, label_column, header,
                             vocab, orientation, sample_info, sample_id_column)
    except ValueError as exc:
        raise type(exc)(messages.for_user(str(exc), filename=filename)) from None


@st.cache_data(show_spinner=False, max_entries=8)
def file_variables(data: bytes, filename: str) -> list[dict]:
    """Numeric arrays of an ``.npz`` / variables of a ``.mat`` (``[{name, shape, dtype}]``)."""
    lower = filename.lower()
    if lower.endswith(".npz"):
        from nspca_core.io import npz_variables
        return list(npz_variables(data, filename=filename))
    if lower.endswith(".mat"):
        from nspca_core.io import mat_variables
        return list(mat_variables(data, filename=filename))
    return []


def make_upload(loaded, *, options: dict, file_digest: str) -> Upload:
    """The :class:`Upload` stored in session state for a parsed file."""
    X = loaded.X if sp.issparse(loaded.X) else np.asarray(loaded.X, dtype=np.float64)
    upload = Upload(X=X, feature_names=list(loaded.feature_names),
                  labels=None if loaded.labels is None else np.asarray(loaded.labels),
                  image_shape=None if loaded.image_shape is None else tuple(loaded.image_shape),
                  notes=[messages.for_user(nt) for nt in loaded.notes], metadata=loaded.metadata, source_name=loaded.source_name,
                  options=dict(options), token=digest(file_digest, sorted(options.items())),
                  sample_names=list(getattr(loaded, "sample_names", None) or []) or None)
    _note_session_upload(upload)
    return upload


# ----------------------------------------------------------------- solvers
def true_variance(X: np.ndarray, xs: np.ndarray) -> np.ndarray:
    """``x_jᵀ A x_j`` for the columns of ``xs`` with ``A = XᵀX/m`` (never forms A)."""
    xs = np.asarray(xs, float)
    Y = X @ xs
    if Y.ndim == 1:
        return np.array(float(Y @ Y) / X.shape[0])
    return np.einsum("ij,ij->j", Y, Y) / X.shape[0]


@st.cache_data(show_spinner=False, max_entries=64)
def lowrank(X: np.ndarray, d: int):
    """``(V, eigenvalues)`` = ``nspca_core.lowrank_factor(X, d=d)``."""
    from nspca_core.lowrank import lowrank_factor
    return lowrank_factor(X, d=d)


@st.cache_data(show_spinner=False, max_entries=64)
def eigenvalues(X: np.ndarray, count: int) -> np.ndarray:
    """The top ``count`` eigenvalues of ``A = XᵀX/m`` (from the singular values of X)."""
    s = np.linalg.svd(X, compute_uv=False)
    ev = s**2 / X.shape[0]
    out = np.zeros(count)
    out[: min(count, ev.size)] = ev[:count]
    return out


@st.cache_data(show_spinner=False, max_entries=256)
def fit(X: np.ndarray, k: int, method: str = "auto", d: int = 3, eps: float = 0.1, seed: int = 0,
        certify: bool = True, raw: np.ndarray | None = None, _callback=None):
    """``nspca_core.api.fit(X, k=..., method=..., ...)`` -> Result, cached.

    ``raw`` is the data before preprocessing; only NMF uses it (it factorizes
    nonnegative data, not a covariance).
    """
    if method not in available_methods():
        raise Unavailable(f"method {method!r} is not in nspca_core.api.METHODS={available_methods()}")
    from nspca_core.api import fit
    return fit(X, k=int(k), method=method, d=int(d), eps=float(eps), seed=int(seed),
               certify=bool(certify), callback=_callback, **_options(method, raw))


def _options(method: str, raw) -> dict:
    """Extra options of a method: NMF gets the raw nonnegative data."""
    if method == "nmf" and raw is not None:
        return {"data": raw}
    return {}


@st.cache_data(show_spinner=False, max_entries=64)
def method_path(X: np.ndarray, ks: tuple, method: str, d: int = 3, eps: float = 0.1, seed: int = 0,
                raw: np.ndarray | None = None, _callback=None) -> dict:
    """The answer of ``method`` at every k in ``ks``.

    ``"enet"`` uses the warm-started ``nspca_core.enet.enet_path`` (one set of
    samples for all k; variance then recomputed on the true A); other methods
    call ``fit(..., certify=False)`` once per k.

    Returns
    -------
    dict with ``ks`` (array), ``variance`` (xᵀAx, array), ``lowrank``
    (‖Vᵀx‖², array; for enet the ε-net value used by the paper's bound),
    ``xs`` (n × len(ks)), ``seconds`` (array).
    """
    ks = np.asarray(ks, dtype=int)
    n = X.shape[1]
    xs = np.zeros((n, ks.size))
    low = np.full(ks.size, np.nan)
    secs = np.zeros(ks.size)
    if method == "enet":
        V, _ = lowrank(X, int(d))
        t0 = time.perf_counter()
        from nspca_core.enet import enet_path
        results = enet_path(V, [int(k) for k in ks], eps=float(eps), seed=int(seed),
                            callback=_callback)
        total = time.perf_counter() - t0
        for j, r in enumerate(results):
            xs[:, j] = r.x
            low[j] = r.variance_lowrank if np.isfinite(r.variance_lowrank) else float(
                np.sum((V.T @ r.x) ** 2))
        secs[:] = total / max(ks.size, 1)
    else:
        if method not in available_methods():
            raise Unavailable(f"method {method!r} is not in nspca_core.api.METHODS={available_methods()}")
        from nspca_core.api import fit
        f = fit
        for j, k in enumerate(ks):
            r = f(X, k=int(k), method=method, d=int(d), eps=float(eps), seed=int(seed), certify=False,
                  **_options(method, raw))
            xs[:, j] = r.x
            low[j] = r.variance_lowrank
            secs[j] = r.seconds
            if _callback is not None:
                _callback(j + 1, ks.size)
    return dict(ks=ks, variance=true_variance(X, xs), lowrank=low, xs=xs, seconds=secs)


@st.cache_data(show_spinner=False, max_entries=128)
def certify(X: np.ndarray, k: int, x: np.ndarray | None = None, _callback=None):
    """``nspca_core.certify.certify(X, k=k, x=x)`` -> Certificate, cached."""
    from nspca_core.certificates import certify
    return certify(X, k=int(k), x=x, callback=_callback)


@st.cache_data(show_spinner=False, max_entries=32)
def certify_path(X: np.ndarray, ks: tuple, xs: np.ndarray | None = None, _callback=None) -> list:
    """``nspca_core.certify.certify_path(X, ks=ks, xs=...)``: one Certificate per k.

    ``xs`` (n × len(ks)) are the best known answers, passed column by column.
    """
    x_list = None if xs is None else [np.asarray(xs)[:, j] for j in range(len(ks))]
    from nspca_core.certificates import certify_path
    return certify_path(X, ks=[int(k) for k in ks], xs=x_list, callback=_callback)


@st.cache_data(show_spinner=False, max_entries=32)
def paper_bounds(X: np.ndarray, ks: tuple, lowrank_values: np.ndarray, d: int, eps: float | None):
    """The paper's bound min(λ₁, OPT_d + λ_{d+1}) at every k.

    ``lowrank_values[j]`` is the ε-net (``eps`` given: OPT_d ≤ value/(1−ε), with
    probability ≥ 1−1/n) or exact (``eps=None``) value of max ‖Vᵀx‖² at ``ks[j]``.
    """
    _, ev = lowrank(X, int(d))
    from nspca_core.certificates import paper_bound
    f = paper_bound
    return np.array([f(float(v), ev, int(d), eps=eps) for v in np.asarray(lowrank_values, float)])


@st.cache_data(show_spinner=False, max_entries=64)
def components(X: np.ndarray, n_components: int, k: int, method: str = "auto",
               strategy: str = "deflation-remove", d: int = 3, eps: float = 0.1, seed: int = 0,
               raw: np.ndarray | None = None, _callback=None):
    """``nspca_core.api.components(X, n_components=..., k=..., ...)`` -> ComponentsResult, cached."""
    from nspca_core.api import components
    return components(X, n_components=int(n_components), k=int(k), method=method,
                      strategy=strategy, d=int(d), eps=float(eps), seed=int(seed),
                      callback=_callback, **_options(method, raw))


@st.cache_data(show_spinner=False, max_entries=32)
def components_cov(A: np.ndarray, n_components: int, k: int, method: str = "auto",
                   strategy: str = "deflation-remove", d: int = 3, eps: float = 0.1, seed: int = 0):
    """``components(cov=A, ...)`` for a covariance given directly (the §7 counterexample)."""
    from nspca_core.api import components
    return components(cov=A, n_components=int(n_components), k=int(k), method=method,
                      strategy=strategy, d=int(d), eps=float(eps), seed=int(seed))


@st.cache_data(show_spinner=False, max_entries=32)
def pca(X: np.ndarray, r: int):
    """Dense PCA reference: the top-``r`` eigenvectors of A (signs as svd_flip) and their variances."""
    m = X.shape[0]
    _, s, Vt = np.linalg.svd(X, full_matrices=False)
    W = Vt[:r].T.copy()
    # deterministic signs: largest-|entry| of each loading positive (sklearn's svd_flip rule)
    signs = np.sign(W[np.argmax(np.abs(W), axis=0), np.arange(W.shape[1])])
    signs[signs == 0] = 1.0
    W *= signs
    return W, (s[:r] ** 2) / m


@st.cache_data(show_spinner=False, max_entries=8)
def counterexample(eps: float, delta: float):
    """The §7 counterexample of Asteris et al. (2015) as returned by ``nspca_core.examples``."""
    from nspca_core.examples import bipartite_counterexample
    return bipartite_counterexample(eps=float(eps), delta=float(delta))


@st.cache_data(show_spinner=False, max_entries=16)
def nonneg_scores(Y: np.ndarray, n_components: int | None = None, seed: int = 0, _callback=None):
    """``nspca_core.scores.nonneg_scores(Y, n_components=..., seed=...)`` -> ScoresResult, cached."""
    from nspca_core.scores import nonneg_scores
    return nonneg_scores(Y, n_components=n_components, seed=int(seed),
                         callback=_callback)


@st.cache_data(show_spinner=False, max_entries=16)
def simulate_case(case: int, p: int, n: int, seed: int = 0):
    """``nspca_core.scores.compare.simulate_case``: Bajorski et al.'s Cases 1–3 (SimulatedCase)."""
    from nspca_core.scores.compare import simulate_case
    return simulate_case(int(case), p=int(p), n=int(n), seed=int(seed))


@st.cache_data(show_spinner=False, max_entries=16)
def compare_methods(Y: np.ndarray, D_true: np.ndarray, W_true: np.ndarray, methods: tuple,
                    seed: int = 0, _callback=None):
    """``nspca_core.scores.compare.compare_methods``: D_diff / W_diff of every method (Comparison)."""
    from nspca_core.scores.compare import compare_methods
    return compare_methods(Y, D_true, W_true, methods=tuple(methods),
                           seed=int(seed), callback=_callback)


# ----------------------------------------------------------------- comparisons
def jaccard_matrix(supports: dict) -> pd.DataFrame:
    """Pairwise Jaccard index |S_i ∩ S_j| / |S_i ∪ S_j| of supports (1 on the diagonal)."""
    names = list(supports)
    sets = [set(np.asarray(supports[m]).ravel().tolist()) for m in names]
    J = np.ones((len(names), len(names)))
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            union = len(sets[i] | sets[j])
            J[i, j] = J[j, i] = (len(sets[i] & sets[j]) / union) if union else 1.0
    return pd.DataFrame(J, index=names, columns=names)


def pair_jaccard(a, b) -> float:
    """Pair-counting Jaccard coefficient of two partitions of the same items.

    ``n11 / (n11 + n10 + n01)`` over unordered pairs of items: n11 pairs are
    together in both partitions, n10 / n01 together in only one.  This is the
    score Sigg & Buhmann (ICML 2008, §5, Fig. 4) report for k-means clusters
    against the known leukemia classes.
    """
    a = pd.factorize(np.asarray(a).ravel())[0]
    b = pd.factorize(np.asarray(b).ravel())[0]
    if a.size != b.size:
        raise InputError(f"`a` and `b` must label the same items; got {a.size} and {b.size} labels")
    # contingency counts: pairs together in both = sum C(n_ij, 2), etc.
    table = pd.crosstab(a, b).to_numpy()
    pairs = lambda c: float(np.sum(c * (c - 1)) / 2)  # noqa: E731
    n11 = pairs(table)
    same_a = pairs(table.sum(axis=1))
    same_b = pairs(table.sum(axis=0))
    denom = same_a + same_b - n11
    return n11 / denom if denom > 0 else 1.0


@st.cache_data(show_spinner=False, max_entries=64)
def kmeans_jaccard(X_selected: np.ndarray, labels: np.ndarray, n_clusters: int = 3,
                   seed: int = 0) -> float:
    """k-means (``n_clusters``, 10 restarts) on the selected features; pair Jaccard vs ``labels``."""
    from sklearn.cluster import KMeans

    if X_selected.shape[1] == 0:
        return float("nan")
    km = KMeans(n_clusters=int(n_clusters), n_init=10, random_state=int(seed)).fit(X_selected)
    return pair_jaccard(km.labels_, labels)
