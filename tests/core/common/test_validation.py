"""Front-door validation (issue 18 items 3 and 4): nothing is converted or accepted silently.

Complex values, text and dates are refused (NumPy alone would drop imaginary
parts with a warning, parse numeric strings and turn dates into day counts);
a covariance that is not PSD beyond a tolerance scaled to the matrix is refused
with its smallest eigenvalue and the tolerance.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import nspca_core._common.validation as val
from nspca_core import InputError, certify, fit, lowrank_factor, rank1_nspca, solve_pd
from nspca_core._common.validation import PSD_RTOL, check_data_or_cov, check_matrix, check_psd, check_vector, pow2_scale


def _X():
    X = np.random.default_rng(0).standard_normal((12, 5))
    return X - X.mean(axis=0)


def _with_eigenvalues(w, seed=0):
    """A symmetric matrix with the given eigenvalues (random orthogonal basis)."""
    Q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((len(w), len(w))))
    A = (Q * np.asarray(w, float)) @ Q.T
    return 0.5 * (A + A.T)


# ----------------------------------------------------------------------------- item 3: dtypes
@pytest.mark.parametrize("bad", [
    _X() + 1j * _X(),  # complex
    (_X() + 0j),  # complex with zero imaginary parts: still refused (the dtype is the message)
    np.array(_X(), dtype=object) + np.array(1j, dtype=object),  # complex objects
])
def test_fit_refuses_complex_data_without_a_numpy_warning(bad):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the old path dropped the imaginary part with a ComplexWarning
        with pytest.raises(InputError, match=r"`X` must be real; got complex values .*imaginary part "
                                             r"would be lost.*`X\.real`"):
            fit(bad, k=2)


def test_fit_refuses_complex_covariance_and_certify_complex_data():
    A = np.cov(_X(), rowvar=False).astype(complex)
    with pytest.raises(InputError, match=r"`cov` must be real; got complex values"):
        fit(cov=A, k=2)
    with pytest.raises(InputError, match=r"`X` must be real; got complex values"):
        certify(_X() * (1 + 1j), k=2)


@pytest.mark.parametrize("bad, shown", [
    (_X().astype(str), r"e\.g\. '-?\d"),  # numeric strings, dtype <U..
    (np.array([["1.5", "2"], ["3", "4"]], dtype=object), "e.g. '1.5'"),  # strings in an object array
    (np.array([[1.0, "2"], [3.0, 4.0]], dtype=object), "e.g. '2'"),  # one text cell among numbers
    ([[1.0, 2.0], ["3", 4.0]], r"e\.g\. '"),  # nested lists become dtype <U..
    (np.array([[b"1", b"2"], [b"3", b"4"]]), "e.g. b'1'"),  # bytes
])
def test_fit_refuses_numbers_written_as_text(bad, shown):
    with pytest.raises(InputError, match=r"`X` must be numeric; got text \(dtype .*\), " + shown):
        fit(bad, k=1)


def test_text_refusal_says_how_to_convert():
    with pytest.raises(InputError, match=r"convert them yourself .*np\.asarray\(X, dtype=float\).*load_file"):
        check_matrix(np.array([["1", "2"]]), "X")


def test_dates_are_refused_not_turned_into_day_counts():
    dates = np.array([["2020-01-01", "2021-01-01"], ["2022-01-01", "2023-01-01"]], dtype="datetime64[D]")
    assert np.asarray(dates, dtype=float)[0, 0] == 18262.0  # what NumPy alone would do
    with pytest.raises(InputError, match=r"`X` must be numeric; got dtype datetime64\[D\] \(dates"):
        fit(dates, k=1)


def test_vectors_refuse_complex_and_text_too():
    with pytest.raises(InputError, match=r"`v` must be real; got complex"):
        rank1_nspca(np.array([1.0, 2.0j]), 1)
    with pytest.raises(InputError, match=r"`v` must be numeric; got text"):
        rank1_nspca(["1", "2"], 1)
    with pytest.raises(InputError, match=r"`Q` must be real"):
        solve_pd(np.eye(2) * (1 + 0j), np.eye(2))
    with pytest.raises(InputError, match=r"`v` must be a numeric 1-D array; got list that numpy cannot read"):
        check_vector([[1.0], [2.0, 3.0]], "v")  # ragged


def test_plain_numbers_still_pass_unchanged():
    X = _X()
    for given in (X, X.tolist(), X.astype(np.float32).astype(object), X.astype(np.float32)):
        out = check_matrix(given, "X")
        assert out.dtype == np.float64 and np.allclose(out, X, atol=1e-6)
    assert np.array_equal(check_matrix(np.array([[1, 2], [3, 4]]), "X"), [[1.0, 2.0], [3.0, 4.0]])


def test_symmetry_test_is_relative_to_the_scale():
    A = np.array([[2.0, 1.0], [1.0, 2.0]])
    B = A.copy()
    B[0, 1] += 1e-6  # relative asymmetry 5e-7 > 1e-8
    for c in (1e-100, 1.0, 1e100):
        with pytest.raises(InputError, match=r"`cov` must be symmetric; got max \|cov - cov\.T\|"):
            check_data_or_cov(cov=B * c)  # was accepted for c = 1e-100 (absolute 1e-8 tolerance)
        _, out = check_data_or_cov(cov=A * c)
        assert np.array_equal(out, A * c)


# ----------------------------------------------------------------------------- item 4: PSD
def test_fit_refuses_an_indefinite_covariance_with_its_eigenvalue_and_the_tolerance():
    A = np.array([[2.0, 3.0, 0.0], [3.0, 2.0, 0.0], [0.0, 0.0, 1.0]])  # eigenvalues 5, 1, -1
    tol = PSD_RTOL * 3 * 3.0
    with pytest.raises(InputError, match=r"`cov` must be positive semidefinite \(a covariance\); its smallest "
                                         r"eigenvalue is -1, below the tolerance -(\S+) "
                                         r"\(= -1e-10 \* n \* max\|cov\|, n = 3\)") as info:
        fit(cov=A, k=2)
    assert float(info.value.args[0].split("tolerance -")[1].split(" ")[0]) == pytest.approx(tol, rel=1e-3)
    assert "clip its negative eigenvalues" in str(info.value)
    with pytest.raises(InputError, match="positive semidefinite"):
        certify(cov=A, k=2)
    with pytest.raises(InputError, match="positive semidefinite"):
        lowrank_factor(cov=A, d=2)


def test_negative_diagonal_is_named():
    A = np.diag([1.0, -0.5, 2.0])
    with pytest.raises(InputError, match=r"its diagonal entry cov\[1, 1\] = -0\.5 is negative \(a variance is >= 0"):
        fit(cov=A, k=1)


@pytest.mark.parametrize("scale", [1e-200, 1e-5, 1.0, 1e5, 1e200])
def test_psd_tolerance_scales_with_the_matrix(scale):
    n = 6
    tol = PSD_RTOL * n  # relative to max|A| ~ 1 before scaling
    ok = _with_eigenvalues([1.0, 0.7, 0.2, 0.0, 0.0, -0.1 * tol]) * scale
    bad = _with_eigenvalues([1.0, 0.7, 0.2, 0.0, 0.0, -30 * tol]) * scale
    check_psd(ok)  # rounding-level negatives are accepted
    with pytest.raises(InputError, match="smallest eigenvalue is -"):
        check_psd(bad)


def test_psd_accepts_covariances_of_rank_deficient_data():
    rng = np.random.default_rng(3)
    for m, n in [(3, 40), (10, 200), (1, 5)]:
        X = rng.standard_normal((m, n)) * rng.random(n) * 10.0 ** rng.integers(-3, 4, size=n)
        X -= X.mean(axis=0)
        check_psd((X.T @ X) / m)  # zero eigenvalues computed as tiny negatives
    check_psd(np.zeros((4, 4)))


def test_psd_lanczos_path_for_large_n(monkeypatch):
    monkeypatch.setattr(val, "PSD_CHOLESKY_MAX_N", 10)  # exercise the path used above 4000
    rng = np.random.default_rng(4)
    X = rng.standard_normal((30, 60))
    A = X.T @ X / 30
    check_psd(A)  # rank 30 of 60: many zero eigenvalues, accepted
    bad = A - 2.0 * np.outer(X[0], X[0]) / 30  # an eigenvalue well below zero
    lam = np.linalg.eigvalsh(bad)[0]
    with pytest.raises(InputError, match=r"it has an eigenvalue <= (\S+) \(Lanczos\), below the tolerance") as info:
        check_psd(bad)
    bound = float(info.value.args[0].split("<= ")[1].split(" ")[0])
    assert lam <= bound < 0  # a Rayleigh quotient: an upper bound on lambda_min, a proof


def test_psd_check_is_only_at_the_public_cov_entry():
    A = _with_eigenvalues([2.0, 1.0, -1.0])
    _, out = check_data_or_cov(cov=A, psd=False)  # lower levels (solvers, certificates) allow it
    assert np.allclose(out, A)
    with pytest.raises(InputError, match="positive semidefinite"):
        check_data_or_cov(cov=A)


# ----------------------------------------------------------------------------- scaling helper
@pytest.mark.parametrize("top", [5e-324, 1e-300, 0.75, 1.0, 3.0, 1e300, 1.7976931348623157e308])
def test_pow2_scale_is_a_finite_power_of_two(top):
    s = pow2_scale(np.array([top, -top / 3]))
    mant, _ = np.frexp(s)
    assert np.isfinite(s) and s > 0 and mant == 0.5
    assert 1.0 <= top / s < 2.0
    assert pow2_scale(np.zeros(3)) == 1.0


# ----------------------------------------------------------------------------- issue 31 item 8: seeds
@pytest.mark.parametrize("call", [
    lambda X: fit(X, k=3, random_state=-1),
    lambda X: fit(X, k=3, random_state=-1, method="enet"),
    lambda X: __import__("nspca_core").components(X, n_components=2, k=2, random_state=-1),
])
def test_negative_random_state_is_an_input_error_naming_it(call):
    with pytest.raises(InputError, match=r"`random_state` must be None, an int >= 0, a numpy RandomState or "
                                         r"Generator; got -1"):
        call(_X())


def test_seed_checks_keep_their_messages_and_accept_what_numpy_accepts():
    with pytest.raises(InputError, match=r"`seed` must be None, an int >= 0, a numpy RandomState or "
                                         r"Generator; got .a."):
        val.as_rng("a")
    with pytest.raises(InputError, match=r"`random_state` must be None, an int >= 0"):
        val.as_rng(-5, "random_state")
    assert val.as_rng(np.int64(3)).integers(100) == np.random.default_rng(3).integers(100)
    assert val.as_rng(2 ** 70).integers(100) == np.random.default_rng(2 ** 70).integers(100)
    g = np.random.default_rng(1)
    assert val.as_rng(g) is g
