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
import warnings
from dataclasses import dataclass

import numpy as np

from ..methods import DEFAULT_STRATEGY
from ..result import ComponentsResult
from .options import UnknownOptionError
from .validation import SPARSITY, DataOrCov, InputError, Interval, Matrix, Psd, SparseStructure, Vector, as_rng

__all__ = ["PARAMETERS", "DEFAULTS", "EFFORTS", "EFFORT_ORDER", "EXACT_EFFORT", "DEFAULT_EFFORT", "check",
           "check_options", "option_rule", "take_random_state",
           "renamed_seed", "SEED_NOT_GIVEN", "in_interval", "in_choices",
           "check_params", "seed_of", "Interval", "Flag", "Callback", "Seed", "Optional", "KSpec",
           "Sizes", "Choice", "Seconds", "Point", "NonnegData", "Partial"]

#: the certificates' efforts, declared once: cheapest (least thorough) first, the rank the tightening
#: schedule orders them by; the last, "exact" (branch and bound), for one k only
EFFORT_ORDER = ("fast", "auto", "full", "exact")
EXACT_EFFORT = EFFORT_ORDER[-1]
DEFAULT_EFFORT = EFFORT_ORDER[1]
#: the efforts every certificate takes, the default first
EFFORTS = (DEFAULT_EFFORT, *(e for e in EFFORT_ORDER[:-1] if e != DEFAULT_EFFORT))

#: the defaults of the parameters the fronts share: the functional API (``fit``, ``components``,
#: ``certify``, ``certify_path``), the estimator and the CLI read them here (never restated)
DEFAULTS = {
    "method": "auto",
    "strategy": DEFAULT_STRATEGY,
    "d": None,            # min(3, n); the bipartite strategy: n_components
    "eps": 0.1,
    "effort": DEFAULT_EFFORT,
    "certify": True,      # fit and components alike
    "center": True,       # every container alike; `cov=` is never centered
    "random_state": 0,    # the functional API and the CLI (the estimator: None, scikit-learn's convention)
}


@dataclass(frozen=True)
class Flag:
    """True or False (numpy booleans accepted)."""

    def check(self, value, name: str, context: dict) -> bool:
        if not isinstance(value, (bool, np.bool_)):
            raise InputError(argument=name,
                             predicate=f"must be True or False; got {value!r}")
        return bool(value)


@dataclass(frozen=True)
class Callback:
    """None or a callable ``callback(done, total)``."""

    def check(self, value, name: str, context: dict):
        if value is not None and not callable(value):
            raise InputError(argument=name,
                             predicate=f"must be callable(done, total) or None; got {type(value).__name__}")
        return value


@dataclass(frozen=True)
class Seed:
    """An int >= 0, None, a numpy Generator or RandomState (scikit-learn's ``random_state``); returned
    as given (``as_rng`` makes the Generator)."""

    def check(self, value, name: str, context: dict):
        if value is None or isinstance(value, (np.random.RandomState, np.random.Generator)):
            return value
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < 0:
            raise InputError(argument=name,
                             predicate=f"must be None, an int >= 0, a numpy RandomState or Generator; "
                                       f"got {value!r}")
        return value


@dataclass(frozen=True)
class Optional:
    """None, or a value of ``rule`` (the message adds "or None")."""

    rule: object

    def check(self, value, name: str, context: dict):
        if value is None:
            return None
        try:
            return self.rule.check(value, name, context)
        except InputError as exc:
            if getattr(exc, "predicate", None) is None:
                raise
            head, sep, tail = exc.predicate.partition("; got ")
            raise InputError(argument=exc.argument, value=exc.value, allowed=exc.allowed,
                             predicate=f"{head} or None{sep}{tail}" if sep else exc.predicate) from None


@dataclass(frozen=True)
class KSpec:
    """``k`` of the estimator: an int >= 1, or a non-empty sequence of them (one per component);
    returned as given (the estimator clips above n_features)."""

    def check(self, value, name: str, context: dict):
        if isinstance(value, (list, tuple, np.ndarray)):
            values = list(np.asarray(value, dtype=object).ravel()) if isinstance(value, np.ndarray) else list(value)
            if not values or any(isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral) or v < 1
                                 for v in values):
                raise InputError(argument=name,
                                 predicate=f"must be an int >= 1 or a non-empty sequence of them (one per "
                                           f"component); got {value!r}")
            return value
        return Interval("int", 1).check(value, name, context)


