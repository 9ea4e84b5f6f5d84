"""Keys of data in caches and jobs: a short digest of arrays, and the job key of a dataset.

A leaf module (numpy and scipy only), so every layer of the app can key data without importing
another: :mod:`ui.uploads` keys uploads, :mod:`ui.live` and :mod:`ui.work` key jobs.
"""

from __future__ import annotations

import hashlib

import numpy as np
import scipy.sparse as sp

__all__ = ["digest", "data_key"]


def digest(*parts) -> str:
    """A short sha1 of bytes/str/arrays, for cache keys of uploaded data."""
    h = hashlib.sha1()
    for p in parts:
        if isinstance(p, np.ndarray):
            h.update(str((p.dtype, p.shape)).encode())
            h.update(np.ascontiguousarray(p))  # the buffer itself: no copy of an upload's matrix
        elif sp.issparse(p):  # a text corpus: its CSR arrays (never densified)
            q = sp.csr_matrix(p)
            h.update(str((q.dtype, q.shape)).encode())
            for a in (q.data, q.indices, q.indptr):
                h.update(np.ascontiguousarray(a))
        elif isinstance(p, bytes | bytearray | memoryview):
            h.update(p if not isinstance(p, memoryview) or p.c_contiguous else p.tobytes())
        else:
            h.update(repr(p).encode())
    return h.hexdigest()[:16]


def data_key(ds) -> str:
    """Identifies a dataset's matrix in job keys: name, preprocessing and a digest of X."""
    return f"{ds.name}/{'+'.join(ds.preprocessing) or 'raw'}/{digest(np.asarray(ds.X))}"
