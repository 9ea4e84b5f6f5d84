"""One "auto" certificate of sparse data held as an operator with at most ``_DENSE_MAX_N`` features (a bag of
words given with its answer x, as ``fit(certify=True)`` gives it): the dense route (A formed, its DNN over
all n features) or the split route on a screened set (A formed too, S's DNN on ``|S|`` features), chosen by
predicted cost and by what the dense route's first, cheap steps prove.

Why: at n <= 2,500 features ``_DENSE_MAX_N`` alone sent a sparse corpus to the dense route, whose DNN over
all n features costs ``n^2`` an iteration; issue 39, a 3,000 x 1,600 topic corpus: certify 45-48x the answer
at k = 10 / 50 (one DNN iteration ~12 ms at n = 1,600), where the split route on 300 screened features
proves more at k = 20 / 50 (0.9656 / 0.9774 -> 0.9821 / 0.9848) at ~1/3 of the cost (its two top
eigenpairs, of A and of the rest ``A_TT``, bind it).  The choice, in order (each step only where the
previous one did not decide):

1. k >= 3 and the split route's predicted cost (:func:`._settings.split_held_cost`) below :data:`_SPLIT_SHARE`
   times the dense route's DNN run's (:func:`._settings.dnn_run_cost`); else the dense route, as before
   (:func:`split_pays`);
2. the dense route's own first steps, as it takes them: ``lambda_1`` proved at a Lanczos guess
   (:func:`.cheap.lambda1_proved`, from ``_LANCZOS_MIN_N`` features; the review corpus 5,000 x 2,000 is
   certified 0.997 by it) -- where it stands, the certificate the dense route makes of it (the same
   floats; that route is not entered, so nothing is computed twice; its arrowhead proof is kept as the whole
   problem's ``lambda1`` for the routes below: :func:`_lambda1`); then the anchored row sums' test at
   ``lower / _DNN_SKIP_AT`` (its forecast first), the test that spares the dense route's DNN where it
   holds -- where it holds (or is not affordable there), the dense route, handed the test's record so
   that it is not run twice (:func:`.dual.top_test`'s ``seen``: the same floats as without this module), and
   lambda_1 alone instead of A's top eigenpairs where the d = 1 bounds' estimate is above the test's level
   (:func:`_light_spec`: the same bound, the anchored one, at k = 3..7 of the topic corpus);
3. the split route (:func:`.route._certify_large` on the covariance now held: S's bound by its DNN with its cut
   rounds at every k, no branch and bound on S, on a screen of at most ``max(_SPLIT_MIN, _HELD_PER_K k)``
   features; the whole problem's lambda_1 from step 2, not A's eigenpairs;
   the rest's top two by :mod:`.rest_top`); and the dense route too where it does not stand (:func:`_stands`:
   its ratio below :data:`_SPLIT_STANDS` and S's bound not its own DNN's nor anchored): the smaller bound.

lambda_1's step (2) and the whole problem's lambda_1 for the routes below are lazy (:data:`_LAZY_LAMBDA1`):
:func:`lambda1_floor` (a Rayleigh quotient, ``<= lambda_1``) first; where ``lower`` reaches ``accept`` times it, step 2
as above; else step 2 cannot stand (its bound is ``>= lambda_1``) and lambda_1 is proved only where a route reads it:
the dense route of step 2's test (as before), the split route where its bound is not below the floor (then run
again with it: the former certificate).  Where the split bound is below the floor the certificate is the former one
less its "lambda1" entry, which could not be the smallest (``info["lambda1_lazy"]``).  Issue 39, corpus28: 46 of 88
certificates on 11 topic corpora (c3000 k = 8..100 among them), ~0.012 CPU s each.

Issue 39, corpus16 (the 3,000 x 1,600 topic corpus, one run): cert / answer at k = 5 / 10 / 50 12.2 / 47.4 / 14.6x
-> 4.2 / 9.4 / 7.3x, k = 8..16 0.955-0.968 -> 0.970-0.986 (S's DNN on 300 features with its cut rounds proves
more than the dense DNN over 1,600), every other k the same ratio to 1e-7.

Every bound returned is proved by its route; this module only chooses routes (any choice is valid).
"""

from __future__ import annotations

import time
from functools import partial

import numpy as np

from ..operators.cov import Cov
from ..result import Certificate
from . import _settings as S
from . import cheap, dual, single
from .anchor_sums import top_test_fails
from ._settings import _EFFORT, dnn_run_cost, screened_size, split_held_cost
from .cheap import (_ARROW_STEPS, _LANCZOS_MIN_N, _LIGHT_SPEC_MARGIN, Lambda1Only, _finish, _lambda1_by_arrow,
                    _short, _sparse_products, lambda1_proved)

