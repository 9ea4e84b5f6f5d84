"""Large n (:func:`~nspca_core.certificates.certify_path` above the dense size): the path's feasible points at every k
and its certificates from a larger k's bound (``monotone``), moved out of :mod:`.path` (the module limit) unchanged;
certify(k)'s own certificate beside a path's run where certify(k)'s KKT rule parts their ways (:func:`one_k_too`)."""

from __future__ import annotations

import time

import numpy as np

from ..operators.cov import Cov
from ..result import Certificate
from .bounds import _thin_lambdas, _thin_spectrum, cheap_bounds_at
from .lower import _fit_lower, _path_lower
from .route import _certify_cov
from .single import _finish


def _large_lower(cov: Cov, uniq: np.ndarray, given: dict) -> dict:
    """Large n: feasible points for every k of a path, ``{k: (x, source)}`` (source None for a
    caller's point): one batched ascent for all k (:func:`_path_lower`, through the data,
    nothing n x n) where the data allow it, else ``fit(auto)`` at every k (as certify(k) would);
    where the data are held, the path's one-k runs add fit(auto)'s answer at their k."""
    if cov.X is not None and cov.thin:
        _, U, _ = _thin_lambdas(cov.X, cov.X.shape[0], 2)
        LX, lows = _path_lower(cov, uniq, U, given)
    else:
        LX, lows = None, None
    out = {}
    for i, k in enumerate(uniq):
        k = int(k)
        if k in given:
            out[k] = (given[k], None)
            continue
        best = (None, -np.inf, "ascent")
        if LX is not None:
            best = (LX[:, i], float(lows[i]), "ascent(path)")
        if LX is None:
            r = _fit_lower(cov, k)
            if r is not None and r[1] > best[1]:
                best = (r[0], r[1], "fit(auto)")
        x = best[0]
        ok = x is not None and np.linalg.norm(x) > 0
        out[k] = (x / np.linalg.norm(x), best[2]) if ok else (None, None)
    return out


def _large_monotone(cov: Cov, k: int, x: np.ndarray, ub: float) -> Certificate:
    """Large n, a path: the certificate at k from a larger k's bound (``monotone``) and the
    whole-problem ``lambda1`` / ``paper(d=1)`` (through the m x m Gram; proofs in
    :func:`nspca_core.certificates.single._certify_split`)."""
    t0 = time.perf_counter()
    bounds = {"monotone": float(ub)}
    if cov.X is not None and cov.thin:
        bounds.update(cheap_bounds_at(_thin_spectrum(cov.X, cov.X.shape[0], 1), k))
    return _finish(bounds, cov.quad(x), x, k, t0, {"n": cov.n})


def one_k_too(cov: Cov, k: int, x, effort: str, c: Certificate, keep: dict, small: dict | None) -> Certificate:
    """A path's run at k (``c``, :func:`.path_large.path_large`), or certify(k)'s own certificate where smaller.

    Where certify(k)'s S would have stood at its KKT point (``keep["kkt_rule"]``, set by
    :func:`.single._certify_split` on any screen of the run: one-k's ``seen["kkt_stands"]``), the run keeps S's DNN
    (its dual point is carried to other k and polished) and certify(k)'s refinements land elsewhere (issue 39, wide37:
    tighter at one k of an 8 x 200 forced split): certify(k)'s run is then made too (``x``: the caller's point, else
    its own search, as certify(k)), and the smaller bound stands -- the path never looser than certify(k) at a run k.
    Both are proved bounds; the certificate kept is the one whose upper bound is smaller (its own feasible point: the
    path then takes the better of its points, as at every run)."""
    if not (keep.get("kkt_rule") or (small or {}).get("kkt_rule")):
        return c
    one = _certify_cov(cov, k, x, effort)
    one.info["path_one_k"] = "kkt_rule"
    return one if one.upper_bound < c.upper_bound else c
