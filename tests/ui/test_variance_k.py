"""ui/variance_k.py — the numbers of "Variance vs k", without a browser: the k axis, and the
certified band checked against a brute-force optimum on tiny inputs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

from nspca_core.certificates.schedule import OPTIMAL_TOLERANCE
from tests.bruteforce import brute_opt
from ui import variance_k as vk
from ui.work import QUICK


@pytest.mark.parametrize("n,points,current", [(64, 15, 10), (64, 6, 8), (361, 15, 40), (12582, 15, 10),
                                              (5, 3, 4), (64, 64, 7), (10, 9, 1), (100, 3, 50)])
def test_k_grid_has_exactly_the_slider_count_and_the_sidebar_k(n, points, current):
    ks = vk.k_grid(n, points, current)
    assert len(ks) == min(points, n)  # the slider's number is the caption's number
    assert current in ks and list(ks) == sorted(set(ks)) and 1 <= ks[0] and ks[-1] <= n
    assert ks[-1] == n and (ks[0] == 1 or current == ks[0])


def _opt(seed: int, m: int = 7, n: int = 5):
    X = np.random.default_rng(seed).standard_normal((m, n))
    A = X.T @ X / m
    return X, np.array([brute_opt(A, k)[0] for k in range(1, n + 1)])


def _cert(upper: float, lower: float, *, kind="dnn", probabilistic=False) -> dict:
    return dict(upper=upper, lower=lower, kind=kind, optimal=False, probabilistic=probabilistic, x=None)


@settings(max_examples=40, deadline=None, print_blob=True)
@given(seed=hst.integers(0, 10_000), data=hst.data())
def test_band_holds_the_brute_force_optimum_and_is_monotone(seed, data):
    """Feasible values below OPT_k and bounds above it, some missing, from curves, both passes
    of the certificates and the store: the band's edges enclose OPT_k at every k, the lower edge
    is at least every value given at k' <= k, the upper edge at most every bound at k' >= k."""
    X, opt = _opt(seed)
    ks = tuple(range(1, len(opt) + 1))
    frac = hst.floats(0.3, 1.0)
    maybe = lambda v: data.draw(hst.sampled_from([v, np.nan]))  # noqa: E731 - a draw per entry
    values = np.array([[maybe(o * data.draw(frac)) for _ in range(2)] for o in opt])
    results = {}
    for k, o in zip(ks, opt):
        if data.draw(hst.booleans()):
            results[k] = _cert(o * (1 + data.draw(hst.floats(0, 2))), o * data.draw(frac))
        if data.draw(hst.booleans()):
            results[(QUICK, k)] = _cert(o * (1 + data.draw(hst.floats(0, 3))), -np.inf, kind="fast")
    b = vk.band(ks, values, results)
    assert not b.refused
    assert np.all(~np.isfinite(b.upper) | (b.upper >= opt * (1 - 1e-12)))
    assert np.all(~np.isfinite(b.best) | (b.best <= opt * (1 + 1e-12)))
    given_best = np.nanmax(np.where(np.isfinite(values), values, -np.inf), axis=1)
    for j in range(len(ks)):
        below = given_best[: j + 1]
        if np.isfinite(below).any():
            assert b.best[j] >= below.max()
        bounds = [results[k]["upper"] for k in ks[j:] if k in results] \
            + [results[(QUICK, k)]["upper"] for k in ks[j:] if (QUICK, k) in results]
        if bounds:
            assert b.upper[j] <= min(bounds)
    up, lo = b.upper[np.isfinite(b.upper)], b.best[np.isfinite(b.best)]
    assert np.all(np.diff(up) >= 0) and np.all(np.diff(lo) >= 0)  # OPT_k is nondecreasing in k
    assert b.full == sum(k in results for k in ks)
    assert np.all(b.optimal <= (b.proved & (b.upper - b.best <= OPTIMAL_TOLERANCE * b.upper)))


def test_band_without_certificates_is_the_best_curve_and_names_its_algorithm():
    values = np.array([[1.0, 2.0], [np.nan, 3.0], [5.0, 4.0], [np.nan, np.nan]])
    b = vk.band((1, 2, 3, 4), values)
    assert b.best[:3].tolist() == [2.0, 3.0, 5.0] and np.isnan(b.best[3])
    assert b.best_idx.tolist() == [1, 1, 0, -1]
    assert np.isnan(b.upper).all() and not b.optimal.any() and b.from_k is None


def test_a_bound_below_a_feasible_answer_is_refused():
    values = np.array([[1.0], [2.0], [3.0]])
    b = vk.band((1, 2, 3), values, {1: _cert(1.5, 1.0), 2: _cert(1.9, 2.0), 3: _cert(3.5, 3.0)})
    assert b.refused == (2,)  # 1.9 < 2.0: cannot hold
    assert np.isnan(b.upper[1]) and not b.optimal[1] and b.upper[0] == 1.5 and b.upper[2] == 3.5


def test_the_store_tightens_a_bound_and_says_which_k_proved_it():
    values = np.array([[1.0], [2.0]])
    stored = dict(upper=np.array([np.inf, 2.0]), lower=np.array([-np.inf, 2.0]), kind=["", "exact"],
                  optimal=np.array([False, True]), probabilistic=np.array([False, False]),
                  upper_from=np.array([-1, 7]))
    b = vk.band((1, 2), values, {1: _cert(1.5, 1.0), 2: _cert(2.6, 2.0, probabilistic=True)}, stored)
    assert b.upper.tolist() == [1.5, 2.0] and b.kinds == ["dnn", "exact"] and b.optimal.tolist() == [False, True]
    assert b.from_k[0].tolist() == [1, 7] and b.probabilistic  # the quick pass at k=2 was probabilistic


def test_frames_and_table_follow_the_band():
    values = np.array([[1.0, np.nan], [2.0, 2.5]])
    b = vk.band((1, 2), values, {1: _cert(2.0, 1.0), 2: _cert(2.5, 2.5)})
    curves = vk.curves_frame(["a", "b"], (1, 2), values, 2.0, b.upper)
    assert curves[["method", "k"]].values.tolist() == [["a", 1], ["a", 2], ["b", 2]]
    assert curves["value"].tolist() == [0.5, 1.0, 1.25] and curves["ratio"].tolist() == [0.5, 0.8, 1.0]
    band = vk.band_frame((1, 2), b, 2.0)
    assert band["upper"].tolist() == [1.0, 1.25] and band["optimal"].tolist() == [False, True]
    table = vk.table((1, 2), ["a", "b"], values, np.ones((2, 2)), b, 2.0, certified=True, paper=None)
    assert table["certified_ratio"].tolist() == [0.5, 1.0] and "paper_bound" not in table
    assert table["upper_from_k"].tolist() == [1, 2]


def test_tighten_status_counts_improved_k_and_exact_proofs():
    results = {1: {"effort": "exact"}, 2: {"effort": "full"}, 3: {"effort": "exact", "skipped": True}, 4: None}
    text = vk.tighten_status(results, {1: 0.5, 2: 0.9}, (1, 2, 3), np.array([0.6, 0.9, 0.7]))
    assert text == "2 of 3 k improved, worst ratio 0.500 → 0.600; 1 exact proofs tried"


def test_variance_of_is_xT_A_x():
    X = np.random.default_rng(0).standard_normal((6, 4))
    x = np.array([0.5, 0.5, 0.5, 0.5])
    assert vk.variance_of(X, x) == pytest.approx(x @ (X.T @ X / 6) @ x)
