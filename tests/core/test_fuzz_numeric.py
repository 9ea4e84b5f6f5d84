"""Numeric fuzz (issue 18, "keep it so"): scale invariance, exactness after scaling, refusals.

Scale invariance: for c in {1e-150, 1e-80, 1, 1e80, 1e150} the solvers return
the same support and the same x (up to the rounding of ``c V`` itself) for
``c V`` as for ``V``; powers of two give bit-identical answers.  Exactness: on
tiny inputs the exact solvers reach the brute-force optimum of the unscaled
problem at every scale (d = 1..4, 1e-300 to 1e300).  Refusals: complex, text
and non-PSD inputs raise :class:`nspca_core.InputError` with messages matching
regexes.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nspca_core import (InputError, certify, enet_nspca, fit, lowrank_factor, lowrank_nspca,
                        rank1_nspca, solve_pd)
from tests.bruteforce import brute_opt_lowrank

SCALES = [1e-150, 1e-80, 1.0, 1e80, 1e150]
FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _value(V, x):
    """||V^T x||^2 on the unscaled V."""
    return float(np.sum((V.T @ x) ** 2))


def _generic_V(seed, n, d):
    """Gaussian rows: ties and degeneracies have probability zero, so the optimum is unique."""
    return np.random.default_rng(seed).standard_normal((n, d))


def _same_point(x, y):
    return np.array_equal(np.flatnonzero(x), np.flatnonzero(y)) and np.allclose(x, y, rtol=1e-9, atol=1e-12)


# ----------------------------------------------------------------------------- scale invariance
@FUZZ
@given(st.integers(0, 2**32 - 1), st.integers(2, 14), st.integers(1, 4), st.data())
def test_lowrank_nspca_is_scale_free(seed, n, d, data):
    d = min(d, n)
    V = _generic_V(seed, n, d)
    k = data.draw(st.integers(1, n))
    base = lowrank_nspca(V, k)
    for c in SCALES:
        r = lowrank_nspca(V * c, k)
        assert _same_point(r.x, base.x), (c, r.x, base.x)
    j = data.draw(st.integers(-1000, 1000))
    assert np.array_equal(lowrank_nspca(V * 2.0 ** j, k).x, base.x)  # exact scaling: bit-identical


@FUZZ
@given(st.integers(0, 2**32 - 1), st.integers(2, 30), st.integers(1, 4), st.data())
def test_enet_nspca_is_scale_free(seed, n, d, data):
    d = min(d, n)
    V = _generic_V(seed, n, d)
    k = data.draw(st.integers(1, n))
    base = enet_nspca(V, k, samples=60, random_state=seed)
    for c in SCALES:
        r = enet_nspca(V * c, k, samples=60, random_state=seed)
        assert _same_point(r.x, base.x), c


@FUZZ
@given(st.integers(0, 2**32 - 1), st.integers(1, 20), st.data())
def test_rank1_nspca_is_scale_free(seed, n, data):
    v = np.random.default_rng(seed).standard_normal(n)
    k = data.draw(st.integers(1, n))
    base = rank1_nspca(v, k)
    for c in SCALES + [1e-300, 1e300]:
        assert _same_point(rank1_nspca(v * c, k), base), c


@FUZZ
@given(st.integers(0, 2**32 - 1), st.integers(1, 4), st.integers(0, 7), st.booleans(),
       st.sampled_from(SCALES + [1e-300, 1e300]), st.sampled_from(SCALES + [1e-300, 1e300]))
def test_solve_pd_is_scale_free(seed, d, rows, psd, cq, cr):
    """Before: rows of R below ~1e-154 had zero norm (constraints dropped), Q near 1e300 overflowed."""
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((d, d))
    Q = B @ B.T if psd else B + B.T
    R = rng.standard_normal((rows, d))
    base = solve_pd(Q, R)
    c = solve_pd(Q * cq, R * cr)
    assert (base is None) == (c is None)
    if base is not None:
        assert np.allclose(c, base, atol=1e-8), (cq, cr)
        assert np.all(R @ c >= -1e-9 * np.linalg.norm(R, axis=1))


# ----------------------------------------------------------------------------- exactness at every scale
@pytest.mark.parametrize("d", [1, 2, 3, 4])
@pytest.mark.parametrize("c", [1e-300, 1e-200, 1e-82, 1e-30, 1.0, 1e30, 1e76, 1e200, 1e300])
def test_lowrank_nspca_exact_at_every_scale(d, c):
    """Before: d = 3 wrong below ~1e-81 / above ~1e76, d = 1, 2, 4 past ~1e±155."""
    rng = np.random.default_rng(100 * d + 7)
    for _ in range(6):
        n = int(rng.integers(d, 8))
        V = rng.standard_normal((n, d))
        k = int(rng.integers(1, n + 1))
        opt, _ = brute_opt_lowrank(V, k)
        r = lowrank_nspca(V * c, k)
        assert r.x.min() >= 0 and np.count_nonzero(r.x) <= k and np.isclose(np.linalg.norm(r.x), 1.0)
        assert _value(V, r.x) >= opt * (1 - 1e-9), (n, k, c)
        if 1e-300 < c * c < 1e300:
            assert r.variance == pytest.approx(opt * c * c, rel=1e-9)


def test_the_issue_example():
    x = lowrank_nspca(np.diag([1.0, 1.0, 2.0]) * 1e-82, 1).x
    assert np.array_equal(x, [0.0, 0.0, 1.0])


@FUZZ
@given(st.integers(0, 2**32 - 1), st.integers(1, 7), st.integers(1, 3), st.sampled_from(SCALES), st.data())
def test_exact_against_brute_force_after_scaling(seed, n, d, c, data):
    """Also with degenerate rows (zeros, duplicates, negatives multiples): value = brute-force OPT."""
    d = min(d, n)
    V = _generic_V(seed, n, d)
    if n >= 3 and data.draw(st.booleans()):
        V[1] = 0.0
        V[2] = -2.0 * V[0]
    k = data.draw(st.integers(1, n))
    opt, _ = brute_opt_lowrank(V, k)
    r = lowrank_nspca(V * c, k)
    assert _value(V, r.x) == pytest.approx(opt, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("c", [1e-150, 1e-80, 1e80, 1e150])
def test_fit_spannogram_same_answer_for_scaled_data(c):
    X = np.random.default_rng(5).standard_normal((30, 12))
    X -= X.mean(axis=0)
    base = fit(X, k=4, method="spannogram", d=2, certify=False)
    r = fit(X * c, k=4, method="spannogram", d=2, certify=False)
    assert _same_point(r.x, base.x)


# ----------------------------------------------------------------------------- refusals
_COMPLEX = r"must be real; got complex values \(dtype complex\d+\): the imaginary part would be lost"
_TEXT = r"must be numeric; got text \(dtype [^)]*\), e\.g\. "
_NOT_PSD = (r"`cov` must be positive semidefinite \(a covariance\); (its smallest eigenvalue is -[\d.e+-]+, "
            r"below the tolerance -[\d.e+-]+ \(= -1e-10 \* n \* max\|cov\|, n = \d+\)|its diagonal entry "
            r"cov\[\d+, \d+\] = -[\d.e+-]+ is negative)")


@FUZZ
@given(st.integers(0, 2**32 - 1), st.integers(2, 8), st.integers(1, 6), st.sampled_from(["fit", "certify",
                                                                                           "factor"]))
def test_complex_inputs_are_refused(seed, m, n, entry):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n)) + 1j * rng.standard_normal((m, n))
    call = {"fit": lambda: fit(X, k=1), "certify": lambda: certify(X, k=1),
            "factor": lambda: lowrank_factor(X, d=1)}[entry]
    with pytest.raises(InputError, match="`X` " + _COMPLEX):
        call()


@FUZZ
@given(st.lists(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=3, max_size=3), min_size=2,
                max_size=5), st.sampled_from(["str", "object", "one-cell"]))
def test_numbers_as_text_are_refused(rows, how):
    X = np.array(rows)
    if how == "str":
        bad = X.astype(str)
    elif how == "object":
        bad = np.array([[repr(v) for v in row] for row in rows], dtype=object)
    else:
        bad = X.astype(object)
        bad[-1, -1] = str(X[-1, -1])
    with pytest.raises(InputError, match="`X` " + _TEXT):
        fit(bad, k=1)


@FUZZ
@given(st.integers(0, 2**32 - 1), st.integers(2, 9), st.floats(1e-6, 10.0), st.sampled_from(SCALES))
def test_indefinite_covariances_are_refused(seed, n, depth, c):
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    w = rng.random(n) + 0.1
    w[int(rng.integers(n))] = -depth * w.max()  # one clearly negative eigenvalue
    A = (Q * w) @ Q.T * c
    A = 0.5 * (A + A.T)
    with pytest.raises(InputError, match=_NOT_PSD):
        fit(cov=A, k=1)


@FUZZ
@given(st.integers(0, 2**32 - 1), st.integers(1, 9), st.integers(1, 9), st.sampled_from(SCALES))
def test_covariances_of_data_are_accepted_at_every_scale(seed, m, n, c):
    """Rank-deficient covariances (computed zero eigenvalues are tiny negatives) pass."""
    X = np.random.default_rng(seed).standard_normal((m, n)) * c
    X -= X.mean(axis=0)
    A = X.T @ X / m
    from nspca_core._common.validation import check_data_or_cov

    _, out = check_data_or_cov(cov=A)
    assert np.array_equal(out, 0.5 * (A + A.T))


# ----------------------------------------------------------------------------- issue 31 items 6, 7: bounded work

@pytest.mark.parametrize("n, d, k", [(200, 5, 10), (50, 5, 10), (50, 4, 10), (14, 8, 3)])
def test_exact_enumerations_over_budget_are_refused_up_front(n, d, k):
    """``lowrank_nspca(randn(200, 5), 10)`` reached 8 GiB after 77 s; n = 50 took 100-167 s."""
    V = np.random.default_rng(n + d).standard_normal((n, d))
    with pytest.raises(InputError, match=rf"the exact spannogram at rank {d} on {n} distinct rows examines "
                                         rf"C\({n + 1}, {d}\) = [\d,]+ vertices.*more than `max_candidates`"):
        lowrank_nspca(V, k)


@pytest.mark.parametrize("n, d, eps", [(50, 4, 1e-4), (2000, 3, 1e-5), (12582, 3, 1e-4)])
def test_enet_over_its_time_budget_is_refused_up_front(n, d, eps):
    """The count cap let 9.2 M directions on n = 50 run for minutes; the cap is now on estimated
    work (all three are under the 10^7 count cap)."""
    V = np.random.default_rng(n).standard_normal((n, d))
    with pytest.raises(InputError, match=r"random directions on n = [\d,]+ features at d = \d: about .* estimated .* "
                                         r"more than `max_seconds` = 60 s"):
        enet_nspca(V, 5, eps=eps)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_sparse_cov_is_named_as_sparse(fmt):
    """Issue 31 item 10: a sparse ``cov=`` said "cannot be converted to float (setting an array element
    with a sequence.)"."""
    import scipy.sparse

    X = np.random.default_rng(3).standard_normal((12, 5))
    A = scipy.sparse.csr_matrix(X.T @ X / 12).asformat(fmt)
    for call in (lambda: fit(cov=A, k=2), lambda: certify(cov=A, k=2)):
        with pytest.raises(InputError, match=r"`cov` is a scipy.sparse matrix \(5 x 5, 25 nonzeros\); a sparse `cov` "
                                             r"is not supported"):
            call()