@dataclass(frozen=True)
class Sizes:
    """A non-empty sequence of ints in an interval (``ks`` of a path), returned as a tuple;
    with ``per`` (a context name) also a single int, repeated ``per`` times (one k per component)."""

    item: Interval
    per: str | None = None

    def check(self, value, name: str, context: dict) -> tuple:
        ints = self.item.allowed(context).removeprefix("an int ")
        if self.per is not None:
            count = int(context[self.per])
            if not isinstance(value, (list, tuple, np.ndarray)):  # one value for every component
                return (self.item.check(value, name, context),) * count
            if not isinstance(value, (list, tuple, np.ndarray)) or len(value) != count:
                got = f"{len(value)} values" if isinstance(value, (list, tuple, np.ndarray)) else repr(value)
                raise InputError(argument=name,
                                 predicate=f"must be an int or a sequence of {self.per}={count} ints; got {got}")
            return tuple(self.item.check(v, name, context) for v in value)
        if isinstance(value, np.ndarray):
            items = list(value.ravel()) if value.ndim <= 1 else None
        else:
            try:
                items = None if isinstance(value, (str, bytes)) else list(value)
            except TypeError:
                items = None
        if not items:
            raise InputError(argument=name,
                             predicate=f"must be a non-empty sequence of ints {ints}; got {value!r}")
        for v in items:
            if not self.item.contains(v, context):
                raise InputError(argument=name,
                                 predicate=f"must hold ints {ints}; got {v!r}")
        return tuple(int(v) for v in items)


@dataclass(frozen=True)
class Choice:
    """One of a fixed set of values (the set may be given by the caller as ``options``). The message
    lists them, or the tuple ``listed`` (the usual ones) followed after the given value by ``note``."""

    options: tuple = ()
    listed: tuple | None = None
    note: str = ""

    def check(self, value, name: str, context: dict):
        options = tuple(context.get("options", self.options))
        if not isinstance(value, str) or value not in options:
            shown = ", ".join(repr(o) for o in options) if self.listed is None else repr(self.listed)
            raise InputError(argument=name,
                             predicate=f"must be one of {shown}; got {value!r}{self.note}")
        return value


@dataclass(frozen=True)
class Seconds:
    """A positive finite number of seconds, returned as float (or None when ``none``)."""

    none: bool = False

    def check(self, value, name: str, context: dict):
        if value is None and self.none:
            return None
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < float(value) < math.inf:
            raise InputError(argument=name,
                             predicate=f"must be a positive number of seconds{' or None' if self.none else ''}; "
                                       f"got {value!r}")
        return float(value)


@dataclass(frozen=True)
class Point:
    """A feasible point of sparsity ``k`` (context): length ``n_features``, nonnegative, nonzero, at most
    k nonzeros; returned as a unit vector."""

    def check(self, value, name: str, context: dict) -> np.ndarray:
        x = Vector().check(value, name, {})
        n, k = context["n_features"], context["k"]
        if x.size != n:
            raise InputError(argument=name,
                             predicate=f"must have length n_features={n}; got length {x.size}")
        if x.min() < 0:
            raise InputError(argument=name,
                             predicate=f"must be nonnegative; got min({name}) = {x.min():.3g}")
        nnz = int(np.count_nonzero(x))
        if nnz == 0:
            raise InputError(argument=name,
                             predicate="must have at least one nonzero entry; got the zero vector")
        if nnz > k:
            raise InputError(argument=name,
                             predicate=f"must have at most k={k} nonzeros; got {nnz}")
        return x / np.linalg.norm(x)


@dataclass(frozen=True)
class NonnegData:
    """None, or raw nonnegative data of ``n_features`` columns (context) as a float64 array (NMF's ``data``)."""

    def check(self, value, name: str, context: dict) -> np.ndarray | None:
        if value is None:
            return None
        D = Matrix().check(value, name, {})
        if D.min() < 0:
            raise InputError(argument=name,
                             predicate=f"must be nonnegative; got min {float(D.min()):.3g}")
        n = context.get("n_features", D.shape[1])
        if D.shape[1] != n:
            raise InputError(argument=name,
                             predicate=f"must have n_features={n} columns; got shape {D.shape}")
        return D


