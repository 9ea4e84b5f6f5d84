"""T's spectrum put off on the split route of held sparse data (nspca_core.certificates.rest_top.late_rest): the
trace curve is the rest curve's trace term and a valid bound (brute force), the rule takes it exactly where the
plain coupling sits at j = 0 below B_S + max variance / 2, and the certificate is the same float as without it
(the spectrum then not computed at all)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core import fit
from nspca_core.certificates import _settings as S
from nspca_core.certificates import bounds as B
from nspca_core.certificates import rest_top as RT
from nspca_core.certificates import single
from nspca_core.certificates import sparse_route as R
from nspca_core.certificates.route import _certify_large
from nspca_core.operators.sparse import as_sparse_cov
from tests.bruteforce import brute_opt
from tests.core.certificates.test_sparse_route import _counts, _failing_top


def exact_cov(D: np.ndarray, center: bool) -> np.ndarray:
    """The covariance ``X^T X / m - mu mu^T`` of the float data D in exact rational arithmetic (every float is a
    rational), rounded once: the reference for the scaled (non-integer) counts here."""
    m, n = D.shape
    cols = [[Fraction(float(v)) for v in D[:, j]] for j in range(n)]
    mu = [sum(c) / m if center else Fraction(0) for c in cols]
    return np.array([[float(sum(a * b for a, b in zip(cols[i], cols[j])) / m - mu[i] * mu[j])
                      for j in range(n)] for i in range(n)])


@st.composite
def corpora(draw):
    """Counts with a few loud words and many quiet ones (scaled down), so that S's price of a nonzero can sit
    above T's variances (the rule's side) or not."""
    m = draw(st.integers(6, 14))
    n = draw(st.integers(5, 9))
    D = _counts(draw(st.integers(0, 2**31 - 1)), m, n, draw(st.floats(0.5, 12.0)), draw(st.floats(0.3, 0.9)))
    D = D.astype(float)
    quiet = draw(st.integers(0, n - 2))
    D[:, n - quiet:] *= draw(st.sampled_from([1.0, 0.3, 0.05]))
    return D


@settings(max_examples=60, deadline=None)
@given(D=corpora(), center=st.booleans(), j=st.integers(0, 9))
def test_trace_curve_is_the_rest_curves_trace_and_bounds_the_optimum(D, center, j):
    """trace_curve(diag of A_TT) at least the exact optimum of A_TT at every sparsity (brute force), at least the
    rest curve (its elementwise minimum with the spectral bounds), and exactly its trace term (the rest curve
    with the spectral bounds made infinite)."""
    cov = as_sparse_cov(sp.csr_matrix(D), center)
    n = cov.n
    T = np.arange(min(j, n - 1), n)
    if T.size == 0:
        return
    tr = RT.trace_curve(cov.diag()[T], T.size)
    full = B._rest_curve(cov, T, T.size)
    assert tr[0] == 0.0 and tr.size == full.size == T.size + 1
    assert np.all(full <= tr)
    E = exact_cov(D, center)[np.ix_(T, T)]
    for i in range(1, T.size + 1):
        assert tr[i] >= brute_opt(E, i)[0] * (1 - 1e-12) - 1e-300
    spec = B._rest_spectrum(cov, T)
    big = B.Spectrum(T.size, np.array([np.inf, np.inf]), 0.0, v1=np.zeros(T.size), diag=cov.diag()[T])
    assert np.array_equal(B._rest_curve(cov, T, T.size, spec=big), tr)
    assert spec is not None


def test_rule_on_both_sides():
    """late_rest returns the trace curve exactly where the coupling's argmax is i >= k and its value is below B_S
    plus half the largest variance; None on the other side of each condition (the callable counted: once)."""
    dg = np.array([0.3, 0.1, 0.2, 0.05])
    calls = []

    def coupled(val, i):
        def f(bt):
            calls.append(bt)
            return val, i
        return f

    out = RT.late_rest(dg, 3, 10.0, coupled(10.0, 3))
    assert out is not None and np.array_equal(out[0], RT.trace_curve(dg, 3)) and len(calls) == 1
    assert out[1]["trace-k"] == pytest.approx(0.6, rel=1e-12) and out[1]["trace-k"] >= 0.6
    assert RT.late_rest(dg, 3, 10.0, coupled(10.0, 2)) is None  # (T's part binds: j = 1)
    half = 10.0 + 0.5 * 0.3
    assert RT.late_rest(dg, 3, 10.0, coupled(np.nextafter(half, 0), 3)) is not None
    assert RT.late_rest(dg, 3, 10.0, coupled(half, 3)) is None
    assert RT.late_rest(np.zeros(0), 3, 10.0, coupled(10.0, 3)) is None
    assert RT.late_rest(dg, 0, 10.0, coupled(10.0, 0)) is None


_ANSWERS: dict = {}


def _answer(X, k: int, center: bool) -> np.ndarray:
    """fit's x, one per data, k and centering: the certificates compared are of the same answer (fit on sparse data
    can differ in its last bit between two calls in one process -- OpenBLAS's kernels round by memory alignment --
    and a certificate's floats follow x's)."""
    key = (X.toarray().tobytes(), X.shape, k, center)
    if key not in _ANSWERS:
        _ANSWERS[key] = fit(X, k=k, certify=False, center=center).x
    return _ANSWERS[key].copy()


def _split(D: np.ndarray, k: int, center: bool, late: bool, counted: list | None = None, trace_first: bool = False):
    """The sparse route's split certificate of D at k (screens of max(2, k) features, the split always paying, the
    anchored test failing), with ``rest_late`` as given; ``counted`` gets one entry per rest spectrum computed;
    ``trace_first``: :func:`.rest_top.trace_first`'s order tried too (off: :func:`.rest_top.late_rest` alone)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(S, "_SPLIT_MIN", 2)
        mp.setattr(S, "_SPLIT_PER_K", 1)
        mp.setattr(S, "_SPLIT_BRANCH_MAX_K", 2)
        mp.setattr(R, "_SPLIT_SHARE", np.inf)
        mp.setattr(RT, "_PARTIAL_MIN_N", 1)
        mp.setattr(RT, "_TRACE_FIRST", trace_first)  # (off: late_rest's floats alone; test_trace_first)
        _failing_top(mp)
        if counted is not None:
            real = single._rest_spectrum
            mp.setattr(single, "_rest_spectrum", lambda *a, **kw: counted.append(1) or real(*a, **kw))
        X = sp.csr_matrix(D)
        x = _answer(X, k, center)
        cov = as_sparse_cov(X, center)
        return R.sparse_route(cov, k, x, "auto", None,
                              lambda *a, **kw: _certify_large(*a, **{**kw, "rest_late": late}))


