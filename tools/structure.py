"""Measures of the repository's shape (issue 37): import circles, imports hidden in functions,
long functions, validation mechanisms, strategy literals, top-level modules, page sizes, rewrites of
the core's message text in the app, test folders that do not mirror the code.

    python -m tools.structure                      # a report for this checkout
    python -m tools.structure --json               # the same as JSON
    python -m tools.structure --root DIR           # a report for another checkout (e.g. an export of main)
    python -m tools.structure --compare OLD.json   # a before/after table: OLD.json against this checkout

An import edge goes from a module to the module it names (``from .x import y`` names ``x.y``
when that is a module, else ``x``). A *circle* is a strongly connected component of more than
one module in the graph of every internal import, those at module level and those inside
functions. An import inside a function *breaks a circle* when it points back into a module
that reaches the importer (the import could not move to the top without a circular import);
optional third-party imports inside functions are not counted (they are deliberate).

The graph spans the product: ``nspca_core`` (the core), ``ui`` and ``pages`` (the app's layer) and
``app.py``, so a circle between the app's modules (``ui.compute -> ui.live -> ui.work ->
ui.compute``, through in-function imports) is found like one in the core.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# what the whole-product graph reads: packages (folders) and single scripts
PRODUCT = ("nspca_core", "ui", "pages", "app.py")
CORE = "nspca_core"
APP = ("ui", "pages", "app.py")
# the strategy names of issue 37 (item 2: each a literal in at most two product files)
STRATEGIES = ("deflation-remove", "deflation-project", "bipartite", "quasi-orthogonal", "deflation")
PAGE_LIMIT = 250  # issue 37, item 5: every page at most this many lines
BOOL_MESSAGE = "must be True or False"
# the files of the one table of parameters (issue 37, item 1), before and after the move to _common/
VALIDATION_FILES = ("_validation.py", "_common/validation.py")
TABLE_FILES = ("_common/params.py", "_common/options.py", "_common/validation.py", "_validation.py")
# below the fronts (relative to nspca_core/): what runs after api/estimator/CLI/Dask checked the arguments
BELOW_FRONTS = ("peers", "deflation.py", "solve.py", "_common")
CHECK_CALLS = ("check", "in_interval", "in_choices", "check_options")
# private places of Streamlit (and CPython's threading) the app may reach only through ui/streamlit_runtime.py
# a test folder -> the code its subfolders mirror (tests/core/common mirrors nspca_core/_common); the
# folders of tests across pages (app.py) mirror nothing
TEST_MIRRORS = {"core": CORE, "data": CORE, "ui": "ui", "pages": "pages"}
SHARED_TEST_FOLDERS = ("app_shell",)
STREAMLIT_INTERNALS = ("_session_mgr", "_uploaded_file_mgr", "_async_objs", "uses_pages_directory",
                       "get_script_run_ctx", "_register_atexit", "pages_manager", "scriptrunner")


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _resolve(importer: str, is_package: bool, level: int, module: str | None) -> str:
    """The absolute name of ``from <level dots><module> import ...`` written in ``importer``."""
    if level == 0:
        return module or ""
    base = importer.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def _files(parts, root: Path) -> list[Path]:
    out = []
    for part in parts:
        p = root / part
        if p.is_dir():
            out.extend(sorted(p.rglob("*.py")))
        elif p.is_file():
            out.append(p)
    return out


def imports(package: str | tuple = "nspca_core", root: Path = ROOT) -> dict:
    """{module: [(target, inside_function, line)]} for every internal import of ``package``
    (a folder name, or a tuple of folders and scripts read as one graph: :data:`PRODUCT`)."""
    parts = (package,) if isinstance(package, str) else tuple(package)
    modules = {module_name(f, root): f for f in _files(parts, root)}
    edges: dict[str, list] = {name: [] for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        is_package = path.name == "__init__.py"
        _walk(tree, name, is_package, modules, edges[name], in_function=False)
    return edges


def _walk(node, name, is_package, modules, out, in_function):
    for child in ast.iter_child_nodes(node):
        inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        if isinstance(child, ast.ImportFrom):
            base = _resolve(name, is_package, child.level, child.module)
            for alias in child.names:
                target = f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                if target in modules and target != name:
                    out.append((target, in_function, child.lineno))
        elif isinstance(child, ast.Import):
            for alias in child.names:
                if alias.name in modules and alias.name != name:
                    out.append((alias.name, in_function, child.lineno))
        _walk(child, name, is_package, modules, out, inside)


def circles(edges: dict) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = [0]
    graph = {a: sorted({t for t, _, _ in targets}) for a, targets in edges.items()}

    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, it = work[-1]
            advanced = False
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(graph[nxt])))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def _reaches(edges: dict, source: str, goal: str) -> bool:
    seen, todo = {source}, [source]
    while todo:
        node = todo.pop()
        if node == goal:
            return True
        for target, _, _ in edges[node]:
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return False


def circle_breaking_imports(edges: dict) -> list[tuple[str, str, int]]:
    """Imports inside functions whose target reaches back to the importer."""
    return sorted({(a, t, line) for a, targets in edges.items() for t, inside, line in targets
                   if inside and _reaches(edges, t, a)})


def inside_function_count(edges: dict, prefixes: tuple) -> int:
    """Internal imports inside functions written in modules under ``prefixes``."""
    return sum(inside for a, targets in edges.items() if _under(a, prefixes) for _, inside, _ in targets)


def _under(module: str, prefixes) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def long_functions(package: str = "nspca_core", root: Path = ROOT, limit: int = 150) -> list:
    rows = []
    for path in sorted((root / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > limit:
                    rows.append((f"{module_name(path, root)}.{node.name}", length))
    return sorted(rows, key=lambda r: -r[1])


# ------------------------------------------------------------------ issue 37's other measures
def _string_constants(tree) -> list[str]:
    """The string literals of a module, docstrings left out (a name in prose is not a list entry)."""
    docs = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docs.add(id(first.value))
    return [n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def strategy_literals(root: Path = ROOT) -> dict:
    """{strategy name: product files holding it as a whole string literal (not in a docstring)}."""
    counts = {name: 0 for name in STRATEGIES}
    for path in _files(PRODUCT, root):
        found = set(_string_constants(ast.parse(path.read_text())))
        for name in STRATEGIES:
            counts[name] += name in found
    return counts


def validation(root: Path = ROOT) -> dict:
    """Where the core checks arguments: files outside ``io/`` defining a ``check*`` function, the
    mechanisms of issue 37 still present, and how often "must be True or False" is written."""
    core = root / CORE
    files = set()
    bool_messages = 0
    for path in sorted(core.rglob("*.py")):
        rel = path.relative_to(core)
        text = path.read_text()
        bool_messages += text.count(BOOL_MESSAGE)
        if rel.parts[0] == "io":
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.lstrip("_").startswith("check"):
                files.add(str(rel))
                break
    mechanisms = {
        "_validation.check_*": any(_defines(core / rel, lambda n: n.startswith("check_")) for rel in VALIDATION_FILES),
        "_common/params.PARAMETERS": _assigns(core / "_common" / "params.py", "PARAMETERS"),
        "params.py closures": _defines(core / "_common" / "params.py",
                                       lambda n: n in ("int_at_least", "float_between", "one_of", "flag",
                                                       "sparsity")),
        "_common/checks.py": (core / "_common" / "checks.py").is_file(),
        "solve.check_eps/check_callback": _defines(core / "solve.py",
                                                   lambda n: n in ("check_eps", "check_callback")),
    }
    return {"files_defining_check": len(files), "mechanisms": sorted(k for k, v in mechanisms.items() if v),
            "bool_message_copies": bool_messages, "below_fronts": below_front_checks(root)}


def below_front_checks(root: Path = ROOT) -> list[str]:
    """Core files below the fronts (:data:`BELOW_FRONTS`: the peers, the deflation loops, the solvers,
    the shared kernels) that still check an argument: a ``raise InputError(...)``, or a call of the
    table's ``check``/``in_interval``/``in_choices`` or of any ``check_*`` function (issue 37, item 1: code below
    the fronts takes clean values and raises nothing about arguments)."""
    core = root / CORE
    out = []
    for part in BELOW_FRONTS:
        paths = sorted((core / part).rglob("*.py")) if (core / part).is_dir() else [core / part]
        for path in paths:
            rel = str(path.relative_to(core))
            if not path.is_file() or rel in TABLE_FILES:
                continue
            if any(_argument_check(n) for n in ast.walk(ast.parse(path.read_text()))):
                out.append(rel)
    return out


def _argument_check(node) -> bool:
    if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
        func = node.exc.func
        return getattr(func, "id", getattr(func, "attr", "")) == "InputError"
    if isinstance(node, ast.Call):
        func = node.func
        name = func.id if isinstance(func, ast.Name) else ""  # a method such as rule.check is the table's own
        return name in CHECK_CALLS or name.lstrip("_").startswith("check_")
    return False


def _defines(path: Path, wanted) -> bool:
    if not path.is_file():
        return False
    return any(isinstance(n, ast.FunctionDef) and wanted(n.name) for n in ast.parse(path.read_text()).body)


def _assigns(path: Path, name: str) -> bool:
    if not path.is_file():
        return False
    for n in ast.parse(path.read_text()).body:
        targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return True
    return False


def top_level_modules(root: Path = ROOT) -> int:
    """Files directly in ``nspca_core/`` (``__init__`` and ``__main__`` included, as issue 37 counts them;
    folders not counted)."""
    return sum(1 for _ in (root / CORE).glob("*.py"))


_SLEEP = re.compile(r"\btime\.sleep\s*\(|(?<![\w.])sleep\s*\(")


def pages(root: Path = ROOT) -> dict:
    """{page: (lines, time.sleep calls)} for every page script."""
    out = {}
    for path in sorted((root / "pages").glob("*.py")):
        tree = ast.parse(path.read_text())
        sleeps = sum(1 for n in ast.walk(tree) if isinstance(n, ast.Call) and _is_sleep(n.func))
        out[path.stem] = (len(path.read_text().splitlines()), sleeps)
    return out


def _is_sleep(func) -> bool:
    if isinstance(func, ast.Attribute):
        return func.attr == "sleep" and isinstance(func.value, ast.Name) and func.value.id == "time"
    return isinstance(func, ast.Name) and func.id == "sleep"


def _names(tree) -> set:
    names = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    names |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    names |= {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}  # getattr
    for n in ast.walk(tree):
        if isinstance(n, ast.Import | ast.ImportFrom):
            names |= {a.name for a in n.names} | {p for a in n.names for p in a.name.split(".")}
            if isinstance(n, ast.ImportFrom) and n.module:
                names |= set(n.module.split("."))
    return names


def internals_touched(root: Path = ROOT) -> list[str]:
    """App files (ui/, pages/, app.py) naming a private place of Streamlit or CPython's threading
    (:data:`STREAMLIT_INTERNALS`); issue 37 wants one, the adapter."""
    return sorted(str(p.relative_to(root)) for p in _files(APP, root)
                  if _names(ast.parse(p.read_text())) & set(STREAMLIT_INTERNALS))


def private_core_imports(root: Path = ROOT) -> list[str]:
    """App files importing a private module of the core (a dotted part starting with ``_``, such as
    ``nspca_core.certificates._settings``), in-function imports included."""
    out = set()
    for p in _files(APP, root):
        for n in ast.walk(ast.parse(p.read_text())):
            mods = [n.module] if isinstance(n, ast.ImportFrom) and n.module else \
                [a.name for a in n.names] if isinstance(n, ast.Import) else []
            if any(m.split(".")[0] == CORE and any(part.startswith("_") for part in m.split(".")[1:]) for m in mods):
                out.add(str(p.relative_to(root)))
    return sorted(out)


def _rewrites(tree) -> list[int]:
    """Lines of calls that rewrite text by pattern: ``re.sub``/``re.subn``, a compiled pattern's
    ``.sub``, and ``.replace``/``.split``/``.removeprefix`` with a literal of 4 or more characters (a
    phrase, not a separator such as ``os.sep`` or ``"_"``)."""
    out = []
    for n in ast.walk(tree):
        if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)):
            continue
        name = n.func.attr
        if name in ("sub", "subn"):
            out.append(n.lineno)
        elif name in ("replace", "split", "rsplit", "removeprefix", "removesuffix") and n.args \
                and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str) \
                and len(n.args[0].value) >= 4:
            out.append(n.lineno)
    return out


def message_rewrites(root: Path = ROOT) -> list[str]:
    """``file:line`` of every text rewrite (:func:`_rewrites`) in ui/ and pages/: the app says the
    core's messages from their parts (``InputError.plain``/``remedy``), never by rewriting them."""
    return [f"{p.relative_to(root)}:{line}" for p in _files(("ui", "pages"), root)
            for line in _rewrites(ast.parse(p.read_text()))]


