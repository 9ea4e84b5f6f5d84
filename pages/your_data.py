"""Page 7 — upload your own data; every other page then works on it."""

from __future__ import annotations

import hashlib
import re

import numpy as np
import pandas as pd
import streamlit as st

from nspca_core.methods import REMOVE
from ui import bounds_store, compute, downloads, layout, live, state, work
from ui import topics as text_upload
from ui.figures import analysis as figs
from ui.messages import FILE_TYPES, NAN_CHOICES, refused_file, unlogged_hint
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

TYPES = FILE_TYPES  # every format nspca_core.load_file reads (its registry, nspca_core.io.formats)
SHEET_TYPES = ["csv", "tsv", "tab", "txt", "xlsx", "xls"]  # a sample sheet
ORIENTATIONS = {
    "auto": "detect (default)",
    "rows-are-samples": "samples (one sample per row)",
    "rows-are-features": "features, e.g. genes (samples as columns)",
}
ORIENTATION_LABEL = "Rows of the file are"
SHEET_LABEL = "Sample sheet (optional: CSV/TSV, one row per sample, e.g. its class)"
SHEET_ID_LABEL = "Sheet column of sample ids"
SHEET_LABELS_LABEL = "Sheet column giving the classes"
AUTO = "(detected)"
NAN_POLICIES = {name: label + (" (default)" if i == 0 else "") for i, (name, label) in enumerate(NAN_CHOICES.items())}
HEADERS = {None: "detect (default)", True: "yes: column names", False: "no: the first line is data"}
NAN_LABEL = "Missing values (NaN/inf)"
RESIZE_LABEL = "Resize every image to height×width (empty = keep; needed for mixed sizes)"
VARIABLE_LABEL = "Array / variable to analyse"
HEADER_LABEL = "Header line"
LABEL_LABEL = "Label column (name, or position counting from 1; empty = automatic)"


def on_screen(message: str, filename: str | None = None) -> str:
    """A message of the reader phrased with the controls of this page.

    ``nspca_core.io`` names its API arguments (``nan_policy='drop-rows'``,
    ``resize=(height, width)``, ``variable=...``, ``max_bytes``,
    ``label_column``, ``header``); the user sees the controls above, so those
    are named instead.  A leading ``"<file name>: "`` is dropped: the page
    already says which file.
    """
    if filename and message.startswith(f"{filename}: "):
        message = message[len(filename) + 2:]
    message = message.replace(
        "choose nan_policy='drop-rows', 'drop-columns' or 'impute-mean' to handle them",
        f'choose what to do with them under "{NAN_LABEL}" above (drop samples, drop features '
        "or replace by the mean)")
    message = message.replace("and choose a nan_policy",
                              f'and choose what to do with them under "{NAN_LABEL}"')
    message = re.sub(r"nan_policy='([a-z-]+)'",
                     lambda m: f'"{NAN_LABEL}: {NAN_POLICIES.get(m.group(1), m.group(1))}"', message)
    # policy values left quoted (e.g. after ui.messages reworded only the first of a list)
    message = re.sub(r"'(drop-rows|drop-columns|impute-mean)'",
                     lambda m: f"“{NAN_POLICIES[m.group(1)]}”", message)
    message = message.replace("pass resize=(height, width) to resize them",
                              f'fill in "{RESIZE_LABEL.split(" (")[0]}" above to resize them')
    message = re.sub(r"resize=\((\d+), (\d+)\) asked", r"resized to \1×\2 as asked", message)
    message = message.replace("choose one with variable=...",
                              f'choose one under "{VARIABLE_LABEL}" above')
    message = re.sub(r"; raise max_bytes[^;]*", "", message)
    message = re.sub(r"the size cap max_bytes=([\d,]+)( bytes)?", r"the upload limit of \1 bytes",
                     message)
    message = re.sub(r"max_bytes=([\d,]+)( bytes)?", r"the upload limit of \1 bytes", message)
    message = re.sub(r"(?:`label_column`|\*Label column\*) must be one of the column names (.*) "
                     r"or an index in \[0, (\d+)\]",
                     lambda m: f'"Label column" must be one of the column names {m.group(1)} or a '
                               f"position from 1 to {int(m.group(2)) + 1}", message)
    message = re.sub(r"choose header '(yes|no)'", rf'choose "\1" under "{HEADER_LABEL}"', message)
    message = re.sub(r"choose orientation '([a-z-]+)'",
                     lambda m: f'choose “{ORIENTATIONS.get(m.group(1), m.group(1))}” under '
                               f'"{ORIENTATION_LABEL}" (or press "Read the other way")', message)
    message = message.replace("`sample_id_column`", f'"{SHEET_ID_LABEL}"')
    message = message.replace("`sample_info`", f'"{SHEET_LABEL.split(" (")[0]}"')
    return message


