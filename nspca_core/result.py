"""Result types shared by every solver in :mod:`nspca_core`.

One frozen dataclass per kind of answer, always the same type whatever the
method, so pages and users never branch on flags.  Arrays inside are not
copied; treat them as read-only.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Result", "ComponentsResult", "Certificate", "seed_param", "iterations_run"]


def seed_param(seed):
    """The seed as every result records it in ``params``: as given, or ``"generator"`` for a
    :class:`numpy.random.Generator` (its state is not a value one can write down)."""
    return "generator" if isinstance(seed, np.random.Generator) else seed


@dataclass(frozen=True, eq=False)
class Result:
    """One nonnegative, k-sparse, unit-norm component.

    Attributes
    ----------
    x : ndarray of shape (n_features,)
        The component: ``x >= 0``, ``||x||_2 = 1``, at most ``k`` nonzeros.
    support : ndarray of int
        Sorted indices of the nonzeros of ``x``.
    variance : float
        ``x^T A x`` on the true covariance ``A``.
    variance_lowrank : float
        ``||V^T x||^2`` on the rank-d approximation used by the solver
        (equal to ``variance`` for methods that work on ``A`` itself).
    upper_bound : float
        A number proven ``>= OPT = max_{x in S_k^n} x^T A x`` (``nan`` when not
        computed); see ``bound_kind`` for which bound it is.
    bound_kind : str
        Name of the bound behind ``upper_bound`` (``""`` when not computed).
    method : str
        The algorithm that produced ``x``.
    params : dict
        The parameters it ran with (k, d, eps, seed, samples, ...).
    seconds : float
        Wall-clock time of the solve (certification included when done).
    converged : bool
        False when an iterative method stopped at its iteration cap.
    info : dict
        Method-specific extras (e.g. number of candidate supports).
    """

    x: np.ndarray
    support: np.ndarray
    variance: float
    variance_lowrank: float = float("nan")
    upper_bound: float = float("nan")
    bound_kind: str = ""
    method: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    converged: bool = True
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def k(self) -> int:
        """Number of nonzeros actually used."""
        return int(self.support.size)

    @property
    def ratio(self) -> float:
        """Certified fraction of the optimum, ``variance / upper_bound``."""
        if not np.isfinite(self.upper_bound) or self.upper_bound <= 0:
            return float("nan")
        return float(self.variance / self.upper_bound)


@dataclass(frozen=True, eq=False)
class ComponentsResult:
    """Several components (columns of ``loadings``).

    Attributes
    ----------
    loadings : ndarray of shape (n_features, n_components)
        Each column nonnegative, unit norm, at most ``k`` nonzeros.
    variance : ndarray of shape (n_components,)
        ``x_j^T A x_j`` of each component on the original covariance.
    cumulative_variance : ndarray of shape (n_components,)
        Variance explained by the span of the first j components,
        ``trace(P_j A P_j)`` with ``P_j`` the orthogonal projector onto that
        span; it never double counts when components are not orthogonal.
    additional_variance : ndarray of shape (n_components,)
        Increments of ``cumulative_variance`` (nsprcomp's ``asdev**2``): what
        component j adds after projecting out the earlier ones.
    supports : list of ndarray
        Sorted support of each component.
    method, strategy : str
    params : dict
    seconds : float
    results : list of Result
        The per-component results as the solver returned them (variance there
        is on the deflated covariance the component was found on).
    info : dict
    upper_bound : float
        With ``certify=True`` and disjoint supports (strategies "bipartite",
        "deflation-remove"): a certified upper bound on the best total variance of
        ``n_components`` nonnegative components with disjoint supports of at most k
        nonzeros each (:func:`nspca_core.certificates.components.certify_components`);
        else ``nan``.
    bound_kind : str
        The bound that gave ``upper_bound``.
    """

    loadings: np.ndarray
    variance: np.ndarray
    cumulative_variance: np.ndarray
    additional_variance: np.ndarray
    supports: list
    method: str = ""
    strategy: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    results: list = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)
    upper_bound: float = float("nan")
    bound_kind: str = ""

    @property
    def ratio(self) -> float:
        """Certified fraction of the joint optimum, ``total_variance / upper_bound`` (nan without
        a bound)."""
        if not np.isfinite(self.upper_bound) or self.upper_bound <= 0:
            return float("nan")
        return float(self.total_variance / self.upper_bound)

    @property
    def n_components(self) -> int:
        return int(self.loadings.shape[1])

    @property
    def shortfall(self) -> str:
        """Why fewer components came back than ``params["n_components"]`` asked for (``""`` when
        every one did): ``info["stopped_early"]``."""
        asked = self.params.get("n_components", self.n_components)
        if self.n_components >= asked:
            return ""
        return str(self.info.get("stopped_early")
                   or f"returned {self.n_components} of the {asked} components asked for")

    @property
    def summary(self) -> str:
        """The result in one sentence for people (the CLI prints it; pages show it): how many
        components came back and, when fewer than asked, why; the total variance; the joint
        certified ratio when there is one."""
        asked = self.params.get("n_components", self.n_components)
        how = ", ".join(f"{key} {val!r}" for key, val in (("strategy", self.strategy), ("method", self.method))
                        if val and not (key == "method" and val == self.strategy))
        count = f"{self.n_components} component{'s' * (self.n_components != 1)}"
        if self.n_components < asked:
            count = f"{self.n_components} of the {asked} components asked for"
        text = f"{count}{f' ({how})' if how else ''}: total variance {self.total_variance:.6g}"
        if np.isfinite(self.ratio):
            text += f", certified ratio {self.ratio:.4f} of the best disjoint components ({self.bound_kind})"
        if self.shortfall:
            text += f". Fewer components: {self.shortfall}"
        return text + "."

    @property
    def total_variance(self) -> float:
        """Sum of the per-component variances (the objective of seed 004)."""
        return float(np.sum(self.variance))


@dataclass(frozen=True, eq=False)
class Certificate:
    """An upper bound on ``OPT = max_{x in S_k^n} x^T A x`` and how it was obtained.

    Attributes
    ----------
    upper_bound : float
        Guaranteed ``>= OPT`` (with probability ``>= 1 - 1/n`` only when
        ``probabilistic`` is True).
    kind : str
        Name of the bound that won (the minimum of ``bounds``).
    lower : float
        ``x^T A x`` of the best known feasible ``x`` (``nan`` if none).
    ratio : float
        ``lower / upper_bound``: the answer is at least this fraction of OPT.
    optimal : bool
        True when ``upper_bound - lower <= tolerance * upper_bound``.
    tolerance : float
        The relative gap under which ``optimal`` is declared.
    seconds : float
    bounds : dict
        Every bound tried, name -> value.
    probabilistic : bool
        True when the winning bound holds only with high probability.
    k : int
    x : ndarray or None
        The feasible point behind ``lower``.
    info : dict
    """

    upper_bound: float
    kind: str
    lower: float = float("nan")
    ratio: float = float("nan")
    optimal: bool = False
    tolerance: float = 1e-6
    seconds: float = 0.0
    bounds: dict[str, float] = field(default_factory=dict)
    probabilistic: bool = False
    k: int = 0
    x: np.ndarray | None = None
    info: dict[str, Any] = field(default_factory=dict)


def iterations_run(res) -> int:
    """The largest number of iterations any component's solver ran, at least 1 (exact ones: 1)."""
    counts = []
    for r in list(res.results) + [res]:
        info = getattr(r, "info", {}) or {}
        for key in ("iterations", "polish_iterations", "sweeps"):
            value = info.get(key)
            if isinstance(value, (numbers.Integral, list, tuple, np.ndarray)) and not isinstance(value, bool):
                counts.extend(int(v) for v in np.ravel(value) if isinstance(v, numbers.Integral))
                break
    return max([1] + counts)
