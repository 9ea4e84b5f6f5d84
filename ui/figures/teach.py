"""Figures of the teaching pages (home tour, spannograms, feasible arc).

Pure functions: arrays in, a ``plotly.graph_objects.Figure`` out; no ``st.*``.
Colours come from the Okabe–Ito palette (distinguishable under the common
colour-vision deficiencies); sequential maps are ``cividis``, diverging maps
``PuOr``.  Every figure has a title, axis titles and a legend where there is
more than one kind of mark.

Conventions (Asteris, Papailiopoulos & Dimakis, ICML 2014, §4.1): for d = 2 the
unit vector is ``c(φ) = (sin φ, cos φ)``, ``φ ∈ (−π/2, π/2]``, and row i of V
traces the curve ``v_i(φ) = V_i1 sin φ + V_i2 cos φ``.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from nspca_core.rank1 import topk_nonneg
from ui.figures import OKABE_ITO

__all__ = [
    "below_toolbar",
    "legend_below",
    "OKABE_ITO",
    "PLUS",
    "MINUS",
    "NEUTRAL",
    "loading_images",
    "rank1_bars",
    "spannogram_d2",
    "spannogram_d3_surfaces",
    "spannogram_d3_cells",
    "feasible_arc",
    "feasible_arc_steps",
    "arc_answer_line",
    "objective_on_circle",
    "enet_circle",
    "certificate_bar",
    "candidate_count",
    "color_cells",
    "cell_names",
    "cell_key",
    "sphere_pd3",
]

# I_k^+(v(φ)) vs I_k^+(−v(φ)) vs the rest
PLUS = OKABE_ITO["vermillion"]
MINUS = OKABE_ITO["blue"]
NEUTRAL = "#BBBBBB"
_CELL_COLORS = [OKABE_ITO[c] for c in ("orange", "sky", "green", "yellow", "blue",
                                       "vermillion", "purple")] + ["#999999"]
_LAYOUT = dict(template="plotly_white", font=dict(size=14),
               margin=dict(l=60, r=20, t=70, b=55))


TOOLBAR_PX = 34  # the figure's toolbar (Plotly's modebar, on hover) spans the top ~30 px


def below_toolbar(fig: go.Figure) -> go.Figure:
    """Start the title under the toolbar band and give the top margin the room it needs.

    A long title (the d = 3 map's, the tour's in a narrow column) ran under the toolbar's
    buttons (issue 21, item 5).  The title is anchored ``TOOLBAR_PX`` below the top of the
    figure; the top margin grows to hold its lines (one per ``<br>``) and the figure grows
    with it, so the plotting area keeps its height.
    """
    text = str(fig.layout.title.text or "")
    if not text:
        return fig
    size = fig.layout.font.size or 12
    lines = text.count("<br>")
    # plotly anchors a title of several lines at the baseline of its first line: its ascent
    # (the title's font is 1.4 × the figure's) would reach back into the toolbar band
    pad = TOOLBAR_PX + (round(1.4 * size) - 4 if lines else 0)
    need = pad + round(1.7 * size) * max(lines, 1) + 14
    top = fig.layout.margin.t if fig.layout.margin.t is not None else 80
    grow = max(0, need - top)
    fig.update_layout(title=dict(yref="container", y=1, yanchor="top", pad=dict(t=pad)),
                      margin=dict(t=top + grow))
    if grow and fig.layout.height:
        fig.update_layout(height=fig.layout.height + grow)
    return fig


def legend_below(fig: go.Figure, *, gap_px: int = 64, rows: int = 3) -> go.Figure:
    """A horizontal legend ``gap_px`` pixels under the plotting area (under the tick labels
    and the axis title), with room for ``rows`` rows in the bottom margin.

    Placed as a fraction of the plot's height, a legend rose onto the axis title when the
    figure was drawn smaller, or when it wrapped to two rows and plotly pushed the margin
    (issue 21, item 5).  The figure grows with the margin, so the plot keeps its height.
    """
    height = fig.layout.height or 450
    top = fig.layout.margin.t if fig.layout.margin.t is not None else 100
    bottom = fig.layout.margin.b if fig.layout.margin.b is not None else 80
    new_bottom = max(bottom, gap_px + 22 * rows + 6)
    fig.update_layout(height=height + new_bottom - bottom, margin=dict(b=new_bottom),
                      legend=dict(orientation="h", x=0, xanchor="left", yanchor="top",
                                  y=-gap_px / (height - top - bottom)))
    return fig


def _fmt_support(idx) -> str:
    """``{0, 2, 3}``; the empty support (no positive entry) as ∅."""
    return "{" + ", ".join(str(int(i)) for i in idx) + "}" if len(idx) else "∅"


def _phi_ticks() -> dict:
    vals = [-np.pi / 2, -np.pi / 4, 0.0, np.pi / 4, np.pi / 2]
    return dict(tickvals=vals, ticktext=["−π/2", "−π/4", "0", "π/4", "π/2"])


# ---------------------------------------------------------------- home page
def loading_images(images, titles, *, image_shape, main_title="", signed=None):
    """Loadings drawn as images side by side.

    Parameters
    ----------
    images : sequence of ndarray of shape (n,)
        One loading vector per panel (``n = prod(image_shape)``).
    titles : sequence of str
        Panel titles.
    image_shape : tuple (h, w)
    signed : sequence of bool, optional
        Per panel: diverging map centred at 0 (signed loadings) or sequential
        map from 0 (nonnegative).  Default: signed when the vector has
        negative entries.
    """
    from plotly.subplots import make_subplots

    count = len(images)
    fig = make_subplots(rows=1, cols=count, subplot_titles=list(titles),
                        horizontal_spacing=0.08)
    for j, vec in enumerate(images):
        vec = np.asarray(vec, dtype=float)
        img = vec.reshape(image_shape)
        is_signed = bool((vec < 0).any()) if signed is None else bool(signed[j])
        top = float(np.abs(vec).max()) or 1.0
        if is_signed:
            zmin, zmax, cmap = -top, top, "PuOr"
        else:
            zmin, zmax, cmap = 0.0, top, "cividis"
        # each colour bar lies flat under its own panel (upright, it sat on the next image)
        dom = fig.layout[f"xaxis{j + 1 if j else ''}"].domain
        fig.add_trace(go.Heatmap(
            z=img[::-1], zmin=zmin, zmax=zmax, colorscale=cmap,
            colorbar=dict(orientation="h", len=0.8 * (dom[1] - dom[0]), thickness=10,
                          x=(dom[0] + dom[1]) / 2, xanchor="center", y=-0.06, yanchor="top"),
            hovertemplate="row %{y}, col %{x}: %{z:.3f}<extra></extra>",
            name=titles[j]), row=1, col=j + 1)
        fig.update_xaxes(showticklabels=False, scaleanchor=f"y{j + 1 if j else ''}",
                         row=1, col=j + 1)
        fig.update_yaxes(showticklabels=False, row=1, col=j + 1)
    fig.update_layout(**_LAYOUT, title=main_title, height=380)
    fig.update_layout(margin=dict(l=20, r=20, t=110, b=60))
    return below_toolbar(fig)


def rank1_bars(v, k, *, title="Rank-1: keep the k largest entries of v or of −v"):
    """Bar chart of ``v`` with ``I_k^+(v)`` and ``I_k^+(−v)`` coloured.

    The better of the two sets (larger ``||v_I||``) is the rank-1 optimum
    (paper §3.1); its bars are drawn solid, the other one hatched.
    """
    v = np.asarray(v, dtype=float)
    k = int(k)
    plus = topk_nonneg(v, k)
    minus = topk_nonneg(-v, k)
    best_plus = float(v[plus] @ v[plus]) >= float(v[minus] @ v[minus])
    colors = np.full(v.size, NEUTRAL, dtype=object)
    colors[minus] = MINUS
    colors[plus] = PLUS
    pattern = np.full(v.size, "", dtype=object)
    pattern[minus if best_plus else plus] = "/"
    fig = go.Figure(go.Bar(
        x=np.arange(v.size), y=v, marker=dict(color=list(colors),
                                              pattern=dict(shape=list(pattern))),
        hovertemplate="feature %{x}: %{y:.3f}<extra></extra>", showlegend=False))
    for name, color in ((f"Iₖ⁺(v): top {k} of v", PLUS), (f"Iₖ⁺(−v): top {k} of −v", MINUS),
                        ("not selected", NEUTRAL)):
        fig.add_trace(go.Bar(x=[None], y=[None], marker_color=color, name=name))
    fig.update_layout(**_LAYOUT, title=title, height=320, barmode="overlay",
                      xaxis_title="feature i", yaxis_title="vᵢ")
    return below_toolbar(legend_below(fig))


# ---------------------------------------------------------- spannogram d = 2
def spannogram_d2(phis, values, k, *, phi=None, envelope=None, intersections=None,
                  changes=None, labels=None, frames=0, title=None, lecture=False):
    """The spannogram of a rank-2 factor (paper Fig. 1).

    Parameters
    ----------
    phis : ndarray of shape (num,)
        Grid on (−π/2, π/2].
    values : ndarray of shape (n, num)
        ``values[i, t] = v_i(phis[t])``.
    k : int
    phi : float, optional
        The current angle: a vertical line, the curves of ``I_k^+(v(φ))``
        (vermillion) and ``I_k^+(−v(φ))`` (blue) coloured, the rest grey.
    envelope : ndarray of shape (num,) or (2, num), optional
        The k-th order envelope(s): k-th largest of ``v(φ)`` (and of ``−v(φ)``,
        drawn negated).  Computed from ``values`` when not given.
    intersections : ndarray of shape (p, 2), optional
        (φ, value) of pairwise intersection points (small grey marks).
    changes : ndarray of shape (q, 2), optional
        (φ, value) of the intersections where the candidate support changes
        (large black diamonds).
    labels : sequence of str, optional
        Row names (default ``"row i"``).
    frames : int
        When > 0, add that many animation frames sweeping φ over the grid,
        with a play/pause button.
    lecture : bool
        A bigger figure with bigger text, for a lecture room (lecture mode).
    """
    phis = np.asarray(phis, dtype=float).round(5)
    values = np.atleast_2d(np.asarray(values, dtype=float)).round(5)
    n, num = values.shape
    k = int(k)
    labels = list(labels) if labels is not None else [f"row {i}" for i in range(n)]
    if envelope is None:
        srt = np.sort(values, axis=0)
        kk = min(k, n)
        envelope = np.vstack([srt[n - kk], srt[kk - 1]])  # k-th largest of v; of −v negated
    envelope = np.atleast_2d(np.asarray(envelope, dtype=float))

    if phi is None:
        phi = float(phis[num // 2])
    t0 = int(np.argmin(np.abs(phis - phi)))

    fig = go.Figure()
    # the row curves: their data never changes, their style (which candidate support the row
    # is in at φ) is set by every animation frame as well (_d2_row_styles)
    styles0 = _d2_row_styles(values[:, t0], k)
    for i in range(n):
        fig.add_trace(go.Scatter(
            x=phis, y=values[i], mode="lines", name=labels[i], legendgroup="rows",
            showlegend=False, **styles0[i],
            hovertemplate=f"{labels[i]}<br>φ=%{{x:.3f}}<br>v=%{{y:.3f}}<extra></extra>"))
    fig.add_trace(go.Scatter(x=[phis[0], phis[-1]], y=[0, 0], mode="lines",
                             name="zero curve (an appended zero row)",
                             line=dict(color=OKABE_ITO["black"], dash="dash", width=1.5)))
    env_names = [f"k-th largest of v(φ) (k={k})", f"k-th smallest of v(φ) (k={k})"]
    n_env = min(2, envelope.shape[0])
    env_idx = list(range(len(fig.data), len(fig.data) + n_env))
    for j in range(n_env):
        fig.add_trace(go.Scatter(x=phis, y=envelope[j], mode="lines", name=env_names[j],
                                 **_D2_ENVELOPE[j], hoverinfo="skip"))
    if intersections is not None and len(intersections):
        pts = np.asarray(intersections, dtype=float).reshape(-1, 2)
        fig.add_trace(go.Scatter(x=pts[:, 0], y=pts[:, 1], mode="markers",
                                 name="pairwise intersection",
                                 marker=dict(color="#666666", size=5),
                                 hovertemplate="φ=%{x:.3f}<extra>intersection</extra>"))
    if changes is not None and len(changes):
        pts = np.asarray(changes, dtype=float).reshape(-1, 2)
        fig.add_trace(go.Scatter(x=pts[:, 0], y=pts[:, 1], mode="markers",
                                 name="support changes here",
                                 marker=dict(color=OKABE_ITO["black"], size=11, symbol="diamond",
                                             line=dict(color="white", width=1)),
                                 hovertemplate="φ=%{x:.3f}<extra>support change</extra>"))
    # legend entries for the style code (the same styles as the curves)
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name="in Iₖ⁺(v(φ))",
                             line=dict(_D2_STYLE["plus"]["line"])))
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name="in Iₖ⁺(−v(φ))",
                             line=dict(_D2_STYLE["minus"]["line"])))
    lo, hi = float(values.min()), float(values.max())
    pad = 0.05 * (hi - lo or 1.0)
    # the moving marks (φ line, dots at φ, the envelopes' values at φ)
    dyn = _d2_dynamic(phis, values, envelope, k, t0, lo - pad, hi + pad)
    fig.add_traces(dyn)
    ntr = len(fig.data)
    dyn_idx = list(range(ntr - len(dyn), ntr))
    # what every frame sets: each row's style, the envelopes, the moving marks
    frame_idx = list(range(n)) + env_idx + dyn_idx

    head = title or "Spannogram: vᵢ(φ) = Vᵢ₁ sin φ + Vᵢ₂ cos φ"

    def caption(t: int) -> str:
        return (f"{head}<br><sup>" + _d2_caption(phis[t], topk_nonneg(values[:, t], k),
                                                  topk_nonneg(-values[:, t], k),
                                                  envelope[:, t] if envelope.shape[1] == num else None)
                + "</sup>")

    fig.update_layout(
        **_LAYOUT, height=560,
        title=dict(text=caption(t0)),
        xaxis=dict(title="φ", range=[phis[0], phis[-1]], **_phi_ticks()),
        yaxis=dict(title="vᵢ(φ)", range=[lo - pad, hi + pad]),
        # below the plot: the plot keeps its width on a narrow screen (issue 21, item 4)
        legend=dict(orientation="h", x=0, y=-0.16, xanchor="left", yanchor="top",
                    traceorder="normal"))
    fig.update_layout(margin=dict(l=60, r=20, t=110, b=120))
    size = 17 if lecture else 14  # text size; the room for the text below scales with it
    grow = size / 14
    if lecture:
        fig.update_layout(font=dict(size=size), height=720, margin=dict(t=round(110 * grow)))
    if frames and frames > 0:
        # the current φ is one of the frames: the slider starts where the title says
        ts = np.unique(np.append(np.linspace(0, num - 1, int(frames)).round().astype(int), t0))
        # every frame carries its own text (φ, both candidate supports, the envelopes) and
        # the style of every row's curve (issue 27, item 1: the curves kept the styles of the
        # starting φ while the title moved on); redraw=True so that the title follows the frame
        # (plain dicts: validated once, when assigned)
        fig.frames = [dict(data=_d2_frame_data(phis, values, envelope, k, t, lo - pad, hi + pad, n_env),
                           traces=frame_idx, name=f"{phis[t]:.3f}", layout=dict(title=dict(text=caption(t))))
                      for t in ts]
        play = dict(frame=dict(duration=180, redraw=True), transition=dict(duration=0), fromcurrent=True)
        still = dict(frame=dict(duration=0, redraw=True), transition=dict(duration=0), mode="immediate")
        # under the φ axis: the scrub slider, then the buttons, then the legend, placed in
        # pixels below the plotting area (paper units = pixels / its height) so that the
        # buttons never cover the slider's labels (issue 21, item 5)
        top, bottom = round(110 * grow), round(340 * grow)
        height = 1040 if lecture else 820
        below = -grow / (height - top - bottom)
        fig.update_layout(
            updatemenus=[dict(type="buttons", showactive=False, x=0, y=150 * below, xanchor="left",
                              yanchor="top", direction="left", pad=dict(r=6, t=0),
                              buttons=[dict(label="▶ play", method="animate", args=[None, play]),
                                       dict(label="❚❚ pause", method="animate", args=[[None], still])])],
            legend=dict(y=205 * below),
            sliders=[dict(active=int(np.argmin(np.abs(ts - t0))), x=0, y=55 * below, len=1.0,
                          xanchor="left", yanchor="top", pad=dict(t=0, b=0),
                          currentvalue=dict(prefix="φ = ", visible=True, xanchor="left"),
                          steps=[dict(method="animate", label=f"{phis[t]:+.2f}",
                                      args=[[f"{phis[t]:.3f}"], still]) for t in ts])],
            height=height, margin=dict(l=60, r=20, t=top, b=bottom))
    return below_toolbar(fig)


def _d2_caption(phi, plus, minus, env=None) -> str:
    text = f"φ = {phi:+.3f}:  Iₖ⁺(v) = {_fmt_support(plus)},  Iₖ⁺(−v) = {_fmt_support(minus)}"
    if env is not None:
        text += f"<br>k-th largest v = {env[0]:+.3f},  k-th smallest v = {env[-1]:+.3f}"
    return text


# the style of a row's curve by where the row is at φ: in I_k^+(v(φ)), in I_k^+(−v(φ)), neither
_D2_STYLE = {
    "plus": dict(line=dict(color=PLUS, width=2.6, dash="solid"), opacity=1.0),
    "minus": dict(line=dict(color=MINUS, width=2.6, dash="dashdot"), opacity=1.0),
    "rest": dict(line=dict(color=NEUTRAL, width=1.2, dash="solid"), opacity=0.8),
}
_D2_ENVELOPE = [dict(line=dict(color=PLUS, width=5, dash="solid"), opacity=0.35),
                dict(line=dict(color=MINUS, width=5, dash="solid"), opacity=0.35)]


def _d2_row_styles(v_at, k) -> list[dict]:
    """Per row, the style of its curve at one φ (``v_at`` = v(φ)): a row in both candidate
    supports (its value is 0) is drawn as in I_k^+(v)."""
    plus, minus = set(topk_nonneg(v_at, k).tolist()), set(topk_nonneg(-v_at, k).tolist())
    out = []
    for i in range(len(v_at)):
        kind = "plus" if i in plus else "minus" if i in minus else "rest"
        out.append({"line": dict(_D2_STYLE[kind]["line"]), "opacity": _D2_STYLE[kind]["opacity"]})
    return out


def _d2_frame_data(phis, values, envelope, k, t, ymin, ymax, n_env) -> list[dict]:
    """One animation frame: the style of every row's curve at phis[t] (no data: the curves
    stay), the envelopes, and the moving marks, in the order of ``frame_idx``."""
    rows = [dict(type="scatter", **st) for st in _d2_row_styles(values[:, t], k)]
    env = [dict(type="scatter", **_D2_ENVELOPE[j]) for j in range(n_env)]
    return rows + env + _d2_dynamic(phis, values, envelope, k, t, ymin, ymax)


def _d2_dynamic(phis, values, envelope, k, t, ymin, ymax):
    """The marks that move with φ: the φ line, the dots at φ, the envelopes' values at φ.

    Plain dicts with numpy arrays (validated once by the Figure / Frame), so
    that dozens of animation frames stay cheap to build.
    """
    n = values.shape[0]
    styles = _d2_row_styles(values[:, t], k)
    col = [st["line"]["color"] for st in styles]
    line = dict(type="scatter", x=np.array([phis[t], phis[t]]), y=np.array([ymin, ymax]),
                mode="lines", name="current φ", hoverinfo="skip", showlegend=False,
                line=dict(color=OKABE_ITO["black"], width=1.5, dash="dot"))
    dots = dict(type="scatter", x=np.full(n, phis[t]), y=values[:, t], mode="markers",
                marker=dict(color=col, size=10, line=dict(color="black", width=1)),
                name="values at φ", showlegend=False, hovertemplate="v=%{y:.3f}<extra></extra>")
    env_at = (envelope[:, t] if envelope.shape[1] == values.shape[1] else np.zeros(0))[:2]
    kth = dict(type="scatter", x=np.full(env_at.size, phis[t]), y=env_at, mode="markers",
               marker=dict(color=[PLUS, MINUS][:env_at.size], size=15, symbol="diamond-wide-open",
                           line=dict(width=3)),
               name="k-th order values at φ", showlegend=False,
               hovertemplate="k-th order value %{y:.3f}<extra></extra>")
    return [line, dots, kth]


# ---------------------------------------------------------- spannogram d = 3
def spannogram_d3_surfaces(phi1, phi2, surfaces, *, labels=None, title=None):
    """A few rows' surfaces ``v_i(φ1, φ2)`` in 3D (paper App. B, Fig. 7).

    surfaces : ndarray of shape (r, len(phi2), len(phi1))
    """
    surfaces = np.asarray(surfaces, dtype=float)
    r = surfaces.shape[0]
    labels = list(labels) if labels is not None else [f"row {i}" for i in range(r)]
    palette = [OKABE_ITO[c] for c in ("vermillion", "blue", "green", "orange", "purple", "sky")]
    fig = go.Figure()
    for j in range(r):
        c = palette[j % len(palette)]
        # opaque (the depth test shows whichever surface is on top; see-through ones blended
        # into one grey sheet) with a wireframe in the row's colour
        wire = dict(show=True, color=c, width=2, start=float(np.min(phi1)), end=float(np.max(phi1)),
                    size=float(np.ptp(phi1)) / 8 or 1.0)
        fig.add_trace(go.Surface(x=phi1, y=phi2, z=surfaces[j], name=labels[j], showscale=False,
                                 colorscale=[[0, c], [1, c]], opacity=1.0, showlegend=True,
                                 contours=dict(x=wire, y={**wire, "start": float(np.min(phi2)),
                                                          "end": float(np.max(phi2)),
                                                          "size": float(np.ptp(phi2)) / 8 or 1.0}),
                                 hovertemplate=f"{labels[j]}<br>φ1=%{{x:.2f}} φ2=%{{y:.2f}}"
                                               f"<br>v=%{{z:.3f}}<extra></extra>"))
    fig.add_trace(go.Surface(x=phi1, y=phi2, z=np.zeros((len(phi2), len(phi1))),
                             name="zero surface", showscale=False, showlegend=True,
                             colorscale=[[0, "#888888"], [1, "#888888"]], opacity=0.15,
                             hoverinfo="skip"))
    fig.update_layout(**_LAYOUT, height=560,
                      title=title or "Surfaces v_i(φ1, φ2) = (V c(φ1, φ2))_i",
                      # a flatter box seen from further away: no tick label cut at the edge
                      scene=dict(xaxis=dict(title="φ1", nticks=5, tickformat=".1f"),
                                 yaxis=dict(title="φ2", nticks=5, tickformat=".1f"),
                                 zaxis=dict(title="v_i", nticks=4, tickformat=".1f"),
                                 aspectmode="manual", aspectratio=dict(x=1, y=1, z=0.7),
                                 camera=dict(eye=dict(x=1.45, y=1.45, z=0.95))),
                      legend=dict(orientation="h", y=-0.05))
    return below_toolbar(fig)


def color_cells(labels: np.ndarray, ncolors: int = len(_CELL_COLORS)) -> np.ndarray:
    """Colour index per cell id such that grid-adjacent cells differ (greedy).

    ``labels`` is a 2-D grid of integer cell ids (−1 = no support).  Returns an
    int array indexed by cell id.
    """
    labels = np.asarray(labels)
    ids = np.unique(labels[labels >= 0])
    size = int(ids.max()) + 1 if ids.size else 0
    nbrs = [set() for _ in range(size)]
    for a, b in ((labels[:, :-1], labels[:, 1:]), (labels[:-1, :], labels[1:, :])):
        diff = (a != b) & (a >= 0) & (b >= 0)
        for p, q in set(zip(a[diff].tolist(), b[diff].tolist())):
            nbrs[p].add(q)
            nbrs[q].add(p)
    colour = np.full(size, -1, dtype=int)
    # largest-degree first keeps the greedy colouring within the palette more often
    for cid in sorted(ids.tolist(), key=lambda c: -len(nbrs[c])):
        used = {colour[q] for q in nbrs[cid] if colour[q] >= 0}
        free = [c for c in range(ncolors) if c not in used]
        colour[cid] = free[0] if free else cid % ncolors
    return colour


def _row_supports(row_labels, supports) -> list:
    """Distinct supports met along one row of the cell map, in order of φ1."""
    seq = [int(c) for c in row_labels if c >= 0]
    seen = [c for i, c in enumerate(seq) if i == 0 or c != seq[i - 1]]
    return [supports[c] for c in dict.fromkeys(seen)]


def spannogram_d3_cells(phi1, phi2, labels, supports, values, *, vertices=None, changes=None,
                        best=None, title=None, frames=0, line_row=None, lecture=False):
    """Map of the intersection cells over (φ1, φ2) (paper App. B, Fig. 7).

    Parameters
    ----------
    phi1, phi2 : ndarray
        Grid axes (x and y).
    labels : ndarray of shape (len(phi2), len(phi1))
        Cell id at each grid point: index into ``supports`` (−1: none).
    supports : sequence of sequence of int
        The candidate support of each cell id.
    values : sequence of float
        The value ``max ||V_I^T x||^2`` of each cell's support.
    vertices : ndarray of shape (p, 2), optional
        Triple-intersection vertices (φ1, φ2).
    changes : ndarray of bool (p,), optional
        Vertices where the support changes (drawn black, the others white).
    best : int, optional
        Cell id of the optimal support; its cells are outlined.
    frames : int
        When > 0, an animation sweeping a line φ₂ = const up the map: each
        line is a circle of directions c, i.e. a d = 2 spannogram, and each
        frame's title lists the supports that line meets (with a slider).
    line_row : int, optional
        Lecture mode: draw the line φ₂ = ``phi2[line_row]`` (no animation) and
        list the supports it meets in the title.
    lecture : bool
        A bigger figure with bigger text, for a lecture room.
    """
    labels = np.asarray(labels, dtype=int)
    colour = color_cells(labels)
    z = np.where(labels >= 0, colour[np.clip(labels, 0, None)] if colour.size else 0, -1)
    nc = len(_CELL_COLORS)
    scale = []
    for c in range(nc):
        scale += [[c / nc, _CELL_COLORS[c]], [(c + 1) / nc, _CELL_COLORS[c]]]
    sup_txt = np.array([_fmt_support(s) for s in supports] + ["—"], dtype=object)
    val_txt = np.array([f"{v:.4g}" for v in values] + ["—"], dtype=object)
    lab = np.where(labels >= 0, labels, len(supports))
    text = np.char.add(np.char.add("support ", sup_txt[lab].astype(str)),
                       np.char.add("<br>value ", val_txt[lab].astype(str)))
    fig = go.Figure(go.Heatmap(
        x=phi1, y=phi2, z=np.where(z >= 0, z + 0.5, np.nan), zmin=0, zmax=nc, colorscale=scale,
        showscale=False, text=text, name="cells",
        hovertemplate="φ1=%{x:.3f}, φ2=%{y:.3f}<br>%{text}<extra></extra>"))
    if best is not None and best >= 0:
        mask = (labels == best).astype(float)
        fig.add_trace(go.Contour(x=phi1, y=phi2, z=mask, showscale=False, hoverinfo="skip",
                                 contours=dict(start=0.5, end=0.5, size=1, coloring="none"),
                                 line=dict(color=OKABE_ITO["black"], width=4),
                                 name=f"optimal support {_fmt_support(supports[best])}",
                                 showlegend=True))
    if vertices is not None and len(vertices):
        pts = np.asarray(vertices, dtype=float).reshape(-1, 2)
        ch = (np.zeros(len(pts), bool) if changes is None
              else np.asarray(changes, dtype=bool).reshape(-1))
        for mask, name, colour in ((~ch, "triple-intersection vertex", "white"),
                                   (ch, "vertex where the support changes", "black")):
            if mask.any():
                fig.add_trace(go.Scatter(
                    x=pts[mask, 0], y=pts[mask, 1], mode="markers", name=name,
                    marker=dict(color=colour, size=8, symbol="circle",
                                line=dict(color="black" if colour == "white" else "white",
                                          width=1.5)),
                    hovertemplate="vertex φ1=%{x:.3f}, φ2=%{y:.3f}<extra></extra>"))
    names = cell_names(labels, values)
    pts = _cell_label_points(labels)
    if pts:  # every cell carries the letter of its support (the key lists them): no hover needed
        ids = [c for c, _, _ in pts]
        is_best = [best is not None and c == best for c in ids]
        fig.add_trace(go.Scatter(
            x=[float(phi1[j]) for _, _, j in pts], y=[float(phi2[i]) for _, i, _ in pts],
            mode="markers+text", text=[names[c] + ("★" if b else "") for c, b in zip(ids, is_best)],
            textfont=dict(size=12, color="black"), textposition="middle center",
            marker=dict(color="white", size=[26 if b else 20 for b in is_best], opacity=0.9,
                        line=dict(color="black", width=1)),
            customdata=[_fmt_support(supports[c]) for c in ids],
            name="cell label: its support in the key", hovertemplate="%{text}: support %{customdata}"
                                                                   "<extra></extra>"))
    head = title or "Intersection cells: which support is Iₖ⁺(Vc) at (φ₁, φ₂)"
    fig.update_layout(**_LAYOUT, height=600, title=dict(text=head, y=0.97, yanchor="top"),
                      xaxis=dict(title="φ₁", range=[float(np.min(phi1)), float(np.max(phi1))]),
                      yaxis=dict(title="φ₂", range=[float(np.min(phi2)), float(np.max(phi2))]),
                      legend=dict(orientation="h", x=0, y=-0.14, yanchor="top"))
    fig.update_layout(margin=dict(l=60, r=20, t=110, b=110))  # the title clears the toolbar
    if lecture:  # a bigger map and bigger text for the room
        fig.update_layout(font=dict(size=17), height=760, margin=dict(b=130),
                          legend=dict(y=-0.16))
    phi1, phi2 = np.asarray(phi1, float), np.asarray(phi2, float)
    if line_row is not None:
        fig.add_trace(_d3_line(phi1, phi2, int(line_row), legend=True))
        fig.update_layout(title=dict(text=_d3_caption(head, phi2, labels, supports, int(line_row))))
    elif frames and frames > 0:
        _sweep_frames(fig, phi1, phi2, labels, supports, head, int(frames))
    return below_toolbar(fig)


def cell_names(labels, values) -> dict[int, str]:
    """A letter per support id met in the cell map, by value: "A" the largest ``values[id]``
    (ties by id), then "B", …, "Z", "AA", …  The cell map writes them in its cells and the page's
    key lists them with their supports (issue 27, item 3)."""
    labels = np.asarray(labels)
    present = sorted(set(int(c) for c in np.unique(labels) if c >= 0),
                     key=lambda c: (-float(values[c]), c))

    def letters(r: int) -> str:
        out = ""
        r += 1
        while r:
            r, m = divmod(r - 1, 26)
            out = chr(65 + m) + out
        return out

    return {c: letters(r) for r, c in enumerate(present)}


def cell_key(labels, supports, values, best=None) -> list[dict]:
    """The key of the cell map: per letter (:func:`cell_names`, best value first) its support,
    value, whether it is optimal and the colour its cells are drawn in."""
    labels = np.asarray(labels)
    colour = color_cells(labels)
    names = cell_names(labels, values)
    return [dict(cell=name, support=tuple(int(i) for i in supports[c]), value=float(values[c]),
                 optimal=best is not None and c == best, colour=_CELL_COLORS[int(colour[c])])
            for c, name in names.items()]


def _cell_label_points(labels, min_share: float = 0.002) -> list[tuple[int, int, int]]:
    """(support id, row, column) of one point inside every cell — each connected region of the
    map with at least ``min_share`` of its grid points — the point farthest from the region's
    edge, where a label fits best."""
    from scipy import ndimage

    labels = np.asarray(labels)
    out = []
    for c in (int(c) for c in np.unique(labels) if c >= 0):
        regions, count = ndimage.label(labels == c)
        if not count:
            continue
        depth = ndimage.distance_transform_edt(np.pad(regions > 0, 1))[1:-1, 1:-1]
        sizes = np.bincount(regions.ravel())
        for r in range(1, count + 1):
            if sizes[r] < min_share * labels.size:
                continue
            where = np.where(regions == r, depth, -1.0)
            i, j = np.unravel_index(int(np.argmax(where)), where.shape)
            out.append((c, int(i), int(j)))
    return out


def _d3_line(phi1, phi2, r, legend=False) -> dict:
    """The line φ₂ = phi2[r] across the cell map: a circle of directions (a d = 2 spannogram)."""
    return dict(type="scatter", x=[float(phi1[0]), float(phi1[-1])], y=[float(phi2[r])] * 2,
                mode="lines", line=dict(color="black", width=3, dash="dash"),
                name="the circle φ₂ = const", showlegend=legend, hoverinfo="skip")


def _d3_caption(head, phi2, labels, supports, r) -> str:
    met = _row_supports(labels[r], supports)
    shown = ", ".join(_fmt_support(sp) for sp in met[:4]) + (", …" if len(met) > 4 else "")
    return (f"{head}<br><sup>φ₂ = {phi2[r]:+.2f}: this line (a d = 2 spannogram) meets "
            f"{len(met)} support(s)<br>{shown}</sup>")


def _sweep_frames(fig, phi1, phi2, labels, supports, head, frames) -> None:
    """Animate a horizontal line φ₂ = const up the cell map (see :func:`spannogram_d3_cells`)."""
    rows = np.unique(np.linspace(0, len(phi2) - 1, frames).round().astype(int))

    def line(r):
        return _d3_line(phi1, phi2, r)

    def caption(r):
        return _d3_caption(head, phi2, labels, supports, r)

    fig.add_trace(line(rows[0]))
    idx = len(fig.data) - 1
    fig.frames = [go.Frame(data=[line(r)], traces=[idx], name=f"{phi2[r]:.3f}",
                           layout=dict(title=dict(text=caption(r)))) for r in rows]
    fig.update_layout(title=dict(text=caption(rows[0])))
    play = dict(frame=dict(duration=400, redraw=True), transition=dict(duration=0), fromcurrent=True)
    still = dict(frame=dict(duration=0, redraw=True), transition=dict(duration=0), mode="immediate")
    fig.update_layout(
        legend=dict(y=-0.56),
        updatemenus=[dict(type="buttons", showactive=False, x=0, y=-0.43, xanchor="left", yanchor="top",
                          direction="left", buttons=[dict(label="▶ sweep φ₂", method="animate",
                                                          args=[None, play]),
                                                     dict(label="❚❚ pause", method="animate",
                                                          args=[[None], still])])],
        sliders=[dict(active=0, x=0, y=-0.14, len=1.0, xanchor="left", yanchor="top",
                      currentvalue=dict(prefix="φ₂ = ", visible=True, xanchor="left"),
                      steps=[dict(method="animate", label=f"{phi2[r]:+.2f}",
                                  args=[[f"{phi2[r]:.3f}"], still]) for r in rows])],
        height=840, margin=dict(l=60, r=20, t=120, b=320))


def candidate_count(n_values, counts, bounds, *, current=None, title=None):
    """|S_3| against the bound 2^d·C(n+1, d) on a log scale."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=n_values, y=bounds, mode="lines+markers", name="bound 2³·C(n+1, 3)",
                             line=dict(color=OKABE_ITO["vermillion"], dash="dash")))
    fig.add_trace(go.Scatter(x=n_values, y=counts, mode="lines+markers",
                             name="|S₃| found (distinct supports)",
                             line=dict(color=OKABE_ITO["blue"])))
    if current is not None:
        fig.add_trace(go.Scatter(x=[current[0]], y=[current[1]], mode="markers",
                                 name="this V", marker=dict(color=OKABE_ITO["black"], size=12,
                                                            symbol="star")))
    fig.update_layout(**_LAYOUT, height=360, title=title or "How many candidate supports?",
                      xaxis=dict(title="n (rows of V)", dtick=1),
                      yaxis=dict(title="count (log scale)", type="log",
                                 tickvals=[1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000,
                                           10000]),
                      legend=dict(orientation="h"))
    return below_toolbar(legend_below(fig))


