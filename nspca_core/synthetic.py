"""Synthetic data with known ground truth (the embedded, no-download datasets).

Three generators, each deterministic under ``seed``:

* :func:`planted_sparse` -- planted nonnegative k-sparse components plus
  isotropic Gaussian noise (a spiked covariance model);
* :func:`parts_images` -- small images that are nonnegative combinations of a
  few known, disjoint "parts" (rectangles, bars, a blob) plus nonnegative noise;
* :func:`nonneg_scores_model` -- the model ``Y = A X`` of Bajorski, Hall &
  Rubinstein with ``X`` i.i.d. Beta(2, 4) scaled to unit variance.

Each returns ``(X, ground_truth)`` with ``X`` samples x features (float64, raw,
not centered) and ``ground_truth`` a dict of arrays described in the docstring.
The registry (:mod:`nspca_core.datasets`) wraps them as ``"synthetic-planted"``,
``"synthetic-parts"`` and ``"synthetic-scores"``.
"""

from __future__ import annotations


import numpy as np

from ._common.params import in_interval
from ._common.validation import InputError, as_rng, check_int

__all__ = ["planted_sparse", "parts_images", "nonneg_scores_model", "PARTS_SHAPE",
           "beta_unit_variance"]


def _check_float(value, name: str, low: float, high: float, *, low_open=False,
                 high_open=False) -> float:
    """Return ``value`` as a float in the interval, or raise :class:`InputError`."""
    return in_interval(value, name, low, high, kind="number", low_open=low_open, high_open=high_open)


# --------------------------------------------------------------------------- planted

def planted_sparse(n: int = 50, m: int = 200, k: int = 5, n_components: int = 3,
                   decay: float = 0.5, noise: float = 0.2, seed=0):
    """Planted nonnegative sparse components plus noise (spiked covariance).

    Parameters
    ----------
    n : int
        Number of features.
    m : int
        Number of samples.
    k : int
        Nonzeros per planted component.
    n_components : int
        Number of planted components ``r``; needs ``r * k <= n`` (disjoint supports).
    decay : float in (0, 1]
        Spectrum decay: component ``j`` (0-based) has variance ``decay**j``.
    noise : float >= 0
        Standard deviation ``sigma`` of the isotropic Gaussian noise.
    seed : int, None or numpy Generator

    Returns
    -------
    X : ndarray (m, n)
        ``X = Z diag(sqrt(lambda)) U^T + sigma G`` with ``Z``, ``G`` standard normal.
    ground_truth : dict
        ``components`` (n, r): the planted unit, nonnegative, k-sparse columns ``U``;
        ``supports``: list of r sorted index arrays; ``variances`` (r,): ``lambda``;
        ``noise``: ``sigma``; ``optimal_variance``: ``lambda_0 + sigma^2``, the
        population optimum of max xᵀAx over unit x >= 0 with <= k nonzeros.

    Notes
    -----
    The population covariance is ``A = U diag(lambda) U^T + sigma^2 I``.  The
    supports are disjoint, so the columns of ``U`` are orthonormal and they are
    exactly the leading eigenvectors of ``A``; ``u_0`` is feasible for the
    nonnegative k-sparse problem and attains the top eigenvalue, hence it is the
    population optimum.  Entries on a support are drawn from U[0.5, 1] before
    normalizing so that no planted entry is vanishingly small (the support is
    identifiable).  This is the spiked model used in the sparse-PCA literature
    (e.g. Amini & Wainwright 2009), with a nonnegativity constraint added.
    """
    n = check_int(n, "n", 2)
    m = check_int(m, "m", 2)
    k = check_int(k, "k", 1, n)
    r = check_int(n_components, "n_components", 1)
    if r * k > n:
        raise InputError(f"`n_components` * `k` must be <= n={n} (disjoint supports); "
                         f"got {r} * {k} = {r * k}")
    decay = _check_float(decay, "decay", 0.0, 1.0, low_open=True)
    noise = _check_float(noise, "noise", 0.0, np.inf, high_open=True)
    rng = as_rng(seed)

    # disjoint supports: a random permutation cut into r blocks of k
    perm = rng.permutation(n)
    U = np.zeros((n, r))
    supports = []
    for j in range(r):
        idx = np.sort(perm[j * k:(j + 1) * k])
        vals = rng.uniform(0.5, 1.0, size=k)
        U[idx, j] = vals / np.linalg.norm(vals)
        supports.append(idx)
    lambdas = decay ** np.arange(r, dtype=float)
    Z = rng.standard_normal((m, r))
    X = (Z * np.sqrt(lambdas)) @ U.T + noise * rng.standard_normal((m, n))
    truth = {
        "components": U,
        "supports": supports,
        "variances": lambdas,
        "noise": noise,
        "optimal_variance": float(lambdas[0] + noise ** 2),
    }
    return X, truth


