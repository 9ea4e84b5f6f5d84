"""The joint anchored test's sorted top block from lists kept across its iterations (issue 39, the twenty-seventh
round): :func:`joint_top` gives :func:`.anchor_sums._joint_ratio` the block it sorted from each row's whole candidate
list, float for float, reading most rows from a narrower list made at an earlier iterate.

The joint test (:func:`.anchor.anchored_joint_test`) iterates ``r <- min(r, G(r))``; every pass gathered, multiplied
and sorted each row's L kept candidates (``n x L``: 1,229 x 796 at golub-shaped k = 200, ~6 of its ~9 ms) to read
the ``qmax`` largest capped products.  Its ratios only decrease (within a test, and from one test to the next of
:func:`.coupled._aimed`, which starts from the last failure's ratios), so a product at r is at most the same
product at any earlier iterate r0 >= r.

:class:`JointLists` keep, per row, the ``W`` candidates of the largest products at the iterate where the row's list
was made, and ``drop``: the (W + 1)-th largest float32 product there, so every product left out is at most ``drop``
at every ``r <= r0`` (the float32 products are monotone in r: :func:`.anchor_f32._prods32`, a rounded product and
its rounding to float32 are, and :func:`.anchor_f32.up32` is).  At r, where the row's ``qmax``-th largest capped
product over its list is at least ``drop``, its ``qmax`` largest capped products are the whole list's as a
multiset (:func:`.anchor_sums._narrowed_sums`' argument: every product left out is at most ``drop``, hence at most
each value of the block; where the cap is at least ``drop`` the capped blocks are the same as well: both are the
products above the cap and copies of it), so the block sorted ascending is the same float32 array.  Every other
row ("short") is sorted from its whole list as before (a row's products, sort and block do not read other rows),
and its list is made again there (from that sort: its ``drop`` the (W + 1)-th value, no argpartition).  The lists
follow the iterates: a call whose ratios are not entrywise at most the lists' (a new test from the all-ones start,
another caller) sorts every row from its whole list and makes them again.

Nothing here is a bound: :func:`joint_top` returns the block :func:`.anchor_sums._joint_ratio` would sort, the same
float32 values in the same places, so every ratio, iterate and proof of the joint tests is the one before."""

from __future__ import annotations

import numpy as np

from .anchor_f32 import _exact_in_any_order, _prods32, _sum_exact, _sum_up, _top32

# a row's list keeps this many candidates: qmax and half as many again, at least _EXTRA_MIN more (golub-shaped k =
# 200, the aimed tests' 39 passes: with a quarter more, 53..1,229 rows short per pass for the first 15 passes; with
# half more, 12..460 from the third pass, <= 7 from the twenty-fifth)
_EXTRA, _EXTRA_MIN = 0.75, 16
# lists for rows with at least this many candidates beyond the list's (narrower: no gain) and tables of at least
# this many rows (below, the row sums' extra NumPy calls cost more than the sort spares)
_MIN_SPARED, _MIN_ROWS = 64, 192
# where more than this share of the rows fell short at a pass, the next sorts every row whole (the lists made again)
_COLD = 0.5


def width(qmax: int) -> int:
    """The candidates a list keeps for blocks of up to ``qmax``."""
    return qmax + max(_EXTRA_MIN, int(qmax * _EXTRA))


