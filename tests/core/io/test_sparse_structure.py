"""A CSR/CSC matrix whose index arrays do not describe its shape, passed directly to the fronts
(issue 40, item 2): a clear InputError naming what is wrong, never a crash (SciPy's kernels read
out of bounds).  The structure check is one function shared with the file readers."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nspca_core as nc
from nspca_core._common.validation import InputError, check_sparse_structure, sparse_structure_problem
from nspca_core.estimator import NonnegativeSparsePCA
from nspca_core.io.loaded import DataFormatError
from nspca_core.io.loaded import check_sparse_structure as check_file_structure


def _valid(fmt: str, seed: int = 0):
    X = sp.random(12, 6, density=0.4, format="csr", random_state=seed)
    X.data += 0.5
    return X.asformat(fmt)


def _brute_problem(X) -> bool:
    """Whether the arrays fail the CSR/CSC definition, element by element."""
    major, minor = X.shape if X.format == "csr" else X.shape[::-1]
    p, ix = list(X.indptr), list(X.indices)
    if len(p) != major + 1 or len(ix) != len(X.data) or p[0] != 0 or p[-1] != len(X.data):
        return True
    if any(b < a for a, b in zip(p, p[1:])):
        return True
    return any(not 0 <= j < minor for j in ix)


CORRUPTIONS = ["index past the end", "negative index", "indptr decreases", "indptr short",
               "indptr ends early", "indices short", "nan value", "inf value"]


def _corrupt(X, how: str, at: int, value: int):
    X = X.copy()
    major, minor = X.shape if X.format == "csr" else X.shape[::-1]
    i = at % X.nnz
    if how == "index past the end":
        X.indices[i] = minor + value
    elif how == "negative index":
        X.indices[i] = -1 - value
    elif how == "indptr decreases":
        r = 1 + at % (major - 1)
        X.indptr[r] = X.indptr[r + 1] + 1 + value
    elif how == "indptr short":
        X.indptr = X.indptr[:-1 - value % 3]
    elif how == "indptr ends early":
        X.indptr[-1] -= 1 + value % 2
    elif how == "indices short":
        X.indices = X.indices[:-1 - value % 2]
    elif how == "nan value":
        X.data[i] = np.nan
    else:
        X.data[i] = np.inf
    return X


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fmt=st.sampled_from(["csr", "csc"]), how=st.sampled_from(CORRUPTIONS),
       at=st.integers(0, 10_000), value=st.integers(0, 1_000_000), seed=st.integers(0, 5),
       front=st.sampled_from(["fit", "components", "estimator"]))
def test_property_corrupt_sparse_input_is_refused_by_name(fmt, how, at, value, seed, front):
    X = _corrupt(_valid(fmt, seed), how, at, value)
    assert (sparse_structure_problem(X) is not None) == _brute_problem(X)
    what = "finite" if how in ("nan value", "inf value") else "index arrays are inconsistent"
    if how in ("nan value", "inf value") and front == "estimator":
        what = "NaN|infinity|finite"
    with pytest.raises((InputError, ValueError), match=what):
        if front == "fit":
            nc.fit(X, k=2)
        elif front == "components":
            nc.components(X, n_components=2, k=2)
        else:
            NonnegativeSparsePCA(k=2).fit(X)


@pytest.mark.parametrize("how, match", [
    ("index past the end", r"row \d+ holds the column index \d+, outside \[0, 6\)"),
    ("negative index", r"row \d+ holds the column index -\d+, outside \[0, 6\)"),
    ("indptr decreases", r"its indptr decreases at row \d+"),
    ("indptr short", r"its indptr holds \d+ entries, not one per row plus one \(13\)"),
    ("indices short", r"\d+ indices for \d+ stored values"),
])
def test_messages_name_what_is_wrong(how, match):
    X = _corrupt(_valid("csr"), how, 3, 0)
    with pytest.raises(InputError, match=r"`X` is a CSR matrix \(12 x 6\) whose index arrays are "
                                         r"inconsistent: " + match):
        check_sparse_structure(X)
    with pytest.raises(DataFormatError, match=r"f.npz: the sparse matrix \(CSR, 12 cells x 6 genes\) "
                                              r"is inconsistent: " + match.replace("row", "cell")
                       .replace("column", "gene")):
        check_file_structure(X, "f.npz", "cells", "genes")


def test_valid_matrices_pass_and_give_the_same_fit():
    for fmt in ("csr", "csc", "coo"):
        X = _valid(fmt)
        assert sparse_structure_problem(X) is None
    a = nc.fit(_valid("csr"), k=2)
    b = nc.fit(_valid("csc"), k=2)
    assert a.variance == pytest.approx(b.variance)


def test_coo_with_a_bad_row_index_is_refused():
    X = _valid("coo")
    X.row[0] = 99
    with pytest.raises(InputError, match=r"stored entry 1 has the row index 99, outside \[0, 12\)"):
        check_sparse_structure(X)


@pytest.mark.parametrize("fmt, front", [("csr", "nc.fit(X, k=2)"), ("csc", "nc.fit(X, k=2)"),
                                        ("csr", "NonnegativeSparsePCA(k=2).fit(X)")])
def test_the_index_that_used_to_crash_the_process_is_an_error(fmt, front):
    """A negative index corrupted the heap (abort) and one past the end segfaulted: run in a
    child so that a crash fails the test instead of ending the run."""
    code = textwrap.dedent(f"""
        import scipy.sparse as sp
        import nspca_core as nc
        from nspca_core.estimator import NonnegativeSparsePCA
        X = sp.random(30, 8, density=0.3, format={fmt!r}, random_state=0)
        X.indices[3] = -2
        try:
            {front}
        except ValueError as exc:
            print("refused:", exc)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "refused: `X` is a" in proc.stdout and "index arrays are inconsistent" in proc.stdout
