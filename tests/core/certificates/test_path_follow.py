"""Issue 39, ninth round (helper lazy): with ``_settings._LAZY_S`` a large-n path's run (``keep``) runs certify(k)'s
lazy light route itself (``single._certify_split``'s ``follow``), then its own eager one and the DNN's route, the
smallest coupled bound standing: at its k the run's bound is at most certify(k)'s, and every bound it proves and
carries (``BS_at``: S's bound at single sparsities) is at least the brute-force optimum there."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nspca_core.certificates import _settings as S
from nspca_core.certificates import coupled, dual, route
from nspca_core.operators.cov import Cov

from tests.bruteforce import brute_opt
from tests.core.certificates.test_split_cheaper import _force_split
from tests.core.certificates.test_split_coupled import _modules


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.integers(9, 12), st.integers(5, 8), st.integers(4, 6), st.integers(0, 2**31 - 1), st.booleans(),
       st.sampled_from([0.975, 0.995]), st.sampled_from([1.0, 1e-3]))
def test_a_paths_run_is_never_looser_than_one_k_and_carries_true_bounds(monkeypatch, n, size, k, seed, lazy, skip,
                                                                        t_scale):
    """A path's run at k (``keep``) against certify(k)'s computation (no ``keep``) on thin data forced through
    the split code, S's bound lazy or eager (``_LAZY_S``), the first test at ``lower / skip`` (0.995: T binds
    more often), T's features shrunk (``t_scale``: S binds alone): the run's bound is at most certify(k)'s, both
    at least the brute-force optimum, and every ``B_S(i)`` the run keeps is at least A_SS's optimum at i."""
    _force_split(monkeypatch, size)
    monkeypatch.setattr(S, "_LAZY_S", lazy)
    for mod in (coupled, dual):
        monkeypatch.setattr(mod, "_DNN_SKIP_AT", skip)
    rng = np.random.default_rng(seed)
    X = _modules(rng, 6, n, 3)
    X[:, np.argsort(-X.var(axis=0))[size:]] *= t_scale
    A = X.T @ X / X.shape[0]
    one = route._certify_large(Cov(X, None), k, None, "auto", None)
    keep: dict = {}
    run = route._certify_large(Cov(X, None), k, None, "auto", None, keep=keep)
    # (issue 39's tolerance, 1e-9 relative: the two may round apart by an ulp, e.g. n=9, size=8, k=5, seed=5)
    assert run.upper_bound <= one.upper_bound * (1 + 1e-9), (run.upper_bound, one.upper_bound)
    opt = brute_opt(A, k)[0]
    assert min(run.upper_bound, one.upper_bound) >= opt * (1 - 1e-12)
    if keep:
        AS = A[np.ix_(keep["S"], keep["S"])]
        for i, v in (keep.get("BS_at") or {}).items():
            if 1 <= i <= AS.shape[0] and np.isfinite(v):
                assert v >= brute_opt(AS, i)[0] * (1 - 1e-12), (i, v)
