"""Doubly-nonnegative (DNN) dual certificate for nonnegative sparse PCA.

Internal module behind :mod:`nspca_core.certificates`; inputs are assumed clean.

The bound
---------
For every symmetric ``N >= 0`` (entrywise) and ``mu >= 0``::

    OPT = max_{x in S_k^n} x^T A x  <=  lambda_max(A + N - mu 1 1^T) + mu k.

Proof: for ``x in S_k^n`` (unit, ``x >= 0``, at most k nonzeros),
``x^T A x = x^T M x - x^T N x + mu (1^T x)^2`` with ``M = A + N - mu 1 1^T``.
``x^T M x <= lambda_max(M)`` since ``||x|| = 1``; ``x^T N x >= 0`` since both
``x`` and ``N`` are entrywise nonnegative; ``(1^T x)^2 <= ||x||_0 ||x||^2 <= k``
by Cauchy–Schwarz on the support.  So every ``(N, mu)`` gives a valid bound,
whatever optimizer produced it; the optimizer only decides how good it is.
Its minimum over ``(N, mu)`` is the dual of the doubly-nonnegative relaxation
``max <A, Z>`` over ``Z psd, Z >= 0, tr Z = 1, 1^T Z 1 <= k`` (d'Aspremont et
al. 2007's relaxation with the nonnegativity of the loadings added).

The optimizer
-------------
``f(N, mu) = lambda_max(A + N - mu J) + mu k`` is convex and nonsmooth.  We
minimise its entropy smoothing ``f_t = t log tr exp(M / t) + mu k`` by
projected Adam (per-coordinate steps of about the learning rate, which decays
geometrically; see :class:`_Adam` for why), decreasing ``t`` geometrically
(continuation).  The gradient
of ``f_t`` is ``G = sum_i p_i u_i u_i^T`` (softmax weights ``p`` of the
eigenvalues); since only eigenvalues within a few ``t`` of the top carry
weight, it is computed from ``r`` Ritz pairs of a block subspace kept warm
between iterations (one block Krylov/Rayleigh–Ritz step per iteration, cost
``O(n^2 r)``) instead of a full eigendecomposition (``O(n^3)``).  ``mu`` is
stored as ``nu = mu n`` (its learning rate is scaled to match).  ``diag(N)`` is
kept 0: a nonnegative diagonal only raises ``lambda_max``.

Cuts (optional ``C``, weights ``w >= 0``): ``M`` also subtracts
``sum_l w_l c_l c_l^T`` and the bound adds ``sum_l w_l beta_k(c_l)``; valid
because ``(c^T x)^2 <= beta_k(c)`` on ``S_k^n`` (:func:`cut_rhs`), by the same
three-line argument.  ``c = 1`` is the ``mu`` term; the gradient in ``w_l`` is
``beta_k(c_l) - c_l^T G c_l``.  Which c cut deepest: :func:`ksupport_cuts` (the
k-support dual directions of the relaxation's top eigenvectors; on CBCL at k = 50
one such cut moves the relaxation from 0.960 to 0.990 of the best known value,
where the raw eigenvector as c gains 0.5%).  A run may renew its cuts itself every few
iterations (``dnn_optimize(refresh=)``, "auto" since issue 39): the new ones enter with weight 0,
so the point's bound is unchanged where that happens; the pieces live in :mod:`.dnn_steps`.

The number reported is never a Ritz value: :func:`lmax_upper` evaluates
``lambda_max`` of the final ``M`` with LAPACK plus a stated tolerance.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np
from scipy.linalg.blas import dsymv as _DSYMV

from .dnn_lmax import _orthonormal, _ritz, chol_lmax, lmax_upper, ritz_guess, ritz_guesses
from .dnn_steps import (_GIVE_UP_EVERY, DnnWork, _Adam, _climb_rate, _Cuts, _flat, _gradient_into, _hopeless, _outlook,
                        _smoothed, cut_rhs, ksupport_cuts, refreshed_cuts)

__all__ = ["DnnState", "DnnWork", "cut_rhs", "cut_rhs_all", "ksupport_cuts", "lmax_upper", "dnn_value",
           "dnn_value_lam", "dnn_tangent", "dnn_optimize", "chol_lmax", "ritz_guess", "ritz_guesses", "refreshed_cuts"]

_EPS = np.finfo(float).eps
# a final value within this (relative) of the lower bound is re-evaluated by LAPACK (tightest)
_EXACT_NEAR = 2e-4
# an early exact check when the Ritz estimate of the bound meets the target with this margin, and
# not again for this many iterations when the check does not prove it
_EARLY_MARGIN = 1e-5
_EARLY_COOLDOWN = 5


@dataclass
class DnnState:
    """Dual variables (N, nu with mu = nu/n, cut weights w for the columns of C) and a warm
    subspace U."""

    N: np.ndarray
    nu: float
    U: np.ndarray | None = None
    C: np.ndarray | None = None
    w: np.ndarray | None = None


def assemble_dual(A: np.ndarray, N: np.ndarray, nu: float, C=None, w=None,
                  work: DnnWork | None = None) -> np.ndarray:
    """``M = A + N - (nu / n) J - sum_l w_l c_l c_l^T`` (float64 for a float64 A); ``work``: M and the cuts'
    product in its arrays (:class:`DnnWork`; the same floats as fresh ones)."""
    n = A.shape[0]
    M = np.add(A, N, out=None if work is None else work.scratch("M64", A.shape, np.result_type(A, N)))
    M -= nu / n  # (in place: the same floats as ``A + N - nu / n``, one n x n temporary fewer)
    if C is not None and w is not None and np.any(w > 0):
        M -= np.matmul(C * w, C.T, out=None if work is None else work.scratch("MG", M.shape, np.result_type(C, w)))
    return M


def _lmax_state(A: np.ndarray, state: DnnState, fast: bool = True, work: DnnWork | None = None) -> float:
    """Rigorous upper bound on ``lambda_max(A + N - mu J - sum_l w_l c_l c_l^T)`` (the k-free part).

    With a warm subspace ``state.U`` the bound is proved by Cholesky at a Ritz guess
    (:func:`ritz_guess`, :func:`lmax_upper`); else (or if that fails, or ``fast`` is False: the
    tightest value) by LAPACK's eigenvalue.  ``work``: the n x n arrays from there (:class:`DnnWork`)."""
    n = A.shape[0]
    mu = state.nu / n
    if work is not None and state.N.dtype == np.float32 and A.dtype == np.float64:
        M, norm_N = _assembled_from_n(A, state, work)
    else:
        M = assemble_dual(A, state.N, state.nu, state.C, state.w, work)
        if work is None or state.N.dtype == np.float64:
            N64 = np.asarray(state.N, dtype=float)
        else:  # (a float32 N's float64 copy in the Cholesky factor's array, free until lmax_upper)
            N64 = work.scratch("MG", A.shape, np.float64)
            np.copyto(N64, state.N)
        norm_N = np.linalg.norm(N64)
    scale = float((np.linalg.norm(A) if work is None else work.norm_of(A)) + norm_N + mu * n)
    if state.C is not None and state.w is not None:
        scale += float(state.w @ (state.C ** 2).sum(axis=0))
    norm_M = float(np.linalg.norm(M))  # (once: the Ritz guesses' margin and lmax_upper's allowance, the same float)
    return lmax_upper(M, scale, ritz_guesses(M, state.U, norm=norm_M) if fast else None, work, norm=norm_M)


