"""The "Features by class" page: its pure compute (ui/labelled.py), figures and the page itself.

Reference computations are written here with plain loops (obviously correct,
slow); the page runs under AppTest on the embedded digits and on an uploaded
labelled CSV read through the "Your data" page.
"""

from __future__ import annotations

import io
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st_h
from scipy import stats

from nspca_core._common.validation import InputError
from tests.conftest import page_app
from ui import compute, state
from ui import labelled as lab
from ui.figures import labelled as figs

ROOT = Path(__file__).resolve().parents[3]
os.environ.setdefault("NSPCA_DATA_DIR", str(ROOT.parent / "shared" / "datasets"))
TIMEOUT = 120


# ------------------------------------------------------------------ brute force references
def brute_class_means(X, labels, classes):
    out = np.zeros((len(classes), X.shape[1]))
    for g, c in enumerate(classes):
        for j in range(X.shape[1]):
            vals = [X[i, j] for i in range(X.shape[0]) if str(labels[i]) == c]
            out[g, j] = sum(vals) / len(vals)
    return out


def brute_anova(x, labels):
    """Textbook one-way ANOVA F of one column, with loops."""
    groups = {}
    for v, c in zip(x, labels):
        groups.setdefault(str(c), []).append(float(v))
    m, G = len(x), len(groups)
    grand = sum(x) / m
    ssb = sum(len(vs) * (sum(vs) / len(vs) - grand) ** 2 for vs in groups.values())
    ssw = sum(sum((v - sum(vs) / len(vs)) ** 2 for v in vs) for vs in groups.values())
    return (ssb / (G - 1)) / (ssw / (m - G))


def _data(seed=0, m=30, n=8, G=3):
    rng = np.random.default_rng(seed)
    labels = np.array(["c" + str(g) for g in rng.integers(0, G, m)])
    labels[:G] = [f"c{g}" for g in range(G)]  # every class present
    X = rng.standard_normal((m, n))
    X[:, 0] += 2.0 * (labels == "c1")  # feature 0 separates class c1
    return X, labels


# ------------------------------------------------------------------ classes
def test_class_codes_natural_order_and_missing():
    classes, codes = lab.class_codes(["12", "2", "b", "A", None, "2", float("nan"), ""])
    assert classes == ["2", "12", "A", "b", lab.NO_LABEL]
    assert [classes[c] for c in codes] == ["12", "2", "b", "A", lab.NO_LABEL, "2", lab.NO_LABEL,
                                           lab.NO_LABEL]
    classes, codes = lab.class_codes(np.array([3.0, 1.0, 3.0]))  # numeric column read as floats
    assert classes == ["1", "3"] and codes.tolist() == [1, 0, 1]


def test_class_means_against_loops():
    X, labels = _data()
    classes, codes = lab.class_codes(labels)
    np.testing.assert_allclose(lab.class_means(X, codes, len(classes)),
                               brute_class_means(X, labels, classes), rtol=1e-12)


def test_anova_against_loops_and_scipy():
    X, labels = _data(seed=1, m=40, n=6, G=4)
    classes, codes = lab.class_codes(labels)
    F, p = lab.anova_f(X, codes, len(classes))
    for j in range(X.shape[1]):
        assert F[j] == pytest.approx(brute_anova(X[:, j], labels), rel=1e-10)
        ref = stats.f_oneway(*[X[labels == c, j] for c in classes])
        assert F[j] == pytest.approx(ref.statistic, rel=1e-10)
        assert p[j] == pytest.approx(ref.pvalue, rel=1e-8, abs=1e-300)
    assert np.argmax(F) == 0  # the planted separating feature


