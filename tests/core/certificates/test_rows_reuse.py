"""Issue 39 target 1 on wide data, fourteenth round (helper genek14): the aimed refinements' joint anchored tests
(``coupled._aimed``) reuse the candidate lists the lazy light route's first test built on ``A_SS`` at kS
(``coupled.light_S``'s ``lazy["rows"]``, handed on by ``coupled.light_refined``) instead of building their own at
the largest sparsity they ask (golub-shaped k = 200: one ``AnchorRows`` of 1,229 x 784 fewer).  Lists kept for a
larger k are valid for every smaller sparsity (``anchor.anchored_joint_test``: ``ks <= rows.k``; that premise is
test_joint_anchor's ``test_joint_test_proves_only_true_bounds``, lists at kmax, sparsities 2..kmax); each bound the
reuse proves is checked against brute force, and the reuse has a counting test on both sides of its condition."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nspca_core.certificates import _settings as S
from nspca_core.certificates import anchor, coupled, route
from nspca_core.certificates.anchor import AnchorRows
from nspca_core.operators.cov import Cov

from tests.bruteforce import brute_opt
from tests.core.certificates.test_split_cheaper import _force_split
from tests.core.certificates.test_split_coupled import _modules

TINY = settings(max_examples=30, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _spy_aimed(monkeypatch):
    """Records per ``_aimed`` call: the rows handed in (or None), S's matrix, and the sharpened values after it."""
    calls: list = []
    real = coupled._aimed

    def aimed(covS, certS, stS, kS, BT, k, pair, cross, lower, aim, sharper, *a, rows=None, **kw):
        out = real(covS, certS, stS, kS, BT, k, pair, cross, lower, aim, sharper, *a, rows=rows, **kw)
        calls.append({"rows": rows, "A": covS.dense(), "kS": kS, "sharper": dict(sharper)})
        return out

    monkeypatch.setattr(coupled, "_aimed", aimed)
    return calls


@TINY
@given(st.integers(9, 12), st.integers(6, 8), st.integers(4, 7), st.integers(0, 2**31 - 1))
def test_refinements_on_the_reused_rows_hold_against_bruteforce(monkeypatch, n, size, k, seed):
    """A one-k split certificate through the lazy light route (thin data, 6 samples): every ``B_S(i)`` the aimed
    refinements prove on the light route's rows is at least S's optimum at i (enumeration on ``A_SS``), and the
    certificate is at least the whole problem's optimum."""
    _force_split(monkeypatch, size)
    monkeypatch.setattr(S, "_LAZY_S", True)
    calls = _spy_aimed(monkeypatch)
    X = _modules(np.random.default_rng(seed), 6, n, 3)
    A = X.T @ X / X.shape[0]
    c = route._certify_large(Cov(X, None), k, None, "auto", None)
    assert c.upper_bound >= brute_opt(A, k)[0] * (1 - 1e-12)
    for call in calls:
        AS = call["A"]
        for i, v in call["sharper"].items():
            if np.isfinite(v):
                assert v >= brute_opt(AS, int(i))[0] * (1 - 1e-12), (i, v)


def _count_rows(monkeypatch) -> list:
    made: list = []
    real = anchor.AnchorRows.__init__

    def init(self, A, k, *a, **kw):
        made.append(int(k))
        real(self, A, k, *a, **kw)

    monkeypatch.setattr(anchor.AnchorRows, "__init__", init)
    return made


def test_aimed_builds_no_rows_where_the_light_routes_cover_its_sparsities(monkeypatch):
    """Counting, both sides of the reuse's condition (``rows.k >= `` the largest sparsity asked): one-k split
    certificates whose aimed refinements ran a joint test build no candidate lists of their own when handed the
    light route's (at kS), and build one when the lists handed in are for a smaller k (or none are)."""
    _force_split(monkeypatch, 7)
    monkeypatch.setattr(S, "_LAZY_S", True)
    calls = _spy_aimed(monkeypatch)
    made = _count_rows(monkeypatch)
    real_aimed = coupled._aimed
    shrink = {"on": False}

    def aimed(*a, rows=None, **kw):
        if shrink["on"] and rows is not None:  # (the other side: lists kept for k = 2 only)
            rows = AnchorRows(a[0].dense(), 2)
        before = len(made)
        out = real_aimed(*a, rows=rows, **kw)
        aimed.built.append(len(made) - before)
        return out

    aimed.built = []
    monkeypatch.setattr(coupled, "_aimed", aimed)
    reused = rebuilt = 0
    for seed in range(60):
        X = _modules(np.random.default_rng(seed), 6, 12, 3)
        for on in (False, True):
            shrink["on"] = on
            calls.clear(), aimed.built.clear()
            route._certify_large(Cov(X, None), 6, None, "auto", None)
            for call, built in zip(calls, aimed.built):
                if call["rows"] is None or not call["sharper"]:
                    continue  # (no lists handed in, or no joint test ran)
                if call["rows"].k >= 3 and not on:
                    assert built == 0
                    reused += 1
                if on:
                    rebuilt += built >= 1
        if reused and rebuilt:
            break
    assert reused, "no case with the light route's rows handed to a joint test: the test covers nothing"
    assert rebuilt, "no case where lists for a smaller k were rebuilt: the test covers nothing"