def unmirrored_test_folders(root: Path = ROOT) -> list[str]:
    """Test folders that mirror no code (:data:`TEST_MIRRORS`): ``tests/<top>`` with an unknown top,
    ``tests/pages/<x>`` without ``pages/<x>.py``, ``tests/<core|data|ui>/<sub>`` without the package
    ``<code>/<sub>`` (or ``<code>/_<sub>``)."""
    tests = root / "tests"
    if not tests.is_dir():
        return []
    out = []
    for top in sorted(d for d in tests.iterdir() if d.is_dir() and d.name != "__pycache__"):
        if top.name in SHARED_TEST_FOLDERS:
            continue
        if top.name not in TEST_MIRRORS:
            out.append(f"tests/{top.name}")
            continue
        code = root / TEST_MIRRORS[top.name]
        for sub in sorted(d for d in top.rglob("*") if d.is_dir() and "__pycache__" not in d.parts):
            rel = sub.relative_to(top)
            if top.name == "pages":
                ok = len(rel.parts) == 1 and (code / f"{rel}.py").is_file()
            else:
                ok = (code / rel).is_dir() or (code / rel.parent / f"_{rel.name}").is_dir()
            if not ok:
                out.append(str(sub.relative_to(root)))
    return out


def app_lines(root: Path = ROOT) -> int:
    return sum(len(p.read_text().splitlines()) for p in _files(("ui",), root))


