"""The split route's rest ``A_TT`` on sparse data with the covariance held (:mod:`.sparse_route`): its two top
eigenvalue bounds by a Lanczos guess and two Cholesky proofs, instead of LAPACK's top eigenpairs.

Why: the split certificate reads of ``A_TT`` only ``lambda1`` (``lambda_max(A_TT)``) and ``paper(d=1)``
(``OPT_1(v) + lambda_2``) at each sparsity (:func:`.bounds._rest_curve`, :func:`.bounds._bound_rest`).  LAPACK's two
top eigenpairs of a 1,300 x 1,300 ``A_TT`` (a tridiagonalization, ``4 n^3 / 3``) were 0.17 of a 0.43 CPU s certificate
on a 3,000 x 1,600 topic corpus (issue 39); ARPACK's guess and two factorizations (``n^3 / 3`` each) ~0.06.

The bounds (M = the float ``A_TT``, symmetric as stored; ``u_1``, ``u_2``, ``theta_1 >= theta_2`` any guesses):

- ``lambda_max(M) <= c_1 + slack_1`` where :func:`.dnn_lmax.chol_lmax` factors ``c_1 I - M`` (its proof there; a
  guess below lambda_max fails the factorization and nothing is assumed), ``c_1 = theta_1 + ||M u_1 - theta_1
  u_1|| + 1e-12 |theta_1|``.
- For ANY vector v: ``x^T M x = (v^T x)^2 + x^T (M - v v^T) x <= OPT_1(v) + lambda_max(M - v v^T)`` for every unit
  x, so ``paper(d=1)`` holds with ``lambda_max(M - v v^T)`` in place of ``lambda_2`` (no eigenvector assumed).
  With ``v = sqrt(theta_1) u_1``: the float ``R = fl(M - v v^T)`` differs from the exact ``M - v v^T`` by at most
  ``2 eps (|M| + |v| |v|^T)`` entrywise, hence by ``2 eps (||M||_F + ||v||^2)`` in norm (added), and
  ``lambda_max(R)`` is proved as above at ``c_2 = theta_2 + ||M u_2 - theta_2 u_2|| + 1e-9 |theta_1|`` (retried
  once 4x farther where the deflation's error puts R's top above it).  ``M - v v^T <= M``: the smaller of the two
  is kept.
- ``lambda_max(M)`` from the second proof, no factorization of ``c_1 I - M`` (corpus18, :func:`_top_by_deflation`):
  in an orthonormal basis whose first vector is ``u = v / ||v||`` (exactly v's direction), ``M = [[a, b^T], [b, C]]``
  with ``a = u^T M u``, ``||b|| <= ||M u - t u||`` for any t, and ``C`` a compression of ``M - v v^T`` (v v^T is zero
  off u), so ``lambda_max(C) <= s`` = the second proof's value; for unit ``x = (alpha, y)``, ``x^T M x <= a alpha^2
  + 2 |alpha| ||b|| ||y|| + s ||y||^2 <= lambda_max([[a, ||b||], [||b||, s]])``.  The products' rounding (a, the
  residual, the norms; ``gamma_n ||M||_F ||v||`` for ``fl(M v)``) is added outward.  Where this value is at most
  the least the first proof could give (``c_1`` plus its factorization's slack, :func:`_least`) that factorization
  is not run (the 3,000 x 1,600 topic corpus: a gap ``theta_1 - s`` ~0.09 and a residual ~5e-16 give ``theta_1`` +
  7.5e-13 against ``c_1`` + 2.8e-9; one Cholesky of 1,300 rows, ~0.017 CPU s, spared); else it runs as before and
  the smaller value is kept.
- Both values get :func:`.cheap.lambda1_proved`'s allowance ``tol = 32 n eps ||M||_F`` on top (the Spectrum's
  ``tol``, added once more by ``paper(d=1)``).

None (the caller computes LAPACK's eigenpairs) where ARPACK fails or either factorization does.

ARPACK's products (the guesses only) go through the sparse data's columns T where the caller hands them
(:func:`rest_products`: ``X_T^T (X_T V) / m - mu_T (mu_T^T V)``, the operator's own expression), not through the
formed ``A_TT``: issue 39, corpus18, the 3,000 x 1,600 topic corpus (|T| = 1,300, 77 k nonzeros in T against 1.7 M
entries of A_TT): the guesses 0.022 -> 0.011 CPU s of a ~0.24 s certificate; the proved values moved by 2e-15
relative (w[0]) and 0 (w[1]) -- the residuals and both factorizations still read the formed M.
Tests: ``tests/core/certificates/test_rest_top.py`` (hypothesis, against eigvalsh and brute force).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.sparse.linalg import ArpackError, ArpackNoConvergence, LinearOperator, eigsh

from ._settings import _EPS
from .dnn_lmax import chol_lmax

__all__ = ["rest_top", "partial_rest", "rest_products", "trace_k", "trace_curve", "late_rest", "trace_first",
           "spectrum_floor"]

# from this many features of T (below, LAPACK's top eigenpairs cost little): on the 3,000 x 1,600 topic corpus
# |T| = 1,000..1,300
_PARTIAL_MIN_N = 400


def partial_rest(cov, T: np.ndarray) -> bool:
    """Whether the split route's rest T of ``cov`` takes :func:`rest_top`: sparse data held as an operator whose
    covariance is formed (:mod:`.sparse_route`), and at least :data:`_PARTIAL_MIN_N` features in T."""
    return (bool(getattr(cov, "sparse", False)) and cov.X is None and cov._A is not None
            and T.size >= _PARTIAL_MIN_N)


def rest_products(cov, T: np.ndarray):
    """``V -> A_TT V`` through the sparse data's columns T (``X_T^T (X_T V) / m - mu_T (mu_T^T V)``, as
    :meth:`~nspca_core.operators.sparse.SparseCov.matvec` on T's columns), or None where ``cov`` holds no sparse data.
    For :func:`_guesses` only: ARPACK's products, two passes over T's nonzeros instead of ``|T|^2``."""
    if getattr(cov, "X_sparse", None) is None or not hasattr(cov, "csc"):
        return None
    XT = cov.csc()[:, np.asarray(T)]
    mu, m = np.asarray(cov.mean, dtype=np.float64)[np.asarray(T)], float(cov.m)

    def products(V):
        V = np.asarray(V, dtype=np.float64)
        return np.asarray(XT.T @ (XT @ V)) / m - np.multiply.outer(mu, mu @ V)

    return products


def _guesses(M: np.ndarray, products=None):
    """``(theta desc, U)``: the top two Ritz pairs of M (ARPACK from the ones vector: deterministic; dense eigh
    below 8 rows); ``products`` (``V -> M V`` by another route, :func:`rest_products`): ARPACK's products, else M's.
    Only guesses: nothing rests on them.  None where ARPACK fails."""
    n = M.shape[0]
    if n < 8:
        w, U = np.linalg.eigh(M)
        return w[::-1][:2], U[:, ::-1][:, :2]
    op = M if products is None else LinearOperator(M.shape, matvec=products, matmat=products, dtype=np.float64)
    try:
        w, U = eigsh(op, k=2, which="LA", v0=np.ones(n), tol=1e-10, maxiter=300)
    except (ArpackNoConvergence, ArpackError):
        return None
    order = np.argsort(-w)
    return w[order], U[:, order]


def _proved(M: np.ndarray, theta: float, u: np.ndarray, margin: float) -> float | None:
    """``c + slack``, a rigorous bound on ``lambda_max(M)`` (:func:`.dnn_lmax.chol_lmax`) at ``c = theta + ||M u -
    theta u|| / ||u|| + margin``, tried once more 4x farther; None where neither factorization completes."""
    u = u / np.linalg.norm(u)
    c = theta + float(np.linalg.norm(M @ u - theta * u)) + margin
    for _ in range(2):
        slack = chol_lmax(M, c)
        if slack is not None:
            return c + slack
        c += 3.0 * (c - theta)
    return None


def rest_top(M: np.ndarray, products=None):
    """``(w, tol, v)`` of the module docstring: ``w[0] + tol >= lambda_max(M)``, ``w[1] + tol >= lambda_max(M -
    v v^T)`` (v exactly as returned), or None where a proof fails.  ``products``: :func:`_guesses`' (the guesses'
    route only; every proof reads M)."""
    n = M.shape[0]
    out = _guesses(M, products) if n >= 2 else None
    if out is None:
        return None
    theta, U = out
    t1 = float(theta[0])
    if not (math.isfinite(t1) and t1 > 0):
        return None
    fro = float(np.linalg.norm(M))
    tol = 32.0 * n * _EPS * fro
    v = U[:, 0] / np.linalg.norm(U[:, 0]) * math.sqrt(t1)
    R = M - np.outer(v, v)
    second = _proved(R, max(float(theta[1]), 0.0), U[:, 1], 1e-9 * abs(t1))
    if second is None:
        return None
    second += 2.0 * _EPS * (fro + float(v @ v)) * (1.0 + 4.0 * _EPS)
    derived = _top_by_deflation(M, v, second, fro)
    top = derived
    if not derived <= _least(M, t1, U[:, 0], 1e-12 * abs(t1)):  # (the first proof could be tighter: run it)
        chol = _proved(M, t1, U[:, 0], 1e-12 * abs(t1))
        if chol is None and not math.isfinite(derived):
            return None
        top = derived if chol is None else min(chol, derived)
    w = np.array([top, min(second, top)])
    return np.clip(w, 0.0, None), tol, v


def _least(M: np.ndarray, theta: float, u: np.ndarray, margin: float) -> float:
    """The least value :func:`_proved` can return for this guess: its first point ``c`` plus the slack
    :func:`.dnn_lmax.chol_lmax` adds there, ``2 eps max(d) + g tr(d) (1 + (n + 1) eps) / (1 - g)`` with ``d = diag(c I
    - M)`` and ``g = 32 (n + 1) eps`` (the same floats, from M's diagonal; a factorization that fails there only goes
    farther).  Decides only whether that proof runs."""
    u = u / np.linalg.norm(u)
    c = theta + float(np.linalg.norm(M @ u - theta * u)) + margin
    n = M.shape[0]
    d = c - np.diag(M)
    if not np.all(d > 0):
        return c  # (that factorization fails at once: it is retried farther)
    g = 32.0 * (n + 1) * _EPS
    return c + (2.0 * _EPS * float(d.max()) + g * (float(d.sum()) * (1.0 + (n + 1) * _EPS)) / (1.0 - g))


def _top_by_deflation(M: np.ndarray, v: np.ndarray, s: float, fro: float) -> float:
    """A bound ``>= lambda_max(M)`` (exact arithmetic on the float M) from ``s >= lambda_max(M - v v^T)`` (the module
    docstring's third item; inf where v is zero or anything is not finite).

    Rounding (``g = gamma_{n+2}``): ``y = fl(M v)`` is within ``g ||M||_F ||v||`` of ``M v`` in norm; ``fl(v^T y)``
    within ``g ||v|| ||y||`` of ``v^T y``; ``fl(v^T v)`` and ``fl(||v||)`` within a relative ``g``; ``r = fl(y - t
    v)`` within ``2 eps (||y|| + |t| ||v||)`` of ``y - t v``.  So ``a <= (v^T y + ||v|| (E + g ||y||)) / (v^T v (1 -
    g))`` and ``||b|| <= (||r|| + E + 2 eps (||y|| + |t| ||v||)) / (||v|| (1 - g))`` with ``E = g ||M||_F ||v||``;
    the 2 x 2 eigenvalue is evaluated in closed form and raised by ``16 eps`` of its terms' magnitudes."""
    n = M.shape[0]
    g = (n + 2) * _EPS / (1.0 - (n + 2) * _EPS)
    vv = float(v @ v)
    nv = math.sqrt(vv)
    if not (math.isfinite(vv) and vv > 0 and math.isfinite(s)):
        return math.inf
    y = M @ v
    ny = float(np.linalg.norm(y))
    E = g * fro * nv * (1.0 + 4.0 * _EPS)
    vy = float(v @ y)
    t = vy / vv  # (the Rayleigh quotient: any t is valid for ||b||)
    r = float(np.linalg.norm(y - t * v))
    a = (vy + nv * (E + g * ny)) / (vv * (1.0 - g))
    b = (r * (1.0 + g) + E + 2.0 * _EPS * (ny + abs(t) * nv)) / (nv * (1.0 - g))
    a, b = a * (1.0 + 4.0 * _EPS) + 1e-300, b * (1.0 + 4.0 * _EPS)
    h = 0.5 * (a - s)
    top = 0.5 * (a + s) + math.sqrt(h * h + b * b)
    top += 16.0 * _EPS * (abs(a) + abs(s) + b)
    return top if math.isfinite(top) else math.inf


def trace_k(diag_T: np.ndarray, k: int) -> float:
    """The ``trace-k`` bound on ``B_T`` (:func:`.bounds._bound_rest`): ``lambda_max(A_JJ) <= tr(A_JJ)``, at most the sum
    of the k largest variances in T, rounded up (``1 + 4 |T| eps``)."""
    kT = min(k, diag_T.size)
    top = np.partition(diag_T, diag_T.size - kT)[diag_T.size - kT:] if kT < diag_T.size else diag_T
    return float(top.sum()) * (1 + 4 * diag_T.size * _EPS)


def trace_curve(diag_T: np.ndarray, kmax: int) -> np.ndarray:
    """``B_T(j)``, ``j = 0..min(kmax, |T|)``, by the sum of the j largest variances in T alone (``B_T(0) = 0``): the
    ``trace`` term of :func:`.bounds._rest_curve` (which reads it from here); that curve is the
    elementwise minimum of this one and the spectral bounds, hence at most this one at every j."""
    jm = min(int(kmax), diag_T.size)
    out = np.zeros(jm + 1)
    if jm > 0:
        top = -np.sort(-diag_T)[:jm]
        out[1:] = np.cumsum(top) * (1 + 4 * diag_T.size * _EPS)
    return out


def late_rest(diag_T: np.ndarray, k: int, B_S: float, coupled):
    """``(BT, bt)`` with T's spectrum not computed (no :func:`rest_top`, no ``A_TT``), or None (compute it).

    The split certificate's coupled bound ``max_j B_S(k - j) + B_T(j)`` (``coupled(BT) -> (value, i)``, the plain
    coupling with its argmax ``i = k - j``, :func:`.coupled._coupled`) is taken with :func:`trace_curve`; where its
    maximum sits at ``j = 0`` (``i >= k``: S's own bound, ``B_T(0) = 0``) the full curve (:func:`.bounds._rest_curve`,
    at most this one at every j, the same 0 at j = 0) gives the SAME float and the same argmax (the j = 0 term is
    the first of the terms, so ties go to it as well), and :func:`.coupled._coupled_refined` returns that value at
    once in both cases.  Also required: that value below ``B_S + max diag(A_TT) / 2`` -- every rigorous ``B_T`` is at
    least the largest variance in T (a 1-sparse z), so ``B_S + B_T`` (the plain split bound) cannot undercut it
    with either curve.  ``bt``: the ``trace-k`` bound (:func:`.bounds._bound_rest`'s expression), proved.

    Issue 39, corpus20: the 3,000 x 1,600 topic corpus at k = 8..15 (S's DNN price of a nonzero ``mu`` above T's
    largest variance): T's two Cholesky-proved eigenvalues were computed and never read by the bound."""
    if diag_T.size == 0 or k < 1:
        return None
    BT = trace_curve(diag_T, k)
    val, i = coupled(BT)
    if not (i >= k and val < B_S + 0.5 * float(diag_T.max())):  # (half: any rounding of the variances aside)
        return None
    return BT, {"trace-k": trace_k(diag_T, k)}


# S's certificate kinds for which the trace curve's order is tried (:func:`trace_first`): those with which the sparse
# route's split certificate stands alone whatever its ratio (:data:`.sparse_route._S_OWN`), so a lower split bound is
# the certificate itself, never a reason to skip the dense route's run
TRACE_FIRST_KINDS = ("dnn", "anchored")
# the order tried at all (off: T's spectrum first wherever :func:`late_rest` does not put it off, as before).  Off
# in the seventeenth round: a property test found a corpus where it was looser than the spectrum's order (17.5744 vs
# 17.3850, 8 x 8, k = 4; test_trace_first): there the spectrum's order coupled 17.904 (ratio 0.971), so the caller grew
# the screen (:func:`.screens.grown`, 6 -> 8 features), which proved 17.385; the smaller bound of both orders (17.574,
# ratio 0.989) passed the grown screen's rule and stopped it.  So where T's spectrum runs after this order, the
# smaller bound is kept only where the spectrum order's own passes that rule (else its floats alone: the caller's
# ``settles``, :func:`.single._no_growth`).  Where this order stands (its value at the floor, T's spectrum not run)
# the grown screen's rule reads the certificate's coupled bound, this order's (since corpus25; the eighteenth round
# also asked that the spectrum order's provably pass that rule, at the trace curve's plain coupling, which the
# 3,000 x 1,600 topic corpus never met at k = 30..100: U = 38.61 at k = 50 against the 36.97 the rule asks)
_TRACE_FIRST = True


def spectrum_floor(BS_k: float, B_S: float, diag_T: np.ndarray) -> float:
    """A proved floor of the split bound ``min(B_S + B_T, coupled)`` that T's spectrum order gives
    (:func:`.single._certify_split`: :func:`.bounds._rest_curve`, refined or not): ``min(BS_k (1 + 4 eps), B_S + max
    diag(A_TT) / 2)``.  ``BS_k``: S's bound at ``i = k`` as the coupling reads it (:func:`.coupled._coupled_bs` at
    kS = k).  Proof: every coupled bound (:func:`.coupled._coupled`, with or without the cross table and any
    refinements, which are made only at sparsities ``i < kS``) has the ``j = 0`` term ``B_S(k) + B_T(0) = B_S(k)``
    (``B_T(0) = 0`` on every curve; the cross term adds nothing where T's part is empty) among those it takes the
    maximum of, rounded up by ``1 + 4 eps`` (a monotone float product); every rigorous ``B_T`` is at least T's largest
    variance (a 1-sparse z; half of it leaves any rounding of the variances aside)."""
    return min(float(BS_k) * (1 + 4 * _EPS), float(B_S) + 0.5 * float(diag_T.max()))


def trace_first(diag_T: np.ndarray, k: int, B_S: float, BS_k: float, lower: float, refine):
    """The split certificate's coupled bound with T's bound the trace curve alone (:func:`trace_curve`) and the
    refinements (the cross table, the aimed anchored tests: :func:`.coupled._coupled_refined`) first, before T's
    spectrum: ``(stands, BT, bt, (value, sharper, cross))``, or None where not tried (T empty, k < 1).

    ``refine(BT, give_up, stop)`` -> ``(value, sharper, cross)``: the refinements the spectrum's order runs, sharpened
    until ``lower >= stop x value`` with ``stop = lower / floor`` (the floor below: nothing is gained below it), and
    stopped by ``give_up(lo)`` (:func:`.coupled._aimed`'s) where every value they could still return is above the
    floor (``lo`` there, else None).  ``stands``: the value at most :func:`spectrum_floor`.  Then T's spectrum and its
    order are not run: they could not give a smaller split bound (the floor), so the smaller of both orders' coupled
    bounds is this value whatever T's spectrum would give, and the routes after the split certificate read it
    (:func:`.screens.grown`'s rule, :data:`_TRACE_FIRST`).  Elsewhere the caller runs the spectrum's order and keeps
    the smaller of the two coupled bounds where the spectrum order's own settles (else its floats alone).  ``bt``: the
    ``trace-k`` bound (proved).

    Issue 39, corpus20/corpus21: the 3,000 x 1,600 topic corpus at k = 20..100.  With T's spectrum the plain coupling
    certified 0.982-0.991 (at or above the refinements' stop, 0.97: none ran); with the trace curve and the cross
    table the coupled bound comes down to S's own bound (the ``j = 0`` term: k = 20 / 25 / 50 0.9821 / 0.9823 / 0.9848
    -> 0.9826 / 0.9860 / 0.9932) without T's spectrum (ARPACK's guesses, a Cholesky of 1,300 rows, the A_TT copy)."""
    if diag_T.size == 0 or k < 1:
        return None
    BT = trace_curve(diag_T, k)
    floor = spectrum_floor(BS_k, B_S, diag_T)
    out = refine(BT, lambda lo: lo if lo > floor else None, lower / floor if floor > 0 else 1.0)
    return bool(out[0] <= floor), BT, {"trace-k": trace_k(diag_T, k)}, out
