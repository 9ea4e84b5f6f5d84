"""Monotonicity in k: a bound proved at a larger k and a point found at a smaller k serve at k.

``S_k^n`` grows with k (a point with at most ``k'`` nonzeros has at most k for ``k' <= k``), so
``OPT_k`` is nondecreasing in k: an upper bound on ``OPT_{k'}`` with ``k' >= k`` is an upper
bound on ``OPT_k``, and a feasible value at ``k' <= k`` is a feasible value at k.  Every path,
band and table takes both envelopes (:func:`monotone_envelope`) and says which k proved each side
(``from_k``).
"""

from __future__ import annotations

import time

import numpy as np


def monotone_envelope(ks, upper, lower=None):
    """The monotone envelopes of per-k bounds and feasible values, and where each came from.

    Parameters
    ----------
    ks : sequence of int
        The sparsities (any order, repeats allowed).
    upper : sequence of float
        An upper bound on ``OPT_k`` at each k (``inf`` / ``nan``: none).
    lower : sequence of float, optional
        A feasible value at each k (``-inf`` / ``nan``: none).

    Returns
    -------
    dict
        ``upper``: ``min`` of ``upper`` over every entry with ``k' >= k``; ``upper_from``: the
        k' that proved it (the smallest such k' on ties; the entry's own k when its own bound is
        the minimum); ``lower``: ``max`` of ``lower`` over every entry with ``k' <= k``;
        ``lower_from``: its k' (the largest on ties) — arrays in the order of ``ks``
        (``upper_from`` / ``lower_from`` are -1 where there is no bound / value at all).

    Notes
    -----
    Valid because ``OPT_k <= OPT_{k'} <= upper(k')`` for ``k <= k'`` and
    ``lower(k'') <= OPT_{k''} <= OPT_k`` for ``k'' <= k`` (``S_{k''}^n`` is a subset of
    ``S_k^n``).  Takes no arithmetic: the values are the inputs themselves, so no rounding is
    added.
    """
    ks = np.asarray(list(ks), dtype=int)
    up = np.asarray(list(upper), dtype=float).copy()
    up[np.isnan(up)] = np.inf
    lo = np.full(ks.size, -np.inf) if lower is None else np.asarray(list(lower), dtype=float).copy()
    lo[np.isnan(lo)] = -np.inf
    p = ks.size
    out_u, out_uf = np.full(p, np.inf), np.full(p, -1, dtype=int)
    out_l, out_lf = np.full(p, -np.inf), np.full(p, -1, dtype=int)
    # descending k for the upper side (ties in k: the smallest value), ascending for the lower side
    order = np.lexsort((up, -ks))
    best, best_k = np.inf, -1
    i = 0
    while i < p:
        j = i
        while j < p and ks[order[j]] == ks[order[i]]:
            j += 1
        grp = order[i:j]
        g = int(grp[np.argmin(up[grp])])
        if up[g] <= best and np.isfinite(up[g]):  # its own k on ties: the nearest proof
            best, best_k = float(up[g]), int(ks[g])
        out_u[grp], out_uf[grp] = best, best_k
        i = j
    order = np.lexsort((-lo, ks))
    best, best_k = -np.inf, -1
    i = 0
    while i < p:
        j = i
        while j < p and ks[order[j]] == ks[order[i]]:
            j += 1
        grp = order[i:j]
        g = int(grp[np.argmax(lo[grp])])
        if lo[g] >= best and np.isfinite(lo[g]):
            best, best_k = float(lo[g]), int(ks[g])
        out_l[grp], out_lf[grp] = best, best_k
        i = j
    return {"upper": out_u, "upper_from": out_uf, "lower": out_l, "lower_from": out_lf}


def carry_envelope(ks, certs: dict, given: dict) -> list:
    """Post-pass (:func:`~nspca_core.certificates.monotone.monotone_envelope`): at each k the
    smallest upper bound proved at any k' >= k (``monotone``) and the best feasible point found at
    any k'' <= k (unless the caller gave x for that k: then lower stays x^T A x of the given
    point); ``info["from_k"] = {"upper": k', "lower": k''}`` says which k proved each side.
    (Moved here from :mod:`.path`; :func:`.single._finish` is imported at the call, as this module is
    imported before :mod:`.single`.)"""
    from .single import _finish

    uniq = sorted(certs)
    own = [min(v for name, v in certs[k].bounds.items() if name != "monotone") for k in uniq]
    own = [max(u, certs[k].lower) if np.isfinite(certs[k].lower) else u for u, k in zip(own, uniq)]
    lows = [certs[k].lower for k in uniq]
    env = monotone_envelope(uniq, own, lows)
    out = {}
    for i, k in enumerate(uniq):
        c = certs[k]
        b = {name: v for name, v in c.bounds.items() if name != "monotone"}
        kf_up = int(env["upper_from"][i])
        if kf_up != k and env["upper"][i] < min(b.values()):
            b["monotone"] = float(env["upper"][i])
        else:
            kf_up = k
        lower, x, info, kf_lo = c.lower, c.x, dict(c.info), k
        if k in given:  # the caller's point at k is the certificate's lower bound
            pass
        elif env["lower_from"][i] >= 0 and env["lower"][i] > c.lower:
            j = uniq.index(int(env["lower_from"][i]))
            lower, x, kf_lo = certs[uniq[j]].lower, certs[uniq[j]].x, uniq[j]
            info["lower_source"] = "monotone"
        info["from_k"] = {"upper": kf_up, "lower": kf_lo}
        out[k] = _finish(b, lower, x, k, time.perf_counter() - c.seconds, info)
    return [out[k] for k in ks]
