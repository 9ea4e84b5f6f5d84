"""tools/structure (issue 37): circles over the whole product, in-function imports included, and the
measures of the issue, each checked on a small planted tree whose answer is known."""

from __future__ import annotations

from pathlib import Path

from tools import structure


def _tree(tmp_path: Path, files: dict) -> Path:
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path


def test_a_circle_through_in_function_imports_across_ui_and_pages_is_found(tmp_path):
    root = _tree(tmp_path, {
        "ui/__init__.py": "",
        "ui/a.py": "def f():\n    from ui import b\n    return b\n",
        "ui/b.py": "from ui.c import g\n",
        "ui/c.py": "def g():\n    from ui.a import f\n    return f\n",
        "ui/d.py": "from ui import a\n",  # reaches the circle, not in it
        "pages/p.py": "from ui import a, d\n",
        "app.py": "import ui.d\n",
    })
    edges = structure.imports(structure.PRODUCT, root)
    assert structure.circles(edges) == [["ui.a", "ui.b", "ui.c"]]
    assert structure.circle_breaking_imports(edges) == [("ui.a", "ui.b", 2), ("ui.c", "ui.a", 2)]
    assert ("ui.d", False, 1) in edges["app"] and ("ui.a", False, 1) in edges["pages.p"]
    assert structure.inside_function_count(edges, ("ui", "pages", "app")) == 2


def test_an_acyclic_product_has_no_circle(tmp_path):
    root = _tree(tmp_path, {"ui/__init__.py": "", "ui/a.py": "def f():\n    from ui import b\n",
                            "ui/b.py": "x = 1\n", "app.py": "from ui import a\n"})
    edges = structure.imports(structure.PRODUCT, root)
    assert structure.circles(edges) == [] and structure.circle_breaking_imports(edges) == []


def test_the_measures_of_a_planted_checkout(tmp_path):
    root = _tree(tmp_path, {
        "nspca_core/__init__.py": "",
        "nspca_core/api.py": "def fit():\n    '''\"bipartite\" in prose is no literal'''\n    return 'bipartite'\n",
        "nspca_core/solve.py": "def check_eps(e):\n    return e\n",
        "nspca_core/io/read.py": "def check_file(f):\n    return f  # io/ is not counted\n",
        "nspca_core/x.py": "S = ('deflation-remove', 'bipartite')\nM = 'must be True or False'\n",
        "nspca_core/sub/y.py": "def _check_k(k):\n    return 'must be True or False'\n",
        "ui/__init__.py": "",
        "ui/w.py": "STRATEGY = 'deflation-remove'\n",
        "pages/long.py": "import time\n" + "x = 1\n" * 300 + "time.sleep(1)\n",
        "pages/short.py": "import streamlit as st\nst.write(1)\n",
    })
    r = structure.report(root=root)
    assert r["top_level_modules"] == 4  # __init__, api, solve, x
    assert r["api_lines"] == 3
    assert r["strategy_literals"]["deflation-remove"] == 2 and r["strategy_literals"]["bipartite"] == 2
    assert r["strategy_literals"]["quasi-orthogonal"] == 0
    v = r["validation"]
    assert v["files_defining_check"] == 2  # solve.py, sub/y.py (io/ left out)
    assert v["bool_message_copies"] == 2
    assert v["mechanisms"] == ["solve.check_eps/check_callback"]
    assert v["below_fronts"] == []
    assert r["pages"] == {"long": (302, 1), "short": (2, 0)}
    assert r["pages_over_limit"] == ["long"] and r["pages_with_sleep"] == ["long"]
    text = structure.table(r, {**r, "api_lines": 4})
    assert "api.py lines" in text and text.count("  *") == 1



