"""Every strategy of the registry (``nspca_core.methods.STRATEGIES``), through every front.

The tests read the registry, so a strategy added by its function and one ``StrategySpec`` is checked
here unchanged (CONTRIBUTING.md, "One strategy"): feasible components never above the brute-force
optimum, the certificates above every component, what ``disjoint``, ``partial``, ``dask`` and
``options`` promise, the estimator, the CLI's help and the parameter table's messages.
"""

from __future__ import annotations

import numpy as np
import pytest

import nspca_core as nc
import nspca_core.api
from nspca_core.estimator import NonnegativeSparsePCA
from nspca_core.methods import DEFAULT_STRATEGY, STRATEGIES, STRATEGY_NAMES
from tests.bruteforce import brute_opt


def _data(seed=0, m=30, n=8):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, 3)) @ np.abs(rng.standard_normal((3, n))) + 0.3 * rng.standard_normal((m, n))
    return X - X.mean(axis=0)


def test_registry_is_the_front_s_list():
    assert nc.api.STRATEGIES == STRATEGY_NAMES and DEFAULT_STRATEGY == STRATEGY_NAMES[0]
    for name, spec in STRATEGIES.items():
        assert spec.name == name and spec.label and callable(spec.run())
        assert spec.max_components in ("n_features", "n_features // k", "samples")
        assert spec.d_default in ("", "n_components")


@pytest.mark.parametrize("strategy", STRATEGY_NAMES)
def test_components_are_feasible_and_never_above_the_optimum(strategy):
    X = _data(1)
    A = X.T @ X / len(X)
    k, r = 2, 3
    cr = nc.components(X, n_components=r, k=k, strategy=strategy, certify=True)
    assert cr.strategy == strategy and 1 <= cr.n_components <= r
    best = brute_opt(A, k)[0]
    L = cr.loadings
    assert L.min() >= 0 and np.allclose(np.linalg.norm(L, axis=0), 1.0)
    assert (np.count_nonzero(L, axis=0) <= k).all()
    for j in range(cr.n_components):
        assert L[:, j] @ A @ L[:, j] <= best * (1 + 1e-9)
    for res in cr.results:  # each certificate bounds its component's variance
        assert res.upper_bound >= res.variance * (1 - 1e-9)
    if STRATEGIES[strategy].disjoint:
        supports = [set(np.flatnonzero(L[:, j])) for j in range(cr.n_components)]
        assert sum(map(len, supports)) == len(set().union(*supports))


@pytest.mark.parametrize("strategy", STRATEGY_NAMES)
def test_same_seed_same_components(strategy):
    X = _data(2)
    a = nc.components(X, n_components=2, k=3, strategy=strategy, certify=False, random_state=4)
    b = nc.components(X, n_components=2, k=3, strategy=strategy, certify=False, random_state=4)
    assert np.array_equal(a.loadings, b.loadings)


@pytest.mark.parametrize("strategy", STRATEGY_NAMES)
def test_partial_and_k_per_component_as_the_registry_says(strategy):
    X = _data(3)
    first = nc.components(X, n_components=1, k=2, strategy=DEFAULT_STRATEGY, certify=False)
    if STRATEGIES[strategy].partial:
        more = nc.components(X, n_components=2, k=[2, 3], strategy=strategy, partial=first, certify=False)
        assert np.array_equal(more.loadings[:, 0], first.loadings[:, 0])
    else:
        with pytest.raises(nc.InputError, match="`partial` continues a deflation"):
            nc.components(X, n_components=2, k=2, strategy=strategy, partial=first, certify=False)
        with pytest.raises(nc.InputError, match="a sparsity per component"):
            nc.components(X, n_components=2, k=[2, 3], strategy=strategy, certify=False)


@pytest.mark.parametrize("strategy", STRATEGY_NAMES)
def test_its_options_are_checked_by_the_table(strategy):
    X = _data(4)
    with pytest.raises(nc.InputError, match=r"unknown option\(s\) \['bogus'\]"):
        nc.components(X, n_components=2, k=2, strategy=strategy, bogus=1)
    for option in STRATEGIES[strategy].options:  # a value no rule allows: an InputError naming it
        if option == "effort":
            continue
        with pytest.raises(nc.InputError, match=f"`{option}` must be"):
            nc.components(X, n_components=2, k=2, strategy=strategy, **{option: "not a value"})


@pytest.mark.parametrize("strategy", STRATEGY_NAMES)
def test_dask_support_as_the_registry_says(strategy):
    da = pytest.importorskip("dask.array")
    X = da.from_array(_data(5), chunks=(10, 8))
    if STRATEGIES[strategy].dask:
        cr = nc.components(X, n_components=2, k=2, strategy=strategy, method="tpower", certify=False)
        assert cr.n_components >= 1
    else:
        with pytest.raises(nc.InputError, match="for Dask data"):
            nc.components(X, n_components=2, k=2, strategy=strategy, method="tpower", certify=False)


@pytest.mark.parametrize("strategy", STRATEGY_NAMES)
def test_estimator_and_cli_offer_it(strategy):
    from nspca_core.cli.options import _parser

    X = _data(6)
    est = NonnegativeSparsePCA(n_components=2, k=2, strategy=strategy, certify=False, random_state=0).fit(X)
    assert est.components_.shape[1] == X.shape[1] and est.components_.min() >= 0
    fit_help = _parser()._subparsers._group_actions[0].choices["fit"].format_help()
    assert strategy in fit_help
