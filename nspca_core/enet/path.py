"""The ε-net's results: a point as a :class:`Result`, and the path of many sparsities.

:func:`path_batch` scores the candidates of every k for a batch of directions
(prefix sums along one sort per direction); :class:`ResultPath` is what
:func:`nspca_core.enet.enet_path` returns (also importable from there), building
each Result on access.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from .._common.points import point_result
from ..result import Result

__all__ = ["finish", "fallback_x", "path_batch", "ResultPath"]


def finish(V, x, k, method, params, t0, info) -> Result:
    """The Result of the point ``x``: value ``||V^T x||^2`` (the ε-net sees only ``V``)."""
    support = np.flatnonzero(x)
    y = V[support].T @ x[support]
    return point_result(x, float(y @ y), method=method, params=params, t0=t0, info=info)


def fallback_x(V: np.ndarray) -> np.ndarray:
    """Used only when every sampled ``Vc`` vanishes on its candidate support (e.g. V = 0):
    the best single coordinate."""
    x = np.zeros(V.shape[0])
    x[int(np.argmax(np.einsum("ij,ij->i", V, V)))] = 1.0
    return x


def path_batch(V, uk, Cb):
    """Scores (K, b) of the candidates of size ``min(k, ...)`` for every k in ``uk`` and
    every direction of ``Cb``, the better sign per (k, direction) (+ wins ties), and
    whether it is the - sign (K, b).  Memory O(n b d) (the prefix sums)."""
    P = V @ Cb.T  # (n, b)
    b = P.shape[1]
    order = np.argsort(-P, axis=0, kind="stable")  # descending, ties to the lower index
    vs = np.take_along_axis(P, order, axis=0)  # sorted values, descending
    npos = np.count_nonzero(P >= 0, axis=0)  # size cap of I^+(v)
    nneg = np.count_nonzero(P <= 0, axis=0)  # size cap of I^+(-v)
    G = V[order] * vs[:, :, None]  # (n, b, d): V_{o_t} v_{o_t}
    sq = vs * vs
    cols = np.arange(b)[None, :]
    # + side: prefixes of the descending order
    Pf = np.cumsum(G, axis=0)
    Qf = np.cumsum(sq, axis=0)
    m = np.minimum(uk[:, None], npos[None, :])  # (K, b) candidate sizes
    num = np.einsum("kbd,kbd->kb", Pf[np.maximum(m - 1, 0), cols], Pf[np.maximum(m - 1, 0), cols])
    den = Qf[np.maximum(m - 1, 0), cols]
    with np.errstate(divide="ignore", invalid="ignore"):
        score_pos = np.where((m > 0) & (den > 0), num / den, -1.0)
    del Pf, Qf
    # - side: suffixes (the ascending order), same arrays reversed
    Pb = np.cumsum(G[::-1], axis=0)
    Qb = np.cumsum(sq[::-1], axis=0)
    del G
    m = np.minimum(uk[:, None], nneg[None, :])
    num = np.einsum("kbd,kbd->kb", Pb[np.maximum(m - 1, 0), cols], Pb[np.maximum(m - 1, 0), cols])
    den = Qb[np.maximum(m - 1, 0), cols]
    with np.errstate(divide="ignore", invalid="ignore"):
        score_neg = np.where((m > 0) & (den > 0), num / den, -1.0)
    use_neg = score_neg > score_pos
    return np.where(use_neg, score_neg, score_pos), use_neg


class ResultPath(Sequence):
    """The answers of :func:`enet_path`: a read-only sequence of :class:`Result`, one per k.

    Each Result is built when it is accessed, from the winning direction of its
    k (one product ``V c`` and one sort, cached for the last direction used),
    so the path holds O(n d + len(ks) d) numbers instead of ``len(ks)``
    dense vectors: all 12582 values of k on MLL would otherwise be the
    12582 x 12582 matrix.  ``list(path)`` materializes every Result.
    """

    def __init__(self, V, Vs, dirs, N, uk, inv, best_val, best_sample, best_sign, params, seconds):
        # V as given (variances), Vs = V / 2^j (orders: no underflow), the winning direction per k
        self._V, self._Vs, self._dirs, self._N = V, Vs, dirs, int(N)
        self._uk, self._inv = uk, inv
        self._val, self._sample, self._sign = best_val, best_sample, best_sign
        self._params = params
        self.seconds = float(seconds)  # shared wall-clock time of the whole path
        self._sorted = (None, None, None)  # (sample, order, sorted values)

    def __len__(self) -> int:
        return int(self._inv.size)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        i = int(self._inv[index])
        return self._result(i)

    def __repr__(self) -> str:
        return f"ResultPath(len={len(self)}, n={self._V.shape[0]}, d={self._V.shape[1]})"

    @property
    def ks(self) -> np.ndarray:
        """The sparsities, in the order given."""
        return self._uk[self._inv]

    @property
    def values(self) -> np.ndarray:
        """``||V^T x||^2`` of every answer, without building the points."""
        return np.maximum(self._val[self._inv], 0.0)

    def _order(self, i: int):
        s = int(self._sample[i])
        if self._sorted[0] != s:
            v = self._Vs @ self._dirs[i]
            order = np.argsort(-v, kind="stable")
            self._sorted = (s, order, v[order])
        return self._sorted[1], self._sorted[2]

    def _result(self, i: int) -> Result:
        V = self._V
        n = V.shape[0]
        k = int(self._uk[i])
        if self._val[i] < 0:  # every candidate vanished (V c = 0 on it): fallback
            x = fallback_x(self._Vs)
        else:
            order, vs = self._order(i)
            x = np.zeros(n)
            if self._sign[i] > 0:
                m = min(k, int(np.count_nonzero(vs >= 0)))
                idx, w = order[:m], vs[:m]
            else:
                m = min(k, int(np.count_nonzero(vs <= 0)))
                idx, w = order[n - m:], -vs[n - m:]
            x[idx] = w / np.sqrt(w @ w)
        info = {"samples": self._N, "best_sample": int(self._sample[i]),
                "sign": int(self._sign[i]), "path": True}
        res = finish(V, x, k, "enet", {"k": k, **self._params}, 0.0, info)
        return replace(res, seconds=self.seconds)
