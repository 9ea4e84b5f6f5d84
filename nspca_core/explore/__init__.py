"""Exploration helpers: what the spannogram pages draw, computed here (no plotting).

For a rank-d factor ``V`` (n x d) and a unit direction ``c``, the vector
``v = Vc`` has the candidate supports ``I_k^+(v)`` and ``I_k^+(-v)`` (the k
largest nonnegative entries of ``±v``).  As ``c`` moves on the sphere the
candidates change only where two rows of ``V`` (or a row and the zero row)
agree: on the circle for d = 2 (the spannogram curves), along great circles
meeting at triple-intersection vertices for d = 3.  The best of the candidate
supports is the optimum of ``max_{x in S_k^n} ||V^T x||^2``
(Asteris, Papailiopoulos & Dimakis, ICML 2014, §3–4, Figs. 1–2).

Modules: :mod:`~nspca_core.explore.d2` (:func:`spannogram_curves_d2`),
:mod:`~nspca_core.explore.d3` (:func:`spannogram_cells_d3`) and what both use,
:mod:`~nspca_core.explore.supports` (distinct supports, Alg. 1's point of each).
"""

from __future__ import annotations

from .d2 import SpannogramD2, spannogram_curves_d2
from .d3 import SpannogramD3, _sph, spannogram_cells_d3  # noqa: F401  (_sph: tested directly)
from .supports import _pd_small  # noqa: F401  (tested directly)

__all__ = ["SpannogramD2", "SpannogramD3", "spannogram_curves_d2", "spannogram_cells_d3"]
