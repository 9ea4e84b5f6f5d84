"""Features by class — the analyst's view of labelled data.

For a dataset with labels (MLL, LRS, digits, an upload with a class column):
each component's features with loading, mean per class and a separation score,
the component scores by class, and the selected features × samples ordered by
class; every table and figure can be downloaded.  The components are the fast
answer (no certificate), so the page draws within seconds.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from nspca_core import methods as registry
from ui import compute, downloads, state
from ui import labelled as lab
from ui.figures import analysis as afigs
from ui.figures import labelled as figs
from ui.sidebar import link_page, page_intro

page_intro(
    "Features by class",
    "Which features each nonnegative sparse component selects, with their weights, and how they "
    "separate the classes: a sortable table per component (loading, mean per class, separation "
    "score), the component scores by class, and a heatmap of the selected features × samples "
    "ordered by class. Downloads below.",
    "Components as in Asteris, Papailiopoulos & Dimakis (ICML 2014) — the fast answer, features "
    "of earlier components removed; the certificate is on *Variance vs k*. Class-wise reading of "
    "the selected genes as in Sigg & Buhmann (ICML 2008, §5, leukemia).",
)

# The registry's fast single-component methods, its preselected ones first (the first is the
# default): the paper's ε-net answers MLL's 3 components in ~0.4 s where "auto" (many starts,
# polished) takes ~3 s for ≤ 1 % more variance; the exact spannogram is on the other pages.
METHODS = tuple(sorted(registry.with_cost("fast", kinds=("single",)),
                       key=lambda mth: not registry.spec(mth).default))
#: an upload's components as *Your data* computes them (the same call, the same cache): the two pages
#: showed different loadings for one component (issue 41: 0.4709 vs 0.4657, ε-net here, auto there)
SAME_AS_YOUR_DATA = "auto (your data)"
MAX_CLASS_COLUMNS = 12  # class-mean columns shown on screen (all are in the CSV)
VALUES = {"file": "the values in the file, before preprocessing",
          "analysed": "the analysed values, after the sidebar's preprocessing"}


def no_labels(ds) -> None:
    st.info(f"**{ds.info.title}** has no class labels. This page needs labels: choose *MLL leukemia* "
            "(ALL/AML/MLL), *IRAS LRS spectra* (their classes) or *digits* in the sidebar, or upload "
            "a file with a class column (a text column with repeated values, or name it under "
            "*Label column*), or a file and its sample sheet (one row per sample with its class), "
            "on the *Your data* page.")
    link_page("pages/your_data.py", "Upload data with a class column", ":material/upload_file:")


def method_label(method: str) -> str:
    if method == SAME_AS_YOUR_DATA:
        return "auto — the components shown on Your data"
    return afigs.method_label(method)


def controls(n: int, k: int, upload: bool = False) -> tuple[int, str, str]:
    offered = [m for m in METHODS if m in compute.available_methods()] or ["auto"]
    if upload:  # an upload: first the components its own page shows
        offered = [SAME_AS_YOUR_DATA, *offered]
    r_max = max(1, min(10, n // max(k, 1)))
    c1, c2, c3 = st.columns([2, 2, 3])
    r = c1.slider("Components", 1, max(2, r_max), min(3, r_max), key="fc_r", disabled=r_max < 2,
                  help=f"Each uses at most k = {k} features (sidebar), none used by an earlier "
                       f"one: r·k ≤ n = {n}.")
    method = c2.selectbox("Algorithm", offered, format_func=method_label, key="fc_method",
                          help="Fast methods only; no certificate is computed on this page.")
    values = c3.radio("Class means, separation and heatmap of", list(VALUES), format_func=VALUES.get,
                      key="fc_values", help="F is the same for both unless the preprocessing is "
                                            "log(1+x): it does not change when a feature is shifted "
                                            "or scaled.")
    return min(r, r_max), method, values


def shown_columns(table: pd.DataFrame, classes: list, counts: np.ndarray) -> list[str]:
    """Table columns on screen: all class means up to MAX_CLASS_COLUMNS, else the largest classes."""
    keep = classes
    if len(classes) > MAX_CLASS_COLUMNS:
        big = np.argsort(-counts, kind="stable")[:MAX_CLASS_COLUMNS]
        keep = [classes[g] for g in sorted(big)]
    return ["feature", "loading", *[f"mean {c}" for c in keep], "F", "p-value", "highest mean in"]


def column_config(table: pd.DataFrame) -> dict:
    cfg = {"feature": st.column_config.TextColumn("feature", help="Name from the file"),
           "loading": st.column_config.NumberColumn("loading", format="%.4f",
                                                    help="Weight in the component (≥ 0, unit norm)"),
           "F": st.column_config.NumberColumn("F", format="%.4g",
                                              help="One-way ANOVA F across the classes: between-class "
                                                   "over within-class mean square (larger = better "
                                                   "separated)"),
           "p-value": st.column_config.NumberColumn("p-value", format="%.2e",
                                                    help="Of F under 'no difference between classes' "
                                                         "(not corrected for multiple testing)")}
    for c in table.columns:
        if c.startswith("mean "):
            cfg[c] = st.column_config.NumberColumn(c, format="%.4g")
    return cfg


def summary(res, an) -> pd.DataFrame:
    """One row per component: variance, nonzeros, score F, the class with the highest mean score."""
    means = lab.class_means(an.scores, an.codes, len(an.classes))
    top = np.argmax(np.where(np.isnan(means), -np.inf, means), axis=0)
    return pd.DataFrame({
        "component": np.arange(1, an.scores.shape[1] + 1),
        # written as Your data writes it ("6.031e+09"; the table's "%.4g" wrote 6031000000)
        "variance": [f"{v:.4g}" for v in np.asarray(res.variance, float)],
        "features": [len(t) for t in an.tables],
        "score F": an.score_F,
        "score p-value": an.score_p,
        "highest scores in": [an.classes[g] for g in top],
        "top features": [", ".join(t["feature"].head(5)) for t in an.tables],
    })


def figure_downloads(fig, name: str, key: str) -> None:
    """HTML and JSON always; PNG and SVG through Plotly's export when kaleido + Chromium are here."""
    cols = st.columns(4)
    cols[0].download_button("HTML", lambda: downloads.figure_html(fig), file_name=f"{name}.html",
                            mime="text/html", key=f"{key}_html", on_click="ignore")
    cols[1].download_button("JSON", lambda: figs.to_json(fig), file_name=f"{name}.json",
                            mime="application/json", key=f"{key}_json", on_click="ignore")
    if figs.static_export_available():
        cols[2].download_button("PNG", lambda: figs.to_static(fig, "png"), file_name=f"{name}.png",
                                mime="image/png", key=f"{key}_png", on_click="ignore")
        cols[3].download_button("SVG", lambda: figs.to_static(fig, "svg"), file_name=f"{name}.svg",
                                mime="image/svg+xml", key=f"{key}_svg", on_click="ignore")
    else:
        cols[2].caption("PNG/SVG files need the kaleido package and Chromium on the server; the "
                        "camera icon above the figure saves a PNG from your browser.")


