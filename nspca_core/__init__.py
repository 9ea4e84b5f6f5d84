"""nspca_core — nonnegative sparse PCA with certified optimality.

The public API.  Names are loaded lazily from their modules so that
``import nspca_core`` stays cheap (the app imports it on every rerun) and a
module's heavy imports (scikit-learn, ...) are paid only when used.

Solver core (Asteris, Papailiopoulos & Dimakis, ICML 2014):
    topk_nonneg, rank1_nspca, lowrank_factor, candidate_supports, solve_pd,
    pd2_geometry, lowrank_nspca, enet_nspca, enet_path, fit, components
Certificates:
    certify, certify_path, certify_components, apriori_guarantee, paper_bound
Nonnegative-score PCA (Bajorski, Hall & Rubinstein):
    nonneg_scores
Data:
    load_dataset, list_datasets, preprocess, load_file
Estimators:
    NonnegativeSparsePCA, NonnegativeScorePCA
"""

from __future__ import annotations

import importlib

from ._common.validation import InputError
from .result import Certificate, ComponentsResult, Result


__version__ = "0.1.0"

# public name -> module that defines it
_LAZY = {
    "topk_nonneg": "rank1",
    "rank1_nspca": "rank1",
    "lowrank_factor": "lowrank",
    "solve_pd": "spannogram.constrained",
    "pd2_geometry": "spannogram.constrained",
    "candidate_supports": "spannogram",
    "lowrank_nspca": "spannogram",
    "spannogram_curves_d2": "explore",
    "spannogram_cells_d3": "explore",
    "enet_nspca": "enet",
    "enet_path": "enet",
    "enet_samples": "enet",
    "fit": "api",
    "components": "api",
    "METHODS": "api",
    "certify": "certificates",
    "certify_path": "certificates",
    "certify_components": "certificates",
    "apriori_guarantee": "certificates",
    "paper_bound": "certificates",
    "nonneg_scores": "scores",
    "load_dataset": "datasets",
    "list_datasets": "datasets",
    "preprocess": "datasets",
    "load_file": "io",
    "NonnegativeSparsePCA": "estimator",
    "NonnegativeScorePCA": "estimator",
}

__all__ = sorted(["InputError", "Result", "ComponentsResult", "Certificate", *_LAZY])


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'nspca_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return __all__
