"""The DNN's starting points from a feasible x (the KKT point, :func:`kkt_init`), the screening search
(:func:`_screen_init`; moved from :mod:`.dual` unchanged, issue 39, 14th round: the module limit) and the
rigorous value of a start (:func:`_start_value`): for :mod:`nspca_core.certificates.dual`, which re-exports them."""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg

from .dnn import DnnState, DnnWork, _ritz, dnn_tangent, dnn_value_lam, value_below
from .dnn_thin import kkt_lmax_thin


def kkt_init(A: np.ndarray, x: np.ndarray, parts: dict | None = None) -> np.ndarray:
    """``N`` from the KKT conditions of a feasible ``x`` (support I).

    If ``x`` were optimal for ``max x^T A x`` over unit ``x >= 0`` (large k),
    stationarity reads ``(A x)_I = lambda x_I`` and ``(A x)_i <= 0`` off I.
    ``N_{iI} = -(A x)_i^- x_I^T`` (``i`` off I, symmetrised) is ``>= 0`` and
    makes ``(A + N) x = lambda x`` exactly, so ``x`` becomes an eigenvector of
    ``A + N``; the optimizer then only has to push the other eigenvalues down.
    ``parts`` (a dict): given ``w`` (n, zero on I) with ``N_iI = fl(w_i x_I)``, the floats N is made of.
    """
    n = A.shape[0]
    N = np.zeros((n, n))
    I = x > 0
    if not I.any() or I.all():
        return N
    y = A @ x
    off = ~I
    w = np.maximum(-y[off], 0.0)  # only where (A x)_i < 0 does N help
    if parts is not None:
        parts["w"] = np.zeros(n)
        parts["w"][off] = w
    block = np.outer(w, x[I])
    N[np.ix_(off, I)] = block
    N[np.ix_(I, off)] = block.T
    return N


# _kkt_beaten: from this many features (below, LAPACK's eigenvalue costs about as much: LRS, 93), this many
# block steps of this many vectors
_KKT_EST_MIN_N, _KKT_EST_STEPS, _KKT_EST_R = 150, 3, 4
# the KKT point is evaluated only where its estimate leaves it able to certify this ratio.  Issue 39's 18th round
# (helper dnnwarm23) measured 0.95: where the KKT point certified 0.90-0.93 (dlbcl-shaped k = 150 / 200, MLL k = 150,
# the topic corpus c3000 k = 10) the screening start beat it and its evaluation (~40 ms at 1,378 features) went
# unused; one-k certificates x0.82-0.88 there with all 70 of bench_drift's ratios bit-identical.  But without the
# evaluation the screening start is lazy and the plain run's give-up point not evaluated, and the path's DNN runs
# then started elsewhere: the golub-shaped path was looser at 87 k (k = 44..50 0.985-0.994 -> 0.975-0.982), so 0.9
_KKT_USEFUL = 0.9


def _kkt_beaten(A: np.ndarray, x: np.ndarray, best: float, lower: float, keep: dict | None = None) -> bool:
    """Whether the KKT point of x (:func:`kkt_init`, ``mu = 0``: its bound is ``lambda_max(A + N)``)
    is not worth its evaluation: a Ritz value of ``A + N`` (a few block steps from x and a seeded
    block) at or above ``best (1 + 1e-6)`` (no better than the bounds so far) or above ``lower /``
    :data:`_KKT_USEFUL` (the screening start is better there: on CBCL the DNN started from the KKT
    point only where it certified 0.99 or more).  Ritz values are Rayleigh quotients, below
    ``lambda_max`` (the margin covers their rounding); this only decides that an evaluation is
    skipped, never a bound.  ``keep`` (a dict): given the block steps' vectors as ``keep["U"]`` (the
    point's evaluation starts from them, :func:`_start_value`)."""
    n = A.shape[0]
    if n < _KKT_EST_MIN_N:
        return False
    M = A + kkt_init(A, x)
    U = np.column_stack([x, np.random.default_rng(0).standard_normal((n, _KKT_EST_R - 1))])
    for _ in range(_KKT_EST_STEPS):
        w, U = _ritz(M, U, _KKT_EST_R)
    if keep is not None:
        keep["U"] = U
    est = float(w[0])
    return est >= best * (1.0 + 1e-6) or lower < _KKT_USEFUL * est


