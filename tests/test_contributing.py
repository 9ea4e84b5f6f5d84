"""CONTRIBUTING.md, proven by doing: each recipe applied to a temporary copy of the checkout.

Every test copies the tracked files, applies one recipe exactly as CONTRIBUTING.md tells a
newcomer (a method: its module and one registry entry; a cheap bound: its function and one entry
in ``BOUNDS``, plus its name in the certificates' docstring; a dataset: its generator and one
registry entry; a page: its file and one entry in ``app.PAGES``), checks that no other file changed, and
runs in the copy the checks the recipe promises: the new thing is offered everywhere the
registries reach (the API, the CLI, the app's lists) and the project's own tests of that area pass
unchanged. The copy's packages come first on ``sys.path`` (the editable install's finder is only
consulted after the path), so nothing outside the copy is touched.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

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

from .._common.checks import check_peer_args
from .._common.points import make_result
from .._cov import Cov
from ..result import Result

__all__ = ["greedy_pca"]


def greedy_pca(cov: Cov, k: int, *, seed=0, callback=None) -> Result:
    """Add, one at a time, the feature whose inclusion gives the largest top eigenvalue of the
    chosen block; the answer is that block's (nonnegative) top eigenvector."""
    t0 = time.perf_counter()
    cov, k, rng, callback = check_peer_args(cov, k, seed, callback)
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
    _pytest(root, "tests/app/test_app_registry.py", "tests/core/test_api.py")


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
    _pytest(root, "tests/app/test_app_shell.py", "tests/app/test_app_registry.py")
