"""The core's messages, reworded for the people using the app (issue 21, item 6).

``nspca_core`` speaks to programmers: it names its arguments
(``nan_policy='drop-rows'``, ``resize=(height, width)``) and counts rows from
0 where it reports array indices.  On screen the same advice must name the
control the user sees and count as the user does.  :func:`for_user` rewrites
a message; it changes wording only, never what is reported.
"""

from __future__ import annotations

import re

import numpy as np

__all__ = ["for_user", "NAN_CHOICES", "refused_file", "unlogged_hint"]

# The "Your data" page's choices for missing values (its selectbox labels).
NAN_CHOICES = {
    "error": "stop and tell me",
    "drop-rows": "drop samples with missing values",
    "drop-columns": "drop features with missing values",
    "impute-mean": "replace by the feature's mean",
}
_NAN_CONTROL = "Missing values (NaN/inf)"
_RESIZE_CONTROL = "Resize every image to height×width"


def _nan_choice(m: re.Match) -> str:
    return f"*{_NAN_CONTROL}* → “{NAN_CHOICES.get(m[1], m[1])}”"


def _one_based(m: re.Match) -> str:
    return f"{m[1]}row {int(m[2]) + 1}, column {int(m[3]) + 1}"


_RULES: list[tuple[re.Pattern, object]] = [
    # "nan_policy='drop-rows'", with or without the quotes' neighbours
    (re.compile(r"`?nan_policy\s*=\s*'([a-z-]+)'`?"), _nan_choice),
    (re.compile(r"`?nan_policy`?"), f"*{_NAN_CONTROL}*"),
    (re.compile(r"pass `?resize=\(height, width\)`?"), f"fill in *{_RESIZE_CONTROL}*"),
    (re.compile(r"`?resize=\((\d+), (\d+)\)`? asked"), rf"*{_RESIZE_CONTROL}* = \1×\2"),
    (re.compile(r"`?label_column`?"), "*Label column*"),
    # array indices from nspca_core._common.validation / preprocess are 0-based: count from 1
    (re.compile(r"(the first at )row (\d+), column (\d+)"), _one_based),
]


def for_user(message: str, *, filename: str | None = None) -> str:
    """``message`` with API names replaced by the app's controls and indices counted from 1.

    ``filename``: a leading ``"<filename>: "`` is dropped (the page already
    says which file it is talking about).
    """
    text = str(message)
    if filename:
        for prefix in (f"{filename}: ", f"`{filename}`: "):
            if text.startswith(prefix):
                text = text[len(prefix):]
                break
        text = text[:1].upper() + text[1:]
    for pattern, repl in _RULES:
        text = pattern.sub(repl, text)
    return text


def bipartite_note(totals: dict, joint_label: str) -> str | None:
    """Why the joint (bipartite) method can capture less total variance than a deflation here.

    ``totals``: method label -> total variance of its r components (on the
    full covariance).  Returns None when the joint method is not behind.
    """
    if joint_label not in totals or len(totals) < 2:
        return None
    joint = float(totals[joint_label])
    best_label, best = max(((lab, float(v)) for lab, v in totals.items() if lab != joint_label),
                           key=lambda t: t[1])
    if not joint < best:
        return None
    def num(v: float) -> str:
        return f"{v:,.0f}" if abs(v) >= 1e4 else f"{v:.4g}"

    return (f"**Why the joint method is behind here** ({num(joint)} vs {num(best)} for {best_label}). "
            "Asteris et al. (2015) solve the joint problem on a low-rank sketch of A: its "
            "guarantee is relative to the best disjoint components *for the sketch*, and it samples "
            "points of the sketch's net rather than visiting all of them. Measured on the full A, a "
            "greedy deflation whose solver sees the whole covariance (TPower, EM) can capture more. "
            "The joint method wins where greedy choices block each other — the §7 example on "
            "*Several components* — and is never worse on the sketch's objective.")


# what a file the app does not read is, and what to do instead (issue 41: a refused PDF or .xlsx showed
# only a red icon and, on hover, "application/vnd.openxml… files are not allowed")
_KNOWN_OTHERS = {
    ("xlsx", "xls", "xlsm", "ods"): ("a spreadsheet workbook",
                                     "Save the sheet as CSV (in Excel: *File → Save As → CSV UTF-8*; in "
                                     "LibreOffice: *File → Save As → Text CSV*) and upload the CSV."),
    ("pdf",): ("a PDF document", "A PDF holds no table the app can read: upload the data behind it as CSV, "
                                 "or its text as a .txt file (one document per file, in a ZIP for a corpus)."),
    ("doc", "docx", "odt", "rtf"): ("a word-processor document",
                                    "Save it as plain text (.txt) and upload that; for a corpus, a ZIP of .txt "
                                    "files or a CSV with a column of texts."),
    ("pkl", "pickle", "joblib"): ("a Python pickle", "Pickles can run code when read, so the app never opens "
                                                     "them: save the array with numpy.save (.npy) or as CSV."),
    ("h5", "hdf5", "loom", "rds", "rdata"): ("a binary format this app does not read",
                                             "Export the matrix as CSV, .npy or AnnData .h5ad."),
}


def refused_file(name: str, allowed) -> str | None:
    """Why the app will not read the file called ``name`` and what to do, in words; None when its
    ending is one of ``allowed`` (extensions without the dot, e.g. ``["csv", "txt.gz"]``)."""
    lower = name.lower()
    if lower.endswith(tuple("." + a.lower().lstrip(".") for a in allowed)):
        return None
    ext = lower.rsplit(".", 1)[-1] if "." in lower else ""
    kind, todo = next(((k, t) for exts, (k, t) in _KNOWN_OTHERS.items() if ext in exts),
                      (f"a .{ext} file" if ext else "a file without an extension",
                       "Save the data as one of the formats below and upload that."))
    kinds = ", ".join("." + a for a in allowed)
    return (f"**{name}** is {kind}, which this app does not read. {todo}  \n"
            f"The app reads: {kinds}.")


def unlogged_hint(X, *, orders: float = 3.0, max_values: int = 1_000_000) -> str | None:
    """A hint to use log(1+x) when nonnegative data span many orders of magnitude (issue 41: raw MAS5
    intensities of GDS507 gave control probes, AFFX-…, as the top components, without a word); None
    when the data have a negative value, too few positive values, or a narrower spread.  Reads at most
    ``max_values`` entries (an even sample of a large matrix)."""
    A = np.asarray(X)
    if A.size == 0 or not np.issubdtype(A.dtype, np.number):
        return None
    flat = A.reshape(-1)
    if flat.size > max_values:
        flat = flat[:: -(-flat.size // max_values)]
    flat = flat[np.isfinite(flat)]
    if flat.size == 0 or flat.min() < 0:
        return None
    pos = flat[flat > 0]
    if pos.size < 20:
        return None
    lo, hi = np.percentile(pos, [1.0, 99.9])
    if lo <= 0 or hi / lo < 10 ** orders:
        return None
    span = np.log10(hi / lo)
    return (f"The values span about {span:.0f} orders of magnitude (1st percentile {lo:.3g}, 99.9th "
            f"{hi:.3g}) and none is negative: they look like raw intensities or counts, not on a log scale. "
            "Then a few very large features (control probes, highly expressed genes) take every component. "
            "Consider the sidebar's *Preprocessing* → “log(1+x), then center”.")
