"""Measures of the package's shape: import circles, imports hidden in functions, long functions.

    python -m tools.structure            # a report for nspca_core/
    python -m tools.structure --json     # the same as JSON

An import edge goes from a module to the module it names (``from .x import y`` names ``x.y``
when that is a module, else ``x``). A *circle* is a strongly connected component of more than
one module in the graph of every internal import, those at module level and those inside
functions. An import inside a function *breaks a circle* when it points back into a module
that reaches the importer (the import could not move to the top without a circular import);
optional third-party imports inside functions are not counted (they are deliberate).
"""

from __future__ import annotations

import argparse
import ast
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


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


def imports(package: str = "nspca_core", root: Path = ROOT) -> dict:
    """{module: [(target, inside_function, line)]} for every internal import of ``package``."""
    files = sorted((root / package).rglob("*.py"))
    modules = {module_name(f, root): f for f in files}
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
    return found


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


def long_functions(package: str = "nspca_core", root: Path = ROOT, limit: int = 150) -> list:
    rows = []
    for path in sorted((root / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > limit:
                    rows.append((f"{module_name(path, root)}.{node.name}", length))
    return sorted(rows, key=lambda r: -r[1])


def report(package: str = "nspca_core") -> dict:
    edges = imports(package)
    return {
        "circles": circles(edges),
        "circle_breaking_imports": circle_breaking_imports(edges),
        "imports_inside_functions": sum(inside for targets in edges.values() for _, inside, _ in targets),
        "api_lines": len((ROOT / package / "api.py").read_text().splitlines()),
        "functions_over_150_lines": long_functions(package),
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = report()
    if args.json:
        print(json.dumps(result, indent=1))
        return
    print(f"import circles: {len(result['circles'])}")
    edges = imports()
    for c in result["circles"]:
        print("   ", " <-> ".join(c))
        inner = sorted({(a, t, "in a function" if inside else "top") for a in c for t, inside, _ in edges[a]
                        if t in c})
        for a, t, where in inner:
            print(f"        {a} -> {t} ({where})")
    print(f"internal imports inside functions: {result['imports_inside_functions']}, "
          f"of which break a circle: {len(result['circle_breaking_imports'])}")
    for a, t, line in result["circle_breaking_imports"]:
        print(f"    {a}:{line} -> {t}")
    print(f"api.py lines: {result['api_lines']}")
    print("functions over 150 lines:", result["functions_over_150_lines"] or "none")


if __name__ == "__main__":
    main()
