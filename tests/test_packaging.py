"""The project is an installable package: pyproject.toml, its entry point, package data, dependencies.

The slow test installs a copy of the package (``pip install --no-deps --target``)
and imports it from another working directory, so nothing depends on the
repository root being on ``sys.path``.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from fnmatch import fnmatch
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib", reason="tomllib needs Python >= 3.11")

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "nspca_core"
#: import name -> distribution name, where they differ
DISTRIBUTION = {"sklearn": "scikit-learn", "PIL": "pillow", "yaml": "pyyaml"}


@pytest.fixture(scope="module")
def project():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _requirement_names(specs):
    """Distribution names of PEP 508 strings: ``dask[array]>=2024.1`` -> ``dask``."""
    names = set()
    for spec in specs:
        name = spec.split(";")[0]
        for sep in "[<>=!~ ":
            name = name.split(sep)[0]
        names.add(name.strip().lower())
    return names


def _third_party_imports(path: Path):
    """(module-level imports, imports inside functions) of a source file, top-level names only."""
    tree = ast.parse(path.read_text(), filename=str(path))
    top, inner = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = {node.module.split(".")[0]}
        else:
            continue
        (top if node.col_offset == 0 else inner).update(names)
    stdlib = set(sys.stdlib_module_names) | {"nspca_core", "__future__"}
    return top - stdlib, inner - stdlib


def test_pyproject_declares_the_package(project):
    meta = project["project"]
    assert meta["name"] == "nspca-core"
    assert "version" in meta.get("dynamic", []) or "version" in meta
    assert project["build-system"]["build-backend"] == "setuptools.build_meta"
    assert project["tool"]["setuptools"]["packages"]["find"]["include"] == ["nspca_core*"]
    assert {"app", "dev", "dask"} <= set(meta["optional-dependencies"])
    assert {"streamlit", "plotly"} <= _requirement_names(meta["optional-dependencies"]["app"])
    assert {"pytest", "hypothesis", "ruff"} <= _requirement_names(meta["optional-dependencies"]["dev"])
    assert {"dask", "distributed"} <= _requirement_names(meta["optional-dependencies"]["dask"])
    # the core never needs the app's libraries
    assert not {"streamlit", "plotly"} & _requirement_names(meta["dependencies"])


def test_console_script_nspca_is_the_cli_main(project):
    target = project["project"]["scripts"]["nspca"]
    module, func = target.split(":")
    main = getattr(importlib.import_module(module), func)
    assert callable(main)
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0


def test_checksums_are_package_data(project):
    from nspca_core import datasets as D

    path = Path(D.CHECKSUMS_PATH).resolve()
    assert path.is_file()
    rel = path.relative_to(PACKAGE.resolve()).as_posix()  # raises when outside the package
    globs = project["tool"]["setuptools"]["package-data"]["nspca_core"]
    assert any(fnmatch(rel, g) for g in globs), (rel, globs)


def test_the_core_reads_nothing_outside_itself():
    """No module of nspca_core climbs out of the package from ``__file__`` to read or write files."""
    climb = re.compile(r"__file__\)[^\n]*(\.parents\[[1-9]|\.parent\.parent)")
    offenders = [path.relative_to(ROOT).as_posix() for path in PACKAGE.rglob("*.py")
                 if climb.search(path.read_text())]
    assert offenders == []


def test_every_import_of_the_core_is_a_declared_dependency(project):
    meta = project["project"]
    required = _requirement_names(meta["dependencies"])
    optional = set().union(*(_requirement_names(v) for v in meta["optional-dependencies"].values()))
    top, inner = set(), set()
    for path in PACKAGE.rglob("*.py"):
        t, i = _third_party_imports(path)
        top |= t
        inner |= i
    dist = {DISTRIBUTION.get(name, name).lower() for name in top}
    assert dist <= required, f"module-level imports not in [project] dependencies: {dist - required}"
    # imports inside functions may come from an extra (dask) or be probed optionally ("sparse")
    dist_inner = {DISTRIBUTION.get(name, name).lower() for name in inner}
    assert not {"streamlit", "plotly"} & (dist | dist_inner)
    unknown = dist_inner - required - optional - {"sparse"}
    assert not unknown, f"imports inside functions that no dependency or extra provides: {unknown}"


def test_requirements_files_point_at_the_extras():
    """The ranges live in pyproject.toml only; the requirements files install its extras."""
    lines = [ln.strip() for ln in (ROOT / "requirements.txt").read_text().splitlines()
             if ln.strip() and not ln.startswith("#")]
    assert lines == ["-e .[app]"]
    dev = [ln.strip() for ln in (ROOT / "requirements-dev.txt").read_text().splitlines()
           if ln.strip() and not ln.startswith("#")]
    assert dev == ["-e .[app,dev,dask]"]


def _can_build_without_isolation():
    """The running setuptools can build the wheel (>= 70.1 has bdist_wheel; older needs `wheel`)."""
    try:
        import setuptools
    except ImportError:
        return False
    version = tuple(int(p) for p in setuptools.__version__.split(".")[:2])
    return version >= (70, 1) or (version >= (64, 0) and importlib.util.find_spec("wheel") is not None)


@pytest.mark.slow
def test_installed_copy_imports_from_another_directory(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(ROOT / "pyproject.toml", src)
    shutil.copy(ROOT / "README.md", src)
    shutil.copytree(PACKAGE, src / "nspca_core", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    target = tmp_path / "site"
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(src)]
    if _can_build_without_isolation():
        cmd.insert(4, "--no-build-isolation")  # no index needed: the running setuptools builds
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # only the package (and its data) is installed: no app, tests or tools
    installed = {p.name for p in target.iterdir() if not p.name.endswith((".dist-info", ".egg-info"))}
    assert installed <= {"nspca_core", "bin"}, installed
    assert (target / "nspca_core" / "data" / "checksums.json").is_file()
    assert (target / "nspca_core" / "peers" / "__init__.py").is_file()
    assert (target / "nspca_core" / "_common" / "__init__.py").is_file()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(target)}
    code = ("import nspca_core, nspca_core.datasets as D, pathlib; "
            "print(pathlib.Path(nspca_core.__file__).resolve()); "
            "print(D._expected_checksums()['cbcl']['sha256'][:8])")
    run = subprocess.run([sys.executable, "-c", code], cwd=elsewhere, env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    where, digest = run.stdout.split()
    assert Path(where).is_relative_to(target.resolve())
    assert len(digest) == 8
    script = target / "bin" / "nspca"
    assert script.is_file()
    helped = subprocess.run([sys.executable, str(script), "--help"], cwd=elsewhere, env=env,
                            capture_output=True, text=True, timeout=300)
    assert helped.returncode == 0, helped.stderr[-3000:]
    assert "fit" in helped.stdout and "certify" in helped.stdout
    assert helped.stdout.startswith("usage: nspca ")  # the script names itself, not python -m
