"""A large-n path's runs' aimed refinements carried to the k between them
(:func:`~nspca_core.certificates.certify_path`, :mod:`.path_large`).

certify(k) sharpens its split bound where it binds: the anchored row sums prove ``B_S(i) <= a(i)`` at
the sparsities ``i = k - j`` of its binding terms, all at once (:func:`.anchor.anchored_joint_test`,
aimed by :func:`.coupled._aimed`).  A path's run proves those at its own k, and its carried curve
(:func:`.path_large.coupled_curve`) serves the k between runs with them; at such a k the binding terms
sit at other sparsities (``k - j``, not ``k_run - j``), where the run's ``B_S`` is only its DNN's
tangent or the bound at a larger sparsity.  :func:`carry_aimed` runs the same joint test on the run's
own screened set S at the sparsities k's terms need, and adds what it proves to the run's
``BS_at`` (``{i: B_S(i)}``).

Why that is valid at every k: a joint test proves ``OPT_i(A_SS) <= a(i)`` at each i it was asked
(the proof in :func:`.anchor.anchored_joint_test`), a statement about S alone that holds whatever k it
was aimed for; :func:`.path_large.coupled_curve` then uses ``B_S(i) = min`` of the run's bounds at
``i`` and every ``i' >= i`` (``OPT_i`` is nondecreasing in i: a point of sparsity i is feasible at
``i' >= i``), so a value proved at i also bounds every smaller sparsity, never a larger one.
"""

from __future__ import annotations

import numpy as np

from ..operators.cov import Cov
from . import _settings as _S
from ._settings import _EPS, anchor_cost
from .anchor import AnchorRows, anchored_joint_test
from .coupled import _COUPLED_AIM, _LADDER_GAIN, _meets, _truncated_all
from .cross import coupled_terms
from .dnn import dnn_tangent

# the carried refinements (carry_aimed): the first value aimed at sits _CARRY_AIM below the path's bound at
# k (relative); a failed test moves V half way up to that bound, until within _CARRY_REL of it, at most
# _CARRY_TESTS tests.  golub-shaped (72 x 7,129), the 7 k where the path was 0.004-0.04% looser than
# certify(k): one joint test on the nearest run's S proved 0.05-0.1% below certify(k) at each, 0.01-0.35 s
_CARRY_AIM = 5e-4
_CARRY_REL = 1e-4
_CARRY_TESTS = 4
# no tests where the floors (a feasible value at each sparsity) leave less than this to gain at k (relative)
_CARRY_GAIN = 2e-4
# the gate (carry_runs): tests only at k whose path bound is above certify(k)'s forecast bound (the runs' certified
# ratios interpolated in k) less this (relative; wide, as the forecast misses certify(k) by more than 1e-3 between
# runs: golub-shaped k = 156 was left 1.8e-4 looser at 1e-3).  Same run, load ~3-4: golub-shaped 1,736 -> 1,254 SVD
# units (looser 1 -> 1 of 199), dlbcl-shaped 1,445 -> 1,217 (0 -> 0).  A run's next test started where its last
# held (at most _CARRY_AIM below) left golub-shaped k = 166 and 171 looser: not kept
_CARRY_GATE = 5e-3
# no term is asked below this above a feasible value at its sparsity (S's answer cut to its i largest
# entries): the anchored bound proves ~0.2% above the optimum at best (coupled._AIM_SLACK)
_CARRY_SLACK = 2e-3
# where the forecast ratio is above certify(k)'s aim (coupled._COUPLED_AIM), the carry first asks the forecast
# itself, in at most this many tests between it and the aim, then the aim as before: certify(k) ends above its
# aim where its unrefined terms are (a 60 x 5,000 gene-shaped stand-in, _SMALL_FIRST off: k = 72..74 and 82
# certified 0.9750-0.9757, the carried tests proved the aim 0.9750 exactly, the path 0.001-0.07% looser)
_CARRY_SHARP_TESTS = 2
# where the value aimed at (the forecast) is proved at once, with _settings._LAZY_S: after the sweep over k, with
# what it left of the budget, a further test this far below it (relative), then half way back up, at most
# _CARRY_DEEP_TESTS tests.  A one-k certificate with S's bound at kS lazy searches its coupled bound from another
# cap on S's terms and lands up to ~0.1% from where the eager one does, either way (issue39_split8.txt): an 8 x 200
# case forced wide, certify(20) 0.005% below the forecast the carry proved (test_path_carry.py).  Golub-shaped,
# same load: inside the sweep 1,627 SVD units, 69 runs; after it 1,226 units, 59 runs, mean 0.9829 (lazy off: 1,230
# units, 60 runs, mean 0.9820; benchmarks/results/issue39_lazy9.txt)
_CARRY_DEEP = 1e-3
_CARRY_DEEP_TESTS = 2