def test_anova_edge_cases_and_messages():
    codes = np.array([0, 0, 1, 1])
    X = np.array([[5.0, 1.0, 1.0], [5.0, 1.0, 2.0], [5.0, 3.0, 1.5], [5.0, 3.0, 2.5]])
    F, p = lab.anova_f(X, codes, 2)
    assert math.isnan(F[0]) and math.isnan(p[0])   # constant feature
    assert F[1] == np.inf and p[1] == 0.0          # classes differ, no spread inside
    assert np.isfinite(F[2])
    with pytest.raises(InputError, match="at least 2 classes; the labels have 1"):
        lab.anova_f(X, np.zeros(4, int), 1)
    with pytest.raises(InputError, match="more samples than classes; got 2 samples in 2"):
        lab.anova_f(X[:2], np.array([0, 1]), 2)


@settings(max_examples=40, deadline=None)
@given(seed=st_h.integers(0, 10_000), shift=st_h.floats(-1e3, 1e3),
       scale=st_h.floats(1e-2, 1e3), G=st_h.integers(2, 5))
def test_anova_invariant_to_shift_scale_and_sample_order(seed, shift, scale, G):
    """F does not change when a feature is shifted/scaled or the samples are reordered."""
    X, labels = _data(seed=seed, m=25, n=4, G=G)
    classes, codes = lab.class_codes(labels)
    F, _ = lab.anova_f(X, codes, len(classes))
    F2, _ = lab.anova_f(X * scale + shift, codes, len(classes))
    perm = np.random.default_rng(seed).permutation(X.shape[0])
    F3, _ = lab.anova_f(X[perm], codes[perm], len(classes))
    np.testing.assert_allclose(F2, F, rtol=1e-6)
    np.testing.assert_allclose(F3, F, rtol=1e-9)
    # the class means, weighted by class size, give back the overall mean
    means = lab.class_means(X, codes, len(classes))
    counts = np.bincount(codes, minlength=len(classes))
    np.testing.assert_allclose(counts @ means / X.shape[0], X.mean(axis=0), atol=1e-12)


# ------------------------------------------------------------------ tables and matrices
def test_feature_table_rows_are_the_support_by_loading():
    X, labels = _data(seed=2, m=30, n=8, G=3)
    classes, codes = lab.class_codes(labels)
    x = np.zeros(8)
    x[[5, 0, 3]] = [0.2, 0.9, 0.4]
    x /= np.linalg.norm(x)
    names = [f"gene{j}" for j in range(8)]
    t = lab.feature_table(X, x, names, classes, codes)
    assert t["feature"].tolist() == ["gene0", "gene3", "gene5"]
    assert t.index.tolist() == [0, 3, 5]
    np.testing.assert_allclose(t["loading"], x[[0, 3, 5]])
    ref = brute_class_means(X[:, [0, 3, 5]], labels, classes)
    for g, c in enumerate(classes):
        np.testing.assert_allclose(t[f"mean {c}"], ref[g], rtol=1e-12)
    for row, j in enumerate([0, 3, 5]):
        assert t["F"].iloc[row] == pytest.approx(brute_anova(X[:, j], labels), rel=1e-10)
        assert t["highest mean in"].iloc[row] == classes[int(np.argmax(ref[:, row]))]


def test_selected_features_and_heatmap_matrix():
    L = np.zeros((6, 2))
    L[[4, 1], 0] = [0.6, 0.8]
    L[[2, 1], 1] = [0.9, 0.1]  # feature 1 again: listed once, under component 1
    feats, comp = lab.selected_features(L)
    assert feats.tolist() == [1, 4, 2] and comp.tolist() == [0, 0, 1]
    X, labels = _data(seed=3, m=12, n=6, G=3)
    X[:, 2] = 7.0  # a constant feature: zeros in the heatmap
    classes, codes = lab.class_codes(labels)
    Z, order = lab.heatmap_matrix(X, feats, codes)
    assert Z.shape == (3, 12)
    assert np.all(np.diff(codes[order]) >= 0)  # samples grouped by class
    for r, f in enumerate(feats):
        col = X[:, f]
        for c, i in enumerate(order):
            want = 0.0 if col.std() == 0 else (col[i] - col.mean()) / col.std()
            assert Z[r, c] == pytest.approx(want, abs=1e-12)


