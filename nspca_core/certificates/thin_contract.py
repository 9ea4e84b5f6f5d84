"""The joint anchored test's contraction proof (Collatz–Wielandt), in the thin route's blocks.

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

It only proves more, sooner: where the former iteration proves, the iterates up to the proof are the same; a test
that fails here failed there with the same iterates, hence the same ratios (which start the next joint test).  A
joint test proved here that the former iteration failed or gave up on lowers the aimed coupled bound (every later
test of :func:`.coupled._aimed` is below the value it proved), never raises it.  Only in the joint tests: S's own
bound (the plain tests of :func:`.thin_anchor.anchored`) stays the former float, so the thin route's choices that read
it (:func:`.route.eager_grown`, :func:`.route.certify_thin`'s dense route, :func:`.route.path_grown`) compare a
coupled ratio at least the former one with the former S ratio: a larger screen runs where it ran or less often, and
where it no longer runs the first screen's bound stands within the rule's slack of S's own ratio.  (In the plain
tests too it proved ~0.1% lower S bounds at about half their cost, but the grown screen's rule then read a higher S
ratio and grew where it had not: 60 x 2,500 genes k = 160 / 175 ~5x the CPU; benchmarks/results/issue39_thin34.txt.)

The check runs at iterations ``0, 1, 3, 7, ...`` (:func:`due`) of the joint tests inside a :func:`block`
(:func:`.route.certify_thin`, :func:`.route.path_grown`: the thin route's certificates and a path's thin k).
"""

from __future__ import annotations

import contextlib
import contextvars

import numpy as np

_ON: contextvars.ContextVar = contextvars.ContextVar("joint_contraction", default=False)


@contextlib.contextmanager
def block():
    """A block (one thin certificate) whose joint anchored tests also try :func:`contracts`."""
    token = _ON.set(True)
    try:
        yield
    finally:
        _ON.reset(token)


def due(it: int) -> bool:
    """Whether the contraction is tried at iteration ``it`` of a joint test: inside a :func:`block`, at 0, 1, 3, 7,
    15, ... (a failed test's extra evaluations about log2 of its iterations)."""
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
