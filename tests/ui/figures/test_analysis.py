"""Pure figure functions of the analysis pages, the download builders and the pure compute helpers."""

from __future__ import annotations

import io
import itertools

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst
from PIL import Image

from ui import compute, downloads
from ui.figures import analysis as figs


def _titles(fig: go.Figure) -> tuple[str, str, str]:
    return fig.layout.title.text, fig.layout.xaxis.title.text, fig.layout.yaxis.title.text


# ----------------------------------------------------------------- palette
def test_method_colors_distinct_and_stable():
    main = ["auto", "spannogram", "enet", "em", "tpower", "zass", "sklearn-spca", "nmf", "bipartite", "pca"]
    colors = [figs.method_color(m) for m in main]
    assert len(set(colors)) == len(colors)
    okabe = set(figs.OKABE_ITO.values())
    # the single-component solvers of the paper's figures use Okabe–Ito colours (the light sky and
    # orange darkened to read on white: the registry's test checks the contrast)
    assert all(figs.method_color(m) in okabe for m in ("auto", "spannogram", "tpower", "zass"))
    assert figs.method_color("something-new") == figs.method_color("something-new")
    assert figs.method_label("enet") == "ε-net spannogram"
    assert figs.method_label("unknown") == "unknown"


# ----------------------------------------------------------------- variance vs k
def _curves():
    ks = np.arange(1, 6)
    return pd.concat([pd.DataFrame(dict(method="enet", k=ks, value=ks / 10, ratio=np.full(5, 0.9))),
                      pd.DataFrame(dict(method="em", k=ks, value=ks / 12, ratio=np.full(5, 0.8)))])


def test_variance_vs_k_band_stars_paper_and_methods():
    ks = np.arange(1, 6)
    band = pd.DataFrame(dict(k=ks, lower=ks / 10, upper=ks / 10 + 0.05, ratio=[1, 1, .9, .95, .99],
                             optimal=[True, True, False, False, False]))
    paper = pd.DataFrame(dict(k=ks, upper=ks / 10 + 0.2))
    fig = figs.variance_vs_k(_curves(), band=band, paper=paper, current_k=3, title="T")
    names = [t.name for t in fig.data]
    assert names[1].startswith("certified upper bound")
    assert fig.data[1].fill == "tonexty" and fig.data[0].showlegend is False
    np.testing.assert_allclose(fig.data[1].y, band["upper"])
    stars = next(t for t in fig.data if t.name == "provably optimal")
    assert list(stars.x) == [1, 2] and stars.marker.symbol == "star"
    dashed = next(t for t in fig.data if "paper" in t.name)
    assert dashed.line.dash == "dash"
    np.testing.assert_allclose(dashed.y, paper["upper"])
    enet = next(t for t in fig.data if t.name == figs.method_label("enet"))
    assert enet.line.color == figs.method_color("enet")
    np.testing.assert_allclose(enet.y, np.arange(1, 6) / 10)
    assert "certified ratio" in enet.hovertemplate
    np.testing.assert_allclose(np.asarray(enet.customdata)[:, 0], 0.9)
    assert _titles(fig) == ("T", "sparsity k (nonzeros)", "variance / λ₁")
    assert any(s.type == "line" and s.x0 == 3 for s in fig.layout.shapes)


def test_variance_vs_k_without_band_has_only_methods():
    fig = figs.variance_vs_k(_curves().drop(columns="ratio"))
    assert [t.name for t in fig.data] == [figs.method_label("enet"), figs.method_label("em")]
    assert not fig.layout.shapes


# ----------------------------------------------------------------- compare
def test_metric_bars_values_colors_percent():
    table = pd.DataFrame(dict(method=["enet", "em"], ratio=[0.99, 0.5]))
    fig = figs.metric_bars(table, "ratio", title="R", ylabel="ratio", percent=True)
    bar = fig.data[0]
    np.testing.assert_allclose(bar.y, [0.99, 0.5])
    assert list(bar.marker.color) == [figs.method_color("enet"), figs.method_color("em")]
    assert list(bar.text) == ["99.0%", "50.0%"]
    assert fig.layout.yaxis.tickformat == ".0%"
    assert _titles(fig) == ("R", "method", "ratio")


