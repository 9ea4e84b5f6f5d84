"""Several sparse components with disjoint supports via bipartite matchings.

Asteris, Kyrillidis, Papailiopoulos & Dimakis, "Sparse PCA via Bipartite
Matchings", NIPS 2015 — plus a nonnegative variant.
"""

from __future__ import annotations

import math
import time

import numpy as np
from scipy.optimize import linear_sum_assignment

from .._common.ascent import ascent, factor_starts
from .._common.steps import PlainPower
from ..operators.cov import Cov
from ..deflation import remove_each
from ..methods import REGISTRY
from .._common.summary import components_result
from .._common.validation import InputError, as_rng, check_int, check_k
from ..result import ComponentsResult, seed_param
from .._common.checks import check_bool, check_callback, check_cov, check_float
from .._common.points import flip, make_result
from .em import renormalize_on_support

__all__ = ["bipartite_components", "deflation_components", "max_weight_disjoint", "net_size", "DEFLATION_METHODS"]

# Default cap on sampled net points (each costs at most one assignment per sign
# pattern, and most are pruned by the bound; see bipartite_components).
_DEFAULT_SAMPLES = 2000
_CHUNK = 128
# at most this many floats in one chunk of net-point weights (S_chunk x n x r): bounds the
# memory at large n (NYTimes: n = 102,660, r = 8 gives chunks of 20 points, 130 MB)
_CHUNK_FLOATS = 1 << 24


def net_size(eps: float, d: int, r: int) -> float:
    """Points of the product ε/2-net of (S^{d-1})^r the paper iterates over: (1 + 4/ε)^{d r}."""
    return float((1.0 + 4.0 / eps) ** (d * r))


def _topsum(Wt: np.ndarray, s: int) -> np.ndarray:
    """Sum of the s largest entries of each column (last two axes: n x r)."""
    n = Wt.shape[-2]
    if s >= n:
        return Wt.sum(axis=-2)
    part = np.partition(Wt, n - s, axis=-2)[..., n - s:, :]
    return part.sum(axis=-2)


def max_weight_disjoint(Wt, s):
    """Alg. 2 (validated front end of :func:`_max_weight_disjoint`): returns ``(sets, value)``."""
    from .._common.validation import check_matrix

    Wt = check_matrix(Wt, "Wt")
    if (Wt < 0).any():
        raise InputError(f"`Wt` must be nonnegative weights; got min {float(Wt.min()):.3g}")
    s = check_int(s, "s", 1)
    sets, value, _ = _max_weight_disjoint(Wt, s)
    return sets, value


def _max_weight_disjoint(Wt: np.ndarray, s: int):
    """Alg. 2: disjoint index sets I_1..I_r, |I_j| <= s, maximizing sum_j sum_{i in I_j} Wt_ij.

    Parameters
    ----------
    Wt : ndarray (n, r), nonnegative weights
    s : int

    Returns
    -------
    (sets, value, shortcut)
        ``sets[j]`` sorted int array; ``value`` the total weight; ``shortcut``
        True when no assignment problem had to be solved.

    Notes
    -----
    A maximum-weight matching in the bipartite graph of s copies of each of
    the r components against the n features: ``linear_sum_assignment`` on the
    (r s) x n replicated weight matrix.  Two exact shortcuts: (1) if the
    per-column top-s sets are already disjoint they are optimal (they attain
    the relaxation without disjointness); (2) only the union of each column's
    top-(r s) features can be used by some optimal matching (a feature of j
    outside j's top-(r s) can be swapped for an unused one among them, at
    least as heavy, since only r s - 1 other slots exist), so the assignment
    runs on those columns only.
    """
    n, r = Wt.shape
    s_eff = min(s, n)
    if s_eff >= n:
        order = np.argsort(-Wt, axis=0, kind="stable")
    else:
        order = np.argpartition(-Wt, s_eff - 1, axis=0)
    top = order[:s_eff]
    flat = top.ravel()
    if np.unique(flat).size == flat.size:
        sets = [np.sort(top[:, j]) for j in range(r)]
        return sets, float(sum(Wt[sets[j], j].sum() for j in range(r))), True
    rs = r * s_eff
    if rs < n:
        cand = np.unique(np.argpartition(-Wt, rs - 1, axis=0)[:rs].ravel())
    else:
        cand = np.arange(n)
    B = np.repeat(Wt[cand].T, s_eff, axis=0)  # (r s) x |cand|, row j*s + c is copy c of j
    rows, cols = linear_sum_assignment(B, maximize=True)
    comp = rows // s_eff
    sets = [np.sort(cand[cols[comp == j]]) for j in range(r)]
    return sets, float(B[rows, cols].sum()), False


