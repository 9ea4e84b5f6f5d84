"""The anchored row-sum bound: a combinatorial certificate that is tight at small k.

For a support J of size k the best value ``max x^T A_JJ x`` over unit ``x >= 0`` is
the Perron root of ``A_JJ`` when ``A_JJ >= 0``, and the Collatz–Wielandt row sums
bound it.  Taken naively (every row, its k largest entries) that bound is loose;
taken *from the optimum's largest entry* and iterated it is often within a few
percent of OPT for small k, exactly where the doubly-nonnegative relaxation is
weakest (it spreads mass over many small entries there).

The theorem (proof in :func:`anchored_rowsum_test`) needs only the stationarity of
an optimal x on its own support, so it holds for any symmetric A.
"""

from __future__ import annotations

import contextlib
import contextvars

import numpy as np

from . import _settings as _S
from . import thin_contract
from .anchor_sums import (_SEL32_ABS, _SEL32_REL, _joint_ratio, _joint_sums, _plain_sums,  # noqa: F401
                          _prods32, _sum_up, _top32, _top_sums32, vals32_of)  # (re-exported: the row sums' former home)
from .anchor_sums import node_free, node_lists, select_block

_EPS = np.finfo(float).eps
# AnchorRows: rows of P partitioned at a time (corpus30)
_ROWS_BLOCK = 128


class AnchorRows:
    """Per-row candidate lists of ``P = (A_+)`` with a zero diagonal, for one k.

    Row ``l`` keeps its ``width`` largest off-diagonal entries (values and
    columns) and ``cap_l``, the next largest value: every entry not kept is
    ``<= cap_l``, so a sum over kept entries, padded with ``cap_l``, bounds a
    sum over any entries of the row from above.
    """

    def __init__(self, A: np.ndarray, k: int, width: int | None = None):
        A = np.asarray(A, dtype=float)
        n = A.shape[0]
        self.n, self.k = n, int(k)
        self.diag = np.diag(A).copy()
        m = max(self.k - 1, 0)
        if width is None:
            width = max(_S._ANCHOR_WIDTH_PER_K * m, 48)
        L = min(max(int(width), m), n - 1)
        self._A = A  # (P = (A)_+ with a zero diagonal made where read: :attr:`P`, the exact mode's node sums)
        self.whole_rows = 0  # (rows selected by the whole row's partition: :func:`.anchor_sums.select_block`)
        if L < n - 1:
            # by blocks of rows of P (no n x n int64 partition nor P held: issue 39, corpus30), each row's L + 1
            # largest preselected where a sample of the row allows it (corpus32: select_block, which argues why any
            # order of a row's idx and any choice among tied columns keeps every bound an upper bound)
            self.idx, self.cap, self.vals = np.empty((n, L), dtype=np.intp), np.empty(n), np.empty((n, L))
            for a in range(0, n, _ROWS_BLOCK):
                self.whole_rows += select_block(A, a, min(n, a + _ROWS_BLOCK), L, self.idx, self.cap, self.vals)
        else:
            # all off-diagonal entries are kept (the zero diagonal is a harmless extra candidate)
            self.idx = np.broadcast_to(np.arange(n), (n, n)).copy()
            self.cap = np.zeros(n)
            self.vals = self.P.copy()
        self.cap32 = self.cap.astype(np.float32)  # (the selections' float32 caps, cast once: _top32)
        self.vals32 = vals32_of(self.vals)  # (inside anchor_sums.float32_products only: the float32 products)
        self.m = m
        self.first = None  # (:func:`_first_sums`: the last test's start and its sums)

    @property
    def P(self) -> np.ndarray:
        """``(A)_+`` with a zero diagonal (n x n), made at the first read and kept."""
        P = self.__dict__.get("_P")
        if P is None:
            P = np.maximum(self._A, 0.0)
            np.fill_diagonal(P, 0.0)
            self.__dict__["_P"] = P
        return P


