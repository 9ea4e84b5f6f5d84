"""Issue 39, the twenty-sixth round (wide37): a DNN start that cannot beat the start in hand is not valued.

:func:`nspca_core.certificates.dual_start._start_value` with ``beat`` returns ``(inf, None)`` only where the value
it would prove is at least ``beat`` (its floor, :func:`.dnn.value_below`, at or above it), else the very floats it
returns without ``beat``; :func:`.dual._dnn`, which keeps a start only where its value is strictly below the best so
far, then keeps the same start: its value, state and lambda are bit for bit those without the rule."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core.certificates import dual
from nspca_core.certificates.dnn import DnnState, DnnWork, assemble_dual
from nspca_core.certificates.dual_start import _kkt_point, _screen_init, _start_value

from tests.bruteforce import brute_opt


def _dense(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((2 * n, n)) * rng.uniform(0.2, 3.0, n)
    X[:, : max(2, n // 5)] += rng.standard_normal((X.shape[0], 1)) * 2.0
    return X.T @ X / X.shape[0]


def _start(n: int, seed: int, f32: bool, tight: bool):
    """A start as ``_dnn`` values them: N >= 0 (float64, as the screening start's, or float32), mu, and a block U
    whose first vector is M's top eigenvector (``tight``: the floor within rounding of the value) or random."""
    rng = np.random.default_rng(seed + 1)
    A = _dense(n, seed)
    N = np.abs(rng.standard_normal((n, n))) * 0.05 * float(np.abs(A).max())
    N = (N + N.T) / 2
    np.fill_diagonal(N, 0.0)
    N = N.astype(np.float32) if f32 else N
    nu = float(rng.uniform(0, 3))
    r = min(4, n)
    if tight:
        M = assemble_dual(A, np.asarray(N, dtype=float), nu)
        U = np.linalg.eigh(0.5 * (M + M.T))[1][:, ::-1][:, :r]
    else:
        U = np.linalg.qr(rng.standard_normal((n, r)))[0]
    return A, DnnState(N, nu), U


@settings(max_examples=60, deadline=None)
@given(n=st.integers(3, 100), seed=st.integers(0, 2**31 - 1), f32=st.booleans(), tight=st.booleans(),
       rel=st.sampled_from([-1e-3, -1e-9, 0.0, 1e-12, 1e-9, 1e-6, 1e-3]), low=st.sampled_from([None, 0.5, 0.999]))
def test_a_start_is_skipped_only_where_its_value_is_not_below_beat(n, seed, f32, tight, rel, low):
    """Skipped (inf) only where the value proved without ``beat`` is at least ``beat``; else the same floats.  ``beat``
    is put around that value (``rel``: strictly below and above it, and on it), ``lower`` as the callers give it."""
    A, state, U = _start(n, seed, f32, tight)
    k = max(1, n // 3)
    v, lam = _start_value(A, k, state, U, None if low is None else low * 1.0, DnnWork())
    for beat in (v * (1.0 + rel), v + rel * abs(v), np.nextafter(v, np.inf), np.nextafter(v, -np.inf)):
        got = _start_value(A, k, state, U, None if low is None else low * 1.0, DnnWork(), beat=float(beat))
        if got[0] == np.inf:
            assert got[1] is None
            assert v >= beat  # (the caller keeps a start only where v < beat: the same choice)
        else:
            assert (got[0], got[1]) == (v, lam)  # (bit for bit)
    assert v >= float(np.linalg.eigvalsh(assemble_dual(A, np.asarray(state.N, dtype=float), state.nu))[-1])


@settings(max_examples=20, deadline=None)
@given(n=st.integers(4, 8), seed=st.integers(0, 2**31 - 1), kfrac=st.floats(0.2, 1.0))
def test_skipped_starts_are_above_the_brute_force_optimum(n, seed, kfrac):
    """Against brute force on tiny inputs: the screening start's value (valued or not) is a bound, so where it is
    skipped at ``beat``, beat is at most its proved value, which is at least the optimum."""
    A = _dense(n, seed)
    k = max(1, int(round(kfrac * n)))
    keep: dict = {}
    stt = _screen_init(A, k, None, keep)
    U = np.linalg.qr(np.random.default_rng(seed).standard_normal((n, min(3, n))))[0]
    v, _ = _start_value(A, k, stt, U, None, DnnWork())
    opt = brute_opt(A, k)[0]
    assert v >= opt * (1 - 1e-12)
    got = _start_value(A, k, stt, U, None, DnnWork(), beat=v)
    assert got[0] == np.inf or got[0] == v  # (at beat = v: skipped, or valued as before)


def _case(seed: int, m: int = 20, n: int = 220, k: int = 150):
    """A wide data set's A (rank m, n > 150: the screening search keeps its block) and a feasible point."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, 4)) @ np.abs(rng.standard_normal((4, n))) + 0.3 * rng.standard_normal((m, n))
    X -= X.mean(axis=0)
    A = X.T @ X / m
    x = np.abs(np.linalg.eigh(A)[1][:, -1])
    x[np.argsort(x)[: n - k]] = 0.0
    return A, x / np.linalg.norm(x), k


def test_dnn_keeps_the_same_start_and_floats(monkeypatch):
    """``_dnn`` given a start in hand (``kkt``: a first run's end, a valid dual point below the screening start's
    value, as the KKT point is on wide genes at large k; or the KKT point itself, above it): value, state (N, mu, U),
    lambda and start bit for bit those of a run whose screening start is always valued (``beat`` dropped)."""
    skipped = 0
    for seed in range(4):
        A, x, k = _case(seed)
        lower = float(x @ A @ x)
        v1, st1, info1 = dual._dnn(A, k, lower, "auto", None, x=x, kkt=_kkt_point(A, k, x, None, lower, DnnWork()))
        for kkt in (_kkt_point(A, k, x, None, lower, DnnWork()), (v1, DnnState(st1.N, st1.nu), info1["lam"])):
            outs = []
            for drop in (False, True):
                calls: list = []

                def spy(*a, beat=None, _drop=drop, _calls=calls, **kw):
                    out = _start_value(*a, beat=None if _drop else beat, **kw)
                    _calls.append(out[0])
                    return out

                monkeypatch.setattr(dual, "_start_value", spy)
                val, stt, info = dual._dnn(A, k, lower, "auto", None, x=x, kkt=kkt)
                outs.append((val, stt.N.tobytes(), stt.nu, None if stt.U is None else stt.U.tobytes(), info["lam"],
                             info["init"]))
                skipped += (not drop) and bool(calls) and calls[0] == np.inf
            assert outs[0] == outs[1]
    assert skipped  # (the rule ran on at least one of the cases)