# ------------------------------------------------------- feasible arc (P_2)
def _circle_xy(phi):
    """Point ``c(φ) = (sin φ, cos φ)`` drawn with c_1 on x and c_2 on y."""
    phi = np.asarray(phi, dtype=float)
    return np.sin(phi), np.cos(phi)


def feasible_arc(Q, R, *, arcs=(), u1=None, c_star=None, active=(), show_constraints=None,
                 title=None):
    """The unit circle cut by the half-planes ``R_i c >= 0`` (paper Fig. 2).

    Parameters
    ----------
    Q : ndarray (2, 2)
        Only used for the level of the objective in hover text.
    R : ndarray (k, 2)
        Constraint rows; row i keeps the half-plane ``R_i · c >= 0``.
    arcs : sequence of (φ_start, φ_end)
        Feasible arc(s), angles with ``c(φ) = (sin φ, cos φ)``, ``φ_start <= φ_end``
        (may extend past ±π).
    u1 : ndarray (2,), optional
        Top eigenvector of Q (both ±u1 are drawn).
    c_star : ndarray (2,), optional
        The answer of ``solve_pd``.
    active : sequence of int
        Constraints active at the arc endpoints.
    show_constraints : int, optional
        Draw only the first that many constraints (for the add-one-by-one view).
    """
    Q = np.asarray(Q, dtype=float)
    R = np.atleast_2d(np.asarray(R, dtype=float))
    kk = R.shape[0] if show_constraints is None else int(show_constraints)
    fig = go.Figure()
    t = np.linspace(-np.pi, np.pi, 361)
    x, y = _circle_xy(t)
    fig.add_trace(go.Scatter(x=x, y=y, mode="lines", name="unit circle ‖c‖ = 1",
                             line=dict(color="#999999", width=1.5), hoverinfo="skip"))
    palette = [OKABE_ITO[c] for c in ("sky", "green", "purple", "orange", "yellow")]
    L = 1.35
    for i in range(kk):
        r = R[i]
        nr = float(np.hypot(*r))
        if nr == 0:
            continue
        r = r / nr
        tangent = np.array([-r[1], r[0]])
        # shade the half-disk that the constraint cuts away (r·c < 0)
        t_half = np.linspace(0.0, np.pi, 61)
        half = 1.15 * (np.outer(np.cos(t_half), tangent) - np.outer(np.sin(t_half), r))
        poly = np.vstack([half, half[:1]])
        col = palette[i % len(palette)]
        is_active = i in set(int(a) for a in active)
        fig.add_trace(go.Scatter(x=poly[:, 0], y=poly[:, 1], fill="toself", mode="lines",
                                 fillcolor=col, opacity=0.12, line=dict(width=0),
                                 hoverinfo="skip", showlegend=False))
        fig.add_trace(go.Scatter(x=[-tangent[0] * L, tangent[0] * L],
                                 y=[-tangent[1] * L, tangent[1] * L], mode="lines",
                                 line=dict(color=col, width=4 if is_active else 2),
                                 name=f"R_{i}·c = 0" + (" — active at c*" if is_active else ""),
                                 hovertemplate=f"constraint {i}: R_{i} = ({R[i, 0]:.3f}, "
                                               f"{R[i, 1]:.3f})<extra></extra>"))
        fig.add_annotation(x=r[0] * 0.35, y=r[1] * 0.35, ax=0, ay=0, xref="x", yref="y",
                           axref="x", ayref="y", showarrow=True, arrowhead=2, arrowcolor=col,
                           arrowwidth=2, text="")
    for j, (a, b) in enumerate(arcs):
        ta = np.linspace(a, b, max(2, int(180 * (b - a) / np.pi) + 2))
        ax_, ay_ = _circle_xy(ta)
        fig.add_trace(go.Scatter(x=ax_, y=ay_, mode="lines",
                                 name="feasible arc" if j == 0 else None,
                                 showlegend=j == 0, legendgroup="arc",
                                 line=dict(color=OKABE_ITO["vermillion"], width=7),
                                 hoverinfo="skip"))
        ex, ey = _circle_xy([a, b])
        fig.add_trace(go.Scatter(x=ex, y=ey, mode="markers", legendgroup="ends",
                                 name="arc endpoint (a constraint is active)", showlegend=j == 0,
                                 marker=dict(color=OKABE_ITO["black"], size=10, symbol="square"),
                                 hovertemplate="endpoint (%{x:.3f}, %{y:.3f})<extra></extra>"))
    if u1 is not None:
        u = np.asarray(u1, dtype=float)
        for s, nm in ((1, "+u₁ (top eigenvector of Q)"), (-1, "−u₁")):
            fig.add_trace(go.Scatter(x=[0, s * u[0]], y=[0, s * u[1]], mode="lines+markers",
                                     name=nm, line=dict(color=OKABE_ITO["blue"], width=2,
                                                        dash="solid" if s > 0 else "dash"),
                                     marker=dict(size=[0, 9], symbol="circle")))
    if c_star is not None:
        c = np.asarray(c_star, dtype=float)
        val = float(c @ Q @ c)
        fig.add_trace(go.Scatter(x=[c[0]], y=[c[1]], mode="markers", name="solve_pd answer c*",
                                 marker=dict(color=OKABE_ITO["yellow"], size=18, symbol="star",
                                             line=dict(color="black", width=1.5)),
                                 hovertemplate=f"c* = (%{{x:.3f}}, %{{y:.3f}})<br>cᵀQc = {val:.4g}"
                                               "<extra></extra>"))
    fig.update_layout(**_LAYOUT, height=520, title=title or "(P₂): max cᵀQc on the feasible arc",
                      xaxis=dict(title="c₁ = sin φ", range=[-L, L], zeroline=False,
                                 constrain="domain"),
                      yaxis=dict(title="c₂ = cos φ", range=[-L, L], scaleanchor="x",
                                 zeroline=False),
                      legend=dict(orientation="v", x=1.02, y=1))
    fig.update_layout(margin=dict(l=60, r=20, t=70, b=55))
    return below_toolbar(fig)


