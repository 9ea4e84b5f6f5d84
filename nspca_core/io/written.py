"""Tables written from results (the CLI's files and the app's downloads share them)."""

from __future__ import annotations

import numpy as np

LONG_COLUMNS = ["component", "rank", "feature", "index", "loading"]


def components_long(loadings, feature_names, names=None):
    """The nonzero loadings as a long table, one row per (component, feature), largest first.

    Columns ``component, rank, feature, index, loading``: for each component (in order) its
    support sorted by decreasing |loading| (``rank`` 1 the largest, ties in feature order),
    the feature's name and its 1-based column number.  Zeros are left out: a k-sparse
    component has k rows, not n.  The table rebuilds the wide matrix exactly.
    """
    import pandas as pd

    L = np.asarray(loadings, dtype=float)
    if L.ndim == 1:
        L = L[:, None]
    names = list(names) if names is not None else [f"component_{j + 1}" for j in range(L.shape[1])]
    if len(feature_names) != L.shape[0] or len(names) != L.shape[1]:
        raise ValueError(f"loadings of shape {L.shape} need {L.shape[0]} feature names and {L.shape[1]} "
                         f"component names; got {len(feature_names)} and {len(names)}")
    rows = []
    for j, name in enumerate(names):
        col = L[:, j]
        idx = np.flatnonzero(col)
        idx = idx[np.argsort(-np.abs(col[idx]), kind="stable")]
        rows += [(name, r + 1, str(feature_names[i]), int(i) + 1, float(col[i])) for r, i in enumerate(idx)]
    return pd.DataFrame(rows, columns=LONG_COLUMNS)
