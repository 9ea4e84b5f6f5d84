"""Issue 39, 18th round (helper dnnwarm23): the KKT start is evaluated only where its estimate leaves it able to
certify ``dual_start._KKT_USEFUL`` and the KKT point's evaluation shares the DNN's
:class:`~nspca_core.certificates.dnn.DnnWork`.  dnnwarm23 raised the threshold to 0.95; the lead set it back to
0.9 (the golub-shaped path was looser at 87 k with 0.95, by up to 0.016: benchmarks/results/issue39_lead18.txt).

- the rule counted on both sides of its threshold (``_kkt_beaten`` and the KKT evaluations of ``dense_dual``);
- certificates with the rule acting at every size (``_KKT_EST_MIN_N`` lowered) against brute force;
- the KKT point's value and the DNN run with one shared DnnWork: the same floats as with fresh arrays.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core.certificates import dual, dual_start as D
from nspca_core.certificates.budget import BoundReport
from nspca_core.certificates.dnn import DnnWork
from nspca_core.certificates.dnn_lmax import _ritz
from nspca_core.certificates.single import _certify_dense
from nspca_core.operators.cov import Cov
from tests.bruteforce import brute_opt


def _problem(n: int, seed: int, m: int = 12):
    """A gene-like covariance (a few correlated modules, nonnegative levels) and a feasible x on its k heaviest
    features."""
    rng = np.random.default_rng(seed)
    F = np.abs(rng.standard_normal((m, 3)))
    L = np.abs(rng.standard_normal((3, n))) * (rng.random((3, n)) < 0.4)
    Y = F @ L + 0.3 * rng.standard_normal((m, n))
    Y -= Y.mean(axis=0)
    return Y.T @ Y / m


def _feasible(A: np.ndarray, k: int) -> np.ndarray:
    x = np.zeros(A.shape[0])
    x[np.argsort(np.diag(A))[-k:]] = 1.0
    return x / np.linalg.norm(x)


def _kkt_estimate(A: np.ndarray, x: np.ndarray) -> float:
    """``_kkt_beaten``'s estimate, made as there (the same block steps from the same block)."""
    n = A.shape[0]
    M = A + D.kkt_init(A, x)
    U = np.column_stack([x, np.random.default_rng(0).standard_normal((n, D._KKT_EST_R - 1))])
    for _ in range(D._KKT_EST_STEPS):
        w, U = _ritz(M, U, D._KKT_EST_R)
    return float(w[0])


def test_the_threshold_is_09():
    """0.95 made the path's DNN runs start elsewhere: golub-shaped path k = 44..50 0.985-0.994 -> 0.975-0.982."""
    assert D._KKT_USEFUL == 0.9


def test_kkt_beaten_on_both_sides_of_the_threshold():
    """``_kkt_beaten`` rules the point out exactly where ``lower < _KKT_USEFUL est``: just below: out; at and just
    above: kept (no better bound known: ``best`` inf)."""
    A = _problem(160, 1)
    x = _feasible(A, 12)
    est = _kkt_estimate(A, x)
    edge = D._KKT_USEFUL * est
    assert D._kkt_beaten(A, x, np.inf, np.nextafter(edge, 0.0))
    assert not D._kkt_beaten(A, x, np.inf, edge * (1 + 1e-12))
    # well inside: evaluated; well below: ruled out
    assert not D._kkt_beaten(A, x, np.inf, 0.97 * est) and D._kkt_beaten(A, x, np.inf, 0.85 * est)


