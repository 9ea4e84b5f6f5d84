"""Text corpora in the app: the corpora the Topics page offers, cached, and topics computed sparse.

A corpus is a documents x words ``scipy.sparse`` CSR matrix with its
vocabulary; it is never densified here: the covariance is the operator
:func:`nspca_core.operators.sparse.as_sparse_cov` (centered implicitly) and the
components come from the bipartite method on its top-d factor or from
deflation with TPower (matrix-vector products only).

Sources, in the order offered: the upload (when *Your data* holds a text
corpus), the registry corpora with a local copy (KOS, NIPS, Enron, NYTimes in
``NSPCA_DATA_DIR`` or the cache; nothing is downloaded from this page), and the
*text demo*: a synthetic corpus at the KOS shape with planted topics
(:func:`nspca_core.corpus.corpus_like`).
"""

from __future__ import annotations

import re

from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp
import streamlit as st

from nspca_core.io import SINGLE_CELL
from nspca_core.methods import BIPARTITE
from ui import state

__all__ = ["DEMO", "Corpus", "is_sparse", "is_text_upload", "sources", "get_corpus", "compute_topics",
           "TopicsRun", "wide_table", "planted_match", "upload_preview", "METHODS",
           "WEIGHTINGS", "BIPARTITE_D", "BIPARTITE_SAMPLES", "DEFAULT_MAX_DF", "FILLER_SHARE",
           "words_used", "mark_meaningful", "filler_summary", "topics_key", "run_from", "dominated_topics",
           "dominated_lines", "topics_params", "unit_options", "table_chunks", "column_widths",
           "TOPICS_PER_TABLE"]

DEMO = "text-demo"
UPLOAD = "upload"
#: method key -> label
METHODS = {BIPARTITE: "joint: bipartite matchings (Asteris et al. 2015)",
           "tpower": "deflation (remove used words) with TPower"}
#: page choice -> nspca_core.text weighting
WEIGHTINGS = {"raw": "counts", "tfidf": "tfidf", "log1p": "log1p"}
#: the bipartite method's sketch rank (the paper's rank-5 sketch) and sampled net points
BIPARTITE_D = 5
BIPARTITE_SAMPLES = 300
#: default: leave out the words in more than this share of the documents ("the", "said", ...)
DEFAULT_MAX_DF = 0.7
#: a word is filler when its squared weight is below this share of an equal share (1/s)
FILLER_SHARE = 0.25


@dataclass(frozen=True, eq=False)
class Corpus:
    """A documents x words corpus for the Topics page.

    ``X`` raw counts (CSR, never densified), ``vocabulary`` the words,
    ``token`` identifies it in caches, ``topics`` the planted word sets
    (demo only), ``notes`` what was read, ``documents`` the documents' names (raw text: the file
    names or lines), or None.
    """

    X: sp.csr_matrix
    vocabulary: list
    title: str
    token: str
    notes: list
    topics: list | None = None
    documents: list | None = None


@dataclass(frozen=True)
class TopicsRun:
    """Topics found, ordered by explained variance (largest first): ``loadings`` (words used x r),
    ``variance`` (per component, on the weighted covariance), ``cumulative_variance`` (of the span
    of the first j in that order), ``table`` (:func:`nspca_core.text.topics_table` with
    ``word_index`` into the corpus's vocabulary and a ``meaningful`` column), ``seconds``,
    ``weighting_notes`` (what was left out, the weighting), ``method``, ``params``,
    ``n_words`` (words used after leaving some out)."""

    loadings: np.ndarray
    variance: np.ndarray
    cumulative_variance: np.ndarray
    table: pd.DataFrame
    seconds: float
    weighting_notes: tuple
    method: str
    params: dict
    n_words: int = 0


def is_sparse(X) -> bool:
    """True for a ``scipy.sparse`` matrix (a text corpus kept sparse)."""
    return sp.issparse(X)


def is_text_upload(upload) -> bool:
    """True when the stored upload is a sparse text corpus (``load_file`` kept it sparse)."""
    return upload is not None and sp.issparse(getattr(upload, "X", None))


@st.cache_data(show_spinner=False, ttl=300)
def _local_corpora() -> list[tuple[str, str]]:
    """(name, title) of the registry corpora with a local copy (none is downloaded here)."""
    try:
        from nspca_core.datasets import is_available, list_datasets

        return [(i.name, i.title) for i in list_datasets(include_text=True)
                if i.kind == "text" and is_available(i.name)]
    except Exception:  # registry not importable: the demo is still offered
        return []