def _assembled_from_n(A: np.ndarray, state: DnnState, work: DnnWork):
    """:func:`assemble_dual` of a float32 N (in ``work``'s ``"M64"``) and ``||N||_F`` in float64, float for float
    as :func:`_lmax_state` formed them before (issue 39, 19th round): N is copied into M's array first (exact), its
    norm taken there (the same contiguous float64 values as the former copy in ``"MG"``), then A is added in place
    (``N + A`` is ``A + N``: IEEE addition commutes).  Why: NumPy's mixed float64 + float32 sum casts in buffered
    chunks (~2 ms at n = 1,378 against ~0.5 for the copy and ~0.2 for a float64 sum), and one n x n copy fewer."""
    M = work.scratch("M64", A.shape, np.float64)
    np.copyto(M, state.N)
    norm_N = np.linalg.norm(M)
    np.add(M, A, out=M)
    M -= state.nu / A.shape[0]
    if state.C is not None and state.w is not None and np.any(state.w > 0):
        M -= np.matmul(state.C * state.w, state.C.T, out=work.scratch("MG", M.shape, np.result_type(state.C, state.w)))
    return M, norm_N


lmax_state = _lmax_state  # its name for the certificates' path driver


def value_below(A: np.ndarray, k: int, state: DnnState, work: DnnWork | None = None, also=None) -> float:
    """A number at or below the value :func:`dnn_value_lam` proves for ``state`` (with its ``work`` or any):
    the tangent (:func:`dnn_tangent`) of the Rayleigh quotient of its first warm vector ``state.U[:, 0]``
    less the quotient's rounding allowance, at about a tenth of an evaluation's cost (one assembly, two
    symmetric products with half of M each; no Cholesky, no block steps).

    Why it is below.  :func:`_lmax_state` assembles M (the same floats as here) and returns a number at or
    above ``lambda_max`` of the symmetric matrix one triangle of M spans: the Cholesky test factors one
    triangle, LAPACK's eigenvalue reads one, each within the allowance it adds (:func:`lmax_upper`).  M
    itself need not be symmetric to the last bit (N in float32 from a rank-r gradient whose two triangles
    round apart), so the quotient is taken for each triangle (``dsymv``) and the smaller kept:
    ``lambda_max(T) >= u^T T u / u^T u`` for either.  Its rounding (n-term sums) is below
    ``2 (n + 2) eps (||M||_F + |q|)``; four times that is subtracted.  The tangent is monotone in ``lam``.
    ``also`` (a vector of length n, any): its quotient too, the larger of the two floors (each one) returned."""
    n = A.shape[0]
    if work is not None and state.N.dtype == np.float32 and A.dtype == np.float64:
        M, _ = _assembled_from_n(A, state, work)
    else:
        M = assemble_dual(A, state.N, state.nu, state.C, state.w, work)
    Mt, low = M.T if M.flags.c_contiguous else np.asfortranarray(M), -np.inf  # (Fortran order: no copy in f2py)
    norm = float(np.linalg.norm(M))
    for u in [state.U[:, 0]] + ([] if also is None else [also]):  # (``also``: another vector, the larger floor kept)
        u = np.ascontiguousarray(u, dtype=float)
        q = min(float(u @ _DSYMV(1.0, Mt, u, lower=side)) for side in (0, 1)) / float(u @ u)
        low = max(low, q - 8.0 * (n + 2) * _EPS * (norm + abs(q)))
    return float(dnn_tangent(low, state, n, np.array([k]))[0])


