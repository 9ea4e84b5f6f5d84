"""Nonnegative-score PCA (Bajorski, Hall & Rubinstein, Statistica Sinica 2013).

Model: each sample ``Y_i = A X_i`` with ``X_i`` a p-vector of nonnegative,
uncorrelated, unit-variance sources and ``A`` an unknown p x p matrix.  The
nonnegative-score principal components (NSPCs) are ``W = Λ^{1/2} X`` with
``λ_j = ||A e_j||^2`` and the unit-norm profiles ``D = A Λ^{-1/2}``, so
``Y = D W``.  Whitening turns ``A`` into an unknown rotation; the estimator looks
for the rotation that makes every whitened score nonnegative.

Public: :func:`nonneg_scores` -> :class:`ScoresResult`.  The geometry of the
search (whitening, geodesics, directions, line search) is in
:mod:`nspca_core.scores.geometry`.
"""


from __future__ import annotations

import time
import warnings

import numpy as np

from .._common.params import check, in_choices
from .._common.validation import InputError, as_rng, check_int
from .geometry import (_a_rows, _assemble, _box_norm, _check_Y, _geodesic, _line_search,
                       _lp_ascent_model, _lp_model, _pairs, _paper_direction, _Path, _Problem,
                       _random_rotation, _reorthonormalize, _skew, _whiten, _z_rows)
from ..result import seed_param
from .result import ScoresResult
from .._common.params import SEED_NOT_GIVEN, renamed_seed

__all__ = ["nonneg_scores"]


# --------------------------------------------------------------------------- estimator

