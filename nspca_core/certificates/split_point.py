"""The split certificate's screen and feasible point (:func:`.single._certify_split`): the screened set S
(features of largest variance plus the point's support), an upper bound on ``lambda_max(A_SS)`` through X, and
the point itself when none is given.  Moved out of :mod:`.coupled` unchanged (the module limit)."""

from __future__ import annotations

import numpy as np

from ..operators.cov import Cov
from . import grow_cross
from .bounds import _thin_lambdas
from .budget import fits, step
from .cheap import _quad_held
from .lower import _ascent_many, _fit_lower, _starts


def _screened(dg: np.ndarray, x: np.ndarray, s: int) -> tuple[np.ndarray, np.ndarray]:
    """(S, T): the s features of largest variance plus the support of ``x`` (its s largest
    entries when it has more, so that S stays small: the DNN's cost), and the rest.  Inside
    :func:`.grow_cross.cross_growth` (a larger screen of :mod:`.screens`), a screen above the own
    size is grown by the cross term instead (:func:`.grow_cross.screened`)."""
    return grow_cross.screened(dg, x, s, _by_variance)


def _by_variance(dg: np.ndarray, x: np.ndarray, s: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_screened`'s screen by variance (the s largest plus x's support)."""
    Smask = np.zeros(dg.size, dtype=bool)
    Smask[np.argsort(-dg, kind="stable")[:s]] = True
    sup = np.flatnonzero(x)
    if sup.size > s:
        sup = sup[np.argsort(-x[sup], kind="stable")[:s]]
    Smask[sup] = True
    return np.flatnonzero(Smask), np.flatnonzero(~Smask)


def _lambda_S(cov: Cov, S: np.ndarray) -> float:
    """An upper bound on ``lambda_max(A_SS)`` through ``X_S``'s m x m Gram (thin data): its top
    eigenvalue plus :func:`.bounds._gram_eig`'s tolerance."""
    w, _, tol = _thin_lambdas(cov.X[:, S], cov.X.shape[0], 1)
    return float(w[0] + tol)


def _split_lower(cov: Cov, k: int, x, dg: np.ndarray, work: float, cfg: dict, budget, info: dict, gram=None,
                 after_fit: bool = True):
    """The split certificate's feasible point and value, through X (never n x n): the given
    ``x``, else the best of the largest variance (under a time limit), fit(auto) and the batched ascent from
    :func:`.lower._starts`; with ``after_fit`` False (the eager route's: thin data that :func:`.route.split_cheaper`
    sends here, a path's every k) the ascent only where fit(auto) gave no point (not run in time, or not feasible).

    (Issue 39, helper point34: the ascent cost about as much as fit(auto) there, 11-16% of the thin gene paths' CPU,
    and its starts are fit(auto)'s own rank-1 ones (both signs of a vector give one rank-1 point) plus the next
    largest variances.  On the three thin paths' 597 k (60 x 2,500, 72 x 1,000, 48 x 1,800) it found fit(auto)'s
    support at all but 3 (72 x 1,000 k = 160, 169, 173: 1.2e-6 .. 3.3e-6 more), 1 ulp more or less.  On wide data it
    is kept: MLL k = 29 / 32, 1.5e-4 / 8.3e-5 more (and fit(auto) 2.3e-4 / 9.2e-4 more at k = 23 / 24); golub- and
    dlbcl-shaped: the same point at 15 k each.)"""
    if x is not None:
        info["lower_source"] = "given"
        return x, cov.quad(x)
    found = []
    if budget is not None:  # any time limit affords the largest variance
        e = np.zeros(cov.n)
        e[int(np.argmax(dg))] = 1.0
        found.append((_quad_held(cov, e), e, "variance"))
    if fits(budget, "fit", work):
        with step(budget, "fit", work):
            r = _fit_lower(cov, k)
        if r is not None:
            found.append((r[1], r[0], "fit(auto)"))
    if (after_fit or not found_fit(found)) and fits(budget, "ascent", work):
        with step(budget, "ascent", work):
            if cov.X is not None and cov.thin:
                w, U, _ = _thin_lambdas(cov.X, cov.X.shape[0], 3, gram)
            else:
                U = None
            X0 = _starts(cov, k, U, cfg["ascent_starts"])
            xa, fa = _ascent_many(cov, k, X0)
        found.append((fa, xa, "ascent"))
    lower, x, src = max(found, key=lambda t: t[0])
    info["lower_source"] = src
    return x, lower


def found_fit(found: list) -> bool:
    """Whether :func:`_split_lower`'s candidates hold fit(auto)'s point (then the ascent is not run)."""
    return any(src == "fit(auto)" for _, _, src in found)