def zip_holds_images(data: bytes) -> bool:
    """Whether a .zip upload holds image files (the only kind the resize field applies to).

    Reads the archive's directory only (no member is decompressed); an unreadable archive holds
    none (the reader then says what is wrong with it)."""
    import io
    import zipfile
    from pathlib import PurePosixPath

    from nspca_core.io.source import IMAGE_EXTENSIONS

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            names = [i.filename.replace("\\", "/") for i in zf.infolist() if not i.is_dir()]
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return False
    return any(PurePosixPath(fn).name.lower().endswith(IMAGE_EXTENSIONS) for fn in names
               if not fn.startswith("__MACOSX/") and not PurePosixPath(fn).name.startswith("."))


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


def read_options(filename: str, data: bytes) -> dict:
    """Widgets for the choices that apply to this kind of file."""
    lower = filename.lower()
    opts: dict = {"variable": None, "nan_policy": "error", "resize": None, "label_column": None,
                  "header": None}
    c1, c2, c3 = st.columns(3)
    opts["vocab"] = text_upload.vocab_uploader(filename, st)  # text corpora (ui/topics.py)
    if lower.endswith((".npz", ".mat")):
        variables = compute.file_variables(data, filename)
        names = [v["name"] for v in variables]
        if len(names) > 1:
            opts["variable"] = c1.selectbox(
                VARIABLE_LABEL, names, key="yd_variable",
                format_func=lambda nm: f"{nm} {next(tuple(v['shape']) for v in variables if v['name'] == nm)}")
    if lower.endswith((".csv", ".tsv", ".tab", ".txt")):
        opts["header"] = c1.selectbox(
            HEADER_LABEL, list(HEADERS), format_func=HEADERS.get, key="yd_header",
            help="Detected by default: a first line of text above numbers, or of numbers written "
                 "differently from the rest (years such as 2019, 2020 over decimal values), is read "
                 "as column names. The choice made is listed under the preview.")
        label = c3.text_input(LABEL_LABEL, "", key="yd_label",
                              help="By default the first text column with repeated values becomes "
                                   "the labels; a numeric column named here is removed from the features.")
        if label.strip():
            opts["label_column"] = label.strip()
    elif lower.endswith((".txt.gz", ".h5ad")):  # GEO series matrix / AnnData: a metadata column
        # AnnData: the only choice here, so in the first column (it stood alone in the third, issue 41)
        where = c1 if lower.endswith(".h5ad") else c3
        label = where.text_input(LABEL_LABEL.split(" (")[0] + " (a sample characteristic, e.g. disease "
                                 "state, or an obs column; empty = automatic)", "", key="yd_label_meta")
        if label.strip():
            opts["label_column"] = label.strip()
    if lower.endswith((".csv", ".tsv", ".tab", ".txt", ".npy", ".npz", ".mat")) \
            and not lower.endswith("series_matrix.txt"):
        opts["orientation"] = c2.selectbox(
            ORIENTATION_LABEL, list(ORIENTATIONS), format_func=ORIENTATIONS.get, key="yd_orientation",
            help="Detected by default: a first column of probe/gene ids (1007_s_at, ENSG..., gene "
                 "symbols), a header of sample names (GSM...) and far more rows than columns mean "
                 "one gene per row; the file is then read transposed, samples × genes. The "
                 "decision and why are listed under the preview.")
    if not lower.endswith(tuple("." + t for t in ("zip", "png", "jpg", "jpeg", "pgm", "bmp", "mtx"))):
        sheet = st.file_uploader(SHEET_LABEL, key="yd_sheet",
                                 help="Matched to the samples by its id column (the column holding the "
                                      "most sample names); its columns join the metadata and one of "
                                      "them gives the classes of the labelled pages.")
        if sheet is not None and (why := refused_file(sheet.name, SHEET_TYPES)) is not None:
            st.error(why)
            sheet = None
        if sheet is not None:
            opts["sample_info"] = sheet.getvalue()
            try:
                from nspca_core.io.samples import sheet_columns
                columns = sheet_columns(opts["sample_info"])
            except ValueError as exc:
                st.error(f"Could not read the sample sheet **{sheet.name}**: {on_screen(str(exc))}")
                columns = []
            s1, s2 = st.columns(2)
            id_col = s1.selectbox(SHEET_ID_LABEL, [AUTO] + columns, key="yd_sheet_id")
            lab_col = s2.selectbox(SHEET_LABELS_LABEL, [AUTO] + columns, key="yd_sheet_label",
                                   help="Detected: the first column with repeated values.")
            opts["sample_id_column"] = None if id_col == AUTO else id_col
            if lab_col != AUTO:
                opts["label_column"] = lab_col
    if lower.endswith(".zip") and zip_holds_images(data):  # not for .txt documents or a 10x folder
        size = c1.text_input(RESIZE_LABEL, "", key="yd_resize")
        if size.strip():
            try:
                h, w = (int(t) for t in size.lower().replace("x", "×").split("×"))
                if h < 1 or w < 1:
                    raise ValueError
                opts["resize"] = (h, w)
            except ValueError:
                st.error(f'"{RESIZE_LABEL.split(" (")[0]}" must look like 32×32 (height×width, '
                         f"positive whole numbers); got {size!r}")
    # AnnData's counts have no missing values to choose about (a choice that did nothing, issue 41)
    if not lower.endswith(tuple("." + t for t in ("zip", "png", "jpg", "jpeg", "pgm", "bmp", "h5ad"))):
        opts["nan_policy"] = c2.selectbox(NAN_LABEL, list(NAN_POLICIES),
                                          format_func=NAN_POLICIES.get, key="yd_nan")
    return opts


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
        st.caption(f"• {on_screen(note)}")
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