def nonneg_scores(Y, *, n_components=None, random_state=0, max_iter=500, tol=1e-9, selection="sum",
                  penalty=0.0, polish_iter=50, restarts=3, max_frames=200, callback=None,
                  seed=SEED_NOT_GIVEN) -> ScoresResult:
    """Nonnegative-score PCA: the rotation of the whitened data into the positive orthant.

    Parameters
    ----------
    Y : array of shape (n_samples, n_features)
        Data, rows are samples; used as given (not centered: the position of
        the cloud relative to the origin is the information).  Needs
        ``n_samples >= n_features`` and a nonsingular sample covariance.
    n_components : int or None
        ``r``; None means ``p`` (the paper's square model).  ``r < p`` whitens on
        the top r principal components first.
    random_state : int or numpy Generator
        Seeds the random escape rotations (the result is deterministic).
    max_iter : int
        Cap on geodesic steps of the negativity descent.
    tol : float
        ``S <= tol`` counts as zero negativity; also the step tolerance.
    selection : {"sum", "maximin", "none"}
        What to do once ``S = 0``: ``"sum"`` (default, the paper's suggestion)
        maximizes ``Σ_ij Z_ij`` over rotations keeping ``S = 0``; ``"maximin"``
        keeps lowering ``S*`` below zero (pushes the cloud off the faces);
        ``"none"`` stops at the first rotation with ``S = 0``.
    penalty : float
        ``a >= 0`` of the paper's appendix: minimize ``S*(B) + a·N(B)`` with
        ``N(B) = max(0, max_kl -Â_kl)/σ̄`` (``σ̄² = trace Σ̂/p``) so that Â
        becomes nonnegative too.  0 (default) is the plain estimator.
    polish_iter : int
        Cap on the steps of the ``selection="sum"`` phase.
    restarts : int
        Random escape rotations tried at a stationary point with ``S > 0``
        (the best rotation found is kept).
    max_frames : int
        Keep at most this many rotations in ``history_B`` (evenly thinned).
    callback : callable or None
        ``callback(done, total)`` after each step.

    Returns
    -------
    ScoresResult

    Raises
    ------
    InputError
        NaN/inf in ``Y``, more variables than samples, singular covariance,
        bad options.

    Notes
    -----
    Bajorski, Hall & Rubinstein, "Methodology and theory for nonnegative-score
    principal component analysis", Statistica Sinica 23 (2013) 963-988, §2-3.

    1. ``Σ̂ = 1/(n-1) Σ (Y_i - Ȳ)(Y_i - Ȳ)ᵀ``; ``Z_i(B) = B Σ̂^{-1/2} Y_i``.
    2. Minimize ``S*(B) = max_ij (-Z_ij)`` over rotations by descent along
       geodesics ``P(t) = e^{tL} P₀`` (``L`` skew, ``scipy.linalg.expm``) with a
       line search in t, from ``P₀ = I``.  Direction: the paper's single-entry
       ``L = Q - Qᵀ`` or its equal-rate combination over several active
       entries (:func:`_paper_direction`; "active" = within 1e-8·scale of the
       max, since the line search stops at crossings).  When that system is
       singular (more ties than ``r(r-1)/2`` or dependent gradients), or when
       the step jams (gains < 1% of S because another entry crosses at once,
       typical next to a sharp minimum), a trust-region LP over every entry
       within reach of the max (gaps included) gives the direction
       (:func:`_lp_model`); with all gaps zero it is the direction lowering every
       active entry at the best common rate.
       The line search brackets then runs bounded Brent on ``S*(e^{tL}B)``;
       its trial points use ``e^{tL}`` from one eigendecomposition of the skew
       ``L`` (:class:`_Path`, the same matrix to rounding), the accepted step
       uses ``expm``; B is re-orthonormalized (polar factor) after each step.
    3. A step that cannot lower ``S*`` (a flat spot, e.g. a point on a negative
       axis where the first-order direction vanishes, or a stationary point)
       gets a random rotation of angle 0.2, 0.4, 0.8, ... rad from the best B so
       far (``restarts`` times); the best B is kept.  With finite n, S = 0 may
       be unattainable (the sample sources are not exactly uncorrelated):
       then the answer is a local minimum of S (``status="local-minimum"``).
    4. At ``S = 0``, ``selection="sum"`` makes B̂ unique as the paper suggests:
       maximize the linear ``Σ_ij Z_ij = 1ᵀ B Σ_i U_i`` over rotations with every
       ``Z_ij >= -tol`` by feasible ascent: a trust-region LP (linearized
       objective, scores within reach of zero kept nonnegative to first order)
       for the direction, then the longest feasible improving step along the
       geodesic.  This is a local maximum of Σ Z on the feasible set.
    5. ``Â = Σ̂^{1/2} B̂ᵀ``, ``X̂_i = B̂ Σ̂^{-1/2} Y_i``, ``λ̂_j = ||Â e_j||²``,
       ``D̂ = Â Λ̂^{-1/2}``, ``Ŵ = Λ̂^{1/2} X̂``; components ordered by ``λ̂``.

    Forms only p x p and n x r matrices.
    """
    seed = renamed_seed(random_state, seed)  # `seed=`: deprecated name
    t_start = time.perf_counter()
    Y, r = _check_Y(Y, n_components)
    max_iter, polish_iter, restarts, max_frames = _check_options(
        max_iter, polish_iter, restarts, max_frames, tol, selection, penalty, callback)
    rng = as_rng(seed)

    cov, M, C = _whiten(Y, r)
    U = Y @ M.T
    a_scale = float(np.sqrt(np.trace(cov) / cov.shape[0]))
    prob = _Problem(U, C, float(penalty), a_scale)
    pairs = _pairs(r)
    history = _History(U, max_frames)
    history.record(np.eye(r), 0, 1)

    B, it, status, escapes = _lower_negativity(prob, U, pairs, rng, history, max_iter, polish_iter, restarts,
                                               tol, selection, callback)
    polish_steps = 0
    if status == "zero-negativity" and selection == "sum" and pairs[0].size > 0:
        B, polish_steps = _maximize_sum(U, C, B, prob, pairs, tol, polish_iter, history.record, it,
                                        callback, max_iter + polish_iter)
        it += polish_steps

    A, D, W, lambdas, Bo, Xs, order = _assemble(U, C, B)
    params = dict(n_components=r, random_state=seed_param(seed),
                  max_iter=max_iter, tol=tol, selection=selection, penalty=float(penalty),
                  polish_iter=polish_iter, restarts=restarts)
    info = dict(escapes=escapes, polish_steps=polish_steps, cov=cov,
                a_negativity=max(0.0, float(-A.min()) / a_scale))
    history.finish(B, it)
    return ScoresResult(
        A=A, D=D, W=W, lambdas=lambdas, B=Bo, negativity=max(0.0, float(-Xs.min())),
        converged=status != "max-iter", iterations=it, history=np.asarray(history.negativity),
        history_sum=np.asarray(history.mean_sum), history_phase=np.asarray(history.phase, dtype=int),
        history_B=tuple(history.frames), history_iter=np.asarray(history.frame_iter, dtype=int),
        sources=Xs, whitened=U, whitener=M, order=order, status=status,
        method="nspca-scores", params=params, seconds=time.perf_counter() - t_start, info=info)


