"""Fuzz suite of sparse corpus files (issue 31, items 1 and 5), in the style of test_fuzz_files.py:
a table of hostile files the tests write with the outcome each must have, through ``load_file``
and the command line, and hypothesis where the input space is large (announced sizes, repeated
entries).

* A Matrix Market file that writes a position twice is summed *and says so* with the count.
* A header that announces sizes its file cannot hold (2e9 x 2e9 in 40 bytes, more entries than
  bytes) is refused with the memory estimate before anything is allocated: a child process with a
  2 GiB address-space cap reads the forged files and must get the refusal, not a MemoryError.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nspca_core import cli, load_file
from nspca_core.io import DataFormatError
from nspca_core.io.bow import MAX_ANNOUNCED_BYTES, _repeated_note, check_announced

ROOT = Path(__file__).resolve().parents[3]
OUTCOMES: Counter = Counter()
BIG = 2_000_000_000
MM = b"%%MatrixMarket matrix coordinate real general\n"


def mtx(rows, cols, entries, nnz=None, banner=MM):
    nnz = len(entries) if nnz is None else nnz
    body = "".join(f"{i} {j} {v}\n" for i, j, v in entries)
    return banner + f"{rows} {cols} {nnz}\n{body}".encode()


def docword(D, W, triples, nnz=None):
    nnz = len(triples) if nnz is None else nnz
    return (f"{D}\n{W}\n{nnz}\n" + "".join(f"{d} {w} {c}\n" for d, w, c in triples)).encode()


def sparse_npz(shape, row=(0,), col=(0,), data=(1.0,)) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, format=np.array(b"coo"), data=np.asarray(data, float), row=np.asarray(row),
             col=np.asarray(col), shape=np.asarray(shape))
    return buf.getvalue()


GIB = r"about [\d,.]+ GiB of memory, over the [\d,.]+ GiB allowed for a file of [\d,]+ bytes"

# name, file name, bytes, expected, regex of a note ("ok") or of the error
HOSTILE = [
    ("mtx repeated entry", "rep.mtx", mtx(2, 2, [(1, 1, 2), (1, 1, 3), (2, 2, 1)]), "ok",
     r"^1 repeated \(row, column\) entry summed into the value before: 1 position\(s\) written "
     r"more than once \(first: row 1, column 1, 2 times\)$"),
    ("mtx three repeats", "rep3.mtx",
     mtx(3, 2, [(2, 1, 1), (1, 2, 1), (2, 1, 1), (2, 1, 4), (1, 2, 1), (3, 2, 1)]), "ok",
     r"^3 repeated \(row, column\) entries summed .* 2 position\(s\) written more than once "
     r"\(first: row 1, column 2, 2 times\)$"),
    ("docword 2e9 x 2e9", "docword.big.txt", docword(BIG, BIG, [(1, 1, 1)]), "error",
     rf"header announces 2,000,000,000 x 2,000,000,000 with 1 \(docID, wordID, count\) triples; "
     rf"reading it would need {GIB}"),
    ("docword 2e9 documents", "docword.d.txt", docword(BIG, 3, [(1, 1, 1), (2, 2, 1)]), "error",
     rf"2,000,000,000 x 3 with 2 .*{GIB}"),
    ("docword NNZ over the bytes", "docword.n.txt", docword(3, 3, [(1, 1, 1)], nnz=10 ** 12),
     "error", r"the header says NNZ=1000000000000 triples but the file has fewer \(1\)"),
    ("mtx 2e9 x 2e9", "big.mtx", mtx(BIG, BIG, [(1, 1, 1)]), "error",
     rf"header announces 2,000,000,000 x 2,000,000,000 with 1 entries; reading it would need {GIB}"),
    ("mtx pattern 2e9", "pat.mtx",
     mtx(BIG, 4, [(1, 1, "")], banner=b"%%MatrixMarket matrix coordinate pattern general\n"),
     "error", rf"2,000,000,000 x 4 with 1 entries; .*{GIB}"),
    ("mtx nnz over the bytes", "n.mtx", mtx(4, 4, [(1, 1, 1)], nnz=10 ** 9), "error",
     r"announces 1,000,000,000 entries, which take at least 6,000,000,000 bytes, but only 6 bytes "
     r"follow"),
    ("mtx dense array 1e5 x 1e5", "arr.mtx",
     b"%%MatrixMarket matrix array real general\n% a comment\n100000 100000\n1\n2\n", "error",
     r"announces 10,000,000,000 entries, which take at least 20,000,000,000 bytes, but only 4 "
     r"bytes follow"),
    ("sparse npz 2e9 x 2e9", "big.npz", sparse_npz([BIG, BIG]), "error",
     rf"its 'shape' entry announces 2,000,000,000 x 2,000,000,000 with 1 stored values; .*{GIB}"),
]
IDS = [row[0] for row in HOSTILE]


@pytest.mark.parametrize("label, filename, data, expected, pattern", HOSTILE, ids=IDS)
def test_hostile_corpus_through_load_file(label, filename, data, expected, pattern):
    try:
        out = load_file(data, filename=filename)
    except DataFormatError as exc:
        OUTCOMES["table: DataFormatError"] += 1
        assert expected == "error", f"{label}: unexpected error {exc}"
        assert re.search(pattern, str(exc)), str(exc)
        return
    OUTCOMES["table: parsed with a note"] += 1
    assert expected == "ok", f"{label}: parsed but expected an error matching {pattern!r}"
    assert any(re.search(pattern, nt) for nt in out.notes), out.notes


def test_repeated_entries_are_summed_as_noted():
    out = load_file(HOSTILE[0][2], filename="rep.mtx")
    np.testing.assert_array_equal(out.X.toarray(), [[5, 0], [0, 1]])
    out = load_file(HOSTILE[1][2], filename="rep3.mtx")
    np.testing.assert_array_equal(out.X.toarray(), [[0, 2], [6, 0], [0, 1]])
    clean = load_file(mtx(2, 2, [(1, 1, 2), (2, 2, 1)]), filename="c.mtx")
    assert not any("repeated" in nt for nt in clean.notes)


@pytest.mark.parametrize("label, filename, data, expected, pattern", HOSTILE, ids=IDS)
def test_hostile_corpus_through_the_cli(label, filename, data, expected, pattern, tmp_path, capsys):
    path = tmp_path / filename
    path.write_bytes(data)
    code = cli.main(["fit", str(path), "--k", "1", "--out", str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err
    assert "Traceback" not in err and "--eps" not in err, err
    if expected == "error":
        assert code == 1 and re.search(pattern, err), err
    else:
        assert re.search(pattern.lstrip("^"), err, re.M), err


def test_forged_headers_refused_under_a_memory_cap():
    """Under a 2 GiB address-space cap (the issue saw a MemoryError under 4 GiB) every forged
    header is a DataFormatError naming the estimate: nothing the header announces is allocated."""
    cases = [(f, d) for _, f, d, e, _ in HOSTILE if e == "error"]
    code = f"""
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({2 << 30}, {2 << 30}))
from nspca_core import load_file
from nspca_core.io import DataFormatError
for filename, data in {cases!r}:
    try:
        load_file(data, filename=filename)
    except DataFormatError as exc:
        print("refused", filename, any(w in str(exc) for w in ("GiB of memory", "bytes follow",
                                                               "the file has fewer")))
    except MemoryError as exc:
        print("MEMORY", filename, exc)