def sources() -> dict[str, str]:
    """Corpus choices: key -> label."""
    out = {}
    upload = st.session_state.get(state.UPLOAD)
    if is_text_upload(upload):
        out[UPLOAD] = f"Your data ({getattr(upload, 'source_name', 'upload')})"
    for name, title in _local_corpora():
        out[name] = f"{title} — local copy"
    out[DEMO] = "Text demo: synthetic corpus at the KOS shape, planted topics"
    return out


@st.cache_resource(show_spinner="Generating the demo corpus…", max_entries=4)
def _demo(seed: int) -> Corpus:
    from nspca_core.corpus import CORPUS_SHAPES, corpus_like

    c = corpus_like("kos", seed=int(seed))
    D, W, _ = CORPUS_SHAPES["kos"]
    return Corpus(X=c.X, vocabulary=list(c.vocabulary), title=f"text demo (KOS shape, seed {seed})",
                  token=f"demo:kos:{seed}", notes=list(c.notes), topics=list(c.topics))


@st.cache_resource(show_spinner="Reading the corpus…", max_entries=2)
def _registry(name: str) -> Corpus:
    from nspca_core.datasets import load_corpus

    t = load_corpus(name)
    return Corpus(X=t.X, vocabulary=list(t.vocabulary), title=name,
                  token=f"corpus:{name}:{t.extra.get('sha256', '')}", notes=list(t.notes))


def get_corpus(key: str, seed: int = 0) -> Corpus:
    """The corpus of a :func:`sources` key."""
    if key == DEMO:
        return _demo(int(seed))
    if key == UPLOAD:
        up = st.session_state.get(state.UPLOAD)
        if not is_text_upload(up):
            raise ValueError("the uploaded data is not a text corpus any more; choose another corpus")
        meta = getattr(up, "metadata", None)
        names = list(map(str, meta["document"])) if isinstance(meta, pd.DataFrame) and "document" in meta \
            and len(meta) == up.X.shape[0] else None
        return Corpus(X=up.X, vocabulary=list(up.feature_names),
                      title=getattr(up, "source_name", "upload"),
                      token=f"upload:{getattr(up, 'token', '')}", notes=list(up.notes), documents=names)
    return _registry(key)


def stop_words_set(on: bool):
    """scikit-learn's English stop words (a frozenset), or None."""
    if not on:
        return None
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


#: a "word" that is a number (1999, 3.5, 12:30, 2-1): not a word of a topic unless asked for
NUMBER = re.compile(r"[+-]?\d[\d.,:/_-]*")


def numbers_in(words) -> np.ndarray:
    """Whether each vocabulary entry is a number (:data:`NUMBER`)."""
    return np.array([NUMBER.fullmatch(str(w)) is not None for w in words], dtype=bool)


@st.cache_resource(show_spinner=False, max_entries=4)
def words_used(token: str, stop_words: bool, max_df: float, numbers: bool = False, *, _corpus: Corpus):
    """The corpus with the stop words, the words of more than ``max_df`` of the documents and (unless
    ``numbers``) the numbers left out: ``(X of the kept columns, kept words, kept column indices,
    notes)`` (sparse).  Numbers are not words by default (issue 41: a corpus's topic of years)."""
    from nspca_core.io.documents import prune_vocabulary

    X, vocab = _corpus.X, list(_corpus.vocabulary)
    cols = np.arange(len(vocab))
    num = numbers_in(vocab) if not numbers else np.zeros(len(vocab), bool)
    if num.any():
        cols = np.flatnonzero(~num)
        X, vocab = X[:, cols], [vocab[j] for j in cols]
    p = prune_vocabulary(X, vocab, stop_words=stop_words_set(stop_words), min_df=1, max_df=float(max_df))
    notes = ([f"{int(num.sum()):,} number(s) left out (e.g. "
              f"{', '.join(str(_corpus.vocabulary[j]) for j in np.flatnonzero(num)[:5])})"] if num.any() else [])
    notes = notes + list(p.notes) or ["no word left out"]
    if stop_words and not p.n_stop:
        notes.insert(0, "no English stop word in the vocabulary")
    if not stop_words:
        notes.append("stop words kept (switch on *Leave out English stop words* to drop them)")
    if float(max_df) >= 1.0:
        notes.append("words of most documents kept (max share 100%)")
    return p.X, p.words, cols[np.asarray(p.kept, dtype=int)], tuple(notes)


