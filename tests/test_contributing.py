"""CONTRIBUTING.md, proven by doing: each recipe applied to a temporary copy of the checkout.

Every test copies the tracked files, applies one recipe exactly as CONTRIBUTING.md tells a
newcomer (a method: its module and one registry entry; a cheap bound: its function and one entry
in ``BOUNDS``, plus its name in the certificates' docstring; a dataset: its generator and one
registry entry; a page: its file and one entry in ``app.PAGES``; a strategy: its module and one
``StrategySpec``; a file format: its reader and one ``FileFormat``; a preprocessing choice: one
``PreprocessingSpec``), checks that no other file changed, and
runs in the copy the checks the recipe promises: the new thing is offered everywhere the
registries reach (the API, the CLI, the app's lists) and the project's own tests of that area pass
unchanged. The copy's packages come first on ``sys.path`` (the editable install's finder is only
consulted after the path), so nothing outside the copy is touched.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
COPIED = ("nspca_core", "ui", "pages", "tests", "app.py", "pyproject.toml", "pytest.ini", "README.md",
          "CONTRIBUTING.md", ".streamlit")


def _tracked() -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [p for p in out.decode().split("\0") if p and p.split("/")[0] in COPIED]


@pytest.fixture
def checkout(tmp_path):
    """A copy of the tracked files that the recipes need; returns (root, files changed so far)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs the git checkout (git ls-files)")
    root = tmp_path / "repo"
    for rel in _tracked():
        src = ROOT / rel
        if src.is_file():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, root / rel)
    return root


def _run(root: Path, *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(root), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, *args], cwd=root, env=env, capture_output=True, text=True,
                          timeout=timeout)


