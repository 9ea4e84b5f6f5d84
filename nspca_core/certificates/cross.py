"""The cross term of the split bound: how much the screened set S and the rest T can add *together*.

:func:`.single._certify_split` bounds a k-sparse x split as ``x = x_S + x_T`` by ``B_S(i) + B_T(j)``
(``i``, ``j`` the sizes of the two supports), the Cauchy–Schwarz worst case in which ``Y x_S`` and
``Y x_T`` point the same way.  When T's large variances belong to other groups of features than the
answer's (several gene modules), they do not: the cross covariance ``A_ST`` between the two parts is
small where it matters, and

    x^T A x = a^2 y_S^T A_SS y_S + b^2 y_T^T A_TT y_T + 2 a b y_S^T A_ST y_T
            <= a^2 B_S(i) + b^2 B_T(j) + 2 a b C(i, j)  <=  lambda_max([[B_S, C], [C, B_T]])

(``a = ||x_S||``, ``b = ||x_T||``, ``a^2 + b^2 = 1``, ``y_S = x_S / a`` and ``y_T = x_T / b`` unit,
nonnegative, i- resp. j-sparse), for any ``C(i, j) >= max y_S^T A_ST y_T`` over such y (and
``C >= 0``).  :func:`cross_table` gives one from the entries of ``A_ST`` (proof there); with ``C =
sqrt(B_S B_T)`` (Cauchy–Schwarz, A psd) the bound is the old ``B_S + B_T``, so it is never worse.
Measured on a 78 x 7,600 gene matrix at k = 50: the split bound certifies 0.92 instead of 0.89.
"""

from __future__ import annotations

import numpy as np

from .._common.kth import survivor_table
from ..operators.cov import Cov

_EPS = np.finfo(float).eps
_BLOCK = 2048  # columns of T per block: |S| x _BLOCK entries of A_ST at a time
_FIRST = 256  # (through X: the first block, of the largest variances, sets the tops' thresholds cheaply)
_FIRST_PER_J = 8
_WIDE = 1 << 23  # (after the screen's first block, the columns it keeps in one block of at most this many entries)


def pair_bound(a, b, c):
    """``lambda_max([[a, c], [c, b]])`` for ``a, b, c >= 0`` (arrays broadcast), rounded up: each
    operation of ``(a + b)/2 + sqrt(((a - b)/2)^2 + c^2)`` errs by at most a few eps relatively (all
    terms nonnegative), covered by ``1 + 16 eps``."""
    a, b, c = np.asarray(a, float), np.asarray(b, float), np.asarray(c, float)
    return ((a + b) / 2 + np.sqrt(((a - b) / 2) ** 2 + c * c)) * (1 + 16 * _EPS)


def coupled_terms(a, b, c):
    """The split bound's terms with the cross term: ``pair_bound(a, b, min(c, sqrt(a b)))`` (never
    above ``a + b``), and ``a + b`` where either part is empty (``a`` or ``b`` zero)."""
    a, b, c = np.asarray(a, float), np.asarray(b, float), np.asarray(c, float)
    c = np.minimum(c, np.sqrt(a * b) * (1 + 2 * _EPS))
    return np.where((a == 0) | (b == 0), a + b, pair_bound(a, b, c))


def _squares_up(B: np.ndarray, delta: float, drop: np.ndarray | None = None) -> np.ndarray:
    """``max(B + delta, 0)^2`` in place (B is a fresh block), the columns ``drop`` set to 0."""
    if delta:
        B += delta
    np.maximum(B, 0.0, out=B)
    np.square(B, out=B)
    if drop is not None and drop.any():
        B[:, drop] = 0.0
    return B


# the screen's relative allowance for the computed variances and products (each off by at most
# (m + 2) eps relatively: any m below 10^9)
_SCREEN_REL = 1e-6