def mark_meaningful(table: pd.DataFrame, k: int) -> pd.DataFrame:
    """``table`` with a ``meaningful`` column: a word's squared weight is at least
    :data:`FILLER_SHARE` / k (a quarter of an equal share of the topic's unit-norm weights);
    the other words are filler that a k-sparse component carries only because k were asked."""
    return table.assign(meaningful=table["weight"].to_numpy() ** 2 >= FILLER_SHARE / int(k))


def run_from(out: dict, method: str, params: dict, words, kept, prune_notes) -> TopicsRun:
    """The :class:`TopicsRun` of a :func:`ui.topics_units.topics_unit` result on the words used."""
    from nspca_core.text import topics_table

    k = int(params["k"])
    table = mark_meaningful(topics_table(out["loadings"], words), k)
    table["word_index"] = np.asarray(kept)[table["word_index"].to_numpy()].astype(int)
    extra = {"d": params["d"], "samples": params["samples"]} if method == BIPARTITE else {}
    return TopicsRun(loadings=out["loadings"], variance=out["variance"],
                     cumulative_variance=out["cumulative_variance"], table=table, seconds=out["seconds"],
                     weighting_notes=tuple(prune_notes) + tuple(out["weighting_notes"]), method=method,
                     params={**{key: v for key, v in params.items() if key not in ("d", "samples")},
                             "order": np.asarray(out["order"]).tolist(), **extra},
                     n_words=len(words))


def topics_params(method, r, k, weighting, center, seed, stop_words, max_df, numbers) -> dict:
    if method not in METHODS:
        raise ValueError(f"`method` must be one of {list(METHODS)}; got {method!r}")
    return {"r": int(r), "k": int(k), "weighting": weighting, "center": bool(center), "seed": int(seed),
            "stop_words": bool(stop_words), "max_df": float(max_df), "numbers": bool(numbers),
            "d": BIPARTITE_D, "samples": BIPARTITE_SAMPLES}


def unit_options(method: str, params: dict) -> dict:
    return dict(method=method, r=params["r"], k=params["k"], weighting=WEIGHTINGS[params["weighting"]],
                center=params["center"], seed=params["seed"], d=params["d"], samples=params["samples"])


@st.cache_data(show_spinner=False, max_entries=32)
def compute_topics(token: str, method: str, r: int, k: int, weighting: str, center: bool,
                   seed: int, stop_words: bool = True, max_df: float = DEFAULT_MAX_DF,
                   numbers: bool = False, *, _corpus: Corpus) -> TopicsRun:
    """Topics of a corpus in this thread, cached by its token and the choices (the matrix is not
    hashed); the page runs the same computation as a background job (:func:`topics_job`).

    The stop words (scikit-learn's English list), the numbers (unless ``numbers``) and the words
    of more than ``max_df`` of the documents are left out first (:func:`words_used`).
    ``"bipartite"``: :func:`nspca_core.peers.bipartite.bipartite_components` on the sparse
    covariance operator with a rank-:data:`BIPARTITE_D` sketch and :data:`BIPARTITE_SAMPLES` net
    points; ``"tpower"``: ``components(..., strategy="deflation-remove", method="tpower")``
    (:func:`ui.topics_units.topics_unit`).  Topics are then ordered by explained variance.
    Memory: the CSR matrix, its weighted copy and the n x d factor; never an n x n or m x n
    dense array.
    """
    from ui.topics_units import topics_unit

    params = topics_params(method, r, k, weighting, center, seed, stop_words, max_df, numbers)
    X, words, kept, prune_notes = words_used(token, bool(stop_words), float(max_df), bool(numbers),
                                             _corpus=_corpus)
    out = topics_unit(X, **unit_options(method, params))
    return run_from(out, method, params, words, kept, prune_notes)


def topics_key(token: str, method: str, params: dict) -> tuple:
    """The registry key of the topics job of these choices (:func:`topics_params`)."""
    return ("topics", token, method, *(params[p] for p in ("r", "k", "weighting", "center", "seed",
                                                           "stop_words", "max_df", "numbers")))


