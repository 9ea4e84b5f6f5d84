"""Issue 39 (helper skip14): a one-k "auto" split certificate whose own screen's light route fell short skips
that screen before its DNN where the rest T alone holds it below the aim (``screens.own_hopeless``: the ceiling
``coupled.t_ceiling`` that no bound of S brings the coupled bound below), and runs the larger screen
``screens.grown`` would have run at once.  The ceiling is checked against S's optimum by enumeration; the
certificate against the whole optimum; the rule by counting the DNN runs on both sides of its threshold."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from nspca_core.certificates import coupled, route, screens, single
from nspca_core.certificates.bounds import _rest_curve, _rest_spectrum
from nspca_core.certificates.cross import cross_table
from nspca_core.certificates.split_point import _lambda_S
from nspca_core.operators.cov import Cov

from tests.bruteforce import brute_opt
from tests.core.certificates.test_small_screen import TINY, _force_small, modules_case


@TINY
@given(st.integers(9, 12), st.integers(2, 4), st.integers(4, 7), st.integers(0, 2**31 - 1), st.booleans())
def test_the_ceiling_is_below_every_coupled_bound_of_S(n, k, s, seed, with_table):
    """``t_ceiling`` (x's truncations as S's bounds) is at most the coupled bound's terms with part of the
    support in T when every ``B_S(i)`` is S's exact optimum at i (enumeration), with the same B_T and cross
    table: no bound of S (each at least that optimum, every term nondecreasing in it) brings the coupled
    bound below the ceiling, which is what lets own_hopeless rule a screen out."""
    X, A, _ = modules_case(seed, n, k, False)
    cov = Cov(X, None)
    S = np.sort(np.argsort(-np.diag(A), kind="stable")[:s])
    T = np.setdiff1d(np.arange(n), S)
    AS = A[np.ix_(S, S)]
    xS = np.abs(np.random.default_rng(seed).normal(size=s))
    xS[np.random.default_rng(seed + 1).random(s) < 0.3] = 0.0
    xS = xS / np.linalg.norm(xS) if xS.any() else np.eye(s)[0]
    kS = min(k, s)
    BT = _rest_curve(cov, T, k, spec=_rest_spectrum(cov, T, None, S))
    cross = cross_table(cov, S, T, kS, k, _lambda_S(cov, S)) if with_table else None
    ceiling = coupled.t_ceiling(AS, xS, BT, k, kS, cross)
    best = brute_t_terms(AS, BT, k, kS, cross)
    assert ceiling <= best * (1 + 1e-12) + 1e-12


def brute_t_terms(AS, BT, k: int, kS: int, cross) -> float:
    """The largest of the coupled bound's terms with part of the support in T (j = 1.. features there) when every
    ``B_S(i)`` is S's exact optimum at i (enumeration: slow and obviously right), with B_T and the cross table given."""
    best = -np.inf
    for j in range(1, BT.size):
        i = k - j
        if 0 <= i <= kS:
            a = np.array([brute_opt(AS, i)[0] if i > 0 else 0.0])
            c = None if cross is None else cross[min(i, cross.shape[0] - 1), min(j, cross.shape[1] - 1)][None]
            best = max(best, float(coupled._terms_at(a, BT[j:j + 1], c)[0]))
    return best


def _own_counts(monkeypatch, X, k, x, aim, reach=0.0):
    """certify(k)'s split route with ``screens._COUPLED_AIM`` at ``aim``: the screens whose S the DNN ran on,
    the cross tables own_hopeless built, the certificate and the ceilings seen (``reach``: ``screens._FLOOR_REACH``,
    0 by default: the ceilings with x's truncations alone, :class:`screens._Floors`' raised floors never asked)."""
    monkeypatch.setattr(screens, "_COUPLED_AIM", aim)
    monkeypatch.setattr(screens, "_FLOOR_REACH", reach)
    dnn, tables, ceilings = [], [], []
    real_S, real_c, real_t = single._split_S, screens.cross_table, screens.t_ceiling
    monkeypatch.setattr(single, "_split_S",
                        lambda cov, S_, *a, **kw: (dnn.append(len(S_)), real_S(cov, S_, *a, **kw))[1])
    monkeypatch.setattr(screens, "cross_table", lambda *a, **kw: (tables.append(1), real_c(*a, **kw))[1])
    monkeypatch.setattr(screens, "t_ceiling", lambda *a: (ceilings.append(real_t(*a)), ceilings[-1])[1])
    cert = route._certify_large(Cov(X, None), k, x, "auto", None)
    return dnn, tables, cert, ceilings


def test_the_own_screen_is_skipped_exactly_above_the_ceilings_threshold(monkeypatch):
    """Counting on both sides of the rule ``lower < (aim - _SMALL_SHORT) x ceiling``: just above it the own
    screen's DNN never runs (only the larger screen's), just below it the own screen's DNN runs; where the plain
    sums' ceiling already meets ``lower`` no cross table is built, where the column part's does, no row part.
    The certificate is above OPT either way."""
    _force_small(monkeypatch, per_k=2)
    # (the screens are told apart by size: the other screen, chosen at 0.9x since wide26, is 6 features here as
    # the own one is; 1.5x keeps them apart, the rule counted is own_hopeless's)
    monkeypatch.setattr(screens, "_CROSS", 1.5)
    monkeypatch.setattr(coupled, "_SMALL_PER_K", 100)  # (no smaller screen: certify(k)'s own and the grown one)
    X, A, x = modules_case(5, 12, 3, True)
    opt = brute_opt(A, 3)[0]
    lower = float(x @ A @ x)
    dnn, tables, cert, ceil = _own_counts(monkeypatch, X, 3, x, 10.0)  # (fires: the grown screen alone)
    own = 6
    assert own not in dnn and dnn and tables == [1, 1] and cert.upper_bound >= opt * (1 - 1e-12)
    plain, cols, c = ceil  # (the plain sums', the column part's and the whole table's ceilings: the rule's)
    assert plain >= cols >= c
    assert c > 0
    for side, eps in (("skip", 1e-9), ("run", -1e-9)):
        aim = lower / c * (1 + eps) + coupled._SMALL_SHORT
        dnn, tables, cert, _ = _own_counts(monkeypatch, X, 3, x, aim)
        assert cert.upper_bound >= opt * (1 - 1e-12)
        if side == "skip":
            assert own not in dnn and dnn
        else:
            assert dnn[0] == own
    if plain > cols:  # the column part's ceiling met: its table alone built (no row part), the own DNN runs
        dnn, tables, cert, _ = _own_counts(monkeypatch, X, 3, x, lower / cols * (1 - 1e-9) + coupled._SMALL_SHORT)
        assert tables == [1] and dnn[0] == own and cert.upper_bound >= opt * (1 - 1e-12)
    # the plain sums' ceiling met: no table built, the own screen's DNN runs
    dnn, tables, cert, ceil = _own_counts(monkeypatch, X, 3, x, lower / ceil[0] * (1 - 1e-9) + coupled._SMALL_SHORT)
    assert tables == [] and dnn[0] == own and cert.upper_bound >= opt * (1 - 1e-12)
