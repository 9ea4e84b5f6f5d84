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
    # the core and the app's package (whose wheel carries app.py, pages/, ui/: see setup.py)
    assert project["tool"]["setuptools"]["packages"]["find"]["include"] == ["nspca_core*", "nspca_app"]
    assert meta["license"] == "MIT" and meta["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
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


# ----------------------------------------------------------------------------- the app from pip (issue 30 item 5)
def test_version_flag_prints_the_package_version(capsys):
    import nspca_core
    from nspca_core.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"nspca {nspca_core.__version__}"


def test_app_command_serves_the_checkout_app_with_the_options():
    import nspca_app
    from nspca_core.cli.options import _parser
    from nspca_core.cli.serve import app_command

    args = _parser().parse_args(["app", "--port", "8600", "--address", "0.0.0.0"])
    cmd = app_command(args.port, args.address)
    assert cmd[:4] == [sys.executable, "-m", "streamlit", "run"]
    assert Path(cmd[4]) == ROOT / "app.py" == nspca_app.app_dir() / "app.py"  # the checkout's own app.py
    assert cmd[cmd.index("--server.port") + 1] == "8600"
    assert cmd[cmd.index("--server.address") + 1] == "0.0.0.0"
    defaults = _parser().parse_args(["app"])
    assert (defaults.port, defaults.address) == (8501, "localhost")


@pytest.mark.parametrize("argv, msg", [
    (["app", "--port", "0"], r"--port must be an int in \[1, 65535\]; got 0"),
    (["app", "--port", "70000"], r"--port must be an int in \[1, 65535\]; got 70000"),
    (["app", "--address", "local host"], r"--address must be a host name or IP address"),
])
def test_app_command_refuses_bad_options(argv, msg, capsys):
    from nspca_core.cli import main

    assert main(argv) == 1
    assert re.search(msg, capsys.readouterr().err)


def test_app_command_without_streamlit_names_the_extra(monkeypatch, capsys):
    from nspca_core.cli import main
    from nspca_core.cli import serve

    real = importlib.util.find_spec
    monkeypatch.setattr(serve.importlib.util, "find_spec",
                        lambda name, *a: None if name == "streamlit" else real(name, *a))
    assert main(["app"]) == 1
    assert "pip install 'nspca-core[app]'" in capsys.readouterr().err


def test_app_dir_refuses_a_package_without_the_app(tmp_path, monkeypatch):
    """An nspca_app folder with neither its own copy nor a checkout beside it says what to do."""
    import nspca_app

    shim = tmp_path / "lib" / "nspca_app"
    shim.mkdir(parents=True)
    monkeypatch.setattr(nspca_app, "__file__", str(shim / "__init__.py"))
    with pytest.raises(FileNotFoundError, match=r"the app's files \(app.py, pages/, ui/\) are neither in"):
        nspca_app.app_dir()


def _app_files():
    """What the wheel must carry for the app, relative to the checkout (setup.py's globs)."""
    files = {"app.py", ".streamlit/config.toml"}
    files |= {p.relative_to(ROOT).as_posix() for p in (ROOT / "pages").glob("*.py")}
    files |= {p.relative_to(ROOT).as_posix() for p in (ROOT / "ui").rglob("*.py") if "__pycache__" not in p.parts}
    return files


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """The wheel built from a copy of the checkout (nothing is written into the tree)."""
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "LICENSE", "app.py"):
        shutil.copy(ROOT / name, src)
    for name in ("nspca_core", "nspca_app", "pages", "ui", ".streamlit", "reproduction"):
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    out = tmp_path_factory.mktemp("dist")
    cmd = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(out), str(src)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (path,) = out.glob("nspca_core-*.whl")
    return path


