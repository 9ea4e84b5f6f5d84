"""Issue 39 (certify alone within 3x the answer, with margin): the DNN's n x n arrays are made once per
certificate (:class:`nspca_core.certificates.dnn.DnnWork`) and shared by its runs (the plain run and the
cut run) and their rigorous evaluations, instead of fresh ones per run (each fresh array cost its page
faults: ~2,300 in the DNN of a CBCL certificate at k = 65).  Adam's matrix step works in the spent
gradient's memory, and an evaluation's float64 arrays reuse the idle iteration matrix and gradient.

Every result must be the same, float for float, as with fresh arrays (and Adam's step as the former
code's, kept below as the reference); every bound stays above brute force."""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.linalg.blas import saxpy as _saxpy

from nspca_core.certificates.dnn import (DnnState, DnnWork, _lmax_state, assemble_dual, chol_lmax, dnn_optimize,
                                         dnn_value_lam, ksupport_cuts)
from nspca_core.certificates.dnn_steps import _Adam

from tests.bruteforce import brute_opt


def _former_step2(opt: _Adam, x, g, c, tmp):
    """``_Adam._step2`` as written before this change (6acb18d): its own scratch array, g^2 first."""
    b1, b2 = opt.B1, opt.B2
    m, v = opt.m, opt.v
    if opt.s1 < opt._RENORM or opt.s2 < opt._RENORM:
        m *= np.float32(opt.s1)
        v *= np.float32(opt.s2)
        opt.s1 = opt.s2 = 1.0
    opt.s1 *= b1
    opt.s2 *= b2
    s1, s2 = opt.s1, opt.s2
    np.multiply(g, g, out=tmp)
    np.maximum(tmp, opt.floor, out=tmp)
    _saxpy(tmp.ravel(), v.ravel(), a=1.0 / s2)
    _saxpy(g.ravel(), m.ravel(), a=1.0 / s1)
    np.sqrt(v, out=tmp)
    tmp += opt.EPS / math.sqrt((1.0 - b2) * s2)
    np.divide(m, tmp, out=tmp)
    _saxpy(tmp.ravel(), x.ravel(), a=-c * (1.0 - b1) / math.sqrt(1.0 - b2) * s1 / math.sqrt(s2))
    np.maximum(x, opt.zero, out=x)
    return x


def _bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).tobytes()


def _adam_pair_steps(n: int, seed: int, steps: int, *, with_next_matrix: bool = False):
    """Run ``steps`` random matrix steps of a DnnWork-backed _Adam (spending g; writing the next matrix
    ``B + x`` when ``with_next_matrix``) beside the former step on its own scratch; x (and the matrix)
    are asserted equal bit for bit after every step, m and v at the end.  Returns (new, old)."""
    rng = np.random.default_rng(seed)
    x_new = np.abs(rng.standard_normal((n, n))).astype(np.float32)
    x_old = x_new.copy()
    B = rng.standard_normal((n, n)).astype(np.float32) if with_next_matrix else None
    out = np.full((n, n), np.nan, dtype=np.float32)
    new, old = _Adam((n, n), DnnWork()), _Adam((n, n))
    tmp = np.empty((n, n), dtype=np.float32)
    for j in range(steps):
        g = (rng.standard_normal((n, n)) * 10.0 ** rng.uniform(-12, 0)).astype(np.float32)
        lr = float(rng.uniform(1e-4, 1e-1))
        g_old = g.copy()
        new.step(x_new, g, lr, spend_g=True, **({"then": (B, out)} if with_next_matrix else {}))
        old.t += 1
        c = lr * math.sqrt(1.0 - old.B2 ** old.t) / (1.0 - old.B1 ** old.t)
        _former_step2(old, x_old, g_old, c, tmp)
        assert _bits(x_new) == _bits(x_old), j
        if with_next_matrix:
            assert _bits(out) == _bits(np.add(B, x_old)), j
    assert _bits(new.m) == _bits(old.m) and _bits(new.v) == _bits(old.v)
    return new, old