def _pytest(root: Path, *tests: str) -> None:
    proc = _run(root, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-p", "no:randomly", *tests)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def _changed(root: Path) -> set[str]:
    """Files that differ from the checkout or are new (python and app files only)."""
    changed = set()
    for path in root.rglob("*"):
        if path.is_file() and "__pycache__" not in path.parts:
            rel = path.relative_to(root).as_posix()
            original = ROOT / rel
            if not original.is_file() or original.read_bytes() != path.read_bytes():
                changed.add(rel)
    return changed


def _append_to_mapping(path: Path, anchor: str, entry: str, closing: str = "\n)}") -> None:
    """Insert ``entry`` as the last row of the table opened on the line holding ``anchor``."""
    text = path.read_text()
    end = text.index(closing, text.index(anchor)) + 1
    path.write_text(text[:end] + entry + text[end:])


# ---------------------------------------------------------------------------------- one method

GREEDY = '''\
"""Greedy forward selection: a demonstration peer added by following CONTRIBUTING.md."""

from __future__ import annotations

import time

import numpy as np

from .._common.points import make_result
from ..operators.cov import Cov
from ..result import Result

__all__ = ["greedy_pca"]


def greedy_pca(cov: Cov, k: int, *, seed=0, callback=None) -> Result:
    """Add, one at a time, the feature whose inclusion gives the largest top eigenvalue of the
    chosen block; the answer is that block's (nonnegative) top eigenvector."""
    t0 = time.perf_counter()  # cov, k, seed, callback: checked at the front
    A = cov.dense()
    chosen: list[int] = []
    for step in range(k):
        best, best_val = None, -np.inf
        for j in range(A.shape[0]):
            if j not in chosen:
                idx = chosen + [j]
                val = np.linalg.eigvalsh(A[np.ix_(idx, idx)])[-1]
                if val > best_val:
                    best, best_val = j, val
        chosen.append(best)
        if callback is not None:
            callback(step + 1, k)
    w, V = np.linalg.eigh(A[np.ix_(chosen, chosen)])
    v = V[:, -1] if V[:, -1].sum() >= 0 else -V[:, -1]
    x = np.zeros(A.shape[0])
    x[chosen] = np.maximum(v, 0.0)
    x /= np.linalg.norm(x)
    return make_result(cov, x, method="greedy", params=dict(k=k, seed=seed), t0=t0)
'''

GREEDY_SPEC = ('    MethodSpec("greedy", "greedy forward selection", "greedy", "single", "zass2006", "#117733",\n'
               '               cost="slow", function="nspca_core.peers.greedy:greedy_pca", symbol="star-square"),\n')


def test_recipe_one_method(checkout):
    root = checkout
    (root / "nspca_core/peers/greedy.py").write_text(GREEDY)
    _append_to_mapping(root / "nspca_core/methods.py", "REGISTRY: dict[str, MethodSpec]", GREEDY_SPEC)
    assert _changed(root) == {"nspca_core/peers/greedy.py", "nspca_core/methods.py"}

    # the API, the peers' wrapper, the CLI and the app's lists all offer it
    probe = _run(root, "-c", textwrap.dedent("""
        import numpy as np, nspca_core as nc
        from nspca_core.peers import PEER_METHODS
        from tests.bruteforce import brute_opt
        assert "greedy" in nc.METHODS and "greedy" in PEER_METHODS
        rng = np.random.default_rng(1)
        X = np.abs(rng.standard_normal((30, 7)))
        r = nc.fit(X, k=3, method="greedy", certify=False)
        A = X.T @ X / len(X)            # fit takes X as given (no centering)
        assert r.x.min() >= 0 and np.count_nonzero(r.x) <= 3 and abs(np.linalg.norm(r.x) - 1) < 1e-12
        assert r.variance <= brute_opt(A, 3)[0] * (1 + 1e-9)
        try:
            nc.fit(X, k=3, method="greedy", certify=False, restarts=2)
        except nc.InputError as e:
            assert "restarts" in str(e)
        else:
            raise AssertionError("an unknown option must be an InputError")
        from ui.figures import analysis
        assert analysis.method_label("greedy") == "greedy forward selection"
        print("ok")
    """))
    assert probe.returncode == 0 and probe.stdout.strip().endswith("ok"), probe.stderr[-3000:]
    help_text = _run(root, "-m", "nspca_core", "fit", "--help")
    assert help_text.returncode == 0 and "greedy" in help_text.stdout
    cli = _run(root, "-m", "nspca_core", "fit", "synthetic-planted", "--k", "3", "--method", "greedy",
               "--out", str(root / "out"))
    assert cli.returncode == 0, cli.stderr[-3000:]
    _pytest(root, "tests/app_shell/test_registry.py", "tests/core/test_api.py")


# ----------------------------------------------------------------------------------- one bound

DIAG_BOUND = '''def _diag_k(s: Spectrum, ks: np.ndarray) -> np.ndarray:
    """``OPT <= s_k(diag A)``, the sum of the k largest variances: for x on a support J of k
    features, ``x^T A x <= lambda_max(A_JJ) <= tr(A_JJ)`` (A_JJ is psd).  A demonstration bound
    added by following CONTRIBUTING.md; the sum rounded up by ``4 n eps``."""
    top = np.cumsum(-np.sort(-s.diag))
    return top[np.minimum(ks, s.n) - 1] * (1 + 4 * s.n * _EPS)


'''

DIAG_ENTRY = '    Bound("diag-k", lambda s: s.diag is not None, _diag_k),\n'

DIAG_DOC = """``diag-k``
    The sum of the k largest variances (``BOUNDS``).
"""


def test_recipe_one_bound(checkout):
    root = checkout
    bounds = root / "nspca_core/certificates/bounds.py"
    text = bounds.read_text()
    text = text.replace("#: the cheap bounds", DIAG_BOUND + "#: the cheap bounds", 1)  # the function
    bounds.write_text(text)
    _append_to_mapping(bounds, "BOUNDS: tuple[Bound, ...] = (", DIAG_ENTRY, closing="\n)\n")  # its entry
    init = root / "nspca_core/certificates/__init__.py"
    text = init.read_text()
    init.write_text(text.replace("``exact(k<=2)``\n", DIAG_DOC + "``exact(k<=2)``\n", 1))
    assert _changed(root) == {"nspca_core/certificates/bounds.py", "nspca_core/certificates/__init__.py"}
    # every driver offers it: one k dense, a path of k, the split's remainder, the split; and it is a bound
    probe = _run(root, "-c", textwrap.dedent("""
        import numpy as np
        from nspca_core import certify, certify_path
        from nspca_core.operators.cov import Cov
        from nspca_core.certificates.bounds import _bound_rest
        from tests.bruteforce import brute_opt
        rng = np.random.default_rng(2)
        X = rng.standard_normal((12, 7)) * rng.uniform(0.1, 3.0, 7)
        A = X.T @ X / 12
        for k in (1, 3, 7):
            c = certify(X, k=k, effort="fast", center=False)
            assert c.bounds["diag-k"] >= brute_opt(A, k)[0], (k, c.bounds)
            assert abs(c.bounds["diag-k"] - np.sort(np.diag(A))[::-1][:k].sum()) < 1e-9 * A.trace()
        for c in certify_path(X, ks=[1, 3, 7], effort="fast", center=False):
            assert c.bounds["diag-k"] >= brute_opt(A, c.k)[0]
        assert "diag-k" in _bound_rest(Cov(X, None), np.arange(3, 7), 2, "fast")
        Xs = rng.standard_normal((20, 2600))  # n above the dense limit: the split driver
        assert "diag-k" in certify(Xs - Xs.mean(0), k=3, effort="fast").bounds
        print("ok")
    """))
    assert probe.returncode == 0 and probe.stdout.strip().endswith("ok"), probe.stderr[-3000:]
    _pytest(root, "tests/core/certificates/test_bounds_registry.py", "tests/core/certificates/test_single.py")


# --------------------------------------------------------------------------------- one dataset

GENERATOR = '''

def two_blocks(n: int = 20, m: int = 120, seed=0):
    """Two disjoint blocks of correlated nonnegative features (a demonstration generator)."""
    rng = np.random.default_rng(seed)
    z = np.abs(rng.standard_normal((m, 2)))
    X = 0.1 * np.abs(rng.standard_normal((m, n)))
    X[:, : n // 2] += z[:, :1]
    X[:, n // 2:] += z[:, 1:]
    support = [np.arange(n // 2), np.arange(n // 2, n)]
    return X, {"supports": support}
'''

DATASET_ENTRY = '''    _synthetic_info(
        "two-blocks", "Two blocks of correlated features", "two_blocks", (120, 20), (("n", 20), ("m", 120)),
        description="Two disjoint blocks of nonnegative features driven by one factor each.",
        citation="a demonstration entry (CONTRIBUTING.md, One dataset)"),
'''


def test_recipe_one_dataset(checkout):
    root = checkout
    with open(root / "nspca_core/synthetic.py", "a") as f:
        f.write(GENERATOR)
    _append_to_mapping(root / "nspca_core/datasets/registry.py", "_REGISTRY: dict[str, DatasetInfo]",
                       DATASET_ENTRY)
    assert _changed(root) == {"nspca_core/synthetic.py", "nspca_core/datasets/registry.py"}
    probe = _run(root, "-c", textwrap.dedent("""
        import nspca_core as nc
        assert "two-blocks" in [i.name for i in nc.list_datasets()]
        ds = nc.load_dataset("two-blocks", m=50)
        assert ds.X.shape == (50, 20) and len(ds.feature_names) == 20
        r = nc.fit(ds.X, k=10)
        assert set(r.support) in ({*range(10)}, {*range(10, 20)}), r.support
        print("ok")
    """))
    assert probe.returncode == 0 and probe.stdout.strip().endswith("ok"), probe.stderr[-3000:]
    cli = _run(root, "-m", "nspca_core", "fit", "two-blocks", "--k", "5", "--out", str(root / "out"))
    assert cli.returncode == 0, cli.stderr[-3000:]
    _pytest(root, "tests/data/datasets/test_datasets.py")


# ------------------------------------------------------------------------------------ one page

PAGE = '''"""A demonstration page added by following CONTRIBUTING.md: the answer at the sidebar's k."""

import streamlit as st

from ui import state
from ui.sidebar import page_intro

page_intro("Hello k", "The first component at the sidebar's k.", "Asteris et al. (2014), Section 1.")
settings = state.settings()
st.write(f"k = {settings.k}")
'''


def test_recipe_one_page(checkout):
    root = checkout
    (root / "pages/hello_k.py").write_text(PAGE)
    _append_to_mapping(root / "app.py", '"Your data": [',
                       '        ("pages/hello_k.py", "Hello k", ":material/waving_hand:"),\n', closing="\n    ],")
    assert _changed(root) == {"pages/hello_k.py", "app.py"}
    probe = _run(root, "-c", textwrap.dedent("""
        from tests.conftest import page_app
        at = page_app("hello_k.py", timeout=120).run()
        assert not at.exception and not at.error, (at.exception, at.error)
        assert any("k = " in m.value for m in at.markdown), [m.value for m in at.markdown]
        print("ok")
    """))
    assert probe.returncode == 0 and probe.stdout.strip().endswith("ok"), probe.stderr[-3000:]
    # the app's navigation lists it, and the app's own tests of its page table pass unchanged
    _pytest(root, "tests/app_shell/test_shell.py", "tests/app_shell/test_registry.py")


# ------------------------------------------------------------------------------- one strategy

BLOCKS = '''"""Round-robin blocks: a demonstration strategy added by following CONTRIBUTING.md."""

from __future__ import annotations

import numpy as np

__all__ = ["blocks_strategy"]


def blocks_strategy(C, ks, *, given, method, d, eps, seed, options, fit, callback, keep_problems):
    """Deal the features, by decreasing variance, round-robin into one block per component and solve
    each block with the single-component method: components of disjoint supports."""
    order = np.argsort(-C.diag(), kind="stable")
    step = {key: val for key, val in options.items() if key != "effort"}
    cols, results, problems = [], [], []
    for j, k in enumerate(ks):
        idx = np.sort(order[j::len(ks)])
        if idx.size == 0:
            break
        sub = C.columns(idx)
        res = fit(sub, min(k, idx.size), method, min(d, idx.size), eps, seed, None, step)
        x = np.zeros(C.n)
        x[idx] = res.x
        cols.append(x)
        results.append(res)
        problems.append(sub)
        if callback is not None:
            callback(j + 1, len(ks))
    return np.column_stack(cols), results, problems, method, {}
'''

BLOCKS_SPEC = ('    StrategySpec("blocks", "round-robin blocks of features",\n'
               '                 "nspca_core.peers.blocks:blocks_strategy", dask=True, disjoint=True,\n'
               '                 max_components="n_features"),\n')


def test_recipe_one_strategy(checkout):
    root = checkout
    (root / "nspca_core/peers/blocks.py").write_text(BLOCKS)
    _append_to_mapping(root / "nspca_core/methods.py", "STRATEGIES: dict[str, StrategySpec]", BLOCKS_SPEC)
    assert _changed(root) == {"nspca_core/peers/blocks.py", "nspca_core/methods.py"}
    probe = _run(root, "-c", textwrap.dedent("""
        import numpy as np, nspca_core as nc, nspca_core.api
        from nspca_core import NonnegativeSparsePCA
        assert "blocks" in nc.api.STRATEGIES
        X = np.random.default_rng(3).standard_normal((40, 9))
        cr = nc.components(X, n_components=3, k=2, strategy="blocks")
        L = cr.loadings
        assert cr.strategy == "blocks" and L.shape == (9, 3) and L.min() >= 0
        assert (np.count_nonzero(L, axis=1) <= 1).all()      # disjoint supports
        assert all(r.upper_bound >= r.variance for r in cr.results) and cr.upper_bound >= cr.variance.sum()
        est = NonnegativeSparsePCA(n_components=3, k=2, strategy="blocks", certify=False).fit(X)
        assert est.components_.shape == (3, 9)
        try:
            nc.components(X, n_components=3, k=2, strategy="blocks", min_angle=30)
        except nc.InputError as e:
            assert "min_angle" in str(e)
        else:
            raise AssertionError("an option the strategy does not take must be an InputError")
        from ui import work
        assert "blocks" in work.registry.STRATEGIES
        print("ok")
    """))
    assert probe.returncode == 0 and probe.stdout.strip().endswith("ok"), probe.stderr[-3000:]
    help_text = _run(root, "-m", "nspca_core", "fit", "--help")
    assert help_text.returncode == 0 and "blocks" in help_text.stdout
    cli = _run(root, "-m", "nspca_core", "fit", "synthetic-planted", "--k", "3", "--components", "2",
               "--strategy", "blocks", "--out", str(root / "out"))
    assert cli.returncode == 0, cli.stderr[-3000:]
    page = _run(root, "-c", textwrap.dedent("""
        from tests.conftest import page_app
        at = page_app("several_components.py", timeout=300).run()
        assert not at.exception, at.exception
        assert "round-robin blocks of features" in at.multiselect(key="sc_strategies").options  # its label
        print("ok")
    """))
    assert page.returncode == 0 and page.stdout.strip().endswith("ok"), page.stderr[-3000:]
    _pytest(root, "tests/core/test_strategies.py", "tests/core/test_api.py::test_components_validation")


# ---------------------------------------------------------------------------- one file format

JSON_READER = '''"""JSON tables (a list of rows of numbers): a demonstration format added by following
CONTRIBUTING.md."""

from __future__ import annotations

import json

import numpy as np

from .loaded import DataFormatError, LoadedData, _finish, _names_for

__all__ = ["read_json"]


def read_json(data: bytes, name: str, *, nan_policy: str, variable=None, max_bytes: int) -> LoadedData:
    """The rows of a JSON array of equal-length arrays of numbers, as samples."""
    try:
        rows = json.loads(data.decode("utf-8"))
        X = np.array(rows, dtype=np.float64)
    except (UnicodeDecodeError, ValueError, TypeError) as exc:
        raise DataFormatError(f"{name}: not a JSON array of rows of numbers ({exc})") from None
    if X.ndim != 2:
        raise DataFormatError(f"{name}: a JSON table is an array of rows; got {X.ndim} dimension(s)")
    return _finish(X, _names_for(X.shape[1], None), None, None, None, [], name, "json", nan_policy)
'''

JSON_ENTRY = '    FileFormat((".json",), "JSON table (.json)", "nspca_core.io.json_table:read_json"),\n'


def test_recipe_one_file_format(checkout):
    root = checkout
    (root / "nspca_core/io/json_table.py").write_text(JSON_READER)
    _append_to_mapping(root / "nspca_core/io/formats.py", "FORMATS: tuple[FileFormat, ...] = (", JSON_ENTRY,
                       closing="\n)\n")
    assert _changed(root) == {"nspca_core/io/json_table.py", "nspca_core/io/formats.py"}
    rng = np.random.default_rng(4)
    X = np.abs(rng.standard_normal((30, 6)))
    (root / "table.json").write_text(json.dumps(X.tolist()))
    X[3, 2] = np.nan
    (root / "gaps.json").write_text(json.dumps(X.tolist()))  # NaN: Python's json writes it
    probe = _run(root, "-c", textwrap.dedent("""
        import numpy as np, nspca_core as nc
        from nspca_core.io import ALLOWED_EXTENSIONS, DataFormatError
        assert ".json" in ALLOWED_EXTENSIONS
        d = nc.load_file("table.json")
        assert d.X.shape == (30, 6)
        assert nc.load_file("table.json", orientation="rows-are-features").X.shape == (6, 30)
        try:
            nc.load_file("gaps.json")
        except nc.InputError as e:
            assert "NaN" in str(e)
        else:
            raise AssertionError("a NaN must be refused by default")
        assert nc.load_file("gaps.json", nan_policy="drop-rows").X.shape == (29, 6)
        try:
            nc.load_file(b"{not json", filename="bad.json")
        except DataFormatError as e:
            assert "bad.json" in str(e)
        else:
            raise AssertionError("a broken file must be a DataFormatError")
        from ui.messages import FILE_TYPES, refused_file
        assert "json" in FILE_TYPES and refused_file("x.json", FILE_TYPES) is None
        print("ok")
    """))
    assert probe.returncode == 0 and probe.stdout.strip().endswith("ok"), probe.stderr[-3000:]
    cli = _run(root, "-m", "nspca_core", "fit", "table.json", "--k", "2", "--out", str(root / "out"))
    assert cli.returncode == 0, cli.stderr[-3000:]
    _pytest(root, "tests/data/io/test_load.py")


# ----------------------------------------------------------------------- one preprocessing choice

PREPROCESSING_ENTRY = ('    PreprocessingSpec("log1p-standardize", ("log1p", "center", "standardize"), '
                       '"log(1+x), then unit variance"),\n')


def test_recipe_one_preprocessing(checkout):
    root = checkout
    _append_to_mapping(root / "nspca_core/datasets/preprocessing.py", "PREPROCESSING = {s.name: s for s in (",
                       PREPROCESSING_ENTRY)
    assert _changed(root) == {"nspca_core/datasets/preprocessing.py"}
    rng = np.random.default_rng(5)
    np.savetxt(root / "counts.csv", rng.poisson(3.0, (40, 6)) * rng.uniform(1, 50, 6), delimiter=",")
    probe = _run(root, "-c", textwrap.dedent("""
        import numpy as np
        from nspca_core import NonnegativeSparsePCA, preprocess
        from nspca_core.datasets import PREPROCESSING
        X = np.loadtxt("counts.csv", delimiter=",")
        est = NonnegativeSparsePCA(n_components=2, k=3, preprocessing="log1p-standardize", certify=False).fit(X)
        ref = preprocess(X, steps=PREPROCESSING["log1p-standardize"].steps).X
        assert np.allclose(est.mean_, np.log1p(X).mean(axis=0)) and np.allclose(est.scale_, np.log1p(X).std(axis=0))
        C = est.components_
        assert np.allclose(est.transform(X), ref @ C.T @ np.linalg.pinv(C @ C.T))
        from ui import state
        assert state.PREPROCESSING_STEPS["log1p-standardize"] == ("log1p", "center", "standardize")
        print("ok")
    """))
    assert probe.returncode == 0 and probe.stdout.strip().endswith("ok"), probe.stderr[-3000:]
    cli = _run(root, "-m", "nspca_core", "fit", "counts.csv", "--k", "2", "--preprocessing", "log1p-standardize",
               "--out", str(root / "out"))
    assert cli.returncode == 0, cli.stderr[-3000:]
    summary = json.loads((root / "out" / "summary.json").read_text())
    assert summary["preprocessing"] == ["log1p", "center", "standardize"]
