"""Unit tests of the teaching figures (pure functions: arrays in, plotly Figure out)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core import topk_nonneg
from ui.figures import teach as T

OKABE = set(T.OKABE_ITO.values())


def _curves(n=7, num=181, seed=0):
    rng = np.random.default_rng(seed)
    V = rng.standard_normal((n, 2))
    phis = np.linspace(-np.pi / 2, np.pi / 2, num + 1)[1:]
    return V, phis, V[:, :1] * np.sin(phis) + V[:, 1:] * np.cos(phis)


def _titled(fig: go.Figure) -> str:
    t = fig.layout.title.text
    assert t, "every figure has a title"
    return t


def test_spannogram_d2_colours_follow_topk_at_phi():
    V, phis, vals = _curves()
    k, phi = 3, 0.4
    f = T.spannogram_d2(phis, vals, k, phi=phi)
    t = int(np.argmin(np.abs(phis - phi)))
    plus, minus = set(topk_nonneg(vals[:, t], k)), set(topk_nonneg(-vals[:, t], k))
    for i in range(V.shape[0]):
        colour = f.data[i].line.color
        want = T.PLUS if i in plus else T.MINUS if i in minus else T.NEUTRAL
        assert colour == want, (i, colour, want)
    assert f.layout.xaxis.title.text == "φ" and f.layout.yaxis.title.text
    title = _titled(f)
    assert "{" + ", ".join(str(int(i)) for i in sorted(plus)) + "}" in title
    assert not f.frames  # no animation unless asked


def test_spannogram_d2_frames_cover_the_grid_and_start_at_phi():
    V, phis, vals = _curves(n=5)
    f = T.spannogram_d2(phis, vals, 2, frames=20, intersections=[[0.1, 0.2]], changes=[[0.1, 0.2]])
    assert len(f.frames) in (20, 21)  # 20 across the grid, plus the current φ unless among them
    # the slider starts on the φ the title names
    t0 = int(np.argmin(np.abs(phis - phis[len(phis) // 2])))
    assert f.frames[f.layout.sliders[0].active].name == f"{phis[t0]:.3f}"
    names = [tr.name for tr in f.data]
    assert "support changes here" in names and "pairwise intersection" in names
    assert any(b.label.startswith("▶") for b in f.layout.updatemenus[0].buttons)
    # the sweep covers the whole grid, in order
    phis_f = [float(fr.name) for fr in f.frames]
    assert phis_f == sorted(phis_f) and phis_f[0] == pytest.approx(phis[0], abs=1e-3)


def _top_k_positive(v, k) -> set:
    """Brute force I_k^+(v): the (at most) k largest entries of v among the positive ones."""
    order = sorted(range(len(v)), key=lambda i: (-v[i], i))
    return {i for i in order[:k] if v[i] > 0}


def _row_style_wanted(i, plus, minus) -> tuple:
    """(colour, dash, width) a row's curve must have: vermillion solid thick in I_k^+(v(φ)),
    blue dash-dot thick in I_k^+(−v(φ)) (a row in both, value 0, counts as +), thin grey."""
    if i in plus:
        return T.PLUS, "solid", 2.6
    if i in minus:
        return T.MINUS, "dashdot", 2.6
    return T.NEUTRAL, "solid", 1.2


def _state_after(fig: go.Figure, frame) -> list[dict]:
    """The traces on screen once ``frame`` has played: Plotly.animate merges each of the
    frame's traces into the figure's trace of the same index (``frame.traces``); the others stay
    as they were.  (Frames are played from the figure's own state, as ▶ play does.)"""
    state = [tr.to_plotly_json() for tr in fig.data]
    for idx, upd in zip(frame.traces, frame.data):
        upd = upd.to_plotly_json()
        for key, val in upd.items():
            if isinstance(val, dict) and isinstance(state[idx].get(key), dict):
                state[idx][key] = {**state[idx][key], **val}
            else:
                state[idx][key] = val
    return state


def _check_frame_styles(fig: go.Figure, vals, phis, k, n) -> int:
    """Every frame: each row's curve styled by the supports of that frame's φ, recomputed here
    from the data; the dots, the title and the k-th order marks agree.  Returns how many frames
    had a support different from the first frame's (so that the check had something to catch)."""
    changed = 0
    first = None
    for fr in fig.frames:
        t = int(np.argmin(np.abs(phis - float(fr.name))))
        v = vals[:, t]
        plus, minus = _top_k_positive(v, k), _top_k_positive(-v, k)
        first = first or (plus, minus)
        changed += (plus, minus) != first
        state = _state_after(fig, fr)
        rows = [tr for tr in state if tr.get("legendgroup") == "rows"]
        assert len(rows) == n
        for i, tr in enumerate(rows):
            line = tr["line"]
            got = (line["color"], line.get("dash", "solid"), line["width"])
            assert got == _row_style_wanted(i, plus, minus), (fr.name, i, got, plus, minus)
        dots = next(tr for tr in state if tr.get("name") == "values at φ")
        np.testing.assert_allclose(dots["x"], phis[t], atol=1e-4)
        assert list(dots["marker"]["color"]) == [_row_style_wanted(i, plus, minus)[0] for i in range(n)]
        line = next(tr for tr in state if tr.get("name") == "current φ")
        np.testing.assert_allclose(line["x"], phis[t], atol=1e-4)
        kth = next(tr for tr in state if tr.get("name") == "k-th order values at φ")
        srt = np.sort(v)
        np.testing.assert_allclose(kth["y"], [srt[-k], srt[k - 1]], atol=1e-4)
        assert [tr["name"] for tr in state if str(tr.get("name", "")).startswith("k-th")][:2] == \
            [f"k-th largest of v(φ) (k={k})", f"k-th smallest of v(φ) (k={k})"]
        title = fr.layout.title.text
        fmt = (lambda s: "{" + ", ".join(map(str, sorted(s))) + "}" if s else "∅")
        assert f"Iₖ⁺(v) = {fmt(plus)},  Iₖ⁺(−v) = {fmt(minus)}" in title, (title, plus, minus)
    return changed


def test_spannogram_d2_every_frame_styles_each_curve_by_its_own_phi():
    """Issue 27 item 1: while ▶ play swept φ the curves kept the styles of the starting φ
    (paused at φ = −0.821, six curves drawn as in Iₖ⁺(v(φ)) under a title naming three)."""
    V, phis, vals = _curves(n=8, num=361, seed=3)
    k = 3
    f = T.spannogram_d2(phis, vals, k, phi=0.3, frames=30)
    assert _check_frame_styles(f, vals, phis, k, 8) >= 5  # the sweep meets several supports


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(3, 9), k=st.integers(1, 4),
       phi=st.floats(-1.5, 1.5))