def _check_options(max_iter, polish_iter, restarts, max_frames, tol, selection, penalty, callback):
    """The options of :func:`nonneg_scores`, checked; returns the four counts as ints."""
    counts = (check("max_iter", max_iter), check_int(polish_iter, "polish_iter", 0),
              check_int(restarts, "restarts", 0), check_int(max_frames, "max_frames", 2))
    check("tol", tol)
    in_choices(selection, "selection", ("sum", "maximin", "none"))
    if not (isinstance(penalty, (int, float)) and not isinstance(penalty, bool) and penalty >= 0
            and np.isfinite(penalty)):
        raise InputError(f"`penalty` must be a finite float >= 0; got {penalty!r}")
    check("callback", callback)
    return counts


class _History:
    """Per-step negativity, mean score sum and phase; rotations kept as at most ``max_frames``
    frames, thinned evenly (every other one dropped and the stride doubled when full)."""

    def __init__(self, U, max_frames):
        self.U, self.max_frames, self.stride = U, max_frames, 1
        self.negativity, self.mean_sum, self.phase = [], [], []
        self.frames, self.frame_iter = [], []

    def record(self, B, it, phase):
        Z = self.U @ B.T
        self.negativity.append(max(0.0, float(-Z.min())))
        self.mean_sum.append(float(Z.sum()) / Z.shape[0])
        self.phase.append(phase)
        if it % self.stride == 0:
            self.frames.append(B.copy())
            self.frame_iter.append(it)
            if len(self.frames) > self.max_frames:
                del self.frames[1::2], self.frame_iter[1::2]
                self.stride *= 2

    def finish(self, B, it):
        """The answer is always the last frame."""
        if not np.array_equal(self.frames[-1], B):
            self.frames.append(B.copy())
            self.frame_iter.append(it)


def _model_step(prob, pairs, B, Z, s, Ah, nneg, val, tau, scale):
    """LP model step (fallback): linearize every entry within reach of the max."""
    q = pairs[0].size
    reach = 2.0 * tau * 2.0 * np.abs(Z).sum(axis=1).max()
    ii, jj = np.nonzero(-Z >= s - reach)
    groups = [(1.0, -Z[ii, jj] - s, -_z_rows(Z, ii, jj, pairs))]
    if prob.penalty > 0 and nneg > 0:
        reach_a = 2.0 * tau * 2.0 * np.abs(Ah).sum(axis=1).max()
        kk, ll = np.nonzero(-Ah >= nneg - reach_a)
        groups.append((prob.penalty, -Ah[kk, ll] - nneg, -_a_rows(Ah, kk, ll, pairs)))
    ell, model = _lp_model(groups, q, tau)
    if ell is None or model >= -1e-12 * scale:
        return 0.0, val, None
    L = _skew(ell, B.shape[0], pairs)
    t, new_val = _line_search(prob.value, L, B, val, tau * np.sqrt(2.0) * _box_norm(ell), np.pi)
    return t, new_val, L


