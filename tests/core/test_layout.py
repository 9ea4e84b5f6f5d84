"""The layout of nspca_core (issue 19): small modules, private names kept inside their
subpackage, a cheap ``import nspca_core``, and the import paths of moved code still working."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[2] / "nspca_core"
MAX_LINES = 600


def _modules():
    return sorted(p for p in CORE.rglob("*.py") if "tests" not in p.relative_to(CORE).parts)


def _package_of(path: Path) -> tuple[str, ...]:
    """The package a module belongs to, as name parts (a package's __init__ belongs to it)."""
    return path.relative_to(CORE.parent).with_suffix("").parts[:-1]


def _resolve(importer: Path, node: ast.ImportFrom) -> tuple[str, ...]:
    pkg = _package_of(importer)
    base = pkg[:len(pkg) - (node.level - 1)] if node.level else ()
    return base + (tuple(node.module.split(".")) if node.module else ())


def _is_package(parts: tuple[str, ...]) -> bool:
    return (CORE.parent.joinpath(*parts) / "__init__.py").is_file()


def _private_imports_across_subpackages(path: Path, text: str | None = None):
    """``(line, name, source)`` for every ``from X import _name`` in the module ``path`` (its
    text, or ``text`` as if it were there) whose source lies in another (sub)package of nspca_core."""
    own = _package_of(path)
    text = path.read_text(encoding="utf-8") if text is None else text
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.ImportFrom):
            continue
        target = _resolve(path, node)
        if not target or target[0] != "nspca_core":
            continue
        for alias in node.names:
            name = alias.name
            if not name.startswith("_") or name.startswith("__"):
                continue
            if _is_package(target + (name,)) or CORE.parent.joinpath(*target, name + ".py").is_file():
                source = target + (name,)  # a private module: judged by where it lives
                source_pkg = target
            else:
                source = target
                source_pkg = target if _is_package(target) else target[:-1]
            if source_pkg != own:
                yield node.lineno, name, ".".join(source)


def test_no_module_over_600_lines():
    long = {str(p.relative_to(CORE.parent)): n for p in _modules()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_the_private_import_scan_finds_crossings_and_only_those():
    text = ("from ..rank1 import _rank1_nspca\n"           # private, another package: found
            "from .tpower import _local, tpower_pca\n"     # private, same subpackage: allowed
            "from .._common.rank1 import rank1_point\n"    # public name of a private package
            "from ..certificates import _settings\n"       # a private module of another package
            "from ..certificates.single import _certify_cov\n")
    found = list(_private_imports_across_subpackages(CORE / "peers" / "em.py", text))
    assert found == [(1, "_rank1_nspca", "nspca_core.rank1"), (4, "_settings", "nspca_core.certificates._settings"),
                     (5, "_certify_cov", "nspca_core.certificates.single")]


def test_no_private_name_imported_across_subpackages():
    crossings = [f"{p.relative_to(CORE.parent)}:{line}: {name} from {source}"
                 for p in _modules() for line, name, source in _private_imports_across_subpackages(p)]
    assert not crossings, "\n".join(crossings)


def test_import_nspca_core_loads_no_solver_and_no_heavy_library():
    code = ("import sys, nspca_core; "
            "print(sorted(m for m in sys.modules if m.startswith('nspca_core.'))); "
            "print([m for m in ('scipy', 'pandas', 'sklearn', 'matplotlib', 'PIL', 'dask', "
            "'streamlit', 'plotly') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=CORE.parent).stdout.splitlines()
    # _common's __init__ is a docstring: the package costs nothing to import
    assert out[0] == ("['nspca_core._common', 'nspca_core._common.said', 'nspca_core._common.validation', "
                      "'nspca_core.result']")
    assert out[1] == "[]"


@pytest.mark.parametrize("old, new", [
    ("nspca_core.scores:nonneg_scores", "nspca_core.scores.descent:nonneg_scores"),
    ("nspca_core.scores:ScoresResult", "nspca_core.scores.result:ScoresResult"),
    ("nspca_core.scores:_pairs", "nspca_core.scores.geometry:_pairs"),
    ("nspca_core.explore:spannogram_curves_d2", "nspca_core.explore.d2:spannogram_curves_d2"),
    ("nspca_core.explore:spannogram_cells_d3", "nspca_core.explore.d3:spannogram_cells_d3"),
    ("nspca_core.explore:_pd_small", "nspca_core.explore.supports:_pd_small"),
    ("nspca_core.enet:ResultPath", "nspca_core.enet.path:ResultPath"),
    ("nspca_core:spannogram_curves_d2", "nspca_core.explore.d2:spannogram_curves_d2"),
    ("nspca_core:nonneg_scores", "nspca_core.scores.descent:nonneg_scores"),
])
def test_moved_code_keeps_its_import_paths(old, new):
    def load(spec):
        module, name = spec.split(":")
        return getattr(importlib.import_module(module), name)

    assert load(old) is load(new)


def test_no_import_circles_and_no_import_hidden_to_break_one():
    """The package's modules form no import circle, counting imports inside functions too, and no
    import inside a function points back at a module that reaches its importer (tools/structure)."""
    from tools.structure import circle_breaking_imports, circles, imports

    edges = imports()
    assert circles(edges) == []
    assert circle_breaking_imports(edges) == []


def test_structure_tool_finds_a_planted_circle(tmp_path):
    from tools.structure import circle_breaking_imports, circles, imports

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .b import g\n\ndef f():\n    return g()\n")
    (pkg / "b.py").write_text("def g():\n    from .a import f\n    return f\n")
    edges = imports("pkg", root=tmp_path)
    assert circles(edges) == [["pkg.a", "pkg.b"]]
    assert circle_breaking_imports(edges) == [("pkg.b", "pkg.a", 2)]
