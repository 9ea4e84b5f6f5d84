"""Nonnegative-score PCA (Bajorski, Hall & Rubinstein, Statistica Sinica 2013).

Model: each sample ``Y_i = A X_i`` with ``X_i`` a p-vector of nonnegative,
uncorrelated, unit-variance sources and ``A`` an unknown p x p matrix; the
estimator looks for the rotation of the whitened data that makes every score
nonnegative.

- :mod:`~nspca_core.scores.descent` -- :func:`nonneg_scores`, the estimator;
- :mod:`~nspca_core.scores.result` -- :class:`ScoresResult`, its answer;
- :mod:`~nspca_core.scores.geometry` -- whitening, geodesics on the rotations,
  descent directions and the line search;
- :mod:`~nspca_core.scores.compare` -- the paper's simulation cases, the peers
  (nonnegative ICA, PCA, EM, Zass–Shashua) and the comparisons
"""

from __future__ import annotations

from .descent import nonneg_scores
from .result import ScoresResult

# pieces of the search the tests check one by one (their home is .geometry)
from .geometry import _lp_model, _pairs, _paper_direction, _skew, _z_rows  # noqa: F401

__all__ = ["nonneg_scores", "ScoresResult"]
