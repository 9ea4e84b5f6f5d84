"""Sparse data below the dense size routed by cost (nspca_core.certificates.sparse_route): the split route is
chosen on one side of its cost threshold and not on the other, every route's bound holds against brute force
on small sparse counts, and where the dense route's first steps stand its certificate is returned unchanged."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core import certify, fit
from nspca_core.certificates import _settings as S
from nspca_core.certificates import cheap, dual, single, sparse_route as R
from nspca_core.certificates.route import _certify_large
from nspca_core.certificates.single import _certify_dense
from nspca_core.operators.sparse import as_sparse_cov
from tests.bruteforce import brute_opt
from tests.core.certificates.test_sparse_rows import exact_cov


def _counts(seed: int, m: int, n: int, lam: float = 3.0, density: float = 0.5) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.poisson(lam, (m, n)) * (rng.random((m, n)) < density)).astype(np.int64)


def _failing_top(monkeypatch):
    """The anchored test that spares the dense route's DNN made to fail (the split route follows)."""
    real = dual.top_test
    monkeypatch.setattr(dual, "top_test", lambda A, k, tau, seen=None: (*real(A, k, tau, seen)[:1], False, None))


@pytest.fixture
def small_screen(monkeypatch):
    """Screens of max(2, k) features, so that small inputs have a rest T."""
    monkeypatch.setattr(S, "_SPLIT_MIN", 2)
    monkeypatch.setattr(S, "_SPLIT_PER_K", 1)
    monkeypatch.setattr(S, "_SPLIT_BRANCH_MAX_K", 2)


def test_split_chosen_on_both_sides_of_its_cost(monkeypatch, small_screen):
    """split_pays is exactly the predicted-cost comparison: just below the share the split route's cost makes,
    the dense route; just above, the split route (and sparse_route takes it where the anchored test fails)."""
    X = sp.csr_matrix(_counts(3, 40, 9).astype(float))
    cov = as_sparse_cov(X)
    k = 3
    s = S.screened_size(cov.n, k, S._EFFORT["auto"])
    assert s < cov.n
    share = S.split_held_cost(cov.n, s, "auto") / S.dnn_run_cost(cov.n, "auto")
    x = fit(X, k=k, certify=False).x
    _failing_top(monkeypatch)
    monkeypatch.setattr(R, "_SPLIT_SHARE", share * (1 - 1e-9))
    assert not R.split_pays(cov, k, "auto")
    assert R.sparse_route(cov, k, x, "auto", None, _certify_large) is None
    assert "route" not in certify(X, k=k, x=x).info
    monkeypatch.setattr(R, "_SPLIT_SHARE", share * (1 + 1e-9))
    assert R.split_pays(cov, k, "auto")
    c = R.sparse_route(as_sparse_cov(X), k, x, "auto", None, _certify_large)
    assert c is not None and c.info["route"].startswith("split")
    assert certify(X, k=k, x=x).info["route"].startswith("split")
    # never for dense data, another effort, no given point or k <= 2
    assert not R.split_pays(cov, 2, "auto") and not R.split_pays(cov, k, "full")
    assert R.sparse_route(cov, k, None, "auto", None, _certify_large) is None
    from nspca_core.operators.cov import Cov
    assert not R.split_pays(Cov(np.asarray(X.todense())), k, "auto")


def test_default_costs_at_the_topic_corpus_shape():
    """The cost model's verdict, both sides: the split route's two eigendecompositions against the dense DNN
    run on n features (it pays at n = 1,600 with a screen of 300; never where the screen is all of n)."""
    for n, s in ((1600, 300), (2500, 300), (400, 300)):
        pays = S.split_held_cost(n, s, "auto") < R._SPLIT_SHARE * S.dnn_run_cost(n, "auto")
        assert pays == (float(n) ** 3 + float(n - s) ** 3 + float(s) ** 3 + 80 * S._DNN_PASSES * s * s
                        < 160 * S._DNN_PASSES * float(n) * n)
    assert S.split_held_cost(1600, 300, "auto") < S.dnn_run_cost(1600, "auto")


@st.composite
def corpora(draw):
    m = draw(st.integers(6, 14))
    n = draw(st.integers(5, 8))
    D = _counts(draw(st.integers(0, 2**31 - 1)), m, n, draw(st.floats(0.5, 12.0)), draw(st.floats(0.2, 0.9)))
    D[:, draw(st.integers(0, n - 1))] *= draw(st.sampled_from([1, 30]))  # a word far more frequent
    return D


