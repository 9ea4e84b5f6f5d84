"""The doubly-nonnegative dual driver: initialization, the optimizer run, cutting-plane
rounds, and the anchored branch and bound tried before the cuts."""

from __future__ import annotations

import time

import numpy as np

from .anchor import (AnchorRows, anchored_bisection, anchored_branch_bound, anchored_rowsum_test,
                     restricted_refutes)
from .anchor_sums import witness_fails
from .dnn import DnnState, DnnWork, dnn_optimize, dnn_value_lam, ksupport_cuts
from .dual_start import (_KKT_USEFUL, _SCREEN_R, _SCREEN_STEPS, _kkt_beaten, _kkt_floored,  # noqa: F401
                         _kkt_held_out, _kkt_point, _screen_init, _start_value, kkt_floor, kkt_init)
from . import _settings as S
from ._settings import _DECAY, _EFFORT, _LR, _LR_WARM, _MAX_CUTS, _T0, _T1, OPTIMAL_TOLERANCE
from .budget import BoundReport, Budget, fits, step


# the "auto" DNN schedule's settings (_settings._EFFORT), used from its schedule_min_n features up
_SCHEDULE_KEYS = ("lr", "ritz_r", "give_up", "cut_refresh", "refresh_iters", "cut_lr", "lazy_start",
                  "anchor_forecast")


def _branch(A: np.ndarray, k: int, lower: float, upper: float, nodes: int):
    """:func:`nspca_core.certificates.anchor.anchored_branch_bound` at ``lower (1 + OPTIMAL_TOLERANCE/2)``
    (proves the answer optimal), then at ``1.01 lower``; None when neither is proved or better
    than ``upper``."""
    if not lower > 0:
        return None
    taus = [t for t in (lower * (1 + OPTIMAL_TOLERANCE / 2), lower * 1.01) if t < upper]
    return anchored_branch_bound(A, k, taus, budget=nodes) if taus else None


# "auto"'s anchored bisection resolution (relative): one term of the certificate, not a sum
_ANCHOR_REL = 1e-3

# the anchored row sums spare the DNN (and another bound its cut rounds) only when they certify
# this, by gap: 0.5% above the ratio the cuts aim for (S._CUT_BELOW), about a third of what the
# cut rounds gained on CBCL at k = 30..65.  At 0.97 itself, CBCL k = 65 stopped at the anchored
# 0.9716 where the DNN's cut rounds reach 0.983 for the same cost (issue 39)
_DNN_SKIP_AT = 0.975

# "auto"'s DNN settles at S._CUT_BELOW (no cut round follows) only where its estimates promise less than this
# more ratio, else it goes on to the ratio that spares the DNN altogether (1 - accept_gap).  Issue 39, eleventh
# round: settling at 0.97 whatever the run promised had given back 0.011-0.022 at CBCL k = 85..361 against the
# tree the issue was filed on (k = 130: 0.9769 after 5 iterations where 24 more certify 0.9994).
_SETTLE_GAIN = 0.004

# a one-k certificate's cut run (not a split bound's S) goes on for one more renewal period (its cuts kept) where at
# its end the ratio is below _EXTEND_BELOW and its estimates climb by _EXTEND_RATE per iteration or more, enough to
# reach _EXTEND_BELOW in that period at their pace (dnn_optimize's extend; never looser: its end is checked as before).
# Issue 39, twelfth round: CBCL k = 65 0.9776 -> 0.9805 (the filing tree 0.9829: the rule's 0.005 was missed), 61 / 64
# +0.0008 / +0.0021; 8 iterations and one evaluation more where it fires.  Without the pace's reach it fired at most
# k of a 400 x 180 factor-plus-noise matrix (ratios ~0.94), where the path, running no certify(k) there, then was
# looser than certify(k) at two more k; renewing cuts in the extension went looser at CBCL k = 58 by 0.0011
_EXTEND_RATE, _EXTEND_BELOW = 2.5e-4, 0.98

# "auto"'s cut run at cut_lr gaining less than this (relative) runs again from its start at _LR_WARM (_cut_rounds'
# retry_lr; issue 39, 13th round: a 3,000 x 1,600 topic corpus gained 0 / 0.5% at 3e-3, k = 10 / 50, 1.8% at 1e-3)
_RETRY_GAIN = 1e-2

# ... and is not run to its end where its free estimates at iterations 5 and _FALL_AT are both _FALL_RISE (relative)
# or more above its start's value (dnn_optimize's fall): it heads away from its start, the retry follows at once.
# Issue 39, 14th round: a 3,000 x 1,600 topic corpus's run at 3e-3 stood above its start at both by at least +1,900 /
# +11 / +15% (k = 10 / 20 / 50) and ended with no gain worth keeping (0 / 0 / 0.5%), ~1/3 of its certificate; the
# runs at 1e-3 from the same starts stood at most 1.4% above theirs there
_FALL_RISE, _FALL_AT = 0.05, 10

# the resolution of the narrow bracket's single test above a feasible value (:func:`_anchored_at`)
_NARROW_REL = 5e-5


