"""The parameters the package's functions share, declared once (the idea of scikit-learn's
``_parameter_constraints``, with this project's messages).

A rule checks one value and returns it normalized (``int``, ``float``, ``tuple`` ...) or raises
:class:`~nspca_core.InputError` naming the argument, what is allowed and what was given::

    check("k", 0, n_features=8)      # InputError: `k` must be an int in [1, n_features=8]; got 0
    check("eps", 0.1)                # 0.1

A bound written as a name (``"n_features"``) is given by the caller as a keyword and shown as
``n_features=8``. Functions whose parameter has another name pass it (``check("seed", s,
name="random_state")``); rules for one function's own options stay with that function.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from .._validation import InputError, as_rng

__all__ = ["PARAMETERS", "check", "in_interval", "check_params", "flag", "float_between", "int_at_least", "one_of",
           "random_state_rule", "seed_of", "sparsity", "Interval", "Flag", "Callback", "Seed", "Sizes", "Choice"]


def _bound(value, context: dict, kind: str):
    """A bound's number and how the message shows it (as written in the rule: ``0`` or ``0.0``;
    ``:g`` for the "number" kind)."""
    if isinstance(value, str):
        number = context[value]
        return number, f"{value}={number}"
    return value, f"{value:g}" if kind == "number" else str(value)


@dataclass(frozen=True)
class Interval:
    """A number in an interval. ``kind``: "int" (an integral number, returned as int), "float"
    (a real number, returned as float; message "a float") or "number" (the same, "a number")."""

    kind: str
    low: object = -math.inf
    high: object = math.inf
    low_open: bool = False
    high_open: bool = False

    def allowed(self, context: dict) -> str:
        (_, lo), (_, hi) = _bound(self.low, context, self.kind), _bound(self.high, context, self.kind)
        if self.kind == "int" and self.high == math.inf:
            return f"an int in >= {lo}"
        left, right = "(" if self.low_open else "[", ")" if self.high_open else "]"
        return f"{'an int' if self.kind == 'int' else 'a ' + self.kind} in {left}{lo}, {hi}{right}"

    def contains(self, value, context: dict) -> bool:
        try:
            self.check(value, "", context)
        except InputError:
            return False
        return True

    def check(self, value, name: str, context: dict):
        integral = isinstance(value, numbers.Integral) and not isinstance(value, bool)
        real = isinstance(value, numbers.Real) and not isinstance(value, bool)
        if not (integral if self.kind == "int" else real and np.isfinite(value)):
            raise InputError(f"`{name}` must be {self.allowed(context)}; got {value!r}")
        v = int(value) if self.kind == "int" else float(value)
        low, high = _bound(self.low, context, self.kind)[0], _bound(self.high, context, self.kind)[0]
        if v < low or v > high or (self.low_open and v == low) or (self.high_open and v == high):
            shown = v if self.kind == "int" else (f"{v:g}" if self.kind == "number" else repr(value))
            raise InputError(f"`{name}` must be {self.allowed(context)}; got {shown}")
        return v


@dataclass(frozen=True)
class Flag:
    """True or False (numpy booleans accepted)."""

    def check(self, value, name: str, context: dict) -> bool:
        if not isinstance(value, (bool, np.bool_)):
            raise InputError(f"`{name}` must be True or False; got {value!r}")
        return bool(value)


@dataclass(frozen=True)
class Callback:
    """None or a callable ``callback(done, total)``."""

    def check(self, value, name: str, context: dict):
        if value is not None and not callable(value):
            raise InputError(f"`{name}` must be callable(done, total) or None; got {type(value).__name__}")
        return value


@dataclass(frozen=True)
class Seed:
    """An int >= 0, None or a numpy Generator; returned as given (``as_rng`` makes the Generator)."""

    def check(self, value, name: str, context: dict):
        as_rng(value, name)
        return value


@dataclass(frozen=True)
class Sizes:
    """A non-empty sequence of ints in an interval (``ks`` of a path), returned as a tuple;
    with ``per`` (a context name) also a single int, repeated ``per`` times (one k per component)."""

    item: Interval
    per: str | None = None

    def check(self, value, name: str, context: dict) -> tuple:
        single = isinstance(value, numbers.Integral) and not isinstance(value, bool)
        ints = self.item.allowed(context).removeprefix("an int ")
        if self.per is not None:
            count = int(context[self.per])
            if single:
                return (self.item.check(value, name, context),) * count
            if not isinstance(value, (list, tuple, np.ndarray)) or len(value) != count:
                got = f"{len(value)} values" if isinstance(value, (list, tuple, np.ndarray)) else repr(value)
                raise InputError(f"`{name}` must be an int or a sequence of {self.per}={count} ints; got {got}")
            return tuple(self.item.check(v, name, context) for v in value)
        if isinstance(value, np.ndarray):
            items = list(value.ravel()) if value.ndim <= 1 else None
        else:
            try:
                items = None if isinstance(value, (str, bytes)) else list(value)
            except TypeError:
                items = None
        if not items:
            raise InputError(f"`{name}` must be a non-empty sequence of ints {ints}; got {value!r}")
        for v in items:
            if not self.item.contains(v, context):
                raise InputError(f"`{name}` must hold ints {ints}; got {v!r}")
        return tuple(int(v) for v in items)


@dataclass(frozen=True)
class Choice:
    """One of a fixed set of values (the set may be given by the caller as ``options``)."""

    options: tuple = ()

    def check(self, value, name: str, context: dict):
        options = tuple(context.get("options", self.options))
        if not isinstance(value, str) or value not in options:
            raise InputError(f"`{name}` must be one of {', '.join(repr(o) for o in options)}; got {value!r}")
        return value


#: every shared parameter and its rule
PARAMETERS = {
    "k": Interval("int", 1, "n_features"),
    "d": Interval("int", 1, "n_features"),
    "eps": Interval("float", 0, 1, low_open=True, high_open=True),
    "ks": Sizes(Interval("int", 1, "n_features")),
    "k_per_component": Sizes(Interval("int", 1, "n_features"), per="n_components"),
    "seed": Seed(),
    "callback": Callback(),
    "certify": Flag(),
    "tol": Interval("float", 0, 1, low_open=True, high_open=True),
    "max_iter": Interval("int", 1),
    "restarts": Interval("int", 1),
}


def in_interval(value, name: str, low, high, *, kind: str = "float", low_open: bool = False,
                high_open: bool = False):
    """``value`` checked against an interval given by the caller (a function's own option)."""
    return Interval(kind, low, high, low_open, high_open).check(value, name, {})


def check(rule: str, value, *, name: str | None = None, **context):
    """``value`` checked by ``PARAMETERS[rule]`` (the message names ``name``, default ``rule``)."""
    if rule not in PARAMETERS:
        raise KeyError(f"no rule for parameter {rule!r}; declared: {', '.join(PARAMETERS)}")
    return PARAMETERS[rule].check(value, name or rule, context)


# ------------------------------------------------------------- the estimators' parameters
# scikit-learn estimators' parameters are checked at ``fit`` (scikit-learn's convention), each by one entry of a class's
# ``_checks`` table, with messages that name the parameter, what is allowed and what was given.
def int_at_least(low: int, *, none: bool = False):
    def check(value, name):
        if value is None and none:
            return
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < low:
            raise InputError(f"`{name}` must be an int >= {low}{' or None' if none else ''}; got {value!r}")
    return check


def float_between(low: float, high: float, *, none: bool = False):
    def check(value, name):
        if value is None and none:
            return
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) \
                or not low < float(value) < high:
            raise InputError(f"`{name}` must be a float in ({low:g}, {high:g}){' or None' if none else ''}; "
                             f"got {value!r}")
    return check