__all__ = ["sparse_route"]

# the split route is taken where its predicted cost is below this share of the dense route's DNN run
_SPLIT_SHARE = 1.0
# the split certificate stands alone from this ratio; below it the dense route runs too, the smaller bound standing.
# Issue 39, the 3,000 x 1,600 topic corpus (dense route -> split route, x = the answer): k = 20 / 30 / 50 / 60 / 65
# 0.9656 / - / 0.9774 / 0.9738 / 0.9803 -> 0.9821 / 0.9827 / 0.9848 / 0.9871 / 0.9858 (S's DNN on 300-390
# features); k = 70 / 80 / 90 / 100 0.9822 / 0.9798 / 0.9799 / 0.9720 -> 0.9688 / 0.9704 / 0.9721 / 0.9720 (S's
# bound its lambda_1 there: the dense route's DNN with its cut rounds proves more)
# (Up to corpus15 the split route was not tried at k <= _SPLIT_BRANCH_MAX_K, where S's bound was its branch and
# bound's: 0.9571 / 0.9564 at k = 10 / 15 against the dense 0.9553 / 0.9606.  S's DNN with its cut rounds instead:)
_SPLIT_STANDS = 0.98
# ... or where S's bound is one S's own DNN (with its cut rounds, k <= _SPLIT_BRANCH_MAX_K included: no branch and
# bound there) or anchored row sums proved: where the dense route won (k = 70..90 above) S's bound was its lambda_1.
# Issue 39, corpus16: k = 8 / 10 / 12 / 15 0.9722 / 0.9746 / 0.9746 / 0.9855 (S's DNN) against the dense route's
# 0.9553 at k = 10 and 0.9606 at 15 (its DNN over all 1,600 features)
_S_OWN = ("dnn", "anchored")
# S's DNN runs its cut rounds below this ratio (S's own), not below _settings._CUT_BELOW = 0.97: S's ratio is not the
# split's (B_T adds), and below _SPLIT_STANDS the split cannot stand on its ratio.  Where A_SS's Perron vector v is
# positive with (1^T v)^2 <= k, v v^T is feasible for the plain DNN: its optimum IS lambda_1(A_SS), only the cuts go
# below.  Issue 39, corpus17: the 3,000 x 1,600 topic corpus, k = 70: (1^T v)^2 = 44, S's ratio 0.9705 (>= 0.97: no
# cuts), its bound lambda_1(A_SS) 37.362, the split 0.9688 and the dense route run too (0.9822, ~2.5 CPU s); with the
# cuts S proves 36.546, the split 0.9868 alone
_S_CUT_BELOW = _SPLIT_STANDS
# ... and below this one where the screen is the smaller one of _HELD_PER_K (below): on 300 features S's own ratio
# starts nearer 1, and at 0.98 its cut rounds were skipped where the 6 k screen's ran.  Issue 39, corpus26: the
# 2,500 x 2,000 corpus, k = 65: 0.99575 (6 k) -> 0.97813 (4 k, cuts below 0.98) / 0.99578 (4 k, below 0.99).  Not on
# the 6 k screen itself: an 800 x 400 corpus at k = 5 0.98691 -> 0.99129 at 1.9x the CPU (its S ratio in between)
_S_CUT_BELOW_CAPPED = 0.99
# the split route's screen here: at most max(_settings._SPLIT_MIN, _HELD_PER_K k) features (_SPLIT_PER_K k: 6 k).
# S's DNN (40 iterations and its cut rounds, |S|^2 an iteration) was ~2/3 of the certificate; on the held corpus
# S's bound binds alone (the coupled bound at j = 0) and the smaller screen's DNN gets nearer its optimum in the
# same iterations.  Issue 39, corpus26 (x = the answer, one process): the 3,000 x 1,600 topic corpus k = 65 / 80 /
# 100 0.99225 / 0.99233 / 0.99328 -> 0.99430 / 0.99587 / 0.99622 at 0.163 / 0.202 / 0.288 -> 0.132 / 0.140 /
# 0.170 CPU s (benchmarks/results/issue39_corpus26.txt).  The route's choice (split_pays) keeps the 6 k screen's
# predicted cost: the same routes as before
_HELD_PER_K = 4


# the whole problem's lambda_1 (its Lanczos run and arrowhead proof, ~0.012 CPU s of ~0.1-0.14 on the 3,000 x 1,600
# topic corpus at k = 10..100) proved only where it could bind: where :func:`lambda1_floor` (<= lambda_1) is above
# what the split route proved, lambda_1's bound (>= lambda_1) cannot be the smallest (issue 39, corpus28)
_LAZY_LAMBDA1 = True
# lambda1_floor's quotient is taken this far (relative) below its float value: far above its rounding (~n eps)
_FLOOR_REL = 1e-6


