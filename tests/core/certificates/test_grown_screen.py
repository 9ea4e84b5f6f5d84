"""Issue 39 (helper gene12): an "auto" split certificate whose rest T holds it below the aim
(``coupled.small_verdict`` False) also runs a screen ``screens._GROW`` times larger, the smaller bound
standing (``screens.grown``).  Both bounds are checked against brute force on tiny inputs; a path's run
carries the screen that stood."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from nspca_core.certificates import _settings as S
from nspca_core.certificates import coupled, route, screens, single
from nspca_core.operators.cov import Cov
from nspca_core.result import Certificate

from tests.bruteforce import brute_opt
from tests.core.certificates.test_small_screen import TINY, _force_small, _screens, modules_case
from tests.core.certificates.test_split_coupled import _modules


def _cert(lower: float, upper: float, coupled_: float, B_S: float, size: int) -> Certificate:
    return Certificate(upper_bound=upper, lower=lower, ratio=lower / upper, kind="split", bounds={"split": upper},
                       k=3, x=None, optimal=False, info={"coupled": coupled_, "B_S": B_S, "split_S": size})


@TINY
@given(st.integers(11, 13), st.integers(2, 3), st.integers(0, 2**31 - 1), st.booleans(), st.booleans())
def test_grown_screen_certificates_hold_against_bruteforce(monkeypatch, n, k, seed, given_x, force):
    """With the screen grown wherever it may (``force``: the verdict forced False) or by the rule, the
    certificate's bound is above OPT_k (enumeration), at most the first screen's, and of the same point."""
    _force_small(monkeypatch, per_k=2)
    monkeypatch.setattr(S, "_SMALL_FIRST", False)
    if force:
        monkeypatch.setattr(screens, "small_verdict", lambda *a: False)
    X, A, x = modules_case(seed, n, k, given_x)
    seen = _screens(monkeypatch)
    fired: list = []
    real = single.own_hopeless
    monkeypatch.setattr(single, "own_hopeless", lambda *a, **kw: (fired.append(real(*a, **kw)), fired[-1])[1])
    cert = route._certify_large(Cov(X, None), k, x, "auto", None)
    first = single._certify_split(Cov(X, None), k, x, "auto", None)
    opt, _ = brute_opt(A, k)
    assert cert.upper_bound >= opt * (1 - 1e-12)
    if True in fired:  # (certify(k)'s own screen skipped before its DNN, test_skip_own: the chosen screen's alone)
        assert cert.info["split_S"] == seen[1]  # (seen: the own screen, the chosen one, `first`)
        assert int(np.ceil(screens._CROSS * seen[0])) <= seen[1] <= seen[0]  # (chosen, 0.9x: not grown, wide26)
    else:
        assert cert.upper_bound <= first.upper_bound
    assert cert.lower <= opt * (1 + 1e-12)
    assert cert.lower == first.lower and cert.info["lower_source"] == first.info["lower_source"]
    if len(seen) > 2:  # (thin data: the screen chosen by the cross term, _CROSS times the first one's size, wide26)
        assert seen[1] == max(int(np.ceil(screens._CROSS * seen[0])), seen[1])


def test_a_path_run_carries_the_screen_that_stood():
    """With ``keep`` (a path's run) the kept screen is the one whose bound stands: the larger one's where its
    certificate is returned (its point's source kept), the first one's where the larger bound is no smaller."""
    d = replace(_cert(90.0, 100.0, 100.0, 50.0, 400), x=np.ones(3))
    d.info["lower_source"] = "fit(auto)"
    calls = []
    for upper, stands in ((99.0, True), (100.0, False)):
        keep = {"S": "first"}

        def split(cov, k, x, effort, callback, keep=None, gram=None, size=None, upper=upper):
            calls.append(size)
            keep.update(S="larger")
            return Certificate(upper_bound=upper, kind="split", lower=90.0, x=x,
                               info={"lower_source": "given", "split_S": size})

        out = screens.grown(SimpleNamespace(n=10_000), 3, d, "auto", None, keep, None, split)
        assert calls[-1] == int(np.ceil(screens._GROW * 400))
        if stands:
            assert out.upper_bound == 99.0 and keep == {"S": "larger"} and out.info["lower_source"] == "fit(auto)"
        else:
            assert out is d and keep == {"S": "first"}


def test_a_capped_run_and_the_exact_mode_keep_their_screen(monkeypatch):
    """A path's capped run (``split_cap``) and ``branch_seconds`` (the exact mode) never grow the screen; a one-k
    certificate does (the verdict forced False)."""
    _force_small(monkeypatch, per_k=2)
    monkeypatch.setattr(S, "_SMALL_FIRST", False)
    monkeypatch.setattr(screens, "small_verdict", lambda *a: False)
    seen = _screens(monkeypatch)
    X = _modules(np.random.default_rng(1), 8, 12, 3)
    route._certify_large(Cov(X, None), 3, None, "auto", None, split_cap=6)
    route._certify_large(Cov(X, None), 3, None, "auto", None, branch_seconds=0.0)
    assert len(seen) == 2
    route._certify_large(Cov(X, None), 3, None, "auto", None)  # (one k: the larger screen follows)
    # (thin data held: the screen chosen by the cross term, exactly _CROSS times the first one's size, wide26)
    assert len(seen) == 4 and seen[3] == min(12, int(np.ceil(screens._CROSS * seen[2])))


@given(st.integers(300, 20_000), st.integers(1, 3000), st.floats(0.5, 1.0), st.floats(1.0, 1.2),
       st.sampled_from(["auto", "full", "fast"]))
def test_grown_size_rule(n, size, ratio, t_share, effort):
    """Grown only in "auto", where the verdict that lets a screen stand fails, to ``_GROW`` times the screen
    (at most the effort's split_size and n), and only when that is ``_GROW_MIN`` times larger."""
    B_S = 100.0 / t_share
    c = _cert(100.0 * ratio, 100.0, 100.0, B_S, size)
    big = screens.grown_size(n, 3, c, effort)
    stands = coupled.small_verdict(c.lower, 100.0, B_S)
    want = min(n, S._EFFORT[effort]["split_size"], int(np.ceil(screens._GROW * size)))
    if effort != "auto" or stands or want < screens._GROW_MIN * size:
        assert big is None
    else:
        assert big == want
    assert screens.grown_size(n, 3, replace(c, info={}), "auto") is None  # (not a split certificate)



def test_the_skip_route_takes_the_chosen_screen(monkeypatch):
    """Where T alone holds certify(k)'s own screen below the aim (``own_hopeless``, forced here), the other screen
    runs at once: on thin data held the one chosen by the cross term, ``ceil(_CROSS |S|)`` features (helper wide26;
    the former rule, 1.2x, fails here)."""
    _force_small(monkeypatch, per_k=2)
    monkeypatch.setattr(S, "_SMALL_FIRST", False)
    monkeypatch.setattr(single, "own_hopeless", lambda *a, **kw: True)
    seen = _screens(monkeypatch)
    X = _modules(np.random.default_rng(1), 8, 40, 3)
    c = route._certify_large(Cov(X, None), 5, None, "auto", None)
    assert len(seen) == 2 and seen[1] == int(np.ceil(screens._CROSS * seen[0])) < seen[0]
    assert c.info["split_S"] == seen[1]
