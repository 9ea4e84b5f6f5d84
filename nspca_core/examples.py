"""Named small examples with known answers (for the app, the docs and the tests)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._common.validation import InputError

__all__ = ["NamedExample", "bipartite_counterexample"]


class NamedExample(NamedTuple):
    """A covariance and what is known about it (unpack as ``A, known = example``)."""

    A: np.ndarray
    known: dict


def bipartite_counterexample(eps=0.1, delta=0.05) -> NamedExample:
    """The §7 example where greedy deflation loses to the joint (bipartite) optimum.

    ``A = [[1, 0, 0, ε], [0, δ, 0, 0], [0, 0, δ, 0], [ε, 0, 0, 1]]`` with two
    2-sparse components on disjoint supports.

    Parameters
    ----------
    eps : float in (0, 1)
    delta : float in [0, 1 - eps)

    Returns
    -------
    NamedExample
        ``A`` (4 x 4) and ``known`` with ``n_components=2``, ``k=2``,
        ``deflation=1 + ε + δ`` (greedy: the best 2-sparse component is
        ``(e_0 + e_3)/√2`` with variance 1 + ε, leaving features 1, 2 with
        δ), ``deflation_supports``, ``optimum=2`` (e.g. supports {0, 1} and
        {2, 3}, each capturing a unit diagonal entry), ``optimum_supports``.

    Notes
    -----
    Asteris, Papailiopoulos, Kyrillidis & Dimakis, "Sparse PCA via Bipartite
    Matchings", NIPS 2015, §7.  Both vectors of either answer are nonnegative,
    so the example applies to nonnegative sparse PCA unchanged.  The joint
    optimum is 2: each component's variance is at most the top eigenvalue
    of its 2 x 2 block, and disjoint supports that split {0, 3} get 1 + 1,
    while keeping 0 and 3 together gets 1 + ε + δ < 2.
    """
    ok = lambda v: isinstance(v, (int, float, np.floating, np.integer)) and not isinstance(v, bool)
    if not ok(eps) or not 0 < float(eps) < 1:
        raise InputError(f"`eps` must be a float in (0, 1); got {eps!r}")
    if not ok(delta) or not 0 <= float(delta) < 1 - float(eps):
        raise InputError(f"`delta` must be a float in [0, 1 - eps) = [0, {1 - float(eps):.6g}); "
                         f"got {delta!r}")
    e, dl = float(eps), float(delta)
    A = np.array([[1.0, 0.0, 0.0, e],
                  [0.0, dl, 0.0, 0.0],
                  [0.0, 0.0, dl, 0.0],
                  [e, 0.0, 0.0, 1.0]])
    known = dict(n_components=2, k=2, eps=e, delta=dl, deflation=1.0 + e + dl,
                 deflation_supports=[[0, 3], [1, 2]], optimum=2.0,
                 optimum_supports=[[0, 1], [2, 3]],
                 source="Asteris et al., Sparse PCA via Bipartite Matchings, NIPS 2015, §7")
    return NamedExample(A, known)