def kkt_floor(A: np.ndarray, x: np.ndarray, matvec=None) -> float:
    """A proved lower bound on ``lambda_max(A + N)``, N = :func:`kkt_init` (A symmetric, x >= 0): the Rayleigh
    quotient of a nonnegative u (two clipped power steps from x), as ``u^T (A + N) u >= u^T A u`` for N >= 0 and
    u >= 0, less its rounding (``|fl(u^T A u) - u^T A u| <= gamma max|A| (1^T u)^2``, ``gamma = (n + 2) eps /
    (1 - (n + 2) eps)``; the same for ``u^T u``).  0.0 where u vanishes.  Costs three products with A, not the
    n x n matrix A + N.  ``matvec``: the power steps' products by another route (the sparse data's operator:
    :mod:`.sparse_route`, O(nnz) each): the proof holds for ANY nonnegative u, so only the last product (the
    quotient's) is A's; ``max|A|`` is read as ``max(max A, -min A)`` (the same float, no |A| array)."""
    n = A.shape[0]
    mv = A.__matmul__ if matvec is None else matvec
    u = np.maximum(np.asarray(mv(x), dtype=np.float64).reshape(-1), 0.0)
    u = np.maximum(np.asarray(mv(u), dtype=np.float64).reshape(-1), 0.0)
    den = float(u @ u)
    if not den > 0 or not np.isfinite(den):
        return 0.0
    eps = np.finfo(float).eps
    g = (n + 2) * eps / (1 - (n + 2) * eps)
    amax = max(float(A.max()), -float(A.min())) if A.size else 0.0
    num = float(u @ (A @ u)) - g * amax * float(u.sum()) ** 2
    return num / (den * (1 + g)) * (1 - 2 * eps) if num > 0 else num / (den * (1 - g)) * (1 + 2 * eps)


def _kkt_floored(A: np.ndarray, x: np.ndarray, lower: float) -> bool:
    """Whether the KKT point of x is proved unable to certify :data:`_KKT_USEFUL`: its bound (``lambda_max(A + N)``,
    ``mu = 0``) is at least :func:`kkt_floor`, here above ``lower / _KKT_USEFUL``.  Asked before :func:`_kkt_beaten`,
    whose verdict it gives at ~1/5 of the cost where it holds (three products with A, no n x n ``A + N`` and no block
    steps; issue 39, dense18: img24 k = 5..150, s300x400 and CBCL k <= 20, the floor at 0.06-0.67 of x's value's
    reach); from ``_KKT_EST_MIN_N`` features, as that estimate.  Decides only that an evaluation is skipped."""
    return A.shape[0] >= _KKT_EST_MIN_N and x is not None and _KKT_USEFUL * kkt_floor(A, x) > lower


def _kkt_held_out(A: np.ndarray, k: int, x: np.ndarray, tau: float, seen: dict | None) -> bool:
    """Whether the KKT point of x cannot bind a one-k certificate whose anchored top test (:func:`.dual.top_test`'s
    record in ``seen``, made on this A at ``(k, tau)`` by its caller: :mod:`.sparse_route`) held: the anchored bound
    is then at most ``tau`` and the KKT point's at least :func:`kkt_floor`, proved above ``tau`` here.  Only from
    ``_KKT_EST_MIN_N`` features (below, the point is evaluated without an estimate, as before: cheap there)."""
    last = None if seen is None else seen.get("top")
    if (A.shape[0] < _KKT_EST_MIN_N or x is None or last is None or last[0] is not A
            or last[1] != (int(k), float(tau)) or not last[3]):
        return False
    prod = seen.get("products")  # ((A, matvec): the sparse route's operator for this A, :mod:`.sparse_route`)
    return kkt_floor(A, x, prod[1] if prod is not None and prod[0] is A else None) > tau


