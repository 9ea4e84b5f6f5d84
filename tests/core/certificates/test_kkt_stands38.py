"""Issue 39, the twenty-seventh round (kkt38): in a one-k split certificate on thin data with no tree on S (``kS >
_SPLIT_BRANCH_MAX_K``), S's KKT point valued through X_S (:func:`nspca_core.certificates.dnn_thin.kkt_lmax_thin`) is
S's dual point where it certifies ``_CUT_BELOW`` of S (``seen["kkt_stands"]``,
:func:`nspca_core.certificates.single._certify_split`): no DNN run on S, no anchored search.  A path's run (``keep``)
keeps the DNN and marks ``keep["kkt_rule"]`` where certify(k)'s rule would have stood; the path then takes certify(k)'s
own certificate too (:func:`nspca_core.certificates.path_large_points.one_k_too`): never looser than certify(k).
Every certificate stays an upper bound on the brute-force optimum."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nspca_core.certificates.single as single
from nspca_core.certificates import _settings as S
from nspca_core.certificates import certify, certify_path, dual
from nspca_core.certificates import path_large as PL
from nspca_core.certificates import path_large_points as PLP
from nspca_core.certificates._settings import _CUT_BELOW
from nspca_core.certificates.single import _certify_split
from nspca_core.operators.cov import Cov

from tests.bruteforce import brute_opt


def _thin(seed: int, m: int = 6, n: int = 14):
    """m x n data (m < the screen's size - 2: S's Gram is thin), centered, a few nonnegative modules."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, 3)) @ np.abs(rng.standard_normal((3, n))) + 0.6 * rng.standard_normal((m, n))
    return X - X.mean(axis=0)


def _no_tree_below(monkeypatch, kmax: int = 2, light: bool = False):
    """The rule acts where S has no tree (kS > _SPLIT_BRANCH_MAX_K, 16): on 14 features only with that limit lowered;
    ``light`` False: the light route on S falls short (as on the wide gene data, where the rule pays), S's DNN route
    decides (:func:`.single._split_S`)."""
    monkeypatch.setattr(single, "_SPLIT_BRANCH_MAX_K", kmax)
    if not light:
        monkeypatch.setattr(single, "light_S", lambda *a, **kw: None)


def _run(X, k: int, x, keep, monkeypatch):
    """``_certify_split`` on a screen of 11 of the 14 features, and S's KKT ratio where dense_dual valued that point
    and ran no DNN (None where the DNN ran or no KKT point was valued)."""
    seen_dnn, kkt_ratio = [], []
    real_dnn, real_dense = dual._dnn, dual.dense_dual

    def dnn(*a, **kw):
        seen_dnn.append(True)
        return real_dnn(*a, **kw)

    def dense(A, kk, xx, lower, bounds, info, *a, **kw):
        out = real_dense(A, kk, xx, lower, bounds, info, *a, **kw)
        if "dnn" in bounds and not out[1]:
            kkt_ratio.append(lower / min(bounds.values()))
        return out

    monkeypatch.setattr(dual, "_dnn", dnn)
    monkeypatch.setattr(dual, "dense_dual", dense)
    monkeypatch.setattr(single, "dense_dual", dense)
    c = _certify_split(Cov(X), k, x, "auto", None, size=11, keep=keep)
    monkeypatch.setattr(single, "dense_dual", real_dense)
    monkeypatch.setattr(dual, "dense_dual", real_dense)
    monkeypatch.setattr(dual, "_dnn", real_dnn)
    return c, (kkt_ratio[0] if kkt_ratio and not seen_dnn else None)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(5, 8), point=st.sampled_from(["opt", "fit", "none"]))
def test_split_certificate_is_above_the_brute_force_optimum(monkeypatch, seed, k, point):
    """Whichever dual point S keeps, the one-k split certificate bounds the brute-force optimum from above, and S's
    bound S's own optimum."""
    _no_tree_below(monkeypatch)
    X = _thin(seed)
    A = X.T @ X / X.shape[0]
    opt, xo = brute_opt(A, k)
    if point == "fit":
        import nspca_core as nc
        x = nc.fit(X, k=k, certify=False).x
    else:
        x = xo if point == "opt" else None
    c = _certify_split(Cov(X), k, x, "auto", None, size=11)
    assert c.upper_bound >= opt * (1.0 - 1e-12)
    assert c.lower <= opt * (1.0 + 1e-12)
    S_ = c.info["S"]
    opt_S = brute_opt(A[np.ix_(S_, S_)], min(k, S_.size))[0]
    assert c.info["B_S"] >= opt_S * (1.0 - 1e-12)
    assert c.info.get("B_S_bounds", {}).get("dnn", np.inf) >= opt_S * (1.0 - 1e-12)  # (S's KKT / DNN point's bound)


