"""The bag-of-words readers live in ``nspca_core.io`` (issue 29, item 6): ``nspca_core.text`` keeps
weighting and topic tables, re-exports the readers, and computes tf-idf with scikit-learn's
``TfidfTransformer`` — checked here against the formula the project used before, written out."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import nspca_core.io.bow as bow
import nspca_core.text as text
from nspca_core.text import text_weighting

ROOT = Path(__file__).resolve().parents[2]


def old_tfidf(X):
    """The tf-idf of ``text_weighting`` before scikit-learn did it (copied formula, for the test)."""
    X = sp.csr_matrix(X, dtype=np.float64, copy=True)
    D, W = X.shape
    df = np.bincount(X.indices[X.data > 0], minlength=W)
    idf = np.log((1.0 + D) / (1.0 + df)) + 1.0
    return sp.csr_matrix(X @ sp.diags(idf)), idf


@st.composite
def counts(draw):
    m, n = draw(st.integers(1, 9)), draw(st.integers(1, 9))
    cells = draw(st.lists(st.tuples(st.integers(0, m - 1), st.integers(0, n - 1),
                                    st.integers(0, 40)), max_size=40))
    rows, cols, vals = zip(*cells) if cells else ((), (), ())
    # explicit zeros stay stored (a zero count in a file): they are not occurrences
    X = sp.csr_matrix((np.array(vals, float), (np.array(rows, int), np.array(cols, int))),
                      shape=(m, n))
    return X


@settings(max_examples=80, deadline=None)
@given(counts(), st.booleans())
def test_property_tfidf_by_scikit_learn_equals_the_old_formula(X, center):
    want, idf = old_tfidf(X)
    got = text_weighting(X, weighting="tfidf", center=center)
    np.testing.assert_allclose(got.idf, idf, rtol=1e-15, atol=0)
    np.testing.assert_allclose(got.X.toarray(), want.toarray(), rtol=1e-15, atol=0)
    assert sp.isspmatrix_csr(got.X) and got.X.dtype == np.float64 and got.center == center
    # the input is not touched (explicit zeros included)
    assert got.X is not X


def test_tfidf_against_brute_force_per_cell():
    M = np.array([[3, 0, 1, 0], [0, 0, 2, 0], [1, 5, 0, 0]], float)
    got = text_weighting(sp.csr_matrix(M), weighting="tfidf")
    for j in range(4):
        df = sum(1 for i in range(3) if M[i, j] > 0)
        idf = np.log(4 / (1 + df)) + 1
        assert got.idf[j] == pytest.approx(idf, rel=1e-15)
        for i in range(3):
            assert got.X[i, j] == pytest.approx(M[i, j] * idf, rel=1e-15)


def test_counts_and_log1p_unchanged():
    X = sp.random(20, 15, density=0.3, random_state=0, format="csr") * 7
    np.testing.assert_array_equal(text_weighting(X, weighting="counts").X.toarray(), X.toarray())
    np.testing.assert_allclose(text_weighting(X, weighting="log1p").X.toarray(),
                               np.log1p(X.toarray()), rtol=1e-15)


def test_readers_importable_from_text_and_io_as_the_same_objects():
    for name in ("TextData", "TEXT_FORMATS", "read_uci_bow", "read_vocab", "read_mtx",
                 "read_sparse_npz", "load_text"):
        assert getattr(text, name) is getattr(bow, name), name
        assert name in text.__all__
    for name in text.__all__:
        assert hasattr(text, name), name


def _imports(path: Path) -> set:
    """Modules a file imports (relative imports resolved against its package)."""
    pkg = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = pkg.split(".")
            if node.level:
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module
            out.add(mod)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_io_never_imports_text():
    """The io <-> text import circle is gone: nothing under nspca_core/io imports nspca_core.text."""
    for path in sorted((ROOT / "nspca_core" / "io").glob("*.py")):
        assert "nspca_core.text" not in _imports(path), path.name
    assert "nspca_core.io.bow" in _imports(ROOT / "nspca_core" / "text.py")
    code = ("import sys, nspca_core.io\nfrom nspca_core.io import load_file\n"
            "print('nspca_core.text' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         check=True)
    assert out.stdout.strip() == "False"
