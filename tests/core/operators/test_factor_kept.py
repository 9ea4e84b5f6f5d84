"""``Cov.factor`` keeps its eigenpairs per d and route (issue 39, the tenth round: a refit of the same
operator at another k reuses them).  What is handed out must be, bit for bit and in memory layout, what a
fresh operator computes, whichever calls came before; and a caller writing into it changes nothing kept."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core.lowrank import lowrank_factor_clean
from nspca_core.operators.covariance import as_cov


def _same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes(order="A") == b.tobytes(order="A") \
        and a.flags.f_contiguous == b.flags.f_contiguous and a.flags.c_contiguous == b.flags.c_contiguous


def _fresh(X, d, dense: bool):
    """The factor a new operator of X computes (A formed first when ``dense``)."""
    C = as_cov(X)
    if dense:
        C.dense()
    return C.factor(d)


@settings(max_examples=40, deadline=None)
@given(m=st.integers(3, 30), n=st.integers(2, 25), seed=st.integers(0, 10_000),
       ds=st.lists(st.integers(1, 4), min_size=1, max_size=5), form_at=st.integers(-1, 4))
def test_kept_factor_equals_a_fresh_ones(m, n, seed, ds, form_at):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n)) * rng.uniform(0.1, 3.0, n)
    C = as_cov(X)
    for i, d in enumerate(ds):
        d = min(d, n)
        if i == form_at:
            C.dense()  # from here on the dense route (for thin data the two routes round differently)
        dense = C._A is not None or not C.thin
        V, eig = C.factor(d)
        V0, eig0 = _fresh(X, d, dense)
        assert _same(V, V0) and _same(eig, eig0)
        V[:] = np.nan  # a caller writing into its copy: the next call is unchanged
        eig[:] = -1.0
        V1, eig1 = C.factor(d)
        assert _same(V1, V0) and _same(eig1, eig0)


def test_factor_is_the_lowrank_factor():
    """The kept value is :func:`lowrank_factor_clean`'s, on X for thin data, on A once A is formed."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((6, 20))
    X -= X.mean(axis=0)
    C = as_cov(X)
    Vt, et = lowrank_factor_clean(C.X, None, 2)
    assert _same(C.factor(2)[0], Vt) and _same(C.factor(2)[1], et)
    Vd, ed = lowrank_factor_clean(None, C.dense(), 2)
    assert _same(C.factor(2)[0], Vd) and _same(C.factor(2)[1], ed)
