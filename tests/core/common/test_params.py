"""The declared parameter rules (nspca_core/_common/params.py): values in, messages out."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nspca_core import InputError
from nspca_core._common.params import PARAMETERS, check, in_choices, in_interval


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 50), k=st.integers(-5, 60))
def test_k_accepts_exactly_one_to_n(n, k):
    if 1 <= k <= n:
        assert check("k", k, n_features=n) == k
        assert check("k", np.int64(k), n_features=n) == k and type(check("k", np.int64(k), n_features=n)) is int
    else:
        with pytest.raises(InputError, match=rf"`k` must be an int in \[1, n_features={n}\]; got {k}$"):
            check("k", k, n_features=n)


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 20), ks=st.lists(st.integers(-2, 25), max_size=6))
def test_ks_is_a_nonempty_sequence_of_valid_ks(n, ks):
    valid = bool(ks) and all(1 <= v <= n for v in ks)
    if valid:
        assert check("ks", ks, n_features=n) == tuple(ks)
        assert check("ks", np.array(ks), n_features=n) == tuple(ks)
    else:
        with pytest.raises(InputError, match=r"`ks` must (be a non-empty sequence|hold ints)"):
            check("ks", ks, n_features=n)


@settings(max_examples=100, deadline=None)
@given(x=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-3, 3), st.booleans()))
def test_eps_is_a_float_strictly_between_zero_and_one(x):
    ok = not isinstance(x, bool) and np.isfinite(x) and 0 < x < 1
    if ok:
        assert check("eps", x) == float(x)
    else:
        with pytest.raises(InputError, match=r"`eps` must be a float in \(0, 1\); got "):
            check("eps", x)


def test_k_per_component_repeats_an_int_and_checks_a_list():
    assert check("k_per_component", 3, n_features=5, n_components=2) == (3, 3)
    assert check("k_per_component", [2, 4], n_features=5, n_components=2) == (2, 4)
    with pytest.raises(InputError, match=r"`k` must be an int or a sequence of n_components=2 ints; got 3 values"):
        check("k_per_component", [1, 2, 3], name="k", n_features=5, n_components=2)
    with pytest.raises(InputError, match=r"`k` must be an int in \[1, n_features=5\]; got 7"):
        check("k_per_component", [1, 7], name="k", n_features=5, n_components=2)


@pytest.mark.parametrize("rule, value, msg", [
    ("callback", 3, r"`callback` must be callable\(done, total\) or None; got int"),
    ("certify", "yes", r"`certify` must be True or False; got 'yes'"),
    ("seed", -1, r"`seed` must be None, an int >= 0"),
    ("seed", 1.5, r"`seed` must be None, an int >= 0, a numpy RandomState or Generator; got 1.5"),
    ("max_iter", 0, r"`max_iter` must be an int >= 1; got 0"),
    ("tol", 1.0, r"`tol` must be a float in \(0, 1\); got 1.0"),
])
def test_messages_name_the_argument_and_what_is_allowed(rule, value, msg):
    with pytest.raises(InputError, match=msg):
        check(rule, value)


def test_name_overrides_the_rule_name_and_unknown_rules_are_named():
    with pytest.raises(InputError, match="`random_state` must be None, an int >= 0"):
        check("seed", "x", name="random_state")
    with pytest.raises(KeyError, match="no rule for parameter 'kk'"):
        check("kk", 1)
    assert set(PARAMETERS) >= {"k", "d", "eps", "ks", "seed", "callback"}


def test_in_interval_renders_the_bounds_as_written():
    assert in_interval(0.5, "decay", 0.0, 1.0, kind="number", low_open=True) == 0.5
    with pytest.raises(InputError, match=r"`decay` must be a number in \(0, 1\]; got 0"):
        in_interval(0.0, "decay", 0.0, 1.0, kind="number", low_open=True)
    with pytest.raises(InputError, match=r"`alpha` must be a float in \(0.0, inf\)"):
        in_interval(-1.0, "alpha", 0.0, np.inf, low_open=True, high_open=True)


@pytest.mark.parametrize("rule, value, context, msg", [
    ("effort", "slow", {}, r"`effort` must be one of \('auto', 'fast', 'full'\); got 'slow' \(or 'exact' for one k"),
    ("time_limit", 0, {}, r"`time_limit` must be a positive number of seconds; got 0"),
    ("time_limit", None, {}, r"`time_limit` must be a positive number of seconds; got None"),
    ("max_seconds", float("inf"), {}, r"`max_seconds` must be a positive number of seconds or None; got inf"),
    ("x", [1, 0], {"n_features": 3, "k": 1}, r"`x` must have length n_features=3; got length 2"),
    ("x", [1, -1, 0], {"n_features": 3, "k": 2}, r"`x` must be nonnegative; got min\(x\) = -1"),
    ("x", [0, 0, 0], {"n_features": 3, "k": 2}, r"`x` must have at least one nonzero entry"),
    ("x", [1, 1, 1], {"n_features": 3, "k": 2}, r"`x` must have at most k=2 nonzeros; got 3"),
    ("method", "nope", {"options": ("auto", "em")}, r"`method` must be one of 'auto', 'em'; got 'nope'"),
])
def test_the_certificates_and_fronts_rules(rule, value, context, msg):
    with pytest.raises(InputError, match=msg):
        check(rule, value, **context)


def test_rules_return_the_checked_value():
    assert check("effort", "exact") == "exact" and check("max_seconds", None) is None
    assert check("time_limit", 2) == 2.0 and type(check("time_limit", 2)) is float
    x = check("x", [3.0, 0.0, 4.0], name="xs[0]", n_features=3, k=2)
    np.testing.assert_allclose(x, [0.6, 0.0, 0.8])
    with pytest.raises(InputError, match=r"`xs\[1\]` must have at most k=1"):
        check("x", [1, 1, 0], name="xs[1]", n_features=3, k=1)
    assert in_choices("sum", "selection", ("sum", "none")) == "sum"
    with pytest.raises(InputError, match=r"`selection` must be one of 'sum', 'none'; got 'max'"):
        in_choices("max", "selection", ("sum", "none"))
    # one value stands for every component; a float is refused as a k
    assert check("k_per_component", np.int64(2), name="k", n_features=5, n_components=3) == (2, 2, 2)
    with pytest.raises(InputError, match=r"`k` must be an int in \[1, n_features=5\]; got 2.5"):
        check("k_per_component", 2.5, name="k", n_features=5, n_components=3)


@settings(max_examples=100, deadline=None)
@given(value=st.one_of(st.integers(-3, 12), st.floats(-1, 12), st.booleans(), st.text(max_size=2)),
       n=st.integers(1, 10))
def test_check_k_d_and_int_are_the_declared_rule(value, n):
    """``_validation.check_k`` / ``check_d`` / ``check_int`` and ``PARAMETERS["k"]`` / ``["d"]``: one rule."""
    from nspca_core._common.validation import check_d, check_int, check_k

    for mine, declared in ((lambda v: check_k(v, n), lambda v: check("k", v, n_features=n)),
                           (lambda v: check_d(v, n), lambda v: check("d", v, n_features=n))):
        outcomes = []
        for f in (mine, declared):
            try:
                outcomes.append(("ok", f(value)))
            except InputError as e:
                outcomes.append(("error", str(e)))
        assert outcomes[0] == outcomes[1]
    ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= n
    if ok:
        assert check_int(value, "count", 0, n) == value
    else:
        with pytest.raises(InputError, match=rf"`count` must be an int in \[0, {n}\]; got "):
            check_int(value, "count", 0, n)
