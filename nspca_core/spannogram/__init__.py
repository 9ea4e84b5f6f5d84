"""The spannogram: exact ``max_{x in S_k^n} ||V^T x||^2`` for a rank-d factor V.

Asteris, Papailiopoulos & Dimakis, "Nonnegative Sparse PCA with Provable
Guarantees", ICML 2014: Alg. 1 (solve (P_d) on every candidate support) and
Alg. 2 (the candidate supports ``S_d``).  The paper assumes rows of V in
general position; this module does not (ties, zero, duplicated and linearly
dependent rows are handled exactly, see :func:`candidate_supports`).
"""

from __future__ import annotations

from .budget import MAX_CANDIDATES, EnumerationCost, enumeration_cost
from .solve import candidate_supports, lowrank_nspca

__all__ = ["candidate_supports", "lowrank_nspca", "enumeration_cost", "EnumerationCost", "MAX_CANDIDATES"]