def filler_summary(table: pd.DataFrame, k: int) -> list[str]:
    """One sentence per topic with fewer meaningful words than the k asked."""
    out = []
    for j, grp in table.groupby("component", sort=True):
        good = int(grp["meaningful"].sum())
        if good < k:
            out.append(f"Topic {int(j)} has {good} meaningful word{'s' if good != 1 else ''} of the {k} "
                       f"asked" + (f" (its {len(grp) - good} other nonzero word(s) are filler)"
                                   if len(grp) > good else ""))
    return out


def wide_table(table: pd.DataFrame, decimals: int = 3) -> pd.DataFrame:
    """One column per topic, one row per rank: ``word (weight)``."""
    if table.empty:
        return pd.DataFrame()
    cells = table.assign(cell=[f"{w} ({v:.{decimals}f})" for w, v in zip(table["word"], table["weight"])])
    wide = cells.pivot(index="rank", columns="component", values="cell").fillna("")
    wide.columns = [f"Topic {j}" for j in wide.columns]
    return wide


#: topics per table: four columns of ``word (0.412)`` fit the page at 800 px (eight were cut)
TOPICS_PER_TABLE = 4
#: pixels per character of a table cell and the cell's padding (Streamlit's 14 px sans-serif)
CHAR_PX, CELL_PAD_PX = 8, 24


def table_chunks(wide: pd.DataFrame, per: int = TOPICS_PER_TABLE) -> list[pd.DataFrame]:
    """:func:`wide_table` in tables of at most ``per`` topics, each with the rank as its index
    (issue 41: at 800 and 1400 px a cell of the eight-topic table was cut)."""
    return [wide.iloc[:, a:a + per] for a in range(0, wide.shape[1], per)] if wide.shape[1] else [wide]


def column_widths(table: pd.DataFrame) -> dict[str, int]:
    """A width in pixels per column, enough for its longest cell and its header (so that no cell is
    cut; a table wider than the page scrolls instead)."""
    out = {}
    for col in table.columns:
        longest = max([len(str(col))] + [len(str(v)) for v in table[col]])
        out[str(col)] = CHAR_PX * longest + CELL_PAD_PX
    return out


def planted_match(table: pd.DataFrame, planted: list) -> pd.DataFrame:
    """Best Jaccard index of each found topic with a planted word set (demo ground truth)."""
    rows = []
    sets = [set(np.asarray(t).tolist()) for t in planted]
    for j, grp in table.groupby("component", sort=True):
        found = set(grp["word_index"].tolist())
        scores = [len(found & s) / len(found | s) if found | s else 0.0 for s in sets]
        best = int(np.argmax(scores)) if scores else -1
        rows.append({"topic": int(j), "best planted topic": best + 1 if best >= 0 else None,
                     "Jaccard": float(scores[best]) if best >= 0 else float("nan")})
    return pd.DataFrame(rows)


def upload_preview(upload) -> None:
    """What *Your data* shows for a text corpus: size, notes, the most frequent words."""
    X = upload.X
    m, n = X.shape
    st.subheader("Preview of the text corpus")
    cols = st.columns(3)
    cols[0].metric("documents", f"{m:,}")
    cols[1].metric("words", f"{n:,}")
    cols[2].metric("nonzero counts", f"{X.nnz:,}")
    for note in upload.notes:
        st.caption(f"• {note}")
    totals = np.asarray(X.sum(axis=0)).ravel()
    top = np.argsort(-totals, kind="stable")[:20]
    st.dataframe(pd.DataFrame({"word": [str(upload.feature_names[i]) for i in top],
                               "total count": totals[top],
                               "documents": np.diff(X.tocsc().indptr)[top]}), hide_index=True)
    st.caption("The 20 most frequent words. The corpus stays sparse: open the *Topics* page for "
               "its components as topics (words and weights).")