def _anchored(A: np.ndarray, k: int, lower: float, best: float, rel_tol: float = 5e-5,
              carry: dict | None = None, top_ratio: float | None = None,
              top_first: bool = False, seen: dict | None = None) -> float | None:
    """The anchored row-sum bound as one certificate at k tries it (``_settings.anchor_affordable``,
    below the "auto" target): bisection below ``1.001 lower`` first (a near-optimal x is common:
    4 tests fewer when that is proved), else below ``lower / top_ratio`` (default
    ``S._CUT_BELOW``: a weaker proof would not spare the DNN), to ``rel_tol`` relative; None when
    nothing below ``best`` is proved.

    :func:`certify` and :func:`certify_path` both call this with brackets that depend only on the
    feasible value, so from the same point they get the same bound (the tests are warm-started
    by the failures below them: the search depends on its bracket, not only on what is provable).
    The test at the second bracket's top starts from the first one's failure (:func:`_anchored_at`).
    (One "auto" certificate now calls it with ``top_ratio=_DNN_SKIP_AT``, ``top_first`` and
    ``rel_tol=_ANCHOR_REL``; a path calling it with the defaults searches a wider bracket, finer.)

    ``carry`` (a dict, optional): filled with the rows and the last failed test (``tau``, ``r``),
    so a later test at a larger tau (:func:`_anchored_above`) starts where this one stopped.
    ``top_first``: the top of the second bracket is tested first (fresh), and nothing else when
    it fails (where the bound is weak, one test instead of two); when it holds, as above.
    ``seen``: :func:`top_test`'s record of that first test, handed on by the caller (reused, kept)."""
    top = lower / (S._CUT_BELOW if top_ratio is None else top_ratio)
    rows = None
    if top_first and np.isfinite(top) and top > 0:
        # the test that decides whether anything is proved, first: one test when it fails (the same
        # test a split certificate's light route ran just before on the same A_SS: reused, top_test's ``seen``)
        rows, ok, r = top_test(A, k, top, seen)
    rows = AnchorRows(A, k) if rows is None else rows
    state = {"rows": rows, "tau": -np.inf, "r": None}
    tb = None
    if top_first and np.isfinite(top) and top > 0:
        if not ok:
            state["tau"], state["r"] = top, r
            if carry is not None:
                carry.update(state)
            return None
    for hi in (lower * 1.001, top):
        if hi <= state["tau"]:
            continue
        tb = _anchored_at(state, lower, hi, rel_tol, proved=top_first and hi == top)
        if tb is not None:
            break
    if carry is not None:
        carry.update(state)
    return tb if tb is not None and tb < best else None


def top_test(A: np.ndarray, k: int, tau: float, seen: dict | None = None):
    """``anchored_rowsum_test(AnchorRows(A, k), tau)`` from the all-ones start: ``(rows, proved, r)``.
    ``seen`` (a dict, optional): one certificate's record of this test, handed by its caller from one ask to
    the next.  The answer is kept there (``seen["top"]``) and returned again for the same A object, k and tau:
    a split certificate's light route (:func:`.coupled.light_S`) runs this test on A_SS, and where that
    route fails or falls short the DNN's route (:func:`dense_dual`, given the same dict) asks the same one
    (issue 39: dlbcl-shaped k = 135, ~0.08 CPU s each).  The test is deterministic in its inputs, so the
    answer reused is the one it would compute (``r`` is copied by every test started from it:
    :func:`.anchor.anchored_rowsum_test`; the rows are read only).  Nothing is kept between certificates."""
    key = (int(k), float(tau))
    last = None if seen is None else seen.get("top")
    if last is not None and last[0] is A and last[1] == key:
        return last[2], last[3], last[4]
    rows = AnchorRows(A, k)
    ok, r = anchored_rowsum_test(rows, tau)
    if seen is not None:
        seen["top"] = (A, key, rows, ok, r)
    return rows, ok, r


def _recorded(seen: dict | None, A: np.ndarray, k: int, tau: float) -> bool:
    """Whether ``seen`` holds :func:`top_test`'s answer for this A object, k and tau (held or failed): then the test
    costs nothing, so no witness of its failure is sought (dense33: dlbcl-shaped k = 130, 0.08 of ~0.6 CPU s)."""
    last = None if seen is None else seen.get("top")
    return last is not None and last[0] is A and last[1] == (int(k), float(tau))


def _anchored_above(carry: dict, lower: float, top: float, rel_tol: float = 5e-5) -> float | None:
    """The anchored bound in ``(carry["tau"], top]`` from an earlier :func:`_anchored`'s last
    failed test (its ratios start the test at ``top``: valid, the hypothesis ``OPT > top`` is the
    stronger one); None when ``top`` is not proved."""
    return _anchored_at(carry, lower, top, rel_tol) if top > carry["tau"] else None


