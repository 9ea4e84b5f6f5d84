"""Your data as analysts have it (issue 26 items 1-4, issue 31 item 2): orientation, sample
names, sample sheets, files of any width, GEO series matrices, AnnData .h5ad and zipped 10x
folders -- on files the tests write."""

from __future__ import annotations

import builtins
import gzip
import io
import json
import zipfile

import numpy as np
import pandas as pd
import pytest
import scipy.io
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nspca_core import cli
from nspca_core._common.validation import InputError
from nspca_core.io import DataFormatError, load_file
from nspca_core.io import delimited

RNG = np.random.default_rng(7)


# ----------------------------------------------------------------- files as analysts have them
def probes(n: int) -> list:
    """Affymetrix-like probe ids: the first ones as on HG-U133 arrays."""
    head = ["1007_s_at", "1053_at", "117_at", "121_at", "1255_g_at", "AFFX-BioB-5_at"]
    return (head + [f"{200000 + i}_s_at" if i % 3 else f"{200000 + i}_at" for i in range(n)])[:n]


def symbols(n: int, seed: int = 0) -> list:
    """Gene symbols: real ones, then made-up ones shaped the same way (letters, then digits)."""
    base = ["TP53", "BRCA1", "EGFR", "MYC", "KRAS", "GAPDH", "ACTB", "CD19", "HLA-DRA", "C1orf112",
            "MT-CO1", "PTEN", "VEGFA", "IL6", "TNF", "CDK2", "ESR1", "ERBB2", "STAT3", "JUN"]
    rng = np.random.default_rng(seed)
    out = list(base)
    while len(out) < n:
        word = "".join(rng.choice(list("ABCDEFGHIKLMNPRSTVWZ"), size=rng.integers(2, 5)))
        sym = word + (str(rng.integers(1, 30)) if rng.random() < 0.6 else "")
        if sym not in out:
            out.append(sym)
    return out[:n]


def genes_by_samples(genes: int = 300, samples: int = 12, seed: int = 0):
    """(expression genes x samples, probe ids, sample ids)."""
    rng = np.random.default_rng(seed)
    E = np.round(rng.lognormal(2.0, 1.0, size=(genes, samples)), 4)
    return E, probes(genes), [f"GSM{100200 + j}" for j in range(samples)]


def r_write_csv(E, rows, cols) -> bytes:
    """As R's write.csv writes a data frame with row names: quoted, first header cell ""."""
    lines = ['""' + "".join(f',"{c}"' for c in cols)]
    lines += [f'"{r}"' + "".join(f",{v:.10g}" for v in row) for r, row in zip(rows, E)]
    return ("\n".join(lines) + "\n").encode()


def pandas_csv(E, rows, cols, sep=",", index_label=None) -> bytes:
    df = pd.DataFrame(E, index=rows, columns=cols)
    return df.to_csv(sep=sep, index_label=index_label).encode()


@pytest.mark.parametrize("writer", ["r", "pandas", "pandas-tsv", "id_ref", "symbols"])
def test_genes_as_rows_read_samples_by_genes_with_a_note(writer):
    E, ids, gsm = genes_by_samples()
    if writer == "symbols":
        ids = symbols(len(ids))
        gsm = [f"patient_{j}" for j in range(len(gsm))]
    data, fname = {
        "r": (lambda: (r_write_csv(E, ids, gsm), "expr.csv")),
        "pandas": (lambda: (pandas_csv(E, ids, gsm), "expr.csv")),
        "pandas-tsv": (lambda: (pandas_csv(E, ids, gsm, sep="\t"), "expr.tsv")),
        "id_ref": (lambda: (pandas_csv(E, ids, gsm, sep="\t", index_label="ID_REF"), "expr.txt")),
        "symbols": (lambda: (pandas_csv(E, ids, gsm), "expr.csv")),
    }[writer]()
    out = load_file(data, filename=fname)
    assert out.X.shape == (len(gsm), len(ids))
    np.testing.assert_array_equal(out.X, E.T)  # exact: every value written in full
    assert out.sample_names == gsm and out.feature_names == ids
    assert out.extra["orientation"] == "rows-are-features"
    note = next(nt for nt in out.notes if nt.startswith("orientation:"))
    assert "transposed" in note and "rows-are-samples" in note
    # the other way, as asked: one row per probe, the id column as metadata/labels
    other = load_file(data, filename=fname, orientation="rows-are-samples")
    assert other.X.shape == (len(ids), len(gsm)) and other.feature_names == gsm
    assert other.sample_names == ids
    np.testing.assert_array_equal(other.X, E)