def _screen(dS: np.ndarray, lam: float, delta: float, rows_min: np.ndarray, theta: float) -> float:
    """The variance ``d`` at or below which (``A_tt <= d / (1 + _SCREEN_REL)``) a column t of T cannot
    enter :func:`cross_table`'s tops any more: every computed square of the column at most its row's
    ``rows_min`` (the row's jm-th largest so far) and its computed total at most ``theta`` (the
    smallest of the jm largest column maxima so far: jm columns have every i-sum ``>= theta``).

    Proof (rho = _SCREEN_REL, A psd): the computed entry ``b_st`` is within ``delta / 2`` of
    ``A_st``, and ``|A_st| <= sqrt(A_ss A_tt) <= sqrt(dS_s dT_t) (1 + rho)`` (computed variances within
    ``(m + 1) eps`` relatively); the square of ``(b_st + delta)_+`` rounded is then at most
    ``(sqrt(dS_s dT_t) (1 + rho) + 2 delta)^2 (1 + rho)``, at most ``rows_min_s`` when ``dT_t`` is at
    most this row's level.  The column's squares sum (rounded: ``1 + 2 s eps``) to at most
    ``(||a|| + 2 delta sqrt(s))^2 (1 + rho)`` with ``a = A_St`` (Minkowski), and ``||a||^2 <=
    lambda_max(A_SS) A_tt`` (the 2 x 2 blocks of a psd matrix), ``lambda_max(A_SS) <= lam``.  Rows
    with ``dS_s = 0`` have squares at most ``(2 delta)^2 (1 + rho)``.  Returns 0 when nothing can be
    skipped."""
    rho, s = _SCREEN_REL, dS.size
    room = np.sqrt(rows_min / (1 + rho)) - 2 * delta
    if np.any(room <= 0):
        return 0.0
    pos = dS > 0
    d_rows = float(np.min((room[pos] / (np.sqrt(dS[pos]) * (1 + rho))) ** 2)) if pos.any() else np.inf
    room_c = np.sqrt(theta / (1 + rho + 2 * s * _EPS)) - 2 * delta * np.sqrt(s)
    if room_c <= 0 or lam <= 0:
        return 0.0
    d_cols = (room_c / (np.sqrt(lam) * (1 + rho))) ** 2
    return min(d_rows, d_cols) * (1 - rho)


# float32 products (:func:`_single`): its unit roundoff, the smallest normal and its subnormals' spacing; only
# where m u32 is small (below, gamma_m = m u32 / (1 - m u32) <= 1.02 m u32) and X's entries far below
# float32's overflow
_U32 = 2.0 ** -24
_TINY32 = 2.0 ** -126
_M32_MAX = 1 << 16
_BIG32 = 2.0 ** 60


def _single(X: np.ndarray, m: int) -> np.ndarray | None:
    """``X`` in float32 for :func:`cross_table`'s products, or None where the float64 products stay
    (m above :data:`_M32_MAX`, an entry above :data:`_BIG32` or not finite, or X not float64: the
    float64 path's allowance then)."""
    if X.dtype != np.float64 or m > _M32_MAX or m < 1:
        return None
    big = float(np.abs(X).max(initial=0.0))
    if not (np.isfinite(big) and big <= _BIG32):
        return None
    return X.astype(np.float32)


