"""The split bound's S from the sparse route runs its DNN's cut rounds below ``sparse_route._S_CUT_BELOW`` of S's
own ratio (issue 39, corpus17: S's ratio is not the split's; where A_SS's Perron vector v is positive with
(1^T v)^2 <= k the plain DNN's optimum is lambda_1(A_SS) itself, only the cuts go below it).  The level is counted
on both sides of the plain run's ratio; the plain run itself does not move with it; every bound holds against
brute force with the level at the rule's value and above."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core import certify, fit
from nspca_core.certificates import _settings as S
from nspca_core.certificates import dual, single
from nspca_core.certificates import sparse_route as R
from tests.bruteforce import brute_opt
from tests.core.certificates.test_sparse_route import _counts, _failing_top, corpora, split_against_brute


def _positive(seed: int, n: int) -> np.ndarray:
    """A positive matrix (its Perron vector positive): the plain DNN's bound at k = n is its lambda_1 (v v^T is
    feasible: (1^T v)^2 <= n)."""
    rng = np.random.default_rng(seed)
    Y = rng.random((3 * n, n)) + 0.2
    return Y.T @ Y / (3 * n)


def _run(monkeypatch, A, k, lower, cut_below):
    """_dnn's run on A (no x: the screening start), the cut rounds recorded: ``(cut_calls, plain values, info)``."""
    real, calls = dual._cut_rounds, []

    def rec(A_, k_, st_, val, lower_, *a, **kw):
        calls.append(float(val))
        return real(A_, k_, st_, val, lower_, *a, **kw)

    monkeypatch.setattr(dual, "_cut_rounds", rec)
    val, st, info = dual._dnn(A, k, lower, "auto", None, iters=40, cut_below=cut_below)
    return calls, val, info


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(8, 14))
def test_cut_level_on_both_sides_of_the_plain_ratio(seed, n):
    """Lower at 0.975 lambda_1 (S._CUT_BELOW = 0.97 below it): the cut rounds run exactly where ``cut_below`` is
    above the plain run's ratio lower / val (just above: run; just below, or None: not), the plain run's value the
    same float on both sides, at least lambda_1 (the reason of the rule); every value returned >= brute force."""
    import pytest

    A = _positive(seed, n)
    k = n
    lam1 = float(np.linalg.eigvalsh(A)[-1])
    lower = 0.975 * lam1
    assert S._CUT_BELOW < 0.975
    with pytest.MonkeyPatch.context() as mp:
        calls, v_all, _ = _run(mp, A, k, lower, 1.0)
    assert len(calls) == 1  # (1.0: cut rounds below the target 0.999)
    val = calls[0]
    assert val >= lam1 * (1 - 1e-12)
    q = lower / val
    assert S._CUT_BELOW < q < 1 - S._EFFORT["auto"]["target_gap"]
    for level, runs in ((q * (1 + 1e-9), True), (q * (1 - 1e-9), False), (None, False)):
        with pytest.MonkeyPatch.context() as mp:
            got, v, info = _run(mp, A, k, lower, level)
        assert (len(got) == 1) == runs and ("cuts" in info) == runs
        if runs:
            assert got[0] == val  # (the plain run does not read the level)
        else:
            assert v == val
        assert v <= val
    opt, _ = brute_opt(A, k)
    assert min(v_all, val) >= opt * (1 - 1e-12)


@settings(max_examples=30, deadline=None)
@given(D=corpora(), center=st.booleans(), k=st.integers(3, 7), level=st.sampled_from([R._S_CUT_BELOW, 1.0]))
def test_split_with_s_cuts_holds_against_brute_force(D, center, k, level):
    """The sparse route's split (the anchored test failing, S's DNN with its cut rounds below ``level`` of S's
    ratio: the rule's value or always) at least the exact optimum."""
    out = split_against_brute(D, center, k, [(R, "_S_CUT_BELOW", level)])
    if out is None:
        return
    c, opt = out
    assert c.info["route"] in ("split(sparse)", "split+dense(sparse)")
    assert c.upper_bound >= opt * (1 - 1e-12) - 1e-300


def test_sparse_route_passes_its_level(monkeypatch):
    """The sparse route hands _S_CUT_BELOW to the split route's S (and only there: the default None)."""
    seen = []
    real = single.dense_dual
    monkeypatch.setattr(single, "dense_dual",
                        lambda *a, **kw: seen.append((a[0].shape[0], kw.get("cut_below"))) or real(*a, **kw))
    monkeypatch.setattr(S, "_SPLIT_MIN", 2)
    monkeypatch.setattr(S, "_SPLIT_PER_K", 1)
    monkeypatch.setattr(S, "_SPLIT_BRANCH_MAX_K", 2)
    monkeypatch.setattr(R, "_SPLIT_SHARE", np.inf)
    monkeypatch.setattr(R, "_SPLIT_STANDS", np.inf)
    monkeypatch.setattr(R, "_S_OWN", ())
    _failing_top(monkeypatch)
    X = sp.csr_matrix(_counts(5, 40, 10, 4.0, 0.6).astype(float))
    k = 4
    x = fit(X, k=k, certify=False).x
    c = certify(X, k=k, x=x)
    assert c.info["route"] == "split+dense(sparse)"
    assert any(m < X.shape[1] and lvl == R._S_CUT_BELOW for m, lvl in seen)  # (S's run)
    assert all(lvl is None for m, lvl in seen if m == X.shape[1])
    assert (X.shape[1], None) in seen  # (the dense route's run on all n features: the default)