def anchored_rowsum_test(rows: AnchorRows, tau: float, r=None, max_iter: int = 200,
                         tol: float = 1e-9, patience: int = 10, branch_budget: int = 0):
    """Decide whether ``OPT <= tau``; returns ``(proved, r)``.

    ``OPT = max{x^T A x : x >= 0, ||x|| = 1, ||x||_0 <= k}``.  ``proved=True``
    is a proof that ``OPT <= tau``; ``False`` proves nothing (the test is
    conservative).  ``r`` is an upper bound on the ratios ``x_l / max_i x_i``
    of an optimal x under the hypothesis ``OPT > tau``: pass it back as ``r`` to
    a later call with a larger ``tau`` (that hypothesis is then stronger, so the
    bound still holds) to start where this one stopped.

    Proof.  Suppose ``OPT > tau`` and let x attain OPT (S_k^n is compact), J
    its positive support (``|J| <= k``) and j an index of its largest entry.
    On the open set ``{y in R^J : y > 0, ||y|| = 1}`` x is a local maximum of
    ``y^T A_JJ y``, so ``A_JJ x_J = OPT x_J``.  With ``rho_l = x_l / x_j in
    (0, 1]`` (``rho_j = 1``), row l of this reads ``(OPT - A_ll) rho_l =
    sum_{m in J, m != l} A_lm rho_m <= sum_{m in J \\ l} (A_lm)_+ rho_m``.
    Let ``r >= rho`` on J (initially ``r = 1``).  For l with ``tau > A_ll``,
    ``OPT - A_ll > tau - A_ll > 0`` and ``J \\ l`` has at most ``k - 1``
    members, so ``rho_l <= s_l / (OPT - A_ll) <= s_l / (tau - A_ll)`` with
    ``s_l`` the sum of the ``k - 1`` largest of ``(A_lm)_+ r_m`` over
    ``m != l``; the first inequality is strict unless ``s_l = 0``, which
    would force ``rho_l <= 0``.  Hence ``r_l <- min(r_l, s_l/(tau - A_ll))`` is
    again an upper bound on ``rho`` on J, and by induction so is every
    iterate; moreover an updated ``r_l`` is *strictly* above ``rho_l``.  If
    an iterate has ``r_l < 1`` for every l, then ``rho_j < 1`` for the
    anchor j, contradicting ``rho_j = 1``.  So ``OPT <= tau``.

    ``s_l`` is computed from the row's kept candidates padded with its cap
    (:class:`AnchorRows`), an upper bound on the exact sum; rounding is
    covered by inflating ``s_l`` by ``(k + 4) eps`` relatively and shrinking
    ``tau - A_ll`` by ``4 eps (|tau| + |A_ll|)``.
    """
    n, m = rows.n, rows.m
    r = np.ones(n) if r is None else np.array(r, dtype=float)
    gap = _gaps(rows, tau)
    if not (gap > 0).all():
        return False, r  # a row with A_ll >= tau: x = e_l itself may be optimal; nothing proved
    if m == 0:  # k = 1: s_l = 0 < gap, every rho_l < 1
        return True, np.zeros(n)
    ok, r = row_fixpoint(rows, gap, r, max_iter=max_iter, tol=tol, patience=patience)
    if ok:
        return True, r
    if branch_budget > 0:
        return _branch_all(rows, tau, r, branch_budget)[:2]
    return False, r