def _kkt_point(A: np.ndarray, k: int, x: np.ndarray, U: np.ndarray | None = None, lower: float | None = None,
               work: DnnWork | None = None, thin=None):
    """The KKT dual point of a feasible x (:func:`kkt_init`): ``(value, state, lambda)``, the
    value rigorous.  ``U``, ``lower``, ``work``: see :func:`_start_value` (the state returned has no subspace).
    ``thin``: ``(A, X_S)`` with ``A = fl(X_S^T X_S) / m`` (:meth:`.Cov.submatrix`: :func:`.single._split_S`'s
    record), read when its A is this A: the thin factor's bound (:func:`.dnn_thin.kkt_lmax_thin`, O(n m^2), within
    ~1e-10 of LAPACK's eigenvalue) values the point first, neither the Cholesky proof at U's Ritz guess (n^3 / 3, its
    allowance ~3e-8 of the value at n ~ 2,000) nor LAPACK's n^3 eigenvalue made (issue 39, 25th round); they are the
    fallback where it proves nothing."""
    parts: dict = {}
    st = DnnState(kkt_init(A, x, parts), 0.0)
    exact = None
    if thin is not None and thin[0] is A and "w" in parts:
        def exact():
            return kkt_lmax_thin(thin[1], thin[1].shape[0], np.asarray(x, dtype=float), parts["w"])
    if exact is not None:  # (the thin bound first: _start_value then asks it before LAPACK, no Cholesky at a guess)
        U, lower = None, None
    v, lam = _start_value(A, k, st, U, lower, work, exact)
    return v, st, lam


# _start_value: a start whose value from a Ritz guess certifies this ratio is evaluated by LAPACK (as without
# the guess): it may end the certificate (the targets are 0.99..0.99999) or prove x optimal
_START_EXACT = 0.98


def _start_value(A: np.ndarray, k: int, st: DnnState, U: np.ndarray | None, lower: float | None,
                 work: DnnWork | None = None, exact=None, beat: float | None = None) -> tuple[float, float]:
    """A DNN start's rigorous ``(value, lambda bound)``.  Without a subspace the evaluation is LAPACK's top
    eigenvalue (n^3); with ``U`` (the block steps that chose the start: :func:`_kkt_beaten`,
    :func:`_screen_init`) it is proved by Cholesky at a Ritz guess from U (:func:`.dnn_lmax.lmax_upper`, ~1/5 of
    the cost at n = 1,200: issue 39, dlbcl-shaped k = 200 spent 0.18 s in two such eigenvalues).  Where the
    guessed value certifies :data:`_START_EXACT` of ``lower`` (or ``lower`` is None), LAPACK's value is taken
    instead: a start that may end the certificate is valued as before.  Either value is an upper bound.  ``exact``
    (a callable: a proved ``lambda`` bound or None) stands for LAPACK's where it proves one (the smaller kept).

    ``beat`` (the value of a start already in hand, :func:`.dual._dnn`'s KKT point): where the floor of this start's
    value (:func:`.dnn.value_below` at U's first vector, one assembly and two symmetric products) is at least
    ``beat``, ``(inf, None)`` is returned, nothing evaluated: whichever value the evaluation would prove is at or
    above that floor, so the caller, keeping a start only where its value is strictly below ``beat``, keeps the
    same one.  Issue 39, wide37: golub-shaped k = 400, the screening start (576.6 against the KKT point's 571.4)
    was valued by LAPACK's n^3 eigenvalue at |S| = 1,611 (its Ritz guess's value certified 0.98 of ``lower``),
    0.36 of 1.5 CPU s, and never used."""
    if beat is not None and U is not None and U.shape[0] == A.shape[0] and U.shape[1] > 0:
        if value_below(A, k, DnnState(st.N, st.nu, U, st.C, st.w), work) >= beat:
            return np.inf, None
    lam = np.inf
    if U is not None and lower is not None and U.shape[0] == A.shape[0]:
        v, lam = dnn_value_lam(A, k, DnnState(st.N, st.nu, U), work=work)
        if lower < _START_EXACT * v:
            return v, lam
    lam_x = None if exact is None else exact()
    if lam_x is not None:
        lam = min(float(lam_x), lam)
        return float(dnn_tangent(lam, st, A.shape[0], np.array([k]))[0]), lam
    return dnn_value_lam(A, k, st, work=work)


# the screening search's block (vectors) and block-Krylov steps per mu (twice that at the first)
_SCREEN_R, _SCREEN_STEPS = 4, 3