def lambda1_floor(cov: Cov, x) -> float | None:
    """A lower bound on ``lambda_1(A)``: the Rayleigh quotient ``u^T A u / u^T u`` of ``u = A x`` (x the answer:
    one power step; :meth:`~nspca_core.operators.cov.Cov.quad` for ``u^T A u``, through the data), taken
    :data:`_FLOOR_REL` below its computed value (the quotient's rounding is ~n eps relative).  Any nonzero u has
    ``u^T A u <= lambda_1 u^T u``.  None where u vanishes or the quotient is not positive and finite.  Decides only
    which bounds are computed (:func:`sparse_route`), never a bound.  Issue 39, corpus28: within 1e-4 of lambda_1
    on the topic corpora c3000 / c2500 / c1200 / d4 (37.5805..37.5847 of 37.585 on c3000, k = 8..100), ~0.5 ms;
    the split bounds there 35.3..36.7."""
    u = np.asarray(cov.matvec(np.asarray(x, dtype=np.float64)), dtype=np.float64).reshape(-1)
    den = float(u @ u)
    if not (np.isfinite(den) and den > 0):
        return None
    q = float(cov.quad(u)) / den
    return q * (1.0 - _FLOOR_REL) if np.isfinite(q) and q > 0 else None


def _held_sparse(cov: Cov) -> bool:
    """Sparse data held as an operator (no dense X): :class:`~nspca_core.operators.sparse.SparseCov`."""
    return bool(getattr(cov, "sparse", False)) and cov.X is None


def _stands(d: Certificate) -> bool:
    """Whether the split certificate ``d`` stands alone (step 3 of the module docstring): its ratio at least
    :data:`_SPLIT_STANDS`, or S's bound proved by S's own DNN or anchored row sums (:data:`_S_OWN`).  Chooses
    whether a second route runs; both bounds are proved."""
    return d.upper_bound > 0 and (d.ratio >= _SPLIT_STANDS or d.info.get("B_S_kind") in _S_OWN)


def split_pays(cov: Cov, k: int, effort: str) -> bool:
    """Step 1 of the module docstring: "auto", sparse data held as an operator with at most
    ``_DENSE_MAX_N`` features, k >= 3, a screen smaller than n, and the split route's predicted cost below
    :data:`_SPLIT_SHARE` times the dense route's DNN run's."""
    if effort != "auto" or k <= 2 or not _held_sparse(cov) or cov.n > S._DENSE_MAX_N:
        return False
    s = screened_size(cov.n, k, _EFFORT[effort])
    return s < cov.n and split_held_cost(cov.n, s, effort) < _SPLIT_SHARE * dnn_run_cost(cov.n, effort)


def _lambda1(A: np.ndarray, cov: Cov, need: float):
    """``(lam1, whole)``: the dense route's first step, :func:`.cheap.lambda1_proved` at ``need`` (the same floats:
    None where its Lanczos value is above ``need``), and the whole problem's bounds for the split route
    (``{"lambda1": ...}`` from the same Lanczos run's arrowhead proof where it holds, proved whatever ``need``, with
    that run's Ritz pairs as ``"ritz"`` for :func:`_light_spec`; else from lambda1_proved's value, else none).  The
    arrowhead try is lambda1_proved's own first try, run once here with no ``need`` (its value does not depend on
    it)."""
    mv = cov.matvec if _sparse_products(cov) else None
    keep: dict = {}
    out = _lambda1_by_arrow(A, mv, None, keep) if _ARROW_STEPS > 0 else None
    if isinstance(out, tuple) and out[1] < out[0]:  # (then out[1] is the Lanczos value lambda1_proved tests)
        lam1 = None if (out[1] > need * (1.0 + 1e-12) and out[1] > 0) else out
        return lam1, {"lambda1": out[0], "ritz": keep.get("ritz")}
    lam1 = lambda1_proved(A, matvec=mv, need=need)
    return lam1, ({"lambda1": lam1[0], "ritz": keep.get("ritz")} if lam1 is not None else {})


