"""The split certificate's grown screen (:func:`.screens.grown`) chosen by the cross term, not by variance.

Where the rest T holds a one-k "auto" split certificate below the aim, a larger screen follows
(:mod:`.screens`).  The features that screen takes from T were those of the next largest variances.  The
coupled bound's terms are ``lambda_max([[B_S(i), C], [C, B_T(j)]])`` (:mod:`.cross`).  Where ``B_S(i)``
is far above ``B_T(j)``, such a term is about ``B_S(i) + C^2 / (B_S(i) - B_T(j))``.  What holds the bound
up there is the cross term C, the covariance of T's columns with S.  A column of large variance but
uncorrelated with S costs next to nothing.  So the larger screen is the own screen (its features of
largest variance plus the point's support, :func:`.split_point._screened`) plus the columns t of T with
the largest ``||A_St||^2`` (``X_t^T (X_S X_S^T) X_t / m^2``, through X's m x m Gram on S: ``m^2 (|S| +
|T|)``, nothing n x n).

Which features S holds is a choice only.  The split certificate's bound is proved for any partition of
the features into S and T (:func:`.single._certify_split`), so every bound stays proved.

Issue 39, helper wide23 (dlbcl-shaped 77 x 7,070, certify(k) at "auto"): k = 150, T's ceiling
(:func:`.coupled.t_ceiling` with the cross table) is 0.9635 on the own 914 features.  Grown by variance
it is 0.9706 / 0.9751 / 0.9860 on 1.1 / 1.2 / 1.5 times as many; grown by ``||A_St||`` it is 0.9874 /
0.9976 / 1.0001.  The certificate: 0.9704 on 1,378 features -> 0.9795 on 1,097, at half the CPU
(benchmarks/results/issue39_wide23.txt)."""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

from ..operators.cov import Cov

# (cov, own): the split certificate run inside :func:`cross_growth`, and the own screen's size (its
# variance part, ``_settings.screened_size``'s)
_ACTIVE: ContextVar = ContextVar("nspca_cross_growth", default=None)


def applies(cov) -> bool:
    """Whether a larger screen is grown by the cross term: dense thin data held as an array (m < n); else (a
    covariance, sparse data, operators) by variance, as before."""
    return type(cov) is Cov and isinstance(cov.X, np.ndarray) and cov.X.ndim == 2 and cov.thin


@contextmanager
def cross_growth(cov, own: int):
    """Within this block, a split certificate's screen of more than ``own`` features on ``cov``
    (:func:`screened`) is the own screen of ``own`` plus the columns of T most covariant with it; outside it,
    or where :func:`applies` does not hold, the screen is by variance."""
    token = _ACTIVE.set((cov, int(own)) if applies(cov) else None)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def screened(dg: np.ndarray, x: np.ndarray, s: int, by_variance):
    """``(S, T)`` for a screen of ``s`` features: ``by_variance(dg, x, s)`` (:func:`.split_point._screened`)
    unless a :func:`cross_growth` block is active on data of ``dg.size`` features and ``s`` is above its own
    size.  Then S is ``by_variance(dg, x, own)`` (S0) and x's support (its s largest entries, as by variance),
    filled up to s features with the columns t of the rest with the largest ``X_t^T G X_t``, ``G = X_S0
    X_S0^T``.  Ties and order are stable, so the same data give the same S."""
    active = _ACTIVE.get()
    if active is None or active[0].n != dg.size or s <= active[1]:
        return by_variance(dg, x, s)
    cov, own = active
    mask = np.zeros(dg.size, dtype=bool)
    S0 = by_variance(dg, x, own)[0]
    mask[S0] = True
    sup = np.flatnonzero(x)  # (x's support, its s largest entries as by_variance(dg, x, s) keeps them)
    mask[sup if sup.size <= s else sup[np.argsort(-x[sup], kind="stable")[:s]]] = True
    T0 = np.flatnonzero(~mask)
    extra = int(s) - (dg.size - T0.size)
    if extra > 0 and T0.size:
        mask[T0[cross_order(cov.X, S0, T0)[:extra]]] = True
    return np.flatnonzero(mask), np.flatnonzero(~mask)


def cross_order(X: np.ndarray, S: np.ndarray, T: np.ndarray) -> np.ndarray:
    """The positions in T ordered by ``||X_S^T X_t||^2`` (``m^2 ||A_St||^2``), the largest first (stable):
    ``X_t^T (X_S X_S^T) X_t`` for every t of T at once, ``m^2 (|S| + |T|)`` multiply-adds."""
    XS = X[:, S]
    G = XS @ XS.T
    XT = X[:, T]
    score = np.einsum("ij,ij->j", XT, G @ XT)
    return np.argsort(-score, kind="stable")
