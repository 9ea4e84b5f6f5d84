"""The seed is recorded one way (``params["random_state"]``), by one helper (issue 37, item 3)."""

from __future__ import annotations

import numpy as np
import pytest

import nspca_core as nc
from nspca_core import solve
from nspca_core.operators.covariance import as_cov
from nspca_core.peers import bipartite_components, deflation_components, em_components, zass_components
from nspca_core.result import seed_param


def _X():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((25, 8))
    return X - X.mean(axis=0)


def _seeds(params, results=()):
    return {params.get("random_state")} | {r.params.get("random_state") for r in results if "random_state" in r.params}


def test_one_helper():
    assert solve.seed_param is seed_param
    assert seed_param(np.random.default_rng(1)) == "generator"
    assert seed_param(7) == 7 and seed_param(None) is None


@pytest.mark.parametrize("method", ["auto", "spannogram", "enet", "em", "tpower", "zass"])
def test_fit_records_a_generator_one_way(method):
    r = nc.fit(_X(), k=3, method=method, random_state=np.random.default_rng(0), certify=False)
    assert r.params["random_state"] == "generator" and "seed" not in r.params


def test_components_and_peers_record_a_generator_one_way():
    C = as_cov(_X())
    g = np.random.default_rng
    for res in (em_components(C, 2, 3, seed=g(0)), em_components(C, 2, 3, seed=g(0), nonneg=False),
                em_components(C, 2, 3, seed=g(0), min_angle=70), zass_components(C, 2, seed=g(0)),
                bipartite_components(C, 2, 3, seed=g(0), samples=20),
                deflation_components(C, 2, 3, method="tpower", seed=g(0), d=2),
                nc.components(_X(), n_components=2, k=3, random_state=g(0))):
        assert _seeds(res.params, res.results) - {None} == {"generator"}, res.method
