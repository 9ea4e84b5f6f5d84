"""The sparsity-coupled split bound (:func:`.single._certify_split`): ``max_j B_S(k - j) + B_T(j)``
over the screened set S and the rest T, its terms sharpened where they bind (anchored row sums at a
sparsity of S, the cross term of S and T: :mod:`.cross`)."""

from __future__ import annotations

import numpy as np

from .._common.rank1 import rank1_point
from ..operators.cov import Cov
from .dnn import dnn_tangent
from ..result import Certificate
from ._settings import _EFFORT, _EPS, _DNN_PASSES, anchor_affordable, anchor_cost
from .budget import fits, step
from .cross import coupled_terms
from .dual import _anchored
from .lower import _ascent_many

# the cross term only up to this k: it keeps k values for each feature of the rest T
_CROSS_MAX_K = 256


# the coupled bound's binding sparsities of S refined by the anchored row sums while their counted
# cost (_settings.anchor_cost) stays within this many "auto" DNN runs on S (was: at most 64
# refinements, each at i <= 64; 64 refinements near i = k = 50 count as about 30 runs on S's 600)
_COUPLED_REFINE_RUNS = 30
_COUPLED_REL = 1e-3  # their resolution (one term of a sum; 5e-5 costs twice the tests)


def _coupled_refined(covS: Cov, certS: Certificate, stS, kS: int, BT: np.ndarray, k: int,
                     pair: float | None, make_cross=None, lower: float = -np.inf,
                     stop: float = 1.0, budget=None) -> tuple[float, dict, np.ndarray | None]:
    """:func:`_coupled`, sharpened until ``lower >= stop x bound`` (or nothing more to sharpen).

    First the plain coupling; then, for ``k <= _CROSS_MAX_K``, the cross term of S and T
    (``make_cross()``: :func:`.cross.cross_table`, see :func:`_coupled`); then ``B_S(i)`` where it
    binds: while the maximum over j of the terms sits at an ``i = k - j`` in ``3..kS - 1`` whose
    ``B_S(i)`` is only the DNN's tangent (weak at small sparsity, where the anchored row sums are
    strong), the anchored row-sum bound at sparsity i on ``A_SS`` (:func:`.dual._anchored`, a proof
    at i: :func:`nspca_core.certificates.anchor.anchored_rowsum_test`) replaces it, while the refinements'
    counted cost stays within :data:`_COUPLED_REFINE_RUNS` DNN runs on S (no sparsity limit).
    Valid as :func:`_coupled` is: each ``B_S(i)``
    stays an upper bound on S's optimum at sparsity i.  On a 78 x 7,600 gene matrix at k = 10..50
    the rest T added 3.5-19% to a screened bound within 1.5% of the answer: the tangent at ``k - 1``
    was the loose term.  Returns ``(bound, {i: B_S(i)}, C)``: the sharpened values and the cross
    table (None when not computed), for the path's bounds at other k (``inf`` at a sparsity tried
    where nothing was proved).  ``budget``
    (:class:`.budget.Budget`): the cross table and each refinement only when it fits."""
    sharper: dict[int, float] = {}
    dS = covS.diag()
    val, i = _coupled(certS, stS, dS, kS, BT, k, pair, argmax=True)
    if lower >= stop * val or certS.x is None or BT.size <= 1 or k > _CROSS_MAX_K or i >= k:
        return val, sharper, None  # (i = k: S's own bound binds, nothing of T to sharpen)
    nS, nT = dS.size, BT.size
    cross = None
    if make_cross is not None and fits(budget, "rest", float(nS) * nT * max(k, 16)):
        with step(budget, "rest", float(nS) * nT * max(k, 16)):
            cross = make_cross()
    AS = covS.dense()  # (held already: S's own certificate is the dense one)
    tried: set[int] = set()
    cfg = _EFFORT["auto"]
    runs = cfg["iters"] + cfg["cut_rounds"] * cfg["cut_iters"]
    allowance = _COUPLED_REFINE_RUNS * runs * _DNN_PASSES * float(nS) ** 2
    spent = 0.0
    while True:
        val, i = _coupled(certS, stS, dS, kS, BT, k, pair, sharper, argmax=True, cross=cross)
        if (lower >= stop * val or i in tried or not 3 <= i < kS or spent + anchor_cost(nS, i) > allowance
                or not anchor_affordable(nS, i, runs)
                or not fits(budget, "anchored", float(nS) ** 2 * max(i, 8))):
            return val, sharper, cross
        tried.add(i)
        spent += anchor_cost(nS, i)
        # a feasible value at i opens the anchored bound's bracket: S's answer cut to its i largest
        # entries, then the ascent at sparsity i
        with step(budget, "anchored", float(nS) ** 2 * max(i, 8)):
            _, lower_i = _ascent_many(covS, i, rank1_point(np.asarray(certS.x, dtype=float), i)[:, None])
            current = _coupled_bs(certS, stS, dS, kS, pair, sharper)[i]
            tb = _anchored(AS, i, float(lower_i), current, rel_tol=_COUPLED_REL) if lower_i > 0 else None
        # (inf: tried, nothing proved; a path charges the test's counted cost: path_large.run_charge)
        sharper[i] = tb if tb is not None else np.inf