@dataclass(frozen=True)
class Partial:
    """Components already found (``partial=`` of ``components``): None, a ``ComponentsResult`` or
    nonnegative loadings ``(n_features, j)`` with ``j <= n_components`` (context), for a strategy that
    continues from them (context ``continues``); returned as ``(n, j)`` unit columns (``(n, 0)`` for
    None; columns of norm 1 to rounding kept bit for bit)."""

    def check(self, value, name: str, context: dict) -> np.ndarray:
        n, r = context["n_features"], context["n_components"]
        if value is None:
            return np.zeros((n, 0))
        L = np.asarray(value.loadings if isinstance(value, ComponentsResult) else value, dtype=float)
        if L.ndim == 1:
            L = L[:, None]
        if L.ndim != 2 or L.shape[0] != n or not np.all(np.isfinite(L)) or (L < 0).any():
            raise InputError(argument=name,
                             predicate=f"must be a ComponentsResult or nonnegative loadings of shape "
                                       f"({n}, j); got shape {L.shape}")
        if L.shape[1] > r:
            raise InputError(argument=name,
                             predicate=f"holds {L.shape[1]} components, more than n_components={r}")
        if not context["continues"]:
            raise InputError(argument=name,
                             predicate=f"continues a deflation; strategy {context['strategy']!r} finds all "
                                       f"components jointly")
        norms = np.linalg.norm(L, axis=0)
        if (norms == 0).any():
            raise InputError(argument=name,
                             predicate="has a zero column; every component must be a unit vector")
        # unit columns (a previous result's) are kept bit for bit: dividing by a norm 1 +- 1 ulp would move them
        unit = np.abs(norms - 1.0) <= 8 * np.finfo(float).eps
        return np.where(unit, L, L / norms)


_POSITIVE = Interval("float", 0.0, math.inf, low_open=True, high_open=True)
_NONNEGATIVE = Interval("float", 0.0, math.inf, high_open=True)
_COUNT = Interval("int", 1)
_FLAG = Flag()

#: every parameter and its rule: the fronts' shared ones, the data's, and the solvers' own options
#: (an option ``name`` of method ``m`` is checked by ``PARAMETERS["m:name"]`` when there is one, else by
#: ``PARAMETERS[name]``: :func:`option_rule`)
PARAMETERS = {
    "k": SPARSITY,  # the rule of _validation.check_k / check_d (one implementation)
    "d": SPARSITY,
    "eps": Interval("float", 0, 1, low_open=True, high_open=True),
    "ks": Sizes(Interval("int", 1, "n_features")),
    "k_per_component": Sizes(Interval("int", 1, "n_features"), per="n_components"),
    "seed": Seed(),
    "random_state": Seed(),
    "callback": Callback(),
    "certify": Flag(),
    "center": Flag(),
    "method": Choice(),        # options: the registry's (api.METHODS)
    "strategy": Choice(),      # options: api.STRATEGIES
    "effort": Choice(EFFORTS + (EXACT_EFFORT,), listed=EFFORTS,
                     note=f" (or {EXACT_EFFORT!r} for one k: branch and bound)"),
    "time_limit": Seconds(),
    "max_seconds": Seconds(none=True),
    "x": Point(),
    "tol": Interval("float", 0, 1, low_open=True, high_open=True),
    "max_iter": Interval("int", 1),
    "restarts": Interval("int", 1),
    # the estimator's own spelling of the shared ones (scikit-learn: None for "the default")
    "n_components_or_none": Optional(Interval("int", 1)),
    "k_or_ks": KSpec(),
    "d_or_none": Optional(Interval("int", 1)),
    "tol_or_none": Optional(Interval("float", 0, 1, low_open=True, high_open=True)),
    "max_iter_or_none": Optional(Interval("int", 1)),
    "preprocessing": Choice(),  # options: the registry's (nspca_core.datasets.preprocessing)
    # data
    "matrix": Matrix(),            # context: square, symmetric, min_rows, min_cols
    "sparse_structure": SparseStructure(),  # a sparse X whose index arrays match its shape
    "vector": Vector(),
    "psd": Psd(),
    "data_or_cov": DataOrCov(),    # the pair (X, cov); context: psd
    "flag": _FLAG,                 # any other True/False argument (named by the caller)
    "partial": Partial(),          # context: n_features, n_components, strategy, continues
    # the solvers' options (checked by the fronts before they reach a solver: check_options)
    "nonneg": _FLAG,
    "renormalize": _FLAG,
    "polish": _FLAG,
    "refine": _FLAG,
    "swap": _FLAG,
    "bipartite:samples": Optional(_COUNT),
    "min_angle": Interval("float", 0.0, 90.0, low_open=True),
    "alpha": _POSITIVE,
    "beta": Optional(_NONNEGATIVE),
    "ridge_alpha": _NONNEGATIVE,
    "max_sweeps": _COUNT,
    "bisection_steps": _COUNT,
    "search_steps": _COUNT,
    "nmf:data": NonnegData(),
    "em:init": Optional(Choice(("pc", "random"))),
    "zass:init": Choice(("eig", "random")),
}


