"""Issue 39 (helper widepath25): ``screens.grown``'s larger screen is the cross-grown one (``grow_cross``, 1.2x)
for certify(k) and for a path's run wherever certify(k) may grow it (since helper wide26: the screen CHOSEN by the
cross term, 0.9x, half by variance); a path's run where certify(k)'s own route
stands (``info["one_k_stands"]``, set by ``single._certify_split`` after certify(k)'s lazy light route, which a
path's run follows float for float: there certify(k) grows nothing) grows the former screen, 1.5x by variance,
which the path carries to the k between runs.  Either way one larger screen per run.  The
run's bound is the smaller of the two, above OPT_k, and the carried curve above OPT_j at every j (enumeration);
the rule is counted on both sides (keep or not, stood or not, thin data held or not)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nspca_core.certificates import grow_cross, screens, single
from nspca_core.certificates.bounds import _rest_curve
from nspca_core.certificates.path_carry import coupled_curve
from nspca_core.certificates.split_point import _by_variance, _screened
from nspca_core.operators.cov import Cov

from tests.bruteforce import brute_opt
from tests.core.certificates.test_small_screen import _force_small, modules_case


def _grown(monkeypatch, n: int, k: int, seed: int, given_x: bool, keep: dict | None, stood: bool):
    """The own screen's split certificate ``d`` on a tiny thin case, then ``screens.grown`` (``one_k_stands=stood``)
    with its cross-grown size forced (own + 2) and every split call's screen recorded: ``(cov, A, d, e, own,
    calls, keep)``, calls ``(size, certificate, keep, S)``."""
    _force_small(monkeypatch, per_k=2)
    X, A, x = modules_case(seed, n, k, given_x)
    cov = Cov(X, None)
    own = max(4, 2 * k)
    dk = {} if keep is not None else None
    d = single._certify_split(cov, k, x, "auto", None, keep=dk, size=own)
    if keep is not None:
        keep.update(dk)
    monkeypatch.setattr(screens, "grown_size", lambda n_, k_, c, eff, cross=False: min(n_, own + 2))
    calls: list = []
    real = single._screened
    seen: list = []

    def spy(*a, **kw):
        out = real(*a, **kw)
        seen.append(out[0])
        return out

    monkeypatch.setattr(single, "_screened", spy)

    def split(*a, **kw):
        seen.clear()
        c = single._certify_split(*a, **kw)
        calls.append((kw.get("size"), c, kw.get("keep"), seen[0] if seen else None))
        return c

    d.info["one_k_stands"] = stood
    e = screens.grown(cov, k, d, "auto", None, keep, None, split)
    return cov, A, d, e, own, calls, keep


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.integers(10, 13), st.integers(2, 3), st.integers(0, 2**31 - 1), st.booleans(), st.booleans())
def test_a_paths_run_grows_one_screen_and_every_bound_holds(monkeypatch, n, k, seed, given_x, stood):
    """A path's run: one larger screen (by variance at int(1.5 |S|) where certify(k)'s route stands, else the
    cross-grown one), the smaller of the two bounds, above OPT_k; ``keep`` the larger screen's where its bound is
    below d's, else d's own; the carried curve above OPT_j at every j = 1..n (enumeration)."""
    keep: dict = {}
    cov, A, d, e, own, calls, keep = _grown(monkeypatch, n, k, seed, given_x, keep, stood)
    opt = [brute_opt(A, j)[0] for j in range(1, n + 1)]
    assert e.upper_bound >= opt[k - 1] * (1 - 1e-12) and e.lower <= opt[k - 1] * (1 + 1e-12)
    assert len(calls) == 1
    size, c, kp, S_ = calls[0]
    assert e.upper_bound == min(d.upper_bound, c.upper_bound)
    if stood:
        assert size == min(n, int(1.5 * d.info["split_S"]))
        assert np.array_equal(S_, _by_variance(cov.diag(), d.x, size)[0])
    else:
        assert size == min(n, own + 2)
    assert keep["S"].size == (kp["S"].size if c.upper_bound < d.upper_bound else d.info["split_S"])
    curve = coupled_curve(keep, _rest_curve(cov, keep["T"], n), np.arange(1, n + 1))
    assert np.all(curve >= np.array(opt) * (1 - 1e-9)), (curve, opt)


def test_the_larger_screen_counted_on_both_sides_of_the_rule(monkeypatch):
    """Counted: certify(k) (no keep) grows the cross screen whatever the flag (it is a path's run's only); a path's
    run the cross screen where certify(k)'s route does not stand, the former one (1.5x by variance) where it
    stands; with the cross growth off (not thin data held) the run where it did not stand grows
    by variance at the 1.2x size, as since wide23.  One larger screen in every case."""
    n, k = 12, 2
    for keep, stood, applies in ((None, False, True), (None, True, True), ({}, False, True), ({}, True, True),
                                 ({}, False, False)):
        with monkeypatch.context() as mp:
            if not applies:
                mp.setattr(grow_cross, "applies", lambda cov: False)
            cov, _, d, _, own, calls, _ = _grown(mp, n, k, 3, True, keep, stood)
            assert len(calls) == 1, (keep, stood, calls)
            size, _, _, S_ = calls[0]
            variance = keep is not None and stood
            assert size == (min(n, int(1.5 * d.info["split_S"])) if variance else min(n, own + 2)), (keep, stood)
            by_var = _by_variance(cov.diag(), d.x, size)[0]
            with grow_cross.cross_growth(cov, own, size):
                cross = _screened(cov.diag(), d.x, size)[0]
            assert np.array_equal(S_, by_var if variance or not applies else cross), (keep, stood, applies)


def test_the_flag_is_certify_ks_own_verdict(monkeypatch):
    """``info["one_k_stands"]`` of a path's run (a keep; certify(k)'s lazy light route followed) is
    ``coupled.small_verdict`` on certify(k)'s own certificate at the same point and screen (no keep): where it
    holds, certify(k)'s ``grown_size`` is None (no screen grown).  certify(k) carries no flag.  Both sides: on these
    tiny cases certify(k) stands; with the verdict's thresholds moved (``_SMALL_SHORT`` -1, ``_SMALL_T_SHARE``
    -1: it never stands) the same draws give False, and certify(k) grows."""
    from nspca_core.certificates import coupled
    from nspca_core.certificates.coupled import small_verdict

    _force_small(monkeypatch, per_k=2, light=True)
    for never in (False, True):
        if never:
            monkeypatch.setattr(coupled, "_SMALL_SHORT", -1.0)
            monkeypatch.setattr(coupled, "_SMALL_T_SHARE", -1.0)
        seen = []
        for seed in range(6):
            n, k = 24, 3
            X, A, x = modules_case(seed, n, k, True)
            cov = Cov(X, None)
            own = max(4, 2 * k)
            one = single._certify_split(cov, k, x, "auto", None, size=own)
            run = single._certify_split(cov, k, x, "auto", None, keep={}, size=own)
            assert "one_k_stands" not in one.info
            if "one_k_stands" not in run.info or "coupled" not in one.info:
                continue
            want = small_verdict(one.lower, one.info["coupled"], one.info["B_S"])
            assert run.info["one_k_stands"] == want, (seed, n, k)
            assert (screens.grown_size(n, k, one, "auto") is None) == want
            seen.append(bool(want))
        assert seen and set(seen) == {not never}, (never, seen)


def test_certify_k_and_a_run_take_the_chosen_screen(monkeypatch):
    """Counted (helper wide26): on thin data held certify(k) (no keep) and a path's run (keep given, certify(k)'s
    route not standing) both run the screen chosen by the cross term, ``ceil(_CROSS |S|)`` features, inside the
    block (the run at k does what certify(k) does); data the cross term does not apply to (a covariance): 1.2x by
    variance, either way."""
    from dataclasses import replace

    from tests.core.certificates.test_grown_screen import _cert

    monkeypatch.setattr(screens, "small_verdict", lambda *a: False)
    X = np.random.default_rng(0).standard_normal((5, 4000))
    for thin in (True, False):
        cov = Cov(X, None) if thin else Cov(None, np.eye(4000))
        for keep in (None, {}):
            seen: list = []

            def split(cov_, k, x, effort, callback, keep=None, gram=None, size=None):
                seen.append((size, grow_cross._ACTIVE.get()))
                return replace(d, upper_bound=d.upper_bound + 1.0)

            d = replace(_cert(90.0, 100.0, 100.0, 50.0, 400), x=np.ones(4000))
            screens.grown(cov, 50, d, "auto", None, keep, None, split)
            size, active = seen[0]
            if thin:
                assert size == int(np.ceil(screens._CROSS * 400)) and active is not None and active[2] == size
            else:
                assert size == int(np.ceil(screens._GROW * 400)) and active is None