def test_analyse_scores_and_messages():
    X, labels = _data(seed=4, m=30, n=8, G=3)
    L = np.zeros((8, 2))
    L[[0, 1], 0] = [0.8, 0.6]
    L[[2, 3], 1] = [0.6, 0.8]
    an = lab.analyse(X, X, labels, [f"f{j}" for j in range(8)], L)
    S = np.array([[sum(X[i, j] * L[j, c] for j in range(8)) for c in range(2)] for i in range(30)])
    np.testing.assert_allclose(an.scores, S, atol=1e-12)
    for c in range(2):
        assert an.score_F[c] == pytest.approx(brute_anova(S[:, c], labels), rel=1e-9)
    assert an.counts.sum() == 30 and len(an.tables) == 2
    with pytest.raises(InputError, match=r"`labels` must have one entry per sample \(m=30\); got 29"):
        lab.analyse(X, X, labels[:29], [f"f{j}" for j in range(8)], L)
    with pytest.raises(InputError, match="1 class .*at least 2"):
        lab.analyse(X, X, ["a"] * 30, [f"f{j}" for j in range(8)], L)
    with pytest.raises(InputError, match="`feature_names` must name the n=8 features; got 7"):
        lab.analyse(X, X, labels, [f"f{j}" for j in range(7)], L)


def test_csv_exports_round_trip():
    X, labels = _data(seed=5, m=20, n=6, G=2)
    L = np.zeros((6, 2))
    L[[0, 1], 0] = [0.8, 0.6]
    L[[3], 1] = [1.0]
    names = [f"g{j}" for j in range(6)]
    an = lab.analyse(X, X, labels, names, L)
    tables = pd.read_csv(io.BytesIO(lab.tables_csv(an.tables)))
    assert tables["component"].tolist() == [1, 1, 2]
    assert tables["feature"].tolist() == ["g0", "g1", "g3"]
    assert {"mean c0", "mean c1", "F", "p-value", "highest mean in"} <= set(tables.columns)
    scores = pd.read_csv(io.BytesIO(lab.scores_csv(an.scores, an.classes, an.codes)))
    assert scores["sample"].tolist() == list(range(1, 21))
    assert scores["class"].tolist() == labels.tolist()
    np.testing.assert_allclose(scores[["component 1", "component 2"]].to_numpy(), X @ L, atol=1e-9)
    named = pd.read_csv(io.BytesIO(lab.scores_csv(an.scores, an.classes, an.codes,
                                                  sample_names=[f"GSM{i}" for i in range(20)])))
    assert named["sample"].tolist() == [f"GSM{i}" for i in range(20)]  # issue 26: names in downloads
    assert named["class"].tolist() == labels.tolist()
    heat = pd.read_csv(io.BytesIO(lab.heatmap_csv(an.Z, names, an.features, an.order, an.classes,
                                                  an.codes)))
    assert heat["feature"].tolist() == ["g0", "g1", "g3"]
    assert heat.columns[1] == f"{labels[an.order[0]]}:{an.order[0] + 1}"


# ------------------------------------------------------------------ figures
def test_scores_figure_one_box_per_class_and_component():
    X, labels = _data(seed=6, m=30, n=8, G=3)
    classes, codes = lab.class_codes(labels)
    S = X[:, :2]
    fig = figs.scores_by_class(S, codes, classes, score_F=[3.5, np.inf])
    boxes = [t for t in fig.data if t.type == "box"]
    assert len(boxes) == 3 * 2
    assert [b.name for b in boxes[:3]] == classes
    assert sum(len(b.y) for b in boxes[:3]) == 30
    titles = [a.text for a in fig.layout.annotations]
    assert titles == ["component 1 (F = 3.5)", "component 2 (F = ∞)"]
    # the classes are named on every panel's x axis, in order (no legend to collide with them)
    assert list(fig.layout.xaxis.categoryarray) == list(fig.layout.xaxis2.categoryarray) == classes
    assert fig.layout.showlegend is False