@settings(max_examples=20, deadline=None)
@given(n=st.integers(2, 60), seed=st.integers(0, 2**31 - 1), steps=st.integers(1, 300))
def test_adam_step_in_the_gradients_memory_equals_the_former_step(n, seed, steps):
    """A matrix step that spends g (``spend_g=True``, a DnnWork's arrays) moves x, m and v exactly as the
    former step with its own scratch array (renormalizations included: up to 300 steps)."""
    new, old = _adam_pair_steps(n, seed, steps)
    assert (new.s1, new.s2) == (old.s1, old.s2)


def _dense(n: int, seed: int, m: int | None = None) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m or 2 * n, n)) * rng.uniform(0.2, 3.0, n)
    X[:, : max(2, n // 5)] += rng.standard_normal((X.shape[0], 1)) * 2.0  # a correlated block: a real gap
    return X.T @ X / X.shape[0]


def _two_runs(A: np.ndarray, k: int, work_first, work_second, iters=(12, 20)):
    """A plain run, then a run renewing its cuts from the first's Ritz vectors (as dual._dnn then
    dual._cut_rounds do), each with the given DnnWork (None: fresh arrays)."""
    scale = float(np.abs(A).max())
    kw = dict(t_start=0.1 * scale, t_end=1e-3 * scale, lr=0.01 * scale, r=6, ritz32=True)
    st1, v1, i1 = dnn_optimize(A, k, DnnState(np.zeros(A.shape), 0.0), iters=iters[0], check_every=5,
                               work=work_first, **kw)
    st2, v2, i2 = dnn_optimize(A, k, DnnState(st1.N, st1.nu, st1.U), iters=iters[1], refresh=7, check_every=10,
                               work=work_second, **kw)
    return (st1, v1, i1), (st2, v2, i2)


@settings(max_examples=12, deadline=None)
@given(n=st.integers(65, 110), seed=st.integers(0, 2**31 - 1), kfrac=st.floats(0.05, 0.6))
def test_runs_sharing_a_work_equal_runs_with_fresh_arrays(n, seed, kfrac):
    """Both runs with one DnnWork (the iteration matrix and gradient in one float64 array that the
    evaluations reuse) return the same points, values and rigorous lambdas, bit for bit, as runs with
    fresh arrays each (n >= 64: the Ritz guesses and Cholesky proofs are used)."""
    A = _dense(n, seed)
    k = max(2, int(kfrac * n))
    work = DnnWork()
    shared = _two_runs(A, k, work, work)
    fresh = _two_runs(A, k, None, None)
    for (s_a, v_a, i_a), (s_b, v_b, i_b) in zip(shared, fresh):
        assert v_a == v_b and i_a["lam"] == i_b["lam"]
        assert _bits(s_a.N) == _bits(s_b.N) and s_a.nu == s_b.nu
        assert _bits(s_a.U) == _bits(s_b.U)
        assert (s_a.w is None) == (s_b.w is None) and (s_a.w is None or _bits(s_a.w) == _bits(s_b.w))


@settings(max_examples=25, deadline=None)
@given(n=st.integers(3, 100), seed=st.integers(0, 2**31 - 1), cuts=st.integers(0, 5),
       f32=st.booleans(), fast=st.booleans())
def test_evaluation_in_a_used_work_equals_a_fresh_one(n, seed, cuts, f32, fast):
    """The rigorous evaluation (assembly, the Ritz guesses, the Cholesky proof or LAPACK) in a DnnWork
    whose arrays hold another point's garbage gives the same floats as with fresh arrays."""
    rng = np.random.default_rng(seed)
    A = _dense(n, seed)
    N = np.abs(rng.standard_normal((n, n))) * 0.05 * float(np.abs(A).max())
    N = (N + N.T) / 2
    np.fill_diagonal(N, 0.0)
    if f32:
        N = N.astype(np.float32)
    U = np.linalg.qr(rng.standard_normal((n, min(6, max(1, n // 4)))))[0] if n >= 64 else None
    C = ksupport_cuts(rng.standard_normal((n, cuts)), max(1, n // 3)) if cuts else None
    w = np.abs(rng.standard_normal(cuts)) * 0.1 if cuts else None
    state = DnnState(N, float(rng.uniform(0, 0.1) * n), U, C, w)
    work = DnnWork()
    for name in ("M64", "MG", "N", "adam_m"):  # garbage where the evaluation works
        work.scratch(name, (n, n), np.float64)[...] = rng.standard_normal((n, n)) * 1e6
    assert _lmax_state(A, state, fast, work) == _lmax_state(A, state, fast)
    assert dnn_value_lam(A, max(1, n // 3), state, fast, work) == dnn_value_lam(A, max(1, n // 3), state, fast)
    M = assemble_dual(A, N, state.nu, C, w)
    assert _bits(assemble_dual(A, N, state.nu, C, w, work)) == _bits(M)
    c = float(np.linalg.eigvalsh(M)[-1]) * (1 + 1e-6) + 1e-9
    assert chol_lmax(M, c, work.scratch("MG", (n, n), np.float64)) == chol_lmax(M, c)
    # (a float32 A, which no certificate passes: the assembly still keeps NumPy's own result types)
    A32 = A.astype(np.float32)
    fresh = assemble_dual(A32, N, state.nu, C, w)
    kept = assemble_dual(A32, N, state.nu, C, w, work)
    assert fresh.dtype == kept.dtype and _bits(kept) == _bits(fresh)


def test_halves_and_scratch_keep_their_roles_apart():
    """DnnWork.halves: two C-ordered float32 arrays in its float64 array's memory, disjoint, the second
    64-byte aligned relative to the first; scratch returns the same memory for the same role."""
    for n in (1, 7, 64, 361):
        work = DnnWork()
        M, G = work.halves("MG", (n, n))
        big = work.scratch("MG", (n, n), np.float64)
        assert M.flags.c_contiguous and G.flags.c_contiguous and M.shape == G.shape == (n, n)
        assert not np.shares_memory(M, G)
        # (both within the float64 array and its 64 spare bytes: no memory beyond that one array)
        assert M.ctypes.data == big.ctypes.data
        assert G.ctypes.data + G.nbytes <= big.ctypes.data + big.nbytes + 64
        assert (G.ctypes.data - M.ctypes.data) % 64 == 0
        M[...], G[...] = 1.0, 2.0
        assert np.all(M == 1.0) and np.all(G == 2.0)
        assert work.scratch("N", (n, n), np.float32).ctypes.data == work.scratch("N", (n, n), np.float32).ctypes.data
        A = np.ones((n, n))
        assert work.float32_of(A) is work.float32_of(A) and work.float32_of(A).dtype == np.float32
        assert not np.shares_memory(work.scratch("N", (n, n), np.float32), big)


def test_the_second_run_makes_no_new_work_arrays():
    """With the first run's DnnWork, the cut run allocates no n x n array but the points it keeps
    (its checks' copies of N, float32): its peak of traced memory stays below five of them (the check at 10, put off
    to the end by dnn._DEFER_CHECKS, holds its copy until then: one more than the four before).  Fresh
    arrays cost eight float32 n x n arrays and the evaluation's float64 ones (fails without DnnWork)."""
    n = 150
    A = _dense(n, 3)
    work = DnnWork()
    (st1, _, _), _ = _two_runs(A, 30, work, work)
    scale = float(np.abs(A).max())

    def second(w):
        tracemalloc.start()
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        dnn_optimize(A, 30, DnnState(st1.N, st1.nu, st1.U), iters=20, refresh=7, check_every=10,
                     t_start=0.1 * scale, t_end=1e-3 * scale, lr=0.01 * scale, r=6, ritz32=True, work=w)
        peak = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()
        return peak

    one = 4 * n * n  # a float32 n x n array, in bytes
    assert second(work) < 5 * one
    assert second(None) > 8 * one


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 8), k=st.integers(1, 8), seed=st.integers(0, 2**31 - 1))
def test_runs_sharing_a_work_bound_brute_force(n, k, seed):
    """Tiny inputs: both runs' rigorous values with one DnnWork are >= the brute-force optimum."""
    k = min(k, n)
    A = _dense(n, seed, m=n + 2)
    opt, _ = brute_opt(A, k)
    work = DnnWork()
    (_, v1, _), (st2, v2, i2) = _two_runs(A, k, work, work, iters=(8, 12))
    assert v1 >= opt * (1 - 1e-12) - 1e-12
    assert v2 >= opt * (1 - 1e-12) - 1e-12
    assert dnn_value_lam(A, k, st2, False, work)[0] >= opt * (1 - 1e-12) - 1e-12


@settings(max_examples=15, deadline=None)
@given(n=st.integers(2, 260), seed=st.integers(0, 2**31 - 1), steps=st.integers(1, 40),
       piece=st.sampled_from([64, 128, 1 << 10, 1 << 15]))
def test_adam_step_by_pieces_and_the_next_matrix_equal_whole_passes(n, seed, steps, piece):
    """Issue 39 (ninth round): the matrix step runs its passes piece by piece (:data:`dnn_steps._PIECE`
    entries; small pieces here so that n x n spans many, with a ragged last one) and writes the next
    iteration's matrix ``B + x`` (``then``): x, m, v exactly as the former whole-array step, and the
    matrix exactly ``np.add(B, x)`` of the new x."""
    import nspca_core.certificates.dnn_steps as ds

    old_piece = ds._PIECE
    ds._PIECE = piece
    try:
        _adam_pair_steps(n, seed, steps, with_next_matrix=True)
    finally:
        ds._PIECE = old_piece


@settings(max_examples=8, deadline=None)
@given(n=st.integers(65, 140), seed=st.integers(0, 2**31 - 1), kfrac=st.floats(0.05, 0.6),
       piece=st.sampled_from([64, 1 << 12, 1 << 15]))
def test_runs_with_the_matrix_from_the_step_equal_the_former_runs(n, seed, kfrac, piece):
    """dnn_optimize takes each iteration's M from the last Adam step (a fresh sum after an evaluation,
    which works in M's memory): the same points, values and rigorous lambdas, bit for bit, as the former
    runs (M summed afresh every iteration, ``dnn._FUSE_M`` off, Adam's passes over whole arrays), and
    every value at least the brute-force optimum."""
    import nspca_core.certificates.dnn as dn
    import nspca_core.certificates.dnn_steps as ds

    A = _dense(n, seed)
    k = max(2, int(kfrac * n))
    old_piece = ds._PIECE
    try:
        ds._PIECE = piece
        fused = _two_runs(A, k, DnnWork(), DnnWork())
        ds._PIECE, dn._FUSE_M = 1 << 40, False
        former = _two_runs(A, k, DnnWork(), DnnWork())
    finally:
        ds._PIECE, dn._FUSE_M = old_piece, True
    for (s_a, v_a, i_a), (s_b, v_b, i_b) in zip(fused, former):
        assert v_a == v_b and i_a["lam"] == i_b["lam"]
        assert _bits(s_a.N) == _bits(s_b.N) and s_a.nu == s_b.nu and _bits(s_a.U) == _bits(s_b.U)
    sub = np.ix_(range(10), range(10))  # (a principal submatrix: its optimum is at most A's)
    assert min(fused[0][1], fused[1][1]) >= brute_opt(A[sub], min(k, 4))[0] * (1 - 1e-9)


@settings(max_examples=10, deadline=None)
@given(n=st.integers(65, 110), seed=st.integers(0, 2**31 - 1), kfrac=st.floats(0.05, 0.6))
def test_runs_on_a_fortran_ordered_matrix_equal_runs_on_its_c_ordered_copy(n, seed, kfrac):
    """A Fortran-ordered A (a sparse corpus's centered Gram matrix is one) gives the runs the same points,
    values and rigorous lambdas, bit for bit, as its C-ordered copy; the runs' float32 copy of it is C-ordered
    whatever A's order (``DnnWork.float32_of``: flat views of it are then views, not n x n copies)."""
    A = _dense(n, seed)
    AF = np.asfortranarray(A)
    assert AF.flags.f_contiguous and not AF.flags.c_contiguous
    work = DnnWork()
    a32 = work.float32_of(AF)
    assert a32.flags.c_contiguous and _bits(a32) == _bits(A.astype(np.float32))
    assert np.shares_memory(a32.ravel(), a32)
    k = max(2, int(kfrac * n))
    for (s_a, v_a, i_a), (s_b, v_b, i_b) in zip(_two_runs(AF, k, DnnWork(), None), _two_runs(A, k, None, None)):
        assert v_a == v_b and i_a["lam"] == i_b["lam"]
        assert _bits(s_a.N) == _bits(s_b.N) and s_a.nu == s_b.nu and _bits(s_a.U) == _bits(s_b.U)
