"""Order statistics of the columns of a matrix, for the steps of the ascent
(:mod:`nspca_core._common.steps`, which re-exports them): the i-th smallest entry of each column
from a partition at two indices, the j-th largest from a sample's candidates first, and the
nonzeros of a matrix grouped by column."""

from __future__ import annotations

import functools
import math

import numpy as np

__all__ = ["order_statistic", "kth_largest", "kth_one", "one_index", "column_counts", "survivor_table"]


@functools.lru_cache(maxsize=8)
def _ones(n: int) -> np.ndarray:
    """A read-only vector of n ones, made once per n."""
    o = np.ones(n)
    o.flags.writeable = False
    return o


def column_counts(M: np.ndarray) -> np.ndarray:
    """``np.count_nonzero(M, axis=0)`` of a boolean M (n, q): the same integers (intp).  A reduction
    along axis 0 of a C-ordered matrix with few columns runs one short inner loop per row (n of
    them); there the counts come from one vector-matrix product with ones (each a sum of ones, exact
    in floats below 2**53): 1,000 x 8, 27 -> 4 us.  A Fortran-ordered M (float32 products' layout)
    takes the product in its own order (``M^T 1``: 20 -> 12 us at 1,000 x 36), any other layout the
    reduction."""
    if M.flags.c_contiguous and M.ndim == 2:
        return (_ones(M.shape[0]) @ M).astype(np.intp)
    if M.flags.f_contiguous and M.ndim == 2:
        # summed as bytes along its columns: no float copy of M (the product's, fresh pages for a
        # large M: auto's 1,800 x 36 starts, a 518 KB copy a call)
        return M.T.view(np.uint8).sum(axis=1, dtype=np.intp)
    return np.count_nonzero(M, axis=0)

# columns of at least this many entries find their j-th largest value from a sample first
_KTH_SAMPLE_MIN_N = 1024
# the sample: every _KTH_STRIDE-th entry of a column (when it holds at least 4 j entries)
_KTH_STRIDE = 8


def order_statistic(Y: np.ndarray, i: int) -> np.ndarray:
    """``np.partition(Y, i, axis=0)[i]`` (Y of 1 or 2 dimensions; the i-th smallest along axis 0, NaN
    last): the same floats, from a partition at two neighbouring indices.  NumPy 2's partition at one
    index takes another path, measured 2-4x slower on columns of a few hundred to thousands of entries
    and quadratic on many equal entries (a 2,000-row column padded with ``-inf``: 0.28 ms against
    0.005); at two indices it runs introselect, and the entry at i is the same order statistic."""
    n = Y.shape[0]
    if n < 2:
        return np.partition(Y, i, axis=0)[i]
    return np.partition(Y, [i - 1, i] if i > 0 else [0, 1], axis=0)[i]


# ``np.partition`` at ONE index (NumPy 2's vectorized selection on this CPU) against :func:`order_statistic`'s
# two: 1,000 x 36 Fortran-ordered float64 columns of distinct entries 46 against 210 us (auto's float32
# products on 72 x 1,000 genes), but up to 5x slower than two indices on columns mostly of one value
# (1,000 x 36, 90% zeros: 519 against 109 us; a -inf padding alike).  Taken on columns of fewer than
# _KTH_SAMPLE_MIN_N entries (above, kth_largest samples first) whose first column is mostly nonzero
def one_index(S: np.ndarray) -> bool:
    """Whether the k-th largest of the columns of ``S`` (n, q) comes from one partition at one index
    (:func:`kth_one`): a Fortran-ordered float64 matrix of several columns, n below
    ``_KTH_SAMPLE_MIN_N``, whose first column has more nonzeros than zeros (a column mostly of zeros,
    e.g. the products of data with many constant features, would take the slow path of a one-index
    partition)."""
    n, q = S.shape
    return (q > 1 and n < _KTH_SAMPLE_MIN_N and S.flags.f_contiguous and S.dtype == np.float64
            and 2 * np.count_nonzero(S[:, 0]) > n)


def kth_one(S: np.ndarray, j: int) -> np.ndarray:
    """The j-th largest entry of each column of S (n, q), ``1 <= j <= n``: ``np.partition`` at the one
    index ``n - j`` (the same floats as :func:`kth_largest`: the order statistic is one value, NaN
    last either way)."""
    n = S.shape[0]
    return np.partition(S, n - j, axis=0)[n - j]


