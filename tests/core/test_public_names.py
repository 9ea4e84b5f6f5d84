"""The public names of ``nspca_core`` (issue 40, item 14: ``nc.certify_components``)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import nspca_core as nc
from tests.core.peers.test_bipartite_disjoint import brute_joint


@pytest.mark.parametrize("name", nc.__all__)
def test_every_public_name_resolves(name):
    """Each name of ``__all__`` loads, from the module the lazy table names."""
    assert name in dir(nc) and getattr(nc, name) is not None
    if name in nc._LAZY:
        module = importlib.import_module(f"nspca_core.{nc._LAZY[name]}")
        assert getattr(module, name) is getattr(nc, name)


def test_certify_components_is_exported_and_certifies():
    from nspca_core.certificates import certify_components

    assert nc.certify_components is certify_components and "certify_components" in nc.__all__
    rng = np.random.default_rng(3)
    X = rng.standard_normal((20, 5))
    X -= X.mean(axis=0)
    A = X.T @ X / X.shape[0]
    res = nc.components(cov=A, n_components=2, k=2, strategy="bipartite")
    cert = nc.certify_components(cov=A, k=2, loadings=res.loadings)
    opt = brute_joint(A, 2, 2)
    assert cert.upper_bound >= opt * (1 - 1e-12)
    assert cert.lower == pytest.approx(res.total_variance, rel=1e-12)