def dnn_value(A: np.ndarray, k: int, state: DnnState) -> tuple[float, float]:
    """The certified bound ``lambda_max(A + N - mu J) + mu k`` (rigorous), and its tolerance."""
    lam, tol = _lmax_state(A, state)
    return float(dnn_tangent(lam, state, A.shape[0], np.array([k]))[0]), tol


def dnn_value_lam(A: np.ndarray, k: int, state: DnnState, fast: bool = True,
                  work: DnnWork | None = None) -> tuple[float, float]:
    """The certified bound (as :func:`dnn_value`) and the rigorous ``lambda_max`` bound it comes
    from (:func:`_lmax_state`), which gives the bound at any other k (:func:`dnn_tangent`)."""
    lam, _ = _lmax_state(A, state, fast, work)
    return float(dnn_tangent(lam, state, A.shape[0], np.array([k]))[0]), lam


def cut_rhs_all(C: np.ndarray) -> np.ndarray:
    """``beta_k(c_l)`` for every k = 1..n at once, shape (L, n) (see :func:`cut_rhs`)."""
    n = C.shape[0]
    out = None
    for sgn in (1.0, -1.0):
        P = -np.sort(-(np.maximum(sgn * C, 0.0) ** 2), axis=0)
        v = np.cumsum(P, axis=0).T
        out = v if out is None else np.maximum(out, v)
    return out * (1.0 + 4 * n * _EPS)


def dnn_tangent(lam: float, state: DnnState, n: int, ks: np.ndarray) -> np.ndarray:
    """The DNN bound of one dual point at every k in ``ks``, given ``lam`` from :func:`_lmax_state`.

    Notes
    -----
    The matrix ``M = A + N - mu J - sum_l w_l c_l c_l^T`` does not depend on k;
    only the right-hand sides ``mu k`` and ``w_l beta_k(c_l)`` do.  The proof in
    the module docstring holds for every k with the same ``(N, mu, w, C)``, so
    one rigorous ``lambda_max`` certifies every k at once:
    ``OPT_k <= lam + mu k + sum_l w_l beta_k(c_l)``, a line in k (plus the
    concave cut terms).  Since the DNN relaxation value is concave in k (it is
    the perturbation function of a convex program in the right-hand side of
    ``1^T Z 1 <= k``), tangents from a few k's interpolate its whole curve.
    """
    ks = np.asarray(ks, dtype=int)
    mu = state.nu / n
    out = lam + mu * ks * (1.0 + 2 * _EPS)
    if state.C is not None and state.w is not None and np.any(state.w > 0):
        B = cut_rhs_all(state.C)[:, np.minimum(ks, n) - 1]
        out = out + (state.w @ B) * (1.0 + 4 * state.w.size * _EPS)
    return out


# block steps from a seeded Gaussian block where dnn_optimize has no warm subspace (the direction
# only: every bound is evaluated rigorously): CBCL k = 10 certified as from a full eigh, at ~1/10 of
# its cost at n = 361 and ~1/20 at n = 600
_COLD_STEPS = 3