def _screen_init(A: np.ndarray, k: int, lam1: float | None = None, keep: dict | None = None) -> DnnState:
    """The one-parameter family ``N(mu)_ij = (mu - A_ij)_+`` (i != j), mu searched.

    Then ``M = A + N - mu J`` has off-diagonal ``(A_ij - mu)_+`` and diagonal
    ``A_ii - mu``, a soft-thresholding of A; the bound
    ``lambda_max(M) + mu k`` (valid: N >= 0) is minimized over mu by a
    coarse grid (5 points) and 4 golden-section steps using cheap values (top Ritz values of a
    warm block; only the chosen point matters; it is re-evaluated exactly later).  ``lam1``: A's top
    eigenvalue when the caller has it (a path calls this at many k), or a callable ``(hi, max A_ii, k) ->`` the
    value where only ``min(hi, (lambda_1 - max A_ii) / (k - 1))`` is read of it (``hi``: A's largest off-diagonal
    entry).  ``keep`` (a dict): given the search's last block of Ritz vectors as ``keep["U"]`` (n > 150; a start
    for the point's evaluation, :func:`_start_value`: the point returned is the same either way).
    """
    n = A.shape[0]
    dg = np.diag(A)
    # N's buffer (the result) first holds A's off-diagonal part, then (n > 150) the search's two
    # float32 scratch arrays, then N itself: one fresh n x n array instead of five (issue 39: each
    # fresh array cost its page faults, ~1,200 of them, ~3.5 ms of CBCL k = 65's ~7 ms here; the
    # same floats: ``off`` is A with a zero diagonal, ``mu - off`` off the diagonal is ``mu - A``)
    N = np.empty((n, n))  # (float64, C order: its memory viewed as 2 n^2 float32 below)
    np.copyto(N, A)
    N.flat[:: n + 1] = 0.0  # (off)
    hi = float(N.max()) if n > 1 else 0.0
    if callable(lam1):  # (a value computed where the bracket below needs it: cheap.Lambda1Only's bracket)
        lam1 = lam1(hi, float(dg.max()), k)
    if lam1 is None:
        lam1 = float(scipy.linalg.eigh(A, subset_by_index=[n - 1, n - 1], eigvals_only=True)[0]) \
            if n > 1 else float(dg[0])
    if k > 1:
        hi = min(hi, (lam1 - float(dg.max())) / (k - 1))
    if hi <= 0 or n < 3:
        return DnnState(np.zeros((n, n)), 0.0)
    # n > 150: the top Ritz value of a few block-Krylov steps (dnn._ritz, 4 vectors), the block
    # kept warm from one mu to the next (the Perron vectors of nearby mu are close), instead of a
    # Lanczos run per mu (issue 39: 11 ARPACK runs were a quarter of CBCL k = 10's certificate;
    # the same mu to 4 digits there and on MLL's screened set).  It only picks the DNN's
    # starting price: the point is evaluated rigorously later.
    block = [None]
    # one buffer for every mu, the maximum against an array of zeros (~2.4x faster than a fresh
    # difference and a maximum against the scalar; the same values; issue 39)
    if n > 150:  # float32: half the memory traffic, to choose mu; buffer and zeros in N's memory
        off32 = N.astype(np.float32)
        scratch = N.reshape(-1).view(np.float32)
        buf, zero = scratch[: n * n].reshape(n, n), scratch[n * n:].reshape(n, n)
        zero.fill(0.0)
    else:
        off32 = N.copy()
        buf, zero = np.empty_like(off32), np.zeros_like(off32)

    def h(mu):
        M = np.subtract(off32, off32.dtype.type(mu), out=buf)
        np.maximum(M, zero, out=M)
        M[np.diag_indices(n)] = dg - mu
        if n <= 150:  # LAPACK beats Lanczos' overhead on small matrices
            return float(scipy.linalg.eigh(M, subset_by_index=[n - 1, n - 1], eigvals_only=True,
                                           check_finite=False)[0]) + mu * k
        steps = _SCREEN_STEPS
        if block[0] is None:  # a positive vector (never orthogonal to the Perron vector) and a seeded rest
            block[0] = np.column_stack([np.ones(n), np.random.default_rng(0).standard_normal((n, _SCREEN_R - 1))])
            steps *= 2
        for _ in range(steps):
            w, block[0] = _ritz(M, block[0], _SCREEN_R)
        return float(w[0]) + mu * k

    grid = np.linspace(0.0, hi, 5)
    vals = [h(m) for m in grid]
    j = int(np.argmin(vals))
    a, b = grid[max(j - 1, 0)], grid[min(j + 1, grid.size - 1)]
    g = (math.sqrt(5) - 1) / 2
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = h(c), h(d)
    for _ in range(4):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = h(c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = h(d)
    cands = [(vals[j], grid[j]), (fc, c), (fd, d)]
    mu = min(cands)[1]
    if keep is not None and block[0] is not None:
        keep["U"] = block[0]
    np.subtract(mu, A, out=N)
    np.maximum(N, 0.0, out=N)
    N.flat[:: n + 1] = 0.0
    return DnnState(N, mu * n)
