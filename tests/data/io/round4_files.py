"""Hostile files of issue 40 ("Hostile inputs, round four"), written by the real writers
(anndata, scipy.io.mmwrite, gzip, zipfile): shared by ``test_hostile_round4.py`` and the fuzz
table of ``test_fuzz_files.py``.  Not collected by pytest (no ``test_`` prefix).
"""

from __future__ import annotations

import gzip
import io
import os
import tempfile
import warnings
import zipfile

import numpy as np
import scipy.io
import scipy.sparse as sp


def zip_of(members: dict, compression=zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def has_anndata() -> bool:
    try:
        import anndata  # noqa: F401
    except ImportError:
        return False
    return True


def h5ad_bytes(adata) -> bytes:
    """``adata.write_h5ad`` to a temporary file, read back as bytes."""
    fd, path = tempfile.mkstemp(suffix=".h5ad")
    os.close(fd)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            adata.write_h5ad(path)
        with open(path, "rb") as fh:
            return fh.read()
    finally:
        os.remove(path)


def edit_h5ad(data: bytes, edit) -> bytes:
    """``data`` with ``edit(h5py.File)`` applied (to forge what no writer writes)."""
    import h5py

    fd, path = tempfile.mkstemp(suffix=".h5ad")
    os.close(fd)
    try:
        with open(path, "wb") as fh:
            fh.write(data)
        with h5py.File(path, "r+") as f:
            edit(f)
        with open(path, "rb") as fh:
            return fh.read()
    finally:
        os.remove(path)


def sparse_counts(m: int = 6, n: int = 5, seed: int = 0):
    rng = np.random.default_rng(seed)
    A = rng.integers(0, 4, size=(m, n)).astype(np.float64)
    A[:, 0] += 1  # no empty row
    return sp.csr_matrix(A)


def h5ad_column_index_past_n_vars(index: int = 50, *, csc: bool = False) -> bytes:
    """An ``.h5ad`` whose sparse X stores a column (row, for CSC) index ``>= n_vars``."""
    import anndata

    X = sparse_counts()
    good = h5ad_bytes(anndata.AnnData(X.tocsc() if csc else X))

    def forge(f):
        idx = f["X/indices"][:]
        idx[0] = index
        f["X/indices"][...] = idx

    return edit_h5ad(good, forge)


def h5ad_indptr_decreasing() -> bytes:
    import anndata

    good = h5ad_bytes(anndata.AnnData(sparse_counts()))

    def forge(f):
        ptr = f["X/indptr"][:]
        ptr[2], ptr[3] = ptr[3], ptr[2]
        f["X/indptr"][...] = ptr

    return edit_h5ad(good, forge)


def h5ad_string_x() -> bytes:
    import anndata

    X = np.array([[f"v{i}{j}" for j in range(3)] for i in range(4)], dtype=object)
    return h5ad_bytes(anndata.AnnData(X))


def h5ad_categorical_with_missing() -> bytes:
    import anndata
    import pandas as pd

    ad = anndata.AnnData(np.random.default_rng(1).random((6, 3)))
    ad.obs["cls"] = pd.Categorical(["a", "b", None, "a", np.nan, "b"])
    return h5ad_bytes(ad)


def h5ad_duplicate_names() -> bytes:
    import anndata

    ad = anndata.AnnData(np.random.default_rng(2).random((4, 3)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ad.obs_names = ["c1", "c1", "c2", "c1"]
        ad.var_names = ["g", "g", "h"]
    return h5ad_bytes(ad)


# ------------------------------------------------------------------ zipped 10x folders

def mtx_bytes(M) -> bytes:
    buf = io.BytesIO()
    scipy.io.mmwrite(buf, sp.coo_matrix(M))
    return buf.getvalue()


TENX_GENES, TENX_CELLS = 5, 4


def tenx_zip(matrix_gz: bytes | None = None) -> bytes:
    """A zipped 10x folder (genes x cells ``matrix.mtx.gz``, ``features.tsv.gz``,
    ``barcodes.tsv.gz``); ``matrix_gz`` replaces the matrix member's bytes."""
    M = sparse_counts(TENX_GENES, TENX_CELLS, seed=3)
    feats = "".join(f"ENSG{i:011d}\tG{i}\tGene Expression\n" for i in range(TENX_GENES)).encode()
    codes = "".join(f"AAACCTGAGAAGG{i:03d}-1\n" for i in range(TENX_CELLS)).encode()
    return zip_of({"filtered/matrix.mtx.gz": gzip.compress(mtx_bytes(M)) if matrix_gz is None else matrix_gz,
                   "filtered/features.tsv.gz": gzip.compress(feats),
                   "filtered/barcodes.tsv.gz": gzip.compress(codes)})


def mtx_gzip_bomb(expanded: int) -> bytes:
    """A valid Matrix Market file padded by a comment line to about ``expanded`` bytes, gzipped
    about 1,000 : 1: gzip members written once and repeated (a file may hold several), so that
    the test never holds or compresses the expanded text."""
    head = gzip.compress(b"%%MatrixMarket matrix coordinate integer general\n%")
    block = 1 << 24
    pad = gzip.compress(b"x" * block, compresslevel=9)
    tail = gzip.compress(f"\n{TENX_GENES} {TENX_CELLS} 1\n1 1 1\n".encode())
    return head + pad * max(1, expanded // block) + tail


def tenx_truncated() -> bytes:
    M = sparse_counts(TENX_GENES, TENX_CELLS, seed=3)
    return tenx_zip(gzip.compress(mtx_bytes(M))[:-12])


# ------------------------------------------------------------------ tables named like genes

CELL_LINES = ["HELA", "MCF7", "A549", "K562", "HEK293", "U2OS", "JURKAT", "HCT116", "PC3", "SKBR3"]
ENSG_KO = [f"ENSG{1_000_000 + 7919 * i:011d}" for i in range(10)]


def samples_named_like_genes(ids) -> bytes:
    """Samples as rows named like genes (cell lines, knock-outs) x 2 assays, as pandas writes it."""
    import pandas as pd

    X = np.round(np.random.default_rng(4).random((len(ids), 2)), 4)
    return pd.DataFrame(X, index=ids, columns=["viability", "apoptosis"]).to_csv().encode()


# ------------------------------------------------------------------ documents

DOCS_EN = ["apple banana cherry apple", "banana cherry date", "cherry date apple banana", "date apple banana"]
DOCS_JA = ["東京 大阪 京都 東京", "大阪 京都 奈良", "京都 奈良 東京 大阪", "奈良 東京 大阪 こんにちは カタカナ"]


# ------------------------------------------------------------------ GEO series matrices

GEO_REPEATED_PROBE = (b'!Series_title\t"t"\n!Sample_geo_accession\t"GSM1"\t"GSM2"\t"GSM3"\n'
                      b'!Sample_title\t"a"\t"b"\t"c"\n!series_matrix_table_begin\n'
                      b'"ID_REF"\t"GSM1"\t"GSM2"\t"GSM3"\n"p1"\t1\t2\t3\n"p1"\t4\t5\t6\n"p3"\t7\t8\t9.5\n'
                      b"!series_matrix_table_end\n")
GEO_REPEATED_SAMPLE = GEO_REPEATED_PROBE.replace(b'"ID_REF"\t"GSM1"\t"GSM2"\t"GSM3"',
                                                 b'"ID_REF"\t"GSM1"\t"GSM2"\t"GSM2"')
