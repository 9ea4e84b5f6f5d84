"""Issue 39, eighth round (the DNN bound on S is the certificate's cost at large k): the rigorous
evaluation's block steps reuse the product ``M U`` of the last step as the next step's first product,
``||A||_F`` is summed once per :class:`DnnWork`, and a split certificate's repeated anchored forecast is
answered from a one-entry memo.  Each must give the same floats as the former computation (the former
block steps are kept below as the reference), and every bound reached through them stays above brute
force, at scales from 2^-20 to 2^20 and on nearly singular matrices (the float32 search included)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nspca_core.certificates.dual as dual
from nspca_core.certificates.dnn import DnnState, DnnWork, dnn_optimize, dnn_value_lam
from nspca_core.certificates.dnn_lmax import _orthonormal, _ritz, _ritz_block, _times

from tests.bruteforce import brute_opt


def _former_ritz_block(M, U, max_steps, accept, by_top):
    """``dnn_lmax._ritz_block`` as written before this change (da896a5): a fresh ``M @ U`` for every residual."""
    n = M.shape[0]
    if U is None or n < 64 or U.shape[1] * 3 >= n:
        return None
    r = U.shape[1]
    for _ in range(max_steps):
        w, U = _ritz(M, U, r)
        R = M @ U - U * w[:r]
        res2 = np.einsum("ij,ij->j", R, R)
        gap = np.maximum(w[:r] - w[min(r, w.size - 1)], 1e-300)
        block = float(np.max(res2 / gap))
        top = float(res2[0]) / max(float(w[0] - w[1]), 1e-300) if w.size > 1 else block
        if (top if by_top else block) <= accept * abs(float(w[0])):
            break
    return w, block, top


def _sym(n, seed, rank=None, scale=1.0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    F = rng.standard_normal((n, rank or n + 3))
    A = F @ F.T / F.shape[1]
    return (A * scale).astype(dtype)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(64, 140), seed=st.integers(0, 2**31 - 1), r=st.integers(2, 8),
       orth=st.booleans(), by_top=st.booleans(), f32=st.booleans(), steps=st.integers(1, 6),
       accept=st.sampled_from([1e-12, 1e-9, 1e-6, 1e-3]))
def test_block_steps_reusing_MU_equal_the_former_ones(n, seed, r, orth, by_top, f32, steps, accept):
    """(w, block allowance, top allowance) bit for bit as the former steps, from an orthonormal start or
    one that needs orthonormalizing, on float64 M (the reuse) and float32 M (no reuse)."""
    M = _sym(n, seed, dtype=np.float32 if f32 else np.float64)
    rng = np.random.default_rng(seed + 1)
    U = rng.standard_normal((n, r))
    if orth:
        U = _orthonormal(U)
    new = _ritz_block(M, U.copy(), steps, accept, by_top)
    old = _former_ritz_block(M, U.copy(), steps, accept, by_top)
    if 3 * r >= n:
        assert new is None and old is None
        return
    assert new[0].tobytes() == old[0].tobytes()
    assert new[1] == old[1] and new[2] == old[2]


def test_ritz_with_a_given_product_equals_the_product_made_inside():
    """``_ritz(M, U, r, MU=_times(M, U))`` gives the same floats as ``_ritz(M, U, r)`` (U here in LAPACK's
    Fortran order: ``_times`` forms the product from a C-ordered copy, as ``_ritz`` does); a non-orthonormal U (which
    is orthonormalized first) ignores the given product, and so does an operator with a low-rank part."""
    n, r = 120, 5
    M = _sym(n, 3)
    rng = np.random.default_rng(4)
    U = _orthonormal(rng.standard_normal((n, r)))
    w1, V1 = _ritz(M, U, r)
    w2, V2 = _ritz(M, U, r, MU=_times(M, U))
    assert w1.tobytes() == w2.tobytes() and V1.tobytes() == V2.tobytes()
    Y = rng.standard_normal((n, r))  # not orthonormal: a wrong MU must not be used
    w3, _ = _ritz(M, Y, r)
    w4, _ = _ritz(M, Y, r, MU=np.zeros((n, r)))
    assert w3.tobytes() == w4.tobytes()
    L, lw = np.ones((n, 1)), np.array([0.3])
    w5, _ = _ritz(M, U, r, L, lw)
    w6, _ = _ritz(M, U, r, L, lw, MU=np.zeros((n, r)))
    assert w5.tobytes() == w6.tobytes()


def test_norm_of_is_the_norm_and_follows_the_object():
    """``DnnWork.norm_of``: ``np.linalg.norm`` of that very array; a new array (even equal) is summed anew."""
    A = _sym(30, 1)
    B = A * 2.0
    work = DnnWork()
    assert work.norm_of(A) == np.linalg.norm(A)
    assert work.norm_of(B) == np.linalg.norm(B)
    assert work.norm_of(A) == np.linalg.norm(A)


def test_evaluations_with_a_work_equal_fresh_ones():
    """An evaluation through a DnnWork (its cached ||A||_F, its arrays) gives the bound of a fresh one, bit for bit."""
    n, k = 96, 7
    A = _sym(n, 5)
    rng = np.random.default_rng(6)
    N = np.abs(rng.standard_normal((n, n))) * 0.01
    N = ((N + N.T) / 2).astype(np.float32)
    np.fill_diagonal(N, 0.0)
    U = _orthonormal(rng.standard_normal((n, 6)))
    st_ = DnnState(N, 0.05 * n, U)
    work = DnnWork()
    for _ in range(2):  # the second with the norm already summed
        assert dnn_value_lam(A, k, st_, True, work) == dnn_value_lam(A, k, st_, True, None)


def test_a_repeated_forecast_is_answered_once(monkeypatch):
    """The same A object, k, tau and x with the certificate's record handed on (``seen``): one call of the
    restricted test, the same verdict; any of them different (or an equal but distinct array): asked again."""
    calls = []
    real = dual.restricted_refutes

    def counted(A, k, x, tau):
        calls.append((id(A), k, tau))
        return real(A, k, x, tau)

    monkeypatch.setattr(dual, "restricted_refutes", counted)
    record: dict = {}  # (the certificate's own: dual._forecast_fails keeps no module-level memo)
    n, k = 200, 6
    A = _sym(n, 8, rank=10)
    x = np.zeros(n)
    x[:k] = 1 / np.sqrt(k)
    lower = float(x @ A @ x)
    cfg = {"anchor_forecast": True}
    v1 = dual._forecast_fails(A, k, x, lower / 0.975, cfg, record)
    v2 = dual._forecast_fails(A, k, x, lower / 0.975, cfg, record)
    assert v1 == v2 == real(A, k, x, lower / 0.975) and len(calls) == 1
    dual._forecast_fails(A, k, x, lower / 0.95, cfg, record)
    assert len(calls) == 2
    dual._forecast_fails(A.copy(), k, x, lower / 0.95, cfg, record)
    assert len(calls) == 3
    y = x.copy()
    y[k] = 1e-3
    dual._forecast_fails(A, k, y, lower / 0.95, cfg, record)
    assert len(calls) == 4


def _near_singular(n, seed, e, rank):
    """A rank-``rank`` PSD matrix plus 2^-40 of noise, scaled by 2^e (adversarial scales, near-singular)."""
    rng = np.random.default_rng(seed)
    F = np.abs(rng.standard_normal((n, rank))) * rng.choice([1.0, -1.0], size=(n, rank), p=[0.8, 0.2])
    E = rng.standard_normal((n, n)) * 2.0 ** -40
    A = F @ F.T + (E + E.T) / 2
    return A * 2.0 ** e


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), e=st.integers(-20, 20), rank=st.integers(1, 3), k=st.integers(1, 2),
       n=st.integers(64, 72))
def test_float32_search_and_reused_products_never_below_brute_force(seed, e, rank, k, n):
    """The float32 search (``ritz32``, one DnnWork, its block steps and evaluations) on near-singular
    matrices at scales 2^-20..2^20: every rigorous value (the run's, and a fast and an exact evaluation of
    its point) is at least the brute-force optimum."""
    A = _near_singular(n, seed, e, rank)
    opt, _ = brute_opt(A, k)
    scale = float(np.abs(A).max())
    work = DnnWork()
    st0 = DnnState(np.zeros((n, n)), 0.0)
    st1, v, _ = dnn_optimize(A, k, st0, iters=12, t_start=1e-3 * scale, t_end=1e-4 * scale, lr=3e-3 * scale,
                             r=6, ritz32=True, check_every=5, work=work)
    tol = 1e-12 * abs(opt) + 1e-300
    assert v >= opt - tol
    assert dnn_value_lam(A, k, st1, True, work)[0] >= opt - tol
    assert dnn_value_lam(A, k, st1, False, work)[0] >= opt - tol


@pytest.mark.parametrize("e", [-20, 0, 20])
def test_block_step_guess_is_proved_or_refused_at_extreme_scales(e):
    """At 2^-20 and 2^20 the reused-product block steps still give a guess that the Cholesky proof
    accepts only above lambda_max (LAPACK's, within its rounding allowance)."""
    n, k = 80, 3
    A = _near_singular(n, 11, e, 2)
    rng = np.random.default_rng(12)
    U = _orthonormal(rng.standard_normal((n, 6)))
    val, lam = dnn_value_lam(A, k, DnnState(np.zeros((n, n)), 0.0, U), True, DnnWork())
    top = float(np.linalg.eigvalsh(A)[-1])
    assert lam >= top - 1e-12 * abs(top)


# ---- a start's value from the block steps that chose it (dual_start._start_value)

def test_screen_and_kkt_points_are_the_same_with_their_blocks_kept():
    """``_screen_init(keep=)`` and ``_kkt_beaten(keep=)`` return the same point / verdict, float for float,
    as without; the kept block has n rows and orthonormal columns."""
    from nspca_core.certificates.dual_start import _kkt_beaten

    n, k = 220, 9
    A = _sym(n, 21, rank=12)
    keep: dict = {}
    s1, s2 = dual._screen_init(A, k), dual._screen_init(A, k, keep=keep)
    assert s1.N.tobytes() == s2.N.tobytes() and s1.nu == s2.nu and s2.U is None
    assert keep["U"].shape[0] == n and np.allclose(keep["U"].T @ keep["U"], np.eye(keep["U"].shape[1]), atol=1e-8)
    x = np.zeros(n)
    x[:k] = 1 / np.sqrt(k)
    lower = float(x @ A @ x)
    kb: dict = {}
    assert _kkt_beaten(A, x, np.inf, lower) == _kkt_beaten(A, x, np.inf, lower, kb) and kb["U"].shape[0] == n


def test_start_value_is_lapacks_without_a_block_or_near_the_lower_bound():
    """No block, no lower bound, or a guessed value certifying _START_EXACT of lower: LAPACK's value, as before."""
    from nspca_core.certificates.dual_start import _START_EXACT, _start_value

    n, k = 200, 8
    A = _sym(n, 31, rank=15)
    st_ = dual._screen_init(A, k)
    exact = dnn_value_lam(A, k, st_)
    U = _orthonormal(np.random.default_rng(1).standard_normal((n, 4)))
    assert _start_value(A, k, st_, None, 1.0) == exact
    assert _start_value(A, k, st_, U, None) == exact
    assert _start_value(A, k, st_, U, exact[0]) == exact  # lower = the value: ratio 1 >= _START_EXACT
    guessed = _start_value(A, k, st_, U, 0.5 * exact[0])
    assert 0.5 < _START_EXACT and guessed[0] >= exact[0] * (1 - 1e-12)


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), e=st.integers(-20, 20), rank=st.integers(1, 3), k=st.integers(1, 2),
       n=st.integers(64, 72), which=st.sampled_from(["screen", "kkt"]))