def test_argument_checks_below_the_fronts_are_found(tmp_path):
    """A peer raising InputError or calling a check is counted; the table's own files, a rule's
    ``.check`` method and the fronts are not; the table moved to _common/validation.py still counts."""
    root = _tree(tmp_path, {
        "nspca_core/__init__.py": "",
        "nspca_core/api.py": "def fit(k):\n    raise InputError('k')\n",  # a front
        "nspca_core/peers/__init__.py": "",
        "nspca_core/peers/a.py": "def f(k):\n    if k < 1:\n        raise InputError('`k` must be')\n",
        "nspca_core/peers/b.py": "def g(k):\n    return check_k(k, 3)\n",
        "nspca_core/peers/c.py": "def h(rule, k):\n    return rule.check(k, 'k', {})\n",
        "nspca_core/deflation.py": "def d(x):\n    return x\n",
        "nspca_core/_common/params.py": "PARAMETERS = {}\ndef check(r, v):\n    raise InputError(r)\n",
        "nspca_core/_common/validation.py": "def check_matrix(a):\n    return a\n",
    })
    v = structure.report(root=root)["validation"]
    assert v["below_fronts"] == ["peers/a.py", "peers/b.py"]
    assert v["mechanisms"] == ["_common/params.PARAMETERS", "_validation.check_*"]


def test_internals_and_private_core_imports_of_the_app_are_found(tmp_path):
    root = _tree(tmp_path, {
        "nspca_core/__init__.py": "", "nspca_core/api.py": "",
        "ui/__init__.py": "",
        "ui/door.py": "from streamlit.runtime.scriptrunner import get_script_run_ctx\n",
        "ui/a.py": "def f(rt):\n    return getattr(rt, '_session_mgr', None)\n",  # a getattr string counts
        "ui/b.py": "def g():\n    from nspca_core.certificates._settings import X\n    return X\n",
        "ui/c.py": "from nspca_core import api\n",
        "app.py": "import threading\nthreading._register_atexit(print)\n",
    })
    assert structure.internals_touched(root) == ["app.py", "ui/a.py", "ui/door.py"]
    assert structure.private_core_imports(root) == ["ui/b.py"]


def test_rewrites_of_message_text_in_the_app_are_found(tmp_path):
    root = _tree(tmp_path, {
        "ui/__init__.py": "",
        "ui/m.py": "import re\nR = re.compile('x')\n\ndef f(t):\n    t = re.sub('a', 'b', t)\n"
                   "    t = R.sub('c', t)\n    return t.replace('nan_policy', 'Missing values')\n",
        "ui/ok.py": "import os\n\ndef g(p, n):\n    return p.replace(os.sep, '/'), n.replace('_', ' '), "
                    "n.split(': ')\n",
        "pages/p.py": "def h(note):\n    return note.split('(auto: ')[1]\n",
    })
    assert structure.message_rewrites(root) == ["ui/m.py:5", "ui/m.py:6", "ui/m.py:7", "pages/p.py:2"]


def test_test_folders_that_mirror_no_code_are_found(tmp_path):
    root = _tree(tmp_path, {
        "nspca_core/__init__.py": "", "nspca_core/io/__init__.py": "", "nspca_core/_common/__init__.py": "",
        "ui/__init__.py": "", "ui/figures/__init__.py": "", "pages/home.py": "",
        "tests/core/io/t.py": "", "tests/core/common/t.py": "", "tests/core/gone/t.py": "",
        "tests/data/io/t.py": "", "tests/ui/figures/t.py": "", "tests/ui/widgets/t.py": "",
        "tests/pages/home/t.py": "", "tests/pages/about/t.py": "", "tests/app_shell/t.py": "",
        "tests/app/t.py": "",
    })
    assert structure.unmirrored_test_folders(root) == ["tests/app", "tests/core/gone", "tests/pages/about",
                                                       "tests/ui/widgets"]


def test_the_repository_has_no_message_rewrite_in_the_app_and_its_tests_mirror_the_code():
    """Issue 37, items 5 and 6: the app says the core's messages from their parts; tests/ mirrors."""
    assert structure.message_rewrites() == []
    assert structure.unmirrored_test_folders() == []


def test_the_repository_has_no_import_circle():
    """Issue 37, item 4: no circle anywhere (core, ui/, pages/, app.py), in-function imports included."""
    edges = structure.imports(structure.PRODUCT)
    assert structure.circles(edges) == []
    assert structure.circle_breaking_imports(edges) == []