@pytest.mark.parametrize("with_ids", [False, True])
def test_samples_as_rows_tables_are_never_flipped(with_ids):
    rng = np.random.default_rng(1)
    tables = {
        "tall": rng.standard_normal((3000, 30)),       # far more rows than columns
        "wide": rng.standard_normal((20, 3000)),
        "digits": rng.integers(0, 17, size=(400, 64)).astype(float),
    }
    for kind, X in tables.items():
        df = pd.DataFrame(X, columns=[f"pixel{j}" if kind == "digits" else f"x{j}" for j in range(X.shape[1])])
        if with_ids:
            df.insert(0, "id", [f"s{i}" for i in range(X.shape[0])])
        out = load_file(df.to_csv(index=False).encode(), filename=f"{kind}.csv")
        assert out.X.shape == X.shape, kind
        assert out.extra["orientation"] == "rows-are-samples"
        assert any(nt.startswith("orientation: each row of the file read as a sample") for nt in out.notes)
        assert out.sample_names == ([f"s{i}" for i in range(X.shape[0])] if with_ids
                                    else [str(i + 1) for i in range(X.shape[0])])
    # spectra: wavelengths as the header, one spectrum per row
    wl = np.arange(400, 700, 2)
    spectra = np.abs(rng.standard_normal((500, wl.size)))
    out = load_file(pd.DataFrame(spectra, columns=wl).to_csv(index=False).encode(), filename="s.csv")
    assert out.X.shape == spectra.shape and out.extra["orientation"] == "rows-are-samples"
    # a table of samples with gene names as its header: never flipped, even when tall
    df = pd.DataFrame(rng.standard_normal((200, 20)), columns=symbols(20),
                      index=[f"GSM{i}" for i in range(200)])
    out = load_file(df.to_csv().encode(), filename="g.csv")
    assert out.X.shape == (200, 20) and out.feature_names == symbols(20)
    assert out.sample_names[:2] == ["GSM0", "GSM1"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(m=st.integers(2, 60), n=st.integers(2, 12), ids=st.booleans(), seed=st.integers(0, 10_000))
def test_ordinary_tables_keep_their_orientation(m, n, ids, seed):
    """Random numeric tables (with or without sequential ids) are read as stored."""
    X = np.round(np.random.default_rng(seed).standard_normal((m, n)), 3)
    df = pd.DataFrame(X, columns=[f"v{j}" for j in range(n)])
    if ids:
        df.insert(0, "sample", [f"S{i + 1}" for i in range(m)])
    out = load_file(df.to_csv(index=False).encode(), filename="t.csv")
    assert out.extra["orientation"] == "rows-are-samples"
    np.testing.assert_array_equal(out.X, X)


def test_forced_orientations_and_array_files():
    X = RNG.standard_normal((5, 8))
    df = pd.DataFrame(X, columns=[f"c{j}" for j in range(8)], index=[f"r{i}" for i in range(5)])
    data = df.to_csv().encode()
    out = load_file(data, filename="t.csv", orientation="rows-are-features")
    np.testing.assert_allclose(out.X, X.T)
    assert out.sample_names == [f"c{j}" for j in range(8)]
    assert out.feature_names == [f"r{i}" for i in range(5)]
    assert "as asked" in out.notes[1]
    # no header, no id column: samples "1".., features row_1..
    plain = "\n".join(",".join(f"{v:.17g}" for v in row) for row in X).encode()
    out = load_file(plain, filename="p.csv", orientation="rows-are-features")
    np.testing.assert_array_equal(out.X, X.T)
    assert out.sample_names == [str(j + 1) for j in range(8)]
    assert out.feature_names == [f"row_{i + 1}" for i in range(5)]
    buf = io.BytesIO()
    np.save(buf, X)
    out = load_file(buf.getvalue(), filename="x.npy", orientation="rows-are-features")
    np.testing.assert_array_equal(out.X, X.T)
    assert load_file(buf.getvalue(), filename="x.npy").sample_names == [str(i + 1) for i in range(5)]


def test_orientation_errors():
    with pytest.raises(InputError, match=r"`orientation` must be one of .*'rows-are-features'.*got 'genes'"):
        load_file(b"a,b\n1,2\n3,4\n", filename="t.csv", orientation="genes")
    E, ids, gsm = genes_by_samples(40, 5)
    with pytest.raises(InputError, match=r"`label_column` 'x' names a column .* rows are read as "
                                         r"features .*sample sheet"):
        load_file(r_write_csv(E, ids, gsm), filename="e.csv", label_column="x")
    with pytest.raises(InputError, match="`sample_id_column` applies only with a sample sheet"):
        load_file(b"a,b\n1,2\n3,4\n", filename="t.csv", sample_id_column="id")


# ----------------------------------------------------------------- sample sheets
def sheet_for(gsm, groups) -> pd.DataFrame:
    return pd.DataFrame({"title": [f"patient {g}" for g in gsm], "sample": gsm, "group": groups})


@pytest.mark.parametrize("as_what", ["dataframe", "bytes", "path", "file"])
def test_sample_sheet_joins_metadata_and_gives_labels_in_the_data_order(as_what, tmp_path):
    E, ids, gsm = genes_by_samples(60, 8)
    groups = ["ALL", "AML"] * 4
    df = sheet_for(gsm, groups).iloc[::-1]  # the sheet in another order than the data
    info = {"dataframe": df, "bytes": df.to_csv(index=False).encode(),
            "path": tmp_path / "sheet.csv", "file": io.BytesIO(df.to_csv(sep="\t", index=False).encode())}
    df.to_csv(info["path"], index=False)
    out = load_file(r_write_csv(E, ids, gsm), filename="e.csv", sample_info=info[as_what])
    assert out.sample_names == gsm
    assert list(out.labels) == groups  # matched by id, not by position
    assert list(out.metadata["sample"]) == gsm and list(out.metadata["title"]) == [f"patient {g}" for g in gsm]
    assert any("matched 8 samples by its column 'sample'" in nt for nt in out.notes)
    named = load_file(r_write_csv(E, ids, gsm), filename="e.csv", sample_info=df, label_column="title",
                      sample_id_column="sample")
    assert list(named.labels) == [f"patient {g}" for g in gsm]


def test_sample_sheet_with_a_missing_an_extra_and_a_duplicate_id_is_refused_with_the_ids():
    E, ids, gsm = genes_by_samples(60, 6)
    df = sheet_for(gsm, ["a", "b"] * 3)
    df = pd.concat([df[df["sample"] != gsm[2]],                       # GSM..2 missing
                    df[df["sample"] == gsm[4]],                       # GSM..4 twice
                    pd.DataFrame({"title": ["x"], "sample": ["GSM999"], "group": ["a"]})])  # extra
    with pytest.raises(DataFormatError) as err:
        load_file(r_write_csv(E, ids, gsm), filename="e.csv", sample_info=df)
    msg = str(err.value)
    assert f"not in the sheet: '{gsm[2]}'" in msg
    assert f"on more than one row of the sheet: '{gsm[4]}'" in msg
    assert "not in the data: 'GSM999'" in msg and "Nothing was dropped or reordered" in msg


def test_sample_sheet_extra_rows_are_noted_and_other_errors():
    E, ids, gsm = genes_by_samples(60, 6)
    df = pd.concat([sheet_for(gsm, ["a", "b"] * 3),
                    pd.DataFrame({"title": ["x"], "sample": ["GSM999"], "group": ["a"]})])
    out = load_file(r_write_csv(E, ids, gsm), filename="e.csv", sample_info=df)
    assert any("1 row(s) for samples not in the data ignored: 'GSM999'" in nt for nt in out.notes)
    data = r_write_csv(E, ids, gsm)
    with pytest.raises(DataFormatError, match=r"no column holds the data's sample names"):
        load_file(data, filename="e.csv", sample_info=pd.DataFrame({"id": ["u", "v"], "g": ["a", "b"]}))
    with pytest.raises(InputError, match=r"`sample_id_column` must be one of the sheet's columns"):
        load_file(data, filename="e.csv", sample_info=df, sample_id_column="nope")
    with pytest.raises(InputError, match=r"`label_column` 'nope' names a column of e.csv"):
        load_file(data, filename="e.csv", sample_info=df, label_column="nope")
    with pytest.raises(InputError, match=r"`sample_info` must be a path, bytes, a file-like object or "
                                         r"a pandas DataFrame"):
        load_file(data, filename="e.csv", sample_info=42)
    # issue 38: workbooks are read as sample sheets now; a damaged one is refused by name
    with pytest.raises(DataFormatError, match=r"not a valid \.xlsx \(zip\) file|not a readable Excel workbook"):
        load_file(data, filename="e.csv", sample_info=b"PK\x03\x04 not really")


def test_sample_sheet_for_rows_numbered_from_one():
    X = RNG.standard_normal((4, 3))
    out = load_file(pd.DataFrame(X).to_csv(index=False).encode(), filename="n.csv",
                    sample_info=pd.DataFrame({"row": ["1", "2", "3", "4"], "kind": ["a", "a", "b", "b"]}))
    assert list(out.labels) == ["a", "a", "b", "b"]


# ----------------------------------------------------------------- any width
def wide_csv(m, n, seed=0, header=False, ids=False):
    X = np.round(np.random.default_rng(seed).standard_normal((m, n)), 5)
    df = pd.DataFrame(X, columns=[f"f{j}" for j in range(n)])
    if ids:
        df.insert(0, "id", [f"s{i}" for i in range(m)])
    return X, df.to_csv(index=False, header=header).encode()


@pytest.mark.parametrize("header,ids", [(False, False), (True, False), (True, True)])
def test_six_by_sixty_thousand_csv(header, ids, monkeypatch):
    X, data = wide_csv(6, 60_000, header=header, ids=ids)
    assert max(len(ln) for ln in data.splitlines()) > 131_072  # past the csv module's field limit
    monkeypatch.setattr(delimited, "FAST_MIN_BYTES", 10 ** 12)
    careful = load_file(data, filename="wide.csv")  # every cell looked at
    np.testing.assert_array_equal(careful.X, X)

    def no_cells(*args):
        raise AssertionError("a large clean file must not be read cell by cell")

    monkeypatch.setattr(delimited, "_cells_table", no_cells)
    monkeypatch.setattr(delimited, "FAST_MIN_BYTES", 0)
    out = load_file(data, filename="wide.csv")
    assert out.notes == careful.notes
    assert out.X.shape == (6, 60_000)
    np.testing.assert_array_equal(out.X, X)
    assert out.extra["orientation"] == "rows-are-samples"
    if ids:
        assert out.sample_names == [f"s{i}" for i in range(6)]


def test_wide_line_of_another_delimiter_and_the_careful_reader():
    """A TSV read with every cell looked at (a missing value sends it to the careful reader)."""
    X = np.round(RNG.standard_normal((4, 40_000)), 4)
    rows = ["\t".join(f"{v:g}" for v in row) for row in X]
    rows[2] = rows[2].replace(rows[2].split("\t")[5], "NA", 1)
    with pytest.raises(DataFormatError, match=r"1 NaN/inf value\(s\)"):
        load_file("\n".join(rows).encode(), filename="w.tsv")


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(m=st.integers(3, 30), n=st.integers(2, 8), header=st.sampled_from([None, True, False]),
       ids=st.booleans(), labels=st.booleans(), sep=st.sampled_from([",", "\t", ";"]),
       seed=st.integers(0, 1000))
def test_fast_reader_gives_what_the_careful_reader_gives(monkeypatch, m, n, header, ids, labels, sep, seed):
    rng = np.random.default_rng(seed)
    X = np.round(rng.standard_normal((m, n)) * 10, 3)
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(n)])
    if labels:
        df.insert(0, "class", ["a", "b", "b"][:1] * (m - 2) + ["b", "b"])
    if ids:
        df.insert(0, "id", [f"s{i}" for i in range(m)])
    data = df.to_csv(index=False, sep=sep, header=header is not False).encode()
    monkeypatch.setattr(delimited, "FAST_MIN_BYTES", 10 ** 12)
    careful = load_file(data, filename="t.csv", header="auto" if header is None else header)
    monkeypatch.setattr(delimited, "FAST_MIN_BYTES", 0)
    monkeypatch.setattr(delimited, "HEAD_LINES", 2)
    fast = load_file(data, filename="t.csv", header="auto" if header is None else header)
    np.testing.assert_array_equal(fast.X, careful.X)
    assert fast.feature_names == careful.feature_names and fast.sample_names == careful.sample_names
    assert (fast.labels is None) == (careful.labels is None)
    if fast.labels is not None:
        assert list(fast.labels) == list(careful.labels)
    assert fast.notes == careful.notes and fast.dropped_columns == careful.dropped_columns


