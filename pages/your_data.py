"""Page 7 — upload your own data; every other page then works on it."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import streamlit as st

from ui import compute, downloads, state
from ui.figures import analysis as figs
from ui.sidebar import page_intro

page_intro(
    "Your data",
    "upload a matrix (samples × features) or a zip of same-size images; check the preview, choose "
    "how to read it, and every other page works on it (pick *Your data* in the sidebar); download "
    "components, scores and figures.",
    "Formats and checks of the foundation issue (nspca_core.io.load_file); the analysis is the "
    "paper's (Asteris, Papailiopoulos & Dimakis, ICML 2014) with our certificate.",
)

TYPES = ["csv", "tsv", "tab", "txt", "npy", "npz", "mat", "zip", "png", "jpg", "jpeg", "pgm", "bmp"]
NAN_POLICIES = {
    "error": "stop and tell me (default)",
    "drop-rows": "drop samples with missing values",
    "drop-columns": "drop features with missing values",
    "impute-mean": "replace by the feature's mean",
}


def _use_upload(upload: compute.Upload) -> None:
    """Callback: store the upload and select it in the sidebar (runs before the script)."""
    st.session_state[state.UPLOAD] = upload
    st.session_state[state.DATASET] = compute.UPLOAD_DATASET


def _forget_upload() -> None:
    st.session_state.pop(state.UPLOAD, None)
    if st.session_state.get(state.DATASET) == compute.UPLOAD_DATASET:
        st.session_state[state.DATASET] = state.DEFAULTS[state.DATASET]


def read_options(filename: str, data: bytes) -> dict:
    """Widgets for the choices that apply to this kind of file."""
    lower = filename.lower()
    opts: dict = {"variable": None, "nan_policy": "error", "resize": None, "label_column": None,
                  "header": None}
    c1, c2, c3 = st.columns(3)
    if lower.endswith((".npz", ".mat")):
        variables = compute.file_variables(data, filename)
        names = [v["name"] for v in variables]
        if len(names) > 1:
            opts["variable"] = c1.selectbox(
                "Array / variable to analyse", names, key="yd_variable",
                format_func=lambda nm: f"{nm} {next(tuple(v['shape']) for v in variables if v['name'] == nm)}")
    if lower.endswith((".csv", ".tsv", ".tab", ".txt")):
        header = c1.selectbox("Header line", ["detect", "yes", "no"], key="yd_header")
        opts["header"] = None if header == "detect" else header == "yes"
        label = c3.text_input("Label column (name or 0-based index; empty = automatic)", "",
                              key="yd_label",
                              help="By default the first text column with repeated values becomes "
                                   "the labels; a numeric column named here is removed from the features.")
        if label.strip():
            opts["label_column"] = int(label) if label.strip().isdigit() else label.strip()
    if lower.endswith(".zip"):
        size = c1.text_input("Resize every image to height×width (empty = keep; needed for mixed "
                             "sizes)", "", key="yd_resize")
        if size.strip():
            try:
                h, w = (int(t) for t in size.lower().replace("x", "×").split("×"))
                opts["resize"] = (h, w)
            except ValueError:
                st.error(f"`resize` must look like 32×32 (height×width); got {size!r}")
    if not lower.endswith(tuple("." + t for t in ("zip", "png", "jpg", "jpeg", "pgm", "bmp"))):
        opts["nan_policy"] = c2.selectbox("Missing values (NaN/inf)", list(NAN_POLICIES),
                                          format_func=NAN_POLICIES.get, key="yd_nan")
    return opts


def preview(up, ds) -> None:
    m, n = ds.X.shape
    st.subheader("Preview")
    cols = st.columns(4)
    cols[0].metric("samples", m)
    cols[1].metric("features", n)
    cols[2].metric("labels", "none" if up.labels is None else f"{np.unique(up.labels).size} classes")
    cols[3].metric("images", "no" if up.image_shape is None else f"{up.image_shape[0]}×{up.image_shape[1]}")
    for note in list(up.notes) + [nt for nt in ds.notes if nt not in up.notes]:
        st.caption(f"• {note}")
    head = pd.DataFrame(np.asarray(up.X)[:10, :30], columns=[str(f) for f in up.feature_names[:30]])
    st.dataframe(head, hide_index=False)
    if n > 30:
        st.caption(f"First 10 samples and 30 of {n} features shown (raw values, before preprocessing).")
    if up.image_shape is not None:
        k_img = min(8, m)
        st.plotly_chart(figs.image_grid({"samples": [np.asarray(up.X)[i] for i in range(k_img)]},
                                        image_shape=up.image_shape, title="First images", cell_px=90,
                                        colorscale="gray"),
                        key="yd_images")
    const = int(np.sum(np.asarray(up.X).std(axis=0) == 0))
    if const:
        st.info(f"{const} feature(s) are constant: they carry no variance and no component will use them.")


def analysis(ds) -> None:
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
        res = compute.components(X, r, k, "auto", "deflation-remove", s.d, s.eps, s.seed, _callback=cb)
    first = None
    try:
        with compute.progress("Certifying the first component") as cb:
            first = compute.certify(X, k, np.asarray(res.loadings[:, 0]), _callback=cb)
    except compute.Unavailable as exc:
        st.info(f"No certificate: {exc}")
    cols = st.columns(3)
    cols[0].metric("variance of component 1", f"{res.variance[0]:.4g}")
    if first is not None:
        cols[1].metric("certified fraction of the optimum", f"≥ {res.variance[0] / first.upper_bound:.2%}",
                       help=f"upper bound {first.upper_bound:.5g} ({first.kind})")
    cols[2].metric(f"variance of the span of {r}", f"{res.cumulative_variance[-1]:.4g}")
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
    st.plotly_chart(fig, key="yd_components")
    c1, c2, c3 = st.columns(3)
    c1.download_button("Components (CSV)", downloads.components_csv(L, ds.feature_names, names),
                       file_name="components.csv", mime="text/csv", key="yd_dl_components",
                       on_click="ignore")
    c2.download_button("Scores (CSV)", downloads.scores_csv(X, L), file_name="scores.csv",
                       mime="text/csv", key="yd_dl_scores", on_click="ignore",
                       help="Preprocessed data times the loadings, one row per sample.")
    c3.download_button("Figure (HTML)", lambda: downloads.figure_html(fig), file_name="components.html",
                       mime="text/html", key="yd_dl_fig", on_click="ignore")


def main() -> None:
    file = st.file_uploader("Upload a data file", type=TYPES, key="yd_file",
                            help="CSV/TSV/TXT (header and delimiter detected), NPY/NPZ, MAT, or a ZIP "
                                 "of PNG/JPEG/PGM/BMP images of one size (one image per sample).")
    current = st.session_state.get(state.UPLOAD)
    if file is not None:
        data = file.getvalue()
        opts = read_options(file.name, data)
        try:
            loaded = compute.parse_upload(data, file.name, **opts)
        except ValueError as exc:  # DataFormatError / InputError: say what is wrong, stay up
            st.error(f"Could not read **{file.name}**: {exc}")
            loaded = None
        if loaded is not None:
            upload = compute.make_upload(loaded, options=opts,
                                         file_digest=hashlib.sha1(data).hexdigest())
            if current is None or getattr(current, "token", None) != upload.token:
                st.button("Analyse this data on every page", type="primary", on_click=_use_upload,
                          args=(upload,), key="yd_use")
                st.success(f"Read **{file.name}**: {loaded.X.shape[0]} samples × {loaded.X.shape[1]} "
                           "features. Press the button to select it in the sidebar.")
                # a preview of what would be used (preprocessed like the registry datasets)
                preview(upload, compute.uploaded_dataset(upload, state.settings().preprocessing))
                return
    if current is None:
        st.info("No data uploaded yet. Until then the other pages use the dataset of the sidebar.")
        return
    st.success(f"Using **{current.source_name}** ({np.asarray(current.X).shape[0]} × "
               f"{np.asarray(current.X).shape[1]})"
               + (" — selected in the sidebar." if state.settings().dataset == compute.UPLOAD_DATASET
                  else " — choose *Your data* in the sidebar to analyse it on every page."))
    if state.settings().dataset != compute.UPLOAD_DATASET:
        st.button("Select it in the sidebar", on_click=_use_upload, args=(current,), key="yd_select")
    st.button("Forget the uploaded data", on_click=_forget_upload, key="yd_forget")
    ds = compute.uploaded_dataset(current, state.settings().preprocessing)
    preview(current, ds)
    analysis(ds)


compute.guard(main)
