"""The cheaper one-k certificate (issue 39 item 1): every shortcut still an upper bound.

Each new or reused bound against brute force on tiny inputs: lambda_1 proved by Cholesky at a
Lanczos guess, the anchored bound's warm-started tests (carried between brackets), the DNN whose
Ritz steps run in float32 and which stops early (a stopped run reports the bound of a dual point
it holds, evaluated in float64), and the rule by which the anchored bound spares the cut rounds.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nspca_core import certify
from nspca_core.certificates import dnn as _dnn
from nspca_core.certificates import cheap, dual
from nspca_core.certificates import single as single_mod
from nspca_core.certificates.exact import _Nodes
from tests.bruteforce import assert_certify_above_bruteforce, brute_opt
from tests.core.certificates.test_exact import _node, _node_max
from tests.core.certificates.test_single import _random_psd

REL = 1e-9


def _psd(seed: int, n: int, rank: int, scale: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    Y = rng.standard_normal((rank, n))
    if seed % 3 == 0:
        Y = np.abs(Y)  # nonnegative correlations: the anchored bound's regime
    return Y.T @ Y * scale


matrices = st.builds(_psd, st.integers(0, 10_000), st.integers(2, 8), st.integers(1, 8),
                     st.sampled_from([1e-3, 1.0, 1e3]))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(A=matrices)
def test_lambda1_proved_is_above_the_top_eigenvalue(A):
    out = cheap.lambda1_proved(A)
    lam = float(np.linalg.eigvalsh(A)[-1])
    if out is None:  # nothing proved: allowed (the caller falls back to the eigensolver)
        return
    bound, estimate = out
    assert bound >= lam - REL * max(1.0, abs(lam))
    assert bound >= estimate
    # and close: Lanczos found the top eigenvalue, the proof adds rounding only
    assert bound <= lam + 1e-6 * max(abs(lam), float(np.abs(A).max()))


def test_lambda1_proved_refuses_a_guess_below_the_top(monkeypatch):
    """A Lanczos value below lambda_max (forced) makes c I - A indefinite: nothing is proved."""
    A = _psd(4, 6, 6, 1.0)
    w, U = np.linalg.eigh(A)
    monkeypatch.setattr(cheap, "_ARROW_STEPS", 0)  # (the Cholesky route alone)
    monkeypatch.setattr(cheap, "eigsh", lambda *a, **kw: (w[-2:-1], U[:, -2:-1]))
    assert cheap.lambda1_proved(A) is None


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(A=matrices, k=st.integers(1, 8), seed=st.integers(0, 100))
def test_certify_by_lambda1_alone_is_above_bruteforce(monkeypatch, A, k, seed):
    """The Lanczos + Cholesky shortcut of a given answer (forced on tiny n) against brute force;
    the answer is a random feasible point, so it is taken only where lambda_1 really certifies it."""
    monkeypatch.setattr(single_mod, "_LANCZOS_MIN_N", 1)
    assert_certify_above_bruteforce(A, k, seed, rel=REL)


def test_certify_by_lambda1_alone_when_it_certifies(monkeypatch):
    """The shortcut taken (an answer at lambda_1: a nonnegative rank-one-plus-noise matrix and its
    Perron vector): the certificate holds lambda_1 alone, >= brute force, ratio as the dense path's."""
    rng = np.random.default_rng(3)
    v = np.abs(rng.standard_normal(7)) + 0.5
    A = np.outer(v, v) + 1e-4 * np.eye(7)
    opt, xo = brute_opt(A, 7)
    dense = certify(cov=A, k=7, x=xo)
    monkeypatch.setattr(single_mod, "_LANCZOS_MIN_N", 1)
    c = certify(cov=A, k=7, x=xo)
    assert set(c.bounds) == {"lambda1"}
    assert c.upper_bound >= opt - REL * float(np.abs(A).max())
    assert c.ratio == pytest.approx(dense.ratio, abs=1e-6)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(A=matrices, k=st.integers(3, 8), rel=st.sampled_from([5e-5, 1e-3]),
       top=st.sampled_from([None, 0.975, 0.9]))