def test_spannogram_d2_frame_styles_property(seed, n, k, phi):
    V, phis, vals = _curves(n=n, num=121, seed=seed)
    k = min(k, n)
    f = T.spannogram_d2(phis, vals, k, phi=phi, frames=9)
    _check_frame_styles(f, np.round(vals, 5), np.round(phis, 5), k, n)
    # the static figure (what the slider shows before ▶) has the styles of its own φ
    t0 = int(np.argmin(np.abs(np.round(phis, 5) - phi)))
    v = np.round(vals[:, t0], 5)
    plus, minus = _top_k_positive(v, k), _top_k_positive(-v, k)
    for i, tr in enumerate(f.data[:n]):
        assert (tr.line.color, tr.line.dash, tr.line.width) == _row_style_wanted(i, plus, minus)


def test_spannogram_d2_every_frame_has_its_own_text_and_a_scrub_slider():
    """Issue 21 item 3: the subtitle stayed at the first φ while ▶ swept φ."""
    V, phis, vals = _curves(n=6)
    k = 2
    f = T.spannogram_d2(phis, vals, k, frames=15)
    titles = [fr.layout.title.text for fr in f.frames]
    assert len(set(titles)) > 3  # the text changes along the sweep
    for fr, text in zip(f.frames, titles):
        t = int(np.argmin(np.abs(phis - float(fr.name))))
        plus = np.sort(np.argsort(-vals[:, t], kind="stable")[:k])
        plus = [int(i) for i in plus if vals[i, t] > 0]
        kth = np.sort(vals[:, t])[-k]
        assert f"φ = {phis[t]:+.3f}" in text and f"k-th largest v = {kth:+.3f}" in text
        if plus:
            assert "{" + ", ".join(map(str, plus)) + "}" in text
    play = f.layout.updatemenus[0].buttons[0].args[1]
    assert play["frame"]["redraw"] is True  # a title change needs a redraw
    slider = f.layout.sliders[0]
    assert len(slider.steps) == len(f.frames) and [step.args[0][0] for step in slider.steps] == \
        [fr.name for fr in f.frames]
    # controls and legend sit below the plotting area, not on it
    assert f.layout.updatemenus[0].y < 0 and slider.y < 0 and f.layout.legend.y < 0


