"""Issue 39, helper dense30: the split bound's S starts its DNN's screening search (:func:`.dual_start._screen_init`)
from lambda_1's bound that :func:`.cheap.lambda1_only` already proved, not from LAPACK's eigenvalues of A_SS
(``single._start_eig``; MLL k = 200: an O(|S|^3) call, 0.08 of ~0.75 CPU s, made only for the search range of mu).

- the start's value is at least lambda_1 (a proved bound), and where the bracket's cheap value left the search
  range at ``hi`` it leaves it there too (the same floats);
- a counting test: S's certificate makes no LAPACK eigendecomposition where the bracket would make one (and one
  without ``proved_start``: the mutation that drops the hook from ``_split_S`` fails it);
- the certificate with the proved start stays above brute force's OPT on small inputs.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from nspca_core.certificates import bounds as _bounds
from nspca_core.certificates import cheap, single
from nspca_core.operators.cov import Cov

from tests.bruteforce import brute_opt
from tests.core.certificates.test_d1_late import _images, _small, _spy  # (_spy: LAPACK's eigh counted)


def _boosted(seed: int, m: int, n: int, boost: float) -> np.ndarray:
    """Image-like data whose two first features are one large copied feature: the largest off-diagonal entry is
    the largest variance, so the screening start's range ``(lambda_1 - max A_ii) / (k - 1)`` is below it at large k
    (the bracket reads LAPACK's lambda_1 there: MLL's S at k = 150..200 is of this kind)."""
    X = _images(seed, m, n)
    X[:, 1] = X[:, 0] = X[:, 0] * boost
    return X


def _split_S(X: np.ndarray, k: int, **kw):
    """S's certificate as :func:`.single._certify_split` makes it (S = every feature, a non-empty rest), x the k
    features of largest variance."""
    cov = Cov(X - X.mean(axis=0))
    n = X.shape[1]
    x = np.zeros(n)
    x[np.argsort(-cov.diag())[:k]] = 1.0
    x /= np.linalg.norm(x)
    S = np.arange(n)
    covS = Cov(A=cov.submatrix(S))
    return single._split_S(cov, S, covS, k, x, "auto", None, None, None, 1, x, cov.quad(x), {}, tree=False, **kw)


def test_the_split_S_start_makes_no_lapack_eigendecomposition(monkeypatch):
    """Where the bracket needs LAPACK's lambda_1 (seed 2, k = 80: the minimum could depend on it), S's
    certificate makes no eigendecomposition with the proved start and one without it; the two bounds are valid
    DNN points a hair apart (the start's range moves by lambda_1's proof's slack)."""
    X = _boosted(2, 600, 200, 3.0)
    seen = _spy(monkeypatch)
    certS = _split_S(X, 80)[0]
    assert seen["lapack"] == 0
    assert certS.kind == "dnn" or "dnn" in certS.bounds
    real = single._start_eig
    monkeypatch.setattr(single, "_start_eig", lambda spec, proved: real(spec, False))
    seen["lapack"] = 0
    old = _split_S(X, 80)[0]
    assert seen["lapack"] == 1, "not vacuous: the bracket reads LAPACK's lambda_1 here"
    assert abs(certS.upper_bound / old.upper_bound - 1) < 1e-5


def test_a_cheap_bracket_is_left_alone(monkeypatch):
    """Without the copied feature (seed 1, k = 40) the bracket's cheap value decides: no LAPACK call either way and
    the same floats with and without the proved start."""
    X = _images(1, 600, 200)
    seen = _spy(monkeypatch)
    new = _split_S(X, 40)[0]
    real = single._start_eig
    monkeypatch.setattr(single, "_start_eig", lambda spec, proved: real(spec, False))
    old = _split_S(X, 40)[0]
    assert seen["lapack"] == 0
    assert new.upper_bound == old.upper_bound


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(3, 40), k=st.integers(1, 40), scale=st.floats(0.0, 3.0))
def test_the_proved_start_is_above_lambda1_and_keeps_a_cheap_minimum(seed, n, k, scale):
    """``_start_eig(spec, True)``: ``w[0] + tol`` of a :class:`.cheap.Lambda1Only` (here w[0] lambda_1 itself, tol
    its 1e-12): at least LAPACK's lambda_1; where the bracket's cheap value gives the minimum ``hi``, so does it."""
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n + 3, n))
    A = B.T @ B / (n + 3)
    k = min(k, n)
    lam = float(scipy.linalg.eigh(A, eigvals_only=True)[-1])
    spec = cheap.Lambda1Only(A, lam, 1e-12 * lam, d1=1.0, theta=lam)
    got = single._start_eig(spec, True)
    assert got >= lam
    assert single._start_eig(spec, False) == spec.bracket
    off = A - np.diag(np.diag(A))
    hi = float(off.max()) * scale
    dmax = float(np.diag(A).max())
    if k > 1:
        cheap_value = spec.bracket(hi, dmax, k) if (spec.theta * (1 - 1e-10) - dmax) / (k - 1) >= hi else None
        if cheap_value is not None:
            assert min(hi, (got - dmax) / (k - 1)) == hi == min(hi, (cheap_value - dmax) / (k - 1))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), n=st.integers(6, 9), k=st.integers(2, 4), boost=st.sampled_from([1.0, 3.0]))
@example(seed=2, n=8, k=4, boost=3.0)
def test_the_split_S_bound_with_the_proved_start_is_above_bruteforce(monkeypatch, seed, n, k, boost):
    """Small inputs (the light route's size thresholds lowered, so S's lambda_1 is proved alone and the bracket is
    read): S's certificate is at least brute force's OPT."""
    _small(monkeypatch)
    X = _boosted(seed, 3 * n, n, boost)
    certS = _split_S(X, k)[0]
    A = Cov(X - X.mean(axis=0)).dense()
    assert certS.upper_bound >= brute_opt(A, k)[0] * (1 - 1e-9)


def test_a_valued_bracket_is_kept():
    """A bracket that is a value (the thin spectrum's, no eigendecomposition behind it) is the start's value with or
    without the proved start: the Gram's ``w[0] + tol`` in its place would move floats for nothing saved."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((12, 40))
    X -= X.mean(axis=0)
    A = X.T @ X / 12
    spec = _bounds._ThinSpectral(A, X, 12, 2)
    assert not callable(spec.bracket)
    assert single._start_eig(spec, True) == spec.bracket == single._start_eig(spec, False)
    assert single._start_eig(None, True) is None