def _lower_negativity(prob, U, pairs, rng, history, max_iter, polish_iter, restarts, tol, selection, callback):
    """Phase 1: lower ``S*`` (plus the penalty) by geodesic steps, escaping flat spots by random
    rotations of growing angle from the best rotation so far.  Returns (B, steps, status, escapes)."""
    r, q = U.shape[1], pairs[0].size
    scale = max(1.0, float(np.abs(U).max()))
    B = np.eye(r)
    it = 0
    status = "max-iter"
    best_B, best_val = B.copy(), prob.value(B)
    escapes = 0
    t_guess = 0.1
    zero_target = -np.inf if selection == "maximin" else tol
    # tie band: the line search stops at crossings, so ties are the rule; entries
    # within ``delta`` of the max (the line search's accuracy) count as tied
    delta = 1e-8 * scale
    tau = 0.1                                      # trust radius of the LP model step

    while it < max_iter:
        if q == 0:                                 # r = 1: nothing to rotate
            status = "zero-negativity" if prob.value(B) <= tol else "local-minimum"
            break
        Z, s, Ah, nneg = prob.parts(B)
        val = s + prob.penalty * max(nneg, 0.0)
        if s <= zero_target and (prob.penalty == 0 or nneg <= tol):
            status = "zero-negativity"
            break
        ii, jj = np.nonzero(-Z >= s - delta)
        t, new_val, L = 0.0, val, None
        if prob.penalty == 0:
            ell = _paper_direction(Z, ii, jj, pairs)
            if ell is not None:
                L = _skew(ell, r, pairs)
                t, new_val = _line_search(prob.value, L, B, val, t_guess, np.pi)
        # jamming (a new crossing right after the step) or no paper direction: the LP
        # model step over every entry within reach, shrinking its trust radius
        if t == 0 or val - new_val < 0.01 * (val - max(zero_target, 0.0)):
            tau_try = max(tau, 4 * t) if t > 0 else tau
            for _ in range(12):
                t2, v2, L2 = _model_step(prob, pairs, B, Z, s, Ah, nneg, val, tau_try, scale)
                if L2 is not None and v2 < new_val:
                    t, new_val, L = t2, v2, L2
                    tau = max(t2 / np.sqrt(2.0), 1e-12)
                    break
                if L2 is not None and t2 > 0:
                    break                          # a model step exists but the paper step was better
                tau_try *= 0.25
                if tau_try < 1e-13:
                    break
        it += 1
        if t > 0 and val - new_val > 1e-15 * scale:
            B = _reorthonormalize(_geodesic(L, B, t))   # the accepted step: expm
            t_guess = max(2 * t, 1e-6)
            tau = min(max(tau, t), 1.0)
            phase = 1
        else:
            # flat spot or local minimum: keep the best, try a random rotation
            if val < best_val:
                best_B, best_val = B.copy(), val
            if escapes >= restarts:
                B = best_B
                status = "local-minimum"
                history.record(B, it, 1)
                break
            escapes += 1
            # growing angles: a nearby basin first, then farther ones
            B = _reorthonormalize(_random_rotation(rng, r, 0.2 * 2.0 ** (escapes - 1)) @ best_B)
            t_guess, tau = 0.1, 0.1
            phase = 3
        cur = prob.value(B)
        if cur < best_val:
            best_B, best_val = B.copy(), cur
        history.record(B, it, phase)
        if callback is not None:
            callback(it, max_iter + polish_iter)
    if status == "max-iter":
        if prob.value(B) > best_val:
            B = best_B
        warnings.warn(f"nonneg_scores stopped at max_iter={max_iter} with negativity "
                      f"{max(0.0, float(-(U @ B.T).min())):.3g}", RuntimeWarning, stacklevel=3)
    return B, it, status, escapes


