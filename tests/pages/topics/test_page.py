"""The Topics page under AppTest (the KOS-shaped text demo, a text upload), its pure
figure and table functions against brute force, and a text corpus uploaded on *Your data*."""

from __future__ import annotations

import dataclasses
import gzip
import time
import io
import zipfile

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from nspca_core.text import topics_table
from tests.conftest import page_app
from ui import compute, jobs, state
from ui import topics as tp
from ui import topics_jobs as tj
from ui.figures import topics as tfigs

TIMEOUT = 180
WORDS = [f"word{j}" for j in range(30)]


@pytest.fixture
def no_densify(monkeypatch):
    """Fail if a corpus-sized scipy.sparse matrix is turned dense."""
    import scipy.sparse._base as base

    real = base._spbase.toarray

    def guarded(self, *args, **kwargs):
        if self.shape[0] * self.shape[1] >= 1_000_000:
            raise AssertionError(f"a {self.shape} sparse matrix was densified")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(base._spbase, "toarray", guarded)
    monkeypatch.setattr(base._spbase, "todense", guarded)


def small_corpus(seed=0, m=80, n=30):
    """Counts with two planted word groups (words 0-4 and 10-14) over Poisson noise."""
    rng = np.random.default_rng(seed)
    X = rng.poisson(0.3, (m, n)).astype(float)
    X[: m // 2, 0:5] += rng.poisson(4, (m // 2, 5))
    X[m // 2:, 10:15] += rng.poisson(4, (m - m // 2, 5))
    return sp.csr_matrix(X)


def text_upload(X, name="docword.small.txt"):
    return compute.Upload(X=X, feature_names=list(WORDS[: X.shape[1]]), labels=None,
                          image_shape=None, notes=["test corpus"], metadata=None, source_name=name,
                          options={}, token=f"t{X.nnz}")


def ok(at):
    assert not at.exception, [e.value for e in at.exception]
    return at


def topic_table(at) -> pd.DataFrame:
    """The page's topics: its tables of at most four topics side by side, as one."""
    parts = [d.value for d in at.dataframe if str(d.value.columns[0]).startswith("Topic")]
    return pd.concat(parts, axis=1)


def settled(at):
    """Run the page, let its topics job finish (a background job with progress), run it again."""
    ok(at.run())
    assert jobs.REGISTRY.wait(TIMEOUT)
    return ok(at.run())


# --------------------------------------------------------------------------- the page

def test_demo_topics_bipartite_then_tpower(no_densify):
    at = settled(page_app("topics.py", timeout=TIMEOUT))
    assert not at.error, [e.value for e in at.error]
    assert "3,430 documents × 6,906 words" in " ".join(c.value for c in at.caption)
    table = topic_table(at)
    # 15 words asked, the planted topics have 10: the 5 filler words of each are not listed (issue
    # 27 item 7; this assertion was len(table) == 15, the padding)
    assert list(table.columns) == [f"Topic {j}" for j in range(1, 9)] and len(table) == 10
    assert "Topic 1 has 10 meaningful words of the 15 asked" in " ".join(i.value for i in at.info)
    assert len(at.get("plotly_chart")) == 2
    assert {b.label for b in at.get("download_button")} == {"Topics (CSV)", "Figure (HTML)"}
    match = next(d.value for d in at.dataframe if "Jaccard" in d.value.columns)
    assert [list(d.value.columns) for d in at.dataframe][:2] == [[f"Topic {j}" for j in range(1, 5)],
                                                                [f"Topic {j}" for j in range(5, 9)]]
    # planted topics have 10 words, topics 15: a recovered topic has Jaccard 10/15
    assert len(match) == 8 and (match["Jaccard"] >= 0.6).sum() >= 6
    at.radio(key="tp_method").set_value("tpower")
    at.slider(key="tp_r").set_value(3)
    at.slider(key="tp_k").set_value(5)
    settled(at)
    table = topic_table(at)
    assert list(table.columns) == ["Topic 1", "Topic 2", "Topic 3"] and len(table) == 5


def test_text_upload_is_offered_and_used():
    X = small_corpus()
    at = page_app("topics.py", timeout=TIMEOUT, **{state.UPLOAD: text_upload(X),
                                                   state.DATASET: compute.UPLOAD_DATASET})
    ok(at.run())
    box = at.selectbox(key="tp_corpus")
    assert box.value == tp.UPLOAD
    assert box.options == ["Your data (docword.small.txt)",
                           "Text demo: synthetic corpus at the KOS shape, planted topics"]
    at.slider(key="tp_r").set_value(2)
    at.slider(key="tp_k").set_value(5)
    settled(at)
    table = topic_table(at)
    found = [{int(c.split("word")[1].split(" ")[0]) for c in table[col]} for col in table.columns]
    assert sorted(map(sorted, found)) == [[0, 1, 2, 3, 4], [10, 11, 12, 13, 14]]


def test_too_many_words_asked_is_an_error_not_a_crash():
    at = page_app("topics.py", timeout=TIMEOUT, **{state.UPLOAD: text_upload(small_corpus()),
                                                   state.DATASET: compute.UPLOAD_DATASET})
    ok(at.run())  # 8 topics x 15 words > 30 words
    assert "need 120 distinct words; the corpus has 30" in " ".join(e.value for e in at.error)


def test_dense_upload_is_not_offered():
    up = compute.Upload(X=np.ones((4, 3)), feature_names=["a", "b", "c"], labels=None,
                        image_shape=None, notes=[], metadata=None, source_name="d.csv")
    at = ok(page_app("topics.py", timeout=TIMEOUT, **{state.UPLOAD: up}).run())
    assert not any(o.startswith("Your data") for o in at.selectbox(key="tp_corpus").options)


def _zip_corpus(X) -> bytes:
    C = sp.coo_matrix(X)
    doc = f"{C.shape[0]}\n{C.shape[1]}\n{C.nnz}\n" + "".join(
        f"{d + 1} {w + 1} {int(v)}\n" for d, w, v in zip(C.row, C.col, C.data))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("docword.small.txt.gz", gzip.compress(doc.encode()))
        zf.writestr("vocab.small.txt", "\n".join(WORDS[: C.shape[1]]) + "\n")
    return buf.getvalue()


def test_your_data_reads_a_text_corpus_sparse():
    X = small_corpus()
    at = ok(page_app("your_data.py", timeout=TIMEOUT).run())
    at.file_uploader(key="yd_file").set_value(("small.zip", _zip_corpus(X), "application/zip"))
    ok(at.run())
    assert not at.error, [e.value for e in at.error]
    assert "Preview of the text corpus" in [s.value for s in at.subheader]
    at.button(key="yd_use").click()
    ok(at.run())
    up = at.session_state[state.UPLOAD]
    assert sp.issparse(up.X) and (up.X != X).nnz == 0
    assert up.feature_names == WORDS
    assert at.session_state[state.DATASET] == compute.UPLOAD_DATASET
    assert "on the *Topics* page" in " ".join(i.value for i in at.info)


@pytest.mark.parametrize("page", ["variance_vs_k.py", "several_components.py"])
def test_dense_pages_say_a_text_upload_belongs_on_topics(page):
    at = page_app(page, timeout=TIMEOUT, **{state.UPLOAD: text_upload(small_corpus()),
                                            state.DATASET: compute.UPLOAD_DATASET, state.K: 4})
    ok(at.run())
    assert "your data is a text corpus (80 documents × 30 words, kept sparse): open the *Topics* " \
        "page" in " ".join(e.value for e in at.error)


def test_sparse_upload_dataset_keeps_x_sparse_and_centers_implicitly():
    X = small_corpus()
    ds = tp.sparse_upload_dataset(text_upload(X), ("center",), "your-data")
    assert sp.issparse(ds.X) and ds.preprocessing == ("counts", "center")
    np.testing.assert_allclose(ds.mean, X.toarray().mean(axis=0))
    ds = tp.sparse_upload_dataset(text_upload(X), ("log1p", "center"), "your-data")
    np.testing.assert_allclose(ds.X.toarray(), np.log1p(X.toarray()))
    ds = tp.sparse_upload_dataset(text_upload(X), ("center", "standardize"), "your-data")
    assert any("standardize is not applied" in nt for nt in ds.notes)


# --------------------------------------------------------------------------- pure functions

def _table(seed=0, n=12, r=3, k=4):
    rng = np.random.default_rng(seed)
    L = np.zeros((n, r))
    for j in range(r):
        idx = rng.choice(n, k, replace=False)
        L[idx, j] = rng.random(k) + 0.1
    L /= np.linalg.norm(L, axis=0)
    return L, topics_table(L, [f"w{i}" for i in range(n)])


def test_topics_grid_one_panel_per_component_heaviest_first():
    L, table = _table()
    fig = tfigs.topics_grid(table, n_cols=2, variance=[3.0, 2.0, 1.0])
    assert len(fig.data) == 3
    for j, trace in enumerate(fig.data):
        col = L[:, j]
        order = np.argsort(-col, kind="stable")[: np.count_nonzero(col)]
        assert list(trace.y) == [f"w{i}" for i in order]
        np.testing.assert_allclose(trace.x, col[order])
    titles = [a.text for a in fig.layout.annotations]
    assert titles[0] == "Topic 1 — var 3"


def test_topic_bars_and_variance_figures():
    L, table = _table(1)
    fig = tfigs.topic_bars(table, 2)
    np.testing.assert_allclose(sorted(fig.data[0].x, reverse=True), sorted(L[L[:, 1] > 0, 1],
                                                                       reverse=True))
    fig = tfigs.topic_variance([3.0, 2.0], [3.0, 4.5])
    assert list(fig.data[1].y) == [3.0, 4.5]
    with pytest.raises(ValueError, match=r"`table` needs columns"):
        tfigs.topics_grid(pd.DataFrame({"a": [1]}))


def test_wide_table_and_planted_match_brute_force():
    L, table = _table(2)
    wide = tp.wide_table(table)
    assert list(wide.columns) == ["Topic 1", "Topic 2", "Topic 3"]
    for j in range(3):
        first = int(np.argmax(L[:, j]))
        assert wide[f"Topic {j + 1}"].iloc[0] == f"w{first} ({L[first, j]:.3f})"
    planted = [np.flatnonzero(L[:, 0]), np.arange(12)]
    match = tp.planted_match(table, planted)
    for j in range(3):
        found = set(np.flatnonzero(L[:, j]).tolist())
        best = max(len(found & set(p.tolist())) / len(found | set(p.tolist())) for p in planted)
        assert match["Jaccard"].iloc[j] == pytest.approx(best)
    assert match["Jaccard"].iloc[0] == 1.0 and match["best planted topic"].iloc[0] == 1


# ------------------------------------------------- issue 41: numbers, one document's topic
def test_numbers_are_not_words_by_default_and_indices_still_name_the_vocabulary():
    vocab = ["apple", "1999", "pear", "2000", "3.5", "plum", "12:30", "b2b"]
    rng = np.random.default_rng(0)
    X = sp.csr_matrix(rng.integers(0, 3, size=(20, len(vocab))))
    corpus = tp.Corpus(X=X, vocabulary=vocab, title="t", token="numbers-test", notes=[])
    Xk, words, kept, notes = tp.words_used.__wrapped__("numbers-test", False, 1.0, _corpus=corpus)
    used = [vocab[j] for j in kept]
    assert used == list(words) and set(used) <= {"apple", "pear", "plum", "b2b"}
    assert not set(used) & {"1999", "2000", "3.5", "12:30"}
    assert any("4 number(s) left out" in nt for nt in notes)
    np.testing.assert_array_equal(Xk.toarray(), X.toarray()[:, kept])  # the columns of the kept words
    _, words2, kept2, _ = tp.words_used.__wrapped__("numbers-test", False, 1.0, True, _corpus=corpus)
    assert "1999" in list(words2) and len(kept2) >= len(kept)


def test_a_topic_of_one_document_is_found():
    rng = np.random.default_rng(1)
    X = sp.csr_matrix(rng.poisson(0.3, size=(50, 30)).astype(float))
    X = sp.lil_matrix(X)
    X[7, 20:25] = 400.0  # one huge document on words 20..24
    X = X.tocsr()
    L = np.zeros((30, 2))
    L[20:25, 0] = 1 / np.sqrt(5)          # that document's words
    L[0:5, 1] = 1 / np.sqrt(5)            # words spread over many documents
    found = tp.dominated_topics(X, L)
    assert [(j, i) for j, i, _ in found] == [(0, 7)]
    S = X.toarray() @ L
    assert found[0][2] == pytest.approx(S[7, 0] ** 2 / (S[:, 0] ** 2).sum())


# ------------------------------------------------- issue 41: progress, an estimate and Stop
def test_topics_unit_reports_progress_to_the_end_and_stops_when_told():
    from ui.topics_units import topics_unit

    X = small_corpus()
    seen = []
    out = topics_unit(X, method="bipartite", r=2, k=5, weighting="counts", center=True, seed=0, d=3,
                      samples=50, callback=lambda done, total: seen.append((done, total)))
    assert seen[0] == (0, 1000) and seen[-1] == (1000, 1000)
    assert all(t == 1000 for _, t in seen) and [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert out["loadings"].shape == (30, 2) and np.all(np.diff(out["variance"]) <= 0)

    def stop(done, total):
        if done > 0:
            raise jobs.Cancelled

    with pytest.raises(jobs.Cancelled):
        topics_unit(X, method="tpower", r=2, k=5, weighting="counts", center=True, seed=0, d=3, samples=50,
                    callback=stop)


def test_estimate_is_the_time_left_at_the_pace_so_far():
    assert tj.estimate(0.01, 10.0) == "estimating the time left…"
    assert tj.estimate(0.25, 10.0) == "at most about 30 s left"  # 10 s for a quarter: 30 s for the rest
    assert tj.estimate(0.1, 60.0) == "at most about 9 min left"


def test_page_shows_progress_with_stop_then_continue():
    """A topics job still computing: the page draws its progress and Stop, not the topics; Stop
    stops it and the page offers Continue."""
    up = text_upload(small_corpus())
    params = tp.topics_params("bipartite", 2, 5, "raw", True, 0, True, tp.DEFAULT_MAX_DF, False)
    key = tp.topics_key(f"upload:{up.token}", "bipartite", params)
    jobs.REGISTRY.forget(lambda k: k == key)

    def slow(unit, ctx):  # reports a quarter done, then waits to be stopped
        while True:
            ctx(250, 1000)
            time.sleep(0.05)

    job = jobs.REGISTRY.submit(key, "slow topics", ["topics"], slow)
    try:
        at = page_app("topics.py", timeout=TIMEOUT, **{state.UPLOAD: up, state.DATASET: compute.UPLOAD_DATASET})
        at.session_state["tp_r"], at.session_state["tp_k"] = 2, 5
        ok(at.run())
        assert not at.dataframe  # no topics yet
        bars = [p.text if hasattr(p, "text") else str(p.proto) for p in at.get("progress")]
        assert bars and "Finding 2 topics of 5 words: 25%" in bars[0], bars
        at.button(key="tp_halt").click()
        ok(at.run())
        assert job.join(30) and job.view().status == "stopped"
        assert "stopped. Press Continue" in " ".join(i.value for i in at.info)
        assert at.button(key="tp_continue")
    finally:
        jobs.REGISTRY.stop(key)
        jobs.REGISTRY.forget(lambda k: k == key)


# ------------------------------------------------- issue 41: one document's topics, named
def test_one_huge_document_is_named_in_one_warning_for_its_topics():
    X = sp.lil_matrix(small_corpus())
    X[7, 20:30] = 500.0  # document 8 repeats ten words
    up = text_upload(X.tocsr())
    docs = [f"doc{i:02d}.txt" for i in range(X.shape[0])]
    up = dataclasses.replace(up, metadata=pd.DataFrame({"document": docs}))
    at = page_app("topics.py", timeout=TIMEOUT, **{state.UPLOAD: up, state.DATASET: compute.UPLOAD_DATASET})
    at.session_state["tp_r"], at.session_state["tp_k"] = 2, 5
    settled(at)
    warned = [w.value for w in at.warning if "mostly one document" in w.value]
    assert len(warned) == 1 and "document 8 (doc07.txt) carries" in warned[0], warned


def test_dominated_lines_group_the_topics_of_one_document():
    lines = tp.dominated_lines([(0, 3, 0.9), (2, 3, 0.75), (1, 5, 0.6)], [f"d{i}" for i in range(6)])
    assert lines[0].startswith("Topics 1, 3 are mostly one document: document 4 (d3) carries 90%, 75% of "
                               "their scores")
    assert lines[1].startswith("Topic 2 is mostly one document: document 6 (d5) carries 60% of its scores")


def test_topic_tables_hold_at_most_four_topics_and_widths_fit_every_cell():
    L, table = _table(n=40, r=7, k=6)
    wide = tp.wide_table(table)
    parts = tp.table_chunks(wide)
    assert [list(p.columns) for p in parts] == [[f"Topic {j}" for j in range(1, 5)],
                                                [f"Topic {j}" for j in range(5, 8)]]
    pd.testing.assert_frame_equal(pd.concat(parts, axis=1), wide)
    for part in parts:
        widths = tp.column_widths(part)
        for col in part.columns:
            longest = max(len(col), *(len(v) for v in part[col]))
            assert widths[col] == tp.CHAR_PX * longest + tp.CELL_PAD_PX
