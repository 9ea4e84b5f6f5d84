"""The DNN's starting points from a feasible x (the KKT point, :func:`kkt_init`) and the rigorous value of
a start (:func:`_start_value`): for :mod:`nspca_core.certificates.dual`, which re-exports them."""

from __future__ import annotations

import numpy as np

from .dnn import DnnState, DnnWork, _ritz, dnn_value_lam


def kkt_init(A: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``N`` from the KKT conditions of a feasible ``x`` (support I).

    If ``x`` were optimal for ``max x^T A x`` over unit ``x >= 0`` (large k),
    stationarity reads ``(A x)_I = lambda x_I`` and ``(A x)_i <= 0`` off I.
    ``N_{iI} = -(A x)_i^- x_I^T`` (``i`` off I, symmetrised) is ``>= 0`` and
    makes ``(A + N) x = lambda x`` exactly, so ``x`` becomes an eigenvector of
    ``A + N``; the optimizer then only has to push the other eigenvalues down.
    """
    n = A.shape[0]
    N = np.zeros((n, n))
    I = x > 0
    if not I.any() or I.all():
        return N
    y = A @ x
    off = ~I
    w = np.maximum(-y[off], 0.0)  # only where (A x)_i < 0 does N help
    block = np.outer(w, x[I])
    N[np.ix_(off, I)] = block
    N[np.ix_(I, off)] = block.T
    return N


# _kkt_beaten: from this many features (below, LAPACK's eigenvalue costs about as much: LRS, 93), this many
# block steps of this many vectors
_KKT_EST_MIN_N, _KKT_EST_STEPS, _KKT_EST_R = 150, 3, 4
# the KKT point is evaluated only where its estimate leaves it able to certify this ratio
_KKT_USEFUL = 0.9


def _kkt_beaten(A: np.ndarray, x: np.ndarray, best: float, lower: float, keep: dict | None = None) -> bool:
    """Whether the KKT point of x (:func:`kkt_init`, ``mu = 0``: its bound is ``lambda_max(A + N)``)
    is not worth its evaluation: a Ritz value of ``A + N`` (a few block steps from x and a seeded
    block) at or above ``best (1 + 1e-6)`` (no better than the bounds so far) or above ``lower /``
    :data:`_KKT_USEFUL` (the screening start is better there: on CBCL the DNN started from the KKT
    point only where it certified 0.99 or more).  Ritz values are Rayleigh quotients, below
    ``lambda_max`` (the margin covers their rounding); this only decides that an evaluation is
    skipped, never a bound.  ``keep`` (a dict): given the block steps' vectors as ``keep["U"]`` (the
    point's evaluation starts from them, :func:`_start_value`)."""
    n = A.shape[0]
    if n < _KKT_EST_MIN_N:
        return False
    M = A + kkt_init(A, x)
    U = np.column_stack([x, np.random.default_rng(0).standard_normal((n, _KKT_EST_R - 1))])
    for _ in range(_KKT_EST_STEPS):
        w, U = _ritz(M, U, _KKT_EST_R)
    if keep is not None:
        keep["U"] = U
    est = float(w[0])
    return est >= best * (1.0 + 1e-6) or lower < _KKT_USEFUL * est


def _kkt_point(A: np.ndarray, k: int, x: np.ndarray, U: np.ndarray | None = None, lower: float | None = None):
    """The KKT dual point of a feasible x (:func:`kkt_init`): ``(value, state, lambda)``, the
    value rigorous.  ``U``, ``lower``: see :func:`_start_value` (the state returned has no subspace)."""
    st = DnnState(kkt_init(A, x), 0.0)
    v, lam = _start_value(A, k, st, U, lower)
    return v, st, lam


# _start_value: a start whose value from a Ritz guess certifies this ratio is evaluated by LAPACK (as without
# the guess): it may end the certificate (the targets are 0.99..0.99999) or prove x optimal
_START_EXACT = 0.98


def _start_value(A: np.ndarray, k: int, st: DnnState, U: np.ndarray | None, lower: float | None,
                 work: DnnWork | None = None) -> tuple[float, float]:
    """A DNN start's rigorous ``(value, lambda bound)``.  Without a subspace the evaluation is LAPACK's top
    eigenvalue (n^3); with ``U`` (the block steps that chose the start: :func:`_kkt_beaten`,
    :func:`_screen_init`) it is proved by Cholesky at a Ritz guess from U (:func:`.dnn_lmax.lmax_upper`, ~1/5 of
    the cost at n = 1,200: issue 39, dlbcl-shaped k = 200 spent 0.18 s in two such eigenvalues).  Where the
    guessed value certifies :data:`_START_EXACT` of ``lower`` (or ``lower`` is None), LAPACK's value is taken
    instead: a start that may end the certificate is valued as before.  Either value is an upper bound."""
    if U is not None and lower is not None and U.shape[0] == A.shape[0]:
        v, lam = dnn_value_lam(A, k, DnnState(st.N, st.nu, U), work=work)
        if lower < _START_EXACT * v:
            return v, lam
    return dnn_value_lam(A, k, st, work=work)
