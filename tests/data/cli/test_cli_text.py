"""The CLI on small text corpora the tests write: topics printed, topics.csv and a
nonzero-only components.csv written, variances equal a dense brute force, the matrix
never densified; bad inputs and offline registry corpora exit 1 with a message."""

from __future__ import annotations

import gzip
import json
import re
import urllib.error

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from nspca_core import cli
from nspca_core.corpus import synthetic_corpus

K, R = 6, 3


@pytest.fixture(scope="module")
def corpus():
    return synthetic_corpus(120, 60, nnz=1500, n_topics=3, topic_size=6, seed=3)


def write_docword(folder, X, words=None, name="small", gz=False):
    C = sp.coo_matrix(X)
    text = f"{C.shape[0]}\n{C.shape[1]}\n{C.nnz}\n" + "".join(
        f"{d + 1} {w + 1} {int(v)}\n" for d, w, v in zip(C.row, C.col, C.data))
    path = folder / (f"docword.{name}.txt" + (".gz" if gz else ""))
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    if words is not None:
        (folder / f"vocab.{name}.txt").write_text("\n".join(words) + "\n")
    return path


def brute_cov(X, weighting="raw", center=True):
    """The covariance the CLI should use, built densely (small inputs only)."""
    D = np.asarray(X.toarray(), dtype=float)
    if weighting == "log1p":
        D = np.log1p(D)
    elif weighting == "tfidf":
        df = (D > 0).sum(axis=0)
        D = D * (np.log((1 + D.shape[0]) / (1 + df)) + 1)
    if center:
        D = D - D.mean(axis=0)
    return D.T @ D / D.shape[0]


def run(argv, capsys):
    try:
        code = cli.main([str(a) for a in argv])
    except SystemExit as exc:  # argparse's usage errors exit (with code 1 here)
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def no_densify(monkeypatch):
    """Fail if any scipy.sparse matrix is turned into a dense one of the full corpus size."""
    import scipy.sparse._base as base

    real = base._spbase.toarray

    def guarded(self, *args, **kwargs):
        if self.shape[0] * self.shape[1] >= 120 * 60:
            raise AssertionError(f"a {self.shape} sparse matrix was densified")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(base._spbase, "toarray", guarded)
    monkeypatch.setattr(base._spbase, "todense", guarded)


@pytest.mark.parametrize("strategy, weighting", [("bipartite", "raw"), ("deflation-remove", "tfidf"),
                                                 ("bipartite", "log1p")])
def test_fit_text_writes_topics(tmp_path, capsys, corpus, strategy, weighting, no_densify):
    path = write_docword(tmp_path, corpus.X, corpus.vocabulary)
    out_dir = tmp_path / "out"
    code, out, err = run(["fit", path, "--components", R, "--k", K, "--strategy", strategy,
                          "--weighting", weighting, "--out", out_dir, "--quiet"], capsys)
    assert code == 0, err
    assert "vocab.small.txt found beside" in err and "sparse" in err
    topics = pd.read_csv(out_dir / "topics.csv")
    comps = pd.read_csv(out_dir / "components.csv")
    summary = json.loads((out_dir / "summary.json").read_text())
    assert summary["weighting"] == weighting and summary["sparse"] is True
    assert summary["centered"] is True and summary["nonzeros"] == corpus.X.nnz
    # every topic printed with its words and weights, in the order of topics.csv
    A = brute_cov(corpus.X, weighting)
    n = corpus.X.shape[1]
    for j in range(1, R + 1):
        t = topics[topics["component"] == j]
        assert 1 <= len(t) <= K and (t["weight"] > 0).all()
        assert list(t["weight"]) == sorted(t["weight"], reverse=True)
        assert list(t["word"]) == [corpus.vocabulary[i] for i in t["word_index"]]
        line = next(ln for ln in out.splitlines() if ln.startswith(f"topic {j} "))
        assert f"{t['word'].iloc[0]} ({t['weight'].iloc[0]:.3f})" in line
        x = np.zeros(n)
        x[t["word_index"].to_numpy()] = t["weight"].to_numpy()
        # the variance reported equals x^T A x on the dense brute-force covariance
        assert summary["components"][j - 1]["variance"] == pytest.approx(x @ A @ x, rel=1e-4)
        assert summary["components"][j - 1]["words"] == list(t["word"])
    # components.csv: the nonzero loadings only, words included, same numbers as topics.csv
    assert list(comps.columns[:2]) == ["word", "word_index"]
    assert len(comps) == topics["word_index"].nunique()
    assert (comps.iloc[:, 2:].to_numpy() != 0).any(axis=1).all()
    for _, row in topics.iterrows():
        got = comps.loc[comps["word_index"] == row["word_index"], f"component_{row['component']}"]
        assert got.iloc[0] == pytest.approx(row["weight"], rel=1e-5)
    assert pd.read_csv(out_dir / "scores.csv").shape == (corpus.X.shape[0], R)