def test_spannogram_d2_default_envelope_is_kth_order():
    V, phis, vals = _curves(n=6)
    f = T.spannogram_d2(phis, vals, 2)
    env = next(tr for tr in f.data if tr.name and tr.name.startswith("k-th largest"))
    np.testing.assert_allclose(env.y, np.sort(vals, axis=0)[-2], atol=1e-4)


def test_rank1_bars_marks_both_candidates():
    v = np.array([3.0, -5.0, 1.0, -0.5, 2.0])
    f = T.rank1_bars(v, 2)
    colours = list(f.data[0].marker.color)
    assert colours[0] == T.PLUS and colours[4] == T.PLUS
    assert colours[1] == T.MINUS and colours[3] == T.MINUS
    assert colours[2] == T.NEUTRAL
    # -v wins (25.25 > 13): the + bars are hatched
    assert list(f.data[0].marker.pattern.shape)[0] == "/"
    _titled(f)


def test_loading_images_signed_and_nonnegative_maps():
    rng = np.random.default_rng(1)
    f = T.loading_images([rng.standard_normal(16), np.abs(rng.standard_normal(16))],
                         ["dense", "sparse"], image_shape=(4, 4), main_title="t")
    h1, h2 = f.data
    assert h1.zmin == -h1.zmax and h2.zmin == 0
    assert np.asarray(h1.z).shape == (4, 4)
    assert [a.text for a in f.layout.annotations] == ["dense", "sparse"]


def test_color_cells_neighbours_differ():
    rng = np.random.default_rng(2)
    labels = np.repeat(np.repeat(rng.integers(0, 12, size=(6, 6)), 5, axis=0), 5, axis=1)
    colour = T.color_cells(labels)
    a, b = labels[:, :-1], labels[:, 1:]
    diff = a != b
    assert np.all(colour[a[diff]] != colour[b[diff]])
    a, b = labels[:-1], labels[1:]
    diff = a != b
    assert np.all(colour[a[diff]] != colour[b[diff]])


def test_spannogram_d3_cells_hover_and_outline():
    phi1 = np.linspace(-1.5, 1.5, 30)
    phi2 = np.linspace(-1.5, 1.5, 20)
    labels = (phi1[None, :] > 0).astype(int) + 2 * (phi2[:, None] > 0)
    sups = [[0, 1], [1, 2], [2, 3], [0, 3]]
    f = T.spannogram_d3_cells(phi1, phi2, labels, sups, [1.0, 2.0, 3.0, 4.5],
                              vertices=[[0.0, 0.0]], best=3)
    heat = f.data[0]
    text = np.asarray(heat.text)
    assert text.shape == labels.shape
    assert "support {2, 3}" in text[-1, 0] and "value 3" in text[-1, 0]
    names = [tr.name for tr in f.data]
    assert "optimal support {0, 3}" in names and "triple-intersection vertex" in names
    assert f.layout.xaxis.title.text == "φ₁" and f.layout.yaxis.title.text == "φ₂"


def test_spannogram_d3_surfaces_and_count():
    f = T.spannogram_d3_surfaces(np.arange(4), np.arange(3), np.zeros((2, 3, 4)),
                                 labels=["a", "b"])
    assert [tr.name for tr in f.data] == ["a", "b", "zero surface"]
    g = T.candidate_count([4, 5, 6], [20, 30, 50], [80, 160, 280], current=(6, 50))
    assert g.layout.yaxis.type == "log" and len(g.data) == 3
    _titled(g)


def test_feasible_arc_draws_each_constraint_and_answer():
    R = np.array([[1.0, 0.2], [0.3, 1.0], [-0.2, 1.0]])
    Q = R.T @ R
    f = T.feasible_arc(Q, R, arcs=[(0.1, 1.2)], u1=[0.6, 0.8], c_star=[0.8, 0.6])
    lines = [tr for tr in f.data if tr.name and tr.name.startswith("R_")]
    assert len(lines) == 3
    # each boundary line is orthogonal to its row
    for tr, r in zip(lines, R):
        d = np.array([tr.x[1] - tr.x[0], tr.y[1] - tr.y[0]])
        assert abs(d @ r) < 1e-9
    names = [tr.name for tr in f.data]
    assert "feasible arc" in names and "solve_pd answer c*" in names and "−u₁" in names
    # the arc is drawn on the unit circle, from c(0.1) to c(1.2) with c = (sin, cos)
    arc = next(tr for tr in f.data if tr.name == "feasible arc")
    assert np.allclose(np.hypot(arc.x, arc.y), 1.0)
    assert (arc.x[0], arc.y[0]) == pytest.approx((np.sin(0.1), np.cos(0.1)))
    g = T.feasible_arc(Q, R, show_constraints=1)
    assert len([tr for tr in g.data if tr.name and tr.name.startswith("R_")]) == 1