def test_jaccard_matrix_and_heatmap():
    sup = {"a": [0, 1, 2], "b": [1, 2, 3], "c": [7]}
    J = compute.jaccard_matrix(sup)
    assert J.loc["a", "b"] == pytest.approx(2 / 4) and J.loc["a", "c"] == 0 and J.loc["c", "c"] == 1
    assert np.allclose(J.to_numpy(), J.to_numpy().T)
    fig = figs.jaccard_heatmap(J)
    np.testing.assert_allclose(fig.data[0].z, J.to_numpy())
    assert fig.data[0].zmin == 0 and fig.data[0].zmax == 1


def test_loadings_heatmap_signed_and_sequential():
    L = pd.DataFrame({"enet": [0.0, 0.6, 0.8], "pca": [-0.5, 0.5, 0.7]}, index=["f0", "f1", "f2"])
    seq = figs.loadings_heatmap(L)
    assert seq.data[0].zmin == 0 and seq.data[0].zmax == pytest.approx(0.8)
    sig = figs.loadings_heatmap(L, signed=True)
    assert sig.data[0].zmin == pytest.approx(-0.8)
    assert list(sig.data[0].y) == ["f0", "f1", "f2"]


def test_image_grid_reshapes_and_scales_each_image():
    rng = np.random.default_rng(0)
    a, b = rng.random(6), rng.random(6)
    signed = rng.standard_normal(6)
    fig = figs.image_grid({"enet": [a, b], "pca": [signed]}, image_shape=(2, 3),
                          titles={"enet": ["x", "y"], "pca": ["z"]}, signed=["pca"])
    heat = [t for t in fig.data if isinstance(t, go.Heatmap)]
    assert len(heat) == 3
    np.testing.assert_allclose(heat[0].z, (a / a.max()).reshape(2, 3))
    assert heat[2].zmin == -1 and heat[0].zmin == 0
    texts = [ann.text for ann in fig.layout.annotations]
    assert {"x", "y", "z"} <= set(texts)
    assert figs.method_short("pca") in texts  # row title


# ----------------------------------------------------------------- several components
def test_cumulative_variance_normalized():
    fig = figs.cumulative_variance({"deflation": [1.0, 1.5], "joint": [1.0, 2.0]}, normalizer=2.0)
    np.testing.assert_allclose(fig.data[1].y, [0.5, 1.0])
    np.testing.assert_array_equal(fig.data[0].x, [1, 2])
    assert fig.data[0].line.color != fig.data[1].line.color


def test_supports_heatmap_shows_union_of_supports():
    L1 = np.zeros((6, 2)); L1[[0, 1], 0] = 0.7; L1[4, 1] = 1.0
    L2 = np.zeros((6, 2)); L2[2, 0] = 1.0; L2[4, 1] = 1.0
    fig = figs.supports_heatmap({"a": L1, "b": L2}, [f"f{i}" for i in range(6)])
    assert list(fig.data[0].y) == ["f0", "f1", "f2", "f4"]
    np.testing.assert_allclose(fig.data[1].z, L2[[0, 1, 2, 4]])


def test_matrix_heatmap_writes_entries():
    A = np.array([[1, 0.1], [0.1, 1]])
    fig = figs.matrix_heatmap(A)
    np.testing.assert_allclose(fig.data[0].z, A)
    assert fig.data[0].zmin == -1


# ----------------------------------------------------------------- nonnegative scores
def test_negativity_history():
    fig = figs.negativity_history([0.5, 0.2, 0.0])
    np.testing.assert_allclose(fig.data[0].y, [0.5, 0.2, 0.0])
    assert fig.layout.xaxis.title.text == "iteration"


def test_whitened_cloud_2d_splits_negative_points_and_animates():
    F0 = np.array([[1.0, 1.0], [-1.0, 0.5], [0.2, -0.1]])
    F1 = np.abs(F0)
    fig = figs.whitened_cloud([F0, F1], frame_labels=["start", "end"])
    inside, negative = fig.data
    assert len(inside.x) == 1 and len(negative.x) == 2
    assert [f.name for f in fig.frames] == ["start", "end"]
    assert len(fig.frames[1].data[1].x) == 0  # all inside at the end
    assert fig.layout.updatemenus and fig.layout.sliders
    assert fig.layout.shapes[0].x0 == 0  # the positive quadrant is shaded


