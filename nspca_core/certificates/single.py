"""One certificate's two drivers: dense (``n <= _DENSE_MAX_N``) and split (large n); where each runs, the
public :func:`certify` and the exact mode: :mod:`.route`."""

from __future__ import annotations

import time
from dataclasses import replace
from functools import partial
from types import SimpleNamespace

import numpy as np

from .._common.pairs import opt_pairs, pair_seed
from ..operators.cov import Cov
from ..result import Certificate
from . import _settings as _sets
from ._settings import (_CUT_BELOW, _D2_MAX_N, _EFFORT, _EPS, _SPLIT_BRANCH_MAX_K, _SPLIT_DNN_HOPE,
                        screened_size)
from .bounds import (
    _bound_rest,
    _lowrank_value,
    _paper_and_residual,
    _rest_curve,
    _rest_spectrum,
    _Spectral,
    _ThinSpectral,
    _gram_eig,
    _thin_spectrum,
    cheap_bounds_at,
)
from .budget import BoundReport, Budget, fits, step
from .coupled import (_AIM_GALLOP, _AIM_GALLOP_ONE, _AIM_REL, _AIM_REL_ONE, _COUPLED_AIM, _LIGHT_LOSS, _coupled,
                      _coupled_bs, _coupled_refined, _lambda_S, _screened, _split_lower, light_S, light_refined, small_hopeless,
                      small_verdict, split_cross)
from .dnn_thin import chol_slack_thin
from .dual import dense_dual
from .screens import grown_size, own_hopeless, reuse_parts
from .thin_defer import floor_or_none
from .exact import EXACT_TOLERANCE, branch_and_bound, take_branch
from .cheap import (
    _D1_LATE,
    _LANCZOS_MIN_N,
    _LIGHT_SPEC_MIN_N,
    _finish,
    _gram_within,
    _quad_held,
    _rowsum_bound,
    _sparse_products,
    _variances_bound,
    lambda1_only,
    lambda1_proved,
)
from .lambda1_late import Lambda1Late
from . import rest_top as _rest_top
from .rest_top import TRACE_FIRST_KINDS, late_rest, trace_first
from .lower import _ascent_many, _fit_lower, _starts

# where S's bound is collatz's (.thin_anchor.collatz: within rel_tol / 4 of its test's threshold, where the former
# bisection's stood up to ~1.5e-3 above it), the eager refinements aim at that bound's (1 + the former search's
# resolution) multiple (.coupled.light_S's info["aim_at"]; the thin route's effort rules read it too, info["B_S_rule"]:
# route.certify_thin / eager_grown / path_grown and thin_defer, so they see S's bound at the resolution they were
# tuned on) and, where that goal fails, gallop up from this first step (then doubling to the same limit,
# :func:`.coupled._aimed`; elsewhere _AIM_REL).  g72x1000: aimed at collatz's own bound, the goal failed where the
# rest's terms bind (failed joint tests on 305-409 rows, 1.2-1.3x the certificate at k = 150..200); with the former
# first step (the gallop's first test 2e-3 up) the ratio fell up to 1.6e-3 (k = 65 / 70)
_AIM_STEP_CW = _AIM_REL / 2