def _cold_block(M: np.ndarray, r: int, L: np.ndarray, lw: np.ndarray) -> np.ndarray:
    """A seeded Gaussian block (same input, same output) after :data:`_COLD_STEPS` block steps."""
    U = _orthonormal(np.random.default_rng(0).standard_normal((M.shape[0], r)))
    for _ in range(_COLD_STEPS):
        U = _ritz(M, U, r, L, lw)[1]
    return U


def _run_end(A: np.ndarray, k: int, last: DnnState | None, best: tuple, lower: float | None, budget,
             timed, work: DnnWork | None = None) -> tuple:
    """The end of :func:`dnn_optimize`: the point ``last`` evaluated (when no check did, and it
    fits), the best kept; then, near the lower bound, the best point's value by LAPACK (the
    Cholesky check's allowance could hide optimality).  Returns ``(state, value, lam, evaluations)``."""
    best_state, best_value, best_lam = best
    size, evals = float(A.shape[0]) ** 3, 0
    if last is not None and (budget is None or budget.fits("eval", size)):
        with timed():
            val, lam = dnn_value_lam(A, k, last, work=work)
        evals += 1
        if val < best_value:
            best_state, best_value, best_lam = last, val, lam
    if (lower is not None and lower >= (1.0 - _EXACT_NEAR) * best_value
            and (budget is None or budget.fits("eval", size))):
        val, lam = dnn_value_lam(A, k, best_state, fast=False, work=work)
        evals += 1
        if val < best_value:
            best_value, best_lam = val, lam
    return best_state, best_value, best_lam, evals


def _made(A: np.ndarray, k: int, point: DnnState, best: tuple, evals: int, work: DnnWork | None) -> tuple:
    """A put-off check (:data:`_DEFER_CHECKS`) made: ``point`` evaluated and kept where below ``best``'s value,
    as at its own iteration.  Returns ``(state, value, lam, evals)``."""
    val, lam = dnn_value_lam(A, k, point, work=work)
    return (point, val, lam, evals + 1) if val < best[1] else (*best, evals + 1)


def _start_value(A: np.ndarray, k: int, state: DnnState, start_lam: float | None, evaluate: bool,
                 work: DnnWork | None = None):
    """A run's start ``(value, lam, evaluations)``: from the caller's rigorous ``start_lam``, else
    evaluated, else (``evaluate`` False) ``(inf, None, 0)``: not known yet."""
    if start_lam is not None:
        return float(dnn_tangent(float(start_lam), state, A.shape[0], np.array([k]))[0]), float(start_lam), 0
    if not evaluate:
        return np.inf, None, 0
    value, lam = dnn_value_lam(A, k, state, work=work)
    return value, lam, 1


def _unevaluated(state: DnnState, U, it: int, evals: int, n: int, outran: bool = False) -> tuple:
    """The return of a run that gave up before any evaluation (``evaluate_give_up=False``, or ``outran``: stopped by
    its ``outpaced`` rule): its point, value ``inf`` (nothing proved of it yet)."""
    state.U = U
    return state, np.inf, {"iterations": it, "exact_evaluations": evals, "mu": state.nu / n, "lam": None,
                           "gave_up": True, "unevaluated": True, **({"outpaced": True} if outran else {})}


def _run_arrays(A: np.ndarray, state: DnnState, work: DnnWork, ritz32: bool):
    """:func:`dnn_optimize`'s n x n arrays from ``work``: ``(x_N, A32, M, G)``, N in float32 (the
    start's N copied in), the matrix the iterations use (A in float32 if ``ritz32``), the iteration's
    M and the gradient G (in Adam's precision).  M and G are written afresh each iteration, so an
    evaluation may use their memory in between: in float32 they are the halves of ``"MG"``."""
    x_N = work.scratch("N", state.N.shape, np.float32)
    np.copyto(x_N, state.N, casting="unsafe")  # (as state.N.astype(np.float32))
    A32 = work.float32_of(A) if ritz32 else A
    if A32.dtype == np.float32:
        M, G = work.halves("MG", x_N.shape)
    else:
        M, G = work.scratch("M", x_N.shape, A32.dtype), work.scratch("G", x_N.shape, np.float32)
    return x_N, A32, M, G


# dnn_optimize(extend=): an extended run whose point at ``iters`` is the first it would evaluate checks it at the new
# end, only where the end's rigorous value is not below that point's free estimate (top Ritz value + mu k + cuts: below
# its value but for the float32 rounding of the Ritz step, ~n eps32 relative) by this much (issue 39, helper dense15:
# CBCL k = 65's run gained 0.3% in its 8 extra iterations; one Cholesky evaluation, ~3 ms of ~80, not used)
_DEFER_MARGIN = 1e-3

