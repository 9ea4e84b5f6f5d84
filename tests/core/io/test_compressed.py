"""Compressed delimited text read exactly as the plain file; bombs and truncation refused."""

import bz2
import gzip
import importlib.util
import lzma

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from nspca_core.io import DataFormatError, load_file

COMPRESS = {"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}
if importlib.util.find_spec("zstandard"):
    import zstandard

    COMPRESS["zst"] = lambda b: zstandard.ZstdCompressor().compress(b)


def _same(a, b):
    assert np.array_equal(a.X, b.X)
    assert a.feature_names == b.feature_names and a.sample_names == b.sample_names
    assert (a.labels is None) == (b.labels is None)
    if a.labels is not None:
        assert a.labels.tolist() == b.labels.tolist()
    assert a.dropped_columns == b.dropped_columns and a.extra == b.extra
    assert b.notes[1:] == a.notes and "decompressed" in b.notes[0]


@settings(max_examples=30, deadline=None)
@given(m=st.integers(2, 8), n=st.integers(2, 6), seed=st.integers(0, 2**31), ext=st.sampled_from(["csv", "tsv", "txt"]),
       kind=st.sampled_from(sorted(COMPRESS)), labelled=st.booleans())
def test_compressed_table_reads_as_the_plain_file(m, n, seed, ext, kind, labelled):
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(m, n)) * 10 ** rng.integers(0, 4), int(rng.integers(0, 5)))
    sep = "," if ext == "csv" else "\t"
    head = (["group"] if labelled else []) + [f"g{j}" for j in range(n)]
    rows = [sep.join(head)] + [sep.join(([f"c{i % 2}"] if labelled else []) + [repr(float(v)) for v in r])
                               for i, r in enumerate(X)]
    plain = ("\n".join(rows) + "\n").encode()
    a = load_file(plain, filename=f"t.{ext}")
    b = load_file(COMPRESS[kind](plain), filename=f"t.{ext}.{kind}")
    _same(a, b)
    assert b.source_name == f"t.{ext}.{kind}"


def test_compressed_path_and_genes_as_rows(tmp_path):
    genes = [f"ENSG{i:011d}" for i in range(30)]
    rng = np.random.default_rng(1)
    E = rng.gamma(2, 3, size=(30, 5))
    text = "gene\t" + "\t".join(f"S{j}" for j in range(5)) + "\n" + "".join(
        g + "\t" + "\t".join(repr(float(v)) for v in row) + "\n" for g, row in zip(genes, E))
    (tmp_path / "expr.tsv").write_text(text)
    (tmp_path / "expr.tsv.gz").write_bytes(gzip.compress(text.encode()))
    a, b = load_file(tmp_path / "expr.tsv"), load_file(tmp_path / "expr.tsv.gz")
    _same(a, b)
    assert b.X.shape == (5, 30) and b.extra["orientation"] == "rows-are-features"


def test_gzip_bomb_refused_with_an_estimate():
    bomb = gzip.compress(b"1,2,3\n" * 2_000_000)  # 12 MB from ~25 kB
    with pytest.raises(DataFormatError, match=r"expands to more than the size cap max_bytes=1,000,000 bytes "
                                              r"\(about [\d,]+ bytes in all, estimated .*decompression bomb"):
        load_file(bomb, filename="b.csv.gz", max_bytes=1_000_000)


@pytest.mark.parametrize("kind", sorted(COMPRESS))
def test_truncated_compressed_file_refused(kind):
    data = COMPRESS[kind](("a,b\n" + "".join(f"{i},{i * i}\n" for i in range(5000))).encode())
    with pytest.raises(DataFormatError, match=r"file is truncated or damaged"):
        load_file(data[: len(data) // 2], filename=f"t.csv.{kind}")


def test_named_compressed_but_plain_and_other_payloads_refused():
    with pytest.raises(DataFormatError, match=r"named \.gz but its content is not gzip data"):
        load_file(b"1,2\n3,4\n", filename="t.csv.gz")
    with pytest.raises(DataFormatError, match=r"a compressed file is read when it holds delimited text"):
        load_file(bz2.compress(b"x"), filename="t.npy.bz2")
