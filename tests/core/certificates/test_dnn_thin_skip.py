"""The rule of issue 39's 25th round in dual.dense_dual: a thin split S's KKT point (valued by dnn_thin's bound,
the record "gram" in ``seen``) that certifies ``enough`` at "auto" is S's dual point, no DNN run even where the
split needs the dual point (need_dual).  Counted on both sides of ``enough`` and without the record."""

from __future__ import annotations

from unittest import mock

import numpy as np

from nspca_core.certificates import dual
from nspca_core.certificates.single import _certify_dense
from nspca_core.operators.cov import Cov


def _case(eps: float):
    # one factor loading on 40 columns (positively) and weakly negatively on 260: x near the block's top eigenvector
    # (eps: how far, along a fixed positive direction) has (A x)_i < 0 off the block (the KKT point's N of rank two);
    # its KKT point certifies 0.9983 at eps = 0.08 (between `enough`, 0.996, and the target 0.999), 0.9834 at 0.3
    rng = np.random.default_rng(5)
    load = np.concatenate([rng.uniform(1.0, 2.0, 40), -rng.uniform(0.5, 1.0, 260) * 0.2])
    load2 = np.concatenate([rng.uniform(-1.0, 1.0, 40), np.zeros(260)]) * 0.5  # (the d = 1 bounds below 0.996)
    X = (np.outer(rng.standard_normal(30), load) + np.outer(rng.standard_normal(30), load2)
         + 0.3 * rng.standard_normal((30, 300)))
    X -= X.mean(axis=0)
    A = (X.T @ X) / 30
    x = np.zeros(300)
    x[:40] = np.abs(np.linalg.eigh(A[:40, :40])[1][:, -1])
    p = np.zeros(300)
    p[:40] = np.random.default_rng(1).uniform(0, 1, 40)
    x = x / np.linalg.norm(x) + eps * p / np.linalg.norm(p)
    return X, A, x / np.linalg.norm(x)


def _runs(A, X, x, k, record: bool):
    calls = []
    real = dual._dnn

    def counting(*a, **kw):
        calls.append(1)
        return real(*a, **kw)
    seen = {"gram": (A, X, np.arange(300))} if record else {}
    with mock.patch.object(dual, "_dnn", counting):
        cert, _ = _certify_dense(Cov(A=A), k, x, "auto", None, need_dual=True, seen=seen, proved_start=True)
    return len(calls), cert


def test_thin_kkt_point_that_certifies_enough_spares_the_dnn():
    X, A, x = _case(0.08)
    runs, cert = _runs(A, X, x, 40, True)
    assert runs == 0 and 0.996 * cert.upper_bound <= cert.lower < 0.999 * cert.upper_bound
    runs, _ = _runs(A, X, x, 40, False)  # (no thin record: the split's DNN runs as before)
    assert runs == 1


def test_thin_kkt_point_below_enough_leaves_the_dnn_to_run():
    X, A, x = _case(0.3)
    runs, _ = _runs(A, X, x, 40, True)
    assert runs == 1
