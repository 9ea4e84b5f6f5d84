"""The dense path's last step: the DNN dual points carried between k, polished where the path's
certified ratio is still below its goal (:func:`polish_to_goal`).

Why: certify(k)'s own DNN (80 iterations and two rounds of 40 cuts) leaves CBCL at 0.970-0.978
for k = 10..21, and the anchored row sums at 0.976-0.978 there; the relaxation itself is far
tighter (effort "full": 0.9833 at k = 12, 0.9852 at k = 20, after 5 CPU s each).  A few more
cutting-plane rounds (:func:`.dual._cut_rounds`) on the dual point the path already holds at k,
stopped as soon as the DNN at k certifies the goal, close most of that gap for a tenth of the
cost, and each polished point's tangent (:func:`nspca_core.certificates.dnn.dnn_tangent`)
tightens the neighbouring k too, so the worst k is polished first and the others re-read.

Rigour: nothing new is proved here.  A polished point is another dual point ``(N, mu, w)`` of
the same covariance; its bound at every k is the rigorous ``lambda_max`` of its dual matrix plus
``mu k + sum_l w_l beta_k(c_l)`` (the path's ``finish_run`` carries it, and keeps the smaller).
"""

from __future__ import annotations

import numpy as np

from .anchor import anchored_branch_bound

# the polish aims at this certified ratio at each k it works on (a little above the path's 0.98, so
# that the tangents carried to the neighbours, slightly looser than at k itself, still reach it)
GOAL = 0.9805
# the second tier's goal (path.py): a little above the first, where the DNN bounds the path (CBCL: certify(k)'s own
# fresh DNN run reaches 0.982-0.983 at k = 65..71; a tier at 0.9835 with 5 iterations per k: the same, +10% CPU).
# 0.985 since certify(k)'s DNN renews its cuts (main 244e16f): it certifies CBCL k = 73 at 0.98442, where the path's
# tangent gave 0.98436 (above 0.983, so not polished); at 0.985 the tier closes it for no measurable CPU (802 vs 831
# units, the second tier skipping the k the first worked on)
GOAL2 = 0.985
# one polish step: a cutting-plane round of this many DNN iterations
ROUND_ITERS = 100
# "auto"'s polish rounds (path.py): each one DNN run renewing its cuts every REFRESH iterations (dnn_optimize(refresh=),
# Adam's moments kept) at the learning rate REFRESH_LR (relative to max |A_ij|), REFRESH_ITERS iterations a round
# (REFRESH = 0: rounds of ROUND_ITERS restarting the optimizer on fresh cuts, as before).  CBCL, one run: the first
# tier 4,698 -> 3,628 counted iterations (5.1 -> 4.3 CPU s, k = 13 now branched), the same ratios; 60 iterations a
# round: k = 54 / 55 stalled and went to branching (+2.3 s); lr 1e-3 (_LR_WARM) or 2e-3: slower
REFRESH = 10
REFRESH_LR = 3e-3
REFRESH_ITERS = 100
# a k whose two polish rounds in a row gained less than this (relative) is not polished again: the
# relaxation, not the optimizer, is the limit there
STALL = 5e-4