def _certify_dense(cov: Cov, k: int, x, effort: str, callback, *, warm=None, spec=None,
                   lower_hint=None, use_fit=True, need_dual=False, budget: Budget | None = None,
                   report: BoundReport | None = None, tree_follows: bool = False, dnn_iters: int | None = None,
                   seen: dict | None = None, top: tuple[float, float] | None = None,
                   cut_below: float | None = None, late: bool = False, proved_start: bool = False):
    """Certificate on a dense covariance (n <= _settings._DENSE_MAX_N).  Returns (Certificate, DnnState).

    ``need_dual``: run the DNN even where the anchored bound already certifies ``dual._DNN_SKIP_AT`` (the
    split bound needs the dual point's bounds at every sparsity); ``tree_follows``: a branch and bound decides
    next (:func:`.dual.dense_dual`); ``dnn_iters``: the DNN's iterations before its cut rounds (default the
    effort's: the split bound's S takes fewer); ``seen``: :func:`.dual.top_test`'s record (light_S's, on A);
    ``top``: ``(value, tol)`` with ``value + tol`` a proved bound on A's lambda_1 (the low-rank test's, thin data:
    :func:`.cheap.lambda1_only`'s ``proved``); ``cut_below``: :func:`.dual._dnn`'s; ``late``: lambda_1's proof put off
    where x's value is far below it (:mod:`.lambda1_late`; a one-k certificate whose bounds dict nothing else reads).
    ``proved_start`` (a split bound's S, :func:`_split_S`): the DNN's screening start reads lambda_1's proved bound
    (:func:`.cheap.lambda1_only`'s, already made) instead of LAPACK's eigenvalues of A (:meth:`.cheap.Lambda1Only.top`,
    an O(n^3) call made only for that start's search range: MLL k = 200, |S| = 1,200, 0.08 of ~0.75 CPU s).
    ``budget`` (:class:`.budget.Budget`): each step runs only when its predicted time fits in the
    time left (the certificate is then whatever was proved in time: from the sum of the k largest
    variances up); ``report``: each bound proved is offered to it as it comes."""
    t0 = time.perf_counter()
    cfg = _EFFORT[effort]
    n = cov.n
    info: dict = {"n": n}
    report = report if report is not None else BoundReport()
    if budget is not None:
        # what any time limit affords, O(m n): the variances, and a feasible point
        dg = cov.diag()
        bounds = {"variances": _variances_bound(dg, k)}
        if x is None:
            x = np.zeros(n)
            x[int(np.argmax(dg))] = 1.0
            info["lower_source"] = "variance"
            x_given = False
        else:
            info["lower_source"] = "given"
            x_given = True
        lower = _quad_held(cov, x)
        report.offer(min(bounds.values()))
        if cov._A is None and cov.X is not None:
            A = _gram_within(cov.X, budget)
            if A is None:
                info["stopped"] = "time_limit"
                return _finish(bounds, lower, x, k, t0, info), None
            cov = Cov(cov.X, A)  # the same covariance, A now held
        A = cov.dense()
        if budget.fits("rowsum", float(n) * n):
            with budget.step("rowsum", float(n) * n):
                bounds["rowsum"] = _rowsum_bound(A, k)
            report.offer(min(bounds.values()))
        if spec is None and not budget.fits("top", float(n) ** 3):
            info["stopped"] = "time_limit"
            return _finish(bounds, lower, x, k, t0, info), None
    else:
        A = cov.dense()
        bounds = {}
        x_given = x is not None
        if x_given and spec is None and warm is None and n >= _LANCZOS_MIN_N and effort != "full":
            # the caller's answer against lambda_1 alone, proved by Cholesky at a Lanczos guess
            # (a quarter of the top eigenvalues' cost): a sparse 5,000 x 2,000 word-count corpus
            # is certified 0.997 by it at k = 5..50 (issue 39), the DNN never needed there
            lower = cov.quad(x)
            accept = 1.0 - cfg.get("accept_gap", cfg["target_gap"])
            # Lanczos through the data where that is cheaper than A (sparse data's operator); no
            # proof where its value already rules the shortcut out
            lam1 = lambda1_proved(A, matvec=cov.matvec if _sparse_products(cov) else None, need=lower / accept)
            if lam1 is not None and lower >= accept * lam1[0]:
                info.update(lower_source="given", eig_tolerance=lam1[0] - lam1[1])
                if callback is not None:
                    callback(1, 1)
                return _finish({"lambda1": lam1[0]}, lower, x, k, t0, info), None
    if (spec is None and budget is None and x_given and warm is None and effort == "auto"
            and n >= max(_LIGHT_SPEC_MIN_N, _D2_MAX_N + 1)):
        # the top eigenpairs only feed the d = 1 bounds here (x is given, n is above _D2_MAX_N): lambda_1
        # alone where those bounds cannot win (issue 39: 4.4 -> ~2 ms on CBCL k >= 60)
        gram = (seen or {}).get("gram")  # (A_SS = fl(X_S^T X_S) / m, _split_S: lambda_1's proof through X_S first)
        thin = None if gram is None or gram[0] is not A else partial(chol_slack_thin, A, gram[1], gram[1].shape[0])
        spec = lambda1_only(A, k, lower=cov.quad(x), proved=top, late=Lambda1Late if late else None, thin=thin)
    if spec is None:
        with step(budget, "top", float(n) ** 3):
            spec = _Spectral(A, 3 if effort == "full" else 2)
    pending = spec if getattr(spec, "pending", False) else None  # (lambda_1's proof put off: .lambda1_late, inf)
    bounds.update(cheap_bounds_at(spec.spectrum(), k))  # BOUNDS: lambda1, paper(d=1), residual(d=1) (lambda1_only: the first)
    report.offer(min(bounds.values()))
    # ---- lower bound
    if x_given:
        lower = cov.quad(x)
        info["lower_source"] = "given"
    else:
        found = [] if budget is None else [(lower, x, info["lower_source"])]
        if use_fit and fits(budget, "fit", float(n) ** 3):
            with step(budget, "fit", float(n) ** 3):
                r = _fit_lower(cov, k)
            if r is not None:
                found.append((r[1], r[0], "fit(auto)"))
        if fits(budget, "ascent", float(n) ** 3):
            with step(budget, "ascent", float(n) ** 3):
                extra = [lower_hint] if lower_hint is not None else []
                X0 = _starts(cov, k, spec.U[:, : min(3, spec.U.shape[1])], cfg["ascent_starts"], extra)
                xa, fa = _ascent_many(cov, k, X0)
            found.append((fa, xa, "ascent"))
        fa_, xa_, src = max(found, key=lambda t: t[0])
        x, lower = xa_, fa_
        info["lower_source"] = src
    if k <= 2:
        opt, xo = opt_pairs(Cov(None, A), k)
        bounds["exact(k<=2)"] = opt * (1 + 8 * _EPS) + 8 * _EPS * float(np.abs(A).max())
        if not x_given and opt > lower:
            x, lower = xo, cov.quad(xo)
            info["lower_source"] = "exact(k<=2)"
    # d = 2 needs the O(n^3) exact rank-2 spannogram: in "auto" only where that is cheap
    ds = [1, 2, 3] if effort == "full" else ([1, 2] if n <= _D2_MAX_N else [1])
    if warm is not None or effort == "fast":
        ds = [1]  # along a path or interactively: d = 1 is O(n); d >= 2 enumerations cost more
    target = 1.0 - cfg["target_gap"]
    # OPT_d >= ||V_d^T x||^2: a paper bound for d >= 2 (an exact spannogram) is computed only
    # when it can still certify the target; the DNN is the tighter bound otherwise
    ds = [d for d in ds if d == 1 or target * (_lowrank_value(spec, d, x) + spec.lam(d)) <= lower]
    bounds.update(_paper_and_residual(spec, k, [d for d in ds if d > 1]))
    report.offer(min(bounds.values()))
    # ---- the dual side: KKT point, anchored row sums, DNN (each while still below its aim)
    state, ran = dense_dual(A, k, x, lower, bounds, info, report, effort, warm=warm, callback=callback,
                            budget=budget, need_dual=need_dual, tree_follows=tree_follows, iters=dnn_iters,
                            seen=seen, top_eig=_start_eig(spec, proved_start), cut_below=cut_below, late=pending)
    if pending is not None:
        pending.finish(bounds, k)  # (left out where another bound is below its floor, else proved)
    if getattr(spec, "d1", None) is not None and min(bounds.values()) >= _D1_LATE * spec.d1:
        # (the d = 1 bounds lambda1_only left out as out of reach of x's value: here they could win after all)
        with step(budget, "top", float(n) ** 3):
            bounds.update({b: v for b, v in cheap_bounds_at(spec.top().spectrum(), k).items() if b != "lambda1"})
        report.offer(min(bounds.values()))
    # the DNN's Ritz vectors are good starts for the lower bound too
    if (ran and not x_given and state is not None and state.U is not None
            and fits(budget, "ascent", float(n) ** 3)):
        with step(budget, "ascent", float(n) ** 3):
            X0 = _starts(cov, k, state.U[:, :4], 8, [x])
            xb, fb = _ascent_many(cov, k, X0)
        if fb > lower:
            x, lower = xb, fb
            info["lower_source"] = "ascent(dnn)"
    info["eig_tolerance"] = spec.tol
    if budget is not None and budget.expired():
        info["stopped"] = "time_limit"
    if callback is not None:
        callback(1, 1)
    return _finish(bounds, lower, x, k, t0, info), state


