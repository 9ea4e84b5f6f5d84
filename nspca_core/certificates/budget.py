"""A time limit for a whole certificate call, and the best bound reported as it improves.

``certify(..., effort="exact", time_limit=T)`` must return within ``T`` (issue 40, item 6: it
ran its "auto" certificate first, unbounded, 21-27 CPU s at n = 2,000 for ``T = 1``).  Every
step of the call asks its :class:`Budget` before it starts: a step that can be stopped (DNN
iterations, branch and bound nodes, anchored tests) checks between its pieces; one that cannot
(an eigendecomposition, forming ``A``) is run only when its *predicted* time fits in what is
left.  Predictions are ``rate[kind] x size`` with the rate of each kind of step learned from its
own last run in this call, and before that from one small probe eigendecomposition timed at
the start (:data:`_PER_PROBE`): they follow the machine's load as it is now.

:class:`BoundReport` tells a caller's ``callback`` the best upper bound proved so far.
"""

from __future__ import annotations

import inspect
import time
from contextlib import contextmanager

import numpy as np

# the probe: one eigh of this size, timed at a budget's first prediction
_PROBE_N = 192

# seconds of a step per unit of its size (n^3 for n x n work, m n^2 for forming A = X^T X / m)
# relative to the probe's seconds per _PROBE_N^3, measured with one BLAS thread (n = 2,000,
# m = 3,000: probe 0.004 s; eigh 1.6 s, top eigenpairs 0.59 s, X^T X 0.26 s, Cholesky 0.14 s,
# fit(auto) 0.39 s, one DNN iteration 0.09 s, one rigorous DNN value 1.15 s, the screening
# start 2.8 s, a branch and bound node at |F| = n 0.7 s) and rounded up: a larger eigh runs
# faster per flop than the probe, so these over-predict by about 2x at n = 2,000
_PER_PROBE = {
    "eigh": 0.5,      # n^3: a full eigendecomposition
    "top": 0.2,       # n^3: the top eigenpairs (_Spectral, subset_by_index)
    "gram": 0.06,     # m n^2: A = X^T X / m
    "fit": 0.15,      # n^3: fit(auto) for the lower bound
    "ascent": 0.05,   # n^3: the truncated-power starts of the lower bound
    "eval": 0.35,     # n^3: a rigorous DNN value (Lanczos or LAPACK, and a Cholesky)
    "screen": 0.8,    # n^3: the DNN's screening start (~15 Lanczos values)
    "iter": 0.03,     # n^3: one DNN iteration
    "node": 0.25,     # |F|^3: one branch and bound node
    "anchored": 20.0,  # n^2 max(k, 8): one anchored bisection
    "rest": 0.3,      # m n min(m, n): the split bound's rest T and its curve
    "rowsum": 30.0,   # n^2: the k largest of each row (memory-bound: ~0.2 s at n = 2,000)
}


class Budget:
    """Seconds left for a certificate call (``clock``: the wall clock by default)."""

    def __init__(self, seconds: float, clock=time.perf_counter, start: float | None = None):
        self.clock = clock
        self.start = clock() if start is None else float(start)
        self.end = self.start + float(seconds)
        self._probe: float | None = None
        self._rate: dict[str, float] = {}
        # how much slower than the probe predicts the last step ran (a loaded machine slows large
        # steps more than the small probe): applied to the kinds not yet run
        self._slow = 1.0

    def left(self) -> float:
        return self.end - self.clock()

    def expired(self) -> bool:
        return self.left() <= 0.0

    def _probe_rate(self) -> float:
        if self._probe is None:
            # a fixed symmetric matrix (no randomness): the fastest of two runs
            i = np.arange(_PROBE_N, dtype=float)
            B = np.cos(np.add.outer(i, 2.0 * i) / 7.0)
            B = B + B.T
            best = np.inf
            for _ in range(2):
                t = self.clock()
                np.linalg.eigh(B)
                best = min(best, self.clock() - t)
            self._probe = max(best, 1e-6) / _PROBE_N ** 3
        return self._probe

    def cost(self, kind: str, size: float) -> float:
        """Predicted seconds of a step of ``kind`` and ``size`` (see :data:`_PER_PROBE`)."""
        rate = self._rate.get(kind)
        if rate is None:
            rate = _PER_PROBE[kind] * self._probe_rate() * self._slow
        return rate * float(size)

    def fits(self, kind: str, size: float, times: float = 1.0) -> bool:
        """Whether ``times`` steps of ``kind`` and ``size`` are predicted to end in time."""
        return times * self.cost(kind, size) <= self.left()

    @contextmanager
    def step(self, kind: str, size: float):
        """Time a step and learn its rate (the last one run: the load changes)."""
        t = self.clock()
        try:
            yield
        finally:
            took = max(self.clock() - t, 0.0)
            if size > 0:
                self._rate[kind] = took / float(size)
                base = _PER_PROBE[kind] * self._probe_rate() * float(size)
                if base >= 1e-3:  # (a step too small to time says nothing of the load)
                    self._slow = max(took / base, 1.0)


