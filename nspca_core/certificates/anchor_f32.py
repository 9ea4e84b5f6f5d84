"""The anchored row sums' float32 primitives, read by :mod:`.anchor_sums` and :mod:`.anchor_joint` (moved out of
:mod:`.anchor_sums` unchanged, issue 39, the twenty-seventh round, so that neither imports the other): the float32
products of the kept candidates (:func:`_prods32`, :func:`up32`), their top-q selection (:func:`_top32`) and its
float64 sums rounded up for the float32 rounding (:func:`_sum_up`, :func:`_sum_exact`, :func:`_exact_in_any_order`)."""

from __future__ import annotations

import numpy as np

# the row sums' selection runs in float32 (NumPy's partition of n x w float32 is ~1.6x faster than
# float64's, the rowsum tests' main cost; issue 39); each float32 value p' of a product p obeys
# p <= p' (1 + 2^-22) + 2^-149 (round to nearest, subnormals included), so the q largest p' summed in
# float64, times 1 + 2^-22, plus q 2^-149, bound the q largest p from above (the float32 top q
# dominate any q of the p', hence the true top q's)
_SEL32_REL = 1.0 + 2.0 ** -22
_SEL32_ABS = 2.0 ** -149


def _top32(p32: np.ndarray, q: int, cap: np.ndarray) -> np.ndarray:
    """:func:`.anchor_sums._top_sums32` of the float32 products ``p32`` (an array of the caller's own, overwritten: the
    selection runs in place, the same as np.partition's on a copy).  ``cap`` float64 or already float32
    (``AnchorRows.cap32``: the same floats, not cast again)."""
    L = p32.shape[1]
    if q < L:
        p32.partition(L - q, axis=1)
        p32 = p32[:, L - q:]
    return np.maximum(p32, cap.astype(np.float32, copy=False)[:, None])


def _prods32(rows, r: np.ndarray, sel=None) -> np.ndarray:
    """``(A_lm)_+ r_m`` over the kept candidates (of the rows ``sel``, default all), in float32: each the float32
    rounding of the float64 product (the multiply's float64 loop writes its float32 output directly: the floats
    of ``(vals * r[idx]).astype(np.float32)`` without the float64 block); or, where the rows were made inside
    :func:`.anchor_sums.float32_products` (``rows.vals32``), the float32 product of the values and the ratios rounded up
    (:func:`up32`): a product ``v r <= v' r'`` rounded to nearest in float32, so the bound of
    :data:`_SEL32_REL` / :data:`_SEL32_ABS` holds as for the rounded float64 product."""
    idx = rows.idx if sel is None else rows.idx[sel]
    if rows.vals32 is not None:
        t = np.take(up32(r), idx)  # (float32: half the gather's bytes; the multiply a float32 loop)
        t *= rows.vals32 if sel is None else rows.vals32[sel]
        return t
    t = np.take(r, idx)  # (take: ~2x a fancy index's speed)
    return np.multiply(rows.vals if sel is None else rows.vals[sel], t, out=np.empty(t.shape, dtype=np.float32),
                       casting="unsafe")


def up32(a: np.ndarray) -> np.ndarray:
    """float32 values at least ``a`` (float64, ``>= 0``) entrywise, zeros kept zero: ``a (1 + 2^-23)`` rounded in
    float64 (relative error <= 2^-53) then to the nearest float32 (<= 2^-24 in float32's normal range), so at least
    ``a (1 + 2^-23)(1 - 2^-53)(1 - 2^-24) > a``; above float32's range inf; the values below its normal range
    (``a < 2^-125``, where the nearest float32 can be below it) set to ``2^-125``.  (Zeros stay zeros: a subnormal
    float32 in the products costs ~100x a normal multiply on x86; the conditional step up, a comparison and a
    gather, ~15x this at 1,358 x 796.)"""
    b = (a * _UP).astype(np.float32)
    tiny = (a < _TINY) & (a > 0.0)
    if tiny.any():
        b[tiny] = np.float32(_TINY)
    return b


_UP, _TINY = 1.0 + 2.0 ** -23, 2.0 ** -125


def _sum_up(top: np.ndarray) -> np.ndarray:
    """The float64 row sums of a float32 top-q block, rounded up for its float32 selection."""
    return top.sum(axis=1, dtype=np.float64) * _SEL32_REL + top.shape[1] * _SEL32_ABS


def _sum_exact(top: np.ndarray, q: int | None = None) -> np.ndarray:
    """:func:`_sum_up`'s floats on every row of ``top`` whose sum is exact in any order (:func:`_exact_in_any_order`:
    then every order and grouping of the additions gives the one exact sum, so a BLAS product with ones does too;
    its multiplies by 1 are exact, and a fused multiply-add rounds once, to that sum), rounded up the same way, ``q``
    (default the block's width) the padding's count; other rows get other floats (callers sum them again).  Issue 39:
    ~0.4x the time of the casting reduction on CBCL's 361 x 10..60 blocks."""
    q = top.shape[1] if q is None else q
    return (top.astype(np.float64) @ np.ones(top.shape[1])) * _SEL32_REL + q * _SEL32_ABS


def _exact_in_any_order(top: np.ndarray) -> np.ndarray:
    """Per row of an ascending float32 block of q values >= 0 (``lo`` its smallest nonzero value, ``hi`` its
    largest): whether its float64 sum is exact whatever the order and grouping of the additions, by ``hi = 0`` or
    ``q hi < 2^29 lo``.

    Proof.  Zeros add exactly, so the partial sums are those of the nonzero values.  Let u be the unit in the last
    place of lo in float32 (``2^-149`` if lo is subnormal).  Every value ``v >= lo`` is an integer multiple of u
    (its own unit is a power of two >= u), so is every partial sum, and each is at most the total ``<= q hi <
    2^29 lo``.  A normal lo is below ``2^24 u``, a subnormal one below ``2^-126 = 2^23 u``: every partial sum is an
    integer multiple of u below ``2^53 u``, which float64 represents (u >= 2^-149 is far above float64's
    subnormals).  So no addition rounds, and every order gives the exact sum."""
    q = top.shape[1]
    hi = top[:, -1].astype(np.float64)
    lo = top[:, 0].astype(np.float64)
    zero = lo == 0.0
    if not zero.any():  # (then hi >= lo > 0)
        return q * hi < 2.0 ** 29 * lo
    zero = zero.nonzero()[0]  # (rows with zeros: their smallest nonzero value; 0 again where every value is 0)
    t = top[zero]
    lo[zero] = t[np.arange(zero.size), np.argmax(t > 0, axis=1)]
    return (q * hi < 2.0 ** 29 * lo) | (hi == 0.0)
