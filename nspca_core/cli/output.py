"""What the commands write: the output folder, CSV and JSON files, the component
images, the per-component summary, and the progress bar on stderr.
"""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ..io.imagegrid import image_grid_png
from ..io.written import components_long
from .options import _BadInput


class _Progress:
    """The progress line of a terminal: a bar per stage (solving, then each certificate) with the
    stage's name before it ("certifying k = 10 …"), so the wait of a certificate is never a bar
    stuck at 100%.  Only on a TTY (None on a pipe: nothing is written)."""

    def __init__(self):
        self.start = time.perf_counter()
        self.label = "solving"
        self.open = False  # a bar is drawn on the current line

    def stage(self, text: str) -> None:
        if self.open:
            sys.stderr.write("\n")
        self.label, self.open = text, False
        sys.stderr.write(f"{text} …")
        sys.stderr.flush()
        self.open = True

    def __call__(self, done, total):
        frac = min(max(done / total if total else 1.0, 0.0), 1.0)
        bar = "#" * int(30 * frac)
        sys.stderr.write(f"\r{self.label:<40.40} [{bar:<30}] {100 * frac:5.1f}%  "
                         f"{time.perf_counter() - self.start:6.1f}s")
        self.open = True
        sys.stderr.flush()

    def close(self) -> None:
        if self.open:
            sys.stderr.write("\n")
            sys.stderr.flush()
            self.open = False


def _progress(enabled: bool):
    """A :class:`_Progress` on a terminal, None on a pipe or with --quiet."""
    if not (enabled and sys.stderr.isatty()):
        return None
    return _Progress()


def _out_folder(path) -> Path:
    """The output folder, created now (before any work) or refused with the reason.

    An empty name is refused: ``Path("")`` is the current folder, and the result files
    would silently overwrite whatever of the same name is there.
    """
    if not str(path).strip():
        raise _BadInput(f"--out {str(path)!r} is empty; give the folder for the result files (created "
                        "if missing), e.g. --out results, or --out . for the current folder")
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise _BadInput(f"--out {str(path)!r} is an existing file; --out names a folder (created if "
                        "missing) for the result files")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _BadInput(f"--out {str(path)!r}: cannot create this folder ({exc.strerror or exc})") \
            from None
    return out


@contextmanager
def _writing(path):
    """An OSError while writing ``path`` becomes bad input that names the file."""
    try:
        yield
    except OSError as exc:
        raise _BadInput(f"cannot write {str(path)!r}: {exc.strerror or exc}") from None


def _write_text(path: Path, text: str) -> None:
    with _writing(path):
        path.write_text(text)


def _save_image_grid(loadings, image_shape, path):
    """The components as images side by side (Matplotlib; zero is white, darker blue is larger)."""

    h, w = image_shape
    r = loadings.shape[1]
    png = image_grid_png({"": [loadings[:, j] for j in range(r)]}, image_shape=(h, w),
                         titles={"": [f"component {j + 1}" for j in range(r)]}, scale=max(1, 64 // max(h, w)))
    with _writing(path):
        path.write_bytes(png)


def _per_component(res, L) -> list:
    per = []
    for j, r in enumerate(res.results):
        ub = float(getattr(r, "upper_bound", float("nan")))
        per.append({"component": j + 1, "k": int(np.count_nonzero(L[:, j])),
                    "variance": float(res.variance[j]),
                    "additional_variance": float(res.additional_variance[j]),
                    "variance_on_its_problem": float(r.variance),
                    "upper_bound": ub if np.isfinite(ub) else None,
                    "bound_kind": getattr(r, "bound_kind", "") or None,
                    "certified_ratio": float(r.variance / ub) if np.isfinite(ub) and ub > 0 else None})
    return per


def _summary_line(res) -> str | None:
    """The result's summary (:attr:`ComponentsResult.summary`) when fewer components came back
    than asked for, which it says with the reason; None when every one did."""
    return res.summary if res.shortfall else None


def _write_sparse_components(path, L, words, cols):
    """The nonzero loadings only: one row per word some component uses, with its word,
    grouped by the first component using it and sorted by decreasing loading there."""
    import pandas as pd

    used = np.flatnonzero(np.any(L != 0, axis=1))
    first = np.argmax(L[used] != 0, axis=1)
    order = np.lexsort((used, -L[used, first], first))
    rows = used[order]
    df = pd.DataFrame(L[rows], columns=cols)
    df.insert(0, "word_index", rows)
    df.insert(0, "word", [str(words[i]) for i in rows])
    with _writing(path):
        df.to_csv(path, index=False, float_format="%.6g")


def _write_csv(path, matrix, columns, *, index, index_name, labels=None):
    import pandas as pd

    df = pd.DataFrame(matrix, columns=columns)
    if labels is not None:
        df.insert(0, "label", labels)
    if index is not None:
        df.insert(0, index_name, index)
    with _writing(path):
        df.to_csv(path, index=False)


def _write_long_components(path, L, names, cols):
    """components_long.csv: the nonzero loadings, one row per (component, feature), largest first
    (the table the app's "Components (CSV)" download holds)."""

    df = components_long(np.asarray(L), [str(f) for f in names], cols)
    with _writing(path):
        df.to_csv(path, index=False)
