"""Issue 39, the twenty-sixth round (wide37): in a one-k split certificate on thin data, S's KKT point valued through
X_S (:func:`nspca_core.certificates.dnn_thin.kkt_lmax_thin`) is S's dual point where it certifies ``_CUT_BELOW`` of S
(``seen["kkt_stands"]``, :func:`nspca_core.certificates.single._certify_split`): no DNN run on S, no anchored search;
a path's run (``keep``) keeps the DNN.  The certificate stays an upper bound on the brute-force optimum."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core.certificates import dual
from nspca_core.certificates._settings import _CUT_BELOW
from nspca_core.certificates.single import _certify_split
from nspca_core.operators.cov import Cov

from tests.bruteforce import brute_opt


def _thin(seed: int, m: int = 6, n: int = 14):
    """m x n data (m < the screen's size - 2: S's Gram is thin), centered, a few nonnegative modules."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, 3)) @ np.abs(rng.standard_normal((3, n))) + 0.6 * rng.standard_normal((m, n))
    return X - X.mean(axis=0)


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
    import nspca_core.certificates.single as single
    monkeypatch.setattr(single, "dense_dual", dense)
    c = _certify_split(Cov(X), k, x, "auto", None, size=11, keep=keep)
    return c, (kkt_ratio[0] if kkt_ratio and not seen_dnn else None)


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(5, 8), point=st.sampled_from(["opt", "fit", "none"]))
def test_split_certificate_is_above_the_brute_force_optimum(seed, k, point):
    """Whichever dual point S keeps, the one-k split certificate bounds the brute-force optimum from above."""
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


def test_the_kkt_point_stands_at_cut_below_in_one_k_only(monkeypatch):
    """On thin cases where S's KKT point certifies between ``_CUT_BELOW`` and 0.996 of S: the one-k certificate runs
    no DNN on S (the point stands), a path's run (``keep``) does; both bound the brute-force optimum."""
    fired = 0
    for seed in range(12):
        X = _thin(seed)
        k = 5 + seed % 4
        A = X.T @ X / X.shape[0]
        opt, xo = brute_opt(A, k)
        one, ratio = _run(X, k, xo, None, monkeypatch)
        path, path_ratio = _run(X, k, xo, {}, monkeypatch)
        assert one.upper_bound >= opt * (1.0 - 1e-12) and path.upper_bound >= opt * (1.0 - 1e-12)
        assert path_ratio is None or path_ratio >= 0.996  # (a path's run: only `enough` spares S's DNN)
        assert ratio is None or ratio >= _CUT_BELOW or "anchored" in one.info.get("B_S_bounds", {})
        if ratio is not None:  # (S's KKT point stood: its bound, at every sparsity, above S's own optimum)
            S = one.info["S"]
            opt_S = brute_opt(A[np.ix_(S, S)], min(k, S.size))[0]
            assert one.info["B_S"] >= opt_S * (1.0 - 1e-12)
            assert one.info["dnn"]["lam"] >= opt_S * (1.0 - 1e-12)
        fired += ratio is not None and _CUT_BELOW <= ratio < 0.996
    assert fired  # (the rule decided at least one of the cases)