def row_fixpoint(rows: AnchorRows, gap: np.ndarray, r: np.ndarray, *, inc: np.ndarray | None = None,
                 exc: np.ndarray | None = None, anchor: int | None = None, max_iter: int = 200,
                 tol: float = 1e-9, patience: int | None = None,
                 qs: np.ndarray | None = None, lists=None) -> tuple[bool, np.ndarray]:
    """The anchored row-sum iteration, written once (the plain test, its branches, and the exact
    mode's nodes, :mod:`nspca_core.certificates.exact`): ``r <- min(r, s(r) (1 + (k + 4) eps) / gap)``.

    ``r`` bounds the ratios ``rho = x / x_j`` of an optimal x above tau (proof in
    :func:`anchored_rowsum_test`); ``gap = tau - A_ll`` (rounded down; only its entries on live
    rows are used).  Without a node (``inc`` None) ``s_l`` is the ``k - 1`` largest products of
    row l; with one (members ``inc``, non-members ``exc``) :func:`node_sums`, and ``r = 0`` on
    the dead rows (non-members, or rows with no room left).  Refuted when no live row can be the
    anchor: ``r < 1`` everywhere, or, with ``anchor = j`` given (the hypothesis "j is the
    largest entry", ``r_j = 1`` kept), ``r_j < 1``.  Stops unrefuted when an iteration moves r by
    at most ``tol``, after ``max_iter``, or (``patience``) when the rows still able to be the
    anchor stopped disappearing for that many iterations.  Returns ``(refuted, r)``.
    ``qs`` (no node): the joint test's sum sizes, one per hypothesis, ``gap`` then ``n x len(qs)``
    (:func:`anchored_joint_test`).  ``lists`` (a node): :func:`node_sums`' narrowed lists, the same sums.
    """
    k = rows.k
    inflate = 1.0 + (k + 4) * _EPS
    node = inc is not None
    if node:
        ninc = int(inc.sum())
        q = np.where(inc, k - ninc, k - 1 - ninc)
        dead = exc | (q < 0)
        fixed = inc | exc
        blocked = fixed[rows.idx]
        r = r.copy()
        r[dead] = 0.0
    if anchor is not None:
        r[anchor] = 1.0
    gapT = None if qs is None else np.ascontiguousarray(gap.T)
    alive_hist, top_hist = [], []
    for it in range(max_iter):
        if qs is not None:  # the joint test (:func:`anchored_joint_test`): the largest ratio over its hypotheses
            ratio = _joint_ratio(rows, r, qs, gapT, inflate)
        else:
            ratio = node_sums(rows, r, inc, blocked, q, lists, fixed) if node else (
                _first_sums(rows, r) if it == 0 else _plain_sums(rows, r))
            ratio *= inflate  # (in place, the sums' own array: s * inflate / gap)
            ratio /= gap
        if not node and anchor is None and thin_contract.due(it) and thin_contract.contracts(ratio, (
                lambda u: _joint_ratio(rows, u, qs, gapT, inflate, False)) if qs is not None else thin_contract.plain(
                rows, gap, inflate)):
            return True, np.minimum(r, ratio)  # (the joint and plain tests' contraction: .thin_contract, its block)
        new = np.minimum(r, ratio)
        if node:
            new[dead] = 0.0
        if anchor is not None:
            if new[anchor] < 1.0:
                return True, new
            new[anchor] = 1.0
        change = float((r - new).max())
        r = new
        if anchor is None:
            live = r >= 1.0
            alive = int(np.count_nonzero(live))
            if alive == 0:
                return True, r
            alive_hist.append(alive)
            if patience is not None:
                top_hist.append(float(ratio[live].max()))
        # stop early (giving up is always safe) when converged, when the candidate anchors have
        # stopped disappearing for `patience` iterations, or when the largest ratio among them
        # heads to a limit above 1
        lim = _aitken(top_hist)
        if change <= tol or (patience is not None and anchor is None and it >= 2 * patience
                             and alive_hist[-patience - 1] == alive) \
                or (len(top_hist) >= _GIVE_UP_SAME + 2 and len(set(alive_hist[-_GIVE_UP_SAME:])) == 1
                    and lim > 1.0 + _GIVE_UP_ABOVE):
            break
    return False, r


def _first_sums(rows: AnchorRows, r: np.ndarray) -> np.ndarray:
    """:func:`_plain_sums` of a test's start ``r`` (a copy: the caller scales it in place), computed once for every
    test started from the same ratios on the same rows: the sums depend on the rows and r only (not on tau), so
    where r is bit for bit the last start's, its sums are the ones :func:`_plain_sums` would return.  Tests share a
    start in a bisection after every proof (the next test starts from the same failure's ratios), the first
    test and the one at ``1.001 lower`` (both from the all-ones start), and a hinted bisection's two tests
    (:func:`_hinted`)."""
    key = r.tobytes()
    if rows.first is not None and rows.first[0] == key:
        return rows.first[1].copy()
    s = _plain_sums(rows, r)
    rows.first = (key, s.copy())
    return s