def _start_eig(spec, proved: bool):
    """What the DNN's screening start reads of A's lambda_1 (:func:`.dual_start._screen_init`'s ``lam1``: it
    only bounds the search range of its price mu, ``min(hi, (lambda_1 - max A_ii) / (k - 1))``; the point it
    picks is evaluated rigorously later, whatever the value): ``spec.bracket`` (LAPACK's lambda_1 where the
    minimum could depend on it: :meth:`.cheap.Lambda1Only._bracket`), or where ``proved`` the bound on lambda_1
    that ``spec`` (:class:`.cheap.Lambda1Only`) holds already, ``w[0] + tol`` (no eigendecomposition: at least
    lambda_1, so where the bracket's cheap value left the minimum at ``hi`` this one does too, the same floats).
    None where ``spec`` has no bracket (the caller's bounds then: :func:`.dual.dense_dual`).  A bracket that is a
    value (:class:`.bounds._ThinSpectral`'s: no eigendecomposition behind it) is kept as it is: the Gram's bound in
    its place moves the start's floats for nothing saved (its docstring: MLL k = 65 / 70)."""
    bracket = getattr(spec, "bracket", None)
    if not proved or not callable(bracket):
        return bracket
    value = float(spec.w[0]) + float(spec.tol)
    return value if np.isfinite(value) else bracket