def _anchored_at(state: dict, lower: float, hi: float, rel_tol: float, steps: int = 12,
                 proved: bool = False) -> float | None:
    """The smallest ``tau`` in ``[lower, hi]`` proved by the anchored row-sum test (geometric
    bisection to ``rel_tol``, as :func:`nspca_core.certificates.anchor.anchored_rowsum_bound`), or None when
    ``hi`` is not proved.  ``state`` (``rows``, and ``tau``, ``r`` of the last failed test, whose
    ratios bound an optimal x's under any larger tau: :func:`nspca_core.certificates.anchor.anchored_rowsum_test`)
    is updated with every failure.  ``proved``: ``hi`` was proved already (not tested again)."""
    rows = state["rows"]
    if not (np.isfinite(hi) and hi > 0):
        return None
    if not proved:
        ok, r = anchored_rowsum_test(rows, hi, state["r"])
        if not ok:
            state["tau"], state["r"] = hi, r
            return None
    tau, state["tau"], state["r"] = anchored_bisection(rows, lower, hi, rel_tol, steps=steps, tau_lo=state["tau"],
                                                       r_lo=state["r"], narrow=min(rel_tol, _NARROW_REL))
    return tau


# _forecast_fails: from this many features, where the restricted rows are at most this share of n
_FORECAST_MIN_N, _FORECAST_SHARE = 150, 0.5


def _forecast_fails(A: np.ndarray, k: int, x, tau: float, cfg: dict, seen: dict | None = None) -> bool:
    """Whether the effort's ``anchor_forecast`` says the anchored test at ``tau`` fails
    (:func:`nspca_core.certificates.anchor.restricted_refutes` on at most 2k rows, ~1/5 of the
    test's cost on CBCL k = 65, where the test fails after ~9 ms): only from
    :data:`_FORECAST_MIN_N` features and where those rows are at most :data:`_FORECAST_SHARE` of
    them (else the forecast costs about what the test does).  Decides only whether the test is
    run; on CBCL k = 5..150 and LRS it agreed with the test at every k tried.

    ``seen`` (a dict, optional; the one :func:`top_test` keeps its record in): the last question and its
    verdict are kept there (``seen["forecast"]``) and returned again for the same A object, k, tau and x.  A
    split certificate asks twice with the same A_SS, x and tau (:func:`.coupled.light_S`, then
    :func:`dense_dual` before the DNN; issue 39: 2 of its 3 forecasts at MLL k = 50..200, ~25 ms each at
    k = 200) and hands its dict from one to the other.  The verdict is deterministic in its inputs and only
    decides whether a test runs, never a bound.  Nothing is kept between certificates (no module-level memo)."""
    n = A.shape[0]
    if not cfg.get("anchor_forecast") or x is None or n < _FORECAST_MIN_N:
        return False
    if np.count_nonzero(x) + k > _FORECAST_SHARE * n:
        return False
    key = (int(k), float(tau), np.asarray(x, dtype=float).tobytes())
    last = None if seen is None else seen.get("forecast")
    if last is not None and last[0] is A and last[1] == key:
        return last[2]
    verdict = bool(restricted_refutes(A, k, x, tau))
    if seen is not None:
        seen["forecast"] = (A, key, verdict)
    return verdict