class JointLists:
    """Per row, ``W`` candidates (``idx`` columns; values ``vals`` float64, or ``vals32`` where the rows keep float32
    values) and ``drop``: at the ratios ``r`` (entrywise at least those of every row's making), every product of the
    row's candidates left out is at most ``drop`` (float32).  ``cold``: the next call sorts every row whole."""

    def __init__(self, rows, r: np.ndarray, p32: np.ndarray, s32: np.ndarray, w: int):
        n, L = p32.shape
        self.idx = np.empty((n, w), dtype=rows.idx.dtype)
        self.vals = None if rows.vals32 is not None else np.empty((n, w))
        self.vals32 = None if rows.vals32 is None else np.empty((n, w), dtype=np.float32)
        self.drop = np.empty(n, dtype=np.float32)
        self.r = np.array(r, dtype=float)
        self.cold = False
        self.make(rows, np.arange(n), p32, s32)

    def make(self, rows, sel: np.ndarray, p32: np.ndarray, s32: np.ndarray) -> None:
        """The lists of the rows ``sel`` from their whole lists' float32 products ``p32`` (as gathered, column order)
        and the same sorted ascending (``s32``): ``drop`` the (W + 1)-th largest value, the W kept every candidate
        above it and the first ones equal to it (in column order) up to W: every candidate left out is at most
        ``drop``."""
        m, L = p32.shape
        w = self.idx.shape[1]
        drop = s32[:, L - w - 1]
        keep = p32 > drop[:, None]
        cnt = np.count_nonzero(keep, axis=1)  # (at most w: the w + 1 largest are at least drop)
        if not (cnt == w).all():  # (ties at drop: the first w - cnt of them in column order)
            eq = p32 == drop[:, None]
            keep |= eq & (np.cumsum(eq, axis=1) <= (w - cnt)[:, None])
        flat = np.flatnonzero(keep).reshape(m, w)
        flat += (sel * L - np.arange(m) * L)[:, None]  # (into the whole table's rows sel)
        self.idx[sel] = np.take(rows.idx.reshape(-1), flat)
        if self.vals32 is not None:
            self.vals32[sel] = np.take(rows.vals32.reshape(-1), flat)
        else:
            self.vals[sel] = np.take(rows.vals.reshape(-1), flat)
        self.drop[sel] = drop

    def prods32(self, r: np.ndarray) -> np.ndarray:
        """The kept candidates' float32 products at r: :func:`.anchor_f32._prods32` of the lists (``idx``, ``vals``,
        ``vals32`` as a table's rows)."""
        return _prods32(self, r)


def _whole(rows, r: np.ndarray, sel=None, keep: bool = False):
    """The rows' (``sel``, default all) float32 products over their whole lists, sorted ascending (in place); with
    ``keep`` also the products as gathered (a copy, for :meth:`JointLists.make`)."""
    p32 = _prods32(rows, r, sel)
    raw = p32.copy() if keep else None
    p32.sort(axis=1)
    return p32, raw


def joint_top(rows, r: np.ndarray, qmax: int, update: bool = True) -> np.ndarray:
    """The joint test's block at ratios r: per row its ``qmax`` largest candidate products capped
    (``max(p, cap)``), ascending, ``n x qmax`` float32 -- the floats of sorting every row's whole list, taken from
    the rows' :class:`JointLists` (``rows.joint_lists``) where they hold (the module's docstring).  ``update``
    (the test's own passes): the lists are made, made again and moved to r; else (another evaluation of the same
    map: :mod:`.thin_contract`) read only.  Callers: rows of at most ``_JOINT_SORT_UPTO`` candidates, ``qmax < L``."""
    n, L = rows.idx.shape
    cap = rows.cap32[:, None]
    w = width(qmax)
    if n < _MIN_ROWS or L - w < _MIN_SPARED or not _finite(rows):
        p32, _ = _whole(rows, r)
        return np.maximum(p32[:, L - qmax:], cap)
    lists = getattr(rows, "joint_lists", None)
    usable = lists is not None and not lists.cold and lists.idx.shape[1] > qmax and bool((r <= lists.r).all())
    if not usable:
        make = update and _following(rows, "joint_last", r)
        p32, raw = _whole(rows, r, keep=make)
        if make:
            rows.joint_lists = JointLists(rows, r, raw, p32, w)
        return np.maximum(p32[:, L - qmax:], cap)
    p32 = lists.prods32(r)
    p32.sort(axis=1)
    W = p32.shape[1]
    top = p32[:, W - qmax:]
    np.maximum(top, cap, out=top)
    short = (top[:, 0] < lists.drop).nonzero()[0]
    if short.size:
        s32, raw = _whole(rows, r, short, keep=update)
        top[short] = np.maximum(s32[:, L - qmax:], cap[short])
        if update:
            lists.make(rows, short, raw, s32)
    if update:
        lists.r = np.array(r, dtype=float)
        lists.cold = short.size > _COLD * n
    return top


