"""The comparisons of Bajorski, Hall & Rubinstein (2013); they live in :mod:`nspca_core.scores.compare`.

This path (``nspca_core.scores_compare``) keeps working for the app, the
benchmarks and the reproduction.
"""

from .scores.compare import *  # noqa: F401,F403
from .scores.compare import METHODS, RATE_A, __all__, match_columns, rate_error  # noqa: F401
