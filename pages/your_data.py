"""Page 7 — upload your own data; every other page then works on it."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import streamlit as st

from nspca_core.methods import REMOVE
from ui import bounds_store, compute, downloads, layout, live, state, work
from ui import topics as text_upload
from ui.figures import analysis as figs
from ui.messages import for_user, refused_file, unlogged_hint
from ui.reading import TYPES, dropped_columns, orientation_choice, parse, read_options
from ui.sidebar import link_page, page_intro

page_intro(
    "Your data",
    "Upload a matrix (samples × features), a zip of same-size images, or raw text (a zip of .txt "
    "documents, a CSV with a column of texts: documents × words, analysed on the *Topics* page); check "
    "the preview, choose how to read it, and every other page works on it (pick *Your data* in the "
    "sidebar); download components, scores and figures.",
    "The file is read and checked here (CSV/TSV in any common encoding and number style, also "
    "gzipped; Excel; GEO SOFT and series matrices; AnnData .h5ad; 10x .h5; NumPy, MATLAB, zipped "
    "images); the analysis is the paper's (Asteris, Papailiopoulos & Dimakis, ICML 2014) with our "
    "certificate.",
)

USED_FILE = "yd_used_file"  # the digest of the file whose reading the other pages use


def _use_upload(upload: compute.Upload, file_digest: str | None = None) -> None:
    """Callback: store the upload and select it in the sidebar (runs before the script)."""
    st.session_state[state.UPLOAD] = upload
    st.session_state[state.DATASET] = compute.UPLOAD_DATASET
    if file_digest is not None:
        st.session_state[USED_FILE] = file_digest


def _forget_upload() -> None:
    st.session_state.pop(state.UPLOAD, None)
    if st.session_state.get(state.DATASET) == compute.UPLOAD_DATASET:
        st.session_state[state.DATASET] = state.DEFAULTS[state.DATASET]


def preview(up, ds) -> None:
    if text_upload.is_text_upload(up):  # a sparse text corpus: never densified here
        return text_upload.upload_preview(up)
    m, n = ds.X.shape
    st.subheader("Preview")
    cols = st.columns(4)
    cols[0].metric("samples", m)
    cols[1].metric("features", n)
    cols[2].metric("labels", "none" if up.labels is None else f"{np.unique(up.labels).size} classes")
    cols[3].metric("images", "no" if up.image_shape is None else f"{up.image_shape[0]}×{up.image_shape[1]}")
    for note in list(up.notes) + [nt for nt in ds.notes if nt not in up.notes]:
        st.caption(f"• {for_user(note)}")
    names = getattr(up, "sample_names", None)
    shown = min(10, m)
    index = (pd.Index([str(v) for v in names[:shown]], name="sample")  # the file's own names
             if names and names[:shown] != [str(i + 1) for i in range(shown)]
             else pd.RangeIndex(1, shown + 1, name="sample"))  # counted from 1
    head = pd.DataFrame(np.asarray(up.X)[:10, :30], columns=[str(f) for f in up.feature_names[:30]],
                        index=index)
    st.dataframe(head, hide_index=False)
    if n > 30:
        st.caption(f"First 10 samples and 30 of {n} features shown (raw values, before preprocessing).")
    if up.image_shape is not None:
        k_img = min(8, m)
        st.plotly_chart(figs.image_grid({"samples": [np.asarray(up.X)[i] for i in range(k_img)]},
                                        image_shape=up.image_shape, title="First images", cell_px=90,
                                        colorscale="gray"),
                        key="yd_images")
    raw = np.asarray(up.X)  # constant: every value equal (reductions only, no matrix-sized temporary)
    if state.settings().preprocessing != "log1p" and (hint := unlogged_hint(raw)) is not None:
        st.info(hint)
    const = int(np.count_nonzero(raw.max(axis=0) == raw.min(axis=0))) if m else 0
    if const:
        st.info(f"{const} feature(s) are constant: they carry no variance and no component will use them.")


def analysis(ds) -> None:
    if text_upload.is_sparse(ds.X) and text_upload.single_cell(ds.notes):  # cells x genes, kept sparse
        st.info("This is sparse single-cell data (cells × genes), kept sparse: its components, "
                "shown as lists of genes and weights, are on the *Topics* page (the genes play the "
                "words).")
        return link_page("pages/topics.py", "Open Topics", ":material/article:")
    if text_upload.is_sparse(ds.X):  # a text corpus: its components are on the Topics page
        st.info("This is a text corpus: its components, shown as topics (words and weights), are "
                "on the *Topics* page.")
        return link_page("pages/topics.py", "Open Topics", ":material/article:")
    s = state.settings()
    X = ds.X
    m, n = X.shape
    k = min(s.k, n)
    st.subheader("Components of your data")
    st.caption(f"Preprocessing {' → '.join(ds.preprocessing) or 'none'} (sidebar); k = {k}, d = {s.d}, "
               f"ε = {s.eps}, seed {s.seed}.")
    r_max = max(1, min(10, n // max(k, 1)))
    r = st.slider("Number of components (features of earlier components removed)", 1, max(2, r_max),
                  1, key="yd_r", disabled=r_max < 2,
                  help=f"Disjoint supports need r·k ≤ n = {n}; lower k in the sidebar for more.")
    r = min(r, r_max)
    with compute.progress(f"{r} component(s) at k = {k}") as cb:
        res = compute.components(X, r, k, "auto", REMOVE, s.d, s.eps, s.seed, _callback=cb)
    if res.shortfall:  # fewer components than asked: said with the reason and the remedy
        st.warning(res.summary)
    first = None
    try:
        with compute.progress("Certifying the first component") as cb:
            first = compute.certify(X, k, np.asarray(res.loadings[:, 0]), _callback=cb)
    except compute.Unavailable as exc:
        st.info(f"No certificate: {exc}")
    upper, kind = (first.upper_bound, first.kind) if first is not None else (np.nan, "")
    if first is not None:  # kept for every page and visit; a tighter bound proved elsewhere is used here
        dkey, store = live.data_key(ds), bounds_store.shared()
        bounds_store.offer_certificate(store, dkey, k, dict(
            upper=first.upper_bound, lower=first.lower, kind=first.kind, optimal=first.optimal,
            probabilistic=first.probabilistic, x=first.x), effort="auto")
        known = work.best_certificate(dkey, k, store=store)
        if known is not None and known["upper"] < upper:
            upper, kind = known["upper"], known["kind"]
    cols = st.columns(3)
    cols[0].metric("variance of component 1", f"{res.variance[0]:.4g}")
    if first is not None:
        cols[1].metric("certified fraction of the optimum", f"≥ {res.variance[0] / upper:.2%}",
                       help=f"upper bound {upper:.5g} ({kind})")
        if bounds_store.closed(float(res.variance[0]), upper):
            st.success(f"✓ Provably optimal at k = {k}: component 1 meets the upper bound on the optimum.")
    cols[2].metric(f"variance of the span of {r}", f"{res.cumulative_variance[-1]:.4g}")
    if first is not None:
        # a low fraction explained from this page's own certificate, with its refinement on offer (issue 27.8)
        layout.refine_outside_live(X, live.data_key(ds), k, np.asarray(res.loadings[:, 0]),
                                   float(res.variance[0]) / float(first.upper_bound),
                                   variance=float(res.variance[0]), key="yd")
    L = np.asarray(res.loadings)
    names = [f"component_{j + 1}" for j in range(L.shape[1])]
    if ds.image_shape is not None:
        rows = {"components": [L[:, j] for j in range(L.shape[1])]}
        fig = figs.image_grid(rows, image_shape=ds.image_shape,
                              titles={"components": [f"var {v:.3g}" for v in res.variance]},
                              title=f"Nonnegative {k}-sparse components as images")
    else:
        used = np.flatnonzero(np.any(L != 0, axis=1))[:80]
        fig = figs.loadings_heatmap(pd.DataFrame(L[used], index=[str(ds.feature_names[j]) for j in used],
                                                 columns=names),
                                    title=f"Loadings of the {r} component(s) on their support")
        fig.update_layout(xaxis_title="component")  # the shared heatmap's axis says "method"
    st.plotly_chart(fig, key="yd_components")
    c1, c2, c3 = st.columns(3)
    c1.download_button("Components (CSV)", downloads.components_csv(L, ds.feature_names, names),
                       file_name="components_long.csv", mime="text/csv", key="yd_dl_components",
                       on_click="ignore", help="The nonzero loadings, one row per component and feature "
                       "(component, rank, feature, index, loading), as the CLI's components_long.csv.")
    c1.download_button("Components, every feature (CSV)", downloads.components_wide_csv(L, ds.feature_names, names),
                       file_name="components.csv", mime="text/csv", key="yd_dl_components_wide",
                       on_click="ignore", help="One row per feature, one column per component, as the CLI's "
                       "components.csv.")
    upload = st.session_state.get(state.UPLOAD)
    sample_names = getattr(upload, "sample_names", None) if upload is not None else None
    if sample_names is not None and len(sample_names) != m:
        sample_names = None
    c2.download_button("Scores (CSV)", downloads.scores_csv(X, L, labels=ds.labels, sample_names=sample_names),
                       file_name="scores.csv",
                       mime="text/csv", key="yd_dl_scores", on_click="ignore",
                       help="Preprocessed data times the loadings, one row per sample.")
    c3.download_button("Figure (HTML)", lambda: downloads.figure_html(fig), file_name="components.html",
                       mime="text/html", key="yd_dl_fig", on_click="ignore")


def main() -> None:
    # no type filter on the widget: the browser refused other files with only a red icon; here the
    # page says in words what the file is and what to do (issue 41)
    file = st.file_uploader("Upload a data file", key="yd_file",
                            help="CSV/TSV/TXT (header, delimiter and orientation detected), NPY/NPZ, "
                                 "MAT, a GEO series matrix (.txt/.txt.gz), AnnData .h5ad, a ZIP of a "
                                 "10x folder (matrix.mtx, features.tsv, barcodes.tsv) or of "
                                 "PNG/JPEG/PGM/BMP images of one size (one image per sample).")
    current = st.session_state.get(state.UPLOAD)
    if file is not None and (why := refused_file(file.name, TYPES)) is not None:
        st.error(why)
        file = None
    if file is not None:
        data = file.getvalue()
        opts = read_options(file.name, data)
        try:
            loaded = parse(data, file.name, opts)
        except ValueError as exc:  # DataFormatError / InputError: say what is wrong, stay up
            st.error(f"Could not read **{file.name}**: {for_user(exc, filename=file.name)}")
            loaded = None
        if loaded is not None:
            file_digest = hashlib.sha1(data).hexdigest()
            upload = compute.make_upload(loaded, options=opts, file_digest=file_digest)
            if current is not None and current.token != upload.token \
                    and st.session_state.get(USED_FILE) == file_digest \
                    and st.session_state.get(state.DATASET) == compute.UPLOAD_DATASET:
                # the file in use, read with other options (a label column named): every page uses the
                # new reading at once — it showed in the preview only, until "Analyse" was pressed
                # again, while the sidebar already named the file (issue 41)
                _use_upload(upload, file_digest)
                current = upload
                st.info(f"The reading options of **{file.name}** changed: every page now uses this reading.")
            if current is None or getattr(current, "token", None) != upload.token:
                st.button("Analyse this data on every page", type="primary", on_click=_use_upload,
                          args=(upload, file_digest), key="yd_use")
                rows, cols = text_upload.row_col_words(loaded.X, loaded.notes)
                if (rows, cols) == ("documents", "words"):
                    st.success(f"Read **{file.name}** as a text corpus: {loaded.X.shape[0]:,} documents × "
                               f"{loaded.X.shape[1]:,} words (word counts, kept sparse). Press the button "
                               "to select it, then open the *Topics* page (it appears there under "
                               "*Corpus*): its components are shown as topics, words and weights.")
                else:
                    st.success(f"Read **{file.name}**: {loaded.X.shape[0]} {rows} × {loaded.X.shape[1]} "
                               f"{cols}. Press the button to select it in the sidebar.")
                dropped_columns(loaded)
                orientation_choice(loaded, opts)
                # a preview of what would be used (preprocessed like the registry datasets)
                preview(upload, compute.uploaded_dataset(upload, state.settings().preprocessing))
                return
    if current is None:
        st.info("No data uploaded yet. Until then the other pages use the dataset of the sidebar.")
        return
    rows, cols = text_upload.row_col_words(current.X, current.notes)
    st.success(f"Using **{current.source_name}** ({current.X.shape[0]:,} {rows} × "
               f"{current.X.shape[1]:,} {cols})"
               + (" — selected in the sidebar." if state.settings().dataset == compute.UPLOAD_DATASET
                  else " — choose *Your data* in the sidebar to analyse it on every page."))
    if state.settings().dataset != compute.UPLOAD_DATASET:
        st.button("Select it in the sidebar", on_click=_use_upload, args=(current,), key="yd_select")
    st.button("Forget the uploaded data", on_click=_forget_upload, key="yd_forget")
    ds = compute.uploaded_dataset(current, state.settings().preprocessing)
    preview(current, ds)
    analysis(ds)


compute.guard(main)