def anchored_joint_test(rows: AnchorRows, ks, taus, r=None, max_iter: int = 200, tol: float = 1e-9,
                        patience: int = 10) -> tuple[bool, np.ndarray]:
    """Decide at once whether ``OPT_{ks[t]} <= taus[t]`` for every t (``OPT_i`` the optimum at
    sparsity i; every ``ks[t]`` in ``2..rows.k``); returns ``(proved, r)``: ``proved`` proves all of
    them, ``False`` proves nothing.  One test instead of one per sparsity (the split bound's aimed
    refinements, :func:`nspca_core.certificates.coupled._aimed`: 45 tests of 2-45 ms each at a
    77 x 7,070 gene matrix's k = 100, one joint test of 72 ms).

    Proof.  Suppose ``OPT_{k_t} > tau_t`` for some t; let x attain ``OPT_{k_t}``, J its positive
    support (``|J| <= k_t``), j an index of its largest entry and ``rho = x / x_j``.  As in
    :func:`anchored_rowsum_test` (stationarity on J), for every l in J with ``tau_t > A_ll``:
    ``rho_l <= s_l^{(k_t - 1)}(r) / (tau_t - A_ll)`` whenever ``r >= rho`` on J (``s^{(q)}`` the sum of
    the q largest ``(A_lm)_+ r_m`` over ``m != l``), and that is at most the largest of
    ``s_l^{(k_u - 1)}(r) / (tau_u - A_ll)`` over all u.  So ``r_l <- min(r_l, max_u ...)`` keeps
    ``r >= rho`` (rows off J need nothing: ``rho_l = 0``), by induction for every iterate, whichever t
    and x; an iterate with every ``r_l < 1`` contradicts ``rho_j = 1``.  Hence no t has
    ``OPT_{k_t} > tau_t``.  Every row needs ``tau_u > A_ll`` for every u (else nothing is proved).

    The returned ``r`` (not proved) bounds the ratios of every such x; it starts a later joint test
    whose every hypothesis ``(k', tau')`` has one here with ``k' <= k_t`` and ``tau' >= tau_t`` (an x
    optimal at k' above tau' satisfies the same row inequalities, with fewer members, above
    ``tau_t``).  Rounding as :func:`anchored_rowsum_test` (``rows.k >= max ks`` sets the inflation)."""
    ks = np.asarray(ks, dtype=int)
    taus = np.asarray(taus, dtype=float)
    r = np.ones(rows.n) if r is None else np.array(r, dtype=float)
    if ks.size == 0:
        return True, r
    gap = np.stack([_gaps(rows, float(t)) for t in taus], axis=1)
    if not (gap > 0).all() or ks.min() < 2 or ks.max() > rows.k:
        return False, r
    ok, r = row_fixpoint(rows, gap, r, max_iter=max_iter, tol=tol, patience=patience, qs=ks - 1)
    return ok, r