@settings(max_examples=40, deadline=None)
@given(D=corpora(), center=st.booleans(), k=st.integers(3, 6))
def test_same_certificate_with_and_without(D, center, k):
    """With rest_late the certificate's bound and bounds are the same floats as without it; where T's spectrum was
    not computed (one rest spectrum fewer over the run, counted: a grown screen or the dense route may follow), the
    coupled bound sits at S's own bound (j = 0) and T's bounds are the trace's only; the bound is at least the
    exact optimum."""
    k = min(k, D.shape[1] - 1)
    if not np.any(exact_cov(D, center).diagonal() > 0):
        return
    counted, counted_a = [], []
    a = _split(D, k, center, False, counted_a)
    b = _split(D, k, center, True, counted)
    if a is None or b is None:
        assert a is None and b is None
        return
    assert a.upper_bound == b.upper_bound and a.bounds == b.bounds and a.kind == b.kind
    assert a.upper_bound >= brute_opt(exact_cov(D, center), k)[0] * (1 - 1e-12) - 1e-300
    if "coupled" in b.info:
        assert a.info["coupled"] == b.info["coupled"]
        if sorted(b.info["B_T_bounds"]) == ["trace-k"]:  # (put off: one spectrum fewer, S's own bound binding)
            assert len(counted) < len(counted_a)
            assert b.info["coupled"] <= b.info["B_S"] * (1 + 8 * np.finfo(float).eps)


def _quiet_rest(seed: int, scale: float) -> np.ndarray:
    """Counts whose last words are scaled by ``scale`` (quiet: S's price of a nonzero above T's variances)."""
    D = _counts(seed, 40, 9, 4.0, 0.7).astype(float)
    D[:, 4:] *= scale
    return D


def test_taken_and_not_taken_on_quiet_and_loud_rests():
    """Both sides of the rule on a fixed corpus: a quiet rest (variances scaled by 1e-3) puts T's spectrum off
    (none computed, the same floats); at scale 1 (T's variances comparable) it is computed (counted)."""
    seen = {}
    for scale in (1e-3, 1.0):
        for seed in range(6):
            D = _quiet_rest(seed, scale)
            counted: list = []
            b = _split(D, 3, True, True, counted)
            a = _split(D, 3, True, False)
            if b is None or "coupled" not in b.info:
                continue
            assert a.upper_bound == b.upper_bound and a.bounds == b.bounds
            seen.setdefault(scale, set()).add(not counted)
    assert True in seen.get(1e-3, set())
    assert False in seen.get(1.0, set())
