"""lambda_1's proof put off (:func:`.cheap.lambda1_only` with ``late``): a one-k dense certificate whose answer x is
far below lambda_1 (issue 39, helper dense18: img24 k = 30..150, lambda_1's bound certifying 0.3-0.6 against the
anchored row sums' or the DNN's 0.97-0.99) proves it only where it could be the certificate's bound.

Why the dual side (:func:`.dual.dense_dual`) runs the same without it.  The proof is put off only at k >= 3 where
x's value ``lower`` is below ``_LATE_BELOW = 0.9`` of ``floor`` (the early block step's top Ritz value less 1e-10 of
it: a Rayleigh quotient, at most lambda_1 to rounding, so at most any proved bound on lambda_1), and the bounds
then held are lambda_1's alone (n above ``_D2_MAX_N``: no d = 2 bound; k >= 3: no exact pair bound).  In its place
the certificate holds ``inf`` while the dual side runs, and each rule that reads the bounds so far answers the same
for ``inf`` as for the proved value B >= floor > lower / 0.9: the gap tests (``lower < 0.996 best``, ``0.999``,
``0.975 best``) hold either way; the KKT start's (:func:`.dual_start._kkt_beaten`, ``est >= best (1 + 1e-6)`` or
``lower < 0.9 est``): with best's ratio below 0.9 the first implies the second, so both answer the second; the
anchored bisection's ceiling (``tb < best``, tb at most ``lower / 0.975``); the DNN's cut skip (``lower < 0.975
other``).  Where a bracket takes the minimum of a value v and the best bound so far (the anchored search above the
DNN's value, a split S's forecast), :meth:`Lambda1Late.settle` proves lambda_1 first where that minimum is not
below ``floor`` (else it is below B, the same float either way).  The DNN's screening start reads its own bracket
(:meth:`Lambda1Late._bracket`: ``floor`` where its term is already above the bracket's ``hi``, else the proof's
value, as before).  After the dual side (:func:`.single._certify_dense`): lambda_1's bound is left out where
another bound is below ``floor`` (it could not be the smallest), else proved: the same upper bound, the same kind.
"""

from __future__ import annotations

import numpy as np

from .bounds import cheap_bounds_at
from .dnn import _ritz, chol_lmax
from . import cheap
from .cheap import _EPS, Lambda1Only


class Lambda1Late(Lambda1Only):
    """:class:`.cheap.Lambda1Only` whose proof (the block steps after the early one, the Cholesky factorization at
    the guess) is made at the first :meth:`prove`, from the block where :func:`.cheap.lambda1_only` stopped
    (``state``: ``(w, U, steps done, steps at most)``): the same steps, the same floats as made at once.
    ``pending`` until then; ``floor``: at most lambda_1 (see the module docstring)."""

    def __init__(self, A: np.ndarray, d1: float, state: tuple):
        w = state[0]
        super().__init__(A, np.inf, 0.0, d1, float(w[0]))
        self._state, self.pending, self.failed = state, True, False
        self.floor = float(w[0]) * (1.0 - 1e-10)
        self.tol = 32.0 * A.shape[0] * _EPS * float(np.linalg.norm(A))  # (the proof's allowance, as lambda1_only's)
        self.__dict__.pop("bracket", None)  # (Lambda1Only's, bound to this instance: the class's method below)

    def bracket(self, hi: float, dmax: float, k: int) -> float:
        """:meth:`_bracket`, d1 None too (the eager route's bracket was the bound itself).  A method of the class, not
        the instance's attribute ``self.bracket = self._bracket`` it was: that bound method held the instance, so A
        (n x n) stayed in a reference cycle after the certificate until the garbage collector ran (issue 39, corpus30:
        the held memory grew ~20 MB a certificate on the 3,000 x 1,600 topic corpus, and its release cost page faults
        in the next one)."""
        return self._bracket(hi, dmax, k)

    def prove(self) -> bool:
        """The rest of :func:`.cheap.lambda1_only`'s proof, once; False where it fails (a Ritz value not above 0,
        or the factorization at the guess: lambda1_only then returned None and its caller took LAPACK's top
        eigenpairs, :meth:`top`)."""
        if not self.pending:
            return not self.failed
        self.pending = False
        A = self.A
        w, U, done, steps = self._state
        res = A @ U[:, 0] - w[0] * U[:, 0]
        allow = float(res @ res) / max(float(w[0] - w[1]), 1e-300)
        if not allow <= cheap._LIGHT_ACCEPT * abs(float(w[0])):  # (as lambda1_only's loop: the same steps)
            for _ in range(done, steps):
                w, U = _ritz(A, U, cheap._LIGHT_R)
                res = A @ U[:, 0] - w[0] * U[:, 0]
                allow = float(res @ res) / max(float(w[0] - w[1]), 1e-300)
                if allow <= cheap._LIGHT_ACCEPT * abs(float(w[0])):
                    break
        theta = float(w[0])
        slack = None
        if theta > 0:
            guess = theta + 4.0 * allow + 1e-12 * abs(theta)
            slack = chol_lmax(A, guess)
        if slack is None:
            self.failed = True
            return False
        self.w, self.theta = np.array([guess + slack]), theta
        return True

    def bounds_at(self, k: int) -> dict:
        """The bounds the eager route held from here: lambda_1's (proved), or where the proof fails LAPACK's top
        eigenpairs' (lambda_1 and the d = 1 bounds)."""
        spec = self if self.prove() else self.top()
        return cheap_bounds_at(spec.spectrum(), k)

    def settle(self, v: float, best: float, bounds: dict, report, k: int) -> float:
        """``min(v, best)`` as with lambda_1's bound held: proved first (into ``bounds``, offered to ``report``)
        where that minimum is not below :attr:`floor`; returns the best bound so far (``best`` or the new one)."""
        if "lambda1" in bounds and not np.isfinite(bounds["lambda1"]) and min(v, best) >= self.floor:
            bounds.update(self.bounds_at(k))
            return report.offer(min(bounds.values()))
        return best

    def finish(self, bounds: dict, k: int) -> None:
        """After the dual side: lambda_1's bound left out where another is below :attr:`floor`, else proved."""
        if "lambda1" not in bounds or np.isfinite(bounds["lambda1"]):
            return
        others = min((v for b, v in bounds.items() if b != "lambda1"), default=np.inf)
        if others < self.floor:
            del bounds["lambda1"]
        else:
            bounds.update(self.bounds_at(k))

    def _bracket(self, hi: float, dmax: float, k: int) -> float:
        """The screening start's lambda_1 as the eager route gave it, the early Ritz value first (where its term is
        at least ``hi``: the same minimum): then :meth:`.cheap.Lambda1Only._bracket` (d1 set) or the bound."""
        if k > 1 and self.floor > 0 and (self.floor - dmax) / (k - 1) >= hi:
            return self.floor
        if not self.prove():
            return float(self.top().w[0]) + self.top().tol  # (LAPACK's route's bracket: its spectrum's bound)
        if self.d1 is None:  # (the eager route had no bracket of its own: the screening start read the bound)
            return cheap_bounds_at(self.spectrum(), k)["lambda1"]
        return Lambda1Only._bracket(self, hi, dmax, k)