"""
    env = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.strip().splitlines()
    assert lines == [f"refused {f} True" for f, _ in cases], out.stdout


# ----------------------------------------------------------------------------- hypothesis

def _outcome(where, data, filename):
    try:
        out = load_file(data, filename=filename)
    except DataFormatError as exc:
        OUTCOMES[f"{where}: DataFormatError"] += 1
        return None, str(exc)
    except Exception as exc:  # noqa: BLE001 - the point of the suite
        OUTCOMES[f"{where}: OTHER EXCEPTION"] += 1
        raise AssertionError(f"{type(exc).__name__} escaped for {data[:200]!r}: {exc}") from exc
    OUTCOMES[f"{where}: parsed"] += 1
    return out, None


SIZES = st.one_of(st.integers(1, 6), st.integers(7, 10 ** 5), st.integers(2 * 10 ** 7, 10 ** 12))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(D=SIZES, W=SIZES, extra=st.integers(-2, 10 ** 12), data=st.data())
def test_property_docword_announced_sizes(D, W, extra, data):
    """Any announced D, W, NNZ over a few real triples: read exactly as written, or refused with a
    DataFormatError; a refusal on size names the estimate, and every size within the budget
    that the file really holds is read."""
    triples = data.draw(st.lists(st.tuples(st.integers(1, 6), st.integers(1, 6), st.integers(1, 9)),
                                 min_size=2, max_size=12))
    nnz = max(len(triples) + extra, 0) if extra < 3 else len(triples)
    raw = docword(D, W, triples, nnz=nnz)
    out, err = _outcome("hypothesis/docword sizes", raw, "docword.h.txt")
    fits = all(d <= D and w <= W for d, w, _ in triples) and nnz == len(triples)
    body = len(raw) - len(f"{D}\n{W}\n{nnz}\n")
    need = 72 * (D + W + 2) + 32 * min(nnz, body // 6 + 1)  # the triples the file can hold
    if need > max(MAX_ANNOUNCED_BYTES, 8 * len(raw)):
        assert err is not None and ("GiB of memory" in err or "bytes follow" in err), err
    elif fits and min(D, W) >= 2:
        assert out is not None, err
        want: Counter = Counter()
        for d, w, c in triples:
            want[(d - 1, w - 1)] += c
        C = out.X.tocoo()
        assert out.X.shape == (D, W)
        assert {(int(i), int(j)): float(v) for i, j, v in zip(C.row, C.col, C.data)} == want
    else:
        assert err is not None


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.integers(1, 5), cols=st.integers(1, 5), data=st.data())
def test_property_mtx_repeated_entries_summed_and_counted(rows, cols, data):
    """Entries drawn with repeats: the matrix is the brute-force sum, and the note counts the
    repeated entries (written minus distinct positions) exactly; no repeat, no note."""
    entries = data.draw(st.lists(st.tuples(st.integers(1, rows), st.integers(1, cols),
                                           st.integers(1, 9)), min_size=1, max_size=12))
    out, err = _outcome("hypothesis/mtx repeats", mtx(rows, cols, entries), "h.mtx")
    if min(rows, cols) < 2:
        assert err is not None
        return
    M = np.zeros((rows, cols))
    for i, j, v in entries:
        M[i - 1, j - 1] += v
    np.testing.assert_array_equal(out.X.toarray(), M)
    repeated = len(entries) - len({(i, j) for i, j, _ in entries})
    notes = [nt for nt in out.notes if "repeated (row, column)" in nt]
    if repeated:
        assert len(notes) == 1 and notes[0].startswith(f"{repeated} repeated (row, column) entr")
        first = min((i, j) for i, j, _ in entries
                    if sum((a, b) == (i, j) for a, b, _ in entries) > 1)
        times = sum((a, b) == first for a, b, _ in entries)
        assert f"(first: row {first[0]}, column {first[1]}, {times} times)" in notes[0]
    else:
        assert not notes


@settings(max_examples=100, deadline=None)
@given(rows=st.integers(1, 40), cols=st.integers(1, 40), data=st.data())
def test_property_repeated_note_counts_like_brute_force(rows, cols, data):
    """The note's figures (each Matrix Market read above is a child process: few examples there)."""
    entries = data.draw(st.lists(st.tuples(st.integers(0, rows - 1), st.integers(0, cols - 1)),
                                 min_size=1, max_size=60))
    r, c = np.array(entries).T
    note = _repeated_note(r, c, len(set(entries)), (rows, cols))
    seen = Counter(entries)
    repeated = len(entries) - len(seen)
    if not repeated:
        assert note is None
        return
    first = min(p for p, n in seen.items() if n > 1)
    assert note.startswith(f"{repeated} repeated (row, column) entr")
    assert f": {sum(n > 1 for n in seen.values())} position(s) written more than once (first: row " \
           f"{first[0] + 1}, column {first[1] + 1}, {seen[first]} times)" in note