def test_objective_on_circle_feasible_part():
    Q = np.diag([2.0, 1.0])
    R = np.array([[1.0, 0.0]])  # keeps c1 = sin φ >= 0
    f = T.objective_on_circle(Q, R, c_star=[1.0, 0.0], num=361)
    whole, feas, star = f.data
    t = np.asarray(whole.x)
    y = np.asarray(feas.y, dtype=float)
    assert np.all(np.isnan(y[np.sin(t) < -1e-9]))
    assert np.all(np.isfinite(y[np.sin(t) > 1e-9]))
    assert star.x[0] == pytest.approx(np.pi / 2) and star.y[0] == pytest.approx(2.0)
    assert f.layout.yaxis.title.text == "cᵀQc"


def test_enet_and_certificate():
    f = T.enet_circle(np.linspace(-1, 1, 5), np.arange(5.0), 4.0, exact=4.2)
    assert f.data[0].y[-1] == 4.0 and [tuple(t.y) for t in f.data[1:]] == [(4.0, 4.0), (4.2, 4.2)]
    g = T.certificate_bar(0.9, 1.0, 2.0)
    assert g.data[0].x[0] == pytest.approx(0.45) and g.data[1].x[0] == pytest.approx(0.5)
    assert "90.0%" in _titled(g)


def test_palette_is_okabe_ito():
    V, phis, vals = _curves(n=4)
    f = T.spannogram_d2(phis, vals, 2, phi=0.0)
    used = {tr.line.color for tr in f.data if tr.line and tr.line.color}
    assert used <= OKABE | {T.NEUTRAL, "#666666"}


def test_sphere_pd3_patch_is_the_feasible_region():
    R = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])  # c1 >= 0 and c2 >= 0: a quarter sphere
    Q = np.diag([1.0, 2.0, 3.0])
    f = T.sphere_pd3(Q, R, c_star=[0.0, 0.0, 1.0], u1=[0.0, 0.0, 1.0], num=40)
    patch = f.data[1]
    x, y = np.asarray(patch.x, float), np.asarray(patch.y, float)
    shown = np.isfinite(x)
    assert np.all(x[shown] >= -1e-9) and np.all(y[shown] >= -1e-9)
    assert 0.15 < shown.mean() < 0.35  # about a quarter of the grid (poles crowd the grid)
    circles = [tr for tr in f.data if tr.name and tr.name.startswith("R_")]
    assert len(circles) == 2
    for tr, r in zip(circles, R):  # great circles lie in the planes r·c = 0
        P = np.column_stack([tr.x, tr.y, tr.z])
        assert np.allclose(P @ r, 0.0, atol=1e-12) and np.allclose(np.linalg.norm(P, axis=1), 1)
    assert f.layout.scene.xaxis.title.text == "c₁"


def test_spannogram_d3_sweep_lists_the_supports_each_line_meets():
    """Issue 21 item 3: the d = 3 page had no animation."""
    labels = np.array([[0, 0, 1, 1], [2, 2, 2, 0], [1, 0, 1, 0]])
    supports = [(0, 1), (1, 2), (0, 2)]
    phi1 = np.linspace(-1, 1, 4)
    phi2 = np.linspace(-1, 1, 3)
    f = T.spannogram_d3_cells(phi1, phi2, labels, supports, [1.0, 2.0, 3.0], frames=3)
    assert len(f.frames) == 3 and len(f.layout.sliders[0].steps) == 3
    texts = [fr.layout.title.text for fr in f.frames]
    assert "meets 2 support(s)<br>{0, 1}, {1, 2}" in texts[0]
    assert "meets 2 support(s)<br>{0, 2}, {0, 1}" in texts[1]
    assert "meets 2 support(s)<br>{1, 2}, {0, 1}" in texts[2]
    for fr, y in zip(f.frames, phi2):
        assert fr.data[0].y == (y, y)
    assert f.layout.margin.t >= 100  # the title clears Streamlit's toolbar


def test_loading_images_colour_bars_sit_under_their_own_panel():
    """Issue 21 item 5: the tour's colour bar sat on the sparse face."""
    imgs = [np.linspace(-1, 1, 16), np.r_[np.zeros(12), np.ones(4)]]
    f = T.loading_images(imgs, ["dense", "sparse"], image_shape=(4, 4))
    for j, tr in enumerate(f.data):
        dom = f.layout[f"xaxis{j + 1 if j else ''}"].domain
        cb = tr.colorbar
        assert cb.orientation == "h" and cb.y < 0
        half = cb.len / 2
        assert dom[0] <= cb.x - half and cb.x + half <= dom[1]  # within its own panel