# --------------------------------------------------------------------------- parts

#: image shape of :func:`parts_images`
PARTS_SHAPE = (12, 12)


def _part_masks() -> list[np.ndarray]:
    """The six known parts on the 12 x 12 grid, with pairwise disjoint supports.

    Values are nonnegative weights (flat rectangles and bars, one smooth blob);
    each is normalized to unit Euclidean norm by the caller.
    """
    h, w = PARTS_SHAPE
    parts = []
    p = np.zeros((h, w)); p[0:4, 0:4] = 1.0                     # top-left square
    parts.append(p)
    p = np.zeros((h, w)); p[1:3, 6:12] = 1.0                    # top-right horizontal bar
    parts.append(p)
    p = np.zeros((h, w)); p[5:12, 0:2] = 1.0                    # left vertical bar
    parts.append(p)
    yy, xx = np.mgrid[0:h, 0:w]                                 # a blob in the centre
    p = np.exp(-((yy - 7.0) ** 2 + (xx - 6.0) ** 2) / 2.0)
    p[(np.abs(yy - 7) + np.abs(xx - 6)) > 2] = 0.0              # cut to a diamond: disjoint
    parts.append(p)
    p = np.zeros((h, w)); p[10:12, 9:12] = 1.0                  # bottom-right rectangle
    parts.append(p)
    p = np.zeros((h, w)); p[4:10, 10] = 1.0                     # right thin bar
    parts.append(p)
    return parts


def parts_images(n: int = 400, n_parts: int = 4, noise: float = 0.05, seed=0):
    """Small 12 x 12 images built from known nonnegative parts plus noise.

    Parameters
    ----------
    n : int
        Number of images (samples).
    n_parts : int in [1, 6]
        How many of the six built-in parts are used.
    noise : float >= 0
        Scale of the nonnegative (half-normal) pixel noise.
    seed : int, None or numpy Generator

    Returns
    -------
    X : ndarray (n, 144)
        Row-major flattened images, all entries >= 0.
    ground_truth : dict
        ``parts`` (n_parts, 12, 12) unit-norm part images; ``components``
        (144, n_parts) the same as columns; ``supports`` list of index arrays;
        ``coefficients`` (n, n_parts); ``weights`` (n_parts,) the amplitude of each
        part; ``image_shape`` (12, 12).

    Notes
    -----
    Image ``i`` is ``sum_p c_ip w_p P_p + noise * |g_i|`` with ``c_ip = b_ip u_ip``,
    ``b ~ Bernoulli(1/2)``, ``u ~ U[0.5, 1.5]`` independent, and weights
    ``w_p = 0.8**p``.  Independent coefficients with distinct variances and
    disjoint (hence orthogonal) unit parts make the parts exactly the leading
    eigenvectors of the population covariance (the i.i.d. half-normal noise adds
    a multiple of I after centering): the "parts" picture of Lee & Seung (1999)
    in a form where nonnegative sparse PCA must recover them.
    """
    n = check_int(n, "n", 2)
    r = check_int(n_parts, "n_parts", 1, 6)
    noise = _check_float(noise, "noise", 0.0, np.inf, high_open=True)
    rng = as_rng(seed)
    parts = np.array([p / np.linalg.norm(p) for p in _part_masks()[:r]])
    P = parts.reshape(r, -1)
    weights = 0.8 ** np.arange(r, dtype=float)
    C = (rng.random((n, r)) < 0.5) * rng.uniform(0.5, 1.5, size=(n, r))
    X = (C * weights) @ P + noise * np.abs(rng.standard_normal((n, P.shape[1])))
    truth = {
        "parts": parts,
        "components": P.T.copy(),
        "supports": [np.flatnonzero(row) for row in P],
        "coefficients": C,
        "weights": weights,
        "image_shape": PARTS_SHAPE,
    }
    return X, truth


