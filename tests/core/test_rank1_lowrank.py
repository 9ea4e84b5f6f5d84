"""rank-1 solver, low-rank factor and validation (foundation of the solver core)."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from nspca_core import InputError, lowrank_factor, rank1_nspca, topk_nonneg
from tests.bruteforce import brute_opt


def test_topk_nonneg_examples():
    v = np.array([0.5, -1.0, 2.0, 0.5, 0.0])
    assert topk_nonneg(v, 2).tolist() == [0, 2]  # tie at 0.5 goes to the lower index
    assert topk_nonneg(v, 5).tolist() == [0, 2, 3, 4]  # only 4 nonnegative entries
    assert topk_nonneg(-v, 3).tolist() == [1, 4]


@pytest.mark.parametrize("bad, msg", [(0, r"`k` must be an int in \[1, n_features=3\]; got 0"),
                                      (4, "got 4"), (1.5, "got 1.5"), (True, "got True")])
def test_topk_nonneg_rejects_bad_k(bad, msg):
    with pytest.raises(InputError, match=msg):
        topk_nonneg([1.0, 2.0, 3.0], bad)


def test_rank1_rejects_nonfinite():
    with pytest.raises(ValueError, match="`v` must be finite"):
        rank1_nspca([1.0, np.nan], 1)


def test_rank1_unit_norm_for_tiny_entries():
    # found by hypothesis: sqrt((6.3e-162)^2) underflows to a norm off by 0.3%
    assert rank1_nspca(np.array([6.26696896e-162]), 1).tolist() == [1.0]
    x = rank1_nspca(np.array([1e-170, -3e-170, 2e-170]), 2)
    assert x.tolist() == [0.0, 1.0, 0.0]
    x = rank1_nspca(np.array([5e-324, 5e-324]), 2)  # subnormals (hypothesis again)
    assert np.isclose(np.linalg.norm(x), 1.0) and x[0] == x[1]


@settings(max_examples=200, deadline=None)
@given(arrays(np.float64, st.integers(1, 7), elements=st.floats(-10, 10)), st.data())
def test_rank1_matches_brute_force(v, data):
    k = data.draw(st.integers(1, v.size))
    x = rank1_nspca(v, k)
    assert x.min() >= 0 and np.count_nonzero(x) <= k
    assert np.isclose(np.linalg.norm(x), 1.0)
    opt, _ = brute_opt(np.outer(v, v), k)
    assert (v @ x) ** 2 >= opt - 1e-9 * max(1.0, opt)


def test_lowrank_factor_thin_equals_dense():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((6, 20))
    V1, w1 = lowrank_factor(X, d=3)
    V2, w2 = lowrank_factor(cov=X.T @ X / 6, d=3)
    assert np.allclose(w1, w2) and np.allclose(V1 @ V1.T, V2 @ V2.T, atol=1e-10)
    assert np.allclose(np.abs(V1), np.abs(V2), atol=1e-8)
    full = np.linalg.eigvalsh(X.T @ X / 6)[::-1]
    assert np.allclose(w1, full[:4], atol=1e-10)


def test_lowrank_factor_rank_deficient_pads():
    X = np.random.default_rng(1).standard_normal((2, 5))
    V, w = lowrank_factor(X, d=4)
    assert V.shape == (5, 4) and w.shape == (5,)
    assert np.allclose(V @ V.T, X.T @ X / 2, atol=1e-10)


def test_lowrank_factor_requires_exactly_one_input():
    with pytest.raises(InputError, match="exactly one of `X`"):
        lowrank_factor(d=1)
    with pytest.raises(InputError, match="`d` must be an int in \\[1, n_features=3\\]; got 5"):
        lowrank_factor(cov=np.eye(3), d=5)
    with pytest.raises(InputError, match="`cov` must be symmetric"):
        lowrank_factor(cov=np.array([[1.0, 2.0], [0.0, 1.0]]), d=1)


# ----------------------------------------------------------------------------- partial eigensolver
def _reference_factor(A, d):
    """Obviously correct: the full spectrum by numpy, top d + 1, signs as lowrank_factor fixes them."""
    w, U = np.linalg.eigh(A)
    w, U = np.clip(w[::-1][: d + 1], 0.0, None), U[:, ::-1][:, :d]
    rows = np.argmax(np.abs(U), axis=0)
    U = U * np.sign(U[rows, np.arange(d)])
    return U * np.sqrt(w[:d]), w


@pytest.mark.parametrize("kind", ["decaying", "flat", "repeated", "rank2"])
def test_lanczos_factor_matches_the_full_eigendecomposition(monkeypatch, kind):
    import nspca_core.lowrank as L

    monkeypatch.setattr(L, "_LANCZOS_MIN_N", 50)  # the path taken for n >= 1500 in production
    rng = np.random.default_rng(7)
    n, d = 240, 3
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    w = {"decaying": 0.7 ** np.arange(n), "flat": 1.0 + 0.01 * rng.random(n),
         "repeated": np.r_[[5.0, 5.0, 5.0, 2.0, 2.0], 0.5 * rng.random(n - 5)],
         "rank2": np.r_[[3.0, 1.0], np.zeros(n - 2)]}[kind]
    A = (Q * w) @ Q.T
    A = 0.5 * (A + A.T)
    called = []
    real = L._top_lanczos
    monkeypatch.setattr(L, "_top_lanczos", lambda *a: called.append(1) or real(*a))
    V, eig = lowrank_factor(cov=A, d=d)
    assert called
    Vr, eigr = _reference_factor(A, d)
    assert np.allclose(eig, eigr, rtol=0, atol=1e-12 * eigr[0])
    assert np.allclose(V @ V.T, Vr @ Vr.T, atol=1e-9)  # the rank-d approximation itself
    if kind in ("decaying", "flat"):  # distinct eigenvalues: the same columns, same signs
        assert np.allclose(V, Vr, atol=1e-9)


def test_lanczos_falls_back_to_eigh_when_a_residual_is_too_large(monkeypatch):
    import nspca_core.lowrank as L

    A = np.cov(np.random.default_rng(2).standard_normal((300, 80)), rowvar=False)
    ref = lowrank_factor(cov=A, d=2)  # n < 1500: eigh
    monkeypatch.setattr(L, "_LANCZOS_MIN_N", 10)
    monkeypatch.setattr(L, "_LANCZOS_RESIDUAL", 0.0)  # no Lanczos answer is accepted: eigh
    fallback = lowrank_factor(cov=A, d=2)
    assert np.array_equal(ref[0], fallback[0]) and np.array_equal(ref[1], fallback[1])


@pytest.mark.parametrize("c", [1e-200, 1e-80, 1e80, 1e150])
def test_lowrank_factor_is_scale_free(c):
    """X * 1e-200 gave V = 0 (X X^T underflowed): now V scales with c."""
    X = np.random.default_rng(4).standard_normal((8, 30))
    for thin in (True, False):
        Y = X if thin else np.vstack([X] * 5)
        V, eig = lowrank_factor(Y, d=3)
        Vc, eigc = lowrank_factor(Y * c, d=3)
        assert np.allclose(Vc / c, V, rtol=1e-12, atol=1e-12 * np.abs(V).max())
        if 1e-300 < c * c < 1e300:
            assert np.allclose(eigc / (c * c), eig, rtol=1e-12)


@pytest.mark.parametrize("c", [1e-300, 1e-150, 1e-80, 1e80, 1e150, 1e300])
def test_rank1_is_scale_free(c):
    rng = np.random.default_rng(9)
    for _ in range(50):
        v = rng.standard_normal(int(rng.integers(1, 9)))
        k = int(rng.integers(1, v.size + 1))
        assert np.allclose(rank1_nspca(v * c, k), rank1_nspca(v, k), rtol=1e-12, atol=0)


def test_a_missed_repeated_eigenvalue_is_detected(monkeypatch):
    """Lanczos may return one copy of a repeated top eigenvalue; the deflation check sees the other."""
    import nspca_core.lowrank as L

    rng = np.random.default_rng(11)
    n = 120
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    w = np.r_[[5.0, 5.0, 3.0], 0.5 * rng.random(n - 3)]
    A = (Q * w) @ Q.T
    A = 0.5 * (A + A.T)
    # "found" 5 and 3, one copy of 5 missed: 3 would be taken for lambda_2
    assert L._missed_above(A, Q[:, [0, 2]], floor=3.0, top=5.0)
    assert not L._missed_above(A, Q[:, [0, 1, 2]], floor=3.0, top=5.0)

    import scipy.sparse.linalg as spla

    real = spla.eigsh
    calls = []

    def fake_eigsh(op, k, **kwargs):  # the first ARPACK answer misses the second copy of 5
        calls.append(k)
        if len(calls) == 1:
            return np.array([3.0, 5.0]), Q[:, [2, 0]]
        return real(op, k, **kwargs)

    monkeypatch.setattr(spla, "eigsh", fake_eigsh)
    assert L._top_lanczos(A, 2) is None  # refused: lowrank_factor falls back to eigh
    assert calls == [2, 1]