@pytest.mark.parametrize("fast", [False, True])
def test_underscored_numbers_are_refused(monkeypatch, fast):
    monkeypatch.setattr(delimited, "FAST_MIN_BYTES", 0 if fast else 10 ** 12)
    data = b"a,b\n1,2\n3,4\n5,1_000\n" + b"".join(b"%d,%d\n" % (i, i) for i in range(60))
    with pytest.raises(DataFormatError, match=r"column 'b' holds '1_000' on line 4, a number written with "
                                              r"underscores \(Python reads it as 1000"):
        load_file(data, filename="u.csv")
    ok = load_file(b"id,a,b\n1007_s_at,1,2\nx_1,3,4\nx_2,5,7\n", filename="ids.csv")  # text ids: fine
    assert ok.X.shape == (3, 2)


# ----------------------------------------------------------------- GEO series matrix
def series_matrix(gsm, ids, E, null_at=None) -> bytes:
    lines = ['!Series_title\t"A study of leukemia"', '!Series_geo_accession\t"GSE0001"',
             "!Sample_title\t" + "\t".join(f'"patient {j}"' for j in range(len(gsm))),
             "!Sample_geo_accession\t" + "\t".join(f'"{g}"' for g in gsm),
             "!Sample_source_name_ch1\t" + "\t".join('"bone marrow"' for _ in gsm),
             "!Sample_characteristics_ch1\t" + "\t".join(f'"disease: {"ALL" if j % 2 else "AML"}"'
                                                         for j in range(len(gsm))),
             "!Sample_characteristics_ch1\t" + "\t".join(f'"age: {20 + j}"' for j in range(len(gsm))),
             "!series_matrix_table_begin", '"ID_REF"\t' + "\t".join(f'"{g}"' for g in gsm)]
    for i, (p, row) in enumerate(zip(ids, E)):
        cells = [f"{v:.10g}" for v in row]
        if null_at is not None and i == null_at[0]:
            cells[null_at[1]] = "null"
        lines.append(f'"{p}"\t' + "\t".join(cells))
    lines += ["!series_matrix_table_end"]
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize("gz", [False, True])
def test_geo_series_matrix(gz):
    E, ids, gsm = genes_by_samples(50, 6)
    data = series_matrix(gsm, ids, E)
    name = "GSE0001_series_matrix.txt" + (".gz" if gz else "")
    out = load_file(gzip.compress(data) if gz else data, filename=name, label_column="disease")
    np.testing.assert_array_equal(out.X, E.T)
    assert out.sample_names == gsm and out.feature_names == ids
    assert list(out.labels) == ["AML", "ALL"] * 3
    assert list(out.metadata.columns) == ["geo_accession", "title", "source_name_ch1", "disease", "age"]
    assert list(out.metadata["age"]) == [str(20 + j) for j in range(6)]
    assert out.format == "geo"
    plain = load_file(data, filename="anything.txt")  # recognised by its !Series_ lines
    assert plain.labels is None and any("label column" in nt for nt in plain.notes)