def _light_spec(A: np.ndarray, cov: Cov, k: int, tau: float, whole: dict | None):
    """Where the anchored test proved ``tau`` (the dense route's certificate is then at most ``tau``): the whole
    problem's lambda_1 alone (:class:`.cheap.Lambda1Only`, the arrowhead proof's value, nothing added) for the dense
    route, in place of A's top eigenpairs by LAPACK, where the d = 1 bounds estimated from the same Lanczos run's
    Ritz pairs (:func:`.cheap._short`, as :func:`.cheap.lambda1_only` estimates them) come out above ``tau`` by
    ``_LIGHT_SPEC_MARGIN``: they could not be the smallest bound.  Else None (the eigenpairs, as before).  Only the
    choice of bounds rests on the estimate; the ones kept are proved.  Issue 39, corpus16: the 3,000 x 1,600 topic
    corpus at k = 3..7, the d = 1 bounds 37.55 against the anchored 33.58 (k = 5), LAPACK's eigh 0.29 of 0.57 CPU s."""
    if not whole or "lambda1" not in whole or cov.n < max(cheap._LIGHT_SPEC_MIN_N, single._D2_MAX_N + 1):
        return None  # (up to _D2_MAX_N features the dense route's d = 2 bound reads the eigenpairs)
    out = whole.get("ritz")  # (the arrowhead step's Lanczos pairs: no second run)
    if out is None or out[0].size < 2 or _short(A, out[0], out[1], k, (1.0 + _LIGHT_SPEC_MARGIN) * tau):
        return None
    return Lambda1Only(A, float(whole["lambda1"]), 0.0)


def sparse_route(cov: Cov, k: int, x, effort: str, callback, large) -> Certificate | None:
    """The certificate of the module docstring's choice, or None where it does not apply (x not given, or
    :func:`split_pays` false): the caller's dense route then.  ``large``: the split route
    (:func:`.route._certify_large`, passed by its module: no import circle)."""
    if x is None or not split_pays(cov, k, effort):
        return None
    t0 = time.perf_counter()
    cfg = _EFFORT[effort]
    A = cov.dense()  # (both routes read it: formed once, kept by the operator)
    lower = cov.quad(x)
    seen: dict = {"products": (A, cov.matvec)}  # (the KKT floor's power steps through the data: dual_start)
    whole = None  # (below _LANCZOS_MIN_N features: A's top eigenpairs, as the split route computes them)
    floor = None  # (a Rayleigh quotient of A, <= lambda_1: where it rules lambda_1 out, its proof is lazy)
    if cov.n >= _LANCZOS_MIN_N:
        accept = 1.0 - cfg.get("accept_gap", cfg["target_gap"])
        floor = lambda1_floor(cov, x) if _LAZY_LAMBDA1 else None
        if floor is None or lower >= accept * floor:  # (else lambda_1's own step cannot stand: not run)
            floor = None
            lam1, whole = _lambda1(A, cov, lower / accept)
            if lam1 is not None and lower >= accept * lam1[0]:
                # the dense route's first step stands: its certificate, as it makes it (not computed twice)
                if callback is not None:
                    callback(1, 1)
                return _finish({"lambda1": lam1[0]}, lower, x, k, t0,
                               {"n": cov.n, "lower_source": "given", "eig_tolerance": lam1[0] - lam1[1]})
    tau = lower / dual._DNN_SKIP_AT
    if not S.anchor_ok(cov.n, k) or not (np.isfinite(tau) and tau > 0):
        return single._certify_dense(cov, k, x, effort, callback)[0]
    # (a test proved to fail is not run: anchor_sums.top_test_fails, ~1 ms on A's rows that decide it)
    if not top_test_fails(A, k, tau, x) and not dual._forecast_fails(A, k, x, tau, cfg, seen) \
            and dual.top_test(A, k, tau, seen)[1]:
        # (its DNN spared: the test reused; A's top eigenpairs too where the d = 1 bounds cannot win)
        if floor is not None:  # (the lazy lambda_1: the dense route reads it, as before)
            whole = _lambda1(A, cov, lower / accept)[1]
        spec = _light_spec(A, cov, k, tau, whole)
        return single._certify_dense(cov, k, x, effort, callback, seen=seen, spec=spec)[0]
    capped = screened_size(cov.n, k, cfg, per_k=_HELD_PER_K) < screened_size(cov.n, k, cfg)
    split = partial(large, cov, k, x, effort, callback, tree=False,
                    cut_below=_S_CUT_BELOW_CAPPED if capped else _S_CUT_BELOW, rest_late=True, per_k=_HELD_PER_K)
    if floor is not None:
        d = split(whole={})  # (no whole-problem bound: lambda_1 is proved after, only where it could bind)
        if d.upper_bound < floor:
            d.info["lambda1_lazy"] = "ruled out"
        else:  # (it could: proved now and the split route run again with it, as without the floor)
            whole = _lambda1(A, cov, lower / accept)[1]
            floor = None
    if floor is None:
        d = split(whole=None if whole is None else {b: v for b, v in whole.items() if b != "ritz"})
    if _stands(d):
        d.info["route"] = "split(sparse)"
        return d
    e = single._certify_dense(cov, k, x, effort, callback, seen=seen)[0]
    out = e if e.upper_bound < d.upper_bound else d
    out.info["route"] = "split+dense(sparse)"
    return out
