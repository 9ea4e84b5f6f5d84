"""The anchored row sums' arithmetic (:mod:`nspca_core.certificates.anchor`'s row fixpoint): the products
``(A_lm)_+ r_m`` of each row's kept candidates in float32, the largest q of them per row selected and summed in
float64, rounded up so that every sum bounds the exact one from above; the joint test's sums at several sizes
and its ratio per row.  Moved here from anchor.py (issue 39, tenth round; the module limit), unchanged but for
the sorted rows (:data:`_SORT_UPTO`) and the joint ratio (:func:`_joint_ratio`).  ``rows`` is an
:class:`nspca_core.certificates.anchor.AnchorRows` throughout (not imported: anchor imports this module)."""

from __future__ import annotations

import contextlib
import contextvars

import numpy as np

from .._common.kth import survivor_table
from .anchor_f32 import (_SEL32_ABS, _SEL32_REL, _exact_in_any_order, _prods32, _sum_exact, _sum_up,  # noqa: F401
                         _top32, up32)
from .anchor_joint import joint_top, plain_eligible, plain_kept



def _top_sums32(prod: np.ndarray, q: int, cap: np.ndarray) -> np.ndarray:
    """Per row, an upper bound on the sum of the q largest of ``max(prod, cap)`` (float64 ``prod``
    and ``cap``; selected in float32, summed in float64: see :data:`_SEL32_REL`).  With
    ``q >= prod.shape[1]`` every entry.  Returns the float32 top-q block too (callers drop its
    smallest entry per row for one fewer)."""
    return _top32(prod.astype(np.float32), q, cap)




# the products in float32 of values and ratios rounded up (:func:`float32_products`), only for rows whose values
# stay below this (a ratio is at most 1, so no product overflows; inf times a zero ratio would be NaN)
_VALS32_MAX = 1e30
_INF32 = np.float32(np.inf)
_F32: contextvars.ContextVar = contextvars.ContextVar("anchor_float32_products", default=False)


@contextlib.contextmanager
def float32_products():
    """A block (one thin certificate: :func:`nspca_core.certificates.route.certify_thin`) whose
    :class:`~nspca_core.certificates.anchor.AnchorRows` keep their values rounded up to float32 (``vals32``), so
    the row sums' products are float32 multiplies of float32 gathers (:func:`_prods32`): issue 39, the gather and
    the multiply ~35% of a thin certificate's CPU (g60x2500 k = 100..200), ~40% less in float32.  The bounds move
    by the rounding (~2^-23 relative on a product, upward), every proof kept.  Nothing is kept after the block."""
    token = _F32.set(True)
    try:
        yield
    finally:
        _F32.reset(token)


def vals32_of(vals: np.ndarray):
    """``rows.vals32``: the candidates' values rounded up to float32 inside :func:`float32_products` (values below
    :data:`_VALS32_MAX`), else None (the float64 products rounded to float32, as before)."""
    if not _F32.get() or not vals.size or not float(vals.max()) < _VALS32_MAX:
        return None
    return up32(vals)


def _plain_sums(rows, r: np.ndarray, whole: bool = False) -> np.ndarray:
    """``s_l``: the ``k - 1`` largest of ``(A_lm)_+ r_m`` (kept candidates, padded with the cap),
    rounded up (:func:`_top_sums32`).

    Rows of at most :data:`_SORT_UPTO` candidates are sorted rather than partitioned (faster there); the float64
    sum of a row's block is the former one (np.partition's order's) where it is exact in any order
    (:func:`_exact_in_any_order`), and the other rows (values over more than ~2^29 / q: 0.4% of the CBCL path's)
    are summed as before (np.partition of their own products: a row's selection and sum do not depend on
    the other rows)."""
    q, L = rows.m, rows.idx.shape[1]
    if not whole and plain_eligible(rows):
        return plain_kept(rows, r)  # (dense rows: lists kept across the passes, the same floats, :mod:`.anchor_joint`)
    if not whole and (rows.vals32 is not None or rows.n >= _SORT_ROWS_FROM) and 0 < q and _narrow_width(q) < L:
        return _narrowed_sums(rows, r)  # (the thin route's rows, and the dense rows sorted below: narrowed)
    if not 0 < q < L <= _SORT_UPTO or rows.n < _SORT_ROWS_FROM:
        return _sum_up(_top32(_prods32(rows, r), q, rows.cap32))
    p32 = _prods32(rows, r)
    p32.sort(axis=1)
    top = np.maximum(p32[:, L - q:], rows.cap32[:, None])  # (ascending)
    s = _sum_exact(top)
    bad = (~_exact_in_any_order(top)).nonzero()[0]
    if bad.size:
        p32 = _prods32(rows, r, bad)
        s[bad] = _sum_up(_top32(p32, q, rows.cap32[bad]))
    return s


