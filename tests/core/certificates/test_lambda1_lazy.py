"""The sparse route's lazy lambda_1 (nspca_core.certificates.sparse_route, issue 39 corpus28): the whole problem's
lambda_1 (its Lanczos run and arrowhead proof) is proved only where it could bind.  lambda1_floor is a lower bound on
lambda_1 (against the exact covariance's eigenvalue); where it rules lambda_1 out the certificate is the one made
with lambda_1, float for float, less that entry; on the other side of the threshold lambda_1 is proved and the
certificate is the former one entirely (counted on both sides)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import event, given, settings
from hypothesis import strategies as st

from nspca_core import fit
from nspca_core.certificates import _settings as S
from nspca_core.certificates import cheap, dual, single, sparse_route as R
from nspca_core.certificates.route import _certify_large
from nspca_core.operators.sparse import as_sparse_cov
from tests.bruteforce import brute_opt
from tests.core.certificates.test_sparse_rows import exact_cov


def _topic(seed: int, m: int = 60, n: int = 20, topics: int = 2, words: int = 8) -> np.ndarray:
    """Counts from a few topics over ``words`` words each plus Poisson noise: lambda_1 proved by its arrowhead step
    but not certifying at k = 3..5, the split route's bound below it (ratios ~0.97-0.99 at k = 5)."""
    rng = np.random.default_rng(seed)
    D = rng.poisson(2.0, (m, n)) * (rng.random((m, n)) < 0.5)
    for _ in range(topics):
        b = np.zeros(n, dtype=np.int64)
        b[rng.choice(n, words, replace=False)] = rng.integers(1, 6, words)
        D = D + np.outer(rng.integers(0, 12, m), b)
    return D


def _routed(mp, n: int):
    """Small inputs through the sparse route's split: screens of max(2, k), lambda_1's step from n features."""
    mp.setattr(S, "_SPLIT_MIN", 2)
    mp.setattr(S, "_SPLIT_PER_K", 1)
    mp.setattr(S, "_SPLIT_BRANCH_MAX_K", 2)
    mp.setattr(R, "_SPLIT_SHARE", np.inf)
    for mod in (cheap, single, R):
        mp.setattr(mod, "_LANCZOS_MIN_N", n)


def _fail_top(mp):
    real = dual.top_test
    mp.setattr(dual, "top_test", lambda A, k, tau, seen=None: (*real(A, k, tau, seen)[:1], False, None))


_lambda1_real = R._lambda1


def _counted(mp, calls=None):
    """R._lambda1 counted (each call appends 1 to the list returned)."""
    calls = [] if calls is None else calls
    mp.setattr(R, "_lambda1", lambda *a, **kw: calls.append(1) or _lambda1_real(*a, **kw))
    return calls


def _hex(c):
    return float(c.upper_bound).hex(), c.kind, {b: float(v).hex() for b, v in c.bounds.items()}


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), m=st.integers(2, 12), n=st.integers(1, 8), center=st.booleans(),
       support=st.integers(1, 8))
def test_floor_below_lambda1(seed, m, n, center, support):
    """lambda1_floor <= lambda_1 of the exact covariance (rational arithmetic, rounded once), for any nonnegative x."""
    rng = np.random.default_rng(seed)
    D = (rng.poisson(3.0, (m, n)) * (rng.random((m, n)) < 0.6)).astype(np.int64)
    x = np.zeros(n)
    x[rng.choice(n, min(support, n), replace=False)] = rng.random(min(support, n)) + 0.01
    cov = as_sparse_cov(sp.csr_matrix(D.astype(float)), center=center)
    f = R.lambda1_floor(cov, x)
    top = float(np.linalg.eigvalsh(exact_cov(D, center))[-1])
    assert f is None or f <= top * (1 + 1e-12) + 1e-12