def test_heatmap_labels_every_row_with_the_file_names():
    Z = np.arange(12.0).reshape(3, 4)
    fig = figs.class_heatmap(Z, ["TP53", "TP53", "MYC"], [0, 0, 1, 1], ["ALL", "AML"],
                             feature_component=[0, 0, 1])
    assert list(fig.layout.yaxis.ticktext) == ["TP53", "TP53", "MYC"]  # duplicates kept apart
    assert list(fig.layout.yaxis.tickvals) == [0, 1, 2]
    assert [a.text for a in fig.layout.annotations] == ["ALL", "AML"]
    assert len(fig.layout.shapes) == 2  # one class boundary, one component boundary


def test_static_export_says_what_is_missing(monkeypatch):
    fig = figs.scores_by_class(np.zeros((4, 1)), np.array([0, 0, 1, 1]), ["a", "b"])
    with pytest.raises(ValueError, match="`fmt` must be 'png' or 'svg'; got 'gif'"):
        figs.to_static(fig, "gif")
    monkeypatch.setattr(figs, "static_export_available", lambda: False)
    with pytest.raises(RuntimeError, match="needs the kaleido package and Chrome/Chromium"):
        figs.to_static(fig, "png")
    assert b'"type":"box"' in figs.to_json(fig)


# ------------------------------------------------------------------ the page
def _ok(at):
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def test_fast_components_never_certify():
    X, _ = _data(seed=7, m=30, n=8)
    res = lab.fast_components(X - X.mean(axis=0), 2, 3, "auto", 2, 0.1, 0)
    assert res.params["certify"] is False and res.params["strategy"] == "deflation-remove"
    assert all(not np.isfinite(getattr(r, "upper_bound", np.nan) or np.nan) for r in res.results)


def test_page_on_digits_tables_figures_downloads():
    at = _ok(page_app("labelled.py", timeout=TIMEOUT, **{state.DATASET: "digits", state.K: 6}).run())
    assert at.title[0].value == "Features by class"
    assert at.selectbox(key="fc_method").value == "enet"  # the fast method by default
    assert len(at.get("plotly_chart")) == 2                    # scores by class, heatmap
    summary, *tables = [d.value for d in at.dataframe]
    assert len(tables) == 3 and len(summary) == 3             # 3 components by default
    t = tables[0]
    assert t["feature"].str.startswith("pixel_").all()         # the dataset's feature names
    assert [f"mean {c}" for c in range(10)] == [c for c in t.columns if c.startswith("mean ")]
    # the on-screen table is the one computed from the same components
    ds = compute.load_dataset("digits", "center", 0)
    res = lab.fast_components(ds.X, 3, 6, "enet", 2, 0.1, 0)  # the page's default method
    ref = lab.analyse(ds.X, ds.X_raw, ds.labels, ds.feature_names, res.loadings).tables[0]
    assert t["feature"].tolist() == ref["feature"].tolist()
    np.testing.assert_allclose(t["F"], ref["F"], rtol=1e-9)
    labels = {b.label for b in at.get("download_button")}
    assert {"Feature tables (CSV)", "Scores with classes (CSV)", "Heatmap matrix (CSV)", "HTML",
            "JSON"} <= labels
    at.slider(key="fc_r").set_value(2)
    at.radio(key="fc_values").set_value("analysed")
    at = _ok(at.run())
    assert len(at.dataframe) == 1 + 2


def test_page_without_labels_says_which_datasets_have_them():
    at = _ok(page_app("labelled.py", timeout=TIMEOUT, **{state.DATASET: "synthetic-planted"}).run())
    assert "has no class labels" in at.info[0].value and "MLL" in at.info[0].value
    assert not at.get("plotly_chart")