def test_enet_circle_names_levels_in_the_legend_not_on_the_points():
    f = T.enet_circle(np.linspace(-1.5, 1.5, 9), np.linspace(0, 1, 9), 1.0, exact=1.1)
    assert not f.layout.annotations
    assert {"best sample (kept)", "exact OPT_d"} <= {t.name for t in f.data}


def test_spannogram_d3_every_cell_carries_its_supports_letter_and_the_key_lists_them():
    """Issue 27 item 3: 27 candidate supports drawn in 4 colours, told apart only by hovering."""
    from scipy import ndimage

    from ui import compute_teach as ct

    V = ct.small_V(8, 3, 0)
    cells = ct.cells_d3(V, 3, grid=121)
    labels = cells["cells_pos"]
    sups = [tuple(int(i) for i in s) for s in cells["supports"]]
    vals = cells["values"]
    best = int(np.argmax([vals[c] for c in range(len(sups))]))
    f = T.spannogram_d3_cells(cells["phi1"], cells["phi2"], labels, sups, vals, best=best, frames=5)
    marks = next(tr for tr in f.data if tr.type == "scatter" and tr.mode == "markers+text")
    key = T.cell_key(labels, sups, vals, best=best)
    letter = {row["support"]: row["cell"] for row in key}
    present = {int(c) for c in np.unique(labels) if c >= 0}
    # the key: one distinct letter per support in the map, best value first, the optimum marked
    assert len(key) == len(present) == len(set(letter.values()))
    assert [r["value"] for r in key] == sorted((r["value"] for r in key), reverse=True)
    assert key[0]["cell"] == "A" and [r["optimal"] for r in key].count(True) <= 1
    assert all(r["colour"].startswith("#") for r in key)
    # every region of the map (brute force: scipy's connected components, each support apart)
    # bigger than a few grid points holds a label, and each label sits in a cell of its support
    phi1, phi2 = np.asarray(cells["phi1"]), np.asarray(cells["phi2"])
    at = []
    for x, y, text in zip(marks.x, marks.y, marks.text):
        i, j = int(np.argmin(np.abs(phi2 - y))), int(np.argmin(np.abs(phi1 - x)))
        c = int(labels[i, j])
        assert text.rstrip("★") == letter[sups[c]], (text, sups[c])
        assert text.endswith("★") == (c == best)
        at.append((c, i, j))
    for c in present:
        regions, count = ndimage.label(labels == c)
        for r in range(1, count + 1):
            if (regions == r).sum() >= 0.002 * labels.size:
                assert any(cc == c and regions[i, j] == r for cc, i, j in at), (sups[c], r)
    assert any(tr.type == "contour" and "optimal" in tr.name for tr in f.data)  # outlined


# ------------------------------------------------- issue 41: shared figures, browser animation
def test_shipped_figure_is_sent_as_built_without_a_copy():
    """A shipped figure's dict is made once: plotly's hand-over to Streamlit returns it as it is
    (no deep copy, no validation per run) and its JSON is the figure's."""
    import json

    import plotly.io as pio
    import plotly.tools as tools

    from ui.figures.ship import ship

    f = T.enet_circle(np.array([0.1, 0.5]), np.array([1.0, 2.0]), 2.0, exact=2.5)
    shipped = ship(f)
    assert ship(shipped) is shipped
    handed = tools.return_figure_from_figure_or_data(shipped, True)
    assert handed is shipped.spec
    assert json.loads(pio.to_json(handed, validate=False)) == json.loads(f.to_json())


def test_feasible_arc_steps_keep_one_trace_kind_per_slot():
    """Every frame of the browser animation has the same traces in the same order and kind (a
    frame only moves and restyles them; Plotly merges a frame into the trace at its index)."""
    from ui import compute_teach as ct

    rng = np.random.default_rng(3)
    for _ in range(5):
        R = rng.standard_normal((int(rng.integers(1, 5)), 2))
        for adding in (True, False):
            spec = ct.arc_figures.__wrapped__(R.T @ R, R, adding)["circle"].spec
            kinds = [(t.get("fill"), t.get("mode")) for t in spec["data"]]
            assert spec["frames"], "an animation"
            for frame in spec["frames"]:
                assert [(t.get("fill"), t.get("mode")) for t in frame["data"]] == kinds
