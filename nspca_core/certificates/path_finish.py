"""The dense path's certificates, one per k, from the bounds it holds (the last step of :func:`.path.certify_path`)."""

from __future__ import annotations

import time

import numpy as np

from .single import _finish


def path_certificates(uniq, lows, LX, src, ub, env, cheap, exact, own, anchored, branched, onek, spec, n,
                      t_all, callback) -> dict:
    """``{k: Certificate}`` from the path's bounds and, where it ran (``onek``), certify(k)'s (each
    k's time: its share of the run plus its DNN runs).  Every certificate's ``info["path_runs"]``: the k where
    certify(k)'s own computation ran (as the large-n path reports them, :func:`.path_large.path_large`)."""
    p = uniq.size
    share = (time.perf_counter() - t_all) / p
    runs = sorted(int(k) for k in onek)
    out = {}
    for i, k in enumerate(uniq):
        k = int(k)
        bounds = {name: float(v[i]) for name, v in cheap.items()}
        if k in exact:
            bounds["exact(k<=2)"] = exact[k]
        info = {"n": n, "lower_source": src[i], "eig_tolerance": spec.tol, "path_runs": list(runs)}
        if k in own:
            bounds["dnn"] = own[k][0]
            info["dnn"] = own[k][1]
        if k in anchored:
            bounds["anchored"] = anchored[k]
        if k in branched:
            bounds["anchored(branch)"] = branched[k]
        if k in onek:  # certify(k)'s own bounds at k, name by name (the smaller where both have one)
            for name, v in onek[k].bounds.items():
                bounds[name] = min(bounds.get(name, np.inf), float(v))
            info["one_k"] = onek[k].kind
        if np.isfinite(env[i]) and (k not in own or env[i] < own[k][0]):
            bounds["dnn(tangent)"] = float(env[i])
        if ub[i] < min(bounds.values()):
            bounds["monotone"] = float(ub[i])
        t0 = time.perf_counter() - share - (own[k][2] if k in own else 0.0)
        out[k] = _finish(bounds, float(lows[i]), LX[:, i].copy(), k, t0, info)
    if callback is not None:
        callback(p, p)
    return out