def _labelled_csv(m=40, n=30, seed=0) -> tuple[bytes, list[str], np.ndarray]:
    rng = np.random.default_rng(seed)
    classes = np.array(["tumour", "normal"])[rng.integers(0, 2, m)]
    classes[:2] = ["tumour", "normal"]
    X = rng.lognormal(size=(m, n))
    X[classes == "tumour", :4] *= 6.0  # four genes up in tumours
    genes = [f"GENE{j:03d}" for j in range(n)]
    df = pd.DataFrame(X, columns=genes)
    df.insert(0, "class", classes)
    return df.to_csv(index=False).encode(), genes, classes


def test_page_on_an_uploaded_labelled_csv():
    data, genes, classes = _labelled_csv()
    yd = _ok(page_app("your_data.py", timeout=TIMEOUT, **{state.K: 4}).run())
    yd.file_uploader(key="yd_file").set_value(("tumours.csv", data, "text/csv"))
    yd = _ok(yd.run())
    yd.button(key="yd_use").click()
    yd = _ok(yd.run())
    up = yd.session_state[state.UPLOAD]
    assert up.labels is not None and set(map(str, up.labels)) == {"tumour", "normal"}
    at = _ok(page_app("labelled.py", timeout=TIMEOUT,
                      **{state.DATASET: state.UPLOAD_NAME, state.UPLOAD: up, state.K: 4}).run())
    summary, first, *_ = [d.value for d in at.dataframe]
    assert set(first["feature"]) <= set(genes)
    assert {"mean normal", "mean tumour"} <= set(first.columns)
    # the planted genes separate the classes: the component that uses them has a large score F
    planted = [j for j, t in enumerate(d.value for d in at.dataframe[1:])
               if set(t["feature"]) & {"GENE000", "GENE001", "GENE002", "GENE003"}]
    assert planted and summary["score F"].iloc[planted[0]] > 10
    assert "tumours.csv" in " ".join(c.value for c in at.caption)
    # issue 41: the same components as Your data (one cached call), the variance written alike
    assert at.selectbox(key="fc_method").value == "auto (your data)"
    ss = yd.session_state  # Your data's components: its own call with the sidebar's settings
    X = compute.uploaded_dataset(up, ss[state.PREPROCESSING]).X
    res = compute.components(X, 3, 4, "auto", "deflation-remove", ss[state.D], ss[state.EPS], ss[state.SEED])
    for j, t in enumerate(d.value for d in at.dataframe[1:]):
        L = np.asarray(res.loadings[:, j])
        on_screen = dict(zip(t["feature"], t["loading"]))
        assert on_screen == pytest.approx({genes[i]: L[i] for i in np.flatnonzero(L)}, abs=5e-5)
    assert summary["variance"].tolist() == [f"{v:.4g}" for v in res.variance]


def test_heatmap_class_names_do_not_overlap_with_ten_classes():
    """Issue 41: with 10 classes the heatmap drew its class names on top of each other.  Names whose
    estimated extents (7.5 px a character at the assumed plot width) meet are on different rows."""
    rng = np.random.default_rng(0)
    sizes = [3, 30, 2, 2, 25, 4, 1, 2, 20, 3]  # small classes beside each other
    codes = np.repeat(np.arange(10), sizes)
    names = [f"class-{c}-long-name" for c in range(10)]
    fig = figs.class_heatmap(rng.standard_normal((4, codes.size)), ["a", "b", "c", "d"], codes, names)
    m = codes.size
    boxes = []
    for a in fig.layout.annotations:
        half = (7.5 * len(a.text) + 8) / 2 * m / figs.PLOT_PX
        boxes.append((a.yshift or 0, a.x - half, a.x + half))
    assert len(boxes) == 10
    for i, (r1, lo1, hi1) in enumerate(boxes):
        for r2, lo2, hi2 in boxes[i + 1:]:
            assert r1 != r2 or hi1 <= lo2 or hi2 <= lo1, (r1, lo1, hi1, r2, lo2, hi2)
    assert fig.layout.margin.t >= 100 + max(r for r, _, _ in boxes)  # room above for the rows