_ARC_PALETTE = [OKABE_ITO[c] for c in ("sky", "green", "purple", "orange", "yellow")]
_ARC_L = 1.35


def _arc_step_traces(Q, R, shown, arcs, u1, c_star, active, n_arcs):
    """One step of the feasible-arc animation as plain trace dicts in fixed slots (the same kind
    of trace at the same index in every step, so that a frame only moves and restyles them):
    the circle, (shade, line) per constraint row of ``R`` (empty past ``shown``), (arc,
    endpoints) per arc slot, ±u₁, c*.  Also the arrows (annotations) of the rows shown."""
    R = np.atleast_2d(np.asarray(R, dtype=float))
    empty = dict(x=[], y=[])
    t = np.linspace(-np.pi, np.pi, 361)
    x, y = _circle_xy(t)
    data = [dict(type="scatter", x=x, y=y, mode="lines", name="unit circle ‖c‖ = 1",
                 line=dict(color="#999999", width=1.5), hoverinfo="skip", showlegend=True)]
    arrows = []
    act = set(int(a) for a in active)
    for i in range(R.shape[0]):
        col = _ARC_PALETTE[i % len(_ARC_PALETTE)]
        nr = float(np.hypot(*R[i]))
        on = i < shown and nr > 0
        shade = dict(type="scatter", fill="toself", mode="lines", fillcolor=col, opacity=0.12,
                     line=dict(width=0), hoverinfo="skip", showlegend=False, **empty)
        line = dict(type="scatter", mode="lines", line=dict(color=col, width=4 if i in act else 2),
                    name=f"R_{i}·c = 0" + (" — active at c*" if i in act else ""), showlegend=on,
                    hovertemplate=f"constraint {i}: R_{i} = ({R[i, 0]:.3f}, {R[i, 1]:.3f})<extra></extra>",
                    **empty)
        if on:
            r = R[i] / nr
            tangent = np.array([-r[1], r[0]])
            t_half = np.linspace(0.0, np.pi, 61)
            half = 1.15 * (np.outer(np.cos(t_half), tangent) - np.outer(np.sin(t_half), r))
            poly = np.vstack([half, half[:1]])
            shade.update(x=poly[:, 0], y=poly[:, 1])
            line.update(x=[-tangent[0] * _ARC_L, tangent[0] * _ARC_L], y=[-tangent[1] * _ARC_L, tangent[1] * _ARC_L])
            arrows.append(dict(x=r[0] * 0.35, y=r[1] * 0.35, ax=0, ay=0, xref="x", yref="y", axref="x",
                               ayref="y", showarrow=True, arrowhead=2, arrowcolor=col, arrowwidth=2, text=""))
        data += [shade, line]
    for j in range(n_arcs):
        arc = dict(type="scatter", mode="lines", name="feasible arc", legendgroup="arc",
                   line=dict(color=OKABE_ITO["vermillion"], width=7), hoverinfo="skip",
                   showlegend=False, **empty)
        ends = dict(type="scatter", mode="markers", legendgroup="ends",
                    name="arc endpoint (a constraint is active)", showlegend=False,
                    marker=dict(color=OKABE_ITO["black"], size=10, symbol="square"),
                    hovertemplate="endpoint (%{x:.3f}, %{y:.3f})<extra></extra>", **empty)
        if j < len(arcs):
            a, b = arcs[j]
            ta = np.linspace(a, b, max(2, int(180 * (b - a) / np.pi) + 2))
            arc.update(zip(("x", "y"), _circle_xy(ta)), showlegend=j == 0)
            # the whole circle (no constraint) has no endpoints
            if b - a < 2 * np.pi - 1e-9:
                ends.update(zip(("x", "y"), _circle_xy([a, b])), showlegend=j == 0)
        data += [arc, ends]
    u = np.asarray(u1, dtype=float)
    for sgn, nm in ((1, "+u₁ (top eigenvector of Q)"), (-1, "−u₁")):
        data.append(dict(type="scatter", x=[0, sgn * u[0]], y=[0, sgn * u[1]], mode="lines+markers", name=nm,
                         showlegend=True, line=dict(color=OKABE_ITO["blue"], width=2,
                                                    dash="solid" if sgn > 0 else "dash"),
                         marker=dict(size=[0, 9], symbol="circle")))
    star = dict(type="scatter", mode="markers", name="solve_pd answer c*", showlegend=c_star is not None,
                marker=dict(color=OKABE_ITO["yellow"], size=18, symbol="star", line=dict(color="black", width=1.5)),
                **empty)
    if c_star is not None:
        c = np.asarray(c_star, dtype=float)
        star.update(x=[c[0]], y=[c[1]],
                    hovertemplate=f"c* = (%{{x:.3f}}, %{{y:.3f}})<br>cᵀQc = {float(c @ Q @ c):.4g}<extra></extra>")
    data.append(star)
    return data, arrows


