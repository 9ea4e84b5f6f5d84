"""Cached compute layer: ``st.cache_data`` / ``st.cache_resource`` wrappers around ``nspca_core``.

Every cached function is pure in its (hashed) arguments: the data matrix ``X``
itself is an argument (Streamlit hashes a 2429×361 array in ~5 ms), so an
upload and a registry dataset can never be confused, and moving a slider back
to an earlier value is a cache hit.  Arguments whose name starts with ``_``
(progress callbacks) are not hashed.

Centering: the sidebar's preprocessing choice (center / standardize / log1p / none) is applied to
the data once, where the data set is loaded; every call here then passes ``center=False`` (the
core's "use X as given"), so the choice maps onto the core's ``center`` parameter exactly once.

Progress: pages wrap long calls in :func:`progress`, which draws an
``st.progress`` bar and hands the solver a ``callback(done, total)``.  The bar
is updated from a copy of the script's context taken *before* the cached call,
so the updates are not recorded for replay by the cache (Streamlit refuses to
replay messages aimed at a block created outside the cached function); on a
cache hit the function does not run and the bar is simply removed.

The life of an upload (kept per session, released when its sessions end, memory given back) is
:mod:`ui.uploads`; its names are re-exported here for the pages.

Names here mirror the core: :func:`fit`, :func:`components`, :func:`certify`,
:func:`certify_path`, :func:`nonneg_scores`; :func:`current_dataset` is the one
function every page calls to get the data the sidebar selected (the uploaded
data included).
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import time
import traceback
from collections.abc import Callable

import numpy as np
import pandas as pd
import scipy.sparse as sp
import streamlit as st

from nspca_core import InputError, api, certificates
from nspca_core import datasets as core_datasets
from nspca_core import io as core_io
from nspca_core import methods as registry
from nspca_core import scores as core_scores
from nspca_core.enet import enet_path
from nspca_core.examples import bipartite_counterexample
from nspca_core.lowrank import lowrank_factor
from nspca_core.scores import compare as scores_compare
from ui import messages, state, uploads
from ui.keys import digest
from ui.uploads import UPLOAD_DATASET, Upload, make_upload, release_ended_sessions, tune_allocator, uploaded_dataset

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
    "tune_allocator",
]

log = logging.getLogger(__name__)


# Single-component methods the pages offer, in display order: the method registry's.
SINGLE_METHODS = registry.SINGLE


class Unavailable(RuntimeError):
    """A method the page was asked for is not one the core offers (e.g. a stale URL or preset)."""


# ----------------------------------------------------------------- helpers
def available_methods() -> list[str]:
    """The single-component methods ``nspca_core.api.fit`` accepts, in display order (the registry's)."""
    return list(SINGLE_METHODS)


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
        st.error(messages.for_user(exc))
    except Exception as exc:  # noqa: BLE001 - the page must stay up
        log.error("page failed:\n%s", traceback.format_exc())
        st.error(f"Something went wrong ({type(exc).__name__}): {exc}")


# ----------------------------------------------------------------- datasets
@st.cache_resource(show_spinner="Loading the dataset…", max_entries=24)
def load_dataset(name: str, preprocessing: str = "center", seed: int = 0):
    """``nspca_core.load_dataset(name, preprocessing=..., seed=...)``, cached (read-only result)."""
    # download=True: a real dataset without a local copy is fetched (cached, checksummed)
    return core_datasets.load_dataset(name, preprocessing=state.steps_of(preprocessing), random_state=int(seed), download=True)


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
    return core_io.load_file(data, filename=filename, variable=variable, nan_policy=nan_policy,
                     resize=resize, label_column=label_column, header=header,
                     vocab=vocab, orientation=orientation, sample_info=sample_info,
                     sample_id_column=sample_id_column)


def parse_upload(data: bytes, filename: str, variable: str | None = None, nan_policy: str = "error",
                 resize: tuple | None = None, label_column=None, header: bool | None = None,
                 vocab: bytes | None = None, orientation: str = "auto", sample_info: bytes | None = None,
                 sample_id_column=None):
    """``nspca_core.io.load_file`` on the uploaded bytes, cached (raises DataFormatError).

    ``vocab``: the vocabulary file of a text corpus (docword / .mtx / .npz), if uploaded.

    The error is the core's, with its parts (argument, remedy, plain text): the page says it with
    its controls through :func:`ui.messages.for_user`.
    """
    return _parse_upload(data, filename, variable, nan_policy, resize, label_column, header,
                         vocab, orientation, sample_info, sample_id_column)


@st.cache_data(show_spinner=False, max_entries=8)
def file_variables(data: bytes, filename: str) -> list[dict]:
    """Numeric arrays of an ``.npz`` / variables of a ``.mat`` (``[{name, shape, dtype}]``)."""
    lower = filename.lower()
    if lower.endswith(".npz"):
        return list(core_io.npz_variables(data, filename=filename))
    if lower.endswith(".mat"):
        return list(core_io.mat_variables(data, filename=filename))
    return []


# an upload whose sessions all ended leaves these caches too (they hold the file and its parse)
uploads.ON_RELEASE.extend([_parse_upload.clear, file_variables.clear])


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
    return api.fit(X, k=int(k), method=method, d=int(d), eps=float(eps), random_state=int(seed), center=False,
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
        results = enet_path(V, [int(k) for k in ks], eps=float(eps), random_state=int(seed),
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
        f = api.fit
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
    return certificates.certify(X, k=int(k), x=x, callback=_callback, center=False)


@st.cache_data(show_spinner=False, max_entries=32)
def certify_path(X: np.ndarray, ks: tuple, xs: np.ndarray | None = None, _callback=None) -> list:
    """``nspca_core.certify.certify_path(X, ks=ks, xs=...)``: one Certificate per k.

    ``xs`` (n × len(ks)) are the best known answers, passed column by column.
    """
    x_list = None if xs is None else [np.asarray(xs)[:, j] for j in range(len(ks))]
    return certificates.certify_path(X, ks=[int(k) for k in ks], xs=x_list, callback=_callback, center=False)


@st.cache_data(show_spinner=False, max_entries=32)
def paper_bounds(X: np.ndarray, ks: tuple, lowrank_values: np.ndarray, d: int, eps: float | None):
    """The paper's bound min(λ₁, OPT_d + λ_{d+1}) at every k.

    ``lowrank_values[j]`` is the ε-net (``eps`` given: OPT_d ≤ value/(1−ε), with
    probability ≥ 1−1/n) or exact (``eps=None``) value of max ‖Vᵀx‖² at ``ks[j]``.
    """
    _, ev = lowrank(X, int(d))
    f = certificates.paper_bound
    return np.array([f(float(v), ev, int(d), eps=eps) for v in np.asarray(lowrank_values, float)])


@st.cache_data(show_spinner=False, max_entries=64)
def components(X: np.ndarray, n_components: int, k: int, method: str = "auto",
               strategy: str = registry.DEFAULT_STRATEGY, d: int = 3, eps: float = 0.1, seed: int = 0,
               raw: np.ndarray | None = None, _callback=None):
    """``nspca_core.api.components(X, n_components=..., k=..., ...)`` -> ComponentsResult, cached."""
    return api.components(X, n_components=int(n_components), k=int(k), method=method,
                      strategy=strategy, d=int(d), eps=float(eps), random_state=int(seed),
                      certify=False, center=False, callback=_callback, **_options(method, raw))


@st.cache_data(show_spinner=False, max_entries=32)
def components_cov(A: np.ndarray, n_components: int, k: int, method: str = "auto",
                   strategy: str = registry.DEFAULT_STRATEGY, d: int = 3, eps: float = 0.1, seed: int = 0):
    """``components(cov=A, ...)`` for a covariance given directly (the §7 counterexample)."""
    return api.components(cov=A, n_components=int(n_components), k=int(k), method=method,
                      strategy=strategy, d=int(d), eps=float(eps), random_state=int(seed), certify=False)


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
    return bipartite_counterexample(eps=float(eps), delta=float(delta))


@st.cache_data(show_spinner=False, max_entries=16)
def nonneg_scores(Y: np.ndarray, n_components: int | None = None, seed: int = 0, _callback=None):
    """``nspca_core.scores.nonneg_scores(Y, n_components=..., seed=...)`` -> ScoresResult, cached."""
    return core_scores.nonneg_scores(Y, n_components=n_components, random_state=int(seed),
                         callback=_callback)


@st.cache_data(show_spinner=False, max_entries=16)
def simulate_case(case: int, p: int, n: int, seed: int = 0):
    """``nspca_core.scores.compare.simulate_case``: Bajorski et al.'s Cases 1–3 (SimulatedCase)."""
    return scores_compare.simulate_case(int(case), p=int(p), n=int(n), seed=int(seed))


@st.cache_data(show_spinner=False, max_entries=16)
def compare_methods(Y: np.ndarray, D_true: np.ndarray, W_true: np.ndarray, methods: tuple,
                    seed: int = 0, _callback=None):
    """``nspca_core.scores.compare.compare_methods``: D_diff / W_diff of every method (Comparison)."""
    return scores_compare.compare_methods(Y, D_true, W_true, methods=tuple(methods),
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
