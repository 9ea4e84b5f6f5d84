"""Issue 39 (helper wide24): a path's run whose larger screen is grown by the cross term (``screens.grown`` with a
``keep``) also runs the former larger screen, 1.5x by variance (``screens._grown_twice``), and the path carries
both.  The run's bound is the smallest of the three certificates, every carried curve is above OPT_k at every k
(enumeration), and certify(k) (no ``keep``) runs only the cross-grown screen: counted on both sides of the rule."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nspca_core.certificates import grow_cross, screens, single
from nspca_core.certificates.bounds import _rest_curve
from nspca_core.certificates.path_carry import coupled_curve
from nspca_core.certificates.split_point import _by_variance
from nspca_core.operators.cov import Cov

from tests.bruteforce import brute_opt
from tests.core.certificates.test_small_screen import _force_small, modules_case


def _grown(monkeypatch, n: int, k: int, seed: int, given_x: bool, keep: dict | None):
    """The own screen's split certificate ``d`` on a tiny thin case, then ``screens.grown`` with its cross-grown
    size forced (own + 2) and every split call's screen size recorded: ``(cov, A, d, e, own, sizes, keep)``."""
    _force_small(monkeypatch, per_k=2)
    X, A, x = modules_case(seed, n, k, given_x)
    cov = Cov(X, None)
    own = max(4, 2 * k)
    dk = {} if keep is not None else None
    d = single._certify_split(cov, k, x, "auto", None, keep=dk, size=own)
    if keep is not None:
        keep.update(dk)
    monkeypatch.setattr(screens, "grown_size", lambda n_, k_, c, eff: min(n_, own + 2))
    sizes: list = []

    def split(*a, **kw):
        c = single._certify_split(*a, **kw)
        sizes.append((kw.get("size"), c, kw.get("keep")))
        return c

    e = screens.grown(cov, k, d, "auto", None, keep, None, split)
    return cov, A, d, e, own, sizes, keep


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.integers(10, 13), st.integers(2, 3), st.integers(0, 2**31 - 1), st.booleans())
def test_a_paths_run_carries_both_larger_screens_and_every_bound_holds(monkeypatch, n, k, seed, given_x):
    """A path's run: the three certificates' smallest bound, above OPT_k; ``keep`` the screen the former run
    carried (the variance screen where its bound is below d's, else d's own) and its twin the cross screen where
    below d's; every screen's carried curve above OPT_j at every j = 1..n (enumeration)."""
    keep: dict = {}
    cov, A, d, e, own, sizes, keep = _grown(monkeypatch, n, k, seed, given_x, keep)
    opt = [brute_opt(A, j)[0] for j in range(1, n + 1)]
    assert e.upper_bound >= opt[k - 1] * (1 - 1e-12) and e.lower <= opt[k - 1] * (1 + 1e-12)
    assert e.upper_bound <= d.upper_bound
    big = int(1.5 * d.info["split_S"])
    assert sizes[0][0] == min(n, own + 2) and (len(sizes) == 1 or sizes[1][0] == min(n, big))
    assert e.upper_bound == min([d.upper_bound] + [c.upper_bound for _, c, _ in sizes])
    twins = keep.pop("twins", [])
    carried = [keep["S"]] + [kp["S"] for kp in twins]
    assert len(carried) <= 2
    former = [c for _, c, _ in sizes[1:] if c.upper_bound < d.upper_bound]  # (the variance screen, as it was carried)
    assert keep["S"].size == (sizes[1][2]["S"].size if former else d.info["split_S"])
    if len(sizes) > 1:
        assert np.array_equal(sizes[1][2]["S"], _by_variance(cov.diag(), d.x, min(n, big))[0])
    for _, c, kp in sizes:  # (each larger screen carried where its bound is below d's, as a run carried it)
        if c.upper_bound < d.upper_bound:
            assert any(np.array_equal(kp["S"], S_) for S_ in carried)
    if not any(c.upper_bound < d.upper_bound for _, c, _ in sizes[1:]):  # (the former run carried d's own)
        assert any(S_.size == d.info["split_S"] for S_ in carried)
    uniq = np.arange(1, n + 1)
    for kp in [keep] + twins:
        curve = coupled_curve(kp, _rest_curve(cov, kp["T"], n), uniq)
        assert np.all(curve >= np.array(opt) * (1 - 1e-9)), (curve, opt)


def test_only_a_paths_run_on_thin_data_runs_the_variance_screen_too(monkeypatch):
    """Counted: certify(k) (no keep) runs one larger screen, the cross one; a path's run (a keep) two, the cross
    one then the former by variance (1.5x); with the cross growth off (not thin data held) one again, by
    variance at 1.2x, as before the round's change in screens."""
    for keep, applies, want in ((None, True, 1), ({}, True, 2), ({}, False, 1)):
        with monkeypatch.context() as mp:
            if not applies:
                mp.setattr(grow_cross, "applies", lambda cov: False)
            _, _, d, e, own, sizes, _ = _grown(mp, 12, 2, 3, True, keep)
            assert len(sizes) == want, (keep, applies, sizes)
            if want == 2:
                assert sizes[1][0] == min(12, int(1.5 * d.info["split_S"]))