def arc_answer_line(Q, c_star, u1_feasible, active) -> str:
    """The answer of one animation step in words, for the frame's title."""
    if c_star is None:
        return "only c = 0 satisfies R c ≥ 0: no arc"
    c = np.asarray(c_star, dtype=float)
    where = ("±u₁ is on the arc: the maximum is ±u₁" if u1_feasible else
             "±u₁ is cut away: the maximum is an arc endpoint"
             + (f" (constraint {', '.join(str(i) for i in active)} active)" if len(active) else ""))
    return f"c* = ({c[0]:+.3f}, {c[1]:+.3f}), cᵀQc = {float(c @ Q @ c):.4g}; {where}"


def feasible_arc_steps(steps, R, *, start, label="step", height=560):
    """The feasible arc of (P₂) with an animation that plays in the browser (issue 41): one frame
    per step of ``steps``, each a dict(Q, shown, arcs, u1, c, active, u1_feasible, title,
    name), with ▶ play / ❚❚ pause and a slider to scrub the steps.  Every frame carries its
    figure, its title and the answer of ``solve_pd`` at that step (the page's text is for the
    problem as given and does not move).  The figure starts at ``steps[start]``.
    """
    R = np.atleast_2d(np.asarray(R, dtype=float))
    n_arcs = max(1, max(len(st["arcs"]) for st in steps))
    built = []
    for st in steps:
        data, arrows = _arc_step_traces(st["Q"], R, st["shown"], st["arcs"], st["u1"], st["c"],
                                        st["active"], n_arcs)
        title = (f"{st['title']}<br><sup>"
                 + arc_answer_line(st["Q"], st["c"], st["u1_feasible"], st["active"]) + "</sup>")
        built.append((data, arrows, title))
    data0, arrows0, title0 = built[start]
    fig = go.Figure(data=data0)
    fig.update_layout(**_LAYOUT, height=height, title=dict(text=title0), annotations=arrows0,
                      xaxis=dict(title="c₁ = sin φ", range=[-_ARC_L, _ARC_L], zeroline=False, constrain="domain"),
                      yaxis=dict(title="c₂ = cos φ", range=[-_ARC_L, _ARC_L], scaleanchor="x", zeroline=False,
                                 constrain="domain"),  # a narrow window shrinks the circle, not the range,
                      legend=dict(orientation="v", x=1.02, y=1))
    fig.frames = [dict(name=st["name"], data=data, layout=dict(title=dict(text=title), annotations=arrows))
                  for st, (data, arrows, title) in zip(steps, built)]
    play = dict(frame=dict(duration=1200, redraw=True), transition=dict(duration=0), fromcurrent=True)
    still = dict(frame=dict(duration=0, redraw=True), transition=dict(duration=0), mode="immediate")
    # under the plot, in pixels below the plotting area: the step slider, then the buttons
    # (the slider's current value sits above its rail, its step labels below: the buttons go under those)
    top, bottom = 110, 200
    below = -1.0 / (height + bottom - top - bottom)
    fig.update_layout(
        height=height + bottom, margin=dict(l=60, r=20, t=top, b=bottom),
        updatemenus=[dict(type="buttons", showactive=False, x=0, y=150 * below, xanchor="left", yanchor="top",
                          direction="left", pad=dict(r=6, t=0),
                          buttons=[dict(label="▶ play", method="animate", args=[None, play]),
                                   dict(label="❚❚ pause", method="animate", args=[[None], still])])],
        sliders=[dict(active=int(start), x=0, y=62 * below, len=1.0, xanchor="left", yanchor="top",
                      pad=dict(t=0, b=0), currentvalue=dict(prefix=f"{label}: ", visible=True, xanchor="left"),
                      steps=[dict(method="animate", label=st["name"], args=[[st["name"]], still])
                             for st in steps])])
    return below_toolbar(fig)


