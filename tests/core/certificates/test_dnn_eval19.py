"""Issue 39, the nineteenth round: each DNN evaluation cheaper and fewer of them, WITH THE SAME FLOATS.

- :func:`nspca_core.certificates.dnn._lmax_state` assembles a float32 N's dual matrix from N's float64 copy in
  M's own array (no mixed float64 + float32 sum, one n x n copy fewer) and sums ``||M||_F`` once for the Ritz
  guesses and :func:`lmax_upper`: the same floats as the former formula (kept below as the reference).
- :func:`nspca_core.certificates.dnn.value_below` is at or below the value an evaluation proves (any N, also
  one whose two triangles differ in their last bits, as a float32 N from a rank-r gradient does).
- ``dnn._DEFER_CHECKS``: a regular check that can decide nothing but which point is the best is put off to
  the run's end and made only where value_below leaves its point able to be the best: the run's point,
  value, lambda and subspace are bit for bit those without the rule; the count of evaluations drops by one
  exactly where the end's value is below the put-off point's value_below."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core.certificates import dnn
from nspca_core.certificates.dnn import (DnnState, DnnWork, _lmax_state, assemble_dual, dnn_optimize, dnn_value_lam,
                                         ksupport_cuts, lmax_upper, ritz_guesses, value_below)

from tests.bruteforce import brute_opt


def _bits(a) -> bytes:
    return np.ascontiguousarray(a).tobytes()


def _former_lmax_state(A, state, fast=True, work=None):
    """``_lmax_state`` as written before this change (a58d8c3): N's float64 copy in ``"MG"`` after the assembly's
    mixed sum, ``||M||_F`` summed by the Ritz guesses and again by lmax_upper."""
    n = A.shape[0]
    M = assemble_dual(A, state.N, state.nu, state.C, state.w, work)
    mu = state.nu / n
    if work is None or state.N.dtype == np.float64:
        N64 = np.asarray(state.N, dtype=float)
    else:
        N64 = work.scratch("MG", A.shape, np.float64)
        np.copyto(N64, state.N)
    scale = float((np.linalg.norm(A) if work is None else work.norm_of(A)) + np.linalg.norm(N64) + mu * n)
    if state.C is not None and state.w is not None:
        scale += float(state.w @ (state.C ** 2).sum(axis=0))
    return lmax_upper(M, scale, ritz_guesses(M, state.U) if fast else None, work)


def _dense(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((2 * n, n)) * rng.uniform(0.2, 3.0, n)
    X[:, : max(2, n // 5)] += rng.standard_normal((X.shape[0], 1)) * 2.0
    return X.T @ X / X.shape[0]


def _point(n: int, seed: int, cuts: int, asym: float, with_u: bool):
    """A float32 dual point: N >= 0 with zero diagonal whose triangles differ by a relative ``asym``, cuts of
    random weights, a warm orthonormal block (n >= 64: the Ritz guesses run)."""
    rng = np.random.default_rng(seed + 1)
    A = _dense(n, seed)
    N = np.abs(rng.standard_normal((n, n))) * 0.05 * float(np.abs(A).max())
    N = (N + N.T) / 2 * (1.0 + asym * rng.uniform(-1, 1, (n, n)))
    np.fill_diagonal(N, 0.0)
    U = np.linalg.qr(rng.standard_normal((n, min(6, max(1, n // 4)))))[0] if with_u else None
    C = ksupport_cuts(rng.standard_normal((n, cuts)), max(1, n // 3)) if cuts else None
    w = rng.uniform(0, 0.1, cuts) * float(np.abs(A).max()) if cuts else None
    return A, DnnState(N.astype(np.float32), float(rng.uniform(0, 3)), U, C, w)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(3, 110), seed=st.integers(0, 2**31 - 1), cuts=st.integers(0, 4), fast=st.booleans(),
       asym=st.sampled_from([0.0, 1e-7, 1e-2]), used=st.booleans())
def test_the_evaluation_equals_the_former_formula(n, seed, cuts, fast, asym, used):
    """The rigorous lambda bound and its tolerance, bit for bit as the former ``_lmax_state`` (with a DnnWork,
    fresh or holding another point's garbage, and without one)."""
    A, state = _point(n, seed, cuts, asym, n >= 64)
    work = DnnWork()
    if used:  # (garbage in every array of the work first)
        _lmax_state(A, _point(n, seed + 7, 2, 0.0, n >= 64)[1], True, work)
    for w_new, w_old in ((work, DnnWork()), (None, None)):
        assert _lmax_state(A, state, fast, w_new) == _former_lmax_state(A, state, fast, w_old)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 100), seed=st.integers(0, 2**31 - 1), cuts=st.integers(0, 4),
       asym=st.sampled_from([0.0, 1e-6, 0.3]), scale_u=st.sampled_from([1.0, 3.0]), fast=st.booleans())
