"""The per-block kernels of :class:`nspca_core.distributed.array.DaskCov`.

They run on the Dask workers, one row block B (m_b x n) of the data at a time;
B is a numpy array or a scipy.sparse CSC matrix (see :func:`prepare_block`).
Module-level functions so that they pickle; no Dask import here.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["prepare_block", "k_colsum", "k_bad", "k_sqdev", "k_xv", "k_xty", "k_gram", "k_cgram", "k_sqsum"]


# --------------------------------------------------------------------------- per-block kernels
# They run on the workers, one row block B (m_b x n) at a time; B is a numpy array or a
# scipy.sparse CSC matrix (see prepare_block).  Module-level so that they pickle.

def prepare_block(B):
    """Sparse chunks as CSC (cheap column selection, CSR transpose); dense as ndarray."""
    if sp.issparse(B):
        return B if B.format == "csc" else B.tocsc()
    if hasattr(B, "tocsc"):  # pydata ``sparse.COO``: to scipy, never densified
        return B.tocsc()
    return np.asarray(B)


def k_colsum(B):
    """(1, n): column sums of the block."""
    s = B.sum(axis=0)
    return np.asarray(s, dtype=np.float64).reshape(1, -1)


def k_bad(B):
    """(1, 2): stored values of the block that are NaN or infinite, and stored values."""
    vals = B.data if sp.issparse(B) else B
    return np.array([[np.count_nonzero(~np.isfinite(vals)), vals.size]], dtype=np.float64)


def k_sqdev(B, mu):
    """(1, n): ``sum_i (B_ij - mu_j)^2`` without cancellation; a sparse block stays sparse
    (stored entries give ``(x - mu)^2``, the implicit zeros ``mu^2`` each)."""
    m_b = B.shape[0]
    if sp.issparse(B):
        counts = np.diff(B.indptr)
        cols = np.repeat(np.arange(B.shape[1]), counts)
        dev = (np.asarray(B.data, dtype=np.float64) - mu[cols]) ** 2
        out = np.bincount(cols, weights=dev, minlength=B.shape[1]) + (m_b - counts) * mu ** 2
    else:
        out = ((np.asarray(B, dtype=np.float64) - mu) ** 2).sum(axis=0)
    return out.reshape(1, -1)


def k_xv(B, rows, W, shift):
    """(m_b, p): the centered scores ``B[:, rows] W - shift`` (rows empty: all columns)."""
    if rows.size:
        B = B[:, rows]
    return np.asarray(B @ W, dtype=np.float64) - shift


def k_xty(B, Y):
    """(1, n p): ``B^T Y_b`` flattened (the partial of ``X^T Y``)."""
    return np.asarray(B.T @ Y, dtype=np.float64).reshape(1, -1)


def k_gram(B, a, b, mu_a, mu_b):
    """(1, |a| |b|): ``(B_a - 1 mu_a^T)^T (B_b - 1 mu_b^T)`` for the column sets a, b; a sparse
    block uses its sparse product and rank-one corrections (its selected columns stay sparse)."""
    Ba, Bb = B[:, a], B[:, b]
    if sp.issparse(Ba):
        G = Ba.T @ Bb
        G = np.asarray(G.toarray() if sp.issparse(G) else G, dtype=np.float64)
        sa = np.asarray(Ba.sum(axis=0), dtype=np.float64).ravel()
        sb = np.asarray(Bb.sum(axis=0), dtype=np.float64).ravel()
        G = G - np.outer(mu_a, sb) - np.outer(sa, mu_b) + B.shape[0] * np.outer(mu_a, mu_b)
    else:
        G = (np.asarray(Ba, dtype=np.float64) - mu_a).T @ (np.asarray(Bb, dtype=np.float64) - mu_b)
    return G.reshape(1, -1)


def k_cgram(B, mu):
    """(1, n^2): the centered Gram ``(B - 1 mu^T)^T (B - 1 mu^T)`` of all columns, one centered
    float64 copy of a dense block (a sparse block: its sparse Gram and rank-one corrections)."""
    if sp.issparse(B):
        return k_gram(B, np.arange(B.shape[1]), np.arange(B.shape[1]), mu, mu)
    Bc = np.asarray(B, dtype=np.float64) - mu
    return (Bc.T @ Bc).reshape(1, -1)


def k_sqsum(Y):
    """(1, p): column sums of squares of a score block."""
    return np.einsum("ij,ij->j", Y, Y).reshape(1, -1)
