"""Words on screen (issue 21, items 6, 7, 9): citations, controls named as the user sees them,
counts from 1, a refused k said plainly, the upload's samples in the sidebar."""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import pytest
from streamlit.testing.v1 import AppTest

from nspca_core import fit
from ui import compute, messages, state

ROOT = Path(__file__).resolve().parents[2]
os.environ.setdefault("NSPCA_DATA_DIR", str(ROOT.parent / "shared" / "datasets"))
PAGE_FILES = sorted((ROOT / "pages").glob("*.py"))


def _visible_strings(path: Path) -> list[str]:
    """String constants of a module that are not docstrings or comments (what can reach the screen)."""
    tree = ast.parse(path.read_text())
    docs = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.ClassDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docs.add(id(first.value))
    return [n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


@pytest.mark.parametrize("path", PAGE_FILES + sorted((ROOT / "ui").rglob("*.py")), ids=lambda p: p.name)
def test_no_developer_words_on_screen(path):
    text = " ".join(_visible_strings(path))
    assert not re.search(r"seed 00\d", text), "cite authors and year, not the seed number"
    assert "foundation issue" not in text


@pytest.mark.parametrize("path", PAGE_FILES, ids=lambda p: p.name)
def test_what_it_shows_starts_with_a_capital(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "page_intro":
            what = "".join(c.value for c in ast.walk(node.args[1])
                           if isinstance(c, ast.Constant) and isinstance(c.value, str))
            assert what[:1].isupper(), what[:40]


def _two_sizes() -> bytes:
    """A zip of PNG images of two sizes (2×3 and 3×2)."""
    import io
    import zipfile

    from PIL import Image

    def png(shape, v):
        buf = io.BytesIO()
        Image.fromarray(np.full(shape, v, dtype=np.uint8)).save(buf, format="PNG")
        return buf.getvalue()

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for i in range(2):
            zf.writestr(f"a{i}.png", png((2, 3), 10 * i + 5))
            zf.writestr(f"b{i}.png", png((3, 2), 10 * i + 7))
    return buf.getvalue()


def _said(call, filename=None) -> str:
    with pytest.raises(ValueError) as info:
        call()
    return messages.for_user(info.value, filename=filename)


@pytest.mark.parametrize("call,filename,expected", [
    (lambda: compute.parse_upload(b"a,b\n1,2\nNA,3\n4,5\n", "data.csv"), "data.csv",
     "1 NaN/inf value(s) (missing or infinite) in 1 row(s) and 1 column(s), first at (line 3, column 'a') "
     "(lines of the file counted from 1, the header line included); choose “drop samples with missing "
     "values”, “drop features with missing values” or “replace by the feature's mean” under \"Missing "
     "values (NaN/inf)\" above to handle them, or fix the file"),
    (lambda: compute.parse_upload(_two_sizes(), "faces.zip"), "faces.zip",
     "images of mixed sizes: 2x3 (h x w): 2 file(s), e.g. 'a0.png'; 3x2 (h x w): 2 file(s), e.g. 'b0.png'; all "
     "images must have the same size, or fill in \"Resize every image to height×width\" above to resize them"),
    (lambda: fit(np.array([[1.0, 2, 3, 4, 5], [1, 2, 3, np.nan, 5], [1, 2, 3, np.nan, 5]]), k=2), None,
     "the data must be finite; they hold 2 NaN/inf value(s), the first at row 2, column 4 (counted from 1)"),
])
def test_messages_name_the_controls_and_count_from_one(call, filename, expected):
    assert _said(call, filename) == expected


def test_upload_errors_do_not_repeat_the_file_name_nor_name_api_arguments():
    bad = b"a,b\n1,2\n3,nan\n4,5\n"
    msg = _said(lambda: compute.parse_upload(bad, "gaps.csv"), "gaps.csv")
    assert not msg.startswith("gaps.csv") and "nan_policy" not in msg
    assert "Missing values" in msg


def _sidebar_only():
    """The shared sidebar alone (this Streamlit's AppTest drops the sidebar of an
    st.navigation app after the first run; see tests/app_shell/test_shell.py)."""
    from ui.sidebar import draw_sidebar

    draw_sidebar()


def _app() -> AppTest:
    return AppTest.from_function(_sidebar_only, default_timeout=180)


@pytest.mark.parametrize("typed", [100000, 0, -5])
def test_invalid_k_is_refused_plainly_and_the_last_valid_k_kept(typed):
    at = _app().run()
    box = at.number_input(key="_w" + state.K)
    box.set_value(typed).run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.session_state[state.K] == 10  # the computation keeps the last valid k
    assert at.number_input(key="_w" + state.K).value == 10  # ... and shows it
    err = " ".join(e.value for e in at.sidebar.error)
    assert "from 1 to 64" in err and f"got {typed}" in err and "Keeping k = 10" in err
    at.number_input(key="_w" + state.K).set_value(12).run()  # a valid k clears the message
    assert at.session_state[state.K] == 12 and not at.sidebar.error


def test_sidebar_shows_samples_and_features_of_an_upload():
    X = np.random.default_rng(0).random((37, 5))
    up = compute.Upload(X=X, feature_names=list("abcde"), labels=None, image_shape=None, notes=[],
                        metadata=None, source_name="m.csv")
    at = _app()
    at.session_state[state.UPLOAD] = up
    at.session_state[state.DATASET] = state.UPLOAD_NAME
    at.run()
    assert "37 samples × 5 features" in " ".join(c.value for c in at.sidebar.caption)


@pytest.mark.parametrize("notes, words", [(["read 24 documents"], "24 documents × 6 words"),
                                          (["10x folder: 24 cells"], "24 cells × 6 genes")])
def test_sidebar_names_rows_of_a_corpus_or_single_cell_upload(notes, words):
    """A sparse upload is documents × words (or cells × genes), in the sidebar as on Your data."""
    X = sp.random(24, 6, density=0.5, format="csr", random_state=0)
    up = compute.Upload(X=X, feature_names=list("abcdef"), labels=None, image_shape=None, notes=notes,
                        metadata=None, source_name="docs.zip")
    at = _app()
    at.session_state[state.UPLOAD] = up
    at.session_state[state.DATASET] = state.UPLOAD_NAME
    at.run()
    captions = " ".join(c.value for c in at.sidebar.caption)
    assert words in captions and "samples" not in captions, captions


def test_bipartite_note_only_when_the_joint_method_is_behind():
    """Issue 20 item 4: joint 86,200 vs deflation 93,600 on CBCL with nothing to explain it."""
    note = messages.bipartite_note({"joint": 86200.0, "TPower": 93600.0, "EM": 90000.0}, "joint")
    assert note and "86,200 vs 93,600 for TPower" in note and "sketch" in note
    assert messages.bipartite_note({"joint": 95000.0, "TPower": 93600.0}, "joint") is None
    assert messages.bipartite_note({"TPower": 93600.0}, "joint") is None


def test_components_images_explains_a_joint_method_behind_deflation():
    from tests.conftest import page_app

    at = page_app("components_images.py", timeout=180,
                  **{state.K: 6, "ci_r": 2, "ci_methods": ["tpower", "bipartite"]}).run()
    assert not at.exception, [e.message for e in at.exception]
    table = at.dataframe[0].value
    joint = table[table["method"].str.contains("bipartite", case=False)]["total_variance"].iloc[0]
    best = table[~table["method"].str.contains("bipartite", case=False)]["total_variance"].max()
    infos = " ".join(i.value for i in at.info)
    assert ("Why the joint method is behind" in infos) == bool(joint < best)
