"""How the "Your data" page reads a file: its reading controls and the parse (a label column typed as
a number is a position counted from 1).

The page (``pages/your_data.py``) draws the controls (:func:`read_options`) for the kind of file
uploaded, parses it (:func:`parse`, through the cached :func:`ui.compute.parse_upload`) and shows
what the reader decided (:func:`dropped_columns`, :func:`orientation_choice`).  The reader's errors and
notes carry their parts (the argument at fault, the remedy): :func:`ui.messages.for_user` says them
with these controls (their labels are :data:`ui.messages.CONTROLS`), and the label-column retry reads
``InputError.argument``, never a message.
"""

from __future__ import annotations

import streamlit as st

from nspca_core import InputError
from nspca_core.io import sheet_columns, zip_holds_images
from ui import compute
from ui import topics as text_upload
from ui.messages import (FILE_TYPES, HEADER_LABEL, HEADERS, LABEL_COLUMN_LABEL, NAN_CHOICES, NAN_LABEL,
                         ORIENTATION_LABEL, ORIENTATIONS, RESIZE_LABEL, SHEET_ID_LABEL, VARIABLE_LABEL, for_user,
                         refused_file)

__all__ = ["TYPES", "read_options", "parse", "dropped_columns", "orientation_choice"]

TYPES = FILE_TYPES  # what the reader reads (nspca_core.io)
SHEET_TYPES = ["csv", "tsv", "tab", "txt", "xlsx", "xls"]  # a sample sheet
SHEET_LABEL = "Sample sheet (optional: CSV/TSV, one row per sample, e.g. its class)"
SHEET_LABELS_LABEL = "Sheet column giving the classes"
AUTO = "(detected)"
# the core's policies (nspca_core.io.formats), the first the default
NAN_POLICIES = {p: f"{label} (default)" if i == 0 else label for i, (p, label) in enumerate(NAN_CHOICES.items())}
RESIZE_FIELD = f"{RESIZE_LABEL} (empty = keep; needed for mixed sizes)"
LABEL_LABEL = "Label column (name, or position counting from 1; empty = automatic)"


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
        label = where.text_input(LABEL_COLUMN_LABEL + " (a sample characteristic, e.g. disease "
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
                columns = sheet_columns(opts["sample_info"])
            except ValueError as exc:
                st.error(f"Could not read the sample sheet **{sheet.name}**: {for_user(exc)}")
                columns = []
            s1, s2 = st.columns(2)
            id_col = s1.selectbox(SHEET_ID_LABEL, [AUTO] + columns, key="yd_sheet_id")
            lab_col = s2.selectbox(SHEET_LABELS_LABEL, [AUTO] + columns, key="yd_sheet_label",
                                   help="Detected: the first column with repeated values.")
            opts["sample_id_column"] = None if id_col == AUTO else id_col
            if lab_col != AUTO:
                opts["label_column"] = lab_col
    if lower.endswith(".zip") and zip_holds_images(data):  # not for .txt documents or a 10x folder
        size = c1.text_input(RESIZE_FIELD, "", key="yd_resize")
        if size.strip():
            try:
                h, w = (int(t) for t in size.lower().replace("x", "×").split("×"))
                if h < 1 or w < 1:
                    raise ValueError
                opts["resize"] = (h, w)
            except ValueError:
                st.error(f'"{RESIZE_LABEL}" must look like 32×32 (height×width, '
                         f"positive whole numbers); got {size!r}")
    # AnnData's counts have no missing values to choose about (a choice that did nothing, issue 41)
    if not lower.endswith(tuple("." + t for t in ("zip", "png", "jpg", "jpeg", "pgm", "bmp", "h5ad"))):
        opts["nan_policy"] = c2.selectbox(NAN_LABEL, list(NAN_POLICIES),
                                          format_func=NAN_POLICIES.get, key="yd_nan")
    return opts


def parse(data: bytes, filename: str, opts: dict):
    """The parsed upload; a label column typed as a number is a position counted from 1
    (unless a column has that name)."""
    label = opts.get("label_column")
    try:
        return compute.parse_upload(data, filename, **opts)
    except InputError as exc:  # the reader names the argument at fault: no need to read its message
        if not (isinstance(label, str) and label.isdigit() and exc.argument == "label_column"):
            raise
    position = int(label)
    if position < 1:
        raise ValueError(f'"Label column": positions count from 1; got {label}')
    try:
        return compute.parse_upload(data, filename, **{**opts, "label_column": position - 1})
    except InputError as exc:
        if exc.argument == "label_column":
            exc.value = label  # what the user typed, not the position counted from 0
        raise


def dropped_columns(loaded) -> None:
    """The input columns that are not features, always shown with the reason."""
    dropped = list(getattr(loaded, "dropped_columns", []) or [])
    if dropped:
        shown = "; ".join(f"**{d['column']}** ({for_user(d['reason'])})" for d in dropped[:20])
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
    # the reader's note of its own decision carries the reasons (a choice as asked has none)
    why = next((getattr(nt, "because", None) for nt in loaded.notes if getattr(nt, "argument", None) == "orientation"),
               None)
    text = ("Each **row** of the file was read as a **feature** (e.g. a gene) and each column as a "
            "sample: the table is transposed" if decided == "rows-are-features"
            else "Each **row** of the file was read as a **sample**")
    if why:
        text += f", because {why}."
    else:
        text += f' (as chosen under "{ORIENTATION_LABEL}").'
    box = st.warning if decided == "rows-are-features" else st.caption
    box(text)
    st.button(f"Read the other way (rows are {other.split('-')[-1]})", key="yd_other_way",
              on_click=_read_other_way, args=(other,))