def test_geo_series_matrix_errors():
    E, ids, gsm = genes_by_samples(20, 4)
    data = series_matrix(gsm, ids, E, null_at=(3, 2))
    with pytest.raises(DataFormatError, match=r"1 NaN/inf value"):
        load_file(data, filename="GSE1_series_matrix.txt")
    out = load_file(data, filename="GSE1_series_matrix.txt", nan_policy="drop-columns")
    assert out.X.shape == (4, 19) and ids[3] not in out.feature_names
    cut = data[: data.index(b"!series_matrix_table_end")]
    with pytest.raises(DataFormatError, match=r"never ends .* the file is truncated"):
        load_file(cut, filename="GSE1_series_matrix.txt")
    with pytest.raises(DataFormatError, match=r"needs its table between the lines"):
        load_file(b'!Series_title\t"x"\n', filename="GSE1_series_matrix.txt")
    with pytest.raises(InputError, match=r"`label_column` must be one of the sample columns"):
        load_file(series_matrix(gsm, ids, E), filename="GSE1_series_matrix.txt", label_column="nope")
    bad = series_matrix(gsm, ids, E).replace(b"\t" + f"{E[1, 1]:.10g}".encode(), b"\tabc", 1)
    with pytest.raises(DataFormatError, match=r"sample column 'GSM100201' holds 'abc', not a number"):
        load_file(bad, filename="GSE1_series_matrix.txt")


