"""The split route of held sparse data with T's bound the trace curve and the refinements first
(nspca_core.certificates.rest_top.trace_first): the floor it compares with is below every coupled bound T's spectrum
could give (any curve, cross table and refinements) and below the split bound itself; the certificate is never looser
than the spectrum's order alone and is at least the exact optimum (brute force); the rule is counted on both sides."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from nspca_core.certificates import rest_top as RT
from nspca_core.certificates import single
from nspca_core.certificates.coupled import _coupled, _coupled_bs
from tests.bruteforce import brute_opt
from tests.core.certificates.test_rest_late import _split, corpora, exact_cov

_EPS = np.finfo(float).eps


@settings(max_examples=200, deadline=None)
@given(data=st.data(), k=st.integers(1, 9), nT=st.integers(1, 12), with_pair=st.booleans(),
       with_cross=st.booleans())
def test_floor_below_every_coupling_and_the_plain_split(data, k, nT, with_pair, with_cross):
    """spectrum_floor(B_S(k) as the coupling reads it, B_S, diag(A_TT)) is at most ``_coupled`` with ANY rest curve
    that is 0 at j = 0 and at least T's largest variance elsewhere (every rigorous one is), any refinements at
    sparsities below kS, any nonnegative cross table, with or without the pair bound; and at most B_S + B_T for any
    B_T at least T's largest variance."""
    pos = st.floats(1e-6, 1e3, allow_nan=False)
    dS = np.array(data.draw(st.lists(pos, min_size=k, max_size=k + 4)))
    dT = np.array(data.draw(st.lists(pos, min_size=nT, max_size=nT)))
    B_S = float(dS.max()) * data.draw(st.floats(1.0, 3.0))
    certS = SimpleNamespace(upper_bound=B_S, info={})
    kS = k
    pair = data.draw(st.floats(0.0, 2 * B_S)) if with_pair else None
    sharper = {int(i): data.draw(st.floats(0.0, 2 * B_S)) for i in data.draw(st.lists(st.integers(1, max(1, kS - 1)),
                                                                                        max_size=4)) if i < kS}
    jm = min(k, nT)
    above = np.array(data.draw(st.lists(st.floats(1.0, 50.0), min_size=jm, max_size=jm)))
    BT = np.concatenate([[0.0], float(dT.max()) * above])
    cross = (np.array(data.draw(st.lists(st.floats(0.0, 1e3), min_size=(kS + 1) * (jm + 1),
                                         max_size=(kS + 1) * (jm + 1)))).reshape(kS + 1, jm + 1)
             if with_cross else None)
    BS_k = _coupled_bs(certS, None, dS, kS, pair)[kS]
    floor = RT.spectrum_floor(BS_k, B_S, dT)
    assert _coupled(certS, None, dS, kS, BT, k, pair, sharper, cross=cross) >= floor
    assert _coupled(certS, None, dS, kS, BT, k, pair, sharper) >= floor
    assert B_S + float(BT[1:].min()) >= floor


def _with_floor(D, k, center):
    """``(certificate, floors)``: :func:`test_rest_late._split` with the trace curve's order on, each floor it compared
    with recorded."""
    floors: list = []
    real = single.trace_first

    def spy(dT, k_, B_S, BS_k, *a):
        floors.append(RT.spectrum_floor(BS_k, B_S, dT))
        return real(dT, k_, B_S, BS_k, *a)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(single, "trace_first", spy)
        counted: list = []
        return _split(D, k, center, True, counted, trace_first=True), floors, counted