def objective_on_circle(Q, R, *, c_star=None, title=None, num=721):
    """``Q(φ) = c(φ)ᵀ Q c(φ)`` along the circle, the feasible part highlighted.

    The feasible part is where every ``R_i · c(φ) >= 0`` (evaluated on the
    grid for drawing only; the answer itself comes from ``solve_pd``).
    """
    Q = np.asarray(Q, dtype=float)
    R = np.atleast_2d(np.asarray(R, dtype=float))
    t = np.linspace(-np.pi, np.pi, num)
    C = np.vstack(_circle_xy(t))
    q = np.einsum("it,ij,jt->t", C, Q, C)
    feas = (R @ C >= -1e-12).all(axis=0) if R.size else np.ones(num, bool)
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=t, y=q, mode="lines", name="Q(φ) on the whole circle",
                             line=dict(color="#999999", width=2)))
    qf = np.where(feas, q, np.nan)
    fig.add_trace(go.Scatter(x=t, y=qf, mode="lines", name="Q(φ) on the feasible arc",
                             line=dict(color=OKABE_ITO["vermillion"], width=5)))
    if c_star is not None:
        c = np.asarray(c_star, dtype=float)
        ph = float(np.arctan2(c[0], c[1]))
        fig.add_trace(go.Scatter(x=[ph], y=[float(c @ Q @ c)], mode="markers",
                                 name="maximum on the arc (solve_pd)",
                                 marker=dict(color=OKABE_ITO["yellow"], size=16, symbol="star",
                                             line=dict(color="black", width=1.5))))
    fig.update_layout(**_LAYOUT, height=360, title=title or "Objective along the circle",
                      xaxis=dict(title="φ  (c = (sin φ, cos φ))",
                                 tickvals=[-np.pi, -np.pi / 2, 0, np.pi / 2, np.pi],
                                 ticktext=["−π", "−π/2", "0", "π/2", "π"]),
                      yaxis_title="cᵀQc", legend=dict(orientation="h"))
    return below_toolbar(legend_below(fig))


