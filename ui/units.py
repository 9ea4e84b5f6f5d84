"""Units of work run in the worker processes of :mod:`ui.jobs` (no streamlit, no plotly).

A worker process imports this module only: each function takes the data
matrix and plain options, calls the public ``nspca_core`` API and returns
small picklable values (vectors of length n and scalars — never an n × n
matrix).  Running a unit in a process is what makes Stop immediate: the
core's solvers report progress only between their own steps (EM and the
split certificate once per call), so a thread could not be interrupted inside
one, while a process can be terminated.
"""

from __future__ import annotations

import numpy as np

__all__ = ["fit_unit", "certify_unit", "components_unit", "joint_bound_unit"]


def _options(method: str, raw) -> dict:
    return {"data": raw} if method == "nmf" and raw is not None else {}


def fit_unit(X: np.ndarray, *, k: int, method: str, d: int, eps: float, seed: int,
             raw: np.ndarray | None = None, callback=None) -> dict:
    """``nspca_core.fit(X, k=k, method=method, certify=False)`` as a small dict.

    Returns
    -------
    dict with ``x`` (n,), ``support``, ``variance`` (xᵀAx with A = XᵀX/m),
    ``lowrank`` (‖Vᵀx‖², nan when the method has none), ``seconds``, ``converged``.
    """
    from nspca_core import fit

    r = fit(X, k=int(k), method=method, d=int(d), eps=float(eps), random_state=int(seed), certify=False,
            center=False,
            callback=callback, **_options(method, raw))
    x = np.asarray(r.x, float)
    y = X @ x
    return dict(x=x, support=np.asarray(r.support), variance=float(y @ y) / X.shape[0],
                lowrank=float(getattr(r, "variance_lowrank", np.nan)), seconds=float(r.seconds),
                converged=bool(getattr(r, "converged", True)))


def certify_unit(X: np.ndarray, *, k: int, x: np.ndarray | None = None, effort: str = "auto",
                 time_limit: float | None = None, callback=None) -> dict:
    """``nspca_core.certify(X, k=k, x=x, effort=effort)`` as a small dict.

    Returns
    -------
    dict with ``upper``, ``lower``, ``kind``, ``optimal``, ``probabilistic``, ``x``.
    """
    from nspca_core import certify

    c = certify(X, k=int(k), x=x, effort=effort, callback=callback, center=False,
                **({"time_limit": float(time_limit)} if time_limit is not None else {}))
    xc = None if c.x is None else np.asarray(c.x, float)
    return dict(upper=float(c.upper_bound), lower=float(c.lower), kind=str(c.kind),
                optimal=bool(c.optimal), probabilistic=bool(c.probabilistic), x=xc)


def components_unit(X: np.ndarray, *, n_components: int, k: int, method: str, strategy: str, d: int,
                    eps: float, seed: int, callback=None):
    """``nspca_core.components(X, ...)``: the ComponentsResult (loadings n × r, scalars)."""
    from nspca_core import components

    return components(X, n_components=int(n_components), k=int(k), method=method, strategy=strategy,
                      d=int(d), eps=float(eps), random_state=int(seed), certify=False, center=False,
                      callback=callback)


def joint_bound_unit(X: np.ndarray, *, k: int, n_components: int, callback=None) -> dict:
    """``certify_components(X, k=k, n_components=c)``: the certified bound on the best total variance
    of c components with disjoint supports of at most k nonzeros, as ``upper``, ``kind``."""
    from nspca_core.certificates.components import certify_components

    cert = certify_components(X, k=int(k), n_components=int(n_components))
    return dict(upper=float(cert.upper_bound), kind=str(cert.kind))