def one_of(allowed):
    def check(value, name):
        choices = allowed() if callable(allowed) else allowed
        if not isinstance(value, str) or value not in choices:
            raise InputError(f"`{name}` must be one of {list(choices)}; got {value!r}")
    return check


def flag(value, name):
    if not isinstance(value, (bool, np.bool_)):
        raise InputError(f"`{name}` must be True or False; got {value!r}")


def sparsity(value, name):
    """``k``: an int >= 1, or a non-empty sequence of them (one per component)."""
    if isinstance(value, (list, tuple, np.ndarray)):
        values = list(np.asarray(value, dtype=object).ravel()) if isinstance(value, np.ndarray) else list(value)
        if not values or any(isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral) or v < 1
                             for v in values):
            raise InputError(f"`{name}` must be an int >= 1 or a non-empty sequence of them (one per "
                             f"component); got {value!r}")
        return
    int_at_least(1)(value, name)


def random_state_rule(value, name):
    """``random_state``: None, an int >= 0, a RandomState or a Generator."""
    if value is None or isinstance(value, (np.random.RandomState, np.random.Generator)):
        return
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < 0:
        raise InputError(f"`{name}` must be None, an int >= 0, a numpy RandomState or Generator; "
                         f"got {value!r}")


def check_params(est) -> None:
    for name, check in est._checks.items():
        check(getattr(est, name), name)


def seed_of(random_state):
    """A seed for the core from scikit-learn's ``random_state`` (checked by ``random_state_rule``):
    an int as given, a RandomState or None drawn from (so repeated fits differ), a Generator as is."""
    if isinstance(random_state, np.random.Generator):
        return as_rng(random_state, "random_state")
    if isinstance(random_state, numbers.Integral):
        return int(random_state)
    from sklearn.utils.validation import check_random_state  # scikit-learn only for the estimators

    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))
