"""Issue 27 in AppTest: the message about a refused k is said once; README and the tour agree."""

from __future__ import annotations

import os
from pathlib import Path

from streamlit.testing.v1 import AppTest

from ui import state

ROOT = Path(__file__).resolve().parents[2]
os.environ.setdefault("NSPCA_DATA_DIR", str(ROOT.parent / "shared" / "datasets"))
TIMEOUT = 180
PAGE = "nspca_test_page"  # which page the little app pretends to be


def _sidebar_on_a_page():
    import streamlit as st

    from ui.sidebar import draw_sidebar

    s = draw_sidebar(page=st.session_state.get("nspca_test_page", "spannogram_d2"))
    st.write(f"k={s.k}")


def _errors(at) -> list[str]:
    return [e.value for e in at.sidebar.error]


def test_a_refused_k_is_said_on_its_page_once_and_the_box_shows_the_k_in_use():
    """Issue 27 item 5: "k must be a whole number from 1 to 64 … Keeping k = 10." followed the
    user on every page visited afterwards."""
    at = AppTest.from_function(_sidebar_on_a_page, default_timeout=TIMEOUT).run()
    box = at.sidebar.number_input(key="_w" + state.K)
    box.set_value(100000).run()
    assert _errors(at) == ["k must be a whole number from 1 to 64 (the number of features); got 100000. "
                           "Keeping k = 10, the value in the box."]
    assert at.sidebar.number_input(key="_w" + state.K).value == 10  # the k in use, not 100000
    assert at.markdown[-1].value == "k=10"
    at.run()  # the same page again (any rerun there): still said where it was typed
    assert len(_errors(at)) == 1
    at.session_state[PAGE] = "compare"  # another page: not said there
    at.run()
    assert _errors(at) == []
    at.session_state[PAGE] = "spannogram_d2"  # and not again back on the first page
    at.run()
    assert _errors(at) == []
    # a new refusal is said again; a valid k clears it
    at.sidebar.number_input(key="_w" + state.K).set_value(0).run()
    assert "got 0. Keeping k = 10" in _errors(at)[0]
    at.sidebar.number_input(key="_w" + state.K).set_value(7).run()
    assert _errors(at) == [] and at.markdown[-1].value == "k=7"


def _readme_quick_start() -> str:
    text = (ROOT / "README.md").read_text()
    return " ".join(text[text.index("## Quick start"):text.index("## Install as a package")].split())


def _tour(data_dir: Path):
    at = AppTest.from_file(str(ROOT / "pages" / "home.py"), default_timeout=TIMEOUT)
    old = os.environ.get("NSPCA_DATA_DIR")
    os.environ["NSPCA_DATA_DIR"] = str(data_dir)
    try:
        at.run()
    finally:
        os.environ["NSPCA_DATA_DIR"] = old
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_readme_and_the_tour_say_the_same_first_dataset(tmp_path):
    """Issue 27 item 10: README said the app opens on the digits; the tour's first figure was
    CBCL faces whenever a local copy existed."""
    readme = _readme_quick_start()
    assert "tour's first picture shows the CBCL faces when a local copy is found" in readme
    assert "the digits otherwise" in readme and "sidebar's dataset" in readme
    assert state.DEFAULTS[state.DATASET] == "digits" and "handwritten digits" in readme
    # no local copy: the digits, and the page says why
    at = _tour(tmp_path)
    assert any("uses the handwritten digits" in c.value for c in at.caption)
    assert "digit" in at.get("plotly_chart")[0].proto.spec
    # a local copy: CBCL faces, said on the page
    data = Path(os.environ["NSPCA_DATA_DIR"])
    if (data / "cbcl_faces_train.npz").exists():
        at = _tour(data)
        assert any("uses the CBCL faces" in c.value for c in at.caption)
        assert "CBCL" in at.get("plotly_chart")[0].proto.spec