def _certify_split(cov: Cov, k: int, x, effort: str, callback, split_cap: int | None = None,
                   branch_seconds: float | None = None, keep: dict | None = None,
                   budget: Budget | None = None, report: BoundReport | None = None, gram=None,
                   trial: dict | None = None, size: int | None = None, small_try=None,
                   eager: bool = False, skip_own: dict | None = None, tree: bool = True,
                   whole: dict | None = None, cut_below: float | None = None,
                   defer: dict | None = None, rest_late: bool = False,
                   per_k: float | None = None) -> Certificate | None:
    """Large n: DNN on a screened set S, cheap bounds on the rest T (``size``: S's, else ``screened_size``'s).

    Bound ``OPT <= B_S + B_T`` where ``B_S >= max`` of ``y^T A_SS y`` and ``B_T >= max`` of ``z^T A_TT z``
    over unit, nonnegative, k-sparse y, z.  Proof: write ``A = Y^T Y`` (``Y = X / sqrt(m)``, or any square
    root) and ``x = x_S + x_T`` with ``a = ||x_S||``, ``b = ||x_T||``, ``a^2 + b^2 = 1``.  ``x_S / a`` is
    unit, nonnegative and has at most k nonzeros, so ``||Y x_S|| = a ||Y (x_S/a)|| <= a sqrt(B_S)``; likewise
    ``||Y x_T|| <= b sqrt(B_T)``.  Then ``x^T A x = ||Y x_S + Y x_T||^2 <= (a sqrt(B_S) + b sqrt(B_T))^2 <=
    (a^2 + b^2)(B_S + B_T) = B_S + B_T`` (triangle and Cauchy–Schwarz inequalities).

    Sparsity couples the two parts (``coupled`` in ``info``): with ``k_S =
    |supp x_S|`` and ``k_T = |supp x_T|``, ``k_S + k_T <= k``, the same argument
    gives ``x^T A x <= B_S(k_S) + B_T(k_T)`` with the bounds at those sparsities,
    so ``OPT <= max_{j=0..k} B_S(k - j) + B_T(j)`` (``B(0) = 0``).  ``B_S(i)`` for
    every i comes at once from the S part's DNN dual point (its bound is a line in
    the sparsity, :func:`nspca_core.certificates.dnn.dnn_tangent`; at most ``B_S(k)`` by
    monotonicity), ``B_T(j)`` from :func:`_rest_curve`.  Where the DNN's ``mu``
    (the price of one more nonzero) exceeds the variances in T, the maximum sits at
    ``j = 0``: the bound is ``B_S`` alone, not ``B_S + B_T``.

    S: the ``min(split_size, max(_SPLIT_MIN, split_per_k k))`` features of largest
    variance plus the support of the best known x (so the lower bound is also
    feasible on S).  The coupled bound needs no more: it only needs ``mu`` above the
    variances left in T, and the DNN's cost grows as ``|S|^2`` per iteration.

    ``keep`` (a dict): filled with what the coupled bound at any other k needs (:func:`.path_large.coupled_curve`).

    ``budget`` (the exact mode's time limit, :class:`.budget.Budget`): every step only when it
    fits (S's certificate step by step, :func:`_certify_dense`), and the branch and bound on S
    runs last, with the time left, its proved ``B_S(k_S)`` put back into the coupled bound (the
    other sparsities' terms are unchanged); ``report`` gets the global bound as it improves.
    ``gram`` (``{"G": ..., "eig": ...}``): X's Gram and its eigendecomposition when computed already
    (the same spectrum of A; A_TT's from ``G`` minus S's part, :func:`.bounds._rest_gram_eig`).
    ``trial`` (a dict, a smaller screen tried first: :func:`_certify_large`): gets ``ok``; None where T
    alone keeps this screen short (:func:`.coupled.small_hopeless`).
    ``eager``: S's bound at kS by the anchored row sums' whole search (:func:`.coupled.light_S` not lazy: the
    dense certificate's own test and bisection, on ``A_SS``), a path's run too; for data the dense route would
    take but the cost model sends here (:func:`.route.split_cheaper`): that route's ratio is then S's own.
    ``skip_own`` (a dict; a one-k certificate whose screen :func:`.screens.grown` may grow): None returned and the
    point and S's size put in it (``x``, ``src``, ``size``) where the light route fell short and T alone holds this screen below the aim
    (:func:`.screens.own_hopeless`): the larger screen runs instead (:func:`.route._certify_large`).
    ``tree=False``: no branch and bound on S at k <= ``_SPLIT_BRANCH_MAX_K`` (S's DNN with its cut rounds instead:
    :func:`_split_S`); ``whole``: the whole problem's bounds the caller proved (e.g. ``{"lambda1": ...}``), taken
    instead of A's top eigenpairs and their d = 1 bounds (held covariance only; :mod:`.sparse_route`).
    ``defer`` (``{"slack": ..., "grows": ...}``; the thin route's first eager screen, :func:`.route.certify_thin`): the aimed
    refinements deferred where a larger screen provably follows (:mod:`.thin_defer`; ``info["deferred_floor"]``).
    ``rest_late`` (:mod:`.sparse_route`): T's spectrum only where the coupled bound reads it (:func:`.rest_top.late_rest`:
    the same floats; one-k certificates only).  ``per_k``: :func:`._settings.screened_size`'s (the screen where ``size``
    is not given; :mod:`.sparse_route`'s held covariance takes a smaller one).
    """
    t0 = time.perf_counter()
    cfg = _EFFORT[effort]
    n = cov.n
    info: dict = {"n": n}
    report = report if report is not None else BoundReport()
    dg = cov.diag()
    m = cov.X.shape[0] if cov.X is not None else n
    work = float(m) * n * max(min(m, n), 16)  # a thin pass over X's columns, m n min(m, n)
    gram = gram or {}
    x, lower = _split_lower(cov, k, x, dg, work, cfg, budget, info, gram.get("eig"), after_fit=not eager)
    if budget is not None:
        report.offer(_variances_bound(dg, k))
    S, T = _screened(dg, x, size or screened_size(n, k, cfg, split_cap, per_k))
    # whole-problem bounds (cheap, thin)
    bounds = {"variances": _variances_bound(dg, k)} if budget is not None else {}
    thin = cov.X is not None and cov.thin
    if budget is not None and not budget.fits("top" if not thin else "gram", work if thin else float(n) ** 3):
        info["stopped"] = "time_limit"
        return _finish(bounds, lower, x, k, t0, info)
    with step(budget, "top" if not thin else "gram", work if thin else float(n) ** 3):
        if whole is not None and not thin:
            spec = None
        elif thin:
            spec = _thin_spectrum(cov.X, cov.X.shape[0], diag=dg, eig=gram.get("eig"))
        else:
            spec = _Spectral(cov.dense(), 1).spectrum(rows=False)
    bounds.update(cheap_bounds_at(spec, k) if spec is not None else whole)
    report.offer(min(bounds.values(), default=np.inf))
    # ---- B_S by the dense machinery on A_SS (x restricted to S is feasible there)
    covS = Cov(A=cov.submatrix(S))
    xS = x[S] / np.linalg.norm(x[S])
    kS = min(k, S.size)
    if trial is not None and small_hopeless(trial, cov, S, T, covS, xS, k, kS, x, lower, info, gram.get("G")):
        return None  # (a smaller screen tried first, ruled out by T alone: _certify_large)
    # "auto", one k above the tree's sparsities: S's bound from the anchored row sums first (light_S),
    # the DNN's route below only where that falls short (_LIGHT_LOSS)
    # (the refinements -- cross table, anchored tests on S, the light route's among them -- only where their counted cost
    # pays, _settings.refine_pays; "cross": S's DNN and the cross table alone, no anchored test on S (seen's flag); "":
    # the plain coupled bound)
    tier = _sets.refine_pays(m, n, S.size, T.size, k, effort, budget is not None)
    pays = tier == "all"
    light = (effort == "auto" and budget is None and branch_seconds is None and T.size > 0
             and (kS > _SPLIT_BRANCH_MAX_K or eager) and cov.X is not None and cov.thin and pays)
    # one k: S's bound at kS lazy where _settings._LAZY_S (light_refined).  A path's run (``keep``) then runs
    # certify(k)'s lazy light route itself, float for float (its cross table, resolution and gallop), so the
    # path is at most certify(k) at its runs; then its own eager one (finer, its refinements carried to other
    # k) and the DNN's route, the smallest coupled bound standing (target 2: never looser than certify(k))
    follow = keep is not None and light and _sets._LAZY_S and budget is None and trial is None and not eager
    lazy, seen = ({} if (keep is None and not eager) or follow else None), {}  # (seen: light_S's first test, for dense_dual)
    if keep is None and effort == "auto" and kS > _SPLIT_BRANCH_MAX_K:
        # one k, no tree on S: S's KKT point, valued through X_S (.dnn_thin.kkt_lmax_thin), is S's dual point (no DNN,
        # no anchored search on S: .dual.dense_dual) where it certifies _CUT_BELOW of S, not only `enough` (0.996;
        # issue 39, 25th round).  Issue 39, wide37 / kkt38: from that point S's DNN ran 40 iterations (0.7-1 CPU s at
        # |S| ~ 1,600) for 0.01-0.37% of B_S (golub-shaped k = 400, dlbcl-shaped k = 333..700), 0 at MLL k = 848.
        # A path's run keeps the DNN (its dual point is carried: without it the dlbcl-shaped path's k = 500 / 600
        # came out 0.003 / 0.004 looser); where this rule would stand it marks keep["kkt_rule"] (below), and the path
        # takes certify(k)'s own certificate too (.path_large: never looser than certify(k) there)
        seen["kkt_stands"] = _CUT_BELOW
    if not pays:
        seen["no_anchor"] = True  # (dense_dual: no anchored test on S either)
    # S's top eigenpairs through X_S's m x m Gram (_ThinSpectral), its lambda_1 bound the light route's lamS
    thinS = (cov.X[:, S], cov.X.shape[0]) if (cov.X is not None and cov.thin and cov.X.shape[0] < S.size
                                              and budget is None and effort in _sets._THIN_S_EFFORTS) else None
    eigS = _gram_eig(*thinS) if thinS is not None else None
    lamS = (float(eigS[0][0] + eigS[2]) if eigS is not None else _lambda_S(cov, S)) if light else None
    certS, stS = (light_S(covS, kS, xS, lamS, lazy=lazy, seen=seen) if light else None), None
    if certS is None and small_try is not None and (small := small_try(x, info["lower_source"])):
        return small  # (the DNN would run on this S: a smaller screen that stands instead, _certify_large)
    pre: dict = {}  # (own_hopeless's rest spectrum, reused below)
    if certS is None and light and skip_own is not None and own_hopeless(pre, cov, S, T, covS, xS, k, kS, lower,
                                                                          gram.get("G"), lamS):
        skip_own.update(x=x, src=info["lower_source"], size=int(S.size))
        return None  # (T alone holds this screen below the aim: the grown one instead, _certify_large)
    if certS is None:
        certS, stS, x, lower = _split_S(cov, S, covS, kS, xS, effort, callback, budget, branch_seconds, T.size,
                                        x, lower, info, seen, thinS and (*thinS, eigS), tree, cut_below)
        if (keep is not None and effort == "auto" and kS > _SPLIT_BRANCH_MAX_K
                and _CUT_BELOW <= seen.get("kkt_ratio", 0.0) < 1.0 - cfg.get("accept_gap", cfg["target_gap"])):
            keep["kkt_rule"] = True  # (certify(k)'s S would have stood at its KKT point, this run's did not: above)
    B_S = certS.upper_bound
    if budget is not None and not budget.fits("rest", work):
        info.update({"stopped": "time_limit", "S": S, "B_S": B_S})
        return _finish(bounds, lower, x, k, t0, info)
    # ---- B_T
    with step(budget, "rest", work):
        pair = None
        if k >= 3 and T.size:  # B_S(2) + B_T(k - 2) can decide; exact pairs (O(|S|^2), any k)
            AS = covS.dense()
            seed = pair_seed(AS)  # (a feasible pair's value: opt_pairs screens below it, the same float)
            opt2 = max(opt_pairs(Cov(None, AS), 2, lower=seed)[0], seed)
            pair = opt2 * (1 + 8 * _EPS) + 8 * _EPS * max(float(AS.max()), -float(AS.min()))  # (= |AS|'s max)
        # (rest_late: T's spectrum not computed where the trace curve already leaves S's own bound binding, the same
        # coupled float: :func:`.rest_top.late_rest`)
        late_ok = rest_late and T.size and trial is None and keep is None and budget is None and not pre
        put_off = (late_rest(cov.diag()[T], k, B_S, lambda bt: _coupled(certS, stS, covS.diag(), kS, bt, k, pair,
                                                                        argmax=True)) if late_ok else None)
        # (and where it does not: the trace curve with the refinements first, :func:`.rest_top.trace_first`; not
        # with the light route, whose DNN route on S reads the coupled bound; not on a screen given its size, a grown
        # one: its bound is compared with the first screen's, and that choice decides whether the dense route follows)
        first = (late_ok and put_off is None and certS.kind in TRACE_FIRST_KINDS and kS == k and effort == "auto"
                 and _rest_top._TRACE_FIRST and not light and size is None and pays)

        def rest_spectrum():  # (T's spectrum, its bounds and curve: the split bound B_S + B_T)
            specT = None if put_off is not None else (pre["specT"] if "specT" in pre else _rest_spectrum(
                cov, T, gram.get("G"), S)) if T.size and trial is None else (trial or {}).get("specT")
            bt = (put_off[1] if put_off is not None else _bound_rest(cov, T, k, effort, spec=specT)) if T.size else {}
            B_T = min(bt.values()) if T.size else 0.0
            bounds["split"] = B_S + B_T
            return bt, B_T, (put_off[0] if put_off is not None else _rest_curve(cov, T, k, spec=specT))

        if not first:
            bt, B_T, BT = rest_spectrum()
    report.offer(min(bounds.values(), default=np.inf))
    # sharpened (the cross term of S and T, anchored row sums) only below the cuts' aim ("full": its target)
    stop = 1 - EXACT_TOLERANCE if budget is not None else 1 - cfg["target_gap"] if effort == "full" else _CUT_BELOW
    # eager (the dense route's data, by cost): the refinements aim at S's own ratio, the dense route's test's
    aim_at = certS.info.get("aim_at", certS.upper_bound)  # (S's bound collatz's: rel_tol above it, _AIM_STEP_CW)
    aim = max(_COUPLED_AIM, lower / aim_at) if eager and certS.upper_bound > 0 else _COUPLED_AIM
    stop = max(stop, aim) if eager else stop
    stop = stop if tier else 0.0  # (the plain coupled bound: lower >= 0 x bound, nothing refined)
    notes, gallop, rel = {}, *((_AIM_GALLOP, _AIM_REL) if keep is not None else (_AIM_GALLOP_ONE, _AIM_REL_ONE))
    follow = follow and stS is None  # (S's bound the light route's: certify(k)'s route is the lazy one)
    make, rows = split_cross(cov, S, T, kS, k, certS, lower, trial,
                             follow or (keep is None and budget is None and trial is None))
    make, rows = reuse_parts(pre, make, rows)
    tried = None  # (the trace curve's order: its refined coupled bound; where it did not stand, the smaller one kept)
    if first:
        make = _once(make, getattr(make, "one_k", None))  # (the cross table: computed once for both orders)
        settles = _no_growth(n, k, effort, S.size, lower, certS.upper_bound)
        tried = trace_first(cov.diag()[T], k, B_S, _coupled_bs(certS, stS, covS.diag(), kS, pair)[kS], lower,
                            lambda bt, give_up, upto: light_refined(
                                lazy, covS, certS, stS, kS, bt, k, pair, make, lower, upto, aim=aim, notes=notes,
                                deep=False, gallop=gallop, make_rows=rows, rel=rel, give_up=give_up)[1])
        if tried is not None:
            info["trace_first"] = "stood" if tried[0] else "spectrum too"
        if tried is not None and tried[0]:  # (it stands: below a proved floor of what T's spectrum would give)
            BT, bt, (coupled, sharper, cross) = tried[1:]
            B_T = min(bt.values())
            bounds["split"] = B_S + B_T
        else:  # (T's spectrum and its order, as before)
            bt, B_T, BT = rest_spectrum()
            notes = {}
    stood = tried is not None and tried[0]  # (the trace curve's refinements ran and stand: nothing more to refine)
    if follow and not stood:
        make = _once(make)
        certS, (coupled, sharper, cross) = light_refined(
            lazy, covS, certS, stS, kS, BT, k, pair, make, lower, stop, aim=_COUPLED_AIM, notes=notes, deep=True,
            gallop=_AIM_GALLOP_ONE, make_rows=rows, rel=_AIM_REL_ONE)
        one_k = (coupled, sharper, notes.get("cost", 0.0))
        # (certify(k)'s own bound here: where it stands, certify(k) grows no screen; screens.grown reads it)
        info["one_k_stands"] = small_verdict(lower, coupled, certS.upper_bound)
        eager = light_S(covS, kS, xS, lamS, seen=seen)  # (its first test reused: dual.top_test)
        if eager is not None:  # the path's own light route, eager and finer, on the whole cross table
            full = make if rows is None else _once(lambda: np.minimum(make(), rows()))
            notes = {}
            certS, (coupled, sharper, cross) = light_refined(
                None, covS, eager, stS, kS, BT, k, pair, full, lower, stop, aim=_COUPLED_AIM, notes=notes,
                deep=True, gallop=gallop, make_rows=None, rel=rel)
            for i, v in one_k[1].items():
                sharper[i] = min(sharper.get(i, np.inf), v)
            coupled, notes["cost"] = min(coupled, one_k[0]), notes.get("cost", 0.0) + one_k[2]
            rows = None
    elif not stood:
        late = None  # (the thin route's first eager screen: its refinements deferred, thin_defer)
        if (defer is not None and eager and stS is None and light and keep is None and budget is None
                and defer["grows"](S.size)):
            late = floor_or_none(covS, certS, stS, kS, BT, k, pair, make, rows, lower, stop, min(bounds.values()),
                                 certS.info.get("aim_at", certS.upper_bound), defer["slack"])
            make, rows = (make, rows) if late is None else late[:2]
        if late is not None and late[2] is not None:
            coupled, sharper, cross = late[2], {}, make()
            info["deferred_floor"] = late[3]
        else:
            rule = {} if late is None or late[4] is None else {"give_up": late[4]}
            alone = {} if pays or rule else {"give_up": lambda lo: lo}  # (tier "cross": the aimed tests given up)
            alone.update({"step0": _AIM_STEP_CW} if certS.info.get("collatz") else {})
            certS, (coupled, sharper, cross) = light_refined(
                lazy, covS, certS, stS, kS, BT, k, pair, make, lower, stop, budget=budget,
                aim=aim if effort != "full" else None, notes=notes,
                deep=stS is None and light, gallop=gallop, make_rows=rows, rel=rel, **rule, **alone)
            if rule and "gave_up" in notes:
                info["deferred_floor"] = rule["give_up"](notes["gave_up"])
        if tried is not None and not settles(coupled):
            info["trace_first"] = "spectrum alone"  # (a grown screen follows: it sees the spectrum order's floats)
        elif tried is not None:  # (both orders ran: the smaller coupled bound, each proved)
            for i, v in tried[3][1].items():
                sharper[i] = min(sharper.get(i, np.inf), v)
            coupled = min(coupled, tried[3][0])
            if tried[3][2] is not None:  # (the first order's cross table with T's spectrum too: any valid table)
                coupled = min(coupled, _coupled(certS, stS, covS.diag(), kS, BT, k, pair, sharper, cross=tried[3][2]))
    if stS is None and light and (keep is not None or lower / coupled < min(
            _COUPLED_AIM, lower / notes.get("least", lower)) - _LIGHT_LOSS):
        # the DNN's route too (a path's run always: its dual point is carried to other k and polished);
        # the smaller of the two coupled bounds, S's bounds at each sparsity the smaller of the two
        certS, stS, x, lower = _split_S(cov, S, covS, kS, xS, effort, callback, None, None, T.size, x, lower, info,
                                        seen, thinS and (*thinS, eigS), tree, cut_below)
        bounds["split"], C0, light0 = certS.upper_bound + B_T, cross, (coupled, sharper, notes.get("cost", 0.0))
        coupled, sharper, cross = _coupled_refined(covS, certS, stS, kS, BT, k, pair, lambda: C0, lower, stop,
                                                   aim=_COUPLED_AIM, notes=notes, gallop=gallop, make_rows=rows, rel=rel)
        for i, v in light0[1].items():
            sharper[i] = min(sharper.get(i, np.inf), v)
        coupled, notes["cost"] = min(coupled, light0[0]), notes.get("cost", 0.0) + light0[2]
    report.offer(min(coupled, min(bounds.values())))
    if (budget is not None and certS.lower < (1 - EXACT_TOLERANCE) * certS.upper_bound
            and certS.x is not None and certS.lower > 0 and not budget.expired()):
        # the exact mode: branch and bound on S with the time left; its proved bound at kS replaces
        # B_S(kS) in the coupled bound (every other sparsity's term stays as proved)
        def coupled_at(b):
            return _coupled(replace(certS, upper_bound=min(certS.upper_bound, b)), stS, dS, kS, BT, k, pair,
                            sharper, cross=cross)

        dS = covS.diag()
        base = min(bounds.values())
        bb = branch_and_bound(covS.dense(), kS, certS.x, certS.lower, stS, upper=certS.upper_bound,
                              budget=budget, report=report.through(lambda b: min(base, coupled_at(b))))
        info["split_branch"] = {"nodes": bb["nodes"], "complete": bb["complete"], "open": bb["open"]}
        info["nodes"], info["open_nodes"] = bb["nodes"], bb["open"]
        if bb["upper"] < certS.upper_bound or bb["lower"] > certS.lower:
            certS, x, lower = take_branch(cov, S, certS, bb, x, lower, info)
            coupled = min(coupled, _coupled(certS, stS, dS, kS, BT, k, pair, sharper, cross=cross))
        B_S = certS.upper_bound
        bounds["split"] = min(bounds["split"], B_S + B_T)
    if keep is not None:  # what the coupled bound at any other k needs (certify_path)
        keep.update(certS=certS, stS=stS, dS=covS.diag(), kS=kS, S=S, T=T, pair=pair, BS_at=sharper, cross=cross,
                    **({"BS_cost": notes["cost"]} if "cost" in notes else {}))
    if coupled < bounds["split"]:
        bounds["split"] = coupled
    info.update({"coupled": coupled, "S": S, "split_S": int(S.size), "split_T": int(T.size), "B_S": certS.upper_bound,
                 "B_S_kind": certS.kind, **({"B_S_rule": certS.info["aim_at"]} if "aim_at" in certS.info else {}),
                 "B_S_bounds": certS.bounds, "B_T": B_T, "B_T_bounds": bt,
                 "dnn": certS.info.get("dnn")})
    if trial is not None:
        trial["ok"] = small_verdict(lower, coupled, certS.upper_bound)
    if callback is not None:
        callback(1, 1)
    return _finish(bounds, lower, x, k, t0, info)