def test_start_values_from_their_blocks_never_below_brute_force(seed, e, rank, k, n, which):
    """The screening and KKT starts valued from their own blocks (a Cholesky proof at a Ritz guess) on
    near-singular matrices at scales 2^-20..2^20: at least the brute-force optimum and, up to LAPACK's own
    allowance, at least LAPACK's top eigenvalue of the same dual matrix."""
    from nspca_core.certificates.dual_start import _start_value, kkt_init

    A = _near_singular(n, seed, e, rank)
    opt, xo = brute_opt(A, k)
    keep: dict = {}
    if which == "screen":
        st_ = dual._screen_init(A, k, keep=keep)
        U = keep.get("U")
    else:
        st_ = DnnState(kkt_init(A, xo), 0.0)
        U = _orthonormal(np.column_stack([xo, np.random.default_rng(seed).standard_normal((n, 3))]))
    v, lam = _start_value(A, k, st_, U, 1e-3 * abs(opt) if opt > 0 else None)
    assert v >= opt - 1e-12 * abs(opt) - 1e-300
    M = A + st_.N - st_.nu / n
    top = float(np.linalg.eigvalsh(M)[-1])
    assert lam >= top - 64 * n * np.finfo(float).eps * (np.linalg.norm(M) + np.linalg.norm(A) + np.linalg.norm(st_.N))