# ------------------------------------------------------------- ε-net, bound
def enet_circle(phis, values, best_value, *, exact=None, title=None):
    """ε-net for d = 2: each sampled angle's rank-1 value, the best kept.

    phis : ndarray (s,) sampled angles; values : ndarray (s,) ``||V^T x(φ)||²``.
    """
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=phis, y=values, mode="markers", name="one sample c(φ) → rank-1 x",
                             marker=dict(color=OKABE_ITO["sky"], size=7,
                                         line=dict(color=OKABE_ITO["blue"], width=1))))
    # the two levels are named in the legend (a label on the plot covered the samples)
    span = [-np.pi / 2, np.pi / 2]
    fig.add_trace(go.Scatter(x=span, y=[best_value] * 2, mode="lines", name="best sample (kept)",
                             line=dict(color=OKABE_ITO["vermillion"], width=2), hoverinfo="skip"))
    if exact is not None:
        fig.add_trace(go.Scatter(x=span, y=[exact] * 2, mode="lines", name="exact OPT_d",
                                 line=dict(color=OKABE_ITO["black"], dash="dash"), hoverinfo="skip"))
    fig.update_layout(**_LAYOUT, height=320,
                      title=title or "ε-net: sample c, solve rank-1, keep the best",
                      xaxis=dict(title="φ of the sample", **_phi_ticks()),
                      yaxis_title="‖Vᵀx‖²", legend=dict(orientation="h"))
    return below_toolbar(legend_below(fig))