def run_bs(run: dict, imax: int) -> np.ndarray:
    """``B_S(i)`` for ``i = 0..imax`` of one run (``run``: :func:`.single._certify_split`'s ``keep``),
    as :func:`.path_large.coupled_curve` takes them (see there): the run's S bound up to its ``kS``,
    ``lambda_max(A_SS)``, the exact pair optimum at 2, the variance sums, the DNN's tangents, the
    anchored bounds the run (and :func:`carry_aimed`) proved (``run["BS_at"]``), then the smallest at
    any larger sparsity."""
    certS, stS, dS = run["certS"], run["stS"], run["dS"]
    nS = dS.size
    BS = np.full(imax + 1, np.inf)
    BS[0] = 0.0
    BS[1:min(run["kS"], imax) + 1] = float(certS.upper_bound)
    lam1S = certS.bounds.get("lambda1")
    if lam1S is not None:
        BS[1:] = np.minimum(BS[1:], float(lam1S))
    if run.get("pair") is not None and imax >= 2:
        BS[2] = min(BS[2], float(run["pair"]))
    BS[1:] = np.minimum(BS[1:], np.cumsum(-np.sort(-dS)[:imax]) * (1 + 4 * nS * _EPS))
    lam = (certS.info.get("dnn") or {}).get("lam")
    if stS is not None and lam is not None:
        BS[1:] = np.minimum(BS[1:], dnn_tangent(float(lam), stS, nS, np.arange(1, imax + 1)))
    for i, v in (run.get("BS_at") or {}).items():  # the anchored bounds proved at single sparsities
        if 1 <= i <= imax:
            BS[i] = min(BS[i], float(v))
    return np.minimum.accumulate(BS[::-1])[::-1]


def run_terms(run: dict, BS: np.ndarray, BT: np.ndarray, k: int):
    """The terms of the run's split bound at k (unrounded, :func:`coupled_curve`): arrays ``(i, a, b,
    c)`` of S's sparsity ``i = k - j``, ``B_S(i)``, ``B_T(j)`` and the cross bound where the run's table
    covers ``(i, j)`` (``inf`` elsewhere: the term is then ``a + b``), over ``max(0, k - imax) <= j <=
    min(k, |T|)`` (``imax = BS.size - 1``).  ``BT``: made nondecreasing (:func:`coupled_curve`)."""
    imax = BS.size - 1
    nT = int(run["T"].size)
    j = np.arange(max(0, int(k) - imax), min(int(k), nT, BT.size - 1) + 1)
    i = int(k) - j
    c = np.full(j.size, np.inf)
    C = run.get("cross")
    if C is not None:
        inside = (i < C.shape[0]) & (j < C.shape[1])
        c[inside] = C[i[inside], j[inside]]
    return i, BS[i], BT[j], c