@pytest.mark.slow
def test_wheel_carries_the_app_the_license_and_the_command(wheel):
    import zipfile

    import nspca_core

    names = set(zipfile.ZipFile(wheel).namelist())
    carried = {n.removeprefix("nspca_app/") for n in names if n.startswith("nspca_app/")}
    assert _app_files() <= carried, _app_files() - carried
    assert "__init__.py" in carried
    # the app files are the package nspca_app's, not top-level modules of site-packages
    assert not {n for n in names if n.split("/")[0] in ("app.py", "pages", "ui")}
    meta = zipfile.ZipFile(wheel).read(f"nspca_core-{nspca_core.__version__}.dist-info/METADATA").decode()
    assert "License-Expression: MIT" in meta.splitlines()
    assert f"nspca_core-{nspca_core.__version__}.dist-info/licenses/LICENSE" in names
    assert "Provides-Extra: app" in meta.splitlines()
    entry = zipfile.ZipFile(wheel).read(f"nspca_core-{nspca_core.__version__}.dist-info/entry_points.txt").decode()
    assert "nspca = nspca_core.cli:main" in entry


def _children(pid: int) -> dict[int, str]:
    """The direct children of ``pid`` and their command lines (Linux /proc)."""
    out = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                out[int(stat.parent.name)] = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, IndexError, ValueError):
            continue
    return out


@pytest.mark.slow
@pytest.mark.browser
def test_installed_wheel_serves_the_app_with_nspca_app(wheel, tmp_path):
    """``pip install`` of the wheel (into a folder, the dependencies from this environment), then
    ``nspca app --port --address`` from another directory serves the installed copy: its page
    renders in headless Chromium."""
    import socket
    import time
    import urllib.request

    if not Path("/proc").is_dir():
        pytest.skip("needs Linux /proc to find the server process")
    target = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target",
                           str(target), str(wheel)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(target)}
    script = target / "bin" / "nspca"
    version = subprocess.run([sys.executable, str(script), "--version"], cwd=elsewhere, env=env,
                             capture_output=True, text=True, timeout=300)
    assert version.returncode == 0 and version.stdout.startswith("nspca "), version.stderr
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = open(tmp_path / "app.log", "w")
    server = subprocess.Popen([sys.executable, str(script), "app", "--port", str(port), "--address", "127.0.0.1"],
                              cwd=elsewhere, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    served: dict[int, str] = {}
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert server.poll() is None and time.monotonic() < deadline, (tmp_path / "app.log").read_text()
            time.sleep(0.5)
        served = _children(server.pid)
        assert any(str(target / "nspca_app" / "app.py") in c for c in served.values()), served  # the installed copy
        from tests.app_shell.test_browser import CHROMIUM_ARGS, _chromium

        exe = _chromium()
        if exe is None:
            pytest.skip("no Chromium found; `make test` installs Debian's chromium")
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=exe, headless=True, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page()
                page.goto(url, timeout=60_000)
                page.wait_for_selector('[data-testid="stMainBlockContainer"] h1', timeout=120_000)
                assert page.locator('[data-testid="stException"]').count() == 0
                assert page.get_by_text("Guided tour").count() > 0  # the navigation of app.py's PAGES
            finally:
                browser.close()
    finally:
        server.terminate()  # nspca app passes SIGTERM on to Streamlit
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()
    time.sleep(1)
    assert not [pid for pid in served if Path(f"/proc/{pid}").exists()]  # Streamlit stopped with it


def test_fit_help_lists_every_strategy_and_method_of_the_registry(capsys):
    """Issue 31 item 11: the help is derived from api.STRATEGIES / api.METHODS, never a copy."""
    from nspca_core.api import METHODS, STRATEGIES
    from nspca_core.cli import main

    with pytest.raises(SystemExit):
        main(["fit", "--help"])
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    strategies = text.split("several components:")[1].split("--d")[0]
    methods = text.split("algorithm:")[1].split("--strategy")[0]
    assert "quasi-orthogonal" in strategies
    assert all(s in strategies for s in STRATEGIES) and all(m in methods for m in METHODS)
    assert "deflation-remove (default)" in strategies and "auto (default)" in methods


def test_server_env_gives_freed_memory_back_without_overriding_the_user(monkeypatch):
    """`nspca app` starts the server with glibc's fixed mmap threshold and two heaps (freed arrays
    go back to the system); a value the user set is kept."""
    from nspca_core.cli.serve import SERVER_MALLOC_ENV, server_env

    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    env = server_env()
    assert env["MALLOC_MMAP_THRESHOLD_"] == SERVER_MALLOC_ENV["MALLOC_MMAP_THRESHOLD_"] == "1048576"
    assert env["MALLOC_ARENA_MAX"] == "4" and env["PATH"] == os.environ["PATH"]
