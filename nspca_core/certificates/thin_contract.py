"""The anchored tests' contraction proof (Collatz–Wielandt), joint and plain, in the thin route's blocks.

The joint anchored test (:func:`.anchor.anchored_joint_test`: the split bound's aimed refinements,
:func:`.coupled._aimed`) iterates ``r <- min(r, G(r))`` from ratios ``r >= rho`` (``rho = x / x_j`` of an x optimal at
some sparsity ``k_t`` above its ``tau_t``, ``rho_j = 1``) and proves its hypotheses where every ``r_l < 1``.  From the
all-ones start that took ~30 iterations on the thin route's S (g72x1000 k = 65: 34 passes over 130 rows, ~a quarter of
the certificate), the iterates falling below 1 like ``mu^t`` with the map's growth rate ``mu`` just below 1.  Here a
second, sufficient condition (:func:`contracts`): ``G(u) < u`` wherever ``u > 0``, u the last ratios ``v = G(r)``
scaled to a largest entry of at most 1 (one more evaluation of G).  There it held at the third pass.

Proof.  Let ``T_l(y) = max_t t_l^(t)(y) / (tau_t - A_ll)``, ``t_l^(t)(y)`` the exact sum of the ``k_t - 1`` largest
``(A_lm)_+ y_m`` over all ``m != l``.  T is monotone and positively homogeneous (``T(c y) = c T(y)``, ``c >= 0``).  The
computed ``G(y)`` is at least ``T(y)`` for every ``0 <= y <= 1`` (the row sums rounded up, the gaps down, each kept
list padded with its cap: a product not kept is at most the cap where ``y <= 1``; :func:`.anchor.anchored_joint_test`).
Suppose some ``OPT_{k_t} > tau_t``: then ``rho <= T(rho)`` (stationarity on the optimum's support J; ``rho = 0`` off J;
the proof there), and ``r >= rho``, so ``v = G(r) >= T(r) >= T(rho) >= rho`` and ``rho <= c u`` with ``c = max(1, max
v)``; rows with ``u_l = 0`` have ``rho_l = 0``.  With ``G(u) < u`` where ``u > 0``, some ``lam < 1`` has ``T(u) <=
G(u) <= lam u`` there, and by induction ``rho <= c lam^s u`` for every s (``rho <= T(rho) <= T(c lam^s u) = c lam^s
T(u) <= c lam^(s+1) u``).  So ``rho = 0``, against ``rho_j = 1``: no hypothesis holds.

The plain test (:func:`.anchor.anchored_rowsum_test`: S's own anchored search, its bisections in
:func:`.thin_anchor.anchored` and :func:`.dual._anchored`) is the joint test of ONE hypothesis ``(k, tau)``: its
``r <- min(r, G(r))`` with ``G_l(y) = s_l(y) (1 + (k + 4) eps) / gap_l`` (``s_l``: the ``k - 1`` largest products,
kept lists padded with their caps, rounded up; ``gap = tau - A_ll`` rounded down, every entry positive or the test
stops unproved before iterating), so ``T_l(y) = t_l(y) / (tau - A_ll) <= G_l(y)`` for ``0 <= y <= 1`` as above, and
the proof is the one above with t fixed.  Its starts: the all-ones ratios, or a failure's ratios at some ``tau' <=
tau`` (a bisection's warm start: ``r >= rho`` for every x optimal above tau', hence above tau), so ``r >= rho``
holds where the check runs, whichever iteration.  ``G`` there is :func:`plain` (the same floats as the
iteration's own sums: the narrowed lists are the whole rows' float for float).

It only proves more, sooner: where the former iteration proves, the iterates up to the proof are the same; a test
that fails here failed there with the same iterates, hence the same ratios (which start the next test).  A joint
test proved here that the former iteration failed or gave up on lowers the aimed coupled bound (every later test of
:func:`.coupled._aimed` is below the value it proved), never raises it; a plain test proved so lowers S's own bound
(a bisection's proof moves its upper end down).  Not in the nodes of the exact mode or the anchored branches (a
member set or an anchor fixed: other maps), and only inside a :func:`block` (the thin route's certificates): every
other route keeps its floats.  The thin route's choices that read S's bound (:func:`.route.eager_grown`,
:func:`.route.certify_thin`'s dense route, :func:`.route.path_grown`) then read a higher S ratio (~+0.0008 on the
unseen gene sets), so their slack is 6e-3 (the issue's 0.005 plus that shift): with 5e-3 the grown screen ran where
it had not (60 x 2,500 genes k = 160 / 175 ~5x the CPU; benchmarks/results/issue39_thin34.txt, issue39_thin35.txt).

The check runs at iterations ``0, 1, 3, 7, ...`` (:func:`due`) of the joint and plain tests inside a :func:`block`
(:func:`.route.certify_thin`, :func:`.route.path_grown`: the thin route's certificates and a path's thin k).
"""

from __future__ import annotations

import contextlib
import contextvars

import numpy as np

_ON: contextvars.ContextVar = contextvars.ContextVar("joint_contraction", default=False)


@contextlib.contextmanager
def block():
    """A block (one thin certificate) whose joint and plain anchored tests also try :func:`contracts`."""
    token = _ON.set(True)
    try:
        yield
    finally:
        _ON.reset(token)


def due(it: int) -> bool:
    """Whether the contraction is tried at iteration ``it`` of a joint or plain test: inside a :func:`block`, at 0,
    1, 3, 7, 15, ... (a failed test's extra evaluations about log2 of its iterations)."""
    return _ON.get() and (it + 1) & it == 0


def contracts(v: np.ndarray, G) -> bool:
    """Whether ``u = v / max(1, max v)`` (``v``: the last ratios ``G(r)``, r the test's iterate) has ``G(u) < u``
    wherever ``u > 0`` (``G``: the test's computed ratio map, an upper bound of the exact one at vectors of at most
    1): a proof of the test's hypotheses (the module's docstring).  False proves nothing."""
    top = float(v.max(initial=0.0))
    if not np.isfinite(top) or top <= 0.0:
        return False
    u = v / top if top > 1.0 else v
    g = G(u)
    live = u > 0.0
    return bool((g[live] < u[live]).all())


def plain(rows, gap: np.ndarray, inflate: float):
    """The plain test's computed ratio map ``G(u) = s(u) inflate / gap`` (its iteration's floats), for
    :func:`contracts`.  The rows' narrowed lists (``rows.narrowed``, ``rows.narrow_last``: which lists the next sums
    read, never their floats) are left as the iteration left them, so its later passes choose as without this one;
    the dense rows' kept lists (``rows.plain_lists``) are only read."""
    from .anchor_sums import _plain_sums  # (anchor imports this module; anchor_sums imports neither)

    def G(u: np.ndarray) -> np.ndarray:
        held = getattr(rows, "narrowed", None), getattr(rows, "narrow_last", None)
        rows.lists_read_only = True  # (the dense rows' kept lists, :func:`.anchor_joint.plain_kept`: read only)
        try:
            g = _plain_sums(rows, u)
        finally:
            rows.narrowed, rows.narrow_last = held
            rows.lists_read_only = False
        g *= inflate
        g /= gap
        return g

    return G
