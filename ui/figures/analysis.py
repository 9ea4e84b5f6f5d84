"""Figures of the analysis pages (variance vs k, components, comparisons, scores).

Pure functions: arrays / tables in, a ``plotly.graph_objects.Figure`` out; no
``st.*`` calls, no solver calls.  Colours come from the Okabe–Ito palette
(distinguishable under the common colour-vision deficiencies), one fixed colour
and marker symbol per algorithm so a method looks the same on every page;
sparse nonnegative loadings use the single-hue ``Blues`` map (zero = white, so a
support stands out), raw images ``gray``, diverging maps ``PuOr``.  Every figure has a
title, axis titles and a legend where there is more than one kind of mark.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from nspca_core import methods as registry
from ui.figures import OKABE_ITO

__all__ = [
    "OKABE_ITO",
    "method_color",
    "method_symbol",
    "method_dash",
    "method_label",
    "method_short",
    "variance_vs_k",
    "metric_bars",
    "jaccard_heatmap",
    "loadings_heatmap",
    "image_grid",
    "cumulative_variance",
    "supports_heatmap",
    "matrix_heatmap",
    "negativity_history",
    "whitened_cloud",
    "profiles",
    "diff_bars",
]

# One colour, marker symbol, label and short name per algorithm across all pages: all read
# from the method registry (nspca_core.methods), so a new method needs no entry here.  The
# score comparisons of the nonnegative-score page (not methods of the registry) have their own
# colours; yellow (NMF) is drawn with a dark outline where it is a marker, being faint on white.
_SCORE_COLORS = {"nica": OKABE_ITO["green"], "nspca": OKABE_ITO["blue"]}


def _spec(method: str):
    return registry.REGISTRY.get(method)


_EXTRA = ["#332288", "#44AA99", "#AA4499", "#117733", "#999933", "#661100"]
_LAYOUT = dict(template="plotly_white", font=dict(size=14),
               margin=dict(l=70, r=20, t=80, b=60))
SEQUENTIAL = "Blues"  # zero = white: sparse supports stand out
DIVERGING = "PuOr"


def method_color(method: str) -> str:
    """The fixed colour of ``method`` (the registry's; a stable fallback for unknown names)."""
    spec = _spec(method)
    if spec is not None:
        return spec.color
    if method in _SCORE_COLORS:
        return _SCORE_COLORS[method]
    # deterministic across runs (no hash randomization): sum of code points
    return _EXTRA[sum(map(ord, method)) % len(_EXTRA)]


def method_symbol(method: str) -> str:
    """The marker symbol of ``method`` (the registry's; a circle for unknown names)."""
    spec = _spec(method)
    return spec.symbol if spec is not None else "circle"


def method_dash(method: str) -> str:
    """The line dash of ``method`` (the registry's; solid for unknown names)."""
    spec = _spec(method)
    return spec.dash if spec is not None else "solid"


def method_label(method: str) -> str:
    """The full name of a method (legends), from the registry."""
    spec = _spec(method)
    return spec.label if spec is not None else method


def method_short(method: str) -> str:
    """A short name of a method (axis ticks, panel titles), from the registry."""
    spec = _spec(method)
    return spec.short if spec is not None else method


def _title(text: str) -> dict:
    return dict(text=text, x=0.01, xanchor="left")


# ------------------------------------------------------------ variance vs k
def variance_vs_k(curves: pd.DataFrame, *, band: pd.DataFrame | None = None,
                  paper: pd.DataFrame | None = None, current_k: int | None = None,
                  title: str = "Explained variance vs sparsity k",
                  ylabel: str = "variance / λ₁", log_k: bool = False) -> go.Figure:
    """Normalized variance of each method against k, inside the certified band.

    Parameters
    ----------
    curves : DataFrame
        Long format, columns ``method``, ``k``, ``value`` (normalized variance)
        and optionally ``ratio`` (certified fraction of the optimum, shown on hover).
    band : DataFrame, optional
        Columns ``k``, ``lower`` (best answer of any method), ``upper``
        (certified upper bound on OPT), optionally ``ratio`` and ``optimal``
        (bool: the gap is below the certificate's tolerance).  The optimum
        provably lies between the two curves: drawn as a shaded band, and the
        k where it is provably attained get a star.
    paper : DataFrame, optional
        Columns ``k``, ``upper``: the paper's own bound OPT_d + λ_{d+1}
        (dashed line) for comparison.
    current_k : int, optional
        The sidebar's k: a vertical guide, labelled, and a ring on every curve at that k.
    log_k : bool
        A log-scaled k axis (wide data: on a linear axis of 12,582 features every interesting
        k is squeezed into the first pixels).  Either way the axis extends a little beyond the
        smallest and largest k, so that no mark sits on the axis line.

    Notes
    -----
    The band is Figs. 4–6 of Asteris, Papailiopoulos & Dimakis (ICML 2014),
    which shade between the ε-net answer and OPT_d/(1−ε) + λ_{d+1}; here the
    upper curve is our certificate (``nspca_core.certify_path``).
    """
    fig = go.Figure()
    if band is not None and len(band):
        b = band.sort_values("k")
        ratio = b["ratio"] if "ratio" in b else b["lower"] / b["upper"]
        fig.add_trace(go.Scatter(x=b["k"], y=b["lower"], mode="lines", line=dict(width=0),
                                 showlegend=False, hoverinfo="skip", name="best answer"))
        fig.add_trace(go.Scatter(
            x=b["k"], y=b["upper"], mode="lines", fill="tonexty",
            fillcolor="rgba(86,180,233,0.25)", line=dict(color=OKABE_ITO["blue"], width=1.5),
            name="certified upper bound (optimum lies in the band)",
            customdata=np.column_stack([np.asarray(ratio, float)]),
            hovertemplate="k=%{x}<br>upper bound %{y:.4f}<br>best answer ≥ %{customdata[0]:.1%}"
                          " of optimal<extra></extra>"))
        if "optimal" in b:
            opt = b[b["optimal"].astype(bool)]
            if len(opt):
                fig.add_trace(go.Scatter(
                    x=opt["k"], y=opt["lower"], mode="markers", name="provably optimal",
                    marker=dict(symbol="star", size=11, color=OKABE_ITO["yellow"],
                                line=dict(color="black", width=1)),
                    hovertemplate="k=%{x}: provably optimal (gap below tolerance)<extra></extra>"))
    if paper is not None and len(paper):
        p = paper.sort_values("k")
        fig.add_trace(go.Scatter(x=p["k"], y=p["upper"], mode="lines", name="paper's bound OPT_d+λ_{d+1}",
                                 line=dict(color=OKABE_ITO["vermillion"], dash="dash", width=1.5),
                                 hovertemplate="k=%{x}<br>paper's bound %{y:.4f}<extra></extra>"))
    for method, g in curves.groupby("method", sort=False):
        g = g.sort_values("k")
        ratio = g["ratio"].to_numpy(float) if "ratio" in g else np.full(len(g), np.nan)
        fig.add_trace(go.Scatter(
            x=g["k"], y=g["value"], mode="lines+markers" if len(g) <= 60 else "lines",
            name=method_label(str(method)),
            line=dict(color=method_color(str(method)), width=2, dash=method_dash(str(method))),
            marker=dict(symbol=method_symbol(str(method)), size=7),
            customdata=np.column_stack([ratio]),
            hovertemplate=f"{method_label(str(method))}<br>k=%{{x}}<br>{ylabel} %{{y:.4f}}"
                          "<br>certified ratio %{customdata[0]:.1%}<extra></extra>"))
    ks = [float(k) for k in curves["k"]] + ([float(k) for k in band["k"]] if band is not None and len(band)
                                            else []) + ([float(current_k)] if current_k is not None else [])
    kmin, kmax = (min(ks), max(ks)) if ks else (1.0, 2.0)
    if current_k is not None:
        at = curves[curves["k"] == current_k]
        if len(at):  # a ring on each curve where it crosses the current k
            fig.add_trace(go.Scatter(
                x=at["k"], y=at["value"], mode="markers", name=f"current k = {current_k}",
                marker=dict(symbol="circle-open", size=17, color="black", line=dict(width=2.5)),
                hovertemplate=f"k = {current_k}: %{{y:.4f}}<extra>current k</extra>"))
        fig.add_vline(x=current_k, line=dict(color="black", dash="dot", width=1.5))
        # its label at the top of the guide (an annotation's x on a log axis is log10 k)
        fig.add_annotation(x=float(np.log10(current_k)) if log_k else current_k, y=1, yref="paper",
                           yanchor="bottom", xanchor="left", showarrow=False, text=f"<b>k = {current_k}</b>",
                           bgcolor="rgba(255,255,255,0.85)", font=dict(size=13))
    if log_k:
        lo, hi = np.log10(max(kmin, 1.0) / 1.3), np.log10(kmax * 1.3)
        xaxis = dict(type="log", range=[lo, hi], title="sparsity k (nonzeros, log scale)")
    else:
        pad = 0.03 * (kmax - kmin) + 0.5
        xaxis = dict(type="linear", range=[kmin - pad, kmax + pad], title="sparsity k (nonzeros)")
    fig.update_layout(**_LAYOUT, title=_title(title), xaxis=xaxis,
                      yaxis_title=ylabel, hovermode="closest",
                      legend=dict(orientation="h", yanchor="top", y=-0.18, x=0))
    fig.update_layout(margin=dict(l=70, r=20, t=80, b=120), height=540)
    # the legend a fixed number of pixels under the axis title, with room for four rows: placed as a
    # fraction of the plot, it rose onto the axis title and ticks at 800 px once every k was starred and
    # it wrapped to more rows (issue 41; the project's overlap check reported it)
    from ui.figures.teach import legend_below

    return legend_below(fig, gap_px=66, rows=4)


# ---------------------------------------------------------------- compare
def metric_bars(table: pd.DataFrame, column: str, *, title: str, ylabel: str,
                percent: bool = False) -> go.Figure:
    """One bar per method (``table`` has columns ``method`` and ``column``)."""
    methods = [str(m) for m in table["method"]]
    values = table[column].to_numpy(float)
    text = [("" if not np.isfinite(v) else (f"{v:.1%}" if percent else f"{v:.4g}")) for v in values]
    fig = go.Figure(go.Bar(x=[method_short(m) for m in methods], y=values,
                           marker_color=[method_color(m) for m in methods],
                           text=text, textposition="outside", cliponaxis=False,
                           hovertemplate="%{x}<br>%{y:.4g}<extra></extra>", name=ylabel))
    fig.update_layout(**_LAYOUT, title=_title(title), yaxis_title=ylabel, xaxis_title="method",
                      showlegend=False)
    if percent:
        fig.update_yaxes(tickformat=".0%")
    return fig


def jaccard_heatmap(matrix: pd.DataFrame, *, title: str = "Support overlap (Jaccard index)") -> go.Figure:
    """Square matrix of Jaccard indices |S_i ∩ S_j| / |S_i ∪ S_j| between methods."""
    labels = [method_short(str(m)) for m in matrix.index]
    z = matrix.to_numpy(float)
    fig = go.Figure(go.Heatmap(z=z, x=labels, y=labels, zmin=0, zmax=1, colorscale=SEQUENTIAL,
                               text=np.round(z, 2), texttemplate="%{text}",
                               colorbar=dict(title="Jaccard"),
                               hovertemplate="%{y} vs %{x}: %{z:.3f}<extra></extra>"))
    fig.update_layout(**_LAYOUT, title=_title(title), xaxis_title="method", yaxis_title="method")
    fig.update_yaxes(autorange="reversed")
    return fig


def loadings_heatmap(loadings: pd.DataFrame, *, title: str = "Loadings side by side",
                     signed: bool = False) -> go.Figure:
    """Features (rows) × methods (columns) heatmap of loadings.

    ``loadings`` is indexed by feature name with one column per method; pass
    only the features of interest (e.g. the union of the supports).
    """
    z = loadings.to_numpy(float)
    zmax = float(np.abs(z).max()) if z.size else 1.0
    zmax = zmax if zmax > 0 else 1.0
    fig = go.Figure(go.Heatmap(
        z=z, x=[method_short(str(c)) for c in loadings.columns], y=[str(i) for i in loadings.index],
        colorscale=DIVERGING if signed else SEQUENTIAL, zmin=-zmax if signed else 0, zmax=zmax,
        colorbar=dict(title="loading"), hovertemplate="%{y}<br>%{x}: %{z:.4f}<extra></extra>"))
    fig.update_layout(**_LAYOUT, title=_title(title), xaxis_title="method", yaxis_title="feature",
                      height=max(380, 140 + 18 * len(loadings)))
    # every row labelled (plotly thins category labels on its own: 30 rows showed 17 names)
    fig.update_yaxes(autorange="reversed", type="category", tickmode="array",
                     tickvals=[str(i) for i in loadings.index], ticktext=[str(i) for i in loadings.index],
                     tickfont=dict(size=12 if len(loadings) <= 40 else 10))
    fig.update_xaxes(type="category")
    return fig


def image_grid(rows: Mapping[str, Sequence[np.ndarray]], *, image_shape: tuple[int, int],
               titles: Mapping[str, Sequence[str]] | None = None, signed: Sequence[str] = (),
               title: str = "Components as images", cell_px: int = 120,
               colorscale: str = SEQUENTIAL) -> go.Figure:
    """A grid of images: one row per entry of ``rows`` (e.g. per algorithm).

    Each image is a flat vector of length ``h*w`` reshaped to ``image_shape``
    and scaled to its own maximum |value|; rows named in ``signed`` use a
    diverging map centred at 0 (dense signed PCA), the others ``colorscale``
    from 0 (nonnegative loadings; pass ``"gray"`` for raw images).  ``titles[row][j]`` is written under image j.
    """
    names = list(rows)
    ncols = max((len(rows[r]) for r in names), default=1) or 1
    nrows = max(len(names), 1)
    subtitles = []
    for r in names:
        t = list(titles[r]) if titles and r in titles else []
        subtitles += [t[j] if j < len(t) else "" for j in range(ncols)]
    fig = make_subplots(rows=nrows, cols=ncols, subplot_titles=subtitles or None,
                        horizontal_spacing=0.02, vertical_spacing=0.5 / max(nrows, 1) if nrows > 1 else 0.1,
                        row_titles=[method_short(r) for r in names] if names else None)
    h, w = image_shape
    for i, r in enumerate(names):
        for j, vec in enumerate(rows[r]):
            img = np.asarray(vec, float).reshape(h, w)
            peak = float(np.abs(img).max()) or 1.0
            is_signed = r in signed
            fig.add_trace(go.Heatmap(
                z=img / peak, colorscale=DIVERGING if is_signed else colorscale,
                zmin=-1 if is_signed else 0, zmax=1, showscale=False,
                hovertemplate=f"{method_short(r)} #{j + 1}<br>row %{{y}}, col %{{x}}: %{{z:.2f}}"
                              "<extra></extra>"), row=i + 1, col=j + 1)
    fig.update_xaxes(showticklabels=False, showgrid=False, zeroline=False, constrain="domain")
    fig.update_yaxes(showticklabels=False, showgrid=False, zeroline=False, autorange="reversed",
                     scaleanchor="x", constrain="domain")
    # each subplot its own aspect lock (scaleanchor "x" only fits the first one)
    for idx in range(1, nrows * ncols + 1):
        suffix = "" if idx == 1 else str(idx)
        fig.layout[f"yaxis{suffix}"].scaleanchor = f"x{suffix}"
    for ann in fig.layout.annotations:
        ann.font = dict(size=12, color="#222222")
    fig.update_layout(**_LAYOUT, title=_title(title), height=90 + nrows * (cell_px + 40),
                      showlegend=False)
    fig.update_layout(margin=dict(l=20, r=170, t=90, b=20))
    return fig


# ---------------------------------------------------------- several components
def cumulative_variance(curves: Mapping[str, np.ndarray], *, normalizer: float = 1.0,
                        title: str = "Cumulative explained variance per component",
                        ylabel: str = "cumulative variance / trace(A)") -> go.Figure:
    """Cumulative variance after each component, one line per strategy (Asteris et al. 2015, Fig. 2)."""
    fig = go.Figure()
    palette = [OKABE_ITO[c] for c in ("blue", "orange", "green", "vermillion", "purple", "sky", "black")]
    symbols = ["circle", "square", "diamond", "triangle-up", "x", "cross", "star"]
    dashes = ["solid", "dash", "dot", "dashdot", "longdash", "longdashdot", "solid"]
    seen: list[tuple[str, np.ndarray]] = []
    for i, (name, values) in enumerate(curves.items()):
        v = np.asarray(values, float) / normalizer
        # a curve drawn exactly under another one would vanish: say so in its legend entry,
        # and tell them apart by dash, marker and a small horizontal offset
        same = next((n for n, w in seen if w.shape == v.shape and np.allclose(w, v, rtol=1e-9, atol=1e-12)),
                    None)
        seen.append((name, v))
        label = f"{name} (identical to {same})" if same else name
        shift = 0.06 * sum(1 for n, w in seen[:-1] if w.shape == v.shape and np.allclose(w, v)) if same else 0.0
        fig.add_trace(go.Scatter(x=np.arange(1, v.size + 1) + shift, y=v, mode="lines+markers", name=label,
                                 line=dict(color=palette[i % len(palette)], width=2, dash=dashes[i % len(dashes)]),
                                 marker=dict(symbol=symbols[i % len(symbols)], size=9 + 2 * bool(same),
                                             line=dict(width=1, color="white")),
                                 customdata=np.arange(1, v.size + 1),
                                 hovertemplate=f"{name}<br>components 1..%{{customdata}}: %{{y:.4f}}<extra></extra>"))
    fig.update_layout(**_LAYOUT, title=_title(title), xaxis_title="number of components",
                      yaxis_title=ylabel, legend=dict(orientation="h", yanchor="top", y=-0.2, x=0))
    fig.update_layout(margin=dict(l=70, r=20, t=80, b=110))
    fig.update_xaxes(dtick=1)
    return fig


def supports_heatmap(loadings: Mapping[str, np.ndarray], feature_names: Sequence[str], *,
                     title: str = "Supports: feature × component", max_features: int = 80) -> go.Figure:
    """Side-by-side heatmaps of loadings (features × components), one panel per strategy.

    Only the union of the supports is drawn (at most ``max_features`` rows, in
    feature order) so that the few selected features are readable.
    """
    names = list(loadings)
    used = np.zeros(len(feature_names), bool)
    for L in loadings.values():
        used |= np.any(np.asarray(L) != 0, axis=1)
    rows = np.flatnonzero(used)[:max_features]
    # a label "deflation: project out (Mackey)" breaks after its colon: side by side on a narrow
    # screen, one-line titles ran into each other (issue 21, item 5)
    titles = [name.replace(": ", ":<br>") for name in names]
    fig = make_subplots(rows=1, cols=max(len(names), 1), subplot_titles=titles or None,
                        shared_yaxes=True, horizontal_spacing=0.04)
    zmax = max((float(np.abs(np.asarray(L)).max()) for L in loadings.values() if np.size(L)), default=1.0)
    for i, name in enumerate(names):
        L = np.asarray(loadings[name], float)[rows]
        fig.add_trace(go.Heatmap(
            z=L, x=[f"#{j + 1}" for j in range(L.shape[1])], y=[str(feature_names[r]) for r in rows],
            colorscale=SEQUENTIAL, zmin=0, zmax=zmax or 1.0, showscale=(i == len(names) - 1),
            colorbar=dict(title="loading"),
            hovertemplate=f"{name}<br>%{{y}}, component %{{x}}: %{{z:.4f}}<extra></extra>"),
            row=1, col=i + 1)
        fig.update_xaxes(title_text="component", type="category", row=1, col=i + 1)
    ylabels = [str(feature_names[r]) for r in rows]
    fig.update_yaxes(autorange="reversed", type="category", tickmode="array", tickvals=ylabels,
                     ticktext=ylabels, tickfont=dict(size=12 if rows.size <= 40 else 10))
    fig.update_yaxes(title_text="feature", row=1, col=1)
    fig.update_layout(**_LAYOUT, title=_title(title), height=max(380, 180 + 18 * rows.size))
    if any("<br>" in t for t in titles):
        fig.update_layout(margin=dict(t=130))
    return fig


def matrix_heatmap(A: np.ndarray, *, title: str = "Covariance A",
                   labels: Sequence[str] | None = None) -> go.Figure:
    """A small matrix with its entries written in the cells."""
    A = np.asarray(A, float)
    labels = list(labels) if labels is not None else [f"x{i + 1}" for i in range(A.shape[0])]
    zmax = float(np.abs(A).max()) or 1.0
    fig = go.Figure(go.Heatmap(z=A, x=labels, y=labels, colorscale=DIVERGING, zmin=-zmax, zmax=zmax,
                               text=np.round(A, 3), texttemplate="%{text}",
                               colorbar=dict(title="value"),
                               hovertemplate="A[%{y}, %{x}] = %{z:.4f}<extra></extra>"))
    fig.update_layout(**_LAYOUT, title=_title(title), xaxis_title="feature", yaxis_title="feature",
                      height=380)
    fig.update_yaxes(autorange="reversed")
    return fig


# ------------------------------------------------------- nonnegative scores
def negativity_history(history: Sequence[float], *,
                       title: str = "Negativity score S(B) over the iterations") -> go.Figure:
    """S(B_t) = max(0, max_ij −Z_ij(B_t)) per iteration (Bajorski, Hall & Rubinstein)."""
    h = np.asarray(history, float)
    fig = go.Figure(go.Scatter(x=np.arange(h.size), y=h, mode="lines+markers", name="S(B)",
                               line=dict(color=OKABE_ITO["blue"], width=2),
                               hovertemplate="iteration %{x}<br>S = %{y:.4g}<extra></extra>"))
    fig.add_hline(y=0, line=dict(color="#777777", dash="dot"))
    fig.update_layout(**_LAYOUT, title=_title(title), xaxis_title="iteration",
                      yaxis_title="negativity S(B)", showlegend=False)
    return fig


def whitened_cloud(frames: Sequence[np.ndarray], *, frame_labels: Sequence[str] | None = None,
                   axes: Sequence[int] = (0, 1),
                   title: str = "Whitened cloud rotating into the positive orthant") -> go.Figure:
    """Animated scatter of the rotated whitened scores Z(B_t) = B_t Σ^{-1/2} Y.

    ``frames`` are (n, p) arrays; the first is drawn, the rest are plotly
    animation frames (play button and slider).  Two ``axes`` give a 2-D
    scatter with the positive quadrant shaded, three a 3-D scatter.  Points
    with a negative coordinate are drawn in vermillion.
    """
    frames = [np.asarray(F, float) for F in frames]
    axes = list(axes)
    labels = list(frame_labels) if frame_labels is not None else [f"step {i}" for i in range(len(frames))]
    allpts = np.concatenate([F[:, axes] for F in frames]) if frames else np.zeros((1, len(axes)))
    lo = float(min(allpts.min(), 0.0))
    hi = float(allpts.max())
    pad = 0.05 * (hi - lo or 1.0)
    rng = [lo - pad, hi + pad]
    three = len(axes) == 3

    def traces(F):
        neg = (F[:, axes] < 0).any(axis=1)
        out = []
        for mask, name, color in ((~neg, "inside the orthant", OKABE_ITO["blue"]),
                                  (neg, "a negative score", OKABE_ITO["vermillion"])):
            pts = F[mask][:, axes]
            common = dict(mode="markers", name=name, marker=dict(size=3 if three else 5, color=color,
                                                                 opacity=0.7))
            if three:
                out.append(go.Scatter3d(x=pts[:, 0], y=pts[:, 1], z=pts[:, 2], **common))
            else:
                out.append(go.Scatter(x=pts[:, 0], y=pts[:, 1], **common))
        return out

    fig = go.Figure(data=traces(frames[0]) if frames else [])
    fig.frames = [go.Frame(data=traces(F), name=labels[i]) for i, F in enumerate(frames)]
    axis_names = [f"score {a + 1}" for a in axes]
    if three:
        fig.update_layout(scene=dict(xaxis=dict(title=axis_names[0], range=rng),
                                     yaxis=dict(title=axis_names[1], range=rng),
                                     zaxis=dict(title=axis_names[2], range=rng), aspectmode="cube"))
    else:
        fig.add_shape(type="rect", x0=0, y0=0, x1=rng[1], y1=rng[1], line=dict(width=0),
                      fillcolor="rgba(0,158,115,0.10)", layer="below")
        fig.update_xaxes(title_text=axis_names[0], range=rng, zeroline=True, zerolinecolor="#444")
        fig.update_yaxes(title_text=axis_names[1], range=rng, zeroline=True, zerolinecolor="#444",
                         scaleanchor="x")
    if len(frames) > 1:
        fig.update_layout(
            updatemenus=[dict(type="buttons", showactive=False, x=0, y=1.0, xanchor="left",
                              yanchor="bottom", direction="left", pad=dict(b=4), buttons=[
                                  dict(label="▶ play", method="animate",
                                       args=[None, dict(frame=dict(duration=400, redraw=three),
                                                        fromcurrent=True, transition=dict(duration=0))]),
                                  dict(label="❚❚ pause", method="animate",
                                       args=[[None], dict(mode="immediate", frame=dict(duration=0))])])],
            sliders=[dict(active=0, x=0, y=0, len=1.0, xanchor="left", yanchor="top",
                          pad=dict(t=30), currentvalue=dict(prefix="rotation: ", xanchor="right"),
                          steps=[dict(label=labels[i], method="animate",
                                      args=[[labels[i]], dict(mode="immediate", frame=dict(
                                          duration=0, redraw=three), transition=dict(duration=0))])
                                 for i in range(len(frames))])])
    fig.update_layout(**_LAYOUT, title=_title(title), height=560,
                      legend=dict(orientation="h", yanchor="bottom", y=1.0, x=1.0, xanchor="right"))
    fig.update_layout(margin=dict(l=70, r=20, t=90, b=120))
    return fig


def profiles(D_true: np.ndarray | None, D_hat: np.ndarray, *, ncols: int = 5,
             title: str = "Recovered vs true profiles (columns of D)",
             variable_names: Sequence[str] | None = None) -> go.Figure:
    """Each column of the estimated D against the true one (after matching).

    ``variable_names`` label the x axis (the file's feature names); default 1..p.
    """
    D_hat = np.asarray(D_hat, float)
    p, r = D_hat.shape
    ncols = min(ncols, r)
    nrows = int(np.ceil(r / ncols))
    # room between the panels: the last tick label of one touched the first of the next (issue 41)
    fig = make_subplots(rows=nrows, cols=ncols, subplot_titles=[f"column {j + 1}" for j in range(r)],
                        shared_yaxes=True, vertical_spacing=0.12 if nrows > 1 else 0.1,
                        horizontal_spacing=0.08 if ncols > 1 else 0.02)
    x = np.arange(1, p + 1) if variable_names is None else [str(v) for v in variable_names]
    for j in range(r):
        row, col = j // ncols + 1, j % ncols + 1
        if D_true is not None:
            fig.add_trace(go.Bar(x=x, y=np.asarray(D_true, float)[:, j], name="true D",
                                 marker_color="#BBBBBB", showlegend=(j == 0), legendgroup="true"),
                          row=row, col=col)
        fig.add_trace(go.Scatter(x=x, y=D_hat[:, j], mode="markers+lines", name="estimated D̂",
                                 marker=dict(color=OKABE_ITO["blue"], size=6),
                                 line=dict(color=OKABE_ITO["blue"], width=1.5),
                                 showlegend=(j == 0), legendgroup="est"), row=row, col=col)
    fig.update_xaxes(title_text="variable", dtick=1 if p <= 12 and variable_names is None else None,
                     type="category" if variable_names is not None else None,
                     tickangle=-45 if variable_names is not None else None, automargin=True)
    fig.update_yaxes(title_text="loading", col=1)
    fig.update_layout(**_LAYOUT, title=_title(title), height=120 + 260 * nrows, barmode="overlay",
                      legend=dict(orientation="h", yanchor="bottom", y=1.04, x=0.6))
    return fig


def diff_bars(table: pd.DataFrame, *, title: str = "Recovery error after the best permutation") -> go.Figure:
    """Grouped bars of ``D_diff`` and ``W_diff`` (columns) per ``method`` (lower is better)."""
    fig = go.Figure()
    colors = {"D_diff": OKABE_ITO["blue"], "W_diff": OKABE_ITO["orange"]}
    for col in ("D_diff", "W_diff"):
        if col in table:
            vals = table[col].to_numpy(float)
            fig.add_trace(go.Bar(x=[str(m) for m in table["method"]], y=vals, name=col.replace("_", " "),
                                 marker_color=colors[col], text=[f"{v:.3f}" for v in vals],
                                 textposition="outside", cliponaxis=False,
                                 hovertemplate=f"%{{x}}<br>{col} %{{y:.4f}}<extra></extra>"))
    fig.update_layout(**_LAYOUT, title=_title(title), barmode="group", xaxis_title="method",
                      yaxis_title="relative error ‖est − true‖ / ‖true‖",
                      legend=dict(orientation="h", yanchor="bottom", y=1.0, x=0.6))
    return fig