# A counterexample found by a make test run at the end of the seventeenth round: with the order on, 17.5744 against
# the spectrum order's 17.3850. The floor bounds the coupling of either order, not the DNN route on S that the
# spectrum's order then takes (its coupled bound above the aim) and that tightens S's own bound. So the rule is off
# by default (rest_top._TRACE_FIRST) until the floor also covers that route; this test stays, and it must fail.
@pytest.mark.xfail(strict=True, reason="trace_first's floor misses the DNN route on S that follows (rule off)")
@example(D=np.array([[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.6], [10.0, 0.0, 3.3, 0.0, 0.0, 0.0, 0.0, 0.6],
                     [8.0, 7.0, 0.0, 0.6, 3.0, 0.0, 0.0, 0.0], [8.0, 0.0, 0.0, 1.8, 0.0, 0.0, 0.0, 0.0],
                     [0.0, 4.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [6.0, 8.0, 0.0, 0.0, 0.0, 0.0, 0.9, 0.0],
                     [0.0, 7.0, 0.0, 0.0, 2.7, 1.8, 1.2, 0.0], [0.0, 9.0, 0.0, 1.8, 0.0, 0.0, 1.5, 0.0]]),
         center=True, k=4)
@settings(max_examples=60, deadline=None)
@given(D=corpora(), center=st.booleans(), k=st.integers(3, 6))
def test_never_looser_than_the_spectrums_order(D, center, k):
    """With the trace curve's order tried the certificate is at most the one of T's spectrum first (rest_late off:
    the former floats) and at least the exact optimum; where it stood (no rest spectrum computed, counted), the
    floor it was compared with is at most the former split bound (and one rest spectrum fewer over the run, counted: a
    grown screen or the dense route may follow); where it did not, the spectrum was computed."""
    k = min(k, D.shape[1] - 1)
    if not np.any(exact_cov(D, center).diagonal() > 0):
        return
    counted_a: list = []
    a = _split(D, k, center, False, counted_a)
    b, floors, counted = _with_floor(D, k, center)
    if a is None or b is None:
        assert a is None and b is None
        return
    assert b.upper_bound <= a.upper_bound
    assert b.upper_bound >= brute_opt(exact_cov(D, center), k)[0] * (1 - 1e-12) - 1e-300
    if b.info.get("trace_first") == "stood":
        assert floors and floors[-1] <= a.bounds["split"] and len(counted) < len(counted_a)
        assert sorted(b.info["B_T_bounds"]) == ["trace-k"]
    elif b.info.get("trace_first") == "spectrum too":
        assert counted and b.bounds["split"] <= a.bounds["split"]


def test_rule_on_both_sides():
    """trace_first: not tried on an empty T or k = 0; the refinements asked to sharpen down to the floor (stop =
    lower / floor) with a give_up that answers a value only above the floor; stands exactly where the refined value
    is at most the floor (nextafter above: not)."""
    dT = np.array([0.3, 0.1, 0.2])
    B_S, BS_k, lower = 10.0, 10.0, 9.0
    floor = RT.spectrum_floor(BS_k, B_S, dT)
    assert floor == min(10.0 * (1 + 4 * _EPS), 10.0 + 0.15)
    calls: list = []

    def refine(val):
        def f(bt, give_up, stop):
            calls.append((give_up, stop))
            return val, {}, None
        return f

    out = RT.trace_first(dT, 3, B_S, BS_k, lower, refine(floor))
    assert out[0] and np.array_equal(out[1], RT.trace_curve(dT, 3)) and out[2]["trace-k"] >= 0.6 and len(calls) == 1
    give_up, stop = calls[0]
    assert stop == lower / floor
    assert give_up(floor) is None and give_up(np.nextafter(floor, np.inf)) == np.nextafter(floor, np.inf)
    assert not RT.trace_first(dT, 3, B_S, BS_k, lower, refine(np.nextafter(floor, np.inf)))[0]
    assert RT.trace_first(np.zeros(0), 3, B_S, BS_k, lower, refine(0.0)) is None
    assert RT.trace_first(dT, 0, B_S, BS_k, lower, refine(0.0)) is None and len(calls) == 2


def test_taken_both_ways_on_small_corpora():
    """Both sides end to end on fixed corpora: some certificates stand on the trace curve's order (no rest spectrum
    computed: one fewer than without, counted), some compute the spectrum too; never looser than the spectrum's order
    alone."""
    from tests.core.certificates.test_sparse_route import _counts

    seen = set()
    for seed in range(12):
        for scale in (1.0, 0.05):
            D = _counts(seed, 12, 8, 3.0, 0.6).astype(float)
            D[:, 5:] *= scale
            for k in (3, 4):
                counted_a: list = []
                a = _split(D, k, True, False, counted_a)
                b, _, counted = _with_floor(D, k, True)
                if a is None or b is None:
                    continue
                assert b.upper_bound <= a.upper_bound
                if "trace_first" in b.info:
                    seen.add((b.info["trace_first"], len(counted) < len(counted_a)))
    assert ("stood", True) in seen and ("spectrum too", False) in seen


def test_kinds_are_those_the_split_stands_on():
    """The order is tried only where S's bound is of a kind with which the sparse route's split certificate stands
    alone whatever its ratio (so a lower split bound is never a reason to skip the dense route's run)."""
    from nspca_core.certificates import sparse_route as R

    assert tuple(RT.TRACE_FIRST_KINDS) == tuple(R._S_OWN)