def split_against_brute(D: np.ndarray, center: bool, k: int, extra=()):
    """``(certificate, exact optimum)`` of the counts D at ``min(k, n - 1)`` by the sparse route's split: screens of
    max(2, k) features, the split's cost always paying, the anchored test failing; ``extra``: more ``(object, name,
    value)`` patches for the run.  None where D has no variance."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(S, "_SPLIT_MIN", 2)
        mp.setattr(S, "_SPLIT_PER_K", 1)
        mp.setattr(S, "_SPLIT_BRANCH_MAX_K", 2)
        mp.setattr(R, "_SPLIT_SHARE", np.inf)
        for obj, name, value in extra:
            mp.setattr(obj, name, value)
        _failing_top(mp)
        k = min(k, D.shape[1] - 1)
        if not np.any(exact_cov(D, center).diagonal() > 0):
            return None
        X = sp.csr_matrix(D.astype(float))
        x = fit(X, k=k, certify=False, center=center).x
        c = certify(X, k=k, x=x, center=center)
    return c, brute_opt(exact_cov(D, center), k)[0]


@settings(max_examples=40, deadline=None)
@given(D=corpora(), center=st.booleans(), k=st.integers(3, 7), both=st.booleans(), partial=st.booleans())
def test_bound_holds_against_brute_force(D, center, k, both, partial):
    """Every route's bound at least the exact optimum: the split route (the anchored test forced to fail; k at most
    single's _SPLIT_BRANCH_MAX_K: S by its DNN, no tree), and with ``both`` the dense route too (the smaller bound
    standing); ``partial``: the rest's two proofs (:mod:`.rest_top`) at any size; the feasible value is x's."""
    from nspca_core.certificates import rest_top as RT

    extra = [(RT, "_PARTIAL_MIN_N", 1)] if partial else []
    if both:
        extra += [(R, "_SPLIT_STANDS", np.inf), (R, "_S_OWN", ())]
    out = split_against_brute(D, center, k, extra)
    if out is None:
        return
    c, opt = out
    assert c.info["route"] in ("split(sparse)", "split+dense(sparse)")
    assert not both or c.info["route"] == "split+dense(sparse)"
    assert c.upper_bound >= opt * (1 - 1e-12) - 1e-300
    assert c.lower <= opt * (1 + 1e-12) + 1e-300


def _sparse_and_dense(D: np.ndarray, k: int):
    """``(sparse_route's certificate, the dense route's)`` of the counts D (centered) at k, given fit's answer;
    None where the data has no variance, the answer none, or the sparse route took the split (the other tests)."""
    X = sp.csr_matrix(D.astype(float))
    if not np.any(exact_cov(D, True).diagonal() > 0):
        return None
    x = fit(X, k=k, certify=False).x
    cov = as_sparse_cov(X)
    if not cov.quad(x) > 0:
        return None
    c = R.sparse_route(cov, k, x, "auto", None, _certify_large)
    if "route" in c.info:
        return None
    d, _ = _certify_dense(as_sparse_cov(X), k, x, "auto", None)
    return c, d


@settings(max_examples=25, deadline=None)
@given(D=corpora(), k=st.integers(3, 7))
def test_dense_route_unchanged_where_its_test_holds(D, k):
    """Where the anchored test holds (or is not tried), the certificate is the dense route's, float for float
    (its test handed on, not run twice)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(S, "_SPLIT_MIN", 2)
        mp.setattr(S, "_SPLIT_PER_K", 1)
        mp.setattr(S, "_SPLIT_BRANCH_MAX_K", 2)
        mp.setattr(R, "_SPLIT_SHARE", np.inf)
        pair = _sparse_and_dense(D, min(k, D.shape[1] - 1))
    if pair is None:
        return
    c, d = pair
    assert (c.upper_bound, c.kind, c.lower, c.bounds) == (d.upper_bound, d.kind, d.lower, d.bounds)