@settings(max_examples=80, deadline=None)
@given(rows=st.integers(0, 10 ** 13), cols=st.integers(0, 10 ** 13), entries=st.integers(0, 10 ** 13),
       file_bytes=st.integers(1, 10 ** 10), body=st.integers(0, 10 ** 10))
def test_property_check_announced_is_the_stated_rule(rows, cols, entries, file_bytes, body):
    need = 72 * (rows + cols + 2) + 32 * entries
    allowed = max(MAX_ANNOUNCED_BYTES, 8 * file_bytes)
    truncated = entries > 0 and entries * 6 > body + 1
    if truncated:
        with pytest.raises(DataFormatError, match=r"which take at least .* bytes follow the header"):
            check_announced("f", rows, cols, entries, file_bytes=file_bytes, body_bytes=body)
    elif need > allowed:
        with pytest.raises(DataFormatError, match=r"would need about .* of memory, over the"):
            check_announced("f", rows, cols, entries, file_bytes=file_bytes, body_bytes=body)
    else:
        assert check_announced("f", rows, cols, entries, file_bytes=file_bytes,
                               body_bytes=body) == need


def _zip(members: dict) -> bytes:
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.binary(max_size=120) | st.text(max_size=120).map(str.encode), min_size=1,
                max_size=6),
       st.sampled_from(["english", None]), st.integers(1, 3))