def coupled_curve(run: dict, BT: np.ndarray, ks: np.ndarray) -> np.ndarray:
    """The split bound of one run (:func:`.single._certify_split`'s ``keep``) at every k in ``ks``.

    ``OPT_k <= max_{j} B_S(k - j) + B_T(j)`` over ``max(0, k - |S|) <= j <= min(k, |T|)``, rounded
    up, where ``B_S(i)`` (``i <= |S|``) is the smallest of: the run's S bound ``B_S(k_run)`` when
    ``i <= k_run`` (``OPT`` on S is nondecreasing in the sparsity), ``lambda_max(A_SS)`` (the run's
    ``lambda1`` on S, any i), the exact pair optimum on S at ``i = 2`` (when the run computed it),
    the sum of the i largest variances in S (``lambda_max(A_JJ) <= tr A_JJ``), and the S part's
    DNN tangent at i (:func:`nspca_core.certificates.dnn.dnn_tangent`), and the anchored row sums the run proved
    at the sparsities where its own coupled bound bound (``run["BS_at"]``, with those
    :func:`carry_aimed` proved for other k); then ``B_S(i) <- min_{i' >= i}
    B_S(i')`` (a bound at a larger sparsity holds at a smaller one): :func:`run_bs`; ``BT[j]`` from
    :func:`.bounds._rest_curve` on the run's T, made nondecreasing the same way.

    Proof: as in :func:`.single._certify_split`, for x feasible at k with ``k_S = |supp x_S|``,
    ``k_T = |supp x_T|``, ``k_S + k_T <= k``: ``x^T A x <= B_S(k_S) + B_T(k_T)`` (triangle and
    Cauchy–Schwarz inequalities on ``||Y x_S + Y x_T||^2``), and by monotonicity ``B_S(k_S) <=
    B_S(k - k_T)`` (``k - k_T <= |S|`` need not hold: ``k_S <= min(|S|, k - k_T)``, so the term
    ``j = max(k_T, k - |S|)`` bounds it).  Each term is a sum of two rigorous bounds; the sum's
    rounding is covered by ``1 + 4 eps``.  Where the run computed the cross table of S and T
    (``run["cross"]``, :mod:`.cross`) and it covers ``(k - j, j)``, the term is ``lambda_max([[B_S,
    c], [c, B_T]])`` instead (``c = min(C, sqrt(B_S B_T))``): nondecreasing in both sparsities as
    the sum is, so the same dominating term bounds every split of the support.
    """
    ks = np.asarray(ks, dtype=int)
    BS = run_bs(run, int(min(run["dS"].size, ks.max())))
    BT = np.minimum.accumulate(np.asarray(BT, dtype=float)[::-1])[::-1]
    out = np.empty(ks.size)
    for n, k in enumerate(ks):
        i, a, b, c = run_terms(run, BS, BT, int(k))
        out[n] = float(np.max(term_values(a, b, c))) * (1 + 4 * _EPS) if i.size else np.inf
    return out


def term_values(a, b, c) -> np.ndarray:
    """The terms' values (``coupled_terms`` where a cross bound is finite, else ``a + b``)."""
    out = a + b
    fin = np.isfinite(c)
    if fin.any():
        out[fin] = coupled_terms(a[fin], b[fin], c[fin])
    return out


class CarryS:
    """One run's screened set for :func:`carry_aimed`: ``A_SS``, its answer on S, and the anchored
    candidate rows (built once, at the largest sparsity asked so far)."""

    def __init__(self, cov: Cov, run: dict):
        self.A = cov.submatrix(run["S"])
        x = run["certS"].x
        self.x = None if x is None else np.clip(np.asarray(x, dtype=float), 0, None)
        self.rows: AnchorRows | None = None

    def anchor_rows(self, i: int) -> AnchorRows:
        if self.rows is None or self.rows.k < i:
            self.rows = AnchorRows(self.A, i)
        return self.rows


def carry_aimed(held: CarryS, run: dict, BT: np.ndarray, k: int, goal: float, top: float,
                allowance: float, tests: int = _CARRY_TESTS) -> tuple[float, float]:
    """Joint anchored tests on the run's S (``held``) bringing the run's split bound at k to a value
    V: every refinable term (``3 <= i <= |S|``) above V is asked ``B_S(i) <= a_V(i)``
    (:func:`.coupled._meets`), all in one test (:func:`.anchor.anchored_joint_test`).  V starts at
    ``goal`` (raised to the terms no test can lower, and to where no term is asked below
    :data:`_CARRY_SLACK` above a feasible value at its sparsity) and, while tests fail, moves half
    way up to ``top`` (each test started from the last failure's ratios: a larger V asks larger values
    at fewer sparsities), until one holds, V is within :data:`_CARRY_REL` of ``top``, or
    ``tests`` (:data:`_CARRY_TESTS`) tests or the counted ``allowance`` are spent.  What is proved goes into
    ``run["BS_at"]`` (the smaller value where one is there).  Returns ``(V proved or inf, counted
    cost)``.  Valid at every k: see the module docstring; only the choice of V is heuristic."""
    nS = int(run["S"].size)
    BT = np.minimum.accumulate(np.asarray(BT, dtype=float)[::-1])[::-1]
    ii, a, b, c = run_terms(run, run_bs(run, int(min(nS, k))), BT, k)
    vals = term_values(a, b, c)
    ref = (ii >= 3) & (ii <= nS)
    if not ref.any() or held.x is None:
        return np.inf, 0.0
    fixed = float(vals[~ref].max(initial=0.0))
    low = _truncated_all(held.A, held.x, ii[ref].astype(int))
    floor = term_values((1 + _CARRY_SLACK) * low, b[ref], c[ref])
    V = max(goal, fixed, float(np.max(np.minimum(vals[ref], floor))))
    if V > top * (1 - _CARRY_GAIN):  # (the anchored bound near its precision: slow tests for little)
        return np.inf, 0.0
    spent, r_fail = 0.0, None
    for _ in range(tests):
        if not V < top * (1 - _CARRY_REL):
            break
        over = ref & (vals > V)
        if not over.any():
            return V, spent
        av = _meets(V, b[over], c[over])
        imx = int(ii[over].max())
        cost = anchor_cost(nS, imx)
        if not (av > 0).all() or spent + cost > allowance:
            break
        spent += cost
        ok, r = anchored_joint_test(held.anchor_rows(imx), ii[over], av, r_fail)
        if ok:
            if run.get("BS_at") is None:
                run["BS_at"] = {}
            for i, v in zip(ii[over], av):
                run["BS_at"][int(i)] = min(run["BS_at"].get(int(i), np.inf), float(v))
            return V, spent
        r_fail = r
        V += (top - V) / 2
    return np.inf, spent