def main() -> None:
    s = state.settings()
    ds = compute.current_dataset()
    if ds.labels is None:
        no_labels(ds)
        return
    X = ds.X
    m, n = X.shape
    k = min(s.k, n)
    r, method, which = controls(n, k, upload=s.dataset == compute.UPLOAD_DATASET)
    values = ds.X_raw if which == "file" and ds.X_raw is not None else X
    with compute.progress(f"{r} component(s) at k = {k}") as cb:
        if method == SAME_AS_YOUR_DATA:  # Your data's own call: the same cached components
            res = compute.components(X, r, k, "auto", registry.REMOVE, s.d, s.eps, s.seed, _callback=cb)
        else:
            res = lab.fast_components(X, r, k, method, s.d, s.eps, s.seed, _callback=cb)
    names = [str(f) for f in ds.feature_names]
    an = lab.analyse(X, values, ds.labels, names, res.loadings)
    # an upload's own sample names (GSM ids, barcodes, ...) in hovers and downloads
    upload = st.session_state.get(state.UPLOAD) if s.dataset == compute.UPLOAD_DATASET else None
    sample_names = getattr(upload, "sample_names", None)
    if sample_names is not None and len(sample_names) != m:
        sample_names = None
    G = len(an.classes)
    counts = ", ".join(f"{c} ({int(nc)})" for c, nc in zip(an.classes[:20], an.counts[:20]))
    st.caption(f"{ds.info.title}: {m} samples × {n} features in {G} classes — {counts}"
               f"{'…' if G > 20 else ''}. {method_label(method)}, k = {k}, d = {s.d}, "
               f"ε = {s.eps}, seed {s.seed}; preprocessing {' → '.join(ds.preprocessing) or 'none'}. "
               f"Fast answer, {res.seconds:.1f} s, no certificate.")
    if res.n_components < r:
        st.info(f"Only {res.n_components} component(s): the features ran out.")

    st.subheader("Components at a glance")
    st.dataframe(summary(res, an), hide_index=True, column_config={
        "variance": st.column_config.TextColumn("variance", help="x'Ax of the component, as on Your data"),
        "score F": st.column_config.NumberColumn(format="%.4g", help="ANOVA F of the scores by class"),
        "score p-value": st.column_config.NumberColumn(format="%.2e")})
    comp_names = [f"component {j + 1}" for j in range(an.scores.shape[1])]
    fig_scores = figs.scores_by_class(an.scores, an.codes, an.classes, component_names=comp_names,
                                      score_F=an.score_F, ncols=1 if G > 12 else 3,
                                      title="Component scores by class (box per class, every sample "
                                            "a dot)")
    st.plotly_chart(fig_scores, key="fc_scores")

    st.subheader("Features of each component")
    st.caption("Sort by clicking a column header. F: one-way ANOVA F of the feature across the "
               f"classes, on {VALUES[which]}; larger F = class means further apart relative to the "
               "spread inside classes."
               + (f" The {MAX_CLASS_COLUMNS} largest of the {G} classes are shown as columns; the "
                  "CSV has all." if G > MAX_CLASS_COLUMNS else ""))
    tabs = st.tabs(comp_names)
    for j, tab in enumerate(tabs):
        table = an.tables[j]
        with tab:
            cols = shown_columns(table, an.classes, an.counts)
            st.dataframe(table[cols], hide_index=True, column_config=column_config(table),
                         key=f"fc_table_{j}")

    st.subheader("Selected features × samples, by class")
    sel_names = [names[f] for f in an.features]
    fig_heat = figs.class_heatmap(an.Z, sel_names, an.codes[an.order], an.classes,
                                  feature_component=an.feature_component,
                                  sample_ids=(an.order + 1 if sample_names is None
                                              else np.asarray(sample_names)[an.order]),
                                  title=f"The {len(an.features)} selected features (rows, by "
                                        "component) × samples (columns, by class), standardized")
    st.plotly_chart(fig_heat, key="fc_heatmap")

    st.subheader("Downloads")
    c1, c2, c3 = st.columns(3)
    c1.download_button("Feature tables (CSV)", lab.tables_csv(an.tables),
                       file_name=f"features_by_class_{ds.name}.csv", mime="text/csv",
                       key="fc_dl_tables", on_click="ignore",
                       help="Every component's features, all classes' means, F and p.")
    c2.download_button("Scores with classes (CSV)",
                       lab.scores_csv(an.scores, an.classes, an.codes, sample_names=sample_names),
                       file_name=f"scores_by_class_{ds.name}.csv", mime="text/csv",
                       key="fc_dl_scores", on_click="ignore")
    c3.download_button("Heatmap matrix (CSV)",
                       lab.heatmap_csv(an.Z, names, an.features, an.order, an.classes, an.codes),
                       file_name=f"heatmap_by_class_{ds.name}.csv", mime="text/csv",
                       key="fc_dl_heat", on_click="ignore")
    st.markdown("**Scores figure**")
    figure_downloads(fig_scores, f"scores_by_class_{ds.name}", "fc_fig_scores")
    st.markdown("**Heatmap figure**")
    figure_downloads(fig_heat, f"heatmap_by_class_{ds.name}", "fc_fig_heat")


compute.guard(main)
