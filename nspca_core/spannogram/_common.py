"""Shared pieces of the spannogram: tolerances, the reduction of V to distinct directions
with multiplicities, lexicographic tie handling, small helpers."""

from __future__ import annotations

from itertools import combinations, permutations

import numpy as np

from .._common.validation import check_matrix

# Relative tolerance (times the largest row norm) under which two values of
# V c count as tied.  Ties decide which neighbouring cells are enumerated; a
# spurious tie only adds candidates, a missed near-tie can only lose cells of
# angular size ~1e-10, i.e. a value change of the same relative order.
_TIE_TOL = 1e-10


_FEAS_TOL = 1e-10


_RANK_TOL = 1e-12


# Above this many distinct rows, d = 2 uses the angular sweep instead of all pairs.
_SWEEP_MIN_ROWS = 120


_SECTOR_CAP = 48


_FILTER_MIN_ROWS = 40


# The k = n shortcut is tried (method "auto") for k >= n / 3 and at least this many rows.
_FULL_MIN_ROWS = 40


_G_OVERRIDE = 0


class _Reduced:
    """Distinct nonzero rows of V (``groups``), their multiplicities, a full-rank basis."""

    def __init__(self, V: np.ndarray):
        self.n, self.d = V.shape
        nz = np.flatnonzero(np.any(V != 0, axis=1))
        self.empty = nz.size == 0
        if self.empty:
            return
        uniq, inverse, counts = np.unique(V[nz], axis=0, return_inverse=True, return_counts=True)
        inverse = inverse.ravel()
        # order groups by their first original index (determinism, ties to the lower index)
        first = np.full(uniq.shape[0], V.shape[0])
        np.minimum.at(first, inverse, nz)
        order = np.argsort(first, kind="stable")
        rank_of = np.empty_like(order)
        rank_of[order] = np.arange(order.size)
        uniq, counts, inverse = uniq[order], counts[order], rank_of[inverse]
        self.mu = counts.astype(np.int64)
        self.m = uniq.shape[0]
        srt = np.argsort(inverse, kind="stable")  # nz is increasing, so members stay sorted
        self.members = np.split(nz[srt], np.cumsum(counts)[:-1])
        self.simple = bool((counts == 1).all())
        self.first = nz[srt][np.concatenate([[0], np.cumsum(counts)[:-1]])]
        # full column rank coordinates: rows of V in an orthonormal basis of its row space
        _, s, Wt = np.linalg.svd(uniq, full_matrices=False)
        r = int(np.sum(s > _RANK_TOL * s[0])) if s.size else 0
        self.r = max(r, 1)
        self.U = uniq @ Wt[: self.r].T
        self.rmax = float(np.linalg.norm(self.U, axis=1).max())
        self.tol = _TIE_TOL * self.rmax

    def expand(self, full: np.ndarray, partial=()) -> np.ndarray:
        """Original indices of a candidate: whole groups ``full`` and ``(group, copies)`` pairs."""
        if self.simple:
            idx = [self.first[full]]
            idx += [self.first[[g]] for g, j in partial if j > 0]
        else:
            idx = [self.members[g] for g in full]
            idx += [self.members[g][:j] for g, j in partial if j > 0]
        if not idx:
            return np.zeros(0, dtype=np.int64)
        return np.sort(np.concatenate(idx)).astype(np.int64)


def _tangent_basis(c: np.ndarray) -> np.ndarray:
    """Orthonormal basis (r, r-1) of the complement of unit ``c``."""
    r = c.size
    if r == 1:
        return np.zeros((1, 0))
    # Householder-free: complete c to an orthonormal basis with QR
    M = np.column_stack([c, np.eye(r)])
    Qm, _ = np.linalg.qr(M)
    return Qm[:, 1:r]