def low_certificate(ds, X, k: int, x: np.ndarray, variance: float, fraction: float) -> None:
    """A low certified fraction explained, with the full certificate of ``x`` on offer
    (``ui.layout.refine_certificate``; issue 27 item 8); nothing when the fraction is not low.

    While the full certificate runs, its progress redraws itself every second; the click that
    starts it reruns the page once so that it does."""
    dkey = live.data_key(ds)

    def draw() -> bool:
        return layout.refine_certificate(X, dkey, k, x, fraction, variance=variance, key="yd")

    if layout.refine_running(X, dkey, k, x, key="yd"):
        live.live(draw, active=True)
    elif draw():  # just asked: draw its progress live from the next run on
        st.rerun()


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
        low_certificate(ds, X, k, np.asarray(res.loadings[:, 0]), float(res.variance[0]),  # this page's own
                        float(res.variance[0]) / float(first.upper_bound))  # certificate, and its refinement
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


def parse(data: bytes, filename: str, opts: dict):
    """The parsed upload; a label column typed as a number is a position counted from 1
    (unless a column has that name)."""
    label = opts.get("label_column")
    try:
        return compute.parse_upload(data, filename, **opts)
    except ValueError as exc:
        about_label = "label_column" in str(exc) or "Label column" in str(exc)
        if not (isinstance(label, str) and label.isdigit() and about_label):
            raise
    position = int(label)
    if position < 1:
        raise ValueError(f'"Label column": positions count from 1; got {label}')
    return compute.parse_upload(data, filename, **{**opts, "label_column": position - 1})


def dropped_columns(loaded) -> None:
    """The input columns that are not features, always shown with the reason."""
    dropped = list(getattr(loaded, "dropped_columns", []) or [])
    if dropped:
        shown = "; ".join(f"**{d['column']}** ({on_screen(d['reason'])})" for d in dropped[:20])
        more = f"; and {len(dropped) - 20} more" if len(dropped) > 20 else ""
        st.warning(f"{len(dropped)} column(s) not used as features: {shown}{more}.")


def _read_other_way(other: str) -> None:
    st.session_state["yd_orientation"] = other


def orientation_choice(loaded, opts: dict) -> None:
    """What the reader decided about the file's orientation, and a one-click other reading."""
    decided = (getattr(loaded, "extra", None) or {}).get("orientation")
    if decided is None or "orientation" not in opts:
        return
    other = "rows-are-samples" if decided == "rows-are-features" else "rows-are-features"
    note = next((nt for nt in loaded.notes if nt.startswith("orientation:")), "")
    text = ("Each **row** of the file was read as a **feature** (e.g. a gene) and each column as a "
            "sample: the table is transposed" if decided == "rows-are-features"
            else "Each **row** of the file was read as a **sample**")
    if "(auto: " in note:
        why = note.split("(auto: ", 1)[1].rsplit("); ", 1)[0]  # the reasons, up to "); if each row ..."
        text += f", because {why}."
    else:
        text += f' (as chosen under "{ORIENTATION_LABEL}").'
    box = st.warning if decided == "rows-are-features" else st.caption
    box(text)
    st.button(f"Read the other way (rows are {other.split('-')[-1]})", key="yd_other_way",
              on_click=_read_other_way, args=(other,))


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
            st.error(f"Could not read **{file.name}**: {on_screen(str(exc), file.name)}")
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