# dnn_optimize: a regular check that can decide nothing but which point is the best (the next check is the run's
# end, no stall test before min_iters, no give-up / outpaced / extend / time-limit rule, the target out of reach of the
# point by value_below) is put off to the end, where it is made only if the end's value is not below its value_below
# (else it could not have been the best: strictly above the end's).  The run's floats as without the rule: the same
# iterates, the same best point, value and lambda (issue 39, 19th round: the split S's cut run, 44 iterations checked at
# 40 and 44; dlbcl-shaped k = 150: one ~45-50 ms evaluation of 1,378 x 1,378 against ~7 ms for value_below).
# False: every check made where it falls (the tests' reference).  _PUT_OFF_FIRST: that check made first at the end
# where the end's floor (value_below, also with the put-off point's vector) is not below its own (dense33: the cut
# run renews its cuts at 41 of 44; MLL / dlbcl-shaped k = 200: the check at 40 the best, one evaluation fewer)
_DEFER_CHECKS, _PUT_OFF_FIRST = True, True

# dnn_optimize: each iteration's M = A32 + N written by the last Adam step while its pieces are in cache
# (_Adam.step's ``then``; issue 39, ninth round: one pass over n x n fewer per iteration, the same floats);
# False: summed afresh at each iteration as before (the tests' reference)
_FUSE_M = True


