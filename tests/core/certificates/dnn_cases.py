"""Inputs and runs the DNN tests share (not a test module): a dense PSD matrix with a nonnegative common part,
the screening point as the plain run hands it to the cut run, and a one-k "auto" cut run as ``dual._cut_rounds``
starts it."""

from __future__ import annotations

import numpy as np

from nspca_core.certificates import dnn as _dnn
from nspca_core.certificates import dual


def dense_psd(seed: int, n: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    Y = np.abs(rng.standard_normal((n // 2, n))) + rng.standard_normal((n // 2, n))
    return Y.T @ Y / n


def evaluated_start(A: np.ndarray, k: int):
    """The screening point with its Ritz block (as the plain run hands it to the cut run), evaluated:
    ``(state, value, lam)``."""
    st0 = dual._screen_init(A, k)
    st0.U = np.linalg.eigh(A)[1][:, ::-1][:, :6].copy()
    val, lam = _dnn.dnn_value_lam(A, k, st0)
    return st0, val, lam


def cut_run(A: np.ndarray, k: int, lower: float, iters: int = 40, refresh: int = 8, **rule):
    """A one-k "auto" cut run from the screening point, renewing its cuts; ``rule``: ``extend=`` or
    ``outpaced=`` of :func:`dnn_optimize`."""
    scale = float(np.abs(A).max())
    st0 = dual._screen_init(A, k)
    return _dnn.dnn_optimize(A, k, st0, iters=iters, t_start=1e-3 * scale, t_end=1e-4 * scale,
                             lr=3e-3 * scale, refresh=refresh, r=6, check_every=iters, target=0.999,
                             lower=lower, ritz32=True, evaluate_start=False, **rule)
