"""Topics — the components of a text corpus as topics: words and their weights."""

from __future__ import annotations

import time

import streamlit as st

from ui import compute, downloads, jobs, live, state
from ui import topics_jobs as tj
from ui import topics as tp
from ui.figures import topics as tfigs
from ui.sidebar import page_intro

page_intro(
    "Topics",
    "Several nonnegative sparse components of a text corpus (documents × words, kept sparse), each "
    "shown as a topic: its words and their weights, in a table and a bar chart per component; "
    "CSV export.",
    "Asteris, Papailiopoulos, Kyrillidis & Dimakis, *Sparse PCA via Bipartite Matchings* (2015), "
    "Table 3: s words of each of 8 components of a bag-of-words corpus (raw counts, centered), "
    "found jointly by bipartite matchings on a rank-5 sketch; deflation with TPower beside it.",
)


def controls(choices: dict) -> tuple:
    default = tp.UPLOAD if tp.UPLOAD in choices and \
        state.settings().dataset == compute.UPLOAD_DATASET else tp.DEMO
    keys = list(choices)
    c1, c2 = st.columns([2, 1])
    key = c1.selectbox("Corpus", keys, index=keys.index(default), format_func=choices.get,
                       key="tp_corpus",
                       help="Upload a docword.NAME.txt[.gz] + vocab, .mtx or sparse .npz, a .zip of "
                            ".txt documents or a CSV with a column of texts on *Your data*; KOS, "
                            "NIPS, Enron, NYTimes appear when a local copy is in NSPCA_DATA_DIR.")
    method = c2.radio("Method", list(tp.METHODS), format_func=tp.METHODS.get, key="tp_method")
    c1, c2, c3, c4 = st.columns(4)
    r = c1.slider("Topics (components)", 1, 12, 8, key="tp_r")
    k = c2.slider("Words per topic (s)", 3, 30, 15, key="tp_k",
                  help="This page's own setting: nonzero loadings per component (the paper uses "
                       "s = 15 in Table 2 and s = 10 in Table 3). The sidebar's k is not used here.")
    weighting = c3.selectbox("Weighting", list(tp.WEIGHTINGS), key="tp_weighting",
                             format_func={"raw": "raw counts (paper)", "tfidf": "tf-idf",
                                          "log1p": "log(1 + count)"}.get)
    center = c4.checkbox("Centered", True, key="tp_center",
                         help="Covariance of the centered counts, centering applied implicitly "
                              "(the matrix stays sparse).")
    c1, c2, c3 = st.columns([1, 1, 2])
    stop = c1.checkbox("Leave out English stop words", True, key="tp_stop",
                       help="scikit-learn's list of English stop words (the, of, and, ...): they "
                            "are in every document and would make the largest topics.")
    numbers = c2.checkbox("Numbers as words", False, key="tp_numbers",
                          help="Numbers (1999, 3.5, 12:30) are not words of a topic by default: a "
                               "corpus's years or page numbers made a topic of their own. Raw text read "
                               "on *Your data* has its numbers left out already.")
    max_df = c3.slider("Leave out words in more than this share of the documents", 0.1, 1.0,
                       tp.DEFAULT_MAX_DF, 0.05, key="tp_max_df", format="%.2f",
                       help="Words found in most documents carry no topic; 1.00 keeps them all.")
    st.caption(f"**Words per topic** is this page's own setting: the sidebar's k (now "
               f"{state.settings().k}) is not used on this page.")
    return key, method, r, k, weighting, center, stop, max_df, numbers


def find(corpus, method, r, k, weighting, center, seed, stop, max_df, numbers):
    """The topics, computed as a background job with progress, an estimate and Stop; None while
    it computes (the progress is drawn and the page reruns when it is done) or when stopped."""
    args = (corpus.token, method, r, k, weighting, center, seed, bool(stop), float(max_df), bool(numbers))
    jobs.REGISTRY.warm()
    job = tj.topics_job(*args, corpus=corpus)
    deadline = time.monotonic() + 1.5  # a quick computation paints at once, without a progress bar
    while job.view(touch=False).active and time.monotonic() < deadline:
        time.sleep(0.05)
    run = tj.job_run(job, corpus.token, bool(stop), float(max_df), bool(numbers), corpus=corpus)
    if run is None:
        what = f"Finding {r} topics of {k} words"
        live.live(lambda: tj.progress(job, what), active=job.view().active)
    return run


