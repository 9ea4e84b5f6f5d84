"""The truncated power ascent, once: many starts as the columns of one matrix.

Every local search of the project — ``fit(method="auto")``'s polish, the
certificates' lower bounds, the truncated power method (Yuan & Zhang 2013) —
iterates

    x  <-  T_k(A x) / ||T_k(A x)||,    T_k(y) = the k largest entries of y_+

(optionally also trying ``T_k(-A x)`` and keeping the longer of the two, which
is the exact rank-1 step of Asteris et al. 2014, §3.1).  :func:`ascent` runs it
on the columns of a start matrix at once, each with its own k, dropping columns
that have converged and columns that have settled on the support of a better
one (the same power iteration on ``A_JJ`` from there; copies of a column among
them).

The step is an argument (``step=``, as SciPy's trust-region driver takes its
subproblem; :mod:`nspca_core._common.steps`): the hard truncation above
(:class:`~nspca_core._common.steps.TopK`, the default), EM's soft top-k
(:class:`~nspca_core._common.steps.SoftTopK`) or the plain power iteration of the
bipartite paper's deflation baselines (:class:`~nspca_core._common.steps.PlainPower`)
all run in this one driver.  Steps that do not ascend return their last iterate
(``keep="last"``) and stop on their own rule only (``rtol=None``).

Proof of monotonicity (A PSD, hard truncation).  ``f(y) = y^T A y`` is convex and even, so with
``g = A x``: ``f(y) >= f(x) + 2 g^T (y - x) = 2 g^T y - f(x)``.  The step
chooses the unit ``y >= 0`` with at most k nonzeros maximizing ``g^T y`` (or
``|g^T y|`` with both signs, then flip the sign of ``g``), and ``x`` is such a
point, so ``g^T y >= g^T x = f(x)`` and ``f(y) >= f(x)``.  The value of every
iterate is computed from the same product ``A x`` (no extra work), and each
column returns its best iterate, so rounding cannot make a column worse than
its (projected) start.

Stops (the truncated power step of "auto", ``merge="support"`` and ``dominated``).  A column that
reaches the support of another, moving or stopped there, is dropped and takes that column's result
(or its own best iterate, if larger): on a fixed support both follow the power iteration of
``A_JJ``, so they end together unless the weights they arrive with send them apart.  A column whose
value plus ``dominated`` times its last gain is below the best value of the batch stops: its gains
would have to grow for it to win.  Both are heuristics, measured: on CBCL, LRS, MLL, gene-shaped
and random inputs they never changed the three best distinct points of auto's ascent, and with
``dominated=100`` never stopped a column that would have ended best
(``benchmarks/bench_auto.py --fingerprint``: auto's answers on 126 cases unchanged).

Ties.  The k-th largest value may be shared; ties are broken by a
data-derived ``key`` (e.g. the rank of each feature's variance), not by the
column order, so that permuting the features permutes the answer.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .eig import top_eigh
from .screen import Screen, SupportJump, _slow, _step_on_rows
from .steps import _COMPACT_MIN_N, TopK, _to_compact, _to_dense, hard_topk, project, topk_mask, truncate

# polish and polish_many: nspca_core._common.polish
__all__ = ["AscentResult", "tie_key", "cov_key", "topk_mask", "truncate", "project", "random_starts",
           "factor_starts", "ascent", "reweight"]

# 1 - <x_new, x> below this (same support): a column has converged
_XTOL = 1e-12
# reweight(top_only=True) takes the top eigenpair alone from supports of this size on
_TOP_ONLY_MIN = 32


@dataclass(frozen=True, eq=False)
class AscentResult:
    """Per column: the best iterate ``X[:, j]`` (nonnegative, unit, at most ``kc[j]`` nonzeros),
    its value ``values[j] = x^T A x``, whether it converged; ``iterations`` run in all; the
    values of the starts made feasible (None when the step's values are not computed)."""

    X: np.ndarray
    values: np.ndarray
    converged: np.ndarray
    iterations: int
    #: the value of each feasible start (``step.start`` of the column), from the first products
    start_values: np.ndarray | None = None

    def best(self) -> tuple[np.ndarray, float, int]:
        """``(x, value, column)`` of the best column."""
        j = int(np.argmax(self.values))
        return self.X[:, j], float(self.values[j]), j


def _round_sig(v: np.ndarray, digits: int = 9) -> np.ndarray:
    """``v`` rounded to ``digits`` significant digits (relative to its largest entry), so that
    values equal up to rounding compare equal."""
    top = float(np.abs(v).max()) if v.size else 0.0
    if top == 0 or not np.isfinite(top):
        return np.zeros_like(v)
    q = 10.0 ** (np.floor(np.log10(top)) - digits + 1)
    return np.round(v / q)


def tie_key(diag: np.ndarray, second: np.ndarray | None = None) -> np.ndarray:
    """A tie-break priority per feature from the data: larger variance first, then larger
    ``second`` (e.g. the row sums ``A 1``), compared to 9 significant digits.

    Returns ``key`` with ``key[i]`` the rank of feature i.  Comparing rounded values makes
    the order independent of how the covariance was computed (dense or sparse, permuted):
    standardized data have all variances equal up to rounding, and the row sums then decide.
    Features equal in both keep their order: they are then true symmetries of the problem or
    duplicated features.
    """
    keys = [-_round_sig(np.asarray(diag, dtype=float))]
    if second is not None:
        keys.insert(0, -_round_sig(np.asarray(second, dtype=float)))
    order = np.lexsort(keys)  # the last key is the primary one
    key = np.empty(diag.size, dtype=np.intp)
    key[order] = np.arange(diag.size)
    return key


def cov_key(cov, diag: np.ndarray | None = None) -> np.ndarray:
    """:func:`tie_key` of a covariance operator: its variances, then its row sums ``A 1``.  ``diag``:
    ``cov.diag()`` already computed by the caller (the same floats).  The row sums only break ties of the
    rounded variances: from one stable sort of the variances, the product ``A 1`` is made only when two
    tie, and only the tied runs are ordered by it (the same key as :func:`tie_key`'s lexsort: a stable
    order of the first key, each run of equal values in index order, then sorted stably by the second)."""
    diag = cov.diag() if diag is None else diag
    r = -_round_sig(np.asarray(diag, dtype=float))
    order = np.argsort(r, kind="stable")
    s = r[order]
    eq = s[1:] == s[:-1]  # position i + 1 ties with position i
    if eq.any():
        second = -_round_sig(np.asarray(cov.matvec(np.ones(cov.n)), dtype=float))
        tied = np.zeros(s.size, dtype=bool)
        tied[1:] |= eq
        tied[:-1] |= eq
        pos = np.flatnonzero(tied)  # the positions of the tied runs, each run contiguous
        run = np.cumsum(np.concatenate(([True], ~eq)))[pos]  # run number per position, increasing
        sub = order[pos]  # index order inside each run (stable)
        order[pos] = sub[np.lexsort((second[sub], run))]
    key = np.empty(diag.size, dtype=np.intp)
    key[order] = np.arange(diag.size)
    return key



def random_starts(key: np.ndarray, rng: np.random.Generator, count: int, *,
                  nonneg: bool = True, unit: bool = True) -> np.ndarray:
    """``count`` random unit columns drawn per rank of ``key``, not per feature index: the
    feature of rank r gets row r of the draw, so permuting the features permutes the
    starts (and, with the tie-breaks of :func:`topk_mask`, the answers).  ``unit=False``: the
    columns as drawn (for a caller that normalizes what it makes of them)."""
    R = rng.standard_normal((key.size, count))
    if nonneg:
        np.abs(R, out=R)
    R = np.take(R, key, axis=0)  # R[key], without fancy indexing's overhead
    if unit:
        R /= np.linalg.norm(R, axis=0)  # in place: no second n x count array
    return R


def factor_starts(cov, V: np.ndarray, k: int, nonneg: bool) -> np.ndarray:
    """Starts from the data: the indicator of the k features of largest variance (ties to the
    lower index), then each column of a factor ``V`` (n, d) with both signs, hard-truncated to k
    entries (:func:`~nspca_core._common.steps.hard_topk`), those that keep a nonzero."""
    n = cov.n
    top = np.argsort(-cov.diag(), kind="stable")[:k]
    cols = [np.zeros(n)]
    cols[0][top] = 1.0
    for j in range(V.shape[1]):
        for sg in (1.0, -1.0):
            v = hard_topk((sg * V[:, j])[:, None], k, nonneg)[:, 0]
            if v.any():
                cols.append(v)
    return np.column_stack(cols)


@functools.lru_cache(maxsize=8)
def _merge_weights(n: int) -> np.ndarray:
    """The fixed weights of :func:`_merge_settled`'s support hash (row n: compact padding), made once
    per n (read only)."""
    w = 1.0 + 0.5 * np.sin(np.arange(n + 1))
    w.flags.writeable = False
    return w


def _support_hash(idx: np.ndarray, vals: np.ndarray, w: np.ndarray, n: int) -> np.ndarray:
    """The hash of each column's support: ``w`` summed over it (compact iterates: their indices, the
    padding n included; dense ones: their nonzeros)."""
    return w[idx].sum(axis=0) if idx.shape[0] else w[:n] @ (vals != 0)


def _merge_settled(idx: np.ndarray, vals: np.ndarray, settled: np.ndarray, v: np.ndarray, kc: np.ndarray,
                   active: np.ndarray, alias: list, n: int, w: np.ndarray, keep: np.ndarray,
                   h: np.ndarray | None = None) -> np.ndarray:
    """Drop settled columns (support unchanged by the last step) whose support and k equal those
    of another settled column of larger value ``v``: on a fixed support J the step is the power
    iteration of ``A_JJ``, so both converge to its top eigenvector (the same point) unless the
    support changes, which it then does for both (copies of a column are merged this way as soon
    as they settle).  Updates ``keep`` (the columns still moving) in place and returns it; records
    ``(dropped, kept)`` in alias.  Candidates share one hash of the support (:func:`_support_hash`;
    ``h``: already computed for every column), then compare exactly."""
    cand = (keep & settled).nonzero()[0]
    if cand.size < 2:
        return keep
    h = _support_hash(idx[:, cand], vals[:, cand], w, n) if h is None else h[cand]
    hs = np.sort(h)
    if not (hs[1:] == hs[:-1]).any():  # the common case: no two settled supports alike
        return keep
    S = idx[:, cand] if idx.shape[0] else (vals[:, cand] != 0)  # their supports
    kk = kc[active[cand]]
    order = np.lexsort((-v[cand], h, kk))  # groups by (k, hash), best value first
    hs, ks = h[order], kk[order]
    first = np.concatenate(([True], (hs[1:] != hs[:-1]) | (ks[1:] != ks[:-1])))
    starts, same = np.flatnonzero(first), np.flatnonzero(~first)
    a = order[starts[np.searchsorted(starts, same, side="right") - 1]]  # each group's best
    b = order[same]
    equal = (S[:, a] == S[:, b]).all(axis=0)
    keep[cand[b[equal]]] = False
    alias.extend(zip(active[cand[b[equal]]].tolist(), active[cand[a[equal]]].tolist()))
    return keep


class _Finished:
    """The supports on which columns stopped (support unchanged by their last step), for
    ``merge="support"``: a column still moving that reaches one of them (same k) is dropped and
    takes that column's result (or its own best iterate, if larger), as :func:`_merge_settled`
    does with two moving columns.  Supports are found by :func:`_support_hash`, then compared
    exactly."""

    def __init__(self, w: np.ndarray, n: int):
        self.w, self.n = w, n
        self.rows: dict = {}  # hash -> [(k, support as compared, column)]

    def _support(self, zi, zv, j):
        return zi[:, j] if zi.shape[0] else zv[:, j] != 0

    def update(self, zi, zv, settled, moving, kc, active, alias, h: np.ndarray | None = None) -> np.ndarray:
        """Record the columns that stopped on a settled support; drop (in ``moving``, returned)
        the moving columns on a recorded support.  ``h``: the supports' hashes, per column."""
        if h is None:
            h = _support_hash(zi, zv, self.w, self.n)
        for j in (settled & ~moving).nonzero()[0].tolist():
            self.rows.setdefault(float(h[j]), []).append((int(kc[active[j]]), self._support(zi, zv, j),
                                                          int(active[j])))
        if not self.rows:
            return moving
        for j in moving.nonzero()[0].tolist():
            for kk, SS, c in self.rows.get(float(h[j]), ()):
                if kk == kc[active[j]] and np.array_equal(self._support(zi, zv, j), SS):
                    moving[j] = False
                    alias.append((int(active[j]), c))
                    break
        return moving


def _start(step, X0: np.ndarray, kc, key, width: int | None):
    """The first iterates ``(idx, vals)``: compact of ``width`` rows, or dense (``width`` None)."""
    if width is None:
        return np.zeros((0, X0.shape[1]), dtype=np.intp), step.start(X0, kc, key)
    if isinstance(step, TopK):
        return step.start_compact(X0, kc, key, width)
    return _to_compact(step.start(X0, kc, key), width)


def _step_parts(step, parts, ia, va, kca, one_k: bool, key, xtol, n):
    """The step of every column from ``parts``, a list of ``(g, U, Y)`` (:meth:`Screen.products`:
    columns g, with Y their products on the rows U; ``g`` None: every column, U None: all rows)."""
    if len(parts) == 1 and parts[0][1] is None:
        return step(parts[0][2], ia, va, kca, key, xtol)
    zi, zv = np.empty_like(ia), np.empty_like(va)
    done, settled = np.empty(ia.shape[1], dtype=bool), np.empty(ia.shape[1], dtype=bool)
    for g, U, Yg in parts:
        kg = kca if one_k else kca[g]
        if U is None:
            out = step(Yg, ia[:, g], va[:, g], kg, key, xtol)
        else:
            out = _step_on_rows(step, U, Yg, ia[:, g], va[:, g], kg, key, xtol, n)
        zi[:, g], zv[:, g], done[g], settled[g] = out
    return zi, zv, done, settled


def _resolve(alias, best_v, best_idx, best_vals, converged):
    """Each dropped column takes its kept column's best point when larger, and its convergence
    (``alias``: ``(dropped, kept)`` in the order they were merged), in place."""
    for dropped, kept in reversed(alias):
        if best_v[kept] > best_v[dropped]:
            best_v[dropped] = best_v[kept]
            best_idx[:, dropped], best_vals[:, dropped] = best_idx[:, kept], best_vals[:, kept]
        converged[dropped] = converged[kept]


def ascent(matvec, X0: np.ndarray, kc, *, step=None, key: np.ndarray | None = None, max_iter: int = 200,
           rtol: float | None = 1e-13, both_signs: bool = False, signed: bool = False,
           xtol: float = _XTOL, merge: bool | str = True, stop=None, keep: str = "best",
           quads=None, screen: Screen | None = None, jump: SupportJump | None = None,
           dominated: float | None = None, far: tuple | None = None, exempt: np.ndarray | None = None) -> AscentResult:
    """Batched ascent from the columns of ``X0`` (n, p), one ``step`` per iteration.

    Parameters
    ----------
    matvec : callable
        ``matvec(W) = A @ W`` for W of shape (n, q); A symmetric PSD.
    X0 : ndarray (n, p)
        Starts, made feasible by ``step.start`` (hard truncation: ``T_k`` of the start, normalized;
        no positive entry: the basis vector of the feature of smallest ``key``).
    kc : int or ndarray (p,)
        Nonzeros allowed per column.
    step : step object, optional
        What one iteration does with the products ``A X`` (:mod:`nspca_core._common.steps`).
        Default ``TopK(signed=signed, both_signs=both_signs)``: the truncated power step.
    key : ndarray (n,) of int, optional
        Tie-break priority (:func:`tie_key`); default the index.
    rtol : float or None
        A column stops when a step gains less than ``rtol`` (relative); None: the step's rule only.
    both_signs, signed : bool
        Default step: also try ``T_k(-A x)`` (the exact rank-1 step); keep the k largest ``|A x|``
        with their signs (TPower without nonnegativity: iterates and starts of any sign).
    xtol : float
        The step's stop: support unchanged and ``1 - |<x_new, x>| <= xtol`` (hard truncation).
    merge : bool or "support"
        Drop columns whose support, unchanged by the last step, is that of another settled column
        of larger value (same k); ``"support"`` also those reaching the support of another moving
        column or of one that stopped there (module notes: a heuristic, measured).
    stop : callable, optional
        ``stop()`` returning True ends the iterations early (best iterates so far).
    dominated : float, optional
        With ``keep="best"`` and ``rtol``: stop a column (not ``converged``) once its value plus
        ``dominated`` times its last gain is below the batch's best value (module notes).
    far : (ndarray (p,), float), optional
        ``(factors, fraction)``: a column whose value is below ``fraction`` of the batch's best is stopped
        with its own factor ``factors[j]`` in place of ``dominated`` (auto: its random starts, far below
        the best, stop sooner).
    exempt : ndarray (p,) of bool, optional
        Columns never stopped as ``dominated`` (they stop on the other rules only); a column merged
        into another passes its exemption to it, so the support it was on is ascended to the end.
    keep : {"best", "last"}
        Each column's best iterate (an ascent), or its last (a step that need not ascend, e.g.
        EM's); "last" values are ``quads(X)`` (default ``x^T (A x)`` through ``matvec``).

    Returns
    -------
    AscentResult
    """
    if keep not in ("best", "last"):
        raise ValueError(f"`keep` must be 'best' or 'last'; got {keep!r}")
    step = TopK(signed=signed, both_signs=both_signs) if step is None else step
    best_kept = keep == "best"
    n, p = X0.shape
    kc = np.broadcast_to(np.asarray(kc, dtype=np.intp), (p,)).copy()
    width = int(min(kc.max(), n)) if p else 1
    compact = step.compact and n >= _COMPACT_MIN_N and 4 * width <= n
    idx, vals = _start(step, X0, kc, key, width if compact else None)
    if best_kept:
        best_idx, best_vals, best_v = idx.copy(), vals.copy(), np.full(p, -np.inf)
    prev_v = np.full(p, np.nan)
    converged = np.zeros(p, dtype=bool)
    active = np.arange(p)
    alias: list = []
    w_merge = _merge_weights(n) if merge and best_kept else None
    finished = _Finished(w_merge, n) if merge == "support" and w_merge is not None else None
    stopped = np.zeros(p, dtype=bool)  # columns stopped as dominated
    exempt = None if exempt is None or dominated is None else np.array(exempt, dtype=bool)  # a copy: heirs
    need_v = best_kept or rtol is not None or w_merge is not None  # the values of the iterates
    it = 0
    first = None

    screened = screen is not None and compact and isinstance(step, TopK) and not step.signed
    jumps = jump is not None and best_kept and rtol is not None and isinstance(step, TopK) and not step.signed
    was_settled = np.zeros(p, dtype=bool)
    prev_gain = np.full(p, np.nan)

    def score(ia, va):  # (A x) and x^T A x of the columns
        Y = matvec(_to_dense(ia, va, n))
        at = Y[np.minimum(ia, n - 1), np.arange(ia.shape[1])] if compact else Y
        return Y, np.einsum("ij,ij->j", va, at)

    k_one = int(kc[0]) if p and kc.min() == kc.max() else None  # one k for every column

    def keep_best(ia, va, v, full):
        nonlocal best_idx, best_vals
        better = v > best_v[active]
        if better.all():
            if full:  # every column: the iterates themselves become the best (no copy; the
                best_v[:], best_idx, best_vals = v, ia, va  # loop rebinds, never writes, them)
            else:
                best_v[active], best_idx[:, active], best_vals[:, active] = v, ia, va
            return
        cols = active[better]
        best_v[cols] = v[better]
        best_idx[:, cols] = ia[:, better]
        best_vals[:, cols] = va[:, better]

    while active.size and it < max_iter and not (stop is not None and stop()):
        it += 1
        full = active.size == p  # every column active: views, not copies
        ia, va = (idx, vals) if full else (idx[:, active], vals[:, active])
        if screened:  # the values, and the products where the step needs them
            v, parts = screen.products(ia, va, kc[active], n, both_signs=step.both_signs)
        else:
            Y, v = score(ia, va) if need_v else (matvec(_to_dense(ia, va, n)), None)
        if it == 1 and need_v:
            first = v.copy()
        if best_kept:
            keep_best(ia, va, v, full)
        if rtol is None:
            gained = True
        else:
            pv = prev_v[active]
            gained = np.isnan(pv) | (v > pv + rtol * np.abs(pv))
            prev_v[active] = v
            if jumps:  # the gains; the steps they still need (_slow) only where a jump is asked below
                gain, last_gain = v - pv, prev_gain[active]
                prev_gain[active] = gain
            if dominated is not None and best_kept:  # far below the best with small gains: stop
                top = best_v.max()
                fac = dominated if far is None else np.where(v < far[1] * top, far[0][active], dominated)
                dom = ~np.isnan(pv) & (v + fac * np.maximum(v - pv, 0.0) < top * (1 - 1e-9))
                if exempt is not None:
                    dom &= ~exempt[active]
                gained, stopped[active[dom]] = gained & ~dom, True
        kca = kc[active] if k_one is None else k_one
        parts = parts if screened else [(None, None, Y)]
        zi, zv, done, settled = _step_parts(step, parts, ia, va, kca, k_one is not None, key, xtol, n)
        moving = gained & ~done
        converged[active[~moving & ~stopped[active]]] = True
        if jumps:  # settled twice in a row, still moving and slow: to the support's limit
            twice = (settled & was_settled[active] & moving).nonzero()[0]
            was_settled[active] = settled
            if twice.size:
                slow = _slow(gain[twice], last_gain[twice], np.abs(v[twice]) * rtol)
                twice, slow = twice[slow > jump.min_steps], slow[slow > jump.min_steps]
            if twice.size:
                zv = jump(zi, zv, twice, n, slow)
        if full:
            idx, vals = zi, zv
        else:
            idx[:, active], vals[:, active] = zi, zv
        if w_merge is not None and settled is not None:
            merged = len(alias)
            h = _support_hash(zi, zv, w_merge, n)  # one hash per column for both merges
            if finished is not None:  # columns on the support of one that has stopped there
                moving = finished.update(zi, zv, settled & ~stopped[active], moving, kc, active, alias, h)
                settled = np.ones_like(settled)
            moving = _merge_settled(zi, zv, settled, v, kc, active, alias, n, w_merge, moving, h)
            if exempt is not None:  # the column merged into carries on for an exempt one (its heir)
                for dropped, kept in alias[merged:]:
                    exempt[kept] |= exempt[dropped]
        active = active[moving]
    if not best_kept:  # the last iterates, row-major whatever layout the step kept them in
        X = np.ascontiguousarray(_to_dense(idx, vals, n))
        values = quads(X) if quads is not None else np.einsum("ij,ij->j", X, matvec(X))
        return AscentResult(X=X, values=values, converged=converged, iterations=it, start_values=first)
    if active.size:  # score the last iterates of columns still moving
        ia, va = idx[:, active], vals[:, active]
        keep_best(ia, va, score(ia, va)[1], False)
    _resolve(alias, best_v, best_idx, best_vals, converged)
    return AscentResult(X=_to_dense(best_idx, best_vals, n), values=best_v, converged=converged,
                        iterations=it, start_values=first)


def reweight(cov, x: np.ndarray, f: float, *, max_support: int | None = None, top_only: bool = False):
    """Best weights on the support J of x: the top eigenvector of ``A_JJ`` if it is one-signed.

    Never worse: that eigenvector maximizes ``y^T A_JJ y`` over all unit y on J,
    and it is feasible when it has one sign.  Through ``X_J`` (thin SVD) when the
    data has fewer rows than the support (nothing |J| x |J| then).  Supports
    larger than ``max_support`` are left as they are.  ``top_only``: from
    :func:`~nspca_core._common.eig.top_eigh` (the top eigenpair alone, 2-3 times cheaper from
    ``_TOP_ONLY_MIN`` on; through X: of the m x m Gram of ``X_J``).  Returns ``(x, f)``.
    """
    J = np.flatnonzero(x)
    if J.size < 2 or (max_support is not None and J.size > max_support):
        return x, f
    if top_only:
        return _reweight_top(cov, x, f, J)
    thin = cov.X is not None and cov.X.shape[0] < J.size
    if thin:
        u = np.linalg.svd(cov.X[:, J], full_matrices=False)[2][0]
    else:
        u = np.linalg.eigh(cov.submatrix(J))[1][:, -1]
    if u.sum() < 0:
        u = -u
    if u.min() < 0:
        return x, f
    y = np.zeros_like(x)
    y[J] = u / np.linalg.norm(u)
    fy = cov.quad(y)
    return (y, fy) if fy > f else (x, f)


def _support_limit(cov, J: np.ndarray):
    """``(u, value)``: the top eigenvector of ``A_JJ`` (unit, one-signed: nonnegative) and its value,
    or None when it has both signs; from ``_TOP_ONLY_MIN`` features on the top eigenpair alone.  The
    value comes from the matrix formed for it (``X_J`` or ``A_JJ``: no product with all of A)."""
    XJ = M = None
    thin = cov.X is not None and cov.X.shape[0] < J.size
    if thin or (cov.X is not None and cov._A is None):
        XJ = cov.X[:, J]
    else:
        M = cov.submatrix(J)
    if thin:
        u = XJ.T @ top_eigh(XJ @ XJ.T, 1)[1][:, 0] if J.size >= _TOP_ONLY_MIN \
            else np.linalg.svd(XJ, full_matrices=False)[2][0]
    else:
        if M is None:
            M = (XJ.T @ XJ) / XJ.shape[0]
        u = top_eigh(M, 1)[1][:, 0] if J.size >= _TOP_ONLY_MIN else np.linalg.eigh(M)[1][:, -1]
    if u.sum() < 0:
        u = -u
    if u.min() < 0:
        return None
    u = u / np.linalg.norm(u)
    if XJ is not None:
        z = XJ @ u
        return u, float(z @ z) / XJ.shape[0]
    return u, float(u @ (M @ u))


def _reweight_top(cov, x: np.ndarray, f: float, J: np.ndarray, limits: dict | None = None):
    """:func:`reweight` with ``top_only`` (:func:`_support_limit`); ``limits``: the limits already
    computed, by support (each support's eigenpair once)."""
    key = J.tobytes()
    if limits is not None and key in limits:
        lim = limits[key]
    else:
        lim = _support_limit(cov, J)
        if limits is not None:
            limits[key] = lim
    if lim is None or not lim[1] > f:
        return x, f
    y = np.zeros_like(x)
    y[J] = lim[0]
    return y, lim[1]
