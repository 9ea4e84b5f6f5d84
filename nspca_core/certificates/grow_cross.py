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
(benchmarks/results/issue39_wide23.txt).

Since helper wide26 the screen is chosen, not grown: x's support and the ``_VARIANCE_SHARE`` of the own screen's
features of largest variance, filled with the columns most covariant with those (``screens._CROSS`` times the own
screen's size, SMALLER than it).  S's DNN costs ``|S|^2`` an iteration; the variances past the first half cost T's
bound little once the columns covariant with S are in S.  dlbcl-shaped k = 120 / 130 / 150 / 160 / 200 (one-k
sweep, screen size x rule): 0.97351 / 0.98087 / 0.97951 / 0.97818 / 0.97937 on 886..1,451 features -> 0.97335 /
0.98109 / 0.98020 / 0.98014 / 0.98000 on 665..1,089, CPU -5 / -30 / -26 / -32 / -34 %
(benchmarks/results/issue39_wide26.txt)."""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

from ..operators.cov import Cov

# (cov, own, size): the split certificate run inside :func:`cross_growth`, the own screen's size (its variance part,
# ``_settings.screened_size``'s) and the size of the screen chosen by the cross term
_ACTIVE: ContextVar = ContextVar("nspca_cross_growth", default=None)
# the screen chosen by the cross term keeps this share of the own screen's features of largest variance (and x's
# support); the rest of it are the columns most covariant with those.  Issue 39 (helper wide26), dlbcl-shaped k =
# 120..200 at 0.9 times the own size: shares 0.4 / 0.5 / 0.6 / 0.75 / 1.0 certify k = 150 0.9792 / 0.9802 / 0.9794 /
# 0.9731 / (0.97904 at 1.0x); 0.5 the best ratio at k = 130..200 (benchmarks/results/issue39_wide26.txt)
_VARIANCE_SHARE = 0.5


def applies(cov) -> bool:
    """Whether a larger screen is grown by the cross term: dense thin data held as an array (m < n); else (a
    covariance, sparse data, operators) by variance, as before."""
    return type(cov) is Cov and isinstance(cov.X, np.ndarray) and cov.X.ndim == 2 and cov.thin


@contextmanager
def cross_growth(cov, own: int, size: int):
    """Within this block, a split certificate's screen of ``size`` features on ``cov`` (:func:`screened`) is chosen
    by the cross term (x's support, the first :data:`_VARIANCE_SHARE` of the own screen of ``own`` by variance and
    the columns most covariant with them); any other size, outside it, or where :func:`applies` does not hold, the
    screen is by variance."""
    token = _ACTIVE.set((cov, int(own), int(size)) if applies(cov) else None)
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def screened(dg: np.ndarray, x: np.ndarray, s: int, by_variance):
    """``(S, T)`` for a screen of ``s`` features: ``by_variance(dg, x, s)`` (:func:`.split_point._screened`)
    unless a :func:`cross_growth` block is active on data of ``dg.size`` features and ``s`` is its size.  Then S
    is ``by_variance(dg, x, int(_VARIANCE_SHARE * own))`` and x's support (its s largest entries, as by variance),
    S0, filled up to s features with the columns t of the rest with the largest ``X_t^T G X_t``, ``G = X_S0
    X_S0^T``.  Ties and order are stable, so the same data give the same S."""
    active = _ACTIVE.get()
    if active is None or active[0].n != dg.size or int(s) != active[2]:
        return by_variance(dg, x, s)
    cov, own, _ = active
    mask = np.zeros(dg.size, dtype=bool)
    mask[by_variance(dg, x, max(1, int(_VARIANCE_SHARE * own)))[0]] = True
    sup = np.flatnonzero(x)  # (x's support, its s largest entries as by_variance(dg, x, s) keeps them)
    mask[sup if sup.size <= s else sup[np.argsort(-x[sup], kind="stable")[:s]]] = True
    S0, T0 = np.flatnonzero(mask), np.flatnonzero(~mask)
    extra = int(s) - S0.size
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