def report(package: str = "nspca_core", root: Path = ROOT) -> dict:
    """Every measure; ``circles`` and ``circle_breaking_imports`` over the whole product
    (:data:`PRODUCT`), the rest as named."""
    core_edges = imports(package, root)
    edges = imports(PRODUCT, root)
    page_rows = pages(root)
    return {
        "circles": circles(edges),
        "circle_breaking_imports": circle_breaking_imports(edges),
        "core_circles": circles(core_edges),
        "imports_inside_functions": inside_function_count(core_edges, (package,)),
        "app_imports_inside_functions": inside_function_count(edges, ("ui", "pages", "app")),
        "api_lines": len((root / package / "api.py").read_text().splitlines()),
        "functions_over_150_lines": long_functions(package, root),
        "top_level_modules": top_level_modules(root),
        "validation": validation(root),
        "strategy_literals": strategy_literals(root),
        "pages": page_rows,
        "pages_over_limit": sorted(p for p, (lines, _) in page_rows.items() if lines > PAGE_LIMIT),
        "pages_with_sleep": sorted(p for p, (_, s) in page_rows.items() if s),
        "ui_lines": app_lines(root),
        "internals_touched": internals_touched(root),
        "private_core_imports": private_core_imports(root),
        "message_rewrites": message_rewrites(root),
        "unmirrored_test_folders": unmirrored_test_folders(root),
    }


