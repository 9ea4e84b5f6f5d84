"""The dense path's last runs of certify(k)'s own computation (:func:`far_runs`): at the k whose DNN bound
is carried from farthest away.

Why: certify(k)'s DNN is a short run (from the KKT point or the screening start, 14-24 iterations and one cut
round on a 400 x 180 factor-plus-noise matrix) whose value is noisy in k (certify(79) = 83.46 below
certify(76) = 83.81); a tangent carried 10-20 k from the path's nearest DNN run was up to 0.6% above it
(k = 71..99 on both seeds of that matrix), while on CBCL, where the path's runs lie a few k apart in that band,
the path is below certify(k) at every k.  Rigour: nothing new; each run is certify(k)'s, its bound and its dual
point's tangent (:func:`.dnn.dnn_tangent`) carried as in :func:`.path._one_k_runs`.
"""

from __future__ import annotations

import numpy as np

# a k is run only when the nearest k with a DNN run of its own is at least this far (CBCL: none is, in the band
# below; at 2 the runs at k = 50 gained 1 bound; the factor-plus-noise matrices: 79, 84, 97, 105 / 78, 84, 96, 103)
MIN_DIST = 6


def far_runs(uniq, pos, lows, upper, binds, ran, run_one, cost, budget: float, *, lo_ratio: float,
             hi_ratio: float, min_dist: int = MIN_DIST) -> list:
    """``run_one(k)`` at the k whose certified ratio ``lows / upper()`` lies in ``[lo_ratio, hi_ratio)``, whose
    bound is a DNN tangent (``binds()``), not flat to the next k (the bound of a ``mu = 0`` point there: certify(k)
    stands on its KKT point, :mod:`.path_kkt`) and whose nearest k in ``ran`` (the k with a DNN run of their own;
    each k run is added) is at least ``min_dist`` away, the farthest first, while the counted costs
    (``cost(k)``) add up to at most ``budget``.  Returns the k run."""
    done: list = []
    ran = {int(k) for k in ran}
    kk = np.asarray(uniq, dtype=int)
    spent = 0.0
    while ran:
        ub = upper()
        dist = np.min(np.abs(kk[:, None] - np.array(sorted(ran))[None, :]), axis=1)
        flat = np.append(ub[:-1] >= ub[1:], True)
        ok = (lows >= lo_ratio * ub) & (lows < hi_ratio * ub) & binds() & (dist >= min_dist) & ~flat
        if not ok.any():
            break
        k = int(kk[int(np.argmax(np.where(ok, dist, -1)))])
        if spent + cost(k) > budget:
            break
        spent += cost(k)
        run_one(k)
        ran.add(k)
        done.append(k)
    return done