def test_value_below_is_below_the_evaluated_value(n, seed, cuts, asym, scale_u, fast):
    """value_below <= the value an evaluation proves (the Cholesky test at Ritz guesses or LAPACK), whichever
    triangle of a not quite symmetric N it reads; the warm vector need not be of unit length."""
    A, state = _point(n, seed, cuts, asym, True)
    k = max(1, n // 3)
    below = value_below(A, k, DnnState(state.N, state.nu, state.U * scale_u, state.C, state.w), DnnWork())
    val, _ = dnn_value_lam(A, k, state, fast=fast, work=DnnWork())
    assert below <= val
    assert np.isfinite(below)


def test_value_below_reads_both_triangles():
    """An N with one triangle zero: its two symmetric readings have lambda_max far apart (the Cholesky proof at
    the Ritz guesses reads one, LAPACK's eigenvalue the other: 1,248 against 65 here), and value_below stays
    below the evaluation's value either way (fails where the larger of the two quotients is taken)."""
    n = 80
    A = _dense(n, 3)
    N = np.triu(np.full((n, n), float(np.abs(A).max())), 1).astype(np.float32)
    U = np.full((n, 1), 1.0 / np.sqrt(n))
    state = DnnState(N, 0.0, np.linalg.qr(np.hstack([U, np.random.default_rng(0).standard_normal((n, 5))]))[0])
    for M in (N, np.ascontiguousarray(N.T)):
        st2 = DnnState(M, 0.0, state.U)
        for fast in (True, False):
            assert value_below(A, 5, st2, DnnWork()) <= dnn_value_lam(A, 5, st2, fast=fast, work=DnnWork())[0]


@settings(max_examples=15, deadline=None)
@given(n=st.integers(4, 8), seed=st.integers(0, 2**31 - 1), kfrac=st.floats(0.2, 1.0))
def test_value_below_against_brute_force(n, seed, kfrac):
    """Where a point's value_below is above the brute-force optimum, so is its proved value (a sanity check that
    value_below is not the bound: the bound is the evaluation's, always above the optimum)."""
    A, state = _point(n, seed, 1, 0.0, True)
    k = max(1, int(round(kfrac * n)))
    val, _ = dnn_value_lam(A, k, state, work=DnnWork())
    assert val >= brute_opt(A, k)[0] * (1 - 1e-9)
    assert value_below(A, k, state, DnnWork()) <= val


def _run(A, k, lr, iters, check_every, defer, seed, refresh=0, lower=None, start=None, **rules):
    scale = float(np.abs(A).max())
    dnn._DEFER_CHECKS = defer
    try:
        st0 = start if start is not None else DnnState(np.zeros(A.shape), 0.0)
        return dnn_optimize(A, k, DnnState(st0.N, st0.nu, st0.U), iters=iters, check_every=check_every,
                            t_start=0.1 * scale, t_end=1e-3 * scale, lr=lr * scale, r=6, ritz32=True,
                            refresh=refresh, target=0.999, lower=lower, work=DnnWork(), **rules)
    finally:
        dnn._DEFER_CHECKS = True


@settings(max_examples=25, deadline=None)
@given(n=st.integers(20, 90), seed=st.integers(0, 2**31 - 1), kfrac=st.floats(0.05, 0.6),
       lr=st.sampled_from([1e-3, 1e-2, 0.1, 1.0]), shape=st.sampled_from([(12, 10), (20, 10), (44, 40), (9, 5)]),
       refresh=st.sampled_from([0, 4]), with_lower=st.booleans(), rule=st.sampled_from(["", "give_up", "outpaced",
                                                                                       "no_give_up_eval", "fall"]))
def test_put_off_checks_give_the_same_run(n, seed, kfrac, lr, shape, refresh, with_lower, rule):
    """With the rule and without: the same best point (N, nu, U, cuts), value, lambda and iterations, bit for bit
    (large rates included: there the end is often worse than the put-off point, which is then made), also in runs
    with a give-up, outpaced or fall rule (the rule then puts off no check but where a fall rule has looked)."""
    A = _dense(n, seed)
    k = max(2, int(kfrac * n))
    top = float(np.linalg.eigvalsh(A)[-1])
    lower = 0.9 * top if with_lower or rule else None
    iters, check_every = shape
    rules = {"": {}, "give_up": {"give_up": 0.97}, "no_give_up_eval": {"give_up": 0.97, "evaluate_give_up": False},
             "outpaced": {"outpaced": lambda reach: reach < 0.95}, "fall": {"fall": (0.0, 10)}}[rule]
    if rule == "fall":  # (an evaluated start: the rule needs one)
        rules["start_lam"] = None
    a = _run(A, k, lr, iters, check_every, True, seed, refresh, lower, **rules)
    b = _run(A, k, lr, iters, check_every, False, seed, refresh, lower, **rules)
    assert a[1] == b[1] and a[2]["lam"] == b[2]["lam"] and a[2]["iterations"] == b[2]["iterations"]
    assert _bits(a[0].N) == _bits(b[0].N) and a[0].nu == b[0].nu and _bits(a[0].U) == _bits(b[0].U)
    assert (a[0].w is None) == (b[0].w is None) and (a[0].w is None or _bits(a[0].w) == _bits(b[0].w))
    assert a[2]["exact_evaluations"] <= b[2]["exact_evaluations"]


def _counted(A, k, lr, defer):
    """A 12-iteration run checked at 10 and 12 (the check at 10 deferrable): its evaluations, value_below's calls
    and the end's value against the put-off point's value_below."""
    calls = []
    orig = dnn.value_below

    def spy(*a, **kw):
        calls.append(orig(*a, **kw))
        return calls[-1]

    dnn.value_below = spy
    vals = []
    orig_eval = dnn.dnn_value_lam

    def spy_eval(*a, **kw):
        vals.append(orig_eval(*a, **kw)[0])
        return orig_eval(*a, **kw)

    dnn.dnn_value_lam = spy_eval
    # (the rule as it stood: the end's check first; the put-off point first: test_put_off_first33)
    dnn._PUT_OFF_FIRST = False
    try:
        out = _run(A, k, lr, 12, 10, defer, 0)
    finally:
        dnn.value_below, dnn.dnn_value_lam, dnn._PUT_OFF_FIRST = orig, orig_eval, True
    return out, calls, vals


@pytest.mark.parametrize("lr", [1e-3, 3.0])
def test_the_put_off_check_is_made_on_one_side_only(lr):
    """Counting, both sides of the rule's threshold: where the end's value is below the put-off point's
    value_below, one evaluation fewer than without the rule (the point is never evaluated); where it is not (a
    rate so large the steps overshoot), the point is evaluated at the end, as many evaluations as without it."""
    A = _dense(60, 5)
    k = 12
    (st_a, v_a, info_a), calls, vals = _counted(A, k, lr, True)
    (st_b, v_b, info_b), _, vals_b = _counted(A, k, lr, False)
    assert len(calls) == 1  # (one check put off: at 10)
    assert v_a == v_b and _bits(st_a.N) == _bits(st_b.N)
    end_value = vals[1]  # (the start, then the end's check, then the put-off point where made)
    if end_value < calls[0]:
        assert info_a["exact_evaluations"] == info_b["exact_evaluations"] - 1 and len(vals) == 2
    else:
        assert info_a["exact_evaluations"] == info_b["exact_evaluations"] and len(vals) == 3
    # both sides are reached by the two rates
    assert (end_value < calls[0]) == (lr < 1.0)