def _lex_selections(P: np.ndarray, mu: np.ndarray, slots: int, signed: bool, tol: float):
    """Selections near a vertex: for every generic perturbation direction, the tied
    points ordered by it, the first ``slots`` copies (only positive ones if ``signed``).

    P : (t, q) tangent coordinates of the tied distinct rows (group order = index order).
    Returns a set of tuples ((local point, copies), ...).
    """
    t, q = P.shape
    out = set()

    def take(order, positive):
        sel, left = [], slots
        for a in order:
            if left <= 0:
                break
            if signed and not positive[a]:
                continue
            j = int(min(left, mu[a]))
            sel.append((int(a), j))
            left -= j
        return tuple(sorted(sel))

    if q == 0 or t == 0:
        return {take(range(t), np.zeros(t, bool) if signed else np.ones(t, bool))}
    if q == 1:
        for sgn in (1.0, -1.0):
            key = sgn * P[:, 0]
            order = sorted(range(t), key=lambda a: (-key[a], a))
            out.add(take(order, key > tol))
        return out
    if q == 2:
        normals = [P[a] - P[b] for a, b in combinations(range(t), 2)]
        if signed:
            normals += [P[a] for a in range(t)]
        dirs = []
        for nv in normals:
            nn = np.linalg.norm(nv)
            if nn > tol:
                dirs.append(np.array([-nv[1], nv[0]]) / nn)
        if not dirs:
            dirs = [np.array([1.0, 0.0])]
        for d1 in dirs:
            for s1 in (1.0, -1.0):
                e1 = s1 * d1
                for s2 in (1.0, -1.0):
                    e2 = s2 * np.array([-e1[1], e1[0]])
                    k1, k2 = P @ e1, P @ e2
                    # cluster the first key within tol, then order by the second
                    o1 = sorted(range(t), key=lambda a: -k1[a])
                    cl = np.empty(t)
                    cur, last = 0, None
                    for a in o1:
                        if last is not None and last - k1[a] > tol:
                            cur += 1
                        cl[a] = cur
                        last = k1[a]
                    order = sorted(range(t), key=lambda a: (cl[a], -k2[a], a))
                    pos = (k1 > tol) | ((np.abs(k1) <= tol) & (k2 > tol))
                    out.add(take(order, pos))
        return out
    # q >= 3 (d >= 4): every admissible completion (sound, possibly more than needed)
    for size in range(0, t + 1):
        for S in combinations(range(t), size):
            for perm in permutations(S):
                out.add(take(perm, np.ones(t, bool)))
    return out


# Rows whose in-plane part is below this (relative to their norm) lie on a great circle.
_PAR_TOL = 1e-9


# Relative margin on the bounds used to skip cells and arcs (rounding of the incremental sums).
_BOUND_TOL = 1e-9


def _f_plus(U: np.ndarray, C: np.ndarray) -> np.ndarray:
    """``f(c) = ||(U c)_+||^2`` for every column c of ``C`` (r, N)."""
    P = U @ C
    np.maximum(P, 0.0, out=P)
    return np.einsum("ij,ij->j", P, P)


def _check_V(V):
    V = check_matrix(V, "V")
    return V


def _kth_largest(values, weights, k):
    """The k-th largest of ``values`` counted with integer ``weights`` (-inf if fewer)."""
    if weights.sum() < k:
        return -np.inf
    order = np.argsort(-values, kind="stable")
    cw = np.cumsum(weights[order])
    return values[order[np.searchsorted(cw, k)]]


def _topk_weighted_sum(values, weights, k) -> float:
    """Sum of the k largest of ``values`` counted with integer ``weights``."""
    order = np.argsort(-values)
    w = weights[order]
    before = np.cumsum(w) - w
    take = np.clip(k - before, 0, w)
    return float(take @ values[order])


_TRIPLES: dict = {}  # N -> the index triples of N points (cached)


def _add_local(cands: set, local, always: np.ndarray, rows: np.ndarray) -> None:
    """Add the candidates found on a reduced problem to ``cands``: each local support
    (int64 bytes of positions in ``rows``) completed by the rows ``always`` in every
    support, with its tie entries mapped back to the rows of the full problem."""
    for fb, part in local:
        full_local = np.frombuffer(fb, dtype=np.int64)
        full = np.sort(np.concatenate([always, rows[full_local]]))
        cands.add((full.tobytes(), tuple((int(rows[g]), j) for g, j in part)))


def _triples(N: int) -> np.ndarray:
    """All index triples a < b < l of range(N), shape (C(N, 3), 3) (cached per N)."""
    D = _TRIPLES.get(N)
    if D is None:
        D = np.array(list(combinations(range(N), 3)), dtype=np.int64).reshape(-1, 3)
        _TRIPLES[N] = D
    return D