def test_floor_near_lambda1_after_one_step():
    """On a corpus with a dominant topic the floor is within 1e-3 of lambda_1 (what makes it useful)."""
    rng = np.random.default_rng(4)
    b = np.zeros(15)
    b[[1, 4, 9]] = (5.0, 3.0, 4.0)
    D = np.outer(rng.integers(1, 20, 80), b) + rng.poisson(0.3, (80, 15))
    cov = as_sparse_cov(sp.csr_matrix(D))
    x = fit(sp.csr_matrix(D), k=3, certify=False).x
    top = float(np.linalg.eigvalsh(cov.dense())[-1])
    assert top * (1 - 1e-3) <= R.lambda1_floor(cov, x) <= top


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_ruled_out_on_both_sides_of_the_floor(seed):
    """Counted at the threshold: a floor just above the split bound rules lambda_1 out (no proof, the split route
    once, the certificate the lazy-off one less its "lambda1" entry); a floor AT the split bound proves it after
    the split route, which runs again with it (the certificate the lazy-off one to the bit)."""
    D = _topic(seed)
    X = sp.csr_matrix(D.astype(float))
    k = 5
    x = fit(X, k=k, certify=False).x
    with pytest.MonkeyPatch.context() as mp:
        _routed(mp, 5)
        _fail_top(mp)
        mp.setattr(R, "_LAZY_LAMBDA1", False)
        off = R.sparse_route(as_sparse_cov(X), k, x, "auto", None, _certify_large)
        mp.setattr(R, "_LAZY_LAMBDA1", True)
        assert off is not None and off.info["route"].startswith("split") and "lambda1" in off.bounds
        ub = min(v for b, v in off.bounds.items() if b != "lambda1")
        assert ub < off.bounds["lambda1"]  # (lambda_1 does not bind here: the lazy rule can apply)
        cov = as_sparse_cov(X)
        lower = cov.quad(x)
        accept = 1.0 - S._EFFORT["auto"].get("accept_gap", S._EFFORT["auto"]["target_gap"])
        assert lower < accept * ub  # (a floor at ub: lambda_1's own step cannot stand, not run first)
        splits = []
        real_large = _certify_large

        def large(*a, **kw):
            splits.append(kw.get("whole"))
            return real_large(*a, **kw)

        for floor, ruled in ((ub * (1 + 1e-12), True), (ub, False)):
            calls, splits[:] = _counted(mp), []
            mp.setattr(R, "lambda1_floor", lambda cov, x, f=floor: f)
            c = R.sparse_route(as_sparse_cov(X), k, x, "auto", None, large)
            if ruled:
                assert len(calls) == 0 and splits == [{}] and c.info.get("lambda1_lazy") == "ruled out"
                assert "lambda1" not in c.bounds
                h = _hex(off)
                assert _hex(c) == (h[0], h[1], {b: v for b, v in h[2].items() if b != "lambda1"})
            else:
                assert len(calls) == 1 and len(splits) == 2 and splits[0] == {} and "lambda1" in splits[1]
                assert "lambda1_lazy" not in c.info and _hex(c) == _hex(off)


def test_lambda1_step_decided_by_the_floor():
    """Where the floor leaves lambda_1's own step able to stand (lower >= accept floor), it runs first as before:
    its certificate returned (one proof); below that level it is not run before the routes."""
    rng = np.random.default_rng(1)
    b = np.zeros(12, dtype=np.int64)
    b[[2, 5, 7]] = (4, 3, 5)
    D = np.outer(rng.integers(1, 30, 60), b) + rng.poisson(0.05, (60, 12))
    X = sp.csr_matrix(D.astype(float))
    k = 3
    x = fit(X, k=k, certify=False).x
    with pytest.MonkeyPatch.context() as mp:
        _routed(mp, 5)
        mp.setattr(R, "_LAZY_LAMBDA1", False)
        off = R.sparse_route(as_sparse_cov(X), k, x, "auto", None, _certify_large)
        mp.setattr(R, "_LAZY_LAMBDA1", True)
        assert off.kind == "lambda1"
        calls = _counted(mp)
        c = R.sparse_route(as_sparse_cov(X), k, x, "auto", None, _certify_large)
        assert len(calls) == 1 and _hex(c) == _hex(off)
        cov = as_sparse_cov(X)
        accept = 1.0 - S._EFFORT["auto"].get("accept_gap", S._EFFORT["auto"]["target_gap"])
        level = cov.quad(x) / accept
        _fail_top(mp)
        real_fails = R.top_test_fails
        for floor, runs_first in ((level * (1 - 1e-9), True), (level * (1 + 1e-9), False)):
            seen: list = []
            mp.setattr(R, "lambda1_floor", lambda cov, x, f=floor: f)
            _counted(mp, seen)
            mp.setattr(R, "top_test_fails", lambda *a, **kw: seen.append("fails") or real_fails(*a, **kw))
            c = R.sparse_route(as_sparse_cov(X), k, x, "auto", None, _certify_large)
            assert (seen[:1] == [1]) == runs_first
            assert runs_first or c.info.get("lambda1_lazy") == "ruled out" or seen.count(1) == 1


