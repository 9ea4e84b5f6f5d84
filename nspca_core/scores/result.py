"""The answer of nonnegative-score PCA: :class:`ScoresResult`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["ScoresResult"]


@dataclass(frozen=True, eq=False)
class ScoresResult:
    """The answer of :func:`nonneg_scores` (and of the nonnegative-ICA peer).

    Columns are ordered by decreasing ``lambdas``.  With ``r = n_components``:

    Attributes
    ----------
    A : ndarray (p, r)
        Estimated mixing matrix ``Â = Σ̂ Mᵀ B̂ᵀ`` (``Σ̂^{1/2} B̂ᵀ`` when r = p).
    D : ndarray (p, r)
        Unit-norm profiles ``D̂ = Â Λ̂^{-1/2}``.
    W : ndarray (n, r)
        Nonnegative scores ``Ŵ = X̂ Λ̂^{1/2}`` (one row per sample; ``Y ≈ Ŵ D̂ᵀ``).
    lambdas : ndarray (r,)
        ``λ̂_j = ||Â e_j||^2``, decreasing.
    B : ndarray (r, r)
        The rotation, rows permuted into the ``lambdas`` order: ``X̂_i = B̂ M Y_i``.
    negativity : float
        ``S(B̂) = max(0, max_ij -X̂_ij)`` on the given data.
    converged : bool
        False only when ``max_iter`` stopped the descent (a warning is issued).
    iterations : int
        Number of geodesic steps taken (both phases).
    history : ndarray
        ``S`` after each iteration (``history[0]`` at the start, ``B = I``).
    history_sum : ndarray
        Mean of the whitened scores ``Σ_ij Z_ij / n`` after each iteration.
    history_phase : ndarray of int
        1 while lowering the negativity, 2 while maximizing ``Σ Z`` at ``S = 0``,
        3 for a step that applied a random escape rotation.
    history_B : tuple of ndarray (r, r)
        Rotations along the way in the algorithm's (unordered) coordinates,
        thinned to at most ``max_frames``; ``history_B[-1][order] == B``.
    history_iter : ndarray of int
        The iteration number of each entry of ``history_B``.
    sources : ndarray (n, r)
        ``X̂ = Ŵ Λ̂^{-1/2}`` (unit-variance sources).
    whitened : ndarray (n, r)
        ``U = Y Mᵀ``, the whitened (uncentered) data; the cloud at iteration
        t is ``U @ history_B[t].T`` (for animations).
    whitener : ndarray (r, p)
        ``M`` with ``M Σ̂ Mᵀ = I``.
    order : ndarray of int
        The permutation from the algorithm's components to the ``lambdas`` order.
    status : str
        "zero-negativity", "local-minimum" or "max-iter".
    method : str
    params : dict
    seconds : float
    info : dict
    """

    A: np.ndarray
    D: np.ndarray
    W: np.ndarray
    lambdas: np.ndarray
    B: np.ndarray
    negativity: float
    converged: bool
    iterations: int
    history: np.ndarray
    history_sum: np.ndarray = field(default_factory=lambda: np.zeros(0))
    history_phase: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    history_B: tuple = ()
    history_iter: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    sources: np.ndarray | None = None
    whitened: np.ndarray | None = None
    whitener: np.ndarray | None = None
    order: np.ndarray | None = None
    status: str = ""
    method: str = "nspca-scores"
    params: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)
