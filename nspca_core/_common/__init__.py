"""Numerical building blocks shared by the solvers and the certificates.

A private package: its modules expose names without a leading underscore, the
project's internal API, which the solvers, the peers, the certificates and the
Dask front import from here rather than from one another.  Inputs are assumed
validated (the public fronts check them).

- :mod:`.ascent` — the one truncated power ascent (batched, many starts as columns),
  top-k masks with data-derived tie-breaks, support reweighting.
- :mod:`.polish` — the polish of local optima (reweighting, then ascents while either gains).
- :mod:`.pairs` — the exact optimum for k <= 2 (all pairs in closed form).
- :mod:`.rank1` — the rank-1 problem: ``I_k^+(v)`` and the exact rank-1 point.
- :mod:`.points` — a deterministic sign, the leading eigenvector, a Result from a point.
- :mod:`.eig` — the top eigenpairs, past LAPACK's subset solver when it fails.
- :mod:`.params` — the one table of parameters the fronts check by (:data:`~.params.PARAMETERS`).
- :mod:`.options`, :mod:`.scale` — unknown-option errors; scale normalization of results.
"""
