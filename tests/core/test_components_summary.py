"""Fewer components than asked for are said in the result's summary, with the reason, and in
the CLI's output (issue 40, item 13)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nspca_core as nc
from nspca_core import cli


def _positive(n: int, seed: int) -> np.ndarray:
    """Centered data whose features all correlate positively (one factor plus noise): the
    first deflation-remove component takes as many features as k allows."""
    rng = np.random.default_rng(seed)
    f = rng.standard_normal((40, 1))
    X = f * (1.0 + rng.random(n)) + 0.3 * rng.standard_normal((40, n))
    return X - X.mean(axis=0)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(3, 7), r=st.integers(2, 3), seed=st.integers(0, 2**31 - 1))
def test_summary_says_how_many_came_back_and_why(n, r, seed):
    X = _positive(n, seed)
    k = n - 1  # the first component takes n - 1 features, the second the last one
    res = nc.components(X, n_components=r, k=k, certify=True)
    got = res.n_components
    assert res.summary.endswith(".") and f"total variance {res.total_variance:.6g}" in res.summary
    if got < r:
        assert res.shortfall == res.info["stopped_early"]
        assert f"{got} of the {r} components asked for" in res.summary
        assert f"Fewer components: all {n} features were used by the first {got} components" in res.summary
        # the remedy it names works: the joint strategy returns them all, disjoint
        joint = nc.components(X, n_components=r, k=k, strategy="bipartite")
        assert joint.n_components == r
        assert np.all(np.count_nonzero(joint.loadings, axis=1) <= 1)
        smaller = nc.components(X, n_components=r, k=n // r)
        assert smaller.n_components == r and not smaller.shortfall
    else:
        assert res.shortfall == "" and "Fewer" not in res.summary
    if np.isfinite(res.ratio):
        assert f"certified ratio {res.ratio:.4f}" in res.summary


def test_two_of_three_is_said_in_the_summary():
    X = _positive(5, 1)
    res = nc.components(X, n_components=3, k=4)
    assert res.n_components == 2 and "stopped_early" in res.info
    assert res.summary.startswith("2 of the 3 components asked for (strategy 'deflation-remove', method 'auto')")
    assert "Fewer components: all 5 features were used by the first 2 components" in res.summary
    full = nc.components(X, n_components=2, k=2)
    assert full.summary.startswith("2 components (") and full.shortfall == ""


def test_cli_prints_and_saves_the_shortfall(tmp_path, capsys):
    X = _positive(5, 1)
    path = tmp_path / "x.csv"
    np.savetxt(path, X, delimiter=",")
    code = cli.main(["fit", str(path), "--k", "4", "--components", "3", "--out", str(tmp_path / "o"), "--quiet"])
    out, err = capsys.readouterr()
    assert code == 0, err
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert len(summary["components"]) == 2
    assert "2 of the 3 components asked for" in summary["summary"]
    assert summary["summary"] in out.splitlines()
    code = cli.main(["fit", str(path), "--k", "2", "--components", "2", "--out", str(tmp_path / "p"), "--quiet"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "Fewer components" not in out
    assert json.loads((tmp_path / "p" / "summary.json").read_text())["summary"].startswith("2 components")


@pytest.mark.parametrize("strategy", ["bipartite", "deflation-project", "quasi-orthogonal"])
def test_other_strategies_have_a_summary(strategy):
    X = _positive(6, 2)
    res = nc.components(X, n_components=2, k=2, strategy=strategy)
    assert res.summary.startswith(f"2 components (strategy {strategy!r}") and not res.shortfall