def plain_eligible(rows) -> bool:
    """Whether the plain test's row sums take :func:`plain_kept` (dense rows: values kept float64, tables of
    :data:`_MIN_ROWS` rows and more whose lists are at least :data:`_MIN_SPARED` candidates narrower)."""
    n, L = rows.idx.shape
    q = rows.m
    return rows.vals32 is None and n >= _MIN_ROWS and q > 0 and L - width(q) >= _MIN_SPARED and _finite(rows)


def _finite(rows) -> bool:
    """Whether the rows' kept values are all finite (asked once per rows): then every product at ratios in [0, 1] is
    a number (no inf times 0), so each row's comparisons with ``drop`` count its candidates (no NaN)."""
    got = rows.__dict__.get("_lists_finite")
    if got is None:
        vals = rows.vals if rows.vals32 is None else rows.vals32
        got = rows.__dict__["_lists_finite"] = bool(np.isfinite(vals).all())
    return got


def plain_kept(rows, r: np.ndarray) -> np.ndarray:
    """The plain test's row sums (:func:`.anchor_sums._plain_sums` of the whole rows, ``whole=True``) float for
    float, most rows from lists kept across the passes (``rows.plain_lists``, :class:`JointLists` at ``q = k - 1``).

    The same floats.  The whole rows' sum of a row is, where its capped q largest products (sorted ascending) are
    exact in any order (:func:`.anchor_f32._exact_in_any_order`), their exact sum rounded up (``_sum_exact``:
    every order of the additions gives it, so also the partitioned block's casting sum, ``_sum_up``), and
    otherwise ``_sum_up`` of the row's own np.partition block (a row's selection and sum do not read other rows).
    A row whose list holds (its q-th largest capped product at least ``drop``: the module's docstring) has that
    very block as a multiset, sorted ascending the same array, so the exact case is the same float; the other rows
    (short of their lists, or not exact) are summed from their whole lists as before, and the short ones' lists
    made again there.  ``rows.lists_read_only`` (:func:`.thin_contract.plain`'s extra evaluations): the lists are
    read, never made or moved."""
    q = rows.m
    n, L = rows.idx.shape
    cap = rows.cap32[:, None]
    update = not getattr(rows, "lists_read_only", False)
    lists = getattr(rows, "plain_lists", None)
    usable = lists is not None and not lists.cold and lists.idx.shape[1] > q and bool((r <= lists.r).all())
    short = np.zeros(0, dtype=np.intp)
    if usable:
        p32 = lists.prods32(r)
        p32.sort(axis=1)
        top = p32[:, p32.shape[1] - q:]
        np.maximum(top, cap, out=top)
        short = (top[:, 0] < lists.drop).nonzero()[0]
    else:
        make = update and _following(rows, "plain_last", r)
        p32, raw = _whole(rows, r, keep=make)
        if make:
            rows.plain_lists = JointLists(rows, r, raw, p32, width(q))
        top = np.maximum(p32[:, L - q:], cap)
    s = _sum_exact(top)
    if short.size:  # (their whole lists: sorted, the exact sums; the lists made again from the same sort)
        s32, raw = _whole(rows, r, short, keep=True)
        tb = np.maximum(s32[:, L - q:], cap[short])
        s[short] = _sum_exact(tb)
        top[short] = tb  # (their blocks now the whole lists': the exactness test below reads them)
        if update:
            lists.make(rows, short, raw, s32)
    bad = (~_exact_in_any_order(top)).nonzero()[0]
    if bad.size:  # (a sum that may round: the former float, the row's own partitioned block)
        s[bad] = _sum_up(_top32(_prods32(rows, r, bad), q, rows.cap32[bad]))
    if usable and update:
        lists.r = np.array(r, dtype=float)
        lists.cold = short.size > _COLD * n
    return s


def _following(rows, key: str, r: np.ndarray) -> bool:
    """Whether a pass at r follows one at ratios entrywise at least r (kept on the rows under ``key``; set to r
    here): lists are made from such a pass only -- a test's first pass (from the all-ones start, or another
    test's ratios) is followed by its largest move, where lists made there fell short on most rows (golub-shaped
    k = 200: 1,141 of 1,229 rows at the second pass)."""
    last = getattr(rows, key, None)
    setattr(rows, key, np.array(r, dtype=float))
    return last is not None and last.shape == r.shape and bool((r <= last).all())