def test_whitened_cloud_3d():
    rng = np.random.default_rng(1)
    fig = figs.whitened_cloud([rng.random((20, 3))], axes=(0, 1, 2))
    assert isinstance(fig.data[0], go.Scatter3d)
    assert fig.layout.scene.xaxis.title.text == "score 1"
    assert not fig.layout.updatemenus  # one frame: nothing to play


def test_profiles_and_diff_bars():
    D = np.eye(3)
    fig = figs.profiles(D, D * 0.9)
    assert sum(isinstance(t, go.Bar) for t in fig.data) == 3
    assert sum(t.showlegend is True for t in fig.data) == 2
    table = pd.DataFrame(dict(method=["NSPCA", "PCA"], D_diff=[0.1, 0.7], W_diff=[0.05, 0.2]))
    bars = figs.diff_bars(table)
    assert [t.name for t in bars.data] == ["D diff", "W diff"]
    np.testing.assert_allclose(bars.data[0].y, [0.1, 0.7])


# ----------------------------------------------------------------- downloads
def test_image_grid_png_colours_follow_the_maps():
    a = np.array([0.0, 0.5, 1.0, 0.0])
    png = downloads.image_grid_png({"enet": [a], "pca": [np.array([-1.0, 0, 0, 1.0])]},
                                   image_shape=(2, 2), signed=["pca"], scale=5, title="t")
    img = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
    seq = downloads.colormap_lut(figs.SEQUENTIAL)
    div = downloads.colormap_lut(figs.DIVERGING)
    # the pixel of value 1.0 takes the last colour of the sequential map, zeros the first
    assert (img == seq[255]).all(axis=-1).sum() == 25  # one 5x5 block
    assert (img == seq[128]).all(axis=-1).sum() == 25  # 0.5 -> the middle of the map
    assert (img == div[0]).all(axis=-1).sum() == 25 and (img == div[255]).all(axis=-1).sum() == 25


def test_components_and_scores_csv_roundtrip():
    """Issue 21 item 9: nonzero loadings only, sorted, with names; labels beside the scores."""
    L = np.array([[0.6, 0.0], [0.8, 1.0], [0.0, 0.0]])
    df = pd.read_csv(io.BytesIO(downloads.components_csv(L, ["a", "b", "c"])))
    assert list(df.columns) == ["component", "rank", "feature", "index", "loading"]
    assert df.values.tolist() == [["component_1", 1, "b", 2, 0.8], ["component_1", 2, "a", 1, 0.6],
                                  ["component_2", 1, "b", 2, 1.0]]
    # the long table rebuilds the matrix exactly
    back = np.zeros_like(L)
    back[df["index"] - 1, df["component"].str[-1].astype(int) - 1] = df["loading"]
    np.testing.assert_allclose(back, L)
    X = np.arange(6.0).reshape(2, 3)
    sc = pd.read_csv(io.BytesIO(downloads.scores_csv(X, L, labels=["ALL", "MLL"])))
    assert list(sc.columns[:2]) == ["sample", "label"] and sc["label"].tolist() == ["ALL", "MLL"]
    assert sc["sample"].tolist() == [1, 2]
    np.testing.assert_allclose(sc[["score_1", "score_2"]].to_numpy(), X @ L)
    with pytest.raises(ValueError, match="one entry per sample"):
        downloads.scores_csv(X, L, labels=["a"])
    html = downloads.figure_html(figs.negativity_history([1.0, 0.0]))
    assert "<html>" in html and "</html>" in html and "Plotly.newPlot" in html


# ----------------------------------------------------------------- pure compute helpers
def _pair_jaccard_brute(a, b):
    n11 = n10 = n01 = 0
    for i, j in itertools.combinations(range(len(a)), 2):
        sa, sb = a[i] == a[j], b[i] == b[j]
        n11 += sa and sb
        n10 += sa and not sb
        n01 += sb and not sa
    return n11 / (n11 + n10 + n01) if (n11 + n10 + n01) else 1.0


@settings(max_examples=60, deadline=None)
@given(hst.lists(hst.tuples(hst.integers(0, 3), hst.sampled_from("xyz")), min_size=2, max_size=12))
def test_pair_jaccard_matches_pair_enumeration(pairs):
    a = [p[0] for p in pairs]
    b = [p[1] for p in pairs]
    assert compute.pair_jaccard(a, b) == pytest.approx(_pair_jaccard_brute(a, b))