def polish_to_goal(uniq, pos, lows, upper, states, own, run, *, below: float, goal: float = GOAL,
                   budget: float, first_run: float, round_iters: int = ROUND_ITERS, branch=None,
                   where=None, refresh: int = 0, lr: float | None = None, worked: set | None = None,
                   near: int = 0) -> float:
    """Polish the path's DNN dual points where the certified ratio ``lows / upper()`` is below
    ``below``: the worst k first (a fresh run there first when the path has no dual point at k:
    ``run(k)``, counted ``first_run`` iterations), then one cutting-plane round of ``round_iters``
    iterations at a time (``run(k, polish=True, goal=goal, rounds=1, iters=round_iters)``), the
    ratios read again after each, while the iterations counted stay within ``budget``.  Returns the
    iterations counted.

    ``branch(k, tau) -> float`` (optional; its counted cost in DNN iterations): where the DNN stalls
    below the goal (two rounds in a row each gaining less than a third of the gap left, or less than
    :data:`STALL`: small k, where the relaxation spreads its mass), one proof of ``OPT_k <= tau`` at
    ``tau = lows[k] / goal`` by another bound (the path's: the anchored row sums with branching),
    which lowers the bound at k itself when it succeeds.  ``where(k) -> bool`` (optional): only
    those k are polished.  ``refresh`` > 0: each round is one run renewing its cuts every ``refresh``
    iterations at the learning rate ``lr`` (passed to ``run``; :func:`.dual._cut_rounds`).  ``worked``
    (optional): filled with every k polished, branched or run fresh here.  ``near`` > 0 (with ``branch``): at a k whose
    nearest k polished within ``near`` stalled (:func:`stalled_near`) and whose ratio is more than
    :data:`FIRST_GAP` below the goal, the branching is tried first, once;
    where it does not bring the ratio to ``below``, the DNN rounds follow as at any k."""
    spent, small, dropped = 0.0, {}, set()
    # the k where the DNN stalled (or the branching closed first) / where a round gained (``near``: stalled_near);
    # the k branched first
    stalled, gained, first = set(), set(), set()
    while True:
        ratio = lows / upper()
        cand = [int(k) for k in uniq if ratio[pos[int(k)]] < below and int(k) not in dropped
                and (where is None or where(int(k)))]
        if not cand:
            return spent
        k = min(cand, key=lambda kk: ratio[pos[kk]])
        if (branch is not None and near and k not in first and ratio[pos[k]] < goal - FIRST_GAP
                and stalled_near(k, stalled, gained, near)):
            # the DNN stalled at the nearest k polished: the branching's proof first (CBCL k = 8, 11, 12 after
            # k = 10 stalled: a fresh run and two rounds each, 0.2-0.26 CPU s, gained nothing there); where it
            # does not reach the goal, the DNN rounds as elsewhere (and no second branching at the same k)
            first.add(k)
            if worked is not None:
                worked.add(k)
            spent += branch(k, float(lows[pos[k]]) / goal)
            if lows[pos[k]] / upper()[pos[k]] >= below:
                stalled.add(k)
            continue
        cost = first_run if k not in states else float(round_iters)
        if spent + cost > budget:
            return spent
        spent += cost
        if k not in states:
            run(k)
            if k not in states:  # nothing to polish (the run was not needed after all)
                dropped.add(k)
            elif worked is not None:  # (a fresh run like certify(k)'s left k below the goal: worked on too)
                worked.add(k)
            continue
        before = own[k][0]
        if worked is not None:
            worked.add(k)
        run(k, polish=True, goal=goal, rounds=1, iters=round_iters,
            **({"refresh": refresh, "lr": lr} if refresh else {}))
        left = before - lows[pos[k]] / goal  # what the DNN at k still had to gain
        if not own[k][0] < before - max(STALL * before, left / 3):
            # two rounds in a row, or one that gained less than a tenth of the gap left
            small[k] = small.get(k, 0) + (1 if own[k][0] < before - left / 10 else 2)
            if small[k] >= 2:
                dropped.add(k)
                stalled.add(k)
                if branch is not None and k not in first and lows[pos[k]] / upper()[pos[k]] < below:
                    spent += branch(k, float(lows[pos[k]]) / goal)
        else:
            small[k] = 0
            gained.add(k)
        if not np.isfinite(own[k][0]):
            dropped.add(k)


# stalled_near: how far (in k) a polished k's outcome predicts another's
NEAR = 2
# ... and only where the ratio is this far below the goal (CBCL k = 20 at 0.9801, next to a stalled k = 21: the
# branching cost 0.99 CPU s where a DNN round closes it)
FIRST_GAP = 1e-3


def stalled_near(k: int, stalled: set, gained: set, near: int = NEAR) -> bool:
    """Whether the nearest k polished within ``near`` of k (other than k) stalled: no round there
    gained enough (:func:`polish_to_goal`'s drop rule), or the branching closed it first -- the DNN's
    weak spot at small k spans neighbouring k (CBCL k = 8..13).  Ties count as stalled when one of the
    nearest stalled (CBCL k = 13 between a stalled 12 and a gaining 14: two rounds, then the
    branching).  Decides only which proof is tried first (the branching, then the DNN rounds);
    never a bound."""
    seen = [(abs(j - k), j in stalled) for j in stalled | gained if j != k and abs(j - k) <= near]
    if not seen:
        return False
    d = min(s[0] for s in seen)
    return any(st for dd, st in seen if dd == d)


def weak_branch(A, uniq, pos, lows, ub_cheap, pcfg, upper, weak, anchored, node_iters: int) -> dict:
    """The branching at the ``weak`` k where the anchored sums proved something: ``{k: bound}``
    (lowers ``ub_cheap`` in place; path.py's ``_anchored_and_branched``)."""
    branched = {}
    for k in sorted(weak & set(anchored)) if pcfg["branch_nodes"] else ():
        i = pos[k]
        # at the polish's goal, not at optimality: CBCL k = 6 / 7 0.21 / 0.28 CPU s for the proof of
        # optimality, 0.04 / 0.05 s for the goal's (certify(k) certifies 0.970 / 0.974 there)
        tau = float(lows[i]) / GOAL
        tb = (anchored_branch_bound(A, k, [tau], budget=pcfg["branch_nodes"], node_iters=node_iters)
              if tau < upper()[i] else None)
        if tb is not None:
            branched[k] = tb
            ub_cheap[i] = min(ub_cheap[i], tb)
    return branched