def main() -> None:
    choices = tp.sources()
    key, method, r, k, weighting, center, stop, max_df, numbers = controls(choices)
    seed = state.settings().seed
    corpus = tp.get_corpus(key, seed)
    m, n = corpus.X.shape
    X_used, words, _, prune_notes = tp.words_used(corpus.token, bool(stop), float(max_df), bool(numbers),
                                                  _corpus=corpus)
    if r * k > len(words):
        left = "" if len(words) == n else f" after leaving words out ({'; '.join(prune_notes)})"
        st.error(f"{r} topics of {k} words need {r * k} distinct words; the corpus has "
                 f"{len(words)}{left}. Choose fewer topics or words"
                 + (", or leave fewer words out." if left else "."))
        return
    st.caption(f"**{corpus.title}**: {m:,} documents × {n:,} words, {corpus.X.nnz:,} nonzero counts "
               f"(sparse, never densified); seed {seed} (sidebar).")
    run = find(corpus, method, r, k, weighting, center, seed, stop, max_df, numbers)
    if run is None:
        return
    cols = st.columns(3)
    cols[0].metric("total variance of the topics", f"{run.variance.sum():.4g}")
    cols[1].metric(f"variance of the span of {run.loadings.shape[1]}",
                   f"{run.cumulative_variance[-1]:.4g}")
    cols[2].metric("seconds", f"{run.seconds:.2f}")
    st.caption(f"Words used: {run.n_words:,} of {n:,} — " + "; ".join(run.weighting_notes)
               + (f"; rank-{run.params['d']} sketch, {run.params['samples']} sampled net points"
                  if method == "bipartite" else ""))
    st.subheader("Words of each topic")
    st.caption("Topics ordered by explained variance (largest first). Only meaningful words are "
               f"listed: a word whose squared weight is below a quarter of an equal share "
               f"(1/(4·{k})) of its topic is filler, carried only because {k} words were asked.")
    shown = run.table[run.table["meaningful"]]
    for i, part in enumerate(tp.table_chunks(tp.wide_table(shown))):  # four topics a table: no cell cut
        st.dataframe(part, key="tp_table" if i == 0 else f"tp_table{i}",
                     column_config={c: st.column_config.TextColumn(width=w)
                                    for c, w in tp.column_widths(part).items()})
    for line in tp.dominated_lines(tp.dominated_topics(X_used, run.loadings), corpus.documents):
        st.warning(line)
    fewer = tp.filler_summary(run.table, k)
    if fewer:
        st.info("Fewer meaningful words than asked: " + "; ".join(fewer) + ". The CSV lists every "
                "nonzero word with its `meaningful` flag.")
    if corpus.topics is not None:
        match = tp.planted_match(shown, corpus.topics)
        st.caption(f"Planted topics recovered (best Jaccard index per topic, ground truth of the "
                   f"demo): mean {match['Jaccard'].mean():.2f}.")
        st.dataframe(match, hide_index=True, key="tp_match")
    fig = tfigs.topics_grid(shown, n_cols=2, variance=run.variance)  # readable at 800 px too
    st.plotly_chart(fig, key="tp_bars")
    st.plotly_chart(tfigs.topic_variance(run.variance, run.cumulative_variance), key="tp_variance")
    c1, c2 = st.columns(2)
    c1.download_button("Topics (CSV)", run.table.to_csv(index=False, float_format="%.6g"),
                       file_name="topics.csv", mime="text/csv", key="tp_dl_csv", on_click="ignore",
                       help="component (ordered by variance), rank, word, word_index (0-based, in "
                            "the corpus's vocabulary), weight, meaningful: every nonzero loading "
                            "of each component, heaviest first.")
    c2.download_button("Figure (HTML)", lambda: downloads.figure_html(fig), file_name="topics.html",
                       mime="text/html", key="tp_dl_fig", on_click="ignore")


compute.guard(main)
