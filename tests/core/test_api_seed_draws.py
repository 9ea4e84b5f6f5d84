"""``fit`` validates ``random_state`` once (the Seed rule) and draws from a RandomState as before: the front's
own draw from it stays, and no Generator is built and dropped for the other seeds (issue 39, twenty-fourth round)."""

from __future__ import annotations

import numpy as np
import pytest

import nspca_core as nc
from nspca_core import api


def _X():
    rng = np.random.default_rng(11)
    return rng.standard_normal((30, 12))


def _count_as_rng(monkeypatch):
    calls = []
    real = api.as_rng

    def counted(seed, name="seed"):
        calls.append(type(seed).__name__)
        return real(seed, name)

    monkeypatch.setattr(api, "as_rng", counted)
    return calls


@pytest.mark.parametrize("seed", [None, 0, 7, np.int64(3), np.random.default_rng(2)])
def test_front_builds_no_generator_for_a_checked_seed(monkeypatch, seed):
    calls = _count_as_rng(monkeypatch)
    nc.fit(_X(), k=3, method="tpower", random_state=seed, certify=False)
    assert calls == []


@pytest.mark.parametrize("method", ["tpower", "auto"])
def test_the_front_draws_once_from_a_randomstate(monkeypatch, method):
    calls = _count_as_rng(monkeypatch)
    nc.fit(_X(), k=3, method=method, random_state=np.random.RandomState(5), certify=False)
    assert calls == ["RandomState"]


def test_a_randomstate_is_drawn_from_by_the_front_then_the_solver():
    method = "tpower"  # one draw of the solver (auto's em on few features draws again)
    rs = np.random.RandomState(5)
    r = nc.fit(_X(), k=3, method=method, random_state=rs, certify=False)
    # the front's draw, then the solver's one (as_rng of a RandomState draws one int each time)
    ref = np.random.RandomState(5)
    hi = np.iinfo(np.int32).max
    ref.randint(hi)
    second = ref.randint(hi)
    assert rs.randint(hi) == ref.randint(hi)
    again = nc.fit(_X(), k=3, method=method, random_state=np.random.default_rng(second), certify=False)
    assert repr(r.x.tolist()) == repr(again.x.tolist()) and repr(r.variance) == repr(again.variance)


@pytest.mark.parametrize("bad", [-1, 1.5, True, "0"])
def test_a_bad_seed_is_still_refused_by_name(bad):
    with pytest.raises(nc.InputError, match="random_state"):
        nc.fit(_X(), k=3, random_state=bad, certify=False)