def fits(budget: Budget | None, kind: str, size: float, times: float = 1.0) -> bool:
    """True without a budget; else :meth:`Budget.fits`."""
    return budget is None or budget.fits(kind, size, times)


@contextmanager
def step(budget: Budget | None, kind: str, size: float):
    """:meth:`Budget.step`, or nothing without a budget."""
    if budget is None:
        yield
    else:
        with budget.step(kind, size):
            yield


def takes_bound(callback) -> bool:
    """Whether ``callback`` accepts a keyword ``bound`` (named, or ``**kwargs``)."""
    if callback is None:
        return False
    try:
        params = inspect.signature(callback).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: the plain form
        return False
    return any(p.kind is p.VAR_KEYWORD or (p.name == "bound" and p.kind is not p.POSITIONAL_ONLY)
               for p in params)


class BoundReport:
    """The best upper bound proved so far, passed on to a caller's ``callback``.

    ``callback(done, total)`` as every progress callback; one that accepts a keyword ``bound``
    (:func:`takes_bound`) is called ``callback(done, total, bound=B)`` with ``B`` the smallest
    upper bound proved so far in this call (in the scale of the problem solved; ``scale``
    multiplies it back to the caller's).  :meth:`offer` records a new proved bound,
    :meth:`progress` reports progress with the best bound known.
    """

    def __init__(self, callback=None, scale=None):
        self.callback = callback
        self.with_bound = takes_bound(callback)
        self.scale = scale
        self.best = np.inf
        self.done, self.total = 0, 1

    def offer(self, bound: float) -> float:
        """Record ``bound`` (proved; a better one is reported at once); returns the best so far."""
        if bound < self.best:
            self.best = float(bound)
            if self.with_bound:
                self._call(self.done, self.total)
        return self.best

    def through(self, f) -> "BoundReport":
        """A report whose bounds are mapped by ``f`` into this one's (a part's bound -> the whole's)."""
        return _Through(self, f)

    def progress(self, done: int, total: int, bound: float | None = None) -> None:
        self.done, self.total = done, total
        if bound is not None and bound < self.best:
            self.best = float(bound)
        self._call(done, total)

    def _call(self, done: int, total: int) -> None:
        if self.callback is None:
            return
        if self.with_bound:
            b = self.best if self.scale is None else self.scale(self.best)
            self.callback(done, total, bound=float(b))
        else:
            self.callback(done, total)


class _Through(BoundReport):
    """:meth:`BoundReport.through`: offers ``f(bound)`` to the outer report."""

    def __init__(self, outer: BoundReport, f):
        super().__init__(None)
        self.outer, self.f = outer, f

    def offer(self, bound: float) -> float:
        if np.isfinite(bound):
            self.outer.offer(self.f(bound))
        return self.outer.best

    def progress(self, done: int, total: int, bound: float | None = None) -> None:
        self.outer.progress(done, total, None if bound is None or not np.isfinite(bound) else self.f(bound))


def in_scale(b: float, factors) -> float:
    """A bound of the normalized copy in the caller's scale (power-of-2 factors: exact)."""
    with np.errstate(over="ignore", under="ignore"):
        for f in factors:
            b = b * f
    return float(b)