def sparse_upload_dataset(upload, steps: tuple, name: str):
    """A text-corpus upload as a ``nspca_core.datasets.Dataset`` whose ``X`` stays sparse.

    Like the registry corpora (:func:`nspca_core.datasets.load_dataset` for kind
    ``"text"``): ``X`` the weighted counts, *not* centered (``"log1p"`` in the
    sidebar's steps -> log1p weighting, else raw counts), ``preprocessing``
    ``(weighting,)`` plus ``"center"`` when the covariance is to be centered
    implicitly, ``mean`` the column means.  Standardizing would make the
    matrix dense: it is not applied and a note says so.
    """
    from nspca_core.datasets import Dataset, DatasetInfo
    from nspca_core.text import text_weighting

    weighting = "log1p" if "log1p" in steps else "counts"
    w = text_weighting(upload.X, weighting=weighting, center="center" in steps)
    notes = list(upload.notes) + list(w.notes)
    if "standardize" in steps:
        notes.append("standardize is not applied to a text corpus (it would make the matrix "
                     "dense); centered counts are used")
    mean = np.asarray(w.X.mean(axis=0)).ravel() if w.center else None
    source = getattr(upload, "source_name", "") or "upload"
    info = DatasetInfo(name=name, title=f"Your data ({source})", description=f"Uploaded text "
                       f"corpus {source}", kind="upload", shape=tuple(upload.X.shape), source=source,
                       citation="", paper_preprocessing="", image_shape=None, has_labels=False)
    return Dataset(name=name, X=w.X, X_raw=upload.X, feature_names=[str(f) for f in
                   upload.feature_names], labels=None, image_shape=None,
                   preprocessing=(weighting,) + (("center",) if w.center else ()), info=info,
                   ground_truth=None, notes=notes, mean=mean, scale=None, params={})


def vocab_uploader(filename: str, column) -> bytes | None:
    """A second uploader for the vocabulary of a docword / .mtx / .npz upload (None: none given)."""
    low = filename.lower()
    if not (low.startswith("docword") or low.endswith((".mtx", ".mtx.gz", ".npz", ".txt.gz"))):
        return None
    vocab = column.file_uploader("Vocabulary (vocab.NAME.txt, one word per line; optional)",
                                 type=["txt"], key="yd_vocab",
                                 help="Word i on line i. Or upload one .zip holding the docword "
                                      "file and its vocab file.")
    return None if vocab is None else vocab.getvalue()


def single_cell(notes) -> bool:
    """True for a sparse cells x genes upload (a 10x folder or AnnData), kept sparse like a corpus: its
    reader says so by a note of kind :data:`nspca_core.io.SINGLE_CELL`."""
    return any(getattr(nt, "kind", None) == SINGLE_CELL for nt in notes)


def row_col_words(X, notes) -> tuple[str, str]:
    """What the rows and the columns of an upload are, in the user's words: documents × words for a
    text corpus (``load_file`` keeps it sparse), cells × genes for sparse single-cell data, else
    samples × features."""
    if is_sparse(X):
        return ("cells", "genes") if single_cell(notes) else ("documents", "words")
    return "samples", "features"


#: a topic is "one document's" when that document carries at least this share of its squared scores
DOMINANT_SHARE = 0.5


def dominated_topics(X_used, loadings: np.ndarray, share: float = DOMINANT_SHARE) -> list[tuple[int, int, float]]:
    """Topics whose scores come mostly from one document: ``(topic, document, its share)`` for each
    topic whose largest squared score (counts of the words used times the topic's weights) is at least
    ``share`` of the sum (issue 41: a 2 MB document's file list made a topic of its own).  Sparse
    product only (documents x topics)."""
    S = np.asarray(X_used @ np.asarray(loadings, float))
    sq = S ** 2
    total = sq.sum(axis=0)
    out = []
    for j in range(sq.shape[1]):
        if total[j] > 0:
            i = int(np.argmax(sq[:, j]))
            if sq[i, j] / total[j] >= share:
                out.append((j, i, float(sq[i, j] / total[j])))
    return out


def dominated_lines(found, documents=None) -> list[str]:
    """One warning per dominating document (:func:`dominated_topics`), its topics named together."""
    by_doc: dict = {}
    for j, doc, share in found:
        by_doc.setdefault(doc, []).append((j, share))
    out = []
    for doc, topics in by_doc.items():
        name = f"document {doc + 1}" + (f" ({documents[doc]})" if documents is not None else "")
        many = len(topics) > 1
        which = ", ".join(str(j + 1) for j, _ in topics)
        shares = ", ".join(f"{share:.0%}" for _, share in topics)
        out.append(f"Topic{'s' if many else ''} {which} {'are' if many else 'is'} mostly one document: "
                   f"{name} carries {shares} of {'their' if many else 'its'} scores (the words are that "
                   "document's, not a theme of the corpus). Leave that document out, or weight the counts "
                   "(*Weighting*: log(1 + count) or tf-idf) so that one long document counts less.")
    return out