def _dnn(A: np.ndarray, k: int, lower: float, effort: str, warm: DnnState | None, x=None,
         callback=None, before_cuts=None, kkt=None, budget: Budget | None = None,
         skip_at: float | None = None, cuts: bool = True, iters: int | None = None,
         settle: float | None = None, top_eig: float | None = None, beyond: tuple | None = None,
         outpaced=None, cut_below: float | None = None, work: DnnWork | None = None):
    """Run the DNN optimizer; returns (value, state, info).  Value is rigorous; ``info["lam"]``
    is the rigorous ``lambda_max`` bound of the state's dual matrix (its bound at every k:
    :func:`nspca_core.certificates.dnn.dnn_tangent`).

    ``before_cuts(value) -> float``, optional: called before the cutting-plane
    phase with the DNN value so far; returns the best bound known otherwise.
    The cut phase (which doubles the cost) is skipped when the DNN's own bound already
    certifies the ratio the cuts aim for, or that other bound certifies ``skip_at`` (default:
    the same ratio; a bound that only just certifies it is no reason to leave the cuts' gain).
    ``kkt``: :func:`_kkt_point` of x when the caller has it already.  ``budget``
    (:class:`.budget.Budget`): a start, an iteration or a round only
    when it fits in the time left; value ``inf`` and state None when no start fitted.
    ``cuts=False``: no cut phase, ``iters``: fewer iterations (a caller whose branch and bound
    decides the bound).  ``settle``: the iterations stop once the bound certifies this ratio
    (below the target: where the caller buys no more work, e.g. no cut rounds; the gap rule of
    :func:`dense_dual`); ``beyond``: :func:`.dnn.dnn_optimize`'s (on past ``settle`` where the run still
    promises more).  ``top_eig``: A's top eigenvalue (or a bound on it) when the caller has it.
    The runs and evaluations share one :class:`.dnn.DnnWork` (their n x n arrays made once).
    ``outpaced``: the cut run's (:func:`_cut_rounds`).  ``cut_below``: the cut phase runs below this ratio
    instead of ``_settings._CUT_BELOW`` where it is higher (a split bound's S from :mod:`.sparse_route`: S's ratio
    is not the split's; the plain run's ``give_up`` keeps ``_CUT_BELOW``).  ``work``: the caller's
    :class:`.dnn.DnnWork` (its KKT point's evaluation made its n x n arrays: :func:`dense_dual`), else a new one.
    """
    work = DnnWork() if work is None else work
    cfg = _EFFORT[effort]
    n = A.shape[0]
    if n < cfg.get("schedule_min_n", 0):  # small n: the effort's plain schedule (see _settings)
        cfg = {key: v for key, v in cfg.items() if key not in _SCHEDULE_KEYS}
    lam1 = max(float(np.abs(A).max()), 1e-300)
    scale = lam1
    # starts, cheapest first (a caller's x gives the KKT point for the price of one evaluation);
    # the screening search (~15 eigenvalues) only when the earlier ones miss the target
    cands = []
    if warm is not None and warm.N.shape == A.shape:
        cands.append(("warm", lambda: DnnState(warm.N.copy(), warm.nu, warm.U)))
    elif x is not None and kkt is None:
        cands.append(("kkt", lambda: _kkt_point(A, k, x, work=work)))
    screen_block: dict = {}  # (the screening search's last block: its evaluation's start)
    cands.append(("screen", lambda: _screen_init(A, k, top_eig, screen_block)))
    target = 1.0 - cfg["target_gap"]
    best, evals = None, 0
    if kkt is not None:
        best = (kkt[0], kkt[1], "kkt", kkt[2])
    # the screening start alone (no other start to compare it with): not evaluated where the run
    # follows anyway (cfg "lazy_start"; it never certified the target on CBCL, LRS or MLL's S)
    lazy = bool(cfg.get("lazy_start")) and budget is None and best is None and len(cands) == 1
    if lazy:
        best = (np.inf, cands[0][1](), "screen", None)
        cands = []
    for name, make in cands:
        if best is not None and lower >= target * best[0]:
            break
        kind = "screen" if name == "screen" else "eval"
        if not fits(budget, kind, float(n) ** 3):
            break
        with step(budget, kind, float(n) ** 3):
            st = make()
        if isinstance(st, tuple):
            v, st, lam = st
        else:
            v, lam = _start_value(A, k, st, screen_block.get("U"), lower, work, beat=best[0] if best else None)
        evals += 1
        if best is None or v < best[0]:
            best = (v, st, name, lam)
    if best is None:
        return np.inf, None, {"init": None, "iterations": 0, "exact_evaluations": evals, "stopped": "time_limit"}
    v0, st, init, lam0 = best
    if lower >= target * v0:
        return v0, st, {"init": init, "iterations": 0, "exact_evaluations": evals, "lam": lam0}
    lr = (cfg.get("lr", _LR) if init != "warm" else _LR_WARM) * scale
    st.U = st.U if st.U is not None else (warm.U if warm is not None else None)
    cut_target = target if effort == "full" else min(target, S._CUT_BELOW)
    # "auto": the plain run gives up (its cutting planes start) once its estimates head below the
    # ratio the cuts aim for (cfg "give_up"; only where cut rounds follow)
    give_up = cut_target if cfg.get("give_up") and cuts and effort != "fast" else None
    cut_at = cut_target if cut_below is None or effort == "full" else max(cut_target, min(target, cut_below))
    st, val, info = dnn_optimize(A, k, st, iters=cfg["iters"] if iters is None else iters, t_start=_T0 * scale,
                                 ritz32=effort != "full", r=cfg.get("ritz_r", 10), give_up=give_up,
                                 t_end=_T1 * scale, lr=lr, decay=cfg.get("decay", _DECAY),
                                 check_every=cfg["check_every"], target=min(target, settle or target),
                                 lower=lower,
                                 callback=callback, stall=cfg["stall"], start_lam=lam0, budget=budget,
                                 evaluate_start=not lazy, evaluate_give_up=not (lazy and cuts and effort != "fast"),
                                 work=work, beyond=beyond if settle else None,
                                 flat=cut_at if give_up is not None else None)  # (a cut run follows below cut_at)
    if info.pop("unevaluated", False) and st.U is None:  # (no cut run to evaluate it: now)
        val, info["lam"] = dnn_value_lam(A, k, st, work=work)
        info["exact_evaluations"] += 1
    # else the plain run's give-up point (lazy: nothing evaluated yet) is the cut run's start: it evaluates its end
    info["init"] = init
    info["exact_evaluations"] += evals
    lam = info["lam"]
    other = np.inf
    if lower < cut_at * val and before_cuts is not None:
        other = before_cuts(val)
    skip = cut_at if skip_at is None else max(skip_at, cut_at)
    if (cuts and lower < cut_at * val and lower < skip * other and st.U is not None
            and effort != "fast"):
        # "auto": one run renewing its cuts (cfg "cut_refresh", "refresh_iters"); else rounds
        refresh = cfg.get("cut_refresh", 0)
        c_iters = cfg["refresh_iters"] if refresh else cfg["cut_iters"]
        if refresh and iters is not None:  # a split bound's S (its caller's iterations): its own length
            c_iters = cfg.get("split_refresh_iters", c_iters)
        st, val, cinfo = _cut_rounds(A, k, st, val, lower, target, 1 if refresh else cfg["cut_rounds"],
                                     lam=lam,
                                     iters=c_iters,
                                     check_every=min(c_iters, 2 * cfg["check_every"]),
                                     stall=cfg["stall"], callback=callback,
                                     decay=cfg.get("decay", _DECAY), budget=budget,
                                     ritz32=effort != "full", refresh=refresh,
                                     lr=cfg.get("cut_lr"), r=cfg.get("ritz_r", 10),
                                     evaluate_start=np.isfinite(val), work=work,
                                     extend=(_EXTEND_RATE, refresh, _EXTEND_BELOW) if refresh and iters is None
                                     else None,
                                     retry_lr=_LR_WARM if refresh and cfg.get("cut_lr") is not None else None,
                                     outpaced=outpaced)
        info["lam"] = cinfo.pop("lam")
        info["cuts"] = cinfo
        info["exact_evaluations"] += cinfo.pop("exact_evaluations")
    return val, st, info


