"""Proofs of optimality (``effort="exact"``): branch and bound over supports.

A node fixes members ``I`` and non-members ``E`` of the support of an optimal x
(``F`` = the features not in ``E``); the root is the whole problem.  Every node is
asked one question: *can a global optimum with value above tau have its positive
support J inside this node* (``I ⊆ J ⊆ F``, ``|J| <= k``)?  ``tau`` is just above the
best feasible value (``lower (1 + tolerance / 2)``); when every leaf says no,
``OPT <= tau`` is proved and the best point is optimal to ``tolerance``.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace
import heapq
import time

import numpy as np
import scipy.linalg

from .anchor import AnchorRows, row_fixpoint, split_support
from ..operators.cov import Cov
from .dnn import DnnState, assemble_dual, chol_lmax, cut_rhs
from ..result import Certificate
from ._settings import _EPS, OPTIMAL_TOLERANCE, anchor_width
from .budget import BoundReport, Budget

# the exact mode's relative gap: optimal when upper - lower <= EXACT_TOLERANCE upper
EXACT_TOLERANCE = 1e-6

# a node's row-sum test gives up when the rows that could still be the anchor stopped
# disappearing for this many iterations (giving up is always safe: the node is split instead).
# Measured: CBCL k = 10 exact 179 nodes in 1.2 CPU s (no limit: 173 nodes, 2.4 s), MLL k = 10's
# tree on S 29 nodes, 0.26 s (25, 0.42 s)
_NODE_PATIENCE = 5


class _Nodes:
    """The node bounds of one branch and bound (dense A, one k, one dual point of the DNN).

    ``rowsums``: the anchored row sums of :func:`nspca_core.certificates.anchor.anchored_rowsum_test` with
    the node's members and non-members (:func:`nspca_core.certificates.anchor.node_sums`), every feature of
    F a possible anchor.  ``dnn``: the dual point's matrix ``M = A + N - mu J - sum w c c^T``
    restricted to F, with the right-hand sides of F.  ``leaf``: ``J = I`` exactly.
    """

    def __init__(self, A: np.ndarray, k: int, state: DnnState | None, narrow: bool = False):
        self.A, self.k, self.n = A, int(k), A.shape[0]
        # candidate lists as the anchored branch's (padded with each row's cap: sums stay upper bounds);
        # `narrow`: as the anchored bound's own (_settings.anchor_width), a third of the entries per pass
        width = anchor_width(self.n, k) if narrow else min(max(16 * (int(k) - 1), 96), self.n - 1)
        self.rows = AnchorRows(A, k, width=width)
        self.scale = max(float(np.abs(A).max()), 1e-300)
        self._dnn_seen: dict = {}  # F (as bytes) -> (value, u) of dnn_value: children keeping F reuse it
        if state is not None:
            self.M = assemble_dual(A, np.asarray(state.N, dtype=float), state.nu, state.C, state.w)
            self.mu = float(state.nu) / self.n
            self.C = None if state.C is None or state.w is None or not np.any(state.w > 0) else state.C
            self.w = None if self.C is None else state.w
            self.Mscale = float(np.linalg.norm(A) + np.linalg.norm(np.asarray(state.N, dtype=float))
                                + self.mu * self.n)
            if self.C is not None:
                self.Mscale += float(self.w @ (self.C ** 2).sum(axis=0))
        else:
            self.M = None

    def rowsum_refutes(self, tau: float, inc: np.ndarray, exc: np.ndarray, max_iter: int = 60) -> bool:
        """:meth:`rowsum_test` from ``r = 1``: True when the node is refuted."""
        return self.rowsum_test(tau, inc, exc, max_iter=max_iter)[0]

    def rowsum_test(self, tau: float, inc: np.ndarray, exc: np.ndarray, max_iter: int = 60,
                    r: np.ndarray | None = None) -> tuple[bool, np.ndarray | None]:
        """True when no stationary x with value > tau has its support in the node.

        Proof: as :func:`nspca_core.certificates.anchor.anchored_rowsum_test` with every feature of F a
        possible anchor (the largest entry j of x): ``rho = x / x_j`` satisfies ``(OPT - A_ll)
        rho_l = sum_{m in J \\ l} A_lm rho_m`` for l in J; row l's sum runs over ``I \\ l``
        exactly plus at most ``k - |I|`` (l in I) or ``k - 1 - |I|`` (l free) free members
        (:func:`nspca_core.certificates.anchor.node_sums`); ``rho_l = 0`` off F.  An iterate with ``r_l <
        1`` on all of F leaves no room for the anchor's ``rho_j = 1``.

        ``r`` (optional): the ratios a test of an ancestor node at a tau at most this one ended
        with (the returned second value): they bound ``rho`` here too, since this node's supports
        are among the ancestor's and a value above this tau is above the ancestor's, so the
        iteration starts there instead of at 1 (the children of a node start near its fixpoint).
        """
        rows, k = self.rows, self.k
        gap = (tau - rows.diag) - 4 * _EPS * (abs(tau) + np.abs(rows.diag))
        F = ~exc
        if not (gap[F] > 0).all():
            return False, r
        if k == 1:  # J = {l}: its value A_ll < tau for every l in F
            return True, r
        safe_gap = np.where(gap > 0, gap, 1.0)  # (rows off F are dead: r = 0 there)
        r0 = np.ones(self.n) if r is None else r
        return row_fixpoint(rows, safe_gap, r0, inc=inc, exc=exc, max_iter=max_iter, patience=_NODE_PATIENCE)

    def dnn_value(self, F: np.ndarray, tau: float | None = None):
        """``(refuted, value, u)``: the DNN bound of the node's features F and, when it does not
        refute ``tau``, its value and the top eigenvector of ``M_FF`` (where to branch).

        Proof: for x supported on F (unit, >= 0, at most ``kF = min(k, |F|)`` nonzeros),
        ``x^T A x = x^T M_FF x - x^T N_FF x + mu (1^T x)^2 + sum_l w_l (c_l^T x)^2 <=
        lambda_max(M_FF) + mu kF + sum_l w_l beta_kF(c_l restricted to F)`` (the DNN proof of
        :mod:`nspca_core.certificates.dnn` on the principal submatrix).  ``lambda_max(M_FF)`` is proved by a
        Cholesky factorization at ``tau`` minus the right-hand sides
        (:func:`nspca_core.certificates.dnn_lmax.chol_lmax`) or computed by LAPACK plus its tolerance
        (:func:`nspca_core.certificates.dnn_lmax.lmax_upper`).
        """
        key = F.tobytes()
        if key in self._dnn_seen:  # a member added keeps F: the same matrix, the same bound
            val, u = self._dnn_seen[key]
            return (tau is not None and val <= tau), val, u
        idx = np.flatnonzero(F)
        kF = min(self.k, idx.size)
        rhs = self.mu * kF * (1 + 2 * _EPS)
        if self.C is not None:
            rhs += float(self.w @ cut_rhs(self.C[idx], kF)) * (1 + 4 * self.w.size * _EPS)
        MF = self.M[np.ix_(idx, idx)]
        tol = 32.0 * idx.size * _EPS * (float(np.linalg.norm(MF)) + self.Mscale)
        if tau is not None:
            c = tau - rhs - 2 * tol
            slack = chol_lmax(MF.copy(), c)
            if slack is not None and c + slack + tol + rhs <= tau:
                return True, tau, None
        w, U = scipy.linalg.eigh(MF, subset_by_index=[idx.size - 1, idx.size - 1], check_finite=False)
        u = np.zeros(self.n)
        u[idx] = U[:, 0]
        val = float(w[0]) + tol + rhs
        self._dnn_seen[key] = (val, u)
        return (tau is not None and val <= tau), val, u

    def leaf(self, inc: np.ndarray):
        """``J = I``: the values of stationary points ``A_II x_I = lambda x_I``, ``x_I > 0``.

        Returns ``(upper, x)``: an upper bound on every such lambda (eigenvalues of ``A_II``
        whose computed eigenvector could be one-signed within its perturbation bound
        ``tol / gap``, plus ``tol``; ``-inf`` when there is none) and the best feasible point
        among the nonnegative parts of those eigenvectors (or None)."""
        idx = np.flatnonzero(inc)
        B = self.A[np.ix_(idx, idx)]
        w, U = np.linalg.eigh(B)
        tol = 32.0 * idx.size * _EPS * float(np.linalg.norm(B)) + 4 * _EPS * self.scale
        upper, best_x, best_v = -np.inf, None, -np.inf
        for j in range(w.size):
            others = np.delete(w, j)
            gap = float(np.min(np.abs(others - w[j]))) if others.size else np.inf
            delta = 4 * tol / gap if gap > 0 else np.inf
            u = U[:, j] * (1.0 if U[:, j].sum() >= 0 else -1.0)
            if u.min() >= -delta:  # possibly one-signed (any eigenvector of a cluster too)
                upper = max(upper, float(w[j]) + tol)
                # its nonnegative part is feasible (support inside I) and worth about w[j]: a
                # leaf whose eigenvector has (near-)zero entries is matched by a smaller support
                p = np.clip(u, 0.0, None)
                if p.max() > 0:
                    x = np.zeros(self.n)
                    x[idx] = p / np.linalg.norm(p)
                    v = float(x @ self.A @ x)
                    if v > best_v:
                        best_v, best_x = v, x
        return upper, best_x


class _NoClock:
    """The budget of a branch and bound limited by its node count alone (``time_limit=None``):
    every node fits, nothing is timed (no probe), the result depends on the input only."""

    clock = staticmethod(time.process_time)  # (only when progress is reported)

    def expired(self) -> bool:
        return False

    def fits(self, kind: str, size: float, times: float = 1.0) -> bool:
        return True

    @contextlib.contextmanager
    def step(self, kind: str, size: float):
        yield


def branch_and_bound(A: np.ndarray, k: int, x: np.ndarray, lower: float, state: DnnState | None, *,
                     upper: float = np.inf, time_limit: float | None = 60.0, tolerance: float = EXACT_TOLERANCE,
                     callback=None, max_nodes: int | None = None, clock=time.perf_counter,
                     budget: Budget | None = None, report: BoundReport | None = None,
                     dnn_hope: float | None = None):
    """Prove ``OPT <= lower (1 + tolerance / 2)`` by branch and bound over supports.

    Parameters
    ----------
    A : (n, n) psd, dense
    k : int
    x, lower : the best known feasible point and ``x^T A x``
    state : a DNN dual point (any; the node bounds restrict it, see :class:`_Nodes`)
    upper : a bound already proved (reported when the search stops early and is better)
    time_limit : seconds (of ``clock``: the wall clock by default); ignored when ``budget`` is
        given; None: no time limit (``max_nodes`` alone: the split bound's tree inside "auto" and
        "full", deterministic)
    callback : callable(done, total), optional
        After every 16 nodes (and at least every half second): nodes closed so far, closed +
        open; one that takes a keyword ``bound`` also gets the best global bound proved so far
        (:class:`.budget.BoundReport`).
    budget : :class:`.budget.Budget`, optional
        The caller's whole time limit: a node is started only when its predicted time fits.
    report : :class:`.budget.BoundReport`, optional
        The caller's report (replaces ``callback``).
    dnn_hope : float, optional
        Skip a node's DNN bound while the nearest ancestor's DNN value (computed) is above
        ``tau (1 + dnn_hope)``, and branch on that ancestor's eigenvector: where the dual point is
        weak no node's DNN bound refutes (MLL's screened set at k = 5: 6.5% above tau at the root,
        5.2% at depth 9, 11 eigendecompositions of 300 x 300 for nothing).  Proves the same: a
        node's bound is then its parent's (valid, the node's features are among the parent's).
        The row sums then keep as many candidates per row as the anchored bound's own
        (``_settings.anchor_width``, not ``max(16 (k - 1), 96)``): MLL k = 5 / 10 and golub-shaped
        k = 10 closed in the same 15 / 29 / 21 nodes, each row-sum pass ~1/3 the entries.

    Returns
    -------
    dict
        ``upper`` (proved), ``x``, ``lower`` (the best feasible point, possibly improved by a
        leaf), ``complete`` (every node closed), ``nodes``, ``open``.

    Notes
    -----
    A node ``(I, E)`` stands for "a global optimum x with value above tau has its positive
    support J with ``I ⊆ J``, ``J ∩ E = ∅``".  The nodes partition the supports (a free
    feature is split into "in J" and "not in J"), so refuting every leaf refutes
    ``OPT > tau``.  A node is refuted by the row sums with members and non-members, by the DNN
    bound on F (both in :class:`_Nodes`), or, at ``|I| = k`` or ``F = I`` (then ``J = I``), by
    the eigenvalues of ``A_II`` with a one-signed eigenvector (an optimal x is stationary on
    its support, ``A_JJ x_J = OPT x_J`` with ``x_J > 0``).  A leaf's point better than the
    best raises ``lower`` and tau: refutations made at a smaller tau stay valid (they exclude
    more).

    The tree's bound at any moment: every optimum above tau lies in an open node, and an open
    node's optimum is at most its parent's DNN value (the node's features are a subset of its
    parent's, :meth:`_Nodes.dnn_value`), so ``OPT <= max(tau, open bounds, unresolved leaves)``
    (and ``<= upper``).  Nodes are taken largest bound first (ties: deepest, then members
    first), so that bound falls as the search goes and a run stopped at its limit returns it,
    not the root's.
    """
    n = A.shape[0]
    if budget is None:
        budget = _NoClock() if time_limit is None else Budget(time_limit, clock)
    if report is None:
        report = BoundReport(callback)
    report.offer(upper)
    nodes = _Nodes(A, k, state, narrow=dnn_hope is not None)
    tau = lower * (1 + tolerance / 2) if lower > 0 else 0.0
    if lower <= 0:  # A = 0 on the diagonal: OPT <= lambda_max <= trace = 0
        return {"upper": max(float(np.trace(A)) * (1 + 4 * n * _EPS), 0.0), "x": x, "lower": lower, "complete": True,
                "nodes": 0, "open": 0}
    # (-bound, -depth, order, members, non-members): a heap, the node of largest bound on top
    # (each entry also carries the row-sum ratios its parent's test ended with: _Nodes.rowsum_test,
    # and the nearest ancestor's DNN eigenvector and value: dnn_hope)
    heap = [(-np.inf, 0, 0, np.zeros(n, dtype=bool), np.zeros(n, dtype=bool), None, None, np.inf)]
    pushed = 1
    done = 0
    complete = True
    unresolved: list = []  # upper bounds of leaves that could not be closed
    last_report = budget.clock()

    def tree_bound() -> float:
        b = max([tau, -heap[0][0] if heap else -np.inf] + unresolved)
        return min(b, upper)

    while heap:
        if max_nodes is not None and done >= max_nodes:
            complete = False
            break
        size = float(n - int(heap[0][4].sum())) ** 3
        if budget.expired() or (done and not budget.fits("node", size)):
            complete = False
            break
        negb, depth, _, inc, exc, r_parent, u_anc, v_anc = heapq.heappop(heap)
        r_node = r_parent
        parent = -negb
        done += 1
        with budget.step("node", size):
            ninc = int(inc.sum())
            F = ~exc
            if ninc == k or int(F.sum()) == ninc:
                ub, xl = nodes.leaf(inc)
                if xl is not None:
                    vl = float(xl @ A @ xl)
                    if vl > lower:
                        x, lower = xl, vl
                        tau = lower * (1 + tolerance / 2)
                if ub > tau:  # a leaf above tau whose eigenvector is not provably one-signed
                    unresolved.append(ub)
                refuted = True
            else:
                refuted, r_node = nodes.rowsum_test(tau, inc, exc, r=r_parent)
                if (not refuted and nodes.M is not None and u_anc is not None and dnn_hope is not None
                        and v_anc > tau * (1 + dnn_hope)):
                    val, u = np.inf, u_anc  # (the ancestor's: no DNN bound here could refute)
                elif not refuted and nodes.M is not None:
                    refuted, val, u = nodes.dnn_value(F, tau)
                    u_anc, v_anc = u, val
                elif not refuted:
                    val, u = np.inf, None
        if not refuted:
            free = F & ~inc
            if u is not None:
                score = np.where(free, u * u, -1.0)
            else:
                score = np.where(free, np.diag(A), -np.inf)
            c = int(np.argmax(score))
            bound = min(parent, val)
            (inc2, exc1), (inc1, exc2) = split_support(inc, exc, c)
            heapq.heappush(heap, (-bound, depth - 1, pushed, inc2, exc1, r_node, u_anc, v_anc))
            heapq.heappush(heap, (-bound, depth - 1, pushed + 1, inc1, exc2, r_node, u_anc, v_anc))
            pushed += 2
        now = budget.clock()
        if done % 16 == 0 or now - last_report >= 0.5:
            last_report = now
            report.progress(done, done + len(heap), tree_bound())
    open_bound = tree_bound()
    complete = complete and not heap and not unresolved
    ub = tau if complete else open_bound
    report.progress(done, done + len(heap), max(ub, lower))
    return {"upper": float(max(ub, lower)), "x": x, "lower": float(lower), "complete": complete,
            "nodes": done, "open": len(heap)}


def _finish_exact(cert: Certificate, bb: dict | None, k: int, t0: float, tolerance: float,
                  cov: Cov) -> Certificate:
    """The exact mode's certificate: the start's bounds plus ``exact(branch)``, optimal at
    ``tolerance``."""
    bounds = dict(cert.bounds)
    info = dict(cert.info)
    x, lower = cert.x, cert.lower
    if bb is not None:
        bounds["exact(branch)"] = bb["upper"]
        if bb["lower"] > lower:
            x, lower = bb["x"], cov.quad(bb["x"])
            info["lower_source"] = "exact(branch)"
        info["nodes"], info["open_nodes"] = bb["nodes"], bb["open"]
    else:  # (the split bound's tree on S records its own)
        info.setdefault("nodes", 0)
        info.setdefault("open_nodes", 0)
    kind = min(bounds, key=bounds.get)
    ub = max(float(bounds[kind]), lower)
    gap = (ub - lower) / ub if ub > 0 else 0.0
    info["gap"] = float(gap)
    info["from_k"] = {"upper": int(k), "lower": int(k)}
    optimal = bool(ub - lower <= tolerance * abs(ub))
    return Certificate(upper_bound=ub, kind=kind, lower=float(lower), ratio=float(lower / ub) if ub > 0 else 1.0,
                       optimal=optimal, tolerance=tolerance, seconds=time.perf_counter() - t0,
                       bounds=bounds, probabilistic=cert.probabilistic and kind == cert.kind, k=int(k), x=x,
                       info=info)


assert EXACT_TOLERANCE <= OPTIMAL_TOLERANCE


def take_branch(cov: Cov, S: np.ndarray, certS: Certificate, bb: dict, x, lower: float, info: dict):
    """S's certificate with what a branch and bound on S proved (its bound and its point), and the
    whole problem's feasible point raised to that point's when it is better (unless ``x`` was
    given).  Returns ``(certS, x, lower)``."""
    if not (bb["upper"] < certS.upper_bound or bb["lower"] > certS.lower):
        return certS, x, lower
    xb = np.asarray(bb["x"], dtype=float)
    certS = replace(certS, upper_bound=min(certS.upper_bound, bb["upper"]), lower=bb["lower"], x=xb,
                    kind="exact(branch)" if bb["upper"] < certS.upper_bound else certS.kind)
    if info.get("lower_source") != "given":
        xf = np.zeros(cov.n)
        xf[S] = xb
        vf = cov.quad(xf)
        if vf > lower:
            x, lower = xf, vf
            info["lower_source"] = "exact(branch)"
    return certS, x, lower
