"""``_already_centered`` decides from its most off column first (issue 39, auto25): the same boolean as
the whole-matrix test it shortcuts, on centered, nearly centered and uncentered data."""
import numpy as np
from hypothesis import given, settings, strategies as st

from nspca_core.operators.covariance import _already_centered


def _former(X, mean):
    if X.shape[0] == 0:
        return True
    scale = np.maximum(X.max(axis=0), -X.min(axis=0))
    return bool(np.all(np.abs(mean) <= 8 * np.finfo(float).eps * scale))


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 6), st.integers(1, 7), st.integers(0, 2**31 - 1), st.sampled_from(["raw", "centered", "one"]))
def test_same_boolean_as_the_whole_matrix_test(m, n, seed, kind):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n)) * rng.choice([1e-8, 1.0, 1e6], n)
    if kind != "raw" and m:
        X = X - X.mean(axis=0)
        if kind == "one":  # one column off by a few roundings or by much more
            X[:, rng.integers(n)] += rng.choice([1e-17, 1e-15, 1e-3])
    mean = X.mean(axis=0) if m else np.zeros(n)
    assert _already_centered(X, mean) is _former(X, mean)


def test_decides_both_ways():
    X = np.arange(12.0).reshape(4, 3)
    assert not _already_centered(X, X.mean(axis=0))
    Xc = X - X.mean(axis=0)
    assert _already_centered(Xc, Xc.mean(axis=0))
    assert _already_centered(np.zeros((0, 3)), np.zeros(3))