def _delta32(m: int, dS_max: float, dT_max: float) -> float:
    """Twice an upper bound on ``|b - A_st|`` for ``b = fl32(fl32(x_s)^T fl32(x_t)) / m`` (the float32
    product cast to float64, divided by m in float64), x_s, x_t columns of X with ``||x||^2 / m`` at most
    ``dS_max (1 + 4 m eps)`` and ``dT_max (1 + 4 m eps)`` (the computed variances' allowance, as the float64
    path's).

    Proof (u = 2^-24, any order of summation, with or without fused multiply-adds).  Rounding each entry
    to float32 gives ``x' = x (1 + e) + f`` with ``|e| <= u`` and ``|f| <= 2^-150`` (subnormals; no overflow:
    entries at most 2^60).  The dot product of m terms errs by at most ``gamma_m sum |x'_i y'_i|`` plus, for
    underflow in its 2m operations, ``2m 2^-150`` (``gamma_m = m u / (1 - m u) <= 1.02 m u`` for ``m <=
    2^16``).  ``sum |x'_i y'_i| <= (1 + u)^2 sum |x_i y_i| + 2^-150 (1 + u)(||x||_1 + ||y||_1) + m 2^-300``
    and ``sum |x_i y_i| <= ||x|| ||y||``, ``||x||_1 <= sqrt(m) ||x||``; ``|sum x'_i y'_i - sum x_i y_i| <=
    (2u + u^2) sum |x_i y_i| +`` the same 2^-150 terms.  With ``||x|| ||y|| <= m sqrt(dS_max dT_max) (1 +
    4 m eps)`` and the division by m (one float64 rounding, relative eps) the error of b is at most ``(m + 3)
    u (1 + 4 m u) sqrt(dS_max dT_max) (1 + 4 m eps) + 2^-140 (1 + sqrt(dS_max) + sqrt(dT_max))``; this
    returns twice that, rounded up by a factor ``1 + 2^-20`` (a handful of float64 operations)."""
    g = np.sqrt(float(dS_max) * float(dT_max)) * (1 + 4 * m * _EPS)
    rel = (m + 3) * _U32 * (1 + 4 * m * _U32)
    tiny = 2.0 ** -140 * (1 + np.sqrt(float(dS_max)) + np.sqrt(float(dT_max)))
    return 2 * (rel * g + tiny) * (1 + 2.0 ** -20)


def _largest_in_place(a: np.ndarray, n: int) -> np.ndarray:
    """Each row's ``n`` largest entries of ``a`` (2-D, its own array: partitioned in place), as the view ``a[:, -n:]``
    (any order per row: the same multiset as ``np.partition(a, c - n, axis=1)[:, c - n:]``, ties equal values)."""
    c = a.shape[1]
    if n < c:
        a.partition([c - n - 1, c - n], axis=1)
    return a[:, c - n:]


def _largest_descending(a: np.ndarray, n: int) -> np.ndarray:
    """Each row's ``n`` largest entries of ``a`` (2-D, its own array: sorted in place) in descending order."""
    c = a.shape[1]
    if 4 * n >= c:
        a.sort(axis=1)
        return a[:, :c - n - 1:-1] if n < c else a[:, ::-1]
    return np.sort(_largest_in_place(a, n), axis=1)[:, ::-1]


def _row_tops(rows: np.ndarray, new: np.ndarray, jm: int, fresh: bool) -> np.ndarray:
    """Per row, the ``jm`` largest of ``rows`` and ``new`` together (any order; ``new`` is a fresh array of
    squares, ``>= 0``, overwritten here).  The same multiset per row, hence the same floats downstream, as
    ``np.partition(np.hstack([rows, new]), ...)[:, -jm:]``: the ``jm`` largest of a union are among the ``jm``
    largest of each part, so ``new`` is cut to its own ``jm`` largest first (in place: no copy of the
    block's kept columns, issue 39, ninth round), and while ``rows`` holds only its zeros (``fresh``) those
    ``jm`` largest are the answer (squares are ``>= 0``: a zero of ``rows`` could only stand for an equal zero)."""
    c = new.shape[1]
    if fresh and c >= _SAMPLED_FROM * jm:  # (the first block: each row's jm largest through a sampled threshold)
        return _largest_sampled(new, jm)
    if c > jm:
        new = _largest_in_place(new, jm)
        if fresh:
            return new
    return _largest_in_place(np.hstack([rows, new]), jm)


# _row_tops on the first block (rows fresh) of at least _SAMPLED_FROM x jm columns: each row's jm largest through a
# threshold, the (ceil(jm / _SAMPLED_STRIDE) + _SAMPLED_EXTRA)-th largest of every _SAMPLED_STRIDE-th column
_SAMPLED_FROM, _SAMPLED_STRIDE, _SAMPLED_EXTRA = 4, 8, 6