def _fresh_cuts(st: DnnState, k: int, max_cuts: int = _MAX_CUTS):
    """Cut vectors for a continued DNN run: k-support directions of the current top Ritz vectors
    (weights 0, so the bound can only improve) plus the cuts already in use (largest weights
    first), at most ``max_cuts``."""
    C2 = ksupport_cuts(st.U, k)
    w2 = np.zeros(C2.shape[1])
    if st.C is not None and st.w is not None:
        keep = np.argsort(-st.w)[: max(max_cuts - C2.shape[1], 0)]
        keep = keep[st.w[keep] > 0]
        C2, w2 = np.hstack([st.C[:, keep], C2]), np.concatenate([st.w[keep], w2])
    return C2, w2


def _cut_rounds(A: np.ndarray, k: int, st: DnnState, val: float, lower: float, target: float,
                rounds: int, *, iters: int, check_every: int, stall: float, callback=None,
                min_iters: int | None = None, decay: float = _DECAY, lam: float | None = None,
                budget: Budget | None = None, ritz32: bool = False, refresh: int = 0,
                lr: float | None = None, r: int = 10, evaluate_start: bool = True,
                work: DnnWork | None = None, extend: tuple | None = None, retry_lr: float | None = None,
                outpaced=None):
    """Cutting-plane rounds of the DNN: each round adds cuts ``(c^T x)^2 <= beta_k(c)`` along
    the k-support directions of the current top Ritz vectors (:func:`ksupport_cuts`; where the
    relaxation's mass lives is where a k-sparse x cannot follow) and re-optimizes all dual
    variables from there.  New cuts enter with weight 0, so no round makes the bound worse.
    Stops at ``target`` or when a round gains less than 1e-4 (relative).  ``lam``: the rigorous
    ``lambda_max`` bound of ``st`` when known (saves an exact evaluation per round).  Returns
    ``(state, value, info)``; the value is rigorous.

    ``refresh > 0``: each round is one optimizer run whose cuts are renewed from its own Ritz
    vectors every ``refresh`` iterations (``dnn_optimize(refresh=...)``: no restart of the
    optimizer between cut sets); ``lr``: the rounds' learning rate (relative to ``max |A_ij|``,
    default ``_LR_WARM``); ``r``: Ritz vectors per step; ``evaluate_start=False`` (with ``val``
    inf: ``st`` not evaluated): the first round's start is not evaluated (its end is); ``work``:
    the runs' n x n arrays (:class:`.dnn.DnnWork`), made once for all rounds; ``extend``: each run's
    (:func:`.dnn.dnn_optimize`); ``retry_lr`` (``refresh`` only): a run from an evaluated ``val`` gaining less than
    :data:`_RETRY_GAIN` (relative) at ``lr`` runs once more from its start at this rate (the better end kept); one
    whose estimates fall away from its start (:data:`_FALL_RISE`, :data:`_FALL_AT`) stops there, its start kept;
    ``outpaced``: each run's (:func:`.dnn.dnn_optimize`: it stops, its point evaluated, where its estimates' pace
    is outpaced by another bound)."""
    scale = max(float(np.abs(A).max()), 1e-300)
    gains, its, evals, retried, fell, n = [], 0, 0, False, False, A.shape[0]
    for _ in range(rounds):
        if lower >= target * val or st.U is None or not fits(budget, "iter", float(n) ** 3, 4):
            break
        # (st.N itself: dnn_optimize copies its start into its own array and never writes st.N)
        if refresh:  # the run renews its cuts itself (the first time at its first iteration)
            st2, same = DnnState(st.N, st.nu, st.U, st.C, None if st.w is None else st.w.copy()), True
        else:
            C2, w2 = _fresh_cuts(st, k)
            st2 = DnnState(st.N, st.nu, st.U, C2, w2)
            # the same dual matrix (hence lambda) when every cut in use was kept
            same = st.w is None or np.count_nonzero(w2 > 0) == np.count_nonzero(st.w > 0)
        rate, start, val2, info2 = _LR_WARM if lr is None else lr, st2, np.inf, None
        may_retry = retry_lr is not None and refresh and np.isfinite(val)  # (the rules below: a retry can follow)
        while True:
            st3, val3, info3 = dnn_optimize(A, k, start, iters=iters, t_start=_T0 * scale, lr=rate * scale,
                                            decay=decay, refresh=refresh, r=r, t_end=_T1 * scale,
                                            check_every=check_every, target=target, lower=lower,
                                            callback=callback, stall=stall, min_iters=min_iters,
                                            start_lam=lam if same else None, budget=budget, ritz32=ritz32,
                                            evaluate_start=evaluate_start, work=work, extend=extend,
                                            fall=(_FALL_RISE, _FALL_AT) if may_retry and rate != retry_lr else None,
                                            outpaced=outpaced)
            its, evals, fell = its + info3["iterations"], evals + info3["exact_evaluations"], fell or "fell" in info3
            if info2 is None or val3 < val2:  # (the retry's end kept only where better)
                st2, val2, info2 = st3, val3, info3
            if (retry_lr is None or not refresh or rate == retry_lr or not np.isfinite(val) or lower >= target * val
                    or val - val2 >= _RETRY_GAIN * abs(val) or not fits(budget, "iter", float(n) ** 3, 4)):
                break
            retried, rate = True, retry_lr  # (it gained nothing: its steps overshoot) once more from its start
            start = DnnState(st.N, st.nu, st.U, st.C, None if st.w is None else st.w.copy())
        gains.append(float(max(val - val2, 0.0)) if np.isfinite(val) else 0.0)
        if val2 < val:
            st, val, lam = st2, val2, info2["lam"]
        elif not np.isfinite(val) and info2.get("outpaced"):  # (both unevaluated: the run's end is carried on)
            st = st2
        if gains[-1] < 1e-4 * abs(val):
            break
    return st, val, {"rounds": len(gains), "count": 0 if st.C is None else int(st.C.shape[1]),
                     "iterations": its, "gain": float(sum(gains)), "exact_evaluations": evals,
                     "lam": lam, **({"retried": True} if retried else {}), **({"fell": True} if fell else {})}


