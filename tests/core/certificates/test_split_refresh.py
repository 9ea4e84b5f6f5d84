"""The DNN's cut run on a split bound's screened set S keeps its own length (``_settings``
``split_refresh_iters``), while a one-k dense certificate's run takes ``refresh_iters``: a shorter run on
S made the MLL path looser at most k, because a path's runs carry S's DNN tangents to other k."""

from __future__ import annotations

import numpy as np
import pytest

from nspca_core.certificates import _settings as S
from nspca_core.certificates import dual


class _Stop(Exception):
    pass


def _cut_run_length(monkeypatch, iters):
    seen = {}

    def record(*args, **kw):
        seen["iters"] = kw["iters"]
        raise _Stop

    monkeypatch.setattr(dual, "_cut_rounds", record)
    rng = np.random.default_rng(0)
    F = rng.standard_normal((80, 6))
    A = F @ F.T + 0.1 * np.eye(80)
    with pytest.raises(_Stop):
        dual._dnn(A, 10, 0.0, "auto", None, iters=iters)
    return seen["iters"]


def test_split_cut_run_keeps_its_length_and_one_k_takes_refresh_iters(monkeypatch):
    cfg = S._EFFORT["auto"]
    assert cfg["split_refresh_iters"] != cfg["refresh_iters"]  # else the test below proves nothing
    assert _cut_run_length(monkeypatch, None) == cfg["refresh_iters"]
    assert _cut_run_length(monkeypatch, cfg["split_iters"]) == cfg["split_refresh_iters"]