def certificate_bar(variance, upper_bound, lam1, *, title=None,
                    bound_label="certified upper bound"):
    """Achieved variance vs the certified upper bound, both as fractions of λ₁."""
    fig = go.Figure()
    fig.add_trace(go.Bar(y=["found x"], x=[variance / lam1], orientation="h",
                         marker_color=OKABE_ITO["blue"], name="xᵀAx / λ₁ (achieved)",
                         hovertemplate="%{x:.4f}<extra></extra>"))
    fig.add_trace(go.Bar(y=["bound"], x=[upper_bound / lam1], orientation="h",
                         marker_color=OKABE_ITO["orange"], name=f"{bound_label} / λ₁",
                         hovertemplate="%{x:.4f}<extra></extra>"))
    ratio = variance / upper_bound if upper_bound > 0 else float("nan")
    fig.update_layout(**_LAYOUT, height=250,
                      title=title or f"Certificate: x reaches at least {ratio:.1%} of the optimum",
                      xaxis=dict(title="fraction of λ₁ (dense PCA)", range=[0, 1.05]),
                      legend=dict(orientation="h"), showlegend=True)
    return below_toolbar(legend_below(fig))


def sphere_pd3(Q, R, *, c_star=None, u1=None, title=None, num=60):
    """(P₃) on the unit sphere (paper Fig. 8): the feasible patch ``R c >= 0``
    coloured by ``cᵀQc``, each constraint's great circle ``R_i·c = 0``, ±u₁ and
    the answer of ``solve_pd``.  Feasibility is evaluated on the drawing grid
    only; the answer itself comes from the solver.
    """
    Q = np.asarray(Q, dtype=float)
    R = np.atleast_2d(np.asarray(R, dtype=float))
    th = np.linspace(0.0, np.pi, num)
    ph = np.linspace(-np.pi, np.pi, 2 * num)
    TH, PH = np.meshgrid(th, ph, indexing="ij")
    C = np.stack([np.sin(TH) * np.cos(PH), np.sin(TH) * np.sin(PH), np.cos(TH)])  # (3, a, b)
    val = np.einsum("iab,ij,jab->ab", C, Q, C)
    feas = (np.einsum("ki,iab->kab", R, C) >= -1e-12).all(axis=0) if R.size else \
        np.ones(TH.shape, bool)
    fig = go.Figure()
    fig.add_trace(go.Surface(x=C[0], y=C[1], z=C[2], showscale=False, opacity=0.18,
                             colorscale=[[0, "#BBBBBB"], [1, "#BBBBBB"]], hoverinfo="skip",
                             name="unit sphere", showlegend=True))
    patch = [np.where(feas, C[i] * 1.002, np.nan) for i in range(3)]
    fig.add_trace(go.Surface(x=patch[0], y=patch[1], z=patch[2], surfacecolor=val,
                             colorscale="cividis", cmin=float(val.min()), cmax=float(val.max()),
                             colorbar=dict(title="cᵀQc", len=0.6, thickness=12),
                             name="feasible region (colour: cᵀQc)", showlegend=True,
                             hovertemplate="cᵀQc=%{surfacecolor:.3f}<extra>feasible</extra>"))
    palette = [OKABE_ITO[c] for c in ("sky", "green", "purple", "orange", "vermillion")]
    t = np.linspace(0, 2 * np.pi, 181)
    for i, r in enumerate(R):
        nr = float(np.linalg.norm(r))
        if nr == 0:
            continue
        B = np.linalg.svd((r / nr)[None, :])[2][1:]  # orthonormal basis of r^⊥ (2, 3)
        P = np.outer(np.cos(t), B[0]) + np.outer(np.sin(t), B[1])
        fig.add_trace(go.Scatter3d(x=P[:, 0], y=P[:, 1], z=P[:, 2], mode="lines",
                                   line=dict(color=palette[i % len(palette)], width=5),
                                   name=f"R_{i}·c = 0", hoverinfo="skip"))
    if u1 is not None:
        u = np.asarray(u1, dtype=float)
        fig.add_trace(go.Scatter3d(x=[u[0], -u[0]], y=[u[1], -u[1]], z=[u[2], -u[2]],
                                   mode="markers", name="±u₁ (top eigenvector of Q)",
                                   marker=dict(color=OKABE_ITO["blue"], size=6)))
    if c_star is not None:
        c = np.asarray(c_star, dtype=float)
        fig.add_trace(go.Scatter3d(x=[c[0]], y=[c[1]], z=[c[2]], mode="markers",
                                   name="solve_pd answer c*",
                                   marker=dict(color=OKABE_ITO["yellow"], size=9, symbol="diamond",
                                               line=dict(color="black", width=2))))
    fig.update_layout(**_LAYOUT, height=560, title=title or "(P₃): the sphere cut by planes",
                      scene=dict(xaxis_title="c₁", yaxis_title="c₂", zaxis_title="c₃",
                                 aspectmode="cube"),
                      legend=dict(orientation="h", y=-0.02))
    return below_toolbar(fig)
