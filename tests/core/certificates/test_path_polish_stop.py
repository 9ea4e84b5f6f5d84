"""path_large.polish_runs's stop rule (issue 39, helper wide21): a run set aside after two small rounds is taken
up again once no other run is left, if it gained since it was last taken up; a round that left its point as it was
drops it.  Its rounds then never hinge on WHEN two small rounds came (dlbcl-shaped k = 24 polished 8 rounds from one
start and 3 from a start moved by 3e-6, issue39_wide19.txt)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from nspca_core.certificates import grow_cross, path_large, screens
from tests.bruteforce import brute_opt
from tests.core.certificates.test_path_large import _centered_small, _force_split, _two_runs


def _polish(cov, uniq, lows, kept, curve, rest, budget=np.inf, take_up=True):
    """polish_runs on copies of ``kept`` and ``curve`` (the path's upper(): the curve itself): the curve after it,
    the rounds per run and what it spent."""
    kept, curve, done = copy.deepcopy(kept), curve.copy(), {}
    pos = {int(k): i for i, k in enumerate(uniq)}
    spent = path_large.polish_runs(cov, uniq, pos, lows, lambda: curve.copy(), kept, curve,
                                   lambda keep: rest[keep["T"].tobytes()], 40, budget, done, take_up)
    return curve, done, spent


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.integers(6, 9), st.integers(2, 6), st.integers(0, 2**31 - 1), st.sampled_from([3e-4, 1e-3, 3e-3, 3e-2]))
@example(9, 5, 5, 3e-3)  # (a run set aside at 5 rounds and taken up: 7, the curve 0.2% lower at a k)
def test_taking_runs_up_again_keeps_every_round_of_the_former_rule(monkeypatch, n, m, seed, stop):
    """On the same runs, the curve after the polish that takes runs up again is at most the curve after the former
    one (runs dropped at two small rounds: ``_TAKE_UP`` False) at every k, float for float where it took no run up,
    each run polished at least as many rounds, and the curve at least the brute-force OPT_k at every k = 1..n.
    ``stop`` 1e-3 .. 3e-2: more rounds count as small, so runs are set aside early and taken up (on these small
    inputs most runs end at a round that leaves the point as it was; the example takes one up)."""
    _force_split(monkeypatch, split_min=4, per_k=1, size=6)
    monkeypatch.setattr(path_large, "_POLISH_STOP", stop)
    rng = np.random.default_rng(seed)
    A, cov = _centered_small(rng, m, n)
    uniq, kept, rest, curve = _two_runs(cov, n, rng)
    lows = np.array([brute_opt(A, int(k))[0] for k in uniq]) * 0.9
    monkeypatch.setattr(path_large, "_TAKE_UP", False)
    former, done0, _ = _polish(cov, uniq, lows, kept, curve, rest)
    monkeypatch.setattr(path_large, "_TAKE_UP", True)
    now, done1, _ = _polish(cov, uniq, lows, kept, curve, rest)
    assert np.all(now <= former)
    for k, (r, _) in done0.items():
        assert done1[k][0] >= r
    if done1 == done0:
        assert np.array_equal(now, former)
    for k, b in zip(uniq, now):
        assert b >= brute_opt(A, int(k))[0] * (1 - 1e-12), (k, b)


class _Script:
    """``_POLISH_STOP`` scripted: ``fell > stop`` answers the next entry of ``gains`` (True: the round gained)."""

    def __init__(self, gains):
        self.gains = list(gains)
        self.asked = 0

    def __lt__(self, other):  # (float > _Script -> _Script < float)
        self.asked += 1
        return self.gains.pop(0) if self.gains else False


@pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisDeprecationWarning")  # (_two_runs' assume)
def test_a_run_whose_small_rounds_came_early_is_taken_up_again(monkeypatch):
    """One run, rounds scripted gained / small / small / gained / small / small / small / small (whichever way the
    rounds really went: only the verdicts are scripted; each round is a real cut round that lowers S's bound): the
    former rule stops after 3 rounds (two small in a row), the rule now after 8 (set aside at 3, taken up: it
    gained; set aside at 6, taken up: it gained at 4; dropped at 8: it gained nothing since 6); asked not to take
    runs up (raise_worst's polish), after 3.  And a round that
    leaves the point as it was drops the run at once (the next would repeat it)."""
    _force_split(monkeypatch, split_min=4, per_k=1, size=6)
    rng = np.random.default_rng(5)  # (runs at k = 3 and 4; at 4, 21 rounds each lower S's bound)
    A, cov = _centered_small(rng, 5, 9)
    uniq, kept, rest, curve = _two_runs(cov, 9, rng)
    k = max(kept)
    one = {k: kept[k]}
    lows = np.array([brute_opt(A, int(kk))[0] for kk in uniq]) * 0.9
    real = path_large._cut_rounds
    rounds = []

    def lowering(A_, kS, st_, val, *a, **kw):  # the real round; asserted to lower S's bound (else no script)
        out = real(A_, kS, st_, val, *a, **kw)
        rounds.append(out[1] < val)
        return out

    monkeypatch.setattr(path_large, "_cut_rounds", lowering)
    script = [True, False, False, True, False, False, False, False, True, True]
    for take_up, here, want in ((False, True, 3), (True, True, 8), (True, False, 3)):  # (here: raise_worst's False)
        rounds.clear()
        monkeypatch.setattr(path_large, "_TAKE_UP", take_up)
        monkeypatch.setattr(path_large, "_POLISH_STOP", _Script(script))
        _, done, _ = _polish(cov, uniq, lows, one, curve, rest, take_up=here)
        assert all(rounds), rounds  # (every round lowered S's bound: the script alone decided the stops)
        assert done[k][0] == want, (take_up, done)

    def same_point(A_, kS, st_, val, *a, **kw):  # a round that leaves the point as it was
        out = real(A_, kS, st_, val, *a, **kw)
        return st_, val, out[2]

    monkeypatch.setattr(path_large, "_cut_rounds", same_point)
    monkeypatch.setattr(path_large, "_POLISH_STOP", 0.0)
    _, done, _ = _polish(cov, uniq, lows, one, curve, rest)
    assert done[k][0] == 1, done


@pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisDeprecationWarning")  # (_two_runs' assume)
def test_a_run_taken_up_again_lowers_the_curve(monkeypatch):
    """The example above, written out: with _POLISH_STOP 3e-3 the run at k = 3 is set aside after 5 rounds by the
    former rule and dropped; taken up, it polishes 7, and the curve is lower at some k (still every k's bound at
    least the brute-force OPT_k).  The runs' larger screens as when the example was found (1.5x by variance; by
    the cross term, issue 39's eighteenth round, this case's run at k = 3 stops at 2 rounds either way, and with the
    path's runs carrying both screens, helper wide24, too; no draw of 5..7 x 9 at seeds 0..39 (0..79 at 5 x 9)
    gives a taken-up run with those screens; with one screen per run as shipped, helper widepath25, the test fails
    without the pin too).  The pin chooses the example only: it tests the polish's rule, not the screens."""
    _force_split(monkeypatch, split_min=4, per_k=1, size=6)
    monkeypatch.setattr(grow_cross, "applies", lambda cov: False)
    monkeypatch.setattr(screens, "_GROW", 1.5)
    monkeypatch.setattr(path_large, "_POLISH_STOP", 3e-3)
    rng = np.random.default_rng(5)
    A, cov = _centered_small(rng, 5, 9)
    uniq, kept, rest, curve = _two_runs(cov, 9, rng)
    lows = np.array([brute_opt(A, int(k))[0] for k in uniq]) * 0.9
    monkeypatch.setattr(path_large, "_TAKE_UP", False)
    former, done0, _ = _polish(cov, uniq, lows, kept, curve, rest)
    monkeypatch.setattr(path_large, "_TAKE_UP", True)
    now, done1, _ = _polish(cov, uniq, lows, kept, curve, rest)
    assert done1[3][0] > done0[3][0], (done0, done1)
    assert np.all(now <= former) and np.any(now < former)
    for k, b in zip(uniq, now):
        assert b >= brute_opt(A, int(k))[0] * (1 - 1e-12), (k, b)