def dnn_optimize(A: np.ndarray, k: int, state: DnnState, *, iters: int, t_start: float,
                 t_end: float, lr: float, decay: float = 0.995, r: int = 10,
                 check_every: int = 0, target: float | None = None, lower: float | None = None,
                 callback=None, stall: float = 1e-4, min_iters: int | None = None,
                 push: float | None = None, push_stall: float | None = None,
                 t_iters: int | None = None, start_lam: float | None = None, budget=None,
                 ritz32: bool = False, refresh: int = 0, max_cuts: int = 30,
                 give_up: float | None = None, evaluate_start: bool = True,
                 evaluate_give_up: bool = True, work: DnnWork | None = None,
                 beyond: tuple[float, float] | None = None, extend: tuple[float, int, float] | None = None,
                 fall: tuple[float, int] | None = None, outpaced=None, flat: float | None = None):
    """Minimise the DNN bound from ``state``; return ``(best_state, best_value, info)``.

    The smoothed bound ``F_t`` (:func:`_smoothed`, t from ``t_start`` to ``t_end`` geometrically
    over ``t_iters`` iterations) is minimised by projected Adam (:class:`_Adam`) over all dual
    variables at once: ``N`` (zero diagonal, ``>= 0``), ``mu`` and the cut weights, with learning
    rate ``lr`` (in units of ``A``'s entries; ``nu = mu n`` takes ``lr n``) decaying by
    ``decay`` per iteration.  Every iterate is a valid dual point; the
    optimizer only decides how good.

    ``best_value`` is rigorous (:func:`dnn_value`).  With ``check_every > 0`` the
    current point is certified every that many iterations and the loop stops
    early once ``lower / value >= target`` (also checked between the regular checks as soon
    as the top Ritz value, a free estimate of the bound, says the target is met) or the bound
    stalls (less than ``stall`` relative progress between two checks, after ``min_iters``
    iterations, default ``2 check_every``); while ``lower < push * value`` the
    smaller threshold ``push_stall`` applies instead (spend iterations where the
    certified ratio is still below a target).  Per iteration: one assembly of M,
    one block Ritz step (:func:`_ritz`), one rank-r gradient and the Adam updates.

    ``start_lam``: the caller's rigorous ``lambda_max`` bound (:func:`_lmax_state`) of
    ``state``, which saves one exact evaluation.  ``info["lam"]`` is that of ``best_state``.

    ``budget`` (:class:`nspca_core.certificates.budget.Budget`): an iteration only while it and one
    rigorous evaluation fit in the time left; then the point reached is evaluated if that fits.
    ``ritz32``: the Ritz steps in float32 (short runs; a long "full" one converges finer without).

    ``refresh > 0``: every ``refresh`` iterations (from the first) the cuts are renewed from the
    Ritz vectors (:func:`refreshed_cuts`; one Adam run, no restart); any cut is valid
    (:func:`cut_rhs`).  ``give_up``: stop (the point evaluated) once the free estimates, every
    :data:`_GIVE_UP_EVERY` iterations, head (:func:`_hopeless`) for ``lower / value`` below this.
    ``evaluate_start=False`` (no ``start_lam``): the start is not evaluated (the run ends with an
    evaluation); ``evaluate_give_up=False``: a run giving up before any evaluation returns its point
    unevaluated (value ``inf``, ``info["unevaluated"]``: the caller's next run evaluates its end).
    ``work`` (:class:`DnnWork`): the n x n arrays of the run and of its evaluations, kept for the
    caller's next run (the same floats as fresh ones).  ``beyond = (aim, gain)``: once ``target`` is met the
    run goes on, ``aim`` its target from then on, while the free estimates (every :data:`_GIVE_UP_EVERY`
    iterations, at least three) head (:func:`_outlook`) for a ratio at least ``gain`` above the one proved.
    ``extend = (rate, more, aim)``: at iteration ``iters`` (a multiple of :data:`_GIVE_UP_EVERY`), where the free
    estimates' ratio is below ``aim`` and climbs by at least ``rate`` per iteration (:func:`_climb_rate`), enough
    to reach ``aim`` in ``more`` iterations at that pace, the run goes on for ``more`` iterations (once), renewing
    no cuts, with a check at its new end.  Its point at ``iters`` is checked as without the rule (the same
    iterates up to there), so the run is never looser; where nothing of the run was evaluated before, that check is
    made at the new end, and only where the end's value is not below the point's free estimate by
    :data:`_DEFER_MARGIN` (else ``info["skipped_check"]``: it could not have been the smaller).
    ``fall = (rise, at)``: from an evaluated start (a finite value), where the free estimates at every
    :data:`_GIVE_UP_EVERY` iterations up to iteration ``at`` are all at least ``(1 + rise)`` times the start's value
    (the run heads away from its start: its steps overshoot), the run stops there unevaluated and returns its start
    (its value, ``info["fell"]``): the caller's retry at another rate follows (:func:`.dual._cut_rounds`).
    ``info["rise"]``: the least of those estimates over the start's value, less 1, where the rule looked.
    ``outpaced(reach) -> bool``: from three estimates on (every :data:`_GIVE_UP_EVERY` iterations) it is given
    their pace's reach, their ratio plus their climb per iteration (:func:`_climb_rate`; linear: above where a
    slowing climb ends) times the iterations left; True (another bound proves more) stops the run there, its
    point evaluated (``info["gave_up"]``), unless nothing of the run was (an unevaluated start) and the estimates'
    climb is >= 0: then it is returned as such (value ``inf``, ``info["unevaluated"]``, ``info["outpaced"]``) and the
    other bound stands, proved at or below the run's estimate (issue 39, helper dense15: img24 k = 46..60, the point's
    value certified 0.966-0.969 against the anchored bound's 0.972-0.974: ~6 ms of ~140 computed and not used).
    ``flat`` (with ``give_up``: a plain run a cut run follows): from three estimates on, where their ratio is below
    ``flat`` and they stand still (the band of the last three, :func:`.dnn_steps._still_pace`, below
    :data:`.dnn_steps._FLAT_REACH` of ratio over the iterations left: :func:`_flat`), the
    run stops there as by ``give_up`` (``info["flat"]``), its point evaluated (whatever ``evaluate_give_up``).
    """
    n = A.shape[0]
    r, kn = min(r, n), k / n
    min_iters = 2 * check_every if min_iters is None else min_iters
    t_iters = iters if t_iters is None else max(1, min(t_iters, iters))
    # N, Adam's moments (and M if ritz32) in float32: any float32 N >= 0 is valid, evaluated as stored
    work = DnnWork() if work is None else work
    x_N, A32, M, G = _run_arrays(A, state, work, ritz32)
    x_nu = float(state.nu)
    diag = slice(None, None, n + 1)  # (the diagonal of a C-ordered n x n array, flattened)
    opt_N, opt_nu = _Adam(x_N.shape, work), _Adam(())
    cuts = _Cuts(state.C, state.w, k, n)
    U = state.U
    if U is not None and U.shape != (n, r):
        U = None

    def snapshot():
        return DnnState(x_N.copy(), x_nu, U, cuts.C, cuts.weights())

    best_state = snapshot()
    best_value, best_lam, evals = _start_value(A, k, best_state, start_lam, evaluate_start, work)
    # (fall: the start as evaluated, the caller's own point where its lambda came with it; rise: as measured)
    start = ((state if start_lam is not None else best_state, best_value, best_lam)
             if fall is not None and np.isfinite(best_value) else None)
    rise = None
    last_check = best_value
    history = []  # the bound's free estimates every _GIVE_UP_EVERY iterations (give_up)
    settled = False  # (beyond: the target met, the run gone on to the aim)
    next_early = 0  # no early check before this iteration (a few steps after a failed one)
    it = 0
    # unchecked: iterations since an evaluation; stopped_early: by the give-up rule
    size, stopped, unchecked, stopped_early = float(n) ** 3, False, False, False
    # stopped by ``outpaced`` (another bound proved more than the run's pace reaches), by ``flat``
    outran = was_flat = False
    m_ready = False  # whether M holds A32 + x_N of the current x_N (written by the last Adam step)
    timed = contextlib.nullcontext if budget is None else (lambda: budget.step("eval", size))  # noqa: E731
    end = iters  # (the last iteration: moved once by ``extend``)
    deferred = None  # (extend: the check at iters put off to the new end, [point, its free estimate])
    pending = None  # (_DEFER_CHECKS: a check put off to the end, (point, value_below of it))
    skipped = False  # (that check found not needed)
    for it in range(1, iters + (0 if extend is None else int(extend[1])) + 1):
        if it > end:
            it -= 1
            break
        if budget is not None and budget.left() < budget.cost("iter", size) + budget.cost("eval", size):
            stopped = True
            it -= 1
            break
        t_it = budget.clock() if budget is not None else 0.0
        t = t_start * (t_end / t_start) ** (min(it - 1, t_iters - 1) / max(t_iters - 1, 1))
        if refresh and U is not None and (it - 1) % refresh == 0 and it <= iters:
            cuts.renew(U, max_cuts)
        if not m_ready:  # (else the last Adam step wrote it)
            np.add(A32, x_N, out=M)  # the mu and cut terms are low rank: applied inside the Ritz step
        L, lw = cuts.low_rank(x_nu / n)
        if U is None and n > 3 * r and ritz32:  # no warm subspace (short runs): block steps, no n^3 eigh
            U = _cold_block(M, r, L, lw)
        w, U = _ritz(M, U, r, L, lw)
        # this point's bound as the top Ritz value (below lambda_max) estimates it, for free
        est = float(w[0]) + x_nu * kn + cuts.rhs()
        if deferred is not None and deferred[1] is None:  # (the deferred point's own estimate: no step since)
            deferred[1] = est
        if (give_up is not None or beyond is not None or extend is not None or start is not None
                or outpaced is not None or flat is not None) \
                and lower is not None and it % _GIVE_UP_EVERY == 0:
            history.append(est)
            if start is not None and it == fall[1]:
                rise = min(history) / start[1] - 1.0
                if rise >= fall[0]:
                    return start[0], start[1], {"iterations": it - 1, "exact_evaluations": evals,
                                                "mu": start[0].nu / n, "lam": start[2], "fell": True, "rise": rise}
            if give_up is not None and _hopeless(history, lower, give_up):
                stopped_early = True
                it -= 1
                break
            if flat is not None and give_up is not None and it < end and _flat(history, lower, end - it, flat):
                stopped_early = was_flat = True
                it -= 1
                break
            climb = _climb_rate(history, lower) if outpaced is not None and len(history) >= 3 else None
            if climb is not None and outpaced(lower / est + climb * (end - it)):
                # (not evaluated where the estimates still climb: the bound proved is then below the estimate)
                stopped_early, outran = True, climb >= 0
                it -= 1
                break
            if extend is not None and it == iters and lower < extend[2] * est:
                rate = _climb_rate(history, lower)
                if rate >= extend[0] and lower / est + rate * int(extend[1]) >= extend[2]:
                    end = iters + int(extend[1])
        _, q, W = _smoothed(w, U, t)
        # gradients: dF/dN = G = W diag(q) W^T off the diagonal; dF/dnu = k/n - 1^T G 1 / n;
        # dF/dw_l = beta_l - c_l^T G c_l
        _gradient_into(W, q, G)
        G.reshape(-1)[diag] = 0.0
        s1 = W.sum(axis=0)
        g_nu = kn - float(q @ (s1 * s1)) / n
        cuts.step(W, q, lr)
        # (G is not read again before the next gradient; the step also writes the next iteration's M)
        x_N = opt_N.step(x_N, G, lr, spend_g=True, then=(A32, M) if _FUSE_M else None)
        x_N.reshape(-1)[diag] = 0.0
        if _FUSE_M:
            M.reshape(-1)[diag] = A32.reshape(-1)[diag] + x_N.reshape(-1)[diag]  # (as np.add of this x_N)
            m_ready = True
        x_nu = float(opt_nu.step(x_nu, g_nu, lr * n))
        lr *= decay
        unchecked = True
        if budget is not None:
            budget._rate["iter"] = (budget.clock() - t_it) / size
        if callback is not None:
            callback(it, end)
        regular = bool(check_every) and (it % check_every == 0 or it == iters or it == end)
        # between regular checks: when the estimate says the target is met, prove it now (the
        # rigorous value decides) instead of iterating on to the next regular check
        early = (bool(check_every) and not regular and it >= next_early and target is not None
                 and lower is not None and lower >= target * est * (1 + _EARLY_MARGIN))
        if regular and not early and it == iters < end and not np.isfinite(last_check) and budget is None:
            # (extended, nothing of the run evaluated yet: its point at iters is checked at the new end, and only
            # where the end's value is not below its estimate -- the next iteration's -- by _DEFER_MARGIN)
            deferred = [snapshot(), None]
            continue
        probed = None
        if (regular and not early and _DEFER_CHECKS and pending is None and deferred is None and it < end
                and budget is None and extend is None and give_up is None and outpaced is None and not settled
                and (fall is None or fall[1] <= it) and it < min_iters and U is not None
                and (it // check_every + 1) * check_every >= end
                and not (target is not None and lower is not None and lower >= target * best_value)):
            probed = snapshot()
            below = value_below(A, k, probed, work)
            m_ready = False  # (it works in M's memory)
            if target is None or lower is None or lower < target * below:  # (its value cannot meet the target)
                pending = (probed, below)
                continue
        if regular or early:
            cand = snapshot() if probed is None else probed
            if pending is not None and it < end:  # (an early check first: the put-off one before it, as it ran)
                best_state, best_value, best_lam, evals = _made(A, k, pending[0], (best_state, best_value, best_lam),
                                                                evals, work)
                pending = None
            # (the end: the put-off point first where the end's floor says it is the likelier best, the end's value then
            # made only where it could win strictly: the same best point, value and lambda; _PUT_OFF_FIRST)
            put_off_first = pending is not None and _PUT_OFF_FIRST
            floor = value_below(A, k, cand, work, pending[0].U[:, 0]) if put_off_first else None
            if floor is not None and not floor < pending[1]:
                best_state, best_value, best_lam, evals = _made(A, k, pending[0], (best_state, best_value, best_lam),
                                                                evals, work)
                pending = None
            if floor is not None and pending is None and not floor < best_value:
                val, lam = np.inf, None  # (at least the best value: not taken on a tie either)
            else:
                with timed():
                    val, lam = dnn_value_lam(A, k, cand, work=work)
                evals += 1
            unchecked, m_ready = False, False  # (an evaluation works in M's memory)
            if pending is not None:  # (the end: the put-off check only where it could be the best)
                if not val < pending[1]:
                    best_state, best_value, best_lam, evals = _made(A, k, pending[0],
                                                                    (best_state, best_value, best_lam), evals, work)
                pending = None
            if deferred is not None and it == end:
                if not val <= deferred[1] * (1.0 - _DEFER_MARGIN):  # (its value could be the smaller: evaluated)
                    v0, lam0 = dnn_value_lam(A, k, deferred[0], work=work)
                    evals += 1
                    if v0 < best_value:  # (in the order the checks ran without deferring: ties kept as there)
                        best_state, best_value, best_lam = deferred[0], v0, lam0
                else:
                    skipped = True
                deferred = None
            if val < best_value:
                best_state, best_value, best_lam = cand, val, lam
            met = target is not None and lower is not None and lower >= target * best_value
            if met or settled:  # (beyond: past settle, on while the estimates promise its gain)
                if met and (beyond is None or settled) or _outlook(history, lower, best_value) < beyond[1]:
                    break
                if not settled:
                    target, settled = beyond[0], True
                    continue
            if early:  # not proved yet: no stall test (fewer steps than a check's), try later
                next_early = it + _EARLY_COOLDOWN
                continue
            # stalled: less than `stall` relative progress since the last check
            thr = stall
            if push is not None and push_stall is not None and lower is not None \
                    and lower < push * best_value:
                thr = push_stall
            if last_check - best_value < thr * abs(best_value) and it >= min_iters:
                break
            last_check = best_value
    if pending is not None:  # (not reached: every way out of the loop above makes the end's check or an early one)
        best_state, best_value, best_lam, evals = _made(A, k, pending[0], (best_state, best_value, best_lam), evals,
                                                        work)
    # (a flat stop is evaluated, lazy or not: its caller's cut run then starts from a known value, as from the check
    # the run would have made, and may retry; golub-shaped path k = 31..37: unevaluated, its ratio -0.003..-0.007)
    if stopped_early and (not evaluate_give_up or outran) and not was_flat and not np.isfinite(best_value):
        return _unevaluated(snapshot(), U, it, evals, n, outran)
    last = snapshot() if ((not check_every or stopped or stopped_early) and unchecked
                          or not np.isfinite(best_value)) else None
    best_state, best_value, best_lam, more = _run_end(A, k, last, (best_state, best_value, best_lam), lower,
                                                      budget, timed, work)
    evals += more
    best_state.U = U
    return best_state, best_value, {"iterations": it, "exact_evaluations": evals, "mu": best_state.nu / n,
                                    "lam": best_lam, **({"stopped": "time_limit"} if stopped else {}),
                                    **({"renewals": cuts.renewals} if refresh else {}),
                                    **({"gave_up": True} if stopped_early else {}),
                                    **({"flat": True} if was_flat else {}),
                                    **({"rise": rise} if rise is not None else {}),
                                    **({"skipped_check": True} if skipped else {})}