def in_interval(value, name: str, low, high=math.inf, *, kind: str = "float", low_open: bool = False,
                high_open: bool = False):
    """``value`` checked against an interval given by the caller (a function's own option)."""
    return Interval(kind, low, high, low_open, high_open).check(value, name, {})


def in_choices(value, name: str, options):
    """``value`` checked to be one of ``options`` given by the caller (a function's own option)."""
    return Choice(tuple(options)).check(value, name, {})


def check(rule: str, value, name: str | None = None, **context):
    """``value`` checked by ``PARAMETERS[rule]`` (the message names ``name``, default ``rule``)."""
    if rule not in PARAMETERS:
        raise KeyError(f"no rule for parameter {rule!r}; declared: {', '.join(PARAMETERS)}")
    return PARAMETERS[rule].check(value, name or rule, context)


def option_rule(owner: str, option: str) -> str:
    """The key of :data:`PARAMETERS` checking ``option`` of a method or strategy ``owner``: its own
    (``"owner:option"``) when declared, else the shared one."""
    own = f"{owner}:{option}"
    return own if own in PARAMETERS else option


def check_options(options: dict, allowed, where: str, owner: str = "", **context) -> dict:
    """Keyword options of a solver, checked at the front: an unknown name is an
    :class:`~nspca_core._common.options.UnknownOptionError` naming the allowed ones, and each value
    is checked by its rule (:func:`option_rule`; names without one pass as given).  Returns the
    normalized options."""
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise UnknownOptionError(f"unknown option(s) {unknown} for {where}; allowed: {sorted(allowed)}")
    out = {}
    for name, value in options.items():
        rule = option_rule(owner, name)
        out[name] = check(rule, value, name, **context) if rule in PARAMETERS else value
    return out


# ------------------------------------------------------------- the estimators' parameters
# scikit-learn estimators' parameters are checked at ``fit`` (scikit-learn's convention): each entry of a class's
# ``_params`` names the rule of this table that checks it (with the allowed options where the rule takes them).
def check_params(est) -> None:
    """Check an estimator's parameters by the rules its ``_params`` table names: ``{parameter: rule}``
    or ``{parameter: (rule, options)}`` (options: a tuple or a function returning one)."""
    for name, spec in est._params.items():
        rule, options = spec if isinstance(spec, tuple) else (spec, None)
        context = {} if options is None else {"options": options() if callable(options) else options}
        check(rule, getattr(est, name), name=name, **context)


class _Unset:
    """The default of a deprecated ``seed=`` keyword (shown as ``<not given>`` in signatures)."""

    def __repr__(self):
        return "<not given>"


#: default of the deprecated ``seed`` keyword of the public functions (:func:`renamed_seed`)
SEED_NOT_GIVEN = _Unset()


def take_random_state(random_state, options: dict):
    """:func:`renamed_seed` for a front whose deprecated ``seed=`` arrives among its ``**options``."""
    return renamed_seed(random_state, options.pop("seed", SEED_NOT_GIVEN), DEFAULTS["random_state"], stacklevel=4)


def renamed_seed(random_state, seed, default=0, *, stacklevel: int = 3):
    """The randomness of a public function that took ``seed=`` before ``random_state``: ``seed`` still
    works, with a :class:`DeprecationWarning` naming ``random_state``; giving both is an error."""
    if seed is SEED_NOT_GIVEN:
        return check("random_state", random_state)
    if random_state is not default and random_state != default:
        raise InputError(f"give `random_state` only (`seed` is its deprecated name); got random_state="
                         f"{random_state!r} and seed={seed!r}")
    warnings.warn("`seed` is deprecated: use `random_state` (the same values: an int >= 0, None or a "
                  "numpy Generator)", DeprecationWarning, stacklevel=stacklevel)
    return check("seed", seed)


def seed_of(random_state):
    """A seed for the core from scikit-learn's ``random_state`` (checked by the rule ``PARAMETERS["random_state"]``):
    an int as given, a RandomState or None drawn from (so repeated fits differ), a Generator as is."""
    if isinstance(random_state, np.random.Generator):
        return as_rng(random_state, "random_state")
    if isinstance(random_state, numbers.Integral):
        return int(random_state)
    from sklearn.utils.validation import check_random_state  # scikit-learn only for the estimators

    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))
