"""The polish of local optima: each point moved to the best one on its support (:func:`reweight`: the top
eigenvector of ``A_JJ`` when it has one sign), then truncated power ascents (:func:`ascent`, both signs)
while either gains; :func:`polish_many` runs many points at once (``fit(method="auto")``'s best few).
Split from :mod:`nspca_core._common.ascent` (the reweighting stays there: the certificates' lower bounds
use it without the rest)."""

from __future__ import annotations

import numpy as np

from .ascent import _XTOL, _reweight_top, ascent, reweight
from .screen import Screen
from ..operators.cov import Cov
from .steps import _COMPACT_MIN_N, TopK

__all__ = ["polish", "polish_many"]


def polish(cov, x: np.ndarray, k: int, *, key=None, max_iter: int = 200, rounds: int = 5):
    """Ascent (both signs), reweighting, ascent again while either gains; returns
    ``(x, f, iterations)``.  Never decreases ``f`` (each part keeps the better point).
    A support already reweighted is not reweighted again (the same eigenvector)."""
    X, f, total = polish_many(cov, x[:, None], k, key=key, max_iter=max_iter, rounds=rounds)
    return X[:, 0], float(f[0]), total


def _fixed_points(cov, X: np.ndarray, k: int, key, step, plain_only: bool = False) -> bool:
    """Whether ``step`` leaves every column of X (feasible, unit) where it is: the same support and
    ``|<x_new, x>| >= 1 - xtol`` (the ascent from X would stop after its first step, with X).  One
    product of dense iterates: for few features, where the ascent's set-up costs more than it.
    ``plain_only``: only the check read from the products (:func:`_plainly_fixed`); where it says no,
    False without the step's selection (many features: the ascent then makes that selection itself)."""
    Y = cov.matvec(X)
    if _plainly_fixed(Y, X, k, step):
        return True
    if plain_only:
        return False
    done = step(Y, np.zeros((0, X.shape[1]), dtype=np.intp), X, k, key, _XTOL)[2]
    return bool(done.all())


def _checks_fixed(cov, n: int, reweight_first: bool):
    """Whether :func:`polish_many` first asks :func:`_fixed_points` (None: not), and with ``plain_only``:
    below ``_COMPACT_MIN_N`` features always (the whole check); from there on thin in-memory data
    (:class:`~nspca_core.operators.cov.Cov` holding X, m < n, A not formed), where the product of the
    few columns through X costs ``2 m (k + n)`` flops each, less than the ascent's first step it saves
    (its set-up, the screen's products and selection, the merges; 72 x 1,000 genes: the polish
    0.45-0.6 -> 0.25-0.4 ms), plain only.  Other operators (sparse, Dask, a formed covariance) keep the
    ascent: a product there can cost a pass over the data."""
    if not reweight_first:
        return None
    if n < _COMPACT_MIN_N:
        return False
    if type(cov) is Cov and cov.thin and cov._A is None and cov.X is not None:
        return True
    return None


def _plainly_fixed(Y: np.ndarray, X: np.ndarray, k: int, step) -> bool:
    """True only when the unsigned ``step`` (:class:`TopK`) would leave every column of X where it is,
    read from the products ``Y = A X`` with margins, without the step's selection: on each support J
    (at most k entries) ``y_J > 0`` and every other ``y`` below ``min y_J`` (not above 0 while
    ``|J| < k``), so the top k of ``y_+`` is J whatever the tie-break; with ``both_signs``,
    the sum of the k largest squares of ``(-y)_+`` (a bound on it: :func:`_longest_negative`) below
    ``||y_J||^2`` by a margin, so ``T_k(-y)`` is not longer; and
    ``|<y_J / ||y_J||, x>|`` at least ``1 - xtol / 2``, so the step's own sums, which differ from
    these by a few roundings, pass its ``1 - xtol``.  False sends the caller to the step itself:
    the answer is the step's either way (issue 39: the polish of auto's few best points on small n,
    LRS 93 features, spent half its time in this check's selection)."""
    if step.signed or X.shape[1] == 0:
        return False
    # one row per column (contiguous copies of c x n): the reductions below run along rows; along axis 0
    # of a thin C-ordered n x c array (auto's 1-3 points) numpy's reductions cost several times more
    # (issue 39, twentieth round: 135 -> ~45 us at k = 5 on 72 x 1,000 genes).  The check's booleans
    # read min / max (exact in any order) and sums whose rounding the margins above allow for
    Y, X = np.ascontiguousarray(Y.T), np.ascontiguousarray(X.T)
    on = X != 0
    c = on.sum(axis=1)
    if (c > k).any() or (c == 0).any():
        return False
    inf = np.inf
    low = np.where(on, Y, inf).min(axis=1)  # min y_J
    out = np.where(on, -inf, Y).max(axis=1)  # max y outside J (-inf: J is everything)
    if not ((low > 0) & (out < low) & ((c == k) | (out <= 0))).all():
        return False
    YJ = np.where(on, Y, 0.0)
    zz = np.einsum("ji,ji->j", YJ, YJ)
    # far from under/overflow (the step then normalizes in one pass, and no entry of y_J / ||y_J|| is 0)
    if not ((zz > 1e-200) & (zz < 1e300) & (low > 1e-100 * np.sqrt(zz))).all():
        return False
    if step.both_signs and not (_longest_negative(Y, k, zz) * (1 + 1e-6) < zz).all():
        return False
    dots = np.abs(np.einsum("ji,ji->j", YJ, X)) / np.sqrt(zz)
    return bool((dots >= 1 - _XTOL / 2).all())