def _refine(cov: Cov, X: np.ndarray, best_val: float, s: int, nonneg: bool):
    """Local ascent beyond the paper, on A itself (see ``refine``): ``(X, value, steps)``.

    For PSD A, ``y^T A y >= (y^T A x)^2 / (x^T A x)``, so with
    ``w_j = A x_j / sqrt(x_j^T A x_j)`` ``f(Y) >= sum_j <y_j, w_j>^2``, which
    Alg. 2 maximizes; Y = X is feasible and attains f(X), so the matched Y
    never lowers f.  (With A_d in place of A this is Alg. 1 at the net point
    ``c_j = V^T x_j / ||V^T x_j||``.)
    """
    n, r = X.shape
    steps = 0
    for _ in range(100):
        rho = cov.quads(X)
        if np.any(rho <= 0):
            break
        W = cov.matvec(X) / np.sqrt(rho)
        Wt = np.clip(W, 0.0, None) ** 2 if nonneg else W * W
        sets, _, _ = _max_weight_disjoint(Wt, s)
        Xn = np.zeros((n, r))
        for j, I in enumerate(sets):
            I = I[Wt[I, j] > 0]
            if I.size:
                Xn[I, j] = W[I, j] / np.linalg.norm(W[I, j])
        val = float(cov.quads(Xn).sum())
        if val <= best_val * (1 + 1e-12):
            break
        X, best_val = Xn, val
        steps += 1
    return X, best_val, steps


def _swap_weakest(cov: Cov, X: np.ndarray, best_val: float, s: int, nonneg: bool, V: np.ndarray,
                  refine: bool):
    """Replace the weakest component by the best TPower component on the unused features while
    that raises the objective (then refine again): ``(X, value, swaps, refinements)``.

    Monotone: a swap is kept only when the new component's variance exceeds the
    old one's (the others are unchanged, supports stay disjoint).  Beyond the
    paper: it lets a component stuck on a poor local optimum of the matching
    (e.g. the frequent words, when several directions have nearly equal
    eigenvalues) jump to an unused direction.
    """
    n, r = X.shape
    swaps = refinements = 0
    for _ in range(2 * r):
        rho = cov.quads(X)
        j = int(np.argmin(rho))
        used = (np.delete(X, j, axis=1) != 0).any(axis=1)
        keep = np.flatnonzero(~used)
        if keep.size == 0:
            break
        sub = cov if keep.size == n else cov.columns(keep)
        kk = min(s, keep.size)
        r_ = ascent(sub.matvec, factor_starts(sub, V[keep], kk, nonneg), kk, step=PlainPower(nonneg=nonneg),
                    max_iter=200, rtol=None, xtol=1e-10, merge=False, keep="last", quads=sub.quads)
        x = r_.X[:, int(np.argmax(r_.values))]
        if not x.any() or sub.quad(x) <= rho[j] * (1 + 1e-9) + 1e-300:
            break
        X = X.copy()
        X[:, j] = 0.0
        X[keep, j] = x / np.linalg.norm(x)
        best_val = float(cov.quads(X).sum())
        swaps += 1
        if refine:
            X, best_val, more = _refine(cov, X, best_val, s, nonneg)
            refinements += more
    return X, best_val, swaps, refinements