def _no_growth(n: int, k: int, effort: str, size: int, lower: float, B_S: float):
    """``settles(c)``: whether :func:`.screens.grown` takes no larger screen after a split certificate on ``size``
    features whose coupled bound is c (the lower bound and S's bound as given): its own rule,
    :func:`.screens.grown_size`, asked of a stand-in with those fields (monotone: where it holds at c it holds at
    every smaller c).  Where T's spectrum ran after the trace curve's order (:func:`.rest_top.trace_first` did not
    stand), the smaller coupled bound is kept only where the spectrum order's own settles; else its floats alone
    (the grown screen as before).  Chooses only which order's floats stand."""
    return lambda c: grown_size(n, k, SimpleNamespace(lower=lower, info={"split_S": int(size), "coupled": c,
                                                                         "B_S": B_S}), effort) is None


def _once(make, one_k=None):
    """``make`` called at most once (its first result returned again): a cross table two routes share
    (``one_k``: :func:`.coupled.split_cross`'s flag, kept where given)."""
    memo: list = []

    def made():
        if not memo:
            memo.append(make())
        return memo[0]

    if one_k is not None:
        made.one_k = one_k
    return made


def _split_S(cov: Cov, S, covS: Cov, kS: int, xS, effort: str, callback, budget, branch_seconds, nT: int, x,
             lower: float, info: dict, seen: dict | None = None, thin=None, tree: bool = True,
             cut_below: float | None = None):
    """S's certificate for :func:`_certify_split` by the dense machinery on ``A_SS`` (x restricted to S is
    feasible there; the DNN's dual point for every sparsity when T is not empty), then the branch and
    bound over supports on S where it applies.  ``thin``: ``(X_S, m, eig)``, S's eigenpairs then through
    X_S's Gram (:class:`.bounds._ThinSpectral`); ``tree=False``: no branch and bound by nodes ("auto" / "full" at
    k <= ``_SPLIT_BRANCH_MAX_K``: the DNN with its cut rounds instead); ``cut_below``: S's DNN's
    (:func:`.dual._dnn`; :mod:`.sparse_route`).  Returns ``(certS, stS, x, lower)``."""
    seconds, nodes = None, 0
    if budget is not None:  # the exact mode: the branch and bound on S comes last
        below = 0.0
    elif branch_seconds is not None:  # the exact mode: whenever S is not closed (the caller's clock)
        seconds, below = branch_seconds, 1 - _EFFORT[effort]["target_gap"]
    else:  # auto / full: small k below the certified ratio the cuts aim for (where it closes), by nodes
        nodes = _EFFORT[effort].get("split_branch_nodes", 0) if kS <= _SPLIT_BRANCH_MAX_K and tree else 0
        below = 1 - _EFFORT[effort]["target_gap"]  # (S is the screened set here)
    tree = (seconds or 0.0) > 0 or nodes > 0
    spec = None if thin is None else _ThinSpectral(covS.dense(), *thin[:2], 2, thin[2])
    if seen is not None and cov.X is not None and cov.thin and cov._A is None and type(cov).submatrix is Cov.submatrix:
        # (A_SS = fl(X_S^T X_S) / m and X_S, cut once: the KKT point's thin bound, dual_start; lambda_1's, below)
        seen["gram"] = (covS.dense(), cov.X[:, S] if thin is None else thin[0])
    certS, stS = _certify_dense(covS, kS, xS, effort, callback, need_dual=nT > 0, budget=budget, spec=spec,
                                tree_follows=effort == "auto" and nodes > 0,
                                dnn_iters=_EFFORT[effort].get("split_iters"), seen=seen, cut_below=cut_below,
                                proved_start=True)
    if tree and certS.lower < below * certS.upper_bound and certS.x is not None and certS.lower > 0:
        # branch and bound over supports on S (exact.py): often proves S's best point optimal at
        # small k in a few dozen nodes, where both the anchored sums and the DNN stop short
        bb = branch_and_bound(covS.dense(), kS, certS.x, certS.lower, stS, upper=certS.upper_bound,
                              time_limit=seconds, max_nodes=nodes or None,
                              dnn_hope=_SPLIT_DNN_HOPE if nodes and effort != "full" else None)
        info["split_branch"] = {"nodes": bb["nodes"], "complete": bb["complete"]}
        certS, x, lower = take_branch(cov, S, certS, bb, x, lower, info)
    return certS, stS, x, lower
