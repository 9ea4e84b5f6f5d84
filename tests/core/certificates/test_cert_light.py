"""Issue 39, seventh round (certify alone within 3x the answer at CBCL k = 60..75):

- a dense "auto" certificate with a given x proves lambda_1 alone by a Cholesky factorization at a
  block-Krylov guess (``cheap.lambda1_only``) where the d = 1 bounds, estimated from the same Ritz pairs,
  cannot be the smallest: never below LAPACK's lambda_1 or brute force, and the d = 1 bounds it leaves
  out are indeed above it (the certificate's bound is the same);
- ``ksupport_cuts`` by direct indexing: each cut is still the family's best (against a slow loop).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nspca_core.certificates import bounds as _bounds
from nspca_core.certificates import certify
from nspca_core.certificates.bounds import _Spectral, cheap_bounds_at
from nspca_core.certificates.cheap import lambda1_only
from nspca_core.certificates.dnn_steps import cut_rhs, ksupport_cuts

from tests.bruteforce import brute_opt


def _factor_cov(seed: int, n: int, m: int = 300) -> np.ndarray:
    """A covariance with three strong factors (two of nearly equal size; one with mixed signs),
    like CBCL's: lambda_2 near lambda_1, the d = 1 bounds above lambda_1 at large k."""
    rng = np.random.default_rng(seed)
    F = rng.standard_normal((m, 3)) * [3.0, 2.8, 2.0]
    L = np.abs(rng.standard_normal((3, n)))
    L[1] *= rng.choice([-1.0, 1.0], n)
    X = F @ L + rng.standard_normal((m, n))
    return np.cov(X, rowvar=False)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 9), data=st.data())
def test_lambda1_only_is_above_brute_force_and_lapack(seed, n, data):
    """Tiny inputs: whenever a bound is returned (any k, any margin), it is at least OPT (brute
    force) and LAPACK's top eigenvalue; the d = 1 bounds it leaves out are at least as large."""
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n + 2, n)) * rng.uniform(0.01, 100.0)
    A = B.T @ B / (n + 2)
    k = data.draw(st.integers(1, n))
    margin = data.draw(st.sampled_from([-0.5, 0.0, 1e-2]))  # (a negative margin: returned more often)
    out = lambda1_only(A, k, margin=margin)
    if out is None:
        return
    b = cheap_bounds_at(out.spectrum(), k)
    assert list(b) == ["lambda1"]
    lam = float(np.linalg.eigvalsh(A)[-1])
    assert b["lambda1"] >= lam
    assert b["lambda1"] >= brute_opt(A, k)[0] * (1 - 1e-12)
    if margin >= 0:
        full = cheap_bounds_at(_Spectral(A, 2).spectrum(), k)
        assert min(full.values()) >= b["lambda1"] * (1 - 1e-9)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n=st.integers(40, 160), steps=st.integers(1, 12), data=st.data())
def test_lambda1_only_never_below_lambda1_however_few_steps(seed, n, steps, data):
    """A guess from too few block steps may sit below lambda_1: the Cholesky then fails and nothing is
    returned; a bound returned is never below LAPACK's eigenvalue, and the d = 1 bounds left out are
    above it (the certificate's smallest bound unchanged)."""
    A = _factor_cov(seed, n)
    k = data.draw(st.integers(1, n))
    out = lambda1_only(A, k, margin=data.draw(st.sampled_from([-0.5, 1e-2])), steps=steps)
    if out is None:
        return
    value = cheap_bounds_at(out.spectrum(), k)["lambda1"]
    assert value >= float(np.linalg.eigvalsh(A)[-1])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lambda1_only_leaves_out_only_bounds_that_cannot_win(seed):
    """Where it applies (k large on factor data), the exact d = 1 bounds are above its lambda_1 bound:
    the smallest cheap bound is the same as from the top eigenpairs (to LAPACK's rounding)."""
    A = _factor_cov(seed, 160)
    for k in (60, 100, 150):
        out = lambda1_only(A, k)
        assert out is not None
        light = cheap_bounds_at(out.spectrum(), k)
        full = cheap_bounds_at(_Spectral(A, 2).spectrum(), k)
        assert min(full.values()) == pytest.approx(light["lambda1"], rel=1e-7)
        assert min(full["paper(d=1)"], full["residual(d=1)"]) > light["lambda1"]


