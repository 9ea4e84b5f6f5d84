"""Exponential-cost settings (issue 21, item 2): counted, estimated, left out or confirmed, capped."""

from __future__ import annotations

import itertools
import os
from math import comb
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import page_app
from ui import cost, jobs, state

ROOT = Path(__file__).resolve().parents[2]
os.environ.setdefault("NSPCA_DATA_DIR", str(ROOT.parent / "shared" / "datasets"))


def _brute_count(n: int, d: int) -> int:
    """2^d · C(n+1, d) by listing: every d-subset of the n+1 rows, times every sign pattern."""
    return sum(1 for _ in itertools.combinations(range(n + 1), d)) * len(list(itertools.product((1, -1), repeat=d)))


@pytest.mark.parametrize("n,d", [(5, 1), (6, 2), (8, 3), (9, 4), (7, 5)])
def test_candidate_count_matches_listing(n, d):
    assert cost.exact_candidates(n, d) == _brute_count(n, d)


def test_estimates_grow_and_the_rules_follow():
    assert cost.estimate_exact(12582, 2).seconds == 0.0  # d <= 2: the sweep, no guard
    small, big = cost.estimate_exact(64, 3), cost.estimate_exact(64, 5)
    assert 0 < small.seconds < big.seconds and big.candidates == 32 * comb(65, 5)
    assert cost.estimate_exact(64, 4).needs_confirmation  # d >= 4 always asks
    assert cost.estimate_exact(12582, 3).capped  # 10^12 candidates: not run at all
    assert "2^5·C(65, 5) = 264,316,416" in big.describe()


def _texts(elements) -> str:
    return " | ".join(str(e.value) for e in elements)


def test_compare_at_d5_leaves_out_the_exact_method_until_confirmed():
    """Issue 21: d = 5 on digits ran the exact spannogram for over 10 minutes."""
    at = page_app("compare.py", timeout=120, **{state.D: 5, state.EPS: 0.02, state.K: 5,
                                                  "cmp_methods": ["spannogram", "enet"]})
    at.run()
    jobs.REGISTRY.wait(120)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert "Left out: the exact spannogram at d = 5" in _texts(at.warning)
    assert "candidate supports" in _texts(at.warning)
    box = at.checkbox(key="cmp_exact_ok")
    assert "anyway" in box.label and box.value is False
    table = at.dataframe[0].value
    assert "spannogram" not in set(table["method"]) and "enet" in set(table["method"])


def test_mll_at_d3_is_capped_with_a_message():
    from nspca_core.datasets import is_available

    if not is_available("mll"):
        pytest.skip("MLL not found locally")
    at = page_app("compare.py", timeout=120, **{state.DATASET: "mll", state.D: 3, state.K: 10,
                                                  "cmp_methods": ["spannogram"]})
    at.run()
    assert not at.exception
    assert "cap" in _texts(at.warning) and "d ≤ 3" in _texts(at.warning)
    assert not at.checkbox  # nothing to confirm: it is not offered


def test_enet_estimate_counts_the_core_samples_and_scales_with_runs():
    from nspca_core.enet import enet_samples

    one = cost.estimate_enet(12582, 5, 0.02)
    assert one.candidates == enet_samples(5, 0.02, 12582) and one.method == "enet"
    fifteen = cost.estimate_enet(12582, 5, 0.02, runs=15)
    assert fifteen.seconds == pytest.approx(15 * one.seconds) and "× 15 values of k" in fifteen.describe()
    assert cost.estimate_enet(64, 3, 0.1).seconds < cost.estimate_enet(64, 5, 0.02).seconds


def test_variance_vs_k_asks_before_a_tiny_eps_at_d5_on_mll():
    """Issue 21 item 2: ε-net at d = 5, ε = 0.02 is ~1 minute per k on MLL: 15 values of k ask first."""
    from nspca_core.datasets import is_available

    if not is_available("mll"):
        pytest.skip("MLL not found locally")
    at = page_app("variance_vs_k.py", timeout=120, **{state.DATASET: "mll", state.D: 5, state.EPS: 0.02,
                                                        "vk_methods": ["enet"], "vk_band": False})
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    text = _texts(at.warning)
    assert "Left out: the ε-net at d = 5, ε = 0.02 draws" in text and "× 15 values of k" in text
    assert "Choose at least one algorithm" in _texts(at.info)
    assert not jobs.REGISTRY.active()  # nothing was started