def _maximize_sum(U, C, B, prob, pairs, tol, polish_iter, record, it0, callback, total):
    """Phase 2: maximize ``Σ_ij Z_ij`` over rotations keeping ``Z >= -tol`` (and Â >= 0
    when penalized), by feasible ascent along geodesics."""
    r = B.shape[0]
    q = pairs[0].size
    ssum = U.sum(axis=0)
    a, b = pairs
    scale = max(1.0, float(np.abs(U).max()))
    steps = 0

    def feasible(Bc):
        Z, s, Ah, nneg = prob.parts(Bc)
        return s <= tol and (prob.penalty == 0 or nneg <= tol)

    def fsum(Bc):
        return float((Bc @ ssum).sum())

    t_guess = 0.1
    tau = 0.05
    for _ in range(4 * polish_iter):
        if steps >= polish_iter:
            break
        Z, s, Ah, nneg = prob.parts(B)
        w = B @ ssum
        grad = w[b] - w[a]                        # d(1ᵀ e^{tL} w)/dℓ_ab at t = 0
        if np.linalg.norm(grad) <= 1e-12 * max(1.0, np.linalg.norm(w)):
            break
        # SLP model: maximize the linearized Σ Z within a trust radius τ, keeping every
        # score within reach of zero nonnegative to first order (gaps included, so the
        # step heads for the vertex instead of zigzagging along the faces)
        reach = 2.0 * tau * 2.0 * np.abs(Z).sum(axis=1).max()
        ii, jj = np.nonzero(Z <= reach)
        vals = [Z[ii, jj]]
        rows = [_z_rows(Z, ii, jj, pairs)]
        if prob.penalty > 0:
            reach_a = 2.0 * tau * 2.0 * np.abs(Ah).sum(axis=1).max()
            kk, ll = np.nonzero(Ah <= reach_a)
            vals.append(Ah[kk, ll])
            rows.append(_a_rows(Ah, kk, ll, pairs))
        ell, gain_model = _lp_ascent_model(grad, np.concatenate(vals) + tol, np.vstack(rows), q, tau)
        if ell is None or gain_model <= 1e-12 * max(1.0, abs(fsum(B))):
            if tau > 1e-10:
                tau *= 0.25
                continue
            break
        t_guess = tau * np.sqrt(2.0) * _box_norm(ell)
        L = _skew(ell, r, pairs)
        path = _Path(L, B)
        f0 = fsum(B)

        def ok(t):
            # feasible and not worse than the start (fsum along a geodesic is a sinusoid sum)
            Bt = path(t)
            return feasible(Bt) and fsum(Bt) > f0

        # largest acceptable step in (0, π]: shrink to an acceptable one, expand, bisect
        t = t_guess
        while not ok(t) and t > 1e-14:
            t *= 0.25
        if not ok(t):
            if tau > 1e-10:
                tau *= 0.25                        # the model was too optimistic: trust less
                continue
            break
        lo, hi = t, None
        while lo < np.pi:
            t2 = min(2 * lo, np.pi)
            if ok(t2) and fsum(path(t2)) >= fsum(path(lo)):
                lo = t2
            else:
                hi = t2
                break
        if hi is not None:
            while hi - lo > 1e-10 * hi:
                mid = 0.5 * (lo + hi)
                if ok(mid) and fsum(path(mid)) >= fsum(path(lo)):
                    lo = mid
                else:
                    hi = mid
        Bn = path.exact(lo)
        if not feasible(Bn):
            Bn = path(lo)
            Bn = _reorthonormalize(Bn)
            if not feasible(Bn):
                break
        gain = fsum(Bn) - f0
        if gain <= 1e-13 * max(1.0, abs(f0)):
            if tau > 1e-10:
                tau *= 0.25
                continue
            break
        B = Bn
        # the trust radius follows the accepted step (the model is good near the vertex)
        tau = min(1.0, max(lo / (np.sqrt(2.0) * _box_norm(ell)), 1e-10) * 2.0)
        steps += 1
        record(B, it0 + steps, 2)
        if callback is not None:
            callback(it0 + steps, total)
        # Σ Z only breaks ties inside the (small) feasible set: stop once steps gain < 1e-9 relative
        if gain <= 1e-9 * max(1.0, abs(f0)):
            break
    return B, steps
