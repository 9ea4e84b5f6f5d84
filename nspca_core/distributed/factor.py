"""The top-d factor of a Dask covariance operator (:meth:`nspca_core.distributed.array.DaskCov.factor`).

Block subspace iteration with Rayleigh–Ritz and a gap-aware stopping rule; no Dask import here:
every pass over the data is one ``cov.matvec`` (a Dask graph), the rest runs on the client.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..lowrank import flip_signs, lowrank_factor_clean

__all__ = ["ritz_factor"]

# a fixed seed for the factor's random start block: same input, same output
_FACTOR_SEED = 0
# Ritz pairs whose value is within this fraction of the block's smallest Ritz value (and whose
# residual is within this fraction of their value) lie in a cluster the block cannot resolve
_FLAT = 0.1
# a pair that would need more than _SLOW_PASSES further passes to be resolved is accepted once its
# residual is within _LOOSE lambda_1 (the solvers use the factor as a sketch or a start)
_SLOW_PASSES = 10
_LOOSE = 1e-3


def ritz_factor(cov, d: int, oversample: int, tol: float, max_iter: int):
    """The work of :meth:`nspca_core.distributed.array.DaskCov.factor` on validated arguments: ``(V, eig, info)``.

    Notes
    -----
    Block subspace iteration with Rayleigh–Ritz on the operator (Saad, *Numerical
    Methods for Large Eigenvalue Problems*, ch. 5; the oversampled block of Halko,
    Martinsson & Tropp 2011).  Per round one product ``W = A Q`` (n x l: one pass over
    the blocks and one round trip), then on the client ``H = Q^T W``, its eigenpairs
    ``(θ, S)``, the Ritz vectors ``Z = Q S``, the residuals ``R = W S - Z Θ`` and the next
    basis ``orth(W S)``.  No m x l array is formed or persisted.

    Stopping (gap-aware).  The callers need the top-d vectors as a sketch or a start and
    the values as bounds.  The rate of pair j is ``λ_{l+1} / λ_j`` per pass, so in a flat
    part of the spectrum (the noise bulk of a data set below its planted structure) the
    (d+1)-th pair — and any wanted pair inside the bulk — would need hundreds of passes
    for a residual of ``tol θ_1`` although its vector is not determined by the data to
    that accuracy (Davis–Kahan: angle <= r / gap) and any vector of the cluster serves a
    sketch as well.  So each of the top d + 1 pairs stops when it is resolved, or
    (j < l, the gap below estimated by the block's smallest Ritz value θ_l) when

    - it is *slow*: at the estimated rate ``θ_l / θ_j`` it would need more than 10 further
      passes to be resolved, and ``r_j <= 1e-3 θ_1`` (the solvers' sketch and start are
      then accurate to 1e-3 λ_1, and they run on the true A afterwards), or
    - it lies in a *flat* cluster with θ_l (``θ_j - θ_l <= 0.1 θ_j``) and
      ``r_j <= 0.1 θ_j`` (pure noise: no direction is preferred);

    the value of such a pair is given as the upper value ``θ_j + r_j``.  With ``oversample = 0``
    the (d+1)-th pair is the block's last and must be resolved (the behaviour of plain
    subspace iteration).

    When the client holds the whole covariance (:meth:`_full`: at most
    :data:`_GRAM_CACHE_MAX` features) the factor is :func:`nspca_core.lowrank_factor`'s
    dense eigendecomposition of it instead (``factor_info['method']``), exact like the
    in-memory path.
    """
    trips0 = cov.round_trips
    A = cov._full()
    if A is not None:  # the client holds A (n <= _GRAM_CACHE_MAX): the in-memory factor of it
        Av = A if cov._keep is None else A[np.ix_(cov._keep, cov._keep)]
        V, eig = lowrank_factor_clean(None, Av, d)
        info = {"iterations": 0, "passes": cov.round_trips - trips0, "converged": True,
                "block": cov.n, "method": "eigh of the covariance held by the client"}
        return V, eig, info
    count = min(d + 1, cov.n)
    ell = max(count, min(count + oversample, cov.n))
    rng = np.random.default_rng(_FACTOR_SEED)
    Q = np.linalg.qr(rng.standard_normal((cov.n, ell)))[0]
    theta = res = Z = None
    ok = resolved = np.zeros(count, dtype=bool)
    converged = False
    it = 0
    for it in range(1, max_iter + 1):
        W = cov.matvec(Q)  # the one pass of this round
        H = Q.T @ W
        theta, S = np.linalg.eigh(0.5 * (H + H.T))
        theta, S = theta[::-1], S[:, ::-1]
        Z = Q @ S
        AZ = W @ S
        res = np.linalg.norm(AZ - Z * theta, axis=0)
        top = max(float(theta[0]), 0.0)
        resolved = res[:count] <= tol * top
        j = np.arange(count)
        th, r = theta[:count], res[:count]
        inside = j < ell - 1  # the block's last pair has no estimate of the gap below it
        flat = inside & (th - theta[-1] <= _FLAT * np.abs(th)) & (r <= _FLAT * np.abs(th))
        rate = np.clip(np.divide(theta[-1], th, out=np.ones(count), where=th > 0), 0.0, 1.0)
        slow = inside & (rate ** _SLOW_PASSES * r > tol * top) & (r <= _LOOSE * top)
        ok = resolved | flat | slow
        if top == 0 or ok.all():
            converged = True
            break
        Q = np.linalg.qr(AZ)[0]
    if not converged:
        warnings.warn(f"DaskCov.factor: the Ritz residuals {res[:count][~ok].max():.3g} did "
                      f"not reach tol={tol:g} x lambda_1 in max_iter={max_iter} rounds",
                      RuntimeWarning, stacklevel=3)
    ritz = np.clip(theta[:count], 0.0, None)
    eig = np.zeros(d + 1)
    eig[:count] = np.where(resolved, ritz, ritz + res[:count])
    Ud = flip_signs(Z[:, :d])
    V = Ud * np.sqrt(ritz[:d])
    info = {"iterations": it, "passes": cov.round_trips - trips0, "converged": converged,
            "block": ell, "method": "subspace iteration", "residuals": res[:count].tolist(), "ritz": ritz.tolist(),
            "resolved": resolved.tolist()}
    return V, eig, info