# --------------------------------------------------------------------------- scores

def beta_unit_variance(a: float = 2.0, b: float = 4.0) -> float:
    """Standard deviation of Beta(a, b): ``sqrt(ab / ((a+b)^2 (a+b+1)))``."""
    return float(np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1.0))))


def _ratio_for_share(share: float, p: int) -> float:
    """Geometric ratio q with ``1 / sum_{j<p} q^j = share`` (bisection; q in (0, 1])."""
    lo, hi = 0.0, 1.0
    for _ in range(200):  # bisection to machine precision; the map is monotone in q
        mid = 0.5 * (lo + hi)
        s = 1.0 / np.sum(mid ** np.arange(p))
        if s > share:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def nonneg_scores_model(p: int = 10, n: int = 1000, first_share: float | None = None, seed=0):
    """The nonnegative-score model ``Y = A X`` (Bajorski, Hall & Rubinstein).

    Parameters
    ----------
    p : int >= 2
        Dimension (number of sources = number of observed variables).
    n : int >= 2
        Number of samples.
    first_share : float in [1/p, 1) or None
        If given, the NSPC variances ``lambda_j = ||A e_j||^2`` decay geometrically
        so that ``lambda_0 / sum(lambda) = first_share`` (the paper's Cases 1-3 have
        first shares 0.96, 0.77, 0.57).  If None, ``A`` has i.i.d. N(0, 1) entries.
    seed : int, None or numpy Generator

    Returns
    -------
    Y : ndarray (n, p)
        Observations, one per row: ``Y_i = A X_i``.
    ground_truth : dict
        ``A`` (p, p); ``X`` (n, p) the sources (rows X_i, nonnegative, unit
        variance); ``lambdas`` (p,) column norms squared of A, in decreasing order;
        ``D`` (p, p) = ``A Lambda^{-1/2}`` (unit columns); ``W`` (n, p) =
        ``X Lambda^{1/2}`` the nonnegative scores, so that ``Y = W D^T``.

    Notes
    -----
    ``X`` has i.i.d. Beta(2, 4) entries divided by the Beta(2, 4) standard
    deviation ``sqrt(8/252)`` (unit variance, still nonnegative, not centered).
    With ``first_share`` the columns of ``D`` are random unit vectors (normalized
    Gaussian) and the geometric ratio is found by bisection; columns are ordered
    by decreasing ``lambda``.
    """
    p = check_int(p, "p", 2)
    n = check_int(n, "n", 2)
    if first_share is not None:
        first_share = _check_float(first_share, "first_share", 1.0 / p, 1.0, high_open=True)
    rng = as_rng(seed)
    if first_share is None:
        A = rng.standard_normal((p, p))
    else:
        G = rng.standard_normal((p, p))
        D0 = G / np.linalg.norm(G, axis=0)
        q = _ratio_for_share(first_share, p)
        A = D0 * np.sqrt(q ** np.arange(p))
    lambdas = np.sum(A ** 2, axis=0)
    order = np.argsort(-lambdas, kind="stable")
    A, lambdas = A[:, order], lambdas[order]
    X = rng.beta(2.0, 4.0, size=(n, p)) / beta_unit_variance(2.0, 4.0)
    Y = X @ A.T
    truth = {
        "A": A,
        "X": X,
        "lambdas": lambdas,
        "D": A / np.sqrt(lambdas),
        "W": X * np.sqrt(lambdas),
    }
    return Y, truth
