"""Issue 39, the twenty-first round (helper thinpath27): :func:`route.certify_thin`'s dense fallback forms the n x n
A on the caller's covariance; a path runs every thin k on one covariance, and with A held its later k took other
routes than certify(k) on fresh data (unseen 80 x 2,200 genes: k = 58 1.05e-3 above certify(k) after the dense route
ran at k = 53).  The A formed there is dropped; an A the caller held stays."""

from __future__ import annotations


from nspca_core.certificates import route
from nspca_core.operators.covariance import as_cov

from tests.core.certificates.test_thin_route import _small_screens, _thin


def _cov(X):
    return as_cov(X, None, center=True)


def test_the_dense_fallback_leaves_the_covariance_as_found(monkeypatch):
    """Both sides of the fallback: where it runs (``_EAGER_FALLBACK`` -1: always) the A it formed is gone afterwards and
    the next k's certificate is certify(k)'s on fresh data, float for float; an A formed before is kept (the same
    object); where it does not run (``_EAGER_FALLBACK`` 2: never) no A is formed."""
    _small_screens(monkeypatch, 6)
    X = _thin(3, 8, 30)
    cov = _cov(X)
    assert route.split_cheaper(cov, 4, "auto")
    dense = []
    real = route._certify_dense
    monkeypatch.setattr(route, "_certify_dense", lambda *a, **kw: dense.append(1) or real(*a, **kw))
    monkeypatch.setattr(route, "_EAGER_FALLBACK", -1.0)
    route.certify_thin(cov, 3, None, "auto", None)
    assert dense and cov._A is None
    after = route.certify_thin(cov, 4, None, "auto", None)
    fresh = route.certify_thin(_cov(X), 4, None, "auto", None)
    assert (after.upper_bound, after.lower) == (fresh.upper_bound, fresh.lower)
    A = cov.dense()
    route.certify_thin(cov, 4, None, "auto", None)
    assert cov._A is A
    monkeypatch.setattr(route, "_EAGER_FALLBACK", 2.0)
    dense.clear()
    cov = _cov(X)
    route.certify_thin(cov, 4, None, "auto", None)
    assert not dense and cov._A is None