def test_the_kkt_point_stands_at_cut_below_in_one_k_only(monkeypatch):
    """On thin cases where S's KKT point certifies between ``_CUT_BELOW`` and 0.996 of S: the one-k certificate runs
    no DNN on S (the point stands), a path's run (``keep``) does and marks ``keep["kkt_rule"]``; both bound the
    brute-force optimum, and S's stood bound S's own optimum at every sparsity up to k."""
    _no_tree_below(monkeypatch)
    fired = 0
    for seed in range(12):
        X = _thin(seed)
        k = 5 + seed % 4
        A = X.T @ X / X.shape[0]
        opt, xo = brute_opt(A, k)
        one, ratio = _run(X, k, xo, None, monkeypatch)
        keep: dict = {}
        path, path_ratio = _run(X, k, xo, keep, monkeypatch)
        assert one.upper_bound >= opt * (1.0 - 1e-12) and path.upper_bound >= opt * (1.0 - 1e-12)
        assert path_ratio is None or path_ratio >= 0.996  # (a path's run: only `enough` spares S's DNN)
        assert ratio is None or ratio >= _CUT_BELOW or "anchored" in one.info.get("B_S_bounds", {})
        if ratio is not None:  # (S's KKT point stood: its bound, at every sparsity, above S's own optimum)
            S_ = one.info["S"]
            for i in range(1, min(k, S_.size) + 1):
                assert one.info["dnn"]["lam"] >= brute_opt(A[np.ix_(S_, S_)], i)[0] * (1.0 - 1e-12)
            opt_S = brute_opt(A[np.ix_(S_, S_)], min(k, S_.size))[0]
            assert one.info["B_S"] >= opt_S * (1.0 - 1e-12)
            assert one.info["B_S_bounds"]["dnn"] >= opt_S * (1.0 - 1e-12)  # (the stood point's own bound)
        if ratio is not None and _CUT_BELOW <= ratio < 0.996:
            fired += 1
            assert keep.get("kkt_rule")  # (the path's run knows certify(k) parted ways here)
    assert fired  # (the rule decided at least one of the cases)


def test_no_rule_where_a_tree_runs_on_S(monkeypatch):
    """At kS <= _SPLIT_BRANCH_MAX_K (the tree on S follows) the one-k certificate is the path's run's, float for float:
    the wide37 rule there made certify(4) tighter than the path on test_path_large's 8 x 200 forced split."""
    for seed in (6, 7, 13):
        X = _thin(seed)
        for k in (5, 8, 11):
            one = _certify_split(Cov(X), k, None, "auto", None, size=11)
            keep: dict = {}
            run = _certify_split(Cov(X), k, None, "auto", None, size=11, keep=keep)
            assert one.upper_bound == run.upper_bound and "kkt_rule" not in keep


def test_one_k_too_takes_certify_k_where_the_rule_marked(monkeypatch):
    """one_k_too: a marked run (its own screen's keep or the smaller screen's) gets certify(k)'s own certificate where
    that is smaller, the same float as certify(k); an unmarked run is returned as it is (no second run)."""
    from nspca_core.certificates.route import _certify_cov

    X = _thin(6)
    cov = Cov(X)
    one = _certify_cov(cov, 6, None, "auto")
    loose = SimpleNamespace(upper_bound=one.upper_bound * 1.01)
    assert PLP.one_k_too(cov, 6, None, "auto", loose, {}, None) is loose
    got = PLP.one_k_too(cov, 6, None, "auto", loose, {"kkt_rule": True}, None)
    assert got.upper_bound == one.upper_bound
    got = PLP.one_k_too(cov, 6, None, "auto", loose, {}, {"kkt_rule": True})
    assert got.upper_bound == one.upper_bound
    tight = SimpleNamespace(upper_bound=one.upper_bound * 0.99)
    assert PLP.one_k_too(cov, 6, None, "auto", tight, {"kkt_rule": True}, None) is tight


def test_forced_path_with_the_rule_never_looser_than_one_k(monkeypatch):
    """Tiny thin data through the large-n path (a screen of 11 of 14 features), the rule acting (no tree on S): where
    a run was marked the path took certify(k) too; at every k the path is at most certify(k) (1e-9 relative) and at
    least the brute-force optimum."""
    _no_tree_below(monkeypatch, light=True)
    monkeypatch.setattr(S, "_DENSE_MAX_N", 2)
    monkeypatch.setattr(S, "_LOWRANK_MAX_RANK", 0)
    monkeypatch.setattr(S, "_SPLIT_MIN", 11)
    monkeypatch.setattr(S, "_SPLIT_PER_K", 1)
    monkeypatch.setitem(S._EFFORT["auto"], "split_size", 11)
    marked = []
    real = PLP.one_k_too

    def spy(cov, k, x, effort, c, keep, small):
        if keep.get("kkt_rule") or (small or {}).get("kkt_rule"):
            marked.append(k)
        return real(cov, k, x, effort, c, keep, small)

    monkeypatch.setattr(PL, "one_k_too", spy)
    for seed in (6, 7):
        X = _thin(seed)
        A = X.T @ X / X.shape[0]
        for c in certify_path(X, ks=list(range(1, 14))):
            one = certify(X, k=c.k)
            assert c.upper_bound <= one.upper_bound * (1 + 1e-9), (seed, c.k, c.upper_bound, one.upper_bound)
            assert c.upper_bound >= brute_opt(A, c.k)[0] * (1 - 1e-12)
    assert marked  # (the rule would have stood at some run: one_k_too decided there)