def rows(result: dict) -> list[tuple[str, str]]:
    """The report as (measure, value) rows, for the text report and the before/after table."""
    v = result.get("validation", {})
    out = [
        ("import circles (core, ui/, pages/, app.py; in-function imports included)", len(result["circles"])),
        ("in-function imports that break a circle", len(result["circle_breaking_imports"])),
        ("import circles inside nspca_core", len(result.get("core_circles", result["circles"]))),
        ("internal imports inside functions: nspca_core", result["imports_inside_functions"]),
        ("internal imports inside functions: ui/, pages/, app.py", result.get("app_imports_inside_functions", "-")),
        ("top-level modules in nspca_core", result.get("top_level_modules", "-")),
        ("api.py lines", result["api_lines"]),
        ("functions over 150 lines (core)", len(result["functions_over_150_lines"])),
        ("validation mechanisms present", len(v.get("mechanisms", [])) if v else "-"),
        ("files below the fronts checking arguments", len(v["below_fronts"]) if "below_fronts" in v else "-"),
        ("core files (outside io/) defining check*", v.get("files_defining_check", "-")),
        (f'"{BOOL_MESSAGE}" written', v.get("bool_message_copies", "-")),
    ]
    for name, count in result.get("strategy_literals", {}).items():
        out.append((f'product files with the literal "{name}"', count))
    out.append(("ui/ lines", result.get("ui_lines", "-")))
    for name, title in (("internals_touched", "app files touching Streamlit's internals"),
                        ("private_core_imports", "app files importing a private core module")):
        out.append((title, len(result[name]) if name in result else "-"))
    for name, title in (("message_rewrites", "text rewrites of messages in ui/ and pages/"),
                        ("unmirrored_test_folders", "test folders not mirroring a package")):
        out.append((title, len(result[name]) if name in result else "-"))
    page_rows = result.get("pages", {})
    out.append((f"pages over {PAGE_LIMIT} lines", len(result.get("pages_over_limit", [])) if page_rows else "-"))
    out.append(("pages calling time.sleep", len(result.get("pages_with_sleep", [])) if page_rows else "-"))
    for page, (lines, sleeps) in page_rows.items():
        out.append((f"page {page}: lines / time.sleep", f"{lines} / {sleeps}"))
    return [(name, str(value)) for name, value in out]