def _largest_sampled(new: np.ndarray, jm: int) -> np.ndarray:
    """Per row of ``new`` (``s x c`` squares, ``>= 0``, no NaN; c > jm), its ``jm`` largest entries as a multiset
    (any order): ``np.partition(new, c - jm, axis=1)[:, c - jm:]``'s values.  A row's entries at or above a threshold
    t (the j-th largest of a sample of its own entries: at least j entries are at or above it) are its survivors;
    where there are at least jm of them, every other entry is below t, so the row's jm largest are the jm largest
    of its survivors (ties at t among them: equal values, the same multiset), selected from a short block (the
    survivors padded with -inf, never selected).  Rows with fewer survivors, more than half the row, or a threshold
    of 0 (clipped negative entries: every square survives) are partitioned whole, as before.
    Issue 39, twenty-fifth round: the cross table's first block on the thin route's S (g72x1000 k = 80: 162 x 640,
    ~1.2 ms of a ~17 ms certificate, a float64 partition of every row) now partitions ~162 x 100."""
    s, c = new.shape
    sample = new[:, ::_SAMPLED_STRIDE]
    ns = sample.shape[1]
    j = min(ns, -(-jm // _SAMPLED_STRIDE) + _SAMPLED_EXTRA)
    t = np.partition(sample, [ns - j - 1, ns - j] if ns > j else 0, axis=1)[:, ns - j]  # (a copy: its j-th largest)
    # (a zero threshold keeps every square: that row whole, as before)
    pad, _, ok = survivor_table(new, new >= t[:, None], lambda cnt: (cnt >= jm) & (t > 0.0) & (cnt <= c // 2))
    out = np.empty((s, jm))
    if ok.any():
        out[ok] = _largest_in_place(pad, jm)
    if not ok.all():
        out[~ok] = _largest_in_place(new[~ok], jm)
    return out


def _row_tops_entries(rows: np.ndarray, P2: np.ndarray, over: np.ndarray, jm: int) -> np.ndarray:
    """:func:`_row_tops` of ``rows`` (``s x jm``, full) and a block ``P2`` through its entries ``over`` (a mask:
    those above their row's smallest kept square) alone: the same multiset per row, hence the same floats
    downstream.  An entry at most its row's ``jm``-th largest cannot enter that row's ``jm`` largest (or
    stands for an equal one), so each row's new entries are gathered into a short padded block (zeros: squares
    are ``>= 0``, a zero could only stand for an equal zero) and one partition of ``s x (jm + w)`` replaces the
    block's ``s x (jm + c)`` (``w`` the most entries any row kept: on golub-shaped data at k = 150, 211 of the
    block's 5,270 columns, 2% of its entries; issue 39, ninth round)."""
    r, c = np.nonzero(over)
    return _row_tops_gathered(rows, r, P2[r, c], jm)


def _row_tops_gathered(rows: np.ndarray, r: np.ndarray, v: np.ndarray, jm: int) -> np.ndarray:
    """:func:`_row_tops_entries` from its entries: ``v`` the values, ``r`` their rows (ascending, as
    ``np.nonzero`` gives them)."""
    if r.size == 0:
        return rows
    cnt = np.bincount(r, minlength=rows.shape[0])
    w = int(cnt.max())
    start = np.cumsum(cnt) - cnt
    both = np.zeros((rows.shape[0], jm + w))
    both[:, :jm] = rows
    both[r, jm + np.arange(r.size) - start[r]] = v
    return _largest_in_place(both, jm)


# a block's squares through X are formed this many entries at a time (rows of S; ~1 MB of float64, in cache)
# for its row part's entries and its column maxima and sums, the block itself never written out (_SCAN off: the
# former route, each block's squares written out whole; the same table float for float)
_CHUNK = 1 << 17
_SCAN = True


def _scan(prod: np.ndarray, m: int, delta: float, rmin: np.ndarray | None, by_col: bool):
    """One pass over a block's products ``prod`` (``|S| x c``, X_S^T X_T unscaled), its squares ``max(prod / m
    + delta, 0)^2`` formed in float64 :data:`_CHUNK` entries at a time, exactly as :func:`_squares_up` forms
    them: ``(r, v)``, the entries above their row's ``rmin`` (rows ascending, in ``np.nonzero``'s order;
    ``r`` None where more than a quarter of the block: :func:`cross_table` then forms the block again, and no
    entry is compared after that), and ``(mx, tot)``, the columns' largest square and their sum (None without
    ``by_col``).
    The sums are NumPy's of the whole block, float for float: a C-ordered block of two or more columns summed
    over its rows adds them in order (one column is summed pairwise: :func:`cross_table` leaves those blocks to
    the former route), and each chunk's sum starts from the sums so far (its first row).  Issue 39, tenth round: the
    block's float64 squares were 4 passes over ~30 MB at k = 80..150 on gene data, then 3 more reading them."""
    s, c = prod.shape
    h = max(1, _CHUNK // max(c, 1))
    buf = np.empty((h + 1, c))
    buf[0] = 0.0
    r_all, v_all, count, limit = [], [], 0, (s * c) // 4
    mx = tot = None
    for r0 in range(0, s, h):
        q = min(h, s - r0)
        B = _squares_up(np.divide(prod[r0:r0 + q], m, out=buf[1:q + 1], dtype=np.float64), delta)
        if rmin is not None and count <= limit:
            flat = np.flatnonzero(B > rmin[r0:r0 + q, None])
            count += flat.size
            r_all.append(flat // c + r0)
            v_all.append(B.ravel()[flat])
        if by_col:
            mx = B.max(axis=0) if mx is None else np.maximum(mx, B.max(axis=0), out=mx)
            tot = buf[:q + 1].sum(axis=0)
            buf[0] = tot
    gathered = count <= limit and rmin is not None
    r = np.concatenate(r_all) if gathered and r_all else np.zeros(0, dtype=np.intp)
    v = np.concatenate(v_all) if gathered and v_all else np.zeros(0)
    return (r if gathered else None, v), (mx, tot)


def _col_tops(cols: np.ndarray, mx: np.ndarray, tot: np.ndarray, block, s: int, im: int, jm: int) -> np.ndarray:
    """:func:`cross_table`'s column part after one block: ``cols`` (im x jm, the jm largest sums of the i largest
    squares of a column, per i) merged with the block's columns, given their largest square ``mx``, their sums
    ``tot`` and ``block(keep)``, the kept columns' squares one column per row (C order)."""
    top1 = np.concatenate([cols[0], mx])
    theta = np.partition(top1, top1.size - jm - 1)[top1.size - jm - 1]
    keep = tot >= theta  # (>=: a column at theta may be one of the jm that make it; see cross_table)
    if keep.any():
        cap_i = np.minimum(tot[keep, None], mx[keep, None] * np.arange(1, im + 1)) * (1 + 1e-12)
        keep[keep] = (cap_i > cols.min(axis=1)).any(axis=1)
    P2T = np.ascontiguousarray(block(keep))                             # kept columns, one per row
    if P2T.shape[0]:
        top = _largest_descending(P2T, im)                               # b' x im, descending
        colsum = np.cumsum(top, axis=1).T                                # row i-1: sum of i largest
        cols = _largest_in_place(np.hstack([cols, colsum]), jm)
    return cols


# _col_tops_staged: a block of at least _STAGE_FROM x jm columns goes in two parts, the _STAGE_COLS x jm columns of
# largest total first (their i-sums raise the thresholds the other columns' caps are held to)
_STAGE_FROM, _STAGE_COLS = 3, 2.0


def _col_tops_staged(cols: np.ndarray, mx: np.ndarray, tot: np.ndarray, block, s: int, im: int, jm: int) -> np.ndarray:
    """:func:`_col_tops` of a block taken as two blocks: its ``_STAGE_COLS jm`` columns of largest total, then the
    others (each part's ``block`` the block's through a mask).  The same table: the column part keeps, per i, the jm
    largest i-sums over the columns merged so far, whatever blocks they come in (each block's dropped columns are
    proved not needed by :func:`_col_tops`'s own tests), so two blocks give the jm largest of their union as one
    does, the same multiset, and its floats.  The first part's sums raise the thresholds before the rest are held
    to them: on the first block through X (every column kept against the empty tops) most columns then fall
    (issue 39, twenty-second round)."""
    c = tot.size
    f = int(_STAGE_COLS * jm)
    if c < _STAGE_FROM * jm or f < 1 or f >= c:
        return _col_tops(cols, mx, tot, block, s, im, jm)
    first = np.zeros(c, dtype=bool)
    first[np.argpartition(tot, c - f)[c - f:]] = True
    for part in (first, ~first):
        def sub(keep, part=part):
            mask = np.zeros(c, dtype=bool)
            mask[part.nonzero()[0][keep]] = True
            return block(mask)
        cols = _col_tops(cols, mx[part], tot[part], sub, s, im, jm)
    return cols


def cross_table(cov: Cov, S: np.ndarray, T: np.ndarray, imax: int, jmax: int,
                lam_S: float | None = None, part: str = "both") -> np.ndarray | None:
    """``C[i, j]`` (``0 <= i <= imax``, ``0 <= j <= jmax``): upper bounds on ``y_S^T A_ST y_T`` over unit,
    nonnegative y_S (at most i nonzeros, on S) and y_T (at most j, on T); zero when i or j is 0.
    None when the data are held neither as X nor as A.

    Proof.  With ``P = (A_ST)_+`` entrywise and I, J the supports: ``y_S^T A_ST y_T <= y_S^T P y_T``
    (``y >= 0``) ``<= ||P_IJ||_2 <= ||P_IJ||_F``.  ``||P_IJ||_F^2`` is at most the sum over the rows
    s in I of the j largest ``P_st^2`` of row s, hence at most the sum of the i largest such row
    sums (rows), and likewise at most the sum of the j largest column sums of the i largest
    ``P_st^2`` of column t (columns); the smaller of the two is used.  Rounding: an entry of
    ``A_ST`` computed as ``X_S^T X_T / m`` is off by at most ``gamma_m sqrt(A_ss A_tt)`` (``gamma_m
    = m eps / (1 - m eps)``, Cauchy–Schwarz on ``|x_s|^T |x_t|``), so every entry is raised by
    ``2 (m + 2) eps sqrt(max A_ss max A_tt)`` before ``(.)_+^2``; the sums of at most ``imax jmax``
    squares are raised by ``1 + 4 (imax + jmax + 2) eps``.  Memory: ``|S| x 2048`` entries of
    ``A_ST`` at a time (through X: then the columns the screen keeps, at most 2^23 entries) plus
    ``|S| x jmax`` and ``imax x jmax`` running tops; nothing n x n.

    Through X, T's columns go in decreasing variance and stop where no column left can enter a top
    (:func:`_screen`; ``lam_S``: an upper bound on ``lambda_max(A_SS)``, else its trace): the same
    table (the tops are of the same squares) from the products of the columns before that point only;
    there in float32 where X allows (:func:`_single`, :func:`_delta32`: half the CPU of the products).

    ``part``: ``"cols"`` (``"rows"``) computes only the column (row) sums' bound, each a valid table on
    its own (the screen then only serves that part: it stops earlier); the elementwise minimum of the two
    is the table of ``"both"``, float for float.  Issue 39: on MLL at k = 65..200 the column bound alone
    gave every coupled bound, at 0.4-0.5 of the CPU.
    """
    S, T = np.asarray(S), np.asarray(T)
    s, jm, im = S.size, min(int(jmax), T.size), min(int(imax), S.size)
    C = np.zeros((int(imax) + 1, int(jmax) + 1))
    if im == 0 or jm == 0:
        return C
    level = None
    if cov.X is not None:
        X = cov.X
        m = X.shape[0]
        XS = X[:, S]
        dS = np.einsum("ij,ij->j", XS, XS) / m
        dT = cov.diag()[T]
        delta = 2 * (m + 2) * _EPS * np.sqrt(float(dS.max()) * float(dT.max())) * (1 + 4 * m * _EPS)
        X32 = _single(X, m)
        if X32 is not None:  # the products in float32 (half the CPU of float64's), a wider allowance
            XS, X = X32[:, S], X32
            delta = _delta32(m, float(dS.max()), float(dT.max()))
        order = np.argsort(-dT, kind="stable")
        T, dT = T[order], dT[order]
        lam = float(lam_S) if lam_S is not None else float(dS.sum()) * (1 + 2 * s * _EPS)

        def level(rows_min: np.ndarray, theta: float) -> float:
            return _screen(dS, lam, delta, rows_min, theta)

        def sq(prod):
            return _squares_up(np.divide(prod, m, dtype=np.float64), delta)

        def prods(cols):
            return XS.T @ X[:, cols]

        def squares(cols):
            return sq(prods(cols))
    elif cov._A is not None:
        A = cov._A

        def squares(cols):
            return _squares_up(A[np.ix_(S, cols)], 0.0)
    else:
        return None
    scan = cov.X is not None and _SCAN
    by_row, by_col = part != "cols", part != "rows"
    # per row of S: its jm largest squares so far (any order); per i: the jm largest column sums (of the i
    # largest squares) so far.  A part not computed: one column of +inf (its screen then never binds)
    rows = np.zeros((s, jm)) if by_row else np.full((s, 1), np.inf)
    cols = np.zeros((im, jm)) if by_col else np.full((im, 1), np.inf)
    pos, fresh = 0, by_row  # fresh: rows holds its zeros yet (no square kept)
    while pos < T.size:
        size = _BLOCK if level is None or pos else min(_BLOCK, max(_FIRST, int(_FIRST_PER_J * jm)))
        if level is not None and pos:
            # T in decreasing variance: the columns left that the screen keeps are the next ones, in
            # one block (at most _WIDE entries); none: no column from here on can enter a top
            lv = level(rows.min(axis=1), float(cols[0].min()))
            if lv > 0:  # (0: a top not yet full, another block as usual)
                size = min(int(np.count_nonzero(dT[pos:] * (1 + _SCREEN_REL) > lv)), max(_BLOCK, _WIDE // s))
                if size == 0:
                    break
        span = T[pos:pos + size]
        pos += span.size
        if scan and span.size > 1 and not (by_row and fresh):
            # through X after the first block: the block's squares in one pass, chunk by chunk (_scan), and
            # formed again for the columns kept below only: the same floats as the block written out
            prod, new, rmin = prods(span), None, rows.min(axis=1) if by_row else None
            (r, v), (mx, tot) = _scan(prod, m, delta, rmin, by_col)
            if r is not None:
                rows = _row_tops_gathered(rows, r, v, jm)
            elif by_row:  # (more than a quarter of the block above its rows' tops: as the former route)
                P2 = sq(prod)
                new = P2[:, (P2 > rmin[:, None]).any(axis=0)]

            def block(keep, prod=prod):
                return sq(prod.T[keep])
        else:
            P2 = squares(span)
            mx, tot = (P2.max(axis=0), P2.sum(axis=0)) if by_col else (None, None)

            def block(keep, P2=P2):
                return P2.T[keep]
            # rows: a column at most every row's jm-th largest square so far changes no row's jm largest
            # (on MLL ~80% of the columns after the first block)
            if by_row and not fresh:
                over = P2 > rows.min(axis=1)[:, None]
                if np.count_nonzero(over) * 4 <= over.size:  # (few entries above their rows' tops: gathered)
                    rows = _row_tops_entries(rows, P2, over, jm)
                    new = None
                else:
                    new = P2[:, over.any(axis=0)]
            else:
                sel = (P2 > rows.min(axis=1)[:, None]).any(axis=0) if by_row else None
                new = None if sel is None else P2 if sel.all() else P2[:, sel]  # (no copy: the columns go first)
        # columns: each column's i largest squares over S (all of S is in the block), summed for every i.
        # A column whose total is below theta, the (jm + 1)-th largest single square (of the block's
        # columns and the kept ones, cols[0]), is not needed in any i's jm largest sums: jm + 1 others have
        # a largest square >= theta (its own is below it), each kept (cols[0]) or kept here (its total is at
        # least its largest square, so at least theta), and its sums are <= its total (issue 39: most of T's
        # columns on gene data; the partitions were 2/3 of the table's cost).  (A total AT theta is kept:
        # until the twenty-second round it was dropped, and where every such column had one nonzero square --
        # one row in S, or duplicate columns of T with every other square 0 -- the jm columns making theta could
        # all go, the column part then below the brute force's: helper wide30's test_cross_staged.py)
        # Likewise at each i: a column's sum of its i largest is at most min(total, i x its largest), and
        # one at most every i's jm-th largest sum so far is not needed either (raised by 1e-12: the
        # same sums in another order)
        if by_col:
            cols = _col_tops_staged(cols, mx, tot, block, s, im, jm)
        if new is not None and new.shape[1]:  # (after the columns: ``new`` may be the block itself, partitioned)
            rows = _row_tops(rows, new, jm, fresh)
            fresh = False
    infl = 1 + 4 * (im + jm + 2) * _EPS
    # rows: for each j, the sum of the i largest row sums of the j largest squares
    if by_row:
        by_rows = _row_sums(rows, im)                                        # im x jm
    else:
        by_rows = np.inf
    by_cols = np.cumsum(-np.sort(-cols, axis=1), axis=1) if by_col else np.inf  # im x jm
    C[1:im + 1, 1:jm + 1] = np.sqrt(np.minimum(by_rows, by_cols) * infl) * (1 + 2 * _EPS)
    # beyond the sizes of S or T nothing more can be chosen: the largest value stands
    C[im + 1:, :] = C[im:im + 1, :]
    C[:, jm + 1:] = C[:, jm:jm + 1]
    return C


def _row_sums(rows: np.ndarray, im: int) -> np.ndarray:
    """``im x jm``: for each j, the sums of the i largest (i = 1..im) of the rows' sums of their j largest entries
    (``rows``: ``s x jm``, any order per row, values ``>= 0``): the floats of the former ``R = cumsum(-sort(-rows,
    axis=1), axis=1)``, ``cumsum(-sort(-R, axis=0), axis=0)[:im]``.  The same floats: each row's values in
    descending order (an ascending sort read backwards: the same values), summed in that order; then each column
    of R's im largest (a partition of R's transpose, contiguous, then sorted: the same multiset, hence the same
    descending sequence) summed in that order (np.cumsum adds in order whatever the strides).  Issue 39,
    twenty-second round: the sort down R's columns (a strided sort of all s rows) was ~2x this at s = 923..1,209."""
    R = np.cumsum(np.sort(rows, axis=1)[:, ::-1], axis=1)                  # s x jm: sum of j largest
    top = _largest_descending(R.T.copy(), im)                               # jm x im, descending
    return np.cumsum(top, axis=1).T


def cols_first(cov: Cov, S: np.ndarray, T: np.ndarray, imax: int, jmax: int, lam_S: float | None = None):
    """For a table computed as its column part first (:func:`cross_table` with ``part="cols"``): a callable
    returning its row part (``part="rows"``), computed at the first call only (the caller merges the two
    by their elementwise minimum: :func:`.coupled._cross_cols_first`)."""
    memo: dict = {}

    def rows():
        if "C" not in memo:
            memo["C"] = cross_table(cov, S, T, imax, jmax, lam_S, part="rows")
        return memo["C"]

    return rows
