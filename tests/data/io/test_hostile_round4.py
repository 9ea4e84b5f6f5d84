"""Issue 40, "Hostile inputs, round four": the file-reading items (2-4, 7-12) and the large text
inputs.  Each defect is reproduced here by a file the real writers write (anndata,
scipy.io.mmwrite, gzip, zipfile), forged where no writer would write it; the fuzz table of
``test_fuzz_files.py`` keeps every input too.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nspca_core.io import DataFormatError, load_file
from nspca_core.io.loaded import check_sparse_structure
from tests.data.io import round4_files as r4

ROOT = Path(__file__).resolve().parents[3]
needs_anndata = pytest.mark.skipif(not r4.has_anndata(), reason="anndata not installed")


def run_cli(tmp_path, data: bytes, filename: str, *extra) -> subprocess.CompletedProcess:
    """The command line in a child process: a segfault is an exit code, not a lost test run."""
    path = tmp_path / filename
    path.write_bytes(data)
    return subprocess.run([sys.executable, "-m", "nspca_core", "fit", str(path), "--k", "2",
                           "--out", str(tmp_path / "out"), "--quiet", *extra],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)


def assert_cli_refuses(proc, pattern: str) -> None:
    assert proc.returncode == 1, (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    assert re.search(pattern, proc.stderr), proc.stderr


# ----------------------------------------------------------------- item 2: sparse structure

@needs_anndata
def test_h5ad_column_index_past_n_vars_is_refused(tmp_path):
    data = r4.h5ad_column_index_past_n_vars(50)
    pattern = (r"bad.h5ad: the sparse matrix \(CSR, 6 cells x 5 genes\) is inconsistent: cell 1 holds the "
               r"gene index 50, outside \[0, 5\) \(there are 5 genes; 1 such index\)")
    with pytest.raises(DataFormatError, match=pattern):
        load_file(data, filename="bad.h5ad")
    assert_cli_refuses(run_cli(tmp_path, data, "bad.h5ad"), pattern)


@needs_anndata
def test_h5ad_csc_row_index_and_decreasing_indptr_are_refused():
    with pytest.raises(DataFormatError, match=r"\(CSC, 6 cells x 5 genes\) is inconsistent: gene 1 "
                                              r"holds the cell index 9, outside \[0, 6\)"):
        load_file(r4.h5ad_column_index_past_n_vars(9, csc=True), filename="c.h5ad")
    with pytest.raises(DataFormatError, match=r"its indptr decreases at cell 3 \(12 then 7\)"):
        load_file(r4.h5ad_indptr_decreasing(), filename="p.h5ad")


def _valid_by_loops(indptr, indices, n_major, n_minor, nnz) -> bool:
    """The CSR rules, checked one row and one index at a time."""
    if len(indptr) != n_major + 1 or len(indices) != nnz or indptr[0] != 0 or indptr[-1] != nnz:
        return False
    for r in range(n_major):
        if indptr[r + 1] < indptr[r]:
            return False
    return all(0 <= c < n_minor for c in indices)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(m=st.integers(1, 6), n=st.integers(1, 6), seed=st.integers(0, 10 ** 6),
       edit=st.sampled_from(["none", "index", "negative", "indptr-swap", "indptr-end"]),
       fmt=st.sampled_from(["csr", "csc"]))
def test_property_sparse_structure_check_agrees_with_loops(m, n, seed, edit, fmt):
    rng = np.random.default_rng(seed)
    A = sp.random(m, n, density=0.6, format=fmt, random_state=rng)
    indptr, indices = A.indptr.copy(), A.indices.copy()
    minor = n if fmt == "csr" else m
    if edit == "index" and indices.size:
        indices[rng.integers(indices.size)] = minor + int(rng.integers(0, 3))
    elif edit == "negative" and indices.size:
        indices[rng.integers(indices.size)] = -1
    elif edit == "indptr-swap" and indptr.size > 2:
        k = int(rng.integers(1, indptr.size - 1))
        indptr[k] = indptr[-1] + 1 if indptr[k] == indptr[k + 1] else indptr[k]
        indptr[k], indptr[k + 1] = indptr[k + 1], indptr[k]
    elif edit == "indptr-end":
        indptr[-1] += 1
    cls = sp.csr_matrix if fmt == "csr" else sp.csc_matrix
    try:  # scipy's own (partial) check at construction may refuse it first
        B = cls((A.data, indices, indptr), shape=(m, n))
    except ValueError:
        return
    B.indices, B.indptr = indices, indptr  # as read from a file: no check
    expected = _valid_by_loops(indptr.tolist(), indices.tolist(), m if fmt == "csr" else n, minor,
                               A.data.size)
    try:
        check_sparse_structure(B, "f")
    except DataFormatError:
        assert not expected
    else:
        assert expected