def test_pair_jaccard_identical_partitions_and_length_error():
    assert compute.pair_jaccard([0, 0, 1, 1], ["u", "u", "v", "v"]) == 1.0
    with pytest.raises(ValueError, match="must label the same items"):
        compute.pair_jaccard([0, 1], [0, 1, 2])


def test_true_variance_matches_dense_covariance():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((7, 5))
    xs = rng.random((5, 3))
    A = X.T @ X / 7
    np.testing.assert_allclose(compute.true_variance(X, xs), np.einsum("ij,ij->j", xs, A @ xs))


def test_pca_reference_is_top_eigenvectors_with_fixed_signs():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((40, 6)) @ np.diag([3, 2, 1, 1, 0.5, 0.1])
    X -= X.mean(axis=0)
    W, ev = compute.pca(X, 2)
    evals, evecs = np.linalg.eigh(X.T @ X / 40)
    np.testing.assert_allclose(ev, evals[::-1][:2])
    for j in range(2):
        assert abs(W[:, j] @ evecs[:, -1 - j]) == pytest.approx(1.0)
        assert W[np.argmax(np.abs(W[:, j])), j] > 0


def test_kmeans_jaccard_recovers_separated_classes():
    rng = np.random.default_rng(5)
    labels = np.repeat(["a", "b", "c"], 10)
    centers = {"a": [0, 0], "b": [10, 0], "c": [0, 10]}
    X = np.array([centers[lab] for lab in labels], float) + 0.1 * rng.standard_normal((30, 2))
    assert compute.kmeans_jaccard(X, labels, 3, 0) == pytest.approx(1.0)


def test_cumulative_variance_says_identical_and_keeps_both_visible():
    """Issue 21 item 5: three legend entries, two lines visible (one exactly under another)."""
    a = np.array([1.0, 1.8, 2.4])
    f = figs.cumulative_variance({"remove": a, "project": a.copy(), "joint": a + 0.1})
    names = [t.name for t in f.data]
    assert names == ["remove", "project (identical to remove)", "joint"]
    assert f.data[0].line.dash != f.data[1].line.dash and f.data[0].marker.symbol != f.data[1].marker.symbol
    assert not np.allclose(f.data[0].x, f.data[1].x)  # offset, so both markers show
    np.testing.assert_allclose(f.data[1].y, a)  # the values themselves are not moved


def test_heatmaps_label_every_row():
    """Issue 21 item 5: 30 rows showed 17 labels."""
    names = [f"gene_{i}" for i in range(30)]
    L = pd.DataFrame(np.random.default_rng(0).random((30, 2)), index=names, columns=["em", "enet"])
    f = figs.loadings_heatmap(L)
    assert list(f.layout.yaxis.tickvals) == names and list(f.layout.yaxis.ticktext) == names
    assert f.layout.height >= 30 * 18
    S = figs.supports_heatmap({"a": np.eye(30)[:, :3], "b": np.eye(30)[:, 3:6]}, names)
    assert list(f.layout.yaxis.tickvals) == names
    assert list(S.layout.yaxis.tickvals) == names[:6]


def test_variance_vs_k_legend_keeps_its_distance_in_pixels():
    """Issue 41: at 800 px the legend, placed as a fraction of the plot, covered the axis title and
    ticks once it wrapped to more rows; now it starts 66 px under the plot with room for four rows."""
    for log_k in (False, True):
        fig = figs.variance_vs_k(_curves(), current_k=3, log_k=log_k)
        lay = fig.layout
        plot_px = lay.height - lay.margin.t - lay.margin.b
        assert lay.legend.yanchor == "top" and lay.legend.y * plot_px == pytest.approx(-66)
        assert lay.margin.b >= 66 + 4 * 22


def test_profiles_panels_leave_room_between_their_ticks():
    """Issue 41: neighbouring subplot ticks touched on Nonnegative-score PCA."""
    D = np.abs(np.random.default_rng(0).standard_normal((12, 5)))
    fig = figs.profiles(D, D, variable_names=[f"var{j}" for j in range(12)])
    doms = sorted(tuple(fig.layout[a].domain) for a in fig.layout if a.startswith("xaxis"))
    gaps = [b[0] - a[1] for a, b in zip(doms, doms[1:])]
    assert gaps and min(gaps) >= 0.07, gaps
    assert all(fig.layout[a].tickangle == -45 for a in fig.layout if a.startswith("xaxis"))
