"""Numerical building blocks shared by the solvers and the certificates.

- :mod:`.ascent` — the one truncated power ascent (batched, many starts as columns),
  top-k masks with data-derived tie-breaks, support reweighting, exact k <= 2.
"""