def carry_ladder(held: CarryS, run: dict, BT: np.ndarray, k: int, low: float, V: float, allowance: float,
                 tests: int = _CARRY_SHARP_TESTS) -> tuple[float, float]:
    """certify(k)'s ladder of aims (:func:`.coupled._ladder`) carried to k: from a proved value ``V`` of the run's
    split bound at k, :func:`carry_aimed` at each rung ``low / a`` below V (``a`` from the aim
    ``coupled._COUPLED_AIM``, each rung halving the ratio's gap to 1), between the rung and V (``tests`` tests: a
    failed rung bisected toward V), until a rung fails, the gap is below ``coupled._LADDER_GAIN`` or the counted
    ``allowance`` is spent.  Returns ``(the smallest value proved, counted cost)``.  Valid as :func:`carry_aimed`
    is; only the values asked follow certify(k)'s."""
    a, spent = _COUPLED_AIM, 0.0
    while low > 0 and 1 - a >= _LADDER_GAIN:
        a = 1 - (1 - a) / 2
        W = low / a
        if not W < V * (1 - _CARRY_REL):
            continue  # (a rung proved already)
        W, cost = carry_aimed(held, run, BT, k, W, V, allowance - spent, tests)
        spent += cost
        if not W < V:
            break
        V = W
    return V, spent