def _dense_dual_kkt_evaluations(monkeypatch, A, k, x, lower) -> tuple[int, dict, dict]:
    """How often ``dense_dual`` evaluates the KKT point of x at ``lower`` (its own and ``_dnn``'s start), with the
    anchored side off (only the KKT rule and the DNN act)."""
    calls = []
    real = dual._kkt_point
    monkeypatch.setattr(dual, "_kkt_point", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    monkeypatch.setattr(dual.S, "anchor_ok", lambda n, k: False)
    monkeypatch.setattr(dual, "_kkt_floored", lambda *a: False)  # (the proved floor: tests/.../test_lambda1_late)
    bounds = {"lambda1": float(np.linalg.eigvalsh(A)[-1]) * (1 + 1e-9)}
    info: dict = {}
    dual.dense_dual(A, k, x, lower, bounds, info, BoundReport(), "auto", warm=None, callback=None, budget=None,
                    need_dual=False)
    return len(calls), bounds, info


def test_dense_dual_evaluates_the_kkt_point_on_one_side_only(monkeypatch):
    """dense_dual at ``lower`` just below ``_KKT_USEFUL est``: no KKT evaluation (the DNN starts from the screening
    start alone, as the path's DNN runs do: path_parity.dnn_runs); just above: one, its value a bound."""
    A = _problem(160, 2)
    k = 12
    x = _feasible(A, k)
    edge = D._KKT_USEFUL * _kkt_estimate(A, x)
    n_out, b_out, i_out = _dense_dual_kkt_evaluations(monkeypatch, A, k, x, np.nextafter(edge, 0.0))
    assert n_out == 0 and i_out["dnn"]["init"] == "screen"
    n_in, b_in, _ = _dense_dual_kkt_evaluations(monkeypatch, A, k, x, edge * (1 + 1e-12))
    assert n_in == 1 and "dnn" in b_in


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(5, 8), k=st.integers(2, 4), useful=st.sampled_from([0.9, 0.95]),
       at_opt=st.booleans())
def test_certificates_with_the_rule_at_every_size_against_brute_force(seed, n, k, useful, at_opt):
    """The rule acting at every size (``_KKT_EST_MIN_N`` 1) and either threshold, x the optimum (the KKT point then
    evaluated, often the bound) or the k heaviest features: every certificate at least the brute-force optimum
    (the rule only decides whether the KKT point is evaluated, never a bound)."""
    A = _problem(n, seed, m=4)
    opt, x_opt = brute_opt(A, k)
    x = x_opt if at_opt else _feasible(A, k)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(D, "_KKT_EST_MIN_N", 1)
        mp.setattr(D, "_KKT_USEFUL", useful)
        c, _ = _certify_dense(Cov(A=A), k, x, "auto", None)
    assert c.upper_bound >= opt * (1 - 1e-9) - 1e-12
    assert min(c.bounds.values()) >= opt * (1 - 1e-9) - 1e-12


def _bits(a) -> bytes:
    return np.ascontiguousarray(a).tobytes()


@settings(max_examples=8, deadline=None)
@given(n=st.integers(66, 140), seed=st.integers(0, 2**31 - 1), kfrac=st.floats(0.05, 0.5))
def test_kkt_value_and_dnn_with_one_work_equal_fresh_arrays(n, seed, kfrac):
    """The KKT point's evaluation in the DNN's DnnWork, then the DNN in the same one: the KKT point's value and
    lambda, and the run's value, lambda and point, bit for bit as each with fresh arrays (the former code)."""
    A = _problem(n, seed)
    k = max(2, int(kfrac * n))
    x = _feasible(A, k)
    lower = float(x @ A @ x)
    work = DnnWork()
    v1, st1, l1 = D._kkt_point(A, k, x, None, lower, work)
    v0, st0, l0 = D._kkt_point(A, k, x, None, lower)
    assert v1 == v0 and l1 == l0 and _bits(st1.N) == _bits(st0.N)
    a = dual._dnn(A, k, lower, "auto", None, x=None, kkt=(v1, st1, l1), work=work)
    b = dual._dnn(A, k, lower, "auto", None, x=None, kkt=(v0, st0, l0))
    assert a[0] == b[0] and a[2]["lam"] == b[2]["lam"] and _bits(a[1].N) == _bits(b[1].N) and a[1].nu == b[1].nu
    assert a[0] >= brute_opt(A[:8, :8], min(k, 4))[0] * (1 - 1e-9)  # (a principal submatrix: its optimum is below)