def kth_largest(Y: np.ndarray, j: int) -> np.ndarray:
    """The j-th largest entry of each column of Y (n, p), ``1 <= j <= n``: exactly
    ``np.partition(Y, n - j, axis=0)[n - j]``, from fewer comparisons on long columns.

    The j-th largest ``t0`` of a sample of a column (every 8th entry) is at most the column's
    own j-th largest (the j sample entries reaching ``t0`` are entries of the column), so the
    column's j largest entries are among its candidates ``Y >= t0`` (about ``8 j`` of them on
    data without structure), and the j-th largest of the candidates is that of the column: the
    same float, copied.  When many entries reach ``t0`` (ties with it, e.g. zeros), the
    candidates are those above it; fewer than j of them make ``t0`` itself the j-th largest.
    Columns with still many candidates, and input holding a NaN (which ``np.partition``
    orders last), take the partition of the whole column.
    """
    n, p = Y.shape
    if n < _KTH_SAMPLE_MIN_N or 4 * _KTH_STRIDE * j > n or p == 0:
        return order_statistic(Y, n - j)
    sample = Y[::_KTH_STRIDE]
    ns = sample.shape[0]
    # a higher threshold first, the sample's r-th largest (r <= j): about 8 r candidates, at least j of
    # them but on a rare column (which then takes the sample's j-th largest)
    r = min(j, j // _KTH_STRIDE + 3 * math.isqrt(j // _KTH_STRIDE + 1) + 3)
    part = np.partition(sample, [ns - j, ns - r], axis=0)
    t_lo, t0 = part[ns - j], part[ns - r]
    if np.isnan(t_lo).any() or np.isnan(Y).any():
        return order_statistic(Y, n - j)
    cap = n // 4
    M = Y >= t0
    count = column_counts(M)
    low = np.flatnonzero(count < j)
    if low.size:  # fewer than j candidates: the sample's j-th largest (j entries reach it)
        t0 = t0.copy()
        t0[low] = t_lo[low]
        M[:, low] = Y[:, low] >= t0[low]
        count[low] = column_counts(M[:, low])
    out = np.empty(p)
    todo = np.ones(p, dtype=bool)
    many = np.flatnonzero(count > cap)
    if many.size:  # many entries tie with t0: the candidates are those above it
        above = Y[:, many] > t0[many]
        M[:, many] = above
        count[many] = column_counts(above)
        tie = many[count[many] < j]  # t0 (an entry of the column) is the j-th largest
        out[tie] = t0[tie]
        todo[tie] = False
        full = many[count[many] > cap]
        if full.size:
            out[full] = order_statistic(Y[:, full], n - j)
            todo[full] = False
    g = np.flatnonzero(todo)
    if g.size == 0:
        return out
    if g.size < p:
        M, count, Yg = M[:, g], count[g], Y[:, g]
    else:
        Yg = Y
    cols, rows = _nonzero_by_column(M)
    width = int(count.max())
    pos = np.arange(cols.size) - np.repeat(np.cumsum(count) - count, count)
    P = np.full((width, g.size), -np.inf)
    P[pos, cols] = Yg[rows, cols]
    out[g] = order_statistic(P, width - j)
    return out


def _nonzero_by_column(M: np.ndarray):
    """``(cols, rows)`` of the nonzeros of M (n, q), grouped by column, rows increasing."""
    return np.divmod(M.T.ravel().nonzero()[0], M.shape[0])  # np.flatnonzero's, one call less


def survivor_table(V: np.ndarray, keep: np.ndarray, ok_of, index: bool = False):
    """The entries of each row of ``V`` (r x n) where ``keep`` (boolean, r x n) holds, in a table padded with -inf
    (below every entry: never among a row's largest), for rows selected by their survivor counts: ``(Z, F, ok)``
    with ``ok = ok_of(cnt)`` (a boolean per row from ``cnt``, each row's number of survivors), ``Z`` (``ok.sum() x
    W``, W the largest count among them) the ok rows' survivors in column order, and ``F`` (``index``, else None)
    their flat indices into V (``F // n`` the row, ``F % n`` the column; 0 at the padding).  ``Z`` and ``F`` are
    None where no row is ok.  The sampled-threshold selections (:func:`.certificates.anchor_sums.select_block`,
    :func:`.certificates.cross._largest_sampled`) partition this short table instead of each whole row."""
    r, n = keep.shape
    flat = np.flatnonzero(keep)  # (row-major: each row's survivors a run, columns ascending)
    starts = np.searchsorted(flat, np.arange(r + 1) * n)
    cnt = np.diff(starts)
    ok = ok_of(cnt)
    if not ok.any():
        return None, None, ok
    W = int(cnt[ok].max())
    # each survivor's place in a (rows x W) table, row-major: its rank in the run plus its row's offset
    at = np.arange(flat.size) + np.repeat(np.arange(r) * W - starts[:-1], cnt)
    if not ok.all():  # (the other rows' survivors: not placed)
        mine = np.repeat(ok, cnt)
        at, flat = at[mine], flat[mine]
    Z = np.full((r, W), -np.inf)
    Z.reshape(-1)[at] = V.reshape(-1)[flat] if V.flags.c_contiguous else V[flat // n, flat % n]
    F = None
    if index:
        F = np.zeros((r, W), dtype=np.intp)
        F.reshape(-1)[at] = flat
        F = F[ok]
    return Z[ok], F, ok