@st.composite
def corpora(draw):
    """A dominant topic with noise (lambda_1 proved, the split bound below it: the rule applies) or documents from
    a few Dirichlet topics (lambda_1 often not proved by its arrowhead step: nothing to rule out)."""
    seed, n = draw(st.integers(0, 2**31 - 1)), draw(st.integers(12, 16))
    if draw(st.booleans()):
        return _topic(seed, draw(st.integers(30, 60)), n, draw(st.integers(1, 3)), draw(st.integers(4, 8)))
    rng = np.random.default_rng(seed)
    m, t = draw(st.integers(20, 45)), draw(st.integers(1, 3))
    topics = rng.dirichlet(np.full(n, draw(st.floats(0.2, 1.5))), t)
    return np.array([rng.multinomial(int(rng.integers(2, 30)), topics[rng.integers(t)]) for _ in range(m)])


@settings(max_examples=30, deadline=None)
@given(D=corpora(), k=st.integers(3, 4), fail=st.booleans())
def test_lazy_same_floats_and_above_brute_force(D, k, fail):
    """Lazy on and off, the anchored test holding (the dense route reading lambda_1 for its light spectrum) or made to
    fail: the same upper bound, kind and every bound but lambda_1's to the bit; lambda_1 missing only where the floor
    ruled it out (then above the bound returned); every bound at least the exact optimum (brute force over supports,
    on the exact covariance)."""
    k = min(k, D.shape[1] - 1)
    X = sp.csr_matrix(D.astype(float))
    x = fit(X, k=k, certify=False).x
    with pytest.MonkeyPatch.context() as mp:
        _routed(mp, 5)
        # (the dense route's light spectrum from 5 features, its d = 2 bound off: the dense route reads lambda_1)
        mp.setattr(cheap, "_LIGHT_SPEC_MIN_N", 5)
        mp.setattr(single, "_D2_MAX_N", 2)
        if fail:
            _fail_top(mp)
        mp.setattr(R, "_LAZY_LAMBDA1", False)
        off = R.sparse_route(as_sparse_cov(X), k, x, "auto", None, _certify_large)
        mp.setattr(R, "_LAZY_LAMBDA1", True)
        on = R.sparse_route(as_sparse_cov(X), k, x, "auto", None, _certify_large)
    if off is None:
        assert on is None
        return
    h_on, h_off = _hex(on), _hex(off)
    event(f"lazy: {on.info.get('lambda1_lazy')}, lambda1 in off: {'lambda1' in off.bounds}, "
          f"route: {on.info.get('route')}")
    assert h_on[:2] == h_off[:2]
    if on.info.get("lambda1_lazy"):  # (where lambda_1's arrowhead step proved nothing, there was no entry to lose)
        assert "lambda1" not in on.bounds and off.bounds.get("lambda1", np.inf) > on.upper_bound
        assert h_on[2] == {b: v for b, v in h_off[2].items() if b != "lambda1"}
    else:
        assert h_on[2] == h_off[2]
    opt = brute_opt(exact_cov(D, True), k)[0]
    assert min(on.bounds.values()) >= opt * (1 - 1e-9) - 1e-12
