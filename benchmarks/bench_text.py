"""Benchmark: large raw-text inputs (issue 40, last paragraph).

Two synthetic inputs, written in a temporary folder, each read by ``load_file`` in a fresh child
process (imports done and a tiny file read first, so the clock and the memory figure see the read
only):

- ``zip``: a ``.zip`` of ``.txt`` documents (``--text-mb`` MB of text in all, default 40; the issue's
  was 150 MB), words drawn from a Zipf law over a 200,000-word vocabulary, ``--words-per-doc``
  words per document (default 1,200: 150 MB is then about 18,000 documents, under the 20,000 files a
  .zip may hold);
- ``million``: a ``.zip`` of short documents that hold ``--distinct`` distinct words (default
  1,000,000, the issue's), every word at least once and most of them once or twice;
- ``docword``: the same vocabulary as a UCI ``docword.million.txt`` (10,000 documents, about 2
  triples per word) with its ``vocab.million.txt`` beside it.

Printed for each, from one run: the seconds of the read, the peak memory of the read (the child's
peak resident set, ``VmHWM`` of ``/proc/self/status``, minus its resident set just before the call;
the file's bytes, which ``load_file`` holds as an upload does, are part of it) divided by the bytes
of text (target <= 4), and how many progress reports the read made (target: some, the last one
saying done == total).

``--baseline DIR`` reads every input a second time with the checkout in ``DIR`` (e.g. a
``git archive`` of main unpacked there), in the same run: the before/after ratios of one run.

Usage: ``python benchmarks/bench_text.py [--text-mb MB] [--distinct N] [--only zip|million]
[--baseline DIR]``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

ROOT = Path(__file__).resolve().parents[1]


def _status(key: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"{key} not in /proc/self/status")


def _words(n: int, rng) -> list:
    """``n`` distinct lower-case words of 4 to 11 letters."""
    import numpy as np

    letters = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", dtype="S1")
    out, seen = [], set()
    while len(out) < n:
        lengths = rng.integers(4, 12, size=n)
        codes = rng.integers(0, 26, size=(n, 11))
        for L, row in zip(lengths, codes):
            w = b"".join(letters[row[:L]]).decode()
            if w not in seen:
                seen.add(w)
                out.append(w)
                if len(out) == n:
                    break
    return out


def write_zip(path: Path, text_bytes: int, words_per_doc: int = 2000, seed: int = 0) -> int:
    """A .zip of documents of Zipf-distributed words; returns the bytes of text written."""
    import numpy as np

    rng = np.random.default_rng(seed)
    vocab = np.array(_words(200_000, rng), dtype=object)
    total = 0
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        i = 0
        while total < text_bytes:
            idx = np.minimum(rng.zipf(1.3, size=words_per_doc) - 1, vocab.size - 1)
            doc = " ".join(vocab[idx]).encode()
            zf.writestr(f"docs/doc{i:06d}.txt", doc)
            total += len(doc)
            i += 1
    return total


def write_million(path: Path, distinct: int, seed: int = 1) -> int:
    """A .zip of short documents holding ``distinct`` distinct words; returns the text bytes."""
    import numpy as np

    rng = np.random.default_rng(seed)
    vocab = np.array(_words(distinct, rng), dtype=object)
    order = np.concatenate([rng.permutation(distinct), rng.integers(0, distinct, size=distinct)])
    total = 0
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for i, start in enumerate(range(0, order.size, 200)):
            doc = " ".join(vocab[order[start:start + 200]]).encode()
            zf.writestr(f"d{i:06d}.txt", doc)
            total += len(doc)
    return total


def write_docword(path: Path, distinct: int, seed: int = 2) -> int:
    """A UCI ``docword`` file of 10,000 documents over ``distinct`` words (every word at least
    once, about 2 per word) and its ``vocab`` beside it; returns the bytes of both."""
    import numpy as np

    rng = np.random.default_rng(seed)
    words = _words(distinct, rng)
    vocab = path.with_name("vocab." + path.name[len("docword."):])
    vocab.write_text("\n".join(words) + "\n")
    order = np.concatenate([rng.permutation(distinct), rng.integers(0, distinct, size=distinct)])
    docs = np.repeat(np.arange(10_000), order.size // 10_000)
    pairs = np.unique(np.stack([docs, order[:docs.size]], 1), axis=0)
    with open(path, "w") as fh:
        fh.write(f"10000\n{distinct}\n{len(pairs)}\n")
        np.savetxt(fh, np.column_stack([pairs + 1, rng.integers(1, 4, size=len(pairs))]), fmt="%d")
    return path.stat().st_size + vocab.stat().st_size


def child(path: str) -> None:
    """One read in this process; prints JSON {seconds, peak_bytes, shape, reports}."""
    sys.path.insert(0, str(ROOT))
    import inspect

    from nspca_core.io import load_file

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("a.txt", "alpha beta gamma delta")
        zf.writestr("b.txt", "alpha beta gamma epsilon")
    load_file(buf.getvalue(), filename="warm.zip", min_df=1)
    reports: list = []
    kw = {"callback": lambda done, total: reports.append((done, total))} \
        if "callback" in inspect.signature(load_file).parameters else {}
    before = _status("VmRSS")
    t0 = time.perf_counter()
    out = load_file(path, max_bytes=2_000_000_000, **kw)
    seconds = time.perf_counter() - t0
    peak = _status("VmHWM") - before
    print(json.dumps({"seconds": seconds, "peak_bytes": peak, "shape": list(out.X.shape),
                      "reports": len(reports), "last": reports[-1] if reports else None,
                      "file_bytes": os.path.getsize(path)}))


def run_child(path: Path, root: Path = ROOT) -> dict:
    """One read of ``path`` in a fresh process importing the nspca_core of ``root``."""
    script = root / "benchmarks" / "bench_text.py"
    proc = subprocess.run([sys.executable, str(script), "--child", str(path)], capture_output=True,
                          text=True, cwd=root)
    if proc.returncode:
        raise RuntimeError(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--child", default=None)
    ap.add_argument("--text-mb", type=float, default=40.0)
    ap.add_argument("--words-per-doc", type=int, default=1200)
    ap.add_argument("--distinct", type=int, default=1_000_000)
    ap.add_argument("--only", choices=["zip", "million", "docword"], default=None)
    ap.add_argument("--baseline", default=None, help="another checkout: each input read by it too")
    args = ap.parse_args()
    if args.child:
        child(args.child)
        return
    with tempfile.TemporaryDirectory() as tmp:
        cases = []
        if args.only in (None, "zip"):
            p = Path(tmp) / "text.zip"
            cases.append((f"zip of .txt ({args.words_per_doc:,} words each)", p,
                          write_zip(p, int(args.text_mb * 1e6), args.words_per_doc)))
        if args.only in (None, "million"):
            p = Path(tmp) / "million.zip"
            cases.append((f"{args.distinct:,} distinct words", p, write_million(p, args.distinct)))
        if args.only in (None, "docword"):
            p = Path(tmp) / "docword.million.txt"
            cases.append((f"docword of {args.distinct:,} words (bytes of docword + vocab as 'text')", p,
                          write_docword(p, args.distinct)))
        roots = [("", ROOT)] + ([("baseline ", Path(args.baseline).resolve())] if args.baseline else [])
        for label, path, text in cases:
            for tag, root in roots:
                r = run_child(path, root)
                print(f"{tag}{label}: {text / 1e6:,.1f} MB of text in a {r['file_bytes'] / 1e6:,.1f} MB "
                      f"file -> {r['shape'][0]:,} x {r['shape'][1]:,} in {r['seconds']:,.1f} s; peak "
                      f"{r['peak_bytes'] / 1e6:,.0f} MB = {r['peak_bytes'] / text:.2f} x the text "
                      f"(target <= 4); {r['reports']} progress report(s), last {r['last']}")


if __name__ == "__main__":
    main()
