"""The teaching pages on their own (AppTest.from_file), with interactions and dataset kinds."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import page_app

from ui import state

ROOT = Path(__file__).resolve().parents[2]
os.environ.setdefault("NSPCA_DATA_DIR", str(ROOT.parent / "shared" / "datasets"))
TIMEOUT = 180


def _page(name: str, **session) -> AppTest:
    return page_app(name, timeout=TIMEOUT, **session)


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.message for e in at.exception]
    assert "What it shows" in at.markdown[0].value and "From the paper" in at.markdown[0].value
    return at


def _charts(at: AppTest) -> int:
    return len(at.get("plotly_chart"))


@dataclass(frozen=True)
class _Upload:  # the fields of the "Your data" page's upload object that pages read
    X: np.ndarray
    feature_names: list
    labels: object = None
    image_shape: object = None
    source_name: str = "test.csv"


# ------------------------------------------------------------------ home
def test_home_tour_has_every_step():
    at = _ok(_page("home.py").run())
    heads = [h.value for h in at.header]
    assert heads[:3] == ["1 · The problem in one picture", "2 · Why it is hard",
                         "3 · The method, step by step"]
    subs = " | ".join(h.value for h in at.subheader)
    for word in ("Rank 1", "spannogram", "(P₂)", "ε-net", "certificate"):
        assert word in subs
    assert _charts(at) >= 5
    # run on its own: page links degrade to text instead of failing
    assert any("open it from the navigation" in m.value for m in at.markdown)


# ---------------------------------------------------------- spannogram d=2
def test_spannogram_d2_default_and_interactions():
    at = _ok(_page("spannogram_d2.py").run())
    assert at.title[0].value == "Spannogram, d = 2"
    assert _charts(at) == 1
    table = at.dataframe[-1].value
    assert (table["optimal"] == "★").sum() >= 1
    # brute force agrees on the default n = 8
    assert any(m.label.startswith("Brute force") and m.delta == "matches" for m in at.metric)
    # change k and φ: still fine, the handed-over support has the new size bound
    at.slider(key="span2_k").set_value(2).run()
    _ok(at)
    # one φ control outside lecture mode: the figure's own slider (issue 41)
    assert not [s for s in at.slider if s.key == "span2_phi"]
    assert len(at.session_state[state.TEACH_SUPPORT]) <= 2
    assert at.session_state[state.TEACH_V].shape == (8, 2)
    at.slider(key="span2_n").set_value(20).run()
    _ok(at)
    assert any("Brute-force check skipped" in i.value for i in at.info)


def test_spannogram_d2_typed_rows():
    at = _page("spannogram_d2.py").run()
    at.radio(key="span2_source").set_value("type the rows").run()
    _ok(at)
    assert at.session_state[state.TEACH_V].shape == (6, 2)


@pytest.mark.parametrize("dataset", ["digits", "synthetic-planted", "lrs", state.UPLOAD_NAME])
def test_spannogram_d2_on_each_dataset_kind(dataset):
    session = {state.DATASET: dataset, state.K: 5}
    if dataset == "lrs":
        from nspca_core.datasets import is_available
        if not is_available("lrs"):
            pytest.skip("LRS copy absent (NSPCA_DATA_DIR)")
    if dataset == state.UPLOAD_NAME:
        X = np.random.default_rng(0).random((40, 12))
        session[state.UPLOAD] = _Upload(X=X, feature_names=[f"g{j}" for j in range(12)])
    at = _page("spannogram_d2.py", **session).run()
    at.radio(key="span2_source").set_value("features of the current dataset").run()
    _ok(at)
    V = at.session_state[state.TEACH_V]
    assert V.shape == (8, 2) and np.isfinite(V).all()
    assert at.multiselect(key="span2_features").value  # features listed


# ---------------------------------------------------------- spannogram d=3
def test_spannogram_d3_default_and_interactions():
    at = _ok(_page("spannogram_d3.py").run())
    assert at.title[0].value == "Spannogram, d = 3"
    assert _charts(at) == 3  # cells, surfaces, count
    metrics = {m.label: m.value for m in at.metric}
    assert int(metrics["|S₃| (candidate_supports)"]) <= int(metrics["bound 2³·C(n+1, 3)"])
    at.slider(key="span3_k").set_value(3).run()
    at.radio(key="span3_sign").set_value("Iₖ⁺(−Vc)").run()
    at.multiselect(key="span3_rows").set_value([0, 4]).run()
    _ok(at)
    # the optimal support goes to the sphere view of the feasible-arc page
    assert len(at.session_state[state.TEACH_SUPPORT3]) <= 3
    assert at.session_state[state.TEACH_V3].shape == (8, 3)


def test_spannogram_d3_on_dataset_features():
    at = _page("spannogram_d3.py", **{state.DATASET: "synthetic-planted"}).run()
    at.radio(key="span3_source").set_value("features of the current dataset").run()
    _ok(at)
    assert at.session_state[state.TEACH_V3].shape == (8, 3)


# ---------------------------------------------------------- feasible arc
def test_feasible_arc_standalone_typed_rows():
    at = _ok(_page("feasible_arc.py").run())
    assert at.title[0].value == "Feasible arc of (P₂)"
    assert _charts(at) == 3  # circle, objective, sphere (d = 3)
    assert [r.value for r in at.radio][0] == "type the constraint rows"
    assert any("$c^*$ =" in m.value for m in at.markdown)


def _spec(at: AppTest, key: str) -> dict:
    """The JSON Streamlit sends for the plotly chart drawn with ``key``."""
    import json

    for chart in at.get("plotly_chart"):
        if chart.proto.id.endswith(key) or key in chart.proto.id:
            return json.loads(chart.proto.spec)
    raise AssertionError(f"no chart {key}")


def _brute_p2(Q: np.ndarray, R: np.ndarray) -> float:
    """max cᵀQc over unit c with R c ≥ 0 on a fine grid of the circle (−inf when none)."""
    t = np.linspace(-np.pi, np.pi, 200_001)
    C = np.vstack([np.sin(t), np.cos(t)])
    ok = (R @ C >= -1e-12).all(axis=0) if R.shape[0] else np.ones(t.size, bool)
    q = np.einsum("it,ij,jt->t", C, Q, C)
    return float(q[ok].max()) if ok.any() else -np.inf


def test_feasible_arc_from_spannogram_and_animation():
    """Issue 41: ▶ play runs in the browser (Plotly frames), not as a loop on the server: the circle
    carries one frame per step, each titled with its step and the answer of solve_pd at that step,
    and that answer is the maximum over the arc (checked on a fine grid of the circle)."""
    V = np.array([[1.0, 0.2], [0.4, 1.0], [-0.3, 0.8], [0.9, -0.6], [0.1, 0.1]])
    at = _page("feasible_arc.py", **{state.TEACH_V: V, state.TEACH_SUPPORT: (0, 1, 2)}).run()
    _ok(at)
    assert at.radio(key="arc_source").value == "support chosen on the spannogram page"
    assert not at.button  # nothing on the page plays on the server
    R = V[[0, 1, 2]]
    Q = R.T @ R
    spec = _spec(at, "arc_circle")
    frames = spec["frames"]
    assert [f["name"] for f in frames] == ["0", "1", "2", "3"]
    assert {b["label"] for b in spec["layout"]["updatemenus"][0]["buttons"]} == {"▶ play", "❚❚ pause"}
    assert spec["layout"]["sliders"][0]["active"] == 3  # starts at the problem as given
    for j, frame in enumerate(frames):
        title = frame["layout"]["title"]["text"]
        assert title.startswith(f"Step {j + 1} of 4: ")
        m = re.search(r"cᵀQc = ([0-9.e+-]+)", title)
        assert m, title
        assert float(m.group(1)) == pytest.approx(_brute_p2(Q, R[:j]), rel=2e-3)
    # the page's answer is the last step's (the problem as given), not the step on screen
    text = " ".join(m.value for m in at.markdown)
    assert "$x_I = V_I c^*" in text
    at.radio(key="arc_mode").set_value("rotate u₁ (turn Q)").run()
    _ok(at)
    spec = _spec(at, "arc_circle")
    assert len(spec["frames"]) == 25 and spec["layout"]["sliders"][0]["active"] == 12
    from ui.compute_teach import rotated

    for frame in spec["frames"][::6]:
        t = float(frame["name"].rstrip("°"))
        m = re.search(r"cᵀQc = ([0-9.e+-]+)", frame["layout"]["title"]["text"])
        assert float(m.group(1)) == pytest.approx(_brute_p2(rotated(Q, t), R), rel=2e-3)
    assert _charts(at) == 3


def test_feasible_arc_empty_cone_is_explained():
    """Rows pointing in opposite directions leave only c = 0: an error message, no crash."""
    V = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    at = _page("feasible_arc.py", **{state.TEACH_V: V, state.TEACH_SUPPORT: (0, 1, 2, 3)}).run()
    _ok(at)
    assert any("Only c = 0" in e.value for e in at.error)


def test_home_falls_back_to_digits_and_certifies(monkeypatch, tmp_path):
    """Without the CBCL copy the tour uses the digits; the dual certificate runs on request."""
    monkeypatch.setenv("NSPCA_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("NSPCA_CACHE_DIR", str(tmp_path))
    at = _ok(_page("home.py").run())
    assert any("Handwritten digits" in m.value for m in at.markdown)
    assert not any("Certified: at least" in m.value for m in at.markdown)
    at.button(key="home_certify").click().run()
    _ok(at)
    from ui import jobs  # the certificate runs in the background (ui/jobs.py)

    assert jobs.REGISTRY.wait(120)
    at.run()
    _ok(at)
    done = [m.value for m in at.markdown if m.value.startswith("Certified: at least")]
    assert done, "the certificate result is shown"
    ratio = float(done[0].split("**")[1].rstrip("%")) / 100
    assert 0 < ratio <= 1.0 + 1e-9


def test_spannogram_d2_lecture_mode_steps_from_change_to_change():
    """Issue 20 item 5: step buttons move φ to the next support change and say why it changed."""
    at = _ok(_page("spannogram_d2.py").run())
    # issue 21 item 3: the left text cannot follow ▶ play (the animation runs in the browser);
    # it names the slider it follows and points to the figure's own per-frame text
    text = " ".join(m.value for m in at.markdown)
    # issue 41: outside lecture mode φ has one control, the figure's slider, and the text says so
    assert "Move φ with the slider under the figure" in text and "At the start, φ = +0.30" in text
    at.toggle(key="span2_lecture").set_value(True)
    at = _ok(at.run())
    phi0 = at.slider(key="span2_phi").value
    at.button(key="span2_next").click()
    at = _ok(at.run())
    phi1 = at.slider(key="span2_phi").value
    assert phi1 > phi0
    text = " ".join(m.value for m in at.markdown)
    assert "Why this support" in text and "The last change was at φ ≈" in text and "entered" in text
    # the change it stepped over lies between the two angles, and "previous" goes back before it
    m = re.search(r"The last change was at φ ≈ ([+-][0-9.]+)", text)
    pc = float(m.group(1))
    assert phi0 < pc + 0.011 and pc <= phi1
    at.button(key="span2_prev").click()
    at = _ok(at.run())
    assert at.slider(key="span2_phi").value < phi1


def test_spannogram_d3_lecture_mode_steps_the_line_from_change_to_change():
    """Issue 20 item 5 (lecture mode for the spannogram pages): on d = 3 the steps move a line
    φ₂ = const up the map to the next row where the supports it meets change, and say why."""
    at = _ok(_page("spannogram_d3.py").run())
    at.toggle(key="span3_lecture").set_value(True)
    at = _ok(at.run())
    seen = []
    for _ in range(3):
        at.button(key="span3_next").click()
        at = _ok(at.run())
        seen.append(at.session_state["span3_line_row"])
    assert seen == sorted(seen) and seen[0] > 0 and len(set(seen)) == 3
    text = " ".join(m.value for m in at.markdown)
    assert "Why these supports" in text and "Since the line just below" in text
    assert "entered" in text or "left" in text
    at.button(key="span3_prev").click()
    at = _ok(at.run())
    assert at.session_state["span3_line_row"] == seen[1]
    import json
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert not spec.get("frames")  # the line is drawn in place, no animation in lecture mode
    assert any(t.get("name") == "the circle φ₂ = const" for t in spec["data"])


def test_d3_line_changes_against_a_direct_scan():
    from ui import compute_teach as ct

    rng = np.random.default_rng(3)
    for _ in range(30):
        labels = rng.integers(-1, 4, size=(rng.integers(2, 9), rng.integers(1, 7)))
        met = [set(int(c) for c in row if c >= 0) for row in labels]
        want = [r for r in range(1, len(met)) if met[r] != met[r - 1]]
        got = ct.d3_line_changes(labels)
        assert got.tolist() == want
        for row in range(len(labels)):
            nxt = [r for r in want if r > row]
            prv = [r for r in want if r < row]
            assert ct.step_row(got, row, +1) == (nxt[0] if nxt else row)
            assert ct.step_row(got, row, -1) == (prv[-1] if prv else (0 if row > 0 else row))