def test_fit_text_gz_with_vocab_option_and_uncentered(tmp_path, capsys, corpus):
    path = write_docword(tmp_path, corpus.X, None, name="g", gz=True)
    vocab = tmp_path / "words.txt"
    vocab.write_text("\n".join(corpus.vocabulary) + "\n")
    code, out, err = run(["fit", path, "--vocab", vocab, "--components", 2, "--k", K,
                          "--preprocessing", "none", "--no-certify", "--out", tmp_path / "o",
                          "--quiet"], capsys)
    assert code == 0, err
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["centered"] is False and summary["weighting"] == "raw"
    t = pd.read_csv(tmp_path / "o" / "topics.csv")
    x = np.zeros(corpus.X.shape[1])
    first = t[t["component"] == 1]
    x[first["word_index"].to_numpy()] = first["weight"].to_numpy()
    A = brute_cov(corpus.X, center=False)
    assert summary["components"][0]["variance"] == pytest.approx(x @ A @ x, rel=1e-4)
    assert set(first["word"]) <= set(corpus.vocabulary)


def test_certify_text_component(tmp_path, capsys, corpus):
    path = write_docword(tmp_path, corpus.X, corpus.vocabulary)
    x = np.zeros(corpus.X.shape[1])
    x[corpus.topics[0][:K]] = 1 / np.sqrt(K)
    xfile = tmp_path / "x.csv"
    xfile.write_text("x\n" + "\n".join(f"{v:.17g}" for v in x) + "\n")
    code, out, err = run(["certify", path, "--k", K, "--x", xfile, "--quiet"], capsys)
    assert code == 0, err
    lower = float(out.split("variance=")[1].split()[0])
    assert lower == pytest.approx(x @ brute_cov(corpus.X) @ x, rel=1e-5)


@pytest.mark.parametrize("extra, match", [
    (["--preprocessing", "standardize"], r"--preprocessing standardize does not apply to a text"),
    (["--weighting", "bm25"], r"invalid choice: 'bm25'"),
    (["--vocab", "missing.txt"], r"--vocab 'missing.txt' is not a file"),
    (["--k", "0"], r"--k must be an int in \[1, n_features=60\]; got 0"),
])
def test_bad_text_options_exit_1(tmp_path, capsys, corpus, extra, match, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write_docword(tmp_path, corpus.X, corpus.vocabulary)
    argv = ["fit", path, "--components", 2, "--out", tmp_path / "o", "--quiet"]
    argv += extra if "--k" in extra else ["--k", K] + extra
    code, out, err = run(argv, capsys)
    assert code == 1
    assert re.search(match, err), err


@pytest.mark.parametrize("body, match", [
    (b"3\n4\n9\n1 1 1\n", r"NNZ=9 triples but the file has fewer"),
    (b"3\n4\n1\n1 9 1\n", r"wordID must be in \[1, 4\]"),
    (b"three\n4\n1\n1 1 1\n", r"line 1 should hold D"),
])
def test_malformed_docword_exit_1(tmp_path, capsys, body, match):
    path = tmp_path / "docword.bad.txt"
    path.write_bytes(body)
    code, _, err = run(["fit", path, "--k", 2, "--out", tmp_path / "o", "--quiet"], capsys)
    assert code == 1 and err.startswith("error: ")
    assert re.search(match, err), err


def test_vocab_of_wrong_size_exit_1(tmp_path, capsys, corpus):
    path = write_docword(tmp_path, corpus.X, corpus.vocabulary[:-1])
    code, _, err = run(["fit", path, "--k", K, "--out", tmp_path / "o", "--quiet"], capsys)
    assert code == 1 and "vocabulary has 59 words but the matrix has 60" in err


def test_text_options_refused_for_dense_data(tmp_path, capsys):
    code, _, err = run(["fit", "digits", "--k", 3, "--weighting", "tfidf", "--out", tmp_path / "o"],
                       capsys)
    assert code == 1 and "--weighting applies only to text corpora" in err


@pytest.mark.parametrize("name", ["kos", "nips", "enron", "nytimes"])
def test_registry_corpus_offline_exit_1(tmp_path, capsys, monkeypatch, name):
    monkeypatch.setenv("NSPCA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("NSPCA_DATA_DIR", str(tmp_path / "data"))
    code, _, err = run(["fit", name, "--k", 5, "--out", tmp_path / "o"], capsys)
    assert code == 1
    assert f"corpus {name!r} is not available locally" in err and "pass --download" in err

    import nspca_core.datasets as D

    def offline(url, dest):
        raise urllib.error.URLError("no network in tests")

    monkeypatch.setattr(D.download, "_fetch", offline)
    code, _, err = run(["fit", name, "--k", 5, "--download", "--out", tmp_path / "o"], capsys)
    assert code == 1 and "this machine seems to be offline" in err


def test_registry_corpus_local_copy(tmp_path, capsys, monkeypatch, corpus):
    monkeypatch.setenv("NSPCA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("NSPCA_DATA_DIR", str(tmp_path))
    write_docword(tmp_path, corpus.X, corpus.vocabulary, name="kos", gz=True)
    code, out, err = run(["fit", "kos", "--k", K, "--components", 2, "--strategy", "bipartite",
                          "--no-certify", "--out", tmp_path / "o", "--quiet"], capsys)
    assert code == 0, err
    assert "read corpus kos: 120 documents x 60 words" in err
    assert out.count("\ntopic ") + out.startswith("topic ") == 2
    assert (tmp_path / "o" / "topics.csv").is_file()
