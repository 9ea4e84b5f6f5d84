""""As in the paper" presets (ui/presets.py): the data, apply/matches, the sidebar block, the pages."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from nspca_core.api import METHODS, STRATEGIES
from nspca_core.datasets import is_available, list_datasets
from tests.conftest import app_pages, page_app
from ui import jobs, presets, sidebar, state

ROOT = Path(__file__).resolve().parents[2]
os.environ.setdefault("NSPCA_DATA_DIR", str(ROOT.parent / "shared" / "datasets"))
TIMEOUT = 300


def _registered_pages() -> set[str]:
    return {path for entries in app_pages().values() for path, *_ in entries}


# ------------------------------------------------------------------ the data
def test_the_papers_settings():
    """The numbers of the figures and tables, as the issue and the papers state them."""
    fig3 = presets.by_key("akd2014_fig3")
    assert (fig3.dataset, fig3.k, fig3.d, fig3.eps, fig3.n_components) == ("cbcl", 40, 3, 0.1, 6)
    assert set(fig3.algorithms) == {"enet", "em"}
    for fig, name in ((4, "cbcl"), (5, "mll"), (6, "lrs")):
        p = presets.by_key(f"akd2014_fig{fig}")
        assert (p.dataset, p.d, p.eps) == (name, 3, 0.1) and set(p.algorithms) == {"enet", "em"}
        assert p.widgets["vk_paper"] is True  # the paper's bound, as drawn in the paper
    t1 = presets.by_key("akpd2015_table1")
    assert (t1.dataset, t1.k, t1.d, t1.n_components) == ("cbcl", 40, 4, 5)
    assert "bipartite" in t1.algorithms
    with pytest.raises(KeyError, match="no preset 'nope'; known: akd2014_fig3"):
        presets.by_key("nope")


@pytest.mark.parametrize("preset", presets.PRESETS, ids=lambda p: p.key)
def test_preset_is_valid_for_the_app(preset):
    shapes = {info.name: info.shape for info in list_datasets()}
    assert preset.dataset in shapes
    n = shapes[preset.dataset][1]
    assert 1 <= preset.k <= n
    assert preset.d in sidebar.D_CHOICES and preset.eps in sidebar.EPS_CHOICES
    assert preset.preprocessing in state.PREPROCESSING_STEPS
    assert preset.page in _registered_pages() and (ROOT / preset.page).is_file()
    # the widget keys exist on the page (a renamed key would silently do nothing)
    source = (ROOT / preset.page).read_text()
    for key in preset.widgets:
        assert re.search(rf'key="{key}"', source), (preset.page, key)
    for alg in preset.algorithms:
        assert alg in METHODS or alg in STRATEGIES, alg
    for value in preset.widgets.values():
        if isinstance(value, list):
            assert all(v in METHODS or v in STRATEGIES for v in value), value
    if preset.n_components is not None:  # the pages allow r·k ≤ n, at most 8 (images) / 10
        assert preset.n_components * preset.k <= n
        assert preset.n_components in preset.widgets.values()
    # cited by authors and year, never by the internal seed numbers
    for text in (preset.label, preset.paper, preset.source, preset.caption, preset.reproduction):
        assert "seed" not in text.lower()
    assert re.search(r"Asteris.*20(14|15)", preset.source) and re.search(r"Asteris.*20(14|15)$", preset.paper)
    assert presets.reproduction_image(preset) is not None  # the report's matching figure/table


def test_apply_then_matches_until_a_setting_changes():
    p = presets.by_key("akd2014_fig3")
    session = {state.K: 7, "nspca_k_error": "k must be ...", "ci_methods": ["pca"]}
    presets.apply(p, session)
    assert session[state.DATASET] == "cbcl" and session[state.K] == 40 and session[state.D] == 3
    assert session["ci_methods"] == ["enet", "em"] and session["ci_r"] == 6
    assert session[presets.ACTIVE] == p.key
    assert "nspca_k_error" not in session
    assert presets.matches(p, session) and presets.active(session) is p
    session["ci_methods"].append("pca")  # the widget's list is a copy, not the preset's
    assert p.widgets["ci_methods"] == ["enet", "em"]
    assert not presets.matches(p, session)
    presets.apply(p, session)
    session[state.K] = 41
    assert not presets.matches(p, session)
    assert presets.active({presets.ACTIVE: "gone"}) is None


# ------------------------------------------------------------------ the sidebar block
def _sidebar_only():
    from ui.sidebar import draw_sidebar

    draw_sidebar()


def test_a_preset_link_applies_before_the_sidebar_widgets():
    """The links open their page with ?preset=<key>: applied once, the widgets show it at once."""
    at = AppTest.from_function(_sidebar_only, default_timeout=TIMEOUT)
    at.query_params[presets.QUERY] = "akd2014_fig3"
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.session_state[state.DATASET] == "cbcl" and at.session_state["ci_r"] == 6
    assert at.sidebar.selectbox(key="_w" + state.DATASET).value == "cbcl"
    assert at.sidebar.number_input(key="_w" + state.K).value == 40
    assert presets.QUERY not in at.query_params  # applied once: the user may change k after
    at.sidebar.number_input(key="_w" + state.K).set_value(30).run()
    assert at.session_state[state.K] == 30
    at.query_params[presets.QUERY] = "fig99"
    at.run()
    assert "names no preset 'fig99'" in " ".join(w.value for w in at.sidebar.warning)
    assert at.session_state[state.K] == 30


def test_sidebar_buttons_apply_a_preset_and_show_its_caption():
    """Without st.navigation (a page on its own) the links fall back to buttons."""
    at = AppTest.from_function(_sidebar_only, default_timeout=TIMEOUT).run()
    assert not at.exception
    labels = [b.label for b in at.sidebar.button]
    assert [p.label for p in presets.PRESETS] == [lb for lb in labels if lb in
                                                 {p.label for p in presets.PRESETS}]
    at.sidebar.button(key="preset_akd2014_fig6").click().run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.session_state[state.DATASET] == "lrs" and at.session_state[state.K] == 20
    assert at.session_state["vk_methods"] == ["enet", "em"]
    # the sidebar's widgets show the preset (they are seeded from the permanent keys)
    assert at.sidebar.number_input(key="_w" + state.K).value == 20
    assert at.sidebar.select_slider(key="_w" + state.D).value == 3
    text = " ".join(m.value for m in at.sidebar.markdown)
    assert "Asteris, Papailiopoulos & Dimakis (ICML 2014), Fig. 6" in text
    assert "Reproduce this figure" in " ".join(c.value for c in at.sidebar.caption)
    at.sidebar.number_input(key="_w" + state.K).set_value(21).run()
    assert "Settings changed since" in " ".join(c.value for c in at.sidebar.caption)


# ------------------------------------------------------------------ the pages with a preset
def _apply_to(at: AppTest, preset) -> AppTest:
    session: dict = {}
    presets.apply(preset, session)
    for key, value in session.items():
        at.session_state[key] = value
    return at


def test_fig6_preset_on_variance_vs_k():
    if not is_available("lrs"):
        pytest.skip("LRS not found locally (NSPCA_DATA_DIR)")
    p = presets.by_key("akd2014_fig6")
    at = _apply_to(page_app("variance_vs_k.py", timeout=TIMEOUT), p).run()
    jobs.REGISTRY.wait(TIMEOUT)
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.multiselect(key="vk_methods").value == ["enet", "em"]
    caption = " ".join(c.value for c in at.caption)
    assert "IRAS LRS" in caption and "d = 3, ε = 0.1" in caption and "9 values of k" in caption
    assert at.get("plotly_chart")


def test_table1_preset_on_several_components():
    if not is_available("cbcl"):
        pytest.skip("CBCL not found locally (NSPCA_DATA_DIR)")
    p = presets.by_key("akpd2015_table1")
    at = _apply_to(page_app("several_components.py", timeout=TIMEOUT), p).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.slider(key="sc_r").value == 5
    assert at.multiselect(key="sc_strategies").value == ["deflation-project", "bipartite"]
    assert "k = 40 per component, d = 4" in " ".join(c.value for c in at.caption)