def _narrow_width(q: int) -> int:
    """The candidates a narrowed row keeps (:func:`_narrowed_sums`) for sums of q: a quarter more, at least 16."""
    return q + max(16, q // 4)


class _Narrowed:
    """Each row's :func:`_narrow_width` (or ``width``) largest products at ratios ``r0`` (their columns ``idx`` and
    values, ``vals32`` float32 inside :func:`float32_products`, else ``vals`` float64: taken from the rows' own
    lists) and ``drop``, the largest float32 product of the rest there.  Every product of the rest at ratios ``r <=
    r0`` (entrywise) is at most ``drop``: the float32 products are monotone in r (:func:`up32`, a rounded product
    and its rounding to float32 are)."""

    def __init__(self, rows, r: np.ndarray, width: int | None = None):
        L, w = rows.idx.shape[1], _narrow_width(rows.m) if width is None else width
        p32 = _prods32(rows, r)
        if width is None and _BY_VALUE:  # (the row sums' lists: by the values' partition, :func:`_largest_flat`)
            keep, self.drop = _largest_flat(p32, w)
        else:
            pos = np.argpartition(p32, L - w - 1, axis=1)  # (ascending: the w largest after position L - w - 1)
            at = np.arange(rows.n)
            self.drop = p32[at, pos[:, L - w - 1]]
            # (the kept entries gathered through the flat index: the arrays np.take_along_axis gives, ~0.6x its time)
            keep = pos[:, L - w:] + (at * L)[:, None]
        self.idx = np.take(rows.idx.reshape(-1), keep)
        self.vals32 = None if rows.vals32 is None else np.take(rows.vals32.reshape(-1), keep)
        self.vals = np.take(rows.vals.reshape(-1), keep) if rows.vals32 is None else None
        self.r0 = np.array(r, dtype=float)

    def prods32(self, r: np.ndarray) -> np.ndarray:
        """The kept candidates' float32 products at ``r``, the floats :func:`_prods32` gives them."""
        if self.vals32 is not None:
            p32 = np.take(up32(r), self.idx)
            p32 *= self.vals32
            return p32
        t = np.take(r, self.idx)
        t *= self.vals  # (the float64 products, then their float32 rounding: the floats of the casting multiply)
        return t.astype(np.float32)


# _Narrowed's lists for the row sums (:func:`_narrowed_sums`) by :func:`_largest_flat` (False: np.argpartition's, the
# former route; the same sums float for float)
_BY_VALUE = True


def _largest_flat(p32: np.ndarray, w: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``p32`` (n x L, L > w, no NaN), the flat indices (into ``p32.reshape(-1)``, n x w, each row's
    ascending) of w of its largest entries, and ``drop``, the row's (w + 1)-th largest value: the value
    np.argpartition's ``pos[:, L - w - 1]`` gives (a partition puts the same value at each place).  The kept
    VALUES are the row's w largest as a multiset (every entry above ``drop`` is kept, the rest of the w are entries
    equal to it: the first ones in column order, where np.argpartition keeps some tied ones); only which tied
    columns are kept and their order may differ from np.argpartition's.  :func:`_narrowed_sums` reads neither:
    a row whose q-th largest narrowed product is at least ``drop`` gets the sum of the whole row's q largest (a
    multiset), summed where exact in any order; every other row is summed from its whole list.  So its sums are
    the same floats.  ~0.5x np.argpartition's time (the values' partition, a comparison and np.flatnonzero)."""
    n, L = p32.shape
    drop = np.partition(p32, L - w - 1, axis=1)[:, L - w - 1]
    keep = p32 > drop[:, None]
    cnt = np.count_nonzero(keep, axis=1)  # (at most w: the w + 1 largest are at least drop)
    if not (cnt == w).all():  # (ties at drop: the first w - cnt of them in column order)
        eq = p32 == drop[:, None]
        keep |= eq & (np.cumsum(eq, axis=1) <= (w - cnt)[:, None])
    return np.flatnonzero(keep).reshape(n, w), drop


def _narrowed_sums(rows, r: np.ndarray) -> np.ndarray:
    """:func:`_plain_sums` float for float from narrowed lists (:class:`_Narrowed`, kept on the rows as
    ``rows.narrowed``; made at r where there are none or r is not entrywise at most their ``r0``, and r moved at
    most :data:`_SETTLED` from the last call's and not above it, else this call's sums from the whole rows; dropped
    where more than :data:`_NARROW_REDO` of the rows fell short of them): each row's products over its narrowed
    candidates, sorted; where the q-th largest is at least ``drop`` (every other product's bound), the row's q
    largest are the whole row's (the same float32 values, ascending as the sorted rows' block), so the sum is the
    sorted rows' sum where that block is exact in any order (:func:`_exact_in_any_order`: then also the partitioned
    block's sum); every other row (below ``drop``, or not exact) is summed as before from its whole list
    (np.partition of its own products, :func:`_top32`), the rows' former floats.  Issue 39: in the thin route's
    warm-started tests the q largest products of 1.25 q narrowed candidates were the whole row's at every row and
    iteration measured (g60x2500 k = 200: 452 rows of 452 and 1,358 of 796 candidates, 248 kept).  ``whole`` of
    :func:`_plain_sums`: the former computation (this one's fallback)."""
    q = rows.m
    nar, last = getattr(rows, "narrowed", None), getattr(rows, "narrow_last", None)
    rows.narrow_last = r.copy()
    if nar is None or not (r <= nar.r0).all():
        if last is None or last.shape != r.shape or not (r <= last).all() or float((last - r).max()) > _SETTLED:
            return _plain_sums(rows, r, whole=True)  # (ratios still moving: the whole rows this time)
        nar = rows.narrowed = _Narrowed(rows, r)
    w = nar.idx.shape[1]
    p32 = nar.prods32(r)
    p32.sort(axis=1)
    short = p32[:, w - q] < nar.drop
    top = p32[:, w - q:]
    np.maximum(top, rows.cap32[:, None], out=top)  # (ascending; in place, the products' own array)
    s = _sum_exact(top)
    # (a row short of ``drop`` whose cap is at least ``drop``: its capped block is the whole row's all the same,
    # :func:`_capped_block_same`)
    bad = ((top[:, 0] < nar.drop) | ~_exact_in_any_order(top)).nonzero()[0]
    if bad.size:
        s[bad] = _sum_up(_top32(_prods32(rows, r, bad), q, rows.cap32[bad]))
    if np.count_nonzero(short) > _NARROW_REDO * rows.n:
        rows.narrowed = None  # (made again where the ratios settle)
    return s


def node_lists(rows, r0: np.ndarray):
    """Narrowed lists (:class:`_Narrowed`, :data:`_NODE_EXTRA` more candidates than the largest sum) for the
    branch-and-bound nodes of one anchored test (:func:`nspca_core.certificates.anchor._branch_all`) at its ratios
    ``r0``: every node below starts at or under them; None where they would not be narrower than the rows (or the
    rows are few: :data:`_SORT_ROWS_FROM`)."""
    w = rows.m + _NODE_EXTRA
    if rows.m < 1 or w >= rows.idx.shape[1] or rows.n < _SORT_ROWS_FROM:
        return None
    return _Narrowed(rows, r0, width=w)


def node_free(rows, nar, r: np.ndarray, fixed: np.ndarray, blocked: np.ndarray, q: np.ndarray, qmax: int):
    """The free part of :func:`nspca_core.certificates.anchor.node_sums` (per row the ``q_l`` largest capped
    products of its free candidates, ``q`` taking the values ``qmax`` and ``qmax - 1``, 0 elsewhere) float for
    float, from narrowed lists ``nar`` made at ratios at or above ``r`` (:func:`node_lists`; ``fixed``: the node's
    members and non-members, ``blocked`` the same on the rows' whole lists).

    The same floats: the blocked products are zeros in both lists; a row's products outside ``nar`` are at most
    ``nar.drop`` at r (:class:`_Narrowed`), so where the ``qmax``-th largest of its narrowed ones is at least that,
    its ``qmax`` largest (capped) are the whole row's, as a multiset; sorted, the block's float64 sum is the one
    :func:`_sum_up` gives the whole row's partitioned block where it is exact in any order
    (:func:`_exact_in_any_order`), and so is the sum without its smallest value (the rows taking one fewer: a
    part of a block exact in any order is).  Every other row is summed as node_sums sums it (np.partition of
    its own products; a row's selection and sums do not depend on the other rows)."""
    w = nar.idx.shape[1]
    p32 = nar.prods32(r)
    p32[fixed[nar.idx]] = 0.0
    p32.sort(axis=1)
    top = p32[:, w - qmax:]
    np.maximum(top, rows.cap32[:, None], out=top)  # (ascending)
    fewer = (q == qmax - 1) & (q > 0)
    free = np.where(q >= qmax, _sum_exact(top), 0.0)
    if fewer.any():
        free[fewer] = _sum_exact(top[fewer, 1:], qmax)
    bad = (((top[:, 0] < nar.drop) | ~_exact_in_any_order(top)) & ((q >= qmax) | fewer)).nonzero()[0]
    if bad.size:
        prod = _prods32(rows, r, bad)
        prod[blocked[bad]] = 0.0
        t = _top32(prod, qmax, rows.cap32[bad])
        qb = q[bad]
        free[bad] = np.where(qb >= qmax, _sum_up(t), 0.0)
        fb = (qb == qmax - 1) & (qb > 0)
        if fb.any():
            t = t[fb]
            t[np.arange(t.shape[0]), np.argmin(t, axis=1)] = 0.0
            free[bad[fb]] = _sum_up(t)
    return free


# the node lists' candidates beyond the largest sum's (node_lists: a node's members and non-members are zeros there;
# CBCL's branchings at k = 6..13, q <= 12)
_NODE_EXTRA = 24


# _narrowed_sums: the narrowed lists dropped where more than this share of the rows fell short of them; made only at
# ratios that moved at most this (entrywise, from the last call's) and not above them: a cold test's ratios move fast
# in its first iterations, and lists made there fell short at the next (g60x2500 k = 200: 2-3 lists made and dropped
# a certificate at every call from the second, ~0.05 of ~0.3 CPU s)
_NARROW_REDO, _SETTLED = 0.05, 0.02




# the row sums' selection sorts each row (NumPy's sorting networks for small float32 arrays) where rows hold at
# most this many candidates, and partitions them above (CBCL n = 361, w = 240 / 360: sort 0.17 / 0.34 ms,
# partition 0.25 / 0.44; w = 448: equal for the plain sums, and the joint test's sort of its top block spared;
# w = 588..784 partition ahead for the plain sums)
_SORT_UPTO = 512
# ... and from this many rows (the plain sums; below, the check and its NumPy calls cost more than the sort
# spares: n x w = 20 x 20 9 -> 20 us, 130 x 130 68 -> 72 us; 200 x 116 79 -> 74, 361 x 48..256 -5..-8%)
_SORT_ROWS_FROM = 192
# the joint test sorts its rows up to this many candidates (its block is sorted anyway: partition + sort of the
# top block 1.15 / 1.76 / 1.90 ms, the rows sorted 1.09 / 1.56 / 1.67 ms at golub-shaped k = 150 / 200 (n x w =
# 923 x 588, 1,229 x 784 / 796), min of 15; measured up to w = 796, partitioned above as before)
_JOINT_SORT_UPTO = 800


def _joint_sums(rows, r: np.ndarray, qs: np.ndarray) -> np.ndarray:
    """``n x len(qs)``: per row l and hypothesis t, an upper bound on the sum of the ``qs[t]`` largest
    ``(A_lm)_+ r_m`` (kept candidates padded with the cap, as :func:`_plain_sums`): the ``max qs``
    largest of ``max(prod, cap)`` selected in float32 (:func:`_top_sums32`), sorted, summed cumulatively
    in float64 (a sequential sum of nonnegative terms: the caller's ``(k + 4) eps`` covers it, as it
    covers :func:`_sum_up`'s), each prefix rounded up for the float32 selection as :func:`_sum_up`."""
    qmax = int(qs.max())
    top = _top32(_prods32(rows, r), qmax, rows.cap)
    top.sort(axis=1)  # (in place, its own array; descending as a reversed view: the values of -sort(-top))
    top = top[:, ::-1]
    top = top[:, :qmax]  # (q >= the candidates kept: every one of them)
    csum = np.cumsum(top, axis=1, dtype=np.float64)
    q = np.minimum(qs, top.shape[1])
    return csum[:, q - 1] * _SEL32_REL + q * _SEL32_ABS


# _joint_ratio: from this many rows the prefix sums run one column of rows at a time (one NumPy call per
# column), below it np.cumsum along each row (one call; a dependent chain of additions per row)
_COLUMNWISE_FROM = 256


def _joint_ratio(rows, r: np.ndarray, qs: np.ndarray, gapT: np.ndarray, inflate: float,
                 update: bool = True) -> np.ndarray:
    """The joint test's ratio per row, ``(_joint_sums(rows, r, qs) * inflate / gap).max(axis=1)`` float for float
    (``gapT``: ``gap.T`` contiguous, ``len(qs) x n``), the prefix sums taken hypothesis-major.

    The same floats: the block is :func:`_joint_sums`' (the ``max qs`` largest, sorted descending); cast to
    float64 (exact) and transposed, its prefix sums are ``c_j = c_{j-1} + v_j`` in the order of j, each row's
    additions the same and in the same order as np.cumsum's accumulate along the row; then every entry is
    scaled by the same operations in the same order (``* _SEL32_REL + q _SEL32_ABS``, ``* inflate``,
    ``/ gap``) and the maximum is exact.  Faster at n ~ 700..1,200 rows (dlbcl-/golub-shaped k = 120..200:
    ~0.6 -> ~0.4 ms of a ~2.3 ms iteration): np.cumsum along a row of ~100..200 entries is one dependent chain
    of additions per row, the column loop adds n rows at once (since the twenty-seventh round one
    np.add.accumulate down the columns, the same additions in the same order, the block cast in one copy)."""
    qmax = int(qs.max())
    L = rows.idx.shape[1]
    if L <= _JOINT_SORT_UPTO and qmax < L:  # (sorted rows, most from the lists kept across the passes: the same
        top = joint_top(rows, r, qmax, update)  # block float for float, :mod:`.anchor_joint`)
    elif qmax >= L:  # (sorted rows: their top block sorted too, the same values)
        top = _prods32(rows, r)
        top.sort(axis=1)
        top = np.maximum(top, rows.cap32[:, None])  # (max with the cap keeps the order)
    else:
        top = _top32(_prods32(rows, r), qmax, rows.cap32)
        top.sort(axis=1)  # (ascending, in place: read reversed below)
    w = top.shape[1]  # (q >= the candidates kept: every one of them)
    q = np.minimum(qs, w)
    if rows.n < _COLUMNWISE_FROM:
        csum = np.cumsum(top[:, ::-1], axis=1, dtype=np.float64)
        return ((csum[:, q - 1] * _SEL32_REL + q * _SEL32_ABS) * inflate / gapT.T).max(axis=1)
    c = np.empty((w, rows.n))  # w x n, descending down each column (cast in the copy: one pass, no n x w float64)
    np.copyto(c, top.T[::-1])
    np.add.accumulate(c, axis=0, out=c)  # (c_j = c_{j-1} + v_j in the order of j: the column loop's additions)
    s = c[q - 1]
    s *= _SEL32_REL
    s += (q * _SEL32_ABS)[:, None]
    s *= inflate
    s /= gapT
    return s.max(axis=0)


# AnchorRows' preselection (select_block): every _PRESEL_STRIDE-th column of a row sampled, its threshold the sample's
# (ceil((L + 1) / stride) + _PRESEL_EXTRA)-th largest off-diagonal entry (~stride (L + 1) + 16 columns at or above
# it); rows with at most L or more than _PRESEL_WIDE (L + 1) columns at or above it, or a threshold not positive,
# partitioned whole as before; applied from _PRESEL_FROM (L + 1) columns (below, the whole row is little more)
_PRESEL_STRIDE, _PRESEL_EXTRA, _PRESEL_WIDE, _PRESEL_FROM = 8, 6, 4, 8


def select_block(A: np.ndarray, a: int, b: int, L: int, idx: np.ndarray, cap: np.ndarray, vals: np.ndarray) -> int:
    """:class:`~nspca_core.certificates.anchor.AnchorRows`' lists of the rows ``a:b`` (written into ``idx``, ``cap``
    and ``vals``): per row l, L columns of the largest entries of ``P = (A)_+`` with a zero diagonal, their values
    ``P[l, idx]`` and ``cap_l``, the (L+1)-th largest value of the row.  Returns the rows partitioned whole.

    A row's columns at or above a threshold ``t > 0`` (the sample's, :data:`_PRESEL_STRIDE`) are its survivors;
    where there are at least L + 1 of them (and not too many) they hold the row's L + 1 largest entries (every other
    entry is below t), so the L largest survivors and the (L+1)-th are the row's: ``cap_l`` the same float as the
    whole row's partition, ``vals`` A's own floats there (entries ``>= t > 0``, where ``P = A``), the diagonal
    never kept.  Other rows: the former construction (-P of those rows by np.argpartition).  Issue 39, corpus32:
    the 1,600 x 1,600 topic corpus A at k = 5 (L = 48), AnchorRows ~28 -> ~12 ms (2 of 1,600 rows whole).

    What may differ from partitioning each whole row: the ORDER of a row's idx (and vals), and, where the L-th and
    (L+1)-th largest of a row tie, WHICH of the tied columns are kept.  Neither can break a bound:

    - every use of the lists reads a row as a multiset: the sums are of "the q largest of ``max(P_lm r_m, cap_l)``
      over the kept m" (:func:`_plain_sums`, :func:`_narrowed_sums`, :func:`_joint_sums`, :func:`node_free`,
      ``anchor.node_sums``), ``blocked = fixed[idx]`` is entrywise, and :class:`_Narrowed` keeps the largest products
      with ``drop`` at least every other one whichever tied product it keeps.  Only the float64 ADDITION order of a
      block follows idx' order.  Where a block is exact in any order (:func:`_exact_in_any_order`) every order
      gives the one exact sum; elsewhere the sum is rounded: q <= k - 1 nonnegative terms added in ANY order
      and grouping give at least ``(1 - u)^(q-1)`` times the exact sum (u = 2^-53), and with the four roundings
      after it (``* _SEL32_REL``, ``+ q _SEL32_ABS``, ``* inflate``, ``/ gap``) at least ``(1 - u)^(k + 2)`` times
      it, which the inflation ``1 + (k + 4) eps = 1 + 2 (k + 4) u`` more than covers (:func:`.anchor.
      anchored_rowsum_test`, the guard every row fixpoint applies; ``gap`` is rounded down there too).  So the
      guard already covers any order, and no new one is needed.
    - ties: whichever tied columns are kept, every column not kept has ``P_lm <= cap_l`` (the cap's value is the
      tie's), which is all the bound asks (a term ``P_lm r_m <= cap_l`` with ``r <= 1`` is dominated by the padding).
      With float64 values the kept tied columns even give the same terms: ``max(P_lm r_m, cap_l) = cap_l`` for
      ``P_lm = cap_l``, in float32 too (a monotone rounding); under :func:`float32_products` their values are
      rounded up and the terms may differ, each still an upper bound.
    """
    n, nb, s = A.shape[1], b - a, _PRESEL_STRIDE
    j = -(-(L + 1) // s) + _PRESEL_EXTRA
    ns = -(-n // s)
    whole = np.arange(nb)
    if n >= _PRESEL_FROM * (L + 1) and ns > j:
        V = A[a:b]
        d = np.arange(a, b)
        S = V[:, ::s].copy()  # (every s-th column; the diagonal out of the sample)
        on = (d % s == 0).nonzero()[0]
        S[on, d[on] // s] = -np.inf
        t = np.partition(S, ns - j, axis=1)[:, ns - j]  # (the j-th largest)
        M = V >= t[:, None]
        M[whole, d] = False
        Z, F, ok = survivor_table(V, M, lambda cnt: (t > 0.0) & (cnt > L) & (cnt <= _PRESEL_WIDE * (L + 1)),
                                  index=True)
        good, whole = ok.nonzero()[0], (~ok).nonzero()[0]
        if good.size:
            W = Z.shape[1]
            part = np.argpartition(Z, W - L - 1, axis=1)  # (ascending: the L largest after position W - L - 1)
            top = part[:, W - L:]
            idx[a + good] = np.take_along_axis(F, top, axis=1) - (good * n)[:, None]
            vals[a + good] = np.take_along_axis(Z, top, axis=1)
            cap[a + good] = Z[np.arange(good.size), part[:, W - L - 1]]
    if whole.size:  # (the former construction: -P partitioned, a sign flip exact both ways, -0.0 == 0.0)
        rows = a + whole
        blk = np.maximum(A[a:b] if whole.size == nb else A[rows], 0.0)
        blk[np.arange(whole.size), rows] = 0.0
        np.negative(blk, out=blk)
        part = np.argpartition(blk, L, axis=1)
        np.negative(blk, out=blk)
        idx[rows] = part[:, :L]
        cap[rows] = blk[np.arange(whole.size), part[:, L]]
        vals[rows] = np.take_along_axis(blk, part[:, :L], axis=1)
    return int(whole.size)


# top_test_fails: the witness's rows are this share above the kept width (L + 1 rows bound the cap from below), and
# its nonlinear power steps; the witness must hold with this relative margin (far above every rounding in the test)
_FAILS_ROWS, _FAILS_STEPS, _FAILS_MARGIN = 1.25, 12, 1e-6


def top_test_fails(A: np.ndarray, k: int, tau: float, x, record: dict | None = None) -> bool:
    """True only where ``anchored_rowsum_test(AnchorRows(A, k), tau)`` from the all-ones start is PROVED to fail (a
    float-identical route choice where it is skipped); False proves nothing.  Reads ``A[W, W]`` only, W the
    ``w = _FAILS_ROWS (L + 1)`` rows of largest ``(A x)_l`` (L the rows' kept width): ~1 ms where the test costs
    ~45 ms on the 1,600 x 1,600 A of issue 39's topic corpus, where it fails at k = 10..80.

    Proof.  The test's iterates are ``r' = min(r, G(r))`` from ``r = 1``, proved when every ``r_l < 1``, and its
    computed ``G_l(r) >= T_l(r) / (tau - A_ll)`` (the row sums are rounded up and the gaps down:
    :func:`.anchor.anchored_rowsum_test`'s soundness), ``T_l(r)`` the exact sum of the k - 1 largest of
    ``max(P_lm r_m, cap_l)`` over the kept columns m, P = ``(A)_+`` with a zero diagonal.  A column not kept has
    ``P_lm <= cap_l``, so with ``r <= 1`` its term would be ``cap_l`` too, and T_l is that sum over ALL columns;
    it is monotone in r and in ``cap_l``, and ``cap_l`` (the (L+1)-th largest of row l) is at least ``c_l``, the
    (L+1)-th largest of ``P[l, W]``.  Let ``0 <= rho <= 1`` with ``rho_j = 1``, zero off W, and ``T_l^W(rho) >=
    (tau - A_ll) rho_l`` on W (T^W: the sum over W's columns with ``c_l``, padded with ``c_l`` to k - 1 terms: at
    most T_l).  Then every iterate is at least rho (induction: ``min(r, G(r)) >= min(rho, T(rho)/gap) = rho``), so
    ``r_j = 1`` throughout and the test is never proved (its give-up rules only stop it unproved).  rho: the
    nonlinear power steps of T^W, checked with the products and sums rounded down by ``(k + 4) eps`` and the gaps
    up by ``4 eps``, and :data:`_FAILS_MARGIN`; every iterate (the all-ones start included) is checked as it is
    made, the first that holds ending the steps (any rho meeting the conditions proves it).  Also True where a gap
    ``tau - A_ll`` (the test's own float formula) is not positive: the test's first check fails.  ``record`` (a
    dict): gets ``steps``, the evaluations of T^W made."""
    A = np.asarray(A, dtype=float)  # (as AnchorRows reads it; no copy of a float64 A)
    n, m = A.shape[0], int(k) - 1
    d = np.diag(A)
    eps = np.finfo(float).eps
    if not ((tau - d) - 4 * eps * (abs(tau) + np.abs(d)) > 0).all():
        return True  # (the test's _gaps, the same floats: not all positive, its first check fails)
    from . import _settings as _S  # (anchor's width rule: AnchorRows)
    L = min(max(_S._ANCHOR_WIDTH_PER_K * m, 48, m), n - 1)
    w = min(int(_FAILS_ROWS * (L + 1)), n)
    if m < 1 or x is None or L >= n - 1 or w < L + 1:
        return False
    sup = np.flatnonzero(np.asarray(x) > 0)
    W = np.argsort(-(A[:, sup] @ np.asarray(x, dtype=float)[sup]), kind="stable")[:w]
    B = np.maximum(A[np.ix_(W, W)], 0.0)
    np.fill_diagonal(B, 0.0)
    if not np.isfinite(B).all():
        return False
    c = -np.partition(-B, L, axis=1)[:, L]  # (<= cap_l: the (L+1)-th largest of a part of the row)
    q = min(m, w)
    gap = (tau - d[W]) + 4 * eps * (abs(tau) + np.abs(d[W]))  # (rounded up)

    def T(rho):
        P = np.maximum(B * rho, c[:, None])
        s = P.sum(axis=1) if q >= w else -np.partition(-P, q - 1, axis=1)[:, :q].sum(axis=1)
        return s + (m - q) * c

    rho = np.ones(w)
    for step in range(_FAILS_STEPS + 1):
        t = T(rho)
        if record is not None:
            record["steps"] = step + 1
        # (every iterate is checked as a witness, the all-ones start too: the first one that holds proves it, the
        # steps after it spared; corpus25, the topic corpus at k = 80: 1 evaluation of T^W instead of 13)
        lo = t * (1.0 - (k + 4) * eps)
        if rho.max() == 1.0 and (rho <= 1.0).all() and (lo >= rho * gap * (1.0 + _FAILS_MARGIN)).all():
            return True
        if step == _FAILS_STEPS:
            return False
        s = t / gap
        top = float(s.max())
        if not (np.isfinite(top) and top > 0):
            return False
        rho = s / top  # (its largest entry exactly 1)
    return False


# witness_fails: from this many features (below, the test itself costs about what its witness does)
_WITNESS_MIN_N = 150


def witness_fails(A: np.ndarray, k: int, tau: float, x, seen: dict | None = None) -> bool:
    """Whether :func:`top_test_fails` PROVES that a one-k certificate's first anchored test (:func:`.dual.top_test` at
    ``tau`` from the all-ones start, :func:`.dual.dense_dual`) fails: from :data:`_WITNESS_MIN_N` features, x given.
    Decides only whether that test runs at once (else it is deferred to where a later test starts from its failure:
    the same floats), never a bound.  Issue 39, corpus27: the split route's S on the 3,000 x 1,600 topic corpus (A_SS
    400 x 400 at k = 100), where that test failed at k = 50..100.  ``seen`` (:func:`.dual.top_test`'s record): where
    that very test (this A object, k, tau) HELD, False without asking -- a sound witness cannot prove a held test
    fails, so top_test_fails answers False there.  Issue 39, corpus30: the sparse route's dense branch asked it after
    the test had held (the 3,000 x 1,600 topic corpus, k = 3..7, ~1.5 ms of ~0.11 CPU s)."""
    last = None if seen is None else seen.get("top")
    if last is not None and last[0] is A and last[1] == (int(k), float(tau)) and last[3]:
        return False
    return A.shape[0] >= _WITNESS_MIN_N and x is not None and bool(top_test_fails(A, k, tau, x))
