"""Benchmark: topics of a raw-text corpus where one document dominates (issue 41).

The issue's corpus: 300 raw text documents, one of them a 2 MB file list, many numbers; its topics
took 8-10 minutes where Austen's 1,471 documents took 8.5 s.  Written here: 299 prose-like
documents (words from a Zipf law over a 12,000-word vocabulary, median about 560 words, a few
years each) and one document of ``--big-mb`` MB of file-list lines (paths, dates, times, sizes),
zipped and read by ``load_file`` as an upload is.  The topics are computed as the Topics page
computes them (English stop words and words of more than 70% of the documents left out, raw counts,
centered, bipartite matchings with a rank-5 sketch and 300 sampled points, r = 8 topics of s = 15
words).

Printed from one run, CPU time of this process with one BLAS thread: the topics with the net
search's old bound alone ("before") and with the disjointness bound ("after"), the ratio, the
assignments each solved and the total variance each found; the same on a control corpus where the
big document is an ordinary one; and which topics are mostly one document.

Usage: ``python benchmarks/bench_topics.py [--big-mb MB] [--samples N]``.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import time
import zipfile
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402


def _words(n: int, rng) -> list:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    out, seen = [], set()
    while len(out) < n:
        w = "".join(rng.choice(letters, int(rng.integers(3, 10))))
        if w not in seen:
            seen.add(w)
            out.append(w)
    return out


def documents(n_docs: int = 300, big_mb: float = 2.0, seed: int = 0) -> list:
    """``n_docs`` documents: prose-like ones with a few years, and (``big_mb`` > 0) one of
    ``big_mb`` MB of file-list lines in the middle."""
    rng = np.random.default_rng(seed)
    vocab = np.array(_words(12_000, rng), dtype=object)
    p = 1.0 / (np.arange(vocab.size) + 2.7)
    p /= p.sum()
    docs = []
    for _ in range(n_docs - (big_mb > 0)):
        toks = list(vocab[rng.choice(vocab.size, int(rng.lognormal(np.log(557), 0.5)), p=p)])
        toks += [str(y) for y in rng.integers(1950, 2024, int(rng.integers(0, 15)))]
        rng.shuffle(toks)
        docs.append(" ".join(toks))
    if big_mb > 0:
        common, lines, size = list(vocab[:200]), [], 0
        while size < big_mb * 1e6:
            line = (f"home/user/{rng.choice(common)}/src/{rng.choice(common)}/file_{rng.integers(10**5)}.py "
                    f"{rng.integers(1990, 2024)}-{rng.integers(1, 13):02d}-{rng.integers(1, 29):02d} "
                    f"{rng.integers(0, 24):02d}:{rng.integers(0, 60):02d} {rng.integers(10**6)}")
            lines.append(line)
            size += len(line) + 1
        docs.insert(n_docs // 2, "\n".join(lines))
    return docs


def zipped(docs: list) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for i, d in enumerate(docs):
            zf.writestr(f"doc{i:03d}.txt", d)
    return buf.getvalue()


def topics(X, r: int, k: int, samples: int):
    """The Topics page's computation (bipartite), without Streamlit."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    from nspca_core.operators.sparse import as_sparse_cov
    from nspca_core.io.documents import prune_vocabulary
    from nspca_core.peers.bipartite import bipartite_components
    from nspca_core.text import text_weighting

    words = [str(j) for j in range(X.shape[1])]
    p = prune_vocabulary(X, words, stop_words=frozenset(ENGLISH_STOP_WORDS), min_df=1, max_df=0.7)
    w = text_weighting(p.X, weighting="counts", center=True)
    cov = as_sparse_cov(w.X, center=w.center)
    return p.X, bipartite_components(cov, r, k, d=min(5, cov.n), samples=samples, seed=0)


def timed(fn):
    t0 = time.process_time()
    out = fn()
    return out, time.process_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--big-mb", type=float, default=2.0)
    ap.add_argument("--samples", type=int, default=300)
    args = ap.parse_args()
    from nspca_core.io import load_file
    from nspca_core.peers import bipartite as bp

    new = bp._net_bounds

    def old(V, C, s, nonneg):  # the bound of every pair alone: the search before issue 41
        patterns, bounds, _ = new(V, C, s, nonneg)
        return patterns, bounds, None

    for label, big in (("one 2 MB file list among 300 documents", args.big_mb), ("control: no big document", 0)):
        up, secs = timed(lambda big=big: load_file(zipped(documents(big_mb=big)), filename="docs.zip"))
        X = up.X
        print(f"{label}: {X.shape[0]:,} documents x {X.shape[1]:,} words, {X.nnz:,} nonzeros "
              f"(read in {secs:.1f} s CPU; largest document {X.sum(axis=1).max():,.0f} words)")
        runs = {}
        for name, bound in (("before", old), ("after", new)):
            bp._net_bounds = bound
            try:
                runs[name] = timed(lambda: topics(X, 8, 15, args.samples))
            finally:
                bp._net_bounds = new
        (Xu, before), t_before = runs["before"]
        (_, after), t_after = runs["after"]
        ev = before.info["eigenvalues"]
        print(f"  eigenvalues of the sketch: {ev[0]:.4g}, {ev[1]:.4g}, ... (first / second = {ev[0] / ev[1]:,.0f})")
        print(f"  before: {t_before:7.2f} s CPU, {before.info['assignments']:,} assignments, total variance "
              f"{before.total_variance:.6g}")
        print(f"  after:  {t_after:7.2f} s CPU, {after.info['assignments']:,} assignments, total variance "
              f"{after.total_variance:.6g}")
        print(f"  ratio before / after: {t_before / max(t_after, 1e-9):,.1f}x")
        S = np.asarray(Xu @ np.asarray(after.loadings)) ** 2
        share = S.max(axis=0) / np.maximum(S.sum(axis=0), 1e-300)
        print(f"  topics mostly one document (share of the squared scores >= 0.5): "
              f"{[int(j) + 1 for j in np.flatnonzero(share >= 0.5)]}")


if __name__ == "__main__":
    main()
