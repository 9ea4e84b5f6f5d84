"""The split bound's coupled terms at given values of S's bounds (:mod:`.coupled`): the terms and their sparsities,
the terms at given ``B_S(i)``, what a goal value asks of each term, and the feasible values of x cut to its i
largest entries (the floor under any ``B_S(i)``).  Moved out of :mod:`.coupled` unchanged (the module limit)."""

from __future__ import annotations

import numpy as np

from ._settings import _EPS
from .cross import coupled_terms


def _terms(BS: np.ndarray, BT: np.ndarray, k: int, kS: int, cross) -> tuple[np.ndarray, np.ndarray]:
    """The coupled bound's terms (unrounded) and their sparsities ``i = k - j`` of S, as :func:`_coupled`."""
    j = np.arange(BT.size)
    ok = (k - j >= 0) & (k - j <= kS)
    i = k - j[ok]
    a, b = BS[i], BT[j[ok]]
    if cross is None:
        return a + b, i
    return coupled_terms(a, b, cross[np.minimum(i, cross.shape[0] - 1), np.minimum(j[ok], cross.shape[1] - 1)]), i


def _meets(goal: float, b, c=None):
    """The largest ``a`` whose coupled term with ``b`` (and cross bound c) is at most ``goal``
    (before rounding; arrays of terms, ``-inf`` where ``b >= goal``): ``a + b <= goal`` always
    suffices, and ``lambda_max([[a, c], [c, b]]) <= goal`` when ``(goal - a)(goal - b) >= c^2``.
    Only chooses where to test: the bound is what is proved."""
    b = np.asarray(b, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = goal - b
        if c is not None:
            a = np.maximum(a, goal - np.asarray(c, dtype=float) ** 2 / (goal - b))
    return np.where(b >= goal, -np.inf, a * (1 - 64 * _EPS))


def _terms_at(a: np.ndarray, b: np.ndarray, c: np.ndarray | None) -> np.ndarray:
    """The coupled terms with ``B_S(i) = a`` (:func:`_terms`, arrays)."""
    return a + b if c is None else coupled_terms(a, b, c)


def _truncated_all(AS: np.ndarray, x: np.ndarray, ii: np.ndarray) -> np.ndarray:
    """:func:`_truncated` at every sparsity of ``ii``: x's entries in decreasing order, the value of
    the first i of them normalized, from one cumulative sum of the ordered quadratic form."""
    o = np.argsort(-x, kind="stable")
    o = o[x[o] > 0]
    if o.size == 0:
        return np.zeros(ii.size)
    y = x[o]
    Q = (AS[np.ix_(o, o)] * y[:, None]) * y[None, :]
    Qc = np.cumsum(np.cumsum(Q, axis=0), axis=1)
    at = np.minimum(ii, o.size) - 1
    return np.diagonal(Qc)[at] / np.cumsum(y * y)[at]


def _ascended(AS: np.ndarray, x: np.ndarray, ii: np.ndarray, steps: int) -> np.ndarray:
    """Feasible values on ``AS`` at the sparsities ``ii`` (each >= 1), at least :func:`_truncated_all`'s: from x
    cut to its i largest entries, ``steps`` nonnegative truncated power steps (``y <- top_i(max(AS y, 0))``,
    normalized), the largest ``y^T AS y`` met.  Each y is unit, nonnegative and has at most i nonzeros, so each
    value is at most S's optimum at i (up to rounding): a floor under any ``B_S(i)``.  All columns at once."""
    ii = np.asarray(ii, dtype=int)
    best = _truncated_all(AS, x, ii)
    o = np.argsort(-x, kind="stable")
    o = o[x[o] > 0]
    if o.size == 0 or ii.size == 0:
        return best
    n = AS.shape[0]
    first = np.arange(o.size)[:, None] < ii[None, :]  # (x's i largest entries per column)
    Y = np.zeros((n, ii.size))
    Y[o] = np.where(first, x[o][:, None], 0.0)
    Y /= np.linalg.norm(Y, axis=0)
    within = np.arange(n)[:, None] < ii[None, :]
    AY = AS @ Y
    for _ in range(steps):
        W = np.maximum(AY, 0.0)
        keep = np.zeros(W.shape, dtype=bool)
        np.put_along_axis(keep, np.argsort(-W, axis=0, kind="stable"), within, axis=0)
        W = np.where(keep, W, 0.0)
        norm = np.linalg.norm(W, axis=0)
        ok = norm > 0
        if not ok.any():
            break
        Y[:, ok] = W[:, ok] / norm[ok]
        AY = AS @ Y
        best[ok] = np.maximum(best[ok], np.einsum("ij,ij->j", Y[:, ok], AY[:, ok]))
    return best