def _carry_failed(A: np.ndarray, k: int, carry: dict) -> None:
    """The first test deferred (:func:`.anchor_sums.witness_fails`), made where a later test starts from it: ``carry``
    gets what :func:`_anchored` leaves there when it fails (rows, ``tau``, ratios ``r``: the same floats)."""
    deferred = carry.pop("deferred", None)
    if deferred is not None:
        rows, ok, r = top_test(A, k, deferred[0], deferred[1])
        carry.update(rows=rows, tau=deferred[0] if not ok else -np.inf, r=r if not ok else None)


def dense_dual(A: np.ndarray, k: int, x, lower: float, bounds: dict, info: dict, report: BoundReport,
               effort: str, *, warm: DnnState | None, callback, budget: Budget | None, need_dual: bool,
               tree_follows: bool = False, iters: int | None = None, seen: dict | None = None,
               top_eig: float | None = None, cut_below: float | None = None, late=None):
    """The dual side of a dense certificate (:func:`.single._certify_dense`), given its cheap
    bounds: the KKT point of x, the anchored row sums, the DNN and its cut rounds, each only
    while the bounds so far leave the ratio below what it aims for.  ``bounds`` and ``info``
    are filled in; returns ``(state, ran)``: the dual point to carry and whether the DNN ran.

    ``need_dual``: run the DNN even where the anchored bound already certifies (the split bound
    needs the dual point's bounds at every sparsity); ``tree_follows``: a branch and bound decides
    the bound next (no cut rounds, half the iterations: on MLL's screened set at k = 5 and 10 the
    tree closed in as many nodes, the DNN's second half and its cuts were then unused); ``iters``:
    the DNN's iterations before its cut rounds (default the effort's); ``seen``: the anchored first test's
    record (:func:`top_test`) and the forecast's (:func:`_forecast_fails`) a split certificate's light route left
    on the same A (reused, not run again);
    ``top_eig``: A's top eigenvalue as the screening start's bracket takes it (default the ``lambda1`` bound);
    ``cut_below``: :func:`_dnn`'s; ``late``: a :class:`.lambda1_late.Lambda1Late` whose bound ``bounds`` holds as
    ``inf`` until proved (:meth:`~.lambda1_late.Lambda1Late.settle`: where a bracket below reads it)."""
    cfg = _EFFORT[effort]
    n = A.shape[0]
    target = 1.0 - cfg["target_gap"]
    # nothing of this is started when the cheap bounds already certify `enough` ("auto": 0.996; issue 39: a sparse
    # 5,000 x 2,000 word-count corpus at k = 10 certified 0.9964 by lambda_1 alone, 0.9989 after 10x the answer's cost)
    enough = 1.0 - cfg.get("accept_gap", cfg["target_gap"])
    best_now = min(bounds.values())
    state, kkt, stands = warm, None, False
    kkt_x = x  # the DNN's own KKT start (none when the estimate below rules it out)
    # one DnnWork for the KKT point's evaluation and the DNN's (the same floats as fresh arrays; issue 39, 18th round:
    # dlbcl-shaped k = 150, the screening start's first evaluation 61 ms against 34 ms repeated: fresh memory's faults)
    work = DnnWork()
    if (lower < enough * best_now and warm is None and x is not None and fits(budget, "eval", float(n) ** 3)):
        # the KKT dual point of x costs one eigenvalue and often proves x optimal outright; where a
        # Ritz value of its matrix (below its bound) says it cannot, it is neither a bound worth
        # having nor the DNN's best start (_kkt_beaten; CBCL k = 10 / 65: it certified 0.24 / 0.63)
        kkt_block: dict = {}
        if effort != "full" and not need_dual and _kkt_held_out(A, k, x, lower / _DNN_SKIP_AT, seen):
            # (the anchored test held at the level that spares the DNN: the KKT point's bound, proved above it, cannot
            # bind; issue 39, corpus17: the topic corpus at k = 3..7, _kkt_beaten 0.034 of 0.2 CPU s)
            kkt_x = None
        elif effort != "full" and (_kkt_floored(A, x, lower) or _kkt_beaten(A, x, best_now, lower, kkt_block)):
            # (the proved floor first: where it rules the point out, _kkt_beaten's estimate is not made)
            kkt_x = None
        else:
            with step(budget, "eval", float(n) ** 3):
                kkt = _kkt_point(A, k, x, kkt_block.get("U"), lower, work, thin=(seen or {}).get("gram"))
            bounds["dnn"] = kkt[0]
            best_now = report.offer(min(bounds.values()))
            # (a thin split S's KKT point certifying `enough`, or a one-k's seen["kkt_stands"], stands: single.py)
            stands = effort == "auto" and "gram" in (seen or {}) and lower >= seen.get("kkt_stands", enough) * best_now
            need_dual = need_dual and not stands
            (seen if seen is not None else {})["kkt_ratio"] = lower / best_now  # (a path's run reads it: single.py)
    anchored_size = float(n) * n * max(k, 8)
    # (one rule before and inside the DNN: the anchored bound where it costs at most a DNN run)
    anchor_ok = S.anchor_ok(n, k) and not (seen or {}).get("no_anchor")  # (a split S that cannot pay: single.py)
    # the anchored bisection's resolution: "auto" to 1e-3 relative (half its tests; the ratio moves
    # by less than that), "full" to 5e-5; `carry`: its last failed test, which starts the next
    carry: dict = {}
    anchor_rel = 5e-5 if effort == "full" else _ANCHOR_REL
    if (lower < enough * best_now and anchor_ok and not stands
            and effort != "full" and fits(budget, "anchored", anchored_size)):
        # small k: the DNN's weak spot, the anchored row sums' strong one, and far cheaper; only
        # the test at _DNN_SKIP_AT and the bisection below it are run (a weaker proof would not
        # spare the DNN).  Enough on its own when it certifies _DNN_SKIP_AT.
        t1 = time.perf_counter()
        tried = lower / _DNN_SKIP_AT  # the top of the bracket the anchored bound was sought in
        if _forecast_fails(A, k, x, tried, cfg, seen):
            tb = None  # (nothing proved up to `tried`, as when the test fails: see anchored())
            info["anchored_forecast"] = "fails"
        elif not _recorded(seen, A, k, tried) and witness_fails(A, k, tried, x, seen):
            # (not asked where seen records THE test, held or failed: _anchored reads that answer free)
            # (the test PROVED to fail there, not run: what _anchored would leave in `carry`, the failed test's
            # rows and ratios, is made only where a later test reads it, :func:`_carry_failed` -- the same floats)
            tb = None
            info["anchored_witness"] = "fails"
            carry["deferred"] = (tried, seen)
        else:
            with step(budget, "anchored", anchored_size):
                tb = _anchored(A, k, lower, best_now, rel_tol=anchor_rel, carry=carry,
                               top_ratio=_DNN_SKIP_AT, top_first=True, seen=seen)
        info["anchored_seconds"] = time.perf_counter() - t1
        if tb is not None:
            bounds["anchored"] = tb
            best_now = report.offer(min(bounds.values()))
    else:
        tried = -np.inf
    # only the forecast (no test) ruled the anchored bound out at `tried`: where the cut run's estimates' pace
    # (their ratio plus their climb per iteration times the iterations left) cannot reach lower / tried either, the
    # anchored bisection between the two runs after all (once) and the cut run stops where it proved more than
    # that pace reaches (img24 k = 50: the cuts' 40 iterations climbed 1.5e-4 a step from 0.9658 to end at 0.9700,
    # the anchored bound 0.9727; CBCL k = 65: 6.6e-4 a step, on to 0.9805, its anchored bisection never run)
    # (a one-k certificate's: not a split bound's S, whose dual point is needed at every sparsity -- MLL k = 20 fell
    # 0.0007 where its S's cut run stopped so)
    forecast_only = (np.isfinite(tried) and info.get("anchored_forecast") == "fails" and not need_dual
                     and iters is None)
    paced: dict = {}

    def outpaced(reach: float) -> bool:
        if reach >= lower / tried or "tried" in paced or not fits(budget, "anchored", anchored_size):
            return False
        paced["tried"] = reach
        t1 = time.perf_counter()
        with step(budget, "anchored", anchored_size):
            _carry_failed(A, k, carry)
            if not carry:  # (the forecast's failure at `tried` is where the bracket starts: r None, all ones)
                carry.update(rows=AnchorRows(A, k), tau=tried, r=None)
            tb = _anchored_above(carry, lower, lower / reach, anchor_rel)
        info["anchored_seconds"] = info.get("anchored_seconds", 0.0) + time.perf_counter() - t1
        if tb is not None:
            bounds["anchored"] = tb
        return tb is not None
    if (lower < target * best_now and (need_dual or lower < enough * best_now and not stands)
            and (need_dual or not ("anchored" in bounds and lower >= _DNN_SKIP_AT * best_now))):
        def anchored_above(val):
            # the anchored bound below val, from the last failed test (warm)
            nonlocal best_now
            if late is not None and "anchored" not in bounds:
                best_now = late.settle(val, best_now, bounds, report, k)
            if "anchored" not in bounds and min(val, best_now) > tried:
                t1 = time.perf_counter()
                with step(budget, "anchored", anchored_size):
                    _carry_failed(A, k, carry)
                    if not carry:
                        carry.update(rows=AnchorRows(A, k), tau=-np.inf, r=None)
                    tb = _anchored_above(carry, lower, min(val, best_now), anchor_rel)
                info["anchored_seconds"] = info.get("anchored_seconds", 0.0) + time.perf_counter() - t1
                if tb is not None:
                    bounds["anchored"] = tb

        def anchored(val):
            # where the DNN is weak (small k, ratio below S._CUT_BELOW) the anchored row sums
            # often are not: try them before paying for cutting planes.  When they were already
            # sought up to the level that spares the cuts (`tried` finite: nothing proved there),
            # a proof below the DNN's value could not spare them: it is sought after the cuts,
            # where it is only needed if the cuts end above it (CBCL k = 65: a bisection to 0.971
            # before cut rounds that reach 0.983)
            if lower < S._CUT_BELOW * val and anchor_ok and fits(budget, "anchored", anchored_size):
                if not np.isfinite(tried):
                    anchored_above(val)
                if cfg["branch_nodes"]:
                    tb = _branch(A, k, lower, min(bounds.values()), cfg["branch_nodes"])
                    if tb is not None:
                        bounds["anchored(branch)"] = tb
            return report.offer(min(bounds.values()))

        val, state, dinfo = _dnn(A, k, lower, effort, warm, x=kkt_x, callback=callback,
                                 before_cuts=anchored, kkt=kkt, budget=budget,
                                 outpaced=outpaced if forecast_only else None,
                                 skip_at=None if effort == "full" else _DNN_SKIP_AT, cuts=not tree_follows,
                                 iters=cfg["iters"] // 2 if tree_follows else iters,
                                 settle=S._CUT_BELOW if effort == "auto" and not need_dual else None,
                                 beyond=(enough, _SETTLE_GAIN),
                                 top_eig=bounds.get("lambda1") if top_eig is None else top_eig,
                                 cut_below=cut_below, work=work)
        if state is not None and np.isfinite(val):  # (inf: a cut run outpaced by the anchored bound, unevaluated)
            bounds["dnn"] = val
            report.offer(min(bounds.values()))
            if late is not None:
                best_now = late.settle(val, best_now, bounds, report, k)
            if (np.isfinite(tried) and lower < S._CUT_BELOW * val
                    and fits(budget, "anchored", anchored_size)  # (deferred: see anchored())
                    and not (need_dual and iters is not None and budget is None
                             and _forecast_fails(A, k, x, min(val, best_now), cfg, seen))):
                # (a split bound's S, its caller's iterations, no time limit: the forecast first, as before the
                # DNN; on MLL's S at k = 120..200 the test at the DNN's value failed every time, 0.02-0.13 CPU s)
                anchored_above(val)
                report.offer(min(bounds.values()))
        info["dnn"] = dinfo
        return state, True
    if kkt is not None:
        state = kkt[1]
        info["dnn"] = {"init": "kkt", "iterations": 0, "exact_evaluations": 1, "lam": kkt[2]}
    return state, False