def test_anchored_with_carried_failures_is_above_bruteforce(A, k, rel, top):
    """:func:`dual._anchored` (its second bracket warm-started by the first one's failure) and a
    later :func:`dual._anchored_above` from the carried failure: every proved bound >= OPT."""
    n = A.shape[0]
    k = min(k, n)
    opt, xo = brute_opt(A, k)
    if opt <= 0:
        return
    lower = float(xo @ A @ xo)
    carry: dict = {}
    tb = dual._anchored(A, k, lower * 0.999, np.inf, rel_tol=rel, carry=carry, top_ratio=top)
    scale = max(1.0, float(np.abs(A).max()))
    if tb is not None:
        assert tb >= opt - REL * scale
    for f in (1.01, 1.1, 1.5, 3.0):
        tb2 = dual._anchored_above(carry, lower * 0.999, lower * f, rel)
        if tb2 is not None:
            assert tb2 >= opt - REL * scale


def _dense_psd(seed, n, k):
    rng = np.random.default_rng(seed)
    Y = np.abs(rng.standard_normal((n // 2, n))) + rng.standard_normal((n // 2, n))
    return Y.T @ Y / n


@pytest.mark.parametrize("seed", range(6))
def test_dnn_float32_ritz_run_stopped_anywhere_is_a_valid_bound(seed):
    """n = 36 > 3 r: the Ritz steps run in float32.  A run stopped after any number of iterations
    (1..30, no checks: the final point is evaluated) reports the float64 bound of the dual point it
    returns, which is dual-feasible (N >= 0 off a zero diagonal, mu >= 0), and >= OPT."""
    n, k = 36, 2 + seed % 2
    A = _dense_psd(seed, n, k)
    opt, _ = brute_opt(A, k)
    s = float(np.abs(A).max())
    start = dual._screen_init(A, k)
    for iters in (1, 7, 30):
        state, val, info = _dnn.dnn_optimize(A, k, start, iters=iters, t_start=1e-3 * s, t_end=1e-4 * s,
                                            lr=3e-3 * s, check_every=0, ritz32=True)
        assert state.N.min() >= 0 and state.nu >= 0
        # (symmetric to float32 rounding; the eigensolvers read one triangle, itself >= 0)
        assert np.allclose(state.N, state.N.T, atol=1e-6 * s) and not np.diag(state.N).any()
        again, _ = _dnn.dnn_value(A, k, _dnn.DnnState(np.asarray(state.N, dtype=float), state.nu))
        assert val == pytest.approx(again, rel=1e-6)  # the value reported is this point's bound
        assert val >= opt - REL * max(1.0, s)
        assert again >= opt - REL * max(1.0, s)


def test_ritz_step_float32_agrees_with_float64():
    """The float32 operator only steers: its Ritz values agree with the float64 step's to
    single precision (the bound itself is never taken from them)."""
    A = _dense_psd(11, 60, 3)
    U = np.linalg.qr(np.random.default_rng(0).standard_normal((60, 10)))[0]
    ones = np.ones((60, 1))
    w64, _ = _dnn._ritz(A, U, 10, ones, np.array([0.01]))
    w32, _ = _dnn._ritz(A.astype(np.float32), U, 10, ones, np.array([0.01]))
    assert np.allclose(w32[:10], w64[:10], rtol=1e-5, atol=1e-5 * float(np.abs(A).max()))


class _Recorder:
    def __init__(self, ratio):
        self.ratio, self.calls = ratio, 0


@pytest.mark.parametrize("other_ratio, cuts", [(0.972, True), (0.99, False)])
def test_anchored_spares_the_cut_rounds_only_at_the_skip_level(other_ratio, cuts):
    """Another bound certifying 0.972 (above the cuts' aim 0.97, below _DNN_SKIP_AT) leaves the cut
    rounds running; one certifying 0.99 skips them.  The DNN's own value stays an upper bound."""
    n, k = 40, 3
    A = _dense_psd(5, n, k)
    opt, xo = brute_opt(A, k)
    lower = float(xo @ A @ xo)
    seen = []

    def before_cuts(val):
        seen.append(val)
        return lower / other_ratio

    val, state, info = dual._dnn(A, k, lower, "auto", None, x=xo, before_cuts=before_cuts,
                                 skip_at=dual._DNN_SKIP_AT)
    assert val >= opt - REL * max(1.0, float(np.abs(A).max()))
    if not seen or lower >= 0.97 * val:  # the DNN itself reached the cuts' aim: nothing to decide
        pytest.skip("the DNN alone certified 0.97 on this matrix")
    assert ("cuts" in info) is cuts


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(3, 7), st.integers(0, 2**31 - 1), st.floats(0.9, 1.1), st.floats(1.0, 1.05))
def test_node_rowsum_test_warm_from_an_ancestor_is_valid(n, seed, f, g):
    """Branch and bound's children start their row-sum test from the parent's ratios (at the
    parent's tau, at most the child's): a refuted child never holds a support above tau."""
    rng = np.random.default_rng(seed)
    A = _random_psd(rng, n)
    k = int(rng.integers(2, n + 1))
    opt, _ = brute_opt(A, k)
    nodes = _Nodes(A, k, None)
    scale = max(1.0, float(np.abs(A).max()))
    for _ in range(4):
        inc, exc = _node(rng, n, k)
        if int(inc.sum()) >= k:
            continue
        tau = f * opt
        _, r = nodes.rowsum_test(tau, inc, exc)
        free = np.flatnonzero(~inc & ~exc)
        if free.size == 0 or r is None:
            continue
        c = int(rng.choice(free))
        for inc2, exc2 in ((inc | (np.arange(n) == c), exc), (inc, exc | (np.arange(n) == c))):
            refuted, _ = nodes.rowsum_test(tau * g, inc2, exc2, r=r)
            if refuted:
                assert _node_max(A, k, inc2, exc2) <= tau * g + 1e-9 * scale


# ---- issue 39 item 1, second round: the cheaper runs stay upper bounds


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(2, 5), st.integers(2, 9), st.integers(3, 8), st.integers(0, 2**31 - 1), st.booleans(),
       st.sampled_from([1, 2, 3]), st.booleans())
def test_cross_table_column_filter_over_blocks_against_bruteforce(s, t, m, seed, held_as_A, block, fortran):
    """The cross table skips the columns of T that cannot enter a top-jm column sum (their total at
    most the (jm + 1)-th largest single square seen), and in the rows' tops those at most every
    row's jm-th largest so far: over blocks of 1..3 columns (the thresholds carried between
    blocks) the table equals the one-block table without any filter
    (written out here) and is >= ``||(A_IJ)_+||_2`` for every pair of supports.  ``fortran``: X in
    column order with S scattered among its columns (the table then runs over X's column ranges in
    place, S's own columns zeroed, when 4 |S| <= n)."""
    from itertools import combinations

    from nspca_core.certificates import cross
    from nspca_core.operators.cov import Cov

    rng = np.random.default_rng(seed)
    if fortran:  # (4 |S| <= n: the in-place ranges)
        s, t = 2, max(t, 6)
    X = rng.standard_normal((m, s + t)) * rng.random(s + t) * 3
    if seed % 2:
        X[:, s:] *= 0.1  # most of T small: the filter's regime
    A = X.T @ X / m
    S, T = np.arange(s), np.arange(s, s + t)
    if fortran:
        S = np.sort(rng.choice(s + t, s, replace=False))
        T = np.setdiff1d(np.arange(s + t), S)
        X = np.asfortranarray(X)
    cov = Cov(None, A) if held_as_A else Cov(X, None)
    old = cross._BLOCK, cross._single
    cross._BLOCK, cross._single = block, lambda *a: None  # (float64 products: the table written out below)
    try:
        C = cross.cross_table(cov, S, T, s, t)
    finally:
        cross._BLOCK, cross._single = old
    P = np.maximum(A[np.ix_(S, T)], 0.0)
    if not held_as_A:  # the rounding allowance of the table's products through X
        P = np.maximum(A[np.ix_(S, T)] + 2 * (m + 2) * np.finfo(float).eps * np.sqrt(
            np.diag(A)[S].max() * np.diag(A)[T].max()) * (1 + 4 * m * np.finfo(float).eps), 0.0)
    P2 = P ** 2
    for i in range(1, s + 1):
        for j in range(1, t + 1):
            rows = np.sort(np.sort(P2, axis=1)[:, ::-1][:, :j].sum(axis=1))[::-1][:i].sum()
            cols = np.sort(np.sort(P2, axis=0)[::-1][:i].sum(axis=0))[::-1][:j].sum()
            assert C[i, j] == pytest.approx(np.sqrt(min(rows, cols)), rel=1e-12, abs=1e-300)
            best = max(np.linalg.norm(np.maximum(A[np.ix_(S, T)], 0.0)[np.ix_(I, J)], 2)
                       for I in combinations(range(s), i) for J in combinations(range(t), j))
            assert C[i, j] >= best * (1 - 1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_dnn_settled_early_is_a_valid_bound(seed):
    """``settle``: "auto"'s DNN stops once it certifies the cut threshold (no cut round would
    follow).  The stopped run's value is the float64 bound of the dual point it returns, >= OPT,
    and it ran no more iterations than the unsettled run."""
    n, k = 40, 2 + seed % 3
    A = _dense_psd(seed, n, k)
    opt, xo = brute_opt(A, k)
    lower = float(xo @ A @ xo) * 0.98  # a point a little below the optimum: the ratio stays open
    scale = max(1.0, float(np.abs(A).max()))
    runs = {}
    for settle in (None, 0.9, 0.97):
        val, state, info = dual._dnn(A, k, lower, "auto", None, x=xo, cuts=False, settle=settle)
        assert val >= opt - REL * scale
        again, _ = _dnn.dnn_value(A, k, _dnn.DnnState(np.asarray(state.N, dtype=float), state.nu))
        assert val >= again * (1 - 1e-6) and state.N.min() >= 0 and state.nu >= 0
        runs[settle] = (val, info["iterations"])
    assert runs[0.9][1] <= runs[None][1] and runs[0.97][1] <= runs[None][1]
    if runs[0.9][1] < runs[None][1]:  # stopped by the rule: there, the ratio asked for was certified
        assert lower >= 0.9 * runs[0.9][0]


@pytest.mark.parametrize("seed", range(4))
def test_dnn_going_beyond_the_settle_point_is_valid_and_never_looser(seed):
    """``beyond = (aim, gain)`` (issue 39, eleventh round): past ``settle`` the run goes on while its
    estimates promise at least ``gain`` more ratio.  Its value is a float64 bound >= OPT (brute force),
    it is never above the settled run's (the same iterates, then more), and it stops no later than the
    run without ``settle``."""
    n, k = 40, 2 + seed % 3
    A = _dense_psd(seed, n, k)
    opt, xo = brute_opt(A, k)
    lower = float(xo @ A @ xo) * 0.98
    scale = max(1.0, float(np.abs(A).max()))
    runs = {}
    for key, kw in {"settled": dict(settle=0.9), "beyond": dict(settle=0.9, beyond=(0.999, 1e-3)),
                    "full": dict(settle=None)}.items():
        val, state, info = dual._dnn(A, k, lower, "auto", None, x=xo, cuts=False, **kw)
        assert val >= opt - REL * scale
        again, _ = _dnn.dnn_value(A, k, _dnn.DnnState(np.asarray(state.N, dtype=float), state.nu))
        assert val >= again * (1 - 1e-6)
        runs[key] = (val, info["iterations"])
    assert runs["beyond"][0] <= runs["settled"][0]
    assert runs["settled"][1] <= runs["beyond"][1] <= runs["full"][1]


@given(h=st.lists(st.floats(1.0, 1e6), min_size=0, max_size=6), lower=st.floats(0.1, 1.0))
def test_outlook_is_aitkens_limit_of_the_last_three_estimates(h, lower):
    """:func:`dnn_steps._outlook`: with three decreasing estimates whose gains shrink, the ratio at Aitken's
    limit minus the ratio proved, written out here; else no verdict (``inf``)."""
    from nspca_core.certificates.dnn_steps import _outlook

    value = max(h) if h else 1.0
    got = _outlook(h, lower, value)
    if len(h) >= 3 and h[-3] - h[-2] > 0 and 0 <= h[-2] - h[-1] < h[-3] - h[-2]:
        g1, g2 = h[-3] - h[-2], h[-2] - h[-1]
        limit = h[-1] - g2 ** 2 / (g1 - g2)
        want = lower / limit - lower / value if limit > 0 else np.inf
        assert got == pytest.approx(want, rel=1e-12) if np.isfinite(want) else got == np.inf
    else:
        assert got == np.inf


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(A=matrices, k=st.integers(2, 8), rel=st.sampled_from([0.0, 5e-5, 1e-3, 0.05]),
       f=st.floats(0.5, 1.0), g=st.floats(1.0, 3.0), narrow=st.sampled_from([None, 5e-5]))
def test_anchored_bisection_is_above_bruteforce_and_carries_a_valid_failure(A, k, rel, f, g, narrow):
    """The one anchored bisection (:func:`anchor.anchored_bisection`, used by
    ``anchored_rowsum_bound`` and the certificates' ``dual._anchored``): from a proved top, the
    bound it returns is >= OPT and <= the top; the failure it carries (``tau_lo``, ``r_lo``) starts
    a later test at any larger tau without proving anything below OPT."""
    from nspca_core.certificates.anchor import AnchorRows, anchored_bisection, anchored_rowsum_test

    n = A.shape[0]
    k = min(k, n)
    opt, _ = brute_opt(A, k)
    if opt <= 0:
        return
    rows = AnchorRows(A, k)
    scale = max(1.0, float(np.abs(A).max()))
    hi = opt * g * (1 + 1e-6) + 1e-9 * scale
    if not anchored_rowsum_test(rows, hi)[0]:
        return  # the top not proved: the bisection is not asked
    tau, tau_lo, r_lo = anchored_bisection(rows, opt * f, hi, rel, steps=40, narrow=narrow)
    assert opt - REL * scale <= tau <= hi
    if np.isfinite(tau_lo):
        assert tau_lo <= tau
        for t2 in (tau_lo * 1.0001, (tau_lo + tau) / 2, tau):
            ok, _ = anchored_rowsum_test(rows, t2, r_lo)
            assert not ok or t2 >= opt - REL * scale


@pytest.mark.parametrize("seed", range(3))
def test_screen_init_by_warm_ritz_values_is_a_dual_point_near_the_best_mu(seed):
    """n > 150: the screening search evaluates lambda_max(M(mu)) by the top Ritz value of a warm
    block (not a Lanczos run per mu).  Its point is dual-feasible (N >= 0, symmetric, zero
    diagonal, mu >= 0), its rigorous bound at least OPT's lower bound x^T A x, and within 1% of
    the best mu on a fine grid evaluated by LAPACK (written out here)."""
    n, k = 170, 3 + seed * 4
    rng = np.random.default_rng(seed)
    Y = np.abs(rng.standard_normal((40, n))) + 0.5 * rng.standard_normal((40, n))
    A = Y.T @ Y / 40
    st_ = dual._screen_init(A, k)
    assert st_.nu >= 0 and st_.N.min() >= 0 and not np.diag(st_.N).any() and np.array_equal(st_.N, st_.N.T)
    val, _ = _dnn.dnn_value(A, k, st_)
    x = np.zeros(n)
    x[np.argsort(-np.diag(A))[:k]] = 1 / np.sqrt(k)
    assert val >= float(x @ A @ x)
    off = A - np.diag(np.diag(A))
    hi = min(float(off.max()), (float(np.linalg.eigvalsh(A)[-1]) - float(np.diag(A).max())) / (k - 1))

    def h(mu):
        M = np.maximum(off - mu, 0.0)
        M[np.diag_indices(n)] = np.diag(A) - mu
        return float(np.linalg.eigvalsh(M)[-1]) + mu * k

    best = min(h(mu) for mu in np.linspace(0.0, hi, 41))
    assert val <= best * 1.01


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(64, 100), st.integers(0, 2**31 - 1), st.sampled_from(["warm", "random", "bottom"]),
       st.booleans())
def test_dnn_lambda_max_from_a_ritz_guess_is_rigorous(n, seed, start, cuts):
    """A DNN point's lambda_max bound (dnn._lmax_state: a Ritz guess from the warm subspace, proved
    by Cholesky, else LAPACK) is never below LAPACK's top eigenvalue of the same dual matrix,
    whatever the warm subspace (a good one, a random one, the bottom eigenvectors)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n // 2, n)) * rng.random(n)
    A = X.T @ X / X.shape[0]
    k = int(rng.integers(2, 12))
    st0 = dual._screen_init(A, k)
    C = w_c = None
    if cuts:
        C = _dnn.ksupport_cuts(np.linalg.eigh(_dnn.assemble_dual(A, st0.N, st0.nu))[1][:, -2:], k)
        w_c = rng.random(2) * float(np.abs(A).max()) * 0.1
    w, V = np.linalg.eigh(_dnn.assemble_dual(A, st0.N, st0.nu, C, w_c))  # (the dual matrix, cuts included)
    U = {"warm": V[:, -10:][:, ::-1], "random": np.linalg.qr(rng.standard_normal((n, 10)))[0],
         "bottom": V[:, :10]}[start]
    state = _dnn.DnnState(st0.N, st0.nu, U, C, w_c)
    lam, _ = _dnn._lmax_state(A, state)
    exact = float(w[-1])
    assert lam >= exact
    if start == "warm":  # (a poor subspace may leave a looser, still proved, guess)
        assert lam <= exact + 1e-6 * max(abs(exact), float(np.abs(A).max()))