def carry_runs(cov: Cov, uniq: np.ndarray, pos: dict, lows: np.ndarray, upper, keeps: dict, rest, curve: np.ndarray,
               ks, budget: float, own: dict | None = None) -> tuple[float, int]:
    """At each k of ``ks`` (largest first), :func:`carry_aimed` on the run (``keeps``: ``(run k, screen)``
    -> its ``keep``, screen 0 certify(k)'s own, 1 the smaller one) whose carried curve is smallest there,
    aimed :data:`_CARRY_AIM` below the path's bound at k (``upper()``), or lower: at the value
    certifying the ratio forecast for certify(k) (``own``, run k -> its certificate: their certified
    ratios interpolated in k, at most certify(k)'s aim ``coupled._COUPLED_AIM``); each run's curve
    carried again into ``curve`` (in place) after a proof; while the counted costs (the tests',
    :func:`.anchor` passes, and each screened set's submatrix and candidate rows) fit in ``budget``;
    only at k whose bound is above the forecast bound less :data:`_CARRY_GATE` (where the path is far
    below it, certify(k) is not expected to do better).
    Returns ``(spent, k improved)``.

    Why: certify(k) refines its binding terms at its own sparsities; the runs' curves carry theirs,
    so between runs the path stayed up to 0.04% above certify(k) (golub-shaped: 7 of 199 k).  Valid
    as :func:`carry_aimed` and :func:`coupled_curve` are."""
    if not keeps or budget <= 0:
        return 0.0, 0
    m = cov.X.shape[0] if cov.X is not None else cov.n
    curves = {kr: coupled_curve(keep, rest(keep), uniq) for kr, keep in keeps.items()}
    goal = np.full(uniq.size, np.inf)
    sharp = goal
    gate, peak = np.zeros(uniq.size), np.zeros(uniq.size)
    rk = sorted(k for k in (own or {}) if k in pos and own[k].upper_bound > 0 and lows[pos[k]] > 0)
    if rk:  # (the forecast only decides where the tests run and start)
        ratio = np.interp(uniq.astype(float), rk, [lows[pos[k]] / own[k].upper_bound for k in rk])
        goal = np.maximum(lows, 0.0) / np.minimum(ratio, _COUPLED_AIM)
        sharp = np.maximum(lows, 0.0) / ratio  # (the forecast above the aim: _CARRY_SHARP_TESTS)
        gate = np.maximum(lows, 0.0) / ratio * (1 - _CARRY_GATE)
        # (the larger certified ratio of the runs on either side of k: where above the aim, certify(k) may have
        # climbed its ladder of aims, coupled._ladder)
        rr = np.array([lows[pos[k]] / own[k].upper_bound for k in rk])
        at = np.searchsorted(np.asarray(rk, dtype=float), uniq.astype(float))
        peak = np.maximum(rr[np.clip(at - 1, 0, rr.size - 1)], rr[np.clip(at, 0, rr.size - 1)])
    held: dict = {}
    spent, better, deeper = 0.0, set(), []
    for k in sorted((int(k) for k in ks), reverse=True):
        i = pos[k]
        ub = upper()
        if not (lows[i] > 0 and np.isfinite(ub[i]) and ub[i] > gate[i]):
            continue
        start = min(float(ub[i]) * (1 - _CARRY_AIM), float(goal[i]))
        # the nearest run above k first (its S holds about certify(k)'s, its rest is smaller), then the
        # run whose curve is smallest at k
        above = [r for r in curves if r[0] > k]
        for kr in dict.fromkeys(([min(above)] if above else []) + [min(curves, key=lambda r: (curves[r][i], r))]):
            keep = keeps[kr]
            nS = int(keep["S"].size)
            setup = 0.0 if kr in held else float(nS) * nS * m + anchor_cost(nS, min(nS, k))
            if spent + setup + anchor_cost(nS, min(nS, k)) > budget:
                continue
            if kr not in held:
                if len(held) >= 2:  # (two screened sets held at a time: the k come in order, their runs too)
                    del held[next(iter(held))]
                held[kr] = CarryS(cov, keep)
            spent += setup
            V, cost = np.inf, 0.0
            if sharp[i] < start * (1 - _CARRY_REL):
                V, cost = carry_aimed(held[kr], keep, rest(keep), k, float(sharp[i]), start, budget - spent,
                                      _CARRY_SHARP_TESTS)
                spent += cost
            if not np.isfinite(V):
                V, cost = carry_aimed(held[kr], keep, rest(keep), k, start, float(ub[i]), budget - spent)
                spent += cost
            if np.isfinite(V) and peak[i] > _COUPLED_AIM:  # (a run beside k above the aim: certify(k)'s ladder)
                W, cost = carry_ladder(held[kr], keep, rest(keep), k, float(lows[i]), V, budget - spent)
                spent, V = spent + cost, min(V, W)
            if np.isfinite(V) and V <= min(float(goal[i]), float(sharp[i])) and _S._LAZY_S:
                deeper.append((k, kr, V))  # (the forecast proved at once: once more below it, after the sweep)
            if np.isfinite(V):
                curves[kr] = coupled_curve(keep, rest(keep), uniq)
                np.minimum(curve, curves[kr], out=curve)
                if upper()[i] < ub[i]:
                    better.add(k)
                break
    # where the forecast was proved at once, certify(k) may still end below it (its aimed search lands anywhere in
    # its last bracket, and a lazy S bound moves that bracket, _settings._LAZY_S): once more, _CARRY_DEEP below,
    # with what the sweep left of the budget (golub-shaped: inside the sweep these tests took the budget of 27 k
    # the sweep then left unimproved, and 10 more last runs followed; 1,120 -> 1,627 SVD units)
    for k, kr, V in deeper:
        keep, i = keeps[kr], pos[k]
        nS = int(keep["S"].size)
        setup = 0.0 if kr in held else float(nS) * nS * m + anchor_cost(nS, min(nS, k))
        if spent + setup + anchor_cost(nS, min(nS, k)) > budget:
            continue
        if kr not in held:
            if len(held) >= 2:
                del held[next(iter(held))]
            held[kr] = CarryS(cov, keep)
        spent += setup
        ub = upper()
        W, cost = carry_aimed(held[kr], keep, rest(keep), k, V * (1 - _CARRY_DEEP), V, budget - spent,
                              _CARRY_DEEP_TESTS)
        spent += cost
        if np.isfinite(W):
            np.minimum(curve, coupled_curve(keep, rest(keep), uniq), out=curve)
            if upper()[i] < ub[i]:
                better.add(k)
    return spent, len(better)
