"""Issue 39 target 2 on wide data, fourteenth round (helper genek14): the split bound's cross term of S and T at every
k.  ``coupled._coupled_refined`` computed it only up to ``_CROSS_MAX_K = 256`` (a limit from when the table kept k
values per feature of T); above it the one-k certificate lost the cross term and every refinement: golub-shaped
k = 256 -> 257 0.9655 -> 0.8598, dlbcl-shaped 0.9693 -> 0.8789.  The table's bound is proved at any k (test_cross_cut,
test_split_aimed against brute force); this checks that it is asked on both sides of the former limit."""

from __future__ import annotations

import time

import numpy as np
import pytest

from nspca_core.certificates import coupled
from nspca_core.certificates.cheap import _finish
from nspca_core.operators.cov import Cov

from tests.core.certificates.test_split_coupled import _modules


@pytest.mark.parametrize("k", [12, 256, 257, 1000])
def test_cross_term_asked_at_every_k(k):
    """The split bound's cross term of S and T at any k (until this round only up to k = 256: golub-shaped k = 257
    fell 0.9655 -> 0.8598).  ``_coupled_refined`` asks ``make_cross`` on both sides of the former limit where the
    rest T takes part of the maximum, and the coupled bound with a table of zeros (no cross covariance: each term
    is then ``max(B_S(i), B_T(j))``) is below the plain sums' (the table's own proof: test_cross_cut,
    test_split_aimed)."""
    rng = np.random.default_rng(k)
    nS, kS = 8, 6
    AS = _modules(rng, 12, nS, 2)
    AS = AS.T @ AS / 12
    xS = np.maximum(np.linalg.eigh(AS)[1][:, -1] * np.sign(np.linalg.eigh(AS)[1][:, -1].sum()), 0.0)
    xS /= np.linalg.norm(xS)
    lower = float(xS @ AS @ xS)
    certS = _finish({"variances": float(np.sort(np.diag(AS))[::-1][:kS].sum())}, lower, xS, kS, time.perf_counter(),
                    {"n": nS})
    BT = np.concatenate([[0.0], np.cumsum(np.full(k, lower / (2 * k)))])  # (T's bound at each sparsity j = 0..k)
    asked: list = []

    def make():
        asked.append(1)
        return np.zeros((kS + 1, k + 1))

    plain = coupled._coupled(certS, None, np.diag(AS), kS, BT, k, None)
    val, _, C = coupled._coupled_refined(Cov(A=AS), certS, None, kS, BT, k, None, make, lower, 1.0)
    assert asked == [1] and C is not None
    assert val < plain
