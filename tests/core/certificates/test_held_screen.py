"""The sparse route's split screen (issue 39, corpus26): at most ``max(_SPLIT_MIN, sparse_route._HELD_PER_K k)``
features, never more than the split bound's own ``_settings.screened_size``; counted on both sides of the
cap, and every bound on the smaller screen holds against brute force."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core import certify, fit
from nspca_core.certificates import _settings as S
from nspca_core.certificates import single
from nspca_core.certificates import sparse_route as R
from tests.core.certificates.test_sparse_route import _counts, _failing_top, corpora, split_against_brute


def test_screened_size_cap_on_both_sides():
    """``per_k`` caps the screen at ``max(_SPLIT_MIN, per_k k)``: not below _SPLIT_MIN, never above the default."""
    cfg = S._EFFORT["auto"]
    n = 2000
    per_k = R._HELD_PER_K
    edge = S._SPLIT_MIN // per_k  # (per_k k <= _SPLIT_MIN up to here)
    for k in (3, 10, edge, edge + 1, edge + 20, 100, 200):
        own = S.screened_size(n, k, cfg)
        capped = S.screened_size(n, k, cfg, per_k=per_k)
        assert capped == min(own, max(S._SPLIT_MIN, per_k * k))
        assert capped <= own
        assert (capped < own) == (own > max(S._SPLIT_MIN, per_k * k))
    assert S.screened_size(n, edge, cfg, per_k=per_k) == S._SPLIT_MIN
    assert S.screened_size(n, edge + 20, cfg, per_k=per_k) == per_k * (edge + 20)
    assert S.screened_size(n, 100, cfg, per_k=2 * S._SPLIT_PER_K) == S.screened_size(n, 100, cfg)  # (a cap only)
    assert S.screened_size(40, 100, cfg, per_k=per_k) == 40  # (n)


def _first_screen(monkeypatch, held: float, k: int = 4, levels: list | None = None):
    """The size of the sparse route's first split screen on a 60 x 24 corpus at k (screens of ``max(2, 3 k)``
    features, the held cap ``held``; the split route forced); ``levels``: gets each DNN run's ``cut_below``."""
    sizes = []
    real = single.screened_size
    monkeypatch.setattr(single, "screened_size", lambda *a, **kw: sizes.append(real(*a, **kw)) or sizes[-1])
    if levels is not None:
        dd = single.dense_dual
        monkeypatch.setattr(single, "dense_dual",
                            lambda *a, **kw: levels.append((a[0].shape[0], kw.get("cut_below"))) or dd(*a, **kw))
    monkeypatch.setattr(S, "_SPLIT_MIN", 2)
    monkeypatch.setattr(S, "_SPLIT_PER_K", 3)
    monkeypatch.setattr(S, "_SPLIT_BRANCH_MAX_K", 2)
    monkeypatch.setattr(R, "_SPLIT_SHARE", np.inf)
    monkeypatch.setattr(R, "_HELD_PER_K", held)
    _failing_top(monkeypatch)
    X = sp.csr_matrix(_counts(11, 60, 24, 3.0, 0.5).astype(float))
    x = fit(X, k=k, certify=False).x
    c = certify(X, k=k, x=x)
    assert c.info["route"].startswith("split")
    return sizes[0], c


@pytest.mark.parametrize("held, size", [(2.0, 8), (2.5, 10), (3.0, 12), (4.0, 12), (0.25, 2)])
def test_sparse_route_screen_counted(monkeypatch, held, size):
    """The first screen is ``min(3 k, max(2, held k))`` features at k = 4: 8 / 10 below the default 12, 12 at and
    above it (a cap, never a larger screen), 2 at the minimum."""
    got, c = _first_screen(monkeypatch, held)
    assert got == size
    assert c.upper_bound >= c.lower


@pytest.mark.parametrize("held, capped", [(2.0, True), (2.75, True), (3.0, False), (4.0, False)])
def test_cut_level_where_capped_counted(monkeypatch, held, capped):
    """S's DNN gets _S_CUT_BELOW_CAPPED exactly where the cap makes the screen smaller than the default (held k <
    3 k at k = 4: 8 / 11 features against 12), _S_CUT_BELOW where it does not (12: the cap at or above it)."""
    levels: list = []
    size, _ = _first_screen(monkeypatch, held, levels=levels)
    assert (size < 12) == capped
    m, level = levels[0]  # (S's run: the screen and the answer's support)
    assert size <= m < 24 and level == (R._S_CUT_BELOW_CAPPED if capped else R._S_CUT_BELOW)
    assert R._S_CUT_BELOW_CAPPED != R._S_CUT_BELOW


@settings(max_examples=40, deadline=None)
@given(D=corpora(), center=st.booleans(), k=st.integers(3, 7), held=st.sampled_from([0.5, 0.75, 1.0]))
def test_capped_screen_against_brute_force(D, center, k, held):
    """The split route on the capped screen (the default screen max(2, k) features, below n; the cap ``held`` k,
    at least 2; S adds the answer's support) at least the exact optimum; the feasible value x's."""
    out = split_against_brute(D, center, k, [(R, "_HELD_PER_K", held)])
    if out is None:
        return
    c, opt = out
    assert c.info["route"] in ("split(sparse)", "split+dense(sparse)")
    # (every bound itself, not only upper_bound: that is at least x's value, which is often the optimum here)
    assert min(c.bounds.values()) >= opt * (1 - 1e-12) - 1e-300
    assert c.upper_bound >= opt * (1 - 1e-12) - 1e-300
    assert c.lower <= opt * (1 + 1e-12) + 1e-300
