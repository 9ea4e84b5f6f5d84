"""The core's messages said with the app's controls (issue 21 item 6, issue 37 item 5).

``nspca_core`` speaks to programmers: its messages name its arguments (``nan_policy='drop-rows'``,
``resize=(height, width)``) and count array rows from 0.  Its errors (``InputError``) and its readers'
notes carry the same message in parts (``nspca_core._common.said``): ``plain`` (what is wrong or what
was done, naming no argument), ``remedy`` (the argument to give and the values to choose from),
``argument``/``value``/``allowed`` and ``source`` (the file).  :func:`for_user` composes the app's
sentence from those parts with the controls of :data:`CONTROLS`; it never reads nor rewrites the text.
A message without parts is shown as the core wrote it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from nspca_core.io.formats import ALLOWED_EXTENSIONS, NAN_POLICY_LABELS

__all__ = ["for_user", "Control", "CONTROLS", "NAN_CHOICES", "FILE_TYPES", "refused_file", "unlogged_hint"]

# The "Your data" page's choices for missing values (its selectbox labels).
NAN_CHOICES = dict(NAN_POLICY_LABELS)  # the core's registry (nspca_core.io.formats)
#: the file types the app accepts, without the dot: every extension nspca_core.load_file reads
FILE_TYPES = [ext.lstrip(".") for ext in ALLOWED_EXTENSIONS]


@dataclass(frozen=True)
class Control:
    """A reading control of the "Your data" page, for the core's argument of the same meaning.

    ``label``: as the page names it; ``choices``: the core's value -> its label on screen;
    ``verb``: how the user sets it ("choose" in a list, "fill in" a box); ``also``: another way to
    the same end; ``from_one``: the page counts the argument's integer positions from 1."""

    label: str
    choices: dict = field(default_factory=dict)
    verb: str = "choose"
    also: str = ""
    from_one: bool = False

    def choice(self, value) -> str:
        if isinstance(value, tuple) and all(isinstance(v, int) for v in value):  # a size, e.g. (32, 32)
            return "×".join(map(str, value))
        return str(self.choices.get(value, value))


NAN_LABEL = "Missing values (NaN/inf)"
RESIZE_LABEL = "Resize every image to height×width"
VARIABLE_LABEL = "Array / variable to analyse"
HEADER_LABEL = "Header line"
ORIENTATION_LABEL = "Rows of the file are"
LABEL_COLUMN_LABEL = "Label column"
SHEET_LABEL = "Sample sheet"
SHEET_ID_LABEL = "Sheet column of sample ids"
HEADERS = {None: "detect (default)", True: "yes: column names", False: "no: the first line is data"}
ORIENTATIONS = {
    "auto": "detect (default)",
    "rows-are-samples": "samples (one sample per row)",
    "rows-are-features": "features, e.g. genes (samples as columns)",
}

#: the core's argument -> the control that sets it (an argument without a control, such as
#: ``max_bytes``, has no remedy on screen: the user cannot change it)
CONTROLS = {
    "nan_policy": Control(NAN_LABEL, NAN_CHOICES),
    "resize": Control(RESIZE_LABEL, verb="fill in"),
    "variable": Control(VARIABLE_LABEL),
    "header": Control(HEADER_LABEL, HEADERS),
    "orientation": Control(ORIENTATION_LABEL, ORIENTATIONS, also=' (or press "Read the other way")'),
    "label_column": Control(LABEL_COLUMN_LABEL, verb="fill in", from_one=True),
    "sample_info": Control(SHEET_LABEL, verb="upload"),
    "sample_id_column": Control(SHEET_ID_LABEL),
}
_LISTED = 20  # values of a list shown in a message


def _remedy(remedy) -> str | None:
    """The remedy with the page's control, or None when no control sets its argument."""
    control = CONTROLS.get(remedy.argument)
    if control is None:
        return None
    choices = [f"“{control.choice(c)}”" for c in remedy.choices]
    if control.verb == "choose" and 0 < len(choices) <= 6:
        what = "choose " + (choices[0] if len(choices) == 1 else ", ".join(choices[:-1]) + " or " + choices[-1])
        core = f'{what} under "{control.label}" above{control.also}'
    else:
        core = f'{control.verb} "{control.label}" above{control.also}'
    return " ".join(t for t in (remedy.lead, core, remedy.purpose) if t)


def _one_of(control: Control, allowed, value) -> str:
    """``"<control>" must be one of ...; got ...`` from the allowed values (a ``range``: positions,
    said counted from 1 for a control that takes them)."""
    names = [a for a in allowed if not isinstance(a, range)]
    shown = ", ".join(repr(a) for a in names[:_LISTED]) + (", …" if len(names) > _LISTED else "")
    parts = [shown] if names else []
    if control.from_one:  # a box that takes a position too (a list to choose from shows none)
        parts += [f"a position from {r.start + 1} to {r.stop}" for r in allowed if isinstance(r, range)]
    return f'"{control.label}" must be one of {" or ".join(parts)}; got {value!r}'


def for_user(said, *, filename: str | None = None) -> str:
    """``said`` (an error of the core, a reader's note, or a text) in the app's words.

    Composed from the parts the core gives (see the module's docstring), never from its text; a
    message without them is the core's text.  ``filename``: the file the page already names (its
    name does not lead the message again).
    """
    plain = getattr(said, "plain", None)
    argument = getattr(said, "argument", None)
    control = CONTROLS.get(argument)
    source = getattr(said, "source", None)
    if plain is None:
        allowed = getattr(said, "allowed", None)
        if control is not None and allowed is not None:
            return _one_of(control, allowed, getattr(said, "value", None))
        if source is not None and source == filename and hasattr(said, "unsourced"):
            return said.unsourced()
        return str(said)
    text = plain if source is None or source == filename else f"{source}: {plain}"
    remedy = getattr(said, "remedy", None)
    if remedy is not None:
        words = _remedy(remedy)
        return f"{text}; {words}" if words else text
    if isinstance(said, str) and control is not None:  # a note of a choice applied
        return f'"{control.label}" → “{control.choice(getattr(said, "value", None))}”: {text}'
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