def test_lambda1_step_as_the_dense_route_makes_it(monkeypatch, small_screen):
    """Where lambda_1 proved at a Lanczos guess certifies the answer (the dense route's first step), the same
    certificate as that route's, without entering it."""
    monkeypatch.setattr(cheap, "_LANCZOS_MIN_N", 5)
    monkeypatch.setattr(single, "_LANCZOS_MIN_N", 5)
    monkeypatch.setattr(R, "_LANCZOS_MIN_N", 5)
    monkeypatch.setattr(R, "_SPLIT_SHARE", np.inf)
    rng = np.random.default_rng(1)
    b = np.zeros(12, dtype=np.int64)
    b[[2, 5, 7]] = (4, 3, 5)
    D = np.outer(rng.integers(1, 30, 60), b) + rng.poisson(0.05, (60, 12))
    X = sp.csr_matrix(D.astype(float))
    k = 3
    x = fit(X, k=k, certify=False).x
    calls = []
    monkeypatch.setattr(dual, "top_test", lambda *a, **kw: calls.append(a) or (None, False, None))
    c = R.sparse_route(as_sparse_cov(X), k, x, "auto", None, _certify_large)
    d, _ = _certify_dense(as_sparse_cov(X), k, x, "auto", None)
    assert d.kind == "lambda1" and not calls  # (the test never asked: the first step stood)
    assert (c.upper_bound, c.kind, c.lower, c.ratio) == (d.upper_bound, d.kind, d.lower, d.ratio)
    assert {a: v for a, v in c.info.items()} == {a: v for a, v in d.info.items()}


@pytest.mark.parametrize("seed", [0, 1])
def test_path_with_answers_never_looser_than_one_k(monkeypatch, small_screen, seed):
    """certify_path given the answers runs certify(k, x)'s own route where it is the sparse one: at every k its
    bound is at most certify(k, x)'s (1e-9 relative), the split route taken at some k and not others."""
    from nspca_core import certify_path

    monkeypatch.setattr(R, "_SPLIT_SHARE", np.inf)
    _failing_top(monkeypatch)
    X = sp.csr_matrix(_counts(seed, 30, 10, 4.0, 0.6).astype(float))
    ks = [2, 3, 5, 7]
    xs = [fit(X, k=k, certify=False).x for k in ks]
    path = certify_path(X, ks=ks, xs=xs)
    routes = []
    for k, x, c in zip(ks, xs, path):
        one = certify(X, k=k, x=x)
        routes.append(one.info.get("route"))
        assert c.upper_bound <= one.upper_bound * (1 + 1e-9)
    assert routes[0] is None and all(r is not None and r.startswith("split") for r in routes[1:])


def test_dense_too_on_both_sides_of_the_stand_level(monkeypatch, small_screen):
    """The dense route runs after the split route exactly where the split's ratio is below _SPLIT_STANDS (S's
    bound and its ratio are the split route's own; no kind of S's bound lets it stand here); the smaller bound is
    returned."""
    monkeypatch.setattr(R, "_SPLIT_SHARE", np.inf)
    monkeypatch.setattr(R, "_S_OWN", ())
    _failing_top(monkeypatch)
    X = sp.csr_matrix(_counts(5, 40, 10, 4.0, 0.6).astype(float))
    k = 4
    x = fit(X, k=k, certify=False).x
    cov = as_sparse_cov(X)
    cov.dense()
    split = _certify_large(cov, k, x, "auto", None)
    real, calls = single._certify_dense, []
    # (the dense route on all n features; S's own certificate calls it too, on |S| features)
    monkeypatch.setattr(single, "_certify_dense", lambda *a, **kw: calls.append(a[0].n == cov.n) or real(*a, **kw))
    monkeypatch.setattr(R, "_SPLIT_STANDS", split.ratio * (1 + 1e-9))
    c = R.sparse_route(as_sparse_cov(X), k, x, "auto", None, _certify_large)
    assert sum(calls) == 1 and c.info["route"] == "split+dense(sparse)"
    dense = real(as_sparse_cov(X), k, x, "auto", None)[0]
    assert c.upper_bound == min(split.upper_bound, dense.upper_bound)
    monkeypatch.setattr(R, "_SPLIT_STANDS", split.ratio * (1 - 1e-9))
    c = R.sparse_route(as_sparse_cov(X), k, x, "auto", None, _certify_large)
    assert sum(calls) == 1 and c.info["route"] == "split(sparse)" and c.upper_bound == split.upper_bound


