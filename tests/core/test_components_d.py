"""``d`` reaches the bipartite strategy through ``components`` and the CLI, and is recorded."""

from __future__ import annotations

import json

import numpy as np
import pytest

import nspca_core as nc
from nspca_core.operators.cov import Cov
from nspca_core.peers.bipartite import bipartite_components


def _data(m=60, n=14, seed=0):
    rng = np.random.default_rng(seed)
    Z = (rng.standard_normal((m, 6)) * np.linspace(3, 0.8, 6)) @ rng.standard_normal((6, n))
    Z = Z + 0.2 * rng.standard_normal((m, n))
    return Z - Z.mean(axis=0)


def _in_pca_order(ref, c):
    """The peer's loadings in the order ``components`` returns them (decreasing variance; the
    order found in ``info["extraction_order"]``)."""
    order = c.info.get("extraction_order", list(range(ref.loadings.shape[1])))
    return ref.loadings[:, order]


@pytest.mark.parametrize("d", [1, 2, 5])
def test_components_passes_d_to_bipartite(d):
    X = _data()
    c = nc.components(X, n_components=2, k=3, strategy="bipartite", d=d, samples=300, center=False)
    ref = bipartite_components(Cov(X), 2, 3, d=d, samples=300, seed=0, nonneg=True)
    np.testing.assert_array_equal(c.loadings, _in_pca_order(ref, c))
    assert c.params["d"] == d and c.info["samples"] == 300


def test_bipartite_default_d_is_the_number_of_components():
    X = _data()
    c = nc.components(X, n_components=4, k=3, strategy="bipartite", samples=200, center=False)
    ref = bipartite_components(Cov(X), 4, 3, samples=200, seed=0, nonneg=True)
    np.testing.assert_array_equal(c.loadings, _in_pca_order(ref, c))
    assert c.params["d"] == 4
    assert nc.components(X, n_components=2, k=3, strategy="deflation-remove").params["d"] == 3


def test_d_changes_the_bipartite_answer():
    """Different sketch ranks give different answers on this data (so d is not ignored)."""
    X = _data(seed=3)
    answers = {d: nc.components(X, n_components=3, k=3, strategy="bipartite", d=d, samples=400).loadings
               for d in (1, 5)}
    assert not np.array_equal(answers[1], answers[5])


def test_bipartite_option_checked():
    with pytest.raises(nc.InputError, match=r"bogus"):
        nc.components(_data(), n_components=2, k=3, strategy="bipartite", bogus=1)


@pytest.mark.parametrize("given,expected", [(None, 4), (2, 2)])
def test_cli_records_the_d_used(tmp_path, given, expected):
    from nspca_core.cli import main

    np.save(tmp_path / "x.npy", _data())
    argv = [str(tmp_path / "x.npy"), "--k", "3", "--components", "4", "--strategy", "bipartite",
            "--out", str(tmp_path / "out"), "--quiet", "--no-certify"]
    if given is not None:
        argv += ["--d", str(given)]
    assert main(["fit", *argv]) == 0
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["parameters"]["d"] == expected
    ref = nc.components(_data(), n_components=4, k=3, strategy="bipartite", d=expected)
    assert abs(summary["total_variance"] - float(ref.variance.sum())) <= 1e-9 * summary["total_variance"]