def table(before: dict, after: dict) -> str:
    """A before/after table of :func:`rows` (a measure missing on one side shows as "-")."""
    b, a = dict(rows(before)), dict(rows(after))
    names = list(dict.fromkeys([n for n, _ in rows(before)] + [n for n, _ in rows(after)]))
    width = max(len(n) for n in names)
    lines = [f"{'measure':<{width}}  {'before':>10}  {'after':>10}", "-" * (width + 24)]
    for n in names:
        mark = "" if b.get(n, "-") == a.get(n, "-") else "  *"
        lines.append(f"{n:<{width}}  {b.get(n, '-'):>10}  {a.get(n, '-'):>10}{mark}")
    return "\n".join(lines)


def _print_report(result: dict) -> None:
    for name, value in rows(result):
        print(f"{name}: {value}")
    for c in result["circles"]:
        print("circle:", " <-> ".join(c))
    for a, t, line in result["circle_breaking_imports"]:
        print(f"    breaks a circle: {a}:{line} -> {t}")
    v = result["validation"]
    print("validation mechanisms:", ", ".join(v["mechanisms"]) or "none")
    print("files below the fronts checking arguments:", ", ".join(v["below_fronts"]) or "none")
    print("app files touching Streamlit's internals:", ", ".join(result["internals_touched"]) or "none")
    print("app files importing a private core module:", ", ".join(result["private_core_imports"]) or "none")
    print("text rewrites of messages in ui/ and pages/:", ", ".join(result["message_rewrites"]) or "none")
    print("test folders not mirroring a package:", ", ".join(result["unmirrored_test_folders"]) or "none")
    print("functions over 150 lines:", result["functions_over_150_lines"] or "none")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to measure (default: this one)")
    parser.add_argument("--compare", type=Path, help="a --json report to show as the 'before' column")
    args = parser.parse_args(argv)
    result = report(root=args.root.resolve())
    if args.json:
        print(json.dumps(result, indent=1))
        return
    if args.compare:
        print(table(json.loads(args.compare.read_text()), result))
        return
    _print_report(result)


if __name__ == "__main__":
    main()