def _coupled_bs(certS: Certificate, stS, dS: np.ndarray, kS: int, pair: float | None = None,
                sharper: dict | None = None) -> np.ndarray:
    """``B_S(i)`` for ``i = 0..kS`` as :func:`_coupled` uses them (then made nonincreasing toward
    smaller i: a bound at a larger sparsity holds at a smaller one)."""
    nS = dS.size
    BS = np.full(kS + 1, float(certS.upper_bound))
    BS[0] = 0.0
    if pair is not None and kS >= 2:
        BS[2] = min(BS[2], pair)
    # lambda_max(A_JJ) <= tr(A_JJ) <= the sum of the i largest variances in S (exact at i = 1)
    BS[1:] = np.minimum(BS[1:], np.cumsum(-np.sort(-dS)[:kS]) * (1 + 4 * dS.size * _EPS))
    lam = (certS.info.get("dnn") or {}).get("lam")
    if stS is not None and lam is not None and kS >= 1:
        BS[1:] = np.minimum(BS[1:], dnn_tangent(float(lam), stS, nS, np.arange(1, kS + 1)))
    for i, v in (sharper or {}).items():
        if 1 <= i <= kS:
            BS[i] = min(BS[i], v)
    return np.minimum.accumulate(BS[::-1])[::-1]


def _coupled(certS: Certificate, stS, dS: np.ndarray, kS: int, BT: np.ndarray, k: int,
             pair: float | None = None, sharper: dict | None = None, argmax: bool = False,
             cross: np.ndarray | None = None):
    """``max_{j} B_S(k - j) + B_T(j)`` of :func:`_certify_split` (rounded up), ``B_S(i) =
    min(B_S(kS), DNN tangent at i, sum of the i largest variances dS, sharper[i])`` for
    ``1 <= i <= kS`` (:func:`_coupled_bs`), ``B_S(0) = 0``, and ``B_S(2) <= pair`` (the exact
    k = 2 optimum on S, rounded up, when given); ``BT[j]`` for ``j = 0..min(k, |T|)``.
    ``argmax``: also return the sparsity ``i = k - j`` of S where the maximum sits.  ``cross``
    (``C[i, j]``, :func:`.cross.cross_table`): each term is ``lambda_max([[B_S(i), c], [c, B_T(j)]])``
    with ``c = min(C[i, j], sqrt(B_S(i) B_T(j)))`` instead of the sum (proof in :mod:`.cross`; the
    term is nondecreasing in i and j as the sum is, so ``i = k - j`` still dominates)."""
    BS = _coupled_bs(certS, stS, dS, kS, pair, sharper)
    j = np.arange(BT.size)
    ok = (k - j >= 0) & (k - j <= kS)
    if not ok.any():
        return (np.inf, -1) if argmax else np.inf
    i = np.clip(k - j[ok], 0, kS)
    a, b = BS[i], BT[j[ok]]
    if cross is None:
        vals = a + b
    else:
        vals = coupled_terms(a, b, cross[np.minimum(i, cross.shape[0] - 1), np.minimum(j[ok], cross.shape[1] - 1)])
    val = float(vals.max()) * (1 + 4 * _EPS)
    return (val, int(k - j[ok][int(np.argmax(vals))])) if argmax else val
