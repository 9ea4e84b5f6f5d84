"""The app reads its method lists, labels, colours and symbols from the one method registry.

Adding a method is one module plus one ``MethodSpec`` in ``nspca_core/methods.py``: these
tests add a spec to the registry (monkeypatched) and check that the figures and the lists
pick it up without any other entry.
"""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

from nspca_core import api
from nspca_core import methods as registry
from nspca_core.methods import MethodSpec
from ui import compute, work
from ui.figures import analysis as figs

ROOT = Path(__file__).resolve().parents[2]
NEW = MethodSpec("newmethod", "A new method (Someone 2030)", "new", "single", "asteris2014", "#123456",
                 cost="slow", default=True, symbol="bowtie")


def test_figures_read_every_field_from_the_registry():
    for name, spec in registry.REGISTRY.items():
        assert figs.method_label(name) == spec.label
        assert figs.method_short(name) == spec.short
        assert figs.method_color(name) == spec.color
        assert figs.method_symbol(name) == spec.symbol


def test_colours_and_symbols_tell_the_methods_apart():
    specs = list(registry.REGISTRY.values())
    assert len({s.color for s in specs}) == len(specs)
    assert len({s.symbol for s in specs}) == len(specs)
    assert len({s.short for s in specs}) == len(specs)


def test_a_new_registry_entry_reaches_the_figures(monkeypatch):
    monkeypatch.setitem(registry.REGISTRY, NEW.name, NEW)
    assert figs.method_label("newmethod") == NEW.label
    assert figs.method_short("newmethod") == "new"
    assert figs.method_color("newmethod") == "#123456"
    assert figs.method_symbol("newmethod") == "bowtie"
    assert registry.ordered()[-1] == "newmethod"
    assert "newmethod" in registry.defaults() and "newmethod" in registry.with_cost("slow")


def test_unknown_names_still_get_a_stable_look():
    assert figs.method_label("unknown") == "unknown" == figs.method_short("unknown")
    assert figs.method_symbol("unknown") == "circle"
    assert figs.method_color("unknown") == figs.method_color("unknown")
    assert figs.method_color("nspca") != figs.method_color("nica")  # the score page's two


def test_app_lists_are_the_registry_lists():
    assert compute.SINGLE_METHODS == registry.SINGLE == api.METHODS
    assert compute.available_methods() == list(registry.SINGLE)
    assert work.SLOW_METHODS == tuple(n for n, s in registry.REGISTRY.items() if s.cost == "slow")
    assert registry.defaults() == ("enet", "em", "tpower")  # issue 20: EM, TPower and the ε-net
    assert registry.defaults(("single", "joint", "reference")) == ("enet", "em", "tpower", "bipartite",
                                                                    "pca")


@pytest.mark.parametrize("page", ["components_images.py", "compare.py", "variance_vs_k.py", "labelled.py"])
def test_page_constants_follow_the_registry(monkeypatch, page):
    """Run each page module's top level with a new method in the registry: its lists include it."""
    import streamlit as st

    monkeypatch.setitem(registry.REGISTRY, NEW.name, NEW)
    monkeypatch.setattr(registry, "SINGLE", (*registry.SINGLE, NEW.name))
    monkeypatch.setattr(compute, "guard", lambda main: None)  # top level only, no page body
    monkeypatch.setattr(st, "markdown", lambda *a, **k: None)
    ns = runpy.run_path(str(ROOT / "pages" / page), run_name="page_under_test")
    if page == "components_images.py":
        assert "newmethod" in ns["ORDER"] and "newmethod" in ns["DEFAULT"]
    if page == "compare.py":
        assert "newmethod" in ns["SLOW"]
    if page == "variance_vs_k.py":
        assert "newmethod" in ns["DEFAULT_METHODS"]
    if page == "labelled.py":
        assert "newmethod" not in ns["METHODS"]  # slow: not on the fast page
        assert ns["METHODS"][0] == "enet"


def test_one_method_choices_default_to_the_registrys_first_preselected_method():
    """Several components' deflation solver (like Features by class) defaults to the ε-net."""
    from tests.conftest import page_app

    from ui import jobs

    at = page_app("several_components.py", timeout=120, sc_strategies=["deflation-remove"])
    at.run()
    jobs.REGISTRY.wait(120)
    assert not at.exception
    box = at.selectbox(key="sc_method")
    assert box.value == registry.defaults()[0] == "enet"
    assert box.options[:3] == [figs.method_label(m) for m in registry.defaults()]


def test_method_styles_stay_distinct_and_readable_beyond_eight():
    """Colour x marker x dash: every method's triple is its own, no two methods share both colour
    and dash (a line without markers stays distinct), and every colour reads on white (>= 3:1)."""
    from nspca_core.methods import REGISTRY, contrast_on_white
    from ui.figures.analysis import method_dash

    triples = [(s.color, s.symbol, s.dash) for s in REGISTRY.values()]
    assert len(set(triples)) == len(triples)
    lines = [(s.color, s.dash) for s in REGISTRY.values()]
    assert len(set(lines)) == len(lines)
    assert len({s.symbol for s in REGISTRY.values()}) == len(REGISTRY)
    for s in REGISTRY.values():
        assert contrast_on_white(s.color) >= 3.0, (s.name, s.color)
        assert method_dash(s.name) == s.dash
    assert contrast_on_white("#F0E442") < 3.0  # Okabe-Ito yellow: not used for a method