def test_split_without_its_tree_up_to_the_branch_sparsity(monkeypatch, small_screen):
    """At k <= _SPLIT_BRANCH_MAX_K the split route is taken too (the anchored test failing), S's bound by its DNN
    with its cut rounds: S's dense certificate is never asked to leave them to a branch and bound
    (``tree_follows``), where the split route's default (``tree=True``) asks it exactly at those k."""
    monkeypatch.setattr(R, "_SPLIT_SHARE", np.inf)
    _failing_top(monkeypatch)
    X = sp.csr_matrix(_counts(7, 40, 10, 4.0, 0.6).astype(float))
    real, trees = single._certify_dense, []
    monkeypatch.setattr(single, "_certify_dense",
                        lambda *a, **kw: trees.append(bool(kw.get("tree_follows"))) or real(*a, **kw))
    for k, K in ((4, 4), (4, 3)):
        monkeypatch.setattr(single, "_SPLIT_BRANCH_MAX_K", K)  # (single's own name: _split_S reads it)
        x = fit(X, k=k, certify=False).x
        assert R.split_pays(as_sparse_cov(X), k, "auto")
        trees.clear()
        c = R.sparse_route(as_sparse_cov(X), k, x, "auto", None, _certify_large)
        assert c.info["route"].startswith("split") and trees and not any(trees)
        trees.clear()
        cov = as_sparse_cov(X)
        cov.dense()
        _certify_large(cov, k, x, "auto", None)
        assert trees[0] == (k <= K)


def test_split_stands_on_both_sides_of_its_kind(monkeypatch, small_screen):
    """Below _SPLIT_STANDS the split certificate stands alone exactly where S's bound is of a kind in _S_OWN (its
    own DNN or anchored row sums): the dense route on all n features not run; else run once, the smaller bound."""
    monkeypatch.setattr(R, "_SPLIT_SHARE", np.inf)
    monkeypatch.setattr(R, "_SPLIT_STANDS", np.inf)
    _failing_top(monkeypatch)
    X = sp.csr_matrix(_counts(5, 40, 10, 4.0, 0.6).astype(float))
    k = 4
    x = fit(X, k=k, certify=False).x
    cov = as_sparse_cov(X)
    cov.dense()
    kind = _certify_large(cov, k, x, "auto", None, tree=False).info["B_S_kind"]
    real, calls = single._certify_dense, []
    monkeypatch.setattr(single, "_certify_dense", lambda *a, **kw: calls.append(a[0].n == cov.n) or real(*a, **kw))
    monkeypatch.setattr(R, "_S_OWN", (kind,))
    c = R.sparse_route(as_sparse_cov(X), k, x, "auto", None, _certify_large)
    assert sum(calls) == 0 and c.info["route"] == "split(sparse)"
    monkeypatch.setattr(R, "_S_OWN", tuple(o for o in ("dnn", "anchored") if o != kind))
    c2 = R.sparse_route(as_sparse_cov(X), k, x, "auto", None, _certify_large)
    assert sum(calls) == 1 and c2.info["route"] == "split+dense(sparse)"
    assert c2.upper_bound == min(c.upper_bound, real(as_sparse_cov(X), k, x, "auto", None)[0].upper_bound)


@settings(max_examples=30, deadline=None)
@given(D=corpora(), need=st.floats(0.5, 2.0))
def test_lambda1_step_float_for_float(D, need):
    """sparse_route's lambda_1 step (:func:`sparse_route._lambda1`, the arrowhead proof run once with no ``need``)
    answers exactly what lambda1_proved at that ``need`` answers (the dense route's first step), and its whole
    problem's lambda1 is at least lambda_max of the exact covariance."""
    X = sp.csr_matrix(D.astype(float))
    cov = as_sparse_cov(X)
    A = cov.dense()
    E = exact_cov(D, True)
    top = float(np.linalg.eigvalsh(E)[-1])
    if not top > 0:
        return
    mv = cov.matvec if cheap._sparse_products(cov) else None
    lam1, whole = R._lambda1(A, cov, need * top)
    ref = cheap.lambda1_proved(A, matvec=mv, need=need * top)
    # (float for float where the arrowhead proof answers; where both fall back to ARPACK's guess and the Cholesky
    # proof, that path is the same call, whose value can move by an ulp between calls on a degenerate top pair)
    assert (lam1 is None) == (ref is None)
    assert lam1 is None or np.allclose(lam1, ref, rtol=1e-12, atol=0)
    if whole:
        assert whole["lambda1"] >= top * (1 - 1e-12)