def test_property_zip_of_random_documents(docs, stop_words, min_df):
    """Any bytes as .txt documents: counted (sparse, words as names, one row per file) or a
    DataFormatError; never another exception."""
    data = _zip({f"d{i}.txt": d for i, d in enumerate(docs)})
    try:
        out = load_file(data, filename="r.zip", stop_words=stop_words, min_df=min_df)
    except DataFormatError:
        OUTCOMES["hypothesis/zip of documents: DataFormatError"] += 1
        return
    except Exception as exc:  # noqa: BLE001 - the point of the suite
        OUTCOMES["hypothesis/zip of documents: OTHER EXCEPTION"] += 1
        raise AssertionError(f"{type(exc).__name__} escaped for {docs!r}: {exc}") from exc
    OUTCOMES["hypothesis/zip of documents: parsed"] += 1
    assert out.X.shape == (len(docs), len(out.feature_names)) and out.extra["sparse"]
    assert np.isfinite(out.X.data).all() and (out.X.data > 0).all()


WORDY = st.text(alphabet=st.sampled_from(list("abcdefgh ,;\"\n\t0123456789")), max_size=60)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 99), WORDY), min_size=1, max_size=8),
       st.sampled_from([None, "text", 1]))
def test_property_table_of_random_texts(rows, text_column):
    """A CSV whose second column is random text: documents, a dense table or a DataFormatError."""
    body = "".join(f'{i},"{t.replace(chr(34), chr(34) * 2)}"\n' for i, t in rows)
    data = ("id,text\n" + body).encode()
    try:
        out = load_file(data, filename="r.csv", text_column=text_column, min_df=1)
    except DataFormatError:
        OUTCOMES["hypothesis/table of texts: DataFormatError"] += 1
        return
    except Exception as exc:  # noqa: BLE001
        OUTCOMES["hypothesis/table of texts: OTHER EXCEPTION"] += 1
        raise AssertionError(f"{type(exc).__name__} escaped for {data[:300]!r}: {exc}") from exc
    OUTCOMES["hypothesis/table of texts: parsed"] += 1
    if text_column is not None:
        assert out.format == "text-table" and out.X.shape[0] == len(rows)


def test_zz_outcome_counts():
    total = sum(OUTCOMES.values())
    print("\n" + "\n".join([f"corpus fuzz: {total} inputs tried"]
                           + [f"  {k}: {v}" for k, v in sorted(OUTCOMES.items())]))
    assert not any("OTHER EXCEPTION" in k for k in OUTCOMES)