def joint_blockers(rows: AnchorRows, ks, taus, r: np.ndarray) -> np.ndarray:
    """After a joint test that failed (:func:`anchored_joint_test`, its ``r``): the hypotheses (indices
    t) that keep a row able to be the anchor, each row with ``r_l >= 1`` naming the t of its largest
    ratio.  Only chooses what to try next; proves nothing."""
    ks = np.asarray(ks, dtype=int)
    alive = np.flatnonzero(r >= 1.0)
    if alive.size == 0 or ks.size == 0:
        return np.zeros(0, dtype=int)
    live = _RowsOf(rows, alive)  # (those rows alone: the same floats as the whole table's rows there)
    gap = np.stack([_gaps(live, float(t)) for t in taus], axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = _joint_sums(live, r, ks - 1) / np.where(gap > 0, gap, np.nan)
    ratio = np.where(np.isnan(ratio), np.inf, ratio)
    return np.unique(np.argmax(ratio, axis=1))


class _RowsOf:
    """The rows ``sel`` of an :class:`AnchorRows` (their candidates, values, caps and variances; ``r`` still
    indexed by feature): what :func:`.anchor_sums._joint_sums` and :func:`_gaps` read.  Each row's sums are its
    own (its products, selection, sort and prefix sums do not read other rows), so they are the whole table's
    rows ``sel`` float for float.  Issue 39: :func:`joint_blockers` reads the rows still able to be the anchor
    only (4-9 of MLL's 483-602 at k = 120..150), the whole table was ~5% of those certificates."""

    def __init__(self, rows: AnchorRows, sel: np.ndarray):
        self.n, self.k, self.m = int(sel.size), rows.k, rows.m
        self.idx, self.vals, self.cap, self.cap32 = rows.idx[sel], rows.vals[sel], rows.cap[sel], rows.cap32[sel]
        self.vals32 = None if rows.vals32 is None else rows.vals32[sel]
        self.diag = rows.diag[sel]


# the plain test gives up when the largest ratio left among the candidate anchors heads to at
# least 1 + _GIVE_UP_ABOVE (:func:`_aitken`, the candidates unchanged over _GIVE_UP_SAME iterations).
# Chosen (at 5e-3 over 3, see below) on the 48 plain tests the one-k certificates of CBCL
# (k = 5..100), MLL (10, 30, 50) and LRS (5, 10, 50) run: every proof kept, their iterations
# 834 -> 456 (the failed tests' 645 -> 267): the same bounds for about half the row-sum passes
# (issue 39).  (Not giving up by `patience` while it heads below 1 proved 2 more, a tighter CBCL
# k = 50, at 1.2x the cost there.)
# The exact mode's nodes too: on the 141 node tests of MLL k = 5, 10 (auto) and CBCL k = 5, 10
# (exact) every refutation kept, 1,090 -> 607 iterations; the same trees (29, 29, 11, 173 nodes),
# MLL k = 10 250 -> 191 ms, CBCL k = 10 exact 1.04 -> 0.92 s
# (5e-3 over 3 unchanged iterations lost a proof on test_path_monotone's 120 x 40 data at k = 5:
# 2e-2 over 5 keeps it, CBCL k = 50 / 30 at the same cost)
_GIVE_UP_ABOVE = 2e-2
_GIVE_UP_SAME = 5


def _aitken(top: list) -> float:
    """Where the plain test's largest ratio among the candidate anchors (``top``, one per iteration;
    nonincreasing since r only decreases) is heading: Aitken's extrapolation of its last three
    values, the last value when it stopped moving, ``-inf`` when it accelerates, NaN before three
    values (every comparison False).  Only decides when to give up, which proves nothing."""
    if len(top) < 3:
        return np.nan
    d1, d2 = top[-3] - top[-2], top[-2] - top[-1]
    if d2 <= 0.0:
        return top[-1]
    c = d2 / d1 if d1 > 0 else np.inf
    return top[-1] - d2 * c / (1.0 - c) if c < 1.0 else -np.inf


def _gaps(rows: AnchorRows, tau: float) -> np.ndarray:
    """``tau - A_ll``, shrunk by ``4 eps (|tau| + |A_ll|)`` to cover rounding."""
    return (tau - rows.diag) - 4 * _EPS * (abs(tau) + np.abs(rows.diag))


def _branch_all(rows: AnchorRows, tau: float, r: np.ndarray, budget: int, node_iters: int = 40):
    """Refute every anchor still standing in ``r`` (``r_j >= 1``) by :func:`_refute_anchor` (at most
    ``node_iters`` row-sum iterations per node).  Returns ``(proved, r, nodes used)``."""
    gap = _gaps(rows, tau)
    if not (gap > 0).all():
        return False, r, 0
    used = 0
    lists = node_lists(rows, r)  # (every node's ratios are at most r: the same sums from narrower lists)
    for j in np.flatnonzero(r >= 1.0):
        ok, u = _refute_anchor(rows, gap, r, int(j), budget - used, max_iter=node_iters, lists=lists)
        used += u
        if not ok:
            return False, r, used
    return True, r, used


def anchored_rowsum_bound(A: np.ndarray, k: int, lower: float, upper: float, *, steps: int = 12,
                          rel_tol: float = 2e-4, rows: AnchorRows | None = None,
                          max_iter: int = 200):
    """The smallest ``tau`` in ``[lower, upper]`` (to ``steps`` bisections, or until the
    bracket is ``rel_tol`` relative) with ``OPT <= tau`` proved by
    :func:`anchored_rowsum_test`, or None when not even ``upper`` is proved.

    ``lower`` should be a feasible value (``<= OPT``, so nothing below it can be
    proved); ``upper`` a bound already known.  Bisection is geometric; every
    test at a larger ``tau`` than an unproved one starts from that one's ratios.
    """
    if rows is None:
        rows = AnchorRows(A, k)
    lo, hi = float(lower), float(upper)
    if not (np.isfinite(hi) and hi > 0):
        return None
    ok, _ = anchored_rowsum_test(rows, hi, max_iter=max_iter)
    if not ok:
        return None
    if lo <= 0 or lo >= hi:
        return hi
    return anchored_bisection(rows, lo, hi, rel_tol, steps=steps, max_iter=max_iter)[0]


def anchored_bisection(rows: AnchorRows, lower: float, hi: float, rel_tol: float, *, steps: int = 12,
                       tau_lo: float = -np.inf, r_lo=None, narrow: float | None = None,
                       max_iter: int = 200) -> tuple[float, float, np.ndarray | None]:
    """The anchored bisection, written once (:func:`anchored_rowsum_bound`, the certificates'
    :func:`nspca_core.certificates.dual._anchored`): given ``hi`` proved, the smallest proved
    ``tau`` in ``[max(lower, tau_lo), hi]`` (geometric bisection to ``rel_tol`` relative, at most
    ``steps`` tests).  Returns ``(tau, tau_lo, r_lo)``: the proved bound and the last failure
    (``tau_lo``, its ratios ``r_lo``: valid for every test above it, :func:`anchored_rowsum_test`;
    unchanged when nothing failed; ``r_lo`` None is the all-ones start).

    ``lower`` is a feasible value (nothing below it can be proved).  A narrow bracket above an
    untested feasible value (``tau_lo < lower``, ``hi <= lower (1 + 100 rel_tol)``): the value is
    likely (near) optimal, so the test at ``lower (1 + narrow / 2)`` comes first (``narrow``,
    default ``rel_tol``; one test instead of ~log2(hi / lower / rel_tol)); if it fails, its ratios
    start the bisection."""
    lo = max(float(lower), tau_lo)
    if lo <= 0 or lo >= hi:
        return hi, tau_lo, r_lo
    tau = lo * (1.0 + (rel_tol if narrow is None else narrow) / 2)
    if tau_lo < lower and tau < hi <= lo * (1.0 + 100 * rel_tol):  # (a probe above hi: never, hi is proved)
        ok, r = anchored_rowsum_test(rows, tau, r_lo, max_iter=max_iter)
        if ok:
            return tau, tau_lo, r_lo
        lo, r_lo = tau, r
    hints = _HINTS.get()
    key = (rows.k, rel_tol, steps)
    if hints is not None:
        out = _hinted(rows, lo, hi, rel_tol, steps, r_lo, hints.get(key, ()), max_iter)
        if out is not None:
            return out
    lo0, hi0, proofs, fails, ok = lo, hi, 0, 0, True
    for _ in range(steps):
        if hi <= lo * (1.0 + rel_tol):
            break
        mid = float(np.sqrt(lo * hi))
        ok, r = anchored_rowsum_test(rows, mid, r_lo, max_iter=max_iter)
        if ok:
            hi = mid
            proofs += 1
        else:
            lo, r_lo = mid, r
            fails += 1
    if hints is not None and proofs and (fails == 0 or (fails == 1 and not ok)):  # (proofs, then <= 1 failure)
        hints.setdefault(key, []).append((lo0, hi0, proofs, fails))
    return hi, lo, r_lo


# anchored_bisection's hints (:func:`bisection_hints`): None outside such a block
_HINTS: contextvars.ContextVar = contextvars.ContextVar("anchored_bisection_hints", default=None)
# a hint applies to a bracket within this of its own (relative; only decides which tests run first)
_HINT_NEAR = 1e-9


@contextlib.contextmanager
def bisection_hints():
    """A block (one certificate: :func:`nspca_core.certificates.route.certify_thin`) inside which every
    :func:`anchored_bisection` whose loop was proofs only, then at most one failure, leaves its bracket and that
    outcome path, and a later loop at the same sparsity on a bracket within :data:`_HINT_NEAR` of it, on any rows,
    tests the two midpoints where that path would end first (:func:`_hinted`) instead of the whole path.  Issue
    39: the eager split route's grown screen (3x the 2 k screen, the same feasible point, so the same bracket up to
    the feasible value's rounding) took the 2 k screen's path at every k measured, 5 tests of ~0.03-0.1 CPU s each
    on 900-1,400 rows; now 2.  Nothing is kept after the block."""
    token = _HINTS.set({})
    try:
        yield
    finally:
        _HINTS.reset(token)


def _hinted(rows: AnchorRows, lo: float, hi: float, rel_tol: float, steps: int, r_lo, hints, max_iter: int):
    """:func:`anchored_bisection`'s loop from ``(lo, hi, r_lo)`` where another loop on a bracket within
    :data:`_HINT_NEAR` of it took ``p`` proofs and then ``f <= 1`` failures (``hints``: ``(lo, hi, p, f)`` each):
    the midpoints that path gives on this bracket (the loop's own floats: ``sqrt(lo hi)``, hi moving down p times,
    the loop's stopping rule holding right after the path, else no hint), the p-th (g) tested from ``r_lo``, then
    the next (the failure's, f = 1) from ``r_lo``; the loop's answer on that path (``(g, f's midpoint, its
    ratios)``, or ``(g, lo, r_lo)``) when g is proved and the next is not, else None (the caller runs the loop).

    Valid: g is proved by its test, started from ``r_lo`` (valid above lo: every midpoint is), and the failure's
    ratios are valid above it (:func:`anchored_rowsum_test`).  Never looser than the loop, and the same floats
    where the loop's tests above g all prove: the loop's midpoints are a function of its bracket and its outcomes,
    so while its tests prove it tests this path's midpoints, reaching g and then the failure's with the start
    ``r_lo`` untouched: the same two calls as here, the same answer.  If one of its tests above g fails instead,
    at some m > g, its bound is above m: looser than this one."""
    for lo_h, hi_h, p, f in hints:
        if not (abs(lo - lo_h) <= _HINT_NEAR * lo and abs(hi - hi_h) <= _HINT_NEAR * hi):
            continue
        mids, h = [], hi
        for _ in range(p + f):
            if len(mids) >= steps or h <= lo * (1.0 + rel_tol):
                break
            mids.append(float(np.sqrt(lo * h)))
            h = mids[-1] if len(mids) <= p else h
        last_lo = mids[-1] if f and len(mids) == p + f else lo
        if len(mids) != p + f or not (len(mids) >= steps or h <= last_lo * (1.0 + rel_tol)):
            continue  # (this bracket's loop would not end on that path)
        g = mids[p - 1]
        if not f:
            ok, _ = anchored_rowsum_test(rows, g, r_lo, max_iter=max_iter)
            return (g, lo, r_lo) if ok else None
        ok, r = anchored_rowsum_test(rows, mids[p], r_lo, max_iter=max_iter)  # (the failure first: its ratios
        if ok:  # start g's test, valid above mids[p] < g and below r_lo entrywise)
            return None
        ok, _ = anchored_rowsum_test(rows, g, r, max_iter=max_iter)
        if not ok:  # (the give-up rules: then g from r_lo, the loop's own call)
            ok, _ = anchored_rowsum_test(rows, g, r_lo, max_iter=max_iter)
        return (g, mids[p], r) if ok else None
    return None


def node_sums(rows: AnchorRows, r: np.ndarray, inc: np.ndarray, blocked: np.ndarray,
              q: np.ndarray, lists=None, fixed: np.ndarray | None = None) -> np.ndarray:
    """Upper bounds on ``sum_{m in J \\ l} (A_lm)_+ r_m`` for supports J with ``inc`` ⊆ J and
    no excluded member: the included part exactly, plus the ``q_l`` largest free products
    (kept candidates, padded with the row's cap).

    ``q`` takes at most two values (``k - |I|`` on the members, one less elsewhere): the
    ``max q`` largest are found once (one partition, no sort) and the rows taking one fewer drop
    the smallest of them (zeroed, not subtracted: every sum is one of nonnegative terms, whose
    rounding the caller's ``(k + 4) eps`` covers in any order).  ``lists`` (``fixed``: ``inc`` or excluded): the
    same floats from narrowed lists made at ratios at or above r (:func:`.anchor_sums.node_free`)."""
    qmax = int(q.max(initial=0))
    if lists is not None and qmax > 0 and (r <= lists.r0).all():
        incl = inc.nonzero()[0]
        return rows.P[:, incl] @ r[incl] + node_free(rows, lists, r, fixed, blocked, q, qmax)
    prod = _prods32(rows, r)  # (float32 products: the floats of the float64 products' cast, one pass fewer)
    prod[blocked] = 0.0
    free = np.zeros(rows.n)
    if qmax > 0:
        top = _top32(prod, qmax, rows.cap32)  # (selected in float32, summed up in float64)
        free = np.where(q >= qmax, _sum_up(top), 0.0)
        fewer = (q == qmax - 1) & (q > 0)
        if fewer.any():
            t = top[fewer]
            t[np.arange(t.shape[0]), np.argmin(t, axis=1)] = 0.0
            free[fewer] = _sum_up(t)
    incl = np.flatnonzero(inc)
    return rows.P[:, incl] @ r[incl] + free


def _refute_anchor(rows: AnchorRows, gap: np.ndarray, r0: np.ndarray, j: int, budget: int,
                   max_iter: int = 40, tol: float = 1e-9, lists=None) -> tuple[bool, int]:
    """Branch and bound refuting "``OPT > tau`` with j the largest entry of an optimal x".

    A node fixes members ``I`` (``j in I``) and non-members ``E`` of the support J.
    The row inequalities of :func:`anchored_rowsum_test` then sharpen: ``rho_l = 0``
    for l in E, row l's sum runs over ``I \\ l`` exactly plus the largest
    ``k - |I|`` (l in I) or ``k - 1 - |I|`` (l not in I) free products, and only
    the anchor's ``rho_j = 1`` has to be contradicted (``r_j < 1``).  Children of a
    node split the free column with the largest ``(A_jc)_+ r_c``: in J, or not.
    Every leaf refuted refutes the anchor.  Returns ``(refuted, nodes used)``;
    running out of ``budget`` nodes refutes nothing.
    """
    n, k = rows.n, rows.k
    inc0 = np.zeros(n, dtype=bool)
    inc0[j] = True
    stack = [(inc0, np.zeros(n, dtype=bool), r0)]
    nodes = 0
    while stack:
        inc, exc, r = stack.pop()
        nodes += 1
        if nodes > budget:
            return False, nodes
        refuted, r = row_fixpoint(rows, gap, r, inc=inc, exc=exc, anchor=j, max_iter=max_iter, tol=tol, lists=lists)
        if refuted:
            continue
        free = ~(inc | exc)
        if int(inc.sum()) >= k or not free.any():
            return False, nodes  # a whole support survives: nothing to split
        score = np.where(free, rows.P[j] * r, -1.0)
        c = int(np.argmax(score))
        if score[c] <= 0.0:
            return False, nodes
        (inc2, exc1), (inc1, exc2) = split_support(inc, exc, c)
        stack.append((inc1, exc2, r))
        stack.append((inc2, exc1, r))
    return True, nodes


def split_support(inc: np.ndarray, exc: np.ndarray, c: int):
    """The branching rule of every support tree (here and :mod:`nspca_core.certificates.exact`):
    a node (members ``inc``, non-members ``exc``) splits on the free feature c into "c in J" and
    "c not in J", which partition its supports.  Returns ``((inc + c, exc), (inc, exc + c))``."""
    inc2 = inc.copy()
    inc2[c] = True
    exc2 = exc.copy()
    exc2[c] = True
    return (inc2, exc), (inc, exc2)


def anchored_branch_bound(A: np.ndarray, k: int, taus, *, budget: int = 400,
                          rows: AnchorRows | None = None, node_iters: int = 40):
    """The first ``tau`` of ``taus`` (try them ascending) that :func:`anchored_rowsum_test`
    proves with branching (:func:`_refute_anchor`), or None.

    ``budget`` caps the branch-and-bound nodes over all the tests together.  The
    candidate lists keep ``max(16 (k - 1), 96)`` entries per row (padded with the row's
    cap, :class:`AnchorRows`: every node sum stays an upper bound; on CBCL at k = 5..7
    the same proofs as full rows at a third of the time).  ``node_iters``: the row-sum
    iterations a node gets before it is split (stopping early proves nothing less at its
    children; CBCL k = 10..13 at the path's goal: refuted nodes took ~3 iterations, the split
    ones 40 each, 90% of the time).
    """
    n = np.asarray(A).shape[0]
    width = min(max(16 * (int(k) - 1), 96), n - 1)
    if rows is None or rows.idx.shape[1] < width:
        rows = AnchorRows(A, k, width=width)
    r = None
    for tau in taus:
        tau = float(tau)
        if not np.isfinite(tau) or budget <= 0:
            return None
        ok, r_plain = anchored_rowsum_test(rows, tau, r)
        if ok:
            return tau
        ok, _, used = _branch_all(rows, tau, r_plain, budget, node_iters)
        if ok:
            return tau
        budget -= used
        r = r_plain  # valid at any larger tau (a stronger hypothesis)
    return None


def restricted_refutes(A: np.ndarray, k: int, x: np.ndarray, tau: float) -> bool:
    """Whether the plain test (:func:`anchored_rowsum_test`) at ``tau`` on the principal submatrix
    ``A_RR`` fails, R = the support of x and the k rows outside it with the largest ``(A x)_l``:
    a cheap forecast (|R| <= 2k rows) that the test on all of A fails too.  On R every row sum
    is a sum over fewer columns, so the iterates on A stay above those on ``A_RR`` (the update is
    monotone in r and in the entries summed): where the test on A_RR cannot push every ratio
    below 1, the test on A does not either (up to the give-up rules of :func:`row_fixpoint`).
    It only decides whether the full test is run; it never proves anything."""
    sup = np.flatnonzero(x > 0)
    y = A @ x
    y[sup] = -np.inf
    R = np.union1d(sup, np.argsort(-y, kind="stable")[: int(k)])
    proved, _ = anchored_rowsum_test(AnchorRows(A[np.ix_(R, R)], k), tau)
    return not proved
