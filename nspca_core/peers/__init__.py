"""Peer algorithms the app puts next to the spannogram.

``PEER_METHODS`` maps a method name to ``f(cov, k, *, seed=0, callback=None,
**options) -> Result`` (``cov`` a validated :class:`nspca_core.operators.cov.Cov`):

- ``"em"`` — Sigg & Buhmann (ICML 2008) EM; options ``nonneg``, ``restarts``,
  ``renormalize``, ``tol``, ``max_iter``, ``init``.
- ``"tpower"`` — truncated power method (Yuan & Zhang 2013), nonnegative
  variant; options ``nonneg``, ``restarts``, ``max_iter``, ``tol``.
- ``"zass"`` — Zass & Shashua (NIPS 2006); β searched for the largest support
  ``<= k``; options ``alpha``, ``beta``, ``tol``, ``max_sweeps``, ``init``,
  ``bisection_steps``.
- ``"sklearn-spca"`` — scikit-learn SparsePCA, alpha searched; options
  ``ridge_alpha``, ``max_iter``, ``tol``, ``search_steps``, ``method``.
- ``"nmf"`` — scikit-learn NMF of nonnegative data (``data=`` the raw matrix);
  options ``data``, ``max_iter``, ``tol``, ``search_steps``.

Several components: :func:`em_components`, :func:`zass_components`,
:func:`bipartite_components` (Asteris et al. 2015) and that paper's deflation baselines
:func:`deflation_components`.  Unknown options raise
:class:`nspca_core.InputError` naming the allowed ones.
"""

from __future__ import annotations

import importlib
import inspect

from .._common.options import check_options
from ..methods import PEERS, REGISTRY
from .bipartite import bipartite_components, deflation_components
from .em import em_components, em_pca
from .sklearn_peers import nmf_pca, sklearn_spca
from .tpower import tpower_pca
from .zass import zass_components, zass_pca

__all__ = ["PEER_METHODS", "em_pca", "tpower_pca", "zass_pca", "sklearn_spca", "nmf_pca",
           "em_components", "zass_components", "bipartite_components", "deflation_components"]


def _peer(func, name):
    """``f(cov, k, *, seed=0, callback=None, **options)`` with unknown options as InputError."""
    allowed = [p for p in inspect.signature(func).parameters
               if p not in ("cov", "k", "seed", "callback")]

    def method(cov, k, *, seed=0, callback=None, **options):
        check_options(options, allowed, f"method {name!r}")
        return func(cov, k, seed=seed, callback=callback, **options)

    method.__name__ = f"peer_{name.replace('-', '_')}"
    method.__doc__ = func.__doc__
    method.options = tuple(allowed)
    return method


def _load(target: str):
    module, name = target.split(":")
    return getattr(importlib.import_module(module), name)


# every single-component peer of the method registry (nspca_core.methods), by name
PEER_METHODS = {name: _peer(_load(REGISTRY[name].function), name) for name in PEERS}