def _lanczos_from(monkeypatch, n: int):
    """lambda_1's Lanczos step and the light spectrum from n features (the dense route's d = 2 bound off: it reads
    the eigenpairs up to _D2_MAX_N features)."""
    monkeypatch.setattr(cheap, "_LANCZOS_MIN_N", n)
    monkeypatch.setattr(single, "_LANCZOS_MIN_N", n)
    monkeypatch.setattr(R, "_LANCZOS_MIN_N", n)
    monkeypatch.setattr(cheap, "_LIGHT_SPEC_MIN_N", n)
    monkeypatch.setattr(single, "_D2_MAX_N", 2)


@st.composite
def topic_corpora(draw):
    """Documents drawn from a few sparse topics (the d = 1 bounds loose, the anchored test holding)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    m, n, t = draw(st.integers(30, 60)), draw(st.integers(12, 20)), draw(st.integers(2, 4))
    topics = rng.dirichlet(np.full(n, draw(st.floats(0.1, 1.0))), t)
    return np.array([rng.multinomial(int(rng.integers(3, 40)), topics[rng.integers(t)]) for _ in range(m)])


@settings(max_examples=30, deadline=None)
@given(D=topic_corpora(), k=st.integers(3, 4))
def test_light_spec_where_the_anchored_test_holds(D, k):
    """Where the anchored test holds and lambda_1 was proved by the arrowhead step, the dense route without A's top
    eigenpairs where the d = 1 estimate is above the test's level: its bound at least the exact optimum, the same
    lower as the dense route with them, and no looser than it."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(S, "_SPLIT_MIN", 2)
        mp.setattr(S, "_SPLIT_PER_K", 1)
        mp.setattr(R, "_SPLIT_SHARE", np.inf)
        _lanczos_from(mp, 3)
        pair = _sparse_and_dense(D, k)
    if pair is None:
        return
    c, d = pair
    opt, _ = brute_opt(exact_cov(D, True), k)
    assert c.upper_bound >= opt * (1 - 1e-12) - 1e-300
    assert c.lower == d.lower
    assert c.upper_bound <= d.upper_bound * (1 + 1e-12)


def test_light_spec_on_both_sides_of_its_margin(monkeypatch):
    """_light_spec hands the dense route lambda_1 alone exactly where the d = 1 estimate is at least (1 +
    _LIGHT_SPEC_MARGIN) times the level: just below the estimate a Lambda1Only, just above it None."""
    _lanczos_from(monkeypatch, 3)
    X = sp.csr_matrix(_counts(11, 50, 12, 3.0, 0.6).astype(float))
    cov = as_sparse_cov(X)
    A = cov.dense()
    k = 3
    lam1, whole = R._lambda1(A, cov, np.inf)
    assert whole and "lambda1" in whole
    w, U = whole["ritz"]  # (the arrowhead step's Lanczos pairs, which _light_spec reads)
    lo, hi = 0.0, 10.0 * float(w[0]) + 1.0  # (the estimate: the least need _short calls short, by bisection)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if cheap._short(A, w, U, k, mid) else (mid, hi)
    est = hi
    tau = 0.5 * est
    for margin, light in ((est / tau * (1 - 1e-6) - 1, True), (est / tau * (1 + 1e-6) - 1, False)):
        monkeypatch.setattr(R, "_LIGHT_SPEC_MARGIN", margin)
        spec = R._light_spec(A, cov, k, tau, whole)
        assert (spec is not None) == light
        if light:
            assert spec.spectrum().w[0] == whole["lambda1"] and spec.tol == 0.0
    assert R._light_spec(A, cov, k, tau, {}) is None
    # only from max(_LIGHT_SPEC_MIN_N, _D2_MAX_N + 1) features (below, the dense route's d = 2 bound reads the pairs)
    monkeypatch.setattr(R, "_LIGHT_SPEC_MARGIN", est / tau * (1 - 1e-6) - 1)
    for lo_n, d2, light in ((cov.n, cov.n - 1, True), (cov.n + 1, 2, False), (3, cov.n, False)):
        monkeypatch.setattr(cheap, "_LIGHT_SPEC_MIN_N", lo_n)
        monkeypatch.setattr(single, "_D2_MAX_N", d2)
        assert (R._light_spec(A, cov, k, tau, whole) is not None) == light