def _net_bounds(V: np.ndarray, C: np.ndarray, s: int, nonneg: bool):
    """The sign patterns (P x r; one all-plus row when signed), the bound of every
    (point, sign pattern), ``bounds`` (S x P): the sum over the columns of the s largest
    weights, without disjointness; and ``disjoint`` (S,), a bound of every pair of a point that
    counts disjointness: the matching uses at most r s features, each in one column, and a
    feature's weight in any column and sign pattern is at most ``max_j W_ij^2``, so its weight is
    at most the sum of the r s largest of these row maxima.  ``bounds`` alone is up to r times too
    large when one direction dominates A (every column's top s are the same heavy features, which
    only one component can take): issue 41, a corpus with one 2 MB document, where no pair was
    pruned and 22,580 assignments were solved.  Computed chunk by chunk (never S x n x r at once)."""
    S, _, r = C.shape
    n = V.shape[0]
    disjoint = np.empty(S)
    if nonneg:
        patterns = np.array(np.meshgrid(*([[1.0, -1.0]] * r), indexing="ij")).reshape(r, -1).T
    else:
        patterns = np.ones((1, r))
    plus = (patterns > 0)  # (P, r)
    bounds = np.empty((S, patterns.shape[0]))
    chunk = max(1, min(_CHUNK, _CHUNK_FLOATS // (n * r)))
    for a in range(0, S, chunk):
        W = np.einsum("nd,tdr->tnr", V, C[a:a + chunk])
        if nonneg:
            Tp = _topsum(np.clip(W, 0.0, None) ** 2, s)  # (t, r)
            Tm = _topsum(np.clip(-W, 0.0, None) ** 2, s)
            bounds[a:a + chunk] = np.where(plus[None], Tp[:, None, :], Tm[:, None, :]).sum(axis=2)
        else:
            bounds[a:a + chunk] = _topsum(W * W, s).sum(axis=1)[:, None]
        disjoint[a:a + chunk] = _topsum((W * W).max(axis=2)[..., None], min(r * s, n))[:, 0]
    return patterns, bounds, disjoint


def _search_net(cov: Cov, V: np.ndarray, C: np.ndarray, patterns: np.ndarray, bounds: np.ndarray,
                s: int, nonneg: bool, callback, disjoint: np.ndarray | None = None):
    """Alg. 1 and 2 over the sampled points, in decreasing bound, until the bound falls to the
    best objective: ``(best value, best X, assignments, shortcuts, pairs visited)``.

    A point whose ``disjoint`` bound is at most the best matching weight found so far (the best
    surrogate, not the best objective: a looser test, so that the search still explores as it
    did where the old bound was tight) is skipped; the order and the stop are those of
    ``bounds`` alone, so that bound only removes work and the guarantee (at least every sampled
    pair's matching weight) is kept."""
    n, r = V.shape[0], C.shape[2]
    P = patterns.shape[0]
    total = bounds.size
    order = np.argsort(-bounds, axis=None, kind="stable")
    best_val, best_X, best_match = -np.inf, None, -np.inf
    assignments = shortcuts = 0
    visited = 0
    for flat in order:
        t, p = divmod(int(flat), P)
        if bounds[t, p] <= best_val:
            break  # every remaining pair has a smaller bound
        if disjoint is not None and disjoint[t] <= best_match:
            continue  # no matching of this point weighs more than one already found
        visited += 1
        W = V @ C[t]
        sg = patterns[p]
        Wt = np.clip(W * sg, 0.0, None) ** 2 if nonneg else W * W
        sets, match, shortcut = _max_weight_disjoint(Wt, s)
        best_match = max(best_match, match)
        assignments += not shortcut
        shortcuts += shortcut
        X = np.zeros((n, r))
        for j, I in enumerate(sets):
            I = I[Wt[I, j] > 0]
            if I.size:
                col = W[I, j] * sg[j]
                X[I, j] = col / np.linalg.norm(col)
        val = float(cov.quads(X).sum())
        if val > best_val:
            best_val, best_X = val, X
        if callback is not None and visited % 64 == 0:
            callback(min(visited, total), total)
    return best_val, best_X, assignments, shortcuts, visited


def _split_gain(cov: Cov, x: np.ndarray, diag: np.ndarray) -> np.ndarray:
    """For a unit ``x`` with at least two nonzeros: by how much ``sum`` of the variances grows when
    feature i leaves ``x`` to become a component ``e_i`` of its own (``-inf`` off the support).

    With ``q = x^T A x``, ``y = A x`` and ``x = x_i e_i + r``: ``r^T A r = q - 2 x_i y_i + x_i^2 A_ii``
    and ``||r||^2 = 1 - x_i^2``, so the gain is ``A_ii + r^T A r / (1 - x_i^2) - q``.  Never negative
    for PSD A: with ``a = x_i``, ``b = ||r||``, ``u = r / b`` (``a^2 + b^2 = 1``),
    ``q = a^2 A_ii + 2ab e_i^T A u + b^2 u^T A u <= (a sqrt(A_ii) + b sqrt(u^T A u))^2
    <= A_ii + u^T A u`` (Cauchy-Schwarz twice).
    """
    gain = np.full(x.size, -np.inf)
    idx = np.flatnonzero(x)
    y = cov.matvec(x[:, None])[:, 0]
    q = float(x @ y)
    xi = x[idx]
    rest = np.maximum(1.0 - xi * xi, np.finfo(float).tiny)
    gain[idx] = diag[idx] + (q - 2 * xi * y[idx] + xi * xi * diag[idx]) / rest - q
    return gain


def _polish_and_fill(cov: Cov, X: np.ndarray, nonneg: bool, polish: bool) -> list:
    """In place: renormalize each component on its support (``polish``), give a component
    with no admissible feature (all weights zero) a feature no other component uses, and
    flip signed components to their conventional sign.  Returns the notes.

    The feature given is the unused one of most variance; when every feature is used (possible
    when ``n_components * k >= n``), the one whose move out of a component with two or more
    features raises the total most (:func:`_split_gain`: never lowers it), that component then
    renormalized on the rest.  Such a component exists since ``n_components <= n``: the
    supports stay disjoint and every component nonzero.
    """
    n, r = X.shape
    notes = []
    if polish:
        for j in range(r):
            if X[:, j].any():
                X[:, j], _ = renormalize_on_support(cov, X[:, j], nonneg)
    diag = cov.diag()
    for j in range(r):
        if X[:, j].any():
            continue
        used = (X != 0).any(axis=1)
        if not used.all():
            i = int(np.argmax(np.where(used, -np.inf, diag)))
            notes.append(f"component {j + 1} got no feature from the matching; feature {i} used")
        else:
            donors = [t for t in range(r) if np.count_nonzero(X[:, t]) >= 2]
            gains = np.array([_split_gain(cov, X[:, t], diag) for t in donors])
            t_, i = np.unravel_index(int(np.argmax(gains)), gains.shape)
            t, i = donors[int(t_)], int(i)
            X[i, t] = 0.0
            X[:, t] /= np.linalg.norm(X[:, t])
            if polish:
                X[:, t], _ = renormalize_on_support(cov, X[:, t], nonneg)
            notes.append(f"component {j + 1} got no feature from the matching and every feature was "
                         f"used; feature {i} moved to it from component {t + 1} (the total does not drop)")
        X[i, j] = 1.0
    if not nonneg:
        for j in range(r):
            X[:, j] = flip(X[:, j])
    return notes


def bipartite_components(cov: Cov, n_components: int, k: int, *, eps=0.1, seed=0, nonneg=True,
                         samples=None, callback=None, d=None, polish=True, refine=True,
                         swap=False) -> ComponentsResult:
    """r components, each k-sparse, with disjoint supports, maximizing the total variance.

    Parameters
    ----------
    cov : Cov
        The top-d factor comes from :meth:`Cov.factor` (thin SVD through X when
        m < n; never n x n); candidate scoring uses ``cov.quads``.  A
        :class:`~nspca_core.operators.sparse.SparseCov` works as it is: only the n x d
        factor, products with A, the diagonal and s x s submatrices are used
        (memory O(nnz + n (d + r)) plus one chunk of net points, at most
        2^24 floats); A is never formed.
    n_components : int in [1, n]  (r)
    k : int in [1, n]  (s, nonzeros per component)
    eps : float in (0, 1], default 0.1
        Net accuracy; enters the net size ``(1 + 4/ε)^{d r}`` (the count
        Alg. 1 would visit) and hence the default sample count.
    seed : int or Generator
    nonneg : bool, default True
        Nonnegative components (see Notes); False is the signed algorithm of
        the paper.
    samples : int, optional
        Net points sampled.  Default ``min(ceil((1 + 4/ε)^{d r}), 2000)``: the
        full net is astronomically large for r = 5 (41^25 points at ε = 0.1),
        so, like the authors' implementation, points are drawn uniformly at
        random and the count is stated in ``info``.
    callback : callable(done, total), optional
        Progress over sampled points.
    d : int, optional
        Rank of the approximation ``A_d = V V^T`` (default r, as in the paper's
        experiments: C is d x r).
    polish : bool, default True
        Replace each found x_j by the best unit vector on its support (the
        leading eigenvector of A_{I_j I_j}; nonnegative: see
        :func:`~nspca_core.peers.em.em_pca` renormalization).  Never lowers
        the objective; supports stay disjoint.  Beyond the paper.
    refine : bool, default True
        After the sampled points, a local ascent beyond the paper: match again
        with weights from ``w_j = A x_j / sqrt(x_j^T A x_j)`` (Alg. 2 on the
        true A; with A_d it is Alg. 1 at the net point ``c_j ∝ V^T x_j``),
        repeat while the objective grows.  Monotone: since
        ``y^T A y >= (y^T A x)² / x^T A x`` for PSD A, the matched Y has
        ``f(Y) >= Σ <y_j, w_j>² >= f(X)``.
    swap : bool, default False
        After refinement, replace the weakest component by the best TPower
        component on the features no other component uses, while that raises
        the objective (then refine again).  Beyond the paper; monotone.  Helps
        when several directions have nearly equal eigenvalues and a component
        is stuck on a poor matching (e.g. on the frequent words of a corpus).

    Returns
    -------
    ComponentsResult
        ``method="bipartite"``, ``strategy="bipartite"``.  ``info``:
        ``samples`` (points drawn), ``net_size``, ``sign_patterns`` per point,
        ``assignments`` (matchings solved), ``pruned`` (point/sign pairs skipped
        by the bound), ``disjoint_shortcuts``, ``objective`` (Σ x_j^T A x_j)
        and ``objective_before_polish`` (after refinement), ``refinements``,
        ``swaps``.

    Notes
    -----
    Alg. 1: for points ``C`` (d x r, unit columns) of an ε/2-net of
    ``(S^{d-1})^r``, ``W = U_d Λ_d^{1/2} C`` (= V C); Alg. 2 picks disjoint
    supports ``I_j`` (``|I_j| <= s``) maximizing ``Σ_j Σ_{i∈I_j} W_ij²`` by a
    maximum-weight bipartite matching (:func:`max_weight_disjoint`), and
    ``x_j = W_{I_j,j}/||W_{I_j,j}||``; the best X over the net is kept.  The
    paper proves ``Σ x_j^T A_d x_j >= (1 - ε) OPT_d`` over the full net.

    Scoring and pruning: every candidate is scored on ``A`` itself.  The
    surrogate ``Σ_j <x_j, w_j>²`` is at most ``Σ_j x_j^T A_d x_j`` (Cauchy–
    Schwarz, unit c_j) ``<= Σ_j x_j^T A x_j``, and is at most the bound
    ``Σ_j`` (sum of the s largest weights of column j) without disjointness.
    Points are visited in decreasing bound and skipped once the bound is
    below the best objective found: the output is still at least the best
    surrogate over all sampled points, which is what the guarantee needs.

    Nonnegative variant (beyond the paper): a component may take a feature
    only with the sign its column agrees on: weights ``(max(σ_j W_ij, 0))²``
    for each sign pattern σ ∈ {±1}^r of the columns of C (both signs of each
    column — the net is symmetric), ``x_j = σ_j W_{I_j,j}/||.|| >= 0``.  All
    2^r patterns enter the bound-ordered queue, so most are pruned unsolved.

    Reference: M. Asteris, D. Papailiopoulos, A. Kyrillidis, A. G. Dimakis,
    "Sparse PCA via Bipartite Matchings", NIPS 2015, Alg. 1 and 2.
    """
    t0 = time.perf_counter()
    cov = check_cov(cov)
    n = cov.n
    r = check_int(n_components, "n_components", 1, n)
    s = check_k(k, n)
    eps = check_float(eps, "eps", 0.0, 1.0)
    nonneg = check_bool(nonneg, "nonneg")
    polish = check_bool(polish, "polish")
    refine = check_bool(refine, "refine")
    swap = check_bool(swap, "swap")
    callback = check_callback(callback)
    d = r if d is None else check_int(d, "d", 1, n)
    d = min(d, n)
    rng = as_rng(seed)
    N = net_size(eps, d, r)
    if samples is None:
        S = int(min(math.ceil(N), _DEFAULT_SAMPLES))
    else:
        S = check_int(samples, "samples", 1)

    V, eigenvalues = cov.factor(d)
    # all sampled points: C[t] is d x r with unit columns
    C = rng.standard_normal((S, d, r))
    C /= np.linalg.norm(C, axis=1, keepdims=True)
    patterns, bounds, disjoint = _net_bounds(V, C, s, nonneg)
    P = patterns.shape[0]
    best_val, X, assignments, shortcuts, visited = _search_net(cov, V, C, patterns, bounds, s, nonneg,
                                                               callback, disjoint)
    pruned = S * P - visited

    refinements = swaps = 0
    if refine:
        X, best_val, refinements = _refine(cov, X, best_val, s, nonneg)
    if swap:
        X, best_val, swaps, more = _swap_weakest(cov, X, best_val, s, nonneg, V, refine)
        refinements += more
    before = best_val
    notes = _polish_and_fill(cov, X, nonneg, polish)
    if callback is not None:
        callback(S * P, S * P)
    results = [make_result(cov, X[:, j], method="bipartite", params=dict(k=s), t0=t0)
               for j in range(r)]
    params = dict(n_components=r, k=s, eps=eps, d=d, nonneg=nonneg, samples=S, polish=polish,
                  refine=refine, swap=swap,
                  random_state=seed_param(seed))
    info = dict(samples=S, net_size=N, sign_patterns=P, assignments=assignments,
                disjoint_shortcuts=shortcuts, pruned=int(pruned), refinements=refinements,
                swaps=swaps, objective_before_polish=float(before), eigenvalues=eigenvalues.tolist(), notes=notes)
    out = components_result(cov, X, method="bipartite", strategy="bipartite", params=params, t0=t0,
                            results=results, info=info)
    info["objective"] = out.total_variance
    return out


# --------------------------------------------------------------------------- deflation baselines

#: single-component methods of :func:`deflation_components`, the 2015 paper's
#: Table 2 baselines (``deflation_baseline`` in :data:`nspca_core.methods.REGISTRY`)
DEFLATION_METHODS = tuple(name for name, spec in REGISTRY.items() if spec.deflation_baseline)


def deflation_components(cov: Cov, n_components: int, k: int, *, method: str = "tpower", d: int = 5,
                         nonneg: bool = True, seed=0, samples=None, max_iter: int = 200,
                         callback=None) -> ComponentsResult:
    """r components by deflation: solve one k-sparse component, remove its features, repeat.

    The baseline of Asteris et al. (2015), Table 2: deflation with a
    single-component method gives disjoint supports by removing the features
    used so far before the next component (the "deflation-remove" loop of
    :func:`deflate`, with the paper's own iterations instead of the registry's
    solvers).  Only products with A, the
    diagonal, k x k submatrices and the top-d factor are used, so a
    :class:`~nspca_core.operators.sparse.SparseCov` is never densified (the remaining
    features are a view of it, :meth:`~nspca_core.operators.cov.Cov.columns`).

    Parameters
    ----------
    cov : Cov
    n_components : int in [1, n]  (r)
    k : int in [1, n]  (s, nonzeros per component)
    method : {"tpower", "em", "spannogram"}  (:data:`nspca_core.peers.bipartite.DEFLATION_METHODS`)
        ``"tpower"``: truncated power iteration (Yuan & Zhang 2013) on the
        remaining features, from the k largest variances and from the
        truncated columns of the top-d factor (both signs), best start kept
        (:func:`~nspca_core._common.ascent.ascent` with the step
        :class:`~nspca_core._common.steps.PlainPower`).
        ``"em"``: the EM iteration for sparse PCA (Sigg & Buhmann 2008) in
        covariance form — the M-step ``A x`` soft-thresholded to k nonzeros —
        from the same starts, then the best unit vector on the support.
        ``"spannogram"``: the rank-d spannogram on a sampled ε-net
        (:func:`bipartite_components` with one component), factor recomputed
        on the remaining features.
    d : int, default 5
        Rank of the factor used for starts (tpower, em) or the spannogram.
    nonneg : bool, default True
        Nonnegative components; False is the signed problem of the paper.
    seed : int or Generator
        For the spannogram's sampled net.
    samples : int, optional
        Spannogram net points (default as :func:`bipartite_components`).
    max_iter : int, default 200
        Power / EM iterations per component.
    callback : callable(done, total), optional
        Called after each component.

    Returns
    -------
    ComponentsResult
        ``method`` as given, ``strategy="deflation-remove"``; ``info``:
        ``objective`` (Σ x_j^T A x_j on the original A), ``iterations``.
    """
    t0 = time.perf_counter()
    cov = check_cov(cov)
    n = cov.n
    r = check_int(n_components, "n_components", 1, n)
    s = check_k(k, n)
    if method not in DEFLATION_METHODS:
        raise InputError(f"`method` must be one of {DEFLATION_METHODS}; got {method!r}")
    if r * s > n:
        raise InputError(f"`n_components` * `k` must be at most n_features={n} for disjoint "
                         f"supports; got {r} * {s} = {r * s}")
    d = check_int(d, "d", 1, n)
    nonneg = check_bool(nonneg, "nonneg")
    max_iter = check_int(max_iter, "max_iter", 1)
    callback = check_callback(callback)
    rng = as_rng(seed)
    X = np.zeros((n, r))
    iterations = []
    V = cov.factor(min(d, n))[0] if method != "spannogram" else None

    def solve(sub, kj, keep):
        if method == "spannogram":
            res = bipartite_components(sub, 1, min(s, sub.n), eps=0.1, seed=rng, nonneg=nonneg,
                                       samples=samples, d=min(d, sub.n), refine=False)
            x = res.loadings[:, 0]
            iterations.append(int(res.info["samples"]))
        else:
            out = ascent(sub.matvec, factor_starts(sub, V[keep], s, nonneg), s,
                         step=PlainPower(soft=method == "em", nonneg=nonneg), max_iter=max_iter, rtol=None,
                         xtol=1e-10, merge=False, keep="last", quads=sub.quads)
            x = out.X[:, int(np.argmax(out.values))]
            if method == "em" and x.any():
                x, _ = renormalize_on_support(sub, x, nonneg)
            iterations.append(int(out.iterations))
        if not x.any():
            x = np.zeros(sub.n)
            x[int(np.argmax(sub.diag()))] = 1.0
        if not nonneg:
            x = flip(x)
        return x / np.linalg.norm(x), None

    for j, _, x, _ in remove_each(cov, (s,) * r, solve, info={}, whole=True):
        X[:, j] = x
        if callback is not None:
            callback(j + 1, r)
    results = [make_result(cov, X[:, j], method=method, params=dict(k=s), t0=t0)
               for j in range(r)]
    params = dict(n_components=r, k=s, method=method, d=d, nonneg=nonneg, max_iter=max_iter,
                  random_state=seed_param(seed))
    info = dict(iterations=iterations)
    out = components_result(cov, X, method=method, strategy="deflation-remove", params=params, t0=t0,
                            results=results, info=info)
    info["objective"] = out.total_variance
    return out