def test_dense_certificate_skips_the_top_eigenpairs_where_they_cannot_win(monkeypatch):
    """certify(cov, k, x) at large k on factor data: no LAPACK top eigenpairs (the d = 1 bounds could not
    be the smallest); the same certificate as with them, to rounding.  (Fails on the base: it always
    computes them.)"""
    A = _factor_cov(3, 160)
    k = 100
    x = np.zeros(160)
    x[np.argsort(-np.diag(A))[:k]] = 1.0
    calls = []
    real = _bounds._Spectral

    class Counted(real):
        def __init__(self, *a, **kw):
            calls.append(1)
            super().__init__(*a, **kw)

    import nspca_core.certificates.single as _single
    monkeypatch.setattr(_single, "_Spectral", Counted)
    light = certify(cov=A, k=k, x=x)
    assert calls == [] and "paper(d=1)" not in light.bounds
    monkeypatch.setattr(_single, "lambda1_only", lambda A_, k_, **kw: None)
    full = certify(cov=A, k=k, x=x)
    assert calls == [1] and "paper(d=1)" in full.bounds
    assert light.upper_bound == pytest.approx(full.upper_bound, rel=1e-6)
    assert light.upper_bound >= light.lower


def _family_best(v: np.ndarray, k: int) -> float:
    """The best ratio ``(|c|^T |v|)^2 / beta_k(|c|)`` over ksupport_cuts' family, by a plain loop: keep the
    h largest |v_i|, the rest set to their mean over r + 1 slots (h = k - r - 1, r = 0..k-1).  (The signs of
    v only make ``c^T v = |c|^T |v|``; beta of the unsigned c is the family's choice criterion.)"""
    a = np.abs(v)
    order = np.argsort(-a, kind="stable")
    s = a[order]
    best = 0.0
    for r in range(k):
        h = k - r - 1
        T = s[h:].sum() / (r + 1)
        c = np.where(np.arange(v.size) < h, s, T)
        cc = np.empty_like(c)
        cc[order] = c
        beta = float(cut_rhs(cc[:, None], k)[0])  # (of |c|: the family's criterion)
        if beta > 0:
            best = max(best, float(cc @ a) ** 2 / beta)
    return best


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 30), L=st.integers(1, 6), data=st.data())
def test_ksupport_cuts_pick_the_family_best(seed, n, L, data):
    """Each column's cut reaches the best ratio of its family (a slow loop over r), and any cut is valid
    on S_k^n: ``(c^T x)^2 <= beta_k(c)`` at brute force's optimal supports' points (random feasible x)."""
    rng = np.random.default_rng(seed)
    V = rng.standard_normal((n, L))
    if data.draw(st.booleans()):
        V = np.round(V, 1)  # ties
    k = data.draw(st.integers(1, n))
    C = ksupport_cuts(V, k)
    beta = cut_rhs(C, k)
    crit = cut_rhs(np.abs(C), k)
    assert np.all(C * V >= 0)  # signs follow v
    for j in range(L):
        got = float(C[:, j] @ V[:, j]) ** 2 / crit[j] if crit[j] > 0 else 0.0
        assert got >= _family_best(V[:, j], k) * (1 - 1e-9) - 1e-300
    for _ in range(20):
        x = np.zeros(n)
        J = rng.choice(n, size=k, replace=False)
        x[J] = rng.random(k)
        x /= np.linalg.norm(x)
        assert np.all((C.T @ x) ** 2 <= beta * (1 + 1e-12))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 40), data=st.data())
def test_rows_low_never_above_the_full_row_sums(seed, n, data):
    """The cheap row-sum estimate (some rows only) is at most the full one (to rounding): a choice it allows,
    the full one allows too (lambda1_only's decisions are those of the full row sums)."""
    from nspca_core.certificates.bounds import _rowsum_topk
    from nspca_core.certificates.cheap import _rows_low
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n + 1, n))
    A = B.T @ B / (n + 1)
    v1 = rng.standard_normal(n) * data.draw(st.sampled_from([0.0, 0.5, 2.0]))
    k = data.draw(st.integers(1, n))
    full = _rowsum_topk(A - np.outer(v1, v1), k)
    assert _rows_low(A, v1, k) <= full + 1e-12 * abs(full)  # (a sum's order may differ: rounding)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lambda1_only_early_stop_makes_the_same_choices(seed, monkeypatch):
    """The early stop after a few block steps (a cost rule) ends the try only where the converged estimate
    would too, at every k of a factor covariance; where it lets the try go on, the bound is the same."""
    from nspca_core.certificates import cheap as _cheap
    A = _factor_cov(seed, 120)
    early = [lambda1_only(A, k) for k in range(1, 121)]
    monkeypatch.setattr(_cheap, "_LIGHT_EARLY", 0)  # (never: steps count from 1)
    late = [lambda1_only(A, k) for k in range(1, 121)]
    assert [e is None for e in early] == [t is None for t in late]
    assert any(e is None for e in early) and any(e is not None for e in early)
    assert all(e.w[0] == t.w[0] for e, t in zip(early, late) if e is not None)