def _longest_negative(Yt: np.ndarray, k: int, zz: np.ndarray) -> np.ndarray:
    """Per row of ``Yt`` (c, n: one product ``y`` per row), a number at least ``||T_k(-y)||^2``, the sum of
    the k largest squares of ``(-y)_+``: ``k max((-y)_+)^2``, and where that does not fall below ``zz`` (by
    the caller's margin) the sum itself, from one partition (large k: the first bound grows with k, the
    sum does not)."""
    neg = np.maximum(-Yt.min(axis=1), 0.0)
    out = k * neg * neg
    loose = ~(out * (1 + 1e-6) < zz)
    if loose.any():
        n = Yt.shape[1]
        N = np.maximum(-Yt[loose], 0.0)
        if k < n:
            N = np.partition(N, n - k, axis=1)[:, n - k:]
        out[loose] = np.einsum("ji,ji->j", N, N)
    return out


def polish_many(cov, X: np.ndarray, k: int, *, key=None, max_iter: int = 200, rounds: int = 5,
                reweight_first: bool = False, screen: Screen | None = None):
    """:func:`polish` of each column of X (n, c), the ascents of a round batched as the columns
    of one :func:`ascent` (``merge=False``: the columns do not interact); returns ``(X, f,
    iterations)`` with ``f[j]`` the value of column j, never below that of the given column.

    ``reweight_first``: each column is first moved to the best point on its support (:func:`reweight`,
    ``top_only``), then the rounds run: from points that converged only roughly (an ascent in float32)
    the ascent then starts at its limit on that support instead of iterating towards it.  ``screen``:
    the ascents' products exact only on the rows that can enter a top k (:class:`Screen`, float64)."""
    X = np.array(X, dtype=float)
    c = X.shape[1]
    # reweight_first: the values of all columns in one product through the rows they use
    f = cov.quads(X) if reweight_first else np.array([cov.quad(X[:, j]) for j in range(c)])
    done: list = [None] * c
    limits: dict = {}  # reweight_first: each support's limit computed once (columns often share one)

    def reweighted(j):
        J = np.flatnonzero(X[:, j])
        if not reweight_first:
            return reweight(cov, X[:, j], f[j])
        return (X[:, j], f[j]) if J.size < 2 else _reweight_top(cov, X[:, j], f[j], J, limits)

    if reweight_first:
        for j in range(c):
            X[:, j], f[j] = reweighted(j)
            done[j] = np.flatnonzero(X[:, j])
    # reweight_first: a column reaching the support on which another stopped takes that column's
    # result (``merge="support"``; both are then on the power iteration of A_JJ towards its limit)
    merge = "support" if reweight_first else False
    total = 0
    act = np.arange(c)
    step = TopK(both_signs=True, compact_start=reweight_first)
    plain = _checks_fixed(cov, X.shape[0], reweight_first)
    if plain is not None and _fixed_points(cov, X, k, key, step, plain_only=plain):
        return X, f, 1  # the first step of the ascent would stop every column where it is
    for _ in range(rounds):
        if not act.size:
            break
        f_before = f[act].copy()
        r = ascent(cov.matvec, X[:, act], k, key=key, max_iter=max_iter, merge=merge, screen=screen, step=step)
        total += r.iterations
        for i, j in enumerate(act):
            if r.values[i] > f[j]:
                X[:, j], f[j] = r.X[:, i], float(r.values[i])
            if done[j] is None or not np.array_equal(np.flatnonzero(X[:, j]), done[j]):
                X[:, j], f[j] = reweighted(j)
                done[j] = np.flatnonzero(X[:, j])
        act = act[f[act] > f_before * (1 + 1e-13)]
    return X, f, total