# ----------------------------------------------------------------- AnnData
def _h5ad(tmp_path, sparse: bool):
    anndata = pytest.importorskip("anndata")
    rng = np.random.default_rng(3)
    dense = rng.poisson(0.7, size=(30, 12)).astype(np.float32)
    X = sp.csr_matrix(dense) if sparse else dense
    obs = pd.DataFrame({"cell_type": pd.Categorical(rng.choice(["B", "T", "NK"], 30)),
                        "n_counts": dense.sum(1)}, index=[f"AAACCTG{i:03d}-1" for i in range(30)])
    var = pd.DataFrame(index=[f"GENE{j}" for j in range(12)])
    path = tmp_path / ("s.h5ad" if sparse else "d.h5ad")
    anndata.AnnData(X=X, obs=obs, var=var).write_h5ad(path)
    return path, dense, obs


@pytest.mark.parametrize("sparse", [True, False])
def test_h5ad(tmp_path, sparse):
    path, dense, obs = _h5ad(tmp_path, sparse)
    out = load_file(path)
    assert sp.issparse(out.X) == sparse and out.format == "h5ad"
    np.testing.assert_array_equal(out.X.toarray() if sparse else out.X, dense)
    assert out.sample_names == list(obs.index) and out.feature_names == [f"GENE{j}" for j in range(12)]
    assert list(out.labels) == list(obs["cell_type"].astype(str))
    assert list(out.metadata.columns) == ["cell_type", "n_counts"]
    by_bytes = load_file(path.read_bytes(), filename="s.h5ad")
    assert by_bytes.X.shape == (30, 12)


