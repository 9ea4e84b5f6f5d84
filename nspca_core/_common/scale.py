"""Scale-free answers: normalize the input once at the front, report on the user's scale.

Every solver works in floating point, where products of entries of size 1e160
overflow and those of size 1e-200 underflow.  :func:`normalized` divides data
whose entries are far from 1 by a power of two (exact: only exponents change),
so ``fit(c X)`` gives the same ``x`` as ``fit(X)``; :func:`rescale` multiplies
the variances and bounds of the answer back.  A variance that is not
representable on the user's scale (it over- or underflows float64) is
reported as inf / 0 with a warning that gives its value as a power of two.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import replace

import numpy as np

from ..operators.cov import Cov
from .validation import pow2_scale
from ..result import Certificate, ComponentsResult, Result

__all__ = ["normalized", "rescale"]

# entries of at most this size (and at least its inverse) are used as given
_SAFE = 2.0 ** 60
# info entries that hold variances (scaled back with the answer)
_VARIANCE_KEYS = ("eigenvalues", "starts", "polished", "opt", "lower", "B_S", "B_T")


def normalized(cov: Cov) -> tuple[Cov, tuple[float, ...]]:
    """``(cov', factors)`` with ``A = (product of factors) A'``: ``cov`` itself and ``()`` when
    its largest entry is within ``[2^-60, 2^60]``, else data (or a covariance) divided by
    the power of two :func:`~nspca_core._common.validation.pow2_scale` (a copy)."""
    if cov.X is None and cov._A is None:  # an operator: its sparse data, if any, is scaled
        data = getattr(cov, "X_sparse", None)
        if data is None:
            return cov, ()
        a = data if isinstance(data, np.ndarray) else data.data  # dense data centered implicitly
    else:
        a = cov.X if cov.X is not None else cov.dense()
    top = max(float(a.max()), -float(a.min())) if a.size else 0.0  # max |a|, no copy
    if top == 0.0 or 1.0 / _SAFE <= top <= _SAFE:
        if cov.X is not None and type(cov) is Cov:
            cov.note_top(top)  # the factor's scale from it (no second pass over X)
        return cov, ()
    s = pow2_scale(a)
    if cov.X is None and cov._A is None:
        from ..operators.sparse import CenteredDenseCov, SparseCov

        if isinstance(cov, CenteredDenseCov):
            return CenteredDenseCov(cov.X_sparse / s, cov.mean / s, dense_budget=cov.dense_budget), (s, s)
        return SparseCov(cov.X_sparse / s, center=cov.center, dense_budget=cov.dense_budget), (s, s)
    if cov.X is not None:
        out = Cov(cov.X / s, None)
        out.center, out.mean = cov.center, None if cov.mean is None else cov.mean / s
        out.note_top(top / s)  # exact: s is a power of two
        return out, (s, s)
    return Cov(None, cov.dense() / s), (s,)


def _times(v, factors):
    with np.errstate(over="ignore", under="ignore"):
        out = np.asarray(v, dtype=float)
        for f in factors:
            out = out * f
    return float(out) if np.ndim(out) == 0 else out


def _info(info: dict, factors) -> dict:
    out = dict(info)
    for key in _VARIANCE_KEYS:
        val = out.get(key)
        if isinstance(val, dict):
            out[key] = {name: _times(v, factors) for name, v in val.items()}
        elif isinstance(val, tuple) and len(val) == 2:  # ("opt_d": (d, value))
            out[key] = (val[0], _times(val[1], factors))
        elif isinstance(val, (float, int, np.floating, np.ndarray)) and not isinstance(val, bool):
            out[key] = _times(val, factors)
    if "opt_d" in out:
        d, val = out["opt_d"]
        out["opt_d"] = (d, _times(val, factors))
    if isinstance(out.get("certificate"), Certificate):
        out["certificate"] = rescale(out["certificate"], factors, warn=False)
    # the data were divided by 2^input_scale_log2 (per entry of A: twice that for data)
    out["input_scale_log2"] = int(round(math.log2(factors[0])))
    return out


def rescale(res, factors, *, warn: bool = True):
    """``res`` (a Result, Certificate or ComponentsResult) with every variance and bound
    multiplied by the factors of :func:`normalized` (identity for ``()``)."""
    if not factors:
        return res
    if isinstance(res, Result):
        out = replace(res, variance=_times(res.variance, factors),
                      variance_lowrank=_times(res.variance_lowrank, factors),
                      upper_bound=_times(res.upper_bound, factors), info=_info(res.info, factors))
        value, scaled = res.variance, out.variance
    elif isinstance(res, Certificate):
        out = replace(res, upper_bound=_times(res.upper_bound, factors),
                      lower=_times(res.lower, factors),
                      bounds={name: _times(v, factors) for name, v in res.bounds.items()},
                      info=_info(res.info, factors))
        value, scaled = res.upper_bound, out.upper_bound
    elif isinstance(res, ComponentsResult):
        out = replace(res, variance=_times(res.variance, factors),
                      cumulative_variance=_times(res.cumulative_variance, factors),
                      additional_variance=_times(res.additional_variance, factors),
                      upper_bound=_times(res.upper_bound, factors),
                      results=[rescale(r, factors, warn=False) for r in res.results],
                      info=_info(res.info, factors))
        value, scaled = float(np.max(res.variance, initial=0.0)), float(np.max(out.variance, initial=0.0))
    else:  # pragma: no cover - internal misuse
        raise TypeError(f"cannot rescale {type(res).__name__}")
    if warn and value > 0 and (scaled == 0 or not np.isfinite(scaled)):
        exp = math.log2(value) + sum(math.log2(f) for f in factors)
        warnings.warn(f"the variance of this data is about 2^{exp:.0f}, outside the range of "
                      f"float64; it is reported as {scaled} (the answer x itself is exact: the "
                      f"data were normalized by a power of two first)", RuntimeWarning, stacklevel=3)
    return out
