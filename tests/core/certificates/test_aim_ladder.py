"""Issue 39 (the ratio rule, split route): the aimed refinements' ladder of aims (``coupled._ladder``).  Where the
aim's goal is proved, the refinable terms of the coupled bound climb rungs that halve the ratio's gap to 1, each
rung ONE joint anchored test, while the ladder's counted cost fits ``coupled._LADDER_RUNS`` DNN runs on S and the
rung promises ``coupled._LADDER_GAIN`` more certified ratio.  Against brute force on tiny inputs: every value the
ladder proves is at least S's optimum at its sparsity, the bound never above the one without the ladder; counting
tests for its stop rules (cost, promised gain)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nspca_core.certificates import coupled
from nspca_core.certificates._settings import _DNN_PASSES, _EFFORT
from nspca_core.operators.cov import Cov

from tests.bruteforce import brute_opt
from tests.core.certificates.test_single import _random_psd


def _case(seed: int, beta: float, with_cross: bool, aim: float = 0.975, nS: int = 8):
    """``coupled._aimed`` on a psd ``A_SS`` (S's bound a hair above its optimum at k, ``B_S(i)`` otherwise the
    variance sums, a rest curve rising by ``beta`` x OPT per member, random cross bounds): the terms at
    i = 3..k - 1 sit above the goal, and the goal (``0.99 OPT / aim``) is well above S's optimum, so a proved
    goal leaves rungs to climb.  Returns ``(A_SS, sharper, k, value, notes)``."""
    rng = np.random.default_rng(seed)
    AS = _random_psd(rng, nS, kind=str(rng.choice(["gauss", "abs", "sparse"])))
    k = int(rng.integers(4, nS + 1))
    opt, xo = brute_opt(AS, k)
    certS = SimpleNamespace(upper_bound=opt * 1.001, info={}, x=xo)
    BT = beta * opt * np.arange(k + 1, dtype=float)
    C = rng.uniform(0, 1, (k + 1, k + 1)) * np.sqrt(opt * BT.max()) if with_cross else None
    sharper: dict = {}
    notes: dict = {}
    val = coupled._aimed(Cov(A=AS), certS, None, k, BT, k, None, C, 0.99 * opt, aim, sharper, notes,
                         gallop=coupled._AIM_GALLOP_ONE, rel=coupled._AIM_REL_ONE, ladder=True)
    return AS, sharper, k, val, notes


def _allowance(nS: int) -> float:
    cfg = _EFFORT["auto"]
    return coupled._LADDER_RUNS * (cfg["iters"] + cfg["cut_rounds"] * cfg["cut_iters"]) * _DNN_PASSES * float(nS) ** 2


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(st.integers(0, 2**31 - 1), st.floats(1e-3, 0.3), st.booleans(), st.sampled_from([0.9, 0.975]))
def test_ladder_holds_against_bruteforce_and_never_loosens(monkeypatch, seed, beta, with_cross, aim):
    """With the ladder, every ``B_S(i)`` proved is at least S's optimum at sparsity i (enumeration); the coupled
    bound is at most the one without the ladder (its values only add proofs), and the ladder's counted cost is
    within its allowance."""
    AS, sharper, k, val, notes = _case(seed, beta, with_cross, aim)
    for i, b in sharper.items():
        assert b >= brute_opt(AS, i)[0] * (1 - 1e-12), (i, b)
    with monkeypatch.context() as mp:
        mp.setattr(coupled, "_LADDER_RUNS", 0.0)
        _, _, _, val0, notes0 = _case(seed, beta, with_cross, aim)
    assert val <= val0 * (1 + 1e-12)
    assert 0.0 <= notes["cost"] - notes0["cost"] <= _allowance(AS.shape[0]) * (1 + 1e-12)


def _count_tests(monkeypatch, seed, **patch):
    """``(value, joint tests run)`` of :func:`_case` (beta 0.05, cross bounds) with ``coupled``'s ``patch``."""
    calls: list = []
    real = coupled.anchored_joint_test
    with monkeypatch.context() as mp:
        for name, v in patch.items():
            mp.setattr(coupled, name, v)
        mp.setattr(coupled, "anchored_joint_test", lambda *a, **kw: (calls.append(1), real(*a, **kw))[1])
        val = _case(seed, 0.05, True)[3]
    return val, len(calls)


def test_ladder_climbs_and_stops_by_cost_and_by_promised_gain(monkeypatch):
    """The ladder runs tests and lowers the bound on these inputs; with an allowance below one test's counted cost,
    or a promised gain no rung can give, it runs no test at all (the same tests, the same bound, as without it)."""
    climbed = 0
    for seed in range(10):
        off = _count_tests(monkeypatch, seed, _LADDER_RUNS=0.0)
        on = _count_tests(monkeypatch, seed)
        climbed += on[1] > off[1] and on[0] < off[0]
        assert _count_tests(monkeypatch, seed, _LADDER_RUNS=1e-9) == off
        assert _count_tests(monkeypatch, seed, _LADDER_GAIN=1.0) == off
    assert climbed > 0


def test_a_ladder_recording_less_than_it_proved_is_caught(monkeypatch):
    """The brute-force check above can fail on the ladder's own values: they come close to S's optima (each rung
    asks the terms at most the proved value), so a ladder that recorded its values 3% below what its tests proved
    is caught at some input."""
    real = coupled._ladder

    def shrunk(*a):
        proved = a[-1]
        before = dict(proved)
        out = real(*a)
        for i in proved:
            if proved[i] != before.get(i):
                proved[i] *= 0.97
        return out

    broken = 0
    monkeypatch.setattr(coupled, "_ladder", shrunk)
    for seed in range(10):
        AS, sharper, k, _, _ = _case(seed, 0.05, True)
        broken += any(b < brute_opt(AS, i)[0] * (1 - 1e-12) for i, b in sharper.items())
    assert broken > 0