def test_h5ad_without_anndata_says_how_to_install(tmp_path, monkeypatch):
    path, _, _ = _h5ad(tmp_path, True)
    real = builtins.__import__

    def no_anndata(name, *args, **kwargs):
        if name == "anndata":
            raise ImportError("No module named 'anndata'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_anndata)
    with pytest.raises(DataFormatError, match=r"needs the optional package anndata; install it with: "
                                              r"pip install 'nspca-core\[formats\]'"):
        load_file(path)


def test_h5ad_damaged():
    with pytest.raises(DataFormatError, match=r"not a readable AnnData .h5ad file"):
        load_file(b"\x89HDF\r\n\x1a\n" + b"\x00" * 100, filename="x.h5ad")


# ----------------------------------------------------------------- 10x
def tenx_zip(M, genes, barcodes, folder="filtered_feature_bc_matrix/", gz=True, drop=None) -> bytes:
    mm = io.BytesIO()
    scipy.io.mmwrite(mm, sp.coo_matrix(M))
    files = {"matrix.mtx": mm.getvalue(),
             "features.tsv": "\n".join(f"ENSG{i:011d}\t{g}\tGene Expression" for i, g in enumerate(genes)).encode(),
             "barcodes.tsv": "\n".join(barcodes).encode()}
    z = io.BytesIO()
    with zipfile.ZipFile(z, "w") as zf:
        for fn, raw in files.items():
            if fn == drop:
                continue
            zf.writestr(folder + fn + (".gz" if gz else ""), gzip.compress(raw) if gz else raw)
    return z.getvalue()


@pytest.mark.parametrize("gz", [True, False])
def test_zipped_10x_folder(gz):
    rng = np.random.default_rng(5)
    M = rng.poisson(0.5, size=(9, 14)).astype(float)  # genes x cells as 10x writes it
    genes = ["CD3E", "MS4A1", "LYZ", "NKG7", "CD3E", "GNLY", "CD14", "FCGR3A", "PPBP"]
    barcodes = [f"AAACATACAAC{i:03d}-1" for i in range(14)]
    out = load_file(tenx_zip(M, genes, barcodes, gz=gz), filename="pbmc.zip")
    assert sp.issparse(out.X) and out.X.shape == (14, 9) and out.format == "10x"
    np.testing.assert_array_equal(out.X.toarray(), M.T)
    assert out.feature_names[:5] == ["CD3E", "MS4A1", "LYZ", "NKG7", "CD3E.1"]
    assert out.sample_names == barcodes
    assert any("read as 14 cells x 9 genes" in nt for nt in out.notes)


def test_zipped_10x_folder_errors():
    M = np.eye(3)
    with pytest.raises(DataFormatError, match=r"a 10x folder needs .* missing: barcodes"):
        load_file(tenx_zip(M, ["A", "B", "C"], ["x", "y", "z"], drop="barcodes.tsv"), filename="t.zip")
    with pytest.raises(DataFormatError, match=r"matrix.mtx holds 3 genes x 3 cells but .* lists 2"):
        load_file(tenx_zip(M, ["A", "B"], ["x", "y", "z"]), filename="t.zip")


# ----------------------------------------------------------------- the command line
def test_cli_orientation_and_sample_sheet(tmp_path, capsys):
    E, ids, gsm = genes_by_samples(80, 10)
    data = tmp_path / "expr.csv"
    data.write_bytes(r_write_csv(E, ids, gsm))
    sheet = tmp_path / "sheet.tsv"
    sheet_for(gsm, ["a", "b"] * 5).to_csv(sheet, sep="\t", index=False)
    code = cli.main(["fit", str(data), "--k", "3", "--out", str(tmp_path / "o"), "--no-certify", "--quiet",
                     "--sample-info", str(sheet)])
    _, err = capsys.readouterr()
    assert code == 0, err
    assert "read expr.csv: 10 samples x 80 features" in err and "transposed" in err
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert any("orientation:" in nt for nt in summary["reading_notes"])
    scores = pd.read_csv(tmp_path / "o" / "scores.csv")  # the samples keep their names (GSM ids)
    assert scores["sample"].tolist() == list(gsm) and scores["label"].tolist() == ["a", "b"] * 5
    assert list(scores.columns[2:]) == ["component_1"]
    code = cli.main(["fit", str(data), "--k", "3", "--out", str(tmp_path / "p"), "--no-certify", "--quiet",
                     "--orientation", "rows-are-samples"])
    _, err = capsys.readouterr()
    assert code == 0 and "read expr.csv: 80 samples x 10 features" in err
    code = cli.main(["fit", str(data), "--k", "3", "--out", str(tmp_path / "q"), "--quiet",
                     "--sample-id-column", "sample"])
    _, err = capsys.readouterr()
    assert code == 1 and "--sample-id-column applies only with --sample-info" in err


def test_golub_style_probe_ids_and_integer_ids():
    """Probe ids as the 72 x 7,129 leukemia arrays name them, a header of sample numbers; integer
    probe ids under ID_REF; R's row numbers under an empty header are ids, not a feature."""
    E = np.round(np.random.default_rng(2).lognormal(3, 1, (300, 8)), 3)
    ids = ["AFFX-BioB-5_at", "AFFX-HUMISGF3A/M97935_5_at", "hum_alu_at", "M97496_at", "U48705_rna1_s_at",
           "HG1612-HT1612_at"] + [f"X{59417 + i}_at" for i in range(294)]
    out = load_file(pd.DataFrame(E, index=ids, columns=[str(j + 1) for j in range(8)]).to_csv().encode(),
                    filename="golub.csv")
    assert out.X.shape == (8, 300) and out.feature_names == ids
    assert out.sample_names == [str(j + 1) for j in range(8)]
    tsv = pd.DataFrame(E, index=pd.Index(7892501 + np.arange(300), name="ID_REF"),
                       columns=[f"GSM{j}" for j in range(8)]).to_csv(sep="\t").encode()
    out = load_file(tsv, filename="affy_st.tsv")
    np.testing.assert_array_equal(out.X, E.T)
    assert out.feature_names[:2] == ["7892501", "7892502"]
    assert any("holds distinct integers under an id header" in nt for nt in out.notes)
    rows = '"",' + ",".join(f'"v{j}"' for j in range(8)) + "\n" + "\n".join(
        f'"{i + 1}",' + ",".join(str(v) for v in row) for i, row in enumerate(E))
    out = load_file(rows.encode(), filename="r.csv")
    np.testing.assert_array_equal(out.X, E)  # the row numbers are not a feature
    assert out.sample_names[:3] == ["1", "2", "3"] and out.feature_names == [f"v{j}" for j in range(8)]
    assert any("under an empty header (row names)" in nt for nt in out.notes)


@settings(max_examples=40, deadline=None)
@given(m=st.integers(2, 12), seed=st.integers(0, 10_000), drop=st.integers(0, 2), dup=st.integers(0, 2),
       extra=st.integers(0, 2))
def test_sample_sheet_matching_against_a_dictionary(m, seed, drop, dup, extra):
    """Labels are the sheet's, looked up by id (a plain dict here); any missing or repeated id is
    refused with exactly those ids listed; extra rows only noted."""
    rng = np.random.default_rng(seed)
    names = [f"S{i}" for i in range(m)]
    X = rng.standard_normal((m, 3))
    data = pd.DataFrame(X, columns=["a", "b", "c"], index=names).to_csv().encode()
    classes = {s: str(rng.integers(0, 2)) for s in names}
    rows = [s for s in rng.permutation(names)]
    dropped = set(rows[:drop]) if drop < m else set()
    rows = [s for s in rows if s not in dropped]
    dups = rows[:dup]
    rows = rows + dups + [f"X{i}" for i in range(extra)]
    sheet = pd.DataFrame({"id": rows, "cls": [classes.get(s, "0") for s in rows]})
    if dropped or dups:
        with pytest.raises(DataFormatError) as err:
            load_file(data, filename="t.csv", sample_info=sheet, label_column="cls")
        msg = str(err.value)
        assert all(f"'{s}'" in msg for s in dropped | set(dups))
        return
    out = load_file(data, filename="t.csv", sample_info=sheet, label_column="cls")
    assert out.sample_names == names and list(out.labels) == [classes[s] for s in names]
    np.testing.assert_array_equal(out.X, X)  # the data is never reordered
    assert any("ignored" in nt for nt in out.notes) == (extra > 0)


def test_sample_names_of_images_and_arrays():
    from tests.data.io.test_load_errors import images, zip_bytes

    out = load_file(zip_bytes(images(4)), filename="faces.zip")
    assert out.sample_names == [f"img_{i:02d}.png" for i in range(4)]
    X = RNG.standard_normal((3, 4))
    X[1, 2] = np.nan
    buf = io.BytesIO()
    np.save(buf, X)
    out = load_file(buf.getvalue(), filename="x.npy", nan_policy="drop-rows")
    assert out.sample_names == ["1", "3"]  # the rows keep their numbers when one is dropped


def test_r_write_table_header_one_field_short():
    """R's write.table(sep='\\t') writes the row names without a header cell."""
    E, ids, gsm = genes_by_samples(80, 6)
    text = "\t".join(f'"{g}"' for g in gsm) + "\n" + "\n".join(
        f'"{p}"\t' + "\t".join(repr(float(v)) for v in row) for p, row in zip(ids, E))
    out = load_file(text.encode(), filename="wt.txt")
    np.testing.assert_array_equal(out.X, E.T)
    assert out.sample_names == gsm and out.feature_names == ids
    assert any("one field fewer than the others" in nt for nt in out.notes)
    trailing = load_file(b"a,b\n1,2,\n3,4,\n5,7,\n", filename="t.csv")  # data lines end with a comma
    assert trailing.feature_names == ["a", "b"] and trailing.X.tolist() == [[1, 2], [3, 4], [5, 7]]
    with pytest.raises(DataFormatError, match="ragged rows"):  # two fields short is not that
        load_file(("a\n" + "\n".join("x,1,2" for _ in range(4))).encode(), filename="r.csv")


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(m=st.integers(4, 25), n=st.integers(2, 6), seed=st.integers(0, 1000),
       marker=st.sampled_from(["", "NA", "nan", "N/A", "null", "?", "-"]), holes=st.integers(1, 5),
       policy=st.sampled_from(["drop-rows", "drop-columns", "impute-mean"]))
def test_fast_reader_with_missing_values_gives_what_the_careful_reader_gives(monkeypatch, m, n, seed,
                                                                            marker, holes, policy):
    rng = np.random.default_rng(seed)
    cells = np.round(rng.standard_normal((m, n)) * 10, 3).astype(str).astype(object)
    for _ in range(holes):
        cells[rng.integers(0, m), rng.integers(0, n)] = marker
    cells[0, 0] = marker  # in the first lines too
    data = ("\n".join([",".join(f"x{j}" for j in range(n))] + [",".join(r) for r in cells]) + "\n").encode()
    outs = []
    monkeypatch.setattr(delimited, "HEAD_LINES", 2)
    for limit in (10 ** 12, 0):
        monkeypatch.setattr(delimited, "FAST_MIN_BYTES", limit)
        try:
            outs.append(load_file(data, filename="t.csv", nan_policy=policy))
        except DataFormatError as exc:
            outs.append(str(exc))
    careful, fast = outs
    if isinstance(careful, str):
        assert fast == careful
        return
    np.testing.assert_array_equal(fast.X, careful.X)
    assert fast.notes == careful.notes and fast.feature_names == careful.feature_names
    assert fast.sample_names == careful.sample_names


def test_large_file_with_missing_values_is_not_read_cell_by_cell(monkeypatch):
    X = np.round(np.random.default_rng(3).standard_normal((500, 300)), 4)
    lines = [",".join(f"g{j}" for j in range(300))]
    lines += [",".join("NA" if (i + j) % 97 == 0 else repr(float(v)) for j, v in enumerate(r))
              for i, r in enumerate(X)]
    data = ("\n".join(lines) + "\n").encode()
    assert len(data) > delimited.FAST_MIN_BYTES
    careful = load_file(data, filename="na.csv", nan_policy="impute-mean")

    def no_cells(*args):
        raise AssertionError("read cell by cell")

    monkeypatch.setattr(delimited, "_cells_table", no_cells)
    monkeypatch.setattr(delimited, "HEAD_LINES", 3)
    fast = load_file(data, filename="na.csv", nan_policy="impute-mean")
    np.testing.assert_array_equal(fast.X, careful.X)
    assert fast.notes == careful.notes
    with pytest.raises(DataFormatError, match=r"NaN/inf value\(s\)"):
        load_file(data, filename="na.csv")
